#!/bin/bash
# Integration tests of the bash tool through `moat tool bash 'ARGS_JSON'`:
# the whole pipeline (policy, sandbox, audit) driven from outside, as root
# and as nobody. Looks at the canary on disk, the process table and a
# loopback listener of ours; the result JSON is checked, never trusted
# alone. TAP output.
#
#   MOAT=path/to/moat MOAT_SRC=repo bash tests/integration/test_bash_tool.sh
#
# `moat tool [--config F] [--cwd DIR] NAME 'ARGS_JSON'` prints one JSON
# object {ok, output, error, decision, data}; exit 0 success, 1 the tool
# failed, 3 denied, 2 bad input. A missing kernel feature skips, unless
# MOAT_MUST_WORK=1 (CI): then it fails.
set -u

MOAT=${MOAT:-$(command -v moat)}
. "$(dirname "$0")/../lib/tap.sh"
# a tag unique to this run: the process checks must not count the sleeps of
# another run on the same machine
U=$(($$ % 100000))


[ -x "$MOAT" ] || bail "no moat binary (set MOAT)"
require_sandbox
command -v python3 >/dev/null || bail "python3 is needed to read the result JSON"
"$MOAT" tool --help >/dev/null 2>&1 || bail "this moat has no working 'tool' subcommand"

T=$(mktemp -d /tmp/moat-bt-XXXXXX) || bail "mktemp"
chmod 755 "$T"
cleanup() {
	[ -n "${LISTENER_PID:-}" ] && kill "$LISTENER_PID" 2>/dev/null
	rm -rf "$T" 2>/dev/null
}
trap cleanup EXIT

WS=$T/ws
OUT=$T/outside
H=$T/home
mkdir -p "$WS/sub" "$OUT" "$H/.ssh"
echo "canary-content" >"$OUT/canary"
echo "ssh-private-key-SECRET1" >"$H/.ssh/id_rsa"
ln -s "$OUT" "$WS/escape"
# the sandbox for bash, the audit log in the scratch directory
cat >"$T/config.json" <<EOF
{"sandbox": {"mode": "linux"}, "audit_log": "$T/audit.jsonl"}
EOF
cat >"$T/nonet.json" <<EOF
{"sandbox": {"mode": "linux", "rules": [{"tool": "bash", "profile": "workspace-write-no-network"}]},
 "audit_log": "$T/audit.jsonl"}
EOF

AS=
RUNAS=()
# tool [--config F] ARGS_JSON: run `moat tool bash` in the workspace; sets
# $out (stdout) and $rc
tool() {
	local cfg=$T/config.json
	if [ "$1" = --config ]; then
		cfg=$2
		shift 2
	fi
	out=$(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 \
		${RUNAS[@]+"${RUNAS[@]}"} "$MOAT" tool --config "$cfg" --cwd "$WS" \
		--approve-with deny bash "$1" 2>"$T/stderr")
	rc=$?
}
# field EXPR: a Python expression over the result object r
field() {
	python3 -c '
import json, sys
r = json.loads(sys.argv[1])
v = eval(sys.argv[2])
print(*v) if isinstance(v, tuple) else print(v)' "$out" "$1" 2>/dev/null
}
canary_ok() { [ "$(cat "$OUT/canary")" = canary-content ] && [ "$(ls "$OUT")" = canary ]; }
procs() { # processes whose command line contains $1 (host view)
	local c=0 f
	for f in /proc/[0-9]*/cmdline; do
		{ tr '\0' ' ' <"$f"; } 2>/dev/null | grep -q -- "$1" && c=$((c + 1))
	done
	echo $c
}

suite() {
	local who=$1
	tool '{"command": "echo hi"}'
	check "$who: echo hi exits 0" [ $rc = 0 ] || echo "# $out $(cat "$T/stderr")"
	check "$who: ... ok, output and data.stdout are hi" \
		[ "$(field 'r["ok"], r["output"], r["data"]["stdout"], r["data"]["exit_code"]')" = "True hi
 hi
 0" ]
	check "$who: ... with a decision and the sandbox it ran under" \
		[ "$(field 'bool(r["decision"]) and r["data"]["sandbox"]["profile"]')" = workspace-write ]

	tool '{"command": "echo out; echo err >&2; exit 3"}'
	check "$who: a failing command exits 1" [ $rc = 1 ]
	check "$who: ... with its exit code, stdout and stderr" \
		[ "$(field 'r["ok"], r["data"]["exit_code"], r["data"]["stdout"], r["data"]["stderr"]')" = "False 3 out
 err" ]

	tool '{"command": "echo hi", "bogus": 1}'
	check "$who: an unknown argument is bad input (exit 2)" [ $rc = 2 ]
	tool '{"command": 5}'
	check "$who: a command that is not a string is bad input (exit 2)" [ $rc = 2 ]
	tool '{"command": "echo hi", "timeout": 0}'
	check "$who: timeout 0 is bad input (exit 2)" [ $rc = 2 ]

	tool '{"command": "pwd", "cwd": "sub"}'
	check "$who: cwd inside the workspace" [ "$(field 'r["data"]["stdout"].strip()')" = "$WS/sub" ]
	tool "{\"command\": \"touch '$OUT/ran'\", \"cwd\": \"escape\"}"
	check "$who: cwd through a symlink out of the workspace is refused" \
		[ $rc != 0 ] && [ ! -e "$OUT/ran" ]
	tool "{\"command\": \"touch ran\", \"cwd\": \"$OUT\"}"
	check "$who: cwd outside the workspace is refused" test $rc != 0 -a ! -e "$OUT/ran"

	tool "{\"command\": \"echo x > '$OUT/canary'; echo y > '$OUT/new'; rm -f '$OUT/canary'; echo in > inside\"}"
	check "$who: writes outside the workspace fail (the canary on disk)" canary_ok
	if [ $rc = 3 ]; then
		ok "$who: (the policy denied the call before the sandbox)"
	else
		check "$who: ... while a write inside lands" [ "$(cat "$WS/inside" 2>/dev/null)" = in ]
	fi
	rm -f "$WS/inside"

	tool '{"command": "cat ~/.ssh/id_rsa"}'
	check "$who: a masked secret is unreadable" eval '! grep -q SECRET1 <<<"$out"'

	local tag=7$U
	tool "{\"command\": \"sleep 9${tag}1 & (sleep 9${tag}2 &); sleep 9${tag}3; echo never\", \"timeout\": 1}"
	check "$who: a timeout is reported" [ "$(field 'r["ok"], r["data"]["timed_out"]')" = "False True" ]
	check "$who: ... and no process of the tree survives it" [ "$(procs "sleep 9${tag}")" = 0 ]

	# the network: a listener of ours counts connections
	: >"$T/conns"
	local connect="{\"command\": \"python3 -c 'import socket; socket.create_connection((\\\"127.0.0.1\\\", $PORT), 2)' && echo connected\"}"
	tool "$connect"
	for _ in $(seq 200); do [ -s "$T/conns" ] && break; sleep 0.05; done
	check "$who: network allowed by the default profile (the control)" [ -s "$T/conns" ]
	: >"$T/conns"
	tool --config "$T/nonet.json" "$connect"
	sleep 0.2
	check "$who: no connection under workspace-write-no-network" [ ! -s "$T/conns" ]
	check "$who: ... and the command says so" eval '! grep -q connected <<<"$(field "r[\"data\"][\"stdout\"]")"'
	check "$who: ... under the profile the rule gives bash" \
		[ "$(field 'r["data"]["sandbox"]["profile"]')" = workspace-write-no-network ]
}

# a loopback listener outside the sandbox
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
sleep 0.2

suite root
check "the audit log has one line per call, each parses" python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) >= 10, len(lines)
for l in lines: json.loads(l)' "$T/audit.jsonl"

if [ "$(id -u)" = 0 ]; then
	# nobody owns the canary too: only the sandbox keeps it unwritten
	chown -R nobody:nogroup "$WS" "$H" "$OUT"
	chmod 777 "$T"
	RUNAS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	rm -f "$T/audit.jsonl"
	suite nobody
else
	skip "running as nobody needs root"
fi

echo "1..$n"
[ $failed = 0 ]
