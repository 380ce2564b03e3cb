#!/bin/bash
# make bench: run every benchmark side by side and print markdown. To refresh
# docs/benchmarks.md, paste the output under the matching heading.
set -eu
build=${1:-build}
cd "$(dirname "$0")/.."
echo "## Policy (bench/policy.sh)"
echo
bench/policy.sh "$build"
if [ -x bench/pipeline.sh ]; then
	echo
	echo "## Pipeline (bench/pipeline.sh)"
	echo
	bench/pipeline.sh "$build"
fi
if [ -x bench/sandbox.sh ]; then
	echo
	echo "## Sandbox start-up (bench/sandbox.sh)"
	echo
	bench/sandbox.sh "$build"
fi
if [ -x bench/scan.sh ] && [ -n "${BENCH_SCAN:-}" ]; then
	echo
	echo "## Workspace scan (bench/scan.sh; BENCH_SCAN=1, trees of up to 2M entries)"
	echo
	bench/scan.sh "$build"
fi
if [ -x bench/mcp.sh ]; then
	echo
	echo "## MCP server (bench/mcp.sh)"
	echo
	bench/mcp.sh "$build"
fi
