#!/bin/bash
# The reference MCP filesystem server's public test suite (npm
# @modelcontextprotocol/server-filesystem, src/filesystem/__tests__ in
# modelcontextprotocol/servers), ported onto `moat mcp` where it applies and
# driven by the official TypeScript SDK client: tests/mcp/peer_fs.mjs. This
# passes its TAP through, keeping its TODO and SKIP directives: a TODO is a
# known gap in moat and does not fail the suite.
#
#   MOAT=path/to/moat MOAT_SRC=repo bash tests/mcp/test_peer_fs.sh
#
# Needs node and the npm packages scripts/deps.sh installs (MOAT_NPM_PREFIX,
# /opt/moat-npm or ~/.cache/moat-npm). Without them the suite skips, saying
# why, except in CI (CI=true or MOAT_MUST_WORK=1), where that is a failure.
set -u

MOAT=${MOAT:-$(command -v moat)}
SRC=${MOAT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
DIR=$SRC/tests/mcp
MUST=${MOAT_MUST_WORK:-0}
[ "${CI:-}" = true ] && MUST=1
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
skip_all() {
	if [ "$MUST" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - $* (CI: the MCP tests must run; run scripts/deps.sh)"
		exit 1
	fi
	echo "1..0 # SKIP $*"
	exit 0
}

[ -x "$MOAT" ] || { echo "1..1"; echo "not ok 1 - no moat binary (set MOAT)"; exit 1; }
command -v node >/dev/null 2>&1 || skip_all "node is not installed"
if [ -z "${MOAT_NPM_PREFIX:-}" ]; then
	for p in /opt/moat-npm "${HOME:-/nonexistent}/.cache/moat-npm"; do
		if [ -d "$p/node_modules/@modelcontextprotocol/sdk" ]; then
			MOAT_NPM_PREFIX=$p
			break
		fi
	done
fi
[ -n "${MOAT_NPM_PREFIX:-}" ] && [ -d "$MOAT_NPM_PREFIX/node_modules/@modelcontextprotocol/sdk" ] ||
	skip_all "the npm package @modelcontextprotocol/sdk is not installed"
export MOAT MOAT_NPM_PREFIX

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# the script bounds its own calls; this bounds a hang of the client itself
timeout -k 5 180 node "$DIR/peer_fs.mjs" >"$out" 2>&1
rc=$?
plan=0
todo=0
while IFS= read -r line; do
	case $line in
	"ok "* | "not ok "*)
		plan=1
		desc=${line#* - }
		case $line in
		*" # TODO "* | *" # SKIP "*)
			# a directive: pass it through as is, it never fails the suite
			n=$((n + 1))
			case $line in *" # TODO "*) todo=$((todo + 1)) ;; esac
			case $line in
			"ok "*) echo "ok $n - $desc" ;;
			*) echo "not ok $n - $desc" ;;
			esac
			;;
		"ok "*) ok "$desc" ;;
		*) nok "$desc" ;;
		esac
		;;
	1..*) ;;
	*) echo "# $line" ;;
	esac
done <"$out"
if [ "$rc" != 0 ] && [ "$plan" = 0 ]; then
	nok "peer_fs: the script failed before any check (status $rc)"
elif [ "$rc" -ge 124 ]; then
	nok "peer_fs: the script was killed (status $rc, timeout?)"
fi
echo "# $todo known gaps (TODO) in moat against the reference server's tests"
echo "1..$n"
[ "$failed" = 0 ]
