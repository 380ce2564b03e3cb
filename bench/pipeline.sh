#!/bin/bash
# The whole pipeline per call against the bare operation (bench_pipeline.c):
# read_file of a 4 KB file and bash `echo hi`, through the library session
# (strict parse, policy, gate, tool, audit line). Usage: bench/pipeline.sh [BUILD]
set -eu
build=${1:-build}
cd "$(dirname "$0")/.."
build=$(cd "$build" && pwd)
ws=$(mktemp -d /var/tmp/moat-bench-run.XXXXXX) # moat run's workspace: an empty directory
trap 'rm -rf "$ws"' EXIT
cd "$ws"
"$build/bench/bench_pipeline" "${N_READ:-20000}" "${N_BASH:-300}" "$build/moat"
