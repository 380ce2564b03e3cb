/* The MCP server: one event loop over stdin and a wake-up eventfd, and a
 * small pool of worker threads that run tools/call through the session
 * (policy, approval, sandbox, audit).
 *
 * The loop thread reads and parses every message (the usual tools/call
 * through a fast path without a JSON tree, moat_rpc_parse_call; anything
 * else through the strict parser) and answers initialize,
 * ping, tools/list and logging/setLevel itself, at once. A file tool call
 * runs on the loop thread too unless the session defers it (it would have
 * to ask a human); deferred calls and every shell call are queued for a
 * worker, so neither an approval nor a slow shell call delays a ping.
 * Replies are written whole, one write sequence under one mutex, in
 * whatever order the calls finish; the client matches them by id. notifications/cancelled
 * signals the call's eventfd (the bash tool kills its sandboxed process
 * tree) and wakes an approval waiting on the client. End of input, or a
 * stop signal, cancels everything in flight, waits for it, and returns.
 *
 * SECURITY: nothing here decides: every tool call goes through
 * moat_session_call, which fails closed. The client controls sizes (line,
 * depth, ids, calls in flight, their bytes): each has a limit in mcp.h and
 * a refusal is an error reply. It never prints; stderr stays the caller's. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <moat/moat.h>

#include "base/json.h"
#include "base/str.h"
#include "core/policy_check.h"
#include "mcp/mcp.h"
#include "tools/tools.h"

#define WORKER_STACK (2u << 20)
#define TOOL_NAME_MAX 64

enum job_state {
	JOB_QUEUED = 0,
	JOB_RUNNING,
};

struct server;

struct job {
	struct job *qnext;
	struct server *srv;
	json_t *id; /* owned; the reply's id */
	char key[MOAT_RPC_ID_KEY_MAX];
	char tool[TOOL_NAME_MAX];
	char *args;
	size_t args_len;
	json_t *progress_token; /* owned, NULL: no progress wanted */
	double last_progress;
	int cancel_fd;	      /* eventfd, written once on cancel */
	enum job_state state; /* under srv->mu */
	bool cancelled;	      /* under srv->mu: the client cancelled, no reply */
	char version[16];     /* negotiated revision when the call came */
	bool elicit;	      /* the client can elicit */
	bool inline_call;     /* run on the loop thread (no ask possible) */
	char call_id[48];     /* the session's id of a call deferred to a worker */
	struct moat_mcp_elicit_call ecall;
};

struct server {
	struct moat_session *session;
	int in_fd, out_fd, wake_fd;
	const char *workspace;

	pthread_mutex_t mu; /* everything below until out_mu */
	pthread_cond_t work_cv;
	pthread_cond_t idle_cv;
	struct job *qhead, *qtail;
	size_t qlen;
	struct job *inflight[MOAT_MCP_MAX_INFLIGHT];
	size_t ninflight;
	size_t inflight_bytes;
	pthread_t workers[MOAT_MCP_MAX_WORKERS];
	unsigned nworkers, nidle, max_workers;
	bool quit;
	/* replies of calls run on the loop thread, written together once the
	 * lines read so far are handled (one write, one wake-up of the client,
	 * for a pipelined batch); touched by the loop thread only */
	struct moat_buf held;

	pthread_mutex_t out_mu;
	atomic_bool out_broken;

	struct moat_mcp_elicit *elicit;
	atomic_int log_level; /* -1: the client asked for none */

	/* the loop thread's own */
	char version[16];
	bool initialized;
	json_t *tools; /* tools/list result, cached */
	char tools_version[16];
	/* a client calling back to back: after replying, the loop polls for
	 * its next request a moment before it sleeps (see wait_input) */
	uint64_t replied_ns; /* when the loop last wrote replies, 0: since read */
	bool spin;
};

/* ---- signals ---- */

static volatile sig_atomic_t stop_signalled;
static volatile int signal_wake_fd = -1;

static void on_stop_signal(int sig)
{
	int saved = errno;
	uint64_t one = 1;
	int fd = signal_wake_fd;

	(void)sig;
	stop_signalled = 1;
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* nothing to do: the flag is set */
	}
	errno = saved;
}

int moat_mcp_install_signals(void)
{
	struct sigaction sa;
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(sigs); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -errno;
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) < 0)
		return -errno;
	return 0;
}

/* ---- output ---- */

static void wake(struct server *s)
{
	uint64_t one = 1;

	if (write(s->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: the loop wakes anyway */
	}
}

/* Write one whole line; lines never interleave. */
static int send_line(void *ud, const char *line, size_t len)
{
	struct server *s = ud;
	int r = 0;

	pthread_mutex_lock(&s->out_mu);
	if (atomic_load(&s->out_broken)) {
		pthread_mutex_unlock(&s->out_mu);
		return -EPIPE;
	}
	while (len > 0) {
		ssize_t n = write(s->out_fd, line, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				struct pollfd p = {.fd = s->out_fd, .events = POLLOUT};

				poll(&p, 1, -1);
				continue;
			}
			r = -errno;
			atomic_store(&s->out_broken, true);
			wake(s);
			break;
		}
		line += n;
		len -= (size_t)n;
	}
	pthread_mutex_unlock(&s->out_mu);
	return r;
}

/* Send and free a line made by moat_rpc_*(..., &len): call it as
 * line = moat_rpc_x(..., &len); send_owned(s, line, len); never with the
 * call inside the argument list (the order of evaluation is unspecified). */
static void send_owned(struct server *s, char *line, size_t len)
{
	if (line)
		send_line(s, line, len);
	free(line);
}

#define MCP_HELD_MAX (256u << 10)

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Loop thread: write the held replies. */
static void flush_held(struct server *s)
{
	if (s->held.len) {
		send_line(s, s->held.data, s->held.len);
		s->replied_ns = mono_ns();
	}
	moat_buf_reset(&s->held);
}

static void reply_error(struct server *s, const json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void reply_error(struct server *s, const json_t *id, int code, const char *fmt, ...)
{
	char msg[768], *line;
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	line = moat_rpc_error(id, code, msg, NULL, &len);
	send_owned(s, line, len);
}

/* Takes the reference to result. */
static void reply_result(struct server *s, const json_t *id, json_t *result)
{
	size_t len;
	char *line;

	if (!result) {
		reply_error(s, id, MOAT_RPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	line = moat_rpc_result(id, result, &len);
	json_decref(result);
	if (!line)
		reply_error(s, id, MOAT_RPC_INTERNAL_ERROR, "out of memory");
	else
		send_owned(s, line, len);
}

/* ---- logging (notifications/message) ---- */

static const char *const log_levels[] = {
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
};

static int log_level_index(const char *name)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(log_levels); i++)
		if (!strcmp(name, log_levels[i]))
			return (int)i;
	return -1;
}

static void send_log(struct server *s, int level, const char *text)
{
	int want = atomic_load(&s->log_level);
	json_t *params;
	char *line;
	size_t len;

	if (want < 0 || level < want)
		return;
	params = json_object();
	if (!params)
		return;
	json_object_set_new(params, "level", json_string(log_levels[level]));
	json_object_set_new(params, "logger", json_string("moat"));
	json_object_set_new(params, "data", moat_rpc_string(text, strlen(text)));
	line = moat_rpc_notification("notifications/message", params, &len);
	send_owned(s, line, len);
	json_decref(params);
}

/* ---- jobs ---- */

static struct job *job_free(struct job *j)
{
	if (!j)
		return NULL;
	json_decref(j->id);
	json_decref(j->progress_token);
	free(j->args);
	if (j->cancel_fd >= 0)
		close(j->cancel_fd);
	free(j);
	return NULL;
}

/* Under s->mu. */
static void inflight_remove(struct server *s, struct job *j)
{
	for (size_t i = 0; i < s->ninflight; i++) {
		if (s->inflight[i] == j) {
			s->inflight[i] = s->inflight[--s->ninflight];
			s->inflight_bytes -= j->args_len;
			break;
		}
	}
	if (s->ninflight == 0)
		pthread_cond_broadcast(&s->idle_cv);
}

/* Under s->mu. */
static struct job *inflight_find(struct server *s, const char *key)
{
	for (size_t i = 0; i < s->ninflight; i++)
		if (!strcmp(s->inflight[i]->key, key))
			return s->inflight[i];
	return NULL;
}

/* Under s->mu: unlink a queued job. */
static void queue_remove(struct server *s, struct job *j)
{
	struct job *prev = NULL;

	for (struct job *q = s->qhead; q; prev = q, q = q->qnext) {
		if (q != j)
			continue;
		if (prev)
			prev->qnext = q->qnext;
		else
			s->qhead = q->qnext;
		if (s->qtail == q)
			s->qtail = prev;
		s->qlen--;
		return;
	}
}

static void cancel_running(struct server *s, struct job *j)
{
	uint64_t one = 1;

	if (write(j->cancel_fd, &one, sizeof(one)) < 0) {
		/* already signalled */
	}
	moat_mcp_elicit_cancel(s->elicit, &j->ecall);
}

/* bash calls this about once a second while the command runs. */
static void on_progress(void *ud, double elapsed_ms, size_t bytes_so_far)
{
	struct job *j = ud;
	double p = elapsed_ms / 1000.0;
	char msg[160], *line;
	json_t *params;
	size_t len;

	if (!j->progress_token)
		return;
	/* progress must increase with each notification */
	if (p <= j->last_progress)
		p = j->last_progress + 0.001;
	j->last_progress = p;
	snprintf(msg, sizeof(msg), "%s running for %.0f s, %zu bytes of output", j->tool, p,
		 bytes_so_far);
	params = json_object();
	if (!params)
		return;
	json_object_set(params, "progressToken", j->progress_token);
	json_object_set_new(params, "progress", json_real(p));
	json_object_set_new(params, "message", json_string(msg));
	line = moat_rpc_notification("notifications/progress", params, &len);
	send_owned(j->srv, line, len);
	json_decref(params);
}

static const char no_elicitation_hint[] =
    "\n\nmoat could not ask the user: this MCP client did not declare the "
    "elicitation capability, so a call that needs approval is denied. To allow "
    "such calls, pre-approve them in the moat configuration (\"approvals\": "
    "[{\"tool\": \"bash\", \"arg\": \"command\", \"match\": \"git *\"}]), or "
    "use a client that supports MCP elicitation.";

/* The tools/call result for a finished call. */
static json_t *call_result(const struct job *j, int r, const struct moat_call_result *res)
{
	struct moat_buf text = MOAT_BUF_INIT;
	bool ok = r == 0 && res->status == MOAT_CALL_OK;
	json_t *o = json_object(), *content = json_array(), *item = json_object(), *str;

	if (!o || !content || !item)
		goto fail;
	if (ok) {
		if (res->output)
			moat_buf_puts(&text, res->output);
		else if (res->json)
			moat_buf_puts(&text, res->json);
	} else {
		/* a tool that ran and failed (bash: a non-zero exit) says how it
		 * ended in its output, after stdout and stderr */
		if (res->status == MOAT_CALL_FAILED && res->output && res->output[0])
			moat_buf_puts(&text, res->output);
		else if (res->error[0])
			moat_buf_puts(&text, res->error);
		else if (r < 0)
			moat_buf_printf(&text, "moat: the call failed: %s", strerror(-r));
		else
			moat_buf_puts(&text, "moat: the call failed");
		if (r == 0 && res->status == MOAT_CALL_DENIED &&
		    res->decision.verdict == MOAT_ASK && !j->elicit)
			moat_buf_puts(&text, no_elicitation_hint);
	}
	if (text.oom)
		goto fail;
	str = moat_rpc_string(text.data ? text.data : "", text.len);
	moat_buf_release(&text);
	if (!str)
		goto fail;
	json_object_set_new(item, "type", json_string("text"));
	json_object_set_new(item, "text", str);
	json_array_append_new(content, item);
	item = NULL;
	json_object_set_new(o, "content", content);
	content = NULL;
	/* structuredContent matches the tool's outputSchema, which the
	 * revisions before 2025-06-18 do not have. Only on success: a client
	 * validates it, and a failure carries its message in the text. */
	if (ok && moat_mcp_version_ge(j->version, "2025-06-18")) {
		json_t *sc = res->structured;

		if (json_is_object(sc))
			json_object_set(o, "structuredContent", sc);
		else
			json_object_set_new(o, "structuredContent", json_object());
	}
	json_object_set_new(o, "isError", json_boolean(!ok));
	return o;
fail:
	moat_buf_release(&text);
	json_decref(item);
	json_decref(content);
	json_decref(o);
	return NULL;
}

static void log_call(struct server *s, const struct job *j, int r,
		     const struct moat_call_result *res)
{
	char msg[1024];
	int level;

	if (atomic_load(&s->log_level) < 0)
		return;
	if (r < 0) {
		snprintf(msg, sizeof(msg), "%s: the call failed: %s", j->tool, strerror(-r));
		level = 4;
	} else {
		static const char *const st[] = {"ok", "failed", "denied", "bad input",
						 "audit failed"};
		const char *status =
		    (unsigned)res->status < MOAT_ARRAY_SIZE(st) ? st[res->status] : "?";

		snprintf(msg, sizeof(msg), "%s %s: %s by rule %s%s%s%s%s", j->tool, res->call_id,
			 status, res->decision.rule, res->approval_by[0] ? ", approval by " : "",
			 res->approval_by, res->approval_answer[0] ? " " : "",
			 res->approval_answer);
		level = res->status == MOAT_CALL_OK		? 1
			: res->status == MOAT_CALL_AUDIT_FAILED ? 4
			: res->status == MOAT_CALL_DENIED	? 3
								: 2;
	}
	send_log(s, level, msg);
}

/* The usual tools/call reply, written straight into one line: the same
 * object call_result() + moat_rpc_result() build, without a jansson node
 * per value (the output text is the bulk of the reply, and jansson's
 * escaper is slow on it). Returns -1 when the slow path must answer (a
 * failed call, allocation failure, a reply over the limit). */
static int reply_call_fast(struct server *s, const struct job *j, int r,
			   const struct moat_call_result *res)
{
	struct moat_buf b = MOAT_BUF_INIT;
	const char *text;
	size_t tlen;
	char *id;

	if (r != 0 || res->status != MOAT_CALL_OK)
		return -1;
	text = res->output ? res->output : res->json ? res->json : "";
	tlen = strlen(text);
	if (!moat_utf8_valid(text, tlen))
		return -1; /* the slow path replaces invalid sequences */
	moat_buf_reserve(&b, tlen + tlen / 8 + 256);
	moat_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (json_is_integer(j->id)) {
		char n[24];

		snprintf(n, sizeof(n), "%" JSON_INTEGER_FORMAT, json_integer_value(j->id));
		moat_buf_puts(&b, n);
	} else if (json_is_string(j->id) &&
		   moat_utf8_valid(json_string_value(j->id), json_string_length(j->id))) {
		moat_buf_json_str(&b, json_string_value(j->id), json_string_length(j->id));
	} else {
		id = json_dumps(j->id, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!id) {
			moat_buf_release(&b);
			return -1;
		}
		moat_buf_puts(&b, id);
		free(id);
	}
	moat_buf_puts(&b, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
	moat_buf_json_str(&b, text, tlen);
	moat_buf_puts(&b, "}]");
	if (moat_mcp_version_ge(j->version, "2025-06-18")) {
		/* the session wrote the data once already (res->data_json) */
		const json_t *sc = res->structured;
		char *d = NULL;
		const char *dj = NULL;

		if (json_is_object(sc)) {
			dj = res->data_json;
			if (!dj)
				dj = d = json_dumps(sc, JSON_COMPACT);
		}
		moat_buf_puts(&b, ",\"structuredContent\":");
		moat_buf_puts(&b, dj ? dj : "{}");
		free(d);
	}
	moat_buf_puts(&b, ",\"isError\":false}}\n");
	if (b.oom || b.len > MOAT_MCP_MAX_REPLY) {
		moat_buf_release(&b);
		return -1;
	}
	if (j->inline_call) {
		/* on the loop thread: held until the lines read so far are done */
		if (s->held.len + b.len > MCP_HELD_MAX)
			flush_held(s);
		moat_buf_append(&s->held, b.data, b.len);
		if (s->held.oom) {
			moat_buf_release(&s->held);
			s->held.oom = false;
			send_line(s, b.data, b.len);
		}
		moat_buf_release(&b);
		return 0;
	}
	{
		size_t len = b.len;

		send_owned(s, moat_buf_steal(&b), len);
	}
	return 0;
}

static int no_approver_inline(void *ud, const struct moat_ask *ask, int timeout_ms,
			      struct moat_reply *ret)
{
	return -EAGAIN;
}

/* Run a call and reply. Returns 1, with nothing replied, when a call run on
 * the loop thread needs a human's answer: the caller hands it to a worker. */
static int run_job(struct server *s, struct job *j)
{
	struct moat_call_result res;
	struct moat_call_opts o;
	json_t *result;
	bool cancelled;
	int r;

	memset(&res, 0, sizeof(res));
	memset(&o, 0, sizeof(o));
	o.call_id = j->call_id[0] ? j->call_id : NULL;
	o.lean = true; /* ret->json only without an output: see call_result */
	o.cancel_fd = j->cancel_fd;
	if (j->progress_token) {
		o.progress = on_progress;
		o.progress_ud = j;
	}
	/* Always our approver: without the capability it answers -ENOTTY and
	 * the gate denies with the reason said. */
	o.approver = moat_mcp_elicit_approver;
	o.approver_ud = &j->ecall;
	o.approver_name = "elicitation";
	if (j->inline_call) {
		/* SECURITY: the loop thread cannot wait for an elicitation answer
		 * (it is the one that would read it): a call that needs one is
		 * deferred before anyone is asked, and goes to a worker. The
		 * approver that is never called here would deny, never block. */
		o.defer_ask = true;
		o.approver = no_approver_inline;
		o.approver_ud = NULL;
	}
	r = moat_session_call(s->session, j->tool, j->args, j->args_len, &o, &res);
	if (r == 0 && res.status == MOAT_CALL_DEFERRED) {
		/* the same call again on a worker, under the same id */
		moat_strlcpy(j->call_id, res.call_id, sizeof(j->call_id));
		moat_call_result_release(&res);
		return 1;
	}
	log_call(s, j, r, &res);

	/* a call run on the loop thread is in no list: nothing cancels it */
	cancelled = false;
	if (!j->inline_call) {
		pthread_mutex_lock(&s->mu);
		cancelled = j->cancelled;
		pthread_mutex_unlock(&s->mu);
	}
	/* A request the client cancelled gets no reply (it stopped waiting). */
	if (!cancelled && reply_call_fast(s, j, r, &res) < 0) {
		result = call_result(j, r, &res);
		reply_result(s, j->id, result);
	}
	moat_call_result_release(&res);
	return 0;
}

static void *worker_main(void *arg)
{
	struct server *s = arg;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		struct job *j;

		while (!s->qhead && !s->quit) {
			s->nidle++;
			pthread_cond_wait(&s->work_cv, &s->mu);
			s->nidle--;
		}
		if (!s->qhead)
			break;
		j = s->qhead;
		s->qhead = j->qnext;
		if (!s->qhead)
			s->qtail = NULL;
		s->qlen--;
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&s->mu);

		run_job(s, j);

		pthread_mutex_lock(&s->mu);
		inflight_remove(s, j);
		/* freed under the lock: a cancellation may still look it up
		 * until it left the in-flight list; close and free are short */
		job_free(j);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Workers started up front: calls one at a time then always find an idle
 * worker, even while the previous one is still writing its reply (else
 * each such call would start another thread). */
#define MCP_PRESPAWN_WORKERS 4u

/* Under s->mu: one more worker when the queue outgrows the idle ones. */
static void maybe_spawn(struct server *s)
{
	pthread_attr_t a;

	if (s->qlen <= s->nidle || s->nworkers >= s->max_workers)
		return;
	if (pthread_attr_init(&a) != 0)
		return;
	pthread_attr_setstacksize(&a, WORKER_STACK);
	if (pthread_create(&s->workers[s->nworkers], &a, worker_main, s) == 0)
		s->nworkers++;
	pthread_attr_destroy(&a);
}

/* ---- requests ---- */

static bool client_can_elicit(const json_t *caps)
{
	const json_t *el = json_object_get(caps, "elicitation");

	if (!json_is_object(el))
		return false;
	/* {} means form mode (backwards compatibility); else "form" must be there */
	return json_object_get(el, "form") || !json_object_get(el, "url");
}

static void handle_initialize(struct server *s, const struct moat_rpc_msg *m)
{
	const json_t *pv = json_object_get(m->params, "protocolVersion");
	const json_t *caps = json_object_get(m->params, "capabilities");
	const char *v;
	json_t *res, *info;
	char instr[1024];

	if (s->initialized) {
		reply_error(s, m->id, MOAT_RPC_INVALID_REQUEST,
			    "already initialized: initialize is sent once per connection");
		return;
	}
	if (!json_is_string(pv)) {
		reply_error(s, m->id, MOAT_RPC_INVALID_PARAMS,
			    "initialize needs params.protocolVersion (a string such as \"%s\")",
			    MOAT_MCP_LATEST_VERSION);
		return;
	}
	if (caps && !json_is_object(caps)) {
		reply_error(s, m->id, MOAT_RPC_INVALID_PARAMS,
			    "params.capabilities must be an object");
		return;
	}
	v = moat_mcp_negotiate(json_string_value(pv));
	moat_strlcpy(s->version, v, sizeof(s->version));
	s->initialized = true;
	moat_mcp_elicit_configure(s->elicit, client_can_elicit(caps), v);

	info = json_pack("{s:s, s:s}", "name", "moat", "version", MOAT_VERSION);
	if (info && moat_mcp_version_ge(v, "2025-06-18"))
		json_object_set_new(info, "title", json_string("moat"));
	res = json_pack("{s:s, s:{s:{s:b}, s:{}}, s:o}", "protocolVersion", v, "capabilities",
			"tools", "listChanged", 0, "logging", "serverInfo", info);
	if (res && moat_mcp_version_ge(v, "2025-03-26")) {
		snprintf(instr, sizeof(instr),
			 "moat runs every file and shell action of these tools under a policy, "
			 "an approval gate, a kernel sandbox and an audit log. File tools are "
			 "confined to the allowed paths (by default the workspace%s%s); bash "
			 "runs in the workspace under the sandbox. A refused call says why in "
			 "its result: change the request instead of retrying it unchanged.",
			 s->workspace ? " " : "", s->workspace ? s->workspace : "");
		json_object_set_new(res, "instructions", moat_rpc_string(instr, strlen(instr)));
	}
	reply_result(s, m->id, res);
}

static json_t *parse_schema(const char *text)
{
	return text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
}

static json_t *tool_annotations(enum moat_tool_kind k)
{
	bool ro = k == MOAT_TOOL_READ_FILE || k == MOAT_TOOL_LIST_DIRECTORY;

	return json_pack("{s:b, s:b, s:b, s:b}", "readOnlyHint", ro, "destructiveHint", !ro,
			 "idempotentHint", ro || k == MOAT_TOOL_WRITE_FILE, "openWorldHint",
			 k == MOAT_TOOL_BASH);
}

static const char *const tool_titles[MOAT_TOOL__COUNT] = {
    [MOAT_TOOL_READ_FILE] = "Read file",    [MOAT_TOOL_WRITE_FILE] = "Write file",
    [MOAT_TOOL_EDIT_FILE] = "Edit file",    [MOAT_TOOL_LIST_DIRECTORY] = "List directory",
    [MOAT_TOOL_BASH] = "Run shell command",
};

static json_t *build_tools(const char *version)
{
	json_t *tools = json_array();

	if (!tools)
		return NULL;
	for (int k = MOAT_TOOL_READ_FILE; k < MOAT_TOOL__COUNT; k++) {
		json_t *t = json_object(), *in = parse_schema(moat_tool_input_schema(k));
		const char *desc = moat_tool_description(k);

		if (!t || !in || !desc) {
			json_decref(t);
			json_decref(in);
			json_decref(tools);
			return NULL;
		}
		json_object_set_new(t, "name", json_string(moat_tool_name(k)));
		if (moat_mcp_version_ge(version, "2025-06-18"))
			json_object_set_new(t, "title", json_string(tool_titles[k]));
		json_object_set_new(t, "description", json_string(desc));
		json_object_set_new(t, "inputSchema", in);
		if (moat_mcp_version_ge(version, "2025-06-18")) {
			json_t *out = parse_schema(moat_tool_output_schema(k));

			if (out)
				json_object_set_new(t, "outputSchema", out);
		}
		if (moat_mcp_version_ge(version, "2025-03-26"))
			json_object_set_new(t, "annotations", tool_annotations(k));
		json_array_append_new(tools, t);
	}
	return tools;
}

static void handle_tools_list(struct server *s, const struct moat_rpc_msg *m)
{
	const char *v = s->version[0] ? s->version : MOAT_MCP_LATEST_VERSION;

	if (!s->tools || strcmp(s->tools_version, v) != 0) {
		json_decref(s->tools);
		s->tools = build_tools(v);
		moat_strlcpy(s->tools_version, v, sizeof(s->tools_version));
	}
	if (!s->tools) {
		reply_error(s, m->id, MOAT_RPC_INTERNAL_ERROR, "the tool schemas are not valid");
		return;
	}
	/* one page: no nextCursor */
	reply_result(s, m->id, json_pack("{s:O}", "tools", s->tools));
}

static void handle_set_level(struct server *s, const struct moat_rpc_msg *m)
{
	const char *level = json_string_value(json_object_get(m->params, "level"));
	int i = level ? log_level_index(level) : -1;

	if (i < 0) {
		reply_error(s, m->id, MOAT_RPC_INVALID_PARAMS,
			    "params.level must be one of debug, info, notice, warning, error, "
			    "critical, alert, emergency");
		return;
	}
	atomic_store(&s->log_level, i);
	reply_result(s, m->id, json_object());
}

/* Where params.arguments sits in the request line: [*ret_off, *ret_end).
 * The line passed the strict parser (no duplicate keys), so that text is
 * exactly the arguments object. -ENOENT when it is not found. */
static int arguments_span(const char *line, size_t len, size_t *ret_off, size_t *ret_end)
{
	struct moat_json_iter it;
	size_t root, k, v;

	if (moat_json_root(line, len, &root) < 0 || moat_json_iter_init(&it, line, len, root) < 0)
		return -ENOENT;
	while (moat_json_iter_next(&it, &k, &v) == 1) {
		if (!moat_json_string_equals(line, len, k, "params"))
			continue;
		if (moat_json_iter_init(&it, line, len, v) < 0)
			return -ENOENT;
		while (moat_json_iter_next(&it, &k, &v) == 1) {
			if (!moat_json_string_equals(line, len, k, "arguments"))
				continue;
			if (line[v] != '{' || it.off <= v)
				return -ENOENT;
			*ret_off = v;
			*ret_end = it.off;
			return 0;
		}
		return -ENOENT;
	}
	return -ENOENT;
}

/* The tool's name, into tool (TOOL_NAME_MAX bytes): false, with the error
 * replied, when moat has no such tool. */
static bool tool_name_ok(struct server *s, const json_t *id, const char *name, size_t name_len,
			 char *tool)
{
	char q[80];
	size_t n;

	if (name_len < TOOL_NAME_MAX) {
		memcpy(tool, name, name_len);
		tool[name_len] = '\0';
		if (moat_tool_lookup(tool) != MOAT_TOOL_NONE)
			return true;
	}
	n = name_len < sizeof(q) - 1 ? name_len : sizeof(q) - 1;
	memcpy(q, name, n);
	q[n] = '\0';
	for (char *p = q; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == '"')
			*p = '?';
	reply_error(s, id, MOAT_RPC_INVALID_PARAMS,
		    "unknown tool \"%s\": the tools are read_file, write_file, edit_file, "
		    "list_directory and bash",
		    q);
	return false;
}

/* Run or queue a checked tools/call. args: the arguments' text, args_len
 * bytes (not NUL-terminated: it may point into the request line);
 * args_heap, when not NULL, is that text on the heap, and is taken. token:
 * the progress token, or NULL. */
static void start_call(struct server *s, const json_t *id, const char *tool, const char *args,
		       size_t args_len, char *args_heap, const json_t *token)
{
	char key[MOAT_RPC_ID_KEY_MAX];
	struct job *j;

	if (moat_rpc_id_key(id, key, sizeof(key)) < 0) {
		free(args_heap);
		reply_error(s, id, MOAT_RPC_INVALID_REQUEST, "invalid id");
		return;
	}

	/* A file tool runs right here, on the loop thread, unless it needs a
	 * human's answer: it is bounded (caps, no FIFOs or devices, local
	 * I/O), and handing it to a worker would cost two thread wake-ups,
	 * more than the call itself. A call the session defers (it would ask),
	 * and every shell call, goes to a worker so that the loop stays free
	 * to read elicitation answers, pings and cancellations. The job lives
	 * on the stack and borrows the id and the arguments' text: nothing is
	 * copied unless the call goes to a worker. */
	if (!token && moat_tool_lookup(tool) != MOAT_TOOL_BASH) {
		struct job sj;
		bool dup;

		pthread_mutex_lock(&s->mu);
		dup = s->ninflight > 0 && inflight_find(s, key) != NULL;
		pthread_mutex_unlock(&s->mu);
		if (!dup) {
			memset(&sj, 0, sizeof(sj));
			sj.srv = s;
			sj.cancel_fd = -1;
			sj.id = (json_t *)id; /* borrowed: never job_free()d */
			sj.args = (char *)args;
			sj.args_len = args_len;
			memcpy(sj.key, key, sizeof(sj.key));
			moat_strlcpy(sj.tool, tool, sizeof(sj.tool));
			moat_strlcpy(sj.version,
				     s->version[0] ? s->version : MOAT_MCP_LATEST_VERSION,
				     sizeof(sj.version));
			sj.elicit = moat_mcp_elicit_enabled(s->elicit);
			sj.inline_call = true;
			if (run_job(s, &sj) == 0) {
				free(args_heap);
				return;
			}
			/* deferred: the same call again on a worker, under the
			 * session's call id */
			j = calloc(1, sizeof(*j));
			if (j)
				memcpy(j->call_id, sj.call_id, sizeof(j->call_id));
			goto queue;
		}
	}
	j = calloc(1, sizeof(*j));
queue:
	if (j && !args_heap)
		args_heap = moat_strndup(args, args_len);
	if (!j || !args_heap) {
		free(j);
		free(args_heap);
		reply_error(s, id, MOAT_RPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	j->srv = s;
	j->cancel_fd = -1;
	j->id = json_deep_copy(id);
	j->args = args_heap;
	j->args_len = args_len;
	memcpy(j->key, key, sizeof(j->key));
	moat_strlcpy(j->tool, tool, sizeof(j->tool));
	moat_strlcpy(j->version, s->version[0] ? s->version : MOAT_MCP_LATEST_VERSION,
		     sizeof(j->version));
	j->elicit = moat_mcp_elicit_enabled(s->elicit);
	j->ecall.e = s->elicit;
	if (!j->id) {
		job_free(j);
		reply_error(s, id, MOAT_RPC_INTERNAL_ERROR, "out of memory");
		return;
	}

	pthread_mutex_lock(&s->mu);
	if (inflight_find(s, key)) {
		pthread_mutex_unlock(&s->mu);
		job_free(j);
		reply_error(s, id, MOAT_RPC_INVALID_REQUEST,
			    "the id of this request is already used by a call in flight");
		return;
	}
	if (s->ninflight >= MOAT_MCP_MAX_INFLIGHT ||
	    s->inflight_bytes + args_len > MOAT_MCP_MAX_INFLIGHT_BYTES) {
		pthread_mutex_unlock(&s->mu);
		job_free(j);
		reply_error(s, id, MOAT_RPC_SERVER_BUSY,
			    "too many tool calls in flight (at most %u calls and %u MiB of "
			    "arguments): wait for replies before sending more",
			    MOAT_MCP_MAX_INFLIGHT, MOAT_MCP_MAX_INFLIGHT_BYTES >> 20);
		return;
	}
	pthread_mutex_unlock(&s->mu);

	j->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	j->progress_token = token ? json_deep_copy(token) : NULL;
	if (j->cancel_fd < 0 || (token && !j->progress_token)) {
		int e = j->cancel_fd < 0 ? errno : ENOMEM;

		job_free(j);
		reply_error(s, id, MOAT_RPC_INTERNAL_ERROR, "out of resources: %s", strerror(e));
		return;
	}

	pthread_mutex_lock(&s->mu);
	s->inflight[s->ninflight++] = j;
	s->inflight_bytes += args_len;
	if (s->qtail)
		s->qtail->qnext = j;
	else
		s->qhead = j;
	s->qtail = j;
	s->qlen++;
	maybe_spawn(s);
	pthread_mutex_unlock(&s->mu);
	/* after the unlock: the woken worker does not block on the mutex */
	pthread_cond_signal(&s->work_cv);
}

static void handle_tools_call(struct server *s, const struct moat_rpc_msg *m, const char *line,
			      size_t line_len)
{
	const json_t *name = json_object_get(m->params, "name");
	json_t *args = json_object_get(m->params, "arguments");
	const json_t *meta = json_object_get(m->params, "_meta");
	const json_t *token = json_object_get(meta, "progressToken");
	char tool[TOOL_NAME_MAX];
	size_t a_off, a_end;
	char *text;

	if (!json_is_string(name)) {
		reply_error(s, m->id, MOAT_RPC_INVALID_PARAMS,
			    "tools/call needs params.name, the tool's name (a string)");
		return;
	}
	if (!tool_name_ok(s, m->id, json_string_value(name), json_string_length(name), tool))
		return;
	if (args && !json_is_object(args)) {
		reply_error(s, m->id, MOAT_RPC_INVALID_PARAMS,
			    "params.arguments must be an object, not %s",
			    moat_json_type_name(args));
		return;
	}
	if (meta && !json_is_object(meta)) {
		reply_error(s, m->id, MOAT_RPC_INVALID_PARAMS, "params._meta must be an object");
		return;
	}
	if (token && !json_is_string(token) && !json_is_integer(token)) {
		reply_error(s, m->id, MOAT_RPC_INVALID_PARAMS,
			    "params._meta.progressToken must be a string or an integer");
		return;
	}
	/* the session parses the arguments again, strictly: it gets their
	 * text as the client wrote it (writing them out again costs more) */
	if (!args) {
		start_call(s, m->id, tool, "{}", 2, NULL, token);
		return;
	}
	if (arguments_span(line, line_len, &a_off, &a_end) == 0 &&
	    a_end - a_off <= MOAT_ARGS_MAX_BYTES) {
		start_call(s, m->id, tool, line + a_off, a_end - a_off, NULL, token);
		return;
	}
	text = json_dumps(args, JSON_COMPACT);
	if (!text) {
		reply_error(s, m->id, MOAT_RPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	start_call(s, m->id, tool, text, strlen(text), text, token);
}

/* The usual tools/call, read without a JSON tree (moat_rpc_parse_call):
 * the same checks as handle_tools_call, which such a request passes but
 * for the tool's name. */
/* MCP's lifecycle: nothing but ping before initialize has been answered
 * (no protocol version or client capabilities are agreed yet: a tool call
 * there would run before the client said what it can answer). */
static bool refuse_before_init(struct server *s, const json_t *id)
{
	if (s->initialized)
		return false;
	reply_error(s, id, MOAT_RPC_INVALID_REQUEST,
		    "not initialized: send initialize first (only ping is answered before it)");
	return true;
}

static void handle_call_fast(struct server *s, const struct moat_rpc_call *c)
{
	char tool[TOOL_NAME_MAX];

	if (refuse_before_init(s, c->id))
		return;
	if (!tool_name_ok(s, c->id, c->name, c->name_len, tool))
		return;
	start_call(s, c->id, tool, c->args, c->args_len, NULL, NULL);
}

static void handle_cancelled(struct server *s, const struct moat_rpc_msg *m)
{
	const json_t *rid = json_object_get(m->params, "requestId");
	char key[MOAT_RPC_ID_KEY_MAX];
	struct job *j, *drop = NULL;

	if (!rid || moat_rpc_id_key(rid, key, sizeof(key)) < 0)
		return;
	pthread_mutex_lock(&s->mu);
	j = inflight_find(s, key);
	if (j && !j->cancelled) {
		j->cancelled = true;
		if (j->state == JOB_QUEUED) {
			queue_remove(s, j);
			inflight_remove(s, j);
			drop = j;
		} else {
			cancel_running(s, j);
		}
	}
	pthread_mutex_unlock(&s->mu);
	job_free(drop);
}

static void handle_request(struct server *s, const struct moat_rpc_msg *m, const char *line,
			   size_t len)
{
	const char *meth = m->method;

	if (!strcmp(meth, "ping"))
		reply_result(s, m->id, json_object());
	else if (!strcmp(meth, "initialize"))
		handle_initialize(s, m);
	else if (refuse_before_init(s, m->id))
		return;
	else if (!strcmp(meth, "tools/call"))
		handle_tools_call(s, m, line, len);
	else if (!strcmp(meth, "tools/list"))
		handle_tools_list(s, m);
	else if (!strcmp(meth, "logging/setLevel"))
		handle_set_level(s, m);
	else {
		char q[80];
		size_t i;

		for (i = 0; meth[i] && i + 1 < sizeof(q); i++)
			q[i] = ((unsigned char)meth[i] < 0x20 || meth[i] == '"') ? '?' : meth[i];
		q[i] = '\0';
		reply_error(s, m->id, MOAT_RPC_METHOD_NOT_FOUND, "method not found: \"%s\"", q);
	}
}

static void handle_line(struct server *s, const char *line, size_t len)
{
	struct moat_rpc_msg m;
	struct moat_rpc_fault f;
	struct moat_rpc_call c;

	if (moat_rpc_parse_call(line, len, &c) == 0) {
		handle_call_fast(s, &c);
		json_decref(c.id);
		return;
	}
	if (moat_rpc_parse(line, len, &m, &f) < 0) {
		if (!f.no_reply)
			reply_error(s, f.id, f.code, "%s", f.message);
		else if (f.id)
			/* a malformed response to one of our questions: that
			 * question is over (denied), not left to its timeout */
			moat_mcp_elicit_fail(s->elicit, f.id);
		moat_rpc_fault_release(&f);
		return;
	}
	switch (m.kind) {
	case MOAT_RPC_REQUEST:
		handle_request(s, &m, line, len);
		break;
	case MOAT_RPC_NOTIFICATION:
		if (!strcmp(m.method, "notifications/cancelled"))
			handle_cancelled(s, &m);
		/* notifications/initialized and any other: nothing to do */
		break;
	case MOAT_RPC_RESPONSE:
		moat_mcp_elicit_route(s->elicit, &m); /* unknown ids are ignored */
		break;
	}
	moat_rpc_msg_release(&m);
}

static void handle_too_long(struct server *s)
{
	reply_error(s, NULL, MOAT_RPC_INVALID_REQUEST,
		    "message larger than %u bytes: refused, and its bytes were dropped",
		    MOAT_MCP_MAX_LINE);
}

/* ---- the loop ---- */

/* End of input or a stop: cancel what runs, answer nothing more from the
 * queue, wait for the workers. */
static void shutdown_all(struct server *s)
{
	struct job *drop;

	moat_mcp_elicit_cancel(s->elicit, NULL);
	pthread_mutex_lock(&s->mu);
	while ((drop = s->qhead) != NULL) {
		s->qhead = drop->qnext;
		s->qlen--;
		inflight_remove(s, drop);
		pthread_mutex_unlock(&s->mu);
		reply_error(s, drop->id, MOAT_RPC_INTERNAL_ERROR,
			    "the server is stopping (its input closed): the call did not run");
		job_free(drop);
		pthread_mutex_lock(&s->mu);
	}
	s->qtail = NULL;
	for (size_t i = 0; i < s->ninflight; i++)
		cancel_running(s, s->inflight[i]);
	while (s->ninflight > 0)
		pthread_cond_wait(&s->idle_cv, &s->mu);
	s->quit = true;
	pthread_cond_broadcast(&s->work_cv);
	pthread_mutex_unlock(&s->mu);
	for (unsigned i = 0; i < s->nworkers; i++)
		pthread_join(s->workers[i], NULL);
	s->nworkers = 0;
}

static void drain_lines(struct server *s, struct moat_rpc_reader *rd)
{
	const char *line;
	size_t len;
	int k;

	while ((k = moat_rpc_reader_next(rd, &line, &len)) != 0) {
		if (k == MOAT_RPC_TOO_LONG)
			handle_too_long(s);
		else
			handle_line(s, line, len);
	}
}

/* How long the loop polls for the next request after replying, and how soon
 * after a reply the requests must have come for it to do so. A client that
 * calls back to back (a script, a benchmark, an agent's batch of reads)
 * sends its next request some 20 us after reading a reply; sleeping in
 * poll() in between costs a wake-up of an idle CPU, which on a virtual
 * machine is as long as the whole call (the bare server of bench/ doubled
 * its calls per second with this). An agent with thinking time between its
 * calls never spins: each request that came later than MCP_SPIN_GAP_NS
 * after the reply turns the spinning off until one comes sooner. The spin
 * yields the CPU on every turn, so a client or a worker on the same CPU
 * runs at once; it costs at most MCP_SPIN_NS of CPU per reply. */
#define MCP_SPIN_NS 50000u
#define MCP_SPIN_GAP_NS 150000u

static int wait_input(struct server *s, struct pollfd p[2])
{
	int n = 0;

	if (s->spin && s->replied_ns) {
		uint64_t t0 = mono_ns();

		while ((n = poll(p, 2, 0)) == 0 && mono_ns() - t0 < MCP_SPIN_NS)
			sched_yield();
	}
	if (n == 0)
		n = poll(p, 2, -1);
	if (n > 0 && (p[0].revents & (POLLIN | POLLHUP)) && s->replied_ns) {
		s->spin = mono_ns() - s->replied_ns <= MCP_SPIN_GAP_NS;
		s->replied_ns = 0;
	}
	return n;
}

static int loop(struct server *s)
{
	struct moat_rpc_reader rd;
	const char *line;
	size_t len;
	int r = 0, k;

	moat_rpc_reader_init(&rd, MOAT_MCP_MAX_LINE);
	for (;;) {
		struct pollfd p[2] = {
		    {.fd = s->in_fd, .events = POLLIN},
		    {.fd = s->wake_fd, .events = POLLIN},
		};
		long n;

		if (stop_signalled || atomic_load(&s->out_broken))
			break;
		if (wait_input(s, p) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (p[1].revents & POLLIN) {
			uint64_t v;

			if (read(s->wake_fd, &v, sizeof(v)) < 0) {
				/* EAGAIN: nothing pending */
			}
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = moat_rpc_reader_fill(&rd, s->in_fd);
		if (n == -EAGAIN || n == -EINTR)
			continue;
		if (n < 0 && n != -ENOMEM) {
			r = (int)n;
			break;
		}
		if (n == -ENOMEM) {
			/* drop what is buffered rather than grow: tell the client */
			moat_rpc_reader_release(&rd);
			moat_rpc_reader_init(&rd, MOAT_MCP_MAX_LINE);
			reply_error(s, NULL, MOAT_RPC_INTERNAL_ERROR,
				    "out of memory reading the input: buffered messages dropped");
			continue;
		}
		drain_lines(s, &rd);
		flush_held(s);
		if (n == 0) {
			k = moat_rpc_reader_flush(&rd, &line, &len);
			if (k == MOAT_RPC_TOO_LONG)
				handle_too_long(s);
			else if (k == MOAT_RPC_LINE)
				handle_line(s, line, len);
			break;
		}
	}
	flush_held(s); /* the last line, read at EOF, may have run inline */
	moat_buf_release(&s->held);
	moat_rpc_reader_release(&rd);
	return r == -EBADF || r == -EIO ? 0 : r;
}

int moat_mcp_serve(struct moat_session *session, const struct moat_mcp_opts *o)
{
	struct server *s;
	int r;

	if (!session)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->session = session;
	s->in_fd = o && o->in_fd >= 0 ? o->in_fd : 0;
	s->out_fd = o && o->out_fd >= 0 ? o->out_fd : 1;
	s->workspace = o ? o->workspace : NULL;
	s->max_workers = o && o->workers ? o->workers : MOAT_MCP_MAX_WORKERS;
	if (s->max_workers > MOAT_MCP_MAX_WORKERS)
		s->max_workers = MOAT_MCP_MAX_WORKERS;
	atomic_init(&s->out_broken, false);
	atomic_init(&s->log_level, -1);
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->out_mu, NULL);
	pthread_cond_init(&s->work_cv, NULL);
	pthread_cond_init(&s->idle_cv, NULL);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0) {
		r = -errno;
		goto out;
	}
	r = moat_mcp_elicit_new(send_line, s, &s->elicit);
	if (r == 0) {
		pthread_mutex_lock(&s->mu);
		while (s->nworkers < MCP_PRESPAWN_WORKERS && s->nworkers < s->max_workers) {
			unsigned before = s->nworkers;

			s->qlen = s->nidle + 1; /* maybe_spawn's condition, for the start */
			maybe_spawn(s);
			s->qlen = 0;
			if (s->nworkers == before)
				break;
		}
		pthread_mutex_unlock(&s->mu);
	}
	if (r < 0)
		goto out;
	/* jansson seeds its hash function once, on first use: do it here,
	 * before any worker thread exists */
	json_object_seed(0);

	stop_signalled = 0;
	signal_wake_fd = s->wake_fd;
	r = loop(s);
	shutdown_all(s);
	signal_wake_fd = -1;
out:
	moat_mcp_elicit_free(s->elicit);
	json_decref(s->tools);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	pthread_cond_destroy(&s->work_cv);
	pthread_cond_destroy(&s->idle_cv);
	pthread_mutex_destroy(&s->out_mu);
	pthread_mutex_destroy(&s->mu);
	free(s);
	return r;
}
