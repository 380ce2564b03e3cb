#!/bin/sh
# Build moat's three libraries (jansson, PCRE2, libseccomp) for musl from
# Debian's own source packages, so that the `moat` executable can be linked
# statically with musl instead of glibc: glibc's start-up probes the CPU
# with about forty `cpuid` instructions, each trapped by the hypervisor in
# a VM (3.6 us each here), which with the rest of its start-up is about
# 0.3 ms of every `moat run` (docs/benchmarks.md, "Sandbox start-up").
#
#   scripts/musl-deps.sh            build into the prefix unless done
#   scripts/musl-deps.sh --native   print the meson native file if done
#
# Prefix: MOAT_MUSL_PREFIX, else /opt/moat-musl (root), else
# ~/.cache/moat-musl. Needs root (or sudo) to install musl-tools and to add
# Debian's source list. MOAT_LIBC=glibc skips all of it. A failure is said
# on stderr and moat is then built with glibc (slower, as safe).
set -eu

if [ -n "${MOAT_MUSL_PREFIX:-}" ]; then
	prefix=$MOAT_MUSL_PREFIX
elif [ "$(id -u)" = 0 ] || [ -w /opt/moat-musl ]; then
	prefix=/opt/moat-musl
else
	prefix=${HOME:-/tmp}/.cache/moat-musl
fi
stamp=$prefix/.built-v1
native=$prefix/musl.ini

if [ "${1:-}" = --native ]; then
	[ "${MOAT_LIBC:-musl}" = musl ] && [ -f "$stamp" ] && [ -f "$native" ] &&
		command -v musl-gcc >/dev/null 2>&1 && echo "$native"
	exit 0
fi
[ "${MOAT_LIBC:-musl}" = musl ] || exit 0
[ -f "$stamp" ] && command -v musl-gcc >/dev/null 2>&1 && exit 0
# builds started together (several checkouts) wait for the first: the
# stamp is checked again under the lock
if command -v flock >/dev/null 2>&1 && mkdir -p "$(dirname "$prefix")" 2>/dev/null &&
	exec 9>>"$prefix.lock"; then
	flock 9
	[ -f "$stamp" ] && command -v musl-gcc >/dev/null 2>&1 && exit 0
fi
case "$(uname -m)" in
x86_64 | aarch64) ;;
*) exit 0 ;; # moat's raw system calls and musl's static build: these two
esac
command -v apt-get >/dev/null 2>&1 || {
	echo "musl-deps: no apt-get: moat is built with glibc" >&2
	exit 0
}

SUDO=""
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=sudo; else
		echo "musl-deps: not root: moat is built with glibc" >&2
		exit 0
	fi
fi

fail() {
	echo "musl-deps: $*; moat is built with glibc (about 0.3 ms slower per start; as safe)" >&2
	exit 0
}

echo "musl-deps: building jansson, PCRE2 and libseccomp for musl into $prefix" >&2
export DEBIAN_FRONTEND=noninteractive
pkgs="musl-tools musl-dev cmake gperf dpkg-dev make xz-utils"
need=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need="$need $p"
done
if [ -n "$need" ]; then
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null 2>&1 ||
		{ $SUDO apt-get update -qq >/dev/null 2>&1 || true; $SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null 2>&1; } ||
		fail "could not install$need"
fi

# Debian's source packages: the same releases the -dev packages are built
# from, with Debian's patches
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || fail "no VERSION_CODENAME in /etc/os-release"
srclist=/etc/apt/sources.list.d/moat-deb-src.sources
if ! apt-get source --print-uris jansson >/dev/null 2>&1; then
	printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$codename" | $SUDO tee "$srclist" >/dev/null || fail "cannot write $srclist"
	$SUDO apt-get update -qq >/dev/null 2>&1 || fail "apt-get update failed"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# (as root, apt's download user cannot write here: said, harmless)
apt-get source -qq jansson pcre2 libseccomp >/dev/null 2>&1 || fail "apt-get source failed"

# only what this script made is replaced
if [ -d "$prefix" ] && [ ! -f "$native" ] && [ -n "$(ls -A "$prefix" 2>/dev/null)" ]; then
	fail "$prefix exists and was not made by this script"
fi
rm -rf "$prefix/lib" "$prefix/include" "$prefix/kinc" "$prefix/share" "$native"
mkdir -p "$prefix/kinc" "$prefix/lib/pkgconfig" || fail "cannot create $prefix"
# the kernel's headers, which musl-gcc does not search
march=$(gcc -print-multiarch 2>/dev/null || echo "$(uname -m)-linux-gnu")
ln -s /usr/include/linux "$prefix/kinc/linux"
ln -s "/usr/include/$march/asm" "$prefix/kinc/asm"
ln -s /usr/include/asm-generic "$prefix/kinc/asm-generic"
flags="-O2 -fPIE -fstack-protector-strong -isystem $prefix/kinc"
jobs=$(nproc 2>/dev/null || echo 2)

(
	cd jansson-*/ && mkdir b && cd b &&
		cmake -DCMAKE_C_COMPILER=musl-gcc -DCMAKE_C_FLAGS="$flags" -DCMAKE_BUILD_TYPE=Release \
			-DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib -DJANSSON_BUILD_DOCS=OFF \
			-DJANSSON_EXAMPLES=OFF -DJANSSON_WITHOUT_TESTS=ON -DJANSSON_BUILD_SHARED_LIBS=OFF .. &&
		make -j"$jobs" && make install
) >"$work/jansson.log" 2>&1 || { tail -n 20 "$work/jansson.log" >&2; fail "jansson did not build"; }
(
	cd pcre2-*/ && CC=musl-gcc CFLAGS="$flags" ./configure --prefix="$prefix" --libdir="$prefix/lib" \
		--disable-shared --enable-static --enable-jit &&
		make -j"$jobs" libpcre2-8.la &&
		make install-libLTLIBRARIES install-includeHEADERS install-nodist_includeHEADERS install-pkgconfigDATA
) >"$work/pcre2.log" 2>&1 || { tail -n 20 "$work/pcre2.log" >&2; fail "PCRE2 did not build"; }
(
	cd libseccomp-*/ && CC=musl-gcc CFLAGS="$flags" ./configure --prefix="$prefix" --libdir="$prefix/lib" \
		--disable-shared --enable-static &&
		make -j"$jobs" -C src && make -C src install && make -C include install &&
		install -m 644 libseccomp.pc "$prefix/lib/pkgconfig/"
) >"$work/seccomp.log" 2>&1 || { tail -n 20 "$work/seccomp.log" >&2; fail "libseccomp did not build"; }

cat >"$native" <<EOF
# meson native file for moat's musl build (scripts/musl-deps.sh)
[binaries]
c = 'musl-gcc'

[properties]
pkg_config_libdir = ['$prefix/lib/pkgconfig']

[built-in options]
c_args = ['-isystem', '$prefix/kinc']
EOF
touch "$stamp"
echo "musl-deps: done ($prefix)" >&2
