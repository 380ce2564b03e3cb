#!/bin/bash
# The real agent clients with moat: Claude Code and Codex from npm, each
# driven by a scripted model server on 127.0.0.1 (tests/agents/model.mjs),
# with moat as their MCP server and (Claude Code) their PreToolUse hook.
# The checks are in tests/agents/agents.mjs; this runs it in a network
# namespace of its own, where only loopback exists, so neither the model
# server nor the clients (nor moat) can reach anything else.
#
#   MOAT=path/to/moat MOAT_SRC=repo bash tests/agents/test_agents.sh [claude|codex]
#
# Needs node and the npm packages scripts/deps.sh installs
# (@anthropic-ai/claude-code, @openai/codex with its platform binary) in
# MOAT_NPM_PREFIX, /opt/moat-npm or ~/.cache/moat-npm, and root for the
# namespace. Without them it skips, saying what is missing, except in CI
# (CI=true or MOAT_MUST_WORK=1), where that is a failure.
set -u

MOAT=${MOAT:-$(command -v moat)}
SRC=${MOAT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
DIR=$SRC/tests/agents
. "$(dirname "$0")/../lib/tap.sh"
[ "${CI:-}" = true ] && MUST=1

MUST_HINT='run scripts/deps.sh as root'

[ -x "$MOAT" ] || { echo "1..1"; echo "not ok 1 - no moat binary (set MOAT)"; exit 1; }
command -v node >/dev/null 2>&1 || skip_all "node is not installed"
npm_prefix @anthropic-ai/claude-code @openai/codex
[ -n "${MOAT_NPM_PREFIX:-}" ] ||
	skip_all "neither @anthropic-ai/claude-code nor @openai/codex is installed (scripts/deps.sh)"
# loopback only: a network namespace of our own (root), lo up in it
if [ "$(id -u)" != 0 ] || ! unshare -n true 2>/dev/null; then
	skip_all "no network namespace can be made here (needs root and unshare): the clients would reach the network"
fi
command -v ip >/dev/null 2>&1 || skip_all "ip (iproute2) is not installed"
export MOAT MOAT_NPM_PREFIX MOAT_MUST_WORK=$MUST
# agents.mjs bounds each client; this bounds a hang of node itself
exec timeout -k 5 300 unshare -n sh -c 'ip link set lo up && exec node "$@"' sh "$DIR/agents.mjs" "$@"
