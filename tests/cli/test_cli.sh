#!/bin/bash
# CLI tests: exit statuses, output shape and error messages of the moat
# binary, driven from outside. TAP output.
set -u
MOAT=${MOAT:-build/moat}
n=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME="$tmp/xdg" # no user config unless a test writes one
cd "$tmp"

ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "#   $l"; done; }

# expect STATUS DESCRIPTION -- COMMAND...: run, compare the exit status
expect() {
	local want=$1 what=$2
	shift 3
	out=$("$@" 2>"$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
	if [ "$rc" = "$want" ]; then ok "$what"; else nok "$what (exit $rc, wanted $want)" "out: $out" "err: $err"; fi
}
# contains HAYSTACK NEEDLE DESCRIPTION
contains() {
	case "$1" in *"$2"*) ok "$3" ;; *) nok "$3" "wanted '$2' in: $1" ;; esac
}

expect 0 "check allow exits 0" -- "$MOAT" check read_file '{"path": "a.txt"}'
contains "$out" '"decision":"allow"' "allow is printed as JSON"
expect 1 "check deny exits 1" -- "$MOAT" check read_file '{"path": "/etc/shadow"}'
contains "$out" '"rule":"denied_paths:/etc/shadow"' "deny names the rule"
expect 3 "check ask exits 3" -- "$MOAT" check --require-approval write_file '{"path": "a.txt", "content": ""}'
contains "$out" '"decision":"ask"' "ask is printed"
expect 1 "--read-only blocks writes" -- "$MOAT" check --read-only write_file '{"path": "a", "content": ""}'
expect 1 "hardline" -- "$MOAT" check bash '{"command": "sudo rm -rf --no-preserve-root /"}'
contains "$out" 'hardline:' "hardline rule id"
expect 2 "malformed JSON exits 2" -- "$MOAT" check read_file '{"path": '
contains "$out" '"decision":"deny"' "malformed JSON still prints a deny"
contains "$err" 'argument' "malformed JSON error names the argument"
expect 2 "duplicate keys exit 2" -- "$MOAT" check read_file '{"path": "/etc/shadow", "path": "a"}'
contains "$err" 'duplicate' "duplicate key error says so"
expect 2 "args must be an object" -- "$MOAT" check read_file '["a"]'
expect 2 "missing tool" -- "$MOAT" check
expect 2 "unknown option" -- "$MOAT" check --frobnicate read_file '{}'
contains "$err" "unknown option '--frobnicate'" "unknown option is named"
expect 2 "missing config file" -- "$MOAT" check --config "$tmp/nope.json" read_file '{"path": "a"}'
contains "$err" 'nope.json' "missing config names the file"
expect 2 "--config without value" -- "$MOAT" check read_file '{}' --config
expect 0 "--help" -- "$MOAT" check --help
contains "$out" 'exit status' "check --help documents exit statuses"

# configuration errors name file:line:column and the key
printf '{\n  "safety": {\n    "read_only": true,\n    "alowed_paths": []\n  }\n}\n' >"$tmp/bad.json"
expect 2 "unknown config key exits 2" -- "$MOAT" check --config "$tmp/bad.json" read_file '{"path": "a"}'
contains "$err" 'bad.json:4:' "unknown key error has file:line"
contains "$err" 'alowed_paths' "unknown key error names the key"
printf '{"read_only": "yes"}' >"$tmp/type.json"
expect 2 "wrong type exits 2" -- "$MOAT" config check "$tmp/type.json"
contains "$err" 'read_only' "wrong type names the key"
printf '{"read_only": true, "read_only": false}' >"$tmp/dup.json"
expect 2 "duplicate config key exits 2" -- "$MOAT" config check "$tmp/dup.json"
printf '{"command_rules": [{"pattern": "(", "decision": "deny", "is_regex": true}]}' >"$tmp/re.json"
expect 2 "invalid regex exits 2" -- "$MOAT" config check "$tmp/re.json"
contains "$err" 're.json:1:' "invalid regex is located"
printf '{"denied_paths": ["[abc"]}' >"$tmp/glob.json"
expect 2 "invalid glob exits 2" -- "$MOAT" config check "$tmp/glob.json"
printf '{"require_approval_for_writes": true}' >"$tmp/good.json"
expect 0 "valid config passes config check" -- "$MOAT" config check "$tmp/good.json"
contains "$out" 'good.json: ok' "config check says ok"
# an Aar rule that looks like a glob: valid (exit 0), with a warning naming it
printf '{"command_rules": [{"pattern": "DROP TABLE", "decision": "deny"},\n  {"pattern": "rm .*", "decision": "deny"}]}' >"$tmp/aar.json"
expect 0 "a substring rule holding glob characters still passes config check" -- "$MOAT" config check "$tmp/aar.json"
contains "$out" 'aar.json: ok' "config check says ok"
contains "$err" 'aar.json:2:15: warning: safety.command_rules[1].pattern: "rm .*" holds glob characters' "the warning names the rule and its place"
contains "$err" '"match": "glob"' "the warning suggests \"match\": \"glob\""
case "$err" in *"command_rules[0]"*) nok "no warning for a plain substring" "$err" ;; *) ok "no warning for a plain substring" ;; esac
printf '{"command_rules": [{"pattern": "rm .*", "decision": "deny", "match": "glob"}]}' >"$tmp/glob2.json"
expect 0 "a glob rule passes config check" -- "$MOAT" config check "$tmp/glob2.json"
[ -z "$err" ] && ok "no warning for an explicit match" || nok "no warning for an explicit match" "$err"
expect 1 "the Aar rule denies by substring" -- "$MOAT" check --config "$tmp/aar.json" bash '{"command": "psql -c \"DROP TABLE users\""}'
contains "$out" '"rule":"command_rules:DROP TABLE"' "the deny names the substring rule"
expect 0 "config show" -- "$MOAT" config show --config "$tmp/good.json"
contains "$out" '"require_approval_for_writes": true' "config show has the file's value"
contains "$out" '**/.ssh/**' "config show has the default deny list"

# the user config comes from XDG_CONFIG_HOME when --config is absent
mkdir -p "$tmp/xdg/moat"
printf '{"read_only": true}' >"$tmp/xdg/moat/config.json"
expect 1 "XDG user config is loaded" -- "$MOAT" check write_file '{"path": "a", "content": ""}'
rm -rf "$tmp/xdg/moat"

# a project file may only tighten
mkdir -p "$tmp/proj/.moat"
printf '{"denied_paths": ["**/private/**"]}' >"$tmp/proj/.moat/config.json"
expect 1 "project file adds a deny" -- "$MOAT" check --cwd "$tmp/proj" read_file '{"path": "private/x"}'
contains "$out" 'project:' "project rule is marked"
printf '{"hardline": false}' >"$tmp/proj/.moat/config.json"
expect 2 "project file cannot drop the floor" -- "$MOAT" check --cwd "$tmp/proj" read_file '{"path": "a"}'
contains "$err" 'config.json' "project refusal names the file"
printf '{"default_denied_paths": false}' >"$tmp/proj/.moat/config.json"
expect 2 "project file cannot drop default denies" -- "$MOAT" check --cwd "$tmp/proj" read_file '{"path": "a"}'
ln -sf "$tmp/good.json" "$tmp/proj/.moat/config.json"
expect 2 "a symlinked project file is refused" -- "$MOAT" check --cwd "$tmp/proj" read_file '{"path": "a"}'
contains "$err" 'symbolic link' "symlinked project file error says why"
rm -f "$tmp/proj/.moat/config.json"
mkfifo "$tmp/proj/.moat/config.json"
expect 2 "a FIFO project file is refused without hanging" -- timeout 10 "$MOAT" check --cwd "$tmp/proj" read_file '{"path": "a"}'
rm -rf "$tmp/proj"

# flags never shrink the default deny lists
expect 1 "--denied-paths appends" -- "$MOAT" check --denied-paths '**/*.sqlite' read_file '{"path": "db.sqlite"}'
expect 1 "--denied-paths keeps defaults" -- "$MOAT" check --denied-paths '**/*.sqlite' read_file '{"path": ".env"}'
expect 1 "--restrict-to-cwd" -- "$MOAT" check --restrict-to-cwd --cwd "$tmp" read_file '{"path": "/usr/share/x"}'
expect 0 "--allowed-paths" -- "$MOAT" check --allowed-paths '/usr/share/**' read_file '{"path": "/usr/share/x"}'

# symlinks: the link and its target must both pass
mkdir -p "$tmp/ws/sub" "$tmp/outside/deep"
echo secret >"$tmp/outside/secret.txt"
ln -s /etc "$tmp/ws/etc-link"
ln -s "$tmp/outside/deep" "$tmp/ws/sub/deep-link"
ln -s ../outside/secret.txt "$tmp/ws/rel-link"
ln -s "$tmp/ws/rel-link" "$tmp/ws/chain"
expect 1 "leaf symlink to a denied path" -- "$MOAT" check --cwd "$tmp/ws" read_file '{"path": "etc-link/shadow"}'
contains "$out" 'denied_paths:/etc/shadow' "the link target is checked"
expect 1 "relative symlink out of the workspace" -- "$MOAT" check --restrict-to-cwd --cwd "$tmp/ws" read_file '{"path": "rel-link"}'
expect 1 "symlink chain out of the workspace" -- "$MOAT" check --restrict-to-cwd --cwd "$tmp/ws" read_file '{"path": "chain"}'
expect 1 "dotdot after an interior symlink" -- "$MOAT" check --restrict-to-cwd --cwd "$tmp/ws" read_file '{"path": "sub/deep-link/../secret.txt"}'
expect 1 "write through a directory link" -- "$MOAT" check --restrict-to-cwd --cwd "$tmp/ws" write_file '{"path": "sub/deep-link/new.txt", "content": "x"}'
expect 0 "plain file in the workspace" -- "$MOAT" check --restrict-to-cwd --cwd "$tmp/ws" read_file '{"path": "sub"}'
expect 1 "prefix confusion ws_evil" -- "$MOAT" check --allowed-paths "$tmp/ws/**" --cwd "$tmp/ws" read_file "{\"path\": \"$tmp/ws_evil/x\"}"

# --batch: one decision line per input line, bad lines denied in place
printf '%s\n' '{"tool": "read_file", "args": {"path": "a"}}' 'not json' '{"tool": "bash", "args": {"command": "rm -rf /"}}' '{"tool": "x", "args": {}, "extra": 1}' >"$tmp/batch.jsonl"
"$MOAT" check --batch <"$tmp/batch.jsonl" >"$tmp/batch.out" 2>/dev/null
rc=$?
[ "$rc" = 2 ] && ok "batch with bad lines exits 2" || nok "batch with bad lines exits 2 (got $rc)"
[ "$(wc -l <"$tmp/batch.out")" = 4 ] && ok "batch prints one line per input" || nok "batch line count" "$(cat "$tmp/batch.out")"
[ "$(sed -n 1p "$tmp/batch.out" | grep -c '"allow"')" = 1 ] && ok "batch line 1 allow" || nok "batch line 1"
[ "$(sed -n 2p "$tmp/batch.out" | grep -c 'input:invalid')" = 1 ] && ok "batch line 2 invalid" || nok "batch line 2"
[ "$(sed -n 3p "$tmp/batch.out" | grep -c 'hardline')" = 1 ] && ok "batch line 3 hardline" || nok "batch line 3"
[ "$(sed -n 4p "$tmp/batch.out" | grep -c 'input:invalid')" = 1 ] && ok "batch line 4 unknown key" || nok "batch line 4"

# redact
r=$(printf 'curl -H "Authorization: Bearer abcdef0123456789abcdef0123456789xyz" https://x\n' | "$MOAT" redact)
case "$r" in *abcdef0123456789*) nok "redact hides a bearer token" "$r" ;; *) ok "redact hides a bearer token" ;; esac
r=$(printf "git commit -m 'fix auth flow'\n" | "$MOAT" redact)
[ "$r" = "git commit -m 'fix auth flow'" ] && ok "redact leaves ordinary text" || nok "redact leaves ordinary text" "$r"

# bad input is refused before anything runs (exit 2, the place named)
expect 2 "check refuses an argument bash would refuse" -- "$MOAT" check bash '{"command": "ls", "zz": 1}'
contains "$out" '"rule":"input:invalid"' "the refusal is input:invalid"
contains "$err" "zz" "the unknown argument is named"
expect 2 "check refuses a timeout of the wrong type" -- "$MOAT" check bash '{"command": "ls", "timeout": "5"}'
expect 2 "check refuses a tool name with a newline" -- "$MOAT" check "$(printf 'a\nb')" '{}'
expect 3 "check still decides for any other tool name (an undeclared one asks)" -- "$MOAT" check my_tool '{"x": 1}'
printf '{"tool":"bash","args":{"command":"ls"}}\n\n{"tool":"bash","args":{"command":"ls"}}\n' >"$tmp/blank.jsonl"
expect 2 "check --batch: an empty line is a bad line" -- sh -c '"$1" check --batch <"$2"' _ "$MOAT" "$tmp/blank.jsonl"
[ "$(printf '%s\n' "$out" | wc -l)" = 3 ] && ok "check --batch: one decision per line" || nok "check --batch: one decision per line" "$out"
mkdir -p "$tmp/rws"
printf '{"tool":"bash","args":{"command":"touch RAN1"}}\0{"tool":"bash","args":{"command":"touch RAN2"}}\n' >"$tmp/nul.jsonl"
expect 2 "replay: a NUL byte is bad input" -- "$MOAT" tool --cwd "$tmp/rws" --approve-with deny --replay "$tmp/nul.jsonl"
contains "$err" "nul.jsonl:1:" "the NUL byte's line is named"
printf '{"tool":"bash","args":{"command":"touch RAN3"}}\n{"tool":"bash","args":{"command":"ls","zz":1}}\n' >"$tmp/late.jsonl"
expect 2 "replay: a bad call later in the file" -- "$MOAT" tool --cwd "$tmp/rws" --approve-with deny --replay "$tmp/late.jsonl"
contains "$err" "late.jsonl:2:" "the bad line is named"
[ -z "$(ls -A "$tmp/rws")" ] && ok "replay: nothing ran" || nok "replay: nothing ran" "$(ls -A "$tmp/rws")"
touch "$tmp/afile"
expect 2 "--cwd that is a file" -- "$MOAT" tool --cwd "$tmp/afile" bash '{"command": "ls"}'
contains "$err" "not a directory" "the file is said to be no directory"
expect 2 "mcp --workspace /" -- sh -c '"$1" mcp --workspace / </dev/null' _ "$MOAT"
expect 2 "mcp --workspace FILE" -- sh -c '"$1" mcp --workspace "$2" </dev/null' _ "$MOAT" "$tmp/afile"
expect 125 "run --env with a bad name" -- "$MOAT" run --env 1BAD -- touch "$tmp/rws/RAN4"
expect 125 "run --home with a bad value" -- "$MOAT" run --home rw -- touch "$tmp/rws/RAN5"
contains "$err" "--home" "the option is named"
[ ! -e "$tmp/rws/RAN4" ] && [ ! -e "$tmp/rws/RAN5" ] && ok "run: nothing ran on bad options" || nok "run: nothing ran on bad options"

# help everywhere
for sub in check config redact run status; do
	expect 0 "$sub --help" -- "$MOAT" "$sub" --help
done
expect 2 "unknown command" -- "$MOAT" frobnicate

echo "1..$n"
[ "$failed" = 0 ]
