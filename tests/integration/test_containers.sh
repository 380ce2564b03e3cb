#!/bin/bash
# moat inside the two container kinds that withhold part of the sandbox,
# reproduced where `make check` runs (no container engine), checked from
# outside. TAP output.
#   docker   Docker's default seccomp rules without CAP_SYS_ADMIN
#            (tests/helpers/docker_ns_rules.c: unshare, setns, mount and the
#            new mount API refused, clone with a CLONE_NEW* flag refused,
#            clone3 ENOSYS), once with EPERM (Docker) and once with ENOSYS
#            (podman's profile) for the refused calls;
#   masked   a user namespace whose /proc has covered subdirectories
#            (bubblewrap's own --proc binds /proc/irq, /proc/bus, ...
#            read-only over it): the kernel refuses a fresh proc mount in a
#            nested namespace, as under podman and Kubernetes.
# In each: moat status tells the gaps moat run then reports, the default
# refuses naming them, --fallback warn runs, and the secrets stay
# unreadable.
#   MOAT=... MOAT_DOCKER_NS_RULES=... bash tests/integration/test_containers.sh
set -u

MOAT=${MOAT:-$(command -v moat)}
RULES=${MOAT_DOCKER_NS_RULES:-}
. "$(dirname "$0")/../lib/tap.sh"

[ -x "$MOAT" ] || bail "no moat binary (set MOAT)"
command -v python3 >/dev/null || bail "python3 is needed"

T=$(mktemp -d /tmp/moat-ct-XXXXXX) || bail "mktemp"
chmod 755 "$T"
SLEEP_PID=
cleanup() {
	[ -n "$SLEEP_PID" ] && kill "$SLEEP_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
WS=$T/ws
H=$T/home
mkdir -p "$WS" "$H/.ssh" "$H/.aws" "$T/outside" "$T/ws-clean"
echo "hello" >"$T/ws-clean/a.txt"
echo "ssh-SECRET1" >"$H/.ssh/id_rsa"
echo "aws-SECRET2" >"$H/.aws/credentials"
echo "API_KEY=env-SECRET3" >"$WS/.env"
echo "hello" >"$WS/a.txt"
mkdir -p "$WS/sub/dir" "$WS/w"
echo "pem-SECRET5" >"$WS/sub/dir/key.pem"
echo "readme" >"$WS/README"
echo "notes" >"$WS/sub/dir/notes.txt"

# in WRAP...: run moat under the container kind's wrapper
WRAP=()
RUN_IN=$WS
m() {
	(cd "$RUN_IN" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 TERM=dumb \
		${WRAP[@]+"${WRAP[@]}"} "$MOAT" "$@")
}
# gaps_status: the requested protections status calls not enforced, sorted
gaps_status() {
	m status --json 2>/dev/null | python3 -c 'import json,sys
f = json.load(sys.stdin)["features"]
print(",".join(sorted(k for k, v in f.items() if v["requested"] and not v["enforced"])))'
}
# gaps_run STDERR: the ones moat run warned of, sorted
gaps_run() {
	sed -n 's/.*warning: not enforced: \([a-z-]*\) .*/\1/p' <<<"$1" | sort | paste -sd, -
}
kfield() { # kfield NAME: a field of status --json's kernel object
	m status --json 2>/dev/null | python3 -c 'import json,sys; print(str(json.load(sys.stdin)["kernel"].get(sys.argv[1])).lower())' "$1"
}

LANDLOCK=$(m status --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["kernel"]["landlock_abi"])' 2>/dev/null || echo 0)
if [ "${LANDLOCK:-0}" = 0 ]; then
	echo "1..1"
	if [ "$MUST" = 1 ]; then echo "not ok 1 - Landlock unavailable but MOAT_MUST_WORK=1"; exit 1; fi
	echo "ok 1 - # SKIP Landlock unavailable on this kernel"
	exit 0
fi

# the checks both kinds share: KIND, and the gap that must be among them
common() {
	local kind=$1 want=$2 st out rc
	st=$(gaps_status)
	checke "$kind: status reports $want as a gap ($st)" '[[ ",$st," == *",$want,"* ]]'
	out=$(m run -- cat a.txt 2>&1)
	rc=$?
	check "$kind: refuses by default (exit 125)" [ $rc = 125 ]
	checke "$kind: the refusal names $want and the flag that accepts it" \
		'grep -q "refusing to run without:.*$want" <<<"$out" && grep -q -- "--fallback warn" <<<"$out"'
	checke "$kind: no raw system-call error" '! grep -qE "cannot start the command|cannot set up the sandbox|mount: proc" <<<"$out"'
	checke "$kind: ... and the configuration line" 'grep -qF "\"fallback\": \"warn\"}" <<<"$out"'
	mkdir -p "$H/.config/moat"
	echo '{"sandbox": {"fallback": "warn"}}' >"$H/.config/moat/config.json"
	out=$(m run -- cat a.txt 2>/dev/null)
	rc=$?
	rm -f "$H/.config/moat/config.json"
	check "$kind: that configuration line runs the command" [ "$rc:$out" = "0:hello" ]
	out=$(m run --fallback warn -- cat a.txt 2>"$T/err")
	rc=$?
	check "$kind: --fallback warn runs the command" [ "$rc:$out" = "0:hello" ]
	checke "$kind: moat run's gaps are status's ($(gaps_run "$(cat "$T/err")") = $st)" \
		'[ "$(gaps_run "$(cat "$T/err")")" = "$st" ]'
	out=$(m run --fallback warn -- sh -c 'cat ~/.ssh/id_rsa; cat ~/.aws/credentials' 2>/dev/null)
	checke "$kind: ~/.ssh/id_rsa and ~/.aws/credentials stay unreadable" \
		'! grep -q SECRET <<<"$out"'
	m run --fallback warn -- sh -c "echo x >'$T/outside/w'" 2>/dev/null
	check "$kind: no write outside the workspace" [ ! -e "$T/outside/w" ]
	m run --fallback warn -- sh -c 'echo new >w/b.txt' 2>/dev/null
	check "$kind: the workspace stays writable" [ "$(cat "$WS/w/b.txt" 2>/dev/null)" = new ]
	rm -f "$WS/w/b.txt"
	out=$(m run --fallback warn --net deny -- python3 -c '
import socket
try:
    socket.create_connection(("1.1.1.1", 443), timeout=2); print("connected")
except OSError as e:
    print("refused", e.errno)' 2>/dev/null)
	checke "$kind: --net deny refuses an outside connection ($out)" '[[ "$out" == refused* ]]'
}

# the workspace's own secrets without a mount namespace: Landlock's rules
# carved around them (checked from outside; as root, and as nobody when
# the test runs as root)
carve_checks() {
	local kind=$1 who=$2 out
	out=$(m run --fallback warn -- sh -c 'cat .env; cat sub/dir/key.pem' 2>/dev/null)
	checke "$kind ($who): cat .env and cat sub/dir/key.pem get nothing" '! grep -q SECRET <<<"$out"'
	out=$(m run --fallback warn -- sh -c 'cat README sub/dir/notes.txt' 2>/dev/null)
	check "$kind ($who): their neighbours are readable" [ "$out" = "readme
notes" ]
	m run --fallback warn -- sh -c 'echo more >>README; echo more >>sub/dir/notes.txt' 2>/dev/null
	check "$kind ($who): a neighbour file stays writable" \
		[ "$(cat "$WS/README" "$WS/sub/dir/notes.txt" | paste -sd' ')" = "readme more notes more" ]
	m run --fallback warn -- sh -c 'echo x >new.txt; echo x >sub/dir/new.txt' 2>"$T/err"
	checke "$kind ($who): no new file beside them (the honest cost), and moat says where" \
		'[ ! -e "$WS/new.txt" ] && [ ! -e "$WS/sub/dir/new.txt" ] && grep -q "nothing new can be created directly in these directories.*$WS/sub/dir" "$T/err"'
	m run --fallback warn -- sh -c 'rm -f .env; mv sub/dir/key.pem w/k; ln .env w/l' 2>/dev/null
	checke "$kind ($who): they cannot be removed, moved or linked out" \
		'grep -q SECRET3 "$WS/.env" && grep -q SECRET5 "$WS/sub/dir/key.pem" && [ ! -e "$WS/w/k" ] && [ ! -e "$WS/w/l" ]'
	chmod 000 "$WS/sub/dir/key.pem"
	out=$(m run --fallback warn -- sh -c 'chmod 644 sub/dir/key.pem; cat sub/dir/key.pem' 2>/dev/null)
	chmod 644 "$WS/sub/dir/key.pem"
	checke "$kind ($who): one unreadable to its owner now stays unreadable after a chmod" \
		'! grep -q SECRET <<<"$out"'
	printf 'readme\n' >"$WS/README"
	printf 'notes\n' >"$WS/sub/dir/notes.txt"
	out=$(m run -- true 2>&1)
	checke "$kind ($who): the refusal does not list workspace secrets as a gap" \
		'! grep -q "refusing to run without:.*secrets" <<<"$out" && ! grep -q "stay readable" <<<"$out"'
}

# the carve's limits and its rules' paths, in a kind without a mount
# namespace (checked from outside: no secret is printed)
carve_limits() {
	local kind=$1 out rc p
	# a masked path past the depth bound: that subtree gets no rule, the
	# rest stays carved (never the whole workspace granted, in this run or
	# a later one)
	m run --fallback warn -- sh -c 'p=w; for i in $(seq 70); do p=$p/d; done; mkdir -p $p; : >$p/.env' 2>/dev/null
	out=$(m run --fallback warn -- cat .env sub/dir/key.pem README 2>"$T/err")
	checke "$kind: a masked path 70 levels deep does not switch the carve off ($out)" \
		'! grep -q SECRET <<<"$out" && grep -q readme <<<"$out"'
	checke "$kind: ... the deep subtree is named unreadable in a warning" \
		'grep -q "warning:.*unreadable.*$WS/w/d/d" "$T/err"'
	out=$(m run --accept-gap "$(gaps_status)" -- cat README 2>&1)
	checke "$kind: ... and it is no gap to accept" \
		'grep -q readme <<<"$out" && ! grep -q "refusing" <<<"$out"'
	rm -rf "$WS/w/d"
	# few descriptors left: the carve closes its own as it goes
	out=$( (ulimit -n 48; m run --fallback warn -- cat README .env) 2>/dev/null)
	checke "$kind: the carve works with 48 descriptors allowed ($out)" \
		'grep -q readme <<<"$out" && ! grep -q SECRET <<<"$out"'
	# a crowded directory holding a masked path: that directory only
	mkdir -p "$WS/w/x"
	echo "env-SECRET6" >"$WS/w/x/.env"
	(cd "$WS/w/x" && seq 66000 | xargs touch)
	out=$(m run --fallback warn -- sh -c 'cat .env sub/dir/key.pem w/x/.env README; cat w/x/1 && echo ONE' 2>"$T/err")
	checke "$kind: a masked path among 66,000 entries does not switch the carve off" \
		'! grep -q SECRET <<<"$out" && grep -q readme <<<"$out"'
	checke "$kind: ... that directory is named unreadable" \
		'grep -q "warning:.*unreadable.*$WS/w/x" "$T/err" && ! grep -q ONE <<<"$out"'
	rm -rf "$WS/w/x"
	out=$(m run --fallback warn --print-plan -- true 2>/dev/null)
	checke "$kind: --print-plan shows the plan a run makes here (no mount namespace)" \
		'grep -q "\"mount\": false" <<<"$out" && grep -q "landlock rules carved" <<<"$out"'
	# a rule through a symbolic link is carved like its target
	ln -s "$WS/sub" "$T/link"
	ln -s "$T" "$T-tlink"
	out=$(m run --fallback warn --ro "$T/link" -- sh -c "cat sub/dir/key.pem; cat $T/link/dir/key.pem" 2>/dev/null)
	checke "$kind: --ro through a link to a directory holding a secret keeps it out" \
		'! grep -q SECRET <<<"$out"'
	out=$(m run --fallback warn --ro "$T-tlink" -- sh -c "cat $H/.ssh/id_rsa .env; cat $T-tlink/home/.ssh/id_rsa" 2>/dev/null)
	checke "$kind: --ro through a link above the home and the workspace keeps theirs out" \
		'! grep -q SECRET <<<"$out"'
	rm -f "$T/link" "$T-tlink"
	# nested masks: a rule below a masked directory keeps the secret below it out
	out=$(m run --fallback warn --mask "$WS/sub" --ro "$WS/sub/dir" -- cat sub/dir/key.pem sub/dir/notes.txt 2>/dev/null)
	checke "$kind: --mask DIR --ro DIR/SUB keeps a secret inside SUB out ($out)" \
		'! grep -q SECRET <<<"$out" && grep -q notes <<<"$out"'
	# a rule that is a masked path, or inside one, is refused
	for p in "--ro $H/.ssh" "--ro $WS/.env" "--rw $WS/sub/dir/key.pem"; do
		out=$(m run --fallback warn $p -- sh -c "cat ${p#* } ${p#* }/id_rsa" 2>&1)
		rc=$?
		checke "$kind: $p is refused as masked ($rc)" \
			'[ $rc = 125 ] && ! grep -q SECRET <<<"$out" && grep -q "is masked" <<<"$out"'
	done
}

# the user's configuration inside the workspace (the home as the
# workspace): the command can neither create nor change it
config_checks() {
	local kind=$1 who=$2 conf=$H/.config/moat/config.json
	RUN_IN=$H
	rm -rf "$H/.config"
	m run --fallback warn -- sh -c 'mkdir -p .config/moat; echo "{\"sandbox\":{\"accept_gaps\":[\"secrets\"],\"fallback\":\"warn\"}}" >.config/moat/config.json' 2>/dev/null
	checke "$kind ($who): the command cannot create the user's configuration" \
		'! grep -qs accept_gaps "$conf"'
	mkdir -p "$H/.config/moat"
	echo '{"sandbox": {}}' >"$conf"
	[ "$who" = nobody ] && chown -R nobody "$H/.config"
	m run --fallback warn -- sh -c 'echo "{\"sandbox\":{\"fallback\":\"warn\"}}" >.config/moat/config.json; echo x >.config/moat/other.json' 2>/dev/null
	checke "$kind ($who): ... nor change it, nor add a file beside it" \
		'[ "$(cat "$conf")" = "{\"sandbox\": {}}" ] && [ ! -e "$H/.config/moat/other.json" ]'
	XDG=$WS/xdg
	mkdir -p "$XDG"
	[ "$who" = nobody ] && chown nobody "$XDG"
	(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" XDG_CONFIG_HOME="$XDG" LANG=C.UTF-8 TERM=dumb \
		${WRAP[@]+"${WRAP[@]}"} "$MOAT" run --fallback warn -- sh -c 'mkdir -p xdg/moat; echo "{}" >xdg/moat/config.json') 2>/dev/null
	checke "$kind ($who): ... nor \$XDG_CONFIG_HOME/moat inside the workspace" '[ ! -e "$XDG/moat" ]'
	rm -rf "$XDG" "$H/.config"
	# the audit log's directory inside the workspace: the record is the
	# audit writer's alone (without a mount namespace no new name can be
	# made beside it, nor in the directories above it: docs/sandbox.md;
	# what is there stays writable)
	rm -rf "$H/.local"
	mkdir -p "$H/.local/share" "$H/.local/state/moat"
	[ "$who" = nobody ] && chown -R nobody "$H/.local"
	m run --fallback warn -- sh -c 'mkdir -p .local/state/moat; echo forged >>.local/state/moat/audit.jsonl; mv .local/state/moat .local/state/m2; mkdir -p .local/share/x' 2>/dev/null
	checke "$kind ($who): the command neither writes in the audit log's directory nor moves it" \
		'[ -d "$H/.local/state/moat" ] && [ ! -e "$H/.local/state/moat/audit.jsonl" ] && [ ! -e "$H/.local/state/m2" ]'
	checke "$kind ($who): ... and ~/.local/share beside it stays writable" '[ -d "$H/.local/share/x" ]'
	rm -rf "$H/.local"
	# the configuration directory as the workspace: its file
	mkdir -p "$H/.config/moat"
	[ "$who" = nobody ] && chown -R nobody "$H/.config"
	RUN_IN=$H/.config/moat
	m run --fallback warn -- sh -c 'echo "{}" >config.json' 2>/dev/null
	checke "$kind ($who): ... nor config.json with ~/.config/moat as the workspace" '[ ! -e "$conf" ]'
	rm -rf "$H/.config"
	RUN_IN=$WS
	# in a --rw path outside the workspace
	mkdir -p "$H/.config/moat"
	echo '{"sandbox": {}}' >"$conf"
	: >"$H/.config/other"
	[ "$who" = nobody ] && chown -R nobody "$H/.config"
	m run --fallback warn --rw "$H/.config" -- sh -c "echo '{}' >$conf; echo x >$H/.config/moat/other.json; echo y >$H/.config/other" 2>/dev/null
	checke "$kind ($who): --rw ~/.config leaves ~/.config/moat unchanged, the rest writable" \
		'[ "$(cat "$conf")" = "{\"sandbox\": {}}" ] && [ ! -e "$H/.config/moat/other.json" ] && [ "$(cat "$H/.config/other")" = y ]'
	rm -rf "$H/.config"
	# a --rw path above them: the directories on the way down cannot be
	# renamed away and made again for the next session to trust
	mkdir -p "$H/.local/state/moat" "$H/.local/share" "$H/.xdg/a/moat"
	echo '{"sandbox": {}}' >"$H/.xdg/a/moat/config.json"
	[ "$who" = nobody ] && chown -R nobody "$H/.local" "$H/.xdg"
	(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" XDG_CONFIG_HOME="$H/.xdg/a" LANG=C.UTF-8 TERM=dumb \
		${WRAP[@]+"${WRAP[@]}"} "$MOAT" run --fallback warn --rw "$H/.local" --rw "$H/.xdg" -- sh -c "
		mv $H/.local/state $H/.local/s2; mkdir -p $H/.local/state/moat; echo forged >$H/.local/state/moat/audit.jsonl
		mv $H/.xdg/a $H/.xdg/b; mkdir -p $H/.xdg/a/moat; echo '{\"forged\": 1}' >$H/.xdg/a/moat/config.json
		: >$H/.local/share/ok") 2>/dev/null
	checke "$kind ($who): --rw above the audit log's and the configuration's directories: neither moved nor made again" \
		'[ ! -e "$H/.local/s2" ] && [ ! -e "$H/.local/state/moat/audit.jsonl" ] && [ ! -e "$H/.xdg/b" ] && ! grep -qs forged "$H/.xdg/a/moat/config.json" && [ -e "$H/.local/share/ok" ]'
	rm -rf "$H/.local" "$H/.xdg"
	# ... whatever the order of the writable paths (an inner one first)
	mkdir -p "$H/.local/state/moat"
	[ "$who" = nobody ] && chown -R nobody "$H/.local"
	m run --fallback warn --rw "$H/.local/state" --rw "$H" -- sh -c "
		mv $H/.local $H/l2; mkdir -p $H/.local/state/moat; echo forged >$H/.local/state/moat/audit.jsonl" 2>/dev/null
	checke "$kind ($who): ... with an inner writable path named first" \
		'[ ! -e "$H/l2" ] && [ ! -e "$H/.local/state/moat/audit.jsonl" ]'
	rm -rf "$H/l2"
	rm -rf "$H/.local"
	# missing there: moat makes the directory first (empty), read-only inside
	mkdir -p "$H/.config"
	[ "$who" = nobody ] && chown -R nobody "$H/.config"
	m run --fallback warn --rw "$H/.config" -- sh -c "mkdir -p $H/.config/moat; echo '{}' >$conf; mv $H/.config/moat $H/.config/m2" 2>/dev/null
	checke "$kind ($who): ... nor creates it there" \
		'[ ! -e "$conf" ] && [ ! -e "$H/.config/m2" ] && [ -z "$(ls -A "$H/.config/moat" 2>/dev/null)" ]'
	rm -rf "$H/.config"
	mkdir -p "$H/.x"
	[ "$who" = nobody ] && chown -R nobody "$H/.x"
	(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" XDG_CONFIG_HOME="$H/.x/cfg" LANG=C.UTF-8 TERM=dumb \
		${WRAP[@]+"${WRAP[@]}"} "$MOAT" run --fallback warn --rw "$H/.x" -- sh -c "mkdir -p $H/.x/cfg/moat; echo '{}' >$H/.x/cfg/moat/config.json") 2>/dev/null
	checke "$kind ($who): ... nor \$XDG_CONFIG_HOME/moat below a writable path, its parents missing too" \
		'[ ! -e "$H/.x/cfg/moat/config.json" ]'
	rm -rf "$H/.x"
	# ... nor the audit log's directory, missing below a writable path
	mkdir -p "$H/.local"
	[ "$who" = nobody ] && chown -R nobody "$H/.local"
	m run --fallback warn --rw "$H/.local" -- sh -c "mkdir -p $H/.local/state/moat; echo forged >$H/.local/state/moat/audit.jsonl; ln $H/.local/x $H/.local/state/moat/a2" 2>/dev/null
	checke "$kind ($who): ... nor the audit log's directory below a writable path, missing before" \
		'[ -z "$(ls -A "$H/.local/state/moat" 2>/dev/null)" ]'
	rm -rf "$H/.local"
}

# per-protection acceptance (sandbox.accept_gaps, --accept-gap) in a kind
# without a mount namespace: accepting one gap never accepts another
# last_sandbox FIELD: that field of the last audit record's sandbox, comma-joined
last_sandbox() {
	python3 -c 'import json,sys
s = json.loads(open(sys.argv[1]).readlines()[-1])["sandbox"]
print(",".join(sorted(s.get(sys.argv[2], []))))' "$T/audit.jsonl" "$1" 2>/dev/null
}
accepted_said() { # the gaps STDERR says were accepted, sorted
	sed -n 's/.*not enforced (accepted): \([a-z-]*\) .*/\1/p' <<<"$1" | sort | paste -sd, -
}
accept_gaps() {
	local kind=$1 st out rc conf=$H/.config/moat/config.json
	st=$(gaps_status)
	out=$(m run --accept-gap pid-namespace -- cat a.txt 2>&1)
	rc=$?
	check "$kind: accepting only pid-namespace still refuses (exit 125)" [ $rc = 125 ]
	checke "$kind: ... naming the mount namespace's gaps, not the accepted one" \
		'grep -q "refusing to run without:.*metadata" <<<"$out" && ! grep -q "refusing to run without:.*pid-namespace" <<<"$out" && [ "$(accepted_said "$out")" = pid-namespace ]'
	checke "$kind: ... and the --accept-gap that would accept the rest" \
		'grep -q -- "--accept-gap [a-z,-]*metadata" <<<"$out"'
	mkdir -p "$H/.config/moat"
	echo '{"sandbox": {"accept_gaps": ["pid-namespace"]}}' >"$conf"
	m run -- cat a.txt >/dev/null 2>&1
	rc=$?
	check "$kind: sandbox.accept_gaps [pid-namespace] still refuses" [ $rc = 125 ]
	out=$(m run --accept-gap "$st" -- cat a.txt 2>"$T/err")
	rc=$?
	check "$kind: --accept-gap with every missing one ($st) runs" [ "$rc:$out" = "0:hello" ]
	checke "$kind: ... saying each accepted gap" '[ "$(accepted_said "$(cat "$T/err")")" = "$st" ]'
	python3 -c 'import json,sys; print(json.dumps({"sandbox": {"mode": "linux", "accept_gaps": sys.argv[1].split(",")}}))' "$st" >"$conf"
	out=$(m run -- cat a.txt 2>/dev/null)
	rc=$?
	check "$kind: sandbox.accept_gaps with every missing one runs" [ "$rc:$out" = "0:hello" ]
	checke "$kind: moat config show shows them" \
		'm config show | grep -q "\"accept_gaps\": \[\"[a-z\", -]*metadata\"\]"'
	rm -f "$T/audit.jsonl"
	out=$(m tool --audit-log "$T/audit.jsonl" --cwd "$RUN_IN" bash '{"command": "cat a.txt"}' 2>/dev/null)
	checke "$kind: moat tool honours sandbox.accept_gaps" 'grep -q "\"stdout\":\"hello" <<<"$out"'
	checke "$kind: the audit record names the accepted gaps ($(last_sandbox accepted))" \
		'[ "$(last_sandbox accepted)" = "$st" ]'
	echo '{"sandbox": {"mode": "linux", "accept_gaps": ["pid-namespace"]}}' >"$conf"
	out=$(m tool --audit-log "$T/audit.jsonl" --cwd "$RUN_IN" bash '{"command": "cat a.txt"}' 2>/dev/null)
	checke "$kind: ... and a tool call with one accepted still refuses" \
		'! grep -q "\"stdout\":\"hello" <<<"$out" && grep -q "refusing to run without" <<<"$out"'
	checke "$kind: ... its record: pid-namespace accepted, the rest missing" \
		'[ "$(last_sandbox accepted)" = pid-namespace ] && [ "$(last_sandbox missing)" = "$st" ]'
	rm -f "$conf"
	out=$(m run --accept-gap pid-nam -- cat a.txt 2>&1)
	rc=$?
	checke "$kind: an unknown --accept-gap name is refused ($rc)" \
		'[ $rc = 125 ] && grep -q "bad --accept-gap value .pid-nam." <<<"$out"'
}

# ---- Docker's kind ----
if [ -z "$RULES" ] || [ ! -x "$RULES" ]; then
	skip "docker kind: no tests/helpers/docker_ns_rules (set MOAT_DOCKER_NS_RULES)"
else
	for e in "" --enosys; do
		WRAP=("$RULES" ${e:+"$e"})
		kind="docker${e:+ (ENOSYS)}"
		check "$kind: status: no user namespaces, none made as root" \
			[ "$(kfield user_namespaces):$(kfield namespaces_without_userns)" = false:false ]
		common "$kind" pid-namespace
		carve_checks "$kind" root
		[ -z "$e" ] && carve_limits "$kind"
		[ -z "$e" ] && config_checks "$kind" root
		RUN_IN=$T/ws-clean
		accept_gaps "$kind"
		RUN_IN=$WS
	done
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
		chown -R nobody "$WS" "$H"
		WRAP=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$RULES")
		carve_checks docker nobody
		config_checks docker nobody
		# a masked directory the command may search but not list, owned
		# by someone else: its files are reachable by name
		mkdir -m 711 "$T/outside/x711"
		echo "x-SECRET9" >"$T/outside/x711/f"
		chmod 644 "$T/outside/x711/f"
		out=$(m run --fallback warn --mask "$T/outside/x711" -- cat "$T/outside/x711/f" 2>&1)
		checke "docker (nobody): a masked directory it can search but not list stays closed" \
			'! grep -q SECRET <<<"$out"'
		rm -rf "$T/outside/x711"
		chown -R root "$WS" "$H"
	else
		skip "docker kind as nobody: needs root and setpriv"
	fi
fi

# ---- the masked-proc kind (podman, Kubernetes) ----
WRAP=()
if ! command -v bwrap >/dev/null; then
	skip "masked /proc kind: needs bubblewrap to make a user namespace with a masked /proc"
elif ! bwrap --unshare-user --unshare-pid --dev-bind / / --proc /proc true 2>/dev/null; then
	skip "masked /proc kind: bubblewrap cannot make a user namespace here"
elif bwrap --unshare-user --unshare-pid --dev-bind / / --proc /proc \
	unshare --user --map-root-user --pid --fork --mount-proc true 2>/dev/null; then
	skip "masked /proc kind: this kernel mounts a fresh /proc under bubblewrap's (no mask to test)"
else
	# a process of the container, outside the sandbox: its PID namespace
	# is bubblewrap's, so it is started inside (as pid 2 or so)
	WRAP=(bwrap --unshare-user --unshare-pid --dev-bind / / --proc /proc --setenv SECRETENV outer-SECRET4
		sh -c 'sleep 30 </dev/null >/dev/null 2>&1 & s=$!; "$@"; r=$?; kill $s; exit $r' sh)
	kind=masked
	check "$kind: status: user namespaces, no fresh /proc" \
		[ "$(kfield user_namespaces):$(kfield fresh_proc)" = true:false ]
	common "$kind" pid-namespace
	st=$(gaps_status)
	for f in secrets private-tmp protected-paths host-sockets metadata; do
		checke "$kind: $f still enforced" '[[ ",$st," != *",$f,"* ]]'
	done
	out=$(m run --fallback warn -- cat .env 2>/dev/null)
	checke "$kind: the workspace .env stays unreadable (masked)" '! grep -q SECRET <<<"$out"'
	out=$(m run --fallback warn -- sh -c '
p=$(pgrep -x sleep | head -1)
echo "pid=$p"
tr "\0" " " </proc/$p/cmdline && echo
cat /proc/$p/environ >/dev/null 2>&1 && echo ENVIRON-READ
head -1 /proc/$p/maps >/dev/null 2>&1 && echo MAPS-READ
head -c1 /proc/$p/mem >/dev/null 2>&1 && echo MEM-READ
readlink /proc/$p/fd/1 >/dev/null 2>&1 && echo FD-READ
kill -0 $p 2>/dev/null && echo SIGNAL-SENT
echo 500 2>/dev/null >/proc/$p/oom_score_adj && echo PROC-WRITTEN
touch /tmp/moat-ct-private-'"$$"' && echo TMP-WRITTEN
true' 2>/dev/null)
	checke "$kind: the container's processes and command lines are visible" \
		'grep -q "^sleep 30" <<<"$out"'
	checke "$kind: their environment, memory and fds are not ($(grep -E "READ" <<<"$out" | paste -sd' ' -))" \
		'! grep -qE "ENVIRON-READ|MAPS-READ|MEM-READ|FD-READ" <<<"$out"'
	if [ "$LANDLOCK" -ge 6 ]; then
		checke "$kind: no signal reaches them (Landlock ABI 6)" '! grep -q SIGNAL-SENT <<<"$out"'
	else
		skip "$kind: signal scoping needs Landlock ABI 6 (this kernel has $LANDLOCK)"
	fi
	o2=$(cd "$WS" && env -i PATH=/usr/bin:/bin HOME="$H" MOAT_FAKE_FRESH_PROC=1 \
		"${WRAP[@]}" "$MOAT" run --fallback warn -- cat a.txt 2>"$T/err")
	checke "$kind: a probe misled: the refused /proc mount re-plans ($(tail -1 "$T/err"))" \
		'[ "$o2" = hello ] && grep -q "not enforced: pid-namespace" "$T/err"'
	o2=$(cd "$WS" && env -i PATH=/usr/bin:/bin HOME="$H" MOAT_FAKE_FRESH_PROC=1 \
		"${WRAP[@]}" "$MOAT" run -- cat a.txt 2>&1)
	checke "$kind: ... and then refuses by default, naming the gap" \
		'[ "$o2" != hello ] && grep -q "refusing to run without:.*pid-namespace" <<<"$o2"'
	checke "$kind: /proc is read-only" '! grep -q PROC-WRITTEN <<<"$out"'
	checke "$kind: /tmp is private" \
		'grep -q TMP-WRITTEN <<<"$out" && [ ! -e /tmp/moat-ct-private-$$ ]'
fi

# ---- the same rules with a mount namespace (the host's sandbox) ----
WRAP=()
if [ "$(kfield user_namespaces)" != true ]; then
	skip "mount namespace: no user namespaces here"
else
	kind=mntns
	ln -s "$WS/sub" "$T/link"
	out=$(m run --ro "$T/link" -- sh -c "cat $T/link/dir/key.pem sub/dir/key.pem" 2>/dev/null)
	checke "$kind: --ro through a link under the private /tmp keeps the secret out" \
		'! grep -q SECRET <<<"$out"'
	rm -f "$T/link"
	for p in "--ro $H/.ssh" "--ro $WS/.env" "--rw $WS/sub/dir/key.pem"; do
		out=$(m run $p -- sh -c "cat ${p#* } ${p#* }/id_rsa" 2>&1)
		rc=$?
		checke "$kind: $p is refused as masked ($rc)" \
			'[ $rc = 125 ] && ! grep -q SECRET <<<"$out" && grep -q "is masked" <<<"$out"'
	done
	config_checks "$kind" root
fi

echo "1..$n"
[ "$failed" = 0 ]
