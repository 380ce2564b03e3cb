#!/bin/bash
# A workspace changed while a run is prepared (docs/sandbox.md: masks),
# judged from outside: another process of the user renames directories of
# the workspace in a loop while `moat run -- cat` reads the secrets through
# the names being swapped. The sandboxed cat must never print a secret: a
# run either goes ahead with every secret masked, or is refused (exit 125,
# saying that the workspace changed while it was prepared). Three races,
# each RACE_RUNS runs (default 25: at the leak rates seen before the fix,
# 7 to 26 in 100, each race misses a regression at most one time in 6,
# all six together about once in 50,000 runs): two directories
# trading names (one holds a .env), the directory of a secret moved away
# with a link to it left under its name and moved back, and two trees
# trading names one level down (the secret three levels below them); and
# the first again with the workspace under /tmp. Then,
# with nothing racing, the run goes ahead; and multi-component patterns
# through a linked directory (`**/.docker/config.json` with `.docker` a link
# into the workspace and one out of it, `**/.config/gh/hosts.yml` with `gh`
# a link, and with `.config` one): neither spelling of the secret is
# readable, the linked directory's other files are. As root and as nobody.
# TAP output.
#
#   MOAT=path/to/moat bash tests/integration/test_scan_race.sh
set -u

MOAT=${MOAT:-$(command -v moat)}
RUNS=${RACE_RUNS:-25}
# (a sanitizer build looks for memory errors on these paths, not for the
# race's odds: a few runs of each race)
[ -n "${ASAN_OPTIONS:-}" ] && [ -z "${RACE_RUNS:-}" ] && RUNS=8
. "$(dirname "$0")/../lib/tap.sh"
[ -x "$MOAT" ] || bail "no moat binary (set MOAT)"
require_sandbox
command -v setpriv >/dev/null || bail "setpriv (util-linux) is needed"

T=$(mktemp -d /var/tmp/moat-race.XXXXXX)
# a workspace under /tmp too: hidden by the sandbox's private /tmp and
# brought back, its masks prepared another way
TT=$(mktemp -d /tmp/moat-race.XXXXXX)
chmod 755 "$T" "$TT"
loop_pid=
trap '[ -n "$loop_pid" ] && kill "$loop_pid" 2>/dev/null; rm -rf "$T" "$TT"' EXIT

users=("$(id -un)")
[ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && users+=(nobody)

# the renaming loops, as the user (a second bash call of a session, or any
# process of the user, can do this while moat prepares a run)
cat >"$T/swap.pl" <<'EOS'
# perl: renames with no process each (the race is microseconds wide)
chdir $ARGV[0] or exit 1;
my $race = $ARGV[1];
for (;;) {
	if ($race eq "swap") { # dirA and dirB trade names; dirB holds the secret first
		rename "dirA", "tmp"; rename "dirB", "dirA"; rename "tmp", "dirB";
	} elsif ($race eq "link") { # the secret's directory, and a link to it under its name
		rename "dirA", "dirC"; symlink "dirC", "dirA"; unlink "dirA"; rename "dirC", "dirA";
	} else { # a tree renamed over the one the scan may be reading, deeper down
		rename "sub/x", "sub/y"; rename "sub/z", "sub/x"; rename "sub/y", "sub/z";
	}
}
EOS

for U in "${users[@]}"; do
	R=$T/$U
	WS=$R/ws
	mkdir -p "$R/home" "$WS"
	if [ "$U" = root ]; then runas=(); else
		runas=(setpriv --reuid="$U" --regid="$(id -g "$U")" --clear-groups --)
	fi
	run() {
		(cd "$WS" && env -i PATH=/usr/bin:/bin HOME="$R/home" LANG=C.UTF-8 \
			${runas[@]+"${runas[@]}"} "$MOAT" run --workspace "$WS" -- "$@")
	}
	for race in swap link deep swap-under-tmp; do
		WS=$R/ws
		[ $race = swap-under-tmp ] && WS=$TT/$U/ws
		rm -rf "$WS"
		mkdir -p "$WS"
		case $race in
		swap | swap-under-tmp)
			mkdir "$WS/dirA" "$WS/dirB"
			echo ok >"$WS/dirA/readme"
			echo SECRET >"$WS/dirB/.env"
			echo ok >"$WS/dirB/readme"
			reads=(dirA/.env dirB/.env) ;;
		link)
			mkdir "$WS/dirA"
			echo SECRET >"$WS/dirA/.env"
			reads=(dirA/.env dirC/.env) ;;
		deep)
			mkdir -p "$WS/sub/x/a/b" "$WS/sub/z/a/b"
			echo SECRET >"$WS/sub/z/a/b/id_rsa"
			reads=(sub/x/a/b/id_rsa sub/z/a/b/id_rsa) ;;
		esac
		[ "$U" = root ] || chown -R "$U" "$R" "$TT/$U" 2>/dev/null
		${runas[@]+"${runas[@]}"} perl "$T/swap.pl" "$WS" "${race%-under-tmp}" 2>/dev/null &
		loop_pid=$!
		leaks=0 ran=0 refused=0 other=0
		for ((i = 0; i < RUNS; i++)); do
			out=$(run cat "${reads[@]}" 2>&1)
			rc=$?
			if grep -q SECRET <<<"$out"; then
				leaks=$((leaks + 1))
			elif [ $rc = 125 ] && grep -q "changed while" <<<"$out"; then
				refused=$((refused + 1))
			elif [ $rc = 125 ]; then
				other=$((other + 1))
				[ $other -le 3 ] && echo "# $U $race: $(head -c 300 <<<"$out")"
			else
				ran=$((ran + 1))
			fi
		done
		kill "$loop_pid" 2>/dev/null
		wait "$loop_pid" 2>/dev/null
		loop_pid=
		echo "# $U $race: $RUNS runs: $ran ran, $refused refused (changed), $other other setup errors, $leaks leaks"
		check "$U: $race race, $RUNS runs: no secret read by the sandboxed cat ($leaks leaks)" [ $leaks = 0 ]
	done
	# nothing racing: every run goes ahead, the secret masked
	WS=$R/ws
	rm -rf "$WS"
	mkdir -p "$WS/dirA"
	echo SECRET >"$WS/dirA/.env"
	echo ok >"$WS/dirA/readme"
	[ "$U" = root ] || chown -R "$U" "$R"
	out=$(run cat dirA/readme dirA/.env 2>&1)
	check "$U: nothing racing: the run goes ahead, the secret masked, its neighbour read" \
		cond 'grep -q "^ok$" <<<"$out" && ! grep -q SECRET <<<"$out"'

	# multi-component patterns through a linked directory
	rm -rf "$WS" "$R/outside"
	mkdir -p "$WS/dreal" "$WS/.config/ghreal" "$R/outside/docker" "$WS/cfgreal/gh"
	echo SECRET >"$WS/dreal/config.json"
	echo ok >"$WS/dreal/other.json"
	ln -s dreal "$WS/.docker"
	echo SECRET >"$WS/.config/ghreal/hosts.yml"
	ln -s ghreal "$WS/.config/gh"
	mkdir -p "$WS/sub"
	echo SECRET >"$R/outside/docker/config.json"
	ln -s "$R/outside/docker" "$WS/sub/.docker"
	echo SECRET >"$WS/cfgreal/gh/hosts.yml"
	mkdir -p "$WS/p2"
	ln -s ../cfgreal "$WS/p2/.config"
	[ "$U" = root ] || chown -R "$U" "$R"
	out=$(run sh -c 'cat .docker/config.json; cat dreal/config.json; cat .config/gh/hosts.yml;
		cat .config/ghreal/hosts.yml; cat sub/.docker/config.json; cat p2/.config/gh/hosts.yml;
		cat cfgreal/gh/hosts.yml; cat .docker/other.json' 2>&1)
	check "$U: **/.docker/config.json through links into and out of the workspace: no spelling readable" \
		cond '! grep -q SECRET <<<"$out"'
	grep SECRET <<<"$out" >/dev/null && echo "# $(tr '\n' ' ' <<<"$out" | head -c 600)"
	check "$U: ... the linked directory's other files stay readable" grep -q '^ok$' <<<"$out"
done
echo "1..$n"
[ "$failed" = 0 ]
