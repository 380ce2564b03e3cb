#!/bin/bash
# Sandbox start-up benchmark: wall time of `/bin/true` and `sh -c 'echo hi'`
# bare, under `moat run` (workspace-write, network denied; and the Landlock +
# seccomp only mode), and under the peers with the closest equivalent
# protection (bubblewrap, firejail, codex sandbox, srt), side by side in one
# run with hyperfine; then the peak RSS of each launcher, and a check from
# outside of what each measured configuration actually enforced.
# Prints a markdown section on stdout (bench/run.sh adds the heading).
#
# Peers missing or failing here are skipped with a note, never fatal; every
# external command runs under a timeout. Install the peers with
# bench/peers.sh. Knobs (environment): BENCH_ROUNDS (3), BENCH_ROUND_SECONDS
# (1.5: time per variant and round), BENCH_MIN_RUNS (30), BENCH_MAX_RUNS
# (6000: both over all rounds), BENCH_WARMUP (20 runs per round, 2 for
# launchers over 100 ms), BENCH_TIMEOUT (seconds per hyperfine, 300),
# BENCH_ONLY (space-separated variant names; bare always runs),
# BENCH_USER (the unprivileged user of the -user variants, nobody; empty:
# none). Run as root, the bare, moat and bubblewrap variants run a second time
# as that user (hyperfine itself runs as the user, in a workspace of its own),
# because a sandbox for an ordinary user is the main case, and the
# Landlock + seccomp only mode is what an ordinary user gets where the kernel
# refuses unprivileged user namespaces.
set -u
build=${1:-build}
min_runs=${BENCH_MIN_RUNS:-30}
max_runs=${BENCH_MAX_RUNS:-6000}
warmup=${BENCH_WARMUP:-20}
rounds=${BENCH_ROUNDS:-3}
round_s=${BENCH_ROUND_SECONDS:-1.5}
hf_timeout=${BENCH_TIMEOUT:-300}
only=${BENCH_ONLY:-}
bench_user=${BENCH_USER-nobody}

moat=$(realpath -e "$build/moat" 2>/dev/null || true)

# The workspace lives outside /tmp and /var/tmp: firejail's --private-tmp
# and its default /var/tmp tmpfs would hide it, and codex refuses to place
# its helper links under /tmp. Nothing here touches the user's real files.
cache=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}
mkdir -p "$cache"
root=$(mktemp -d "$cache/moat-bench.XXXXXX")
tmp=$root/out
ws=$root/ws
mkdir -p "$tmp" "$ws" "$root/codex-home"
# shellcheck disable=SC2317
cleanup() {
	rm -rf "$root"
	rm -f /tmp/moat-bench-canary.* 2>/dev/null
}
trap cleanup EXIT
cd "$ws" || exit 1

# The -user variants: hyperfine runs as BENCH_USER (setpriv), in a workspace
# that user owns (under /tmp: root's home is closed to it).
declare -A runas
uroot= uws= asp=
if [ "$(id -u)" = 0 ] && [ -n "$bench_user" ] && command -v setpriv >/dev/null &&
	id "$bench_user" >/dev/null 2>&1; then
	uroot=$(mktemp -d /tmp/moat-bench-user.XXXXXX)
	uws=$uroot/ws
	mkdir -p "$uws"
	chown -R "$bench_user:$(id -gn "$bench_user")" "$uroot"
	asp="setpriv --reuid=$(id -u "$bench_user") --regid=$(id -g "$bench_user") --clear-groups"
fi
# shellcheck disable=SC2317
cleanup_user() { [ -n "$uroot" ] && rm -rf "$uroot"; }
trap 'cleanup; cleanup_user' EXIT

note() { printf '%s\n' "$*" >>"$tmp/notes"; }
touch "$tmp/notes" "$tmp/variants"

if ! command -v hyperfine >/dev/null; then
	echo "hyperfine is not installed: run bench/peers.sh (skipped)."
	exit 0
fi
have_time=0
[ -x /usr/bin/time ] && have_time=1
load=$(cut -d' ' -f1-3 /proc/loadavg)

# --- the variants ------------------------------------------------------------
# Each: name, label, environment prefix (VAR=VALUE or empty), command prefix
# (a hyperfine -N command line, shell-words quoted). The benchmarked command
# is appended.
variants=()
add() { variants+=("$1"$'\x1f'"$2"$'\x1f'"$3"$'\x1f'"$4"); }

add bare "bare exec" "" ""
if [ -n "$moat" ] && [ -x "$moat" ]; then
	add moat "moat run (workspace-write, --net deny)" "" \
		"$moat run --profile workspace-write --net deny --workspace $ws --"
	add moat-nons "moat run, Landlock + seccomp only (no namespaces)" "MOAT_FAKE_NO_USERNS=1" \
		"$moat run --profile workspace-write --net deny --fallback warn --workspace $ws --"
else
	note "- moat: \`$build/moat\` not found (build it first); skipped."
fi
if command -v bwrap >/dev/null; then
	add bwrap "bubblewrap $(bwrap --version 2>/dev/null | awk '{print $2}')" "" \
		"bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $ws $ws --unshare-all --die-with-parent --new-session --chdir $ws"
else
	note "- bubblewrap: not installed; skipped (bench/peers.sh installs it)."
fi
if [ -n "$asp" ]; then
	un=$bench_user
	add bare-user "bare exec (as $un)" "HOME=/nonexistent" ""
	runas[bare-user]=1
	if [ -n "$moat" ] && [ -x "$moat" ]; then
		add moat-user "moat run (workspace-write, --net deny; as $un)" "HOME=/nonexistent" \
			"$moat run --profile workspace-write --net deny --workspace $uws --"
		add moat-nons-user "moat run, Landlock + seccomp only (as $un)" \
			"HOME=/nonexistent MOAT_FAKE_NO_USERNS=1" \
			"$moat run --profile workspace-write --net deny --fallback warn --workspace $uws --"
		runas[moat-user]=1
		runas[moat-nons-user]=1
	fi
	if command -v bwrap >/dev/null; then
		add bwrap-user "bubblewrap $(bwrap --version 2>/dev/null | awk '{print $2}') (as $un)" \
			"HOME=/nonexistent" \
			"bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $uws $uws --unshare-all --die-with-parent --new-session --chdir $uws"
		runas[bwrap-user]=1
	fi
elif [ "$(id -u)" = 0 ] && [ -n "$bench_user" ]; then
	note "- the variants as \`$bench_user\`: no setpriv or no such user; skipped."
fi
if command -v firejail >/dev/null; then
	add firejail "firejail $(firejail --version 2>/dev/null | awk 'NR==1{print $3}')" "" \
		"firejail --quiet --noprofile --net=none --private-tmp --read-only=/ --read-write=$ws --seccomp --caps.drop=all --nonewprivs"
else
	note "- firejail: not installed; skipped (bench/peers.sh installs it)."
fi
if command -v codex >/dev/null; then
	# The npm package is a node launcher around a native binary; measure the
	# native binary (what an agent embedding codex runs) and the launcher.
	cdir=$(dirname "$(readlink -f "$(command -v codex)")")/..
	cnative=$(find "$cdir" -path '*/vendor/*/bin/codex' -type f 2>/dev/null | head -n 1)
	cver=$(timeout 20 codex --version 2>/dev/null | awk '{print $2}')
	cargs="sandbox -c sandbox_mode=\"workspace-write\" -c sandbox_workspace_write.network_access=false --"
	if [ -n "$cnative" ]; then
		add codex "codex sandbox $cver (native binary)" "CODEX_HOME=$root/codex-home" \
			"$(realpath "$cnative") $cargs"
	fi
	add codex-npm "codex sandbox $cver (npm launcher, node)" "CODEX_HOME=$root/codex-home" \
		"codex $cargs"
else
	note "- codex: not installed; skipped (bench/peers.sh installs @openai/codex)."
fi
if command -v srt >/dev/null; then
	cat >"$root/srt.json" <<EOF
{"network": {"allowedDomains": [], "deniedDomains": []},
 "filesystem": {"denyRead": [], "allowWrite": ["$ws"], "denyWrite": []}}
EOF
	add srt "srt $(timeout 20 srt --version 2>/dev/null)" "" "srt --settings $root/srt.json"
else
	note "- srt: not installed; skipped (bench/peers.sh installs @anthropic-ai/sandbox-runtime)."
fi

cmds=("/bin/true" "sh -c 'echo hi'")

# run PREFIX-ENV COMMANDLINE...: runs a -N style command line through the
# same word splitting hyperfine uses (close enough: no globbing, quotes).
run_line() {
	local envp=$1 line=$2
	# shellcheck disable=SC2086
	eval "env $envp $line"
}

# --- probe: does the variant run, and what does it enforce ---------------------
# Checked from outside: a canary write next to the workspace, one into /tmp,
# and the namespaces and seccomp state the command sees.
host_pid=$(readlink /proc/self/ns/pid)
host_net=$(readlink /proc/self/ns/net)
# probe_script OUTSIDE_DIR WORKSPACE
probe_script() {
	printf '%s' "touch $1/canary-out 2>/dev/null; touch $2/canary-ws 2>/dev/null; \
touch /tmp/moat-bench-canary.\$\$ 2>/dev/null && echo tmpw=1; \
echo pid=\$(readlink /proc/self/ns/pid) net=\$(readlink /proc/self/ns/net) \
ifs=\$(tail -n +3 /proc/net/dev | wc -l) \$(grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status | tr -d ' \t')"
}
# where a variant runs: its user prefix (setpriv), directory, outside dir, and
# where its hyperfine may write
where() {
	if [ -n "${runas[$1]:-}" ]; then
		pre=$asp cdir=$uws cout=$uroot jdir=$uroot/out
	else
		pre= cdir=$ws cout=$root jdir=$tmp
	fi
}
[ -n "$uroot" ] && mkdir -p "$uroot/out" && chown "$bench_user" "$uroot/out"

ok_variants=()
for v in "${variants[@]}"; do
	IFS=$'\x1f' read -r name label envp prefix <<<"$v"
	if [ -n "$only" ] && ! [[ " $only " == *" $name "* ]] && [ "$name" != bare ] &&
		[ "$name" != bare-user ]; then
		continue
	fi
	where "$name"
	# 1. does it run `sh -c 'echo hi'` and pass the exit status?
	# shellcheck disable=SC2016
	out=$(cd "$cdir" && timeout 60 $pre bash -c 'eval "env $1 $2"' _ "$envp" \
		"${prefix:+$prefix }sh -c 'echo hi'" </dev/null 2>"$tmp/$name.err")
	rc=$?
	if [ $rc -ne 0 ] || [ "$out" != hi ]; then
		note "- $label: does not run here (exit $rc): $(head -c 300 "$tmp/$name.err" | tr '\n' ' ')"
		continue
	fi
	# 2. enforcement, seen from outside
	rm -f "$cout/canary-out" "$cdir/canary-ws" /tmp/moat-bench-canary.*
	# shellcheck disable=SC2016
	pout=$(cd "$cdir" && timeout 60 $pre bash -c 'eval "env $1 $2"' _ "$envp" \
		"${prefix:+$prefix }sh -c $(printf %q "$(probe_script "$cout" "$cdir")")" \
		</dev/null 2>/dev/null | tr '\n' ' ')
	[ -e "$cout/canary-out" ] && out_w=written || out_w=blocked
	[ -e "$cdir/canary-ws" ] && ws_w=yes || ws_w=no
	if ls /tmp/moat-bench-canary.* >/dev/null 2>&1; then
		tmp_w="host /tmp written"
	elif [[ "$pout" == *tmpw=1* ]]; then
		tmp_w=private
	else
		tmp_w="read-only"
	fi
	pidns=$(sed -n 's/.*pid=\([^ ]*\).*/\1/p' <<<"$pout")
	netns=$(sed -n 's/.*net=\([^ ]*\).*/\1/p' <<<"$pout")
	ifs=$(sed -n 's/.*ifs=\([0-9]*\).*/\1/p' <<<"$pout")
	secc=$(sed -n 's/.*Seccomp:\([0-9]\).*/\1/p' <<<"$pout")
	nnp=$(sed -n 's/.*NoNewPrivs:\([0-9]\).*/\1/p' <<<"$pout")
	[ "$pidns" != "$host_pid" ] && pid_s=own || pid_s=host
	if [ "$netns" != "$host_net" ]; then net_s="own ($ifs if)"; else net_s=host; fi
	case "$secc" in 2) secc_s=filter ;; 0) secc_s=none ;; *) secc_s="?" ;; esac
	[ "$nnp" = 1 ] && nnp_s=yes || nnp_s=no
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$out_w" "$ws_w" "$tmp_w" \
		"$pid_s" "$net_s" "$secc_s" "$nnp_s" >>"$tmp/enforced"
	rm -f "$cout/canary-out" "$cdir/canary-ws" /tmp/moat-bench-canary.*
	ok_variants+=("$v")
done

# --- timing ------------------------------------------------------------------
# BENCH_ROUNDS rounds; in each, every variant runs for about
# BENCH_ROUND_SECONDS (within the run bounds), so a change of machine load
# during the run hits all variants alike. The times of all rounds are pooled.
now_ns() { date +%s%N; }
declare -A per_run
for v in "${ok_variants[@]}"; do
	IFS=$'\x1f' read -r name label envp prefix <<<"$v"
	i=0
	for c in "${cmds[@]}"; do
		line="${prefix:+$prefix }$c"
		printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$i" "$label" "$envp" "$line" >>"$tmp/variants"
		best=
		where "$name"
		for _ in 1 2 3; do
			s=$(now_ns)
			(cd "$cdir" && run_line "$envp" "$pre $line") >/dev/null 2>&1 </dev/null
			e=$(now_ns)
			t=$((e - s))
			[ -z "$best" ] || [ "$t" -lt "$best" ] && best=$t
		done
		per_run[$name.$i]=$best
		i=$((i + 1))
	done
done
rmin=$(((min_runs + rounds - 1) / rounds))
rmax=$(((max_runs + rounds - 1) / rounds))
for ((k = 1; k <= rounds; k++)); do
	for v in "${ok_variants[@]}"; do
		IFS=$'\x1f' read -r name label envp prefix <<<"$v"
		i=0
		for c in "${cmds[@]}"; do
			line="${prefix:+$prefix }$c"
			i=$((i + 1))
			[ -e "$tmp/$name.$((i - 1)).failed" ] && continue
			t=${per_run[$name.$((i - 1))]}
			n=$(python3 -c "import sys; b,t,lo,hi=map(float,sys.argv[1:]); \
print(int(max(lo, min(hi, b * 1e9 / max(t, 1)))))" "$round_s" "$t" "$rmin" "$rmax")
			w=$warmup
			[ "$t" -gt 100000000 ] && w=2
			where "$name"
			# shellcheck disable=SC2086
			if ! (cd "$cdir" && $pre env $envp timeout "$hf_timeout" hyperfine -N --style none \
					--warmup "$w" --runs "$n" \
					--export-json "$jdir/$name.$((i - 1)).r$k.json" "$line") \
					</dev/null >"$tmp/$name.$((i - 1)).log" 2>&1; then
				note "- $label, \`$c\`: hyperfine failed or timed out in round $k: $(tail -n 3 "$tmp/$name.$((i - 1)).log" | tr '\n' ' ' | head -c 300)"
				touch "$tmp/$name.$((i - 1)).failed"
			fi
			[ "$jdir" = "$tmp" ] || cp "$jdir/$name.$((i - 1)).r$k.json" "$tmp/" 2>/dev/null
		done
	done
done

# --- peak RSS ------------------------------------------------------------------
# /usr/bin/time reports ru_maxrss from wait4: the larger of the launcher's own
# peak and its reaped descendants' (here /bin/true, about 1 MB). Max of 10.
if [ $have_time = 1 ]; then
	for v in "${ok_variants[@]}"; do
		IFS=$'\x1f' read -r name label envp prefix <<<"$v"
		best=0
		where "$name"
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			# shellcheck disable=SC2086
			r=$(cd "$cdir" && eval "$pre env $envp timeout 60 /usr/bin/time -f %M ${prefix:+$prefix }/bin/true" \
				2>&1 >/dev/null </dev/null | tail -n 1)
			[[ "$r" =~ ^[0-9]+$ ]] && [ "$r" -gt "$best" ] && best=$r
		done
		printf '%s\t%s\n' "$name" "$best" >>"$tmp/rss"
	done
else
	note "- peak RSS: /usr/bin/time is not installed (Debian package \`time\`); skipped."
fi

# --- report --------------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
hfv=$(hyperfine --version | awk '{print $2}')
abi=$([ -n "$moat" ] && timeout 20 "$moat" status 2>/dev/null | sed -n 's/^landlock abi //p')
python3 - "$tmp" "$(uname -r)" "$cpu" "$(nproc)" "$load" "$(id -un)" "$hfv" "${abi:-?}" \
	"$min_runs" "$max_runs" "$warmup" "$rounds" "$round_s" "$(date -u +%Y-%m-%d)" "$load_end" <<'PY'
import json, os, statistics, sys
tmp, kern, cpu, ncpu, load, user, hfv, abi, minr, maxr, warm, rounds, round_s, date, load_end = sys.argv[1:16]
variants = []          # (name, idx, label, env, line)
for l in open(os.path.join(tmp, "variants")):
    n, i, label, env, line = l.rstrip("\n").split("\t")
    variants.append((n, int(i), label, env, line))
res = {}
for n, i, label, env, line in variants:
    if os.path.exists(os.path.join(tmp, f"{n}.{i}.failed")):
        continue
    times = []
    for k in range(1, int(rounds) + 1):
        p = os.path.join(tmp, f"{n}.{i}.r{k}.json")
        if os.path.exists(p):
            times += json.load(open(p))["results"][0]["times"]
    if times:
        res[(n, i)] = {"median": statistics.median(times), "mean": statistics.fmean(times),
                       "stddev": statistics.stdev(times) if len(times) > 1 else 0.0,
                       "min": min(times), "times": times}
labels = {}
for n, i, label, env, line in variants:
    labels[n] = label
names = list(labels)
cmds = ["/bin/true", "sh -c 'echo hi'"]

def ms(x): return x * 1000.0
def fmt(x):
    v = ms(x)
    return f"{v:.3f}" if v < 10 else f"{v:.1f}" if v < 100 else f"{v:.0f}"

print(f"Measured {date} on Linux {kern}, {cpu}, {ncpu} CPUs, load average {load} at the "
      f"start and {load_end} at the end, as `{user}`; Landlock ABI {abi}. hyperfine {hfv} with `-N` (no shell); {rounds} "
      f"rounds, in each every launcher runs for about {round_s} s (at least {minr}, at most "
      f"{maxr} runs in all) after {warm} warm-up runs (2 for launchers over 100 ms); the times "
      f"of the rounds are pooled. Times in ms; ratios are of medians.")
print()
for i, c in enumerate(cmds):
    print(f"### `{c}`")
    print()
    print("| launcher | median | mean ± sd | min | runs | x bare | x bwrap |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for n in names:
        r = res.get((n, i))
        if r is None:
            continue
        sfx = "-user" if n.endswith("-user") else ""
        bare = res.get(("bare" + sfx, i))
        bw = res.get(("bwrap" + sfx, i))
        xb = f"{r['median'] / bare['median']:.1f}" if bare else "-"
        xw = f"{r['median'] / bw['median']:.2f}" if bw else "-"
        print(f"| {labels[n]} | {fmt(r['median'])} | {fmt(r['mean'])} ± {fmt(r['stddev'] or 0)} "
              f"| {fmt(r['min'])} | {len(r['times'])} | {xb} | {xw} |")
    print()

# targets (issue 3): moat <= 0.6x bwrap; no-namespace mode <= 3x bare; RSS < 4 MB
rss = {}
p = os.path.join(tmp, "rss")
if os.path.exists(p):
    for l in open(p):
        n, kb = l.split()
        rss[n] = int(kb)
print("### Targets")
print()
for sfx, who in (("", f"as `{user}`"), ("-user", "as the unprivileged user")):
  for i, c in enumerate(cmds):
    m, b, bw, nn = (res.get((k + sfx, i)) for k in ("moat", "bare", "bwrap", "moat-nons"))
    if m and bw:
        x = m["median"] / bw["median"]
        verdict = "met" if x <= 0.6 else f"missed by {ms(m['median'] - 0.6 * bw['median']):.3f} ms ({x / 0.6:.2f}x the target)"
        print(f"- `{c}` {who}: moat run {fmt(m['median'])} ms = {x:.2f}x bubblewrap's median "
              f"(target ≤ 0.6x = {fmt(0.6 * bw['median'])} ms): {verdict}.")
    if nn and b:
        x = nn["median"] / b["median"]
        print(f"- `{c}` {who}: Landlock + seccomp only {fmt(nn['median'])} ms = {x:.2f}x bare "
              f"(target ≤ 3x): {'met' if x <= 3 else 'missed'}.")
if "moat" in rss:
    kb = rss["moat"]
    print(f"- Peak RSS of `moat run … /bin/true`: {kb} KiB (target < 4096 KiB): "
          f"{'met' if kb < 4096 else 'missed'}.")
print()
if rss:
    print("### Peak RSS (`/usr/bin/time -f %M LAUNCHER /bin/true`, max of 10, KiB)")
    print()
    print("| launcher | KiB |")
    print("|---|---:|")
    for n in names:
        if n in rss:
            print(f"| {labels[n]} | {rss[n]:,} |")
    print()
    print("ru_maxrss of the launcher process as wait4 reports it: the larger of its own "
          "peak and that of the descendants it reaped (the command, a helper). For the "
          "npm launchers that is node's.")
    print()
p = os.path.join(tmp, "enforced")
if os.path.exists(p):
    print("### What each measured configuration enforced (checked from outside)")
    print()
    print("| launcher | write next to the workspace | write in the workspace | /tmp | pid ns | net ns | seccomp | no_new_privs |")
    print("|---|---|---|---|---|---|---|---|")
    print(open(p).read().rstrip("\n"))
    print()
print("### Commands")
print()
print("`WS` is a fresh directory under `~/.cache` (not `/tmp`: firejail's `--private-tmp` "
      "would hide it); every command runs with `WS` as its working directory.")
print()
print("```")
root = os.path.dirname(tmp)
for n, i, label, env, line in variants:
    if i != 0:
        continue
    shown = line.replace(root + "/ws", "WS").replace(root, "$TMPD")
    if n.endswith("-user"):
        import re
        shown = re.sub(r"/tmp/moat-bench-user\.[A-Za-z0-9]+/ws", "UWS", shown)
    shown = (env.replace(root, "$TMPD") + " " if env else "") + "hyperfine -N '" + shown + "'"
    print(shown)
print("```")
print()
print("The `-user` lines (labelled \"as nobody\") run hyperfine itself as that user "
      "(`setpriv --reuid --regid --clear-groups`, `HOME=/nonexistent`) in `UWS`, a workspace "
      "that user owns under `/tmp`.")
print()
print("The second command appends `sh -c 'echo hi'` instead of `/bin/true`. `$TMPD` holds "
      "the srt settings (`allowedDomains: []`, `allowWrite: [WS]`) and codex's `CODEX_HOME`.")
PY
if [ -s "$tmp/notes" ]; then
	echo
	echo "### Skipped or failed"
	echo
	cat "$tmp/notes"
fi
exit 0
