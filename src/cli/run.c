/* moat run: confine one command in the Linux sandbox.
 *
 *   moat run [OPTIONS] [--] COMMAND [ARGS...]
 *
 * The edge: it reads flags, the configuration and the environment, and
 * hands them to the runner (src/sandbox/runner.c), which resolves the
 * profile, probes the kernel, plans, applies the fallback policy to every
 * gap and runs the command. It prints what the runner has to say (each line
 * as "moat run: LINE") and asks on the terminal for the fallback "ask"; it
 * must never run a command itself.
 *
 * Exit status: the command's own (0-255), or 124 (timeout), 125 (moat
 * refused, a usage error, or the sandbox could not be set up), 126 (found
 * but not executable), 127 (not found), 128+N (killed by signal N).
 * Usage errors are 125, not 2, because 2 may be the command's own status. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"
#include "cli/cli.h"
#include "cli/policy_opts.h"
#include "core/config.h"
#include "core/plan.h"
#include "sandbox/runner.h"
#include "sandbox/sandbox.h"

extern char **environ;

static const char run_help[] =
    "usage: moat run [OPTIONS] [--] COMMAND [ARGS...]\n"
    "\n"
    "Run COMMAND confined by Landlock, seccomp and namespaces (docs/sandbox.md).\n"
    "\n"
    "profile:\n"
    "  --profile NAME      readonly | workspace-write (default) | workspace-write-no-network,\n"
    "                      or a profile of the configuration (sandbox.profiles)\n"
    "  --workspace DIR     the writable workspace (default: the current directory)\n"
    "  --tmp-workspace     a fresh empty workspace, removed afterwards\n"
    "  --ro PATH           also readable (repeatable)\n"
    "  --rw PATH           also writable (repeatable)\n"
    "  --mask PATH         hide PATH (repeatable; globs allowed)\n"
    "  --protect NAME      keep NAME read-only inside the workspace (repeatable)\n"
    "  --allow-socket PATH keep a host unix socket reachable (repeatable)\n"
    "  --home cow|ro       the home directory: copy-on-write, writes vanish (default),\n"
    "                      or read-only\n"
    "  --net MODE          deny | allow | PORT[,PORT...] (TCP connect only)\n"
    "  --env MODE|NAME     none | restricted | full, or pass variable NAME (repeatable)\n"
    "limits (0: none):\n"
    "  --mem MB  --pids N  --timeout S  --cpu S  --fsize MB  --nofile N\n"
    "enforcement:\n"
    "  --fallback POLICY   deny (default) | ask | warn: when a protection is missing\n"
    "  --accept-gap NAME   run without protection NAME (a name moat status lists;\n"
    "                      repeatable, or NAME,NAME); other missing ones still refuse\n"
    "  --config FILE       the configuration (default: $XDG_CONFIG_HOME/moat/config.json)\n"
    "  --print-plan        print the plan as JSON and exit\n"
    "\n"
    "exit status: the command's; 124 timeout, 125 moat refused or failed,\n"
    "126 not executable, 127 not found, 128+N killed by signal N\n";

__attribute__((format(printf, 1, 2))) static int run_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("moat run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return MOAT_RUN_EXIT_SETUP;
}

struct run_opts {
	const char *profile;
	const char *workspace;
	const char *config;
	bool tmp_workspace;
	bool print_plan;
	unsigned accept_gaps; /* --accept-gap: bits of enum moat_feature */
	struct moat_profile over; /* the flags, as the last profile layer */
	char **argv;
};

static int opt_long(const char *v, const char *name, long max, long *ret)
{
	if (moat_parse_long(v, 0, max, ret) < 0)
		return run_fail("bad %s value '%s': a whole number from 0 to %ld", name, v, max);
	return 0;
}

/* Match "--name VALUE" or "--name=VALUE"; advance *i past the value. */
static bool takes(const char *name, int argc, char **argv, int *i, const char **val, int *bad)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n))
		return false;
	if (a[n] == '=') {
		*val = a + n + 1;
		return true;
	}
	if (a[n] != '\0')
		return false;
	if (*i + 1 >= argc) {
		*bad = run_fail("%s needs a value", name);
		return true;
	}
	*val = argv[++*i];
	return true;
}

static int parse_opts(int argc, char **argv, struct run_opts *o)
{
	struct moat_profile *ov = &o->over;
	struct moat_error err;
	int i, bad = 0;

	moat_profile_init(ov, "flags");
	moat_error_clear(&err);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		long num;
		int r;

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(run_help, stdout);
			exit(0);
		}
		if (!strcmp(a, "--tmp-workspace")) {
			o->tmp_workspace = true;
			continue;
		}
		if (!strcmp(a, "--home=cow") || !strcmp(a, "--home=ro")) {
			ov->home_cow = !strcmp(a, "--home=cow");
			ov->set |= MOAT_PF_HOME;
			continue;
		}
		if (!strcmp(a, "--home") || !strncmp(a, "--home=", 7)) {
			const char *hv = a[6] == '=' ? a + 7 : i + 1 < argc ? argv[++i] : NULL;

			if (!hv || (strcmp(hv, "cow") && strcmp(hv, "ro")))
				return run_fail("bad --home value '%s': cow or ro", hv ? hv : "");
			ov->home_cow = !strcmp(hv, "cow");
			ov->set |= MOAT_PF_HOME;
			continue;
		}
		if (!strcmp(a, "--print-plan")) {
			o->print_plan = true;
			continue;
		}
#define VALUE_OPT(name) (bad = 0, takes(name, argc, argv, &i, &v, &bad))
		if (VALUE_OPT("--profile")) {
			if (bad)
				return bad;
			o->profile = v;
		} else if (VALUE_OPT("--workspace")) {
			if (bad)
				return bad;
			o->workspace = v;
		} else if (VALUE_OPT("--config")) {
			if (bad)
				return bad;
			o->config = v;
		} else if (VALUE_OPT("--ro") || VALUE_OPT("--rw") || VALUE_OPT("--mask") ||
			   VALUE_OPT("--protect") || VALUE_OPT("--allow-socket")) {
			struct moat_strv *l;
			unsigned bit;

			if (bad)
				return bad;
			if (!strncmp(a, "--ro", 4)) {
				l = &ov->ro;
				bit = MOAT_PF_RO;
			} else if (!strncmp(a, "--rw", 4)) {
				l = &ov->rw;
				bit = MOAT_PF_RW;
			} else if (!strncmp(a, "--mask", 6)) {
				l = &ov->mask;
				bit = MOAT_PF_MASK;
			} else if (!strncmp(a, "--protect", 9)) {
				l = &ov->protect;
				bit = MOAT_PF_PROTECT;
			} else {
				l = &ov->sockets;
				bit = MOAT_PF_SOCKETS;
			}
			if (!*v)
				return run_fail("%s needs a non-empty path", a);
			r = moat_strv_add(l, v);
			if (r < 0)
				return run_fail("too many %s paths (at most %d)", a,
						MOAT_PLAN_MAX_PATHS);
			ov->set |= bit;
		} else if (VALUE_OPT("--net")) {
			if (bad)
				return bad;
			if (moat_parse_net(v, ov, &err) < 0)
				return run_fail("%s", err.msg);
		} else if (VALUE_OPT("--env")) {
			enum moat_env_mode m;

			if (bad)
				return bad;
			if (moat_parse_env_mode(v, &m) == 0) {
				ov->env = m;
				ov->set |= MOAT_PF_ENV;
			} else {
				bool name_ok = (*v == '_' || (*v >= 'A' && *v <= 'Z') ||
						(*v >= 'a' && *v <= 'z'));

				for (const char *c = v; name_ok && *c; c++)
					name_ok = *c == '_' || (*c >= 'A' && *c <= 'Z') ||
						  (*c >= 'a' && *c <= 'z') ||
						  (*c >= '0' && *c <= '9');
				if (!name_ok)
					return run_fail(
					    "bad --env value '%s': none, restricted, full "
					    "or a variable name (letters, digits and _, not "
					    "starting with a digit)",
					    v);
				if (ov->env_pass.n >= MOAT_PLAN_MAX_ENV_NAMES ||
				    moat_strv_add(&ov->env_pass, v) < 0)
					return run_fail("too many --env names (at most %d)",
							MOAT_PLAN_MAX_ENV_NAMES);
				ov->set |= MOAT_PF_ENV_PASS;
			}
		} else if (VALUE_OPT("--fallback")) {
			if (bad)
				return bad;
			if (moat_parse_fallback(v, &ov->fallback) < 0)
				return run_fail("bad --fallback value '%s': deny, ask or warn", v);
			ov->set |= MOAT_PF_FALLBACK;
		} else if (VALUE_OPT("--accept-gap")) {
			const char *badname;
			size_t badlen;
			char names[512];

			if (bad)
				return bad;
			if (moat_parse_gap_list(v, &o->accept_gaps, &badname, &badlen) < 0) {
				moat_gap_set_names((1u << MOAT_FEAT__COUNT) - 1, ", ", names,
						   sizeof(names));
				return run_fail("bad --accept-gap value '%.*s': expected protection "
						"names (comma-separated) of: %s",
						(int)(badlen ? badlen : strlen(v)),
						badlen ? badname : v, names);
			}
		} else if (VALUE_OPT("--mem")) {
			if (bad || (bad = opt_long(v, "--mem", MOAT_PLAN_MAX_MEM_MB, &num)))
				return bad;
			ov->mem_mb = num;
			ov->set |= MOAT_PF_MEM;
		} else if (VALUE_OPT("--pids")) {
			if (bad || (bad = opt_long(v, "--pids", MOAT_PLAN_MAX_PIDS, &num)))
				return bad;
			ov->pids = num;
			ov->set |= MOAT_PF_PIDS;
		} else if (VALUE_OPT("--timeout")) {
			if (bad || (bad = opt_long(v, "--timeout", MOAT_PLAN_MAX_TIMEOUT_S, &num)))
				return bad;
			ov->timeout_s = num;
			ov->set |= MOAT_PF_TIMEOUT;
		} else if (VALUE_OPT("--cpu")) {
			if (bad || (bad = opt_long(v, "--cpu", MOAT_PLAN_MAX_TIMEOUT_S, &num)))
				return bad;
			ov->cpu_s = num;
			ov->set |= MOAT_PF_CPU;
		} else if (VALUE_OPT("--fsize")) {
			if (bad || (bad = opt_long(v, "--fsize", MOAT_PLAN_MAX_MEM_MB, &num)))
				return bad;
			ov->fsize_mb = num;
			ov->set |= MOAT_PF_FSIZE;
		} else if (VALUE_OPT("--nofile")) {
			if (bad || (bad = opt_long(v, "--nofile", MOAT_PLAN_MAX_NOFILE, &num)))
				return bad;
			ov->nofile = num;
			ov->set |= MOAT_PF_NOFILE;
		} else {
			return run_fail("unknown option '%s' (see 'moat run --help')", a);
		}
#undef VALUE_OPT
	}
	if (!o->print_plan && i >= argc)
		return run_fail(
		    "no command given (usage: moat run [OPTIONS] [--] COMMAND [ARGS...])");
	o->argv = argv + i;
	return 0;
}

/* fds 0-2 must be open, or a descriptor of ours could land there and leak
 * into the command */
static void ensure_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int n = open("/dev/null", O_RDWR);

			if (n >= 0 && n != fd) {
				dup2(n, fd);
				close(n);
			}
		}
	}
}

static bool ask_user(const char *gaps)
{
	FILE *tty = fopen("/dev/tty", "r+e");
	char line[16];
	bool yes = false;

	if (!tty)
		return false;
	fprintf(tty, "moat run: this system cannot enforce: %s. Run anyway? [y/N] ", gaps);
	fflush(tty);
	if (fgets(line, sizeof(line), tty))
		yes = line[0] == 'y' || line[0] == 'Y';
	fclose(tty);
	return yes;
}

/* The configuration the rest of moat uses (--config FILE, else the user
 * file under $XDG_CONFIG_HOME, and the project's .moat/config.json); an
 * invalid one refuses to run (fail closed). The denied paths of both files
 * are masked: the project's can only add (and the user's exempt_paths do
 * not lift them). */
static int load_config(const char *path, struct cli_policy *cp, struct moat_strv *denied,
		       struct moat_strv *denied_project)
{
	const struct moat_config *layers[2];

	cp->config_path = path;
	if (cli_policy_load(cp, "run", false))
		return run_fail("refusing to run: fix the configuration error above");
	layers[0] = cp->user;
	layers[1] = cp->project;
	for (size_t k = 0; k < 2; k++) {
		for (size_t i = 0; layers[k] && i < layers[k]->denied_paths.n; i++)
			if (moat_strv_add(k ? denied_project : denied,
					  layers[k]->denied_paths.v[i]) < 0)
				return run_fail(
				    "too many denied paths in the configuration (at most "
				    "%d)",
				    MOAT_PLAN_MAX_PATHS);
	}
	return 0;
}

/* The runner's lines, as `moat run` has always printed them. */
static void say_line(const char *line, void *ud)
{
	int fl = fcntl(STDERR_FILENO, F_GETFL);

	(void)ud;
	/* SECURITY: the command shares our stderr's open file: one that set it
	 * non-blocking and filled the pipe would make the warnings after the
	 * run (what was set aside) fail with EAGAIN and vanish */
	if (fl >= 0 && (fl & O_NONBLOCK))
		(void)fcntl(STDERR_FILENO, F_SETFL, fl & ~O_NONBLOCK);
	fprintf(stderr, "moat run: %s\n", line);
	fflush(stderr);
}

/* fallback "ask": on the terminal, and only when stdin is one */
static bool ask_tty(const char *gaps, void *ud)
{
	(void)ud;
	return isatty(STDIN_FILENO) && ask_user(gaps);
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o;
	struct moat_run_request rq;
	struct moat_run_result res;
	struct moat_error err;
	struct cli_policy cp;
	struct moat_strv denied_extra = {.v = NULL}, denied_project = {.v = NULL};
	int r;

	memset(&o, 0, sizeof(o));
	cli_policy_init(&cp);
	moat_error_clear(&err);
	ensure_std_fds();

	r = parse_opts(argc, argv, &o);
	if (r)
		goto out;
	r = load_config(o.config, &cp, &denied_extra, &denied_project);
	if (r)
		goto out;

	memset(&rq, 0, sizeof(rq));
	rq.cfg = cp.user;
	rq.profile = o.profile;
	rq.over = &o.over;
	rq.workspace = o.workspace;
	rq.tmp_workspace = o.tmp_workspace;
	rq.argv = o.argv;
	rq.env = environ;
	rq.denied_extra = &denied_extra;
	rq.denied_project = &denied_project;
	rq.ask = ask_tty;
	rq.accept_gaps = o.accept_gaps;
	rq.print_plan = o.print_plan;
	rq.say = say_line;
	/* cmd_run's caller exits with its status, and our shell waits for that */
	rq.exit_after = true;
	rq.detach_teardown = true;
	/* nothing of ours may sit in a stdio buffer while the command writes */
	fflush(NULL);
	r = moat_runner_run(&rq, &res, &err);
	if (r < 0)
		r = run_fail("%s", err.msg);
	else
		r = res.status;
out:
	cli_policy_release(&cp);
	moat_strv_release(&denied_extra);
	moat_strv_release(&denied_project);
	moat_profile_release(&o.over);
	return r;
}
