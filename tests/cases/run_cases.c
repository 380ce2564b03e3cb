/* Table-driven policy cases (in the spirit of libseccomp's test tables).
 *
 * Each *.cases file holds directives and rows:
 *   config: {JSON}        the user configuration for the rows that follow
 *                         (defaults only when absent; reset per file)
 *   project: {JSON}       a project layer (may only tighten); "project: none" drops it
 *   cwd: /abs/dir         working directory (default /home/user/project)
 *   context: unsandboxed  decide as the hook does, with nothing confining the
 *                         call (MOAT_CHECK_UNSANDBOXED); "context: sandboxed"
 *                         goes back (the default, reset per file)
 *   TOOL {ARGS} -> VERDICT [RULE]
 * RULE is compared exactly, or as a prefix when it ends in '*'. Lines
 * starting with '#' and blank lines are ignored. The environment seen by the
 * configuration is fixed: HOME=/home/user, PROJECT=/home/user/project,
 * SLASHED=/home/user/, ROOTDIR=/. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <moat/moat.h>

#include "core/config.h"
#include "core/policy_check.h"

static int n, failed;

static const char *fake_env(const char *name, void *ud)
{
	(void)ud;
	if (!strcmp(name, "HOME"))
		return "/home/user";
	if (!strcmp(name, "PROJECT"))
		return "/home/user/project";
	if (!strcmp(name, "SLASHED")) /* a value with a trailing slash */
		return "/home/user/";
	if (!strcmp(name, "ROOTDIR"))
		return "/";
	return NULL;
}

static void result(int ok, const char *file, int line, const char *what, const char *a,
		   const char *b)
{
	const char *parts[3] = {what, a, b};

	n++;
	printf("%s %d - %s:%d ", ok ? "ok" : "not ok", n, file, line);
	/* (one TAP line per case: a newline in a command is written \n) */
	for (int i = 0; i < 3; i++)
		for (const char *p = parts[i]; *p; p++)
			if (*p == '\n')
				fputs("\\n", stdout);
			else
				putchar(*p);
	putchar('\n');
	if (!ok)
		failed++;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static int run_file(const char *path, const char *name)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *user_json = NULL, *project_json = NULL;
	char cwd[4096] = "/home/user/project";
	size_t cap = 0;
	int lineno = 0;
	struct moat_policy *p = NULL;
	bool dirty = true;
	unsigned flags = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *s = trim(line), *arrow, *tool, *args, *verdict, *rule;
		struct moat_decision d;
		struct moat_error err;

		lineno++;
		if (!*s || *s == '#')
			continue;
		if (!strncmp(s, "config:", 7)) {
			free(user_json);
			user_json = strdup(trim(s + 7));
			dirty = true;
			continue;
		}
		if (!strncmp(s, "project:", 8)) {
			free(project_json);
			project_json = strcmp(trim(s + 8), "none") ? strdup(trim(s + 8)) : NULL;
			dirty = true;
			continue;
		}
		if (!strncmp(s, "context:", 8)) {
			flags = !strcmp(trim(s + 8), "unsandboxed") ? MOAT_CHECK_UNSANDBOXED : 0;
			continue;
		}
		if (!strncmp(s, "cwd:", 4)) {
			snprintf(cwd, sizeof(cwd), "%s", trim(s + 4));
			dirty = true;
			continue;
		}
		if (dirty) {
			struct moat_config *u = NULL, *pr = NULL;
			int r = 0;

			p = moat_policy_free(p);
			moat_error_clear(&err);
			moat_config_new(&u);
			if (user_json)
				r = moat_config_load_string(u, user_json, strlen(user_json), name, 0,
							    &err);
			if (r >= 0 && project_json) {
				moat_config_new(&pr);
				r = moat_config_load_string(pr, project_json, strlen(project_json),
							    name, MOAT_CONFIG_PROJECT, &err);
			}
			if (r >= 0)
				r = moat_policy_new(u, pr, cwd, &p, &err);
			moat_config_free(u);
			moat_config_free(pr);
			if (r < 0) {
				char buf[1024];

				moat_error_format(&err, buf, sizeof(buf));
				result(0, name, lineno, "config failed: ", buf, "");
				p = NULL;
			}
			dirty = false;
		}
		arrow = strstr(s, " -> ");
		if (!arrow) {
			result(0, name, lineno, "malformed row: ", s, "");
			continue;
		}
		*arrow = '\0';
		tool = s;
		args = strchr(s, ' ');
		if (args)
			*args++ = '\0';
		args = args ? trim(args) : "{}";
		verdict = trim(arrow + 4);
		rule = strchr(verdict, ' ');
		if (rule) {
			*rule++ = '\0';
			rule = trim(rule);
		}
		if (!p) {
			result(0, name, lineno, "no policy for row ", tool, "");
			continue;
		}
		moat_error_clear(&err);
		if (flags) {
			json_t *j = json_loads(args, JSON_REJECT_DUPLICATES, NULL);

			if (!j || moat_policy_check_args_ex(p, tool, j, flags, &d, &err) < 0) {
				d.verdict = MOAT_DENY;
				snprintf(d.rule, sizeof(d.rule), "input:invalid");
				d.reason[0] = '\0';
			}
			json_decref(j);
		} else {
			moat_policy_check(p, tool, args, strlen(args), &d, &err);
		}
		{
			const char *got = moat_verdict_name(d.verdict);
			bool ok = !strcmp(got, verdict);
			char want[1024], have[1024];

			if (ok && rule) {
				size_t rl = strlen(rule);

				if (rl && rule[rl - 1] == '*')
					ok = !strncmp(d.rule, rule, rl - 1);
				else
					ok = !strcmp(d.rule, rule);
			}
			snprintf(want, sizeof(want), "%.100s %.600s {%.10s}", tool, args, verdict);
			snprintf(have, sizeof(have), "%s %.160s (%.512s)", got, d.rule, d.reason);
			result(ok, name, lineno, want, " -> ", have);
			if (!ok && rule)
				printf("#   wanted rule %s\n", rule);
		}
	}
	moat_policy_free(p);
	free(line);
	free(user_json);
	free(project_json);
	fclose(f);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/cases";
	DIR *d = opendir(dir);
	struct dirent *e;
	char *names[256];
	size_t nn = 0;

	if (!d) {
		perror(dir);
		return 1;
	}
	moat_config_set_env(fake_env, NULL);
	while ((e = readdir(d)) && nn < 256) {
		size_t l = strlen(e->d_name);

		if (l > 6 && !strcmp(e->d_name + l - 6, ".cases"))
			names[nn++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, nn, sizeof(names[0]), cmp);
	for (size_t i = 0; i < nn; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (run_file(path, names[i]) < 0) {
			printf("not ok %d - cannot read %s\n", ++n, path);
			failed++;
		}
		free(names[i]);
	}
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
