/* Fuzz the glob compiler and matcher.
 *
 * Input: the pattern up to the first newline, the subject after it. The
 * pattern is compiled in path and text mode and matched; for small inputs a
 * separate, deliberately naive reference (string brace expansion, then a
 * memoized recursive matcher over components) must agree on whether the
 * pattern is valid and on the match. A glob set holding the pattern must
 * give the same first match as a linear scan. Any disagreement aborts. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/glob.h"

#define REF_PAT 64
#define REF_SUBJ 128
#define REF_EXP_CAP 300
#define REF_COMPS (REF_SUBJ + 2)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- reference: characters ---- */

static uint32_t ref_decode(const unsigned char *s, size_t n, size_t *adv)
{
	static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
	unsigned char c = s[0];
	size_t len = c < 0x80 ? 1 : c < 0xc0 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf8 ? 4 : 0;
	uint32_t cp;

	*adv = 1;
	if (len == 1)
		return c;
	if (len == 0 || len > n)
		return 0x110000u + c;
	cp = c & (0xff >> (len + 1));
	for (size_t k = 1; k < len; k++) {
		if ((s[k] >> 6) != 2)
			return 0x110000u + c;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
		return 0x110000u + c;
	*adv = len;
	return cp;
}

/* one class member (maybe escaped) */
static bool ref_member(const unsigned char *p, size_t n, size_t *j, uint32_t *cp)
{
	size_t adv;

	if (p[*j] == '\\') {
		if (*j + 1 >= n)
			return false;
		++*j;
	}
	*cp = ref_decode(p + *j, n - *j, &adv);
	*j += adv;
	return true;
}

/* Parse the class at p[i] == '['; false when malformed. */
static bool ref_class(const unsigned char *p, size_t n, size_t i, uint32_t c, bool *hit,
		      size_t *end)
{
	size_t j = i + 1;
	bool neg = false, in = false;
	int items = 0;

	if (j < n && (p[j] == '!' || p[j] == '^')) {
		neg = true;
		j++;
	}
	for (;;) {
		uint32_t lo, hi;

		if (j >= n)
			return false;
		if (p[j] == ']' && items > 0)
			break;
		if (p[j] == '[' && j + 1 < n && p[j + 1] == ':')
			return false;
		if (!ref_member(p, n, &j, &lo))
			return false;
		hi = lo;
		if (j + 1 < n && p[j] == '-' && p[j + 1] != ']') {
			j++;
			if (!ref_member(p, n, &j, &hi) || hi < lo)
				return false;
		}
		in |= c >= lo && c <= hi;
		items++;
	}
	*hit = in != neg;
	*end = j + 1;
	return true;
}

/* next syntactic unit after p[i] (escape pair, class, or one character) */
static size_t ref_unit(const unsigned char *p, size_t n, size_t i)
{
	size_t adv, end;
	bool hit;

	if (p[i] == '\\') {
		ref_decode(p + i + 1, n - i - 1, &adv);
		return i + 1 + adv;
	}
	if (p[i] == '[' && ref_class(p, n, i, 0, &hit, &end))
		return end;
	ref_decode(p + i, n - i, &adv);
	return i + adv;
}

/* syntax (without limits); *depth gets the deepest brace nesting */
static bool ref_syntax(const unsigned char *p, size_t n, int *depth)
{
	int d = 0;
	size_t adv, end;
	bool hit;

	*depth = 0;
	for (size_t i = 0; i < n; i += adv) {
		uint32_t cp = ref_decode(p + i, n - i, &adv);

		if (cp == 0 || cp >= 0x110000)
			return false;
	}
	for (size_t i = 0; i < n;) {
		if (p[i] == '\\' && i + 1 >= n)
			return false;
		if (p[i] == '[' && !ref_class(p, n, i, 0, &hit, &end))
			return false;
		if (p[i] == '{' && ++d > *depth)
			*depth = d;
		if (p[i] == '}' && d-- == 0)
			return false;
		i = ref_unit(p, n, i);
	}
	return d == 0;
}

/* ---- reference: brace expansion on strings ---- */

static struct {
	unsigned char s[REF_EXP_CAP][REF_PAT + 1];
	size_t len[REF_EXP_CAP];
	int n;
} exps;

static void ref_expand(const unsigned char *p, size_t n)
{
	size_t open = n, close = 0, i;
	unsigned char buf[REF_PAT + 1];
	int d = 0;

	if (exps.n > 256)
		return;
	for (i = 0; i < n; i = ref_unit(p, n, i)) {
		if (p[i] == '{') {
			open = i;
			break;
		}
	}
	if (open == n) {
		memcpy(exps.s[exps.n], p, n);
		exps.len[exps.n++] = n;
		return;
	}
	/* split "{...}" at its own commas */
	size_t from = open + 1;

	for (i = open; i < n; i = ref_unit(p, n, i)) {
		if (p[i] == '{') {
			d++;
		} else if (p[i] == '}' && --d == 0) {
			close = i;
			break;
		}
	}
	for (i = open + 1; i <= close; i = ref_unit(p, n, i)) {
		if (p[i] == '{')
			d++;
		if (p[i] == '}' && d > 0) {
			d--;
			continue;
		}
		if (d == 0 && (p[i] == ',' || i == close)) {
			size_t m = 0;

			memcpy(buf + m, p, open);
			m += open;
			memcpy(buf + m, p + from, i - from);
			m += i - from;
			memcpy(buf + m, p + close + 1, n - close - 1);
			m += n - close - 1;
			ref_expand(buf, m);
			from = i + 1;
		}
	}
}

/* ---- reference: matching ---- */

/* memo entries are (generation << 1 | result); other generations are unset */
static uint32_t memo[REF_PAT + 2][REF_SUBJ + 2], memo_gen;
static uint32_t cmemo[REF_COMPS][REF_COMPS], cmemo_gen;

/* one component (or, in text mode, the whole string) */
static bool ref_match_str(const unsigned char *p, size_t pn, size_t pi, const unsigned char *s,
			  size_t sn, size_t si)
{
	size_t adv, sadv, end;
	uint32_t c;
	bool hit, r;

	if (memo[pi][si] >> 1 == memo_gen)
		return memo[pi][si] & 1;
	if (pi == pn) {
		r = si == sn;
	} else if (p[pi] == '*') {
		size_t q = pi;

		while (q < pn && p[q] == '*')
			q++;
		r = ref_match_str(p, pn, q, s, sn, si);
		if (!r && si < sn) {
			ref_decode(s + si, sn - si, &sadv);
			r = ref_match_str(p, pn, pi, s, sn, si + sadv);
		}
	} else if (si == sn) {
		r = false;
	} else {
		c = ref_decode(s + si, sn - si, &sadv);
		if (p[pi] == '?') {
			r = ref_match_str(p, pn, pi + 1, s, sn, si + sadv);
		} else if (p[pi] == '[') {
			if (!ref_class(p, pn, pi, c, &hit, &end))
				abort();
			r = hit && ref_match_str(p, pn, end, s, sn, si + sadv);
		} else {
			size_t q = pi + (p[pi] == '\\');
			uint32_t lit = ref_decode(p + q, pn - q, &adv);

			r = lit == c && ref_match_str(p, pn, q + adv, s, sn, si + sadv);
		}
	}
	memo[pi][si] = memo_gen << 1 | r;
	return r;
}

static void memo_next(void)
{
	if (++memo_gen == 1u << 31) {
		memset(memo, 0, sizeof(memo));
		memo_gen = 1;
	}
}

static void cmemo_next(void)
{
	if (++cmemo_gen == 1u << 31) {
		memset(cmemo, 0, sizeof(cmemo));
		cmemo_gen = 1;
	}
}

struct span {
	size_t off, len;
};

static bool comp_match(const unsigned char *p, struct span pc, const unsigned char *s,
		       struct span sc)
{
	memo_next();
	return ref_match_str(p + pc.off, pc.len, 0, s + sc.off, sc.len, 0);
}

static bool is_globstar(const unsigned char *p, struct span c)
{
	if (c.len < 2)
		return false;
	for (size_t i = 0; i < c.len; i++)
		if (p[c.off + i] != '*')
			return false;
	return true;
}

static bool ref_comps(const unsigned char *p, const struct span *pc, size_t np, size_t pi,
		      const unsigned char *s, const struct span *sc, size_t ns, size_t si)
{
	bool r = false;

	if (cmemo[pi][si] >> 1 == cmemo_gen)
		return cmemo[pi][si] & 1;
	if (pi == np) {
		r = si == ns;
	} else if (is_globstar(p, pc[pi])) {
		for (size_t k = si; k <= ns && !r; k++)
			r = ref_comps(p, pc, np, pi + 1, s, sc, ns, k);
	} else if (si < ns) {
		r = comp_match(p, pc[pi], s, sc[si]) &&
		    ref_comps(p, pc, np, pi + 1, s, sc, ns, si + 1);
	}
	cmemo[pi][si] = cmemo_gen << 1 | r;
	return r;
}

/* Split a pattern at '/' and "\/" (not inside classes). */
static size_t split_pattern(const unsigned char *p, size_t n, struct span *out)
{
	size_t k = 0, from = 0, i = 0;

	while (i <= n) {
		bool sep = i < n && (p[i] == '/' || (p[i] == '\\' && i + 1 < n && p[i + 1] == '/'));

		if (i == n || sep) {
			out[k].off = from;
			out[k++].len = i - from;
			if (i == n)
				break;
			i += p[i] == '\\' ? 2 : 1;
			from = i;
			continue;
		}
		i = ref_unit(p, n, i);
	}
	return k;
}

static size_t split_subject(const unsigned char *s, size_t n, struct span *out)
{
	size_t k = 0, from = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '/') {
			out[k].off = from;
			out[k++].len = i - from;
			from = i + 1;
		}
	}
	return k;
}

static bool ref_match(unsigned flags, const unsigned char *s, size_t sn)
{
	struct span pc[REF_COMPS], sc[REF_COMPS];

	for (int e = 0; e < exps.n; e++) {
		const unsigned char *p = exps.s[e];
		size_t pn = exps.len[e];

		if (flags == MOAT_GLOB_TEXT) {
			memo_next();
			if (ref_match_str(p, pn, 0, s, sn, 0))
				return true;
			continue;
		}
		size_t np = split_pattern(p, pn, pc), ns = split_subject(s, sn, sc);

		cmemo_next();
		if (ref_comps(p, pc, np, 0, s, sc, ns, 0))
			return true;
	}
	return false;
}

/* A subject built from expansion e, steered by the choice bytes: likely to
 * match, or to miss narrowly, so that both answers get compared. */
static size_t make_sample(int e, const unsigned char *ch, size_t nch, unsigned char *out,
			  size_t cap)
{
	const unsigned char *p = exps.s[e];
	size_t pn = exps.len[e], n = 0, k = 0, i = 0, adv;

#define CHOICE() (nch ? ch[k++ % nch] : (unsigned char)"a/b."[k++ % 4])
#define PUT(c)                                                                                     \
	do {                                                                                       \
		if (n < cap)                                                                       \
			out[n++] = (unsigned char)(c);                                             \
	} while (0)
	while (i < pn) {
		unsigned char c = p[i];

		if (c == '*') {
			int extra = CHOICE() % 4;

			while (i < pn && p[i] == '*')
				i++;
			for (int x = 0; x < extra; x++)
				PUT(CHOICE());
		} else if (c == '?') {
			PUT(CHOICE());
			i++;
		} else if (c == '[') {
			size_t j = i + 1, end = i + 1;
			uint32_t cp = 'x';
			bool hit;

			if (j < pn && (p[j] == '!' || p[j] == '^'))
				j++;
			if (j < pn)
				ref_member(p, pn, &j, &cp);
			if (cp < 0x80) {
				PUT(CHOICE() % 2 ? cp : cp + 1);
			} else if (cp < 0x800) {
				PUT(0xc0 | cp >> 6);
				PUT(0x80 | (cp & 0x3f));
			} else if (cp < 0x10000) {
				PUT(0xe0 | cp >> 12);
				PUT(0x80 | (cp >> 6 & 0x3f));
				PUT(0x80 | (cp & 0x3f));
			} else {
				PUT(0xf0 | cp >> 18);
				PUT(0x80 | (cp >> 12 & 0x3f));
				PUT(0x80 | (cp >> 6 & 0x3f));
				PUT(0x80 | (cp & 0x3f));
			}
			if (!ref_class(p, pn, i, 0, &hit, &end))
				abort();
			i = end;
		} else {
			size_t from = i + (c == '\\');

			ref_decode(p + from, pn - from, &adv);
			for (size_t q = from; q < from + adv; q++)
				PUT(p[q]);
			i = from + adv;
		}
	}
#undef CHOICE
#undef PUT
	return n;
}

/* ---- harness ---- */

static void check_set(const char *pat, size_t plen, unsigned flags, const char *s, size_t sn)
{
	static const char *others[] = {"**/x", "/a/**", "*.c", "a b*", "{/b,c}/*", "**"};
	struct moat_glob *g[8];
	struct moat_globset *set;
	struct moat_error err;
	long want = -1, n = 0;

	if (moat_globset_new(flags, &set) < 0)
		abort();
	for (size_t i = 0; i < 1 + sizeof(others) / sizeof(others[0]); i++) {
		const char *p = i == 0 ? pat : others[i - 1];
		size_t l = i == 0 ? plen : strlen(p);

		/* the fuzzed pattern first, then again in the middle */
		if (i == 3) {
			if (moat_globset_add_n(set, pat, plen, &err) != n)
				abort();
			if (moat_glob_compile_n(pat, plen, flags, &g[n], &err) < 0)
				abort();
			n++;
		}
		if (moat_globset_add_n(set, p, l, &err) != n)
			abort();
		if (moat_glob_compile_n(p, l, flags, &g[n], &err) < 0)
			abort();
		n++;
	}
	if (moat_globset_build(set) < 0)
		abort();
	for (long i = 0; i < n; i++) {
		if (want < 0 && moat_glob_match(g[i], s, sn))
			want = i;
		moat_glob_free(g[i]);
	}
	if (moat_globset_first(set, s, sn) != want) {
		fprintf(stderr, "globset disagrees with a linear scan\n");
		abort();
	}
	moat_globset_free(set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl;
	const char *pat = (const char *)data, *s;
	size_t plen, sn;

	if (size > MOAT_GLOB_MAX_PATTERN * 2 + 64)
		return 0;
	nl = memchr(data, '\n', size);
	plen = nl ? (size_t)(nl - data) : size;
	s = nl ? (const char *)nl + 1 : "";
	sn = nl ? size - plen - 1 : 0;

	for (unsigned flags = 0; flags < 2; flags++) {
		struct moat_glob *g = NULL;
		struct moat_error err;
		int r, depth;
		bool m, syntax;

		memset(&err, 0, sizeof(err));
		r = moat_glob_compile_n(pat, plen, flags, &g, &err);
		if (r != 0 && r != -EINVAL)
			abort();
		if (r < 0 && (err.msg[0] == '\0' || strchr(err.msg, '\n')))
			abort();
		m = r == 0 && moat_glob_match(g, s, sn);
		if (r == 0 && m != moat_glob_match(g, s, sn))
			abort();
		if (r == 0 && sn <= 512)
			check_set(pat, plen, flags, s, sn);
		moat_glob_free(g);
		if (plen > REF_PAT || sn > REF_SUBJ)
			continue;

		syntax = ref_syntax(data, plen, &depth);
		if (!syntax) {
			if (r == 0) {
				fprintf(stderr, "reference refuses a pattern the compiler took\n");
				abort();
			}
			continue;
		}
		if (depth > MOAT_GLOB_MAX_BRACE_DEPTH) {
			if (r == 0)
				abort();
			continue;
		}
		exps.n = 0;
		ref_expand(data, plen);
		if (exps.n > MOAT_GLOB_MAX_ALTERNATIVES) {
			if (r == 0) {
				fprintf(stderr, "too many alternatives accepted\n");
				abort();
			}
			continue;
		}
		if (r < 0) {
			size_t bound = 0;

			for (int e = 0; e < exps.n; e++)
				bound += exps.len[e] + 1;
			if (bound <= MOAT_GLOB_MAX_STATES || !strstr(err.msg, "too complex")) {
				fprintf(stderr, "compiler refuses a valid pattern: %s\n", err.msg);
				abort();
			}
			continue;
		}
		if (ref_match(flags, (const unsigned char *)s, sn) != m) {
			fprintf(stderr, "%s mode: glob says %d, reference says %d\n",
				flags ? "text" : "path", m, !m);
			abort();
		}
		/* subjects built from the pattern itself */
		if (moat_glob_compile_n(pat, plen, flags, &g, &err) < 0)
			abort();
		for (int e = 0; e < exps.n && e < 8; e++) {
			unsigned char sample[REF_SUBJ];
			size_t len =
			    make_sample(e, (const unsigned char *)s, sn, sample, sizeof(sample));

			if (moat_glob_match(g, (const char *)sample, len) !=
			    ref_match(flags, sample, len)) {
				fprintf(stderr,
					"%s mode: glob and reference disagree on a sample\n",
					flags ? "text" : "path");
				abort();
			}
		}
		moat_glob_free(g);
	}
	return 0;
}
