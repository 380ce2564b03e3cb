/* The session (the pipeline) through the public library API: a callback
 * approver, hard denies, bad input, concurrent calls, calls that defer an
 * ask (defer_ask), and the audit log, each checked on disk. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <moat/moat.h>

#include "tap.h"

static char ws[256], audit[320], cfg[4096];

static size_t count_lines(const char *path, size_t *bad)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, n = 0;

	*bad = 0;
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		json_t *j = json_loads(line, 0, NULL);

		if (!json_is_object(j))
			(*bad)++;
		json_decref(j);
		n++;
	}
	free(line);
	fclose(f);
	return n;
}

static bool file_is(const char *rel, const char *want)
{
	char p[512], buf[256];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s", ws, rel);
	f = fopen(p, "r");
	if (!f)
		return want == NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return want && !strcmp(buf, want);
}

struct approver_state {
	atomic_int calls;
	enum moat_answer answer;
};

static int approver(void *ud, const struct moat_ask *ask, int timeout_ms, struct moat_reply *ret)
{
	struct approver_state *st = ud;

	atomic_fetch_add(&st->calls, 1);
	memset(ret, 0, sizeof(*ret));
	ret->answer = st->answer;
	return 0;
}

static struct moat_session *open_session(const char *config, moat_approver_fn fn, void *ud)
{
	struct moat_session_opts o;
	struct moat_session *s = NULL;
	struct moat_error err;
	int r;

	memset(&o, 0, sizeof(o));
	moat_error_clear(&err);
	o.config_json = config;
	o.cwd = ws;
	o.audit_path = audit;
	o.no_project_config = true;
	o.approver = fn;
	o.approver_ud = ud;
	o.approver_name = "callback";
	r = moat_session_new(&o, &s, &err);
	if (r < 0)
		fprintf(stderr, "# session: %s\n", err.msg);
	return s;
}

static enum moat_call_status call(struct moat_session *s, const char *tool, const char *args)
{
	struct moat_call_result r;
	enum moat_call_status st;

	if (moat_session_call(s, tool, args, strlen(args), NULL, &r) < 0)
		return (enum moat_call_status)-1;
	st = r.status;
	{
		json_t *j = r.json ? json_loads(r.json, 0, NULL) : NULL;

		if (!json_is_object(j))
			st = (enum moat_call_status)-2;
		json_decref(j);
	}
	moat_call_result_release(&r);
	return st;
}

/* A call with defer_ask: its status; *json_status gets the result's
 * "status" ("" when none). */
static enum moat_call_status call_deferred(struct moat_session *s, const char *tool,
					   const char *args, moat_approver_fn fn, void *ud,
					   char *json_status, size_t jsz)
{
	struct moat_call_opts o = {.cancel_fd = -1, .defer_ask = true};
	struct moat_call_result r;
	enum moat_call_status st;

	o.approver = fn;
	o.approver_ud = ud;
	json_status[0] = '\0';
	if (moat_session_call(s, tool, args, strlen(args), &o, &r) < 0)
		return (enum moat_call_status)-1;
	st = r.status;
	{
		json_t *j = r.json ? json_loads(r.json, 0, NULL) : NULL;
		const char *v = json_string_value(json_object_get(j, "status"));

		if (!json_is_object(j))
			st = (enum moat_call_status)-2;
		snprintf(json_status, jsz, "%s", v ? v : "");
		json_decref(j);
	}
	moat_call_result_release(&r);
	return st;
}

struct worker {
	struct moat_session *s;
	int ok;
};

static void *reader(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 50; i++)
		if (call(w->s, "read_file", "{\"path\": \"hello.txt\"}") == MOAT_CALL_OK)
			w->ok++;
	return NULL;
}

int main(void)
{
	struct approver_state st = {0};
	struct moat_session *s;
	size_t bad, n0, n1;
	char path[512];

	snprintf(ws, sizeof(ws), "/var/tmp/moat-session-test.XXXXXX");
	if (!mkdtemp(ws))
		return 1;
	snprintf(audit, sizeof(audit), "%s.audit.jsonl", ws);
	snprintf(path, sizeof(path), "%s/hello.txt", ws);
	{
		FILE *f = fopen(path, "w");

		fputs("hello\n", f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/.git", ws);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/.git/hooks", ws);
	mkdir(path, 0700);
	snprintf(cfg, sizeof(cfg),
		 "{\"require_approval_for_writes\": true, \"allowed_paths\": [\"%s/**\"]}", ws);

	/* a callback approver: yes, no, always */
	s = open_session(cfg, approver, &st);
	CHECK(s != NULL);
	if (!s)
		return tap_done();
	CHECK(call(s, "read_file", "{\"path\": \"hello.txt\"}") == MOAT_CALL_OK);
	CHECK(atomic_load(&st.calls) == 0);
	st.answer = MOAT_ANSWER_DENIED;
	CHECK(call(s, "write_file", "{\"path\": \"a.txt\", \"content\": \"x\"}") ==
	      MOAT_CALL_DENIED);
	CHECK(file_is("a.txt", NULL));
	CHECK(atomic_load(&st.calls) == 1);
	st.answer = MOAT_ANSWER_APPROVED;
	CHECK(call(s, "write_file", "{\"path\": \"a.txt\", \"content\": \"x\"}") == MOAT_CALL_OK);
	CHECK(file_is("a.txt", "x"));
	CHECK(atomic_load(&st.calls) == 2);
	st.answer = MOAT_ANSWER_APPROVED_ALWAYS;
	CHECK(call(s, "write_file", "{\"path\": \"b.txt\", \"content\": \"y\"}") == MOAT_CALL_OK);
	st.answer = MOAT_ANSWER_DENIED; /* remembered: not asked again */
	CHECK(call(s, "write_file", "{\"path\": \"c.txt\", \"content\": \"z\"}") == MOAT_CALL_OK);
	CHECK(file_is("c.txt", "z"));
	CHECK(atomic_load(&st.calls) == 3);

	/* defer_ask: an ASK no one settled comes back DEFERRED at once,
	 * nothing asked, run or recorded; one that "always" settled runs */
	{
		struct approver_state st2 = {.answer = MOAT_ANSWER_APPROVED};
		char js[32], cfg2[4200];
		struct moat_session *s2;

		n0 = count_lines(audit, &bad);
		CHECK(call_deferred(s, "write_file", "{\"path\": \"c.txt\", \"content\": \"w\"}",
				    approver, &st2, js, sizeof(js)) == MOAT_CALL_OK);
		CHECK(file_is("c.txt", "w"));
		CHECK(call_deferred(s, "read_file", "{\"path\": \"hello.txt\"}", approver, &st2,
				    js, sizeof(js)) == MOAT_CALL_OK);
		CHECK(call_deferred(s, "read_file", "{\"path\": \"/etc/shadow\"}", approver, &st2,
				    js, sizeof(js)) == MOAT_CALL_DENIED);
		/* SECURITY: "always" does not settle an ask a human must see each
		 * time: deferred, nothing written */
		CHECK(call_deferred(s, "write_file",
				    "{\"path\": \".git/hooks/pre-commit\", \"content\": \"x\"}",
				    approver, &st2, js, sizeof(js)) == MOAT_CALL_DEFERRED);
		CHECK(file_is(".git/hooks/pre-commit", NULL));
		CHECK_INT(atomic_load(&st2.calls), 0);
		n1 = count_lines(audit, &bad);
		CHECK_INT((int)(n1 - n0), 3);

		/* a session that remembers nothing: the same write is deferred,
		 * a pre-approved one runs */
		snprintf(cfg2, sizeof(cfg2),
			 "{\"require_approval_for_writes\": true, \"allowed_paths\": [\"%s/**\"], "
			 "\"approvals\": [{\"tool\": \"write_file\", \"arg\": \"path\", "
			 "\"match\": \"pre.txt\"}]}",
			 ws);
		s2 = open_session(cfg2, approver, &st2);
		CHECK(s2 != NULL);
		if (s2) {
			n0 = count_lines(audit, &bad);
			CHECK(call_deferred(s2, "write_file",
					    "{\"path\": \"g.txt\", \"content\": \"x\"}", approver,
					    &st2, js, sizeof(js)) == MOAT_CALL_DEFERRED);
			CHECK_STR(js, "deferred");
			/* the session's own approver is not asked either */
			CHECK(call_deferred(s2, "write_file",
					    "{\"path\": \"g.txt\", \"content\": \"x\"}", NULL, NULL,
					    js, sizeof(js)) == MOAT_CALL_DEFERRED);
			CHECK(file_is("g.txt", NULL));
			CHECK(call_deferred(s2, "write_file",
					    "{\"path\": \"pre.txt\", \"content\": \"p\"}", approver,
					    &st2, js, sizeof(js)) == MOAT_CALL_OK);
			CHECK(file_is("pre.txt", "p"));
			CHECK_INT(atomic_load(&st2.calls), 0);
			CHECK_INT(atomic_load(&st.calls), 3);
			n1 = count_lines(audit, &bad);
			CHECK_INT((int)(n1 - n0), 1); /* pre.txt's */
			/* the same call without defer_ask asks, runs, is recorded */
			CHECK(call(s2, "write_file", "{\"path\": \"g.txt\", \"content\": \"x\"}") ==
			      MOAT_CALL_OK);
			CHECK(file_is("g.txt", "x"));
			CHECK_INT(atomic_load(&st2.calls), 1);
			CHECK_INT((int)(count_lines(audit, &bad) - n1), 1);
			moat_session_free(s2);
		}
	}

	/* hard denies never reach the approver */
	st.answer = MOAT_ANSWER_APPROVED;
	CHECK(call(s, "bash", "{\"command\": \"rm -rf /\"}") == MOAT_CALL_DENIED);
	CHECK(call(s, "read_file", "{\"path\": \"/etc/shadow\"}") == MOAT_CALL_DENIED);
	CHECK(call(s, "write_file", "{\"path\": \"/etc/moat-test\", \"content\": \"x\"}") ==
	      MOAT_CALL_DENIED);
	CHECK(access("/etc/moat-test", F_OK) < 0);
	CHECK(atomic_load(&st.calls) == 3);

	/* bad input: nothing runs, still recorded */
	n0 = count_lines(audit, &bad);
	CHECK(call(s, "write_file", "{\"path\": \"d.txt\", \"content\": ") == MOAT_CALL_BAD_INPUT);
	CHECK(call(s, "write_file", "{\"path\": \"d.txt\", \"path\": \"e.txt\", \"content\": \"\"}") ==
	      MOAT_CALL_BAD_INPUT);
	CHECK(call(s, "write_file", "{\"path\": \"d.txt\", \"content\": 7}") == MOAT_CALL_BAD_INPUT);
	CHECK(call(s, "", "{}") == MOAT_CALL_BAD_INPUT);
	CHECK(call(s, "no_such_tool", "{\"x\": 1}") != MOAT_CALL_OK);
	CHECK(file_is("d.txt", NULL) && file_is("e.txt", NULL));
	n1 = count_lines(audit, &bad);
	CHECK(n1 - n0 == 5);

	/* the usual flat arguments (parsed without jansson's lexer) and the
	 * same ones through the strict parser (an escape): the same result and
	 * the same audit record; lean: no result object beside an output */
	{
		static const char flat[] = "{\"path\": \"hello.txt\", \"offset\": 1, \"raw\": true}";
		static const char esc[] = "{\"path\": \"hell\\u006f.txt\", \"offset\": 1, \"raw\": true}";
		struct moat_call_opts lo = {.cancel_fd = -1, .lean = true};
		struct moat_call_result a, b;
		char *line = NULL, *prev = NULL;
		size_t cap = 0;
		FILE *f;

		CHECK(moat_session_call(s, "read_file", flat, strlen(flat), &lo, &a) == 0);
		CHECK(moat_session_call(s, "read_file", esc, strlen(esc), NULL, &b) == 0);
		CHECKF(a.status == MOAT_CALL_OK && b.status == MOAT_CALL_OK && !a.json && b.json &&
			   a.output && b.output && !strcmp(a.output, "hello\n") &&
			   !strcmp(a.output, b.output) && a.data_json && b.data_json &&
			   !strcmp(a.data_json, b.data_json),
		       "flat and escaped arguments: the same result; lean leaves out the object");
		moat_call_result_release(&a);
		moat_call_result_release(&b);
		f = fopen(audit, "r");
		while (f && getline(&line, &cap, f) > 0) {
			free(prev);
			prev = strdup(line);
		}
		if (f) {
			/* the last two records: their "args" alike */
			json_t *jb = json_loads(prev ? prev : "", 0, NULL), *ja = NULL;
			char *l2 = NULL;
			size_t c2 = 0;
			long nlines = 0, k = 0;

			rewind(f);
			while (getline(&l2, &c2, f) > 0)
				nlines++;
			rewind(f);
			while (getline(&l2, &c2, f) > 0)
				if (++k == nlines - 1)
					ja = json_loads(l2, 0, NULL);
			CHECKF(ja && jb &&
				   json_equal(json_object_get(ja, "args"), json_object_get(jb, "args")) &&
				   json_is_true(json_object_get(json_object_get(ja, "args"), "raw")),
			       "flat and escaped arguments: the same audit args");
			json_decref(ja);
			json_decref(jb);
			free(l2);
			fclose(f);
		}
		free(line);
		free(prev);
	}

	/* concurrent calls on one session: all answered, one record each */
	{
		pthread_t t[8];
		struct worker w[8];
		int total = 0;

		n0 = count_lines(audit, &bad);
		for (int i = 0; i < 8; i++) {
			w[i].s = s;
			w[i].ok = 0;
			pthread_create(&t[i], NULL, reader, &w[i]);
		}
		for (int i = 0; i < 8; i++) {
			pthread_join(t[i], NULL);
			total += w[i].ok;
		}
		CHECK_INT(total, 400);
		n1 = count_lines(audit, &bad);
		CHECK_INT((int)(n1 - n0), 400);
		CHECK_INT((int)bad, 0);
	}
	moat_session_free(s);

	/* no approver: ASK is DENIED */
	s = open_session(cfg, NULL, NULL);
	CHECK(s != NULL);
	if (s) {
		CHECK(call(s, "write_file", "{\"path\": \"f.txt\", \"content\": \"x\"}") ==
		      MOAT_CALL_DENIED);
		CHECK(file_is("f.txt", NULL));
		moat_session_free(s);
	}

	/* an audit log that cannot be opened: no session (fails closed) */
	snprintf(audit, sizeof(audit), "%s/no/such/dir/audit.jsonl", ws);
	s = open_session(cfg, NULL, NULL);
	CHECK(s == NULL);
	moat_session_free(s);
	{
		char cfg2[4200];

		snprintf(cfg2, sizeof(cfg2), "{\"audit_required\": false, \"allowed_paths\": [\"%s/**\"]}",
			 ws);
		s = open_session(cfg2, NULL, NULL);
		CHECK(s != NULL);
		if (s)
			CHECK(call(s, "read_file", "{\"path\": \"hello.txt\"}") == MOAT_CALL_OK);
		moat_session_free(s);
	}

	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s.audit.jsonl'", ws, ws);
		if (strstr(ws, "/var/tmp/moat-session-test."))
			(void)!system(cmd);
	}
	return tap_done();
}
