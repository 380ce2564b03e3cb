/* The pipeline: one path for every agent tool call.
 *
 *   parse (strict) -> policy -> approval gate -> tool (under enforcement) -> audit
 *
 * This file only joins the stages; each decides in its own module. It must
 * never run a tool whose call was not ALLOW after the gate, never run one
 * when the audit log is required and cannot take the record, and never hand
 * back a result that was not recorded (a failed audit write withholds it).
 * A call deferred because it needs a human (defer_ask) ran nothing and is
 * not recorded: the caller makes it again where it may wait.
 * Thread-safe: a session is shared by the calls of an MCP server. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <moat/session.h>

#include "audit/audit.h"
#include "base/json.h"
#include "base/str.h"
#include "core/config.h"
#include "core/policy_check.h"
#include "gate/gate.h"
#include "tools/tools.h"

struct moat_session {
	struct moat_config *own_config; /* loaded here (else borrowed) */
	struct moat_config *own_project;
	struct moat_policy *own_policy;
	const struct moat_config *config;
	const struct moat_policy *policy;
	struct moat_gate *gate;
	struct moat_audit *audit;
	struct moat_tool_env env;
	char audit_real[PATH_MAX]; /* the audit log as opened (env.audit_log) */
	char workspace[PATH_MAX];
	char source[32];
	char id_prefix[24];
	atomic_ulong next_id;
	moat_approver_fn approver;
	void *approver_ud;
	char approver_name[32];
	bool preapproved_only;
	bool audit_fsync;
};

const struct moat_policy *moat_session_policy(const struct moat_session *s)
{
	return s->policy;
}

static int load_configs(struct moat_session *s, const struct moat_session_opts *o,
			struct moat_error *err)
{
	char project[PATH_MAX + 32];
	int r;

	r = moat_config_new(&s->own_config);
	if (r < 0)
		return r;
	if (o->config_json) {
		r = moat_config_load_string(s->own_config, o->config_json, strlen(o->config_json),
					    "<config>", 0, err);
		if (r < 0)
			return r;
	} else if (o->config_path) {
		r = moat_config_load_file(s->own_config, o->config_path, 0, err);
		if (r < 0)
			return r;
	} else {
		char path[PATH_MAX];

		if (moat_config_user_path(path, sizeof(path)) == 0) {
			r = moat_config_load_file(s->own_config, path, 0, err);
			if (r < 0)
				return r;
		}
	}
	s->config = s->own_config;
	if (!o->no_project_config) {
		if (moat_config_project_path(s->workspace, project, sizeof(project)) == 0) {
			r = moat_config_new(&s->own_project);
			if (r < 0)
				return r;
			r = moat_config_load_file(s->own_project, project, MOAT_CONFIG_PROJECT,
						  err);
			if (r < 0)
				return r;
		}
	}
	r = moat_policy_new(s->own_config, s->own_project, s->workspace, &s->own_policy, err);
	if (r < 0)
		return r;
	s->policy = s->own_policy;
	return 0;
}

int moat_session_new(const struct moat_session_opts *o, struct moat_session **ret,
		     struct moat_error *err)
{
	struct moat_session *s;
	struct moat_audit_opts ao;
	struct timespec ts;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	{
		char here[PATH_MAX];
		const char *cwd = o->cwd;

		if (!cwd) {
			if (!getcwd(here, sizeof(here))) {
				r = -errno;
				moat_error_set(err, "cannot get the working directory: %s",
					       strerror(errno));
				goto fail;
			}
			cwd = here;
		}
		/* SECURITY: the workspace is the real directory, symlinks resolved:
		 * the tools and the sandbox compare real paths against it */
		if (!realpath(cwd, s->workspace)) {
			r = -errno;
			moat_error_set(err, "cannot use '%s' as the working directory: %s", cwd,
				       strerror(errno));
			goto fail;
		}
	}
	if (o->config) {
		s->config = o->config;
		s->policy = o->policy;
		if (!s->policy) {
			r = moat_policy_new(o->config, o->project, s->workspace, &s->own_policy,
					    err);
			if (r < 0)
				goto fail;
			s->policy = s->own_policy;
		}
	} else {
		r = load_configs(s, o, err);
		if (r < 0)
			goto fail;
	}

	{
		/* a project file may only tighten: a shorter approval timeout,
		 * fsync on (config.c refuses everything that would loosen) */
		struct moat_config eff = *s->config; /* shallow, read only */
		const struct moat_config *pj = o->config ? o->project : s->own_project;

		if (pj && pj->approval_timeout_set &&
		    pj->approval_timeout_s < eff.approval_timeout_s)
			eff.approval_timeout_s = pj->approval_timeout_s;
		r = moat_gate_new(&eff, &s->gate, err);
		s->audit_fsync = s->config->audit_fsync || (pj && pj->audit_fsync);
	}
	if (r < 0)
		goto fail;
	s->approver = o->preapproved_only ? NULL : o->approver;
	s->approver_ud = o->approver_ud;
	moat_strlcpy(s->approver_name, o->approver_name ? o->approver_name : "callback",
		     sizeof(s->approver_name));
	s->preapproved_only = o->preapproved_only;
	moat_gate_set_approver(s->gate, s->approver, s->approver_ud, s->approver_name);

	memset(&ao, 0, sizeof(ao));
	ao.path = o->audit_path ? o->audit_path : s->config->audit_log;
	ao.fsync = s->audit_fsync;
	ao.required = s->config->audit_required;
	ao.syslog = s->config->audit_syslog;
	r = moat_audit_open(&ao, &s->audit, err);
	if (r < 0 && ao.required)
		goto fail;
	if (r < 0)
		s->audit = NULL; /* audit_required: false; calls go on unrecorded */

	s->env.policy = s->policy;
	s->env.cfg = s->config;
	s->env.workspace = s->workspace;
	s->env.output_cap = o->output_cap;
	s->env.env = NULL;
	s->env.project_cfg = o->config ? o->project : s->own_project;
	if (moat_audit_real_path(s->audit, s->audit_real, sizeof(s->audit_real)) == 0)
		s->env.audit_log = s->audit_real;
	moat_strlcpy(s->source, o->source ? o->source : "tool", sizeof(s->source));
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(s->id_prefix, sizeof(s->id_prefix), "%lx%04lx",
		 (unsigned long)ts.tv_sec & 0xffffffUL, (unsigned long)getpid() & 0xffffUL);
	atomic_init(&s->next_id, 1);
	/* last, while the caller is single-threaded (session.h): bash's fork
	 * server copies the session as it is now. Without it (it could not
	 * start), each bash call forks the caller instead */
	if (!o->single_threaded) {
		struct moat_error serr;

		moat_error_clear(&serr);
		(void)moat_bash_server_start(&s->env, &serr);
	}
	*ret = s;
	return 0;
fail:
	moat_session_free(s);
	return r < 0 ? r : -EINVAL;
}

struct moat_session *moat_session_free(struct moat_session *s)
{
	if (!s)
		return NULL;
	moat_bash_server_stop(&s->env);
	moat_audit_close(s->audit);
	moat_gate_free(s->gate);
	moat_policy_free(s->own_policy);
	moat_config_free(s->own_project);
	moat_config_free(s->own_config);
	free(s);
	return NULL;
}

void moat_call_result_release(struct moat_call_result *r)
{
	if (!r)
		return;
	free(r->json);
	free(r->output);
	free(r->data_json);
	if (r->structured)
		json_decref((json_t *)r->structured);
	r->json = r->output = r->data_json = NULL;
	r->structured = NULL;
}

static const char *status_error_kind(enum moat_call_status st)
{
	switch (st) {
	case MOAT_CALL_OK:
		return NULL;
	case MOAT_CALL_FAILED:
		return "failed";
	case MOAT_CALL_DENIED:
		return "denied";
	case MOAT_CALL_BAD_INPUT:
		return "bad_input";
	case MOAT_CALL_AUDIT_FAILED:
		return "audit_failed";
	case MOAT_CALL_DEFERRED:
		return "deferred";
	}
	return "failed";
}

/* A JSON string of possibly invalid UTF-8: invalid bytes become U+FFFD
 * (keep_nul: a NUL byte is kept, escaped). */
static void put_str(struct moat_buf *b, const char *s, size_t n, bool keep_nul)
{
	struct moat_buf fixed = MOAT_BUF_INIT;

	if (moat_utf8_valid(s, n)) {
		moat_buf_json_str(b, s, n);
		return;
	}
	moat_buf_append_utf8(&fixed, s, n, keep_nul);
	moat_buf_json_str(b, fixed.data ? fixed.data : "", fixed.len);
	moat_buf_release(&fixed);
}

/* key is the literal text before the value: ",\"name\":" */
static void put_key_str(struct moat_buf *b, const char *key, const char *v)
{
	moat_buf_puts(b, key);
	put_str(b, v, strlen(v), false);
}

/* A tool's data as compact JSON, written directly (jansson's dumper costs
 * as much as the rest of a small read_file call). Reals go through jansson
 * so that they read the same as everywhere else. */
static int put_value(struct moat_buf *b, json_t *v, unsigned depth)
{
	int r;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		size_t klen;
		json_t *m;
		bool first = true;

		if (depth > MOAT_JSON_MAX_DEPTH)
			return -E2BIG;
		moat_buf_putc(b, '{');
		json_object_keylen_foreach(v, k, klen, m) {
			if (!first)
				moat_buf_putc(b, ',');
			first = false;
			put_str(b, k, klen, true);
			moat_buf_putc(b, ':');
			r = put_value(b, m, depth + 1);
			if (r < 0)
				return r;
		}
		moat_buf_putc(b, '}');
		return 0;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *m;

		if (depth > MOAT_JSON_MAX_DEPTH)
			return -E2BIG;
		moat_buf_putc(b, '[');
		json_array_foreach(v, i, m) {
			if (i)
				moat_buf_putc(b, ',');
			r = put_value(b, m, depth + 1);
			if (r < 0)
				return r;
		}
		moat_buf_putc(b, ']');
		return 0;
	}
	case JSON_STRING:
		put_str(b, json_string_value(v), json_string_length(v), true);
		return 0;
	case JSON_INTEGER:
		moat_buf_put_llong(b, json_integer_value(v));
		return 0;
	case JSON_REAL: {
		char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		if (!d)
			return -ENOMEM;
		moat_buf_puts(b, d);
		free(d);
		return 0;
	}
	case JSON_TRUE:
		moat_buf_puts(b, "true");
		return 0;
	case JSON_FALSE:
		moat_buf_puts(b, "false");
		return 0;
	case JSON_NULL:
		moat_buf_puts(b, "null");
		return 0;
	}
	return -EINVAL;
}

/* The tool's data alone as compact JSON, into r->data_json (d: scratch). */
static int data_json(struct moat_call_result *r, json_t *data, struct moat_buf *d)
{
	int r2 = put_value(d, data, 1);

	if (r2 < 0 && r2 != -ENOMEM) {
		/* deeper than any tool's data goes: jansson's dumper */
		char *j = json_dumps(data, JSON_COMPACT);

		moat_buf_reset(d);
		r2 = j ? 0 : -ENOMEM;
		if (j)
			moat_buf_puts(d, j);
		free(j);
	}
	if (r2 < 0 || d->oom) {
		moat_buf_release(d);
		return r2 < 0 ? r2 : -ENOMEM;
	}
	r->data_json = moat_buf_steal(d);
	return r->data_json ? 0 : -ENOMEM;
}

/* The result object the CLI prints and the MCP server wraps, and the data
 * alone (r->data_json). Written by hand: the output can be large, and
 * jansson's escaper is the slowest part of a small read_file call. lean:
 * the caller reads r->json only when there is no output (the MCP server),
 * so with an output only data_json is made. */
static int build_json(struct moat_call_result *r, const char *tool, const struct moat_approval *ap,
		      json_t *data, bool lean)
{
	struct moat_buf b = MOAT_BUF_INIT;
	size_t olen;

	if (lean && r->output) {
		struct moat_buf d = MOAT_BUF_INIT;

		return data ? data_json(r, data, &d) : 0;
	}
	olen = r->output ? strlen(r->output) : 0;
	moat_buf_reserve(&b, olen + olen / 8 + 512);
	moat_buf_puts(&b, r->status == MOAT_CALL_OK ? "{\"ok\":true" : "{\"ok\":false");
	put_key_str(&b, ",\"call_id\":", r->call_id);
	if (tool)
		put_key_str(&b, ",\"tool\":", tool);
	if (r->status != MOAT_CALL_OK)
		put_key_str(&b, ",\"status\":", status_error_kind(r->status));
	if (r->output) {
		moat_buf_puts(&b, ",\"output\":");
		put_str(&b, r->output, olen, false);
	}
	if (r->status != MOAT_CALL_OK)
		put_key_str(&b, ",\"error\":", r->error);
	moat_buf_puts(&b, ",\"decision\":{\"verdict\":");
	moat_buf_puts(&b, r->decision.verdict == MOAT_ALLOW  ? "\"allow\""
			  : r->decision.verdict == MOAT_ASK ? "\"ask\""
							     : "\"deny\"");
	put_key_str(&b, ",\"rule\":", r->decision.rule);
	put_key_str(&b, ",\"reason\":", r->decision.reason);
	put_key_str(&b, ",\"final\":", moat_verdict_name(r->final));
	moat_buf_putc(&b, '}');
	if (ap && (ap->asked || (ap->by[0] && strcmp(ap->by, "policy")))) {
		moat_buf_puts(&b, ",\"approval\":{\"by\":");
		put_str(&b, ap->by, strlen(ap->by), false);
		if (ap->answer[0])
			put_key_str(&b, ",\"answer\":", ap->answer);
		if (ap->rule[0])
			put_key_str(&b, ",\"rule\":", ap->rule);
		if (ap->reason[0])
			put_key_str(&b, ",\"reason\":", ap->reason);
		moat_buf_putc(&b, '}');
	}
	if (data) {
		struct moat_buf d = MOAT_BUF_INIT;
		int r2 = data_json(r, data, &d);

		if (r2 < 0) {
			moat_buf_release(&b);
			return r2;
		}
		moat_buf_puts(&b, ",\"data\":");
		moat_buf_puts(&b, r->data_json);
	}
	moat_buf_putc(&b, '}');
	if (b.oom) {
		moat_buf_release(&b);
		return -ENOMEM;
	}
	r->json = moat_buf_steal(&b);
	return r->json ? 0 : -ENOMEM;
}

static void deny_decision(struct moat_decision *d, const char *rule, const char *reason)
{
	d->verdict = MOAT_DENY;
	d->hard = true;
	moat_strlcpy(d->rule, rule, sizeof(d->rule));
	moat_strlcpy(d->reason, reason, sizeof(d->reason));
}

int moat_session_call(struct moat_session *s, const char *tool, const char *args_json,
		      size_t args_len, const struct moat_call_opts *o,
		      struct moat_call_result *ret)
{
	struct moat_call_opts none = {.cancel_fd = -1};
	struct moat_tool_result tr;
	struct moat_approval ap;
	struct moat_audit_record rec;
	struct moat_policy_notes notes = {.nexempt = 0};
	struct moat_error err;
	enum moat_tool_kind kind;
	json_t *args = NULL;
	const char *canon;
	bool ran = false;
	int r;

	if (!o)
		o = &none;
	memset(ret, 0, sizeof(*ret));
	memset(&ap, 0, sizeof(ap));
	moat_error_clear(&err);
	moat_tool_result_init(&tr);
	if (o->call_id && o->call_id[0])
		moat_strlcpy(ret->call_id, o->call_id, sizeof(ret->call_id));
	else
		snprintf(ret->call_id, sizeof(ret->call_id), "%s-%lu", s->id_prefix,
			 atomic_fetch_add(&s->next_id, 1));
	ret->final = MOAT_DENY;

	/* 1. the call itself: a tool name we know and strict JSON arguments.
	 * SECURITY: anything malformed is refused before the policy sees it,
	 * and nothing runs */
	if (!tool || !*tool || strlen(tool) > MOAT_CONFIG_MAX_TOOL_NAME ||
	    !moat_utf8_valid(tool, strlen(tool))) {
		ret->status = MOAT_CALL_BAD_INPUT;
		snprintf(ret->error, sizeof(ret->error), "the tool name is missing or invalid");
		deny_decision(&ret->decision, "input:tool", ret->error);
		tool = NULL;
		goto record;
	}
	kind = moat_tool_lookup(tool);
	canon = kind != MOAT_TOOL_NONE ? moat_tool_name(kind) : tool;
	/* the usual flat object without jansson's lexer; anything else (and
	 * every error) through the strict parser */
	r = moat_json_parse_flat(args_json, args_len, MOAT_ARGS_MAX_BYTES, &args);
	if (r == -EAGAIN)
		r = moat_json_parse_object(args_json ? args_json : "", args_json ? args_len : 0,
					   "args", MOAT_ARGS_MAX_BYTES, &args, &err);
	else if (r == -ENOMEM)
		moat_error_set(&err, "out of memory");
	if (r < 0) {
		char where[MOAT_ERROR_MSG_MAX + MOAT_ERROR_WHERE_MAX + 8];

		moat_error_format(&err, where, sizeof(where));
		ret->status = MOAT_CALL_BAD_INPUT;
		snprintf(ret->error, sizeof(ret->error),
			 "the arguments are not a valid JSON object (%.400s); nothing was run", where);
		deny_decision(&ret->decision, "input:args", ret->error);
		goto record;
	}

	/* SECURITY: a tool moat cannot run is refused before anyone is asked */
	if (kind == MOAT_TOOL_NONE) {
		ret->status = MOAT_CALL_BAD_INPUT;
		snprintf(ret->error, sizeof(ret->error),
			 "moat has no built-in tool '%.64s' (built-in: read_file, write_file, "
			 "edit_file, list_directory, bash; alias run_shell_command)",
			 tool);
		deny_decision(&ret->decision, "input:tool", ret->error);
		goto record;
	}

	/* 2. policy */
	r = moat_policy_check_args_notes(s->policy, tool, args, 0, &ret->decision, &notes, &err);
	if (r < 0) {
		ret->status = MOAT_CALL_BAD_INPUT;
		snprintf(ret->error, sizeof(ret->error), "%s", ret->decision.reason);
		goto record;
	}

	/* 3. approval. SECURITY: the gate never turns a hard DENY into ALLOW */
	r = moat_gate_decide_flags(
	    s->gate, ret->call_id, canon, args, &ret->decision,
	    s->preapproved_only ? NULL : o->approver, o->approver ? o->approver_ud : NULL,
	    o->approver ? (o->approver_name ? o->approver_name : "callback") : NULL,
	    o->defer_ask ? MOAT_GATE_DEFER : 0, &ap);
	if (r < 0) {
		ap.verdict = MOAT_DENY;
		ap.deferred = false;
		snprintf(ap.reason, sizeof(ap.reason), "the approval gate failed: %s",
			 strerror(-r));
	}
	if (ap.deferred && o->defer_ask) {
		/* nobody was asked and nothing ran: no record either, the call
		 * is made again (and recorded) by a caller that may wait */
		ret->status = MOAT_CALL_DEFERRED;
		snprintf(ret->error, sizeof(ret->error), "deferred: %.300s (%.150s)", ap.reason,
			 ret->decision.rule);
		ret->is_error = true;
		r = build_json(ret, tool, NULL, NULL, false);
		json_decref(args);
		return r;
	}
	ret->final = ap.verdict;
	if (ret->decision.verdict == MOAT_DENY && ret->decision.hard)
		ret->final = MOAT_DENY;
	moat_strlcpy(ret->approval_by, ap.by, sizeof(ret->approval_by));
	moat_strlcpy(ret->approval_answer, ap.answer, sizeof(ret->approval_answer));
	if (ret->final != MOAT_ALLOW) {
		ret->status = MOAT_CALL_DENIED;
		if (ret->decision.verdict == MOAT_ASK)
			snprintf(ret->error, sizeof(ret->error), "not approved: %.300s (%.150s)",
				 ap.reason[0] ? ap.reason : "the approver said no",
				 ret->decision.rule);
		else
			snprintf(ret->error, sizeof(ret->error), "denied by %.150s: %.340s",
				 ret->decision.rule, ret->decision.reason);
		goto record;
	}
	/* 4. SECURITY: fail closed before running when the record cannot be kept */
	if (s->audit) {
		r = moat_audit_ready(s->audit, &err);
		if (r < 0 && moat_audit_required(s->audit)) {
			ret->status = MOAT_CALL_AUDIT_FAILED;
			snprintf(ret->error, sizeof(ret->error),
				 "refused: the audit log cannot be written (%.200s); nothing was run. "
				 "hint: free space or fix %.150s, or set audit_required: false",
				 err.msg, moat_audit_path(s->audit));
			goto record;
		}
	}

	/* 5. the tool */
	{
		struct moat_tool_call call = {
			.cancel_fd = o->cancel_fd,
			.progress = o->progress,
			.progress_ud = o->progress_ud,
		};

		r = moat_tool_run(&s->env, kind, args, &call, &tr);
	}
	if (r == -EINVAL) {
		ret->status = MOAT_CALL_BAD_INPUT;
		moat_strlcpy(ret->error, tr.error[0] ? tr.error : "invalid arguments",
			     sizeof(ret->error));
		goto record;
	}
	if (r < 0) {
		ret->status = MOAT_CALL_FAILED;
		snprintf(ret->error, sizeof(ret->error), "%s",
			 tr.error[0] ? tr.error : strerror(-r));
		ran = true;
		goto record;
	}
	ran = true;
	ret->status = tr.ok ? MOAT_CALL_OK : MOAT_CALL_FAILED;
	if (!tr.ok)
		moat_strlcpy(ret->error, tr.error[0] ? tr.error : "the tool failed",
			     sizeof(ret->error));

record:
	memset(&rec, 0, sizeof(rec));
	rec.call_id = ret->call_id;
	rec.source = s->source;
	rec.tool = tool;
	rec.args = args;
	if (args && moat_policy_logs_commands(s->policy) && tool &&
	    moat_tool_lookup(tool) == MOAT_TOOL_BASH) {
		json_t *c = json_object_get(args, "command");

		rec.command = json_is_string(c) ? json_string_value(c) : NULL;
	}
	rec.decision = &ret->decision;
	rec.final = moat_verdict_name(ret->final);
	rec.approval_by = ap.by[0] ? ap.by : NULL;
	rec.approval_answer = ap.answer[0] ? ap.answer : NULL;
	rec.sandbox_json = tr.sandbox[0] ? tr.sandbox : NULL;
	rec.exempt_paths = notes.exempt;
	rec.nexempt_paths = notes.nexempt;
	rec.has_result = ran;
	rec.ok = tr.ok;
	rec.exit_code = tr.exit_code;
	rec.signal = tr.signal;
	rec.timed_out = tr.timed_out;
	rec.cancelled = tr.cancelled;
	rec.duration_ms = tr.duration_ms;
	rec.bytes_out = tr.bytes_out;
	rec.error = ret->status != MOAT_CALL_OK ? ret->error : NULL;
	if (s->audit) {
		r = moat_audit_write(s->audit, &rec, &err);
		if (r < 0 && moat_audit_required(s->audit)) {
			/* SECURITY: an unrecorded result is not handed back */
			bool was_run = ran;

			ret->status = MOAT_CALL_AUDIT_FAILED;
			snprintf(ret->error, sizeof(ret->error),
				 "the audit log could not be written (%.200s)%s. hint: free space or "
				 "fix %.150s, or set audit_required: false",
				 err.msg,
				 was_run ? "; the call ran but its result is withheld"
					 : "; nothing was run",
				 moat_audit_path(s->audit));
			moat_tool_result_release(&tr);
			moat_tool_result_init(&tr);
		}
	}
	if (ret->status == MOAT_CALL_OK || ret->status == MOAT_CALL_FAILED) {
		if (tr.output) {
			ret->output = tr.output;
			tr.output = NULL;
		}
	}
	ret->is_error = ret->status != MOAT_CALL_OK;
	r = build_json(ret, tool, ap.by[0] ? &ap : NULL, tr.data, o->lean);
	if (tr.data) {
		ret->structured = tr.data;
		tr.data = NULL;
	}
	moat_tool_result_release(&tr);
	json_decref(args);
	return r;
}
