#!/bin/bash
# Big workspaces (docs/sandbox.md: masks), judged from outside: in a
# workspace shaped like a monorepo after a build (tests/helpers/mktree.c:
# 60,000 entries, 10,000 .pem files in one directory beside a README, more
# in node_modules, .env files 40 levels down and in node_modules, .git,
# .venv and target/), every secret the default denied paths name is
# unreadable in the sandbox, under the default fallback, while its
# neighbours stay readable and writable; so is a secret added between two
# runs and one in a directory renamed into the workspace. A workspace that
# needs more masks than the kernel allows mounts is refused, saying which
# and what to do. As nobody, a directory of root's it cannot enter does
# not stop a run (its command cannot enter it either), one of its own it
# cannot enter does (its command could chmod it open). As root and as
# nobody. TAP output.
#
#   MOAT=path/to/moat MOAT_MKTREE=path/to/mktree bash tests/integration/test_bigws.sh
set -u

MOAT=${MOAT:-$(command -v moat)}
MKTREE=${MOAT_MKTREE:-}
. "$(dirname "$0")/../lib/tap.sh"
[ -x "$MOAT" ] || bail "no moat binary (set MOAT)"
require_sandbox
[ -x "$MKTREE" ] || bail "no mktree helper (set MOAT_MKTREE)"
command -v setpriv >/dev/null || bail "setpriv (util-linux) is needed"

T=$(mktemp -d /var/tmp/moat-bigws.XXXXXX)
chmod 755 "$T"
# as root the trees live on a tmpfs of their own: 180,000 files are made
# and gone in a second or two there, not in a minute
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=1g,nr_inodes=2m,mode=755 moat-bigws "$T" 2>/dev/null; then
	trap 'umount -l "$T"; rmdir "$T"' EXIT
else
	trap 'rm -rf "$T"' EXIT
fi

users=("$(id -un)")
[ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && users+=(nobody)

# the command reads every file named in list.txt and prints LEAK for each
# whose first line is the secret (no process per file: 12,000 of them)
cat >"$T/reader.sh" <<'EOS'
n=0
while IFS= read -r f; do
	if { IFS= read -r l <"$f"; } 2>/dev/null && [ "$l" = SECRET ]; then
		n=$((n + 1))
		[ $n -le 5 ] && echo "LEAK $f"
	fi
done <"$1"
echo "leaks=$n"
EOS

for U in "${users[@]}"; do
	R=$T/$U
	WS=$R/ws
	mkdir -p "$R/home" "$R/outside"
	MKTREE_LIST=1 "$MKTREE" "$WS" 60000 20000 >"$R/secrets.txt" 2>/dev/null ||
		bail "mktree failed"
	echo "readme-ok" >"$WS/test/certs/README"
	deep=$(dirname "$(grep -m1 '/l39/.env$' "$R/secrets.txt")")
	echo "notes-ok" >"$deep/notes.txt"
	cp "$T/reader.sh" "$WS/reader.sh"
	cp "$R/secrets.txt" "$WS/list.txt"
	if [ "$U" = root ]; then runas=(); else
		chown -R "$U" "$R"
		runas=(setpriv --reuid="$U" --regid="$(id -g "$U")" --clear-groups --)
	fi
	run() {
		(cd "$WS" && env -i PATH=/usr/bin:/bin HOME="$R/home" LANG=C.UTF-8 \
			${runas[@]+"${runas[@]}"} "$MOAT" run --workspace "$WS" -- "$@")
	}
	nsec=$(wc -l <"$R/secrets.txt")
	grep -q '/node_modules/.*/.env$' "$R/secrets.txt" && grep -q '/.git/.env$' "$R/secrets.txt" &&
		grep -q '/.venv/.*/.env$' "$R/secrets.txt" && grep -q '/target/.*/.env$' "$R/secrets.txt" ||
		bail "mktree made no secret in node_modules, .git, .venv or target"

	out=$(run sh reader.sh list.txt 2>&1)
	rc=$?
	check "$U: $nsec secrets in a 60,000-entry workspace: the run goes ahead (rc $rc)" [ $rc = 0 ]
	check "$U: ... none of them is readable (depth 40, node_modules, .git, .venv, target/)" \
		grep -q '^leaks=0$' <<<"$out"
	grep LEAK <<<"$out" | sed 's/^/# /'
	out=$(run sh -c 'cat test/certs/README "$1/notes.txt"; echo new-ok >test/certs/new.txt' sh "$deep" 2>&1)
	check "$U: ... their neighbours are readable" cond 'grep -q readme-ok <<<"$out" && grep -q notes-ok <<<"$out"'
	check "$U: ... and the directory of 10,000 certificates is writable (seen from outside)" \
		cond '[ "$(cat "$WS/test/certs/new.txt" 2>/dev/null)" = new-ok ]'

	# a secret added between two runs, and a directory renamed in
	mkdir -p "$WS/src/fresh" "$WS/node_modules/newpkg" "$R/outside/tree/sub"
	echo SECRET >"$WS/src/fresh/.env"
	echo SECRET >"$WS/node_modules/newpkg/server.key"
	echo SECRET >"$R/outside/tree/sub/id_rsa"
	echo SECRET >"$R/outside/tree/.env"
	[ "$U" = root ] || chown -R "$U" "$R"
	mv "$R/outside/tree" "$WS/src/moved"
	printf '%s\n' "$WS/src/fresh/.env" "$WS/node_modules/newpkg/server.key" \
		"$WS/src/moved/sub/id_rsa" "$WS/src/moved/.env" >"$WS/list2.txt"
	out=$(run sh reader.sh list2.txt 2>&1)
	check "$U: secrets added since the last run, and a tree renamed in, are not readable" \
		grep -q '^leaks=0$' <<<"$out"
	grep LEAK <<<"$out" | sed 's/^/# /'

	# as nobody: a directory of root's, mode 0700, neither nobody nor its
	# command can enter: the run goes ahead (the secret in it stays
	# unreadable); one of nobody's own, mode 000, its command could chmod
	# open: refused
	if [ "$U" != root ]; then
		mkdir -p "$WS/rootonly" "$WS/mine"
		echo SECRET >"$WS/rootonly/.env"
		chown root:root "$WS/rootonly"
		chmod 0700 "$WS/rootonly"
		out=$(run sh -c 'cat rootonly/.env; echo ran' 2>&1)
		rc=$?
		check "$U: a directory of root's it cannot enter: the run goes ahead (rc $rc), the secret unread" \
			cond 'grep -q "^ran$" <<<"$out" && ! grep -q SECRET <<<"$out"'
		echo SECRET >"$WS/mine/.env"
		chown -R "$U" "$WS/mine"
		chmod 000 "$WS/mine"
		out=$(run sh -c 'chmod 700 mine; cat mine/.env; echo ran' 2>&1)
		rc=$?
		check "$U: one of its own it cannot enter (its command could chmod it): refused (rc $rc)" \
			cond '[ $rc = 125 ] && ! grep -q SECRET <<<"$out" && grep -q "cannot read the directory" <<<"$out"'
		chmod 700 "$WS/mine"
		rm -rf "$WS/rootonly" "$WS/mine"
	fi
done

# more masks than the kernel allows mounts: refused, naming the cause
# (the sanitizer build takes minutes over 100,000 mounts' worth of
# operations: there the check is left to the normal build)
if [ "$(id -u)" = 0 ]; then
	max=$(cat /proc/sys/fs/mount-max 2>/dev/null || echo 100000)
	if grep -q __asan_init "$MOAT" 2>/dev/null; then
		na "the mount-limit refusal: the sanitizer build is too slow for 100,000 masks"
	elif [ "$max" -le 110000 ]; then
		M=$T/many
		"$MKTREE" "$M" 1000 $((2 * (max + 500))) >/dev/null 2>&1 || bail "mktree failed"
		out=$(cd "$M" && env -i PATH=/usr/bin:/bin HOME="$T/root/home" "$MOAT" run --workspace "$M" -- touch "$M/ran" 2>&1)
		rc=$?
		check "more secrets than fs.mount-max allows: refused (rc $rc), nothing runs" \
			cond '[ $rc = 125 ] && [ ! -e "$M/ran" ]'
		check "... the error names the directory, the limit and exempt_paths" \
			cond 'grep -q "$M/test/certs" <<<"$out" && grep -q "fs.mount-max" <<<"$out" && grep -q exempt_paths <<<"$out"'
		grep -q exempt_paths <<<"$out" || echo "# $out"
		echo '{"safety": {"exempt_paths": ["**/test/certs/*.pem"]}}' >"$T/exempt.json"
		echo "fixture-ok" >"$M/test/certs/cert7.pem"
		out=$(cd "$M" && env -i PATH=/usr/bin:/bin HOME="$T/root/home" "$MOAT" run --config "$T/exempt.json" \
			--workspace "$M" -- sh -c 'cat test/certs/cert7.pem; cat node_modules/pkg7/.env' 2>&1)
		check "... with the fixtures exempted (exempt_paths) it runs: they are readable, the rest masked" \
			cond 'grep -q fixture-ok <<<"$out" && ! grep -q SECRET <<<"$out"'
	else
		skip "fs.mount-max is $max here: too many files to make"
	fi
fi
echo "1..$n"
[ "$failed" = 0 ]
