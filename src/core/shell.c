/* The shell command parser (see shell.h): bash's grammar, read in one pass.
 *
 * A hand-written recursive descent parser working directly on bytes: words
 * are lexed with quote removal as they are read, keywords are recognised by
 * a bounded look-ahead in command position only, here-document bodies are
 * collected when the newline ending their line is consumed, and command and
 * process substitutions are parsed as nested command lists on the spot.
 *
 * It must never execute, expand or look anything up: expansions stay
 * verbatim in the word text and are flagged, so callers know the value is
 * unknown. It must never backtrack over more than a keyword, a descriptor
 * number or an assignment name; the one larger look-ahead (telling $(( ))
 * arithmetic from $( ( ) ) subshells, as bash does) scans a matched pair
 * once and is bounded by the nesting limit.
 *
 * Pure: no I/O. */
#include "base/str.h"
#include "core/shell.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ------------------------------------------------------------ */

struct moat_arena_chunk {
	struct moat_arena_chunk *next;
	size_t size;
};

#define ARENA_ALIGN 8u
#define ARENA_HDR ((sizeof(struct moat_arena_chunk) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))
#define ARENA_FIRST_CHUNK 4096u
#define ARENA_MAX_CHUNK ((size_t)1 << 20)

void moat_arena_init(struct moat_arena *a, void *buf, size_t size)
{
	a->chunks = NULL;
	a->total = 0;
	a->next = ARENA_FIRST_CHUNK;
	a->cur = NULL;
	a->left = 0;
	if (buf) {
		uintptr_t p = (uintptr_t)buf;
		uintptr_t q = (p + ARENA_ALIGN - 1) & ~(uintptr_t)(ARENA_ALIGN - 1);

		if (q - p < size) {
			a->cur = (char *)q;
			a->left = (size - (q - p)) & ~(size_t)(ARENA_ALIGN - 1);
		}
	}
}

static int arena_grow(struct moat_arena *a, size_t n)
{
	struct moat_arena_chunk *c;
	size_t size = a->next;

	if (n > MOAT_ARENA_MAX_BYTES)
		return -ENOMEM;
	while (size - ARENA_HDR < n)
		size *= 2;
	if (a->total + size > MOAT_ARENA_MAX_BYTES)
		return -ENOMEM;
	c = malloc(size);
	if (!c)
		return -ENOMEM;
	c->next = a->chunks;
	c->size = size;
	a->chunks = c;
	a->total += size;
	a->cur = (char *)c + ARENA_HDR;
	a->left = size - ARENA_HDR;
	if (a->next < ARENA_MAX_CHUNK)
		a->next *= 2;
	return 0;
}

void *moat_arena_alloc_slow(struct moat_arena *a, size_t n)
{
	void *p;

	if (n > MOAT_ARENA_MAX_BYTES)
		return NULL;
	n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (n == 0)
		n = ARENA_ALIGN;
	if (n > a->left && arena_grow(a, n) < 0)
		return NULL;
	p = a->cur;
	a->cur += n;
	a->left -= n;
	return p;
}

char *moat_arena_strndup(struct moat_arena *a, const char *s, size_t n)
{
	char *p = moat_arena_alloc(a, n + 1);

	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void moat_arena_release(struct moat_arena *a)
{
	struct moat_arena_chunk *c = a->chunks, *next;

	while (c) {
		next = c->next;
		free(c);
		c = next;
	}
	moat_arena_init(a, NULL, 0);
}

/* ---- parser state --------------------------------------------------------- */

struct hd { /* a here-document waiting for the end of its line */
	struct moat_sh_redir *r;
	const char *delim;
	size_t dlen;
	uint32_t off;
	bool strip, literal;
	struct hd *next;
};

struct sh_ctx { /* shared by the main source and backquote copies */
	struct moat_arena *arena;
	char *tb; /* text stack: words under construction, nested ones above outer ones */
	size_t tlen, tcap;
	bool theap;
	struct moat_sh_word *ws; /* word stack: the words of commands being parsed */
	size_t wlen, wcap;
	bool wheap;
	uint32_t nwords, ncmds;
	int nest;
	size_t err_off;
	const char *err_msg;
};

struct psr {
	struct sh_ctx *c;
	const char *s;
	size_t i, n;
	size_t kw_at, kw_n, kw_len; /* the last reserved-word look-up, cached */
	int kw;
	bool copy;   /* s is a rewritten copy (a backquote body) */
	size_t base; /* ... whose errors are reported at this offset */
	struct hd *hd_head, *hd_tail;
};

/* word under construction */
struct wst {
	size_t tstart;
	unsigned flags;
	struct moat_sh_sub *subs, *subs_tail;
	struct moat_sh_span *spans, *spans_tail;
	unsigned bdepth; /* open unquoted braces */
	unsigned nmark;	 /* brace marks written */
	bool bracket;	 /* unquoted '[' seen */
	bool closed;	 /* a brace pair closed */
};

/* terminators a command list may stop at */
#define T_EOF 0x001u
#define T_RPAREN 0x002u
#define T_RBRACE 0x004u
#define T_THEN 0x008u
#define T_ELSE 0x010u /* else, elif */
#define T_FI 0x020u
#define T_DO 0x040u
#define T_DONE 0x080u
#define T_ESAC 0x100u
#define T_DSEMI 0x200u /* ;; ;& ;;& */

enum kw {
	KW_NONE = 0,
	KW_IF,
	KW_THEN,
	KW_ELSE,
	KW_ELIF,
	KW_FI,
	KW_DO,
	KW_DONE,
	KW_CASE,
	KW_ESAC,
	KW_WHILE,
	KW_UNTIL,
	KW_FOR,
	KW_SELECT,
	KW_FUNCTION,
	KW_IN,
	KW_LBRACE,
	KW_RBRACE,
	KW_DLBRACK,
	KW_BANG,
	KW_TIME,
	KW_COPROC,
};

static const struct {
	const char *s;
	unsigned char len;
	unsigned char kw;
	unsigned short term; /* list terminator it is, 0 if none */
	const char *unexpected;
} kwtab[] = {
	{"if", 2, KW_IF, 0, NULL},
	{"then", 4, KW_THEN, T_THEN, "unexpected 'then'"},
	{"else", 4, KW_ELSE, T_ELSE, "unexpected 'else'"},
	{"elif", 4, KW_ELIF, T_ELSE, "unexpected 'elif'"},
	{"fi", 2, KW_FI, T_FI, "unexpected 'fi'"},
	{"do", 2, KW_DO, T_DO, "unexpected 'do'"},
	{"done", 4, KW_DONE, T_DONE, "unexpected 'done'"},
	{"case", 4, KW_CASE, 0, NULL},
	{"esac", 4, KW_ESAC, T_ESAC, "unexpected 'esac'"},
	{"while", 5, KW_WHILE, 0, NULL},
	{"until", 5, KW_UNTIL, 0, NULL},
	{"for", 3, KW_FOR, 0, NULL},
	{"select", 6, KW_SELECT, 0, NULL},
	{"function", 8, KW_FUNCTION, 0, NULL},
	{"in", 2, KW_IN, 0, NULL},
	{"{", 1, KW_LBRACE, 0, NULL},
	{"}", 1, KW_RBRACE, T_RBRACE, "unexpected '}'"},
	{"[[", 2, KW_DLBRACK, 0, NULL},
	{"!", 1, KW_BANG, 0, NULL},
	{"time", 4, KW_TIME, 0, NULL},
	{"coproc", 6, KW_COPROC, 0, NULL},
};

/* character classes of unquoted word text */
#define CM 1u /* metacharacter: ends a word */
#define CS 2u /* needs a closer look */
static const unsigned char wcls[256] = {
	[' '] = CM,  ['\t'] = CM, ['\n'] = CM, [';'] = CM, ['&'] = CM, ['|'] = CM, ['('] = CM,
	[')'] = CM,  ['<'] = CM,  ['>'] = CM,  ['\\'] = CS, ['\''] = CS, ['"'] = CS, ['$'] = CS,
	['`'] = CS,  ['*'] = CS,  ['?'] = CS,  ['['] = CS, [']'] = CS,  ['{'] = CS, [','] = CS,
	['}'] = CS,
};
/* inside double quotes and unquoted here-document bodies */
static const unsigned char dqcls[256] = {
	['"'] = 1, ['\\'] = 1, ['$'] = 1, ['`'] = 1,
};

static int parse_list(struct psr *p, unsigned term, struct moat_sh_node **ret);
static int parse_command(struct psr *p, struct moat_sh_node **ret);
static int lex_dollar(struct psr *p, struct wst *w, bool in_dq);
static int lex_backq(struct psr *p, struct wst *w, bool in_dq);
static int lex_dq(struct psr *p, struct wst *w, bool heredoc);
static int read_heredocs(struct psr *p);

static inline int pc(const struct psr *p, size_t k)
{
	return p->i + k < p->n ? (unsigned char)p->s[p->i + k] : -1;
}

static inline bool is_alpha_(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_delim(int c)
{
	return c < 0 || (c < 256 && (wcls[c] & CM));
}

static uint32_t moff(const struct psr *p, size_t off)
{
	return (uint32_t)(p->copy ? p->base : off);
}

static int perr(struct psr *p, size_t off, const char *msg)
{
	struct sh_ctx *c = p->c;

	if (!c->err_msg) {
		c->err_msg = msg;
		c->err_off = p->copy ? p->base : off;
	}
	return -EINVAL;
}

static int poom(struct psr *p)
{
	struct sh_ctx *c = p->c;

	if (!c->err_msg) {
		c->err_msg = "out of memory";
		c->err_off = p->copy ? p->base : p->i;
	}
	return -ENOMEM;
}

static int enter(struct psr *p, size_t off)
{
	/* SECURITY: every recursion of the parser passes here; the bound keeps a
	 * megabyte of "$(" or "${" from exhausting the stack. */
	if (++p->c->nest > MOAT_SH_MAX_NEST)
		return perr(p, off, "nesting too deep");
	return 0;
}

static void leave(struct psr *p)
{
	p->c->nest--;
}

/* ---- text stack ----------------------------------------------------------- */

static int tgrow(struct sh_ctx *c, size_t extra)
{
	size_t need = c->tlen + extra, ncap = c->tcap ? c->tcap : 256;
	char *nb;

	if (need < c->tlen)
		return -ENOMEM;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (c->theap) {
		nb = realloc(c->tb, ncap);
	} else {
		nb = malloc(ncap);
		if (nb && c->tlen)
			memcpy(nb, c->tb, c->tlen);
	}
	if (!nb)
		return -ENOMEM;
	c->tb = nb;
	c->tcap = ncap;
	c->theap = true;
	return 0;
}

static inline int tput(struct psr *p, const char *s, size_t n)
{
	struct sh_ctx *c = p->c;

	if (n > c->tcap - c->tlen && tgrow(c, n) < 0)
		return poom(p);
	memcpy(c->tb + c->tlen, s, n);
	c->tlen += n;
	return 0;
}

static inline int tputc(struct psr *p, char ch)
{
	struct sh_ctx *c = p->c;

	if (c->tlen == c->tcap && tgrow(c, 1) < 0)
		return poom(p);
	c->tb[c->tlen++] = ch;
	return 0;
}

/* ---- small helpers -------------------------------------------------------- */

static int mknode(struct psr *p, int kind, size_t off, struct moat_sh_node **ret)
{
	struct moat_sh_node *n;

	if (++p->c->ncmds > MOAT_SH_MAX_COMMANDS)
		return perr(p, off, "too many commands");
	n = moat_arena_alloc(p->c->arena, sizeof(*n));
	if (!n)
		return poom(p);
	*n = (struct moat_sh_node){.kind = (uint8_t)kind, .off = moff(p, off)};
	*ret = n;
	return 0;
}

/* A run of words on the context's word stack; runs of one command are
 * contiguous, nested commands push above and pop before the run grows. */
struct wvec {
	size_t base;
	uint32_t n;
	bool started;
};

static int wpush(struct psr *p, struct wvec *v, const struct moat_sh_word *w)
{
	struct sh_ctx *c = p->c;

	if (!v->started) {
		v->base = c->wlen;
		v->started = true;
	}
	if (c->wlen == c->wcap) {
		size_t ncap = c->wcap * 2;
		struct moat_sh_word *nw;

		if (c->wheap) {
			nw = realloc(c->ws, ncap * sizeof(*nw));
		} else {
			nw = malloc(ncap * sizeof(*nw));
			if (nw)
				memcpy(nw, c->ws, c->wlen * sizeof(*nw));
		}
		if (!nw)
			return poom(p);
		c->ws = nw;
		c->wcap = ncap;
		c->wheap = true;
	}
	c->ws[c->wlen++] = *w;
	v->n++;
	return 0;
}

static inline struct moat_sh_word *wv_at(struct psr *p, const struct wvec *v, size_t k)
{
	return &p->c->ws[v->base + k];
}

/* Copy a run into the arena (exact size). */
static int wv_copy(struct psr *p, const struct wvec *v, struct moat_sh_word **ret, uint32_t *ret_n)
{
	struct moat_sh_word *a = NULL;

	if (v->n) {
		a = moat_arena_alloc(p->c->arena, (size_t)v->n * sizeof(*a));
		if (!a)
			return poom(p);
		memcpy(a, wv_at(p, v, 0), (size_t)v->n * sizeof(*a));
	}
	*ret = a;
	*ret_n = v->n;
	return 0;
}

/* Pop a run (and anything pushed after it). */
static void wv_pop(struct psr *p, const struct wvec *v)
{
	if (v->started)
		p->c->wlen = v->base;
}

static inline void skip_blanks(struct psr *p)
{
	for (;;) {
		int ch = pc(p, 0);

		if (ch == ' ' || ch == '\t')
			p->i++;
		else if (ch == '\\' && pc(p, 1) == '\n')
			p->i += 2;
		else
			return;
	}
}

/* blanks, line continuations and a comment (up to, not including, its newline) */
static inline void skip_ws(struct psr *p)
{
	skip_blanks(p);
	if (pc(p, 0) == '#') {
		const char *e = memchr(p->s + p->i, '\n', p->n - p->i);

		p->i = e ? (size_t)(e - p->s) : p->n;
	}
}

static int take_newline(struct psr *p)
{
	p->i++;
	if (p->hd_head)
		return read_heredocs(p);
	return 0;
}

static int skip_ws_nl(struct psr *p)
{
	for (;;) {
		int r;

		skip_ws(p);
		if (pc(p, 0) != '\n')
			return 0;
		r = take_newline(p);
		if (r)
			return r;
	}
}

/* bytes that may start a reserved word */
static const unsigned char kwfirst[256] = {
	['i'] = 1, ['t'] = 1, ['e'] = 1, ['f'] = 1, ['d'] = 1, ['c'] = 1, ['w'] = 1,
	['u'] = 1, ['s'] = 1, ['{'] = 1, ['}'] = 1, ['['] = 1, ['!'] = 1,
};

#define KWIS(lit) (memcmp(s, lit, sizeof(lit) - 1) == 0)

static int peek_kw_scan(const struct psr *p, size_t *ret_len);

/* A reserved word at p->i (command position only). The list, pipeline and
 * command parsers all look at the same place: remember the last answer. */
static int peek_kw(struct psr *p, size_t *ret_len)
{
	if (p->kw_at != p->i + 1 || p->kw_n != p->n) {
		p->kw_len = 0;
		p->kw = peek_kw_scan(p, &p->kw_len);
		p->kw_at = p->i + 1;
		p->kw_n = p->n;
	}
	if (ret_len && p->kw != KW_NONE)
		*ret_len = p->kw_len;
	return p->kw;
}

static int peek_kw_scan(const struct psr *p, size_t *ret_len)
{
	const char *s = p->s + p->i;
	size_t max = p->n - p->i, k = 0;
	int kw = KW_NONE;

	if (max == 0 || !kwfirst[(unsigned char)s[0]])
		return KW_NONE;
	while (k < max && k < 9 && !is_delim((unsigned char)s[k]))
		k++;
	if (k > 8 || (k < max && !is_delim((unsigned char)s[k])))
		return KW_NONE;
	switch (k) {
	case 1:
		kw = s[0] == '{' ? KW_LBRACE : s[0] == '}' ? KW_RBRACE : s[0] == '!' ? KW_BANG : KW_NONE;
		break;
	case 2:
		kw = KWIS("if") ? KW_IF : KWIS("fi") ? KW_FI : KWIS("do") ? KW_DO : KWIS("in") ? KW_IN
		   : KWIS("[[") ? KW_DLBRACK : KW_NONE;
		break;
	case 3:
		kw = KWIS("for") ? KW_FOR : KW_NONE;
		break;
	case 4:
		kw = KWIS("then") ? KW_THEN : KWIS("else") ? KW_ELSE : KWIS("elif") ? KW_ELIF
		   : KWIS("done") ? KW_DONE : KWIS("case") ? KW_CASE : KWIS("esac") ? KW_ESAC
		   : KWIS("time") ? KW_TIME : KW_NONE;
		break;
	case 5:
		kw = KWIS("while") ? KW_WHILE : KWIS("until") ? KW_UNTIL : KW_NONE;
		break;
	case 6:
		kw = KWIS("select") ? KW_SELECT : KWIS("coproc") ? KW_COPROC : KW_NONE;
		break;
	case 8:
		kw = KWIS("function") ? KW_FUNCTION : KW_NONE;
		break;
	default:
		break;
	}
	if (kw != KW_NONE && ret_len)
		*ret_len = k;
	return kw;
}

#undef KWIS

static unsigned kw_term(int kw, const char **ret_msg)
{
	for (size_t t = 0; t < sizeof(kwtab) / sizeof(kwtab[0]); t++) {
		if (kwtab[t].kw == kw) {
			*ret_msg = kwtab[t].unexpected;
			return kwtab[t].term;
		}
	}
	*ret_msg = NULL;
	return 0;
}

static int add_sub(struct psr *p, struct wst *w, int kind, size_t off, struct moat_sh_node *body)
{
	struct moat_sh_sub *s = moat_arena_alloc(p->c->arena, sizeof(*s));

	if (!s)
		return poom(p);
	s->kind = kind;
	s->off = moff(p, off);
	s->body = body;
	s->next = NULL;
	s->view_lo = s->view_hi = -1;
	if (w->subs_tail)
		w->subs_tail->next = s;
	else
		w->subs = s;
	w->subs_tail = s;
	w->flags |= MOAT_SHW_SUBST | MOAT_SHW_EXPAND;
	if (kind != MOAT_SH_SUB_CMD)
		w->flags |= MOAT_SHW_PROCSUBST;
	return 0;
}

/* Record that text [from, now) of the word is an expansion. */
static int add_span(struct psr *p, struct wst *w, int kind, size_t from, bool dq,
		    struct moat_sh_sub *sub)
{
	struct moat_sh_span *s = moat_arena_alloc(p->c->arena, sizeof(*s));

	if (!s)
		return poom(p);
	s->off = (uint32_t)(from - w->tstart);
	s->len = (uint32_t)(p->c->tlen - from);
	s->kind = (uint8_t)kind;
	s->dq = dq;
	s->sub = sub;
	s->next = NULL;
	if (w->spans_tail)
		w->spans_tail->next = s;
	else
		w->spans = s;
	w->spans_tail = s;
	return 0;
}

/* Forget the spans recorded after tail (nested in an expansion being closed). */
static void drop_spans(struct wst *w, struct moat_sh_span *tail)
{
	w->spans_tail = tail;
	if (tail)
		tail->next = NULL;
	else
		w->spans = NULL;
}

/* ---- words ---------------------------------------------------------------- */

static int finish_word(struct psr *p, struct wst *w, size_t start, unsigned eq,
		       struct moat_sh_word *out)
{
	struct sh_ctx *c = p->c;
	size_t len = c->tlen - w->tstart;
	bool brace = false, opaque = false;
	char *t;

	if (w->nmark) {
		size_t low = 0;

		for (size_t k = 0; k < len; k++)
			low += (unsigned char)c->tb[w->tstart + k] <= 3;
		if (low != w->nmark) {
			/* control bytes from $'\x01' look like marks: the value is unknown */
			w->flags |= MOAT_SHW_EXPAND;
			opaque = true;
		} else if (w->closed)
			brace = true;
	}
	/* with a brace expansion, the marked text follows the text */
	t = moat_arena_alloc(c->arena, brace ? 2 * len + 2 : len + 1);
	if (!t)
		return poom(p);
	memcpy(t, c->tb + w->tstart, len);
	t[len] = '\0';
	c->tlen = w->tstart;
	if (brace) {
		memcpy(t + len + 1, t, len);
		t[2 * len + 1] = '\0';
		w->flags |= MOAT_SHW_BRACE;
	}
	if (w->nmark) {
		for (size_t k = 0; k < len; k++) {
			if (t[k] == 1)
				t[k] = '{';
			else if (t[k] == 2)
				t[k] = ',';
			else if (t[k] == 3)
				t[k] = '}';
		}
	}
	out->text = t;
	out->len = (uint32_t)len;
	out->off = moff(p, start);
	out->flags = (uint16_t)w->flags;
	out->eq = (uint16_t)(eq <= UINT16_MAX ? eq : 0);
	out->subs = w->subs;
	out->spans = (w->flags & MOAT_SHW_EXPAND) && !opaque ? w->spans : NULL;
	if (++c->nwords > MOAT_SH_MAX_WORDS)
		return perr(p, start, "too many words");
	return 0;
}

/* NAME=, NAME+=, NAME[sub]= at p->i: index of '=' plus one, else 0. The name
 * part is plain unquoted text, so indexes in the source equal those in the text. */
static unsigned scan_assign(const struct psr *p)
{
	const char *s = p->s + p->i;
	size_t max = p->n - p->i, k = 0;

	if (max == 0 || !is_alpha_((unsigned char)s[0]))
		return 0;
	while (k < max && (is_alpha_((unsigned char)s[k]) || is_digit((unsigned char)s[k])))
		k++;
	if (k < max && s[k] == '[') {
		while (k < max && s[k] != ']') {
			unsigned char ch = (unsigned char)s[k];

			if ((wcls[ch] & CM) || ch == '\'' || ch == '"' || ch == '\\' || ch == '`')
				return 0;
			k++;
		}
		if (k >= max)
			return 0;
		k++;
	}
	if (k < max && s[k] == '+')
		k++;
	if (k < max && s[k] == '=' && k < UINT16_MAX)
		return (unsigned)k + 1;
	return 0;
}

static int lex_squote(struct psr *p, struct wst *w)
{
	const char *e = memchr(p->s + p->i + 1, '\'', p->n - p->i - 1);
	int r;

	if (!e)
		return perr(p, p->i, "unterminated single quote");
	r = tput(p, p->s + p->i + 1, (size_t)(e - (p->s + p->i + 1)));
	p->i = (size_t)(e - p->s) + 1;
	w->flags |= MOAT_SHW_QUOTED;
	return r;
}

static int put_utf8(struct psr *p, unsigned long cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return tput(p, b, n);
}

/* $'...': ANSI-C escapes decoded. A decoded NUL ends the string, as in bash. */
static int lex_ansi(struct psr *p, struct wst *w)
{
	size_t st = p->i;
	bool cut = false;
	int r = 0;

	p->i += 2;
	w->flags |= MOAT_SHW_QUOTED;
	for (;;) {
		int ch = pc(p, 0), e;
		unsigned long v;
		bool utf = false;

		if (ch < 0)
			return perr(p, st, "unterminated $'");
		if (ch == '\'') {
			p->i++;
			return 0;
		}
		if (ch != '\\') {
			if (!cut)
				r = tputc(p, (char)ch);
			p->i++;
			if (r)
				return r;
			continue;
		}
		e = pc(p, 1);
		if (e < 0)
			return perr(p, st, "unterminated $'");
		p->i += 2;
		switch (e) {
		case 'a': v = 7; break;
		case 'b': v = 8; break;
		case 'e':
		case 'E': v = 27; break;
		case 'f': v = 12; break;
		case 'n': v = 10; break;
		case 'r': v = 13; break;
		case 't': v = 9; break;
		case 'v': v = 11; break;
		case '\\':
		case '\'':
		case '"':
		case '?': v = (unsigned long)e; break;
		case '0': case '1': case '2': case '3':
		case '4': case '5': case '6': case '7':
			v = (unsigned long)(e - '0');
			for (int k = 0; k < 2 && pc(p, 0) >= '0' && pc(p, 0) <= '7'; k++)
				v = v * 8 + (unsigned long)(p->s[p->i++] - '0');
			v &= 0xff;
			break;
		case 'x':
		case 'u':
		case 'U': {
			int max = e == 'x' ? 2 : e == 'u' ? 4 : 8, k = 0;

			v = 0;
			while (k < max && moat_hexval(pc(p, 0)) >= 0) {
				v = v * 16 + (unsigned long)moat_hexval(p->s[p->i++]);
				k++;
			}
			if (k == 0) { /* no digits: kept literally */
				if (!cut && ((r = tputc(p, '\\')) || (r = tputc(p, (char)e))))
					return r;
				continue;
			}
			utf = e != 'x';
			break;
		}
		case 'c': {
			int x = pc(p, 0);

			if (x < 0 || x == '\'') {
				if (!cut && ((r = tputc(p, '\\')) || (r = tputc(p, 'c'))))
					return r;
				continue;
			}
			p->i++;
			v = x == '?' ? 0x7f : (unsigned long)(x & 0x1f);
			break;
		}
		default:
			if (!cut && ((r = tputc(p, '\\')) || (r = tputc(p, (char)e))))
				return r;
			continue;
		}
		if (v == 0) {
			cut = true;
			continue;
		}
		if (cut)
			continue;
		if (utf && (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)))
			continue; /* not a character: dropped */
		r = utf ? put_utf8(p, v) : tputc(p, (char)v);
		if (r)
			return r;
	}
}

/* The text of $( ), <( ), >( ): parse a command list up to the ')'. */
static int lex_cmdsubst(struct psr *p, struct wst *w, size_t st, int kind, bool dq)
{
	struct moat_sh_node *body;
	size_t from;
	int r;

	p->i = st + 2;
	if ((r = enter(p, st)) || (r = parse_list(p, T_RPAREN, &body)))
		return r;
	if (pc(p, 0) != ')')
		return perr(p, st, kind == MOAT_SH_SUB_CMD ? "unterminated command substitution"
							   : "unterminated process substitution");
	p->i++;
	leave(p);
	if ((r = add_sub(p, w, kind, st, body)))
		return r;
	from = p->c->tlen;
	if ((r = tput(p, p->s + st, p->i - st)))
		return r;
	return add_span(p, w, kind == MOAT_SH_SUB_CMD ? MOAT_SH_SPAN_CMD : MOAT_SH_SPAN_PROC, from,
			dq, w->subs_tail);
}

/* Is the '((' whose content starts at from arithmetic? bash's rule: the
 * matching pair closes with "))". 1 with *ret_end at the first ')' of "))",
 * 0 if not, <0 on error. Scans a matched pair once; quotes are skipped. */
static int arith_scan(struct psr *p, size_t from, size_t *ret_end)
{
	const char *s = p->s;
	size_t j = from, n = p->n;
	unsigned depth = 0;

	while (j < n) {
		switch (s[j]) {
		case '\\':
			j += 2;
			continue;
		case '\'': {
			const char *e = memchr(s + j + 1, '\'', n - j - 1);

			if (!e)
				return 0;
			j = (size_t)(e - s) + 1;
			continue;
		}
		case '"':
			j++;
			while (j < n && s[j] != '"')
				j += s[j] == '\\' ? 2 : 1;
			if (j >= n)
				return 0;
			j++;
			continue;
		case '(':
			/* SECURITY: bounded, so nested "$((" cannot make this quadratic */
			if (++depth > 2 * MOAT_SH_MAX_NEST)
				return perr(p, from, "nesting too deep");
			break;
		case ')':
			if (depth == 0) {
				if (j + 1 < n && s[j + 1] == ')') {
					*ret_end = j;
					return 1;
				}
				return 0;
			}
			depth--;
			break;
		default:
			break;
		}
		j++;
	}
	return 0;
}

/* Walk [p->i, p->n) collecting substitutions (text appended is discarded by the caller). */
static int scan_expansions(struct psr *p, struct wst *w)
{
	int r = 0;

	while (p->i < p->n && !r) {
		switch (p->s[p->i]) {
		case '\\':
			p->i += p->i + 1 < p->n ? 2 : 1;
			break;
		case '\'':
			r = lex_squote(p, w);
			break;
		case '"':
			r = lex_dq(p, w, false);
			break;
		case '$':
			r = lex_dollar(p, w, false);
			break;
		case '`':
			r = lex_backq(p, w, false);
			break;
		default:
			p->i++;
			break;
		}
	}
	return r;
}

/* The expression of $(( )), (( )) or for (( )) in [from, end): substitutions collected. */
static int scan_arith_body(struct psr *p, struct wst *w, size_t from, size_t end)
{
	size_t saved_n = p->n, saved_t = p->c->tlen;
	unsigned saved_f = w->flags;
	struct moat_sh_span *saved_s = w->spans_tail;
	int r;

	if ((r = enter(p, from)))
		return r;
	p->i = from;
	p->n = end;
	r = scan_expansions(p, w);
	p->n = saved_n;
	if (r)
		return r;
	if (p->i != end)
		return perr(p, from, "unterminated arithmetic expression");
	leave(p);
	p->c->tlen = saved_t;
	drop_spans(w, saved_s);
	w->flags = saved_f | MOAT_SHW_EXPAND | (w->flags & (MOAT_SHW_SUBST | MOAT_SHW_PROCSUBST));
	return 0;
}

/* ${...}: balanced braces, quotes and nested expansions; kept verbatim. */
static int lex_param(struct psr *p, struct wst *w, bool in_dq)
{
	size_t st = p->i, saved_t = p->c->tlen;
	unsigned saved_f = w->flags, depth = 1;
	struct moat_sh_span *saved_s = w->spans_tail;
	int r;

	if ((r = enter(p, st)))
		return r;
	p->i += 2;
	for (;;) {
		int ch = pc(p, 0);

		if (ch < 0)
			return perr(p, st, "unterminated ${");
		switch (ch) {
		case '\\':
			p->i += p->i + 1 < p->n ? 2 : 1;
			break;
		case '\'':
			if (in_dq)
				p->i++;
			else if ((r = lex_squote(p, w)))
				return r;
			break;
		case '"':
			if ((r = lex_dq(p, w, false)))
				return r;
			break;
		case '$':
			if ((r = lex_dollar(p, w, in_dq)))
				return r;
			break;
		case '`':
			if ((r = lex_backq(p, w, in_dq)))
				return r;
			break;
		case '{':
			depth++;
			p->i++;
			break;
		case '}':
			p->i++;
			if (--depth == 0)
				goto done;
			break;
		default:
			p->i++;
			break;
		}
	}
done:
	leave(p);
	p->c->tlen = saved_t;
	drop_spans(w, saved_s);
	w->flags = saved_f | MOAT_SHW_EXPAND | (w->flags & (MOAT_SHW_SUBST | MOAT_SHW_PROCSUBST));
	if ((r = tput(p, p->s + st, p->i - st)))
		return r;
	return add_span(p, w, MOAT_SH_SPAN_PARAM, saved_t, in_dq, NULL);
}

static int lex_dollar(struct psr *p, struct wst *w, bool in_dq)
{
	size_t st = p->i;
	int c1 = pc(p, 1), r;

	if (c1 == '\'' && !in_dq)
		return lex_ansi(p, w);
	if (c1 == '"' && !in_dq) {
		p->i++;
		return lex_dq(p, w, false);
	}
	if (c1 == '(') {
		if (pc(p, 2) == '(') {
			size_t end;

			r = arith_scan(p, st + 3, &end);
			if (r < 0)
				return r;
			if (r == 1) {
				size_t from = p->c->tlen;

				if ((r = scan_arith_body(p, w, st + 3, end)))
					return r;
				p->i = end + 2;
				if ((r = tput(p, p->s + st, p->i - st)))
					return r;
				return add_span(p, w, MOAT_SH_SPAN_ARITH, from, in_dq, NULL);
			}
		}
		return lex_cmdsubst(p, w, st, MOAT_SH_SUB_CMD, in_dq);
	}
	if (c1 == '{')
		return lex_param(p, w, in_dq);
	if (is_alpha_(c1)) {
		size_t j = st + 2, from = p->c->tlen;

		while (j < p->n && (is_alpha_((unsigned char)p->s[j]) || is_digit((unsigned char)p->s[j])))
			j++;
		w->flags |= MOAT_SHW_EXPAND;
		if ((r = tput(p, p->s + st, j - st)))
			return r;
		p->i = j;
		return add_span(p, w, MOAT_SH_SPAN_PARAM, from, in_dq, NULL);
	}
	if (is_digit(c1) || (c1 > 0 && strchr("@*#?$!-", c1))) {
		size_t from = p->c->tlen;

		w->flags |= MOAT_SHW_EXPAND;
		if ((r = tput(p, p->s + st, 2)))
			return r;
		p->i += 2;
		return add_span(p, w, MOAT_SH_SPAN_PARAM, from, in_dq, NULL);
	}
	p->i++;
	return tputc(p, '$');
}

/* `...`: the body is unescaped (\$ \` \\, and \" inside double quotes) into a
 * copy and parsed as a command list. */
static int lex_backq(struct psr *p, struct wst *w, bool in_dq)
{
	struct sh_ctx *c = p->c;
	size_t st = p->i, j = st + 1, k = 0;
	struct moat_sh_node *body;
	struct psr q;
	char *b;
	int r;

	while (j < p->n) {
		if (p->s[j] == '\\' && j + 1 < p->n) {
			j += 2;
			continue;
		}
		if (p->s[j] == '`')
			break;
		j++;
	}
	if (j >= p->n)
		return perr(p, st, "unterminated backquote");
	b = moat_arena_alloc(c->arena, j - st);
	if (!b)
		return poom(p);
	for (size_t q2 = st + 1; q2 < j; q2++) {
		char ch = p->s[q2];

		if (ch == '\\' && q2 + 1 < j) {
			char e = p->s[q2 + 1];

			if (e == '$' || e == '`' || e == '\\' || (in_dq && e == '"')) {
				b[k++] = e;
				q2++;
				continue;
			}
		}
		b[k++] = ch;
	}
	b[k] = '\0';
	if ((r = enter(p, st)))
		return r;
	memset(&q, 0, sizeof(q));
	q.c = c;
	q.s = b;
	q.n = k;
	q.copy = true;
	q.base = p->copy ? p->base : st;
	if ((r = parse_list(&q, T_EOF, &body)))
		return r;
	if (q.hd_head)
		return perr(&q, 0, "unterminated here-document");
	leave(p);
	if ((r = add_sub(p, w, MOAT_SH_SUB_CMD, st, body)))
		return r;
	p->i = j + 1;
	{
		size_t from = c->tlen;

		if ((r = tput(p, p->s + st, p->i - st)))
			return r;
		return add_span(p, w, MOAT_SH_SPAN_CMD, from, in_dq, w->subs_tail);
	}
}

/* "..." (or an unquoted here-document body up to p->n when heredoc). */
static int lex_dq(struct psr *p, struct wst *w, bool heredoc)
{
	size_t open = p->i;
	int r = 0;

	if (!heredoc) {
		p->i++;
		w->flags |= MOAT_SHW_QUOTED;
	}
	for (;;) {
		size_t j = p->i;
		int e;

		while (j < p->n && !dqcls[(unsigned char)p->s[j]])
			j++;
		if (j > p->i && (r = tput(p, p->s + p->i, j - p->i)))
			return r;
		p->i = j;
		if (j >= p->n)
			return heredoc ? 0 : perr(p, open, "unterminated double quote");
		switch (p->s[j]) {
		case '"':
			p->i++;
			if (!heredoc)
				return 0;
			r = tputc(p, '"');
			break;
		case '\\':
			e = pc(p, 1);
			if (e == '\n') {
				p->i += 2;
			} else if (e == '$' || e == '`' || e == '\\' || (e == '"' && !heredoc)) {
				r = tputc(p, (char)e);
				p->i += 2;
			} else {
				r = tputc(p, '\\');
				p->i++;
			}
			break;
		case '$':
			r = lex_dollar(p, w, true);
			break;
		case '`':
			r = lex_backq(p, w, !heredoc);
			break;
		}
		if (r)
			return r;
	}
}

/* One word at p->i (which is not a metacharacter, except "<(" / ">("). */
static int lex_word(struct psr *p, struct moat_sh_word *out, bool assign_ok)
{
	struct wst w;
	size_t start = p->i;
	unsigned eq = assign_ok ? scan_assign(p) : 0;
	int r = 0;

	/* fast path: a plain word, no quoting, expansion, glob or brace */
	{
		size_t j = p->i;

		while (j < p->n && !wcls[(unsigned char)p->s[j]])
			j++;
		if (j > p->i &&
		    (j >= p->n || ((wcls[(unsigned char)p->s[j]] & CM) &&
				   !((p->s[j] == '<' || p->s[j] == '>') && j + 1 < p->n &&
				     p->s[j + 1] == '(')))) {
			size_t len = j - start;
			char *t = moat_arena_alloc(p->c->arena, len + 1);

			if (!t)
				return poom(p);
			memcpy(t, p->s + start, len);
			t[len] = '\0';
			memset(out, 0, sizeof(*out));
			out->text = t;
			out->len = (uint32_t)len;
			out->off = moff(p, start);
			out->flags = p->s[start] == '~' ? MOAT_SHW_TILDE : 0;
			if (eq && start + eq < j && p->s[start + eq] == '~')
				out->flags |= MOAT_SHW_ATILDE;
			out->eq = (uint16_t)eq;
			p->i = j;
			if (++p->c->nwords > MOAT_SH_MAX_WORDS)
				return perr(p, start, "too many words");
			return 0;
		}
	}
	memset(&w, 0, sizeof(w));
	w.tstart = p->c->tlen;
	if (pc(p, 0) == '~')
		w.flags |= MOAT_SHW_TILDE;
	if (eq && start + eq < p->n && p->s[start + eq] == '~')
		w.flags |= MOAT_SHW_ATILDE;
	for (;;) {
		size_t j = p->i;
		int ch;

		while (j < p->n && !wcls[(unsigned char)p->s[j]])
			j++;
		if (j > p->i && (r = tput(p, p->s + p->i, j - p->i)))
			return r;
		p->i = j;
		if (j >= p->n)
			break;
		ch = (unsigned char)p->s[j];
		if (wcls[ch] & CM) {
			if ((ch == '<' || ch == '>') && pc(p, 1) == '(') {
				r = lex_cmdsubst(p, &w, p->i, ch == '<' ? MOAT_SH_SUB_IN : MOAT_SH_SUB_OUT,
						 false);
				if (r)
					return r;
				continue;
			}
			break;
		}
		switch (ch) {
		case '\\': {
			int e = pc(p, 1);

			if (e == '\n') {
				p->i += 2;
			} else if (e < 0) {
				r = tputc(p, '\\');
				p->i++;
			} else {
				r = tputc(p, (char)e);
				p->i += 2;
				w.flags |= MOAT_SHW_QUOTED;
			}
			break;
		}
		case '\'':
			r = lex_squote(p, &w);
			break;
		case '"':
			r = lex_dq(p, &w, false);
			break;
		case '$':
			r = lex_dollar(p, &w, false);
			break;
		case '`':
			r = lex_backq(p, &w, false);
			break;
		case '*':
		case '?':
			w.flags |= MOAT_SHW_GLOB;
			r = tputc(p, (char)ch);
			p->i++;
			break;
		case '[':
			w.bracket = true;
			r = tputc(p, '[');
			p->i++;
			break;
		case ']':
			if (w.bracket)
				w.flags |= MOAT_SHW_GLOB;
			r = tputc(p, ']');
			p->i++;
			break;
		case '{':
			w.bdepth++;
			w.nmark++;
			r = tputc(p, 1);
			p->i++;
			break;
		case ',':
			if (w.bdepth)
				w.nmark++;
			r = tputc(p, w.bdepth ? 2 : ',');
			p->i++;
			break;
		case '}':
			if (w.bdepth) {
				w.bdepth--;
				w.nmark++;
				w.closed = true;
				r = tputc(p, 3);
			} else {
				r = tputc(p, '}');
			}
			p->i++;
			break;
		default:
			r = tputc(p, (char)ch);
			p->i++;
			break;
		}
		if (r)
			return r;
	}
	return finish_word(p, &w, start, eq, out);
}

/* ---- redirections and here-documents -------------------------------------- */

/* A redirection at p->i? *ret_fd: -1, a number, or -2 for {name}; *ret_skip: prefix length. */
static bool redir_start(const struct psr *p, int *ret_fd, size_t *ret_skip)
{
	int ch = pc(p, 0);
	size_t j;

	*ret_fd = -1;
	*ret_skip = 0;
	if (ch == '<' || ch == '>')
		return pc(p, 1) != '(';
	if (ch == '&')
		return pc(p, 1) == '>';
	if (is_digit(ch)) {
		long fd = 0;

		for (j = p->i; j < p->n && is_digit((unsigned char)p->s[j]); j++)
			fd = fd < 100000 ? fd * 10 + (p->s[j] - '0') : fd;
		if (j < p->n && (p->s[j] == '<' || p->s[j] == '>') &&
		    !(j + 1 < p->n && p->s[j + 1] == '(')) {
			*ret_fd = (int)fd;
			*ret_skip = j - p->i;
			return true;
		}
		return false;
	}
	if (ch == '{') {
		j = p->i + 1;
		if (j >= p->n || !is_alpha_((unsigned char)p->s[j]))
			return false;
		while (j < p->n && (is_alpha_((unsigned char)p->s[j]) || is_digit((unsigned char)p->s[j])))
			j++;
		if (j + 1 < p->n && p->s[j] == '}' && (p->s[j + 1] == '<' || p->s[j + 1] == '>') &&
		    !(j + 2 < p->n && p->s[j + 2] == '(')) {
			*ret_fd = -2;
			*ret_skip = j + 1 - p->i;
			return true;
		}
	}
	return false;
}

static int parse_redir(struct psr *p, struct moat_sh_redir ***tail)
{
	struct moat_sh_redir *rd;
	size_t st = p->i, skip;
	int fd, op, r;

	redir_start(p, &fd, &skip);
	p->i += skip;
	if (pc(p, 0) == '&') {
		p->i += 2;
		op = MOAT_SH_R_ALL;
		if (pc(p, 0) == '>') {
			p->i++;
			op = MOAT_SH_R_ALL_APPEND;
		}
	} else if (pc(p, 0) == '<') {
		p->i++;
		switch (pc(p, 0)) {
		case '<':
			p->i++;
			if (pc(p, 0) == '<') {
				p->i++;
				op = MOAT_SH_R_HERESTRING;
			} else if (pc(p, 0) == '-') {
				p->i++;
				op = MOAT_SH_R_HEREDOC_STRIP;
			} else {
				op = MOAT_SH_R_HEREDOC;
			}
			break;
		case '&':
			p->i++;
			op = MOAT_SH_R_DUPIN;
			break;
		case '>':
			p->i++;
			op = MOAT_SH_R_RDWR;
			break;
		default:
			op = MOAT_SH_R_IN;
			break;
		}
	} else {
		p->i++;
		switch (pc(p, 0)) {
		case '>':
			p->i++;
			op = MOAT_SH_R_APPEND;
			break;
		case '&':
			p->i++;
			op = MOAT_SH_R_DUPOUT;
			break;
		case '|':
			p->i++;
			op = MOAT_SH_R_CLOBBER;
			break;
		default:
			op = MOAT_SH_R_OUT;
			break;
		}
	}
	skip_blanks(p);
	{
		int ch = pc(p, 0);

		if (ch < 0 || ((wcls[ch] & CM) && !((ch == '<' || ch == '>') && pc(p, 1) == '(')))
			return perr(p, ch < 0 ? st : p->i, "missing redirection target");
	}
	rd = moat_arena_alloc(p->c->arena, sizeof(*rd));
	if (!rd)
		return poom(p);
	memset(rd, 0, sizeof(*rd));
	rd->op = op;
	rd->fd = fd;
	if ((r = lex_word(p, &rd->target, false)))
		return r;
	if (op == MOAT_SH_R_HEREDOC || op == MOAT_SH_R_HEREDOC_STRIP) {
		struct hd *h = moat_arena_alloc(p->c->arena, sizeof(*h));

		if (!h)
			return poom(p);
		h->r = rd;
		h->delim = rd->target.text;
		h->dlen = rd->target.len;
		h->off = moff(p, st);
		h->strip = op == MOAT_SH_R_HEREDOC_STRIP;
		h->literal = (rd->target.flags & MOAT_SHW_QUOTED) != 0;
		h->next = NULL;
		if (p->hd_tail)
			p->hd_tail->next = h;
		else
			p->hd_head = h;
		p->hd_tail = h;
		rd->body.text = "";
		rd->body.off = moff(p, st);
	}
	**tail = rd;
	*tail = &rd->next;
	return 0;
}

/* At the start of a line: the bodies of the here-documents opened on the line before. */
static int read_heredocs(struct psr *p)
{
	struct hd *h = p->hd_head;
	int r;

	p->hd_head = p->hd_tail = NULL;
	for (; h; h = h->next) {
		size_t bstart = p->i, bend;
		struct moat_sh_word *body = &h->r->body;

		for (;;) {
			const char *e;
			size_t ls = p->i, le, cs;

			if (p->i >= p->n)
				return perr(p, h->off, "unterminated here-document");
			e = memchr(p->s + ls, '\n', p->n - ls);
			le = e ? (size_t)(e - p->s) : p->n;
			cs = ls;
			if (h->strip)
				while (cs < le && p->s[cs] == '\t')
					cs++;
			p->i = e ? le + 1 : p->n;
			if (le - cs == h->dlen && memcmp(p->s + cs, h->delim, h->dlen) == 0) {
				bend = ls;
				break;
			}
		}
		if (h->literal) {
			body->text = moat_arena_strndup(p->c->arena, p->s + bstart, bend - bstart);
			if (!body->text)
				return poom(p);
			body->len = (uint32_t)(bend - bstart);
			body->flags = MOAT_SHW_QUOTED;
			body->off = moff(p, bstart);
		} else {
			struct wst w;
			size_t saved_i = p->i, saved_n = p->n;

			memset(&w, 0, sizeof(w));
			w.tstart = p->c->tlen;
			p->i = bstart;
			p->n = bend;
			r = lex_dq(p, &w, true);
			if (!r && p->hd_head)
				r = perr(p, p->hd_head->off, "unterminated here-document");
			if (!r)
				r = finish_word(p, &w, bstart, 0, body);
			p->n = saved_n;
			p->i = saved_i;
			if (r)
				return r;
		}
	}
	return 0;
}

/* Redirections after a compound command. */
static int parse_trailing_redirs(struct psr *p, struct moat_sh_node *n)
{
	struct moat_sh_redir **tail = &n->redirs;
	int fd, r;
	size_t skip;

	while (*tail)
		tail = &(*tail)->next;
	for (;;) {
		skip_blanks(p);
		if (!redir_start(p, &fd, &skip))
			return 0;
		if ((r = parse_redir(p, &tail)))
			return r;
	}
}

/* ---- commands ----------------------------------------------------------- */

static int expect_kw(struct psr *p, int kw, size_t len, size_t open, const char *msg)
{
	skip_ws(p);
	if (peek_kw(p, NULL) == kw) {
		p->i += len;
		return 0;
	}
	return perr(p, pc(p, 0) < 0 ? open : p->i, msg);
}

static bool is_compound_body(const struct moat_sh_node *n)
{
	return n->kind != MOAT_SH_SIMPLE && n->kind != MOAT_SH_FUNC && n->kind != MOAT_SH_COPROC;
}

static int parse_simple(struct psr *p, struct moat_sh_node **ret)
{
	struct moat_sh_node *n;
	struct wvec words = {0}, assigns = {0};
	struct moat_sh_redir **tail;
	size_t st = p->i, last_end = SIZE_MAX;
	int r;

	if ((r = mknode(p, MOAT_SH_SIMPLE, st, &n)))
		return r;
	tail = &n->redirs;
	for (;;) {
		struct moat_sh_word w;
		int ch, fd;
		size_t skip;

		skip_ws(p);
		ch = pc(p, 0);
		if (ch < 0 || ch == '\n' || ch == ';' || ch == '|' || ch == ')')
			break;
		if (ch == '&' && pc(p, 1) != '>')
			break;
		if ((ch == '<' || ch == '>' || ch == '&' || ch == '{' || is_digit(ch)) &&
		    redir_start(p, &fd, &skip)) {
			if ((r = parse_redir(p, &tail)))
				return r;
			continue;
		}
		if (ch == '(') {
			if (words.n == 1 && assigns.n == 0 && !n->redirs) {
				/* name () compound-command */
				struct moat_sh_node *body;
				struct moat_sh_word name0 = *wv_at(p, &words, 0), *name = &name0;

				wv_pop(p, &words);

				p->i++;
				skip_blanks(p);
				if (pc(p, 0) != ')')
					return perr(p, p->i, "expected ')' in function definition");
				p->i++;
				if ((r = skip_ws_nl(p)) || (r = parse_command(p, &body)))
					return r;
				if (!is_compound_body(body))
					return perr(p, st, "function body must be a compound command");
				n->kind = MOAT_SH_FUNC;
				n->name = moat_arena_alloc(p->c->arena, sizeof(*n->name));
				if (!n->name)
					return poom(p);
				*n->name = *name;
				n->kids = body;
				*ret = n;
				return 0;
			}
			const struct moat_sh_word *la =
				assigns.n ? wv_at(p, &assigns, assigns.n - 1) : NULL;

			if (words.n == 0 && la && last_end == p->i && la->len > 0 &&
			    la->text[la->len - 1] == '=') {
				/* NAME=( elements ) */
				size_t open = p->i;

				p->i++;
				for (;;) {
					if ((r = skip_ws_nl(p)))
						return r;
					ch = pc(p, 0);
					if (ch == ')') {
						p->i++;
						break;
					}
					if (ch < 0)
						return perr(p, open, "unterminated array assignment");
					if ((wcls[ch] & CM) && !((ch == '<' || ch == '>') && pc(p, 1) == '('))
						return perr(p, p->i, "unexpected token in array assignment");
					if ((r = lex_word(p, &w, false)) || (r = wpush(p, &assigns, &w)))
						return r;
				}
				continue;
			}
			return perr(p, p->i, "unexpected '('");
		}
		if ((r = lex_word(p, &w, words.n == 0)))
			return r;
		last_end = p->i;
		if (words.n == 0 && w.eq)
			r = wpush(p, &assigns, &w);
		else
			r = wpush(p, &words, &w);
		if (r)
			return r;
	}
	if (words.n == 0 && assigns.n == 0 && !n->redirs)
		return perr(p, st, "missing command");
	if ((r = wv_copy(p, &words, &n->words, &n->nwords)) ||
	    (r = wv_copy(p, &assigns, &n->assigns, &n->nassigns)))
		return r;
	wv_pop(p, assigns.started ? &assigns : &words);
	*ret = n;
	return 0;
}

static int parse_if(struct psr *p, struct moat_sh_node *n)
{
	struct moat_sh_node **tail = &n->kids;
	size_t st = p->i;
	int r;

	p->i += 2;
	for (;;) {
		int kw;

		if ((r = parse_list(p, T_THEN, tail)))
			return r;
		tail = &(*tail)->next;
		if ((r = expect_kw(p, KW_THEN, 4, st, "unterminated 'if'")))
			return r;
		if ((r = parse_list(p, T_ELSE | T_FI, tail)))
			return r;
		tail = &(*tail)->next;
		kw = peek_kw(p, NULL);
		if (kw == KW_ELIF) {
			p->i += 4;
			continue;
		}
		if (kw == KW_ELSE) {
			p->i += 4;
			if ((r = parse_list(p, T_FI, tail)))
				return r;
		}
		return expect_kw(p, KW_FI, 2, st, "unterminated 'if'");
	}
}

static int parse_do_done(struct psr *p, struct moat_sh_node *n, size_t st)
{
	int r;

	if ((r = skip_ws_nl(p)))
		return r;
	if (peek_kw(p, NULL) == KW_LBRACE)
		return parse_command(p, &n->kids);
	if ((r = expect_kw(p, KW_DO, 2, st, "expected 'do'")) ||
	    (r = parse_list(p, T_DONE, &n->kids)))
		return r;
	return expect_kw(p, KW_DONE, 4, st, "unterminated loop: expected 'done'");
}

static int parse_while(struct psr *p, struct moat_sh_node *n)
{
	size_t st = p->i;
	int r;

	p->i += 5;
	if ((r = parse_list(p, T_DO, &n->kids)))
		return r;
	if ((r = expect_kw(p, KW_DO, 2, st, "unterminated loop: expected 'do'")) ||
	    (r = parse_list(p, T_DONE, &n->kids->next)))
		return r;
	return expect_kw(p, KW_DONE, 4, st, "unterminated loop: expected 'done'");
}

static int parse_for(struct psr *p, struct moat_sh_node *n, size_t kwlen)
{
	size_t st = p->i;
	struct wvec words = {0};
	int r, ch;

	p->i += kwlen;
	skip_blanks(p);
	if (kwlen == 3 && pc(p, 0) == '(' && pc(p, 1) == '(') {
		struct moat_sh_word w;
		struct wst ws;
		size_t from = p->i + 2, end;

		r = arith_scan(p, from, &end);
		if (r < 0)
			return r;
		if (r == 0)
			return perr(p, p->i, "bad arithmetic for loop");
		memset(&ws, 0, sizeof(ws));
		ws.tstart = p->c->tlen;
		if ((r = scan_arith_body(p, &ws, from, end)) || (r = tput(p, p->s + from, end - from)))
			return r;
		p->i = end;
		if ((r = finish_word(p, &ws, from, 0, &w)))
			return r;
		p->i = end + 2;
		n->kind = MOAT_SH_ARITH_FOR;
		n->words = moat_arena_alloc(p->c->arena, sizeof(*n->words));
		if (!n->words)
			return poom(p);
		*n->words = w;
		n->nwords = 1;
		skip_ws(p);
		if (pc(p, 0) == ';')
			p->i++;
		return parse_do_done(p, n, st);
	}
	ch = pc(p, 0);
	if (ch < 0 || (wcls[ch] & CM))
		return perr(p, ch < 0 ? st : p->i, "expected a variable name after 'for'");
	n->name = moat_arena_alloc(p->c->arena, sizeof(*n->name));
	if (!n->name)
		return poom(p);
	if ((r = lex_word(p, n->name, false)) || (r = skip_ws_nl(p)))
		return r;
	if (peek_kw(p, NULL) == KW_IN) {
		p->i += 2;
		for (;;) {
			struct moat_sh_word w;

			skip_ws(p);
			ch = pc(p, 0);
			if (ch == '\n' || ch == ';')
				break;
			if (ch < 0)
				return perr(p, st, "unterminated 'for'");
			if ((wcls[ch] & CM) && !((ch == '<' || ch == '>') && pc(p, 1) == '('))
				return perr(p, p->i, "unexpected token in 'for' list");
			if ((r = lex_word(p, &w, false)) || (r = wpush(p, &words, &w)))
				return r;
		}
		if ((r = wv_copy(p, &words, &n->words, &n->nwords)))
			return r;
		wv_pop(p, &words);
	}
	skip_ws(p);
	if (pc(p, 0) == ';')
		p->i++;
	return parse_do_done(p, n, st);
}

static int parse_case(struct psr *p, struct moat_sh_node *n)
{
	size_t st = p->i;
	struct moat_sh_node **tail = &n->kids;
	int r, ch;

	p->i += 4;
	skip_blanks(p);
	ch = pc(p, 0);
	if (ch < 0 || (wcls[ch] & CM))
		return perr(p, ch < 0 ? st : p->i, "expected a word after 'case'");
	n->words = moat_arena_alloc(p->c->arena, sizeof(*n->words));
	if (!n->words)
		return poom(p);
	n->nwords = 1;
	if ((r = lex_word(p, n->words, false)) || (r = skip_ws_nl(p)))
		return r;
	if ((r = expect_kw(p, KW_IN, 2, st, "expected 'in' after 'case WORD'")))
		return r;
	for (;;) {
		struct moat_sh_node *item;
		struct wvec pats = {0};

		if ((r = skip_ws_nl(p)))
			return r;
		if (pc(p, 0) < 0)
			return perr(p, st, "unterminated 'case'");
		if (peek_kw(p, NULL) == KW_ESAC) {
			p->i += 4;
			return 0;
		}
		if ((r = mknode(p, MOAT_SH_CASE_ITEM, p->i, &item)))
			return r;
		if (pc(p, 0) == '(')
			p->i++;
		for (;;) {
			struct moat_sh_word w;

			skip_blanks(p);
			ch = pc(p, 0);
			if (ch < 0 || ((wcls[ch] & CM) && !((ch == '<' || ch == '>') && pc(p, 1) == '(')))
				return perr(p, ch < 0 ? st : p->i, "expected a case pattern");
			if ((r = lex_word(p, &w, false)) || (r = wpush(p, &pats, &w)))
				return r;
			skip_blanks(p);
			if (pc(p, 0) != '|')
				break;
			p->i++;
		}
		if (pc(p, 0) != ')')
			return perr(p, pc(p, 0) < 0 ? st : p->i, "expected ')' after case pattern");
		p->i++;
		if ((r = wv_copy(p, &pats, &item->words, &item->nwords)))
			return r;
		wv_pop(p, &pats);
		if ((r = parse_list(p, T_ESAC | T_DSEMI, &item->kids)))
			return r;
		*tail = item;
		tail = &item->next;
		skip_ws(p);
		if (pc(p, 0) == ';' && pc(p, 1) == ';') {
			p->i += 2;
			if (pc(p, 0) == '&')
				p->i++;
		} else if (pc(p, 0) == ';' && pc(p, 1) == '&') {
			p->i += 2;
		} else if (peek_kw(p, NULL) == KW_ESAC) {
			p->i += 4;
			return 0;
		} else {
			return perr(p, pc(p, 0) < 0 ? st : p->i, "unterminated 'case'");
		}
	}
}

static int parse_cond(struct psr *p, struct moat_sh_node *n)
{
	size_t st = p->i;
	struct wvec words = {0};
	int r;

	p->i += 2;
	for (;;) {
		struct moat_sh_word w;
		int ch;

		skip_blanks(p);
		ch = pc(p, 0);
		if (ch < 0)
			return perr(p, st, "unterminated '[['");
		if (ch == '\n') {
			if ((r = take_newline(p)))
				return r;
			continue;
		}
		if (ch == ']' && pc(p, 1) == ']' && is_delim(pc(p, 2))) {
			p->i += 2;
			break;
		}
		if ((wcls[ch] & CM) && !((ch == '<' || ch == '>') && pc(p, 1) == '(')) {
			p->i++; /* operators: && || ( ) < > ! */
			continue;
		}
		if ((r = lex_word(p, &w, false)) || (r = wpush(p, &words, &w)))
			return r;
	}
	if ((r = wv_copy(p, &words, &n->words, &n->nwords)))
		return r;
	wv_pop(p, &words);
	return 0;
}

static int parse_command(struct psr *p, struct moat_sh_node **ret)
{
	struct moat_sh_node *n = NULL;
	size_t st, kl = 0;
	int r, ch, kw;

	skip_ws(p);
	st = p->i;
	ch = pc(p, 0);
	if (ch < 0)
		return perr(p, st, "missing command");
	if (ch == '\n' || ch == ';' || ch == '|' || ch == ')' || (ch == '&' && pc(p, 1) != '>'))
		return perr(p, st, "syntax error: missing command");
	if (ch == '(') {
		if (pc(p, 1) == '(') {
			size_t end;

			r = arith_scan(p, st + 2, &end);
			if (r < 0)
				return r;
			if (r == 1) {
				struct wst ws;

				if ((r = mknode(p, MOAT_SH_ARITH, st, &n)))
					return r;
				n->words = moat_arena_alloc(p->c->arena, sizeof(*n->words));
				if (!n->words)
					return poom(p);
				n->nwords = 1;
				memset(&ws, 0, sizeof(ws));
				ws.tstart = p->c->tlen;
				if ((r = scan_arith_body(p, &ws, st + 2, end)) ||
				    (r = tput(p, p->s + st + 2, end - st - 2)))
					return r;
				p->i = end;
				if ((r = finish_word(p, &ws, st + 2, 0, n->words)))
					return r;
				p->i = end + 2;
				goto redirs;
			}
		}
		if ((r = mknode(p, MOAT_SH_SUBSHELL, st, &n)) || (r = enter(p, st)))
			return r;
		p->i++;
		if ((r = parse_list(p, T_RPAREN, &n->kids)))
			return r;
		if (pc(p, 0) != ')')
			return perr(p, st, "unterminated '('");
		p->i++;
		leave(p);
		goto redirs;
	}
	kw = peek_kw(p, &kl);
	switch (kw) {
	case KW_LBRACE:
		if ((r = mknode(p, MOAT_SH_GROUP, st, &n)) || (r = enter(p, st)))
			return r;
		p->i++;
		if ((r = parse_list(p, T_RBRACE, &n->kids)))
			return r;
		if ((r = expect_kw(p, KW_RBRACE, 1, st, "unterminated '{'")))
			return r;
		leave(p);
		break;
	case KW_IF:
		if ((r = mknode(p, MOAT_SH_IF, st, &n)) || (r = enter(p, st)) || (r = parse_if(p, n)))
			return r;
		leave(p);
		break;
	case KW_WHILE:
	case KW_UNTIL:
		if ((r = mknode(p, kw == KW_WHILE ? MOAT_SH_WHILE : MOAT_SH_UNTIL, st, &n)) ||
		    (r = enter(p, st)) || (r = parse_while(p, n)))
			return r;
		leave(p);
		break;
	case KW_FOR:
	case KW_SELECT:
		if ((r = mknode(p, kw == KW_FOR ? MOAT_SH_FOR : MOAT_SH_SELECT, st, &n)) ||
		    (r = enter(p, st)) || (r = parse_for(p, n, kl)))
			return r;
		leave(p);
		break;
	case KW_CASE:
		if ((r = mknode(p, MOAT_SH_CASE, st, &n)) || (r = enter(p, st)) ||
		    (r = parse_case(p, n)))
			return r;
		leave(p);
		break;
	case KW_DLBRACK:
		if ((r = mknode(p, MOAT_SH_COND, st, &n)) || (r = parse_cond(p, n)))
			return r;
		break;
	case KW_FUNCTION: {
		struct moat_sh_node *body;

		if ((r = mknode(p, MOAT_SH_FUNC, st, &n)) || (r = enter(p, st)))
			return r;
		p->i += 8;
		skip_blanks(p);
		ch = pc(p, 0);
		if (ch < 0 || (wcls[ch] & CM))
			return perr(p, ch < 0 ? st : p->i, "expected a function name");
		n->name = moat_arena_alloc(p->c->arena, sizeof(*n->name));
		if (!n->name)
			return poom(p);
		if ((r = lex_word(p, n->name, false)))
			return r;
		skip_blanks(p);
		if (pc(p, 0) == '(') {
			p->i++;
			skip_blanks(p);
			if (pc(p, 0) != ')')
				return perr(p, p->i, "expected ')' in function definition");
			p->i++;
		}
		if ((r = skip_ws_nl(p)) || (r = parse_command(p, &body)))
			return r;
		if (!is_compound_body(body))
			return perr(p, st, "function body must be a compound command");
		n->kids = body;
		leave(p);
		*ret = n;
		return 0;
	}
	case KW_COPROC: {
		size_t j;

		if ((r = mknode(p, MOAT_SH_COPROC, st, &n)) || (r = enter(p, st)))
			return r;
		p->i += 6;
		skip_blanks(p);
		/* coproc NAME compound: NAME only when a compound command follows */
		j = p->i;
		if (j < p->n && is_alpha_((unsigned char)p->s[j])) {
			size_t save = p->i;
			int k2;

			while (j < p->n &&
			       (is_alpha_((unsigned char)p->s[j]) || is_digit((unsigned char)p->s[j])))
				j++;
			p->i = j;
			skip_blanks(p);
			k2 = peek_kw(p, NULL);
			if (j > save && is_delim(j < p->n ? (unsigned char)p->s[j] : -1) &&
			    (pc(p, 0) == '(' || k2 == KW_LBRACE || k2 == KW_IF || k2 == KW_WHILE ||
			     k2 == KW_UNTIL || k2 == KW_FOR || k2 == KW_CASE || k2 == KW_SELECT ||
			     k2 == KW_DLBRACK)) {
				p->i = save;
				n->name = moat_arena_alloc(p->c->arena, sizeof(*n->name));
				if (!n->name)
					return poom(p);
				if ((r = lex_word(p, n->name, false)))
					return r;
			} else {
				p->i = save;
			}
		}
		if ((r = parse_command(p, &n->kids)))
			return r;
		leave(p);
		*ret = n;
		return 0;
	}
	case KW_NONE:
	case KW_IN:
		return parse_simple(p, ret);
	default: {
		const char *msg;

		kw_term(kw, &msg);
		return perr(p, st, msg ? msg : "unexpected keyword");
	}
	}
redirs:
	if ((r = parse_trailing_redirs(p, n)))
		return r;
	*ret = n;
	return 0;
}

static int parse_pipeline(struct psr *p, struct moat_sh_node **ret)
{
	struct moat_sh_node *first, *pipe, *cur;
	unsigned fl = 0;
	size_t st;
	int r;

	for (;;) {
		int kw;

		skip_ws(p);
		kw = peek_kw(p, NULL);
		if (kw == KW_BANG) {
			p->i++;
			fl |= MOAT_SHN_NEGATE;
			continue;
		}
		if (kw == KW_TIME) {
			p->i += 4;
			fl |= MOAT_SHN_TIME;
			skip_blanks(p);
			if (pc(p, 0) == '-' && pc(p, 1) == 'p' && is_delim(pc(p, 2)))
				p->i += 2;
			continue;
		}
		break;
	}
	st = p->i;
	if ((r = parse_command(p, &first)))
		return r;
	skip_blanks(p);
	if (!(pc(p, 0) == '|' && pc(p, 1) != '|')) {
		first->flags |= (uint16_t)fl;
		*ret = first;
		return 0;
	}
	if ((r = mknode(p, MOAT_SH_PIPELINE, st, &pipe)))
		return r;
	pipe->flags = (uint16_t)fl;
	pipe->kids = cur = first;
	while (pc(p, 0) == '|' && pc(p, 1) != '|') {
		struct moat_sh_node *next;

		if (pc(p, 1) == '&') {
			cur->flags |= MOAT_SHN_PIPE_STDERR;
			p->i += 2;
		} else {
			p->i++;
		}
		if ((r = skip_ws_nl(p)) || (r = parse_command(p, &next)))
			return r;
		cur->next = next;
		cur = next;
		skip_blanks(p);
	}
	*ret = pipe;
	return 0;
}

static int parse_list(struct psr *p, unsigned term, struct moat_sh_node **ret)
{
	struct moat_sh_node *list, *tail = NULL;
	int r;

	if ((r = mknode(p, MOAT_SH_LIST, p->i, &list)))
		return r;
	for (;;) {
		struct moat_sh_node *first, *item;
		int ch, kw;

		if ((r = skip_ws_nl(p)))
			return r;
		ch = pc(p, 0);
		if (ch < 0)
			break;
		if (ch == ')') {
			if (term & T_RPAREN)
				break;
			return perr(p, p->i, "unexpected ')'");
		}
		if (ch == ';') {
			if ((pc(p, 1) == ';' || pc(p, 1) == '&') && (term & T_DSEMI))
				break;
			return perr(p, p->i, "unexpected ';'");
		}
		if ((ch == '&' && pc(p, 1) != '>') || ch == '|')
			return perr(p, p->i, "unexpected operator");
		kw = peek_kw(p, NULL);
		if (kw != KW_NONE) {
			const char *msg;
			unsigned t = kw_term(kw, &msg);

			if (t) {
				if (term & t)
					break;
				return perr(p, p->i, msg);
			}
		}
		/* one and-or list */
		first = NULL;
		for (;;) {
			if ((r = parse_pipeline(p, &item)))
				return r;
			if (tail)
				tail->next = item;
			else
				list->kids = item;
			tail = item;
			if (!first)
				first = item;
			skip_blanks(p);
			if (pc(p, 0) == '&' && pc(p, 1) == '&')
				item->op = MOAT_SH_OP_AND;
			else if (pc(p, 0) == '|' && pc(p, 1) == '|')
				item->op = MOAT_SH_OP_OR;
			else
				break;
			p->i += 2;
			if ((r = skip_ws_nl(p)))
				return r;
		}
		skip_ws(p);
		ch = pc(p, 0);
		if (ch == '\n') {
			tail->op = MOAT_SH_OP_SEQ;
			if ((r = take_newline(p)))
				return r;
			continue;
		}
		if (ch == ';' && pc(p, 1) != ';' && pc(p, 1) != '&') {
			tail->op = MOAT_SH_OP_SEQ;
			p->i++;
			continue;
		}
		if (ch == '&' && pc(p, 1) != '&' && pc(p, 1) != '>') {
			tail->op = MOAT_SH_OP_BG;
			for (struct moat_sh_node *k = first; k; k = k->next)
				k->flags |= MOAT_SHN_BG;
			p->i++;
			continue;
		}
		if (ch < 0 || ch == ')' || ch == ';')
			continue;
		return perr(p, p->i, "syntax error");
	}
	*ret = list;
	return 0;
}

/* ---- fast path ------------------------------------------------------------- */

/* Most commands an agent sends are a few plain words joined by && || ; or |
 * ("git status", "make && ./run_tests", "ls > out.txt 2>&1"): they are read
 * here in one pass, to the very tree parse_list would build. Anything else
 * (quoting other than '...', expansions, globs, braces, here-documents,
 * parentheses, newlines, comments, a reserved word in command position, a
 * lone &) is left to the full parser, from the start. In sanitizer builds
 * every tree built here is compared with the full parser's (a difference
 * aborts), so the tests and the fuzzer check that the two agree. */
#define SH_FAST_MAX_LEN 4096u /* longer commands go to the full parser */
#define SH_FAST_MAX_WORDS 64u /* words and assignments of one command, likewise */

/* fastcls: 0 a word byte, FB a blank, FO an operator byte, FQ a single
 * quote, FE '=' (a word byte that may make an assignment), FR '<' or '>',
 * FZ the NUL after the copy of the command, FX a byte only the full parser
 * reads */
#define FB 1u
#define FO 2u
#define FQ 3u
#define FE 4u
#define FR 5u
#define FZ 6u
#define FX 7u
static const unsigned char fastcls[256] = {
	['\0'] = FZ, [' '] = FB,  ['\t'] = FB, [';'] = FO,  ['&'] = FO, ['|'] = FO,
	['\''] = FQ, ['='] = FE,  ['<'] = FR,  ['>'] = FR,  ['\n'] = FX, ['('] = FX,
	[')'] = FX,  ['\\'] = FX, ['"'] = FX,  ['$'] = FX,  ['`'] = FX, ['*'] = FX,
	['?'] = FX,  ['['] = FX,  ['{'] = FX,  ['}'] = FX,
};

static inline void fast_blanks(struct psr *p)
{
	while (p->i < p->n && fastcls[(unsigned char)p->s[p->i]] == FB)
		p->i++;
}

/* mknode, inline (no limit to check: the length bounds the count) */
static inline struct moat_sh_node *fast_node(struct psr *p, int kind, size_t off)
{
	struct moat_sh_node *n = moat_arena_alloc(p->c->arena, sizeof(*n));

	if (n) {
		*n = (struct moat_sh_node){.kind = (uint8_t)kind, .off = (uint32_t)off};
		p->c->ncmds++;
	}
	return n;
}

/* One word at q in the copy t (a word byte or a quote), as lex_word reads
 * it (assign_ok: it may be an assignment): w filled, its text cut out in
 * place (quotes removed) but not yet terminated; returns the byte after
 * it, or NULL when it is not for the fast path. */
static inline __attribute__((always_inline)) char *
fast_word(struct psr *p, char *t, char *q, bool assign_ok, struct moat_sh_word *w)
{
	size_t start = (size_t)(q - t), len;
	bool quoted = false, eq_sign = false;
	unsigned c, eq = 0;

	for (;;) {
		while ((c = fastcls[(unsigned char)*q]) == 0)
			q++;
		if (c == FE) {
			eq_sign = true;
			q++;
		} else if (c == FQ) {
			const char *e = strchr(q + 1, '\'');

			if (!e)
				return NULL; /* (the full parser reports it) */
			quoted = true;
			q = (char *)e + 1;
		} else if (c == FX) {
			return NULL;
		} else {
			break; /* a blank, an operator, '<', '>' or the end */
		}
	}
	len = (size_t)(q - t) - start;
	/* NAME=value (scan_assign reads the source: a name is plain text,
	 * only a word with a '=' can be one) */
	if (assign_ok && eq_sign) {
		p->i = start;
		eq = scan_assign(p);
	}
	if (quoted) {
		/* quote removal, in place: the text only shrinks */
		char *wt = t + start;
		size_t o = 0;

		for (size_t x = 0; x < len;) {
			if (wt[x] == '\'') {
				const char *e = memchr(wt + x + 1, '\'', len - x - 1);
				size_t m = (size_t)(e - (wt + x + 1));

				memmove(wt + o, wt + x + 1, m);
				o += m;
				x += m + 2;
			} else {
				wt[o++] = wt[x++];
			}
		}
		len = o;
	}
	w->text = t + start;
	w->subs = NULL;
	w->spans = NULL;
	w->len = (uint32_t)len;
	w->off = (uint32_t)start; /* (p->copy is false: offsets are the source's) */
	w->flags = (uint16_t)((p->s[start] == '~' ? MOAT_SHW_TILDE : 0) |
			      (quoted ? MOAT_SHW_QUOTED : 0));
	if (eq && start + eq < (size_t)(q - t) && p->s[start + eq] == '~')
		w->flags |= MOAT_SHW_ATILDE;
	w->eq = (uint16_t)eq;
	return q;
}

/* A file redirection at q (after its descriptor digits; fd is their value
 * or -1), as parse_redir reads it: rd filled; returns the byte after its
 * target, or NULL when it is not for the fast path (here-documents and
 * -strings, process substitutions, a missing target). */
static char *fast_redir(struct psr *p, char *t, char *q, int fd, struct moat_sh_redir *rd)
{
	int op;
	unsigned c;

	if (q[0] == '&') { /* "&>" */
		q += 2;
		op = MOAT_SH_R_ALL;
		if (*q == '>') {
			q++;
			op = MOAT_SH_R_ALL_APPEND;
		}
	} else if (q[1] == '(') {
		return NULL; /* <( ) or >( ) */
	} else if (*q++ == '<') {
		switch (*q) {
		case '<':
			return NULL;
		case '&':
			q++;
			op = MOAT_SH_R_DUPIN;
			break;
		case '>':
			q++;
			op = MOAT_SH_R_RDWR;
			break;
		default:
			op = MOAT_SH_R_IN;
			break;
		}
	} else {
		switch (*q) {
		case '>':
			q++;
			op = MOAT_SH_R_APPEND;
			break;
		case '&':
			q++;
			op = MOAT_SH_R_DUPOUT;
			break;
		case '|':
			q++;
			op = MOAT_SH_R_CLOBBER;
			break;
		default:
			op = MOAT_SH_R_OUT;
			break;
		}
	}
	while ((c = fastcls[(unsigned char)*q]) == FB)
		q++;
	if (c != 0 && c != FE && c != FQ)
		return NULL; /* no target, or one only the full parser reads */
	memset(rd, 0, sizeof(*rd));
	rd->op = op;
	rd->fd = fd;
	return fast_word(p, t, q, false, &rd->target);
}

/* A simple command at p->i (after blanks), as parse_simple reads it: 0, or
 * 1 when it is not for the fast path. t is a copy of the source with a NUL
 * after it: the words are found in it (no bounds to check) and cut apart in
 * place (quotes removed, a NUL after each word's text), so they need no
 * copy of their own; the source is left as it is. */
static int fast_simple(struct psr *p, char *t, struct moat_sh_node **ret)
{
	struct moat_sh_word wb[SH_FAST_MAX_WORDS];
	struct moat_sh_word *tgt[SH_FAST_MAX_WORDS]; /* the redirections' targets */
	struct moat_sh_redir *redirs = NULL, **rtail = &redirs;
	char *q = t + p->i;
	size_t k, nw = 0, na = 0, nt = 0, st = p->i;
	struct moat_sh_node *node;
	struct moat_sh_word *wv;
	unsigned c;

	if (peek_kw_scan(p, &k) != KW_NONE)
		return 1;
	for (;;) {
		while ((c = fastcls[(unsigned char)*q]) == FB)
			q++;
		if (c == FZ || (c == FO && !(q[0] == '&' && q[1] == '>')))
			break;
		if (*q == '#' || nw + nt >= SH_FAST_MAX_WORDS) /* a comment */
			return 1;
		if (c == FR || c == FO || (*q >= '0' && *q <= '9')) {
			/* a redirection, maybe after its descriptor ("2>&1") */
			char *d = q;
			int fd = -1;

			while (*d >= '0' && *d <= '9' && d - q < 5)
				d++;
			if (d > q) {
				if (fastcls[(unsigned char)*d] == FR) {
					fd = 0;
					for (char *x = q; x < d; x++)
						fd = fd * 10 + (*x - '0');
				} else if (*d >= '0' && *d <= '9') {
					return 1; /* (a long descriptor) */
				} else {
					d = NULL; /* a word starting with digits */
				}
			}
			if (d) {
				struct moat_sh_redir *rd;

				rd = moat_arena_alloc(p->c->arena, sizeof(*rd));
				if (!rd || !(q = fast_redir(p, t, d, fd, rd)))
					return 1;
				tgt[nt++] = &rd->target;
				*rtail = rd;
				rtail = &rd->next;
				continue;
			}
		}
		if (!(q = fast_word(p, t, q, nw == na, &wb[nw])))
			return 1;
		na += nw == na && wb[nw].eq;
		nw++;
	}
	if ((!nw && !redirs) || !(node = fast_node(p, MOAT_SH_SIMPLE, st)))
		return 1;
	/* (now that the scan is over: over the blank or operator after each) */
	for (k = 0; k < nw; k++)
		((char *)wb[k].text)[wb[k].len] = '\0';
	for (k = 0; k < nt; k++)
		((char *)tgt[k]->text)[tgt[k]->len] = '\0';
	if (nw) {
		if (!(wv = moat_arena_alloc(p->c->arena, nw * sizeof(*wv))))
			return 1;
		memcpy(wv, wb, nw * sizeof(*wv));
		if (na) {
			node->assigns = wv;
			node->nassigns = (uint32_t)na;
		}
		if (nw > na) {
			node->words = wv + na;
			node->nwords = (uint32_t)(nw - na);
		}
	}
	node->redirs = redirs;
	p->i = (size_t)(q - t);
	p->c->nwords += (uint32_t)(nw + nt); /* (bounded by SH_FAST_MAX_LEN) */
	*ret = node;
	return 0;
}

/* The whole command, as parse_list(T_EOF) reads it. 0, or 1: not for the
 * fast path (nothing is reported; the arena keeps what was allocated). */
static int fast_parse(struct psr *p, struct moat_sh_node **ret)
{
	struct moat_sh_node *list, *tail = NULL;
	char *t = moat_arena_alloc(p->c->arena, p->n + 1);

	if (!t || !(list = fast_node(p, MOAT_SH_LIST, p->i)))
		return 1;
	memcpy(t, p->s, p->n);
	t[p->n] = '\0'; /* (no NUL inside: moat_sh_parse_nested refused it) */
	for (;;) {
		/* one and-or list of pipelines */
		for (;;) {
			struct moat_sh_node *item, *cur, *next;
			size_t st;

			fast_blanks(p);
			if (p->i >= p->n)
				return 1; /* nothing, or an operator missing its command */
			st = p->i;
			if (fast_simple(p, t, &item))
				return 1;
			fast_blanks(p);
			if (pc(p, 0) == '|' && pc(p, 1) != '|') {
				cur = item;
				if (!(item = fast_node(p, MOAT_SH_PIPELINE, st)))
					return 1;
				item->kids = cur;
				while (pc(p, 0) == '|' && pc(p, 1) != '|') {
					if (pc(p, 1) == '&')
						return 1;
					p->i++;
					fast_blanks(p);
					if (p->i >= p->n || fast_simple(p, t, &next))
						return 1;
					cur->next = next;
					cur = next;
					fast_blanks(p);
				}
			}
			if (tail)
				tail->next = item;
			else
				list->kids = item;
			tail = item;
			if (pc(p, 0) == '&' && pc(p, 1) == '&')
				item->op = MOAT_SH_OP_AND;
			else if (pc(p, 0) == '|' && pc(p, 1) == '|')
				item->op = MOAT_SH_OP_OR;
			else
				break;
			p->i += 2;
		}
		if (p->i >= p->n)
			break;
		if (pc(p, 0) != ';' || pc(p, 1) == ';' || pc(p, 1) == '&')
			return 1;
		tail->op = MOAT_SH_OP_SEQ;
		p->i++;
		fast_blanks(p);
		if (p->i >= p->n)
			break;
	}
	*ret = list;
	return 0;
}

#undef FB
#undef FO
#undef FQ
#undef FE
#undef FR
#undef FZ
#undef FX

/* ---- entry points --------------------------------------------------------- */

/* The full parser (out of line: its buffers stay off the fast path's frame). */
static __attribute__((noinline)) int parse_full(struct moat_arena *a, const char *src,
						size_t len, int nest, struct moat_sh_node **ret,
						struct moat_sh_error *err)
{
	char inline_text[512];
	struct moat_sh_word inline_words[32];
	struct sh_ctx c;
	struct psr p;
	struct moat_sh_node *list = NULL;
	int r;

	memset(&c, 0, sizeof(c));
	c.arena = a;
	c.tb = inline_text;
	c.tcap = sizeof(inline_text);
	c.ws = inline_words;
	c.wcap = sizeof(inline_words) / sizeof(inline_words[0]);
	c.nest = nest < 0 ? 0 : nest;
	memset(&p, 0, sizeof(p));
	p.c = &c;
	p.s = src;
	p.n = len;
	r = parse_list(&p, T_EOF, &list);
	if (!r && p.i < p.n)
		r = perr(&p, p.i, "syntax error");
	if (!r && p.hd_head)
		r = perr(&p, p.hd_head->off, "unterminated here-document");
	if (c.theap)
		free(c.tb);
	if (c.wheap)
		free(c.ws);
	if (r) {
		if (err) {
			err->offset = c.err_off;
			err->msg = c.err_msg ? c.err_msg : "syntax error";
		}
		return r;
	}
	*ret = list;
	return 0;
}

#if defined(__SANITIZE_ADDRESS__)
#define SH_CROSS_CHECK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SH_CROSS_CHECK 1
#endif
#endif

#ifdef SH_CROSS_CHECK
static bool same_word(const struct moat_sh_word *x, const struct moat_sh_word *y)
{
	return x->len == y->len && memcmp(x->text, y->text, x->len + 1) == 0 &&
	       x->off == y->off && x->flags == y->flags && x->eq == y->eq && !x->subs &&
	       !y->subs && !x->spans && !y->spans;
}

static bool same_redirs(const struct moat_sh_redir *x, const struct moat_sh_redir *y)
{
	for (; x && y; x = x->next, y = y->next)
		if (x->op != y->op || x->fd != y->fd || !same_word(&x->target, &y->target) ||
		    x->body.text || y->body.text || x->body.subs || y->body.subs)
			return false;
	return !x && !y;
}

static bool same_tree(const struct moat_sh_node *x, const struct moat_sh_node *y)
{
	for (; x && y; x = x->next, y = y->next) {
		if (x->kind != y->kind || x->op != y->op || x->flags != y->flags ||
		    x->off != y->off || x->nwords != y->nwords || x->nassigns != y->nassigns ||
		    !same_redirs(x->redirs, y->redirs) || x->name || y->name ||
		    !x->words != !y->words || !x->assigns != !y->assigns ||
		    !same_tree(x->kids, y->kids))
			return false;
		for (uint32_t k = 0; k < x->nwords; k++)
			if (!same_word(&x->words[k], &y->words[k]))
				return false;
		for (uint32_t k = 0; k < x->nassigns; k++)
			if (!same_word(&x->assigns[k], &y->assigns[k]))
				return false;
	}
	return !x && !y;
}
#endif

int moat_sh_parse(struct moat_arena *a, const char *src, size_t len, struct moat_sh_node **ret,
		  struct moat_sh_error *err)
{
	return moat_sh_parse_nested(a, src, len, 0, ret, err);
}

int moat_sh_parse_nested(struct moat_arena *a, const char *src, size_t len, int nest,
			 struct moat_sh_node **ret, struct moat_sh_error *err)
{
	const char *nul;

	if (!src)
		src = "";
	if (len > MOAT_SH_MAX_LEN) {
		if (err) {
			err->offset = MOAT_SH_MAX_LEN;
			err->msg = "command too long";
		}
		return -EINVAL;
	}
	nul = len ? memchr(src, '\0', len) : NULL;
	if (nul) {
		if (err) {
			err->offset = (size_t)(nul - src);
			err->msg = "NUL byte in command";
		}
		return -EINVAL;
	}
	if (len <= SH_FAST_MAX_LEN) {
		struct sh_ctx c = {.arena = a};
		struct psr p = {.c = &c, .s = src, .n = len};
		struct moat_sh_node *list;

		if (fast_parse(&p, &list) == 0) {
#ifdef SH_CROSS_CHECK
			struct moat_sh_node *full;
			int r = parse_full(a, src, len, nest, &full, NULL);

			/* SECURITY: the fast path must build the very same tree */
			if (r == -EINVAL || (r == 0 && !same_tree(list, full)))
				abort();
#endif
			*ret = list;
			return 0;
		}
	}
	return parse_full(a, src, len, nest, ret, err);
}

void moat_sh_line_col(const char *src, size_t len, size_t off, int *ret_line, int *ret_col)
{
	int line = 1;
	size_t ls = 0;

	if (off > len)
		off = len;
	for (size_t k = 0; k < off; k++) {
		if (src[k] == '\n') {
			line++;
			ls = k + 1;
		}
	}
	*ret_line = line;
	*ret_col = (int)(off - ls) + 1;
}
