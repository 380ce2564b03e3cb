/* Landlock: raw syscalls and the ruleset of a plan.
 *
 * The ruleset is built in the parent, where a missing path is an ordinary
 * error with a message; the child only calls landlock_restrict_self on the
 * inherited descriptor. Rights come from the plan through the pure
 * moat_landlock_access, already limited to what the kernel's ABI handles.
 *
 * The structures and syscall numbers are carried here because distribution
 * headers lag the kernel (Debian 12 stops at ABI 2). This file must never
 * grant a right the plan did not ask for: when in doubt it fails. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/str.h"
#include "core/path.h"
#include "sandbox/sandbox.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

/* Rights that make sense on a file (not a directory) beneath-rule. */
#define LL_FILE_RIGHTS                                                                             \
	(MOAT_LL_FS_EXECUTE | MOAT_LL_FS_WRITE_FILE | MOAT_LL_FS_READ_FILE | MOAT_LL_FS_TRUNCATE | \
	 MOAT_LL_FS_IOCTL_DEV)

int moat_landlock_abi(int *ret_errno)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	if (abi < 0) {
		if (ret_errno)
			*ret_errno = errno;
		return 0;
	}
	if (ret_errno)
		*ret_errno = 0;
	return (int)abi;
}

static int add_fd_rule(int ruleset, int fd, uint64_t access, bool is_dir)
{
	struct ll_path_beneath_attr a;

	if (!is_dir)
		access &= LL_FILE_RIGHTS;
	if (!access)
		return 0;
	memset(&a, 0, sizeof(a));
	a.allowed_access = access;
	a.parent_fd = fd;
	if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &a, 0) < 0)
		return -errno;
	return 0;
}

static int add_path_rule(int ruleset, int dirfd, const char *path, uint64_t access, bool optional,
			 struct moat_error *err)
{
	struct stat st;
	int fd, r;

	fd = openat(dirfd, path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (optional && (r == -ENOENT || r == -ENOTDIR || r == -EACCES))
			return 0;
		moat_error_set(err, "cannot open '%s' for a filesystem rule: %s", path,
			       strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		moat_error_set(err, "cannot stat '%s': %s", path, strerror(-r));
		return r;
	}
	r = add_fd_rule(ruleset, fd, access, S_ISDIR(st.st_mode));
	close(fd);
	if (r < 0)
		moat_error_set(err, "landlock refused a rule for '%s': %s", path, strerror(-r));
	return r;
}

/* Without a mount namespace the masked paths are honoured by leaving them
 * out of every rule: a rule on a directory holding one is replaced by a
 * rule on each of its other entries, and a directory holding one gets only
 * READ_DIR itself (its names stay listable, the contents below it are
 * governed by the entries' own rules). Landlock's rules add up along the
 * path and attach to inodes, so nothing granted this way reaches a carved
 * path: a command cannot read it, nor move it (removing or creating an
 * entry in a carved directory needs rights it does not have there), nor
 * link it under a granted name. A rule is carved by its real path (the
 * inode it lands on), whatever links the path it was given passes through.
 *
 * The cost: a carved directory gets no create, remove or write right of
 * its own, so in a writable rule (the workspace) new entries cannot be
 * made directly in a directory that holds a masked path (its granted
 * subdirectories work as ever); those directories are reported (carved).
 * The rule count (LL_CARVE_MAX_RULES) and the depth of a walk are
 * bounded. SECURITY: past either bound the carve fails closed for the
 * smallest subtree that does not fit: a directory more than
 * LL_CARVE_MAX_DEPTH levels below the rule that still holds a masked
 * path, or one with more entries than rules are left, gets no rule at all
 * (nothing in it is reachable) and is reported (withheld); a rule is never
 * granted whole over a masked path, so no file a command writes can switch
 * the carve off. Each rule costs about 100 bytes of kernel memory and 2 to
 * 15 us to add (docs/sandbox.md). */
#define LL_CARVE_MAX_RULES MOAT_LL_CARVE_MAX_RULES
#define LL_CARVE_MAX_DEPTH MOAT_LL_CARVE_MAX_DEPTH

struct carve {
	const char **v; /* the masked paths, sorted (strcmp): what lies below a
			 * directory is one run of the list */
	size_t n;
	const char **ro; /* granted read-only (the user's configuration
			  * directories), sorted: carved around like the
			  * masked ones, then given the read rights only */
	size_t nro;
	size_t budget; /* rules left */
	const struct moat_plan *p;
	struct moat_ll_report *rep; /* what to tell (may be NULL) */
	/* the descriptors of rules added, closed together (done_close):
	 * one close_range for a run of them instead of a close each */
	int done[32];
	size_t ndone;
};

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Close the descriptors in c->done: each run of consecutive numbers,
 * all of them ours, with one close_range. */
static void done_close(struct carve *c)
{
	size_t i = 0;

	qsort(c->done, c->ndone, sizeof(c->done[0]), cmp_int);
	while (i < c->ndone) {
		size_t j = i;

		while (j + 1 < c->ndone && c->done[j + 1] == c->done[j] + 1)
			j++;
		if (j == i || close_range((unsigned)c->done[i], (unsigned)c->done[j], 0) < 0)
			for (size_t k = i; k <= j; k++)
				close(c->done[k]);
		i = j + 1;
	}
	c->ndone = 0;
}

static void done_add(struct carve *c, int fd)
{
	if (c->ndone == MOAT_ARRAY_SIZE(c->done))
		done_close(c);
	c->done[c->ndone++] = fd;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first index of the sorted v[0..n) whose path is >= s. */
static size_t list_lower(const char *const *v, size_t n, const char *s)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(v[mid], s) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool list_is(const char *const *v, size_t n, const char *path)
{
	size_t i = list_lower(v, n, path);

	return i < n && !strcmp(v[i], path);
}

static bool carve_is(const struct carve *c, const char *path)
{
	return list_is(c->v, c->n, path);
}

/* Is a path of the sorted v[0..n) strictly below path? */
static bool list_below(const char *const *v, size_t n, const char *path)
{
	char key[PATH_MAX + 1];
	size_t l = strlen(path), i;

	if (l && path[l - 1] == '/')
		l--; /* "/" */
	if (l + 2 > sizeof(key))
		return true; /* cannot tell: expanded (a deeper walk is bounded) */
	memcpy(key, path, l);
	key[l] = '/';
	key[l + 1] = '\0';
	i = list_lower(v, n, key);
	return i < n && !strncmp(v[i], key, l + 1);
}

/* Is a masked or a read-only path strictly below path? */
static bool carve_below(const struct carve *c, const char *path)
{
	return (c->n && list_below(c->v, c->n, path)) ||
	       (c->nro && list_below(c->ro, c->nro, path));
}

/* Anything to carve around? */
static bool carve_any(const struct carve *c)
{
	return c->n || c->nro;
}

/* The rights of a read-only grant. */
#define LL_READ_RIGHTS (MOAT_LL_FS_READ_FILE | MOAT_LL_FS_READ_DIR | MOAT_LL_FS_EXECUTE)

/* Another of the plan's rules is exactly this path and grants at least
 * access: its own tree (carved the same way, by its real path) covers it. */
static bool other_rule_covers(const struct carve *c, const char *path, uint64_t access)
{
	for (size_t i = 0; i < c->p->nfs; i++) {
		const struct moat_fs_rule *fr = &c->p->fs[i];

		if (!strcmp(fr->path, path) &&
		    (moat_landlock_access(fr->access, &c->p->ll) & access) == access)
			return true;
	}
	return false;
}

/* Append path to the ", "-joined list in buf (cut with "..." when full). */
static void list_add(char *buf, size_t sz, const char *path)
{
	size_t l = strlen(buf);

	if (l + strlen(path) + 8 < sz)
		snprintf(buf + l, sz - l, "%s%s", l ? ", " : "", path);
	else if (l + 5 < sz && (l < 3 || strcmp(buf + l - 3, "...")))
		snprintf(buf + l, sz - l, ", ...");
}

static void note_carved(struct carve *c, const char *path)
{
	if (c->rep)
		list_add(c->rep->carved, sizeof(c->rep->carved), path);
}

static void note_withheld(struct carve *c, const char *path)
{
	if (c->rep)
		list_add(c->rep->withheld, sizeof(c->rep->withheld), path);
}

/* Grant access on every entry of the directory dirpath (open as dfd, a
 * real path; it holds a masked path) but the masked ones; directories that
 * hold one are walked the same way, and get READ_DIR themselves (the rule
 * the caller counted for them). The entries are counted first and their
 * rules taken from the budget at once: a directory with more entries than
 * rules are left gets no rule (withheld), its siblings are carved as ever.
 * root: dirpath is "/", whose /dev is never granted. SECURITY: a rule on
 * "/" itself would make every disk and /dev/mem-like node readable to a
 * uid that owns them (root), and would cover the carved secrets. */
static int add_tree(int ruleset, int dfd, const char *dirpath, uint64_t access, struct carve *c,
		    bool root, int depth, struct moat_error *err)
{
	DIR *d;
	struct dirent *e;
	size_t left = 0;
	int r;

	d = fdopendir(dfd);
	if (!d) {
		r = -errno;
		close(dfd);
		moat_error_set(err, "cannot list '%s': %s", dirpath, strerror(-r));
		return r;
	}
	while ((e = readdir(d)))
		left += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	rewinddir(d);
	if (left > c->budget) {
		/* (this directory's own rule was taken by the caller) */
		note_withheld(c, dirpath);
		closedir(d);
		return 0;
	}
	c->budget -= left;
	/* (a plain walk of "/", nothing masked, needs no rule on it) */
	r = carve_any(c) ? add_fd_rule(ruleset, dirfd(d), access & MOAT_LL_FS_READ_DIR, true) : 0;
	if (r < 0) {
		closedir(d);
		moat_error_set(err, "landlock refused a rule for '%s': %s", dirpath, strerror(-r));
		return r;
	}
	if (carve_any(c) && (access & MOAT_LL_FS_MAKE_REG))
		note_carved(c, dirpath);
	while (r == 0 && (e = readdir(d))) {
		char child[PATH_MAX];
		bool is_dir, below;
		uint64_t a = access;
		struct stat st;
		int fd;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		/* SECURITY: an entry made since the count has no rule taken for
		 * it: not granted */
		if (left == 0)
			break;
		left--;
		if (root && !strcmp(e->d_name, "dev"))
			continue;
		if (e->d_type == DT_LNK)
			continue; /* /bin -> usr/bin: the target has its own rule */
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", root ? "" : dirpath,
				     e->d_name) >= sizeof(child))
			continue; /* (not granted: unreachable by a path anyway) */
		if (carve_is(c, child))
			continue; /* masked: not granted */
		if (c->nro && list_is(c->ro, c->nro, child))
			a &= LL_READ_RIGHTS; /* and below it, carved the same way */
		fd = openat(dirfd(d), e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == EMFILE && c->ndone) {
			done_close(c); /* (near the limit of open files) */
			fd = openat(dirfd(d), e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		if (fd < 0)
			continue; /* vanished or unreadable: nothing to grant */
		below = carve_below(c, child);
		/* a directory by its entry, nothing masked below it: the rule
		 * with a directory's rights, which Landlock refuses (EINVAL) for
		 * an inode that is not one, so no stat is needed to know; a
		 * refusal is looked at as below */
		if (e->d_type == DT_DIR && !below && (a & ~LL_FILE_RIGHTS) &&
		    add_fd_rule(ruleset, fd, a, true) == 0) {
			done_add(c, fd);
			continue;
		}
		/* SECURITY: the type the rule is made for is the opened inode's,
		 * never the directory entry's: a name replaced since the listing
		 * could be a directory now, which a file rule's rights would
		 * reach below */
		if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
			close(fd);
			continue;
		}
		is_dir = S_ISDIR(st.st_mode);
		if (is_dir && below) {
			int sub;

			if (a == access && other_rule_covers(c, child, access)) {
				close(fd);
				continue; /* (the workspace below "/": its own tree) */
			}
			if (depth >= LL_CARVE_MAX_DEPTH) {
				/* SECURITY: too deep to carve: no rule */
				close(fd);
				note_withheld(c, child);
				continue;
			}
			sub = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			close(fd);
			if (sub < 0) {
				/* SECURITY: a directory holding a masked path we cannot
				 * walk gets no rule (nothing below it is granted) */
				continue;
			}
			r = add_tree(ruleset, sub, child, a, c, false, depth + 1, err);
			continue;
		}
		r = add_fd_rule(ruleset, fd, a, is_dir);
		done_add(c, fd);
		if (r < 0)
			moat_error_set(err, "landlock refused a rule for '%s': %s", child,
				       strerror(-r));
	}
	closedir(d);
	return r;
}

/* The real path of the open fd, in buf: what a carve must compare with
 * the masked paths (real paths), the rule landing on that inode whatever
 * links the path it was opened by passes through. */
static int fd_real_path(int fd, const char *path, char *buf, size_t sz)
{
	char proc[64];
	struct stat a, b;
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, sz - 1);
	if (n > 0 && (size_t)n < sz - 1 && buf[0] == '/') {
		buf[n] = '\0';
		return 0;
	}
	/* no /proc: the path resolved, if it still names the same inode */
	if (strlen(path) >= PATH_MAX || sz < PATH_MAX || !realpath(path, buf) ||
	    fstat(fd, &a) < 0 || stat(buf, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return -ENOENT;
	return 0;
}

/* One of the plan's rules: on its path whole, or carved (add_tree) when a
 * masked path lies below its real path. */
static int add_rule_carved(int ruleset, const struct moat_fs_rule *fr, uint64_t access,
			   struct carve *c, struct moat_error *err)
{
	bool root = !strcmp(fr->path, "/");
	char real[PATH_MAX];
	struct stat st;
	int fd, dfd, r;

	if (!root && !carve_any(c))
		return add_path_rule(ruleset, AT_FDCWD, fr->path, access, fr->optional, err);
	fd = open(fr->path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (fr->optional && (r == -ENOENT || r == -ENOTDIR || r == -EACCES))
			return 0;
		moat_error_set(err, "cannot open '%s' for a filesystem rule: %s", fr->path,
			       strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || fd_real_path(fd, fr->path, real, sizeof(real)) < 0) {
		close(fd);
		moat_error_set(err, "cannot resolve '%s' for a filesystem rule", fr->path);
		return -ENOENT;
	}
	root = !strcmp(real, "/");
	/* SECURITY: a rule that is a masked path (by a link: the planner
	 * refuses it as written); one below a masked directory is carved
	 * around the masked paths below it, as a mount namespace reveals it */
	if (carve_is(c, real)) {
		close(fd);
		moat_error_set(err,
			       "%s path '%s' is masked (it leads to '%s'): it would be hidden; "
			       "remove the denied path (denied_paths, --mask) or name another",
			       fr->origin, fr->path, real);
		return -EACCES;
	}
	if (!S_ISDIR(st.st_mode) || (!root && !carve_below(c, real))) {
		r = add_fd_rule(ruleset, fd, access, S_ISDIR(st.st_mode));
		close(fd);
		if (r < 0)
			moat_error_set(err, "landlock refused a rule for '%s': %s", fr->path,
				       strerror(-r));
		return r;
	}
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(fd);
	if (dfd < 0) {
		r = -errno;
		moat_error_set(err, "cannot open '%s' for a filesystem rule: %s", fr->path,
			       strerror(-r));
		return r;
	}
	if (c->budget == 0) {
		close(dfd);
		note_withheld(c, real);
		return 0;
	}
	c->budget--; /* (its own rule) */
	return add_tree(ruleset, dfd, real, access, c, root, 0, err);
}

/* The masked paths Landlock must leave out: none with a mount namespace
 * (its mounts cover them); without, every masked path the mounts list,
 * and the user's configuration directories to grant read-only. A file
 * unreadable to us, or a directory we cannot search, owned by someone else
 * is as closed to the command (it cannot chmod it: no capability survives
 * the exec): left alone, which spares the rules of carving around
 * /etc/shadow. SECURITY: one of our own, closed now, is carved all the
 * same: the command could chmod it (no mount namespace keeps the
 * metadata). */
static int plan_carve(const struct moat_plan *p, const struct moat_mounts *m, struct carve *c,
		      struct moat_error *err)
{
	c->n = c->nro = 0;
	c->budget = LL_CARVE_MAX_RULES;
	c->p = p;
	if (p->mntns)
		return 0;
	if (p->config_dirs.n) {
		c->ro = malloc(p->config_dirs.n * sizeof(*c->ro));
		if (!c->ro) {
			moat_error_set(err, "out of memory");
			return -ENOMEM;
		}
		for (size_t i = 0; i < p->config_dirs.n; i++)
			c->ro[c->nro++] = p->config_dirs.v[i];
		qsort(c->ro, c->nro, sizeof(*c->ro), cmp_str);
	}
	if (!m || !m->n)
		return 0;
	c->v = malloc(m->n * sizeof(*c->v));
	if (!c->v) {
		moat_error_set(err, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct moat_mount_op *op = &m->ops[i];
		struct stat st;

		if (op->kind != MOAT_MNT_MASK_DIR && op->kind != MOAT_MNT_MASK_FILE)
			continue;
		/* (a directory's files are reachable by name with search
		 * permission alone: only that counts for one) */
		if (access(op->target, op->is_dir ? X_OK : R_OK) < 0 &&
		    lstat(op->target, &st) == 0 && st.st_uid != geteuid())
			continue;
		c->v[c->n++] = op->target;
	}
	qsort(c->v, c->n, sizeof(*c->v), cmp_str);
	return 0;
}

/* Devices: read, write (and O_TRUNC, as "> /dev/null" does), terminal ioctls. */
static uint64_t dev_access(const struct moat_plan *p)
{
	return moat_landlock_access(MOAT_FS_READ | MOAT_FS_DEV, &p->ll) |
	       ((MOAT_LL_FS_WRITE_FILE | MOAT_LL_FS_TRUNCATE) & p->ll.fs);
}

int moat_landlock_create(const struct moat_plan *p, int *ret_fd, struct moat_error *err)
{
	struct ll_ruleset_attr attr;
	int fd, r;

	*ret_fd = -1;
	if (!p->landlock)
		return 0;
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = p->ll.fs;
	attr.handled_access_net = p->ll_net_handled;
	attr.scoped = p->ll_scoped;
	/* older kernels accept the larger struct as long as the unknown tail is zero */
	fd = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd < 0) {
		r = -errno;
		moat_error_set(err, "cannot create a landlock ruleset: %s", strerror(-r));
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int moat_landlock_build(const struct moat_plan *p, const struct moat_mounts *m, const char *scratch,
			int *ret_fd, struct moat_ll_report *rep, struct moat_error *err)
{
	struct carve carve = {.v = NULL, .ro = NULL, .rep = rep};
	uint64_t dev_rights;
	int fd = *ret_fd, r = 0;

	if (rep)
		rep->carved[0] = rep->withheld[0] = '\0';
	if (!p->landlock)
		return 0;
	r = plan_carve(p, m, &carve, err);
	if (r == 0 && fd < 0)
		r = moat_landlock_create(p, &fd, err);
	if (r < 0) {
		free(carve.v);
		free(carve.ro);
		return r;
	}

	for (size_t i = 0; i < p->nfs && r == 0; i++) {
		const struct moat_fs_rule *fr = &p->fs[i];
		uint64_t a = moat_landlock_access(fr->access, &p->ll);

		if (p->private_tmp && (!strcmp(fr->path, "/tmp") || !strcmp(fr->path, "/dev/shm")))
			continue; /* a fresh tmpfs: the child adds the rule (late rules) */
		r = add_rule_carved(fd, fr, a, &carve, err);
	}
	done_close(&carve);
	free(carve.v);
	free(carve.ro);
	/* /dev: listing, and the harmless devices (read, write, terminal ioctls) */
	if (r == 0)
		r = add_path_rule(fd, AT_FDCWD, "/dev", MOAT_LL_FS_READ_DIR & p->ll.fs, true, err);
	dev_rights = dev_access(p);
	for (size_t i = 0; p->devices && p->devices[i] && r == 0; i++)
		r = add_path_rule(fd, AT_FDCWD, p->devices[i], dev_rights, true, err);
	/* without a pseudo-terminal instance of its own, only the terminal the
	 * command was given (never the user's other terminals) */
	for (int tfd = 0; tfd < 3 && r == 0 && !p->private_pts; tfd++) {
		char tty[64];

		if (isatty(tfd) && ttyname_r(tfd, tty, sizeof(tty)) == 0 &&
		    !strncmp(tty, "/dev/", 5))
			r = add_path_rule(fd, AT_FDCWD, tty, dev_rights, true, err);
	}
	if (r == 0 && scratch && *scratch)
		r = add_path_rule(
		    fd, AT_FDCWD, scratch,
		    moat_landlock_access(MOAT_FS_READ | MOAT_FS_WRITE | MOAT_FS_EXEC, &p->ll),
		    false, err);
	/* network: connect only to the listed TCP ports; binding stays denied */
	if (r == 0 && p->net == MOAT_NET_PORTS && (p->ll_net_handled & MOAT_LL_NET_CONNECT_TCP)) {
		for (size_t i = 0; i < p->nports; i++) {
			struct ll_net_port_attr na = {MOAT_LL_NET_CONNECT_TCP, p->ports[i]};

			if (syscall(__NR_landlock_add_rule, fd, LL_RULE_NET_PORT, &na, 0) < 0) {
				r = -errno;
				moat_error_set(err, "landlock refused a rule for port %u: %s",
					       p->ports[i], strerror(-r));
				break;
			}
		}
	}
	if (r < 0) {
		close(fd);
		*ret_fd = -1;
		return r;
	}
	*ret_fd = fd;
	return 0;
}

static uint64_t plan_access_of(const struct moat_plan *p, const char *path)
{
	uint64_t a = 0;

	for (size_t i = 0; i < p->nfs; i++)
		if (!strcmp(p->fs[i].path, path))
			a |= moat_landlock_access(p->fs[i].access, &p->ll);
	return a;
}

int moat_landlock_late_rules(const struct moat_plan *p, const struct moat_mounts *m,
			     struct moat_ll_late *late, int max)
{
	uint64_t root = plan_access_of(p, "/");
	int n = 0;

	if (!p->landlock || !p->mntns)
		return 0;
	/* SECURITY: only what the plan grants: /tmp and /dev/shm their own
	 * rules, /run and /proc what "/" grants (read) */
	if (p->private_tmp && n < max)
		late[n++] = (struct moat_ll_late){"/tmp", plan_access_of(p, "/tmp"), true};
	if (p->private_tmp && n < max && plan_access_of(p, "/dev/shm"))
		late[n++] = (struct moat_ll_late){"/dev/shm", plan_access_of(p, "/dev/shm"), true};
	if (p->hide_run && n < max)
		late[n++] = (struct moat_ll_late){"/run", root & ~MOAT_LL_FS_EXECUTE, true};
	if (p->fresh_proc && n < max)
		late[n++] = (struct moat_ll_late){"/proc", root, true};
	if (p->private_pts && n + 1 < max) {
		uint64_t tty = dev_access(p);

		late[n++] = (struct moat_ll_late){"/dev/pts", tty, true};
		late[n++] = (struct moat_ll_late){"/dev/ptmx", tty, false};
	}
	/* the home directory's copy-on-write view: writes land in a private
	 * tmpfs (spawn.c skips this rule if the overlay did not mount) */
	for (size_t i = 0; m && i < m->n && n < max; i++)
		if (m->ops[i].kind == MOAT_MNT_OVERLAY)
			late[n++] = (struct moat_ll_late){
			    m->ops[i].target,
			    moat_landlock_access(MOAT_FS_READ | MOAT_FS_WRITE | MOAT_FS_EXEC,
						 &p->ll),
			    true};
	return n;
}

int moat_landlock_add_late(int ruleset_fd, const struct moat_ll_late *late)
{
	int fd = open(late->path, O_PATH | O_CLOEXEC | (late->is_dir ? O_DIRECTORY : 0)), r;

	if (fd < 0)
		return -errno;
	r = add_fd_rule(ruleset_fd, fd, late->access, late->is_dir);
	close(fd);
	return r;
}

int moat_landlock_enforce(int ruleset_fd, uint32_t flags)
{
	if (syscall(__NR_landlock_restrict_self, ruleset_fd, flags) < 0)
		return -errno;
	return 0;
}
