/* Secret redaction for logs and audit records.
 *
 * moat logs the commands agents run; agents put credentials in them. This
 * module replaces what looks like a secret with "[REDACTED]" and leaves every
 * other byte as it was. It is best effort: a leak is a bug, a false positive
 * is a nuisance, and ordinary commands (git commit -m 'fix auth flow') must
 * come out byte-identical. Pure: no I/O, never prints, allocates only into
 * the caller's output buffer.
 *
 * Why a hand-written scanner rather than PCRE2: the input can be a 256 MiB
 * log, the rules need context that regexes express badly (the quote that
 * opened a key, the program word earlier on the line, "Bearer" kept but its
 * token hidden), and a set of alternations run at every offset is neither
 * linear nor cheap. Here one left-to-right pass looks at each "run" of token
 * characters [A-Za-z0-9_+/-] (and markers glued to them) once, tries the
 * rules that can start there, and either consumes what it matched or copies
 * the run. Every look-ahead that can fail stops at the next space, quote or
 * delimiter, so a byte is examined a bounded number of times: linear time,
 * no recursion but one bounded level for URL userinfo, thread-safe by
 * construction.
 *
 * SECURITY: redaction must be idempotent (redacting a redacted text changes
 * nothing), so that logs can be re-scrubbed and tests can pin the output.
 * So a second pass must cut the text where the first did and judge each part
 * by the same context: a "[REDACTED]" marker is part of the run it is glued
 * to (the run starts where it started before the token in it was hidden),
 * stays a marker, and ends no value; no rule leaves a marker glued to a run
 * it judged apart; and every decision reads only text that survives
 * redaction, or gives the same answer once that text is a marker. */
#include "core/redact.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define PEM_BEGIN "-----BEGIN "
#define PEM_BEGIN_LEN (sizeof(PEM_BEGIN) - 1)
#define PEM_END "-----END "
#define PEM_END_LEN (sizeof(PEM_END) - 1)
#define MARK_LEN (sizeof(MOAT_REDACTED) - 1)
/* Longest PEM label accepted ("ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK"). */
#define PEM_LABEL_MAX 64
/* Shortest run judged an opaque token. */
#define OPAQUE_MIN 32

struct rctx {
	const char *in, *end;
	struct moat_buf *out;
	const char *pem_at;	     /* next "-----BEGIN " at or after the scan point, or end */
	const char *pend_a, *pend_b; /* input bytes copied but not yet appended */
	char pwflag; /* the password flag of a client seen on this line ('p' for
		      * mysql, 'a' for redis-cli, ...), or 0 */
	bool pwsep;  /* ... whose value may also be the next word (not mysql's:
		      * "mysql -p db" prompts, db is the database) */
};

static void redact_range(struct rctx *c, const char *p, const char *e);
static bool word_kept(const char *s, const char *t);

/* A literal and its length, for the keyword tables. */
struct word {
	const char *s;
	size_t n;
};

/* clang-format off */
#define W(lit) {lit, sizeof(lit) - 1}
/* clang-format on */

/* ---- character classes ---- */

static inline bool is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_alnum(unsigned char c)
{
	return is_alpha(c) || is_digit(c);
}

static bool is_hex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Characters of a run: identifiers, flags, paths, base64 and base64url. */
static inline bool is_tok(unsigned char c)
{
	return is_alnum(c) || c == '_' || c == '+' || c == '/' || c == '-';
}

static bool is_blank(unsigned char c)
{
	return c == ' ' || c == '\t';
}

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_quote(unsigned char c)
{
	return c == '"' || c == '\'';
}

static unsigned char lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* Where an unquoted value ends. A marker does not end it: the value it is
 * part of is hidden whole. */
static bool is_stop(const char *p, const char *e)
{
	unsigned char c = (unsigned char)*p;

	if (is_ws(c) || is_quote(c))
		return true;
	switch (c) {
	case '\0':
	case '`':
	case '&':
	case ';':
	case ',':
	case ')':
	case '}':
	case '|':
	case '<':
	case '>':
		return true;
	case '\\':
		return p + 1 < e && is_quote((unsigned char)p[1]);
	default:
		return false;
	}
}

static bool ci_eq(const char *a, const char *lit, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lower((unsigned char)a[i]) != (unsigned char)lit[i])
			return false;
	return true;
}

static bool has_prefix(const char *p, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(e - p) >= n && memcmp(p, lit, n) == 0;
}

static bool is_mark(const char *p, const char *e)
{
	return p < e && *p == '[' && (size_t)(e - p) >= MARK_LEN &&
	       memcmp(p, MOAT_REDACTED, MARK_LEN) == 0;
}

/* End of the run at p: token characters and the markers glued to them.
 * SECURITY (idempotence): a marker is part of the run it was cut from, so
 * that a second pass sees the run start where the first saw it, with the
 * same text (a quote, a space) before it. */
static const char *run_end(const char *p, const char *e)
{
	while (p < e) {
		if (is_tok((unsigned char)*p))
			p++;
		else if (is_mark(p, e))
			p += MARK_LEN;
		else
			break;
	}
	return p;
}

/* A flag or a standalone word: at the start, or after a space or a quote. */
static bool word_start(const struct rctx *c, const char *p)
{
	return p == c->in || is_ws((unsigned char)p[-1]) || is_quote((unsigned char)p[-1]);
}

/* ---- output ---- */

/* Output is input copied verbatim plus markers; adjacent copies are merged
 * into one append. */
static void flush(struct rctx *c)
{
	if (c->pend_b > c->pend_a)
		moat_buf_append(c->out, c->pend_a, (size_t)(c->pend_b - c->pend_a));
	c->pend_a = c->pend_b = NULL;
}

static void put_range(struct rctx *c, const char *a, const char *b)
{
	if (b <= a)
		return;
	if (c->pend_b && a == c->pend_b) {
		c->pend_b = b;
		return;
	}
	flush(c);
	c->pend_a = a;
	c->pend_b = b;
}

static void put_mark(struct rctx *c)
{
	flush(c);
	moat_buf_append(c->out, MOAT_REDACTED, MARK_LEN);
}

/* ---- PEM private key blocks ---- */

/* memmem() by hand: the sanitizers' memmem checks the whole haystack on
 * every call, which would make repeated searches quadratic under ASan. */
static const char *find(const char *p, const char *e, const char *lit, size_t n)
{
	while (e - p >= (ptrdiff_t)n) {
		const char *d = memchr(p, lit[0], (size_t)(e - p) - n + 1);

		if (!d)
			return NULL;
		if (memcmp(d, lit, n) == 0)
			return d;
		p = d + 1;
	}
	return NULL;
}

static void pem_search(struct rctx *c, const char *from)
{
	const char *r = find(from, c->end, PEM_BEGIN, PEM_BEGIN_LEN);

	c->pem_at = r ? r : c->end;
}

/* Skip "LABEL-----" after BEGIN/END; NULL unless it is a private key label. */
static const char *pem_label(const char *p, const char *e)
{
	const char *l = p;

	while (p < e && p - l <= PEM_LABEL_MAX &&
	       (is_digit((unsigned char)*p) || (*p >= 'A' && *p <= 'Z') || *p == ' '))
		p++;
	if (!has_prefix(p, e, "-----"))
		return NULL;
	if (!((p - l >= 11 && memcmp(p - 11, "PRIVATE KEY", 11) == 0) ||
	      (p - l >= 17 && memcmp(p - 17, "PRIVATE KEY BLOCK", 17) == 0)))
		return NULL;
	return p + 5;
}

/* "-----BEGIN ... PRIVATE KEY-----" through the matching END line: the
 * marker lines stay, everything between them (but the surrounding white
 * space) becomes one marker. A block without END is hidden to the end. */
static const char *do_pem(struct rctx *c, const char *p)
{
	const char *body = pem_label(p + PEM_BEGIN_LEN, c->end);
	const char *endm, *a, *b, *after;

	if (!body)
		return NULL;
	endm = find(body, c->end, PEM_END, PEM_END_LEN);
	if (!endm)
		endm = c->end;
	put_range(c, p, body);
	a = body;
	while (a < endm && is_ws((unsigned char)*a))
		a++;
	b = endm;
	while (b > a && is_ws((unsigned char)b[-1]))
		b--;
	put_range(c, body, a);
	if (b > a)
		put_mark(c);
	put_range(c, b, endm);
	if (endm == c->end)
		return endm;
	after = pem_label(endm + PEM_END_LEN, c->end);
	if (!after)
		after = endm + PEM_END_LEN;
	put_range(c, endm, after);
	return after;
}

/* ---- values ---- */

/* "$NAME" or "${NAME}": a reference, not a secret. */
static size_t var_ref_len(const char *p, const char *e)
{
	const char *q = p + 1;
	bool brace = q < e && *q == '{';

	if (brace)
		q++;
	if (q >= e || !(is_alpha((unsigned char)*q) || *q == '_'))
		return 0;
	while (q < e && (is_alnum((unsigned char)*q) || *q == '_'))
		q++;
	if (brace) {
		if (q >= e || *q != '}')
			return 0;
		q++;
	}
	return (size_t)(q - p);
}

static bool is_auth_scheme(const char *p, size_t n)
{
	static const struct word schemes[] = {
	    W("bearer"),    W("basic"), W("token"), W("digest"),
	    W("negotiate"), W("ntlm"),	W("bot"),   W("apikey"),
	    W("key"),	    W("ssws"),	W("oauth"), W("aws4-hmac-sha256"),
	};

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(schemes); i++)
		if (schemes[i].n == n && ci_eq(p, schemes[i].s, n))
			return true;
	return false;
}

/* Redact the value at v (quoted, escaped-quoted or one word) and return the
 * position after it. With scheme set, "Bearer X" keeps Bearer and hides X. */
static bool keyword_tail(const char *p, size_t n);

static const char *emit_value(struct rctx *c, const char *v, const char *e, bool scheme)
{
	const char *w;

	/* SECURITY (idempotence): a value that starts with a marker is no
	 * different: it ends where any word ends, as try_bearer() reads it
	 * and as the first pass left it ("[REDACTED]" then a stop). */
	if (v >= e)
		return v;
	if (is_quote((unsigned char)*v) ||
	    (*v == '\\' && v + 1 < e && is_quote((unsigned char)v[1]))) {
		bool esc = *v == '\\';
		char q = esc ? v[1] : *v;
		const char *s = v + (esc ? 2 : 1), *t = s, *after;

		/* SECURITY: the whole quoted value is hidden, spaces and all
		 * (password="a b c"); without its closing quote, to the end of
		 * the line. */
		while (t < e && *t != '\n') {
			if (esc && *t == '\\' && t + 1 < e && t[1] == q)
				break;
			if (!esc && *t == q)
				break;
			if (!esc && q == '"' && *t == '\\' && t + 1 < e && t[1] != '\n')
				t++;
			t++;
		}
		put_range(c, v, s);
		if (t > s)
			put_mark(c);
		after = t;
		if (t < e && *t != '\n')
			after = t + (esc ? 2 : 1);
		put_range(c, t, after);
		return after;
	}
	if (*v == '$') {
		size_t n = var_ref_len(v, e);
		size_t skip = n > 1 && v[1] == '{' ? 2 : 1;

		const char *nend = v + n - (skip == 2 ? 1 : 0), *after = v + n;

		/* SECURITY (idempotence): kept only when the name itself would
		 * be kept, as a second pass reads it as an ordinary word, and
		 * is not a secret's key before a separator (a second pass
		 * would read "$X_ACCESS_KEY = v" as a key and its value) */
		while (after < e && is_blank((unsigned char)*after))
			after++;
		if (n && (v + n == e || is_stop(v + n, e)) && word_kept(v + skip, nend) &&
		    !(after < e && (*after == '=' || *after == ':') &&
		      keyword_tail(v + skip, (size_t)(nend - (v + skip))))) {
			put_range(c, v, v + n);
			return v + n;
		}
	}
	w = v;
	while (w < e && !is_stop(w, e))
		w++;
	if (w == v)
		return v;
	if (scheme && is_auth_scheme(v, (size_t)(w - v))) {
		const char *s = w;

		while (s < e && is_blank((unsigned char)*s))
			s++;
		if (s > w && s < e && *s != '-' &&
		    (!is_stop(s, e) || is_quote((unsigned char)*s) || *s == '\\')) {
			const char *r;

			put_range(c, v, s);
			r = emit_value(c, s, e, false);
			if (r > s)
				return r;
			return s;
		}
	}
	put_mark(c);
	return w;
}

/* ---- tokens of well-known shape ---- */

static size_t span(const char *p, const char *e, bool (*ok)(unsigned char))
{
	const char *q = p;

	while (q < e && ok((unsigned char)*q))
		q++;
	return (size_t)(q - p);
}

static bool is_b64url(unsigned char c)
{
	return is_alnum(c) || c == '_' || c == '-';
}

static bool is_alnum_us(unsigned char c)
{
	return is_alnum(c) || c == '_';
}

static bool is_alnum_dash(unsigned char c)
{
	return is_alnum(c) || c == '-';
}

static bool is_upper_digit(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || is_digit(c);
}

static bool has_digit(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (is_digit((unsigned char)p[i]))
			return true;
	return false;
}

/* SECURITY (idempotence): a shape never ends before a letter or digit, so
 * the text after its marker cannot start a new key, JWT or shape. */
static bool shape_ends(const char *p, const char *e)
{
	return p == e || !is_alnum((unsigned char)*p);
}

/* The credentials of well-known shape: a prefix, then at least min
 * characters of its body (the one list of token shapes: the environment's
 * scrubbing reads it too, moat_redact_has_shape). */
static const struct shape {
	struct word prefix;
	bool (*body)(unsigned char);
	size_t min;
	bool digit; /* body must hold a digit */
} shapes[] = {
    {W("sk-"), is_b64url, 20, true},	  /* OpenAI, Anthropic (sk-ant-), sk-proj- */
    {W("sk_live_"), is_alnum, 16, false}, /* Stripe */
    {W("sk_test_"), is_alnum, 16, false},
    {W("rk_live_"), is_alnum, 16, false},
    {W("rk_test_"), is_alnum, 16, false},
    {W("ghp_"), is_alnum, 20, false}, /* GitHub */
    {W("gho_"), is_alnum, 20, false},
    {W("ghu_"), is_alnum, 20, false},
    {W("ghs_"), is_alnum, 20, false},
    {W("ghr_"), is_alnum, 20, false},
    {W("github_pat_"), is_alnum_us, 20, false},
    {W("xoxb-"), is_alnum_dash, 10, false}, /* Slack */
    {W("xoxp-"), is_alnum_dash, 10, false},
    {W("xoxa-"), is_alnum_dash, 10, false},
    {W("xoxr-"), is_alnum_dash, 10, false},
    {W("xoxs-"), is_alnum_dash, 10, false},
    /* (the minimums are below the real lengths, 35 and 20: a key
     * cut short is still hidden) */
    {W("AIza"), is_b64url, 30, false},	 /* Google API key */
    {W("glpat-"), is_b64url, 16, false}, /* GitLab */
    {W("npm_"), is_alnum, 30, false},	 /* npm */
    {W("hf_"), is_alpha, 30, false},	 /* Hugging Face */
    {W("pypi-"), is_b64url, 50, false},	 /* PyPI */
};

/* Length of a key of well-known shape starting at p (within [p,e)), or 0. */
static size_t shape_len(const char *p, const char *e)
{

	/* every shape is 15 bytes or more and starts with one of these */
	if (e - p < 15 || !*p || !strchr("sgrxAnhp", *p))
		return 0;
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(shapes); i++) {
		size_t pl = shapes[i].prefix.n, m;

		if (shapes[i].prefix.s[0] != *p || (size_t)(e - p) < pl ||
		    memcmp(p, shapes[i].prefix.s, pl) != 0)
			continue;
		m = span(p + pl, e, shapes[i].body);
		if (m >= shapes[i].min && (!shapes[i].digit || has_digit(p + pl, m)) &&
		    shape_ends(p + pl + m, e))
			return pl + m;
	}
	/* AWS access key ids: AKIA/ASIA and exactly 16 [A-Z0-9] */
	if (has_prefix(p, e, "AKIA") || has_prefix(p, e, "ASIA")) {
		size_t m = span(p + 4, e, is_upper_digit);

		if (m == 16 && shape_ends(p + 20, e))
			return 20;
	}
	return 0;
}

/* Characters a token's body may hold, whatever its shape's own class. */
static bool is_body(unsigned char c)
{
	return is_alnum(c) || c == '_' || c == '-';
}

/* A shape's prefix at w, then at least its minimum of body characters
 * before re (the end of w's run of them). */
static bool loose_shape_at(const char *w, const char *re)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(shapes); i++) {
		size_t pl = shapes[i].prefix.n;

		if ((size_t)(re - w) >= pl + shapes[i].min && w[0] == shapes[i].prefix.s[0] &&
		    !memcmp(w, shapes[i].prefix.s, pl))
			return true;
	}
	return (size_t)(re - w) >= 20 && (!memcmp(w, "AKIA", 4) || !memcmp(w, "ASIA", 4));
}

bool moat_redact_has_shape(const char *s, size_t n)
{
	const char *e = s + n, *p = s;

	/* run by run of body characters (so each is read a bounded number of
	 * times: linear in n), every word start in it: its first character,
	 * and each one after a '_' or '-' */
	while (p < e) {
		const char *rs, *re;

		while (p < e && !is_body((unsigned char)*p))
			p++;
		for (rs = p; p < e && is_body((unsigned char)*p); p++)
			;
		re = p;
		if (re - rs < 15)
			continue; /* (every shape is longer) */
		for (const char *w = rs; re - w >= 15; w++)
			if ((w == rs || !is_alnum((unsigned char)w[-1])) && loose_shape_at(w, re))
				return true;
	}
	return false;
}

static bool all_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_hex((unsigned char)p[i]))
			return false;
	return true;
}

static bool is_uuid(const char *p, size_t n)
{
	if (n != 36)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? p[i] != '-' : !is_hex((unsigned char)p[i]))
			return false;
	}
	return true;
}

/* A bare opaque token: 32+ characters with a segment (between - _ +) that
 * mixes letters and digits in a way words and version strings do not.
 * SHA-1/SHA-256/SHA-512 hex digests and UUIDs are identifiers, kept. */
static bool is_opaque(const char *p, size_t n)
{
	size_t i = 0;

	if (n < OPAQUE_MIN)
		return false;
	if ((n == 40 || n == 64 || n == 128) && all_hex(p, n))
		return false;
	if (is_uuid(p, n))
		return false;
	while (i < n) {
		size_t j = i, letters = 0, digits = 0;
		bool nonhex = false;

		while (j < n && p[j] != '-' && p[j] != '_' && p[j] != '+') {
			unsigned char ch = (unsigned char)p[j];

			if (is_digit(ch)) {
				digits++;
			} else {
				letters++;
				if (!is_hex(ch))
					nonhex = true;
			}
			j++;
		}
		if (letters && digits && (j - i >= 16 || (j - i >= 8 && nonhex)))
			return true;
		i = j + 1;
	}
	return false;
}

/* A run with '/' is one base64 token only when it could be nothing else:
 * no '-' or '_', starts with an alphanumeric, ends with one (or padding),
 * mixes upper case, lower case and digits, and changes between them as
 * random text does. Otherwise it is a path and
 * its components are judged one by one. */
static int char_class(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return 0;
	if (ch >= 'a' && ch <= 'z')
		return 1;
	if (is_digit(ch))
		return 2;
	return 3;
}

static bool is_b64_with_slash(const char *p, size_t n)
{
	bool up = false, lo = false, dg = false;
	size_t changes = 0;

	if (n < OPAQUE_MIN || !is_alnum((unsigned char)p[0]) || !is_alnum((unsigned char)p[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];

		if (ch == '-' || ch == '_' || !is_tok(ch))
			return false;
		up |= ch >= 'A' && ch <= 'Z';
		lo |= ch >= 'a' && ch <= 'z';
		dg |= is_digit(ch);
		if (i && char_class(ch) < 3 && char_class((unsigned char)p[i - 1]) < 3 &&
		    char_class(ch) != char_class((unsigned char)p[i - 1]))
			changes++;
	}
	/* random base64 changes between upper case, lower case and digits at
	 * about every other character; CamelCase paths rarely */
	return up && lo && dg && changes * 4 >= n;
}

/* Would emit_word() copy [s,t) unchanged? */
static bool word_kept(const char *s, const char *t)
{
	return !shape_len(s, t) && !is_opaque(s, (size_t)(t - s));
}

/* One piece (no '/', no marker): keys of known shape, then the opaque test.
 * Returns true when it ended with a marker. */
static bool emit_piece(struct rctx *c, const char *s, const char *t)
{
	bool marked = false;

	while (s < t) {
		size_t k = shape_len(s, t);

		if (!k)
			break;
		put_mark(c);
		marked = true;
		s += k;
	}
	if (s == t)
		return marked;
	if (is_opaque(s, (size_t)(t - s))) {
		put_mark(c);
		return true;
	}
	put_range(c, s, t);
	return false;
}

/* One component (no '/'): the markers in it stay, the text between them is
 * judged piece by piece, as the first pass judged it. Returns true when it
 * ended with a new marker (one that hides text of this input). */
static bool emit_word(struct rctx *c, const char *s, const char *t)
{
	bool marked = false;

	while (s < t) {
		const char *m = find(s, t, MOAT_REDACTED, MARK_LEN);

		if (!m)
			m = t;
		if (m > s)
			marked = emit_piece(c, s, m);
		if (m < t) {
			put_mark(c);
			marked = false;
			m += MARK_LEN;
		}
		s = m;
	}
	return marked;
}

/* Copy the run [p,q), hiding tokens in it; base64 padding after a token it
 * hides is taken along. Returns the position after what was consumed.
 * SECURITY (idempotence): padding goes only with a new marker. An '=' after
 * a marker that was already there is what the first pass left after it (the
 * separator of a key whose tail it hid, "ghp_...token=" -> "[REDACTED]="),
 * never padding it had left. */
static const char *emit_run(struct rctx *c, const char *p, const char *q, const char *e)
{
	const char *pad = q, *s;
	bool marked = false;

	while (pad < e && *pad == '=' && pad - q < 2)
		pad++;
	if (pad > q && pad < e && (is_tok((unsigned char)*pad) || *pad == '=' || is_mark(pad, e)))
		pad = q;
	if (!memchr(p, '/', (size_t)(q - p))) {
		marked = emit_word(c, p, q);
	} else if (is_b64_with_slash(p, (size_t)(q - p))) {
		put_mark(c);
		marked = true;
	} else {
		for (s = p; s < q;) {
			const char *t = memchr(s, '/', (size_t)(q - s));

			if (!t)
				t = q;
			marked = emit_word(c, s, t);
			if (t < q) {
				put_range(c, t, t + 1);
				marked = false;
				t++;
			}
			s = t;
		}
	}
	if (!marked)
		put_range(c, q, pad);
	return pad;
}

/* ---- rules that start at a run ---- */

static bool keyword_tail(const char *p, size_t n)
{
	static const struct word any[] = {
	    W("password"),   W("passwd"),	 W("passphrase"),  W("secret"),
	    W("token"),	     W("apikey"),	 W("api_key"),	   W("api-key"),
	    W("access_key"), W("access-key"),	 W("accesskey"),   W("secret_key"),
	    W("secret-key"), W("secretkey"),	 W("private_key"), W("private-key"),
	    W("privatekey"), W("authorization"), W("auth"),	   W("bearer"),
	    W("cookie"),     W("sshpass"),		 W("signature"),
	};
	/* short words only as the last part of a compound: DB_PASS, --pwd */
	static const struct word compound[] = {W("pwd"), W("pass")};

	if (n < 3 || !strchr("deghnrsty", lower((unsigned char)p[n - 1])))
		return false;
	/* a signed URL's signature: Azure's shared access signature "sig" */
	if (n == 3 && ci_eq(p, "sig", 3))
		return true;
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(any); i++) {
		size_t kl = any[i].n;

		if (n >= kl && ci_eq(p + n - kl, any[i].s, kl))
			return true;
	}
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(compound); i++) {
		size_t kl = compound[i].n;

		if (n > kl && ci_eq(p + n - kl, compound[i].s, kl) &&
		    (p[n - kl - 1] == '_' || p[n - kl - 1] == '-'))
			return true;
	}
	return false;
}

/* key = value, key: value, "key": "value", key := value. The key is the
 * run [p,q); at is where it starts for the text before it (see do_run()). */
static const char *try_key_value(struct rctx *c, const char *at, const char *p, const char *q,
				 const char *e)
{
	const char *r = q;
	char open = at > c->in ? at[-1] : '\0';
	bool inside = false; /* the key's opening quote is still open */

	if (is_quote((unsigned char)open)) {
		if (r + 1 < e && *r == '\\' && r[1] == open && at - 1 > c->in && at[-2] == '\\')
			r += 2;
		else if (r < e && *r == open)
			r++;
		else
			inside = true;
	}
	while (r < e && is_blank((unsigned char)*r))
		r++;
	if (r >= e || (*r != '=' && *r != ':'))
		return NULL;
	/* SECURITY (idempotence): the decision reads no further than the
	 * separator, which stays; "token::x" is a key too. */
	r++;
	if (r < e && (*r == '=' || *r == '>'))
		r++;
	while (r < e && is_blank((unsigned char)*r))
		r++;
	emit_run(c, p, q, q);
	put_range(c, q, r);
	/* -H 'Authorization:' -H '...': that quote closes the key's string */
	if (inside && r < e && *r == open)
		return r;
	return emit_value(c, r, e, true);
}

/* Would emit_run() hide the run at r, which starts with '-', from its first
 * byte? Only when its first piece is opaque: no shape starts with '-', nor
 * does a base64 run. Otherwise every rule that can take it keeps the '-'. */
static bool flag_hidden(const char *r, const char *e)
{
	const char *q = run_end(r, e), *x = r;

	while (x < q && *x != '/' && !is_mark(x, q))
		x++;
	return is_opaque(r, (size_t)(x - r));
}

/* --token VALUE, --api-key VALUE, -password VALUE */
static const char *try_flag_value(struct rctx *c, const char *p, const char *q, const char *e)
{
	const char *r = q;

	if (has_prefix(p, q, "--no-"))
		return NULL;
	while (r < e && is_blank((unsigned char)*r))
		r++;
	if (r == q || r >= e || *r == '=' || *r == '\n' || *r == '\r')
		return NULL;
	/* SECURITY (idempotence): a word starting with '-' is the next flag,
	 * not this one's value, unless it is hidden: a second pass would see
	 * only its marker, and take that for the value. */
	if (*r == '-' && !flag_hidden(r, e))
		return NULL;
	if (is_stop(r, e) && !is_quote((unsigned char)*r) && *r != '\\')
		return NULL;
	emit_run(c, p, q, q);
	put_range(c, q, r);
	return emit_value(c, r, e, true);
}

static bool all_digits(const char *a, const char *b)
{
	if (a == b)
		return false;
	for (; a < b; a++)
		if (!is_digit((unsigned char)*a))
			return false;
	return true;
}

/* user:password after -u/--user (curl): the password is hidden, the user
 * kept; uid:gid pairs (docker -u 1000:1000) are left alone. [p,v) is the
 * flag text to keep, v the value. */
static const char *try_userpass(struct rctx *c, const char *p, const char *v, const char *e)
{
	const char *s = v, *t, *colon, *after;
	bool quoted = v < e && is_quote((unsigned char)*v);

	if (quoted) {
		s = v + 1;
		t = s;
		while (t < e && *t != *v && *t != '\n')
			t++;
	} else {
		t = s;
		while (t < e && !is_stop(t, e))
			t++;
	}
	colon = memchr(s, ':', (size_t)(t - s));
	if (!colon || colon + 1 == t || (all_digits(s, colon) && all_digits(colon + 1, t))) {
		if (!quoted)
			return NULL;
		/* SECURITY (idempotence): the quoted value is ours either way,
		 * so that no rule inside it can eat the closing quote this
		 * decision was based on. */
		put_range(c, p, s);
		redact_range(c, s, t);
	} else {
		put_range(c, p, s);
		redact_range(c, s, colon);
		put_range(c, colon, colon + 1);
		put_mark(c);
	}
	after = t;
	if (quoted && t < e && *t == *v)
		after = t + 1;
	put_range(c, t, after);
	return after;
}

static bool is_user_flag(const char *p, size_t n)
{
	return (n == 2 && (memcmp(p, "-u", 2) == 0 || memcmp(p, "-U", 2) == 0)) ||
	       (n == 6 && memcmp(p, "--user", 6) == 0) ||
	       (n == 12 && memcmp(p, "--proxy-user", 12) == 0);
}

/* Bearer TOKEN outside a key: only a token-looking word, so that "bearer of
 * bad news" stays. */
static bool is_bearer_char(unsigned char ch)
{
	return is_alnum(ch) || ch == '.' || ch == '_' || ch == '~' || ch == '+' || ch == '/' ||
	       ch == '=' || ch == '-';
}

static const char *try_bearer(struct rctx *c, const char *p, const char *q, const char *e)
{
	const char *r = q, *w;
	bool odd = false;

	while (r < e && is_blank((unsigned char)*r))
		r++;
	if (r == q)
		return NULL;
	/* SECURITY (idempotence): markers are taken along, so that the text
	 * after this marker is never glued to it (see run_end()) */
	for (w = r; w < e;) {
		if (is_mark(w, e)) {
			odd = true;
			w += MARK_LEN;
		} else if (is_bearer_char((unsigned char)*w)) {
			odd |= !is_alpha((unsigned char)*w);
			w++;
		} else {
			break;
		}
	}
	if (w == r || !(odd || w - r >= 20))
		return NULL;
	put_range(c, p, r);
	put_mark(c);
	return w;
}

/* header.payload.signature, each base64url, the header starting "eyJ" */
static const char *try_jwt(struct rctx *c, const char *p, const char *e)
{
	size_t a = span(p, e, is_b64url), b;
	const char *r;

	if (a < 10 || p + a >= e || p[a] != '.')
		return NULL;
	r = p + a + 1;
	b = span(r, e, is_b64url);
	if (b < 2 || r + b >= e || r[b] != '.')
		return NULL;
	r += b + 1;
	put_mark(c);
	return r + span(r, e, is_b64url);
}

/* Clients that take a password as a short flag's value ("-pPW", "-p PW"):
 * the program's name (a prefix, "mysql" for mysqldump too) or subcommand
 * ("login") and its flag. */
static char pw_flag_word(const char *p, const char *q, bool *sep)
{
	static const struct {
		const char *name;
		bool prefix, sep;
		char flag;
	} clients[] = {
	    {"mysql", true, false, 'p'},	{"mariadb", true, false, 'p'},
	    {"sshpass", false, true, 'p'},	{"redis-cli", false, true, 'a'},
	    {"mongo", false, true, 'p'},	{"mongosh", false, true, 'p'},
	    {"mongodump", false, true, 'p'},	{"mongorestore", false, true, 'p'},
	    {"ldapsearch", false, true, 'w'},	{"ldapmodify", false, true, 'w'},
	    {"ldapadd", false, true, 'w'},	{"ldapdelete", false, true, 'w'},
	    {"ldapwhoami", false, true, 'w'},	{"ldappasswd", false, true, 'w'},
	    {"zip", false, true, 'P'},		{"unzip", false, true, 'P'},
	    {"7z", false, false, 'p'},		{"7za", false, false, 'p'},
	    {"mosquitto_pub", false, true, 'P'}, {"mosquitto_sub", false, true, 'P'},
	    {"sqlcmd", false, true, 'P'},
	    /* docker, podman, nerdctl, helm registry, oras: `login -p PW` */
	    {"login", false, true, 'p'},
	};
	const char *b = p;

	for (const char *s = p; s < q; s++)
		if (*s == '/')
			b = s + 1;
	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++) {
		size_t l = strlen(clients[i].name);

		if ((size_t)(q - b) >= l && ci_eq(b, clients[i].name, l) &&
		    (clients[i].prefix || (size_t)(q - b) == l)) {
			*sep = clients[i].sep;
			return clients[i].flag;
		}
	}
	return 0;
}

static const char *do_run(struct rctx *c, const char *p, const char *e)
{
	/* where the run starts: the text before it decides whether it is a
	 * word (a flag, "bearer", a program) or a key inside quotes */
	const char *at = p;

	for (;;) {
		const char *q = run_end(p, e), *r;
		size_t n = (size_t)(q - p);
		bool kw = keyword_tail(p, n), ws = word_start(c, at);

		if (ws) { /* the latest client word on the line decides */
			bool sep = false;
			char f = pw_flag_word(p, q, &sep);

			if (f)
				c->pwflag = f, c->pwsep = sep;
		}
		/* SECURITY (idempotence): rules that start at the run and read
		 * past it come first. A second pass sees the run with markers
		 * in it, whose tail may no longer be a key; it must still take
		 * the same rule. */
		if (ws && p[0] == '-' && n >= 2) {
			if (is_user_flag(p, n)) {
				const char *v = q;

				if (v < e && *v == '=' && p[1] == '-')
					v++;
				else
					while (v < e && is_blank((unsigned char)*v))
						v++;
				if (v > q && (r = try_userpass(c, p, v, e)))
					return r;
			}
			if ((p[1] == 'u' || p[1] == 'U') && n > 2 &&
			    (r = try_userpass(c, p, p + 2, e)))
				return r;
			if (c->pwflag && p[1] == c->pwflag &&
			    (n > 2 || (q < e && (!is_stop(q, e) || is_quote((unsigned char)*q))))) {
				put_range(c, p, p + 2);
				return emit_value(c, p + 2, e, false);
			}
			if (c->pwflag && c->pwsep && n == 2 && p[1] == c->pwflag &&
			    (r = try_flag_value(c, p, q, e)))
				return r;
		}
		if (kw && (r = try_key_value(c, at, p, q, e)))
			return r;
		if (kw && ws && p[0] == '-' && (r = try_flag_value(c, p, q, e)))
			return r;
		if (ws && n == 6 && ci_eq(p, "bearer", 6) && (r = try_bearer(c, p, q, e)))
			return r;
		if (n >= 3 && memcmp(p, "eyJ", 3) == 0 && (r = try_jwt(c, p, e))) {
			/* SECURITY (idempotence): a token that ends at '/' or
			 * '+' leaves the rest of the run glued to its marker,
			 * which a second pass reads as one run: judge the rest
			 * as that run, with the same text before it. It starts
			 * with '/', '+' or a marker, never "eyJ": once. */
			if (r < e && (is_tok((unsigned char)*r) || is_mark(r, e))) {
				p = r;
				continue;
			}
			return r;
		}
		return emit_run(c, p, q, e);
	}
}

/* scheme://user:password@host: the password hidden, user and host kept.
 * p points at the ':' of "://". */

static bool is_authority_end(unsigned char ch)
{
	return is_ws(ch) || ch == '/' || ch == '?' || ch == '#' || is_quote(ch) || ch == '`' ||
	       ch == '<' || ch == '>' || ch == '\\' || ch == '|' || ch == '\0';
}

static const char *do_authority(struct rctx *c, const char *p, const char *e)
{
	const char *a = p + 3, *w = a, *at = NULL, *colon;

	while (w < e && !is_authority_end((unsigned char)*w)) {
		if (*w == '@')
			at = w;
		w++;
	}
	put_range(c, p, p + 3);
	/* SECURITY (idempotence): nothing inside the authority may consume its
	 * terminator, or a second pass would see a different authority. */
	if (!at || !(colon = memchr(a, ':', (size_t)(at - a)))) {
		redact_range(c, a, w);
		return w;
	}
	redact_range(c, a, colon);
	put_range(c, colon, colon + 1);
	if (at > colon + 1)
		put_mark(c);
	put_range(c, at, at + 1);
	redact_range(c, at + 1, w);
	return w;
}

static void redact_range(struct rctx *c, const char *p, const char *e)
{
	while (p < e) {
		const char *lim, *s;

		if (c->pem_at < p)
			pem_search(c, p);
		if (c->pem_at == p) {
			const char *r = do_pem(c, p);

			if (r) {
				p = r;
				continue;
			}
			pem_search(c, p + 1);
		}
		/* SECURITY: no rule reads past a PEM header, so a block is
		 * found the same way in the first pass and in a second. */
		lim = c->pem_at < e ? c->pem_at : e;
		if (is_tok((unsigned char)*p) || is_mark(p, lim)) {
			p = do_run(c, p, lim);
			continue;
		}
		if (*p == ':' && lim - p >= 3 && p[1] == '/' && p[2] == '/') {
			p = do_authority(c, p, lim);
			continue;
		}
		s = p;
		while (p < lim && !is_tok((unsigned char)*p) && *p != ':' && !is_mark(p, lim)) {
			/* (a line, not a command: ';' '|' '&' may be quoted, and
			 * hiding too much beats hiding too little) */
			if (*p == '\n')
				c->pwflag = 0, c->pwsep = false;
			p++;
		}
		if (p == s) /* a ':' not starting "://" */
			p++;
		put_range(c, s, p);
	}
}

int moat_redact(const char *in, size_t len, struct moat_buf *out)
{
	struct rctx c;

	if (!out || (!in && len))
		return -EINVAL;
	if (!in)
		in = "";
	c.in = in;
	c.end = in + len;
	c.out = out;
	c.pwflag = 0;
	c.pwsep = false;
	c.pend_a = c.pend_b = NULL;
	moat_buf_reserve(out, len + MARK_LEN);
	pem_search(&c, in);
	redact_range(&c, in, c.end);
	flush(&c);
	/* an empty input still leaves a terminated (empty) string */
	if (!len)
		moat_buf_append(out, "", 0);
	return out->oom ? -ENOMEM : 0;
}
