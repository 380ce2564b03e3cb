#!/bin/bash
# Red-team tests of `moat run`: an escaping agent's attempts, each judged from
# OUTSIDE the sandbox (a fingerprint of the files outside: bytes, mode, owner,
# times, xattrs; a listener's log of accepted connections; the host process
# table; signals a host process records; a pseudo-terminal's input queue),
# never from moat's or the command's own word. Syscall probes are our own
# helper (attack.c below) reporting what the kernel answered; where the
# effect can be seen outside (a directory made, a connection accepted, a
# payload run), that is checked instead.
#
#   MOAT=path/to/moat MOAT_SRC=repo bash tests/integration/test_escape.sh
#
# Every case runs as root and as nobody (when started as root), with the
# default profile (workspace-write) unless it says otherwise, and a part of
# them again with user namespaces unavailable (MOAT_FAKE_NO_USERNS=1).
# A missing tool or kernel feature skips, unless MOAT_MUST_WORK=1 (CI).
#
# Cases marked "ESCAPE" in a comment were escapes when this file was
# written; they stay `not ok` until the sandbox stops them.
set -u

MOAT=${MOAT:-$(command -v moat)}
. "$(dirname "$0")/../lib/tap.sh"


[ -x "$MOAT" ] || bail "no moat binary (set MOAT)"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || bail "python3 is needed"

# ---- global fixtures: the helper, the listeners ----
G=$(mktemp -d /var/tmp/moat-esc-g-XXXXXX) || bail "mktemp"
chmod 755 "$G"
PIDS=()
cleanup() {
	local p
	for p in ${PIDS[@]+"${PIDS[@]}"}; do { kill -KILL "$p" && wait "$p"; } 2>/dev/null; done
	[ -n "${T:-}" ] && rm -rf "$T"
	[ -n "${SHMKEY:-}" ] && ipcrm -M "$SHMKEY" 2>/dev/null
	rm -rf "$G" "/run/moat-esc-$$.sock" "/tmp/moat-esc-$$".* "/dev/shm/moat-esc-$$".* 2>/dev/null
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

# the probe run inside the sandbox (see the header)
mkdir -p "$G/bin"
cat >"$G/attack.c" <<'EOF'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define X32 0x40000000L

static const char *en(long r)
{
	if (r >= 0)
		return "OK";
	return strerrorname_np(errno) ? strerrorname_np(errno) : "E?";
}

static long sc(long nr, long a, long b, long c, long d, long e, long f)
{
	return syscall(nr, a, b, c, d, e, f);
}

#ifdef __x86_64__
static long int80(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

static char *low(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static const char *en32(long r)
{
	return r < 0 ? strerrorname_np((int)-r) : "OK";
}

/* 32-bit system calls from a 64-bit process; in a child, as a kernel
 * without ia32 emulation answers with SIGSEGV */
static void i386_calls(const char *what, const char *arg)
{
	pid_t p = fork();
	int st;
	if (p == 0) {
		char *m = low(4096);
		if (!m)
			_exit(1);
		if (!strcmp(what, "mkdir")) {
			snprintf(m, 4096, "%s", arg);
			printf("i386_getpid=%s\n", en32(int80(20, 0, 0, 0)));
			printf("i386_mkdir=%s\n", en32(int80(39, (long)m, 0755, 0)));
		} else {
			struct sockaddr_un *a = (void *)m;
			long fd;
			a->sun_family = AF_UNIX;
			snprintf(a->sun_path, sizeof(a->sun_path), "%s", arg);
			fd = int80(359, AF_UNIX, SOCK_STREAM, 0);
			printf("i386_socket=%s\n", en32(fd));
			if (fd >= 0)
				printf("i386_connect=%s\n", en32(int80(362, fd, (long)a, sizeof(*a))));
		}
		_exit(0);
	}
	waitpid(p, &st, 0);
	if (WIFSIGNALED(st))
		printf("i386=SIG%d\n", WTERMSIG(st));
}
#endif

static int unix_connect(long sock_nr, long conn_nr, const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	long fd;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	fd = syscall(sock_nr, AF_UNIX, SOCK_STREAM, 0);
	printf("socket=%s\n", en(fd));
	if (fd >= 0)
		printf("connect=%s\n", en(syscall(conn_nr, fd, &a, sizeof(a))));
	return 0;
}

static void exec_payload(int fd, const char *proof, const char *how)
{
	char *av[] = {"attack", "proof", (char *)proof, NULL};
	char p[64];
	printf("%s_execveat=%s\n", how, en(syscall(SYS_execveat, fd, "", av, environ, AT_EMPTY_PATH)));
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	printf("%s_procfd_exec=%s\n", how, en(execve(p, av, environ)));
}

static int copy_self(int dst)
{
	char b[65536];
	ssize_t k;
	int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return -1;
	while ((k = read(src, b, sizeof(b))) > 0)
		if (write(dst, b, (size_t)k) != k)
			return -1;
	close(src);
	return 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(c, "proof") && argc > 2) {
		printf("proof=%s\n", en(open(argv[2], O_WRONLY | O_CREAT, 0644)));
		return 0;
	}
#ifdef __x86_64__
	if (!strcmp(c, "i386") && argc > 2) {
		i386_calls("mkdir", argv[2]);
		return 0;
	}
	if (!strcmp(c, "i386-unix") && argc > 2) {
		i386_calls("unix", argv[2]);
		return 0;
	}
	if (!strcmp(c, "x32") && argc > 2) {
		printf("x32_getpid=%s\n", en(syscall(39 | X32)));
		printf("x32_mkdir=%s\n", en(syscall(83 | X32, argv[2], 0755)));
		return 0;
	}
	if (!strcmp(c, "x32-unix") && argc > 2)
		return unix_connect(41 | X32, 42 | X32, argv[2]);
#endif
	if (!strcmp(c, "unix") && argc > 2)
		return unix_connect(SYS_socket, SYS_connect, argv[2]);
	if (!strcmp(c, "memfd-exec") && argc > 2) {
		static const unsigned fl[] = {0x10 /* MFD_EXEC */, 0, 0x8 /* MFD_NOEXEC_SEAL */};
		static const char *nm[] = {"exec", "plain", "noexec_seal"};
		for (int i = 0; i < 3; i++) {
			long fd = syscall(SYS_memfd_create, "x", fl[i]);
			printf("memfd_%s=%s\n", nm[i], en(fd));
			if (fd < 0)
				continue;
			fchmod((int)fd, 0755);
			if (copy_self((int)fd) == 0)
				exec_payload((int)fd, argv[2], nm[i]);
			close((int)fd);
		}
		return 0;
	}
	if (!strcmp(c, "ptrace") && argc > 2) {
		pid_t p = (pid_t)strtol(argv[2], NULL, 10);
		long r = ptrace(PTRACE_ATTACH, p, 0, 0), fd;
		printf("ptrace_attach=%s\n", en(r));
		if (r < 0) {
			r = ptrace(PTRACE_SEIZE, p, 0, 0);
			printf("ptrace_seize=%s\n", en(r));
		}
		if (r == 0)
			sleep(2); /* hold on, so the test sees TracerPid from outside */
		printf("process_vm_readv=%s\n", en(sc(SYS_process_vm_readv, p, 0, 0, 0, 0, 0)));
		fd = sc(SYS_pidfd_open, p, 0, 0, 0, 0, 0);
		printf("pidfd_open=%s\n", en(fd));
		if (fd >= 0) {
			printf("pidfd_getfd=%s\n", en(sc(SYS_pidfd_getfd, fd, 0, 0, 0, 0, 0)));
			printf("pidfd_send_signal=%s\n", en(sc(SYS_pidfd_send_signal, fd, SIGWINCH, 0, 0, 0, 0)));
		}
		return 0;
	}
	if (!strcmp(c, "sigio") && argc > 2) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
			return 1;
		printf("f_setown=%s\n", en(fcntl(sv[0], F_SETOWN, (int)strtol(argv[2], NULL, 10))));
		printf("f_setsig=%s\n", en(fcntl(sv[0], F_SETSIG, SIGWINCH)));
		printf("o_async=%s\n", en(fcntl(sv[0], F_SETFL, O_ASYNC | O_NONBLOCK)));
		for (int i = 0; i < 3; i++) {
			if (write(sv[1], "x", 1) != 1)
				break;
			usleep(20000);
		}
		return 0;
	}
	if (!strcmp(c, "handle") && argc > 2) {
		struct {
			struct file_handle h;
			unsigned char b[128];
		} fh;
		int mnt, fd;
		fh.h.handle_bytes = 128;
		printf("name_to_handle_at=%s\n", en(name_to_handle_at(AT_FDCWD, argv[2], &fh.h, &mnt, 0)));
		fd = open_by_handle_at(open("/", O_RDONLY | O_DIRECTORY), &fh.h, O_WRONLY | O_APPEND);
		printf("open_by_handle_at=%s\n", en(fd));
		if (fd >= 0)
			printf("handle_write=%s\n", en(write(fd, "PWNED-handle\n", 13)));
		return 0;
	}
	if (!strcmp(c, "tiocsti")) {
		const char *s = "PWNED-TIOCSTI\n";
		long r = 0;
		int t;
		for (const char *q = s; *q && r >= 0; q++)
			r = ioctl(0, TIOCSTI, q);
		printf("tiocsti=%s\n", en(r));
		r = 0;
		for (const char *q = s; *q && r >= 0; q++)
			r = syscall(SYS_ioctl, 0, 0x100000000UL | TIOCSTI, q);
		printf("tiocsti_high=%s\n", en(r));
		t = open("/dev/tty", O_RDWR);
		printf("dev_tty=%s\n", en(t));
		r = 0;
		for (const char *q = s; t >= 0 && *q && r >= 0; q++)
			r = ioctl(t, TIOCSTI, q);
		printf("tiocsti_dev_tty=%s\n", en(r));
		return 0;
	}
	if (!strcmp(c, "keyadd") && argc > 3) { /* outside: plant a key in @u */
		long id = sc(SYS_add_key, (long)"user", (long)argv[2], (long)argv[3], (long)strlen(argv[3]), -4, 0);
		if (id < 0)
			return 1;
		printf("%ld\n", id);
		return 0;
	}
	if (!strcmp(c, "keyinval") && argc > 2) /* outside: remove it */
		return sc(SYS_keyctl, 21 /* INVALIDATE */, strtol(argv[2], NULL, 10), 0, 0, 0, 0) < 0;
	if (!strcmp(c, "keyread") && argc > 2) {
		char b[256] = "";
		long id = sc(SYS_request_key, (long)"user", (long)argv[2], 0, 0, 0, 0);
		printf("request_key=%s\n", en(id));
		if (id < 0)
			id = sc(SYS_keyctl, 10 /* SEARCH */, -4 /* @u */, (long)"user", (long)argv[2], 0, 0);
		printf("keyctl_search=%s\n", en(id));
		if (id >= 0)
			printf("keyctl_read=%s %s\n",
			       en(sc(SYS_keyctl, 11 /* READ */, id, (long)b, sizeof(b) - 1, 0, 0)), b);
		return 0;
	}
	if (!strcmp(c, "bind") && argc > 3) {
		char p[4096];
		long t;
		printf("mount_bind=%s\n", en(mount(argv[2], argv[3], NULL, MS_BIND, NULL)));
		t = sc(SYS_open_tree, AT_FDCWD, (long)argv[2], 1 /* OPEN_TREE_CLONE */, 0, 0, 0);
		printf("open_tree=%s\n", en(t));
		if (t >= 0)
			printf("move_mount=%s\n",
			       en(sc(SYS_move_mount, t, (long)"", AT_FDCWD, (long)argv[3], 4, 0)));
		snprintf(p, sizeof(p), "%s/bind-new", argv[3]);
		printf("write_through=%s\n", en(open(p, O_WRONLY | O_CREAT, 0644)));
		return 0;
	}
	if (!strcmp(c, "umount") && argc > 2) {
		char b[256] = "";
		int fd;
		printf("umount=%s\n", en(umount2(argv[2], MNT_DETACH)));
		fd = open(argv[2], O_RDONLY);
		if (fd >= 0 && read(fd, b, sizeof(b) - 1) > 0)
			printf("content=%s\n", b);
		return 0;
	}
	if (!strcmp(c, "forkbomb")) { /* every process forks for ever, retrying */
		for (;;)
			if (fork() < 0)
				usleep(1000);
	}
	if (!strcmp(c, "sys")) {
		/* the kernel surface seccomp must refuse; NEVER run this outside */
		struct {
			unsigned type, size;
			unsigned long long config, period, st, rf, flags;
		} pa = {1 /* SOFTWARE */, 112, 0, 0, 0, 0, 1ULL | (1ULL << 5) | (1ULL << 6)};
		unsigned char params[128] = {0};
		int mfd = open("/proc/self/ns/mnt", O_RDONLY);
		long cp;
		printf("io_uring_setup=%s\n", en(sc(425, 4, (long)params, 0, 0, 0, 0)));
		printf("bpf=%s\n", en(sc(SYS_bpf, 0, (long)params, 72, 0, 0, 0)));
		printf("perf_event_open=%s\n", en(sc(SYS_perf_event_open, (long)&pa, 0, -1, -1, 0, 0)));
		printf("userfaultfd=%s\n", en(sc(SYS_userfaultfd, 1, 0, 0, 0, 0, 0)));
		printf("dev_userfaultfd=%s\n", en(open("/dev/userfaultfd", O_RDWR)));
		printf("keyctl=%s\n", en(sc(SYS_keyctl, 0, -4, 0, 0, 0, 0)));
		printf("add_key=%s\n", en(sc(SYS_add_key, (long)"user", (long)"moat-esc", (long)"x", 1, -4, 0)));
		printf("personality_linux32=%s\n", en(personality(PER_LINUX32) == -1 ? -1 : 0));
		personality(PER_LINUX);
		printf("unshare_user=%s\n", en(unshare(CLONE_NEWUSER)));
		printf("unshare_mnt=%s\n", en(unshare(CLONE_NEWNS)));
		printf("unshare_net=%s\n", en(unshare(CLONE_NEWNET)));
		cp = sc(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0, 0);
		if (cp == 0)
			_exit(0);
		if (cp > 0)
			waitpid((pid_t)cp, NULL, 0);
		printf("clone_newuser=%s\n", en(cp));
		printf("setns=%s\n", en(setns(mfd, 0)));
		printf("mount_tmpfs=%s\n", en(mount("none", "/tmp", "tmpfs", 0, NULL)));
		printf("umount2=%s\n", en(umount2("/proc", MNT_DETACH)));
		printf("pivot_root=%s\n", en(sc(SYS_pivot_root, (long)"/tmp", (long)"/tmp", 0, 0, 0, 0)));
		printf("fsopen=%s\n", en(sc(430, (long)"tmpfs", 0, 0, 0, 0, 0)));
		printf("chroot=%s\n", en(chroot("/tmp")));
		printf("dev_kvm=%s\n", en(open("/dev/kvm", O_RDWR)));
		printf("dev_vsock=%s\n", en(open("/dev/vsock", O_RDONLY)));
		printf("dev_kmsg=%s\n", en(open("/dev/kmsg", O_RDONLY)));
		printf("syslog=%s\n", en(sc(SYS_syslog, 10, 0, 0, 0, 0, 0)));
		printf("kexec_load=%s\n", en(sc(SYS_kexec_load, 0, 0, 0, 0, 0, 0)));
		printf("init_module=%s\n", en(sc(SYS_init_module, 0, 0, (long)"", 0, 0, 0)));
		printf("acct=%s\n", en(sc(SYS_acct, 0, 0, 0, 0, 0, 0)));
		printf("mknod_chr=%s\n", en(mknod("mknod-null", S_IFCHR | 0666, makedev(1, 3))));
		printf("getpid=%s\n", en(getpid()));
		return 0;
	}
	fprintf(stderr, "attack: unknown subcommand %s\n", c);
	return 2;
}
EOF
ATTACK=
if command -v gcc >/dev/null && gcc -O1 -o "$G/bin/attack" "$G/attack.c" 2>"$G/cc.err"; then
	ATTACK=$G/bin/attack
	chmod 755 "$G/bin/attack"
fi
have_attack() { [ -n "$ATTACK" ] || { skip "$ID: $* (no C compiler for the probe)"; return 1; }; }

# Listeners on the host, all logging to one file: TCP on 127.0.0.1, ::1 and
# the first non-loopback IPv4 address, UDP on 127.0.0.1, an abstract unix
# socket, and pathname unix sockets in the host's /tmp, in /run and in a
# directory the sandbox can see ($G/sock).
PORT=$((20000 + $$ % 20000))
HOSTIP=$(ip -4 -o addr show scope global 2>/dev/null | awk '{print $4; exit}' | cut -d/ -f1)
ABS=moat-esc-abs-$$
TMPSOCK=/tmp/moat-esc-$$.sock
RUNSOCK=/run/moat-esc-$$.sock
VISSOCK=$G/sock
NETLOG=$G/net.log
: >"$NETLOG"
chmod 666 "$NETLOG"
"$PY" - "$NETLOG" "$PORT" "${HOSTIP:-}" "$ABS" "$TMPSOCK" "$RUNSOCK" "$VISSOCK" <<'EOF' >/dev/null 2>&1 &
import os, select, socket, sys
log, port, hostip, abs_name = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ls = {}
def add(kind, fam, typ, addr):
    try:
        s = socket.socket(fam, typ)
        if fam != socket.AF_UNIX:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(addr)
        if fam == socket.AF_UNIX and not addr.startswith("\0"):
            os.chmod(addr, 0o777)
        if typ == socket.SOCK_STREAM:
            s.listen(64)
        ls[s] = (kind, typ)
    except OSError:
        pass
add("tcp4", socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", port))
add("tcp6", socket.AF_INET6, socket.SOCK_STREAM, ("::1", port))
if hostip:
    add("tcpeth", socket.AF_INET, socket.SOCK_STREAM, (hostip, port + 1))
add("udp4", socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", port))
add("abstract", socket.AF_UNIX, socket.SOCK_STREAM, "\0" + abs_name)
for kind, p in (("tmpsock", sys.argv[5]), ("runsock", sys.argv[6]), ("vissock", sys.argv[7])):
    add(kind, socket.AF_UNIX, socket.SOCK_STREAM, p)
# a datagram socket at a visible path: reached by sendto from a socketpair
add("visdgram", socket.AF_UNIX, socket.SOCK_DGRAM, sys.argv[7] + ".dg")
# netlink's user-to-user protocol (NETLINK_USERSOCK), at port id PORT: no
# privilege needed to send to it
try:
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 2)
    s.bind((port, 0))
    ls[s] = ("netlink", socket.SOCK_RAW)
except OSError:
    pass
with open(log + ".ready", "w") as f:
    f.write(" ".join(k for k, _ in ls.values()))
while True:
    r, _, _ = select.select(list(ls), [], [])
    for s in r:
        kind, typ = ls[s]
        if typ == socket.SOCK_STREAM:
            c, _ = s.accept(); c.close()
        else:
            s.recvfrom(4096)
        with open(log, "a") as f:
            f.write(kind + "\n")
EOF
PIDS+=($!)
for _ in $(seq 200); do [ -s "$NETLOG.ready" ] && break; sleep 0.05; done
LISTENING=$(cat "$NETLOG.ready" 2>/dev/null)
netcount() { grep -c "^$1\$" "$NETLOG" 2>/dev/null; }

# the client used inside and, as a control, outside: tries every target
cat >"$G/netclient.py" <<'EOF'
import socket, sys
port, hostip, abs_name, socks = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
def tcp(fam, addr):
    try:
        s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(1); s.connect(addr); print("connected", addr)
    except OSError as e:
        print("failed", addr, e)
tcp(socket.AF_INET, ("127.0.0.1", port))
tcp(socket.AF_INET6, ("::1", port))
if hostip:
    tcp(socket.AF_INET, (hostip, port + 1))
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(3):
        s.sendto(b"x", ("127.0.0.1", port))
    print("udp sent")
except OSError as e:
    print("udp failed", e)
for a in ["\0" + abs_name] + socks:
    try:
        s = socket.socket(socket.AF_UNIX); s.settimeout(1); s.connect(a); print("connected", repr(a))
    except OSError as e:
        print("failed", repr(a), e)
# socket(AF_UNIX) refused is not enough: a datagram socketpair can send to
# any pathname socket
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendto(b"x", socks[-1] + ".dg"); print("dgram sent")
except OSError as e:
    print("dgram failed", e)
# the kernel makes a unix SOCK_RAW pair a datagram pair
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_RAW)
    a.sendto(b"x", socks[-1] + ".dg"); print("raw pair sent")
except OSError as e:
    print("raw pair failed", e)
# what Landlock's TCP rules do not see: MPTCP (falls back to TCP), a TCP
# Fast Open first send; and a netlink message to a host process
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.settimeout(1)
    s.connect(("127.0.0.1", port)); print("mptcp connected")
except OSError as e:
    print("mptcp failed", e)
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.settimeout(1)
    s.sendto(b"x", socket.MSG_FASTOPEN, ("127.0.0.1", port)); print("tfo sent")
except OSError as e:
    print("tfo failed", e)
try:
    import struct
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 2).sendto(
        struct.pack("=LHHLL", 17, 0x10, 0, 1, 0) + b"x", (port, 0)); print("netlink sent")
except OSError as e:
    print("netlink failed", e)
EOF
chmod -R a+rX "$G"
netclient() { # the arguments for running it
	echo "$PY $G/netclient.py $PORT ${HOSTIP:-''} $ABS $TMPSOCK $RUNSOCK $VISSOCK"
}

# ---- helpers of one identity's suite ----

# fp PATH...: a fingerprint of everything under PATH: type, mode, owner,
# size, mtime, ctime, content hash, symlink target, xattrs, inode flags
fp() {
	"$PY" - "$@" <<'EOF'
import array, fcntl, hashlib, os, stat, sys
def flags(p, st):
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return ""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        try:
            a = array.array("l", [0]); fcntl.ioctl(fd, 0x80086601, a, True)  # FS_IOC_GETFLAGS
            return "f%x" % a[0]
        finally:
            os.close(fd)
    except OSError:
        return ""
def one(p):
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return "%s missing" % p
    h = ""
    if stat.S_ISREG(st.st_mode):
        with open(p, "rb") as f:
            h = hashlib.sha256(f.read()).hexdigest()[:16]
    elif stat.S_ISLNK(st.st_mode):
        h = "-> " + os.readlink(p)
    try:
        xa = sorted((k, os.getxattr(p, k, follow_symlinks=False)) for k in os.listxattr(p, follow_symlinks=False))
    except OSError:
        xa = []
    return "%s %o %d:%d %d m%d c%d %s %s %s" % (p, st.st_mode, st.st_uid, st.st_gid, st.st_size,
                                               st.st_mtime_ns, st.st_ctime_ns, h, xa, flags(p, st))
for top in sys.argv[1:]:
    print(one(top))
    if os.path.isdir(top) and not os.path.islink(top):
        for root, dirs, files in os.walk(top):
            # moat's own scan records (written by moat, outside the sandbox)
            dirs[:] = sorted(d for d in dirs if not os.path.join(root, d).endswith("/.cache/moat"))
            for n in sorted(dirs + files):
                print(one(os.path.join(root, n)))
EOF
}

own() { [ "$ID" = nobody ] && chown -R nobody:nogroup "$@"; return 0; }

reset_out() { # a fresh outside directory the identity owns and could write
	rm -rf "$OUT"
	mkdir -p "$OUT/sub"
	echo canary-content >"$OUT/canary"
	: >"$OUT/fd7"
	chmod 644 "$OUT/canary" "$OUT/fd7"
	own "$OUT"
}

# m ARGS...: moat run as the identity, in the workspace, with a clean environment
m() {
	(cd "${CWD:-$WS}" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 TERM=dumb \
		${ENVX[@]+"${ENVX[@]}"} timeout -k 2 "${TMO:-20}" ${RUNAS[@]+"${RUNAS[@]}"} "$MOAT" run \
		${MODE[@]+"${MODE[@]}"} "$@")
}
# as the identity, outside any sandbox (controls and victims)
asid() { ${RUNAS[@]+"${RUNAS[@]}"} "$@"; }

# fs_case DESC PATHS -- CMD...: CMD must leave every PATH exactly as it was
fs_case() {
	local d=$1 paths=() before after
	shift
	while [ "$1" != -- ]; do paths+=("$1"); shift; done
	shift
	before=$(fp "${paths[@]}")
	"$@" >"$G/case.out" 2>&1
	after=$(fp "${paths[@]}")
	if [ "$before" = "$after" ]; then ok "$ID: $d"; else
		nok "$ID: $d"
		diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -n 6 | sed 's/^/#   /'
		return 1
	fi
}
out_case() { # out_case DESC -- CMD...: nothing outside ($OUT) changes
	local d=$1
	shift 2
	reset_out
	fs_case "$d" "$OUT" -- "$@"
}
noleak() { # noleak DESC OUTPUT: no planted secret in what the command printed
	if grep -q 'SECRET-[0-9]' <<<"$2"; then
		nok "$ID: $1"
		grep -o '[a-z0-9]*-SECRET-[0-9]*' <<<"$2" | sort -u | head -n 4 | sed 's/^/#   leaked: /'
		return 1
	fi
	ok "$ID: $1"
}
ns_of() { # the pid namespace recorded by the command in FILE, e.g. pid:[4026532]
	cat "$1" 2>/dev/null
}
ns_procs() { # count live host processes in that pid namespace (zombies
	# waiting for the host's init to reap them hold nothing)
	local ns=$1 c=0 p
	[ -n "$ns" ] || { echo 0; return; }
	local st
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] || continue
		read -r _ _ st _ <"$p/stat" 2>/dev/null || continue
		[ "$st" != Z ] && c=$((c + 1))
	done
	echo "$c"
}
ns_settled() { # ns_procs NS once it is 0, or after 5 s (a process killed
	# with its namespace still takes its exit path a while on a busy host)
	local c
	for _ in $(seq 50); do
		c=$(ns_procs "$1")
		[ "$c" = 0 ] && break
		sleep 0.1
	done
	echo "$c"
}
victim_ok() { # the host victim is alive, untraced and received no signal
	kill -0 "$VPID" 2>/dev/null && [ ! -s "$VSIG" ] &&
		[ "$(awk '/^TracerPid/ {print $2}' "/proc/$VPID/status")" = 0 ]
}

# pg_run SIGFILE OUTFILE: a fresh session holding a host victim (recording
# signals in SIGFILE) and `moat run` of a command that signals its process
# group and every process it can (kill(0), kill(-1)); OUTFILE gets "alive"
# when the victim survived. No `timeout` here: it would move moat into a
# process group of its own.
pg_run() {
	: >"$1"
	own "$1"
	VSIG2=$1 WS=$WS H=$H MOAT=$MOAT PY=$PY ENVS="${ENVX[*]-}" MODES="${MODE[*]-}" RUNAS_S="${RUNAS[*]-}" \
		setsid -w bash -c '"$@" & vp=$!
		for _ in $(seq 200); do [ -e "$VSIG2.ready" ] && break; sleep 0.05; done
		n0=$(ps -o ni= -p $vp)
		cd "$WS" && env -i PATH=/usr/bin:/bin HOME="$H" $ENVS timeout --foreground 20 $RUNAS_S \
			"$MOAT" run $MODES -- "$PY" -c "import os, signal
for p in (0, -1):
    try: os.kill(p, signal.SIGWINCH); os.kill(p, signal.SIGURG)
    except OSError as e: print(e)
try: os.setpriority(os.PRIO_PGRP, 0, 9)
except OSError as e: print(e)" >/dev/null 2>&1
		sleep 0.2; kill -0 $vp && echo alive
		[ "$(ps -o ni= -p $vp)" = "$n0" ] || echo "the process group was reniced"
		cat "$VSIG2"; kill -KILL $vp' _ \
		${RUNAS[@]+"${RUNAS[@]}"} "$PY" "$T/victim.py" "$1" >"$2" 2>&1
}

# ---- one identity's suite ----
suite() {
	ID=$1
	RUNAS=()
	[ "$ID" = nobody ] && RUNAS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	MODE=()
	ENVX=()
	T=$(mktemp -d /var/tmp/moat-esc-XXXXXX) || bail "mktemp"
	chmod 755 "$T"
	# outside /tmp on purpose: the sandbox replaces /tmp, so a canary there
	# would be invisible inside and every write to it would fail for free
	WS=$T/ws OUT=$T/out H=$T/home
	# (.cache/moat: moat's own scan records, written from outside the
	# sandbox; the fingerprints leave them out)
	mkdir -p "$WS/sub" "$H/.ssh" "$H/.aws" "$H/.config" "$H/.local/bin" "$H/.cache/moat"
	echo "ssh-SECRET-1" >"$H/.ssh/id_rsa"
	echo "aws-SECRET-2" >"$H/.aws/credentials"
	echo "# host bashrc" >"$H/.bashrc"
	printf '[user]\n\tname = Moat Esc\n\temail = esc@example.invalid\n[init]\n\tdefaultBranch = main\n' >"$H/.gitconfig"
	echo "API_KEY=env-SECRET-3" >"$WS/.env"
	echo hello >"$WS/readme.txt"
	echo "# ws bashrc" >"$WS/.bashrc"
	echo '{"mcpServers": {}}' >"$WS/.mcp.json"
	mkdir -p "$WS/.vscode" && echo '{}' >"$WS/.vscode/settings.json"
	(cd "$WS" && git init -q . && git add readme.txt && git -c user.name=t -c user.email=t@t commit -qm init) ||
		bail "git init"
	own "$WS" "$H"
	reset_out

	# a host process of the same identity: it records every signal it gets
	V=$T/v
	mkdir -p "$V"
	own "$V"
	VSIG=$V/victim.sig
	: >"$VSIG"
	own "$VSIG"
	cat >"$T/victim.py" <<'EOF'
import signal, sys, time
def h(s, f):
    with open(sys.argv[1], "a") as o:
        o.write("sig%d\n" % s)
for s in (signal.SIGWINCH, signal.SIGURG, signal.SIGUSR1, signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(s, h)
open(sys.argv[1] + ".ready", "w").close()
while True:
    time.sleep(1)
EOF
	env VICTIM_SECRET=proc-SECRET-4 ${RUNAS[@]+"${RUNAS[@]}"} "$PY" "$T/victim.py" "$VSIG" moat-esc-victim-$$ &
	VPID=$!
	PIDS+=("$VPID")
	for _ in $(seq 200); do [ -e "$VSIG.ready" ] && break; sleep 0.05; done

	echo "# ---- $ID: sanity (honest work, so the refusals below mean something) ----"
	out=$(m -- sh -c 'echo made > sub/made && git add sub/made && git commit -qm x && git log --oneline | wc -l' 2>&1)
	checke "$ID: honest work: writes and git commit in the workspace work" \
		'[ "$(cat "$WS/sub/made" 2>/dev/null)" = made ] && [ "$out" = 2 ]' || echo "# $out"
	check "$ID: the victim (pid $VPID) is alive and clean before the attacks" victim_ok
	out=$(m -- cat "$OUT/canary" 2>&1)
	check "$ID: the outside directory is visible inside (a refusal below is the sandbox's, not a missing path)" \
		[ "$out" = canary-content ] || echo "# $out"

	echo "# ---- $ID: writes outside the workspace ----"
	out_case "direct writes, creates, mkdir, rm, truncate outside" -- m -- sh -c \
		"echo x > '$OUT/canary'; echo x >> '$OUT/canary'; echo x > '$OUT/new'; mkdir '$OUT/d'; rm -f '$OUT/canary'; rmdir '$OUT/sub'; truncate -s 0 '$OUT/canary'; $PY -c 'import os; os.truncate(\"$OUT/canary\", 0)'"
	out_case "writes via .. from the workspace" -- m -- sh -c \
		"echo x > ../out/canary; echo x > ../out/new; echo x > sub/../../out/new2; cd sub && echo x > ../../out/new3"
	out_case "writes via symlinks planted in the workspace (absolute, relative, dir)" -- m -- sh -c \
		"ln -s '$OUT/canary' c; echo x >> c; ln -s ../out rl; echo x > rl/new; ln -s '$OUT' dl; echo x > dl/sub/new; cp readme.txt dl/"
	rm -f "$WS/c" "$WS/rl" "$WS/dl"
	out_case "writes via /proc/self/root, /proc/self/cwd, /proc/thread-self/root, /proc/1/root" -- m -- sh -c \
		"echo x > /proc/self/root$OUT/new1; cd '$OUT' && echo x > /proc/self/cwd/new2; echo x > /proc/thread-self/root$OUT/new3; echo x > /proc/1/root$OUT/canary; echo x > /proc/1/cwd/new4"
	out_case "writes via /proc/<host pid>/root and /cwd (pid $VPID)" -- m -- sh -c \
		"echo x > /proc/$VPID/root$OUT/new; echo x > /proc/$VPID/cwd/new2; ls /proc/$VPID/root/ >/dev/null 2>&1 && echo visible"
	exec 7>>"$OUT/fd7" 8<"$OUT"
	out_case "inherited descriptors: >&7, /proc/self/fd/7, /dev/fd/7, and dir fd 8" -- m -- sh -c \
		"echo a >&7; echo b > /proc/self/fd/7; echo c > /dev/fd/7; echo d > /proc/self/fd/8/new; $PY -c 'import os; os.open(\"new2\", os.O_CREAT|os.O_WRONLY, dir_fd=8)'"
	exec 7>&- 8<&-
	out_case "stdin is a directory outside: openat(0, ...) and /proc/self/fd/0/NAME" -- m -- sh -c \
		"$PY -c 'import os; os.open(\"new\", os.O_CREAT|os.O_WRONLY, dir_fd=0)'; echo x > /proc/self/fd/0/new2; mkdir /proc/self/fd/0/d" <"$OUT"
	out_case "stdin is a read-only file outside: reopening /proc/self/fd/0 for writing" -- m -- sh -c \
		"echo x > /proc/self/fd/0; echo x >> /dev/stdin; $PY -c 'open(\"/proc/self/fd/0\", \"r+\").write(\"x\")'" <"$OUT/canary"
	out_case "rename and link tricks: mv/ln in both directions, RENAME_EXCHANGE, cp -al" -- m -- sh -c \
		"mv '$OUT/canary' ./stolen; ln '$OUT/canary' ./hard && echo x >> ./hard; mv readme.txt '$OUT/'; ln readme.txt '$OUT/l'; cp -al sub '$OUT/sub2'; mv '$OUT/sub' ./sub3; $PY -c '
import ctypes; l = ctypes.CDLL(None); print(l.renameat2(-100, b\"readme.txt\", -100, b\"$OUT/canary\", 2))'"
	check "$ID: ... and the workspace kept its own file" [ "$(cat "$WS/readme.txt" 2>/dev/null)" = hello ]
	rm -f "$WS/stolen" "$WS/hard"
	out_case "O_TMPFILE in the workspace linked out with linkat via /proc/self/fd" -- m -- "$PY" -c "
import os
fd = os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o644); os.write(fd, b'x')
for dst in ('$OUT/new', '$OUT/canary'):
    try: os.link('/proc/self/fd/%d' % fd, dst, follow_symlinks=True)
    except OSError as e: print(e)"
	out_case "unshare -Urm / nsenter, then a bind mount and a write through it" -- m -- sh -c \
		"unshare -Urm sh -c 'mount --bind $OUT $WS/sub && echo x > $WS/sub/new'; nsenter -t 1 -U -m sh -c 'echo x > $OUT/new2'; unshare -r chroot / sh -c 'echo x > $OUT/new3'"
	check "$ID: ... and nothing landed in the workspace's sub either" [ ! -e "$WS/sub/new" ]
	# readonly: the workspace itself is the outside
	fs_case "readonly profile: the workspace is not writable (write, create, rm, mv, truncate)" "$WS/readme.txt" "$WS/sub" -- \
		m --profile readonly -- sh -c 'echo x >> readme.txt; echo x > sub/new; rm -f readme.txt; mv sub sub2; truncate -s0 readme.txt'
	# ESCAPE (when written): the same metadata gap as below, inside a
	# read-only workspace
	fs_case "readonly profile: chmod, utimes and xattrs in the workspace" "$WS/readme.txt" -- \
		m --profile readonly -- sh -c "chmod 777 readme.txt; touch -d 2001-01-01 readme.txt; $PY -c 'import os; os.setxattr(\"readme.txt\", \"user.pwned\", b\"1\")'"
	out_case "mkfifo and mknod outside" -- m -- sh -c \
		"mkfifo '$OUT/fifo'; mknod '$OUT/null' c 1 3; mknod '$OUT/p' p; $PY -c 'import os; os.mkfifo(\"$OUT/fifo2\")'"
	m -- sh -c 'mknod ws-null c 1 3; mknod ws-zero c 1 5' >/dev/null 2>&1
	checke "$ID: no device node can be created in the workspace" '[ ! -e "$WS/ws-null" ] && [ ! -e "$WS/ws-zero" ]'
	if have_attack "bind mounts"; then
		mkdir -p "$WS/mnt"
		own "$WS/mnt"
		out_case "bind mount of an outside dir into the workspace, then write through it" -- \
			m -- "$ATTACK" bind "$OUT" "$WS/mnt"
		out_case "open_by_handle_at of the canary (O_WRONLY)" -- m -- "$ATTACK" handle "$OUT/canary"
		rm -rf "$WS/mnt"
	fi
	# ESCAPE (when written): Landlock does not govern file metadata, and
	# nothing but Landlock guards the files outside the workspace
	out_case "chmod of a file outside (chmod 0777 and the setuid bit)" -- m -- sh -c \
		"chmod 4777 '$OUT/canary'; chmod 777 '$OUT/sub'"
	out_case "utimes of a file outside (touch -d)" -- m -- sh -c "touch -d 2001-01-01 '$OUT/canary'"
	out_case "inode flags of a file outside (chattr +dA, +i)" -- m -- sh -c "chattr +dA '$OUT/canary'; chattr +i '$OUT/canary'"
	chattr -i "$OUT/canary" 2>/dev/null
	out_case "setxattr on a file outside (user.* and a POSIX ACL granting access)" -- m -- "$PY" -c "
import os
try: os.setxattr('$OUT/canary', 'user.pwned', b'1')
except OSError as e: print(e)
acl = bytes.fromhex('02000000' '0100' '0600' 'ffffffff' '0200' '0700' 'feff0000' '0400' '0400' 'ffffffff' '1000' '0700' 'ffffffff' '2000' '0400' 'ffffffff')
try: os.setxattr('$OUT/canary', 'system.posix_acl_access', acl)
except OSError as e: print(e)"

	echo "# ---- $ID: planted code and protected paths ----"
	local prot=("$WS/.git/hooks" "$WS/.git/config" "$WS/.bashrc" "$WS/.mcp.json" "$WS/.vscode")
	fs_case "protected paths: write, append, rm, mv, chmod, touch (.git/hooks, .git/config, .bashrc, .mcp.json, .vscode)" \
		"${prot[@]}" -- m -- sh -c '
		echo "touch /tmp/pwn" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
		git config core.hooksPath /tmp; echo "[core] fsmonitor = evil" >> .git/config
		echo evil >> .bashrc; echo "{\"mcpServers\":{\"x\":{\"command\":\"evil\"}}}" > .mcp.json
		echo "{}" > .vscode/tasks.json; rm -rf .vscode .git/hooks; mv .bashrc .bashrc.x; mv .mcp.json m.json
		chmod 777 .bashrc .git/config .git/hooks; touch -d 2001-01-01 .bashrc .mcp.json .git/config
		mv .git .git2'
	checke "$ID: ... and .git was not swapped" '[ -d "$WS/.git/objects" ] && [ ! -e "$WS/.git2" ]'
	# ESCAPE (when written): .git stays writable around the protected names;
	# $GIT_DIR/commondir redirects git to a config (and hooks) of the
	# agent's choice, run by the user's next git command outside
	rm -f "$OUT/PWNED-commondir"
	m -- sh -c "mkdir -p evilgit && cp -r .git/objects .git/refs .git/HEAD evilgit/ &&
		printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch $OUT/PWNED-commondir; false\"\n' > evilgit/config &&
		echo ../evilgit > .git/commondir" >/dev/null 2>&1
	(cd "$WS" && asid env HOME="$H" git status >/dev/null 2>&1)
	check "$ID: .git/commondir planted inside cannot make the next git status outside run code" \
		[ ! -e "$OUT/PWNED-commondir" ] || echo "#   git ran the agent's core.fsmonitor: $(cat "$WS/.git/commondir" 2>/dev/null)"
	rm -rf "$WS/evilgit" "$WS/.git/commondir" "$OUT/PWNED-commondir"

	echo "# ---- $ID: the home directory is copy-on-write ----"
	fs_case "writes to the home vanish (~/.bashrc, autostart, ~/.ssh/rc, ~/.local/bin, via ../home)" "$H" -- m -- sh -c '
		echo evil >> ~/.bashrc; mkdir -p ~/.config/autostart && echo x > ~/.config/autostart/evil.desktop
		echo x > ~/.ssh/rc; echo x >> ~/.ssh/authorized_keys; ln -s /bin/sh ~/.local/bin/git
		echo evil >> ../home/.bashrc; chmod 777 ~/.bashrc; touch -d 2001-01-01 ~/.gitconfig
		git config --global core.fsmonitor evil; rm -f ~/.gitconfig; cat ~/.bashrc | grep -c evil'
	check "$ID: ... while the command saw its own writes (a real copy-on-write view)" \
		grep -q '^[12]$' "$G/case.out"

	echo "# ---- $ID: the host's /tmp and /dev/shm ----"
	local tv=/tmp/moat-esc-$$.$ID shv=/dev/shm/moat-esc-$$.$ID
	echo host >"$tv"
	echo host >"$shv"
	chmod 666 "$tv" "$shv"
	own "$tv" "$shv"
	fs_case "the host's /tmp and /dev/shm are not reachable (append, create, symlink, rm)" "$tv" "$shv" -- m -- sh -c "
		echo x >> $tv; echo x >> $shv; rm -f $tv $shv; echo x > /tmp/moat-esc-$$.$ID.new; echo x > /dev/shm/moat-esc-$$.$ID.new
		ln -s $tv /tmp/l; cat /proc/self/root$tv"
	checke "$ID: ... nothing new landed there" '[ ! -e "/tmp/moat-esc-$$.$ID.new" ] && [ ! -e "/dev/shm/moat-esc-$$.$ID.new" ]'
	rm -f "$tv" "$shv"

	echo "# ---- $ID: secrets ----"
	out=$(m -- sh -c "cat ~/.ssh/id_rsa ~/.aws/credentials .env; cat /proc/self/root$H/.ssh/id_rsa /proc/1/root$WS/.env" 2>&1)
	noleak "masked secrets are unreadable (~/.ssh, ~/.aws, .env, via /proc/self/root)" "$out"
	out=$(m -- sh -c "ln -s ~/.ssh/id_rsa k1; cat k1; ln -s '$H/.aws' k2; cat k2/credentials; ln ~/.ssh/id_rsa h1; ln .env h2; cat h1 h2; cp -a ~/.ssh sshcopy; cat sshcopy/*; tar cf - -C ~ .ssh .aws 2>/dev/null | tar xOf -" 2>&1)
	noleak "secrets through symlinks, hard links, cp and tar made inside" "$out"
	checke "$ID: ... no hard link to a real secret was made in the workspace" \
		'! [ "$H/.ssh/id_rsa" -ef "$WS/h1" ] && ! [ "$WS/.env" -ef "$WS/h2" ]'
	rm -rf "$WS/k1" "$WS/k2" "$WS/h1" "$WS/h2" "$WS/sshcopy"
	out=$(m -- sh -c "find '$H' '$WS' -type f -not -path '*/.git/*' -exec cat {} + 2>/dev/null; git add -f .env 2>/dev/null && git show :.env" 2>&1)
	noleak "find over the home and the workspace, git add of the masked .env" "$out"
	git -C "$WS" reset -q .env 2>/dev/null
	out=$(m -- sh -c "umount ~/.ssh; umount -l .env; cat ~/.ssh/id_rsa .env; mount --move ~/.ssh /mnt" 2>&1)
	if have_attack "umount of masks via the syscall"; then
		out="$out$(m -- "$ATTACK" umount "$H/.ssh/id_rsa"; m -- "$ATTACK" umount "$WS/.env")"
	fi
	noleak "the masks cannot be unmounted (umount, umount -l, umount2 MNT_DETACH)" "$out"
	out=$(m -- sh -c "cat /proc/$VPID/environ /proc/$VPID/cmdline; cat /proc/[0-9]*/environ; $PY -c '
import re
try:
    maps = open(\"/proc/$VPID/maps\").read(); mem = open(\"/proc/$VPID/mem\", \"rb\")
    for l in maps.splitlines():
        if \"[stack]\" in l:
            a, b = [int(x, 16) for x in l.split()[0].split(\"-\")]; mem.seek(a); print(mem.read(b - a))
except OSError as e: print(e)'" 2>&1 | tr -d '\0')
	noleak "a host process's environment and memory (/proc/$VPID/environ, /mem)" "$out"
	if [ "$ID" = root ]; then
		out=$(m -- sh -c 'cat /etc/shadow /etc/gshadow' 2>/dev/null)
		check "$ID: /etc/shadow and /etc/gshadow are masked (root could read them)" \
			bash -c '! grep -q "^root:" <<<"$1"' _ "$out"
		# ESCAPE (when written): the backups of the masked files are not
		# masked, and hold the same password hashes
		local f leaked=
		for f in /etc/shadow- /etc/gshadow- /etc/ssh/ssh_host_rsa_key /etc/ssh/ssh_host_ed25519_key; do
			[ -s "$f" ] || continue
			out=$(m -- cat "$f" 2>/dev/null)
			[ -n "$out" ] && [ "$out" = "$(cat "$f")" ] && leaked="$leaked $f"
		done
		check "$ID: backups and host keys next to masked system secrets are unreadable (/etc/shadow-, /etc/gshadow-, ssh host keys)" \
			[ -z "$leaked" ] || echo "#   readable inside:$leaked"
	else
		na "$ID: /etc/shadow and its backups are not readable by nobody anyway"
	fi
	# a key in the identity's keyring
	local kid
	kid=
	[ -n "$ATTACK" ] && kid=$(asid "$ATTACK" keyadd moat-esc-key key-SECRET-5 2>/dev/null)
	if [ -n "$kid" ]; then
		out=$(m -- "$ATTACK" keyread moat-esc-key 2>&1)
		noleak "the user's kernel keyring (a key added outside)" "$out"
		check "$ID: ... which the same probe reads outside (control)" \
			grep -q key-SECRET-5 <<<"$(asid "$ATTACK" keyread moat-esc-key 2>&1)"
		asid "$ATTACK" keyinval "$kid"
	else
		skip "$ID: the kernel keyring (cannot add a key here)"
	fi
	# SysV shared memory of the identity, holding a secret: read and
	# scribbled on from inside; judged by its bytes, read from outside
	SHMKEY=$((0x6d000000 + ($$ % 4096) * 16 + ${#ID}))
	cat >"$T/shm.py" <<'EOF'
import ctypes, sys
l = ctypes.CDLL(None, use_errno=True); l.shmat.restype = ctypes.c_void_p
key, mode = int(sys.argv[1]), sys.argv[2]
i = l.shmget(key, 4096, 0o1600 if mode == "create" else 0)
if i < 0:
    print("shmget", ctypes.get_errno()); sys.exit()
p = l.shmat(i, None, 0)
if p is None or p == ctypes.c_void_p(-1).value:
    print("shmat", ctypes.get_errno()); sys.exit()
if mode == "create":
    ctypes.memmove(p, b"shm-SECRET-6\0", 13)
print(ctypes.string_at(p, 13))
if mode == "attack":
    ctypes.memmove(p, b"PWNED", 5)
EOF
	chmod 644 "$T/shm.py"
	ipcrm -M "$SHMKEY" 2>/dev/null
	asid "$PY" "$T/shm.py" "$SHMKEY" create >/dev/null 2>&1
	shm_intact() { [ "$(asid "$PY" "$T/shm.py" "$SHMKEY" read 2>&1)" = "b'shm-SECRET-6\x00'" ]; }
	if shm_intact; then
		out=$(m -- "$PY" "$T/shm.py" "$SHMKEY" attack 2>&1)
		noleak "SysV shared memory of the user (IPC namespace): not readable" "$out"
		check "$ID: ... and not writable (its bytes, seen from outside)" shm_intact
	else
		skip "$ID: SysV shared memory unavailable here"
	fi

	echo "# ---- $ID: other processes ----"
	out=$(m -- sh -c "grep -l 'moat-esc-victi[m]' /proc/[0-9]*/cmdline; ps ax -o args | grep -c 'moat-esc-victi[m]'" 2>&1)
	check "$ID: host processes are invisible" [ "$out" = 0 ] || echo "# $out"
	m -- sh -c "kill -TERM $VPID; kill -WINCH $VPID; kill -KILL $VPID; kill -HUP -$VPID" >/dev/null 2>&1
	sleep 0.2
	check "$ID: signals to the host pid fail (victim alive, no signal recorded)" victim_ok
	# kill(0) and kill(-1) from a sandbox in the victim's process group
	: >"$T/pg.sig"
	own "$T/pg.sig"
	pg_run "$V/pg.sig" "$T/pg.out"
	checke "$ID: kill(0), kill(-1) and setpriority(PRIO_PGRP) reach no host process of the same process group" \
		'[ "$(cat "$T/pg.out")" = alive ]' || echo "# $(tr '\n' ' ' <"$T/pg.out")"
	if have_attack "ptrace and SIGIO"; then
		m -- "$ATTACK" ptrace "$VPID" >"$T/ptrace.out" 2>&1 &
		local mp=$! traced=0
		while kill -0 "$mp" 2>/dev/null; do
			[ "$(awk '/^TracerPid/ {print $2}' "/proc/$VPID/status")" != 0 ] && traced=1
			sleep 0.05
		done
		wait "$mp"
		checke "$ID: ptrace, process_vm_readv, pidfd_getfd of a host process fail (TracerPid stayed 0)" \
			'[ $traced = 0 ] && victim_ok' || echo "# $(tr '\n' ' ' <"$T/ptrace.out")"
		m -- "$ATTACK" sigio "$VPID" >/dev/null 2>&1
		sleep 0.2
		check "$ID: F_SETOWN/SIGIO cannot signal a host process" victim_ok
	fi
	# a separate victim: a changed limit must not break the main one
	(exec ${RUNAS[@]+"${RUNAS[@]}"} sleep 600) &
	local lp=$! lim_before
	PIDS+=("$lp")
	lim_before=$(cat "/proc/$lp/limits")
	local nice_before
	nice_before=$(cut -d" " -f19 "/proc/$lp/stat") # (the suite may itself run under nice)
	m -- sh -c "prlimit --pid $lp --nofile=3:3 --core=unlimited; renice -n 19 -p $lp; taskset -p 1 $lp" >/dev/null 2>&1
	checke "$ID: prlimit, renice and taskset cannot change a host process" \
		'[ "$lim_before" = "$(cat "/proc/$lp/limits")" ] && [ "$(cut -d" " -f19 "/proc/$lp/stat")" = "$nice_before" ]'

	echo "# ---- $ID: outliving the call ----"
	local tag=$$$RANDOM
	m --timeout 2 -- sh -c "readlink /proc/self/ns/pid > ns1.out
		setsid sh -c 'trap \"\" TERM HUP INT; exec sleep 341.$tag' &
		nohup sleep 342.$tag >/dev/null 2>&1 &
		(sleep 343.$tag &) &
		$PY -c 'import os, time, signal
signal.signal(signal.SIGTERM, signal.SIG_IGN); signal.signal(signal.SIGHUP, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(300)
' &
		sleep 100" >/dev/null 2>&1
	local rc=$? ns left stray
	ns=$(ns_of "$WS/ns1.out")
	# (what the kernel still holds, for up to 5 s: the processes of a
	# namespace whose init has died are gone once it is reaped)
	left=$(ns_settled "$ns")
	for _ in $(seq 20); do
		stray=$(pgrep -fc "34[123]\\.$tag" || true)
		[ "$stray" = 0 ] && break
		sleep 0.1
	done
	checke "$ID: --timeout 2 kills setsid/nohup/double-forked/TERM-ignoring children (exit $rc, namespace ${ns:-unseen}, $left left in it, $stray elsewhere)" \
		'[ $rc = 124 ] && [ -n "$ns" ] && [ "$left" = 0 ] && [ "$stray" = 0 ]'
	(cd "$WS" && exec env -i PATH=/usr/bin:/bin HOME="$H" ${RUNAS[@]+"${RUNAS[@]}"} "$MOAT" run -- sh -c \
		"readlink /proc/self/ns/pid > ns2.out; setsid sleep 351.$tag & nohup sleep 352.$tag & sleep 353.$tag" >/dev/null 2>&1) &
	local mpid=$!
	for _ in $(seq 200); do [ "$(pgrep -fc "^sleep 35[123]\\.$tag" || true)" -ge 3 ] && break; sleep 0.05; done
	kill -KILL "$mpid"
	wait "$mpid" 2>/dev/null
	sleep 0.5
	ns=$(ns_of "$WS/ns2.out")
	left=$(ns_settled "$ns")
	checke "$ID: when moat itself is SIGKILLed, nothing of the sandbox survives ($left left)" \
		'[ -n "$ns" ] && [ "$left" = 0 ] && [ "$(pgrep -fc "35[123]\\.$tag" || true)" = 0 ]'
	# a fork bomb under --pids 300: bounded, the host stays usable, no
	# leftovers. The peak is the most tasks seen in the sandbox's pid
	# namespace, counted from the host's /proc while the bomb runs (every
	# process keeps forking and retries a refused fork, so the count stays
	# at the bound until moat is stopped; a shell bomb would collapse by itself,
	# as sh exits when it cannot fork). Counting the namespace, not the
	# host, leaves the other suites free to run beside this one. The bound
	# is moat's: pid_max of the namespace is pids + 2 + the kernel's 300
	# reserved numbers (src/sandbox/ns.c), so at most 601 run at once.
	if have_attack "fork bomb"; then
	local peak scans peakf spid responsive=1
	peakf=$(mktemp)
	rm -f "$WS/ns3.out"
	# (the counter starts first and at the top priority: the bomb's
	# processes take every core while they retry)
	nice -n -20 python3 - "$WS/ns3.out" >"$peakf" <<'PY' &
import os, sys, time
end = time.monotonic() + 10
ns = ""
while not ns and time.monotonic() < end:
    try:
        ns = open(sys.argv[1]).read().strip()
    except OSError:
        time.sleep(0.01)
peak = scans = errors = seen = 0
# (1.5 s once the bound is reached, 10 s at most: on a loaded machine
# the bomb's first forks may come seconds after its namespace)
start = time.monotonic()
end = start + 10
while ns and time.monotonic() < end:
    scans += 1
    n = 0
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                n += os.readlink("/proc/" + p + "/ns/pid") == ns
            except OSError:
                errors += 1
    if n > 50 and peak <= 50:
        end = min(end, time.monotonic() + 1.5)
    peak = max(peak, n)
print(peak, scans, errors, ns or "(no namespace in 10 s)")
PY
	spid=$!
	# (ended once counted, by a TERM to moat: a timeout counted from
	# moat's start could end it before it ran on a loaded machine)
	TMO=30 m --pids 300 --timeout 25 -- sh -c "readlink /proc/self/ns/pid > ns3.out; exec $ATTACK forkbomb" >/dev/null 2>&1 &
	mpid=$!
	wait "$spid"
	read -r peak scans errs _ <"$peakf"; rm -f "$peakf"
	timeout 10 sh -c 'echo alive >/dev/null' || responsive=0
	pkill -TERM -f -- "--pids 300 --timeout 25 -- sh -c readlink /proc/self/ns/pid > ns3.out"
	wait "$mpid"
	sleep 0.5
	ns=$(ns_of "$WS/ns3.out")
	checke "$ID: a fork bomb with --pids 300 stays bounded (peak $peak tasks in its namespace, $scans scans, $errs gone while read) and the host responsive" \
		'[ -n "$ns" ] && [ "$peak" -gt 50 ] && [ "$peak" -le 601 ] && [ $responsive = 1 ]'
	left=$(ns_settled "$ns")
	check "$ID: ... and leaves nothing behind ($left left)" [ "$left" = 0 ]
	fi

	echo "# ---- $ID: network (--net deny and readonly) ----"
	local before
	before=$(wc -l <"$NETLOG")
	out=$(m --net deny -- $(netclient) 2>&1)
	check "$ID: --net deny: no connection or datagram reached any host listener ($LISTENING)" \
		[ "$(wc -l <"$NETLOG")" = "$before" ] || { echo "# $(tail -n +$((before + 1)) "$NETLOG" | tr '\n' ' ')"; echo "# $out" | head -3; }
	before=$(wc -l <"$NETLOG")
	m -- "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 2)" >/dev/null 2>&1
	check "$ID: network allowed (control): the probe's TCP connection reaches the listener from inside" \
		[ "$(wc -l <"$NETLOG")" -gt "$before" ]
	before=$(wc -l <"$NETLOG")
	out=$(m --profile readonly -- $(netclient) 2>&1)
	check "$ID: --profile readonly: nothing reached the host listeners" [ "$(wc -l <"$NETLOG")" = "$before" ]
	# a port list without the listener's port: TCP, MPTCP, TCP Fast Open and
	# netlink reach nothing (UDP is not filtered by the list: documented)
	before=$(wc -l <"$NETLOG")
	out=$(m --net $((PORT + 7)) -- $(netclient) 2>&1)
	check "$ID: --net PORT: plain TCP, MPTCP, TCP Fast Open and netlink reach no other port or process" \
		[ "$(tail -n +$((before + 1)) "$NETLOG" | grep -cE '^(tcp4|tcp6|tcpeth|netlink)$')" = 0 ] ||
		{ echo "# $(tail -n +$((before + 1)) "$NETLOG" | tr '\n' ' ')"; echo "# $out" | grep -E "mptcp|tfo|netlink" | head -3; }
	before=$(wc -l <"$NETLOG")
	out=$(m -- "$PY" -c "import socket, sys
for a in ['\0$ABS', '$TMPSOCK', '$RUNSOCK']:
    try:
        s = socket.socket(socket.AF_UNIX); s.settimeout(1); s.connect(a); print('connected', repr(a))
    except OSError as e: print('failed', e)" 2>&1)
	check "$ID: network allowed: the host's abstract, /tmp and /run unix sockets stay unreachable" \
		[ "$(wc -l <"$NETLOG")" = "$before" ] || echo "# $out"
	if have_attack "unix sockets through other syscall ABIs"; then
		before=$(wc -l <"$NETLOG")
		out=$(m --net deny -- sh -c "$ATTACK unix $VISSOCK; $ATTACK i386-unix $VISSOCK; $ATTACK x32-unix $VISSOCK" 2>&1)
		check "$ID: --net deny: no unix socket to a visible host socket, not even through int 0x80 or x32" \
			[ "$(wc -l <"$NETLOG")" = "$before" ] || echo "# $out" | tr '\n' ' '
	fi
	# AF_VSOCK is not network-namespaced: with the network denied it should be
	# refused like AF_INET, or it reaches the hypervisor's services
	out=$(m --net deny -- "$PY" -c 'import socket
try:
    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); print("created")
except OSError as e: print("refused", e.errno)' 2>&1)
	if [ "$out" = created ]; then
		if "$PY" -c 'import socket; s = socket.socket(socket.AF_VSOCK); s.bind((1, 0))' 2>/dev/null; then
			skip "$ID: AF_VSOCK with --net deny: a loopback vsock listener test is not written yet"
		else
			todo "$ID: --net deny still lets the command create AF_VSOCK sockets (vsock is not namespaced; no loopback transport here to prove a connection)"
		fi
	else
		ok "$ID: --net deny refuses AF_VSOCK sockets ($out)"
	fi

	echo "# ---- $ID: kernel surface ----"
	if have_attack "syscall probes"; then
		out=$(m -- "$ATTACK" sys 2>&1)
		local bad
		bad=$(grep '=OK$' <<<"$out" | grep -v '^getpid=' | tr '\n' ' ')
		checke "$ID: seccomp/Landlock refuse io_uring, bpf, perf, userfaultfd, keyctl, personality, namespaces, mount family, chroot, /dev/kvm, /dev/vsock, kmsg, syslog, kexec, modules, acct, mknod" \
			'[ -z "$bad" ] && grep -q "^getpid=OK\$" <<<"$out"' || echo "#   allowed: $bad"
		echo "#   $(tr '\n' ' ' <<<"$out")"
		check "$ID: ... and no device node was made" [ ! -e "$WS/mknod-null" ]
		rm -rf "$WS/int80" "$WS/x32" "$WS/memfd-proof"
		m -- "$ATTACK" i386 "$WS/int80" >"$T/i386.out" 2>&1
		m -- "$ATTACK" x32 "$WS/x32" >>"$T/i386.out" 2>&1
		checke "$ID: 32-bit (int 0x80) and x32 system calls do nothing (no directory made)" \
			'[ ! -e "$WS/int80" ] && [ ! -e "$WS/x32" ]' || echo "# $(tr '\n' ' ' <"$T/i386.out")"
		"$ATTACK" i386 "$T/int80-control" >/dev/null 2>&1
		[ -d "$T/int80-control" ] || echo "#   (note: int 0x80 does not work outside either: no ia32 emulation)"
		out=$(m -- "$ATTACK" memfd-exec "$WS/memfd-proof" 2>&1)
		check "$ID: code from an anonymous memfd cannot be executed (fexecve, /proc/self/fd)" \
			[ ! -e "$WS/memfd-proof" ] || echo "# $(tr '\n' ' ' <<<"$out")"
		# TIOCSTI: inject into the terminal the command runs on; the input
		# queue is read from outside afterwards
		cat >"$T/ptyrun.py" <<'EOF'
import fcntl, os, pty, subprocess, sys, termios
m, s = pty.openpty()
def pre():
    os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0)
subprocess.run(sys.argv[1:], stdin=s, stdout=s, stderr=s, preexec_fn=pre, timeout=20)
os.set_blocking(s, False)
try:
    data = os.read(s, 4096)
except BlockingIOError:
    data = b""
print("INJECTED" if b"PWNED" in data else "clean")
EOF
		local ctl
		ctl=$(cd "$WS" && "$PY" "$T/ptyrun.py" ${RUNAS[@]+"${RUNAS[@]}"} "$ATTACK" tiocsti)
		if [ "$ctl" = INJECTED ]; then
			out=$(cd "$WS" && "$PY" "$T/ptyrun.py" env -i PATH=/usr/bin:/bin HOME="$H" TERM=dumb \
				${RUNAS[@]+"${RUNAS[@]}"} "$MOAT" run -- "$ATTACK" tiocsti)
			check "$ID: TIOCSTI cannot inject input into the terminal (fd 0, /dev/tty, high bits)" [ "$out" = clean ]
		else
			skip "$ID: TIOCSTI does not work here even outside the sandbox (control: $ctl)"
		fi
	fi
	if [ "$ID" = root ]; then
		local dn
		dn=$(cat /proc/sys/kernel/domainname)
		m -- sh -c 'echo moat-esc-pwned > /proc/sys/kernel/domainname; hostname moat-esc-pwned' >/dev/null 2>&1
		checke "$ID: sysctls of the shared UTS namespace stay unchanged (domainname, hostname)" \
			'[ "$(cat /proc/sys/kernel/domainname)" = "$dn" ] && [ "$(hostname)" != moat-esc-pwned ]'
		[ "$(cat /proc/sys/kernel/domainname)" = "$dn" ] || echo "$dn" >/proc/sys/kernel/domainname
		local cg
		m -- sh -c "for d in /sys/fs/cgroup /sys/fs/cgroup/*; do mkdir \$d/moat-esc-$$ 2>/dev/null; done" >/dev/null 2>&1
		cg=$(ls -d /sys/fs/cgroup/moat-esc-$$ /sys/fs/cgroup/*/moat-esc-$$ 2>/dev/null)
		check "$ID: no cgroup can be created from inside" [ -z "$cg" ]
		for d in $cg; do rmdir "$d"; done
	fi

	echo "# ---- $ID: environment ----"
	ENVX=(AWS_SECRET_ACCESS_KEY=xyz-SECRET-10 AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE
		GITHUB_TOKEN=ghp_SECRET11abcdefghijklmnopqrstuvwxyz0 OPENAI_API_KEY=sk-SECRET-12abcdefghijklmnop
		aws_secret_access_key=lower-SECRET-13 PGPASSWORD=pg-SECRET-14
		"HTTPS_PROXY=http://user:proxy-SECRET-15@proxy.example:3128"
		"REDIS_URL=redis://:redis-SECRET-16@cache.example:6379/0"
		MY_SETTING=ghp_SECRET17abcdefghijklmnopqrstuvwxyz ANTHROPIC_API_KEY=sk-ant-SECRET-18xyz
		LC_SECRET_TOKEN=lc-SECRET-19 HARMLESS_VAR=visible)
	m --env full -- sh -c 'env > env-full.out; cat /proc/self/environ | tr "\0" "\n" >> env-full.out' >/dev/null 2>&1
	m -- sh -c 'env > env-r.out' >/dev/null 2>&1
	ENVX=()
	check "$ID: --env full passes harmless variables (control)" grep -q '^HARMLESS_VAR=visible$' "$WS/env-full.out"
	noleak "secret variables are absent inside with --env full (names and values)" "$(cat "$WS/env-full.out")"
	noleak "secret variables are absent inside with the default environment" "$(cat "$WS/env-r.out")"
	rm -f "$WS/env-full.out" "$WS/env-r.out"

	echo "# ---- $ID: --tmp-workspace cleanup with planted symlinks ----"
	out_case "removing a temporary workspace does not follow links planted in it" -- m --tmp-workspace -- sh -c \
		"ln -s '$OUT' l; ln -s '$OUT/canary' c; mkdir -p d/e; ln -s '$OUT' d/e/x; ln -s '$OUT/sub' d/s; ln -s / root"

	echo "# ---- $ID: user namespaces unavailable (MOAT_FAKE_NO_USERNS=1) ----"
	ENVX=(MOAT_FAKE_NO_USERNS=1)
	rm -f "$WS/ran"
	m -- sh -c 'echo ran > ran' >/dev/null 2>"$T/err"
	rc=$?
	checke "$ID: refuses by default (exit $rc, want 125) and the command did not run" '[ $rc = 125 ] && [ ! -e "$WS/ran" ]'
	MODE=(--fallback warn)
	out_case "(no userns, warn) writes outside, via symlinks, /proc/self/root, renames" -- m -- sh -c \
		"echo x > '$OUT/canary'; echo x > '$OUT/new'; ln -s '$OUT' l; echo x > l/new2; echo x > /proc/self/root$OUT/new3; mv '$OUT/canary' .; ln '$OUT/canary' h"
	rm -f "$WS/l" "$WS/h"
	# without a mount namespace the tree cannot be made read-only: modes,
	# times and xattrs of the user's own files outside can change, which
	# moat must say (the "metadata" gap); setuid and setgid bits never
	reset_out
	m -- sh -c "chmod 4777 '$OUT/canary'; chmod 2777 '$OUT/canary'" >/dev/null 2>"$T/err"
	checke "$ID: (no userns, warn) setuid and setgid bits cannot be set outside" \
		'[ ! -u "$OUT/canary" ] && [ ! -g "$OUT/canary" ]'
	checke "$ID: (no userns, warn) the metadata gap is reported" 'grep -q "metadata" "$T/err"'
	ENVX=(MOAT_FAKE_NO_USERNS=1 GITHUB_TOKEN=ghp_SECRET20abcdefghijklmnopqrstuvwxyz0 AWS_SECRET_ACCESS_KEY=x-SECRET-21)
	out=$(m --env full -- sh -c "env; cat ~/.ssh/id_rsa ~/.aws/credentials /proc/$VPID/environ" 2>&1)
	ENVX=(MOAT_FAKE_NO_USERNS=1)
	noleak "(no userns, warn) secret variables, ~/.ssh, ~/.aws and host /proc/PID/environ stay unreadable" "$out"
	local mark=/tmp/moat-esc-$$.$ID.nous
	m -- sh -c "echo x > $mark; echo x > /dev/shm/moat-esc-$$.$ID.nous" >/dev/null 2>&1
	checke "$ID: (no userns, warn) nothing lands in the host's /tmp or /dev/shm" \
		'[ ! -e "$mark" ] && [ ! -e "/dev/shm/moat-esc-$$.$ID.nous" ]'
	rm -f "$mark" "/dev/shm/moat-esc-$$.$ID.nous"
	m -- sh -c "kill -TERM $VPID; kill -WINCH $VPID" >/dev/null 2>&1
	if [ -n "$ATTACK" ]; then
		m -- "$ATTACK" ptrace "$VPID" >/dev/null 2>&1
		m -- "$ATTACK" sigio "$VPID" >/dev/null 2>&1
	fi
	before=$(wc -l <"$NETLOG")
	out=$(m --net deny -- $(netclient) 2>&1)
	check "$ID: (no userns, warn) --net deny: no connection, datagram or netlink message reached the host" \
		[ "$(wc -l <"$NETLOG")" = "$before" ] || { echo "# $(tail -n +$((before + 1)) "$NETLOG" | tr '\n' ' ')"; }
	pg_run "$V/pg2.sig" "$T/pg2.out"
	sleep 0.2
	checke "$ID: (no userns, warn) kill by pid, kill(0), kill(-1), PRIO_PGRP, ptrace, SIGIO reach no host process" \
		'victim_ok && [ "$(cat "$T/pg2.out")" = alive ]'
	# ESCAPE (when written): without a PID namespace prlimit(2) on a host
	# process of the same user is not refused (Landlock has no hook for it)
	lim_before=$(cat "/proc/$lp/limits")
	m -- prlimit --pid "$lp" --nofile=3:3 --core=unlimited >/dev/null 2>&1
	check "$ID: (no userns, warn) prlimit cannot change a host process's limits" \
		[ "$lim_before" = "$(cat "/proc/$lp/limits")" ] || echo "#   /proc/$lp/limits changed from inside"
	# ... nor its priority, CPUs or scheduling class (setpriority,
	# sched_setaffinity, sched_setscheduler: no Landlock hook either)
	sched_before=$(awk '{print $19, $41}' "/proc/$lp/stat"; grep Cpus_allowed_list "/proc/$lp/status")
	m -- "$PY" -c "import os
for f in (lambda: os.setpriority(os.PRIO_PROCESS, $lp, 19), lambda: os.setpriority(os.PRIO_USER, 0, 19),
          lambda: os.sched_setaffinity($lp, {0}), lambda: os.sched_setscheduler($lp, os.SCHED_IDLE, os.sched_param(0))):
    try: f()
    except OSError: pass" >/dev/null 2>&1
	check "$ID: (no userns, warn) a host process's priority, CPUs and scheduling stay as they were" \
		[ "$sched_before" = "$(awk '{print $19, $41}' "/proc/$lp/stat"; grep Cpus_allowed_list "/proc/$lp/status")" ] ||
		echo "#   /proc/$lp/stat or status changed from inside"
	# ESCAPE (when written): without an IPC namespace the host's SysV
	# shared memory is readable and writable
	asid "$PY" "$T/shm.py" "$SHMKEY" create >/dev/null 2>&1
	out=$(m -- "$PY" "$T/shm.py" "$SHMKEY" attack 2>&1)
	noleak "(no userns, warn) SysV shared memory of the user: not readable" "$out"
	check "$ID: (no userns, warn) ... and not writable (its bytes, seen from outside)" shm_intact
	before=$(wc -l <"$NETLOG")
	out=$(m --net deny -- $(netclient) 2>&1)
	check "$ID: (no userns, warn) --net deny: nothing reached the host listeners" \
		[ "$(wc -l <"$NETLOG")" = "$before" ] || echo "# $(tail -n +$((before + 1)) "$NETLOG" | tr '\n' ' ')"
	m --timeout 2 -- sh -c "setsid sh -c 'trap \"\" TERM HUP; exec sleep 361.$tag' & nohup sleep 362.$tag >/dev/null 2>&1 & (sleep 363.$tag &) & sleep 100" >/dev/null 2>&1
	rc=$?
	sleep 0.5
	checke "$ID: (no userns, warn) --timeout kills setsid/nohup/double-forked children (exit $rc)" \
		'[ $rc = 124 ] && [ "$(pgrep -fc "36[123]\\.$tag" || true)" = 0 ]'
	MODE=()
	ENVX=()

	check "$ID: the victim survived everything, untraced and unsignalled" victim_ok
	kill -KILL "$VPID" "$lp" 2>/dev/null
	wait "$VPID" "$lp" 2>/dev/null
	ipcrm -M "$SHMKEY" 2>/dev/null
	rm -rf "$T"
	T=
}

# ---- controls: the listeners work from outside ----
before=$(wc -l <"$NETLOG")
$(netclient) >/dev/null 2>&1
sleep 0.3
for k in $LISTENING; do
	check "control: the $k listener is reachable from outside" [ "$(netcount "$k")" -ge 1 ]
done
: >"$NETLOG"

if [ "$(id -u)" = 0 ]; then
	suite root
	suite nobody
else
	suite "$(id -un)"
	skip "the nobody run needs root"
fi

echo "1..$n"
[ $failed = 0 ]
