#!/bin/sh
# meson setup DIR for moat's normal build: with musl where
# scripts/musl-deps.sh has built the libraries (the static `moat` then
# starts without glibc's trapped CPU probing), else with the system's
# compiler and glibc. A directory set up for the other libc is set up anew.
# MOAT_LIBC=glibc chooses glibc.
#   scripts/setup-build.sh DIR [MESON OPTIONS...]
set -eu
dir=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
native=$("$here/musl-deps.sh" --native || true)
want=${native:+musl}
want=${want:-glibc}
if [ -f "$dir/build.ninja" ] && [ "$(cat "$dir/.moat-libc" 2>/dev/null)" != "$want" ]; then
	echo "setup-build: $dir was set up for another libc; setting it up for $want" >&2
	rm -rf "$dir"
fi
if [ -f "$dir/build.ninja" ]; then
	[ $# = 0 ] && exit 0
	meson setup --reconfigure "$dir" "$@" >/dev/null
else
	meson setup "$dir" ${native:+--native-file="$native"} "$@" >/dev/null
fi
echo "$want" >"$dir/.moat-libc"
