/* Shell command analysis (see cmd.h): from a parsed command string to the
 * list of programs it would run, each seen through its wrappers, and the
 * configuration-independent findings (the unrecoverable-operation floor and
 * writes into shell startup or credential files).
 *
 * Every simple command becomes a view; wrappers (sudo, env, nice, xargs,
 * find -exec ...) add a view of the command they run; text that a shell
 * will parse again (sh -c BODY, eval, here-documents fed to a shell) is
 * parsed again, one level deeper, up to MOAT_CMD_MAX_DEPTH. Whatever cannot
 * be known before running (a program word that is an expansion, a script
 * read from a pipe) is flagged so the policy never allows it blindly.
 *
 * It must never run, expand or look anything up: no I/O, no environment.
 * It must stay linear: each re-parse is of a piece of the input, bounded in
 * depth; brace expansion has a global budget; wrapper chains are bounded. */
#include "core/cmd.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "core/shell.h"

#define CMD_MAX_UNWRAP 32	       /* wrappers peeled off one command */
#define CMD_MAX_BRACE 256	       /* words one brace expansion may produce */
#define CMD_MAX_BRACE_DEPTH 32	       /* nested brace groups expanded */
#define CMD_BRACE_BUDGET (4u << 20)    /* bytes of brace expansion work per analysis */
#define CMD_PATH_MAX 4096	       /* longest path examined by the checks */
#define CMD_INLINE_ARENA 8192	       /* first arena region, inside the result allocation */

typedef const struct moat_sh_word *wref;

struct holder {
	struct moat_cmd_analysis a;
	struct moat_arena arena;
	_Alignas(16) char first[CMD_INLINE_ARENA];
};

/* where a command's standard input comes from */
struct sin {
	const struct moat_sh_redir *rd; /* a redirection, or NULL */
	int ff, ft;			/* else a pipe (or <( )) from views [ff, ft], or -1 */
	bool unknown;			/* else something we cannot see (inside >( )) */
};

struct wctx {
	int depth;
	unsigned vflags; /* SUBST / UNWRAPPED, inherited */
	struct sin in;
	bool xargs;	  /* arguments are appended at run time (xargs, find -exec) */
	const char *repl; /* ... and this placeholder is replaced ({} or xargs -I) */
	bool nested;	  /* in re-parsed text: report errors at eoff */
	uint32_t eoff;
	int parent;	  /* the view whose text is being re-parsed, or -1 */
	int nest;	  /* syntactic nesting so far, re-parses included (MOAT_SH_MAX_NEST) */
};

struct an {
	struct moat_arena *ar;
	struct moat_cmd_analysis *a;
	struct moat_error *err;
	const char *src;
	size_t srclen;
	bool hardline;
	bool failed;
	const char *home; /* normalised home, or a placeholder that is no real path */
	size_t hlen;
	size_t vcap, fcap, rcap;
	const wref **vw; /* per view: the word behind each argv entry */
	size_t brace_budget;
};

static int walk(struct an *an, const struct moat_sh_node *n, const struct wctx *cx);
static int process(struct an *an, size_t v, const struct wctx *cx, int chain);

/* ---- errors and storage --------------------------------------------------- */

static int an_fail(struct an *an, uint32_t off, const char *msg, const char *detail)
{
	if (!an->failed && an->err) {
		int line, col;

		moat_sh_line_col(an->src, an->srclen, off, &line, &col);
		moat_error_set_where(an->err, "command", line, col);
		if (detail)
			moat_error_set(an->err, "%s: %s (byte %u)", msg, detail, off);
		else
			moat_error_set(an->err, "%s (byte %u)", msg, off);
	}
	an->failed = true;
	return -EINVAL;
}

static int an_oom(struct an *an)
{
	if (!an->failed && an->err)
		moat_error_set(an->err, "out of memory");
	an->failed = true;
	return -ENOMEM;
}

static uint32_t woff(const struct wctx *cx, wref w)
{
	return cx->nested ? cx->eoff : (w ? w->off : 0);
}

static void *grow(struct an *an, void *old, size_t n, size_t *cap, size_t size)
{
	size_t ncap = *cap ? *cap * 2 : 8;
	void *p = moat_arena_alloc(an->ar, ncap * size);

	if (!p)
		return NULL;
	if (n)
		memcpy(p, old, n * size);
	*cap = ncap;
	return p;
}

static const char *const empty_argv[] = {NULL};

static int new_view_text(struct an *an, const char *const *argv, const wref *vw, size_t argc,
			 unsigned flags, int depth, int ff, int ft, int parent, const char *text,
			 size_t *ret);

static int new_view(struct an *an, const char *const *argv, const wref *vw, size_t argc,
		    unsigned flags, int depth, int ff, int ft, int parent, size_t *ret)
{
	return new_view_text(an, argv, vw, argc, flags, depth, ff, ft, parent, NULL, ret);
}

/* text, when given, is the view's text already joined (a suffix of its parent's) */
static int new_view_text(struct an *an, const char *const *argv, const wref *vw, size_t argc,
			 unsigned flags, int depth, int ff, int ft, int parent, const char *text,
			 size_t *ret)
{
	struct moat_cmd_analysis *a = an->a;
	struct moat_cmdview *v;
	const char *prog;
	size_t len, k;
	char *t;

	if (a->nviews >= MOAT_CMD_MAX_VIEWS)
		return an_fail(an, argc ? vw[0]->off : 0, "too many commands", NULL);
	if (a->nviews == an->vcap) {
		size_t cap = an->vcap;
		struct moat_cmdview *nv = grow(an, a->views, a->nviews, &cap, sizeof(*nv));
		const wref **nw;

		if (!nv)
			return an_oom(an);
		cap = an->vcap;
		nw = grow(an, (void *)an->vw, a->nviews, &cap, sizeof(*nw));
		if (!nw)
			return an_oom(an);
		a->views = nv;
		an->vw = nw;
		an->vcap = cap;
	}
	if (!argc) {
		argv = empty_argv;
		prog = "";
	} else if (flags & MOAT_VIEW_DYNAMIC) {
		prog = argv[0];
	} else {
		const char *a0 = argv[0];
		size_t l0 = vw[0]->len;

		while (l0 > 0 && a0[l0 - 1] != '/')
			l0--;
		prog = l0 > 0 && a0[l0] ? a0 + l0 : a0;
	}
	if (text) {
		t = (char *)text;
	} else {
		size_t total;

		len = strlen(prog);
		total = len;
		for (k = 1; k < argc; k++)
			total += 1 + vw[k]->len;
		t = moat_arena_alloc(an->ar, total + 1);
		if (!t)
			return an_oom(an);
		memcpy(t, prog, len);
		for (k = 1; k < argc; k++) {
			t[len++] = ' ';
			memcpy(t + len, argv[k], vw[k]->len);
			len += vw[k]->len;
		}
		t[len] = '\0';
	}
	a->prog_first[(unsigned char)prog[0] >> 3] |= (unsigned char)(1u << (prog[0] & 7));
	a->fed |= ft >= 0;
	v = &a->views[a->nviews];
	v->argv = argv;
	v->argc = argc;
	v->prog = prog;
	v->text = t;
	v->flags = flags;
	v->feeds_from = ft;
	v->feeds_first = ft >= 0 ? ff : -1;
	v->depth = depth;
	v->parent = parent;
	an->vw[a->nviews] = vw;
	*ret = a->nviews++;
	return 0;
}

static int add_finding(struct an *an, size_t v, int verdict, const char *rule, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int add_finding(struct an *an, size_t v, int verdict, const char *rule, const char *fmt, ...)
{
	struct moat_cmd_analysis *a = an->a;
	struct moat_cmd_finding *f;
	va_list ap;

	for (size_t k = a->nfindings; k-- > 0 && k + 16 >= a->nfindings;)
		if (a->findings[k].view == v && strcmp(a->findings[k].rule, rule) == 0)
			return 0;
	if (a->nfindings == an->fcap) {
		struct moat_cmd_finding *nf = grow(an, a->findings, a->nfindings, &an->fcap, sizeof(*nf));

		if (!nf)
			return an_oom(an);
		a->findings = nf;
	}
	f = &a->findings[a->nfindings++];
	f->verdict = verdict;
	f->view = v;
	moat_strlcpy(f->rule, rule, sizeof(f->rule));
	va_start(ap, fmt);
	vsnprintf(f->reason, sizeof(f->reason), fmt, ap);
	va_end(ap);
	return 0;
}

static wref synth_word(struct an *an, const char *text, size_t len, unsigned flags, uint32_t off)
{
	struct moat_sh_word *w = moat_arena_alloc(an->ar, sizeof(*w));

	if (!w)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->text = text;
	w->len = (uint32_t)len;
	w->flags = (uint16_t)flags;
	w->off = off;
	return w;
}

/* ---- program names ------------------------------------------------------- */

enum pk {
	PK_NONE = 0,
	/* wrappers */
	PK_SUDO, PK_DOAS, PK_ENV, PK_COMMAND, PK_BUILTIN, PK_EXEC, PK_NOHUP, PK_SETSID,
	PK_NICE, PK_IONICE, PK_CHRT, PK_TASKSET, PK_TIMEOUT, PK_STDBUF, PK_TIME, PK_XARGS,
	PK_BUSYBOX, PK_EVAL, PK_FIND, PK_PKEXEC, PK_CHROOT, PK_FLOCK, PK_WATCH, PK_SU,
	PK_SCRIPT, PK_UNBUFFER, PK_SOURCE, PK_ALIAS, PK_TRAP, PK_UNSHARE, PK_NSENTER,
	/* interpreters */
	PK_SHELL, PK_FSHELL, PK_INTERP,
	/* checked */
	PK_RM, PK_MKFS, PK_DD, PK_WIPE, PK_POWER, PK_INIT, PK_SYSTEMCTL, PK_KILL, PK_KILLALL5,
	PK_CHMOD, PK_CHOWN, PK_TEE, PK_CP, PK_SED, PK_TRUNCATE, PK_CURL, PK_WGET,
};

static const struct {
	const char *name;
	unsigned char kind;
} progtab[] = {
	{".", PK_SOURCE},	  {"ash", PK_SHELL},	  {"bash", PK_SHELL},
	{"blkdiscard", PK_WIPE},  {"builtin", PK_BUILTIN}, {"busybox", PK_BUSYBOX},
	{"chgrp", PK_CHOWN},	  {"chmod", PK_CHMOD},	  {"chown", PK_CHOWN},
	{"chroot", PK_CHROOT},	  {"chrt", PK_CHRT},	  {"command", PK_COMMAND},
	{"cp", PK_CP},		  {"csh", PK_FSHELL},	  {"curl", PK_CURL},
	{"dash", PK_SHELL},	  {"dd", PK_DD},	  {"doas", PK_DOAS},
	{"env", PK_ENV},	  {"eval", PK_EVAL},	  {"exec", PK_EXEC},
	{"find", PK_FIND},	  {"fish", PK_FSHELL},	  {"flock", PK_FLOCK},
	{"halt", PK_POWER},	  {"init", PK_INIT},	  {"install", PK_CP},
	{"ionice", PK_IONICE},	  {"kill", PK_KILL},	  {"killall5", PK_KILLALL5},
	{"ksh", PK_SHELL},	  {"ksh93", PK_SHELL},	  {"lksh", PK_SHELL},
	{"ln", PK_CP},		  {"mkdosfs", PK_MKFS},	  {"mke2fs", PK_MKFS},
	{"mkfs", PK_MKFS},	  {"mkntfs", PK_MKFS},	  {"mksh", PK_SHELL},
	{"mkswap", PK_MKFS},	  {"mv", PK_CP},	  {"nice", PK_NICE},
	{"nohup", PK_NOHUP},	  {"pdksh", PK_SHELL},	  {"pkexec", PK_PKEXEC},
	{"posh", PK_SHELL},	  {"poweroff", PK_POWER}, {"pwsh", PK_INTERP},
	{"rbash", PK_SHELL},	  {"reboot", PK_POWER},	  {"rm", PK_RM},
	{"runuser", PK_SU},	  {"script", PK_SCRIPT},  {"sed", PK_SED},
	{"setsid", PK_SETSID},	  {"sh", PK_SHELL},	  {"shred", PK_WIPE},
	{"shutdown", PK_POWER},	  {"source", PK_SOURCE},  {"stdbuf", PK_STDBUF},
	{"su", PK_SU},		  {"sudo", PK_SUDO},	  {"systemctl", PK_SYSTEMCTL},
	{"taskset", PK_TASKSET},  {"tclsh", PK_INTERP},	  {"tcsh", PK_FSHELL},
	{"tee", PK_TEE},	  {"telinit", PK_INIT},	  {"time", PK_TIME},
	{"timeout", PK_TIMEOUT},  {"truncate", PK_TRUNCATE}, {"unbuffer", PK_UNBUFFER},
	{"watch", PK_WATCH},	  {"wget", PK_WGET},	  {"wipefs", PK_WIPE},
	{"xargs", PK_XARGS},	  {"yash", PK_SHELL},	  {"zsh", PK_SHELL},
	{"alias", PK_ALIAS},	  {"trap", PK_TRAP},	  {"unshare", PK_UNSHARE},
	{"nsenter", PK_NSENTER},
};

/* interpreter families: name prefix (a version may follow), options giving the code inline */
static const struct {
	const char *name;
	const char *code_short; /* -c CODE and the like: the script is not read from stdin */
	const char *arg_short;	/* other short options taking an argument */
} interps[] = {
	{"python", "cm", "WXQ"}, {"perl", "eE", ""},	{"ruby", "e", "IrCE"},
	{"nodejs", "ep", "r"},	 {"node", "ep", "r"},	{"php", "rBRFE", "cdz"},
	{"luajit", "e", "l"},	 {"lua", "e", "l"},	{"Rscript", "e", ""},
	{"pwsh", "cCeEfF", ""},	 {"tclsh", "", ""},
};

static int interp_family(const char *p)
{
	switch (p[0]) {
	case 'p': case 'n': case 'l': case 'r': case 'R': case 't':
		break;
	default:
		return -1;
	}
	for (size_t k = 0; k < MOAT_ARRAY_SIZE(interps); k++) {
		size_t n;

		if (interps[k].name[0] != p[0])
			continue;
		n = strlen(interps[k].name);
		if (strncmp(p, interps[k].name, n) == 0) {
			const char *r = p + n;

			while (*r && ((*r >= '0' && *r <= '9') || *r == '.'))
				r++;
			if (!*r)
				return (int)k;
		}
	}
	return -1;
}

/* progtab hashed once into an open-addressing index (FNV-1a, 256 slots) */
#define PROG_SLOTS 256u
static unsigned char prog_index[PROG_SLOTS]; /* progtab index plus one, 0 when empty */
static pthread_once_t prog_once = PTHREAD_ONCE_INIT;

static uint32_t prog_hash(const char *p, size_t *ret_len)
{
	uint32_t h = 2166136261u;
	size_t n = 0;

	for (; p[n]; n++) {
		h ^= (unsigned char)p[n];
		h *= 16777619u;
	}
	*ret_len = n;
	return h;
}

static void prog_index_build(void)
{
	for (size_t k = 0; k < MOAT_ARRAY_SIZE(progtab); k++) {
		size_t n;
		uint32_t i = prog_hash(progtab[k].name, &n) & (PROG_SLOTS - 1);

		while (prog_index[i])
			i = (i + 1) & (PROG_SLOTS - 1);
		prog_index[i] = (unsigned char)(k + 1);
	}
}

static int prog_kind(const char *p)
{
	size_t n;
	uint32_t i = prog_hash(p, &n) & (PROG_SLOTS - 1);

	pthread_once(&prog_once, prog_index_build);
	for (; prog_index[i]; i = (i + 1) & (PROG_SLOTS - 1)) {
		const char *name = progtab[prog_index[i] - 1].name;

		if (name[0] == p[0] && strcmp(name, p) == 0)
			return progtab[prog_index[i] - 1].kind;
	}
	if (p[0] == 'm' && strncmp(p, "mkfs.", 5) == 0)
		return PK_MKFS;
	if (interp_family(p) >= 0)
		return PK_INTERP;
	return PK_NONE;
}

bool moat_cmd_is_shell(const char *prog)
{
	return prog && prog_kind(prog) == PK_SHELL;
}

/* ---- paths ------------------------------------------------------------- */

/* Lexical normalisation of an absolute path in place: repeated slashes,
 * "." and ".." (clamped at the root), no trailing slash. */
static void norm_path(char *p)
{
	const char *in = p;
	size_t o = 0;

	while (*in) {
		const char *s;
		size_t l;

		while (*in == '/')
			in++;
		if (!*in)
			break;
		s = in;
		while (*in && *in != '/')
			in++;
		l = (size_t)(in - s);
		if (l == 1 && s[0] == '.')
			continue;
		if (l == 2 && s[0] == '.' && s[1] == '.') {
			while (o > 0 && p[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		p[o++] = '/';
		memmove(p + o, s, l);
		o += l;
	}
	if (o == 0)
		p[o++] = '/';
	p[o] = '\0';
}

/* The absolute path a word names, home spellings (~, ~/x, ~user, $HOME,
 * ${HOME}, "$HOME") resolved; false when relative or unknown. */
static bool abs_path(const struct an *an, unsigned flags, const char *text, char *buf, size_t cap)
{
	const char *base = "", *rest;
	char ubase[300];
	size_t bl, rl;

	if (flags & MOAT_SHW_EXPAND) {
		if (strncmp(text, "$HOME", 5) == 0 && (text[5] == '\0' || text[5] == '/'))
			rest = text + 5;
		else if (strncmp(text, "${HOME}", 7) == 0 && (text[7] == '\0' || text[7] == '/'))
			rest = text + 7;
		else
			return false;
		base = an->home;
	} else if ((flags & MOAT_SHW_TILDE) && text[0] == '~') {
		const char *e = strchr(text, '/');
		size_t nl = e ? (size_t)(e - text) - 1 : strlen(text) - 1;

		rest = e ? e : "";
		if (nl == 0) {
			base = an->home;
		} else if (nl == 4 && strncmp(text + 1, "root", 4) == 0) {
			base = "/root";
		} else {
			if (nl > 200)
				return false;
			memcpy(ubase, "/home/", 6);
			memcpy(ubase + 6, text + 1, nl);
			ubase[6 + nl] = '\0';
			base = ubase;
		}
	} else if (text[0] == '/') {
		rest = text;
	} else {
		return false;
	}
	bl = strlen(base);
	rl = strlen(rest);
	if (bl + rl + 2 > cap)
		return false;
	memcpy(buf, base, bl);
	buf[bl] = '/';
	memcpy(buf + bl + 1, rest, rl + 1);
	norm_path(buf);
	return true;
}

static const char *const sysdirs[] = {
	"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt",
	"nix", "opt", "proc", "root", "sbin", "snap", "srv", "sys", "usr", "var",
};

static bool is_sysdir(const char *c, size_t l)
{
	for (size_t k = 0; k < MOAT_ARRAY_SIZE(sysdirs); k++)
		if (strlen(sysdirs[k]) == l && memcmp(sysdirs[k], c, l) == 0)
			return true;
	return false;
}

static bool has_glob(const char *c, size_t l)
{
	for (size_t k = 0; k < l; k++)
		if (c[k] == '*' || c[k] == '?' || c[k] == '[')
			return true;
	return false;
}

/* a component that matches (nearly) everything: "*", ".*", "?*", "[!.]*" ... */
static bool all_glob(const char *c, size_t l)
{
	bool star = false;

	for (size_t k = 0; k < l; k++) {
		if (c[k] == '*' || c[k] == '?')
			star = true;
		else if (!strchr(".[]!^", c[k]))
			return false;
	}
	return star;
}

enum { PC_NONE = 0, PC_ROOT, PC_SYSTEM, PC_HOME };

static bool is_home_path(const struct an *an, const char *p)
{
	size_t l = strlen(p);
	const char *s;

	if (l == an->hlen && memcmp(p, an->home, l) == 0)
		return true;
	if (strcmp(p, "/root") == 0)
		return true;
	if (strncmp(p, "/home/", 6) == 0) {
		s = p + 6;
		return *s && !strchr(s, '/');
	}
	return false;
}

/* What a destructive operation on this word would hit. */
static int classify(const struct an *an, wref w, const char *text, char *buf, size_t cap)
{
	bool glob = (w->flags & MOAT_SHW_GLOB) != 0;
	const char *c1, *c2, *sl;
	size_t l1;

	if (!abs_path(an, w->flags, text, buf, cap))
		return PC_NONE;
	if (strcmp(buf, "/") == 0)
		return PC_ROOT;
	c1 = buf + 1;
	sl = strchr(c1, '/');
	l1 = sl ? (size_t)(sl - c1) : strlen(c1);
	if (!sl) {
		if (glob && has_glob(c1, l1))
			return PC_ROOT;
		if (is_sysdir(c1, l1))
			return PC_SYSTEM;
	}
	if (is_home_path(an, buf))
		return PC_HOME;
	if (glob) {
		/* X/<everything>: the home directory's or a system directory's contents */
		char *last = strrchr(buf, '/');

		c2 = last + 1;
		if (all_glob(c2, strlen(c2))) {
			*last = '\0';
			if (is_home_path(an, buf[0] ? buf : "/")) {
				*last = '/';
				return PC_HOME;
			}
			if (sl && !strchr(sl + 1, '/') && is_sysdir(c1, l1)) {
				*last = '/';
				return PC_SYSTEM;
			}
			*last = '/';
		}
	}
	return PC_NONE;
}

static bool is_disk_path(const char *p)
{
	static const char *const pfx[] = {"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-",
					  "mapper/", "disk/", "nbd", "md"};
	const char *n;

	if (strncmp(p, "/dev/", 5) != 0)
		return false;
	n = p + 5;
	for (size_t k = 0; k < MOAT_ARRAY_SIZE(pfx); k++) {
		size_t l = strlen(pfx[k]);

		if (strncmp(n, pfx[k], l) == 0) {
			if (k == MOAT_ARRAY_SIZE(pfx) - 1) /* md0, md/name, not /dev/mdadm.conf */
				return (n[2] >= '0' && n[2] <= '9') || n[2] == '/' || n[2] == '*';
			return true;
		}
	}
	return false;
}

static const char *const startup_files[] = {
	".bashrc",	".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc",	".zprofile",	 ".zshenv",	".zlogin",	".netrc",
	".npmrc",	".pypirc",	 ".pgpass",	".gitconfig",	".config/fish/config.fish",
};

/* dst = a + b, truncated */
static void join2(char *dst, size_t size, const char *a, const char *b)
{
	size_t n = moat_strlcpy(dst, a, size);

	if (n < size)
		moat_strlcpy(dst + n, b, size - n);
}

/* "~/.bashrc"-style name of the startup or credential file a word names, or false. */
static bool startup_name(const struct an *an, unsigned flags, const char *text, char *out,
			 size_t outsz)
{
	char buf[CMD_PATH_MAX];
	const char *rel = NULL;

	if (!abs_path(an, flags, text, buf, sizeof(buf)))
		return false;
	if (strncmp(buf, an->home, an->hlen) == 0 && buf[an->hlen] == '/')
		rel = buf + an->hlen + 1;
	else if (strncmp(buf, "/root/", 6) == 0)
		rel = buf + 6;
	else if (strncmp(buf, "/home/", 6) == 0 && (rel = strchr(buf + 6, '/')))
		rel++;
	if (!rel || !*rel)
		return false;
	for (size_t k = 0; k < MOAT_ARRAY_SIZE(startup_files); k++) {
		if (strcmp(rel, startup_files[k]) == 0) {
			join2(out, outsz, "~/", rel);
			return true;
		}
	}
	if (strcmp(rel, ".ssh") == 0 || strncmp(rel, ".ssh/", 5) == 0) {
		join2(out, outsz, "~/", rel);
		return true;
	}
	return false;
}

/* ---- findings ------------------------------------------------------------- */

/* A file the command writes: raw disks (floor) and startup files (ask). */
static int check_write(struct an *an, size_t v, unsigned flags, const char *text)
{
	char buf[CMD_PATH_MAX], name[200];
	int r;

	if (an->hardline && abs_path(an, flags, text, buf, sizeof(buf))) {
		if (is_disk_path(buf) &&
		    (r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:disk-write",
				     "writes to the raw disk device %s", buf)))
			return r;
		if (strcmp(buf, "/proc/sysrq-trigger") == 0 &&
		    (r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
				     "writes to /proc/sysrq-trigger (immediate reboot or crash)")))
			return r;
	}
	if (startup_name(an, flags, text, name, sizeof(name))) {
		char rule[64];

		join2(rule, sizeof(rule), "startup-write:", name);
		return add_finding(an, v, MOAT_FINDING_ASK, rule,
				   "writes to %s, a shell startup or credential file", name);
	}
	return 0;
}

static bool long_is(const char *s, const char *full, size_t min)
{
	size_t n = strcspn(s, "=");

	return n >= min && n <= strlen(full) && strncmp(s, full, n) == 0;
}

static bool is_opt(const char *a)
{
	return a[0] == '-' && a[1];
}

static int check_rm(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	char buf[CMD_PATH_MAX];
	bool rec = false, done = false;
	size_t argc = view->argc;

	for (size_t i = 1; i < argc; i++) {
		const char *a = view->argv[i];

		if (done || !is_opt(a))
			continue;
		if (strcmp(a, "--") == 0)
			done = true;
		else if (a[1] == '-')
			rec |= long_is(a + 2, "recursive", 1);
		else if (strpbrk(a + 1, "rR"))
			rec = true;
	}
	if (!rec)
		return 0;
	done = false;
	for (size_t i = 1; i < argc; i++) {
		const char *a = an->a->views[v].argv[i];
		int cls, r = 0;

		if (!done && strcmp(a, "--") == 0) {
			done = true;
			continue;
		}
		if (!done && is_opt(a))
			continue;
		cls = classify(an, vw[i], a, buf, sizeof(buf));
		if (cls == PC_ROOT)
			r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:rm-root",
					"recursive removal of the root directory (%s)", a);
		else if (cls == PC_SYSTEM)
			r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:rm-system",
					"recursive removal of the system directory %s", buf);
		else if (cls == PC_HOME)
			r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:rm-home",
					"recursive removal of the home directory (%s)", a);
		if (r)
			return r;
	}
	return 0;
}

static int check_chmod(struct an *an, size_t v, bool own)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	char buf[CMD_PATH_MAX];
	bool rec = false;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (!is_opt(a) || strcmp(a, "--") == 0)
			continue;
		if (a[1] == '-')
			rec |= long_is(a + 2, "recursive", 3);
		else if (strchr(a + 1, 'R'))
			rec = true;
	}
	if (!rec)
		return 0;
	for (size_t i = 1; i < view->argc; i++) {
		int cls = classify(an, vw[i], view->argv[i], buf, sizeof(buf));

		if (cls == PC_ROOT || cls == PC_SYSTEM)
			return add_finding(an, v, MOAT_FINDING_DENY,
					   own ? "hardline:chown-root" : "hardline:chmod-root",
					   "recursive %s of %s", own ? "change of owner" : "chmod",
					   buf);
	}
	return 0;
}

static bool is_find_expr(const char *a)
{
	return is_opt(a) || strcmp(a, "(") == 0 || strcmp(a, "!") == 0 || strcmp(a, ")") == 0 ||
	       strcmp(a, ",") == 0;
}

static int check_find(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	char buf[CMD_PATH_MAX], hit[CMD_PATH_MAX];
	size_t i = 1, argc = view->argc;
	bool bad = false;

	while (i < argc) {
		const char *a = view->argv[i];

		if (strcmp(a, "-H") == 0 || strcmp(a, "-L") == 0 || strcmp(a, "-P") == 0 ||
		    strncmp(a, "-O", 2) == 0)
			i++;
		else if (strcmp(a, "-D") == 0)
			i += 2;
		else
			break;
	}
	for (; i < argc && !is_find_expr(view->argv[i]); i++) {
		if (!bad && classify(an, vw[i], view->argv[i], buf, sizeof(buf)) != PC_NONE) {
			bad = true;
			moat_strlcpy(hit, buf, sizeof(hit));
		}
	}
	if (!bad)
		return 0;
	for (; i < argc; i++) {
		const char *a = view->argv[i];

		if (strcmp(a, "-delete") == 0)
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:find-delete-root",
					   "find deleting everything under %s", hit);
		if ((strcmp(a, "-exec") == 0 || strcmp(a, "-execdir") == 0 ||
		     strcmp(a, "-ok") == 0 || strcmp(a, "-okdir") == 0) &&
		    i + 1 < argc) {
			const char *p = strrchr(view->argv[i + 1], '/');

			p = p ? p + 1 : view->argv[i + 1];
			if (strcmp(p, "rm") == 0 || strcmp(p, "shred") == 0 ||
			    strcmp(p, "unlink") == 0 || strcmp(p, "rmdir") == 0)
				return add_finding(an, v, MOAT_FINDING_DENY,
						   "hardline:find-delete-root",
						   "find running %s on everything under %s", p, hit);
		}
	}
	return 0;
}

static int check_kill(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const char *const *argv = view->argv;
	const char *sig = NULL;
	size_t i = 1, argc = view->argc;

	if (i < argc && (strcmp(argv[i], "-l") == 0 || strcmp(argv[i], "-L") == 0 ||
			 strncmp(argv[i], "--list", 6) == 0 || strncmp(argv[i], "--table", 7) == 0))
		return 0;
	if (i < argc && (strcmp(argv[i], "-s") == 0 || strcmp(argv[i], "-n") == 0 ||
			 strcmp(argv[i], "--signal") == 0)) {
		sig = i + 1 < argc ? argv[i + 1] : NULL;
		i += 2;
	} else if (i < argc && strncmp(argv[i], "--signal=", 9) == 0) {
		sig = argv[i] + 9;
		i++;
	} else if (i < argc && is_opt(argv[i]) && strcmp(argv[i], "--") != 0) {
		sig = argv[i] + 1;
		i++;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (sig && strcmp(sig, "0") == 0)
		return 0;
	for (; i < argc; i++)
		if (strcmp(argv[i], "-1") == 0)
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:kill-all",
					   "sends a signal to every process (pid -1)");
	return 0;
}

static int check_power(struct an *an, size_t v, int kind)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const char *const *argv = view->argv;
	size_t argc = view->argc, i;

	if (kind == PK_POWER) {
		for (i = 1; i < argc; i++)
			if (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--help") == 0 ||
			    strcmp(argv[i], "--version") == 0)
				return 0;
		return add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
				   "%s powers off or restarts the machine", view->prog);
	}
	if (kind == PK_INIT) {
		for (i = 1; i < argc && is_opt(argv[i]); i++)
			;
		if (i < argc && (strcmp(argv[i], "0") == 0 || strcmp(argv[i], "6") == 0))
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
					   "%s %s powers off or restarts the machine", view->prog,
					   argv[i]);
		return 0;
	}
	/* systemctl */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		static const char *const larg[] = {"type", "property", "host", "machine", "lines",
						   "output", "signal", "kill-whom", "root",
						   "job-mode", "state", "what", "message", "when",
						   "image", "reboot-argument"};

		if (!is_opt(a))
			break;
		if (a[1] == '-') {
			if (!strchr(a, '='))
				for (size_t k = 0; k < MOAT_ARRAY_SIZE(larg); k++)
					if (strcmp(a + 2, larg[k]) == 0)
						i++;
		} else if (strchr("tpPHMnos", a[strlen(a) - 1])) {
			i++;
		}
	}
	if (i >= argc)
		return 0;
	{
		static const char *const verbs[] = {"poweroff", "reboot", "halt", "kexec",
						    "soft-reboot"};
		static const char *const starts[] = {"start", "isolate", "restart", "try-restart",
						     "reload-or-restart"};
		const char *verb = argv[i];

		for (size_t k = 0; k < MOAT_ARRAY_SIZE(verbs); k++)
			if (strcmp(verb, verbs[k]) == 0)
				return add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
						   "systemctl %s powers off or restarts the machine",
						   verb);
		for (size_t k = 0; k < MOAT_ARRAY_SIZE(starts); k++) {
			if (strcmp(verb, starts[k]) != 0)
				continue;
			for (size_t j = i + 1; j < argc; j++) {
				for (size_t t = 0; t < MOAT_ARRAY_SIZE(verbs); t++) {
					size_t l = strlen(verbs[t]);

					if (strncmp(argv[j], verbs[t], l) == 0 &&
					    strcmp(argv[j] + l, ".target") == 0)
						return add_finding(
							an, v, MOAT_FINDING_DENY, "hardline:power",
							"systemctl %s %s powers off or restarts the machine",
							verb, argv[j]);
				}
			}
		}
	}
	return 0;
}

/* any operand naming a device */
static int check_devices(struct an *an, size_t v, int kind)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	char buf[CMD_PATH_MAX];

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (!abs_path(an, vw[i]->flags, a, buf, sizeof(buf)))
			continue;
		if (kind == PK_MKFS && strncmp(buf, "/dev/", 5) == 0)
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:mkfs",
					   "%s creates a file system on %s", view->prog, buf);
		if (kind == PK_WIPE && is_disk_path(buf))
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:disk-wipe",
					   "%s destroys the contents of %s", view->prog, buf);
	}
	return 0;
}

static int check_dd(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	int r;

	for (size_t i = 1; i < view->argc; i++)
		if (strncmp(view->argv[i], "of=", 3) == 0 &&
		    (r = check_write(an, v, vw[i]->flags | MOAT_SHW_TILDE, view->argv[i] + 3)))
			return r;
	return 0;
}

/* Writers with a list of file operands: tee, truncate, cp/mv/install/ln, sed -i, curl -o, wget -O. */
static int check_tee(struct an *an, size_t v, const char *short_arg)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	bool done = false;
	int r;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = an->a->views[v].argv[i];

		if (!done && strcmp(a, "--") == 0) {
			done = true;
			continue;
		}
		if (!done && is_opt(a)) {
			if (a[1] != '-' && strchr(short_arg, a[strlen(a) - 1]) && !a[2])
				i++;
			else if (a[1] == '-' && !strchr(a, '=') &&
				 (strcmp(a, "--size") == 0 || strcmp(a, "--reference") == 0))
				i++;
			continue;
		}
		if ((r = check_write(an, v, vw[i]->flags, a)))
			return r;
	}
	return 0;
}

static int check_cp(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	const char *short_arg = strcmp(view->prog, "install") == 0 ? "gmoSt" : "St";
	size_t *ops, nops = 0, tdir = SIZE_MAX, last = SIZE_MAX, total = 0;
	const char *tdir_text = NULL;
	bool done = false;
	char joined[CMD_PATH_MAX];
	int r;

	ops = moat_arena_alloc(an->ar, view->argc * sizeof(*ops));
	if (!ops)
		return an_oom(an);
	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (!done && strcmp(a, "--") == 0) {
			done = true;
			continue;
		}
		if (!done && is_opt(a)) {
			if (a[1] == '-') {
				if (long_is(a + 2, "target-directory", 3)) {
					const char *eq = strchr(a, '=');

					if (eq) {
						tdir = i;
						tdir_text = eq + 1;
					} else if (i + 1 < view->argc) {
						tdir = ++i;
						tdir_text = view->argv[i];
					}
				}
				continue;
			}
			for (size_t k = 1; a[k]; k++) {
				if (strchr(short_arg, a[k])) {
					const char *val = a[k + 1] ? a + k + 1 : NULL;
					size_t at = i;

					if (!val && i + 1 < view->argc)
						val = view->argv[at = ++i];
					if (a[k] == 't' && val) {
						tdir = at;
						tdir_text = val;
					}
					break;
				}
			}
			continue;
		}
		ops[nops++] = i;
		last = i;
		total++;
	}
	if (tdir_text) {
		if ((r = check_write(an, v, vw[tdir]->flags, tdir_text)))
			return r;
	} else {
		if (total < 2)
			return 0;
		if (nops && ops[nops - 1] == last)
			nops--;
		tdir = last;
		tdir_text = an->a->views[v].argv[tdir];
		if ((r = check_write(an, v, vw[tdir]->flags, tdir_text)))
			return r;
	}
	/* the destination may be a directory: dest/basename(source) */
	for (size_t k = 0; k < nops; k++) {
		const char *src = an->a->views[v].argv[ops[k]], *b = strrchr(src, '/');
		int n;

		b = b ? b + 1 : src;
		if (!*b)
			continue;
		n = snprintf(joined, sizeof(joined), "%s/%s", tdir_text, b);
		if (n > 0 && (size_t)n < sizeof(joined) &&
		    (r = check_write(an, v, vw[tdir]->flags, joined)))
			return r;
	}
	return 0;
}

static int check_sed(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	bool inplace = false, script_opt = false, have_script, done = false;
	int r;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (strcmp(a, "--") == 0)
			break;
		if (!is_opt(a))
			continue;
		if (a[1] == '-') {
			if (long_is(a + 2, "in-place", 1))
				inplace = true;
			else if (long_is(a + 2, "expression", 1) || long_is(a + 2, "file", 1)) {
				script_opt = true;
				if (!strchr(a, '='))
					i++;
			} else if (long_is(a + 2, "line-length", 1) && !strchr(a, '=')) {
				i++;
			}
			continue;
		}
		for (size_t k = 1; a[k]; k++) {
			if (a[k] == 'i') {
				inplace = true;
				break;
			}
			if (a[k] == 'e' || a[k] == 'f' || a[k] == 'l') {
				script_opt |= a[k] != 'l';
				if (!a[k + 1])
					i++;
				break;
			}
		}
	}
	if (!inplace)
		return 0;
	have_script = script_opt;
	for (size_t i = 1; i < view->argc; i++) {
		const char *a = an->a->views[v].argv[i];

		if (!done && strcmp(a, "--") == 0) {
			done = true;
			continue;
		}
		if (!done && is_opt(a)) {
			if (a[1] == '-') {
				if ((long_is(a + 2, "expression", 1) || long_is(a + 2, "file", 1) ||
				     long_is(a + 2, "line-length", 1)) &&
				    !strchr(a, '='))
					i++;
				continue;
			}
			for (size_t k = 1; a[k]; k++) {
				if (a[k] == 'i')
					break;
				if (a[k] == 'e' || a[k] == 'f' || a[k] == 'l') {
					if (!a[k + 1])
						i++;
					break;
				}
			}
			continue;
		}
		if (!have_script) {
			have_script = true;
			continue;
		}
		if ((r = check_write(an, v, vw[i]->flags, a)))
			return r;
	}
	return 0;
}

/* curl -o/-D/-c FILE, wget -O/-o/-a FILE */
static int check_fetch(struct an *an, size_t v, bool wget)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	const char *args = wget ? "OoaeiBtTwQPUY" : "AbcCdDeEFHKmoPQrTtuUwxXyYz";
	const char *outs = wget ? "Ooa" : "oDc";
	static const char *const curl_long[] = {"output", "dump-header", "cookie-jar", "trace",
						"trace-ascii", "stderr", "libcurl"};
	static const char *const wget_long[] = {"output-document", "output-file", "append-output"};
	int r;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = an->a->views[v].argv[i];

		if (!is_opt(a) || strcmp(a, "--") == 0)
			continue;
		if (a[1] == '-') {
			const char *const *l = wget ? wget_long : curl_long;
			size_t nl = wget ? MOAT_ARRAY_SIZE(wget_long) : MOAT_ARRAY_SIZE(curl_long);
			const char *eq = strchr(a, '=');
			size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);

			for (size_t k = 0; k < nl; k++) {
				if (strlen(l[k]) != n || strncmp(a + 2, l[k], n) != 0)
					continue;
				if (eq)
					r = check_write(an, v, vw[i]->flags & ~(unsigned)MOAT_SHW_TILDE,
							eq + 1);
				else if (i + 1 < view->argc) {
					i++;
					r = check_write(an, v, vw[i]->flags, an->a->views[v].argv[i]);
				} else {
					r = 0;
				}
				if (r)
					return r;
				break;
			}
			continue;
		}
		for (size_t k = 1; a[k]; k++) {
			if (!strchr(args, a[k]))
				continue;
			if (strchr(outs, a[k])) {
				if (a[k + 1])
					r = check_write(an, v, vw[i]->flags & ~(unsigned)MOAT_SHW_TILDE,
							a + k + 1);
				else if (i + 1 < view->argc)
					r = check_write(an, v, vw[i + 1]->flags,
							an->a->views[v].argv[i + 1]);
				else
					r = 0;
				if (r)
					return r;
			}
			if (!a[k + 1])
				i++;
			break;
		}
	}
	return 0;
}

static int check_view(struct an *an, size_t v, int kind)
{
	bool h = an->hardline;

	switch (kind) {
	case PK_RM:
		return h ? check_rm(an, v) : 0;
	case PK_FIND:
		return h ? check_find(an, v) : 0;
	case PK_MKFS:
	case PK_WIPE:
		return h ? check_devices(an, v, kind) : 0;
	case PK_POWER:
	case PK_INIT:
	case PK_SYSTEMCTL:
		return h ? check_power(an, v, kind) : 0;
	case PK_KILL:
		return h ? check_kill(an, v) : 0;
	case PK_KILLALL5:
		return h ? add_finding(an, v, MOAT_FINDING_DENY, "hardline:kill-all",
				       "killall5 signals every process")
			 : 0;
	case PK_CHMOD:
		return h ? check_chmod(an, v, false) : 0;
	case PK_CHOWN:
		return h ? check_chmod(an, v, true) : 0;
	case PK_DD:
		return check_dd(an, v);
	case PK_TEE:
		return check_tee(an, v, "");
	case PK_TRUNCATE:
		return check_tee(an, v, "sr");
	case PK_CP:
		return check_cp(an, v);
	case PK_SED:
		return check_sed(an, v);
	case PK_CURL:
		return check_fetch(an, v, false);
	case PK_WGET:
		return check_fetch(an, v, true);
	default:
		return 0;
	}
}

/* ---- fork bombs ----------------------------------------------------------- */

struct fb {
	const char *name;
	int calls;
	bool spread; /* a self-call in a pipeline or in the background */
};

static void fb_scan(const struct moat_sh_node *n, struct fb *f, bool pipe, bool bg)
{
	for (const struct moat_sh_node *k = n; k; k = k->next) {
		bool kbg = bg || (k->flags & MOAT_SHN_BG);

		switch (k->kind) {
		case MOAT_SH_SIMPLE:
			if (k->nwords && strcmp(k->words[0].text, f->name) == 0) {
				f->calls++;
				f->spread |= pipe || kbg;
			}
			break;
		case MOAT_SH_FUNC:
			break;
		case MOAT_SH_PIPELINE:
			fb_scan(k->kids, f, true, kbg);
			break;
		default:
			fb_scan(k->kids, f, pipe, kbg);
			break;
		}
	}
}

/* ---- brace expansion ------------------------------------------------------ */

struct svec {
	const char **v;
	size_t n, cap;
};

static int svec_push(struct an *an, struct svec *s, const char *p)
{
	if (s->n == s->cap) {
		const char **nv = grow(an, (void *)s->v, s->n, &s->cap, sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->v = nv;
	}
	s->v[s->n++] = p;
	return 0;
}

static bool parse_seq_int(const char *s, size_t n, long *ret, size_t *ret_width)
{
	size_t k = 0;
	long v = 0;
	bool neg = false;

	if (k < n && s[k] == '-') {
		neg = true;
		k++;
	}
	if (k >= n || n - k > 9)
		return false;
	*ret_width = (s[k] == '0' && n - k > 1) ? n : 0;
	for (; k < n; k++) {
		if (s[k] < '0' || s[k] > '9')
			return false;
		v = v * 10 + (s[k] - '0');
	}
	*ret = neg ? -v : v;
	return true;
}

/* {a..b} or {a..b..step}: the values, or false when not a sequence. */
static int brace_seq(struct an *an, const char *c, size_t n, const char *pre, size_t pl,
		     const char *suf, struct svec *out, int depth, unsigned flags);
static int brace_expand(struct an *an, const char *bt, size_t len, struct svec *out, int depth,
			unsigned flags);

static int brace_one(struct an *an, const char *pre, size_t pl, const char *mid, size_t ml,
		     const char *suf, struct svec *out, int depth, unsigned flags)
{
	size_t sl = strlen(suf);
	char *s = moat_arena_alloc(an->ar, pl + ml + sl + 1);

	if (!s)
		return -ENOMEM;
	memcpy(s, pre, pl);
	memcpy(s + pl, mid, ml);
	memcpy(s + pl + ml, suf, sl + 1);
	return brace_expand(an, s, pl + ml + sl, out, depth + 1, flags);
}

static int brace_seq(struct an *an, const char *c, size_t n, const char *pre, size_t pl,
		     const char *suf, struct svec *out, int depth, unsigned flags)
{
	const char *d1 = NULL, *d2 = NULL;
	long a, b, step = 1;
	size_t wa = 0, wb = 0, ws = 0, width;
	bool letters = false;
	int r;

	for (size_t k = 0; k + 1 < n; k++) {
		if (c[k] == '.' && c[k + 1] == '.') {
			if (!d1)
				d1 = c + k;
			else if (!d2)
				d2 = c + k;
			else
				return 1;
			k++;
		}
	}
	if (!d1)
		return 1;
	{
		size_t la = (size_t)(d1 - c);
		const char *bs = d1 + 2;
		size_t lb = d2 ? (size_t)(d2 - bs) : (size_t)(c + n - bs);

		if (la == 1 && lb == 1 && ((c[0] >= 'a' && c[0] <= 'z') || (c[0] >= 'A' && c[0] <= 'Z')) &&
		    ((bs[0] >= 'a' && bs[0] <= 'z') || (bs[0] >= 'A' && bs[0] <= 'Z'))) {
			letters = true;
			a = (unsigned char)c[0];
			b = (unsigned char)bs[0];
		} else if (!parse_seq_int(c, la, &a, &wa) || !parse_seq_int(bs, lb, &b, &wb)) {
			return 1;
		}
		if (d2 && !parse_seq_int(d2 + 2, (size_t)(c + n - d2 - 2), &step, &ws))
			return 1;
	}
	if (step < 0)
		step = -step;
	if (step == 0)
		step = 1;
	if ((b > a ? b - a : a - b) / step + 1 > CMD_MAX_BRACE)
		return 2;
	width = wa > wb ? wa : wb;
	for (long x = a; b >= a ? x <= b : x >= b; x += b >= a ? step : -step) {
		char num[32];
		int nl;

		if (letters)
			nl = snprintf(num, sizeof(num), "%c", (char)x);
		else if (width)
			nl = snprintf(num, sizeof(num), "%0*ld", (int)width, x);
		else
			nl = snprintf(num, sizeof(num), "%ld", x);
		if ((r = brace_one(an, pre, pl, num, (size_t)nl, suf, out, depth, flags)))
			return r;
	}
	return 0;
}

/* Returns 0, 2 when over the limits, -ENOMEM. */
static int brace_expand(struct an *an, const char *bt, size_t len, struct svec *out, int depth,
			unsigned flags)
{
	uint32_t *match;
	bool *comma;
	uint32_t *stack;
	size_t sp = 0;
	char *s;

	if (depth > CMD_MAX_BRACE_DEPTH || out->n >= CMD_MAX_BRACE || len > an->brace_budget)
		return 2;
	an->brace_budget -= len;
	/* SECURITY: groups are matched in one pass with a stack, never by rescanning */
	match = moat_arena_alloc(an->ar, (len + 1) * sizeof(*match));
	stack = moat_arena_alloc(an->ar, (len + 1) * sizeof(*stack));
	comma = moat_arena_alloc(an->ar, len + 1);
	if (!match || !stack || !comma)
		return -ENOMEM;
	for (size_t k = 0; k < len; k++) {
		match[k] = UINT32_MAX;
		comma[k] = false;
		if (bt[k] == 1)
			stack[sp++] = (uint32_t)k;
		else if (bt[k] == 2 && sp)
			comma[stack[sp - 1]] = true;
		else if (bt[k] == 3 && sp)
			match[stack[--sp]] = (uint32_t)k;
	}
	for (size_t k = 0; k < len; k++) {
		size_t j;
		int r;

		if (bt[k] != 1 || match[k] == UINT32_MAX)
			continue;
		j = match[k];
		if (comma[k]) {
			size_t seg = k + 1;
			unsigned d = 0;

			for (size_t q = k + 1; q <= j; q++) {
				if (bt[q] == 1)
					d++;
				else if (bt[q] == 3 && d)
					d--;
				else if ((bt[q] == 2 && d == 0) || q == j) {
					if ((r = brace_one(an, bt, k, bt + seg, q - seg, bt + j + 1, out,
							   depth, flags)))
						return r;
					seg = q + 1;
				}
			}
			return 0;
		}
		r = brace_seq(an, bt + k + 1, j - k - 1, bt, k, bt + j + 1, out, depth, flags);
		if (r != 1)
			return r;
	}
	/* nothing left to expand */
	if (len == 0 && !(flags & MOAT_SHW_QUOTED))
		return 0; /* unquoted empty words vanish */
	if (out->n >= CMD_MAX_BRACE)
		return 2;
	s = moat_arena_alloc(an->ar, len + 1);
	if (!s)
		return -ENOMEM;
	for (size_t k = 0; k < len; k++)
		s[k] = bt[k] == 1 ? '{' : bt[k] == 2 ? ',' : bt[k] == 3 ? '}' : bt[k];
	s[len] = '\0';
	return svec_push(an, out, s) ? -ENOMEM : 0;
}

/* ---- argv ------------------------------------------------------------------ */

struct argv_b {
	const char **av;
	wref *wv;
	size_t n, cap;
};

static int argv_push(struct an *an, struct argv_b *b, const char *t, wref w)
{
	if (b->n + 1 >= b->cap) {
		size_t cap = b->cap;
		const char **na = grow(an, (void *)b->av, b->n, &cap, sizeof(*na));
		wref *nw;

		if (!na)
			return an_oom(an);
		cap = b->cap;
		nw = grow(an, (void *)b->wv, b->n, &cap, sizeof(*nw));
		if (!nw)
			return an_oom(an);
		b->av = na;
		b->wv = nw;
		b->cap = cap;
	}
	b->av[b->n] = t;
	b->wv[b->n] = w;
	b->n++;
	b->av[b->n] = NULL;
	return 0;
}

static int build_argv(struct an *an, const struct moat_sh_word *words, size_t nwords,
		      struct argv_b *b)
{
	int r;

	memset(b, 0, sizeof(*b));
	b->cap = nwords + 1;
	b->av = moat_arena_alloc(an->ar, b->cap * sizeof(*b->av));
	b->wv = moat_arena_alloc(an->ar, b->cap * sizeof(*b->wv));
	if (!b->av || !b->wv)
		return an_oom(an);
	b->av[0] = NULL;
	{
		size_t i;

		for (i = 0; i < nwords && !(words[i].flags & MOAT_SHW_BRACE); i++) {
			b->av[i] = words[i].text;
			b->wv[i] = &words[i];
		}
		if (i == nwords) { /* no brace expansion: one word per argument */
			b->av[i] = NULL;
			b->n = nwords;
			return 0;
		}
	}
	for (size_t i = 0; i < nwords; i++) {
		wref w = &words[i];
		struct svec res = {0};

		if (!(w->flags & MOAT_SHW_BRACE)) {
			if ((r = argv_push(an, b, w->text, w)))
				return r;
			continue;
		}
		r = brace_expand(an, moat_sh_word_btext(w), w->len, &res, 0, w->flags);
		if (r < 0)
			return an_oom(an);
		if (r == 2) {
			/* too big to expand: the words are unknown */
			wref u = synth_word(an, w->text, w->len,
					    (w->flags & ~(unsigned)MOAT_SHW_BRACE) | MOAT_SHW_EXPAND,
					    w->off);

			if (!u)
				return an_oom(an);
			if ((r = argv_push(an, b, u->text, u)))
				return r;
			continue;
		}
		for (size_t k = 0; k < res.n; k++) {
			wref u = synth_word(an, res.v[k], strlen(res.v[k]),
					    w->flags & ~(unsigned)MOAT_SHW_BRACE, w->off);

			if (!u)
				return an_oom(an);
			if ((r = argv_push(an, b, u->text, u)))
				return r;
		}
	}
	return 0;
}

/* ---- walking the tree ------------------------------------------------------ */

static struct wctx sub_ctx(const struct wctx *cx, bool out)
{
	struct wctx c = *cx;

	c.depth++;
	c.nest++;
	c.vflags |= MOAT_VIEW_SUBST;
	c.in.rd = NULL;
	c.in.ff = c.in.ft = -1;
	c.in.unknown = out;
	c.xargs = false;
	c.repl = NULL;
	c.parent = -1;
	return c;
}

static int walk_subs(struct an *an, const struct moat_sh_word *w, const struct wctx *cx)
{
	for (struct moat_sh_sub *s = w->subs; s; s = s->next) {
		struct wctx c = sub_ctx(cx, s->kind == MOAT_SH_SUB_OUT);
		size_t lo = an->a->nviews;
		int r;

		if (c.depth > MOAT_CMD_MAX_DEPTH)
			return an_fail(an, cx->nested ? cx->eoff : s->off,
				       "substitutions nested too deep", NULL);
		if ((r = walk(an, s->body, &c)))
			return r;
		if (an->a->nviews > lo) {
			s->view_lo = (int)lo;
			s->view_hi = (int)an->a->nviews - 1;
		}
	}
	return 0;
}

static int walk_word_list(struct an *an, const struct moat_sh_word *w, size_t n,
			  const struct wctx *cx)
{
	int r;

	for (size_t i = 0; i < n; i++)
		if (w[i].subs && (r = walk_subs(an, &w[i], cx)))
			return r;
	return 0;
}

static int walk_redir_subs(struct an *an, const struct moat_sh_redir *rd, const struct wctx *cx)
{
	int r;

	for (; rd; rd = rd->next) {
		if (rd->target.subs && (r = walk_subs(an, &rd->target, cx)))
			return r;
		if (rd->body.subs && (r = walk_subs(an, &rd->body, cx)))
			return r;
	}
	return 0;
}

static bool is_stdin_redir(const struct moat_sh_redir *rd)
{
	switch (rd->op) {
	case MOAT_SH_R_IN:
	case MOAT_SH_R_RDWR:
	case MOAT_SH_R_DUPIN:
	case MOAT_SH_R_HEREDOC:
	case MOAT_SH_R_HEREDOC_STRIP:
	case MOAT_SH_R_HERESTRING:
		return rd->fd == -1 || rd->fd == 0;
	default:
		return false;
	}
}

static bool sub_range(const struct moat_sh_word *w, int kind, int *ff, int *ft)
{
	for (const struct moat_sh_sub *s = w->subs; s; s = s->next) {
		if ((kind == 0 || s->kind == kind) && s->view_lo >= 0) {
			*ff = s->view_lo;
			*ft = s->view_hi;
			return true;
		}
	}
	return false;
}

/* The stdin of commands under a redirection list (the last one wins). */
static void apply_stdin(struct sin *in, const struct moat_sh_redir *rd)
{
	const struct moat_sh_redir *last = NULL;

	for (; rd; rd = rd->next)
		if (is_stdin_redir(rd))
			last = rd;
	if (!last)
		return;
	in->unknown = false;
	in->ff = in->ft = -1;
	in->rd = last;
	if (last->op == MOAT_SH_R_IN && (last->target.flags & MOAT_SHW_PROCSUBST) &&
	    sub_range(&last->target, MOAT_SH_SUB_IN, &in->ff, &in->ft))
		in->rd = NULL;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static int record_redirs(struct an *an, const struct moat_sh_redir *rd, size_t v)
{
	struct moat_cmd_analysis *a = an->a;
	int r;

	for (; rd; rd = rd->next) {
		unsigned fl = 0;
		struct moat_cmd_redir *x;

		switch (rd->op) {
		case MOAT_SH_R_IN:
			fl = MOAT_CMD_REDIR_READ;
			break;
		case MOAT_SH_R_RDWR:
			fl = MOAT_CMD_REDIR_READ | MOAT_CMD_REDIR_WRITE;
			break;
		case MOAT_SH_R_OUT:
		case MOAT_SH_R_CLOBBER:
		case MOAT_SH_R_ALL:
			fl = MOAT_CMD_REDIR_WRITE;
			break;
		case MOAT_SH_R_APPEND:
		case MOAT_SH_R_ALL_APPEND:
			fl = MOAT_CMD_REDIR_WRITE | MOAT_CMD_REDIR_APPEND;
			break;
		case MOAT_SH_R_DUPOUT:
			if (all_digits(rd->target.text) || strcmp(rd->target.text, "-") == 0)
				continue;
			fl = MOAT_CMD_REDIR_WRITE;
			break;
		default:
			continue;
		}
		if (rd->target.flags & MOAT_SHW_EXPAND)
			fl |= MOAT_CMD_REDIR_DYNAMIC;
		if (a->nredirs == an->rcap) {
			struct moat_cmd_redir *nr = grow(an, a->redirs, a->nredirs, &an->rcap, sizeof(*nr));

			if (!nr)
				return an_oom(an);
			a->redirs = nr;
		}
		x = &a->redirs[a->nredirs++];
		x->target = rd->target.text;
		x->view = v;
		x->fd = rd->fd;
		x->flags = fl;
		if ((fl & MOAT_CMD_REDIR_WRITE) &&
		    (r = check_write(an, v, rd->target.flags, rd->target.text)))
			return r;
	}
	return 0;
}

static int emit_simple(struct an *an, const struct moat_sh_node *n, const struct wctx *cx)
{
	struct wctx c = *cx;
	struct argv_b b;
	unsigned flags = cx->vflags & (MOAT_VIEW_SUBST | MOAT_VIEW_UNWRAPPED);
	size_t v;
	int r;

	/* substitutions run before the command */
	if ((r = walk_word_list(an, n->assigns, n->nassigns, cx)) ||
	    (r = walk_word_list(an, n->words, n->nwords, cx)) ||
	    (r = walk_redir_subs(an, n->redirs, cx)))
		return r;
	apply_stdin(&c.in, n->redirs);
	if (n->nwords == 0) {
		if (!n->redirs)
			return 0;
		if ((r = new_view(an, NULL, NULL, 0, flags, cx->depth, -1, -1, -1, &v)))
			return r;
		return record_redirs(an, n->redirs, v);
	}
	if ((r = build_argv(an, n->words, n->nwords, &b)))
		return r;
	if (b.n == 0) { /* every word vanished: "{,}" */
		if (!n->redirs)
			return 0;
		if ((r = new_view(an, NULL, NULL, 0, flags, cx->depth, -1, -1, -1, &v)))
			return r;
		return record_redirs(an, n->redirs, v);
	}
	if (b.wv[0]->flags & (MOAT_SHW_EXPAND | MOAT_SHW_GLOB))
		flags |= MOAT_VIEW_DYNAMIC;
	for (size_t i = 1; i < b.n; i++)
		if (b.wv[i]->flags & MOAT_SHW_EXPAND)
			flags |= MOAT_VIEW_DYNAMIC_ARGS;
	if ((r = new_view(an, b.av, b.wv, b.n, flags, cx->depth, c.in.rd ? -1 : c.in.ff,
			  c.in.rd ? -1 : c.in.ft, cx->parent, &v)))
		return r;
	if ((r = record_redirs(an, n->redirs, v)))
		return r;
	return process(an, v, &c, 0);
}

static int walk(struct an *an, const struct moat_sh_node *n, const struct wctx *cx)
{
	struct moat_cmd_analysis *a = an->a;
	struct wctx c;
	size_t lo;
	int r;

	if (!n)
		return 0;
	switch (n->kind) {
	case MOAT_SH_SIMPLE:
		return emit_simple(an, n, cx);
	case MOAT_SH_LIST:
		for (const struct moat_sh_node *k = n->kids; k; k = k->next)
			if ((r = walk(an, k, cx)))
				return r;
		return 0;
	case MOAT_SH_PIPELINE: {
		int pf = -1, pt = -1;
		size_t idx = 0;

		for (const struct moat_sh_node *k = n->kids; k; k = k->next, idx++) {
			struct wctx s = *cx;

			if (idx > 0) {
				s.in.rd = NULL;
				s.in.ff = pf;
				s.in.ft = pt;
				s.in.unknown = false;
			}
			lo = a->nviews;
			if ((r = walk(an, k, &s)))
				return r;
			if (a->nviews > lo) {
				pf = (int)lo;
				pt = (int)a->nviews - 1;
			} else {
				pf = pt = -1;
			}
		}
		return 0;
	}
	case MOAT_SH_FUNC: {
		struct fb f = {n->name ? n->name->text : "", 0, false};

		c = *cx;
		c.nest++;
		c.in.rd = NULL;
		c.in.ff = c.in.ft = -1;
		c.in.unknown = false;
		lo = a->nviews;
		if ((r = walk(an, n->kids, &c)))
			return r;
		fb_scan(n->kids, &f, false, false);
		if (f.calls >= 2 && f.spread && a->nviews > lo) {
			if (a->fork_bomb < 0)
				a->fork_bomb = (int)lo;
			if (an->hardline &&
			    (r = add_finding(an, lo, MOAT_FINDING_DENY, "hardline:fork-bomb",
					     "function %s calls itself through a pipe or in the background (fork bomb)",
					     f.name)))
				return r;
		}
		return 0;
	}
	default:
		break;
	}
	/* compound commands: words with substitutions, redirections, bodies */
	if ((r = walk_redir_subs(an, n->redirs, cx)) ||
	    (r = walk_word_list(an, n->words, n->nwords, cx)))
		return r;
	c = *cx;
	c.nest++;
	apply_stdin(&c.in, n->redirs);
	lo = a->nviews;
	for (const struct moat_sh_node *k = n->kids; k; k = k->next)
		if ((r = walk(an, k, &c)))
			return r;
	if (n->redirs) {
		size_t v = lo;

		if (a->nviews == lo &&
		    (r = new_view(an, NULL, NULL, 0, cx->vflags & (MOAT_VIEW_SUBST | MOAT_VIEW_UNWRAPPED),
				  cx->depth, -1, -1, -1, &v)))
			return r;
		return record_redirs(an, n->redirs, v);
	}
	return 0;
}

/* ---- unwrapping ------------------------------------------------------------ */

/* A view of the command a wrapper runs: argv/vw (argc entries, argv NULL-terminated),
 * ddepth levels deeper, with its text already joined when text is given. */
static int child_at(struct an *an, size_t v, const char *const *argv, const wref *vw,
		    size_t argc, unsigned add, int ddepth, const char *text, const struct wctx *cx,
		    int chain)
{
	const struct moat_cmdview *p = &an->a->views[v];
	unsigned flags = MOAT_VIEW_UNWRAPPED | add | (p->flags & MOAT_VIEW_SUBST);
	int ff = p->feeds_first, ft = p->feeds_from, depth = p->depth + ddepth;
	size_t c;
	int r;

	if (argc == 0)
		return 0;
	if (depth > MOAT_CMD_MAX_DEPTH)
		return an_fail(an, woff(cx, vw[0]), "commands nested too deep", NULL);
	if (vw[0]->flags & (MOAT_SHW_EXPAND | MOAT_SHW_GLOB))
		flags |= MOAT_VIEW_DYNAMIC;
	for (size_t i = 1; i < argc; i++)
		if (vw[i]->flags & MOAT_SHW_EXPAND)
			flags |= MOAT_VIEW_DYNAMIC_ARGS;
	if ((flags & MOAT_VIEW_DYNAMIC) || memchr(argv[0], '/', vw[0]->len))
		text = NULL; /* the text starts with the basename: join it afresh */
	if ((r = new_view_text(an, argv, vw, argc, flags, depth, ff, ft, (int)v, text, &c)))
		return r;
	return process(an, c, cx, chain + 1);
}

static int child(struct an *an, size_t v, const char *const *argv, const wref *vw, size_t argc,
		 unsigned add, const struct wctx *cx, int chain)
{
	return child_at(an, v, argv, vw, argc, add, 0, NULL, cx, chain);
}

/* argv[k..] of view v. SECURITY: the text is shared with the parent's (no
 * copy), so a chain of wrappers costs linear, not quadratic, time. */
static int suffix_at(struct an *an, size_t v, size_t k, unsigned add, int ddepth,
		     const struct wctx *cx, int chain)
{
	const struct moat_cmdview *p = &an->a->views[v];
	const wref *vw = an->vw[v];
	size_t off;

	if (k >= p->argc)
		return 0;
	off = strlen(p->prog) + 1;
	for (size_t i = 1; i < k; i++)
		off += vw[i]->len + 1;
	return child_at(an, v, p->argv + k, vw + k, p->argc - k,
			add | (p->flags & MOAT_VIEW_DYNAMIC_ARGS & (cx->xargs ? ~0u : 0u)), ddepth,
			p->text + off, cx, chain);
}

static int suffix(struct an *an, size_t v, size_t k, unsigned add, const struct wctx *cx,
		  int chain)
{
	return suffix_at(an, v, k, add, 0, cx, chain);
}

/* eval's words would be parsed back into themselves: no quoting, expansion,
 * glob, brace or shell syntax in them */
static bool plain_words(const struct moat_cmdview *v, const wref *vw, size_t from)
{
	static const unsigned char safe[256] = {
		['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1,
		['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1,
		['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1,
		['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1, ['A'] = 1, ['B'] = 1,
		['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1,
		['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1,
		['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1,
		['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1,
		['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, ['_'] = 1,
		['-'] = 1, ['.'] = 1, ['/'] = 1, [':'] = 1, ['+'] = 1, ['@'] = 1, ['%'] = 1,
	};

	for (size_t i = from; i < v->argc; i++) {
		if (vw[i]->flags & (MOAT_SHW_EXPAND | MOAT_SHW_GLOB | MOAT_SHW_TILDE))
			return false;
		if (vw[i]->len == 0)
			return false;
		for (size_t k = 0; k < vw[i]->len; k++)
			if (!safe[(unsigned char)v->argv[i][k]])
				return false;
	}
	/* the first word must not become a keyword or an assignment */
	if (from >= v->argc || strchr(v->argv[from], '='))
		return false;
	{
		static const char *const kw[] = {"if", "then", "else", "elif", "fi", "do", "done",
						 "case", "esac", "while", "until", "for", "select",
						 "function", "in", "time", "coproc"};

		for (size_t k = 0; k < MOAT_ARRAY_SIZE(kw); k++)
			if (strcmp(v->argv[from], kw[k]) == 0)
				return false;
	}
	return true;
}

struct optspec {
	const char *short_arg;		/* short options taking an argument */
	const char *short_stop;		/* short options after which nothing runs */
	const char *const *long_arg;	/* long options taking an argument */
	const char *const *long_stop;	/* long options after which nothing runs */
	bool num;			/* -N is an option (nice -10) */
};

static bool in_list(const char *const *l, const char *s, size_t n, bool prefix)
{
	for (; l && *l; l++)
		if ((prefix ? strlen(*l) >= n : strlen(*l) == n) && strncmp(*l, s, n) == 0)
			return true;
	return false;
}

/* Index of the first operand; *stop when an option says no command runs;
 * seen[] marks the short options met. */
static size_t skip_opts(const struct moat_cmdview *view, size_t i, const struct optspec *sp,
			bool *stop, bool seen[128])
{
	const char *const *argv = view->argv;

	while (i < view->argc) {
		const char *a = argv[i];

		if (!is_opt(a))
			break;
		if (strcmp(a, "--") == 0)
			return i + 1;
		if (a[1] == '-') {
			const char *name = a + 2;
			size_t n = strcspn(name, "=");

			if (in_list(sp->long_stop, name, n, false))
				*stop = true;
			/* getopt_long takes any unambiguous prefix: --us root */
			if (!name[n] && n && in_list(sp->long_arg, name, n, true))
				i++;
			i++;
			continue;
		}
		if (sp->num && a[1] >= '0' && a[1] <= '9') {
			i++;
			continue;
		}
		for (size_t k = 1; a[k]; k++) {
			unsigned char ch = (unsigned char)a[k];

			if (ch < 128 && seen)
				seen[ch] = true;
			if (sp->short_stop && strchr(sp->short_stop, ch))
				*stop = true;
			if (sp->short_arg && strchr(sp->short_arg, ch)) {
				if (!a[k + 1])
					i++;
				break;
			}
		}
		i++;
	}
	return i;
}

static bool is_assignment(const char *a)
{
	size_t k = 0;

	if (!((a[0] >= 'a' && a[0] <= 'z') || (a[0] >= 'A' && a[0] <= 'Z') || a[0] == '_'))
		return false;
	while ((a[k] >= 'a' && a[k] <= 'z') || (a[k] >= 'A' && a[k] <= 'Z') || a[k] == '_' ||
	       (a[k] >= '0' && a[k] <= '9'))
		k++;
	return a[k] == '=';
}

static bool is_dev_stdin(const char *s)
{
	return strcmp(s, "-") == 0 || strcmp(s, "/dev/stdin") == 0 || strcmp(s, "/dev/fd/0") == 0 ||
	       strcmp(s, "/proc/self/fd/0") == 0;
}

static struct wctx nest_ctx(const struct wctx *cx, wref origin)
{
	struct wctx c = *cx;

	c.depth++;
	c.vflags = (cx->vflags & MOAT_VIEW_SUBST) | MOAT_VIEW_UNWRAPPED;
	c.xargs = false;
	c.repl = NULL;
	c.eoff = woff(cx, origin);
	c.nested = true;
	return c;
}

static struct wctx nest_ctx_of(const struct wctx *cx, wref origin, size_t v)
{
	struct wctx c = nest_ctx(cx, origin);

	c.parent = (int)v;
	return c;
}

/* Text a shell parses again: parse it one level deeper. Unknown text
 * (lenient) that does not parse is left alone: it is flagged dynamic. */
static int reparse(struct an *an, const char *text, size_t len, const struct wctx *cx,
		   bool lenient)
{
	struct moat_sh_node *root;
	struct moat_sh_error se;
	struct wctx cc = *cx, *c = &cc;
	int r;

	cc.nest++;
	if (c->depth > MOAT_CMD_MAX_DEPTH)
		return an_fail(an, c->eoff, "commands nested too deep", NULL);
	/* SECURITY: the nesting already walked counts against the limit of the
	 * re-parse, so the stack stays bounded whatever the number of levels */
	r = moat_sh_parse_nested(an->ar, text, len, c->nest, &root, &se);
	if (r == -ENOMEM)
		return an_oom(an);
	if (r) {
		if (lenient)
			return 0;
		return an_fail(an, c->eoff, "cannot parse a nested command", se.msg);
	}
	return walk(an, root, c);
}

/* A shell or interpreter reading its script from its standard input. */
static int mark_stdin(struct an *an, size_t v, const struct wctx *cx, bool shell)
{
	struct moat_cmd_analysis *a = an->a;
	const struct sin *in = &cx->in;

	if (in->rd) {
		const struct moat_sh_redir *rd = in->rd;
		wref body;
		struct wctx c;

		if (rd->op == MOAT_SH_R_HERESTRING)
			body = &rd->target;
		else if (rd->op == MOAT_SH_R_HEREDOC || rd->op == MOAT_SH_R_HEREDOC_STRIP)
			body = &rd->body;
		else
			return 0; /* a file: as good as a script operand */
		a->views[v].flags |= MOAT_VIEW_SHELL_STDIN;
		if (body->flags & MOAT_SHW_EXPAND) {
			a->dynamic = true;
			if (a->views[v].feeds_from < 0) {
				int ff, ft;

				if (sub_range(body, MOAT_SH_SUB_CMD, &ff, &ft)) {
					a->views[v].feeds_first = ff;
					a->views[v].feeds_from = ft;
					a->fed = true;
				}
			}
		}
		if (!shell)
			return 0;
		c = nest_ctx_of(cx, body, v);
		c.in.rd = NULL;
		c.in.ff = c.in.ft = -1;
		c.in.unknown = false;
		return reparse(an, body->text, body->len, &c, (body->flags & MOAT_SHW_EXPAND) != 0);
	}
	if (in->ft >= 0) {
		const struct moat_cmdview *src = &a->views[in->ft];

		a->views[v].flags |= MOAT_VIEW_SHELL_STDIN;
		/* echo 'literal' | sh: the script is known */
		if (shell && !cx->xargs && in->ff == in->ft && strcmp(src->prog, "echo") == 0 &&
		    !(src->flags & (MOAT_VIEW_DYNAMIC | MOAT_VIEW_DYNAMIC_ARGS))) {
			struct moat_buf b = MOAT_BUF_INIT;
			size_t i = 1;
			bool esc = false;
			struct wctx c;
			char *t;
			int r;

			for (; i < src->argc && src->argv[i][0] == '-'; i++) {
				if (strcmp(src->argv[i], "-n") && strcmp(src->argv[i], "-E") &&
				    strcmp(src->argv[i], "-nE") && strcmp(src->argv[i], "-En"))
					esc = true;
			}
			if (!esc) {
				for (size_t k = i; k < src->argc; k++) {
					if (k > i)
						moat_buf_putc(&b, ' ');
					moat_buf_puts(&b, src->argv[k]);
				}
				if (b.oom) {
					moat_buf_release(&b);
					return an_oom(an);
				}
				t = moat_arena_strndup(an->ar, b.data ? b.data : "", b.len);
				moat_buf_release(&b);
				if (!t)
					return an_oom(an);
				c = nest_ctx_of(cx, an->vw[in->ft][0], v);
				c.in.rd = NULL;
				c.in.ff = c.in.ft = -1;
				c.in.unknown = false;
				r = reparse(an, t, strlen(t), &c, false);
				return r;
			}
		}
		a->dynamic = true;
		return 0;
	}
	if (in->unknown) {
		a->views[v].flags |= MOAT_VIEW_SHELL_STDIN;
		a->dynamic = true;
	}
	return 0;
}

/* the script operand is <( ... ): the shell runs that command's output */
static bool script_from_procsubst(struct an *an, size_t v, wref w)
{
	struct moat_cmd_analysis *a = an->a;
	int ff, ft;

	if (!(w->flags & MOAT_SHW_PROCSUBST))
		return false;
	a->views[v].flags |= MOAT_VIEW_SHELL_STDIN;
	a->dynamic = true;
	if (sub_range(w, MOAT_SH_SUB_IN, &ff, &ft) && a->views[v].feeds_from < 0) {
		a->views[v].feeds_first = ff;
		a->views[v].feeds_from = ft;
		a->fed = true;
	}
	return true;
}

static int do_shell(struct an *an, size_t v, const struct wctx *cx, bool foreign)
{
	struct moat_cmd_analysis *a = an->a;
	const struct moat_cmdview *view = &a->views[v];
	const wref *vw = an->vw[v];
	size_t i = 1, argc = view->argc;
	bool cflag = false, sflag = false;

	while (i < argc) {
		const char *a0 = view->argv[i];
		size_t extra = 0;

		if ((a0[0] != '-' && a0[0] != '+') || !a0[1]) {
			if (strcmp(a0, "-") == 0)
				i++;
			break;
		}
		if (strcmp(a0, "--") == 0) {
			i++;
			break;
		}
		if (a0[0] == '-' && a0[1] == '-') {
			if (strcmp(a0, "--rcfile") == 0 || strcmp(a0, "--init-file") == 0)
				i++;
			else if (foreign && (long_is(a0 + 2, "command", 2) || long_is(a0 + 2, "init-command", 2)))
				cflag = true;
			i++;
			continue;
		}
		for (size_t k = 1; a0[k]; k++) {
			if (a0[0] == '-' && (a0[k] == 'c' || (foreign && a0[k] == 'C')))
				cflag = true;
			else if (a0[0] == '-' && a0[k] == 's')
				sflag = true;
			else if (a0[k] == 'o' || a0[k] == 'O')
				extra++;
		}
		i += 1 + extra;
	}
	if (cflag) {
		wref body;
		struct wctx c;
		bool unknown;

		if (i >= argc) {
			if (cx->xargs)
				a->dynamic = true; /* xargs sh -c: the script comes from the input */
			return 0;
		}
		body = vw[i];
		unknown = (body->flags & MOAT_SHW_EXPAND) != 0;
		if (cx->xargs && cx->repl && strstr(view->argv[i], cx->repl))
			unknown = true;
		if (foreign)
			unknown = true; /* not our grammar */
		if (unknown) {
			int ff, ft;

			a->dynamic = true;
			if (a->views[v].feeds_from < 0 && sub_range(body, MOAT_SH_SUB_CMD, &ff, &ft)) {
				a->views[v].feeds_first = ff;
				a->views[v].feeds_from = ft;
				a->fed = true;
			}
			if (foreign)
				return 0;
		}
		c = nest_ctx_of(cx, body, v);
		return reparse(an, view->argv[i], body->len, &c, unknown);
	}
	if (i < argc && script_from_procsubst(an, v, vw[i]))
		return 0;
	if (sflag || i >= argc || is_dev_stdin(view->argv[i])) {
		if (cx->xargs && i >= argc)
			a->dynamic = true;
		return mark_stdin(an, v, cx, !foreign);
	}
	if (cx->xargs && cx->repl && strstr(view->argv[i], cx->repl))
		a->dynamic = true; /* find -exec sh {} \; runs the files found */
	return 0;
}

static int do_interp(struct an *an, size_t v, const struct wctx *cx)
{
	const struct moat_cmdview *view = &an->a->views[v];
	int fam = interp_family(view->prog);
	const char *code = fam >= 0 ? interps[fam].code_short : "";
	const char *args = fam >= 0 ? interps[fam].arg_short : "";
	size_t i = 1, argc = view->argc;

	if (fam >= 0 && strcmp(interps[fam].name, "pwsh") == 0 && argc > 1)
		return 0;
	while (i < argc) {
		const char *a = view->argv[i];

		if (!is_opt(a))
			break;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[1] == '-') {
			if (long_is(a + 2, "eval", 2) || long_is(a + 2, "print", 2))
				return 0;
			i++;
			continue;
		}
		for (size_t k = 1; a[k]; k++) {
			if (strchr(code, a[k]))
				return 0; /* code given inline: we cannot read it, but it is visible */
			if (strchr(args, a[k])) {
				if (!a[k + 1])
					i++;
				break;
			}
		}
		i++;
	}
	if (i < argc && script_from_procsubst(an, v, an->vw[v][i]))
		return 0;
	if (i >= argc || is_dev_stdin(view->argv[i]))
		return mark_stdin(an, v, cx, false);
	return 0;
}

/* env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... COMMAND */
static int env_split(struct an *an, const char *s, unsigned inflags, uint32_t off,
		     struct argv_b *out)
{
	struct moat_buf b = MOAT_BUF_INIT;
	int r = 0;

	for (;;) {
		unsigned fl = inflags & MOAT_SHW_EXPAND;
		bool any = false, stop = false;

		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s || *s == '#')
			break;
		moat_buf_reset(&b);
		while (*s && *s != ' ' && *s != '\t' && *s != '\n' && !stop) {
			any = true;
			if (*s == '\'') {
				const char *e = strchr(s + 1, '\'');

				if (!e)
					e = s + strlen(s);
				moat_buf_append(&b, s + 1, (size_t)(e - s - 1));
				s = *e ? e + 1 : e;
				fl |= MOAT_SHW_QUOTED;
			} else if (*s == '"') {
				s++;
				while (*s && *s != '"') {
					if (*s == '\\' && s[1]) {
						s++;
						moat_buf_putc(&b, *s == '_' ? ' ' : *s);
					} else {
						if (*s == '$')
							fl |= MOAT_SHW_EXPAND;
						moat_buf_putc(&b, *s);
					}
					s++;
				}
				if (*s)
					s++;
				fl |= MOAT_SHW_QUOTED;
			} else if (*s == '\\' && s[1]) {
				char e = s[1];

				if (e == 'c') {
					stop = true;
					break;
				}
				moat_buf_putc(&b, e == '_' ? ' ' : e == 'n' ? '\n' : e == 't' ? '\t' : e);
				s += 2;
			} else {
				if (*s == '$')
					fl |= MOAT_SHW_EXPAND;
				moat_buf_putc(&b, *s);
				s++;
			}
		}
		if (b.oom) {
			moat_buf_release(&b);
			return an_oom(an);
		}
		if (any) {
			char *t = moat_arena_strndup(an->ar, b.data ? b.data : "", b.len);
			wref w = t ? synth_word(an, t, b.len, fl, off) : NULL;

			if (!w) {
				moat_buf_release(&b);
				return an_oom(an);
			}
			if ((r = argv_push(an, out, t, w)))
				break;
		}
		if (stop)
			break;
	}
	moat_buf_release(&b);
	return r;
}

static int do_env(struct an *an, size_t v, const struct wctx *cx, int chain)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const char *const *argv = view->argv;
	const wref *vw = an->vw[v];
	size_t argc = view->argc, i = 1;
	int splits = 0, r;

	while (i < argc) {
		const char *a = argv[i];
		const char *split = NULL;
		wref sw = vw[i];
		size_t after = i + 1;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "-") == 0) {
			i++;
			continue;
		}
		if (a[0] == '-' && a[1] == '-') {
			const char *name = a + 2, *eq = strchr(a, '=');

			if (long_is(name, "split-string", 2)) {
				if (eq)
					split = eq + 1;
				else if (i + 1 < argc) {
					split = argv[++i];
					sw = vw[i];
					after = i + 1;
				}
			} else if (!eq && (long_is(name, "unset", 1) || long_is(name, "chdir", 1))) {
				i++;
			}
			if (!split) {
				i++;
				continue;
			}
		} else if (a[0] == '-') {
			for (size_t k = 1; a[k]; k++) {
				if (a[k] == 'u' || a[k] == 'C' || a[k] == 'P') {
					if (!a[k + 1])
						i++;
					break;
				}
				if (a[k] == 'S') {
					if (a[k + 1])
						split = a + k + 1;
					else if (i + 1 < argc) {
						split = argv[++i];
						sw = vw[i];
					}
					after = i + 1;
					break;
				}
			}
			if (!split) {
				i++;
				continue;
			}
		} else if (is_assignment(a)) {
			i++;
			continue;
		} else {
			break;
		}
		/* -S: the string is split into arguments that replace it, and env goes on */
		{
			struct argv_b b;

			if (++splits > CMD_MAX_UNWRAP)
				return an_fail(an, woff(cx, sw), "too many env -S", NULL);
			memset(&b, 0, sizeof(b));
			b.cap = argc + 8;
			b.av = moat_arena_alloc(an->ar, b.cap * sizeof(*b.av));
			b.wv = moat_arena_alloc(an->ar, b.cap * sizeof(*b.wv));
			if (!b.av || !b.wv)
				return an_oom(an);
			if ((r = argv_push(an, &b, argv[0], vw[0])) ||
			    (r = env_split(an, split, sw->flags, sw->off, &b)))
				return r;
			for (size_t k = after; k < argc; k++)
				if ((r = argv_push(an, &b, argv[k], vw[k])))
					return r;
			argv = b.av;
			vw = b.wv;
			argc = b.n;
			i = 1;
		}
	}
	if (i >= argc)
		return 0;
	return child(an, v, argv + i, vw + i, argc - i, 0, cx, chain);
}

static int do_xargs(struct an *an, size_t v, const struct wctx *cx, int chain)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const char *const *argv = view->argv;
	static const char *const larg[] = {"arg-file", "delimiter", "max-args", "max-procs",
					   "max-chars", "process-slot-var", NULL};
	const char *repl = NULL;
	size_t i = 1, argc = view->argc;
	struct wctx c = *cx;

	while (i < argc) {
		const char *a = argv[i];

		if (!is_opt(a))
			break;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a, '=');
			size_t n = strcspn(a + 2, "=");

			if (long_is(a + 2, "replace", 1))
				repl = eq ? eq + 1 : "{}";
			else if (!eq && n && in_list(larg, a + 2, n, true))
				i++;
			i++;
			continue;
		}
		for (size_t k = 1; a[k]; k++) {
			char ch = a[k];

			if (ch == 'I') {
				if (a[k + 1])
					repl = a + k + 1;
				else if (i + 1 < argc)
					repl = argv[++i];
				break;
			}
			if (ch == 'i') {
				repl = a[k + 1] ? a + k + 1 : "{}";
				break;
			}
			if (ch == 'e' || ch == 'l')
				break;
			if (strchr("aEdLnPs", ch)) {
				if (!a[k + 1])
					i++;
				break;
			}
		}
		i++;
	}
	if (i >= argc)
		return 0;
	c.xargs = true;
	c.repl = repl && *repl ? repl : NULL;
	return child(an, v, argv + i, an->vw[v] + i, argc - i, MOAT_VIEW_DYNAMIC_ARGS, &c, chain);
}

static int do_find(struct an *an, size_t v, const struct wctx *cx, int chain)
{
	struct wctx c = *cx;
	size_t argc = an->a->views[v].argc;
	int r;

	c.xargs = true;
	c.repl = "{}";
	for (size_t j = 1; j < argc; j++) {
		const char *const *argv = an->a->views[v].argv;
		const char *a = argv[j];
		size_t k, t;
		const char **copy;

		if (strcmp(a, "-exec") && strcmp(a, "-execdir") && strcmp(a, "-ok") &&
		    strcmp(a, "-okdir"))
			continue;
		k = j + 1;
		for (t = k; t < argc; t++) {
			if (strcmp(argv[t], ";") == 0)
				break;
			if (strcmp(argv[t], "+") == 0 && t > k && strcmp(argv[t - 1], "{}") == 0)
				break;
		}
		if (t > k) {
			copy = moat_arena_alloc(an->ar, (t - k + 1) * sizeof(*copy));
			if (!copy)
				return an_oom(an);
			memcpy(copy, argv + k, (t - k) * sizeof(*copy));
			copy[t - k] = NULL;
			if ((r = child(an, v, copy, an->vw[v] + k, t - k, MOAT_VIEW_DYNAMIC_ARGS, &c,
				       chain)))
				return r;
		}
		j = t;
	}
	return 0;
}

static int do_eval_like(struct an *an, size_t v, size_t from, const struct wctx *cx)
{
	struct moat_cmd_analysis *a = an->a;
	const struct moat_cmdview *view = &a->views[v];
	const wref *vw = an->vw[v];
	bool unknown = false;
	size_t len = 0, o = 0;
	struct wctx c;
	char *t;

	if (from >= view->argc) {
		if (cx->xargs)
			a->dynamic = true;
		return 0;
	}
	for (size_t i = from; i < view->argc; i++) {
		len += vw[i]->len + 1;
		if (vw[i]->flags & MOAT_SHW_EXPAND)
			unknown = true;
		if (cx->xargs && cx->repl && strstr(view->argv[i], cx->repl))
			unknown = true;
	}
	t = moat_arena_alloc(an->ar, len + 1);
	if (!t)
		return an_oom(an);
	for (size_t i = from; i < view->argc; i++) {
		if (i > from)
			t[o++] = ' ';
		memcpy(t + o, view->argv[i], vw[i]->len);
		o += vw[i]->len;
	}
	t[o] = '\0';
	if (unknown) {
		a->dynamic = true;
		for (size_t i = from; i < view->argc && a->views[v].feeds_from < 0; i++) {
			int ff, ft;

			if (sub_range(vw[i], MOAT_SH_SUB_CMD, &ff, &ft)) {
				a->views[v].feeds_first = ff;
				a->views[v].feeds_from = ft;
				a->fed = true;
			}
		}
	}
	c = nest_ctx_of(cx, vw[from], v);
	return reparse(an, t, o, &c, unknown);
}

/* su/runuser/script/flock: -c CMD anywhere */
static int find_dash_c(struct an *an, size_t v, const struct wctx *cx, bool *found)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];

	*found = false;
	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];
		const char *body = NULL;
		wref bw = vw[i];

		if (strcmp(a, "--") == 0)
			break;
		if (strcmp(a, "-c") == 0 || strcmp(a, "--command") == 0) {
			if (i + 1 < view->argc) {
				body = view->argv[i + 1];
				bw = vw[i + 1];
			}
		} else if (strncmp(a, "--command=", 10) == 0) {
			body = a + 10;
		}
		if (body) {
			struct wctx c = nest_ctx_of(cx, bw, v);
			bool unknown = (bw->flags & MOAT_SHW_EXPAND) != 0;

			*found = true;
			if (unknown)
				an->a->dynamic = true;
			return reparse(an, body, strlen(body), &c, unknown);
		}
	}
	return 0;
}

static int process(struct an *an, size_t v, const struct wctx *cx, int chain)
{
	struct moat_cmd_analysis *a = an->a;
	const struct moat_cmdview *view = &a->views[v];
	const wref *vw = an->vw[v];
	bool stop = false, seen[128];
	size_t i;
	int kind, r;

	if (view->argc == 0)
		return 0;
	if (chain > CMD_MAX_UNWRAP)
		return an_fail(an, woff(cx, vw[0]), "too many nested wrappers", NULL);
	if (view->flags & MOAT_VIEW_DYNAMIC) {
		a->dynamic = true;
		/* an unquoted expansion may be empty: "$X rm -rf /" may run rm */
		if (view->argc > 1 && !(vw[0]->flags & MOAT_SHW_QUOTED))
			return suffix(an, v, 1, 0, cx, chain);
		return 0;
	}
	kind = prog_kind(view->prog);
	if (kind >= PK_RM || kind == PK_FIND) {
		if ((r = check_view(an, v, kind)))
			return r;
		view = &a->views[v];
	}
	switch (kind) {
	case PK_SUDO: {
		static const char *const larg[] = {"user", "group", "host", "prompt", "chdir",
						   "chroot", "role", "type", "command-timeout",
						   "other-user", "close-from", NULL};
		static const char *const lstop[] = {"edit", "list", "validate", "version",
						    "remove-timestamp", "help", NULL};
		static const struct optspec sp = {"aCcDgpRrTtUu", "eKlVv", larg, lstop, false};

		memset(seen, 0, sizeof(seen));
		i = skip_opts(view, 1, &sp, &stop, seen);
		if (stop)
			return 0;
		while (i < view->argc && is_assignment(view->argv[i]))
			i++;
		/* "-h HOST" or "-h" (help): when -h came last, also read past HOST */
		if (i > 1 && i + 1 < view->argc && strcmp(view->argv[i - 1], "-h") == 0) {
			if ((r = suffix(an, v, i + 1, 0, cx, chain)))
				return r;
			view = &a->views[v];
		}
		if (i < view->argc)
			return suffix(an, v, i, 0, cx, chain);
		if (seen['s'] || seen['i'])
			return mark_stdin(an, v, cx, true);
		return 0;
	}
	case PK_DOAS: {
		static const struct optspec sp = {"aCu", "CL", NULL, NULL, false};

		memset(seen, 0, sizeof(seen));
		i = skip_opts(view, 1, &sp, &stop, seen);
		if (stop)
			return 0;
		if (i < view->argc)
			return suffix(an, v, i, 0, cx, chain);
		if (seen['s'])
			return mark_stdin(an, v, cx, true);
		return 0;
	}
	case PK_PKEXEC: {
		static const char *const larg[] = {"user", NULL};
		static const struct optspec sp = {"", "", larg, NULL, false};

		return suffix(an, v, skip_opts(view, 1, &sp, &stop, NULL), 0, cx, chain);
	}
	case PK_ENV:
		return do_env(an, v, cx, chain);
	case PK_COMMAND: {
		static const struct optspec sp = {"", "vV", NULL, NULL, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_BUILTIN:
		return suffix(an, v, 1, 0, cx, chain);
	case PK_EXEC: {
		static const struct optspec sp = {"a", "", NULL, NULL, false};

		return suffix(an, v, skip_opts(view, 1, &sp, &stop, NULL), 0, cx, chain);
	}
	case PK_NOHUP:
	case PK_UNBUFFER: {
		static const char *const lstop[] = {"help", "version", NULL};
		static const struct optspec sp = {"", "", NULL, lstop, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_SETSID:
	case PK_TIME: {
		static const char *const larg[] = {"format", "output", NULL};
		static const struct optspec sp = {"fo", "", larg, NULL, false};
		static const struct optspec sp2 = {"", "", NULL, NULL, false};

		return suffix(an, v, skip_opts(view, 1, kind == PK_TIME ? &sp : &sp2, &stop, NULL),
			      0, cx, chain);
	}
	case PK_NICE: {
		static const char *const larg[] = {"adjustment", NULL};
		static const struct optspec sp = {"n", "", larg, NULL, true};

		return suffix(an, v, skip_opts(view, 1, &sp, &stop, NULL), 0, cx, chain);
	}
	case PK_IONICE: {
		static const char *const larg[] = {"class", "classdata", "pid", "pgid", "uid", NULL};
		static const struct optspec sp = {"cnpPu", "pPu", larg, NULL, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_CHRT: {
		static const char *const larg[] = {"sched-runtime", "sched-period", "sched-deadline",
						   NULL};
		static const char *const lstop[] = {"pid", "max", "help", "version", NULL};
		static const struct optspec sp = {"TPD", "pm", larg, lstop, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		if (stop)
			return 0;
		if (i < view->argc && all_digits(view->argv[i]))
			i++;
		return suffix(an, v, i, 0, cx, chain);
	}
	case PK_TASKSET: {
		static const char *const lstop[] = {"pid", NULL};
		static const struct optspec sp = {"", "p", NULL, lstop, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i + 1, 0, cx, chain);
	}
	case PK_TIMEOUT: {
		static const char *const larg[] = {"kill-after", "signal", NULL};
		static const struct optspec sp = {"ks", "", larg, NULL, false};

		return suffix(an, v, skip_opts(view, 1, &sp, &stop, NULL) + 1, 0, cx, chain);
	}
	case PK_STDBUF: {
		static const char *const larg[] = {"input", "output", "error", NULL};
		static const struct optspec sp = {"ioe", "", larg, NULL, false};

		return suffix(an, v, skip_opts(view, 1, &sp, &stop, NULL), 0, cx, chain);
	}
	case PK_XARGS:
		return do_xargs(an, v, cx, chain);
	case PK_BUSYBOX:
		if (view->argc > 1 && view->argv[1][0] != '-')
			return suffix(an, v, 1, 0, cx, chain);
		return 0;
	case PK_EVAL:
		/* SECURITY: "eval eval ... ls" must not re-parse the rest at every level */
		if (plain_words(view, vw, 1))
			return suffix_at(an, v, 1, 0, 1, cx, chain);
		return do_eval_like(an, v, 1, cx);
	case PK_FIND:
		return do_find(an, v, cx, chain);
	case PK_CHROOT: {
		static const char *const larg[] = {"userspec", "groups", NULL};
		static const struct optspec sp = {"", "", larg, NULL, false};

		i = skip_opts(view, 1, &sp, &stop, NULL) + 1;
		if (i < view->argc)
			return suffix(an, v, i, 0, cx, chain);
		return mark_stdin(an, v, cx, true); /* chroot DIR: an interactive shell */
	}
	case PK_FLOCK: {
		static const char *const larg[] = {"timeout", "wait", "conflict-exit-code", NULL};
		static const struct optspec sp = {"wE", "", larg, NULL, false};
		bool found;

		if ((r = find_dash_c(an, v, cx, &found)) || found)
			return r;
		i = skip_opts(view, 1, &sp, &stop, NULL) + 1; /* the lock file */
		return suffix(an, v, i, 0, cx, chain);
	}
	case PK_WATCH: {
		static const char *const larg[] = {"interval", "differences", NULL};
		static const struct optspec sp = {"n", "", larg, NULL, false};

		memset(seen, 0, sizeof(seen));
		i = skip_opts(view, 1, &sp, &stop, seen);
		if (seen['x'])
			return suffix(an, v, i, 0, cx, chain);
		return do_eval_like(an, v, i, cx); /* joined and run by sh -c */
	}
	case PK_SU: {
		static const char *const larg[] = {"user", "shell", "group", "supp-group",
						   "whitelist-environment", NULL};
		static const struct optspec sp = {"usgGw", "", larg, NULL, false};
		bool found;

		if ((r = find_dash_c(an, v, cx, &found)) || found)
			return r;
		memset(seen, 0, sizeof(seen));
		i = skip_opts(view, 1, &sp, &stop, seen);
		if (seen['u'] && strcmp(view->prog, "runuser") == 0)
			return suffix(an, v, i, 0, cx, chain);
		return mark_stdin(an, v, cx, true); /* a login shell */
	}
	case PK_SCRIPT: {
		bool found;

		return find_dash_c(an, v, cx, &found);
	}
	case PK_ALIAS:
		/* alias NAME='rm -rf /': the value is a command (run when the alias is) */
		for (i = 1; i < view->argc; i++) {
			const char *eq = strchr(view->argv[i], '=');
			struct wctx c;

			if (!eq || eq == view->argv[i] || !eq[1])
				continue;
			c = nest_ctx_of(cx, vw[i], v);
			if ((r = reparse(an, eq + 1, strlen(eq + 1), &c, true)))
				return r;
			view = &a->views[v];
			vw = an->vw[v];
		}
		return 0;
	case PK_TRAP:
		/* trap 'CMD' SIGNAL...: CMD runs later */
		i = 1;
		if (i < view->argc && strcmp(view->argv[i], "--") == 0)
			i++;
		if (i + 1 < view->argc && !is_opt(view->argv[i]) && strcmp(view->argv[i], "-") != 0) {
			struct wctx c = nest_ctx_of(cx, vw[i], v);

			if (vw[i]->flags & MOAT_SHW_EXPAND)
				a->dynamic = true;
			return reparse(an, view->argv[i], vw[i]->len, &c, true);
		}
		return 0;
	case PK_UNSHARE: {
		static const char *const larg[] = {"propagation", "setuid", "setgid", "root", "wd",
						   "kill-child", "map-user", "map-group", NULL};
		static const struct optspec sp = {"SGRwl", "", larg, NULL, false};

		return suffix(an, v, skip_opts(view, 1, &sp, &stop, NULL), 0, cx, chain);
	}
	case PK_NSENTER: {
		static const char *const larg[] = {"target", "setuid", "setgid", NULL};
		static const struct optspec sp = {"tSG", "", larg, NULL, false};

		return suffix(an, v, skip_opts(view, 1, &sp, &stop, NULL), 0, cx, chain);
	}
	case PK_SOURCE:
		if (view->argc > 1) {
			if (script_from_procsubst(an, v, vw[1]))
				return 0;
			if (is_dev_stdin(view->argv[1]))
				return mark_stdin(an, v, cx, true);
		}
		return 0;
	case PK_SHELL:
		return do_shell(an, v, cx, false);
	case PK_FSHELL:
		return do_shell(an, v, cx, true);
	case PK_INTERP:
		return do_interp(an, v, cx);
	default:
		return 0;
	}
}

/* ---- entry points ---------------------------------------------------------- */

int moat_cmd_analyze(const char *src, size_t len, const struct moat_cmd_opts *opts,
		     struct moat_cmd_analysis **ret, struct moat_error *err)
{
	struct holder *h;
	struct an an;
	struct moat_sh_node *root;
	struct moat_sh_error se;
	struct wctx cx;
	int r;

	if (!src && len)
		return -EINVAL;
	if (len > MOAT_CMD_MAX_LEN) {
		if (err) {
			moat_error_set_where(err, "command", 0, 0);
			moat_error_set(err, "command longer than %u bytes", (unsigned)MOAT_CMD_MAX_LEN);
		}
		return -EINVAL;
	}
	h = malloc(sizeof(*h));
	if (!h)
		return -ENOMEM;
	memset(&h->a, 0, sizeof(h->a));
	h->a.fork_bomb = -1;
	h->a.priv = h;
	moat_arena_init(&h->arena, h->first, sizeof(h->first));

	memset(&an, 0, sizeof(an));
	an.ar = &h->arena;
	an.a = &h->a;
	an.err = err;
	an.src = src ? src : "";
	an.srclen = len;
	an.hardline = opts && opts->hardline;
	an.brace_budget = CMD_BRACE_BUDGET;
	an.home = "/home/\001"; /* unknown home: a placeholder under /home */
	if (opts && opts->home && opts->home[0] == '/' && strlen(opts->home) < CMD_PATH_MAX) {
		char *hb = moat_arena_strndup(&h->arena, opts->home, strlen(opts->home));

		if (!hb) {
			moat_arena_release(&h->arena);
			free(h);
			return -ENOMEM;
		}
		size_t hl = strlen(hb);
		bool clean = hl == 1 || hb[hl - 1] != '/';

		for (size_t k = 0; k + 1 < hl && clean; k++)
			clean = !(hb[k] == '/' && (hb[k + 1] == '/' || hb[k + 1] == '.'));
		if (!clean)
			norm_path(hb);
		an.home = hb;
		h->a.home = hb;
	}
	an.hlen = strlen(an.home);

	r = moat_sh_parse(&h->arena, an.src, len, &root, &se);
	if (r == -ENOMEM) {
		r = an_oom(&an);
	} else if (r) {
		int line, col;

		moat_sh_line_col(an.src, len, se.offset, &line, &col);
		if (err) {
			moat_error_set_where(err, "command", line, col);
			moat_error_set(err, "%s (byte %zu)", se.msg, se.offset);
		}
	} else {
		memset(&cx, 0, sizeof(cx));
		cx.in.ff = cx.in.ft = -1;
		cx.parent = -1;
		r = walk(&an, root, &cx);
	}
	if (r) {
		moat_arena_release(&h->arena);
		free(h);
		return r < 0 ? r : -EINVAL;
	}
	*ret = &h->a;
	return 0;
}

struct moat_cmd_analysis *moat_cmd_analysis_free(struct moat_cmd_analysis *a)
{
	struct holder *h;

	if (!a)
		return NULL;
	h = a->priv;
	moat_arena_release(&h->arena);
	free(h);
	return NULL;
}
