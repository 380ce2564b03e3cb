#!/bin/sh
# Install the Debian packages moat's build and tests need. Idempotent and
# quiet when everything is present. Needs root (or sudo) only to install.
set -eu

PKGS="gcc make meson ninja-build pkg-config libjansson-dev libpcre2-dev libseccomp-dev \
clang libclang-rt-14-dev bubblewrap util-linux procps iproute2 python3 git ca-certificates strace \
socat curl"

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
	# A registry hiccup on a fresh machine is retried once after a new
	# update before the build gives up.
	# shellcheck disable=SC2086
	if ! $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null; then
		echo "deps: apt-get install failed; updating the package lists and retrying" >&2
		sleep 2
		$SUDO apt-get update -qq >/dev/null 2>&1 || true
		# shellcheck disable=SC2086
		$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
	fi
fi

# Node.js and the npm packages the MCP tests use (tests/mcp): the official
# TypeScript SDK client, the MCP conformance suite, the stdio <-> Streamable
# HTTP bridge, and the reference filesystem server (sandboxed in the docs'
# example); and the real agent clients of tests/agents, Claude Code and
# Codex (each a native binary in a platform package npm installs as an
# optional dependency). One prefix outside the tree, shared by every
# checkout: MOAT_NPM_PREFIX, else /opt/moat-npm (root), else
# ~/.cache/moat-npm. Versions are pinned; a failure here is reported, and
# the MCP and agent tests then fail in CI (and skip, saying why, outside
# it).
NPM_PKGS="@modelcontextprotocol/sdk@1.32.2 @modelcontextprotocol/conformance@0.1.16 \
supergateway@4.0.0 @modelcontextprotocol/server-filesystem@2026.8.31 \
@anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0"

node_missing=""
command -v node >/dev/null 2>&1 || node_missing="nodejs"
command -v npm >/dev/null 2>&1 || node_missing="$node_missing npm"
if [ -n "$node_missing" ]; then
	echo "deps: installing:$node_missing" >&2
	SUDO=""
	[ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1 && SUDO=sudo
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $node_missing >/dev/null ||
		echo "deps: could not install$node_missing (the MCP tests need them)" >&2
fi

if [ -n "${MOAT_NPM_PREFIX:-}" ]; then
	npm_prefix=$MOAT_NPM_PREFIX
elif [ "$(id -u)" = 0 ] || [ -w /opt/moat-npm ]; then
	npm_prefix=/opt/moat-npm
else
	npm_prefix=${HOME:-/tmp}/.cache/moat-npm
fi
if command -v npm >/dev/null 2>&1; then
	npm_need=""
	for spec in $NPM_PKGS; do
		name=${spec%@*}
		want=${spec##*@}
		have=$(node -p "require('$npm_prefix/node_modules/$name/package.json').version" 2>/dev/null || true)
		[ "$have" = "$want" ] || npm_need=1
	done
	# the clients' platform binaries (optional dependencies) must run too
	# (asked in a scratch home: they may write their configuration there)
	if [ -z "$npm_need" ]; then
		scratch=$(mktemp -d)
		for bin in claude codex; do
			HOME=$scratch CODEX_HOME=$scratch "$npm_prefix/node_modules/.bin/$bin" --version \
				>/dev/null 2>&1 </dev/null || npm_need=1
		done
		rm -rf "$scratch"
	fi
	if [ -n "$npm_need" ]; then
		echo "deps: installing npm packages into $npm_prefix" >&2
		mkdir -p "$npm_prefix"
		# one install of all of them: npm prunes what a later install does not name
		# shellcheck disable=SC2086
		if ! (cd "$npm_prefix" && npm install --no-save --no-audit --no-fund --no-update-notifier \
			--include=optional --loglevel=error $NPM_PKGS >"$npm_prefix/install.log" 2>&1); then
			echo "deps: npm install failed (see $npm_prefix/install.log); the MCP tests need it" >&2
		fi
	fi
fi
