/* The runner (src/sandbox/runner.c): `moat run` as a library call. Exit
 * statuses and the result fields, the lines it says and when, the fallback
 * policy with and without an ask callback, the working directory guard, the
 * temporary workspace, the timeout as a profile layer, --print-plan, and the
 * requested/enforced JSON. Commands write into files of a directory made
 * writable for them, and the checks read those files from outside. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "base/str.h"
#include "sandbox/runner.h"
#include "sandbox/sandbox.h"

#include "tap.h"

extern char **environ;

static char T[64], WS[PATH_MAX], OUT[PATH_MAX];
static char *envp[4];
static struct moat_config *cfg;

/* what the runner said, one line each */
static struct moat_buf said = MOAT_BUF_INIT;
static int nsaid;

static void say(const char *line, void *ud)
{
	(void)ud;
	moat_buf_puts(&said, line);
	moat_buf_putc(&said, '\n');
	nsaid++;
}

static int asked;
static bool ask_answer;
static char asked_gaps[512];

static bool ask(const char *gaps, void *ud)
{
	(void)ud;
	asked++;
	moat_strlcpy(asked_gaps, gaps, sizeof(asked_gaps));
	return ask_answer;
}

static void req_init(struct moat_run_request *rq, char **argv)
{
	memset(rq, 0, sizeof(*rq));
	rq->cfg = cfg;
	rq->workspace = WS;
	rq->argv = argv;
	rq->env = envp;
	rq->say = say;
	moat_buf_reset(&said);
	nsaid = 0;
}

static bool exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

static char *slurp(const char *name)
{
	static char buf[4096];
	char p[PATH_MAX + 64];
	int fd;
	ssize_t n;

	snprintf(p, sizeof(p), "%s/%s", OUT, name);
	buf[0] = '\0';
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
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

/* {"/bin/sh", "-c", script} with OUT writable (a flag layer) */
static struct moat_profile over;

static int run_sh(struct moat_run_request *rq, struct moat_run_result *res, const char *script)
{
	static char *argv[4];
	struct moat_error err;

	argv[0] = (char *)"/bin/sh";
	argv[1] = (char *)"-c";
	argv[2] = (char *)script;
	argv[3] = NULL;
	rq->argv = argv;
	if (!rq->over)
		rq->over = &over;
	moat_error_clear(&err);
	return moat_runner_run(rq, res, &err);
}

static void setup(void)
{
	char p[PATH_MAX + 16];
	static char home[PATH_MAX + 8];

	snprintf(T, sizeof(T), "/tmp/moat-tr-XXXXXX");
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
	snprintf(home, sizeof(home), "HOME=%s", T);
	envp[0] = (char *)"PATH=/usr/local/bin:/usr/bin:/bin";
	envp[1] = home;
	envp[2] = NULL;
	moat_profile_init(&over, "flags");
	if (moat_strv_add(&over.rw, OUT) < 0)
		exit(99);
	over.set |= MOAT_PF_RW;
}

static void test_statuses(void)
{
	struct moat_run_request rq;
	struct moat_run_result res;
	char cmd[PATH_MAX + 64];
	json_t *sb, *req, *enf, *miss;

	req_init(&rq, NULL);
	snprintf(cmd, sizeof(cmd), "pwd > '%s/pwd'", OUT);
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECK_INT(res.status, 0);
	CHECK(res.ran);
	CHECK_INT(res.exit_code, 0);
	CHECK_INT(res.signal, 0);
	CHECK(!res.timed_out);
	CHECK_STR(res.error, "");
	CHECK_INT(nsaid, 0);
	CHECK(res.duration_ms > 0);
	{
		char want[PATH_MAX + 2];

		snprintf(want, sizeof(want), "%s\n", WS);
		CHECK_STR(slurp("pwd"), want);
	}
	/* the sandbox JSON: requested = enforced + missing */
	sb = json_loads(res.sandbox, 0, NULL);
	CHECKF(json_is_object(sb), "the sandbox JSON parses (%s)", res.sandbox);
	CHECK_STR(json_string_value(json_object_get(sb, "profile")), "workspace-write");
	req = json_object_get(sb, "requested");
	enf = json_object_get(sb, "enforced");
	miss = json_object_get(sb, "missing");
	CHECK(json_array_size(req) > 0);
	CHECK_INT(json_array_size(req), json_array_size(enf) + json_array_size(miss));
	CHECK(json_is_object(json_object_get(sb, "limits")));
	CHECK(json_is_integer(json_object_get(json_object_get(sb, "limits"), "memory_mb")));
	json_decref(sb);

	req_init(&rq, NULL);
	CHECK_INT(run_sh(&rq, &res, "exit 5"), 0);
	CHECK_INT(res.status, 5);
	CHECK_INT(res.exit_code, 5);
	CHECK(res.ran);

	req_init(&rq, NULL);
	CHECK_INT(run_sh(&rq, &res,
			 "exec /usr/bin/python3 -c 'import ctypes; ctypes.string_at(0)' "
			 "2>/dev/null"),
		  0);
	if (access("/usr/bin/python3", X_OK) == 0) {
		CHECK_INT(res.status, 128 + 11);
		CHECK_INT(res.signal, 11);
		CHECK_INT(res.exit_code, -1);
	}

	/* not found: moat's own 127, said, not run */
	{
		char *argv[] = {(char *)"/nonexistent/prog", NULL};
		struct moat_error err;

		req_init(&rq, argv);
		CHECK_INT(moat_runner_run(&rq, &res, &err), 0);
		CHECK_INT(res.status, MOAT_RUN_EXIT_NOTFOUND);
		CHECK(!res.ran);
		CHECK_INT(res.step, MOAT_STEP_EXEC);
		CHECK(strstr(res.error, "cannot run '/nonexistent/prog'") != NULL);
		CHECK_INT(nsaid, 1);
		CHECK(strstr(said.data, "cannot run") != NULL);
		CHECK_STR(err.msg, res.error);
	}

	/* a timeout kills the tree: status 124, said with a hint */
	req_init(&rq, NULL);
	rq.timeout_s = 1;
	CHECK_INT(run_sh(&rq, &res, "sleep 30 & sleep 30"), 0);
	CHECK_INT(res.status, MOAT_RUN_EXIT_TIMEOUT);
	CHECK(res.timed_out);
	CHECK(strstr(res.error, "timed out after 1 s") != NULL);
	CHECK_STR(res.hint, "raise --timeout");
	CHECK(strstr(said.data, ". hint: raise --timeout\n") != NULL);
	CHECK(strstr(res.sandbox, "\"timeout_s\":1") != NULL);

	/* bad requests */
	{
		struct moat_error err;

		CHECK_INT(moat_runner_run(NULL, &res, &err), -EINVAL);
		req_init(&rq, NULL);
		CHECK_INT(moat_runner_run(&rq, &res, &err), -EINVAL);
	}
}

static void test_refusals(void)
{
	struct moat_run_request rq;
	struct moat_run_result res;
	char cmd[PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "touch '%s/ran'", OUT);

	/* an unknown profile refuses (seed 002: fail closed) */
	req_init(&rq, NULL);
	rq.profile = "no-such-profile";
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECK_INT(res.status, MOAT_RUN_EXIT_SETUP);
	CHECK(!res.ran);
	CHECK(strstr(res.error, "refusing to run") != NULL);
	CHECK_INT(nsaid, 1);
	{
		char p[PATH_MAX + 8];

		snprintf(p, sizeof(p), "%s/ran", OUT);
		CHECK(!exists(p));
	}

	/* a working directory outside the workspace refuses */
	req_init(&rq, NULL);
	rq.cwd = OUT;
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECK_INT(res.status, MOAT_RUN_EXIT_SETUP);
	CHECK(strstr(res.error, "cannot plan the sandbox") != NULL);
	{
		char p[PATH_MAX + 8];

		snprintf(p, sizeof(p), "%s/ran", OUT);
		CHECK(!exists(p));
	}
	req_init(&rq, NULL);
	rq.cwd = "/nonexistent-dir";
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECK_INT(res.status, MOAT_RUN_EXIT_SETUP);
	CHECK(strstr(res.error, "working directory") != NULL);
	CHECK(res.hint[0] != '\0');

	/* a working directory inside: used */
	{
		char sub[PATH_MAX + 8], want[PATH_MAX + 16];

		snprintf(sub, sizeof(sub), "%s/sub", WS);
		req_init(&rq, NULL);
		rq.cwd = sub;
		snprintf(cmd, sizeof(cmd), "pwd > '%s/pwd2'", OUT);
		CHECK_INT(run_sh(&rq, &res, cmd), 0);
		CHECK_INT(res.status, 0);
		snprintf(want, sizeof(want), "%s\n", sub);
		CHECK_STR(slurp("pwd2"), want);
	}
	/* a workspace that is not a directory */
	req_init(&rq, NULL);
	rq.workspace = "/nonexistent-ws";
	CHECK_INT(run_sh(&rq, &res, "true"), 0);
	CHECK_INT(res.status, MOAT_RUN_EXIT_SETUP);
	CHECK_STR(res.hint, "pass an existing directory with --workspace");
	CHECK(strstr(said.data, "cannot use '/nonexistent-ws' as the workspace") != NULL);
}

/* The timeout is a profile layer: an immutable process dimension may only
 * be tightened. */
static void test_timeout_layer(void)
{
	struct moat_config *c =
	    config("{\"sandbox\": {\"profiles\": {\"strict\": {\"extends\": \"workspace-write\", "
		   "\"timeout_s\": 5, \"immutable\": [\"process\"]}}}}");
	struct moat_run_request rq;
	struct moat_run_result res;

	req_init(&rq, NULL);
	rq.cfg = c;
	rq.profile = "strict";
	rq.timeout_s = 10;
	CHECK_INT(run_sh(&rq, &res, "true"), 0);
	CHECKF(res.status == MOAT_RUN_EXIT_SETUP && !res.ran,
	       "a longer timeout than an immutable profile's is refused (%s)", res.error);
	req_init(&rq, NULL);
	rq.cfg = c;
	rq.profile = "strict";
	rq.timeout_s = 2;
	CHECK_INT(run_sh(&rq, &res, "true"), 0);
	CHECK_INT(res.status, 0);
	CHECK(strstr(res.sandbox, "\"timeout_s\":2") != NULL);
	moat_config_free(c);
}

static void test_tmp_workspace(void)
{
	struct moat_run_request rq;
	struct moat_run_result res;
	char cmd[2 * PATH_MAX + 64], pwd[4096];

	req_init(&rq, NULL);
	rq.tmp_workspace = true;
	rq.cwd = WS; /* ignored: the call starts in its fresh workspace */
	snprintf(cmd, sizeof(cmd), "pwd > '%s/tmpws'; ls -A | wc -l >> '%s/tmpws'", OUT, OUT);
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECK_INT(res.status, 0);
	moat_strlcpy(pwd, slurp("tmpws"), sizeof(pwd));
	CHECKF(!strncmp(pwd, "/tmp/moat-ws-", 13), "a temporary workspace (%s)", pwd);
	CHECK(strstr(pwd, "\n0\n") != NULL);
	if (strchr(pwd, '\n'))
		*strchr(pwd, '\n') = '\0';
	CHECKF(!exists(pwd), "the temporary workspace is removed afterwards (%s)", pwd);
}

/* A protection this system cannot give: user namespaces faked away. */
static void test_fallback(void)
{
	struct moat_run_request rq;
	struct moat_run_result res;
	struct moat_profile ov;
	char cmd[PATH_MAX + 64], p[PATH_MAX + 8];

	snprintf(cmd, sizeof(cmd), "touch '%s/fb'", OUT);
	snprintf(p, sizeof(p), "%s/fb", OUT);
	setenv("MOAT_FAKE_NO_USERNS", "1", 1);

	/* deny (the default): refused, the gaps said first, then the refusal */
	req_init(&rq, NULL);
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECK_INT(res.status, MOAT_RUN_EXIT_SETUP);
	CHECK(!res.ran);
	CHECK(!exists(p));
	CHECK(nsaid >= 2);
	CHECK(!strncmp(said.data, "cannot enforce ", 15));
	CHECK(strstr(res.error, "(fallback deny)") != NULL);
	CHECK(strstr(res.hint, "--fallback warn") != NULL);
	CHECK(strstr(res.warning, "cannot enforce pid-namespace") != NULL);
	CHECK(strstr(res.sandbox, "\"missing\":[") && strstr(res.sandbox, "pid-namespace"));

	/* accepted gaps: one accepted, the others still refuse; all of them
	 * accepted, it runs, saying each */
	req_init(&rq, NULL);
	rq.accept_gaps = 1u << MOAT_FEAT_PIDNS;
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECK_INT(res.status, MOAT_RUN_EXIT_SETUP);
	CHECK(!exists(p));
	CHECKF(strstr(res.error, "refusing to run without: ") &&
		   !strstr(res.error, "pid-namespace") && strstr(res.error, "metadata"),
	       "the refusal names the others (%s)", res.error);
	CHECK(strstr(res.warning, "warning: not enforced (accepted): pid-namespace") != NULL);
	CHECK(strstr(res.hint, "--accept-gap ") && !strstr(res.hint, "pid-namespace"));
	CHECK(strstr(res.sandbox, "\"accepted\":[\"pid-namespace\"]") != NULL);
	req_init(&rq, NULL);
	rq.accept_gaps = (1u << MOAT_FEAT__COUNT) - 1;
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECK_INT(res.status, 0);
	CHECK(exists(p));
	CHECK_STR(res.error, "");
	CHECK(strstr(res.warning, "not enforced (accepted): metadata") != NULL);
	CHECK(strstr(res.sandbox, "\"accepted\":[") &&
	      strstr(strstr(res.sandbox, "\"accepted\":["), "pid-namespace"));
	unlink(p);

	/* ask: the callback decides; without one it is a refusal */
	moat_profile_init(&ov, "flags");
	moat_profile_copy(&ov, &over);
	ov.fallback = MOAT_FALLBACK_ASK;
	ov.set |= MOAT_PF_FALLBACK;
	req_init(&rq, NULL);
	rq.over = &ov;
	rq.ask = ask;
	ask_answer = false;
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECK_INT(asked, 1);
	CHECK(strstr(asked_gaps, "pid-namespace") != NULL);
	CHECK(strstr(res.error, "fallback ask: not confirmed") != NULL);
	CHECK(!exists(p));
	ask_answer = true;
	req_init(&rq, NULL);
	rq.over = &ov;
	rq.ask = ask;
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECK_INT(asked, 2);
	CHECK_INT(res.status, 0);
	CHECK(exists(p));
	unlink(p);
	req_init(&rq, NULL);
	rq.over = &ov;
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECK(strstr(res.error, "nobody to confirm") != NULL);
	CHECK(!exists(p));

	/* warn: runs, says what is missing, keeps it in ret->warning */
	ov.fallback = MOAT_FALLBACK_WARN;
	req_init(&rq, NULL);
	rq.over = &ov;
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECK_INT(res.status, 0);
	CHECK(res.ran);
	CHECK(exists(p));
	CHECK(!strncmp(said.data, "warning: not enforced: ", 23));
	CHECK(strstr(res.warning, "warning: not enforced: pid-namespace") != NULL);
	CHECK_STR(res.error, "");
	moat_profile_release(&ov);
	unsetenv("MOAT_FAKE_NO_USERNS");
	unlink(p);
}

/* Without a mount namespace, a masked file in the workspace: Landlock's
 * rules carved around it (landlock.c). */
static void test_carve(void)
{
	struct moat_run_request rq;
	struct moat_run_result res;
	char cmd[4 * PATH_MAX], p[PATH_MAX + 32];
	int fd;

	setenv("MOAT_FAKE_NO_USERNS", "1", 1);
	snprintf(p, sizeof(p), "%s/c", WS);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/c/.env", WS);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "KEY=SECRET\n", 11) == 11);
	close(fd);
	snprintf(p, sizeof(p), "%s/c/readme", WS);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "plain\n", 6) == 6);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "cat c/.env > '%s/carve_env' 2>/dev/null; cat c/readme > '%s/carve_readme'; "
		 "echo more >> c/readme; echo x > c/new; echo y > sub/new",
		 OUT, OUT);
	req_init(&rq, NULL);
	rq.accept_gaps = (1u << MOAT_FEAT__COUNT) - 1;
	CHECK_INT(run_sh(&rq, &res, cmd), 0);
	CHECKF(res.ran, "ran (%s)", res.error);
	CHECK_STR(slurp("carve_env"), "");
	CHECK_STR(slurp("carve_readme"), "plain\n");
	CHECK(strstr(res.warning, "nothing new can be created directly") &&
	      strstr(res.warning, "/c"));
	{
		const char *m = strstr(res.sandbox, "\"missing\":["), *e = m ? strchr(m, ']') : NULL,
			   *sec = m ? strstr(m, "\"secrets\"") : NULL;

		CHECKF(m && e && (!sec || sec > e), "secrets is no gap (%s)", res.sandbox);
	}
	snprintf(p, sizeof(p), "%s/c/new", WS);
	CHECK(!exists(p)); /* the honest cost: nothing new beside a masked file */
	snprintf(p, sizeof(p), "%s/sub/new", WS);
	CHECK(exists(p)); /* elsewhere as ever */
	unlink(p);
	snprintf(p, sizeof(p), "%s/c/.env", WS);
	CHECK(exists(p));
	unlink(p);
	snprintf(p, sizeof(p), "%s/c/readme", WS);
	unlink(p);
	snprintf(p, sizeof(p), "%s/c", WS);
	rmdir(p);
	unsetenv("MOAT_FAKE_NO_USERNS");
}

static void test_print_plan(void)
{
	struct moat_run_request rq;
	struct moat_run_result res;
	struct moat_error err;
	char p[PATH_MAX + 16];
	int fd, saved, r;
	json_t *plan;

	snprintf(p, sizeof(p), "%s/plan.json", OUT);
	fflush(stdout);
	saved = dup(1);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 1);
	close(fd);
	req_init(&rq, NULL);
	rq.print_plan = true;
	r = moat_runner_run(&rq, &res, &err);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	CHECK_INT(r, 0);
	CHECK_INT(res.status, 0);
	CHECK(!res.ran);
	{
		json_error_t je;

		plan = json_load_file(p, 0, &je);
		CHECKF(json_is_object(plan), "--print-plan writes the plan as JSON (%s)", je.text);
	}
	CHECK(json_is_object(json_object_get(plan, "kernel")));
	CHECK(json_is_array(json_object_get(plan, "mounts")));
	json_decref(plan);
}

int main(void)
{
	tap_require_namespaces();
	setup();
	cfg = config(NULL);
	test_statuses();
	test_refusals();
	test_timeout_layer();
	test_tmp_workspace();
	test_fallback();
	test_carve();
	test_print_plan();
	moat_config_free(cfg);
	moat_profile_release(&over);
	moat_buf_release(&said);
	moat_rmtree(T);
	CHECK(!exists(T));
	return tap_done();
}
