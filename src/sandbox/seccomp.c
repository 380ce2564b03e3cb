/* seccomp: the plan's syscall rules (rows in src/core/plan.c) compiled with
 * libseccomp, in the parent, to a BPF program the child loads with one
 * syscall. Compiling once in the parent keeps libseccomp's allocations and
 * its cost out of the window between clone and exec.
 *
 * Default action ALLOW, listed calls fail with their errno (EPERM, or ENOSYS
 * where a fallback exists); calls from other architectures (i386 int 0x80,
 * x32) fail with EPERM through the bad-architecture action. This file must
 * never turn a rule it cannot express into nothing: an unknown syscall name
 * is skipped only when the running architecture does not have it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/str.h"
#include "sandbox/sandbox.h"
#include "sandbox/seccomp_bpf.h"

/* Syscalls newer than the libseccomp we may be built against, by number
 * on x86_64 (skipped elsewhere). */
static const struct {
	const char *name;
	int nr;
} newer_x86_64[] = {
    {"open_tree_attr", 467},
    {"fchmodat2", 452},
};

static int resolve(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr != __NR_SCMP_ERROR)
		return nr;
#if defined(__x86_64__)
	for (size_t i = 0; i < sizeof(newer_x86_64) / sizeof(newer_x86_64[0]); i++)
		if (!strcmp(newer_x86_64[i].name, name))
			return newer_x86_64[i].nr;
#endif
	return __NR_SCMP_ERROR;
}

/* One comparison of a row: into c[*n] (a row's "any of these bits" is one
 * rule per bit: bit >= 0 picks that bit). */
static void row_cmp(enum moat_sc_cmp cmp, unsigned arg, uint64_t value, uint64_t mask, int bit,
		    struct scmp_arg_cmp *c, unsigned *n)
{
	switch (cmp) {
	case MOAT_SC_ALWAYS:
		return;
	case MOAT_SC_ARG_EQ:
		c[(*n)++] = SCMP_CMP64(arg, SCMP_CMP_MASKED_EQ, 0xffffffffULL, value);
		return;
	case MOAT_SC_ARG_NE:
		c[(*n)++] = SCMP_CMP32(arg, SCMP_CMP_NE, (uint32_t)value);
		return;
	case MOAT_SC_ARG_GE:
		c[(*n)++] = SCMP_CMP32(arg, SCMP_CMP_GE, (uint32_t)value);
		return;
	case MOAT_SC_ARG_LE:
		c[(*n)++] = SCMP_CMP32(arg, SCMP_CMP_LE, (uint32_t)value);
		return;
	case MOAT_SC_ARG_NOT_HAS:
		c[(*n)++] = SCMP_CMP64(arg, SCMP_CMP_MASKED_EQ, value, 0);
		return;
	case MOAT_SC_ARG_IN: /* a block of numbers: (arg & mask) == value, low 32 bits */
		c[(*n)++] = SCMP_CMP64(arg, SCMP_CMP_MASKED_EQ, mask & 0xffffffffULL, value);
		return;
	case MOAT_SC_ARG_HAS:
		c[(*n)++] = SCMP_CMP64(arg, SCMP_CMP_MASKED_EQ, 1ULL << bit, 1ULL << bit);
		return;
	}
}

static int add_row(scmp_filter_ctx ctx, const struct moat_sc_rule *row, struct moat_error *err)
{
	int nr = resolve(row->syscall);
	uint32_t action = row->err ? SCMP_ACT_ERRNO((uint32_t)row->err) : SCMP_ACT_LOG;
	int r = 0;

	if (nr == __NR_SCMP_ERROR || nr < 0)
		return 0; /* not a syscall on this architecture (a pseudo number) */
	/* "any of these bits": one rule per bit (a masked compare tests all);
	 * only the first comparison may be one (the second never is) */
	for (int bit = 0; bit < 32 && r == 0; bit++) {
		struct scmp_arg_cmp c[2];
		unsigned n = 0;

		if (row->cmp == MOAT_SC_ARG_HAS && !(row->value & (1ULL << bit)))
			continue;
		row_cmp(row->cmp, row->arg, row->value, row->mask, bit, c, &n);
		row_cmp(row->cmp2 == MOAT_SC_ARG_HAS ? MOAT_SC_ALWAYS : row->cmp2, row->arg2,
			row->value2, row->mask2, 0, c, &n);
		r = seccomp_rule_add_exact_array(ctx, action, nr, n, c);
		if (row->cmp != MOAT_SC_ARG_HAS)
			break;
	}
	if (r < 0)
		moat_error_set(err, "seccomp: cannot add the rule for %s: %s", row->syscall,
			       strerror(-r));
	return r;
}

static int build_ctx(unsigned variant, scmp_filter_ctx *ret, struct moat_error *err)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r;

	if (!ctx) {
		moat_error_set(err, "seccomp: cannot create a filter");
		return -ENOMEM;
	}
	/* SECURITY: syscalls of any other architecture (i386 via int 0x80, x32)
	 * fail: the rows below are checked against native numbers only */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0); /* we set it ourselves */
	/* a binary tree of syscall numbers: fewer instructions per call */
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (r < 0) {
		moat_error_set(err, "seccomp: cannot set filter attributes: %s", strerror(-r));
		seccomp_release(ctx);
		return r;
	}
	for (size_t i = 0; moat_seccomp_rules[i].syscall && r == 0; i++)
		r = add_row(ctx, &moat_seccomp_rules[i], err);
	for (size_t i = 0;
	     (variant & MOAT_SC_NO_INET) && moat_seccomp_rules_no_inet[i].syscall && r == 0; i++)
		r = add_row(ctx, &moat_seccomp_rules_no_inet[i], err);
	for (size_t i = 0;
	     (variant & MOAT_SC_NO_UNIX) && moat_seccomp_rules_no_unix[i].syscall && r == 0; i++)
		r = add_row(ctx, &moat_seccomp_rules_no_unix[i], err);
	for (size_t i = 0;
	     (variant & MOAT_SC_NO_NS) && moat_seccomp_rules_no_ns[i].syscall && r == 0; i++)
		r = add_row(ctx, &moat_seccomp_rules_no_ns[i], err);
	for (size_t i = 0;
	     (variant & MOAT_SC_PORTS) && moat_seccomp_rules_ports[i].syscall && r == 0; i++)
		r = add_row(ctx, &moat_seccomp_rules_ports[i], err);
	if (r < 0) {
		seccomp_release(ctx);
		return r;
	}
	*ret = ctx;
	return 0;
}

int moat_seccomp_export_pfc(unsigned variant, int fd, struct moat_error *err)
{
	scmp_filter_ctx ctx;
	int r = build_ctx(variant, &ctx, err);

	if (r < 0)
		return r;
	r = seccomp_export_pfc(ctx, fd);
	seccomp_release(ctx);
	if (r < 0)
		moat_error_set(err, "seccomp: cannot export the filter: %s", strerror(-r));
	return r;
}

int moat_seccomp_compile_fresh(unsigned variant, struct moat_bpf *ret, struct moat_error *err)
{
	int r = moat_seccomp_compile_libseccomp(variant, ret, err);

	/* shorter for the kernel to convert and compile at every load (a
	 * program it cannot shorten stays as libseccomp wrote it) */
	if (r == 0)
		(void)moat_bpf_optimize(ret->insns, &ret->len);
	return r;
}

int moat_seccomp_compile_libseccomp(unsigned variant, struct moat_bpf *ret,
				    struct moat_error *err)
{
	scmp_filter_ctx ctx;
	int pfd[2], r;
	/* BPF_MAXINSNS bounds a filter: 4096 instructions of 8 bytes */
	struct sock_filter *buf;
	size_t got = 0;

	memset(ret, 0, sizeof(*ret));
	r = build_ctx(variant, &ctx, err);
	if (r < 0)
		return r;
	buf = malloc(BPF_MAXINSNS * sizeof(*buf));
	if (!buf) {
		seccomp_release(ctx);
		return -ENOMEM;
	}
	/* libseccomp 2.5 exports only to a descriptor: a pipe holds a whole
	 * filter (at most 32 KiB, the default pipe buffer is 64 KiB) */
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		r = -errno;
		goto out;
	}
	r = seccomp_export_bpf(ctx, pfd[1]);
	close(pfd[1]);
	if (r == 0) {
		for (;;) {
			ssize_t n =
			    read(pfd[0], (char *)buf + got, BPF_MAXINSNS * sizeof(*buf) - got);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
			if (got == BPF_MAXINSNS * sizeof(*buf))
				break;
		}
	}
	close(pfd[0]);
	if (r == 0 && (got == 0 || got % sizeof(*buf)))
		r = -EIO;
out:
	seccomp_release(ctx);
	if (r < 0) {
		free(buf);
		moat_error_set(err, "seccomp: cannot compile the filter: %s", strerror(-r));
		return r;
	}
	ret->insns = buf;
	ret->len = (unsigned short)(got / sizeof(*buf));
	ret->owned = true;
	return 0;
}

int moat_seccomp_compile(const struct moat_plan *p, struct moat_bpf *ret, struct moat_error *err)
{
	memset(ret, 0, sizeof(*ret));
	if (!p->seccomp)
		return 0;
#if defined(__x86_64__)
	/* the filter compiled at development time from the same rows (the
	 * unit test proves it matches libseccomp's output): no compile cost
	 * per call */
	{
		unsigned v = moat_plan_seccomp_variant(p);

		ret->insns = (void *)moat_bpf_x86_64[v].insns;
		ret->len = moat_bpf_x86_64[v].len;
		ret->owned = false;
		return 0;
	}
#else
	return moat_seccomp_compile_fresh(moat_plan_seccomp_variant(p), ret, err);
#endif
}

static int print_array(FILE *out, const char *name, unsigned variant, struct moat_error *err)
{
	struct moat_bpf b;
	const struct sock_filter *f;
	int r = moat_seccomp_compile_fresh(variant, &b, err);

	if (r < 0)
		return r;
	f = b.insns;
	fprintf(out, "static const struct sock_filter %s[%u] = {\n", name, b.len);
	for (unsigned i = 0; i < b.len; i++)
		fprintf(out, "\t{0x%04x, %u, %u, 0x%08x},\n", f[i].code, f[i].jt, f[i].jf, f[i].k);
	fprintf(out, "};\n");
	moat_bpf_release(&b);
	return 0;
}

int moat_seccomp_write_header(FILE *out, struct moat_error *err)
{
	const struct scmp_version *v = seccomp_version();
	int r;

	fprintf(out,
		"/* GENERATED by tests/unit/test_seccomp_filter --regen from the rows in\n"
		" * src/core/plan.c with libseccomp %u.%u.%u on x86_64: the sandbox loads\n"
		" * these instead of compiling per call. Do not edit; the unit test fails\n"
		" * when they no longer match the rows. */\n"
		"#ifndef MOAT_SANDBOX_SECCOMP_BPF_H\n#define MOAT_SANDBOX_SECCOMP_BPF_H\n\n"
		"#include <linux/filter.h>\n\n"
		"#define MOAT_BPF_LIBSECCOMP_VERSION \"%u.%u.%u\"\n\n",
		v->major, v->minor, v->micro, v->major, v->minor, v->micro);
	r = 0;
	for (unsigned k = 0; k < MOAT_SC_VARIANTS && r == 0; k++) {
		char name[64];

		snprintf(name, sizeof(name), "moat_bpf_x86_64_v%u", k);
		r = print_array(out, name, k, err);
		fputc('\n', out);
	}
	/* indexed by moat_plan_seccomp_variant */
	fprintf(out,
		"static const struct {\n\tconst struct sock_filter *insns;\n"
		"\tunsigned short len;\n} moat_bpf_x86_64[%u] = {\n",
		MOAT_SC_VARIANTS);
	for (unsigned k = 0; k < MOAT_SC_VARIANTS; k++)
		fprintf(out,
			"\t{moat_bpf_x86_64_v%u, sizeof(moat_bpf_x86_64_v%u) / "
			"sizeof(moat_bpf_x86_64_v%u[0])},\n",
			k, k, k);
	fprintf(out, "};\n\n#endif\n");
	return r;
}

int moat_seccomp_load(const struct moat_bpf *b)
{
	struct sock_fprog prog;

	if (!b->insns)
		return 0;
	prog.len = b->len;
	prog.filter = b->insns;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return -errno;
	return 0;
}

void moat_bpf_release(struct moat_bpf *b)
{
	if (b->owned)
		free(b->insns);
	b->owned = false;
	b->insns = NULL;
	b->len = 0;
}
