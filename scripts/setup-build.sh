#!/bin/sh
# meson setup DIR for moat's normal build (a directory already set up is
# reconfigured only when options are given). A directory an older checkout
# set up for musl (its .moat-libc says so) is set up anew.
#   scripts/setup-build.sh DIR [MESON OPTIONS...]
set -eu
dir=$1
shift
if [ -f "$dir/build.ninja" ] && [ "$(cat "$dir/.moat-libc" 2>/dev/null || echo glibc)" != glibc ]; then
	echo "setup-build: $dir was set up for musl; setting it up for glibc" >&2
	rm -rf "$dir"
fi
if [ -f "$dir/build.ninja" ]; then
	[ $# = 0 ] && exit 0
	meson setup --reconfigure "$dir" "$@" >/dev/null
else
	meson setup "$dir" "$@" >/dev/null
fi
