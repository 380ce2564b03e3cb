/* moat tool: run one tool call exactly as an agent's call would run, through
 * policy, approval, the sandbox and the audit log, and print the result
 * JSON. With --replay, run a whole recorded session (JSON lines) in one
 * session, answers to approvals taken from the file, and print a table.
 *
 * Exit: 0 the tool succeeded, 1 it failed (or the audit log refused), 3
 * denied, 2 bad input (nothing ran). This file parses and prints; it never
 * decides anything itself. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <moat/session.h>

#include "base/json.h"
#include "base/str.h"
#include "cli/cli.h"
#include "cli/policy_opts.h"
#include "core/config.h"
#include "core/policy_check.h"
#include "audit/audit.h"
#include "sandbox/sandbox.h"
#include "gate/gate.h"
#include "tools/tools.h"

#define REPLAY_MAX_BYTES (16u << 20)
#define REPLAY_MAX_CALLS 10000u

static const char tool_usage[] =
	"usage: moat tool [options] NAME 'ARGS_JSON'\n"
	"       moat tool [options] --replay SESSION.jsonl\n"
	"\n"
	"Run one tool call through the whole pipeline: policy, approval, the Linux\n"
	"sandbox (bash) or the confined file I/O (file tools), and the audit log.\n"
	"Prints one JSON object: {\"ok\", \"output\", \"error\", \"decision\", \"approval\",\n"
	"\"data\"}. Tools: read_file, write_file, edit_file, list_directory, bash\n"
	"(alias run_shell_command); docs/tools.md describes their arguments.\n"
	"\n"
	"options:\n"
	"  --approve-with MODE  who answers an ASK: tty (default: the terminal, never\n"
	"                       stdin; no terminal means denied), deny (nobody: ASK is\n"
	"                       denied), allow-listed (only the config's \"approvals\")\n"
	"  --audit-log FILE     append the audit record here ('-': stderr) instead of\n"
	"                       the configuration's audit_log\n"
	"  --replay FILE        run every call of a session file, one JSON object per\n"
	"                       line: {\"tool\": NAME, \"args\": {...}, \"answer\":\n"
	"                       \"yes\"|\"no\"|\"always\"|\"prefix\", \"note\": TEXT}; the\n"
	"                       answer is what the human says if the call asks\n"
	"                       (default no; prefix: always, for bash commands with\n"
	"                       the same first word);\n"
	"                       prints a table\n"
	"  --pretty             indent the result JSON\n"
	"\n"
	"exit status: 0 success, 1 the tool failed, 3 denied, 2 bad input (nothing ran)\n"
	"(--replay: 0 when every line was valid, 2 otherwise)\n\n";

enum approve_mode { APPROVE_TTY = 0, APPROVE_DENY, APPROVE_LISTED };

static int exit_for(const struct moat_call_result *r)
{
	switch (r->status) {
	case MOAT_CALL_OK:
		return MOAT_EXIT_OK;
	case MOAT_CALL_DENIED:
		return MOAT_EXIT_ASK;
	case MOAT_CALL_BAD_INPUT:
		return MOAT_EXIT_USAGE;
	case MOAT_CALL_FAILED:
	case MOAT_CALL_AUDIT_FAILED:
	case MOAT_CALL_DEFERRED: /* not asked for (no defer_ask) */
		return MOAT_EXIT_DENY;
	}
	return MOAT_EXIT_DENY;
}

/* ---- replay ---- */

struct replay_call {
	char *tool;
	char *args; /* compact JSON */
	char *summary;
	char *note;
	enum moat_answer answer;
	bool has_answer;
	bool prefix; /* "prefix": always, for commands with the same first word */
};

struct replay_state {
	const struct replay_call *cur;
	bool asked;
};

static int replay_approver(void *ud, const struct moat_ask *ask, int timeout_ms,
			   struct moat_reply *ret)
{
	struct replay_state *st = ud;

	st->asked = true;
	memset(ret, 0, sizeof(*ret));
	ret->answer = st->cur->has_answer ? st->cur->answer : MOAT_ANSWER_DENIED;
	if (st->cur->prefix && ask->always_prefix)
		moat_strlcpy(ret->always_pattern, ask->always_prefix, sizeof(ret->always_pattern));
	return 0;
}

static void replay_free(struct replay_call *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].tool);
		free(c[i].args);
		free(c[i].summary);
		free(c[i].note);
	}
	free(c);
}

static char *summary_of(json_t *args)
{
	static const char *const keys[] = {"command", "path", "file_path", "url"};

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(keys); i++) {
		json_t *v = json_object_get(args, keys[i]);

		if (json_is_string(v))
			return moat_strdup(json_string_value(v));
	}
	return moat_strdup("");
}

/* Parse the whole file first: a bad line stops everything before anything
 * runs. */
static int replay_load(const char *path, struct replay_call **ret, size_t *ret_n)
{
	struct replay_call *calls = NULL;
	size_t n = 0, lineno = 0, len = 0;
	char *text = NULL, *p, *end;
	int r;

	r = cli_read_all(path, REPLAY_MAX_BYTES, &text, &len);
	if (r < 0)
		return cli_usage_error("tool", "--replay: cannot read %s: %s", path, strerror(-r));
	calls = calloc(REPLAY_MAX_CALLS, sizeof(*calls));
	if (!calls) {
		free(text);
		return cli_usage_error("tool", "out of memory");
	}
	for (p = text, end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *nul;
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct moat_error err;
		json_t *root = NULL, *v;
		const char *key;
		char where[64], bad[256];
		enum moat_tool_kind kind;
		char *cur = p;

		lineno++;
		p = nl ? (char *)nl + 1 : end;
		/* SECURITY: a NUL byte would end the line for a C string and
		 * hide what follows it on the same line */
		nul = memchr(cur, '\0', l);
		if (nul) {
			r = cli_usage_error("tool", "%s:%zu:%zu: a NUL byte", path, lineno,
					    (size_t)(nul - cur) + 1);
			goto fail;
		}
		{
			size_t k = 0;

			while (k < l && (cur[k] == ' ' || cur[k] == '\t' || cur[k] == '\r'))
				k++;
			if (k == l || cur[k] == '#')
				continue;
		}
		if (n >= REPLAY_MAX_CALLS) {
			r = cli_usage_error("tool", "%s:%zu: more than %u calls", path, lineno,
					    REPLAY_MAX_CALLS);
			goto fail;
		}
		moat_error_clear(&err);
		snprintf(where, sizeof(where), "%s", "line");
		if (moat_json_parse_object(cur, l, where, REPLAY_MAX_BYTES, &root, &err) < 0) {
			r = cli_usage_error("tool", "%s:%zu: %s", path, lineno, err.msg);
			goto fail;
		}
		json_object_foreach(root, key, v) {
			if (strcmp(key, "tool") && strcmp(key, "args") && strcmp(key, "answer") &&
			    strcmp(key, "note")) {
				json_decref(root);
				r = cli_usage_error("tool",
						    "%s:%zu: unknown key \"%s\" (expected tool, "
						    "args, answer, note)",
						    path, lineno, key);
				goto fail;
			}
		}
		v = json_object_get(root, "tool");
		if (!json_is_string(v)) {
			json_decref(root);
			r = cli_usage_error("tool", "%s:%zu: \"tool\" must be a string", path,
					    lineno);
			goto fail;
		}
		calls[n].tool = moat_strdup(json_string_value(v));
		v = json_object_get(root, "args");
		if (!json_is_object(v)) {
			json_decref(root);
			r = cli_usage_error("tool", "%s:%zu: \"args\" must be an object", path,
					    lineno);
			n++;
			goto fail;
		}
		/* every call is checked before the first one runs: a bad one
		 * later in the file must not leave the earlier ones done */
		kind = moat_tool_lookup(json_string_value(json_object_get(root, "tool")));
		if (kind == MOAT_TOOL_NONE) {
			r = cli_usage_error("tool", "%s:%zu: unknown tool \"%.100s\"", path, lineno,
					    calls[n].tool ? calls[n].tool : "?");
			json_decref(root);
			n++;
			goto fail;
		}
		if (moat_tool_args_check(kind, v, bad, sizeof(bad)) < 0) {
			r = cli_usage_error("tool", "%s:%zu: %s", path, lineno, bad);
			json_decref(root);
			n++;
			goto fail;
		}
		calls[n].args = json_dumps(v, JSON_COMPACT);
		calls[n].summary = summary_of(v);
		v = json_object_get(root, "answer");
		if (v) {
			const char *a = json_is_string(v) ? json_string_value(v) : "";

			calls[n].has_answer = true;
			if (!strcmp(a, "yes"))
				calls[n].answer = MOAT_ANSWER_APPROVED;
			else if (!strcmp(a, "no"))
				calls[n].answer = MOAT_ANSWER_DENIED;
			else if (!strcmp(a, "always"))
				calls[n].answer = MOAT_ANSWER_APPROVED_ALWAYS;
			else if (!strcmp(a, "prefix")) {
				calls[n].answer = MOAT_ANSWER_APPROVED_ALWAYS;
				calls[n].prefix = true;
			}
			else {
				json_decref(root);
				r = cli_usage_error("tool",
						    "%s:%zu: \"answer\" must be \"yes\", \"no\", "
						    "\"always\" or \"prefix\"",
						    path, lineno);
				n++;
				goto fail;
			}
		}
		v = json_object_get(root, "note");
		if (v && !json_is_string(v)) {
			json_decref(root);
			r = cli_usage_error("tool", "%s:%zu: \"note\" must be a string", path,
					    lineno);
			n++;
			goto fail;
		}
		calls[n].note = v ? moat_strdup(json_string_value(v)) : NULL;
		json_decref(root);
		n++;
		if (!calls[n - 1].tool || !calls[n - 1].args || !calls[n - 1].summary) {
			r = cli_usage_error("tool", "out of memory");
			goto fail;
		}
	}
	free(text);
	*ret = calls;
	*ret_n = n;
	return 0;
fail:
	free(text);
	replay_free(calls, n);
	return r;
}

/* One cell: printable ASCII only, cut to width with "..." */
/* A table cell: untrusted text shown escaped (controls, bidi overrides,
 * invisible marks), newlines and tabs as blanks, cut at width bytes with
 * "..." at a character boundary. */
static void cell(char *out, size_t outsz, const char *s, size_t width)
{
	struct moat_buf b = MOAT_BUF_INIT;
	char *t = moat_strdup(s ? s : "");
	size_t o;

	out[0] = '\0';
	for (size_t i = 0; t && t[i]; i++)
		if (t[i] == '\n' || t[i] == '\t' || t[i] == '\r')
			t[i] = ' ';
	if (t)
		moat_buf_put_shown(&b, t, strlen(t));
	free(t);
	if (!b.oom && b.data) {
		o = moat_strlcpy(out, b.data, outsz);
		if (o >= outsz) { /* cut by the buffer: at a character boundary */
			o = outsz - 1;
			while (o > 0 && ((unsigned char)out[o] & 0xc0) == 0x80)
				o--;
			out[o] = '\0';
		}
		if (o > width && width > 3 && width < outsz) {
			size_t cut = width - 3;

			while (cut > 0 && ((unsigned char)out[cut] & 0xc0) == 0x80)
				cut--;
			memcpy(out + cut, "...", 4);
		}
	}
	moat_buf_release(&b);
}

static int run_replay(struct moat_session *s, const char *path, const char *audit_path)
{
	struct replay_call *calls = NULL;
	struct replay_state st;
	size_t n = 0;
	unsigned counts[5] = {0};
	int r;

	r = replay_load(path, &calls, &n);
	if (r)
		return r;
	printf("decision: allow, deny, or ask answered by the human (ask:yes, ask:no), by a\n"
	       "pre-approval in the configuration (ask:pre) or by an earlier 'always' (ask:mem)\n\n");
	printf("%-3s %-15s %-42s %-8s %-34s %s\n", "#", "tool", "call", "decision", "rule",
	       "result");
	for (size_t i = 0; i < n; i++) {
		struct moat_call_opts o = {.cancel_fd = -1};
		struct moat_call_result res;
		char c1[64], c2[128], c3[128], c4[160];
		const char *verdict;

		st.cur = &calls[i];
		st.asked = false;
		o.approver = replay_approver;
		o.approver_ud = &st;
		o.approver_name = "session-file";
		if (calls[i].note) {
			/* the session file's text, shown escaped (ESC, bidi) */
			struct moat_buf nb = MOAT_BUF_INIT;

			moat_buf_put_shown(&nb, calls[i].note, strlen(calls[i].note));
			printf("    # %s\n", nb.data && !nb.oom ? nb.data : "?");
			moat_buf_release(&nb);
		}
		moat_session_call(s, calls[i].tool, calls[i].args, strlen(calls[i].args), &o,
				  &res);
		verdict = moat_verdict_name(res.final);
		if (res.decision.verdict == MOAT_ASK) {
			if (!strcmp(res.approval_by, "preapproved"))
				verdict = "ask:pre";
			else if (!strcmp(res.approval_by, "session"))
				verdict = "ask:mem";
			else
				verdict = res.final == MOAT_ALLOW ? "ask:yes" : "ask:no";
		}
		cell(c1, sizeof(c1), calls[i].tool, 15);
		cell(c2, sizeof(c2), calls[i].summary, 42);
		cell(c3, sizeof(c3), res.decision.rule, 34);
		if (res.status == MOAT_CALL_OK) {
			char first[128] = "";

			cell(first, sizeof(first), res.output ? res.output : "", 40);
			snprintf(c4, sizeof(c4), "ok %s", first);
		} else if (res.status == MOAT_CALL_DENIED) {
			snprintf(c4, sizeof(c4), "blocked, nothing ran");
		} else {
			cell(c4, sizeof(c4), res.error, 60);
		}
		printf("%-3zu %-15s %-42s %-8s %-34s %s\n", i + 1, c1, c2, verdict, c3, c4);
		counts[res.status < 5 ? res.status : 1]++;
		moat_call_result_release(&res);
	}
	printf("\n%zu calls: %u ok, %u failed, %u denied, %u bad input, %u audit failures\n", n,
	       counts[MOAT_CALL_OK], counts[MOAT_CALL_FAILED], counts[MOAT_CALL_DENIED],
	       counts[MOAT_CALL_BAD_INPUT], counts[MOAT_CALL_AUDIT_FAILED]);
	if (audit_path)
		printf("audit log: %s\n", audit_path);
	replay_free(calls, n);
	return 0;
}

int cmd_tool(int argc, char **argv)
{
	struct cli_policy cp;
	struct moat_session_opts so;
	struct moat_session *s = NULL;
	struct moat_call_result res;
	struct moat_error err;
	enum approve_mode mode = APPROVE_TTY;
	const char *name = NULL, *args = NULL, *audit = NULL, *replay = NULL;
	bool pretty = false;
	int i, r;

	cli_policy_init(&cp);
	moat_error_clear(&err);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (cli_is_help(a)) {
			fputs(tool_usage, stdout);
			fputs(cli_policy_help, stdout);
			return 0;
		}
		r = cli_policy_opt(&cp, "tool", argc, argv, &i);
		if (r == 1)
			continue;
		if (r)
			return r;
		if (!strcmp(a, "--approve-with") || !strncmp(a, "--approve-with=", 15)) {
			const char *v = a[14] == '=' ? a + 15 : (i + 1 < argc ? argv[++i] : NULL);

			if (!v)
				return cli_usage_error("tool", "--approve-with needs a value");
			if (!strcmp(v, "tty"))
				mode = APPROVE_TTY;
			else if (!strcmp(v, "deny"))
				mode = APPROVE_DENY;
			else if (!strcmp(v, "allow-listed"))
				mode = APPROVE_LISTED;
			else
				return cli_usage_error("tool",
						       "--approve-with: unknown mode '%s' (tty, "
						       "deny, allow-listed)",
						       v);
		} else if (!strcmp(a, "--audit-log") || !strncmp(a, "--audit-log=", 12)) {
			audit = a[11] == '=' ? a + 12 : (i + 1 < argc ? argv[++i] : NULL);
			if (!audit || !*audit)
				return cli_usage_error("tool", "--audit-log needs a file");
		} else if (!strcmp(a, "--replay") || !strncmp(a, "--replay=", 9)) {
			replay = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
			if (!replay || !*replay)
				return cli_usage_error("tool", "--replay needs a file");
		} else if (!strcmp(a, "--pretty")) {
			pretty = true;
		} else if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (a[0] == '-' && a[1]) {
			return cli_usage_error("tool", "unknown option '%s' (see moat tool --help)",
					       a);
		} else {
			break;
		}
	}
	if (!replay) {
		if (i >= argc)
			return cli_usage_error("tool", "missing the tool name (see moat tool --help)");
		name = argv[i++];
		if (i >= argc)
			return cli_usage_error("tool",
					       "missing the arguments: a JSON object such as "
					       "'{\"path\": \"README.md\"}'");
		args = argv[i++];
		if (i < argc)
			return cli_usage_error("tool", "unexpected argument '%s'", argv[i]);
	} else if (i < argc) {
		return cli_usage_error("tool", "--replay takes no tool name or arguments");
	}

	r = cli_policy_load(&cp, "tool", true);
	if (r)
		goto out;
	memset(&so, 0, sizeof(so));
	so.config = cp.user;
	so.project = cp.project;
	so.policy = cp.policy;
	so.cwd = cp.cwd;
	so.audit_path = audit;
	so.source = "tool";
	so.single_threaded = true; /* one call, or a replay, on this thread */
	if (mode == APPROVE_TTY) {
		so.approver = moat_tty_approver;
		so.approver_name = "tty";
	}
	so.preapproved_only = mode != APPROVE_TTY;
	r = moat_session_new(&so, &s, &err);
	if (r < 0) {
		r = cli_print_error("tool", &err);
		goto out;
	}
	if (replay) {
		const char *ap = audit ? audit : cp.user->audit_log;
		char def[PATH_MAX];

		if (!ap && moat_audit_default_path(def, sizeof(def)) == 0)
			ap = def;
		r = run_replay(s, replay, ap);
		goto out;
	}
	r = moat_session_call(s, name, args, strlen(args), NULL, &res);
	if (r < 0) {
		r = cli_usage_error("tool", "out of memory");
		goto out;
	}
	if (pretty) {
		json_t *j = json_loads(res.json, 0, NULL);
		char *t = j ? json_dumps(j, JSON_INDENT(2)) : NULL;

		puts(t ? t : res.json);
		free(t);
		json_decref(j);
	} else {
		puts(res.json);
	}
	if (res.status != MOAT_CALL_OK && res.status != MOAT_CALL_DENIED)
		fprintf(stderr, "moat tool: %s\n", res.error);
	r = exit_for(&res);
	moat_call_result_release(&res);
out:
	moat_session_free(s);
	cli_policy_release(&cp);
	return r;
}
