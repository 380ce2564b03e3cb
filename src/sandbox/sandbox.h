/* The kernel-facing layer: it applies a plan (src/core/plan.h) and nothing
 * else decides anything here.
 *
 *   probe.c     what this kernel can do, once, into struct moat_kfeatures
 *   landlock.c  raw Landlock syscalls: the ruleset is built in the parent
 *   seccomp.c   the filter, compiled to BPF in the parent with libseccomp
 *   ns.c        namespaces and mounts: prepared in the parent, applied in the child
 *   limits.c    cgroup v2 leaf or rlimits
 *   env.c       the command's environment
 *   spawn.c     the one ordered child setup between clone and exec, and the
 *               parent's wait, timeout and tree kill
 *
 * The parent prepares everything that can fail for an ordinary reason
 * (paths that do not exist, a filter that does not compile) before the
 * child exists; the child only performs the steps that must happen inside
 * the new namespaces, and reports the first failure through a pipe. */
#ifndef MOAT_SANDBOX_H
#define MOAT_SANDBOX_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include <moat/error.h>

#include "core/plan.h"

/* ---- exit statuses of `moat run` (docs/sandbox.md) ---- */
#define MOAT_RUN_EXIT_TIMEOUT 124 /* --timeout expired; the whole tree was killed */
#define MOAT_RUN_EXIT_SETUP 125	  /* moat refused or could not set up the sandbox */
#define MOAT_RUN_EXIT_NOEXEC 126  /* the command was found but could not be executed */
#define MOAT_RUN_EXIT_NOTFOUND 127
/* 128 + N: the command was killed by signal N (as a shell reports it) */

/* ---- probe.c ---- */
/* Fast probe for `moat run`: reads sysctls, asks Landlock and seccomp.
 * MOAT_FAKE_NO_USERNS=1 in the environment (read only here) makes user
 * namespaces look unavailable, for tests on hosts where they are. */
int moat_probe(struct moat_kfeatures *ret);
/* The same in two halves: the first (kernel, Landlock, user namespaces) is
 * what moat_spawn_start needs; the second (seccomp, cgroup) can run while
 * an early child sets itself up. */
int moat_probe_start(struct moat_kfeatures *ret);
int moat_probe_finish(struct moat_kfeatures *kf);
/* Thorough probe for `moat status`: also creates a user namespace. */
int moat_probe_thorough(struct moat_kfeatures *ret);

/* ---- landlock.c ---- */
/* The kernel's Landlock ABI, or 0 with *ret_errno set. */
int moat_landlock_abi(int *ret_errno);
struct moat_mounts;
struct moat_scan_check;
/* Create the plan's (empty) ruleset: *ret_fd, or -1 when the plan has no
 * Landlock. Rules added later through it reach every copy of the fd, also
 * one a child inherited before they were added. */
int moat_landlock_create(const struct moat_plan *p, int *ret_fd, struct moat_error *err);
/* Build the ruleset for the plan in the calling (parent) process, in
 * *ret_fd when it is a ruleset already (moat_landlock_create), else in a
 * new one. scratch is the per-call TMPDIR when the plan has one, else NULL.
 * Without a mount namespace the masked paths in m are left out of every
 * rule, inside the workspace too (rules carved around them by the rules'
 * real paths, landlock.c); rep (may be NULL) lists the writable
 * directories that hold one, where new entries therefore cannot be made
 * (carved), and the directories too deep or too crowded to carve around,
 * which get no rule at all (withheld: nothing in them is reachable, never
 * a gap). A rule that is a masked path (by a link) fails.
 * Returns the ruleset fd (O_CLOEXEC) in *ret_fd, or -1 when the plan has
 * no Landlock; on failure the fd is closed and *ret_fd is -1. */
#define MOAT_LL_CARVE_MAX_RULES 65536 /* rules a carve may add in all */
#define MOAT_LL_CARVE_MAX_DEPTH 64    /* directories a carve walks down */
struct moat_ll_report {
	char carved[512];   /* ", "-joined, cut with "..." */
	char withheld[512]; /* the same */
};
int moat_landlock_build(const struct moat_plan *p, const struct moat_mounts *m, const char *scratch,
			int *ret_fd, struct moat_ll_report *rep, struct moat_error *err);
/* Rules for directories that get a fresh mount in the child (private /tmp,
 * /dev/shm, /run, /proc): Landlock ignores rules on a covered mount point,
 * so these are added by the child, on the new mounts, before enforcing. */
struct moat_ll_late {
	const char *path;
	uint64_t access;
	bool is_dir;
};
#define MOAT_LL_LATE_MAX 24
/* Fill late[] for the plan (and the overlays among the mounts); returns how many. */
int moat_landlock_late_rules(const struct moat_plan *p, const struct moat_mounts *m,
			     struct moat_ll_late *late, int max);
/* Child side: add one rule by path (no allocation). */
int moat_landlock_add_late(int ruleset_fd, const struct moat_ll_late *late);
/* Enforce (child side): landlock_restrict_self. */
int moat_landlock_enforce(int ruleset_fd, uint32_t flags);

/* ---- seccomp.c ---- */
struct moat_bpf {
	void *insns; /* struct sock_filter[] */
	unsigned short len;
	bool owned; /* insns is heap memory (else the precompiled filter) */
};
/* The plan's filter as BPF (parent side): on x86_64 the filter precompiled
 * from the same rows (src/sandbox/seccomp_bpf.h), elsewhere compiled now. */
int moat_seccomp_compile(const struct moat_plan *p, struct moat_bpf *ret, struct moat_error *err);
/* Compile with libseccomp now, whatever the architecture. */
int moat_seccomp_compile_fresh(unsigned variant, struct moat_bpf *ret, struct moat_error *err);
/* libseccomp's program as it writes it (the unit test compares the
 * optimized one with it) */
int moat_seccomp_compile_libseccomp(unsigned variant, struct moat_bpf *ret,
				    struct moat_error *err);
/* Shorten a classic BPF seccomp program without changing what it answers
 * (src/sandbox/bpf_opt.c); a program it does not know, or cannot shorten
 * within classic BPF's jump range, is left as it is (or as the last round
 * that could be encoded left it). Returns 0. */
int moat_bpf_optimize(void *prog, unsigned short *len);
/* Write src/sandbox/seccomp_bpf.h (the precompiled x86_64 filters). */
#include <stdio.h>
int moat_seccomp_write_header(FILE *out, struct moat_error *err);
/* Write the filter as libseccomp pseudo filter code (for the golden test). */
int moat_seccomp_export_pfc(unsigned variant, int fd, struct moat_error *err);
/* Load a compiled filter (child side; no_new_privs must be set). */
int moat_seccomp_load(const struct moat_bpf *b);
void moat_bpf_release(struct moat_bpf *b);

/* What the child reports when a setup step fails. */
struct moat_child_report {
	int step; /* enum moat_step; 0: no failure */
	int err;  /* errno */
	char detail[256];
};

/* ---- ns.c ---- */
enum moat_mount_kind {
	MOAT_MNT_TMPFS = 0, /* an empty tmpfs (private /tmp, /dev/shm, /run) */
	MOAT_MNT_KEEP,	    /* re-expose a host path hidden by a tmpfs (fd opened by the parent) */
	MOAT_MNT_SELF_BIND, /* bind a directory onto itself: it can no longer be renamed away */
	MOAT_MNT_MASK_DIR,  /* an empty, mode 000, read-only directory over a secret directory */
	MOAT_MNT_MASK_FILE, /* an empty, mode 000, read-only file over a secret file */
	MOAT_MNT_RO_BIND,   /* the path itself, read-only (protected paths, ro inside rw) */
	MOAT_MNT_PROC,	    /* a procfs of the sandbox's PID namespace */
	MOAT_MNT_DEVPTS,    /* a new devpts instance; target /dev/pts */
	MOAT_MNT_PTMX,	    /* /dev/pts/ptmx bound over /dev/ptmx */
	MOAT_MNT_OVERLAY,   /* the home directory copy-on-write; writes go to a private tmpfs */
	MOAT_MNT_WRITABLE,  /* a writable rule's path: bound onto itself before the whole
			     * tree is made read-only, then writable again */
	MOAT_MNT_STASH,	    /* a tmpfs on a directory a later tmpfs covers: holds the mask
			     * sources and the overlay's upper layer, unreachable by path */
	MOAT_MNT_REVEAL,    /* a --ro/--rw path inside a masked directory, bound back (its
			     * tree cloned before the mask); the mask is then a tmpfs */
};

struct moat_mount_op {
	enum moat_mount_kind kind;
	char *target;
	int fd;	       /* KEEP: O_PATH fd of the source, else -1 */
	bool is_dir;   /* KEEP: the source is a directory */
	bool readonly; /* KEEP: bind read-only */
	bool placeholder; /* RO_BIND: a protected directory that did not exist:
			   * created empty before the run, removed after it */
	bool created;	  /* placeholder: made by moat_ns_make_placeholders */
	bool optional;	  /* RO_BIND: the target of a protected symlink, which may
			   * not be visible in the sandbox (under /tmp): skipped then */
	bool nofollow;	  /* RO_BIND: the symlink itself, bound onto itself so
			   * that it cannot be removed or replaced (EBUSY) */
	bool standin;	  /* RO_BIND: a missing directory above a protected name,
			   * made empty for the run like a protected directory */
	dev_t dev;	  /* REVEAL: the path's device and inode when planned; RO_BIND
			   * with watch: the protected entry's when the run started */
	ino_t ino;
	bool watch;	  /* RO_BIND: dev and ino are set (moat_ns_quarantine looks
			   * whether the entry was replaced during the run) */
	bool reveals;	  /* MASK_DIR: paths below are bound back (REVEAL): the mask
			   * is an empty tmpfs holding their mount points, sealed
			   * read-only after them */
	bool beneath;	  /* MASK_*: a hit of the workspace scan below the workspace
			   * (not a link): attached through a descriptor opened
			   * beneath the workspace, no link followed */
	char data[80];	  /* TMPFS, DEVPTS: mount options */
	unsigned long flags;
	/* the target's device, inode and change time (0: absent) when the
	 * sandbox was armed (moat_mounts_note_ids): the change time moves
	 * with every link and unlink, so the same inode linked back under
	 * the name (a new directory entry, which the mount made on the old
	 * one does not cover) is not taken for it */
	dev_t id_dev;
	ino_t id_ino;
	long long id_ctime_ns;
};

struct moat_mounts {
	struct moat_mount_op *ops;
	size_t n, cap;
	size_t nkeep;	     /* of them MOAT_MNT_KEEP and MOAT_MNT_REVEAL */
	size_t nmasks_found; /* for the audit record and --print-plan */
	size_t nprotected_missing;
	char **protected_missing; /* protected names that did not exist (checked after the run) */
	void *scan_save;	  /* the scan's record, to be kept on disk (ns.c) */
	/* the directories the scan relied on, checked once the masks are
	 * attached (scancheck.h); NULL: no scan */
	struct moat_scan_check *check;
	size_t nquarantine;
	char **quarantine; /* git redirect files that did not exist: set aside if created */
	bool gitcfg_watch;	    /* submodule configs are compared after the run */
	bool git_was_missing;	    /* no .git before the run: a .git file made inside is set aside */
	bool nested_watch;	    /* nested repositories are checked after the run */
	long long index_ctime_ns;   /* .git/index before the run (0: none) */
	long long run_start_ns;	    /* CLOCK_REALTIME when the run was prepared */
	size_t ngitcfg;
	struct moat_gitcfg_seen {
		char *rel;	    /* below the workspace */
		long long ctime_ns; /* before the run */
	} *gitcfg;
	bool ws_locked;		  /* ws_lock_fd holds a shared flock of the workspace */
	int ws_lock_fd;		  /* (stand-ins are removed only by the last run) */
	bool has_ws_fd;
	int ws_fd; /* the workspace, opened before the run: post-run work is relative to it */
	size_t nlinks;
	struct moat_protected_link {
		char *name;	/* a protected name that is a symlink (its target is bound
				 * read-only; the link itself is checked after the run) */
		char *target;	/* the link's text, to put it back */
		dev_t dev;
		ino_t ino;
		bool dangling; /* its target did not exist */
	} *links;
	/* Without a mount namespace (Landlock + seccomp only) protected names
	 * cannot be read-only: those that exist are recorded before the run,
	 * with their content, and what the run changed in them is set aside
	 * after it and the original put back (moat_ns_quarantine) */
	size_t nguard;
	struct moat_guard {
		char *rel; /* below the workspace; parents before children */
		dev_t dev;
		ino_t ino;
		long long ctime_ns;
		mode_t mode;
		char *data; /* a file's content or a link's text; NULL: not kept */
		size_t len;
		bool over;  /* a directory with too many entries: only itself compared */
	} *guard;
	size_t guard_kept; /* bytes of content kept */
	char guard_over[256]; /* protected directories too large to guard */
};

/* The mount operations of one sandbox: at most MOAT_MASK_MAX_MOUNTS (the
 * kernel's fs.mount-max, 100,000 by default, bounds them too, with the
 * host's own mounts counted: moat_ns_prepare refuses past what is left),
 * of which at most MOAT_MNT_MAX_KEEP paths kept visible or bound back. */
#define MOAT_MASK_MAX_MOUNTS 100000
#define MOAT_MNT_MAX_KEEP 512

/* Resolve masks, protected paths and hidden-but-kept paths into an ordered
 * list of mount operations (parent side: lstat, scan, open O_PATH). */
int moat_ns_prepare(const struct moat_plan *p, struct moat_mounts *ret, struct moat_error *err);
/* A session's runner started ahead scans the workspace of its predicted
 * plan while the agent thinks; moat_ns_prepare in this process then reads
 * again only the directories changed since (ns.c: the scan ahead). It
 * stops, keeping nothing, once cancel_fd is readable (the call has come;
 * -1: never). */
void moat_ns_scan_ahead(const struct moat_plan *p, int cancel_fd);
/* Keep the workspace scan's record on disk for the next run in this
 * workspace (ns.c: the scan record); after go, off the critical path. */
void moat_ns_scan_save(const struct moat_plan *p, struct moat_mounts *m);
/* The scan records' key goes (a command about to run without the seccomp
 * filter could read it). */
void moat_ns_scan_key_drop(void);
/* A session's hold on the workspace's stand-ins (ns.c): a descriptor
 * holding its shared lock, or -1; and the sweep of the stand-ins when the
 * session has ended (nothing when runs still hold the lock). */
int moat_ns_standins_hold(const char *ws);
void moat_ns_standins_sweep(const struct moat_plan *p);
void moat_mounts_release(struct moat_mounts *m);
/* For a process that exits right after (hold_mntns): the workspace lock
 * is let go as by moat_mounts_release, and the rest (the scan's records of
 * every directory, an open descriptor per mask: milliseconds of free() in
 * a big workspace, and in a forked runner a page copied for each write)
 * is left to the exit, still reachable. m is emptied either way. */
void moat_mounts_leave(struct moat_mounts *m);
/* Each target's identity now (op->id_dev, op->id_ino), for
 * moat_mounts_same. */
void moat_mounts_note_ids(struct moat_mounts *m);
/* Would mounts fresh (prepared for a call, ids noted) do exactly what
 * armed (prepared ahead of it, ids noted then) did: the same operations
 * on the same files, the same records for after the run? A secret file
 * replaced since (a new inode: the mount on the old one no longer covers
 * the path), a mask or a protected name more or less, a kept tree moved:
 * false, and the call's sandbox is made afresh. */
bool moat_mounts_same(const struct moat_mounts *armed, const struct moat_mounts *fresh);
/* Mounts prepared ahead of the run, taken for it: what the checks after
 * the run judge from its start (the time, the git index) noted again. */
void moat_mounts_restart(const struct moat_plan *p, struct moat_mounts *m);
/* Parent side, right before the sandbox starts (never for --print-plan):
 * create the placeholder directories (protected names that did not exist,
 * so that they are read-only mount points in the sandbox, where the command
 * could otherwise create them: .vscode/tasks.json or .claude/settings.json
 * run outside it later). Each is made with mkdirat below the workspace
 * opened without following symlinks. Returns 0 or -errno (err set): the
 * run must not start. moat_ns_remove_placeholders removes the ones it
 * made, if they are still empty. */
int moat_ns_make_placeholders(const struct moat_plan *p, struct moat_mounts *m,
			      struct moat_error *err);
/* ns_hold: a descriptor holding the sandbox's mount namespace open, or
 * NULL; closed (and set to -1) before the first removal. */
void moat_ns_remove_placeholders(const struct moat_plan *p, struct moat_mounts *m, int *ns_hold);
/* After the run (every process of the sandbox gone): git files that point
 * git elsewhere (.git/commondir, .git/config.worktree) and did not exist
 * before, submodule configs changed to run code, and protected names that
 * did not exist before (a new .git/config and .git/hooks judged by their
 * content) are renamed to NAME.moat-quarantined (never over an earlier
 * one); their names are appended to out (", " separated). Protected names
 * created and kept are appended to created. */
void moat_ns_quarantine(const struct moat_plan *p, struct moat_mounts *m, char *out, size_t outsz,
			char *created, size_t createdsz);
/* Child side (between clone and exec: no allocation, no stdio). Each
 * returns 0 or -errno with rep filled. */
int moat_ns_child_userns(uid_t uid, gid_t gid, struct moat_child_report *rep);
int moat_ns_child_mounts(const struct moat_mounts *m, struct moat_child_report *rep);
/* After moat_ns_child_mounts: did the copy-on-write home view mount? */
bool moat_ns_child_cow_ok(void);
int moat_ns_child_pid_max(long pids, struct moat_child_report *rep);
void moat_ns_child_shm_limit(unsigned long long mem_bytes);
/* The loopback of a new network namespace brought up. Raw system calls
 * (rawsys.h): it runs beside the parent after an early start. */
int moat_ns_child_loopback(struct moat_child_report *rep);
/* The mounts as a JSON array (after prepare), for --print-plan. */
int moat_mounts_to_json(const struct moat_mounts *m, struct moat_buf *out);

/* ---- limits.c ---- */
struct moat_cgroup {
	int dir_fd;   /* the leaf, or -1 */
	int procs_fd; /* leaf/cgroup.procs opened for writing, or -1 */
	char path[512];
};
/* Create a leaf with memory.max/pids.max when the plan uses cgroups. */
int moat_cgroup_create(const struct moat_plan *p, const struct moat_kfeatures *kf,
		       struct moat_cgroup *ret, struct moat_error *err);
/* Kill everything in the leaf (cgroup.kill), then remove it. */
void moat_cgroup_kill(struct moat_cgroup *cg);
void moat_cgroup_release(struct moat_cgroup *cg);

struct moat_rlimits {
	int n;
	struct {
		int resource;
		uint64_t cur, max;
	} v[8];
};
/* Decide the rlimits for the plan (parent side; clamps to the hard limits
 * the process already has, since an unprivileged process cannot raise them). */
int moat_rlimits_prepare(const struct moat_plan *p, const struct moat_kfeatures *kf,
			 struct moat_rlimits *ret, struct moat_error *err);
/* Apply (child side). Returns 0 or -errno with *ret_failed = the resource. */
int moat_rlimits_apply(const struct moat_rlimits *r, int *ret_failed);

/* ---- env.c ---- */
/* Build the command's environment from the parent's (NULL-terminated).
 * scratch: TMPDIR to set, or NULL. The result is one heap block (free it). */
int moat_env_build(const struct moat_plan *p, char *const *parent_env, const char *scratch,
		   char ***ret, size_t *ret_dropped);
/* The home directory of uid in /etc/passwd, without NSS (moat is linked
 * statically): 0, -ENOENT, -ENAMETOOLONG or an open error. */
int moat_passwd_home(uid_t uid, char *out, size_t outsz);
/* The default audit log path: $XDG_STATE_HOME/moat/audit.jsonl, else
 * $HOME/.local/state/moat/audit.jsonl (here, below the audit writer, so
 * that the runner can protect it). 0, -ENOENT (no home), -ENAMETOOLONG. */
int moat_audit_default_path(char *out, size_t outsz);

/* ---- spawn.c ---- */
/* Steps of the child setup, in order; reported on failure (docs/sandbox.md). */
enum moat_step {
	MOAT_STEP_NONE = 0,
	MOAT_STEP_PARENT,  /* die-with-parent */
	MOAT_STEP_USERNS,  /* uid/gid maps of the new user namespace */
	MOAT_STEP_MOUNT,   /* one of the mounts (detail says which) */
	MOAT_STEP_PID_MAX, /* the PID namespace's pid_max (process limit) */
	MOAT_STEP_NETWORK, /* bring up loopback in the new network namespace */
	MOAT_STEP_CGROUP,  /* join the cgroup leaf */
	MOAT_STEP_RLIMITS, /* resource limits */
	MOAT_STEP_CHDIR,   /* the working directory */
	MOAT_STEP_FDS,	   /* closing inherited descriptors */
	MOAT_STEP_SIGNALS, /* default signal dispositions */
	MOAT_STEP_CAPS,	   /* dropping capabilities */
	MOAT_STEP_NO_NEW_PRIVS,
	MOAT_STEP_LANDLOCK,
	MOAT_STEP_SECCOMP,
	MOAT_STEP_INIT, /* starting the command under the PID namespace's init */
	MOAT_STEP_EXEC,
	MOAT_STEP__COUNT,
};
const char *moat_step_name(enum moat_step s);

struct moat_spawn {
	const struct moat_plan *plan;
	/* the caller's terminal where moat's process group is its foreground
	 * one: given back after the run if the command took it (tcsetpgrp) */
	int tty_fd;
	pid_t tty_pgrp;
	bool own_pgrp; /* no PID namespace, no terminal: the command leads its own
			* process group, so one kill(-pgid) reaches the whole tree */
	const struct moat_kfeatures *kf;
	int ll_fd;
	/* hold_mntns: the caller exits right after the run: the child's mount
	 * namespace is kept open (mntns_fd) so that its teardown (every mount
	 * unmounted, an RCU grace period) is not in the exit of the sandbox's
	 * last process, which moat waits for; release hands it and the
	 * Landlock ruleset (slow to free) to a process of their own that
	 * closes them and exits, which nobody waits for (detach_teardown:
	 * the caller's own exit is waited for, as `moat run`'s is by its
	 * shell), or leaves them to the caller's exit (the bash tool's
	 * runner, whose exit nobody waits for; sanitizer builds) */
	bool hold_mntns;
	bool detach_teardown;
	/* the caller's stdout and stderr (1 and 2) are the command's alone
	 * (the bash tool's runner): once every process of the sandbox is
	 * gone they are closed (made /dev/null), so that whoever reads them
	 * sees their end while the checks after the run go on */
	bool end_stdio;
	int mntns_fd;
	struct moat_ll_late ll_late[MOAT_LL_LATE_MAX];
	int nll_late;
	struct moat_bpf bpf;
	/* Landlock + seccomp only: the filter an early child loaded before
	 * go (moat_plan_early's), the plan's own by moat_spawn_agrees */
	struct moat_bpf early_bpf;
	struct moat_mounts mounts;
	struct moat_rlimits rl;
	struct moat_cgroup cg;
	char **envp;
	size_t env_dropped;
	char scratch[256];  /* per-call TMPDIR (plans without a mount namespace), "" none */
	struct moat_ll_report ll_rep; /* without a mount namespace: the carve (landlock.c) */
	uid_t uid;
	gid_t gid;
	int parent_pidfd;

	/* the child */
	bool started;		      /* cloned (early by moat_spawn_start, or by moat_spawn_run) */
	bool early;		      /* started early: it runs beside the parent until go */
	bool early_net_allowed;	      /* ... for a plan with the host's network (no netns) */
	/* an early child runs on another CPU than the parent until go (the
	 * scheduler tends to queue it behind the parent on the same one),
	 * then on all of the parent's again */
	bool aff_set;
	cpu_set_t aff_all, aff_other;
	bool reaped;		      /* waited for */
	bool ns_user, ns_net, ns_pid; /* the child's new namespaces (step 2, 3) */
	int go;			      /* futex word the early child waits on: 0 wait, 1 go */
	/* armed (moat_spawn_arm): the early child went through every step but
	 * the exec ahead of its call, and waits on go2 for the call's
	 * working directory and command (moat_spawn_run) */
	bool arm, armed;
	int go2; /* 0 wait, 1 go */
	int net_ready;		      /* futex word: the network helper is done (early child) */
	int net_fd;		      /* its network namespace (in the child's table), or -errno */
	int pidfd;		      /* of the child */
	int report_fd;		      /* read end of the child's report pipe */
	int child_report_fd;	      /* the write end, as the child sees it */
	int status_fd;		      /* read end of the init's status pipe (PID namespace) */
	int child_status_fd;	      /* the write end: the command's wait status, 4 bytes */
	sigset_t child_mask;	      /* the mask the child restores before exec (ours at clone) */
	const char *search_path;      /* PATH the child searches for argv[0] */
	void *child_stack;	      /* mapped for a child that borrows our memory */
	double start_ms;	      /* go (or clone), for --timeout */

	/* results */
	pid_t pid;
	struct moat_child_report report;
	bool timed_out;
	int cancel_signal; /* a signal moat received and forwarded, 0 none */
	int wait_status;   /* as from waitpid */
	double elapsed_ms;
	char protected_created[512]; /* protected names that appeared during the run */
	char quarantined[2048];	     /* files created or changed inside, set aside */
};

/* The life of one sandboxed command:
 *   moat_spawn_init      always first
 *   moat_spawn_start     optional, for a plan that will deny the network
 *                        with user namespaces (kf->userns): clone the child
 *                        now, before the plan is built, so that it creates
 *                        its network namespace (the costliest step, about a
 *                        third of the start-up) while we plan and prepare;
 *                        it waits for moat_spawn_run. A no-op where that
 *                        does not apply. -EPERM: user namespaces refused
 *                        (clear kf->userns and go on without them).
 *   moat_spawn_prepare   everything else, in the parent: Landlock rules,
 *                        seccomp BPF, mounts, rlimits, cgroup, environment;
 *                        refuses a plan other than the early child's
 *   moat_spawn_run       let the child go (or clone it now), wait
 *   moat_spawn_release   always last; kills a started child that never ran.
 * A refusal between start and run (the fallback policy) just releases. */
void moat_spawn_init(struct moat_spawn *s, const struct moat_kfeatures *kf);
int moat_spawn_start(struct moat_spawn *s, bool net_allowed, struct moat_error *err);
/* Does the plan ask for exactly the sandbox a started child was made for? */
bool moat_spawn_agrees(const struct moat_spawn *s, const struct moat_plan *p);
int moat_spawn_prepare(struct moat_spawn *s, const struct moat_plan *p, char *const *parent_env,
		       struct moat_error *err);
/* Ahead of the call (a started early child, a plan with a mount
 * namespace, prepared): placeholders made, then the child takes every
 * step up to the exec (mounts, limits, Landlock, seccomp) and waits. 0
 * when it waits; otherwise (err) the child is gone and the spawn can only
 * be released. The call then needs a plan that moat_plan_same_sandbox
 * holds to this one, and mounts that moat_mounts_same holds to these
 * (the caller swaps its fresh ones in: moat_spawn_rearm), and
 * moat_spawn_run lets the child chdir to the call's directory and exec. */
int moat_spawn_arm(struct moat_spawn *s, struct moat_error *err);
/* An armed child the call cannot use: killed, its stand-ins removed,
 * everything released. */
void moat_spawn_disarm(struct moat_spawn *s);
/* The call's plan and freshly prepared mounts (taken over) in place of
 * the armed ones; the stand-ins the arming made stay this run's to
 * remove. */
void moat_spawn_rearm(struct moat_spawn *s, const struct moat_plan *p, struct moat_mounts *fresh);
/* The call's plan in place of the armed one, the armed mounts kept (a
 * watch saw nothing they were made from change): moat_mounts_restart. */
void moat_spawn_rearm_kept(struct moat_spawn *s, const struct moat_plan *p);
/* Clone (unless started), set up in the child, exec, wait (with the
 * timeout), kill the tree. Returns the exit status moat should exit with
 * (the command's, passed through; or one of MOAT_RUN_EXIT_*), with err
 * filled when moat itself failed (report.step says where). -EAGAIN-like
 * clone failures of user namespaces are returned as -EPERM so the caller can
 * re-plan without them. */
int moat_spawn_run(struct moat_spawn *s, struct moat_error *err);
void moat_spawn_release(struct moat_spawn *s);
/* Remove a directory tree without following symlinks. */
void moat_rmtree(const char *path);

#endif
