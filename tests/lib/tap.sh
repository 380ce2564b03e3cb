# TAP helpers for the shell test suites, sourced (never run):
#   . "$(dirname "$0")/../lib/tap.sh"
# They count in n and failed (set to 0 here) and read MUST (1: a skip is a
# failure, as in CI; set here from MOAT_MUST_WORK, else 0; a script may
# raise it after sourcing). The script prints the plan ("1..$n") and exits
# with failed > 0 itself.
# shellcheck shell=bash
n=0
failed=0
MUST=${MOAT_MUST_WORK:-0}

ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { # check DESC CMD...
	local d=$1
	shift
	if "$@"; then ok "$d"; else
		nok "$d"
		return 1
	fi
}
checke() { # checke DESC 'SHELL EXPRESSION' (evaluated here: && and || work)
	local d=$1
	if eval "$2"; then ok "$d"; else
		nok "$d"
		return 1
	fi
}
cond() { eval "$1"; } # check DESC cond 'A && B': every part counts
skip() {
	if [ "$MUST" = 1 ]; then nok "$* (MOAT_MUST_WORK=1: a skip is a failure)"; else
		n=$((n + 1))
		echo "ok $n - # SKIP $*"
	fi
}
na() { ok "$* (does not apply in this mode)"; } # inherent to the mode, not a missing feature
todo() { n=$((n + 1)); echo "not ok $n - $* # TODO not provable here"; }
bail() {
	echo "1..$((n + 1))"
	echo "not ok $((n + 1)) - $*"
	exit 1
}

# The preamble of the node suites (tests/mcp, tests/agents).
# skip_all REASON: the whole suite skips, saying why; a failure under MUST
# (MUST_HINT says what would make it run).
skip_all() {
	if [ "$MUST" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - $* (CI: this suite must run; ${MUST_HINT:-run scripts/deps.sh})"
		exit 1
	fi
	echo "1..0 # SKIP $*"
	exit 0
}
# require_sandbox: the suite needs `moat run` with the protections of its
# default profile. Where moat refuses them because the machine withholds
# what they need (a container without a mount namespace or with a masked
# /proc: moat fails closed, exit 125, "cannot enforce ..."), the suite
# skips whole, giving moat's reason. Under MUST (CI) that is a failure.
require_sandbox() {
	local d out rc m
	m=$(realpath "$MOAT") || return 0
	d=$(mktemp -d) || return 0
	out=$(cd "$d" && "$m" run -- /bin/true 2>&1)
	rc=$?
	rm -rf "$d"
	if [ $rc = 125 ] && grep -q "cannot enforce" <<<"$out"; then
		out=${out%%$'\n'*}
		MUST_HINT="run the suites on the host, or in a container with --privileged (README)" \
			skip_all "moat run refuses here, as it must (the first reason): ${out#moat run: }"
	fi
}
# npm_prefix PKG...: unless MOAT_NPM_PREFIX is set, the first of
# scripts/deps.sh's prefixes that holds one of the packages, else nothing.
npm_prefix() {
	local p k
	[ -n "${MOAT_NPM_PREFIX:-}" ] && return 0
	for p in /opt/moat-npm "${HOME:-/nonexistent}/.cache/moat-npm"; do
		for k in "$@"; do
			[ -d "$p/node_modules/$k" ] && { MOAT_NPM_PREFIX=$p; return 0; }
		done
	done
	return 0
}
