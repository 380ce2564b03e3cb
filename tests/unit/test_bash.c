/* The bash tool (src/tools/bash.c), run for real under the sandbox: output,
 * exit codes, signals, the caps and their marker at the boundary, timeouts
 * and cancellation killing the whole tree (checked in /proc), the working
 * directory guard, writes outside the workspace (a canary on disk), the
 * network of the no-network profile (a listener of ours that counts
 * connections), fallback refusals, and concurrent calls from 8 threads
 * that allocate all the while. Most of it runs through the fork server;
 * then the server itself: who forks the runner (the process tree), what it
 * keeps open, that it dies with its caller (kill -9, then /proc), that a
 * dead one is replaced by the direct fork, and that direct fork without a
 * server. Looks from outside wherever it can: files on disk, the process
 * table, the listener; never only at what the tool says. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/str.h"
#include "sandbox/sandbox.h"
#include "tools/tools.h"

#include "tap.h"

static char T[64], WS[PATH_MAX], OUT[PATH_MAX], HOME_DIR[PATH_MAX];
static char *envp[8];
static struct moat_config *cfg_default;
/* the fork server, started on an env of cfg_default; used while via_server */
static struct moat_tool_env srv_env;
static bool via_server;

static void result_clear(struct moat_tool_result *r)
{
	free(r->output);
	json_decref(r->data);
	memset(r, 0, sizeof(*r));
	r->exit_code = -1;
}

static int bash_env(const struct moat_tool_env *env, const struct moat_tool_call *call,
		    struct moat_tool_result *r, const char *json)
{
	json_error_t je;
	json_t *args = json_loads(json, JSON_ALLOW_NUL, &je);
	int ret;

	memset(r, 0, sizeof(*r));
	r->exit_code = -1;
	if (!args) {
		fprintf(stderr, "bad test JSON: %s: %s\n", json, je.text);
		return -999;
	}
	ret = moat_tool_bash(env, args, call, r);
	json_decref(args);
	return ret;
}

static void env_for(struct moat_tool_env *e, const struct moat_config *cfg)
{
	memset(e, 0, sizeof(*e));
	e->cfg = cfg;
	e->workspace = WS;
	e->env = envp;
	if (via_server && cfg == cfg_default)
		e->bash_server = srv_env.bash_server;
}

/* Run {"command": CMD} (plus extra JSON members) with the default config. */
static int bash(struct moat_tool_result *r, const char *cmd, const char *extra)
{
	struct moat_tool_env e;
	json_t *o = json_object();
	char *s;
	int ret;

	env_for(&e, cfg_default);
	json_object_set_new(o, "command", json_string(cmd));
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (extra) {
		/* splice extra members in before the closing brace */
		size_t l = strlen(s);
		char *t = malloc(l + strlen(extra) + 4);

		memcpy(t, s, l - 1);
		snprintf(t + l - 1, strlen(extra) + 4, ",%s}", extra);
		free(s);
		s = t;
	}
	ret = bash_env(&e, NULL, r, s);
	free(s);
	return ret;
}

/* A string field of data; "" when there is none, so a failing call fails
 * its checks instead of crashing the test. */
static const char *dstr(const struct moat_tool_result *r, const char *k)
{
	const char *s = json_string_value(json_object_get(r->data, k));

	return s ? s : "";
}

static const char *text(const struct moat_tool_result *r)
{
	return r->output ? r->output : "";
}

static long long dint(const struct moat_tool_result *r, const char *k)
{
	json_t *v = json_object_get(r->data, k);

	return json_is_integer(v) ? json_integer_value(v) : -12345;
}

static bool dtrue(const struct moat_tool_result *r, const char *k)
{
	return json_is_true(json_object_get(r->data, k));
}

static bool file_exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

static void mkdirs(const char *p)
{
	char b[PATH_MAX];

	snprintf(b, sizeof(b), "%s", p);
	for (char *c = b + 1; *c; c++)
		if (*c == '/') {
			*c = '\0';
			mkdir(b, 0755);
			*c = '/';
		}
	mkdir(b, 0755);
}

static void write_file(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *slurp(const char *p)
{
	static char buf[4096];
	int fd = open(p, O_RDONLY);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Processes whose command line contains tag (the process table, from
 * outside: the sandbox's PID namespace is visible from here). */
static int procs_with(const char *tag)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char p[300], buf[4096];
		int fd;
		ssize_t len;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%s/cmdline", e->d_name);
		fd = open(p, O_RDONLY);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		for (ssize_t i = 0; i < len; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[len] = '\0';
		if (strstr(buf, tag))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* procs_with(tag), once it is 0 or after 2 s: a process sent SIGKILL with
 * its namespace stays in the table until the kernel has torn it down, which
 * on a loaded machine can lag the call's return. */
static int procs_left(const char *tag)
{
	int n = procs_with(tag);

	for (int i = 0; n && i < 100; i++) {
		usleep(20000);
		n = procs_with(tag);
	}
	return n;
}

static void setup(void)
{
	char p[PATH_MAX + 64];
	static char henv[PATH_MAX + 8];

	snprintf(T, sizeof(T), "/tmp/moat-tb-XXXXXX");
	if (!mkdtemp(T))
		exit(99);
	chmod(T, 0755);
	snprintf(p, sizeof(p), "%s/ws", T);
	mkdir(p, 0755);
	if (!realpath(p, WS))
		exit(99);
	snprintf(p, sizeof(p), "%s/sub", WS);
	mkdir(p, 0755);
	snprintf(OUT, sizeof(OUT), "%s/out", T);
	mkdir(OUT, 0755);
	snprintf(p, sizeof(p), "%s/canary", OUT);
	FILE *f = fopen(p, "w");
	fputs("canary-content\n", f);
	fclose(f);
	snprintf(HOME_DIR, sizeof(HOME_DIR), "%s/home", T);
	mkdir(HOME_DIR, 0755);
	snprintf(p, sizeof(p), "%s/.ssh", HOME_DIR);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/.ssh/id_rsa", HOME_DIR);
	f = fopen(p, "w");
	fputs("ssh-private-key-SECRET1\n", f);
	fclose(f);
	/* a symlink inside the workspace that leads out of it */
	snprintf(p, sizeof(p), "%s/escape", WS);
	if (symlink(OUT, p) < 0)
		exit(99);

	snprintf(henv, sizeof(henv), "HOME=%s", HOME_DIR);
	envp[0] = (char *)"PATH=/usr/local/bin:/usr/bin:/bin";
	envp[1] = henv;
	envp[2] = (char *)"LANG=C.UTF-8";
	envp[3] = (char *)"OPENAI_API_KEY=sk-test-SECRET9";
	envp[4] = NULL;
}

static struct moat_config *config(const char *json)
{
	struct moat_config *c = NULL;
	struct moat_error err;

	if (moat_config_new(&c) < 0)
		exit(99);
	if (json && moat_config_load_string(c, json, strlen(json), "test", 0, &err) < 0) {
		fprintf(stderr, "config: %s\n", err.msg);
		exit(99);
	}
	return c;
}

/* The shell tool under the network-denied profile (a runner is started
 * ahead of its calls). */
static struct moat_config *nonet_config(void)
{
	return config("{\"sandbox\": {\"rules\": [{\"tool\": \"bash\", \"profile\": "
		      "\"workspace-write-no-network\"}]}}");
}

static void test_basics(void)
{
	struct moat_tool_result r;
	json_t *sb;

	CHECK_INT(bash(&r, "echo hi", NULL), 0);
	CHECK(r.ok);
	CHECK_STR(text(&r), "hi\n");
	CHECK_INT(r.output_len, 3);
	CHECK_STR(dstr(&r, "stdout"), "hi\n");
	CHECK_STR(dstr(&r, "stderr"), "");
	CHECK_INT(dint(&r, "exit_code"), 0);
	CHECK(json_is_null(json_object_get(r.data, "signal")));
	CHECK_INT(r.exit_code, 0);
	CHECK_INT(r.signal, 0);
	CHECK_INT(r.bytes_out, 3);
	CHECK(!dtrue(&r, "timed_out") && !dtrue(&r, "cancelled"));
	CHECK(!dtrue(&r, "stdout_truncated"));
	sb = json_object_get(r.data, "sandbox");
	CHECK_STR(json_string_value(json_object_get(sb, "profile")), "workspace-write");
	CHECK(json_array_size(json_object_get(sb, "requested")) > 0);
	CHECK(json_array_size(json_object_get(sb, "missing")) == 0);
	CHECK(strstr(r.sandbox, "\"profile\":\"workspace-write\"") != NULL);
	result_clear(&r);

	CHECK_INT(bash(&r, "echo out; echo err >&2; exit 3", NULL), 0);
	CHECK(!r.ok);
	CHECK_INT(r.exit_code, 3);
	CHECK_STR(dstr(&r, "stdout"), "out\n");
	CHECK_STR(dstr(&r, "stderr"), "err\n");
	CHECK_STR(text(&r), "out\n[stderr]\nerr\n[exit code 3]");
	CHECK(strstr(r.error, "status 3") != NULL);
	result_clear(&r);

	/* killed by a signal (the first process of a PID namespace ignores
	 * signals sent from inside it: a fault, which the kernel forces) */
	if (access("/usr/bin/python3", X_OK) == 0) {
		CHECK_INT(bash(&r,
			       "echo dying; exec /usr/bin/python3 -c 'import ctypes; "
			       "ctypes.string_at(0)'",
			       NULL),
			  0);
		CHECK(!r.ok);
		CHECK_INT(r.signal, SIGSEGV);
		CHECK_INT(r.exit_code, -1);
		CHECK_INT(dint(&r, "signal"), SIGSEGV);
		CHECK(json_is_null(json_object_get(r.data, "exit_code")));
		CHECK(strstr(r.error, "SIGSEGV") != NULL);
		CHECK_STR(dstr(&r, "stdout"), "dying\n");
		result_clear(&r);
	} else {
		CHECKF(1, "# SKIP no /usr/bin/python3 to crash");
	}
	/* a child killed by a signal: the shell reports 128+N */
	CHECK_INT(bash(&r, "sh -c 'kill -9 $$'", NULL), 0);
	CHECK_INT(r.exit_code, 137);
	CHECK_INT(r.signal, 0);
	result_clear(&r);

	/* a shell's own answer for a missing program */
	CHECK_INT(bash(&r, "no-such-program-xyz", NULL), 0);
	CHECK_INT(r.exit_code, 127);
	CHECK(strstr(dstr(&r, "stderr"), "not found") != NULL);
	result_clear(&r);

	/* stdin is /dev/null; the command sees only 0, 1 and 2 (ls's own
	 * directory is the 3) and no secret variable */
	CHECK_INT(bash(&r,
		       "cat; readlink /proc/self/fd/0; ls /proc/self/fd | tr '\\n' ' '; "
		       "env | grep -c SECRET9",
		       NULL),
		  0);
	CHECK_STR(dstr(&r, "stdout"), "/dev/null\n0 1 2 3 0\n");
	result_clear(&r);

	/* no-output success: an empty text */
	CHECK_INT(bash(&r, "true", NULL), 0);
	CHECK(r.ok && r.output && r.output[0] == '\0');
	result_clear(&r);

	/* invalid UTF-8 and NUL bytes become U+FFFD */
	CHECK_INT(bash(&r, "printf 'a\\000b\\377c'", NULL), 0);
	CHECK_STR(dstr(&r, "stdout"), "a\xef\xbf\xbd"
				      "b\xef\xbf\xbd"
				      "c");
	CHECK_INT(dint(&r, "stdout_bytes"), 5);
	result_clear(&r);

	/* the secrets of the home directory stay masked */
	CHECK_INT(bash(&r, "cat ~/.ssh/id_rsa", NULL), 0);
	CHECK(!strstr(text(&r), "SECRET1"));
	CHECK(!r.ok);
	result_clear(&r);
}

/* The caller's ignored signals and blocked mask are not the command's. */
static void test_signal_state(void)
{
	struct moat_tool_result r;
	sigset_t m, old;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&m);
	sigaddset(&m, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &m, &old);
	CHECK_INT(bash(&r, "grep -E '^Sig(Ign|Blk)' /proc/self/status", NULL), 0);
	{
		/* signals 32 and 33 are glibc's own (SIGCANCEL, SIGSETXID): glibc
		 * refuses to change them and installs its handlers in every
		 * program it starts; GNU make leaves them ignored in its children,
		 * so they are not the caller's to reset (masked out here) */
		const char *o = dstr(&r, "stdout");
		unsigned long long blk = 1, ign = 1;

		CHECK(o && sscanf(o, "SigBlk:\t%llx\nSigIgn:\t%llx", &blk, &ign) == 2);
		CHECK(blk == 0);
		CHECK((ign & ~0x180000000ULL) == 0);
	}
	result_clear(&r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	signal(SIGPIPE, SIG_DFL);
}

static void test_caps(void)
{
	struct moat_tool_env e;
	struct moat_tool_result r;
	char want[200];
	const char *s;

	env_for(&e, cfg_default);
	e.output_cap = 100;
	/* exactly the cap: kept whole */
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"head -c 100 /dev/zero | tr '\\\\0' a\"}"),
		  0);
	CHECK(r.ok);
	CHECK_INT(strlen(dstr(&r, "stdout")), 100);
	CHECK(!dtrue(&r, "stdout_truncated"));
	CHECK(!strstr(text(&r), "truncated"));
	result_clear(&r);

	/* one byte over: the head and the tail, the middle byte dropped, a marker */
	CHECK_INT(bash_env(&e, NULL, &r,
			   "{\"command\": \"head -c 50 /dev/zero | tr '\\\\0' H; printf M; head -c "
			   "50 /dev/zero | tr '\\\\0' T; echo E >&2\"}"),
		  0);
	CHECK(r.ok);
	CHECK(dtrue(&r, "stdout_truncated"));
	CHECK(!dtrue(&r, "stderr_truncated"));
	CHECK_INT(dint(&r, "stdout_bytes"), 101);
	CHECK_INT(r.bytes_out, 103);
	s = dstr(&r, "stdout");
	memset(want, 'H', 50);
	want[50] = '\0';
	CHECK(s && !strncmp(s, want, 50));
	CHECK(s && !strchr(s, 'M'));
	memset(want, 'T', 49);
	want[49] = '\0';
	CHECK(s && strlen(s) > 50 && !strcmp(s + strlen(s) - 49, want));
	CHECK(s && strstr(s, "[moat: stdout truncated: 1 of 101 bytes omitted here; the first 50 "
			     "and the last 50 bytes are shown]") != NULL);
	CHECK(strstr(text(&r), "stdout truncated") != NULL);
	CHECK_STR(dstr(&r, "stderr"), "E\n");
	result_clear(&r);

	/* stderr has its own cap */
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"seq 1 1000 >&2\"}"), 0);
	CHECK(dtrue(&r, "stderr_truncated"));
	CHECK_INT(dint(&r, "stderr_bytes"), 3893);
	CHECK(strstr(dstr(&r, "stderr"), "1000\n") != NULL); /* the tail */
	CHECK(!strncmp(dstr(&r, "stderr"), "1\n2\n3\n", 6)); /* the head */
	result_clear(&r);

	/* a cap of 1: the first byte only */
	e.output_cap = 1;
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"echo abc\"}"), 0);
	s = dstr(&r, "stdout");
	CHECK(s && s[0] == 'a' && strstr(s, "3 of 4 bytes omitted"));
	result_clear(&r);

	/* the default cap, a large stream */
	e.output_cap = 0;
	CHECK_INT(
	    bash_env(&e, NULL, &r, "{\"command\": \"head -c 1048576 /dev/zero | tr '\\\\0' x\"}"),
	    0);
	CHECK_INT(dint(&r, "stdout_bytes"), 1048576);
	CHECK(dtrue(&r, "stdout_truncated"));
	s = dstr(&r, "stdout");
	CHECK(s && strlen(s) > MOAT_BASH_OUTPUT_CAP && strlen(s) < MOAT_BASH_OUTPUT_CAP + 200);
	result_clear(&r);
}

static void test_args(void)
{
	struct moat_tool_result r;
	struct moat_tool_env e;
	char *big;
	size_t n = MOAT_BASH_MAX_COMMAND;

	env_for(&e, cfg_default);
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"true\", \"bogus\": 1, \"x\": 2}"),
		  -EINVAL);
	CHECK(strstr(r.error, "'bogus'") && strstr(r.error, "'x'"));
	result_clear(&r);
	CHECK_INT(bash_env(&e, NULL, &r, "{}"), -EINVAL);
	CHECK(strstr(r.error, "'command' is missing") != NULL);
	result_clear(&r);
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": 5}"), -EINVAL);
	CHECK(strstr(r.error, "'command' must be a string") != NULL);
	result_clear(&r);
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"\"}"), -EINVAL);
	result_clear(&r);
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"a\\u0000b\"}"), -EINVAL);
	CHECK(strstr(r.error, "NUL") != NULL);
	result_clear(&r);
	CHECK_INT(bash_env(&e, NULL, &r, "[1]"), -EINVAL);
	result_clear(&r);
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"true\", \"timeout\": 0}"), -EINVAL);
	CHECK(strstr(r.error, "'timeout'") != NULL);
	result_clear(&r);
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"true\", \"timeout\": 3601}"), -EINVAL);
	result_clear(&r);
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"true\", \"timeout\": 1.5}"), -EINVAL);
	result_clear(&r);
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"true\", \"cwd\": 7}"), -EINVAL);
	result_clear(&r);
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"true\", \"timeout\": 3600}"), 0);
	CHECK(r.ok);
	result_clear(&r);
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"true\", \"timeout\": 1}"), 0);
	CHECK(r.ok);
	result_clear(&r);

	/* the command limit at its boundary; past 128 KiB (the kernel's limit
	 * of one argument) it is passed in pieces, and still arrives whole */
	{
		static const char pre[] = "echo ok; printf '%s' '", post[] = "' | wc -c";
		size_t k = n - (sizeof(pre) - 1) - (sizeof(post) - 1);
		json_t *o = json_object();
		char *sj;

		big = malloc(n + 2);
		if (!big)
			exit(99);
		memcpy(big, pre, sizeof(pre) - 1);
		memset(big + sizeof(pre) - 1, 'x', k);
		memcpy(big + sizeof(pre) - 1 + k, post, sizeof(post));
		CHECK_INT(strlen(big), n);
		json_object_set_new(o, "command", json_stringn(big, n));
		sj = json_dumps(o, JSON_COMPACT);
		CHECK_INT(bash_env(&e, NULL, &r, sj), 0);
		CHECKF(r.ok, "a command of exactly MOAT_BASH_MAX_COMMAND bytes runs (%s)", r.error);
		CHECKF(dstr(&r, "stdout") && !strncmp(dstr(&r, "stdout"), "ok\n", 3) &&
			   strtol(dstr(&r, "stdout") + 3, NULL, 10) == (long)k,
		       "the long command arrived whole (%.40s)", text(&r));
		result_clear(&r);
		free(sj);
		/* one byte more */
		memmove(big + 1, big, n + 1);
		big[0] = ' ';
		json_object_set_new(o, "command", json_stringn(big, n + 1));
		sj = json_dumps(o, JSON_COMPACT);
		CHECK_INT(bash_env(&e, NULL, &r, sj), -EINVAL);
		CHECK(strstr(r.error, "over the limit") != NULL);
		result_clear(&r);
		free(sj);
		json_decref(o);
	}
	free(big);
}

static void test_cwd_and_writes(void)
{
	struct moat_tool_result r;
	char p[PATH_MAX + 64], want[PATH_MAX + 8];

	CHECK_INT(bash(&r, "pwd", "\"cwd\": \"sub\""), 0);
	snprintf(want, sizeof(want), "%s/sub\n", WS);
	CHECK_STR(dstr(&r, "stdout"), want);
	result_clear(&r);
	snprintf(p, sizeof(p), "\"cwd\": \"%s/sub\"", WS);
	CHECK_INT(bash(&r, "pwd", p), 0);
	CHECK_STR(dstr(&r, "stdout"), want);
	result_clear(&r);
	CHECK_INT(bash(&r, "pwd", NULL), 0);
	snprintf(want, sizeof(want), "%s\n", WS);
	CHECK_STR(dstr(&r, "stdout"), want);
	result_clear(&r);

	/* outside the workspace: refused, nothing runs */
	snprintf(p, sizeof(p), "%s/ran-outside", OUT);
	for (int i = 0; i < 4; i++) {
		const char *cwds[] = {"\"cwd\": \"..\"", "\"cwd\": \"/tmp\"", "\"cwd\": \"escape\"",
				      "\"cwd\": \"sub/../../out\""};
		char cmd[PATH_MAX + 80];

		snprintf(cmd, sizeof(cmd), "touch '%s'", p);
		CHECK_INT(bash(&r, cmd, cwds[i]), 0);
		CHECKF(!r.ok && strstr(r.error, "outside the workspace"), "cwd %s refused (%s)",
		       cwds[i], r.error);
		CHECK(!file_exists(p));
		result_clear(&r);
	}
	CHECK_INT(bash(&r, "true", "\"cwd\": \"nope\""), 0);
	CHECK(!r.ok && strstr(r.error, "cannot be used"));
	result_clear(&r);

	/* writes outside the workspace fail; inside they land */
	{
		char cmd[3 * PATH_MAX + 100];

		snprintf(cmd, sizeof(cmd),
			 "echo x > '%s/canary'; echo y > '%s/new'; rm -f '%s/canary'; echo in > "
			 "inside",
			 OUT, OUT, OUT);
		CHECK_INT(bash(&r, cmd, NULL), 0);
	}
	snprintf(p, sizeof(p), "%s/canary", OUT);
	CHECK_STR(slurp(p), "canary-content\n");
	snprintf(p, sizeof(p), "%s/new", OUT);
	CHECK(!file_exists(p));
	snprintf(p, sizeof(p), "%s/inside", WS);
	CHECK_STR(slurp(p), "in\n");
	result_clear(&r);
}

static void test_timeout(void)
{
	struct moat_tool_result r;

	CHECK(procs_with("777101") == 0);
	CHECK_INT(
	    bash(&r, "sleep 777101 & (sleep 777102 &); sleep 777103; echo never", "\"timeout\": 1"),
	    0);
	CHECK(!r.ok);
	CHECK(r.timed_out);
	CHECK(dtrue(&r, "timed_out"));
	CHECK(strstr(r.error, "timed out after 1 s") != NULL);
	CHECK(!strstr(text(&r), "never"));
	CHECKF(procs_left("sleep 77710") == 0, "no process of the tree survives the timeout");
	result_clear(&r);
}

/* Cancel once the command is running: its marker process is in the
 * process table (no timing assumption). */
struct canceller {
	int fd;
	const char *tag;
};

static void *cancel_later(void *arg)
{
	struct canceller *c = arg;
	uint64_t one = 1;

	for (int i = 0; i < 3000 && procs_with(c->tag) == 0; i++)
		usleep(10000);
	if (write(c->fd, &one, sizeof(one)) != sizeof(one))
		abort();
	return NULL;
}

static void test_cancel(void)
{
	struct moat_tool_env e;
	struct moat_tool_call call = {-1, NULL, NULL};
	struct moat_tool_result r;
	struct canceller c;
	pthread_t th;
	char p[PATH_MAX + 64], cmd[PATH_MAX + 200];
	uint64_t drained;

	env_for(&e, cfg_default);
	call.cancel_fd = eventfd(0, EFD_CLOEXEC);
	c.fd = call.cancel_fd;
	c.tag = "sleep 777203";
	pthread_create(&th, NULL, cancel_later, &c);
	CHECK_INT(bash_env(&e, &call, &r,
			   "{\"command\": \"sleep 777201 & (sleep 777202 &); sleep 777203; echo "
			   "never\"}"),
		  0);
	pthread_join(th, NULL);
	CHECK(!r.ok);
	CHECK(r.cancelled);
	CHECK(dtrue(&r, "cancelled"));
	CHECK(!r.timed_out);
	CHECK(strstr(r.error, "cancelled") != NULL);
	CHECK(!strstr(r.error, "before the command started"));
	CHECKF(procs_with("sleep 77720") == 0, "no process of the tree survives the cancel");
	result_clear(&r);
	CHECK(read(call.cancel_fd, &drained, sizeof(drained)) == sizeof(drained));

	/* a shell that ignores TERM is killed all the same */
	c.tag = "sleep 777302";
	pthread_create(&th, NULL, cancel_later, &c);
	CHECK_INT(
	    bash_env(&e, &call, &r, "{\"command\": \"trap '' TERM; sleep 777301 & sleep 777302\"}"),
	    0);
	pthread_join(th, NULL);
	CHECK(r.cancelled);
	CHECK(!strstr(r.error, "before the command started"));
	CHECKF(procs_left("sleep 77730") == 0, "no process survives a shell that ignores TERM");
	result_clear(&r);
	CHECK(read(call.cancel_fd, &drained, sizeof(drained)) == sizeof(drained));

	/* a command that writes without end is cancelled all the same */
	c.tag = "yes 777401";
	pthread_create(&th, NULL, cancel_later, &c);
	CHECK_INT(bash_env(&e, &call, &r, "{\"command\": \"yes 777401\"}"), 0);
	pthread_join(th, NULL);
	CHECK(r.cancelled);
	CHECK(!strstr(r.error, "before the command started"));
	CHECKF(procs_with("yes 777401") == 0, "no process survives a cancelled flood");
	result_clear(&r);

	/* cancelled before the start: nothing runs */
	snprintf(p, sizeof(p), "%s/ran-cancelled", WS);
	snprintf(cmd, sizeof(cmd), "{\"command\": \"touch '%s'\"}", p);
	CHECK_INT(bash_env(&e, &call, &r, cmd), 0);
	CHECK(!r.ok && r.cancelled);
	CHECK(!file_exists(p));
	result_clear(&r);
	close(call.cancel_fd);
}

static int progress_calls;
static void progress(void *ud, double elapsed_ms, size_t bytes)
{
	(void)ud;
	(void)elapsed_ms;
	(void)bytes;
	progress_calls++;
}

static void test_progress(void)
{
	struct moat_tool_env e;
	struct moat_tool_call call = {-1, progress, NULL};
	struct moat_tool_result r;

	env_for(&e, cfg_default);
	CHECK_INT(bash_env(&e, &call, &r, "{\"command\": \"echo a; sleep 2.5; echo b\"}"), 0);
	CHECK(r.ok);
	CHECKF(progress_calls >= 1, "progress was reported (%d times)", progress_calls);
	result_clear(&r);
}

/* A loopback listener of ours: does the command reach it? */
static int listener(int *ret_port)
{
	struct sockaddr_in a;
	socklen_t l = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 8) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &l) < 0)
		exit(99);
	*ret_port = ntohs(a.sin_port);
	return s;
}

static int accepted(int s)
{
	int n = 0, c;

	while ((c = accept(s, NULL, NULL)) >= 0) {
		close(c);
		n++;
	}
	return n;
}

static void test_network(void)
{
	struct moat_config *nonet = nonet_config();
	struct moat_config *alias =
	    config("{\"sandbox\": {\"rules\": [{\"tool\": \"run_shell_command\", \"profile\": "
		   "\"workspace-write-no-network\"}]}}");
	struct moat_tool_env e;
	struct moat_tool_result r;
	char cmd[256];
	int port, s = listener(&port);

	snprintf(cmd, sizeof(cmd),
		 "{\"command\": \"bash -c 'echo hello > /dev/tcp/127.0.0.1/%d' && echo "
		 "connected\"}",
		 port);
	/* the control: the default profile allows the network */
	env_for(&e, cfg_default);
	CHECK_INT(bash_env(&e, NULL, &r, cmd), 0);
	CHECKF(accepted(s) == 1, "the default profile reaches the listener (%s)", text(&r));
	result_clear(&r);

	env_for(&e, nonet);
	CHECK_INT(bash_env(&e, NULL, &r, cmd), 0);
	CHECK(!r.ok);
	CHECK(!strstr(text(&r), "connected"));
	CHECK(strstr(r.sandbox, "\"profile\":\"workspace-write-no-network\"") != NULL);
	CHECK(strstr(r.sandbox, "\"network\":\"deny\"") != NULL);
	CHECKF(accepted(s) == 0, "no connection under workspace-write-no-network");
	result_clear(&r);

	env_for(&e, alias);
	CHECK_INT(bash_env(&e, NULL, &r, cmd), 0);
	CHECK(!r.ok);
	CHECKF(accepted(s) == 0, "a rule naming run_shell_command applies to bash");
	result_clear(&r);
	close(s);
	moat_config_free(nonet);
	moat_config_free(alias);
}

/* A protection this system cannot give (user namespaces faked away): the
 * fallback policy refuses, and nothing runs. */
static void test_fallback(void)
{
	struct moat_config *ask = config("{\"sandbox\": {\"fallback\": \"ask\"}}");
	struct moat_config *warn = config("{\"sandbox\": {\"fallback\": \"warn\"}}");
	struct moat_tool_env e;
	struct moat_tool_result r;
	char p[PATH_MAX + 64], cmd[PATH_MAX + 100];

	snprintf(p, sizeof(p), "%s/ran-refused", WS);
	snprintf(cmd, sizeof(cmd), "{\"command\": \"touch '%s'\"}", p);
	setenv("MOAT_FAKE_NO_USERNS", "1", 1);
	env_for(&e, cfg_default);
	/* the variable is set now: a fork server has its environment of
	 * before (the other configurations are not the server's anyway) */
	e.bash_server = NULL;
	CHECK_INT(bash_env(&e, NULL, &r, cmd), 0);
	CHECK(!r.ok);
	CHECKF(strstr(r.error, "refusing to run without") && strstr(r.error, "fallback deny") &&
		   strstr(r.error, "hint:"),
	       "a refusal with the runner's reason and hint (%s)", r.error);
	CHECK(!file_exists(p));
	CHECK(strstr(r.sandbox, "pid-namespace") != NULL);
	CHECK(json_is_string(json_object_get(r.data, "warning")));
	result_clear(&r);

	env_for(&e, ask);
	CHECK_INT(bash_env(&e, NULL, &r, cmd), 0);
	CHECKF(!r.ok && strstr(r.error, "fallback ask: there is nobody to confirm it"),
	       "fallback ask from a tool call is a refusal (%s)", r.error);
	CHECK(!file_exists(p));
	result_clear(&r);

	env_for(&e, warn);
	CHECK_INT(bash_env(&e, NULL, &r, cmd), 0);
	CHECK(r.ok);
	CHECK(file_exists(p));
	CHECK(strstr(dstr(&r, "warning"), "not enforced") != NULL);
	result_clear(&r);
	unsetenv("MOAT_FAKE_NO_USERNS");
	unlink(p);
	moat_config_free(ask);
	moat_config_free(warn);
}

/* Many calls at once from different threads, through the fork server,
 * while every thread allocates: the workers build their arguments and check
 * their results as they go and churn the allocator between calls, and two
 * more threads do nothing else. A child forked from this process at any of
 * these moments could find an allocator lock taken (AddressSanitizer's is
 * not reset in a child): the server forks the runners instead. */
#define NTHREADS 8
#define NCALLS 4
#define NCHURN 2
static struct moat_tool_result cres[NTHREADS][NCALLS];
static int crc[NTHREADS][NCALLS];
static pthread_barrier_t cbarrier;
static atomic_int churning;

static void churn(unsigned *seed, int rounds)
{
	void *p[64] = {NULL};

	for (int i = 0; i < rounds; i++) {
		int k = (int)(rand_r(seed) % 64);

		free(p[k]);
		p[k] = malloc(16 + rand_r(seed) % 8192);
		if (p[k])
			memset(p[k], i, 16);
	}
	for (int k = 0; k < 64; k++)
		free(p[k]);
}

static void *churner(void *arg)
{
	unsigned seed = (unsigned)(long)arg;

	pthread_barrier_wait(&cbarrier);
	while (atomic_load(&churning))
		churn(&seed, 256);
	return NULL;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned seed = (unsigned)id;
	struct moat_tool_env e;

	env_for(&e, cfg_default);
	pthread_barrier_wait(&cbarrier);
	for (int k = 0; k < NCALLS; k++) {
		char cmd[100];
		json_t *args = json_object();

		snprintf(cmd, sizeof(cmd), "echo t%ld-%d; echo e%ld >&2; exit %d", id, k, id, k);
		json_object_set_new(args, "command", json_string(cmd));
		churn(&seed, 512);
		crc[id][k] = moat_tool_bash(&e, args, NULL, &cres[id][k]);
		json_decref(args);
		churn(&seed, 512);
	}
	return NULL;
}

static void test_concurrent(void)
{
	pthread_t th[NTHREADS], ch[NCHURN];
	int bad = 0;

	CHECK(srv_env.bash_server != NULL);
	for (long i = 0; i < NTHREADS; i++)
		for (int k = 0; k < NCALLS; k++)
			moat_tool_result_init(&cres[i][k]);
	atomic_store(&churning, 1);
	pthread_barrier_init(&cbarrier, NULL, NTHREADS + NCHURN);
	for (long i = 0; i < NCHURN; i++)
		pthread_create(&ch[i], NULL, churner, (void *)(100 + i));
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	atomic_store(&churning, 0);
	for (int i = 0; i < NCHURN; i++)
		pthread_join(ch[i], NULL);
	pthread_barrier_destroy(&cbarrier);
	for (long i = 0; i < NTHREADS; i++) {
		for (int k = 0; k < NCALLS; k++) {
			struct moat_tool_result *r = &cres[i][k];
			char want[64], ewant[64];

			snprintf(want, sizeof(want), "t%ld-%d\n", i, k);
			snprintf(ewant, sizeof(ewant), "e%ld\n", i);
			if (crc[i][k] != 0 || strcmp(dstr(r, "stdout"), want) ||
			    strcmp(dstr(r, "stderr"), ewant) || r->exit_code != k ||
			    r->ok != (k == 0)) {
				bad++;
				fprintf(stderr,
					"# thread %ld call %d: rc %d exit %d ok %d stdout '%s' "
					"error '%s'\n",
					i, k, crc[i][k], r->exit_code, r->ok, dstr(r, "stdout"),
					r->error);
			}
			result_clear(r);
		}
	}
	CHECKF(bad == 0,
	       "%d threads x %d calls each, allocating all the while, got their own output (%d "
	       "wrong)",
	       NTHREADS, NCALLS, bad);
}

/* ------------------------------------------------------------------ */
/* the fork server itself, seen in /proc                               */
/* ------------------------------------------------------------------ */

struct pinfo {
	pid_t pid, ppid;
	unsigned long long start; /* to tell a reused pid */
	char state;
	char comm[32];
};

/* /proc/PID/stat; false when there is no such process */
static bool proc_info(pid_t pid, struct pinfo *p)
{
	char path[64], buf[1024], *rp;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	if (!rp || !strchr(buf, '('))
		return false;
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%.*s", (int)(rp - strchr(buf, '(') - 1),
		 strchr(buf, '(') + 1);
	/* after ")": state ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime cutime cstime priority nice threads
	 * itrealvalue starttime */
	{
		const char *f = rp + 2;

		for (int idx = 0; idx < 20 && f; idx++) {
			if (idx == 0)
				p->state = f[0];
			else if (idx == 1)
				p->ppid = (pid_t)strtol(f, NULL, 10);
			else if (idx == 19)
				p->start = strtoull(f, NULL, 10);
			f = strchr(f, ' ');
			f = f ? f + 1 : NULL;
		}
	}
	return true;
}

/* Every process now: its pid, parent and name. */
static int all_procs(struct pinfo *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) && n < max) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (proc_info((pid_t)strtol(e->d_name, NULL, 10), &out[n]))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

#define MAXPROCS 8192
static struct pinfo procs[MAXPROCS];

/* The live descendants of root (root itself not included). */
static int descendants(pid_t root, struct pinfo *out, int max)
{
	int n = all_procs(procs, MAXPROCS), k = 0;
	pid_t frontier[256];
	int nf = 1;

	frontier[0] = root;
	for (int f = 0; f < nf; f++) {
		for (int i = 0; i < n; i++) {
			if (procs[i].ppid != frontier[f] || procs[i].state == 'Z' || k >= max)
				continue;
			out[k++] = procs[i];
			if (nf < 256)
				frontier[nf++] = procs[i].pid;
		}
	}
	return k;
}

/* Still there, the same process, and not a zombie. */
static bool still_alive(const struct pinfo *p)
{
	struct pinfo now;

	return proc_info(p->pid, &now) && now.start == p->start && now.state != 'Z';
}

static int count_comm(const struct pinfo *v, int n, const char *comm)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += !strcmp(v[i].comm, comm);
	return k;
}

/* The first process whose command line starts with tag (the shell that
 * runs it holds it too, further on); 0 none. */
static pid_t pid_with(const char *tag)
{
	int n = all_procs(procs, MAXPROCS);

	for (int i = 0; i < n; i++) {
		char p[64], buf[4096];
		int fd;
		ssize_t len;

		snprintf(p, sizeof(p), "/proc/%d/cmdline", (int)procs[i].pid);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		for (ssize_t k = 0; k < len; k++)
			if (!buf[k])
				buf[k] = ' ';
		buf[len] = '\0';
		if (!strncmp(buf, tag, strlen(tag)))
			return procs[i].pid;
	}
	return 0;
}

static bool wait_for_tag(const char *tag)
{
	for (int i = 0; i < 3000; i++) {
		if (pid_with(tag))
			return true;
		usleep(10000);
	}
	return false;
}

/* The chain of parents from pid up: is there one named comm whose parent
 * is want_ppid? */
static bool ancestor_named(pid_t pid, const char *comm, pid_t want_ppid)
{
	struct pinfo p;

	for (int hops = 0; hops < 32 && pid > 1 && proc_info(pid, &p); hops++) {
		if (!strcmp(p.comm, comm) && p.ppid == want_ppid)
			return true;
		pid = p.ppid;
	}
	return false;
}

/* What an observer process saw of a running call. */
struct tree_seen {
	bool ran;			/* the command was there */
	bool srv_child;			/* a fork server is a child of the caller */
	bool run_of_srv, run_of_caller; /* the runner's parent */
	int nul, pipes, other;		/* the server's descriptors */
};

/* The server's descriptors: /dev/null on 0 and 1, stderr (not counted),
 * pipes, and what is its own (socket, signalfd, pidfd) or other. */
static void server_fds(pid_t srv, struct tree_seen *t)
{
	char p[64], l[PATH_MAX];
	DIR *d;
	struct dirent *de;

	snprintf(p, sizeof(p), "/proc/%d/fd", (int)srv);
	d = opendir(p);
	if (!d) {
		t->other = -1;
		return;
	}
	while ((de = readdir(d))) {
		char fp[400];
		ssize_t k;
		long fd = strtol(de->d_name, NULL, 10);

		if (de->d_name[0] == '.' || fd == 2)
			continue;
		snprintf(fp, sizeof(fp), "%s/%s", p, de->d_name);
		k = readlink(fp, l, sizeof(l) - 1);
		l[k > 0 ? k : 0] = '\0';
		if (fd <= 1 && !strcmp(l, "/dev/null"))
			t->nul++;
		else if (fd > 2 && !strncmp(l, "pipe:", 5))
			t->pipes++;
		else if (fd <= 2 ||
			 (strncmp(l, "socket:", 7) && strcmp(l, "anon_inode:[signalfd]") &&
			  strcmp(l, "anon_inode:[pidfd]") &&
			  /* its own, watched for mount table changes */
			  !(strncmp(l, "/proc/", 6) == 0 && strstr(l, "/mountinfo")) &&
			  /* the lock of the workspace's stand-ins it holds */
			  !strstr(l, "/lock-") && strcmp(l, WS)))
			t->other++;
	}
	closedir(d);
}

static void observe(pid_t caller, const char *tag, struct tree_seen *t)
{
	struct pinfo kids[64];
	pid_t sleeper, srv = 0;
	int n;

	memset(t, 0, sizeof(*t));
	t->ran = wait_for_tag(tag);
	sleeper = pid_with(tag);
	n = descendants(caller, kids, 64);
	for (int i = 0; i < n; i++)
		if (kids[i].ppid == caller && !strcmp(kids[i].comm, "moat-bash-srv"))
			srv = kids[i].pid;
	t->srv_child = srv > 0;
	t->run_of_srv = srv > 0 && ancestor_named(sleeper, "moat-bash-run", srv);
	t->run_of_caller = ancestor_named(sleeper, "moat-bash-run", caller);
	if (srv > 0)
		server_fds(srv, t);
}

/* A running call, seen from outside: which process forked its runner, what
 * the server holds open; then cancelled (with the server, through a pidfd
 * of a process that is not the caller's child). The observer is a process
 * of its own, forked before the call: a call without a server forks this
 * process, and a thread of ours allocating at that moment could leave a
 * lock taken in the child (AddressSanitizer's allocator). */
static void check_tree(bool server, const char *tag, const char *json)
{
	struct moat_tool_env e;
	struct moat_tool_call call = {-1, NULL, NULL};
	struct moat_tool_result r;
	struct tree_seen t;
	struct pinfo kids[64];
	pid_t me = getpid(), obs;
	int rp[2], rc, n;

	env_for(&e, cfg_default);
	if (!server)
		e.bash_server = NULL;
	call.cancel_fd = eventfd(0, EFD_CLOEXEC);
	if (call.cancel_fd < 0 || pipe2(rp, O_CLOEXEC) < 0)
		exit(99);
	obs = fork();
	if (obs < 0)
		exit(99);
	if (obs == 0) {
		uint64_t one = 1;

		observe(me, tag, &t);
		if (write(rp[1], &t, sizeof(t)) != sizeof(t) ||
		    write(call.cancel_fd, &one, sizeof(one)) != sizeof(one))
			_exit(1);
		_exit(0);
	}
	close(rp[1]);
	rc = bash_env(&e, &call, &r, json);
	memset(&t, 0, sizeof(t));
	CHECKF(read(rp[0], &t, sizeof(t)) == sizeof(t), "the observer reported");
	close(rp[0]);
	while (waitpid(obs, NULL, 0) < 0 && errno == EINTR)
		;
	CHECKF(t.ran, "the command ran (%s)", tag);
	if (server) {
		CHECKF(t.srv_child, "the fork server is a child of the caller");
		CHECKF(t.run_of_srv, "the runner of the call is the server's child");
		CHECKF(!t.run_of_caller, "and not the caller's");
		/* SECURITY: the server holds /dev/null as stdin and stdout, our
		 * stderr, its socket, its signalfd, its /proc/self/mountinfo,
		 * the workspace (the lock on its stand-ins), this call's result
		 * pipe, the five pipe ends of a runner started
		 * for the next call (and for a moment the pidfd it sends): nothing
		 * else of ours (the marker is open here, not close-on-exec) */
		CHECKF(t.nul == 2 && (t.pipes == 1 || t.pipes == 6) && t.other == 0,
		       "the server holds /dev/null on 0 and 1 (%d), its own pipes (%d: this "
		       "call's result, the next runner's) and nothing of the caller's (%d)",
		       t.nul, t.pipes, t.other);
	} else {
		CHECKF(!t.srv_child, "no fork server runs");
		CHECKF(t.run_of_caller, "without a server the runner is the caller's child");
	}
	CHECK_INT(rc, 0);
	CHECKF(r.cancelled && !r.ok && strstr(r.error, "cancelled"), "the call was cancelled (%s)",
	       r.error);
	CHECKF(procs_with(tag) == 0, "no process of the cancelled call is left");
	/* the runner itself exits after its result (the namespaces' teardown
	 * is left to its exit, off the call's clock) and the server reaps it:
	 * gone soon after, not necessarily at once */
	for (int i = 0; i < 200; i++) {
		n = descendants(me, kids, 64);
		if (count_comm(kids, n, "moat-bash-run") == 0)
			break;
		usleep(10000);
	}
	CHECKF(count_comm(kids, n, "moat-bash-run") == 0, "no runner is left (within 2 s)");
	result_clear(&r);
	close(call.cancel_fd);
}

/* The server dies with its caller: a process of ours starts one, runs a
 * call in it, and is killed with SIGKILL; nothing it started survives. */
static void test_dies_with_caller(void)
{
	struct pinfo tree[64];
	int sync_p[2], n = 0, left = -1;
	pid_t caller;
	char c;

	if (pipe2(sync_p, O_CLOEXEC) < 0)
		exit(99);
	caller = fork();
	if (caller < 0)
		exit(99);
	if (caller == 0) {
		struct moat_tool_env e;
		struct moat_tool_result r;
		struct moat_error err;

		close(sync_p[0]);
		env_for(&e, cfg_default);
		e.bash_server = NULL;
		if (moat_bash_server_start(&e, &err) < 0)
			_exit(3);
		if (write(sync_p[1], "s", 1) != 1)
			_exit(4);
		bash_env(&e, NULL, &r, "{\"command\": \"sleep 777901 & sleep 777902\"}");
		_exit(5); /* not reached: killed before */
	}
	close(sync_p[1]);
	CHECKF(read(sync_p[0], &c, 1) == 1, "the caller started its server");
	close(sync_p[0]);
	if (wait_for_tag("sleep 777902") && wait_for_tag("sleep 777901")) {
		n = descendants(caller, tree, 64);
		CHECKF(count_comm(tree, n, "moat-bash-srv") == 1 &&
			   count_comm(tree, n, "moat-bash-run") == 1 && n >= 4,
		       "the caller has a server, a runner and the command (%d processes)", n);
	} else {
		CHECKF(0, "the command of the caller never ran");
	}
	kill(caller, SIGKILL);
	while (waitpid(caller, NULL, 0) < 0 && errno == EINTR)
		;
	/* bounded: PR_SET_PDEATHSIG acts at once, the tree follows */
	for (int i = 0; i < 1000 && left; i++) {
		left = 0;
		for (int k = 0; k < n; k++)
			left += still_alive(&tree[k]);
		if (left)
			usleep(10000);
	}
	CHECKF(left == 0, "no server, runner or command outlives its caller (%d left)", left);
	CHECK(procs_with("sleep 77790") == 0);
}

/* A server that died (killed from outside): the next call forks the caller
 * and runs all the same; stop reaps what is left. */
static void test_server_killed(void)
{
	struct pinfo kids[64];
	struct moat_tool_result r;
	struct pinfo srv = {0};
	int n = descendants(getpid(), kids, 64);

	for (int i = 0; i < n; i++)
		if (!strcmp(kids[i].comm, "moat-bash-srv") && kids[i].ppid == getpid())
			srv = kids[i];
	CHECKF(srv.pid > 0, "the fork server runs");
	if (srv.pid > 0)
		kill(srv.pid, SIGKILL);
	for (int i = 0; i < 500 && srv.pid > 0 && still_alive(&srv); i++)
		usleep(10000);
	CHECK(srv.pid > 0 && !still_alive(&srv));
	CHECK_INT(bash(&r, "echo after", NULL), 0);
	CHECKF(r.ok && !strcmp(text(&r), "after\n"), "a call after the server died runs (%s)",
	       r.error);
	result_clear(&r);
	CHECK_INT(bash(&r, "echo again", NULL), 0);
	CHECK(r.ok && !strcmp(text(&r), "again\n"));
	result_clear(&r);
}

/* The runner started ahead of server srv (0: any server), named
 * moat-bash-warm, a child of it: the next call goes to it, and a new one
 * replaces it. */
static pid_t warm_runner_of(pid_t srv, pid_t not, int tries)
{
	struct pinfo kids[64];

	for (int i = 0; i < tries; i++) {
		int n = descendants(getpid(), kids, 64);

		for (int k = 0; k < n; k++) {
			if (kids[k].pid == not || strcmp(kids[k].comm, "moat-bash-warm") ||
			    (srv && kids[k].ppid != srv))
				continue;
			for (int j = 0; j < n; j++)
				if (kids[j].pid == kids[k].ppid && !strcmp(kids[j].comm, "moat-bash-srv"))
					return kids[k].pid;
		}
		usleep(10000);
	}
	return 0;
}

/* The fork server started last by this process: the one not in before
 * (waited for: a server just forked has its name a moment later). */
static pid_t new_server(const pid_t *before, int nb)
{
	struct pinfo kids[64];

	for (int i = 0; i < 300; i++) {
		int n = descendants(getpid(), kids, 64);

		for (int k = 0; k < n; k++) {
			bool old = false;

			if (kids[k].ppid != getpid() || strcmp(kids[k].comm, "moat-bash-srv"))
				continue;
			for (int b = 0; b < nb && !old; b++)
				old = before[b] == kids[k].pid;
			if (!old)
				return kids[k].pid;
		}
		usleep(10000);
	}
	return -1; /* (never a pid: no runner is taken for another server's) */
}

/* The fork servers of this process, into out (at most max). */
static int servers(pid_t *out, int max)
{
	struct pinfo kids[64];
	int n = descendants(getpid(), kids, 64), m = 0;

	for (int k = 0; k < n && m < max; k++)
		if (kids[k].ppid == getpid() && !strcmp(kids[k].comm, "moat-bash-srv"))
			out[m++] = kids[k].pid;
	return m;
}

static bool is_warm(pid_t pid)
{
	char p[64], c[32] = "";
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/comm", (int)pid);
	f = fopen(p, "r");
	if (!f)
		return false;
	if (!fgets(c, sizeof(c), f))
		c[0] = '\0';
	fclose(f);
	return !strcmp(c, "moat-bash-warm\n");
}

static void test_warm(void)
{
	struct moat_config *nonet = nonet_config();
	struct moat_tool_env e;
	struct moat_tool_result r;
	struct moat_error err;
	pid_t w, w2;

	pid_t before[8], srv;
	int nb = servers(before, 8);

	/* the default shell profile allows the host's network: a runner is
	 * started ahead for it too (its child without a network namespace) */
	CHECKF(nb == 0 || warm_runner_of(before[0], 0, 300) > 0,
	       "a runner is started ahead for a profile with the network allowed");
	env_for(&e, nonet);
	CHECK_INT(moat_bash_server_start(&e, &err), 0);
	srv = new_server(before, nb);
	CHECKF(srv > 0, "the server of the network-denied profile runs");
	w = warm_runner_of(srv, 0, 300);
	CHECKF(w > 0, "with the network denied the server keeps a runner started ahead");
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"echo warm; echo $$\"}"), 0);
	/* PID 3: the early start's network helper was PID 2 (sanitizer builds
	 * start nothing early: PID 2) */
	CHECKF(r.ok && (!strcmp(text(&r), "warm\n3\n") || !strcmp(text(&r), "warm\n2\n")),
	       "the call runs in the sandbox started ahead, under moat's init (%s)", text(&r));
	result_clear(&r);
	/* (it exits right after writing the result: give it a moment) */
	for (int i = 0; i < 200 && kill(w, 0) == 0; i++)
		usleep(10000);
	CHECKF(!is_warm(w) && kill(w, 0) < 0, "the runner started ahead took the call and is gone");
	w2 = warm_runner_of(srv, w, 300);
	CHECKF(w2 > 0 && w2 != w, "a new one waits for the next call");
	/* the host's mount table changes: the one waiting (its child holds a
	 * copy of the old table) is replaced */
	if (geteuid() == 0) {
		char mnt[PATH_MAX + 8];
		pid_t w3;

		snprintf(mnt, sizeof(mnt), "%s/mnt", T);
		mkdir(mnt, 0700);
		if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k") == 0) {
			w3 = warm_runner_of(srv, w2, 300);
			CHECKF(w3 > 0 && w3 != w2 && !is_warm(w2),
			       "a mount on the host renews the runner started ahead");
			umount(mnt);
		} else {
			CHECKF(0, "mount a tmpfs for the test: %s", strerror(errno));
		}
		rmdir(mnt);
	}
	moat_bash_server_stop(&e);
	moat_config_free(nonet);
}

/* The runner started ahead scans the workspace for the masks while the
 * agent thinks, and the call reads again only what changed since: secrets
 * made between the two are masked all the same (a file added to a
 * directory the scan ahead read, one in a new directory, one whose
 * directory had its time set back), while other new files stay readable. */
static void test_scan_ahead(void)
{
	struct moat_config *nonet = nonet_config();
	struct moat_tool_env e;
	struct moat_tool_result r;
	struct moat_error err;
	struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
	char p[PATH_MAX + 64];
	pid_t w, before[8];
	int nb;

	snprintf(p, sizeof(p), "%s/proj/a/b", WS);
	mkdirs(p);
	snprintf(p, sizeof(p), "%s/proj/c", WS);
	mkdirs(p);
	sleep(3); /* older than the scan ahead's slack: its reading is trusted */
	nb = servers(before, 8);
	env_for(&e, nonet);
	CHECK_INT(moat_bash_server_start(&e, &err), 0);
	CHECK_INT(bash_env(&e, NULL, &r, "{\"command\": \"true\"}"), 0);
	result_clear(&r);
	w = warm_runner_of(new_server(before, nb), 0, 300);
	CHECKF(w > 0, "a runner is started ahead after the call");
	usleep(500000); /* its scan ahead is done */
	snprintf(p, sizeof(p), "%s/proj/a/b/.env", WS);
	write_file(p, "SECRET1\n");
	snprintf(p, sizeof(p), "%s/proj/a/b/plain.txt", WS);
	write_file(p, "plain\n");
	snprintf(p, sizeof(p), "%s/proj/c/new", WS);
	mkdirs(p);
	snprintf(p, sizeof(p), "%s/proj/c/new/.env.local", WS);
	write_file(p, "SECRET2\n");
	snprintf(p, sizeof(p), "%s/proj/c/x.pem", WS);
	write_file(p, "SECRET3\n");
	snprintf(p, sizeof(p), "%s/proj/c", WS);
	CHECK_INT(utimensat(AT_FDCWD, p, old, 0), 0); /* its mtime as before (not its ctime) */
	CHECK_INT(bash_env(&e, NULL, &r,
			   "{\"command\": \"for f in proj/a/b/.env proj/c/new/.env.local "
			   "proj/c/x.pem proj/a/b/plain.txt; do cat $f 2>/dev/null; done; true\"}"),
		  0);
	CHECKF(r.ok && !strcmp(text(&r), "plain\n"),
	       "secrets made after the scan ahead are masked, a new plain file is read (%s)",
	       text(&r));
	result_clear(&r);
	for (int i = 0; i < 200 && kill(w, 0) == 0; i++)
		usleep(10000);
	CHECKF(kill(w, 0) < 0, "the runner started ahead took the call");
	moat_bash_server_stop(&e);
	moat_config_free(nonet);
}

/* In a repository missing protected directories get empty read-only
 * stand-ins; a session keeps them from one shell call to the next (made
 * once, not per call) and removes them when it ends. */
static void test_standins_kept(void)
{
	struct moat_tool_env e;
	struct moat_tool_result r;
	struct moat_error err;
	char ws2[PATH_MAX + 16], p[PATH_MAX + 64];
	struct stat st;
	ino_t ino = 0;

	snprintf(ws2, sizeof(ws2), "%s/repo", T);
	snprintf(p, sizeof(p), "%s/.git", ws2);
	mkdirs(p);
	env_for(&e, cfg_default);
	e.bash_server = NULL;
	e.workspace = ws2;
	CHECK_INT(moat_bash_server_start(&e, &err), 0);
	for (int call = 0; call < 2; call++) {
		CHECK_INT(bash_env(&e, NULL, &r,
				   "{\"command\": \"test -d .vscode && echo there; mkdir -p "
				   ".vscode/x 2>/dev/null; touch .vscode/tasks.json 2>/dev/null; "
				   "ls -A .vscode | wc -l\"}"),
			  0);
		CHECKF(r.ok && !strcmp(text(&r), "there\n0\n"),
		       "call %d: .vscode is an empty stand-in nothing can be written in (%s)", call,
		       text(&r));
		result_clear(&r);
		snprintf(p, sizeof(p), "%s/.vscode", ws2);
		CHECKF(lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && (call == 0 || st.st_ino == ino),
		       "call %d: the session keeps the same stand-in between calls", call);
		ino = st.st_ino;
		snprintf(p, sizeof(p), "%s/.vscode/tasks.json", ws2);
		CHECKF(!file_exists(p), "call %d: nothing was written into it", call);
	}
	moat_bash_server_stop(&e);
	snprintf(p, sizeof(p), "%s/.vscode", ws2);
	CHECKF(!file_exists(p), "the session's end removes its stand-ins (.vscode)");
	snprintf(p, sizeof(p), "%s/.claude", ws2);
	CHECKF(!file_exists(p), "the session's end removes its stand-ins (.claude)");
}

static void test_stop(void)
{
	struct pinfo kids[64];
	int n;

	moat_bash_server_stop(&srv_env);
	CHECK(srv_env.bash_server == NULL);
	moat_bash_server_stop(&srv_env); /* twice: nothing */
	moat_bash_server_stop(NULL);
	n = descendants(getpid(), kids, 64);
	CHECKF(n == 0, "after stop no child of ours is left, not even a zombie (%d)", n);
	CHECKF(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "stop reaped the server");
}

int main(void)
{
	struct moat_error err;
	char marker[PATH_MAX + 32];
	int mfd;

	tap_require_namespaces();
	setup();
	cfg_default = config(NULL);
	/* a descriptor of ours (not close-on-exec) the server must not keep */
	snprintf(marker, sizeof(marker), "%s/marker.fd", T);
	mfd = open(marker, O_WRONLY | O_CREAT, 0600);
	/* before any thread, as a session does */
	env_for(&srv_env, cfg_default);
	CHECK_INT(moat_bash_server_start(&srv_env, &err), 0);
	CHECK(srv_env.bash_server != NULL);
	CHECK_INT(moat_bash_server_start(&srv_env, &err), 0); /* already runs */
	via_server = true;

	check_tree(true, "sleep 777501", "{\"command\": \"sleep 777501\"}");
	test_basics();
	test_signal_state();
	test_caps();
	test_args();
	test_cwd_and_writes();
	test_timeout();
	test_cancel();
	test_progress();
	test_network();
	test_fallback();
	test_concurrent();
	test_warm();
	test_scan_ahead();
	test_standins_kept();
	test_dies_with_caller();
	test_server_killed();
	test_stop();

	/* without a server: each call forks the caller (single-threaded here:
	 * test_cancel's threads would not be safe) */
	via_server = false;
	check_tree(false, "sleep 777502", "{\"command\": \"sleep 777502\"}");
	test_basics();
	test_timeout();

	close(mfd);
	moat_config_free(cfg_default);
	moat_rmtree(T);
	CHECK(!file_exists(T));
	return tap_done();
}
