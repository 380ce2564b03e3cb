/* The runner: one sandboxed command, from a configuration and a profile to
 * its exit status. This is the body of `moat run` (src/cli/run.c keeps only
 * the flags and the printing) and of every bash tool call (src/tools/bash.c
 * calls it in a child process of its own).
 *
 * In order: resolve the profile (fail closed on a broken one), the
 * workspace and the working directory; probe the kernel (starting the child
 * early where the network is denied); build the plan; prepare the sandbox;
 * apply the fallback policy to every gap; run; re-plan once without user
 * namespaces when the kernel refuses them at clone time.
 *
 * It must never run the command while a requested protection is missing
 * unless the fallback policy says so, and then it says what is missing. It
 * prints nothing itself (only the plan, for print_plan, as its contract
 * says): every line for the user goes to rq->say and into ret. Not
 * thread-safe (src/sandbox/runner.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/str.h"
#include "core/path.h"
#include "sandbox/runner.h"
#include "sandbox/scancheck.h"
#include "sandbox/sandbox.h"

extern char **environ;

/* the longest line moat says (a message with paths and a hint) */
#define RUNNER_LINE_MAX 4096

struct runner {
	const struct moat_run_request *rq;
	struct moat_run_result *ret;
};

/* A caller that exits right after the run (exit_after) leaves the plan
 * (a path per mask: in a forked runner, free() copies the pages it writes)
 * to its exit, reachable from here. One plan at most; false when one is
 * kept already. */
static struct moat_plan *plan_left;

static bool plan_leave(struct moat_plan *p)
{
	struct moat_plan *none = NULL;

	return p && __atomic_compare_exchange_n(&plan_left, &none, p, false, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED);
}

static void say(struct runner *st, const char *line)
{
	if (st->rq->say)
		st->rq->say(line, st->rq->say_ud);
}

/* Append one line to ret->warning ("; " between lines; cut when full). */
static void note_warning(struct runner *st, const char *line)
{
	char *w = st->ret->warning;
	size_t l = strlen(w);

	if (l && l + 2 < sizeof(st->ret->warning)) {
		memcpy(w + l, "; ", 3);
		l += 2;
	}
	moat_strlcpy(w + l, line, sizeof(st->ret->warning) - l);
}

/* Something moat says before the command runs, or a warning after it. */
__attribute__((format(printf, 2, 3))) static void tell(struct runner *st, const char *fmt, ...)
{
	char line[RUNNER_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	note_warning(st, line);
	say(st, line);
}

/* moat's own failure: ret->error (and ret->hint), said as one line
 * "ERROR. hint: HINT". Returns MOAT_RUN_EXIT_SETUP. */
__attribute__((format(printf, 3, 4))) static int fail(struct runner *st, const char *hint,
						      const char *fmt, ...)
{
	char line[RUNNER_LINE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	moat_strlcpy(st->ret->error, line, sizeof(st->ret->error));
	if (hint) {
		moat_strlcpy(st->ret->hint, hint, sizeof(st->ret->hint));
		if (n >= 0 && (size_t)n < sizeof(line))
			snprintf(line + n, sizeof(line) - (size_t)n, ". hint: %s", hint);
	}
	say(st, line);
	st->ret->status = MOAT_RUN_EXIT_SETUP;
	return MOAT_RUN_EXIT_SETUP;
}

static const char *env_lookup(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, n) && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

/* The home directory, for ~ in the masked paths: $HOME of the command's
 * environment, else the password database. */
/* The home directory where it really is: a HOME that is (or passes
 * through) a symbolic link would put the copy-on-write overlay on the
 * link's target while the plan compares the link's path (a workspace under
 * the real home lost its writes into the overlay). */
static const char *home_dir(char *const *env, char *buf, size_t bufsz)
{
	const char *h = env_lookup(env, "HOME");
	char real[PATH_MAX];

	if (!h || h[0] != '/') {
		moat_fsrec_unrecordable(); /* (the password database) */
		if (moat_passwd_home(getuid(), buf, bufsz) != 0)
			return NULL;
		h = buf;
	}
	if (moat_fsrec_realpath(h, real) && strlen(real) < bufsz) {
		memcpy(buf, real, strlen(real) + 1);
		return buf;
	}
	return h;
}

/* The longest part of path that exists, resolved, the rest as written,
 * in out: 0, or -1 when none of it resolves or it is too long. */
static int real_head(const char *path, char out[PATH_MAX])
{
	char head[PATH_MAX], real[PATH_MAX];
	size_t l = strlen(path);

	if (!l || l >= sizeof(head))
		return -1;
	memcpy(head, path, l + 1);
	while (!moat_fsrec_realpath(head, real)) {
		char *sl = strrchr(head, '/');

		if (!sl || sl == head)
			return -1;
		*sl = '\0';
	}
	l = strlen(head);
	if ((size_t)snprintf(out, PATH_MAX, "%s%s", strcmp(real, "/") ? real : "", path + l) >=
	    PATH_MAX)
		return -1;
	return 0;
}

/* The directory of the user's configuration as moat finds it
 * ($XDG_CONFIG_HOME/moat, else ~/.config/moat: moat's own environment),
 * and ~/.config/moat of the command's home when that differs, each as a
 * real path (the part that exists resolved), in out[0..1]; the rest NULL. */
static void user_config_dirs(const char *home, char bufs[2][PATH_MAX], const char *out[3])
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
	char want[2][PATH_MAX];
	int k = 0;

	want[0][0] = want[1][0] = '\0';
	if (xdg && xdg[0] == '/')
		snprintf(want[0], sizeof(want[0]), "%s/moat", xdg);
	else if (h && h[0] == '/')
		snprintf(want[0], sizeof(want[0]), "%s/.config/moat", h);
	if (home)
		snprintf(want[1], sizeof(want[1]), "%s/.config/moat", home);
	for (int i = 0; i < 2; i++) {
		if (real_head(want[i], bufs[k]) < 0)
			continue;
		if (k == 1 && !strcmp(bufs[0], bufs[1]))
			continue;
		out[k] = bufs[k];
		k++;
	}
	out[k] = NULL;
}

/* SECURITY: the directory of the audit log in dir (a real path) and the
 * log's name in *file: the record of what ran, which a command with the
 * home as its workspace could rewrite. The caller's log (real, as it was
 * opened: a link on its way retargeted since changes nothing), else the
 * configuration's or the default one, as a real path as far as it exists
 * (a missing one is made before the run where a writable path holds it:
 * make_config_dirs). 0, or -1 when there is none. */
static int audit_dir(const char *opened, const char *audit_log, char dir[PATH_MAX],
		     char name[NAME_MAX + 1])
{
	char want[PATH_MAX], *sl;
	const char *src = opened ? opened : audit_log;

	if (src) {
		if (src[0] != '/' || /* ("-": standard error) */
		    (size_t)snprintf(want, sizeof(want), "%s", src) >= sizeof(want))
			return -1;
	} else if (moat_audit_default_path(want, sizeof(want)) < 0) {
		return -1;
	}
	sl = strrchr(want, '/');
	if (!sl || sl == want || !sl[1] ||
	    (size_t)snprintf(name, NAME_MAX + 1, "%s", sl + 1) > NAME_MAX)
		return -1;
	*sl = '\0';
	if (opened)
		return snprintf(dir, PATH_MAX, "%s", want) < PATH_MAX ? 0 : -1;
	/* (missing: made before the run where a writable path holds it,
	 * make_config_dirs, and protected as one that exists) */
	return real_head(want, dir) < 0 ? -1 : 0;
}

/* Say each gap of set, as "VERB NAME (SUMMARY). hint: HINT" (hints: the
 * plan's; without, no hint). */
static void tell_gaps(struct runner *st, const struct moat_plan *p, unsigned set, const char *verb,
		      bool hints)
{
	for (int f = 0; f < MOAT_FEAT__COUNT; f++) {
		const struct moat_plan_feature *x = &p->feat[f];

		if (!(set & (1u << f)))
			continue;
		/* (the summary says what the protection gives, which is
		 * what the command goes without) */
		if (hints && x->hint[0])
			tell(st, "%s %s (what it gives: %s). hint: %s", verb,
			     moat_feature_name((enum moat_feature)f),
			     moat_feature_summary((enum moat_feature)f), x->hint);
		else
			tell(st, "%s %s (what it gives: %s)", verb,
			     moat_feature_name((enum moat_feature)f),
			     moat_feature_summary((enum moat_feature)f));
	}
}

/* The protections the user accepts to run without: the configuration's
 * sandbox.accept_gaps and the request's (moat run --accept-gap). */
static unsigned accepted_set(const struct moat_run_request *rq)
{
	return rq->cfg->sandbox_accept_gaps | rq->accept_gaps;
}

/* Apply the accepted gaps and then the fallback policy to the plan's gaps
 * and to what preparing the sandbox found (extra_set: the protections it
 * concerns, extra_gap: one sentence, or 0 and NULL). An accepted gap is
 * said and run without; any other follows the fallback policy, so
 * accepting one protection never lets a run go without another. Returns 0
 * to go on, or the exit status. */
static int fallback(struct runner *st, const struct moat_plan *p, unsigned extra_set,
		    const char *extra_gap)
{
	const struct moat_run_request *rq = st->rq;
	unsigned planned = moat_plan_gap_set(p);
	unsigned gaps = planned | (extra_gap ? extra_set : 0);
	unsigned accepted = gaps & accepted_set(rq), left = gaps & ~accepted;
	char names[512], flag[512], list[600], hint[1400];
	size_t n;

	if (!gaps)
		return 0;
	/* (a gap found in preparing is said as its sentence) */
	if (accepted)
		tell_gaps(st, p, accepted & planned, "warning: not enforced (accepted):", false);
	if (!left) {
		if (extra_gap)
			tell(st, "warning: not enforced (accepted): %s", extra_gap);
		return 0;
	}
	n = moat_gap_set_names(left, ", ", names, sizeof(names));
	switch (p->fallback) {
	case MOAT_FALLBACK_WARN:
		tell_gaps(st, p, left & planned, "warning: not enforced:", true);
		if (extra_gap)
			tell(st, "warning: %s", extra_gap);
		return 0;
	case MOAT_FALLBACK_ASK:
		tell_gaps(st, p, left & planned, "cannot enforce", true);
		if (extra_gap)
			tell(st, "%s", extra_gap);
		if (!rq->ask)
			/* a tool call has nobody to ask: ask is a refusal */
			return fail(st, NULL,
				    "refusing to run without: %s (fallback ask: there is nobody to "
				    "confirm it here)",
				    names);
		if (rq->ask(names, rq->ask_ud))
			return 0;
		return fail(st, NULL, "refusing to run without: %s (fallback ask: not confirmed)",
			    names);
	case MOAT_FALLBACK_DENY:
		break;
	}
	tell_gaps(st, p, left & planned, "cannot enforce", true);
	if (extra_gap)
		tell(st, "%s", extra_gap);
	moat_gap_set_names(left, ",", flag, sizeof(flag));
	moat_gap_set_names(left, "\", \"", list, sizeof(list));
	snprintf(hint, sizeof(hint),
		 "fix the cause above, or accept %s: pass --accept-gap %s (or set \"sandbox\": "
		 "{\"accept_gaps\": [\"%s\"]} in the configuration) to run without exactly %s, "
		 "or --fallback warn (or set \"sandbox\": {\"fallback\": \"warn\"}) to run with "
		 "whatever this system enforces",
		 n == 1 ? "it" : "them", flag, list, n == 1 ? "this one" : "these");
	return fail(st, hint, "refusing to run without: %s (fallback deny)", names);
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

/* The names of set, as a JSON array. */
static void json_set(struct moat_buf *b, unsigned set)
{
	bool first = true;

	moat_buf_putc(b, '[');
	for (int f = 0; f < MOAT_FEAT__COUNT; f++) {
		const char *name = moat_feature_name((enum moat_feature)f);

		if (!(set & (1u << f)))
			continue;
		if (!first)
			moat_buf_putc(b, ',');
		moat_buf_json_str(b, name, strlen(name));
		first = false;
	}
	moat_buf_putc(b, ']');
}

/* ret->sandbox: what was requested, what this kernel enforces, the limits,
 * for the audit record and the bash tool's result. extra: gaps preparing
 * the sandbox found (masked paths it could not carve around), missing
 * although the plan has them enforced. */
static void sandbox_json(struct moat_run_result *ret, const struct moat_plan *p, unsigned accepted,
			 unsigned extra)
{
	struct moat_buf b = MOAT_BUF_INIT;
	unsigned requested = 0, missing = moat_plan_gap_set(p) | extra;

	for (int f = 0; f < MOAT_FEAT__COUNT; f++)
		if (p->feat[f].requested)
			requested |= 1u << f;
	missing &= requested;
	moat_buf_puts(&b, "{\"profile\":");
	moat_buf_json_str(&b, p->profile, strlen(p->profile));
	moat_buf_puts(&b, ",\"requested\":");
	json_set(&b, requested);
	moat_buf_puts(&b, ",\"enforced\":");
	json_set(&b, requested & ~missing);
	moat_buf_puts(&b, ",\"missing\":");
	json_set(&b, missing);
	/* the user accepts going without these: the ones missing here */
	if (accepted) {
		moat_buf_puts(&b, ",\"accepted\":");
		json_set(&b, missing & accepted);
	}
	moat_buf_printf(&b,
			",\"network\":\"%s\",\"limits\":{\"memory_mb\":%llu,\"pids\":%ld,"
			"\"timeout_s\":%ld,\"cpu_s\":%ld,\"fsize_mb\":%llu,\"nofile\":%ld}",
			moat_net_mode_name(p->net), (unsigned long long)(p->mem_bytes >> 20),
			p->pids, p->timeout_s, p->cpu_s, (unsigned long long)(p->fsize_bytes >> 20),
			p->nofile);
	/* the user's exempt_paths the masks left out (as the plan resolved
	 * them), as many as fit, and how many did not */
	if (p->exempt.n) {
		size_t k = 0, room = sizeof(ret->sandbox) - 64;

		moat_buf_puts(&b, ",\"exempt_paths\":[");
		for (; k < p->exempt.n; k++) {
			size_t at = b.len;

			if (k)
				moat_buf_putc(&b, ',');
			moat_buf_json_str(&b, p->exempt.v[k], strlen(p->exempt.v[k]));
			if (b.len > room) {
				b.len = at;
				if (b.data)
					b.data[at] = '\0';
				break;
			}
		}
		moat_buf_putc(&b, ']');
		if (k < p->exempt.n)
			moat_buf_printf(&b, ",\"exempt_paths_omitted\":%zu", p->exempt.n - k);
	}
	moat_buf_putc(&b, '}');
	/* the names are a fixed vocabulary, the exemptions are cut to fit:
	 * it always fits */
	if (!b.oom && b.len < sizeof(ret->sandbox))
		memcpy(ret->sandbox, b.data, b.len + 1);
	else
		ret->sandbox[0] = '\0';
	moat_buf_release(&b);
}

/* The kernel refused the user namespace after all (AppArmor may decide
 * only at clone time): plan again without it, and ask the fallback policy
 * again. */
static void replan_without_userns(struct moat_kfeatures *kf, const char *why)
{
	kf->userns = false;
	kf->ns_admin = false;
	moat_strlcpy(kf->userns_why, why, sizeof(kf->userns_why));
}

/* The workspace and the working directory, symlinks resolved; tmpws is
 * created when asked for. Returns 0 or the exit status.
 * SECURITY: every look at the filesystem on the way to the plan (here,
 * home_dir, missing_paths, the planner's through ctx.lstat) goes through
 * the recorders of fsrec.h, or marks the record unrecordable: a call the
 * sandbox was armed for takes the armed plan as it is while the watch made
 * from them is quiet (armed_inputs_same). */
static int resolve_dirs(struct runner *st, char *tmpws, size_t tmpsz, char *ws, char *cwd)
{
	const struct moat_run_request *rq = st->rq;
	const char *w;
	struct stat st_ws;

	if (rq->tmp_workspace) {
		snprintf(tmpws, tmpsz, "/tmp/moat-ws-XXXXXX");
		if (!mkdtemp(tmpws)) {
			int e = errno;

			tmpws[0] = '\0';
			return fail(st, NULL, "cannot create a temporary workspace in /tmp: %s",
				    strerror(e));
		}
	}
	w = tmpws[0]			 ? tmpws
	    : rq->workspace		 ? rq->workspace
	    : rq->cfg->sandbox_workspace ? rq->cfg->sandbox_workspace
					 : ".";
	errno = 0;
	if (!moat_fsrec_realpath(w, ws) || moat_fsrec_stat(ws, &st_ws) < 0 || !S_ISDIR(st_ws.st_mode))
		return fail(st, "pass an existing directory with --workspace",
			    "cannot use '%s' as the workspace: %s", w,
			    errno ? strerror(errno) : "not a directory");
	if (rq->cwd && !tmpws[0]) {
		/* SECURITY: resolved here, and the planner refuses one outside
		 * the workspace (seed 000's workspace-escape guard) */
		errno = 0;
		if (!moat_fsrec_realpath(rq->cwd, cwd))
			return fail(st, "pass an existing directory inside the workspace",
				    "cannot use '%s' as the working directory: %s", rq->cwd,
				    strerror(errno));
		return 0;
	}

	char here[PATH_MAX];

	moat_fsrec_unrecordable(); /* (the process's own directory) */
	if (tmpws[0] || !getcwd(here, sizeof(here)) || !realpath(here, cwd))
		moat_strlcpy(cwd, ws, PATH_MAX);
	/* a cwd outside an explicitly given workspace starts at the workspace */
	if (!moat_path_within(cwd, ws) && (rq->workspace || rq->cfg->sandbox_workspace))
		moat_strlcpy(cwd, ws, PATH_MAX);
	return 0;
}

static int print_plan(struct runner *st, const struct moat_plan *plan,
		      const struct moat_kfeatures *kf, const struct moat_spawn *sp)
{
	struct moat_buf b = MOAT_BUF_INIT;
	int r = 0;

	moat_plan_to_json(plan, &b);
	/* splice the resolved mounts and the kernel in before the final brace */
	while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == '}'))
		b.data[--b.len] = '\0';
	moat_buf_puts(&b, "},\n  \"kernel\": ");
	moat_kfeatures_to_json(kf, &b);
	moat_buf_puts(&b, ",\n  \"mounts\": ");
	moat_mounts_to_json(&sp->mounts, &b);
	moat_buf_printf(&b, ",\n  \"masked_now\": %zu", sp->mounts.nmasks_found);
	moat_buf_puts(&b, "\n}\n");
	if (b.oom) {
		r = fail(st, NULL, "out of memory");
	} else {
		/* the one thing the runner prints: asked for by print_plan */
		fputs(b.data, stdout);
		st->ret->status = 0;
	}
	moat_buf_release(&b);
	return r;
}

/* What the child did, once it was waited for. */
static void record_outcome(struct runner *st, const struct moat_spawn *sp, int status,
			   const struct moat_error *err)
{
	struct moat_run_result *ret = st->ret;
	int ws = sp->wait_status;

	ret->status = status;
	ret->step = sp->report.step;
	ret->duration_ms = sp->elapsed_ms;
	ret->timed_out = sp->timed_out;
	ret->ran = sp->started && sp->report.step == MOAT_STEP_NONE && sp->reaped;
	if (ret->ran) {
		if (WIFEXITED(ws)) {
			ret->exit_code = WEXITSTATUS(ws);
		} else if (WIFSIGNALED(ws)) {
			ret->signal = WTERMSIG(ws);
		}
	}
	if (sp->report.step == MOAT_STEP_EXEC) {
		moat_strlcpy(ret->error, err->msg, sizeof(ret->error));
		say(st, err->msg);
	} else if (sp->report.step != MOAT_STEP_NONE) {
		fail(st, step_hint(sp), "%s", err->msg);
		ret->status = status;
	} else if (sp->timed_out) {
		fail(st, "raise --timeout", "%s", err->msg);
		ret->status = status;
	} else if (!sp->started && err->msg[0]) {
		/* the clone itself failed */
		fail(st, NULL, "%s", err->msg);
	}
	if (sp->quarantined[0])
		tell(st,
		     "warning: written inside the sandbox, these would run code or change policy "
		     "outside it, and were renamed to NAME.moat-quarantined (review them; rename "
		     "back to use): %s",
		     sp->quarantined);
	if (sp->protected_created[0])
		tell(st,
		     "warning: protected path(s) created inside the sandbox and kept: %s; review "
		     "them before they run outside it",
		     sp->protected_created);
}

/* A spawn set up afresh, holding the namespace for the caller's exit
 * (exit_after) and handing it to a teardown helper (detach_teardown) as the
 * request asks. */
static void spawn_fresh(struct moat_spawn *sp, const struct moat_kfeatures *kf, bool hold,
			bool detach)
{
	moat_spawn_init(sp, kf);
	sp->hold_mntns = hold;
	sp->detach_teardown = detach;
}

/* Another attempt of the run: what the last one holds goes now, not to a
 * teardown helper (one per process, and a zombie of ours until the end
 * that a later attempt's reaping would trip over), and a fresh spawn. */
static void spawn_again(struct moat_spawn *sp, const struct moat_kfeatures *kf)
{
	bool hold = sp->hold_mntns, detach = sp->detach_teardown;

	sp->hold_mntns = false;
	sp->detach_teardown = false;
	moat_spawn_release(sp);
	spawn_fresh(sp, kf, hold, detach);
}

/* Probe the kernel and, for a plan with the network denied (early), start
 * the child now (moat_spawn_start). User namespaces refused at the clone:
 * *refused, and on without them, as the plan will be. */
static int probe_and_start(struct moat_kfeatures *kf, struct moat_spawn *sp, bool early,
			   bool net_allowed, bool hold_mntns, bool detach, bool *refused,
			   struct moat_error *e)
{
	int r = 0;

	moat_probe_start(kf);
	spawn_fresh(sp, kf, hold_mntns, detach);
	if (early && kf->userns) {
		r = moat_spawn_start(sp, net_allowed, e);
		if (r == -EPERM) {
			*refused = true;
			replan_without_userns(kf, e->msg);
			spawn_again(sp, kf);
			r = 0;
		}
	}
	moat_probe_finish(kf);
	/* Landlock and seccomp only: the child loads its filter while we
	 * plan (it needs the probe of seccomp) */
	if (early && r == 0 && !kf->userns)
		r = moat_spawn_start(sp, net_allowed, e);
	return r;
}

/* Paths given for the filesystem (--ro, --rw, a profile's) that do not
 * exist. A writable one grants nothing: skipped, and said. A read-only one
 * inside the writable workspace must not be created either: it becomes a
 * protected name (a stand-in keeps it from being made). A read-only one
 * inside another writable path stays an error (nothing there keeps it
 * from being created); elsewhere nothing can create it: skipped, and said.
 * Returns 1 when the profile changed and the plan must be built again, 0,
 * or MOAT_RUN_EXIT_SETUP (said) for a read-only path nothing can keep. */
/* SECURITY: the user's moat configuration directory (or the audit log's)
 * missing inside a writable path outside the workspace (--rw ~/.config)
 * would be the command's to create, with a configuration the next session
 * loads (or a log it appends to, a link to another file even): it is
 * made first (empty, 0755, its missing parents too), so that it is bound
 * read-only (carved read-only without a mount namespace) as an existing
 * one is. In the workspace it is a protected name, set aside after the run
 * if the command makes it. */
static void make_config_dirs(const struct moat_plan *plan)
{
	for (size_t i = 0; i < plan->config_dirs.n; i++) {
		const char *d = plan->config_dirs.v[i], *c = d + 1;
		struct stat sb, pst;
		int fd;

		if (moat_path_within(d, plan->workspace) || d[0] != '/' ||
		    moat_fsrec_lstat(d, &sb) == 0 || errno != ENOENT)
			continue;
		/* component by component from "/", no link followed (the path
		 * is real up to its first missing part: a link there now is a
		 * change since, and nothing is made through it); as root for
		 * another user's home, each new one is that user's, as the
		 * directory it is made in */
		if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;
		while (fd >= 0 && *c) {
			size_t cl = strcspn(c, "/");
			char comp[NAME_MAX + 1];
			int nfd;

			if (!cl || cl > NAME_MAX) {
				close(fd);
				fd = -1;
				break;
			}
			memcpy(comp, c, cl);
			comp[cl] = '\0';
			nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (nfd < 0 && errno == ENOENT && mkdirat(fd, comp, 0755) == 0) {
				/* (the new directory opened, then given: never a name
				 * swapped in between, a hard link to a file of root's) */
				nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (nfd >= 0 && geteuid() == 0 && fstat(fd, &pst) == 0 && pst.st_uid != 0)
					(void)fchown(nfd, pst.st_uid, pst.st_gid);
			}
			close(fd);
			fd = nfd;
			c += cl;
			c += *c == '/';
		}
		if (fd >= 0)
			close(fd);
	}
}

static int missing_paths(struct runner *st, struct moat_plan *plan, struct moat_profile *prof)
{
	int again = 0;

	for (size_t i = 0; i < plan->nfs; i++) {
		struct moat_fs_rule *fr = &plan->fs[i];
		const char *under = NULL;
		struct stat sb;

		if (fr->optional || !strcmp(fr->origin, "workspace") || !strcmp(fr->origin, "system"))
			continue;
		if (moat_fsrec_lstat(fr->path, &sb) == 0 || (errno != ENOENT && errno != ENOTDIR))
			continue; /* there (or unreadable: preparing it says why) */
		for (size_t j = 0; j < plan->nfs && !(fr->access & MOAT_FS_WRITE); j++)
			if (j != i && (plan->fs[j].access & MOAT_FS_WRITE) &&
			    moat_path_within(fr->path, plan->fs[j].path) &&
			    strcmp(fr->path, plan->fs[j].path) &&
			    (!under || strlen(plan->fs[j].path) > strlen(under)))
				under = plan->fs[j].path; /* the innermost */
		if (under && moat_path_within(fr->path, plan->workspace))
			under = plan->workspace; /* a protected name, in the workspace's tree */
		if (under && !strcmp(under, plan->workspace) && !plan->mntns)
			return fail(st, "create it first (or enable user namespaces)",
				    "read-only path '%s' (%s) does not exist in the workspace, and "
				    "without a mount namespace nothing would keep the command from "
				    "creating it",
				    fr->path, fr->origin);
		if (under && !strcmp(under, plan->workspace)) {
			const char *rel = fr->path + strlen(plan->workspace) + 1;

			bool known = false;

			for (size_t k = 0; k < prof->protect.n && !known; k++)
				known = !strcmp(prof->protect.v[k], rel);
			if (known) {
				fr->optional = true; /* the protected name stands for it */
				continue;
			}
			if (!moat_protect_name_ok(rel) || moat_strv_add(&prof->protect, rel) < 0)
				continue; /* preparing it refuses, with the reason */
			prof->set |= MOAT_PF_PROTECT;
			tell(st, "note: read-only path '%s' (%s) does not exist: it is kept from being "
				 "created, as a protected name", fr->path, fr->origin);
			again = 1;
		} else if (under) {
			return fail(st, "create it first, or name a path inside the workspace",
				    "read-only path '%s' (%s) does not exist inside the writable path "
				    "'%s': nothing would keep the command from creating it",
				    fr->path, fr->origin, under);
		} else {
			fr->optional = true;
			tell(st, "note: %s path '%s' (%s) does not exist: skipped",
			     fr->access & MOAT_FS_WRITE ? "writable" : "read-only", fr->path, fr->origin);
		}
	}
	/* a --mask path inside the workspace that does not exist: the command
	 * must not make it either (what it wrote there would be read as the
	 * masked file later): a protected name too */
	for (size_t i = 0; i < plan->nmasks; i++) {
		const struct moat_mask *mk = &plan->masks[i];
		const char *rel, *under = NULL;
		struct stat sb;
		bool known = false;

		if (mk->kind != MOAT_MASK_PATH || strcmp(mk->origin, "--mask") ||
		    moat_fsrec_lstat(mk->pattern, &sb) == 0 || (errno != ENOENT && errno != ENOTDIR))
			continue;
		for (size_t j = 0; j < plan->nfs; j++)
			if ((plan->fs[j].access & MOAT_FS_WRITE) &&
			    moat_path_within(mk->pattern, plan->fs[j].path) &&
			    strcmp(mk->pattern, plan->fs[j].path) &&
			    (!under || strlen(plan->fs[j].path) > strlen(under)))
				under = plan->fs[j].path; /* the innermost */
		if (!under)
			continue; /* nothing can create it */
		if (moat_path_within(mk->pattern, plan->workspace))
			under = plan->workspace; /* a protected name, in the workspace's tree */
		if (!plan->mntns)
			return fail(st, "create it first (or enable user namespaces)",
				    "masked path '%s' does not exist in the writable path '%s', and "
				    "without a mount namespace nothing would keep the command from "
				    "creating it",
				    mk->pattern, under);
		if (strcmp(under, plan->workspace))
			return fail(st, "create it first, or name a path inside the workspace",
				    "masked path '%s' does not exist inside the writable path '%s': "
				    "nothing would keep the command from creating it",
				    mk->pattern, under);
		rel = mk->pattern + strlen(plan->workspace) + 1;
		for (size_t k = 0; k < prof->protect.n && !known; k++)
			known = !strcmp(prof->protect.v[k], rel);
		if (known || !moat_protect_name_ok(rel) || moat_strv_add(&prof->protect, rel) < 0)
			continue;
		prof->set |= MOAT_PF_PROTECT;
		tell(st, "note: masked path '%s' does not exist: it is kept from being created, as "
			 "a protected name", mk->pattern);
		again = 1;
	}
	return again;
}

/* The standard descriptor that is an IP socket (0-2), or -1: with the
 * network denied, a socket of the host's network handed in on stdio would
 * reach it from inside (connect works on an unconnected one). */
static int inet_stdio(void)
{
	for (int fd = 0; fd < 3; fd++) {
		int d = 0;
		socklen_t l = sizeof(d);

		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &d, &l) == 0 &&
		    (d == AF_INET || d == AF_INET6))
			return fd;
	}
	return -1;
}

/* A plan that denies the network takes no IP socket on stdio (the
 * planned path says why; inet_stdio). */
static bool plan_net_ok(const struct moat_plan *p)
{
	return p->net != MOAT_NET_DENY || inet_stdio() < 0;
}

/* Arming: has the call come meanwhile (rq->arm_busy_fd readable)? */
static bool call_came(const struct moat_run_request *rq)
{
	struct pollfd pf = {rq->arm_busy_fd, POLLIN, 0};

	return rq->arm_busy_fd > 0 && poll(&pf, 1, 0) > 0;
}

/* How many times a run is prepared again when the workspace changed while
 * it was prepared (-ESTALE), before it is refused. */
#define RUN_STALE_TRIES 3

/* Refused: the workspace kept changing while the run was prepared. */
static void stale_said(struct runner *st, const char *why)
{
	fail(st,
	     "run it again once nothing is renaming or removing directories in the workspace",
	     "refusing to run: the workspace changed while the sandbox was prepared, %d times "
	     "in a row (a secret in a directory renamed meanwhile could be left unmasked); "
	     "the last change seen: %s",
	     RUN_STALE_TRIES + 1, why);
}

/* The watch made while the armed mounts were prepared (fsrec.h): each
 * lookup watched before it looked. NULL: the call prepares its mounts
 * again. */
static struct moat_fswatch *arm_watch(void)
{
	struct moat_fswatch *w = moat_fswatch_start();

	if (w && !moat_fswatch_quiet(w)) {
		moat_fswatch_free(w);
		return NULL;
	}
	return w;
}

static void armed_inputs_release(struct moat_run_warm *w)
{
	free(w->in_profile);
	free(w->in_ws);
	free(w->in_cwd);
	free(w->in_home);
	moat_strv_release(&w->in_denied);
	moat_strv_release(&w->in_denied_project);
	w->in_profile = w->in_ws = w->in_cwd = w->in_home = NULL;
	w->reuse = false;
}

static bool opt_str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Arming: what its plan was made from, for a call to compare
 * (moat_run_warm, reuse). */
static void armed_inputs_note(struct moat_run_warm *w, const struct moat_run_request *rq,
			      char *const *env, long prof_timeout)
{
	const struct moat_strv *d = rq->denied_extra;
	const char *home = env_lookup(env, "HOME");
	bool ok = w->watch && rq->timeout_at_most && !rq->over && !rq->tmp_workspace &&
		  rq->workspace && rq->cwd;

	armed_inputs_release(w);
	w->in_cfg = rq->cfg;
	w->in_prof_timeout = prof_timeout;
	if (ok && rq->profile && !(w->in_profile = moat_strdup(rq->profile)))
		ok = false;
	if (ok && (!(w->in_ws = moat_strdup(rq->workspace)) || !(w->in_cwd = moat_strdup(rq->cwd))))
		ok = false;
	if (ok && home && !(w->in_home = moat_strdup(home)))
		ok = false;
	for (size_t i = 0; ok && d && i < d->n; i++)
		if (moat_strv_add(&w->in_denied, d->v[i]) < 0)
			ok = false;
	d = rq->denied_project;
	for (size_t i = 0; ok && d && i < d->n; i++)
		if (moat_strv_add(&w->in_denied_project, d->v[i]) < 0)
			ok = false;
	w->reuse = ok;
}

/* The same list as one noted (which dropped repeats: a list holding one
 * is taken as another) */
static bool noted_same(const struct moat_strv *noted, const struct moat_strv *d)
{
	if ((d ? d->n : 0) != noted->n)
		return false;
	for (size_t i = 0; i < noted->n; i++)
		if (strcmp(d->v[i], noted->v[i]))
			return false;
	return true;
}

/* A call the armed plan was made for: the same request but for its
 * command and timeout, and nothing looked at since changed. */
static bool armed_inputs_same(const struct moat_run_warm *w, const struct moat_run_request *rq,
			      char *const *env)
{
	if (!w->armed || !w->reuse || !w->plan || !w->watch || rq->cfg != w->in_cfg ||
	    !rq->timeout_at_most || rq->timeout_s <= 0 || rq->over || rq->tmp_workspace ||
	    rq->print_plan || rq->arm_only || !opt_str_eq(rq->profile, w->in_profile) ||
	    !opt_str_eq(rq->workspace, w->in_ws) || !opt_str_eq(rq->cwd, w->in_cwd) ||
	    !opt_str_eq(env_lookup(env, "HOME"), w->in_home) ||
	    !noted_same(&w->in_denied, rq->denied_extra) ||
	    !noted_same(&w->in_denied_project, rq->denied_project))
		return false;
	return moat_fswatch_quiet(w->watch);
}

/* The armed sandbox as it was made, for the call's plan p (nothing it was
 * made from changed since: the watch). */
static void take_kept(struct moat_run_warm *w, const struct moat_plan *p,
		      const struct moat_run_request *rq)
{
	moat_spawn_rearm_kept(&w->sp, p);
	/* removing the watches waits for the kernel's grace periods
	 * (milliseconds): a caller that exits after the run leaves them to
	 * its exit */
	if (rq->exit_after)
		w->watch = NULL;
}

/* The call's plan against the sandbox armed for it: the same sandbox,
 * and mounts prepared now that do exactly what the armed ones did
 * (nothing replaced, appeared or gone since): taken over (sp->armed), the
 * fresh mounts' records for after the run. Otherwise the armed child goes
 * and the call starts afresh. */
static void take_armed(struct moat_run_warm *w, const struct moat_plan *plan,
		       const struct moat_run_request *rq)
{
	struct moat_spawn *sp = &w->sp;
	struct moat_mounts fresh;
	struct moat_error e;
	bool same_plan = moat_plan_same_sandbox(w->plan, plan);

	moat_error_clear(&e);
	w->armed = false;
	/* nothing the mounts were prepared from has changed since the watch
	 * began (and they were found the same once it had): as made now */
	if (same_plan && w->watch && moat_fswatch_quiet(w->watch)) {
		take_kept(w, plan, rq);
		return;
	}
	if (same_plan && moat_ns_prepare(plan, &fresh, &e) == 0) {
		char why[PATH_MAX];

		moat_mounts_note_ids(&fresh);
		/* SECURITY: the masks armed cover what this scan found, and this
		 * scan saw the workspace whole: every directory it relied on
		 * still as it read it (scancheck.c; the armed child's own mounts
		 * were checked so when it was armed) */
		if (moat_mounts_same(&sp->mounts, &fresh) &&
		    moat_scan_check_verify(fresh.check, why, sizeof(why)) == 0) {
			moat_spawn_rearm(sp, plan, &fresh);
			return;
		}
		moat_mounts_release(&fresh);
	}
	/* (a failure to prepare is said when the call prepares its own) */
	moat_spawn_disarm(sp);
	spawn_fresh(sp, &w->kf, rq->exit_after, rq->detach_teardown);
}

int moat_runner_run(const struct moat_run_request *rq, struct moat_run_result *ret,
		    struct moat_error *err)
{
	struct runner st = {rq, ret};
	struct moat_profile prof;
	struct moat_kfeatures kf_own, *kf = &kf_own;
	struct moat_plan_context ctx;
	char confbuf[2][PATH_MAX], auditbuf[PATH_MAX], auditname[NAME_MAX + 1];
	const char *confdirs[3];
	struct moat_strv exempt = {.v = NULL};
	struct moat_plan *plan = NULL;
	struct moat_spawn sp_own, *sp = &sp_own;
	struct moat_run_warm *warm = rq ? rq->warm : NULL;
	struct moat_error e;
	const struct moat_config *cfg;
	char *const *env;
	char ws[PATH_MAX], cwd[PATH_MAX], homebuf[PATH_MAX], tmpws[64] = "";
	bool spawned = false, reused = false;
	int r, attempts = 0, stale = 0;
	long prof_timeout = 0;

	if (!rq || !ret || !rq->cfg || (!rq->print_plan && (!rq->argv || !rq->argv[0])) ||
	    ((rq->scan_only || rq->sweep_only) && rq->warm) ||
	    (rq->arm_only && (!rq->warm || rq->warm->armed || rq->print_plan || rq->tmp_workspace))) {
		moat_error_set(err, "invalid run request: no configuration or no command");
		return -EINVAL;
	}
	memset(ret, 0, sizeof(*ret));
	ret->status = MOAT_RUN_EXIT_SETUP;
	ret->exit_code = -1;
	cfg = rq->cfg;
	env = rq->env ? rq->env : environ;
	moat_profile_init(&prof, "");
	moat_error_clear(&e);

	/* the call the armed sandbox was made for, nothing it was planned and
	 * prepared from changed since (the watch): its plan as it is, with the
	 * call's command and timeout (the planner uses them for nothing else) */
	if (warm && armed_inputs_same(warm, rq, env) && plan_net_ok(warm->plan)) {
		kf = &warm->kf;
		sp = &warm->sp;
		spawned = reused = true;
		plan = warm->plan;
		warm->plan = NULL;
		warm->armed = false;
		plan->argv = rq->argv;
		plan->timeout_s = warm->in_prof_timeout > 0 && warm->in_prof_timeout <= rq->timeout_s
					  ? warm->in_prof_timeout
					  : rq->timeout_s;
		sandbox_json(ret, plan, accepted_set(rq), 0);
		take_kept(warm, plan, rq);
		if (fallback(&st, plan, 0, NULL)) {
			moat_spawn_disarm(sp);
			goto out;
		}
		goto run;
	}
	if (rq->arm_only) {
		moat_fsrec_begin(); /* every lookup from here to the mounts watched */
		moat_fsrec_cancel_fd(rq->arm_busy_fd);
	}

	/* the profile: a built-in or named one (sandbox.profiles, over its
	 * extends chain, with the configuration's defaults), then the flags,
	 * then the caller's timeout (a layer too: an immutable process
	 * dimension may only be tightened).
	 * SECURITY: an unknown or broken profile refuses (seed 002) */
	r = moat_config_sandbox_profile(cfg, rq->profile, &prof, &e);
	if (r < 0) {
		fail(&st, NULL, "%s: refusing to run", e.msg);
		goto out;
	}
	if (rq->over && moat_profile_layer(&prof, rq->over, &e) < 0) {
		fail(&st, NULL, "%s", e.msg);
		goto out;
	}
	prof_timeout = prof.timeout_s;
	if (rq->timeout_s > 0 &&
	    !(rq->timeout_at_most && prof.timeout_s > 0 && prof.timeout_s <= rq->timeout_s)) {
		struct moat_profile t;

		moat_profile_init(&t, "timeout");
		t.timeout_s = rq->timeout_s;
		t.set = MOAT_PF_TIMEOUT;
		r = moat_profile_layer(&prof, &t, &e);
		moat_profile_release(&t);
		if (r < 0) {
			fail(&st, NULL, "%s", e.msg);
			goto out;
		}
	}

	if (resolve_dirs(&st, tmpws, sizeof(tmpws), ws, cwd))
		goto out;

	memset(&ctx, 0, sizeof(ctx));
	ctx.workspace = ws;
	ctx.tmp_workspace = tmpws[0] != '\0';
	ctx.cwd = cwd;
	ctx.home = home_dir(env, homebuf, sizeof(homebuf));
	ctx.denied = cfg->default_denied_paths ? moat_default_denied_paths : NULL;
	ctx.denied_extra = rq->denied_extra;
	ctx.denied_project = rq->denied_project;
	/* the user's exempt_paths (borrowed: the planner only reads them) */
	exempt.v = cfg->exempt_paths.v;
	exempt.n = cfg->exempt_paths.n;
	ctx.exempt = &exempt;
	ctx.argv = rq->argv;
	ctx.scan_max_entries = cfg->scan_max_entries;
	ctx.lstat = moat_fsrec_lstat;
	user_config_dirs(ctx.home, confbuf, confdirs);
	ctx.user_config = confdirs;
	if (audit_dir(rq->audit_log, cfg->audit_log, auditbuf, auditname) == 0) {
		ctx.audit_dir = auditbuf;
		ctx.audit_file = auditname;
	}

	if (warm && !rq->print_plan) {
		/* probed, and its child started, ahead of the call */
		kf = &warm->kf;
		sp = &warm->sp;
		spawned = true;
		if (warm->start_failed)
			attempts++;
	} else {
		bool refused = false;

		/* with the network denied, the child starts now and creates its
		 * namespaces (the network namespace is the costliest step) while
		 * we probe, plan and prepare the rest. With the host's network,
		 * under a seccomp filter of someone else's (a container's: Docker
		 * refuses the namespaces' clone there), too: a refused clone is
		 * then known before the preparation, not after it (which then ran
		 * twice); elsewhere the clone waits for the plan (an early child
		 * with no network namespace to make gains nothing) */
		bool allow = prof.net == MOAT_NET_ALLOW;

		r = probe_and_start(kf, sp,
				    !rq->print_plan && !rq->scan_only && !rq->sweep_only &&
					(prof.net == MOAT_NET_DENY ||
					 (allow && prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2)),
				    allow, rq->exit_after, rq->detach_teardown, &refused, &e);
		spawned = true;
		if (refused)
			attempts++;
		if (r) {
			fail(&st, NULL, "%s", e.msg);
			goto out;
		}
		/* the plan printed is the one a run would make: no clone tells
		 * here what a container's seccomp refuses, the thorough probe
		 * (moat status's) does */
		if (rq->print_plan && (kf->userns || kf->ns_admin)) {
			moat_probe_thorough(kf);
			spawn_again(sp, kf);
		}
	}
replan:
	plan = moat_plan_free(plan);
	moat_error_clear(&e);
	r = moat_plan_build(&prof, &ctx, kf, &plan, &e);
	if (r < 0) {
		fail(&st, NULL, "cannot plan the sandbox: %s", e.msg);
		goto out;
	}
	if (!rq->scan_only && !rq->sweep_only && plan->net == MOAT_NET_DENY && !rq->print_plan) {
		int fd = inet_stdio();

		if (fd >= 0) {
			fail(&st, "give the command a pipe or a file instead",
			     "standard %s is a network socket, and the network is denied",
			     fd == 0 ? "input" : fd == 1 ? "output" : "error");
			goto out;
		}
	}
	if (!rq->scan_only && !rq->sweep_only) {
		r = missing_paths(&st, plan, &prof);
		if (r == 1)
			goto replan;
		if (r)
			goto out;
	}
	if (!rq->scan_only && !rq->sweep_only && !rq->print_plan)
		make_config_dirs(plan);
	sandbox_json(ret, plan, accepted_set(rq), 0);
	if (rq->scan_only || rq->sweep_only) {
		if (rq->scan_only)
			moat_ns_scan_ahead(plan, rq->arm_busy_fd > 0 ? rq->arm_busy_fd : -1);
		else
			moat_ns_standins_sweep(plan);
		goto out;
	}
	/* a sandbox armed ahead of the call: this call's, when it is exactly
	 * what the call would make now */
	if (warm && warm->armed && !rq->print_plan)
		take_armed(warm, plan, rq);
	if (sp->armed) {
		if (fallback(&st, plan, 0, NULL)) {
			moat_spawn_disarm(sp);
			goto out;
		}
		goto run;
	}
	/* arming: only a sandbox that nothing is said of (a call finds it as
	 * it would make it); otherwise warm stays as it was started */
	if (rq->arm_only && (moat_plan_gaps(plan, NULL, 0) || ret->warning[0] || !plan->mntns ||
			     !sp->started || !sp->early || !moat_spawn_agrees(sp, plan) ||
			     call_came(rq))) {
		spawned = false;
		ret->status = 0;
		goto out;
	}
	/* a child started ahead for another plan (the network allowed, say)
	 * is not this call's: it goes, and this call starts its own */
	if (sp->started && !moat_spawn_agrees(sp, plan))
		spawn_again(sp, kf);
	r = moat_spawn_prepare(sp, plan, env, &e);
	if (rq->arm_only)
		moat_fsrec_end();
	/* arming: prepared for nothing (the workspace changing, say); the
	 * call starts its own child and says what fails. SECURITY: the child
	 * started for the arming goes with what was prepared for it: a
	 * released spawn left marked started would be run with no child */
	if (r < 0 && rq->arm_only) {
		moat_spawn_release(sp);
		spawn_fresh(sp, kf, true, false);
		spawned = false;
		ret->status = 0;
		goto out;
	}
	if (r == -ESTALE && stale++ < RUN_STALE_TRIES) {
		spawn_again(sp, kf);
		goto replan;
	}
	if (r == -ESTALE) {
		stale_said(&st, e.msg);
		goto out;
	}
	if (r < 0) {
		/* (an error that names its own remedy keeps it) */
		fail(&st,
		     strstr(e.msg, ". hint: ") ? NULL
					      : "check the paths given with --ro, --rw and --workspace",
		     "cannot prepare the sandbox: %s", e.msg);
		goto out;
	}
	if (rq->print_plan) {
		print_plan(&st, plan, kf, sp);
		goto out;
	}
	{
		char extra[1024] = "";
		unsigned extra_set = 0;

		if (sp->mounts.guard_over[0]) {
			size_t l = strlen(extra);

			extra_set |= 1u << MOAT_FEAT_PROTECTED;
			snprintf(extra + l, sizeof(extra) - l,
				 "%swithout a mount namespace these protected directories have too "
				 "many entries to be put back after the run, only replaced whole: %s",
				 l ? "; " : "", sp->mounts.guard_over);
		}
		if (rq->arm_only) {
			/* SECURITY: the files' identities before the child
			 * mounts on them: a file replaced in between is then
			 * never taken for the one the mount covers (noted after,
			 * the new one would match a fresh preparation while the
			 * mount covers the old) */
			if (!extra[0])
				moat_mounts_note_ids(&sp->mounts);
			/* (a sandbox no watch stands for is never taken: not
			 * made) */
			if (!extra[0] && !moat_fsrec_spoiled() && moat_spawn_arm(sp, &e) == 0) {
				warm->armed = true;
				/* (with a PID namespace only: the watch's holder is
				 * a child of ours, which a run without one would
				 * take for a leftover of the sandbox) */
				warm->watch = plan->pidns && !call_came(rq)
						  ? arm_watch()
						  : NULL;
				armed_inputs_note(warm, rq, env, prof_timeout);
				warm->plan = plan;
				plan = NULL;
				warm->prof = prof;
				warm->have_prof = true;
				moat_profile_init(&prof, "");
			} else {
				/* prepared for nothing: the call starts its own */
				moat_spawn_release(sp);
				spawn_fresh(sp, kf, true, false);
			}
			spawned = false;
			ret->status = 0;
			goto out;
		}
		if (extra_set)
			sandbox_json(st.ret, plan, accepted_set(rq), extra_set);
		if (fallback(&st, plan, extra_set, extra[0] ? extra : NULL))
			goto out;
		if (sp->ll_rep.carved[0])
			tell(&st,
			     "warning: without a mount namespace the masked paths are left out of "
			     "Landlock's rules, so nothing new can be created directly in these "
			     "directories, which hold one (their files stay writable, their other "
			     "subdirectories as ever): %s",
			     sp->ll_rep.carved);
		if (sp->ll_rep.withheld[0])
			tell(&st,
			     "warning: without a mount namespace these directories are unreadable "
			     "and unwritable in the sandbox: they hold a masked path too deep or "
			     "among too many entries (more than %d levels, %d rules) to carve "
			     "Landlock's rules around: %s. hint: move the masked files out of deep "
			     "or crowded directories, or enable user namespaces",
			     MOAT_LL_CARVE_MAX_DEPTH, MOAT_LL_CARVE_MAX_RULES, sp->ll_rep.withheld);
	}
run:
	sp->end_stdio = rq->end_stdio;
	r = moat_spawn_run(sp, &e);
	if (r == -EPERM && !reused && attempts++ == 0) {
		replan_without_userns(kf, e.msg);
		spawn_again(sp, kf);
		goto replan;
	}
	/* the workspace changed while it was prepared (the scan's check in
	 * the child): prepared again from the plan on, a few times */
	if (r == -ESTALE && !reused && stale++ < RUN_STALE_TRIES) {
		spawn_again(sp, kf);
		goto replan;
	}
	if (r == -ESTALE) {
		stale_said(&st, e.msg);
		goto out;
	}
	if (r == -EAGAIN && !reused && attempts++ == 0) {
		kf->fresh_proc = false;
		moat_strlcpy(kf->fresh_proc_why, "mounting a fresh /proc was refused",
			     sizeof(kf->fresh_proc_why));
		spawn_again(sp, kf);
		goto replan;
	}
	if (r < 0)
		r = MOAT_RUN_EXIT_SETUP;
	record_outcome(&st, sp, r, &e);
out:
	if (spawned)
		moat_spawn_release(sp);
	if (warm && !rq->arm_only)
		moat_runner_warm_free(warm);
	if (rq->arm_only)
		moat_fsrec_drop(); /* (taken over by a watch, or not needed) */
	if (!(rq->exit_after && plan_leave(plan)))
		moat_plan_free(plan);
	plan = NULL;
	if (tmpws[0])
		moat_rmtree(tmpws);
	moat_profile_release(&prof);
	if (ret->error[0])
		moat_error_set(err, "%s", ret->error);
	return 0;
}

struct moat_run_warm *moat_runner_warm_start(bool net_allowed)
{
	struct moat_run_warm *w = calloc(1, sizeof(*w));
	struct moat_error e;

	if (!w)
		return NULL;
	/* (another failure to start leaves it unstarted: the call starts its
	 * own child then) */
	(void)probe_and_start(&w->kf, &w->sp, true, net_allowed, true, false, &w->start_failed, &e);
	return w;
}

void moat_runner_warm_free(struct moat_run_warm *w)
{
	if (!w)
		return;
	if (w->armed)
		moat_spawn_disarm(&w->sp); /* never used: its stand-ins go too */
	moat_spawn_release(&w->sp); /* (a second release does nothing) */
	moat_plan_free(w->plan);
	moat_fswatch_free(w->watch);
	if (w->have_prof)
		moat_profile_release(&w->prof);
	armed_inputs_release(w);
	free(w);
}
