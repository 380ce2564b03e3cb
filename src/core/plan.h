/* The sandbox plan: what `moat run` will enforce, as plain data.
 *
 * Three inputs, one output:
 *   profile   the capabilities asked for (seed 004's four dimensions:
 *             filesystem, network, process, environment), itself the merge of
 *             layers (built-in profile, config profile, flags) with seed 003's
 *             rule "a set field replaces, an unset field inherits" and seed
 *             004's immutable dimensions;
 *   context   facts about this call (workspace, cwd, home, denied paths);
 *   features  what this kernel can do, probed once (src/sandbox/probe.c) or
 *             faked by tests.
 * The plan records every rule, every mechanism chosen, and for every
 * protection whether it was requested and whether it will be enforced
 * (seed 003's requested versus enabled), with a hint for each gap.
 *
 * Pure: no I/O, no getenv, no printing. Only src/sandbox/ applies a plan. */
#ifndef MOAT_CORE_PLAN_H
#define MOAT_CORE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/stat.h>

#include <moat/error.h>

#include "base/str.h"

/* ---- limits on user-controllable sizes (each tested at the boundary) ---- */
#define MOAT_PLAN_MAX_PATHS 256		/* entries in any one path list (rules, masks, protect) */
#define MOAT_PLAN_MAX_PORTS 64		/* --net PORTS */
#define MOAT_PLAN_MAX_ENV_NAMES 128	/* --env NAME entries */
#define MOAT_PLAN_MAX_NAME 63		/* profile names */
#define MOAT_PLAN_MAX_MEM_MB (1L << 22) /* 4 TiB */
#define MOAT_PLAN_MAX_PIDS 4194304L
#define MOAT_PLAN_MAX_TIMEOUT_S (365L * 24 * 3600)
#define MOAT_PLAN_MAX_NOFILE (1L << 20)
#define MOAT_PLAN_MIN_PID_MAX 301 /* the kernel's floor for kernel.pid_max */

/* ---- Landlock vocabulary (kernel uapi values, carried here because older
 * distribution headers stop at ABI 2 or 3) ---- */
#define MOAT_LL_FS_EXECUTE (1ULL << 0)
#define MOAT_LL_FS_WRITE_FILE (1ULL << 1)
#define MOAT_LL_FS_READ_FILE (1ULL << 2)
#define MOAT_LL_FS_READ_DIR (1ULL << 3)
#define MOAT_LL_FS_REMOVE_DIR (1ULL << 4)
#define MOAT_LL_FS_REMOVE_FILE (1ULL << 5)
#define MOAT_LL_FS_MAKE_CHAR (1ULL << 6)
#define MOAT_LL_FS_MAKE_DIR (1ULL << 7)
#define MOAT_LL_FS_MAKE_REG (1ULL << 8)
#define MOAT_LL_FS_MAKE_SOCK (1ULL << 9)
#define MOAT_LL_FS_MAKE_FIFO (1ULL << 10)
#define MOAT_LL_FS_MAKE_BLOCK (1ULL << 11)
#define MOAT_LL_FS_MAKE_SYM (1ULL << 12)
#define MOAT_LL_FS_REFER (1ULL << 13)	  /* ABI 2 */
#define MOAT_LL_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define MOAT_LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define MOAT_LL_NET_BIND_TCP (1ULL << 0)  /* ABI 4 */
#define MOAT_LL_NET_CONNECT_TCP (1ULL << 1)
#define MOAT_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define MOAT_LL_SCOPE_SIGNAL (1ULL << 1)
#define MOAT_LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0) /* ABI 7 */
#define MOAT_LL_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#define MOAT_LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)
#define MOAT_LL_ABI_MAX 7 /* the newest ABI this code knows */

/* What one Landlock ABI can express. */
struct moat_ll_masks {
	int abi;		 /* the ABI used (clamped to MOAT_LL_ABI_MAX); 0: no Landlock */
	uint64_t fs;		 /* handled filesystem rights */
	uint64_t net;		 /* handled network rights */
	uint64_t scoped;	 /* scopes */
	uint32_t restrict_flags; /* flags accepted by landlock_restrict_self */
};

/* The ABI -> rights degradation, one pure table-tested function.
 * abi <= 0 (no Landlock) yields all zero; abi above MOAT_LL_ABI_MAX is
 * treated as MOAT_LL_ABI_MAX (rights we do not know are never handled). */
void moat_landlock_masks(int abi, struct moat_ll_masks *ret);

/* ---- kernel features: probed once, faked by tests ---- */
struct moat_kfeatures {
	int landlock_abi;     /* 0: none */
	int landlock_errno;   /* why none: ENOSYS (not built), EOPNOTSUPP (disabled at boot) */
	bool userns;	      /* a user namespace (and with it mount/pid/net) can be created */
	bool ns_admin;	      /* mount, PID, IPC and network namespaces can be made without one:
			       * CAP_SYS_ADMIN in our own user namespace (root) */
	char userns_why[160]; /* when false: the reason ("sysctl user.max_user_namespaces is 0") */
	bool seccomp;	      /* seccomp filters with SECCOMP_RET_ERRNO */
	bool cgroup;	      /* a delegated cgroup v2 subtree with memory and pids */
	char cgroup_dir[256]; /* where leaves would be created, "" when !cgroup */
	char cgroup_why[160];
	bool pidns_pid_max; /* kernel.pid_max is per PID namespace (Linux >= 6.14) */
	/* a fresh procfs can be mounted in the sandbox's namespaces: false
	 * where the container masks /proc (files or directories under it
	 * covered: the kernel calls a new mount "too revealing" in a user
	 * namespace); then no PID namespace is asked for and the command
	 * keeps the container's /proc (read-only, Landlock's ptrace scope) */
	bool fresh_proc;
	char fresh_proc_why[160]; /* when false: the reason */
	bool is_root;	    /* effective uid 0 */
	unsigned kernel_major, kernel_minor;
};

/* A kernel with everything (ABI 7, user namespaces, seccomp, no cgroup): the
 * base that tests start from before taking features away. */
void moat_kfeatures_full(struct moat_kfeatures *ret);

/* ---- profiles: seed 004's capabilities, layered as seed 003 describes ---- */
enum moat_ws_access {
	MOAT_WS_NONE = 0, /* the workspace is not specially granted */
	MOAT_WS_RO,
	MOAT_WS_RW,
};

enum moat_net_mode {
	MOAT_NET_DENY = 0, /* own network namespace (only loopback), no TCP */
	MOAT_NET_PORTS,	   /* host network, TCP connect only to the listed ports */
	MOAT_NET_ALLOW,	   /* host network */
};

enum moat_env_mode {
	MOAT_ENV_NONE = 0,
	MOAT_ENV_RESTRICTED, /* PATH HOME USER LANG TERM TZ (+ LC_*, named ones) */
	MOAT_ENV_FULL,
};

enum moat_fallback {
	MOAT_FALLBACK_DENY = 0, /* refuse to run (default) */
	MOAT_FALLBACK_ASK,	/* ask on the terminal; no terminal: deny */
	MOAT_FALLBACK_WARN,	/* run with what is enforceable, say what is missing */
};

/* Which fields a profile layer sets (an unset field inherits). */
#define MOAT_PF_WORKSPACE (1u << 0)
#define MOAT_PF_RO (1u << 1)
#define MOAT_PF_RW (1u << 2)
#define MOAT_PF_MASK (1u << 3)
#define MOAT_PF_PROTECT (1u << 4)
#define MOAT_PF_NET (1u << 5)
#define MOAT_PF_TIMEOUT (1u << 6)
#define MOAT_PF_MEM (1u << 7)
#define MOAT_PF_PIDS (1u << 8)
#define MOAT_PF_CPU (1u << 9)
#define MOAT_PF_FSIZE (1u << 10)
#define MOAT_PF_NOFILE (1u << 11)
#define MOAT_PF_ENV (1u << 12)
#define MOAT_PF_ENV_PASS (1u << 13)
#define MOAT_PF_FALLBACK (1u << 14)
#define MOAT_PF_SOCKETS (1u << 15)
#define MOAT_PF_HOME (1u << 16)

/* Seed 004's dimensions, for immutability. */
#define MOAT_DIM_FS (1u << 0)
#define MOAT_DIM_NET (1u << 1)
#define MOAT_DIM_PROC (1u << 2)
#define MOAT_DIM_ENV (1u << 3)

/* A list of strings owned by its profile. A layer's list extends the
 * inherited one, unless replace is set (seed 003's "restrictions" versus
 * "extra"). */
struct moat_strv {
	char **v;
	size_t n;
	bool replace;
	/* moat_strv_add's: the room in v, and a hash of each of the first
	 * hn entries (a set of 100 names is built in every plan: comparing
	 * hashes first keeps that from costing 5,000 strcmp calls) */
	size_t cap, hn;
	uint32_t *h;
};

struct moat_profile {
	char name[MOAT_PLAN_MAX_NAME + 1];
	unsigned set;	    /* MOAT_PF_* fields this layer defines */
	unsigned immutable; /* MOAT_DIM_* a later layer may only tighten */

	/* filesystem */
	enum moat_ws_access workspace;
	struct moat_strv ro;	  /* extra read-only paths */
	struct moat_strv rw;	  /* extra read-write paths */
	struct moat_strv mask;	  /* extra masked paths (on top of the policy's denied paths) */
	struct moat_strv protect; /* read-only names inside a writable workspace */
	struct moat_strv sockets; /* host unix sockets left reachable */
	bool home_cow;		  /* the home directory writable copy-on-write, writes discarded */
	/* network */
	enum moat_net_mode net;
	uint16_t ports[MOAT_PLAN_MAX_PORTS];
	size_t nports;
	/* process; 0 means "no limit" for each */
	long timeout_s;
	long mem_mb;
	long pids;
	long cpu_s;
	long fsize_mb;
	long nofile;
	/* environment */
	enum moat_env_mode env;
	struct moat_strv env_pass; /* names passed even if they look secret */
	/* enforcement */
	enum moat_fallback fallback;
};

void moat_profile_init(struct moat_profile *p, const char *name);
void moat_profile_release(struct moat_profile *p);
/* Append a string to one of p's lists (copied). -E2BIG past MOAT_PLAN_MAX_PATHS. */
int moat_strv_add(struct moat_strv *l, const char *s);
/* Free the strings and empty the list (replace is cleared too). */
void moat_strv_release(struct moat_strv *l);

/* The built-in profiles (seed 002, for Linux): "readonly", "workspace-write"
 * (the default; network allowed), "workspace-write-no-network". */
#define MOAT_PROFILE_DEFAULT "workspace-write"
extern const char *const moat_profile_builtin_names[];
/* Fill p with a built-in profile; -ENOENT for an unknown name (fail closed:
 * the caller refuses to run, seed 002). */
int moat_profile_builtin(const char *name, struct moat_profile *p);
/* Layer over onto base (seed 003): fields set in over replace, lists extend
 * (or replace). A field of a dimension immutable in base may only tighten;
 * otherwise -EPERM with err naming the field. base keeps its name. */
int moat_profile_layer(struct moat_profile *base, const struct moat_profile *over,
		       struct moat_error *err);

/* Deep copy of a profile (lists with their replace flags). 0 or -ENOMEM
 * (then ret holds nothing to release). */
int moat_profile_copy(struct moat_profile *ret, const struct moat_profile *src);

/* ---- named profiles from the configuration (sandbox.profiles) ----
 * A named profile is one layer (seed 003) over the profile it extends: a
 * built-in one or another named one. The chain is resolved from its
 * built-in root upwards, each layer through moat_profile_layer, so the
 * immutable dimensions of a base (seed 004) bind every profile built on it.
 * Seed 004's presets, parameter bindings and trust stages are further
 * layers and fields of the same struct. */
#define MOAT_PLAN_MAX_PROFILES 256 /* named profiles in one configuration */
#define MOAT_PLAN_MAX_EXTENDS 16   /* named profiles in one extends chain */
#define MOAT_PLAN_MAX_RULES 256	   /* per-tool profile rules */

struct moat_profile_def {
	char *name;		   /* moat_profile_name_ok, never a built-in name */
	char *extends;		   /* the base: built-in or named */
	char *description;	   /* free text or NULL */
	struct moat_profile layer; /* what this profile sets (layer.set, layer.immutable) */
};

/* A protected name: relative to the workspace, no empty, "." or ".."
 * components. */
bool moat_protect_name_ok(const char *s);
/* 1 to MOAT_PLAN_MAX_NAME characters of A-Z a-z 0-9 _ . - */
bool moat_profile_name_ok(const char *name);
bool moat_profile_is_builtin(const char *name);

/* Resolve NAME into a complete profile: a built-in one, or a named one
 * (defs) layered over its extends chain. defaults (may be NULL) is layered
 * right over the built-in root, so every named layer can override it (the
 * configuration-wide sandbox.fallback and max_memory_mb). Fails closed:
 * -ENOENT an unknown name or base, -ELOOP a cycle or a chain longer than
 * MOAT_PLAN_MAX_EXTENDS, -EPERM a layer loosening an immutable dimension,
 * -E2BIG a list over its limit; err says which profile, and *ret_culprit
 * (may be NULL) the index in defs of the profile at fault (SIZE_MAX: the
 * name asked for itself). ret is set only on success; its name is NAME. */
int moat_profile_resolve(const char *name, const struct moat_profile_def *defs, size_t ndefs,
			 const struct moat_profile *defaults, struct moat_profile *ret,
			 size_t *ret_culprit, struct moat_error *err);
void moat_profile_def_release(struct moat_profile_def *d);

/* Per-tool profile rules (seed 002: the shell tool gets one profile,
 * another tool another), matched by exact tool name. */
struct moat_tool_rule {
	char *tool;
	char *profile;
};
/* The profile name for a call of TOOL: the first rule naming it, else dflt,
 * else MOAT_PROFILE_DEFAULT. Pure and allocation-free; never NULL. */
const char *moat_profile_for_tool(const struct moat_tool_rule *rules, size_t n, const char *tool,
				  const char *dflt);

/* Parse "--net" values: "deny", "allow", or a comma list of ports 1..65535. */
int moat_parse_net(const char *s, struct moat_profile *p, struct moat_error *err);
int moat_parse_env_mode(const char *s, enum moat_env_mode *ret);
int moat_parse_fallback(const char *s, enum moat_fallback *ret);
const char *moat_net_mode_name(enum moat_net_mode m);
const char *moat_env_mode_name(enum moat_env_mode m);
const char *moat_fallback_name(enum moat_fallback f);

/* Does an environment variable look like a secret (by name, or by value for
 * well-known token shapes)? Used in every environment mode. */
bool moat_env_is_secret(const char *name, const char *value);
/* Is the name one of the restricted mode's safe variables? */
bool moat_env_is_safe(const char *name);

/* ---- the plan ---- */

/* Plan vocabulary for filesystem rights (translated to Landlock by
 * src/sandbox/landlock.c through moat_landlock_access). */
#define MOAT_FS_READ 1u	 /* read files, list directories */
#define MOAT_FS_EXEC 2u	 /* execute files */
#define MOAT_FS_WRITE 4u /* write, create, remove, rename, truncate */
#define MOAT_FS_DEV 8u	 /* ioctls on devices (terminals) */

/* Landlock rights for plan rights, limited to what masks.fs handles. */
uint64_t moat_landlock_access(unsigned fs_rights, const struct moat_ll_masks *m);

struct moat_fs_rule {
	char *path;	 /* absolute, normalized */
	unsigned access; /* MOAT_FS_* */
	bool optional;	 /* skip quietly when it does not exist (system paths) */
	char origin[48]; /* "system", "workspace", "--rw", "profile:NAME" */
};

enum moat_mask_kind {
	MOAT_MASK_PATH = 0,	  /* one literal path: masked when it exists */
	MOAT_MASK_GLOB,		  /* an absolute glob: every match is masked */
	MOAT_MASK_WORKSPACE_NAME, /* "**" patterns: matched by a bounded scan of the workspace */
};

struct moat_mask {
	char *pattern; /* expanded (~ and **) pattern or path */
	enum moat_mask_kind kind;
	char origin[48]; /* "denied_paths", "--mask", "profile:NAME" */
	uint32_t hash;	 /* of pattern: add_mask's duplicate check */
	/* only the built-in or the user's denied paths ask for it (not a
	 * project file's, not --mask or a profile's mask): the plan's
	 * exempt_paths apply to its matches (moat_plan_mask_exempt) */
	bool exemptible;
};

/* Every protection moat knows, for requested versus enforced. */
enum moat_feature {
	MOAT_FEAT_FS_WRITE = 0, /* writes only in the workspace and rw paths (Landlock) */
	MOAT_FEAT_TRUNCATE,	/* truncation outside blocked (Landlock ABI 3) */
	MOAT_FEAT_SECRETS,	/* denied paths masked (mount namespace) */
	MOAT_FEAT_PRIVATE_TMP,	/* private /tmp and /dev/shm (mount namespace) */
	MOAT_FEAT_PROTECTED,	/* protected paths read-only inside the workspace */
	MOAT_FEAT_HOST_SOCKETS, /* host unix sockets under /run and /tmp hidden */
	MOAT_FEAT_NETWORK,	/* the network mode */
	MOAT_FEAT_SCOPES,	/* abstract unix sockets and signals scoped */
	MOAT_FEAT_SECCOMP,	/* the syscall filter */
	MOAT_FEAT_PIDNS,	/* own PID namespace: host processes invisible */
	MOAT_FEAT_MEM,		/* memory limit */
	MOAT_FEAT_PIDS,		/* process limit */
	MOAT_FEAT_RLIMITS,	/* cpu, file size, open files, no core dumps */
	MOAT_FEAT_METADATA,	/* the tree outside writable paths read-only (mount flag) */
	MOAT_FEAT__COUNT,
};

struct moat_plan_feature {
	bool requested;
	bool enforced;
	char mechanism[96]; /* how ("landlock abi 7", "cgroup v2", "rlimit data") or "" */
	char hint[256];	    /* for a gap: how to get it */
};

const char *moat_feature_name(enum moat_feature f);
/* One line saying what the feature protects, for status. */
const char *moat_feature_summary(enum moat_feature f);

enum moat_limit_mech {
	MOAT_LIMIT_NONE = 0,
	MOAT_LIMIT_CGROUP,
	MOAT_LIMIT_PIDNS,  /* kernel.pid_max inside the sandbox's PID namespace */
	MOAT_LIMIT_RLIMIT, /* RLIMIT_DATA for memory, RLIMIT_NPROC for processes */
};
const char *moat_limit_mech_name(enum moat_limit_mech m);

/* The seccomp rule vocabulary: one row per syscall rule. */
enum moat_sc_cmp {
	MOAT_SC_ALWAYS = 0,  /* every call */
	MOAT_SC_ARG_HAS,     /* (arg & value) != 0, low 32 bits */
	MOAT_SC_ARG_EQ,	     /* (arg & 0xffffffff) == value */
	MOAT_SC_ARG_NOT_HAS, /* (arg & value) == 0, low 32 bits */
	MOAT_SC_ARG_NE,	     /* (arg & 0xffffffff) != value */
	MOAT_SC_ARG_GE,	     /* (arg & 0xffffffff) >= value */
	MOAT_SC_ARG_LE,	     /* (arg & 0xffffffff) <= value */
	MOAT_SC_ARG_IN,	     /* (arg & mask) == value: a block of numbers */
};

struct moat_sc_rule {
	const char *syscall;
	int err; /* errno returned; 0: allowed but logged */
	enum moat_sc_cmp cmp;
	unsigned arg;
	uint64_t value;
	const char *why; /* one phrase for the golden file and docs */
	/* a second comparison, both must hold (MOAT_SC_ALWAYS: none) */
	enum moat_sc_cmp cmp2;
	unsigned arg2;
	uint64_t value2;
	/* MOAT_SC_ARG_IN's masks, of the first and of the second comparison */
	uint64_t mask, mask2;
};

/* The rows (defined in plan.c; NULL-terminated by syscall == NULL). */
extern const struct moat_sc_rule moat_seccomp_rules[];
/* Extra rows when the network is denied without a network namespace. */
extern const struct moat_sc_rule moat_seccomp_rules_no_inet[];
/* Extra rows when the network is denied (and no host socket is allowed):
 * no unix domain sockets, so no host socket anywhere can be connected to;
 * socketpair(2) keeps working. */
extern const struct moat_sc_rule moat_seccomp_rules_no_unix[];
/* Which rows a filter has: the base rows, plus these. */
/* Extra rows without PID and IPC namespaces: other processes' limits,
 * SysV IPC. */
extern const struct moat_sc_rule moat_seccomp_rules_no_ns[];
/* Extra rows when the network is allowed to listed TCP ports only: what
 * would reach other ports past Landlock's TCP rules (MPTCP, SCTP, TCP Fast
 * Open, SMC and the other families). */
extern const struct moat_sc_rule moat_seccomp_rules_ports[];
#define MOAT_SC_NO_INET 1u
#define MOAT_SC_NO_UNIX 2u
#define MOAT_SC_NO_NS 4u
#define MOAT_SC_PORTS 8u
#define MOAT_SC_VARIANTS 16u
/* personality(2): only these values pass (PER_LINUX and the query). */
#define MOAT_SC_PERSONALITY_OK_1 0x0u
#define MOAT_SC_PERSONALITY_OK_2 0xffffffffu

/* Inputs that are facts about this call, not capabilities. */
struct moat_plan_context {
	const char *workspace;	   /* absolute; the workspace directory */
	bool tmp_workspace;	   /* the workspace was created for this call */
	const char *cwd;	   /* absolute; must lie inside the workspace */
	const char *home;	   /* absolute or NULL: for ~ in masks */
	const char *const *denied; /* the policy's denied paths (globs), NULL-terminated */
	const struct moat_strv *denied_extra; /* more denied paths (config), may be NULL */
	/* a project file's denied paths, may be NULL: masked like the others,
	 * but exempt_paths never apply to them (a project file only tightens) */
	const struct moat_strv *denied_project;
	/* the user's exempt_paths (config), may be NULL: what denied and
	 * denied_extra do not mask */
	const struct moat_strv *exempt;
	char *const *argv;		      /* the command, borrowed */
	size_t scan_max_entries; /* sandbox.scan_max_entries; 0: the default */
	/* the planner's one look at the filesystem (a symbolic link planted
	 * on the way to a path); NULL: lstat(2). The runner passes its
	 * recorder (sandbox/fsrec.h), so that a sandbox armed ahead knows
	 * when the plan would come out otherwise */
	int (*lstat)(const char *path, struct stat *st);
	/* the directories of the user's moat configuration (absolute real
	 * paths, whether they exist or not; NULL-terminated, may be NULL):
	 * protected like a protected name where they lie inside a writable
	 * workspace, so that a command cannot loosen a later run's policy */
	const char *const *user_config;
	/* the directory of the audit log (an absolute real path, whether it
	 * exists or not) and the log's name in it; NULL: none (standard
	 * error). Protected as the configuration's directories are */
	const char *audit_dir, *audit_file;
};

struct moat_plan {
	char profile[MOAT_PLAN_MAX_NAME + 1];
	char *workspace;
	bool tmp_workspace;
	char *cwd;
	char *home;

	/* filesystem */
	enum moat_ws_access ws_access;
	struct moat_fs_rule *fs;
	size_t nfs;
	const char *const *devices; /* device nodes readable/writable under /dev */
	struct moat_mask *masks;
	size_t nmasks;
	uint64_t mask_seen[16]; /* bit (hash % 1024) of every mask's pattern: most adds skip the search for a duplicate */
	struct moat_strv mask_exempt; /* denied paths never masked (libc needs them) */
	size_t scan_max_entries;      /* the workspace scan's bound; 0: the default */
	/* exempt_paths resolved as the policy reads them (absolute globs, or
	 * "**" "/..." for a name anywhere; "~" is the home, a relative pattern
	 * the workspace's) and compiled once (exempt_set, MOAT_GLOB_PATH; NULL
	 * when there are none): an exemptible mask's match that one matches
	 * is not masked (moat_plan_mask_exempt) */
	struct moat_strv exempt;
	struct moat_globset *exempt_set;
	struct moat_strv protect;     /* relative to the workspace */
	/* the user's configuration directories inside the writable workspace
	 * (absolute; their names are in protect too): without a mount
	 * namespace Landlock grants them read-only (landlock.c) */
	struct moat_strv config_dirs;
	struct moat_strv sockets;     /* host sockets kept reachable */
	bool home_cow;		      /* overlay on the home directory, writes discarded */
	bool private_tmp;	      /* tmpfs on /tmp and /dev/shm */
	bool hide_run;		      /* tmpfs on /run (host sockets) */
	bool private_pts;	      /* a new devpts instance on /dev/pts (and /dev/ptmx) */
	bool fresh_proc;	      /* a procfs of the sandbox's PID namespace */
	bool scratch_tmp;	      /* no mount namespace: a per-call TMPDIR instead of /tmp */

	/* namespaces */
	bool userns, mntns, pidns, netns, ipcns;

	/* network */
	enum moat_net_mode net;
	uint16_t ports[MOAT_PLAN_MAX_PORTS];
	size_t nports;

	/* Landlock */
	bool landlock;
	struct moat_ll_masks ll;
	uint64_t ll_net_handled;
	uint64_t ll_scoped;
	uint32_t ll_restrict_flags;

	/* seccomp */
	bool seccomp;
	bool seccomp_no_inet; /* + moat_seccomp_rules_no_inet */
	bool seccomp_no_unix; /* + moat_seccomp_rules_no_unix */
	bool seccomp_no_ns;   /* + moat_seccomp_rules_no_ns */
	bool seccomp_ports;   /* + moat_seccomp_rules_ports */

	/* processes */
	bool drop_caps;
	long timeout_s;

	/* limits; 0: none */
	enum moat_limit_mech mem_mech, pids_mech;
	uint64_t mem_bytes;
	long pids;
	long cpu_s;
	uint64_t fsize_bytes;
	long nofile;

	/* environment */
	enum moat_env_mode env;
	struct moat_strv env_pass;

	/* requested versus enforced */
	struct moat_plan_feature feat[MOAT_FEAT__COUNT];
	enum moat_fallback fallback;

	char *const *argv;
};

/* Build the plan. Never loosens what was asked: a protection that cannot be
 * enforced is recorded as a gap (feat[i].requested && !feat[i].enforced),
 * and the caller applies the fallback policy. -EINVAL (with err) for a
 * broken profile or context (cwd outside the workspace, relative paths...). */
int moat_plan_build(const struct moat_profile *profile, const struct moat_plan_context *ctx,
		    const struct moat_kfeatures *kf, struct moat_plan **ret,
		    struct moat_error *err);
struct moat_plan *moat_plan_free(struct moat_plan *p);
/* What an early start (src/sandbox/spawn.c) makes before the plan exists,
 * for a plan that denies the network (or, with user namespaces and
 * net_allowed, one that allows the host's network: the same without the
 * network namespace). With user namespaces: user, mount,
 * PID, IPC and network namespaces, and a Landlock ruleset whose handled
 * rights are the ones moat_plan_build gives such a plan at this ABI (no TCP
 * rights: the network namespace denies the network). Without them
 * (Landlock and seccomp only): no namespace, TCP handled by Landlock, and
 * the seccomp filter of that mode, which the early child loads while moat
 * plans. moat_plan_fits_early says whether a plan asks for exactly that;
 * the early child of a plan that does not is discarded and the call starts
 * again (twice the cost, so a mismatch between the two is a bug the unit
 * test catches; never a weaker sandbox). */
void moat_plan_early(const struct moat_kfeatures *kf, bool net_allowed, struct moat_plan *ret);
bool moat_plan_fits_early(const struct moat_kfeatures *kf, bool net_allowed,
			  const struct moat_plan *p);
/* The plan's seccomp rows: MOAT_SC_NO_INET | MOAT_SC_NO_UNIX. */
unsigned moat_plan_seccomp_variant(const struct moat_plan *p);
/* Number of gaps; fills names (comma separated) into out when non-NULL. */
size_t moat_plan_gaps(const struct moat_plan *p, char *out, size_t outsz);

/* ---- accepted gaps (src/core/gaps.c) ----
 * A set of protections: bit (1u << f) for each enum moat_feature f, for
 * the protections a user accepts to run without (sandbox.accept_gaps,
 * --accept-gap). */
/* The feature named by name[0..len), or -1. */
int moat_feature_by_name(const char *name, size_t len);
/* Add the comma-separated names of s to *set. -EINVAL for an empty list
 * or an unknown name (*bad, *badlen: the name at fault; *set may then hold
 * the names before it). */
int moat_parse_gap_list(const char *s, unsigned *set, const char **bad, size_t *badlen);
/* The names of set, in the features' order, sep between them, into out
 * (may be NULL); returns how many. */
size_t moat_gap_set_names(unsigned set, const char *sep, char *out, size_t outsz);
/* The plan's gaps (requested, not enforced) as a set. */
unsigned moat_plan_gap_set(const struct moat_plan *p);
/* The plan as a JSON object (for --print-plan and the audit record). */
int moat_plan_to_json(const struct moat_plan *p, struct moat_buf *out);
/* Do two plans ask for the same sandbox: everything the same but the
 * working directory, the command and the timeout (what a sandbox armed
 * ahead of its call still takes from the call)? False when unsure (no
 * memory). */
bool moat_plan_same_sandbox(const struct moat_plan *a, const struct moat_plan *b);
/* The kernel features as a JSON object. */
int moat_kfeatures_to_json(const struct moat_kfeatures *kf, struct moat_buf *out);

/* Does abs_path (absolute, normalized) match one of the plan's
 * exempt_paths? Pure, allocation-free, thread-safe. */
bool moat_plan_exempt(const struct moat_plan *p, const char *abs_path);
/* Is abs_path, a match of the mask mk, to be left unmasked: mk is
 * exemptible (only the built-in or the user's denied paths ask for it)
 * and abs_path matches an exempt_paths pattern. A path another mask
 * that is not exemptible matches is masked all the same: a scan that
 * merges the masks' patterns must ask for each mask that matched. */
bool moat_plan_mask_exempt(const struct moat_plan *p, const struct moat_mask *mk,
			   const char *abs_path);

/* Normalize an absolute path purely (no symlinks resolved): collapse "//",
 * drop ".", resolve ".." lexically (clamped at "/"), drop a trailing "/".
 * -EINVAL for relative paths or NUL-free empty input; -ENAMETOOLONG. */
int moat_plan_normpath(const char *in, char *out, size_t outsz);

#endif
