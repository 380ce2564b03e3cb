#!/bin/bash
# Install the peer sandboxes that bench/sandbox.sh compares moat with:
# Debian bubblewrap, firejail, hyperfine and time; npm @openai/codex (codex
# sandbox) and @anthropic-ai/sandbox-runtime (srt). Idempotent: installs only
# what is missing. For benchmarking only; `make check` never calls it.
# Usage: bench/peers.sh            (as root, or with sudo available)
set -u

sudo=
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null; then
		sudo=sudo
	else
		echo "peers.sh: not root and no sudo: install the packages by hand" >&2
	fi
fi

status=0

# Debian packages: command name -> package name
declare -A deb=([bwrap]=bubblewrap [firejail]=firejail [hyperfine]=hyperfine
		[/usr/bin/time]=time [socat]=socat [rg]=ripgrep)
missing=()
for cmd in "${!deb[@]}"; do
	command -v "$cmd" >/dev/null 2>&1 || missing+=("${deb[$cmd]}")
done
if [ ${#missing[@]} -gt 0 ]; then
	if command -v apt-get >/dev/null; then
		echo "peers.sh: apt-get install ${missing[*]}" >&2
		$sudo apt-get update -qq >/dev/null 2>&1 || true
		if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
				"${missing[@]}" >/dev/null; then
			echo "peers.sh: apt-get install failed for: ${missing[*]}" >&2
			status=1
		fi
	else
		echo "peers.sh: no apt-get; install by hand: ${missing[*]}" >&2
		status=1
	fi
fi

# npm packages: command name -> package name
declare -A npmpkg=([codex]=@openai/codex [srt]=@anthropic-ai/sandbox-runtime)
missing=()
for cmd in "${!npmpkg[@]}"; do
	command -v "$cmd" >/dev/null 2>&1 || missing+=("${npmpkg[$cmd]}")
done
if [ ${#missing[@]} -gt 0 ]; then
	if command -v npm >/dev/null; then
		echo "peers.sh: npm install -g ${missing[*]}" >&2
		if ! $sudo npm install -g --no-fund --no-audit "${missing[@]}" >/dev/null; then
			echo "peers.sh: npm install failed for: ${missing[*]}" >&2
			status=1
		fi
	else
		echo "peers.sh: no npm; install nodejs and npm, then rerun" >&2
		status=1
	fi
fi

for cmd in bwrap firejail hyperfine /usr/bin/time codex srt; do
	if command -v "$cmd" >/dev/null 2>&1; then
		echo "peers.sh: $cmd: $(command -v "$cmd")" >&2
	else
		echo "peers.sh: $cmd: missing" >&2
	fi
done
exit $status
