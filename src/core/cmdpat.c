/* Denied-command patterns matched by structure, not substring (see cmd.h).
 *
 * A pattern is parsed with the shell parser and kept as: a program (a glob,
 * or a bare word that also matches "word.*" so mkfs covers mkfs.ext4), a set
 * of short flags (clusters compare as sets, a few long forms normalised),
 * required long options, operands that must appear in order (paths and home
 * spellings normalised, numeric modes compared without leading zeros, a
 * trailing '=' matching as a prefix, a trailing ':' as a case-insensitive
 * prefix), and required write redirections; or a pipe chain "a | b" (a feeds
 * b, directly or through more stages); or the fork-bomb shape; or a device
 * path ("/dev/tcp") that any file redirection to it or below it matches.
 *
 * Matching reads an analysis and never allocates or writes shared state, so
 * compiled patterns can be used from many threads. Pure: no I/O. */
#include "core/cmd.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/str.h"
#include "core/shell.h"

#define CMDPAT_MAX_LEN 4096	   /* bytes of pattern text */
#define CMDPAT_MAX_STAGES 4	   /* commands in a pipe pattern */
#define CMDPAT_MAX_ITEMS 32	   /* operands, long options or redirections of one command */
#define CMDPAT_WALK_BUDGET 65536u  /* views visited following pipes for one match */
#define CMDPAT_NORM_MAX 4096	   /* longest argument normalised while matching */

enum { CP_SIMPLE = 1, CP_PIPE, CP_FORKBOMB, CP_REDIR, CP_DEVICE };

struct pcmd {
	const char *prog; /* basename; NULL for a redirection-only pattern */
	size_t plen;
	bool glob;
	bool any_shell;
	unsigned char flags[16]; /* short flags, a bit per ASCII character */
	bool anyflag;
	const char *longs[CMDPAT_MAX_ITEMS];
	size_t nlongs;
	const char *ops[CMDPAT_MAX_ITEMS];
	unsigned char prefix[CMDPAT_MAX_ITEMS]; /* 1: "if=" prefix, 2: "exec:" any case */
	size_t nops;
	const char *redirs[CMDPAT_MAX_ITEMS];
	size_t nredirs;
};

struct moat_cmdpat {
	struct moat_arena arena;
	char *source;
	int kind;
	struct pcmd cmds[CMDPAT_MAX_STAGES];
	size_t ncmds;
};

/* ---- normalisation (same on both sides) ----------------------------------- */

/* An operand as compared: home spellings become "~[/rest]", absolute paths
 * are normalised, "0777" is "777", "a+rwx" is "777". Returns s itself or buf. */
static const char *norm_arg(const char *s, const char *home, char *buf, size_t cap)
{
	const char *rest = NULL;
	size_t hl, n;

	if (s[0] == '~' && (s[1] == '\0' || s[1] == '/'))
		rest = s + 1;
	else if (s[0] == '$' && strncmp(s, "$HOME", 5) == 0 && (s[5] == '\0' || s[5] == '/'))
		rest = s + 5;
	else if (s[0] == '$' && strncmp(s, "${HOME}", 7) == 0 && (s[7] == '\0' || s[7] == '/'))
		rest = s + 7;
	else if (s[0] == '/' && home && (hl = strlen(home)) > 1 && strncmp(s, home, hl) == 0 &&
		 (s[hl] == '\0' || s[hl] == '/'))
		rest = s + hl;
	if (rest) {
		n = strlen(rest);
		if (n + 3 > cap)
			return s;
		buf[0] = '~';
		buf[1] = '/';
		memcpy(buf + 2, rest, n + 1);
		moat_cmd_norm_path(buf + 1);
		if (strcmp(buf + 1, "/") == 0)
			buf[1] = '\0';
		return buf;
	}
	if (s[0] == '/') {
		n = strlen(s);
		if (n + 1 > cap)
			return s;
		memcpy(buf, s, n + 1);
		moat_cmd_norm_path(buf);
		return buf;
	}
	if (s[0] == '0' && s[1]) {
		const char *d = s;

		while (*d >= '0' && *d <= '9')
			d++;
		if (!*d) {
			while (s[0] == '0' && s[1])
				s++;
			return s;
		}
	}
	if ((s[0] == 'a' || s[0] == 'u') &&
	    (strcmp(s, "a+rwx") == 0 || strcmp(s, "a=rwx") == 0 || strcmp(s, "ugo+rwx") == 0 ||
	     strcmp(s, "ugo=rwx") == 0))
		return "777";
	return s;
}

static unsigned char norm_flag(unsigned char c)
{
	return c == 'R' ? 'r' : c;
}

/* long options with a short equivalent in the set */
static int long_flag(const char *name, size_t n)
{
	if (n >= 3 && n <= 9 && strncmp(name, "recursive", n) == 0)
		return 'r';
	if (n >= 3 && n <= 5 && strncmp(name, "force", n) == 0)
		return 'f';
	if (n == 4 && strncmp(name, "exec", 4) == 0)
		return 'e';
	return 0;
}

static void set_flag(unsigned char *set, unsigned char c)
{
	if (c == 0)
		return;
	c = norm_flag(c);
	if (c < 128)
		set[c >> 3] |= (unsigned char)(1u << (c & 7));
}

/* ---- compiling -------------------------------------------------------------- */

static int perr(struct moat_error *err, const char *pattern, const char *msg)
{
	if (err) {
		moat_error_set_where(err, "denied_commands", 0, 0);
		moat_error_set(err, "invalid command pattern '%.200s': %s", pattern, msg);
	}
	return -EINVAL;
}

/* ":(){ :|:& };:" and its spellings: NAME(){NAME|NAME&};NAME, blanks anywhere */
static bool forkbomb_shape(const char *s)
{
	char b[256], name[64];
	size_t n = 0, k = 0, nl;

	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n')
			continue;
		if (n + 1 >= sizeof(b))
			return false;
		b[n++] = *s;
	}
	b[n] = '\0';
	while (k < n && !strchr("(){}|&;", b[k]))
		k++;
	nl = k;
	if (nl == 0 || nl >= sizeof(name))
		return false;
	memcpy(name, b, nl);
	name[nl] = '\0';
#define EAT(str)                                                                  \
	do {                                                                      \
		size_t l_ = strlen(str);                                          \
		if (strncmp(b + k, str, l_) != 0)                                 \
			return false;                                             \
		k += l_;                                                          \
	} while (0)
	EAT("(){");
	EAT(name);
	EAT("|");
	EAT(name);
	EAT("&");
	if (b[k] == ';')
		k++;
	EAT("}");
	if (b[k] == ';')
		k++;
	if (k < n)
		EAT(name);
#undef EAT
	return k == n;
}

static int compile_cmd(struct moat_cmdpat *p, const struct moat_sh_node *n, struct pcmd *c,
		       bool right, struct moat_error *err)
{
	char buf[CMDPAT_NORM_MAX];
	bool done = false;

	if (n->kind != MOAT_SH_SIMPLE)
		return perr(err, p->source, "only simple commands and pipes are supported");
	for (const struct moat_sh_redir *rd = n->redirs; rd; rd = rd->next) {
		const char *t;

		switch (rd->op) {
		case MOAT_SH_R_OUT:
		case MOAT_SH_R_APPEND:
		case MOAT_SH_R_CLOBBER:
		case MOAT_SH_R_ALL:
		case MOAT_SH_R_ALL_APPEND:
		case MOAT_SH_R_DUPOUT:
		case MOAT_SH_R_RDWR:
			break;
		default:
			return perr(err, p->source, "only output redirections are supported");
		}
		if (c->nredirs >= CMDPAT_MAX_ITEMS)
			return perr(err, p->source, "too many redirections");
		t = norm_arg(rd->target.text, NULL, buf, sizeof(buf));
		c->redirs[c->nredirs] = moat_arena_strndup(&p->arena, t, strlen(t));
		if (!c->redirs[c->nredirs++])
			return -ENOMEM;
	}
	if (n->nwords == 0) {
		if (!c->nredirs)
			return perr(err, p->source, "empty pattern");
		return 0;
	}
	{
		const struct moat_sh_word *w0 = &n->words[0];
		const char *sl = strrchr(w0->text, '/');

		if (w0->flags & MOAT_SHW_EXPAND)
			return perr(err, p->source, "the program must be a literal word");
		c->prog = sl && sl[1] ? sl + 1 : w0->text;
		c->plen = strlen(c->prog);
		c->glob = (w0->flags & MOAT_SHW_GLOB) != 0;
		c->any_shell = right && moat_cmd_is_shell(c->prog);
	}
	for (size_t i = 1; i < n->nwords; i++) {
		const char *a = n->words[i].text;

		c->anyflag = c->anyflag || (a[0] == '-' && a[1] && !done && strcmp(a, "--") != 0);
		if (!done && strcmp(a, "--") == 0) {
			done = true;
			continue;
		}
		if (!done && a[0] == '-' && a[1]) {
			if (a[1] == '-') {
				size_t l = strcspn(a + 2, "=");
				int f = long_flag(a + 2, l);

				if (f && !a[2 + l]) {
					set_flag(c->flags, (unsigned char)f);
					continue;
				}
				if (c->nlongs >= CMDPAT_MAX_ITEMS)
					return perr(err, p->source, "too many options");
				c->longs[c->nlongs++] = a + 2;
				continue;
			}
			for (size_t k = 1; a[k]; k++)
				set_flag(c->flags, (unsigned char)a[k]);
			continue;
		}
		if (c->nops >= CMDPAT_MAX_ITEMS)
			return perr(err, p->source, "too many operands");
		{
			const char *t = norm_arg(a, NULL, buf, sizeof(buf));
			size_t l = strlen(t);

			c->ops[c->nops] = moat_arena_strndup(&p->arena, t, l);
			if (!c->ops[c->nops])
				return -ENOMEM;
			c->prefix[c->nops++] = l > 1 && t[l - 1] == '=' ? 1 : l > 1 && t[l - 1] == ':' ? 2 : 0;
		}
	}
	return 0;
}

int moat_cmdpat_compile(const char *pattern, struct moat_cmdpat **ret, struct moat_error *err)
{
	struct moat_cmdpat *p;
	struct moat_sh_node *root, *item;
	struct moat_sh_error se;
	size_t len;
	int r;

	if (!pattern)
		return -EINVAL;
	len = strlen(pattern);
	if (len == 0 || len > CMDPAT_MAX_LEN)
		return perr(err, pattern, len ? "pattern too long" : "empty pattern");
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	moat_arena_init(&p->arena, NULL, 0);
	p->source = moat_arena_strndup(&p->arena, pattern, len);
	if (!p->source) {
		r = -ENOMEM;
		goto fail;
	}
	if (forkbomb_shape(pattern)) {
		p->kind = CP_FORKBOMB;
		*ret = p;
		return 0;
	}
	r = moat_sh_parse(&p->arena, pattern, len, &root, &se);
	if (r) {
		if (r != -ENOMEM)
			r = perr(err, pattern, se.msg);
		goto fail;
	}
	item = root->kids;
	if (!item || (item->next) ||
	    (item->op != MOAT_SH_OP_NONE && item->op != MOAT_SH_OP_SEQ)) {
		r = perr(err, pattern, "a pattern is one command or one pipe");
		goto fail;
	}
	/* "/dev/tcp": a device any redirection may open */
	if (item->kind == MOAT_SH_SIMPLE && item->nwords == 1 && !item->redirs &&
	    !item->nassigns && strncmp(item->words[0].text, "/dev/", 5) == 0 &&
	    !(item->words[0].flags & (MOAT_SHW_EXPAND | MOAT_SHW_GLOB | MOAT_SHW_BRACE))) {
		char buf[CMDPAT_NORM_MAX];
		const char *t = norm_arg(item->words[0].text, NULL, buf, sizeof(buf));

		p->kind = CP_DEVICE;
		p->ncmds = 1;
		p->cmds[0].redirs[0] = moat_arena_strndup(&p->arena, t, strlen(t));
		if (!p->cmds[0].redirs[0]) {
			r = -ENOMEM;
			goto fail;
		}
		p->cmds[0].nredirs = 1;
		p->cmds[0].plen = strlen(t);
		*ret = p;
		return 0;
	}
	if (item->kind == MOAT_SH_FUNC) {
		p->kind = CP_FORKBOMB;
	} else if (item->kind == MOAT_SH_PIPELINE) {
		size_t k = 0;

		p->kind = CP_PIPE;
		for (const struct moat_sh_node *s = item->kids; s; s = s->next, k++) {
			if (k >= CMDPAT_MAX_STAGES) {
				r = perr(err, pattern, "too many pipe stages");
				goto fail;
			}
			if ((r = compile_cmd(p, s, &p->cmds[k], k > 0, err)))
				goto fail;
			if (!p->cmds[k].prog) {
				r = perr(err, pattern, "every pipe stage needs a program");
				goto fail;
			}
		}
		p->ncmds = k;
	} else {
		if ((r = compile_cmd(p, item, &p->cmds[0], false, err)))
			goto fail;
		p->ncmds = 1;
		p->kind = p->cmds[0].prog ? CP_SIMPLE : CP_REDIR;
	}
	*ret = p;
	return 0;
fail:
	moat_cmdpat_free(p);
	return r;
}

const char *moat_cmdpat_source(const struct moat_cmdpat *p)
{
	return p ? p->source : NULL;
}

int moat_cmdpat_needs(const struct moat_cmdpat *p)
{
	if (!p)
		return MOAT_CMDPAT_NEEDS_ANY;
	switch (p->kind) {
	case CP_SIMPLE:
		return p->cmds[0].glob ? MOAT_CMDPAT_NEEDS_ANY : (unsigned char)p->cmds[0].prog[0];
	case CP_PIPE:
		return MOAT_CMDPAT_NEEDS_PIPE;
	case CP_REDIR:
	case CP_DEVICE:
		return MOAT_CMDPAT_NEEDS_REDIR;
	case CP_FORKBOMB:
		return MOAT_CMDPAT_NEEDS_FORK;
	default:
		return MOAT_CMDPAT_NEEDS_ANY;
	}
}

uint64_t moat_cmdpat_pair(const struct moat_cmdpat *p)
{
	/* (as moat_cmdpat_match: "x" also matches "x.y", so one byte is not two) */
	if (!p || p->kind != CP_SIMPLE || !p->cmds[0].prog || p->cmds[0].glob ||
	    p->cmds[0].any_shell || p->cmds[0].plen < 2)
		return 0;
	return moat_cmd_pair_bit(p->cmds[0].prog);
}

struct moat_cmdpat *moat_cmdpat_free(struct moat_cmdpat *p)
{
	if (!p)
		return NULL;
	moat_arena_release(&p->arena);
	free(p);
	return NULL;
}

/* ---- matching --------------------------------------------------------------- */

/* The first bytes of the programs prog_match takes for any shell (the
 * names below: a bit per byte, laid out as moat_cmd_analysis.prog_first):
 * a b c d e k l m p r s y z and '.' */
static const unsigned char shell_first_bits[32] = {
	[5] = 0x40, [12] = 0x3e, [13] = 0x38, [14] = 0x0d, [15] = 0x06,
};

/* Can some view's program match c at all (by its first byte)? */
static bool prog_possible(const struct pcmd *c, const struct moat_cmd_analysis *a)
{
	if (c->any_shell) {
		uint64_t any = 0;

		for (size_t b = 0; b < sizeof(a->prog_first); b += 8) {
			uint64_t x, y;

			memcpy(&x, a->prog_first + b, 8);
			memcpy(&y, shell_first_bits + b, 8);
			any |= x & y;
		}
		return any != 0;
	}
	if (!c->prog)
		return false; /* (cmd_match takes no view then) */
	if (c->glob)
		return true;
	return (a->prog_first[(unsigned char)c->prog[0] >> 3] & (1u << (c->prog[0] & 7))) != 0;
}

static bool prog_match(const struct pcmd *c, const struct moat_cmdview *v)
{
	const char *p = v->prog;

	if (c->any_shell) {
		if (!(shell_first_bits[(unsigned char)p[0] >> 3] & (1u << (p[0] & 7))))
			return false;
		if (moat_cmd_is_shell(p) || strcmp(p, "eval") == 0 || strcmp(p, "source") == 0 ||
		    strcmp(p, ".") == 0)
			return true;
		/* sudo -s, su, chroot DIR ... reading a script from stdin */
		return (v->flags & MOAT_VIEW_SHELL_STDIN) &&
		       (strcmp(p, "sudo") == 0 || strcmp(p, "doas") == 0 || strcmp(p, "su") == 0 ||
			strcmp(p, "runuser") == 0 || strcmp(p, "chroot") == 0);
	}
	if (c->glob)
		return fnmatch(c->prog, p, 0) == 0;
	/* strncmp(p, c->prog, c->plen) == 0, inline: most programs differ early */
	for (size_t k = 0; k < c->plen; k++)
		if (p[k] != c->prog[k])
			return false;
	return p[c->plen] == '\0' || p[c->plen] == '.';
}

static bool long_present(const struct moat_cmdview *v, const char *want)
{
	size_t wl = strcspn(want, "=");
	bool want_val = want[wl] == '=';

	for (size_t i = 1; i < v->argc; i++) {
		const char *a = v->argv[i];
		size_t al;

		if (strcmp(a, "--") == 0)
			break;
		if (a[0] != '-' || a[1] != '-')
			continue;
		a += 2;
		if (want_val) {
			if (strcmp(a, want) == 0)
				return true;
			continue;
		}
		al = strcspn(a, "=");
		/* exact, or an unambiguous abbreviation of at least 3 characters */
		if (al <= wl && (al == wl || al >= 3) && strncmp(a, want, al) == 0)
			return true;
	}
	return false;
}

/* the arguments, flags and redirections of a view whose program matched */
static __attribute__((noinline)) bool args_match(const struct pcmd *c,
						 const struct moat_cmd_analysis *a, size_t vi)
{
	const struct moat_cmdview *v = &a->views[vi];
	unsigned char fl[16] = {0};
	char buf[CMDPAT_NORM_MAX];
	bool done = false;
	size_t j = 0;

	for (size_t i = 1; i < v->argc; i++) {
		const char *arg = v->argv[i];

		if (!done && strcmp(arg, "--") == 0) {
			done = true;
			continue;
		}
		if (!done && arg[0] == '-' && arg[1]) {
			if (arg[1] == '-') {
				int f = long_flag(arg + 2, strcspn(arg + 2, "="));

				if (f)
					set_flag(fl, (unsigned char)f);
			} else {
				for (size_t k = 1; arg[k]; k++)
					set_flag(fl, (unsigned char)arg[k]);
			}
			continue;
		}
		if (j < c->nops) {
			const char *t = norm_arg(arg, a->home, buf, sizeof(buf));
			bool hit;

			if (c->prefix[j] == 1)
				hit = strncmp(t, c->ops[j], strlen(c->ops[j])) == 0;
			else if (c->prefix[j] == 2)
				hit = strncasecmp(arg, c->ops[j], strlen(c->ops[j])) == 0;
			else
				hit = strcmp(t, c->ops[j]) == 0;
			j += hit;
		}
	}
	if (j < c->nops)
		return false;
	for (size_t k = 0; k < sizeof(fl); k++)
		if ((c->flags[k] & fl[k]) != c->flags[k])
			return false;
	for (size_t k = 0; k < c->nlongs; k++)
		if (!long_present(v, c->longs[k]))
			return false;
	for (size_t k = 0; k < c->nredirs; k++) {
		bool found = false;

		for (size_t x = 0; x < a->nredirs && !found; x++) {
			const struct moat_cmd_redir *rd = &a->redirs[x];

			if (rd->view == vi && (rd->flags & MOAT_CMD_REDIR_WRITE) &&
			    strcmp(norm_arg(rd->target, a->home, buf, sizeof(buf)), c->redirs[k]) == 0)
				found = true;
		}
		if (!found)
			return false;
	}
	return true;
}

static bool cmd_match(const struct pcmd *c, const struct moat_cmd_analysis *a, size_t vi)
{
	const struct moat_cmdview *v = &a->views[vi];

	if (v->argc == 0 || (v->flags & MOAT_VIEW_DYNAMIC) || !c->prog || !prog_match(c, v))
		return false;
	if (c->nops == 0 && c->nlongs == 0 && c->nredirs == 0 && !c->anyflag)
		return true;
	return args_match(c, a, vi);
}

/* Is some view feeding b (directly or through more pipes) matching stage, and
 * the ones before it the earlier stages? Budget exhausted: assume it is
 * (SECURITY: fail closed rather than let padding hide a pipe). */
static __attribute__((noinline)) bool fed_by(const struct moat_cmdpat *p,
					     const struct moat_cmd_analysis *a, size_t b,
					     size_t stage, size_t *budget)
{
	int lo = a->views[b].feeds_first, hi = a->views[b].feeds_from;

	while (hi >= 0 && lo >= 0 && lo <= hi) {
		int nlo = INT_MAX, nhi = -1;

		for (int x = hi; x >= lo; x--) {
			const struct moat_cmdview *vx = &a->views[x];

			if (*budget == 0)
				return true;
			(*budget)--;
			if (cmd_match(&p->cmds[stage], a, (size_t)x) &&
			    (stage == 0 || fed_by(p, a, (size_t)x, stage - 1, budget)))
				return true;
			if (vx->feeds_from >= 0 && vx->feeds_first >= 0) {
				if (vx->feeds_first < nlo)
					nlo = vx->feeds_first;
				if (vx->feeds_from > nhi)
					nhi = vx->feeds_from;
			}
		}
		if (nhi >= lo)
			nhi = lo - 1;
		lo = nlo;
		hi = nhi;
	}
	return false;
}

/* any file redirection to the device or below it (reads too: "exec 3<>/dev/tcp/h/p") */
static __attribute__((noinline)) bool
device_match(const struct moat_cmdpat *p, const struct moat_cmd_analysis *a, size_t *ret_view)
{
	char buf[CMDPAT_NORM_MAX];
	const char *dev = p->cmds[0].redirs[0];
	size_t dl = p->cmds[0].plen;

	for (size_t x = 0; x < a->nredirs; x++) {
		const char *t = a->redirs[x].target;

		if (t[0] != '/')
			continue;
		t = norm_arg(t, a->home, buf, sizeof(buf));
		if (strncmp(t, dev, dl) == 0 && (t[dl] == '\0' || t[dl] == '/')) {
			if (ret_view)
				*ret_view = a->redirs[x].view;
			return true;
		}
	}
	return false;
}

static __attribute__((noinline)) bool
redir_match(const struct moat_cmdpat *p, const struct moat_cmd_analysis *a, size_t *ret_view)
{
	char buf[CMDPAT_NORM_MAX];

	for (size_t x = 0; x < a->nredirs; x++) {
		const struct moat_cmd_redir *rd = &a->redirs[x];
		const char *t;

		if (!(rd->flags & MOAT_CMD_REDIR_WRITE))
			continue;
		t = norm_arg(rd->target, a->home, buf, sizeof(buf));
		for (size_t k = 0; k < p->cmds[0].nredirs; k++) {
			if (strcmp(t, p->cmds[0].redirs[k]) == 0) {
				if (ret_view)
					*ret_view = rd->view;
				return true;
			}
		}
	}
	return false;
}

bool moat_cmdpat_match(const struct moat_cmdpat *p, const struct moat_cmd_analysis *a,
		       size_t *ret_view)
{
	size_t budget = CMDPAT_WALK_BUDGET;

	if (!p || !a)
		return false;
	switch (p->kind) {
	case CP_FORKBOMB:
		if (a->fork_bomb < 0)
			return false;
		if (ret_view)
			*ret_view = (size_t)a->fork_bomb;
		return true;
	case CP_REDIR:
		return redir_match(p, a, ret_view);
	case CP_DEVICE:
		return device_match(p, a, ret_view);
	case CP_SIMPLE:
		/* (a program "x" also matches "x.y": one byte says nothing of the second) */
		if (!p->cmds[0].glob) {
			const char *pg = p->cmds[0].prog;

			if (p->cmds[0].plen >= 2 ? !(a->prog_pairs & moat_cmd_pair_bit(pg))
						 : !(a->prog_first[(unsigned char)pg[0] >> 3] &
						     (1u << (pg[0] & 7))))
				return false;
		}
		for (size_t v = 0; v < a->nviews; v++) {
			/* most views differ in the first byte of the program */
			if (!p->cmds[0].glob && a->views[v].prog[0] != p->cmds[0].prog[0])
				continue;
			if (cmd_match(&p->cmds[0], a, v)) {
				if (ret_view)
					*ret_view = v;
				return true;
			}
		}
		return false;
	case CP_PIPE:
		/* (only the last stage: the walk back fails closed on its budget) */
		if (!a->fed || !prog_possible(&p->cmds[p->ncmds - 1], a))
			return false;
		for (size_t v = 0; v < a->nviews; v++) {
			if (a->views[v].feeds_from < 0 || !cmd_match(&p->cmds[p->ncmds - 1], a, v))
				continue;
			if (fed_by(p, a, v, p->ncmds - 2, &budget)) {
				if (ret_view)
					*ret_view = v;
				return true;
			}
		}
		return false;
	default:
		return false;
	}
}
