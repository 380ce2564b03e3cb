/* The approval gate: what happens to a policy decision before a tool runs.
 *
 *   1. ALLOW and DENY pass unchanged; a hard decision is never approved
 *   2. an ASK is answered from the answers remembered for this session
 *      (APPROVED_ALWAYS: the whole tool, or for bash a glob on the command)
 *   3. then from the configuration's pre-approvals (preapprove.c)
 *   4. then by the approver (the terminal, a library callback, MCP
 *      elicitation), within approval_timeout; concurrent identical asks
 *      (same tool, same arguments) are asked once and all get the answer.
 *      A caller that must not wait (MOAT_GATE_DEFER) gets "deferred" here
 *      instead, before anyone is asked
 *   5. no approver, a timeout, an error, a late or malformed answer: DENIED,
 *      with the reason said and how to pre-approve
 *
 * The approver runs in the calling thread with timeout_ms; the gate cannot
 * preempt an approver that ignores it, but an answer that comes after the
 * deadline is refused (DENIED), and the callers that joined the ask stop
 * waiting at their own deadline.
 *
 * This module must never turn a DENY into ALLOW, never answer an ASK it
 * cannot show to someone, and never print: the terminal approver (tty.c) is
 * the only code here that talks to a human. */
#include "gate/gate.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/compat.h"
#include "base/str.h"
#include "core/redact.h"
#include "gate/preapprove.h"

/* The summary an approver is shown (the command, the path), in bytes; a
 * longer one ends in a marker saying how much was left out, so that a
 * command cannot hide its tail behind padding. */
#define GATE_MAX_SUMMARY 4096
/* Nesting of arguments redacted for the approver; deeper values are hidden. */
#define GATE_MAX_DEPTH 64
/* The first word of a command offered for "always" ("git *"). */
#define GATE_MAX_PREFIX_WORD 64

/* An answer remembered for the session: the whole tool (ag.glob NULL) or a
 * glob on bash's command. */
struct remembered {
	char *tool;
	char *pattern; /* NULL: the whole tool */
	struct moat_arg_glob ag;
};

/* An ask in flight: the caller that asks (the leader) and every caller that
 * joined it hold a reference; the last one frees it. */
struct pending {
	struct pending *next;
	char *key; /* tool, newline, the arguments as canonical JSON */
	pthread_cond_t cond;
	bool done;
	unsigned refs;
	struct moat_approval result;
};

struct moat_gate {
	pthread_mutex_t lock;
	long timeout_s;
	struct moat_preapprovals *pre; /* immutable: read without the lock */
	moat_approver_fn fn;	       /* the default approver */
	void *ud;
	char name[32];
	struct remembered *mem;
	size_t nmem;
	struct pending *inflight;
};

const char *moat_answer_name(enum moat_answer a)
{
	switch (a) {
	case MOAT_ANSWER_APPROVED:
		return "approved";
	case MOAT_ANSWER_APPROVED_ALWAYS:
		return "approved_always";
	case MOAT_ANSWER_DENIED:
	default:
		return "denied";
	}
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- life cycle --------------------------------------------------------- */

int moat_gate_new(const struct moat_config *cfg, struct moat_gate **ret, struct moat_error *err)
{
	struct moat_gate *g;
	int r;

	if (!ret)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g) {
		moat_error_set(err, "out of memory");
		return -ENOMEM;
	}
	r = moat_preapprovals_new(cfg, &g->pre, err);
	if (r < 0) {
		free(g);
		return r;
	}
	g->timeout_s = cfg ? cfg->approval_timeout_s : MOAT_GATE_DEFAULT_TIMEOUT_S;
	if (g->timeout_s < 1 || g->timeout_s > MOAT_CONFIG_MAX_APPROVAL_TIMEOUT_S)
		g->timeout_s = MOAT_GATE_DEFAULT_TIMEOUT_S;
	pthread_mutex_init(&g->lock, NULL);
	*ret = g;
	return 0;
}

struct moat_gate *moat_gate_free(struct moat_gate *g)
{
	if (!g)
		return NULL;
	/* callers must be done with the gate: no ask may be in flight */
	for (size_t i = 0; i < g->nmem; i++) {
		free(g->mem[i].tool);
		free(g->mem[i].pattern);
		moat_arg_glob_release(&g->mem[i].ag);
	}
	free(g->mem);
	moat_preapprovals_free(g->pre);
	pthread_mutex_destroy(&g->lock);
	free(g);
	return NULL;
}

void moat_gate_set_approver(struct moat_gate *g, moat_approver_fn fn, void *ud, const char *name)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->fn = fn;
	g->ud = ud;
	moat_strlcpy(g->name, name && *name ? name : "callback", sizeof(g->name));
	pthread_mutex_unlock(&g->lock);
}

/* ---- helpers ------------------------------------------------------------ */

static void set_result(struct moat_approval *a, enum moat_verdict v, const char *by,
		       const char *answer)
{
	a->verdict = v;
	moat_strlcpy(a->by, by, sizeof(a->by));
	moat_strlcpy(a->answer, answer, sizeof(a->answer));
}

__attribute__((format(printf, 2, 3))) static void set_reason(struct moat_approval *a,
							     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->reason, sizeof(a->reason), fmt, ap);
	va_end(ap);
}

/* SECURITY: ASKs about effects a human should see each time, whatever was
 * remembered or pre-approved: a write into a startup, persistence or
 * credential file, a destructive command whose target is unknown, a download
 * run in the same command, setuid modes, disk partitioning, a command naming
 * a denied path, a program or script unknown before running, a write to a
 * device node. Only the
 * approver answers these (a pre-approved glob could not describe them, and
 * "always" was said about other calls). */
static bool sticky_ask(const char *rule)
{
	static const char *const prefixes[] = {
	    "startup-write:",	      "dynamic-target:", "command:download-exec", "command:setuid",
	    "command:disk-partition", "command:dynamic", "command:shell-stdin",	  "denied_paths",
	    "command:device-write",
	};

	if (moat_str_has_prefix(rule, "project:"))
		rule += strlen("project:");
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(prefixes); i++)
		if (moat_str_has_prefix(rule, prefixes[i]))
			return true;
	return false;
}

static const char *canonical_tool(const char *tool)
{
	return !strcmp(tool, "run_shell_command") ? "bash" : tool;
}

/* A character a shell acts on (or a blank: a secret is one word). */
static bool shell_active(char c)
{
	return c == '\0' || strchr("$`;|&<>(){}\\'\" \t\n\r*?[]~!#", c) != NULL;
}

/* Does red, the redacted form of s, hide a character a shell acts on?
 * Each run of [REDACTED] markers in red stands for a span of s; the text
 * between markers is s's own and is found again, in order. Where the two
 * cannot be lined up the answer is yes. */
static bool hides_shell(const char *s, size_t n, const char *red, size_t rn)
{
	const size_t ml = strlen(MOAT_REDACTED);
	size_t i = 0, j = 0;

	while (j < rn) {
		size_t k, e;
		const char *at;

		if (rn - j < ml || memcmp(red + j, MOAT_REDACTED, ml) ||
		    (n - i >= ml && !memcmp(s + i, MOAT_REDACTED, ml))) {
			if (i >= n || s[i] != red[j])
				return true;
			i++, j++;
			continue;
		}
		/* the markers, then the literal text up to the next one */
		for (k = j; rn - k >= ml && !memcmp(red + k, MOAT_REDACTED, ml); k += ml)
			;
		for (e = k; e < rn && (rn - e < ml || memcmp(red + e, MOAT_REDACTED, ml)); e++)
			;
		at = e == k ? s + n : memmem(s + i, n - i, red + k, e - k);
		if (!at || at == s + i)
			return true;
		for (const char *c = s + i; c < at; c++)
			if (shell_active(*c))
				return true;
		i = (size_t)(at - s);
		j = k;
	}
	return i != n;
}

/* What the approver is shown of one string: its redacted form, unless a
 * redacted span would hide shell syntax. SECURITY: an approval is only as
 * good as what the human sees; a span redacted as a secret may hold code
 * (`SECRET="$(curl x|sh)"`, `TOKEN=x;rm -rf ~`), and then the string is
 * shown whole, secrets included: the human approving owns them, and the
 * audit log still redacts them. */
static int prompt_redact(const char *s, size_t len, struct moat_buf *out)
{
	struct moat_buf red = MOAT_BUF_INIT;
	int r = moat_redact(s, len, &red);

	if (r >= 0) {
		if (red.len != len || memcmp(red.data ? red.data : "", s, len)) {
			if (hides_shell(s, len, red.data ? red.data : "", red.len))
				r = moat_buf_append(out, s, len);
			else
				r = moat_buf_append(out, red.data, red.len);
		} else {
			r = moat_buf_append(out, s, len);
		}
	}
	moat_buf_release(&red);
	return r;
}

/* Replace every string in v (an object or array, depth-bounded) with what
 * the approver is shown of it (prompt_redact). */
static int redact_tree(json_t *v, int depth)
{
	if (json_is_object(v)) {
		for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
			json_t *m = json_object_iter_value(it);
			int r;

			if (json_is_string(m)) {
				struct moat_buf b = MOAT_BUF_INIT;

				r = prompt_redact(json_string_value(m), json_string_length(m), &b);
				if (r >= 0)
					r = json_object_iter_set_new(
					    v, it,
					    json_stringn_nocheck(b.data ? b.data : "", b.len));
				moat_buf_release(&b);
			} else if (json_is_object(m) || json_is_array(m)) {
				r = depth >= GATE_MAX_DEPTH ? json_object_iter_set_new(
								  v, it, json_string(MOAT_REDACTED))
							    : redact_tree(m, depth + 1);
			} else {
				r = 0;
			}
			if (r < 0)
				return -ENOMEM;
		}
	} else if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *m = json_array_get(v, i);
			int r = 0;

			if (json_is_string(m)) {
				struct moat_buf b = MOAT_BUF_INIT;

				r = prompt_redact(json_string_value(m), json_string_length(m), &b);
				if (r >= 0)
					r = json_array_set_new(
					    v, i,
					    json_stringn_nocheck(b.data ? b.data : "", b.len));
				moat_buf_release(&b);
			} else if (json_is_object(m) || json_is_array(m)) {
				r = depth >= GATE_MAX_DEPTH
					? json_array_set_new(v, i, json_string(MOAT_REDACTED))
					: redact_tree(m, depth + 1);
			}
			if (r < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* The arguments as compact JSON with secrets redacted (heap). */
static char *redacted_args(json_t *args)
{
	json_t *copy;
	char *s;

	if (!args)
		return moat_strdup("{}");
	copy = json_deep_copy(args);
	if (!copy)
		return NULL;
	if (redact_tree(copy, 0) < 0) {
		json_decref(copy);
		return NULL;
	}
	s = json_dumps(copy, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(copy);
	return s;
}

/* The key argument (redacted), bounded by GATE_MAX_SUMMARY with a marker. */
static char *summary_of(const char *tool, json_t *args)
{
	static const char *const keys[] = {"path",	"file_path", "filepath",
					   "directory", "url",	     "command"};
	struct moat_buf red = MOAT_BUF_INIT, out = MOAT_BUF_INIT;
	json_t *v = NULL;

	if (json_is_object(args)) {
		if (!strcmp(tool, "bash"))
			v = json_object_get(args, "command");
		for (size_t i = 0; !json_is_string(v) && i < MOAT_ARRAY_SIZE(keys); i++)
			v = json_object_get(args, keys[i]);
	}
	if (!json_is_string(v))
		return moat_strdup("");
	if (prompt_redact(json_string_value(v), json_string_length(v), &red) < 0) {
		moat_buf_release(&red);
		return NULL;
	}
	if (red.len <= GATE_MAX_SUMMARY) {
		moat_buf_append(&out, red.data ? red.data : "", red.len);
	} else {
		size_t cut = GATE_MAX_SUMMARY;

		/* cut at a character boundary */
		while (cut > 0 && ((unsigned char)red.data[cut] & 0xc0) == 0x80)
			cut--;
		moat_buf_append(&out, red.data, cut);
		moat_buf_printf(&out, " [... %zu more bytes]", red.len - cut);
	}
	moat_buf_release(&red);
	return moat_buf_steal(&out);
}

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("._+-/@%:,", c));
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* For "always" on bash: the first word of the command after leading
 * NAME=value assignments, as a glob ("git *"). Only plain words are offered
 * (no quotes, expansions or glob characters), so the glob is literal. */
static bool always_prefix(const char *cmd, char *out, size_t outsz)
{
	const char *p = cmd;

	for (;;) {
		const char *w, *e;

		while (blank(*p))
			p++;
		w = p;
		while (*p && !blank(*p))
			p++;
		e = p;
		if (w == e)
			return false;
		/* an assignment: NAME=plain-value */
		if ((*w == '_' || (*w >= 'a' && *w <= 'z') || (*w >= 'A' && *w <= 'Z'))) {
			const char *q = w;

			while (q < e && (*q == '_' || (*q >= 'a' && *q <= 'z') ||
					 (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
				q++;
			if (q < e && *q == '=') {
				for (q++; q < e; q++)
					if (!word_char(*q) && *q != '=')
						return false;
				continue;
			}
		}
		if (*w == '-' || (size_t)(e - w) > GATE_MAX_PREFIX_WORD)
			return false;
		for (const char *q = w; q < e; q++)
			if (!word_char(*q))
				return false;
		if ((size_t)(e - w) + 3 > outsz)
			return false;
		memcpy(out, w, (size_t)(e - w));
		memcpy(out + (e - w), " *", 3);
		return true;
	}
}

/* ---- session memory (under the lock) ------------------------------------ */

static const struct remembered *recall(const struct moat_gate *g, const char *tool, json_t *args)
{
	for (size_t i = 0; i < g->nmem; i++) {
		const struct remembered *m = &g->mem[i];

		if (strcmp(m->tool, tool) != 0)
			continue;
		if (!m->pattern || moat_arg_glob_match(&m->ag, tool, args))
			return m;
	}
	return NULL;
}

/* Remember an APPROVED_ALWAYS. Returns a note for the reason when it could
 * not be remembered ("" when it was). */
static const char *remember(struct moat_gate *g, const char *tool, const char *pattern)
{
	struct remembered *m, *grown;

	if (pattern && !*pattern)
		pattern = NULL;
	if (pattern && strcmp(tool, "bash") != 0)
		return " (not remembered: a command pattern applies to bash only)";
	for (size_t i = 0; i < g->nmem; i++) {
		m = &g->mem[i];
		if (!strcmp(m->tool, tool) &&
		    (pattern ? m->pattern && !strcmp(m->pattern, pattern) : !m->pattern))
			return "";
	}
	if (g->nmem >= MOAT_GATE_MAX_REMEMBERED)
		return " (not remembered: the session already remembers the most answers it "
		       "keeps)";
	grown = realloc(g->mem, (g->nmem + 1) * sizeof(*g->mem));
	if (!grown)
		return " (not remembered: out of memory)";
	g->mem = grown;
	m = &g->mem[g->nmem];
	memset(m, 0, sizeof(*m));
	m->tool = moat_strdup(tool);
	if (!m->tool)
		return " (not remembered: out of memory)";
	if (pattern) {
		m->pattern = moat_strdup(pattern);
		if (!m->pattern ||
		    moat_arg_glob_init(&m->ag, NULL, tool, "command", pattern, NULL) < 0) {
			free(m->tool);
			free(m->pattern);
			memset(m, 0, sizeof(*m));
			return " (not remembered: the pattern is not a valid glob)";
		}
	}
	g->nmem++;
	return "";
}

/* ---- asking ------------------------------------------------------------- */

static void no_human(struct moat_approval *a, const char *why)
{
	set_result(a, MOAT_DENY, "none", "denied");
	set_reason(a,
		   "%s; pre-approve such calls with an \"approvals\" entry in the "
		   "configuration, or run with --approve-with tty",
		   why);
}

/* Turn the approver's return and reply into the approval. */
static void conclude(struct moat_gate *g, const char *tool, const char *by, int r,
		     const struct moat_reply *reply, long timeout_s, struct moat_approval *a)
{
	const char *note;

	a->asked = true;
	if (r == -ETIMEDOUT) {
		set_result(a, MOAT_DENY, by, "denied");
		set_reason(a, "no answer within %ld second%s (approval_timeout): denied", timeout_s,
			   timeout_s == 1 ? "" : "s");
		return;
	}
	if (r == -ENOTTY && by && !strcmp(by, "elicitation")) {
		set_result(a, MOAT_DENY, "none", "denied");
		set_reason(a, "there is no human to ask: the MCP client did not declare the "
			      "elicitation capability; pre-approve such calls with an \"approvals\" "
			      "entry in moat's configuration (--config)");
		moat_strlcpy(a->by, by, sizeof(a->by));
		return;
	}
	if (r == -ENOTTY) {
		no_human(a, "there is no terminal to ask (the approver has no /dev/tty)");
		moat_strlcpy(a->by, by, sizeof(a->by));
		return;
	}
	if (r == -ECANCELED) {
		set_result(a, MOAT_DENY, by, "denied");
		set_reason(a, "the ask was cancelled before it was answered: denied");
		return;
	}
	if (r < 0) {
		char buf[128];

		set_result(a, MOAT_DENY, by, "denied");
		set_reason(a, "the approver failed (%s): denied", moat_strerror(-r, buf, sizeof(buf)));
		return;
	}
	switch (reply->answer) {
	case MOAT_ANSWER_APPROVED:
		set_result(a, MOAT_ALLOW, by, "approved");
		set_reason(a, "approved by %s for this call", by);
		return;
	case MOAT_ANSWER_APPROVED_ALWAYS:
		set_result(a, MOAT_ALLOW, by, "approved_always");
		pthread_mutex_lock(&g->lock);
		note = remember(g, tool, reply->always_pattern);
		pthread_mutex_unlock(&g->lock);
		if (reply->always_pattern[0] && !strcmp(tool, "bash"))
			set_reason(a,
				   "approved by %s for the rest of the session: bash commands "
				   "matching '%.160s'%s",
				   by, reply->always_pattern, note);
		else
			set_reason(a, "approved by %s for the rest of the session: every %s call%s",
				   by, tool, note);
		return;
	case MOAT_ANSWER_DENIED:
		set_result(a, MOAT_DENY, by, "denied");
		set_reason(a, "denied by %s", by);
		return;
	default:
		set_result(a, MOAT_DENY, by, "denied");
		set_reason(a, "the approver gave no valid answer: denied");
		return;
	}
}

static struct pending *pending_unref(struct pending *p)
{
	if (p && --p->refs == 0) {
		pthread_cond_destroy(&p->cond);
		free(p->key);
		free(p);
	}
	return NULL;
}

static void deadline_of(long long ms, struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

/* Wait for an ask in flight (lock held; returns with it held). */
static void join_ask(struct moat_gate *g, struct pending *p, long timeout_s, const char *by,
		     struct moat_approval *a)
{
	struct timespec until;

	p->refs++;
	deadline_of((long long)timeout_s * 1000, &until);
	while (!p->done) {
		int rc = pthread_cond_timedwait(&p->cond, &g->lock, &until);

		if (rc == ETIMEDOUT)
			break;
	}
	if (p->done) {
		char rule[sizeof(a->rule)];

		/* the ask's answer; the rule stays this call's */
		moat_strlcpy(rule, a->rule, sizeof(rule));
		*a = p->result;
		moat_strlcpy(a->rule, rule, sizeof(a->rule));
	} else {
		set_result(a, MOAT_DENY, by, "denied");
		set_reason(a, "no answer within %ld second%s (approval_timeout): denied", timeout_s,
			   timeout_s == 1 ? "" : "s");
	}
	a->asked = true;
	pending_unref(p);
}

static void ask(struct moat_gate *g, const char *call_id, const char *tool, json_t *args,
		const struct moat_decision *d, moat_approver_fn fn, void *ud, const char *by,
		struct moat_approval *a)
{
	struct moat_buf key = MOAT_BUF_INIT;
	struct moat_reply reply;
	struct moat_ask q;
	struct pending *p;
	char prefix[GATE_MAX_PREFIX_WORD + 3];
	char *canon, *args_json = NULL, *summary = NULL;
	long long start, timeout_ms = (long long)g->timeout_s * 1000;
	int r;

	canon = args ? json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
		     : moat_strdup("{}");
	if (canon)
		moat_buf_printf(&key, "%s\n%s", tool, canon);
	else
		key.oom = true;
	free(canon);
	if (key.oom) {
		moat_buf_release(&key);
		set_result(a, MOAT_DENY, by, "denied");
		set_reason(a, "out of memory while asking: denied");
		return;
	}

	pthread_mutex_lock(&g->lock);
	for (p = g->inflight; p; p = p->next)
		if (!strcmp(p->key, key.data))
			break;
	if (p) {
		/* SECURITY: the same question is asked once; a joiner gets the
		 * asker's answer or, at its own deadline, DENIED */
		join_ask(g, p, g->timeout_s, by, a);
		pthread_mutex_unlock(&g->lock);
		moat_buf_release(&key);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (p) {
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&p->cond, &attr);
		pthread_condattr_destroy(&attr);
		p->key = moat_buf_steal(&key);
		p->refs = 1;
		p->next = g->inflight;
		g->inflight = p;
	}
	pthread_mutex_unlock(&g->lock);
	if (!p || !p->key) {
		if (p) {
			pthread_mutex_lock(&g->lock);
			g->inflight = p->next;
			pthread_mutex_unlock(&g->lock);
			pending_unref(p);
		}
		moat_buf_release(&key);
		set_result(a, MOAT_DENY, by, "denied");
		set_reason(a, "out of memory while asking: denied");
		return;
	}

	args_json = redacted_args(args);
	summary = summary_of(tool, args);
	memset(&q, 0, sizeof(q));
	q.call_id = call_id ? call_id : "";
	q.tool = tool;
	q.args_json = args_json;
	q.summary = summary;
	q.decision = d;
	q.always_prefix = NULL;
	if (!strcmp(tool, "bash") && json_is_string(json_object_get(args, "command")) &&
	    always_prefix(json_string_value(json_object_get(args, "command")), prefix,
			  sizeof(prefix)))
		q.always_prefix = prefix;

	if (!args_json || !summary) {
		a->asked = false;
		set_result(a, MOAT_DENY, by, "denied");
		set_reason(a, "out of memory while asking: denied");
	} else {
		memset(&reply, 0, sizeof(reply));
		reply.answer = MOAT_ANSWER_DENIED;
		start = now_ms();
		r = fn(ud, &q, (int)timeout_ms, &reply);
		/* SECURITY: the bound holds even for an approver that ignores
		 * it: an answer after the deadline is not taken */
		if (r >= 0 && now_ms() - start > timeout_ms)
			r = -ETIMEDOUT;
		reply.always_pattern[sizeof(reply.always_pattern) - 1] = '\0';
		conclude(g, tool, by, r, &reply, g->timeout_s, a);
	}
	free(args_json);
	free(summary);

	pthread_mutex_lock(&g->lock);
	p->result = *a;
	p->done = true;
	for (struct pending **pp = &g->inflight; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	pthread_cond_broadcast(&p->cond);
	pending_unref(p);
	pthread_mutex_unlock(&g->lock);
}

/* ---- deciding ----------------------------------------------------------- */

int moat_gate_decide(struct moat_gate *g, const char *call_id, const char *tool, json_t *args,
		     const struct moat_decision *d, moat_approver_fn fn, void *ud, const char *name,
		     struct moat_approval *ret)
{
	return moat_gate_decide_flags(g, call_id, tool, args, d, fn, ud, name, 0, ret);
}

int moat_gate_decide_flags(struct moat_gate *g, const char *call_id, const char *tool, json_t *args,
			   const struct moat_decision *d, moat_approver_fn fn, void *ud,
			   const char *name, unsigned flags, struct moat_approval *ret)
{
	struct moat_approval a;
	const struct remembered *m;
	char rule[sizeof(a.rule)], where[256], by[sizeof(a.by)];
	bool sticky;

	if (!ret)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	set_result(&a, MOAT_DENY, "policy", "");
	if (!d) {
		set_reason(&a, "no policy decision: denied");
		*ret = a;
		return 0;
	}
	moat_strlcpy(a.rule, d->rule, sizeof(a.rule));
	moat_strlcpy(a.reason, d->reason, sizeof(a.reason));

	/* 1. what the policy decided stands, unless it is a soft ASK */
	if (d->verdict == MOAT_ALLOW || d->verdict == MOAT_DENY) {
		a.verdict = d->verdict;
		*ret = a;
		return 0;
	}
	if (d->verdict != MOAT_ASK || d->hard) {
		/* SECURITY: a hard decision is never approved */
		set_reason(&a, "%s (a hard rule: approval cannot allow it)", d->reason);
		*ret = a;
		return 0;
	}
	if (!g || !tool) {
		set_reason(&a, "%.200s; no approval gate to ask: denied", d->reason);
		*ret = a;
		return 0;
	}
	if (args && !json_is_object(args)) {
		set_reason(&a, "the arguments are not a JSON object: denied");
		*ret = a;
		return 0;
	}
	tool = canonical_tool(tool);
	sticky = sticky_ask(d->rule);

	if (!sticky) {
		/* 2. the session's answers */
		pthread_mutex_lock(&g->lock);
		m = recall(g, tool, args);
		if (m) {
			set_result(&a, MOAT_ALLOW, "session", "approved");
			if (m->pattern) {
				snprintf(a.rule, sizeof(a.rule), "session:%s:%s", tool, m->pattern);
				set_reason(
				    &a,
				    "approved earlier in this session for every bash command "
				    "matching '%.160s'",
				    m->pattern);
			} else {
				snprintf(a.rule, sizeof(a.rule), "session:%s", tool);
				set_reason(&a, "approved earlier in this session for every %s call",
					   tool);
			}
		}
		pthread_mutex_unlock(&g->lock);
		if (m) {
			*ret = a;
			return 0;
		}
		/* 3. pre-approvals */
		if (moat_preapprovals_match(g->pre, tool, args, rule, sizeof(rule), where,
					    sizeof(where)) >= 0) {
			set_result(&a, MOAT_ALLOW, "preapproved", "approved");
			moat_strlcpy(a.rule, rule, sizeof(a.rule));
			set_reason(&a, "pre-approved by the configuration%s%s",
				   where[0] ? " at " : "", where);
			*ret = a;
			return 0;
		}
	}

	/* 4. the approver: this call's, else the gate's */
	if (fn) {
		moat_strlcpy(by, name && *name ? name : "callback", sizeof(by));
	} else {
		pthread_mutex_lock(&g->lock);
		fn = g->fn;
		ud = g->ud;
		moat_strlcpy(by, g->name, sizeof(by));
		pthread_mutex_unlock(&g->lock);
	}
	if (!fn) {
		/* 5. nobody to ask */
		char why[200];

		snprintf(why, sizeof(why), "%.120s, and there is no human to ask", d->reason);
		no_human(&a, why);
		*ret = a;
		return 0;
	}
	if (flags & MOAT_GATE_DEFER) {
		/* SECURITY: deferred is a DENY to a caller that ignores the flag;
		 * nobody was asked and no ask in flight was joined */
		set_result(&a, MOAT_DENY, "none", "");
		set_reason(&a, "%.200s; deferred: only a human can answer", d->reason);
		a.deferred = true;
		*ret = a;
		return 0;
	}
	ask(g, call_id, tool, args, d, fn, ud, by, &a);
	*ret = a;
	return 0;
}
