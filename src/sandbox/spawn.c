/* Spawn: the one ordered child setup between clone and exec, and the
 * parent's side (wait, timeout, cancel, killing the whole tree).
 *
 * The child is created with clone(CLONE_VM | CLONE_VFORK) and the new
 * namespaces: it borrows the parent's memory (no page-table copy) and the
 * parent sleeps until it has exec'd or exited. Everything that can fail for
 * an ordinary reason was prepared by the parent; the child only does what
 * must happen inside the namespaces. It therefore must not allocate, print
 * or take locks, and every failing step writes a report (step, errno,
 * detail) to a close-on-exec pipe and _exits with a documented status: the
 * command never runs half-confined.
 *
 * This file must never exec the command before every step of the plan has
 * succeeded, and never leave a process of the sandbox running after moat
 * returns. */
#include <dirent.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/securebits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/str.h"
#include "core/path.h"
#include "sandbox/rawsys.h"
#include "sandbox/sandbox.h"
#include "sandbox/scancheck.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#define X_NR_pidfd_open 434
#define X_NR_close_range 436
/* <linux/pidfd.h> of Linux 6.11, which Debian 12's headers predate */
#define X_PIDFD_GET_MNT_NAMESPACE _IO(0xFF, 3)
#define X_NR_pidfd_send_signal 424
#define X_CLOSE_RANGE_CLOEXEC (1U << 2)
#define CANCEL_GRACE_MS 2000
/* how long the init's exit is watched for after it said the command's
 * status, before sleeping on it (its exit takes tens of microseconds) */
#define INIT_EXIT_SPIN_MS 0.3
/* the report an armed child sends (step NONE): it waits for go2 */
#define MOAT_REPORT_ARMED 0x41524d44

/* 256 KiB for the child's setup, which borrows our memory (only the pages
 * touched are ever backed); with a PID namespace the lowest 64 KiB are the
 * command's stack between its clone and its exec (the init above it is
 * suspended meanwhile, deep in its own part), the next 64 KiB the network
 * helper's (an early start) */
#define CHILD_STACK_SIZE (256 * 1024)
#define CMD_STACK_SIZE (64 * 1024)
#define NET_STACK_TOP (128 * 1024)

/* The child borrows the parent's memory (CLONE_VM | CLONE_VFORK: no page
 * table copy, the parent sleeps until exec). AddressSanitizer cannot follow
 * a second task on a borrowed stack, so sanitizer builds use a plain
 * fork-style clone; the report pipe works the same either way. */
#if defined(__SANITIZE_ADDRESS__)
#define SPAWN_SHARE_VM 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPAWN_SHARE_VM 0
#endif
#endif
#ifndef SPAWN_SHARE_VM
#define SPAWN_SHARE_VM 1
#endif

static const char *const step_names[MOAT_STEP__COUNT] = {
    [MOAT_STEP_NONE] = "none",
    [MOAT_STEP_PARENT] = "die-with-parent",
    [MOAT_STEP_USERNS] = "user namespace",
    [MOAT_STEP_MOUNT] = "mount",
    [MOAT_STEP_PID_MAX] = "process limit (pid_max)",
    [MOAT_STEP_NETWORK] = "network namespace",
    [MOAT_STEP_CGROUP] = "cgroup",
    [MOAT_STEP_RLIMITS] = "resource limits",
    [MOAT_STEP_CHDIR] = "working directory",
    [MOAT_STEP_FDS] = "closing descriptors",
    [MOAT_STEP_SIGNALS] = "signal mask",
    [MOAT_STEP_CAPS] = "dropping capabilities",
    [MOAT_STEP_NO_NEW_PRIVS] = "no_new_privs",
    [MOAT_STEP_LANDLOCK] = "landlock",
    [MOAT_STEP_SECCOMP] = "seccomp",
    [MOAT_STEP_INIT] = "init (PID 1)",
    [MOAT_STEP_EXEC] = "exec",
};

const char *moat_step_name(enum moat_step s)
{
	return (unsigned)s < MOAT_STEP__COUNT ? step_names[s] : "?";
}

/* ------------------------------------------------------------------ */
/* the child                                                           */
/* ------------------------------------------------------------------ */

/* Raw write and exit: this may run beside the parent (rawsys.h). */
static void report_and_exit(struct moat_spawn *a, struct moat_child_report *rep, int status)
{
	long n;

	do
		n = moat_sys3(SYS_write, a->child_report_fd, rep, sizeof(*rep));
	while (n == -EINTR);
	moat_sys1(SYS_exit_group, status);
	_exit(status); /* not reached */
}

static void fail_step(struct moat_spawn *a, int step, int err, const char *detail)
{
	struct moat_child_report rep;
	size_t i = 0;

	memset(&rep, 0, sizeof(rep));
	rep.step = step;
	rep.err = err;
	for (; detail && detail[i] && i + 1 < sizeof(rep.detail); i++)
		rep.detail[i] = detail[i];
	rep.detail[i] = '\0';
	report_and_exit(a, &rep, MOAT_RUN_EXIT_SETUP);
}

/* Spins before an early child sleeps: a few hundred microseconds (a pause
 * is 20 to 50 ns), about what the parent still has to prepare. */
#define GO_SPINS 8192

/* Wait until the parent says go (an early start). Where the parent moved
 * to another CPU (aff_set: two or more) and no network helper is at work,
 * the child first watches the word for a while: the wake-up of a task
 * asleep on another CPU costs about 20 us on a VM. */
static void wait_go(struct moat_spawn *s)
{
	/* (not beside a network helper: it needs the CPU the child would
	 * spin on) */
	for (int i = 0; s->aff_set && !s->ns_net && i < GO_SPINS; i++) {
		if (__atomic_load_n(&s->go, __ATOMIC_ACQUIRE))
			return;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#else
		__asm__ __volatile__("" ::: "memory");
#endif
	}
	while (__atomic_load_n(&s->go, __ATOMIC_ACQUIRE) == 0)
		moat_sys4(SYS_futex, &s->go, FUTEX_WAIT_PRIVATE, 0, NULL);
}

/* execvp without allocation: try each PATH entry, as a shell would.
 * Returns the errno to report (EACCES if any candidate was not executable). */
static int exec_search(char *const *argv, char *const *envp, const char *path)
{
	const char *name = argv[0];
	char buf[PATH_MAX];
	size_t nlen = strlen(name);
	bool eacces = false;
	int e = ENOENT;

	if (strchr(name, '/')) {
		execve(name, argv, envp);
		return errno;
	}
	if (!*name)
		return ENOENT;
	for (const char *p = path;; p++) {
		const char *end = strchr(p, ':');
		size_t dlen = end ? (size_t)(end - p) : strlen(p);

		if (dlen + 1 + nlen + 1 <= sizeof(buf)) {
			if (dlen == 0) {
				buf[0] = '.';
				dlen = 1;
			} else {
				memcpy(buf, p, dlen);
			}
			buf[dlen] = '/';
			memcpy(buf + dlen + 1, name, nlen + 1);
			execve(buf, argv, envp);
			e = errno;
			if (e == EACCES)
				eacces = true;
			else if (e != ENOENT && e != ENOTDIR && e != ELOOP && e != ENAMETOOLONG)
				return e; /* found but broken (ENOEXEC, E2BIG...): stop here */
		}
		if (!end)
			break;
		p = end;
	}
	return eacces ? EACCES : e;
}

/* The last step: exec the command, or report why not and exit. */
static void exec_command(struct moat_spawn *s)
{
	const struct moat_plan *p = s->plan;
	struct moat_child_report rep;
	int r;

	if (s->ns_pid && sigprocmask(SIG_SETMASK, &s->child_mask, NULL) < 0)
		fail_step(s, MOAT_STEP_SIGNALS, errno, NULL);
	r = exec_search(p->argv, s->envp, s->search_path);
	memset(&rep, 0, sizeof(rep));
	rep.step = MOAT_STEP_EXEC;
	rep.err = r;
	for (size_t i = 0; p->argv[0][i] && i + 1 < sizeof(rep.detail); i++)
		rep.detail[i] = p->argv[0][i];
	report_and_exit(
	    s, &rep, r == ENOENT || r == ENOTDIR ? MOAT_RUN_EXIT_NOTFOUND : MOAT_RUN_EXIT_NOEXEC);
}

#if SPAWN_SHARE_VM
static int command_main(void *arg)
{
	exec_command(arg);
	return 0;
}
#endif

#define KSIG(n) (1UL << ((n) - 1))

/* The PID namespace's init (PID 1), confined like the command (it applied
 * Landlock and seccomp to itself before this): it starts the command as
 * PID 2, so the command is an ordinary process that dies of the signals it
 * sends itself (kill $$, SIGPIPE, alarm) as it would outside; it passes on
 * the signals moat (or anyone) sends it, reaps orphans, and when the
 * command exits it hands the command's wait status to moat through the
 * status pipe and exits, and the kernel kills what is left of the
 * namespace. It shares moat's memory where the child does: from here on
 * only raw system calls, its own stack, and every signal blocked (none of
 * moat's handlers may run here); the command cannot reach its memory
 * (ptrace and process_vm_* are filtered, and the init keeps capabilities
 * the command lacks, so /proc/1/mem is closed to it). */
static void init_loop(struct moat_spawn *s, long cmd);

static void run_init(struct moat_spawn *s)
{
	unsigned long all = ~0UL;
	long cmd;

	/* every signal blocked, the libc-reserved ones too (raw: sigfillset
	 * leaves those out) */
	(void)moat_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));

#if SPAWN_SHARE_VM
	/* the command borrows the memory too, suspending us until its exec */
	cmd = clone(command_main, (char *)s->child_stack + CMD_STACK_SIZE,
		    CLONE_VM | CLONE_VFORK | SIGCHLD, s);
	if (cmd < 0)
		cmd = -errno;
#else
	cmd = moat_sys5(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (cmd == 0)
		exec_command(s);
#endif
	if (cmd < 0)
		fail_step(s, MOAT_STEP_INIT, (int)-cmd, "clone");
	init_loop(s, cmd);
}

/* An armed child's report (step NONE, MOAT_REPORT_ARMED): raw, the parent
 * reads it and runs on this memory again. */
static void say_armed(struct moat_spawn *s)
{
	struct moat_child_report ok;
	long n;

	memset(&ok, 0, sizeof(ok));
	ok.err = MOAT_REPORT_ARMED;
	do
		n = moat_sys3(SYS_write, s->child_report_fd, &ok, sizeof(ok));
	while (n == -EINTR);
}

/* Armed: wait for go2, then the call's plan is s->plan: into its working
 * directory. Raw system calls only until go2. */
static void await_call(struct moat_spawn *s)
{
	long r;

	while (__atomic_load_n(&s->go2, __ATOMIC_ACQUIRE) == 0)
		moat_sys4(SYS_futex, &s->go2, FUTEX_WAIT_PRIVATE, 0, NULL);
	r = moat_sys1(SYS_chdir, s->plan->cwd);
	if (r < 0)
		fail_step(s, MOAT_STEP_CHDIR, (int)-r, s->plan->cwd);
}

#if SPAWN_SHARE_VM
/* The command of an armed sandbox, cloned at the arming (not at the call:
 * a clone and a wake-up less between the call and the exec). It waits on
 * go2 like the init did, on its own stack, raw system calls only (the
 * parent runs on this memory again); then the call's plan is s->plan: into
 * its working directory, and exec. */
static int armed_command_main(void *arg)
{
	struct moat_spawn *s = arg;

	await_call(s);
	exec_command(s);
	return 0;
}

/* An armed child with a PID namespace: the init's part of run_init now,
 * the command cloned waiting for go2, then "armed" said. Never returns. */
static void arm_init(struct moat_spawn *s)
{
	unsigned long all = ~0UL;
	long cmd;

	(void)moat_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));
	/* (the parent still waits for the report: libc's clone is safe) */
	cmd = clone(armed_command_main, (char *)s->child_stack + CMD_STACK_SIZE, CLONE_VM | SIGCHLD,
		    s);
	if (cmd < 0)
		fail_step(s, MOAT_STEP_INIT, errno, "clone");
	say_armed(s);
	init_loop(s, cmd);
}
#endif

/* The init's life once the command is cloned (its pid cmd). */
static void init_loop(struct moat_spawn *s, long cmd)
{
	unsigned long set = KSIG(SIGCHLD) | KSIG(SIGHUP) | KSIG(SIGINT) | KSIG(SIGQUIT) |
			    KSIG(SIGTERM) | KSIG(SIGUSR1) | KSIG(SIGUSR2) | KSIG(SIGWINCH) |
			    KSIG(SIGCONT);
	int sfd = s->child_status_fd;
	long r;

	(void)moat_sys2(SYS_prctl, PR_SET_NAME, "moat-init");
	/* everything but the status pipe closed: the report pipe (its end
	 * closing tells moat the command has exec'd), the terminal, stdio */
	if ((sfd > 0 && moat_sys3(X_NR_close_range, 0, (unsigned)sfd - 1, 0) < 0) ||
	    moat_sys3(X_NR_close_range, (unsigned)sfd + 1, ~0U, 0) < 0) {
		for (int fd = 0; fd < 65536; fd++) /* before Linux 5.9 */
			if (fd != sfd)
				(void)moat_sys1(SYS_close, fd);
	}
	for (;;) {
		siginfo_t si;
		int st;

		while ((r = moat_sys4(SYS_wait4, -1, &st, __WALL | WNOHANG, NULL)) > 0) {
			if (r != cmd)
				continue; /* an orphan */
			do
				r = moat_sys3(SYS_write, sfd, &st, sizeof(st));
			while (r == -EINTR);
			moat_sys1(SYS_exit_group,
				  WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		}
		if (r == -ECHILD)
			moat_sys1(SYS_exit_group, MOAT_RUN_EXIT_SETUP); /* not reached */
		r = moat_sys4(SYS_rt_sigtimedwait, &set, &si, NULL, sizeof(set));
		/* a terminal's signal reached the command already (same group) */
		if (r > 0 && r != SIGCHLD && si.si_code != SI_KERNEL)
			(void)moat_sys2(SYS_kill, cmd, r);
	}
}

/* The network helper of an early child: it makes the network namespace
 * (the costliest step of a start) and brings loopback up while the child
 * waits for the parent and then makes its mounts, opens the namespace into
 * the table it shares with the child, and exits; the child joins the
 * namespace before Landlock and seccomp. Raw system calls only: it borrows
 * our memory too. */
static int net_helper_main(void *arg)
{
	struct moat_spawn *s = arg;
	struct moat_child_report rep;
	long r = moat_sys1(SYS_unshare, CLONE_NEWNET);

	if (r == 0 && moat_ns_child_loopback(&rep) < 0)
		r = -rep.err;
	if (r == 0)
		r = moat_sys4(SYS_openat, AT_FDCWD, "/proc/self/ns/net", O_RDONLY | O_CLOEXEC, 0);
	s->net_fd = (int)r;
	__atomic_store_n(&s->net_ready, 1, __ATOMIC_RELEASE);
	moat_sys4(SYS_futex, &s->net_ready, FUTEX_WAKE_PRIVATE, 1, NULL);
	moat_sys1(SYS_exit, 0);
	return 0;
}

/* The helper's namespace joined (the early child, after its mounts). */
static void join_helper_net(struct moat_spawn *s)
{
	long r;

	while (__atomic_load_n(&s->net_ready, __ATOMIC_ACQUIRE) == 0)
		moat_sys4(SYS_futex, &s->net_ready, FUTEX_WAIT_PRIVATE, 0, NULL);
	if (s->net_fd < 0)
		fail_step(s, MOAT_STEP_NETWORK, -s->net_fd, "network namespace");
	r = moat_sys2(SYS_setns, s->net_fd, CLONE_NEWNET);
	moat_sys1(SYS_close, s->net_fd);
	if (r < 0)
		fail_step(s, MOAT_STEP_NETWORK, (int)-r, "setns");
}

static int child_main(void *arg)
{
	struct moat_spawn *s = arg, *a = s;
	const struct moat_plan *p;
	struct moat_child_report rep;
	/* after an early start a helper makes the network namespace */
	bool net_helper = s->ns_net && a->early;
	int r;

	memset(&rep, 0, sizeof(rep));
	/* The order, and why it is this order:
	 *  1. die with the parent first: from here on a setup nobody waits
	 *     for must not go on.
	 *  2. user namespace maps: every later privileged step (mounts,
	 *     loopback, pid_max) uses the capabilities the new user namespace
	 *     grants, and files created below must carry our ids.
	 *  3. the network namespace (after an early start the child creates
	 *     it here, while the parent still prepares: it is the costliest
	 *     step), loopback up; then wait for the parent's go.
	 *  4. mounts (private /tmp, /run hidden, kept paths, masks, protected
	 *     paths), /proc last: the earlier ones still use the host's
	 *     /proc/self/fd to reach hidden paths.
	 *  5. pid_max (written through the new /proc, in the new PID
	 *     namespace), the cgroup, then rlimits: before the command can
	 *     outrun them.
	 *  6. chdir after the mounts, or the cwd would point into the old /tmp.
	 *  7. descriptors: everything above 2 close-on-exec (ours too).
	 *  8. the signal mask the parent blocked around clone, restored.
	 *  9. capabilities: securebits so that uid 0 gains none at exec.
	 * 10. no_new_privs: required by Landlock and seccomp; setuid programs
	 *     gain nothing.
	 * 11. Landlock, then seccomp last: the filter forbids the mount calls
	 *     above, and after it only execve remains.
	 * 12. exec. */

	/* 1; until go (an early start) only raw system calls: the parent is
	 * running on the same memory (rawsys.h) */
	r = (int)moat_sys2(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
	if (r < 0)
		fail_step(a, MOAT_STEP_PARENT, -r, "PR_SET_PDEATHSIG");
	if (s->own_pgrp)
		(void)moat_sys2(SYS_setpgid, 0, 0);

	if (s->parent_pidfd >= 0) {
		struct pollfd pf = {s->parent_pidfd, POLLIN, 0};
		struct timespec zero = {0, 0};

		if (moat_sys5(SYS_ppoll, &pf, 1, &zero, NULL, 0) > 0)
			moat_sys1(SYS_exit_group, MOAT_RUN_EXIT_SETUP); /* nobody to report to */
	}
	/* 2 */
	if (s->ns_user && moat_ns_child_userns(s->uid, s->gid, &rep) < 0)
		report_and_exit(a, &rep, MOAT_RUN_EXIT_SETUP);
	/* 3: the network namespace, unless the clone made it; lo up. After an
	 * early start a helper makes it, while we wait and mount (joined
	 * after step 4) */
	if (net_helper) {
		long h;

		s->net_ready = 0;
		h = clone(net_helper_main, (char *)s->child_stack + NET_STACK_TOP,
			  CLONE_VM | CLONE_FILES | SIGCHLD, s);
		if (h < 0)
			fail_step(a, MOAT_STEP_NETWORK, errno, "network helper");
	} else if (s->ns_net && moat_ns_child_loopback(&rep) < 0) {
		report_and_exit(a, &rep, MOAT_RUN_EXIT_SETUP);
	}
	if (a->early && s->early_bpf.insns) {
		/* Landlock + seccomp only: the filter now, while the parent
		 * still plans (its conversion and compilation are a good part
		 * of a start); moat_spawn_prepare refuses a plan that wants
		 * another. no_new_privs first, as the kernel requires */
		struct sock_fprog prog = {s->early_bpf.len, s->early_bpf.insns};

		r = (int)moat_sys2(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1);
		if (r < 0)
			fail_step(a, MOAT_STEP_NO_NEW_PRIVS, -r, NULL);
		r = (int)moat_sys3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
		if (r < 0)
			fail_step(a, MOAT_STEP_SECCOMP, -r, "SECCOMP_SET_MODE_FILTER");
	}
	if (a->early)
		wait_go(s); /* from here on the parent waits, as with vfork */
	/* the plan: set before the clone, or (early) before go */
	p = s->plan;
	/* 4 (without a user namespace of its own the mount namespace would
	 * share the host's propagation: nothing mounted here may reach it) */
	if (p->mntns && !s->ns_user && mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		fail_step(a, MOAT_STEP_MOUNT, errno, "making / a slave");
	if (p->mntns && moat_ns_child_mounts(&s->mounts, &rep) < 0)
		report_and_exit(a, &rep, MOAT_RUN_EXIT_SETUP);
	/* SECURITY: every directory the workspace scan relied on is still the
	 * one it read, now that the masks are attached (scancheck.c): else a
	 * secret renamed in a race with the preparation could be left out */
	if (p->mntns && moat_scan_check_child(&s->mounts, &rep) < 0)
		report_and_exit(a, &rep, MOAT_RUN_EXIT_SETUP);
	if (net_helper)
		join_helper_net(s);
	/* 5 */
	/* (the network helper of an early start took PID 2, never reused
	 * before the numbers wrap: one more) */
	if (p->pids_mech == MOAT_LIMIT_PIDNS &&
	    moat_ns_child_pid_max(p->pids + (net_helper ? 1 : 0), &rep) < 0)
		report_and_exit(a, &rep, MOAT_RUN_EXIT_SETUP);
	if (p->ipcns && p->fresh_proc)
		moat_ns_child_shm_limit(p->mem_bytes);
	if (s->cg.procs_fd >= 0 && !a->early && write(s->cg.procs_fd, "0", 1) != 1)
		fail_step(a, MOAT_STEP_CGROUP, errno, s->cg.path);
	{
		int which = -1;

		r = moat_rlimits_apply(&s->rl, &which);
		if (r < 0)
			fail_step(a, MOAT_STEP_RLIMITS, -r,
				  which == RLIMIT_NPROC	 ? "RLIMIT_NPROC"
				  : which == RLIMIT_DATA ? "RLIMIT_DATA"
							 : "setrlimit");
	}
	/* 6 */
	if (chdir(p->cwd) < 0)
		fail_step(a, MOAT_STEP_CHDIR, errno, p->cwd);
	/* 7 */
	if (syscall(X_NR_close_range, 3U, ~0U, X_CLOSE_RANGE_CLOEXEC) < 0) {
		/* before Linux 5.11: one by one */
		for (int fd = 3; fd < 65536; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	/* 8 (with a PID namespace the init keeps every signal blocked: the
	 * command restores the mask just before its exec) */
	if (!s->ns_pid && sigprocmask(SIG_SETMASK, &a->child_mask, NULL) < 0)
		fail_step(a, MOAT_STEP_SIGNALS, errno, NULL);
	/* 9 */
	if (p->drop_caps && (p->userns || s->kf->is_root || s->kf->ns_admin)) {
		if (prctl(PR_SET_SECUREBITS,
			  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			      SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			      SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
			  0, 0, 0) < 0)
			fail_step(a, MOAT_STEP_CAPS, errno, "PR_SET_SECUREBITS");
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
			fail_step(a, MOAT_STEP_CAPS, errno, "PR_CAP_AMBIENT_CLEAR_ALL");
	}
	/* 10 */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail_step(a, MOAT_STEP_NO_NEW_PRIVS, errno, NULL);
	/* 11 */
	for (int i = 0; i < s->nll_late && s->ll_fd >= 0; i++) {
		/* SECURITY: without its overlay, the home directory is the real
		 * one: no write rule for it */
		if (p->home_cow && p->home && !strcmp(s->ll_late[i].path, p->home) &&
		    !moat_ns_child_cow_ok())
			continue;
		r = moat_landlock_add_late(s->ll_fd, &s->ll_late[i]);
		if (r < 0)
			fail_step(a, MOAT_STEP_LANDLOCK, -r, s->ll_late[i].path);
	}
	if (s->ll_fd >= 0) {
		r = moat_landlock_enforce(s->ll_fd, p->ll_restrict_flags);
		if (r < 0)
			fail_step(a, MOAT_STEP_LANDLOCK, -r, "landlock_restrict_self");
	}
	if (p->seccomp && !s->early_bpf.insns) {
		r = moat_seccomp_load(&s->bpf);
		if (r < 0)
			fail_step(a, MOAT_STEP_SECCOMP, -r, "SECCOMP_SET_MODE_FILTER");
	}
	/* armed ahead of its call: said through the report pipe, then only
	 * raw system calls (the parent runs on this memory again) until go2;
	 * then the call's plan is s->plan, its working directory entered */
#if SPAWN_SHARE_VM
	if (s->arm && s->ns_pid)
		arm_init(s); /* never returns */
#endif
	if (s->arm) {
		say_armed(s);
		await_call(s);
	}
	/* 12 */
	if (s->ns_pid)
		run_init(s); /* never returns */
	exec_command(s);
	return 0;
}
/* ------------------------------------------------------------------ */
/* the parent                                                          */
/* ------------------------------------------------------------------ */

void moat_spawn_init(struct moat_spawn *s, const struct moat_kfeatures *kf)
{
	memset(s, 0, sizeof(*s));
	s->kf = kf;
	s->ll_fd = -1;
	s->mntns_fd = -1;
	s->cg.dir_fd = s->cg.procs_fd = -1;
	s->parent_pidfd = -1;
	s->pidfd = -1;
	s->report_fd = -1;
	s->child_report_fd = -1;
	s->status_fd = -1;
	s->child_status_fd = -1;
	s->uid = getuid();
	s->gid = getgid();
}

static double now_ms(void);

static void close_status(struct moat_spawn *s)
{
	if (s->status_fd >= 0)
		close(s->status_fd);
	if (s->child_status_fd >= 0 && !s->started) {
		close(s->child_status_fd);
		s->child_status_fd = -1;
	}
	s->status_fd = -1;
}

/* Clone the child: early (it runs beside us until go) or at once (it
 * borrows our memory and we sleep until it has exec'd, as with vfork). */
static int spawn_clone(struct moat_spawn *s, bool early, int nsflags, struct moat_error *err)
{
	sigset_t all;
	int rp[2], sp[2], flags;

	if (pipe2(rp, O_CLOEXEC) < 0) {
		moat_error_set(err, "cannot create a pipe: %s", strerror(errno));
		return MOAT_RUN_EXIT_SETUP;
	}
	s->report_fd = rp[0];
	s->child_report_fd = rp[1]; /* the child's copy; never changed while it runs */
	if (nsflags & CLONE_NEWPID) {
		if (pipe2(sp, O_CLOEXEC) < 0) {
			moat_error_set(err, "cannot create a pipe: %s", strerror(errno));
			close(rp[0]);
			close(rp[1]);
			s->report_fd = -1;
			return MOAT_RUN_EXIT_SETUP;
		}
		s->status_fd = sp[0];
		s->child_status_fd = sp[1];
	}
	if (SPAWN_SHARE_VM && !s->child_stack) {
		s->child_stack = mmap(NULL, CHILD_STACK_SIZE, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (s->child_stack == MAP_FAILED) {
			s->child_stack = NULL;
			close(rp[0]);
			close(rp[1]);
			s->report_fd = -1;
			moat_error_set(err, "cannot map a stack for the child: %s",
				       strerror(errno));
			return MOAT_RUN_EXIT_SETUP;
		}
	}
	if (s->parent_pidfd < 0)
		s->parent_pidfd = (int)syscall(X_NR_pidfd_open, getpid(), 0);
	s->ns_pid = nsflags & CLONE_NEWPID;
	if (!s->ns_pid)
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	/* without a PID namespace, a process group of its own lets one
	 * kill(-pgid, SIGSTOP) freeze a fork bomb at once (kill_tree); not
	 * with a terminal, whose job control needs the group it has */
	s->own_pgrp = !s->ns_pid && !isatty(STDIN_FILENO) && !isatty(STDOUT_FILENO) &&
		      !isatty(STDERR_FILENO);

	/* the init of a PID namespace never execs: the parent cannot sleep
	 * until an exec as with vfork, it waits for the report pipe to close */
	flags = CLONE_PIDFD | SIGCHLD | nsflags;
	if (SPAWN_SHARE_VM)
		flags |= CLONE_VM | (early || (nsflags & CLONE_NEWPID) ? 0 : CLONE_VFORK);
	s->ns_user = nsflags & CLONE_NEWUSER;
	s->ns_net = s->ns_net || (nsflags & CLONE_NEWNET);
	s->early = early;
	s->aff_set = false;
	if (early) {
		int cpu = sched_getcpu();

		if (cpu >= 0 && cpu < CPU_SETSIZE &&
		    sched_getaffinity(0, sizeof(s->aff_all), &s->aff_all) == 0 &&
		    CPU_ISSET(cpu, &s->aff_all) && CPU_COUNT(&s->aff_all) >= 2) {
			s->aff_other = s->aff_all;
			CPU_CLR(cpu, &s->aff_other);
			s->aff_set = true;
		}
	}

	/* no signal handler may run in the child while it borrows our memory:
	 * it starts with every signal blocked and restores our mask before
	 * exec */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &s->child_mask);
	s->start_ms = now_ms();
	if (SPAWN_SHARE_VM) {
		s->pid = clone(child_main, (char *)s->child_stack + CHILD_STACK_SIZE, flags, s,
			       &s->pidfd);
	} else {
		/* fork-style: the child continues on a copy of this stack */
		s->pid =
		    (pid_t)syscall(SYS_clone, (unsigned long)flags, NULL, &s->pidfd, NULL, NULL);
		if (s->pid == 0)
			child_main(s); /* never returns */
	}
	if (s->pid < 0) {
		int e = errno;

		sigprocmask(SIG_SETMASK, &s->child_mask, NULL);
		close(rp[0]);
		close(rp[1]);
		s->report_fd = -1;
		close_status(s);
		s->pid = 0;
		if (!s->ns_pid)
			prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
		if ((nsflags & (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET)) &&
		    (e == EPERM || e == EUSERS || e == ENOSPC || e == EINVAL || e == EACCES ||
		     e == ENOSYS)) {
			moat_error_set(err, "cannot create %s: %s",
				       s->ns_user ? "a user namespace" : "namespaces", strerror(e));
			return -EPERM; /* the caller re-plans without namespaces */
		}
		moat_error_set(err, "cannot start the command: clone: %s", strerror(e));
		return MOAT_RUN_EXIT_SETUP;
	}
	s->started = true;
	if (s->hold_mntns && (nsflags & CLONE_NEWNS) && s->pidfd >= 0) {
		/* through the child's pidfd (Linux >= 6.11), never by its pid
		 * under /proc, which may be another PID namespace's; before
		 * 6.11 nothing is held, and a failure only costs time */
		int fd = ioctl(s->pidfd, X_PIDFD_GET_MNT_NAMESPACE, 0);

		if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) == 0)
			s->mntns_fd = fd;
		else if (fd >= 0)
			close(fd);
	}
	/* an early child runs beside us, not queued behind us on this CPU
	 * until we sleep (where the scheduler puts a new task): we move to
	 * another one until it has run (moat_spawn_run puts us back). Not the
	 * child: a mask set on it would be its and its descendants' for good
	 * (Linux >= 6.2 keeps a mask once set: CPUs a cpuset adds later would
	 * never reach the command). A hint: a failure costs only time */
	if (s->aff_set && sched_setaffinity(0, sizeof(s->aff_other), &s->aff_other) < 0)
		s->aff_set = false;
	close(rp[1]);
	if (s->child_status_fd >= 0)
		close(s->child_status_fd); /* ours; the child's copy stays its own */
	if (early)
		sigprocmask(SIG_SETMASK, &s->child_mask, NULL);
	return 0;
}

int moat_spawn_start(struct moat_spawn *s, bool net_allowed, struct moat_error *err)
{
	struct moat_plan rs;
	int r;

	/* worth it where the child has the costly network namespace to
	 * create, or (Landlock and seccomp only) the filter to load; possible
	 * only where it can share our memory without touching our errno
	 * (rawsys.h); sanitizer builds clone fork-style. Root without user
	 * namespaces makes the other namespaces: not an early start's plan */
	if (!SPAWN_SHARE_VM || !MOAT_RAW_SYSCALLS || s->started ||
	    (!s->kf->userns && (s->kf->ns_admin || !s->kf->seccomp)))
		return 0;
	/* the descriptors the child uses are opened before it exists (it gets
	 * a copy of our descriptor table): the Landlock ruleset, filled in
	 * later through our copy */
	if (net_allowed && !s->kf->userns)
		return 0; /* (Landlock and seccomp only: the network denied alone) */
	s->early_net_allowed = net_allowed;
	moat_plan_early(s->kf, net_allowed, &rs);
	r = moat_landlock_create(&rs, &s->ll_fd, err);
	if (r < 0)
		return r;
	if (!s->kf->userns) {
		r = moat_seccomp_compile(&rs, &s->early_bpf, err);
		if (r < 0)
			return r;
		return spawn_clone(s, true, 0, err);
	}
	s->ns_net = !net_allowed; /* created by the child (step 3) */
	return spawn_clone(s, true,
			   CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC |
			       (s->kf->fresh_proc ? CLONE_NEWPID : 0),
			   err);
}

/* Does the plan ask for exactly what the early child was started with? */
bool moat_spawn_agrees(const struct moat_spawn *s, const struct moat_plan *p)
{
	return moat_plan_fits_early(s->kf, s->early_net_allowed, p);
}

int moat_spawn_prepare(struct moat_spawn *s, const struct moat_plan *p, char *const *parent_env,
		       struct moat_error *err)
{
	const struct moat_kfeatures *kf = s->kf;
	int r;

	/* SECURITY: an early child has its namespaces and its ruleset's
	 * handled rights already: a plan that wants anything else is refused,
	 * never run in a sandbox it did not ask for */
	if (s->started && !moat_spawn_agrees(s, p)) {
		moat_error_set(err, "internal error: the plan disagrees with the sandbox started "
				    "for it");
		return -EINVAL;
	}
	s->plan = p;
	/* SECURITY: without the filter the command could read the key of
	 * moat's scan records (ns.c) and forge them for later runs */
	if (!p->seccomp)
		moat_ns_scan_key_drop();

	if (p->scratch_tmp) {
		/* a tmpfs when there is one we own (creating a directory there is
		 * far cheaper than on a journaled /tmp): the user's runtime
		 * directory, /dev/shm, then /tmp */
		const char *bases[] = {secure_getenv("XDG_RUNTIME_DIR"), "/dev/shm", "/tmp"};

		r = -ENOENT;
		for (size_t i = 0; i < MOAT_ARRAY_SIZE(bases) && r < 0; i++) {
			if (!bases[i] || bases[i][0] != '/' ||
			    (size_t)snprintf(s->scratch, sizeof(s->scratch), "%s/moat-tmp-XXXXXX",
					     bases[i]) >= sizeof(s->scratch))
				continue;
			r = mkdtemp(s->scratch) ? 0 : -errno;
		}
		if (r < 0) {
			moat_error_set(err, "cannot create a scratch directory: %s", strerror(-r));
			s->scratch[0] = '\0';
			return r;
		}
	}
	r = moat_ns_prepare(p, &s->mounts, err);
	if (r == 0)
		r = moat_landlock_build(p, &s->mounts, s->scratch[0] ? s->scratch : NULL, &s->ll_fd,
					&s->ll_rep, err);
	if (r == 0)
		s->nll_late = moat_landlock_late_rules(p, &s->mounts, s->ll_late, MOAT_LL_LATE_MAX);
	if (r == 0)
		r = moat_seccomp_compile(p, &s->bpf, err);
	if (r == 0)
		r = moat_rlimits_prepare(p, kf, &s->rl, err);
	if (r == 0)
		r = moat_cgroup_create(p, kf, &s->cg, err);
	/* an early child has no copy of the leaf's descriptor: it is moved in
	 * by its pid, before it can run anything */
	if (r == 0 && s->started && s->cg.procs_fd >= 0) {
		char pid[24];
		int n = snprintf(pid, sizeof(pid), "%d", (int)s->pid);

		if (write(s->cg.procs_fd, pid, (size_t)n) != n) {
			r = -errno;
			moat_error_set(err, "cannot move the sandbox into its cgroup: %s",
				       strerror(-r));
		}
	}
	if (r == 0) {
		r = moat_env_build(p, parent_env, s->scratch[0] ? s->scratch : NULL, &s->envp,
				   &s->env_dropped);
		if (r < 0)
			moat_error_set(err, "cannot build the environment: %s", strerror(-r));
	}
	/* on failure the caller's moat_spawn_release cleans up */
	return r < 0 ? r : 0;
}

/* Remove a directory tree without following symlinks (the sandbox may
 * have planted some). A tree deeper than RMTREE_DEPTH (made so on purpose,
 * to outlast a bounded recursion) is not descended: its too-deep part is
 * moved up under the root and removed from there, again and again, so any
 * depth goes with bounded recursion and descriptors. */
#define RMTREE_DEPTH 32
#define RMTREE_ROUNDS 100000

static void rmtree_at(int rootfd, int dfd, const char *name, int depth, unsigned *moved)
{
	int fd;
	DIR *d;
	struct dirent *e;

	if (unlinkat(dfd, name, 0) == 0 || (errno != EISDIR && errno != EPERM))
		return;
	/* an empty directory (the scratch TMPDIR, usually) goes at once */
	if (unlinkat(dfd, name, AT_REMOVEDIR) == 0 || (errno != ENOTEMPTY && errno != EEXIST))
		return;
	if (depth >= RMTREE_DEPTH && rootfd >= 0) {
		char up[64];

		snprintf(up, sizeof(up), ".moat-rm-%u", (*moved)++);
		(void)renameat(dfd, name, rootfd, up);
		return;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		/* one the command made unreadable (chmod 000) is ours too:
		 * opened for its mode alone (never through a link), made
		 * readable, opened again */
		int pfd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		char self[64];

		if (pfd >= 0) {
			snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
			if (chmod(self, 0700) == 0)
				fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			close(pfd);
		}
	}
	if (fd < 0)
		return;
	/* a directory the command made read-only (chmod 500) is ours: make
	 * it writable again so that its entries can go */
	(void)fchmod(fd, 0700);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rmtree_at(rootfd, dirfd(d), e->d_name, depth + 1, moved);
	closedir(d);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

void moat_rmtree(const char *path)
{
	unsigned moved = 0;
	int rootfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (rootfd < 0) {
		rmtree_at(-1, AT_FDCWD, path, 0, &moved);
		return;
	}
	(void)fchmod(rootfd, 0700);
	/* the root's entries, until none is left (moved-up parts included) */
	for (unsigned round = 0, last = UINT_MAX; round < RMTREE_ROUNDS; round++) {
		DIR *d;
		struct dirent *e;
		unsigned seen = 0, moved_before = moved;
		int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0 || !(d = fdopendir(fd))) {
			if (fd >= 0)
				close(fd);
			break;
		}
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			seen++;
			rmtree_at(rootfd, rootfd, e->d_name, 1, &moved);
		}
		closedir(d);
		/* done, or stuck (an entry that cannot go: no progress) */
		if (!seen || (seen >= last && moved == moved_before))
			break;
		last = seen;
	}
	close(rootfd);
	(void)rmdir(path);
}

#if SPAWN_SHARE_VM && MOAT_RAW_SYSCALLS
#define SPAWN_TEARDOWN_HELPER 1
#else
#define SPAWN_TEARDOWN_HELPER 0
#endif

#if SPAWN_TEARDOWN_HELPER
/* The teardown helper (hold_mntns): it borrows our memory, on a stack of
 * its own, and makes only raw system calls; it closes every descriptor but
 * the two it was handed (our stdout may be a pipe someone reads to its
 * end), then those two, which frees the mount namespace and the ruleset,
 * and exits. Its exit signal is none: nobody waits for it (our caller
 * exits right after; a reparented child is reaped by whoever takes it). */
static char teardown_stack[16384] __attribute__((aligned(64)));

static int teardown_main(void *arg)
{
	const int *fds = arg; /* ascending, -1 for none */
	unsigned lo = 0;

	for (int i = 0; i < 2; i++) {
		if (fds[i] < 0)
			continue;
		if ((unsigned)fds[i] > lo)
			(void)moat_sys3(X_NR_close_range, lo, (unsigned)fds[i] - 1, 0);
		lo = (unsigned)fds[i] + 1;
	}
	(void)moat_sys3(X_NR_close_range, lo, ~0U, 0);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			(void)moat_sys1(SYS_close, fds[i]);
	moat_sys1(SYS_exit, 0);
	return 0;
}
#endif

/* hold_mntns: the held namespace and the ruleset go in a process of their
 * own (see sandbox.h); without one, at our exit. */
static void teardown_detached(struct moat_spawn *s)
{
#if SPAWN_TEARDOWN_HELPER
	/* one helper per process: a second (a run re-planned) would share
	 * the first one's stack, so its descriptors are left to our exit */
	static int fds[2];
	static bool used;
	sigset_t all, old;
	long pid;

	if (used) {
		s->mntns_fd = -1;
		s->ll_fd = -1;
		return;
	}
	used = true;
	fds[0] = s->mntns_fd < s->ll_fd ? s->mntns_fd : s->ll_fd;
	fds[1] = s->mntns_fd < s->ll_fd ? s->ll_fd : s->mntns_fd;
	/* it starts with every signal blocked: no handler of ours may run
	 * there (a terminal's Ctrl-C reaches our whole process group) */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone(teardown_main, teardown_stack + sizeof(teardown_stack), CLONE_VM, fds);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid > 0) {
		/* the helper's copies are the last: ours go now */
		if (s->mntns_fd >= 0)
			close(s->mntns_fd);
		if (s->ll_fd >= 0)
			close(s->ll_fd);
	}
#endif
	s->mntns_fd = -1;
	s->ll_fd = -1;
}

/* Back on every CPU we may use, after an early child's start. */
static void aff_restore(struct moat_spawn *s)
{
	if (s->aff_set)
		(void)sched_setaffinity(0, sizeof(s->aff_all), &s->aff_all);
	s->aff_set = false;
}

/* A child started early that never ran (it waits for go or go2, or
 * failed): killed and reaped. */
static void kill_unreaped(struct moat_spawn *s)
{
	if (s->started && !s->reaped) {
		siginfo_t si;

		if (s->pidfd >= 0)
			syscall(X_NR_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
		else
			kill(s->pid, SIGKILL);
		while (waitid(P_PID, (id_t)s->pid, &si, WEXITED) < 0 && errno == EINTR)
			;
		s->reaped = true;
		if (!s->ns_pid)
			prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	}
}

void moat_spawn_release(struct moat_spawn *s)
{
	aff_restore(s);
	kill_unreaped(s);
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->pidfd = -1;
	if (s->report_fd >= 0)
		close(s->report_fd);
	s->report_fd = -1;
	close_status(s);
	/* (a caller that exits right after leaves the child's stack to its
	 * exit: unmapping memory the child ran on flushes the other CPUs) */
	if (s->child_stack && !s->hold_mntns)
		munmap(s->child_stack, CHILD_STACK_SIZE);
	s->child_stack = NULL;
	if (s->hold_mntns && s->detach_teardown && s->mntns_fd >= 0)
		teardown_detached(s);
	/* (hold_mntns otherwise: left to the caller's exit) */
	if (s->mntns_fd >= 0 && !s->hold_mntns)
		close(s->mntns_fd);
	s->mntns_fd = -1;
	if (s->ll_fd >= 0 && !s->hold_mntns)
		close(s->ll_fd);
	s->ll_fd = -1;
	if (s->parent_pidfd >= 0)
		close(s->parent_pidfd);
	s->parent_pidfd = -1;
	moat_bpf_release(&s->bpf);
	moat_bpf_release(&s->early_bpf);
	if (s->hold_mntns)
		moat_mounts_leave(&s->mounts); /* (the caller exits right after) */
	else
		moat_mounts_release(&s->mounts);
	moat_cgroup_release(&s->cg);
	free(s->envp);
	s->envp = NULL;
	if (s->scratch[0]) {
		moat_rmtree(s->scratch);
		s->scratch[0] = '\0';
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* The children of pid (its main thread's), into out; 0 when it is gone. */
static size_t children_of(pid_t pid, pid_t *out, size_t max)
{
	char path[64], buf[16384];
	size_t n = 0;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	for (char *t = buf; *t && n < max;) {
		long v = strtol(t, &t, 10);

		if (v > 0)
			out[n++] = (pid_t)v;
		while (*t == ' ' || *t == '\n')
			t++;
	}
	return n;
}

/* Our direct children (orphans of the sandbox are reparented to us, the
 * subreaper). */
static size_t list_children(pid_t *out, size_t max)
{
	return children_of(getpid(), out, max);
}

/* The parent of pid, from /proc/PID/stat, or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *rp;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	rp = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	if (!rp || rp[1] != ' ' || !rp[2] || rp[3] != ' ')
		return -1;
	return (pid_t)strtol(rp + 4, NULL, 10);
}

#define FREEZE_MAX 65536

/* SECURITY: without a PID namespace or a cgroup, a tree that forks as fast
 * as it is killed (a fork bomb ignoring SIGTERM) outlives a kill by
 * generations and ends up under init. Instead every descendant is stopped
 * first (SIGSTOP cannot be caught, and a stopped process cannot fork),
 * walking the tree again until a walk finds no process it had not stopped,
 * then all are killed. Each signal goes through a pidfd opened after the
 * process was seen as the child of one already stopped (or of moat), so a
 * pid reused meanwhile by a process outside the tree is never signalled. */
static void freeze_and_kill(void)
{
	pid_t *seen = malloc(FREEZE_MAX * sizeof(*seen));
	size_t nseen = 0;
	bool grew = true;

	if (!seen)
		return;
	for (int walk = 0; walk < 64 && grew; walk++) {
		grew = false;
		for (size_t at = 0; at <= nseen; at++) {
			pid_t parent = at == 0 ? getpid() : seen[at - 1];
			pid_t kids[1024];
			size_t n = children_of(parent, kids, MOAT_ARRAY_SIZE(kids));

			for (size_t i = 0; i < n && nseen < FREEZE_MAX; i++) {
				bool known = false;
				int pfd;

				for (size_t k = 0; k < nseen && !known; k++)
					known = seen[k] == kids[i];
				if (known)
					continue;
				pfd = (int)syscall(X_NR_pidfd_open, kids[i], 0);
				if (pfd < 0)
					continue;
				if (parent_of(kids[i]) == parent) {
					syscall(X_NR_pidfd_send_signal, pfd, SIGSTOP, NULL, 0);
					seen[nseen++] = kids[i];
					grew = true;
				}
				close(pfd);
			}
		}
	}
	/* every one stopped: now kill them, leaves first does not matter */
	for (size_t k = nseen; k-- > 0;) {
		int pfd = (int)syscall(X_NR_pidfd_open, seen[k], 0);

		if (pfd >= 0) {
			syscall(X_NR_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
			close(pfd);
		}
	}
	free(seen);
}

/* SECURITY: the process group is signalled only while one of our own
 * (unreaped) children is in it: then its id cannot have been reused by a
 * group outside the tree. */
static bool pgrp_ours(pid_t pgid)
{
	pid_t kids[256];
	size_t n = list_children(kids, MOAT_ARRAY_SIZE(kids));

	for (size_t i = 0; i < n; i++)
		if (getpgid(kids[i]) == pgid)
			return true;
	return false;
}

/* Kill everything the sandbox started. A PID namespace dies with its init;
 * a cgroup has cgroup.kill; otherwise moat, the subreaper, stops and kills
 * the whole tree (freeze_and_kill), then reaps what comes back to it. */
static void kill_tree(struct moat_spawn *s, bool main_alive)
{
	if (s->cg.dir_fd >= 0)
		moat_cgroup_kill(&s->cg);
	if (main_alive)
		kill(s->pid, SIGKILL);
	if (s->plan->pidns && s->cg.dir_fd < 0)
		return; /* the kernel kills the namespace when its init dies */
	if (!main_alive) {
		/* the command is reaped: every process it left is now our child
		 * (we are the subreaper) or a descendant of one, so with no child
		 * at all nothing of the sandbox is left (the common case: no
		 * walk, no freeze) */
		pid_t kids[1];

		if (list_children(kids, 1) == 0)
			return;
	}
	/* the command's process group first: one call stops every process
	 * that did not leave it (a plain fork bomb), before moat, starved of
	 * CPU by it, walks the tree */
	if (s->own_pgrp && s->pid > 0 && pgrp_ours(s->pid))
		kill(-s->pid, SIGSTOP);
	freeze_and_kill();
	if (s->own_pgrp && s->pid > 0 && pgrp_ours(s->pid))
		kill(-s->pid, SIGKILL);
	for (int round = 0; round < 10000; round++) {
		pid_t kids[512];
		size_t n = list_children(kids, MOAT_ARRAY_SIZE(kids));
		size_t others = 0;

		for (size_t i = 0; i < n; i++) {
			if (kids[i] == s->pid && main_alive)
				continue; /* reaped through its pidfd by the caller */
			kill(kids[i], SIGKILL);
			others++;
		}
		for (size_t i = 0; i < n; i++)
			if (kids[i] != s->pid || !main_alive)
				waitpid(kids[i], NULL, __WALL);
		if (!others)
			break;
	}
}

static int setup_error(struct moat_spawn *s, struct moat_error *err)
{
	const struct moat_child_report *rep = &s->report;

	if (rep->step == MOAT_STEP_EXEC) {
		moat_error_set(err, "cannot run '%s': %s", rep->detail, strerror(rep->err));
		return rep->err == ENOENT || rep->err == ENOTDIR ? MOAT_RUN_EXIT_NOTFOUND
								 : MOAT_RUN_EXIT_NOEXEC;
	}
	moat_error_set(err, "cannot set up the sandbox (%s%s%s): %s",
		       moat_step_name((enum moat_step)rep->step), rep->detail[0] ? ": " : "",
		       rep->detail, strerror(rep->err));
	return MOAT_RUN_EXIT_SETUP;
}

int moat_spawn_run(struct moat_spawn *s, struct moat_error *err)
{
	const struct moat_plan *p = s->plan;
	sigset_t cancel;
	int sfd = -1, status = 0, ret, r;
	double deadline = 0, grace = 0;
	bool main_alive = true, piped = false, have_piped = false;
	int piped_status = 0;
	ssize_t n;
	const char *search = NULL;

	memset(&s->report, 0, sizeof(s->report));
	s->tty_fd = -1;
	s->tty_pgrp = 0;
	for (int fd = 0; fd < 3; fd++) {
		pid_t fg;

		if (!isatty(fd))
			continue;
		fg = tcgetpgrp(fd);
		if (fg > 0 && fg == getpgrp()) {
			s->tty_fd = fd;
			s->tty_pgrp = fg;
		}
		break;
	}
	for (size_t i = 0; s->envp[i]; i++)
		if (!strncmp(s->envp[i], "PATH=", 5))
			search = s->envp[i] + 5;
	if (!search)
		search = getenv("PATH");
	if (!search || !*search)
		search = "/usr/local/bin:/usr/bin:/bin";
	s->search_path = search;

	/* protected directories that do not exist: empty ones now, read-only
	 * mount points in the sandbox (an early child mounts after go; an
	 * armed one has them) */
	if (p->mntns && !s->armed && (r = moat_ns_make_placeholders(p, &s->mounts, err)) < 0)
		return r == -ESTALE ? r : MOAT_RUN_EXIT_SETUP;
	if (s->armed) {
		/* it is set up: into the call's directory, and exec */
		s->start_ms = now_ms();
		__atomic_store_n(&s->go2, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &s->go2, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	} else if (!s->started) {
		int nsflags = (p->userns ? CLONE_NEWUSER : 0) | (p->mntns ? CLONE_NEWNS : 0) |
			      (p->pidns ? CLONE_NEWPID : 0) | (p->ipcns ? CLONE_NEWIPC : 0) |
			      (p->netns ? CLONE_NEWNET : 0);

		r = spawn_clone(s, false, nsflags, err);
		if (r) {
			moat_ns_remove_placeholders(p, &s->mounts, NULL);
			return r;
		}
	} else {
		/* everything is prepared: the child goes on (and from now on we
		 * only wait, as with vfork) */
		s->start_ms = now_ms();
		__atomic_store_n(&s->go, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &s->go, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	/* the child has exec'd or exited when the pipe closes (its copy of the
	 * write end is close-on-exec) */
	do
		n = read(s->report_fd, &s->report, sizeof(s->report));
	while (n < 0 && errno == EINTR);
	close(s->report_fd);
	s->report_fd = -1;
	/* the child has exec'd (or failed): our memory is ours alone again,
	 * and the command runs while the scan's record goes to disk (not when
	 * the setup failed: its check may have found the workspace changed) */
	if (n != (ssize_t)sizeof(s->report) || s->report.step == MOAT_STEP_NONE)
		moat_ns_scan_save(p, &s->mounts);

	/* cancellation signals arrive through a signalfd; the rest as before */
	sigemptyset(&cancel);
	sigaddset(&cancel, SIGINT);
	sigaddset(&cancel, SIGTERM);
	sigaddset(&cancel, SIGHUP);
	sigaddset(&cancel, SIGQUIT);
	{
		sigset_t m = s->child_mask;

		sigaddset(&m, SIGINT);
		sigaddset(&m, SIGTERM);
		sigaddset(&m, SIGHUP);
		sigaddset(&m, SIGQUIT);
		sigprocmask(SIG_SETMASK, &m, NULL);
	}
	sfd = signalfd(-1, &cancel, SFD_CLOEXEC | SFD_NONBLOCK);

	if (n == (ssize_t)sizeof(s->report) && s->report.step != MOAT_STEP_NONE) {
		while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
			;
		main_alive = false;
		s->reaped = true;
		kill_tree(s, false);
		ret = setup_error(s, err);
		/* namespaces made without a user namespace, whose first mount a
		 * security module refuses (a container's profile): re-planned
		 * without namespaces, like a refused clone */
		if (!s->ns_user && p->mntns && s->report.step == MOAT_STEP_MOUNT &&
		    (s->report.err == EPERM || s->report.err == EACCES) &&
		    !strcmp(s->report.detail, "making / a slave"))
			ret = -EPERM;
		/* the workspace changed while the sandbox was prepared (the
		 * scan's check, or a hit no longer what it found): prepared
		 * again (-ESTALE) */
		else if (s->report.step == MOAT_STEP_MOUNT && s->report.err == ESTALE) {
			moat_error_set(err, "%s", s->report.detail); /* (the path) */
			ret = -ESTALE;
		}
		/* a fresh /proc the probe did not see refused (a masked /proc
		 * it could not read as one): re-planned without a PID
		 * namespace (-EAGAIN) */
		else if (p->fresh_proc && s->report.step == MOAT_STEP_MOUNT &&
			 !strcmp(s->report.detail, "proc on /proc"))
			ret = -EAGAIN;
		goto out;
	}

	if (p->timeout_s > 0)
		deadline = s->start_ms + (double)p->timeout_s * 1000.0;
	for (;;) {
		struct pollfd pf[3] = {{s->pidfd, POLLIN, 0},
				       {sfd, POLLIN, 0},
				       {piped ? -1 : s->status_fd, POLLIN, 0}};
		double t = now_ms(), until = 0;
		int timeout = -1, pr;

		if (deadline > 0)
			until = deadline;
		if (grace > 0 && (until == 0 || grace < until))
			until = grace;
		if (until > 0) {
			if (t >= until) {
				if (deadline > 0 && t >= deadline)
					s->timed_out = true;
				kill_tree(s, true);
				deadline = grace = 0;
				continue; /* now wait for the main child to be reaped */
			}
			timeout = (int)(until - t) + 1;
		}
		pr = poll(pf, 3, timeout);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr > 0 && pf[2].revents && !(pf[0].revents & (POLLIN | POLLHUP))) {
			/* the init said the command's status and is exiting: its
			 * exit is watched for a moment here rather than slept on
			 * (the wake-up of a CPU gone idle costs more on a VM),
			 * yielding each time (the wake-up may have put us on the
			 * init's own CPU, which it needs to finish) */
			double spin_until = now_ms() + INIT_EXIT_SPIN_MS;

			piped = true;
			have_piped = read(s->status_fd, &piped_status, sizeof(piped_status)) ==
				     (ssize_t)sizeof(piped_status);
			while (now_ms() < spin_until) {
				struct pollfd q = {s->pidfd, POLLIN, 0};

				if (poll(&q, 1, 0) > 0)
					break;
				sched_yield();
			}
			continue;
		}
		if (pr > 0 && (pf[0].revents & (POLLIN | POLLHUP))) {
			siginfo_t si;

			memset(&si, 0, sizeof(si));
			if (waitid((idtype_t)P_PIDFD, (id_t)s->pidfd, &si, WEXITED) == 0) {
				if (si.si_code == CLD_EXITED)
					status = W_EXITCODE(si.si_status, 0);
				else
					status = si.si_status & 0x7f; /* WIFSIGNALED form */
			}
			/* the init's exit status stands for the command's; its
			 * status pipe says exactly (a signal, not 128+N) */
			if (have_piped) {
				status = piped_status;
			} else if (s->status_fd >= 0 && !piped) {
				int st;

				if (read(s->status_fd, &st, sizeof(st)) == (ssize_t)sizeof(st))
					status = st;
			}
			main_alive = false;
			s->reaped = true;
			break;
		}
		if (pr > 0 && sfd >= 0 && (pf[1].revents & POLLIN)) {
			struct signalfd_siginfo ssi;

			while (read(sfd, &ssi, sizeof(ssi)) == (ssize_t)sizeof(ssi)) {
				if (!s->cancel_signal)
					s->cancel_signal = (int)ssi.ssi_signo;
				/* a terminal's signal reached the command already
				 * (same process group); one sent to moat is passed on */
				if (ssi.ssi_code != SI_KERNEL || s->own_pgrp)
					kill(s->pid, (int)ssi.ssi_signo);
				/* (with a PID namespace, moat's init passes it on) */
				if (grace == 0)
					grace = now_ms() + CANCEL_GRACE_MS;
			}
		}
	}
	s->elapsed_ms = now_ms() - s->start_ms;
	/* leftovers: background jobs the command did not wait for */
	kill_tree(s, main_alive);
	if (main_alive) {
		/* (poll failed): SIGKILLed above; reaped before anything looks
		 * at the workspace, so nothing of the sandbox runs then */
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		while (waitid((idtype_t)P_PIDFD, (id_t)s->pidfd, &si, WEXITED) < 0 && errno == EINTR)
			;
		main_alive = false;
		s->reaped = true;
		if (!status)
			status = SIGKILL; /* WIFSIGNALED form */
	}
	s->wait_status = status;
	if (s->end_stdio) {
		int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (nul >= 0) {
			(void)dup2(nul, 1);
			(void)dup2(nul, 2);
			close(nul);
		}
	}
	if (s->timed_out) {
		moat_error_set(err,
			       "timed out after %ld s; the command and all its processes were "
			       "killed",
			       p->timeout_s);
		ret = MOAT_RUN_EXIT_TIMEOUT;
	} else if (WIFEXITED(status)) {
		ret = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		ret = 128 + WTERMSIG(status);
	} else {
		ret = MOAT_RUN_EXIT_SETUP;
	}
	if (s->cancel_signal && !WIFEXITED(status))
		ret = 128 + s->cancel_signal;
out:
	/* SECURITY: the command may have made a process group of its own the
	 * terminal's foreground one (setpgid, tcsetpgrp): the caller's shell
	 * would lose its terminal. Given back (SIGTTOU held: moat may be in the
	 * background of the terminal by now).
	 * Only a foreground group with no process left is the command's (every
	 * process of the sandbox is gone by now): a shell that took the
	 * terminal back after a ^Z and bg is left alone. */
	if (s->tty_fd >= 0) {
		pid_t fg_now = tcgetpgrp(s->tty_fd);

		if (fg_now > 0 && fg_now != s->tty_pgrp && kill(-fg_now, 0) < 0 && errno == ESRCH) {
			sigset_t ttou, old;

			sigemptyset(&ttou);
			sigaddset(&ttou, SIGTTOU);
			sigprocmask(SIG_BLOCK, &ttou, &old);
			(void)tcsetpgrp(s->tty_fd, s->tty_pgrp);
			sigprocmask(SIG_SETMASK, &old, NULL);
		}
	}
	/* every process of the sandbox is gone: the empty stand-ins go too,
	 * and git redirect files it created are set aside */
	moat_ns_remove_placeholders(p, &s->mounts, &s->mntns_fd);
	s->quarantined[0] = '\0';
	s->protected_created[0] = '\0';
	moat_ns_quarantine(p, &s->mounts, s->quarantined, sizeof(s->quarantined),
			   s->protected_created, sizeof(s->protected_created));
	if (sfd >= 0)
		close(sfd);
	aff_restore(s);
	sigprocmask(SIG_SETMASK, &s->child_mask, NULL);
	if (!p->pidns)
		prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	return ret;
}

int moat_spawn_arm(struct moat_spawn *s, struct moat_error *err)
{
	const struct moat_plan *p = s->plan;
	ssize_t n;

	if (!s->started || !s->early || s->armed || !p || !p->mntns || !s->envp) {
		moat_error_set(err, "internal error: nothing to arm");
		return -EINVAL;
	}
	if (moat_ns_make_placeholders(p, &s->mounts, err) < 0)
		return -EIO;
	s->arm = true;
	s->start_ms = now_ms();
	__atomic_store_n(&s->go, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &s->go, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	/* (as after go: we only wait, until the child says it is armed) */
	memset(&s->report, 0, sizeof(s->report));
	do
		n = read(s->report_fd, &s->report, sizeof(s->report));
	while (n < 0 && errno == EINTR);
	aff_restore(s);
	if (n == (ssize_t)sizeof(s->report) && s->report.step == MOAT_STEP_NONE &&
	    s->report.err == MOAT_REPORT_ARMED) {
		memset(&s->report, 0, sizeof(s->report));
		s->armed = true;
		return 0;
	}
	if (n == (ssize_t)sizeof(s->report) && s->report.step != MOAT_STEP_NONE)
		(void)setup_error(s, err);
	else
		moat_error_set(err, "the sandbox's child ended before it was armed");
	moat_spawn_disarm(s);
	return -EIO;
}

void moat_spawn_disarm(struct moat_spawn *s)
{
	const struct moat_plan *p = s->plan;

	kill_unreaped(s);
	if (p && p->mntns)
		moat_ns_remove_placeholders(p, &s->mounts, NULL);
	moat_spawn_release(s);
	s->armed = s->arm = false;
}

void moat_spawn_rearm(struct moat_spawn *s, const struct moat_plan *p, struct moat_mounts *fresh)
{
	/* the stand-ins made for the arming are this run's to remove */
	for (size_t i = 0; i < s->mounts.n && i < fresh->n; i++)
		fresh->ops[i].created = s->mounts.ops[i].created;
	moat_mounts_release(&s->mounts);
	s->mounts = *fresh;
	memset(fresh, 0, sizeof(*fresh));
	fresh->ws_fd = fresh->ws_lock_fd = -1;
	s->plan = p;
}

void moat_spawn_rearm_kept(struct moat_spawn *s, const struct moat_plan *p)
{
	moat_mounts_restart(p, &s->mounts);
	s->plan = p;
}
