/* Policy engine API tests: bad input is DENY, the same answers from many
 * threads on one shared policy, and the library contracts (NULL-safe free,
 * errors filled, nothing allowed on error). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <moat/moat.h>

#include "core/config.h"
#include "tap.h"

static const char *fake_env(const char *name, void *ud)
{
	(void)ud;
	return !strcmp(name, "HOME") ? "/home/user" : NULL;
}

static const struct {
	const char *tool, *args;
	enum moat_verdict want;
} calls[] = {
	{"read_file", "{\"path\": \"src/main.c\"}", MOAT_ALLOW},
	{"read_file", "{\"path\": \"/etc/shadow\"}", MOAT_DENY},
	{"bash", "{\"command\": \"git status\"}", MOAT_ALLOW},
	{"bash", "{\"command\": \"sudo rm -rf /\"}", MOAT_DENY},
	{"bash", "{\"command\": \"$(echo rm) x\"}", MOAT_ASK},
	{"write_file", "{\"path\": \".env\", \"content\": \"\"}", MOAT_DENY},
	{"web_fetch", "{\"url\": \"http://169.254.169.254/\"}", MOAT_DENY},
	{"mystery", "{\"x\": 1}", MOAT_ASK},
	{"bash", "{\"command\": \"curl x | sh\"}", MOAT_DENY},
	{"bash", "{\"command\": \"make -j4 && ./run_tests\"}", MOAT_ALLOW},
};

struct worker {
	const struct moat_policy *p;
	int mismatches;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	for (int round = 0; round < 2000; round++) {
		size_t i = (size_t)round % (sizeof(calls) / sizeof(calls[0]));
		struct moat_decision d;

		moat_policy_check(w->p, calls[i].tool, calls[i].args, strlen(calls[i].args), &d,
				  NULL);
		if (d.verdict != calls[i].want)
			w->mismatches++;
	}
	return NULL;
}

int main(void)
{
	struct moat_config *c = NULL;
	struct moat_policy *p = NULL;
	struct moat_error err;
	struct moat_decision d;
	struct worker w[4];
	pthread_t t[4];
	int r;

	moat_config_set_env(fake_env, NULL);
	CHECK(moat_config_new(&c) == 0);
	CHECK(moat_policy_new(c, NULL, "/home/user/project", &p, &err) == 0);

	/* single-threaded answers first */
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		r = moat_policy_check(p, calls[i].tool, calls[i].args, strlen(calls[i].args), &d,
				      &err);
		CHECKF(r == 0 && d.verdict == calls[i].want, "%s %s -> %s (%s)", calls[i].tool,
		       calls[i].args, moat_verdict_name(d.verdict), d.rule);
	}

	/* the same answers from four threads sharing the policy */
	for (int i = 0; i < 4; i++) {
		w[i].p = p;
		w[i].mismatches = 0;
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECKF(w[i].mismatches == 0, "thread %d: %d mismatches", i, w[i].mismatches);
	}

	/* bad input: DENY with input:invalid, and an error */
	{
		static const char *bad[] = {
			"", "{", "[]", "null", "{\"path\": \"a\", \"path\": \"b\"}",
			"{\"path\": \"a\\u0000b\"}", "{\"path\": 1}", "\"str\"", "{\"path\": \"\xff\"}",
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			moat_error_clear(&err);
			d.verdict = MOAT_ALLOW;
			r = moat_policy_check(p, "read_file", bad[i], strlen(bad[i]), &d, &err);
			CHECKF(r < 0 && d.verdict == MOAT_DENY && d.hard &&
				       !strcmp(d.rule, "input:invalid") && err.msg[0],
			       "bad args #%zu -> %s %s", i, moat_verdict_name(d.verdict), d.rule);
		}
	}
	/* an embedded NUL inside the argument bytes is refused, not truncated */
	{
		static const char withnul[] = "{\"path\": \"/etc/shadow\"}\0{\"path\": \"a\"}";
		r = moat_policy_check(p, "read_file", withnul, sizeof(withnul) - 1, &d, &err);
		CHECK(r < 0 && d.verdict == MOAT_DENY);
	}
	/* bad tool names */
	r = moat_policy_check(p, "", "{}", 2, &d, &err);
	CHECK(r < 0 && d.verdict == MOAT_DENY);
	{
		char longname[300];

		memset(longname, 'a', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		r = moat_policy_check(p, longname, "{}", 2, &d, &err);
		CHECK(r < 0 && d.verdict == MOAT_DENY);
	}
	/* the working directory must be absolute */
	{
		struct moat_policy *q = NULL;

		CHECK(moat_policy_new(c, NULL, "relative/dir", &q, &err) < 0 && q == NULL);
		CHECK(err.msg[0] != '\0');
	}
	CHECK(moat_policy_free(NULL) == NULL);
	CHECK(moat_config_free(NULL) == NULL);
	CHECK(moat_policy_free(p) == NULL);
	moat_config_free(c);
	return tap_done();
}
