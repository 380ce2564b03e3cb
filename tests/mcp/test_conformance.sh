#!/bin/bash
# The MCP conformance suite (npm @modelcontextprotocol/conformance) against
# `moat mcp`: the server scenarios that apply to a tools server (initialize,
# ping, tools-list, logging-set-level). The suite speaks Streamable HTTP
# only, so npm supergateway bridges it to moat's stdio (one moat per
# session, --stateful). The suite calls fs.globSync, which Node 20 lacks:
# node20-shim.mjs supplies it (node --import).
#
# A scenario moat does not implement (completion-complete) must FAIL here:
# that shows the suite really reaches moat through the bridge.
#
#   MOAT=path/to/moat MOAT_SRC=repo bash tests/mcp/test_conformance.sh
set -u

MOAT=${MOAT:-$(command -v moat)}
SRC=${MOAT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
DIR=$SRC/tests/mcp
SCENARIOS="server-initialize ping tools-list logging-set-level"
. "$(dirname "$0")/../lib/tap.sh"
[ "${CI:-}" = true ] && MUST=1

[ -x "$MOAT" ] || { echo "1..1"; echo "not ok 1 - no moat binary (set MOAT)"; exit 1; }
command -v node >/dev/null 2>&1 || skip_all "node is not installed"
npm_prefix @modelcontextprotocol/conformance
NM=${MOAT_NPM_PREFIX:-/nonexistent}/node_modules
CONF=$NM/@modelcontextprotocol/conformance/dist/index.js
GW=$NM/supergateway/dist/index.js
[ -f "$CONF" ] || skip_all "the npm package @modelcontextprotocol/conformance is not installed"
[ -f "$GW" ] || skip_all "the npm package supergateway is not installed"

T=$(mktemp -d /tmp/moat-conf-XXXXXX) || exit 1
GW_PID=
cleanup() {
	[ -n "$GW_PID" ] && kill "$GW_PID" 2>/dev/null && wait "$GW_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/ws" "$T/home"
echo '{}' >"$T/config.json"
echo hello >"$T/ws/hello.txt"

# a free loopback port
PORT=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')
HOME=$T/home XDG_CONFIG_HOME=$T/home/.config XDG_STATE_HOME=$T/home/.state \
	node "$GW" --stdio "$MOAT mcp --workspace $T/ws --config $T/config.json --audit-log $T/audit.jsonl" \
	--outputTransport streamableHttp --stateful --port "$PORT" --logLevel none \
	--healthEndpoint /healthz >"$T/gateway.log" 2>&1 &
GW_PID=$!
up=0
for _ in $(seq 1 100); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then up=1; break; fi
	sleep 0.1
done
if [ "$up" != 1 ]; then
	nok "supergateway listens on 127.0.0.1:$PORT"
	sed 's/^/# /' "$T/gateway.log"
	echo "1..$n"
	exit 1
fi

# run_scenario NAME: 0 when the suite reports every check passed
run_scenario() {
	local out=$T/$1.out
	timeout -k 5 120 node --import "$DIR/node20-shim.mjs" "$CONF" server \
		--url "http://127.0.0.1:$PORT/mcp" --scenario "$1" -o "$T/results" >"$out" 2>&1
	local rc=$?
	LAST=$(sed 's/\x1b\[[0-9;]*m//g' "$out")
	[ "$rc" = 0 ] && printf '%s\n' "$LAST" | grep -Eq '^Passed: ([0-9]+)/\1, 0 failed'
}

for s in $SCENARIOS; do
	if run_scenario "$s"; then
		ok "conformance server scenario $s passes"
	else
		nok "conformance server scenario $s passes"
		printf '%s\n' "$LAST" | sed 's/^/# /'
	fi
done
if run_scenario completion-complete; then
	nok "completion-complete (not offered by moat) fails: the suite really reaches moat"
else
	ok "completion-complete (not offered by moat) fails: the suite really reaches moat"
fi
lines=$(grep -c . "$T/audit.jsonl" 2>/dev/null || true)
if [ "${lines:-0}" = 0 ]; then ok "the scenarios made no tool call (no audit line)"; else
	nok "the scenarios made no tool call (no audit line): $lines"
fi

echo "1..$n"
[ "$failed" = 0 ]
