#!/bin/bash
# make demo: walk through moat check decisions on the bundled example
# configuration, in a scratch workspace, and print them as a table.
set -u
moat=${1:-build/moat}
here=$(cd "$(dirname "$0")/.." && pwd)
# not under /tmp: the sandbox gets a private /tmp, and the canary outside the
# workspace must stay visible to be a fair test
ws=$(mktemp -d /var/tmp/moat-demo.XXXXXX)
trap 'rm -rf "$ws"' EXIT
mkdir -p "$ws/project/src" "$ws/project/docs/keys" "$ws/outside"
echo 'int main(void) { return 0; }' >"$ws/project/src/main.c"
echo 'API_KEY=sk-demo' >"$ws/project/.env"
echo 'secret' >"$ws/outside/todo.txt"
# a symlink inside the workspace that leads outside it
ln -s "$ws/outside" "$ws/project/notes-link"

echo "moat demo: 'moat check' on examples/config.json, workspace $ws/project"
echo "(nothing is run; each row is what moat would decide for that agent tool call)"
echo
printf '%-4s %-11s %-52s %-6s %s\n' "#" "tool" "arguments" "verdict" "rule"
printf '%s\n' "$(printf '%.0s-' {1..120})"
i=0
while IFS=$'\t' read -r tool args; do
	[ -n "$tool" ] || continue
	i=$((i + 1))
	out=$("$moat" check --config "$here/examples/config.json" --cwd "$ws/project" "$tool" "$args" 2>/dev/null)
	verdict=$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["decision"].upper())' 2>/dev/null || echo "ERROR")
	rule=$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["rule"])' 2>/dev/null)
	reason=$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["reason"])' 2>/dev/null)
	short=$args
	[ ${#short} -gt 52 ] && short="${short:0:49}..."
	printf '%-4s %-11s %-52s %-7s %s\n' "$i" "$tool" "$short" "$verdict" "$rule"
	printf '%-4s %-11s %s\n' "" "" "  -> $reason"
done <"$here/examples/checks.txt"

echo
echo "moat run: a shell command the policy allowed, confined by the kernel"
echo "(workspace-write profile, network denied; each line is checked from outside)"
echo
mkdir -p "$ws/home/.ssh"
echo "PRIVATE KEY" >"$ws/home/.ssh/id_ed25519"
canary="$ws/outside/canary.txt"
echo untouched >"$canary"
python3 -c 'import socket,time,sys
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(5); print(s.getsockname()[1]); sys.stdout.flush()
s.settimeout(20)
try:
    c,_=s.accept(); open(sys.argv[1],"w").write("connected")
except Exception: pass' "$ws/listener.log" >"$ws/port" &
lpid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$ws/port" ] && break; sleep 0.1; done
port=$(cat "$ws/port")
HOME="$ws/home" "$moat" run --workspace "$ws/project" --net deny -- sh -c "
	echo built >build.log
	echo pwned >'$canary' 2>/dev/null
	cat '$ws/home/.ssh/id_ed25519' >leak.txt 2>/dev/null
	python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $port), 2)' 2>/dev/null
	ps -e >procs.txt 2>/dev/null
	true" 2>/dev/null
kill "$lpid" 2>/dev/null
wait "$lpid" 2>/dev/null
row() { printf '  %-52s %s\n' "$1" "$2"; }
[ -f "$ws/project/build.log" ] && row "write inside the workspace" "ok (allowed)" || row "write inside the workspace" "FAILED"
[ "$(cat "$canary")" = untouched ] && row "write a file outside the workspace" "blocked" || row "write outside" "NOT BLOCKED"
[ -s "$ws/project/leak.txt" ] && row "read ~/.ssh/id_ed25519" "NOT BLOCKED" || row "read ~/.ssh/id_ed25519" "blocked (masked)"
[ -s "$ws/listener.log" ] && row "connect to a listener on the host's loopback" "NOT BLOCKED" || row "connect to a listener on the host's loopback" "blocked (own network namespace)"
n=$(grep -vc PID "$ws/project/procs.txt" 2>/dev/null || echo 0)
row "processes visible to the command" "$n: its shell and ps (own PID namespace)"
echo
echo "'$moat status' shows what this kernel enforces."
echo
echo "Try it yourself:  $moat check --config examples/config.json bash '{\"command\": \"sudo rm -rf /\"}'"
