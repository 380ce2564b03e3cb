/* moat run: confine one command in the Linux sandbox.
 *
 *   moat run [OPTIONS] [--] COMMAND [ARGS...]
 *
 * The edge: it reads flags, the configuration and the environment, asks the
 * kernel what it can do (src/sandbox/probe.c), has the pure planner build
 * the plan (src/core/plan.c), applies the fallback policy to every gap, and
 * hands the plan to src/sandbox/spawn.c. It prints; nothing below it does.
 * It must never run the command when a requested protection is missing
 * unless the fallback policy says so, and then it says what is missing.
 *
 * Exit status: the command's own (0-255), or 124 (timeout), 125 (moat
 * refused, a usage error, or the sandbox could not be set up), 126 (found
 * but not executable), 127 (not found), 128+N (killed by signal N).
 * Usage errors are 125, not 2, because 2 may be the command's own status. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/str.h"
#include "cli/cli.h"
#include "cli/policy_opts.h"
#include "core/config.h"
#include "core/path.h"
#include "core/plan.h"
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
		if (!strcmp(a, "--home") && i + 1 < argc &&
		    (!strcmp(argv[i + 1], "cow") || !strcmp(argv[i + 1], "ro"))) {
			ov->home_cow = !strcmp(argv[++i], "cow");
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
				if (!*v || strchr(v, '='))
					return run_fail(
					    "bad --env value '%s': none, restricted, full "
					    "or a variable name",
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

static const char *home_dir(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h && h[0] == '/')
		return h;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

static void print_gaps(const struct moat_plan *p, const char *verb)
{
	for (int f = 0; f < MOAT_FEAT__COUNT; f++) {
		const struct moat_plan_feature *x = &p->feat[f];

		if (!x->requested || x->enforced)
			continue;
		fprintf(stderr, "moat run: %s %s (%s). hint: %s\n", verb,
			moat_feature_name((enum moat_feature)f),
			moat_feature_summary((enum moat_feature)f), x->hint);
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

/* Apply the fallback policy to the plan's gaps and to what preparing the
 * sandbox found (extra_gap: one sentence, or NULL). Returns 0 to go on, or
 * the exit status. */
static int fallback(const struct moat_plan *p, const char *extra_gap)
{
	char gaps[512];
	size_t n = moat_plan_gaps(p, gaps, sizeof(gaps));

	if (extra_gap) {
		size_t l = strlen(gaps);

		snprintf(gaps + l, sizeof(gaps) - l, "%ssecrets", l ? ", " : "");
		n++;
	}
	if (n == 0)
		return 0;
	switch (p->fallback) {
	case MOAT_FALLBACK_WARN:
		print_gaps(p, "warning: not enforced:");
		if (extra_gap)
			fprintf(stderr, "moat run: warning: %s\n", extra_gap);
		return 0;
	case MOAT_FALLBACK_ASK:
		print_gaps(p, "cannot enforce");
		if (extra_gap)
			fprintf(stderr, "moat run: %s\n", extra_gap);
		if (isatty(STDIN_FILENO) && ask_user(gaps))
			return 0;
		return run_fail("refusing to run without: %s (fallback ask: not confirmed)", gaps);
	case MOAT_FALLBACK_DENY:
		break;
	}
	print_gaps(p, "cannot enforce");
	if (extra_gap)
		fprintf(stderr, "moat run: %s\n", extra_gap);
	return run_fail("refusing to run without: %s (fallback deny). hint: fix the cause above, "
			"or pass --fallback warn to run with what this system enforces",
			gaps);
}

static const char *step_hint(const struct moat_spawn *s)
{
	switch (s->report.step) {
	case MOAT_STEP_USERNS:
		return "user namespaces look restricted here (AppArmor or a sysctl); 'moat status' "
		       "shows what is available";
	case MOAT_STEP_MOUNT:
		return "the kernel refused a mount in the sandbox's namespace (inside a container "
		       "this is common); 'moat status' shows what is available";
	case MOAT_STEP_PID_MAX:
		return "this kernel has no per-namespace pid_max; pass --pids 0 or use a cgroup";
	case MOAT_STEP_RLIMITS:
		return "lower --mem, --pids, --nofile or --fsize below your hard limits (ulimit "
		       "-H)";
	case MOAT_STEP_CHDIR:
		return "the working directory must exist inside the workspace";
	case MOAT_STEP_LANDLOCK:
		return "Landlock refused the ruleset; 'moat status' shows the ABI";
	case MOAT_STEP_SECCOMP:
		return "the kernel refused the seccomp filter";
	default:
		return "see docs/sandbox.md for the setup steps";
	}
}

/* The configuration the rest of moat uses (--config FILE, else the user
 * file under $XDG_CONFIG_HOME, and the project's .moat/config.json); an
 * invalid one refuses to run (fail closed). The denied paths of both files
 * are masked: the project's can only add. */
static int load_config(const char *path, struct cli_policy *cp, struct moat_strv *denied)
{
	const struct moat_config *layers[2];

	cp->config_path = path;
	if (cli_policy_load(cp, "run", false))
		return run_fail("refusing to run: fix the configuration error above");
	layers[0] = cp->user;
	layers[1] = cp->project;
	for (size_t k = 0; k < 2; k++) {
		for (size_t i = 0; layers[k] && i < layers[k]->denied_paths.n; i++)
			if (moat_strv_add(denied, layers[k]->denied_paths.v[i]) < 0)
				return run_fail(
				    "too many denied paths in the configuration (at most "
				    "%d)",
				    MOAT_PLAN_MAX_PATHS);
	}
	return 0;
}

/* The kernel refused the user namespace after all (AppArmor may decide
 * only at clone time): plan again without it, and ask the fallback policy
 * again. */
static void replan_without_userns(struct moat_kfeatures *kf, const char *why)
{
	kf->userns = false;
	moat_strlcpy(kf->userns_why, why, sizeof(kf->userns_why));
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o;
	struct moat_profile prof;
	struct moat_kfeatures kf;
	struct moat_plan_context ctx;
	struct moat_plan *plan = NULL;
	struct moat_spawn sp;
	struct moat_error err;
	struct cli_policy cp;
	const struct moat_config *cfg;
	struct moat_strv denied_extra = {NULL, 0, false};
	char ws[PATH_MAX], cwd[PATH_MAX], tmpws[64] = "";
	bool spawned = false;
	int r, ret = MOAT_RUN_EXIT_SETUP, attempts = 0;

	memset(&o, 0, sizeof(o));
	moat_profile_init(&prof, "");
	cli_policy_init(&cp);
	moat_error_clear(&err);
	ensure_std_fds();

	r = parse_opts(argc, argv, &o);
	if (r)
		goto out_opts;
	r = load_config(o.config, &cp, &denied_extra);
	if (r)
		goto out_opts;
	cfg = cp.user;

	/* the profile: a built-in or named one (sandbox.profiles, over its
	 * extends chain, with the configuration's defaults), then the flags.
	 * SECURITY: an unknown or broken profile refuses (seed 002) */
	r = moat_config_sandbox_profile(cfg, o.profile, &prof, &err);
	if (r < 0) {
		r = run_fail("%s: refusing to run", err.msg);
		goto out_opts;
	}
	if (moat_profile_layer(&prof, &o.over, &err) < 0) {
		r = run_fail("%s", err.msg);
		goto out_opts;
	}

	/* the workspace and the working directory, symlinks resolved */
	if (o.tmp_workspace) {
		snprintf(tmpws, sizeof(tmpws), "/tmp/moat-ws-XXXXXX");
		if (!mkdtemp(tmpws)) {
			r = run_fail("cannot create a temporary workspace in /tmp: %s",
				     strerror(errno));
			tmpws[0] = '\0';
			goto out_opts;
		}
	}
	{
		const char *w = tmpws[0]		 ? tmpws
				: o.workspace		 ? o.workspace
				: cfg->sandbox_workspace ? cfg->sandbox_workspace
							 : ".";
		struct stat st;

		if (!realpath(w, ws) || stat(ws, &st) < 0 || !S_ISDIR(st.st_mode)) {
			r = run_fail("cannot use '%s' as the workspace: %s. hint: pass an existing "
				     "directory with --workspace",
				     w, errno ? strerror(errno) : "not a directory");
			goto out_opts;
		}
		char here[PATH_MAX];

		if (tmpws[0] || !getcwd(here, sizeof(here)) || !realpath(here, cwd))
			moat_strlcpy(cwd, ws, sizeof(cwd));
		/* a cwd outside an explicitly given workspace starts at the workspace */
		if (!moat_path_within(cwd, ws) && (o.workspace || cfg->sandbox_workspace))
			moat_strlcpy(cwd, ws, sizeof(cwd));
	}

	memset(&ctx, 0, sizeof(ctx));
	ctx.workspace = ws;
	ctx.tmp_workspace = tmpws[0] != '\0';
	ctx.cwd = cwd;
	ctx.home = home_dir();
	ctx.denied = cfg->default_denied_paths ? moat_default_denied_paths : NULL;
	ctx.denied_extra = &denied_extra;
	ctx.argv = o.argv;

	moat_probe_start(&kf);
	moat_spawn_init(&sp, &kf);
	spawned = true;
	/* with the network denied, the child starts now and creates its
	 * namespaces (the network namespace is the costliest step) while we
	 * probe, plan and prepare the rest */
	if (!o.print_plan && prof.net == MOAT_NET_DENY && kf.userns) {
		r = moat_spawn_start(&sp, &err);
		if (r == -EPERM) {
			attempts++;
			replan_without_userns(&kf, err.msg);
			moat_spawn_release(&sp);
			moat_spawn_init(&sp, &kf);
		} else if (r) {
			r = run_fail("%s", err.msg);
			goto out;
		}
	}
	moat_probe_finish(&kf);
replan:
	plan = moat_plan_free(plan);
	moat_error_clear(&err);
	r = moat_plan_build(&prof, &ctx, &kf, &plan, &err);
	if (r < 0) {
		r = run_fail("cannot plan the sandbox: %s", err.msg);
		goto out;
	}
	r = moat_spawn_prepare(&sp, plan, environ, &err);
	if (r < 0) {
		r = run_fail("cannot prepare the sandbox: %s. hint: check the paths given with "
			     "--ro, --rw and --workspace",
			     err.msg);
		goto out;
	}
	if (o.print_plan) {
		struct moat_buf b = MOAT_BUF_INIT;

		moat_plan_to_json(plan, &b);
		/* splice the resolved mounts and the kernel in before the final brace */
		while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == '}'))
			b.data[--b.len] = '\0';
		moat_buf_puts(&b, "},\n  \"kernel\": ");
		moat_kfeatures_to_json(&kf, &b);
		moat_buf_puts(&b, ",\n  \"mounts\": ");
		moat_mounts_to_json(&sp.mounts, &b);
		moat_buf_printf(&b, ",\n  \"masked_now\": %zu", sp.mounts.nmasks_found);
		if (sp.mounts.scan_note) {
			moat_buf_puts(&b, ",\n  \"note\": ");
			moat_buf_json_str(&b, sp.mounts.scan_note, strlen(sp.mounts.scan_note));
		}
		moat_buf_puts(&b, "\n}\n");
		if (b.oom) {
			r = run_fail("out of memory");
		} else {
			fputs(b.data, stdout);
			r = 0;
		}
		moat_buf_release(&b);
		goto out;
	}
	{
		char extra[1024] = "";

		if (sp.mounts.scan_note)
			snprintf(extra, sizeof(extra), "%s", sp.mounts.scan_note);
		if (sp.uncarved[0]) {
			size_t l = strlen(extra);

			snprintf(extra + l, sizeof(extra) - l,
				 "%swithout a mount namespace these masked paths stay readable "
				 "(they are inside the workspace): %s. hint: enable unprivileged "
				 "user namespaces, or move them out of the workspace",
				 l ? "; " : "", sp.uncarved);
		}
		r = fallback(plan, extra[0] ? extra : NULL);
		if (r)
			goto out;
	}

	fflush(NULL);
	ret = moat_spawn_run(&sp, &err);
	if (ret == -EPERM && attempts++ == 0) {
		replan_without_userns(&kf, err.msg);
		moat_spawn_release(&sp);
		moat_spawn_init(&sp, &kf);
		goto replan;
	}
	if (ret < 0)
		ret = MOAT_RUN_EXIT_SETUP;
	if (sp.report.step == MOAT_STEP_EXEC) {
		fprintf(stderr, "moat run: %s\n", err.msg);
	} else if (sp.report.step != MOAT_STEP_NONE) {
		fprintf(stderr, "moat run: %s. hint: %s\n", err.msg, step_hint(&sp));
	} else if (sp.timed_out) {
		fprintf(stderr, "moat run: %s. hint: raise --timeout\n", err.msg);
	}
	if (sp.protected_created[0])
		fprintf(stderr,
			"moat run: warning: protected path(s) created inside the sandbox: %s; "
			"review them before they run outside it\n",
			sp.protected_created);
	r = ret;
out:
	if (spawned)
		moat_spawn_release(&sp);
	plan = moat_plan_free(plan);
out_opts:
	if (tmpws[0])
		moat_rmtree(tmpws);
	cli_policy_release(&cp);
	moat_strv_release(&denied_extra);
	moat_profile_release(&prof);
	moat_profile_release(&o.over);
	return r;
}
