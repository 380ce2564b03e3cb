/* Shell command analysis (see cmd.h): from a parsed command string to the
 * list of programs it would run, each seen through its wrappers, and the
 * configuration-independent findings (the unrecoverable-operation floor,
 * writes into startup, persistence or credential files, destructive targets
 * unknown before running, downloads that are run).
 *
 * Every simple command becomes a view; wrappers (sudo, env, nice, xargs,
 * find -exec ...) add a view of the command they run; text that a shell
 * will parse again (sh -c BODY, eval, here-documents fed to a shell) is
 * parsed again, one level deeper, up to MOAT_CMD_MAX_DEPTH. Whatever cannot
 * be known before running (a program word that is an expansion, a script
 * read from a pipe) is flagged so the policy never allows it blindly.
 *
 * While walking, it keeps what the shell would know at each point (struct
 * state: variables assigned earlier, the working directory after cd), joined
 * over the paths control flow may take, so that words whose values are
 * known before running ("a=/; rm -rf $a", "$(echo /)", "${X:-/}", sh -c's
 * positional parameters, xargs fed by echo) get a view with those values.
 * A value that may differ from what is tracked is "unknown": checks ask.
 *
 * It must never run, expand or look anything up: no I/O, no environment.
 * It must stay linear: each re-parse is of a piece of the input, bounded in
 * depth; brace expansion, value evaluation, state copies and loop scans have
 * global budgets; wrapper chains and combinations of values are bounded. */
#include "core/cmd.h"
#include "core/cmdfacts.h"
#include "core/path.h"
#include "core/cmdpath.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <regex.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>

#include "base/str.h"
#include "core/shell.h"

#define CMD_MAX_UNWRAP 32	       /* wrappers peeled off one command */
#define CMD_MAX_BRACE 256	       /* words one brace expansion may produce */
#define CMD_MAX_BRACE_DEPTH 32	       /* nested brace groups expanded */
#define CMD_BRACE_BUDGET (4u << 20)    /* bytes of brace expansion work per analysis */
#define CMD_PATH_MAX 4096	       /* longest path examined by the checks */
#define CMD_INLINE_ARENA 8192	       /* first arena region, inside the result allocation */
#define CMD_MAX_CAND MOAT_CMD_MAX_VALUES
#define CMD_MAX_VARS MOAT_CMD_MAX_VARS
#define CMD_MAX_POS MOAT_CMD_MAX_POS
#define CMD_MAX_RESOLVED MOAT_CMD_MAX_RESOLVED
#define CMD_EVAL_DEPTH MOAT_CMD_EVAL_DEPTH
#define CMD_EVAL_BUDGET MOAT_CMD_EVAL_BUDGET
#define CMD_STATE_BUDGET MOAT_CMD_STATE_BUDGET
#define CMD_MAX_FIELDS 1024	       /* words one word may become once values are known */
#define CMD_PRESCAN_BUDGET 65536u      /* syntax nodes scanned ahead of loops per analysis */
#define CMD_MAX_DOWNLOADS 64	       /* files downloaded in one command, remembered */
#define CMD_MAX_FUNCS 64	       /* functions defined in one command, remembered */
#define CMD_MAX_ALIASES 64	       /* aliases defined in one command, remembered */
#define CMD_MAX_LINKS 64	       /* symbolic links made in one command, remembered */
#define CMD_MAX_ALIAS_WORDS 64	       /* words of one alias value expanded */

typedef const struct moat_sh_word *wref;

/* word flag private to this file: an unknown value whose known values are
 * checked in resolved views (a positional parameter of sh -c bound to a word
 * that has them) */
#define CMD_W_ELSEWHERE 0x8000u

/* The values a word, variable or directory may take before running. */
#define VS_UNKNOWN 1u	/* ... and possibly one that cannot be known */
#define VS_ELSEWHERE 2u /* ... unknown here, checked in resolved views */

struct vset {
	const char *s[CMD_MAX_CAND];
	uint8_t n;
	uint8_t flags;
};

struct var {
	const char *name;
	struct vset v;
	bool exported;
};

/* What the shell knows at one point of the command: variables assigned
 * earlier and the working directory. Copied by value at branches (the
 * variables are shared until written: copy on write). */
struct state {
	struct var *vars;
	uint16_t nvars, cap;
	bool owned;	  /* vars is not shared with a saved copy */
	uint32_t gen;	  /* equal generations are equal states */
	const struct vset *cwd; /* never written: replaced by a new one */
};

/* positional parameters of a shell started with sh -c BODY NAME ARGS... */
struct pos {
	struct vset v[CMD_MAX_POS]; /* $0, $1, ... */
	uint16_t n;
	bool more;    /* more than CMD_MAX_POS: those past n are unknown */
	bool unknown; /* set or shift ran: all are unknown */
};

struct download {
	const char *abs;  /* absolute, or NULL */
	const char *text; /* as written, without a leading "./" */
	bool written;	  /* written by a redirection, not fetched */
};

struct holder {
	struct moat_cmd_analysis a;
	struct moat_arena arena;
	struct vset cwd0;
	struct moat_cmd_path paths0[8]; /* the first paths, views and findings, without an allocation */
	struct moat_cmdview views0[8];
	const wref *vw0[8];
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
	struct pos *pos;  /* positional parameters, NULL when unknown */
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
	/* while a command with NAME=VALUE before it is processed: the state
	 * before them, which its own words were expanded in (NULL: none) */
	const struct state *prefix_before;
	size_t hlen;
	size_t vcap, fcap, rcap, pcap;
	unsigned finding_flags; /* MOAT_FINDING_F_* of the findings added now */
	const wref **vw; /* per view: the word behind each argv entry */
	size_t brace_budget;
	struct state st;  /* the shell's state at the command being walked */
	uint32_t gen;
	size_t eval_budget;
	size_t state_budget; /* bytes of variable tables copied; then nothing is tracked */
	unsigned prescan_budget;
	const struct vset *cwd0; /* the working directory the command starts in */
	bool ifs;	  /* IFS is assigned somewhere: splitting is unknown */
	bool untracked;	  /* a name reference exists: no variable can be known any more */
	const char **funcs; /* CMD_MAX_FUNCS, allocated at the first */
	size_t nfuncs;
	struct download *dl; /* CMD_MAX_DOWNLOADS, allocated at the first */
	size_t ndl;
	bool dl_written; /* the last is_download match was of written files only */
	const char **alias;  /* CMD_MAX_ALIASES "NAME=VALUE", allocated at the first */
	size_t nalias;
	uint64_t alias_busy; /* aliases being expanded (never again inside themselves) */
	struct link *links;  /* CMD_MAX_LINKS, allocated at the first */
	size_t nlinks;
	bool links_lost;     /* more links than remembered: every path is unknown */
	unsigned tree_hops;  /* tree_links' depth (links below links) */
	unsigned tree_expansions; /* tree_links' targets noted in all (bounded) */
};

/* ln -s TARGET NAME made earlier in the command: NAME (absolute) is TARGET
 * (absolute, NULL when unknown) for the paths after it */
struct link {
	const char *name;
	const char *target;
};

static int walk(struct an *an, const struct moat_sh_node *n, const struct wctx *cx);
static int process(struct an *an, size_t v, const struct wctx *cx, int chain);
static bool in_list(const char *const *l, const char *s, size_t n, bool prefix);
static bool is_assignment(const char *a);

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

/* memcpy for the short words of a command line, without a call: two
 * overlapping fixed-size moves cover 4 to 16 bytes */
static inline void small_copy(char *dst, const char *src, size_t n)
{
	if (n >= 8 && n <= 16) {
		uint64_t a, b;

		memcpy(&a, src, 8);
		memcpy(&b, src + n - 8, 8);
		memcpy(dst, &a, 8);
		memcpy(dst + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		uint32_t a, b;

		memcpy(&a, src, 4);
		memcpy(&b, src + n - 4, 4);
		memcpy(dst, &a, 4);
		memcpy(dst + n - 4, &b, 4);
	} else if (n < 4) {
		for (size_t i = 0; i < n; i++)
			dst[i] = src[i];
	} else {
		memcpy(dst, src, n);
	}
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
	/* (argv[k] is vw[k]->len bytes long) */
	if (!argc) {
		argv = empty_argv;
		prog = "";
		len = 0;
	} else if (flags & MOAT_VIEW_DYNAMIC) {
		prog = argv[0];
		len = vw[0]->len;
	} else {
		const char *a0 = argv[0];
		size_t l0 = vw[0]->len;

		while (l0 > 0 && a0[l0 - 1] != '/')
			l0--;
		prog = l0 > 0 && a0[l0] ? a0 + l0 : a0;
		len = vw[0]->len - (size_t)(prog - a0);
	}
	if (text) {
		t = (char *)text;
	} else {
		size_t total;

		total = len;
		for (k = 1; k < argc; k++)
			total += 1 + vw[k]->len;
		t = moat_arena_alloc(an->ar, total + 1);
		if (!t)
			return an_oom(an);
		small_copy(t, prog, len);
		for (k = 1; k < argc; k++) {
			t[len++] = ' ';
			small_copy(t + len, argv[k], vw[k]->len);
			len += vw[k]->len;
		}
		t[len] = '\0';
	}
	a->prog_first[(unsigned char)prog[0] >> 3] |= (unsigned char)(1u << (prog[0] & 7));
	a->prog_pairs |= moat_cmd_pair_bit(prog);
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

	for (size_t k = a->nfindings; k-- > 0 && k + 16 >= a->nfindings;) {
		if (a->findings[k].view == v && strcmp(a->findings[k].rule, rule) == 0) {
			a->findings[k].flags |= an->finding_flags;
			return 0;
		}
	}
	if (a->nfindings == an->fcap) {
		struct moat_cmd_finding *nf = grow(an, a->findings, a->nfindings, &an->fcap, sizeof(*nf));

		if (!nf)
			return an_oom(an);
		a->findings = nf;
	}
	f = &a->findings[a->nfindings++];
	f->verdict = verdict;
	f->view = v;
	f->flags = an->finding_flags;
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
	PK_PARALLEL, PK_TOYBOX, PK_STRACE, PK_LTRACE, PK_VALGRIND, PK_FAKEROOT, PK_LDSO,
	PK_PERF, PK_FIREJAIL, PK_BWRAP, PK_PROOT, PK_CPULIMIT, PK_CATCHSEGV, PK_SSHAGENT,
	PK_DBUSRUN, PK_PLAINWRAP, PK_PROXYCHAINS, PK_SETPRIV, PK_SYSTEMDRUN, PK_XTERM,
	PK_SCREEN, PK_TMUX, PK_AT, PK_RUNAFTER, PK_GDB,
	/* builtins that change what the shell knows */
	PK_CD, PK_PUSHD, PK_POPD, PK_DECLARE, PK_READ, PK_UNSET, PK_SETPOS, PK_LET,
	/* interpreters */
	PK_SHELL, PK_FSHELL, PK_INTERP,
	/* checked */
	PK_RM, PK_MKFS, PK_DD, PK_WIPE, PK_POWER, PK_INIT, PK_SYSTEMCTL, PK_KILL, PK_KILLALL5,
	PK_CHMOD, PK_CHOWN, PK_TEE, PK_CP, PK_SED, PK_TRUNCATE, PK_CURL, PK_WGET,
	PK_KEXEC, PK_LOGINCTL, PK_DBUS, PK_SGDISK, PK_SFDISK, PK_FDISK, PK_PARTED, PK_RSYNC,
	PK_CRONTAB, PK_GIO, PK_PKILL, PK_DISKTOOL, PK_UNPACK, PK_AWK, PK_MAKE, PK_UMOUNT,
	PK_DISKUTIL, PK_WIPEVERB,
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
	{"runuser", PK_SU},	  {"sg", PK_SU},	  {"script", PK_SCRIPT},  {"sed", PK_SED},
	{"setsid", PK_SETSID},	  {"sh", PK_SHELL},	  {"shred", PK_WIPE},
	{"shutdown", PK_POWER},	  {"source", PK_SOURCE},  {"stdbuf", PK_STDBUF},
	{"su", PK_SU},		  {"sudo", PK_SUDO},	  {"systemctl", PK_SYSTEMCTL},
	{"taskset", PK_TASKSET},  {"tclsh", PK_INTERP},	  {"tcsh", PK_FSHELL},
	{"tee", PK_TEE},	  {"telinit", PK_INIT},	  {"time", PK_TIME},
	{"timeout", PK_TIMEOUT},  {"truncate", PK_TRUNCATE}, {"unbuffer", PK_UNBUFFER},
	{"watch", PK_WATCH},	  {"wget", PK_WGET},	  {"wipefs", PK_WIPE},
	{"xargs", PK_XARGS},	  {"yash", PK_SHELL},	  {"zsh", PK_SHELL},
	{"alias", PK_ALIAS},	  {"trap", PK_TRAP},	  {"unshare", PK_UNSHARE},
	{"nsenter", PK_NSENTER},  {"parallel", PK_PARALLEL}, {"toybox", PK_TOYBOX},
	{"strace", PK_STRACE},	  {"ltrace", PK_LTRACE},  {"valgrind", PK_VALGRIND},
	{"gdb", PK_GDB},	  {"cd", PK_CD},	  {"pushd", PK_PUSHD},
	{"fakeroot", PK_FAKEROOT}, {"fakeroot-sysv", PK_FAKEROOT}, {"fakeroot-tcp", PK_FAKEROOT},
	{"ld.so", PK_LDSO},	  {"perf", PK_PERF},	  {"firejail", PK_FIREJAIL},
	{"bwrap", PK_BWRAP},	  {"proot", PK_PROOT},	  {"cpulimit", PK_CPULIMIT},
	{"catchsegv", PK_CATCHSEGV},
	/* more programs that run the command after their options */
	{"ssh-agent", PK_SSHAGENT}, {"dbus-run-session", PK_DBUSRUN}, {"run0", PK_SUDO},
	{"chronic", PK_PLAINWRAP}, {"eatmydata", PK_PLAINWRAP}, {"nocache", PK_PLAINWRAP},
	{"torsocks", PK_PLAINWRAP}, {"proxychains", PK_PROXYCHAINS},
	{"xvfb-run", PK_PLAINWRAP}, {"dbus-launch", PK_PLAINWRAP}, {"sshpass", PK_PLAINWRAP},
	{"umount", PK_UMOUNT},
	{"proxychains4", PK_PROXYCHAINS}, {"setpriv", PK_SETPRIV},
	{"tar", PK_UNPACK}, {"bsdtar", PK_UNPACK}, {"unzip", PK_UNPACK},
	{"awk", PK_AWK}, {"gawk", PK_AWK}, {"mawk", PK_AWK}, {"nawk", PK_AWK},
	{"ddrescue", PK_DISKTOOL}, {"badblocks", PK_DISKTOOL}, {"cryptsetup", PK_DISKTOOL},
	{"mdadm", PK_DISKTOOL}, {"mformat", PK_DISKTOOL}, {"diskutil", PK_DISKUTIL},
	/* disk wipes said by a verb (wipe_verbs), SCSI generic's dd and formats */
	{"nvme", PK_WIPEVERB}, {"hdparm", PK_WIPEVERB}, {"gpt", PK_WIPEVERB}, {"asr", PK_WIPEVERB},
	{"sg_dd", PK_DD}, {"sgp_dd", PK_DD}, {"sgm_dd", PK_DD}, {"sg_format", PK_WIPE},
	{"sg_sanitize", PK_WIPE}, {"sg_unmap", PK_WIPE},
	/* programs that run a command given after their own words */
	{"setarch", PK_RUNAFTER},
	{"linux32", PK_RUNAFTER},
	{"linux64", PK_RUNAFTER},
	{"numactl", PK_RUNAFTER},
	{"prlimit", PK_RUNAFTER},
	{"runcon", PK_RUNAFTER},
	{"chpst", PK_RUNAFTER},
	{"trickle", PK_RUNAFTER},
	{"faketime", PK_RUNAFTER},
	{"rlwrap", PK_RUNAFTER},
	{"retry", PK_RUNAFTER},
	{"daemonize", PK_RUNAFTER},
	{"systemd-nspawn", PK_RUNAFTER},
	{"ip", PK_RUNAFTER},
	{"podman", PK_RUNAFTER},
	{"flatpak-spawn", PK_RUNAFTER},
	{"schroot", PK_RUNAFTER},
	{"distrobox", PK_RUNAFTER},
	{"uv", PK_RUNAFTER},
	{"poetry", PK_RUNAFTER},
	{"npm", PK_RUNAFTER},
	{"pnpm", PK_RUNAFTER},
	{"yarn", PK_RUNAFTER},
	{"bundle", PK_RUNAFTER},
	{"direnv", PK_RUNAFTER},
	{"npx", PK_RUNAFTER},
	{"nix-shell", PK_RUNAFTER},
	{"ssh", PK_RUNAFTER},
	{"capsh", PK_RUNAFTER},
	{"machinectl", PK_RUNAFTER},
	{"entr", PK_RUNAFTER},
	{"start-stop-daemon", PK_RUNAFTER},
	{"systemd-run", PK_SYSTEMDRUN}, {"xterm", PK_XTERM}, {"uxterm", PK_XTERM},
	{"konsole", PK_XTERM}, {"gnome-terminal", PK_XTERM}, {"screen", PK_SCREEN},
	{"tmux", PK_TMUX}, {"at", PK_AT}, {"batch", PK_AT},
	{"python", PK_INTERP},	  {"python2", PK_INTERP}, {"python3", PK_INTERP},
	{"perl", PK_INTERP},	  {"ruby", PK_INTERP},	  {"node", PK_INTERP},
	{"nodejs", PK_INTERP},	  {"php", PK_INTERP},	  {"lua", PK_INTERP},
	{"luajit", PK_INTERP},	  {"Rscript", PK_INTERP},
	{"pypy", PK_INTERP},	  {"pypy3", PK_INTERP},	  {"irb", PK_INTERP},
	{"jshell", PK_INTERP},	  {"expect", PK_INTERP},  {"bb", PK_INTERP},
	{"oksh", PK_SHELL},	  {"xonsh", PK_FSHELL},	  {"elvish", PK_FSHELL},
	{"nu", PK_FSHELL},	  {"make", PK_MAKE},	  {"gmake", PK_MAKE},
	{"popd", PK_POPD},	  {"export", PK_DECLARE}, {"declare", PK_DECLARE},
	{"typeset", PK_DECLARE},  {"local", PK_DECLARE},  {"readonly", PK_DECLARE},
	{"read", PK_READ},	  {"mapfile", PK_READ},	  {"readarray", PK_READ},
	{"getopts", PK_READ},	  {"unset", PK_UNSET},	  {"set", PK_SETPOS},
	{"shift", PK_SETPOS},	  {"let", PK_LET},	  {"kexec", PK_KEXEC},
	{"loginctl", PK_LOGINCTL}, {"dbus-send", PK_DBUS}, {"gdbus", PK_DBUS},
	{"busctl", PK_DBUS},	  {"qdbus", PK_DBUS},
	{"sgdisk", PK_SGDISK},	  {"sfdisk", PK_SFDISK},  {"fdisk", PK_FDISK},
	{"gdisk", PK_FDISK},	  {"cfdisk", PK_FDISK},	  {"cgdisk", PK_FDISK},
	{"parted", PK_PARTED},	  {"rsync", PK_RSYNC},	  {"crontab", PK_CRONTAB},
	{"gio", PK_GIO},	  {"pkill", PK_PKILL},	  {"killall", PK_PKILL},
};

_Static_assert(MOAT_ARRAY_SIZE(progtab) < 255, "progtab indexes must fit in a byte");

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
#define PROG_SLOTS 512u
static unsigned char prog_index[PROG_SLOTS]; /* progtab index plus one, 0 when empty */
static unsigned char prog_len[MOAT_ARRAY_SIZE(progtab)]; /* strlen of each name */
static pthread_once_t prog_once = PTHREAD_ONCE_INIT;
static bool prog_ready; /* the index is built (read with acquire) */

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
		prog_len[k] = (unsigned char)n;
	}
	__atomic_store_n(&prog_ready, true, __ATOMIC_RELEASE);
}

static int prog_kind(const char *p)
{
	size_t n;
	uint32_t i = prog_hash(p, &n) & (PROG_SLOTS - 1);

	if (!__atomic_load_n(&prog_ready, __ATOMIC_ACQUIRE))
		pthread_once(&prog_once, prog_index_build);
	for (; prog_index[i]; i = (i + 1) & (PROG_SLOTS - 1)) {
		size_t k = prog_index[i] - 1u, j = 0;
		const char *name = progtab[k].name;

		if (prog_len[k] != n)
			continue;
		while (j < n && name[j] == p[j])
			j++;
		if (j == n)
			return progtab[k].kind;
	}
	if (p[0] == 'm' && strncmp(p, "mkfs.", 5) == 0)
		return PK_MKFS;
	/* macOS's mkfs: newfs_hfs, newfs_apfs, newfs_msdos, ... */
	if (p[0] == 'n' && strncmp(p, "newfs", 5) == 0 && (!p[5] || p[5] == '_'))
		return PK_MKFS;
	/* the dynamic loader run as a program: ld-linux-x86-64.so.2 PROG */
	if (p[0] == 'l' && (strncmp(p, "ld-linux", 8) == 0 || strncmp(p, "ld-musl", 7) == 0 ||
			    strncmp(p, "ld64.so", 7) == 0) && strstr(p, ".so"))
		return PK_LDSO;
	/* the plain interpreter names are in the table: only versioned ones here */
	if (n > 3 && (p[n - 1] == '.' || (p[n - 1] >= '0' && p[n - 1] <= '9')) &&
	    interp_family(p) >= 0)
		return PK_INTERP;
	return PK_NONE;
}

bool moat_cmd_is_shell(const char *prog)
{
	return prog && prog_kind(prog) == PK_SHELL;
}

/* ---- paths ------------------------------------------------------------- */

/* Lexical normalisation of an absolute path in place: repeated slashes,
 * "." and ".." (clamped at the root), no trailing slash. Shared with
 * cmdpat.c so that both sides of a pattern match normalise alike. */
void moat_cmd_norm_path(char *p)
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

static struct var *var_find(const struct state *st, const char *name, size_t n);

/* The home directory a tilde leads to at this point: $HOME as the command
 * may have assigned it ("HOME=/etc; cat ~/shadow"), else the user's; NULL
 * when the command gave it a value that cannot be known, or a relative
 * one. */
static const char *home_in(const struct an *an, const struct state *st)
{
	const struct var *x;

	if (an->untracked)
		return NULL;
	x = var_find(st, "HOME", 4);
	if (!x)
		return an->home;
	if (x->v.n == 1 && !(x->v.flags & VS_UNKNOWN) && x->v.s[0][0] == '/')
		return x->v.s[0];
	return NULL;
}

static const char *home_now(const struct an *an)
{
	return home_in(an, &an->st);
}

/* Inside a command run with HOME=VALUE before it: the home its own words
 * were expanded with, when it differs from home_now (HOME=/tmp cat ~/x
 * reads the user's ~/x, HOME=/etc bash -c 'cat ~/x' reads /etc/x: a
 * tilde word is checked as both); else NULL. */
static const char *home_outer(const struct an *an)
{
	const char *h, *n;

	if (!an->prefix_before)
		return NULL;
	h = home_in(an, an->prefix_before);
	n = home_now(an);
	return h && n && strcmp(h, n) ? h : NULL;
}

/* The absolute path a word names, home spellings (~, ~/x, ~user, $HOME,
 * ${HOME}, "$HOME") resolved; false when relative or unknown (~+ and ~-
 * are the working directories: see abs_path_k). */
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
			base = home_now(an);
			if (!base)
				return false;
		} else if (nl == 1 && (text[1] == '+' || text[1] == '-')) {
			return false;
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
	return moat_cmd_norm_proc(buf, cap) == 0;
}

static const char *const sysdirs[] = {
	"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt",
	"nix", "opt", "proc", "root", "sbin", "snap", "srv", "sys", "usr", "var",
	/* macOS */
	"Applications", "Library", "System", "Users", "Volumes", "private",
};

static bool is_sysdir(const char *c, size_t l)
{
	char pat[64];

	for (size_t k = 0; k < MOAT_ARRAY_SIZE(sysdirs); k++)
		if (strlen(sysdirs[k]) == l && memcmp(sysdirs[k], c, l) == 0)
			return true;
	/* a glob that names one ("/[u]sr", "/ho?e", "/h*"): the shell
	 * expands it to it */
	if (memchr(c, '*', l) || memchr(c, '?', l) || memchr(c, '[', l)) {
		if (l >= sizeof(pat))
			return true; /* SECURITY: longer than any name: fail closed */
		memcpy(pat, c, l);
		pat[l] = '\0';
		for (size_t k = 0; k < MOAT_ARRAY_SIZE(sysdirs); k++)
			if (fnmatch(pat, sysdirs[k], FNM_PERIOD) == 0)
				return true;
	}
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

/* What a destructive operation on a path would hit. PC_SYSTEM: the
 * system's own programs, libraries, boot files and the configuration it
 * cannot start or log in without: their recursive removal, chmod or chown
 * is the floor, and a container given one gets the host. PC_TREE: the
 * machine's local installs, sources, kernel modules, logs, sites, spools,
 * caches and the rest of its configuration: only their removal (and a
 * find that deletes all of one) is the floor, since their owner and modes
 * change in honest work (`chown -R www-data /var/www`) and containers are
 * given them (`-v /var/log/app:/logs`). */
enum { PC_NONE = 0, PC_ROOT, PC_SYSTEM, PC_HOME, PC_TREE };

/* The system trees below the top level (docs/policy.md lists them), at the
 * depth where losing one breaks the machine; a "*" component is any one
 * name. The first entry naming a path decides: the PC_SYSTEM entries of
 * /etc come before the "/etc/" "*" of every other directory there. */
static const struct {
	const char *path;
	unsigned char cls;
} systrees[] = {
	{"/usr/bin", PC_SYSTEM},     {"/usr/sbin", PC_SYSTEM},	   {"/usr/lib", PC_SYSTEM},
	{"/usr/lib32", PC_SYSTEM},   {"/usr/lib64", PC_SYSTEM},	   {"/usr/libx32", PC_SYSTEM},
	{"/usr/libexec", PC_SYSTEM}, {"/usr/include", PC_SYSTEM},  {"/usr/share", PC_SYSTEM},
	{"/var/lib/dpkg", PC_SYSTEM}, {"/var/lib/rpm", PC_SYSTEM},  {"/var/lib/apt", PC_SYSTEM},
	{"/var/lib/dnf", PC_SYSTEM}, {"/var/lib/yum", PC_SYSTEM},  {"/var/lib/pacman", PC_SYSTEM},
	{"/var/lib", PC_SYSTEM},     {"/boot/*", PC_SYSTEM},	   {"/lib/*", PC_SYSTEM},
	{"/lib64/*", PC_SYSTEM},     {"/bin/*", PC_SYSTEM},	   {"/sbin/*", PC_SYSTEM},
	{"/etc/ssh", PC_SYSTEM},     {"/etc/pam.d", PC_SYSTEM},	   {"/etc/apt", PC_SYSTEM},
	{"/etc/systemd", PC_SYSTEM}, {"/etc/sudoers.d", PC_SYSTEM}, {"/etc/security", PC_SYSTEM},
	{"/etc/ssl", PC_SYSTEM},     {"/etc/alternatives", PC_SYSTEM},
	{"/etc/ld.so.conf.d", PC_SYSTEM}, {"/etc/init.d", PC_SYSTEM}, {"/etc/default", PC_SYSTEM},
	{"/etc/network", PC_SYSTEM},
	{"/etc/*", PC_TREE},
	{"/usr/local", PC_TREE},     {"/usr/local/bin", PC_TREE},  {"/usr/local/sbin", PC_TREE},
	{"/usr/local/lib", PC_TREE}, {"/usr/local/lib64", PC_TREE}, {"/usr/local/libexec", PC_TREE},
	{"/usr/local/include", PC_TREE}, {"/usr/local/share", PC_TREE}, {"/usr/local/etc", PC_TREE},
	{"/usr/local/src", PC_TREE}, {"/usr/local/man", PC_TREE},  {"/usr/local/games", PC_TREE},
	{"/usr/src", PC_TREE},	     {"/usr/lib/modules/*", PC_TREE}, {"/lib/modules/*", PC_TREE},
	{"/var/log", PC_TREE},	     {"/var/www", PC_TREE},	   {"/var/spool", PC_TREE},
	{"/var/cache", PC_TREE},     {"/var/mail", PC_TREE},	   {"/var/backups", PC_TREE},
	{"/var/opt", PC_TREE},	     {"/var/local", PC_TREE},
};

static bool is_home_path(const struct an *an, const char *p)
{
	size_t l = strlen(p);
	const char *s;

	if (l == an->hlen && memcmp(p, an->home, l) == 0)
		return true;
	if (strcmp(p, "/root") == 0)
		return true;
	if (strncmp(p, "/home/", 6) == 0 || strncmp(p, "/Users/", 7) == 0) {
		s = p + (p[1] == 'h' ? 6 : 7);
		return *s && !strchr(s, '/');
	}
	return false;
}

/* In a "*" slot of the system trees (/etc/NAME), does a glob component
 * (of l bytes) spell one entry ("ngin?", "[n]ginx", "vmlinuz*") rather
 * than choose files by a suffix ("*.bak", ".*.swp", "*~")? A component
 * that starts with a wildcard (or a lone '.') and holds a '.' after it, or
 * ends in '~', chooses files; one matching everything is the directory's
 * contents (classify_abs). */
static bool glob_names_entry(const char *c, size_t l)
{
	size_t lit = strcspn(c, "*?[");

	if (lit > l)
		lit = l;
	if (all_glob(c, l) || c[l - 1] == '~')
		return false;
	if ((lit == 0 || (lit == 1 && c[0] == '.')) && memchr(c + lit, '.', l - lit))
		return false;
	return true;
}

/* Does the absolute, normalised path p name the system tree t? With glob,
 * a component of p holding a glob character names the component of t it
 * matches as the shell would ("/usr/l*" names /usr/lib); a "*" of t only
 * when it spells one entry (glob_names_entry: "/etc/ngin?" names a tree,
 * a "*.bak" there none). */
static bool tree_names(const char *t, const char *p, bool glob)
{
	for (;;) {
		size_t tl, pl;

		if (*t != '/' || *p != '/')
			return false;
		t++;
		p++;
		tl = strcspn(t, "/");
		pl = strcspn(p, "/");
		if (!pl || !tl)
			return false;
		if (glob && has_glob(p, pl)) {
			char pbuf[256], lit[256], *pat = pbuf;
			bool match;

			if (tl == 1 && t[0] == '*' && !glob_names_entry(p, pl))
				return false;
			if (tl == 1 && t[0] == '*')
				goto next;
			if (tl >= sizeof(lit))
				return false; /* (the table's names are short) */
			/* SECURITY: a glob component of any length is matched
			 * ("/usr/l" then 300 '*' names /usr/local); without
			 * memory for it, it names the tree */
			if (pl >= sizeof(pbuf) && !(pat = malloc(pl + 1)))
				return true;
			memcpy(pat, p, pl);
			pat[pl] = '\0';
			memcpy(lit, t, tl);
			lit[tl] = '\0';
			match = fnmatch(pat, lit, FNM_PERIOD) == 0;
			if (pat != pbuf)
				free(pat);
			if (!match)
				return false;
		} else if (!(tl == 1 && t[0] == '*') && (tl != pl || memcmp(t, p, tl) != 0)) {
			return false;
		}
	next:
		t += tl;
		p += pl;
		if (!*t || !*p)
			return !*t && !*p;
	}
}

/* What a destructive operation on this absolute path would hit (buf is
 * changed and restored). */
static int classify_abs(const struct an *an, bool glob, char *buf)
{
	const char *c1, *sl;
	size_t l1;

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
	for (size_t k = 0; sl && k < MOAT_ARRAY_SIZE(systrees); k++)
		if (tree_names(systrees[k].path, buf, glob))
			return systrees[k].cls;
	if (is_home_path(an, buf))
		return PC_HOME;
	if (glob) {
		/* X/<everything>: the contents of the home directory, of a
		 * system directory or of a system tree are that directory */
		char *last = strrchr(buf, '/');
		int cls = PC_NONE;

		if (all_glob(last + 1, strlen(last + 1))) {
			*last = '\0';
			if (buf[0])
				cls = classify_abs(an, glob, buf);
			*last = '/';
		}
		return cls;
	}
	return PC_NONE;
}

/* The k-th absolute path a word may name: a relative word is joined to the
 * k-th working directory the shell may be in. 1: written; 0: no k-th; -1:
 * cannot be known (an expansion, or relative to an unknown directory). */
/* SECURITY: a path through a symbolic link made earlier in the same command
 * ("ln -s / r; rm -rf r/") is the path through its target; 1 when buf is
 * known (rewritten), -1 when not. "NAME" itself (no trailing slash) is the
 * link, not followed. */
static int follow_links(const struct an *an, const char *text, char *buf, size_t cap)
{
	size_t tl = strlen(text);
	/* (".", "x/." and "./" stripped to "" name the directory, as "x/") */
	bool slash = !tl || text[tl - 1] == '/' || !strcmp(text, ".") ||
		     (tl >= 2 && !strcmp(text + tl - 2, "/."));

	if (an->links_lost)
		return -1;
	for (int hops = 0; hops < 16; hops++) {
		const struct link *l = NULL;
		size_t nl = 0, bl = strlen(buf), gl;

		for (size_t j = an->nlinks; j-- > 0;) {
			nl = strlen(an->links[j].name);
			if (strncmp(buf, an->links[j].name, nl) == 0 &&
			    (buf[nl] == '/' || (buf[nl] == '\0' && (slash || hops > 0))) &&
			    !(nl == 1 && buf[0] == '/')) {
				l = &an->links[j];
				break;
			}
		}
		if (!l)
			return 1;
		if (!l->target)
			return -1;
		gl = strlen(l->target);
		if (gl + (bl - nl) + 2 > cap)
			return -1;
		memmove(buf + gl + 1, buf + nl, bl - nl + 1);
		memcpy(buf, l->target, gl);
		buf[gl] = '/';
		if (moat_cmd_norm_proc(buf, cap) < 0)
			return -1;
	}
	return -1;
}

static int abs_path_k(const struct an *an, unsigned flags, const char *text, size_t k, char *buf,
		      size_t cap)
{
	const struct vset *cwd = an->st.cwd;
	size_t dl, tl;

	if (k != 1 && abs_path(an, flags, text, buf, cap))
		return k != 0				  ? 0
		       : an->nlinks || an->links_lost ? follow_links(an, text, buf, cap)
						      : 1;
	if (k == 1 && (flags & MOAT_SHW_TILDE) && text[0] == '~' && (!text[1] || text[1] == '/') &&
	    home_outer(an)) {
		const char *h = home_outer(an);
		size_t hl = strlen(h), rl = strlen(text + 1);

		if (hl + rl + 2 > cap)
			return -1;
		memcpy(buf, h, hl);
		buf[hl] = '/';
		memcpy(buf + hl + 1, text + 1, rl + 1);
		return moat_cmd_norm_proc(buf, cap) == 0 ? 1 : -1;
	}
	/* ~+ is $PWD, the working directory here; ~- is $OLDPWD, not known */
	if ((flags & MOAT_SHW_TILDE) && text[0] == '~' && text[1] == '+' &&
	    (text[2] == '\0' || text[2] == '/')) {
		text = text[2] ? text + 3 : ".";
		flags &= ~(unsigned)MOAT_SHW_TILDE;
	}
	if ((flags & MOAT_SHW_EXPAND) || text[0] == '/' || (text[0] == '~' && (flags & MOAT_SHW_TILDE)))
		return k == 0 ? -1 : 0; /* unknown, too long, or ~ we cannot place */
	if (!text[0])
		return 0;
	if (k < cwd->n) {
		bool simple = true;

		while (text[0] == '.' && text[1] == '/')
			text += 2;
		dl = strlen(cwd->s[k]);
		tl = strlen(text);
		if (dl + tl + 2 > cap)
			return -1;
		memcpy(buf, cwd->s[k], dl);
		buf[dl] = '/';
		memcpy(buf + dl + 1, text, tl + 1);
		/* the directories are normalised: only the name may need it */
		if (tl == 0 || text[tl - 1] == '/' || (text[0] == '.' && (tl == 1 || text[1] == '.')))
			simple = false;
		for (size_t j = 0; j + 1 < tl && simple; j++)
			simple = !(text[j] == '/' && (text[j + 1] == '/' || text[j + 1] == '.'));
		if (moat_cmd_has_proc(buf)) {
			if (moat_cmd_norm_proc(buf, cap) < 0)
				return -1;
		} else if (!simple || (dl == 1 && buf[0] == '/')) {
			moat_cmd_norm_path(buf);
		}
		if (an->nlinks || an->links_lost)
			return follow_links(an, text, buf, cap);
		return 1;
	}
	if (k == cwd->n && (cwd->flags & VS_UNKNOWN))
		return -1;
	return 0;
}

/* What a device node under /dev is, for a write to it. */
enum { DEV_OTHER = 0, DEV_HARMLESS, DEV_DISK, DEV_MEM };
/* how a name below /dev matches an entry */
enum {
	DN_EXACT,  /* the name itself */
	DN_PREFIX, /* the name and anything after it */
	DN_UNIT,   /* followed by a digit, '/' or a glob: md0, disk0s1, rdisk3 (not mdadm.conf) */
	DN_DIGITS, /* followed by digits only: fd/3 */
};

/* Device names (below /dev/), Linux and macOS. Writing to a harmless one
 * is nothing; to a disk, or to memory and I/O ports, the floor; to any
 * other device node an ask. samples: whole names of the kind, against
 * which a glob in a written path is matched ("/dev/[s]da"). */
static const struct {
	const char *name;
	unsigned char match, kind;
	const char *samples[4];
} devnames[] = {
	{"null", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"zero", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"full", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"random", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"urandom", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"tty", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"stdout", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"stderr", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"fd/", DN_DIGITS, DEV_HARMLESS, {NULL}},
	{"pts/", DN_PREFIX, DEV_HARMLESS, {NULL}},
	{"shm/", DN_PREFIX, DEV_HARMLESS, {NULL}},
	{"mem", DN_EXACT, DEV_MEM, {"mem"}},
	{"kmem", DN_EXACT, DEV_MEM, {"kmem"}},
	{"port", DN_EXACT, DEV_MEM, {"port"}},
	{"sd", DN_PREFIX, DEV_DISK, {"sda", "sdb", "sdz", "sda1"}},
	{"hd", DN_PREFIX, DEV_DISK, {"hda"}},
	{"vd", DN_PREFIX, DEV_DISK, {"vda", "vdb"}},
	{"xvd", DN_PREFIX, DEV_DISK, {"xvda"}},
	{"nvme", DN_PREFIX, DEV_DISK, {"nvme0n1", "nvme0n1p1", "nvme1n1"}},
	{"mmcblk", DN_PREFIX, DEV_DISK, {"mmcblk0", "mmcblk0p1"}},
	{"dm-", DN_PREFIX, DEV_DISK, {"dm-0"}},
	{"mapper/", DN_PREFIX, DEV_DISK, {NULL}},
	{"nbd", DN_PREFIX, DEV_DISK, {"nbd0"}},
	{"md", DN_UNIT, DEV_DISK, {"md0"}},
	{"mtd", DN_UNIT, DEV_DISK, {"mtd0"}},
	{"mtdblock", DN_UNIT, DEV_DISK, {"mtdblock0"}},
	{"loop", DN_UNIT, DEV_DISK, {"loop0"}},
	{"sg", DN_UNIT, DEV_DISK, {"sg0"}},
	{"ram", DN_UNIT, DEV_DISK, {"ram0"}},
	{"root", DN_EXACT, DEV_DISK, {"root"}},
	/* the same devices by number: /dev/block/MAJ:MIN is a block device,
	 * /dev/char/1:1 is /dev/mem (1:2 kmem, 1:4 port; 1:3 null, 1:5 zero,
	 * 1:7 full, 1:8 random, 1:9 urandom), 21:N SCSI generic (sgN) */
	{"block/", DN_PREFIX, DEV_DISK, {"block/8:0", "block/259:0"}},
	{"char/1:1", DN_EXACT, DEV_MEM, {"char/1:1"}},
	{"char/1:2", DN_EXACT, DEV_MEM, {"char/1:2"}},
	{"char/1:4", DN_EXACT, DEV_MEM, {"char/1:4"}},
	{"char/1:3", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"char/1:5", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"char/1:7", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"char/1:8", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"char/1:9", DN_EXACT, DEV_HARMLESS, {NULL}},
	{"char/21:", DN_PREFIX, DEV_DISK, {"char/21:0"}},
	/* Linux's /dev/disk/by-id/..., macOS's disk0, disk0s1, rdisk3 */
	{"disk", DN_UNIT, DEV_DISK, {"disk0", "disk0s1", "disk2"}},
	{"rdisk", DN_UNIT, DEV_DISK, {"rdisk0", "rdisk0s1", "rdisk2"}},
};

/* The kind of device an absolute, normalised path names; DEV_OTHER for a
 * device node not in the table, -1 for a path outside /dev. */
static int dev_kind(const char *p)
{
	const char *n;

	if (strncmp(p, "/dev/", 5) != 0 || !p[5])
		return -1;
	n = p + 5;
	for (size_t k = 0; k < MOAT_ARRAY_SIZE(devnames); k++) {
		size_t l = strlen(devnames[k].name);
		const char *r = n + l;

		if (strncmp(n, devnames[k].name, l) != 0)
			continue;
		switch (devnames[k].match) {
		case DN_EXACT:
			if (!*r)
				return devnames[k].kind;
			break;
		case DN_PREFIX:
			return devnames[k].kind;
		case DN_UNIT:
			if ((*r >= '0' && *r <= '9') || *r == '/' || *r == '*' || *r == '?' || *r == '[')
				return devnames[k].kind;
			break;
		case DN_DIGITS:
			if (*r && strspn(r, "0123456789") == strlen(r))
				return devnames[k].kind;
			break;
		}
	}
	return DEV_OTHER;
}

static bool is_disk_path(const char *p)
{
	return dev_kind(p) == DEV_DISK;
}

/* Files that run code at the next login, shell, editor, git or agent
 * start, or hold credentials; a trailing '/' stands for anything below. */
static const char *const startup_home[] = {
	".bashrc",	  ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc",	  ".zprofile",	   ".zshenv",	  ".zlogin",	  ".zlogout",
	".netrc",	  ".npmrc",	   ".pypirc",	  ".pgpass",	  ".gitconfig",
	".vimrc",	  ".config/fish/config.fish",	  ".config/git/config",
	".ssh/",	  ".config/systemd/user/",	  ".config/autostart/",
	".local/bin/",	  ".config/fish/conf.d/", ".bash_aliases", ".config/environment.d/",
	".local/share/systemd/user/",
	/* agents' own settings: hooks, MCP servers, permissions */
	".claude/",	  ".claude.json",   ".codex/",	  ".cursor/",
	/* X and desktop session start, more shells' and editors'
	 * start-up, directories on PATH, tools' configs that run programs */
	".xprofile", ".xinitrc", ".xsessionrc", ".xsession", ".pam_environment",
	".bashrc.d/", ".zshrc.local", ".oh-my-zsh/custom/", ".config/fish/functions/",
	".config/plasma-workspace/env/", ".config/autostart-scripts/", ".config/nvim/",
	".vim/plugin/", ".vim/autoload/", ".vimrc.local", ".emacs", ".emacs.d/init.el",
	".emacs.el", ".tmux.conf", ".config/tmux/", ".ipython/profile_default/startup/",
	".pythonrc", ".config/Code/User/", ".vscode-server/data/Machine/", "bin/",
	"go/bin/", ".bun/bin/", ".deno/bin/", ".npm-global/bin/", ".cargo/bin/",
	".config/pip/pip.conf", ".pip/pip.conf", ".gemrc", ".curlrc", ".wgetrc",
	".config/git/attributes", ".config/opencode/", ".aider.conf.yml", ".gemini/",
};

static const char *const startup_system[] = {
	"/etc/profile", "/etc/profile.d/", "/etc/bash.bashrc", "/etc/environment",
	"/etc/zsh/",	"/etc/ld.so.preload", "/etc/rc.local", "/etc/crontab",
	"/etc/cron.d/", "/etc/cron.hourly/", "/etc/cron.daily/", "/etc/cron.weekly/",
	"/etc/cron.monthly/", "/etc/systemd/system/", "/etc/sudoers", "/etc/sudoers.d/",
	"/var/spool/cron/", "/etc/systemd/user/", "/lib/systemd/", "/usr/lib/systemd/",
	"/etc/xdg/autostart/", "/etc/init.d/", "/etc/update-motd.d/", "/etc/apt/apt.conf.d/",
	"/etc/rc.d/", "/etc/anacrontab", "/etc/security/pam_env.conf", "/etc/pam.d/",
	"/etc/ld.so.conf.d/", "/etc/ld.so.conf",
	/* more that run code or let someone in: sshd, udev, kernel modules,
	 * log rotation hooks, network hooks, git's system config, new users'
	 * dot files, the programs on every PATH */
	"/etc/ssh/", "/etc/udev/rules.d/", "/lib/udev/rules.d/", "/usr/lib/udev/rules.d/",
	"/etc/modprobe.d/", "/etc/modules-load.d/", "/etc/modules", "/etc/logrotate.d/",
	"/etc/gitconfig", "/etc/X11/Xsession.d/", "/etc/skel/", "/etc/NetworkManager/dispatcher.d/",
	"/etc/network/if-up.d/", "/etc/dhcp/dhclient-exit-hooks.d/", "/etc/group", "/etc/gshadow",
	"/usr/local/bin/", "/usr/local/sbin/", "/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/",
	"/etc/bash_completion.d/", "/usr/share/bash-completion/completions/",
	"/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/fstab",
	"/etc/default/grub", "/boot/", "/etc/apt/sources.list", "/etc/apt/sources.list.d/",
	"/etc/tmpfiles.d/", "/usr/lib/tmpfiles.d/", "/run/systemd/system/", "/etc/polkit-1/",
	"/etc/docker/daemon.json", "/lib/x86_64-linux-gnu/security/", "/etc/X11/xinit/",
};

/* Python runs every .pth file of a site directory (and sitecustomize.py,
 * usercustomize.py) at every start: "/usr/lib/python3/dist-packages/x.pth",
 * "~/.local/lib/python3.11/site-packages/x.pth". */
static bool python_startup(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t bl;

	if (!base || (!strstr(path, "/site-packages/") && !strstr(path, "/dist-packages/")))
		return false;
	base++;
	bl = strlen(base);
	return (bl > 4 && !strcmp(base + bl - 4, ".pth")) || !strcmp(base, "sitecustomize.py") ||
	       !strcmp(base, "usercustomize.py");
}

/* anywhere (a workspace's own): the directory components and the name */
static const struct {
	const char *tail; /* path ends with "/" + tail (tail ending in '/': contains it) */
	const char *rule;
} startup_any[] = {
	{".git/hooks/", ".git/hooks"},
	{".git/hooks", ".git/hooks"}, /* the directory itself (ln -s DIR .git/hooks) */
	{".git/config", ".git/config"},
	/* files that send git to another config and its hooks and fsmonitor */
	{".git/commondir", ".git/commondir"},
	{".git", ".git"}, /* a .git FILE ("gitdir: elsewhere") written as a whole */
	{".git/worktrees/", ".git/worktrees"},
	{".git/objects/info/alternates", ".git/objects/info/alternates"},
	{".git/config.worktree", ".git/config.worktree"},
	{".git/modules/", ".git/modules"},
	{".gitmodules", ".gitmodules"},
	/* hook managers and environment loaders that run code on their own */
	{".husky/", ".husky"},
	{".pre-commit-config.yaml", ".pre-commit-config.yaml"},
	{".envrc", ".envrc"},
	{".mcp.json", ".mcp.json"},
	/* editors and agents: tasks, launch configurations, hooks, MCP servers */
	{".vscode/", ".vscode"},
	{".vscode", ".vscode"},
	{".idea/", ".idea"},
	{".claude/", ".claude"},
	{".claude", ".claude"},
	{".cursor/", ".cursor"},
	{".cursor", ".cursor"},
	{".moat/", ".moat"},
	{".moat", ".moat"},	/* more hook managers, editors and agents, logout files, environment
	 * and package managers that run code from the project */
	{"lefthook.yml", "lefthook.yml"},
	{".lefthook.yml", ".lefthook.yml"},
	{"lefthook-local.yml", "lefthook-local.yml"},
	{".lefthook-local.yml", ".lefthook-local.yml"},
	{"lefthook.yaml", "lefthook.yaml"},
	{".lefthook.yaml", ".lefthook.yaml"},
	{"lefthook-local.yaml", "lefthook-local.yaml"},
	{".lefthook-local.yaml", ".lefthook-local.yaml"},
	{"lefthook.json", "lefthook.json"},
	{".lefthook.json", ".lefthook.json"},
	{"lefthook.toml", "lefthook.toml"},
	{".lefthook.toml", ".lefthook.toml"},
	{".lefthook/", ".lefthook"},
	{".lefthook", ".lefthook"},
	{".zed/", ".zed"},
	{".zed", ".zed"},
	{".gemini/", ".gemini"},
	{".gemini", ".gemini"},
	{".kiro/", ".kiro"},
	{".kiro", ".kiro"},
	{".roo/", ".roo"},
	{".roo", ".roo"},
	{".amazonq/", ".amazonq"},
	{".amazonq", ".amazonq"},
	{".continue/", ".continue"},
	{".continue", ".continue"},
	{".windsurf/", ".windsurf"},
	{".windsurf", ".windsurf"},
	{".devcontainer/", ".devcontainer"},
	{".devcontainer", ".devcontainer"},
	{".cargo/", ".cargo"},
	{".cargo", ".cargo"},
	{".exrc", ".exrc"},
	{".nvimrc", ".nvimrc"},
	{".nvim.lua", ".nvim.lua"},
	{".bash_logout", ".bash_logout"},
	{".zlogout", ".zlogout"},
	{"mise.toml", "mise.toml"},
	{".mise.toml", ".mise.toml"},
	{"mise.local.toml", "mise.local.toml"},
	{".mise.local.toml", ".mise.local.toml"},
	{".npmrc", ".npmrc"},
	{".yarnrc", ".yarnrc"},
	{".yarnrc.yml", ".yarnrc.yml"},
	{".pnpmfile.cjs", ".pnpmfile.cjs"},
};

/* dst = a + b, truncated */
static void join2(char *dst, size_t size, const char *a, const char *b)
{
	size_t n = moat_strlcpy(dst, a, size);

	if (n < size)
		moat_strlcpy(dst + n, b, size - n);
}

static bool entry_match(const char *rel, const char *e)
{
	size_t l = strlen(e);

	if (e[l - 1] == '/')
		return strncmp(rel, e, l) == 0 || (strncmp(rel, e, l - 1) == 0 && !rel[l - 1]);
	return strcmp(rel, e) == 0;
}

/* The startup name of an absolute, normalised path ("~/.bashrc",
 * ".git/hooks", "/etc/profile.d/x"), or false. */
static bool startup_abs(const char *home, size_t hlen, const char *buf, char *out, size_t outsz)
{
	const char *rel = NULL;

	if (hlen > 1 && strncmp(buf, home, hlen) == 0 && buf[hlen] == '/')
		rel = buf + hlen + 1;
	else if (strncmp(buf, "/root/", 6) == 0)
		rel = buf + 6;
	else if (strncmp(buf, "/home/", 6) == 0) {
		/* (a loop: gcc's sanitizer build misreads strchr(buf + 6) here) */
		for (size_t i = 6; buf[i]; i++)
			if (buf[i] == '/') {
				rel = buf + i + 1;
				break;
			}
	}
	if (rel) {
		for (size_t k = 0; k < MOAT_ARRAY_SIZE(startup_home); k++) {
			if (rel[0] == startup_home[k][0] && entry_match(rel, startup_home[k])) {
				join2(out, outsz, "~/", rel);
				return true;
			}
		}
	}
	if (python_startup(buf)) {
		moat_strlcpy(out, buf, outsz);
		return true;
	}
	if (buf[1] == 'e' || buf[1] == 'v' || buf[1] == 'l' || buf[1] == 'u' || buf[1] == 'b' ||
	    buf[1] == 's' || buf[1] == 'r') {
		for (size_t k = 0; k < MOAT_ARRAY_SIZE(startup_system); k++) {
			if (entry_match(buf, startup_system[k])) {
				moat_strlcpy(out, buf, outsz);
				return true;
			}
		}
	}
	/* (every component: most names start with a dot, lefthook's and
	 * mise's need not) */
	for (const char *c = strchr(buf, '/'); c; c = strchr(c + 1, '/')) {
		for (size_t k = 0; k < MOAT_ARRAY_SIZE(startup_any); k++) {
			const char *e = startup_any[k].tail;
			size_t l;

			if (c[1] != e[0])
				continue;
			l = strlen(e);
			if (e[l - 1] == '/' ? strncmp(c + 1, e, l) == 0 : strcmp(c + 1, e) == 0) {
				moat_strlcpy(out, startup_any[k].rule, outsz);
				return true;
			}
		}
	}
	return false;
}

bool moat_cmd_startup_name(const char *home, const char *path, char *out, size_t outsz)
{
	size_t hl = home ? strlen(home) : 0;

	while (hl > 1 && home[hl - 1] == '/')
		hl--;
	return path && path[0] == '/' && startup_abs(home ? home : "", hl, path, out, outsz);
}

/* An unknown path ending in tail ("$(echo ~)/.bashrc"): could it be one? */
static bool startup_tail(const char *tail, char *out, size_t outsz)
{
	size_t tl = strlen(tail);

	for (size_t k = 0; k < MOAT_ARRAY_SIZE(startup_home); k++) {
		const char *e = startup_home[k];
		size_t l = strlen(e);

		if (e[l - 1] == '/' ? (strstr(tail, e) != NULL)
				    : (tl >= l && strcmp(tail + tl - l, e) == 0 &&
				       (tl == l || tail[tl - l - 1] == '/'))) {
			snprintf(out, outsz, "~/%s%s", e, e[l - 1] == '/' ? "*" : "");
			return true;
		}
	}
	for (size_t k = 0; k < MOAT_ARRAY_SIZE(startup_any); k++) {
		const char *e = startup_any[k].tail;
		size_t l = strlen(e);

		if (e[l - 1] == '/' ? (strstr(tail, e) != NULL)
				    : (tl >= l && strcmp(tail + tl - l, e) == 0 &&
				       (tl == l || tail[tl - l - 1] == '/'))) {
			moat_strlcpy(out, startup_any[k].rule, outsz);
			return true;
		}
	}
	return false;
}

/* ---- what the shell knows: values, variables, working directory ----------- */

static void vs_unknown(struct vset *v)
{
	v->n = 0;
	v->flags = VS_UNKNOWN;
}

static void vs_one(struct vset *v, const char *s)
{
	v->s[0] = s;
	v->n = 1;
	v->flags = 0;
}

/* SECURITY: a set that overflows keeps what it has and becomes unknown, so
 * checks still see every value it kept and ask about the rest. */
static void vs_add(struct vset *v, const char *s)
{
	for (size_t k = 0; k < v->n; k++)
		if (strcmp(v->s[k], s) == 0)
			return;
	if (v->n == CMD_MAX_CAND) {
		v->flags |= VS_UNKNOWN;
		return;
	}
	v->s[v->n++] = s;
}

static void vs_join(struct vset *a, const struct vset *b)
{
	for (size_t k = 0; k < b->n; k++)
		vs_add(a, b->s[k]);
	a->flags |= b->flags;
}

static void st_touch(struct an *an)
{
	an->st.gen = ++an->gen;
}

/* A copy to come back to (the variables become shared: copy on write). */
static struct state st_save(struct an *an)
{
	an->st.owned = false;
	return an->st;
}

static void st_restore(struct an *an, const struct state *s)
{
	an->st = *s;
	an->st.owned = false;
}

/* SECURITY: copies of the variable table are bounded per analysis; past the
 * bound every variable is forgotten, which makes them all unknown. */
static bool st_budget(struct an *an, size_t bytes)
{
	if (bytes <= an->state_budget) {
		an->state_budget -= bytes;
		return true;
	}
	an->state_budget = 0;
	return false;
}

static int st_own(struct an *an)
{
	struct state *st = &an->st;
	size_t cap = st->nvars < 4 ? 8 : (size_t)st->nvars * 2;
	struct var *nv;

	if (st->owned)
		return 0;
	if (cap > CMD_MAX_VARS)
		cap = CMD_MAX_VARS;
	if (!st_budget(an, cap * sizeof(*nv))) {
		st->nvars = 0;
		cap = 8;
	}
	nv = moat_arena_alloc(an->ar, cap * sizeof(*nv));
	if (!nv)
		return an_oom(an);
	if (st->nvars)
		memcpy(nv, st->vars, st->nvars * sizeof(*nv));
	st->vars = nv;
	st->cap = (uint16_t)cap;
	st->owned = true;
	return 0;
}

static struct var *var_find(const struct state *st, const char *name, size_t n)
{
	for (size_t k = 0; k < st->nvars; k++)
		if (strncmp(st->vars[k].name, name, n) == 0 && st->vars[k].name[n] == '\0')
			return &st->vars[k];
	return NULL;
}

/* NAME takes the values v (join: or keeps its own, the assignment may not
 * run). A variable that cannot be tracked any more stays unknown. */
static int var_set(struct an *an, const char *name, size_t n, const struct vset *v, bool join,
		   bool exported)
{
	struct var *x;
	int r;

	if (n == 3 && memcmp(name, "IFS", 3) == 0)
		an->ifs = true;
	if (an->untracked)
		return 0;
	if ((r = st_own(an)))
		return r;
	x = var_find(&an->st, name, n);
	if (!x) {
		char *nm;

		if (an->st.nvars == an->st.cap) {
			size_t cap = (size_t)an->st.cap * 2;
			struct var *nv;

			if (cap > CMD_MAX_VARS)
				return 0; /* untracked: unknown */
			nv = moat_arena_alloc(an->ar, cap * sizeof(*nv));
			if (!nv)
				return an_oom(an);
			memcpy(nv, an->st.vars, an->st.nvars * sizeof(*nv));
			an->st.vars = nv;
			an->st.cap = (uint16_t)cap;
		}
		nm = moat_arena_strndup(an->ar, name, n);
		if (!nm)
			return an_oom(an);
		x = &an->st.vars[an->st.nvars++];
		x->name = nm;
		x->exported = false;
		vs_unknown(&x->v); /* before: whatever the environment holds */
		if (join)
			vs_join(&x->v, v);
		else
			x->v = *v;
	} else if (join) {
		vs_join(&x->v, v);
	} else {
		x->v = *v;
	}
	x->exported |= exported;
	st_touch(an);
	return 0;
}

/* Something we cannot see may have changed every variable (and the
 * working directory): they keep their values and may hold others. */
static int havoc(struct an *an, bool vars, bool cwd)
{
	int r;

	if (vars && an->st.nvars) {
		if ((r = st_own(an)))
			return r;
		for (size_t k = 0; k < an->st.nvars; k++)
			an->st.vars[k].v.flags |= VS_UNKNOWN;
	}
	if (cwd && !(an->st.cwd->flags & VS_UNKNOWN)) {
		struct vset *nc = moat_arena_alloc(an->ar, sizeof(*nc));

		if (!nc)
			return an_oom(an);
		*nc = *an->st.cwd;
		nc->flags |= VS_UNKNOWN;
		an->st.cwd = nc;
	}
	st_touch(an);
	return 0;
}

static int havoc_var(struct an *an, const char *name, size_t n)
{
	struct vset u;

	vs_unknown(&u);
	return var_set(an, name, n, &u, true, false);
}

/* NAME now holds a value that cannot be known (read, printf -v, let) */
static int forget_var(struct an *an, const char *name, size_t n)
{
	struct vset u;

	vs_unknown(&u);
	return var_set(an, name, n, &u, false, false);
}

/* dst = either dst or src (the shell is in one of the two states). */
static int st_join(struct an *an, struct state *dst, const struct state *src)
{
	struct var *nv;
	size_t n = 0, cap;

	if (dst->gen == src->gen)
		return 0;
	cap = (size_t)dst->nvars + src->nvars;
	if (cap > CMD_MAX_VARS)
		cap = CMD_MAX_VARS;
	if (!st_budget(an, cap * sizeof(*nv)))
		cap = 0; /* forget them all: unknown */
	nv = cap ? moat_arena_alloc(an->ar, cap * sizeof(*nv)) : NULL;
	if (cap && !nv)
		return an_oom(an);
	for (size_t k = 0; k < dst->nvars && n < cap; k++) {
		const struct var *o = var_find(src, dst->vars[k].name, strlen(dst->vars[k].name));

		nv[n] = dst->vars[k];
		if (o) {
			vs_join(&nv[n].v, &o->v);
			nv[n].exported |= o->exported;
		} else {
			nv[n].v.flags |= VS_UNKNOWN;
		}
		n++;
	}
	for (size_t k = 0; k < src->nvars && n < cap; k++) {
		if (var_find(dst, src->vars[k].name, strlen(src->vars[k].name)))
			continue;
		nv[n] = src->vars[k];
		nv[n].v.flags |= VS_UNKNOWN;
		n++;
	}
	if (dst->cwd != src->cwd) {
		struct vset *nc = moat_arena_alloc(an->ar, sizeof(*nc));

		if (!nc)
			return an_oom(an);
		*nc = *dst->cwd;
		vs_join(nc, src->cwd);
		dst->cwd = nc;
	}
	dst->vars = nv;
	dst->nvars = (uint16_t)n;
	dst->cap = (uint16_t)cap;
	dst->owned = true;
	dst->gen = ++an->gen;
	return 0;
}

/* A child shell (sh -c, a script on a pipe): variables it was not given
 * in its environment are empty there. */
static int st_child(struct an *an)
{
	int r;

	if (!an->st.nvars)
		return 0;
	if ((r = st_own(an)))
		return r;
	for (size_t k = 0; k < an->st.nvars; k++)
		if (!an->st.vars[k].exported)
			vs_add(&an->st.vars[k].v, "");
	st_touch(an);
	return 0;
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* ---- evaluating words --------------------------------------------------------
 * A word becomes one or more alternatives (values it may take), each a list
 * of fields (the arguments it becomes after splitting). A field whose value
 * cannot be known keeps the expansion's text verbatim and MOAT_SHW_EXPAND. */

struct fields {
	wref *w;	/* finished fields */
	uint32_t n, cap;
	char *cur;	/* field being built */
	uint32_t clen, ccap;
	uint16_t cflags;
	bool open;	/* a field is started (it may be empty but quoted) */
};

struct alts {
	struct fields a[CMD_MAX_CAND];
	uint8_t n;
	bool truncated; /* more values than alternatives: some were dropped */
	bool changed;	/* some expansion has a known value */
	bool unknown;	/* some field is unknown */
};

static int f_put(struct an *an, struct fields *f, const char *s, size_t n)
{
	if (n > an->eval_budget)
		return -E2BIG;
	an->eval_budget -= n;
	if (f->clen + n + 1 > f->ccap) {
		size_t cap = f->ccap ? f->ccap : 32;
		char *nc;

		while (cap < f->clen + n + 1)
			cap *= 2;
		nc = moat_arena_alloc(an->ar, cap);
		if (!nc)
			return an_oom(an);
		if (f->clen)
			memcpy(nc, f->cur, f->clen);
		f->cur = nc;
		f->ccap = (uint32_t)cap;
	}
	memcpy(f->cur + f->clen, s, n);
	f->clen += (uint32_t)n;
	f->cur[f->clen] = '\0';
	f->open = true;
	return 0;
}

/* Close the field being built; an empty one survives only when quoted. */
static int f_break(struct an *an, struct fields *f, bool keep_empty)
{
	wref w;

	if (!f->open)
		return 0;
	if (f->clen || keep_empty) {
		if (f->n >= CMD_MAX_FIELDS)
			return -E2BIG;
		if (f->n == f->cap) {
			size_t cap = f->cap ? f->cap * 2 : 4;
			wref *nw = moat_arena_alloc(an->ar, cap * sizeof(*nw));

			if (!nw)
				return an_oom(an);
			if (f->n)
				memcpy(nw, f->w, f->n * sizeof(*nw));
			f->w = nw;
			f->cap = (uint32_t)cap;
		}
		w = synth_word(an, f->clen ? f->cur : "", f->clen, f->cflags, 0);
		if (!w)
			return an_oom(an);
		f->w[f->n++] = w;
	}
	f->cur = NULL;
	f->clen = f->ccap = 0;
	f->cflags &= (uint16_t)MOAT_SHW_QUOTED;
	f->open = false;
	return 0;
}

static int f_copy(struct an *an, struct fields *dst, const struct fields *src)
{
	*dst = *src;
	if (src->n) {
		dst->w = moat_arena_alloc(an->ar, src->cap * sizeof(*dst->w));
		if (!dst->w)
			return an_oom(an);
		memcpy(dst->w, src->w, src->n * sizeof(*dst->w));
	}
	dst->cur = NULL;
	dst->clen = dst->ccap = 0;
	if (src->clen) {
		int r = f_put(an, dst, src->cur, src->clen);

		if (r)
			return r;
	}
	dst->open = src->open;
	return 0;
}

/* Append a value: unquoted values are split on blanks and may glob. */
static int f_value(struct an *an, struct fields *f, const char *s, bool split)
{
	int r;

	if (!split)
		return f_put(an, f, s, strlen(s));
	while (*s) {
		size_t n = strcspn(s, " \t\n");

		if (n) {
			if (memchr(s, '*', n) || memchr(s, '?', n) || memchr(s, '[', n))
				f->cflags |= MOAT_SHW_GLOB;
			if ((r = f_put(an, f, s, n)))
				return r;
			s += n;
		}
		if (*s) {
			if ((r = f_break(an, f, false)))
				return r;
			s += strspn(s, " \t\n");
		}
	}
	return 0;
}

/* An unknown part: the expansion's text, flagged. */
static int f_unknown(struct an *an, struct fields *f, const char *s, size_t n, bool elsewhere)
{
	f->cflags |= MOAT_SHW_EXPAND | (elsewhere ? CMD_W_ELSEWHERE : 0);
	return f_put(an, f, s, n);
}

static int eval_word(struct an *an, wref w, const struct wctx *cx, int depth, size_t from,
		     bool split, struct alts *out);

/* Home spelled with a tilde prefix ("~", "~user"): its directory, or NULL. */
static const char *tilde_dir(const struct an *an, const char *t, size_t n, char *buf, size_t cap)
{
	if (n == 0)
		return home_now(an);
	if (n == 1 && t[0] == '+')
		return an->st.cwd->n == 1 && !(an->st.cwd->flags & VS_UNKNOWN) ? an->st.cwd->s[0]
										 : NULL;
	if (n == 1 && t[0] == '-')
		return NULL; /* $OLDPWD */
	if (n == 4 && memcmp(t, "root", 4) == 0)
		return "/root";
	for (size_t k = 0; k < n; k++)
		if (!is_name_char(t[k]) && t[k] != '.' && t[k] != '-')
			return NULL;
	if (n + 7 > cap)
		return NULL;
	memcpy(buf, "/home/", 6);
	memcpy(buf + 6, t, n);
	buf[6 + n] = '\0';
	return buf;
}

/* The values of a word given as text (the default of ${X:-word}): parsed as
 * the shell would, each alternative's fields joined by spaces. */
static int eval_text(struct an *an, const char *t, size_t n, const struct wctx *cx, int depth,
		     struct vset *ret)
{
	struct moat_sh_node *root, *k;
	struct moat_sh_error se;
	bool plain = true;
	int r;

	vs_unknown(ret);
	for (size_t i = 0; i < n && plain; i++)
		plain = !strchr("$`\\'\"~*?[{;&|<>()\n", t[i]) || (t[i] == '~' && i > 0);
	if (plain) {
		char *s = moat_arena_strndup(an->ar, t, n);

		if (!s)
			return an_oom(an);
		vs_one(ret, s);
		return 0;
	}
	if (depth >= CMD_EVAL_DEPTH || n == 0)
		return 0;
	r = moat_sh_parse_nested(an->ar, t, n, cx->nest + 1, &root, &se);
	if (r == -ENOMEM)
		return an_oom(an);
	if (r)
		return 0;
	k = root->kids;
	if (!k || k->next || k->kind != MOAT_SH_SIMPLE || k->redirs || k->nassigns)
		return 0;
	{
		struct vset acc;

		acc.n = 1;
		acc.flags = 0;
		acc.s[0] = "";
		for (size_t i = 0; i < k->nwords; i++) {
			struct alts al;
			struct vset next;

			if ((r = eval_word(an, &k->words[i], cx, depth + 1, 0, false, &al)))
				return r < 0 && r != -E2BIG ? r : 0;
			next.n = 0;
			next.flags = acc.flags | (al.truncated || al.unknown ? VS_UNKNOWN : 0);
			for (size_t x = 0; x < acc.n; x++) {
				for (size_t y = 0; y < al.n; y++) {
					const struct fields *f = &al.a[y];
					struct moat_buf b = MOAT_BUF_INIT;
					bool unknown = false;
					char *s;

					for (size_t z = 0; z < f->n; z++)
						unknown |= (f->w[z]->flags & MOAT_SHW_EXPAND) != 0;
					if (unknown) {
						next.flags |= VS_UNKNOWN;
						continue;
					}
					moat_buf_puts(&b, acc.s[x]);
					for (size_t z = 0; z < f->n; z++) {
						if (b.len)
							moat_buf_putc(&b, ' ');
						moat_buf_append(&b, f->w[z]->text, f->w[z]->len);
					}
					s = b.oom ? NULL
						  : moat_arena_strndup(an->ar, b.data ? b.data : "",
								       b.len);
					moat_buf_release(&b);
					if (!s)
						return an_oom(an);
					vs_add(&next, s);
				}
			}
			acc = next;
		}
		*ret = acc;
	}
	return 0;
}

static bool digits_only_param(const char *name, size_t n)
{
	static const char *const nums[] = {"$", "!", "?", "-", "PPID", "RANDOM", "SRANDOM",
					   "LINENO", "SECONDS", "UID", "EUID", "BASHPID",
					   "EPOCHSECONDS"};

	for (size_t k = 0; k < MOAT_ARRAY_SIZE(nums); k++)
		if (strlen(nums[k]) == n && memcmp(nums[k], name, n) == 0)
			return true;
	return false;
}

/* The values of $NAME (one name, no operator). */
static void param_get(struct an *an, const char *name, size_t n, const struct wctx *cx,
		      struct vset *ret)
{
	const struct var *x;

	if (n == 1 && name[0] == '#') {
		char *s;

		if (!cx->pos || cx->pos->unknown || cx->pos->more ||
		    !(s = moat_arena_alloc(an->ar, 8))) {
			vs_one(ret, "0"); /* a count: digits whatever it is */
			return;
		}
		snprintf(s, 8, "%u", cx->pos->n ? cx->pos->n - 1u : 0u);
		vs_one(ret, s);
		return;
	}
	if (digits_only_param(name, n)) {
		vs_one(ret, "0");
		return;
	}
	if (name[0] >= '0' && name[0] <= '9') {
		size_t i = 0;

		for (size_t k = 0; k < n; k++) {
			if (name[k] < '0' || name[k] > '9' || i > CMD_MAX_POS) {
				vs_unknown(ret);
				return;
			}
			i = i * 10 + (size_t)(name[k] - '0');
		}
		if (!cx->pos || cx->pos->unknown || (i >= cx->pos->n && cx->pos->more)) {
			vs_unknown(ret);
			return;
		}
		if (i >= cx->pos->n) {
			vs_one(ret, "");
			return;
		}
		*ret = cx->pos->v[i];
		return;
	}
	x = an->untracked ? NULL : var_find(&an->st, name, n);
	if (x) {
		*ret = x->v;
		return;
	}
	if (an->untracked) {
		vs_unknown(ret);
		return;
	}
	if (n == 4 && memcmp(name, "HOME", 4) == 0) {
		vs_one(ret, an->home);
		return;
	}
	if (n == 3 && memcmp(name, "PWD", 3) == 0) {
		*ret = *an->st.cwd;
		return;
	}
	/* SECURITY: shells set IFS at startup (none takes it from the
	 * environment): "rm -rf$IFS/" is "rm -rf /" */
	if (n == 3 && memcmp(name, "IFS", 3) == 0 && !an->ifs) {
		vs_one(ret, " \t\n");
		return;
	}
	vs_unknown(ret);
}

/* ${X%PAT}, ${X%%PAT}, ${X#PAT}, ${X##PAT} (op and its ol bytes: the
 * operator and PAT) for the known values of X: the shortest or longest
 * suffix or prefix matching PAT removed, as the shell does ("${HOME%/}"
 * is the home directory). A PAT with an expansion, a quote or an escape
 * leaves the value unknown. */
/* values longer than this are not trimmed (unknown) */
#define TRIM_MAX 1024

static int trim_values(struct an *an, const char *name, size_t nl, const char *op, size_t ol,
		       const struct wctx *cx, struct vset *ret)
{
	bool suffix = op[0] == '%', longest = ol > 1 && op[1] == op[0];
	size_t pl = ol - (longest ? 2 : 1);
	const char *pt = op + (longest ? 2 : 1);
	char pat[256];
	struct vset v;

	vs_unknown(ret);
	if (pl >= sizeof(pat) || memchr(pt, '$', pl) || memchr(pt, '`', pl) ||
	    memchr(pt, '\'', pl) || memchr(pt, '"', pl) || memchr(pt, '\\', pl))
		return 0;
	memcpy(pat, pt, pl);
	pat[pl] = '\0';
	if (nl == 1 && (name[0] == '@' || name[0] == '*'))
		return 0;
	param_get(an, name, nl, cx, &v);
	ret->n = 0;
	ret->flags = v.flags;
	for (size_t k = 0; k < v.n; k++) {
		const char *val = v.s[k];
		size_t len = strlen(val), cut = 0;
		bool hit = false;
		char *out, tmp[TRIM_MAX + 1];

		if (len > TRIM_MAX) {
			ret->flags |= VS_UNKNOWN; /* (each cut is a match: quadratic) */
			continue;
		}
		memcpy(tmp, val, len + 1);
		/* the cut points, shortest match first unless longest */
		for (size_t j = 0; j <= len && !hit; j++) {
			size_t at = suffix ? (longest ? j : len - j) : (longest ? len - j : j);
			char keep = tmp[at];

			if (!suffix)
				tmp[at] = '\0';
			hit = fnmatch(pat, suffix ? tmp + at : tmp, 0) == 0;
			tmp[at] = keep;
			if (hit)
				cut = at;
		}
		if (!hit) {
			vs_add(ret, val);
			continue;
		}
		out = suffix ? moat_arena_strndup(an->ar, val, cut)
			     : moat_arena_strndup(an->ar, val + cut, len - cut);
		if (!out)
			return an_oom(an);
		vs_add(ret, out);
	}
	return 0;
}

/* The values of one ${...} or $NAME span; *ret_at: "$@"-like (one field per
 * positional parameter). */
static int param_values(struct an *an, const char *t, size_t n, const struct wctx *cx, int depth,
			struct vset *ret, bool *ret_at)
{
	const char *name, *op;
	size_t nl = 0, inner;
	int r;

	*ret_at = false;
	vs_unknown(ret);
	if (n < 2 || t[0] != '$')
		return 0;
	if (t[1] != '{') {
		name = t + 1;
		nl = n - 1;
		if (nl == 1 && (name[0] == '@' || name[0] == '*')) {
			*ret_at = true;
			return 0;
		}
		param_get(an, name, nl, cx, ret);
		return 0;
	}
	if (n < 4 || t[n - 1] != '}')
		return 0;
	name = t + 2;
	inner = n - 3;
	if (inner > 1 && name[0] == '#') { /* ${#X}: a length */
		bool simple = true;

		for (size_t k = 1; k < inner; k++)
			simple &= is_name_char(name[k]) || name[k] == '@' || name[k] == '*';
		if (simple)
			vs_one(ret, "0");
		return 0;
	}
	if (inner == 0)
		return 0;
	if (is_name_char(name[0])) {
		bool num = name[0] >= '0' && name[0] <= '9';

		while (nl < inner && (num ? (name[nl] >= '0' && name[nl] <= '9') : is_name_char(name[nl])))
			nl++;
	} else if (strchr("@*#?$!-", name[0])) {
		nl = 1;
	}
	if (nl == 0)
		return 0; /* ${!X} and the like */
	op = name + nl;
	if ((size_t)(op - name) == inner) {
		if (nl == 1 && (name[0] == '@' || name[0] == '*')) {
			*ret_at = true;
			return 0;
		}
		param_get(an, name, nl, cx, ret);
		return 0;
	}
	{
		size_t ol = inner - nl;
		bool colon = op[0] == ':';
		char o = colon ? (ol > 1 ? op[1] : 0) : op[0];
		const char *word = op + (colon ? 2 : 1);
		size_t wl = ol - (colon ? 2 : 1);
		struct vset v, d;

		if (colon && ol < 2)
			return 0;
		if (!colon && (o == '%' || o == '#'))
			return trim_values(an, name, nl, op, ol, cx, ret);
		if (o != '-' && o != '=' && o != '+' && o != '?')
			return 0; /* substring, replacement, case: unknown */
		if (nl == 1 && (name[0] == '@' || name[0] == '*'))
			return 0;
		param_get(an, name, nl, cx, &v);
		if (o == '?') {
			*ret = v;
			return 0;
		}
		if ((r = eval_text(an, word, wl, cx, depth, &d)))
			return r;
		if (o == '+') {
			/* the word when set, else nothing */
			vs_one(ret, "");
			vs_join(ret, &d);
			return 0;
		}
		/* SECURITY: the default counts whenever the value may be unset or
		 * empty (or, without ':', even when it looks set: unset leaves no
		 * trace here): ${X:-/} is checked as "/" */
		{
			bool maybe_empty = (v.flags & VS_UNKNOWN) || v.n == 0 || !colon;

			for (size_t k = 0; k < v.n; k++)
				maybe_empty |= v.s[k][0] == '\0';
			*ret = v;
			if (maybe_empty) {
				struct vset keep;

				keep.n = 0;
				keep.flags = v.flags;
				for (size_t k = 0; k < v.n; k++)
					if (v.s[k][0] || !colon)
						vs_add(&keep, v.s[k]);
				vs_join(&keep, &d);
				*ret = keep;
			}
			if (o == '=' && is_name_char(name[0]) && !(name[0] >= '0' && name[0] <= '9') &&
			    (r = var_set(an, name, nl, ret, false, false)))
				return r;
		}
	}
	return 0;
}

/* A word of no expansion as the shell writes it out: its leading unquoted
 * tilde expanded ("~", "~/x", "~root", "~NAME/x"; echo ~ prints the home
 * directory), appended to b. */
static void put_word(const struct an *an, struct moat_buf *b, wref w)
{
	const char *t = w->text;

	if ((w->flags & MOAT_SHW_TILDE) && t[0] == '~') {
		size_t e = strcspn(t, "/");
		char ub[256];
		const char *d = tilde_dir(an, t + 1, e - 1, ub, sizeof(ub));

		if (d) {
			moat_buf_puts(b, d);
			moat_buf_append(b, t + e, w->len - e);
			return;
		}
	}
	moat_buf_append(b, t, w->len);
}

/* echo's output for its arguments, or NULL when escapes make it unknown */
static const char *echo_output(struct an *an, const struct fields *f)
{
	struct moat_buf b = MOAT_BUF_INIT;
	size_t i = 0;
	bool esc = false;
	char *s;

	for (; i < f->n; i++) {
		const char *a = f->w[i]->text;

		if (a[0] != '-' || !a[1] || strspn(a + 1, "neE") != strlen(a + 1))
			break;
		esc |= strchr(a, 'e') != NULL;
	}
	for (size_t k = i; k < f->n; k++) {
		if ((f->w[k]->flags & MOAT_SHW_EXPAND) || (esc && strchr(f->w[k]->text, '\\'))) {
			moat_buf_release(&b);
			return NULL;
		}
		if (k > i)
			moat_buf_putc(&b, ' ');
		put_word(an, &b, f->w[k]);
	}
	s = b.oom ? NULL : moat_arena_strndup(an->ar, b.data ? b.data : "", b.len);
	moat_buf_release(&b);
	return s;
}

/* printf's output for FORMAT ARGS when the format holds only text, %s, %b,
 * %% and simple escapes; NULL otherwise. */
static const char *printf_output(struct an *an, const struct fields *f, size_t first)
{
	struct moat_buf b = MOAT_BUF_INIT;
	const char *fmt;
	size_t ai;
	char *s;

	if (first < f->n && strcmp(f->w[first]->text, "--") == 0)
		first++;
	if (first >= f->n || f->w[first]->text[0] == '-')
		return NULL;
	for (size_t k = first; k < f->n; k++)
		if (f->w[k]->flags & MOAT_SHW_EXPAND)
			return NULL;
	fmt = f->w[first]->text;
	if ((f->w[first]->flags & MOAT_SHW_TILDE) && fmt[0] == '~') {
		struct moat_buf fb = MOAT_BUF_INIT;

		put_word(an, &fb, f->w[first]);
		fmt = fb.oom ? NULL : moat_arena_strndup(an->ar, fb.data ? fb.data : "", fb.len);
		moat_buf_release(&fb);
		if (!fmt)
			return NULL;
	}
	ai = first + 1;
	do {
		bool used = false;

		for (const char *p = fmt; *p; p++) {
			if (*p == '\\') {
				p++;
				if (*p == 'n')
					moat_buf_putc(&b, '\n');
				else if (*p == 't')
					moat_buf_putc(&b, '\t');
				else if (*p == '\\')
					moat_buf_putc(&b, '\\');
				else
					goto unknown;
			} else if (*p == '%') {
				p++;
				if (*p == '%') {
					moat_buf_putc(&b, '%');
				} else if (*p == 's' || *p == 'b') {
					if (ai < f->n) {
						if (*p == 'b' && strchr(f->w[ai]->text, '\\'))
							goto unknown;
						put_word(an, &b, f->w[ai]);
						ai++;
					}
					used = true;
				} else {
					goto unknown;
				}
			} else {
				moat_buf_putc(&b, *p);
			}
		}
		if (!used)
			break;
	} while (ai < f->n);
	while (b.len && b.data[b.len - 1] == '\n')
		b.len--;
	s = b.oom ? NULL : moat_arena_strndup(an->ar, b.data ? b.data : "", b.len);
	moat_buf_release(&b);
	return s;
unknown:
	moat_buf_release(&b);
	return NULL;
}

/* The output of $( ... ) when it is echo, printf or pwd of known values. */
/* SECURITY: a function or an alias of that name in the command: with a
 * function named mktemp that prints /root, rm -rf "$(mktemp -d)" removes no
 * temporary directory */
static bool name_shadowed(const struct an *an, const char *name)
{
	size_t nl = strlen(name);

	for (size_t f = 0; f < an->nfuncs; f++)
		if (!strcmp(an->funcs[f], name))
			return true;
	for (size_t k = 0; k < an->nalias; k++)
		if (!strncmp(an->alias[k], name, nl) && an->alias[k][nl] == '=')
			return true;
	return false;
}

static int cmd_values(struct an *an, const struct moat_sh_sub *sub, const struct wctx *cx,
		      int depth, struct vset *ret)
{
	const struct moat_sh_node *k = sub->body ? sub->body->kids : NULL;
	const struct moat_sh_word *w0;
	struct alts al;
	int r;

	vs_unknown(ret);
	if (!k || k->next || k->kind != MOAT_SH_SIMPLE || k->redirs || k->nassigns || !k->nwords ||
	    depth >= CMD_EVAL_DEPTH)
		return 0;
	w0 = &k->words[0];
	if (w0->flags & (MOAT_SHW_EXPAND | MOAT_SHW_GLOB | MOAT_SHW_BRACE))
		return 0;
	if (name_shadowed(an, w0->text))
		return 0;
	if (strcmp(w0->text, "pwd") == 0 && k->nwords == 1) {
		*ret = *an->st.cwd;
		return 0;
	}
	/* mktemp [-d] [-q] [-t] [TEMPLATE]: a new entry under the temporary
	 * directory, or nothing when it fails ("rm -rf "$d"" is no floor;
	 * "rm -rf "$d/"" still is, through the empty value) */
	if (strcmp(w0->text, "mktemp") == 0) {
		const char *tmpl = NULL;
		bool in_tmp = false;

		for (size_t i = 1; i < k->nwords; i++) {
			const struct moat_sh_word *w = &k->words[i];

			if (w->flags & (MOAT_SHW_EXPAND | MOAT_SHW_GLOB | MOAT_SHW_BRACE | MOAT_SHW_TILDE))
				return 0;
			if (!strcmp(w->text, "-d") || !strcmp(w->text, "-q") ||
			    !strcmp(w->text, "--directory") || !strcmp(w->text, "--quiet"))
				continue;
			if (!strcmp(w->text, "-t") || !strcmp(w->text, "-dt") || !strcmp(w->text, "-td")) {
				in_tmp = true;
				continue;
			}
			if (tmpl || w->text[0] == '-' || strchr(w->text, '/') || !strstr(w->text, "XXX"))
				return 0;
			tmpl = w->text;
		}
		{
			/* no template: $TMPDIR or /tmp; a template: the working
			 * directory, or the temporary one with -t */
			const char *base = !tmpl || in_tmp ? "/tmp/" : "";
			const char *name = tmpl ? tmpl : "tmp.XXXXXXXXXX";
			size_t bl = strlen(base), nl = strlen(name);
			char *full = moat_arena_alloc(an->ar, bl + nl + 1);

			if (!full)
				return -ENOMEM;
			memcpy(full, base, bl);
			memcpy(full + bl, name, nl + 1);
			vs_one(ret, full);
			vs_add(ret, "");
		}
		return 0;
	}
	if (strcmp(w0->text, "echo") != 0 && strcmp(w0->text, "printf") != 0)
		return 0;
	ret->flags = 0;
	{
		/* the arguments, each word evaluated, alternatives combined */
		struct fields acc[CMD_MAX_CAND];
		size_t na = 1;

		memset(&acc[0], 0, sizeof(acc[0]));
		for (size_t i = 1; i < k->nwords; i++) {
			struct fields next[CMD_MAX_CAND];
			size_t nn = 0;

			if (k->words[i].flags & MOAT_SHW_BRACE) {
				vs_unknown(ret);
				return 0;
			}
			r = eval_word(an, &k->words[i], cx, depth + 1, 0, true, &al);
			if (r == -E2BIG) {
				vs_unknown(ret);
				return 0;
			}
			if (r)
				return r;
			if (al.truncated)
				ret->flags |= VS_UNKNOWN;
			for (size_t x = 0; x < na; x++) {
				for (size_t y = 0; y < al.n; y++) {
					if (nn == CMD_MAX_CAND) {
						ret->flags |= VS_UNKNOWN;
						break;
					}
					if ((r = f_copy(an, &next[nn], &acc[x])))
						return r;
					for (size_t z = 0; z < al.a[y].n && !r; z++) {
						r = f_put(an, &next[nn], al.a[y].w[z]->text,
							  al.a[y].w[z]->len);
						next[nn].cflags |= al.a[y].w[z]->flags;
						if (!r)
							r = f_break(an, &next[nn], true);
					}
					if (r == -E2BIG) {
						vs_unknown(ret);
						return 0;
					}
					if (r)
						return r;
					nn++;
				}
			}
			memcpy(acc, next, nn * sizeof(acc[0]));
			na = nn;
		}
		for (size_t x = 0; x < na; x++) {
			const char *out = w0->text[0] == 'e' ? echo_output(an, &acc[x])
							     : printf_output(an, &acc[x], 0);

			if (!out) {
				ret->flags |= VS_UNKNOWN;
				continue;
			}
			if (w0->text[0] == 'e') {
				size_t l = strlen(out);

				while (l && out[l - 1] == '\n')
					l--;
				((char *)out)[l] = '\0';
			}
			vs_add(ret, out);
		}
	}
	return 0;
}

/* Multiply the alternatives by the values of one expansion. */
static int apply_values(struct an *an, struct alts *out, const struct vset *v, const char *raw,
			size_t rawlen, bool split, bool changes)
{
	struct fields next[CMD_MAX_CAND];
	struct vset u;
	size_t nn = 0, nv;
	int r;

	if (split && an->ifs && v->n) {
		/* SECURITY: IFS was changed: where an unquoted value splits is unknown */
		vs_unknown(&u);
		v = &u;
	}
	nv = v->n + ((v->flags & VS_UNKNOWN) ? 1 : 0);
	if (nv == 0) {
		/* no value at all: unknown */
		for (size_t x = 0; x < out->n; x++)
			if ((r = f_unknown(an, &out->a[x], raw, rawlen, false)))
				return r;
		out->unknown = true;
		return 0;
	}
	for (size_t x = 0; x < out->n; x++) {
		for (size_t y = 0; y < nv; y++) {
			if (nn == CMD_MAX_CAND) {
				out->truncated = true;
				break;
			}
			if (y + 1 == nv && x + 1 == out->n) {
				next[nn] = out->a[x]; /* the last one can take the original */
			} else if ((r = f_copy(an, &next[nn], &out->a[x]))) {
				return r;
			}
			if (y < v->n) {
				r = f_value(an, &next[nn], v->s[y], split);
				out->changed |= changes;
			} else {
				r = f_unknown(an, &next[nn], raw, rawlen, (v->flags & VS_ELSEWHERE) != 0);
				out->unknown = true;
			}
			if (r)
				return r;
			nn++;
		}
	}
	memcpy(out->a, next, nn * sizeof(out->a[0]));
	out->n = (uint8_t)nn;
	return 0;
}

/* "$@" and $*: the positional parameters from $1 */
static int apply_at(struct an *an, struct alts *out, const struct wctx *cx, const char *raw,
		    size_t rawlen, bool dq, bool star)
{
	const struct pos *p = cx->pos;
	int r;

	if (!p || p->unknown || p->more) {
		for (size_t x = 0; x < out->n; x++)
			if ((r = f_unknown(an, &out->a[x], raw, rawlen, false)))
				return r;
		out->unknown = true;
		return 0;
	}
	for (size_t i = 1; i < p->n; i++) {
		if (i > 1) {
			for (size_t x = 0; x < out->n; x++) {
				if (dq && star)
					r = f_put(an, &out->a[x], " ", 1);
				else
					r = f_break(an, &out->a[x], dq);
				if (r)
					return r;
				out->a[x].open = true;
			}
		}
		if ((r = apply_values(an, out, &p->v[i], raw, rawlen, !dq, true)))
			return r;
	}
	return 0;
}

/* Evaluate w's text from byte 'from' (an assignment's value) into out.
 * split: word splitting applies to unquoted expansions (arguments, not
 * assignments or redirection targets). Returns 0, -E2BIG when over a limit
 * (the caller treats the word as unknown), or an error. */
static int eval_word(struct an *an, wref w, const struct wctx *cx, int depth, size_t from,
		     bool split, struct alts *out)
{
	const char *t = w->text;
	uint16_t base = w->flags & (MOAT_SHW_QUOTED | MOAT_SHW_GLOB);
	size_t pos = from;
	int r;

	memset(out, 0, sizeof(*out));
	out->n = 1;
	out->a[0].cflags = base;
	if (depth > CMD_EVAL_DEPTH)
		return -E2BIG;
	if (from == 0 && (w->flags & MOAT_SHW_TILDE) && t[0] == '~' &&
	    !(w->spans && w->spans->off == 0)) {
		size_t e = 1;
		char ub[256];
		const char *d;

		while (e < w->len && t[e] != '/' && !(w->spans && e >= w->spans->off))
			e++;
		d = tilde_dir(an, t + 1, e - 1, ub, sizeof(ub));
		if (d) {
			if ((r = f_put(an, &out->a[0], d, strlen(d))))
				return r;
			pos = e;
			out->changed = true;
		} else {
			out->a[0].cflags |= MOAT_SHW_TILDE;
		}
	} else if (from > 0 && (w->flags & MOAT_SHW_ATILDE) && t[from] == '~') {
		size_t e = from + 1;
		char ub[256];
		const char *d;

		while (e < w->len && t[e] != '/' && t[e] != ':' && !(w->spans && e >= w->spans->off))
			e++;
		d = tilde_dir(an, t + from + 1, e - from - 1, ub, sizeof(ub));
		if (d) {
			if ((r = f_put(an, &out->a[0], d, strlen(d))))
				return r;
			pos = e;
		}
	}
	if ((w->flags & MOAT_SHW_EXPAND) && !w->spans) {
		/* expansions we cannot place (a brace expansion of them): unknown */
		if ((r = f_unknown(an, &out->a[0], t + pos, w->len - pos, false)))
			return r;
		out->unknown = true;
		pos = w->len;
	}
	for (const struct moat_sh_span *sp = w->spans; sp && pos < w->len; sp = sp->next) {
		struct vset v;
		bool at = false, sp_split = split && !sp->dq;
		const char *raw = t + sp->off;

		if (sp->off + sp->len <= pos)
			continue;
		if (sp->off > pos) {
			for (size_t x = 0; x < out->n; x++)
				if ((r = f_put(an, &out->a[x], t + pos, sp->off - pos)))
					return r;
		}
		pos = sp->off + sp->len;
		switch (sp->kind) {
		case MOAT_SH_SPAN_PARAM:
			r = param_values(an, raw, sp->len, cx, depth, &v, &at);
			break;
		case MOAT_SH_SPAN_CMD:
			r = sp->sub ? cmd_values(an, sp->sub, cx, depth, &v) : 0;
			if (!sp->sub)
				vs_unknown(&v);
			break;
		case MOAT_SH_SPAN_PROC:
			vs_one(&v, "/dev/fd/63");
			r = 0;
			break;
		default: {
			/* $(( N )): a plain number is known */
			size_t a0 = 3, a1 = sp->len >= 5 ? sp->len - 2 : 3;

			while (a0 < a1 && raw[a0] == ' ')
				a0++;
			while (a1 > a0 && raw[a1 - 1] == ' ')
				a1--;
			vs_unknown(&v);
			if (a1 > a0 && a1 - a0 < 20) {
				size_t k = raw[a0] == '-' ? a0 + 1 : a0;
				bool num = k < a1;
				char *s;

				for (; k < a1 && num; k++)
					num = raw[k] >= '0' && raw[k] <= '9';
				if (num && (s = moat_arena_strndup(an->ar, raw + a0, a1 - a0)))
					vs_one(&v, s);
			}
			r = 0;
			break;
		}
		}
		if (r)
			return r;
		if (at)
			r = apply_at(an, out, cx, raw, sp->len, sp->dq, raw[sp->len - 1 - (raw[1] == '{')] == '*');
		else
			r = apply_values(an, out, &v, raw, sp->len, sp_split,
					 sp->kind != MOAT_SH_SPAN_PROC);
		if (r)
			return r;
	}
	if (pos < w->len) {
		for (size_t x = 0; x < out->n; x++)
			if ((r = f_put(an, &out->a[x], t + pos, w->len - pos)))
				return r;
	}
	for (size_t x = 0; x < out->n; x++) {
		/* a quoted empty word stays; an unquoted one vanishes */
		bool keep = (w->flags & MOAT_SHW_QUOTED) || (out->a[x].n == 0 && !split);

		if (!out->a[x].open && out->a[x].n == 0 && keep)
			out->a[x].open = true;
		if ((r = f_break(an, &out->a[x], keep)))
			return r;
	}
	return 0;
}

/* The values of a word as one string each (assignments, targets): NULL fields are unknown. */
static int word_values(struct an *an, wref w, const struct wctx *cx, size_t from, struct vset *ret)
{
	struct alts al;
	int r;

	ret->n = 0;
	ret->flags = 0;
	/* (a leading unquoted ~ is expanded, as the shell does: sh -c '...' x ~,
	 * <<< ~) */
	if (!(w->flags & (MOAT_SHW_EXPAND | MOAT_SHW_ATILDE)) &&
	    !(from == 0 && (w->flags & MOAT_SHW_TILDE))) {
		vs_one(ret, w->text + from);
		return 0;
	}
	r = eval_word(an, w, cx, 0, from, false, &al);
	if (r == -E2BIG) {
		vs_unknown(ret);
		return 0;
	}
	if (r)
		return r;
	if (al.truncated)
		ret->flags |= VS_UNKNOWN;
	for (size_t x = 0; x < al.n; x++) {
		const struct fields *f = &al.a[x];

		if (f->n != 1) {
			if (f->n == 0)
				vs_add(ret, "");
			else
				ret->flags |= VS_UNKNOWN;
			continue;
		}
		if (f->w[0]->flags & MOAT_SHW_EXPAND)
			ret->flags |= VS_UNKNOWN | ((f->w[0]->flags & CMD_W_ELSEWHERE) ? VS_ELSEWHERE : 0);
		else
			vs_add(ret, f->w[0]->text);
	}
	return 0;
}

/* ---- findings ------------------------------------------------------------- */

/* The known end of an unknown word ("$(echo ~)/.bashrc" -> "/.bashrc"). */
static const char *unknown_tail(const char *t)
{
	const char *last = NULL;

	for (const char *p = t; *p; p++)
		if (*p == '$' || *p == '`' || *p == ')' || *p == '}')
			last = p;
	if (!last)
		return t;
	if (*last == '$')
		while (is_name_char(last[1]))
			last++;
	return last + 1;
}

/* An unquoted glob in a written path ("> /dev/[s]da", "> ~/.b*rc"):
 * bash expands it when it matches one file (a redirection) or passes
 * every match (arguments). Could it name a raw disk, memory, the sysrq
 * trigger or a startup file? Checked against names of each kind
 * (FNM_PERIOD: a leading dot must be spelt, as bash's globs need it).
 * Here: the kind of disk or memory device it may name (DEV_DISK,
 * DEV_MEM), or 0. */
static int glob_device(const char *pat)
{
	char name[64];

	for (size_t k = 0; k < MOAT_ARRAY_SIZE(devnames); k++)
		for (size_t j = 0; j < 4 && devnames[k].samples[j]; j++) {
			snprintf(name, sizeof(name), "/dev/%s", devnames[k].samples[j]);
			if (fnmatch(pat, name, FNM_PATHNAME | FNM_PERIOD) == 0)
				return devnames[k].kind;
		}
	return 0;
}

/* The startup name a globbed path may be (into name), from the lists
 * above: a file entry matched whole, a directory entry ("x/") by the
 * pattern's directory part. */
static bool glob_startup(const struct an *an, const char *pat, char *name, size_t namesz)
{
	char cand[CMD_PATH_MAX], dir[CMD_PATH_MAX];
	const char *sl = strrchr(pat, '/');

	if (!sl || (size_t)(sl - pat) >= sizeof(dir))
		return false;
	memcpy(dir, pat, (size_t)(sl - pat));
	dir[sl - pat] = '\0';
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(startup_home) + MOAT_ARRAY_SIZE(startup_system);
	     i++) {
		bool home = i < MOAT_ARRAY_SIZE(startup_home);
		const char *e = home ? startup_home[i] : startup_system[i - MOAT_ARRAY_SIZE(startup_home)];
		size_t el = strlen(e);
		int n;

		if (home && !an->hlen)
			continue;
		n = home ? snprintf(cand, sizeof(cand), "%.*s/%s", (int)an->hlen, an->home, e)
			 : snprintf(cand, sizeof(cand), "%s", e);
		if (n < 0 || (size_t)n >= sizeof(cand))
			continue;
		if (e[el - 1] == '/') {
			cand[n - 1] = '\0'; /* the directory: the pattern's own must match it */
			if (fnmatch(dir, cand, FNM_PATHNAME | FNM_PERIOD) != 0 &&
			    fnmatch(pat, cand, FNM_PATHNAME | FNM_PERIOD) != 0)
				continue;
		} else if (fnmatch(pat, cand, FNM_PATHNAME | FNM_PERIOD) != 0) {
			continue;
		}
		snprintf(name, namesz, "%s%s", home ? "~/" : "", e);
		return true;
	}
	return false;
}

static int check_write_abs(struct an *an, size_t v, const char *buf, bool glob)
{
	char name[CMD_PATH_MAX / 2], rule[64];
	int r;

	if (an->hardline && glob) {
		int dk = glob_device(buf);

		if (dk == DEV_DISK &&
		    (r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:disk-write",
				     "writes to %s, which may name a raw disk device", buf)))
			return r;
		if (dk == DEV_MEM &&
		    (r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:mem-write",
				     "writes to %s, which may name the machine's memory or I/O "
				     "ports",
				     buf)))
			return r;
		if (fnmatch(buf, "/proc/sysrq-trigger", FNM_PATHNAME | FNM_PERIOD) == 0 &&
		    (r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
				     "writes to %s, which may name /proc/sysrq-trigger", buf)))
			return r;
	}
	if (glob && glob_startup(an, buf, name, sizeof(name))) {
		join2(rule, sizeof(rule), "startup-write:", name);
		return add_finding(an, v, MOAT_FINDING_ASK, rule,
				   "writes to %s, which may name %s, a startup, persistence or "
				   "credential file",
				   buf, name);
	}
	switch (dev_kind(buf)) {
	case DEV_HARMLESS:
		return 0;
	case DEV_DISK:
		if (an->hardline &&
		    (r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:disk-write",
				     "writes to the raw disk device %s", buf)))
			return r;
		break;
	case DEV_MEM:
		if (an->hardline)
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:mem-write",
					   "writes to %s, the machine's memory or I/O ports", buf);
		/* without the floor, as any other device */
		__attribute__((fallthrough));
	case DEV_OTHER:
		/* (a glob under /dev, too: it names what it matches then) */
		return add_finding(an, v, MOAT_FINDING_ASK, "command:device-write",
				   "writes to the device node %s, which is neither a harmless "
				   "one (/dev/null, /dev/tty, ...) nor a known disk",
				   buf);
	default:
		break;
	}
	if (an->hardline) {
		if (strcmp(buf, "/proc/sysrq-trigger") == 0 &&
		    (r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
				     "writes to /proc/sysrq-trigger (immediate reboot or crash)")))
			return r;
	}
	if (!startup_abs(an->home, an->hlen, buf, name, sizeof(name)))
		return 0;
	join2(rule, sizeof(rule), "startup-write:", name);
	return add_finding(an, v, MOAT_FINDING_ASK, rule,
			   "writes to %s, a startup, persistence or credential file", name);
}

/* A file the command writes: raw disks (floor) and startup files (ask),
 * for every directory a relative name may be in; an unknown name asks when
 * its known end names a startup file. */
static int check_write(struct an *an, size_t v, unsigned flags, const char *text)
{
	char buf[CMD_PATH_MAX], name[200], rule[64];
	int r, got;

	if (flags & CMD_W_ELSEWHERE)
		return 0;
	for (size_t k = 0; (got = abs_path_k(an, flags, text, k, buf, sizeof(buf))) != 0; k++) {
		if (got > 0) {
			if ((r = check_write_abs(an, v, buf, (flags & MOAT_SHW_GLOB) != 0)))
				return r;
			continue;
		}
		if (!startup_tail(unknown_tail(text), name, sizeof(name)))
			continue;
		join2(rule, sizeof(rule), "startup-write:", name);
		return add_finding(an, v, MOAT_FINDING_ASK, rule,
				   "writes to '%s', which cannot be known before running and may be "
				   "%s, a startup, persistence or credential file",
				   text, name);
	}
	return 0;
}

/* Every absolute path a word may name, classified; the first hit is copied
 * to hit. *ret_unknown: some cannot be known before running. */
static int classify_word(const struct an *an, const struct moat_cmdview *view, wref w,
			 const char *text, char *hit, size_t hitsz, bool *ret_unknown)
{
	char buf[CMD_PATH_MAX];
	int worst = PC_NONE, got;

	*ret_unknown = false;
	if ((w->flags & CMD_W_ELSEWHERE) ||
	    ((view->flags & MOAT_VIEW_VALUES) && (w->flags & MOAT_SHW_EXPAND)))
		return PC_NONE; /* the resolved views hold its values */
	for (size_t k = 0; (got = abs_path_k(an, w->flags, text, k, buf, sizeof(buf))) != 0; k++) {
		int c;

		if (got < 0) {
			*ret_unknown = true;
			continue;
		}
		c = classify_abs(an, (w->flags & MOAT_SHW_GLOB) != 0, buf);
		if (c != PC_NONE && worst == PC_NONE) {
			worst = c;
			moat_strlcpy(hit, buf, hitsz);
		}
	}
	return worst;
}

/* SECURITY: a recursive removal (or chmod, chown, find -delete) of a target
 * that cannot be known before running asks: "$X/" may be "/" */
static int ask_dynamic(struct an *an, size_t v, const char *prog, const char *text)
{
	char rule[64];

	join2(rule, sizeof(rule), "dynamic-target:", prog);
	return add_finding(an, v, MOAT_FINDING_ASK, rule,
			   "%s acts recursively on '%s', whose value (or working directory) "
			   "cannot be known before the command runs",
			   prog, text);
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

/* SECURITY: an expansion that gives several words even inside double
 * quotes: "$@", "${@:2}", "${a[@]}", "${!a[@]}", "${!prefix@}", any
 * indirection "${!ref}" (ref="a[@]") ("a=(-rf /); rm "${a[@]}"" is rm -rf /) */
static bool span_many(const char *t, size_t n)
{
	if (n == 2 && t[0] == '$' && t[1] == '@')
		return true;
	if (n < 4 || t[0] != '$' || t[1] != '{')
		return false;
	if (t[2] == '@' || t[2] == '!')
		return true; /* "${!ref}" with ref="a[@]" is the array's words */
	for (size_t i = 2; i + 2 < n; i++)
		if (t[i] == '[' && t[i + 1] == '@' && t[i + 2] == ']')
			return true;
	return t[2] == '!' && t[n - 2] == '@';
}

/* Does the word name one of the files without which the system cannot
 * start or log anyone in (moat_cmd_critical_file; a glob word: one it may
 * match)? hit gets it. */
static bool critical_word(const struct an *an, const struct moat_cmdview *view, wref w,
			  const char *text, char *hit, size_t hitsz)
{
	char buf[CMD_PATH_MAX];
	int got;

	if ((w->flags & CMD_W_ELSEWHERE) ||
	    ((view->flags & MOAT_VIEW_VALUES) && (w->flags & MOAT_SHW_EXPAND)))
		return false; /* the resolved views hold its values */
	for (size_t k = 0; (got = abs_path_k(an, w->flags, text, k, buf, sizeof(buf))) != 0; k++) {
		if (got < 0)
			continue;
		if (moat_cmd_critical_file(buf)) {
			moat_strlcpy(hit, buf, hitsz);
			return true;
		}
		if ((w->flags & MOAT_SHW_GLOB) && has_glob(buf, strlen(buf))) {
			const char *cand;

			for (size_t i = 0; (cand = moat_cmd_critical_file_at(i)); i++) {
				if (fnmatch(buf, cand, FNM_PATHNAME | FNM_PERIOD) == 0) {
					moat_strlcpy(hit, cand, hitsz);
					return true;
				}
			}
		}
	}
	return false;
}

static int check_rm(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	char hit[CMD_PATH_MAX];
	bool rec = false, done = false, maybe = false;
	size_t argc = view->argc, unknowns = 0;

	/* the files the system cannot start without: their removal alone */
	for (size_t i = 1; i < argc; i++) {
		const char *a = view->argv[i];

		if (!done && strcmp(a, "--") == 0) {
			done = true;
			continue;
		}
		if (!done && is_opt(a))
			continue;
		if (critical_word(an, view, vw[i], a, hit, sizeof(hit)))
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:rm-system",
					   "removal of %s, without which the system cannot start "
					   "or log anyone in",
					   hit);
	}
	done = false;
	for (size_t i = 1; i < argc; i++) {
		const char *a = view->argv[i];

		/* an unknown word may be "-rf" ("rm $FLAGS /"), or several words */
		if (!done && (vw[i]->flags & MOAT_SHW_EXPAND) &&
		    !(vw[i]->flags & CMD_W_ELSEWHERE) && !(view->flags & MOAT_VIEW_VALUES)) {
			bool one = vw[i]->spans != NULL;

			for (const struct moat_sh_span *sp = vw[i]->spans; sp; sp = sp->next)
				one &= sp->dq && !span_many(vw[i]->text + sp->off, sp->len) &&
				       !(an->untracked && sp->kind == MOAT_SH_SPAN_PARAM);
			maybe = true;
			unknowns += one ? 1 : 2;
		}
		if (done || !is_opt(a))
			continue;
		if (strcmp(a, "--") == 0)
			done = true;
		else if (a[1] == '-')
			rec |= long_is(a + 2, "recursive", 1);
		else if (strpbrk(a + 1, "rR"))
			rec = true;
	}
	if (!rec && !maybe)
		return 0;
	done = false;
	for (size_t i = 1; i < argc; i++) {
		const char *a = an->a->views[v].argv[i];
		bool unknown;
		int cls, r = 0;

		if (!done && strcmp(a, "--") == 0) {
			done = true;
			continue;
		}
		if (!done && is_opt(a))
			continue;
		cls = classify_word(an, &an->a->views[v], vw[i], a, hit, sizeof(hit), &unknown);
		if (!rec) {
			/* SECURITY: the options are unknown ("rm $F /", "rm $X" with X="-rf /"):
			 * a floor target, or unknown words that may be options and targets, ask */
			if ((cls != PC_NONE || unknowns > 1) &&
			    (r = add_finding(an, v, MOAT_FINDING_ASK, "dynamic-target:rm",
					     "rm may remove recursively (some of its words cannot be "
					     "known before running) and names '%s'",
					     a)))
				return r;
			continue;
		}
		if (cls == PC_ROOT)
			r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:rm-root",
					"recursive removal of the root directory (%s)", a);
		else if (cls == PC_SYSTEM || cls == PC_TREE)
			r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:rm-system",
					"recursive removal of the system directory %s", hit);
		else if (cls == PC_HOME)
			r = add_finding(an, v, MOAT_FINDING_DENY, "hardline:rm-home",
					"recursive removal of the home directory (%s)", a);
		else if (unknown)
			r = ask_dynamic(an, v, "rm", a);
		if (r)
			return r;
	}
	return 0;
}

/* chmod MODE: a setuid or setgid bit asks (4755, u+s, g=s, +s) */
static bool setuid_mode(const char *m)
{
	size_t n = strlen(m);

	if (n >= 4 && strspn(m, "01234567") == n) {
		char c = m[n - 4];

		return c == '2' || c == '4' || c == '6' || c == '7' || c == '3' || c == '5';
	}
	for (const char *p = m; *p; p++) {
		if (*p != '+' && *p != '=')
			continue;
		for (p++; *p && *p != ',' && *p != '+' && *p != '-' && *p != '='; p++)
			if (*p == 's')
				return true;
		p--;
	}
	return false;
}

static int check_chmod(struct an *an, size_t v, bool own)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	char hit[CMD_PATH_MAX];
	bool rec = false, ref = false, done = false, first = true;
	int r;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (strcmp(a, "--") == 0)
			break;
		if (!is_opt(a))
			continue;
		if (a[1] == '-') {
			rec |= long_is(a + 2, "recursive", 3);
			ref |= long_is(a + 2, "reference", 3);
		} else if (strchr(a + 1, 'R')) {
			rec = true;
		}
	}
	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];
		bool unknown;
		int cls;

		if (!done && strcmp(a, "--") == 0) {
			done = true;
			continue;
		}
		/* "-x" and "-s" are modes of chmod, not options */
		if (!done && is_opt(a) && (own || !first || a[1] == '-' || strspn(a + 1, "rwxXst,") != strlen(a + 1)))
			continue;
		if (first && !ref) {
			first = false;
			if (!own && (vw[i]->flags & MOAT_SHW_EXPAND) == 0 && setuid_mode(a) &&
			    (r = add_finding(an, v, MOAT_FINDING_ASK, "command:setuid",
					     "chmod %s sets a setuid or setgid bit", a)))
				return r;
			continue;
		}
		if (!rec || !an->hardline)
			continue;
		cls = classify_word(an, view, vw[i], a, hit, sizeof(hit), &unknown);
		if (cls == PC_ROOT || cls == PC_SYSTEM)
			return add_finding(an, v, MOAT_FINDING_DENY,
					   own ? "hardline:chown-root" : "hardline:chmod-root",
					   "recursive %s of %s", own ? "change of owner" : "chmod",
					   hit);
		if (unknown && (r = ask_dynamic(an, v, own ? "chown" : "chmod", a)))
			return r;
		view = &an->a->views[v];
	}
	return 0;
}

static bool is_find_expr(const char *a)
{
	return is_opt(a) || strcmp(a, "(") == 0 || strcmp(a, "!") == 0 || strcmp(a, ")") == 0 ||
	       strcmp(a, ",") == 0;
}

/* find's operators that widen what its expression selects past one test
 * ("-name '*.gz' -o -delete", "! -name x", ", -delete") */
static const char *const find_widen[] = {"-o", "-or", "!", "-not", ","};
/* tests that choose by a name or a path (their argument a pattern); those
 * on a path are read by the pattern's last component */
static const struct {
	const char *test;
	bool path;
} find_name_tests[] = {
    {"-name", false},	  {"-iname", false},	  {"-lname", false}, {"-ilname", false},
    {"-path", true},	  {"-ipath", true},	  {"-wholename", true}, {"-iwholename", true},
};
/* tests of an age, choosing by "+N" (older than N) */
static const char *const find_age_tests[] = {"-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin"};
/* other words of find's expression that take an argument (so that it is
 * not read as an operator) */
static const char *const find_arg_words[] = {
    "-maxdepth", "-mindepth", "-type",	 "-xtype",   "-regextype", "-regex",   "-iregex",
    "-size",	 "-newer",    "-anewer", "-cnewer",  "-user",	   "-group",   "-uid",
    "-gid",	 "-perm",     "-links",	 "-inum",    "-samefile",  "-fstype",  "-used",
    "-context",	 "-printf",   "-fprint", "-fprint0", "-fls",	   "-files0-from",
};

static bool in_table(const char *const *t, size_t n, const char *a)
{
	for (size_t k = 0; k < n; k++)
		if (!strcmp(t[k], a))
			return true;
	return false;
}

/* Does a find pattern hold a literal character (outside '*', '?' and
 * bracket expressions; an escaped one counts)? path: only its last
 * component is read ("/var/log/\*" chooses nothing). */
static bool find_pattern_literal(const char *p, bool path)
{
	const char *sl = path ? strrchr(p, '/') : NULL;

	for (p = sl ? sl + 1 : p; *p; p++) {
		if (*p == '*' || *p == '?')
			continue;
		if (*p == '[') {
			const char *e = p + 1;

			if (*e == '!' || *e == '^')
				e++;
			if (*e == ']')
				e++;
			e = strchr(e, ']');
			if (e) {
				p = e;
				continue;
			}
			return true; /* an unclosed '[' is itself */
		}
		if (*p == '\\' && !p[1])
			return false;
		return true;
	}
	return false;
}

/* Does find's expression, from word i on, choose what goes, so that a
 * removal of a system tree of the machine's own (/var/log) is the honest
 * clean-up: no operator that widens the expression (-o, !, -not, ","), and
 * a real selector: a name or path test whose pattern holds a literal
 * character, an age "+N" (N >= 1), or -empty. -name '*', -regex '.*',
 * -size -9999G or -mtime -100000 choose nothing. */
static bool find_filters(const struct moat_cmdview *view, size_t i)
{
	bool chosen = false;

	for (; i < view->argc; i++) {
		const char *a = view->argv[i], *n;
		bool named = false;

		if (!strcmp(a, "-exec") || !strcmp(a, "-execdir") || !strcmp(a, "-ok") ||
		    !strcmp(a, "-okdir")) {
			while (i + 1 < view->argc && strcmp(view->argv[i + 1], ";") != 0 &&
			       strcmp(view->argv[i + 1], "+") != 0)
				i++;
			i++;
			continue;
		}
		if (in_table(find_widen, MOAT_ARRAY_SIZE(find_widen), a))
			return false;
		for (size_t k = 0; k < MOAT_ARRAY_SIZE(find_name_tests) && !named; k++) {
			if (strcmp(a, find_name_tests[k].test) != 0)
				continue;
			named = true;
			if (i + 1 < view->argc &&
			    find_pattern_literal(view->argv[i + 1], find_name_tests[k].path))
				chosen = true;
		}
		if (named) {
			i++;
			continue;
		}
		if (in_table(find_age_tests, MOAT_ARRAY_SIZE(find_age_tests), a)) {
			n = i + 1 < view->argc ? view->argv[i + 1] : "";
			if (n[0] == '+' && n[1] && strspn(n + 1, "0123456789") == strlen(n + 1) &&
			    strspn(n + 1, "0") != strlen(n + 1))
				chosen = true;
			i++;
			continue;
		}
		if (!strcmp(a, "-empty"))
			chosen = true;
		else if (!strcmp(a, "-fprintf"))
			i += 2;
		else if (in_table(find_arg_words, MOAT_ARRAY_SIZE(find_arg_words), a))
			i++;
	}
	return chosen;
}

/* Does the action at word act of find's expression (which starts at
 * word first) act only on what a test chooses? The expression is read as
 * branches joined by -o, -or and ",": the action's own branch, the words
 * from the last of those before it, must choose (find_filters, which
 * also refuses any widening operator within it). Parentheses make the
 * branches nested: then the whole expression must choose. */
static bool find_branch_filters(const struct moat_cmdview *view, size_t first, size_t act)
{
	struct moat_cmdview part = *view;
	size_t start = first;

	for (size_t i = first; i < act; i++) {
		const char *a = view->argv[i];

		if (!strcmp(a, "(") || !strcmp(a, ")"))
			return find_filters(view, first);
		if (!strcmp(a, "-exec") || !strcmp(a, "-execdir") || !strcmp(a, "-ok") ||
		    !strcmp(a, "-okdir")) {
			while (i + 1 < act && strcmp(view->argv[i + 1], ";") != 0 &&
			       strcmp(view->argv[i + 1], "+") != 0)
				i++;
			i++;
			continue;
		}
		if (!strcmp(a, "-o") || !strcmp(a, "-or") || !strcmp(a, ","))
			start = i + 1;
		else if (!strcmp(a, "-fprintf"))
			i += 2;
		else if (in_table(find_arg_words, MOAT_ARRAY_SIZE(find_arg_words), a) ||
			 in_table(find_age_tests, MOAT_ARRAY_SIZE(find_age_tests), a))
			i++;
		else
			for (size_t k = 0; k < MOAT_ARRAY_SIZE(find_name_tests); k++)
				if (!strcmp(a, find_name_tests[k].test))
					i++;
	}
	/* (the branch: its words up to the action) */
	part.argc = act;
	return find_filters(&part, start);
}

static int check_find(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	char hit[CMD_PATH_MAX];
	const char *unknown_text = NULL;
	size_t i = 1, argc = view->argc, expr;
	bool bad = false, tree_only = false;

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
	{
		size_t first = i;
		bool sys = false, tree = false;
		char other[CMD_PATH_MAX];

		for (; i < argc && !is_find_expr(view->argv[i]); i++) {
			bool unknown = false;
			int cls = classify_word(an, view, vw[i], view->argv[i], bad ? other : hit,
						sizeof(hit), &unknown);

			if (cls != PC_NONE) {
				bad = true;
				*(cls == PC_TREE ? &tree : &sys) = true;
			} else if (unknown && !unknown_text) {
				unknown_text = view->argv[i];
			}
		}
		/* no start path: GNU find starts at ".", the working directory */
		if (i == first) {
			bool unknown = false;
			int cls = classify_word(an, view, vw[0], ".", hit, sizeof(hit), &unknown);

			if (cls != PC_NONE) {
				bad = true;
				*(cls == PC_TREE ? &tree : &sys) = true;
			} else if (unknown) {
				unknown_text = ".";
			}
		}
		/* a system tree of the machine's own (/var/log) is the floor only
		 * when all of it goes: a test choosing what (-name '*.gz',
		 * -mtime +30) is the honest clean-up; each action is judged by
		 * its own branch below */
		tree_only = bad && !sys;
	}
	expr = i;
	if (!bad && !unknown_text)
		return 0;
	for (; i < argc; i++) {
		const char *a = view->argv[i];
		const char *what = NULL;

		if (strcmp(a, "-delete") == 0) {
			what = "-delete";
		} else if ((strcmp(a, "-exec") == 0 || strcmp(a, "-execdir") == 0 ||
			    strcmp(a, "-ok") == 0 || strcmp(a, "-okdir") == 0) &&
			   i + 1 < argc) {
			const char *p = strrchr(view->argv[i + 1], '/');

			p = p ? p + 1 : view->argv[i + 1];
			if (strcmp(p, "rm") == 0 || strcmp(p, "shred") == 0 ||
			    strcmp(p, "chmod") == 0 || strcmp(p, "chown") == 0 ||
			    strcmp(p, "unlink") == 0 || strcmp(p, "rmdir") == 0)
				what = p;
		}
		if (!what)
			continue;
		if (bad && tree_only && find_branch_filters(view, expr, i))
			continue;
		if (bad)
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:find-delete-root",
					   "find %s%s everything under %s",
					   what[0] == '-' ? "" : "running ", what, hit);
		return ask_dynamic(an, v, "find", unknown_text);
	}
	return 0;
}

static bool harmless_to_init(const char *sig)
{
	static const char *const ok[] = {"0", "1", "HUP", "SIGHUP", "USR1", "SIGUSR1", "USR2",
					 "SIGUSR2", "CONT", "SIGCONT", "WINCH", "SIGWINCH",
					 "CHLD", "SIGCHLD", "10", "12", "18", "28"};

	for (size_t k = 0; sig && k < MOAT_ARRAY_SIZE(ok); k++)
		if (strcasecmp(sig, ok[k]) == 0)
			return true;
	return false;
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
	for (; i < argc; i++) {
		const char *a = argv[i];
		char pid[32];
		size_t pl = 0;

		/* the pid as the shell's kill reads it: blanks around it, a
		 * sign, leading zeros ("-01", " -1", "+1", "001") */
		while (*a == ' ' || *a == '\t')
			a++;
		for (const char *c = a; *c && pl + 1 < sizeof(pid); c++)
			pid[pl++] = *c;
		while (pl && (pid[pl - 1] == ' ' || pid[pl - 1] == '\t'))
			pl--;
		pid[pl] = '\0';
		{
			const char *d = pid + (pid[0] == '-' || pid[0] == '+');

			d += strspn(d, "0");
			if (pid[0] == '-' && !strcmp(d, "1"))
				return add_finding(an, v, MOAT_FINDING_DENY, "hardline:kill-all",
						   "sends a signal to every process (pid -1)");
			if (pid[0] != '-' && (pid[0] == '+' || pid[0] == '0' || strcmp(pid, argv[i])) &&
			    !strcmp(d, "1") && !harmless_to_init(sig))
				return add_finding(an, v, MOAT_FINDING_DENY, "hardline:kill-init",
						   "sends signal %s to init (pid 1)", sig ? sig : "TERM");
		}
		/* an arithmetic expansion may be -1 or 1 */
		if ((an->vw[v][i]->flags & MOAT_SHW_EXPAND) &&
		    (strstr(an->vw[v][i]->text, "$((") || strstr(an->vw[v][i]->text, "$[")))
			return add_finding(an, v, MOAT_FINDING_ASK, "dynamic-target:kill",
					   "kill signals processes whose ids cannot be known "
					   "before the command runs");
		/* pids that a command substitution prints ($(pgrep .)) are
		 * not known before running: asked, like xargs' */
		if (an->vw[v][i]->flags & MOAT_SHW_SUBST)
			return add_finding(an, v, MOAT_FINDING_ASK, "dynamic-target:kill",
					   "kill signals processes whose ids cannot be known "
					   "before the command runs");
		/* SECURITY: pids read by xargs may be -1 or 1 */
		if ((an->vw[v][i]->flags & MOAT_SHW_EXPAND) && strcmp(argv[i], "$XARGS_INPUT") == 0)
			return add_finding(an, v, MOAT_FINDING_ASK, "dynamic-target:kill",
					   "kill signals processes whose ids cannot be known "
					   "before the command runs");
		/* SECURITY: init dying or told to shut down takes the machine with it */
		if (strcmp(argv[i], "1") == 0 && !harmless_to_init(sig))
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:kill-init",
					   "sends signal %s to init (pid 1)", sig ? sig : "TERM");
	}
	return 0;
}

/* systemctl and loginctl: the options, then the verb */
static size_t ctl_verb(const struct moat_cmdview *view)
{
	const char *const *argv = view->argv;
	size_t i;

	for (i = 1; i < view->argc; i++) {
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
	return i;
}

/* umount of the root filesystem, or of every filesystem (-a): the machine
 * stops working as surely as with a power-off. */
static int check_umount(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	char buf[CMD_PATH_MAX];
	bool opts = true;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (opts && !strcmp(a, "--")) {
			opts = false;
			continue;
		}
		if (opts && is_opt(a)) {
			if (!strcmp(a, "--all") || (a[1] != '-' && strchr(a, 'a')))
				return add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
						   "umount -a detaches every filesystem");
			/* -t TYPES, -O OPTIONS, -N NS take a value */
			if (a[1] != '-' && strlen(a) == 2 && strchr("tON", a[1]))
				i++;
			continue;
		}
		if (abs_path_k(an, vw[i]->flags, a, 0, buf, sizeof(buf)) > 0 && !strcmp(buf, "/"))
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
					   "umount / detaches the root filesystem");
	}
	return 0;
}

static int check_power(struct an *an, size_t v, int kind)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const char *const *argv = view->argv;
	size_t argc = view->argc, i;
	static const char *const verbs[] = {"poweroff", "reboot",	 "halt",
					    "kexec",	"soft-reboot", "rescue", "emergency"};

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
		/* 0 and 6 power off and restart; 1 and S stop everything for
		 * single-user mode */
		if (i < argc && (strcmp(argv[i], "0") == 0 || strcmp(argv[i], "6") == 0 ||
				 strcmp(argv[i], "1") == 0 || strcasecmp(argv[i], "s") == 0))
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
					   "%s %s powers off or restarts the machine", view->prog,
					   argv[i]);
		return 0;
	}
	if (kind == PK_KEXEC) {
		/* kexec -l loads a kernel to jump to, -e jumps: both lead to a reboot */
		static const char *const safe[] = {"-u", "--unload", "-h", "--help", "-v",
						   "--version", "-S", "--status", "-p",
						   "--load-panic", "--print-ckr-size"};

		for (i = 1; i < argc; i++)
			for (size_t k = 0; k < MOAT_ARRAY_SIZE(safe); k++)
				if (strcmp(argv[i], safe[k]) == 0)
					return 0;
		return add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
				   "kexec loads or starts another kernel (a reboot)");
	}
	/* systemctl, loginctl */
	i = ctl_verb(view);
	if (i >= argc)
		return 0;
	{
		static const char *const starts[] = {"start", "isolate", "restart", "try-restart",
						     "reload-or-restart"};
		const char *verb = argv[i];

		for (size_t k = 0; k < MOAT_ARRAY_SIZE(verbs); k++)
			if (strcmp(verb, verbs[k]) == 0)
				return add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
						   "%s %s powers off or restarts the machine",
						   view->prog, verb);
		if (kind == PK_LOGINCTL) {
			/* every process of a user or a session: the agent's too */
			static const char *const kills[] = {"terminate-user", "kill-user",
							    "terminate-session", "kill-session",
							    "terminate-seat"};

			for (size_t k = 0; k < MOAT_ARRAY_SIZE(kills); k++)
				if (!strcmp(verb, kills[k]))
					return add_finding(an, v, MOAT_FINDING_DENY,
							   "hardline:kill-all",
							   "loginctl %s signals every process of a user "
							   "or a session",
							   verb);
			return 0;
		}
		for (size_t k = 0; k < MOAT_ARRAY_SIZE(starts); k++) {
			if (strcmp(verb, starts[k]) != 0)
				continue;
			for (size_t j = i + 1; j < argc; j++) {
				/* runlevel0/1/6.target: power off, single user, reboot */
				if (!strncmp(argv[j], "runlevel", 8) && strchr("016", argv[j][8]) &&
				    argv[j][8] && (!argv[j][9] || !strcmp(argv[j] + 9, ".target")))
					return add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
							   "systemctl %s %s stops the machine or its "
							   "services",
							   verb, argv[j]);
				for (size_t t = 0; t < MOAT_ARRAY_SIZE(verbs); t++) {
					size_t l = strlen(verbs[t]);

					if (strncmp(argv[j], verbs[t], l) == 0 &&
					    (strcmp(argv[j] + l, ".target") == 0 || !argv[j][l]))
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

/* dbus-send, gdbus, busctl, qdbus calling logind's or systemd's power methods */
static int check_dbus(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	static const char *const methods[] = {"PowerOff", "Reboot", "Halt", "KExec", "SoftReboot",
					      "ScheduleShutdown"};
	static const char *const targets[] = {"poweroff.target", "reboot.target", "halt.target",
					      "kexec.target"};
	bool mgr = false;
	const char *hit = NULL;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];
		const char *m = strrchr(a, '.');

		if (strstr(a, "login1") || strstr(a, "systemd1"))
			mgr = true;
		m = m ? m + 1 : a;
		for (size_t k = 0; k < MOAT_ARRAY_SIZE(methods) && !hit; k++) {
			size_t l = strlen(methods[k]);

			if (strncmp(m, methods[k], l) == 0 &&
			    (m[l] == '\0' || strcmp(m + l, "WithFlags") == 0))
				hit = a;
		}
		for (size_t k = 0; k < MOAT_ARRAY_SIZE(targets) && !hit; k++)
			if (strcmp(a, targets[k]) == 0)
				hit = a;
	}
	if (!mgr || !hit)
		return 0;
	return add_finding(an, v, MOAT_FINDING_DENY, "hardline:power",
			   "%s calls %s, which powers off or restarts the machine", view->prog, hit);
}

/* any operand naming a device */
static int check_devices(struct an *an, size_t v, int kind)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	char buf[CMD_PATH_MAX];

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];
		int got;

		for (size_t k = 0; (got = abs_path_k(an, vw[i]->flags, a, k, buf, sizeof(buf))) != 0;
		     k++) {
			if (got < 0)
				continue;
			if (kind == PK_MKFS && strncmp(buf, "/dev/", 5) == 0)
				return add_finding(an, v, MOAT_FINDING_DENY, "hardline:mkfs",
						   "%s creates a file system on %s", view->prog,
						   buf);
			if (kind == PK_WIPE && dev_kind(buf) == DEV_DISK)
				return add_finding(an, v, MOAT_FINDING_DENY, "hardline:disk-wipe",
						   "%s destroys the contents of %s", view->prog,
						   buf);
			if (kind == PK_WIPE && dev_kind(buf) == DEV_MEM)
				return add_finding(an, v, MOAT_FINDING_DENY, "hardline:mem-write",
						   "%s writes over %s, the machine's memory or I/O "
						   "ports",
						   view->prog, buf);
		}
	}
	return 0;
}

/* macOS diskutil's verbs that erase, overwrite or repartition what they
 * name (a disk, a partition, a volume by name or mount point): sub is the
 * verb group ("apfs", "cs", ...) or "" for a top-level verb. Verbs compare
 * without case, as diskutil reads them. */
static const struct {
	const char *sub, *verb;
} diskutil_erase[] = {
	{"", "eraseDisk"},	    {"", "eraseVolume"},	{"", "reformat"},
	{"", "zeroDisk"},	    {"", "randomDisk"},		{"", "secureErase"},
	{"", "partitionDisk"},	    {"", "eraseCD"},		{"", "splitPartition"},
	{"", "mergePartitions"},    {"apfs", "deleteContainer"}, {"apfs", "eraseVolume"},
	{"apfs", "deleteVolume"},   {"apfs", "createContainer"}, {"apfs", "deleteVolumeGroup"},
	{"cs", "delete"},
	{"cs", "deleteVolume"},	    {"appleRAID", "delete"},	{"appleRAID", "create"},
};

/* diskutil's short names for its verb groups */
static const struct {
	const char *alias, *sub;
} diskutil_groups[] = {
	{"apfs", "apfs"}, {"ap", "apfs"}, {"cs", "cs"}, {"coreStorage", "cs"},
	{"appleRAID", "appleRAID"}, {"ar", "appleRAID"},
};

static int check_diskutil(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const char *sub = "", *verb = NULL;
	size_t i = 1;

	while (i < view->argc && is_opt(view->argv[i]))
		i++;
	if (i >= view->argc)
		return 0;
	verb = view->argv[i];
	for (size_t k = 0; k < MOAT_ARRAY_SIZE(diskutil_groups); k++)
		if (!strcasecmp(verb, diskutil_groups[k].alias)) {
			sub = diskutil_groups[k].sub;
			verb = i + 1 < view->argc ? view->argv[i + 1] : "";
			break;
		}
	for (size_t k = 0; k < MOAT_ARRAY_SIZE(diskutil_erase); k++)
		if (!strcmp(sub, diskutil_erase[k].sub) && !strcasecmp(verb, diskutil_erase[k].verb))
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:disk-wipe",
					   "diskutil %s%s%s erases or repartitions what it names",
					   sub, sub[0] ? " " : "", verb);
	return 0;
}

/* Programs whose verb, not an operand, says they wipe a disk (or its
 * partition table): a verb is the first word that is no option, an option
 * ("--security-erase") any word, also as --opt=VALUE. The disk itself may
 * be named in forms the device table does not know (macOS's gpt disk0,
 * asr's volume names): the verb is the floor whatever it names. */
static const struct {
	const char *prog, *verb;
} wipe_verbs[] = {
	{"nvme", "format"},
	{"nvme", "sanitize"},
	{"nvme", "delete-ns"},
	{"nvme", "write-zeroes"},
	{"hdparm", "--security-erase"},
	{"hdparm", "--security-erase-enhanced"},
	{"hdparm", "--trim-sector-ranges"},
	{"hdparm", "--trim-sector-ranges-stdin"},
	{"hdparm", "--write-sector"},
	{"hdparm", "--make-bad-sector"},
	/* macOS */
	{"gpt", "destroy"},
	{"gpt", "create"},
	{"gpt", "remove"},
	{"asr", "--erase"},
};

static int check_wipe_verb(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const char *verb = NULL;

	for (size_t i = 1; i < view->argc && !verb; i++)
		if (!is_opt(view->argv[i]))
			verb = view->argv[i];
	for (size_t k = 0; k < MOAT_ARRAY_SIZE(wipe_verbs); k++) {
		const char *w = wipe_verbs[k].verb;
		size_t wl = strlen(w);

		if (strcmp(view->prog, wipe_verbs[k].prog) != 0)
			continue;
		if (w[0] != '-') {
			if (verb && !strcmp(verb, w))
				return add_finding(an, v, MOAT_FINDING_DENY, "hardline:disk-wipe",
						   "%s %s erases or repartitions what it names",
						   view->prog, w);
			continue;
		}
		for (size_t i = 1; i < view->argc; i++)
			if (!strncmp(view->argv[i], w, wl) &&
			    (!view->argv[i][wl] || view->argv[i][wl] == '='))
				return add_finding(an, v, MOAT_FINDING_DENY, "hardline:disk-wipe",
						   "%s %s erases what it names", view->prog, w);
	}
	return 0;
}

/* The first operand naming a whole disk (or a partition) device, or NULL. */
static const char *disk_operand(struct an *an, size_t v, char *buf, size_t cap)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];
		const char *eq = a[0] == '-' ? strchr(a, '=') : NULL;

		if (a[0] == '-' && !eq)
			continue;
		if (abs_path_k(an, vw[i]->flags, eq ? eq + 1 : a, 0, buf, cap) > 0 &&
		    is_disk_path(buf))
			return buf;
	}
	return NULL;
}

/* A directory files are written into under names not known before
 * running (an archive unpacked, a tree copied into it): the home
 * directory, or one that holds startup files (~/.config, ~/.ssh,
 * /etc/profile.d ...), asks as a startup write. */
/* dir is a directory that holds protected names of its own (".git" holds
 * hooks and config, ".vscode" tasks): the entry's rule into out. */
static bool startup_any_parent(const char *dir, char *out, size_t outsz)
{
	const char *last = strrchr(dir, '/');
	size_t ll;

	if (!last || !last[1])
		return false;
	last++;
	ll = strlen(last);
	for (size_t k = 0; k < MOAT_ARRAY_SIZE(startup_any); k++) {
		const char *e = startup_any[k].tail;

		if (!strncmp(e, last, ll) && e[ll] == '/') {
			join2(out, outsz, last, "/");
			return true;
		}
	}
	return false;
}

static int check_into_dir(struct an *an, size_t v, unsigned flags, const char *dir,
			  const char *what)
{
	char buf[CMD_PATH_MAX], probe[CMD_PATH_MAX], name[CMD_PATH_MAX / 2], rule[64];
	int got;

	for (size_t k = 0; (got = abs_path_k(an, flags, dir, k, buf, sizeof(buf))) != 0; k++) {
		bool hit;

		if (got < 0)
			continue;
		moat_cmd_norm_path(buf);
		hit = an->hlen && strlen(buf) == an->hlen && !strncmp(buf, an->home, an->hlen);
		/* the root, or a directory above the home directory */
		if (!hit && (!strcmp(buf, "/") ||
			     (an->hlen > strlen(buf) && !strncmp(an->home, buf, strlen(buf)) &&
			      an->home[strlen(buf)] == '/'))) {
			hit = true;
			snprintf(name, sizeof(name), "%s%s", buf, strcmp(buf, "/") ? "/" : "");
		}
		/* or a directory above a startup entry (~/.config, /etc) */
		for (size_t e = 0; !hit && e < MOAT_ARRAY_SIZE(startup_home) + MOAT_ARRAY_SIZE(startup_system); e++) {
			bool home = e < MOAT_ARRAY_SIZE(startup_home);
			const char *ent = home ? startup_home[e]
					       : startup_system[e - MOAT_ARRAY_SIZE(startup_home)];
			size_t bl = strlen(buf);

			if (home) {
				if (!an->hlen || bl <= an->hlen || strncmp(buf, an->home, an->hlen) ||
				    buf[an->hlen] != '/')
					continue;
				bl -= an->hlen + 1;
				hit = !strncmp(ent, buf + an->hlen + 1, bl) && ent[bl] == '/';
			} else {
				hit = !strncmp(ent, buf, bl) && ent[bl] == '/';
			}
			if (hit && home)
				snprintf(name, sizeof(name), "~/%.*s/", (int)bl, buf + an->hlen + 1);
			else if (hit)
				snprintf(name, sizeof(name), "%s/", buf);
		}
		if (hit && an->hlen && !strcmp(buf, an->home)) {
			snprintf(name, sizeof(name), "~/");
		} else if (hit) {
			/* (name set above) */
		} else {
			/* a directory that a startup entry ends with "/" names, or below */
			if ((size_t)snprintf(probe, sizeof(probe), "%s/x", buf) >= sizeof(probe) ||
			    (!startup_abs(an->home, an->hlen, probe, name, sizeof(name)) &&
			     !startup_any_parent(buf, name, sizeof(name))))
				continue;
		}
		join2(rule, sizeof(rule), "startup-write:", name);
		return add_finding(an, v, MOAT_FINDING_ASK, rule,
				   "%s writes files whose names are not known before running into "
				   "%s, which holds startup files",
				   what, buf);
	}
	return 0;
}

static bool wrapper_has(const struct moat_cmdview *view, size_t end, const char *o);
static int removal_floor(struct an *an, size_t v, const char *what, size_t i, bool recursive);

/* tar x / unzip: where the archive's files land (-C DIR, -d DIR, else the
 * working directory) */
static int check_unpack(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	bool unzip = !strcmp(view->prog, "unzip"), extract = unzip, listing = false;
	const char *dir = ".";
	unsigned dflags = 0;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (unzip) {
			if (!strcmp(a, "-d") && i + 1 < view->argc) {
				dir = view->argv[i + 1];
				dflags = vw[i + 1]->flags;
				i++;
			} else if (!strcmp(a, "-l") || !strcmp(a, "-t") || !strcmp(a, "-Z") ||
				   !strcmp(a, "-v") || !strcmp(a, "-p")) {
				listing = true;
			}
			continue;
		}
		if (!strcmp(a, "-C") || !strcmp(a, "--directory")) {
			if (i + 1 < view->argc) {
				dir = view->argv[i + 1];
				dflags = vw[i + 1]->flags;
				i++;
			}
		} else if (!strncmp(a, "--directory=", 12)) {
			dir = a + 12;
			dflags = vw[i]->flags & ~(unsigned)MOAT_SHW_TILDE;
			if (dir[0] == '~')
				dflags |= MOAT_SHW_TILDE;
		} else if (!strcmp(a, "--extract") || !strcmp(a, "--get")) {
			extract = true;
		} else if (i == 1 && a[0] != '-' ? strchr(a, 'x') != NULL
			   : (a[0] == '-' && a[1] != '-' && strchr(a, 'x'))) {
			extract = true; /* "xf", "-xzf" */
		}
	}
	/* tar --remove-files: what it archives goes */
	if (!unzip && an->hardline && wrapper_has(view, view->argc, "--remove-files")) {
		bool skip_next = false;

		for (size_t i = 1; i < view->argc; i++) {
			const char *a = view->argv[i];
			int r;

			if (skip_next) {
				skip_next = false;
				continue;
			}
			if (a[0] == '-') {
				skip_next = !strcmp(a, "-f") || !strcmp(a, "-C") || !strcmp(a, "--file");
				continue;
			}
			if (i == 1 && !strchr(a, '/'))
				continue; /* "cf": the mode */
			if ((r = removal_floor(an, v, "tar --remove-files", i, true)))
				return r;
		}
	}
	if (!extract || listing)
		return 0;
	return check_into_dir(an, v, dflags, dir, view->prog);
}

/* awk -i inplace (gawk's in-place edit): the files after the program are
 * rewritten */
static int reparse(struct an *an, const char *text, size_t len, const struct wctx *cx,
		   bool unknown, bool top);
static struct wctx nest_ctx_of(const struct wctx *cx, wref origin, size_t v);
static int note_path(struct an *an, size_t v, unsigned wflags, const char *text, unsigned pflags);

/* Past the blanks (spaces, tabs) of s from i on. */
static size_t skip_blank(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/* A file a sed or awk script names (len bytes at f): noted for the policy,
 * and checked as a write when the script writes it; /dev/stdout and
 * /dev/stderr are the streams. */
static int script_file(struct an *an, size_t v, unsigned fl, const char *f, size_t len, bool write)
{
	char *name;
	int r;

	if (!len)
		return 0;
	name = moat_arena_strndup(an->ar, f, len);
	if (!name)
		return an_oom(an);
	if (!strcmp(name, "/dev/stdout") || !strcmp(name, "/dev/stderr"))
		return 0;
	if ((r = note_path(an, v, fl, name, 0)))
		return r;
	return write ? check_write(an, v, fl, name) : 0;
}

/* An awk string literal starting at s[i] == '"': its text (escapes
 * \" and \\ undone) in the arena, *end past its closing quote; NULL when
 * it does not close (or on no memory: an_oom is the caller's). */
static char *awk_string(struct an *an, const char *s, size_t n, size_t i, size_t *end)
{
	char *out = moat_arena_alloc(an->ar, n - i + 1);
	size_t o = 0;

	if (!out)
		return NULL;
	for (i++; i < n && s[i] != '"'; i++) {
		if (s[i] == '\\' && i + 1 < n && (s[i + 1] == '"' || s[i + 1] == '\\' || s[i + 1] == '/'))
			i++;
		else if (s[i] == '\n')
			return NULL;
		out[o++] = s[i];
	}
	if (i >= n)
		return NULL;
	out[o] = '\0';
	*end = i + 1;
	return out;
}

/* An awk program: what it runs (awk's system function with "CMD", print |
 * "CMD", "CMD" | getline: a literal is analysed as a command, anything else
 * asks) and the files print and printf write (> "FILE", >> "FILE"). Read as
 * text, not parsed: the system function's name and parenthesis inside a
 * string ask too, and a comparison with a string literal ($1 > "x") is
 * taken for a write to x. */
static int awk_program(struct an *an, size_t v, size_t wi, const char *s, const struct wctx *cx)
{
	const wref *vw = an->vw[v];
	unsigned fl = vw[wi]->flags & ~(unsigned)MOAT_SHW_TILDE;
	size_t n = strlen(s);
	int r;

	for (size_t i = 0; i < n; i++) {
		bool sys = !strncmp(s + i, "system", 6) &&
			   (i == 0 || (!isalnum((unsigned char)s[i - 1]) && s[i - 1] != '_'));
		size_t j, end;
		char *lit;

		if (sys) {
			j = skip_blank(s, n, i + 6);
			if (j >= n || s[j] != '(')
				continue;
			j = skip_blank(s, n, j + 1);
		} else if (s[i] == '|' && (i + 1 >= n || s[i + 1] != '|') && (i == 0 || s[i - 1] != '|')) {
			/* print | "CMD", or "CMD" | getline (the literal before) */
			j = i + 1;
			while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '&'))
				j++;
			if (j < n && s[j] != '"') {
				size_t k = i;

				while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t'))
					k--;
				if (k == 0 || s[k - 1] != '"' || strncmp(s + j, "getline", 7))
					continue;
				/* back to the opening quote of "CMD" */
				k--;
				while (k > 0 && !(s[k - 1] == '"' && (k < 2 || s[k - 2] != '\\')))
					k--;
				if (k == 0)
					continue;
				j = k - 1;
			}
		} else if (s[i] == '>') {
			j = skip_blank(s, n, i + 1 + (i + 1 < n && s[i + 1] == '>'));
			if (j >= n || s[j] != '"' || !(lit = awk_string(an, s, n, j, &end)))
				continue;
			if ((r = script_file(an, v, fl, lit, strlen(lit), true)))
				return r;
			i = end - 1;
			continue;
		} else {
			continue;
		}
		if (j >= n || s[j] != '"' || !(lit = awk_string(an, s, n, j, &end))) {
			if (sys)
				return add_finding(an, v, MOAT_FINDING_ASK, "command:dynamic",
						   "awk runs a command made while it runs (system)");
			continue;
		}
		{
			struct wctx c2 = nest_ctx_of(cx, vw[wi], v);
			/* print | "CMD": the command reads what awk prints, input not
			 * known before running (a shell there runs it) */
			bool fed = !sys && s[i] == '|' && j > i;
			size_t ll = strlen(lit);
			char *text = fed ? moat_arena_alloc(an->ar, ll + 8) : lit;

			if (!text)
				return an_oom(an);
			if (fed) {
				memcpy(text, "cat | ", 6);
				memcpy(text + 6, lit, ll + 1);
			}
			if ((r = reparse(an, text, strlen(text), &c2,
					 (vw[wi]->flags & MOAT_SHW_EXPAND) != 0, true)))
				return r;
		}
		if (sys)
			i = end - 1;
	}
	return 0;
}

static int check_awk(struct an *an, size_t v, const struct wctx *cx)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	bool inplace = false, prog_seen = false;
	int r;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (!prog_seen && a[0] == '-' && a[1]) {
			if (((!strcmp(a, "-i") || !strcmp(a, "--include")) && i + 1 < view->argc &&
			     !strcmp(view->argv[i + 1], "inplace")) ||
			    !strcmp(a, "-iinplace") || !strcmp(a, "--include=inplace"))
				inplace = true;
			if (!strcmp(a, "-f") || !strcmp(a, "--file"))
				prog_seen = true;
			if ((!strcmp(a, "-i") || !strcmp(a, "--include") || !strcmp(a, "-v") ||
			     !strcmp(a, "-F") || !strcmp(a, "-f") || !strcmp(a, "--file")) &&
			    i + 1 < view->argc)
				i++;
			continue;
		}
		if (prog_seen && a[0] == '-' && a[1] && !inplace) {
			/* gawk takes options after -f FILE too: -i inplace */
			if ((!strcmp(a, "-i") || !strcmp(a, "--include")) && i + 1 < view->argc &&
			    !strcmp(view->argv[i + 1], "inplace")) {
				inplace = true;
				i++;
			}
			continue;
		}
		if (!prog_seen) {
			prog_seen = true; /* the program text */
			if ((r = awk_program(an, v, i, a, cx)))
				return r;
			continue;
		}
		if (inplace && !strchr(a, '=') && (r = check_write(an, v, vw[i]->flags, a)))
			return r;
	}
	return 0;
}

/* Disk tools whose writing modes destroy a disk: ddrescue's output (its
 * second operand), badblocks -w/-n, cryptsetup luksFormat/erase/
 * reencrypt, mdadm --zero-superblock/--create, mformat -i. */
static int check_disktool(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	const char *prog = view->prog, *first = NULL;
	char buf[CMD_PATH_MAX];
	bool writes = false;
	size_t npos = 0;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (a[0] == '-' && a[1]) {
			if ((!strcmp(prog, "badblocks") && a[1] != '-' &&
			     (strchr(a, 'w') || strchr(a, 'n'))) ||
			    (!strcmp(prog, "mdadm") &&
			     (!strcmp(a, "--zero-superblock") || !strcmp(a, "--create") ||
			      !strcmp(a, "-C"))))
				writes = true;
			if (!strcmp(prog, "mformat") && !strncmp(a, "-i", 2)) {
				const char *img = a[2] ? a + 2 : i + 1 < view->argc ? view->argv[i + 1] : "";

				if (abs_path_k(an, vw[a[2] ? i : i + 1 < view->argc ? i + 1 : i]->flags,
					       img, 0, buf, sizeof(buf)) > 0 &&
				    is_disk_path(buf))
					return add_finding(an, v, MOAT_FINDING_DENY,
							   "hardline:disk-wipe",
							   "mformat writes a file system on %s", buf);
			}
			continue;
		}
		npos++;
		if (npos == 1)
			first = a;
		/* (an option's value counts as a word here: the action is
		 * looked for among all of them) */
		if (!strcmp(prog, "cryptsetup") &&
		    (!strcmp(a, "luksFormat") || !strcmp(a, "erase") || !strcmp(a, "luksErase") ||
		     !strcmp(a, "reencrypt")))
			writes = true;
		if (!strcmp(prog, "ddrescue") && npos == 2 &&
		    abs_path_k(an, vw[i]->flags, a, 0, buf, sizeof(buf)) > 0 && is_disk_path(buf))
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:disk-wipe",
					   "ddrescue writes over %s", buf);
	}
	if (!strcmp(prog, "cryptsetup") && first &&
	    (!strcmp(first, "luksFormat") || !strcmp(first, "erase") ||
	     !strcmp(first, "luksErase") || !strcmp(first, "reencrypt")))
		writes = true;
	if (writes && disk_operand(an, v, buf, sizeof(buf)))
		return add_finding(an, v, MOAT_FINDING_DENY, "hardline:disk-wipe",
				   "%s destroys the contents of %s", prog, buf);
	return 0;
}

/* Keys that make git run a program or read another configuration (the
 * git config command's check: a deny list, so that ordinary settings such
 * as advice.* or color.* stay free; a config file written whole is judged
 * by gitcfg_safe's allow list instead). sub: the key had a subsection. */
static bool git_code_key(const char *sect, bool sub, const char *key)
{
	static const char *const exact[] = {
	    "core.fsmonitor", "core.hookspath", "core.sshcommand", "core.pager", "core.editor",
	    "core.askpass", "core.gitproxy", "core.worktree", "core.alternaterefscommand",
	    "sequence.editor", "diff.external", "credential.helper", "gpg.program",
	    "include.path", "uploadpack.packobjectshook", "web.browser", "ssh.variant",
	    "interactive.difffilter", "sendemail.tocmd", "sendemail.cccmd",
	    "sendemail.smtpserver", "protocol.allow", "init.templatedir", NULL};
	static const char *const any_sub[] = {
	    /* section.*.key */
	    "diff.textconv", "diff.command", "merge.driver", "filter.clean", "filter.smudge",
	    "filter.process", "credential.helper", "gpg.program", "includeif.path",
	    "remote.uploadpack", "remote.receivepack", "remote.vcs", "remote.proxy",
	    "browser.cmd", "browser.path", "man.cmd", "man.path", "mergetool.cmd",
	    "difftool.cmd", "submodule.update", "protocol.allow", "url.insteadof",
	    "url.pushinsteadof", "gpg.defaultkeycommand", NULL};
	char full[160];

	if (!strcmp(sect, "alias") || !strcmp(sect, "pager") || !strcmp(sect, "instaweb"))
		return true;
	snprintf(full, sizeof(full), "%s.%s", sect, key);
	for (size_t i = 0; !sub && exact[i]; i++)
		if (!strcmp(full, exact[i]))
			return true;
	for (size_t i = 0; sub && any_sub[i]; i++)
		if (!strcmp(full, any_sub[i]))
			return true;
	return false;
}

/* git config setting a key that makes git run a program or read another
 * config (core.fsmonitor, core.hooksPath, alias.x = !cmd, include.path,
 * drivers, helpers: every key outside those git writes itself) in the
 * repository's .git/config, ~/.gitconfig (--global) or another file: the
 * next git command there runs it, outside any sandbox. Asked, like a
 * write to a startup file. */
static int check_git_config(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const char *const *argv = view->argv;
	const char *where = ".git/config", *key = NULL;
	size_t i = 1, npos = 0;
	bool set = false, newstyle = false, reading = false;

	/* git's own options, then the command */
	while (i < view->argc && argv[i][0] == '-') {
		const char *o = argv[i];

		i += (!strcmp(o, "-C") || !strcmp(o, "-c") || !strcmp(o, "--git-dir") ||
		      !strcmp(o, "--work-tree") || !strcmp(o, "--namespace"))
			     ? 2
			     : 1;
	}
	if (i >= view->argc || strcmp(argv[i], "config"))
		return 0;
	for (i++; i < view->argc; i++) {
		const char *o = argv[i];

		if (o[0] == '-' && o[1]) {
			if (!strcmp(o, "--global"))
				where = "~/.gitconfig";
			else if (!strcmp(o, "--system"))
				where = "/etc/gitconfig";
			else if (!strcmp(o, "-f") || !strcmp(o, "--file") || !strcmp(o, "--blob") ||
				 !strcmp(o, "--type") || !strcmp(o, "--default") ||
				 !strcmp(o, "--comment") || !strcmp(o, "--value"))
				i++, where = !strcmp(o, "-f") || !strcmp(o, "--file") ? "a git config file"
											: where;
			else if (!strncmp(o, "--get", 5) || !strcmp(o, "-l") || !strcmp(o, "--list") ||
				 !strncmp(o, "--unset", 7) || !strncmp(o, "--remove-section", 16) ||
				 !strncmp(o, "--rename-section", 16))
				reading = true;
			else if (!strcmp(o, "--add") || !strcmp(o, "--replace-all"))
				set = true;
			continue;
		}
		npos++;
		if (npos == 1 && (!strcmp(o, "set") || !strcmp(o, "get") || !strcmp(o, "list") ||
				  !strcmp(o, "unset") || !strcmp(o, "rename-section") ||
				  !strcmp(o, "remove-section") || !strcmp(o, "edit"))) {
			newstyle = true;
			reading = strcmp(o, "set") != 0;
			set = !reading;
			continue;
		}
		if (!key)
			key = o;
		else
			set = true; /* KEY VALUE */
	}
	if (reading || !key || (!set && !newstyle) || (newstyle && !set))
		return 0;
	{
		char sect[64] = "", sub[2] = "", k[64] = "";
		const char *d1 = strchr(key, '.'), *d2 = strrchr(key, '.');
		size_t sl;

		if (!d1 || !d2[1])
			return 0; /* git refuses it */
		sl = (size_t)(d1 - key) < sizeof(sect) - 1 ? (size_t)(d1 - key) : sizeof(sect) - 1;
		for (size_t x = 0; x < sl; x++)
			sect[x] = (char)tolower((unsigned char)key[x]);
		snprintf(k, sizeof(k), "%s", d2 + 1);
		for (char *x = k; *x; x++)
			*x = (char)tolower((unsigned char)*x);
		if (d1 != d2)
			sub[0] = '*';
		if (!git_code_key(sect, sub[0] != '\0', k))
			return 0;
	}
	return add_finding(an, v, MOAT_FINDING_ASK, !strcmp(where, ".git/config")
							? "startup-write:.git/config"
							: !strcmp(where, "~/.gitconfig")
							      ? "startup-write:~/.gitconfig"
							      : "startup-write:git-config",
			   "git config sets %.100s in %s, which may make git run a program or "
			   "read another configuration",
			   key, where);
}

/* The file an output option names (gcc -o F, sort -o F, gpg --output F,
 * go build -o F, pandoc -o F, openssl -out F) and sponge's: a write,
 * checked like a redirection's (disks, the sysrq trigger, startup files).
 * Not for programs whose -o means something else. */
static int check_output_opt(struct an *an, size_t v)
{
	static const char *const other_o[] = {
	    "ssh", "scp", "sftp", "mount", "umount", "ps", "ls", "grep", "egrep", "fgrep", "rg",
	    "tar", "zip", "unzip", "mysql", "top", "free", "df", "du", "xargs", "ip", "ss",
	    "netstat", "lsof", "find", "cp", "mv", "install", "ln", "rsync", "sed", "awk",
	    "gawk", "perl", "python", "python3", "node", "ruby", "php", "java", "nc", "ncat",
	    "socat", "kill", "pkill", "pgrep", "journalctl", "systemctl", "docker", "podman",
	    "kubectl", "helm", "gh", "aws", "gcloud", "az", "jq", "yq", "git", NULL};
	static const char *const cc[] = {"gcc", "g++", "cc", "c++", "clang", "clang++", "tcc",
					 "ld", "as", "gfortran", NULL};
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	bool attached_ok = false, any = false;
	int r;

	/* (most commands give no -o at all: the lists are not looked at) */
	for (size_t i = 1; i < view->argc && !any; i++)
		any = (view->argv[i][0] == '-' && view->argv[i][1] == 'o') ||
		      !strncmp(view->argv[i], "--output", 8);
	if (!any && strcmp(view->prog, "sponge"))
		return 0;
	for (size_t k = 0; other_o[k]; k++)
		if (!strcmp(view->prog, other_o[k]))
			return 0;
	for (size_t k = 0; cc[k]; k++)
		attached_ok = attached_ok || !strcmp(view->prog, cc[k]);
	if (!strcmp(view->prog, "sponge") && view->argc > 1) {
		size_t k = 1;

		while (k < view->argc && view->argv[k][0] == '-')
			k++;
		if (k < view->argc)
			return check_write(an, v, vw[k]->flags, view->argv[k]);
		return 0;
	}
	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i], *val = NULL;
		unsigned fl = 0;

		if ((!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "-out")) &&
		    i + 1 < view->argc && view->argv[i + 1][0] != '-') {
			val = view->argv[i + 1];
			fl = vw[i + 1]->flags;
		} else if (!strncmp(a, "--output=", 9)) {
			val = a + 9;
			fl = vw[i]->flags & ~(unsigned)MOAT_SHW_TILDE;
			if (val[0] == '~')
				fl |= MOAT_SHW_TILDE;
		} else if (attached_ok && !strncmp(a, "-o", 2) && a[2]) {
			val = a + 2;
			fl = vw[i]->flags & ~(unsigned)MOAT_SHW_TILDE;
			if (val[0] == '~')
				fl |= MOAT_SHW_TILDE;
		}
		if (val && (r = check_write(an, v, fl, val)))
			return r;
	}
	return 0;
}

/* The shell commands a git invocation runs itself: -c alias.X='!CMD' (and
 * -c core.fsmonitor/core.sshCommand/core.pager/core.editor=CMD), rebase
 * -x CMD, submodule foreach CMD, bisect run CMD ARGS: read as commands. */
static int suffix(struct an *an, size_t v, size_t i, unsigned flags, const struct wctx *cx,
		  int chain);
static int reparse(struct an *an, const char *text, size_t len, const struct wctx *cx,
		   bool unknown, bool top);
static struct wctx nest_ctx_of(const struct wctx *cx, wref origin, size_t v);
static int reparse_joined(struct an *an, size_t v, size_t i, const struct wctx *cx);
static int reparse_word(struct an *an, size_t v, size_t k, const struct wctx *cx);

/* A git -c KEY=VALUE (or -cKEY=VALUE, --config-env=KEY=VAR): a key whose
 * value git runs as a command is read as one; any other key that makes git
 * run a program or read another configuration (git_code_key) asks. */
static int git_c_value(struct an *an, size_t v, size_t i, const char *kv, bool from_env,
		       const struct wctx *cx)
{
	const wref *vw = an->vw[v];
	const char *eq = strchr(kv, '='), *d1, *d2;
	char key[96], sect[64] = "", last[64] = "";
	size_t kl = eq ? (size_t)(eq - kv) : strlen(kv);

	if (kl >= sizeof(key))
		return add_finding(an, v, MOAT_FINDING_ASK, "command:git-config",
				   "git -c sets a key too long to judge");
	for (size_t k = 0; k < kl; k++)
		key[k] = (char)tolower((unsigned char)kv[k]);
	key[kl] = '\0';
	if (eq && !from_env &&
	    ((!strncmp(key, "alias.", 6) && eq[1] == '!') || !strcmp(key, "core.fsmonitor") ||
	     !strcmp(key, "core.sshcommand") || !strcmp(key, "core.pager") ||
	     !strcmp(key, "core.editor") || !strcmp(key, "sequence.editor") ||
	     !strcmp(key, "diff.external") || !strncmp(key, "pager.", 6))) {
		const char *cmd = eq + 1 + (eq[1] == '!');
		struct wctx c2 = nest_ctx_of(cx, vw[i], v);

		return reparse(an, cmd, strlen(cmd), &c2, (vw[i]->flags & MOAT_SHW_EXPAND) != 0,
			       true);
	}
	d1 = strchr(key, '.');
	if (!d1 || (size_t)(d1 - key) >= sizeof(sect))
		return 0;
	memcpy(sect, key, (size_t)(d1 - key));
	sect[d1 - key] = '\0';
	d2 = strrchr(key, '.');
	snprintf(last, sizeof(last), "%s", d2 + 1);
	/* core.hooksPath=/dev/null turns hooks off: the safer way */
	if (eq && !from_env && !strcmp(key, "core.hookspath") && !strcmp(eq + 1, "/dev/null"))
		return 0;
	if (git_code_key(sect, d1 != d2, last) || (!strcmp(sect, "alias") && (from_env || !eq)))
		return add_finding(an, v, MOAT_FINDING_ASK, "command:git-config",
				   "git -c %.80s makes git run a program or read another "
				   "configuration%s",
				   key, from_env ? " (its value comes from the environment)" : "");
	return 0;
}

/* Options of git subcommands whose value git runs as a shell command. */
static const struct {
	const char *sub, *opt;
	bool joined_only; /* "-Ocmd" only: "-O" alone takes no value */
} git_cmd_opts[] = {
    {"rebase", "-x", false},	      {"rebase", "--exec", false},
    {"difftool", "-x", false},	      {"difftool", "--extcmd", false},
    {"filter-branch", "--tree-filter", false}, {"filter-branch", "--index-filter", false},
    {"filter-branch", "--msg-filter", false}, {"filter-branch", "--env-filter", false},
    {"filter-branch", "--commit-filter", false}, {"filter-branch", "--parent-filter", false},
    {"filter-branch", "--tag-name-filter", false}, {"fetch", "--upload-pack", false},
    {"pull", "--upload-pack", false}, {"ls-remote", "--upload-pack", false},
    {"clone", "--upload-pack", false}, {"clone", "-u", false},
    {"fetch-pack", "--upload-pack", false}, {"push", "--receive-pack", false},
    {"push", "--exec", false},	      {"send-pack", "--receive-pack", false},
    {"archive", "--exec", false},     {"grep", "--open-files-in-pager", false},
    {"grep", "-O", true},	      {"send-email", "--to-cmd", false},
    {"send-email", "--cc-cmd", false}, {"send-email", "--header-cmd", false},
    {"send-email", "--sendmail-cmd", false},
};

/* Options of other programs whose value is a shell command the program
 * runs (tar's --to-command, rsync -e, ssh -o ProxyCommand=, zip -TT, ...):
 * read as commands. eq: "-o" values of the form KEY=CMD, KEY given. */
static const struct {
	const char *prog, *opt, *key;
	bool joined; /* the value may follow the option in the same word */
} prog_cmd_opts[] = {
    {"tar", "--to-command", NULL, true},     {"tar", "--checkpoint-action", "exec", true},
    {"tar", "-I", NULL, true},		       {"tar", "--use-compress-program", NULL, true},
    {"tar", "--rsh-command", NULL, true},    {"tar", "--info-script", NULL, true},
    {"tar", "--new-volume-script", NULL, true}, {"tar", "-F", NULL, false},
    {"zip", "-TT", NULL, false},	       {"zip", "--unzip-command", NULL, true},
    {"rsync", "-e", NULL, true},	       {"rsync", "--rsh", NULL, true},
    {"rsync", "--rsync-path", NULL, true},   {"ssh", "-o", "proxycommand", true},
    {"ssh", "-o", "localcommand", true},     {"ssh", "-o", "knownhostscommand", true},
    {"scp", "-o", "proxycommand", true},     {"sftp", "-o", "proxycommand", true},
    {"scp", "-S", NULL, false},	       {"sftp", "-S", NULL, false},
    {"man", "-P", NULL, true},		       {"man", "--pager", NULL, true},
    {"less", "--lesskey-src", NULL, true},
};

/* path is dir or below it */
static bool path_under(const char *path, const char *dir)
{
	size_t dl = strlen(dir);

	return !strncmp(path, dir, dl) && (path[dl] == '/' || path[dl] == '\0');
}

static int prog_runs(struct an *an, size_t v, const struct wctx *cx)
{
	const struct moat_cmdview *view = &an->a->views[v];
	size_t t0 = 0;
	int r;

	/* (a program of the table at all: its first row) */
	while (t0 < MOAT_ARRAY_SIZE(prog_cmd_opts) &&
	       (view->prog[0] != prog_cmd_opts[t0].prog[0] || strcmp(view->prog, prog_cmd_opts[t0].prog)))
		t0++;
	for (size_t k = 1; k < view->argc && t0 < MOAT_ARRAY_SIZE(prog_cmd_opts); k++) {
		for (size_t t = t0; t < MOAT_ARRAY_SIZE(prog_cmd_opts); t++) {
			const char *opt = prog_cmd_opts[t].opt, *key = prog_cmd_opts[t].key;
			const char *a = view->argv[k], *val = NULL;
			size_t ol = strlen(opt);
			wref w;

			if (view->prog[0] != prog_cmd_opts[t].prog[0] ||
			    strcmp(view->prog, prog_cmd_opts[t].prog))
				continue;
			if (opt[1] == '-' && a[0] == '-' && a[1] == '-') {
				/* a long option by any prefix getopt_long takes
				 * (--to-comm=CMD): at least "--" and three letters */
				size_t al = strcspn(a, "=");

				if (al < 5 || al > ol || strncmp(a, opt, al))
					continue;
				if (a[al] == '=') {
					val = a + al + 1;
					w = an->vw[v][k];
				} else if (k + 1 < view->argc) {
					val = view->argv[k + 1];
					w = an->vw[v][k + 1];
				} else {
					continue;
				}
			} else if (ol == 2 && a[0] == '-' && a[1] != '-' && a[1] != opt[1] &&
				   strchr(a + 1, opt[1])) {
				/* a short option inside a cluster (rsync -avze CMD) */
				const char *at = strchr(a + 1, opt[1]);

				if (at[1] && prog_cmd_opts[t].joined) {
					val = at + 1;
					w = an->vw[v][k];
				} else if (!at[1] && k + 1 < view->argc) {
					val = view->argv[k + 1];
					w = an->vw[v][k + 1];
				} else {
					continue;
				}
			} else if (strncmp(a, opt, ol)) {
				continue;
			} else if (!a[ol] && k + 1 < view->argc) {
				val = view->argv[k + 1];
				w = an->vw[v][k + 1];
			} else if (a[ol] && (prog_cmd_opts[t].joined || opt[1] != '-')) {
				val = a + ol + (a[ol] == '=');
				w = an->vw[v][k];
			} else {
				continue;
			}
			if (key) { /* KEY=CMD (ssh -o), KEY=CMD (tar exec=CMD) */
				size_t kl = strlen(key);

				while (*val == ' ')
					val++;
				if (strncasecmp(val, key, kl) || (val[kl] != '=' && val[kl] != ' '))
					continue;
				val += kl + 1;
			}
			{
				struct wctx c2 = nest_ctx_of(cx, w, v);

				if ((r = reparse(an, val, strlen(val), &c2,
						 (w->flags & MOAT_SHW_EXPAND) != 0, true)))
					return r;
			}
			view = &an->a->views[v];
			break;
		}
	}
	/* containers given the host: a bind of /, the home, a system directory,
	 * /run or docker's own state, --privileged, devices, the host's
	 * namespaces, capabilities that break out, no seccomp or AppArmor; the
	 * docker socket itself (its API is root) */
	if ((!strcmp(view->prog, "docker") || !strcmp(view->prog, "podman") ||
	     !strcmp(view->prog, "nerdctl")) &&
	    view->argc > 1) {
		size_t k = 1;

		/* the subcommand: the first word that is no option */
		while (k < view->argc && view->argv[k][0] == '-')
			k++;
		if (k < view->argc && (!strcmp(view->argv[k], "run") || !strcmp(view->argv[k], "create") ||
				       (!strcmp(view->argv[k], "container") && k + 1 < view->argc &&
					(!strcmp(view->argv[k + 1], "run") ||
					 !strcmp(view->argv[k + 1], "create"))))) {
			for (k++; k < view->argc; k++) {
				const char *a = view->argv[k], *val = NULL, *why = NULL;
				char opt[32], buf[CMD_PATH_MAX];
				size_t ol = strcspn(a, "=");

				if (a[0] != '-' || ol >= sizeof(opt))
					continue;
				memcpy(opt, a, ol);
				opt[ol] = '\0';
				if (a[ol] == '=')
					val = a + ol + 1;
				else if (opt[1] != '-' && strlen(opt) > 2)
					val = a + 2, opt[2] = '\0'; /* -v/x:/y */
				else if (k + 1 < view->argc && strcmp(opt, "--privileged") &&
					 strcmp(opt, "--rm") && strcmp(opt, "-d") && strcmp(opt, "-it") &&
					 strcmp(opt, "-i") && strcmp(opt, "-t"))
					val = view->argv[k + 1];
				if (!strcmp(opt, "--privileged")) {
					if (!val || a[ol] != '=' || strcasecmp(val, "false"))
						why = "--privileged";
				} else if (!val) {
					continue;
				} else if (!strcmp(opt, "--pid") || !strcmp(opt, "--ipc") ||
					   !strcmp(opt, "--userns") || !strcmp(opt, "--cgroupns")) {
					/* (--network host is a way to serve, not a way out) */
					if (!strcasecmp(val, "host"))
						why = "a host namespace";
				} else if (!strcmp(opt, "--cap-add")) {
					static const char *const caps[] = {"ALL", "SYS_ADMIN", "SYS_PTRACE",
									   "SYS_MODULE", "DAC_READ_SEARCH",
									   "SYS_RAWIO", "NET_ADMIN", NULL};
					const char *c = !strncasecmp(val, "CAP_", 4) ? val + 4 : val;

					for (size_t q = 0; caps[q] && !why; q++)
						if (!strcasecmp(c, caps[q]))
							why = "a capability that reaches the host";
				} else if (!strcmp(opt, "--device") || !strcmp(opt, "--device-cgroup-rule")) {
					why = "a host device";
				} else if (!strcmp(opt, "--security-opt")) {
					if (strstr(val, "unconfined") || strstr(val, "no-new-privileges=false"))
						why = "no seccomp or AppArmor";
				} else if (!strcmp(opt, "-v") || !strcmp(opt, "--volume") ||
					   !strcmp(opt, "--mount")) {
					const char *src = val;
					size_t sl;

					if (!strcmp(opt, "--mount")) {
						const char *p2 = strstr(val, "source=");

						if (!p2)
							p2 = strstr(val, "src=");
						if (!p2)
							continue;
						src = strchr(p2, '=') + 1;
						sl = strcspn(src, ",");
					} else {
						sl = strcspn(src, ":");
					}
					if (sl == 0 || sl >= sizeof(buf) / 2)
						continue;
					memcpy(buf, src, sl);
					buf[sl] = '\0';
					if (buf[0] == '.') {
						why = "a relative host path";
					} else if (buf[0] == '/' || buf[0] == '~') {
						int cls;

						if (buf[0] == '~') {
							char t[CMD_PATH_MAX];

							if (snprintf(t, sizeof(t), "%s%s", an->home, buf + 1) >=
							    (int)sizeof(t))
								continue;
							moat_strlcpy(buf, t, sizeof(buf));
						}
						moat_cmd_norm_path(buf);
						/* (a tree of the machine's own, such as
						 * /var/log/app, is given to containers in
						 * honest work) */
						cls = classify_abs(an, false, buf);
						if ((cls != PC_NONE && cls != PC_TREE) ||
						    path_under(buf, "/run") ||
						    path_under(buf, "/var/run") ||
						    path_under(buf, "/var/lib/docker") ||
						    path_under(buf, "/var/lib/containers") ||
						    strstr(buf, "docker.sock") || strstr(buf, "podman.sock"))
							why = buf;
					}
				}
				if (why)
					return add_finding(an, v, MOAT_FINDING_ASK, "command:container-host",
							   "%s run gives the container the host (%.120s)",
							   view->prog, why);
			}
		}
	}
	for (size_t k = 1; k < view->argc; k++)
		if (strstr(view->argv[k], "docker.sock") &&
		    (!strcmp(view->prog, "curl") || !strcmp(view->prog, "socat") ||
		     !strcmp(view->prog, "nc") || !strcmp(view->prog, "ncat")))
			return add_finding(an, v, MOAT_FINDING_ASK, "command:container-host",
					   "%s talks to the docker socket, whose API is root on the host",
					   view->prog);
	/* make --eval TEXT / -E TEXT and a SHELL given on the command line:
	 * recipes run from text that is no file of the project */
	if (!strcmp(view->prog, "make") || !strcmp(view->prog, "gmake")) {
		for (size_t k = 1; k < view->argc; k++) {
			const char *a = view->argv[k];

			static const char *const shells[] = {"/bin/sh",	    "/bin/bash", "/usr/bin/bash",
							     "/bin/dash",   "/bin/zsh",	 "/usr/bin/zsh",
							     "/usr/bin/sh", NULL};
			const char *sv = !strncmp(a, "SHELL=", 6)     ? a + 6
					 : !strncmp(a, "SHELL:=", 7)  ? a + 7
					 : !strncmp(a, "SHELL::=", 8) ? a + 8
					 : !strncmp(a, "SHELL!=", 7)  ? a + 7
					 : !strncmp(a, "SHELL+=", 7)  ? a + 7
								      : NULL;
			bool plain = false;

			for (size_t q = 0; sv && !strncmp(a, "SHELL=", 6) && shells[q]; q++)
				plain |= !strcmp(sv, shells[q]);
			if ((!strncmp(a, "--ev", 4) && a[4] != '\0') || !strncmp(a, "-E", 2) ||
			    (sv && !plain) || !strncmp(a, ".SHELLFLAGS", 11))
				return add_finding(an, v, MOAT_FINDING_ASK, "command:make-eval",
						   "make runs recipes from '%.80s', which no "
						   "makefile of the project holds",
						   a);
		}
	}
	/* cmake -E env [NAME=V...] CMD, cmake -E chdir DIR CMD: they run CMD */
	if (!strcmp(view->prog, "cmake") && view->argc > 3 && !strcmp(view->argv[1], "-E") &&
	    (!strcmp(view->argv[2], "env") || !strcmp(view->argv[2], "chdir") ||
	     !strcmp(view->argv[2], "time"))) {
		size_t k = 3;

		if (!strcmp(view->argv[2], "chdir"))
			k = 4;
		else if (!strcmp(view->argv[2], "env"))
			while (k < view->argc && (view->argv[k][0] == '-' || strchr(view->argv[k], '=')))
				k++;
		if (k < view->argc && (r = reparse_joined(an, v, k, cx)))
			return r;
		view = &an->a->views[v];
	}
	/* cmake -E rm/remove_directory: a removal like rm's */
	if (!strcmp(view->prog, "cmake") && view->argc > 3 && !strcmp(view->argv[1], "-E") &&
	    (!strcmp(view->argv[2], "rm") || !strcmp(view->argv[2], "remove_directory") ||
	     !strcmp(view->argv[2], "remove"))) {
		struct moat_buf b = MOAT_BUF_INIT;
		struct wctx c2 = nest_ctx_of(cx, an->vw[v][2], v);

		moat_buf_puts(&b, strcmp(view->argv[2], "remove") ? "rm -r" : "rm");
		for (size_t k = 3; k < view->argc; k++) {
			const char *a = view->argv[k];

			if (a[0] == '-')
				continue; /* -r -f: the removal is recursive already */
			if (a[strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "0123456789_./~+-")] == '\0') {
				/* plain (a leading ~ stays the home, as the shell gave it) */
				moat_buf_putc(&b, ' ');
				moat_buf_puts(&b, a);
				continue;
			}
			moat_buf_puts(&b, " '");
			for (const char *c = a; *c; c++) {
				if (*c == '\'')
					moat_buf_puts(&b, "'\\''");
				else
					moat_buf_putc(&b, *c);
			}
			moat_buf_putc(&b, '\'');
		}
		r = b.oom ? -ENOMEM : reparse(an, b.data, b.len, &c2, false, true);
		moat_buf_release(&b);
		if (r)
			return r;
	}
	return 0;
}

static int git_runs(struct an *an, size_t v, const struct wctx *cx, int chain)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	size_t i = 1;
	int r;

	while (i < view->argc && view->argv[i][0] == '-') {
		const char *o = view->argv[i];

		if (!strcmp(o, "-c") && i + 1 < view->argc) {
			if ((r = git_c_value(an, v, i + 1, view->argv[i + 1], false, cx)))
				return r;
			view = &an->a->views[v];
			i += 2;
			continue;
		}
		if (o[1] == 'c' && o[2]) { /* -cKEY=VALUE */
			if ((r = git_c_value(an, v, i, o + 2, false, cx)))
				return r;
			view = &an->a->views[v];
			i++;
			continue;
		}
		if (!strncmp(o, "--config-env=", 13) || (!strcmp(o, "--config-env") && i + 1 < view->argc)) {
			const char *kv = o[12] == '=' ? o + 13 : view->argv[++i];

			if ((r = git_c_value(an, v, i, kv, true, cx)))
				return r;
			view = &an->a->views[v];
			i++;
			continue;
		}
		i += (!strcmp(o, "-C") || !strcmp(o, "--git-dir") || !strcmp(o, "--work-tree") ||
		      !strcmp(o, "--namespace"))
			     ? 2
			     : 1;
	}
	if (i >= view->argc)
		return 0;
	for (size_t k = i + 1; k < view->argc; k++) {
		for (size_t t = 0; t < MOAT_ARRAY_SIZE(git_cmd_opts); t++) {
			const char *opt = git_cmd_opts[t].opt, *a = view->argv[k];
			size_t ol = strlen(opt);

			if (strcmp(view->argv[i], git_cmd_opts[t].sub) || strncmp(a, opt, ol))
				continue;
			if (!a[ol] && !git_cmd_opts[t].joined_only && k + 1 < view->argc) {
				if ((r = reparse_word(an, v, k + 1, cx)))
					return r;
			} else if (a[ol] == '=' || (a[ol] && opt[1] != '-')) {
				/* --exec=CMD, -xCMD */
				const char *cmd = a + ol + (a[ol] == '=');
				struct wctx c2 = nest_ctx_of(cx, vw[k], v);

				if ((r = reparse(an, cmd, strlen(cmd), &c2,
						 (vw[k]->flags & MOAT_SHW_EXPAND) != 0, true)))
					return r;
			} else {
				continue;
			}
			view = &an->a->views[v];
			vw = an->vw[v];
			break;
		}
	}
	if (!strcmp(view->argv[i], "rebase"))
		return 0;
	if (!strcmp(view->argv[i], "submodule") && i + 1 < view->argc &&
	    !strcmp(view->argv[i + 1], "foreach")) {
		size_t k = i + 2;

		while (k < view->argc && view->argv[k][0] == '-')
			k++;
		return reparse_joined(an, v, k, cx);
	}
	if (!strcmp(view->argv[i], "bisect") && i + 1 < view->argc &&
	    !strcmp(view->argv[i + 1], "run"))
		return suffix(an, v, i + 2, 0, cx, chain);
	/* git clone -c KEY=VALUE / --config KEY=VALUE writes KEY into the new
	 * repository's .git/config; git init/clone --template=DIR copies hooks */
	if (!strcmp(view->argv[i], "clone") || !strcmp(view->argv[i], "init")) {
		for (size_t k = i + 1; k < view->argc; k++) {
			const char *o = view->argv[k], *kv = NULL;

			if (!strncmp(o, "--template", 10))
				return add_finding(an, v, MOAT_FINDING_ASK, "startup-write:.git/hooks",
						   "git %s --template copies hooks into the new "
						   "repository",
						   view->argv[i]);
			if ((!strcmp(o, "-c") || !strcmp(o, "--config")) && k + 1 < view->argc)
				kv = view->argv[++k];
			else if (!strncmp(o, "--config=", 9))
				kv = o + 9;
			if (kv) {
				const char *eq = strchr(kv, '='), *d1 = strchr(kv, '.'), *d2;
				char sect[64] = "", key[64] = "";
				size_t kl = eq ? (size_t)(eq - kv) : strlen(kv);

				if (!d1 || (size_t)(d1 - kv) >= sizeof(sect) || kl >= sizeof(key) + 64)
					continue;
				for (size_t x = 0; x < (size_t)(d1 - kv); x++)
					sect[x] = (char)tolower((unsigned char)kv[x]);
				d2 = d1;
				for (const char *c = d1; c < kv + kl; c++)
					if (*c == '.')
						d2 = c;
				snprintf(key, sizeof(key), "%.*s", (int)(kv + kl - d2 - 1), d2 + 1);
				for (char *c = key; *c; c++)
					*c = (char)tolower((unsigned char)*c);
				if (git_code_key(sect, d1 != d2, key))
					return add_finding(an, v, MOAT_FINDING_ASK,
							   "startup-write:.git/config",
							   "git %s -c sets %.100s in the new repository's "
							   "configuration, which may make git run a program",
							   view->argv[i], kv);
			}
		}
	}
	return 0;
}

/* Is standard input fed (a pipe, a file, a here-document)? */
static bool stdin_fed(const struct an *an, size_t v, const struct wctx *cx)
{
	return an->a->views[v].feeds_from >= 0 || cx->in.rd != NULL || cx->in.unknown;
}

/* Partition editors on a whole disk: writing a table is the floor; an
 * editor waiting for commands (fdisk, cfdisk, parted without commands) asks. */
static int check_partition(struct an *an, size_t v, int kind, const struct wctx *cx)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const char *const *argv = view->argv;
	char buf[CMD_PATH_MAX];
	const char *disk = disk_operand(an, v, buf, sizeof(buf));
	bool writes = false, readonly = false, cmds = false;

	if (!disk)
		return 0;
	for (size_t i = 1; i < view->argc; i++) {
		const char *a = argv[i];

		if (kind == PK_PARTED) {
			static const char *const w[] = {"mklabel", "mktable", "rm", "mkpart",
							"mkpartfs", "resizepart", "resize", "rescue",
							"move", "cp", "mkfs"};
			size_t l = strcspn(a, " \t");

			if (strcmp(a, "-l") == 0 || strcmp(a, "--list") == 0 ||
			    strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
				readonly = true;
			if (a[0] != '-' && a[0] != '/')
				cmds = true;
			for (size_t k = 0; k < MOAT_ARRAY_SIZE(w); k++)
				if (strlen(w[k]) == l && strncmp(a, w[k], l) == 0)
					writes = true;
			continue;
		}
		if (!is_opt(a))
			continue;
		if (kind == PK_SGDISK) {
			/* anything but printing, verifying or pretending changes the disk */
			if (a[1] == '-') {
				static const char *const ro[] = {"print", "info", "verify",
								 "print-mbr", "list-types",
								 "version", "help",
								 "display-alignment", "pretend",
								 "backup"};
				size_t n = strcspn(a + 2, "=");
				bool ok = false;

				for (size_t k = 0; k < MOAT_ARRAY_SIZE(ro); k++)
					ok |= strlen(ro[k]) == n && strncmp(a + 2, ro[k], n) == 0;
				if (n == 7 && strncmp(a + 2, "pretend", 7) == 0)
					readonly = true;
				writes |= !ok;
			} else {
				if (strchr(a + 1, 'P'))
					readonly = true;
				if (strspn(a + 1, "piOvLV?DPb") != strlen(a + 1))
					writes = true;
				if (strchr("ib", a[strlen(a) - 1]) && !strchr(a + 1, 'P'))
					i++;
			}
		} else if (kind == PK_SFDISK) {
			static const char *const ro[] = {"-l", "--list", "-d", "--dump", "-s",
							 "--show-size", "-g", "--show-geometry",
							 "-V", "--verify", "-J", "--json", "-F",
							 "--list-free", "-n", "--no-act", "-h",
							 "--help", "-v", "--version"};

			for (size_t k = 0; k < MOAT_ARRAY_SIZE(ro); k++)
				readonly |= strcmp(a, ro[k]) == 0;
		} else {
			static const char *const ro[] = {"-l", "--list", "-x", "--list-details",
							 "-h", "--help", "-V", "--version", "-v"};

			for (size_t k = 0; k < MOAT_ARRAY_SIZE(ro); k++)
				readonly |= strcmp(a, ro[k]) == 0;
		}
	}
	if (readonly)
		return 0;
	if (kind == PK_SGDISK && !writes)
		return 0;
	if (kind == PK_SFDISK || kind == PK_SGDISK || writes ||
	    ((kind == PK_FDISK || kind == PK_PARTED) && !cmds && strcmp(view->prog, "cfdisk") &&
	     strcmp(view->prog, "cgdisk") && stdin_fed(an, v, cx)))
		return add_finding(an, v, MOAT_FINDING_DENY, "hardline:disk-wipe",
				   "%s rewrites the partition table of %s", view->prog, disk);
	if (kind == PK_PARTED && cmds)
		return 0;
	return add_finding(an, v, MOAT_FINDING_ASK, "command:disk-partition",
			   "%s edits the partition table of %s", view->prog, disk);
}

/* A file a download writes ("curl -o f URL", "wget URL", "curl URL > f"). */
static int note_file(struct an *an, unsigned flags, const char *text, bool written);

static int note_download(struct an *an, unsigned flags, const char *text)
{
	return note_file(an, flags, text, false);
}

static int note_file(struct an *an, unsigned flags, const char *text, bool written)
{
	char buf[CMD_PATH_MAX];
	struct download *d;

	if (an->ndl >= CMD_MAX_DOWNLOADS || !text[0] || strcmp(text, "-") == 0 ||
	    (flags & MOAT_SHW_EXPAND))
		return 0;
	if (!an->dl && !(an->dl = moat_arena_alloc(an->ar, CMD_MAX_DOWNLOADS * sizeof(*an->dl))))
		return an_oom(an);
	d = &an->dl[an->ndl];
	d->abs = NULL;
	d->written = written;
	if (abs_path_k(an, flags, text, 0, buf, sizeof(buf)) > 0 &&
	    !(d->abs = moat_arena_strndup(an->ar, buf, strlen(buf))))
		return an_oom(an);
	while (text[0] == '.' && text[1] == '/')
		text += 2;
	d->text = text;
	an->ndl++;
	return 0;
}

/* Does this word name a file downloaded earlier in the command? */
static bool is_download(struct an *an, unsigned flags, const char *text)
{
	char buf[CMD_PATH_MAX];
	bool hit = false;
	int got;

	if (!an->ndl || (flags & MOAT_SHW_EXPAND))
		return false;
	got = abs_path_k(an, flags, text, 0, buf, sizeof(buf));
	while (text[0] == '.' && text[1] == '/')
		text += 2;
	an->dl_written = true;
	for (size_t k = 0; k < an->ndl; k++)
		if ((got > 0 && an->dl[k].abs && strcmp(buf, an->dl[k].abs) == 0) ||
		    strcmp(text, an->dl[k].text) == 0) {
			hit = true;
			an->dl_written &= an->dl[k].written;
		}
	return hit;
}

/* (after is_download's match) a script written by the command itself is
 * the hook's concern only: a sandbox confines what it does */
static int ask_download_exec(struct an *an, size_t v, const char *text)
{
	unsigned saved = an->finding_flags;
	int r;

	if (an->dl_written)
		an->finding_flags |= MOAT_FINDING_F_UNSANDBOXED;
	r = add_finding(an, v, MOAT_FINDING_ASK,
			an->dl_written ? "command:written-exec" : "command:download-exec",
			an->dl_written ? "runs %s, which the same command writes first: what it runs "
					 "cannot be checked before running, and no sandbox confines it"
				       : "runs %s, which the same command downloads first: what it "
					 "runs cannot be checked before running",
			text);
	an->finding_flags = saved;
	return r;
}

/* Is view v's input (through pipes) a download? */
static bool fed_by_download(const struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];

	for (int x = view->feeds_first; x >= 0 && x <= view->feeds_from; x++) {
		const char *p = an->a->views[x].prog;

		if (strcmp(p, "curl") == 0 || strcmp(p, "wget") == 0)
			return true;
	}
	return false;
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
	bool done = false, dl = !short_arg[0] && fed_by_download(an, v);
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
		if ((r = check_write(an, v, vw[i]->flags, a)) ||
		    (dl && (r = note_download(an, vw[i]->flags, a))))
			return r;
	}
	return 0;
}

/* rsync's HOST:PATH and rsync:// are not local files */
static bool remote_name(const char *a)
{
	const char *c = strchr(a, ':');

	return c && !memchr(a, '/', (size_t)(c - a));
}

static int removal_floor(struct an *an, size_t v, const char *what, size_t i, bool recursive);

static int check_cp(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	bool rsync = strcmp(view->prog, "rsync") == 0;
	const char *short_arg = strcmp(view->prog, "install") == 0 ? "gmoSt" : rsync ? "efBTM" : "St";
	static const char *const rsync_long[] = {
		"rsh", "filter", "exclude", "include", "exclude-from", "include-from", "files-from",
		"temp-dir", "partial-dir", "compare-dest", "copy-dest", "link-dest", "backup-dir",
		"suffix", "chmod", "chown", "log-file", "password-file", "out-format", "timeout",
		"bwlimit", "max-size", "min-size", "rsync-path", "usermap", "groupmap", "info",
		"debug", "remote-option", "iconv", "address", "port", NULL};
	size_t *ops, nops = 0, tdir = SIZE_MAX, last = SIZE_MAX, total = 0;
	const char *tdir_text = NULL;
	bool done = false, del = false;
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
				if (rsync) {
					if (strncmp(a + 2, "del", 3) == 0)
						del = true; /* --del, --delete-after ... */
					if (!strchr(a, '=') &&
					    in_list(rsync_long, a + 2, strlen(a + 2), false))
						i++;
					continue;
				}
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
		if (rsync && remote_name(tdir_text))
			return 0;
		if ((r = check_write(an, v, vw[tdir]->flags, tdir_text)))
			return r;
		/* SECURITY: rsync --delete SRC/ DEST makes DEST a copy of SRC: what
		 * else DEST holds is removed ("rsync -a --delete empty/ /") */
		if (rsync && del && an->hardline) {
			for (size_t k = 0; k < nops; k++) {
				const char *src = an->a->views[v].argv[ops[k]];
				size_t sl = strlen(src);

				if (sl && (src[sl - 1] == '/' || strcmp(src, ".") == 0 ||
					   (sl > 1 && strcmp(src + sl - 2, "/.") == 0))) {
					r = removal_floor(an, v, "rsync --delete", tdir, true);
					if (r)
						return r;
					break;
				}
			}
		}
	}
	/* mv and rsync --remove-source-files take the sources away: a
	 * floor target moved is removed from its place (mv /usr /tmp) */
	if (an->hardline && (!strcmp(view->prog, "mv") ||
			     (rsync && wrapper_has(view, view->argc, "--remove-source-files")))) {
		for (size_t k = 0; k < nops; k++)
			if ((r = removal_floor(an, v, view->prog, ops[k], true)))
				return r;
	}
	/* a tree's contents into the home directory (cp -r dots/. ~/,
	 * rsync -a dots/ ~/): names not known before running */
	for (size_t k = 0; k < nops; k++) {
		const char *src = an->a->views[v].argv[ops[k]];
		size_t sl = strlen(src);

		if (sl && (!strcmp(src, ".") || (sl > 1 && !strcmp(src + sl - 2, "/.")) ||
			   (rsync && src[sl - 1] == '/') || (vw[ops[k]]->flags & MOAT_SHW_GLOB))) {
			if ((r = check_into_dir(an, v, vw[tdir]->flags, tdir_text, view->prog)))
				return r;
			break;
		}
	}
	/* SECURITY: a copy of a file the same command downloaded is one too
	 * ("curl -o f URL; cp f g; sh g") */
	for (size_t k = 0; an->ndl && k < nops; k++) {
		const char *src = an->a->views[v].argv[ops[k]], *b = strrchr(src, '/');
		int n;

		if (!is_download(an, vw[ops[k]]->flags, src))
			continue;
		if ((r = note_download(an, vw[tdir]->flags, tdir_text)))
			return r;
		b = b ? b + 1 : src;
		n = snprintf(joined, sizeof(joined), "%s/%s", tdir_text, b);
		if (n > 0 && (size_t)n < sizeof(joined)) {
			const char *jd = moat_arena_strndup(an->ar, joined, (size_t)n);

			if (!jd)
				return an_oom(an);
			if ((r = note_download(an, vw[tdir]->flags, jd)))
				return r;
		}
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

static int note_path(struct an *an, size_t v, unsigned wflags, const char *text, unsigned pflags);

/* One sed script (GNU syntax): its commands that run a program (e CMD,
 * e, the s///e flag) or write or read a file (w, W, s///w, r, R). The
 * file names and the command run to the end of their line. A script this
 * scanner cannot follow stops it: sed itself refuses such a script, so
 * nothing of it runs. */
static int sed_script(struct an *an, size_t v, size_t wi, const char *s, const struct wctx *cx)
{
	const wref *vw = an->vw[v];
	unsigned fl = vw[wi]->flags & ~(unsigned)MOAT_SHW_TILDE; /* sed expands no ~ */
	size_t n = strlen(s), i = 0;
	int r;

	while (i < n) {
		char c = s[i], cmd;

		if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '}') {
			i++;
			continue;
		}
		if (c == '#') {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		/* addresses: N, $, N~M, /RE/, \cREc, then ,ADDR or ,+N ,~N; ! */
		for (int k = 0; k < 2 && i < n; k++) {
			if (s[i] == '$') {
				i++;
			} else if (s[i] >= '0' && s[i] <= '9') {
				while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '~'))
					i++;
			} else if (s[i] == '/' || s[i] == '\\') {
				char d = s[i] == '\\' ? (i + 1 < n ? s[i + 1] : '\0') : '/';

				i += s[i] == '\\' ? 2 : 1;
				while (i < n && s[i] != d && s[i] != '\n')
					i += s[i] == '\\' ? 2 : 1;
				if (i >= n || s[i] != d)
					return 0;
				i++;
				while (i < n && (s[i] == 'I' || s[i] == 'M'))
					i++;
			} else if (k == 1 && (s[i] == '+' || s[i] == '~')) {
				i++;
				while (i < n && s[i] >= '0' && s[i] <= '9')
					i++;
			}
			i = skip_blank(s, n, i);
			if (k == 0 && i < n && s[i] == ',') {
				i = skip_blank(s, n, i + 1);
				continue;
			}
			break;
		}
		while (i < n && (s[i] == '!' || s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i >= n)
			break;
		cmd = s[i++];
		switch (cmd) {
		case '{':
		case '=': case 'd': case 'D': case 'g': case 'G': case 'h': case 'H':
		case 'n': case 'N': case 'p': case 'P': case 'x': case 'z': case 'F':
			break;
		case 'q': case 'Q': case 'l': case 'L':
			while (i < n && (s[i] == ' ' || (s[i] >= '0' && s[i] <= '9')))
				i++;
			break;
		case ':': case 'b': case 't': case 'T': case 'v':
			while (i < n && s[i] != '\n' && s[i] != ';')
				i++;
			break;
		case 'a': case 'i': case 'c':
			/* text to the end of the line, lines ending in \ go on */
			while (i < n && s[i] != '\n')
				i += s[i] == '\\' ? 2 : 1;
			break;
		case 'e': case 'w': case 'W': case 'r': case 'R': {
			size_t b, e;

			b = i = skip_blank(s, n, i);
			while (i < n && s[i] != '\n')
				i++;
			e = i;
			if (cmd == 'e' && b == e)
				return add_finding(an, v, MOAT_FINDING_ASK, "command:dynamic",
						   "sed runs its input as a command (e)");
			if (cmd == 'e') {
				struct wctx c2 = nest_ctx_of(cx, vw[wi], v);

				if ((r = reparse(an, s + b, e - b, &c2,
						 (vw[wi]->flags & MOAT_SHW_EXPAND) != 0, true)))
					return r;
				break;
			}
			if ((r = script_file(an, v, fl, s + b, e - b, cmd == 'w' || cmd == 'W')))
				return r;
			break;
		}
		case 's': case 'y': {
			char d = i < n ? s[i] : '\0';

			if (!d || d == '\n' || d == '\\')
				return 0;
			i++;
			for (int part = 0; part < 2; part++) {
				while (i < n && s[i] != d)
					i += s[i] == '\\' ? 2 : 1;
				if (i >= n)
					return 0;
				i++;
			}
			if (cmd == 'y')
				break;
			/* flags: g p i I m M NUMBER, e (run), w FILE (to the line's end) */
			while (i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}') {
				if (s[i] == 'e')
					return add_finding(an, v, MOAT_FINDING_ASK, "command:dynamic",
							   "sed runs the text it made as a command "
							   "(s///e)");
				if (s[i] == 'w') {
					size_t b = i = skip_blank(s, n, i + 1);

					while (i < n && s[i] != '\n')
						i++;
					if ((r = script_file(an, v, fl, s + b, i - b, true)))
						return r;
					break;
				}
				i++;
			}
			break;
		}
		default:
			return 0; /* sed refuses an unknown command */
		}
	}
	return 0;
}

/* The scripts of a sed command: -e SCRIPT (in a cluster too: -ne), -eSCRIPT,
 * --expression[=]SCRIPT, else the first operand; --sandbox (GNU) refuses
 * e, w and r itself. -f FILE's script is not known here. */
static int sed_scripts(struct an *an, size_t v, const struct wctx *cx)
{
	const struct moat_cmdview *view = &an->a->views[v];
	bool given = false, file = false;
	size_t first = 0;
	int r;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (!strcmp(a, "--")) {
			if (i + 1 < view->argc && !first)
				first = i + 1;
			break;
		}
		if (!is_opt(a)) {
			if (!first)
				first = i;
			continue;
		}
		if (a[1] == '-') {
			if (long_is(a + 2, "sandbox", 3))
				return 0;
			if (long_is(a + 2, "expression", 1)) {
				given = true;
				if (strchr(a, '=')) {
					if ((r = sed_script(an, v, i, strchr(a, '=') + 1, cx)))
						return r;
				} else if (i + 1 < view->argc) {
					if ((r = sed_script(an, v, i + 1, view->argv[i + 1], cx)))
						return r;
					i++;
				}
			} else if (long_is(a + 2, "file", 1)) {
				file = true;
				i += !strchr(a, '=');
			} else if (long_is(a + 2, "line-length", 1) && !strchr(a, '=')) {
				i++;
			}
			continue;
		}
		for (size_t k = 1; a[k]; k++) {
			if (a[k] == 'i')
				break; /* the rest is the backup suffix */
			if (a[k] == 'e' || a[k] == 'f' || a[k] == 'l') {
				const char *val = a[k + 1] ? a + k + 1 : i + 1 < view->argc ? view->argv[i + 1] : NULL;
				size_t wi = a[k + 1] ? i : i + 1;

				if (!a[k + 1])
					i++;
				if (a[k] == 'e' && val) {
					given = true;
					if ((r = sed_script(an, v, wi, val, cx)))
						return r;
				}
				file |= a[k] == 'f';
				break;
			}
		}
	}
	if (!given && !file && first)
		return sed_script(an, v, first, view->argv[first], cx);
	return 0;
}

static int check_sed(struct an *an, size_t v, const struct wctx *cx)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	bool inplace = false, script_opt = false, have_script, done = false;
	int r;

	if ((r = sed_scripts(an, v, cx)))
		return r;

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

/* The file name curl -O and wget give a URL's download. */
static const char *url_basename(struct an *an, const char *u, const char *dir)
{
	const char *p = strstr(u, "://");
	const char *e, *b;
	char *out;
	size_t n, dl = dir ? strlen(dir) : 0;

	p = p ? p + 3 : u;
	e = p + strcspn(p, "?#");
	b = e;
	while (b > p && b[-1] != '/')
		b--;
	if (b == p) /* no path: the host alone */
		b = e;
	n = (size_t)(e - b);
	if (n == 0) {
		b = "index.html";
		n = 10;
	}
	out = moat_arena_alloc(an->ar, dl + n + 2);
	if (!out)
		return NULL;
	if (dl) {
		memcpy(out, dir, dl);
		out[dl++] = '/';
	}
	memcpy(out + dl, b, n);
	out[dl + n] = '\0';
	return out;
}

/* curl -o/-D/-c FILE, wget -O/-o/-a FILE; downloads are remembered. */
static int check_fetch(struct an *an, size_t v, bool wget)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	const char *args = wget ? "OoaeiBtTwQPUY" : "AbcCdDeEFHKmoPQrTtuUwxXyYz";
	const char *outs = wget ? "Ooa" : "oDc";
	static const char *const curl_long[] = {"output", "dump-header", "cookie-jar", "trace",
						"trace-ascii", "stderr", "libcurl"};
	static const char *const wget_long[] = {"output-document", "output-file", "append-output"};
	static const char *const skip_long[] = {"directory-prefix", "header", "user-agent",
						"data", "user", "referer", "proxy", "url", NULL};
	bool named = false, remote = false; /* an output file given; curl -O */
	const char *prefix = NULL;
	int r;

	/* curl --output-dir DIR: where -o NAME and -O write (seen first: it
	 * may come after them) */
	for (size_t i = 1; !wget && i < view->argc; i++) {
		const char *a = view->argv[i];

		if (!strncmp(a, "--output-dir=", 13))
			prefix = a + 13;
		else if (!strcmp(a, "--output-dir") && i + 1 < view->argc)
			prefix = view->argv[i + 1];
	}
	for (size_t i = 1; i < view->argc; i++) {
		const char *a = an->a->views[v].argv[i];

		if (!is_opt(a) || strcmp(a, "--") == 0)
			continue;
		if (a[1] == '-') {
			const char *const *l = wget ? wget_long : curl_long;
			size_t nl = wget ? MOAT_ARRAY_SIZE(wget_long) : MOAT_ARRAY_SIZE(curl_long);
			const char *eq = strchr(a, '=');
			size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			bool found = false;

			if (!wget && (long_is(a + 2, "remote-name", 8) ||
				      long_is(a + 2, "remote-name-all", 12)))
				remote = true;
			if ((wget && long_is(a + 2, "directory-prefix", 3)) ||
			    (!wget && long_is(a + 2, "output-dir", 8))) {
				prefix = eq ? eq + 1 : i + 1 < view->argc ? view->argv[i + 1] : NULL;
				if (!wget && !eq)
					i++;
				continue;
			}
			for (size_t k = 0; k < nl; k++) {
				const char *val = NULL;
				unsigned fl = 0;

				if (strlen(l[k]) != n || strncmp(a + 2, l[k], n) != 0)
					continue;
				found = true;
				if (eq) {
					val = eq + 1;
					fl = vw[i]->flags & ~(unsigned)MOAT_SHW_TILDE;
				} else if (i + 1 < view->argc) {
					i++;
					val = an->a->views[v].argv[i];
					fl = vw[i]->flags;
				}
				if (val && !wget && prefix && val[0] != '/' && val[0] != '~' &&
				    !(fl & MOAT_SHW_EXPAND)) {
					size_t jl = strlen(prefix) + strlen(val) + 2;
					char *j = moat_arena_alloc(an->ar, jl);

					if (!j)
						return an_oom(an);
					snprintf(j, jl, "%s/%s", prefix, val);
					val = j;
					if (prefix[0] == '~')
						fl |= MOAT_SHW_TILDE;
				}
				if (val && (r = check_write(an, v, fl, val)))
					return r;
				if (val && k == 0) {
					named = true;
					if ((r = note_download(an, fl, val)))
						return r;
				}
				break;
			}
			if (!found && !eq && n && in_list(skip_long, a + 2, n, false))
				i++;
			continue;
		}
		for (size_t k = 1; a[k]; k++) {
			if (!wget && a[k] == 'O')
				remote = true;
			if (!strchr(args, a[k]))
				continue;
			if (wget && a[k] == 'P')
				prefix = a[k + 1] ? a + k + 1 : i + 1 < view->argc ? view->argv[i + 1] : NULL;
			if (strchr(outs, a[k])) {
				const char *val = NULL;
				unsigned fl = 0;

				if (a[k + 1]) {
					val = a + k + 1;
					fl = vw[i]->flags & ~(unsigned)MOAT_SHW_TILDE;
				} else if (i + 1 < view->argc) {
					val = an->a->views[v].argv[i + 1];
					fl = vw[i + 1]->flags;
				}
				if (val && !wget && a[k] == 'o' && prefix && val[0] != '/' &&
				    val[0] != '~' && !(fl & MOAT_SHW_EXPAND)) {
					size_t jl = strlen(prefix) + strlen(val) + 2;
					char *j = moat_arena_alloc(an->ar, jl);

					if (!j)
						return an_oom(an);
					snprintf(j, jl, "%s/%s", prefix, val);
					val = j;
					if (prefix[0] == '~')
						fl |= MOAT_SHW_TILDE;
				}
				if (val && (r = check_write(an, v, fl, val)))
					return r;
				if (val && a[k] == outs[0]) {
					named = true;
					if ((r = note_download(an, fl, val)))
						return r;
				}
			}
			if (!a[k + 1])
				i++;
			break;
		}
	}
	/* the name the server's URL gives: wget by default, curl -O */
	if (!named && (wget || remote)) {
		for (size_t i = 1; i < view->argc; i++) {
			const char *a = an->a->views[v].argv[i];
			const char *name;

			if (is_opt(a)) {
				if (a[1] != '-' && strchr(args, a[strlen(a) - 1]))
					i++;
				continue;
			}
			if (!strstr(a, "://") && !strchr(a, '/'))
				continue;
			name = url_basename(an, a, prefix);
			if (!name)
				return an_oom(an);
			if ((r = note_download(an, vw[i]->flags, name)))
				return r;
			/* the file it writes (wget -P ~ URL/.bashrc, curl
			 * --output-dir ~ -O URL/.bashrc) */
			if ((r = check_write(an, v,
					     (vw[i]->flags & ~(unsigned)(MOAT_SHW_GLOB | MOAT_SHW_EXPAND)) |
						 (name[0] == '~' ? MOAT_SHW_TILDE : 0),
					     name)))
				return r;
		}
	}
	return 0;
}

/* perl -i / ruby -i: the files after the script are rewritten in place */
static int check_inplace(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	bool inplace = false, code = false;
	size_t i = 1;
	int r;

	for (; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (!is_opt(a))
			break;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[1] == '-')
			continue;
		for (size_t k = 1; a[k]; k++) {
			if (a[k] == 'i') {
				inplace = true;
				break; /* the rest is a backup suffix */
			}
			if (a[k] == 'e' || a[k] == 'E') {
				code = true;
				if (!a[k + 1])
					i++;
				break;
			}
			if (strchr("IMmrC", a[k])) {
				if (!a[k + 1])
					i++;
				break;
			}
		}
	}
	if (!inplace)
		return 0;
	if (!code)
		i++; /* the script file */
	for (; i < view->argc; i++)
		if ((r = check_write(an, v, vw[i]->flags, view->argv[i])))
			return r;
	return 0;
}

/* crontab FILE, crontab - (and crontab fed on its input) installs a schedule */
static int check_crontab(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (strcmp(a, "-l") == 0 || strcmp(a, "-r") == 0 || strcmp(a, "-h") == 0 ||
		    strcmp(a, "-V") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "--version") == 0)
			return 0;
		if (strcmp(a, "-u") == 0 || strcmp(a, "-s") == 0)
			i++;
	}
	return add_finding(an, v, MOAT_FINDING_ASK, "startup-write:crontab",
			   "crontab installs commands that run later on a schedule");
}

/* A removal of the whole of a floor target (the root, a system directory, a
 * home) by another program than rm: the same hardline. */
static int removal_floor(struct an *an, size_t v, const char *what, size_t i, bool recursive)
{
	char hit[CMD_PATH_MAX];
	const char *a = an->a->views[v].argv[i];
	bool unknown;
	int cls = classify_word(an, &an->a->views[v], an->vw[v][i], a, hit, sizeof(hit), &unknown);

	if (cls == PC_ROOT)
		return add_finding(an, v, MOAT_FINDING_DENY, "hardline:rm-root",
				   "%s removes the root directory (%s)", what, a);
	if (cls == PC_SYSTEM || cls == PC_TREE)
		return add_finding(an, v, MOAT_FINDING_DENY, "hardline:rm-system",
				   "%s removes the system directory %s", what, hit);
	if (cls == PC_HOME)
		return add_finding(an, v, MOAT_FINDING_DENY, "hardline:rm-home",
				   "%s removes the home directory (%s)", what, a);
	if (unknown && recursive)
		return ask_dynamic(an, v, an->a->views[v].prog, a);
	return 0;
}

/* gio trash FILE...: moves whole trees away, as rm -r does */
static int check_gio(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	bool done = false;
	int r;

	if (view->argc < 3 || strcmp(view->argv[1], "trash") != 0)
		return 0;
	for (size_t i = 2; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (!done && strcmp(a, "--") == 0) {
			done = true;
			continue;
		}
		if (!done && is_opt(a)) {
			if (strcmp(a, "--empty") == 0 || strcmp(a, "--list") == 0 ||
			    strcmp(a, "--restore") == 0)
				return 0;
			continue;
		}
		if ((r = removal_floor(an, v, "gio trash", i, true)))
			return r;
	}
	return 0;
}

/* a pattern (extended regular expression, unanchored) every process name
 * matches: "", ".", ".*", "^.+$" ... */
/* Does the extended regular expression p (as pkill compiles it) match
 * every process name, judged on names of every shape (and the empty one:
 * a pattern that matches it matches anywhere in any name)? exact: whole
 * names (-x). */
static bool regex_matches_all(const char *p, bool exact)
{
	static const char *const names[] = {"systemd", "init", "bash", "sh", "sshd",
					    "Xorg", "kworker/0:1", "python3", "node", "a",
					    "Z", "0", "moat"};
	char anchored[512];
	regex_t re;
	bool all = true;

	if (exact) {
		if ((size_t)snprintf(anchored, sizeof(anchored), "^(%s)$", p) >= sizeof(anchored))
			return false;
		p = anchored;
	}
	if (regcomp(&re, p, REG_EXTENDED | REG_NOSUB) != 0)
		return false;
	if (!exact && regexec(&re, "", 0, NULL, 0) == 0) {
		regfree(&re);
		return true;
	}
	for (size_t i = 0; all && i < MOAT_ARRAY_SIZE(names); i++)
		all = regexec(&re, names[i], 0, NULL, 0) == 0;
	regfree(&re);
	return all;
}

static bool match_all_regex(const char *p, bool exact)
{
	size_t n = strlen(p);

	if (regex_matches_all(p, exact))
		return true;

	if (n && p[0] == '^')
		p++, n--;
	if (n && p[n - 1] == '$' && (n < 2 || p[n - 2] != '\\'))
		n--;
	if (n == 2 && p[0] == '.' && p[1] == '*')
		return true;
	if (n == 4 && memcmp(p, "(.*)", 4) == 0)
		return true;
	if (exact)
		return false;
	return n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '+');
}

/* SECURITY: pkill or killall with a pattern matching every process is
 * "kill -1": the session, the desktop and the agent itself */
static int check_pkill(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	bool killall = strcmp(view->prog, "killall") == 0, regex = !killall, exact = false;
	bool done = false, listed = false, by_user = false, named = false;
	const char *arg = killall ? "suoynZ" : "dgGPstuUFq";
	static const char *const larg[] = {"signal", "user", "older-than", "younger-than", "ns",
					   "nslist", "group", "parent", "session", "terminal",
					   "pidfile", "context", "euid", "uid", "pgroup", NULL};
	static const char sigch[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-";

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];
		size_t n = strlen(a);

		if (!done && strcmp(a, "--") == 0) {
			done = true;
			continue;
		}
		if (!done && is_opt(a)) {
			if (a[1] == '-') {
				if (long_is(a + 2, "inverse", 3) && !killall)
					return add_finding(an, v, MOAT_FINDING_DENY, "hardline:kill-all",
							   "%s --inverse signals every process but those matched",
							   view->prog);
				if (long_is(a + 2, "regexp", 3))
					regex = true;
				else if (long_is(a + 2, "exact", 3))
					exact = true;
				else if (long_is(a + 2, "list", 1))
					listed = true;
				else if (!strchr(a, '=') && in_list(larg, a + 2, strlen(a + 2), true))
					i++;
				/* selectors that name a whole set of processes */
				if (long_is(a + 2, "user", 2) || long_is(a + 2, "euid", 2) ||
				    long_is(a + 2, "uid", 2) || long_is(a + 2, "group", 2) ||
				    long_is(a + 2, "session", 2) || long_is(a + 2, "terminal", 2) ||
				    long_is(a + 2, "pgroup", 2))
					by_user = true;
				if (long_is(a + 2, "parent", 2)) {
					const char *pv = strchr(a, '=') ? strchr(a, '=') + 1
						       : i < view->argc ? view->argv[i] : "";

					by_user |= !strcmp(pv, "1"); /* init's children */
				}
				continue;
			}
			/* -9, -KILL, -SIGTERM: a signal */
			if (n > 2 && strspn(a + 1, sigch) == n - 1)
				continue;
			if (a[1] >= '0' && a[1] <= '9')
				continue;
			for (size_t k = 1; a[k]; k++) {
				if (a[k] == 'r' && killall)
					regex = true;
				if (a[k] == 'x' && !killall)
					exact = true;
				if (a[k] == 'e' && killall)
					exact = true;
				if (a[k] == 'l')
					listed = true;
				/* -v: every process but the ones named */
				if (a[k] == 'v' && !killall && !listed)
					return add_finding(an, v, MOAT_FINDING_DENY,
							   "hardline:kill-all",
							   "%s -v signals every process but those "
							   "matched",
							   view->prog);
				if (a[k] == 'u' ||
				    (!killall && (a[k] == 'U' || a[k] == 'G' || a[k] == 'g' ||
						  a[k] == 's' || a[k] == 't')))
					by_user = true;
				if (a[k] == 'P' && !killall) {
					const char *pv = a[k + 1]	      ? a + k + 1
							 : i + 1 < view->argc ? view->argv[i + 1]
									      : "";

					by_user |= !strcmp(pv, "1"); /* init's children */
				}
				if (strchr(arg, a[k])) {
					if (!a[k + 1])
						i++;
					break;
				}
			}
			continue;
		}
		named = true;
		if (!(an->vw[v][i]->flags & MOAT_SHW_EXPAND) && regex && !listed &&
		    match_all_regex(a, exact && !killall))
			return add_finding(an, v, MOAT_FINDING_DENY, "hardline:kill-all",
					   "%s '%s' signals every process", view->prog, a);
	}
	/* pkill -u USER, killall -u USER: every process of the user (the
	 * session, the agent) */
	if (by_user && !named && !listed)
		return add_finding(an, v, MOAT_FINDING_DENY, "hardline:kill-all",
				   "%s with a user and no name signals every process of that user",
				   view->prog);
	return 0;
}

static bool is_dev_stdin(const char *p);
static int mark_stdin(struct an *an, size_t v, const struct wctx *cx, bool shell);

/* SECURITY: the words of a checked program that come from "$@" or an array
 * ("a=(-R 000 /); chmod "${a[@]}"", "set -- -rf /; rm "$@"") are several
 * words, options among them, whose values are not known here: ask. */
static int check_many_words(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];

	if (view->flags & MOAT_VIEW_VALUES)
		return 0; /* the values are known: this view holds them */
	for (size_t i = 1; i < view->argc; i++) {
		if (!(vw[i]->flags & MOAT_SHW_EXPAND) || (vw[i]->flags & CMD_W_ELSEWHERE))
			continue;
		for (const struct moat_sh_span *sp = vw[i]->spans; sp; sp = sp->next) {
			char rule[64];

			/* (after a name reference, "$n" may be an array's words) */
			if (!span_many(vw[i]->text + sp->off, sp->len) &&
			    !(an->untracked && sp->kind == MOAT_SH_SPAN_PARAM))
				continue;
			join2(rule, sizeof(rule), "dynamic-args:", view->prog);
			return add_finding(an, v, MOAT_FINDING_ASK, rule,
					   "%s gets several words from '%.*s' (options and targets "
					   "among them), whose values cannot be known before the "
					   "command runs",
					   view->prog, (int)sp->len, vw[i]->text + sp->off);
		}
	}
	return 0;
}

static int check_view(struct an *an, size_t v, int kind, const struct wctx *cx)
{
	bool h = an->hardline;

	switch (kind) {
	case PK_MKFS: case PK_DD: case PK_WIPE: case PK_KILL: case PK_CHMOD: case PK_CHOWN:
	case PK_FIND: case PK_TRUNCATE: case PK_SGDISK: case PK_SFDISK: case PK_FDISK:
	case PK_PARTED: case PK_RSYNC: case PK_PKILL: case PK_DISKTOOL: case PK_UNPACK:
	case PK_CP: case PK_KILLALL5: case PK_SYSTEMCTL: case PK_POWER: case PK_DISKUTIL:
	case PK_WIPEVERB: {
		int r = h ? check_many_words(an, v) : 0;

		if (r)
			return r;
		break;
	}
	default:
		break;
	}
	switch (kind) {
	case PK_RM:
		return h ? check_rm(an, v) : 0;
	case PK_FIND:
		return h ? check_find(an, v) : 0;
	case PK_MKFS:
	case PK_WIPE:
		return h ? check_devices(an, v, kind) : 0;
	case PK_SYSTEMCTL: {
		/* a unit enabled or linked starts again at boot or login, outside
		 * any sandbox: a startup write */
		const struct moat_cmdview *sv = &an->a->views[v];
		size_t vi = ctl_verb(sv);
		int r2;

		if (vi < sv->argc &&
		    (!strcmp(sv->argv[vi], "enable") || !strcmp(sv->argv[vi], "link") ||
		     !strcmp(sv->argv[vi], "reenable") || !strcmp(sv->argv[vi], "add-wants") ||
		     !strcmp(sv->argv[vi], "add-requires") || !strcmp(sv->argv[vi], "edit") ||
		     !strcmp(sv->argv[vi], "preset")) &&
		    (r2 = add_finding(an, v, MOAT_FINDING_ASK, "startup-write:systemd-unit",
				      "systemctl %s makes a unit start at boot or login",
				      sv->argv[vi])))
			return r2;
		return h ? check_power(an, v, kind) : 0;
	}
	case PK_POWER:
	case PK_INIT:
	case PK_LOGINCTL:
	case PK_KEXEC:
		return h ? check_power(an, v, kind) : 0;
	case PK_UMOUNT:
		return h ? check_umount(an, v) : 0;
	case PK_DBUS:
		return h ? check_dbus(an, v) : 0;
	case PK_SGDISK:
	case PK_SFDISK:
	case PK_FDISK:
	case PK_PARTED:
		return h ? check_partition(an, v, kind, cx) : 0;
	case PK_KILL:
		return h ? check_kill(an, v) : 0;
	case PK_KILLALL5:
		return h ? add_finding(an, v, MOAT_FINDING_DENY, "hardline:kill-all",
				       "killall5 signals every process")
			 : 0;
	case PK_CHMOD:
		return check_chmod(an, v, false);
	case PK_CHOWN:
		return h ? check_chmod(an, v, true) : 0;
	case PK_DD:
		return check_dd(an, v);
	case PK_TEE:
		return check_tee(an, v, "");
	case PK_TRUNCATE:
		return check_tee(an, v, "sr");
	case PK_CP:
	case PK_RSYNC:
		return check_cp(an, v);
	case PK_SED:
		return check_sed(an, v, cx);
	case PK_CURL:
		return check_fetch(an, v, false);
	case PK_WGET:
		return check_fetch(an, v, true);
	case PK_CRONTAB:
		return check_crontab(an, v);
	case PK_GIO:
		return h ? check_gio(an, v) : 0;
	case PK_PKILL:
		return h ? check_pkill(an, v) : 0;
	case PK_DISKTOOL:
		return h ? check_disktool(an, v) : 0;
	case PK_DISKUTIL:
		return h ? check_diskutil(an, v) : 0;
	case PK_WIPEVERB:
		return h ? check_wipe_verb(an, v) : 0;
	case PK_UNPACK:
		return check_unpack(an, v);
	case PK_AWK:
		return check_awk(an, v, cx);
	case PK_MAKE:
		/* make -f -: the Makefile (its recipes run) comes on standard input */
		for (size_t k = 1; k < an->a->views[v].argc; k++) {
			const char *o = an->a->views[v].argv[k];

			if (((!strcmp(o, "-f") || !strcmp(o, "--file") || !strcmp(o, "--makefile")) &&
			     k + 1 < an->a->views[v].argc &&
			     (!strcmp(an->a->views[v].argv[k + 1], "-") ||
			      is_dev_stdin(an->a->views[v].argv[k + 1]))) ||
			    !strcmp(o, "-f-") || !strcmp(o, "--file=-") || !strcmp(o, "--makefile=-"))
				return mark_stdin(an, v, cx, true);
		}
		return 0;
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

		struct state saved;

		if (c.depth > MOAT_CMD_MAX_DEPTH)
			return an_fail(an, cx->nested ? cx->eoff : s->off,
				       "substitutions nested too deep", NULL);
		/* a subshell: what it changes stays there */
		saved = st_save(an);
		if ((r = walk(an, s->body, &c)))
			return r;
		st_restore(an, &saved);
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

/* A word naming a file, for the policy's denied paths. */
static int add_path(struct an *an, size_t v, const char *text, const char *abs, unsigned flags)
{
	struct moat_cmd_analysis *a = an->a;
	struct moat_cmd_path *p;

	if (a->npaths == an->pcap) {
		struct moat_cmd_path *np = grow(an, a->paths, a->npaths, &an->pcap, sizeof(*np));

		if (!np)
			return an_oom(an);
		a->paths = np;
	}
	p = &a->paths[a->npaths++];
	p->text = text;
	p->abs = abs;
	p->view = v;
	p->flags = flags;
	return 0;
}

/* strstr(text, "://") != NULL, faster for the usual text without a ':' */
static bool has_scheme(const char *text)
{
	for (const char *c = strchr(text, ':'); c; c = strchr(c + 1, ':'))
		if (c[1] == '/' && c[2] == '/')
			return true;
	return false;
}

static int note_path(struct an *an, size_t v, unsigned wflags, const char *text, unsigned pflags);

/* A file:// URL names the file of its path, percent escapes decoded
 * (curl, and any program that reads one, opens it): noted as that path. */
static int note_file_url(struct an *an, size_t v, unsigned wflags, const char *text,
			 unsigned pflags)
{
	const char *p = text + 7;
	char *d;

	if (*p != '/') {
		p = strchr(p, '/'); /* (a host: localhost, or one the program refuses) */
		if (!p)
			return 0;
	}
	d = moat_arena_alloc(an->ar, strlen(p) + 1);
	if (!d)
		return an_oom(an);
	moat_cmd_url_path(p, d);
	wflags &= ~(unsigned)(MOAT_SHW_TILDE | MOAT_SHW_EXPAND);
	if (strpbrk(d, "*?["))
		pflags |= MOAT_CMD_PATH_GLOB; /* curl's own globbing: [a-z] */
	return note_path(an, v, wflags, d, pflags);
}

static int unknown_tree(struct an *an, size_t v);
static int note_path(struct an *an, size_t v, unsigned wflags, const char *text, unsigned pflags);

/* SECURITY: a link made earlier in the command below a tree read whole
 * (ln -s ~ h && zip -r x.zip .) is not there when the tree is walked,
 * before the command runs: its target is a tree read too. */
static int tree_links(struct an *an, size_t v, const char *abs, unsigned pflags)
{
	size_t al = strlen(abs), root_len = al;
	int r = 0;

	while (root_len > 1 && abs[root_len - 1] == '/')
		root_len--;
	if (an->tree_hops >= 8)
		return unknown_tree(an, v);
	an->tree_hops++;
	for (size_t j = 0; j < an->nlinks && !r; j++) {
		const char *n = an->links[j].name;

		/* SECURITY: a reader that follows links may meet one made
		 * anywhere earlier (moved or copied in after, ln -s ~ /tmp/h &&
		 * mv /tmp/h src/): every target made is a tree it may read */
		if (strncmp(n, abs, al) || (n[al] != '/' && !(al == 1 && abs[0] == '/')))
			continue;

		/* (a link to itself: one ln could make if its name were a
		 * directory already, which leads nowhere) */
		const char *t = an->links[j].target;
		size_t tl = t ? strlen(t) : 0;

		while (tl > 1 && t[tl - 1] == '/')
			tl--;
		/* (one to the tree itself is walked already) */
		if (strncmp(n, abs, al) || (n[al] != '/' && !(al == 1 && abs[0] == '/')) ||
		    (t && !strcmp(t, n)) || (t && tl == root_len && !strncmp(t, abs, tl)))
			continue;
		/* (bounded in all: links below links grow as a product) */
		if (++an->tree_expansions > 64)
			r = unknown_tree(an, v);
		else
			r = an->links[j].target ? note_path(an, v, 0, an->links[j].target,
							    pflags & ~(unsigned)MOAT_CMD_PATH_GLOB)
						: unknown_tree(an, v);
	}
	an->tree_hops--;
	return r;
}

/* SECURITY: a word with ".." names, for the kernel, the parent of where
 * the link before the ".." leads (cd /var/run && cat ../etc/shadow is
 * /etc/shadow), which a lexical join loses: each absolute spelling of it,
 * joined to the working directories and the home but not normalised, is
 * noted too, for the policy to resolve as the kernel does (a ".." after
 * a link the command itself makes: trees_after). */
static int note_dotdot(struct an *an, size_t v, unsigned wflags, const char *text,
		       unsigned pflags)
{
	const struct vset *cwd = an->st.cwd;
	const char *home = home_now(an);
	size_t n = text[0] == '/' || ((wflags & MOAT_SHW_TILDE) && text[0] == '~') ? 1 : cwd->n;
	int r;

	if ((wflags & MOAT_SHW_TILDE) && text[0] == '~' && ((text[1] && text[1] != '/') || !home))
		return 0; /* (~user, or a home not known: as before) */
	for (size_t k = 0; k < n; k++) {
		char raw[CMD_PATH_MAX];
		int l;

		if (text[0] == '/')
			l = snprintf(raw, sizeof(raw), "%s", text);
		else if ((wflags & MOAT_SHW_TILDE) && text[0] == '~')
			l = snprintf(raw, sizeof(raw), "%s%s", home, text + 1);
		else
			l = snprintf(raw, sizeof(raw), "%s/%s", cwd->s[k], text);
		if (l < 0 || (size_t)l >= sizeof(raw))
			return add_path(an, v, text, NULL, pflags | MOAT_CMD_PATH_UNKNOWN);
		/* (an absolute word too: its own entry may carry a lexical
		 * place, /proc/self/root/x/.. read as /x/..) */
		{
			const char *dup = moat_arena_strndup(an->ar, raw, (size_t)l);

			if (!dup)
				return an_oom(an);
			if ((r = add_path(an, v, dup, NULL, pflags)))
				return r;
		}
	}
	return 0;
}

static int note_path(struct an *an, size_t v, unsigned wflags, const char *text, unsigned pflags)
{
	char buf[CMD_PATH_MAX];
	size_t tl;
	int got, r;

	if (!(wflags & (MOAT_SHW_EXPAND | CMD_W_ELSEWHERE)) && strncasecmp(text, "file://", 7) == 0)
		return note_file_url(an, v, wflags, text, pflags);
	if ((wflags & (MOAT_SHW_EXPAND | CMD_W_ELSEWHERE)) || !text[0] || has_scheme(text))
		return 0;
	if (wflags & MOAT_SHW_GLOB)
		pflags |= MOAT_CMD_PATH_GLOB;
	if (!(pflags & MOAT_CMD_PATH_GLOB) && moat_path_has_dotdot(text) &&
	    (r = note_dotdot(an, v, wflags, text, pflags)))
		return r;
	/* absolute, or relative to the directory the command starts in: the
	 * policy normalises it (only when it may be a denied path at all) */
	if (!(wflags & MOAT_SHW_TILDE) &&
	    (text[0] == '/' ||
	     an->st.cwd == an->cwd0)) {
		if (text[0] == '/' && strcmp(text, "/dev/null") == 0)
			return 0;
		/* SECURITY: /proc/self/root/etc/shadow is /etc/shadow, and
		 * /proc/self/cwd/../x is x beside the working directory; one
		 * through another process's working directory is not known */
		if (moat_cmd_has_proc(text) && strlen(text) < sizeof(buf)) {
			memcpy(buf, text, strlen(text) + 1);
			if (moat_cmd_norm_proc(buf, sizeof(buf)) < 0)
				return add_path(an, v, text, NULL, pflags | MOAT_CMD_PATH_PROC);
			if (strcmp(buf, text)) {
				const char *abs = moat_arena_strndup(an->ar, buf, strlen(buf));

				if (!abs)
					return an_oom(an);
				return add_path(an, v, text, abs, pflags);
			}
		}
		if ((r = add_path(an, v, text, NULL, pflags)))
			return r;
		/* SECURITY: a path through a link made earlier in the same
		 * command ("ln -s /etc e; cat e/shadow") is also the path
		 * through its target */
		if (!an->nlinks && !an->links_lost)
			return 0;
	}
	for (size_t k = 0; (got = abs_path_k(an, wflags, text, k, buf, sizeof(buf))) != 0; k++) {
		const char *abs = NULL;

		if (got > 0 && !(abs = moat_arena_strndup(an->ar, buf, strlen(buf))))
			return an_oom(an);
		if ((r = add_path(an, v, text, abs, pflags | (got < 0 ? MOAT_CMD_PATH_UNKNOWN : 0))))
			return r;
		if (abs && (pflags & MOAT_CMD_PATH_TREE) && (r = tree_links(an, v, abs, pflags)))
			return r;
	}
	/* SECURITY: a reader of trees may follow a link given as its
	 * operand (tar -h, cp -L, zip -r, grep -r): one made earlier in the
	 * command is read through its target too, as a link already there
	 * is walked through it */
	tl = strlen(text);
	if ((pflags & MOAT_CMD_PATH_TREE) && an->nlinks && tl && text[tl - 1] != '/') {
		char *dir = moat_arena_alloc(an->ar, tl + 2);

		if (!dir)
			return an_oom(an);
		memcpy(dir, text, tl);
		memcpy(dir + tl, "/", 2);
		/* (a place it cannot be followed to is the link's own, noted) */
		for (size_t k = 0; (got = abs_path_k(an, wflags, dir, k, buf, sizeof(buf))) != 0;
		     k++) {
			const char *abs;

			if (got < 0)
				continue;
			if (!(abs = moat_arena_strndup(an->ar, buf, strlen(buf))))
				return an_oom(an);
			if ((r = add_path(an, v, dir, abs, pflags)) || (r = tree_links(an, v, abs, pflags)))
				return r;
		}
	}
	return 0;
}

/* A file named inside a word by '@' or '<' (curl -d @FILE, -F f=@FILE,
 * -F f=<FILE, -H @FILE, --data-urlencode n@FILE, httpie's f@FILE and
 * @FILE): the name after the last one, noted too. */
static int note_at_file(struct an *an, size_t v, unsigned fl, const char *a)
{
	const char *at = strrchr(a, '@'), *lt = strstr(a, "=<");

	if (lt && (!at || lt + 1 > at))
		at = lt + 1;
	else if (!at && a[0] == '<')
		at = a;
	if (!at || !at[1] || !strcmp(at + 1, "-")) /* (@-: standard input) */
		return 0;
	fl &= ~(unsigned)MOAT_SHW_TILDE;
	if (at[1] == '~')
		fl |= MOAT_SHW_TILDE;
	return note_path(an, v, fl, at + 1, 0);
}

/* SECURITY: an operand with expansions not known before running names
 * whatever they give. It is noted as a pattern, each unknown part a '*'
 * (MOAT_CMD_PATH_SPAN: "$Q".env, /home/$USER/.ssh/id_rsa, ~/$1/id_rsa);
 * one whose last component has no literal character, of a program that
 * prints or copies its operands, as a place not known (cat $(ls -A),
 * cat ~/"$f"). from: where the
 * operand starts in word w (after --opt=). */
/* The end of the expansion spelt at t[i] ('$' or '`'), within n bytes:
 * for a word whose values were substituted, which keeps the unknown
 * parts verbatim but no spans. */
static size_t span_end(const char *t, size_t i, size_t n)
{
	size_t k = i + 1, depth = 1;
	char open, close;

	if (t[i] == '`') {
		while (k < n && t[k] != '`')
			k++;
		return k < n ? k + 1 : n;
	}
	if (k >= n)
		return k;
	if (t[k] != '{' && t[k] != '(') {
		if (strchr("@*#?-$!0123456789", t[k]))
			return k + 1;
		while (k < n && is_name_char(t[k]))
			k++;
		return k;
	}
	open = t[k];
	close = open == '{' ? '}' : ')';
	for (k++; k < n && depth; k++) {
		if (t[k] == open)
			depth++;
		else if (t[k] == close)
			depth--;
	}
	return k;
}

static int note_span(struct an *an, size_t v, wref w, size_t from, unsigned pflags)
{
	char buf[CMD_PATH_MAX];
	size_t o = 0, pos = from, lit = 0;
	unsigned fl = w->flags & ~(unsigned)(MOAT_SHW_EXPAND | MOAT_SHW_TILDE);
	const struct moat_sh_span *sp = w->spans;
	const char *text;

	if ((w->flags & CMD_W_ELSEWHERE) || from > w->len)
		return 0;
	for (size_t scan = from;;) {
		size_t off, end;

		/* the next unknown part: from the spans, else from the text */
		while (sp && sp->off < from)
			sp = sp->next;
		if (w->spans) {
			off = sp ? sp->off : w->len;
			end = sp ? sp->off + sp->len : w->len;
		} else {
			off = scan;
			while (off < w->len && w->text[off] != '$' && w->text[off] != '`')
				off++;
			end = off < w->len ? span_end(w->text, off, w->len) : w->len;
			scan = end;
		}
		if (off > pos) {
			if (o + (off - pos) + 2 >= sizeof(buf))
				return 0;
			/* (the literal characters of the last component) */
			for (size_t k = pos; k < off; k++)
				lit = w->text[k] == '/' ? 0 : lit + (w->text[k] != '*');
			memcpy(buf + o, w->text + pos, off - pos);
			o += off - pos;
		}
		if (off >= w->len)
			break;
		if (!o || buf[o - 1] != '*')
			buf[o++] = '*';
		if (memchr(w->text + off, '/', end - off))
			lit = 0; /* (a value's own '/' would start another component) */
		pos = end;
		if (sp)
			sp = sp->next;
	}
	buf[o] = '\0';
	if (!lit)
		return moat_cmd_prints_operands(an->a->views[v].prog)
			       ? add_path(an, v, w->text + from, NULL, pflags | MOAT_CMD_PATH_UNKNOWN)
			       : 0;
	if (from == 0 && (w->flags & MOAT_SHW_TILDE) && buf[0] == '~')
		fl |= MOAT_SHW_TILDE;
	if (!(text = moat_arena_strndup(an->ar, buf, o)))
		return an_oom(an);
	return note_path(an, v, fl, text, pflags | MOAT_CMD_PATH_SPAN | MOAT_CMD_PATH_GLOB);
}

/* find's files: its roots ("." when none), read whole when an -exec,
 * -execdir, -ok or -okdir runs a program that reads what it is given
 * (find ~ -exec cat {} +), and the files of its file-valued primaries.
 * A find that only lists names no file with its tests' patterns (find .
 * -name '*.pem'); one that acts on what it finds (-delete, -exec) has
 * every other word noted too, as any program's operands are (find .
 * -name '*.key' -delete may remove a key). */
static int note_find(struct an *an, size_t v)
{
	static const char *const file_args[] = {"-fprint", "-fprint0", "-fls", "-fprintf",
						"-files0-from", NULL};
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	size_t i = 1, r0, r1;
	unsigned tree = 0;
	bool acts = false, follow = false;
	int r;

	while (i < view->argc && (!strcmp(view->argv[i], "-H") || !strcmp(view->argv[i], "-L") ||
				  !strcmp(view->argv[i], "-P") || !strncmp(view->argv[i], "-O", 2) ||
				  !strcmp(view->argv[i], "-D"))) {
		/* (the last of -H, -L and -P counts) */
		if (!strcmp(view->argv[i], "-L") || !strcmp(view->argv[i], "-P"))
			follow = view->argv[i][1] == 'L';
		i += strcmp(view->argv[i], "-D") ? 1 : 2;
	}
	if (i < view->argc && !strcmp(view->argv[i], "--"))
		i++;
	r0 = i;
	while (i < view->argc && view->argv[i][0] != '-' && strcmp(view->argv[i], "(") &&
	       strcmp(view->argv[i], "!") && strcmp(view->argv[i], ","))
		i++;
	r1 = i;
	for (size_t k = r1; k + 1 < view->argc; k++) {
		const char *a = view->argv[k], *prog;

		if (!strcmp(a, "-delete"))
			acts = true;
		if (strcmp(a, "-exec") && strcmp(a, "-execdir") && strcmp(a, "-ok") &&
		    strcmp(a, "-okdir"))
			continue;
		acts = true;
		prog = strrchr(view->argv[k + 1], '/');
		prog = prog ? prog + 1 : view->argv[k + 1];
		if (moat_cmd_prints_operands(prog) || moat_cmd_reads_tree(prog, NULL, 0) ||
		    !strcmp(prog, "grep") || !strcmp(prog, "egrep") || !strcmp(prog, "fgrep"))
			tree = MOAT_CMD_PATH_TREE | (follow ? MOAT_CMD_PATH_FOLLOW : 0);
	}
	for (size_t k = r0; k < r1; k++)
		if ((r = note_path(an, v, vw[k]->flags, view->argv[k], tree)))
			return r;
	if (r0 == r1 && tree && (r = note_path(an, v, 0, ".", tree)))
		return r;
	if (r1 < view->argc && !strcmp(view->argv[view->argc - 1], "-delete"))
		acts = true;
	for (size_t k = r1; k < view->argc; k++) {
		const char *a = view->argv[k];

		if (k + 1 < view->argc && in_list(file_args, a, strlen(a), false)) {
			if ((r = note_path(an, v, vw[k + 1]->flags, view->argv[k + 1], 0)))
				return r;
			k++;
		} else if (acts && a[0] != '-' && strcmp(a, "(") && strcmp(a, ")") &&
			   strcmp(a, "!") && strcmp(a, ",") && strcmp(a, "{}") &&
			   (r = note_path(an, v, vw[k]->flags, a, 0))) {
			return r;
		}
	}
	return 0;
}

/* SECURITY: once the whole command is read, each tree read whole against
 * what the command does anywhere, in whatever order it runs (a loop, a
 * function, a trap, a job in the background): every link it makes may
 * be, or come to be (moved, copied in), a tree's operand or an entry a
 * reader that follows links meets, so its target is read as a tree too;
 * and a reader that follows links beside a command that may put entries
 * into trees (mv, tar x, git checkout) asks, what those put there not
 * known before they run. Each tree its own bound of 64 targets. */
/* Does the absolute path have a ".." whose place is not there to resolve
 * before the command runs: after a component that does not exist now, or
 * at or below a link the command makes (by its normalised name)? */
static bool dotdot_unresolved(const struct an *an, const char *path)
{
	char pre[CMD_PATH_MAX];
	struct stat st;

	for (const char *d = strstr(path, "/.."); d; d = strstr(d + 1, "/..")) {
		size_t l = (size_t)(d - path);

		if ((d[3] != '/' && d[3]) || !l || l >= sizeof(pre))
			continue;
		memcpy(pre, path, l);
		pre[l] = '\0';
		if (lstat(pre, &st) < 0)
			return true;
		moat_cmd_norm_path(pre);
		for (size_t j = 0; j < an->nlinks; j++) {
			size_t nl = strlen(an->links[j].name);

			if (!strncmp(pre, an->links[j].name, nl) && (!pre[nl] || pre[nl] == '/'))
				return true;
		}
	}
	return false;
}

static bool view_places(const struct an *an, size_t v)
{
	const struct moat_cmdview *e = &an->a->views[v];

	return moat_cmd_places_entries(e->prog, (const char *const *)e->argv, e->argc);
}

/* Is the directory holding the absolute, normalised path missing now? */
static bool parent_missing(const char *path)
{
	char dir[CMD_PATH_MAX];
	const char *sl = strrchr(path, '/');
	struct stat st;

	if (!sl || sl == path || (size_t)(sl - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, (size_t)(sl - path));
	dir[sl - path] = '\0';
	return lstat(dir, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
}

/* parent_missing of path, a relative one read from where the command
 * starts */
static bool parent_missing_at(const struct an *an, const char *path)
{
	char full[CMD_PATH_MAX];

	if (path[0] == '/')
		return parent_missing(path);
	if (path[0] == '~' || !an->cwd0->n || an->cwd0->s[0][0] != '/' ||
	    (size_t)snprintf(full, sizeof(full), "%s/%s", an->cwd0->s[0], path) >= sizeof(full))
		return false;
	moat_cmd_norm_path(full);
	return parent_missing(full);
}

static int trees_after(struct an *an)
{
	size_t n = an->a->npaths, placers = 0, placer = 0, asked = SIZE_MAX;
	int r = 0;

	for (size_t u = 0; u < an->a->nviews && placers < 2; u++) {
		const struct moat_cmdview *e = &an->a->views[u];

		if (moat_cmd_places_entries(e->prog, e->argv, e->argc)) {
			placers++;
			placer = u;
		}
	}
	for (size_t k = 0; k < n && !r; k++) {
		const struct moat_cmd_path *pp = &an->a->paths[k];
		const char *at = pp->abs ? pp->abs : pp->text;
		unsigned fl = pp->flags & (MOAT_CMD_PATH_TREE | MOAT_CMD_PATH_FOLLOW);
		size_t v = pp->view;

		/* a ".." after a name not there yet, or after a link made, in a
		 * command that makes or moves links (ln, mv, cp -a, tar x) */
		/* (a "~+/L/.." or "~/L/.." spelling: "~" is not read here) */
		bool tilde = pp->text[0] == '~' && moat_path_has_dotdot(pp->text);

		if ((an->nlinks || an->links_lost || placers) &&
		    !(pp->flags & MOAT_CMD_PATH_UNKNOWN) && (pp->text[0] == '/' || tilde) &&
		    (an->links_lost || tilde || dotdot_unresolved(an, pp->text))) {
			const char *t = pp->text;

			if ((r = add_path(an, v, t, NULL, pp->flags | MOAT_CMD_PATH_UNKNOWN)))
				break;
			continue;
		}
		/* SECURITY: a path read below a directory that is not there now,
		 * beside a program that may put one there (tar x, cp -P, unzip,
		 * git clone): it may come as a link ("tar xf a.tar; cat L/x"
		 * with L -> /etc in the archive) */
		if (placers && !(pp->flags & MOAT_CMD_PATH_UNKNOWN) && !view_places(an, v) &&
		    parent_missing_at(an, at)) {
			if ((r = add_path(an, v, pp->text, NULL, pp->flags | MOAT_CMD_PATH_UNKNOWN)))
				break;
			continue;
		}
		if (!(pp->flags & MOAT_CMD_PATH_TREE))
			continue;
		/* (a placer other than the reader itself: cp -rL copies) */
		if ((pp->flags & MOAT_CMD_PATH_FOLLOW) && v != asked &&
		    (placers > 1 || (placers == 1 && placer != v))) {
			asked = v;
			if ((r = unknown_tree(an, v)))
				break;
		}
		an->tree_expansions = 0;
		for (size_t j = 0; j < an->nlinks && !r; j++) {
			const char *t = an->links[j].target;

			if (t && !strcmp(t, at))
				continue;
			if (!t || ++an->tree_expansions > 64)
				r = unknown_tree(an, v);
			else
				r = note_path(an, v, 0, t, fl);
		}
	}
	return r;
}

/* A tree read whole whose place is not known before running: asked about
 * where no sandbox hides the denied files in it (moat hook). */
static int unknown_tree(struct an *an, size_t v)
{
	unsigned saved = an->finding_flags;
	int r;

	an->finding_flags |= MOAT_FINDING_F_UNSANDBOXED;
	r = add_finding(an, v, MOAT_FINDING_ASK, "command:tree-unchecked",
			"'%s' reads the whole of a tree whose place is known only when it runs, "
			"and no sandbox hides the denied files in it",
			an->a->views[v].text);
	an->finding_flags = saved;
	return r;
}

/* The operands of view v: words that are not options, --opt=VALUE values. */
static int note_operands(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	bool done = false;
	unsigned tree, wtree;
	int r;

	size_t dest = 0; /* a copier's destination operand (0: none) */
	const char *cdir = NULL; /* tar -C DIR: the directory later operands are in */
	size_t cdir_at = 0;	 /* (the word that gives it) */
	unsigned cdir_fl = 0;
	struct moat_cmd_subtree st;
	bool tar;

	an->tree_expansions = 0; /* (each reader its own bound) */
	if (!strcmp(view->prog, "find"))
		return note_find(an, v);
	/* SECURITY: names read from the input are not known before running */
	if (moat_cmd_names_from_input(view->prog, view->argv, view->argc)) {
		unsigned saved = an->finding_flags;

		an->finding_flags |= MOAT_FINDING_F_UNSANDBOXED;
		r = add_finding(an, v, MOAT_FINDING_ASK, "command:paths-unchecked",
				"'%s' reads the files its input names, which cannot be checked "
				"before it runs, and no sandbox hides the denied ones",
				view->text);
		an->finding_flags = saved;
		if (r)
			return r;
	}
	tree = moat_cmd_reads_tree(view->prog, view->argv, view->argc) ? MOAT_CMD_PATH_TREE : 0;
	if (tree && moat_cmd_follows_links(view->prog, view->argv, view->argc))
		tree |= MOAT_CMD_PATH_FOLLOW;
	if (!tree && moat_cmd_subtree(view->prog, view->argv, view->argc, &st)) {
		tree = MOAT_CMD_PATH_TREE | (st.outside ? MOAT_CMD_PATH_OUTSIDE : 0) |
		       (st.follows ? MOAT_CMD_PATH_FOLLOW : 0);
		if (st.unplaced) {
			unsigned saved = an->finding_flags;

			an->finding_flags |= MOAT_FINDING_F_UNSANDBOXED;
			r = add_finding(an, v, MOAT_FINDING_ASK, "command:paths-unchecked",
					"'%s' reads a tree named by --work-tree or by -C after -C, "
					"which is not checked before it runs, and no sandbox hides "
					"the denied files in it",
					view->text);
			an->finding_flags = saved;
			if (r)
				return r;
		}
		dest = st.dest;
		if (st.cdir) {
			cdir_at = st.cdir;
			cdir = view->argv[cdir_at];
			cdir_fl = vw[cdir_at]->flags;
		}
	} else {
		memset(&st, 0, sizeof(st));
	}
	tar = !strcmp(view->prog, "tar") || !strcmp(view->prog, "gtar") ||
	      !strcmp(view->prog, "bsdtar");
	/* a copier's last operand is where it writes, not a tree it reads
	 * (cp -r payload/. ~), unless a target directory is given apart */
	if (tree && (!strcmp(view->prog, "cp") || !strcmp(view->prog, "scp") ||
		     !strcmp(view->prog, "rsync"))) {
		bool dd = false;
		size_t nops = 0, tdest = 0;

		for (size_t i = 1; i < view->argc; i++) {
			const char *a = view->argv[i];

			if (!dd && !strcmp(a, "--")) {
				dd = true;
			} else if (!dd && a[0] == '-' && a[1]) {
				/* cp -t DIR, -rtDIR, --target-directory[=]DIR */
				if (a[1] == '-' && !strncmp(a, "--target-directory", strcspn(a, "=")) &&
				    strlen(a) > 4)
					tdest = strchr(a, '=') ? i : i + 1;
				else if (a[1] != '-' && !strcmp(view->prog, "cp") && strchr(a, 't'))
					tdest = strchr(a, 't')[1] ? i : i + 1;
			} else if (!tdest || i != tdest) {
				nops++;
				dest = i;
			}
		}
		dest = tdest ? tdest : nops < 2 ? 0 : dest;
	}

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];
		unsigned fl = vw[i]->flags;

		if ((strchr(a, '@') || strstr(a, "=<") || a[0] == '<') &&
		    (r = note_at_file(an, v, fl, a)))
			return r;
		if (!done && a[0] == '-' && a[1]) {
			const char *eq;

			if (strcmp(a, "--") == 0) {
				done = true;
				continue;
			}
			/* a pattern, not a file (--exclude=.env, rg -g '*.pem') */
			if (moat_cmd_pattern_option(view->prog, a)) {
				if (!strchr(a, '='))
					i++;
				continue;
			}
			/* tar -C DIR: a directory to change to, not a tree read;
			 * the operands after it are below it */
			if (tar && (!strcmp(a, "-C") || (a[1] == '-' && strlen(a) > 4 &&
							  !strncmp(a, "--directory", strcspn(a, "="))))) {
				const char *d = strchr(a, '=');
				size_t w = d ? i : i + 1;

				if (!d && w >= view->argc)
					continue;
				cdir = d ? d + 1 : view->argv[w];
				cdir_at = w;
				cdir_fl = vw[w]->flags & ~(unsigned)MOAT_SHW_TILDE;
				if (cdir[0] == '~')
					cdir_fl |= vw[w]->flags & MOAT_SHW_TILDE;
				if (d ? !strncmp(d + 1, "~", 1) : 0)
					cdir_fl |= MOAT_SHW_TILDE;
				if ((r = note_path(an, v, cdir_fl, cdir, 0)))
					return r;
				i = w;
				continue;
			}
			if (a[1] != '-' || !(eq = strchr(a, '=')) || !eq[1])
				continue;
			a = eq + 1;
			fl &= ~(unsigned)MOAT_SHW_TILDE;
			if (a[0] == '~')
				fl |= MOAT_SHW_TILDE;
		}
		/* (the subcommand's words, a copier's destination and a
		 * pattern are not trees it reads) */
		wtree = i == dest || i < st.from || i == st.pattern ? 0 : tree;
		/* SECURITY: a tree whose place is known only when the command
		 * runs (grep -r KEY "$(cat f)") cannot be walked before */
		if (wtree && (fl & MOAT_SHW_EXPAND) && (r = unknown_tree(an, v)))
			return r;
		if ((fl & MOAT_SHW_EXPAND) && a >= view->argv[i] &&
		    (size_t)(a - view->argv[i]) <= vw[i]->len &&
		    (r = note_span(an, v, vw[i], (size_t)(a - view->argv[i]), wtree)))
			return r;
		if ((r = note_path(an, v, fl, a, wtree)))
			return r;
		if (cdir && i > cdir_at && i >= st.from && a[0] != '/' &&
		    !(fl & (MOAT_SHW_TILDE | MOAT_SHW_EXPAND))) {
			size_t dl = strlen(cdir), al = strlen(a);
			char *j = moat_arena_alloc(an->ar, dl + al + 2);

			if (!j)
				return an_oom(an);
			memcpy(j, cdir, dl);
			j[dl] = '/';
			memcpy(j + dl + 1, a, al + 1);
			if ((r = note_path(an, v, cdir_fl | (fl & MOAT_SHW_GLOB), j, wtree)))
				return r;
		}
	}
	/* SECURITY: grep -r KEY, rg KEY, git -C ~ add -A: the working
	 * directory (or the one git is told to work in) is the tree */
	if (st.bare)
		return note_path(an, v, cdir ? cdir_fl : 0, cdir ? cdir : ".", tree);
	if (tree && !st.from && moat_cmd_searches_cwd(view->prog, view->argv, view->argc))
		return note_path(an, v, 0, ".", tree);
	return 0;
}

static int record_redirs_in(struct an *an, const struct moat_sh_redir *rd, size_t v,
			    const struct wctx *cx)
{
	struct moat_cmd_analysis *a = an->a;
	int r;

	for (; rd; rd = rd->next) {
		unsigned fl = 0, pf;
		struct moat_cmd_redir *x;
		const struct moat_sh_word *t = &rd->target;

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
			if (all_digits(t->text) || strcmp(t->text, "-") == 0)
				continue;
			fl = MOAT_CMD_REDIR_WRITE;
			break;
		default:
			continue;
		}
		if (t->flags & MOAT_SHW_EXPAND)
			fl |= MOAT_CMD_REDIR_DYNAMIC;
		/* SECURITY: a file the command writes before running it
		 * ("echo 'cat ~/.ssh/id_rsa' > x.sh; sh x.sh") is a script
		 * not checked, as a download is */
		if ((fl & MOAT_CMD_REDIR_WRITE) && (r = note_file(an, t->flags, t->text, true)))
			return r;
		/* SECURITY: a shell or interpreter reading a file the same
		 * command downloaded ("curl -o f URL; sh < f") runs it */
		if (rd->op == MOAT_SH_R_IN && (rd->fd < 0 || rd->fd == 0) && an->ndl &&
		    v < a->nviews && is_download(an, t->flags, t->text)) {
			const struct moat_cmdview *sv = &a->views[v];
			int k = prog_kind(sv->prog);

			/* (only one that reads its program there: no script
			 * or -c argument, or "-" / "-s") */
			if ((k == PK_SHELL || k == PK_FSHELL || k == PK_INTERP) &&
			    (sv->argc == 1 || !strcmp(sv->argv[1], "-") || !strcmp(sv->argv[1], "-s")) &&
			    (r = ask_download_exec(an, v, t->text)))
				return r;
		}
		if (a->nredirs == an->rcap) {
			struct moat_cmd_redir *nr = grow(an, a->redirs, a->nredirs, &an->rcap, sizeof(*nr));

			if (!nr)
				return an_oom(an);
			a->redirs = nr;
		}
		x = &a->redirs[a->nredirs++];
		x->target = t->text;
		x->view = v;
		x->fd = rd->fd;
		x->flags = fl;
		pf = ((fl & MOAT_CMD_REDIR_READ) ? MOAT_CMD_PATH_READ : 0) |
		     ((fl & MOAT_CMD_REDIR_WRITE) ? MOAT_CMD_PATH_WRITE : 0);
		if (t->flags & MOAT_SHW_EXPAND) {
			/* the values it may take; what stays unknown is checked by its end */
			struct vset vals;

			if ((r = word_values(an, t, cx, 0, &vals)))
				return r;
			for (size_t k = 0; k < vals.n; k++) {
				if (((fl & MOAT_CMD_REDIR_WRITE) && (r = check_write(an, v, 0, vals.s[k]))) ||
				    (r = note_path(an, v, 0, vals.s[k], pf)))
					return r;
			}
			if ((vals.flags & VS_UNKNOWN) && (fl & MOAT_CMD_REDIR_WRITE) &&
			    (r = check_write(an, v, t->flags, t->text)))
				return r;
			continue;
		}
		if ((fl & MOAT_CMD_REDIR_WRITE) && (r = check_write(an, v, t->flags, t->text)))
			return r;
		if ((r = note_path(an, v, t->flags, t->text, pf)))
			return r;
		/* curl URL > f: a download */
		if ((fl & MOAT_CMD_REDIR_WRITE) && (rd->fd == -1 || rd->fd == 1) &&
		    a->views[v].argc && (strcmp(a->views[v].prog, "curl") == 0 ||
					 strcmp(a->views[v].prog, "wget") == 0) &&
		    (r = note_download(an, t->flags, t->text)))
			return r;
	}
	return 0;
}

/* The file redirections of view v: their findings are beside the program
 * (MOAT_FINDING_F_BESIDE). */
static int record_redirs(struct an *an, const struct moat_sh_redir *rd, size_t v,
			 const struct wctx *cx)
{
	unsigned saved = an->finding_flags;
	int r;

	an->finding_flags |= MOAT_FINDING_F_BESIDE;
	r = record_redirs_in(an, rd, v, cx);
	an->finding_flags = saved;
	return r;
}

/* NAME=VALUE words: the shell's variables change (exported: for one
 * command's environment). */
static int do_assigns(struct an *an, const struct moat_sh_node *n, const struct wctx *cx,
		      bool exported)
{
	int r;

	for (size_t i = 0; i < n->nassigns; i++) {
		const struct moat_sh_word *w = &n->assigns[i];
		size_t eq = w->eq, nl;
		struct vset val;

		if (eq < 2)
			continue;
		nl = eq - 1;
		if (memchr(w->text, '[', nl) || w->text[nl - 1] == '+') {
			/* arrays and appends: unknown */
			nl -= w->text[nl - 1] == '+';
			if (memchr(w->text, '[', nl))
				nl = (size_t)((const char *)memchr(w->text, '[', nl) - w->text);
			if ((r = havoc_var(an, w->text, nl)))
				return r;
			continue;
		}
		if ((r = word_values(an, w, cx, eq, &val)) ||
		    (r = var_set(an, w->text, nl, &val, false, exported)))
			return r;
	}
	return 0;
}

/* Per argument: its alternatives (NULL when it is literal). */
struct resolution {
	struct alts *al;   /* per word, al[i].n == 0 when the word is itself */
	size_t nwords;
	size_t combos;     /* views to make */
	bool diagonal;     /* too many combinations: each value once */
};

static int resolve_words(struct an *an, const struct argv_b *b, const struct wctx *cx,
			 struct resolution *res)
{
	bool changed = false;
	size_t prod = 1, maxn = 1;
	int r;

	res->al = NULL;
	res->combos = 0;
	res->nwords = b->n;
	res->al = moat_arena_alloc(an->ar, b->n * sizeof(*res->al));
	if (!res->al)
		return an_oom(an);
	for (size_t i = 0; i < b->n; i++) {
		struct alts *al = &res->al[i];
		wref w = b->wv[i];

		al->n = 0;
		if (!(w->flags & MOAT_SHW_EXPAND))
			continue;
		r = eval_word(an, w, cx, 0, 0, true, al);
		if (r == -E2BIG) {
			al->n = 0; /* over a limit: the word stays unknown */
			continue;
		}
		if (r)
			return r;
		if (al->truncated) {
			/* SECURITY: dropped values are unknown, so checks ask */
			struct fields *f = &al->a[al->n - 1];

			memset(f, 0, sizeof(*f));
			if ((r = f_unknown(an, f, w->text, w->len, false)) ||
			    (r = f_break(an, f, true)))
				return r == -E2BIG ? 0 : r;
		}
		changed |= al->changed;
		if (prod <= CMD_MAX_RESOLVED)
			prod *= al->n;
		if (al->n > maxn)
			maxn = al->n;
	}
	if (!changed)
		return 0;
	res->diagonal = prod > CMD_MAX_RESOLVED;
	res->combos = res->diagonal ? maxn : prod;
	return 0;
}

/* The argv of combination j. */
static int combo_argv(struct an *an, const struct argv_b *b, const struct resolution *res,
		      size_t j, struct argv_b *out)
{
	size_t rest = j;
	int r;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < b->n; i++) {
		const struct alts *al = &res->al[i];
		size_t pick;

		if (al->n == 0) {
			if ((r = argv_push(an, out, b->av[i], b->wv[i])))
				return r;
			continue;
		}
		if (res->diagonal) {
			pick = j % al->n;
		} else {
			pick = rest % al->n;
			rest /= al->n;
		}
		for (size_t f = 0; f < al->a[pick].n; f++)
			if ((r = argv_push(an, out, al->a[pick].w[f]->text, al->a[pick].w[f])))
				return r;
	}
	return 0;
}

/* Is a ':'-separated list of directories all relative, below the working
 * directory (no "..", "~", expansion or empty entry, which means ".")? */
static bool project_dirs(const char *v)
{
	if (!*v)
		return false;
	for (const char *e; ; v = e + 1) {
		size_t n;

		e = strchr(v, ':');
		n = e ? (size_t)(e - v) : strlen(v);
		if (!n || v[0] == '/' || v[0] == '~' || memchr(v, '$', n) || memchr(v, '`', n))
			return false;
		for (size_t i = 0; i + 1 < n; i++)
			if (v[i] == '.' && v[i + 1] == '.' && (i == 0 || v[i - 1] == '/') &&
			    (i + 2 == n || v[i + 2] == '/'))
				return false;
		if (!e)
			return true;
	}
}

/* Variables whose value names files the program loads ("BASH_ENV=F",
 * "LD_PRELOAD=A:B"), not directories; sorted (bsearch). */
static const char *const env_file_vars[] = {
    "BASH_ENV", "DYLD_INSERT_LIBRARIES", "ENV", "GIT_CONFIG", "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM", "LD_AUDIT", "LD_PRELOAD",
};

static int cmp_env_var(const void *k, const void *e)
{
	const char *const *key = k;

	return strcmp(*key, *(const char *const *)e);
}

/* SECURITY: the files such a value names are read by the program, as
 * its operands are ("BASH_ENV=~/.ssh/id_rsa bash -c :" prints the key
 * in bash's error): each one a path of view v. */
static int note_env_files(struct an *an, size_t v, wref w, const char *text, size_t nl)
{
	char name[32];
	const char *key = name;
	int r;

	if (nl >= sizeof(name))
		return 0;
	memcpy(name, text, nl);
	name[nl] = '\0';
	if (!bsearch(&key, env_file_vars, MOAT_ARRAY_SIZE(env_file_vars), sizeof(env_file_vars[0]),
		     cmp_env_var))
		return 0;
	for (const char *p = text + nl + 1; *p;) {
		size_t n = strcspn(p, ": ");
		unsigned fl = w->flags & ~(unsigned)(MOAT_SHW_TILDE | MOAT_SHW_ATILDE);
		char *piece;

		if (n) {
			if (p[0] == '~' && (w->flags & MOAT_SHW_ATILDE))
				fl |= MOAT_SHW_TILDE;
			if (!(piece = moat_arena_strndup(an->ar, p, n)))
				return an_oom(an);
			if ((r = note_path(an, v, fl, piece, 0)))
				return r;
		}
		p += n + (p[n] != '\0');
	}
	return 0;
}

/* SECURITY: an assignment NAME=VALUE that reaches a program's environment
 * (before a command, through env, export or declare -x) whose value the
 * program runs as a command (PROMPT_COMMAND for an interactive bash,
 * git's and less's helpers, editors, pagers; PS4's substitutions under set
 * -x): read as that command; or that makes it load code or another
 * configuration (BASH_ENV, LD_PRELOAD, GIT_CONFIG_*): asked. */
static int env_assign_check(struct an *an, size_t v, wref w, const char *text,
			    const struct wctx *cx)
{
	const char *const *runs = moat_env_runs, *const *loads = moat_env_loads;
	const char *eq = strchr(text, '='), *val;
	size_t nl;
	bool hit = false, load = false;
	int r;

	if (!eq)
		return 0;
	nl = (size_t)(eq - text);
	for (size_t k = 0; loads[k] && !load; k++)
		load = strlen(loads[k]) == nl && !strncmp(loads[k], text, nl);
	/* NODE_OPTIONS, RUBYOPT and MAKEFLAGS load code only through these
	 * (a heap size, -W0 or -j4 does not) */
	if (load && nl == 12 && !strncmp(text, "NODE_OPTIONS", 12))
		load = strstr(eq, "require") || strstr(eq, "import") || strstr(eq, "loader") ||
		       strstr(eq, "-r");
	if (load && nl == 7 && !strncmp(text, "RUBYOPT", 7))
		load = strstr(eq, "-r") || strstr(eq, "-I");
	if (load && ((nl == 9 && !strncmp(text, "MAKEFLAGS", 9)) ||
		     (nl == 12 && !strncmp(text, "GNUMAKEFLAGS", 12))))
		load = strstr(eq, "eval") || strstr(eq, "SHELL") || strstr(eq, "-E") ||
		       strstr(eq, "-f") || strstr(eq, "--file") || strstr(eq, "--makefile");
	/* a library path inside the directory the command started in
	 * (LD_LIBRARY_PATH=build/lib) is the project's own build */
	if (load && nl >= 12 && !strncmp(text + nl - 12, "LIBRARY_PATH", 12) &&
	    an->st.cwd == an->cwd0 && project_dirs(eq + 1))
		load = false;
	/* GIT_CONFIG_GLOBAL=/dev/null: no configuration at all */
	if (load && !strcmp(eq + 1, "/dev/null") && !strncmp(text, "GIT_CONFIG_", 11))
		load = false;
	if (load && eq[1]) {
		unsigned saved = an->finding_flags;

		an->finding_flags |= MOAT_FINDING_F_BESIDE;
		r = add_finding(an, v, MOAT_FINDING_ASK, "command:env-code",
				"%.*s makes the program load code or configuration from '%.80s'",
				(int)nl, text, eq + 1);
		an->finding_flags = saved;
		if (r || (r = note_env_files(an, v, w, text, nl)))
			return r;
	}
	for (size_t k = 0; runs[k] && !hit; k++)
		hit = strlen(runs[k]) == nl && !strncmp(runs[k], text, nl);
	if (!hit || !eq[1])
		return 0;
	val = eq + 1;
	/* PS4 is a prompt: only its substitutions run */
	if (nl == 3 && !strncmp(text, "PS4", 3) && !strstr(val, "$(") && !strchr(val, '`'))
		return 0;
	while (*val == '|')
		val++; /* LESSOPEN="|cmd %s" */
	{
		struct wctx c2 = nest_ctx_of(cx, w, v);

		return reparse(an, val, strlen(val), &c2, (w->flags & MOAT_SHW_EXPAND) != 0, true);
	}
}

static int emit_simple(struct an *an, const struct moat_sh_node *n, const struct wctx *cx)
{
	struct wctx c = *cx;
	struct argv_b b;
	unsigned flags = cx->vflags & (MOAT_VIEW_SUBST | MOAT_VIEW_UNWRAPPED);
	struct resolution res = {0};
	struct state before, pre;
	size_t v;
	int r;

	/* substitutions run before the command */
	if ((r = walk_word_list(an, n->assigns, n->nassigns, cx)) ||
	    (r = walk_word_list(an, n->words, n->nwords, cx)) ||
	    (r = walk_redir_subs(an, n->redirs, cx)))
		return r;
	apply_stdin(&c.in, n->redirs);
	if (n->nwords == 0) {
		/* NAME=VALUE alone: the shell's variables change */
		if ((r = do_assigns(an, n, cx, false)))
			return r;
		if (!n->redirs)
			return 0;
		if ((r = new_view(an, NULL, NULL, 0, flags, cx->depth, -1, -1, -1, &v)))
			return r;
		return record_redirs(an, n->redirs, v, cx);
	}
	if ((r = build_argv(an, n->words, n->nwords, &b)))
		return r;
	if (b.n == 0) { /* every word vanished: "{,}" */
		if (!n->redirs)
			return 0;
		if ((r = new_view(an, NULL, NULL, 0, flags, cx->depth, -1, -1, -1, &v)))
			return r;
		return record_redirs(an, n->redirs, v, cx);
	}
	if (b.wv[0]->flags & (MOAT_SHW_EXPAND | MOAT_SHW_GLOB))
		flags |= MOAT_VIEW_DYNAMIC;
	for (size_t i = 1; i < b.n; i++)
		if (b.wv[i]->flags & MOAT_SHW_EXPAND)
			flags |= MOAT_VIEW_DYNAMIC_ARGS;
	/* values known before running: resolved views below */
	if ((flags & (MOAT_VIEW_DYNAMIC | MOAT_VIEW_DYNAMIC_ARGS)) &&
	    (r = resolve_words(an, &b, cx, &res)))
		return r;
	if (res.combos)
		flags |= MOAT_VIEW_VALUES;
	if ((r = new_view(an, b.av, b.wv, b.n, flags, cx->depth, c.in.rd ? -1 : c.in.ff,
			  c.in.rd ? -1 : c.in.ft, cx->parent, &v)))
		return r;
	if ((r = record_redirs(an, n->redirs, v, cx)))
		return r;
	/* SECURITY: variables whose value some program runs as a command, or
	 * that make it load code (env_assign_check) */
	for (size_t i = 0; i < n->nassigns; i++)
		if ((r = env_assign_check(an, v, &n->assigns[i], n->assigns[i].text, cx)))
			return r;
	/* NAME=VALUE before a command: in its environment only */
	if (n->nassigns) {
		before = st_save(an);
		if ((r = do_assigns(an, n, cx, true)))
			return r;
	}
	if (res.combos)
		pre = st_save(an);
	{
		const struct state *outer = an->prefix_before;

		if (n->nassigns)
			an->prefix_before = &before;
		r = process(an, v, &c, 0);
		an->prefix_before = outer;
		if (r)
			return r;
	}
	if (res.combos) {
		/* SECURITY: what the command does to the shell (cd, eval) comes
		 * from the views with the values, not from the one without */
		struct state start = pre, acc = start;
		const struct moat_cmdview *o = &an->a->views[v];
		unsigned rf = (o->flags & MOAT_VIEW_SUBST) | MOAT_VIEW_UNWRAPPED | MOAT_VIEW_RESOLVED;

		for (size_t j = 0; j < res.combos; j++) {
			struct argv_b cb;
			unsigned f = rf;
			size_t rv;

			if ((r = combo_argv(an, &b, &res, j, &cb)))
				return r;
			if (cb.n == 0)
				continue;
			if (cb.wv[0]->flags & (MOAT_SHW_EXPAND | MOAT_SHW_GLOB))
				f |= MOAT_VIEW_DYNAMIC;
			for (size_t i = 1; i < cb.n; i++)
				if (cb.wv[i]->flags & MOAT_SHW_EXPAND)
					f |= MOAT_VIEW_DYNAMIC_ARGS;
			o = &an->a->views[v];
			st_restore(an, &start);
			if ((r = new_view(an, cb.av, cb.wv, cb.n, f, o->depth, o->feeds_first,
					  o->feeds_from, (int)v, &rv)) ||
			    (r = process(an, rv, &c, 0)))
				return r;
			/* the command ran with one of the values: the shell is in one of the states */
			if (j == 0)
				acc = st_save(an);
			else if ((r = st_join(an, &acc, &an->st)))
				return r;
		}
		st_restore(an, &acc);
	}
	/* the environment of one command: its NAME=VALUE are gone afterwards */
	for (size_t i = 0; i < n->nassigns; i++) {
		const struct moat_sh_word *w = &n->assigns[i];
		size_t nl = strcspn(w->text, "+[=");
		const struct var *old = var_find(&before, w->text, nl);
		struct vset u;

		vs_unknown(&u);
		if ((r = var_set(an, w->text, nl, old ? &old->v : &u, false, false)))
			return r;
	}
	return 0;
}

/* Variables and the directory a loop body may change are unknown from its
 * start (it runs again after changing them). */
static int prescan(struct an *an, const struct moat_sh_node *n)
{
	int r;

	for (const struct moat_sh_node *k = n; k; k = k->next) {
		if (!an->prescan_budget)
			return havoc(an, true, true);
		an->prescan_budget--;
		switch (k->kind) {
		case MOAT_SH_SIMPLE: {
			const char *w0 = NULL;

			for (size_t i = 0; i < k->nassigns; i++) {
				const struct moat_sh_word *w = &k->assigns[i];
				size_t nl = strcspn(w->text, "+[=");

				if ((r = havoc_var(an, w->text, nl)))
					return r;
			}
			for (size_t i = 0; i < k->nwords && i < 3; i++) {
				const struct moat_sh_word *w = &k->words[i];
				int kind;

				if (w->flags & (MOAT_SHW_EXPAND | MOAT_SHW_GLOB | MOAT_SHW_BRACE))
					return havoc(an, true, true);
				w0 = strrchr(w->text, '/') ? strrchr(w->text, '/') + 1 : w->text;
				kind = prog_kind(w0);
				if (kind == PK_CD || kind == PK_PUSHD || kind == PK_POPD) {
					if ((r = havoc(an, false, true)))
						return r;
				} else if ((kind >= PK_DECLARE && kind <= PK_LET) ||
					   strcmp(w0, "printf") == 0) {
					if ((r = havoc(an, true, false)))
						return r;
				} else if (kind == PK_EVAL || kind == PK_SOURCE || kind == PK_ALIAS) {
					return havoc(an, true, true);
				}
				for (size_t f = 0; f < an->nfuncs; f++)
					if (strcmp(w0, an->funcs[f]) == 0)
						return havoc(an, true, true);
				if (kind != PK_BUILTIN && kind != PK_COMMAND && kind != PK_EXEC)
					break;
			}
			break;
		}
		case MOAT_SH_FOR:
		case MOAT_SH_SELECT:
			if (k->name && (r = havoc_var(an, k->name->text, k->name->len)))
				return r;
			if ((r = prescan(an, k->kids)))
				return r;
			break;
		case MOAT_SH_ARITH:
		case MOAT_SH_ARITH_FOR:
			if ((r = havoc(an, true, false)) || (r = prescan(an, k->kids)))
				return r;
			break;
		case MOAT_SH_FUNC:
			break;
		default:
			if ((r = prescan(an, k->kids)))
				return r;
			break;
		}
	}
	return 0;
}

/* (( )) and let: the variables named may change */
static int arith_names(struct an *an, const char *t)
{
	int r;

	while (*t) {
		if ((is_name_char(*t) && !(*t >= '0' && *t <= '9'))) {
			const char *s = t;

			while (is_name_char(*t))
				t++;
			if ((r = forget_var(an, s, (size_t)(t - s))))
				return r;
			continue;
		}
		t++;
	}
	return 0;
}

static int walk(struct an *an, const struct moat_sh_node *n, const struct wctx *cx)
{
	struct moat_cmd_analysis *a = an->a;
	struct wctx c;
	struct state saved;
	size_t lo;
	int r;

	if (!n)
		return 0;
	switch (n->kind) {
	case MOAT_SH_SIMPLE:
		return emit_simple(an, n, cx);
	case MOAT_SH_LIST: {
		/* a && b || c: each item may be the last to run; the shell is in
		 * one of the states after them. b runs after a succeeded, c after
		 * a or b failed. A background item changes nothing here. */
		struct state acc = an->st;
		bool chain = false;
		int prev = MOAT_SH_OP_NONE;

		for (const struct moat_sh_node *k = n->kids; k; k = k->next) {
			bool bg = k->op == MOAT_SH_OP_BG;

			if (!chain && !bg && k->op != MOAT_SH_OP_AND && k->op != MOAT_SH_OP_OR) {
				/* "a; b": the state simply flows */
				if ((r = walk(an, k, cx)))
					return r;
				prev = k->op;
				continue;
			}
			if (prev == MOAT_SH_OP_OR && chain)
				st_restore(an, &acc);
			if (bg)
				saved = st_save(an);
			if ((r = walk(an, k, cx)))
				return r;
			if (bg)
				st_restore(an, &saved);
			if (!chain) {
				acc = st_save(an);
				chain = true;
			} else if ((r = st_join(an, &acc, &an->st))) {
				return r;
			}
			if (k->op != MOAT_SH_OP_AND && k->op != MOAT_SH_OP_OR) {
				st_restore(an, &acc);
				chain = false;
			}
			prev = k->op;
		}
		if (chain)
			st_restore(an, &acc);
		return 0;
	}
	case MOAT_SH_PIPELINE: {
		int pf = -1, pt = -1;
		size_t idx = 0;

		/* every stage is a subshell */
		saved = st_save(an);
		for (const struct moat_sh_node *k = n->kids; k; k = k->next, idx++) {
			struct wctx s = *cx;

			if (idx > 0) {
				s.in.rd = NULL;
				s.in.ff = pf;
				s.in.ft = pt;
				s.in.unknown = false;
			}
			lo = a->nviews;
			st_restore(an, &saved);
			if ((r = walk(an, k, &s)))
				return r;
			if (a->nviews > lo) {
				pf = (int)lo;
				pt = (int)a->nviews - 1;
			} else {
				pf = pt = -1;
			}
		}
		st_restore(an, &saved);
		return 0;
	}
	case MOAT_SH_FUNC: {
		struct fb f = {n->name ? n->name->text : "", 0, false};

		if (n->name && !an->funcs &&
		    !(an->funcs = moat_arena_alloc(an->ar, CMD_MAX_FUNCS * sizeof(*an->funcs))))
			return an_oom(an);
		if (n->name && an->nfuncs < CMD_MAX_FUNCS)
			an->funcs[an->nfuncs++] = n->name->text;
		c = *cx;
		c.nest++;
		c.in.rd = NULL;
		c.in.ff = c.in.ft = -1;
		c.in.unknown = false;
		c.pos = NULL; /* $1 is the function's argument */
		lo = a->nviews;
		/* the body runs when called (and then changes everything) */
		saved = st_save(an);
		if ((r = walk(an, n->kids, &c)))
			return r;
		st_restore(an, &saved);
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
	switch (n->kind) {
	case MOAT_SH_SUBSHELL:
	case MOAT_SH_COPROC:
		saved = st_save(an);
		for (const struct moat_sh_node *k = n->kids; k; k = k->next)
			if ((r = walk(an, k, &c)))
				return r;
		st_restore(an, &saved);
		break;
	case MOAT_SH_IF: {
		/* cond, then, [cond, then]..., [else]: the shell ends in one of
		 * the branches' states, or after the last condition */
		struct state acc = an->st, cond = an->st;
		bool any = false;
		size_t idx = 0;

		for (const struct moat_sh_node *k = n->kids; k; k = k->next, idx++) {
			bool is_else = (idx % 2 == 0) && !k->next;

			if (idx % 2 == 1 || is_else) {
				if ((r = walk(an, k, &c)))
					return r;
				if (!any) {
					acc = st_save(an);
					any = true;
				} else if ((r = st_join(an, &acc, &an->st))) {
					return r;
				}
				if (!is_else)
					st_restore(an, &cond);
				if (is_else)
					idx++; /* the else ran: no "no branch" state */
				continue;
			}
			if ((r = walk(an, k, &c)))
				return r;
			cond = st_save(an);
		}
		if (idx % 2 == 0 && any && (r = st_join(an, &acc, &an->st)))
			return r;
		if (any)
			st_restore(an, &acc);
		break;
	}
	case MOAT_SH_WHILE:
	case MOAT_SH_UNTIL:
	case MOAT_SH_FOR:
	case MOAT_SH_SELECT:
	case MOAT_SH_ARITH_FOR: {
		struct state entry;

		if ((r = prescan(an, n->kids)))
			return r;
		if ((n->kind == MOAT_SH_FOR || n->kind == MOAT_SH_SELECT) && n->name) {
			/* the loop variable takes each value of the list */
			struct vset vals = {.n = 0, .flags = 0};

			if (n->nwords == 0)
				vs_unknown(&vals);
			for (size_t i = 0; i < n->nwords; i++) {
				const struct moat_sh_word *w = &n->words[i];
				struct alts al;

				/* (for d in ~: the shell expands the tilde) */
				if (!(w->flags & (MOAT_SHW_EXPAND | MOAT_SHW_BRACE | MOAT_SHW_TILDE))) {
					vs_add(&vals, w->text);
					continue;
				}
				r = (w->flags & MOAT_SHW_BRACE) ? -E2BIG
							    : eval_word(an, w, cx, 0, 0, true, &al);
				if (r == -E2BIG) {
					vals.flags |= VS_UNKNOWN;
					continue;
				}
				if (r)
					return r;
				vals.flags |= al.truncated ? VS_UNKNOWN : 0;
				for (size_t x = 0; x < al.n; x++)
					for (size_t f = 0; f < al.a[x].n; f++) {
						if (al.a[x].w[f]->flags & MOAT_SHW_EXPAND)
							vals.flags |= VS_UNKNOWN;
						else
							vs_add(&vals, al.a[x].w[f]->text);
					}
			}
			if ((r = var_set(an, n->name->text, n->name->len, &vals, false, false)))
				return r;
		}
		if (n->kind == MOAT_SH_ARITH_FOR && n->nwords && (r = arith_names(an, n->words[0].text)))
			return r;
		entry = st_save(an);
		for (const struct moat_sh_node *k = n->kids; k; k = k->next)
			if ((r = walk(an, k, &c)))
				return r;
		if ((r = st_join(an, &an->st, &entry)))
			return r;
		break;
	}
	case MOAT_SH_CASE: {
		struct state entry = st_save(an), acc = entry;

		for (const struct moat_sh_node *k = n->kids; k; k = k->next) {
			st_restore(an, &entry);
			if ((r = walk(an, k, &c)) || (r = st_join(an, &acc, &an->st)))
				return r;
		}
		st_restore(an, &acc);
		break;
	}
	case MOAT_SH_ARITH:
		if (n->nwords && (r = arith_names(an, n->words[0].text)))
			return r;
		break;
	default:
		for (const struct moat_sh_node *k = n->kids; k; k = k->next)
			if ((r = walk(an, k, &c)))
				return r;
		break;
	}
	if (n->redirs) {
		size_t v = lo;

		if (a->nviews == lo &&
		    (r = new_view(an, NULL, NULL, 0, cx->vflags & (MOAT_VIEW_SUBST | MOAT_VIEW_UNWRAPPED),
				  cx->depth, -1, -1, -1, &v)))
			return r;
		return record_redirs(an, n->redirs, v, cx);
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
 * (lenient) that does not parse is left alone: it is flagged dynamic. A
 * child shell (sh -c, a script on a pipe) or text run later (trap, alias)
 * changes nothing in this shell's variables or directory. */
static int reparse(struct an *an, const char *text, size_t len, const struct wctx *cx,
		   bool lenient, bool child)
{
	struct moat_sh_node *root;
	struct moat_sh_error se;
	struct wctx cc = *cx, *c = &cc;
	struct state saved;
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
	if (!child)
		return walk(an, root, c);
	saved = st_save(an);
	if ((r = st_child(an)) || (r = walk(an, root, c)))
		return r;
	st_restore(an, &saved);
	return 0;
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
		else if (rd->op == MOAT_SH_R_DUPIN) {
			/* SECURITY: 0<&N: whatever N holds (a pipe moved aside with
			 * 3<&0): not known before running */
			a->views[v].flags |= MOAT_VIEW_SHELL_STDIN;
			a->dynamic = true;
			return 0;
		} else
			return 0; /* a file: as good as a script operand */
		/* SECURITY: flagged even when literal: a later redirection may
		 * give the shell another input (bash 3<&0 <<'A' 0<&3), and the
		 * body is read below as the commands it most likely runs */
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
		c.pos = NULL;
		return reparse(an, body->text, body->len, &c, (body->flags & MOAT_SHW_EXPAND) != 0,
			       true);
	}
	if (in->ft >= 0) {
		const struct moat_cmdview *src = &a->views[in->ft];

		a->views[v].flags |= MOAT_VIEW_SHELL_STDIN;
		/* echo 'literal' | sh: the script is most likely known (read as
		 * commands; still flagged: echo may be a function, or expand
		 * escapes) */
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
				c.pos = NULL;
				r = reparse(an, t, strlen(t), &c, false, true);
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
		/* sh -c BODY NAME ARGS...: $0 is NAME, $1... are ARGS */
		c.pos = moat_arena_alloc(an->ar, sizeof(*c.pos));
		if (!c.pos)
			return an_oom(an);
		c.pos->n = 0;
		c.pos->unknown = false;
		c.pos->more = argc - i - 1 > CMD_MAX_POS;
		for (size_t k = i + 1; k < argc && c.pos->n < CMD_MAX_POS; k++) {
			struct vset *pv = &c.pos->v[c.pos->n++];
			int r;

			if (vw[k]->flags & MOAT_SHW_EXPAND) {
				vs_unknown(pv);
				if (view->flags & MOAT_VIEW_VALUES)
					pv->flags |= VS_ELSEWHERE;
			} else if ((r = word_values(an, vw[k], cx, 0, pv))) {
				return r;
			}
		}
		if (c.pos->n == 0)
			vs_unknown(&c.pos->v[c.pos->n++]); /* $0: the shell's name */
		return reparse(an, view->argv[i], body->len, &c, unknown, true);
	}
	if (i < argc && script_from_procsubst(an, v, vw[i]))
		return 0;
	if (i < argc && !sflag && is_download(an, vw[i]->flags, view->argv[i]))
		return ask_download_exec(an, v, view->argv[i]);
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
	int r;

	if (fam >= 0 && strcmp(interps[fam].name, "pwsh") == 0 && argc > 1 &&
	    strcmp(view->argv[1], "-") && strcmp(view->argv[1], "-Command") &&
	    strcmp(view->argv[argc - 1], "-"))
		return 0;
	if (fam >= 0 && strcmp(interps[fam].name, "pwsh") == 0 && argc > 1)
		return mark_stdin(an, v, cx, false);
	if (fam >= 0 && (strcmp(interps[fam].name, "perl") == 0 ||
			 strcmp(interps[fam].name, "ruby") == 0) &&
	    (r = check_inplace(an, v)))
		return r;
	view = &an->a->views[v];
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
			if (strchr(code, a[k])) {
				/* code given inline: we cannot read it, but it is
				 * visible; unless it is what a download prints
				 * (python3 -c "$(curl URL)") */
				const char *body = a[k + 1] ? a + k + 1 : i + 1 < argc ? view->argv[i + 1] : "";

				if (strstr(body, "$(curl") || strstr(body, "$(wget") ||
				    strstr(body, "`curl") || strstr(body, "`wget"))
					return add_finding(an, v, MOAT_FINDING_ASK, "command:download-exec",
							   "%s runs code a download prints", view->prog);
				return 0;
			}
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
	if (is_download(an, an->vw[v][i]->flags, view->argv[i]))
		return ask_download_exec(an, v, view->argv[i]);
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

/* The working directory becomes every directory DIR may name, as
 * "cd DIR" would make it (the caller restores the one before). */
static int cwd_enter(struct an *an, unsigned dflags, const char *dir)
{
	struct vset *nw = moat_arena_alloc(an->ar, sizeof(*nw));
	char buf[CMD_PATH_MAX];
	int got;

	if (!nw)
		return an_oom(an);
	memset(nw, 0, sizeof(*nw));
	for (size_t k = 0; (got = abs_path_k(an, dflags, dir, k, buf, sizeof(buf))) != 0; k++) {
		char *d;

		if (got < 0) {
			nw->flags |= VS_UNKNOWN;
			continue;
		}
		if (!(d = moat_arena_strndup(an->ar, buf, strlen(buf))))
			return an_oom(an);
		vs_add(nw, d);
	}
	if (!nw->n)
		nw->flags |= VS_UNKNOWN;
	an->st.cwd = nw;
	st_touch(an);
	return 0;
}

static int do_env(struct an *an, size_t v, const struct wctx *cx, int chain)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const char *const *argv = view->argv;
	const wref *vw = an->vw[v];
	size_t argc = view->argc, i = 1;
	int splits = 0, r;
	const char *dir = NULL; /* -C DIR, --chdir=DIR */
	unsigned dflags = 0;

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
			} else if (long_is(name, "chdir", 1)) {
				if (eq) {
					dir = eq + 1;
					dflags = vw[i]->flags;
				} else if (i + 1 < argc) {
					dir = argv[i + 1];
					dflags = vw[i + 1]->flags;
				}
				if (!eq)
					i++;
			} else if (!eq && long_is(name, "unset", 1)) {
				i++;
			}
			if (!split) {
				i++;
				continue;
			}
		} else if (a[0] == '-') {
			for (size_t k = 1; a[k]; k++) {
				if (a[k] == 'u' || a[k] == 'C' || a[k] == 'P') {
					if (a[k] == 'C' && (a[k + 1] || i + 1 < argc)) {
						dir = a[k + 1] ? a + k + 1 : argv[i + 1];
						dflags = vw[a[k + 1] ? i : i + 1]->flags;
					}
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
			/* (argv and vw may be an env -S split's: kept; the
			 * strings and word arrays do not move) */
			if ((r = env_assign_check(an, v, vw[i], a, cx)))
				return r;
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
	if (dir) {
		/* SECURITY: env -C DIR runs the command in DIR, as "cd DIR" would */
		const struct vset *old = an->st.cwd;

		if ((r = cwd_enter(an, dflags, dir)))
			return r;
		r = child(an, v, argv + i, vw + i, argc - i, 0, cx, chain);
		an->st.cwd = old;
		st_touch(an);
		return r;
	}
	return child(an, v, argv + i, vw + i, argc - i, 0, cx, chain);
}

/* Is the option o among the words before end? */
static bool wrapper_has(const struct moat_cmdview *view, size_t end, const char *o)
{
	for (size_t k = 1; k < end && k < view->argc; k++)
		if (!strcmp(view->argv[k], o))
			return true;
	return false;
}

/* The words from i on, joined with blanks, read as one command line (what
 * a shell given them as -c, or ssh's remote shell, runs) */
static int reparse_joined(struct an *an, size_t v, size_t i, const struct wctx *cx)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	size_t len = 0;
	bool unknown = false;
	char *text;
	struct wctx c;

	if (i >= view->argc)
		return 0;
	for (size_t k = i; k < view->argc; k++) {
		len += strlen(view->argv[k]) + 1;
		unknown = unknown || (vw[k]->flags & MOAT_SHW_EXPAND);
	}
	text = moat_arena_alloc(an->ar, len + 1);
	if (!text)
		return an_oom(an);
	len = 0;
	for (size_t k = i; k < view->argc; k++) {
		size_t l = strlen(view->argv[k]);

		if (k > i)
			text[len++] = ' ';
		memcpy(text + len, view->argv[k], l);
		len += l;
	}
	text[len] = '\0';
	c = nest_ctx_of(cx, vw[i], v);
	return reparse(an, text, len, &c, unknown, true);
}

/* Programs that run a command after words of their own: the words (a
 * subcommand, a fixed number of operands, options that take a value),
 * then the command as arguments or, for some, as one command line. */
static const struct runafter {
	const char *prog;
	const char *sub;      /* words that must follow (space-separated), or NULL */
	int npos;	      /* operands of its own after the options */
	const char *sarg;     /* short options that take a value */
	const char *line_opt; /* an option whose value is a command line */
	bool joined;	      /* the rest is one command line (ssh) */
} runafters[] = {
    {"setarch", NULL, 1, "", NULL, false},	      {"linux32", NULL, 0, "", NULL, false},
    {"linux64", NULL, 0, "", NULL, false},	      {"numactl", NULL, 0, "", NULL, false},
    {"prlimit", NULL, 0, "p", NULL, false},	      {"runcon", NULL, 1, "turlh", NULL, false},
    {"chpst", NULL, 0, "uUe/nlLmdofpcrt", NULL, false}, {"trickle", NULL, 0, "duwtlL", NULL, false},
    {"faketime", NULL, 1, "f", NULL, false},	      {"rlwrap", NULL, 0, "aAbcCDeEfFgHlmOopPqsSw", NULL, false},
    {"retry", NULL, 0, "tdmMx", NULL, false},	      {"daemonize", NULL, 0, "acepluE", NULL, false},
    {"systemd-nspawn", NULL, 0, "DMiuSEpLbxZ", NULL, false},
    {"ip", "netns exec", 1, "", NULL, false},	      {"podman", "unshare", 0, "", NULL, false},
    {"flatpak-spawn", NULL, 0, "", NULL, false},      {"schroot", NULL, 0, "cunbd", NULL, false},
    {"distrobox", "enter", 1, "n", NULL, false},      {"uv", "run", 0, "pw", NULL, false},
    {"poetry", "run", 0, "CP", NULL, false},	      {"npm", "exec", 0, "pw", "-c", false},
    {"pnpm", "exec", 0, "C", NULL, false},	      {"yarn", "exec", 0, "", NULL, false},
    {"bundle", "exec", 0, "", NULL, false},	      {"direnv", "exec", 1, "", NULL, false},
    {"npx", NULL, 0, "p", "-c", false},	      {"nix-shell", NULL, 0, "Ipk", "--run", false},
    {"ssh", NULL, 1, "BbcDEeFIiJLlmOopQRSWw", NULL, true},
    {"capsh", NULL, 0, "", "-c", false},	      {"machinectl", "shell", 1, "MpE", NULL, false},
    {"entr", NULL, 0, "", NULL, false},	      {"start-stop-daemon", NULL, 0, "", NULL, false},
};

static int do_runafter(struct an *an, size_t v, const struct wctx *cx, int chain)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const struct runafter *ra = NULL;
	size_t i = 1;
	int npos;

	for (size_t k = 0; k < MOAT_ARRAY_SIZE(runafters) && !ra; k++)
		if (!strcmp(runafters[k].prog, view->prog))
			ra = &runafters[k];
	if (!ra)
		return 0;
	/* start-stop-daemon --exec PROG [-- ARGS]: PROG runs with ARGS */
	if (!strcmp(ra->prog, "start-stop-daemon")) {
		for (size_t k = 1; k + 1 < view->argc; k++)
			if (!strcmp(view->argv[k], "--exec") || !strcmp(view->argv[k], "-x") ||
			    !strcmp(view->argv[k], "--startas") || !strcmp(view->argv[k], "-a"))
				return suffix(an, v, k + 1, 0, cx, chain);
		return 0;
	}
	if (ra->sub) {
		const char *w = ra->sub;

		while (*w) {
			size_t l = strcspn(w, " ");

			if (i >= view->argc || strlen(view->argv[i]) != l ||
			    strncmp(view->argv[i], w, l))
				return 0;
			i++;
			w += l;
			while (*w == ' ')
				w++;
		}
	}
	/* an option whose value is a command line (npx -c, nix-shell --run) */
	for (size_t k = i; ra->line_opt && k + 1 < view->argc; k++)
		if (!strcmp(view->argv[k], ra->line_opt) ||
		    (!strcmp(ra->line_opt, "--run") && !strcmp(view->argv[k], "--command"))) {
			return reparse_word(an, v, k + 1, cx);
		}
	/* "--": the command follows (retry, schroot, distrobox, npm exec) */
	for (size_t k = i; k < view->argc; k++)
		if (!strcmp(view->argv[k], "--"))
			return ra->joined ? reparse_joined(an, v, k + 1, cx)
					  : suffix(an, v, k + 1, 0, cx, chain);
	npos = ra->npos;
	while (i < view->argc) {
		const char *o = view->argv[i];

		if (o[0] == '-' && o[1]) {
			/* -X VALUE for the short options that take one */
			if (o[1] != '-' && !o[2] && strchr(ra->sarg, o[1]))
				i++;
			i++;
			continue;
		}
		if (npos > 0) {
			npos--;
			i++;
			continue;
		}
		break;
	}
	if (i >= view->argc)
		return 0;
	return ra->joined ? reparse_joined(an, v, i, cx) : suffix(an, v, i, 0, cx, chain);
}

/* Word k of view v read as one command line (a tmux or screen command, a
 * value a program runs) */
static int reparse_word(struct an *an, size_t v, size_t k, const struct wctx *cx)
{
	const struct moat_cmdview *view = &an->a->views[v];
	wref w = an->vw[v][k];
	struct wctx c = nest_ctx_of(cx, w, v);

	return reparse(an, view->argv[k], strlen(view->argv[k]), &c,
		       (w->flags & MOAT_SHW_EXPAND) != 0, true);
}

/* The directory a wrapper's option makes the command start in: sudo -D
 * DIR / --chdir=DIR (run0 too), nsenter and unshare -wDIR / --wd=DIR;
 * NULL without one. *idx gets the word it is in (for its flags). */
static const char *wrapper_chdir(const struct moat_cmdview *view, size_t end, int kind,
				 size_t *idx)
{
	const char *dir = NULL;

	for (size_t k = 1; k < end && k < view->argc; k++) {
		const char *a = view->argv[k];

		if (kind == PK_SUDO) {
			if (!strcmp(a, "-D") || !strcmp(a, "--chdir")) {
				if (k + 1 < end) {
					dir = view->argv[k + 1];
					*idx = k + 1;
				}
			} else if (!strncmp(a, "--chdir=", 8)) {
				dir = a + 8;
				*idx = k;
			} else if (a[0] == '-' && a[1] != '-' &&
				   strcspn(a + 1, "CcgpRrTtUuhD") < strlen(a + 1) &&
				   a[1 + strcspn(a + 1, "CcgpRrTtUuhD")] == 'D') {
				/* the first letter that takes a value is D */
				const char *d = a + 1 + strcspn(a + 1, "CcgpRrTtUuhD");

				if (d[1]) {
					dir = d + 1;
					*idx = k;
				} else if (k + 1 < end) {
					dir = view->argv[k + 1];
					*idx = k + 1;
				}
			}
		} else {
			if (!strncmp(a, "--wd=", 5)) {
				dir = a + 5;
				*idx = k;
			} else if (!strncmp(a, "-w", 2) && a[2]) {
				dir = a + 2;
				*idx = k;
			} else if ((!strcmp(a, "--wd") || !strcmp(a, "-w")) && kind == PK_UNSHARE &&
				   k + 1 < end) {
				dir = view->argv[k + 1];
				*idx = k + 1;
			}
		}
	}
	return dir && *dir ? dir : NULL;
}

/* suffix() of the command a wrapper runs from word i, in dir when a
 * change-directory option named one: as "cd DIR" would (env -C's rule) */
static int suffix_in(struct an *an, size_t v, size_t i, const char *dir, unsigned dflags,
		     const struct wctx *cx, int chain)
{
	const struct vset *old = an->st.cwd;
	int r;

	if (!dir)
		return suffix(an, v, i, 0, cx, chain);
	if ((r = cwd_enter(an, dflags, dir)))
		return r;
	r = suffix(an, v, i, 0, cx, chain);
	an->st.cwd = old;
	st_touch(an);
	return r;
}

static bool wrapper_kind(int kind)
{
	return kind >= PK_SUDO && kind <= PK_GDB && kind != PK_FIND && kind != PK_SOURCE &&
	       kind != PK_EVAL && kind != PK_ALIAS && kind != PK_TRAP && kind != PK_SCRIPT;
}

/* What a command reads on its input when that is known before running:
 * echo or printf of known values on a pipe, a here-string, a here-document. */
static int known_input(struct an *an, const struct wctx *cx, struct vset *ret)
{
	const struct moat_cmd_analysis *a = an->a;
	int d = INT32_MAX;

	vs_unknown(ret);
	if (cx->in.rd) {
		const struct moat_sh_redir *rd = cx->in.rd;

		if (rd->op == MOAT_SH_R_HERESTRING)
			return word_values(an, &rd->target, cx, 0, ret);
		if (rd->op == MOAT_SH_R_HEREDOC || rd->op == MOAT_SH_R_HEREDOC_STRIP) {
			if (!(rd->body.flags & MOAT_SHW_EXPAND)) {
				vs_one(ret, rd->body.text);
				return 0;
			}
			return word_values(an, &rd->body, cx, 0, ret);
		}
		return 0;
	}
	if (cx->in.ft < 0 || cx->in.ff < 0 || cx->in.unknown)
		return 0;
	for (int x = cx->in.ff; x <= cx->in.ft; x++)
		if (a->views[x].depth < d)
			d = a->views[x].depth;
	ret->flags = 0;
	for (int x = cx->in.ff; x <= cx->in.ft; x++) {
		const struct moat_cmdview *sv = &a->views[x];
		struct fields f;
		const char *out;

		if (sv->depth != d || (sv->flags & MOAT_VIEW_VALUES) || sv->argc == 0)
			continue;
		if (strcmp(sv->prog, "echo") != 0 && strcmp(sv->prog, "printf") != 0) {
			if (wrapper_kind(prog_kind(sv->prog)))
				continue;
			vs_unknown(ret);
			return 0;
		}
		memset(&f, 0, sizeof(f));
		f.w = (wref *)an->vw[x] + 1;
		f.n = (uint32_t)(sv->argc - 1);
		out = sv->prog[0] == 'e' ? echo_output(an, &f) : printf_output(an, &f, 0);
		if (!out) {
			ret->flags |= VS_UNKNOWN;
			continue;
		}
		vs_add(ret, out);
	}
	if (!ret->n)
		ret->flags |= VS_UNKNOWN;
	return 0;
}

/* xargs's items: blank-separated with quotes (delim -1), lines (-I: '\n'
 * with leading blanks dropped), or split at one byte (-0, -d). */
static int xargs_items(struct an *an, const char *in, int delim, bool lines, struct argv_b *out)
{
	struct moat_buf b = MOAT_BUF_INIT;
	int r = 0;

	while (*in && !r) {
		bool any = false;

		moat_buf_reset(&b);
		if (lines || delim >= 0) {
			char sep = lines ? '\n' : (char)delim;

			if (lines)
				in += strspn(in, " \t");
			while (*in && *in != sep)
				moat_buf_putc(&b, *in++);
			if (*in)
				in++;
			any = b.len > 0 || !lines;
		} else {
			in += strspn(in, " \t\n");
			if (!*in)
				break;
			while (*in && !strchr(" \t\n", *in)) {
				char q = *in;

				any = true;
				if (q == '\'' || q == '"') {
					for (in++; *in && *in != q; in++)
						moat_buf_putc(&b, *in);
					if (*in)
						in++;
				} else if (q == '\\' && in[1]) {
					moat_buf_putc(&b, in[1]);
					in += 2;
				} else {
					moat_buf_putc(&b, *in++);
				}
			}
		}
		if (b.oom) {
			r = an_oom(an);
			break;
		}
		if (any) {
			char *t = moat_arena_strndup(an->ar, b.data ? b.data : "", b.len);
			wref w = t ? synth_word(an, t, b.len, 0, 0) : NULL;

			if (!w) {
				r = an_oom(an);
				break;
			}
			if (out->n >= CMD_MAX_FIELDS)
				break;
			r = argv_push(an, out, t, w);
		}
	}
	moat_buf_release(&b);
	return r;
}

/* s with every occurrence of repl replaced by item (xargs -I, parallel {}) */
static const char *replace_all(struct an *an, const char *s, const char *repl, const char *item)
{
	struct moat_buf b = MOAT_BUF_INIT;
	size_t rl = strlen(repl);
	const char *p;
	char *t;

	if (!rl || !strstr(s, repl))
		return s;
	while ((p = strstr(s, repl))) {
		moat_buf_append(&b, s, (size_t)(p - s));
		moat_buf_puts(&b, item);
		s = p + rl;
	}
	moat_buf_puts(&b, s);
	t = b.oom ? NULL : moat_arena_strndup(an->ar, b.data ? b.data : "", b.len);
	moat_buf_release(&b);
	return t;
}

/* The command xargs (or parallel) runs, given its items: appended, or one
 * command per item with repl replaced. */
static int run_items(struct an *an, size_t v, size_t at, const struct argv_b *items,
		     const char *repl, const struct wctx *cx, int chain)
{
	const struct moat_cmdview *view = &an->a->views[v];
	struct wctx c = *cx;
	size_t runs = repl ? items->n : 1;
	int r;

	c.xargs = false;
	c.repl = NULL;
	if (runs > CMD_MAX_RESOLVED)
		runs = CMD_MAX_RESOLVED;
	for (size_t j = 0; j < runs; j++) {
		struct argv_b b;

		memset(&b, 0, sizeof(b));
		view = &an->a->views[v];
		for (size_t i = at; i < view->argc; i++) {
			const char *t = view->argv[i];
			wref w = an->vw[v][i];

			if (repl) {
				const char *nt = replace_all(an, t, repl, items->av[j]);

				if (!nt)
					return an_oom(an);
				if (nt != t && !(w = synth_word(an, nt, strlen(nt),
								w->flags & ~(unsigned)MOAT_SHW_TILDE,
								w->off)))
					return an_oom(an);
				t = nt;
			}
			if ((r = argv_push(an, &b, t, w)))
				return r;
		}
		for (size_t k = 0; !repl && k < items->n; k++)
			if ((r = argv_push(an, &b, items->av[k], items->wv[k])))
				return r;
		if (b.n && (r = child(an, v, b.av, b.wv, b.n, MOAT_VIEW_RESOLVED, &c, chain)))
			return r;
	}
	return 0;
}

/* The command xargs runs with an input not known: its items are one
 * unknown word appended (or each word holding the placeholder, unknown). */
static int xargs_unknown(struct an *an, size_t v, size_t at, const char *repl,
			 const struct wctx *cx, int chain)
{
	static const char unk[] = "$XARGS_INPUT";
	const struct moat_cmdview *view = &an->a->views[v];
	size_t n = view->argc - at, m = 0;
	struct moat_sh_span *sp;
	const char **av;
	wref *avw;

	if (!(av = moat_arena_alloc(an->ar, (n + 2) * sizeof(*av))) ||
	    !(avw = moat_arena_alloc(an->ar, (n + 2) * sizeof(*avw))) ||
	    !(sp = moat_arena_alloc(an->ar, sizeof(*sp))))
		return an_oom(an);
	memset(sp, 0, sizeof(*sp));
	sp->kind = MOAT_SH_SPAN_PARAM;
	sp->dq = true; /* one item is one word */
	for (size_t k = 0; k < n; k++) {
		wref w = an->vw[v][at + k];

		av[m] = view->argv[at + k];
		avw[m] = w;
		if (repl && k > 0 && strstr(av[m], repl)) {
			struct moat_sh_word *x;

			if (!(x = (struct moat_sh_word *)synth_word(an, av[m], w->len,
								    MOAT_SHW_EXPAND, w->off)))
				return an_oom(an);
			sp->len = x->len;
			x->spans = sp;
			avw[m] = x;
		}
		m++;
	}
	if (!repl) {
		struct moat_sh_word *x;

		if (!(x = (struct moat_sh_word *)synth_word(an, unk, sizeof(unk) - 1,
							    MOAT_SHW_EXPAND,
							    an->vw[v][at]->off)))
			return an_oom(an);
		sp->len = x->len;
		x->spans = sp;
		av[m] = unk;
		avw[m++] = x;
	}
	av[m] = NULL;
	avw[m] = NULL;
	return child(an, v, av, avw, m, MOAT_VIEW_DYNAMIC_ARGS, cx, chain);
}

/* The file an argument-file option of view v names (xargs -a FILE,
 * parallel --arg-file=FILE, parallel :::: FILE): the program reads it
 * itself. val is word w's text, or the part of it after the option
 * (inside: a tilde there is the value's own). "-" is standard input. */
static int note_arg_file(struct an *an, size_t v, size_t w, const char *val, bool inside)
{
	unsigned fl = an->vw[v][w]->flags;

	if (!val[0] || !strcmp(val, "-"))
		return 0;
	if (inside) {
		fl &= ~(unsigned)MOAT_SHW_TILDE;
		if (val[0] == '~')
			fl |= MOAT_SHW_TILDE;
	}
	return note_path(an, v, fl, val, 0);
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
	int delim = -1, r;
	bool from_file = false;
	struct vset in;

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
			const char *val = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : "";

			if (long_is(a + 2, "replace", 1))
				repl = eq ? eq + 1 : "{}";
			else if (long_is(a + 2, "null", 1))
				delim = 0;
			else if (long_is(a + 2, "arg-file", 1)) {
				from_file = true;
				/* SECURITY: xargs reads the file itself */
				if (eq ? (r = note_arg_file(an, v, i, eq + 1, true))
				       : i + 1 < argc && (r = note_arg_file(an, v, i + 1, val, false)))
					return r;
			}
			else if (long_is(a + 2, "delimiter", 1))
				delim = val[0] == '\\' && val[1] == 'n' ? '\n' : (unsigned char)val[0];
			if (!eq && n && in_list(larg, a + 2, n, true))
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
			if (ch == '0')
				delim = 0;
			if (ch == 'e' || ch == 'l')
				break;
			if (strchr("aEdLnPs", ch)) {
				const char *val = a[k + 1] ? a + k + 1 : i + 1 < argc ? argv[i + 1] : "";

				if (ch == 'a') {
					from_file = true;
					if (a[k + 1] ? (r = note_arg_file(an, v, i, a + k + 1, true))
						     : i + 1 < argc &&
							   (r = note_arg_file(an, v, i + 1, val, false)))
						return r;
				}
				if (ch == 'd')
					delim = val[0] == '\\' && val[1] == 'n' ? '\n' : (unsigned char)val[0];
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
	memset(&in, 0, sizeof(in));
	if (!from_file && (r = known_input(an, cx, &in)))
		return r;
	if (from_file || !in.n || (in.flags & VS_UNKNOWN)) {
		/* SECURITY: arguments from an input not known before running are
		 * unknown words: "xargs rm -rf" of "/" asks */
		if ((r = xargs_unknown(an, v, i, c.repl, &c, chain)))
			return r;
	} else if ((r = child(an, v, argv + i, an->vw[v] + i, argc - i, MOAT_VIEW_DYNAMIC_ARGS, &c,
			      chain))) {
		return r;
	}
	/* SECURITY: a literal input is substituted, so "echo / | xargs rm -rf" is
	 * checked as "rm -rf /" */
	if (from_file)
		return 0;
	for (size_t k = 0; k < in.n; k++) {
		struct argv_b items;

		memset(&items, 0, sizeof(items));
		if ((r = xargs_items(an, in.s[k], delim, c.repl != NULL, &items)) ||
		    (r = run_items(an, v, i, &items, c.repl, cx, chain)))
			return r;
	}
	return 0;
}

/* GNU parallel [OPTIONS] COMMAND ::: ARGS: each argument is a run of the
 * command ({} replaced, or appended); without ":::", arguments come from
 * the input (as xargs). A single command word is run by a shell. */
static int do_parallel(struct an *an, size_t v, const struct wctx *cx, int chain)
{
	const struct moat_cmdview *view = &an->a->views[v];
	static const char *const larg[] = {
		"arg-file", "arg-sep", "arg-file-sep", "basefile", "bf", "colsep", "delimiter",
		"eof", "env", "joblog", "jobs", "load", "max-args", "max-chars", "max-line-length",
		"max-replace-args", "memfree", "nice", "results", "res", "retries", "return",
		"sshlogin", "sshloginfile", "slf", "tagstring", "tmpdir", "timeout", "workdir", "wd",
		"replace", "extensionreplace", "basenamereplace", "dirnamereplace", "seqreplace",
		"block", "block-size", "header", "halt", "delay", "sshdelay", "ssh", "termseq",
		"limit", "profile", "shebang-wrap", "transferfile", "tf", NULL};
	static const struct optspec sp = {"aCdEIjJLlnNPsS", "", larg, NULL, false};
	bool stop = false;
	size_t i = skip_opts(view, 1, &sp, &stop, NULL), sep = i, argc = view->argc;
	struct wctx c = *cx;
	struct argv_b items;
	int r;

	while (sep < argc && strncmp(view->argv[sep], ":::", 3) != 0)
		sep++;
	/* SECURITY: the argument files parallel reads itself (-a FILE,
	 * --arg-file[=]FILE before the command, :::: FILE... after it) */
	for (size_t k = 1; k < i; k++) {
		const char *a = view->argv[k];

		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "-a") || (a[0] == '-' && a[1] == '-' && long_is(a + 2, "arg-file", 5) &&
					 !strchr(a, '='))) {
			if (k + 1 < i && (r = note_arg_file(an, v, k + 1, view->argv[k + 1], false)))
				return r;
			k++;
		} else if (!strncmp(a, "-a", 2)) {
			if ((r = note_arg_file(an, v, k, a + 2, true)))
				return r;
		} else if (a[0] == '-' && a[1] == '-' && long_is(a + 2, "arg-file", 5)) {
			if ((r = note_arg_file(an, v, k, strchr(a, '=') + 1, true)))
				return r;
		}
		view = &an->a->views[v];
	}
	for (size_t k = sep; k < argc; k++) {
		if (strncmp(view->argv[k], "::::", 4) != 0)
			continue;
		for (k++; k < argc && strncmp(view->argv[k], ":::", 3) != 0; k++)
			if ((r = note_arg_file(an, v, k, view->argv[k], false)))
				return r;
		k--;
		view = &an->a->views[v];
	}
	if (sep == i) {
		/* no command: each input is a command line (the arguments after
		 * :::, or the lines of standard input) */
		if (sep >= argc)
			return mark_stdin(an, v, cx, true);
		for (size_t k = sep + 1; k < argc; k++) {
			struct wctx n;

			if (!strncmp(view->argv[k], ":::", 3))
				continue;
			n = nest_ctx_of(cx, an->vw[v][k], v);
			if ((r = reparse(an, view->argv[k], an->vw[v][k]->len, &n,
					 (an->vw[v][k]->flags & MOAT_SHW_EXPAND) != 0, true)))
				return r;
			view = &an->a->views[v];
		}
		return 0;
	}
	c.xargs = true;
	c.repl = "{}";
	if (sep - i == 1 && strpbrk(view->argv[i], " \t;|&$`<>") &&
	    !(an->vw[v][i]->flags & MOAT_SHW_EXPAND)) {
		/* one word: a shell command line */
		struct wctx n = nest_ctx_of(cx, an->vw[v][i], v);

		if ((r = reparse(an, view->argv[i], an->vw[v][i]->len, &n, true, true)))
			return r;
	} else {
		struct argv_b b;

		memset(&b, 0, sizeof(b));
		for (size_t k = i; k < sep; k++)
			if ((r = argv_push(an, &b, view->argv[k], an->vw[v][k])))
				return r;
		if ((r = child(an, v, b.av, b.wv, b.n, MOAT_VIEW_DYNAMIC_ARGS, &c, chain)))
			return r;
	}
	view = &an->a->views[v];
	if (sep >= argc || strcmp(view->argv[sep], ":::") != 0)
		return 0; /* "::::" reads files: unknown */
	memset(&items, 0, sizeof(items));
	for (size_t k = sep + 1; k < argc && strncmp(view->argv[k], ":::", 3) != 0; k++)
		if ((r = argv_push(an, &items, view->argv[k], an->vw[v][k])))
			return r;
	if (sep - i == 1 && strpbrk(view->argv[i], " \t;|&$`<>")) {
		for (size_t j = 0; j < items.n && j < CMD_MAX_RESOLVED; j++) {
			const char *line = strstr(view->argv[i], "{}")
						   ? replace_all(an, view->argv[i], "{}", items.av[j])
						   : NULL;
			struct wctx n = nest_ctx_of(cx, an->vw[v][i], v);

			if (!line) {
				struct moat_buf b = MOAT_BUF_INIT;

				moat_buf_printf(&b, "%s %s", view->argv[i], items.av[j]);
				line = b.oom ? NULL : moat_arena_strndup(an->ar, b.data, b.len);
				moat_buf_release(&b);
			}
			if (!line)
				return an_oom(an);
			if ((r = reparse(an, line, strlen(line), &n, true, true)))
				return r;
			view = &an->a->views[v];
		}
		return 0;
	}
	{
		bool has_repl = false;

		for (size_t k = i; k < sep; k++)
			has_repl |= strstr(view->argv[k], "{}") != NULL;
		/* one run per argument */
		for (size_t j = 0; j < items.n && j < CMD_MAX_RESOLVED; j++) {
			struct argv_b one;

			memset(&one, 0, sizeof(one));
			if ((r = argv_push(an, &one, items.av[j], items.wv[j])))
				return r;
			if (has_repl) {
				if ((r = run_items(an, v, i, &one, "{}", cx, chain)))
					return r;
			} else {
				struct argv_b b;

				memset(&b, 0, sizeof(b));
				view = &an->a->views[v];
				for (size_t k = i; k < sep; k++)
					if ((r = argv_push(an, &b, view->argv[k], an->vw[v][k])))
						return r;
				if ((r = argv_push(an, &b, items.av[j], items.wv[j])) ||
				    (r = child(an, v, b.av, b.wv, b.n, MOAT_VIEW_RESOLVED, cx, chain)))
					return r;
			}
		}
	}
	return 0;
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

static int do_eval_like(struct an *an, size_t v, size_t from, const struct wctx *cx, bool child)
{
	struct moat_cmd_analysis *a = an->a;
	const struct moat_cmdview *view = &a->views[v];
	const wref *vw = an->vw[v];
	bool unknown = false;
	size_t len = 0, o = 0;
	struct wctx c;
	char *t;
	int r;

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
	if ((r = reparse(an, t, o, &c, unknown, child)))
		return r;
	/* SECURITY: eval of text we cannot see may set any variable */
	return unknown && !child ? havoc(an, true, true) : 0;
}

/* su/runuser/script/flock: -c CMD anywhere */
/* "-qc", "-lc": a cluster of letters, the last one c */
static bool flags_end_in_c(const char *a)
{
	size_t k = 1;

	if (a[0] != '-' || a[1] == '-' || a[1] == '\0')
		return false;
	while ((a[k] >= 'a' && a[k] <= 'z') || (a[k] >= 'A' && a[k] <= 'Z'))
		k++;
	return a[k] == '\0' && a[k - 1] == 'c';
}

static int find_dash_c(struct an *an, size_t v, const struct wctx *cx, bool *found)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];

	*found = false;
	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];
		const char *body = NULL;
		wref bw = vw[i];

		/* (su USER -- -c CMD: after "--" su passes -c to the shell) */
		if (strcmp(a, "--") == 0 && prog_kind(view->prog) != PK_SU)
			break;
		/* -c, or a cluster of flags ending in it (script -qc, su -lc) */
		if (strcmp(a, "-c") == 0 || strcmp(a, "--command") == 0 || flags_end_in_c(a)) {
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
			return reparse(an, body, strlen(body), &c, unknown, true);
		}
	}
	return 0;
}

/* ---- what builtins change ---------------------------------------------------- */

/* A command the shell itself runs (not one run by sudo, env, xargs ...),
 * whose effects on variables and directory count. */
static bool shell_level(const struct an *an, size_t v, int chain, const struct wctx *cx)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const char *pp;

	if (cx->xargs || (view->flags & MOAT_VIEW_VALUES))
		return false;
	if (chain == 0)
		return true;
	if (view->parent < 0)
		return false;
	pp = an->a->views[view->parent].prog;
	return strcmp(pp, "builtin") == 0 || strcmp(pp, "command") == 0 || strcmp(pp, "eval") == 0;
}

/* Does the absolute spelling raw ("..", "." not folded) pass through a
 * link the command makes (by its normalised name), or may it (links made
 * whose names are not known)? */
static bool through_made_link(const struct an *an, const char *raw)
{
	char pre[CMD_PATH_MAX];
	size_t l = strlen(raw);

	if (an->links_lost)
		return true;
	if (!an->nlinks || raw[0] != '/' || l >= sizeof(pre))
		return false;
	for (size_t i = 1; i <= l; i++) {
		if (i < l && raw[i] != '/')
			continue;
		memcpy(pre, raw, i);
		pre[i] = '\0';
		moat_cmd_norm_path(pre);
		for (size_t j = 0; j < an->nlinks; j++)
			if (!strcmp(pre, an->links[j].name))
				return true;
	}
	return false;
}

/* Does the command hold a program that may put entries, links among
 * them, anywhere (cp -P, a hard ln, mv, tar x: moat_cmd_places_entries)? */
static bool any_placer(const struct an *an)
{
	for (size_t u = 0; u < an->a->nviews; u++) {
		const struct moat_cmdview *e = &an->a->views[u];

		if (moat_cmd_places_entries(e->prog, (const char *const *)e->argv, e->argc))
			return true;
	}
	return false;
}

/* Is a component of the absolute spelling raw missing now, or a link
 * now (either may be one a program of the command puts there)? */
static bool new_or_link_on_way(const char *raw)
{
	char pre[CMD_PATH_MAX];
	size_t l = strlen(raw);
	struct stat st;

	if (l >= sizeof(pre))
		return true;
	for (size_t i = 1; i <= l; i++) {
		if (i < l && raw[i] != '/')
			continue;
		memcpy(pre, raw, i);
		pre[i] = '\0';
		if (lstat(pre, &st) < 0 || S_ISLNK(st.st_mode))
			return true;
	}
	return false;
}

/* cd, pushd, popd: where the shell is afterwards */
static int do_cd(struct an *an, size_t v, int kind)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	char buf[CMD_PATH_MAX];
	struct vset nw = {.n = 0, .flags = 0};
	size_t i = 1;
	bool placed = false;
	int got;

	while (i < view->argc && view->argv[i][0] == '-' && view->argv[i][1] &&
	       strspn(view->argv[i] + 1, "LPe@n") == strlen(view->argv[i] + 1))
		i++;
	if (i < view->argc && strcmp(view->argv[i], "--") == 0)
		i++;
	if (kind == PK_POPD || (i >= view->argc && kind == PK_PUSHD) ||
	    (i < view->argc && (strcmp(view->argv[i], "-") == 0 || view->argv[i][0] == '+'))) {
		nw = *an->st.cwd;
		nw.flags |= VS_UNKNOWN;
	} else if (i >= view->argc) {
		const char *h = home_now(an);

		if (h)
			vs_one(&nw, h);
		else
			nw.flags |= VS_UNKNOWN;
	} else {
		const char *t = view->argv[i];
		const struct var *cdp = an->untracked ? NULL : var_find(&an->st, "CDPATH", 6);

		/* SECURITY: with CDPATH set, a relative name is looked up in
		 * each of its directories first ("CDPATH=/; cd etc" is /etc) */
		if ((an->untracked || cdp) && t[0] != '/' && t[0] != '.' &&
		    !(vw[i]->flags & (MOAT_SHW_TILDE | MOAT_SHW_EXPAND))) {
			if (!cdp || cdp->v.n != 1 || (cdp->v.flags & VS_UNKNOWN))
				nw.flags |= VS_UNKNOWN;
			else
				for (const char *d = cdp->v.s[0]; *d;) {
					size_t dl = strcspn(d, ":");

					if (d[0] != '/') {
						nw.flags |= VS_UNKNOWN; /* (relative: below the cwd) */
					} else if (dl + strlen(t) + 2 < sizeof(buf)) {
						char *x;

						memcpy(buf, d, dl);
						buf[dl] = '/';
						memcpy(buf + dl + 1, t, strlen(t) + 1);
						moat_cmd_norm_path(buf);
						if (!(x = moat_arena_strndup(an->ar, buf, strlen(buf))))
							return an_oom(an);
						vs_add(&nw, x);
					}
					d += dl + (d[dl] == ':');
				}
		}
		for (size_t k = 0;
		     (got = abs_path_k(an, vw[i]->flags, view->argv[i], k, buf, sizeof(buf))) != 0;
		     k++) {
			char *d;

			if (got < 0) {
				nw.flags |= VS_UNKNOWN;
				continue;
			}
			if (!(d = moat_arena_strndup(an->ar, buf, strlen(buf))))
				return an_oom(an);
			vs_add(&nw, d);
		}
		/* SECURITY: "cd x/.." goes to where the link x leads's parent
		 * with -P, set -P, or when the lexical place does not exist (bash
		 * falls back to chdir): that place is one it may be in too */
		if (!(vw[i]->flags & MOAT_SHW_EXPAND) && view->argv[i][0] != '~' &&
		    moat_path_has_dotdot(view->argv[i])) {
			const struct vset *cw = an->st.cwd;
			size_t nk = view->argv[i][0] == '/' ? 1 : cw->n;

			for (size_t k = 0; k < nk; k++) {
				char raw[CMD_PATH_MAX], ph[CMD_PATH_MAX];
				char *d;
				int l = view->argv[i][0] == '/'
					    ? snprintf(raw, sizeof(raw), "%s", view->argv[i])
					    : snprintf(raw, sizeof(raw), "%s/%s", cw->s[k], view->argv[i]);

				if (l < 0 || (size_t)l >= sizeof(raw) ||
				    !moat_path_physical("/", raw, ph, sizeof(ph))) {
					nw.flags |= VS_UNKNOWN;
					continue;
				}
				if (!(d = moat_arena_strndup(an->ar, ph, strlen(ph))))
					return an_oom(an);
				vs_add(&nw, d);
			}
		}
		/* SECURITY: into or through a link the command makes, the shell
		 * is where that link leads: "..", "cd -P ..", "set -P" from there
		 * are its target's parent, which no name shows */
		/* (whatever the spelling of a way back up: "..", a PWD cut,
		 * dirname) */
		placed = any_placer(an);
		if ((an->nlinks || an->links_lost || placed) && (vw[i]->flags & MOAT_SHW_EXPAND))
			nw.flags |= VS_UNKNOWN;
		if ((an->nlinks || an->links_lost || placed) && !(vw[i]->flags & MOAT_SHW_EXPAND)) {
			const struct vset *cw = an->st.cwd;
			const char *to = view->argv[i];
			size_t nk = to[0] == '/' ? 1 : cw->n;

			if (to[0] == '~')
				nw.flags |= VS_UNKNOWN;
			for (size_t k = 0; k < nk && to[0] != '~'; k++) {
				char raw[CMD_PATH_MAX];
				int l = to[0] == '/' ? snprintf(raw, sizeof(raw), "%s", to)
						     : snprintf(raw, sizeof(raw), "%s/%s", cw->s[k], to);

				if (l < 0 || (size_t)l >= sizeof(raw) || through_made_link(an, raw) ||
				    (placed && new_or_link_on_way(raw)))
					nw.flags |= VS_UNKNOWN;
			}
		}
		if (!nw.n)
			nw.flags |= VS_UNKNOWN;
	}
	{
		struct vset *nc = moat_arena_alloc(an->ar, sizeof(*nc));

		if (!nc)
			return an_oom(an);
		*nc = nw;
		an->st.cwd = nc;
	}
	st_touch(an);
	return 0;
}

static size_t name_len(const char *a)
{
	size_t n = 0;

	if (!is_name_char(a[0]) || (a[0] >= '0' && a[0] <= '9'))
		return 0;
	while (is_name_char(a[n]))
		n++;
	return n;
}

/* export, declare, typeset, local, readonly NAME=VALUE */
static int do_declare(struct an *an, size_t v, const struct wctx *cx)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	bool exported = strcmp(view->prog, "export") == 0, opaque = false, done = false;
	int r;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];
		size_t nl = name_len(a);
		struct vset val;

		if (!done && (a[0] == '-' || a[0] == '+') && a[1]) {
			if (strcmp(a, "--") == 0) {
				done = true;
				continue;
			}
			/* SECURITY: a name reference makes any later assignment
			 * change another variable: stop tracking them */
			if (strchr(a, 'n') && !exported) {
				an->untracked = true;
				return 0;
			}
			if (a[0] == '-' && strchr(a, 'x'))
				exported = true;
			if (strpbrk(a, "iaAluc"))
				opaque = true;
			continue;
		}
		if (!nl)
			continue;
		if (a[nl] != '=') {
			if (a[nl] == '\0' && !exported && (r = havoc_var(an, a, nl)))
				return r;
			if (a[nl] != '\0' && (r = havoc_var(an, a, nl)))
				return r; /* NAME+=, NAME[i]= */
			if (a[nl] == '\0' && exported) {
				struct var *x = var_find(&an->st, a, nl);

				if (x && (r = var_set(an, a, nl, &x->v, false, true)))
					return r;
			}
			continue;
		}
		if (exported) {
			/* the program started next gets it in its environment */
			if ((r = env_assign_check(an, v, vw[i], a, cx)))
				return r;
			view = &an->a->views[v];
			vw = an->vw[v];
			a = view->argv[i];
		}
		if (opaque || (vw[i]->flags & MOAT_SHW_EXPAND)) {
			vs_unknown(&val);
		} else if (a[nl + 1] == '~') {
			char ub[256];
			const char *e = a + nl + 1 + strcspn(a + nl + 1, "/:");
			const char *d = tilde_dir(an, a + nl + 2, (size_t)(e - a - nl - 2), ub, sizeof(ub));
			char *s;

			if (!d) {
				vs_unknown(&val);
			} else {
				size_t dl = strlen(d), el = strlen(e);

				if (!(s = moat_arena_alloc(an->ar, dl + el + 1)))
					return an_oom(an);
				memcpy(s, d, dl);
				memcpy(s + dl, e, el + 1);
				vs_one(&val, s);
			}
		} else {
			vs_one(&val, a + nl + 1);
		}
		if ((r = var_set(an, a, nl, &val, false, exported)))
			return r;
	}
	return 0;
}

/* builtins that change variables, positional parameters or the directory */
static int track(struct an *an, size_t v, int kind, const struct wctx *cx)
{
	const struct moat_cmdview *view = &an->a->views[v];
	int r;

	switch (kind) {
	case PK_CD:
	case PK_PUSHD:
	case PK_POPD:
		return do_cd(an, v, kind);
	case PK_DECLARE:
		return do_declare(an, v, cx);
	case PK_READ:
		for (size_t i = 1; i < view->argc; i++) {
			size_t nl = name_len(view->argv[i]);

			if (nl && !view->argv[i][nl] && (r = forget_var(an, view->argv[i], nl)))
				return r;
		}
		return 0;
	case PK_UNSET:
		for (size_t i = 1; i < view->argc; i++) {
			const char *a = view->argv[i];
			size_t nl = name_len(a);
			struct vset e;

			if (strcmp(a, "-f") == 0)
				return 0;
			vs_one(&e, "");
			if (nl && !a[nl] && (r = var_set(an, a, nl, &e, false, false)))
				return r;
		}
		return 0;
	case PK_SETPOS:
		if (cx->pos && (strcmp(view->prog, "shift") == 0 || view->argc > 1))
			cx->pos->unknown = true;
		return 0;
	case PK_LET:
		for (size_t i = 1; i < view->argc; i++)
			if ((r = arith_names(an, view->argv[i])))
				return r;
		return 0;
	case PK_SOURCE:
		return havoc(an, true, true);
	default:
		break;
	}
	if (view->prog[0] == 'p' && strcmp(view->prog, "printf") == 0 && view->argc > 2 &&
	    strncmp(view->argv[1], "-v", 2) == 0) {
		const char *nm = view->argv[1][2] ? view->argv[1] + 2 : view->argv[2];
		size_t nl = name_len(nm);

		return nl ? forget_var(an, nm, nl) : havoc(an, true, false);
	}
	/* a function defined in this command: its body may change anything */
	for (size_t f = 0; f < an->nfuncs; f++)
		if (strcmp(view->prog, an->funcs[f]) == 0)
			return havoc(an, true, true);
	return 0;
}

/* Words of these name no file worth checking (data, code, or a wrapped command). */
static bool collects_paths(int kind, const char *prog)
{
	if ((wrapper_kind(kind) && kind != PK_RUNAFTER) || (kind >= PK_CD && kind <= PK_LET) ||
	    kind == PK_SHELL ||
	    kind == PK_FSHELL || kind == PK_EVAL || kind == PK_ALIAS || kind == PK_TRAP)
		return false;
	switch (prog[0]) {
	case 'e':
		return strcmp(prog, "echo") != 0;
	case 'p':
		return strcmp(prog, "printf") != 0;
	case 't':
		return strcmp(prog, "test") != 0 && strcmp(prog, "true") != 0;
	case '[':
	case ':':
		return prog[1] != '\0' && strcmp(prog, "[[") != 0;
	default:
		return true;
	}
}

/* alias NAME=VALUE, remembered for the commands after it. SECURITY: more
 * aliases than are remembered ask (a later command's program is unknown). */
static int alias_define(struct an *an, size_t v, const char *def)
{
	if (!an->alias && !(an->alias = moat_arena_alloc(an->ar, CMD_MAX_ALIASES * sizeof(char *))))
		return an_oom(an);
	if (an->nalias >= CMD_MAX_ALIASES)
		return add_finding(an, v, MOAT_FINDING_ASK, "alias-unknown",
				   "more than %d aliases are defined: the programs run cannot be known",
				   CMD_MAX_ALIASES);
	an->alias[an->nalias++] = def;
	return 0;
}

/* a value the shell splits into the same words: no quoting, expansion or syntax */
static bool alias_plain(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("_-./:+@%=,~ \t", *s)))
			return false;
	return true;
}

/* SECURITY: a program word that names an alias defined earlier in the same
 * command runs the alias's value ("alias r=rm; r -rf /"): a plain value is
 * expanded into a view of its own, any other value asks. */
static int alias_use(struct an *an, size_t v, const struct wctx *cx, int chain)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	const char *prog = view->argv[0], *val = NULL;
	size_t k, pl = strlen(prog), n = 0;
	const char *argv[CMD_MAX_ALIAS_WORDS + 1];
	wref wv[CMD_MAX_ALIAS_WORDS + 1];
	const char **av;
	wref *avw;
	int r;

	if (vw[0]->flags & MOAT_SHW_QUOTED)
		return 0; /* "r" and \r are not expanded */
	for (k = an->nalias; k-- > 0;) {
		if (k < 64 && (an->alias_busy & (1ull << k)))
			continue;
		if (strncmp(an->alias[k], prog, pl) == 0 && an->alias[k][pl] == '=') {
			val = an->alias[k] + pl + 1;
			break;
		}
	}
	if (!val)
		return 0;
	if (!alias_plain(val))
		return add_finding(an, v, MOAT_FINDING_ASK, "alias-unknown",
				   "'%s' is an alias whose expansion is not analysed", prog);
	while (*val) {
		size_t l;

		val += strspn(val, " \t");
		if (!*val)
			break;
		l = strcspn(val, " \t");
		if (n == CMD_MAX_ALIAS_WORDS)
			return add_finding(an, v, MOAT_FINDING_ASK, "alias-unknown",
					   "'%s' is an alias whose expansion is not analysed", prog);
		if (!(argv[n] = moat_arena_strndup(an->ar, val, l)) ||
		    !(wv[n] = synth_word(an, argv[n], l, val[0] == '~' ? MOAT_SHW_TILDE : 0,
					 vw[0]->off)))
			return an_oom(an);
		n++;
		val += l;
	}
	if (n == 0)
		return suffix(an, v, 1, 0, cx, chain);
	if (!(av = moat_arena_alloc(an->ar, (n + view->argc) * sizeof(*av))) ||
	    !(avw = moat_arena_alloc(an->ar, (n + view->argc) * sizeof(*avw))))
		return an_oom(an);
	memcpy(av, argv, n * sizeof(*av));
	memcpy(avw, wv, n * sizeof(*avw));
	for (size_t i = 1; i < view->argc; i++) {
		av[n + i - 1] = view->argv[i];
		avw[n + i - 1] = vw[i];
	}
	av[n + view->argc - 1] = NULL;
	avw[n + view->argc - 1] = NULL;
	if (k < 64)
		an->alias_busy |= 1ull << k;
	r = child(an, v, av, avw, n + view->argc - 1, 0, cx, chain);
	if (k < 64)
		an->alias_busy &= ~(1ull << k);
	return r;
}

/* dir (absolute) with the longest part of it that exists resolved (the
 * rest as written); as it was when nothing of it resolves or it would
 * not fit. */
static void real_head(char *dir, size_t cap)
{
	char head[CMD_PATH_MAX], real[CMD_PATH_MAX]; /* (PATH_MAX: realpath) */
	size_t l = strlen(dir);

	if (l >= sizeof(head))
		return;
	memcpy(head, dir, l + 1);
	while (!realpath(head, real)) {
		char *sl = strrchr(head, '/');

		if (!sl || sl == head)
			return;
		*sl = '\0';
	}
	l = strlen(head);
	if (strlen(real) + strlen(dir + l) + 1 > cap)
		return;
	memmove(dir + strlen(real), dir + l, strlen(dir + l) + 1);
	memcpy(dir, real, strlen(real));
	if (dir[0] == '/' && dir[1] == '/')
		memmove(dir, dir + 1, strlen(dir)); /* (real "/" and the rest "/x") */
}

static int add_link(struct an *an, const char *name, const char *target)
{
	struct link *l;

	if (!an->links && !(an->links = moat_arena_alloc(an->ar, CMD_MAX_LINKS * sizeof(*l))))
		return an_oom(an);
	if (an->nlinks == CMD_MAX_LINKS) {
		an->links_lost = true;
		return 0;
	}
	l = &an->links[an->nlinks];
	if (!(l->name = moat_arena_strndup(an->ar, name, strlen(name))) ||
	    (target && !(l->target = moat_arena_strndup(an->ar, target, strlen(target)))))
		return an_oom(an);
	if (!target)
		l->target = NULL;
	an->nlinks++;
	return 0;
}

/* ln -s TARGET [NAME], ln -s TARGET... DIR, ln -s -t DIR TARGET...: the
 * links it makes, remembered for the paths after it */
static int note_links(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];
	size_t ops[CMD_MAX_LINKS], nops = 0;
	const char *tdir = NULL;
	unsigned tflags = 0;
	bool sym = false, done = false, no_dir = false, rel = false;
	char nb[CMD_PATH_MAX], tb[CMD_PATH_MAX];
	int r;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (!done && strcmp(a, "--") == 0) {
			done = true;
		} else if (!done && a[0] == '-' && a[1] == '-') {
			if (long_is(a + 2, "symbolic", 2))
				sym = true;
			else if (long_is(a + 2, "relative", 3))
				rel = true;
			else if (long_is(a + 2, "no-target-directory", 4))
				no_dir = true;
			else if (long_is(a + 2, "target-directory", 3)) {
				const char *eq = strchr(a, '=');

				if (eq) {
					tdir = eq + 1;
					tflags = vw[i]->flags;
				} else if (i + 1 < view->argc) {
					tdir = view->argv[++i];
					tflags = vw[i]->flags;
				}
			} else if (long_is(a + 2, "suffix", 2) && !strchr(a, '=')) {
				i++;
			}
		} else if (!done && a[0] == '-' && a[1]) {
			for (size_t k = 1; a[k]; k++) {
				if (a[k] == 's')
					sym = true;
				else if (a[k] == 'r')
					rel = true;
				else if (a[k] == 'T')
					no_dir = true;
				else if (a[k] == 't' || a[k] == 'S') {
					if (!a[k + 1] && i + 1 >= view->argc)
						break;
					if (a[k] == 't') {
						tdir = a[k + 1] ? a + k + 1 : view->argv[i + 1];
						tflags = vw[a[k + 1] ? i : i + 1]->flags;
					}
					if (!a[k + 1])
						i++;
					break;
				}
			}
		} else if (nops < CMD_MAX_LINKS) {
			ops[nops++] = i;
		} else {
			an->links_lost = true;
		}
	}
	if (!sym || !nops)
		return 0;
	/* the names made, each with its target */
	for (size_t j = 0; j < nops; j++) {
		const char *t = view->argv[ops[j]], *base, *name = NULL;
		unsigned nflags = 0;
		bool known;
		int got;

		if (!tdir && nops > 1 && j == nops - 1)
			break; /* the last operand is the name (or directory) */
		base = strrchr(t, '/');
		base = base ? base + 1 : t;
		/* (form 1 first: its name is not to be read through the link
		 * form 0 records) */
		for (int form = 1; form >= 0; form--) {
			/* form 0: NAME given (or DIR/base); form 1: NAME an existing directory */
			char nm[CMD_PATH_MAX];

			bool odd = !base[0] || strcmp(base, ".") == 0 || strcmp(base, "..") == 0;

			if (tdir || nops == 1) {
				if (form || odd)
					continue; /* "ln -s .. -t D" fails: D/.. exists */
				snprintf(nm, sizeof(nm), "%s/%s", tdir ? tdir : ".", base);
				name = nm;
				nflags = tdir ? tflags : 0;
			} else if (form == 0) {
				const char *lb;

				name = view->argv[ops[nops - 1]];
				nflags = vw[ops[nops - 1]]->flags;
				/* ("ln -s x ." makes ./x: "." itself is no link) */
				lb = strrchr(name, '/');
				lb = lb ? lb + 1 : name;
				if (!lb[0] || !strcmp(lb, ".") || !strcmp(lb, ".."))
					continue;
			} else {
				if (no_dir || odd)
					continue;
				snprintf(nm, sizeof(nm), "%s/%s", view->argv[ops[nops - 1]], base);
				name = nm;
				nflags = vw[ops[nops - 1]]->flags;
			}
			for (size_t k = 0; (got = abs_path_k(an, nflags, name, k, nb, sizeof(nb))) != 0;
			     k++) {
				if (got < 0) {
					/* (its name not known: a link anywhere) */
					an->links_lost = true;
					continue;
				}
				/* a relative target is relative to the link's directory */
				known = !(vw[ops[j]]->flags & MOAT_SHW_EXPAND);
				if (known && t[0] == '/' && moat_path_has_dotdot(t)) {
					/* (absolute with "..": as the kernel reads it) */
					known = moat_path_physical("/", t, tb, sizeof(tb));
				} else if (known && abs_path(an, vw[ops[j]]->flags, t, tb, sizeof(tb))) {
					/* absolute */
				} else if (known && rel) {
					/* ln -r: the target as named from here, made relative */
					known = abs_path_k(an, vw[ops[j]]->flags, t, 0, tb, sizeof(tb)) > 0;
				} else if (known && t[0] != '/' && t[0] != '~' &&
					   strlen(nb) + strlen(t) + 2 < sizeof(tb)) {
					char *sl;

					moat_strlcpy(tb, nb, sizeof(tb));
					sl = strrchr(tb, '/');
					*sl = '\0';
					/* SECURITY: the kernel reads it from the link's real
					 * directory, through a link already there (src/d ->
					 * elsewhere: src/d/h -> ../home) */
					real_head(tb, sizeof(tb));
					sl = tb + strlen(tb);
					snprintf(sl, sizeof(tb) - (size_t)(sl - tb), "/%s", t);
					/* (and a ".." after a link there is its target's
					 * parent: d/../../home with d -> x/deep) */
					if (moat_path_has_dotdot(t)) {
						char ph[CMD_PATH_MAX];

						known = moat_path_physical("/", tb, ph, sizeof(ph));
						if (known)
							moat_strlcpy(tb, ph, sizeof(tb));
					}
					known = known && moat_cmd_norm_proc(tb, sizeof(tb)) == 0;
				} else {
					known = false;
				}
				if ((r = add_link(an, nb, known ? tb : NULL)))
					return r;
			}
		}
	}
	return 0;
}

/* SECURITY: with globskipdots off (bash 5.2: "shopt -u globskipdots"),
 * ".*" and ".[.]" match ".." too, so a glob read afterwards may climb out
 * of where its words show ("cat /etc/.[.]/etc/shadow"): asks, as an
 * option whose name is not known does. */
static int check_shopt(struct an *an, size_t v)
{
	const struct moat_cmdview *view = &an->a->views[v];
	const wref *vw = an->vw[v];

	bool unset = false, named = false;

	for (size_t i = 1; i < view->argc; i++) {
		const char *a = view->argv[i];

		if (vw[i]->flags & MOAT_SHW_EXPAND)
			unset = named = true;
		else if (a[0] == '-' && strchr(a, 'u'))
			unset = true;
		else if (!strcmp(a, "globskipdots"))
			named = true;
	}
	if (unset && named)
		return add_finding(an, v, MOAT_FINDING_ASK, "command:glob-options",
				   "'%s' changes what a glob may match ('..' among it)", view->text);
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
	if (an->nalias && (r = alias_use(an, v, cx, chain)))
		return r;
	view = &a->views[v];
	kind = prog_kind(view->prog);
	if (kind == PK_CP && strcmp(view->prog, "ln") == 0 && (r = note_links(an, v)))
		return r;
	if (!strcmp(view->prog, "shopt") && (r = check_shopt(an, v)))
		return r;
	if (kind >= PK_RM || kind == PK_FIND) {
		if ((r = check_view(an, v, kind, cx)))
			return r;
		view = &a->views[v];
	}
	if (!strcmp(view->prog, "git")) {
		if ((r = check_git_config(an, v)) || (r = git_runs(an, v, cx, chain)))
			return r;
		view = &a->views[v];
	} else if (an->hardline) {
		if ((r = prog_runs(an, v, cx)))
			return r;
		view = &a->views[v];
	}
	if (kind != PK_CURL && kind != PK_WGET && (r = check_output_opt(an, v)))
		return r;
	/* the files it names, for the policy's denied paths */
	if (!(view->flags & MOAT_VIEW_VALUES) && collects_paths(kind, view->prog)) {
		if ((r = note_operands(an, v)))
			return r;
		view = &a->views[v];
	}
	/* SECURITY: a file downloaded earlier in the same command, run */
	if (an->ndl && memchr(view->argv[0], '/', vw[0]->len) &&
	    is_download(an, vw[0]->flags, view->argv[0]) &&
	    (r = ask_download_exec(an, v, view->argv[0])))
		return r;
	if (shell_level(an, v, chain, cx) && (r = track(an, v, kind, cx)))
		return r;
	view = &a->views[v];
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
		if (i < view->argc && (seen['s'] || seen['i'] ||
				       wrapper_has(view, i, "--shell") || wrapper_has(view, i, "--login"))) {
			/* sudo -s CMD ARGS: the shell runs "CMD ARGS" as a command
			 * line (sudo -s 'rm -rf /') */
			if ((r = reparse_joined(an, v, i, cx)))
				return r;
			view = &a->views[v];
		}
		if (i < view->argc) {
			size_t di = 0;
			const char *dir = wrapper_chdir(view, i, PK_SUDO, &di);

			return suffix_in(an, v, i, dir, dir ? vw[di]->flags : 0, cx, chain);
		}
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
	case PK_TOYBOX:
		if (view->argc > 1 && view->argv[1][0] != '-')
			return suffix(an, v, 1, 0, cx, chain);
		return 0;
	case PK_PARALLEL:
		return do_parallel(an, v, cx, chain);
	case PK_STRACE: {
		static const char *const larg[] = {"output", "signal", "trace", "abbrev", "verbose",
						   "raw", "read", "write", "fault", "inject",
						   "status", "attach", "user", "env", "string-limit",
						   "columns", "summary-sort-by", "trace-path",
						   "decode-fds", "quiet", NULL};
		static const char *const lstop[] = {"attach", NULL};
		static const struct optspec sp = {"abeIoOpPsSuEXU", "p", larg, lstop, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_LTRACE: {
		static const char *const larg[] = {"output", "library", NULL};
		static const struct optspec sp = {"aAeDFlnopsuwx", "p", larg, NULL, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_VALGRIND: {
		static const struct optspec sp = {"", "", NULL, NULL, false};

		return suffix(an, v, skip_opts(view, 1, &sp, &stop, NULL), 0, cx, chain);
	}
	case PK_FAKEROOT: {
		static const char *const larg[] = {"lib", "faked", NULL};
		static const char *const lstop[] = {"help", "version", NULL};
		static const struct optspec sp = {"lsib", "hv", larg, lstop, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_LDSO: {
		static const char *const larg[] = {"library-path", "inhibit-rpath", "audit",
						   "preload", "argv0", "glibc-hwcaps-prefix",
						   "glibc-hwcaps-mask", NULL};
		static const char *const lstop[] = {"list", "verify", "help", "version",
						    "list-tunables", "list-diagnostics", NULL};
		static const struct optspec sp = {"", "", larg, lstop, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_PERF: {
		/* perf stat|record|trace|... [OPTIONS] [--] PROG */
		static const char *const larg[] = {"event", "output", "pid", "tid", "cpu",
						   "cgroup", "repeat", "field-separator",
						   "interval-print", "metrics", "delay", "freq",
						   "count", "mmap-pages", "call-graph", "branch-filter",
						   "uid", "input", "post", "pre", "log-fd", "expr",
						   "control", "duration", NULL};
		static const char *const lstop[] = {"help", "version", NULL};
		static const struct optspec sp = {"eopCtGrIxMDFcmjuL", "h", larg, lstop, false};

		for (i = 2; i < view->argc; i++)
			if (strcmp(view->argv[i], "--") == 0)
				return suffix(an, v, i + 1, 0, cx, chain);
		if (view->argc < 3 || is_opt(view->argv[1]))
			return 0;
		i = skip_opts(view, 2, &sp, &stop, NULL);
		if (!stop && i < view->argc && strcmp(view->argv[1], "sched") != 0 &&
		    strcmp(view->argv[1], "mem") != 0 && strcmp(view->argv[1], "kvm") != 0)
			return suffix(an, v, i, 0, cx, chain);
		/* perf sched record PROG, perf mem record PROG ... */
		if (!stop && i + 1 < view->argc && strcmp(view->argv[i], "record") == 0)
			return suffix(an, v, skip_opts(view, i + 1, &sp, &stop, NULL), 0, cx,
				      chain);
		return 0;
	}
	case PK_FIREJAIL: {
		/* options are single words (--name=value) */
		static const struct optspec sp = {"", "", NULL, NULL, false};

		return suffix(an, v, skip_opts(view, 1, &sp, &stop, NULL), 0, cx, chain);
	}
	case PK_BWRAP: {
		static const char *const two[] = {"bind", "bind-try", "ro-bind", "ro-bind-try",
						  "dev-bind", "dev-bind-try", "symlink", "chmod",
						  "setenv", "file", "bind-data", "ro-bind-data",
						  "bind-fd", "ro-bind-fd", NULL};
		static const char *const one[] = {"tmpfs", "dev", "proc", "dir", "chdir",
						  "unsetenv", "lock-file", "sync-fd", "info-fd",
						  "json-status-fd", "block-fd", "userns-block-fd",
						  "seccomp", "add-seccomp-fd", "exec-label",
						  "file-label", "uid", "gid", "hostname", "args",
						  "userns", "userns2", "pidns", "cap-add", "cap-drop",
						  "perms", "size", "remount-ro", "mqueue", "overlay-src",
						  "tmp-overlay", "ro-overlay", "argv0", NULL};

		for (i = 1; i < view->argc && is_opt(view->argv[i]);) {
			const char *o = view->argv[i];

			if (strcmp(o, "--") == 0) {
				i++;
				break;
			}
			if (o[1] != '-') {
				i++;
				continue;
			}
			if (in_list(two, o + 2, strlen(o + 2), false))
				i += 3;
			else if (strcmp(o + 2, "overlay") == 0)
				i += 4;
			else if (in_list(one, o + 2, strlen(o + 2), false))
				i += 2;
			else
				i++;
		}
		return suffix(an, v, i, 0, cx, chain);
	}
	case PK_PROOT: {
		static const char *const larg[] = {"rootfs", "bind", "mount", "qemu", "pwd", "cwd",
						   "verbose", "kernel-release", "change-id", NULL};
		static const char *const lstop[] = {"help", "version", "usage", NULL};
		static const struct optspec sp = {"rbmqwvkiRSp", "hV", larg, lstop, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_CPULIMIT: {
		static const char *const larg[] = {"limit", "pid", "exe", "path", "cpu", NULL};
		static const char *const lstop[] = {"help", NULL};
		static const struct optspec sp = {"lpePc", "h", larg, lstop, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_CATCHSEGV:
		return suffix(an, v, 1, 0, cx, chain);
	case PK_SSHAGENT: {
		/* ssh-agent [-a SOCK] [-E HASH] [-P LIST] [-O OPT] [-t LIFE] CMD... */
		static const struct optspec sp = {"aEPOt", "k", NULL, NULL, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_DBUSRUN: {
		static const char *const larg[] = {"config-file", "dbus-daemon", NULL};
		static const char *const lstop[] = {"help", "version", NULL};
		static const struct optspec sp = {"", "", larg, lstop, false};

		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_SYSTEMDRUN: {
		/* systemd-run [OPTIONS] CMD...: run now, or later (--on-calendar) */
		static const char *const larg[] = {
		    "unit", "property", "description", "slice", "setenv", "host", "machine",
		    "uid", "gid", "nice", "working-directory", "on-active", "on-boot",
		    "on-startup", "on-unit-active", "on-unit-inactive", "on-calendar",
		    "on-clock-change", "on-timezone-change", "path-property", "socket-property",
		    "timer-property", "service-type", "expand-environment", "working-directory",
		    NULL};
		static const char *const lstop[] = {"help", "version", NULL};
		static const struct optspec sp = {"pEHMu", "h", larg, lstop, false};
		size_t di = 0;
		const char *dir = NULL;

		i = skip_opts(view, 1, &sp, &stop, NULL);
		for (size_t k = 1; k < i; k++)
			if (!strncmp(view->argv[k], "--working-directory=", 20)) {
				dir = view->argv[k] + 20;
				di = k;
			} else if (!strcmp(view->argv[k], "--working-directory") && k + 1 < i) {
				dir = view->argv[k + 1];
				di = k + 1;
			}
		return stop ? 0 : suffix_in(an, v, i, dir, dir ? vw[di]->flags : 0, cx, chain);
	}
	case PK_XTERM:
		/* xterm -e CMD ARGS..., gnome-terminal -- CMD / -x CMD; a -e
		 * STRING of gnome-terminal and konsole is a command line */
		for (i = 1; i < view->argc; i++) {
			const char *o = view->argv[i];

			if (!strcmp(o, "--") || !strcmp(o, "-x") || !strcmp(o, "--execute"))
				return suffix(an, v, i + 1, 0, cx, chain);
			if (!strcmp(o, "-e") || !strcmp(o, "--command")) {
				if (i + 2 == view->argc && strcmp(view->prog, "xterm") &&
				    strcmp(view->prog, "uxterm")) {
					return reparse_word(an, v, i + 1, cx);
				}
				return suffix(an, v, i + 1, 0, cx, chain);
			}
		}
		return 0;
	case PK_SCREEN: {
		/* screen [-dmS NAME ...] CMD ARGS...; -X stuff TEXT types TEXT
		 * into the session's shell */
		static const struct optspec sp = {"ScehpstTX", "lrRxvQ", NULL, NULL, false};

		for (size_t k = 1; k + 2 < view->argc; k++)
			if (!strcmp(view->argv[k], "-X") && !strcmp(view->argv[k + 1], "stuff")) {
				return reparse_word(an, v, k + 2, cx);
			}
		i = skip_opts(view, 1, &sp, &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_TMUX: {
		/* tmux [global options] new-session|new-window|split-window|
		 * respawn-*|run-shell [options] [SHELL-COMMAND...]; send-keys
		 * types into a shell */
		static const char *const subs[] = {
		    "new-session", "new", "new-window", "neww", "split-window", "splitw",
		    "respawn-pane", "respawnp", "respawn-window", "respawnw", "run-shell",
		    "run", "display-popup", "popup", "send-keys", "send", NULL};
		static const char *const witharg = "ceFfLlnNsStTxy";
		size_t k = 1;

		/* global options: -L NAME, -S PATH, -f FILE, -c CMD (a shell command) */
		while (k < view->argc && view->argv[k][0] == '-') {
			const char *o = view->argv[k];

			if (!strcmp(o, "-c") && k + 1 < view->argc) {
				return reparse_word(an, v, k + 1, cx);
			}
			k += (o[1] && strchr("LSfT", o[1]) && !o[2]) ? 2 : 1;
		}
		if (k >= view->argc || !in_list(subs, view->argv[k], strlen(view->argv[k]), false))
			return 0;
		for (k++; k < view->argc; k++) {
			const char *o = view->argv[k];

			if (o[0] != '-' || !o[1])
				break;
			if (!strcmp(o, "--")) {
				k++;
				break;
			}
			if (strchr(witharg, o[strlen(o) - 1]) && strlen(o) == 2)
				k++;
		}
		if (k >= view->argc)
			return 0;
		{
			size_t e = view->argc;

			/* trailing Enter / C-m keys */
			while (e > k + 1 && (!strcmp(view->argv[e - 1], "Enter") ||
					     !strcmp(view->argv[e - 1], "C-m")))
				e--;
			if (e == k + 1 && e < view->argc) {
				return reparse_word(an, v, k, cx);
			}
		}
		if (k + 1 == view->argc) {
			return reparse_word(an, v, k, cx);
		}
		return suffix(an, v, k, 0, cx, chain);
	}
	case PK_AT:
		/* at TIME: the commands come on standard input (or -f FILE) */
		return mark_stdin(an, v, cx, true);
	case PK_RUNAFTER:
		return do_runafter(an, v, cx, chain);
	case PK_PLAINWRAP:
	case PK_PROXYCHAINS:
	case PK_SETPRIV: {
		/* chronic, eatmydata: flags only; nocache -n N; torsocks -u -p
		 * -a -P VALUE; proxychains -f FILE; setpriv's long options with
		 * values */
		static const char *const lstop[] = {"help", "version", "dump", NULL};
		static const char *const setpriv_larg[] = {
		    "ruid", "euid", "rgid", "egid", "reuid", "regid", "groups", "inh-caps",
		    "ambient-caps", "bounding-set", "securebits", "pdeathsig", "selinux-label",
		    "apparmor-profile", "landlock-access", "landlock-rule", "reset-env", NULL};
		static const char *const torsocks_larg[] = {"user", "pass", "address", "port", NULL};
		/* xvfb-run -n NUM -s ARGS -e FILE -f FILE -p PROTO -w DELAY;
		 * sshpass -p PASS -f FILE -d FD -P PROMPT; dbus-launch's values
		 * come only as --name=VALUE */
		static const char *const xvfb_larg[] = {"server-num", "server-args", "error-file",
							"auth-file",  "xauth-protocol", "wait",
							NULL};
		static const struct optspec sp = {"n", "", NULL, lstop, false};
		static const struct optspec spt = {"upaP", "", torsocks_larg, lstop, false};
		static const struct optspec spp = {"f", "", NULL, lstop, false};
		static const struct optspec sps = {"", "d", setpriv_larg, lstop, false};
		static const struct optspec spx = {"nsefpw", "h", xvfb_larg, lstop, false};
		static const struct optspec spd = {"", "", NULL, lstop, false};
		static const struct optspec spa = {"pfdP", "hV", NULL, lstop, false};

		i = skip_opts(view, 1,
			      kind == PK_PROXYCHAINS			? &spp
			      : kind == PK_SETPRIV			? &sps
			      : !strcmp(view->prog, "torsocks")	? &spt
			      : !strcmp(view->prog, "xvfb-run")	? &spx
			      : !strcmp(view->prog, "dbus-launch") ? &spd
			      : !strcmp(view->prog, "sshpass")	? &spa
								: &sp,
			      &stop, NULL);
		return stop ? 0 : suffix(an, v, i, 0, cx, chain);
	}
	case PK_GDB:
		for (i = 1; i < view->argc; i++)
			if (strcmp(view->argv[i], "--args") == 0 || strcmp(view->argv[i], "-args") == 0)
				return suffix(an, v, i + 1, 0, cx, chain);
		return 0;
	case PK_EVAL:
		/* SECURITY: "eval eval ... ls" must not re-parse the rest at every level */
		if (plain_words(view, vw, 1))
			return suffix_at(an, v, 1, 0, 1, cx, chain);
		return do_eval_like(an, v, 1, cx, false);
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
		return do_eval_like(an, v, i, cx, true); /* joined and run by sh -c */
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

			if (!eq || eq == view->argv[i])
				continue;
			if (eq[1]) {
				c = nest_ctx_of(cx, vw[i], v);
				if ((r = reparse(an, eq + 1, strlen(eq + 1), &c, true, true)))
					return r;
			}
			/* in force for the commands after it */
			if ((r = alias_define(an, v, a->views[v].argv[i])))
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
			return reparse(an, view->argv[i], vw[i]->len, &c, true, true);
		}
		return 0;
	case PK_UNSHARE: {
		static const char *const larg[] = {"propagation", "setuid", "setgid", "root", "wd",
						   "kill-child", "map-user", "map-group", NULL};
		static const struct optspec sp = {"SGRwl", "", larg, NULL, false};
		size_t di = 0;
		const char *dir;

		i = skip_opts(view, 1, &sp, &stop, NULL);
		dir = wrapper_chdir(view, i, PK_UNSHARE, &di);
		return suffix_in(an, v, i, dir, dir ? vw[di]->flags : 0, cx, chain);
	}
	case PK_NSENTER: {
		/* -t PID, -S UID, -G GID take a value; -m -u -i -n -p -U -C -T
		 * -r -w take an optional one, attached ("-w/root") */
		static const char *const larg[] = {"target", "setuid", "setgid", "user-parent",
						   NULL};
		size_t di = 0;
		const char *dir;

		for (i = 1; i < view->argc; i++) {
			const char *o = view->argv[i];

			if (o[0] != '-' || !o[1])
				break;
			if (!strcmp(o, "--")) {
				i++;
				break;
			}
			if (o[1] == '-') {
				if (!strchr(o, '=') && in_list(larg, o + 2, strlen(o + 2), false))
					i++;
				continue;
			}
			if (strchr("tSG", o[1])) {
				if (!o[2])
					i++;
				continue;
			}
			/* any other cluster: flags, or a flag with its value attached */
		}
		dir = wrapper_chdir(view, i, PK_NSENTER, &di);
		return suffix_in(an, v, i, dir, dir ? vw[di]->flags : 0, cx, chain);
	}
	case PK_SOURCE:
		if (view->argc > 1) {
			if (script_from_procsubst(an, v, vw[1]))
				return 0;
			if (is_dev_stdin(view->argv[1]))
				return mark_stdin(an, v, cx, true);
			if (is_download(an, vw[1]->flags, view->argv[1]))
				return ask_download_exec(an, v, view->argv[1]);
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

/* One released analysis per thread is kept for the next one: allocating its
 * first arena region is otherwise the largest fixed cost of an analysis.
 * (Not under AddressSanitizer, which should see every use after free.) */
#if defined(__SANITIZE_ADDRESS__)
#define CMD_KEEP_SPARE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CMD_KEEP_SPARE 0
#endif
#endif
#ifndef CMD_KEEP_SPARE
#define CMD_KEEP_SPARE 1
#endif

#if CMD_KEEP_SPARE
static _Thread_local struct holder *tl_spare;
#endif

static struct holder *holder_get(void)
{
#if CMD_KEEP_SPARE
	struct holder *h = tl_spare;

	if (h) {
		tl_spare = NULL;
		return h;
	}
#endif
	return malloc(sizeof(struct holder));
}

static void holder_put(struct holder *h)
{
	moat_arena_release(&h->arena);
#if CMD_KEEP_SPARE
	if (!tl_spare) {
		tl_spare = h;
		return;
	}
#endif
	free(h);
}

/* Is an absolute path already normalised (no "//", "/.", "/..", trailing '/')? */
static bool clean_path(const char *p)
{
	for (const char *q = p; *q; q++)
		if (*q == '/' && (q[1] == '/' || q[1] == '.' || (q[1] == '\0' && q != p)))
			return false;
	return true;
}

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
	h = holder_get();
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
	an.hlen = 0;
	if (opts && opts->normalized && opts->home && opts->home[0] == '/') {
		an.home = opts->home;
		an.hlen = opts->home_len;
		h->a.home = opts->home;
	} else if (opts && opts->home && opts->home[0] == '/' && strlen(opts->home) < CMD_PATH_MAX) {
		char *hb = moat_arena_strndup(&h->arena, opts->home, strlen(opts->home));

		if (!hb) {
			holder_put(h);
			return -ENOMEM;
		}
		if (!clean_path(hb))
			moat_cmd_norm_path(hb);
		an.home = hb;
		h->a.home = hb;
	}
	if (!an.hlen)
		an.hlen = strlen(an.home);
	h->a.paths = h->paths0;
	an.pcap = MOAT_ARRAY_SIZE(h->paths0);
	h->a.views = h->views0;
	an.vw = h->vw0;
	an.vcap = MOAT_ARRAY_SIZE(h->views0);
	an.eval_budget = CMD_EVAL_BUDGET;
	an.state_budget = CMD_STATE_BUDGET;
	an.prescan_budget = CMD_PRESCAN_BUDGET;
	/* unknown working directory: a placeholder deep below / that names no
	 * real directory (relative names are then harmless, as before) */
	vs_one(&h->cwd0, "/\001/\001/\001/\001/\001/\001/\001/\001");
	if (opts && opts->cwd && opts->cwd[0] == '/' &&
	    (opts->normalized && opts->cwd_len ? opts->cwd_len : strlen(opts->cwd)) < CMD_PATH_MAX) {
		/* (used while analysing only: no copy unless it needs normalising) */
		char *cb = (char *)opts->cwd;

		if (!opts->normalized && !clean_path(cb)) {
			cb = moat_arena_strndup(&h->arena, opts->cwd, strlen(opts->cwd));
			if (!cb) {
				holder_put(h);
				return -ENOMEM;
			}
			moat_cmd_norm_path(cb);
		}
		vs_one(&h->cwd0, cb);
	}
	an.st.cwd = an.cwd0 = &h->cwd0;

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
		if (!r)
			r = trees_after(&an);
	}
	if (r) {
		holder_put(h);
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
	holder_put(h);
	return NULL;
}

/* ---- git config files written inside the sandbox ---- */

/* The keys git itself writes into a submodule's config (and harmless
 * company): anything else in a config the command wrote is suspect. */
static const char *const gitcfg_safe[] = {
    "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
    "core.worktree", "core.symlinks", "core.ignorecase", "core.precomposeunicode",
    "core.autocrlf", "core.eol", "core.sparsecheckout", "remote.*.url", "remote.*.fetch",
    "remote.*.pushurl", "remote.*.tagopt", "remote.*.mirror", "remote.*.prune",
    "branch.*.remote", "branch.*.merge", "branch.*.rebase", "extensions.objectformat",
    "user.name", "user.email", "init.defaultbranch", "pull.rebase", "pull.ff", "fetch.prune",
    "submodule.*.active", "submodule.*.url", "index.version", "gc.auto", NULL};

static bool gitcfg_key_safe(const char *sect, const char *sub, const char *key)
{
	char full[256];

	for (size_t i = 0; gitcfg_safe[i]; i++) {
		snprintf(full, sizeof(full), "%s.%s%s", sect, sub ? "*." : "", key);
		if (!strcmp(full, gitcfg_safe[i]))
			return true;
	}
	return false;
}

static void lower_into(char *dst, size_t dsz, const char *s, size_t n)
{
	size_t i = 0;

	for (; i < n && i + 1 < dsz; i++)
		dst[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] - 'A' + 'a') : s[i];
	dst[i] = '\0';
}

bool moat_gitconfig_worktree(const char *text, size_t len, char *out, size_t outsz)
{
	bool in_core = false, found = false;
	size_t i = 0;

	while (i < len) {
		size_t e = i, s, k;

		while (e < len && text[e] != '\n')
			e++;
		s = i;
		i = e + 1;
		while (s < e && (text[s] == ' ' || text[s] == '\t' || text[s] == '\r'))
			s++;
		if (s < e && text[s] == '[') {
			/* only [core] itself: "[core \"x\"]" or "[core.x]" is another */
			k = s + 1;
			while (k < e && text[k] != ']')
				k++;
			in_core = k - s - 1 == 4 && !strncasecmp(text + s + 1, "core", 4);
			s = k < e ? k + 1 : e;
			while (s < e && (text[s] == ' ' || text[s] == '\t'))
				s++;
		}
		if (!in_core || e - s < 8 || strncasecmp(text + s, "worktree", 8))
			continue;
		k = s + 8;
		while (k < e && (text[k] == ' ' || text[k] == '\t'))
			k++;
		if (k >= e || text[k] != '=')
			continue;
		k++;
		while (k < e && (text[k] == ' ' || text[k] == '\t'))
			k++;
		/* the value: quotes dropped, the rest up to a comment or the end */
		{
			size_t o = 0;
			bool q = false;

			for (; k < e; k++) {
				char c = text[k];

				if (c == '"') {
					q = !q;
					continue;
				}
				if (!q && (c == '#' || c == ';'))
					break;
				if (c == '\\' && k + 1 < e)
					c = text[++k];
				if (o + 1 >= outsz)
					return false;
				out[o++] = c;
			}
			while (o && (out[o - 1] == ' ' || out[o - 1] == '\t' || out[o - 1] == '\r'))
				o--;
			out[o] = '\0';
			found = true;
		}
	}
	return found;
}

bool moat_gitconfig_runs_code(const char *text, size_t len, char *why, size_t whysz)
{
	char sect[64] = "", key[64];
	bool has_sub = false;
	size_t i = 0;

	if (why && whysz)
		why[0] = '\0';
	while (i < len) {
		size_t e = i, s;

		while (e < len && text[e] != '\n')
			e++;
		s = i;
		while (s < e && (text[s] == ' ' || text[s] == '\t' || text[s] == '\r'))
			s++;
		if (s < e && text[s] == '[') {
			/* [section], [section "sub"], [section.sub] */
			size_t k = s + 1, n = 0;

			while (k < e && text[k] != ']' && text[k] != ' ' && text[k] != '\t' &&
			       text[k] != '.' && text[k] != '"')
				k++, n++;
			lower_into(sect, sizeof(sect), text + s + 1, n);
			has_sub = k < e && text[k] != ']';
			/* anything after the header on the same line is a key too */
			while (k < e && text[k] != ']')
				k++;
			s = k < e ? k + 1 : e;
			while (s < e && (text[s] == ' ' || text[s] == '\t'))
				s++;
		}
		if (s < e && text[s] != '#' && text[s] != ';') {
			size_t k = s;

			while (k < e && ((text[k] >= 'a' && text[k] <= 'z') ||
					 (text[k] >= 'A' && text[k] <= 'Z') ||
					 (text[k] >= '0' && text[k] <= '9') || text[k] == '-'))
				k++;
			lower_into(key, sizeof(key), text + s, k - s);
			if (!sect[0] || !key[0] || !gitcfg_key_safe(sect, has_sub ? "*" : NULL, key)) {
				if (why && whysz)
					snprintf(why, whysz, "%s.%s", sect[0] ? sect : "?",
						 key[0] ? key : "?");
				return true;
			}
		}
		i = e + 1;
	}
	return false;
}
