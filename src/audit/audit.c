/* The audit log writer: one JSON line per tool call.
 *
 * A record is built whole in memory (jansson, compact, no raw newline can
 * appear), every string is made valid UTF-8, redacted where it can carry a
 * secret, and capped; the line is then appended with ONE write(2) to a file
 * opened O_APPEND, so concurrent writers (threads sharing one struct
 * moat_audit, or other processes with their own) never interleave on a local
 * file system. A short write is an error: the caller fails closed, and the
 * partial last line it leaves is reported as bad by the reader (truncating
 * it back is impossible with concurrent writers).
 *
 * This module must never print, never write a record in more than one
 * write(2), never follow a symbolic link at the log path, and never write
 * a string from the arguments, the command or an error without redaction. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "base/compat.h"
#include "base/json.h"
#include "base/str.h"
#include "core/redact.h"
#include "sandbox/sandbox.h"

/* Reals (durations, numbers inside the arguments) are written with 15
 * significant digits: every decimal a human or a model writes with up to 15
 * digits survives, and 0.1 is not written as 0.10000000000000001. */
#define AUDIT_DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))
/* The field cap of the last resort, when a record is still over
 * MOAT_AUDIT_MAX_RECORD with the arguments, command and sandbox left out:
 * ten string fields of 4 KiB, each at most 6 times longer escaped, fit. */
#define AUDIT_SMALL_FIELD 4096u
/* moat_audit_ready asks the file system again (fstatvfs) when the free
 * space it last saw, less what this writer appended since, could be under
 * this (twice the margin a record needs: a file system counts blocks, not
 * bytes, and the slack covers the rounding), or when the last look is
 * older than AUDIT_RECHECK_MS (other writers fill the disk too). */
#define AUDIT_RECHECK_ROOM (2ll * MOAT_AUDIT_MAX_RECORD)
#define AUDIT_RECHECK_MS 1000

struct moat_audit {
	int fd;
	bool is_stderr;
	bool regular; /* a regular file: fsync applies */
	bool fsync;
	bool required;
	bool syslog;
	/* moat_audit_ready's last look: free bytes then, less the bytes
	 * written since (any thread), and when (CLOCK_MONOTONIC_COARSE, ms;
	 * 0: never looked) */
	atomic_llong room;
	atomic_llong checked_ms;
	char path[]; /* "-" for stderr */
};

/* ---- strings ---- */

/* Append [s, s+n) as valid UTF-8 without NUL: each invalid byte (and
 * NUL: the reader refuses "\u0000") becomes U+FFFD. */
static void put_clean(struct moat_buf *out, const char *s, size_t n)
{
	moat_buf_append_utf8(out, s, n, false);
}

/* Cut b to at most max bytes, marker included, at character boundaries,
 * keeping its start and its end: a long field's end is often what matters
 * (SECURITY: a command padded with 64 KiB of comment would otherwise have
 * what it runs cut from the record). */
static void cap_field(struct moat_buf *b, size_t max)
{
	char marker[64];
	size_t room, head, tail, cut;
	int m;

	if (b->len <= max || !b->data)
		return;
	/* the marker with the largest count it can carry bounds its length */
	m = snprintf(marker, sizeof(marker), "...[truncated %zu bytes]...", b->len);
	room = max > (size_t)m ? max - (size_t)m : 0;
	head = room / 2;
	while (head > 0 && ((unsigned char)b->data[head] & 0xc0) == 0x80)
		head--;
	tail = room - room / 2;
	while (tail > 0 && ((unsigned char)b->data[b->len - tail] & 0xc0) == 0x80)
		tail--;
	cut = b->len - head - tail;
	m = snprintf(marker, sizeof(marker), "...[truncated %zu bytes]...", cut);
	/* the marker between them, the tail moved up behind it */
	memmove(b->data + head + (size_t)m, b->data + b->len - tail, tail);
	memcpy(b->data + head, marker, (size_t)m);
	b->len = head + (size_t)m + tail;
	b->data[b->len] = '\0';
}

/* The text of a string field from [s, s+n): clean UTF-8, redacted when
 * redact is set, then capped at cap bytes, appended to ret. */
static int clean_field(const char *s, size_t n, bool redact, size_t cap, struct moat_buf *ret)
{
	struct moat_buf clean = MOAT_BUF_INIT, red = MOAT_BUF_INIT;
	struct moat_buf *cur = &clean;
	int r = -ENOMEM;

	put_clean(&clean, s ? s : "", s ? n : 0);
	if (clean.oom)
		goto out;
	if (redact) {
		if (moat_redact(clean.data ? clean.data : "", clean.len, &red) < 0 || red.oom)
			goto out;
		if (!moat_utf8_valid(red.data ? red.data : "", red.len)) {
			/* the redactor works on bytes; never let it break the encoding */
			moat_buf_reset(&clean);
			put_clean(&clean, red.data, red.len);
			if (clean.oom)
				goto out;
		} else {
			cur = &red;
		}
	}
	cap_field(cur, cap);
	if (!cur->oom) {
		moat_buf_append(ret, cur->data ? cur->data : "", cur->len);
		r = ret->oom ? -ENOMEM : 0;
	}
out:
	moat_buf_release(&clean);
	moat_buf_release(&red);
	return r;
}

/* A JSON string from [s, s+n) (clean_field). NULL on allocation failure. */
static json_t *str_field(const char *s, size_t n, bool redact, size_t cap)
{
	struct moat_buf b = MOAT_BUF_INIT;
	json_t *j = NULL;

	if (clean_field(s, n, redact, cap, &b) == 0)
		j = json_stringn(b.data ? b.data : "", b.len);
	moat_buf_release(&b);
	return j;
}

static json_t *cstr_field(const char *s, bool redact, size_t cap)
{
	return str_field(s, strlen(s), redact, cap);
}

/* SECURITY: a value under a key that names a secret is hidden whole: the
 * redactor needs context ("password=...") that a bare JSON value lacks. The
 * key is compared lower-case with everything but letters and digits removed
 * ("API-Key", "api_key" and "apiKey" are one name). */
static bool secret_key(const char *key, size_t len)
{
	static const char *const exact[] = {
	    "password", "passwd", "pwd",       "passphrase",  "pass",	   "token",
	    "secret",	"apikey", "accesskey", "privatekey",  "secretkey", "authorization",
	    "auth",	"bearer", "cookie",    "credentials", "credential"};
	static const char *const suffix[] = {"token",  "secret",    "password",	  "passwd",
					     "apikey", "accesskey", "privatekey", "secretkey"};
	char k[64];
	size_t n = 0;

	if (!key)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = key[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			continue;
		if (n + 1 >= sizeof(k))
			return false; /* longer than any name on the lists */
		k[n++] = c;
	}
	k[n] = '\0';
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(exact); i++)
		if (!strcmp(k, exact[i]))
			return true;
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(suffix); i++)
		if (moat_str_has_suffix(k, suffix[i]))
			return true;
	return false;
}

/* A copy of v with every string value redacted and capped, keys cleaned
 * and capped, nesting bounded (depth counts from 1 for v itself). key is the
 * name v sits under (arrays pass theirs on). NULL on allocation failure. */
static json_t *copy_redacted(json_t *v, unsigned depth, const char *key, size_t key_len, size_t cap)
{
	json_t *out, *child;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		size_t klen;
		json_t *val;

		if (depth > MOAT_JSON_MAX_DEPTH)
			return json_string("[nested too deep]");
		out = json_object();
		if (!out)
			return NULL;
		json_object_keylen_foreach(v, k, klen, val) {
			json_t *jk = str_field(k, klen, false, cap);

			child = jk ? copy_redacted(val, depth + 1, k, klen, cap) : NULL;
			if (!child || json_object_setn_new(out, json_string_value(jk),
							   json_string_length(jk), child) < 0) {
				json_decref(jk);
				json_decref(out);
				return NULL;
			}
			json_decref(jk);
		}
		return out;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *val;

		if (depth > MOAT_JSON_MAX_DEPTH)
			return json_string("[nested too deep]");
		out = json_array();
		if (!out)
			return NULL;
		json_array_foreach(v, i, val) {
			child = copy_redacted(val, depth + 1, key, key_len, cap);
			if (!child || json_array_append_new(out, child) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	}
	case JSON_STRING:
		if (secret_key(key, key_len))
			return json_string(MOAT_REDACTED);
		return str_field(json_string_value(v), json_string_length(v), true, cap);
	case JSON_INTEGER:
		return json_integer(json_integer_value(v));
	case JSON_REAL:
		return json_real(json_real_value(v));
	case JSON_TRUE:
		return json_true();
	case JSON_FALSE:
		return json_false();
	case JSON_NULL:
		return json_null();
	}
	return NULL;
}

/* ---- the record ---- */

static int format_time(char *out, size_t outsz)
{
	/* the date and time to the second, kept for the next records of the
	 * same second (one per thread) */
	static _Thread_local time_t last_sec = (time_t)-1;
	static _Thread_local char last[40];
	struct timespec ts;
	struct tm tm;
	int ms;

	if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
		return -errno;
	if (ts.tv_sec != last_sec) {
		if (!gmtime_r(&ts.tv_sec, &tm))
			return -errno;
		snprintf(last, sizeof(last), "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		last_sec = ts.tv_sec;
	}
	ms = (int)(ts.tv_nsec / 1000000L) % 1000;
	snprintf(out, outsz, "%s.%c%c%cZ", last, '0' + ms / 100, '0' + ms / 10 % 10, '0' + ms % 10);
	return 0;
}

/* Set key to a new value; a NULL value (allocation failure) marks *oom. */
static void put(json_t *o, const char *key, json_t *v, bool *oom)
{
	if (!v || json_object_set_new(o, key, v) < 0)
		*oom = true;
}

static void put_str(json_t *o, const char *key, const char *s, bool redact, size_t cap, bool *oom)
{
	if (s)
		put(o, key, cstr_field(s, redact, cap), oom);
}

/* The stages of shrinking a record over MOAT_AUDIT_MAX_RECORD. */
enum stage {
	STAGE_FULL,    /* everything, fields capped at MOAT_AUDIT_MAX_FIELD */
	STAGE_NO_ARGS, /* the arguments replaced by a note */
	STAGE_NO_BULK, /* the command and the sandbox too */
	STAGE_SMALL,   /* and every field capped at AUDIT_SMALL_FIELD */
};

static json_t *build(const struct moat_audit_record *r, const char *now, enum stage stage)
{
	size_t cap = stage == STAGE_SMALL ? AUDIT_SMALL_FIELD : MOAT_AUDIT_MAX_FIELD;
	char omitted[96];
	bool oom = false;
	json_t *o = json_object();

	if (!o)
		return NULL;
	snprintf(omitted, sizeof(omitted), "[omitted: the record exceeded %u bytes]",
		 MOAT_AUDIT_MAX_RECORD);
	put(o, "time", json_string(now), &oom);
	put_str(o, "call_id", r->call_id, false, cap, &oom);
	put_str(o, "source", r->source, false, cap, &oom);
	put_str(o, "tool", r->tool, false, cap, &oom);
	if (r->args) {
		if (stage == STAGE_FULL)
			put(o, "args", copy_redacted(r->args, 1, NULL, 0, cap), &oom);
		else
			put(o, "args", json_string(omitted), &oom);
	}
	if (r->command) {
		if (stage < STAGE_NO_BULK)
			put_str(o, "command", r->command, true, cap, &oom);
		else
			put(o, "command", json_string(omitted), &oom);
	}
	if (r->decision) {
		const struct moat_decision *d = r->decision;
		json_t *dj = json_object();

		if (dj) {
			put(dj, "verdict", json_string(moat_verdict_name(d->verdict)), &oom);
			put_str(dj, "rule", d->rule, false, cap, &oom);
			put_str(dj, "reason", d->reason, true, cap, &oom);
			put(dj, "hard", json_boolean(d->hard), &oom);
		}
		put(o, "decision", dj, &oom);
	}
	if (r->final)
		put_str(o, "final", r->final, false, cap, &oom);
	else if (r->decision)
		put(o, "final", json_string(moat_verdict_name(r->decision->verdict)), &oom);
	if (r->approval_by || r->approval_answer) {
		json_t *aj = json_object();

		if (aj) {
			put_str(aj, "by", r->approval_by, false, cap, &oom);
			put_str(aj, "answer", r->approval_answer, false, cap, &oom);
		}
		put(o, "approval", aj, &oom);
	}
	if (r->nexempt_paths && r->exempt_paths) {
		json_t *ej = json_array();

		for (size_t i = 0; ej && i < r->nexempt_paths; i++)
			if (r->exempt_paths[i] &&
			    json_array_append_new(ej, cstr_field(r->exempt_paths[i], false, cap)) < 0)
				oom = true;
		put(o, "exempt_paths", ej, &oom);
	}
	if (r->sandbox_json) {
		size_t len = strlen(r->sandbox_json);
		json_t *sj = NULL;

		if (stage >= STAGE_NO_BULK) {
			put(o, "sandbox", json_string(omitted), &oom);
		} else if (moat_json_parse(r->sandbox_json, len, "sandbox", MOAT_AUDIT_MAX_RECORD,
					   MOAT_JSON_MAX_DEPTH, &sj, NULL) == 0) {
			put(o, "sandbox", copy_redacted(sj, 1, NULL, 0, cap), &oom);
			json_decref(sj);
		} else {
			put(o, "sandbox", str_field(r->sandbox_json, len, true, cap), &oom);
		}
	}
	if (r->has_result) {
		json_t *rj = json_object();
		double ms = r->duration_ms;

		if (!isfinite(ms) || ms < 0)
			ms = 0;
		if (rj) {
			put(rj, "ok", json_boolean(r->ok), &oom);
			put(rj, "exit_code",
			    r->exit_code >= 0 ? json_integer(r->exit_code) : json_null(), &oom);
			put(rj, "signal", r->signal > 0 ? json_integer(r->signal) : json_null(),
			    &oom);
			put(rj, "timed_out", json_boolean(r->timed_out), &oom);
			put(rj, "cancelled", json_boolean(r->cancelled), &oom);
			put(rj, "duration_ms", json_real(round(ms * 1000.0) / 1000.0), &oom);
			put(rj, "bytes_out",
			    json_integer(r->bytes_out > (size_t)INT64_MAX
					     ? INT64_MAX
					     : (json_int_t)r->bytes_out),
			    &oom);
		}
		put(o, "result", rj, &oom);
	}
	put_str(o, "error", r->error, true, cap, &oom);
	if (oom) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ---- the direct writer ----
 *
 * The common record, written straight into a buffer: the same fields, in
 * the same order, with the same cleaning, redaction and caps as build() +
 * json_dumps (which cost about four times as much: jansson allocates a node
 * per value and formats through a callback). A record over the size limit
 * falls back to build() and its shrinking stages. */

/* A string value: cleaned, redacted when asked, capped, escaped. */
static void w_str(struct moat_buf *out, const char *s, size_t n, bool redact, size_t cap)
{
	struct moat_buf t = MOAT_BUF_INIT;

	/* the usual field is clean already and under the cap: clean_field
	 * would hand it back unchanged (redacted when asked), without the
	 * copies */
	if (s && n <= cap && moat_utf8_valid(s, n)) {
		if (!redact) {
			moat_buf_json_str(out, s, n);
			return;
		}
		if (moat_redact(s, n, &t) == 0 && !t.oom && t.len <= cap &&
		    moat_utf8_valid(t.data ? t.data : "", t.len)) {
			moat_buf_json_str(out, t.data ? t.data : "", t.len);
			moat_buf_release(&t);
			return;
		}
		moat_buf_release(&t);
	}
	if (clean_field(s, n, redact, cap, &t) < 0)
		out->oom = true;
	else
		moat_buf_json_str(out, t.data ? t.data : "", t.len);
	moat_buf_release(&t);
}

/* key: one of the record's own names (plain ASCII, nothing to escape) */
static void w_key(struct moat_buf *out, bool *first, const char *key)
{
	char tmp[40];
	size_t n = strlen(key), k = 0;

	if (n + 4 > sizeof(tmp)) {
		if (!*first)
			moat_buf_putc(out, ',');
		*first = false;
		moat_buf_json_str(out, key, n);
		moat_buf_putc(out, ':');
		return;
	}
	if (!*first)
		tmp[k++] = ',';
	*first = false;
	tmp[k++] = '"';
	memcpy(tmp + k, key, n);
	k += n;
	tmp[k++] = '"';
	tmp[k++] = ':';
	moat_buf_append(out, tmp, k);
}

static void w_kstr(struct moat_buf *out, bool *first, const char *key, const char *s, bool redact,
		   size_t cap)
{
	if (!s)
		return;
	w_key(out, first, key);
	w_str(out, s, strlen(s), redact, cap);
}

/* A real as jansson writes it with JSON_REAL_PRECISION(15): %.15g, a ".0"
 * when it would read back as an integer, no '+' or leading zeros in the
 * exponent. */
static void w_real(struct moat_buf *out, double v)
{
	char buf[64], fixed[64];
	size_t o = 0;

	if (!isfinite(v))
		v = 0;
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (!strchr(buf, '.') && !strchr(buf, 'e'))
		moat_strlcpy(buf + strlen(buf), ".0", sizeof(buf) - strlen(buf));
	for (size_t i = 0; buf[i] && o + 1 < sizeof(fixed); i++) {
		if (buf[i] == 'e') {
			fixed[o++] = 'e';
			i++;
			if (buf[i] == '-')
				fixed[o++] = '-';
			else if (buf[i] != '+')
				i--;
			while (buf[i + 1] == '0' && buf[i + 2])
				i++;
			continue;
		}
		fixed[o++] = buf[i];
	}
	fixed[o] = '\0';
	moat_buf_puts(out, fixed);
}

/* A duration in ms rounded to the microsecond, as w_real writes it: a
 * value of at most 15 significant digits comes back from %.15g as that
 * decimal, trailing zeros dropped (".0" when nothing is left). */
static void w_ms(struct moat_buf *out, double ms)
{
	double us = round(ms * 1000.0);
	long long k;
	char tmp[8];
	size_t n;
	int frac;

	if (!(us >= 0 && us < 1e14)) {
		w_real(out, us / 1000.0);
		return;
	}
	k = (long long)us;
	frac = (int)(k % 1000);
	moat_buf_put_llong(out, k / 1000);
	n = 0;
	tmp[n++] = '.';
	tmp[n++] = (char)('0' + frac / 100);
	if (frac % 100) {
		tmp[n++] = (char)('0' + frac / 10 % 10);
		if (frac % 10)
			tmp[n++] = (char)('0' + frac % 10);
	}
	moat_buf_append(out, tmp, n);
}

/* copy_redacted(), written directly. */
static void w_value(struct moat_buf *out, json_t *v, unsigned depth, const char *key,
		    size_t key_len, size_t cap)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		size_t klen;
		json_t *val;
		bool first = true;

		if (depth > MOAT_JSON_MAX_DEPTH) {
			moat_buf_puts(out, "\"[nested too deep]\"");
			return;
		}
		moat_buf_putc(out, '{');
		json_object_keylen_foreach(v, k, klen, val) {
			if (!first)
				moat_buf_putc(out, ',');
			first = false;
			w_str(out, k, klen, false, cap);
			moat_buf_putc(out, ':');
			w_value(out, val, depth + 1, k, klen, cap);
		}
		moat_buf_putc(out, '}');
		return;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *val;

		if (depth > MOAT_JSON_MAX_DEPTH) {
			moat_buf_puts(out, "\"[nested too deep]\"");
			return;
		}
		moat_buf_putc(out, '[');
		json_array_foreach(v, i, val) {
			if (i)
				moat_buf_putc(out, ',');
			w_value(out, val, depth + 1, key, key_len, cap);
		}
		moat_buf_putc(out, ']');
		return;
	}
	case JSON_STRING:
		if (secret_key(key, key_len)) {
			moat_buf_json_str(out, MOAT_REDACTED, strlen(MOAT_REDACTED));
			return;
		}
		w_str(out, json_string_value(v), json_string_length(v), true, cap);
		return;
	case JSON_INTEGER:
		moat_buf_put_llong(out, json_integer_value(v));
		return;
	case JSON_REAL:
		w_real(out, json_real_value(v));
		return;
	case JSON_TRUE:
		moat_buf_puts(out, "true");
		return;
	case JSON_FALSE:
		moat_buf_puts(out, "false");
		return;
	case JSON_NULL:
		moat_buf_puts(out, "null");
		return;
	}
	moat_buf_puts(out, "null");
}

/* The sandbox's description, redacted like the rest. A session's calls
 * mostly run in the same sandbox: the last one's text is kept, and the
 * same description is not parsed and redacted again (the redaction is a
 * function of the text alone). */
static pthread_mutex_t sandbox_memo_lock = PTHREAD_MUTEX_INITIALIZER;
static char *sandbox_memo_in, *sandbox_memo_out;
static size_t sandbox_memo_len;

static void w_sandbox(struct moat_buf *out, const char *sandbox_json, size_t cap)
{
	size_t len = strlen(sandbox_json);
	struct moat_buf b = MOAT_BUF_INIT;
	json_t *sj = NULL;

	pthread_mutex_lock(&sandbox_memo_lock);
	if (sandbox_memo_in && !strcmp(sandbox_memo_in, sandbox_json)) {
		moat_buf_append(out, sandbox_memo_out, sandbox_memo_len);
		pthread_mutex_unlock(&sandbox_memo_lock);
		return;
	}
	pthread_mutex_unlock(&sandbox_memo_lock);
	if (moat_json_parse(sandbox_json, len, "sandbox", MOAT_AUDIT_MAX_RECORD,
			    MOAT_JSON_MAX_DEPTH, &sj, NULL) == 0) {
		w_value(&b, sj, 1, NULL, 0, cap);
		json_decref(sj);
	} else {
		w_str(&b, sandbox_json, len, true, cap);
	}
	if (b.oom) {
		moat_buf_release(&b);
		out->oom = true;
		return;
	}
	moat_buf_append(out, b.data, b.len);
	pthread_mutex_lock(&sandbox_memo_lock);
	{
		char *in = moat_strdup(sandbox_json);

		if (in) {
			free(sandbox_memo_in);
			free(sandbox_memo_out);
			sandbox_memo_in = in;
			sandbox_memo_out = b.data; /* taken over */
			sandbox_memo_len = b.len;
			b.data = NULL;
		}
	}
	pthread_mutex_unlock(&sandbox_memo_lock);
	moat_buf_release(&b);
}

static int write_fast(const struct moat_audit_record *r, const char *now, struct moat_buf *out)
{
	size_t cap = MOAT_AUDIT_MAX_FIELD;
	bool first = true;

	moat_buf_reserve(out, 1024);
	moat_buf_putc(out, '{');
	w_key(out, &first, "time");
	moat_buf_json_str(out, now, strlen(now));
	w_kstr(out, &first, "call_id", r->call_id, false, cap);
	w_kstr(out, &first, "source", r->source, false, cap);
	w_kstr(out, &first, "tool", r->tool, false, cap);
	if (r->args) {
		w_key(out, &first, "args");
		w_value(out, r->args, 1, NULL, 0, cap);
	}
	w_kstr(out, &first, "command", r->command, true, cap);
	if (r->decision) {
		const struct moat_decision *d = r->decision;
		bool f2 = true;

		w_key(out, &first, "decision");
		moat_buf_putc(out, '{');
		w_key(out, &f2, "verdict");
		moat_buf_putc(out, '"');
		moat_buf_puts(out, moat_verdict_name(d->verdict));
		moat_buf_putc(out, '"');
		w_kstr(out, &f2, "rule", d->rule, false, cap);
		w_kstr(out, &f2, "reason", d->reason, true, cap);
		w_key(out, &f2, "hard");
		moat_buf_puts(out, d->hard ? "true}" : "false}");
	}
	if (r->final) {
		w_kstr(out, &first, "final", r->final, false, cap);
	} else if (r->decision) {
		w_key(out, &first, "final");
		moat_buf_putc(out, '"');
		moat_buf_puts(out, moat_verdict_name(r->decision->verdict));
		moat_buf_putc(out, '"');
	}
	if (r->approval_by || r->approval_answer) {
		bool f2 = true;

		w_key(out, &first, "approval");
		moat_buf_putc(out, '{');
		w_kstr(out, &f2, "by", r->approval_by, false, cap);
		w_kstr(out, &f2, "answer", r->approval_answer, false, cap);
		moat_buf_putc(out, '}');
	}
	if (r->nexempt_paths && r->exempt_paths) {
		bool f2 = true;

		w_key(out, &first, "exempt_paths");
		moat_buf_putc(out, '[');
		for (size_t i = 0; i < r->nexempt_paths; i++) {
			if (!r->exempt_paths[i])
				continue;
			if (!f2)
				moat_buf_putc(out, ',');
			f2 = false;
			w_str(out, r->exempt_paths[i], strlen(r->exempt_paths[i]), false, cap);
		}
		moat_buf_putc(out, ']');
	}
	if (r->sandbox_json) {
		w_key(out, &first, "sandbox");
		w_sandbox(out, r->sandbox_json, cap);
	}
	if (r->has_result) {
		double ms = r->duration_ms;
		bool f2 = true;

		if (!isfinite(ms) || ms < 0)
			ms = 0;
		w_key(out, &first, "result");
		moat_buf_putc(out, '{');
		w_key(out, &f2, "ok");
		moat_buf_puts(out, r->ok ? "true" : "false");
		w_key(out, &f2, "exit_code");
		if (r->exit_code >= 0)
			moat_buf_put_llong(out, r->exit_code);
		else
			moat_buf_puts(out, "null");
		w_key(out, &f2, "signal");
		if (r->signal > 0)
			moat_buf_put_llong(out, r->signal);
		else
			moat_buf_puts(out, "null");
		w_key(out, &f2, "timed_out");
		moat_buf_puts(out, r->timed_out ? "true" : "false");
		w_key(out, &f2, "cancelled");
		moat_buf_puts(out, r->cancelled ? "true" : "false");
		w_key(out, &f2, "duration_ms");
		w_ms(out, ms);
		w_key(out, &f2, "bytes_out");
		moat_buf_put_llong(out, r->bytes_out > (size_t)INT64_MAX ? (json_int_t)INT64_MAX
							    : (json_int_t)r->bytes_out);
		moat_buf_putc(out, '}');
	}
	w_kstr(out, &first, "error", r->error, true, cap);
	moat_buf_puts(out, "}\n");
	return out->oom ? -ENOMEM : 0;
}

/* ---- secrets of the arguments elsewhere in the record ---- */

#define SCRUB_MAX 32 /* secrets remembered per record */

struct scrub {
	char *v[SCRUB_MAX];
	size_t n;
};

/* The spans the redactor hid in s: between the pieces of its output that
 * the markers separate (each piece is kept text of s, in order). */
static void scrub_collect_str(struct scrub *sc, const char *s)
{
	static const char mark[] = MOAT_REDACTED;
	struct moat_buf red = MOAT_BUF_INIT;
	const char *o, *pos = s;

	if (moat_redact(s, strlen(s), &red) < 0 || red.oom || !red.data ||
	    !strstr(red.data, mark)) {
		moat_buf_release(&red);
		return;
	}
	o = red.data;
	for (;;) {
		const char *m = strstr(o, mark), *next, *at;
		size_t kl = m ? (size_t)(m - o) : strlen(o);

		/* the kept piece [o, o+kl) is at pos */
		if (strncmp(pos, o, kl))
			break; /* not a plain substitution: nothing learned */
		pos += kl;
		if (!m)
			break;
		o = m + sizeof(mark) - 1;
		next = strstr(o, mark);
		{
			size_t nl = next ? (size_t)(next - o) : strlen(o);
			char piece[256];

			/* the secret ends where the next kept piece starts */
			if (nl == 0 || nl >= sizeof(piece)) {
				at = nl == 0 && !next ? pos + strlen(pos) : NULL;
			} else {
				memcpy(piece, o, nl);
				piece[nl] = '\0';
				at = strstr(pos + 1, piece);
				if (!next && at) /* the last piece ends the text */
					at = strlen(pos) >= nl ? pos + strlen(pos) - nl : NULL;
			}
		}
		if (!at || at <= pos)
			break;
		if (at - pos >= 4 && sc->n < SCRUB_MAX)
			sc->v[sc->n++] = moat_strndup(pos, (size_t)(at - pos));
		pos = at;
	}
	moat_buf_release(&red);
}

static void scrub_collect(struct scrub *sc, const json_t *v, int depth)
{
	const char *k;
	json_t *x;
	size_t i;

	if (depth > 8)
		return;
	if (json_is_string(v))
		scrub_collect_str(sc, json_string_value(v));
	else if (json_is_object(v))
		json_object_foreach((json_t *)v, k, x) scrub_collect(sc, x, depth + 1);
	else if (json_is_array(v))
		json_array_foreach(v, i, x) scrub_collect(sc, x, depth + 1);
}

/* text with every secret of sc replaced by the marker (the longest first
 * where two start at the same place); NULL when unchanged. */
static char *scrub_text(const struct scrub *sc, const char *text)
{
	struct moat_buf b = MOAT_BUF_INIT;
	bool changed = false;
	const char *p = text;

	while (*p) {
		size_t best = 0;

		for (size_t i = 0; i < sc->n; i++) {
			size_t l = sc->v[i] ? strlen(sc->v[i]) : 0;

			if (l > best && !strncmp(p, sc->v[i], l))
				best = l;
		}
		if (best) {
			moat_buf_puts(&b, MOAT_REDACTED);
			p += best;
			changed = true;
		} else {
			moat_buf_putc(&b, *p++);
		}
	}
	if (!changed || b.oom) {
		moat_buf_release(&b);
		return NULL;
	}
	return moat_buf_steal(&b);
}

static char *format_record(const struct moat_audit_record *r, size_t *ret_len);

/* SECURITY: a secret of the arguments (a URL's password) can come back in
 * another field, the error above all ("... https:/user:PW@host/x does not
 * exist", where the collapsed "//" keeps the redactor from seeing a URL):
 * what the redactor hid in the arguments is hidden wherever it appears. */
char *moat_audit_format(const struct moat_audit_record *r, size_t *ret_len)
{
	struct moat_audit_record copy;
	struct scrub sc = {{NULL}, 0};
	char *err2 = NULL, *line;

	if (r && r->args && r->error)
		scrub_collect(&sc, r->args, 0);
	if (sc.n && (err2 = scrub_text(&sc, r->error))) {
		copy = *r;
		copy.error = err2;
		r = &copy;
	}
	line = format_record(r, ret_len);
	free(err2);
	for (size_t i = 0; i < sc.n; i++)
		free(sc.v[i]);
	return line;
}

static char *format_record(const struct moat_audit_record *r, size_t *ret_len)
{
	char now[64];

	if (!r || !ret_len || format_time(now, sizeof(now)) < 0)
		return NULL;
	{
		struct moat_buf b = MOAT_BUF_INIT;

		if (write_fast(r, now, &b) < 0) {
			moat_buf_release(&b);
			return NULL;
		}
		/* SECURITY: one record, one line (the escaper writes no raw
		 * newline; this keeps it true whatever changes) */
		if (b.len <= MOAT_AUDIT_MAX_RECORD && !memchr(b.data, '\r', b.len) &&
		    memchr(b.data, '\n', b.len) == b.data + b.len - 1) {
			*ret_len = b.len;
			return moat_buf_steal(&b);
		}
		moat_buf_release(&b);
	}
	for (enum stage s = STAGE_NO_ARGS; s <= STAGE_SMALL; s++) {
		json_t *o = build(r, now, s);
		char *line, *grown;
		size_t len;

		if (!o)
			return NULL;
		line = json_dumps(o, AUDIT_DUMP_FLAGS);
		json_decref(o);
		if (!line)
			return NULL;
		len = strlen(line);
		/* SECURITY: one record, one line. jansson escapes control
		 * characters inside strings and JSON_COMPACT puts no newline
		 * between tokens; this check keeps it true whatever changes. */
		if (memchr(line, '\n', len) || memchr(line, '\r', len)) {
			free(line);
			return NULL;
		}
		if (len + 1 > MOAT_AUDIT_MAX_RECORD) {
			free(line);
			continue;
		}
		grown = realloc(line, len + 2);
		if (!grown) {
			free(line);
			return NULL;
		}
		grown[len] = '\n';
		grown[len + 1] = '\0';
		*ret_len = len + 1;
		return grown;
	}
	return NULL;
}

/* ---- the file ---- */

static const char *cause(int e, char *buf, size_t bufsz)
{
	switch (e) {
	case ENOSPC:
		return "disk full";
	case EDQUOT:
		return "disk quota exceeded";
	case EACCES:
	case EPERM:
		return "permission denied";
	case EROFS:
		return "read-only file system";
	case ELOOP:
		return "the path is a symbolic link (refused)";
	case EFBIG:
		return "file too large";
	case ENOENT:
		return "no such directory";
	case EISDIR:
		return "is a directory";
	default:
		return moat_strerror(e, buf, bufsz);
	}
}

/* mkdir -p of the directories above path, each new one 0700. */
static int make_parents(const char *path)
{
	char p[4096];
	size_t n = moat_strlcpy(p, path, sizeof(p));

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	for (size_t i = 1; i < n; i++) {
		struct stat st;

		if (p[i] != '/')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0700) < 0) {
			int e = errno;

			if (e != EEXIST)
				return -e;
			if (stat(p, &st) < 0)
				return -errno;
			if (!S_ISDIR(st.st_mode))
				return -ENOTDIR;
		}
		p[i] = '/';
	}
	return 0;
}


int moat_audit_open(const struct moat_audit_opts *o, struct moat_audit **ret,
		    struct moat_error *err)
{
	char def[4096], ebuf[128];
	const char *path = o ? o->path : NULL;
	struct moat_audit *a;
	struct stat st;
	size_t plen;
	int fd, r, fl;

	if (!ret)
		return -EINVAL;
	if (path && !path[0]) {
		moat_error_set(err, "the audit log path is empty");
		return -EINVAL;
	}
	if (!path) {
		r = moat_audit_default_path(def, sizeof(def));
		if (r < 0) {
			moat_error_set(err, "no place for the audit log: set XDG_STATE_HOME or "
					    "HOME, or give audit_log");
			return r;
		}
		path = def;
		r = make_parents(path);
		if (r < 0) {
			moat_error_set(err,
				       "cannot create the directory of the audit log '%.400s': %s",
				       path, cause(-r, ebuf, sizeof(ebuf)));
			return r;
		}
	}
	if (!strcmp(path, "-")) {
		fd = STDERR_FILENO;
		if (fstat(fd, &st) < 0) {
			r = -errno;
			moat_error_set(err, "cannot use standard error for the audit log: %s",
				       cause(-r, ebuf, sizeof(ebuf)));
			return r;
		}
	} else {
		/* SECURITY: O_NOFOLLOW: a symbolic link planted at the log path
		 * cannot redirect the records (or the append) elsewhere.
		 * O_NONBLOCK only so that opening a FIFO cannot hang; it is
		 * refused below and cleared for the file. */
		fd = open(path,
			  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY |
			      O_NONBLOCK,
			  0600);
		if (fd < 0) {
			r = -errno;
			if (r == -ENXIO)
				r = -EINVAL;
			moat_error_set(err, "cannot open the audit log '%.400s': %s", path,
				       r == -EINVAL ? "not a regular file"
						    : cause(-r, ebuf, sizeof(ebuf)));
			return r;
		}
		if (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
			close(fd);
			moat_error_set(
			    err, "cannot open the audit log '%.400s': not a regular file", path);
			return -EINVAL;
		}
		fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
			r = -errno;
			close(fd);
			moat_error_set(err, "cannot open the audit log '%.400s': %s", path,
				       cause(-r, ebuf, sizeof(ebuf)));
			return r;
		}
	}
	plen = strlen(path);
	a = calloc(1, sizeof(*a) + plen + 1);
	if (!a) {
		if (fd != STDERR_FILENO)
			close(fd);
		moat_error_set(err, "out of memory");
		return -ENOMEM;
	}
	memcpy(a->path, path, plen + 1);
	a->fd = fd;
	a->is_stderr = fd == STDERR_FILENO;
	a->regular = S_ISREG(st.st_mode);
	a->fsync = o && o->fsync;
	a->required = o ? o->required : true;
	a->syslog = o && o->syslog;
	atomic_init(&a->room, 0);
	atomic_init(&a->checked_ms, 0);
	*ret = a;
	return 0;
}

struct moat_audit *moat_audit_close(struct moat_audit *a)
{
	if (!a)
		return NULL;
	if (!a->is_stderr)
		close(a->fd);
	free(a);
	return NULL;
}

const char *moat_audit_path(const struct moat_audit *a)
{
	return a ? a->path : NULL;
}

int moat_audit_real_path(const struct moat_audit *a, char *out, size_t outsz)
{
	char proc[64];
	ssize_t n;

	if (!a || a->is_stderr || a->fd < 0 || outsz < 2)
		return -ENOENT;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", a->fd);
	n = readlink(proc, out, outsz - 1);
	if (n <= 0 || (size_t)n >= outsz - 1 || out[0] != '/')
		return -ENOENT;
	out[n] = '\0';
	return 0;
}

bool moat_audit_required(const struct moat_audit *a)
{
	return a ? a->required : true;
}

static long long coarse_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	/* never 0: that means "never looked" */
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1;
}

int moat_audit_ready(struct moat_audit *a, struct moat_error *err)
{
	struct statvfs sv;
	unsigned long long avail;
	long long now, last;
	char ebuf[128];

	if (!a) {
		moat_error_set(err, "no audit log");
		return -EINVAL;
	}
	/* a device (/dev/null, /dev/full) or stderr: the write itself decides */
	if (a->is_stderr || !a->regular)
		return 0;
	/* An early refusal only: the write decides in the end (a failed or
	 * short write fails the call closed). So the file system is asked
	 * again only when the space seen last, less what was written since,
	 * may be near the margin, or after a while. */
	now = coarse_ms();
	last = atomic_load(&a->checked_ms);
	if (last && now - last < AUDIT_RECHECK_MS && now >= last &&
	    atomic_load(&a->room) >= AUDIT_RECHECK_ROOM)
		return 0;
	if (fstatvfs(a->fd, &sv) < 0) {
		int e = errno;

		atomic_store(&a->checked_ms, 0);
		moat_error_set(err, "cannot check the audit log '%.400s': %s", a->path,
			       cause(e, ebuf, sizeof(ebuf)));
		return -e;
	}
	/* a file system that reports no sizes (some network and FUSE ones) */
	if (sv.f_blocks == 0) {
		atomic_store(&a->room, LLONG_MAX / 2);
		atomic_store(&a->checked_ms, now);
		return 0;
	}
	/* f_bavail, not f_bfree: blocks reserved for root are not counted on */
	avail = (unsigned long long)sv.f_bavail * (sv.f_frsize ? sv.f_frsize : sv.f_bsize);
	atomic_store(&a->room, avail > (unsigned long long)(LLONG_MAX / 2) ? LLONG_MAX / 2
									   : (long long)avail);
	atomic_store(&a->checked_ms, now);
	if (avail < MOAT_AUDIT_MAX_RECORD) {
		moat_error_set(err,
			       "cannot write the audit log '%.400s': disk full (%llu bytes free, a "
			       "record may need %u)",
			       a->path, avail, MOAT_AUDIT_MAX_RECORD);
		return -ENOSPC;
	}
	return 0;
}

/* The syslog copy is best effort: a datagram socket may drop it anyway, and
 * the file is the record of truth. A record too long for one datagram is
 * replaced by a short one without the arguments, command and sandbox. */
static void send_syslog(const struct moat_audit_record *r, const char *line, size_t len)
{
	const char *fin = r->final	? r->final
			  : r->decision ? moat_verdict_name(r->decision->verdict)
					: "";
	int sev = !strcmp(fin, "deny") ? LOG_WARNING : LOG_INFO;
	struct moat_audit_record small;
	char *l2;
	size_t len2;

	if (moat_syslog_send(line, len, sev) != -EMSGSIZE)
		return;
	small = *r;
	small.args = NULL;
	small.command = NULL;
	small.sandbox_json = NULL;
	l2 = moat_audit_format(&small, &len2);
	if (l2)
		moat_syslog_send(l2, len2, sev);
	free(l2);
}

static int write_line(struct moat_audit *a, const char *line, size_t len, struct moat_error *err)
{
	char ebuf[128];
	ssize_t n;

	do
		n = write(a->fd, line, len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int e = errno;

		moat_error_set(err, "cannot write the audit log '%.400s': %s", a->path,
			       cause(e, ebuf, sizeof(ebuf)));
		return -e;
	}
	if ((size_t)n != len) {
		/* Not retried: with O_APPEND and other writers the rest would
		 * land after someone else's record. The partial line stays (it
		 * cannot be cut back safely) and the reader reports it. */
		struct statvfs sv;
		bool full = fstatvfs(a->fd, &sv) == 0 && sv.f_bavail == 0;

		moat_error_set(
		    err,
		    "cannot write the audit log '%.400s': short write (%zd of %zu bytes)%s; "
		    "the last line is incomplete",
		    a->path, n, len, full ? ": disk full" : "");
		return full ? -ENOSPC : -EIO;
	}
	if (a->fsync && a->regular && fsync(a->fd) < 0) {
		int e = errno;

		moat_error_set(err, "cannot sync the audit log '%.400s': %s", a->path,
			       cause(e, ebuf, sizeof(ebuf)));
		return -e;
	}
	return 0;
}

int moat_audit_write(struct moat_audit *a, const struct moat_audit_record *r,
		     struct moat_error *err)
{
	char *line;
	size_t len;
	int ret;

	if (!a || !r) {
		moat_error_set(err, "no audit log or no record");
		return -EINVAL;
	}
	line = moat_audit_format(r, &len);
	if (!line) {
		moat_error_set(err, "cannot format the audit record: out of memory");
		return -ENOMEM;
	}
	ret = write_line(a, line, len, err);
	/* what moat_audit_ready counts on; a failure makes it look again */
	if (ret < 0)
		atomic_store(&a->room, 0);
	else
		atomic_fetch_sub(&a->room, (long long)len);
	/* also when the file failed: one more place the record may survive */
	if (a->syslog)
		send_syslog(r, line, len);
	free(line);
	return ret;
}
