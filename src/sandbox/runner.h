/* The runner: one sandboxed command, from a configuration and a profile to
 * its exit status. This is `moat run` without its command line, so that the
 * bash tool (src/tools/bash.c) runs a shell call exactly as `moat run` would.
 *
 * Not thread-safe and it changes process-wide state (signal mask, child
 * subreaper, a static Landlock buffer): call it in a process of its own
 * (`moat run` itself, or the child the bash tool forks for each call). */
#ifndef MOAT_SANDBOX_RUNNER_H
#define MOAT_SANDBOX_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

#include <moat/error.h>

#include "core/config.h"
#include "core/plan.h"
#include "sandbox/fsrec.h"
#include "sandbox/sandbox.h"

/* A sandbox started ahead of its call (a pre-forked runner of the bash
 * tool): the kernel probed and, where user namespaces allow, the child
 * cloned and creating its namespaces (the network namespace is the costliest
 * step of a start). moat_runner_run takes it over through the request: a
 * plan it does not fit (the network allowed) gets a child of its own. */
struct moat_run_warm {
	struct moat_kfeatures kf;
	struct moat_spawn sp;
	bool start_failed; /* user namespaces refused: planned without them */
	/* armed (a request with arm_only): the sandbox made whole for a
	 * predicted call, its child waiting before the exec; the call's own
	 * plan and freshly prepared mounts must match it (or it is thrown
	 * away and the call's sandbox made afresh) */
	bool armed;
	struct moat_plan *plan;
	struct moat_profile prof;
	bool have_prof;
	/* a watch on everything the armed mounts were prepared from (fsrec.h),
	 * or NULL: while it has seen nothing change, the call takes the
	 * sandbox without preparing the mounts again */
	struct moat_fswatch *watch;
	/* what the armed plan was made from (the request's strings as given,
	 * $HOME, the profile's own timeout): a call that gives the same (but
	 * its command and its timeout) while the watch is quiet takes the
	 * armed plan as it is, with its command and timeout, rather than
	 * planning again. reuse: the arming was such a request (a watch, a
	 * timeout_at_most request, no flag layer) */
	bool reuse;
	const struct moat_config *in_cfg;
	char *in_profile, *in_ws, *in_cwd, *in_home;
	struct moat_strv in_denied, in_denied_project;
	long in_prof_timeout;
};

/* Probe and start ahead, for a plan that denies the network, or (with
 * user namespaces) one that allows the host's: net_allowed; NULL only
 * without memory. */
struct moat_run_warm *moat_runner_warm_start(bool net_allowed);
/* Release one never handed to moat_runner_run (which frees its own). */
void moat_runner_warm_free(struct moat_run_warm *w);

struct moat_run_result;

struct moat_run_request {
	const struct moat_config *cfg;	 /* profiles, fallback, workspace default */
	const char *profile;		 /* NULL: the configuration's default */
	const struct moat_profile *over; /* a flag layer over the profile, may be NULL */
	const char *workspace;		 /* NULL: cfg->sandbox_workspace, else "." */
	const char *audit_log;		 /* the caller's audit log as opened (a real path):
					  * its directory is protected; NULL: the
					  * configuration's, where it exists */
	const char *cwd;		 /* NULL: the current directory (or the workspace when
					  * that lies outside it) */
	bool tmp_workspace;		 /* create a temporary workspace for the call */
	char *const *argv;		 /* the command */
	char *const *env;		 /* the environment to filter; NULL: environ */
	long timeout_s;			 /* > 0: overrides the profile's timeout */
	bool timeout_at_most;		 /* timeout_s only lowers the profile's (the bash
					  * tool's: a call's timeout never raises it) */
	const struct moat_strv *denied_extra; /* the policy's user denied paths, may be NULL */
	const struct moat_strv *denied_project; /* a project file's denied paths, may be NULL
						 * (exempt_paths do not lift them) */
	struct moat_run_warm *warm;	      /* started ahead, or NULL; taken over and freed */
	/* fallback "ask": called with the missing protections; true runs the
	 * command anyway. NULL: ask is a refusal. */
	bool (*ask)(const char *gaps, void *ud);
	void *ask_ud;
	/* protections the command may run without (bits of enum
	 * moat_feature: moat run --accept-gap), on top of the
	 * configuration's sandbox.accept_gaps; any other missing one follows
	 * the fallback policy */
	unsigned accept_gaps;
	/* print the plan as JSON to stdout instead of running (--print-plan) */
	bool print_plan;
	/* run nothing: scan the plan's workspace ahead of a call to come in
	 * this process (moat_ns_scan_ahead) */
	bool scan_only;
	/* run nothing: remove the workspace's empty stand-ins a session kept
	 * (moat_ns_standins_sweep) */
	bool sweep_only;
	/* run nothing yet: make the sandbox of warm whole for this request (a
	 * prediction of the call to come) and leave its child waiting before
	 * the exec; warm stays the caller's. Only a plan with a mount
	 * namespace, without a gap or a note; otherwise warm stays as it
	 * was started. Returns 0 either way; warm->armed says. */
	bool arm_only;
	/* > 0: a descriptor that becomes readable when the call has come (the
	 * runner's job pipe): arming, or the scan ahead (scan_only), then
	 * stops what the call would wait for and not need (the scan ahead
	 * and the arming's scan at once; before the preparation: everything;
	 * after the arming: the watch, whose set-up takes longer than the
	 * check it saves) */
	int arm_busy_fd;
	/* Each line moat has to tell the user, when it arises: the gaps and
	 * warnings before the command runs, the error or warning after it
	 * (`moat run` prints "moat run: LINE"). May be NULL: the gist stays in
	 * ret->error, ret->hint and ret->warning either way. */
	void (*say)(const char *line, void *ud);
	void *say_ud;
	/* The caller exits as soon as this returns (`moat run`, the bash
	 * tool's runner): what is costly to release and harmless to keep, the
	 * sandbox's mount namespace (held open so that its teardown is not in
	 * the exit of the sandbox's last process, which moat waits for) and
	 * the Landlock ruleset, is left to that exit, or with detach_teardown
	 * (the caller's exit is waited for, as `moat run`'s is by its shell)
	 * goes to a short-lived process of its own that closes them and exits,
	 * which nobody waits for (sandbox.h, hold_mntns). Everything that
	 * must be done is still done before the return: no process of the
	 * sandbox is left, the workspace's stand-ins are removed (the
	 * namespace then goes first), scratch directories too. */
	bool exit_after;
	bool detach_teardown;
	/* stdout and stderr are the command's alone: ended as soon as the
	 * sandbox is gone (sandbox.h, end_stdio) */
	bool end_stdio;
};

#define MOAT_RUN_SANDBOX_JSON_MAX 2048

struct moat_run_result {
	int status;	    /* what `moat run` exits with: the command's status, 128+N for
			     * signal N, or MOAT_RUN_EXIT_* (sandbox.h) */
	int exit_code;	    /* the command's exit code, -1 when it did not exit */
	int signal;	    /* the signal that killed it, 0 none */
	bool timed_out;
	bool ran;	    /* the command was executed */
	double duration_ms; /* from the go to the reap */
	int step;	    /* enum moat_step of a failed setup step, 0 none */
	char error[512];    /* moat's own failure, "" none */
	char hint[512];	    /* how to fix it, "" none */
	char warning[1024]; /* fallback "warn" gaps, protected paths created, ... */
	/* {"profile":..,"requested":[..],"enforced":[..],"missing":[..],
	 *  "accepted":[..] (when the user accepts gaps: those missing here),
	 *  "limits":{"memory_mb":..,"pids":..,"timeout_s":..}}, and
	 *  "exempt_paths":[..] when the plan has exemptions */
	char sandbox[MOAT_RUN_SANDBOX_JSON_MAX];
};

/* Plan, prepare, apply the fallback policy, run and wait. Returns 0 when
 * the command ran or moat refused for a stated reason (ret->status and
 * ret->error say which), negative errno when it could not even try (err). */
int moat_runner_run(const struct moat_run_request *rq, struct moat_run_result *ret,
		    struct moat_error *err);

#endif
