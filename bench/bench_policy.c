/* Policy throughput through the library: decisions per second on one core
 * for a mix of bash commands and read_file calls, with (a) the default
 * configuration and (b) 10,000 path rules plus 10,000 command rules; and the
 * time to analyse a 100 KB command. Prints JSON lines; bench/run.sh turns
 * them into docs/benchmarks.md. Never asserts a time.
 *
 * `bench_policy --calls N bash|read_file [rules]` makes exactly N decisions
 * of one kind and prints nothing: a fixed amount of work for
 * `valgrind --tool=callgrind` (instructions per decision = Ir / N, after
 * subtracting a run with N = 0 for the set-up). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <moat/moat.h>

#include "base/str.h"
#include "core/cmd.h"
#include "core/config.h"
#include "core/policy_check.h"

static const char *bash_mix[] = {
	"git status",
	"ls -la src",
	"make -j4 && ./run_tests",
	"python3 -m pytest -q tests/test_api.py",
	"grep -rn 'TODO' src | head -n 20",
	"rm -rf ./build",
	"npm test -- --watch=false",
	"cat README.md",
	"git diff HEAD~1 -- src/main.c",
	"echo 'rm -rf /' > notes.txt",
	"cd src && gcc -O2 -Wall -c main.c -o main.o",
	"find . -name '*.c' | xargs wc -l",
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *env(const char *name, void *ud)
{
	(void)ud;
	return getenv(name);
}

/* Decisions per second for a set of pre-parsed argument objects. */
static double rate(const struct moat_policy *p, const char *tool, json_t **args, size_t n,
		   double seconds)
{
	struct moat_decision d;
	size_t count = 0;
	double t0 = now(), t;

	do {
		for (int k = 0; k < 1000; k++) {
			moat_policy_check_args(p, tool, args[count % n], &d, NULL);
			count++;
		}
		t = now() - t0;
	} while (t < seconds);
	return (double)count / t;
}

static struct moat_policy *make_policy(const char *ws, int rules)
{
	struct moat_config *c;
	struct moat_policy *p;
	struct moat_error err;
	struct moat_buf b = MOAT_BUF_INIT;

	moat_config_new(&c);
	if (rules) {
		moat_buf_puts(&b, "{\"path_rules\": [");
		for (int i = 0; i < rules; i++)
			moat_buf_printf(&b, "%s{\"pattern\": \"/srv/data%d/**\", \"allow_write\": true}",
					i ? "," : "", i);
		moat_buf_puts(&b, "], \"command_rules\": [");
		for (int i = 0; i < rules; i++)
			moat_buf_printf(&b, "%s{\"pattern\": \"tool%d *\", \"decision\": \"%s\", "
					"\"match\": \"glob\"}",
					i ? "," : "", i, i % 2 ? "allow" : "ask");
		moat_buf_puts(&b, "]}");
		if (moat_config_load_string(c, b.data, b.len, "bench", 0, &err) < 0) {
			fprintf(stderr, "bench config: %s\n", err.msg);
			exit(1);
		}
	}
	if (moat_policy_new(c, NULL, ws, &p, &err) < 0) {
		fprintf(stderr, "bench policy: %s\n", err.msg);
		exit(1);
	}
	moat_config_free(c);
	moat_buf_release(&b);
	return p;
}

int main(int argc, char **argv)
{
	bool fixed = argc > 3 && !strcmp(argv[1], "--calls");
	double secs = argc > 1 && !fixed ? strtod(argv[1], NULL) : 1.0;
	char ws[] = "/tmp/moat-bench.XXXXXX";
	json_t *bash_args[MOAT_ARRAY_SIZE(bash_mix)], *read_args[8];
	static const char *files[8] = {"src/main.c", "src/util.c", "README.md", "src/net/http.c",
				       "tests/test_api.py", "Makefile", "docs/guide.md",
				       "src/net/tls.c"};

	moat_config_set_env(env, NULL);
	if (!mkdtemp(ws))
		return 1;
	for (size_t i = 0; i < 8; i++) {
		char p[512], cmd[600];
		FILE *f;

		snprintf(p, sizeof(p), "%s/%s", ws, files[i]);
		snprintf(cmd, sizeof(cmd), "%s", p);
		*strrchr(cmd, '/') = '\0';
		for (char *s = cmd + strlen(ws) + 1; *s; s++)
			if (*s == '/') {
				*s = '\0';
				mkdir(cmd, 0755);
				*s = '/';
			}
		mkdir(cmd, 0755);
		f = fopen(p, "w");
		if (f)
			fclose(f);
		read_args[i] = json_pack("{s:s}", "path", p);
	}
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(bash_mix); i++)
		bash_args[i] = json_pack("{s:s}", "command", bash_mix[i]);

	if (fixed) {
		long n = strtol(argv[2], NULL, 10);
		bool bash = !strcmp(argv[3], "bash");
		struct moat_policy *p = make_policy(ws, argc > 4 ? 10000 : 0);
		struct moat_decision d;

		for (long k = 0; k < n; k++) {
			if (bash)
				moat_policy_check_args(p, "bash", bash_args[k % 12], &d, NULL);
			else
				moat_policy_check_args(p, "read_file", read_args[k % 8], &d, NULL);
		}
		moat_policy_free(p);
		for (size_t i = 0; i < 8; i++) {
			char dir[512];
			char *sl;

			snprintf(dir, sizeof(dir), "%s",
				 json_string_value(json_object_get(read_args[i], "path")));
			unlink(dir);
			/* the directories made for it, deepest first (rmdir keeps full ones) */
			while ((sl = strrchr(dir, '/')) && sl > dir + strlen(ws)) {
				*sl = '\0';
				rmdir(dir);
			}
			json_decref(read_args[i]);
		}
		rmdir(ws);
		for (size_t i = 0; i < MOAT_ARRAY_SIZE(bash_mix); i++)
			json_decref(bash_args[i]);
		return 0;
	}

	for (int variant = 0; variant < 2; variant++) {
		int rules = variant ? 10000 : 0;
		struct moat_policy *p = make_policy(ws, rules);
		double rb = rate(p, "bash", bash_args, MOAT_ARRAY_SIZE(bash_mix), secs);
		double rr = rate(p, "read_file", read_args, 8, secs);

		printf("{\"bench\":\"policy\",\"config\":\"%s\",\"bash_per_s\":%.0f,"
		       "\"read_file_per_s\":%.0f}\n",
		       rules ? "10000 path rules + 10000 command rules" : "default", rb, rr);
		moat_policy_free(p);
	}

	/* a 100 KB command: many simple commands joined by && and pipes */
	{
		struct moat_buf b = MOAT_BUF_INIT;
		struct moat_cmd_opts opts = {.home = "/home/user", .hardline = true};
		struct moat_cmd_analysis *a = NULL;
		struct moat_error err;
		double t0, best = 1e9;
		int i = 0;

		while (b.len < 100 * 1024) {
			moat_buf_printf(&b, "%sgrep -rn \"pattern %d\" src/dir%d | sort | uniq -c",
					i ? " && " : "", i, i);
			i++;
		}
		for (int k = 0; k < 20; k++) {
			t0 = now();
			if (moat_cmd_analyze(b.data, b.len, &opts, &a, &err) < 0) {
				fprintf(stderr, "100 KB command failed: %s\n", err.msg);
				break;
			}
			double t = now() - t0;
			if (t < best)
				best = t;
			a = moat_cmd_analysis_free(a);
		}
		printf("{\"bench\":\"parse_100k\",\"bytes\":%zu,\"best_ms\":%.3f}\n", b.len,
		       best * 1e3);
		moat_buf_release(&b);
	}
	for (size_t i = 0; i < 8; i++)
		json_decref(read_args[i]);
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(bash_mix); i++)
		json_decref(bash_args[i]);
	{
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "%s", ws);
		/* leave cleanup to run.sh (no system() here) */
		printf("{\"bench\":\"workspace\",\"path\":\"%s\"}\n", cmd);
	}
	return 0;
}
