/* Pre-approvals: the configuration's "approvals" compiled into globs on one
 * named argument of one tool, and the matching rule the gate also applies to
 * the answers it remembers for a session.
 *
 * A pre-approval answers an ASK without a human, so it must cover exactly
 * what it names and nothing else: never another tool, never another
 * argument, never a missing or non-string argument, and for shell commands
 * never more than the programs the glob describes. It never sees a DENY (the
 * gate only consults it for an ASK). No I/O, never prints. */
#include "gate/preapprove.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "core/cmd.h"
#include "core/path.h"

struct moat_preapprovals {
	struct moat_arg_glob *v;
	char **where; /* "config.json:3:5" (copied: the gate may outlive the configuration) */
	size_t n;
};

static bool streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

enum moat_arg_kind moat_arg_kind_of(const struct moat_config *cfg, const char *tool,
				    const char *arg)
{
	if (!tool || !arg)
		return MOAT_ARG_TEXT;
	if ((streq(tool, "bash") || streq(tool, "run_shell_command")) && streq(arg, "command"))
		return MOAT_ARG_COMMAND;
	for (size_t i = 0; cfg && i < cfg->ntools; i++) {
		const struct moat_tool_decl *d = &cfg->tools[i];

		if (!streq(d->name, tool))
			continue;
		if (streq(d->command_arg, arg))
			return MOAT_ARG_COMMAND;
		for (size_t k = 0; k < d->path_args.n; k++)
			if (streq(d->path_args.v[k], arg))
				return MOAT_ARG_PATH;
	}
	return moat_path_arg_name(arg) ? MOAT_ARG_PATH : MOAT_ARG_TEXT;
}

int moat_arg_glob_init(struct moat_arg_glob *ag, const struct moat_config *cfg, const char *tool,
		       const char *arg, const char *pattern, struct moat_error *err)
{
	int r;

	if (!ag || !tool || !arg || !pattern)
		return -EINVAL;
	memset(ag, 0, sizeof(*ag));
	ag->kind = moat_arg_kind_of(cfg, tool, arg);
	ag->tool = moat_strdup(streq(tool, "run_shell_command") ? "bash" : tool);
	ag->arg = moat_strdup(arg);
	if (!ag->tool || !ag->arg) {
		moat_arg_glob_release(ag);
		moat_error_set(err, "out of memory");
		return -ENOMEM;
	}
	r = moat_glob_compile(pattern, ag->kind == MOAT_ARG_PATH ? MOAT_GLOB_PATH : MOAT_GLOB_TEXT,
			      &ag->glob, err);
	if (r < 0) {
		moat_arg_glob_release(ag);
		return r;
	}
	return 0;
}

void moat_arg_glob_release(struct moat_arg_glob *ag)
{
	if (!ag)
		return;
	free(ag->tool);
	free(ag->arg);
	moat_glob_free(ag->glob);
	memset(ag, 0, sizeof(*ag));
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A redirection the glob does not describe: a write into a file. */
static bool redir_writes(const struct moat_cmd_redir *rd)
{
	if (!(rd->flags & (MOAT_CMD_REDIR_WRITE | MOAT_CMD_REDIR_DYNAMIC)))
		return false;
	return (rd->flags & MOAT_CMD_REDIR_DYNAMIC) || strcmp(rd->target, "/dev/null") != 0;
}

/* git runs programs of the caller's choosing through some of its own
 * options and subcommands (`git -c alias.x='!cmd' x`, `-c core.fsmonitor=`,
 * `--config-env`, `--upload-pack`, `rebase --exec`, `bisect run`,
 * `submodule foreach`, `difftool --extcmd`...), and writes files with
 * `--output`: a glob like "git *" was meant for git's own work, so these
 * always go to a human. */
static bool git_runs_other(const struct moat_cmdview *v)
{
	static const char *const opts[] = {"--config-env", "--exec-path", "--upload-pack",
					   "--receive-pack", "--output", "--exec", "--extcmd",
					   "--ext-diff", "--tool", "--open-files-in-pager", NULL};
	static const char *const subs[] = {"bisect",	"submodule", "filter-branch",
					   "difftool",	"mergetool", "config",
					   "filter-repo", "daemon",	"web--browse",
					   "instaweb",	"credential", "send-email", NULL};
	const char *prog = strrchr(v->argv[0], '/');
	bool sub_seen = false;

	prog = prog ? prog + 1 : v->argv[0];
	if (strcmp(prog, "git"))
		return false;
	for (size_t k = 1; k < v->argc; k++) {
		const char *w = v->argv[k];

		if (!strncmp(w, "-c", 2) || (w[0] == '-' && w[1] != '-' && strchr(w, 'x') &&
					     sub_seen))
			return true; /* -c NAME=VALUE; -x/--exec of rebase (short forms) */
		for (size_t i = 0; opts[i]; i++) {
			size_t l = strlen(opts[i]);

			if (!strncmp(w, opts[i], l) && (!w[l] || w[l] == '='))
				return true;
		}
		if (!sub_seen && w[0] != '-') {
			sub_seen = true;
			for (size_t i = 0; subs[i]; i++)
				if (!strcmp(w, subs[i]))
					return true;
		}
	}
	return false;
}

/* SECURITY: see moat_arg_glob_match in preapprove.h. Every step that cannot
 * show the command is exactly what the glob says answers false, and the ask
 * goes to a human. */
static bool command_match(const struct moat_glob *g, const char *cmd, size_t len)
{
	const char *s = cmd, *e = cmd + len;
	struct moat_cmd_opts opts = {0}; /* no home, no cwd: words as written */
	struct moat_cmd_analysis *a = NULL;
	struct moat_buf subj = MOAT_BUF_INIT;
	bool ok = true;

	while (s < e && blank(*s))
		s++;
	while (e > s && blank(e[-1]))
		e--;
	if (s == e || !moat_glob_match(g, s, (size_t)(e - s)))
		return false;
	if (moat_cmd_analyze(cmd, len, &opts, &a, NULL) < 0)
		return false;
	/* programs unknown before running, or anything the analysis flags
	 * (startup-file writes, download-and-run, ...): a human decides */
	if (a->dynamic || !a->nviews || a->nfindings)
		ok = false;
	for (size_t i = 0; ok && i < a->nviews; i++) {
		const struct moat_cmdview *v = &a->views[i];

		if (v->flags & (MOAT_VIEW_DYNAMIC | MOAT_VIEW_SHELL_STDIN) || !v->argc ||
		    git_runs_other(v)) {
			ok = false;
			break;
		}
		/* argv as written: "/tmp/x/git log" is not "git log" */
		moat_buf_reset(&subj);
		for (size_t k = 0; k < v->argc; k++) {
			if (k)
				moat_buf_putc(&subj, ' ');
			moat_buf_puts(&subj, v->argv[k]);
		}
		ok = !subj.oom && subj.data && moat_glob_match(g, subj.data, subj.len);
	}
	for (size_t i = 0; ok && i < a->nredirs; i++)
		if (redir_writes(&a->redirs[i]))
			ok = false;
	moat_buf_release(&subj);
	moat_cmd_analysis_free(a);
	return ok;
}

/* A ".." component (either separator, for Windows-form paths too). */
static bool has_dotdot(const char *s, size_t len)
{
	size_t start = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i == len || s[i] == '/' || s[i] == '\\') {
			if (i - start == 2 && s[start] == '.' && s[start + 1] == '.')
				return true;
			start = i + 1;
		}
	}
	return false;
}

bool moat_arg_glob_match(const struct moat_arg_glob *ag, const char *tool, json_t *args)
{
	json_t *v;
	const char *s;
	size_t len;

	if (!ag || !ag->glob || !tool || !json_is_object(args))
		return false;
	if (strcmp(ag->tool, streq(tool, "run_shell_command") ? "bash" : tool) != 0)
		return false;
	v = json_object_get(args, ag->arg);
	if (!json_is_string(v))
		return false;
	s = json_string_value(v);
	len = json_string_length(v);
	if (memchr(s, '\0', len))
		return false;
	switch (ag->kind) {
	case MOAT_ARG_COMMAND:
		return command_match(ag->glob, s, len);
	case MOAT_ARG_PATH:
		if (!len || has_dotdot(s, len))
			return false;
		return moat_glob_match(ag->glob, s, len);
	case MOAT_ARG_TEXT:
	default:
		return moat_glob_match(ag->glob, s, len);
	}
}

/* ---- the configuration's approvals -------------------------------------- */

int moat_preapprovals_new(const struct moat_config *cfg, struct moat_preapprovals **ret,
			  struct moat_error *err)
{
	struct moat_preapprovals *p;
	size_t n = cfg ? cfg->napprovals : 0;

	if (!ret)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		goto oom;
	if (n) {
		p->v = calloc(n, sizeof(*p->v));
		p->where = calloc(n, sizeof(*p->where));
		if (!p->v || !p->where)
			goto oom;
	}
	for (size_t i = 0; i < n; i++) {
		const struct moat_approval_rule *a = &cfg->approvals[i];
		int r = moat_arg_glob_init(&p->v[i], cfg, a->tool, a->arg, a->match, err);

		if (r < 0) {
			if (a->loc.file)
				moat_error_set_where(err, a->loc.file, a->loc.line, a->loc.column);
			moat_preapprovals_free(p);
			return r;
		}
		p->n++;
		if (a->loc.file) {
			struct moat_buf b = MOAT_BUF_INIT;

			moat_buf_printf(&b, "%s:%d:%d", a->loc.file, a->loc.line, a->loc.column);
			p->where[i] = moat_buf_steal(&b);
			if (!p->where[i])
				goto oom;
		}
	}
	*ret = p;
	return 0;
oom:
	moat_preapprovals_free(p);
	moat_error_set(err, "out of memory");
	return -ENOMEM;
}

struct moat_preapprovals *moat_preapprovals_free(struct moat_preapprovals *p)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n; i++) {
		moat_arg_glob_release(&p->v[i]);
		free(p->where[i]);
	}
	free(p->v);
	free(p->where);
	free(p);
	return NULL;
}

size_t moat_preapprovals_count(const struct moat_preapprovals *p)
{
	return p ? p->n : 0;
}

long moat_preapprovals_match(const struct moat_preapprovals *p, const char *tool, json_t *args,
			     char *rule, size_t rulesz, char *where, size_t wheresz)
{
	for (size_t i = 0; p && i < p->n; i++) {
		const struct moat_arg_glob *ag = &p->v[i];

		if (!moat_arg_glob_match(ag, tool, args))
			continue;
		if (rule && rulesz)
			snprintf(rule, rulesz, "approvals:%s.%s:%s", ag->tool, ag->arg,
				 moat_glob_pattern(ag->glob));
		if (where && wheresz)
			moat_strlcpy(where, p->where[i] ? p->where[i] : "", wheresz);
		return (long)i;
	}
	return -1;
}
