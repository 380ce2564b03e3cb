/* The sandbox plan: profiles, their layering, and the pure construction of
 * the plan that src/sandbox/ applies. See plan.h for the model.
 *
 * Everything here is decided from data: the profile, the call's context and
 * the kernel features (a struct that tests fake). The plan never loosens a
 * request to fit the kernel; it records the gap and the caller's fallback
 * policy decides (seed 004: deny by default).
 *
 * Pure: no I/O, no getenv, no printing; it must never call into the kernel. */
#include "core/plan.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/str.h"
#include "core/glob.h"
#include "core/path.h"
#include "core/redact.h"

/* ------------------------------------------------------------------ */
/* Landlock ABI degradation                                            */
/* ------------------------------------------------------------------ */

#define LL_FS_ALL                                                                                  \
	(MOAT_LL_FS_EXECUTE | MOAT_LL_FS_WRITE_FILE | MOAT_LL_FS_READ_FILE | MOAT_LL_FS_READ_DIR | \
	 MOAT_LL_FS_REMOVE_DIR | MOAT_LL_FS_REMOVE_FILE | MOAT_LL_FS_MAKE_CHAR |                   \
	 MOAT_LL_FS_MAKE_DIR | MOAT_LL_FS_MAKE_REG | MOAT_LL_FS_MAKE_SOCK | MOAT_LL_FS_MAKE_FIFO | \
	 MOAT_LL_FS_MAKE_BLOCK | MOAT_LL_FS_MAKE_SYM | MOAT_LL_FS_REFER | MOAT_LL_FS_TRUNCATE |    \
	 MOAT_LL_FS_IOCTL_DEV)

void moat_landlock_masks(int abi, struct moat_ll_masks *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (abi <= 0)
		return;
	if (abi > MOAT_LL_ABI_MAX)
		abi = MOAT_LL_ABI_MAX; /* rights we do not know are never handled */
	ret->abi = abi;
	ret->fs = LL_FS_ALL;
	ret->net = MOAT_LL_NET_BIND_TCP | MOAT_LL_NET_CONNECT_TCP;
	ret->scoped = MOAT_LL_SCOPE_ABSTRACT_UNIX_SOCKET | MOAT_LL_SCOPE_SIGNAL;
	ret->restrict_flags = MOAT_LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF |
			      MOAT_LL_RESTRICT_SELF_LOG_NEW_EXEC_ON |
			      MOAT_LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF;
	/* Each case removes what its ABI lacks and falls through to the older
	 * ones, as the kernel's sample sandboxer does. */
	switch (abi) {
	case 1:
		/* ABI 1 cannot express REFER: moving or linking a file to another
		 * directory is always denied (EXDEV) inside the sandbox. */
		ret->fs &= ~MOAT_LL_FS_REFER;
		__attribute__((fallthrough));
	case 2:
		/* ABI 2 cannot restrict truncate(2) and O_TRUNC. */
		ret->fs &= ~MOAT_LL_FS_TRUNCATE;
		__attribute__((fallthrough));
	case 3:
		/* ABI 3 has no TCP rules. */
		ret->net = 0;
		__attribute__((fallthrough));
	case 4:
		/* ABI 4 cannot restrict ioctls on device files. */
		ret->fs &= ~MOAT_LL_FS_IOCTL_DEV;
		__attribute__((fallthrough));
	case 5:
		/* ABI 5 has no scopes (abstract unix sockets, signals). */
		ret->scoped = 0;
		__attribute__((fallthrough));
	case 6:
		/* ABI 6 takes no logging flags. */
		ret->restrict_flags = 0;
		__attribute__((fallthrough));
	default:
		break;
	}
}

uint64_t moat_landlock_access(unsigned fs_rights, const struct moat_ll_masks *m)
{
	uint64_t a = 0;

	if (fs_rights & MOAT_FS_READ)
		a |= MOAT_LL_FS_READ_FILE | MOAT_LL_FS_READ_DIR;
	if (fs_rights & MOAT_FS_EXEC)
		a |= MOAT_LL_FS_EXECUTE;
	/* SECURITY: device nodes are never creatable, even in the workspace. */
	if (fs_rights & MOAT_FS_WRITE)
		a |= MOAT_LL_FS_WRITE_FILE | MOAT_LL_FS_REMOVE_DIR | MOAT_LL_FS_REMOVE_FILE |
		     MOAT_LL_FS_MAKE_DIR | MOAT_LL_FS_MAKE_REG | MOAT_LL_FS_MAKE_SOCK |
		     MOAT_LL_FS_MAKE_FIFO | MOAT_LL_FS_MAKE_SYM | MOAT_LL_FS_REFER |
		     MOAT_LL_FS_TRUNCATE;
	if (fs_rights & MOAT_FS_DEV)
		a |= MOAT_LL_FS_IOCTL_DEV;
	return a & m->fs;
}

void moat_kfeatures_full(struct moat_kfeatures *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->landlock_abi = MOAT_LL_ABI_MAX;
	ret->userns = true;
	ret->seccomp = true;
	ret->pidns_pid_max = true;
	ret->fresh_proc = true;
	ret->kernel_major = 6;
	ret->kernel_minor = 18;
	moat_strlcpy(ret->cgroup_why, "no delegated cgroup v2 subtree", sizeof(ret->cgroup_why));
}

/* ------------------------------------------------------------------ */
/* small helpers                                                       */
/* ------------------------------------------------------------------ */

int moat_plan_normpath(const char *in, char *out, size_t outsz)
{
	size_t o = 0;
	const char *p = in;

	if (!in || in[0] != '/' || outsz < 2)
		return -EINVAL;
	while (*p) {
		const char *s;
		size_t n;

		while (*p == '/')
			p++;
		s = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - s);
		if (n == 0 || (n == 1 && s[0] == '.'))
			continue;
		if (n == 2 && s[0] == '.' && s[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--; /* the slash; "/a/.." becomes "" then "/" */
			continue;
		}
		if (o + 1 + n + 1 > outsz)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, s, n);
		o += n;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[{") != NULL;
}

/* A mask's pattern is matched as a glob when it holds a wildcard or an
 * escape (a home whose name holds ',' or '$' comes escaped: the glob
 * takes the escape away, a path would keep it) */
static bool mask_is_glob(const char *s)
{
	return strpbrk(s, "*?[{\\") != NULL;
}

void moat_profile_init(struct moat_profile *p, const char *name)
{
	memset(p, 0, sizeof(*p));
	moat_strlcpy(p->name, name ? name : "", sizeof(p->name));
}

static void strv_release(struct moat_strv *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->h);
	l->v = NULL;
	l->h = NULL;
	l->n = l->cap = l->hn = 0;
	l->replace = false;
}

void moat_strv_release(struct moat_strv *l)
{
	strv_release(l);
}

void moat_profile_release(struct moat_profile *p)
{
	if (!p)
		return;
	strv_release(&p->ro);
	strv_release(&p->rw);
	strv_release(&p->mask);
	strv_release(&p->protect);
	strv_release(&p->sockets);
	strv_release(&p->env_pass);
}

static uint32_t str_hash32(const char *s)
{
	uint64_t h = moat_hash(s, strlen(s));

	return (uint32_t)(h ^ (h >> 32));
}

int moat_strv_add(struct moat_strv *l, const char *s)
{
	uint32_t hs = str_hash32(s);
	char *c;

	if (l->n > l->cap)
		l->cap = l->n; /* v was made elsewhere, no room spare */
	if (l->hn > l->n)
		l->hn = l->n;
	if (l->hn < l->n) { /* entries added without moat_strv_add */
		uint32_t *nh = realloc(l->h, (l->cap ? l->cap : 1) * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		l->h = nh;
		for (; l->hn < l->n; l->hn++)
			l->h[l->hn] = str_hash32(l->v[l->hn]);
	}
	for (size_t i = 0; i < l->n; i++)
		if (l->h[i] == hs && !strcmp(l->v[i], s))
			return 0; /* a set: duplicates are dropped */
	if (l->n >= MOAT_PLAN_MAX_PATHS)
		return -E2BIG;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		char **nv = realloc(l->v, cap * sizeof(*nv));
		uint32_t *nh;

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		nh = realloc(l->h, cap * sizeof(*nh));
		if (!nh)
			return -ENOMEM;
		l->h = nh;
		l->cap = cap;
	}
	c = moat_strdup(s);
	if (!c)
		return -ENOMEM;
	l->v[l->n] = c;
	l->h[l->n] = hs;
	l->n++;
	l->hn = l->n;
	return 0;
}

static int strv_extend(struct moat_strv *dst, const struct moat_strv *src)
{
	if (src->replace)
		strv_release(dst);
	for (size_t i = 0; i < src->n; i++) {
		int r = moat_strv_add(dst, src->v[i]);

		if (r < 0)
			return r;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* built-in profiles                                                   */
/* ------------------------------------------------------------------ */

const char *const moat_profile_builtin_names[] = {
    "readonly",
    "workspace-write",
    "workspace-write-no-network",
    NULL,
};

/* Inside a writable workspace these stay read-only: code that runs later,
 * outside the sandbox (hooks, editor tasks, shell startup files, MCP server
 * lists) and moat's own project policy (seed 002: the agent must not be able
 * to relax its own profile). */
static const char *const default_protect[] = {
    ".git/hooks", ".git/config", ".gitmodules", ".mcp.json",	 ".vscode",	".idea",
    ".moat",	  ".envrc",	 ".bashrc",	".bash_profile", ".bash_login", ".profile",
    ".zshrc",	  ".zshenv",	 ".zprofile",	".zlogin",	 ".claude",	".cursor",
    /* hook managers: git runs what they hold once core.hooksPath or a
     * pre-commit shim points at them */
    ".husky",	  ".pre-commit-config.yaml",
    /* configuration other tools read from the project and obey: git's
     * (a repository's .gitconfig is read by tools that include it),
     * ripgrep's (RIPGREP_CONFIG_PATH), Codex's project settings */
    ".gitconfig", ".ripgreprc", ".codex",
    /* more hook managers: lefthook's configurations (committed or local,
     * any of its formats) and its script directory */
    "lefthook.yml", ".lefthook.yml", "lefthook-local.yml", ".lefthook-local.yml",
    "lefthook.yaml", ".lefthook.yaml", "lefthook-local.yaml", ".lefthook-local.yaml",
    "lefthook.json", ".lefthook.json", "lefthook.toml", ".lefthook.toml", ".lefthook",
    /* editors and agents that start MCP servers, language servers or
     * tasks from the project (a dev container's initializeCommand runs on
     * the host), and vim's project files */
    ".zed", ".gemini", ".kiro", ".roo", ".amazonq", ".continue", ".windsurf",
    ".devcontainer", ".exrc", ".nvimrc", ".nvim.lua",
    /* shell logout files, and environment managers that run code on cd */
    ".bash_logout", ".zlogout", "mise.toml", ".mise.toml", "mise.local.toml",
    ".mise.local.toml",
    /* package managers' project settings that run code on the next
     * install or run (npm's node-options and script-shell, yarn's
     * yarnPath, pnpm's hooks, cargo's rustc-wrapper and runners) */
    ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".cargo",
    NULL,
};

#define DEFAULT_MEM_MB 2048
#define DEFAULT_PIDS 512
#define DEFAULT_FSIZE_MB 4096
#define DEFAULT_NOFILE 8192
#define DEFAULT_CPU_S 3600

int moat_profile_builtin(const char *name, struct moat_profile *p)
{
	int r;

	if (!name)
		name = MOAT_PROFILE_DEFAULT;
	if (strcmp(name, "readonly") && strcmp(name, "workspace-write") &&
	    strcmp(name, "workspace-write-no-network"))
		return -ENOENT;
	moat_profile_init(p, name);
	p->set = MOAT_PF_WORKSPACE | MOAT_PF_PROTECT | MOAT_PF_NET | MOAT_PF_MEM | MOAT_PF_PIDS |
		 MOAT_PF_CPU | MOAT_PF_FSIZE | MOAT_PF_NOFILE | MOAT_PF_ENV | MOAT_PF_FALLBACK |
		 MOAT_PF_TIMEOUT;
	p->mem_mb = DEFAULT_MEM_MB;
	p->pids = DEFAULT_PIDS;
	p->fsize_mb = DEFAULT_FSIZE_MB;
	p->nofile = DEFAULT_NOFILE;
	p->cpu_s = DEFAULT_CPU_S;
	p->timeout_s = 0;
	p->env = MOAT_ENV_RESTRICTED;
	p->fallback = MOAT_FALLBACK_DENY;
	for (size_t i = 0; default_protect[i]; i++) {
		r = moat_strv_add(&p->protect, default_protect[i]);
		if (r < 0) {
			moat_profile_release(p);
			return r;
		}
	}
	/* tools write to the home directory (npm, pip, go and cargo caches,
	 * shell history): they get a private copy-on-write view whose writes
	 * vanish with the sandbox, so they work and nothing they write (a
	 * poisoned cache, an edited ~/.bashrc) survives the call */
	p->home_cow = true;
	p->set |= MOAT_PF_HOME;
	if (!strcmp(name, "readonly")) {
		p->workspace = MOAT_WS_RO;
		p->net = MOAT_NET_DENY;
		/* seed 004: an immutable dimension cannot be loosened by a later layer */
		p->immutable = MOAT_DIM_FS | MOAT_DIM_NET;
	} else if (!strcmp(name, "workspace-write")) {
		p->workspace = MOAT_WS_RW;
		p->net = MOAT_NET_ALLOW; /* seed 002: the default for development */
	} else {
		p->workspace = MOAT_WS_RW;
		p->net = MOAT_NET_DENY;
		p->immutable = MOAT_DIM_NET;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* layering (seed 003) with immutable dimensions (seed 004)            */
/* ------------------------------------------------------------------ */

static bool limit_tightens(long oldv, long newv)
{
	if (newv <= 0)
		return oldv <= 0;
	return oldv <= 0 || newv <= oldv;
}

static bool ports_subset(const struct moat_profile *a, const struct moat_profile *b)
{
	/* every port of b is in a */
	for (size_t i = 0; i < b->nports; i++) {
		bool found = false;

		for (size_t j = 0; j < a->nports && !found; j++)
			found = a->ports[j] == b->ports[i];
		if (!found)
			return false;
	}
	return true;
}

static int refuse(struct moat_error *err, const struct moat_profile *base, const char *what,
		  const char *dim)
{
	moat_error_set(err,
		       "profile '%s' makes the %s dimension immutable: %s cannot loosen it "
		       "(pick another profile)",
		       base->name, dim, what);
	return -EPERM;
}

int moat_profile_layer(struct moat_profile *base, const struct moat_profile *over,
		       struct moat_error *err)
{
	unsigned s = over->set;
	bool fs_imm = base->immutable & MOAT_DIM_FS, net_imm = base->immutable & MOAT_DIM_NET;
	bool proc_imm = base->immutable & MOAT_DIM_PROC, env_imm = base->immutable & MOAT_DIM_ENV;
	int r;

	/* check everything before changing anything: a refused layer leaves base intact */
	if (fs_imm) {
		if ((s & MOAT_PF_WORKSPACE) && over->workspace > base->workspace)
			return refuse(err, base, "a wider workspace access", "filesystem");
		if ((s & MOAT_PF_RW) && (over->rw.n || over->rw.replace))
			return refuse(err, base, "a read-write path", "filesystem");
		if ((s & MOAT_PF_RO) && (over->ro.n || over->ro.replace))
			return refuse(err, base, "a read-only path", "filesystem");
		if ((s & MOAT_PF_MASK) && over->mask.replace)
			return refuse(err, base, "replacing the masked paths", "filesystem");
		if ((s & MOAT_PF_PROTECT) && over->protect.replace)
			return refuse(err, base, "replacing the protected paths", "filesystem");
		if ((s & MOAT_PF_SOCKETS) && (over->sockets.n || over->sockets.replace))
			return refuse(err, base, "a host socket", "filesystem");
		if ((s & MOAT_PF_HOME) && over->home_cow && !base->home_cow)
			return refuse(err, base, "a writable home", "filesystem");
	}
	if (net_imm && (s & MOAT_PF_NET)) {
		bool ok = over->net < base->net ||
			  (over->net == base->net &&
			   (over->net != MOAT_NET_PORTS || ports_subset(base, over)));

		if (!ok)
			return refuse(err, base, "a wider network", "network");
	}
	if (proc_imm) {
		if ((s & MOAT_PF_TIMEOUT) && !limit_tightens(base->timeout_s, over->timeout_s))
			return refuse(err, base, "a longer timeout", "process");
		if ((s & MOAT_PF_MEM) && !limit_tightens(base->mem_mb, over->mem_mb))
			return refuse(err, base, "more memory", "process");
		if ((s & MOAT_PF_PIDS) && !limit_tightens(base->pids, over->pids))
			return refuse(err, base, "more processes", "process");
		if ((s & MOAT_PF_CPU) && !limit_tightens(base->cpu_s, over->cpu_s))
			return refuse(err, base, "more cpu time", "process");
		if ((s & MOAT_PF_FSIZE) && !limit_tightens(base->fsize_mb, over->fsize_mb))
			return refuse(err, base, "a larger file size", "process");
		if ((s & MOAT_PF_NOFILE) && !limit_tightens(base->nofile, over->nofile))
			return refuse(err, base, "more open files", "process");
	}
	if (env_imm) {
		if ((s & MOAT_PF_ENV) && over->env > base->env)
			return refuse(err, base, "a wider environment", "environment");
		if ((s & MOAT_PF_ENV_PASS) && (over->env_pass.n || over->env_pass.replace))
			return refuse(err, base, "passing a secret variable", "environment");
	}

	if (s & MOAT_PF_WORKSPACE)
		base->workspace = over->workspace;
	if ((s & MOAT_PF_RO) && (r = strv_extend(&base->ro, &over->ro)) < 0)
		goto fail;
	if ((s & MOAT_PF_RW) && (r = strv_extend(&base->rw, &over->rw)) < 0)
		goto fail;
	if ((s & MOAT_PF_MASK) && (r = strv_extend(&base->mask, &over->mask)) < 0)
		goto fail;
	if ((s & MOAT_PF_PROTECT) && (r = strv_extend(&base->protect, &over->protect)) < 0)
		goto fail;
	if ((s & MOAT_PF_SOCKETS) && (r = strv_extend(&base->sockets, &over->sockets)) < 0)
		goto fail;
	if (s & MOAT_PF_HOME)
		base->home_cow = over->home_cow;
	if ((s & MOAT_PF_ENV_PASS) && (r = strv_extend(&base->env_pass, &over->env_pass)) < 0)
		goto fail;
	if (s & MOAT_PF_NET) {
		base->net = over->net;
		memcpy(base->ports, over->ports, sizeof(base->ports));
		base->nports = over->nports;
	}
	if (s & MOAT_PF_TIMEOUT)
		base->timeout_s = over->timeout_s;
	if (s & MOAT_PF_MEM)
		base->mem_mb = over->mem_mb;
	if (s & MOAT_PF_PIDS)
		base->pids = over->pids;
	if (s & MOAT_PF_CPU)
		base->cpu_s = over->cpu_s;
	if (s & MOAT_PF_FSIZE)
		base->fsize_mb = over->fsize_mb;
	if (s & MOAT_PF_NOFILE)
		base->nofile = over->nofile;
	if (s & MOAT_PF_ENV)
		base->env = over->env;
	if (s & MOAT_PF_FALLBACK)
		base->fallback = over->fallback;
	base->set |= s;
	base->immutable |= over->immutable; /* a layer may add immutability, never remove it */
	return 0;
fail:
	moat_error_set(err, "profile '%s': %s", base->name,
		       r == -E2BIG ? "too many paths in one list" : "out of memory");
	return r;
}

static int strv_copy(struct moat_strv *dst, const struct moat_strv *src)
{
	memset(dst, 0, sizeof(*dst));
	for (size_t i = 0; i < src->n; i++) {
		int r = moat_strv_add(dst, src->v[i]);

		if (r < 0) {
			strv_release(dst);
			return r;
		}
	}
	dst->replace = src->replace;
	return 0;
}

int moat_profile_copy(struct moat_profile *ret, const struct moat_profile *src)
{
	struct moat_profile p = *src;

	memset(&p.ro, 0, sizeof(p.ro));
	memset(&p.rw, 0, sizeof(p.rw));
	memset(&p.mask, 0, sizeof(p.mask));
	memset(&p.protect, 0, sizeof(p.protect));
	memset(&p.sockets, 0, sizeof(p.sockets));
	memset(&p.env_pass, 0, sizeof(p.env_pass));
	if (strv_copy(&p.ro, &src->ro) < 0 || strv_copy(&p.rw, &src->rw) < 0 ||
	    strv_copy(&p.mask, &src->mask) < 0 || strv_copy(&p.protect, &src->protect) < 0 ||
	    strv_copy(&p.sockets, &src->sockets) < 0 ||
	    strv_copy(&p.env_pass, &src->env_pass) < 0) {
		moat_profile_release(&p);
		return -ENOMEM;
	}
	*ret = p;
	return 0;
}

/* ------------------------------------------------------------------ */
/* named profiles (sandbox.profiles) and per-tool rules                */
/* ------------------------------------------------------------------ */

bool moat_profile_name_ok(const char *name)
{
	size_t n = 0;

	if (!name)
		return false;
	for (; name[n]; n++) {
		char c = name[n];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return n >= 1 && n <= MOAT_PLAN_MAX_NAME;
}

bool moat_profile_is_builtin(const char *name)
{
	for (size_t i = 0; name && moat_profile_builtin_names[i]; i++)
		if (!strcmp(name, moat_profile_builtin_names[i]))
			return true;
	return false;
}

void moat_profile_def_release(struct moat_profile_def *d)
{
	if (!d)
		return;
	free(d->name);
	free(d->extends);
	free(d->description);
	moat_profile_release(&d->layer);
	d->name = d->extends = d->description = NULL;
}

static size_t find_def(const struct moat_profile_def *defs, size_t ndefs, const char *name)
{
	for (size_t i = 0; name && i < ndefs; i++)
		if (defs[i].name && !strcmp(defs[i].name, name))
			return i;
	return SIZE_MAX;
}

int moat_profile_resolve(const char *name, const struct moat_profile_def *defs, size_t ndefs,
			 const struct moat_profile *defaults, struct moat_profile *ret,
			 size_t *ret_culprit, struct moat_error *err)
{
	size_t chain[MOAT_PLAN_MAX_EXTENDS];
	size_t depth = 0, culprit = SIZE_MAX;
	const char *cur;
	struct moat_profile p;
	int r;

	if (!name)
		name = MOAT_PROFILE_DEFAULT;
	cur = name;
	/* SECURITY: fail closed (seed 002): an unknown name, an unknown base or
	 * a cycle refuses; nothing falls back to a default profile */
	while (!moat_profile_is_builtin(cur)) {
		size_t i = find_def(defs, ndefs, cur);

		if (i == SIZE_MAX) {
			if (depth == 0)
				moat_error_set(
				    err,
				    "unknown profile '%s' (built-in: readonly, "
				    "workspace-write, workspace-write-no-network; others are "
				    "defined in sandbox.profiles)",
				    cur);
			else
				moat_error_set(err, "profile '%s' extends the unknown profile '%s'",
					       defs[chain[depth - 1]].name, cur);
			culprit = depth ? chain[depth - 1] : SIZE_MAX;
			r = -ENOENT;
			goto fail;
		}
		for (size_t k = 0; k < depth; k++) {
			if (chain[k] != i)
				continue;
			char cyc[256];
			size_t o = 0;

			for (size_t j = k; j < depth && o < sizeof(cyc); j++)
				o += (size_t)snprintf(cyc + o, sizeof(cyc) - o, "'%s' -> ",
						      defs[chain[j]].name);
			if (o < sizeof(cyc))
				snprintf(cyc + o, sizeof(cyc) - o, "'%s'", defs[i].name);
			moat_error_set(err, "profiles extend each other in a cycle: %s", cyc);
			culprit = chain[depth - 1];
			r = -ELOOP;
			goto fail;
		}
		if (depth >= MOAT_PLAN_MAX_EXTENDS) {
			moat_error_set(err,
				       "profile '%s': its extends chain is longer than %d profiles",
				       name, MOAT_PLAN_MAX_EXTENDS);
			culprit = chain[0];
			r = -ELOOP;
			goto fail;
		}
		chain[depth++] = i;
		cur = defs[i].extends;
		if (!cur) {
			moat_error_set(err, "profile '%s' extends no profile", defs[i].name);
			culprit = i;
			r = -ENOENT;
			goto fail;
		}
	}
	r = moat_profile_builtin(cur, &p);
	if (r < 0) {
		moat_error_set(err, "unknown profile '%s'", cur);
		goto fail;
	}
	if (defaults) {
		r = moat_profile_layer(&p, defaults, err);
		if (r < 0) {
			moat_profile_release(&p);
			goto fail;
		}
	}
	while (depth-- > 0) {
		const struct moat_profile_def *d = &defs[chain[depth]];

		r = moat_profile_layer(&p, &d->layer, err);
		if (r < 0) {
			char msg[MOAT_ERROR_MSG_MAX];

			moat_strlcpy(msg, err ? err->msg : "", sizeof(msg));
			moat_error_set(err, "profile '%s': %s", d->name, msg);
			moat_profile_release(&p);
			culprit = chain[depth];
			goto fail;
		}
		/* a later refusal names the profile that was extended */
		moat_strlcpy(p.name, d->name, sizeof(p.name));
	}
	moat_strlcpy(p.name, name, sizeof(p.name));
	*ret = p;
	if (ret_culprit)
		*ret_culprit = SIZE_MAX;
	return 0;
fail:
	if (ret_culprit)
		*ret_culprit = culprit;
	return r;
}

const char *moat_profile_for_tool(const struct moat_tool_rule *rules, size_t n, const char *tool,
				  const char *dflt)
{
	for (size_t i = 0; tool && i < n; i++)
		if (rules[i].tool && rules[i].profile && !strcmp(rules[i].tool, tool))
			return rules[i].profile;
	return dflt ? dflt : MOAT_PROFILE_DEFAULT;
}

/* ------------------------------------------------------------------ */
/* parsing of flag values                                              */
/* ------------------------------------------------------------------ */

int moat_parse_net(const char *s, struct moat_profile *p, struct moat_error *err)
{
	const char *q = s;

	if (!strcmp(s, "deny") || !strcmp(s, "none")) {
		p->net = MOAT_NET_DENY;
		p->nports = 0;
	} else if (!strcmp(s, "allow")) {
		p->net = MOAT_NET_ALLOW;
		p->nports = 0;
	} else {
		size_t n = 0;

		while (*q) {
			char buf[8];
			size_t len = strcspn(q, ",");
			long port;

			if (len == 0 || len >= sizeof(buf)) {
				moat_error_set(err,
					       "bad --net value '%s': use deny, allow or a "
					       "comma-separated list of ports",
					       s);
				return -EINVAL;
			}
			memcpy(buf, q, len);
			buf[len] = '\0';
			if (moat_parse_long(buf, 1, 65535, &port) < 0) {
				moat_error_set(err, "bad port '%s' in --net: ports are 1 to 65535",
					       buf);
				return -EINVAL;
			}
			if (n >= MOAT_PLAN_MAX_PORTS) {
				moat_error_set(err, "too many ports in --net (at most %d)",
					       MOAT_PLAN_MAX_PORTS);
				return -E2BIG;
			}
			p->ports[n++] = (uint16_t)port;
			q += len;
			if (*q == ',') {
				q++;
				if (!*q) {
					moat_error_set(err, "bad --net value '%s': trailing comma",
						       s);
					return -EINVAL;
				}
			}
		}
		if (n == 0) {
			moat_error_set(err, "empty --net value");
			return -EINVAL;
		}
		p->net = MOAT_NET_PORTS;
		p->nports = n;
	}
	p->set |= MOAT_PF_NET;
	return 0;
}

int moat_parse_env_mode(const char *s, enum moat_env_mode *ret)
{
	if (!strcmp(s, "none"))
		*ret = MOAT_ENV_NONE;
	else if (!strcmp(s, "restricted"))
		*ret = MOAT_ENV_RESTRICTED;
	else if (!strcmp(s, "full"))
		*ret = MOAT_ENV_FULL;
	else
		return -EINVAL;
	return 0;
}

int moat_parse_fallback(const char *s, enum moat_fallback *ret)
{
	if (!strcmp(s, "deny"))
		*ret = MOAT_FALLBACK_DENY;
	else if (!strcmp(s, "ask"))
		*ret = MOAT_FALLBACK_ASK;
	else if (!strcmp(s, "warn"))
		*ret = MOAT_FALLBACK_WARN;
	else
		return -EINVAL;
	return 0;
}

const char *moat_net_mode_name(enum moat_net_mode m)
{
	switch (m) {
	case MOAT_NET_DENY:
		return "deny";
	case MOAT_NET_PORTS:
		return "ports";
	case MOAT_NET_ALLOW:
		return "allow";
	}
	return "?";
}

const char *moat_env_mode_name(enum moat_env_mode m)
{
	switch (m) {
	case MOAT_ENV_NONE:
		return "none";
	case MOAT_ENV_RESTRICTED:
		return "restricted";
	case MOAT_ENV_FULL:
		return "full";
	}
	return "?";
}

const char *moat_fallback_name(enum moat_fallback f)
{
	switch (f) {
	case MOAT_FALLBACK_DENY:
		return "deny";
	case MOAT_FALLBACK_ASK:
		return "ask";
	case MOAT_FALLBACK_WARN:
		return "warn";
	}
	return "?";
}

const char *moat_limit_mech_name(enum moat_limit_mech m)
{
	switch (m) {
	case MOAT_LIMIT_NONE:
		return "none";
	case MOAT_LIMIT_CGROUP:
		return "cgroup";
	case MOAT_LIMIT_PIDNS:
		return "pidns";
	case MOAT_LIMIT_RLIMIT:
		return "rlimit";
	}
	return "?";
}

/* ------------------------------------------------------------------ */
/* environment classification                                          */
/* ------------------------------------------------------------------ */

static bool icontains(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++) {
		size_t i = 0;

		while (i < n && hay[i] && toupper((unsigned char)hay[i]) == needle[i])
			i++;
		if (i == n)
			return true;
	}
	return false;
}

static bool isuffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	if (b > a)
		return false;
	for (size_t i = 0; i < b; i++)
		if (toupper((unsigned char)s[a - b + i]) != suffix[i])
			return false;
	return true;
}

bool moat_env_is_secret(const char *name, const char *value)
{
	/* by name: the usual words for credentials */
	static const char *const words[] = {
	    "SECRET",	  "TOKEN",	 "PASSWORD",   "PASSWD",      "PASSPHRASE",
	    "API_KEY",	  "APIKEY",	 "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL",
	    "AUTH_KEY",	  "SESSION_KEY", "CLIENT_KEY", "SIGNING_KEY", "ENCRYPTION_KEY",
	    "MASTER_KEY", "WEBHOOK",	 NULL,
	};
	static const char *const suffixes[] = {"_KEY", "_PAT", "_AUTH", "_DSN", "_COOKIE", NULL};

	if (name) {
		/* the name in capitals once (every process start looks at each
		 * variable), then plain searches */
		char up[256];
		size_t nl = strlen(name);

		if (nl < sizeof(up)) {
			for (size_t i = 0; i <= nl; i++)
				up[i] = (char)toupper((unsigned char)name[i]);
			for (size_t i = 0; words[i]; i++)
				if (strstr(up, words[i]))
					return true;
			for (size_t i = 0; suffixes[i]; i++) {
				size_t sl = strlen(suffixes[i]);

				if (sl <= nl && !memcmp(up + nl - sl, suffixes[i], sl))
					return true;
			}
		} else {
			for (size_t i = 0; words[i]; i++)
				if (icontains(name, words[i]))
					return true;
			for (size_t i = 0; suffixes[i]; i++)
				if (isuffix(name, suffixes[i]))
					return true;
		}
		if (!strncmp(name, "AWS_", 4) && !strcmp(name, "AWS_SESSION_TOKEN"))
			return true;
	}
	/* by value: well-known token shapes, and URLs with a password */
	if (value) {
		const char *at, *scheme;

		/* the redactor's token shapes, anywhere a word starts */
		if (moat_redact_has_shape(value, strlen(value)))
			return true;
		if (strstr(value, "-----BEGIN ") && strstr(value, "PRIVATE KEY"))
			return true;
		scheme = strstr(value, "://");
		at = scheme ? strchr(scheme + 3, '@') : NULL;
		if (at) {
			const char *colon = memchr(scheme + 3, ':', (size_t)(at - scheme - 3));
			const char *slash = memchr(scheme + 3, '/', (size_t)(at - scheme - 3));

			if (colon && !slash && colon + 1 < at)
				return true;
		}
	}
	return false;
}

bool moat_env_is_safe(const char *name)
{
	static const char *const safe[] = {
	    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM", "TZ",
	    /* where the trusted CA certificates are (a company's proxy CA):
	     * paths to public certificates, which TLS clients need */
	    "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
	    "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "PIP_CERT", NULL};

	for (size_t i = 0; safe[i]; i++)
		if (!strcmp(name, safe[i]))
			return true;
	return !strncmp(name, "LC_", 3);
}

/* ------------------------------------------------------------------ */
/* seccomp rows                                                        */
/* ------------------------------------------------------------------ */

/* Namespace flags, as in <linux/sched.h>; CLONE_NEWTIME only for unshare
 * (in clone(2) its bit is part of the exit signal byte). */
#define NS_CLONE_FLAGS 0x7e020000ULL /* NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET */
#define NS_UNSHARE_FLAGS (NS_CLONE_FLAGS | 0x80ULL)
#define X_TIOCSTI 0x5412ULL
#define X_TIOCLINUX 0x541cULL
#define X_MFD_EXEC 0x10ULL
#define X_MFD_NOEXEC_SEAL 0x8ULL
#define X_AT_EMPTY_PATH 0x1000ULL
#define X_S_ISUID 04000ULL
#define X_S_ISGID 02000ULL
#define X_AF_VSOCK 40ULL
#define X_AF_NETLINK 16ULL
#define X_NETLINK_USERSOCK 2ULL
#define X_MSG_FASTOPEN 0x20000000ULL
#define E_PERM 1
#define E_NOSYS 38

/* SECURITY: the deny list. EPERM rather than a kill, so a denied call is an
 * error the command can report; the arch check (x32 and i386 calls on
 * x86_64 get EPERM) is added by src/sandbox/seccomp.c. */
/* the rows name a second comparison only where they have one */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const struct moat_sc_rule moat_seccomp_rules[] = {
    {"ptrace", E_PERM, MOAT_SC_ALWAYS, 0, 0, "tracing other processes"},
    {"process_vm_readv", E_PERM, MOAT_SC_ALWAYS, 0, 0, "reading another process's memory"},
    {"process_vm_writev", E_PERM, MOAT_SC_ALWAYS, 0, 0, "writing another process's memory"},
    {"pidfd_getfd", E_PERM, MOAT_SC_ALWAYS, 0, 0, "stealing another process's descriptors"},
    {"keyctl", E_PERM, MOAT_SC_ALWAYS, 0, 0, "kernel keyrings"},
    {"add_key", E_PERM, MOAT_SC_ALWAYS, 0, 0, "kernel keyrings"},
    {"request_key", E_PERM, MOAT_SC_ALWAYS, 0, 0, "kernel keyrings"},
    {"bpf", E_PERM, MOAT_SC_ALWAYS, 0, 0, "eBPF programs and maps"},
    {"perf_event_open", E_PERM, MOAT_SC_ALWAYS, 0, 0, "performance counters (side channels)"},
    {"userfaultfd", E_PERM, MOAT_SC_ALWAYS, 0, 0, "race amplification for kernel exploits"},
    {"io_uring_setup", E_PERM, MOAT_SC_ALWAYS, 0, 0, "io_uring bypasses syscall filtering"},
    {"io_uring_enter", E_PERM, MOAT_SC_ALWAYS, 0, 0, "io_uring bypasses syscall filtering"},
    {"io_uring_register", E_PERM, MOAT_SC_ALWAYS, 0, 0, "io_uring bypasses syscall filtering"},
    {"kexec_load", E_PERM, MOAT_SC_ALWAYS, 0, 0, "loading a new kernel"},
    {"kexec_file_load", E_PERM, MOAT_SC_ALWAYS, 0, 0, "loading a new kernel"},
    {"init_module", E_PERM, MOAT_SC_ALWAYS, 0, 0, "kernel modules"},
    {"finit_module", E_PERM, MOAT_SC_ALWAYS, 0, 0, "kernel modules"},
    {"delete_module", E_PERM, MOAT_SC_ALWAYS, 0, 0, "kernel modules"},
    {"mount", E_PERM, MOAT_SC_ALWAYS, 0, 0, "mounts would undo the masks"},
    {"umount2", E_PERM, MOAT_SC_ALWAYS, 0, 0, "unmounting would reveal masked secrets"},
    {"pivot_root", E_PERM, MOAT_SC_ALWAYS, 0, 0, "changing the root"},
    {"move_mount", E_PERM, MOAT_SC_ALWAYS, 0, 0, "new mount API"},
    {"open_tree", E_PERM, MOAT_SC_ALWAYS, 0, 0, "new mount API"},
    {"fsopen", E_PERM, MOAT_SC_ALWAYS, 0, 0, "new mount API"},
    {"fsmount", E_PERM, MOAT_SC_ALWAYS, 0, 0, "new mount API"},
    {"fsconfig", E_PERM, MOAT_SC_ALWAYS, 0, 0, "new mount API"},
    {"fspick", E_PERM, MOAT_SC_ALWAYS, 0, 0, "new mount API"},
    {"mount_setattr", E_PERM, MOAT_SC_ALWAYS, 0, 0, "changing mount flags (read-only masks)"},
    {"open_tree_attr", E_PERM, MOAT_SC_ALWAYS, 0, 0, "new mount API (Linux 6.15)"},
    {"setns", E_PERM, MOAT_SC_ALWAYS, 0, 0, "joining other namespaces"},
    {"unshare", E_PERM, MOAT_SC_ARG_HAS, 0, NS_UNSHARE_FLAGS, "new namespaces"},
    {"clone", E_PERM, MOAT_SC_ARG_HAS, 0, NS_CLONE_FLAGS, "new namespaces"},
    /* clone3 passes its flags in memory a filter cannot read: ENOSYS makes
     * libc fall back to clone(2), whose flags are checked above. */
    {"clone3", E_NOSYS, MOAT_SC_ALWAYS, 0, 0, "flags unreadable: libc falls back to clone"},
    /* personality(2): PER_LINUX (0) passes, the query (0xffffffff) passes
     * logged (libseccomp cannot add an allow rule to an allow-by-default
     * filter), anything else (exec domains, ADDR_NO_RANDOMIZE,
     * READ_IMPLIES_EXEC...) is EPERM. err 0 means "allow, logged". */
    {"personality", 0, MOAT_SC_ARG_EQ, 0, MOAT_SC_PERSONALITY_OK_2, "the personality query"},
    {"personality", E_PERM, MOAT_SC_ARG_NE, 0, MOAT_SC_PERSONALITY_OK_1,
     "execution domains and ASLR changes"},
    {"ioctl", E_PERM, MOAT_SC_ARG_EQ, 1, X_TIOCSTI, "typing into the terminal (TIOCSTI)"},
    {"ioctl", E_PERM, MOAT_SC_ARG_EQ, 1, X_TIOCLINUX, "console tricks (TIOCLINUX)"},
    {"open_by_handle_at", E_PERM, MOAT_SC_ALWAYS, 0, 0, "opening files by handle escapes paths"},
    {"acct", E_PERM, MOAT_SC_ALWAYS, 0, 0, "process accounting"},
    {"swapon", E_PERM, MOAT_SC_ALWAYS, 0, 0, "swap"},
    {"swapoff", E_PERM, MOAT_SC_ALWAYS, 0, 0, "swap"},
    {"reboot", E_PERM, MOAT_SC_ALWAYS, 0, 0, "reboot"},
    {"syslog", E_PERM, MOAT_SC_ALWAYS, 0, 0, "the kernel log"},
    {"quotactl", E_PERM, MOAT_SC_ALWAYS, 0, 0, "disk quotas"},
    {"uselib", E_PERM, MOAT_SC_ALWAYS, 0, 0, "obsolete loader"},
    /* Anonymous memory files: code that never touched a path cannot be
     * confined by path rules. A memfd asked for as executable is refused;
     * one created without MFD_NOEXEC_SEAL gets ENOSYS, so callers take
     * their pre-memfd fallback (a file in /tmp, which Landlock governs).
     * fexecve (execveat with AT_EMPTY_PATH) is refused outright. */
    {"memfd_create", E_PERM, MOAT_SC_ARG_HAS, 1, X_MFD_EXEC, "executable anonymous memory"},
    {"memfd_create", E_NOSYS, MOAT_SC_ARG_NOT_HAS, 1, X_MFD_NOEXEC_SEAL,
     "anonymous memory files must be sealed non-executable"},
    {"execveat", E_PERM, MOAT_SC_ARG_HAS, 4, X_AT_EMPTY_PATH, "executing a descriptor (fexecve)"},
    /* setuid and setgid bits: the owner of a file needs no capability to
     * set them, and a root-owned program made setuid outside the sandbox
     * (where a mount namespace cannot make the tree read-only) is root for
     * every local user */
    {"chmod", E_PERM, MOAT_SC_ARG_HAS, 1, X_S_ISUID | X_S_ISGID, "setuid and setgid bits"},
    {"fchmod", E_PERM, MOAT_SC_ARG_HAS, 1, X_S_ISUID | X_S_ISGID, "setuid and setgid bits"},
    {"fchmodat", E_PERM, MOAT_SC_ARG_HAS, 2, X_S_ISUID | X_S_ISGID, "setuid and setgid bits"},
    {"fchmodat2", E_PERM, MOAT_SC_ARG_HAS, 2, X_S_ISUID | X_S_ISGID, "setuid and setgid bits"},
    /* vsock is not confined by a network namespace: the hypervisor's
     * services are not the command's business */
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_VSOCK, "sockets to the hypervisor (vsock)"},
    /* netlink's user-to-user protocol needs no privilege: a channel to any
     * process of the host listening on it (no network namespace in the
     * way when the network is not denied, or without user namespaces) */
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_NETLINK, "netlink between user processes",
     MOAT_SC_ARG_EQ, 2, X_NETLINK_USERSOCK},
    /* the command's process group is the caller's (terminal job control):
     * PRIO_PGRP 0 and IOPRIO_WHO_PGRP 0 would reach host processes in it */
    {"setpriority", E_PERM, MOAT_SC_ARG_EQ, 0, 1, "the priority of a process group"},
    {"ioprio_set", E_PERM, MOAT_SC_ARG_EQ, 0, 2, "the I/O priority of a process group"},
    {NULL, 0, MOAT_SC_ALWAYS, 0, 0, NULL},
};

/* Without PID and IPC namespaces the user's other processes and SysV IPC
 * objects are shared with the sandbox: their resource limits cannot be
 * changed (prlimit of pid 0, the caller, still works: setrlimit uses it),
 * and SysV shared memory, queues and semaphores are refused. */
const struct moat_sc_rule moat_seccomp_rules_no_ns[] = {
    {"prlimit64", E_PERM, MOAT_SC_ARG_NE, 0, 0, "limits of other processes"},
    {"shmget", E_PERM, MOAT_SC_ALWAYS, 0, 0, "SysV shared memory (no IPC namespace)"},
    {"shmat", E_PERM, MOAT_SC_ALWAYS, 0, 0, "SysV shared memory (no IPC namespace)"},
    {"shmctl", E_PERM, MOAT_SC_ALWAYS, 0, 0, "SysV shared memory (no IPC namespace)"},
    {"msgget", E_PERM, MOAT_SC_ALWAYS, 0, 0, "SysV message queues (no IPC namespace)"},
    {"msgsnd", E_PERM, MOAT_SC_ALWAYS, 0, 0, "SysV message queues (no IPC namespace)"},
    {"msgrcv", E_PERM, MOAT_SC_ALWAYS, 0, 0, "SysV message queues (no IPC namespace)"},
    {"msgctl", E_PERM, MOAT_SC_ALWAYS, 0, 0, "SysV message queues (no IPC namespace)"},
    {"semget", E_PERM, MOAT_SC_ALWAYS, 0, 0, "SysV semaphores (no IPC namespace)"},
    {"semop", E_PERM, MOAT_SC_ALWAYS, 0, 0, "SysV semaphores (no IPC namespace)"},
    {"semtimedop", E_PERM, MOAT_SC_ALWAYS, 0, 0, "SysV semaphores (no IPC namespace)"},
    {"semctl", E_PERM, MOAT_SC_ALWAYS, 0, 0, "SysV semaphores (no IPC namespace)"},
    {"mq_open", E_PERM, MOAT_SC_ALWAYS, 0, 0, "POSIX message queues (no IPC namespace)"},
    {"mq_unlink", E_PERM, MOAT_SC_ALWAYS, 0, 0, "POSIX message queues (no IPC namespace)"},
    /* without a PID namespace other processes of the user are in reach:
     * their scheduling only for the caller itself (0) */
    {"setpriority", E_PERM, MOAT_SC_ARG_NE, 1, 0, "the priority of other processes"},
    {"setpriority", E_PERM, MOAT_SC_ARG_EQ, 0, 2, "the priority of all the user's processes"},
    {"sched_setaffinity", E_PERM, MOAT_SC_ARG_NE, 0, 0, "the CPUs of other processes"},
    {"sched_setscheduler", E_PERM, MOAT_SC_ARG_NE, 0, 0, "the scheduling of other processes"},
    {"sched_setparam", E_PERM, MOAT_SC_ARG_NE, 0, 0, "the scheduling of other processes"},
    {"sched_setattr", E_PERM, MOAT_SC_ARG_NE, 0, 0, "the scheduling of other processes"},
    {"ioprio_set", E_PERM, MOAT_SC_ARG_NE, 1, 0, "the I/O priority of other processes"},
    {"ioprio_set", E_PERM, MOAT_SC_ARG_EQ, 0, 3, "the I/O priority of all the user's processes"},
    {NULL, 0, MOAT_SC_ALWAYS, 0, 0, NULL},
};

#define X_AF_UNIX 1
#define X_AF_INET 2
#define X_AF_INET6 10
#define X_AF_PACKET 17

/* Network denied: no unix domain sockets. A socketpair(2) of datagram
 * sockets could still send to any pathname socket (sendto with an
 * address), so only stream and seqpacket pairs stay (pipes between
 * processes, asyncio, libuv): an allow-list of the type's low four bits
 * (the kernel turns SOCK_RAW into SOCK_DGRAM for unix sockets; the flags
 * SOCK_NONBLOCK and SOCK_CLOEXEC sit above them). */
const struct moat_sc_rule moat_seccomp_rules_no_unix[] = {
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_UNIX, "network denied: host unix sockets"},
    {"socketpair", E_PERM, MOAT_SC_ARG_IN, 1, 0, "network denied: only stream and seqpacket pairs (a datagram pair reaches host sockets)", MOAT_SC_ALWAYS, 0, 0, 0xfU},
    {"socketpair", E_PERM, MOAT_SC_ARG_IN, 1, 2, "network denied: only stream and seqpacket pairs (a datagram pair reaches host sockets)", MOAT_SC_ALWAYS, 0, 0, 0xeU},
    {"socketpair", E_PERM, MOAT_SC_ARG_IN, 1, 4, "network denied: only stream and seqpacket pairs (a datagram pair reaches host sockets)", MOAT_SC_ALWAYS, 0, 0, 0xfU},
    {"socketpair", E_PERM, MOAT_SC_ARG_IN, 1, 6, "network denied: only stream and seqpacket pairs (a datagram pair reaches host sockets)", MOAT_SC_ALWAYS, 0, 0, 0xeU},
    {"socketpair", E_PERM, MOAT_SC_ARG_IN, 1, 8, "network denied: only stream and seqpacket pairs (a datagram pair reaches host sockets)", MOAT_SC_ALWAYS, 0, 0, 0x8U},
    {NULL, 0, MOAT_SC_ALWAYS, 0, 0, NULL},
};

void moat_plan_early(const struct moat_kfeatures *kf, bool net_allowed, struct moat_plan *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->landlock = kf->landlock_abi > 0;
	moat_landlock_masks(kf->landlock_abi, &ret->ll);
	ret->ll_scoped = ret->landlock ? ret->ll.scoped : 0;
	if (kf->userns) {
		/* net_allowed: the host's network, no namespace of its own */
		ret->userns = ret->mntns = ret->ipcns = true;
		ret->pidns = kf->fresh_proc; /* (a masked /proc: none) */
		ret->netns = !net_allowed;
		/* in its own network namespace the command may use its
		 * loopback: TCP is not handled (moat_plan_build, MOAT_NET_DENY) */
		ret->ll_net_handled = 0;
		return;
	}
	/* Landlock and seccomp only: no namespace; Landlock denies TCP, and
	 * the filter of this mode (no IP sockets, no unix sockets, no
	 * namespaces) is loaded before the plan exists */
	ret->ll_net_handled = ret->landlock ? ret->ll.net : 0;
	ret->seccomp = kf->seccomp;
	ret->seccomp_no_inet = ret->seccomp_no_unix = ret->seccomp_no_ns = kf->seccomp;
}

bool moat_plan_fits_early(const struct moat_kfeatures *kf, bool net_allowed,
			  const struct moat_plan *p)
{
	struct moat_plan e;

	/* (without user namespaces only the network denied is started early) */
	if (net_allowed && !kf->userns)
		return false;
	moat_plan_early(kf, net_allowed, &e);
	return p->userns == e.userns && p->mntns == e.mntns && p->pidns == e.pidns &&
	       p->ipcns == e.ipcns && p->netns == e.netns && p->landlock == e.landlock &&
	       p->ll.fs == e.ll.fs && p->ll_net_handled == e.ll_net_handled &&
	       p->ll_scoped == e.ll_scoped &&
	       (kf->userns || (p->seccomp == e.seccomp && (!p->seccomp || moat_plan_seccomp_variant(p) ==
							   moat_plan_seccomp_variant(&e))));
}

unsigned moat_plan_seccomp_variant(const struct moat_plan *p)
{
	return (p->seccomp_no_inet ? MOAT_SC_NO_INET : 0u) |
	       (p->seccomp_no_unix ? MOAT_SC_NO_UNIX : 0u) |
	       (p->seccomp_no_ns ? MOAT_SC_NO_NS : 0u) | (p->seccomp_ports ? MOAT_SC_PORTS : 0u);
}

/* Without a network namespace, "deny" closes the IP socket families. */
/* SECURITY: an allow-list of address families: AF_UNIX (refused on its
 * own by the no-unix rows unless a socket is kept), netlink's routing
 * protocol only (the C library asks it for the addresses in use), and the
 * kernel's crypto sockets. Every other family (IP, packets, SMC, RDS, TIPC,
 * CAN, Bluetooth, ...) and every other netlink protocol (user-to-user
 * messages reach host processes without a network namespace) is refused. */
const struct moat_sc_rule moat_seccomp_rules_no_inet[] = {
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET, "network denied: IPv4"},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET6, "network denied: IPv6"},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_PACKET, "network denied: raw packets"},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, 3, "network denied: other address families"},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 4, "network denied: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffcU},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 8, "network denied: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffeU},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, 11, "network denied: other address families"},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 12, "network denied: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffcU},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 18, "network denied: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffeU},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 20, "network denied: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffcU},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 24, "network denied: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffff8U},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 32, "network denied: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffcU},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 36, "network denied: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffeU},
    {"socket", E_PERM, MOAT_SC_ARG_GE, 0, 39, "network denied: other address families"},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_NETLINK, "network denied: netlink but routing",
     MOAT_SC_ARG_NE, 2, 0},
    {NULL, 0, MOAT_SC_ALWAYS, 0, 0, NULL},
};

/* The network allowed to listed TCP ports only: Landlock governs TCP
 * sockets' bind and connect, nothing else. MPTCP (a socket of protocol 262,
 * which falls back to plain TCP), SCTP and DCCP, a connection opened by
 * TCP Fast Open's first send (no connect call to check) and SMC sockets
 * (TCP underneath) would reach any port; the families other than IP, unix,
 * netlink and crypto are refused as with the network denied. */
const struct moat_sc_rule moat_seccomp_rules_ports[] = {
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET, "port list: IP protocols but TCP, UDP and ICMP (MPTCP, SCTP, SMC, ...)", MOAT_SC_ARG_GE, 2, 18},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET6, "port list: IP protocols but TCP, UDP and ICMP (MPTCP, SCTP, SMC, ...)", MOAT_SC_ARG_GE, 2, 59},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET6, "port list: IP protocols but TCP, UDP and ICMP (MPTCP, SCTP, SMC, ...)", MOAT_SC_ARG_IN, 2, 18, 0, 0xfffffffeU},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET6, "port list: IP protocols but TCP, UDP and ICMP (MPTCP, SCTP, SMC, ...)", MOAT_SC_ARG_IN, 2, 20, 0, 0xfffffffcU},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET6, "port list: IP protocols but TCP, UDP and ICMP (MPTCP, SCTP, SMC, ...)", MOAT_SC_ARG_IN, 2, 24, 0, 0xfffffff8U},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET6, "port list: IP protocols but TCP, UDP and ICMP (MPTCP, SCTP, SMC, ...)", MOAT_SC_ARG_IN, 2, 32, 0, 0xfffffff0U},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET6, "port list: IP protocols but TCP, UDP and ICMP (MPTCP, SCTP, SMC, ...)", MOAT_SC_ARG_IN, 2, 48, 0, 0xfffffff8U},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET6, "port list: IP protocols but TCP, UDP and ICMP (MPTCP, SCTP, SMC, ...)", MOAT_SC_ARG_IN, 2, 56, 0, 0xfffffffeU},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET, "port list: IP socket types but stream, datagram and raw (SCTP, DCCP)", MOAT_SC_ARG_IN, 1, 4, 0, 0xcU},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET, "port list: IP socket types but stream, datagram and raw (SCTP, DCCP)", MOAT_SC_ARG_IN, 1, 8, 0, 0x8U},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET6, "port list: IP socket types but stream, datagram and raw (SCTP, DCCP)", MOAT_SC_ARG_IN, 1, 4, 0, 0xcU},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, X_AF_INET6, "port list: IP socket types but stream, datagram and raw (SCTP, DCCP)", MOAT_SC_ARG_IN, 1, 8, 0, 0x8U},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, 3, "port list: other address families"},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 4, "port list: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffcU},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 8, "port list: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffeU},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, 11, "port list: other address families"},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 12, "port list: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffcU},
    {"socket", E_PERM, MOAT_SC_ARG_EQ, 0, 17, "port list: other address families"},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 18, "port list: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffeU},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 20, "port list: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffcU},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 24, "port list: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffff8U},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 32, "port list: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffcU},
    {"socket", E_PERM, MOAT_SC_ARG_IN, 0, 36, "port list: other address families", MOAT_SC_ALWAYS, 0, 0, 0xfffffffeU},
    {"socket", E_PERM, MOAT_SC_ARG_GE, 0, 39, "port list: other address families"},
    {"sendto", E_PERM, MOAT_SC_ARG_HAS, 3, X_MSG_FASTOPEN, "port list: TCP Fast Open"},
    {"sendmsg", E_PERM, MOAT_SC_ARG_HAS, 2, X_MSG_FASTOPEN, "port list: TCP Fast Open"},
    {"sendmmsg", E_PERM, MOAT_SC_ARG_HAS, 3, X_MSG_FASTOPEN, "port list: TCP Fast Open"},
    {NULL, 0, MOAT_SC_ALWAYS, 0, 0, NULL},
};
#pragma GCC diagnostic pop

/* ------------------------------------------------------------------ */
/* features                                                            */
/* ------------------------------------------------------------------ */

static const struct {
	const char *name;
	const char *summary;
} feature_info[MOAT_FEAT__COUNT] = {
    [MOAT_FEAT_FS_WRITE] = {"filesystem", "writes only inside the workspace and rw paths"},
    [MOAT_FEAT_TRUNCATE] = {"truncate", "truncating files outside the workspace is blocked"},
    [MOAT_FEAT_SECRETS] = {"secrets", "denied paths (keys, tokens, .env) are masked"},
    [MOAT_FEAT_PRIVATE_TMP] = {"private-tmp", "a private /tmp and /dev/shm"},
    [MOAT_FEAT_PROTECTED] = {"protected-paths",
			     "hooks, editor and shell startup files stay read-only"},
    [MOAT_FEAT_HOST_SOCKETS] = {"host-sockets", "host unix sockets (/run, /tmp) are unreachable"},
    [MOAT_FEAT_NETWORK] = {"network", "the network mode of the profile"},
    [MOAT_FEAT_SCOPES] = {"scopes", "abstract unix sockets and signals stay inside"},
    [MOAT_FEAT_SECCOMP] = {"seccomp", "dangerous system calls fail with EPERM"},
    [MOAT_FEAT_PIDNS] = {"pid-namespace", "host processes are invisible"},
    [MOAT_FEAT_MEM] = {"memory-limit", "memory is capped"},
    [MOAT_FEAT_PIDS] = {"process-limit", "the number of processes is capped"},
    [MOAT_FEAT_RLIMITS] = {"rlimits", "cpu time, file size, open files; no core dumps"},
    [MOAT_FEAT_METADATA] = {"metadata",
			    "modes, times, owners, xattrs and inode flags outside the writable "
			    "paths cannot change"},
};

const char *moat_feature_name(enum moat_feature f)
{
	return (unsigned)f < MOAT_FEAT__COUNT ? feature_info[f].name : "?";
}

const char *moat_feature_summary(enum moat_feature f)
{
	return (unsigned)f < MOAT_FEAT__COUNT ? feature_info[f].summary : "?";
}

__attribute__((format(printf, 4, 5))) static void feat(struct moat_plan *p, enum moat_feature f,
						       bool enforced, const char *mech_fmt, ...)
{
	va_list ap;

	p->feat[f].requested = true;
	p->feat[f].enforced = enforced;
	va_start(ap, mech_fmt);
	vsnprintf(p->feat[f].mechanism, sizeof(p->feat[f].mechanism), mech_fmt, ap);
	va_end(ap);
}

static void hint(struct moat_plan *p, enum moat_feature f, const char *h)
{
	moat_strlcpy(p->feat[f].hint, h, sizeof(p->feat[f].hint));
}

/* ------------------------------------------------------------------ */
/* plan construction                                                   */
/* ------------------------------------------------------------------ */

/* Device nodes the sandbox may use under /dev; everything else there
 * (disks, /dev/mem, consoles) stays unreachable even for uid 0. */
static const char *const plan_devices[] = {
    "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", NULL,
};

/* Denied paths that are never masked because the C library needs them to
 * work at all; the policy still refuses tool calls that read them. */
static const char *const mask_exempt[] = {
    "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/resolv.conf", NULL,
};

static int add_rule(struct moat_plan *p, const char *path, unsigned access, bool optional,
		    const char *origin, struct moat_error *err)
{
	char norm[PATH_MAX];
	struct moat_fs_rule *nv;
	int r;

	r = moat_plan_normpath(path, norm, sizeof(norm));
	if (r < 0) {
		moat_error_set(err, "%s path '%s' must be absolute", origin, path);
		return r;
	}
	for (size_t i = 0; i < p->nfs; i++) {
		if (!strcmp(p->fs[i].path, norm)) {
			p->fs[i].access |= access;
			p->fs[i].optional = p->fs[i].optional && optional;
			return 0;
		}
	}
	if (p->nfs >= MOAT_PLAN_MAX_PATHS) {
		moat_error_set(err, "too many filesystem rules (at most %d)", MOAT_PLAN_MAX_PATHS);
		return -E2BIG;
	}
	nv = realloc(p->fs, (p->nfs + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	p->fs = nv;
	memset(&nv[p->nfs], 0, sizeof(nv[p->nfs]));
	nv[p->nfs].path = moat_strdup(norm);
	if (!nv[p->nfs].path)
		return -ENOMEM;
	nv[p->nfs].access = access;
	nv[p->nfs].optional = optional;
	moat_strlcpy(nv[p->nfs].origin, origin, sizeof(nv[p->nfs].origin));
	p->nfs++;
	return 0;
}

/* SECURITY: a --ro or --rw path (or a profile's) that goes through a
 * symlink lying inside a writable path (the workspace, another --rw) is
 * refused: a command of an earlier run could have planted it there
 * (cache -> ~/.ssh, or -> .git/hooks), and the next run's profile would
 * then grant the link's target. A link outside every writable path is the
 * user's own and is followed. */
/* The first symbolic link on path's way that lies inside a writable path
 * of the plan: into link (and *ret_rw), or false. */
static bool planted_link(const struct moat_plan *p, const char *path, char *link, size_t linksz,
			 const char **ret_rw, int (*look)(const char *, struct stat *))
{
	size_t len = strlen(path);

	if (len >= linksz)
		return false;
	for (size_t k = 1; k <= len; k++) {
		struct stat st;

		if (k < len && path[k] != '/')
			continue;
		memcpy(link, path, k);
		link[k] = '\0';
		if ((look ? look(link, &st) : lstat(link, &st)) < 0)
			return false; /* missing: reported where the path is opened */
		if (!S_ISLNK(st.st_mode))
			continue;
		for (size_t j = 0; j < p->nfs; j++) {
			if (!(p->fs[j].access & MOAT_FS_WRITE) || !strcmp(p->fs[j].path, link) ||
			    !moat_path_within(link, p->fs[j].path))
				continue;
			*ret_rw = p->fs[j].path;
			return true;
		}
	}
	return false;
}

static int refuse_planted_links(const struct moat_plan *p, const struct moat_plan_context *ctx,
				struct moat_error *err)
{
	char link[PATH_MAX];
	const char *rw = NULL;

	for (size_t i = 0; i < p->nfs; i++) {
		const char *path = p->fs[i].path;

		if (!strcmp(p->fs[i].origin, "system") || !strcmp(p->fs[i].origin, "workspace") ||
		    !planted_link(p, path, link, sizeof(link), &rw, ctx->lstat))
			continue;
		moat_error_set(err,
			       "%s path '%s' goes through the symbolic link '%s', "
			       "which lies in the writable path '%s' (a command could "
			       "have planted it); name the real path instead",
			       p->fs[i].origin, path, link, rw);
		return -ELOOP;
	}
	return 0;
}

static int refuse_planted_mask_links(const struct moat_plan *p,
				     const struct moat_plan_context *ctx, struct moat_error *err)
{
	char link[PATH_MAX];
	const char *rw = NULL;

	/* SECURITY: the same for a path masked by name (--mask, a profile's
	 * mask; both come as "--mask"): the mask would cover the link's target, and the command could
	 * replace the link and write what the masked path then names (a
	 * decoy's settings.json). The policy's denied paths are the user's
	 * secrets wherever they lead (~/.ssh kept in a dotfiles repository),
	 * and the home directory is no writable path. */
	for (size_t i = 0; i < p->nmasks; i++) {
		const struct moat_mask *mk = &p->masks[i];

		if (mk->kind != MOAT_MASK_PATH || strcmp(mk->origin, "--mask") ||
		    !planted_link(p, mk->pattern, link, sizeof(link), &rw, ctx->lstat))
			continue;
		moat_error_set(err,
			       "%s path '%s' goes through the symbolic link '%s', which lies in "
			       "the writable path '%s' (a command could replace it and write "
			       "what the masked path names); name the real path instead",
			       mk->origin, mk->pattern, link, rw);
		return -ELOOP;
	}
	return 0;
}

/* a, sep and b into out: their length, or -1 when they do not fit (the
 * plan joins a hundred paths: snprintf's cost showed) */
static int join_path(char *out, size_t outsz, const char *a, const char *sep, const char *b)
{
	size_t la = strlen(a), ls = strlen(sep), lb = strlen(b);

	if (la + ls + lb >= outsz || la + ls + lb > INT_MAX)
		return -1;
	memcpy(out, a, la);
	memcpy(out + la, sep, ls);
	memcpy(out + la + ls, b, lb + 1);
	return (int)(la + ls + lb);
}

/* Expand "~" and "~/x" with home; join a relative path to base. */
static int expand_path(const char *in, const char *home, const char *base, char *out, size_t outsz)
{
	char tmp[PATH_MAX];
	int n;

	if (in[0] == '~' && (in[1] == '/' || in[1] == '\0')) {
		if (!home)
			return -ENOENT;
		n = join_path(tmp, sizeof(tmp), home, "", in + 1);
	} else if (in[0] == '/') {
		n = join_path(tmp, sizeof(tmp), in, "", "");
	} else {
		if (!base)
			return -EINVAL;
		n = join_path(tmp, sizeof(tmp), base, "/", in);
	}
	if (n < 0)
		return -ENAMETOOLONG;
	return moat_plan_normpath(tmp, out, outsz);
}

static int add_mask(struct moat_plan *p, const char *pattern, enum moat_mask_kind kind,
		    const char *origin, bool exemptible, struct moat_error *err)
{
	struct moat_mask *nv;
	uint32_t hs = str_hash32(pattern);
	uint64_t bit = 1ull << (hs % 64);
	uint64_t *seen = &p->mask_seen[(hs / 64) % MOAT_ARRAY_SIZE(p->mask_seen)];

	for (size_t i = 0; (*seen & bit) && i < p->nmasks; i++)
		if (p->masks[i].hash == hs && p->masks[i].kind == kind &&
		    !strcmp(p->masks[i].pattern, pattern)) {
			/* SECURITY: asked for by a source exempt_paths do not
			 * lift too (a project file, --mask): so it stays */
			p->masks[i].exemptible &= exemptible;
			return 0;
		}
	if (p->nmasks >= MOAT_PLAN_MAX_PATHS) {
		moat_error_set(err, "too many masked paths (at most %d)", MOAT_PLAN_MAX_PATHS);
		return -E2BIG;
	}
	/* room for 8, then doubled: a plan has a hundred masks */
	if (p->nmasks == 0 || (p->nmasks >= 8 && !(p->nmasks & (p->nmasks - 1)))) {
		nv = realloc(p->masks, (p->nmasks ? p->nmasks * 2 : 8) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		p->masks = nv;
	}
	nv = p->masks;
	memset(&nv[p->nmasks], 0, sizeof(nv[p->nmasks]));
	nv[p->nmasks].pattern = moat_strdup(pattern);
	if (!nv[p->nmasks].pattern)
		return -ENOMEM;
	nv[p->nmasks].kind = kind;
	nv[p->nmasks].hash = hs;
	nv[p->nmasks].exemptible = exemptible;
	*seen |= bit;
	moat_strlcpy(nv[p->nmasks].origin, origin, sizeof(nv[p->nmasks].origin));
	p->nmasks++;
	return 0;
}

static bool is_exempt(const char *path)
{
	for (size_t i = 0; mask_exempt[i]; i++)
		if (!strcmp(path, mask_exempt[i]))
			return true;
	return false;
}

/* Strip one trailing globstar component, "/" then two '*' or more (a
 * directory and all beneath: the directory itself is what gets masked). */
static void strip_globstar(char *s)
{
	size_t n = strlen(s), k = n;

	while (k > 0 && s[k - 1] == '*')
		k--;
	if (n - k >= 2 && k > 1 && s[k - 1] == '/' && s[k - 2] != '\\')
		s[k - 1] = '\0';
}

bool moat_plan_exempt(const struct moat_plan *p, const char *abs_path)
{
	return p && p->exempt_set && abs_path &&
	       moat_globset_first(p->exempt_set, abs_path, strlen(abs_path)) >= 0;
}

bool moat_plan_mask_exempt(const struct moat_plan *p, const struct moat_mask *mk,
			   const char *abs_path)
{
	return mk && mk->exemptible && moat_plan_exempt(p, abs_path);
}

/* A literal path as glob text: its glob characters escaped. */
static void put_glob_literal(struct moat_buf *b, const char *s)
{
	for (; *s; s++) {
		if (strchr("*?[]{}\\", *s))
			moat_buf_putc(b, '\\');
		moat_buf_putc(b, *s);
	}
}

/* The user's exempt_paths, resolved as the policy resolves path globs
 * (core/policy.c, absolute_pattern; its working directory is the
 * session's workspace): "<cwd>" and a relative pattern are the
 * workspace's, a pattern without '/' is a name anywhere ("**" "/NAME"),
 * "~" is the home; then compiled once. */
static int plan_exempt(struct moat_plan *p, const struct moat_strv *ex, struct moat_error *err)
{
	struct moat_buf b = MOAT_BUF_INIT;
	struct moat_error e;
	int r = 0;

	if (!ex || !ex->n)
		return 0;
	r = moat_globset_new(MOAT_GLOB_PATH, &p->exempt_set);
	for (size_t i = 0; r == 0 && i < ex->n; i++) {
		const char *pat = ex->v[i];
		size_t before = p->exempt.n;

		moat_buf_reset(&b);
		if (!pat || !*pat)
			continue;
		if (!strncmp(pat, "<cwd>", 5)) {
			put_glob_literal(&b, p->workspace);
			moat_buf_puts(&b, pat + 5);
		} else if (pat[0] == '/' || !strncmp(pat, "**", 2)) {
			moat_buf_puts(&b, pat);
		} else if (pat[0] == '~' && (pat[1] == '/' || !pat[1])) {
			if (!p->home)
				continue; /* no home: nothing of the user's there */
			put_glob_literal(&b, p->home);
			moat_buf_puts(&b, pat + 1);
		} else if (!strchr(pat, '/')) {
			moat_buf_puts(&b, "**/");
			moat_buf_puts(&b, pat);
		} else {
			put_glob_literal(&b, p->workspace);
			moat_buf_putc(&b, '/');
			moat_buf_puts(&b, pat[0] == '.' && pat[1] == '/' ? pat + 2 : pat);
		}
		if (b.oom) {
			r = -ENOMEM;
			break;
		}
		r = moat_strv_add(&p->exempt, b.data);
		if (r == -E2BIG)
			moat_error_set(err, "too many exempt_paths (at most %d)", MOAT_PLAN_MAX_PATHS);
		if (r < 0 || p->exempt.n == before)
			continue;
		moat_error_clear(&e);
		if (moat_globset_add(p->exempt_set, b.data, &e) < 0) {
			moat_error_set(err, "exempt_paths: '%s': %s", pat, e.msg);
			r = -EINVAL;
		}
	}
	if (r == 0)
		r = moat_globset_build(p->exempt_set);
	moat_buf_release(&b);
	return r;
}

/* Turn one denied-path pattern into masks. "**" patterns cannot be resolved
 * on the whole filesystem: they are masked in the workspace (scanned) and at
 * the home directory (the well-known places: ~/.ssh, ~/.aws, ~ / NAME.pem).
 * exemptible: the built-in or the user's denied paths, which exempt_paths
 * lift: a literal path an exemption matches is no mask at all, the matches
 * of the others are left out when the sandbox finds them. */
static int plan_mask_pattern(struct moat_plan *p, const char *pat, const char *origin,
			     bool exemptible, struct moat_error *err)
{
	char path[PATH_MAX], tail[PATH_MAX];
	int r, n;

	if (!*pat)
		return 0;
	if (!strncmp(pat, "**/", 3)) {
		moat_strlcpy(tail, pat + 3, sizeof(tail));
		strip_globstar(tail);
		if (!*tail || !strcmp(tail, "**"))
			return 0; /* a bare globstar: nothing sensible to mask */
		/* in the workspace: every match, found by a bounded scan */
		r = add_mask(p, pat, MOAT_MASK_WORKSPACE_NAME, origin, exemptible, err);
		if (r < 0)
			return r;
		if (!p->home)
			return 0;
		n = join_path(path, sizeof(path), p->home, "/", tail);
		if (n < 0)
			return 0;
		if (moat_path_within(path, p->workspace))
			return 0; /* the scan covers it */
		if (!mask_is_glob(path) && exemptible && moat_plan_exempt(p, path))
			return 0; /* exempt_paths */
		return add_mask(p, path, mask_is_glob(path) ? MOAT_MASK_GLOB : MOAT_MASK_PATH,
				origin, exemptible, err);
	}
	r = expand_path(pat, p->home, p->workspace, path, sizeof(path));
	if (r == -ENOENT)
		return 0; /* "~" without a home: nothing of the user's to mask */
	if (r < 0) {
		moat_error_set(err, "%s: cannot use '%s' as a masked path", origin, pat);
		return r;
	}
	size_t full_len = strlen(path);

	strip_globstar(path);
	/* a globstar inside the path ("DIR/ ** /NAME" without the spaces): glob(3) would read it
	 * as one "*". Below the workspace it is the workspace scan's pattern;
	 * elsewhere a whole-tree search is not done: a --mask says so and
	 * refuses, a denied path keeps the part the scan covers (the policy
	 * still refuses it to the tools everywhere) */
	{
		char *gs = strstr(path, "/**/");

		if (gs) {
			size_t hl = (size_t)(gs - path);
			char head[PATH_MAX];

			memcpy(head, path, hl);
			head[hl] = '\0';
			bool mask = !strcmp(origin, "--mask");

			if (!has_glob(head) && (mask ? !strcmp(head, p->workspace)
						     : moat_path_within(p->workspace, head))) {
				/* the scan's pattern keeps a trailing globstar: it
				 * stands for directories only */
				size_t l = strlen(path);

				if (l != full_len && l + 4 <= sizeof(path))
					memcpy(path + l, "/**", 4);
				return add_mask(p, gs + 1, MOAT_MASK_WORKSPACE_NAME, origin,
						exemptible, err);
			}
			if (mask || strchr(path, '{')) {
				/* (a denied path's {a,b} alternatives without the
				 * globstar would be lost with it: refused too) */
				moat_error_set(err,
					       "%s '%s': '**' inside a path is masked only at the "
					       "start (**/NAME: the workspace and the top of the home "
					       "directory) or right after the workspace "
					       "(WORKSPACE/**/NAME); mask the directories themselves",
					       origin, pat);
				return -EINVAL;
			}
			return 0;
		}
	}
	/* The sandbox mounts its own /proc for its PID namespace: host process
	 * entries (/proc/PID/environ) are not there to mask. */
	if (!strncmp(path, "/proc/", 6))
		return 0;
	if (is_exempt(path)) {
		return moat_strv_add(&p->mask_exempt, path);
	}
	/* a directory above the workspace is masked around it (src/sandbox/ns.c
	 * mask_around); "/" and the workspace itself cannot be */
	if (!strcmp(path, "/") || !strcmp(path, p->workspace)) {
		moat_error_set(err,
			       "%s: masking '%s' would hide the workspace '%s' (remove that entry)",
			       origin, pat, p->workspace);
		return -EINVAL;
	}
	if (!mask_is_glob(path) && exemptible && moat_plan_exempt(p, path))
		return 0; /* exempt_paths */
	return add_mask(p, path, mask_is_glob(path) ? MOAT_MASK_GLOB : MOAT_MASK_PATH, origin,
			exemptible, err);
}

bool moat_protect_name_ok(const char *s)
{
	/* relative, no "..", no empty components */
	if (!s || !*s || s[0] == '/')
		return false;
	for (const char *c = s; *c;) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 2 && c[0] == '.' && c[1] == '.') || (n == 1 && c[0] == '.'))
			return false;
		c += n;
		if (*c == '/')
			c++;
	}
	return true;
}

/* A read-only rule inside a writable one: Landlock cannot carve it out (its
 * rules only add), so it needs a read-only bind mount. */
static bool ro_inside_rw(const struct moat_plan *p)
{
	for (size_t i = 0; i < p->nfs; i++) {
		if ((p->fs[i].access & MOAT_FS_WRITE) || !strcmp(p->fs[i].path, "/"))
			continue;
		for (size_t j = 0; j < p->nfs; j++)
			if ((p->fs[j].access & MOAT_FS_WRITE) &&
			    strcmp(p->fs[j].path, p->fs[i].path) &&
			    moat_path_within(p->fs[i].path, p->fs[j].path))
				return true;
	}
	return false;
}

static int plan_filesystem(struct moat_plan *p, const struct moat_profile *pr,
			   const struct moat_plan_context *ctx, const struct moat_kfeatures *kf,
			   struct moat_error *err)
{
	char path[PATH_MAX];
	int r;

	/* reads: the whole tree except /dev (expanded by the sandbox layer),
	 * which gets only the harmless device nodes */
	r = add_rule(p, "/", MOAT_FS_READ | MOAT_FS_EXEC, false, "system", err);
	if (r < 0)
		return r;
	p->devices = plan_devices;

	p->ws_access = pr->workspace;
	if (pr->workspace == MOAT_WS_RW)
		r = add_rule(p, p->workspace, MOAT_FS_READ | MOAT_FS_EXEC | MOAT_FS_WRITE, false,
			     "workspace", err);
	else if (pr->workspace == MOAT_WS_RO)
		r = add_rule(p, p->workspace, MOAT_FS_READ | MOAT_FS_EXEC, false, "workspace", err);
	if (r < 0)
		return r;

	for (size_t i = 0; i < pr->ro.n; i++) {
		r = expand_path(pr->ro.v[i], p->home, p->cwd, path, sizeof(path));
		if (r < 0 || has_glob(path)) {
			moat_error_set(err,
				       "read-only path '%s' must be a path (absolute, ~ or "
				       "relative to the working directory), not a glob",
				       pr->ro.v[i]);
			return -EINVAL;
		}
		r = add_rule(p, path, MOAT_FS_READ | MOAT_FS_EXEC, false, "--ro", err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < pr->rw.n; i++) {
		r = expand_path(pr->rw.v[i], p->home, p->cwd, path, sizeof(path));
		if (r < 0 || has_glob(path)) {
			moat_error_set(err,
				       "read-write path '%s' must be a path (absolute, ~ or "
				       "relative to the working directory), not a glob",
				       pr->rw.v[i]);
			return -EINVAL;
		}
		r = add_rule(p, path, MOAT_FS_READ | MOAT_FS_EXEC | MOAT_FS_WRITE, false, "--rw",
			     err);
		if (r < 0)
			return r;
	}

	r = refuse_planted_links(p, ctx, err);
	if (r < 0)
		return r;

	/* private /tmp and /dev/shm: a fresh tmpfs on the host's directories;
	 * the rule on the host inode covers what is mounted there */
	p->private_tmp = p->mntns;
	p->hide_run = p->mntns;
	/* SECURITY: a pseudo-terminal instance of its own: the host's /dev/pts
	 * holds the user's other terminals (readable and writable by the same
	 * uid); without a mount namespace only the command's own terminal is
	 * granted */
	p->private_pts = p->mntns;
	if (p->mntns) {
		r = add_rule(p, "/tmp", MOAT_FS_READ | MOAT_FS_EXEC | MOAT_FS_WRITE, false,
			     "private-tmp", err);
		if (r == 0)
			r = add_rule(p, "/dev/shm", MOAT_FS_READ | MOAT_FS_WRITE, true,
				     "private-tmp", err);
		if (r < 0)
			return r;
	} else {
		/* SECURITY: without a mount namespace /tmp is the host's: it stays
		 * read-only and the command gets its own scratch directory (TMPDIR) */
		p->scratch_tmp = true;
	}

	/* masks: the policy's denied paths (what the user's exempt_paths
	 * lift from them left out), a project file's, then the profile's */
	r = plan_exempt(p, ctx->exempt, err);
	if (r < 0)
		return r;
	for (size_t i = 0; ctx->denied && ctx->denied[i]; i++) {
		r = plan_mask_pattern(p, ctx->denied[i], "denied_paths", true, err);
		if (r < 0)
			return r;
	}
	if (ctx->denied_extra) {
		for (size_t i = 0; i < ctx->denied_extra->n; i++) {
			r = plan_mask_pattern(p, ctx->denied_extra->v[i], "denied_paths", true,
					      err);
			if (r < 0)
				return r;
		}
	}
	if (ctx->denied_project) {
		for (size_t i = 0; i < ctx->denied_project->n; i++) {
			r = plan_mask_pattern(p, ctx->denied_project->v[i], "denied_paths", false,
					      err);
			if (r < 0)
				return r;
		}
	}
	for (size_t i = 0; i < pr->mask.n; i++) {
		r = plan_mask_pattern(p, pr->mask.v[i], "--mask", false, err);
		if (r < 0)
			return r;
	}
	r = refuse_planted_mask_links(p, ctx, err);
	if (r < 0)
		return r;

	/* protected names inside a writable workspace */
	if (pr->workspace == MOAT_WS_RW) {
		for (size_t i = 0; i < pr->protect.n; i++) {
			if (!moat_protect_name_ok(pr->protect.v[i])) {
				moat_error_set(err,
					       "protected path '%s' must be relative to the "
					       "workspace, without '.' or '..'",
					       pr->protect.v[i]);
				return -EINVAL;
			}
			r = moat_strv_add(&p->protect, pr->protect.v[i]);
			if (r < 0)
				return r;
		}
	}
	/* SECURITY: the user's configuration inside a writable path (the home
	 * as the workspace, $XDG_CONFIG_HOME inside it, a --rw ~/.config):
	 * else a command could accept every gap for the runs after it. In the
	 * workspace it is a protected name, as .moat is; in another writable
	 * path a read-only rule (a read-only bind where it exists); without a
	 * mount namespace Landlock's carve grants it read-only in both */
	/* (the same for the audit log's directory: the record of what ran) */
	const char *kept[8], *leaf[8];
	size_t nkept = 0;

	for (size_t i = 0; ctx->user_config && ctx->user_config[i] && nkept < 7; i++) {
		kept[nkept] = ctx->user_config[i];
		leaf[nkept++] = "config.json";
	}
	if (ctx->audit_dir && ctx->audit_file) {
		kept[nkept] = ctx->audit_dir;
		leaf[nkept++] = ctx->audit_file;
	}
	for (size_t i = 0; i < nkept; i++) {
		const char *d = kept[i], *rel;
		bool have = false, inside = false;
		char file[PATH_MAX];

		/* the workspace is the directory: its file */
		if (pr->workspace == MOAT_WS_RW && !strcmp(d, p->workspace)) {
			if (join_path(file, sizeof(file), d, "/", leaf[i]) < 0)
				continue;
			d = file;
		}
		for (size_t j = 0; j < p->nfs; j++) {
			const struct moat_fs_rule *w = &p->fs[j];

			/* (the private /tmp keeps nothing: only the paths
			 * kept in it are writable, by their own rules) */
			if (!(w->access & MOAT_FS_WRITE) || !strcmp(w->origin, "private-tmp") ||
			    !strcmp(w->path, d) || !moat_path_within(d, w->path))
				continue;
			inside = true;
			if (!strcmp(w->path, p->workspace) && pr->workspace == MOAT_WS_RW)
				continue;
			r = add_rule(p, d, MOAT_FS_READ | MOAT_FS_EXEC, true, "user-config", err);
			if (r < 0)
				return r;
			break;
		}
		if (!inside)
			continue;
		if ((r = moat_strv_add(&p->config_dirs, d)) < 0)
			return r;
		if (pr->workspace != MOAT_WS_RW || !moat_path_within(d, p->workspace) ||
		    !strcmp(d, p->workspace))
			continue;
		rel = d + strlen(p->workspace) + (strcmp(p->workspace, "/") ? 1 : 0);
		if (!moat_protect_name_ok(rel))
			continue;
		for (size_t j = 0; j < p->protect.n && !have; j++)
			have = !strcmp(p->protect.v[j], rel);
		if (!have && (r = moat_strv_add(&p->protect, rel)) < 0)
			return r;
	}
	p->home_cow = p->mntns && pr->home_cow && p->home;

	for (size_t i = 0; i < pr->sockets.n; i++) {
		r = expand_path(pr->sockets.v[i], p->home, NULL, path, sizeof(path));
		if (r < 0) {
			moat_error_set(err, "socket '%s' must be an absolute path",
				       pr->sockets.v[i]);
			return -EINVAL;
		}
		r = moat_strv_add(&p->sockets, path);
		if (r < 0)
			return r;
	}

	/* requested versus enforced */
	if (p->landlock)
		feat(p, MOAT_FEAT_FS_WRITE, true, "landlock abi %d", p->ll.abi);
	else
		feat(p, MOAT_FEAT_FS_WRITE, false, "none");
	if (!p->landlock)
		hint(p, MOAT_FEAT_FS_WRITE,
		     kf->landlock_errno == 95 /* EOPNOTSUPP */
			 ? "Landlock is built in but disabled: add 'landlock' to the lsm= "
			   "kernel command line"
			 : "needs Linux >= 5.13 with CONFIG_SECURITY_LANDLOCK=y and 'landlock' "
			   "in lsm=");
	feat(p, MOAT_FEAT_TRUNCATE, p->landlock && (p->ll.fs & MOAT_LL_FS_TRUNCATE), "%s",
	     (p->ll.fs & MOAT_LL_FS_TRUNCATE) ? "landlock truncate" : "none");
	if (!(p->ll.fs & MOAT_LL_FS_TRUNCATE))
		hint(p, MOAT_FEAT_TRUNCATE, "needs Landlock ABI 3 (Linux >= 6.2)");
	feat(p, MOAT_FEAT_PRIVATE_TMP, p->mntns, "%s",
	     p->mntns ? "tmpfs in a mount namespace" : "scratch TMPDIR only; /tmp read-only");
	if (!p->mntns)
		hint(p, MOAT_FEAT_PRIVATE_TMP,
		     "needs a mount namespace: enable unprivileged user namespaces; until then the "
		     "command gets a scratch TMPDIR and /tmp stays read-only");
	if (p->nmasks) {
		/* without a mount namespace Landlock leaves the masked paths out of
		 * every rule, the workspace's too (src/sandbox/landlock.c) */
		feat(p, MOAT_FEAT_SECRETS, p->mntns || p->landlock, "%s",
		     p->mntns	   ? "empty read-only mounts"
		     : p->landlock ? "landlock rules carved around them, in the workspace too"
				   : "none");
		if (!p->mntns && !p->landlock)
			hint(
			    p, MOAT_FEAT_SECRETS,
			    "masking needs a mount namespace (enable unprivileged user namespaces) "
			    "or Landlock");
	}
	/* Landlock governs content, not metadata: chmod, chown, utimes,
	 * setxattr and inode flags outside the workspace are stopped by the
	 * read-only mounts of the mount namespace (seccomp refuses setuid and
	 * setgid bits in every mode) */
	feat(p, MOAT_FEAT_METADATA, p->mntns, "%s",
	     p->mntns ? "the tree read-only but for the writable paths (mount flags)" : "none");
	if (!p->mntns)
		hint(p, MOAT_FEAT_METADATA,
		     "needs a mount namespace (enable unprivileged user namespaces); else modes, "
		     "times and xattrs of the user's files outside the workspace can change (not "
		     "content)");
	if (p->protect.n || ro_inside_rw(p)) {
		feat(p, MOAT_FEAT_PROTECTED, p->mntns, "%s",
		     p->mntns ? "read-only bind mounts" : "none");
		if (!p->mntns)
			hint(
			    p, MOAT_FEAT_PROTECTED,
			    "protected names and --ro paths in writable ones need a mount namespace "
			    "(enable user namespaces or use --profile readonly); else changes are "
			    "undone afterwards");
	}
	return 0;
}

/* Host unix sockets: hidden with /run and /tmp by the mount namespace; with
 * the network denied, creating unix sockets is refused as well (seccomp),
 * which reaches the ones anywhere else too (a home read-only, /var/lib...,
 * and everything without a mount namespace). socketpair(2) keeps working,
 * and a profile that allows a named host socket keeps unix sockets. */
static void plan_host_sockets(struct moat_plan *p)
{
	p->seccomp_no_unix = p->net == MOAT_NET_DENY && p->seccomp && p->sockets.n == 0;
	feat(p, MOAT_FEAT_HOST_SOCKETS, p->mntns || p->seccomp_no_unix, "%s",
	     p->mntns && p->seccomp_no_unix ? "tmpfs over /run and /tmp; no unix sockets (seccomp)"
	     : p->mntns			    ? "tmpfs over /run and /tmp"
	     : p->seccomp_no_unix	    ? "seccomp: no unix sockets (socketpair only)"
					    : "none");
	if (!p->mntns && !p->seccomp_no_unix)
		hint(p, MOAT_FEAT_HOST_SOCKETS,
		     "needs a mount namespace (enable unprivileged user namespaces), or --net deny "
		     "(then no unix sockets can be created)");
}

static void plan_network(struct moat_plan *p, const struct moat_profile *pr,
			 const struct moat_kfeatures *kf)
{
	bool ll_net = p->landlock && p->ll.net;

	p->net = pr->net;
	memcpy(p->ports, pr->ports, sizeof(p->ports));
	p->nports = pr->nports;
	switch (pr->net) {
	case MOAT_NET_DENY:
		p->netns = p->mntns;
		/* In a network namespace of its own (only lo) the command may
		 * serve and connect on its private loopback: test suites start
		 * local servers, and nothing there reaches the host. Without one,
		 * seccomp refuses IP sockets and Landlock denies TCP as well. */
		if (ll_net && !p->netns)
			p->ll_net_handled = MOAT_LL_NET_BIND_TCP | MOAT_LL_NET_CONNECT_TCP;
		if (!p->netns && p->seccomp)
			p->seccomp_no_inet = true;
		feat(p, MOAT_FEAT_NETWORK, p->netns || p->seccomp_no_inet, "deny: %s%s",
		     p->netns		  ? "network namespace (loopback only)"
		     : p->seccomp_no_inet ? "seccomp (no IP sockets)"
					  : "none",
		     p->ll_net_handled ? " + landlock tcp" : "");
		if (!p->netns && !p->seccomp_no_inet)
			hint(p, MOAT_FEAT_NETWORK,
			     "needs user namespaces or seccomp to deny the network");
		break;
	case MOAT_NET_PORTS:
		if (ll_net)
			p->ll_net_handled = MOAT_LL_NET_BIND_TCP | MOAT_LL_NET_CONNECT_TCP;
		/* SECURITY: what Landlock's TCP rules do not see (MPTCP, SCTP,
		 * TCP Fast Open, SMC) is refused by seccomp */
		p->seccomp_ports = p->seccomp;
		feat(p, MOAT_FEAT_NETWORK, ll_net && p->seccomp, "%s",
		     ll_net && p->seccomp
			 ? "ports: landlock tcp connect rules + seccomp (no MPTCP, SCTP, TCP Fast "
			   "Open, other families; udp not filtered)"
			 : "none");
		if (!ll_net)
			hint(p, MOAT_FEAT_NETWORK,
			     "per-port rules need Landlock ABI 4 (Linux >= 6.7); use --net deny or "
			     "--net allow");
		break;
	case MOAT_NET_ALLOW:
		feat(p, MOAT_FEAT_NETWORK, true, "allow: host network");
		break;
	}

	/* scopes: Landlock ABI 6, or the namespaces that give the same effect
	 * (abstract sockets live in a network namespace, signals reach only a
	 * PID namespace's members) */
	if (p->landlock && p->ll.scoped)
		p->ll_scoped = p->ll.scoped;
	{
		bool abstract_ok = p->ll_scoped || p->netns;
		bool signal_ok = p->ll_scoped || p->pidns;

		feat(p, MOAT_FEAT_SCOPES, abstract_ok && signal_ok, "%s",
		     p->ll_scoped		  ? "landlock scopes"
		     : (abstract_ok && signal_ok) ? "network and pid namespaces"
						  : "none");
		if (!(abstract_ok && signal_ok))
			hint(p, MOAT_FEAT_SCOPES,
			     "needs Landlock ABI 6 (Linux >= 6.12), or --net deny with user "
			     "namespaces");
	}
	(void)kf;
}

static void plan_limits(struct moat_plan *p, const struct moat_profile *pr,
			const struct moat_kfeatures *kf)
{
	p->mem_bytes = pr->mem_mb > 0 ? (uint64_t)pr->mem_mb << 20 : 0;
	p->pids = pr->pids > 0 ? pr->pids : 0;
	p->cpu_s = pr->cpu_s > 0 ? pr->cpu_s : 0;
	p->fsize_bytes = pr->fsize_mb > 0 ? (uint64_t)pr->fsize_mb << 20 : 0;
	p->nofile = pr->nofile > 0 ? pr->nofile : 0;
	p->timeout_s = pr->timeout_s > 0 ? pr->timeout_s : 0;

	if (p->mem_bytes) {
		if (kf->cgroup) {
			p->mem_mech = MOAT_LIMIT_CGROUP;
			feat(p, MOAT_FEAT_MEM, true, "cgroup memory.max");
		} else {
			/* RLIMIT_AS would count reservations (Java, Go, node reserve
			 * gigabytes they never touch); RLIMIT_DATA counts writable
			 * private memory, i.e. what can actually be used. */
			p->mem_mech = MOAT_LIMIT_RLIMIT;
			feat(p, MOAT_FEAT_MEM, true,
			     "rlimit data (per process; reservations free)");
		}
	}
	if (p->pids) {
		if (kf->cgroup) {
			p->pids_mech = MOAT_LIMIT_CGROUP;
			feat(p, MOAT_FEAT_PIDS, true, "cgroup pids.max");
		} else if (p->pidns && kf->pidns_pid_max && p->pids + 1 >= MOAT_PLAN_MIN_PID_MAX) {
			/* the sandbox's own PID namespace gets pid_max = pids + 1:
			 * at most pids tasks, whoever the user is */
			p->pids_mech = MOAT_LIMIT_PIDNS;
			feat(p, MOAT_FEAT_PIDS, true, "pid namespace pid_max%s",
			     kf->is_root ? "" : " + rlimit nproc");
		} else if (!kf->is_root) {
			/* RLIMIT_NPROC counts the user's processes in the user
			 * namespace; without one, all of the user's processes (the
			 * sandbox layer adds the current count) */
			p->pids_mech = MOAT_LIMIT_RLIMIT;
			feat(p, MOAT_FEAT_PIDS, true, "rlimit nproc%s",
			     p->userns ? " (per user namespace)"
				       : " (counts all the user's processes)");
		} else {
			/* root ignores RLIMIT_NPROC */
			p->pids_mech = MOAT_LIMIT_NONE;
			feat(p, MOAT_FEAT_PIDS, false, "none");
			hint(p, MOAT_FEAT_PIDS,
			     "as root, needs a delegated cgroup v2 subtree or user namespaces on "
			     "Linux >= 6.14 (and --pids >= 300); or run as a regular user");
		}
	}
	feat(p, MOAT_FEAT_RLIMITS, true, "rlimit cpu %ld s, fsize %llu MiB, nofile %ld, core 0",
	     p->cpu_s, (unsigned long long)(p->fsize_bytes >> 20), p->nofile);
}

static int plan_env(struct moat_plan *p, const struct moat_profile *pr)
{
	p->env = pr->env;
	for (size_t i = 0; i < pr->env_pass.n; i++) {
		const char *n = pr->env_pass.v[i];

		if (!*n || strchr(n, '='))
			return -EINVAL;
		if (p->env_pass.n >= MOAT_PLAN_MAX_ENV_NAMES)
			return -E2BIG;
		int r = moat_strv_add(&p->env_pass, n);
		if (r < 0)
			return r;
	}
	return 0;
}

int moat_plan_build(const struct moat_profile *pr, const struct moat_plan_context *ctx,
		    const struct moat_kfeatures *kf, struct moat_plan **ret, struct moat_error *err)
{
	struct moat_plan *p;
	char buf[PATH_MAX];
	int r;

	if (!ctx->workspace || moat_plan_normpath(ctx->workspace, buf, sizeof(buf)) < 0) {
		moat_error_set(err, "the workspace must be an absolute path");
		return -EINVAL;
	}
	if (!strcmp(buf, "/")) {
		moat_error_set(err, "the workspace cannot be '/' (everything would be writable)");
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	moat_strlcpy(p->profile, pr->name, sizeof(p->profile));
	p->workspace = moat_strdup(buf);
	p->tmp_workspace = ctx->tmp_workspace;
	p->argv = ctx->argv;
	p->scan_max_entries = ctx->scan_max_entries;
	if (!p->workspace) {
		r = -ENOMEM;
		goto fail;
	}
	if (!ctx->cwd || moat_plan_normpath(ctx->cwd, buf, sizeof(buf)) < 0) {
		moat_error_set(err, "the working directory must be an absolute path");
		r = -EINVAL;
		goto fail;
	}
	/* SECURITY: seed 000's workspace-escape guard */
	if (!moat_path_within(buf, p->workspace)) {
		moat_error_set(err,
			       "the working directory '%s' is outside the workspace '%s' (cd into "
			       "it, or pass --workspace)",
			       buf, p->workspace);
		r = -EINVAL;
		goto fail;
	}
	p->cwd = moat_strdup(buf);
	if (!p->cwd) {
		r = -ENOMEM;
		goto fail;
	}
	if (ctx->home && ctx->home[0] == '/' &&
	    moat_plan_normpath(ctx->home, buf, sizeof(buf)) == 0 && strcmp(buf, "/")) {
		p->home = moat_strdup(buf);
		if (!p->home) {
			r = -ENOMEM;
			goto fail;
		}
	}

	/* mechanisms available */
	p->landlock = kf->landlock_abi > 0;
	moat_landlock_masks(kf->landlock_abi, &p->ll);
	p->userns = kf->userns;
	/* root (CAP_SYS_ADMIN in its own user namespace) makes the others
	 * without a new user namespace where those are disabled */
	p->mntns = p->ipcns = p->userns || kf->ns_admin;
	/* a PID namespace needs its own /proc: where the container masks
	 * /proc none can be mounted, and the command keeps the container's
	 * (the container is the process boundary) */
	p->pidns = p->mntns && kf->fresh_proc;
	p->fresh_proc = p->pidns && p->mntns;
	p->seccomp = kf->seccomp;
	p->seccomp_no_ns = p->seccomp && (!p->pidns || !p->ipcns);
	p->drop_caps = true;
	p->fallback = pr->fallback;

	r = plan_filesystem(p, pr, ctx, kf, err);
	if (r < 0)
		goto fail;
	plan_network(p, pr, kf);
	plan_host_sockets(p);

	feat(p, MOAT_FEAT_SECCOMP, p->seccomp, "%s", p->seccomp ? "libseccomp filter" : "none");
	if (!p->seccomp)
		hint(p, MOAT_FEAT_SECCOMP, "needs CONFIG_SECCOMP_FILTER=y");
	feat(p, MOAT_FEAT_PIDNS, p->pidns, "%s",
	     p->pidns ? "pid namespace with its own /proc" : "none");
	if (!p->pidns && p->mntns) {
		char h[256];

		snprintf(h, sizeof(h),
			 "needs a fresh /proc mount (refused: %.60s); the container's processes "
			 "and command lines stay visible, Landlock keeps their environment, memory, "
			 "fds and (ABI 6) signals out of reach",
			 kf->fresh_proc_why[0] ? kf->fresh_proc_why : "the container masks /proc");
		hint(p, MOAT_FEAT_PIDNS, h);
	} else if (!p->pidns)
		hint(p, MOAT_FEAT_PIDNS,
		     "needs user namespaces; without them host processes are visible in /proc "
		     "(but Landlock still blocks ptrace and, with ABI 6, signals)");
	if (!p->mntns && kf->userns_why[0]) {
		/* say why namespaces are missing on each namespace-backed gap */
		for (int f = 0; f < MOAT_FEAT__COUNT; f++) {
			if (p->feat[f].requested && !p->feat[f].enforced &&
			    f != MOAT_FEAT_FS_WRITE && f != MOAT_FEAT_TRUNCATE &&
			    f != MOAT_FEAT_SECCOMP && f != MOAT_FEAT_PIDS &&
			    !strstr(p->feat[f].hint, kf->userns_why)) {
				char h[256];

				snprintf(h, sizeof(h), "%.160s (%.80s)", p->feat[f].hint,
					 kf->userns_why);
				hint(p, (enum moat_feature)f, h);
			}
		}
	}

	plan_limits(p, pr, kf);
	r = plan_env(p, pr);
	if (r < 0) {
		moat_error_set(err, "bad --env name list");
		goto fail;
	}
	*ret = p;
	return 0;
fail:
	if (r == -ENOMEM && !err->msg[0])
		moat_error_set(err, "out of memory");
	moat_plan_free(p);
	return r;
}

struct moat_plan *moat_plan_free(struct moat_plan *p)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->nfs; i++)
		free(p->fs[i].path);
	free(p->fs);
	for (size_t i = 0; i < p->nmasks; i++)
		free(p->masks[i].pattern);
	free(p->masks);
	strv_release(&p->mask_exempt);
	strv_release(&p->exempt);
	moat_globset_free(p->exempt_set);
	strv_release(&p->protect);
	strv_release(&p->config_dirs);
	strv_release(&p->sockets);
	strv_release(&p->env_pass);
	free(p->workspace);
	free(p->cwd);
	free(p->home);
	free(p);
	return NULL;
}

size_t moat_plan_gaps(const struct moat_plan *p, char *out, size_t outsz)
{
	size_t n = 0, o = 0;

	if (out && outsz)
		out[0] = '\0';
	for (int f = 0; f < MOAT_FEAT__COUNT; f++) {
		if (!p->feat[f].requested || p->feat[f].enforced)
			continue;
		if (out && o < outsz) {
			int w = snprintf(out + o, outsz - o, "%s%s", n ? ", " : "",
					 moat_feature_name((enum moat_feature)f));
			if (w > 0)
				o += (size_t)w;
		}
		n++;
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

static void js(struct moat_buf *b, const char *s)
{
	if (!s)
		moat_buf_puts(b, "null");
	else
		moat_buf_json_str(b, s, strlen(s));
}

static void js_strv(struct moat_buf *b, const struct moat_strv *l)
{
	moat_buf_putc(b, '[');
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			moat_buf_puts(b, ", ");
		js(b, l->v[i]);
	}
	moat_buf_putc(b, ']');
}

static const char *mask_kind_name(enum moat_mask_kind k)
{
	switch (k) {
	case MOAT_MASK_PATH:
		return "path";
	case MOAT_MASK_GLOB:
		return "glob";
	case MOAT_MASK_WORKSPACE_NAME:
		return "workspace-scan";
	}
	return "?";
}

static void js_access(struct moat_buf *b, unsigned a)
{
	moat_buf_printf(b, "\"%s%s%s%s\"", (a & MOAT_FS_READ) ? "r" : "",
			(a & MOAT_FS_WRITE) ? "w" : "", (a & MOAT_FS_EXEC) ? "x" : "",
			(a & MOAT_FS_DEV) ? "d" : "");
}

int moat_kfeatures_to_json(const struct moat_kfeatures *kf, struct moat_buf *b)
{
	moat_buf_printf(b,
			"{\"kernel\": \"%u.%u\", \"landlock_abi\": %d, \"user_namespaces\": %s, "
			"\"seccomp\": %s, \"cgroup_v2_delegated\": %s, \"pidns_pid_max\": %s, "
			"\"root\": %s, \"namespaces_without_userns\": %s, \"fresh_proc\": %s",
			kf->kernel_major, kf->kernel_minor, kf->landlock_abi,
			kf->userns ? "true" : "false", kf->seccomp ? "true" : "false",
			kf->cgroup ? "true" : "false", kf->pidns_pid_max ? "true" : "false",
			kf->is_root ? "true" : "false", kf->ns_admin ? "true" : "false",
			kf->fresh_proc ? "true" : "false");
	if (!kf->fresh_proc) {
		moat_buf_puts(b, ", \"fresh_proc_why\": ");
		js(b, kf->fresh_proc_why);
	}
	if (!kf->userns) {
		moat_buf_puts(b, ", \"user_namespaces_why\": ");
		js(b, kf->userns_why);
	}
	if (kf->cgroup) {
		moat_buf_puts(b, ", \"cgroup_dir\": ");
		js(b, kf->cgroup_dir);
	} else {
		moat_buf_puts(b, ", \"cgroup_why\": ");
		js(b, kf->cgroup_why);
	}
	moat_buf_putc(b, '}');
	return b->oom ? -ENOMEM : 0;
}

int moat_plan_to_json(const struct moat_plan *p, struct moat_buf *b)
{
	moat_buf_puts(b, "{\n  \"profile\": ");
	js(b, p->profile);
	moat_buf_puts(b, ",\n  \"workspace\": ");
	js(b, p->workspace);
	moat_buf_printf(b, ",\n  \"workspace_access\": \"%s\"",
			p->ws_access == MOAT_WS_RW   ? "rw"
			: p->ws_access == MOAT_WS_RO ? "ro"
						     : "none");
	moat_buf_printf(b, ",\n  \"tmp_workspace\": %s", p->tmp_workspace ? "true" : "false");
	moat_buf_puts(b, ",\n  \"cwd\": ");
	js(b, p->cwd);
	moat_buf_puts(b, ",\n  \"command\": [");
	for (size_t i = 0; p->argv && p->argv[i]; i++) {
		if (i)
			moat_buf_puts(b, ", ");
		js(b, p->argv[i]);
	}
	moat_buf_puts(b, "],\n  \"filesystem\": {\n    \"rules\": [");
	for (size_t i = 0; i < p->nfs; i++) {
		moat_buf_puts(b, i ? ",\n      {\"path\": " : "\n      {\"path\": ");
		js(b, p->fs[i].path);
		moat_buf_puts(b, ", \"access\": ");
		js_access(b, p->fs[i].access);
		moat_buf_puts(b, ", \"origin\": ");
		js(b, p->fs[i].origin);
		moat_buf_putc(b, '}');
	}
	moat_buf_puts(b, "],\n    \"devices\": [");
	for (size_t i = 0; p->devices && p->devices[i]; i++) {
		if (i)
			moat_buf_puts(b, ", ");
		js(b, p->devices[i]);
	}
	moat_buf_puts(b, "],\n    \"masks\": [");
	for (size_t i = 0; i < p->nmasks; i++) {
		moat_buf_puts(b, i ? ",\n      {\"pattern\": " : "\n      {\"pattern\": ");
		js(b, p->masks[i].pattern);
		moat_buf_printf(
		    b, ", \"kind\": \"%s\", \"origin\": ", mask_kind_name(p->masks[i].kind));
		js(b, p->masks[i].origin);
		/* (with exempt_paths: the masks they do not apply to) */
		if (p->exempt.n && !p->masks[i].exemptible)
			moat_buf_puts(b, ", \"exempt_paths_apply\": false");
		moat_buf_putc(b, '}');
	}
	moat_buf_puts(b, "],\n    \"never_masked\": ");
	js_strv(b, &p->mask_exempt);
	moat_buf_puts(b, ",\n    \"exempt_paths\": ");
	js_strv(b, &p->exempt);
	moat_buf_puts(b, ",\n    \"protected\": ");
	js_strv(b, &p->protect);
	moat_buf_puts(b, ",\n    \"host_sockets_allowed\": ");
	js_strv(b, &p->sockets);
	moat_buf_printf(b, ",\n    \"home_copy_on_write\": %s", p->home_cow ? "true" : "false");
	moat_buf_printf(b,
			",\n    \"private_tmp\": %s, \"private_pts\": %s, \"hide_run\": %s, "
			"\"fresh_proc\": %s, \"scratch_tmpdir\": %s\n  }",
			p->private_tmp ? "true" : "false", p->private_pts ? "true" : "false",
			p->hide_run ? "true" : "false", p->fresh_proc ? "true" : "false",
			p->scratch_tmp ? "true" : "false");
	moat_buf_printf(
	    b,
	    ",\n  \"namespaces\": {\"user\": %s, \"mount\": %s, \"pid\": %s, \"net\": %s, "
	    "\"ipc\": %s}",
	    p->userns ? "true" : "false", p->mntns ? "true" : "false", p->pidns ? "true" : "false",
	    p->netns ? "true" : "false", p->ipcns ? "true" : "false");
	moat_buf_printf(b, ",\n  \"network\": {\"mode\": \"%s\", \"ports\": [",
			moat_net_mode_name(p->net));
	for (size_t i = 0; i < p->nports; i++)
		moat_buf_printf(b, "%s%u", i ? ", " : "", p->ports[i]);
	moat_buf_puts(b, "]}");
	moat_buf_printf(
	    b,
	    ",\n  \"landlock\": {\"enabled\": %s, \"abi\": %d, \"handled_fs\": \"0x%llx\", "
	    "\"handled_net\": \"0x%llx\", \"scoped\": \"0x%llx\", \"restrict_flags\": "
	    "\"0x%x\"}",
	    p->landlock ? "true" : "false", p->ll.abi, (unsigned long long)p->ll.fs,
	    (unsigned long long)p->ll_net_handled, (unsigned long long)p->ll_scoped,
	    p->ll_restrict_flags);
	moat_buf_printf(
	    b,
	    ",\n  \"seccomp\": {\"enabled\": %s, \"deny_ip_sockets\": %s, "
	    "\"deny_unix_sockets\": %s, \"rules\": %zu}",
	    p->seccomp ? "true" : "false", p->seccomp_no_inet ? "true" : "false",
	    p->seccomp_no_unix ? "true" : "false",
	    MOAT_ARRAY_SIZE(moat_seccomp_rules) - 1 +
		(p->seccomp_no_inet ? MOAT_ARRAY_SIZE(moat_seccomp_rules_no_inet) - 1 : 0) +
		(p->seccomp_no_unix ? MOAT_ARRAY_SIZE(moat_seccomp_rules_no_unix) - 1 : 0));
	moat_buf_printf(b,
			",\n  \"process\": {\"no_new_privs\": true, \"drop_capabilities\": %s, "
			"\"die_with_parent\": true, \"timeout_s\": %ld}",
			p->drop_caps ? "true" : "false", p->timeout_s);
	moat_buf_printf(
	    b,
	    ",\n  \"limits\": {\"memory_bytes\": %llu, \"memory_via\": \"%s\", "
	    "\"pids\": %ld, \"pids_via\": \"%s\", \"cpu_s\": %ld, \"fsize_bytes\": %llu, "
	    "\"nofile\": %ld, \"core\": 0}",
	    (unsigned long long)p->mem_bytes, moat_limit_mech_name(p->mem_mech), p->pids,
	    moat_limit_mech_name(p->pids_mech), p->cpu_s, (unsigned long long)p->fsize_bytes,
	    p->nofile);
	moat_buf_printf(
	    b, ",\n  \"environment\": {\"mode\": \"%s\", \"pass\": ", moat_env_mode_name(p->env));
	js_strv(b, &p->env_pass);
	moat_buf_puts(b, "}");
	moat_buf_printf(b, ",\n  \"fallback\": \"%s\",\n  \"features\": {",
			moat_fallback_name(p->fallback));
	{
		bool first = true;

		for (int f = 0; f < MOAT_FEAT__COUNT; f++) {
			const struct moat_plan_feature *x = &p->feat[f];

			if (!x->requested)
				continue;
			moat_buf_puts(b, first ? "\n    " : ",\n    ");
			first = false;
			js(b, moat_feature_name((enum moat_feature)f));
			moat_buf_printf(b, ": {\"requested\": true, \"enforced\": %s, \"via\": ",
					x->enforced ? "true" : "false");
			js(b, x->mechanism);
			if (!x->enforced) {
				moat_buf_puts(b, ", \"hint\": ");
				js(b, x->hint);
			}
			moat_buf_putc(b, '}');
		}
	}
	moat_buf_puts(b, "\n  }\n}\n");
	return b->oom ? -ENOMEM : 0;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool strv_eq(const struct moat_strv *a, const struct moat_strv *b)
{
	if (a->n != b->n || a->replace != b->replace)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (!str_eq(a->v[i], b->v[i]))
			return false;
	return true;
}

/* Every field of the plan is named below but cwd, argv and timeout_s (and
 * mask_seen, a hash of the masks; masks[].hash; exempt_set, compiled
 * from exempt): a field added to the
 * plan must be compared here too, which the size check (x86-64) is a
 * reminder of. */
#if defined(__x86_64__)
_Static_assert(sizeof(struct moat_plan) == 5840,
	       "struct moat_plan changed: compare the new field in moat_plan_same_sandbox");
#endif

bool moat_plan_same_sandbox(const struct moat_plan *a, const struct moat_plan *b)
{
	size_t nd = 0;

	if (strcmp(a->profile, b->profile) || !str_eq(a->workspace, b->workspace) ||
	    a->tmp_workspace != b->tmp_workspace || !str_eq(a->home, b->home) ||
	    a->ws_access != b->ws_access || a->nfs != b->nfs || a->nmasks != b->nmasks ||
	    !strv_eq(&a->mask_exempt, &b->mask_exempt) || !strv_eq(&a->exempt, &b->exempt) ||
	    a->scan_max_entries != b->scan_max_entries || !strv_eq(&a->protect, &b->protect) ||
	    !strv_eq(&a->config_dirs, &b->config_dirs) || !strv_eq(&a->sockets, &b->sockets) ||
	    a->home_cow != b->home_cow || a->private_tmp != b->private_tmp ||
	    a->hide_run != b->hide_run || a->private_pts != b->private_pts ||
	    a->fresh_proc != b->fresh_proc || a->scratch_tmp != b->scratch_tmp ||
	    a->userns != b->userns || a->mntns != b->mntns || a->pidns != b->pidns ||
	    a->netns != b->netns || a->ipcns != b->ipcns || a->net != b->net ||
	    a->nports != b->nports || memcmp(a->ports, b->ports, sizeof(a->ports)) ||
	    a->landlock != b->landlock || a->ll.abi != b->ll.abi || a->ll.fs != b->ll.fs ||
	    a->ll.net != b->ll.net || a->ll.scoped != b->ll.scoped ||
	    a->ll.restrict_flags != b->ll.restrict_flags ||
	    a->ll_net_handled != b->ll_net_handled || a->ll_scoped != b->ll_scoped ||
	    a->ll_restrict_flags != b->ll_restrict_flags || a->seccomp != b->seccomp ||
	    a->seccomp_no_inet != b->seccomp_no_inet || a->seccomp_no_unix != b->seccomp_no_unix ||
	    a->seccomp_no_ns != b->seccomp_no_ns || a->seccomp_ports != b->seccomp_ports ||
	    a->drop_caps != b->drop_caps || a->mem_mech != b->mem_mech ||
	    a->pids_mech != b->pids_mech || a->mem_bytes != b->mem_bytes || a->pids != b->pids ||
	    a->cpu_s != b->cpu_s || a->fsize_bytes != b->fsize_bytes || a->nofile != b->nofile ||
	    a->env != b->env || !strv_eq(&a->env_pass, &b->env_pass) || a->fallback != b->fallback)
		return false;
	for (size_t i = 0; i < a->nfs; i++)
		if (!str_eq(a->fs[i].path, b->fs[i].path) || a->fs[i].access != b->fs[i].access ||
		    a->fs[i].optional != b->fs[i].optional || strcmp(a->fs[i].origin, b->fs[i].origin))
			return false;
	for (size_t i = 0; i < a->nmasks; i++)
		if (!str_eq(a->masks[i].pattern, b->masks[i].pattern) ||
		    a->masks[i].kind != b->masks[i].kind ||
		    a->masks[i].exemptible != b->masks[i].exemptible ||
		    strcmp(a->masks[i].origin, b->masks[i].origin))
			return false;
	if (a->devices != b->devices) {
		if (!a->devices || !b->devices)
			return false;
		for (; a->devices[nd] || b->devices[nd]; nd++)
			if (!str_eq(a->devices[nd], b->devices[nd]))
				return false;
	}
	for (int f = 0; f < MOAT_FEAT__COUNT; f++)
		if (a->feat[f].requested != b->feat[f].requested ||
		    a->feat[f].enforced != b->feat[f].enforced ||
		    strcmp(a->feat[f].mechanism, b->feat[f].mechanism) ||
		    strcmp(a->feat[f].hint, b->feat[f].hint))
			return false;
	return true;
}
