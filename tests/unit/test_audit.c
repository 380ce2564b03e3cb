/* The audit log: the record format field by field (redaction of arguments,
 * command, reason and error; caps at their boundaries; no raw newline
 * whatever the input), the writer's file handling (default path and modes,
 * symlinks, FIFOs, read-only files, /dev/full, a full tmpfs with a short
 * write, the free-space check between two looks at the disk, stderr), 8 concurrent writers as threads and as processes with
 * every line checked from the bytes on disk, the syslog datagram on a
 * socket the test binds itself, the reader's filters and bad lines, and the
 * time parser. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "sandbox/sandbox.h"
#include "base/json.h"
#include "base/str.h"
#include "core/redact.h"
#include "tap.h"

static char tmp[256];

static char *path_in(const char *name)
{
	static char bufs[8][512];
	static int k;
	char *b = bufs[k++ % 8];

	snprintf(b, 512, "%s/%s", tmp, name);
	return b;
}

static json_t *parse(const char *line, size_t len)
{
	json_t *j = NULL;

	if (moat_json_parse(line, len, "line", MOAT_AUDIT_MAX_RECORD, MOAT_AUDIT_MAX_DEPTH, &j,
			    NULL) < 0)
		return NULL;
	return j;
}

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static char *slurp(const char *path, size_t *ret_len)
{
	struct moat_buf b = MOAT_BUF_INIT;
	char chunk[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return NULL;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		moat_buf_append(&b, chunk, (size_t)n);
	close(fd);
	*ret_len = b.len;
	return b.data ? moat_buf_steal(&b) : moat_strdup("");
}

static struct moat_decision mkdec(enum moat_verdict v, const char *rule, const char *reason)
{
	struct moat_decision d = {.verdict = v, .hard = false};

	moat_strlcpy(d.rule, rule, sizeof(d.rule));
	moat_strlcpy(d.reason, reason, sizeof(d.reason));
	return d;
}

/* ---- format ---- */

#define BEARER "abcdef0123456789abcdef0123456789XYZ"
#define SKKEY "sk-proj-Zx81KfPq02LmNcRt55VwYa9B"

static const char *const exempt_two[] = {"**/test/certs/*.pem", "/home/u/f\".pem"};

static void test_format_full(void)
{
	struct moat_decision d = mkdec(MOAT_ASK, "ask:bash",
				       "bash asks: curl -H 'Authorization: "
				       "Bearer " BEARER "'");
	json_t *args =
	    json_pack("{s:s, s:s, s:{s:[s, i, f, b, n]}, s:s, s:s, s:s, s:s, s:i, s:s}", "command",
		      "curl -H 'Authorization: Bearer " BEARER "' https://example.com", "key",
		      SKKEY, "nested", "list", "token=hunter2secret", 5, 1.5, 1, "password",
		      "hunter2", "multi", "line1\nline2\r\nend", "apiKey", "plainvalue1",
		      "GITHUB_TOKEN", "plainvalue2", "max_tokens", 100, "tokens", "keep-me");
	struct moat_audit_record r = {
	    .call_id = "c1",
	    .source = "tool",
	    .tool = "bash",
	    .args = args,
	    .command = "OPENAI_API_KEY=" SKKEY " curl -H 'Authorization: Bearer " BEARER
		       "' x\nsecond line",
	    .decision = &d,
	    .final = "allow",
	    .approval_by = "tty",
	    .approval_answer = "approved",
	    .sandbox_json = "{\"requested\":{\"network\":\"deny\"},\"enforced\":{\"landlock\":"
			    "true,\"abi\":4},\"limits\":{\"memory_mb\":512}}",
	    .exempt_paths = exempt_two,
	    .nexempt_paths = 2,
	    .has_result = true,
	    .ok = true,
	    .exit_code = 0,
	    .signal = 0,
	    .duration_ms = 12.345678,
	    .bytes_out = 42,
	    .error = NULL,
	};
	size_t len = 0;
	char *line = moat_audit_format(&r, &len);
	json_t *j, *a, *dj, *res, *sb;
	const char *t;

	CHECK(line != NULL);
	if (!line)
		return;
	CHECK_INT(len, strlen(line));
	CHECK(len > 0 && line[len - 1] == '\n');
	CHECKF(memchr(line, '\n', len - 1) == NULL, "format: no raw newline inside the record");
	CHECKF(memchr(line, '\r', len) == NULL, "format: no raw CR");
	CHECKF(strstr(line, BEARER) == NULL, "format: the Bearer token appears nowhere");
	CHECKF(strstr(line, SKKEY) == NULL, "format: the sk- key appears nowhere");
	CHECKF(strstr(line, "hunter2") == NULL, "format: password values appear nowhere");
	CHECKF(strstr(line, "plainvalue") == NULL, "format: values under secret keys are hidden");
	j = parse(line, len - 1);
	CHECK(j != NULL && json_is_object(j));
	if (!j) {
		free(line);
		json_decref(args);
		return;
	}
	t = jstr(j, "time");
	CHECKF(t && strlen(t) == 24 && t[4] == '-' && t[10] == 'T' && t[19] == '.' && t[23] == 'Z',
	       "time is RFC 3339 UTC with ms (%s)", t ? t : "null");
	double tm;
	CHECK(t && moat_audit_parse_time(t, 0, &tm) == 0 && tm > 1.7e12);
	CHECK_STR(jstr(j, "call_id"), "c1");
	CHECK_STR(jstr(j, "source"), "tool");
	CHECK_STR(jstr(j, "tool"), "bash");
	a = json_object_get(j, "args");
	CHECK(json_is_object(a));
	CHECK_INT(json_object_size(a), 9);
	CHECK(strstr(jstr(a, "command"), "Bearer " MOAT_REDACTED) != NULL);
	CHECK(strstr(jstr(a, "command"), "https://example.com") != NULL);
	CHECK_STR(jstr(a, "key"), MOAT_REDACTED);
	CHECK_STR(jstr(a, "password"), MOAT_REDACTED);
	CHECK_STR(jstr(a, "apiKey"), MOAT_REDACTED);
	CHECK_STR(jstr(a, "GITHUB_TOKEN"), MOAT_REDACTED);
	CHECK_STR(jstr(a, "multi"), "line1\nline2\r\nend");
	CHECK_INT(json_integer_value(json_object_get(a, "max_tokens")), 100);
	CHECK_STR(jstr(a, "tokens"), "keep-me");
	{
		json_t *l = json_object_get(json_object_get(a, "nested"), "list");

		CHECK(json_is_array(l) && json_array_size(l) == 5);
		CHECK_STR(json_string_value(json_array_get(l, 0)), "token=" MOAT_REDACTED);
		CHECK_INT(json_integer_value(json_array_get(l, 1)), 5);
		CHECK(json_real_value(json_array_get(l, 2)) == 1.5);
		CHECK(json_is_true(json_array_get(l, 3)));
		CHECK(json_is_null(json_array_get(l, 4)));
	}
	t = jstr(j, "command");
	CHECK(t && strstr(t, "OPENAI_API_KEY=" MOAT_REDACTED) && strstr(t, "\nsecond line"));
	dj = json_object_get(j, "decision");
	CHECK_STR(jstr(dj, "verdict"), "ask");
	CHECK_STR(jstr(dj, "rule"), "ask:bash");
	CHECK(jstr(dj, "reason") && strstr(jstr(dj, "reason"), "Bearer " MOAT_REDACTED));
	CHECK(json_is_false(json_object_get(dj, "hard")));
	CHECK_STR(jstr(j, "final"), "allow");
	CHECK_STR(jstr(json_object_get(j, "approval"), "by"), "tty");
	CHECK_STR(jstr(json_object_get(j, "approval"), "answer"), "approved");
	sb = json_object_get(j, "sandbox");
	CHECKF(json_is_object(sb), "sandbox is embedded as an object, not a string");
	CHECK_STR(jstr(json_object_get(sb, "requested"), "network"), "deny");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(sb, "enforced"), "abi")), 4);
	{
		json_t *ex = json_object_get(j, "exempt_paths");

		CHECK(json_is_array(ex) && json_array_size(ex) == 2);
		CHECK_STR(json_string_value(json_array_get(ex, 0)), "**/test/certs/*.pem");
		CHECK_STR(json_string_value(json_array_get(ex, 1)), "/home/u/f\".pem");
		CHECK(strstr(line, "\"approval\"") < strstr(line, "\"exempt_paths\"") &&
		      strstr(line, "\"exempt_paths\"") < strstr(line, "\"sandbox\""));
	}
	res = json_object_get(j, "result");
	CHECK(json_is_true(json_object_get(res, "ok")));
	CHECK_INT(json_integer_value(json_object_get(res, "exit_code")), 0);
	CHECK(json_is_null(json_object_get(res, "signal")));
	CHECK(json_is_false(json_object_get(res, "timed_out")));
	CHECK(json_is_false(json_object_get(res, "cancelled")));
	CHECK(json_real_value(json_object_get(res, "duration_ms")) == 12.346);
	CHECKF(strstr(line, "\"duration_ms\":12.346,") != NULL, "duration written as 12.346");
	CHECK_INT(json_integer_value(json_object_get(res, "bytes_out")), 42);
	CHECK(json_object_get(j, "error") == NULL);
	/* the order of the fields is the documented one */
	CHECK(strncmp(line, "{\"time\":", 8) == 0);
	CHECK(strstr(line, "\"call_id\"") < strstr(line, "\"tool\"") &&
	      strstr(line, "\"tool\"") < strstr(line, "\"args\"") &&
	      strstr(line, "\"decision\"") < strstr(line, "\"final\"") &&
	      strstr(line, "\"final\"") < strstr(line, "\"result\""));
	json_decref(j);
	free(line);
	json_decref(args);
}

static void test_format_minimal(void)
{
	struct moat_decision d = mkdec(MOAT_DENY, "hardline:rm-root", "never");
	struct moat_audit_record r = {.tool = "bash", .decision = &d, .exit_code = -1};
	size_t len;
	char *line = moat_audit_format(&r, &len);
	json_t *j = line ? parse(line, len - 1) : NULL;

	CHECK(j != NULL);
	CHECK_STR(jstr(j, "final"), "deny");
	CHECK(json_object_get(j, "call_id") == NULL && json_object_get(j, "args") == NULL &&
	      json_object_get(j, "command") == NULL && json_object_get(j, "approval") == NULL &&
	      json_object_get(j, "sandbox") == NULL && json_object_get(j, "result") == NULL &&
	      json_object_get(j, "error") == NULL);
	CHECK_INT(json_object_size(j), 4);
	json_decref(j);
	free(line);

	/* a result without an exit code or with a signal */
	r.has_result = true;
	r.exit_code = -1;
	r.signal = 9;
	r.timed_out = true;
	r.duration_ms = -5;
	r.error = "killed: token=abc123 leaked";
	r.sandbox_json = "{not json";
	line = moat_audit_format(&r, &len);
	j = line ? parse(line, len - 1) : NULL;
	CHECK(j != NULL);
	{
		json_t *res = json_object_get(j, "result");

		CHECK(json_is_null(json_object_get(res, "exit_code")));
		CHECK_INT(json_integer_value(json_object_get(res, "signal")), 9);
		CHECK(json_is_true(json_object_get(res, "timed_out")));
		CHECK(json_number_value(json_object_get(res, "duration_ms")) == 0);
	}
	CHECK_STR(jstr(j, "error"), "killed: token=" MOAT_REDACTED " leaked");
	CHECKF(json_is_string(json_object_get(j, "sandbox")) &&
		   !strcmp(jstr(j, "sandbox"), "{not json"),
	       "sandbox text that does not parse is kept as a string");
	json_decref(j);
	free(line);
	CHECK(moat_audit_format(NULL, &len) == NULL);
}

/* A string of exactly n bytes the redactor leaves alone. */
static char *plain(size_t n)
{
	char *s = malloc(n + 1);

	for (size_t i = 0; i < n; i++)
		s[i] = i % 2 ? ' ' : 'x';
	s[n] = '\0';
	return s;
}

static void test_format_caps(void)
{
	struct moat_decision d = mkdec(MOAT_ALLOW, "default", "ok");
	struct moat_audit_record r = {.tool = "read_file", .decision = &d};
	char *s = plain(MOAT_AUDIT_MAX_FIELD + 1), *line;
	size_t len;
	json_t *j, *args;

	/* the boundary: MAX_FIELD bytes stay, MAX_FIELD + 1 are cut */
	s[MOAT_AUDIT_MAX_FIELD] = '\0';
	r.error = s;
	line = moat_audit_format(&r, &len);
	j = line ? parse(line, len - 1) : NULL;
	CHECKF(j && strlen(jstr(j, "error")) == MOAT_AUDIT_MAX_FIELD &&
		   !strcmp(jstr(j, "error"), s),
	       "a field of exactly MOAT_AUDIT_MAX_FIELD bytes is kept whole");
	json_decref(j);
	free(line);
	s[MOAT_AUDIT_MAX_FIELD] = 'x';
	line = moat_audit_format(&r, &len);
	j = line ? parse(line, len - 1) : NULL;
	CHECKF(j && strlen(jstr(j, "error")) <= MOAT_AUDIT_MAX_FIELD &&
		   strstr(jstr(j, "error"), "...[truncated ") &&
		   strstr(jstr(j, "error"), " bytes]..."),
	       "a field of MOAT_AUDIT_MAX_FIELD + 1 bytes is cut with a marker");
	json_decref(j);
	free(line);
	free(s);

	/* SECURITY: the cut keeps the end (a command padded with a long
	 * comment must not have what it runs cut from the record) */
	{
		size_t n = MOAT_AUDIT_MAX_FIELD + 5000;
		char *c = malloc(n + 64);

		memset(c, '#', n);
		strcpy(c + n, "\ntouch HIDDEN_ACTION_RAN");
		r.error = c;
		line = moat_audit_format(&r, &len);
		j = line ? parse(line, len - 1) : NULL;
		CHECKF(j && strlen(jstr(j, "error")) <= MOAT_AUDIT_MAX_FIELD &&
			   moat_str_has_suffix(jstr(j, "error"), "\ntouch HIDDEN_ACTION_RAN") &&
			   !strncmp(jstr(j, "error"), "####", 4),
		       "a cut field keeps its start and its end");
		json_decref(j);
		free(line);
		free(c);
	}

	/* cutting never splits a character */
	{
		size_t n = MOAT_AUDIT_MAX_FIELD / 2 + 7;
		char *u = malloc(2 * n + 1);

		for (size_t i = 0; i < n; i++)
			memcpy(u + 2 * i, "\xc3\xa9", 2);
		u[2 * n] = '\0';
		r.error = u;
		line = moat_audit_format(&r, &len);
		j = line ? parse(line, len - 1) : NULL;
		CHECKF(j && strstr(jstr(j, "error"), "...[truncated "),
		       "a cut inside multi-byte text stays valid UTF-8");
		json_decref(j);
		free(line);
		free(u);
	}

	/* the record cap: 20 fields of 60 KB are over 1 MiB */
	args = json_object();
	s = plain(60000);
	for (int i = 0; i < 20; i++) {
		char k[16];

		snprintf(k, sizeof(k), "f%d", i);
		json_object_set_new(args, k, json_string(s));
	}
	r.args = args;
	r.error = "small";
	r.call_id = "big";
	r.exempt_paths = exempt_two;
	r.nexempt_paths = 2;
	line = moat_audit_format(&r, &len);
	CHECKF(line && len <= MOAT_AUDIT_MAX_RECORD, "an oversized record is shrunk under the cap");
	j = line ? parse(line, len - 1) : NULL;
	CHECKF(j && json_is_string(json_object_get(j, "args")) &&
		   strstr(jstr(j, "args"), "omitted"),
	       "the oversized arguments are replaced by a note");
	CHECK(j && !strcmp(jstr(j, "call_id"), "big") && !strcmp(jstr(j, "error"), "small"));
	CHECKF(j && json_array_size(json_object_get(j, "exempt_paths")) == 2 &&
		   !strcmp(json_string_value(json_array_get(json_object_get(j, "exempt_paths"), 1)),
			   "/home/u/f\".pem"),
	       "a shrunk record keeps its exempt_paths");
	json_decref(j);
	free(line);

	/* everything huge at once: still one line under the cap */
	{
		char *big = plain(200000);
		struct moat_audit_record h = r;
		struct moat_decision hd = d;

		h.call_id = h.source = h.tool = h.command = h.final = h.approval_by =
		    h.approval_answer = h.error = big;
		h.sandbox_json = big;
		h.decision = &hd;
		line = moat_audit_format(&h, &len);
		j = line ? parse(line, len - 1) : NULL;
		CHECKF(j && len <= MOAT_AUDIT_MAX_RECORD, "every field huge: still a record (%zu)",
		       line ? len : 0);
		json_decref(j);
		free(line);
		free(big);
	}
	json_decref(args);
	free(s);
}

/* SECURITY: a secret the redactor hid in the arguments stays hidden where
 * it comes back in the error (a path normalised from a URL is no URL to
 * the redactor) */
static void test_format_scrub(void)
{
	struct moat_decision d = mkdec(MOAT_ALLOW, "default", "ok");
	struct moat_audit_record r = {.tool = "read_file", .decision = &d};
	json_t *args = json_pack("{s:s}", "path", "https://admin:Sup3rS3cretPw@example.com/x");
	size_t len;
	char *line;
	json_t *j;

	r.args = args;
	r.error = "/w/https:/admin:Sup3rS3cretPw@example.com/x does not exist";
	line = moat_audit_format(&r, &len);
	j = line ? parse(line, len - 1) : NULL;
	CHECKF(line && !strstr(line, "Sup3rS3cretPw"), "the argument's secret is nowhere in the record");
	CHECKF(j && !strcmp(jstr(j, "error"), "/w/https:/admin:[REDACTED]@example.com/x does not exist"),
	       "the error keeps the rest of its text");
	json_decref(j);
	free(line);
	/* an error without the secret is untouched */
	r.error = "no such file";
	line = moat_audit_format(&r, &len);
	j = line ? parse(line, len - 1) : NULL;
	CHECK(j && !strcmp(jstr(j, "error"), "no such file"));
	json_decref(j);
	free(line);
	json_decref(args);
}

static void test_format_hostile(void)
{
	struct moat_decision d = mkdec(MOAT_ALLOW, "default", "ok");
	struct moat_audit_record r = {.tool = "t\x01\xff", .decision = &d};
	json_t *args = json_object(), *deep, *cur;
	size_t len;
	char *line;
	json_t *j;

	json_object_set_new(args, "nul", json_stringn("a\0b", 3));
	json_object_setn_new(args, "k\0ey", 4, json_string("v"));
	json_object_set_new(args, "ctl", json_string("\x1b[31mred\x07\x7f\u2028"));
	r.args = args;
	r.command = "bad \xff\xfe utf8 \xc0\xaf and \xed\xa0\x80 ok";
	line = moat_audit_format(&r, &len);
	j = line ? parse(line, len - 1) : NULL;
	CHECKF(j != NULL, "NUL, invalid UTF-8 and control characters give a readable record");
	CHECK(line && memchr(line, '\n', len - 1) == NULL);
	CHECK(j && strstr(jstr(json_object_get(j, "args"), "nul"), "\xef\xbf\xbd"));
	CHECK(j && strstr(jstr(j, "command"), "\xef\xbf\xbd") && strstr(jstr(j, "command"), " ok"));
	CHECK(j && !strcmp(jstr(j, "tool"), "t\x01\xef\xbf\xbd"));
	CHECKF(line && strcasestr(line, "\\u001b[31m") != NULL, "ESC is escaped in the line");
	json_decref(j);
	free(line);
	json_decref(args);

	/* nesting: 100 levels are cut at MOAT_JSON_MAX_DEPTH, and the reader
	 * still reads the record */
	deep = json_object();
	cur = deep;
	for (int i = 0; i < 100; i++) {
		json_t *n = i % 2 ? json_object() : json_array();

		if (json_is_object(cur))
			json_object_set_new(cur, "d", n);
		else
			json_array_append_new(cur, n);
		cur = n;
	}
	r.args = deep;
	r.command = NULL;
	r.tool = "x";
	line = moat_audit_format(&r, &len);
	j = line ? parse(line, len - 1) : NULL;
	CHECKF(j != NULL && strstr(line, "[nested too deep]"),
	       "deep arguments are cut and the record stays readable");
	json_decref(j);
	free(line);
	json_decref(deep);
}

/* ---- the file ---- */

static size_t count_good, count_bad;
static size_t bad_lines[64];

static int count_cb(void *ud, json_t *rec, size_t lineno)
{
	count_good++;
	return 0;
}

static void bad_cb(void *ud, size_t lineno, const char *why)
{
	if (count_bad < 64)
		bad_lines[count_bad] = lineno;
	count_bad++;
}

static void read_counts(const char *path, const struct moat_audit_filter *f)
{
	struct moat_error err;

	count_good = count_bad = 0;
	moat_audit_read(path, f, count_cb, bad_cb, NULL, &err);
}

static void test_open_write(void)
{
	struct moat_audit_opts o = {.path = path_in("a.jsonl"), .required = true, .fsync = true};
	struct moat_decision d = mkdec(MOAT_ALLOW, "default", "ok");
	struct moat_audit_record r = {.call_id = "1", .tool = "read_file", .decision = &d};
	struct moat_audit *a = NULL;
	struct moat_error err;
	struct stat st;
	size_t len;
	char *data;

	moat_error_clear(&err);
	CHECK_INT(moat_audit_open(&o, &a, &err), 0);
	CHECK_STR(moat_audit_path(a), o.path);
	CHECK(moat_audit_required(a));
	CHECKF(moat_audit_ready(a, &err) == 0, "ready with space on the disk (%s)", err.msg);
	CHECK_INT(moat_audit_ready(NULL, &err), -EINVAL);
	for (int i = 0; i < 3; i++)
		CHECK_INT(moat_audit_write(a, &r, &err), 0);
	a = moat_audit_close(a);
	CHECK(a == NULL);
	CHECK(stat(o.path, &st) == 0 && (st.st_mode & 07777) == 0600);
	read_counts(o.path, NULL);
	CHECK_INT(count_good, 3);
	CHECK_INT(count_bad, 0);
	data = slurp(o.path, &len);
	CHECK(data && len > 0 && data[len - 1] == '\n');
	free(data);

	o.required = false;
	CHECK_INT(moat_audit_open(&o, &a, &err), 0);
	CHECK(!moat_audit_required(a));
	a = moat_audit_close(a);
	CHECK(moat_audit_close(NULL) == NULL);
	CHECK(moat_audit_path(NULL) == NULL);
	CHECK(moat_audit_write(NULL, &r, &err) == -EINVAL);

	o.path = "";
	CHECK_INT(moat_audit_open(&o, &a, &err), -EINVAL);
	CHECK(a == NULL);
}

static void test_default_path(void)
{
	char *old_xdg = getenv("XDG_STATE_HOME") ? strdup(getenv("XDG_STATE_HOME")) : NULL;
	char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	struct moat_audit_opts o = {.required = true};
	struct moat_decision d = mkdec(MOAT_ALLOW, "default", "ok");
	struct moat_audit_record r = {.tool = "x", .decision = &d};
	struct moat_audit *a = NULL;
	struct moat_error err;
	char buf[1024];
	struct stat st;

	setenv("XDG_STATE_HOME", path_in("state"), 1);
	CHECK_INT(moat_audit_default_path(buf, sizeof(buf)), 0);
	CHECK_STR(buf, path_in("state/moat/audit.jsonl"));
	CHECK_INT(moat_audit_open(&o, &a, &err), 0);
	CHECK_STR(moat_audit_path(a), path_in("state/moat/audit.jsonl"));
	CHECK_INT(moat_audit_write(a, &r, &err), 0);
	a = moat_audit_close(a);
	CHECKF(stat(path_in("state"), &st) == 0 && (st.st_mode & 0777) == 0700,
	       "$XDG_STATE_HOME created 0700");
	CHECKF(stat(path_in("state/moat"), &st) == 0 && (st.st_mode & 0777) == 0700,
	       "the moat directory created 0700");
	CHECKF(stat(path_in("state/moat/audit.jsonl"), &st) == 0 && (st.st_mode & 0777) == 0600,
	       "the log created 0600");
	read_counts(NULL, NULL);
	CHECKF(count_good == 1, "the reader's default path is the writer's");

	/* relative XDG_STATE_HOME is ignored (XDG spec): $HOME/.local/state */
	setenv("XDG_STATE_HOME", "relative/state", 1);
	setenv("HOME", path_in("home"), 1);
	CHECK_INT(moat_audit_open(&o, &a, &err), 0);
	CHECK_STR(moat_audit_path(a), path_in("home/.local/state/moat/audit.jsonl"));
	a = moat_audit_close(a);
	CHECK(stat(path_in("home/.local"), &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(access("relative", F_OK) < 0);

	/* a file where a directory should be */
	setenv("XDG_STATE_HOME", path_in("a.jsonl"), 1);
	moat_error_clear(&err);
	CHECK_INT(moat_audit_open(&o, &a, &err), -ENOTDIR);
	CHECK(strstr(err.msg, "a.jsonl") != NULL);

	if (old_xdg)
		setenv("XDG_STATE_HOME", old_xdg, 1);
	else
		unsetenv("XDG_STATE_HOME");
	if (old_home)
		setenv("HOME", old_home, 1);
	else
		unsetenv("HOME");
	free(old_xdg);
	free(old_home);
}

static void test_refusals(void)
{
	struct moat_audit_opts o = {.required = true};
	struct moat_decision d = mkdec(MOAT_ALLOW, "default", "ok");
	struct moat_audit_record r = {.tool = "x", .decision = &d};
	struct moat_audit *a = NULL;
	struct moat_error err;
	int rc;

	/* SECURITY: a symbolic link at the log path is refused, its target
	 * not created */
	CHECK(symlink(path_in("target"), path_in("link")) == 0);
	o.path = path_in("link");
	moat_error_clear(&err);
	CHECK_INT(moat_audit_open(&o, &a, &err), -ELOOP);
	CHECK(strstr(err.msg, "symbolic link") && strstr(err.msg, "link"));
	CHECK(access(path_in("target"), F_OK) < 0);

	o.path = tmp;
	CHECK(moat_audit_open(&o, &a, &err) < 0 && a == NULL);

	/* a FIFO would block or interleave: refused, without hanging */
	CHECK(mkfifo(path_in("fifo"), 0600) == 0);
	o.path = path_in("fifo");
	moat_error_clear(&err);
	CHECK_INT(moat_audit_open(&o, &a, &err), -EINVAL);
	CHECK(strstr(err.msg, "not a regular file") != NULL);

	/* a directory that does not exist (no parents for explicit paths) */
	o.path = path_in("nodir/x.jsonl");
	CHECK_INT(moat_audit_open(&o, &a, &err), -ENOENT);

	/* ENOSPC from the device: the error names the path and the cause */
	o.path = "/dev/full";
	if (access("/dev/full", W_OK) == 0) {
		CHECK_INT(moat_audit_open(&o, &a, &err), 0);
		CHECKF(moat_audit_ready(a, &err) == 0, "a device: the write decides");
		moat_error_clear(&err);
		rc = moat_audit_write(a, &r, &err);
		CHECK_INT(rc, -ENOSPC);
		CHECKF(strstr(err.msg, "/dev/full") && strstr(err.msg, "disk full"),
		       "the error says: %s", err.msg);
		a = moat_audit_close(a);
	}
}

/* The child's findings travel back as its exit status: 0 all good,
 * N the first failed step, 77 the environment cannot do it. */
static int child_status(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void skip_or_fail(const char *what)
{
	const char *must = getenv("MOAT_MUST_WORK");

	if (must && !strcmp(must, "1"))
		CHECKF(0, "%s (MOAT_MUST_WORK=1: a skip is a failure)", what);
	else
		CHECKF(1, "# SKIP %s", what);
}

static void test_readonly_file(void)
{
	struct moat_audit_opts o = {.path = path_in("ro/ro.jsonl"), .required = true};
	int fd, st;
	pid_t pid;

	mkdir(path_in("ro"), 0755);
	chmod(tmp, 0755);
	fd = open(o.path, O_CREAT | O_WRONLY | O_CLOEXEC, 0444);
	CHECK(fd >= 0);
	close(fd);
	chmod(o.path, 0444);
	pid = fork();
	if (pid == 0) {
		struct moat_audit *a = NULL;
		struct moat_error err;

		/* root ignores file modes: look as nobody */
		if (geteuid() == 0 &&
		    (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		     setresuid(65534, 65534, 65534) < 0))
			_exit(77);
		moat_error_clear(&err);
		if (moat_audit_open(&o, &a, &err) != -EACCES)
			_exit(1);
		if (!strstr(err.msg, "ro.jsonl") || !strstr(err.msg, "permission denied"))
			_exit(2);
		_exit(0);
	}
	st = child_status(pid);
	chmod(tmp, 0700);
	if (st == 77)
		skip_or_fail("cannot switch to nobody");
	else
		CHECKF(st == 0, "a read-only log file is refused with EACCES naming it (step %d)",
		       st);
}

/* A tmpfs of 64 KiB in a private mount namespace: fill it with records
 * until the write fails; it must fail with ENOSPC and say "disk full", and
 * the reader must count every complete record and at most one incomplete
 * last line. Then read-only: EROFS. */
/* In a child: a private mount namespace (a user namespace too when not
 * root). 0, or -1 when there is none to be had. */
static int private_mounts(void)
{
	if (unshare(CLONE_NEWNS) < 0) {
		/* not root: a user namespace gives the mount namespace */
		uid_t uid = geteuid();
		gid_t gid = getegid();
		char map[64];
		int fd;

		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return -1;
		snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
		fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			return -1;
		close(fd);
		fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
		if (fd >= 0 && write(fd, "deny", 4) < 0)
			return -1;
		if (fd >= 0)
			close(fd);
		snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
		fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			return -1;
		close(fd);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	return 0;
}

static int diskfull_child(void)
{
	struct moat_audit_opts o = {.path = path_in("full/audit.jsonl"), .required = true};
	struct moat_decision d = mkdec(MOAT_ALLOW, "default", "ok");
	struct moat_audit_record r = {.tool = "write_file", .decision = &d};
	struct moat_audit *a = NULL;
	struct moat_error err;
	char *pad = plain(9000);
	json_t *args = json_pack("{s:s}", "content", pad);
	int i, rc = 0;

	if (private_mounts() < 0)
		return 77;
	if (mount("tmpfs", path_in("full"), "tmpfs", 0, "size=64k,mode=0700") < 0)
		return 77;
	if (moat_audit_open(&o, &a, &err) < 0)
		return 1;
	/* 64 KiB free is less than a record may need: refused up front */
	moat_error_clear(&err);
	if (moat_audit_ready(a, &err) != -ENOSPC || !strstr(err.msg, "disk full") ||
	    !strstr(err.msg, "full/audit.jsonl"))
		return 10;
	r.args = args;
	for (i = 0; i < 100; i++) {
		moat_error_clear(&err);
		rc = moat_audit_write(a, &r, &err);
		if (rc < 0)
			break;
	}
	if (i == 100 || i == 0)
		return 2;
	if (rc != -ENOSPC)
		return 3;
	if (!strstr(err.msg, "disk full") || !strstr(err.msg, "full/audit.jsonl"))
		return 4;
	/* full now: a small record fails too, and leaves nothing */
	r.args = NULL;
	if (moat_audit_write(a, &r, &err) != -ENOSPC)
		return 5;
	a = moat_audit_close(a);
	read_counts(o.path, NULL);
	if (count_good != (size_t)i)
		return 6;
	if (count_bad > 1)
		return 7;
	if (mount(NULL, path_in("full"), NULL, MS_REMOUNT | MS_RDONLY, NULL) < 0)
		return 8;
	o.path = path_in("full/other.jsonl");
	moat_error_clear(&err);
	if (moat_audit_open(&o, &a, &err) != -EROFS || !strstr(err.msg, "read-only"))
		return 9;
	json_decref(args);
	free(pad);
	return 0;
}

static void test_diskfull(void)
{
	pid_t pid;
	int st;

	mkdir(path_in("full"), 0700);
	pid = fork();
	if (pid == 0)
		_exit(diskfull_child());
	st = child_status(pid);
	if (st == 77)
		skip_or_fail("no private mount namespace for a small tmpfs");
	else
		CHECKF(st == 0,
		       "a full tmpfs fails the write with ENOSPC, records stay whole (step %d)",
		       st);
}

/* moat_audit_ready looks at the file system only now and then: what it
 * counts between two looks must never make it say ready when a record may
 * not fit, and a failed write must make it look again. A 3 MiB tmpfs
 * filled by this writer's records (checked against fstatvfs after each),
 * then grown, then filled by someone else. */
static int ready_child(void)
{
	struct moat_audit_opts o = {.required = true};
	struct moat_decision d = mkdec(MOAT_ALLOW, "default", "ok");
	struct moat_audit_record r = {.tool = "write_file", .decision = &d};
	struct moat_audit *a = NULL;
	struct moat_error err;
	struct statvfs sv;
	char *pad = plain(9000), block[4096], log[512], room[512], filler[512];
	json_t *args = json_pack("{s:s}", "content", pad);
	int i, rc = 0, fd;

	/* (path_in's buffers are reused) */
	snprintf(log, sizeof(log), "%s", path_in("room/audit.jsonl"));
	snprintf(room, sizeof(room), "%s", path_in("room"));
	snprintf(filler, sizeof(filler), "%s", path_in("room/filler"));
	o.path = log;

	if (private_mounts() < 0)
		return 77;
	if (mount("tmpfs", room, "tmpfs", 0, "size=3m,mode=0700") < 0)
		return 77;
	if (moat_audit_open(&o, &a, &err) < 0)
		return 1;
	r.args = args;
	for (i = 0; i < 2000; i++) {
		unsigned long long avail;

		moat_error_clear(&err);
		rc = moat_audit_ready(a, &err);
		if (statvfs(room, &sv) < 0)
			return 2;
		avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
		/* never ready when a record may not fit */
		if (rc == 0 && avail < MOAT_AUDIT_MAX_RECORD)
			return 3;
		if (rc < 0)
			break;
		/* ready: the record is written */
		if (moat_audit_write(a, &r, &err) < 0)
			return 4;
	}
	if (rc != -ENOSPC || i == 0 || !strstr(err.msg, "disk full"))
		return 5;
	/* room again: the next look sees it */
	if (mount(NULL, room, NULL, MS_REMOUNT, "size=8m") < 0)
		return 6;
	if (moat_audit_ready(a, &err) != 0)
		return 7;
	/* someone else fills the disk: the next write fails (whatever ready
	 * said), and ready then looks again and refuses */
	fd = open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 8;
	memset(block, 'f', sizeof(block));
	while (write(fd, block, sizeof(block)) > 0)
		;
	close(fd);
	if (moat_audit_write(a, &r, &err) >= 0)
		return 9;
	if (moat_audit_ready(a, &err) != -ENOSPC)
		return 10;
	a = moat_audit_close(a);
	read_counts(log, NULL);
	if (count_good != (size_t)i || count_bad > 1)
		return 11;
	json_decref(args);
	free(pad);
	return 0;
}

static void test_ready(void)
{
	pid_t pid;
	int st;

	mkdir(path_in("room"), 0700);
	pid = fork();
	if (pid == 0)
		_exit(ready_child());
	st = child_status(pid);
	if (st == 77)
		skip_or_fail("no private mount namespace for a small tmpfs");
	else
		CHECKF(st == 0,
		       "ready looks again before a record may not fit, and after a failed "
		       "write (step %d)",
		       st);
}

static void test_stderr(void)
{
	struct moat_audit_opts o = {.path = "-", .required = true};
	struct moat_decision d = mkdec(MOAT_DENY, "r", "why");
	struct moat_audit_record r = {.tool = "x", .decision = &d};
	struct moat_audit *a = NULL;
	struct moat_error err;
	int save = dup(2), fd = open(path_in("stderr.txt"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	dup2(fd, 2);
	CHECK_INT(moat_audit_open(&o, &a, &err), 0);
	CHECK_INT(moat_audit_ready(a, &err), 0);
	CHECK_INT(moat_audit_write(a, &r, &err), 0);
	CHECK_INT(moat_audit_write(a, &r, &err), 0);
	CHECK_STR(moat_audit_path(a), "-");
	a = moat_audit_close(a);
	dup2(save, 2);
	close(save);
	close(fd);
	CHECKF(fcntl(2, F_GETFD) >= 0, "closing a stderr log leaves fd 2 open");
	read_counts(path_in("stderr.txt"), NULL);
	CHECK_INT(count_good, 2);
	CHECK_INT(count_bad, 0);
}

/* ---- concurrency ---- */

#define WRITERS 8
#define PER_WRITER 2000

static struct moat_audit *shared;
static unsigned char seen[WRITERS][PER_WRITER];
static size_t dup_or_foreign;

static int write_many(struct moat_audit *a, int w)
{
	struct moat_decision d = mkdec(MOAT_ALLOW, "default", "ok");
	char id[32], *big = plain(30000);
	int fails = 0;

	for (int i = 0; i < PER_WRITER; i++) {
		/* mostly small records, every 50th a large one spanning pages */
		json_t *args = json_pack("{s:i, s:s}", "i", i, "pad", i % 50 ? "small" : big);
		struct moat_audit_record r = {
		    .call_id = id, .tool = "bash", .args = args, .decision = &d};
		struct moat_error err;

		snprintf(id, sizeof(id), "w%d-%d", w, i);
		if (moat_audit_write(a, &r, &err) < 0)
			fails++;
		json_decref(args);
	}
	free(big);
	return fails;
}

static void *thread_main(void *p)
{
	return (void *)(intptr_t)write_many(shared, (int)(intptr_t)p);
}

static int seen_cb(void *ud, json_t *rec, size_t lineno)
{
	int w, i;
	const char *id = jstr(rec, "call_id");

	if (!id || sscanf(id, "w%d-%d", &w, &i) != 2 || w < 0 || w >= WRITERS || i < 0 ||
	    i >= PER_WRITER || seen[w][i]++) {
		dup_or_foreign++;
		return 0;
	}
	/* the record is the one written: its argument matches its id */
	if (json_integer_value(json_object_get(json_object_get(rec, "args"), "i")) != i)
		dup_or_foreign++;
	return 0;
}

static void check_all_seen(const char *path, const char *what)
{
	struct moat_error err;
	size_t missing = 0;

	memset(seen, 0, sizeof(seen));
	dup_or_foreign = 0;
	count_bad = 0;
	moat_audit_read(path, NULL, seen_cb, bad_cb, NULL, &err);
	for (int w = 0; w < WRITERS; w++)
		for (int i = 0; i < PER_WRITER; i++)
			missing += !seen[w][i];
	CHECKF(count_bad == 0, "%s: every line parses (%zu bad)", what, count_bad);
	CHECKF(missing == 0 && dup_or_foreign == 0,
	       "%s: every record exactly once (%zu missing, %zu extra)", what, missing,
	       dup_or_foreign);
	/* count lines from the bytes, independently of the reader */
	{
		size_t len, lines = 0;
		char *data = slurp(path, &len);

		for (size_t k = 0; data && k < len; k++)
			lines += data[k] == '\n';
		CHECKF(lines == WRITERS * PER_WRITER, "%s: %zu lines on disk", what, lines);
		free(data);
	}
}

static void test_concurrent(void)
{
	struct moat_audit_opts o = {.path = path_in("threads.jsonl"), .required = true};
	pthread_t th[WRITERS];
	struct moat_error err;
	int fails = 0;
	pid_t pids[WRITERS];

	CHECK_INT(moat_audit_open(&o, &shared, &err), 0);
	for (intptr_t w = 0; w < WRITERS; w++)
		pthread_create(&th[w], NULL, thread_main, (void *)w);
	for (int w = 0; w < WRITERS; w++) {
		void *rv;

		pthread_join(th[w], &rv);
		fails += (int)(intptr_t)rv;
	}
	shared = moat_audit_close(shared);
	CHECK_INT(fails, 0);
	check_all_seen(o.path, "8 threads x 2000");

	o.path = path_in("procs.jsonl");
	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		if (pids[w] == 0) {
			struct moat_audit *a = NULL;

			if (moat_audit_open(&o, &a, &err) < 0)
				_exit(1);
			fails = write_many(a, w);
			moat_audit_close(a);
			_exit(fails ? 2 : 0);
		}
	}
	fails = 0;
	for (int w = 0; w < WRITERS; w++)
		fails += child_status(pids[w]) != 0;
	CHECK_INT(fails, 0);
	check_all_seen(o.path, "8 processes x 2000");
}

/* ---- syslog ---- */

static void test_syslog(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct moat_audit_opts o = {.path = path_in("sys.jsonl"), .required = true, .syslog = true};
	struct moat_decision d = mkdec(MOAT_DENY, "denied_paths:**/.env", "secret file");
	struct moat_audit_record r = {.call_id = "s1", .tool = "read_file", .decision = &d};
	struct moat_audit *a = NULL;
	struct moat_error err;
	char buf[70000], host[300], ts[64];
	size_t flen;
	char *file;
	ssize_t n;
	int fd, pri = -1, pid = -1, off = 0;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	moat_strlcpy(sa.sun_path, path_in("log.sock"), sizeof(sa.sun_path));
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	{
		int sz = 1 << 20;

		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	setenv("MOAT_SYSLOG_SOCKET", sa.sun_path, 1);
	CHECK_INT(moat_audit_open(&o, &a, &err), 0);
	CHECK_INT(moat_audit_write(a, &r, &err), 0);
	n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	/* <PRI>1 TIMESTAMP HOSTNAME moat PID - - MSG */
	CHECKF(sscanf(buf, "<%d>1 %63s %299s moat %d - - %n", &pri, ts, host, &pid, &off) == 4 &&
		   off > 0,
	       "RFC 5424 header: %.120s", buf);
	CHECK_INT(pri, 8 + 4); /* user.warning for a deny */
	CHECK(strlen(ts) == 24 && ts[10] == 'T' && ts[23] == 'Z');
	CHECK_INT(pid, getpid());
	CHECK(strchr(buf, '\n') == NULL);
	file = slurp(o.path, &flen);
	CHECKF(file && off > 0 && flen == strlen(buf + off) + 1 &&
		   !memcmp(file, buf + off, flen - 1),
	       "the datagram carries the record written to the file");
	free(file);

	/* allow: user.info */
	d.verdict = MOAT_ALLOW;
	CHECK_INT(moat_audit_write(a, &r, &err), 0);
	n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	CHECK(n > 0 && !strncmp(buf, "<14>1 ", 6));

	/* a record over one datagram: a short one without the arguments */
	{
		char *pad = plain(40000);
		json_t *args = json_pack("{s:s, s:s}", "a", pad, "b", pad);
		json_t *j;

		r.args = args;
		CHECK_INT(moat_audit_write(a, &r, &err), 0);
		n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		CHECK(n > 0);
		buf[n > 0 ? n : 0] = '\0';
		off = 0;
		sscanf(buf, "<%d>1 %63s %299s moat %d - - %n", &pri, ts, host, &pid, &off);
		j = off ? parse(buf + off, strlen(buf + off)) : NULL;
		CHECKF(j && !json_object_get(j, "args") && !strcmp(jstr(j, "call_id"), "s1"),
		       "an oversized record goes to syslog without its arguments");
		json_decref(j);
		json_decref(args);
		free(pad);
		r.args = NULL;
	}
	a = moat_audit_close(a);

	/* direct calls */
	CHECK_INT(moat_syslog_send("{\"a\":1}\n{\"b\":2}", 15, 6), -EINVAL);
	CHECK_INT(moat_syslog_send("{}", 2, 8), -EINVAL);
	{
		char *pad = plain((64u << 10) + 1);

		CHECK_INT(moat_syslog_send(pad, strlen(pad), 6), -EMSGSIZE);
		pad[64u << 10] = '\0';
		CHECK_INT(moat_syslog_send(pad, strlen(pad), 6), 0);
		recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		free(pad);
	}

	/* no daemon: the file is written and the call succeeds */
	setenv("MOAT_SYSLOG_SOCKET", path_in("nobody-listens.sock"), 1);
	CHECK(moat_syslog_send("{}", 2, 6) < 0);
	CHECK_INT(moat_audit_open(&o, &a, &err), 0);
	CHECK_INT(moat_audit_write(a, &r, &err), 0);
	a = moat_audit_close(a);
	read_counts(o.path, NULL);
	CHECK_INT(count_good, 4);
	unsetenv("MOAT_SYSLOG_SOCKET");
	close(fd);
}

/* ---- reader ---- */

static size_t got[16], ngot;

static int got_cb(void *ud, json_t *rec, size_t lineno)
{
	if (ngot < 16)
		got[ngot++] = lineno;
	return ud != NULL; /* stop after the first when ud is set */
}

static bool got_is(const size_t *want, size_t n)
{
	if (ngot != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i])
			return false;
	return true;
}

#define REC(t, tool, v, fin)                                                                       \
	"{\"time\":\"" t "\",\"tool\":\"" tool "\",\"decision\":{\"verdict\":\"" v                 \
	"\"},\"final\":\"" fin "\"}\n"

static void test_reader(void)
{
	const char *log = REC("2026-01-01T00:00:00.000Z", "read_file", "allow", "allow") /* 1 */
	    "not json\n"								 /* 2 */
	    REC("2026-06-01T00:00:00.000Z", "bash", "deny", "deny")			 /* 3 */
	    "\n"									 /* 4 */
	    "{\"time\":\"2026-01-01T00:00:00Z\",\"tool\":\"x\",\"decision\":{\"verdict\":"
	    "\"allow\"}}\n"					    /* 5 */
	    "[1]\n"						    /* 6 */
	    REC("2026-12-01T00:00:00.000Z", "bash", "ask", "allow") /* 7 */
	    REC("yesterday", "bash", "ask", "allow")		    /* 8 */
	    "{\"time\":\"2026-01-01T00:00:00Z\",\"time\":\"2026-01-01T00:00:00Z\",\"tool\":"
	    "\"x\",\"decision\":{\"verdict\":\"allow\"},\"final\":\"allow\"}\n" /* 9 */
	    "{\"time\":\"2026-12-02T00:00:00.000Z\",\"tool\":\"bash\"";		/* 10 */
	const char *path = path_in("reader.jsonl");
	struct moat_audit_filter f = {0};
	struct moat_error err;
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
	static const size_t all[] = {1, 3, 7}, bash[] = {3, 7}, allow[] = {1, 7}, ask[] = {7},
			    deny[] = {3}, first[] = {1};
	static const size_t bads[] = {2, 4, 5, 6, 8, 9, 10};
	double since;

	CHECK(fd >= 0 && write(fd, log, strlen(log)) == (ssize_t)strlen(log));
	close(fd);

	ngot = count_bad = 0;
	CHECK_INT(moat_audit_read(path, NULL, got_cb, bad_cb, NULL, &err), 0);
	CHECK(got_is(all, 3));
	CHECKF(count_bad == 7 && !memcmp(bad_lines, bads, sizeof(bads)),
	       "bad lines reported by number (%zu)", count_bad);
	f.tool = "bash";
	ngot = 0;
	moat_audit_read(path, &f, got_cb, NULL, NULL, &err);
	CHECK(got_is(bash, 2));
	f.tool = NULL;
	f.decision = "allow";
	ngot = 0;
	moat_audit_read(path, &f, got_cb, NULL, NULL, &err);
	CHECKF(got_is(allow, 2), "--decision allow matches the final outcome of an ask");
	f.decision = "ask";
	ngot = 0;
	moat_audit_read(path, &f, got_cb, NULL, NULL, &err);
	CHECK(got_is(ask, 1));
	f.decision = "deny";
	ngot = 0;
	moat_audit_read(path, &f, got_cb, NULL, NULL, &err);
	CHECK(got_is(deny, 1));
	f.decision = NULL;
	CHECK_INT(moat_audit_parse_time("2026-06-01", 0, &since), 0);
	f.since_ms = since;
	ngot = 0;
	moat_audit_read(path, &f, got_cb, NULL, NULL, &err);
	CHECKF(got_is(bash, 2), "--since includes a record at exactly T");
	f.tool = "bash";
	f.decision = "allow";
	ngot = 0;
	moat_audit_read(path, &f, got_cb, NULL, NULL, &err);
	CHECK(got_is(ask, 1));
	ngot = 0;
	CHECK_INT(moat_audit_read(path, NULL, got_cb, NULL, (void *)1, &err), 0);
	CHECKF(got_is(first, 1), "a callback returning non-zero stops the walk");

	f = (struct moat_audit_filter){.decision = "maybe"};
	CHECK_INT(moat_audit_read(path, &f, got_cb, NULL, NULL, &err), -EINVAL);
	moat_error_clear(&err);
	CHECK_INT(moat_audit_read(path_in("missing.jsonl"), NULL, got_cb, NULL, NULL, &err),
		  -ENOENT);
	CHECK(strstr(err.msg, "missing.jsonl") != NULL);

	/* the line limit, at the boundary */
	{
		const char *head =
		    "{\"time\":\"2026-01-01T00:00:00.000Z\",\"tool\":\"x\","
		    "\"decision\":{\"verdict\":\"allow\"},\"final\":\"allow\",\"p\":\"";
		size_t hl = strlen(head), body = MOAT_AUDIT_MAX_RECORD - 1 - hl - 2;
		struct moat_buf b = MOAT_BUF_INIT;
		char *pad = plain(body + 1);

		moat_buf_puts(&b, head);
		moat_buf_append(&b, pad, body);
		moat_buf_puts(&b, "\"}\n"); /* MOAT_AUDIT_MAX_RECORD - 1 bytes + newline */
		moat_buf_puts(&b, head);
		moat_buf_append(&b, pad, body + 1);
		moat_buf_puts(&b, "\"}\n"); /* one byte more */
		fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
		CHECK(write(fd, b.data, b.len) == (ssize_t)b.len);
		close(fd);
		ngot = count_bad = 0;
		moat_audit_read(path, NULL, got_cb, bad_cb, NULL, &err);
		CHECKF(ngot == 1 && got[0] == 1, "a line of MOAT_AUDIT_MAX_RECORD bytes is read");
		CHECKF(count_bad == 1 && bad_lines[0] == 2, "one byte more is a bad line");
		moat_buf_release(&b);
		free(pad);
	}
}

struct trow {
	const char *in;
	int rc;
	double ms;
};

static void test_parse_time(void)
{
	const double now = 2e12;
	static const struct trow rows[] = {
	    {"2026-11-22T10:00:00Z", 0, 1795341600e3},
	    {"2026-11-22T10:00:00.456Z", 0, 1795341600e3 + 456},
	    {"2026-11-22T10:00:00.4Z", 0, 1795341600e3 + 400},
	    {"2026-11-22t10:00:00z", 0, 1795341600e3},
	    {"2026-11-22 10:00", 0, 1795341600e3},
	    {"2026-11-22T10:00:00", 0, 1795341600e3},
	    {"2026-11-22T12:30:00+02:30", 0, 1795341600e3},
	    {"2026-11-22T08:00:00-02:00", 0, 1795341600e3},
	    {"2026-11-22", 0, 1795305600e3},
	    {"2024-02-29", 0, 1709164800e3},
	    {"1970-01-01T00:00:00Z", 0, 0},
	    {"30s", 0, now - 30e3},
	    {"15m", 0, now - 900e3},
	    {"2h", 0, now - 7200e3},
	    {"3d", 0, now - 3 * 86400e3},
	    {"1w", 0, now - 7 * 86400e3},
	    {"0m", 0, now},
	    {"10000000d", 0, now - 1e7 * 86400e3},
	    {"10000001d", -EINVAL, 0},
	    {"2026-02-29", -EINVAL, 0},
	    {"2026-13-01", -EINVAL, 0},
	    {"2026-00-10", -EINVAL, 0},
	    {"2026-04-31", -EINVAL, 0},
	    {"2026-11-22T24:00:00Z", -EINVAL, 0},
	    {"2026-11-22T10:60:00Z", -EINVAL, 0},
	    {"2026-11-22T10:00:00.Z", -EINVAL, 0},
	    {"2026-11-22T10:00:00.1234567891Z", -EINVAL, 0},
	    {"2026-11-22T10:00:00Zjunk", -EINVAL, 0},
	    {"2026-11-22T10:00:00+2:00", -EINVAL, 0},
	    {"2026-11-22X", -EINVAL, 0},
	    {"26-11-22", -EINVAL, 0},
	    {"", -EINVAL, 0},
	    {"15x", -EINVAL, 0},
	    {"-5m", -EINVAL, 0},
	    {"+5m", -EINVAL, 0},
	    {"5", -EINVAL, 0},
	    {"m", -EINVAL, 0},
	    {"5 m", -EINVAL, 0},
	    {"99999999999999999999m", -EINVAL, 0},
	    {"yesterday", -EINVAL, 0},
	};

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(rows); i++) {
		double ms = -1;
		int rc = moat_audit_parse_time(rows[i].in, now, &ms);

		CHECKF(rc == rows[i].rc && (rc < 0 || ms == rows[i].ms),
		       "parse_time(\"%s\") = %d %.0f (want %d %.0f)", rows[i].in, rc, ms,
		       rows[i].rc, rows[i].ms);
	}
	CHECK_INT(moat_audit_parse_time(NULL, now, NULL), -EINVAL);
}

int main(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	signal(SIGPIPE, SIG_IGN);
	snprintf(tmp, sizeof(tmp), "%s/moat-audit-XXXXXX", base);
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	test_format_full();
	test_format_minimal();
	test_format_caps();
	test_format_hostile();
	test_format_scrub();
	test_open_write();
	test_default_path();
	test_refusals();
	test_readonly_file();
	test_diskfull();
	test_ready();
	test_stderr();
	test_syslog();
	test_reader();
	test_parse_time();
	test_concurrent();

	{
		pid_t pid = fork();

		if (pid == 0) {
			execl("/bin/rm", "rm", "-rf", tmp, (char *)NULL);
			_exit(127);
		}
		child_status(pid);
	}
	return tap_done();
}
