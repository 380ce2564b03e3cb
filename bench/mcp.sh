#!/bin/bash
# MCP server benchmark: the same client workload (the official TypeScript
# SDK Client over StdioClientTransport, and a raw pipelined JSON-RPC writer)
# against `moat mcp` with its default configuration (policy on, an audit log
# file) and the reference server, npm @modelcontextprotocol/server-filesystem,
# side by side in one run (bench/mcp_bench.mjs), and, when it was built
# ($build/bench/mcp_bare), a bare C server with no policy and no audit (the
# ceiling the client and the machine allow). Prints a markdown section on
# stdout (bench/run.sh adds the heading); progress goes to stderr.
#
#   bench/mcp.sh [BUILD]
#
# Needs node and the npm packages scripts/deps.sh installs (MOAT_NPM_PREFIX,
# else /opt/moat-npm, else ~/.cache/moat-npm); without them it says so and
# exits 0 (a benchmark, not a test). Knobs (environment): BENCH_RUNS (3, the
# best of each figure is kept), BENCH_N (5000 sequential calls), BENCH_WARM
# (500), BENCH_CONC_ROUNDS (10 rounds of 200 concurrent calls), BENCH_PIPE
# (10000 pipelined calls), BENCH_WINDOW (200 pipelined calls in flight; moat
# refuses more than 256 in flight), BENCH_TIMEOUT (seconds in all, 900).
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1

moat=$(realpath -e "$build/moat" 2>/dev/null || true)
if [ -z "$moat" ] || [ ! -x "$moat" ]; then
	echo "bench/mcp.sh: no moat binary in $build (build it first)" >&2
	exit 1
fi
if ! command -v node >/dev/null 2>&1; then
	echo "_Skipped: node is not installed (run scripts/deps.sh)._"
	exit 0
fi
if [ -z "${MOAT_NPM_PREFIX:-}" ]; then
	for p in /opt/moat-npm "${HOME:-/nonexistent}/.cache/moat-npm"; do
		if [ -d "$p/node_modules/@modelcontextprotocol/sdk" ]; then
			MOAT_NPM_PREFIX=$p
			break
		fi
	done
fi
for pkg in sdk server-filesystem; do
	if [ -z "${MOAT_NPM_PREFIX:-}" ] ||
		[ ! -d "$MOAT_NPM_PREFIX/node_modules/@modelcontextprotocol/$pkg" ]; then
		echo "_Skipped: the npm package @modelcontextprotocol/$pkg is not installed (run scripts/deps.sh)._"
		exit 0
	fi
done
export MOAT=$moat MOAT_NPM_PREFIX
if [ -z "${MOAT_MCP_BARE:-}" ] && [ -x "$build/bench/mcp_bare" ]; then
	MOAT_MCP_BARE=$(realpath -e "$build/bench/mcp_bare")
	export MOAT_MCP_BARE
fi

echo "\`bench/mcp.sh $build\` on $(uname -sr), $(nproc) CPUs, load average" \
	"$(cut -d' ' -f1-3 /proc/loadavg) at the start, $(date -u +%Y-%m-%d):"
echo
timeout -k 5 "${BENCH_TIMEOUT:-900}" node bench/mcp_bench.mjs
