#!/bin/bash
# The whole pipeline per call against the bare operation (bench_pipeline.c):
# read_file of a 4 KB file and bash `echo hi`, through the library session
# (strict parse, policy, gate, tool, audit line). Usage: bench/pipeline.sh [BUILD]
# The bash call twice: back to back (a script), then at an agent's pace
# (BENCH_GAP_MS of idle time before each call, 20 by default: the sandbox
# of the next call is armed ahead only after 5 ms without a call).
set -eu
build=${1:-build}
cd "$(dirname "$0")/.."
build=$(cd "$build" && pwd)
ws=$(mktemp -d /var/tmp/moat-bench-run.XXXXXX) # moat run's workspace: an empty directory
trap 'rm -rf "$ws"' EXIT
cd "$ws"
BENCH_GAP_MS=0 "$build/bench/bench_pipeline" "${N_READ:-20000}" "${N_BASH:-300}" "$build/moat"
echo
echo "At an agent's pace:"
BENCH_GAP_MS=${BENCH_GAP_MS:-20} "$build/bench/bench_pipeline" 10 "${N_BASH:-300}" |
	grep -E '^\| (call|---|bash)'
