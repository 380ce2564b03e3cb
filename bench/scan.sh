#!/bin/bash
# The workspace scan as workspaces grow (issue 21): workspaces shaped like a
# monorepo after a build (tests/helpers/mktree.c: node_modules, target/,
# .venv, .git, 1 secret in 150 entries) of BENCH_SCAN_SIZES entries
# (default "1000 30000 450000 2000000"), each timed side by side in one run
# with hyperfine: `find W -name .env -o -name '*.pem'` (what a scan must at
# least do), bubblewrap running /bin/true with the workspace bound (it masks
# nothing), `moat run -- /bin/true` with no scan record (first run) and
# with one (repeat run), and the median of a bash call of `true` in a
# `moat mcp` session (bench/scan_session.mjs, the official SDK client),
# with the calls 50 ms apart (a script) and BENCH_PACE_MS apart (default
# 4000: an agent's model thinking between calls, time enough to arm the
# next sandbox).
# Prints a markdown table on stdout: milliseconds, and each moat figure
# less the same figure in the smallest workspace.
#
#   bench/scan.sh [BUILD]      (trees are kept in BENCH_TREES, default
#                               ~/.cache/moat-bench-trees: 2M entries take
#                               about a minute to make)
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
moat=$(realpath -e "$build/moat") || { echo "no $build/moat" >&2; exit 1; }
mktree=$(realpath -e "$build/tests/mktree") || { echo "no $build/tests/mktree" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "hyperfine is needed (bench/peers.sh)" >&2; exit 1; }
sizes=${BENCH_SCAN_SIZES:-1000 30000 450000 2000000}
trees=${BENCH_TREES:-${HOME:-/root}/.cache/moat-bench-trees}
prefix=${MOAT_NPM_PREFIX:-/opt/moat-npm}
# (the scan record is never kept where a sandbox may write: not under /tmp)
mkdir -p "${HOME:-/root}/.cache"
cache=$(mktemp -d "${HOME:-/root}/.cache/moat-scan-bench.XXXXXX")
trap 'rm -rf "$cache"' EXIT
export XDG_CACHE_HOME=$cache
cfg=$cache/config.json
echo '{"sandbox": {"mode": "linux", "rules": [{"tool": "bash", "profile": "workspace-write-no-network"}]}}' >"$cfg"
mkdir -p "$trees"

# mean milliseconds of one hyperfine run (extra hyperfine options first)
hf() {
	local json=$cache/hf.json
	hyperfine -N --style none --export-json "$json" "$@" >/dev/null 2>&1 || { echo "-"; return; }
	sed -n 's/.*"mean": *\([0-9.e+-]*\).*/\1/p' "$json" | head -1 | awk '{printf "%.1f", $1 * 1000}'
}
runs_for() { # fewer runs for the big trees
	if [ "$1" -ge 1000000 ]; then echo 5; elif [ "$1" -ge 100000 ]; then echo 10; else echo 30; fi
}

pace=${BENCH_PACE_MS:-4000}
echo "| entries | secrets | find | bwrap | moat run, first | moat run, repeat | mcp call, 50 ms apart | mcp call, $pace ms apart | first - find | repeat - smallest | call 50 ms - smallest | call $pace ms - smallest |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
base_rep= base_call= base_pace=
for n in $sizes; do
	w=$trees/w$n
	[ -e "$w/.done" ] || { rm -rf "$w"; "$mktree" "$w" "$n" $((n / 150 + 6)) >/dev/null 2>&1 && touch "$w/.done"; }
	secrets=$(find "$w" -name .env -o -name '*.pem' | wc -l)
	r=$(runs_for "$n")
	t_find=$(hf -w 1 -r "$r" "find $w -name .env -o -name *.pem")
	t_bwrap=$(hf -w 1 -r "$r" "bwrap --ro-bind / / --dev /dev --proc /proc --bind $w $w --unshare-all --chdir $w /bin/true")
	t_first=$(hf -w 1 -r "$r" --prepare "rm -rf $cache/moat" "$moat run --workspace $w -- /bin/true")
	t_rep=$(hf -w 2 -r "$r" "$moat run --workspace $w -- /bin/true")
	t_call=$(MOAT=$moat MOAT_NPM_PREFIX=$prefix WS=$w CONFIG=$cfg BENCH_N=$((r * 2)) \
		timeout 600 node bench/scan_session.mjs 2>/dev/null || echo "-")
	t_pace=$(MOAT=$moat MOAT_NPM_PREFIX=$prefix WS=$w CONFIG=$cfg BENCH_N=10 BENCH_GAP_MS=$pace \
		timeout 900 node bench/scan_session.mjs 2>/dev/null || echo "-")
	[ -z "$base_rep" ] && base_rep=$t_rep base_call=$t_call base_pace=$t_pace
	d() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%+.1f", a - b }'; }
	echo "| $n | $secrets | $t_find | $t_bwrap | $t_first | $t_rep | $t_call | $t_pace | $(d "$t_first" "$t_find") | $(d "$t_rep" "$base_rep") | $(d "$t_call" "$base_call") | $(d "$t_pace" "$base_pace") |"
done
