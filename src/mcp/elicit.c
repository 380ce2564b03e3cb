/* Approvals by MCP elicitation: an ASK becomes an elicitation/create
 * request (form mode) sent to the client from the thread making the call;
 * that thread waits on a condition variable until the event loop routes the
 * client's answer back (moat_mcp_elicit_route), the call is cancelled, the
 * server stops, or the timeout passes.
 *
 * accept + "yes" is APPROVED, accept + "always" (or "prefix" for a bash
 * command prefix) is APPROVED_ALWAYS, accept + "no", decline and cancel are
 * DENIED. Anything else is an error the gate turns into DENIED.
 *
 * SECURITY: it never approves by default: no answer, an answer not
 * understood, a client that cannot elicit, a timeout and a cancellation all
 * end in a negative return or DENIED. It never prints; it writes only whole
 * protocol lines through the server's send function. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/str.h"
#include "mcp/mcp.h"

#define MOAT_MCP_ELICIT_MAX_NAME 128 /* bytes of a tool name shown in an approval */

struct pending {
	struct pending *next;
	json_int_t id;
	const struct moat_mcp_elicit_call *call;
	bool done;
	int err;	/* 0: answered with result; -EIO: answered with an error */
	json_t *result; /* owned */
};

struct moat_mcp_elicit {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* on CLOCK_MONOTONIC */
	moat_mcp_send_fn send;
	void *send_ud;
	bool form;	  /* the client declared form-mode elicitation */
	char version[16]; /* negotiated revision */
	bool stopped;	  /* every ask fails with -ECANCELED */
	json_int_t next_id;
	struct pending *head;
};

int moat_mcp_elicit_new(moat_mcp_send_fn send, void *send_ud, struct moat_mcp_elicit **ret)
{
	struct moat_mcp_elicit *e = calloc(1, sizeof(*e));
	pthread_condattr_t ca;

	if (!e)
		return -ENOMEM;
	if (pthread_condattr_init(&ca) != 0) {
		free(e);
		return -ENOMEM;
	}
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (pthread_cond_init(&e->cv, &ca) != 0) {
		pthread_condattr_destroy(&ca);
		free(e);
		return -ENOMEM;
	}
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&e->mu, NULL);
	e->send = send;
	e->send_ud = send_ud;
	moat_strlcpy(e->version, MOAT_MCP_LATEST_VERSION, sizeof(e->version));
	*ret = e;
	return 0;
}

struct moat_mcp_elicit *moat_mcp_elicit_free(struct moat_mcp_elicit *e)
{
	if (!e)
		return NULL;
	/* the server waits for every call before freeing: no waiter is left */
	while (e->head) {
		struct pending *p = e->head;

		e->head = p->next;
		json_decref(p->result);
		free(p);
	}
	pthread_cond_destroy(&e->cv);
	pthread_mutex_destroy(&e->mu);
	free(e);
	return NULL;
}

void moat_mcp_elicit_configure(struct moat_mcp_elicit *e, bool form_supported, const char *version)
{
	pthread_mutex_lock(&e->mu);
	e->form = form_supported;
	moat_strlcpy(e->version, version ? version : MOAT_MCP_LATEST_VERSION, sizeof(e->version));
	pthread_mutex_unlock(&e->mu);
}

bool moat_mcp_elicit_enabled(struct moat_mcp_elicit *e)
{
	bool b;

	pthread_mutex_lock(&e->mu);
	b = e->form && !e->stopped;
	pthread_mutex_unlock(&e->mu);
	return b;
}

/* ---- the form ---- */

/* SECURITY: every piece of text in the message that the agent, the
 * configuration or the project could have chosen goes through
 * moat_buf_put_shown (src/base/str.h): no newline, escape sequence, bidi
 * override or invisible character of theirs reaches the human's view as
 * itself, so nothing can redraw the prompt or push the real command below
 * the fold. Long values are capped with a visible "... (N more bytes)". */
static void put_shown_str(struct moat_buf *b, const char *s, size_t max)
{
	moat_buf_put_shown_capped(b, s, strlen(s), max);
}

json_t *moat_mcp_elicit_params(const struct moat_ask *ask, const char *version)
{
	struct moat_buf msg = MOAT_BUF_INIT, always = MOAT_BUF_INIT, prefix = MOAT_BUF_INIT;
	const char *tool = ask->tool ? ask->tool : "?";
	json_t *p = NULL, *enums, *names, *decision;
	bool with_prefix = ask->always_prefix && ask->always_prefix[0];

	moat_buf_puts(&msg, "moat: the agent asks to run ");
	put_shown_str(&msg, tool, MOAT_MCP_ELICIT_MAX_NAME);
	moat_buf_puts(&msg, ".\n");
	if (ask->summary && ask->summary[0]) {
		moat_buf_puts(&msg, !strcmp(tool, "bash") ? "command: " : "target: ");
		put_shown_str(&msg, ask->summary, MOAT_MCP_ELICIT_MAX_ARGS);
		moat_buf_putc(&msg, '\n');
	}
	if (ask->decision) {
		moat_buf_puts(&msg, "rule: ");
		put_shown_str(&msg, ask->decision->rule, MOAT_MCP_ELICIT_MAX_ARGS);
		moat_buf_putc(&msg, '\n');
		if (ask->decision->reason[0]) {
			moat_buf_puts(&msg, "why: ");
			put_shown_str(&msg, ask->decision->reason, MOAT_MCP_ELICIT_MAX_ARGS);
			moat_buf_putc(&msg, '\n');
		}
	}
	if (ask->args_json) {
		moat_buf_puts(&msg, "arguments: ");
		put_shown_str(&msg, ask->args_json, MOAT_MCP_ELICIT_MAX_ARGS);
		moat_buf_putc(&msg, '\n');
	}
	moat_buf_puts(&msg, "Allow it?");
	moat_buf_puts(&always, "Always allow ");
	put_shown_str(&always, tool, MOAT_MCP_ELICIT_MAX_NAME);
	moat_buf_puts(&always, " for this session");
	if (with_prefix) {
		moat_buf_puts(&prefix, "Always allow commands matching '");
		put_shown_str(&prefix, ask->always_prefix, MOAT_MCP_ELICIT_MAX_ARGS);
		moat_buf_puts(&prefix, "' for this session");
	}
	if (msg.oom || always.oom || prefix.oom)
		goto out;

	/* enum + enumNames: understood by every revision with elicitation
	 * (2025-06-18 on; 2025-11-25 keeps it as the legacy titled enum). */
	enums = json_array();
	names = json_array();
	decision = json_object();
	p = json_object();
	if (!enums || !names || !decision || !p) {
		json_decref(enums);
		json_decref(names);
		json_decref(decision);
		json_decref(p);
		p = NULL;
		goto out;
	}
	json_array_append_new(enums, json_string("yes"));
	json_array_append_new(names, json_string("Allow once"));
	if (with_prefix) {
		json_array_append_new(enums, json_string("prefix"));
		json_array_append_new(names, moat_rpc_string(prefix.data, prefix.len));
	}
	json_array_append_new(enums, json_string("always"));
	json_array_append_new(names, moat_rpc_string(always.data, always.len));
	json_array_append_new(enums, json_string("no"));
	json_array_append_new(names, json_string("Deny"));
	json_object_set_new(decision, "type", json_string("string"));
	json_object_set_new(decision, "title", json_string("Decision"));
	json_object_set_new(decision, "description",
			    json_string("yes: this call only; always: the rest of this session; "
					"no: refuse (the agent is told why)"));
	json_object_set_new(decision, "enum", enums);
	json_object_set_new(decision, "enumNames", names);

	if (moat_mcp_version_ge(version, "2025-11-25"))
		json_object_set_new(p, "mode", json_string("form"));
	json_object_set_new(p, "message", moat_rpc_string(msg.data, msg.len));
	json_object_set_new(p, "requestedSchema",
			    json_pack("{s:s, s:{s:o}, s:[s]}", "type", "object", "properties",
				      "decision", decision, "required", "decision"));
	if (!json_object_get(p, "requestedSchema") || !json_object_get(p, "message")) {
		json_decref(p);
		p = NULL;
	}
out:
	moat_buf_release(&msg);
	moat_buf_release(&always);
	moat_buf_release(&prefix);
	return p;
}

int moat_mcp_elicit_answer(const json_t *result, const struct moat_ask *ask, struct moat_reply *ret)
{
	const char *action = json_string_value(json_object_get(result, "action"));
	const char *d;
	struct moat_reply r;

	if (!json_is_object(result) || !action)
		return -EPROTO;
	memset(&r, 0, sizeof(r));
	r.answer = MOAT_ANSWER_DENIED;
	if (!strcmp(action, "decline") || !strcmp(action, "cancel")) {
		*ret = r;
		return 0;
	}
	if (strcmp(action, "accept") != 0)
		return -EPROTO;
	d = json_string_value(json_object_get(json_object_get(result, "content"), "decision"));
	if (!d)
		return -EPROTO;
	if (!strcmp(d, "yes")) {
		r.answer = MOAT_ANSWER_APPROVED;
	} else if (!strcmp(d, "always")) {
		r.answer = MOAT_ANSWER_APPROVED_ALWAYS; /* "": the whole tool */
	} else if (!strcmp(d, "prefix") && ask->always_prefix && ask->always_prefix[0]) {
		if (strlen(ask->always_prefix) >= sizeof(r.always_pattern))
			return -EPROTO;
		r.answer = MOAT_ANSWER_APPROVED_ALWAYS;
		moat_strlcpy(r.always_pattern, ask->always_prefix, sizeof(r.always_pattern));
	} else if (strcmp(d, "no") != 0) {
		return -EPROTO;
	}
	*ret = r;
	return 0;
}

/* ---- the round trip ---- */

static void unlink_pending(struct moat_mcp_elicit *e, struct pending *p)
{
	for (struct pending **pp = &e->head; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			return;
		}
	}
}

static void deadline_after(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Tell the client we no longer wait for request id. Best effort. */
static void send_cancelled(struct moat_mcp_elicit *e, json_int_t id, const char *reason)
{
	json_t *params = json_pack("{s:I, s:s}", "requestId", id, "reason", reason);
	size_t len;
	char *line = params ? moat_rpc_notification("notifications/cancelled", params, &len) : NULL;

	if (line)
		e->send(e->send_ud, line, len);
	free(line);
	json_decref(params);
}

int moat_mcp_elicit_approver(void *ud, const struct moat_ask *ask, int timeout_ms,
			     struct moat_reply *ret)
{
	struct moat_mcp_elicit_call *c = ud;
	struct moat_mcp_elicit *e = c ? c->e : NULL;
	struct pending *p;
	struct timespec deadline;
	char version[16];
	json_t *params;
	char *line;
	size_t len;
	int r = 0;

	if (!e)
		return -ENOTTY;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_lock(&e->mu);
	if (!e->form) {
		pthread_mutex_unlock(&e->mu);
		free(p);
		return -ENOTTY;
	}
	if (e->stopped || c->cancelled) {
		pthread_mutex_unlock(&e->mu);
		free(p);
		return -ECANCELED;
	}
	p->id = ++e->next_id;
	p->call = c;
	p->next = e->head;
	e->head = p;
	moat_strlcpy(version, e->version, sizeof(version));
	pthread_mutex_unlock(&e->mu);

	params = moat_mcp_elicit_params(ask, version);
	line = params ? moat_rpc_request(p->id, "elicitation/create", params, &len) : NULL;
	json_decref(params);
	if (!line)
		r = -ENOMEM;
	else
		r = e->send(e->send_ud, line, len);
	free(line);

	deadline_after(&deadline, timeout_ms > 0 ? timeout_ms : 1000 * 120);
	pthread_mutex_lock(&e->mu);
	while (r == 0 && !p->done && !e->stopped && !c->cancelled) {
		int w = pthread_cond_timedwait(&e->cv, &e->mu, &deadline);

		if (w == ETIMEDOUT && !p->done)
			r = -ETIMEDOUT;
	}
	if (r == 0 && !p->done)
		r = -ECANCELED;
	unlink_pending(e, p);
	pthread_mutex_unlock(&e->mu);

	if (p->done && r == 0)
		r = p->err ? p->err : moat_mcp_elicit_answer(p->result, ask, ret);
	else if (r == -ETIMEDOUT || r == -ECANCELED)
		send_cancelled(e, p->id,
			       r == -ETIMEDOUT ? "moat: no answer before the approval timeout"
					       : "moat: the tool call was cancelled");
	json_decref(p->result);
	free(p);
	return r;
}

bool moat_mcp_elicit_route(struct moat_mcp_elicit *e, const struct moat_rpc_msg *m)
{
	bool found = false;

	if (!e || m->kind != MOAT_RPC_RESPONSE || !json_is_integer(m->id))
		return false;
	pthread_mutex_lock(&e->mu);
	for (struct pending *p = e->head; p; p = p->next) {
		if (p->id != json_integer_value(m->id) || p->done)
			continue;
		p->done = true;
		if (m->result) {
			/* a copy: the message's tree stays the loop thread's */
			p->result = json_deep_copy(m->result);
			p->err = p->result ? 0 : -ENOMEM;
		} else {
			p->err = -EIO;
		}
		found = true;
		break;
	}
	if (found)
		pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	return found;
}

bool moat_mcp_elicit_fail(struct moat_mcp_elicit *e, const json_t *id)
{
	bool found = false;

	if (!e || !json_is_integer(id))
		return false;
	pthread_mutex_lock(&e->mu);
	for (struct pending *p = e->head; p; p = p->next) {
		if (p->id != json_integer_value(id) || p->done)
			continue;
		p->done = true;
		p->err = -EPROTO;
		found = true;
		break;
	}
	if (found)
		pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	return found;
}

void moat_mcp_elicit_cancel(struct moat_mcp_elicit *e, struct moat_mcp_elicit_call *call)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	if (call)
		call->cancelled = true;
	else
		e->stopped = true;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
}
