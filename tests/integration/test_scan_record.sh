#!/bin/bash
# The workspace scan's record on disk (docs/sandbox.md, masks), seen from
# outside: one `moat run` records which workspace directories hold nothing
# to mask, the next reads again only those that changed. Secrets made
# after the record are masked all the same (in a directory it read, in a
# new directory, in one whose mtime was set back); a record where the
# sandbox could write it (inside the workspace), one without moat's tag,
# one anybody may write, or a damaged one is never used, while a forgery
# with moat's tag is (the control: it shows the forging below works, so the
# refusals are real); a sandboxed run that may write the cache directory
# cannot plant one (it cannot read the key). TAP output.
#
#   MOAT=path/to/moat bash tests/integration/test_scan_record.sh
#
# Needs a mount namespace (root, or unprivileged user namespaces).
set -u

MOAT=${MOAT:-$(command -v moat)}
. "$(dirname "$0")/../lib/tap.sh"
check() { # check DESC CMD...
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
[ -x "$MOAT" ] || bail "no moat binary (set MOAT)"
require_sandbox
command -v python3 >/dev/null || bail "python3 is needed to forge a record"

T=$(mktemp -d /var/tmp/moat-scanrec.XXXXXX)
trap 'rm -rf "$T"' EXIT
WS=$T/ws
export HOME=$T/home XDG_CACHE_HOME=
unset XDG_CACHE_HOME
# (records are kept for workspaces of 32 directories or more)
pad() { for i in $(seq 1 40); do mkdir -p "$1/pad/p$i"; done; }
mkdir -p "$WS/a/b/c" "$WS/d" "$HOME"
pad "$WS"
for i in 1 2 3 4 5; do : >"$WS/a/b/c/f$i.txt"; done
run() { (cd "$WS" && "$MOAT" run --profile workspace-write-no-network --workspace "$WS" -- "$@"); }
# can the command read each of these? prints the names it could
readable() { run sh -c 'for f; do cat "$f" >/dev/null 2>&1 && echo "$f"; done; true' sh "$@"; }
records() { ls "$HOME/.cache/moat/" 2>/dev/null | grep -c '^scan-'; }

out=$(run true 2>&1) || bail "moat run does not work here: $out"
[ "$(records)" = 1 ] || bail "no record was written to $HOME/.cache/moat"
ok "a run keeps the scan's record in the user's cache directory"
rec=$(ls "$HOME"/.cache/moat/scan-*)
check "the record is the user's alone (mode 600)" [ "$(stat -c %a "$rec")" = 600 ]

# the directories are older than the record's slack now, and recorded again
sleep 3
run true >/dev/null 2>&1
run true >/dev/null 2>&1

# 1. secrets made after the record
echo SECRET1 >"$WS/a/b/c/.env"
mkdir "$WS/d/new"
echo SECRET2 >"$WS/d/new/id_rsa"
echo SECRET3 >"$WS/a/key.pem"
touch -d '2001-01-01' "$WS/a" # its mtime set back (its ctime cannot be)
echo plain >"$WS/a/b/c/plain.txt"
got=$(readable a/b/c/.env d/new/id_rsa a/key.pem a/b/c/plain.txt)
check "secrets made after the record are masked, a new plain file is read ($got)" \
	[ "$got" = a/b/c/plain.txt ]

# 2. forged records: a/b/c recorded as holding nothing to mask, with its
# current identity and times (what a planted record would claim)
forge() { # forge SRC DST WS REL [sign]: a copy of record SRC with REL holding
	# nothing; tagged with moat's key from the user's keyring when "sign"
	python3 - "$@" <<'EOF'
import ctypes, os, struct, sys
src, dst, ws, target = sys.argv[1:5]
sign = len(sys.argv) > 5 and sys.argv[5] == 'sign'
b = open(src, 'rb').read()[:-8]  # (the tag)
p = 8 + 8 + 8
ndirs, = struct.unpack_from('<I', b, p); p += 4
wl, = struct.unpack_from('<I', b, p); p += 4 + wl
kl, = struct.unpack_from('<I', b, p); p += 4 + kl
out = bytearray(b[:p])
st = os.stat(os.path.join(ws, target))
for _ in range(ndirs):
    rl, = struct.unpack_from('<I', b, p); rel = b[p + 4:p + 4 + rl].decode(); q = p + 4 + rl
    dev, ino, cs, cn, ms, mn, ent, ne = struct.unpack_from('<QQqIqIII', b, q); q += 48
    ents = []
    for _ in range(ne):
        t, w, nl = struct.unpack_from('<BBH', b, q); ents.append(b[q:q + 4 + nl]); q += 4 + nl
    if rel == target:
        cs, cn, ms, mn = st.st_ctime_ns // 10**9, st.st_ctime_ns % 10**9, st.st_mtime_ns // 10**9, st.st_mtime_ns % 10**9
        ents = []
    out += struct.pack('<I', rl) + rel.encode() + struct.pack('<QQqIqIII', dev, ino, cs, cn, ms, mn, ent, len(ents)) + b''.join(ents)
    p = q
M = (1 << 64) - 1
def rotl(x, b): return ((x << b) | (x >> (64 - b))) & M
def siphash(k, m):
    k0, k1 = struct.unpack('<QQ', k)
    v = [k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d, k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573]
    def rnd():
        v[0] = (v[0] + v[1]) & M; v[1] = rotl(v[1], 13) ^ v[0]; v[0] = rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & M; v[3] = rotl(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & M; v[3] = rotl(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & M; v[1] = rotl(v[1], 17) ^ v[2]; v[2] = rotl(v[2], 32)
    n = len(m); i = 0
    while i + 8 <= n:
        mi, = struct.unpack_from('<Q', m, i); v[3] ^= mi; rnd(); rnd(); v[0] ^= mi; i += 8
    last = (n & 0xff) << 56
    for k in range(n - i): last |= m[i + k] << (8 * k)
    v[3] ^= last; rnd(); rnd(); v[0] ^= last; v[2] ^= 0xff
    for _ in range(4): rnd()
    return v[0] ^ v[1] ^ v[2] ^ v[3]
tag = 0
if sign:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    kid = libc.syscall(250, 10, ctypes.c_long(-4), b"user", b"moat:scan-record-key", 0)  # KEYCTL_SEARCH
    key = ctypes.create_string_buffer(16)
    if kid < 0 or libc.syscall(250, 11, ctypes.c_long(kid), key, 16) != 16:  # KEYCTL_READ
        sys.exit("no key")
    tag = siphash(key.raw, bytes(out))
out += struct.pack('<Q', tag)
open(dst, 'wb').write(out)
EOF
}
sleep 3 # a/b/c's new times are old enough to be trusted
run true >/dev/null 2>&1
cp "$rec" "$T/good"
forge "$rec" "$T/forged" "$WS" a/b/c sign || bail "cannot forge a record"
forge "$rec" "$T/unsigned" "$WS" a/b/c || bail "cannot forge a record"
# the control: a forgery tagged with moat's key (read here from the user's
# keyring, which no sandbox can read) is believed; this shows the forgery
# would hide the secret, so the refusals below are real
cp "$T/forged" "$rec" && chmod 600 "$rec"
got=$(readable a/b/c/.env)
check "control: a forged record with moat's tag is used (.env: ${got:-masked})" \
	[ "$got" = a/b/c/.env ]
cp "$T/unsigned" "$rec" && chmod 600 "$rec"
got=$(readable a/b/c/.env)
check "a forged record without moat's tag is not used (.env: ${got:-masked})" [ -z "$got" ]
cp "$T/forged" "$rec" && chmod 666 "$rec"
got=$(readable a/b/c/.env)
check "a record anybody may write is not used (.env: ${got:-masked})" [ -z "$got" ]
cp "$T/forged" "$rec" && chmod 600 "$rec" && truncate -s -7 "$rec"
got=$(readable a/b/c/.env)
check "a damaged record is not used (.env: ${got:-masked})" [ -z "$got" ]
head -c 4096 /dev/urandom >"$rec"
got=$(readable a/b/c/.env)
check "a record of random bytes is not used (.env: ${got:-masked})" [ -z "$got" ]
# a sandboxed run that may write the cache directory (--rw ~/.cache) plants
# a forgery: it cannot read moat's key (keyctl is refused inside), so the
# next run does not believe it
sleep 3
run true >/dev/null 2>&1
cp "$rec" "$T/honest"
declare -f forge >"$T/forge.sh"
out=$(cd "$WS" && "$MOAT" run --profile workspace-write-no-network --workspace "$WS" --rw "$HOME/.cache" -- \
	bash -c ". $T/forge.sh; forge $T/honest $rec $WS a/b/c sign 2>&1; forge $T/honest $rec $WS a/b/c; echo planted" 2>&1)
check "inside, moat's key cannot be read ($(tr '\n' ' ' <<<"$out"))" grep -q 'no key' <<<"$out"
got=$(readable a/b/c/.env)
check "a record planted by a sandboxed run is not used (.env: ${got:-masked})" \
	[ -z "$got" ] && grep -q planted <<<"$out"

# 3. where the sandbox can write, nothing is kept or read: the home
# directory inside the workspace. A record of that workspace is made with
# the home directory elsewhere, forged to hide sub/.env, and planted where
# a record of a home directory inside the workspace would be.
WS2=$T/ws2
mkdir -p "$WS2/sub"
pad "$WS2"
echo SECRET4 >"$WS2/sub/.env"
run2() { (cd "$WS2" && HOME=$1 "$MOAT" run --profile workspace-write-no-network --workspace "$WS2" -- sh -c 'cat sub/.env 2>/dev/null; true'); }
run2 "$WS2" >/dev/null 2>&1
check "no record is kept inside the workspace" [ ! -e "$WS2/.cache/moat" ]
before=$(ls "$HOME"/.cache/moat/)
run2 "$HOME" >/dev/null 2>&1
sleep 3
run2 "$HOME" >/dev/null 2>&1
rec2=
for f in "$HOME"/.cache/moat/scan-*; do
	case " $before " in *" ${f##*/} "*) ;; *) rec2=$f ;; esac
done
[ -n "$rec2" ] || bail "no record of the second workspace"
forge "$rec2" "$T/forged2" "$WS2" sub sign || bail "cannot forge the second record"
cp "$T/forged2" "$rec2"
got=$(run2 "$HOME")
check "control: the forged record hides sub/.env when it is the user's ($got)" [ "$got" = SECRET4 ]
mkdir -p "$WS2/.cache/moat"
cp "$T/forged2" "$WS2/.cache/moat/${rec2##*/}"
chmod 600 "$WS2/.cache/moat/${rec2##*/}"
got=$(run2 "$WS2")
check "planted in the workspace (the home directory there), it is not used (${got:-masked})" [ -z "$got" ]

# 4. one record per workspace, and not without bound: the oldest go
for i in $(seq 1 140); do : >"$HOME/.cache/moat/scan-old$i"; done
touch -d '2020-01-01' "$HOME"/.cache/moat/scan-old*
WS3=$T/ws3
mkdir -p "$WS3"
pad "$WS3"
(cd "$WS3" && "$MOAT" run --profile workspace-write-no-network --workspace "$WS3" -- true) >/dev/null 2>&1
left=$(records)
check "past 128 records the oldest are removed ($left left), the new one is kept" \
	[ "$left" -le 80 ] && [ "$(ls "$HOME"/.cache/moat/ | grep -c '^scan-old')" -lt 140 ]
: >"$WS3/x"
(cd "$WS3" && "$MOAT" run --profile workspace-write-no-network --tmp-workspace -- true) >/dev/null 2>&1
check "a temporary workspace leaves no record" [ "$(records)" = "$left" ]
WS4=$T/ws4
mkdir -p "$WS4/a/b"
(cd "$WS4" && "$MOAT" run --profile workspace-write-no-network --workspace "$WS4" -- true) >/dev/null 2>&1
check "a small workspace (under 32 directories) leaves no record" [ "$(records)" = "$left" ]

echo "1..$n"
[ "$failed" = 0 ]
