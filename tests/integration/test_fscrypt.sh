#!/bin/bash
# An encrypted directory (fscrypt) in the workspace, seen from outside.
# While it is locked its entries have encoded names, and adding its key
# brings the real names back without changing the directory's times and
# without an inotify event: a record of the workspace scan made while it
# was locked must never stand for it once unlocked (docs/sandbox.md,
# masks). Here: `moat run` with its record on disk, and a session's shell
# calls whose sandbox is armed ahead (the watch, tests/mcp/armed_fscrypt.mjs
# covers the MCP side). TAP output.
#
#   MOAT=path/to/moat MOAT_FSCRYPT_KEY=path/to/fscrypt_key \
#       bash tests/integration/test_fscrypt.sh
#
# Needs root (a loop-mounted ext4 with the encrypt feature) and a kernel
# with fscrypt; otherwise it skips.
set -u

MOAT=${MOAT:-$(command -v moat)}
. "$(dirname "$0")/../lib/tap.sh"
[ -x "$MOAT" ] || bail "no moat binary (set MOAT)"
KEY=${MOAT_FSCRYPT_KEY:-}

T=$(mktemp -d /var/tmp/moat-fscrypt.XXXXXX)
MNT=$T/mnt
cleanup() {
	[ -n "$KEY" ] && [ -d "$MNT/ws/vault" ] && "$KEY" lock "$MNT/ws/vault" >/dev/null 2>&1
	mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"
	rm -rf "$T"
}
trap cleanup EXIT

setup() {
	[ "$(id -u)" = 0 ] || { echo "not root"; return 1; }
	[ -x "$KEY" ] || { echo "no fscrypt_key helper (set MOAT_FSCRYPT_KEY)"; return 1; }
	command -v mkfs.ext4 >/dev/null || { echo "no mkfs.ext4"; return 1; }
	truncate -s 64M "$T/img" && mkfs.ext4 -q -O encrypt -F "$T/img" >/dev/null 2>&1 ||
		{ echo "mkfs.ext4 -O encrypt failed"; return 1; }
	mkdir -p "$MNT" && mount -o loop "$T/img" "$MNT" 2>/dev/null || { echo "no loop mount"; return 1; }
	mkdir -p "$MNT/ws/vault" && "$KEY" setpolicy "$MNT/ws/vault" >/dev/null 2>&1 ||
		{ echo "this kernel has no fscrypt"; return 1; }
	return 0
}
if ! why=$(setup); then
	skip "an encrypted directory: $why"
	echo "1..$n"
	[ "$failed" = 0 ]
	exit
fi

WS=$MNT/ws
export HOME=$T/home
unset XDG_CACHE_HOME
mkdir -p "$HOME"
# (records are kept for workspaces of 32 directories or more)
for i in $(seq 1 40); do mkdir -p "$WS/pad/p$i"; done
echo vault-canary >"$WS/vault/.env"
echo plain >"$WS/vault/notes"
"$KEY" lock "$WS/vault" >/dev/null || bail "cannot lock the directory"
locked=$(ls -A "$WS/vault" | tr '\n' ' ')
check "locked, the directory lists encoded names ($locked)" cond '! ls -A "$WS/vault" | grep -qx .env'

run() { (cd "$WS" && "$MOAT" run --profile workspace-write-no-network --workspace "$WS" -- "$@"); }
out=$(run true 2>&1) || bail "moat run does not work here: $out"
ls "$HOME"/.cache/moat/scan-* >/dev/null 2>&1 || bail "no scan record was written"
# older than the record's slack, and recorded again while locked
sleep 3
run true >/dev/null 2>&1
run true >/dev/null 2>&1

ct_before=$(stat -c %Z "$WS/vault")
"$KEY" unlock "$WS/vault" >/dev/null || bail "cannot unlock the directory"
check "unlocked, the real names are back, the directory's change time unchanged" \
	cond '[ -f "$WS/vault/.env" ] && [ "$(stat -c %Z "$WS/vault")" = "$ct_before" ]'
got=$(run sh -c 'cat vault/.env 2>&1; cat vault/notes' 2>&1)
check "a secret in a directory unlocked after the record is masked in the next run" \
	cond '! printf %s "$got" | grep -q vault-canary && printf %s "$got" | grep -q plain'
[ "$failed" = 0 ] || echo "# the run printed: $got"

echo "1..$n"
[ "$failed" = 0 ]
