/* The file tools through moat_tool_run: every happy path and refusal, the
 * caps at their boundaries, argument checking, and the registry. Results
 * are checked against the bytes on disk, not against what the tool says.
 * (The security races are in test_fileops.c; bash in test_bash.c.) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <moat/policy.h>

#include "core/config.h"
#include "core/policy_check.h"
#include "tap.h"
#include "tools/tools.h"

static char ws[PATH_MAX];
static struct moat_config *cfg;
static struct moat_policy *pol;
static struct moat_tool_env env;

static void setup(void)
{
	char tmpl[] = "/tmp/moat-tools-XXXXXX", json[PATH_MAX + 200];
	struct moat_error err;

	if (!mkdtemp(tmpl) || !realpath(tmpl, ws))
		abort();
	snprintf(json, sizeof(json), "{\"allowed_paths\": [\"%s/**\"]}", ws);
	if (moat_config_new(&cfg) < 0 ||
	    moat_config_load_string(cfg, json, strlen(json), "test", 0, &err) < 0 ||
	    moat_policy_new(cfg, NULL, ws, &pol, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		abort();
	}
	env.policy = pol;
	env.cfg = cfg;
	env.workspace = ws;
}

static void wpath(char *out, const char *rel)
{
	if (snprintf(out, PATH_MAX, "%s/%s", ws, rel) >= PATH_MAX)
		abort();
}

static void put(const char *rel, const char *data, size_t len)
{
	char p[PATH_MAX];
	int fd;

	wpath(p, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
}

static void puts_file(const char *rel, const char *s)
{
	put(rel, s, strlen(s));
}

/* The file's bytes on disk (heap, NUL-terminated), NULL when absent. */
static char *get(const char *rel, size_t *len)
{
	char p[PATH_MAX], *buf;
	struct stat st;
	int fd;

	wpath(p, rel);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return NULL;
	fstat(fd, &st);
	buf = malloc((size_t)st.st_size + 1);
	if (read(fd, buf, (size_t)st.st_size) != st.st_size)
		abort();
	buf[st.st_size] = '\0';
	if (len)
		*len = (size_t)st.st_size;
	close(fd);
	return buf;
}

static bool file_is(const char *rel, const char *want)
{
	size_t len;
	char *got = get(rel, &len);
	bool ok = got && len == strlen(want) && !memcmp(got, want, len);

	free(got);
	return ok;
}

static int mode_of(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	wpath(p, rel);
	return lstat(p, &st) < 0 ? -1 : (int)(st.st_mode & 07777);
}

/* Run a tool on arguments given as JSON text. */
__attribute__((format(printf, 3, 4))) static int
run(enum moat_tool_kind k, struct moat_tool_result *res, const char *fmt, ...)
{
	char *text;
	va_list ap;
	json_t *args;
	json_error_t je;
	int r, n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	args = json_loads(text, 0, &je);
	if (!args) {
		fprintf(stderr, "bad test JSON %s: %s\n", text, je.text);
		abort();
	}
	free(text);
	moat_tool_result_release(res);
	r = moat_tool_run(&env, k, args, NULL, res);
	json_decref(args);
	return r;
}

static int run_args(enum moat_tool_kind k, struct moat_tool_result *res, json_t *args)
{
	int r;

	moat_tool_result_release(res);
	r = moat_tool_run(&env, k, args, NULL, res);
	json_decref(args);
	return r;
}

static bool has(const char *s, const char *needle)
{
	return s && strstr(s, needle) != NULL;
}

/* Temporary files left behind in the workspace. */
static int count_temps(void)
{
	DIR *d = opendir(ws);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += strstr(de->d_name, ".moat-") != NULL;
	if (d)
		closedir(d);
	return n;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static void test_registry(void)
{
	struct moat_tool_result r;

	CHECK_INT(moat_tool_lookup("read_file"), MOAT_TOOL_READ_FILE);
	CHECK_INT(moat_tool_lookup("write_file"), MOAT_TOOL_WRITE_FILE);
	CHECK_INT(moat_tool_lookup("edit_file"), MOAT_TOOL_EDIT_FILE);
	CHECK_INT(moat_tool_lookup("list_directory"), MOAT_TOOL_LIST_DIRECTORY);
	CHECK_INT(moat_tool_lookup("bash"), MOAT_TOOL_BASH);
	CHECK_INT(moat_tool_lookup("run_shell_command"), MOAT_TOOL_BASH);
	CHECK_INT(moat_tool_lookup("Read_File"), MOAT_TOOL_NONE);
	CHECK_INT(moat_tool_lookup("web_fetch"), MOAT_TOOL_NONE);
	CHECK_INT(moat_tool_lookup(""), MOAT_TOOL_NONE);
	CHECK_INT(moat_tool_lookup(NULL), MOAT_TOOL_NONE);
	CHECK_STR(moat_tool_name(MOAT_TOOL_BASH), "bash");
	CHECK_STR(moat_tool_name(MOAT_TOOL_READ_FILE), "read_file");
	CHECK_STR(moat_tool_name(MOAT_TOOL_LIST_DIRECTORY), "list_directory");
	CHECK(moat_tool_name(MOAT_TOOL_NONE) == NULL);
	CHECK(moat_tool_name(MOAT_TOOL__COUNT) == NULL);

	moat_tool_result_init(&r);
	CHECK(!r.ok && !r.output && !r.data && r.exit_code == -1 && r.error[0] == '\0');
	moat_tool_result_release(&r);
	moat_tool_result_release(NULL);

	/* dispatch refusals: nothing runs */
	puts_file("reg.txt", "x\n");
	CHECK_INT(run(MOAT_TOOL_NONE, &r, "{\"path\": \"reg.txt\"}"), -EINVAL);
	CHECK(!r.ok && r.error[0]);
	CHECK_INT(run_args(MOAT_TOOL_READ_FILE, &r, json_array()), -EINVAL);
	CHECK(has(r.error, "object"));
	CHECK_INT(moat_tool_run(&env, MOAT_TOOL_READ_FILE, NULL, NULL, &r), -EINVAL);
	{
		json_t *o = json_object();

		CHECK_INT(moat_tool_run(NULL, MOAT_TOOL_READ_FILE, o, NULL, &r), -EINVAL);
		json_decref(o);
	}
	/* a successful call is timed, bytes counted, no exit code */
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"reg.txt\"}"), 0);
	CHECK(r.ok && r.duration_ms >= 0 && r.bytes_out == r.output_len && r.exit_code == -1);
	moat_tool_result_release(&r);
	CHECK(!r.output && !r.data);
}

static void test_args(void)
{
	struct moat_tool_result r;
	json_t *a;

	moat_tool_result_init(&r);
	puts_file("args.txt", "hello\n");
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"args.txt\", \"encoding\": \"utf8\"}"),
		  -EINVAL);
	CHECK(has(r.error, "'encoding'") && has(r.error, "unknown"));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{}"), -EINVAL);
	CHECK(has(r.error, "'path'"));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": 5}"), -EINVAL);
	CHECK(has(r.error, "'path'") && has(r.error, "string"));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"args.txt\", \"offset\": \"2\"}"),
		  -EINVAL);
	CHECK(has(r.error, "'offset'"));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"args.txt\", \"offset\": 1.0}"),
		  -EINVAL);
	CHECK(has(r.error, "'offset'"));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"args.txt\", \"offset\": -1}"),
		  -EINVAL);
	CHECK(has(r.error, "'offset'"));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"args.txt\", \"limit\": 0}"), -EINVAL);
	CHECK(has(r.error, "'limit'"));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"args.txt\", \"raw\": 1}"), -EINVAL);
	CHECK(has(r.error, "'raw'"));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"\"}"), -EINVAL);
	CHECK(has(r.error, "'path'"));
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"w.txt\"}"), -EINVAL);
	CHECK(has(r.error, "'content'"));
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"w.txt\", \"content\": null}"),
		  -EINVAL);
	CHECK(has(r.error, "'content'") && has(r.error, "null"));
	CHECK(get("w.txt", NULL) == NULL);
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"args.txt\", \"old_string\": \"h\", \"new_string\": \"j\", "
		      "\"replace_all\": \"yes\"}"),
		  -EINVAL);
	CHECK(has(r.error, "'replace_all'"));
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"args.txt\", \"old_string\": \"\", \"new_string\": \"j\"}"),
		  -EINVAL);
	CHECK(has(r.error, "'old_string'"));
	CHECK_INT(run(MOAT_TOOL_LIST_DIRECTORY, &r, "{\"path\": \".\", \"recursive\": true}"),
		  -EINVAL);
	CHECK(has(r.error, "'recursive'"));
	CHECK(file_is("args.txt", "hello\n"));

	/* NUL bytes in strings are refused (a path or content cut short) */
	a = json_pack("{s:o}", "path", json_stringn("args.txt\0/etc/passwd", 20));
	CHECK_INT(run_args(MOAT_TOOL_READ_FILE, &r, a), -EINVAL);
	CHECK(has(r.error, "NUL"));
	a = json_pack("{s:s, s:o}", "path", "nul.txt", "content", json_stringn("a\0b", 3));
	CHECK_INT(run_args(MOAT_TOOL_WRITE_FILE, &r, a), -EINVAL);
	CHECK(has(r.error, "NUL") && get("nul.txt", NULL) == NULL);
	a = json_pack("{s:s, s:s, s:o}", "path", "args.txt", "old_string", "hello", "new_string",
		      json_stringn("x\0y", 3));
	CHECK_INT(run_args(MOAT_TOOL_EDIT_FILE, &r, a), -EINVAL);
	CHECK(file_is("args.txt", "hello\n"));
	moat_tool_result_release(&r);
}

static void test_read(void)
{
	struct moat_tool_result r;

	moat_tool_result_init(&r);
	puts_file("r.txt", "alpha\nbeta\ngamma\n");
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"r.txt\"}"), 0);
	CHECK(r.ok);
	CHECK_STR(r.output, "     1\talpha\n     2\tbeta\n     3\tgamma\n");
	CHECK_INT(r.output_len, strlen(r.output));
	CHECK(json_integer_value(json_object_get(r.data, "lines")) == 3);
	/* the structured result carries the text itself */
	CHECK_STR(json_string_value(json_object_get(r.data, "text")), r.output);
	CHECK(json_is_false(json_object_get(r.data, "truncated")));
	/* absolute path, raw */
	{
		char p[PATH_MAX];

		wpath(p, "r.txt");
		CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"%s\", \"raw\": true}", p), 0);
	}
	CHECK_STR(r.output, "alpha\nbeta\ngamma\n");
	/* offset and limit */
	CHECK_INT(
	    run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"r.txt\", \"offset\": 2, \"limit\": 1}"), 0);
	CHECK_STR(r.output, "     2\tbeta\n[truncated: 1 lines shown; read on with offset=3]\n");
	CHECK(json_integer_value(json_object_get(r.data, "next_offset")) == 3);
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"r.txt\", \"offset\": 3}"), 0);
	CHECK_STR(r.output, "     3\tgamma\n");
	CHECK_INT(
	    run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"r.txt\", \"offset\": 0, \"limit\": 3}"), 0);
	CHECK_STR(r.output, "     1\talpha\n     2\tbeta\n     3\tgamma\n");
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r,
		      "{\"path\": \"r.txt\", \"offset\": 2, \"limit\": 5, \"raw\": true}"),
		  0);
	CHECK_STR(r.output, "beta\ngamma\n");
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"r.txt\", \"offset\": 4}"), 0);
	CHECK(!r.ok && has(r.error, "past the end") && has(r.error, "3 lines"));
	/* no newline at the end */
	puts_file("nonl.txt", "one\ntwo");
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"nonl.txt\"}"), 0);
	CHECK_STR(r.output, "     1\tone\n     2\ttwo");
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"nonl.txt\", \"offset\": 3}"), 0);
	CHECK(!r.ok && has(r.error, "2 lines"));
	/* empty */
	puts_file("empty.txt", "");
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"empty.txt\", \"raw\": true}"), 0);
	CHECK(r.ok && r.output && r.output_len == 0 && r.output[0] == '\0');
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"empty.txt\"}"), 0);
	CHECK(r.ok && has(r.output, "empty"));
	/* big line numbers keep the tab */
	{
		struct moat_buf b = MOAT_BUF_INIT;

		for (int i = 1; i <= 1000001; i++)
			moat_buf_append(&b, "x\n", 2);
		put("many.txt", b.data, b.len);
		moat_buf_release(&b);
	}
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r,
		      "{\"path\": \"many.txt\", \"offset\": 999999, \"limit\": 3}"),
		  0);
	CHECK_STR(r.output, "999999\tx\n1000000\tx\n1000001\tx\n");
	/* binary: a NUL in the first 8 KiB; reported, never dumped */
	put("bin.dat", "PK\x03\x04\0SECRETBYTES", 16);
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"bin.dat\"}"), 0);
	CHECK(r.ok && has(r.output, "binary") && !has(r.output, "SECRETBYTES"));
	CHECK(json_is_true(json_object_get(r.data, "binary")));
	{
		/* a NUL just past the probe is not binary; it is shown as U+FFFD */
		char *buf = malloc(8193);

		memset(buf, 'a', 8193);
		buf[8192] = '\0';
		put("late-nul.txt", buf, 8193);
		buf[8191] = '\0';
		put("edge-nul.txt", buf, 8193);
		free(buf);
	}
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"late-nul.txt\", \"raw\": true}"), 0);
	CHECK(r.ok && !has(r.output, "binary") && r.output_len == 8192 + 3 &&
	      !memcmp(r.output + 8192, "\xef\xbf\xbd", 3));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"edge-nul.txt\", \"raw\": true}"), 0);
	CHECK(r.ok && has(r.output, "binary"));
	/* invalid UTF-8 becomes U+FFFD; the output is valid UTF-8 */
	put("latin1.txt", "caf\xe9\n", 5);
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"latin1.txt\", \"raw\": true}"), 0);
	CHECK_STR(r.output, "caf\xef\xbf\xbd\n");
	/* not a file */
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \".\"}"), 0);
	CHECK(!r.ok && has(r.error, "directory") && has(r.error, "list_directory"));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"missing.txt\"}"), 0);
	CHECK(!r.ok && has(r.error, "does not exist"));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"r.txt/x\"}"), 0);
	CHECK(!r.ok && has(r.error, "not a directory"));
	{
		char p[PATH_MAX];

		/* a FIFO is refused at once, never opened (the call would hang) */
		wpath(p, "fifo");
		CHECK(mkfifo(p, 0600) == 0);
		alarm(10);
		CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"fifo\"}"), 0);
		alarm(0);
		CHECK(!r.ok && has(r.error, "not a regular file"));
	}
	/* outside the workspace: the allow-list's root fences it */
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"/etc/hostname\"}"), 0);
	CHECK(!r.ok && has(r.error, "outside the allowed"));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"../../etc/hostname\"}"), 0);
	CHECK(!r.ok && has(r.error, "outside the allowed"));
	moat_tool_result_release(&r);
}

static void test_read_caps(void)
{
	struct moat_tool_result r;
	size_t cap = MOAT_READ_MAX_BYTES;
	char *buf = malloc(cap + 2);

	moat_tool_result_init(&r);
	/* one line of exactly the cap (raw): whole; one byte more: cut */
	memset(buf, 'a', cap + 1);
	put("cap-eq.txt", buf, cap);
	put("cap-over.txt", buf, cap + 1);
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"cap-eq.txt\", \"raw\": true}"), 0);
	CHECK(r.ok && r.output_len == cap && json_is_false(json_object_get(r.data, "truncated")));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"cap-over.txt\", \"raw\": true}"), 0);
	CHECK(r.ok && r.output_len > cap && !memcmp(r.output, buf, cap) && r.output[cap] == '\n' &&
	      has(r.output + cap, "[truncated: line 1 is longer than"));
	/* many lines: exactly the cap in raw mode is whole */
	for (size_t i = 99; i < cap; i += 100)
		buf[i] = '\n';
	put("lines-eq.txt", buf, cap);
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r,
		      "{\"path\": \"lines-eq.txt\", \"raw\": true, \"limit\": 100000}"),
		  0);
	CHECK(r.ok && r.output_len == cap && !memcmp(r.output, buf, cap));
	/* one byte more: whole lines up to the cap, then how to read on */
	buf[cap] = 'z';
	put("lines-over.txt", buf, cap + 1);
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r,
		      "{\"path\": \"lines-over.txt\", \"raw\": true, \"limit\": 100000}"),
		  0);
	{
		size_t whole = cap / 100 * 100; /* the bytes of the whole lines */

		CHECK(r.ok && !memcmp(r.output, buf, whole) &&
		      has(r.output + whole, "[truncated at the"));
		CHECK(has(r.output, "offset=2622]"));
		CHECK(json_integer_value(json_object_get(r.data, "next_offset")) ==
		      (json_int_t)(whole / 100 + 1));
	}
	/* the numbered output counts its numbers against the cap */
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"lines-eq.txt\", \"limit\": 100000}"),
		  0);
	CHECK(r.ok && json_is_true(json_object_get(r.data, "truncated")));
	{
		const char *mark = strstr(r.output, "[truncated");

		CHECK(mark && (size_t)(mark - r.output) <= cap);
	}
	free(buf);

	/* MOAT_READ_DEFAULT_LINES without a limit: exactly that many is whole */
	{
		struct moat_buf b = MOAT_BUF_INIT;

		for (unsigned i = 0; i < MOAT_READ_DEFAULT_LINES; i++)
			moat_buf_append(&b, "l\n", 2);
		put("dl-eq.txt", b.data, b.len);
		moat_buf_append(&b, "l\n", 2);
		put("dl-over.txt", b.data, b.len);
		moat_buf_release(&b);
	}
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"dl-eq.txt\", \"raw\": true}"), 0);
	CHECK(r.ok && r.output_len == 2 * MOAT_READ_DEFAULT_LINES);
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"dl-over.txt\", \"raw\": true}"), 0);
	CHECK(r.ok && has(r.output, "2000 lines shown; read on with offset=2001]"));
	CHECK(json_integer_value(json_object_get(r.data, "lines")) == MOAT_READ_DEFAULT_LINES);
	moat_tool_result_release(&r);
}

static void test_write(void)
{
	struct moat_tool_result r;
	mode_t old = umask(022);

	moat_tool_result_init(&r);
	/* create: 0644 less the umask */
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"new.txt\", \"content\": \"one\\n\"}"),
		  0);
	CHECK(r.ok && has(r.output, "4 bytes"));
	CHECK(json_is_true(json_object_get(r.data, "created")));
	CHECK(file_is("new.txt", "one\n"));
	CHECK_INT(mode_of("new.txt"), 0644);
	umask(077);
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"private.txt\", \"content\": \"p\"}"),
		  0);
	CHECK_INT(mode_of("private.txt"), 0600);
	umask(022);
	/* replace: the mode is kept, setuid and setgid dropped */
	{
		char p[PATH_MAX];

		wpath(p, "new.txt");
		chmod(p, 0600);
		CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r,
			      "{\"path\": \"new.txt\", \"content\": \"two\\n\"}"),
			  0);
		CHECK(r.ok && json_is_false(json_object_get(r.data, "created")));
		CHECK(file_is("new.txt", "two\n"));
		CHECK_INT(mode_of("new.txt"), 0600);
		chmod(p, 0755);
		CHECK_INT(
		    run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"new.txt\", \"content\": \"\"}"), 0);
		CHECK(r.ok && file_is("new.txt", ""));
		CHECK_INT(mode_of("new.txt"), 0755);
		chmod(p, 06755);
		CHECK_INT(
		    run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"new.txt\", \"content\": \"s\"}"),
		    0);
		CHECK_INT(mode_of("new.txt"), 0755);
	}
	/* UTF-8 and escapes reach the disk as they are */
	CHECK_INT(
	    run(MOAT_TOOL_WRITE_FILE, &r,
		"{\"path\": \"sub/../u.txt\", \"content\": \"caf\\u00e9\\t\\\"q\\\"\\r\\n\"}"),
	    0);
	CHECK(file_is("u.txt", "caf\xc3\xa9\t\"q\"\r\n"));
	/* refusals */
	{
		char p[PATH_MAX];

		wpath(p, "adir");
		mkdir(p, 0755);
	}
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"adir\", \"content\": \"x\"}"), 0);
	CHECK(!r.ok && has(r.error, "is a directory"));
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"fifo\", \"content\": \"x\"}"), 0);
	CHECK(!r.ok && has(r.error, "not a regular file"));
	CHECK_INT(
	    run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"/tmp/moat-outside\", \"content\": \"x\"}"),
	    0);
	CHECK(!r.ok && has(r.error, "outside the allowed"));
	CHECK(access("/tmp/moat-outside", F_OK) < 0);
	CHECK_INT(count_temps(), 0);

	/* the content cap, at the boundary */
	{
		size_t cap = MOAT_WRITE_MAX_BYTES;
		char *buf = malloc(cap + 1);
		json_t *a;
		size_t len;
		char *got;

		memset(buf, 'w', cap + 1);
		a = json_pack("{s:s, s:o}", "path", "capw.txt", "content", json_stringn(buf, cap));
		CHECK_INT(run_args(MOAT_TOOL_WRITE_FILE, &r, a), 0);
		CHECK(r.ok);
		got = get("capw.txt", &len);
		CHECK(got && len == cap && !memcmp(got, buf, cap));
		free(got);
		a = json_pack("{s:s, s:o}", "path", "capw.txt", "content",
			      json_stringn(buf, cap + 1));
		CHECK_INT(run_args(MOAT_TOOL_WRITE_FILE, &r, a), -EINVAL);
		CHECK(has(r.error, "'content'"));
		got = get("capw.txt", &len);
		CHECK(got && len == cap);
		free(got);
		free(buf);
	}
	umask(old);
	moat_tool_result_release(&r);
}

static bool exists(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	wpath(p, rel);
	return lstat(p, &st) == 0;
}

/* created_dirs holds exactly these workspace-relative directories */
static bool made_dirs(const struct moat_tool_result *r, int n, ...)
{
	json_t *a = json_object_get(r->data, "created_dirs");
	va_list ap;
	bool ok = json_is_array(a) && json_array_size(a) == (size_t)n;

	va_start(ap, n);
	for (int i = 0; ok && i < n; i++) {
		char p[PATH_MAX];

		wpath(p, va_arg(ap, const char *));
		ok = !strcmp(json_string_value(json_array_get(a, (size_t)i)), p) &&
		     has(r->output, p);
	}
	va_end(ap);
	return ok;
}

/* write_file makes missing directories: each checked before any is made,
 * never through a symbolic link, nothing left when the write fails. */
static void test_write_mkdir(void)
{
	struct moat_tool_result r;
	char p[PATH_MAX], t[PATH_MAX], out[PATH_MAX];
	mode_t old = umask(022);

	moat_tool_result_init(&r);
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"nodir/x.txt\", \"content\": \"x\"}"),
		  0);
	CHECK(r.ok && file_is("nodir/x.txt", "x") && made_dirs(&r, 1, "nodir"));
	CHECK(has(r.output, "Created the directory ") && has(r.output, "Created a file of 1 byte"));
	CHECK_INT(mode_of("nodir"), 0755);
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r,
		      "{\"path\": \"d1/d2/d3/deep.txt\", \"content\": \"deep\"}"),
		  0);
	CHECK(r.ok && file_is("d1/d2/d3/deep.txt", "deep") &&
	      made_dirs(&r, 3, "d1", "d1/d2", "d1/d2/d3"));
	CHECK(has(r.output, "Created the directories "));
	/* only the missing ones; none when the directory is there */
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"d1/e1/f.txt\", \"content\": \"f\"}"),
		  0);
	CHECK(r.ok && made_dirs(&r, 1, "d1/e1"));
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"d1/e1/g.txt\", \"content\": \"g\"}"),
		  0);
	CHECK(r.ok && made_dirs(&r, 0) && !has(r.output, "director"));
	umask(077);
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"priv/p.txt\", \"content\": \"p\"}"),
		  0);
	CHECK(r.ok);
	CHECK_INT(mode_of("priv"), 0700);
	umask(022);

	/* a file in the way: nothing made */
	puts_file("plain", "p");
	CHECK_INT(
	    run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"plain/sub/x.txt\", \"content\": \"x\"}"),
	    0);
	CHECK(!r.ok && has(r.error, "not a directory") && file_is("plain", "p"));
	/* a symbolic link leading out of the allowed paths: nothing made there */
	if (snprintf(out, sizeof(out), "%s-out", ws) >= (int)sizeof(out))
		abort();
	CHECK(mkdir(out, 0755) == 0);
	wpath(p, "lout");
	CHECK(symlink(out, p) == 0);
	CHECK_INT(
	    run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"lout/new/x.txt\", \"content\": \"x\"}"), 0);
	CHECK(!r.ok && has(r.error, "outside the allowed"));
	if (snprintf(t, sizeof(t), "%s/new", out) >= (int)sizeof(t))
		abort();
	CHECK(access(t, F_OK) < 0);
	/* a dangling link inside: no directory is made through it */
	wpath(p, "dl");
	wpath(t, "dl-target");
	CHECK(symlink(t, p) == 0);
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"dl/sub/x.txt\", \"content\": \"x\"}"),
		  0);
	CHECK(!r.ok && has(r.error, "symbolic link") && has(r.error, "never through a link"));
	CHECK(!exists("dl-target") && !exists("dl/sub"));
	/* a link at the file's name into a missing directory: not made either */
	wpath(p, "ln-file");
	wpath(t, "ln-dir/f.txt");
	CHECK(symlink(t, p) == 0);
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"ln-file\", \"content\": \"x\"}"), 0);
	CHECK(!r.ok && has(r.error, "does not exist") && has(r.error, "link") && !exists("ln-dir"));

	/* denied: a directory to make, or the file, refuses before any is made */
	{
		struct moat_config *c2;
		struct moat_policy *p2 = NULL;
		struct moat_error err;
		const struct moat_policy *keep = env.policy;
		char json[2 * PATH_MAX + 200];

		snprintf(json, sizeof(json),
			 "{\"allowed_paths\": [\"%s/**\"], \"denied_paths\": [\"%s/vault\", "
			 "\"**/*.key\"]}",
			 ws, ws);
		CHECK(moat_config_new(&c2) == 0 &&
		      moat_config_load_string(c2, json, strlen(json), "test", 0, &err) == 0 &&
		      moat_policy_new(c2, NULL, ws, &p2, &err) == 0);
		env.policy = p2;
		CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r,
			      "{\"path\": \"vault/inner/x.txt\", \"content\": \"x\"}"),
			  0);
		CHECK(!r.ok && has(r.error, "refused") && has(r.error, "vault"));
		CHECK(!exists("vault"));
		CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r,
			      "{\"path\": \"kdir/sub/a.key\", \"content\": \"x\"}"),
			  0);
		CHECK(!r.ok && has(r.error, "refused") && !exists("kdir"));
		/* reached through a link inside: the real path is what is checked */
		wpath(p, "to-ws");
		CHECK(symlink(".", p) == 0);
		CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r,
			      "{\"path\": \"to-ws/vault/x.txt\", \"content\": \"x\"}"),
			  0);
		CHECK(!r.ok && has(r.error, "refused") && !exists("vault"));
		env.policy = keep;
		moat_policy_free(p2);
		moat_config_free(c2);
	}

	/* a write that fails after its directories were made leaves none:
	 * a file size limit makes the write itself fail (EFBIG) */
	{
		pid_t pid = fork();
		int st = -1;

		if (pid == 0) {
			struct rlimit rl = {4, 4};

			signal(SIGXFSZ, SIG_IGN);
			setrlimit(RLIMIT_FSIZE, &rl);
			moat_tool_result_release(&r);
			if (run(MOAT_TOOL_WRITE_FILE, &r,
				"{\"path\": \"big1/big2/x.txt\", \"content\": \"0123456789\"}") !=
				0 ||
			    r.ok)
				_exit(r.ok ? 3 : 4);
			_exit(exists("big1") ? 5 : 0);
		}
		CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		CHECK(!exists("big1"));
	}
	CHECK_INT(count_temps(), 0);
	nftw(out, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	umask(old);
	moat_tool_result_release(&r);
}

static void test_edit(void)
{
	struct moat_tool_result r;
	char p[PATH_MAX];

	moat_tool_result_init(&r);
	puts_file("e.c", "int a = 1;\nint b = 1;\nint c = 2;\n");
	wpath(p, "e.c");
	chmod(p, 0640);
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"e.c\", \"old_string\": \"int c = 2;\", \"new_string\": "
		      "\"int c = 3;\"}"),
		  0);
	CHECK(r.ok && has(r.output, "1 occurrence"));
	CHECK(file_is("e.c", "int a = 1;\nint b = 1;\nint c = 3;\n"));
	CHECK_INT(mode_of("e.c"), 0640);
	/* not found: the file is untouched, the error says what to do */
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"e.c\", \"old_string\": \"int  a\", \"new_string\": \"x\"}"),
		  0);
	CHECK(!r.ok && has(r.error, "not found") && has(r.error, "exactly"));
	CHECK(file_is("e.c", "int a = 1;\nint b = 1;\nint c = 3;\n"));
	/* not unique: how many, and the two ways out */
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"e.c\", \"old_string\": \" = 1;\", \"new_string\": \" = 9;\"}"),
		  0);
	CHECK(!r.ok && has(r.error, "2 times") && has(r.error, "replace_all") &&
	      has(r.error, "surrounding"));
	CHECK(file_is("e.c", "int a = 1;\nint b = 1;\nint c = 3;\n"));
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"e.c\", \"old_string\": \" = 1;\", \"new_string\": \" = 9;\", "
		      "\"replace_all\": true}"),
		  0);
	CHECK(r.ok && has(r.output, "2 occurrences"));
	CHECK(json_integer_value(json_object_get(r.data, "replacements")) == 2);
	CHECK(file_is("e.c", "int a = 9;\nint b = 9;\nint c = 3;\n"));
	/* replace_all: false with one match is fine; deletion; overlapping text */
	puts_file("o.txt", "aaa");
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"o.txt\", \"old_string\": \"aa\", \"new_string\": \"b\", "
		      "\"replace_all\": true}"),
		  0);
	CHECK(r.ok && file_is("o.txt", "ba"));
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"o.txt\", \"old_string\": \"b\", \"new_string\": \"\", "
		      "\"replace_all\": false}"),
		  0);
	CHECK(r.ok && file_is("o.txt", "a"));
	/* refusals */
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"o.txt\", \"old_string\": \"a\", \"new_string\": \"a\"}"),
		  0);
	CHECK(!r.ok && has(r.error, "same"));
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"none.txt\", \"old_string\": \"a\", \"new_string\": \"b\"}"),
		  0);
	CHECK(!r.ok && has(r.error, "does not exist") && has(r.error, "write_file"));
	CHECK(get("none.txt", NULL) == NULL);
	put("bin.dat", "PK\x03\x04\0SECRETBYTES", 16);
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"bin.dat\", \"old_string\": \"PK\", \"new_string\": \"ZZ\"}"),
		  0);
	CHECK(!r.ok && has(r.error, "binary"));
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"adir\", \"old_string\": \"a\", \"new_string\": \"b\"}"),
		  0);
	CHECK(!r.ok && has(r.error, "directory"));
	/* the result may not grow past the cap; exactly the cap is fine */
	{
		size_t cap = MOAT_WRITE_MAX_BYTES, len;
		char *buf = malloc(cap), *got;

		memset(buf, 'e', cap - 1);
		buf[cap - 1] = 'X';
		put("grow.txt", buf, cap);
		CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
			      "{\"path\": \"grow.txt\", \"old_string\": \"X\", \"new_string\": "
			      "\"YY\"}"),
			  0);
		CHECK(!r.ok && has(r.error, "limit"));
		CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
			      "{\"path\": \"grow.txt\", \"old_string\": \"eX\", \"new_string\": "
			      "\"YY\"}"),
			  0);
		CHECK(r.ok);
		got = get("grow.txt", &len);
		CHECK(got && len == cap && !memcmp(got + cap - 2, "YY", 2));
		free(got);
		/* a file over the cap is not edited */
		put("huge.txt", buf, cap);
		{
			int fd;

			wpath(p, "huge.txt");
			fd = open(p, O_WRONLY | O_APPEND);
			CHECK(write(fd, "!", 1) == 1);
			close(fd);
		}
		CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
			      "{\"path\": \"huge.txt\", \"old_string\": \"!\", \"new_string\": "
			      "\"?\"}"),
			  0);
		CHECK(!r.ok && has(r.error, "limit"));
		free(buf);
	}
	CHECK_INT(count_temps(), 0);
	moat_tool_result_release(&r);
}

/* Line endings: a CRLF file edited with "\n" line breaks (models never
 * send "\r") is matched with them read as "\r\n" and keeps CRLF; a file
 * with one kind of line ending never gets the other from new_string. */
static void test_edit_eol(void)
{
	struct moat_tool_result r;

	moat_tool_result_init(&r);
	/* CRLF file, LF old_string and new_string */
	puts_file("crlf.txt", "a\r\nb\r\nc\r\n");
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"crlf.txt\", \"old_string\": \"b\\nc\\n\", \"new_string\": "
		      "\"d\\ne\\nf\\n\"}"),
		  0);
	CHECK(r.ok && has(r.output, "1 occurrence") && has(r.output, "CRLF"));
	CHECK(file_is("crlf.txt", "a\r\nd\r\ne\r\nf\r\n"));
	/* and the structured result says so too */
	CHECK(json_is_true(json_object_get(r.data, "crlf_matched")));
	CHECK(json_integer_value(json_object_get(r.data, "bytes")) == 12);
	/* a leading "\n" in old_string, one already written "\r\n" in new_string */
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"crlf.txt\", \"old_string\": \"\\nd\", \"new_string\": "
		      "\"\\nD\\r\\nX\\nY\"}"),
		  0);
	CHECK(r.ok);
	CHECK(file_is("crlf.txt", "a\r\nD\r\nX\r\nY\r\ne\r\nf\r\n"));
	/* a leading "\n" is the whole line break, never its second half */
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"crlf.txt\", \"old_string\": \"\\nY\", \"new_string\": "
		      "\"Y\"}"),
		  0);
	CHECK(r.ok && file_is("crlf.txt", "a\r\nD\r\nXY\r\ne\r\nf\r\n"));
	/* uniqueness and replace_all, with the line breaks read as CRLF */
	puts_file("kv.txt", "k\r\nv\r\nk\r\nv\r\n");
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"kv.txt\", \"old_string\": \"k\\nv\", \"new_string\": "
		      "\"K\\nV\"}"),
		  0);
	CHECK(!r.ok && has(r.error, "2 times") && has(r.error, "CRLF") &&
	      has(r.error, "replace_all"));
	CHECK(file_is("kv.txt", "k\r\nv\r\nk\r\nv\r\n"));
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"kv.txt\", \"old_string\": \"k\\nv\", \"new_string\": "
		      "\"K\\nV\", \"replace_all\": true}"),
		  0);
	CHECK(r.ok && json_integer_value(json_object_get(r.data, "replacements")) == 2);
	CHECK(file_is("kv.txt", "K\r\nV\r\nK\r\nV\r\n"));
	/* still not found: the error says the file has CRLF line endings */
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"kv.txt\", \"old_string\": \"K\\nX\", \"new_string\": "
		      "\"Z\"}"),
		  0);
	CHECK(!r.ok && has(r.error, "not found") && has(r.error, "CRLF line endings"));
	CHECK(file_is("kv.txt", "K\r\nV\r\nK\r\nV\r\n"));
	/* an exact match in a CRLF file: new_string's "\n" written "\r\n" */
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"kv.txt\", \"old_string\": \"V\\r\\nK\", \"new_string\": "
		      "\"V\\nW\\nK\"}"),
		  0);
	CHECK(r.ok && file_is("kv.txt", "K\r\nV\r\nW\r\nK\r\nV\r\n"));

	/* LF file, CRLF new_string: written with LF */
	puts_file("lf.txt", "a\nb\n");
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"lf.txt\", \"old_string\": \"a\", \"new_string\": "
		      "\"c\\r\\nd\"}"),
		  0);
	CHECK(r.ok && has(r.output, "LF"));
	CHECK(file_is("lf.txt", "c\nd\nb\n"));
	CHECK(json_integer_value(json_object_get(r.data, "bytes")) == 6);
	/* differing only in line endings: nothing to change, untouched */
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"lf.txt\", \"old_string\": \"c\\nd\", \"new_string\": "
		      "\"c\\r\\nd\"}"),
		  0);
	CHECK(!r.ok && has(r.error, "line endings") && has(r.error, "nothing to change"));
	CHECK(file_is("lf.txt", "c\nd\nb\n"));
	/* CRLF old_string in an LF file: not found, and the error says why */
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"lf.txt\", \"old_string\": \"c\\r\\nd\", \"new_string\": "
		      "\"x\"}"),
		  0);
	CHECK(!r.ok && has(r.error, "not found") && has(r.error, "LF line endings"));
	/* old_string matched with a "\r" of the file: new_string as given */
	puts_file("cr.txt", "x\ry\nz\n");
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"cr.txt\", \"old_string\": \"x\\ry\", \"new_string\": "
		      "\"1\\r\\n2\"}"),
		  0);
	CHECK(r.ok && file_is("cr.txt", "1\r\n2\nz\n"));
	/* mixed line endings: no guessing, the error says so */
	puts_file("mix.txt", "a\r\nb\nc\r\n");
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"mix.txt\", \"old_string\": \"a\\nb\", \"new_string\": "
		      "\"x\"}"),
		  0);
	CHECK(!r.ok && has(r.error, "mixes CRLF and LF"));
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"mix.txt\", \"old_string\": \"b\", \"new_string\": "
		      "\"b\\r\\nB\\nq\"}"),
		  0);
	CHECK(r.ok && file_is("mix.txt", "a\r\nb\r\nB\nq\nc\r\n"));
	/* no line break in the file: new_string as given */
	puts_file("one.txt", "abc");
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"one.txt\", \"old_string\": \"b\", \"new_string\": "
		      "\"\\r\\n\"}"),
		  0);
	CHECK(r.ok && file_is("one.txt", "a\r\nc"));
	CHECK_INT(count_temps(), 0);
	moat_tool_result_release(&r);
}

static const char *fake_home;

static const char *fake_env(const char *name, void *ud)
{
	(void)ud;
	return strcmp(name, "HOME") == 0 ? fake_home : NULL;
}

/* A policy with HOME as the policy sees it (the fake environment stays
 * installed: the tools take the home from the same lookup). */
static struct moat_policy *home_policy(const char *home, const char *extra_json)
{
	char json[3 * PATH_MAX];
	struct moat_config *c = NULL;
	struct moat_policy *p = NULL;
	struct moat_error err;

	fake_home = home;
	moat_config_set_env(fake_env, NULL);
	snprintf(json, sizeof(json), "{\"allowed_paths\": [\"%s/**\"]%s}", ws,
		 extra_json ? extra_json : "");
	if (moat_config_new(&c) < 0 ||
	    moat_config_load_string(c, json, strlen(json), "test", 0, &err) < 0 ||
	    moat_policy_new(c, NULL, ws, &p, &err) < 0) {
		fprintf(stderr, "home_policy: %s\n", err.msg);
		abort();
	}
	moat_config_free(c);
	return p;
}

/* The verdict the policy gives read_file for a path argument. */
static enum moat_verdict verdict_of(struct moat_policy *p, const char *tool, const char *path)
{
	struct moat_decision d;
	struct moat_error err;
	json_t *a = json_pack("{s:s}", "path", path);
	int r = moat_policy_check_args(p, tool, a, &d, &err);

	json_decref(a);
	return r < 0 ? MOAT_DENY : d.verdict;
}

/* "~" and "~/..." are the home directory, as the policy reads them; "~name"
 * is refused; no home, no expansion. Judged on disk: the file read or
 * written is the one under the home, no literal "~" appears. */
static void test_tilde(void)
{
	struct moat_tool_result r;
	struct moat_policy *p;
	char home[PATH_MAX], spelled[PATH_MAX + 16], extra[PATH_MAX + 64];

	moat_tool_result_init(&r);
	wpath(home, "h");
	mkdir(home, 0755);
	puts_file("h/t.txt", "TILDE");
	puts_file("h/secret.txt", "CANARY");
	puts_file("top.txt", "TOP");
	/* HOME as written in the environment: normalised as the policy does */
	snprintf(spelled, sizeof(spelled), "%s/./h//", ws);
	snprintf(extra, sizeof(extra), ", \"denied_paths\": [\"%s/secret.txt\"]", home);
	p = home_policy(spelled, extra);
	env.policy = p;
	CHECK(verdict_of(p, "read_file", "~/t.txt") != MOAT_DENY);
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"~/t.txt\", \"raw\": true}"), 0);
	CHECK(r.ok && r.output && !strcmp(r.output, "TILDE"));
	wpath(extra, "h/t.txt");
	CHECK_STR(json_string_value(json_object_get(r.data, "path")), extra);
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"~/../top.txt\", \"raw\": true}"), 0);
	CHECK(r.ok && r.output && !strcmp(r.output, "TOP"));
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"~/new.txt\", \"content\": \"N\"}"),
		  0);
	CHECK(r.ok && file_is("h/new.txt", "N"));
	CHECK_INT(run(MOAT_TOOL_EDIT_FILE, &r,
		      "{\"path\": \"~/new.txt\", \"old_string\": \"N\", \"new_string\": \"M\"}"),
		  0);
	CHECK(r.ok && file_is("h/new.txt", "M"));
	CHECK_INT(run(MOAT_TOOL_LIST_DIRECTORY, &r, "{\"path\": \"~\"}"), 0);
	CHECK(r.ok && has(r.output, "t.txt") && has(r.output, "new.txt"));
	CHECK_INT(mode_of("~"), -1);
	/* the policy denies ~/secret.txt; the tool, run without it, opens that
	 * same expanded path and refuses it after open */
	CHECK_INT(verdict_of(p, "read_file", "~/secret.txt"), MOAT_DENY);
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"~/secret.txt\"}"), 0);
	CHECK(!r.ok && has(r.error, "refused") && !has(r.output, "CANARY"));
	/* "~name": refused, whatever the policy makes of it; nothing created */
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"~root/.bashrc\"}"), -EINVAL);
	CHECK(has(r.error, "'~root'") && has(r.error, "absolute path"));
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"~h/x.txt\", \"content\": \"x\"}"),
		  -EINVAL);
	CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"~\", \"content\": \"x\"}"), 0);
	CHECK(!r.ok && has(r.error, "directory"));
	CHECK_INT(mode_of("~h"), -1);
	/* a name starting with "~" in the workspace: spelled "./~..." */
	wpath(spelled, "~lit");
	mkdir(spelled, 0755);
	puts_file("~lit/f.txt", "LIT");
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"./~lit/f.txt\", \"raw\": true}"), 0);
	CHECK(r.ok && r.output && !strcmp(r.output, "LIT"));
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"~lit/f.txt\"}"), -EINVAL);
	CHECK(has(r.error, "./~lit"));
	/* "~" in the middle of a path is a plain name */
	CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"h/~/t.txt\"}"), 0);
	CHECK(!r.ok && has(r.error, "/h/~/t.txt") && has(r.error, "does not exist"));
	env.policy = pol;
	moat_policy_free(p);

	/* no home known (unset, relative, empty): the policy denies, the
	 * tool refuses, nothing is created under a literal "~"; "//srv/share"
	 * is "/srv/share" to both */
	{
		const char *homes[] = {NULL, "h", "", "//srv/share"};

		for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
			p = home_policy(homes[i], NULL);
			env.policy = p;
			CHECK_INT(verdict_of(p, "read_file", "~/t.txt"), MOAT_DENY);
			CHECK_INT(run(MOAT_TOOL_READ_FILE, &r, "{\"path\": \"~/t.txt\"}"), 0);
			CHECK(!r.ok &&
			      has(r.error, i < 3 ? "no home directory" : "/srv/share/t.txt"));
			CHECK_INT(run(MOAT_TOOL_WRITE_FILE, &r,
				      "{\"path\": \"~/n2.txt\", \"content\": \"x\"}"),
				  0);
			CHECK(!r.ok && has(r.error, i < 3 ? "no home directory" : "outside"));
			CHECK_INT(mode_of("~"), -1);
			env.policy = pol;
			moat_policy_free(p);
		}
	}
	moat_config_set_env(NULL, NULL);
	fake_home = NULL;
	moat_tool_result_release(&r);
}

static void test_list(void)
{
	struct moat_tool_result r;
	char p[PATH_MAX];
	json_t *e;

	moat_tool_result_init(&r);
	wpath(p, "ls");
	mkdir(p, 0755);
	puts_file("ls/b.txt", "12345");
	puts_file("ls/A.txt", "");
	wpath(p, "ls/c");
	mkdir(p, 0755);
	wpath(p, "ls/link");
	symlink("b.txt", p);
	wpath(p, "ls/pipe");
	mkfifo(p, 0600);
	put("ls/we\nird\\", "x", 1);
	CHECK_INT(run(MOAT_TOOL_LIST_DIRECTORY, &r, "{\"path\": \"ls\"}"), 0);
	CHECK(r.ok);
	CHECK_STR(r.output, "file               0  A.txt\n"
			    "file               5  b.txt\n"
			    "dir                -  c/\n"
			    "symlink            5  link -> b.txt\n"
			    "other              0  pipe\n"
			    "file               1  we\\x0aird\\x5c\n");
	e = json_object_get(r.data, "entries");
	CHECK(json_array_size(e) == 6);
	CHECK_STR(json_string_value(json_object_get(json_array_get(e, 2), "type")), "dir");
	CHECK(json_integer_value(json_object_get(json_array_get(e, 1), "size")) == 5);
	CHECK(json_integer_value(json_object_get(r.data, "total")) == 6);
	/* the link's target, as the text shows it; none for the others */
	CHECK_STR(json_string_value(json_object_get(json_array_get(e, 3), "target")), "b.txt");
	CHECK(!json_object_get(json_array_get(e, 1), "target"));
	/* empty, not a directory, missing */
	wpath(p, "ls/c");
	CHECK_INT(run(MOAT_TOOL_LIST_DIRECTORY, &r, "{\"path\": \"%s\"}", p), 0);
	CHECK(r.ok && has(r.output, "empty"));
	CHECK_INT(run(MOAT_TOOL_LIST_DIRECTORY, &r, "{\"path\": \"ls/b.txt\"}"), 0);
	CHECK(!r.ok && has(r.error, "not a directory"));
	CHECK_INT(run(MOAT_TOOL_LIST_DIRECTORY, &r, "{\"path\": \"ls/nope\"}"), 0);
	CHECK(!r.ok && has(r.error, "does not exist"));
	CHECK_INT(run(MOAT_TOOL_LIST_DIRECTORY, &r, "{\"path\": \"/\"}"), 0);
	CHECK(!r.ok && has(r.error, "outside"));

	/* the cap: exactly MOAT_LIST_MAX_ENTRIES is whole, one more is cut
	 * and said so; the smallest names are the ones kept */
	wpath(p, "many");
	mkdir(p, 0755);
	for (unsigned i = 0; i < MOAT_LIST_MAX_ENTRIES; i++) {
		char name[64];

		/* created in descending order, so the heap has work to do */
		snprintf(name, sizeof(name), "many/f%05u", MOAT_LIST_MAX_ENTRIES - i);
		put(name, "", 0);
	}
	CHECK_INT(run(MOAT_TOOL_LIST_DIRECTORY, &r, "{\"path\": \"many\"}"), 0);
	CHECK(r.ok && !has(r.output, "truncated"));
	CHECK(json_array_size(json_object_get(r.data, "entries")) == MOAT_LIST_MAX_ENTRIES);
	CHECK(json_is_false(json_object_get(r.data, "truncated")));
	put("many/f00000", "", 0);
	CHECK_INT(run(MOAT_TOOL_LIST_DIRECTORY, &r, "{\"path\": \"many\"}"), 0);
	CHECK(r.ok && has(r.output, "[truncated: the first 1000 of 1001 entries"));
	CHECK(json_is_true(json_object_get(r.data, "truncated")));
	e = json_object_get(r.data, "entries");
	CHECK(json_array_size(e) == MOAT_LIST_MAX_ENTRIES);
	CHECK_STR(json_string_value(json_object_get(json_array_get(e, 0), "name")), "f00000");
	CHECK_STR(json_string_value(json_object_get(json_array_get(e, 999), "name")), "f00999");
	moat_tool_result_release(&r);
}

int main(void)
{
	setup();
	test_registry();
	test_args();
	test_read();
	test_read_caps();
	test_write();
	test_write_mkdir();
	test_edit();
	test_edit_eol();
	test_tilde();
	test_list();
	moat_policy_free(pol);
	moat_config_free(cfg);
	nftw(ws, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}
