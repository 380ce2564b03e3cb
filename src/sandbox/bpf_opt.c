/* A peephole optimizer for the classic BPF programs libseccomp writes.
 *
 * The kernel converts and JIT-compiles a seccomp filter at every load, in
 * every sandbox's child, at a cost proportional to its length (about 0.3 us
 * per instruction here: 85 us for 284 instructions). libseccomp 2.5 spells
 * each masked argument test as three instructions (load, and, jeq), even
 * when the mask's upper half is zero and the test always holds, and loads
 * the same argument word again before every test. This pass rewrites:
 *
 *   and K; jeq K (K one bit)   ->  jset K
 *   and K; jeq 0               ->  jset K, branches swapped
 *   and 0; jeq 0 / jeq C       ->  ja to the branch always taken
 *   ld W where A already holds word W on every path   ->  removed
 *   ld W whose value no instruction reads              ->  removed
 *   a jump to a ja             ->  a jump to where the ja goes
 *
 * and compacts the program. A rewrite is made only where A (the
 * accumulator) is not read afterwards on any path, since jset leaves A
 * unmasked. It knows only the opcodes libseccomp emits for these filters
 * (ld word abs, and K, jeq/jgt/jge/jset K, ja, ret K): with any other the
 * program is left as it was. A round whose jump threading would need a
 * conditional jump longer than classic BPF's 255 is done again without
 * threading; one that still cannot be encoded ends the rounds (what the
 * earlier ones did stays).
 * tests/unit/test_seccomp_filter.c runs both programs in an interpreter over
 * every syscall number of three architectures with argument values that
 * cover every bit, and requires identical answers. */
#include <errno.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox.h"

#define OP_LD_ABS (BPF_LD | BPF_W | BPF_ABS)
#define OP_AND_K (BPF_ALU | BPF_AND | BPF_K)
#define OP_JA (BPF_JMP | BPF_JA)
#define OP_JEQ (BPF_JMP | BPF_JEQ | BPF_K)
#define OP_JGT (BPF_JMP | BPF_JGT | BPF_K)
#define OP_JGE (BPF_JMP | BPF_JGE | BPF_K)
#define OP_JSET (BPF_JMP | BPF_JSET | BPF_K)
#define OP_RET_K (BPF_RET | BPF_K)

#define A_UNKNOWN UINT32_MAX

struct opt {
	struct sock_filter *f;
	unsigned n;
	bool *dead;	  /* removed: a no-op, or forwarded (fwd) */
	unsigned *fwd;	  /* a removed ja: where it went */
	bool *live;	  /* A is read at or after this instruction (before a load) */
	uint32_t *a_in;	  /* the word A holds on entry on every path, or A_UNKNOWN */
	unsigned *npred;  /* predecessors */
	unsigned *newpos; /* index after compaction */
	bool no_thread;	  /* keep every ja (a round redone: threading went too far) */
};

static bool is_cond(uint16_t code)
{
	return code == OP_JEQ || code == OP_JGT || code == OP_JGE || code == OP_JSET;
}

static bool known(uint16_t code)
{
	return code == OP_LD_ABS || code == OP_AND_K || code == OP_JA || is_cond(code) ||
	       code == OP_RET_K;
}

/* Successors of i: up to two; their count. */
static unsigned succ(const struct opt *o, unsigned i, unsigned out[2])
{
	const struct sock_filter *x = &o->f[i];

	if (x->code == OP_RET_K)
		return 0;
	if (x->code == OP_JA) {
		out[0] = i + 1 + x->k;
		return 1;
	}
	if (is_cond(x->code)) {
		out[0] = i + 1 + x->jt;
		out[1] = i + 1 + x->jf;
		return out[0] == out[1] ? 1 : 2;
	}
	out[0] = i + 1;
	return 1;
}

/* Every jump lands inside the program; the last instruction returns. */
static bool well_formed(const struct opt *o)
{
	for (unsigned i = 0; i < o->n; i++) {
		unsigned s[2], ns;

		if (!known(o->f[i].code))
			return false;
		/* a load inside struct seccomp_data (64 bytes), word-aligned,
		 * as the kernel requires: never one of A_UNKNOWN's markers */
		if (o->f[i].code == OP_LD_ABS && (o->f[i].k >= 64 || (o->f[i].k & 3)))
			return false;
		if (o->f[i].code == OP_JA && o->f[i].k >= o->n)
			return false;
		ns = succ(o, i, s);
		for (unsigned k = 0; k < ns; k++)
			if (s[k] >= o->n)
				return false;
	}
	return o->n > 0;
}

/* Predecessor counts, A's liveness (backwards) and A's known word
 * (forwards) for the live instructions; jumps only go forward. */
static void analyse(struct opt *o)
{
	memset(o->npred, 0, o->n * sizeof(*o->npred));
	for (unsigned i = 0; i < o->n; i++) {
		unsigned s[2], ns = succ(o, i, s);

		for (unsigned k = 0; k < ns; k++)
			o->npred[s[k]]++;
	}
	for (unsigned i = o->n; i-- > 0;) {
		const struct sock_filter *x = &o->f[i];
		unsigned s[2], ns = succ(o, i, s);
		bool out = false;

		for (unsigned k = 0; k < ns; k++)
			out = out || o->live[s[k]];
		if (x->code == OP_LD_ABS)
			o->live[i] = false; /* defines A, reads nothing */
		else if (x->code == OP_AND_K || is_cond(x->code))
			o->live[i] = true; /* reads A */
		else
			o->live[i] = x->code == OP_JA ? out : false; /* ret K reads nothing */
	}
	for (unsigned i = 0; i < o->n; i++)
		o->a_in[i] = A_UNKNOWN - 1; /* not reached yet */
	o->a_in[0] = A_UNKNOWN;
	for (unsigned i = 0; i < o->n; i++) {
		const struct sock_filter *x = &o->f[i];
		unsigned s[2], ns = succ(o, i, s);
		uint32_t out = o->a_in[i];

		if (x->code == OP_LD_ABS)
			out = x->k;
		else if (x->code == OP_AND_K)
			out = A_UNKNOWN;
		for (unsigned k = 0; k < ns; k++) {
			uint32_t *in = &o->a_in[s[k]];

			if (*in == A_UNKNOWN - 1)
				*in = out;
			else if (*in != out)
				*in = A_UNKNOWN;
		}
	}
}

static bool single_bit(uint32_t k)
{
	return k && !(k & (k - 1));
}

/* Instruction i becomes a no-op (ja 0), removed at compaction. */
static void nop(struct opt *o, unsigned i)
{
	o->f[i].code = OP_JA;
	o->f[i].k = 0;
	o->f[i].jt = o->f[i].jf = 0;
	o->dead[i] = true;
	o->fwd[i] = i + 1;
}

/* One round of rewrites on the uncompacted program: true when it changed. */
static bool rewrite(struct opt *o)
{
	bool changed = false;

	analyse(o);
	for (unsigned i = 0; i + 1 < o->n; i++) {
		struct sock_filter *x = &o->f[i], *y = &o->f[i + 1];
		unsigned t, e;

		/* and K; jeq C -> jset / ja, when the jeq is reached only from
		 * the and and A is read on neither branch */
		if (x->code != OP_AND_K || y->code != OP_JEQ || o->npred[i + 1] != 1)
			continue;
		t = i + 2 + y->jt;
		e = i + 2 + y->jf;
		if (o->live[t] || o->live[e])
			continue;
		if (x->k == 0) {
			unsigned to = y->k == 0 ? t : e;

			/* and 0; jeq 0 holds always, and 0; jeq C never */
			x->code = OP_JA;
			x->k = to - (i + 1);
			x->jt = x->jf = 0;
		} else if (y->k == 0) {
			/* (A & K) == 0: no bit of K set */
			if (t - (i + 1) > 255 || e - (i + 1) > 255)
				continue;
			x->code = OP_JSET;
			x->jt = (uint8_t)(e - (i + 1));
			x->jf = (uint8_t)(t - (i + 1));
		} else if (y->k == x->k && single_bit(x->k)) {
			if (t - (i + 1) > 255 || e - (i + 1) > 255)
				continue;
			x->code = OP_JSET;
			x->jt = (uint8_t)(t - (i + 1));
			x->jf = (uint8_t)(e - (i + 1));
		} else {
			continue;
		}
		/* the jeq is now unreachable: a no-op until compaction */
		nop(o, i + 1);
		changed = true;
	}
	/* a load of the word A holds on every path (A unchanged: the other
	 * answers of this pass stay true) */
	analyse(o);
	for (unsigned i = 0; i + 1 < o->n; i++) {
		const struct sock_filter *x = &o->f[i];

		if (o->dead[i] || x->code != OP_LD_ABS || o->a_in[i] != x->k)
			continue;
		nop(o, i);
		changed = true;
	}
	/* a load whose value is never read (after the pass above, and looked
	 * at again: a load kept there may feed a removed one's readers) */
	analyse(o);
	for (unsigned i = 0; i + 1 < o->n; i++) {
		const struct sock_filter *x = &o->f[i];

		if (o->dead[i] || x->code != OP_LD_ABS || o->live[i + 1])
			continue;
		nop(o, i);
		changed = true;
	}
	/* a ja is a detour: jumps to it go where it goes (compact keeps the
	 * ones something falls into) */
	for (unsigned i = 0; changed && !o->no_thread && i < o->n; i++) {
		if (o->f[i].code == OP_JA && !o->dead[i]) {
			o->dead[i] = true;
			o->fwd[i] = i + 1 + o->f[i].k;
		}
	}
	return changed;
}

static unsigned resolve(const struct opt *o, unsigned i)
{
	while (i < o->n && o->dead[i])
		i = o->fwd[i];
	return i;
}

/* Remove the dead instructions. A removed ja that something falls into
 * without a jump (a load before it) stays. False when a jump cannot be
 * encoded (then nothing was changed). */
static bool compact(struct opt *o)
{
	unsigned m = 0;
	struct sock_filter *g;

	/* a forwarded ja that a load or an and falls into (after no-ops)
	 * stays; so does one at the entry */
	for (unsigned i = 0; i < o->n; i++) {
		unsigned j = i + 1;

		if (o->dead[i] || (o->f[i].code != OP_LD_ABS && o->f[i].code != OP_AND_K))
			continue;
		while (j < o->n && o->dead[j] && o->fwd[j] == j + 1)
			j++;
		if (j < o->n && o->dead[j])
			o->dead[j] = false;
	}
	{
		unsigned j = 0;

		while (j < o->n && o->dead[j] && o->fwd[j] == j + 1)
			j++;
		if (j < o->n && o->dead[j])
			o->dead[j] = false;
	}
	for (unsigned i = 0; i < o->n; i++)
		o->newpos[i] = o->dead[i] ? UINT32_MAX : m++;
	g = calloc(m ? m : 1, sizeof(*g));
	if (!g)
		return false;
	for (unsigned i = 0; i < o->n; i++) {
		struct sock_filter x = o->f[i];
		unsigned me = o->newpos[i];

		if (o->dead[i])
			continue;
		if (x.code == OP_JA) {
			unsigned to = resolve(o, i + 1 + x.k);

			if (to >= o->n)
				goto bad;
			x.k = o->newpos[to] - me - 1;
		} else if (is_cond(x.code)) {
			unsigned t = resolve(o, i + 1 + x.jt), e = resolve(o, i + 1 + x.jf);

			if (t >= o->n || e >= o->n || o->newpos[t] - me - 1 > 255 ||
			    o->newpos[e] - me - 1 > 255)
				goto bad;
			x.jt = (uint8_t)(o->newpos[t] - me - 1);
			x.jf = (uint8_t)(o->newpos[e] - me - 1);
		} else if (x.code != OP_RET_K) {
			/* falls through: what it went to must come next */
			unsigned to = resolve(o, i + 1);

			if (to >= o->n || o->newpos[to] != me + 1)
				goto bad;
		}
		g[me] = x;
	}
	memcpy(o->f, g, m * sizeof(*g));
	o->n = m;
	free(g);
	return true;
bad:
	free(g);
	return false;
}

int moat_bpf_optimize(void *program, unsigned short *len)
{
	struct sock_filter *prog = program;
	struct opt o = {.f = NULL};
	struct sock_filter *work, *best;
	unsigned n = *len, best_n = 0;

	if (n == 0)
		return 0;
	work = malloc(n * sizeof(*work));
	best = malloc(n * sizeof(*best));
	o.dead = calloc(n, sizeof(*o.dead));
	o.fwd = calloc(n, sizeof(*o.fwd));
	o.live = calloc(n, sizeof(*o.live));
	o.a_in = calloc(n, sizeof(*o.a_in));
	o.npred = calloc(n, sizeof(*o.npred));
	o.newpos = calloc(n, sizeof(*o.newpos));
	if (!work || !best || !o.dead || !o.fwd || !o.live || !o.a_in || !o.npred || !o.newpos)
		goto out; /* unchanged */
	memcpy(work, prog, n * sizeof(*work));
	o.f = work;
	o.n = n;
	if (!well_formed(&o))
		goto out; /* not ours to rewrite: unchanged */
	/* each round that compacts to a well-formed program is kept; a round
	 * that cannot (a jump too far to encode) ends with the last kept */
	for (int round = 0; round < 8; round++) {
		memset(o.dead, 0, o.n * sizeof(*o.dead));
		if (!rewrite(&o))
			break;
		if (!compact(&o) || !well_formed(&o)) {
			/* again from this round's start, every ja kept */
			if (o.no_thread)
				break;
			o.no_thread = true;
			if (best_n)
				memcpy(work, best, best_n * sizeof(*work));
			else
				memcpy(work, prog, n * sizeof(*work));
			o.n = best_n ? best_n : n;
			memset(o.dead, 0, o.n * sizeof(*o.dead));
			if (!rewrite(&o) || !compact(&o) || !well_formed(&o))
				break;
		}
		memcpy(best, work, o.n * sizeof(*work));
		best_n = o.n;
	}
	if (best_n) {
		memcpy(prog, best, best_n * sizeof(*best));
		*len = (unsigned short)best_n;
	}
out:
	free(work);
	free(best);
	free(o.dead);
	free(o.fwd);
	free(o.live);
	free(o.a_in);
	free(o.npred);
	free(o.newpos);
	return 0;
}
