/* The bash tool (alias run_shell_command): `/bin/sh -c COMMAND` under the
 * sandbox of `moat run`, with the profile the configuration gives the shell
 * tool, in the workspace of the session.
 *
 * The runner (src/sandbox/runner.h) is not thread-safe and changes process
 * state, so each call runs it in a child process of its own: the child
 * gets /dev/null as stdin and two pipes as stdout and stderr, runs the
 * runner, writes the runner's result to a third pipe and exits. The caller
 * may be a multi-threaded server, and a child forked from it inherits the
 * locks other threads held at the fork (malloc's, stdio's, NSS's): so the
 * child is forked by a fork server, a small process forked once while the
 * caller was single-threaded (moat_bash_server_start). A call sends it the
 * three pipes' write ends and its arguments over a SOCK_SEQPACKET socket
 * and gets back a pidfd of the child; the server reaps the child and appends
 * its wait status to the result pipe. Without a server (a library user that
 * did not start one, or it died) the call forks the caller as before.
 *
 * The calling thread reads the pipes, keeping the head and the tail of each
 * stream up to the cap, reports progress, and cancels: SIGTERM to the child
 * through its pidfd (the runner passes it on, waits a grace period and kills
 * the whole sandboxed tree), SIGKILL after a bound. All its state is on its
 * own stack or heap: calls may run at once from any number of threads.
 *
 * It must never run a command outside the sandbox (a sandbox that cannot
 * be set up is a refusal, never a plain run), never let a process of the
 * call outlive it, never hand a command a descriptor of the caller, the
 * server or another call, and never hold more than the cap of output per
 * stream. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/str.h"
#include "core/path.h"
#include "sandbox/runner.h"
#include "sandbox/sandbox.h"
#include "tools/tools.h"

extern char **environ;

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* After SIGTERM (cancel), how long the runner may take to stop the tree:
 * its own grace period for the command is 2 s (src/sandbox/spawn.c). */
#define BASH_KILL_AFTER_MS 5000
/* How long past its timeout the runner may take before we stop it. */
#define BASH_BACKSTOP_SLACK_MS 10000
/* How long the pipes may stay open after the runner has exited (only a
 * process that escaped the tree kill could hold them). */
#define BASH_DRAIN_MS 1000
#define BASH_PROGRESS_MS 1000
#define BASH_READ_CHUNK 16384
#define BASH_DRAIN_ROUNDS 16 /* chunks read per wake-up and stream */
/* Linux refuses a single argument of 128 KiB or more (MAX_ARG_STRLEN), and
 * MOAT_BASH_MAX_COMMAND is larger: a longer command is passed in pieces of
 * this size and put together by the shell (BASH_JOIN). */
#define BASH_ARG_PIECE 65536
#define BASH_JOIN                                                                                  \
	"__moat_cmd=; for __moat_part do __moat_cmd=$__moat_cmd$__moat_part; done; "               \
	"unset __moat_part; set --; eval \"$__moat_cmd\""

/* The fork server: data bytes per message (a SOCK_SEQPACKET message must
 * fit the socket's buffer), how long a request and its reply may take (the
 * server only forks), how long a stopped server may take to exit, the
 * longest workspace, cwd and profile name (with the NUL) it takes. */
#define BASH_SRV_CHUNK 16384
#define BASH_SRV_IO_MS 10000
#define BASH_SRV_STOP_MS 2000
#define BASH_SRV_MAX_STRING PATH_MAX

static const char *const bash_keys[] = {"command", "cwd", "timeout", NULL};

/* ------------------------------------------------------------------ */
/* output capture: the head and the tail of a stream                   */
/* ------------------------------------------------------------------ */

/* The first head_cap bytes are kept in head, the last tail_cap in a ring;
 * head_cap + tail_cap == cap, so a stream of at most cap bytes is kept
 * whole, and a longer one loses its middle. */
struct capture {
	size_t head_cap, tail_cap;
	char *head;
	size_t head_len, head_alloc;
	char *tail; /* tail_cap bytes once needed */
	size_t tail_pos, tail_len;
	size_t total;
	bool oom;
};

static void capture_init(struct capture *c, size_t cap)
{
	memset(c, 0, sizeof(*c));
	c->tail_cap = cap / 2;
	c->head_cap = cap - c->tail_cap;
}

static void capture_release(struct capture *c)
{
	free(c->head);
	free(c->tail);
	c->head = c->tail = NULL;
}

static void capture_push(struct capture *c, const char *s, size_t n)
{
	size_t k;

	c->total += n;
	k = c->head_cap - c->head_len;
	if (k > n)
		k = n;
	if (k) {
		if (c->head_len + k > c->head_alloc) {
			size_t want = c->head_alloc ? c->head_alloc * 2 : 1024;
			char *h;

			while (want < c->head_len + k)
				want *= 2;
			if (want > c->head_cap)
				want = c->head_cap;
			h = realloc(c->head, want);
			if (!h) {
				c->oom = true;
				return;
			}
			c->head = h;
			c->head_alloc = want;
		}
		memcpy(c->head + c->head_len, s, k);
		c->head_len += k;
		s += k;
		n -= k;
	}
	if (!n || !c->tail_cap)
		return;
	if (!c->tail) {
		c->tail = malloc(c->tail_cap);
		if (!c->tail) {
			c->oom = true;
			return;
		}
	}
	if (n >= c->tail_cap) {
		memcpy(c->tail, s + n - c->tail_cap, c->tail_cap);
		c->tail_pos = 0;
		c->tail_len = c->tail_cap;
		return;
	}
	k = c->tail_cap - c->tail_pos;
	if (k > n)
		k = n;
	memcpy(c->tail + c->tail_pos, s, k);
	memcpy(c->tail, s + k, n - k);
	c->tail_pos = (c->tail_pos + n) % c->tail_cap;
	c->tail_len = c->tail_len + n > c->tail_cap ? c->tail_cap : c->tail_len + n;
}

static bool capture_truncated(const struct capture *c)
{
	return c->total > c->head_cap + c->tail_cap;
}

/* Append s as valid UTF-8: a NUL byte or an invalid sequence becomes
 * U+FFFD, so the text is a C string and a JSON string (a cut at the cap may
 * split a character). */
static void append_utf8(struct moat_buf *b, const unsigned char *s, size_t n)
{
	moat_buf_append_utf8(b, (const char *)s, n, false);
}

/* The kept text: the head, a marker where the middle was dropped, the tail. */
static void capture_text(const struct capture *c, const char *stream, struct moat_buf *b)
{
	append_utf8(b, (const unsigned char *)c->head, c->head_len);
	if (capture_truncated(c))
		moat_buf_printf(b,
				"\n[moat: %s truncated: %zu of %zu bytes omitted here; the first "
				"%zu and the last %zu bytes are shown]\n",
				stream, c->total - c->head_len - c->tail_len, c->total, c->head_len,
				c->tail_len);
	if (c->tail_len) {
		size_t start = (c->tail_pos + c->tail_cap - c->tail_len) % c->tail_cap;
		size_t first =
		    c->tail_cap - start < c->tail_len ? c->tail_cap - start : c->tail_len;

		if (first == c->tail_len) {
			append_utf8(b, (const unsigned char *)c->tail + start, first);
		} else {
			/* one contiguous copy, so a character across the wrap survives */
			char *t = malloc(c->tail_len);

			if (!t) {
				b->oom = true;
				return;
			}
			memcpy(t, c->tail + start, first);
			memcpy(t + first, c->tail, c->tail_len - first);
			append_utf8(b, (const unsigned char *)t, c->tail_len);
			free(t);
		}
	}
}

/* ------------------------------------------------------------------ */
/* arguments                                                           */
/* ------------------------------------------------------------------ */

struct bash_args {
	const char *command;
	const char *cwd; /* as given, or NULL */
	long timeout_s;
};

__attribute__((format(printf, 2, 3))) static int bad_arg(struct moat_tool_result *ret,
							 const char *fmt, ...)
{
	va_list ap;

	ret->ok = false;
	va_start(ap, fmt);
	vsnprintf(ret->error, sizeof(ret->error), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_args(json_t *args, struct bash_args *a, struct moat_tool_result *ret)
{
	const char *key;
	json_t *v;
	char unknown[256] = "";
	size_t nunknown = 0;

	memset(a, 0, sizeof(*a));
	a->timeout_s = MOAT_BASH_DEFAULT_TIMEOUT_S;
	if (!json_is_object(args))
		return bad_arg(ret, "bash takes a JSON object of arguments: command, and "
				    "optionally cwd and timeout");
	json_object_foreach(args, key, v)
	{
		bool known = false;

		for (size_t i = 0; bash_keys[i]; i++)
			known = known || !strcmp(key, bash_keys[i]);
		if (!known) {
			size_t l = strlen(unknown);

			if (l + 4 < sizeof(unknown))
				snprintf(unknown + l, sizeof(unknown) - l, "%s'%.60s'",
					 l ? ", " : "", key);
			nunknown++;
		}
	}
	if (nunknown)
		return bad_arg(ret, "unknown argument%s %s: bash takes command, cwd and timeout",
			       nunknown > 1 ? "s" : "", unknown);

	v = json_object_get(args, "command");
	if (!v)
		return bad_arg(ret, "argument 'command' is missing: give the shell command to run");
	if (!json_is_string(v))
		return bad_arg(ret, "argument 'command' must be a string, not %s",
			       json_is_null(v) ? "null" : "another JSON type");
	a->command = json_string_value(v);
	if (json_string_length(v) > MOAT_BASH_MAX_COMMAND)
		return bad_arg(ret, "argument 'command' is %zu bytes, over the limit of %u",
			       json_string_length(v), MOAT_BASH_MAX_COMMAND);
	if (strlen(a->command) != json_string_length(v))
		return bad_arg(ret, "argument 'command' contains a NUL character");
	if (!a->command[0])
		return bad_arg(ret, "argument 'command' is empty: give the shell command to run");

	v = json_object_get(args, "cwd");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			return bad_arg(ret,
				       "argument 'cwd' must be a string (a directory inside the "
				       "workspace)");
		a->cwd = json_string_value(v);
		if (strlen(a->cwd) != json_string_length(v))
			return bad_arg(ret, "argument 'cwd' contains a NUL character");
		if (!a->cwd[0])
			return bad_arg(ret, "argument 'cwd' is empty: give a directory inside the "
					    "workspace, or leave it out");
		if (json_string_length(v) >= PATH_MAX)
			return bad_arg(ret, "argument 'cwd' is longer than %d bytes", PATH_MAX - 1);
	}

	v = json_object_get(args, "timeout");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > MOAT_BASH_MAX_TIMEOUT_S)
			return bad_arg(
			    ret,
			    "argument 'timeout' must be a whole number of seconds from 1 "
			    "to %d",
			    MOAT_BASH_MAX_TIMEOUT_S);
		a->timeout_s = (long)json_integer_value(v);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the child                                                           */
/* ------------------------------------------------------------------ */

/* Everything the child needs, prepared by the caller or the fork server. */
struct bash_job {
	const struct moat_tool_env *env;
	const char *profile;
	const char *workspace; /* absolute */
	const char *cwd;       /* absolute, inside the workspace */
	long timeout_s;
	char **argv; /* NULL: made from command, in the child (the server's) */
	const char *command;
	pid_t parent;
	int out_w, err_w, res_w;
	bool exit_unwaited; /* the fork server's child: the caller waits for
			     * its result, not its exit */
};

static int move_high(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, 10);
}

/* how long a runner waits after its result before it exits (above) */
#define BASH_EXIT_PAUSE_NS (1000 * 1000)

static ssize_t write_all(int fd, const void *p, size_t n)
{
	const char *s = p;
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(fd, s + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	return (ssize_t)done;
}

/* The profile the configuration gives the shell tool: the first
 * sandbox.rules entry naming it by either of its names, else
 * sandbox.profile, else the default. */
static const char *shell_profile(const struct moat_config *cfg)
{
	for (size_t i = 0; cfg && i < cfg->nsandbox_rules; i++) {
		const struct moat_tool_rule *r = &cfg->sandbox_rules[i];

		if (r->tool && r->profile &&
		    (!strcmp(r->tool, "bash") || !strcmp(r->tool, "run_shell_command")))
			return r->profile;
	}
	return moat_config_profile_for_tool(cfg, "bash");
}

/* {"/bin/sh", "-c", COMMAND}, or for a command too long for one argument
 * {"/bin/sh", "-c", BASH_JOIN, "sh", PIECE...}. */
static int make_argv(const char *command, char ***ret)
{
	size_t len = strlen(command), npieces = (len + BASH_ARG_PIECE - 1) / BASH_ARG_PIECE;
	char **v;

	if (len < BASH_ARG_PIECE) {
		v = calloc(4, sizeof(*v));
		if (!v || !(v[2] = moat_strdup(command))) {
			free(v);
			return -ENOMEM;
		}
	} else {
		v = calloc(npieces + 5, sizeof(*v));
		if (!v)
			return -ENOMEM;
		v[2] = moat_strdup(BASH_JOIN);
		v[3] = moat_strdup("sh");
		for (size_t i = 0; i < npieces; i++) {
			size_t off = i * BASH_ARG_PIECE;

			v[4 + i] = moat_strndup(
			    command + off, len - off < BASH_ARG_PIECE ? len - off : BASH_ARG_PIECE);
			if (!v[4 + i])
				break;
		}
		if (!v[2] || !v[3] || !v[4 + npieces - 1]) {
			for (size_t i = 2; i < npieces + 4; i++)
				free(v[i]);
			free(v);
			return -ENOMEM;
		}
	}
	v[0] = (char *)"/bin/sh";
	v[1] = (char *)"-c";
	*ret = v;
	return 0;
}

static void free_argv(char **v)
{
	for (size_t i = 2; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* A fresh process for a call: the caller's signal dispositions (an ignored
 * SIGPIPE or SIGCHLD survives exec) and mask are not the command's; it
 * dies with its parent (the calling thread, or the fork server). */
static void bash_child_begin(pid_t parent)
{
	struct sigaction dfl;
	sigset_t none;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(125);
	prctl(PR_SET_NAME, "moat-bash-run", 0, 0, 0);
}

/* stdin /dev/null, stdout and stderr the pipes, the result pipe on 3, keep
 * (or -1) on 4, nothing else (the caller's descriptors, the fork server's
 * socket and the pipes of other calls are not the command's) */
static void bash_child_fds(int out_w, int err_w, int res_w, int keep)
{
	int o = move_high(out_w), e = move_high(err_w), rs = move_high(res_w),
	    k = keep >= 0 ? move_high(keep) : -1;
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (o < 0 || e < 0 || rs < 0 || nul < 0 || (keep >= 0 && k < 0) || dup2(nul, 0) < 0 ||
	    dup2(o, 1) < 0 || dup2(e, 2) < 0 || dup2(rs, 3) < 0 || (k >= 0 && dup2(k, 4) < 0))
		_exit(125);
	/* SECURITY: the result pipe is never the command's: a forged result
	 * could report success for a refused run */
	fcntl(3, F_SETFD, FD_CLOEXEC);
	if (k >= 0)
		fcntl(4, F_SETFD, FD_CLOEXEC);
	if (syscall(SYS_close_range, k >= 0 ? 5U : 4U, ~0U, 0U) < 0)
		for (int fd = k >= 0 ? 5 : 4; fd < 65536; fd++)
			close(fd);
}

/* The configuration's denied paths for the runner (borrowed: the
 * runner only reads them): the user's, and a project file's. */
struct job_denied {
	struct moat_strv user, project;
};

/* The runner's request for a job (in a child of the single-threaded
 * server or caller). -1: out of memory. */
static int job_request(const struct bash_job *j, char **argv, struct job_denied *denied,
		       struct moat_run_request *rq)
{
	const struct moat_config *cfg = j->env->cfg;

	memset(denied, 0, sizeof(*denied));
	if (cfg) {
		denied->user.v = cfg->denied_paths.v;
		denied->user.n = cfg->denied_paths.n;
	}
	/* SECURITY: a project file's denied paths are masked as well (it may
	 * only tighten; the policy already refuses tool calls naming them),
	 * and the user's exempt_paths do not lift them */
	if (j->env->project_cfg) {
		denied->project.v = j->env->project_cfg->denied_paths.v;
		denied->project.n = j->env->project_cfg->denied_paths.n;
	}
	memset(rq, 0, sizeof(*rq));
	rq->cfg = cfg;
	rq->profile = j->profile;
	rq->workspace = j->workspace;
	rq->cwd = j->cwd;
	rq->argv = argv;
	rq->env = j->env->env ? j->env->env : environ;
	rq->timeout_s = j->timeout_s;
	rq->timeout_at_most = true; /* a timeout of the profile caps the call's */
	rq->denied_extra = &denied->user;
	rq->denied_project = &denied->project;
	rq->audit_log = j->env->audit_log;
	rq->ask = NULL; /* fallback "ask" from a tool call: nobody to ask, a refusal */
	return 0;
}

/* The rest of a call's child, its descriptors in place: the runner, the
 * result on 3. warm: started ahead (moat_runner_warm_start), or NULL. */
__attribute__((noreturn)) static void bash_child_run(const struct bash_job *j,
						     struct moat_run_warm *warm)
{
	struct moat_run_request rq;
	struct moat_run_result res;
	struct moat_error err;
	struct job_denied denied;
	char **argv = j->argv;
	int null_fd;

	if (!argv && make_argv(j->command, &argv) < 0)
		_exit(125);
	if (job_request(j, argv, &denied, &rq) < 0)
		_exit(125);
	rq.warm = warm;
	rq.exit_after = true;
	rq.end_stdio = true;
	memset(&res, 0, sizeof(res));
	moat_error_clear(&err);
	if (moat_runner_run(&rq, &res, &err) < 0) {
		res.status = MOAT_RUN_EXIT_SETUP;
		res.ran = false;
		moat_strlcpy(res.error, err.msg[0] ? err.msg : "the sandbox runner failed",
			     sizeof(res.error));
	}
	/* every process of the sandbox is gone when the runner returns: the
	 * command's stdout and stderr end here (with ours closed the caller
	 * reads end of file), then the result, and the caller is done: our
	 * exit, with the teardown left to it (exit_after), is not on its
	 * clock (the server reaps us) */
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null_fd >= 0) {
		dup2(null_fd, 1);
		dup2(null_fd, 2);
		close(null_fd);
	}
	write_all(3, &res, sizeof(res));
	/* the caller reads it now; what is left here (our exit, the
	 * sandbox's mount namespace torn down with it: a few hundred
	 * microseconds of CPU) must not delay it. The caller's wake-up put it
	 * on our CPU (a pipe's wake-up is a sync one), where it would wait
	 * for all of that: we sleep a moment first, and the caller finishes
	 * its call meanwhile. (Not a lower priority for the exit instead: the
	 * teardown takes the kernel's mount lock, which every sandbox and the
	 * host need, and a task of idle priority may hold it long on a busy
	 * machine.) */
	if (j->exit_unwaited) {
		struct timespec pause = {0, BASH_EXIT_PAUSE_NS};

		while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
			;
	}
	_exit(0);
}

/* The runner's chores, each on a job of the profile in the workspace (its
 * directory, a command to come): */
enum chore {
	CHORE_SCAN,  /* a runner started ahead, while it waits: the masks'
		      * workspace scan (scan_only, moat_ns_scan_ahead), given
		      * up when the call comes (job_fd readable) */
	CHORE_SWEEP, /* the server, at its end: the stand-ins its calls kept
		      * (sweep_only, moat_ns_standins_sweep) */
	CHORE_ARM,   /* a runner started ahead: the sandbox of w made whole and
		      * left waiting before the exec (arm_only); the call takes
		      * it when its own plan and mounts match, else makes its
		      * own; job_fd readable: the call has come */
};

/* Quiet, and harmless when it fails: a call scans as usual, a later run
 * removes stand-ins, a call makes its own sandbox. */
static void runner_chore(const struct moat_tool_env *env, const char *profile, const char *ws,
			 enum chore what, struct moat_run_warm *w, int job_fd)
{
	static char *const argv[] = {"/bin/sh", "-c", ":", NULL};
	struct bash_job j;
	struct moat_run_request rq;
	struct moat_run_result res;
	struct moat_error err;
	struct job_denied denied;

	memset(&j, 0, sizeof(j));
	j.env = env;
	j.profile = profile;
	j.workspace = ws;
	j.cwd = ws;
	j.timeout_s = MOAT_BASH_MAX_TIMEOUT_S;
	if ((what == CHORE_ARM && !w) || job_request(&j, (char **)argv, &denied, &rq) < 0)
		return;
	rq.scan_only = what == CHORE_SCAN;
	rq.sweep_only = what == CHORE_SWEEP;
	if (what == CHORE_SCAN)
		rq.arm_busy_fd = job_fd;
	if (what == CHORE_ARM) {
		rq.warm = w;
		rq.arm_only = true;
		rq.arm_busy_fd = job_fd;
		rq.exit_after = true;
	}
	moat_error_clear(&err);
	(void)moat_runner_run(&rq, &res, &err);
}

__attribute__((noreturn)) static void bash_child(const struct bash_job *j)
{
	bash_child_begin(j->parent);
	bash_child_fds(j->out_w, j->err_w, j->res_w, -1);
	bash_child_run(j, NULL);
}

/* ------------------------------------------------------------------ */
/* processes                                                           */
/* ------------------------------------------------------------------ */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Through the pidfd (no reused pid can be hit); else to the pid of a
 * child of ours not reaped yet (so not reused). */
static void send_sig(int pidfd, pid_t pid, int sig)
{
	if ((pidfd < 0 || syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0) && pid > 0)
		kill(pid, sig);
}

/* Wait up to ms for the process of pidfd to exit; true once it has. */
static bool pidfd_wait(int pidfd, int ms)
{
	double until = now_ms() + ms;

	for (;;) {
		struct pollfd p = {pidfd, POLLIN, 0};
		double left = until - now_ms();
		int r = poll(&p, 1, left > 0 ? (int)left + 1 : 0);

		if (r > 0)
			return true;
		if ((r < 0 && errno != EINTR) || (r == 0 && left <= 0))
			return false;
	}
}

/* ------------------------------------------------------------------ */
/* the fork server                                                     */
/* ------------------------------------------------------------------ */

/* The protocol, over a SOCK_SEQPACKET socketpair (a message arrives whole
 * or not at all); a caller sends one request and reads its reply under
 * srv->lock.
 *
 *   request: struct srv_req and the strings (workspace, cwd, profile,
 *            command, each with its NUL) in messages of at most
 *            BASH_SRV_CHUNK bytes of strings; the first carries the header
 *            and, as SCM_RIGHTS, the write ends of stdout, stderr and the
 *            result pipe;
 *   reply:   struct srv_reply, with the child's pidfd as SCM_RIGHTS when
 *            err is 0;
 *   the result pipe: what the child wrote (a whole struct moat_run_result,
 *            or less when it died), then, once the server has reaped the
 *            child, struct srv_trailer with its wait status. */
#define BASH_SRV_REQ 0xb5a5e001u
#define BASH_SRV_REPLY 0xb5a5e002u
#define BASH_SRV_TRAILER 0xb5a5e003u

enum { SRV_WS, SRV_CWD, SRV_PROFILE, SRV_CMD, SRV_NSTR };

struct srv_req {
	uint32_t magic, seq;
	int64_t timeout_s;
	uint32_t len[SRV_NSTR]; /* with the NUL; 0: none (the profile only) */
};

struct srv_reply {
	uint32_t magic, seq;
	int32_t err; /* 0, or the errno of the fork */
	int32_t pid;
	int32_t warm; /* 1: a runner started ahead took the call: its pidfd comes
		       * with the read ends of its own stdout, stderr and result
		       * pipes, which replace the caller's */
};

struct srv_trailer {
	uint32_t magic;
	int32_t status; /* waitpid's */
};

struct moat_bash_server {
	pthread_mutex_t lock; /* one request and its reply at a time */
	int sock;	      /* the caller's end */
	pid_t pid;
	int pidfd; /* of the server, -1 none */
	uint32_t seq;
	bool dead; /* it failed: calls fork the caller */
	/* what the server copied at its fork: a call on another env forks
	 * the caller */
	const struct moat_config *cfg;
	char *const *env;
};

/* sendmsg of iov with nfds descriptors as SCM_RIGHTS; never SIGPIPE. */
static ssize_t send_fds(int sock, struct iovec *iov, size_t niov, const int *fds, size_t nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} u;
	struct msghdr mh;
	ssize_t n;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = niov;
	if (nfds) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n;
}

/* recvmsg into iov: the bytes, 0 at the end, -1 with errno. The
 * descriptors that came with it (close-on-exec) go to fds, at most maxfds
 * (any others are closed); *ret_flags gets MSG_TRUNC and MSG_CTRUNC. */
static ssize_t recv_fds(int sock, struct iovec *iov, size_t niov, int *fds, size_t maxfds,
			size_t *ret_nfds, int *ret_flags)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} u;
	struct msghdr mh;
	ssize_t n;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = niov;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	*ret_nfds = 0;
	*ret_flags = 0;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (*ret_nfds < maxfds)
				fds[(*ret_nfds)++] = fd;
			else
				close(fd);
		}
	}
	*ret_flags = mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC);
	return n;
}

/* ---- the server process ---- */

struct srv_child {
	pid_t pid;
	int res_w; /* kept for the trailer */
};

/* A runner forked ahead of the next call (moat_runner_warm_start: the
 * kernel probed, the sandbox's child cloned and making its namespaces), its
 * own pipes already on its stdout, stderr and result descriptors; the job
 * reaches it through job_w. Replaced after WARM_MAX_AGE_MS, so that the
 * mount table its child copied is a recent one. */
#define WARM_MAX_AGE_MS 30000.0
/* A call this soon after the last one's end is part of a burst: the
 * runner for the next is started at once, not when this one has ended. */
#define BASH_BURST_MS 5.0
struct srv_warm {
	pid_t pid; /* 0: none */
	int job_w;
	int rd[3]; /* read ends: stdout, stderr, result */
	int res_w; /* kept for the trailer */
	double since;
};

struct srv_state {
	int sock;
	const struct moat_tool_env *env;
	struct srv_child *kids;
	size_t nkids, akids;
	struct srv_warm warm;
	bool warm_ok; /* the shell's profile denies the network or allows the host's:
		       * a start ahead fits it */
	bool warm_net_allowed; /* ... allows it */
	char *next_profile, *next_ws; /* the last call's: the next one's, most likely */
	double last_done; /* when the last call ended (ms) */
	bool burst;	  /* this call came within BASH_BURST_MS of the last one's end */
	/* the workspace's shared lock, held while the server lives: the empty
	 * stand-ins of its calls stay from one call to the next, and go at the
	 * end (moat_ns_standins_hold) */
	int hold;
	char *hold_ws, *hold_profile;
};


static void warm_close(struct srv_warm *w)
{
	if (w->job_w >= 0)
		close(w->job_w);
	for (int i = 0; i < 3; i++)
		if (w->rd[i] >= 0)
			close(w->rd[i]);
	if (w->res_w >= 0)
		close(w->res_w);
	memset(w, 0, sizeof(*w));
	w->job_w = w->res_w = w->rd[0] = w->rd[1] = w->rd[2] = -1;
}

/* Forget the runner started ahead; kill means it is alive and unwanted. */
static void warm_drop(struct srv_state *st, bool kill_it)
{
	if (kill_it && st->warm.pid > 0) {
		kill(st->warm.pid, SIGKILL);
		while (waitpid(st->warm.pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	warm_close(&st->warm);
}

/* The server's end: the runner started ahead goes, the stand-ins its
 * calls kept are swept (unless calls still run: the last of them removes
 * them). */
__attribute__((noreturn)) static void srv_exit(struct srv_state *st, int code)
{
	warm_drop(st, true);
	/* calls still running die with us anyway (their runners' parent
	 * death signal): first, so that their stand-ins go too */
	for (size_t i = 0; i < st->nkids; i++)
		kill(st->kids[i].pid, SIGKILL);
	for (size_t i = 0; i < st->nkids; i++)
		while (waitpid(st->kids[i].pid, NULL, 0) < 0 && errno == EINTR)
			;
	if (st->hold >= 0) {
		close(st->hold);
		st->hold = -1;
		runner_chore(st->env, st->hold_profile, st->hold_ws, CHORE_SWEEP, NULL, -1);
	}
	_exit(code);
}

/* A request's header (magic, timeout, string lengths) within bounds; the
 * total length of its strings into *total. */
static bool req_header_ok(const struct srv_req *h, size_t *total)
{
	*total = 0;
	if (h->magic != BASH_SRV_REQ || h->timeout_s < 1 || h->timeout_s > MOAT_BASH_MAX_TIMEOUT_S)
		return false;
	for (int i = 0; i < SRV_NSTR; i++) {
		uint32_t max = i == SRV_CMD ? MOAT_BASH_MAX_COMMAND + 1 : BASH_SRV_MAX_STRING;

		if (h->len[i] > max || (i != SRV_PROFILE && h->len[i] < 2))
			return false;
		*total += h->len[i];
	}
	return true;
}

/* The request's strings in data, each ending at its NUL and holding no
 * other; a job's strings from them. */
static bool req_job(const struct srv_req *h, const char *data, struct bash_job *job)
{
	const char *str[SRV_NSTR] = {NULL};
	size_t off = 0;

	for (int i = 0; i < SRV_NSTR; i++) {
		if (!h->len[i])
			continue;
		str[i] = data + off;
		if (strnlen(str[i], h->len[i]) != h->len[i] - 1)
			return false;
		off += h->len[i];
	}
	job->profile = str[SRV_PROFILE];
	job->workspace = str[SRV_WS];
	job->cwd = str[SRV_CWD];
	job->command = str[SRV_CMD];
	job->timeout_s = (long)h->timeout_s;
	return true;
}

/* The runner started ahead: its descriptors are in place (job on 4), it
 * starts the sandbox's child, then waits for its job, whose strings are
 * checked as the server checks a request's. */
__attribute__((noreturn)) static void warm_main(const struct srv_state *st, pid_t parent,
						const int wr[3], int job_r)
{
	const struct moat_tool_env *env = st->env;
	struct moat_run_warm *w;
	struct srv_req h;
	struct bash_job job;
	size_t total = 0, got = 0;
	char *data;

	bash_child_begin(parent);
	prctl(PR_SET_NAME, "moat-bash-warm", 0, 0, 0);
	bash_child_fds(wr[0], wr[1], wr[2], job_r);
	w = moat_runner_warm_start(st->warm_net_allowed);
	if (st->next_ws) {
		struct pollfd pf = {4, POLLIN, 0};

		runner_chore(env, st->next_profile, st->next_ws, CHORE_SCAN, NULL, 4);
		/* armed only once no call came for a while: calls back to back
		 * (a script) would wait for the arming, or share a core with
		 * it, and gain nothing from it */
		if (poll(&pf, 1, (int)BASH_BURST_MS) == 0)
			runner_chore(env, st->next_profile, st->next_ws, CHORE_ARM, w, 4);
	}
	while (got < sizeof(h)) {
		ssize_t n = read(4, (char *)&h + got, sizeof(h) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0); /* never used */
		got += (size_t)n;
	}
	if (!req_header_ok(&h, &total))
		_exit(2);
	data = malloc(total ? total : 1);
	if (!data)
		_exit(2);
	for (got = 0; got < total;) {
		ssize_t n = read(4, data + got, total - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(2);
		got += (size_t)n;
	}
	close(4);
	memset(&job, 0, sizeof(job));
	if (!req_job(&h, data, &job))
		_exit(2);
	job.env = env;
	job.parent = parent;
	job.exit_unwaited = true;
	prctl(PR_SET_NAME, "moat-bash-run", 0, 0, 0);
	bash_child_run(&job, w);
}

/* Fork a runner ahead of the next call, unless there is one. */
static void warm_start(struct srv_state *st)
{
	int out[2] = {-1, -1}, err[2] = {-1, -1}, res[2] = {-1, -1}, job[2] = {-1, -1};
	pid_t pid;

	if (st->warm.pid > 0 || !st->warm_ok)
		return;
	warm_close(&st->warm);
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0 ||
	    pipe2(job, O_CLOEXEC) < 0)
		goto fail;
	pid = fork();
	if (pid == 0) {
		int wr[3] = {out[1], err[1], res[1]};

		warm_main(st, getppid(), wr, job[0]);
	}
	if (pid < 0)
		goto fail;
	close(out[1]);
	close(err[1]);
	close(job[0]);
	/* a job that does not fit the pipe at once (or a runner that does not
	 * read) never blocks the server: that call forks instead */
	fcntl(job[1], F_SETFL, fcntl(job[1], F_GETFL) | O_NONBLOCK);
	st->warm.pid = pid;
	st->warm.job_w = job[1];
	st->warm.rd[0] = out[0];
	st->warm.rd[1] = err[0];
	st->warm.rd[2] = res[0];
	st->warm.res_w = res[1];
	st->warm.since = now_ms();
	return;
fail:
	for (int i = 0; i < 2; i++) {
		int *v[4] = {out, err, res, job};

		for (int k = 0; k < 4; k++)
			if (v[k][i] >= 0)
				close(v[k][i]);
	}
}

/* The job to the runner: header and strings in one write where the pipe
 * takes them whole (the runner then wakes once), the rest after. */
static int job_write(int fd, const struct srv_req *h, const char *data, size_t total)
{
	struct iovec iov[2] = {{(void *)h, sizeof(*h)}, {(void *)data, total}};
	size_t hn = sizeof(*h), dn = 0;
	ssize_t n;

	do
		n = writev(fd, iov, 2);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof(*h)) {
		hn = (size_t)n;
	} else {
		dn = (size_t)n - sizeof(*h);
	}
	if (hn < sizeof(*h) && write_all(fd, (const char *)h + hn, sizeof(*h) - hn) < 0)
		return -1;
	return dn < total && write_all(fd, data + dn, total - dn) < 0 ? -1 : 0;
}

/* Hand the job to the runner started ahead: its pidfd into *pidfd. False:
 * there is none, or it could not take the job (then it is gone). */
static bool warm_take(struct srv_state *st, const struct srv_req *h, const char *data,
		      size_t total, int *pidfd)
{
	if (st->warm.pid <= 0)
		return false;
	if (now_ms() - st->warm.since > WARM_MAX_AGE_MS) {
		warm_drop(st, true);
		return false;
	}
	*pidfd = (int)syscall(SYS_pidfd_open, st->warm.pid, 0);
	if (*pidfd < 0 || job_write(st->warm.job_w, h, data, total) < 0) {
		if (*pidfd >= 0)
			close(*pidfd);
		*pidfd = -1;
		warm_drop(st, true);
		return false;
	}
	close(st->warm.job_w);
	st->warm.job_w = -1;
	return true;
}

/* Reap every child that has exited, and end its result pipe with its wait
 * status. With the last call done, a runner is started ahead of the next
 * one: not earlier, where its start (the network namespace is the costliest
 * step) would take a core from the calls still running. */
static void srv_reap(struct srv_state *st)
{
	bool call_done = false;

	for (;;) {
		int status;
		pid_t w = waitpid(-1, &status, WNOHANG);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		if (w == st->warm.pid) {
			warm_drop(st, false); /* it died unused */
			continue;
		}
		for (size_t i = 0; i < st->nkids; i++) {
			struct srv_trailer t = {BASH_SRV_TRAILER, status};
			int fd = st->kids[i].res_w;
			ssize_t ignored;

			if (st->kids[i].pid != w)
				continue;
			/* never blocks: only a broken child fills the pipe */
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
			ignored = write(fd, &t, sizeof(t));
			(void)ignored;
			close(fd);
			st->kids[i] = st->kids[--st->nkids];
			call_done = true;
			break;
		}
	}
	if (call_done)
		st->last_done = now_ms();
	if (call_done && st->nkids == 0)
		warm_start(st);
}

/* One request: read it, fork its child, reply. The caller is this
 * program's own code: a malformed request is a bug, and the server stops
 * (calls then fork the caller). Returns only to serve the next one. */
static void srv_request(struct srv_state *st)
{
	struct srv_req h;
	char first[BASH_SRV_CHUNK];
	struct iovec iov[2] = {{&h, sizeof(h)}, {first, sizeof(first)}};
	struct srv_reply rep;
	struct bash_job job;
	int fds[3] = {-1, -1, -1}, pidfd = -1, flags, send[4] = {-1, -1, -1, -1};
	size_t nfds, total = 0, got, nsend = 0;
	char *data;
	ssize_t n;

	n = recv_fds(st->sock, iov, 2, fds, 3, &nfds, &flags);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0)
		srv_exit(st, 0); /* the caller closed its end, or is gone */
	if ((size_t)n < sizeof(h) || nfds != 3 || flags || !req_header_ok(&h, &total))
		_exit(2);
	got = (size_t)n - sizeof(h);
	data = malloc(total);
	if (got > total || !data)
		_exit(2);
	memcpy(data, first, got);
	while (got < total) {
		struct iovec ci = {data + got, total - got};

		n = recv_fds(st->sock, &ci, 1, NULL, 0, &nfds, &flags);
		if (n <= 0 || flags)
			_exit(n == 0 ? 0 : 2);
		got += (size_t)n;
	}
	memset(&job, 0, sizeof(job));
	if (!req_job(&h, data, &job))
		_exit(2);
	job.env = st->env;
	job.parent = getpid();
	job.exit_unwaited = true;
	st->burst = st->last_done > 0 && now_ms() - st->last_done < BASH_BURST_MS;
	/* the first call's workspace is held for the server's life */
	if (st->hold < 0 && !st->hold_ws && (st->hold_ws = moat_strdup(job.workspace))) {
		st->hold_profile = job.profile ? moat_strdup(job.profile) : NULL;
		if (!job.profile || st->hold_profile)
			st->hold = moat_ns_standins_hold(job.workspace);
	}
	/* (out of memory: no scan ahead) */
	free(st->next_profile);
	free(st->next_ws);
	st->next_profile = job.profile ? moat_strdup(job.profile) : NULL;
	st->next_ws = moat_strdup(job.workspace);
	if (job.profile && !st->next_profile) {
		free(st->next_ws);
		st->next_ws = NULL;
	}
	job.out_w = fds[0];
	job.err_w = fds[1];
	job.res_w = fds[2];
	memset(&rep, 0, sizeof(rep));
	rep.magic = BASH_SRV_REPLY;
	rep.seq = h.seq;
	if (st->nkids == st->akids) {
		size_t a = st->akids ? st->akids * 2 : 16;
		struct srv_child *k = realloc(st->kids, a * sizeof(*k));

		if (k) {
			st->kids = k;
			st->akids = a;
		}
	}
	if (st->nkids == st->akids) {
		rep.err = ENOMEM;
	} else if (warm_take(st, &h, data, total, &pidfd)) {
		/* its pidfd and the read ends of its own pipes go back; the
		 * caller's pipes are not used */
		rep.pid = st->warm.pid;
		rep.warm = 1;
		st->kids[st->nkids].pid = st->warm.pid;
		st->kids[st->nkids++].res_w = st->warm.res_w;
		st->warm.res_w = -1;
		st->warm.pid = 0;
		send[0] = pidfd;
		for (int i = 0; i < 3; i++)
			send[1 + i] = st->warm.rd[i];
		nsend = 4;
	} else {
		/* single-threaded: the child may allocate, read the passwd
		 * database, anything */
		pid_t pid = fork();

		if (pid == 0)
			bash_child(&job);
		if (pid < 0) {
			rep.err = errno;
		} else {
			pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
			if (pidfd < 0) {
				/* nobody could cancel it: it does not run */
				rep.err = errno;
				kill(pid, SIGKILL);
				while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
					;
			} else {
				rep.pid = pid;
				st->kids[st->nkids].pid = pid;
				st->kids[st->nkids++].res_w = fds[2];
				fds[2] = -1;
				send[0] = pidfd;
				nsend = 1;
			}
		}
	}
	free(data);
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	iov[0].iov_base = &rep;
	iov[0].iov_len = sizeof(rep);
	if (send_fds(st->sock, iov, 1, send, nsend) != (ssize_t)sizeof(rep))
		_exit(0); /* the caller is gone: the children die with us */
	if (pidfd >= 0)
		close(pidfd);
	if (rep.warm)
		warm_close(&st->warm); /* its read ends went with the reply */
	/* calls back to back (a script, not an agent that thinks between
	 * them): the next one's runner now, beside this call, or it would
	 * not be ready in time */
	if (st->nkids == 0 || st->burst)
		warm_start(st);
}

__attribute__((noreturn)) static void server_main(int sock, const struct moat_tool_env *cenv,
						  pid_t parent)
{
	static const int ignored[] = {SIGPIPE, SIGINT, SIGQUIT, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU};
	struct moat_tool_env env = *cenv;
	struct srv_state st;
	struct sigaction sa;
	sigset_t chld;
	int hs, nul, sfd, mi;

	/* no handler of the caller's runs here; the terminal's signals are
	 * the caller's (the children reset all of this) */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(ignored); i++)
		sigaction(ignored[i], &sa, NULL);
	/* it dies with the thread that started it */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(0);
	prctl(PR_SET_NAME, "moat-bash-srv", 0, 0, 0);

	/* SECURITY: none of the caller's descriptors (its audit log, the MCP
	 * channel, files of other tools) stays open here, where the children
	 * could inherit them: stdin and stdout /dev/null, stderr kept (for a
	 * sanitizer's report), the socket on 3, nothing else */
	hs = fcntl(sock, F_DUPFD_CLOEXEC, 10);
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (hs < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup3(hs, 3, O_CLOEXEC) < 0)
		_exit(1);
	if (syscall(SYS_close_range, 4U, ~0U, 0U) < 0)
		for (int fd = 4; fd < 65536; fd++)
			close(fd);

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_SETMASK, &chld, NULL);
	sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0)
		_exit(1);

	memset(&st, 0, sizeof(st));
	st.sock = 3;
	env.bash_server = NULL;
	st.env = &env;
	st.warm.job_w = st.warm.res_w = st.warm.rd[0] = st.warm.rd[1] = st.warm.rd[2] = -1;
	st.hold = -1;
	/* only the child of a plan with the network denied is started ahead
	 * (another plan would throw it away on every call) */
	{
		struct moat_profile prof;
		struct moat_error perr;

		moat_profile_init(&prof, "");
		st.warm_ok = moat_config_sandbox_profile(env.cfg, shell_profile(env.cfg), &prof,
							 &perr) == 0 &&
			     (prof.net == MOAT_NET_DENY || prof.net == MOAT_NET_ALLOW);
		st.warm_net_allowed = prof.net == MOAT_NET_ALLOW;
		moat_profile_release(&prof);
	}
	/* the host's mount table changing (a volume unmounted, a new mount)
	 * renews it: its child's copy of the table must not be older than the
	 * call's plan */
	mi = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	warm_start(&st);
	for (;;) {
		struct pollfd pf[3] = {{3, POLLIN, 0}, {sfd, POLLIN, 0}, {mi, POLLPRI, 0}};
		int wait_ms = -1, pr;

		/* the runner started ahead is renewed while idle, so that one is
		 * always ready and its child's copy of the mount table recent */
		if (st.warm.pid > 0) {
			double left = st.warm.since + WARM_MAX_AGE_MS - now_ms();

			wait_ms = left > 0 ? (int)left + 1 : 0;
		}
		pr = poll(pf, mi >= 0 ? 3 : 2, wait_ms);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (pr == 0 || (mi >= 0 && (pf[2].revents & (POLLPRI | POLLERR)))) {
			if (st.warm.pid > 0) {
				warm_drop(&st, true);
				warm_start(&st);
			}
			if (pr == 0 || (pf[2].revents && pr == 1))
				continue;
		}
		if (pf[1].revents) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) > 0)
				;
			srv_reap(&st);
		}
		if (pf[0].revents)
			srv_request(&st);
	}
}

/* ---- the caller's side ---- */

int moat_bash_server_start(struct moat_tool_env *env, struct moat_error *err)
{
	struct moat_bash_server *srv;
	struct timeval tv = {BASH_SRV_IO_MS / 1000, (BASH_SRV_IO_MS % 1000) * 1000};
	sigset_t all, old;
	pid_t parent = getpid(), pid;
	int sv[2], e;

	if (!env)
		return -EINVAL;
	if (env->bash_server)
		return 0;
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		moat_error_set(err, "cannot start the bash fork server: out of memory");
		return -ENOMEM;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		e = errno;
		free(srv);
		moat_error_set(err, "cannot start the bash fork server: socketpair: %s",
			       strerror(e));
		return -e;
	}
	/* a server that stops answering fails the call, not hangs it */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	pthread_mutex_init(&srv->lock, NULL);
	srv->sock = sv[0];
	srv->pidfd = -1;
	srv->cfg = env->cfg;
	srv->env = env->env;

	/* no handler of the caller's may run in the child before it has
	 * reset them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		server_main(sv[1], env, parent);
	}
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		pthread_mutex_destroy(&srv->lock);
		free(srv);
		moat_error_set(err, "cannot start the bash fork server: fork: %s", strerror(e));
		return -e;
	}
	srv->pid = pid;
	srv->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	env->bash_server = srv;
	return 0;
}

void moat_bash_server_stop(struct moat_tool_env *env)
{
	struct moat_bash_server *srv;
	bool gone;

	if (!env || !env->bash_server)
		return;
	srv = env->bash_server;
	env->bash_server = NULL;
	close(srv->sock); /* the server reads the end and exits */
	if (srv->pidfd >= 0) {
		gone = pidfd_wait(srv->pidfd, BASH_SRV_STOP_MS);
	} else {
		double until = now_ms() + BASH_SRV_STOP_MS;

		while (!(gone = waitpid(srv->pid, NULL, WNOHANG) != 0) && now_ms() < until)
			usleep(5000);
		if (gone) /* reaped here (or by a caller that reaps every child) */
			srv->pid = 0;
	}
	if (!gone)
		send_sig(srv->pidfd, srv->pid, SIGKILL);
	/* ECHILD: a caller that reaps every child took it */
	while (srv->pid > 0 && waitpid(srv->pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (srv->pidfd >= 0)
		close(srv->pidfd);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}

/* The server failed with a request of ours in its hands: stop it, and with
 * it (they die with it) any child it forked for us. */
static void server_kill(struct moat_bash_server *srv)
{
	srv->dead = true;
	send_sig(srv->pidfd, srv->pid, SIGKILL);
}

/* Start the job's child through the server. 0: it runs, *ret_pidfd is
 * its pidfd; 1: nothing reached the server (it is gone, or the job does
 * not fit): fork the caller instead; negative errno: the server failed,
 * nothing of the call runs, ret->error says why. */
static int server_spawn(struct moat_bash_server *srv, const struct bash_job *j, const char *command,
			int *ret_pidfd, int rd[3], struct moat_tool_result *ret)
{
	const char *s[SRV_NSTR] = {j->workspace, j->cwd, j->profile, command};
	int fds[3] = {j->out_w, j->err_w, j->res_w}, pidfd = -1, flags, r, got[4] = {-1, -1, -1, -1};
	struct srv_req h;
	struct srv_reply rep;
	struct iovec iov[2];
	size_t total = 0, off, first, nfds;
	char *data;
	ssize_t n;

	memset(&h, 0, sizeof(h));
	h.magic = BASH_SRV_REQ;
	h.timeout_s = j->timeout_s;
	for (int i = 0; i < SRV_NSTR; i++) {
		size_t l = s[i] ? strlen(s[i]) + 1 : 0;

		if (l > (i == SRV_CMD ? MOAT_BASH_MAX_COMMAND + 1 : BASH_SRV_MAX_STRING))
			return 1;
		h.len[i] = (uint32_t)l;
		total += l;
	}
	data = malloc(total);
	if (!data)
		return 1;
	off = 0;
	for (int i = 0; i < SRV_NSTR; i++) {
		memcpy(data + off, s[i] ? s[i] : "", h.len[i]);
		off += h.len[i];
	}

	pthread_mutex_lock(&srv->lock);
	if (srv->dead) {
		r = 1;
		goto out;
	}
	h.seq = ++srv->seq;
	first = total < BASH_SRV_CHUNK ? total : BASH_SRV_CHUNK;
	iov[0].iov_base = &h;
	iov[0].iov_len = sizeof(h);
	iov[1].iov_base = data;
	iov[1].iov_len = first;
	/* the server forks only once it has the whole request: until then a
	 * failure started nothing */
	if (send_fds(srv->sock, iov, 2, fds, 3) < 0) {
		srv->dead = true;
		r = 1;
		goto out;
	}
	for (off = first; off < total; off += iov[0].iov_len) {
		iov[0].iov_base = data + off;
		iov[0].iov_len = total - off < BASH_SRV_CHUNK ? total - off : BASH_SRV_CHUNK;
		if (send_fds(srv->sock, iov, 1, NULL, 0) < 0) {
			server_kill(srv); /* it waits for the rest */
			r = 1;
			goto out;
		}
	}
	iov[0].iov_base = &rep;
	iov[0].iov_len = sizeof(rep);
	n = recv_fds(srv->sock, iov, 1, got, 4, &nfds, &flags);
	pidfd = got[0];
	if (n < 0 && errno == ECONNRESET) {
		/* it died with our request unread: nothing started */
		srv->dead = true;
		r = 1;
		goto out;
	}
	if (n != (ssize_t)sizeof(rep) || flags || rep.magic != BASH_SRV_REPLY || rep.seq != h.seq ||
	    (rep.err == 0) != (nfds == (rep.warm ? 4u : 1u))) {
		int e = n < 0 ? errno : 0;

		/* SECURITY: a child it may have forked for us must not run
		 * unwatched: it dies with the server */
		server_kill(srv);
		for (size_t i = 0; i < nfds && i < 4; i++)
			close(got[i]);
		snprintf(ret->error, sizeof(ret->error),
			 "the bash fork server failed (%s) and was stopped, with anything it "
			 "started for this call; later calls start their commands themselves",
			 e == EAGAIN ? "no reply in time"
			 : e	     ? strerror(e)
			 : n == 0    ? "it exited"
				     : "a malformed reply");
		r = -EIO;
		goto out;
	}
	if (rep.err) {
		/* (the server's trouble, not the caller's: never -ENOMEM) */
		snprintf(ret->error, sizeof(ret->error), "cannot start the command: fork: %s",
			 strerror(rep.err));
		r = -EIO;
		goto out;
	}
	*ret_pidfd = pidfd;
	if (rep.warm) {
		/* the runner started ahead writes to pipes of its own: ours go */
		for (int i = 0; i < 3; i++) {
			close(rd[i]);
			rd[i] = got[i + 1];
		}
	}
	r = 0;
out:
	pthread_mutex_unlock(&srv->lock);
	free(data);
	return r;
}

/* ------------------------------------------------------------------ */
/* the parent                                                          */
/* ------------------------------------------------------------------ */

static const char *sig_name(int sig)
{
	static const char *const names[] = {
	    [SIGHUP] = "SIGHUP",       [SIGINT] = "SIGINT",   [SIGQUIT] = "SIGQUIT",
	    [SIGILL] = "SIGILL",       [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",
	    [SIGBUS] = "SIGBUS",       [SIGFPE] = "SIGFPE",   [SIGKILL] = "SIGKILL",
	    [SIGUSR1] = "SIGUSR1",     [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
	    [SIGPIPE] = "SIGPIPE",     [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM",
	    [SIGCHLD] = "SIGCHLD",     [SIGCONT] = "SIGCONT", [SIGSTOP] = "SIGSTOP",
	    [SIGTSTP] = "SIGTSTP",     [SIGTTIN] = "SIGTTIN", [SIGTTOU] = "SIGTTOU",
	    [SIGURG] = "SIGURG",       [SIGXCPU] = "SIGXCPU", [SIGXFSZ] = "SIGXFSZ",
	    [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF", [SIGWINCH] = "SIGWINCH",
	    [SIGIO] = "SIGIO",	       [SIGPWR] = "SIGPWR",   [SIGSYS] = "SIGSYS",
	};

	if (sig > 0 && (size_t)sig < MOAT_ARRAY_SIZE(names) && names[sig])
		return names[sig];
	return "a signal";
}

/* What the parent saw of one call. */
struct bash_run {
	struct capture out, err;
	/* the result pipe: the runner's result, and through the server its
	 * trailer */
	unsigned char rbuf[sizeof(struct moat_run_result) + sizeof(struct srv_trailer)];
	size_t rgot;
	bool rover; /* more than that: a broken child */
	struct moat_run_result res;
	bool have; /* res is the runner's whole result */
	bool via_server;
	bool reaped, cancelled, backstop;
	bool status_known;
	int child_status;
	double start, duration;
};

static bool readable_now(int fd)
{
	struct pollfd p = {fd, POLLIN, 0};

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

/* Read what is there (non-blocking), a bounded amount so that a command
 * writing without end cannot keep us from the cancel descriptor; false at
 * end of file. */
static bool drain(int fd, struct capture *c, char *chunk)
{
	for (int round = 0; round < BASH_DRAIN_ROUNDS; round++) {
		ssize_t n = read(fd, chunk, BASH_READ_CHUNK);

		if (n > 0) {
			capture_push(c, chunk, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
	}
	return true;
}

static bool drain_result(int fd, struct bash_run *br)
{
	for (;;) {
		size_t room = sizeof(br->rbuf) - br->rgot;
		char sink[64];
		ssize_t n;

		n = room ? read(fd, br->rbuf + br->rgot, room) : read(fd, sink, sizeof(sink));
		if (n > 0) {
			if (room)
				br->rgot += (size_t)n;
			else
				br->rover = true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
	}
}

/* What the result pipe held: the runner's result when it is whole; through
 * the server, the child's wait status at the end. */
static void settle_result(struct bash_run *br)
{
	size_t got = br->rgot;

	if (br->rover)
		return;
	if (br->via_server && got >= sizeof(struct srv_trailer)) {
		struct srv_trailer t;

		memcpy(&t, br->rbuf + got - sizeof(t), sizeof(t));
		if (t.magic == BASH_SRV_TRAILER) {
			br->child_status = t.status;
			br->status_known = true;
			got -= sizeof(t);
		}
	}
	if (got == sizeof(br->res)) {
		memcpy(&br->res, br->rbuf, sizeof(br->res));
		br->have = true;
	}
}

/* Wait for the child and the pipes, with progress, cancel, and the bounds.
 * The child is ours (pid) or the fork server's (pid 0): then its pidfd
 * tells its exit, and the server its status. */
static void supervise(const struct moat_tool_call *call, long timeout_s, pid_t pid, int pidfd,
		      int out_r, int err_r, int res_r, struct bash_run *br)
{
	int cancel_fd = call && call->cancel_fd >= 0 ? call->cancel_fd : -1;
	double next_progress = br->start + BASH_PROGRESS_MS, kill_at = 0, drain_until = 0;
	double backstop = br->start + (double)timeout_s * 1000.0 + BASH_BACKSTOP_SLACK_MS;
	bool out_open = true, err_open = true, res_open = true;
	char chunk[BASH_READ_CHUNK];

	while (!br->reaped || out_open || err_open || res_open) {
		struct pollfd pf[5];
		int idx[5], np = 0, timeout, pr;
		double t = now_ms(), until = next_progress;

		/* through the server, a whole result makes the trailer (the
		 * status) needless, and the runner's exit too: it writes its
		 * result when every process of the sandbox is gone, then only
		 * exits (the server reaps it) */
		if (br->via_server && !br->rover && br->rgot == sizeof(br->res)) {
			res_open = false;
			br->reaped = true;
		}
		if (br->reaped && !out_open && !err_open && !res_open)
			break;

		if (br->reaped && !drain_until)
			drain_until = t + BASH_DRAIN_MS;
		if (drain_until && t >= drain_until)
			break; /* something escaped the kill holds a pipe: stop reading */
		if (!br->reaped && kill_at && t >= kill_at) {
			send_sig(pidfd, pid, SIGKILL);
			kill_at = 0;
		}
		if (!br->reaped && !kill_at && !br->cancelled && !br->backstop && t >= backstop) {
			/* the runner should have stopped at the timeout */
			br->backstop = true;
			send_sig(pidfd, pid, SIGTERM);
			kill_at = t + BASH_KILL_AFTER_MS;
		}
		if (kill_at && kill_at < until)
			until = kill_at;
		if (drain_until && drain_until < until)
			until = drain_until;
		if (!br->backstop && !br->cancelled && backstop < until)
			until = backstop;
		timeout = until > t ? (int)(until - t) + 1 : 0;

#define WATCH(f, i)                                                                                \
	do {                                                                                       \
		pf[np].fd = (f);                                                                   \
		pf[np].events = POLLIN;                                                            \
		pf[np].revents = 0;                                                                \
		idx[np++] = (i);                                                                   \
	} while (0)
		if (out_open)
			WATCH(out_r, 0);
		if (err_open)
			WATCH(err_r, 1);
		if (res_open)
			WATCH(res_r, 2);
		if (!br->reaped)
			WATCH(pidfd, 3);
		if (cancel_fd >= 0 && !br->cancelled && !br->reaped)
			WATCH(cancel_fd, 4);
#undef WATCH
		pr = poll(pf, (nfds_t)np, timeout);
		if (pr < 0 && errno != EINTR)
			break;
		for (int i = 0; pr > 0 && i < np; i++) {
			if (!pf[i].revents)
				continue;
			switch (idx[i]) {
			case 0:
				out_open = drain(out_r, &br->out, chunk);
				break;
			case 1:
				err_open = drain(err_r, &br->err, chunk);
				break;
			case 2:
				res_open = drain_result(res_r, br);
				break;
			case 3: {
				pid_t w;

				if (br->via_server) {
					/* it exited; the server reaps it */
					br->reaped = true;
					break;
				}
				w = waitpid(pid, &br->child_status, WNOHANG);
				if (w == pid) {
					br->reaped = br->status_known = true;
				} else if (w < 0 && errno == ECHILD) {
					/* a caller that reaps every child took it */
					br->reaped = true;
				}
				break;
			}
			case 4:
				if (pf[i].revents & POLLNVAL) {
					cancel_fd = -1;
					break;
				}
				br->cancelled = true;
				send_sig(pidfd, pid, SIGTERM);
				kill_at = now_ms() + BASH_KILL_AFTER_MS;
				break;
			}
		}
		t = now_ms();
		if (t >= next_progress) {
			if (call && call->progress && !br->reaped)
				call->progress(call->progress_ud, t - br->start,
					       br->out.total + br->err.total);
			while (next_progress <= t)
				next_progress += BASH_PROGRESS_MS;
		}
	}
	if (!br->reaped) {
		/* only after a poll failure: never leave the child behind */
		send_sig(pidfd, pid, SIGKILL);
		if (br->via_server) {
			pidfd_wait(pidfd, BASH_KILL_AFTER_MS);
		} else {
			pid_t w;

			while ((w = waitpid(pid, &br->child_status, 0)) < 0 && errno == EINTR)
				;
			br->status_known = w == pid;
		}
		br->reaped = true;
	}
	br->duration = now_ms() - br->start;
}

/* ------------------------------------------------------------------ */
/* the result                                                          */
/* ------------------------------------------------------------------ */

/* json_object_set_new, which consumes v (also on failure); a NULL v fails */
static int put(json_t *o, const char *k, json_t *v)
{
	return json_object_set_new(o, k, v) ? -1 : 0;
}

static int build_result(const struct bash_run *br, long timeout_s, struct moat_tool_result *ret)
{
	const struct moat_run_result *res = &br->res;
	bool have = br->have;
	struct moat_buf out = MOAT_BUF_INIT, so = MOAT_BUF_INIT, se = MOAT_BUF_INIT;
	json_t *d = NULL, *sb = NULL;
	bool timed_out = have && res->timed_out;
	bool cancelled = br->cancelled && !timed_out;
	int exit_code = have && res->ran ? res->exit_code : -1;
	int sig = have && res->ran ? res->signal : 0;

	capture_text(&br->out, "stdout", &so);
	capture_text(&br->err, "stderr", &se);
	if (have && res->sandbox[0]) {
		json_t *t;

		sb = json_loads(res->sandbox, 0, NULL);
		/* the timeout in force: the profile's may be shorter */
		t = json_object_get(json_object_get(sb, "limits"), "timeout_s");
		if (json_is_integer(t) && json_integer_value(t) > 0)
			timeout_s = (long)json_integer_value(t);
	}

	ret->exit_code = exit_code;
	ret->signal = sig;
	ret->timed_out = timed_out;
	ret->cancelled = cancelled;
	ret->duration_ms = have && res->ran ? res->duration_ms : br->duration;
	ret->bytes_out = br->out.total + br->err.total;
	if (have)
		moat_strlcpy(ret->sandbox, res->sandbox, sizeof(ret->sandbox));
	ret->ok =
	    have && res->ran && res->status == 0 && exit_code == 0 && !timed_out && !cancelled;

	if (ret->ok) {
		ret->error[0] = '\0';
	} else if (timed_out) {
		snprintf(ret->error, sizeof(ret->error),
			 "the command timed out after %ld s and was killed with all its processes; "
			 "give a larger timeout (at most %d s) or make it finish sooner",
			 timeout_s, MOAT_BASH_MAX_TIMEOUT_S);
	} else if (cancelled) {
		snprintf(ret->error, sizeof(ret->error),
			 "the call was cancelled; the command and all its processes were killed");
	} else if (!have) {
		int st = br->child_status;

		if (br->backstop)
			snprintf(ret->error, sizeof(ret->error),
				 "the sandbox runner did not stop at the timeout and was killed");
		else if (!br->status_known)
			snprintf(ret->error, sizeof(ret->error),
				 "the sandbox runner ended before it reported; nothing is known of "
				 "the command");
		else if (WIFSIGNALED(st))
			snprintf(
			    ret->error, sizeof(ret->error),
			    "the sandbox runner died (%s) before it reported; nothing is known "
			    "of the command",
			    sig_name(WTERMSIG(st)));
		else
			snprintf(ret->error, sizeof(ret->error),
				 "the sandbox runner failed before it reported (exit status %d); "
				 "the command did not run",
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	} else if (!res->ran) {
		/* a refusal (fallback policy, broken profile) or a failed setup */
		size_t l = moat_strlcpy(ret->error,
					res->error[0] ? res->error
						      : "the sandbox could not run the command",
					sizeof(ret->error));

		if (res->hint[0] && l + 9 < sizeof(ret->error)) {
			memcpy(ret->error + l, ". hint: ", 9);
			moat_strlcpy(ret->error + l + 8, res->hint, sizeof(ret->error) - l - 8);
		}
	} else if (sig) {
		snprintf(ret->error, sizeof(ret->error), "the command was killed by %s (signal %d)",
			 sig_name(sig), sig);
	} else {
		snprintf(ret->error, sizeof(ret->error), "the command exited with status %d",
			 exit_code);
	}

	/* the text for the model: stdout, then stderr, then how it ended */
	moat_buf_append(&out, so.data ? so.data : "", so.len);
	if (se.len) {
		if (out.len && out.data[out.len - 1] != '\n')
			moat_buf_putc(&out, '\n');
		moat_buf_puts(&out, "[stderr]\n");
		moat_buf_append(&out, se.data, se.len);
	}
	if (!ret->ok) {
		if (out.len && out.data[out.len - 1] != '\n')
			moat_buf_putc(&out, '\n');
		if (exit_code > 0 && !timed_out && !cancelled)
			moat_buf_printf(&out, "[exit code %d]", exit_code);
		else
			moat_buf_printf(&out, "[%s]", ret->error);
	}
	/* what the post-run checks set aside is told in the text too: a
	 * client may show no structured result for a failed call, and the
	 * model should know why a file it wrote is gone */
	if (have && (strstr(res->warning, "moat-quarantined") ||
		     strstr(res->warning, "created inside the sandbox and kept"))) {
		if (out.len && out.data[out.len - 1] != '\n')
			moat_buf_putc(&out, '\n');
		moat_buf_printf(&out, "[moat %s]", res->warning);
	}
	if (out.oom || so.oom || se.oom || br->out.oom || br->err.oom) {
		json_decref(sb);
		goto oom;
	}

	d = json_object();
	if (!d) {
		json_decref(sb);
		goto oom;
	}
	if (put(d, "stdout", json_stringn(so.data ? so.data : "", so.len)) ||
	    put(d, "stderr", json_stringn(se.data ? se.data : "", se.len)) ||
	    put(d, "exit_code", exit_code >= 0 ? json_integer(exit_code) : json_null()) ||
	    put(d, "signal", sig ? json_integer(sig) : json_null()) ||
	    put(d, "duration_ms", json_real(ret->duration_ms)) ||
	    put(d, "timed_out", json_boolean(timed_out)) ||
	    put(d, "cancelled", json_boolean(cancelled)) ||
	    put(d, "stdout_truncated", json_boolean(capture_truncated(&br->out))) ||
	    put(d, "stderr_truncated", json_boolean(capture_truncated(&br->err))) ||
	    put(d, "stdout_bytes", json_integer((json_int_t)br->out.total)) ||
	    put(d, "stderr_bytes", json_integer((json_int_t)br->err.total)) ||
	    (have && res->warning[0] && put(d, "warning", json_string(res->warning)))) {
		json_decref(sb);
		goto oom;
	}
	/* consumed here, also on failure */
	if (put(d, "sandbox", sb ? sb : json_null()))
		goto oom;

	ret->output_len = out.len;
	ret->output = moat_buf_steal(&out);
	if (!ret->output)
		goto oom;
	ret->data = d;
	moat_buf_release(&so);
	moat_buf_release(&se);
	return 0;
oom:
	json_decref(d);
	moat_buf_release(&out);
	moat_buf_release(&so);
	moat_buf_release(&se);
	return -ENOMEM;
}

/* The working directory for the call: inside the workspace, symlinks
 * resolved. 0, or a refusal in ret (returns 1). */
static int resolve_cwd(const char *ws, const char *arg, char *out, struct moat_tool_result *ret)
{
	char joined[PATH_MAX];
	struct stat st;

	if (arg[0] == '/') {
		moat_strlcpy(joined, arg, sizeof(joined));
	} else if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", ws, arg) >= sizeof(joined)) {
		snprintf(ret->error, sizeof(ret->error), "cwd '%.200s' is too long", arg);
		return 1;
	}
	if (!realpath(joined, out)) {
		snprintf(ret->error, sizeof(ret->error),
			 "cwd '%.200s' cannot be used: %s; give an existing directory inside the "
			 "workspace",
			 arg, strerror(errno));
		return 1;
	}
	/* SECURITY: seed 000's workspace-escape guard; the runner and the
	 * planner check the resolved directory once more */
	if (!moat_path_within(out, ws)) {
		snprintf(ret->error, sizeof(ret->error),
			 "cwd '%.160s' is outside the workspace '%.160s'; give a directory inside "
			 "it",
			 arg, ws);
		return 1;
	}
	if (stat(out, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(ret->error, sizeof(ret->error), "cwd '%.200s' is not a directory", arg);
		return 1;
	}
	return 0;
}

int moat_tool_bash(const struct moat_tool_env *env, json_t *args, const struct moat_tool_call *call,
		   struct moat_tool_result *ret)
{
	struct moat_bash_server *srv;
	struct bash_args a;
	struct bash_job job;
	struct bash_run *br;
	char ws[PATH_MAX], cwd[PATH_MAX];
	int out_p[2] = {-1, -1}, err_p[2] = {-1, -1}, res_p[2] = {-1, -1};
	int pidfd = -1, r = 1;
	size_t cap;
	pid_t pid = 0;

	if (!env || !ret)
		return -EINVAL;
	r = parse_args(args, &a, ret);
	if (r < 0)
		return r;
	if (!env->cfg)
		return bad_arg(ret, "bash: no configuration for the sandbox");

	/* the workspace: the session's, else the runner's default */
	if (env->workspace && env->workspace[0] == '/') {
		moat_strlcpy(ws, env->workspace, sizeof(ws));
	} else if (!realpath(env->workspace		   ? env->workspace
			     : env->cfg->sandbox_workspace ? env->cfg->sandbox_workspace
							   : ".",
			     ws)) {
		ret->ok = false;
		snprintf(ret->error, sizeof(ret->error), "the workspace cannot be used: %s",
			 strerror(errno));
		return 0;
	}
	if (a.cwd && resolve_cwd(ws, a.cwd, cwd, ret)) {
		ret->ok = false;
		return 0;
	}
	if (call && call->cancel_fd >= 0 && readable_now(call->cancel_fd)) {
		ret->ok = false;
		ret->cancelled = true;
		snprintf(ret->error, sizeof(ret->error),
			 "the call was cancelled before the command started");
		return 0;
	}

	br = calloc(1, sizeof(*br));
	if (!br)
		return -ENOMEM;
	cap = env->output_cap ? env->output_cap : MOAT_BASH_OUTPUT_CAP;
	capture_init(&br->out, cap);
	capture_init(&br->err, cap);

	memset(&job, 0, sizeof(job));
	job.env = env;
	job.profile = shell_profile(env->cfg);
	job.workspace = ws;
	/* the default is the workspace, whatever the caller's directory */
	job.cwd = a.cwd ? cwd : ws;
	job.timeout_s = a.timeout_s;
	if (pipe2(out_p, O_CLOEXEC) < 0 || pipe2(err_p, O_CLOEXEC) < 0 ||
	    pipe2(res_p, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail;
	}
	job.out_w = out_p[1];
	job.err_w = err_p[1];
	job.res_w = res_p[1];

	/* through the fork server when it holds this env's configuration */
	srv = env->bash_server;
	r = 1;
	br->start = now_ms();
	if (srv && srv->cfg == env->cfg && srv->env == env->env) {
		int rd[3] = {out_p[0], err_p[0], res_p[0]};

		r = server_spawn(srv, &job, a.command, &pidfd, rd, ret);
		out_p[0] = rd[0];
		err_p[0] = rd[1];
		res_p[0] = rd[2];
		if (r < 0) {
			ret->ok = false;
			r = r == -ENOMEM ? r : 0;
			goto out;
		}
		br->via_server = r == 0;
	}
	if (r == 1) {
		/* no server: fork the caller (safe while it is single-threaded) */
		sigset_t all, old;

		r = make_argv(a.command, &job.argv);
		if (r < 0)
			goto fail;
		job.parent = getpid();
		/* no handler of the caller may run in the child before it has
		 * reset them */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		br->start = now_ms();
		pid = fork();
		if (pid == 0)
			bash_child(&job);
		r = -errno;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (pid < 0)
			goto fail;
		pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	}
	close(out_p[1]);
	close(err_p[1]);
	close(res_p[1]);
	out_p[1] = err_p[1] = res_p[1] = -1;
	for (int i = 0; i < 3; i++) {
		int fd = i == 0 ? out_p[0] : i == 1 ? err_p[0] : res_p[0];

		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	}
	if (pidfd < 0) {
		int e = errno;

		/* (Linux before 5.3, or out of descriptors) */
		ret->ok = false;
		send_sig(-1, pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		snprintf(ret->error, sizeof(ret->error), "cannot watch the command: pidfd_open: %s",
			 strerror(e));
		r = 0;
		goto out;
	}

	supervise(call, a.timeout_s, pid, pidfd, out_p[0], err_p[0], res_p[0], br);
	settle_result(br);
	r = build_result(br, a.timeout_s, ret);
	goto out;
fail:
	snprintf(ret->error, sizeof(ret->error), "cannot start the command: %s", strerror(-r));
	ret->ok = false;
	r = r == -ENOMEM ? r : 0;
out:
	for (int i = 0; i < 2; i++) {
		if (out_p[i] >= 0)
			close(out_p[i]);
		if (err_p[i] >= 0)
			close(err_p[i]);
		if (res_p[i] >= 0)
			close(res_p[i]);
	}
	if (pidfd >= 0)
		close(pidfd);
	capture_release(&br->out);
	capture_release(&br->err);
	free(br);
	free_argv(job.argv);
	return r;
}
