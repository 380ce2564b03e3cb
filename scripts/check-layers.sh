#!/bin/bash
# The pure core must not call anything with side effects beyond what path
# resolution needs (lstat, readlink). Inspect its undefined symbols.
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
lib="$build/libmoat_core.a"
[ -f "$lib" ] || { echo "missing $lib"; exit 1; }
forbidden='^(creat|write|pwrite|unlink|unlinkat|rename|renameat|mkdir|mkdirat|rmdir|fork|vfork|clone|clone3|execve|execv|execvp|execl|execlp|execvpe|kill|mount|umount|umount2|unshare|setns|socket|connect|bind|prctl|ptrace|seccomp_.*|fopen|fopen64|fwrite|printf|fprintf|puts|fputs|perror|getenv|secure_getenv|setenv|putenv|chdir|chmod|chown|link|symlink|truncate|ftruncate)$'
bad=$(nm -u "$lib" 2>/dev/null | awk '{print $2}' | sed 's/@.*//' | sort -u | grep -E "$forbidden")
if [ -n "$bad" ]; then
	echo "core calls functions with side effects:"
	for s in $bad; do
		echo "  $s: $(nm -A -u "$lib" | grep -w "$s" | cut -d: -f2 | sort -u | tr '\n' ' ')"
	done
	exit 1
fi
base="$build/libmoat_base.a"
bad=$(nm -u "$base" 2>/dev/null | awk '{print $2}' | sed 's/@.*//' | sort -u | grep -E "$forbidden")
if [ -n "$bad" ]; then
	echo "base calls functions with side effects: $bad"
	exit 1
fi
# syscall() is allowed in the core for one thing only: openat2 in path resolution
bad=$(git ls-files 'src/core/*.c' | xargs grep -n 'syscall(' | grep -v 'SYS_openat2')
if [ -n "$bad" ]; then
	echo "core uses syscall() for something other than openat2:"
	echo "$bad"
	exit 1
fi
# libmoat.so exports exactly the functions its public headers declare
# (src/lib/libmoat.map): nothing internal leaks into its ABI
so="$build/libmoat.so"
if [ -f "$so" ]; then
	want=$(grep -ho '\bmoat_[a-z0-9_]*[[:space:]]*(' include/moat/*.h | sed 's/[[:space:]]*($//' | sort -u)
	have=$(nm -D --defined-only "$so" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort -u)
	if [ "$want" != "$have" ]; then
		echo "libmoat.so exports differ from include/moat/*.h (< headers, > exported):"
		diff <(echo "$want") <(echo "$have") | grep '^[<>]'
		exit 1
	fi
fi
exit 0
