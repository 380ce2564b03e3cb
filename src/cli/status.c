/* moat status: what this kernel can enforce, requested versus enforced
 * (seed 003), feature by feature, with a hint for each missing one.
 *
 *   moat status [--json] [--profile NAME] [--net MODE] [--config FILE]
 *
 * It probes thoroughly (creates a throw-away user namespace) and builds the
 * plan `moat run` would build in the current directory, without running
 * anything. It must never change the system. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"
#include "cli/cli.h"
#include "cli/policy_opts.h"
#include "core/config.h"
#include "core/plan.h"
#include "sandbox/sandbox.h"

static const char status_help[] =
    "usage: moat status [--json] [--profile NAME] [--net MODE] [--config FILE]\n"
    "\n"
    "Show what this system can enforce for a profile (default: the configuration's\n"
    "sandbox.profile, else workspace-write), feature by feature: requested,\n"
    "enforced, how, and a hint for each gap.\n"
    "Exit status: 0 when everything requested is enforced, 1 otherwise, 2 for a\n"
    "usage error or an invalid configuration or profile.\n";

/* Which kind of container this looks like: a hint for the user, never a
 * security decision (the probe decides what is enforced). NULL: none seen. */
static const char *container_hint(void)
{
	const char *k8s = getenv("KUBERNETES_SERVICE_HOST");

	if (k8s && *k8s)
		return "a Kubernetes pod (KUBERNETES_SERVICE_HOST is set)";
	if (access("/run/.containerenv", F_OK) == 0)
		return "a podman container (/run/.containerenv)";
	if (access("/.dockerenv", F_OK) == 0)
		return "a Docker container (/.dockerenv)";
	return NULL;
}

int cmd_status(int argc, char **argv)
{
	struct moat_kfeatures kf;
	struct moat_profile prof, over;
	struct moat_plan_context ctx;
	struct moat_plan *plan = NULL;
	struct moat_error err;
	const char *profile = NULL, *home = getenv("HOME");
	struct cli_policy cp;
	struct moat_strv denied = {.v = NULL}; /* the configuration's denied paths */
	struct moat_strv exempt = {.v = NULL}; /* and its exempt_paths */
	char cwd[PATH_MAX];
	bool json = false;
	size_t gaps;
	unsigned accepted; /* the gaps sandbox.accept_gaps accepts */
	char names[512];
	int r;

	moat_error_clear(&err);
	moat_profile_init(&over, "flags");
	cli_policy_init(&cp);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--profile") && i + 1 < argc) {
			profile = argv[++i];
		} else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			cp.config_path = argv[++i];
		} else if (!strcmp(argv[i], "--net") && i + 1 < argc) {
			if (moat_parse_net(argv[++i], &over, &err) < 0) {
				fprintf(stderr, "moat status: %s\n", err.msg);
				return MOAT_EXIT_USAGE;
			}
		} else if (cli_is_help(argv[i])) {
			fputs(status_help, stdout);
			return 0;
		} else {
			fprintf(stderr,
				"moat status: unknown argument '%s' (see 'moat status --help')\n",
				argv[i]);
			return MOAT_EXIT_USAGE;
		}
	}
	/* the configuration `moat run` reads, and its profiles */
	if (cli_policy_load(&cp, "status", false)) {
		moat_profile_release(&over);
		return MOAT_EXIT_USAGE;
	}
	if (moat_config_sandbox_profile(cp.user, profile, &prof, &err) < 0) {
		fprintf(stderr, "moat status: %s\n", err.msg);
		moat_profile_release(&over);
		cli_policy_release(&cp);
		return MOAT_EXIT_USAGE;
	}
	if (moat_profile_layer(&prof, &over, &err) < 0) {
		fprintf(stderr, "moat status: %s\n", err.msg);
		moat_profile_release(&prof);
		moat_profile_release(&over);
		cli_policy_release(&cp);
		return MOAT_EXIT_USAGE;
	}
	moat_probe_thorough(&kf);
	char here[PATH_MAX];

	if (!getcwd(here, sizeof(here)) || !realpath(here, cwd) || !strcmp(cwd, "/"))
		moat_strlcpy(cwd, "/tmp", sizeof(cwd));
	memset(&ctx, 0, sizeof(ctx));
	ctx.workspace = cwd;
	ctx.cwd = cwd;
	ctx.home = home && home[0] == '/' ? home : NULL;
	ctx.denied = cp.user->default_denied_paths ? moat_default_denied_paths : NULL;
	for (size_t i = 0; i < cp.user->denied_paths.n; i++)
		moat_strv_add(&denied, cp.user->denied_paths.v[i]);
	ctx.denied_extra = &denied;
	exempt.v = cp.user->exempt_paths.v; /* borrowed: the planner only reads them */
	exempt.n = cp.user->exempt_paths.n;
	ctx.exempt = &exempt;
	r = moat_plan_build(&prof, &ctx, &kf, &plan, &err);
	if (r < 0) {
		fprintf(stderr, "moat status: cannot plan: %s\n", err.msg);
		moat_profile_release(&prof);
		moat_profile_release(&over);
		moat_strv_release(&denied);
		cli_policy_release(&cp);
		return 1;
	}
	gaps = moat_plan_gaps(plan, NULL, 0);
	accepted = moat_plan_gap_set(plan) & cp.user->sandbox_accept_gaps;
	if (json) {
		struct moat_buf b = MOAT_BUF_INIT;
		bool first = true;

		moat_buf_puts(&b, "{\"kernel\": ");
		moat_kfeatures_to_json(&kf, &b);
		if (container_hint()) {
			moat_buf_puts(&b, ", \"container_hint\": ");
			moat_buf_json_str(&b, container_hint(), strlen(container_hint()));
		}
		moat_buf_puts(&b, ", \"profile\": ");
		moat_buf_json_str(&b, plan->profile, strlen(plan->profile));
		moat_buf_printf(&b, ", \"network\": \"%s\", \"gaps\": %zu, \"features\": {",
				moat_net_mode_name(plan->net), gaps);
		for (int f = 0; f < MOAT_FEAT__COUNT; f++) {
			const struct moat_plan_feature *x = &plan->feat[f];
			const char *name = moat_feature_name((enum moat_feature)f);

			moat_buf_puts(&b, first ? "\n  " : ",\n  ");
			first = false;
			moat_buf_json_str(&b, name, strlen(name));
			moat_buf_printf(&b, ": {\"requested\": %s, \"enforced\": %s, \"via\": ",
					x->requested ? "true" : "false",
					x->enforced ? "true" : "false");
			moat_buf_json_str(&b, x->mechanism, strlen(x->mechanism));
			moat_buf_puts(&b, ", \"hint\": ");
			moat_buf_json_str(&b, x->hint, strlen(x->hint));
			moat_buf_printf(&b, ", \"accepted\": %s}",
					(accepted & (1u << f)) ? "true" : "false");
		}
		moat_buf_puts(&b, "\n}}\n");
		if (!b.oom)
			fputs(b.data, stdout);
		moat_buf_release(&b);
	} else {
		printf("kernel %u.%u: landlock %s, user namespaces %s, seccomp %s, cgroup v2 %s\n",
		       kf.kernel_major, kf.kernel_minor, kf.landlock_abi ? "yes" : "no",
		       kf.userns ? "yes" : "no", kf.seccomp ? "yes" : "no",
		       kf.cgroup ? "delegated" : "not delegated");
		if (kf.landlock_abi)
			printf("landlock abi %d\n", kf.landlock_abi);
		if (!kf.userns)
			printf("user namespaces: %s%s\n", kf.userns_why,
			       kf.ns_admin ? "; as root, the mount, PID, IPC and network namespaces "
					     "are made without one"
					   : "");
		if (!kf.fresh_proc)
			printf("/proc: %s (no fresh /proc: no PID namespace)\n", kf.fresh_proc_why);
		if (!kf.cgroup)
			printf("cgroup: %s (limits fall back to rlimits)\n", kf.cgroup_why);
		if (container_hint())
			printf("container: this looks like %s (a hint; the probe decides)\n",
			       container_hint());
		printf("profile %s (network %s), running as %s\n\n", plan->profile,
		       moat_net_mode_name(plan->net), kf.is_root ? "root" : "a regular user");
		printf("%-16s %-9s %-8s %s\n", "feature", "requested", "enforced", "via / hint");
		for (int f = 0; f < MOAT_FEAT__COUNT; f++) {
			const struct moat_plan_feature *x = &plan->feat[f];

			printf("%-16s %-9s %-8s %s\n", moat_feature_name((enum moat_feature)f),
			       x->requested ? "yes" : "no",
			       !x->requested		 ? "-"
			       : x->enforced		 ? "yes"
			       : (accepted & (1u << f)) ? "accepted"
							 : "NO",
			       !x->requested ? moat_feature_summary((enum moat_feature)f)
			       : x->enforced ? x->mechanism
					     : x->hint);
		}
		moat_gap_set_names(moat_plan_gap_set(plan) & ~accepted, ",", names, sizeof(names));
		if (gaps && moat_plan_gap_set(plan) == accepted)
			printf("\n%zu requested protection(s) cannot be enforced here, all accepted "
			       "(sandbox.accept_gaps): `moat run` runs without them\n",
			       gaps);
		else if (gaps && plan->fallback == MOAT_FALLBACK_WARN)
			printf("\n%zu requested protection(s) cannot be enforced here; `moat run` "
			       "warns and runs without them (fallback warn)\n",
			       gaps);
		else if (gaps)
			printf("\n%zu requested protection(s) cannot be enforced here; `moat run` "
			       "refuses unless --accept-gap %s (or sandbox.accept_gaps) or "
			       "--fallback warn\n",
			       gaps, names);
	}
	moat_plan_free(plan);
	moat_profile_release(&prof);
	moat_profile_release(&over);
	moat_strv_release(&denied);
	cli_policy_release(&cp);
	return gaps ? 1 : 0;
}
