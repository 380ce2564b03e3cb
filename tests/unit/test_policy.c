/* Policy engine API tests: bad input is DENY, the same answers from many
 * threads on one shared policy, and the library contracts (NULL-safe free,
 * errors filled, nothing allowed on error). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <moat/moat.h>

#include "core/config.h"
#include "core/policy_check.h"
#include "core/search.h"
#include "tap.h"

static const char *fake_home = "/home/user";

static const char *fake_env(const char *name, void *ud)
{
	(void)ud;
	return !strcmp(name, "HOME") ? fake_home : NULL;
}

static enum moat_verdict verdict_of(const struct moat_policy *p, const char *tool,
				    const char *path)
{
	char args[512];
	struct moat_decision d;

	snprintf(args, sizeof(args), "{\"path\": \"%s\"}", path);
	if (moat_policy_check(p, tool, args, strlen(args), &d, NULL) < 0)
		return MOAT_DENY;
	return d.verdict;
}

/* Rules whose literal head goes through a symbolic link also hold the
 * resolved spelling: a workspace given through a link is usable by either
 * name, and a secret kept behind a link (a dotfiles repository, a .env
 * pointing at ../secrets) is denied at its real place too. */
static void symlinked_heads(void)
{
	char root[] = "/tmp/moat-test-policy-XXXXXX", s3[3][128], tmp[600], envl[600];
	struct moat_config *c = NULL;
	struct moat_policy *p = NULL;
	struct moat_error err;
	char *ws = s3[0], *link = s3[1], *home = s3[2];

	if (!mkdtemp(root)) {
		CHECK(0);
		return;
	}
	snprintf(ws, 128, "%s/ws", root);
	snprintf(link, 128, "%s/wslink", root);
	snprintf(home, 128, "%s/home", root);
	CHECK(mkdir(ws, 0700) == 0 && mkdir(home, 0700) == 0 && symlink(ws, link) == 0);
	snprintf(tmp, 600, "%s/dotfiles", root);
	CHECK(mkdir(tmp, 0700) == 0);
	snprintf(tmp, 600, "%s/dotfiles/gcloud", root);
	CHECK(mkdir(tmp, 0700) == 0);
	snprintf(tmp, 600, "%s/home/.config", root);
	CHECK(mkdir(tmp, 0700) == 0);
	snprintf(tmp, 600, "%s/home/.config/gcloud", root);
	CHECK(symlink("../../dotfiles/gcloud", tmp) == 0);
	snprintf(tmp, 600, "%s/secrets.env", root);
	snprintf(envl, 600, "%s/.env", ws);
	CHECK(symlink(tmp, envl) == 0);
	fake_home = home;

	CHECK(moat_config_new(&c) == 0);
	CHECK(moat_config_set_allowed_paths_csv(c, "<cwd>/**", &err) == 0);
	CHECK(moat_policy_new(c, NULL, link, &p, &err) == 0);
	snprintf(tmp, 600, "%s/a.txt", link);
	CHECK_INT(verdict_of(p, "read_file", tmp), MOAT_ALLOW);
	snprintf(tmp, 600, "%s/a.txt", ws);
	CHECK_INT(verdict_of(p, "read_file", tmp), MOAT_ALLOW);
	CHECK_INT(verdict_of(p, "read_file", "a.txt"), MOAT_ALLOW);
	snprintf(tmp, 600, "%s/other/a.txt", root);
	CHECK_INT(verdict_of(p, "read_file", tmp), MOAT_DENY);
	moat_policy_free(p);
	moat_config_free(c);

	CHECK(moat_config_new(&c) == 0);
	CHECK(moat_policy_new(c, NULL, ws, &p, &err) == 0);
	snprintf(tmp, 600, "%s/dotfiles/gcloud/token.json", root);
	CHECK_INT(verdict_of(p, "read_file", tmp), MOAT_DENY);
	snprintf(tmp, 600, "%s/secrets.env", root);
	CHECK_INT(verdict_of(p, "read_file", tmp), MOAT_DENY);
	snprintf(tmp, 600, "%s/dotfiles/vimrc", root);
	CHECK_INT(verdict_of(p, "read_file", tmp), MOAT_ALLOW);
	moat_policy_free(p);
	moat_config_free(c);
	fake_home = "/home/user";
	/* clean up, leaves first */
	unlink(envl);
	snprintf(tmp, 600, "%s/home/.config/gcloud", root);
	unlink(tmp);
	snprintf(tmp, 600, "%s/home/.config", root);
	rmdir(tmp);
	rmdir(home);
	unlink(link);
	rmdir(ws);
	snprintf(tmp, 600, "%s/dotfiles/gcloud", root);
	rmdir(tmp);
	snprintf(tmp, 600, "%s/dotfiles", root);
	rmdir(tmp);
	CHECK(rmdir(root) == 0);
}

/* exempt_paths and links: every spelling a call visits must pass, so a
 * denied name no exemption matches stays denied whatever it points to, and
 * an exempt name pointing at a denied file is denied by the target. The
 * notes name the exemptions that let a path through, each once. */
static void exempt_links(void)
{
	char root[] = "/tmp/moat-test-exempt-XXXXXX", ws[128], t[600], t2[600];
	const char *mk[] = {"ws", "ws/test", "ws/test/certs", "ws/keys", "home", "home/.ssh", NULL};
	struct moat_config *c = NULL;
	struct moat_policy *p = NULL;
	struct moat_policy_notes notes;
	struct moat_decision d;
	struct moat_error err;
	json_t *args;
	FILE *f;

	if (!mkdtemp(root)) {
		CHECK(0);
		return;
	}
	for (size_t i = 0; mk[i]; i++) {
		snprintf(t, sizeof(t), "%s/%s", root, mk[i]);
		CHECK(mkdir(t, 0700) == 0);
	}
	snprintf(ws, sizeof(ws), "%s/ws", root);
	snprintf(t, sizeof(t), "%s/ws/test/certs/a.pem", root);
	f = fopen(t, "w");
	CHECK(f && fclose(f) == 0);
	snprintf(t, sizeof(t), "%s/ws/keys/link.pem", root);
	CHECK(symlink("../test/certs/a.pem", t) == 0);
	snprintf(t, sizeof(t), "%s/ws/test/certs/b.pem", root);
	snprintf(t2, sizeof(t2), "%s/home/.ssh/id_rsa", root);
	CHECK(symlink(t2, t) == 0);
	snprintf(t, sizeof(t), "%s/ws/test/certs/c.pem", root);
	CHECK(symlink("../../plain.txt", t) == 0);

	CHECK(moat_config_new(&c) == 0);
	{
		static const char doc[] = "{\"exempt_paths\": [\"**/test/certs/*.pem\"]}";

		CHECK(moat_config_load_string(c, doc, strlen(doc), "t.json", 0, &err) == 0);
	}
	CHECK(moat_policy_new(c, NULL, ws, &p, &err) == 0);
	CHECK_INT(verdict_of(p, "read_file", "test/certs/a.pem"), MOAT_ALLOW);
	CHECK_INT(verdict_of(p, "read_file", "keys/link.pem"), MOAT_DENY);
	CHECK_INT(verdict_of(p, "read_file", "test/certs/b.pem"), MOAT_DENY);
	CHECK_INT(verdict_of(p, "read_file", "test/certs/c.pem"), MOAT_ALLOW);
	snprintf(t, sizeof(t), "%s/ws/test/certs/a.pem", root);
	CHECK(moat_policy_check_path(p, "read_file", t, &d) == 0 && d.verdict == MOAT_ALLOW);
	snprintf(t, sizeof(t), "%s/ws/keys/other.pem", root);
	CHECK(moat_policy_check_path(p, "read_file", t, &d) == 0 && d.verdict == MOAT_DENY);

	/* the notes */
	args = json_pack("{s:s}", "path", "test/certs/a.pem");
	notes.nexempt = 99;
	CHECK(moat_policy_check_args_notes(p, "read_file", args, 0, &d, &notes, &err) == 0);
	CHECK(d.verdict == MOAT_ALLOW && notes.nexempt == 1 &&
	      !strcmp(notes.exempt[0], "**/test/certs/*.pem"));
	json_decref(args);
	args = json_pack("{s:s}", "path", "README");
	CHECK(moat_policy_check_args_notes(p, "read_file", args, 0, &d, &notes, &err) == 0);
	CHECK_INT(notes.nexempt, 0);
	json_decref(args);
	args = json_pack("{s:s}", "command", "cat test/certs/a.pem x/test/certs/y.pem test/certs/a.pem");
	CHECK(moat_policy_check_args_notes(p, "bash", args, 0, &d, &notes, &err) == 0);
	CHECK(d.verdict == MOAT_ALLOW && notes.nexempt == 1);
	json_decref(args);
	args = json_pack("{s:s}", "command", "cat keys/k.pem");
	CHECK(moat_policy_check_args_notes(p, "bash", args, 0, &d, &notes, &err) == 0);
	CHECK(d.verdict == MOAT_ASK && notes.nexempt == 0);
	json_decref(args);
	/* without notes */
	args = json_pack("{s:s}", "path", "test/certs/a.pem");
	CHECK(moat_policy_check_args_notes(p, "read_file", args, 0, &d, NULL, &err) == 0);
	json_decref(args);
	moat_policy_free(p);
	moat_config_free(c);

	snprintf(t, sizeof(t), "%s/ws/test/certs/c.pem", root);
	unlink(t);
	snprintf(t, sizeof(t), "%s/ws/test/certs/b.pem", root);
	unlink(t);
	snprintf(t, sizeof(t), "%s/ws/keys/link.pem", root);
	unlink(t);
	snprintf(t, sizeof(t), "%s/ws/test/certs/a.pem", root);
	unlink(t);
	for (size_t i = 6; i-- > 0;) {
		snprintf(t, sizeof(t), "%s/%s", root, mk[i]);
		rmdir(t);
	}
	CHECK(rmdir(root) == 0);
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

/* The walks of one command share its budget: each tree gets its share of
 * what is left, so a first tree past its share leaves the rest to the
 * trees after it (tar cf x ../big ~ still walks ~). */
static void test_budget_share(void)
{
	struct moat_search_budget pool, share;
	size_t given;

	moat_search_budget_init(&pool, 3000);
	moat_search_budget_share(&pool, 2, &share);
	CHECK(share.entries == MOAT_SEARCH_MAX_ENTRIES / 2);
	CHECK(share.deadline_ns < pool.deadline_ns);
	/* the first tree spends all of its share */
	given = share.entries;
	share.entries = 0;
	moat_search_budget_spend(&pool, given, &share);
	CHECK(pool.entries == MOAT_SEARCH_MAX_ENTRIES - MOAT_SEARCH_MAX_ENTRIES / 2);
	/* the last tree gets all that is left */
	moat_search_budget_share(&pool, 1, &share);
	CHECK(share.entries == pool.entries && share.entries > 0);
	/* a tree that spends little gives the rest back */
	given = share.entries;
	share.entries = given - 10;
	moat_search_budget_spend(&pool, given, &share);
	CHECK(pool.entries == given - 10);
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

	test_budget_share();
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
	symlinked_heads();
	exempt_links();
	CHECK(moat_policy_free(NULL) == NULL);
	CHECK(moat_config_free(NULL) == NULL);
	CHECK(moat_policy_free(p) == NULL);
	moat_config_free(c);
	return tap_done();
}
