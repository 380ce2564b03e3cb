#!/bin/bash
# Build every fuzz harness with clang + libFuzzer (the whole tree instrumented,
# ASan+UBSan) and run each for FUZZ_SECONDS (default 60). New inputs go to a
# scratch directory; copy the interesting ones into fuzz/corpus/NAME/.
# FUZZ_SECONDS=0 only builds. FUZZ_RUNS=N (with FUZZ_SEED=S) runs N inputs
# per harness instead, reproducibly.
set -eu -o pipefail
cd "$(dirname "$0")/.."
dir=${FUZZ_BUILD:-build-fuzz}
secs=${FUZZ_SECONDS:-60}
command -v clang >/dev/null || { echo "fuzz: clang is not installed" >&2; exit 1; }
if [ ! -f "$dir/build.ninja" ]; then
	CC=clang meson setup "$dir" -Dfuzzers=true -Db_sanitize=address,undefined -Db_lundef=false \
		-Dbuildtype=debugoptimized -Dc_args=-fsanitize=fuzzer-no-link >/dev/null
fi
# the harnesses only (the rest of the tree is built by the other builds)
mapfile -t harnesses < <(ninja -C "$dir" -t targets all | sed -n 's/^\(fuzz\/fuzz_[a-z_0-9]*\): c_LINKER$/\1/p')
[ ${#harnesses[@]} -gt 0 ] || { echo "fuzz: no harness in $dir" >&2; exit 1; }
ninja -C "$dir" "${harnesses[@]}" >/dev/null ||
	{ ninja -C "$dir" "${harnesses[@]}" 2>&1 | grep -E -A5 "error|FAILED" | head -n 40; exit 1; }
[ "$secs" = 0 ] && exit 0
for f in "$dir"/fuzz/fuzz_*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	name=${f##*/fuzz_}
	out=$(mktemp -d /tmp/moat-fuzz-$name.XXXXXX)
	echo "fuzz: $name for ${secs}s (new inputs in $out)"
	# FUZZ_RUNS and FUZZ_SEED make a run reproducible (check.sh uses them:
	# a red CI must mean a change broke something, not a lucky find; deep,
	# random fuzzing is `make fuzz`)
	limit=(-max_total_time="$secs")
	[ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
	[ -n "${FUZZ_SEED:-}" ] && limit+=(-seed="$FUZZ_SEED")
	"$f" "${limit[@]}" -print_final_stats=0 -artifact_prefix="$out/" "$out" "fuzz/corpus/$name" >"$out.log" 2>&1 ||
		{ tail -n 40 "$out.log"; echo "fuzz: $name FAILED (inputs in $out)"; exit 1; }
	tail -n 1 "$out.log"
	rm -f "$out.log"
	[ "${FUZZ_KEEP:-1}" = 1 ] || rm -rf "$out"
done
