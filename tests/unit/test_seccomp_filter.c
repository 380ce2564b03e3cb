/* The seccomp filter, tested without loading it:
 *  - golden: libseccomp's pseudo filter code equals tests/unit/seccomp_golden.pfc
 *    (with another libseccomp version: every required syscall is present);
 *  - semantics: the BPF program is run in a small interpreter for the calls
 *    that must fail (and the ones that must not), including argument tricks
 *    (high bits of ioctl commands, clone flags) and other architectures;
 *  - the precompiled filter (src/sandbox/seccomp_bpf.h) behaves exactly as
 *    a fresh libseccomp compile of the same rows.
 *
 * Regenerate: test_seccomp_filter --regen > src/sandbox/seccomp_bpf.h
 *             test_seccomp_filter --regen-pfc > tests/unit/seccomp_golden.pfc */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "sandbox/seccomp_bpf.h"
#include "tap.h"

/* ---- a classic BPF interpreter for seccomp programs ---- */

struct sdata {
	int nr;
	uint32_t arch;
	uint64_t ip;
	uint64_t args[6];
};

static uint32_t load_word(const struct sdata *d, uint32_t off, int *bad)
{
	uint8_t raw[sizeof(struct sdata)];
	uint32_t v;

	if (off + 4 > sizeof(raw) || off % 4) {
		*bad = 1;
		return 0;
	}
	memcpy(raw, d, sizeof(raw));
	memcpy(&v, raw + off, 4);
	return v;
}

/* Returns the seccomp action word; 0xdeadbeef for a malformed program. */
static uint32_t run_bpf(const struct sock_filter *f, unsigned len, const struct sdata *d)
{
	uint32_t A = 0, X = 0, M[16] = {0};
	int bad = 0;

	for (unsigned pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t k = i->k, src;

		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			if (BPF_MODE(i->code) == BPF_ABS)
				A = load_word(d, k, &bad);
			else if (BPF_MODE(i->code) == BPF_IMM)
				A = k;
			else if (BPF_MODE(i->code) == BPF_MEM && k < 16)
				A = M[k];
			else if (BPF_MODE(i->code) == BPF_LEN)
				A = sizeof(*d);
			else
				bad = 1;
			break;
		case BPF_LDX:
			if (BPF_MODE(i->code) == BPF_IMM)
				X = k;
			else if (BPF_MODE(i->code) == BPF_MEM && k < 16)
				X = M[k];
			else
				bad = 1;
			break;
		case BPF_ST:
			if (k < 16)
				M[k] = A;
			else
				bad = 1;
			break;
		case BPF_STX:
			if (k < 16)
				M[k] = X;
			else
				bad = 1;
			break;
		case BPF_ALU:
			src = BPF_SRC(i->code) == BPF_X ? X : k;
			switch (BPF_OP(i->code)) {
			case BPF_ADD:
				A += src;
				break;
			case BPF_SUB:
				A -= src;
				break;
			case BPF_AND:
				A &= src;
				break;
			case BPF_OR:
				A |= src;
				break;
			case BPF_XOR:
				A ^= src;
				break;
			case BPF_LSH:
				A <<= (src & 31);
				break;
			case BPF_RSH:
				A >>= (src & 31);
				break;
			case BPF_NEG:
				A = -A;
				break;
			case BPF_MUL:
				A *= src;
				break;
			default:
				bad = 1;
			}
			break;
		case BPF_JMP:
			src = BPF_SRC(i->code) == BPF_X ? X : k;
			switch (BPF_OP(i->code)) {
			case BPF_JA:
				pc += k;
				break;
			case BPF_JEQ:
				pc += (A == src) ? i->jt : i->jf;
				break;
			case BPF_JGT:
				pc += (A > src) ? i->jt : i->jf;
				break;
			case BPF_JGE:
				pc += (A >= src) ? i->jt : i->jf;
				break;
			case BPF_JSET:
				pc += (A & src) ? i->jt : i->jf;
				break;
			default:
				bad = 1;
			}
			break;
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? A : k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				X = A;
			else
				A = X;
			break;
		}
		if (bad)
			return 0xdeadbeef;
	}
	return 0xdeadbeef; /* fell off the end */
}

#define ALLOW SECCOMP_RET_ALLOW
#define LOG SECCOMP_RET_LOG
#define ERR(e) (SECCOMP_RET_ERRNO | (e))

static const struct sock_filter *g_f;
static unsigned g_len;

static uint32_t call(uint32_t arch, int nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
		     uint64_t a4)
{
	struct sdata d;

	memset(&d, 0, sizeof(d));
	d.nr = nr;
	d.arch = arch;
	d.args[0] = a0;
	d.args[1] = a1;
	d.args[2] = a2;
	d.args[3] = a3;
	d.args[4] = a4;
	return run_bpf(g_f, g_len, &d);
}

#define NR(name) seccomp_syscall_resolve_name(name)
#define X64 AUDIT_ARCH_X86_64

static void expect(const char *what, uint32_t got, uint32_t want)
{
	CHECKF(got == want, "%s: got 0x%08x want 0x%08x", what, got, want);
}

static void semantics(unsigned variant)
{
	bool no_inet = variant & MOAT_SC_NO_INET, no_unix = variant & MOAT_SC_NO_UNIX;
	bool no_ns = variant & MOAT_SC_NO_NS, ports = variant & MOAT_SC_PORTS;

	const struct moat_sc_rule *r;

	/* every ALWAYS row fails with its errno */
	for (r = moat_seccomp_rules; r->syscall; r++) {
		int nr = NR(r->syscall);

		if (r->cmp != MOAT_SC_ALWAYS || nr < 0)
			continue;
		expect(r->syscall, call(X64, nr, 0, 0, 0, 0, 0), ERR((uint32_t)r->err));
	}
	/* ordinary calls pass */
	expect("getpid", call(X64, NR("getpid"), 0, 0, 0, 0, 0), ALLOW);
	expect("openat", call(X64, NR("openat"), 0, 0, 0, 0, 0), ALLOW);
	expect("execve", call(X64, NR("execve"), 0, 0, 0, 0, 0), ALLOW);
	/* namespaces */
	expect("clone(SIGCHLD)", call(X64, NR("clone"), 0x11, 0, 0, 0, 0), ALLOW);
	expect("clone(thread)", call(X64, NR("clone"), 0x3d0f00, 0, 0, 0, 0), ALLOW);
	expect("clone(NEWUSER)", call(X64, NR("clone"), 0x10000000 | 0x11, 0, 0, 0, 0), ERR(EPERM));
	expect("clone(NEWNS)", call(X64, NR("clone"), 0x20000, 0, 0, 0, 0), ERR(EPERM));
	expect("clone(NEWNET)", call(X64, NR("clone"), 0x40000000, 0, 0, 0, 0), ERR(EPERM));
	expect("unshare(NEWUSER)", call(X64, NR("unshare"), 0x10000000, 0, 0, 0, 0), ERR(EPERM));
	expect("unshare(NEWTIME)", call(X64, NR("unshare"), 0x80, 0, 0, 0, 0), ERR(EPERM));
	expect("unshare(FILES)", call(X64, NR("unshare"), 0x400, 0, 0, 0, 0), ALLOW);
	expect("clone3", call(X64, NR("clone3"), 0, 0, 0, 0, 0), ERR(ENOSYS));
	/* terminal injection, including high bits the kernel ignores */
	expect("ioctl(TIOCSTI)", call(X64, NR("ioctl"), 0, 0x5412, 0, 0, 0), ERR(EPERM));
	expect("ioctl(TIOCSTI|1<<32)", call(X64, NR("ioctl"), 0, 0x100005412ULL, 0, 0, 0),
	       ERR(EPERM));
	expect("ioctl(TIOCLINUX)", call(X64, NR("ioctl"), 0, 0x541c, 0, 0, 0), ERR(EPERM));
	expect("ioctl(TCGETS)", call(X64, NR("ioctl"), 0, 0x5401, 0, 0, 0), ALLOW);
	/* personality */
	expect("personality(0)", call(X64, NR("personality"), 0, 0, 0, 0, 0), ALLOW);
	expect("personality(query)", call(X64, NR("personality"), 0xffffffff, 0, 0, 0, 0), LOG);
	expect("personality(LINUX32)", call(X64, NR("personality"), 8, 0, 0, 0, 0), ERR(EPERM));
	expect("personality(NO_RANDOMIZE)", call(X64, NR("personality"), 0x0040000, 0, 0, 0, 0),
	       ERR(EPERM));
	/* memfd and fexecve */
	expect("memfd_create(CLOEXEC)", call(X64, NR("memfd_create"), 0, 1, 0, 0, 0), ERR(ENOSYS));
	expect("memfd_create(NOEXEC_SEAL)", call(X64, NR("memfd_create"), 0, 9, 0, 0, 0), ALLOW);
	CHECKF(call(X64, NR("memfd_create"), 0, 0x10, 0, 0, 0) != ALLOW,
	       "memfd_create(MFD_EXEC) fails");
	expect("execveat(AT_EMPTY_PATH)", call(X64, NR("execveat"), 3, 0, 0, 0, 0x1000),
	       ERR(EPERM));
	expect("execveat(0)", call(X64, NR("execveat"), 3, 0, 0, 0, 0), ALLOW);
	/* architecture tricks: x32 numbers and i386 calls fail */
	expect("x32 getpid", call(X64, 0x40000000 | 39, 0, 0, 0, 0, 0), ERR(EPERM));
	expect("x32 ptrace", call(X64, 0x40000000 | 521, 0, 0, 0, 0, 0), ERR(EPERM));
	expect("i386 getpid", call(AUDIT_ARCH_I386, 20, 0, 0, 0, 0, 0), ERR(EPERM));
	expect("i386 ptrace", call(AUDIT_ARCH_I386, 26, 0, 0, 0, 0, 0), ERR(EPERM));
	/* sockets */
	if (no_inet) {
		expect("socket(AF_INET)", call(X64, NR("socket"), 2, 1, 0, 0, 0), ERR(EPERM));
		expect("socket(AF_INET6)", call(X64, NR("socket"), 10, 2, 0, 0, 0), ERR(EPERM));
		expect("socket(AF_PACKET)", call(X64, NR("socket"), 17, 3, 0, 0, 0), ERR(EPERM));
	} else {
		expect("socket(AF_INET) allowed", call(X64, NR("socket"), 2, 1, 0, 0, 0), ALLOW);
	}
	if (no_unix) {
		/* network denied: no unix socket reaches a host socket; the
		 * domain is compared on the low 32 bits, as the kernel reads it */
		expect("socket(AF_UNIX)", call(X64, NR("socket"), 1, 1, 0, 0, 0), ERR(EPERM));
		expect("socket(AF_UNIX|1<<32)", call(X64, NR("socket"), 0x100000001ULL, 1, 0, 0, 0),
		       ERR(EPERM));
		expect("socketpair(AF_UNIX)", call(X64, NR("socketpair"), 1, 1, 0, 0, 0), ALLOW);
		/* every type: only stream (1) and seqpacket (5) pairs, any flags */
		for (unsigned t = 0; t < 16; t++) {
			char what[64];

			snprintf(what, sizeof(what), "socketpair(AF_UNIX, %u|CLOEXEC|NONBLOCK)", t);
			expect(what, call(X64, NR("socketpair"), 1, t | 0x80800, 0, 0, 0),
			       t == 1 || t == 5 ? ALLOW : ERR(EPERM));
		}
	} else {
		expect("socket(AF_UNIX)", call(X64, NR("socket"), 1, 1, 0, 0, 0), ALLOW);
	}
	/* netlink: the routing protocol always; user-to-user messages never;
	 * the others where the network is not denied */
	expect("socket(AF_NETLINK, ROUTE)", call(X64, NR("socket"), 16, 3, 0, 0, 0), ALLOW);
	expect("socket(AF_NETLINK, USERSOCK)", call(X64, NR("socket"), 16, 3, 2, 0, 0), ERR(EPERM));
	expect("socket(AF_NETLINK, SOCK_DIAG)", call(X64, NR("socket"), 16, 3, 4, 0, 0),
	       no_inet ? ERR(EPERM) : ALLOW);
	expect("socket(AF_VSOCK)", call(X64, NR("socket"), 40, 1, 0, 0, 0), ERR(EPERM));
	/* the address families past IP, unix, netlink and crypto: refused with
	 * the network denied (no namespace) or limited to listed ports */
	expect("socket(AF_SMC)", call(X64, NR("socket"), 43, 1, 0, 0, 0),
	       no_inet || ports ? ERR(EPERM) : ALLOW);
	expect("socket(AF_TIPC)", call(X64, NR("socket"), 30, 5, 0, 0, 0),
	       no_inet || ports ? ERR(EPERM) : ALLOW);
	expect("socket(AF_ALG)", call(X64, NR("socket"), 38, 5, 0, 0, 0), ALLOW);
	/* every family, one by one: the allow-lists hold exactly these */
	for (unsigned fam = 0; fam < 64; fam++) {
		char what[48];
		bool in_ok = fam == 0 || fam == 1 || fam == 16 || fam == 38;
		bool ports_ok = in_ok || fam == 2 || fam == 10;
		uint32_t want = ALLOW;

		if (fam == 40 || (fam == 1 && no_unix) || (no_inet && !in_ok) || (ports && !ports_ok))
			want = ERR(EPERM);
		snprintf(what, sizeof(what), "socket(family %u)", fam);
		expect(what, call(X64, NR("socket"), fam, 1, 0, 0, 0), want);
	}
	/* listed ports: what Landlock's TCP rules do not see */
	expect("socket(AF_INET, MPTCP)", call(X64, NR("socket"), 2, 1, 262, 0, 0),
	       no_inet || ports ? ERR(EPERM) : ALLOW);
	expect("socket(AF_INET6, SCTP)", call(X64, NR("socket"), 10, 1, 132, 0, 0),
	       no_inet || ports ? ERR(EPERM) : ALLOW);
	/* listed ports: only TCP, UDP and ICMP protocols, only stream,
	 * datagram and raw types (SCTP is also SEQPACKET with protocol 0) */
	for (unsigned proto = 0; proto < 300; proto++) {
		char what[64];
		bool ok4 = proto < 18, ok6 = proto < 18 || proto == 58;

		snprintf(what, sizeof(what), "socket(AF_INET, STREAM, %u)", proto);
		expect(what, call(X64, NR("socket"), 2, 1, proto, 0, 0),
		       no_inet || (ports && !ok4) ? ERR(EPERM) : ALLOW);
		snprintf(what, sizeof(what), "socket(AF_INET6, STREAM, %u)", proto);
		expect(what, call(X64, NR("socket"), 10, 1, proto, 0, 0),
		       no_inet || (ports && !ok6) ? ERR(EPERM) : ALLOW);
	}
	for (unsigned type = 1; type < 16; type++) {
		char what[64];
		bool ok = type <= 3;

		snprintf(what, sizeof(what), "socket(AF_INET, type %u|NONBLOCK|CLOEXEC)", type);
		expect(what, call(X64, NR("socket"), 2, type | 0x80800, 0, 0, 0),
		       no_inet || (ports && !ok) ? ERR(EPERM) : ALLOW);
		snprintf(what, sizeof(what), "socket(AF_INET6, type %u)", type);
		expect(what, call(X64, NR("socket"), 10, type, 0, 0, 0),
		       no_inet || (ports && !ok) ? ERR(EPERM) : ALLOW);
	}
	if (!no_inet)
		expect("socket(AF_INET, TCP)", call(X64, NR("socket"), 2, 1, 6, 0, 0), ALLOW);
	expect("sendto(MSG_FASTOPEN)", call(X64, NR("sendto"), 3, 0, 0, 0x20000000, 0),
	       ports ? ERR(EPERM) : ALLOW);
	expect("sendmsg(MSG_FASTOPEN)", call(X64, NR("sendmsg"), 3, 0, 0x20000040, 0, 0),
	       ports ? ERR(EPERM) : ALLOW);
	expect("sendto(MSG_DONTWAIT)", call(X64, NR("sendto"), 3, 0, 0, 0x40, 0), ALLOW);
	/* a process group holds the caller's processes */
	expect("setpriority(PRIO_PGRP, 0)", call(X64, NR("setpriority"), 1, 0, 5, 0, 0), ERR(EPERM));
	expect("ioprio_set(IOPRIO_WHO_PGRP, 0)", call(X64, NR("ioprio_set"), 2, 0, 0, 0, 0),
	       ERR(EPERM));
	expect("setpriority(PRIO_PROCESS, 0)", call(X64, NR("setpriority"), 0, 0, 5, 0, 0), ALLOW);
	/* setuid and setgid bits; other modes pass */
	expect("chmod(04755)", call(X64, NR("chmod"), 0, 04755, 0, 0, 0), ERR(EPERM));
	expect("chmod(02755)", call(X64, NR("chmod"), 0, 02755, 0, 0, 0), ERR(EPERM));
	expect("chmod(0755)", call(X64, NR("chmod"), 0, 0755, 0, 0, 0), ALLOW);
	expect("chmod(01777)", call(X64, NR("chmod"), 0, 01777, 0, 0, 0), ALLOW);
	expect("fchmod(04755)", call(X64, NR("fchmod"), 3, 04755, 0, 0, 0), ERR(EPERM));
	expect("fchmod(0644)", call(X64, NR("fchmod"), 3, 0644, 0, 0, 0), ALLOW);
	expect("fchmodat(06755)", call(X64, NR("fchmodat"), 3, 0, 06755, 0, 0), ERR(EPERM));
	expect("fchmodat(0700)", call(X64, NR("fchmodat"), 3, 0, 0700, 0, 0), ALLOW);
	expect("fchmodat2(04755)", call(X64, 452, 3, 0, 04755, 0, 0), ERR(EPERM));
	expect("fchmodat2(0755)", call(X64, 452, 3, 0, 0755, 0, 0), ALLOW);
	/* without PID and IPC namespaces */
	expect("prlimit64(0)", call(X64, NR("prlimit64"), 0, 7, 0, 0, 0), ALLOW);
	if (no_ns) {
		expect("prlimit64(pid)", call(X64, NR("prlimit64"), 1234, 7, 0, 0, 0), ERR(EPERM));
		expect("shmget", call(X64, NR("shmget"), 0, 4096, 0, 0, 0), ERR(EPERM));
		expect("shmat", call(X64, NR("shmat"), 0, 0, 0, 0, 0), ERR(EPERM));
		expect("msgget", call(X64, NR("msgget"), 0, 0, 0, 0, 0), ERR(EPERM));
		expect("semget", call(X64, NR("semget"), 0, 1, 0, 0, 0), ERR(EPERM));
	} else {
		expect("prlimit64(pid)", call(X64, NR("prlimit64"), 1234, 7, 0, 0, 0), ALLOW);
		expect("shmget", call(X64, NR("shmget"), 0, 4096, 0, 0, 0), ALLOW);
	}
}

/* Same verdict for every syscall number and a set of argument vectors. */
static int equivalent(const struct sock_filter *a, unsigned alen, const struct sock_filter *b,
		      unsigned blen)
{
	static const uint64_t vals[] = {
	    0,	    1,	    8,	    0x10,    0x11,	 0x80,	     0x400,	 0x1000,
	    0x5401, 0x5412, 0x541c, 0x20000, 0x10000000, 0x40000000, 0xffffffff, 0x100005412ULL,
	    2,	    10,	    17,	     40,      04000,	 02000,	     0755,	 1234};
	static const uint32_t arches[] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, 0xc00000b7};
	struct sdata d;
	uint64_t bits[64 * 2];

	/* every single bit, alone and with its neighbour: the masked tests of
	 * the optimized program (jset) see what the and/jeq ones saw */
	for (int bit = 0; bit < 64; bit++) {
		bits[2 * bit] = 1ULL << bit;
		bits[2 * bit + 1] =
		    (1ULL << bit) | (bit ? 1ULL << (bit - 1) : 0x8000000000000000ULL);
	}
	for (size_t ai = 0; ai < MOAT_ARRAY_SIZE(arches); ai++) {
		for (int nr = 0; nr < 600; nr++) {
			for (size_t v = 0; v < MOAT_ARRAY_SIZE(bits); v++) {
				for (int arg = 0; arg < 6; arg++) {
					memset(&d, 0, sizeof(d));
					d.arch = arches[ai];
					d.nr = nr;
					d.args[arg] = bits[v];
					d.args[(arg + 1) % 6] = vals[v % MOAT_ARRAY_SIZE(vals)];
					if (run_bpf(a, alen, &d) != run_bpf(b, blen, &d))
						return 0;
				}
			}
		}
	}
	for (size_t ai = 0; ai < MOAT_ARRAY_SIZE(arches); ai++) {
		for (int nr = 0; nr < 600; nr++) {
			for (int x32 = 0; x32 < 2; x32++) {
				for (size_t v = 0; v < MOAT_ARRAY_SIZE(vals); v++) {
					memset(&d, 0, sizeof(d));
					d.arch = arches[ai];
					d.nr = nr | (x32 ? 0x40000000 : 0);
					for (int k = 0; k < 6; k++)
						d.args[k] =
						    vals[(v + (size_t)k) % MOAT_ARRAY_SIZE(vals)];
					if (run_bpf(a, alen, &d) != run_bpf(b, blen, &d))
						return 0;
				}
			}
		}
	}
	return 1;
}

static char *slurp_fd(int fd)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	ssize_t n;

	while (buf && (n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

static char *pfc_text(unsigned variant)
{
	FILE *t = tmpfile();
	struct moat_error err;
	char *s;

	if (!t)
		return NULL;
	moat_error_clear(&err);
	if (moat_seccomp_export_pfc(variant, fileno(t), &err) < 0) {
		fclose(t);
		return NULL;
	}
	lseek(fileno(t), 0, SEEK_SET);
	s = slurp_fd(fileno(t));
	fclose(t);
	return s;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;

	if (!f)
		return NULL;
	s = slurp_fd(fileno(f));
	fclose(f);
	return s;
}

int main(int argc, char **argv)
{
	struct moat_error err;
	struct moat_bpf fresh[MOAT_SC_VARIANTS];
	const struct scmp_version *v = seccomp_version();
	char ver[32], *pfc, *golden;

	moat_error_clear(&err);
	if (argc > 1 && !strcmp(argv[1], "--regen"))
		return moat_seccomp_write_header(stdout, &err) < 0;
	if (argc > 1 && !strcmp(argv[1], "--regen-pfc")) {
		pfc = pfc_text(0);
		if (!pfc)
			return 1;
		fputs(pfc, stdout);
		free(pfc);
		return 0;
	}
	snprintf(ver, sizeof(ver), "%u.%u.%u", v->major, v->minor, v->micro);

	/* a fresh compile of every variant, and its semantics; the optimized
	 * program (src/sandbox/bpf_opt.c) answers every call as libseccomp's
	 * own does, and is shorter */
	for (unsigned k = 0; k < MOAT_SC_VARIANTS; k++) {
		struct moat_bpf raw;

		CHECKF(moat_seccomp_compile_fresh(k, &fresh[k], &err) == 0, "variant %u compiles",
		       k);
		CHECK(fresh[k].len > 20 && fresh[k].len < BPF_MAXINSNS);
		g_f = fresh[k].insns;
		g_len = fresh[k].len;
		semantics(k);
		CHECKF(moat_seccomp_compile_libseccomp(k, &raw, &err) == 0,
		       "variant %u compiles unoptimized", k);
		g_f = raw.insns;
		g_len = raw.len;
		semantics(k);
		CHECKF(equivalent(fresh[k].insns, fresh[k].len, raw.insns, raw.len),
		       "variant %u: the optimized program (%u instructions) answers as "
		       "libseccomp's (%u)",
		       k, fresh[k].len, raw.len);
		CHECKF(fresh[k].len * 4 < raw.len * 3, "variant %u: optimized to %u of %u instructions",
		       k, fresh[k].len, raw.len);
		moat_bpf_release(&raw);
	}

#if defined(__x86_64__)
	/* the precompiled filters */
	for (unsigned k = 0; k < MOAT_SC_VARIANTS; k++) {
		g_f = moat_bpf_x86_64[k].insns;
		g_len = moat_bpf_x86_64[k].len;
		semantics(k);
		CHECKF(equivalent(moat_bpf_x86_64[k].insns, moat_bpf_x86_64[k].len, fresh[k].insns,
				  fresh[k].len),
		       "precompiled filter %u behaves as libseccomp %s compiles the rows now (else "
		       "run --regen)",
		       k, ver);
		if (!strcmp(ver, MOAT_BPF_LIBSECCOMP_VERSION))
			CHECKF(fresh[k].len == moat_bpf_x86_64[k].len &&
				   !memcmp(fresh[k].insns, moat_bpf_x86_64[k].insns,
					   fresh[k].len * sizeof(struct sock_filter)),
			       "precompiled filter %u is byte-identical with libseccomp %s", k,
			       ver);
	}
	{
		/* the plan for x86_64 uses the precompiled program of its variant */
		struct moat_plan p;
		struct moat_bpf b;

		memset(&p, 0, sizeof(p));
		p.seccomp = true;
		for (unsigned k = 0; k < MOAT_SC_VARIANTS; k++) {
			p.seccomp_no_inet = k & MOAT_SC_NO_INET;
			p.seccomp_no_unix = k & MOAT_SC_NO_UNIX;
			p.seccomp_no_ns = k & MOAT_SC_NO_NS;
			p.seccomp_ports = k & MOAT_SC_PORTS;
			CHECK(moat_plan_seccomp_variant(&p) == k);
			CHECK(moat_seccomp_compile(&p, &b, &err) == 0);
			/* (the header's arrays are static: compare the contents) */
			CHECK(!b.owned && b.len == moat_bpf_x86_64[k].len &&
			      !memcmp(b.insns, moat_bpf_x86_64[k].insns,
				      b.len * sizeof(struct sock_filter)));
			moat_bpf_release(&b);
		}
		p.seccomp = false;
		CHECK(moat_seccomp_compile(&p, &b, &err) == 0 && b.insns == NULL);
	}
#endif

	/* golden pseudo filter code */
	pfc = pfc_text(0);
	golden = read_file("unit/seccomp_golden.pfc");
	CHECK(pfc != NULL);
	CHECKF(golden != NULL, "tests/unit/seccomp_golden.pfc is readable");
	if (pfc && golden) {
		if (!strcmp(ver, "2.5.4")) {
			CHECKF(!strcmp(pfc, golden),
			       "filter matches seccomp_golden.pfc (regenerate with --regen-pfc "
			       "after a deliberate change)");
		} else {
			/* another libseccomp formats differently: require every row */
			for (const struct moat_sc_rule *r = moat_seccomp_rules; r->syscall; r++) {
				char needle[80];

				if (seccomp_syscall_resolve_name(r->syscall) < 0)
					continue;
				snprintf(needle, sizeof(needle), "\"%s\"", r->syscall);
				CHECKF(strstr(pfc, needle) != NULL, "pfc names %s", r->syscall);
			}
		}
		/* whatever the version: the filter names every required call */
		static const char *const required[] = {
		    "ptrace",
		    "process_vm_readv",
		    "process_vm_writev",
		    "keyctl",
		    "add_key",
		    "request_key",
		    "bpf",
		    "perf_event_open",
		    "userfaultfd",
		    "io_uring_setup",
		    "io_uring_enter",
		    "io_uring_register",
		    "kexec_load",
		    "kexec_file_load",
		    "init_module",
		    "finit_module",
		    "delete_module",
		    "mount",
		    "umount2",
		    "pivot_root",
		    "move_mount",
		    "open_tree",
		    "fsopen",
		    "fsmount",
		    "fsconfig",
		    "fspick",
		    "mount_setattr",
		    "setns",
		    "unshare",
		    "clone",
		    "clone3",
		    "personality",
		    "ioctl",
		    "open_by_handle_at",
		    "acct",
		    "swapon",
		    "swapoff",
		    "reboot",
		    "memfd_create",
		    "execveat",
		    NULL,
		};
		for (size_t i = 0; required[i]; i++) {
			char needle[80];

			snprintf(needle, sizeof(needle), "\"%s\"", required[i]);
			CHECKF(strstr(pfc, needle) != NULL, "filter covers %s", required[i]);
		}
		CHECKF(strstr(pfc, "invalid architecture action\naction ERRNO(1)") != NULL,
		       "other architectures get EPERM");
	}
	free(pfc);
	free(golden);
	for (unsigned k = 0; k < MOAT_SC_VARIANTS; k++)
		moat_bpf_release(&fresh[k]);
	return tap_done();
}
