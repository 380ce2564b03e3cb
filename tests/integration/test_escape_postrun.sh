#!/bin/bash
# Red-team tests, round 3: moat's OWN work outside the sandbox, with the
# user's full rights, around a command the attacker controls: what moat
# does after the run (quarantine renames of git files and protected names,
# removal of stand-ins, of --tmp-workspace directories and of the scratch
# TMPDIR), what it says afterwards (warnings on stderr, the bash tool's
# result), and how it survives the command's signals and a kill in the
# middle of its setup. tests/integration/test_escape.sh attacks the
# sandbox itself; this file does not repeat it.
#
#   MOAT=path/to/moat MOAT_SRC=repo bash tests/integration/test_escape_postrun.sh
#
# Every verdict is taken from OUTSIDE: a canary file that only code run
# outside the sandbox can create (the user's next `git status` running a
# planted core.fsmonitor), the bytes on disk, leftover directories, the
# process table, the bytes moat wrote to its stderr.
#
# Attacks that still succeed print `not ok ... # TODO` (the suite stays
# green; the red-team report says how to fix each). Once fixed they print a
# plain `ok`. Cases run as root and as nobody (when started as root), in
# full mode and, where it matters, with user namespaces unavailable
# (MOAT_FAKE_NO_USERNS=1, --fallback warn).
set -u

MOAT=${MOAT:-$(command -v moat)}
. "$(dirname "$0")/../lib/tap.sh"

# known DESC 'DEFENSE EXPRESSION': an attack that succeeded when this file was
# written: `ok` when the defense holds, else `not ok # TODO` (reported)
known() {
	local d=$1
	if eval "$2"; then ok "$ID: $d"; else
		n=$((n + 1))
		echo "not ok $n - $ID: $d # TODO attack succeeds (red team round 3)"
		return 1
	fi
}

[ -x "$MOAT" ] || bail "no moat binary (set MOAT)"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || bail "python3 is needed"
command -v git >/dev/null || bail "git is needed"

G=$(mktemp -d /var/tmp/moat-pr-g-XXXXXX) || bail "mktemp"
chmod 755 "$G"
LEFT=() # leftovers of attacks that succeeded, removed at the end
BOMB= # the path of this run's fork-bomb script, unique to it
# reap_bomb: stop, then kill, every process running $BOMB (by pid, until
# none is left: a bomb that outlived moat keeps forking)
reap_bomb() {
	[ -n "$BOMB" ] && [ -e "$G/reap.py" ] && "$PY" "$G/reap.py" "$BOMB" >/dev/null
	return 0
}
cleanup() {
	local p
	reap_bomb
	for p in ${LEFT[@]+"${LEFT[@]}"}; do rm -rf "$p" 2>/dev/null; done
	[ -n "${T:-}" ] && rm -rf "$T"
	rm -rf "$G"
}
trap cleanup EXIT

status_json=$("$MOAT" status --json 2>/dev/null)
LANDLOCK=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["kernel"]["landlock_abi"])' "$status_json" 2>/dev/null || echo 0)
USERNS=$("$PY" -c 'import json,sys; print(str(json.loads(sys.argv[1])["kernel"]["user_namespaces"]).lower())' "$status_json" 2>/dev/null || echo false)
if [ "${LANDLOCK:-0}" = 0 ] || [ "$USERNS" != true ]; then
	if [ "$MUST" = 1 ]; then bail "Landlock ($LANDLOCK) or user namespaces ($USERNS) unavailable, MOAT_MUST_WORK=1"; fi
	echo "1..1"
	echo "ok 1 - # SKIP needs Landlock and user namespaces (abi $LANDLOCK, userns $USERNS)"
	exit 0
fi

# ---- helpers sourced inside the sandbox ----
# mksub NAME PATH CANARY: a submodule at PATH whose git dir is
# .git/modules/NAME, registered in the index, with a core.fsmonitor that
# creates CANARY (which only a run outside the sandbox can create)
cat >"$G/mksub.sh" <<'EOF'
gi() { git -c user.name=t -c user.email=t@t "$@"; }
mksub() {
	name=$1 path=$2 canary=$3
	mkdir -p "$path" && git -C "$path" init -q && gi -C "$path" commit -q --allow-empty -m x || return 1
	mkdir -p ".git/modules/$name" && rmdir ".git/modules/$name" && mv "$path/.git" ".git/modules/$name" || return 1
	up=$(echo "$path" | sed 's|[^/]*|..|g')
	echo "gitdir: $up/.git/modules/$name" >"$path/.git"
	git add "$path" 2>/dev/null
	git config -f ".git/modules/$name/config" core.fsmonitor "touch $canary; false"
}
# evilgit CANARY: a git directory ./evilgit whose config runs CANARY
evilgit() {
	mkdir -p evilgit && cp -r .git/objects .git/refs .git/HEAD evilgit/ &&
		printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch %s; false"\n' "$1" >evilgit/config
}
EOF
# 300 harmless submodule configs, then the planted one renamed until it
# comes after them in readdir order (the walk checks at most 256)
cat >"$G/budget.py" <<'EOF'
import os
base = ".git/modules"
for i in range(300):
    os.makedirs("%s/d%d" % (base, i), exist_ok=True)
    with open("%s/d%d/config" % (base, i), "w") as f:
        f.write("[core]\n\tbare = false\n")
name = "evil"
for k in range(500):
    if os.listdir(base).index(name) >= 290:
        break
    os.rename("%s/%s" % (base, name), "%s/evil%d" % (base, k))
    name = "evil%d" % k
with open("sub5/.git", "w") as f:
    f.write("gitdir: ../.git/modules/%s\n" % name)
EOF
# a new .git/hooks: 8000 harmless *.sample entries around the hooks git
# runs at a commit (new_hooks_check looks at 4096 entries)
cat >"$G/hooks.py" <<'EOF'
import os, sys
d = ".git/hooks"
def junk(a, b):
    for i in range(a, b):
        open("%s/j%05d.sample" % (d, i), "w").close()
junk(0, 4000)
for h in ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "reference-transaction"):
    with open("%s/%s" % (d, h), "w") as f:
        f.write("#!/bin/sh\ntouch %s\n" % sys.argv[1])
    os.chmod("%s/%s" % (d, h), 0o755)
junk(4000, 8000)
EOF
# stderr made non-blocking (the open file description is moat's too), the
# pipe filled, then a git redirect file that moat sets aside and warns about
cat >"$G/nonblock.py" <<'EOF'
import fcntl, os
fcntl.fcntl(2, fcntl.F_SETFL, fcntl.fcntl(2, fcntl.F_GETFL) | os.O_NONBLOCK)
try:
    while True:
        os.write(2, b"x" * 4096)
except BlockingIOError:
    pass
os.makedirs("evilgit", exist_ok=True)
with open(".git/commondir", "w") as f:
    f.write("../evilgit\n")
EOF
# start moat, SIGKILL it after each delay, in the middle of its setup
cat >"$G/midkill.py" <<'EOF'
import os, signal, subprocess, sys, time
tag, args = sys.argv[1], sys.argv[2:]
for i, d in enumerate([0, 0.0002, 0.0005, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.006, 0.008, 0.012, 0.02]):
    p = subprocess.Popen(args + ["sleep", "%s.%d" % (tag, i)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(d)
    p.send_signal(signal.SIGKILL)
    p.wait()
EOF
# reap.py PATTERN [count]: the processes whose command line holds PATTERN:
# their count, or stopped (until no new one appears), then killed, by pid
cat >"$G/reap.py" <<'EOF'
import os, signal, sys, time
pat = sys.argv[1].encode()
mine = set()  # this process and its ancestors hold the pattern too
p = os.getpid()
while p > 1:
    mine.add(p)
    with open("/proc/%d/stat" % p) as f:
        p = int(f.read().rsplit(")", 1)[1].split()[1])
def pids():
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) not in mine:
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    if pat in f.read():
                        out.append(int(d))
            except OSError:
                pass
    return sorted(out)
if sys.argv[2:] == ["count"]:
    print(len(pids()))
    sys.exit()
prev = None
for _ in range(50):
    p = pids()
    if p == prev:
        break
    for x in p:
        try: os.kill(x, signal.SIGSTOP)
        except OSError: pass
    prev = p
for _ in range(50):
    p = pids()
    if not p:
        break
    for x in p:
        try: os.kill(x, signal.SIGKILL)
        except OSError: pass
    time.sleep(0.1)
EOF
chmod -R a+rX "$G"

# ---- helpers of one identity's suite ----
own() { [ "$ID" = nobody ] && chown -R nobody:nogroup "$@"; return 0; }
asid() { ${RUNAS[@]+"${RUNAS[@]}"} "$@"; }

# fresh_ws NAME [plain]: a new workspace $T/NAME (a git repository with one
# commit unless "plain"), owned by the identity; sets WS
fresh_ws() {
	WS=$T/$1
	rm -rf "$WS"
	mkdir -p "$WS"
	if [ "${2:-}" != plain ]; then
		(cd "$WS" && git init -q . && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m init) ||
			bail "git init"
	fi
	own "$WS"
}
# m ARGS...: moat run as the identity, in the workspace, with a clean environment
m() {
	(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 TERM=dumb \
		${ENVX[@]+"${ENVX[@]}"} timeout ${TPRES:-} -k 2 "${TMO:-20}" ${RUNAS[@]+"${RUNAS[@]}"} "$MOAT" run \
		${MODE[@]+"${MODE[@]}"} "$@")
}
# the user's next git command in the workspace, outside any sandbox
git_outside() {
	(cd "$WS" && asid env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" git status >/dev/null 2>&1)
}
pwned() { [ -e "$OUT/PWN-$1" ]; }
# tool ARGS_JSON: `moat tool bash` as the identity in the workspace; sets out, rc
tool() {
	out=$(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 \
		timeout -k 2 30 ${RUNAS[@]+"${RUNAS[@]}"} "$MOAT" tool --config "$T/config.json" --cwd "$WS" \
		--approve-with deny bash "$1" 2>"$T/tool.err")
	rc=$?
}
field() { # field EXPR: a Python expression over the result object r
	"$PY" -c '
import json, sys
r = json.loads(sys.stdin.read())
v = eval(sys.argv[1])
print(*v) if isinstance(v, tuple) else print(v)' "$1" <<<"$out" 2>/dev/null
}
procs() { # host processes whose command line contains $1
	local c=0 f
	for f in /proc/[0-9]*/cmdline; do
		{ tr '\0' ' ' <"$f"; } 2>/dev/null | grep -q -- "$1" && c=$((c + 1))
	done
	echo $c
}
# procs_settled PATTERN: procs PATTERN once it is 0, or after 5 s (a killed
# process leaves the table when it is reaped, later on a loaded machine)
procs_settled() {
	local n
	for _ in $(seq 50); do
		n=$(procs "$1")
		[ "$n" = 0 ] && break
		sleep 0.1
	done
	echo "$n"
}

suite() {
	ID=$1
	RUNAS=()
	[ "$ID" = nobody ] && RUNAS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	MODE=()
	ENVX=()
	T=$(mktemp -d /var/tmp/moat-pr-XXXXXX) || bail "mktemp"
	chmod 755 "$T"
	OUT=$T/out H=$T/home
	mkdir -p "$OUT" "$H"
	printf '[user]\n\tname = Moat PR\n\temail = pr@example.invalid\n[init]\n\tdefaultBranch = main\n' >"$H/.gitconfig"
	cat >"$T/config.json" <<EOF
{"sandbox": {"mode": "linux"}, "audit_log": "$T/audit.jsonl"}
EOF
	: >"$T/audit.jsonl"
	own "$OUT" "$H" "$T/config.json" "$T/audit.jsonl"
	local tag=$$$RANDOM out rc

	echo "# ---- $ID: quarantine of git files (the user's next git status outside) ----"
	fresh_ws q0
	m -- sh -c ". $G/mksub.sh; mksub evil sub0 $OUT/PWN-control" >/dev/null 2>&1
	git_outside
	checke "$ID: control: a planted submodule config (core.fsmonitor) is set aside, git status outside runs nothing" \
		'! pwned control && [ -e "$WS/.git/modules/evil/config.moat-quarantined" ]'
	# the control without moat: the same plant does run at git status
	fresh_ws q0b
	(cd "$WS" && asid sh -c ". $G/mksub.sh; mksub evil sub0 $OUT/PWN-nomoat" >/dev/null 2>&1)
	git_outside
	checke "$ID: control: the same plant made outside moat runs at git status (the canary works)" 'pwned nomoat'

	# gitcfg_walk skips directories named objects, refs and logs (a
	# repository's own), but a submodule may be named so
	fresh_ws q1
	m -- sh -c ". $G/mksub.sh; mksub logs sub1 $OUT/PWN-logs" >/dev/null 2>&1
	git_outside
	known "a submodule named 'logs' (.git/modules/logs/config) is not skipped by the walk" '! pwned logs'

	# GITCFG_DEPTH: a submodule name with slashes nests its git dir deeper
	fresh_ws q2
	m -- sh -c ". $G/mksub.sh; mksub a/b/c/d/e/f/g/h/i sub2 $OUT/PWN-deep" >/dev/null 2>&1
	git_outside
	known "a submodule config 9 levels below .git/modules (name a/b/c/d/e/f/g/h/i) is checked" '! pwned deep'

	# GITCFG_MAX: 300 harmless configs first, the planted one after them
	fresh_ws q3
	m -- sh -c ". $G/mksub.sh; mksub evil sub5 $OUT/PWN-budget && $PY $G/budget.py" >/dev/null 2>&1
	git_outside
	known "300 harmless submodule configs do not hide a planted one (walk budget 256)" '! pwned budget'

	# set_aside gives up when NAME.moat-quarantined and .2 to .9 exist
	fresh_ws q4
	m -- sh -c ". $G/mksub.sh; mksub slots sub4 $OUT/PWN-slots; d=.git/modules/slots
		for s in '' .2 .3 .4 .5 .6 .7 .8 .9; do : > \$d/config.moat-quarantined\$s; done" >/dev/null 2>"$T/err"
	git_outside
	known "a planted submodule config is set aside even when config.moat-quarantined{,.2..9} exist" \
		'! pwned slots' || echo "#   warned: $(grep -c moat-quarantined "$T/err") line(s)"
	fresh_ws q5
	m -- sh -c ". $G/mksub.sh; evilgit $OUT/PWN-commondir &&
		for s in '' .2 .3 .4 .5 .6 .7 .8 .9; do : > .git/commondir.moat-quarantined\$s; done
		echo ../evilgit > .git/commondir" >/dev/null 2>"$T/err"
	git_outside
	known ".git/commondir is set aside even when commondir.moat-quarantined{,.2..9} exist" \
		'! pwned commondir' || echo "#   warned: $(grep -c moat-quarantined "$T/err") line(s)"
	fresh_ws q5b
	m -- sh -c 'for s in "" .2 .3 .4 .5 .6 .7 .8 .9; do : > .mcp.json.moat-quarantined$s; done
		echo "{\"mcpServers\": {\"x\": {\"command\": \"evil\"}}}" > .mcp.json' >/dev/null 2>"$T/err"
	checke "$ID: a .mcp.json set aside past the 9 usual names is named in a warning" \
		'grep -q "moat-quarantined.*\.mcp\.json" "$T/err"'
	known "a .mcp.json created inside is set aside even when all 9 set-aside names are taken" \
		'! grep -q evil "$WS/.mcp.json" 2>/dev/null'

	# a submodule whose git dir is not below .git/modules: an embedded
	# repository added as a gitlink (the index is writable inside)
	fresh_ws q6
	m -- sh -c "mkdir sub6 && cd sub6 && git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x &&
		git config core.fsmonitor 'touch $OUT/PWN-embedded; false' && cd .. && git add sub6" >/dev/null 2>&1
	git_outside
	checke "$ID: an embedded repository added as a gitlink (sub/.git/config with core.fsmonitor) runs nothing at git status" \
		'! pwned embedded && [ -e "$WS/sub6/.git/config.moat-quarantined" ]'
	# the same through a .git FILE of the nested work tree (gitdir: to a
	# planted git directory elsewhere in the workspace)
	fresh_ws q6b
	m -- sh -c ". $G/mksub.sh; evilgit $OUT/PWN-nestedgitfile && mkdir sub6b && cd sub6b && git init -q &&
		git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x && cd .. && git add sub6b &&
		rm -rf sub6b/.git && echo 'gitdir: ../evilgit' > sub6b/.git" >/dev/null 2>&1
	git_outside
	checke "$ID: a nested work tree's .git FILE sending git to a planted config is set aside" \
		'! pwned nestedgitfile && [ -e "$WS/sub6b/.git.moat-quarantined" ]'
	# the same split over two runs: a clean embedded repository added as a
	# gitlink, then its config changed by a run that leaves the index alone
	fresh_ws q6e
	m -- sh -c "mkdir sub6e && cd sub6e && git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x &&
		cd .. && git add sub6e" >/dev/null 2>&1
	m -- sh -c "git config -f sub6e/.git/config core.fsmonitor 'touch $OUT/PWN-tworuns; false'" >/dev/null 2>&1
	git_outside
	checke "$ID: a gitlinked repository's config changed in a later run (the index untouched) runs nothing" \
		'! pwned tworuns && [ -e "$WS/sub6e/.git/config.moat-quarantined" ]'
	# the same with an index in git's version 4 (prefix-compressed paths),
	# and in a SHA-256 repository, among ordinary entries
	for kind in v4 sha256; do
		fresh_ws "q6e$kind" plain
		fmt=
		[ $kind = sha256 ] && fmt=--object-format=sha256
		(cd "$WS" && asid env HOME="$H" sh -c "git init -q $fmt . && echo 0 >f0 && git add f0 &&
			git -c user.name=t -c user.email=t@t commit -q -m init &&
			{ [ $kind != v4 ] || git update-index --index-version 4; }") || bail "git init ($kind)"
		m -- sh -c "mkdir -p a/b && echo x > a/b/file1 && echo y > a/b/file2 && git add a &&
			mkdir -p a/b/sub && cd a/b/sub && git init -q $fmt && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x &&
			cd ../../.. && git add a/b/sub && echo z > a/b/zz && git add a/b/zz" >/dev/null 2>&1
		m -- sh -c "git config -f a/b/sub/.git/config core.fsmonitor 'touch $OUT/PWN-tworuns$kind; false'" >/dev/null 2>&1
		git_outside
		checke "$ID: ... also with an index of version 4 / a SHA-256 repository ($kind)" \
			'! pwned tworuns$kind && [ -e "$WS/a/b/sub/.git/config.moat-quarantined" ]'
	done
	# a symlinked .git/modules entry and a gitdir through it
	fresh_ws q6f
	m -- sh -c ". $G/mksub.sh; evilgit $OUT/PWN-modlink && mkdir sub6f && cd sub6f && git init -q &&
		git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x && cd .. && git add sub6f &&
		rm -rf sub6f/.git && mkdir -p .git/modules && ln -s ../../evilgit .git/modules/x &&
		echo 'gitdir: ../.git/modules/x' > sub6f/.git" >/dev/null 2>&1
	git_outside
	checke "$ID: a .git/modules entry that is a link, and a gitdir through it, run nothing" '! pwned modlink'
	# honest work: a nested repository with a plain config, and git's own
	# redirect into .git/modules, stay as they are
	fresh_ws q6c
	m -- sh -c "mkdir sub6c && cd sub6c && git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x &&
		cd .. && git add sub6c && mkdir -p .git/modules/m6 sub6d && echo 'gitdir: ../.git/modules/m6' > sub6d/.git" >/dev/null 2>&1
	checke "$ID: honest nested repositories are left alone (a plain config, a redirect into .git/modules)" \
		'[ -f "$WS/sub6c/.git/config" ] && [ -f "$WS/sub6d/.git" ]'

	# a repository right below the workspace that is no gitlink (an editor
	# opens it and runs git there on its own; so does the user who cds in):
	# its config and hooks written during the run are set aside, in a
	# repository and in a plain workspace alike
	for kind in repo plain; do
		if [ $kind = repo ]; then fresh_ws "q6g$kind"; else fresh_ws "q6g$kind" plain; fi
		m -- sh -c "mkdir sub6g && cd sub6g && git init -q &&
			git config core.fsmonitor 'touch $OUT/PWN-untracked$kind; false' &&
			for d in \$(ls -d .g*); do printf '#!/bin/sh\ntouch $OUT/PWN-nhook$kind\n' > \$d/hooks/pre-commit; chmod +x \$d/hooks/pre-commit; done" \
			>/dev/null 2>&1
		(cd "$WS/sub6g" && asid env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" sh -c \
			'git status; git -c user.name=t -c user.email=t@t commit -q --allow-empty -m y') >/dev/null 2>&1
		checke "$ID: a nested repository (no gitlink) written inside runs nothing at git status or commit there ($kind)" \
			'! pwned untracked$kind && ! pwned nhook$kind && [ -e "$WS/sub6g/.git/config.moat-quarantined" ] && [ -e "$WS/sub6g/.git/hooks/pre-commit.moat-quarantined" ]'
	done
	# the same behind a link right below the workspace (the editor opens
	# the link's name)
	fresh_ws q6l plain
	m -- sh -c "mkdir -p .x/r && cd .x/r && git init -q && git config core.fsmonitor 'touch $OUT/PWN-linked; false' &&
		cd ../.. && ln -s $WS/.x/r abs" >/dev/null 2>&1
	(cd "$WS/abs" && asid env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" git status) >/dev/null 2>&1
	checke "$ID: a nested repository behind a link right below the workspace runs nothing at git status" \
		'! pwned linked && [ -e "$WS/.x/r/.git/config.moat-quarantined" ]'
	# two runs at once: A creates .envrc (set aside after A), B started
	# while it existed (bound read-only in B); A's set-aside moves B's
	# mount with it, and B writes a new .envrc in its place: B's own
	# post-run check must set that one aside too
	for kind in repo plain; do
		if [ $kind = repo ]; then fresh_ws "qc$kind"; else fresh_ws "qc$kind" plain; fi
		m -- sh -c 'echo "echo A" > .envrc; i=0; while [ ! -e b-started ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done' \
			>/dev/null 2>&1 &
		apid=$!
		i=0
		while [ ! -e "$WS/.envrc" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
		m -- sh -c 'touch b-started; i=0; while [ ! -e .envrc.moat-quarantined ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
			echo "echo EVIL" > .envrc' >/dev/null 2>"$T/err.b"
		wait $apid
		checke "$ID: a protected file made again in its place while another run set it aside is set aside too ($kind)" \
			'! grep -q EVIL "$WS/.envrc" 2>/dev/null && grep -q EVIL "$WS"/.envrc.moat-quarantined.2 && grep -q "made while another call" "$T/err.b"'
	done
	# honest work: a repository cloned or made right below the workspace
	# keeps its config and git's sample hooks
	fresh_ws q6h plain
	m -- sh -c "mkdir sub6h && cd sub6h && git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x &&
		git config user.name t && git remote add origin https://example.invalid/x.git" >/dev/null 2>&1
	checke "$ID: an honest nested repository keeps its config and sample hooks" \
		'[ -f "$WS/sub6h/.git/config" ] && [ -f "$WS/sub6h/.git/hooks/pre-commit.sample" ] && ! ls "$WS/sub6h/.git" "$WS/sub6h/.git/hooks" | grep -q quarantined'

	# a workspace that is not a repository: git init inside, then what a
	# repository that existed before would have had checked
	fresh_ws q7 plain
	m -- sh -c ". $G/mksub.sh; git init -q . && evilgit $OUT/PWN-newcommondir && echo ../evilgit > .git/commondir" \
		>/dev/null 2>&1
	git_outside
	known "git init inside a plain workspace, then .git/commondir: set aside like in an existing repository" \
		'! pwned newcommondir'
	fresh_ws q8 plain
	m -- sh -c "git init -q evil && git -C evil config core.fsmonitor 'touch $OUT/PWN-gitfile; false' &&
		echo 'gitdir: evil/.git' > .git" >/dev/null 2>"$T/err"
	git_outside
	known "a plain workspace given a .git FILE (gitdir: to a planted config): set aside, or at least named" \
		'! pwned gitfile || grep -q "\.git" "$T/err"'

	fresh_ws q9 plain
	m -- sh -c "git init -q . && $PY $G/hooks.py $OUT/PWN-hooks" >/dev/null 2>&1
	(cd "$WS" && asid env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" \
		git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x >/dev/null 2>&1)
	known "git init inside, then hooks among 8000 *.sample files: every hook is set aside (git commit outside)" \
		'! pwned hooks'

	echo "# ---- $ID: what moat says after the run ----"
	# names in the quarantine warning come from the command (directory
	# names below .git/modules): terminal escapes reach the user's terminal
	fresh_ws w1
	m -- sh -c 'n=$(printf "\033[2K\r\033[8m"); mkdir -p ".git/modules/$n" && printf "[core]\n\tfsmonitor = x\n" > ".git/modules/$n/config"' \
		>/dev/null 2>"$T/err"
	checke "$ID: control: the planted config was set aside and a warning printed" \
		'grep -q moat-quarantined "$T/err"'
	known "no raw terminal escape in moat's own stderr lines (a name that erases and conceals the warning)" \
		'! grep -a "^moat run:" "$T/err" | grep -q $'"'"'\x1b'"'"
	# the same with invalid UTF-8, through the bash tool: the result JSON
	fresh_ws w2
	tool '{"command": "n=$(printf \"\\377\"); mkdir -p \".git/modules/$n\" && printf \"[core]\\n\\tfsmonitor = x\\n\" > \".git/modules/$n/config\"; echo MARK-w2"}'
	known "bash tool: a quarantined name with invalid UTF-8 keeps the call's result (stdout, the warning)" \
		'[ "$(field "\"MARK-w2\" in r[\"data\"][\"stdout\"] and \"moat-quarantined\" in r[\"data\"].get(\"warning\", \"\")")" = True ]' ||
		echo "#   $(head -c 200 <<<"$out")"
	# stderr is shared with the command: it makes it non-blocking and fills
	# the pipe, moat's warning after the run then fails with EAGAIN
	fresh_ws w3
	(m -- "$PY" "$G/nonblock.py" 2>&1 >/dev/null | (sleep 1; cat)) >"$T/err3"
	checke "$ID: control: the planted .git/commondir was set aside" '[ -e "$WS/.git/commondir.moat-quarantined" ]'
	known "the quarantine warning reaches a stderr pipe the command made non-blocking and filled" \
		'grep -q moat-quarantined "$T/err3"'
	# the bash tool's output: bounded, escaped, nothing raw
	fresh_ws w4
	tool '{"command": "printf \"a\\033[2J\\000b\\377c\\r\\n\"; printf \"\\033]0;x\\007\" >&2"}'
	checke "$ID: bash tool: escapes, NUL and invalid UTF-8 in the output: JSON parses, no raw control byte" \
		'[ "$(field "r[\"data\"][\"stdout\"]")" = "$(printf "a\033[2J\357\277\275b\357\277\275c\r")" ] &&
		 ! LC_ALL=C grep -q "[[:cntrl:]]" <<<"$out" && ! grep -qaP "\xff" <<<"$out"'
	tool '{"command": "head -c 40000000 /dev/zero | tr \"\\0\" x"}'
	checke "$ID: bash tool: 40 MB of output give a bounded result (${#out} bytes) with the true count" \
		'[ "$(field "r[\"data\"][\"stdout_bytes\"], r[\"data\"][\"stdout_truncated\"]")" = "40000000 True" ] && [ ${#out} -lt 2000000 ]'
	tool "{\"command\": \"setsid nohup sleep 341.$tag >/dev/null 2>&1 & (sleep 342.$tag &); trap '' TERM; sh -c 'exec sleep 343.$tag' & echo done\"}"
	checke "$ID: bash tool: grandchildren holding the pipes do not hold the call, and are gone" \
		'[ $rc = 0 ] && [ "$(procs_settled "34[123]\.$tag")" = 0 ]'

	echo "# ---- $ID: cleanup after the run ----"
	fresh_ws c1
	local p
	p=$(m --tmp-workspace -- sh -c 'pwd; for i in $(seq 300); do mkdir d && cd d || exit 1; done' 2>/dev/null | head -1)
	checke "$ID: control: the temporary workspace was in /tmp ($p)" '[ "${p#/tmp/moat-ws-}" != "$p" ]'
	[ -n "$p" ] && [ -e "$p" ] && LEFT+=("$p")
	known "a temporary workspace 300 levels deep is removed" '[ -n "$p" ] && [ ! -e "$p" ]'
	p=$(m --tmp-workspace -- sh -c 'pwd; mkdir -p a/b && echo x > a/b/f && chmod 500 a/b a' 2>/dev/null | head -1)
	[ -n "$p" ] && [ -e "$p" ] && LEFT+=("$p")
	if [ "$ID" = root ]; then
		checke "$ID: a temporary workspace with a read-only directory is removed (root)" '[ -n "$p" ] && [ ! -e "$p" ]'
	else
		known "a temporary workspace with a read-only directory (chmod 500) is removed" '[ -n "$p" ] && [ ! -e "$p" ]'
	fi
	# the stand-ins of a moat killed in the middle of its setup (SIGKILL:
	# nothing of moat runs) go with the next run; nothing of the command
	# survives
	fresh_ws c2
	(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" ${RUNAS[@]+"${RUNAS[@]}"} \
		"$PY" "$G/midkill.py" "344$tag" "$MOAT" run --)
	(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" ${RUNAS[@]+"${RUNAS[@]}"} \
		"$PY" "$G/midkill.py" "345$tag" "$MOAT" run --net deny --)
	checke "$ID: moat SIGKILLed at 24 points of its setup: no command survives" \
		'[ "$(procs_settled "34[45]$tag\.")" = 0 ]'
	m -- true >/dev/null 2>&1
	# (a stand-in is made under a temporary name, marked, then renamed: a
	# kill in between leaves .moat-standin.PID.N, removed once PID is gone)
	checke "$ID: ... and the next run removes the stand-ins it left" \
		'[ -z "$(cd "$WS" && ls -A | grep -v "^\.git$")" ]' || echo "#   left: $(cd "$WS" && ls -A | tr '\n' ' ')"

	echo "# ---- $ID: nested workspaces: moat's post-run work follows a swapped path ----"
	# run B in O/inner; while it runs, run A (workspace O, so allowed to)
	# replaces O/inner with a symlink to a directory outside both; B's
	# post-run work opens the workspace by path again
	local O=$T/nest/O V=$T/nest/victim
	mkdir -p "$O/inner" "$V/.claude"
	echo 'user bashrc' >"$V/.bashrc"
	echo '{"mcpServers": {}}' >"$V/.mcp.json"
	(cd "$O/inner" && git init -q . && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m i)
	own "$T/nest"
	WS=$O/inner
	rm -f "$OUT/go"
	m -- sh -c "touch started; while [ ! -e go ]; do sleep 0.05; done" >/dev/null 2>&1 &
	local bp=$!
	for _ in $(seq 200); do [ -e "$O/inner/started" ] && break; sleep 0.05; done
	WS=$O
	m -- sh -c 'mv inner inner.real && ln -s ../victim inner && touch inner.real/go' >/dev/null 2>&1
	wait $bp
	checke "$ID: control: the concurrent run swapped the path" '[ -L "$O/inner" ]'
	known "a run whose workspace path was swapped renames nothing outside it (~/.bashrc, ~/.mcp.json)" \
		'[ -e "$V/.bashrc" ] && [ -e "$V/.mcp.json" ] && [ -z "$(ls -A "$V" | grep moat-quarantined)" ]' ||
		echo "#   outside now: $(ls -A "$V" | tr '\n' ' ')"

	echo "# ---- $ID: user namespaces unavailable (MOAT_FAKE_NO_USERNS=1, --fallback warn) ----"
	ENVX=(MOAT_FAKE_NO_USERNS=1)
	MODE=(--fallback warn)
	fresh_ws n1
	m -- sh -c 'kill -STOP $PPID; kill -TSTP $PPID; kill -TERM $PPID; kill -KILL $PPID; exit 7' >/dev/null 2>&1
	rc=$?
	checke "$ID: (no userns) the command cannot stop or kill moat, its parent (exit $rc, want 7)" '[ $rc = 7 ]'
	m -- sh -c ". $G/mksub.sh; evilgit $OUT/PWN-nous-commondir && echo ../evilgit > .git/commondir" >/dev/null 2>&1
	git_outside
	checke "$ID: (no userns) control: .git/commondir is set aside in this mode too" '! pwned nous-commondir'
	p=$(m -- sh -c 'echo $TMPDIR; cd $TMPDIR && for i in $(seq 300); do mkdir d && cd d || exit 1; done; head -c 20000000 /dev/zero > big' 2>/dev/null | head -1)
	checke "$ID: (no userns) control: the command had a scratch TMPDIR ($p)" '[ -n "$p" ] && [ "${p#*/moat-tmp-}" != "$p" ]'
	[ -n "$p" ] && [ -e "$p" ] && LEFT+=("$p")
	known "(no userns) the scratch TMPDIR is removed even 300 levels deep (20 MB left in $(dirname "${p:-/x}") otherwise)" \
		'[ -n "$p" ] && [ ! -e "$p" ]'
	if [ "$ID" = nobody ]; then
		# a fork bomb (bounded by RLIMIT_NPROC, which counts all the
		# user's processes; SIGTERM, SIGINT and SIGHUP ignored) that first
		# plants .git/commondir. When this file was written, moat's tree
		# kill (its direct children only, one generation a round) could not
		# keep up: --timeout 2 ran for minutes, the post-run quarantine never
		# came before moat was killed from outside, and through the bash
		# tool (whose backstop kills the runner) the bomb outlived the call.
		# Meanwhile a concurrent run starved of processes must fail closed.
		fresh_ws n2
		echo canary-content >"$OUT/canary"
		own "$OUT/canary"
		BOMB=$G/bomb$tag.py
		cat >"$BOMB" <<EOF
import os, signal, sys
if len(sys.argv) > 1:
    os.makedirs("evilgit", exist_ok=True)
    os.system(". $G/mksub.sh; evilgit " + sys.argv[1])
    open(".git/" + "commondir", "w").write("../evilgit\\n")
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
while True:
    try: os.fork()
    except OSError: pass
EOF
		chmod 644 "$BOMB"
		mkdir -p "$T/xdg" && own "$T/xdg" # its scratch TMPDIR, if moat is killed
		ENVX+=("XDG_RUNTIME_DIR=$T/xdg")
		TPRES=--preserve-status TMO=25 m --timeout 2 -- "$PY" "$BOMB" "$OUT/PWN-bomb" >/dev/null 2>&1 &
		local fb=$!
		sleep 1
		m -- sh -c "echo x > $OUT/canary; echo ran > ran" >/dev/null 2>"$T/errfb"
		rc=$?
		wait $fb
		local brc=$?
		sleep 0.5
		checke "$ID: (no userns) a setup starved of processes by a concurrent run fails closed (exit $rc)" \
			'[ "$(cat "$OUT/canary")" = canary-content ] && { [ $rc = 0 ] || [ ! -e "$WS/ran" ]; }' ||
			echo "#   $(head -2 "$T/errfb")"
		known "(no userns) --timeout 2 ends a fork bomb: moat returns 124 by itself (got $brc; 143 or 137: killed from outside at 25 s)" \
			'[ $brc = 124 ]'
		reap_bomb # (timeout -k killed its process group too)
		git_outside
		known "(no userns) ... and its post-run quarantine ran (.git/commondir planted before the bomb)" \
			'! pwned bomb'
		# the same through the bash tool: its backstop (timeout + 10 s)
		# SIGTERMs the runner (blocked in kill_tree), SIGKILLs it 5 s later;
		# the bomb is nobody's child any more
		fresh_ws n3
		cat >"$T/nous.json" <<EOF
{"sandbox": {"mode": "linux", "fallback": "warn"}, "audit_log": "$T/audit.jsonl"}
EOF
		own "$T/nous.json"
		out=$(cd "$WS" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 ${ENVX[@]+"${ENVX[@]}"} \
			timeout -k 2 40 ${RUNAS[@]+"${RUNAS[@]}"} "$MOAT" tool --config "$T/nous.json" --cwd "$WS" \
			--approve-with deny bash "{\"command\": \"exec $PY $BOMB $OUT/PWN-bomb2\", \"timeout\": 1}" 2>/dev/null)
		sleep 1
		local left
		left=$("$PY" "$G/reap.py" "$BOMB" count)
		reap_bomb
		known "(no userns) bash tool: no process of a fork bomb outlives the call ($left left; $(field 'r["error"]'))" \
			'[ "$left" = 0 ]'
		git_outside
		known "(no userns) bash tool: ... and the post-run quarantine ran" '! pwned bomb2'
		BOMB=
	else
		na "$ID: (no userns) process exhaustion: the process limit is not enforceable for root here"
	fi
	MODE=()
	ENVX=()

	rm -rf "$T"
	T=
}

if [ "$(id -u)" = 0 ]; then
	suite root
	suite nobody
else
	suite "$(id -un)"
	skip "the nobody run needs root"
fi

echo "1..$n"
[ $failed = 0 ]
