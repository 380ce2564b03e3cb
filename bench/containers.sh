#!/bin/bash
# Start-up of `moat run -- /bin/true` in each container kind, side by side
# with the host's full sandbox, interleaved (bench/ab.c: every round runs
# each command once, in a rotating order, so that a drifting machine moves
# them all alike). The kinds are reproduced as tests/integration/
# test_containers.sh does, without a container engine:
#   docker   Docker's default seccomp rules (tests/helpers/docker_ns_rules):
#            Landlock + seccomp only, the gaps accepted with --accept-gap
#   masked   a user namespace whose /proc is masked (bubblewrap's --proc):
#            every namespace but the PID one, --accept-gap pid-namespace
# Each wrapper is timed around /bin/true alone too, so its own cost can be
# told apart. Every command is run once first and must exit 0 (a refusal
# would time as a fast failure). Prints a markdown section on stdout.
#   bench/containers.sh [BUILD]     BENCH_N: rounds (default 300)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
n=${BENCH_N:-300}
moat=$(realpath -e "$build/moat" 2>/dev/null) || { echo "no $build/moat"; exit 1; }
ab=$(realpath -e "$build/bench/ab" 2>/dev/null) || { echo "no $build/bench/ab"; exit 1; }
rules=$(realpath -e "$build/tests/docker_ns_rules" 2>/dev/null || true)

root=$(mktemp -d /tmp/moat-bench-ct.XXXXXX)
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"
ws=$root/ws
wsenv=$root/ws-env
mkdir -p "$ws" "$wsenv"
echo "API_KEY=bench-SECRET" >"$wsenv/.env"
for i in $(seq 1 50); do : >"$wsenv/f$i"; done
cd "$ws" || exit 1

names=() cmds=()
add() { # add NAME CMD...: a variant, if it runs (exit 0)
	local name=$1
	shift
	if ! "$@" >/dev/null 2>&1; then
		echo "- skipped: $name (\`$*\` failed here)" >>"$root/notes"
		return
	fi
	names+=("$name")
	[ ${#cmds[@]} = 0 ] || cmds+=(:::)
	cmds+=("$@")
}
gaps_of() { # gaps_of WRAPPER...: the gaps moat status reports under it
	"$@" "$moat" status --json 2>/dev/null | python3 -c 'import json,sys
f = json.load(sys.stdin)["features"]
print(",".join(k for k, v in f.items() if v["requested"] and not v["enforced"]))'
}
touch "$root/notes"
bw=("$(command -v bwrap || echo bwrap)" --unshare-user --unshare-pid --dev-bind / / --proc /proc)

# kinds WHO AS...: every kind's variants, each command run through AS
# (nothing, or setpriv to an unprivileged user)
kinds() {
	local who=$1 g
	shift
	add "bare /bin/true" "$@" /bin/true
	add "host: moat run" "$@" "$moat" run -- /bin/true
	add "host: moat run --net deny" "$@" "$moat" run --net deny -- /bin/true
	if [ -n "$rules" ]; then
		g=$(gaps_of "$@" "$rules")
		add "docker: the rules helper, bare" "$@" "$rules" /bin/true
		add "docker: moat run" "$@" "$rules" "$moat" run --accept-gap "$g" -- /bin/true
		add "docker: moat run --net deny" "$@" "$rules" "$moat" run --net deny --accept-gap "$g" -- /bin/true
		add "docker: moat run, a .env and 50 files at the workspace root" \
			"$@" "$rules" "$moat" run --workspace "$wsenv" --accept-gap "$g" -- /bin/true
	else
		echo "- skipped: docker (no $build/tests/docker_ns_rules)" >>"$root/notes"
	fi
	if command -v bwrap >/dev/null && "$@" "${bw[@]}" true 2>/dev/null; then
		g=$(gaps_of "$@" "${bw[@]}")
		add "masked /proc: bubblewrap, bare" "$@" "${bw[@]}" /bin/true
		add "masked /proc: moat run" "$@" "${bw[@]}" "$moat" run --accept-gap "${g:-pid-namespace}" -- /bin/true
		add "masked /proc: moat run --net deny" "$@" "${bw[@]}" "$moat" run --net deny \
			--accept-gap "${g:-pid-namespace}" -- /bin/true
	else
		echo "- skipped: masked /proc as $who (bubblewrap cannot make a user namespace here)" >>"$root/notes"
	fi
}

# table WHO: time the variants added, print their table, start afresh
table() {
	local out i=0 base=0 hostown=0 name
	out=$("$ab" "$n" "${cmds[@]}") || { echo "ab failed"; exit 1; }
	echo "As $1:"
	echo
	echo "| kind: command | median | p25 | p75 | x bare | moat's own | x host |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	while read -r _ _ med _ _ p25 _ p75 ratio; do
		name=${names[$i]}
		case $name in
		"bare /bin/true" | *", bare") base=$med ;;
		esac
		[ "$name" = "host: moat run" ] && hostown=$(awk -v a="$med" -v b="$base" 'BEGIN { print a - b }')
		awk -v name="$name" -v med="$med" -v p25="$p25" -v p75="$p75" -v r="${ratio#x}" \
			-v b="$base" -v h="$hostown" 'BEGIN {
			own = med - b
			if (name == "bare /bin/true" || name ~ /, bare$/)
				printf "| %s | %.3f | %.3f | %.3f | %.2f | - | - |\n", name, med, p25, p75, r
			else
				printf "| %s | %.3f | %.3f | %.3f | %.2f | %.3f | %.2f |\n", name, med, p25, p75, r, own, (h > 0 ? own / h : 0)
		}'
		i=$((i + 1))
	done <<<"$out"
	echo
	names=() cmds=()
}

echo "\`bench/containers.sh $build\` (BENCH_N=$n) at $(git -C "$src" rev-parse --short HEAD 2>/dev/null),"
echo "$(date -u +%F) on Linux $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start."
echo "Times in ms, $n interleaved rounds after 30 warm-up rounds; ratios are of medians."
echo "\"moat's own\": the median less the kind's bare one (its wrapper exec'ing /bin/true);"
echo "\"x host\": moat's own against the host's \`moat run\`'s own."
echo
kinds "$(id -un)"
table "$(id -un)"
user=${BENCH_USER-nobody}
if [ "$(id -u)" = 0 ] && [ -n "$user" ] && command -v setpriv >/dev/null && id "$user" >/dev/null 2>&1; then
	chown -R "$user" "$ws" "$wsenv"
	kinds "$user" "$(command -v setpriv)" --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --clear-groups
	table "$user (every command through setpriv)"
fi
cat "$root/notes"
