/* moat hook claude-code: Claude Code's PreToolUse hook.
 *
 * Claude Code runs this command before each tool call it was configured to
 * match, with one JSON object on stdin (session_id, transcript_path, cwd,
 * permission_mode, hook_event_name "PreToolUse", tool_name, tool_input,
 * tool_use_id, and whatever later versions add). We map the call onto
 * moat's tools (docs/hooks.md has the table), decide it with the same policy
 * as `moat check`, record the decision in the audit log, and answer with
 *   {"hookSpecificOutput": {"hookEventName": "PreToolUse",
 *    "permissionDecision": "allow"|"deny"|"ask", "permissionDecisionReason": ...}}
 * on stdout and exit 0. Nothing is run here: Claude Code runs the tool.
 *
 * It must never let a call through by failing. In Claude Code an exit status
 * other than 0 and 2 is a non-blocking error (the tool runs), and exit 0
 * with no decision falls back to Claude Code's own permissions. So every
 * failure of moat or of the input (unreadable, malformed, oversized, wrong
 * types, a configuration or audit error, a bad command line) ends in exit 2,
 * Claude Code's blocking error, with the reason on stderr (which Claude Code
 * shows to the model) and a deny decision on stdout as well. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit/audit.h"
#include "base/json.h"
#include "base/str.h"
#include "cli/cli.h"
#include "core/search.h"
#include "cli/policy_opts.h"
#include "core/config.h"
#include "core/path.h"
#include "core/policy_check.h"

/* Claude Code's hook exit statuses (code.claude.com/docs/en/hooks) */
#define HOOK_EXIT_DECIDED 0 /* the JSON on stdout is the decision */
#define HOOK_EXIT_BLOCK 2   /* blocking error: the call is refused, stderr goes to Claude */

/* Bytes of hook input read from stdin. A Write of a large file carries its
 * whole content: this leaves room for MOAT_WRITE_MAX_BYTES of content
 * JSON-escaped; anything longer is refused, never cut. */
#define HOOK_INPUT_MAX (40u << 20)
/* tool_use_id, kept as the audit record's call id */
#define HOOK_CALL_ID_MAX 256u
/* input fields one mapping consumes (the table below) */
#define HOOK_KNOWN_MAX 8

static const char hook_usage[] =
    "usage: moat hook claude-code [options] < hook-input.json\n"
    "\n"
    "Claude Code's PreToolUse hook: reads the hook input on stdin, decides the\n"
    "tool call with moat's policy, records the decision in the audit log, and\n"
    "prints {\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\",\n"
    "\"permissionDecision\": \"allow\"|\"deny\"|\"ask\", \"permissionDecisionReason\": TEXT}}.\n"
    "Configure it in ~/.claude/settings.json or .claude/settings.json (docs/hooks.md).\n"
    "\n"
    "options:\n"
    "  --audit-log FILE       append the record here ('-': stderr) instead of the\n"
    "                         configuration's audit_log\n"
    "  --on-allow allow|defer what an ALLOW answers: \"allow\" (the default: the call\n"
    "                         runs without Claude Code's prompt) or nothing at all\n"
    "                         (\"defer\": Claude Code's own permissions then decide)\n"
    "The working directory (--cwd) defaults to the hook input's cwd.\n"
    "\n"
    "exit status: 0 with the decision on stdout; 2 when the input or moat failed\n"
    "(Claude Code's blocking error: the call is refused, the reason is on stderr).\n\n";

/* What the hook decided, and why when it is a failure rather than a policy
 * decision. */
struct hook_answer {
	struct moat_decision d;
	struct moat_policy_notes notes; /* for the audit record */
	bool failed;	  /* moat or the input failed: exit 2 */
	char error[1024]; /* for stderr when failed */
};

static void answer_fail(struct hook_answer *a, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* SECURITY: every failure is a hard DENY; nothing after this turns it back. */
static void answer_fail(struct hook_answer *a, const char *rule, const char *fmt, ...)
{
	va_list ap;

	a->failed = true;
	a->d.verdict = MOAT_DENY;
	a->d.hard = true;
	moat_strlcpy(a->d.rule, rule, sizeof(a->d.rule));
	va_start(ap, fmt);
	vsnprintf(a->error, sizeof(a->error), fmt, ap);
	va_end(ap);
	a->error[moat_utf8_cut(a->error, strlen(a->error))] = '\0';
	moat_strlcpy(a->d.reason, a->error, sizeof(a->d.reason));
	a->d.reason[moat_utf8_cut(a->d.reason, strlen(a->d.reason))] = '\0';
}

/* ---- mapping Claude Code's tools onto moat's --------------------------- */

enum hook_kind {
	K_BASH,
	K_READ,	 /* read_file {path} */
	K_WRITE, /* write_file {path, content} */
	K_EDIT,	 /* edit_file {path, old_string, new_string, replace_all} */
	K_MULTIEDIT,
	K_NOTEBOOK_EDIT,
	K_NOTEBOOK_READ,
	K_GLOB, /* list_directory {path, paths: [path/pattern]} */
	K_GREP, /* read_file {path, paths: [path/glob]} */
	K_LS,
	K_WEBFETCH,
};

/* A Claude Code tool, the moat tool it becomes, and the input fields the
 * mapping consumes (renamed or checked). Other input fields are passed along
 * under their own names, so a path-like one is still checked. */
static const struct {
	const char *claude;
	enum hook_kind kind;
	const char *moat;
	const char *const known[HOOK_KNOWN_MAX];
} hook_tools[] = {
    {"Bash", K_BASH, "bash", {"command"}},
    {"Read", K_READ, "read_file", {"file_path"}},
    {"Write", K_WRITE, "write_file", {"file_path", "content"}},
    {"Edit", K_EDIT, "edit_file", {"file_path", "old_string", "new_string", "replace_all"}},
    {"MultiEdit", K_MULTIEDIT, "edit_file", {"file_path", "edits"}},
    {"NotebookEdit", K_NOTEBOOK_EDIT, "edit_file", {"notebook_path"}},
    {"NotebookRead", K_NOTEBOOK_READ, "read_file", {"notebook_path"}},
    {"Glob", K_GLOB, "list_directory", {"path", "pattern"}},
    {"Grep", K_GREP, "read_file", {"path", "glob"}},
    {"LS", K_LS, "list_directory", {"path"}},
    {"WebFetch", K_WEBFETCH, "web_fetch", {"url"}},
};

/* moat's own tool names: a Claude Code tool never has one of them (its MCP
 * tools are mcp__SERVER__TOOL), and one that did would be decided as moat's
 * tool, not as the unknown tool it is. */
static const char *const moat_names[] = {
    "read_file", "write_file",	      "edit_file", "list_directory",
    "bash",	 "run_shell_command", "web_fetch",
};

static bool is_known(const char *const *known, const char *key)
{
	for (size_t i = 0; i < HOOK_KNOWN_MAX && known[i]; i++)
		if (!strcmp(known[i], key))
			return true;
	return false;
}

/* A string field; required or optional. Returns 0 with *ret set (NULL when
 * optional and absent), or -EINVAL with a message in a. */
static int get_str(struct hook_answer *a, const char *tool, json_t *in, const char *key,
		   bool required, json_t **ret)
{
	json_t *v = json_object_get(in, key);

	if (!v && !required) {
		*ret = NULL;
		return 0;
	}
	if (!json_is_string(v)) {
		answer_fail(a, "input:invalid", "%s: tool_input.%s must be a string, not %s", tool,
			    key, v ? moat_json_type_name(v) : "missing");
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

static int set_copy(json_t *args, const char *key, json_t *v)
{
	return v ? json_object_set(args, key, v) : 0;
}

/* dir + "/" + pattern (a pattern that is already absolute stands alone). */
static int join_one(const char *dir, const char *p, json_t *arr)
{
	struct moat_buf b = MOAT_BUF_INIT;
	json_t *s;

	if (p[0] == '/' || p[0] == '~') {
		moat_buf_puts(&b, p);
	} else {
		moat_buf_puts(&b, dir);
		if (b.len && b.data[b.len - 1] != '/')
			moat_buf_putc(&b, '/');
		moat_buf_puts(&b, p);
	}
	if (b.oom) {
		moat_buf_release(&b);
		return -ENOMEM;
	}
	s = json_stringn(b.data ? b.data : "", b.len);
	moat_buf_release(&b);
	return s && json_array_append_new(arr, s) == 0 ? 0 : -ENOMEM;
}

/* The pattern joined to the directory, as paths to check; Grep's glob
 * (grep_glob) one path per piece Claude Code makes of it (negated ones,
 * which only exclude, left out). */
static int joined_path(const char *dir, json_t *pattern, bool grep_glob, json_t **ret)
{
	const char *p = json_string_value(pattern);
	json_t *arr = json_array();
	char **pieces = NULL;
	size_t n = 0;
	int r = 0;

	if (!arr)
		return -ENOMEM;
	if (!grep_glob) {
		r = join_one(dir, p, arr);
	} else if ((r = moat_search_pieces(p, &pieces, &n)) == 0) {
		for (size_t i = 0; i < n && !r; i++)
			if (pieces[i][0] != '!')
				r = join_one(dir, pieces[i], arr);
		free(pieces);
	}
	if (r) {
		json_decref(arr);
		return r;
	}
	*ret = arr;
	return 0;
}

/* A search tool's root and the glob it is limited to (NULL: none), both
 * owned by the call's input or arguments; on is false for other tools. */
struct hook_search {
	bool on;
	const char *root;
	const char *filter;
	unsigned flags; /* HOOK_SEARCH_* */
};

/* Build moat's tool name and arguments for one Claude Code call.
 * cwd is the directory Glob and Grep search when they name none. */
static int map_call(struct hook_answer *a, const char *tool, json_t *in, const char *cwd,
		    const char **ret_tool, json_t **ret_args, struct hook_search *srch)
{
	const char *const *known = NULL;
	const char *moat = tool;
	json_t *args, *v, *v2, *v3, *v4;
	const char *key;
	size_t t;
	int r = 0;

	for (t = 0; t < MOAT_ARRAY_SIZE(hook_tools); t++)
		if (!strcmp(hook_tools[t].claude, tool))
			break;
	if (t == MOAT_ARRAY_SIZE(hook_tools)) {
		for (size_t i = 0; i < MOAT_ARRAY_SIZE(moat_names); i++) {
			if (!strcmp(moat_names[i], tool)) {
				answer_fail(a, "input:invalid",
					    "'%s' is a moat tool name, not a Claude Code tool",
					    tool);
				return -EINVAL;
			}
		}
		/* any other tool (mcp__*, Task, WebSearch, ...): moat's rule for
		 * an undeclared tool (ASK unless the configuration declares it;
		 * its path-like arguments are still checked) */
		args = json_deep_copy(in);
		if (!args)
			goto oom;
		*ret_tool = tool;
		*ret_args = args;
		return 0;
	}
	known = hook_tools[t].known;
	moat = hook_tools[t].moat;
	args = json_object();
	if (!args)
		goto oom;

	switch (hook_tools[t].kind) {
	case K_BASH:
		r = get_str(a, tool, in, "command", true, &v);
		if (!r)
			r = set_copy(args, "command", v);
		break;
	case K_READ:
	case K_NOTEBOOK_READ:
		r = get_str(a, tool, in, known[0], true, &v);
		if (!r)
			r = set_copy(args, "path", v);
		break;
	case K_WRITE:
		r = get_str(a, tool, in, "file_path", true, &v);
		if (!r)
			r = get_str(a, tool, in, "content", true, &v2);
		if (!r)
			r = set_copy(args, "path", v) || set_copy(args, "content", v2);
		break;
	case K_EDIT:
		r = get_str(a, tool, in, "file_path", true, &v);
		if (!r)
			r = get_str(a, tool, in, "old_string", true, &v2);
		if (!r)
			r = get_str(a, tool, in, "new_string", true, &v3);
		if (r)
			break;
		v4 = json_object_get(in, "replace_all");
		if (v4 && !json_is_boolean(v4)) {
			answer_fail(a, "input:invalid",
				    "%s: tool_input.replace_all must be a boolean, not %s", tool,
				    moat_json_type_name(v4));
			r = -EINVAL;
			break;
		}
		r = set_copy(args, "path", v) || set_copy(args, "old_string", v2) ||
		    set_copy(args, "new_string", v3) || set_copy(args, "replace_all", v4);
		break;
	case K_MULTIEDIT:
		/* one decision for the file, as one write */
		r = get_str(a, tool, in, "file_path", true, &v);
		if (r)
			break;
		v2 = json_object_get(in, "edits");
		if (!json_is_array(v2)) {
			answer_fail(a, "input:invalid",
				    "%s: tool_input.edits must be an array, not %s", tool,
				    v2 ? moat_json_type_name(v2) : "missing");
			r = -EINVAL;
			break;
		}
		r = set_copy(args, "path", v) || set_copy(args, "edits", v2);
		break;
	case K_NOTEBOOK_EDIT:
		r = get_str(a, tool, in, "notebook_path", true, &v);
		if (!r)
			r = set_copy(args, "path", v);
		break;
	case K_GLOB:
	case K_GREP:
	case K_LS: {
		/* a read of the directory searched (the hook's cwd when none is
		 * named), and of the pattern joined to it: a glob aimed at a
		 * denied place ("~/.ssh/id_*") is caught by its literal part */
		const char *pat_key = hook_tools[t].kind == K_GLOB ? "pattern" : "glob";
		json_t *joined = NULL;

		r = get_str(a, tool, in, "path", hook_tools[t].kind == K_LS, &v);
		if (!r && hook_tools[t].kind != K_LS)
			r = get_str(a, tool, in, pat_key, hook_tools[t].kind == K_GLOB, &v2);
		if (r)
			break;
		if (v)
			r = set_copy(args, "path", v);
		else
			r = json_object_set_new(args, "path", json_string(cwd));
		if (!r && hook_tools[t].kind != K_LS) {
			srch->on = true;
			srch->root = json_string_value(json_object_get(args, "path"));
			srch->filter = v2 ? json_string_value(v2) : NULL;
			srch->flags = hook_tools[t].kind == K_GREP ? MOAT_SEARCH_GREP_GLOB : 0;
		}
		if (r || hook_tools[t].kind == K_LS || !v2)
			break;
		if (joined_path(v ? json_string_value(v) : cwd, v2, hook_tools[t].kind == K_GREP,
				&joined) < 0) {
			r = -ENOMEM;
			break;
		}
		r = json_object_set_new(args, "paths", joined);
		break;
	}
	case K_WEBFETCH:
		r = get_str(a, tool, in, "url", true, &v);
		if (!r)
			r = set_copy(args, "url", v);
		break;
	}
	if (a->failed) {
		json_decref(args);
		return -EINVAL;
	}
	if (r)
		goto oom_args;
	/* fields the mapping does not know travel under their own names */
	json_object_foreach(in, key, v)
	{
		if (is_known(known, key) || json_object_get(args, key))
			continue;
		if (json_object_set(args, key, v) < 0)
			goto oom_args;
	}
	*ret_tool = moat;
	*ret_args = args;
	return 0;
oom_args:
	json_decref(args);
oom:
	answer_fail(a, "hook:error", "cannot build the arguments of the %s call", tool);
	return -ENOMEM;
}

/* ---- Claude Code's own settings --------------------------------------- */

static bool is_agent_settings(const char *p)
{
	static const char *const names[] = {
	    "/.claude/settings.json",
	    "/.claude/settings.local.json",
	};

	if (!strcmp(p, "/etc/claude-code/managed-settings.json"))
		return true;
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(names); i++)
		if (moat_str_has_suffix(p, names[i]))
			return true;
	return false;
}

/* SECURITY: Claude Code's settings hold this hook; a write there could
 * remove it. A write the policy allowed into one of them is asked instead.
 * Checked lexically and, when the file exists, at its real path. */
static void protect_settings(const char *moat_tool, json_t *args, const char *cwd,
			     struct moat_decision *d)
{
	char norm[MOAT_PATH_MAX], real[PATH_MAX];
	json_t *v = json_object_get(args, "path");
	const char *p;

	if (d->verdict != MOAT_ALLOW || !json_is_string(v))
		return;
	if (strcmp(moat_tool, "write_file") != 0 && strcmp(moat_tool, "edit_file") != 0)
		return;
	p = json_string_value(v);
	if (moat_path_normalize_posix(p, json_string_length(v), cwd, norm, sizeof(norm)) < 0)
		return; /* the policy already refused what cannot be normalized */
	if (!is_agent_settings(norm) && !(realpath(norm, real) && is_agent_settings(real)))
		return;
	d->verdict = MOAT_ASK;
	d->hard = false;
	moat_strlcpy(d->rule, "hook:agent-settings", sizeof(d->rule));
	snprintf(d->reason, sizeof(d->reason),
		 "%.300s holds Claude Code's settings, and with them this hook", p);
}

/* ---- what a search reads ------------------------------------------------ */

/* The time the search walk may take: MOAT_SEARCH_MAX_MS, or less when
 * MOAT_HOOK_SEARCH_MS says so (a slow disk, the tests); it never raises
 * the bound. */
static unsigned search_ms(void)
{
	const char *e = getenv("MOAT_HOOK_SEARCH_MS");
	long v;

	if (e && moat_parse_long(e, 0, MOAT_SEARCH_MAX_MS, &v) == 0)
		return (unsigned)v;
	return MOAT_SEARCH_MAX_MS;
}

/* SECURITY: a Grep or Glob the policy allowed by its root reads (or lists)
 * every file below it, and no sandbox hides the denied ones from Claude
 * Code's tool: a search that would read one asks, naming it; one too large
 * to check, or that cannot be walked, asks too. */
static void check_search(const struct moat_policy *p, const struct hook_search *srch,
			 const char *cwd, const char *claude_tool, struct moat_decision *d)
{
	char root[MOAT_PATH_MAX], spelled[MOAT_PATH_MAX], hit[PATH_MAX];
	struct moat_decision why;
	struct moat_search_budget budget;
	const char *home = moat_policy_home(p), *src = srch->root;
	int r;

	if (!srch->on || !src || d->verdict != MOAT_ALLOW)
		return;
	/* the root as the tool reads it: "~" is the home directory */
	if (src[0] == '~' && (!src[1] || src[1] == '/') && home[0]) {
		snprintf(spelled, sizeof(spelled), "%s%s", home, src + 1);
		src = spelled;
	}
	r = moat_path_normalize_posix(src, strlen(src), cwd, root, sizeof(root));
	moat_search_budget_init(&budget, search_ms());
	if (r >= 0)
		r = moat_search_denied(p, root, srch->filter, srch->flags, &budget, hit, sizeof(hit),
				       &why);
	if (r == 0)
		return;
	d->verdict = MOAT_ASK;
	d->hard = false;
	if (r == 1) {
		/* SECURITY: a Grep prints the matching lines of the denied file,
		 * as `grep -r` of the same root would (DENY); a Glob lists names
		 * only (ASK); a name the policy cannot read is not known to be
		 * denied (ASK) */
		bool reads = !strcmp(claude_tool, "Grep") && why.verdict == MOAT_DENY &&
			     strcmp(why.rule, "path:unresolvable") != 0;

		if (reads) {
			d->verdict = MOAT_DENY;
			d->hard = true;
		}
		moat_strlcpy(d->rule, "hook:search-denied", sizeof(d->rule));
		snprintf(d->reason, sizeof(d->reason),
			 "%s over %.150s would %s %.200s, a denied path (rule %.100s)", claude_tool,
			 root, reads ? "read" : "list", hit, why.rule);
	} else if (r == -E2BIG) {
		moat_strlcpy(d->rule, "hook:search-unbounded", sizeof(d->rule));
		snprintf(d->reason, sizeof(d->reason),
			 "%s over %.200s searches more than %u entries or %u levels: moat cannot "
			 "tell whether it reads a denied path",
			 claude_tool, root, MOAT_SEARCH_MAX_ENTRIES, MOAT_SEARCH_MAX_DEPTH);
	} else if (r == -ETIMEDOUT) {
		moat_strlcpy(d->rule, "hook:search-unbounded", sizeof(d->rule));
		snprintf(d->reason, sizeof(d->reason),
			 "%s over %.200s takes more than %u ms to check: moat cannot tell whether "
			 "it reads a denied path",
			 claude_tool, root, budget.max_ms);
	} else {
		moat_strlcpy(d->rule, "hook:search-unchecked", sizeof(d->rule));
		snprintf(d->reason, sizeof(d->reason),
			 "%s over %.200s: moat cannot tell whether it reads a denied path (%s)",
			 claude_tool, srch->root, strerror(-r));
	}
}

/* ---- the answer --------------------------------------------------------- */

/* defer: an ALLOW answers nothing (Claude Code's own permissions decide) */
static void print_answer(const struct hook_answer *a, bool defer, bool *ret_write_failed)
{
	struct moat_buf out = MOAT_BUF_INIT, why = MOAT_BUF_INIT, text = MOAT_BUF_INIT;
	const struct moat_decision *d = &a->d;
	const char *v = moat_verdict_name(d->verdict);

	/* (a failure is a DENY, never deferred) */
	if (defer && d->verdict == MOAT_ALLOW && !a->failed) {
		*ret_write_failed = fflush(stdout) != 0;
		return;
	}

	if (d->verdict == MOAT_ALLOW)
		moat_buf_printf(&why, "moat: allowed (%s)", d->rule);
	else if (d->verdict == MOAT_ASK)
		moat_buf_printf(&why, "moat asks: %s (rule %s)", d->reason, d->rule);
	else
		moat_buf_printf(&why, "moat denied this call: %s (rule %s)", d->reason, d->rule);
	moat_buf_puts(&out, "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\","
			    "\"permissionDecision\":");
	moat_buf_json_str(&out, v, strlen(v));
	moat_buf_puts(&out, ",\"permissionDecisionReason\":");
	/* SECURITY: the answer is JSON, which is UTF-8: a file name's bytes,
	 * or a reason cut short, must not make Claude Code reject it */
	moat_buf_append_utf8(&text, why.data ? why.data : "", why.len, false);
	moat_buf_json_str(&out, text.data ? text.data : "", text.len);
	moat_buf_puts(&out, "}}\n");
	*ret_write_failed = out.oom || why.oom || text.oom ||
			    fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout) != 0;
	moat_buf_release(&out);
	moat_buf_release(&why);
	moat_buf_release(&text);
}

/* ---- the command -------------------------------------------------------- */

/* The hook input's top level. Fields moat does not use are accepted (the
 * format is Claude Code's and grows); the ones it uses are checked. */
struct hook_input {
	json_t *root;
	const char *tool_name;
	json_t *tool_input;
	const char *cwd;
	const char *call_id;
};

static int parse_input(struct hook_answer *a, const char *text, size_t len, struct hook_input *in)
{
	struct moat_error err;
	json_t *ev, *v;
	int r;

	moat_error_clear(&err);
	r = moat_json_parse_object(text, len, "hook input", HOOK_INPUT_MAX, &in->root, &err);
	if (r < 0) {
		char buf[1024];

		moat_error_format(&err, buf, sizeof(buf));
		answer_fail(a, "input:invalid", "the hook input is not a valid JSON object: %s",
			    buf);
		return r;
	}
	/* cwd first: even a refused call is decided and recorded in its place */
	v = json_object_get(in->root, "cwd");
	if (v) {
		if (!json_is_string(v) || json_string_value(v)[0] != '/') {
			answer_fail(a, "input:invalid", "cwd must be an absolute path (a string)");
			return -EINVAL;
		}
		in->cwd = json_string_value(v);
	}
	v = json_object_get(in->root, "tool_name");
	if (json_is_string(v))
		in->tool_name = json_string_value(v);
	ev = json_object_get(in->root, "hook_event_name");
	if (!json_is_string(ev)) {
		answer_fail(a, "input:invalid", "hook_event_name must be a string, not %s",
			    ev ? moat_json_type_name(ev) : "missing");
		return -EINVAL;
	}
	if (strcmp(json_string_value(ev), "PreToolUse") != 0) {
		answer_fail(a, "input:invalid",
			    "moat hook claude-code answers PreToolUse only, not \"%.100s\"",
			    json_string_value(ev));
		return -EINVAL;
	}
	if (!in->tool_name || !in->tool_name[0]) {
		answer_fail(a, "input:invalid", "tool_name must be a non-empty string");
		return -EINVAL;
	}
	in->tool_input = json_object_get(in->root, "tool_input");
	if (!json_is_object(in->tool_input)) {
		answer_fail(a, "input:invalid", "tool_input must be an object, not %s",
			    in->tool_input ? moat_json_type_name(in->tool_input) : "missing");
		return -EINVAL;
	}
	v = json_object_get(in->root, "tool_use_id");
	if (v) {
		if (!json_is_string(v) || json_string_length(v) > HOOK_CALL_ID_MAX) {
			answer_fail(a, "input:invalid",
				    "tool_use_id must be a string of at most %u bytes",
				    HOOK_CALL_ID_MAX);
			return -EINVAL;
		}
		in->call_id = json_string_value(v);
	}
	if (!in->cwd) {
		answer_fail(a, "input:invalid", "cwd is missing from the hook input");
		return -EINVAL;
	}
	return 0;
}

/* Open the audit log the configuration names. Returns 0 with *ret NULL when
 * the log is not required and cannot be opened (a warning is printed). */
static int open_audit(struct hook_answer *a, const struct moat_config *c, const char *path,
		      struct moat_audit **ret)
{
	struct moat_audit_opts o;
	struct moat_error err;
	char buf[1024];

	memset(&o, 0, sizeof(o));
	o.path = path ? path : c->audit_log;
	o.fsync = c->audit_fsync;
	o.required = c->audit_required;
	o.syslog = c->audit_syslog;
	moat_error_clear(&err);
	*ret = NULL;
	if (moat_audit_open(&o, ret, &err) == 0)
		return 0;
	*ret = NULL;
	moat_error_format(&err, buf, sizeof(buf));
	if (o.required) {
		answer_fail(a, "audit:failed",
			    "the audit log cannot be opened (%s); nothing is allowed "
			    "unrecorded (audit_required)",
			    buf);
		return -EIO;
	}
	fprintf(stderr,
		"moat hook: warning: the audit log cannot be opened (%s); "
		"going on unrecorded (audit_required: false)\n",
		buf);
	return 0;
}

static void record(struct hook_answer *a, struct moat_audit *log, const struct cli_policy *cp,
		   const struct hook_input *in, const char *tool, json_t *args)
{
	struct moat_audit_record rec;
	struct moat_error err;
	char buf[1024];
	json_t *cmd = NULL;

	if (!log)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.call_id = in->call_id;
	rec.source = "hook:claude-code";
	rec.tool = tool;
	rec.args = args;
	if (args && cp->policy && moat_policy_logs_commands(cp->policy) &&
	    (moat_policy_tool_effects(cp->policy, tool) & MOAT_EFFECT_EXECUTE)) {
		cmd = json_object_get(args, "command");
		rec.command = json_is_string(cmd) ? json_string_value(cmd) : NULL;
	}
	rec.decision = &a->d;
	rec.exempt_paths = a->notes.exempt;
	rec.nexempt_paths = a->notes.nexempt;
	rec.has_result = false;
	rec.exit_code = -1;
	moat_error_clear(&err);
	if (moat_audit_write(log, &rec, &err) == 0)
		return;
	moat_error_format(&err, buf, sizeof(buf));
	if (moat_audit_required(log)) {
		answer_fail(a, "audit:failed",
			    "the audit log cannot be written (%s); nothing is allowed "
			    "unrecorded (audit_required)",
			    buf);
		return;
	}
	fprintf(stderr, "moat hook: warning: the audit record was not written (%s)\n", buf);
}

static int hook_claude_code(int argc, char **argv)
{
	struct hook_answer a;
	struct hook_input in;
	struct cli_policy cp;
	struct moat_audit *log = NULL;
	struct moat_error err;
	const char *audit_path = NULL, *tool = NULL;
	json_t *args = NULL;
	char *text = NULL;
	size_t len = 0;
	bool bad_args = false, write_failed = false, defer = false;
	struct hook_search srch = {0};
	int r;

	memset(&a, 0, sizeof(a));
	memset(&in, 0, sizeof(in));
	cli_policy_init(&cp);
	/* SECURITY: until the policy decides, the answer is a deny; a path
	 * that forgot to decide can never print allow */
	a.d.verdict = MOAT_DENY;
	a.d.hard = true;
	moat_strlcpy(a.d.rule, "hook:undecided", sizeof(a.d.rule));
	moat_strlcpy(a.d.reason, "moat reached no decision", sizeof(a.d.reason));

	/* argv[0] is "claude-code" */
	for (int i = 1; i < argc && !bad_args; i++) {
		if (cli_is_help(argv[i])) {
			fputs(hook_usage, stdout);
			fputs(cli_policy_help, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--audit-log") || !strncmp(argv[i], "--audit-log=", 12)) {
			audit_path =
			    argv[i][11] == '=' ? argv[i] + 12 : (i + 1 < argc ? argv[++i] : NULL);
			if (!audit_path || !*audit_path) {
				answer_fail(&a, "hook:usage", "--audit-log needs a file");
				bad_args = true;
			}
			continue;
		}
		if (!strcmp(argv[i], "--on-allow") || !strncmp(argv[i], "--on-allow=", 11)) {
			const char *val =
			    argv[i][10] == '=' ? argv[i] + 11 : (i + 1 < argc ? argv[++i] : NULL);

			if (val && !strcmp(val, "defer")) {
				defer = true;
			} else if (!val || strcmp(val, "allow") != 0) {
				answer_fail(&a, "hook:usage", "--on-allow takes allow or defer");
				bad_args = true;
			}
			continue;
		}
		r = cli_policy_opt(&cp, "hook", argc, argv, &i);
		if (r == 1)
			continue;
		/* cli_policy_opt printed what was wrong with a malformed option */
		if (r)
			answer_fail(&a, "hook:usage", "malformed option '%s'", argv[i]);
		else
			answer_fail(&a, "hook:usage", "unknown option '%s' (see moat hook --help)",
				    argv[i]);
		bad_args = true;
	}

	/* SECURITY: the input is read and checked even when the command line
	 * was bad, so that Claude Code always gets an answer, and only a
	 * complete, well-formed input can lead to an allow */
	r = cli_read_all("-", HOOK_INPUT_MAX, &text, &len);
	if (r == -EFBIG && !a.failed)
		answer_fail(&a, "input:too-large", "the hook input is over %u bytes",
			    HOOK_INPUT_MAX);
	else if (r < 0 && !a.failed)
		answer_fail(&a, "input:invalid", "cannot read the hook input: %s", strerror(-r));
	else if (r == 0 && !a.failed)
		parse_input(&a, text, len, &in);

	/* the policy and the audit log of the place the call happens */
	if (!bad_args) {
		if (!cp.cwd_arg)
			cp.cwd_arg = in.cwd; /* NULL: our own working directory */
		r = cli_policy_load(&cp, "hook", true);
		if (r) {
			if (!a.failed)
				answer_fail(&a, "hook:config",
					    "moat cannot load its configuration (the message "
					    "above says why)");
		} else if (open_audit(&a, cp.user, audit_path, &log) < 0) {
			/* a.failed */
		}
	}

	if (!a.failed) {
		r = map_call(&a, in.tool_name, in.tool_input, cp.cwd, &tool, &args, &srch);
		if (r < 0 && !a.failed)
			answer_fail(&a, "hook:error", "cannot map the %s call", in.tool_name);
		if (r == 0) {
			moat_error_clear(&err);
			/* SECURITY: Claude Code runs the tool itself, unconfined */
			r = moat_policy_check_args_notes(
			    cp.policy, tool, args, MOAT_CHECK_UNSANDBOXED, &a.d, &a.notes, &err);
			if (r < 0) {
				/* the policy's DENY names the problem; it is bad input */
				a.failed = true;
				snprintf(a.error, sizeof(a.error), "%s", a.d.reason);
			} else {
				protect_settings(tool, args, cp.cwd, &a.d);
				check_search(cp.policy, &srch, cp.cwd, in.tool_name, &a.d);
			}
		}
	}
	record(&a, log, &cp, &in, tool ? tool : in.tool_name, args);

	print_answer(&a, defer, &write_failed);
	if (write_failed && !a.failed) {
		a.failed = true;
		snprintf(a.error, sizeof(a.error), "cannot write the answer to stdout");
	}
	if (a.failed)
		fprintf(stderr, "moat hook: refused: %s\n", a.error);

	json_decref(args);
	json_decref(in.root);
	free(text);
	moat_audit_close(log);
	cli_policy_release(&cp);
	return a.failed ? HOOK_EXIT_BLOCK : HOOK_EXIT_DECIDED;
}

int cmd_hook(int argc, char **argv)
{
	if (argc >= 2 && cli_is_help(argv[1])) {
		fputs(hook_usage, stdout);
		fputs(cli_policy_help, stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "claude-code"))
		return hook_claude_code(argc - 1, argv + 1);
	/* SECURITY: a hook command that is not understood still refuses */
	fputs("{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\","
	      "\"permissionDecision\":\"deny\",\"permissionDecisionReason\":"
	      "\"moat hook: unknown agent (the command is 'moat hook claude-code')\"}}\n",
	      stdout);
	fflush(stdout);
	fprintf(stderr, "moat hook: %s agent%s%s (supported: claude-code)\n",
		argc >= 2 ? "unknown" : "missing", argc >= 2 ? " " : "", argc >= 2 ? argv[1] : "");
	return HOOK_EXIT_BLOCK;
}
