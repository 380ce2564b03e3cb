#!/bin/bash
# make check: build twice (normal and ASan+UBSan), run every suite on the
# normal build and every one but the kernel attacks (suite shipped-only) on
# the sanitizer build, replay the fuzz corpora (they are meson tests), run
# the static checks, and finish with one line "N passed, M failed".
set -u
cd "$(dirname "$0")/.." || exit 1
passed=0
failed=0
failures=""

count() { # $1 = build dir: add its meson test results
	local log="$1/meson-logs/testlog.json" p f names
	if [ ! -f "$log" ]; then
		failed=$((failed + 1))
		failures+="$1: no test log"$'\n'
		return
	fi
	read -r p f < <(python3 -c 'import json,sys
p=f=0
for l in open(sys.argv[1]):
    r=json.loads(l)
    ok=r["result"] in ("OK","EXPECTEDFAIL")
    p+=ok; f+=not ok
print(p,f)' "$log")
	passed=$((passed + p))
	failed=$((failed + f))
	# each failed test and its first failed check, repeated before the
	# summary so that the tail of a long log still says what failed
	names=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r["result"] in ("OK","EXPECTEDFAIL"): continue
    first=next((x for x in (r.get("stdout") or "").splitlines()
                if x.startswith("not ok")), "")
    print("%s: %s %s %s" % (sys.argv[2], r["name"], r["result"], first[:160]))' "$log" "$1")
	[ -n "$names" ] && failures+="$names"$'\n'
}

step() { # name, command...: a static check counted as one test
	local name="$1"
	shift
	if "$@"; then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "FAIL - $name"
		failed=$((failed + 1))
		failures+="FAIL - $name"$'\n'
	fi
}

build_dir() { # dir, meson options...: configured and compiled; 1 when not
	local dir="$1"
	shift
	if [ "$dir" = build ]; then
		scripts/setup-build.sh "$dir" "$@" || return 1
	elif [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >/dev/null || return 1
	else
		meson setup --reconfigure "$dir" "$@" >/dev/null || return 1
	fi
	if ! ninja -C "$dir" >/dev/null; then
		ninja -C "$dir" 2>&1 | tail -n 40
		return 1
	fi
}

test_dir() { # dir, meson test options...: the suites, counted
	local dir="$1"
	shift
	rm -f "$dir/meson-logs/testlog.json"
	meson test -C "$dir" --print-errorlogs --num-processes "${MOAT_TEST_JOBS:-$(($(nproc) * 2))}" "$@" \
		>"$dir/test-output.txt" 2>&1
	grep -E '^ *[0-9]+/[0-9]+ ' "$dir/test-output.txt" || true
	grep -A60 -E '^(FAIL|ERROR|TIMEOUT)|not ok' "$dir/test-output.txt" | head -n 200 || true
	count "$dir"
}

asan_env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1)
asan_opts=(-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized)

t0=$SECONDS
phase() { echo "== $1 (at $((SECONDS - t0)) s)"; }
phase "static checks"
step "banned functions" scripts/check-banned.sh
phase "normal build"
normal=1
build_dir build || { failed=$((failed + 1)); failures+="the normal build"$'\n'; normal=0; }
# The sanitizer build compiles while the normal build's suites run, at the
# lowest priority: those wait on processes and the kernel more than they
# compute, and a test never waits for the compiler. Then, in turn (two
# compilers at once delayed the sanitizer build past the normal suites),
# the libFuzzer build and its short run of each harness, reported at the
# end.
rm -f build-asan.rc build-fuzz.rc
fuzz=0
command -v clang >/dev/null && fuzz=1
fuzz_what="fuzzers (clang, ${FUZZ_RUNS:-2000} inputs each, seed ${FUZZ_SEED:-1})"
nice -n 19 bash -c "$(declare -f build_dir)
	(export ${asan_env[*]}; build_dir build-asan ${asan_opts[*]}) >build-asan.log 2>&1
	echo \$? >build-asan.rc
	[ $fuzz = 1 ] || exit 0
	env FUZZ_SECONDS=${FUZZ_SECONDS:-5} FUZZ_RUNS=${FUZZ_RUNS:-2000} FUZZ_SEED=${FUZZ_SEED:-1} \
		FUZZ_KEEP=0 scripts/fuzz.sh >build-fuzz.log 2>&1
	echo \$? >build-fuzz.rc" &
bg_pid=$!
[ "$normal" = 1 ] && test_dir build
step "layering" scripts/check-layers.sh build
phase "ASan+UBSan build"
while [ ! -s build-asan.rc ] && kill -0 "$bg_pid" 2>/dev/null; do sleep 1; done
asan=0
[ "$(cat build-asan.rc 2>/dev/null)" = 0 ] && asan=1
if [ "$asan" = 1 ]; then
	phase "ASan+UBSan suites"
	export "${asan_env[@]}"
	# every suite but the kernel attacks of the shipped build (tests/meson.build)
	test_dir build-asan --no-suite shipped-only
	unset ASAN_OPTIONS UBSAN_OPTIONS
else
	tail -n 40 build-asan.log
	failed=$((failed + 1))
	failures+="the ASan+UBSan build"$'\n'
fi
rm -f build-asan.log
wait "$bg_pid"
if [ "$fuzz" = 1 ]; then
	phase "libFuzzer build (clang), a short run of each harness"
	cat build-fuzz.log
	step "$fuzz_what" [ "$(cat build-fuzz.rc 2>/dev/null)" = 0 ]
fi
rm -f build-asan.rc build-fuzz.rc build-fuzz.log
[ -n "$failures" ] && printf '== failed\n%s' "$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
