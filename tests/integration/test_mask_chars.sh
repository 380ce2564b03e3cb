#!/bin/bash
# Denied-path patterns match names by character inside `moat run`, as the
# policy matches them for the file tools: '?' is one character, so
# "**/?.zzk" hides "é.zzk" (two bytes before the dot) in the workspace, "~/?.zzt"
# hides "ü.zzt" in the home, "~/d*/?.zzq" (a wildcard before the name)
# hides "dd/é.zzq", "~/d*/*.zzd" hides "dd/.y.zzd" (a wildcard matches a
# leading dot, as in the policy), and so does a wildcard in a middle
# component ("~/*/t.zd", "~/d*/*/u.zd", "~/{a,*}/v.zd"); a class with an
# escape ("~/d*/[\\]k].zq") hides dd/k.zq; the home's name holds a ',' (it
# comes escaped into the patterns: "~/lit.zq" and "~/sec\\ret" still hide
# lit.zq and secret); and "**/k?/s.txt" hides a file reached through a
# link named "kö". Each is checked from outside (the content
# never reaches the output), with controls (a two-character name stays
# readable), as root and as nobody. TAP output.
#
#   MOAT=path/to/moat bash tests/integration/test_mask_chars.sh
set -u

MOAT=${MOAT:-$(command -v moat)}
. "$(dirname "$0")/../lib/tap.sh"
[ -x "$MOAT" ] || bail "no moat binary (set MOAT)"
require_sandbox
command -v setpriv >/dev/null || bail "setpriv (util-linux) is needed"

T=$(mktemp -d /var/tmp/moat-chars.XXXXXX) || bail "mktemp"
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT

if ! "$MOAT" status --json 2>/dev/null | grep -q '"landlock_abi": [1-9]'; then
	skip "no sandbox on this machine (moat status)"
	echo "1..$n"
	exit $((failed > 0))
fi

users=("$(id -un)")
[ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && users+=(nobody)

for U in "${users[@]}"; do
	R=$T/$U
	WS=$R/ws
	H=$R/h,o
	mkdir -p "$WS/dreal" "$H/dd/.i" "$H/.h" "$H/.j"
	echo "ws-SECRET-é" >"$WS/é.zzk"
	echo "ws-plain-ab" >"$WS/ab.zzk"
	echo "home-SECRET-ü" >"$H/ü.zzt"
	echo "home-plain-uv" >"$H/uv.zzt"
	echo "deep-SECRET-é" >"$H/dd/é.zzq"
	echo "deep-plain-ab" >"$H/dd/ab.zzq"
	echo "dot-SECRET-y" >"$H/dd/.y.zzd"
	echo "mid-SECRET-t" >"$H/.h/t.zd"
	echo "mid-SECRET-u" >"$H/dd/.i/u.zd"
	echo "mid-SECRET-v" >"$H/.j/v.zd"
	echo "class-SECRET-k" >"$H/dd/k.zq"
	echo "lit-SECRET" >"$H/lit.zq"
	echo "esc-SECRET" >"$H/secret"
	mkdir -p "$H/x" "$H/u"
	echo "comma-SECRET" >"$H/x/,a"
	echo "gsfile-SECRET" >"$H/x/a"
	echo "closed-SECRET" >"$H/u/s1"
	echo "link-SECRET-ö" >"$WS/dreal/s.txt"
	ln -s dreal "$WS/kö"
	printf '%s\n' '{"denied_paths": ["**/?.zzk", "~/?.zzt", "~/d*/?.zzq", "~/d*/*.zzd",' \
		' "~/*/t.zd", "~/d*/*/u.zd", "~/{a,*}/v.zd", "~/d*/[\\]k].zq", "~/lit.zq", "~/sec\\ret",' \
		' "~/x/{[,]a,q}", "~/x/{a/**,r}", "~/u/s*", "**/k?/s.txt"], "sandbox": {"mode": "linux"},' \
		" \"audit_log\": \"$R/audit.jsonl\"}" >"$R/config.json"
	printf '{"denied_paths": ["~/x/{a/**/s,c}"], "sandbox": {"mode": "linux"}}\n' >"$R/gs.json"
	if [ "$U" = root ]; then runas=(); else
		chown -R "$U" "$R"
		runas=(setpriv --reuid="$U" --regid="$(id -g "$U")" --clear-groups --)
	fi
	m() {
		(cd "$WS" && env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 \
			${runas[@]+"${runas[@]}"} "$MOAT" "$@")
	}

	# the policy's word, for the file tools: denied
	out=$(m tool --config "$R/config.json" read_file '{"path": "é.zzk"}' 2>&1)
	checke "$U: read_file é.zzk is denied by **/?.zzk (the policy, by character)" \
		'! grep -q ws-SECRET <<<"$out"'

	# hidden DESC CONTROL SCRIPT: inside the sandbox SCRIPT reads no
	# secret, and the control content it reads too comes out
	hidden() {
		local want=$2
		out=$(m run --config "$R/config.json" -- sh -c "$3" 2>&1)
		checke "$U: moat run: $1" '! grep -q SECRET <<<"$out" && grep -q "$want" <<<"$out"'
	}
	hidden "**/?.zzk hides é.zzk in the workspace, ab.zzk stays readable" ws-plain-ab \
		'cat é.zzk; cat ab.zzk'
	hidden "~/?.zzt hides ü.zzt in the home, uv.zzt stays readable" home-plain-uv \
		"cat '$H/ü.zzt'; cat '$H/uv.zzt'"
	hidden "~/d*/?.zzq hides dd/é.zzq, ~/d*/*.zzd hides dd/.y.zzd, dd/ab.zzq stays readable" \
		deep-plain-ab "cat '$H/dd/é.zzq'; cat '$H/dd/ab.zzq'; cat '$H/dd/.y.zzd'"
	hidden "a wildcard in a middle component, a class with an escape, an escaped home: all hidden" \
		home-plain-uv "cd '$H' && cat .h/t.zd dd/.i/u.zd .j/v.zd dd/k.zq lit.zq secret; cat uv.zzt"
	chmod 0311 "$H/u" # (listed only by root: nobody knows the name)
	hidden "a ',' in a class inside braces, X/** naming a file X, a directory that cannot be listed: hidden" \
		home-plain-uv "cd '$H' && cat x/,a x/a u/s1; cat uv.zzt"
	chmod 0755 "$H/u"
	out=$(m run --config "$R/gs.json" -- cat "$H/x/a" 2>&1)
	rc=$?
	checke "$U: moat run: {a,b} alternatives beside a globstar inside the path: refused (125), nothing read" \
		'[ $rc = 125 ] && ! grep -q SECRET <<<"$out" && grep -q "masked only at the start" <<<"$out"'
	for f in .h/t.zd dd/.i/u.zd .j/v.zd dd/k.zq lit.zq secret x/,a x/a u/s1; do
		out=$(m tool --config "$R/config.json" read_file "{\"path\": \"$H/$f\"}" 2>&1)
		grep -q SECRET <<<"$out" && echo "# $U: the policy lets read_file read $f"
	done
	if [ "$U" != root ]; then
		# a home the user cannot list, the workspace inside it (sudo -u
		# keeping HOME): the run goes ahead, its names unmasked as unfindable
		mkdir -p "$T/lh/proj"
		echo "in-ws-plain" >"$T/lh/proj/a.txt"
		chmod 0711 "$T/lh"
		chown "$U" "$T/lh/proj" "$T/lh/proj/a.txt"
		out=$(cd "$T/lh/proj" && env -i PATH=/usr/bin:/bin HOME="$T/lh" LANG=C.UTF-8 \
			"${runas[@]}" "$MOAT" run --config "$R/config.json" -- cat a.txt 2>&1)
		checke "$U: moat run in a workspace inside a home it cannot list: runs" \
			'grep -q in-ws-plain <<<"$out"'
	fi
	out=$(m run --config "$R/config.json" -- sh -c 'cat kö/s.txt; cat dreal/s.txt; ls dreal' 2>&1)
	checke "$U: moat run: **/k?/s.txt hides the file reached through the link kö" \
		'! grep -q link-SECRET <<<"$out"'
done

echo "1..$n"
exit $((failed > 0))
