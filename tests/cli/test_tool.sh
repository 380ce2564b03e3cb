#!/bin/bash
# moat tool: one tool call through policy, approval, sandbox and audit,
# driven from outside. Every claim is checked on disk or in the audit log,
# never in moat's own output alone. TAP output.
set -u
MOAT=${MOAT:-build/moat}
. "$(dirname "$0")/../lib/tap.sh"
require_sandbox
n=0
failed=0
tmp=$(mktemp -d /var/tmp/moat-tool-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
export XDG_CONFIG_HOME="$tmp/xdg" XDG_STATE_HOME="$tmp/state"
ws="$tmp/ws"
mkdir -p "$ws/src" "$tmp/outside" "$tmp/home/.ssh"
echo "hello world" >"$ws/hello.txt"
echo "outside secret" >"$tmp/outside/secret.txt"
echo "PRIVATE-KEY-CANARY" >"$tmp/home/.ssh/id_rsa"
export HOME="$tmp/home"
cd "$ws"
A="$tmp/audit.jsonl"

ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "#   $l"; done; }
expect() {
	local want=$1 what=$2
	shift 3
	out=$("$@" 2>"$tmp/err" </dev/null)
	rc=$?
	err=$(cat "$tmp/err")
	if [ "$rc" = "$want" ]; then ok "$what"; else nok "$what (exit $rc, wanted $want)" "out: $out" "err: $err"; fi
}
contains() { case "$1" in *"$2"*) ok "$3" ;; *) nok "$3" "wanted '$2' in: ${1:0:400}" ;; esac; }
lacks() { case "$1" in *"$2"*) nok "$3" "did not want '$2' in: ${1:0:400}" ;; *) ok "$3" ;; esac; }
lines() { [ -f "$1" ] && wc -l <"$1" | tr -d ' ' || echo 0; }
T() { "$MOAT" tool --audit-log "$A" --cwd "$ws" "$@"; }

# ---- happy paths ----
expect 0 "read_file in the workspace" -- T read_file '{"path": "hello.txt"}'
contains "$out" "hello world" "read_file returns the content"
contains "$out" '"ok":true' "result says ok"
contains "$out" '"verdict":"allow"' "result carries the decision"
expect 0 "write_file" -- T write_file '{"path": "src/new.txt", "content": "fresh\n"}'
[ "$(cat "$ws/src/new.txt" 2>/dev/null)" = "fresh" ] && ok "write_file wrote the bytes" || nok "write_file wrote the bytes"
expect 0 "edit_file" -- T edit_file '{"path": "src/new.txt", "old_string": "fresh", "new_string": "edited"}'
[ "$(cat "$ws/src/new.txt")" = "edited" ] && ok "edit_file changed the bytes" || nok "edit_file changed the bytes"
printf 'a\na\n' >"$ws/dup.txt"
expect 1 "edit_file with an ambiguous old_string fails" -- T edit_file '{"path": "dup.txt", "old_string": "a", "new_string": "b"}'
[ "$(cat "$ws/dup.txt")" = "$(printf 'a\na')" ] && ok "the ambiguous edit changed nothing" || nok "the ambiguous edit changed nothing"
expect 0 "list_directory" -- T list_directory '{"path": "."}'
contains "$out" "hello.txt" "list_directory lists the file"
expect 0 "bash echo" -- T bash '{"command": "echo hi"}'
contains "$out" '"stdout":"hi\n"' "bash returns stdout"
expect 1 "bash exit 3 is a failed tool call" -- T bash '{"command": "exit 3"}'
contains "$out" '"exit_code":3' "the exit code is reported"
expect 0 "run_shell_command is an alias of bash" -- T run_shell_command '{"command": "echo alias"}'
contains "$out" "alias" "the alias ran"

# ---- refusals: nothing happens ----
expect 3 "a denied path is denied" -- T read_file '{"path": "'"$HOME"'/.ssh/id_rsa"}'
lacks "$out" "PRIVATE-KEY-CANARY" "the key is not in the output"
expect 3 "hardline is denied" -- T bash '{"command": "rm -rf ~"}'
[ -f "$HOME/.ssh/id_rsa" ] && ok "home is intact" || nok "home is intact"
before=$(lines "$A")
expect 2 "malformed JSON exits 2" -- T write_file '{"path": "x.txt", "content": '
expect 2 "duplicate keys exit 2" -- T write_file '{"path": "x.txt", "content": "a", "content": "b"}'
expect 2 "a NUL in a string exits 2" -- T write_file '{"path": "x.txt\u0000y", "content": "a"}'
expect 2 "a wrong type exits 2" -- T write_file '{"path": "x.txt", "content": 5}'
expect 2 "an unknown argument exits 2" -- T write_file '{"path": "x.txt", "content": "a", "mode": 511}'
expect 2 "an unknown tool exits 2" -- T frobnicate '{"path": "x.txt"}'
[ ! -e "$ws/x.txt" ] && ok "no bad input wrote anything" || nok "no bad input wrote anything"
after=$(lines "$A")
[ $((after - before)) = 6 ] && ok "each bad call still has one audit record" || nok "each bad call still has one audit record ($before -> $after)"
expect 2 "missing arguments" -- "$MOAT" tool read_file
expect 2 "unknown option" -- "$MOAT" tool --frob read_file '{}'
expect 2 "bad --approve-with" -- "$MOAT" tool --approve-with maybe read_file '{}'

# ---- approvals ----
expect 3 "ASK without a human is denied" -- T --require-approval --approve-with deny write_file '{"path": "ask.txt", "content": "x"}'
[ ! -e "$ws/ask.txt" ] && ok "the denied ask wrote nothing" || nok "the denied ask wrote nothing"
contains "$out" "approv" "the denial says why (approval)"
# piped stdin must not answer the terminal prompt; with no terminal, denied
out=$(echo y | setsid "$MOAT" tool --audit-log "$A" --cwd "$ws" --require-approval write_file '{"path": "ask2.txt", "content": "x"}' 2>/dev/null)
rc=$?
[ "$rc" = 3 ] && [ ! -e "$ws/ask2.txt" ] && ok "piped 'y' does not approve (no terminal: denied)" || nok "piped 'y' does not approve" "rc $rc out $out"
cat >"$tmp/pre.json" <<'EOT'
{"require_approval_for_execute": true,
 "approvals": [{"tool": "bash", "arg": "command", "match": "touch pre*"},
               {"tool": "bash", "arg": "command", "match": "rm *"}]}
EOT
expect 0 "a pre-approved command runs" -- T --config "$tmp/pre.json" --approve-with allow-listed bash '{"command": "touch pre.txt"}'
[ -e "$ws/pre.txt" ] && ok "the pre-approved command ran" || nok "the pre-approved command ran"
expect 3 "a command outside the pre-approval is denied" -- T --config "$tmp/pre.json" --approve-with allow-listed bash '{"command": "touch nope.txt"}'
[ ! -e "$ws/nope.txt" ] && ok "it did not run" || nok "it did not run"
expect 3 "a pre-approval never lifts a hard deny" -- T --config "$tmp/pre.json" --approve-with allow-listed bash '{"command": "rm -rf /"}'

# ---- the audit log ----
rm -f "$A"
expect 0 "a call with a secret in its arguments" -- T write_file '{"path": "env.txt", "content": "token sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}'
[ "$(lines "$A")" = 1 ] && ok "one record per call" || nok "one record per call ($(lines "$A"))"
rec=$(cat "$A")
lacks "$rec" "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" "the secret is redacted in the audit log"
contains "$rec" '"tool":"write_file"' "the record names the tool"
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$A" && ok "every record parses" || nok "every record parses"
# an unwritable audit log fails closed: nothing runs
expect 2 "an unwritable audit log refuses the call" -- "$MOAT" tool --audit-log "$tmp/no/such/dir/audit.jsonl" --cwd "$ws" bash '{"command": "touch ran.txt"}'
[ ! -e "$ws/ran.txt" ] && ok "nothing ran without an audit log" || nok "nothing ran without an audit log"
printf '{"audit_required": false, "audit_log": "%s"}' "$tmp/no/such/dir/a.jsonl" >"$tmp/noaudit.json"
expect 0 "audit_required: false lets it run" -- "$MOAT" tool --config "$tmp/noaudit.json" --cwd "$ws" bash '{"command": "touch ran.txt"}'
[ -e "$ws/ran.txt" ] && ok "it ran" || nok "it ran"

# ---- the audit log inside the workspace: the command cannot touch it ----
mkdir -p "$tmp/aw/logs"
ln -s logs "$tmp/aw/ln"
AW=$tmp/aw/ln/a.jsonl
"$MOAT" tool --audit-log "$AW" --cwd "$tmp/aw" bash '{"command": "echo forged >> logs/a.jsonl; mv logs logs2; ln -sfn elsewhere ln"}' >/dev/null 2>&1
! grep -qx forged "$tmp/aw/logs/a.jsonl" && ok "bash cannot write the session's audit log inside the workspace (reached through a link)" ||
	nok "bash cannot write the session's audit log inside the workspace" "$(cat "$tmp/aw/logs/a.jsonl")"
[ -d "$tmp/aw/logs" ] && [ ! -e "$tmp/aw/logs2" ] && ok "... nor move its directory" || nok "... nor move its directory"
[ "$(lines "$tmp/aw/logs/a.jsonl")" = 1 ] && ok "... and the call's record is there" || nok "... and the call's record is there"

# ---- a project file's denied paths are masked for bash too ----
mkdir -p "$tmp/pj/.moat"
echo "PROJECT-SECRET" >"$tmp/pj/secret.txt"
echo '{"denied_paths": ["**/secret.txt"]}' >"$tmp/pj/.moat/config.json"
out=$("$MOAT" tool --audit-log "$A" --cwd "$tmp/pj" bash '{"command": "cat s*.txt"}' 2>/dev/null)
lacks "$out" "PROJECT-SECRET" "a project's denied path is unreadable from bash (a glob the policy cannot see)"

# ---- a real path that needs approval of its own ----
# ".." after a missing name: the decision resolves the collapsed spelling
# too, so the write to a startup file under ~/.config behind the link is
# asked about (no terminal here: denied), and nothing is made there
mkdir -p "$HOME/.config"
ln -s "$HOME/.config" "$ws/cfgln"
expect 3 "write_file through nope/../LINK to a startup path is asked about, and denied" -- \
	T write_file '{"path": "nope/../cfgln/systemd/user/evil.service", "content": "x"}'
contains "$out" 'startup-write:~/.config/systemd/user/evil.service' "... the ask names the startup file behind the link"
[ ! -e "$HOME/.config/systemd" ] && ok "... and nothing was made behind the link" ||
	nok "nothing was made behind the link" "$(ls -R "$HOME/.config")"
rm -f "$ws/cfgln"

# ---- replay ----
printf '{"tool": "write_file", "args": {"path": "r1.txt", "content": "1"}}\n{"tool": "write_file", "args": {"path": "r2.txt"\n' >"$tmp/bad.jsonl"
expect 2 "a malformed session file is refused" -- T --replay "$tmp/bad.jsonl"
[ ! -e "$ws/r1.txt" ] && ok "nothing of it ran" || nok "nothing of it ran"
contains "$err" "bad.jsonl:2" "the error names the line"
printf '{"tool": "bash", "args": {"command": "echo one >> r.txt"}, "answer": "always"}\n{"tool": "bash", "args": {"command": "echo two >> r.txt"}}\n' >"$tmp/ok.jsonl"
expect 0 "replay runs a session" -- T --require-approval --replay "$tmp/ok.jsonl"
[ "$(cat "$ws/r.txt" 2>/dev/null | tr '\n' ' ')" = "one two " ] && ok "always is remembered for the session" || nok "always is remembered" "$(cat "$ws/r.txt" 2>/dev/null)"

echo "1..$n"
[ "$failed" = 0 ]
