#!/bin/bash
# Integration tests of `moat run`, looking from outside: canaries outside the
# workspace, a loopback listener that records connections, host processes,
# files left behind. TAP output.
#
#   MOAT=path/to/moat MOAT_SRC=repo bash tests/integration/test_run.sh
#
# Modes (test_run_nobody.sh and test_run_nouserns.sh set them):
#   MOAT_TEST_AS=nobody     run moat as the user nobody (needs root to switch)
#   MOAT_TEST_NOUSERNS=1    user namespaces unavailable: for real inside a
#                           user namespace whose user.max_user_namespaces is 0
#                           (needs root or unprivileged userns), else faked with
#                           MOAT_FAKE_NO_USERNS=1; the Landlock + seccomp
#                           only mode (MOAT_FAKE_NO_NS_ADMIN=1 there: root
#                           would still make the other namespaces)
#   MOAT_TEST_ROOTNS=1      the same user namespace, as root: the mount, PID,
#                           IPC and network namespaces are made without a user
#                           namespace, and everything of the full mode holds
# A missing kernel feature skips, unless MOAT_MUST_WORK=1 (CI): then it fails.
set -u

MOAT=${MOAT:-$(command -v moat)}
AS=${MOAT_TEST_AS:-}
NOUSERNS=${MOAT_TEST_NOUSERNS:-0}
ROOTNS=${MOAT_TEST_ROOTNS:-0}
. "$(dirname "$0")/../lib/tap.sh"
# a tag unique to this run: the process checks below must not count the
# sleeps of another run of these tests on the same machine
U=$(($$ % 100000))


[ -x "$MOAT" ] || bail "no moat binary (set MOAT)"
[ "$NOUSERNS" = 1 ] || [ "$ROOTNS" = 1 ] || require_sandbox
if [ -n "$AS" ] && [ "$(id -u)" != 0 ]; then
	echo "1..1"
	if [ "$MUST" = 1 ]; then echo "not ok 1 - running as $AS needs root"; exit 1; fi
	echo "ok 1 - # SKIP running as $AS needs root"
	exit 0
fi

T=$(mktemp -d /tmp/moat-it-XXXXXX) || bail "mktemp"
chmod 755 "$T"
cleanup() {
	[ -n "${LISTENER_PID:-}" ] && kill "$LISTENER_PID" 2>/dev/null
	[ -n "${ABS_PID:-}" ] && kill "$ABS_PID" 2>/dev/null
	[ -n "${SOCK_PID:-}" ] && kill "$SOCK_PID" 2>/dev/null
	[ -n "${HOSTPROC_PID:-}" ] && kill "$HOSTPROC_PID" 2>/dev/null
	[ -n "${HSOCK_PID:-}" ] && kill "$HSOCK_PID" 2>/dev/null
	rm -rf "$T" "/run/moat-it-$$.sock" 2>/dev/null
}
trap cleanup EXIT

WS=$T/ws
OUT=$T/outside
H=$T/home
mkdir -p "$WS/sub" "$OUT" "$H/.ssh" "$H/.aws" "$H/.config/gcloud"
echo "canary-content" >"$OUT/canary"
echo "ssh-private-key-SECRET1" >"$H/.ssh/id_rsa"
echo "aws-SECRET2" >"$H/.aws/credentials"
echo "gcloud-SECRET3" >"$H/.config/gcloud/token"
echo "pem-SECRET4" >"$H/server.pem"
printf '[user]\n\tname = Moat Test\n\temail = moat@example.invalid\n[init]\n\tdefaultBranch = main\n[safe]\n\tdirectory = *\n' >"$H/.gitconfig"
# (without a mount namespace a directory holding a masked path takes no
# new entries: the secrets section makes these there, for its own checks)
if [ "$NOUSERNS" != 1 ]; then
	echo "API_KEY=env-SECRET5" >"$WS/.env"
	echo "nested-SECRET6" >"$WS/sub/.env"
fi
echo "hello" >"$WS/readme.txt"
(cd "$WS" && git init -q . && mkdir -p .git/hooks && git add readme.txt && git -c user.name=t -c user.email=t@t commit -qm init) ||
	bail "git init in the workspace"
cp "$WS/.git/config" "$T/git-config.orig"

RUNAS=()
if [ "$AS" = nobody ]; then
	chown -R nobody:nogroup "$WS" "$H"
	RUNAS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi

NSWRAP=()
FAKE=()
if [ "$NOUSERNS" = 1 ] || [ "$ROOTNS" = 1 ]; then
	# for real: a user namespace in which no further one may be created
	# (as nobody the real way would make the command root in that namespace)
	if [ -z "$AS" ] && unshare --user --map-root-user sh -c 'echo 0 >/proc/sys/user/max_user_namespaces' 2>/dev/null; then
		NSWRAP=(unshare --user --map-root-user --keep-caps sh -c 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$@"' sh)
		# root there still makes mount/PID/net namespaces without a user
		# namespace (MOAT_TEST_ROOTNS=1 tests that); the Landlock +
		# seccomp only mode is what is tested here
		[ "$NOUSERNS" = 1 ] && FAKE=(MOAT_FAKE_NO_NS_ADMIN=1)
	elif [ "$ROOTNS" = 1 ]; then
		skip_all "MOAT_TEST_ROOTNS: cannot make a user namespace without further ones here (a container that refuses namespaces)"
	else
		FAKE=(MOAT_FAKE_NO_USERNS=1)
	fi
fi

# m ARGS...: run moat in the workspace with the test's environment
m() {
	(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 TERM=dumb \
		${FAKE[@]+"${FAKE[@]}"} ${EXTRA_ENV[@]+"${EXTRA_ENV[@]}"} \
		${RUNAS[@]+"${RUNAS[@]}"} ${NSWRAP[@]+"${NSWRAP[@]}"} "$MOAT" run "$@")
}
EXTRA_ENV=()
canary_ok() { [ "$(cat "$OUT/canary")" = canary-content ] && [ "$(ls "$OUT")" = canary ]; }
# left_after PATTERN: how many processes still match, once none do or after
# 2 s (moat's own helpers exit soon after it, not necessarily at once)
left_after() {
	local left=1
	for _ in $(seq 100); do
		left=$(pgrep -fc "$1" || true)
		[ "$left" = 0 ] && break
		sleep 0.02
	done
	echo "$left"
}

# What does this system give us?
status_json=$(cd "$WS" && env HOME="$H" ${FAKE[@]+"${FAKE[@]}"} ${RUNAS[@]+"${RUNAS[@]}"} ${NSWRAP[@]+"${NSWRAP[@]}"} "$MOAT" status --json 2>/dev/null)
feature() { # feature NAME -> true/false (enforced)
	python3 -c 'import json,sys; print(str(json.loads(sys.argv[1])["features"][sys.argv[2]]["enforced"]).lower())' "$status_json" "$1" 2>/dev/null
}
LANDLOCK=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["kernel"]["landlock_abi"])' "$status_json" 2>/dev/null || echo 0)
# (namespaces: a user namespace, or root making the others without one)
USERNS=$(python3 -c 'import json,sys; k = json.loads(sys.argv[1])["kernel"]; print(str(k["user_namespaces"] or k.get("namespaces_without_userns", False)).lower())' "$status_json" 2>/dev/null || echo false)

if [ "${LANDLOCK:-0}" = 0 ]; then
	if [ "$MUST" = 1 ]; then bail "Landlock unavailable but MOAT_MUST_WORK=1"; fi
	echo "1..1"
	echo "ok 1 - # SKIP Landlock unavailable on this kernel"
	exit 0
fi
check "status --json parses and shows Landlock (abi $LANDLOCK)" [ "$LANDLOCK" -ge 1 ]

if [ "$NOUSERNS" = 1 ]; then
	check "status reports user namespaces unavailable" [ "$USERNS" = false ]
	# fail closed: masks and the rest are requested but not enforceable
	out=$(m -- true 2>&1)
	rc=$?
	check "refuses by default without user namespaces (exit 125)" [ $rc = 125 ]
	check "the refusal names the missing protections and a hint" \
		grep -q "cannot enforce private-tmp.*hint:" <<<"$out"
	MODE=(--fallback warn)
else
	check "status reports namespaces available (user namespaces, or root without them)" [ "$USERNS" = true ]
	MODE=()
fi
# mr ARGS...: run with the mode's fallback (its warnings filtered out)
mr() {
	if [ ${#MODE[@]} = 0 ]; then
		m "$@"
		return
	fi
	local rc
	{
		m "${MODE[@]}" "$@" 2>&1 1>&3 3>&- | grep -v '^moat run: warning: ' >&2
		rc=${PIPESTATUS[0]}
	} 3>&1
	return "$rc"
}

# ---- basics and exit statuses ----
out=$(mr -- sh -c 'echo inside' 2>&1)
check "runs a command (exit 0)" [ "$out" = inside ] || echo "# $out"
mr -- sh -c 'exit 7' 2>/dev/null
check "passes the exit status through (7)" [ $? = 7 ]
mr -- /nonexistent-command 2>/dev/null
check "a missing command exits 127" [ $? = 127 ]
printf 'not executable' >"$WS/noexec"
chmod 644 "$WS/noexec"
mr -- ./noexec 2>/dev/null
check "a non-executable file exits 126" [ $? = 126 ]
rm -f "$WS/noexec"
mr -- python3 -c 'import ctypes; ctypes.string_at(0)' 2>/dev/null
check "a command killed by SIGSEGV exits 139 (128+11)" [ $? = 139 ]
mr --profile no-such-profile -- true 2>"$T/err"
rc=$?
check "an unknown profile refuses (125)" cond '[ $rc = 125 ] && grep -q "unknown profile" "$T/err"'
(cd / && env HOME="$H" ${FAKE[@]+"${FAKE[@]}"} "$MOAT" run -- true 2>"$T/err")
check "a workspace of / is refused (125)" [ $? = 125 ]
mr --profile workspace-write-no-network --net allow -- true 2>"$T/err"
rc_=$?
check "an immutable network cannot be loosened by a flag (125)" cond '[ $rc_ = 125 ] && grep -q immutable "$T/err"'
plan=$(mr --print-plan -- true 2>/dev/null)
check "--print-plan prints JSON with the profile" \
	python3 -c 'import json,sys; p=json.loads(sys.argv[1]); assert p["profile"]=="workspace-write"' "$plan"

# ---- the sandbox is made once: the child started early (while moat plans)
# is the one the command runs in, not discarded for a second start (a plan
# that disagreed with the early start doubled every call's cost) ----
if [ "$NOUSERNS" = 0 ] && [ "$ROOTNS" = 0 ] && command -v strace >/dev/null; then
	(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 TERM=dumb \
		strace -f -qq -e trace=clone,clone3,unshare -o "$T/clones" \
		${RUNAS[@]+"${RUNAS[@]}"} "$MOAT" run --net deny -- true) >/dev/null 2>&1
	nuser=$(grep -c 'CLONE_NEWUSER' "$T/clones" 2>/dev/null)
	nnet=$(grep -c 'CLONE_NEWNET' "$T/clones" 2>/dev/null)
	checke "--net deny: one user namespace and one network namespace made (early start used)" \
		'[ "$nuser" = 1 ] && [ "$nnet" = 1 ]' || { echo "# user $nuser net $nnet"; sed 's/^/# /' "$T/clones"; }
elif [ "$NOUSERNS" = 1 ] && command -v strace >/dev/null; then
	# Landlock + seccomp only: the child starts early and loads the
	# filter while moat plans; one child, one filter
	# (strace as root, outside the switch to nobody; inside the user
	# namespace without further ones)
	ST=(strace -f -qq -e trace=clone,clone3,seccomp -o "$T/clones")
	(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 TERM=dumb \
		${FAKE[@]+"${FAKE[@]}"} ${NSWRAP[@]+"${NSWRAP[@]}"} "${ST[@]}" \
		${RUNAS[@]+"${RUNAS[@]}"} "$MOAT" run --fallback warn --net deny -- true) >/dev/null 2>&1
	# (children with an exit signal: LeakSanitizer's own thread-like
	# clone at exit in sanitizer builds is not one)
	nclone=$(grep 'clone' "$T/clones" 2>/dev/null | grep -c 'SIGCHLD')
	nvfork=$(grep -c 'CLONE_VFORK' "$T/clones" 2>/dev/null)
	nfilter=$(grep -c 'SECCOMP_SET_MODE_FILTER' "$T/clones" 2>/dev/null)
	checke "--net deny without namespaces: one child started early, one filter loaded" \
		'[ "$nclone" = 1 ] && [ "$nvfork" = 0 ] && [ "$nfilter" = 1 ]' ||
		{ echo "# clone $nclone vfork $nvfork filter $nfilter"; sed 's/^/# /' "$T/clones"; }
elif [ "$MUST" = 1 ] && ! command -v strace >/dev/null; then
	check "strace is installed (scripts/deps.sh)" false
fi

# ---- filesystem: nothing outside the workspace changes ----
mr -- sh -c "echo x > '$OUT/new'" 2>/dev/null
check "creating a file outside fails" canary_ok
mr -- sh -c "echo x > '$OUT/canary'" 2>/dev/null
check "overwriting a file outside fails" canary_ok
mr -- sh -c "truncate -s 0 '$OUT/canary'; : > '$OUT/canary'" 2>/dev/null
check "truncating a file outside fails" canary_ok
mr -- sh -c "mv '$OUT/canary' '$WS/stolen'" 2>/dev/null
check "renaming a file from outside into the workspace fails" canary_ok
mr -- sh -c "ln '$OUT/canary' '$WS/hard' && echo x >> '$WS/hard'" 2>/dev/null
check "a hard link to an outside file cannot change it" canary_ok
rm -f "$WS/hard"
mr -- sh -c "ln -s '$OUT/canary' '$WS/soft'; echo x > '$WS/soft'; ln -s '$OUT' '$WS/dirlink'; echo y > '$WS/dirlink/new'" 2>/dev/null
check "writing through symlinks to outside fails" canary_ok
rm -f "$WS/soft" "$WS/dirlink"
mr -- sh -c "mkdir '$OUT/d'; rm -f '$OUT/canary'; chmod 777 '$OUT/canary'" 2>/dev/null
check "mkdir, rm and chmod outside fail" canary_ok
mr -- sh -c "echo y > '$WS/sub/made'" 2>/dev/null
check "writing inside the workspace works (seen from outside)" [ "$(cat "$WS/sub/made" 2>/dev/null)" = y ]
mr --profile readonly -- sh -c "echo z > '$WS/ro-attempt'" 2>/dev/null
check "readonly profile: the workspace is not writable" [ ! -e "$WS/ro-attempt" ]
# paths that do not exist (the peers' suites: codex ignores a missing
# writable root; a missing read-only path must not be created either)
out=$(mr --rw "$WS/no-such-dir" --ro /no-such-moat-ro -- sh -c 'echo ran' 2>"$T/err")
rc_=$?
check "missing --rw and --ro paths outside are skipped, and said" \
	cond '[ $rc_ = 0 ] && [ "$out" = ran ] && [ "$(grep -c "does not exist: skipped" "$T/err")" = 2 ]'
mkdir -p "$T/rwd"
[ -n "$AS" ] && chown "$AS" "$T/rwd"
mr --rw "$T/rwd" --ro "$T/rwd/nd/s.json" -- true 2>"$T/err"
rc_=$?
check "a missing --ro path inside another writable path refuses (125)" \
	cond '[ $rc_ = 125 ] && grep -q "nothing would keep the command from creating it" "$T/err"'
mr --rw "$T/rwd" --mask "$T/rwd/settings.json" -- sh -c "echo planted > '$T/rwd/settings.json'" 2>"$T/err"
rc_=$?
check "a missing --mask path inside another writable path refuses (125), nothing planted" \
	cond '[ $rc_ = 125 ] && [ ! -e "$T/rwd/settings.json" ]'
rmdir "$T/rwd"
# the caller's terminal: a command that makes its own process group the
# foreground one (setpgid, tcsetpgrp) gets it taken back when it ends (the
# caller's shell would lose its terminal); seen from the shell's side
if command -v script >/dev/null 2>&1; then
	cat >"$WS/steal.py" <<'EOF'
import os, signal
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
os.setpgid(0, 0)
os.tcsetpgrp(0, os.getpgrp())
print("took", os.tcgetpgrp(0) == os.getpgrp())
EOF
	pre=$(printf '%q ' env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" ${FAKE[@]+"${FAKE[@]}"} \
		${RUNAS[@]+"${RUNAS[@]}"} ${NSWRAP[@]+"${NSWRAP[@]}"} "$MOAT" run ${MODE[@]+"${MODE[@]}"})
	cat >"$T/fg.sh" <<EOF
cd '$WS' || exit 1
a=\$(ps -o tpgid= -p \$\$)
$pre -- python3 steal.py 2>&1 | grep -v '^moat run: warning'
b=\$(ps -o tpgid= -p \$\$)
echo "fg \$a \$b"
EOF
	out=$(sleep 5 | script -qec "bash $T/fg.sh" /dev/null 2>&1 | tr -d '\r')
	fgl=$(grep '^fg ' <<<"$out")
	check "a command that takes the terminal's foreground gives it back when it ends" \
		cond 'grep -q "took True" <<<"$out" && [ -n "$fgl" ] && [ "$(echo $fgl | cut -d" " -f2)" = "$(echo $fgl | cut -d" " -f3)" ]' ||
		echo "# $out"
	rm -f "$WS/steal.py"
	# ... but a shell that took its terminal back (^Z, bg) keeps it
	if [ ${#MODE[@]} = 0 ] && [ -z "$AS" ]; then
		out=$(cd "$WS" && timeout 30 python3 - "$MOAT" <<'EOF' 2>&1
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
def rd(t):
    out, end = b"", time.time() + t
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError as e:
                out += ("<%s>" % e).encode()
                break
    return out.decode(errors="replace")
rd(1)
os.write(fd, ("PS1='$ '; %s run -- sh -c 'sleep 2'\n" % sys.argv[1]).encode()); rd(1)
os.write(fd, b"\x1a"); rd(1)
os.write(fd, b"bg\n"); rd(3)
os.write(fd, b"echo ALIVE-$((6*7))\n")
print(rd(2))
EOF
)
		check "a shell that took the terminal back after ^Z and bg keeps it when the command ends" \
			grep -q "ALIVE-42" <<<"$out" || echo "# $out" | tail -3
	fi
fi
# a masked directory above the workspace (srt allows a read-denied
# ancestor with the working directory writable): masked around the way
# down, the workspace works, its siblings stay unreadable
mkdir -p "$WS/mb/base/proj" "$WS/mb/base/other"
echo mb-secret >"$WS/mb/base/other/s.txt"
echo mb-top >"$WS/mb/base/top.txt"
[ -n "$AS" ] && chown -R "$AS" "$WS/mb"
out=$(WS=$WS/mb/base/proj mr --mask "$WS/mb/base" -- sh -c 'echo w > made; cat made; cat ../other/s.txt ../top.txt' 2>&1)
check "a masked directory above the workspace: the workspace works, its siblings stay unreadable" \
	cond '[ "$(cat "$WS/mb/base/proj/made" 2>/dev/null)" = w ] && ! grep -q "mb-secret\|mb-top" <<<"$out"' ||
	echo "# $out"
rm -rf "$WS/mb"
# the private /tmp and /dev/shm share the memory limit (each at the whole
# limit, one call could pin twice its memory in RAM)
if [ ${#MODE[@]} = 0 ]; then
	out=$(mr --mem 64 -- sh -c 'dd if=/dev/zero of=/tmp/a bs=1M count=40 2>/dev/null && echo tmp40;
		dd if=/dev/zero of=/dev/shm/b bs=1M count=20 2>/dev/null || echo shm20-refused' 2>&1)
	check "/tmp and /dev/shm share the memory limit (--mem 64: 40 MB in /tmp, not 20 MB more in /dev/shm)" \
		cond 'grep -q tmp40 <<<"$out" && grep -q shm20-refused <<<"$out"' || echo "# $out"
fi
# a mask through a link the command could replace (srt's symlink
# replacement test): refused, and the link stays
mkdir -p "$WS/decoy" && echo '{}' >"$WS/decoy/settings.json" && ln -s decoy "$WS/link"
mr --mask "$WS/link/settings.json" -- sh -c 'rm link && mkdir link && echo planted > link/settings.json' 2>"$T/err"
rc_=$?
check "a --mask through a link inside the workspace refuses (125), the link stays" \
	cond '[ $rc_ = 125 ] && [ -L "$WS/link" ] && grep -q "symbolic link" "$T/err"'
rm -rf "$WS/decoy" "$WS/link"
if [ ${#MODE[@]} = 0 ]; then
	mr --ro "$WS/nd/s.json" -- sh -c 'mkdir -p nd; echo x > nd/s.json' 2>/dev/null
	check "a missing --ro path inside the workspace cannot be created (seen from outside)" \
		[ ! -e "$WS/nd/s.json" ]
	rm -rf "$WS/nd"
	mr --mask "$WS/nd/settings.json" -- sh -c 'mkdir -p nd; echo hooks > nd/settings.json' 2>/dev/null
	check "a missing --mask path inside the workspace cannot be created (seen from outside)" \
		[ ! -e "$WS/nd/settings.json" ]
	rm -rf "$WS/nd"
else
	# without a mount namespace nothing keeps such a path from being made:
	# refused, not promised
	mr --mask "$WS/top.json" --ro "$WS/ro.json" -- sh -c 'echo PLANT > top.json; echo PLANT > ro.json' 2>"$T/err"
	rc_=$?
	check "without a mount namespace a missing --mask/--ro path in the workspace refuses (125), nothing planted" \
		cond '[ $rc_ = 125 ] && [ ! -e "$WS/top.json" ] && [ ! -e "$WS/ro.json" ]'
	rm -f "$WS/top.json" "$WS/ro.json"
fi
mark=moat-it-$$-$RANDOM
mr -- sh -c "echo s > /tmp/$mark && cat /tmp/$mark" >"$T/o" 2>/dev/null
if [ "$NOUSERNS" = 1 ]; then
	check "without a mount namespace /tmp stays read-only" [ ! -e "/tmp/$mark" ]
	out=$(mr -- sh -c 'echo s > "$TMPDIR/f" && cat "$TMPDIR/f" && echo "$TMPDIR"' 2>/dev/null)
	check "... and the command gets a scratch TMPDIR" [ "$(head -1 <<<"$out")" = s ]
	scratch=$(tail -1 <<<"$out")
	check "... removed afterwards ($scratch)" cond '[ -n "$scratch" ] && [ ! -e "$scratch" ]'
else
	check "/tmp is private: scratch files work and do not land on the host" cond '[ "$(cat "$T/o")" = s ] && [ ! -e "/tmp/$mark" ]'
	mr -- sh -c "echo s > /dev/shm/$mark" 2>/dev/null
	check "/dev/shm is private" [ ! -e "/dev/shm/$mark" ]
fi
out=$(mr -- sh -c 'cat /dev/vda /dev/sda /dev/nvme0n1 /dev/mem 2>/dev/null | head -c 16 | wc -c')
check "raw disks and /dev/mem are unreadable" [ "$out" = 0 ]
python3 -c 'import pty, os, time; m, s = pty.openpty(); print(os.ttyname(s), flush=True); time.sleep(60)' >"$T/pty" &
PTY_PID=$!
for _ in $(seq 200); do [ -s "$T/pty" ] && break; sleep 0.05; done
ptyname=$(cat "$T/pty")
out=$(mr -- sh -c "echo injected > $ptyname && echo wrote; cat $ptyname & sleep 0.2; kill \$! 2>/dev/null" 2>/dev/null)
check "another terminal of the user ($ptyname) is unreachable" cond '[ -n "$ptyname" ] && ! grep -q wrote <<<"$out"'
kill $PTY_PID 2>/dev/null
out=$(mr -- python3 -c 'import pty, os; m, s = pty.openpty(); os.write(s, b"x\n"); print(os.read(m, 8))' 2>&1)
if [ "$NOUSERNS" = 1 ]; then
	na "new pseudo-terminals need a devpts instance of their own (mount namespace)"
else
	check "the command can open pseudo-terminals of its own" [ "$out" = "b'x\r\n'" ] || echo "# $out"
fi

# ---- secrets ----
if [ "$NOUSERNS" = 1 ]; then
	# no mount namespace: Landlock leaves the masked paths out of its
	# rules, the workspace's too (carved around them)
	echo "API_KEY=env-SECRET5" >"$WS/.env"
	echo "nested-SECRET6" >"$WS/sub/.env"
	echo "plain" >"$WS/sub/plain.txt"
	mkdir -p "$WS/clean"
	[ -n "$AS" ] && chown -R "$AS" "$WS/.env" "$WS/sub" "$WS/clean"
	out=$(mr -- sh -c "cat ~/.ssh/id_rsa ~/.aws/credentials ~/.config/gcloud/token ~/server.pem" 2>&1)
	check "secrets outside the workspace are unreadable (Landlock carve)" \
		bash -c '! grep -q SECRET <<<"$1"' _ "$out"
	out=$(mr -- sh -c 'cat .env sub/.env; cat readme.txt sub/plain.txt' 2>&1)
	check "secrets inside the workspace are unreadable, their neighbours readable (carve)" \
		cond '! grep -q SECRET <<<"$out" && grep -q hello <<<"$out" && grep -q plain <<<"$out"' || echo "# $out"
	mr -- sh -c 'echo more >> sub/plain.txt; echo made > clean/new.txt' 2>/dev/null
	check "... a neighbour file stays writable, a directory without one takes new files" \
		cond 'grep -q more "$WS/sub/plain.txt" && [ "$(cat "$WS/clean/new.txt" 2>/dev/null)" = made ]'
	out=$(m --fallback warn -- sh -c 'echo x > sub/new.txt' 2>&1)
	check "... a directory holding one takes no new file, and moat says which" \
		cond '[ ! -e "$WS/sub/new.txt" ] && grep -q "nothing new can be created directly in these directories.*$WS/sub" <<<"$out"' || echo "# $out"
	mr -- sh -c 'rm -f .env; mv sub/.env sub/x; ln sub/.env clean/l; echo pwned > .env' 2>/dev/null
	check "... a masked file cannot be removed, moved, linked or replaced" \
		cond 'grep -q SECRET5 "$WS/.env" && grep -q SECRET6 "$WS/sub/.env" && [ ! -e "$WS/sub/x" ] && [ ! -e "$WS/clean/l" ]'
	out=$(m --fallback warn -- true 2>&1)
	check "... and they are no gap" bash -c '! grep -q "stay readable\|not enforced: secrets" <<<"$1"' _ "$out"
	out=$(mr -- sh -c 'ls / >/dev/null && ls ~ >/dev/null && ls sub >/dev/null && echo listed' 2>&1)
	check "directories around carved secrets stay listable" [ "$out" = listed ]
	rm -rf "$WS/.env" "$WS/sub/.env" "$WS/sub/plain.txt" "$WS/clean"
else
	out=$(mr -- sh -c "cat ~/.ssh/id_rsa ~/.aws/credentials ~/.config/gcloud/token ~/server.pem .env sub/.env; ls -la ~/.ssh ~/.aws" 2>&1)
	check "masked secrets are unreadable (ssh, aws, gcloud, *.pem, .env, nested .env)" \
		bash -c '! grep -q SECRET <<<"$1"' _ "$out"
	out=$(mr -- sh -c 'cat .env' 2>&1)
	check "reading a masked file fails with an error" grep -qi "denied\|not permitted" <<<"$out"
	echo "TEMPLATE_KEY=" >"$WS/.env.example"
	echo "LOCAL-SECRET7" >"$WS/.env.local"
	[ -n "$AS" ] && chown "$AS" "$WS/.env.example" "$WS/.env.local"
	out=$(mr -- sh -c 'cp .env.example made.env && cat made.env; cat .env.local' 2>&1)
	check "an environment file's template is readable (cp .env.example works), .env.local stays masked" \
		cond 'grep -q TEMPLATE_KEY <<<"$out" && ! grep -q SECRET7 <<<"$out"' || echo "# $out"
	rm -f "$WS/.env.example" "$WS/.env.local" "$WS/made.env"
	check "masks leave the files intact outside" grep -q SECRET5 "$WS/.env"
	mr -- sh -c 'rm -f .env; echo pwned > .env' 2>/dev/null
	check "a masked file cannot be replaced" grep -q SECRET5 "$WS/.env"
fi

# ---- the home directory: copy-on-write (writes vanish), secrets still masked ----
if [ "$NOUSERNS" = 1 ]; then
	na "a copy-on-write home needs a mount namespace"
else
	H2=$(mktemp -d /var/tmp/moat-it-home-XXXXXX)
	mkdir -p "$H2/.ssh" "$H2/proj" "$H2/.npm"
	echo "h2-SECRET8" >"$H2/.ssh/id_ed25519"
	echo "# rc" >"$H2/.bashrc"
	[ "$AS" = nobody ] && chown -R nobody:nogroup "$H2"
	out=$(cd "$H2/proj" && env -i PATH=/usr/bin:/bin HOME="$H2" ${RUNAS[@]+"${RUNAS[@]}"} "$MOAT" run -- sh -c \
		'echo evil >> ~/.bashrc; echo c > ~/.npm/cached && cat ~/.npm/cached; echo w > ~/proj/kept; cat ~/.ssh/id_ed25519' 2>&1)
	check "home: tools can write their caches (copy-on-write)" grep -q "^c$" <<<"$out"
	check "home: the writes vanish afterwards (~/.bashrc unchanged, no cache file)" cond '[ "$(cat "$H2/.bashrc")" = "# rc" ] && [ ! -e "$H2/.npm/cached" ]'
	check "home: the workspace inside it keeps its writes" [ "$(cat "$H2/proj/kept" 2>/dev/null)" = w ]
	check "home: secrets stay masked through the copy-on-write view" bash -c '! grep -q SECRET8 <<<"$1"' _ "$out"
	# HOME a symbolic link to the real home (a /home -> /data/home system):
	# the workspace under the real path keeps its writes, the home's vanish
	# (the link under /tmp, which is private inside: HOME must still lead
	# to the home there)
	hl=/tmp/moat-it-homelink.$$
	ln -s "$H2" "$hl"
	rm -f "$H2/proj/kept"
	out=$(cd "$H2/proj" && env -i PATH=/usr/bin:/bin HOME="$hl" ${RUNAS[@]+"${RUNAS[@]}"} "$MOAT" run -- sh -c \
		'echo evil >> ~/.bashrc; echo w > kept; cat ~/.ssh/id_ed25519; test -f "$HOME/.bashrc" && echo home-there' 2>&1)
	check "home through a symlink: the workspace keeps its writes, the home's vanish" \
		cond '[ "$(cat "$H2/proj/kept" 2>/dev/null)" = w ] && [ "$(cat "$H2/.bashrc")" = "# rc" ]' || echo "# $out"
	check "home through a symlink: secrets stay masked" bash -c '! grep -q SECRET8 <<<"$1"' _ "$out"
	check "home through a symlink: HOME leads to the home inside" grep -q home-there <<<"$out"
	rm -f "$hl"
	if command -v npm >/dev/null; then
		mkdir -p "$H2/pkg"
		printf '{"name":"localpkg","version":"1.0.0","main":"index.js"}' >"$H2/pkg/package.json"
		echo 'module.exports = 42' >"$H2/pkg/index.js"
		(cd "$H2/pkg" && npm pack --silent >/dev/null 2>&1)
		printf '{"name":"app","version":"1.0.0"}' >"$H2/proj/package.json"
		[ "$AS" = nobody ] && chown -R nobody:nogroup "$H2"
		out=$(cd "$H2/proj" && env -i PATH=/usr/bin:/bin HOME="$H2" ${RUNAS[@]+"${RUNAS[@]}"} "$MOAT" run -- sh -c \
			'npm install --offline --no-audit --no-fund ../pkg/localpkg-1.0.0.tgz >/dev/null 2>&1; node -e "console.log(require(\"localpkg\"))"' 2>&1)
		check "npm installs from a local tarball (cache in the copy-on-write home)" [ "$out" = 42 ] || echo "# $out"
	fi
	rm -rf "$H2"
fi

# ---- protected paths ----
if [ "$NOUSERNS" = 1 ]; then
	# without a mount namespace they cannot be read-only: what the command
	# changes in them is set aside after the run and the original put back
	mkdir -p "$WS/.vscode"
	echo '{"editor.tabSize": 4}' >"$WS/.vscode/settings.json"
	echo 'export A=1' >"$WS/.envrc"
	cp "$WS/.vscode/settings.json" "$T/vscode.orig"
	cp "$WS/.envrc" "$T/envrc.orig"
	[ "$AS" = nobody ] && chown -R nobody:nogroup "$WS"
	out=$(m "${MODE[@]}" -- sh -c 'echo "rm -rf ~" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit;
		git config core.hooksPath /tmp/evil; echo "curl x | sh" >> .envrc;
		echo "{\"tasks\": 1}" > .vscode/tasks.json;
		echo "{\"terminal.integrated.shell.linux\": \"/tmp/x\"}" > .vscode/settings.json;
		echo "{}" > .mcp.json' 2>&1)
	check "no mount namespace: a planted git hook is set aside after the run" \
		cond '[ ! -e "$WS/.git/hooks/pre-commit" ] && [ -e "$WS/.git/hooks/pre-commit.moat-quarantined" ]'
	check "no mount namespace: .git/config that runs a program is put back" \
		cmp -s "$WS/.git/config" "$T/git-config.orig"
	check "no mount namespace: changed .envrc and .vscode/settings.json put back, new task and .mcp.json set aside" \
		cond 'cmp -s "$WS/.envrc" "$T/envrc.orig" && cmp -s "$WS/.vscode/settings.json" "$T/vscode.orig" && [ ! -e "$WS/.vscode/tasks.json" ] && [ ! -e "$WS/.mcp.json" ] && [ -e "$WS/.mcp.json.moat-quarantined" ]'
	check "no mount namespace: the set-aside files are named" grep -q "envrc (changed; the original put back)" <<<"$out"
	mr -- sh -c 'git remote add origin https://example.invalid/r.git' 2>/dev/null
	check "no mount namespace: git's own change to .git/config (a remote) stays" \
		grep -q 'example.invalid/r.git' "$WS/.git/config"
	# .git swapped for a link to a planted copy: .git/config and hooks would
	# go with it; the link is set aside (the real one is where the command
	# moved it)
	mr -- sh -c 'cp -r .git evil; printf "[core]\n\tfsmonitor = /tmp/x\n" > evil/config;
		mv .git .git-real; ln -s evil .git' 2>/dev/null
	check "no mount namespace: a .git swapped for a link to a planted copy is set aside" \
		cond '[ ! -L "$WS/.git" ] && [ -L "$WS/.git.moat-quarantined" ]'
	rm -rf "$WS/.git.moat-quarantined" "$WS/evil"
	[ -d "$WS/.git-real" ] && mv "$WS/.git-real" "$WS/.git"
	mkdir -p "$WS/docs"
	echo orig >"$WS/docs/a.txt"
	[ "$AS" = nobody ] && chown -R nobody:nogroup "$WS/docs"
	mr --ro "$WS/docs" -- sh -c 'echo changed > docs/a.txt; echo new > docs/b.txt' 2>/dev/null
	check "no mount namespace: a --ro path inside the workspace is put back after the run" \
		cond '[ "$(cat "$WS/docs/a.txt")" = orig ] && [ ! -e "$WS/docs/b.txt" ]'
	rm -rf "$WS/docs"
	(cd "$WS" && git remote remove origin 2>/dev/null; git config --unset core.hooksPath 2>/dev/null)
	cp "$T/git-config.orig" "$WS/.git/config"
	rm -rf "$WS/.vscode" "$WS/.envrc"* "$WS/.mcp.json"* "$WS/.git/hooks/"*.moat-quarantined* "$WS/.git/hooks/pre-commit" \
		"$WS/.git/config.moat-quarantined"*
else
	mr -- sh -c 'echo "rm -rf ~" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit' 2>/dev/null
	check "a git hook cannot be planted" [ ! -e "$WS/.git/hooks/pre-commit" ]
	mr -- sh -c 'git config core.hooksPath /tmp/evil; echo "[core] fsmonitor = evil" >> .git/config' 2>/dev/null
	check ".git/config cannot be changed" cmp -s "$WS/.git/config" "$T/git-config.orig"
	mr -- sh -c 'mv .git .git-moved; mkdir -p .git/hooks' 2>/dev/null
	check ".git cannot be swapped for a planted copy" cond '[ -d "$WS/.git/objects" ] && [ ! -e "$WS/.git-moved" ]'
	# missing protected directories are empty read-only stand-ins for the run
	rm -rf "$WS/.vscode" "$WS/.claude"
	mr -- sh -c 'mkdir -p .vscode; echo "{}" > .vscode/tasks.json; mkdir -p .claude;
		echo "{\"hooks\": {}}" > .claude/settings.json' 2>/dev/null
	check "a missing .vscode cannot be created with a task in it" [ ! -e "$WS/.vscode/tasks.json" ]
	check "a missing .claude cannot be created with settings in it" \
		[ ! -e "$WS/.claude/settings.json" ]
	check "the empty stand-ins are gone after the run" cond '[ ! -e "$WS/.vscode" ] && [ ! -e "$WS/.claude" ]'
	# two runs at once: the one that made the stand-in ends first and leaves
	# it to the other (removing it would take the other's read-only mount
	# away, and let that command create the name)
	rm -f "$WS/go1" "$WS/go2"
	(mr -- timeout 20 sh -c 'while [ ! -e go1 ]; do sleep 0.05; done' >/dev/null 2>&1) &
	run1=$!
	for _ in $(seq 200); do [ -d "$WS/.vscode" ] && break; sleep 0.05; done
	(mr -- timeout 20 sh -c 'touch started2; while [ ! -e go2 ]; do sleep 0.05; done;
		mkdir -p .vscode/x; echo "{}" > .vscode/tasks.json' >/dev/null 2>&1) &
	run2=$!
	for _ in $(seq 200); do [ -e "$WS/started2" ] && break; sleep 0.05; done
	touch "$WS/go1"
	wait $run1
	touch "$WS/go2"
	wait $run2
	check "a run ending first does not remove a stand-in another run uses" cond '[ ! -e "$WS/.vscode/x" ] && [ ! -e "$WS/.vscode/tasks.json" ]'
	check "the last run removes it" [ ! -e "$WS/.vscode" ]
	rm -rf "$WS/go1" "$WS/go2" "$WS/started2" "$WS/.vscode"
	# a command that holds a flock on the workspace (once the stand-ins'
	# lock) while another run starts cannot make that run go on unlocked,
	# so a third run cannot remove the stand-in under it
	if command -v flock >/dev/null; then
		# (a run of the parent directory: its moat does not lock this
		# workspace, so its command can)
		(m --workspace "$(dirname "$WS")" -- timeout 20 sh -c 'flock -x "$1" sh -c "touch \"\$1/held\"; while [ ! -e \"\$1/go3\" ]; do sleep 0.05; done" sh "$1"' sh "$WS" >/dev/null 2>&1) &
		runc=$!
		for _ in $(seq 200); do [ -e "$WS/held" ] && break; sleep 0.05; done
		(mr -- timeout 20 sh -c 'touch started4; while [ ! -e go4 ]; do sleep 0.05; done;
			mkdir -p .vscode/x; echo "{}" > .vscode/tasks.json; touch wrote4;
			while [ ! -e go5 ]; do sleep 0.05; done' >/dev/null 2>&1) &
		runa=$!
		for _ in $(seq 200); do [ -e "$WS/started4" ] && break; sleep 0.05; done
		touch "$WS/go3"
		wait $runc
		mr -- true >/dev/null 2>&1
		touch "$WS/go4"
		for _ in $(seq 200); do [ -e "$WS/wrote4" ] && break; sleep 0.05; done
		# (seen while that run still runs: after it, the set-aside would hide it)
		check "a command holding a flock on the workspace cannot get a stand-in removed under another run" \
			cond '[ ! -e "$WS/.vscode/x" ] && [ ! -e "$WS/.vscode/tasks.json" ]'
		touch "$WS/go5"
		wait $runa
		rm -rf "$WS/held" "$WS/go3" "$WS/go4" "$WS/go5" "$WS/started4" "$WS/wrote4" "$WS/.vscode" \
			"$WS"/.vscode.moat-quarantined*
	fi
	mv "$WS/.git/hooks" "$T/hooks.saved"
	mr -- sh -c 'mkdir -p .git/hooks; echo "rm -rf ~" > .git/hooks/pre-commit' 2>/dev/null
	check "a missing .git/hooks cannot be created with a hook in it" cond '[ ! -e "$WS/.git/hooks/pre-commit" ] && [ ! -e "$WS/.git/hooks" ]'
	mv "$T/hooks.saved" "$WS/.git/hooks"
	# a planted .git -> elsewhere must not make moat create a directory there
	mkdir -p "$T/elsewhere"
	mv "$WS/.git" "$T/git.saved"
	ln -s "$T/elsewhere" "$WS/.git"
	mr -- true 2>/dev/null
	check "no stand-in is created through a symlinked .git" [ ! -e "$T/elsewhere/hooks" ]
	rm "$WS/.git"
	mv "$T/git.saved" "$WS/.git"
	# a submodule config written inside that makes git run a program is set
	# aside after the run; one as git writes it is kept
	mr -- sh -c 'mkdir -p .git/modules/evil .git/modules/fine; printf "[core]\n\tfsmonitor = \"touch pwned\"\n" > .git/modules/evil/config;
		printf "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = /x\n" > .git/modules/fine/config' \
		2>/dev/null
	check "a submodule config with core.fsmonitor written inside is set aside" cond '[ ! -e "$WS/.git/modules/evil/config" ] && [ -e "$WS/.git/modules/evil/config.moat-quarantined" ]'
	check "a submodule config as git writes it is kept" [ -e "$WS/.git/modules/fine/config" ]
	rm -rf "$WS/.git/modules"
	# core.worktree: a submodule's as git writes it (into the workspace)
	# stays; one sending git's checkouts outside the workspace, or through
	# a link, is set aside
	mkdir -p "$T/wtout"
	mr -- sh -c 'mkdir -p lib .git/modules/lib .git/modules/out .git/modules/lnk; ln -s '"$T/wtout"' lnk
		printf "[core]
	bare = false
	worktree = ../../../lib
" > .git/modules/lib/config
		printf "[core]
	bare = false
	worktree = '"$T/wtout"'
" > .git/modules/out/config
		printf "[core]
	bare = false
	worktree = ../../../lnk
" > .git/modules/lnk/config' 2>/dev/null
	check "a submodule config with core.worktree inside the workspace is kept" [ -e "$WS/.git/modules/lib/config" ]
	check "a submodule config with core.worktree outside the workspace is set aside" \
		cond '[ ! -e "$WS/.git/modules/out/config" ] && [ -e "$WS/.git/modules/out/config.moat-quarantined" ]'
	check "a submodule config with core.worktree through a link is set aside" \
		cond '[ ! -e "$WS/.git/modules/lnk/config" ] && [ -e "$WS/.git/modules/lnk/config.moat-quarantined" ]'
	rm -rf "$WS/.git/modules" "$WS/lib" "$WS/lnk" "$T/wtout"
	# files cannot get an empty stand-in: one created inside is set aside
	# after the run (renamed, nothing lost), never over an earlier one
	mr -- sh -c 'echo "{\"mcpServers\": 1}" > .mcp.json; echo "rm -rf ~" > .envrc' 2>"$T/err"
	check "a missing .mcp.json created inside is set aside after the run" cond '[ ! -e "$WS/.mcp.json" ] && grep -q mcpServers "$WS/.mcp.json.moat-quarantined"'
	check "a missing .envrc created inside is set aside after the run" cond '[ ! -e "$WS/.envrc" ] && [ -e "$WS/.envrc.moat-quarantined" ]'
	check "the set-aside files are named in a warning" grep -q "moat-quarantined.*\.mcp\.json" "$T/err"
	mr -- sh -c 'echo second > .mcp.json' 2>/dev/null
	check "a second one does not replace the first" cond 'grep -q mcpServers "$WS/.mcp.json.moat-quarantined" && grep -q second "$WS/.mcp.json.moat-quarantined.2"'
	rm -f "$WS"/.mcp.json* "$WS"/.envrc*
	# more code that runs later: a hook manager's local file (git-ignored,
	# runs at the next commit), an editor's MCP servers, a dev container's
	# host command, npm's node-options
	mr -- sh -c 'echo "pre-commit: {commands: {x: {run: id}}}" > lefthook-local.yml; mkdir -p .zed .devcontainer; echo "{\"context_servers\": {}}" > .zed/settings.json; echo "{\"initializeCommand\": \"id\"}" > .devcontainer/devcontainer.json; echo "node-options=--require ./x.js" > .npmrc' 2>"$T/err"
	check "a lefthook-local.yml created inside is set aside" cond '[ ! -e "$WS/lefthook-local.yml" ] && grep -q commands "$WS/lefthook-local.yml.moat-quarantined"'
	check "a .zed and a .devcontainer created inside are set aside" cond '[ ! -e "$WS/.zed" ] && [ ! -e "$WS/.devcontainer" ] && [ -e "$WS/.zed.moat-quarantined/settings.json" ] && [ -e "$WS/.devcontainer.moat-quarantined/devcontainer.json" ]'
	check "a .npmrc created inside is set aside" cond '[ ! -e "$WS/.npmrc" ] && grep -q node-options "$WS/.npmrc.moat-quarantined"'
	rm -rf "$WS"/lefthook-local.yml* "$WS"/.zed* "$WS"/.devcontainer* "$WS"/.npmrc*
	echo "registry=https://r" > "$WS/.npmrc"
	mr -- sh -c 'echo "node-options=--require ./x.js" >> .npmrc' 2>/dev/null
	check "an existing .npmrc stays read-only inside" cond '[ "$(cat "$WS/.npmrc")" = "registry=https://r" ]'
	rm -f "$WS/.npmrc"
	# protected names that are symlinks (kept in a dotfiles directory): the
	# run starts, the target is read-only through the link and by its own
	# name, the link is pinned (bound onto itself), and a dangling one whose
	# target the command creates is set aside
	mkdir -p "$WS/dots/vscode"
	echo '{}' >"$WS/dots/vscode/tasks.json"
	ln -s dots/vscode "$WS/.vscode"
	ln -s dots/mcp.json "$WS/.mcp.json"
	[ "$AS" = nobody ] && chown -h -R nobody:nogroup "$WS/dots" "$WS/.vscode" "$WS/.mcp.json"
	out=$(mr -- sh -c 'echo started; echo evil > .vscode/tasks.json; echo evil > dots/vscode/tasks.json' 2>&1)
	check "a protected name that is a symlink does not stop the run" grep -q started <<<"$out" || echo "# $out"
	check "its target is read-only, through the link and by name" \
		[ "$(cat "$WS/dots/vscode/tasks.json")" = '{}' ]
	mr -- sh -c 'rm .vscode && mkdir .vscode && echo evil > .vscode/tasks.json' 2>/dev/null
	rc=$?
	check "a protected link cannot be removed or replaced inside" \
		cond '[ $rc != 0 ] && [ "$(readlink "$WS/.vscode")" = dots/vscode ] && [ ! -e "$WS/.vscode.moat-quarantined" ]'
	mr -- sh -c 'mv .vscode elsewhere' 2>/dev/null
	check "... nor renamed" cond '[ "$(readlink "$WS/.vscode")" = dots/vscode ] && [ ! -e "$WS/elsewhere" ]'
	mr -- sh -c 'echo "{\"mcpServers\": 1}" > .mcp.json' 2>/dev/null
	check "a write through a dangling protected link fails and creates nothing" \
		cond '[ ! -e "$WS/dots/mcp.json" ] && [ "$(readlink "$WS/.mcp.json")" = dots/mcp.json ]'
	mr -- sh -c 'echo "{\"mcpServers\": 1}" > dots/mcp.json' 2>/dev/null
	check "a dangling protected link whose target is created another way is set aside" cond '[ ! -e "$WS/.mcp.json" ] && [ -L "$WS/.mcp.json.moat-quarantined" ]'
	rm -rf "$WS/dots" "$WS"/.vscode* "$WS"/.mcp.json*
	# a workspace that is not a repository: no stand-ins, missing protected
	# directories created inside are set aside; git init inside keeps git's
	# own config and sample hooks, a hook or fsmonitor written is set aside
	NW=$T/plain
	mkdir -p "$NW"
	[ "$AS" = nobody ] && chown nobody:nogroup "$NW"
	(cd "$NW" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 TERM=dumb \
		${FAKE[@]+"${FAKE[@]}"} ${RUNAS[@]+"${RUNAS[@]}"} ${NSWRAP[@]+"${NSWRAP[@]}"} \
		"$MOAT" run --workspace "$NW" -- sh -c 'mkdir -p .vscode .moat; echo "{}" > .vscode/tasks.json;
		echo "profile: x" > .moat/config.json; git init -q . && echo "rm -rf ~" > .git/hooks/pre-commit &&
		chmod +x .git/hooks/pre-commit' >/dev/null 2>&1)
	check "outside a repository, a .vscode created inside is set aside" cond '[ ! -e "$NW/.vscode" ] && [ -e "$NW/.vscode.moat-quarantined/tasks.json" ]'
	check "outside a repository, a .moat created inside is set aside" cond '[ ! -e "$NW/.moat" ] && [ -e "$NW/.moat.moat-quarantined" ]'
	check "git init inside keeps git's own config" [ -f "$NW/.git/config" ]
	check "a hook written into a new repository is set aside" cond '[ ! -e "$NW/.git/hooks/pre-commit" ] && [ -e "$NW/.git/hooks/pre-commit.moat-quarantined" ]'
	rm -rf "$NW"/.git "$NW"/.vscode* "$NW"/.moat*
	(cd "$NW" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 TERM=dumb \
		${FAKE[@]+"${FAKE[@]}"} ${RUNAS[@]+"${RUNAS[@]}"} ${NSWRAP[@]+"${NSWRAP[@]}"} \
		"$MOAT" run --workspace "$NW" -- sh -c 'git init -q . && git config core.fsmonitor "touch pwned"' \
		>/dev/null 2>&1)
	check "a new repository's config with core.fsmonitor is set aside" cond '[ ! -e "$NW/.git/config" ] && grep -q fsmonitor "$NW/.git/config.moat-quarantined"'
	rm -rf "$NW"
fi

# ---- honest work ----
out=$(mr -- sh -c 'git status --short >/dev/null && echo one > a.txt && git add a.txt && git commit -qm "from inside" && git log --oneline | wc -l && git diff HEAD~1 --stat | tail -1' 2>&1)
check "git add, commit, log, diff work (user identity readable)" grep -q "^2$" <<<"$out" || echo "# $out"
cat >"$WS/hello.c" <<'EOF'
#include <stdio.h>
int main(void) { puts("built"); return 0; }
EOF
printf 'all: hello\nhello: hello.c\n\tcc -O1 -o hello hello.c\n' >"$WS/Makefile"
[ "$AS" = nobody ] && chown nobody:nogroup "$WS/hello.c" "$WS/Makefile"
out=$(mr -- sh -c 'make -s -j4 && ./hello' 2>&1)
check "gcc and make -j build and run" [ "$out" = built ] || echo "# $out"
out=$(mr -- python3 -c 'import json, tempfile, os; f = tempfile.NamedTemporaryFile(delete=False); f.write(b"x"); f.close(); print(json.dumps({"ok": os.path.getsize(f.name)}))' 2>&1)
check "python3 runs and uses tempfile" [ "$out" = '{"ok": 1}' ] || echo "# $out"
out=$(mr -- sh -c 'seq 1 100 | sort -rn | head -1 | tr 0 x; (sleep 0.1; echo bg) & wait; echo $(echo sub)' 2>&1)
check "pipelines, background jobs with wait, subshells" [ "$out" = "$(printf '1xx\nbg\nsub')" ] || echo "# $out"
out=$(mr -- sh -c 'sleep 30 & p=$!; ps -o pid= -p $p >/dev/null && kill $p && wait $p; echo $?' 2>/dev/null)
check "ps and kill of the command's own children" [ "$out" = 143 ] || echo "# $out"
if command -v node >/dev/null; then
	out=$(mr -- node -e 'console.log(require("os").tmpdir() && 42)' 2>&1)
	check "node runs" [ "$out" = 42 ] || echo "# $out"
fi
if command -v java >/dev/null; then
	mr -- java -version >/dev/null 2>&1
	check "java starts under the memory limit (no RLIMIT_AS)" [ $? = 0 ]
fi
out=$(mr -- sh -c 'TZ=UTC date +%Z; LANG=C.UTF-8 printf "%s" "é"' 2>&1)
check "locale and timezone" [ "$out" = "$(printf 'UTC\né')" ] || echo "# $out"
# moat moves itself to another CPU while the child started early runs; the
# child's CPU set (the command's) is never touched
out=$(mr -- grep Cpus_allowed_list /proc/self/status 2>&1)
check "the command may use every CPU moat may" [ "$out" = "$(grep Cpus_allowed_list /proc/self/status)" ] || echo "# $out"


# ---- environment ----
EXTRA_ENV=(OPENAI_API_KEY=sk-test-0123456789abcdefghijkl GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123 DATABASE_URL=postgres://u:pw@h/db HARMLESS=1)
out=$(mr --env full -- env 2>&1)
check "secret-looking variables are dropped even with --env full" \
	bash -c '! grep -q "OPENAI_API_KEY\|GITHUB_TOKEN\|DATABASE_URL" <<<"$1" && grep -q HARMLESS <<<"$1"' _ "$out"
out=$(mr -- env 2>&1)
check "restricted environment passes only the safe variables" \
	bash -c '! grep -q HARMLESS <<<"$1" && grep -q "^PATH=" <<<"$1" && grep -q "^HOME=" <<<"$1"' _ "$out"
out=$(mr --env OPENAI_API_KEY -- env 2>&1)
check "a variable named with --env passes" grep -q "^OPENAI_API_KEY=" <<<"$out"
out=$(mr --env none -- env 2>&1 | grep -v '^TMPDIR=.*/moat-tmp-')
check "--env none passes nothing (but a scratch TMPDIR)" [ -z "$out" ]
EXTRA_ENV=()

# ---- descriptors ----
exec 7>"$T/leak" 8<"$OUT/canary"
out=$(mr -- python3 -c 'import os; print(sorted(int(x) for x in os.listdir("/proc/self/fd")))' 2>&1)
exec 7>&- 8<&-
check "inherited descriptors are closed (only 0, 1, 2 reach the command)" [ "$out" = "[0, 1, 2, 3]" ] || echo "# $out"

# ---- network ----
PORT=$((20000 + RANDOM % 20000))
python3 - "$PORT" "$T/conns" <<'EOF' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
while True:
    c, a = s.accept()
    with open(sys.argv[2], "a") as f: f.write("conn\n")
    c.close()
EOF
LISTENER_PID=$!
for _ in $(seq 200); do (echo >/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.05; done
sleep 0.2 # let the readiness probe's connection be logged before truncating
: >"$T/conns"
connect="import socket,sys
try:
    s=socket.socket(); s.settimeout(2)
    s.connect(('127.0.0.1',$PORT)); print('connected')
except Exception as e:
    print('failed', e)"
out=$(mr -- python3 -c "$connect" 2>&1)
check "network allowed (default profile): the listener is reachable" [ "${out%% *}" = connected ]
for _ in $(seq 200); do [ -s "$T/conns" ] && break; sleep 0.05; done
check "... and the listener saw it" [ "$(wc -l <"$T/conns")" -ge 1 ]
: >"$T/conns"
out=$(mr --profile workspace-write-no-network -- python3 -c "$connect" 2>&1)
check "network denied: a loopback listener outside is unreachable" [ "${out%% *}" = failed ] || echo "# $out"
out=$(mr --net deny -- python3 -c "import socket
try:
    s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b'x', ('127.0.0.1', $PORT)); print('sent')
except OSError as e:
    print('failed', e)" 2>&1)
check "network denied: UDP to the host fails or goes nowhere" [ "$(wc -l <"$T/conns")" = 0 ]
# a socket of the host's network handed in on stdio would reach it
out=$(cd "$WS" && python3 -c "import socket, subprocess, sys
s = socket.socket()
r = subprocess.run(sys.argv[1:], stdout=s.fileno(), stderr=subprocess.DEVNULL)
print(r.returncode)" env -i PATH=/usr/bin:/bin HOME="$H" ${FAKE[@]+"${FAKE[@]}"} ${RUNAS[@]+"${RUNAS[@]}"} ${NSWRAP[@]+"${NSWRAP[@]}"} "$MOAT" run ${MODE[@]+"${MODE[@]}"} --net deny -- true 2>&1)
check "network denied: an IP socket handed in on stdout refuses (125)" [ "$out" = 125 ] || echo "# $out"
if [ ${#MODE[@]} = 0 ]; then
	# its own network namespace: a test server on the private loopback works
	out=$(mr --net deny -- python3 -c "import socket, threading
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)
def srv():
    c, _ = s.accept(); c.sendall(b'served'); c.close()
threading.Thread(target=srv).start()
print(socket.create_connection(('127.0.0.1', s.getsockname()[1]), 2).recv(9).decode())" 2>&1)
	check "network denied: a server and a client on the sandbox's own loopback work" [ "$out" = served ] || echo "# $out"
	check "... and nothing reached the host's listener" [ "$(wc -l <"$T/conns")" = 0 ]
fi
if [ "$LANDLOCK" -ge 4 ]; then
	out=$(mr --net 443 -- python3 -c "$connect" 2>&1)
	check "--net 443: other ports are unreachable" [ "${out%% *}" = failed ]
	out=$(mr --net "$PORT" -- python3 -c "$connect" 2>&1)
	check "--net PORT: the listed port is reachable" [ "${out%% *}" = connected ]
else
	skip "per-port rules need Landlock ABI 4"
fi
check "the listener saw only the allowed connection" [ "$(grep -c conn "$T/conns")" -le 1 ]

# abstract unix socket outside
ABS=moat-it-abs-$$
python3 - "$ABS" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind("\0" + sys.argv[1]); s.listen(4)
while True:
    c, _ = s.accept(); c.close()
EOF
ABS_PID=$!
absconn="import socket
try:
    s=socket.socket(socket.AF_UNIX)
    s.connect('\0$ABS'); print('connected')
except Exception as e:
    print('failed', e)"
# (the listener binds once its python has started: up to 10 s under load)
for _ in $(seq 100); do
	out=$(python3 -c "$absconn")
	[ "${out%% *}" = connected ] && break
	sleep 0.1
done
check "(the abstract socket listener works from outside)" [ "${out%% *}" = connected ]
out=$(mr -- python3 -c "$absconn" 2>&1)
if [ "$LANDLOCK" -ge 6 ] || [ "$NOUSERNS" != 1 ]; then
	if [ "$LANDLOCK" -ge 6 ]; then
		check "abstract unix sockets outside are unreachable (network allowed)" [ "${out%% *}" = failed ]
	fi
	out=$(mr --net deny -- python3 -c "$absconn" 2>&1)
	check "abstract unix sockets outside are unreachable (network denied)" [ "${out%% *}" = failed ]
else
	skip "abstract sockets: needs Landlock ABI 6 or namespaces"
fi
# a host unix socket under /run and one under /tmp
python3 - "/run/moat-it-$$.sock" "$T/unix.sock" <<'EOF' &
import socket, sys, os, select
ss = []
for p in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX); s.bind(p); os.chmod(p, 0o777); s.listen(4); ss.append(s)
    except OSError:
        pass
while True:
    r, _, _ = select.select(ss, [], [])
    for s in r:
        c, _ = s.accept(); c.close()
EOF
SOCK_PID=$!
for _ in $(seq 200); do [ -S "$T/unix.sock" ] && break; sleep 0.05; done
unixconn="import socket,sys
for p in sys.argv[1:]:
    s=socket.socket(socket.AF_UNIX)
    try:
        s.connect(p); print('connected', p)
    except Exception as e:
        print('failed', p)"
if [ "$NOUSERNS" = 1 ]; then
	na "host unix sockets need a mount namespace"
else
	out=$(mr -- python3 -c "$unixconn" "/run/moat-it-$$.sock" 2>&1)
	check "a host unix socket under /run is unreachable" grep -q "^failed" <<<"$out"
	out=$(mr --allow-socket "/run/moat-it-$$.sock" -- python3 -c "$unixconn" "/run/moat-it-$$.sock" 2>&1)
	if [ -S "/run/moat-it-$$.sock" ] && [ -z "$AS" ]; then
		check "--allow-socket keeps a named one reachable" grep -q "^connected" <<<"$out" || echo "# $out"
		out=$(mr --net deny --allow-socket "/run/moat-it-$$.sock" -- python3 -c "$unixconn" "/run/moat-it-$$.sock" 2>&1)
		check "... also with the network denied" grep -q "^connected" <<<"$out" || echo "# $out"
	fi
fi
# a host socket outside /run and /tmp as the sandbox sees them (the test's
# home lives under /tmp and stays visible; it could be ~/.docker/run or
# /var/lib/...): with the network denied no unix socket can be created, in
# every mode
python3 - "$H/agent-$$.sock" <<'EOF' &
import socket, sys, os
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(4)
while True:
    c, _ = s.accept(); c.close()
EOF
HSOCK_PID=$!
for _ in $(seq 200); do [ -S "$H/agent-$$.sock" ] && break; sleep 0.05; done
out=$(mr --net deny -- python3 -c 'import socket, sys
try:
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("connected")
except OSError as e:
    print("failed", e.errno)' "$H/agent-$$.sock" 2>&1)
check "network denied: a host unix socket anywhere is unreachable (no unix sockets)" \
	[ "$out" = "failed 1" ] || echo "# $out"
out=$(mr --net deny -- python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"x"); print(b.recv(1).decode())' 2>&1)
check "... while socketpair still works" [ "$out" = x ] || echo "# $out"
kill "$HSOCK_PID" 2>/dev/null
rm -f "$H/agent-$$.sock"

# ---- processes ----
sleep 301.5 &
HOSTPROC_PID=$!
out=$(mr -- sh -c 'ps ax -o args | grep -c "sleep 30[1]"' 2>&1)
if [ "$NOUSERNS" = 1 ]; then
	na "host processes are visible without a PID namespace"
else
	check "host processes are invisible" [ "$out" = 0 ] || echo "# $out"
fi
mr -- sh -c "kill -TERM $HOSTPROC_PID" 2>/dev/null
check "host processes cannot be signalled" kill -0 "$HOSTPROC_PID"
cat >"$T/sys.py" <<'EOF'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) for x in a])
    return 0 if r >= 0 else ctypes.get_errno()
res = {}
res["ptrace"] = sc(101, 0, 0, 0, 0)              # PTRACE_TRACEME
res["ptrace_attach"] = sc(101, 16, int(sys.argv[1]), 0, 0)
res["process_vm_readv"] = sc(310, int(sys.argv[1]), 0, 0, 0, 0, 0)
res["bpf"] = sc(321, 0, 0, 0)
res["perf_event_open"] = sc(298, 0, 0, -1, -1, 0)
res["userfaultfd"] = sc(323, 0)
res["io_uring_setup"] = sc(425, 8, 0)
res["keyctl"] = sc(250, 0, 0, 0, 0)
res["add_key"] = sc(248, 0, 0, 0, 0, 0)
res["mount"] = sc(165, 0, 0, 0, 0, 0)
res["umount2"] = sc(166, 0, 0)
res["fsopen"] = sc(430, 0, 0)
res["unshare_user"] = sc(272, 0x10000000)
res["unshare_ns"] = sc(272, 0x20000)
res["setns"] = sc(308, 0, 0)
res["clone3"] = sc(435, 0, 0)
res["personality_32"] = sc(135, 8)
res["personality_norandom"] = sc(135, 0x0040000)
res["tiocsti"] = sc(16, 0, 0x5412, 0)
res["tiocsti_high"] = sc(16, 0, 0x100005412, 0)
res["memfd_create"] = sc(319, 0, 0)
res["kexec_load"] = sc(246, 0, 0, 0, 0)
res["init_module"] = sc(175, 0, 0, 0)
res["open_by_handle_at"] = sc(304, 0, 0, 0)
res["reboot"] = sc(169, 0, 0, 0, 0)
res["getpid"] = sc(39)
print(" ".join("%s=%s" % (k, errno.errorcode.get(v, v) if v else "0") for k, v in res.items()))
EOF
chmod 644 "$T/sys.py"
out=$(mr --ro "$T" -- python3 "$T/sys.py" "$HOSTPROC_PID" 2>&1)
echo "# $out"
for want in ptrace=EPERM ptrace_attach=EPERM process_vm_readv=EPERM bpf=EPERM perf_event_open=EPERM \
	userfaultfd=EPERM io_uring_setup=EPERM keyctl=EPERM add_key=EPERM mount=EPERM umount2=EPERM \
	fsopen=EPERM unshare_user=EPERM unshare_ns=EPERM setns=EPERM clone3=ENOSYS personality_32=EPERM \
	personality_norandom=EPERM tiocsti=EPERM tiocsti_high=EPERM memfd_create=ENOSYS kexec_load=EPERM \
	init_module=EPERM open_by_handle_at=EPERM reboot=EPERM getpid=0; do
	check "syscall ${want%%=*} -> ${want#*=}" grep -q "\b$want\b" <<<"$out"
done
out=$(mr -- sh -c 'unshare -U true && echo escaped; mount -t tmpfs none /mnt 2>/dev/null && echo mounted; echo done' 2>/dev/null)
check "unshare and mount fail from a shell" [ "$out" = done ]

# ---- limits ----
out=$(mr -- python3 -c 'b = bytearray(4 << 30); print("allocated")' 2>&1)
check "a 4 GiB allocation fails (memory limit)" bash -c '! grep -q allocated <<<"$1" && grep -q MemoryError <<<"$1"' _ "$out"
out=$(mr --mem 0 -- python3 -c 'b = bytearray(64 << 20); print("ok")' 2>&1)
check "--mem 0 lifts the memory limit" [ "$out" = ok ]
pids_enforced=$(feature process-limit)
if [ "$pids_enforced" = true ] && { [ "$NOUSERNS" != 1 ] || [ -n "$AS" ]; }; then
	start=$(date +%s)
	out=$(mr --pids 300 --timeout 60 -- python3 -c '
import os, time
n = 0
try:
    for i in range(5000):
        if os.fork() == 0:
            time.sleep(30.'"$U"'); os._exit(0)
        n += 1
except OSError as e:
    print("stopped", n, e.errno)
' 2>&1)
	end=$(date +%s)
	cnt=$(awk '/stopped/ {print $2}' <<<"$out")
	# without a user namespace RLIMIT_NPROC counts the user's tasks and
	# moat adds the system's (sysinfo: every task of the kernel, a
	# container's host included, as /proc/loadavg's fourth field says) to
	# the limit (the PID namespace's pid_max leaves 300 PIDs aside for the
	# wrap: up to --pids + 300 before the numbers wrap, --pids after)
	lim=650
	[ "$NOUSERNS" = 1 ] && lim=$((300 + $(cut -d' ' -f4 /proc/loadavg | cut -d/ -f2) + 100))
	check "a fork loop is stopped by the process limit (got ${cnt:-none} of 5000, under $lim)" \
		cond '[ -n "$cnt" ] && [ "$cnt" -lt "$lim" ]'
	# (this run's own: the suites run side by side, each its fork loop)
	left=$(pgrep -fc "time.sleep\\(30\\.$U\\)" || true)
	check "the machine stayed responsive and the tree was reaped" \
		cond '[ $((end - start)) -lt 40 ] && [ "$left" -lt 5 ]'
	# a fork bomb that ignores SIGTERM and forks as fast as it is killed:
	# nothing of it may outlive the call (without a PID namespace moat
	# stops the whole tree before killing it)
	mr --pids 200 --timeout 2 -- python3 -c "
import os, signal
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP): signal.signal(s, signal.SIG_IGN)
while True:
    try: os.fork()
    except OSError: pass
# bomb-$U" >/dev/null 2>&1
	sleep 1
	left=$(pgrep -fc "bomb-$U" || true)
	check "a fork bomb ignoring SIGTERM is gone after --timeout (left: $left)" [ "$left" = 0 ]
	pkill -KILL -f "bomb-$U" 2>/dev/null
elif [ "$NOUSERNS" = 1 ] && [ -z "$AS" ]; then
	na "root without user namespaces or cgroups has no process limit (reported as a gap)"
else
	skip "process limit not enforceable here"
fi
mr --fsize 1 -- sh -c 'head -c 2000000 /dev/zero > big' 2>/dev/null
check "--fsize caps file size" [ "$(stat -c %s "$WS/big" 2>/dev/null || echo 0)" -le 1048576 ]
rm -f "$WS/big"

# ---- timeout and the whole tree ----
start=$(date +%s)
mr --timeout 1 -- sh -c "sleep 377.${U}5 & (sleep 377.${U}6 &) ; sleep 377.${U}7" 2>"$T/err"
rc=$?
end=$(date +%s)
sleep 0.3
check "--timeout exits 124" [ $rc = 124 ]
check "--timeout says so" grep -q "timed out" "$T/err"
check "--timeout kills the whole tree (no leftover processes)" [ "$(pgrep -fc "sleep 377\\.$U" || true)" = 0 ]
check "--timeout is prompt" [ $((end - start)) -le 4 ]
# the same with the network denied: the child was started early, before the plan
mr --net deny --timeout 1 -- sh -c "sleep 366.${U}5 & sleep 366.${U}6" 2>/dev/null
rc=$?
sleep 0.3
check "--timeout with the network denied (early start) exits 124 and kills the tree" \
	[ $rc = 124 ] && [ "$(pgrep -fc "sleep 366\\.$U" || true)" = 0 ]
mr -- sh -c "(sleep 388.${U}5 &) ; echo left" >/dev/null 2>&1
sleep 0.3
check "background processes left behind are killed when the command exits" [ "$(pgrep -fc "sleep 388\\.$U" || true)" = 0 ]

# the sandbox's mount namespace and ruleset go in a helper of moat's own
# (exit_after): it must let go of moat's output at once and exit soon
# (a helper holding the output would hang this read: the suite's timeout).
# Not in the repository: a run that removes stand-ins lets go of the
# namespace first, and no helper is needed
mkdir -p "$T/plain"
[ -n "$AS" ] && chown "$AS" "$T/plain"
out=$(mr --workspace "$T/plain" -- echo "teardown-$U" 2>/dev/null)
rc=$?
left=$(left_after "teardown-$U")
check "moat run's output read to its end ends with moat (rc $rc)" cond '[ $rc = 0 ] && [ "$out" = "teardown-$U" ]'
check "no process of moat's is left soon after a run (the teardown helper exits)" [ "$left" = 0 ]

# cancel: SIGTERM to moat kills the whole tree
(cd "$WS" && exec env HOME="$H" ${FAKE[@]+"${FAKE[@]}"} ${RUNAS[@]+"${RUNAS[@]}"} ${NSWRAP[@]+"${NSWRAP[@]}"} \
	"$MOAT" run ${MODE[@]+"${MODE[@]}"} -- sh -c "sleep 399.${U}5 & sleep 399.${U}6" 2>/dev/null) &
mpid=$!
for _ in $(seq 200); do [ "$(pgrep -fc "^sleep 399\\.$U" || true)" -ge 2 ] && break; sleep 0.05; done
kill -TERM "$mpid"
wait "$mpid"
rc=$?
sleep 0.3
check "SIGTERM to moat exits 143 (128+15)" [ $rc = 143 ]
check "... and kills the whole tree" [ "$(pgrep -fc "sleep 399\\.$U" || true)" = 0 ]

# ---- temporary workspace ----
out=$(mr --tmp-workspace -- sh -c 'pwd; echo t > f; cat f' 2>&1)
tws=$(head -1 <<<"$out")
check "--tmp-workspace runs in a fresh directory" cond '[ "$(tail -1 <<<"$out")" = t ] && case "$tws" in /tmp/moat-ws-*) true ;; *) false ;; esac'
check "--tmp-workspace is removed afterwards" [ ! -e "$tws" ]

# ---- a container that refuses the first mount (a security module: making
# / a slave): root without a user namespace re-plans without namespaces,
# says what is missing, and runs under Landlock and seccomp only ----
if [ "$ROOTNS" = 1 ]; then
	cat >"$T/nomslave.c" <<'C'
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/mount.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	scmp_filter_ctx c = seccomp_init(SCMP_ACT_ALLOW);

	if (argc < 2 || !c ||
	    seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mount), 1,
			     SCMP_A3(SCMP_CMP_EQ, MS_REC | MS_SLAVE)) ||
	    seccomp_load(c))
		return 126;
	execv(argv[1], argv + 1);
	return 127;
}
C
	if gcc -O1 -o "$T/nomslave" "$T/nomslave.c" -lseccomp 2>"$T/cc.err"; then
		mkdir -p "$T/plain"
		out=$(cd "$T/plain" && env -i PATH=/usr/bin:/bin HOME="$H" "${NSWRAP[@]}" "$T/nomslave" \
			"$MOAT" run --fallback warn -- sh -c "echo replanned-$U; (echo x >$OUT/escaped) 2>/dev/null; true" 2>"$T/err")
		rc=$?
		left=$(left_after "replanned-$U")
		check "a refused first mount: moat re-plans without namespaces and runs the command (rc $rc)" \
			cond '[ $rc = 0 ] && [ "$out" = "replanned-$U" ]'
		check "... says the mount namespace is missing and why" \
			grep -q "making / a slave" "$T/err"
		check "... and Landlock still confines it (nothing written outside)" canary_ok
		check "... and leaves no process behind" [ "$left" = 0 ]
	else
		skip "cannot build the test's seccomp wrapper: $(head -1 "$T/cc.err")"
	fi
fi

# ---- the workspace scan: no depth bound; its entry bound fails closed ----
deep="$WS/deep"
for i in $(seq 1 40); do deep="$deep/d$i"; done
mkdir -p "$deep" && echo "deep-SECRET7" >"$deep/.env" && echo "deep-plain7" >"$deep/notes.txt"
[ "$AS" = nobody ] && chown -R nobody:nogroup "$WS/deep"
out=$(mr -- sh -c "cat '$deep/.env' '$deep/notes.txt'" 2>&1)
rc=$?
check "a .env 40 levels down is masked, its neighbour readable (rc $rc)" \
	cond '[ $rc != 0 ] && ! grep -q deep-SECRET7 <<<"$out" && grep -q deep-plain7 <<<"$out"'
if [ "$NOUSERNS" = 1 ]; then
	deep2="$deep"
	for i in $(seq 41 70); do deep2="$deep2/d$i"; done
	mkdir -p "$deep2" && echo "deep-SECRET8" >"$deep2/.env"
	[ "$AS" = nobody ] && chown -R nobody:nogroup "$WS/deep"
	gaps=$(python3 -c 'import json,sys; f = json.loads(sys.argv[1])["features"]; print(",".join(k for k, v in f.items() if v["requested"] and not v["enforced"]))' "$status_json")
	out=$(m --accept-gap "$gaps" -- sh -c "cat '$deep2/.env'" 2>&1)
	rc=$?
	check "a .env 70 levels down, too deep to carve around: its deep directory gets no rule, no gap (rc $rc)" \
		cond '[ $rc != 125 ] && ! grep -q deep-SECRET8 <<<"$out" && ! grep -q "refusing to run without" <<<"$out" && grep -q "warning: .*unreadable.*/d6[0-9]" <<<"$out"' || echo "# $out"
	out=$(m --accept-gap "$gaps" -- sh -c "cat '$deep/notes.txt'" 2>&1)
	check "... the rest of the workspace stays readable" cond 'grep -q deep-plain7 <<<"$out"'
	rm -rf "$WS/deep/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/d14/d15/d16/d17/d18/d19/d20/d21/d22/d23/d24/d25/d26/d27/d28/d29/d30/d31/d32/d33/d34/d35/d36/d37/d38/d39/d40/d41"
fi
mkdir -p "$WS/deep/many" && (cd "$WS/deep/many" && seq 1 1100 | sed 's/$/.txt/' | xargs touch)
[ "$AS" = nobody ] && chown -R nobody:nogroup "$WS/deep"
echo '{"sandbox": {"scan_max_entries": 1000}}' >"$T/scanmax.json"
chmod 644 "$T/scanmax.json"
out=$(m --config "$T/scanmax.json" -- true 2>&1)
rc=$?
check "a workspace past sandbox.scan_max_entries is refused (125), the hint names the bound" \
	cond '[ $rc = 125 ] && grep -q "more than 1000 entries" <<<"$out" &&
		grep -q "hint: raise sandbox.scan_max_entries" <<<"$out" && ! grep -q -- "--fallback warn" <<<"$out"'
m --config "$T/scanmax.json" --net deny -- sleep "355.${U}1" 2>/dev/null
rc=$?
check "... also with the network denied; the child started early does not linger" \
	[ $rc = 125 ] && [ "$(pgrep -fc "sleep 355\\.$U" || true)" = 0 ]
m --config "$T/scanmax.json" --fallback warn -- touch "$WS/ran-past-bound" 2>/dev/null
check "... and --fallback warn does not run it either" [ ! -e "$WS/ran-past-bound" ]
rm -rf "$WS/deep"

# ---- profiles from the configuration (sandbox.profiles) ----
mkdir -p "$T/extra-rw" "$WS/vendor"
echo "vendored" >"$WS/vendor/lib.txt"
[ "$AS" = nobody ] && chown -R nobody:nogroup "$T/extra-rw" "$WS/vendor"
cat >"$T/cfg.json" <<EOF
{"sandbox": {"profiles": {
  "it-base": {"extends": "workspace-write-no-network", "rw": ["$T/extra-rw"]},
  "it-strict": {"extends": "it-base", "extra": {"ro": ["$WS/vendor"]}, "env": "none"}}}}
EOF
out=$(mr --config "$T/cfg.json" --profile it-strict --print-plan 2>&1)
check "a configuration profile is planned (extends chain, extra paths)" python3 -c '
import json, sys
p = json.loads(sys.argv[1])
rules = {r["path"]: r["access"] for r in p["filesystem"]["rules"]}
assert p["profile"] == "it-strict" and p["network"]["mode"] == "deny", p["profile"]
assert "w" in rules[sys.argv[2]] and "w" not in rules[sys.argv[3]], rules
assert p["environment"]["mode"] == "none"' "$out" "$T/extra-rw" "$WS/vendor" || echo "# ${out:0:300}"
mr --config "$T/cfg.json" --profile it-strict -- sh -c \
	"echo in > '$T/extra-rw/made'; echo x > '$WS/vendor/lib.txt'; echo y > '$WS/vendor/new'" 2>/dev/null
check "a profile's rw path is writable (seen from outside)" [ "$(cat "$T/extra-rw/made" 2>/dev/null)" = in ]
if [ "$USERNS" = true ]; then
	check "a profile's ro path inside the workspace is not (seen from outside)" cond '[ "$(cat "$WS/vendor/lib.txt")" = vendored ] && [ ! -e "$WS/vendor/new" ]'
else
	out=$(m --config "$T/cfg.json" --profile it-strict -- true 2>&1)
	rc_=$?
	check "without a mount namespace a ro path inside the workspace is a gap (refused, 125)" cond '[ $rc_ = 125 ] && grep -q "protected-paths" <<<"$out"'
fi
check "... and nothing outside changed" canary_ok
# fail closed (seed 002): a broken profile refuses to run; the health check says where
printf '{"sandbox": {"profiles": {\n  "a": {"extends": "b"},\n  "b": {"extends": "a"}}}}\n' >"$T/cycle.json"
out=$(mr --config "$T/cycle.json" --profile a -- touch "$WS/ran" 2>&1)
rc_=$?
check "a cycle in extends refuses to run (125)" cond '[ $rc_ = 125 ] && [ ! -e "$WS/ran" ] && grep -q "cycle.json:3:.*cycle" <<<"$out"'
"$MOAT" config check "$T/cycle.json" >/dev/null 2>&1
check "... and moat config check exits 2" [ $? = 2 ]
printf '{"sandbox": {"profiles": {"p": {"extends": "workspace-write", "network": [0]}}}}\n' >"$T/badfield.json"
mr --config "$T/badfield.json" --profile p -- touch "$WS/ran" 2>/dev/null
rc_=$?
check "an invalid field refuses to run (125)" cond '[ $rc_ = 125 ] && [ ! -e "$WS/ran" ]'
printf '{"sandbox": {"profile": "missing"}}\n' >"$T/unknown.json"
mr --config "$T/unknown.json" -- touch "$WS/ran" 2>/dev/null
rc_=$?
check "an unknown default profile refuses to run (125)" cond '[ $rc_ = 125 ] && [ ! -e "$WS/ran" ]'
mr --config "$T/cfg.json" --profile it-nope -- touch "$WS/ran" 2>/dev/null
rc_=$?
check "an unknown --profile refuses to run (125)" cond '[ $rc_ = 125 ] && [ ! -e "$WS/ran" ]'
# the user file the rest of moat reads ($XDG_CONFIG_HOME, else ~/.config)
mkdir -p "$H/.config/moat"
printf '{"sandbox": {"profile": "it-home", "profiles": {"it-home": {"extends": "readonly"}}}}\n' \
	>"$H/.config/moat/config.json"
[ "$AS" = nobody ] && chown -R nobody:nogroup "$H/.config/moat"
plan=$(mr --print-plan 2>/dev/null)
check "the user's configuration file is read (its default profile)" python3 -c \
	'import json,sys; assert json.loads(sys.argv[1])["profile"] == "it-home"' "$plan"
rm -rf "$H/.config/moat"
# a project file may not define profiles: it could loosen
mkdir -p "$WS/.moat"
printf '{"sandbox": {"profiles": {"p": {"extends": "workspace-write"}}}}\n' >"$WS/.moat/config.json"
[ "$AS" = nobody ] && chown -R nobody:nogroup "$WS/.moat"
out=$(mr -- touch "$WS/ran" 2>&1)
rc_=$?
check "a project file defining profiles refuses to run (125)" cond '[ $rc_ = 125 ] && [ ! -e "$WS/ran" ] && grep -q "not allowed in a project config" <<<"$out"'
rm -rf "$WS/.moat" "$T/extra-rw" "$WS/vendor"

echo "1..$n"
[ $failed = 0 ]
