#!/bin/bash
# exempt_paths (issue 21) from outside: test fixtures that are keys, read
# by the file tools and inside `moat run` only when the user's
# configuration exempts them, while every other denied path stays denied;
# a project file holding the key is refused; `moat config show`, the plan
# and the audit records name the exemptions. TAP output.
#
#   MOAT=path/to/moat MOAT_SRC=repo bash tests/integration/test_exempt_paths.sh
#
# The sandbox checks need Landlock and namespaces (a missing feature skips,
# unless MOAT_MUST_WORK=1). scan_exempt_checks looks at matches of the
# workspace scan (a fixture inside the workspace): the scan honours
# exemptions once it asks moat_plan_mask_exempt (core/plan.h) for each
# match. Until then its one positive check is a TODO; set SCAN_EXEMPT_WIRED=1
# below (or in the environment) to make it count.
set -u

MOAT=${MOAT:-$(command -v moat)}
. "$(dirname "$0")/../lib/tap.sh"

[ -x "$MOAT" ] || bail "no moat binary (set MOAT)"
command -v python3 >/dev/null || bail "python3 is needed to read JSON"

T=$(mktemp -d /tmp/moat-ex-XXXXXX) || bail "mktemp"
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT

WS=$T/ws
H=$T/home
mkdir -p "$WS/test/certs" "$WS/other" "$H"
echo "fixture-A-content" >"$WS/test/certs/a.pem"
echo "other-B-SECRET" >"$WS/other/b.pem"
echo "home-fixture-content" >"$H/fixture.pem"
echo "home-other-SECRET" >"$H/other.pem"
cat >"$T/user.json" <<EOF
{"exempt_paths": ["**/test/certs/*.pem", "~/fixture.pem"],
 "sandbox": {"mode": "linux"}, "audit_log": "$T/audit.jsonl"}
EOF
cat >"$T/plain.json" <<EOF
{"sandbox": {"mode": "linux"}, "audit_log": "$T/audit.jsonl"}
EOF

# m ARGS...: moat in the workspace with a clean environment
m() {
	(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 TERM=dumb \
		"$MOAT" "$@")
}
# jq_ EXPR JSON: a Python expression over the parsed JSON j
jq_() {
	python3 -c '
import json, sys
j = json.loads(sys.argv[2])
v = eval(sys.argv[1])
print(*v) if isinstance(v, tuple) else print(v)' "$1" "$2" 2>/dev/null
}
# last_record: the last line of the audit log
last_record() { tail -n 1 "$T/audit.jsonl" 2>/dev/null; }

# ---- the configuration ----
out=$(m config show --config "$T/user.json" 2>&1)
rc=$?
check "config show exits 0" [ $rc = 0 ]
check "config show lists exempt_paths, ~ expanded" \
	[ "$(jq_ 'j["effective"]["safety"]["exempt_paths"]' "$out")" = \
	"['**/test/certs/*.pem', '$H/fixture.pem']" ]
jq_ 'json.dumps(j["effective"])' "$out" >"$T/shown.json"
out2=$(m config show --config "$T/shown.json" 2>&1)
check "the effective configuration loads back to the same" \
	[ "$(jq_ 'j["effective"]' "$out2")" = "$(jq_ 'j["effective"]' "$out")" ]
out=$(m config show --config "$T/plain.json" 2>&1)
check "config show without them: an empty list" \
	[ "$(jq_ 'j["effective"]["safety"]["exempt_paths"]' "$out")" = "[]" ]

printf '{"exempt_paths": [""]}\n' >"$T/bad1.json"
out=$(m config check "$T/bad1.json" 2>&1)
rc=$?
checke "an empty pattern: exit 2 with file:line:column" \
	'[ $rc = 2 ] && grep -q "bad1.json:1:19: safety.exempt_paths\[0\]: empty pattern" <<<"$out"'
printf '{\n "exempt_paths": "**/*.pem"\n}\n' >"$T/bad2.json"
out=$(m config check "$T/bad2.json" 2>&1)
rc=$?
checke "not a list: exit 2 with file:line:column" \
	'[ $rc = 2 ] && grep -q "bad2.json:2:18: safety.exempt_paths: expected array, got string" <<<"$out"'
printf '{"exempt_paths": ["/a/[b"]}\n' >"$T/bad3.json"
out=$(m config check "$T/bad3.json" 2>&1)
rc=$?
checke "a pattern that does not compile: exit 2 with file:line:column" \
	'[ $rc = 2 ] && grep -q "bad3.json:1:19: safety.exempt_paths\[0\]: invalid glob" <<<"$out"'
printf '{"exempt_paths": ["a\\u0000b"]}\n' >"$T/bad4.json"
out=$(m config check "$T/bad4.json" 2>&1)
rc=$?
checke "a NUL byte: exit 2 with file:line:column" \
	'[ $rc = 2 ] && grep -q "bad4.json:1:19: .*NUL" <<<"$out"'
printf '{"exempt_paths": [1]}\n' >"$T/bad5.json"
out=$(m config check "$T/bad5.json" 2>&1)
rc=$?
checke "a number: exit 2 with file:line:column" \
	'[ $rc = 2 ] && grep -q "bad5.json:1:19: safety.exempt_paths\[0\]: expected string" <<<"$out"'

# a project file may not hold it: refused at load, with the place
mkdir -p "$WS/.moat"
printf '{\n  "denied_paths": ["**/*.sqlite"],\n  "exempt_paths": ["**/*.pem"]\n}\n' \
	>"$WS/.moat/config.json"
out=$(m config check --project .moat/config.json 2>&1)
rc=$?
checke "config check --project refuses it: exit 2, file:line:column" \
	'[ $rc = 2 ] && grep -q "config.json:3:3: safety.exempt_paths: not allowed in a project config" <<<"$out"'
out=$(m tool --config "$T/user.json" read_file '{"path": "test/certs/a.pem"}' 2>&1)
rc=$?
checke "moat tool with such a project file: exit 2, nothing read" \
	'[ $rc = 2 ] && grep -q "\.moat/config.json:3:3: safety.exempt_paths: not allowed" <<<"$out" && ! grep -q fixture-A <<<"$out"'
out=$(m run --config "$T/user.json" -- cat "$H/fixture.pem" 2>&1)
rc=$?
checke "moat run with such a project file refuses to run (125), file:line:column" \
	'[ $rc = 125 ] && grep -q "\.moat/config.json:3:3: safety.exempt_paths: not allowed" <<<"$out" && ! grep -q home-fixture <<<"$out"'
rm -rf "$WS/.moat"

# ---- the file tools ----
: >"$T/audit.jsonl"
out=$(m tool --config "$T/user.json" read_file '{"path": "test/certs/a.pem"}' 2>&1)
rc=$?
checke "read_file of an exempt fixture: allowed, its content" \
	'[ $rc = 0 ] && [ "$(jq_ "j[\"data\"][\"text\"].split(chr(9))[1].strip()" "$out")" = fixture-A-content ]'
rec=$(last_record)
check "... its audit record names the exemption" [ "$(jq_ 'j["exempt_paths"]' "$rec")" = \
	"['**/test/certs/*.pem']" ]
out=$(m tool --config "$T/user.json" read_file "{\"path\": \"$H/fixture.pem\"}" 2>&1)
rc=$?
checke "read_file of an exempt fixture in the home: allowed" \
	'[ $rc = 0 ] && grep -q home-fixture-content <<<"$out"'
out=$(m tool --config "$T/user.json" read_file '{"path": "other/b.pem"}' 2>&1)
rc=$?
checke "read_file of another .pem: denied (3), nothing read" \
	'[ $rc = 3 ] && ! grep -q SECRET <<<"$out" && grep -q "denied_paths:\*\*/\*.pem" <<<"$out"'
rec=$(last_record)
check "... its audit record has no exempt_paths" [ "$(jq_ '"exempt_paths" in j' "$rec")" = False ]
out=$(m tool --config "$T/plain.json" read_file '{"path": "test/certs/a.pem"}' 2>&1)
rc=$?
checke "without the exemption the fixture is denied (3)" \
	'[ $rc = 3 ] && ! grep -q fixture-A <<<"$out"'
# a link named like another secret pointing at the fixture: denied by its name
ln -s ../test/certs/a.pem "$WS/other/link.pem"
out=$(m tool --config "$T/user.json" read_file '{"path": "other/link.pem"}' 2>&1)
rc=$?
checke "a denied name linking to the fixture stays denied" '[ $rc = 3 ] && ! grep -q fixture-A <<<"$out"'
rm -f "$WS/other/link.pem"
# and a project file's denied paths are not lifted
mkdir -p "$WS/.moat"
printf '{"denied_paths": ["**/test/certs/**"]}\n' >"$WS/.moat/config.json"
out=$(m tool --config "$T/user.json" read_file '{"path": "test/certs/a.pem"}' 2>&1)
rc=$?
checke "a project file denying the fixture wins over the exemption (3)" \
	'[ $rc = 3 ] && grep -q "project:denied_paths" <<<"$out"'
rm -rf "$WS/.moat"

# ---- the sandbox ----
status_json=$(m status --json 2>/dev/null)
LANDLOCK=$(jq_ 'j["kernel"]["landlock_abi"]' "$status_json")
USERNS=$(jq_ 'str(j["kernel"]["user_namespaces"] or j["kernel"].get("namespaces_without_userns", False)).lower()' "$status_json")

# scan_exempt_checks: a fixture inside the workspace, matched by the
# workspace scan (**/*.pem there).
scan_exempt_checks() {
	local o r
	o=$(m run --config "$T/user.json" -- cat test/certs/a.pem 2>&1)
	r=$?
	if [ $r = 0 ] && [ "$o" = fixture-A-content ]; then
		ok "scan: moat run -- cat test/certs/a.pem prints the exempt fixture"
	else
		nok "scan: moat run -- cat test/certs/a.pem prints the exempt fixture (rc $r: $o)"
	fi
	o=$(m run --config "$T/user.json" -- cat other/b.pem 2>&1)
	r=$?
	checke "scan: moat run -- cat other/b.pem: another .pem stays masked" \
		'[ $r != 0 ] && ! grep -q SECRET <<<"$o"'
	o=$(m run --config "$T/plain.json" -- cat test/certs/a.pem 2>&1)
	r=$?
	checke "scan: without the exemption the fixture is masked" \
		'[ $r != 0 ] && ! grep -q fixture-A <<<"$o"'
	# an exempt directory is not masked whole, and what it holds is judged
	# on its own
	mkdir -p "$WS/test/.ssh" && echo "ssh-dir-SECRET" >"$WS/test/.ssh/id_ed25519"
	echo '{"safety": {"exempt_paths": ["test/.ssh"]}}' >"$T/dir.json"
	chmod -R a+rX "$WS/test" "$T/dir.json"
	o=$(m run --config "$T/dir.json" -- sh -c 'ls test/.ssh; cat test/.ssh/id_ed25519' 2>&1)
	checke "scan: exempting a directory lists it, the key inside stays masked" \
		'grep -q "^id_ed25519$" <<<"$o" && ! grep -q ssh-dir-SECRET <<<"$o"'
	rm -rf "$WS/test/.ssh"
}

if [ "${LANDLOCK:-0}" = 0 ] || [ "$USERNS" != true ]; then
	skip "the sandbox checks need Landlock and namespaces"
else
	# outside the workspace: the home's top-level mask of **/*.pem
	out=$(m run --config "$T/user.json" -- cat "$H/fixture.pem" 2>&1)
	rc=$?
	check "moat run -- cat ~/fixture.pem prints it with the exemption" \
		[ $rc = 0 ] && [ "$out" = home-fixture-content ]
	out=$(m run --config "$T/plain.json" -- cat "$H/fixture.pem" 2>&1)
	rc=$?
	checke "... and nothing without it" '[ $rc != 0 ] && ! grep -q home-fixture <<<"$out"'
	out=$(m run --config "$T/user.json" -- cat "$H/other.pem" 2>&1)
	rc=$?
	checke "another .pem in the home stays masked with the exemption" \
		'[ $rc != 0 ] && ! grep -q SECRET <<<"$out"'
	# a literal denied path the exemption matches is no mask at all
	cat >"$T/lit.json" <<EOF
{"denied_paths": ["~/notes.txt"], "exempt_paths": ["~/notes.txt"], "sandbox": {"mode": "linux"}}
EOF
	echo "notes-content" >"$H/notes.txt"
	out=$(m run --config "$T/lit.json" -- cat "$H/notes.txt" 2>&1)
	check "a literal denied path that is exempt is readable" [ "$out" = notes-content ]
	plan=$(m run --config "$T/lit.json" --print-plan -- true 2>/dev/null)
	check "... and is no mask in the plan" [ "$(jq_ '[k["pattern"] for k in j["filesystem"]["masks"] if "notes" in k["pattern"]]' "$plan")" = "[]" ]
	printf '{"denied_paths": ["~/notes.txt"], "sandbox": {"mode": "linux"}}\n' >"$T/lit2.json"
	out=$(m run --config "$T/lit2.json" -- cat "$H/notes.txt" 2>&1)
	checke "(without the exemption it is masked)" '! grep -q notes-content <<<"$out"'
	# the plan carries them
	plan=$(m run --config "$T/user.json" --print-plan -- true 2>/dev/null)
	check "--print-plan lists the exemptions, resolved" \
		[ "$(jq_ 'j["filesystem"]["exempt_paths"]' "$plan")" = "['**/test/certs/*.pem', '$H/fixture.pem']" ]
	# a project file's denied path and --mask are not lifted
	mkdir -p "$WS/.moat"
	printf '{"denied_paths": ["~/fixture.pem"]}\n' >"$WS/.moat/config.json"
	out=$(m run --config "$T/user.json" -- cat "$H/fixture.pem" 2>&1)
	rc=$?
	checke "a project file denying the fixture: masked despite the exemption" \
		'[ $rc != 0 ] && ! grep -q home-fixture <<<"$out"'
	printf '{"denied_paths": ["~/*.pem"]}\n' >"$WS/.moat/config.json"
	out=$(m run --config "$T/user.json" -- cat "$H/fixture.pem" 2>&1)
	rc=$?
	checke "a project file denying ~/*.pem: masked despite the exemption" \
		'[ $rc != 0 ] && ! grep -q home-fixture <<<"$out"'
	rm -rf "$WS/.moat"
	out=$(m run --config "$T/user.json" --mask '~/*.pem' -- cat "$H/fixture.pem" 2>&1)
	rc=$?
	checke "--mask ~/*.pem: masked despite the exemption" \
		'[ $rc != 0 ] && ! grep -q home-fixture <<<"$out"'
	# a link in the home named like the fixture, to another secret
	ln -s other.pem "$H/fixture2.pem"
	cat >"$T/link.json" <<EOF
{"exempt_paths": ["~/fixture2.pem"], "sandbox": {"mode": "linux"}}
EOF
	out=$(m run --config "$T/link.json" -- cat "$H/fixture2.pem" "$H/other.pem" 2>&1)
	checke "an exempt name linking to a secret does not unmask the secret" \
		'! grep -q SECRET <<<"$out"'
	rm -f "$H/fixture2.pem"

	# the bash tool: the policy, the sandbox and the audit record
	: >"$T/audit.jsonl"
	out=$(m tool --config "$T/user.json" --approve-with deny bash \
		"{\"command\": \"cat $H/fixture.pem\"}" 2>&1)
	rc=$?
	check "bash tool: cat ~/fixture.pem runs and prints it" \
		[ $rc = 0 ] && [ "$(jq_ 'j["data"]["stdout"].strip()' "$out")" = home-fixture-content ]
	check "... its sandbox names the exemptions" [ "$(jq_ 'j["data"]["sandbox"]["exempt_paths"]' "$out")" = \
		"['**/test/certs/*.pem', '$H/fixture.pem']" ]
	rec=$(last_record)
	check "... its audit record names the one that applied and the sandbox's" \
		[ "$(jq_ 'j["exempt_paths"], j["sandbox"]["exempt_paths"]' "$rec")" = \
		"['$H/fixture.pem'] ['**/test/certs/*.pem', '$H/fixture.pem']" ]
	out=$(m tool --config "$T/user.json" --approve-with deny bash \
		"{\"command\": \"cat $H/other.pem\"}" 2>&1)
	rc=$?
	checke "bash tool: cat ~/other.pem still asks (denied without a human), nothing read" \
		'[ $rc = 3 ] && ! grep -q SECRET <<<"$out"'
	out=$(m tool --config "$T/plain.json" --approve-with deny bash '{"command": "echo hi"}' 2>&1)
	rec=$(last_record)
	check "without exemptions the sandbox record has none" \
		[ "$(jq_ '"exempt_paths" in j["sandbox"], "exempt_paths" in j' "$rec")" = "False False" ]

	scan_exempt_checks
fi

echo "1..$n"
[ $failed = 0 ]
