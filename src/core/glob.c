/* Globs for paths and command text: compiler, matcher and an indexed,
 * ordered set of globs.
 *
 * Compiling parses the pattern once (syntax errors name a 1-based byte
 * position), expands its brace alternatives (bounded by
 * MOAT_GLOB_MAX_ALTERNATIVES), tokenizes every expansion and lays each out
 * as a linear run of NFA positions in one bitset. All runs are simulated at
 * once, Shift-And style: per subject character one shift, two mask lookups
 * and a short epsilon closure, so matching is O(len * states / 64), never
 * backtracks, never allocates and only reads the const compiled glob.
 *
 * Semantics are those of the expansions: a pattern matches when one of its
 * brace expansions matches. In path mode an expansion is split into
 * components at '/'; a component made only of two or more unescaped '*' is a
 * globstar and matches any number of whole components, zero included:
 *   "**" alone        .*
 *   "**" first, "**" + "/"   (empty | .*"/")
 *   "**" last,  "/" + "**"   (empty | "/".*)
 *   "**" between,  "/" + "**" + "/"   "/" (empty | .*"/")
 * Every other wildcard ('*', '?', a class) stops at '/'.
 *
 * Must never: allocate or write shared state while matching, print, do I/O,
 * or let a path wildcard other than a globstar match '/'. */
#include "core/glob.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

#define MAX_WORDS (MOAT_GLOB_MAX_STATES / 64)
#define NONASCII_SLOT 128
#define NSLOTS 129
/* a character that no literal and no class range can name */
#define CP_FOREIGN 0x110000u

_Static_assert(MOAT_GLOB_MAX_STATES % 64 == 0, "state limit must be whole words");
_Static_assert(MOAT_GLOB_MAX_PATTERN < MOAT_GLOB_MAX_STATES,
	       "every brace-free pattern of the maximum length must fit");

/* ---------------------------------------------------------------------------
 * Characters */

/* Decode one character. Invalid UTF-8 never fails: each bad byte becomes its
 * own character CP_FOREIGN + byte, outside Unicode, which only wildcards and
 * negated classes match. Requires n >= 1. */
static uint32_t utf8_next(const unsigned char *s, size_t n, size_t *adv)
{
	unsigned char c = s[0];
	uint32_t cp;
	size_t len;

	if (c < 0x80) {
		*adv = 1;
		return c;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		goto bad;
	}
	if (len > n)
		goto bad;
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			goto bad;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		goto bad;
	*adv = len;
	return cp;
bad:
	*adv = 1;
	return CP_FOREIGN + c;
}

static size_t utf8_put(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static int fail(struct moat_error *err, size_t at, const char *what)
{
	moat_error_set(err, "invalid glob: %s at position %zu", what, at + 1);
	return -EINVAL;
}

/* ---------------------------------------------------------------------------
 * Growable arrays (compile time only) */

static int grow(void *pp, size_t *cap, size_t need, size_t elsz)
{
	void **p = pp;
	size_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, ncap * elsz);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

struct range {
	uint32_t lo, hi;
};

struct rvec {
	struct range *v;
	size_t n, cap;
};

static int rvec_push(struct rvec *r, uint32_t lo, uint32_t hi)
{
	if (grow(&r->v, &r->cap, r->n + 1, sizeof(*r->v)) < 0)
		return -ENOMEM;
	r->v[r->n].lo = lo;
	r->v[r->n].hi = hi;
	r->n++;
	return 0;
}

/* ---------------------------------------------------------------------------
 * Character classes */

/* One class member at *i (an escape or a character); advances *i. */
static int class_char(const unsigned char *p, size_t n, size_t *i, uint32_t *ret,
		      struct moat_error *err)
{
	size_t adv;

	if (p[*i] == '\\') {
		if (*i + 1 >= n)
			return fail(err, *i, "trailing backslash");
		(*i)++;
	}
	*ret = utf8_next(p + *i, n - *i, &adv);
	*i += adv;
	return 0;
}

/* Parse the class opening at p[at] == '['. Appends its ranges to out (when
 * not NULL) and sets *ret_end to the index after the closing ']'. A ']' right
 * after '[' or '[!' is a member; '-' first or last is a member. */
static int class_parse(const unsigned char *p, size_t n, size_t at, size_t *ret_end,
		       struct rvec *out, bool *ret_neg, struct moat_error *err)
{
	size_t i = at + 1;
	bool neg = false, first = true;
	int r;

	if (i < n && (p[i] == '!' || p[i] == '^')) {
		neg = true;
		i++;
	}
	for (;;) {
		uint32_t lo, hi;

		if (i >= n)
			return fail(err, at, "unmatched '['");
		if (p[i] == ']' && !first)
			break;
		first = false;
		if (p[i] == '[' && i + 1 < n && p[i + 1] == ':')
			return fail(err, i,
				    "character class names such as [:alpha:] are not supported");
		r = class_char(p, n, &i, &lo, err);
		if (r < 0)
			return r;
		hi = lo;
		if (i + 1 < n && p[i] == '-' && p[i + 1] != ']') {
			size_t dash = i;

			i++;
			r = class_char(p, n, &i, &hi, err);
			if (r < 0)
				return r;
			if (hi < lo)
				return fail(err, dash, "range out of order in '[...]'");
		}
		if (out && rvec_push(out, lo, hi) < 0)
			return -ENOMEM;
	}
	*ret_end = i + 1;
	if (ret_neg)
		*ret_neg = neg;
	return 0;
}

/* ---------------------------------------------------------------------------
 * Brace structure: a tree of text spans, sequences and alternatives */

enum { N_TEXT, N_SEQ, N_ALT };

struct node {
	uint8_t kind;
	uint32_t pos, len; /* span (TEXT) or opening position (ALT) */
	int32_t child, tail, next;
	uint64_t count; /* number of expansions, at most MAX_ALTERNATIVES */
};

struct parser {
	const unsigned char *p;
	size_t n;
	struct node *nodes;
	size_t nnodes, cap;
	struct moat_error *err;
};

static int node_new(struct parser *ps, uint8_t kind, size_t pos, size_t len, int32_t *ret)
{
	struct node *nd;

	if (grow(&ps->nodes, &ps->cap, ps->nnodes + 1, sizeof(*ps->nodes)) < 0)
		return -ENOMEM;
	nd = &ps->nodes[ps->nnodes];
	nd->kind = kind;
	nd->pos = (uint32_t)pos;
	nd->len = (uint32_t)len;
	nd->child = nd->tail = nd->next = -1;
	nd->count = 1;
	*ret = (int32_t)ps->nnodes++;
	return 0;
}

static void node_append(struct parser *ps, int32_t parent, int32_t child)
{
	struct node *pa = &ps->nodes[parent];

	if (pa->tail < 0)
		pa->child = child;
	else
		ps->nodes[pa->tail].next = child;
	pa->tail = child;
}

static int add_text(struct parser *ps, int32_t seq, size_t from, size_t to)
{
	int32_t t;
	int r;

	if (to <= from)
		return 0;
	r = node_new(ps, N_TEXT, from, to - from, &t);
	if (r < 0)
		return r;
	node_append(ps, seq, t);
	return 0;
}

static int parse_alt(struct parser *ps, size_t *i, unsigned depth, int32_t *ret);

/* A sequence up to the end, or (inside braces) up to ',' or '}'. */
static int parse_seq(struct parser *ps, size_t *i, unsigned depth, int32_t *ret)
{
	const unsigned char *p = ps->p;
	size_t n = ps->n, text = *i, adv, end;
	int32_t seq, alt;
	int r;

	r = node_new(ps, N_SEQ, *i, 0, &seq);
	if (r < 0)
		return r;
	while (*i < n) {
		unsigned char c = p[*i];

		if (c == '\\') {
			if (*i + 1 >= n)
				return fail(ps->err, *i, "trailing backslash");
			utf8_next(p + *i + 1, n - *i - 1, &adv);
			*i += 1 + adv;
		} else if (c == '[') {
			r = class_parse(p, n, *i, &end, NULL, NULL, ps->err);
			if (r < 0)
				return r;
			*i = end;
		} else if (c == '{') {
			r = add_text(ps, seq, text, *i);
			if (r < 0)
				return r;
			if (depth >= MOAT_GLOB_MAX_BRACE_DEPTH)
				return fail(ps->err, *i, "braces nested too deeply");
			r = parse_alt(ps, i, depth + 1, &alt);
			if (r < 0)
				return r;
			node_append(ps, seq, alt);
			text = *i;
		} else if ((c == ',' || c == '}') && depth > 0) {
			break;
		} else if (c == '}') {
			return fail(ps->err, *i, "unmatched '}'");
		} else {
			utf8_next(p + *i, n - *i, &adv);
			*i += adv;
		}
	}
	r = add_text(ps, seq, text, *i);
	if (r < 0)
		return r;
	*ret = seq;
	return 0;
}

/* Alternatives "{a,b,...}" starting at p[*i] == '{'. */
static int parse_alt(struct parser *ps, size_t *i, unsigned depth, int32_t *ret)
{
	size_t open = *i;
	int32_t alt, seq;
	int r;

	r = node_new(ps, N_ALT, open, 0, &alt);
	if (r < 0)
		return r;
	(*i)++;
	for (;;) {
		r = parse_seq(ps, i, depth, &seq);
		if (r < 0)
			return r;
		node_append(ps, alt, seq);
		if (*i >= ps->n)
			return fail(ps->err, open, "unmatched '{'");
		if (ps->p[(*i)++] == '}')
			break;
	}
	*ret = alt;
	return 0;
}

/* Count expansions bottom-up; refuses more than MOAT_GLOB_MAX_ALTERNATIVES.
 * Every count is at least one, so a part over the bound means the whole is. */
static int count_node(struct parser *ps, int32_t id)
{
	struct node *nd = &ps->nodes[id];
	uint64_t total = nd->kind == N_ALT ? 0 : 1;
	int r;

	if (nd->kind == N_TEXT)
		return 0;
	for (int32_t c = nd->child; c >= 0; c = ps->nodes[c].next) {
		r = count_node(ps, c);
		if (r < 0)
			return r;
		if (nd->kind == N_ALT)
			total += ps->nodes[c].count;
		else
			total *= ps->nodes[c].count;
		if (total > MOAT_GLOB_MAX_ALTERNATIVES) {
			moat_error_set(
			    ps->err,
			    "invalid glob: brace expansion gives more than %d alternatives "
			    "at position %u",
			    MOAT_GLOB_MAX_ALTERNATIVES,
			    (nd->kind == N_ALT ? nd->pos : ps->nodes[c].pos) + 1);
			return -EINVAL;
		}
	}
	nd->count = total;
	return 0;
}

/* Write expansion number k of node id to out (first child least significant). */
static void expand_node(const struct parser *ps, int32_t id, uint64_t k, char *out, size_t *olen)
{
	const struct node *nd = &ps->nodes[id];

	if (nd->kind == N_TEXT) {
		memcpy(out + *olen, ps->p + nd->pos, nd->len);
		*olen += nd->len;
		return;
	}
	for (int32_t c = nd->child; c >= 0; c = ps->nodes[c].next) {
		uint64_t cc = ps->nodes[c].count;

		if (nd->kind == N_SEQ) {
			expand_node(ps, c, k % cc, out, olen);
			k /= cc;
		} else if (k < cc) {
			expand_node(ps, c, k, out, olen);
			return;
		} else {
			k -= cc;
		}
	}
}

/* ---------------------------------------------------------------------------
 * Tokens of one expansion */

enum { T_LIT, T_SEP, T_ANY, T_STAR, T_CLASS };

struct tok {
	uint8_t kind;
	uint8_t neg;
	uint32_t n; /* T_LIT: character; T_STAR: number of '*' */
	uint32_t roff, rcount;
};

struct tvec {
	struct tok *v;
	size_t n, cap;
};

static int tokenize(const unsigned char *e, size_t len, unsigned flags, struct tvec *tv,
		    struct rvec *ranges)
{
	size_t i = 0, adv, end;
	bool path = flags == MOAT_GLOB_PATH;
	int r;

	tv->n = 0;
	if (grow(&tv->v, &tv->cap, len + 1, sizeof(*tv->v)) < 0)
		return -ENOMEM;
	while (i < len) {
		struct tok *t = &tv->v[tv->n++];

		memset(t, 0, sizeof(*t));
		switch (e[i]) {
		case '\\':
			t->kind = T_LIT;
			t->n = utf8_next(e + i + 1, len - i - 1, &adv);
			i += 1 + adv;
			break;
		case '*':
			t->kind = T_STAR;
			while (i < len && e[i] == '*') {
				t->n++;
				i++;
			}
			break;
		case '?':
			t->kind = T_ANY;
			i++;
			break;
		case '[': {
			bool neg;

			t->kind = T_CLASS;
			t->roff = (uint32_t)ranges->n;
			r = class_parse(e, len, i, &end, ranges, &neg, NULL);
			if (r < 0)
				return r;
			t->rcount = (uint32_t)(ranges->n - t->roff);
			t->neg = neg;
			i = end;
			break;
		}
		default:
			t->kind = T_LIT;
			t->n = utf8_next(e + i, len - i, &adv);
			i += adv;
			break;
		}
		if (path && t->kind == T_LIT && t->n == '/')
			t->kind = T_SEP;
	}
	return 0;
}

static bool tok_globstar(const struct tok *t, size_t from, size_t to)
{
	return to - from == 1 && t[from].kind == T_STAR && t[from].n >= 2;
}

/* Walk every expansion of a pattern: parse (with errors), count, expand,
 * tokenize, and hand each token list to fn. */
typedef int (*expansion_fn)(void *ctx, const struct tok *t, size_t nt, const struct rvec *ranges);

static int validate(const unsigned char *p, size_t len, struct moat_error *err)
{
	size_t adv;

	if (len > MOAT_GLOB_MAX_PATTERN) {
		moat_error_set(err, "invalid glob: longer than %d bytes", MOAT_GLOB_MAX_PATTERN);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i += adv) {
		uint32_t cp = utf8_next(p + i, len - i, &adv);

		if (cp == 0)
			return fail(err, i, "NUL byte");
		if (cp >= CP_FOREIGN)
			return fail(err, i, "invalid UTF-8");
	}
	return 0;
}

static int glob_walk(const char *pattern, size_t len, unsigned flags, expansion_fn fn, void *ctx,
		     struct rvec *ranges, struct moat_error *err)
{
	struct parser ps = {.p = (const unsigned char *)pattern, .n = len, .err = err};
	struct tvec tv = {0};
	char *buf = NULL;
	size_t i = 0;
	int32_t root;
	int r;

	if (flags != MOAT_GLOB_PATH && flags != MOAT_GLOB_TEXT) {
		moat_error_set(err, "invalid glob flags %#x", flags);
		return -EINVAL;
	}
	r = validate(ps.p, len, err);
	if (r < 0)
		return r;
	r = parse_seq(&ps, &i, 0, &root);
	if (r < 0)
		goto out;
	r = count_node(&ps, root);
	if (r < 0)
		goto out;
	buf = malloc(len + 1);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	for (uint64_t k = 0; k < ps.nodes[root].count; k++) {
		size_t elen = 0;

		expand_node(&ps, root, k, buf, &elen);
		r = tokenize((const unsigned char *)buf, elen, flags, &tv, ranges);
		if (r < 0)
			goto out;
		r = fn(ctx, tv.v, tv.n, ranges);
		if (r < 0)
			goto out;
	}
	r = 0;
out:
	if (r == -ENOMEM)
		moat_error_set(err, "out of memory compiling glob");
	free(buf);
	free(tv.v);
	free(ps.nodes);
	return r;
}

/* ---------------------------------------------------------------------------
 * NFA layout
 *
 * Position b of a run means "the first b tokens have matched". The token
 * between b-1 and b either consumes one character (ONE masks, reached by the
 * shift) or is a star (LOOP masks: b stays set on accepted characters;
 * EPS1 at b-1: b is reachable without input). EPS2 at b: b+2 is reachable
 * without input (the optional halves of a globstar); b+2 never loops, since
 * an epsilon edge into a looping position would let the loop run where the
 * pattern did not allow it. Runs of different
 * expansions sit side by side; nothing shifts into a run's first position. */

enum { AC_LIT, AC_NOSLASH, AC_ALL, AC_CLASS };

struct accept {
	uint8_t kind;
	uint8_t neg;
	uint8_t path;
	uint32_t cp;
	uint32_t roff, rcount;
};

struct special {
	uint32_t bit;
	struct accept ac;
};

struct moat_glob {
	char *pattern;
	size_t pattern_len;
	unsigned flags;
	uint32_t nstates, nwords, ncls, nspecial;
	uint8_t cls[NSLOTS];
	uint64_t *masks; /* per class: ONE[nwords], LOOP[nwords] */
	uint64_t *eps1, *eps2, *init, *final;
	bool has_eps;
	struct special *special;
	struct range *ranges;
	char *pre; /* every match starts with these bytes (a quick reject) */
	size_t prelen;
};

static bool accept_cp(const struct accept *ac, const struct range *ranges, uint32_t cp)
{
	bool in = false;

	switch (ac->kind) {
	case AC_LIT:
		return cp == ac->cp;
	case AC_NOSLASH:
		return cp != '/';
	case AC_ALL:
		return true;
	default:
		for (uint32_t i = 0; i < ac->rcount && !in; i++)
			in = cp >= ranges[ac->roff + i].lo && cp <= ranges[ac->roff + i].hi;
		/* SECURITY: in path mode no class matches '/', negated or not */
		if (ac->path && cp == '/')
			return false;
		return in != !!ac->neg;
	}
}

/* Accepts some non-ASCII characters but not all alike: decided per character. */
static bool accept_special(const struct accept *ac, const struct range *ranges)
{
	if (ac->kind == AC_LIT)
		return ac->cp >= 0x80;
	if (ac->kind != AC_CLASS)
		return false;
	for (uint32_t i = 0; i < ac->rcount; i++)
		if (ranges[ac->roff + i].hi >= 0x80)
			return true;
	return false;
}

struct sdesc {
	struct accept in;
	uint8_t has_in, loop, eps1, eps2, init, final;
};

struct builder {
	unsigned flags;
	struct sdesc *st;
	size_t nst, cap;
	char *pre, *tmp; /* literal prefix common to all expansions so far */
	size_t prelen, pattern_len;
	bool have_pre;
	struct moat_error *err;
};

static int push_state(struct builder *b, const struct accept *ac, bool loop)
{
	struct sdesc *s;

	if (b->nst >= MOAT_GLOB_MAX_STATES) {
		moat_error_set(
		    b->err, "invalid glob: too complex (more than %d states after brace expansion)",
		    MOAT_GLOB_MAX_STATES);
		return -E2BIG;
	}
	if (grow(&b->st, &b->cap, b->nst + 1, sizeof(*b->st)) < 0)
		return -ENOMEM;
	s = &b->st[b->nst++];
	memset(s, 0, sizeof(*s));
	if (ac) {
		s->in = *ac;
		s->has_in = 1;
		s->loop = loop;
		if (loop)
			b->st[b->nst - 2].eps1 = 1;
	}
	return 0;
}

static int emit_lit(struct builder *b, uint32_t cp)
{
	struct accept ac = {.kind = AC_LIT, .cp = cp};

	return push_state(b, &ac, false);
}

static int emit_star(struct builder *b, uint8_t kind)
{
	struct accept ac = {.kind = kind};

	return push_state(b, &ac, true);
}

static int emit_tok(struct builder *b, const struct tok *t)
{
	bool path = b->flags == MOAT_GLOB_PATH;
	struct accept ac = {0};

	switch (t->kind) {
	case T_LIT:
		return emit_lit(b, t->n);
	case T_SEP:
		return emit_lit(b, '/');
	case T_ANY:
		ac.kind = path ? AC_NOSLASH : AC_ALL;
		return push_state(b, &ac, false);
	case T_STAR:
		return emit_star(b, path ? AC_NOSLASH : AC_ALL);
	default:
		ac.kind = AC_CLASS;
		ac.neg = t->neg;
		ac.path = path;
		ac.roff = t->roff;
		ac.rcount = t->rcount;
		return push_state(b, &ac, false);
	}
}

/* "/" then optional (".*" "/"), or the first or last globstar forms. */
static int emit_globstar(struct builder *b, bool first, bool last)
{
	size_t skip_from;
	int r;

	if (first && last)
		return emit_star(b, AC_ALL);
	if (last) {
		/* SECURITY: no epsilon edge into the looping position, or "/ws"
		 * followed by anything would match: the run may end right here
		 * instead, and otherwise needs the '/' first. */
		b->st[b->nst - 1].final = 1;
		r = emit_lit(b, '/');
		if (r >= 0)
			r = emit_star(b, AC_ALL);
		return r;
	} else {
		if (!first) {
			r = emit_lit(b, '/');
			if (r < 0)
				return r;
		}
		skip_from = b->nst - 1;
		r = emit_star(b, AC_ALL);
		if (r >= 0)
			r = emit_lit(b, '/');
	}
	if (r < 0)
		return r;
	b->st[skip_from].eps2 = 1;
	return 0;
}

struct comp {
	size_t from, to;
	bool globstar;
};

static int emit_path(struct builder *b, const struct tok *t, size_t nt)
{
	struct comp *comps;
	size_t ncomps = 0, from = 0;
	bool consumed = false;
	int r = 0;

	comps = calloc(nt + 1, sizeof(*comps));
	if (!comps)
		return -ENOMEM;
	for (size_t i = 0; i <= nt; i++) {
		if (i < nt && t[i].kind != T_SEP)
			continue;
		bool gs = tok_globstar(t, from, i);

		/* consecutive globstars mean the same as one */
		if (!(gs && ncomps > 0 && comps[ncomps - 1].globstar)) {
			comps[ncomps].from = from;
			comps[ncomps].to = i;
			comps[ncomps].globstar = gs;
			ncomps++;
		}
		from = i + 1;
	}
	for (size_t c = 0; c < ncomps && r >= 0; c++) {
		if (comps[c].globstar) {
			r = emit_globstar(b, c == 0, c + 1 == ncomps);
			consumed = true;
			continue;
		}
		if (c > 0 && !consumed)
			r = emit_lit(b, '/');
		consumed = false;
		for (size_t i = comps[c].from; i < comps[c].to && r >= 0; i++)
			r = emit_tok(b, &t[i]);
	}
	free(comps);
	return r;
}

/* The literal bytes every subject matching this expansion starts with. */
static size_t lit_prefix(const struct tok *t, size_t nt, unsigned flags, char *out)
{
	size_t n = 0, i, from;

	for (i = 0; i < nt && (t[i].kind == T_LIT || t[i].kind == T_SEP); i++)
		n += utf8_put(t[i].kind == T_SEP ? '/' : t[i].n, out + n);
	if (flags != MOAT_GLOB_PATH || i == 0 || t[i - 1].kind != T_SEP)
		return n;
	/* X followed by "/" and trailing globstars also matches X itself */
	from = i;
	for (size_t j = i; j <= nt; j++) {
		if (j < nt && t[j].kind != T_SEP)
			continue;
		if (!tok_globstar(t, from, j))
			return n;
		from = j + 1;
	}
	return n - 1;
}

static int emit_expansion(void *ctx, const struct tok *t, size_t nt, const struct rvec *ranges)
{
	struct builder *b = ctx;
	size_t start = b->nst, n, k;
	int r;

	(void)ranges;
	if (!b->pre) {
		/* literal bytes never outnumber the pattern's */
		b->pre = malloc(2 * (b->pattern_len + 4));
		if (!b->pre)
			return -ENOMEM;
		b->tmp = b->pre + b->pattern_len + 4;
	}
	n = lit_prefix(t, nt, b->flags, b->have_pre ? b->tmp : b->pre);
	if (!b->have_pre) {
		b->prelen = n;
		b->have_pre = true;
	} else {
		for (k = 0; k < n && k < b->prelen && b->pre[k] == b->tmp[k]; k++)
			;
		b->prelen = k;
	}
	r = push_state(b, NULL, false);
	if (r < 0)
		return r;
	b->st[start].init = 1;
	if (b->flags == MOAT_GLOB_PATH) {
		r = emit_path(b, t, nt);
	} else {
		for (size_t i = 0; i < nt && r >= 0; i++)
			r = emit_tok(b, &t[i]);
	}
	if (r < 0)
		return r;
	b->st[b->nst - 1].final = 1;
	return 0;
}

/* ---------------------------------------------------------------------------
 * Simulation */

static inline void setbit(uint64_t *w, size_t b)
{
	w[b / 64] |= (uint64_t)1 << (b % 64);
}

/* d |= everything reachable from d through epsilon edges */
static void closure_n(const struct moat_glob *g, uint64_t *d)
{
	size_t nw = g->nwords;
	bool changed = true;

	if (!g->has_eps)
		return;
	while (changed) {
		uint64_t c1 = 0, c2 = 0;

		changed = false;
		for (size_t w = 0; w < nw; w++) {
			uint64_t a = d[w] & g->eps1[w], e = d[w] & g->eps2[w];
			uint64_t x = (a << 1) | c1 | (e << 2) | c2;

			c1 = a >> 63;
			c2 = e >> 62;
			if (x & ~d[w]) {
				d[w] |= x;
				changed = true;
			}
		}
	}
}

static const uint64_t *one_mask(const struct moat_glob *g, uint32_t cp, uint64_t *scratch)
{
	const uint64_t *m;

	if (cp < 0x80)
		return g->masks + (size_t)g->cls[cp] * 2 * g->nwords;
	m = g->masks + (size_t)g->cls[NONASCII_SLOT] * 2 * g->nwords;
	if (!g->nspecial)
		return m;
	memcpy(scratch, m, g->nwords * sizeof(uint64_t));
	for (uint32_t i = 0; i < g->nspecial; i++)
		if (accept_cp(&g->special[i].ac, g->ranges, cp))
			setbit(scratch, g->special[i].bit);
	return scratch;
}

static bool match1(const struct moat_glob *g, const unsigned char *s, size_t len)
{
	uint64_t d = g->init[0], e1 = g->eps1[0], e2 = g->eps2[0];
	uint64_t scratch[1];
	bool has_eps = g->has_eps;
	size_t i = 0, adv;

	while (i < len) {
		uint64_t one, loop;
		uint32_t cp;

		if (s[i] < 0x80) {
			const uint64_t *m = g->masks + 2 * g->cls[s[i]];

			one = m[0];
			loop = m[1];
			i++;
		} else {
			cp = utf8_next(s + i, len - i, &adv);
			i += adv;
			one = one_mask(g, cp, scratch)[0];
			loop = g->masks[2 * g->cls[NONASCII_SLOT] + 1];
		}
		d = ((d << 1) & one) | (d & loop);
		if (!d)
			return false;
		if (!has_eps)
			continue;
		for (;;) {
			uint64_t x = (((d & e1) << 1) | ((d & e2) << 2)) & ~d;

			if (!x)
				break;
			d |= x;
		}
	}
	return (d & g->final[0]) != 0;
}

static bool matchn(const struct moat_glob *g, const unsigned char *s, size_t len)
{
	uint64_t d[MAX_WORDS], scratch[MAX_WORDS];
	size_t nw = g->nwords, i = 0, adv;

	memcpy(d, g->init, nw * sizeof(uint64_t));
	while (i < len) {
		const uint64_t *one, *loop;
		uint64_t carry = 0, any = 0;
		uint32_t cp;

		if (s[i] < 0x80) {
			cp = s[i];
			i++;
		} else {
			cp = utf8_next(s + i, len - i, &adv);
			i += adv;
		}
		one = one_mask(g, cp, scratch);
		loop = (cp < 0x80 ? g->masks + (size_t)g->cls[cp] * 2 * nw
				  : g->masks + (size_t)g->cls[NONASCII_SLOT] * 2 * nw) +
		       nw;
		for (size_t w = 0; w < nw; w++) {
			uint64_t v = d[w];

			d[w] = (((v << 1) | carry) & one[w]) | (v & loop[w]);
			carry = v >> 63;
			any |= d[w];
		}
		if (!any)
			return false;
		closure_n(g, d);
	}
	for (size_t w = 0; w < nw; w++)
		if (d[w] & g->final[w])
			return true;
	return false;
}

bool moat_glob_match(const struct moat_glob *g, const char *s, size_t len)
{
	if (!g || (!s && len))
		return false;
	if (len < g->prelen || (g->prelen && memcmp(s, g->pre, g->prelen)))
		return false;
	if (g->nwords == 1)
		return match1(g, (const unsigned char *)s, len);
	return matchn(g, (const unsigned char *)s, len);
}

/* ---------------------------------------------------------------------------
 * Compilation */

struct moat_glob *moat_glob_free(struct moat_glob *g)
{
	if (!g)
		return NULL;
	free(g->pattern);
	free(g->pre);
	free(g->masks);
	free(g->eps1);
	free(g->special);
	free(g->ranges);
	free(g);
	return NULL;
}

static int finish(struct moat_glob *g, const struct builder *b, const struct rvec *ranges)
{
	size_t nw, nst = b->nst, ns = 0;
	uint64_t *sig, *uniq, *wild;
	/* the slots whose signature may differ from the wildcards' alone */
	bool touched[NSLOTS] = {false};
	uint32_t plain_cls = UINT32_MAX;
	int r = -ENOMEM;

	touched['/'] = touched[NONASCII_SLOT] = true;

	nw = (nst + 63) / 64;
	g->nstates = (uint32_t)nst;
	g->nwords = (uint32_t)nw;
	if (ranges->n) {
		g->ranges = malloc(ranges->n * sizeof(*g->ranges));
		if (!g->ranges)
			return -ENOMEM;
		memcpy(g->ranges, ranges->v, ranges->n * sizeof(*g->ranges));
	}
	if (b->prelen) {
		g->pre = moat_strndup(b->pre, b->prelen);
		if (!g->pre)
			return -ENOMEM;
		g->prelen = b->prelen;
	}
	g->eps1 = calloc(4 * nw, sizeof(uint64_t));
	sig = calloc((NSLOTS + 2) * 2 * nw, sizeof(uint64_t));
	if (!g->eps1 || !sig)
		goto out;
	/* ONE and LOOP bits of the wildcards: not '/', then everything */
	wild = sig + NSLOTS * 2 * nw;
	g->eps2 = g->eps1 + nw;
	g->init = g->eps2 + nw;
	g->final = g->init + nw;
	for (size_t i = 0; i < nst; i++) {
		const struct sdesc *s = &b->st[i];

		if (s->eps1)
			setbit(g->eps1, i);
		if (s->eps2)
			setbit(g->eps2, i);
		if (s->init)
			setbit(g->init, i);
		if (s->final)
			setbit(g->final, i);
		g->has_eps |= s->eps1 || s->eps2;
		if (s->has_in && accept_special(&s->in, ranges->v))
			ns++;
	}
	closure_n(g, g->init);
	if (ns) {
		g->special = calloc(ns, sizeof(*g->special));
		if (!g->special)
			goto out;
	}
	/* one signature (ONE, LOOP) per ASCII character and one for the rest */
	for (size_t i = 0; i < nst; i++) {
		const struct sdesc *s = &b->st[i];
		bool special;

		if (!s->has_in)
			continue;
		special = accept_special(&s->in, ranges->v);
		if (special) {
			g->special[g->nspecial].bit = (uint32_t)i;
			g->special[g->nspecial].ac = s->in;
			g->nspecial++;
		}
		if (s->in.kind == AC_LIT) {
			if (s->in.cp < 0x80) {
				setbit(sig + s->in.cp * 2 * nw + (s->loop ? nw : 0), i);
				touched[s->in.cp] = true;
			}
			continue;
		}
		if (s->in.kind != AC_CLASS) {
			/* wildcards: the same bit for (nearly) every character, below */
			setbit(wild + (s->in.kind == AC_ALL ? 2 * nw : 0) + (s->loop ? nw : 0), i);
			continue;
		}
		for (uint32_t c = 0; c < NSLOTS; c++) {
			uint32_t cp = c == NONASCII_SLOT ? CP_FOREIGN : c;

			if (c == NONASCII_SLOT && special)
				continue;
			if (accept_cp(&s->in, ranges->v, cp)) {
				setbit(sig + c * 2 * nw + (s->loop ? nw : 0), i);
				touched[c] = true;
			}
		}
	}
	for (uint32_t c = 0; c < NSLOTS; c++) {
		uint64_t *m = sig + c * 2 * nw;

		for (size_t w = 0; w < 2 * nw; w++)
			m[w] |= (c == '/' ? 0 : wild[w]) | wild[2 * nw + w];
	}
	/* characters with equal signatures share one class. A character no
	 * literal or class of the pattern names has only the wildcards' bits:
	 * all of those share one class, found without comparing (a compile
	 * compared 129 signatures with every class before: most of the cost
	 * of compiling a plan's hundred patterns) */
	uniq = sig;
	g->ncls = 0;
	for (uint32_t c = 0; c < NSLOTS; c++) {
		const uint64_t *m = sig + c * 2 * nw;
		uint32_t k;

		if (!touched[c] && plain_cls != UINT32_MAX) {
			g->cls[c] = (uint8_t)plain_cls;
			continue;
		}
		for (k = 0; k < g->ncls; k++)
			if (!memcmp(uniq + (size_t)k * 2 * nw, m, 2 * nw * sizeof(uint64_t)))
				break;
		if (k == g->ncls) {
			memmove(uniq + (size_t)k * 2 * nw, m, 2 * nw * sizeof(uint64_t));
			g->ncls++;
		}
		if (!touched[c])
			plain_cls = k;
		g->cls[c] = (uint8_t)k;
	}
	g->masks = malloc((size_t)g->ncls * 2 * nw * sizeof(uint64_t));
	if (!g->masks)
		goto out;
	memcpy(g->masks, uniq, (size_t)g->ncls * 2 * nw * sizeof(uint64_t));
	r = 0;
out:
	free(sig);
	return r;
}

int moat_glob_compile_n(const char *pattern, size_t len, unsigned flags, struct moat_glob **ret,
			struct moat_error *err)
{
	struct builder b = {.flags = flags, .pattern_len = len, .err = err};
	struct rvec ranges = {0};
	struct moat_glob *g;
	int r;

	if (!pattern || !ret) {
		moat_error_set(err, "invalid glob: no pattern");
		return -EINVAL;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		moat_error_set(err, "out of memory compiling glob");
		return -ENOMEM;
	}
	g->flags = flags;
	r = glob_walk(pattern, len, flags, emit_expansion, &b, &ranges, err);
	if (r == -E2BIG)
		r = -EINVAL;
	if (r >= 0) {
		g->pattern = moat_strndup(pattern, len);
		g->pattern_len = len;
		r = g->pattern ? finish(g, &b, &ranges) : -ENOMEM;
		if (r < 0)
			moat_error_set(err, "out of memory compiling glob");
	}
	free(b.st);
	free(b.pre);
	free(ranges.v);
	if (r < 0) {
		moat_glob_free(g);
		return r;
	}
	*ret = g;
	return 0;
}

int moat_glob_compile(const char *pattern, unsigned flags, struct moat_glob **ret,
		      struct moat_error *err)
{
	if (!pattern) {
		moat_error_set(err, "invalid glob: no pattern");
		return -EINVAL;
	}
	return moat_glob_compile_n(pattern, strlen(pattern), flags, ret, err);
}

const char *moat_glob_pattern(const struct moat_glob *g)
{
	return g ? g->pattern : NULL;
}

size_t moat_glob_states(const struct moat_glob *g)
{
	return g ? g->nstates : 0;
}

/* ---------------------------------------------------------------------------
 * Glob sets
 *
 * Every expansion of every glob offers keys that any subject it matches must
 * also have: its leading literal components ("/home/u/proj" is a prefix of
 * the subject ending at a component boundary), its literal last component
 * (the subject's basename), each literal component (a component of the
 * subject: outside globstars pattern and subject components pair up one to
 * one), the literal start of its last component up to a '.' (the subject's
 * basename up to its first '.' after the first character) and the extension
 * of its literal tail (the subject's extension, from the last '.' of the
 * basename). In text
 * mode the one key is the literal first word. Building picks, per expansion,
 * the key shared by the fewest globs; a glob with a keyless expansion is
 * scanned for every query. A query looks up the subject's keys and tests the
 * listed globs in ascending order, stopping as soon as nothing lower remains. */

enum { K_NONE, K_BASE, K_PREFIX, K_COMP, K_STEM, K_EXT, K_WORD };

struct gs_slot {
	uint64_t hash;
	uint32_t koff, klen;
	uint32_t loff, lcount;
	uint32_t count, last, last2; /* build time: globs offering the key; last one counted */
	uint8_t kind, used;
};

struct moat_globset {
	unsigned flags;
	struct moat_glob **globs;
	size_t n, cap;
	bool built;
	struct gs_slot *tab;
	size_t tabcap;
	char *keys;
	uint32_t *lists;
	uint32_t *scan;
	size_t nscan;
	size_t max_prefix; /* longest K_PREFIX key: no longer prefix can hit */
};

#define FNV_OFF 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static inline uint64_t fnv_step(uint64_t h, unsigned char c)
{
	return (h ^ c) * FNV_PRIME;
}

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = FNV_OFF;

	for (size_t i = 0; i < n; i++)
		h = fnv_step(h, (unsigned char)s[i]);
	return h;
}

static inline uint64_t key_hash(uint64_t h, unsigned kind)
{
	h ^= (uint64_t)kind * 0x9e3779b97f4a7c15ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static void index_release(struct moat_globset *set)
{
	free(set->tab);
	free(set->keys);
	free(set->lists);
	free(set->scan);
	set->tab = NULL;
	set->keys = NULL;
	set->lists = NULL;
	set->scan = NULL;
	set->tabcap = 0;
	set->nscan = 0;
	set->max_prefix = 0;
	set->built = false;
}

int moat_globset_new(unsigned flags, struct moat_globset **ret)
{
	struct moat_globset *set;

	if (!ret || (flags != MOAT_GLOB_PATH && flags != MOAT_GLOB_TEXT))
		return -EINVAL;
	set = calloc(1, sizeof(*set));
	if (!set)
		return -ENOMEM;
	set->flags = flags;
	*ret = set;
	return 0;
}

struct moat_globset *moat_globset_free(struct moat_globset *set)
{
	if (!set)
		return NULL;
	for (size_t i = 0; i < set->n; i++)
		moat_glob_free(set->globs[i]);
	free(set->globs);
	index_release(set);
	free(set);
	return NULL;
}

long moat_globset_add_n(struct moat_globset *set, const char *pattern, size_t len,
			struct moat_error *err)
{
	struct moat_glob *g;
	int r;

	if (!set)
		return -EINVAL;
	if (set->n >= MOAT_GLOBSET_MAX_GLOBS) {
		moat_error_set(err, "too many globs in one set (at most %d)",
			       MOAT_GLOBSET_MAX_GLOBS);
		return -E2BIG;
	}
	if (grow(&set->globs, &set->cap, set->n + 1, sizeof(*set->globs)) < 0) {
		moat_error_set(err, "out of memory");
		return -ENOMEM;
	}
	r = moat_glob_compile_n(pattern, len, set->flags, &g, err);
	if (r < 0)
		return r;
	index_release(set);
	set->globs[set->n] = g;
	return (long)set->n++;
}

long moat_globset_add(struct moat_globset *set, const char *pattern, struct moat_error *err)
{
	if (!pattern) {
		moat_error_set(err, "invalid glob: no pattern");
		return -EINVAL;
	}
	return moat_globset_add_n(set, pattern, strlen(pattern), err);
}

size_t moat_globset_count(const struct moat_globset *set)
{
	return set ? set->n : 0;
}

const char *moat_globset_pattern(const struct moat_globset *set, size_t index)
{
	if (!set || index >= set->n)
		return NULL;
	return set->globs[index]->pattern;
}

/* Build time: the candidate keys of every expansion. */
struct cand {
	uint32_t glob, exp;
	uint8_t kind;
	uint32_t koff, klen;
	uint32_t slot; /* in the counting table */
};

struct keyer {
	unsigned flags;
	uint32_t glob, exp;
	bool keyless; /* this glob has an expansion without keys */
	struct cand *c;
	size_t nc, cap;
	struct moat_buf blob;
};

static int key_add(struct keyer *k, uint8_t kind, const struct tok *t, size_t from, size_t to)
{
	char u[4];
	struct cand *c;

	if (grow(&k->c, &k->cap, k->nc + 1, sizeof(*k->c)) < 0)
		return -ENOMEM;
	c = &k->c[k->nc++];
	c->glob = k->glob;
	c->exp = k->exp;
	c->kind = kind;
	c->koff = (uint32_t)k->blob.len;
	for (size_t i = from; i < to; i++)
		moat_buf_append(&k->blob, u, utf8_put(t[i].kind == T_SEP ? '/' : t[i].n, u));
	c->klen = (uint32_t)(k->blob.len - c->koff);
	return k->blob.oom ? -ENOMEM : 0;
}

static bool all_lit(const struct tok *t, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (t[i].kind != T_LIT)
			return false;
	return true;
}

static int keys_path(struct keyer *k, const struct tok *t, size_t nt)
{
	size_t last = 0, prefix_end = 0, from = 0, trail;
	bool named = false;
	int r;

	/* leading literal components, at least one of them not empty */
	for (size_t i = 0; i <= nt; i++) {
		if (i < nt && t[i].kind != T_SEP)
			continue;
		if (!all_lit(t, from, i))
			break;
		named |= i > from;
		prefix_end = i;
		from = i + 1;
	}
	if (named) {
		r = key_add(k, K_PREFIX, t, 0, prefix_end);
		if (r < 0)
			return r;
	}
	from = 0;
	for (size_t i = 0; i <= nt; i++) {
		if (i < nt && t[i].kind != T_SEP)
			continue;
		if (i > from && all_lit(t, from, i)) {
			r = key_add(k, K_COMP, t, from, i);
			if (r < 0)
				return r;
		}
		last = from;
		from = i + 1;
	}
	if (last < nt && all_lit(t, last, nt)) {
		r = key_add(k, K_BASE, t, last, nt);
		if (r < 0)
			return r;
	}
	if (tok_globstar(t, last, nt))
		return 0;
	/* the basename up to its first '.' after the first character */
	for (size_t i = last; i < nt && t[i].kind == T_LIT; i++) {
		if (i > last && t[i].n == '.') {
			r = key_add(k, K_STEM, t, last, i + 1);
			if (r < 0)
				return r;
			break;
		}
	}
	/* the extension of the literal tail of the last component */
	for (trail = nt; trail > last && t[trail - 1].kind == T_LIT; trail--)
		if (t[trail - 1].n == '.')
			return key_add(k, K_EXT, t, trail - 1, nt);
	return 0;
}

static int keys_text(struct keyer *k, const struct tok *t, size_t nt)
{
	size_t i;

	for (i = 0; i < nt && t[i].kind == T_LIT; i++)
		if (t[i].n == ' ')
			return key_add(k, K_WORD, t, 0, i);
	if (i == nt)
		return key_add(k, K_WORD, t, 0, nt);
	return 0;
}

static int keys_expansion(void *ctx, const struct tok *t, size_t nt, const struct rvec *ranges)
{
	struct keyer *k = ctx;
	size_t before = k->nc;
	int r;

	(void)ranges;
	r = k->flags == MOAT_GLOB_PATH ? keys_path(k, t, nt) : keys_text(k, t, nt);
	if (r < 0)
		return r;
	if (k->nc == before)
		k->keyless = true;
	k->exp++;
	return 0;
}

static struct gs_slot *slot_find(struct gs_slot *tab, size_t cap, const char *keys, uint64_t h,
				 uint8_t kind, const char *key, size_t klen)
{
	for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
		struct gs_slot *s = &tab[i];

		if (!s->used)
			return s;
		if (s->hash == h && s->kind == kind && s->klen == klen &&
		    !memcmp(keys + s->koff, key, klen))
			return s;
	}
}

static size_t table_cap(size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	return cap;
}

int moat_globset_build(struct moat_globset *set)
{
	struct keyer k = {.flags = set ? set->flags : 0};
	struct gs_slot *count = NULL, *tab = NULL;
	uint32_t *chosen = NULL, *lists = NULL, *scan = NULL;
	size_t ccap, nchosen = 0, nkeys = 0, nlist = 0, nscan = 0, tcap = 0;
	int r = -ENOMEM;

	if (!set)
		return -EINVAL;
	index_release(set);
	moat_buf_init(&k.blob);
	if (moat_buf_reserve(&k.blob, 1) < 0)
		goto out;
	scan = malloc((set->n + 1) * sizeof(*scan));
	if (!scan)
		goto out;
	/* every candidate key, then the number of globs offering each */
	for (size_t g = 0; g < set->n; g++) {
		size_t before = k.nc;

		k.glob = (uint32_t)g;
		k.exp = 0;
		k.keyless = false;
		struct rvec ranges = {0};

		r = glob_walk(set->globs[g]->pattern, set->globs[g]->pattern_len, set->flags,
			      keys_expansion, &k, &ranges, NULL);
		free(ranges.v);
		if (r < 0)
			goto out;
		if (k.keyless) {
			k.nc = before;
			scan[nscan++] = (uint32_t)g;
		}
	}
	r = -ENOMEM;
	ccap = table_cap(k.nc);
	count = calloc(ccap, sizeof(*count));
	chosen = malloc((k.nc + 1) * sizeof(*chosen));
	if (!count || !chosen)
		goto out;
	for (size_t i = 0; i < k.nc; i++) {
		struct cand *c = &k.c[i];
		const char *key = k.blob.data + c->koff;
		uint64_t h = key_hash(fnv(key, c->klen), c->kind);
		struct gs_slot *s = slot_find(count, ccap, k.blob.data, h, c->kind, key, c->klen);

		if (!s->used) {
			s->used = 1;
			s->hash = h;
			s->kind = c->kind;
			s->koff = c->koff;
			s->klen = c->klen;
			s->last = UINT32_MAX;
		}
		if (s->last != c->glob) {
			s->count++;
			s->last = c->glob;
		}
		c->slot = (uint32_t)(s - count);
	}
	/* per expansion, the key shared by the fewest globs */
	for (size_t i = 0; i < k.nc;) {
		size_t j = i, best = i;

		for (; j < k.nc && k.c[j].glob == k.c[i].glob && k.c[j].exp == k.c[i].exp; j++) {
			const struct gs_slot *a = &count[k.c[j].slot], *b = &count[k.c[best].slot];

			if (a->count < b->count || (a->count == b->count && a->kind < b->kind))
				best = j;
		}
		struct gs_slot *s = &count[k.c[best].slot];

		chosen[nchosen++] = (uint32_t)best;
		if (s->lcount == 0)
			nkeys++;
		if (s->lcount == 0 || s->last2 != k.c[best].glob) {
			s->lcount++;
			s->last2 = k.c[best].glob;
			nlist++;
		}
		i = j;
	}
	/* the final table holds only chosen keys, each with its ascending list */
	tcap = table_cap(nkeys);
	tab = calloc(tcap, sizeof(*tab));
	lists = malloc((nlist + 1) * sizeof(*lists));
	if (!tab || !lists)
		goto out;
	nlist = 0;
	for (size_t i = 0; i < nchosen; i++) {
		const struct cand *c = &k.c[chosen[i]];
		struct gs_slot *cs = &count[c->slot];
		struct gs_slot *s = slot_find(tab, tcap, k.blob.data, cs->hash, cs->kind,
					      k.blob.data + cs->koff, cs->klen);

		if (!s->used) {
			*s = *cs;
			if (s->kind == K_PREFIX && s->klen > set->max_prefix)
				set->max_prefix = s->klen;
			s->loff = (uint32_t)nlist;
			nlist += cs->lcount;
			s->lcount = 0;
		}
		if (s->lcount == 0 || lists[s->loff + s->lcount - 1] != c->glob)
			lists[s->loff + s->lcount++] = c->glob;
	}
	set->tab = tab;
	set->tabcap = tcap;
	set->lists = lists;
	set->keys = moat_buf_steal(&k.blob);
	set->scan = scan;
	set->nscan = nscan;
	set->built = true;
	tab = NULL;
	lists = NULL;
	scan = NULL;
	r = 0;
	if (!set->keys) {
		/* no key at all: an empty buffer never allocated */
		set->keys = calloc(1, 1);
		if (!set->keys) {
			index_release(set);
			r = -ENOMEM;
		}
	}
out:
	free(count);
	free(chosen);
	free(tab);
	free(lists);
	free(scan);
	free(k.c);
	moat_buf_release(&k.blob);
	return r;
}

/* Test the globs listed under one key, lower than *best, lowest first. */
static void try_key(const struct moat_globset *set, uint8_t kind, uint64_t fh, const char *key,
		    size_t klen, const char *s, size_t len, size_t *best)
{
	uint64_t h = key_hash(fh, kind);
	const struct gs_slot *sl;

	for (size_t i = h & (set->tabcap - 1);; i = (i + 1) & (set->tabcap - 1)) {
		sl = &set->tab[i];
		if (!sl->used)
			return;
		if (sl->hash == h && sl->kind == kind && sl->klen == klen &&
		    !memcmp(set->keys + sl->koff, key, klen))
			break;
	}
	for (uint32_t i = 0; i < sl->lcount; i++) {
		uint32_t g = set->lists[sl->loff + i];

		if (g >= *best)
			return;
		if (moat_glob_match(set->globs[g], s, len)) {
			*best = g;
			return;
		}
	}
}

long moat_globset_first(const struct moat_globset *set, const char *s, size_t len)
{
	size_t best;

	if (!set || (!s && len))
		return -1;
	if (!s)
		s = "";
	best = set->n;
	if (!set->built) {
		/* not indexed (yet): still correct, only slower */
		for (size_t i = 0; i < set->n; i++)
			if (moat_glob_match(set->globs[i], s, len))
				return (long)i;
		return -1;
	}
	for (size_t i = 0; i < set->nscan; i++) {
		if (moat_glob_match(set->globs[set->scan[i]], s, len)) {
			best = set->scan[i];
			break;
		}
	}
	if (set->tabcap == 0 || set->tab == NULL)
		goto done;
	if (set->flags == MOAT_GLOB_TEXT) {
		const char *sp = memchr(s, ' ', len);
		size_t w = sp ? (size_t)(sp - s) : len;

		try_key(set, K_WORD, fnv(s, w), s, w, s, len, &best);
	} else {
		uint64_t h = FNV_OFF, hc = FNV_OFF;
		size_t base = 0;

		for (size_t i = 0; i <= len; i++) {
			if (i == len || s[i] == '/') {
				if (i > 0 && i <= set->max_prefix)
					try_key(set, K_PREFIX, h, s, i, s, len, &best);
				if (i > base)
					try_key(set, K_COMP, hc, s + base, i - base, s, len, &best);
				if (i == len)
					break;
				base = i + 1;
				hc = FNV_OFF;
			} else {
				hc = fnv_step(hc, (unsigned char)s[i]);
			}
			h = fnv_step(h, (unsigned char)s[i]);
		}
		if (base < len) {
			const char *dot = NULL, *stem = memchr(s + base + 1, '.', len - base - 1);

			try_key(set, K_BASE, fnv(s + base, len - base), s + base, len - base, s,
				len, &best);
			if (stem)
				try_key(set, K_STEM, fnv(s + base, (size_t)(stem + 1 - s) - base),
					s + base, (size_t)(stem + 1 - s) - base, s, len, &best);
			for (size_t i = len; i > base; i--) {
				if (s[i - 1] == '.') {
					dot = s + i - 1;
					break;
				}
			}
			if (dot)
				try_key(set, K_EXT, fnv(dot, (size_t)(s + len - dot)), dot,
					(size_t)(s + len - dot), s, len, &best);
		}
	}
done:
	return best < set->n ? (long)best : -1;
}
