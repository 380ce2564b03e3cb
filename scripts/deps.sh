#!/bin/sh
# Install the Debian packages moat's build and tests need. Idempotent and
# quiet when everything is present. Needs root (or sudo) only to install.
set -eu

PKGS="gcc make meson ninja-build pkg-config libjansson-dev libpcre2-dev libseccomp-dev \
clang libclang-rt-14-dev bubblewrap util-linux procps iproute2 python3 git ca-certificates"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

if [ -n "$missing" ]; then
	echo "deps: installing:$missing" >&2
	SUDO=""
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
			echo "deps: missing packages:$missing (run as root to install)" >&2
			exit 1
		fi
	fi
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq >/dev/null 2>&1 || true
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
