#!/bin/bash
# The audit log fails closed, seen from outside: `moat tool` with its log on
# a 64 KiB tmpfs (mounted in a private mount namespace), on a full one, on a
# read-only one, on /dev/full, and in a file only root may write while moat
# runs as nobody. Each time the call must fail and say why, the workspace
# shows whether the tool ran, and the log never holds a half record; with
# audit_required: false the same call goes through. TAP output.
#
#   MOAT=path/to/moat MOAT_SRC=repo bash tests/integration/test_audit_diskfull.sh
#
# Needs a private mount namespace (root, or unprivileged user namespaces);
# without one the tmpfs cases skip (fail under MOAT_MUST_WORK=1).
set -u

MOAT=${MOAT:-$(command -v moat)}
. "$(dirname "$0")/../lib/tap.sh"

# all CMD1 -- CMD2 -- ...: true when every command is
all() {
	local c=()
	for a in "$@" --; do
		if [ "$a" = -- ]; then
			"${c[@]}" || return 1
			c=()
		else
			c+=("$a")
		fi
	done
}

[ -x "$MOAT" ] || bail "no moat binary (set MOAT)"
"$MOAT" tool --help >/dev/null 2>&1 || bail "moat tool is not available"

# Into a private mount namespace: the tmpfs below is nobody else's business
# and disappears with the test.
if [ "${MOAT_AUDIT_NS:-}" != 1 ]; then
	if unshare -m --propagation private true 2>/dev/null; then
		MOAT_AUDIT_NS=1 exec unshare -m --propagation private bash "$0" "$@"
	elif unshare -r -m --propagation private true 2>/dev/null; then
		MOAT_AUDIT_NS=1 exec unshare -r -m --propagation private bash "$0" "$@"
	fi
	MOAT_AUDIT_NS=none
fi

T=$(mktemp -d /tmp/moat-diskfull-XXXXXX) || bail "mktemp"
chmod 755 "$T"
trap 'umount "$T/full" 2>/dev/null; rm -rf "$T"' EXIT
export HOME=$T/home XDG_CONFIG_HOME=$T/config XDG_STATE_HOME=$T/state
unset MOAT_SYSLOG_SOCKET
WS=$T/ws
mkdir -p "$HOME" "$WS" "$T/full"
cd "$WS" || bail "cd"

# call LOG NAME [CONFIG]: a write_file of WS/NAME logged to LOG; output in
# $T/out, exit status in $rc
call() {
	local cfg=()
	[ -n "${3:-}" ] && cfg=(--config "$3")
	"$MOAT" tool "${cfg[@]}" --audit-log "$1" write_file \
		"{\"path\": \"$WS/$2\", \"content\": \"hello\"}" >"$T/out" 2>&1
	rc=$?
}
lines() { if [ -e "$1" ]; then wc -l <"$1"; else echo 0; fi; }
# a log holds no half record: every byte is in a complete, parsable line
whole() {
	[ ! -s "$1" ] && return 0
	[ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] &&
		"$MOAT" audit verify --log "$1" >/dev/null
}
printf '{"audit_required": false}\n' >"$T/optional.json"

# ---- /dev/full: the write itself fails (the tool ran, its result is withheld) ----
if [ -w /dev/full ]; then
	call /dev/full devfull.txt
	check "/dev/full: the call fails (exit 1)" [ "$rc" = 1 ]
	check "/dev/full: it says the disk is full" grep -q 'disk full' "$T/out"
	check "/dev/full: it says the result is withheld" grep -q 'withheld' "$T/out"
	check "/dev/full: no result was handed back" [ "$(grep -c '"ok":true' "$T/out")" = 0 ]
	call /dev/full devfull2.txt "$T/optional.json"
	check "/dev/full with audit_required: false: the call succeeds" [ "$rc" = 0 ]
	check "... and the file is written" [ "$(cat "$WS/devfull2.txt" 2>/dev/null)" = hello ]
else
	skip "no writable /dev/full"
fi

# ---- a file only root may write, moat as nobody ----
if [ "$(id -u)" = 0 ] && [ "$MOAT_AUDIT_NS" = 1 ] && id nobody >/dev/null 2>&1 &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
	mkdir -p "$T/nb/ws"
	: >"$T/nb/root.jsonl"
	chmod 644 "$T/nb/root.jsonl"
	chown nobody:nogroup "$T/nb/ws"
	(cd "$T/nb/ws" && HOME=$T/nb setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$MOAT" tool --audit-log "$T/nb/root.jsonl" write_file \
		"{\"path\": \"$T/nb/ws/x.txt\", \"content\": \"hello\"}") >"$T/out" 2>&1
	rc=$?
	check "an unwritable log: the call fails" [ "$rc" != 0 ]
	check "... saying permission denied and naming the log" \
		grep -q "root.jsonl.*permission denied\|permission denied.*root.jsonl" "$T/out"
	check "... and nothing ran" [ ! -e "$T/nb/ws/x.txt" ]
	check "... and the log is untouched" [ ! -s "$T/nb/root.jsonl" ]
else
	skip "cannot run moat as nobody here"
fi

# ---- a 64 KiB tmpfs ----
if [ "$MOAT_AUDIT_NS" != 1 ] || ! mount -t tmpfs -o size=64k,mode=0755 moat-audit "$T/full" 2>/dev/null; then
	skip "no private mount namespace for a 64 KiB tmpfs"
	echo "1..$n"
	[ "$failed" = 0 ]
	exit
fi
LOG=$T/full/audit.jsonl

# 64 KiB free is less than one record may need: refused before the tool runs
call "$LOG" small.txt
check "a nearly full disk: the call fails (exit 1)" [ "$rc" = 1 ]
check "... saying disk full" grep -q 'disk full' "$T/out"
check "... and nothing ran" [ ! -e "$WS/small.txt" ]
check "... and the log holds only whole records" whole "$LOG"

# full to the last block, and a new log (a record appended to the old one
# may still fit in its last page): not even the refusal fits
dd if=/dev/zero of="$T/full/filler" bs=4k 2>/dev/null
dd if=/dev/zero of="$T/full/filler2" bs=1 2>/dev/null
LOG=$T/full/audit2.jsonl
before=$(lines "$LOG")
size_before=$(stat -c %s "$LOG" 2>/dev/null || echo 0)
call "$LOG" full.txt
check "a full disk: the call fails (exit 1)" [ "$rc" = 1 ]
check "... saying disk full" grep -q 'disk full' "$T/out"
check "... and nothing ran" [ ! -e "$WS/full.txt" ]
check "... and the log did not grow by a partial line" \
	all [ "$(stat -c %s "$LOG" 2>/dev/null || echo 0)" = "$size_before" ] -- [ "$(lines "$LOG")" = "$before" ]
check "... and holds only whole records" whole "$LOG"
for i in 1 2 3; do call "$LOG" "again$i.txt"; done
check "calls keep failing closed while the disk is full" \
	all [ "$rc" = 1 ] -- [ ! -e "$WS/again1.txt" ] -- [ ! -e "$WS/again3.txt" ]

call "$LOG" optional.txt "$T/optional.json"
check "audit_required: false: the call goes through" [ "$rc" = 0 ]
check "... and the file is written" [ "$(cat "$WS/optional.txt" 2>/dev/null)" = hello ]

# space again (the tmpfs grown to 4 MiB): records resume, whole
rm -f "$T/full/filler" "$T/full/filler2"
mount -o remount,size=4m "$T/full"
call "$LOG" after.txt
check "with space again the call succeeds" [ "$rc" = 0 ]
check "... and is recorded" [ "$(grep -c '/after\.txt"' "$LOG")" = 1 ]
check "the log verifies after it all" whole "$LOG"

# a read-only file system: the log cannot be opened
mount -o remount,ro "$T/full" 2>/dev/null || mount -o remount,ro,bind "$T/full"
call "$T/full/new.jsonl" ro.txt
check "a read-only file system: the call fails" [ "$rc" != 0 ]
check "... saying read-only" grep -q 'read-only' "$T/out"
check "... and nothing ran" [ ! -e "$WS/ro.txt" ]

echo "1..$n"
[ "$failed" = 0 ]
