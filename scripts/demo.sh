#!/bin/bash
# make demo: walk through moat check decisions on the bundled example
# configuration, in a scratch workspace, and print them as a table.
set -u
moat=${1:-build/moat}
here=$(cd "$(dirname "$0")/.." && pwd)
ws=$(mktemp -d /tmp/moat-demo.XXXXXX)
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
echo "Try it yourself:  $moat check --config examples/config.json bash '{\"command\": \"sudo rm -rf /\"}'"
