/* Namespaces and mounts.
 *
 * What a mount namespace is for here, and nothing more (Landlock already
 * confines reads and writes, so the root is not rebuilt): a private /tmp and
 * /dev/shm, /run hidden (host unix sockets), secrets masked by empty
 * read-only mounts, protected paths made read-only inside a writable
 * workspace, and a /proc of the sandbox's own PID namespace.
 *
 * The parent turns the plan into an ordered list of mount operations
 * (moat_ns_prepare: stat, scan, open O_PATH descriptors for paths a tmpfs
 * will hide). The child applies the list (moat_ns_child_*), inside the new
 * user and mount namespaces, before anything else can run: those functions
 * run between clone and exec in a child that shares the parent's memory, so
 * they must not allocate, print, or take locks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/xattr.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <linux/keyctl.h>
#include <time.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/str.h"
#include "core/cmd.h"
#include "core/glob.h"
#include "core/config.h"
#include "core/path.h"
#include "sandbox/maskglob.h"
#include "sandbox/rawsys.h"
#include "sandbox/sandbox.h"
#include "sandbox/scan.h"
#include "sandbox/scancheck.h"
/* last: the lookups below are recorded for an armed sandbox's watch */
#include "sandbox/fsrec_wrap.h"


/* the new mount API, by number (unified across architectures since 5.1) */
#define X_NR_open_tree 428
#define X_NR_move_mount 429
#define X_NR_fsopen 430
#define X_NR_fsconfig 431
#define X_NR_fsmount 432
#define X_NR_mount_setattr 442
#define X_OPEN_TREE_CLONE 1
#define X_AT_RECURSIVE 0x8000
#define X_MOVE_MOUNT_F_EMPTY_PATH 0x4
#define X_MOVE_MOUNT_T_EMPTY_PATH 0x40
#define X_FSOPEN_CLOEXEC 1
#define X_FSCONFIG_SET_STRING 1
#define X_FSCONFIG_CMD_CREATE 6
#define X_FSMOUNT_CLOEXEC 1
#define X_MOUNT_ATTR_RDONLY 0x1
#define X_MOUNT_ATTR_NOSUID 0x2
#define X_MOUNT_ATTR_NODEV 0x4
#define X_MOUNT_ATTR_NOEXEC 0x8

struct x_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/* ------------------------------------------------------------------ */
/* parent side: the list of operations                                 */
/* ------------------------------------------------------------------ */

static int add_op(struct moat_mounts *m, enum moat_mount_kind kind, const char *target, int fd,
		  bool is_dir, bool readonly, const char *data, unsigned long flags)
{
	struct moat_mount_op *nv;

	if (m->n >= MOAT_MASK_MAX_MOUNTS)
		return -E2BIG;
	if ((kind == MOAT_MNT_KEEP || kind == MOAT_MNT_REVEAL) && ++m->nkeep > MOAT_MNT_MAX_KEEP)
		return -E2BIG;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 32;

		nv = realloc(m->ops, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		m->ops = nv;
		m->cap = cap;
	}
	nv = m->ops;
	/* every field, those added later included, starts zero */
	memset(&nv[m->n], 0, sizeof(nv[m->n]));
	nv[m->n].kind = kind;
	nv[m->n].target = moat_strdup(target);
	if (!nv[m->n].target)
		return -ENOMEM;
	nv[m->n].fd = fd;
	nv[m->n].is_dir = is_dir;
	nv[m->n].readonly = readonly;
	moat_strlcpy(nv[m->n].data, data ? data : "", sizeof(nv[m->n].data));
	nv[m->n].flags = flags;
	nv[m->n].placeholder = false;
	nv[m->n].created = false;
	nv[m->n].optional = false;
	nv[m->n].nofollow = false;
	nv[m->n].reveals = false;
	nv[m->n].standin = false;
	nv[m->n].dev = 0;
	nv[m->n].ino = 0;
	m->n++;
	return 0;
}

static bool op_exists(const struct moat_mounts *m, enum moat_mount_kind kind, const char *t)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->ops[i].kind == kind && !strcmp(m->ops[i].target, t))
			return true;
	return false;
}

void moat_mounts_release(struct moat_mounts *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->ops[i].target);
		if (m->ops[i].fd >= 0)
			close(m->ops[i].fd);
	}
	free(m->ops);
	for (size_t i = 0; i < m->nprotected_missing; i++)
		free(m->protected_missing[i]);
	free(m->protected_missing);
	for (size_t i = 0; i < m->nquarantine; i++)
		free(m->quarantine[i]);
	free(m->quarantine);
	for (size_t i = 0; i < m->nlinks; i++) {
		free(m->links[i].name);
		free(m->links[i].target);
	}
	free(m->links);
	for (size_t i = 0; i < m->ngitcfg; i++)
		free(m->gitcfg[i].rel);
	free(m->gitcfg);
	for (size_t i = 0; i < m->nguard; i++) {
		free(m->guard[i].rel);
		free(m->guard[i].data);
	}
	free(m->guard);
	moat_scan_save_free(m->scan_save);
	m->scan_save = NULL;
	moat_scan_check_free(m->check);
	m->check = NULL;
	if (m->ws_locked)
		close(m->ws_lock_fd);
	if (m->has_ws_fd)
		close(m->ws_fd);
	memset(m, 0, sizeof(*m));
}

/* what moat_mounts_leave kept, reachable until the exit */
struct mounts_left {
	struct moat_mounts m;
	struct mounts_left *next;
};
static struct mounts_left *mounts_left;

void moat_mounts_leave(struct moat_mounts *m)
{
	struct mounts_left *l = malloc(sizeof(*l));

	if (!l) {
		moat_mounts_release(m);
		return;
	}
	/* the lock is shared with other runs (the last one out removes the
	 * stand-ins): it goes now, as in a release */
	if (m->ws_locked)
		close(m->ws_lock_fd);
	m->ws_locked = false;
	m->ws_lock_fd = -1;
	l->m = *m;
	l->next = __atomic_load_n(&mounts_left, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&mounts_left, &l->next, l, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	memset(m, 0, sizeof(*m));
}

void moat_mounts_note_ids(struct moat_mounts *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct moat_mount_op *op = &m->ops[i];
		struct stat st;
		int r = op->nofollow ? lstat(op->target, &st) : stat(op->target, &st);

		op->id_dev = r == 0 ? st.st_dev : 0;
		op->id_ino = r == 0 ? st.st_ino : 0;
		op->id_ctime_ns = r == 0 ? (long long)st.st_ctim.tv_sec * 1000000000LL +
					       st.st_ctim.tv_nsec
					 : 0;
	}
}

static bool str_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool strs_same(char *const *a, size_t na, char *const *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!str_same(a[i], b[i]))
			return false;
	return true;
}

/* Two descriptors of the same file (or both none). */
static bool fd_same(int a, int b)
{
	struct stat sa, sb;

	if (a < 0 || b < 0)
		return a < 0 && b < 0;
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

bool moat_mounts_same(const struct moat_mounts *a, const struct moat_mounts *b)
{
	if (a->n != b->n || a->nmasks_found != b->nmasks_found ||
	    a->nguard || b->nguard || a->gitcfg_watch != b->gitcfg_watch ||
	    a->git_was_missing != b->git_was_missing || a->nested_watch != b->nested_watch ||
	    !strs_same(a->protected_missing, a->nprotected_missing, b->protected_missing,
		       b->nprotected_missing) ||
	    !strs_same(a->quarantine, a->nquarantine, b->quarantine, b->nquarantine) ||
	    a->nlinks != b->nlinks)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct moat_mount_op *x = &a->ops[i], *y = &b->ops[i];

		if (x->kind != y->kind || !str_same(x->target, y->target) || x->is_dir != y->is_dir ||
		    x->readonly != y->readonly || x->placeholder != y->placeholder ||
		    x->optional != y->optional || x->nofollow != y->nofollow ||
		    x->standin != y->standin || x->watch != y->watch || x->reveals != y->reveals ||
		    x->dev != y->dev || x->ino != y->ino || x->flags != y->flags ||
		    strcmp(x->data, y->data) || x->id_dev != y->id_dev || x->id_ino != y->id_ino ||
		    x->id_ctime_ns != y->id_ctime_ns ||
		    !fd_same(x->fd, y->fd))
			return false;
	}
	for (size_t i = 0; i < a->nlinks; i++)
		if (!str_same(a->links[i].name, b->links[i].name) ||
		    !str_same(a->links[i].target, b->links[i].target) ||
		    a->links[i].dev != b->links[i].dev || a->links[i].ino != b->links[i].ino ||
		    a->links[i].dangling != b->links[i].dangling)
			return false;
	return true;
}

/* The names in one directory, read once. Most denied and protected paths
 * do not exist; one getdents of the home directory (or the workspace)
 * answers for all of its candidates, where a stat each would cost a path
 * walk each. A name that is listed is still checked with stat. */
#define LISTING_MAX_NAMES 4096

struct listing {
	const char *dir; /* absolute, normalized */
	size_t dirlen;
	char **v; /* sorted */
	size_t n;
	bool ok; /* complete: a name not in v does not exist */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void listing_release(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* dir names the directory for listing_absent; fd >= 0 is read instead of
 * opening dir by name (the workspace as opened before the run). */
static void listing_read_at(struct listing *l, const char *dir, int fd)
{
	DIR *d;
	struct dirent *e;
	size_t cap = 0;

	memset(l, 0, sizeof(*l));
	if (!dir || dir[0] != '/' || !strcmp(dir, "/"))
		return;
	l->dir = dir;
	l->dirlen = strlen(dir);
	if (fd >= 0) {
		int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		d = dfd >= 0 ? fdopendir(dfd) : NULL;
		if (!d) {
			if (dfd >= 0)
				close(dfd);
			return; /* not ok: every name is looked at */
		}
	} else {
		d = opendir(dir);
	}
	if (!d) {
		/* a home that does not exist (a service account's
		 * /nonexistent) has nothing below it: an empty, complete
		 * listing. Unreadable ones (EACCES) are stat'ed name by name. */
		l->ok = errno == ENOENT || errno == ENOTDIR;
		return;
	}
	l->ok = true;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (l->n == cap) {
			char **nv = cap < LISTING_MAX_NAMES
					? realloc(l->v, (cap ? cap * 2 : 64) * sizeof(*nv))
					: NULL;

			if (!nv) {
				l->ok = false; /* too large or no memory: stat instead */
				break;
			}
			l->v = nv;
			cap = cap ? cap * 2 : 64;
		}
		l->v[l->n] = moat_strdup(e->d_name);
		if (!l->v[l->n]) {
			l->ok = false;
			break;
		}
		l->n++;
	}
	closedir(d);
	if (!l->ok) {
		listing_release(l);
		return;
	}
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_str);
}

static void listing_read(struct listing *l, const char *dir)
{
	listing_read_at(l, dir, -1);
}

/* Is path surely absent: below a listed directory, with a first component
 * the listing does not have? false means "stat it". */
static bool listing_absent(const struct listing *ls, size_t nls, const char *path)
{
	for (size_t i = 0; i < nls; i++) {
		const struct listing *l = &ls[i];
		char name[NAME_MAX + 1];
		const char *c;
		size_t n;

		if (!l->ok || strncmp(path, l->dir, l->dirlen) || path[l->dirlen] != '/')
			continue;
		c = path + l->dirlen + 1;
		n = strcspn(c, "/");
		if (n == 0 || n > NAME_MAX)
			continue;
		memcpy(name, c, n);
		name[n] = '\0';
		const char *key = name;

		return !l->n || !bsearch(&key, l->v, l->n, sizeof(*l->v), cmp_str);
	}
	return false;
}

/* The directories a tmpfs will cover in the sandbox, and what the parent
 * read of the home directory and the workspace. */
struct hidden {
	const char *v[5];
	bool cow[5]; /* an overlay (the home directory), not an empty tmpfs */
	size_t n;
	struct listing ls[2];
	size_t nls;
};

static bool within_tmpfs(const struct hidden *h, const char *path)
{
	for (size_t i = 0; i < h->n; i++)
		if (!h->cow[i] && moat_path_within(path, h->v[i]))
			return true;
	return false;
}

static bool within_hidden(const struct hidden *h, const char *path)
{
	for (size_t i = 0; i < h->n; i++)
		if (moat_path_within(path, h->v[i]))
			return true;
	return false;
}

/* Paths a tmpfs will hide but the sandbox must still see. */
struct keep {
	char *path;
	bool readonly;
};

static int keep_add(struct keep *k, size_t *n, size_t cap, const char *path, bool readonly)
{
	for (size_t i = 0; i < *n; i++) {
		if (!strcmp(k[i].path, path)) {
			k[i].readonly = k[i].readonly && readonly;
			return 0;
		}
	}
	if (*n >= cap)
		return -E2BIG;
	k[*n].path = moat_strdup(path);
	if (!k[*n].path)
		return -ENOMEM;
	k[*n].readonly = readonly;
	(*n)++;
	return 0;
}

static int cmp_keep(const void *a, const void *b)
{
	size_t la = strlen(((const struct keep *)a)->path),
	       lb = strlen(((const struct keep *)b)->path);

	return la < lb ? -1 : la > lb;
}


static bool is_exempt(const struct moat_plan *p, const char *path)
{
	for (size_t i = 0; i < p->mask_exempt.n; i++)
		if (!strcmp(p->mask_exempt.v[i], path))
			return true;
	return !strcmp(path, "/etc/passwd") || !strcmp(path, "/etc/group") ||
	       !strcmp(path, "/etc/nsswitch.conf") || !strcmp(path, "/etc/resolv.conf") ||
	       !strcmp(path, "/etc/hosts");
}

/* Mask one existing path (symlinks resolved: the real file is what gets
 * covered). */
static int mask_one(const struct moat_plan *p, struct moat_mounts *m, const struct hidden *hid,
		    const char *path, struct moat_error *err)
{
	char real[PATH_MAX];
	struct stat st;

	/* most denied paths do not exist: the directory listing, else one stat
	 * decides, before realpath */
	if (hid && listing_absent(hid->ls, hid->nls, path))
		return 0;
	if (stat(path, &st) < 0)
		return 0; /* gone, dangling or unreadable: nothing to hide */
	if (!realpath(path, real))
		return 0;
	if (is_exempt(p, real))
		return 0;
	if (!strcmp(real, "/") || moat_path_within(p->workspace, real)) {
		moat_error_set(err, "masking '%s' would hide the workspace '%s'", path,
			       p->workspace);
		return -EINVAL;
	}
	if (hid && within_tmpfs(hid, real)) {
		/* under a tmpfs already, unless a kept path brings it back */
		bool kept = false;

		for (size_t i = 0; i < m->n && !kept; i++)
			kept = m->ops[i].kind == MOAT_MNT_KEEP &&
			       moat_path_within(real, m->ops[i].target);
		if (!kept)
			return 0;
	}
	if (op_exists(m, MOAT_MNT_MASK_DIR, real) || op_exists(m, MOAT_MNT_MASK_FILE, real))
		return 0;
	m->nmasks_found++;
	return add_op(m, S_ISDIR(st.st_mode) ? MOAT_MNT_MASK_DIR : MOAT_MNT_MASK_FILE, real, -1,
		      S_ISDIR(st.st_mode), true, NULL, 0);
}

/* A masked directory above the workspace (--mask ~ with the workspace in
 * the home): everything in it is masked but the way down to the
 * workspace, one level at a time (the names on the way stay listable,
 * their contents do not). Links are not followed: what one leads to is
 * readable by its own path anyway, and a link back up would mask the
 * workspace itself. */
static int mask_around(const struct moat_plan *p, struct moat_mounts *m, const struct hidden *hid,
		       const char *top, struct moat_error *err)
{
	char dir[PATH_MAX];
	int r = 0;

	if (moat_strlcpy(dir, top, sizeof(dir)) >= sizeof(dir))
		return -ENAMETOOLONG;
	for (;;) {
		size_t dl = strlen(dir), cl;
		const char *next = p->workspace + dl + (dl > 1 ? 1 : 0);
		struct dirent *e;
		DIR *d;

		if (dl > 1 && p->workspace[dl] != '/')
			return -EINVAL; /* (not above the workspace: the caller checked) */
		cl = strcspn(next, "/");
		d = opendir(dir);
		if (!d)
			return 0; /* gone or unreadable: nothing to hide */
		while (r == 0 && (e = readdir(d))) {
			char child[PATH_MAX];
			struct stat st;

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			    (strlen(e->d_name) == cl && !strncmp(e->d_name, next, cl)))
				continue;
			if ((size_t)snprintf(child, sizeof(child), "%s/%s", dl > 1 ? dir : "",
					     e->d_name) >= sizeof(child))
				continue;
			if (e->d_type == DT_LNK ||
			    (e->d_type == DT_UNKNOWN &&
			     (lstat(child, &st) < 0 || S_ISLNK(st.st_mode))))
				continue;
			r = mask_one(p, m, hid, child, err);
		}
		closedir(d);
		if (r == -E2BIG && !err->msg[0])
			moat_error_set(err,
				       "masking '%s' around the workspace needs a mount for each of "
				       "its entries, more than a sandbox holds (%d): mask the "
				       "directories you mean instead",
				       top, MOAT_MASK_MAX_MOUNTS);
		if (r < 0 || !next[cl])
			return r; /* the workspace itself is next: done */
		if (dl + 1 + cl >= sizeof(dir))
			return -ENAMETOOLONG;
		if (dl > 1)
			dir[dl++] = '/';
		memcpy(dir + dl, next, cl);
		dir[dl + cl] = '\0';
	}
}

void moat_ns_scan_save(const struct moat_plan *p, struct moat_mounts *m)
{
	void *c = m->scan_save;

	m->scan_save = NULL;
	moat_scan_save(p, c);
}

/* How many more mounts a mount namespace copied from ours may hold: the
 * kernel's fs.mount-max less the mounts it copies. */
static size_t mounts_room(void)
{
	char buf[64 * 1024];
	long max = 100000;
	size_t used = 0;
	ssize_t got;
	FILE *f = fopen("/proc/sys/fs/mount-max", "re");
	int fd;

	if (f) {
		if (fscanf(f, "%ld", &max) != 1)
			max = 100000;
		fclose(f);
	}
	/* (not recorded for an armed sandbox's watch: a count of this
	 * process's mounts, which nothing masked depends on; the mounts
	 * fail cleanly when the room is gone) */
	fd = (open)("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && (got = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < got; i++)
			used += buf[i] == '\n';
	if (fd >= 0)
		close(fd);
	return max > 0 && (size_t)max > used ? (size_t)max - used : 0;
}

/* The workspace scan's hits masked. The walk follows no link, so below a
 * workspace that is its own real path a hit that is not a link is its own
 * real path too: masked as found, without a realpath for each of
 * thousands of test certificates. A link is masked where it leads
 * (mask_one). */
static int mask_scan_hits(const struct moat_plan *p, struct moat_mounts *m,
			  const struct hidden *hid, struct moat_error *err)
{
	struct moat_scan_result res;
	char real[PATH_MAX];
	size_t before = m->n, room;
	bool ws_real;
	int r;

	struct hidden fresh = *hid;

	r = moat_scan_workspace(p, &res, err);
	if (r < 0)
		return r;
	m->check = res.check;
	res.check = NULL;
	/* SECURITY: a hit exists as the scan found it: the listings read
	 * before the scan (mask_one's shortcut for a path not there) may be
	 * out of date when a directory was renamed in between (the check
	 * after the mounts covers the scan, not them) */
	fresh.nls = 0;
	hid = &fresh;
	ws_real = realpath(p->workspace, real) && !strcmp(real, p->workspace);
	for (size_t i = 0; i < res.n && r == 0; i++) {
		const struct moat_scan_hit *h = &res.v[i];
		bool dup = false;

		if (h->link || !ws_real || within_tmpfs(hid, h->path)) {
			size_t at = m->n;

			r = mask_one(p, m, hid, h->path, err);
			/* (attached beneath the workspace when it is in it) */
			if (r == 0 && m->n > at && m->check &&
			    moat_path_within(m->ops[at].target, p->workspace) &&
			    strcmp(m->ops[at].target, p->workspace))
				m->ops[at].beneath = true;
			continue;
		}
		if (is_exempt(p, h->path))
			continue;
		for (size_t k = 0; k < before && !dup; k++)
			dup = (m->ops[k].kind == MOAT_MNT_MASK_DIR ||
			       m->ops[k].kind == MOAT_MNT_MASK_FILE) &&
			      !strcmp(m->ops[k].target, h->path);
		if (dup)
			continue;
		m->nmasks_found++;
		r = add_op(m, h->dir ? MOAT_MNT_MASK_DIR : MOAT_MNT_MASK_FILE, h->path, -1, h->dir,
			   true, NULL, 0);
		if (r == 0)
			m->ops[m->n - 1].beneath = true;
	}
	m->scan_save = res.save;
	res.save = NULL;
	room = r == 0 && m->n > 1000 ? mounts_room() : SIZE_MAX;
	if ((r == -E2BIG || (r == 0 && m->n + 64 > room)) && p->mntns) {
		/* say where most of them are: the directory holding the most */
		size_t best = 0, bestn = 0;

		for (size_t i = 0, j; i < res.n; i = j) {
			const char *sl = strrchr(res.v[i].path, '/');
			size_t dl = sl ? (size_t)(sl - res.v[i].path) : 0;

			for (j = i + 1; j < res.n && !strncmp(res.v[j].path, res.v[i].path, dl) &&
					res.v[j].path[dl] == '/' && !strchr(res.v[j].path + dl + 1, '/');
			     j++)
				;
			if (j - i > bestn) {
				bestn = j - i;
				best = i;
			}
		}
		{
			const char *bp = res.n ? res.v[best].path : p->workspace;
			const char *sl = strrchr(bp, '/');
			int dl = sl ? (int)(sl - bp) : (int)strlen(bp);

			moat_error_set(err,
				       "the workspace holds %zu paths that the denied paths name (%zu "
				       "of them in %.*s), more than one sandbox can mask: each is a "
				       "mount, and a sandbox may add %zu more (fs.mount-max, less "
				       "the mounts already there and 64 kept for its own). hint: "
				       "exempt the ones that are no secrets (test fixtures) with "
				       "exempt_paths in your own configuration, or raise "
				       "/proc/sys/fs/mount-max",
				       res.n, bestn, dl, bp,
				       room == SIZE_MAX ? (size_t)MOAT_MASK_MAX_MOUNTS
				       : room > 64	? room - 64
							: 0);
		}
		r = -E2BIG;
	}
	moat_scan_result_release(&res);
	return r;
}

/* Does glob pattern pj name entries of pat's literal directory (its first
 * dlen bytes) by a name pattern (no braces)? */
static bool same_dir_glob(const struct moat_mask *mk, const char *pat, size_t dlen)
{
	return mk->kind == MOAT_MASK_GLOB && !strncmp(mk->pattern, pat, dlen + 1) &&
	       !strchr(mk->pattern + dlen + 1, '/') && !strchr(mk->pattern, '{');
}

/* A match of the glob mask mk that the user's exempt_paths leave out: the
 * mask is exemptible and the match is exempt, by the name it matched and
 * (SECURITY: the mask would cover the real file) by its real path. */
static bool glob_match_exempt(const struct moat_plan *p, const struct moat_mask *mk,
			      const char *path)
{
	char real[PATH_MAX];

	if (!moat_plan_mask_exempt(p, mk, path))
		return false;
	return !realpath(path, real) || moat_plan_exempt(p, real);
}

/* One match of a glob mask (maskglob.h), unless exempt_paths leave it out. */
struct glob_hit {
	const struct moat_plan *p;
	const struct moat_mask *mk;
	struct moat_mounts *m;
	const struct hidden *hid;
	struct moat_error *err;
};

/* A directory that cannot be listed is hidden whole (a match in it is
 * still opened by name), unless the workspace lies in it: then the names
 * in it stay unmasked, as they cannot be found (the policy still refuses
 * them to the tools; docs/sandbox.md). */
static int mask_unlisted(const struct moat_plan *p, struct moat_mounts *m, const struct hidden *hid,
			 const char *dir, struct moat_error *err)
{
	if (moat_path_within(p->workspace, dir))
		return 0;
	return mask_one(p, m, hid, dir, err);
}

static int mask_glob_hit(void *ud, const char *path, bool unlisted)
{
	struct glob_hit *h = ud;

	if (unlisted)
		return mask_unlisted(h->p, h->m, h->hid, path, h->err);
	if (glob_match_exempt(h->p, h->mk, path))
		return 0;
	return mask_one(h->p, h->m, h->hid, path, h->err);
}

/* Globs whose directory part is literal ("/home/u/NAME.pem"): read each
 * directory once and match every name pattern against its entries, by
 * character as the policy does (core/glob.h); the others, and {a,b}
 * alternatives anywhere, are walked (maskglob.h). A match exempt_paths
 * leave out is not masked (by this mask). */
static int mask_globs(const struct moat_plan *p, struct moat_mounts *m, const struct hidden *hid,
		      struct moat_error *err)
{
	bool done[MOAT_PLAN_MAX_PATHS] = {false};
	struct moat_glob *same[MOAT_PLAN_MAX_PATHS];
	const struct moat_mask *same_mk[MOAT_PLAN_MAX_PATHS];
	bool plain[MOAT_PLAN_MAX_PATHS];
	struct name_cut cut[MOAT_PLAN_MAX_PATHS];
	size_t nsame;
	int r = 0;

	for (size_t i = 0; i < p->nmasks && r == 0; i++) {
		const char *pat = p->masks[i].pattern, *slash = strrchr(pat, '/');
		size_t dlen;
		char dir[PATH_MAX];
		DIR *d;
		struct dirent *e;

		if (p->masks[i].kind != MOAT_MASK_GLOB || done[i])
			continue;
		dlen = slash ? (size_t)(slash - pat) : 0;
		if (!slash || dlen >= sizeof(dir) || memchr(pat, '*', dlen) ||
		    memchr(pat, '?', dlen) || memchr(pat, '[', dlen) || memchr(pat, '\\', dlen) ||
		    strchr(pat, '{')) {
			struct glob_hit h = {p, &p->masks[i], m, hid, err};

			done[i] = true;
			r = moat_mask_glob_expand(pat, mask_glob_hit, &h, err);
			if (r < 0) {
				/* SECURITY: a pattern not expanded hides nothing: refuse */
				char why[sizeof(err->msg)];

				snprintf(why, sizeof(why), "%s", err->msg);
				moat_error_set(err,
					       "cannot expand the masked pattern '%.200s': %s. hint: "
					       "correct or remove it in denied_paths (or --mask)",
					       pat, why);
			}
			continue;
		}
		memcpy(dir, pat, dlen);
		dir[dlen] = '\0';
		/* the name patterns of this directory, each with the literal
		 * start and end a name must have (when it has only '*' and '?') */
		nsame = 0;
		for (size_t j = i; j < p->nmasks && r == 0; j++) {
			const char *nj;

			if (!same_dir_glob(&p->masks[j], pat, dlen))
				continue;
			done[j] = true;
			nj = p->masks[j].pattern + dlen + 1;
			/* SECURITY: a pattern not compiled hides nothing: refuse */
			if (moat_glob_compile(nj, MOAT_GLOB_PATH, &same[nsame], err) < 0) {
				r = -EINVAL;
				break;
			}
			same_mk[nsame] = &p->masks[j];
			plain[nsame] = !strpbrk(nj, "[\\");
			if (plain[nsame])
				name_cut_of(nj, strlen(nj), &cut[nsame]);
			nsame++;
		}
		d = r == 0 ? opendir(dlen ? dir : "/") : NULL;
		/* SECURITY: a directory that cannot be listed may hold a match
		 * the sandbox can still open by name: hide all of it */
		if (r == 0 && !d && dlen && errno != ENOENT && errno != ENOTDIR)
			r = mask_unlisted(p, m, hid, dir, err);
		for (;;) {
			errno = 0;
			if (!d || r != 0 || !(e = readdir(d)))
				break;
			size_t nl = strlen(e->d_name);

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			for (size_t j = 0; j < nsame && r == 0; j++) {
				char full[PATH_MAX];

				if ((plain[j] && !name_cut_fits(&cut[j], e->d_name, nl)) ||
				    !moat_glob_match(same[j], e->d_name, nl))
					continue;
				if (dlen + 1 + nl < sizeof(full)) {
					memcpy(full, dir, dlen);
					full[dlen] = '/';
					memcpy(full + dlen + 1, e->d_name, nl + 1);
					/* (exempt from this mask: another may
					 * still match it) */
					if (glob_match_exempt(p, same_mk[j], full))
						continue;
					r = mask_one(p, m, hid, full, err);
				}
				break;
			}
		}
		/* SECURITY: a listing cut short may have left a match unread */
		if (d && r == 0 && errno != 0 && dlen)
			r = mask_unlisted(p, m, hid, dir, err);
		if (d)
			closedir(d);
		for (size_t j = 0; j < nsame; j++)
			moat_glob_free(same[j]);
	}
	return r;
}

/* Is t at or below a path bound back into a mask? */
static bool within_reveal(const struct moat_mounts *m, const char *t)
{
	if (!m->nkeep)
		return false; /* (no path kept or bound back: most sandboxes) */
	for (size_t i = 0; i < m->n; i++)
		if (m->ops[i].kind == MOAT_MNT_REVEAL && moat_path_within(t, m->ops[i].target))
			return true;
	return false;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Drop masks under another masked directory (the outer one hides them, and
 * the inner target would not exist any more when its turn came). Each
 * target's ancestors are looked up among the masked directories, sorted:
 * thousands of masks cost no more than a sort. */
static void prune_nested_masks(struct moat_mounts *m, size_t from)
{
	size_t o = from, nd = 0, ngone = 0;
	char **dirs = malloc((m->n - from + 1) * sizeof(*dirs));
	/* (freed once the lookups are over: dirs points into them) */
	char **gone = malloc((m->n - from + 1) * sizeof(*gone));

	if (!dirs || !gone) {
		free(dirs);
		free(gone);
		return; /* (each nested mask then lands on an empty directory: harmless) */
	}
	for (size_t i = from; i < m->n; i++)
		if (m->ops[i].kind == MOAT_MNT_MASK_DIR)
			dirs[nd++] = m->ops[i].target;
	qsort(dirs, nd, sizeof(*dirs), cmp_strp);
	for (size_t i = from; i < m->n; i++) {
		const char *t = m->ops[i].target;
		char up[PATH_MAX];
		bool nested = false;

		for (size_t l = strlen(t); nd && l > 1 && !nested;) {
			char *key = up;

			while (l > 0 && t[l - 1] != '/')
				l--;
			if (l <= 1)
				break;
			l--; /* (the slash) */
			memcpy(up, t, l);
			up[l] = '\0';
			/* a mask inside a path bound back stays: the bind would
			 * bring the secret back */
			nested = bsearch(&key, dirs, nd, sizeof(*dirs), cmp_strp) &&
				 !within_reveal(m, t);
		}
		if (nested) {
			gone[ngone++] = m->ops[i].target;
			m->nmasks_found--;
			continue;
		}
		m->ops[o++] = m->ops[i];
	}
	m->n = o;
	for (size_t i = 0; i < ngone; i++)
		free(gone[i]);
	free(gone);
	free(dirs);
}

/* SECURITY: with a mount namespace a rule's path through a symbolic link
 * whose real path holds a masked path, or lies in one, is refused: under
 * the private /tmp the link's target is cloned to the link's place before
 * any mask covers it. Without one the carve follows the real path
 * (landlock.c); only a rule that is a masked path by a link is refused. */
static int refuse_linked_rule(const struct moat_plan *p, const struct moat_mounts *m, size_t from,
			      size_t end, const struct moat_fs_rule *fr, struct moat_error *err)
{
	char real[PATH_MAX];

	if (!realpath(fr->path, real) || !strcmp(real, fr->path))
		return 0;
	for (size_t j = from; j < end; j++) {
		const struct moat_mount_op *op = &m->ops[j];

		if (op->kind != MOAT_MNT_MASK_DIR && op->kind != MOAT_MNT_MASK_FILE)
			continue;
		if (p->mntns
			? !moat_path_within(real, op->target) && !moat_path_within(op->target, real)
			: strcmp(real, op->target))
			continue;
		moat_error_set(err,
			       "%s path '%s' is masked or holds a masked path through a symbolic "
			       "link (it leads to '%s'; '%s' is a denied path): name the real path",
			       fr->origin, fr->path, real, op->target);
		return -EACCES;
	}
	return 0;
}

/* A --ro or --rw path (or a profile's) strictly below a masked directory
 * is bound back into the mask, which becomes an empty tmpfs holding only
 * the way to it (mode 0111: nothing else listed or readable), sealed
 * read-only afterwards (the allow-within-deny of srt and codex). The masked
 * path itself, or a path inside a masked file, cannot be: refused, saying
 * which denied path is in the way, in both modes. Without a mount
 * namespace nothing is bound: the carve (landlock.c) grants such a path
 * and leaves the masked paths below it out, the nested masks kept. */
static int reveal_rules_under_masks(const struct moat_plan *p, struct moat_mounts *m, size_t from,
				    struct moat_error *err)
{
	size_t end = m->n;

	for (size_t i = 0; i < p->nfs; i++) {
		const char *o = p->fs[i].origin, *path = p->fs[i].path, *masked_by = "";
		bool found = false;
		struct stat st;
		int r;

		if (!strcmp(o, "system") || !strcmp(o, "private-tmp") || !strcmp(o, "workspace") ||
		    !strcmp(o, "user-config"))
			continue;
		for (size_t j = from; j < end; j++) {
			struct moat_mount_op *op = &m->ops[j];

			if ((op->kind != MOAT_MNT_MASK_DIR && op->kind != MOAT_MNT_MASK_FILE) ||
			    !moat_path_within(path, op->target))
				continue;
			if (op->kind == MOAT_MNT_MASK_FILE || !strcmp(path, op->target)) {
				moat_error_set(err,
					       "%s path '%s' is masked ('%s' is a denied path): it "
					       "would be hidden; remove the denied path "
					       "(denied_paths, --mask) or name a path below it",
					       o, path, op->target);
				return -EACCES;
			}
			op->reveals = true;
			found = true;
			masked_by = op->target;
		}
		r = refuse_linked_rule(p, m, from, end, &p->fs[i], err);
		if (r < 0)
			return r;
		/* without a mount namespace the carve leaves the masked paths
		 * below such a rule out (landlock.c): nothing to bind */
		if (!p->mntns || !found || op_exists(m, MOAT_MNT_REVEAL, path))
			continue;
		if (lstat(path, &st) < 0)
			continue; /* an optional path that does not exist: nothing to bring back */
		/* SECURITY: brought back by its own path only: a link on the way
		 * could lead to another masked tree (the clone is taken before
		 * any mask covers it) */
		{
			char real[PATH_MAX];

			if (!realpath(path, real) || strcmp(real, path)) {
				moat_error_set(err,
					       "%s path '%s' lies in the masked '%s' and passes "
					       "through a symbolic link: name the real path",
					       o, path, masked_by);
				return -EACCES;
			}
		}
		r = add_op(m, MOAT_MNT_REVEAL, path, -1, S_ISDIR(st.st_mode),
			   !(p->fs[i].access & MOAT_FS_WRITE), NULL, 0);
		if (r < 0)
			return r;
		m->ops[m->n - 1].dev = st.st_dev;
		m->ops[m->n - 1].ino = st.st_ino;
	}
	return 0;
}

/* Masks inside a path bound back go after the binds (stable order). */
static void masks_after_reveals(struct moat_mounts *m, size_t from)
{
	size_t n = m->n, o = from, k = 0;
	struct moat_mount_op *later = malloc(n * sizeof(*later));

	if (!later)
		return; /* prune kept them; order is best effort only without memory */
	for (size_t i = from; i < n; i++) {
		bool mask =
		    m->ops[i].kind == MOAT_MNT_MASK_DIR || m->ops[i].kind == MOAT_MNT_MASK_FILE;

		if (mask && within_reveal(m, m->ops[i].target))
			later[k++] = m->ops[i];
		else
			m->ops[o++] = m->ops[i];
	}
	memcpy(&m->ops[o], later, k * sizeof(*later));
	free(later);
}

/* ---- protected paths ---- */

/* Protected names that are directories: when one is missing (and its parent
 * is a real directory of the workspace), an empty one is created for the
 * run and mounted read-only, so the command cannot create it with content
 * that runs later outside the sandbox (a VS Code task, Claude Code's hooks,
 * a git hook). Names of files cannot get an empty stand-in (an empty
 * .mcp.json or .bashrc is not harmless): they are checked after the run. */
#define STANDIN_XATTR "user.moat.standin"
static const char *const protect_dirs[] = {".git/hooks", ".vscode", ".idea", ".moat",
					   ".claude",	 ".cursor", NULL};

static const char *const git_redirects[] = {".git/commondir", ".git/config.worktree", NULL};

/* Git files that send git to another config and hooks: normally absent in
 * a repository's own .git (git writes commondir only in linked worktrees'
 * directories, config.worktree only with worktreeConfig). Created inside
 * the sandbox, they are set aside after the run (moat_ns_quarantine), in
 * every mode: nothing of the sandbox runs by then. */
/* Submodule configs (.git/modules/NAME/config, nested): git reads them
 * when it recurses into a submodule, so one written inside the sandbox with
 * core.fsmonitor runs code at the user's next `git status` outside. Their
 * ctimes (which no one can set) are noted before the run; after it, a new
 * or changed one that makes git run a program is set aside. */
#define GITCFG_MAX 4096	      /* configs looked at */
#define GITCFG_DEPTH 32	      /* directories below .git/modules */
#define GITCFG_ENTRIES 200000 /* directory entries read in all */

typedef void (*gitcfg_fn)(struct moat_mounts *m, const char *rel, const struct stat *st, int dfd,
			  const char *leaf, void *ud);
static int open_parent_nofollow(const struct moat_mounts *m, const char *ws, const char *name,
				const char **leaf);
static int guard_prepare(const struct moat_plan *p, struct moat_mounts *m,
			 const struct hidden *hid);

struct gitcfg_budget {
	size_t configs, entries;
	bool cut; /* a bound was reached: not every config was seen */
};

/* Submodule names may hold '/' (nested directories below .git/modules
 * that are not repositories) and may be "logs" or "objects": a directory is
 * a submodule's git directory when it holds HEAD, and only there are its
 * own objects, refs and logs skipped. */
static void gitcfg_walk(int dfd, char *rel, size_t rlen, int depth, struct moat_mounts *m,
			gitcfg_fn fn, void *ud, struct gitcfg_budget *bg)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	struct stat hst;
	bool gitdir;

	if (!d) {
		close(dfd);
		return;
	}
	gitdir = fstatat(dirfd(d), "HEAD", &hst, AT_SYMLINK_NOFOLLOW) == 0;
	while ((e = readdir(d))) {
		struct stat st;
		size_t n = strlen(e->d_name);

		if (!bg->configs || !bg->entries--) {
			bg->cut = true;
			break;
		}
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || rlen + n + 2 >= PATH_MAX)
			continue;
		if (gitdir && (!strcmp(e->d_name, "objects") || !strcmp(e->d_name, "refs") ||
			       !strcmp(e->d_name, "logs") || !strcmp(e->d_name, "lfs")))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		rel[rlen] = '/';
		memcpy(rel + rlen + 1, e->d_name, n + 1);
		/* a link (to a config or a git directory elsewhere) is judged
		 * like a config: new or changed, it is set aside (unreadable
		 * without following it counts as running code) */
		if ((S_ISREG(st.st_mode) && !strcmp(e->d_name, "config")) || S_ISLNK(st.st_mode)) {
			bg->configs--;
			fn(m, rel, &st, dirfd(d), e->d_name, ud);
		} else if (S_ISDIR(st.st_mode)) {
			int sub = depth < GITCFG_DEPTH
				      ? openat(dirfd(d), e->d_name,
					       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
				      : -1;

			if (depth >= GITCFG_DEPTH)
				bg->cut = true;
			if (sub >= 0)
				gitcfg_walk(sub, rel, rlen + 1 + n, depth + 1, m, fn, ud, bg);
		}
		rel[rlen] = '\0';
	}
	closedir(d);
}

/* Returns true when the walk saw everything (no bound reached). */
static bool gitcfg_each(const struct moat_plan *p, struct moat_mounts *m, gitcfg_fn fn, void *ud)
{
	char rel[PATH_MAX] = ".git/modules";
	struct gitcfg_budget bg = {GITCFG_MAX, GITCFG_ENTRIES, false};
	const char *leaf = NULL;
	int pfd = open_parent_nofollow(m, p->workspace, ".git/modules", &leaf), dfd;

	if (pfd < 0)
		return true;
	dfd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(pfd);
	if (dfd >= 0)
		gitcfg_walk(dfd, rel, strlen(rel), 0, m, fn, ud, &bg);
	return !bg.cut;
}

static long long ctime_ns(const struct stat *st)
{
	return (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
}

static void gitcfg_note(struct moat_mounts *m, const char *rel, const struct stat *st, int dfd,
			const char *leaf, void *ud)
{
	struct moat_gitcfg_seen *nv = realloc(m->gitcfg, (m->ngitcfg + 1) * sizeof(*nv));

	(void)ud;
	(void)dfd;
	(void)leaf;
	if (!nv)
		return;
	m->gitcfg = nv;
	nv[m->ngitcfg].rel = moat_strdup(rel);
	nv[m->ngitcfg].ctime_ns = ctime_ns(st);
	if (nv[m->ngitcfg].rel)
		m->ngitcfg++;
}

struct gitcfg_after {
	const struct moat_plan *p;
	char *out;
	size_t outsz;
};

/* Rename dfd/leaf to leaf.moat-quarantined, never over an earlier one
 * (leaf.moat-quarantined.2 ... .9 then): nothing is lost. */
static int set_aside(int dfd, const char *leaf)
{
	char aside[NAME_MAX + 1];

	/* .2 to .9, then (names the command may have taken on purpose, so
	 * that nothing could be set aside) ones it cannot guess */
	for (int i = 1; i <= 9 + 64; i++) {
		struct timespec ts;
		int n;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		n = i == 1   ? snprintf(aside, sizeof(aside), "%s.moat-quarantined", leaf)
		    : i <= 9 ? snprintf(aside, sizeof(aside), "%s.moat-quarantined.%d", leaf, i)
			     : snprintf(aside, sizeof(aside), "%s.moat-quarantined.%d.%ld", leaf,
					(int)getpid(), (long)ts.tv_nsec);

		if (n < 0 || (size_t)n >= sizeof(aside))
			return -ENAMETOOLONG;
		if (moat_renameat2(dfd, leaf, dfd, aside, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* SECURITY: names come from the command (a file it created): shown
 * escaped, so that no terminal control sequence or invalid UTF-8 reaches
 * moat's stderr, the audit record or the bash tool's result. */
static void append_name(char *out, size_t outsz, const char *a, const char *b)
{
	struct moat_buf shown = MOAT_BUF_INIT;
	size_t l;

	if (!out || !outsz)
		return;
	l = strlen(out);
	if (moat_buf_put_shown(&shown, a, strlen(a)) < 0 || !shown.data) {
		moat_buf_release(&shown);
		return;
	}
	if (l < outsz)
		snprintf(out + l, outsz - l, "%s%s%s", l ? ", " : "", shown.data, b ? b : "");
	moat_buf_release(&shown);
}

/* A git config written inside (a submodule's, or a new .git/config after
 * git init): does it hold keys git does not write there (why names one)?
 * SECURITY: unreadable, not a file, or too large to judge counts as
 * running code. */
/* core.worktree (value wt) of the git directory gitdir: where git would
 * check files out and run its work-tree commands. Only a directory inside
 * the workspace ws, reached from the git directory with no symbolic link on
 * the way (as git writes it for a submodule: ../../../sub), is harmless; a
 * worktree elsewhere (core.worktree = /home/u) makes a later checkout,
 * reset or stash write files there. */
static bool worktree_outside(int gitdir, const char *wt, const char *ws)
{
	char self[64], real[PATH_MAX];
	struct open_how how;
	ssize_t n;
	int fd;

	if (!ws || !*wt || *wt == '/' || *wt == '~')
		return true;
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, gitdir, wt, &how, sizeof(how));
	if (fd < 0)
		return true;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, real, sizeof(real) - 1);
	close(fd);
	if (n <= 0)
		return true;
	real[n] = '\0';
	return !moat_path_within(real, ws);
}

static bool gitconfig_suspect(int dfd, const char *leaf, const char *ws, char *why, size_t whysz)
{
	char buf[65536], wt[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	n = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0 || (size_t)n == sizeof(buf)) {
		snprintf(why, whysz, "unreadable");
		return true;
	}
	if (moat_gitconfig_runs_code(buf, (size_t)n, why, whysz))
		return true;
	if (moat_gitconfig_worktree(buf, (size_t)n, wt, sizeof(wt)) && worktree_outside(dfd, wt, ws)) {
		snprintf(why, whysz, "core.worktree outside the workspace");
		return true;
	}
	return false;
}

static void gitcfg_check(struct moat_mounts *m, const char *rel, const struct stat *st, int dfd,
			 const char *leaf, void *ud)
{
	struct gitcfg_after *a = ud;
	char why[160];

	for (size_t i = 0; i < m->ngitcfg; i++)
		if (!strcmp(m->gitcfg[i].rel, rel) && m->gitcfg[i].ctime_ns == ctime_ns(st))
			return; /* as it was before the run */
	if (gitconfig_suspect(dfd, leaf, a->p->workspace, why, sizeof(why)) &&
	    set_aside(dfd, leaf) == 0 &&
	    a->out) {
		struct moat_buf w = MOAT_BUF_INIT;
		const char *reason = why;
		char suffix[200];

		/* the key names come from the file: shown escaped */
		moat_buf_put_shown(&w, reason, strlen(reason));
		snprintf(suffix, sizeof(suffix), " (%s)", w.data ? w.data : "?");
		moat_buf_release(&w);
		append_name(a->out, a->outsz, rel, suffix);
	}
}

/* What the checks after a run judge from its start: the time, and the git
 * index then. */
static void run_start_note(const struct moat_plan *p, struct moat_mounts *m)
{
	char path[PATH_MAX];
	struct stat st;
	struct timespec now;

	snprintf(path, sizeof(path), "%s/.git/index", p->workspace);
	m->index_ctime_ns = lstat(path, &st) == 0 ? ctime_ns(&st) : 0;
	clock_gettime(CLOCK_REALTIME, &now);
	m->run_start_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

void moat_mounts_restart(const struct moat_plan *p, struct moat_mounts *m)
{
	if (m->nested_watch)
		run_start_note(p, m);
}

static int watch_git_redirects(const struct moat_plan *p, struct moat_mounts *m)
{
	char path[PATH_MAX];
	struct stat st;

	/* nested repositories are looked for after every run (nested_check):
	 * whatever the run wrote is judged from its start */
	run_start_note(p, m);
	m->nested_watch = true;
	snprintf(path, sizeof(path), "%s/.git", p->workspace);
	if (lstat(path, &st) < 0) {
		/* no repository yet: one the command creates (git init) gets the
		 * same checks afterwards, and a .git FILE (a "gitdir:" redirect
		 * to a planted configuration) is set aside */
		if (errno != ENOENT)
			return 0;
		m->git_was_missing = true;
	} else if (!S_ISDIR(st.st_mode)) {
		return 0;
	}
	m->gitcfg_watch = true;
	gitcfg_each(p, m, gitcfg_note, NULL);
	/* (nested repositories: git recurses into a gitlink of the index at
	 * the user's next `git status`; the index's ctime, taken above, says
	 * whether the run changed it) */
	for (size_t i = 0; git_redirects[i]; i++) {
		char **nv;

		snprintf(path, sizeof(path), "%s/%s", p->workspace, git_redirects[i]);
		if (lstat(path, &st) == 0)
			continue;
		nv = realloc(m->quarantine, (m->nquarantine + 1) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		m->quarantine = nv;
		nv[m->nquarantine] = moat_strdup(git_redirects[i]);
		if (!nv[m->nquarantine])
			return -ENOMEM;
		m->nquarantine++;
	}
	return 0;
}

static bool protect_is_dir(const char *name)
{
	for (size_t i = 0; protect_dirs[i]; i++)
		if (!strcmp(protect_dirs[i], name))
			return true;
	return false;
}

/* The parent of workspace/NAME (NAME has at most one '/') is a directory,
 * not a symlink. */
static bool parent_is_dir(const char *ws, const char *name)
{
	const char *sl = strrchr(name, '/');
	char path[PATH_MAX];
	struct stat st;
	int n;

	if (!sl)
		return true;
	n = snprintf(path, sizeof(path), "%s/%.*s", ws, (int)(sl - name), name);
	return n > 0 && (size_t)n < sizeof(path) && lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The first directory above workspace/NAME that does not exist, into out;
 * or an existing stand-in of another run there. False when every directory above exists,
 * or one is not a plain directory (a file, a link: nothing is made). */
static bool missing_ancestor(const char *ws, const char *name, char *out, size_t outsz)
{
	for (const char *c = strchr(name, '/'); c; c = strchr(c + 1, '/')) {
		char path[PATH_MAX];
		struct stat st;
		size_t len = (size_t)(c - name);
		int n = snprintf(path, sizeof(path), "%s/%.*s", ws, (int)len, name);

		if (n < 0 || (size_t)n >= sizeof(path) || len >= outsz)
			return false;
		if (lstat(path, &st) < 0) {
			if (errno != ENOENT)
				return false;
			memcpy(out, name, len);
			out[len] = '\0';
			return true;
		}
		if (!S_ISDIR(st.st_mode))
			return false;
		if (getxattr(path, STANDIN_XATTR, path, 0) >= 0) {
			memcpy(out, name, len);
			out[len] = '\0';
			return true; /* another run's, which may go while we run */
		}
	}
	return false;
}


/* The lock of a workspace's stand-ins: a file of ours in a directory no
 * sandbox sees ($XDG_RUNTIME_DIR/moat under /run, else /dev/shm/moat-UID:
 * every built-in profile covers both with a tmpfs of its own), so that no
 * command inside can take it. SECURITY: the workspace directory itself
 * (the fallback) can be flocked from inside: a command holding it would
 * make a later run go on unlocked, and another run could then remove that
 * run's stand-in under it (a removed mount point's mount goes with it). */
static int ws_lock_open(const char *ws)
{
	const char *rt = secure_getenv("XDG_RUNTIME_DIR");
	char dir[PATH_MAX], path[PATH_MAX + 32];
	struct stat st;
	int n, fd;

	if (rt && rt[0] == '/')
		n = snprintf(dir, sizeof(dir), "%s/moat", rt);
	else
		n = snprintf(dir, sizeof(dir), "/dev/shm/moat-%u", (unsigned)geteuid());
	if (n > 0 && (size_t)n < sizeof(dir) && (mkdir(dir, 0700) == 0 || errno == EEXIST) &&
	    lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	    !(st.st_mode & 077)) {
		/* 256 files at most: workspaces that share one only wait for
		 * each other's removals */
		snprintf(path, sizeof(path), "%s/lock-%02llx", dir,
			 (unsigned long long)(moat_hash(ws, strlen(ws)) & 0xff));
		fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
	}
	return open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* A shared flock of the workspace's stand-in lock. Another moat holds it
 * exclusively only while it removes its stand-ins (microseconds; tens of
 * milliseconds on a loaded machine, where the lock is shared by hash
 * with other workspaces' runs): tries for up to a second. A lock held
 * longer is not moat's: then we go on unlocked, which only means our own
 * stand-ins stay (nothing but a moat that holds the lock removes one;
 * inside every sandbox they are read-only mount points). */
static void ws_lock_shared(const char *ws, struct moat_mounts *m)
{
	int lfd = ws_lock_open(ws);

	if (lfd < 0)
		return;
	for (int i = 0; i < 1000; i++) {
		struct timespec ts = {0, 1000000};

		if (flock(lfd, LOCK_SH | LOCK_NB) == 0) {
			m->ws_lock_fd = lfd;
			m->ws_locked = true;
			return;
		}
		if (errno != EWOULDBLOCK && errno != EINTR)
			break;
		nanosleep(&ts, NULL);
	}
	close(lfd);
}

/* A protected name that is a symbolic link (a .claude or .vscode kept in a
 * dotfiles repository): a mount cannot sit on a link, so its target, when
 * there is one, is bound read-only instead, and the link itself (an entry
 * of the writable workspace, which the command could remove or replace) is
 * noted and checked after the run (moat_ns_quarantine). */
static int protect_link(struct moat_mounts *m, const char *name, const char *path,
			const struct stat *lst)
{
	struct moat_protected_link *nv;
	char text[PATH_MAX], *real;
	ssize_t tl = readlink(path, text, sizeof(text) - 1);
	struct stat st;
	int r = 0;

	if (tl < 0)
		return 0; /* gone meanwhile: nothing to protect */
	text[tl] = '\0';
	nv = realloc(m->links, (m->nlinks + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	m->links = nv;
	nv += m->nlinks;
	memset(nv, 0, sizeof(*nv));
	nv->name = moat_strdup(name);
	nv->target = moat_strdup(text);
	nv->dev = lst->st_dev;
	nv->ino = lst->st_ino;
	if (!nv->name || !nv->target) {
		free(nv->name);
		free(nv->target);
		return -ENOMEM;
	}
	m->nlinks++;
	real = realpath(path, NULL);
	/* a dangling link: a write through it would create its target, which
	 * no mount can cover before it exists; so the link itself is covered
	 * by the empty, mode 000, read-only mask file (move_mount does not
	 * follow it): inside, the name can be neither written through nor
	 * removed. Its target made by other means is set aside after the run. */
	if (!real || stat(real, &st) < 0) {
		nv->dangling = true;
		free(real);
		if (op_exists(m, MOAT_MNT_MASK_FILE, path))
			return 0;
		return add_op(m, MOAT_MNT_MASK_FILE, path, -1, false, true, NULL, 0);
	}
	/* the link itself: a mount point cannot be removed or renamed, and
	 * a symlink can be bound onto itself (open_tree without following it,
	 * move_mount onto it without following it) */
	if (!op_exists(m, MOAT_MNT_RO_BIND, path)) {
		r = add_op(m, MOAT_MNT_RO_BIND, path, -1, false, true, NULL, 0);
		if (r < 0) {
			free(real);
			return r;
		}
		m->ops[m->n - 1].nofollow = true;
	}
	if (!op_exists(m, MOAT_MNT_RO_BIND, real)) {
		r = add_op(m, MOAT_MNT_RO_BIND, real, -1, S_ISDIR(st.st_mode), true, NULL, 0);
		if (r == 0)
			m->ops[m->n - 1].optional = true;
	}
	free(real);
	return r;
}

/* A protected name that does not exist: judged after the run
 * (moat_ns_quarantine) if the run made it. */
static int add_missing(struct moat_mounts *m, const char *name)
{
	char **nv = realloc(m->protected_missing, (m->nprotected_missing + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	m->protected_missing = nv;
	nv[m->nprotected_missing] = moat_strdup(name);
	if (!nv[m->nprotected_missing])
		return -ENOMEM;
	m->nprotected_missing++;
	return 0;
}

/* SECURITY: the user's configuration and the audit log's directory are
 * found by later runs by their path: below a writable rule's path (a
 * mount point already: it cannot be renamed), every directory on the way
 * down to them is pinned (bound onto itself), so that the command cannot
 * rename one away and make a new one in its place that the next session
 * would trust or append to. */
static int pin_between(struct moat_mounts *m, const char *top, const char *path)
{
	size_t tn = strlen(top);
	char dir[PATH_MAX];
	struct stat st;
	int r;

	if (strlen(path) >= sizeof(dir))
		return 0;
	for (const char *c = strchr(path + tn + 1, '/'); c; c = strchr(c + 1, '/')) {
		memcpy(dir, path, (size_t)(c - path));
		dir[c - path] = '\0';
		if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			break;
		if (!op_exists(m, MOAT_MNT_SELF_BIND, dir) &&
		    (r = add_op(m, MOAT_MNT_SELF_BIND, dir, -1, true, false, NULL, 0)) < 0)
			return r;
	}
	return 0;
}

static int protect_paths(const struct moat_plan *p, struct moat_mounts *m, const struct hidden *hid,
			 struct moat_error *err)
{
	char path[PATH_MAX];
	struct stat st;
	bool standins;
	int r;

	/* every run in this workspace (an MCP server's shell calls run at
	 * once) holds a shared lock from before it looks for the names to its
	 * end: a stand-in is removed only by a run that can take it
	 * exclusively, never from under another run that found it and whose
	 * read-only mount would go with it */
	if (p->protect.n && !m->ws_locked)
		ws_lock_shared(p->workspace, m);
	/* Stand-ins only in a project (a git repository): they are visible
	 * inside (`ls -A` lists them), and an empty workspace must stay empty
	 * for `git clone URL .` and project generators, which refuse a
	 * directory that is not */
	snprintf(path, sizeof(path), "%s/.git", p->workspace);
	standins = lstat(path, &st) == 0 && S_ISDIR(st.st_mode);

	/* ancestors first (a self-bind makes a directory a mount point, which
	 * cannot be renamed or removed, so ".git" cannot be swapped for a
	 * planted copy); then the items themselves, read-only */
	for (size_t i = 0; i < p->protect.n; i++) {
		const char *name = p->protect.v[i];

		for (const char *c = strchr(name, '/'); c; c = strchr(c + 1, '/')) {
			int n = snprintf(path, sizeof(path), "%s/%.*s", p->workspace,
					 (int)(c - name), name);

			if (n < 0 || (size_t)n >= sizeof(path))
				break;
			if (listing_absent(hid->ls, hid->nls, path) || lstat(path, &st) < 0 ||
			    !S_ISDIR(st.st_mode))
				break;
			if (!op_exists(m, MOAT_MNT_SELF_BIND, path)) {
				r = add_op(m, MOAT_MNT_SELF_BIND, path, -1, true, false, NULL, 0);
				if (r < 0)
					return r;
			}
		}
	}
	for (size_t i = 0; i < p->protect.n; i++) {
		int n = snprintf(path, sizeof(path), "%s/%s", p->workspace, p->protect.v[i]);
		char anc[PATH_MAX];
		bool absent;

		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		absent = listing_absent(hid->ls, hid->nls, path) || lstat(path, &st) < 0;
		if (!absent && S_ISLNK(st.st_mode)) {
			r = protect_link(m, p->protect.v[i], path, &st);
			if (r < 0)
				return r;
			continue;
		}
		if (absent) {
			if (standins && protect_is_dir(p->protect.v[i]) &&
			    parent_is_dir(p->workspace, p->protect.v[i])) {

				r = add_op(m, MOAT_MNT_RO_BIND, path, -1, true, true, NULL, 0);
				if (r < 0)
					return r;
				m->ops[m->n - 1].placeholder = true;
				continue;
			}
			/* a protected name below a directory that does not
			 * exist (--protect conf/settings.json): that directory,
			 * empty and read-only for the run, so nothing can be
			 * created in it (not for .git: git init makes it) */
			if (strncmp(p->protect.v[i], ".git/", 5) &&
			    missing_ancestor(p->workspace, p->protect.v[i], anc, sizeof(anc))) {
				n = snprintf(path, sizeof(path), "%s/%s", p->workspace, anc);
				if (n > 0 && (size_t)n < sizeof(path) &&
				    !op_exists(m, MOAT_MNT_RO_BIND, path)) {
					bool exists = lstat(path, &st) == 0;

					r = add_op(m, MOAT_MNT_RO_BIND, path, -1, true, true, NULL,
						   0);
					if (r < 0)
						return r;
					m->ops[m->n - 1].placeholder = !exists;
					m->ops[m->n - 1].standin = true;
				}
				continue;
			}
			r = add_missing(m, p->protect.v[i]);
			if (r < 0)
				return r;
			continue;
		}
		r = add_op(m, MOAT_MNT_RO_BIND, path, -1, S_ISDIR(st.st_mode), true, NULL, 0);
		if (r < 0)
			return r;
		m->ops[m->n - 1].dev = st.st_dev;
		m->ops[m->n - 1].ino = st.st_ino;
		m->ops[m->n - 1].watch = true;
	}
	/* read-only rules inside a writable one: Landlock cannot carve them */
	for (size_t i = 0; i < p->nfs; i++) {
		const struct moat_fs_rule *ro = &p->fs[i];

		if ((ro->access & MOAT_FS_WRITE) || !strcmp(ro->path, "/"))
			continue;
		for (size_t j = 0; j < p->nfs; j++) {
			const struct moat_fs_rule *rw = &p->fs[j];

			if (!(rw->access & MOAT_FS_WRITE) || !strcmp(rw->path, ro->path) ||
			    !moat_path_within(ro->path, rw->path))
				continue;
			if (stat(ro->path, &st) < 0)
				break;
			/* (from every writable rule above it: the outermost
			 * one's directories can be renamed too) */
			for (size_t k = 0; !strcmp(ro->origin, "user-config") && k < p->nfs; k++)
				if ((p->fs[k].access & MOAT_FS_WRITE) &&
				    strcmp(p->fs[k].path, ro->path) &&
				    moat_path_within(ro->path, p->fs[k].path) &&
				    (r = pin_between(m, p->fs[k].path, ro->path)) < 0)
					return r;
			if (!op_exists(m, MOAT_MNT_RO_BIND, ro->path)) {
				r = add_op(m, MOAT_MNT_RO_BIND, ro->path, -1, S_ISDIR(st.st_mode),
					   true, NULL, 0);
				if (r < 0)
					return r;
			}
			break;
		}
	}
	(void)err;
	return 0;
}

int moat_ns_prepare(const struct moat_plan *p, struct moat_mounts *m, struct moat_error *err)
{
	struct hidden hid;
	struct keep keep[MOAT_PLAN_MAX_PATHS + 8];
	size_t nkeep = 0, mask_start;
	struct stat st;
	char real[PATH_MAX];
	int r = 0;

	memset(m, 0, sizeof(*m));
	memset(&hid, 0, sizeof(hid));
	if (!p->mntns && !p->landlock)
		return 0;
	m->ws_fd = open(p->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
	m->has_ws_fd = m->ws_fd >= 0;
	if (!p->mntns)
		goto masks; /* resolved anyway: Landlock carves its read rules around them */

	/* 1. what the tmpfs mounts will cover */
	if (p->private_tmp) {
		hid.v[hid.n++] = "/tmp";
		if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode))
			hid.v[hid.n++] = "/dev/shm";
	}
	if (p->hide_run) {
		if (stat("/run", &st) == 0 && S_ISDIR(st.st_mode))
			hid.v[hid.n++] = "/run";
		if (lstat("/var/run", &st) == 0 && S_ISDIR(st.st_mode))
			hid.v[hid.n++] = "/var/run"; /* a real directory, not the usual link */
	}
	/* the home directory, copy-on-write: unless it lives under a tmpfs
	 * above (then it is kept read-only), the workspace contains it (then
	 * the workspace rules apply), or its path cannot be an overlayfs
	 * option */
	if (p->home_cow && p->home && !within_hidden(&hid, p->home) &&
	    !moat_path_within(p->home, p->workspace) && !strpbrk(p->home, ",:\\") &&
	    strlen(p->home) < 1024 && stat(p->home, &st) == 0 && S_ISDIR(st.st_mode)) {
		hid.cow[hid.n] = true;
		hid.v[hid.n++] = p->home;
	}

	/* 2. hidden paths the sandbox must still see: workspace, rules, home,
	 * allowed sockets, the resolver configuration */
	for (size_t i = 0; i < p->nfs && r == 0; i++) {
		const char *path = p->fs[i].path;

		/* the private /tmp and /dev/shm are the plan's own; named by the
		 * user (--rw /tmp, a profile), the host's stays, on top */
		if (!strcmp(path, "/") || (!strcmp(p->fs[i].origin, "private-tmp") &&
					   (!strcmp(path, "/tmp") || !strcmp(path, "/dev/shm"))))
			continue;
		if (p->fs[i].optional && access(path, F_OK) < 0)
			continue; /* an optional path that does not exist */
		if (within_hidden(&hid, path))
			r = keep_add(keep, &nkeep, MOAT_ARRAY_SIZE(keep), path,
				     !(p->fs[i].access & MOAT_FS_WRITE));
	}
	if (r == 0 && p->home && within_tmpfs(&hid, p->home))
		r = keep_add(keep, &nkeep, MOAT_ARRAY_SIZE(keep), p->home, true);
	for (size_t i = 0; i < p->sockets.n && r == 0; i++)
		if (within_hidden(&hid, p->sockets.v[i]))
			r = keep_add(keep, &nkeep, MOAT_ARRAY_SIZE(keep), p->sockets.v[i], true);
	if (r == 0 && p->net != MOAT_NET_DENY && realpath("/etc/resolv.conf", real) &&
	    within_hidden(&hid, real))
		r = keep_add(keep, &nkeep, MOAT_ARRAY_SIZE(keep), real, true);
	if (r < 0) {
		moat_error_set(err, "too many paths to keep visible");
		goto fail;
	}
	/* outer paths first; an inner path is carried by its outer bind */
	qsort(keep, nkeep, sizeof(keep[0]), cmp_keep);

	/* 3. the operations, in the order the child applies them. First the
	 * paths that stay writable: the child binds each onto itself, makes
	 * the whole tree read-only (a mount flag: it also stops chmod, chown,
	 * utimes, xattrs and inode flags, which Landlock does not govern) and
	 * then these writable again */
	for (size_t i = 0; i < p->nfs && r == 0; i++) {
		const char *path = p->fs[i].path;

		if (!(p->fs[i].access & MOAT_FS_WRITE) || !strcmp(path, "/"))
			continue;
		if (p->private_tmp && !strcmp(p->fs[i].origin, "private-tmp") &&
		    (!strcmp(path, "/tmp") || !strcmp(path, "/dev/shm")))
			continue; /* fresh tmpfs mounts, writable */
		if (stat(path, &st) < 0)
			continue; /* an optional path that does not exist */
		if (!op_exists(m, MOAT_MNT_WRITABLE, path))
			r = add_op(m, MOAT_MNT_WRITABLE, path, -1, S_ISDIR(st.st_mode), false, NULL,
				   0);
	}
	if (r < 0)
		goto fail;
	if (p->private_tmp) {
		/* tmpfs pages are not counted by RLIMIT_DATA: each private tmpfs
		 * is capped at the memory limit (the kernel's default is half of
		 * RAM) */
		char opts[64], shm_opts[64];

		/* SECURITY: the two share the memory limit (/tmp three quarters,
		 * /dev/shm one): each at the whole limit let one call pin twice
		 * its memory in RAM */
		if (p->mem_bytes) {
			snprintf(opts, sizeof(opts), "mode=1777,size=%llu",
				 (unsigned long long)(p->mem_bytes / 4 * 3));
			snprintf(shm_opts, sizeof(shm_opts), "mode=1777,size=%llu",
				 (unsigned long long)(p->mem_bytes / 4));
		} else {
			snprintf(opts, sizeof(opts), "mode=1777");
			snprintf(shm_opts, sizeof(shm_opts), "mode=1777");
		}
		/* the stash first: the private /tmp covers it. Attached (unlike an
		 * fsmount'ed tree, whose last close unmounts it and waits for an
		 * RCU grace period), and capped like /tmp, since the home
		 * directory's copy-on-write layer writes into it */
		r = add_op(m, MOAT_MNT_STASH, "/tmp", -1, true, false, opts, MS_NOSUID | MS_NODEV);
		if (r == 0)
			r = add_op(m, MOAT_MNT_TMPFS, "/tmp", -1, true, false, opts,
				   MS_NOSUID | MS_NODEV);
		if (r == 0 && hid.n > 1 && !strcmp(hid.v[1], "/dev/shm"))
			r = add_op(m, MOAT_MNT_TMPFS, "/dev/shm", -1, true, false, shm_opts,
				   MS_NOSUID | MS_NODEV | MS_NOEXEC);
	}
	for (size_t i = 0; i < hid.n && r == 0; i++)
		if (!strcmp(hid.v[i], "/run") || !strcmp(hid.v[i], "/var/run"))
			r = add_op(m, MOAT_MNT_TMPFS, hid.v[i], -1, true, false,
				   "mode=0755,size=1m", MS_NOSUID | MS_NODEV | MS_NOEXEC);
	for (size_t i = 0; i < hid.n && r == 0; i++)
		if (hid.cow[i])
			r = add_op(m, MOAT_MNT_OVERLAY, hid.v[i], -1, true, false, NULL, 0);
	for (size_t i = 0; i < nkeep && r == 0; i++) {
		bool inner = false;

		for (size_t j = 0; j < i && !inner; j++)
			inner = moat_path_within(keep[i].path, keep[j].path) &&
				keep[j].readonly == keep[i].readonly;
		if (inner)
			continue;
		/* the child clones the tree itself (open_tree) before the tmpfs
		 * hides it: a descriptor from our namespace cannot be mounted in
		 * the child's */
		if (stat(keep[i].path, &st) < 0) {
			r = -errno;
			moat_error_set(err, "cannot use '%s': %s", keep[i].path, strerror(-r));
			break;
		}
		r = add_op(m, MOAT_MNT_KEEP, keep[i].path, -1, S_ISDIR(st.st_mode),
			   keep[i].readonly, NULL, 0);
	}
	if (r < 0)
		goto fail;

masks:
	/* one listing each of the home directory and the workspace replaces a
	 * stat per candidate mask and protected name */
	listing_read(&hid.ls[hid.nls], p->home);
	if (hid.ls[hid.nls].ok)
		hid.nls++;
	listing_read(&hid.ls[hid.nls], p->workspace);
	if (hid.ls[hid.nls].ok)
		hid.nls++;
	mask_start = m->n;
	for (size_t i = 0; i < p->nmasks && r == 0; i++) {
		switch (p->masks[i].kind) {
		case MOAT_MASK_PATH:
			if (strcmp(p->masks[i].pattern, p->workspace) &&
			    moat_path_within(p->workspace, p->masks[i].pattern))
				r = mask_around(p, m, &hid, p->masks[i].pattern, err);
			else
				r = mask_one(p, m, &hid, p->masks[i].pattern, err);
			break;
		case MOAT_MASK_GLOB:
		case MOAT_MASK_WORKSPACE_NAME:
			break;
		}
	}
	if (r == 0)
		r = mask_globs(p, m, &hid, err);
	if (r == 0)
		r = mask_scan_hits(p, m, &hid, err);
	if (r < 0)
		goto fail;
	r = reveal_rules_under_masks(p, m, mask_start, err);
	if (r < 0)
		goto fail;
	/* SECURITY: without a mount namespace the carve needs every masked
	 * path: a rule below a masked directory is carved around the ones
	 * below it */
	if (p->mntns)
		prune_nested_masks(m, mask_start);
	masks_after_reveals(m, mask_start);
	r = watch_git_redirects(p, m);
	if (r < 0)
		goto fail;
	if (!p->mntns) {
		/* (no mounts to check: Landlock's rules are by inode) */
		moat_scan_check_free(m->check);
		m->check = NULL;
		r = guard_prepare(p, m, &hid);
		if (r < 0)
			goto fail;
		goto done;
	}
	/* the self-binds must come before the masks (a later bind would hide
	 * a mask): move them in front */
	{
		size_t before = m->n;

		r = protect_paths(p, m, &hid, err);
		if (r < 0)
			goto fail;
		/* protect_paths appended SELF_BINDs then RO_BINDs; rotate the
		 * SELF_BINDs to mask_start so they precede the masks */
		for (size_t i = before; i < m->n; i++) {
			if (m->ops[i].kind != MOAT_MNT_SELF_BIND)
				continue;
			struct moat_mount_op op = m->ops[i];

			memmove(&m->ops[mask_start + 1], &m->ops[mask_start],
				(i - mask_start) * sizeof(op));
			m->ops[mask_start++] = op;
		}
	}
	if (p->private_pts && stat("/dev/pts", &st) == 0 && S_ISDIR(st.st_mode)) {
		r = add_op(m, MOAT_MNT_DEVPTS, "/dev/pts", -1, true, false,
			   "newinstance,ptmxmode=0666,mode=0620", MS_NOSUID | MS_NOEXEC);
		/* a /dev/ptmx node (not the "pts/ptmx" link) would open the host's */
		if (r == 0 && lstat("/dev/ptmx", &st) == 0 && S_ISCHR(st.st_mode))
			r = add_op(m, MOAT_MNT_PTMX, "/dev/ptmx", -1, false, false, NULL, 0);
	}
	if (r == 0 && p->fresh_proc)
		r = add_op(m, MOAT_MNT_PROC, "/proc", -1, true, false, NULL,
			   MS_NOSUID | MS_NODEV | MS_NOEXEC);
	if (r < 0)
		goto fail;
	/* what the child checks once its mounts are made: the directories the
	 * scan relied on that stay visible */
	moat_scan_check_cover(m->check, m);
done:
	for (size_t i = 0; i < nkeep; i++)
		free(keep[i].path);
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(hid.ls); i++)
		listing_release(&hid.ls[i]);
	return 0;
fail:
	if (!err->msg[0])
		moat_error_set(err, "cannot prepare the mounts: %s",
			       r == -E2BIG ? "too many mounts" : strerror(-r));
	for (size_t i = 0; i < nkeep; i++)
		free(keep[i].path);
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(hid.ls); i++)
		listing_release(&hid.ls[i]);
	moat_mounts_release(m);
	return r;
}

static const char *kind_name(enum moat_mount_kind k)
{
	switch (k) {
	case MOAT_MNT_TMPFS:
		return "tmpfs";
	case MOAT_MNT_KEEP:
		return "keep";
	case MOAT_MNT_SELF_BIND:
		return "pin";
	case MOAT_MNT_MASK_DIR:
		return "mask-dir";
	case MOAT_MNT_MASK_FILE:
		return "mask-file";
	case MOAT_MNT_RO_BIND:
		return "read-only";
	case MOAT_MNT_PROC:
		return "proc";
	case MOAT_MNT_DEVPTS:
		return "devpts";
	case MOAT_MNT_PTMX:
		return "ptmx";
	case MOAT_MNT_OVERLAY:
		return "home-copy-on-write";
	case MOAT_MNT_STASH:
		return "stash";
	case MOAT_MNT_WRITABLE:
		return "writable";
	case MOAT_MNT_REVEAL:
		return "reveal";
	}
	return "?";
}

static bool is_standin(int dfd, const char *leaf);

/* A session holding the workspace's shared lock for its whole life: no
 * run can take it exclusively, so the empty stand-ins its shell calls
 * make stay from one call to the next instead of being made and removed
 * by each (on ext4 with discard, about 0.4 ms a call), and are swept when
 * the session ends (moat_ns_standins_sweep). -1 when there is no lock. */
int moat_ns_standins_hold(const char *ws)
{
	struct moat_mounts m;

	memset(&m, 0, sizeof(m));
	m.ws_lock_fd = -1;
	ws_lock_shared(ws, &m);
	return m.ws_locked ? m.ws_lock_fd : -1;
}

void moat_ns_standins_sweep(const struct moat_plan *p)
{
	struct moat_mounts m;
	int lfd;

	if (!p || !p->protect.n)
		return;
	lfd = ws_lock_open(p->workspace);
	if (lfd < 0)
		return;
	/* runs still going hold it shared: the last of them removes them */
	if (flock(lfd, LOCK_EX | LOCK_NB) < 0) {
		close(lfd);
		return;
	}
	memset(&m, 0, sizeof(m));
	m.ws_fd = open(p->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	m.has_ws_fd = m.ws_fd >= 0;
	if (!m.has_ws_fd) {
		close(lfd);
		return;
	}
	/* a protected name's stand-in is the name itself or the first of its
	 * directories that was missing: every prefix that is a marked stand-in
	 * goes, if still empty */
	for (size_t i = 0; i < p->protect.n; i++) {
		const char *name = p->protect.v[i];
		char pre[PATH_MAX];

		for (const char *c = name;; c++) {
			if (*c != '/' && *c)
				continue;
			if ((size_t)(c - name) < sizeof(pre) && c > name) {
				const char *leaf = NULL;
				int dfd;

				memcpy(pre, name, (size_t)(c - name));
				pre[c - name] = '\0';
				dfd = open_parent_nofollow(&m, p->workspace, pre, &leaf);
				if (dfd >= 0) {
					if (is_standin(dfd, leaf))
						(void)unlinkat(dfd, leaf, AT_REMOVEDIR);
					close(dfd);
				}
			}
			if (!*c)
				break;
		}
	}
	/* and marked stand-ins of other runs that could not remove theirs
	 * while the session held the lock (another profile's --protect), at
	 * the top of the workspace and of .git */
	for (int pass = 0; pass < 2; pass++) {
		int dfd = pass == 0 ? openat(m.ws_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
				    : openat(m.ws_fd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		struct dirent *e;

		if (!d) {
			if (dfd >= 0)
				close(dfd);
			continue;
		}
		while ((e = readdir(d)))
			if (e->d_type == DT_DIR && strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
			    is_standin(dirfd(d), e->d_name))
				(void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
		closedir(d);
	}
	close(m.ws_fd);
	close(lfd); /* (the lock with it) */
}

/* The workspace-relative name of a placeholder op's target. */
static const char *placeholder_name(const struct moat_plan *p, const struct moat_mount_op *op)
{
	size_t n = strlen(p->workspace);

	if (strncmp(op->target, p->workspace, n) || op->target[n] != '/')
		return NULL;
	return op->target + n + 1;
}

/* Open the directory that holds workspace/NAME, component by component,
 * never following a symlink (a planted .git -> /etc must not make us
 * create /etc/hooks). Returns an O_PATH descriptor, or -errno; *leaf is
 * set to the last component. */
static int open_parent_nofollow(const struct moat_mounts *m, const char *ws, const char *name,
				const char **leaf)
{
	const char *sl = strchr(name, '/');
	int wfd, pfd;
	char comp[NAME_MAX + 1];

	/* SECURITY: the workspace as it was opened before the run, never its
	 * path again: a command that can write the workspace's parent (a --rw
	 * above it) could swap the path for a link to the home directory, and
	 * the set-aside renames would then land there */
	if (m->has_ws_fd)
		wfd = openat(m->ws_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else
		wfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (wfd < 0)
		return -errno;
	/* one component at a time, none followed if it is a link */
	while (sl) {
		if ((size_t)(sl - name) > NAME_MAX || sl == name) {
			close(wfd);
			return -EINVAL;
		}
		memcpy(comp, name, (size_t)(sl - name));
		comp[sl - name] = '\0';
		pfd = openat(wfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(wfd);
		if (pfd < 0)
			return -errno;
		wfd = pfd;
		name = sl + 1;
		sl = strchr(name, '/');
	}
	*leaf = name;
	return wfd;
}

/* A moat killed between making a stand-in under its temporary name and
 * renaming it leaves an empty ".moat-standin.PID.N": removed (if still
 * empty) once that PID is gone. */
static void remove_stale_temps(int pfd)
{
	int fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, ".moat-standin.", 14))
			continue;
		pid = strtol(e->d_name + 14, &end, 10);
		if (pid <= 0 || *end != '.' || pid == getpid() || kill((pid_t)pid, 0) == 0 ||
		    errno != ESRCH)
			continue;
		(void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* The directory holding the placeholder name (below the workspace), as
 * the scan's check names it; false when it is not one level down or at
 * the top. */
static bool placeholder_parent(const char *name, char *out, size_t outsz)
{
	const char *sl = strchr(name, '/');
	size_t n = sl ? (size_t)(sl - name) : 0;

	if (n >= outsz || (sl && strchr(sl + 1, '/')))
		return false;
	memcpy(out, name, n);
	out[n] = '\0';
	return true;
}

/* Before (retake false) or after (true) the stand-ins are made: the
 * directories they are made in are still as the scan saw them, and then
 * their times with moat's own changes in them (scancheck.c). -ESTALE. */
static int placeholders_check(const struct moat_plan *p, struct moat_mounts *m, bool retake)
{
	for (size_t i = 0; m->check && i < m->n; i++) {
		const struct moat_mount_op *op = &m->ops[i];
		const char *name = op->placeholder ? placeholder_name(p, op) : NULL, *leaf = NULL;
		char rel[NAME_MAX + 1];
		int dfd, r = 0;

		if (!name || (retake ? !op->created : op->created))
			continue;
		if (!placeholder_parent(name, rel, sizeof(rel)))
			return -ESTALE;
		dfd = open_parent_nofollow(m, p->workspace, name, &leaf);
		if (dfd < 0)
			continue; /* (said by the caller) */
		if (retake)
			moat_scan_check_retake(m->check, rel, dfd);
		else
			r = moat_scan_check_unchanged_at(m->check, rel, dfd);
		close(dfd);
		if (r < 0)
			return r;
	}
	return 0;
}

int moat_ns_make_placeholders(const struct moat_plan *p, struct moat_mounts *m,
			      struct moat_error *err)
{
	bool swept_top = false, swept_git = false;

	if (placeholders_check(p, m, false) < 0) {
		moat_error_set(err, "%s (before moat's stand-ins were made in it)", p->workspace);
		return -ESTALE;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct moat_mount_op *op = &m->ops[i];
		const char *name, *leaf = NULL;
		int dfd, r = 0;

		if (!op->placeholder || op->created)
			continue;
		name = placeholder_name(p, op);
		if (!name)
			continue;
		dfd = open_parent_nofollow(m, p->workspace, name, &leaf);
		if (dfd >= 0 && (leaf == name ? !swept_top : !swept_git)) {
			remove_stale_temps(dfd);
			if (leaf == name)
				swept_top = true;
			else
				swept_git = true;
		}
		if (dfd < 0) {
			r = dfd;
		} else {
			/* made under a name of its own, marked, then renamed into
			 * place: a moat killed in between leaves no unmarked
			 * empty directory that no later run would remove */
			char tmp[64];

			snprintf(tmp, sizeof(tmp), ".moat-standin.%d.%zu", (int)getpid(), i);
			if (mkdirat(dfd, tmp, 0755) == 0) {
				int fd = openat(dfd, tmp,
						O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

				/* marked, so that whichever run ends last removes
				 * it (best effort: a filesystem without user
				 * xattrs leaves it to this run) */
				if (fd >= 0) {
					(void)fsetxattr(fd, STANDIN_XATTR, "1", 1, 0);
					close(fd);
				}
				if (moat_renameat2(dfd, tmp, dfd, leaf, RENAME_NOREPLACE) == 0) {
					op->created = true;
				} else {
					if (errno != EEXIST)
						r = -errno;
					(void)unlinkat(dfd, tmp, AT_REMOVEDIR);
				}
			} else {
				r = -errno;
			}
			close(dfd);
		}
		if (r < 0) {
			/* SECURITY: without it the name could be created inside:
			 * the run does not start */
			moat_error_set(
			    err,
			    "cannot create the protected directory '%s' empty for the run "
			    "(so it stays read-only): %s",
			    op->target, strerror(-r));
			moat_ns_remove_placeholders(p, m, NULL);
			return r;
		}
	}
	placeholders_check(p, m, true);
	/* the stand-ins' identities, ours or another run's: replaced during
	 * the run, moat_ns_quarantine looks at the entry in their place */
	for (size_t i = 0; i < m->n; i++) {
		struct moat_mount_op *op = &m->ops[i];
		const char *name = op->placeholder ? placeholder_name(p, op) : NULL, *leaf = NULL;
		struct stat st;
		int dfd;

		if (!name || (dfd = open_parent_nofollow(m, p->workspace, name, &leaf)) < 0)
			continue;
		if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
			op->dev = st.st_dev;
			op->ino = st.st_ino;
			op->watch = true;
		}
		close(dfd);
	}
	return 0;
}

/* Is workspace/NAME (below dfd as leaf) an empty stand-in some run made? */
static bool is_standin(int dfd, const char *leaf)
{
	int fd = openat(dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char v[4];
	bool yes;

	if (fd < 0)
		return false;
	yes = fgetxattr(fd, STANDIN_XATTR, v, sizeof(v)) == 1 && v[0] == '1';
	close(fd);
	return yes;
}

void moat_ns_remove_placeholders(const struct moat_plan *p, struct moat_mounts *m, int *ns_hold)
{
	bool any = false;

	/* ours, and stand-ins of runs that ended while we ran (marked) */
	for (size_t i = 0; i < m->n; i++) {
		struct moat_mount_op *op = &m->ops[i];
		const char *name, *leaf = NULL;
		int dfd;

		if (op->kind == MOAT_MNT_RO_BIND && op->is_dir && !op->created && m->ws_locked &&
		    (name = placeholder_name(p, op)) && (protect_is_dir(name) || op->standin)) {
			dfd = open_parent_nofollow(m, p->workspace, name, &leaf);
			if (dfd >= 0) {
				op->created = is_standin(dfd, leaf);
				close(dfd);
			}
		}
		any = any || op->created;
	}
	if (!any)
		return;
	/* SECURITY: another run in this workspace may have found the stand-in
	 * and mounted it read-only: removing it would take that mount away
	 * (and let that command create the name). Only the last run removes;
	 * otherwise the empty directories stay. */
	if (!m->ws_locked || flock(m->ws_lock_fd, LOCK_EX | LOCK_NB) < 0) {
		for (size_t i = 0; i < m->n; i++)
			if (m->ops[i].created) /* (a write only where needed: the
						* pages may be shared copy-on-write) */
				m->ops[i].created = false;
		return;
	}
	/* a directory removed while it is a mount point in the sandbox's
	 * namespace, held open, would be unmounted there (an RCU grace period
	 * each): the namespace goes first */
	if (ns_hold && *ns_hold >= 0) {
		close(*ns_hold);
		*ns_hold = -1;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct moat_mount_op *op = &m->ops[i];
		const char *name, *leaf = NULL;
		int dfd;

		if (!op->created)
			continue;
		op->created = false;
		name = placeholder_name(p, op);
		if (!name)
			continue;
		dfd = open_parent_nofollow(m, p->workspace, name, &leaf);
		if (dfd < 0)
			continue;
		/* only if still empty: someone outside may have used it meanwhile */
		(void)unlinkat(dfd, leaf, AT_REMOVEDIR);
		close(dfd);
	}
}

/* A .git/hooks that did not exist and does now (a new repository): git
 * init fills it with *.sample files, which git never runs; anything else in
 * it is a hook written inside the sandbox, set aside. */
static void new_hooks_check(int pfd, const char *leaf, char *out, size_t outsz)
{
	int dfd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;
	size_t budget = 4096;

	if (dfd < 0)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (!budget--) {
			/* too many to look at: the whole directory goes */
			closedir(d);
			if (set_aside(pfd, leaf) == 0)
				append_name(out, outsz, ".git/hooks",
					    " (too many entries to check)");
			return;
		}

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    (n > 7 && !strcmp(e->d_name + n - 7, ".sample")) ||
		    strstr(e->d_name, ".moat-quarantined"))
			continue;
		if (set_aside(dirfd(d), e->d_name) == 0)
			append_name(out, outsz, ".git/hooks/", e->d_name);
	}
	closedir(d);
}

static bool link_text_is(int dfd, const char *leaf, const char *want)
{
	char text[PATH_MAX];
	ssize_t n = readlinkat(dfd, leaf, text, sizeof(text) - 1);

	if (n < 0)
		return false;
	text[n] = '\0';
	return !strcmp(text, want);
}

/* Nested repositories (a work tree below the workspace with a .git of its
 * own) that the run made or changed, looked for when it changed the index
 * (a gitlink there makes the user's next `git status` run git inside them):
 * a .git/config written during the run that makes git run a program is set
 * aside; a .git file or link written during the run is set aside unless it
 * is git's own redirect into the workspace's .git/modules (whose configs
 * the submodule walk checks). ctimes cannot be set back by the command. */
#define NESTED_ENTRIES 200000
#define NESTED_DEPTH 32

struct nested {
	const struct moat_plan *p;
	int wsfd;
	long long since;
	size_t entries;
	bool cut;
	char *out;
	size_t outsz;
	char rel[PATH_MAX];
};

/* Is the "gitdir: X" file dfd/leaf git's redirect into the workspace's own
 * .git/modules (wsfd: the workspace)? X is resolved as git resolves it,
 * physically from the file's directory, with no symlink anywhere on the
 * way (a link would let it lead elsewhere), and must land in a directory
 * below .git/modules. */
static bool gitdir_into_modules(int wsfd, int dfd, const char *leaf)
{
	char buf[4096], self[64], real[PATH_MAX], mods[PATH_MAX];
	int fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), gd, md;
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1, rl, ml;
	struct open_how how;
	char *t, *end;

	if (fd >= 0)
		close(fd);
	if (n <= 8 || (size_t)n == sizeof(buf) - 1)
		return false;
	buf[n] = '\0';
	if (strncmp(buf, "gitdir: ", 8))
		return false;
	t = buf + 8;
	end = strchr(t, '\n');
	if (end)
		*end = '\0';
	if (!*t || *t == '/')
		return false; /* git writes it relative */
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	gd = (int)syscall(SYS_openat2, dfd, t, &how, sizeof(how));
	if (gd < 0)
		return false;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", gd);
	rl = readlink(self, real, sizeof(real) - 1);
	close(gd);
	md = openat(wsfd, ".git/modules", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (md < 0 || rl <= 0) {
		if (md >= 0)
			close(md);
		return false;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", md);
	ml = readlink(self, mods, sizeof(mods) - 1);
	close(md);
	if (ml <= 0)
		return false;
	real[rl] = mods[ml] = '\0';
	return moat_path_within(real, mods) && strcmp(real, mods);
}

/* A nested repository's hooks (g: its .git) written during the run: git
 * runs them at the next commit, checkout or merge there, and an editor that
 * opens the repository runs git in it. Each hook file (git ignores the
 * *.sample ones `git init` writes) is set aside, and a hooks directory that
 * is not a plain directory made during the run goes whole. */
static void nested_hooks_check(struct nested *n, int g, const char *rel)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	int h;

	if (fstatat(g, "hooks", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		if (ctime_ns(&st) >= n->since && set_aside(g, "hooks") == 0)
			append_name(n->out, n->outsz, rel, "/.git/hooks (a nested repository's)");
		return;
	}
	h = openat(g, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (h < 0 || !(d = fdopendir(h))) {
		if (h >= 0)
			close(h);
		return;
	}
	while ((e = readdir(d))) {
		size_t nl = strlen(e->d_name);
		char what[NAME_MAX + 64];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    (nl > 7 && !strcmp(e->d_name + nl - 7, ".sample")) ||
		    strstr(e->d_name, ".moat-quarantined"))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    ctime_ns(&st) < n->since || set_aside(dirfd(d), e->d_name) < 0)
			continue;
		snprintf(what, sizeof(what), "/.git/hooks/%s (a nested repository's)", e->d_name);
		append_name(n->out, n->outsz, rel, what);
	}
	closedir(d);
}

/* A nested work tree's .git (the entry dfd/".git", rel its path) after the
 * run: a config written during it that makes git run a program, redirect
 * files (commondir, config.worktree) made during it, and a .git file or
 * link made during it that sends git anywhere but .git/modules are set
 * aside. */
static void nested_git_check(struct nested *n, int dfd, const char *rel)
{
	struct stat st;

	if (fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		int g = openat(dfd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat cst;
		char why[160];

		if (g < 0)
			return;
		if (fstatat(g, "config", &cst, AT_SYMLINK_NOFOLLOW) == 0 &&
		    ctime_ns(&cst) >= n->since &&
		    (!S_ISREG(cst.st_mode) ||
		     gitconfig_suspect(g, "config", n->p->workspace, why, sizeof(why))) &&
		    set_aside(g, "config") == 0)
			append_name(n->out, n->outsz, rel, "/.git/config (a nested repository's)");
		nested_hooks_check(n, g, rel);
		/* the same redirect files as the workspace's own (".git/NAME") */
		for (size_t i = 0; git_redirects[i]; i++) {
			const char *leaf = git_redirects[i] + 5;

			if (fstatat(g, leaf, &cst, AT_SYMLINK_NOFOLLOW) == 0 &&
			    ctime_ns(&cst) >= n->since && set_aside(g, leaf) == 0) {
				char what[64];

				snprintf(what, sizeof(what), "/%s (a nested repository's)",
					 git_redirects[i]);
				append_name(n->out, n->outsz, rel, what);
			}
		}
		close(g);
	} else if (ctime_ns(&st) >= n->since &&
		   !(S_ISREG(st.st_mode) && gitdir_into_modules(n->wsfd, dfd, ".git")) &&
		   set_aside(dfd, ".git") == 0) {
		append_name(n->out, n->outsz, rel, "/.git (a file or link sending git elsewhere)");
	}
}

static void nested_walk(struct nested *n, int dfd, size_t rlen, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;

	if (!d) {
		close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		size_t nl = strlen(e->d_name);
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (++n->entries > NESTED_ENTRIES) {
			n->cut = true;
			break;
		}
		if (rlen + nl + 2 >= sizeof(n->rel))
			continue;
		if (rlen)
			n->rel[rlen] = '/';
		memcpy(n->rel + rlen + (rlen ? 1 : 0), e->d_name, nl + 1);
		if (!strcmp(e->d_name, ".git")) {
			if (depth > 0) {
				n->rel[rlen] = '\0';
				nested_git_check(n, dirfd(d), n->rel);
			}
		} else if ((e->d_type == DT_DIR || e->d_type == DT_UNKNOWN) &&
			   fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			   S_ISDIR(st.st_mode)) {
			if (depth + 1 >= NESTED_DEPTH) {
				n->cut = true;
			} else {
				int sub = openat(dirfd(d), e->d_name,
						 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

				if (sub >= 0)
					nested_walk(n, sub, rlen + (rlen ? 1 : 0) + nl, depth + 1);
			}
		}
		n->rel[rlen] = '\0';
	}
	closedir(d);
}

#define INDEX_MAX_BYTES (64u << 20)
#define INDEX_MAX_GITLINKS 4096

/* The gitlinks (mode 160000) of a git index (versions 2 to 4), with hashes
 * of hlen bytes; fn gets each path. False when buf is not such an index. */
static bool index_gitlinks(const unsigned char *buf, size_t n, size_t hlen,
			   void (*fn)(const char *path, void *ud), void *ud)
{
	char prev[PATH_MAX] = "";
	size_t off = 12, plen = 0;
	uint32_t ver, count;

	if (n < 12 || memcmp(buf, "DIRC", 4))
		return false;
	ver = (uint32_t)buf[4] << 24 | (uint32_t)buf[5] << 16 | (uint32_t)buf[6] << 8 | buf[7];
	count = (uint32_t)buf[8] << 24 | (uint32_t)buf[9] << 16 | (uint32_t)buf[10] << 8 | buf[11];
	if (ver < 2 || ver > 4)
		return false;
	for (uint32_t e = 0, links = 0; e < count; e++) {
		size_t start = off, fixed = 40 + hlen + 2, flen;
		uint32_t mode;
		uint16_t flags;
		const unsigned char *name;
		const void *nul;

		if (off + fixed > n)
			return false;
		mode = (uint32_t)buf[off + 24] << 24 | (uint32_t)buf[off + 25] << 16 |
		       (uint32_t)buf[off + 26] << 8 | buf[off + 27];
		flags = (uint16_t)(buf[off + 40 + hlen] << 8 | buf[off + 40 + hlen + 1]);
		off += fixed;
		if (flags & 0x4000) { /* extended flags (version 3 and up) */
			if (ver < 3 || off + 2 > n)
				return false;
			off += 2;
		}
		if (ver == 4) {
			size_t strip = 0;
			int shift = 0;

			/* git's offset varint: 7 bits a byte, +1 per continuation */
			for (;;) {
				if (off >= n || shift > 28)
					return false;
				strip = (strip << 7) | (buf[off] & 0x7f);
				if (!(buf[off++] & 0x80))
					break;
				strip++;
				shift += 7;
			}
			if (strip > plen)
				return false;
			plen -= strip;
		} else {
			plen = 0;
		}
		name = buf + off;
		nul = memchr(name, 0, n - off);
		if (!nul)
			return false;
		flen = (size_t)((const unsigned char *)nul - name);
		if (plen + flen >= sizeof(prev))
			return false;
		memcpy(prev + plen, name, flen);
		plen += flen;
		prev[plen] = '\0';
		/* the entry's own length field (capped at 0xfff) must agree: a
		 * wrong hash length misreads it */
		if ((flags & 0xfff) != 0xfff ? (size_t)(flags & 0xfff) != plen : plen < 0xfff)
			return false;
		off += flen + 1;
		if (ver < 4) /* padded with NULs to a multiple of 8 */
			off = start + ((off - start + 7) & ~(size_t)7);
		if (off > n)
			return false;
		if ((mode & 0170000) == 0160000 && links++ < INDEX_MAX_GITLINKS)
			fn(prev, ud);
	}
	/* then the extensions (signature, length) up to the trailing hash */
	while (off + hlen < n) {
		uint32_t len;

		if (off + 8 + hlen > n)
			return false;
		len = (uint32_t)buf[off + 4] << 24 | (uint32_t)buf[off + 5] << 16 |
		      (uint32_t)buf[off + 6] << 8 | buf[off + 7];
		if (len > n - off - 8 - hlen)
			return false;
		off += 8 + (size_t)len;
	}
	return off + hlen == n;
}

struct gitlinks {
	char **v;
	size_t n;
};

static void gitlink_add(const char *path, void *ud)
{
	struct gitlinks *g = ud;
	char **nv = realloc(g->v, (g->n + 1) * sizeof(*nv));

	if (!nv)
		return;
	g->v = nv;
	nv[g->n] = moat_strdup(path);
	if (nv[g->n])
		g->n++;
}

/* The workspace's index read whole (bounded); NULL when there is none. */
static unsigned char *read_index(int wsfd, size_t *ret_n, bool *too_big)
{
	int fd = openat(wsfd, ".git/index", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	unsigned char *buf;
	size_t got = 0;

	*too_big = false;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return NULL;
	}
	if ((unsigned long long)st.st_size > INDEX_MAX_BYTES) {
		*too_big = true;
		close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size);
	while (buf && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	*ret_n = got;
	return buf;
}

/* The directories right below the workspace that hold a .git: each is
 * checked as a nested repository (nested_git_check). */
#define NESTED_TOP_ENTRIES 100000

static void nested_top_check(struct nested *n)
{
	int dfd = openat(n->wsfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t top = 0;
	struct dirent *e;
	DIR *d;

	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		char path[NAME_MAX + 8];
		struct stat st;
		int sub;

		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || !strcmp(e->d_name, "..") || !strcmp(e->d_name, ".git")))
			continue;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN && e->d_type != DT_LNK)
			continue;
		/* a budget of its own (the walk may have spent the shared one) */
		if (++top > NESTED_TOP_ENTRIES) {
			n->cut = true;
			break;
		}
		/* a cheap look first; then the directory itself. A link is
		 * followed only to a directory inside the workspace (an editor
		 * opening the link's name runs git in its target) */
		snprintf(path, sizeof(path), "%s/.git", e->d_name);
		if (fstatat(dirfd(d), path, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (e->d_type == DT_LNK) {
			/* SECURITY: resolved inside the workspace only, never
			 * opened outside it (an automounter, a hung NFS mount):
			 * an absolute target must name the workspace's own path */
			char lt[PATH_MAX];
			const char *rel;
			struct open_how how;
			size_t wl = strlen(n->p->workspace);
			ssize_t ll = readlinkat(dirfd(d), e->d_name, lt, sizeof(lt) - 1);
			struct stat sst, wst;

			if (ll <= 0)
				continue;
			lt[ll] = '\0';
			rel = lt;
			if (lt[0] == '/') {
				if (strncmp(lt, n->p->workspace, wl) || (lt[wl] != '/' && lt[wl]))
					continue;
				rel = lt[wl] ? lt + wl + 1 : ".";
			}
			memset(&how, 0, sizeof(how));
			how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
			how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
			sub = (int)syscall(SYS_openat2, n->wsfd, rel, &how, sizeof(how));
			/* (a link to the workspace itself: its own .git is not nested) */
			if (sub >= 0 && fstat(sub, &sst) == 0 && fstat(n->wsfd, &wst) == 0 &&
			    sst.st_dev == wst.st_dev && sst.st_ino == wst.st_ino) {
				close(sub);
				sub = -1;
			}
		} else {
			sub = openat(dirfd(d), e->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (sub < 0)
			continue;
		nested_git_check(n, sub, e->d_name);
		close(sub);
	}
	closedir(d);
}

/* Nested repositories git would recurse into: every gitlink of the index
 * (after every run: a config changed in a later run than its gitlink's is
 * caught too), and, when the run changed the index, a walk of the
 * workspace for nested .git entries (an embedded repository is added as a
 * gitlink; the walk also catches one the index parse could not read). */
static void nested_check(const struct moat_plan *p, struct moat_mounts *m, char *out, size_t outsz,
			 char *created, size_t createdsz)
{
	struct nested *n;
	struct stat st;
	struct gitlinks gl = {NULL, 0};
	unsigned char *idx;
	size_t idxn = 0;
	bool too_big, parsed = false, changed, has_index;
	int wsfd, dfd;

	wsfd = m->has_ws_fd ? openat(m->ws_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
			    : open(p->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (wsfd < 0)
		return;
	/* without an index git recurses nowhere, but an editor opening the
	 * workspace still finds the repositories right below it */
	has_index = fstatat(wsfd, ".git/index", &st, AT_SYMLINK_NOFOLLOW) == 0;
	changed = has_index && ctime_ns(&st) != m->index_ctime_ns;
	n = calloc(1, sizeof(*n));
	if (!n) {
		close(wsfd);
		return;
	}
	n->p = p;
	n->wsfd = wsfd;
	/* the clock's tick: a file changed in the same tick as the start counts */
	n->since = m->run_start_ns - 20000000LL;
	n->out = out;
	n->outsz = outsz;
	idx = has_index ? read_index(wsfd, &idxn, &too_big) : NULL;
	too_big = has_index && too_big;
	if (idx) {
		parsed = index_gitlinks(idx, idxn, 20, gitlink_add, &gl);
		if (!parsed) { /* a SHA-256 repository: what the first pass found goes */
			for (size_t i = 0; i < gl.n; i++)
				free(gl.v[i]);
			gl.n = 0;
			parsed = index_gitlinks(idx, idxn, 32, gitlink_add, &gl);
		}
	}
	free(idx);
	for (size_t i = 0; i < gl.n; i++) {
		const char *leaf = NULL;
		char path[PATH_MAX];
		int pfd;

		/* the gitlink's work tree itself (its .git inside it) */
		if ((size_t)snprintf(path, sizeof(path), "%s/.git", gl.v[i]) < sizeof(path) &&
		    (pfd = open_parent_nofollow(m, p->workspace, path, &leaf)) >= 0) {
			nested_git_check(n, pfd, gl.v[i]);
			close(pfd);
		}
		free(gl.v[i]);
	}
	free(gl.v);
	/* the repositories right below the workspace, every run, first (a
	 * budget of their own): editors (VS Code's git.repositoryScanMaxDepth
	 * is 1) open them and run git there on their own, a gitlink or not
	 * (and through a link there, which the walk does not follow) */
	nested_top_check(n);
	if (changed || (!parsed && (idx || too_big))) {
		dfd = openat(wsfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0)
			nested_walk(n, dfd, 0, 0);
	}
	if (n->cut)
		append_name(created, createdsz, "nested repositories",
			    " (not all checked: the workspace is too large or too deep)");
	close(wsfd);
	free(n);
}

/* A protected name (dfd/leaf) the run created: a new .git/hooks and
 * .git/config (git init inside) are judged by what they hold, anything
 * else is set aside; named in out (set aside, with suffix) or created. */
static void judge_created(const struct moat_plan *p, int dfd, const char *leaf, const char *name,
			  bool is_dir, const char *suffix, char *out, size_t outsz, char *created,
			  size_t createdsz)
{
	char why[160];

	if (!strcmp(name, ".git/hooks") && is_dir) {
		new_hooks_check(dfd, leaf, out, outsz);
		append_name(created, createdsz, name, NULL);
	} else if (!strcmp(name, ".git/config") &&
		   !gitconfig_suspect(dfd, leaf, p->workspace, why, sizeof(why))) {
		append_name(created, createdsz, name, NULL);
	} else if (set_aside(dfd, leaf) == 0) {
		append_name(out, outsz, name, suffix);
	} else {
		append_name(created, createdsz, name, NULL);
	}
}

/* The directory dfd/leaf for reading, its last component not followed;
 * NULL when it cannot be opened (or is not a directory). */
static DIR *opendir_at(int dfd, const char *leaf)
{
	int fd = openat(dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d && fd >= 0)
		close(fd);
	return d;
}

/* Is dfd/leaf a directory without entries? */
static bool dir_empty(int dfd, const char *leaf)
{
	DIR *d = opendir_at(dfd, leaf);
	struct dirent *e;
	bool empty = true;

	if (!d)
		return false;
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* Is the entry dev/ino among leaf's set-aside names in dfd
 * (leaf.moat-quarantined...)? */
static bool set_aside_now(int dfd, const char *leaf, dev_t dev, ino_t ino)
{
	size_t ll = strlen(leaf);
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	bool found = false;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (!found && (e = readdir(d))) {
		struct stat st;

		if (strncmp(e->d_name, leaf, ll) || strncmp(e->d_name + ll, ".moat-quarantined", 17))
			continue;
		found = fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			st.st_dev == dev && st.st_ino == ino;
	}
	closedir(d);
	return found;
}

/* SECURITY: concurrent runs in one workspace. A protected entry this run
 * bound read-only is moved away on the host when another run's post-run
 * work sets it aside (that run had created it), and the read-only mount
 * goes along with it: in this run the name is free again, and what the
 * command makes there was, until now, never looked at (it "existed" when
 * the run started). Such a new entry, where the old one now sits under a
 * set-aside name, is judged like a protected name the run created. An
 * entry replaced by anything else (the user's editor saving a file) is
 * left alone. */
static void replaced_check(const struct moat_plan *p, struct moat_mounts *m, char *out,
			   size_t outsz, char *created, size_t createdsz)
{
	size_t wl = strlen(p->workspace);

	for (size_t i = 0; i < m->n; i++) {
		const struct moat_mount_op *op = &m->ops[i];
		const char *name, *leaf = NULL;
		struct stat st;
		int dfd;

		if (op->kind != MOAT_MNT_RO_BIND || !op->watch ||
		    strncmp(op->target, p->workspace, wl) || op->target[wl] != '/')
			continue;
		name = op->target + wl + 1;
		dfd = open_parent_nofollow(m, p->workspace, name, &leaf);
		if (dfd < 0)
			continue;
		if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    (st.st_dev == op->dev && st.st_ino == op->ino) ||
		    !set_aside_now(dfd, leaf, op->dev, op->ino)) {
			close(dfd);
			continue;
		}
		judge_created(p, dfd, leaf, name, S_ISDIR(st.st_mode),
			      " (made while another call had it set aside)", out, outsz, created,
			      createdsz);
		close(dfd);
	}
}

/* ---- protected names without a mount namespace: recorded, then put back ---- */

#define GUARD_MAX_ENTRIES 1024		  /* entries recorded in all */
#define GUARD_MAX_FILE (1024 * 1024)	  /* content kept per file */
#define GUARD_MAX_KEPT (16 * 1024 * 1024) /* content kept in all */
#define GUARD_MAX_DEPTH 8

/* The content of a regular file (at most GUARD_MAX_FILE) or a link's text,
 * or NULL. Never blocks on a FIFO, never follows a link. */
static char *guard_read(struct moat_mounts *m, int dfd, const char *leaf, const struct stat *st,
			size_t *len)
{
	char *buf;
	size_t got = 0;
	int fd;

	*len = 0;
	if (S_ISLNK(st->st_mode)) {
		buf = malloc(PATH_MAX);
		if (!buf)
			return NULL;
		ssize_t n = readlinkat(dfd, leaf, buf, PATH_MAX - 1);

		if (n < 0) {
			free(buf);
			return NULL;
		}
		buf[n] = '\0';
		*len = (size_t)n;
		return buf;
	}
	if (!S_ISREG(st->st_mode) || st->st_size < 0 || st->st_size > GUARD_MAX_FILE ||
	    m->guard_kept + (size_t)st->st_size > GUARD_MAX_KEPT)
		return NULL;
	fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc((size_t)st->st_size + 1);
	while (buf && got < (size_t)st->st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st->st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf || got != (size_t)st->st_size) {
		free(buf);
		return NULL;
	}
	*len = got;
	m->guard_kept += got;
	return buf;
}

static int guard_add(struct moat_mounts *m, const char *rel, int dfd, const char *leaf,
		     const struct stat *st, bool over)
{
	struct moat_guard *nv, *g;

	if (m->nguard >= GUARD_MAX_ENTRIES)
		return -E2BIG;
	nv = realloc(m->guard, (m->nguard + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	m->guard = nv;
	g = &nv[m->nguard];
	memset(g, 0, sizeof(*g));
	g->rel = moat_strdup(rel);
	if (!g->rel)
		return -ENOMEM;
	g->dev = st->st_dev;
	g->ino = st->st_ino;
	g->ctime_ns = ctime_ns(st);
	g->mode = st->st_mode;
	g->over = over;
	if (!S_ISDIR(st->st_mode))
		g->data = guard_read(m, dfd, leaf, st, &g->len);
	m->nguard++;
	return 0;
}

/* How many entries below dfd/leaf (at most limit+1). */
static size_t guard_count(int dfd, const char *leaf, size_t limit, int depth)
{
	DIR *d = opendir_at(dfd, leaf);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while (n <= limit && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		if (e->d_type == DT_DIR && n <= limit)
			n += depth >= GUARD_MAX_DEPTH
				 ? limit + 1
				 : guard_count(dirfd(d), e->d_name, limit - n, depth + 1);
	}
	closedir(d);
	return n;
}

/* Record the entries below a protected directory, parents first. */
static int guard_walk(struct moat_mounts *m, int dfd, const char *leaf, const char *rel, int depth)
{
	DIR *d = opendir_at(dfd, leaf);
	struct dirent *e;
	int r = 0;

	if (!d)
		return 0;
	while (r == 0 && (e = readdir(d))) {
		char child[PATH_MAX];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    (size_t)snprintf(child, sizeof(child), "%s/%s", rel, e->d_name) >= sizeof(child) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		r = guard_add(m, child, dirfd(d), e->d_name, &st, false);
		if (r == 0 && S_ISDIR(st.st_mode) && depth < GUARD_MAX_DEPTH)
			r = guard_walk(m, dirfd(d), e->d_name, child, depth + 1);
	}
	closedir(d);
	return r;
}

static bool guard_has(const struct moat_mounts *m, const char *rel)
{
	for (size_t i = 0; i < m->nguard; i++)
		if (!strcmp(m->guard[i].rel, rel))
			return true;
	return false;
}

/* Record one protected name (below the workspace), or note it absent. */
static int guard_name(const struct moat_plan *p, struct moat_mounts *m, const struct hidden *hid,
		      const char *name)
{
	const char *leaf = NULL;
	char full[PATH_MAX];
	struct stat st;
	int dfd = -1, r = 0;

	if (guard_has(m, name))
		return 0; /* (a --ro path that is a protected name too) */
	/* most are absent: the workspace's listing says so without a walk */
	if ((size_t)snprintf(full, sizeof(full), "%s/%s", p->workspace, name) >= sizeof(full) ||
	    !listing_absent(hid->ls, hid->nls, full)) {
		/* SECURITY: its directories on the way, each compared whole
		 * (by identity): a .git moved away and replaced by a link to a
		 * planted copy would take .git/config and .git/hooks with it */
		for (const char *c = strchr(name, '/'); c; c = strchr(c + 1, '/')) {
			char anc[PATH_MAX];
			const char *aleaf = NULL;
			int adfd;

			if ((size_t)(c - name) >= sizeof(anc))
				break;
			memcpy(anc, name, (size_t)(c - name));
			anc[c - name] = '\0';
			if (guard_has(m, anc))
				continue;
			adfd = open_parent_nofollow(m, p->workspace, anc, &aleaf);
			if (adfd >= 0 && fstatat(adfd, aleaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISDIR(st.st_mode))
				r = guard_add(m, anc, adfd, aleaf, &st, true);
			if (adfd >= 0)
				close(adfd);
			if (r < 0)
				return r == -E2BIG ? 0 : r;
		}
		dfd = open_parent_nofollow(m, p->workspace, name, &leaf);
	}
	if (dfd >= 0 && fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		bool over = S_ISDIR(st.st_mode) &&
			    guard_count(dfd, leaf, GUARD_MAX_ENTRIES / 2, 1) > GUARD_MAX_ENTRIES / 2;
		size_t top = m->nguard;

		r = guard_add(m, name, dfd, leaf, &st, over);
		if (r == 0 && S_ISDIR(st.st_mode) && !over)
			r = guard_walk(m, dfd, leaf, name, 1);
		if (r == -E2BIG && top < m->nguard) {
			/* part of a directory is no record of it: only the
			 * directory itself is compared */
			while (m->nguard > top + 1) {
				m->nguard--;
				free(m->guard[m->nguard].rel);
				free(m->guard[m->nguard].data);
			}
			m->guard[top].over = over = true;
			r = 0;
		}
		if (over)
			append_name(m->guard_over, sizeof(m->guard_over), name, NULL);
	} else {
		/* absent (or below a directory that is): a name created during
		 * the run is judged after it, as with a mount namespace */
		r = add_missing(m, name);
	}
	if (dfd >= 0)
		close(dfd);
	if (r == -E2BIG) {
		/* the budget is spent: the rest compared by itself only */
		append_name(m->guard_over, sizeof(m->guard_over), name, NULL);
		r = 0;
	}
	return r;
}

/* The protected names, and the read-only paths inside the workspace
 * (--ro, a profile's), which without a mount namespace Landlock cannot make
 * read-only inside a writable tree. */
static int guard_prepare(const struct moat_plan *p, struct moat_mounts *m,
			 const struct hidden *hid)
{
	size_t wl = strlen(p->workspace);
	int r = 0;

	for (size_t i = 0; i < p->protect.n && r == 0; i++)
		r = guard_name(p, m, hid, p->protect.v[i]);
	for (size_t i = 0; i < p->nfs && r == 0; i++) {
		const struct moat_fs_rule *fr = &p->fs[i];

		if (!(fr->access & MOAT_FS_WRITE) && !strncmp(fr->path, p->workspace, wl) &&
		    fr->path[wl] == '/' && fr->path[wl + 1])
			r = guard_name(p, m, hid, fr->path + wl + 1);
	}
	return r;
}

/* Put the recorded entry back at dfd/leaf (which must not exist). */
static bool guard_restore(int dfd, const char *leaf, const struct moat_guard *g)
{
	if (S_ISDIR(g->mode))
		return mkdirat(dfd, leaf, g->mode & 07777) == 0;
	if (S_ISLNK(g->mode))
		return g->data && symlinkat(g->data, dfd, leaf) == 0;
	if (S_ISREG(g->mode) && g->data) {
		int fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				g->mode & 0777);
		size_t off = 0;

		if (fd < 0)
			return false;
		while (off < g->len) {
			ssize_t n = write(fd, g->data + off, g->len - off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		(void)fchmod(fd, g->mode & 07777);
		close(fd);
		return off == g->len;
	}
	return false;
}

/* New entries in a recorded directory: set aside (a new directory whole). */
static void guard_new(const struct moat_plan *p, struct moat_mounts *m, const struct moat_guard *g,
		      char *out, size_t outsz)
{
	const char *leaf = NULL;
	int pfd = open_parent_nofollow(m, p->workspace, g->rel, &leaf);
	DIR *d = pfd >= 0 ? opendir_at(pfd, leaf) : NULL;
	struct dirent *e;
	size_t budget = 4 * GUARD_MAX_ENTRIES;

	if (!d) {
		if (pfd >= 0)
			close(pfd);
		return;
	}
	while ((e = readdir(d))) {
		char child[PATH_MAX];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    strstr(e->d_name, ".moat-quarantined") ||
		    (size_t)snprintf(child, sizeof(child), "%s/%s", g->rel, e->d_name) >= sizeof(child))
			continue;
		if (!budget--) {
			/* made too large to look through: the whole directory
			 * goes, and the recorded one comes back */
			closedir(d);
			d = NULL;
			if (set_aside(pfd, leaf) == 0) {
				append_name(out, outsz, g->rel, " (too many entries to check)");
				(void)guard_restore(pfd, leaf, g);
			}
			break;
		}
		if (!guard_has(m, child) && set_aside(dirfd(d), e->d_name) == 0)
			append_name(out, outsz, child, " (created)");
	}
	if (d)
		closedir(d);
	close(pfd);
}

/* After the run (nothing of it left): every recorded entry changed,
 * replaced or removed is set aside and the original put back; .git/config
 * changed by git itself (a remote, a branch's upstream) stays unless it now
 * makes git run a program. */
static void guard_check(const struct moat_plan *p, struct moat_mounts *m, char *out, size_t outsz)
{
	for (size_t i = 0; i < m->nguard; i++) {
		const struct moat_guard *g = &m->guard[i];
		const char *leaf = NULL;
		char why[160];
		struct stat st;
		int dfd = open_parent_nofollow(m, p->workspace, g->rel, &leaf);

		if (dfd < 0)
			continue; /* its directory went: put back with it, or reported there */
		if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			/* (a directory compared whole cannot be made again: its
			 * content was not recorded) */
			if (!g->over && guard_restore(dfd, leaf, g))
				append_name(out, outsz, g->rel, " (removed; the original put back)");
			close(dfd);
			continue;
		}
		if (st.st_dev == g->dev && st.st_ino == g->ino &&
		    (st.st_mode & S_IFMT) == (g->mode & S_IFMT) &&
		    (S_ISDIR(st.st_mode) || ctime_ns(&st) == g->ctime_ns)) {
			/* a directory made unreadable would hide what is in it
			 * (from this check, not from the user later): its mode
			 * back first */
			if (S_ISDIR(st.st_mode) && (st.st_mode & 07777) != (g->mode & 07777) &&
			    fchmodat(dfd, leaf, g->mode & 07777, 0) == 0)
				append_name(out, outsz, g->rel, " (its mode put back)");
			close(dfd);
			continue; /* as it was (a directory's own entries are checked below) */
		}
		if (!strcmp(g->rel, ".git/config") && S_ISREG(st.st_mode) &&
		    !gitconfig_suspect(dfd, leaf, p->workspace, why, sizeof(why))) {
			close(dfd);
			continue;
		}
		if (set_aside(dfd, leaf) == 0) {
			bool back = !g->over && guard_restore(dfd, leaf, g);

			append_name(out, outsz, g->rel,
				    back ? " (changed; the original put back)"
				    : g->over ? " (replaced; the original is not where it was)"
					      : " (changed)");
		}
		close(dfd);
	}
	for (size_t i = 0; i < m->nguard; i++)
		if (S_ISDIR(m->guard[i].mode) && !m->guard[i].over)
			guard_new(p, m, &m->guard[i], out, outsz);
}

void moat_ns_quarantine(const struct moat_plan *p, struct moat_mounts *m, char *out, size_t outsz,
			char *created, size_t createdsz)
{
	/* one listing of the workspace answers for the names still absent
	 * (most of them: .git/commondir in a workspace without .git, a
	 * missing .mcp.json), instead of a descriptor walk each. Every
	 * process of the sandbox is gone: nothing of it can create one now */
	struct listing now;

	memset(&now, 0, sizeof(now));
	if ((m->nquarantine || m->nprotected_missing) && m->has_ws_fd)
		listing_read_at(&now, p->workspace, m->ws_fd);
	if (m->nested_watch)
		nested_check(p, m, out, outsz, created, createdsz);
	if (m->gitcfg_watch) {
		struct gitcfg_after a = {p, out, outsz};

		/* SECURITY: a tree of submodule directories too large or too
		 * deep to read through (made so on purpose, to hide a config
		 * past the bound) is set aside whole */
		if (!gitcfg_each(p, m, gitcfg_check, &a)) {
			const char *leaf = NULL;
			int dfd = open_parent_nofollow(m, p->workspace, ".git/modules", &leaf);

			if (dfd >= 0) {
				if (set_aside(dfd, leaf) == 0)
					append_name(out, outsz, ".git/modules",
						    " (too many or too deep to check)");
				close(dfd);
			}
		}
	}
	if (m->git_was_missing) {
		const char *leaf = NULL;
		struct stat st;
		int dfd = open_parent_nofollow(m, p->workspace, ".git", &leaf);

		if (dfd >= 0) {
			if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    !S_ISDIR(st.st_mode) && set_aside(dfd, leaf) == 0)
				append_name(out, outsz, ".git",
					    " (a file or link sending git elsewhere)");
			close(dfd);
		}
	}
	for (size_t i = 0; i < m->nquarantine; i++) {
		const char *leaf = NULL;
		char full[PATH_MAX];
		struct stat st;
		int dfd;

		if (now.ok &&
		    (size_t)snprintf(full, sizeof(full), "%s/%s", p->workspace, m->quarantine[i]) <
			sizeof(full) &&
		    listing_absent(&now, 1, full))
			continue;
		dfd = open_parent_nofollow(m, p->workspace, m->quarantine[i], &leaf);
		if (dfd < 0)
			continue;
		if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && set_aside(dfd, leaf) == 0)
			append_name(out, outsz, m->quarantine[i], NULL);
		close(dfd);
	}
	/* SECURITY: a protected name that was a symlink: removed or replaced
	 * inside, the new entry is set aside and the link put back; one that
	 * pointed nowhere and now leads to something (the command created the
	 * target through it) is set aside itself */
	for (size_t i = 0; i < m->nlinks; i++) {
		const struct moat_protected_link *l = &m->links[i];
		const char *leaf = NULL;
		struct stat st;
		int dfd = open_parent_nofollow(m, p->workspace, l->name, &leaf);

		if (dfd < 0)
			continue;
		if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (symlinkat(l->target, dfd, leaf) == 0)
				append_name(out, outsz, l->name,
					    " (removed; the link was put back)");
		} else if (st.st_dev != l->dev || st.st_ino != l->ino || !S_ISLNK(st.st_mode) ||
			   !link_text_is(dfd, leaf, l->target)) {
			/* (an inode number is reused at once: the type and text
			 * tell a new entry too) */
			if (set_aside(dfd, leaf) == 0) {
				append_name(out, outsz, l->name, " (replaced)");
				(void)symlinkat(l->target, dfd, leaf);
			}
		} else if (l->dangling && fstatat(dfd, leaf, &st, 0) == 0 &&
			   set_aside(dfd, leaf) == 0) {
			append_name(out, outsz, l->name, " (a link whose target was created)");
		}
		close(dfd);
	}
	replaced_check(p, m, out, outsz, created, createdsz);
	if (m->nguard)
		guard_check(p, m, out, outsz);
	/* SECURITY: protected names that did not exist before the run and do
	 * now were created inside it (a file cannot get an empty read-only
	 * stand-in, and without a git repository neither can a directory):
	 * code that would run outside later (.mcp.json, .envrc, .bashrc, a
	 * .vscode task, .claude hooks) or moat's own policy (.moat) the agent
	 * wrote for its next run. They are set aside, renamed, never deleted;
	 * a new .git/config and .git/hooks (git init inside) are judged by what
	 * they hold. Every step works on directory entries opened without
	 * following symlinks. */
	for (size_t i = 0; i < m->nprotected_missing; i++) {
		const char *name = m->protected_missing[i], *leaf = NULL;
		char full[PATH_MAX];
		struct stat st;
		int dfd;

		if (now.ok &&
		    (size_t)snprintf(full, sizeof(full), "%s/%s", p->workspace, name) <
			sizeof(full) &&
		    listing_absent(&now, 1, full))
			continue;
		dfd = open_parent_nofollow(m, p->workspace, name, &leaf);

		if (dfd < 0) {
			char path[PATH_MAX];

			/* reached only through a link on the way (a directory
			 * replaced by a link): never renamed through it, reported */
			snprintf(path, sizeof(path), "%s/%s", p->workspace, name);
			if (lstat(path, &st) == 0)
				append_name(created, createdsz, name, NULL);
			continue;
		}
		if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			close(dfd);
			continue;
		}
		/* another run's empty stand-in (made while this one ran):
		 * nothing of this run's, and that run's read-only mount on it
		 * must stay where it is */
		if (S_ISDIR(st.st_mode) && is_standin(dfd, leaf) && dir_empty(dfd, leaf)) {
			close(dfd);
			continue;
		}
		judge_created(p, dfd, leaf, name, S_ISDIR(st.st_mode), NULL, out, outsz, created,
			      createdsz);
		close(dfd);
	}
	listing_release(&now);
}

int moat_mounts_to_json(const struct moat_mounts *m, struct moat_buf *b)
{
	moat_buf_putc(b, '[');
	for (size_t i = 0; i < m->n; i++) {
		moat_buf_printf(b, "%s{\"op\": \"%s\", \"target\": ", i ? ",\n    " : "\n    ",
				kind_name(m->ops[i].kind));
		moat_buf_json_str(b, m->ops[i].target, strlen(m->ops[i].target));
		if (m->ops[i].kind == MOAT_MNT_KEEP)
			moat_buf_printf(b, ", \"readonly\": %s",
					m->ops[i].readonly ? "true" : "false");
		if (m->ops[i].placeholder)
			moat_buf_puts(b, ", \"created_empty\": true");
		moat_buf_putc(b, '}');
	}
	moat_buf_puts(b, m->n ? "\n  ]" : "]");
	return b->oom ? -ENOMEM : 0;
}

/* ------------------------------------------------------------------ */
/* child side: no allocation, no stdio, no locks                       */
/* ------------------------------------------------------------------ */

static void child_detail(struct moat_child_report *rep, const char *a, const char *b)
{
	size_t n = 0;

	for (; a && *a && n + 1 < sizeof(rep->detail); a++)
		rep->detail[n++] = *a;
	for (; b && *b && n + 1 < sizeof(rep->detail); b++)
		rep->detail[n++] = *b;
	rep->detail[n] = '\0';
}

static int child_fail(struct moat_child_report *rep, int step, int err, const char *a,
		      const char *b)
{
	rep->step = step;
	rep->err = err;
	child_detail(rep, a, b);
	return -err;
}

/* decimal of a non-negative number into buf, returns the length */
static size_t fmt_ulong(char *buf, unsigned long v)
{
	char tmp[24];
	size_t n = 0, i = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		buf[i++] = tmp[--n];
	buf[i] = '\0';
	return i;
}

/* Raw system calls (rawsys.h): the functions below also run in a child
 * that shares memory with its still running parent. */
static int write_file(const char *path, const char *s, size_t len)
{
	long fd = moat_sys4(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC, 0);
	long n;

	if (fd < 0)
		return (int)fd;
	n = moat_sys3(SYS_write, fd, s, len);
	moat_sys1(SYS_close, fd);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EIO;
}

int moat_ns_child_userns(uid_t uid, gid_t gid, struct moat_child_report *rep)
{
	char map[64];
	size_t n;
	int r;

	/* "id id 1": the command keeps its identity; nothing else is mapped,
	 * so it cannot become anyone else (setgroups is denied first, as the
	 * kernel requires for an unprivileged gid map) */
	r = write_file("/proc/self/setgroups", "deny", 4);
	if (r < 0 && r != -ENOENT)
		return child_fail(rep, MOAT_STEP_USERNS, -r, "/proc/self/setgroups", NULL);
	n = fmt_ulong(map, uid);
	map[n++] = ' ';
	n += fmt_ulong(map + n, uid);
	map[n++] = ' ';
	map[n++] = '1';
	r = write_file("/proc/self/uid_map", map, n);
	if (r < 0)
		return child_fail(rep, MOAT_STEP_USERNS, -r, "/proc/self/uid_map", NULL);
	n = fmt_ulong(map, gid);
	map[n++] = ' ';
	n += fmt_ulong(map + n, gid);
	map[n++] = ' ';
	map[n++] = '1';
	r = write_file("/proc/self/gid_map", map, n);
	if (r < 0)
		return child_fail(rep, MOAT_STEP_USERNS, -r, "/proc/self/gid_map", NULL);
	return 0;
}

/* mkdir -p inside a fresh tmpfs for a kept path; the last component is a
 * directory or an empty file, matching the source */
static int make_mountpoint(const char *target, bool is_dir)
{
	char buf[PATH_MAX];
	size_t n = strlen(target);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, target, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char c = buf[i];

		buf[i] = '\0';
		if (c == '\0' && !is_dir) {
			int fd = open(buf, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);

			if (fd < 0 && errno != EEXIST)
				return -errno;
			if (fd >= 0)
				close(fd);
		} else if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
			return -errno;
		}
		buf[i] = c;
	}
	return 0;
}

static int set_readonly(int tree)
{
	struct x_mount_attr a;

	memset(&a, 0, sizeof(a));
	a.attr_set = X_MOUNT_ATTR_RDONLY;
	if (syscall(X_NR_mount_setattr, tree, "", AT_EMPTY_PATH | X_AT_RECURSIVE, &a, sizeof(a)) <
	    0)
		return -errno;
	return 0;
}

/* clone the tree at (dfd, path), optionally read-only, and attach it at
 * target, or (target NULL) on the descriptor tfd */
static int attach_clone_at(int dfd, const char *path, unsigned extra, bool readonly,
			   const char *target, int tfd)
{
	int t = (int)syscall(X_NR_open_tree, dfd, path,
			     X_OPEN_TREE_CLONE | O_CLOEXEC | X_AT_RECURSIVE | extra);
	int r = 0;

	if (t < 0)
		return -errno;
	if (readonly)
		r = set_readonly(t);
	if (r == 0 && syscall(X_NR_move_mount, t, "", target ? AT_FDCWD : tfd, target ? target : "",
			      X_MOVE_MOUNT_F_EMPTY_PATH |
				  (target ? 0 : X_MOVE_MOUNT_T_EMPTY_PATH)) < 0)
		r = -errno;
	close(t);
	return r;
}

static int attach_clone(int dfd, const char *path, unsigned extra, bool readonly,
			const char *target)
{
	return attach_clone_at(dfd, path, extra, readonly, target, -1);
}

/* The scan's hit op->target, opened beneath the workspace (*wsfd, opened
 * here the first time: after the writable binds) with no link followed,
 * and of the kind planned. SECURITY: a mask attached by path could follow
 * a directory swapped for a link since the scan out of the place the scan
 * read; -ESTALE when the entry is not what the scan found (the runner
 * prepares again). */
static int open_hit(const struct moat_mounts *m, const struct moat_mount_op *op, int *wsfd)
{
	size_t wl = strlen(m->check->ws);
	struct stat st;
	int fd;

	if (strncmp(op->target, m->check->ws, wl) || op->target[wl] != '/')
		return -ESTALE;
	if (*wsfd < 0 && (*wsfd = open(m->check->ws, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	/* (gone, or a link or another kind on the way: not what was listed) */
	fd = moat_open_beneath(*wsfd, op->target + wl + 1, op->kind == MOAT_MNT_MASK_DIR);
	if (fd < 0)
		return -ESTALE;
	if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode) ||
	    (op->kind == MOAT_MNT_MASK_DIR) != !!S_ISDIR(st.st_mode)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* The mask sources "d" (directory) and "f" (file), both mode 000, in the
 * directory dfd. */
static int make_mask_nodes(int dfd)
{
	int f;

	if (mkdirat(dfd, "d", 0) < 0)
		return -errno;
	f = openat(dfd, "f", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
	if (f < 0)
		return -errno;
	close(f);
	if (fchmodat(dfd, "d", 0, 0) < 0 || fchmodat(dfd, "f", 0, 0) < 0)
		return -errno;
	return 0;
}

/* A detached, read-only tmpfs holding "d" (directory) and "f" (file), both
 * mode 000: the source of every mask (when there is no stash). */
static int make_mask_source(void)
{
	int fs, mnt, f;

	fs = (int)syscall(X_NR_fsopen, "tmpfs", X_FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if (syscall(X_NR_fsconfig, fs, X_FSCONFIG_SET_STRING, "size", "4k", 0) < 0 ||
	    syscall(X_NR_fsconfig, fs, X_FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
	    syscall(X_NR_fsconfig, fs, X_FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int e = errno;

		close(fs);
		return -e;
	}
	mnt = (int)syscall(X_NR_fsmount, fs, X_FSMOUNT_CLOEXEC,
			   X_MOUNT_ATTR_NOSUID | X_MOUNT_ATTR_NODEV | X_MOUNT_ATTR_NOEXEC);
	close(fs);
	if (mnt < 0)
		return -errno;
	f = make_mask_nodes(mnt);
	if (f == 0)
		f = set_readonly(mnt);
	if (f < 0) {
		close(mnt);
		return f;
	}
	return mnt;
}

/* The private tmpfs holding the overlays' upper and work directories
 * (detached: the command never sees it). */
static int make_scratch_source(void)
{
	int fs, mnt;

	fs = (int)syscall(X_NR_fsopen, "tmpfs", X_FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if (syscall(X_NR_fsconfig, fs, X_FSCONFIG_SET_STRING, "mode", "0700", 0) < 0 ||
	    syscall(X_NR_fsconfig, fs, X_FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int e = errno;

		close(fs);
		return -e;
	}
	mnt = (int)syscall(X_NR_fsmount, fs, X_FSMOUNT_CLOEXEC,
			   X_MOUNT_ATTR_NOSUID | X_MOUNT_ATTR_NODEV);
	close(fs);
	return mnt < 0 ? -errno : mnt;
}

static bool cow_ok;

bool moat_ns_child_cow_ok(void)
{
	return cow_ok;
}

static int mount_overlay_opts(int src, size_t idx, const char *target, bool userxattr);

/* "lowerdir=T,upperdir=/proc/self/fd/S/Nu,workdir=/proc/self/fd/S/Nw,userxattr" */
static int mount_overlay(int src, size_t idx, const char *target)
{
	return mount_overlay_opts(src, idx, target, true);
}

/* kernels whose tmpfs lacks user xattrs (before 6.6) refuse userxattr */
static int mount_overlay_plain(int src, size_t idx, const char *target)
{
	return mount_overlay_opts(src, idx, target, false);
}

static int mount_overlay_opts(int src, size_t idx, const char *target, bool userxattr)
{
	char up[16], wk[16], opts[1200], num[24], fdnum[24];
	size_t o = 0;
	const char *parts[9];

	fmt_ulong(num, (unsigned long)idx);
	fmt_ulong(fdnum, (unsigned long)src);
	up[0] = wk[0] = '\0';
	{
		size_t l = strlen(num);

		memcpy(up, num, l);
		memcpy(up + l, "u", 2);
		memcpy(wk, num, l);
		memcpy(wk + l, "w", 2);
	}
	if ((mkdirat(src, up, 0700) < 0 && errno != EEXIST) ||
	    (mkdirat(src, wk, 0700) < 0 && errno != EEXIST))
		return -errno;
	parts[0] = "lowerdir=";
	parts[1] = target;
	parts[2] = ",upperdir=/proc/self/fd/";
	parts[3] = fdnum;
	parts[4] = "/";
	parts[5] = up;
	parts[6] = ",workdir=/proc/self/fd/";
	parts[7] = fdnum;
	parts[8] = NULL;
	for (size_t i = 0; parts[i]; i++) {
		size_t l = strlen(parts[i]);

		if (o + l + 40 >= sizeof(opts))
			return -ENAMETOOLONG;
		memcpy(opts + o, parts[i], l);
		o += l;
	}
	opts[o++] = '/';
	memcpy(opts + o, wk, strlen(wk));
	o += strlen(wk);
	memcpy(opts + o, userxattr ? ",userxattr" : "", userxattr ? 11 : 1);
	if (mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
		return -errno;
	return 0;
}

int moat_ns_child_mounts(const struct moat_mounts *m, struct moat_child_report *rep)
{
	int trees[MOAT_MNT_MAX_KEEP];
	size_t ntrees = 0;
	int mask_src = -1, scratch_src = -1, stash = -1, wsfd = -1, r = 0;
	bool mask_ro = false; /* mask_src is a read-only mount already */

	cow_ok = false;

	/* the tree read-only, but for the writable paths (bound onto
	 * themselves first so that each is a mount of its own). SECURITY:
	 * before the kept paths are cloned, so their clones inherit it */
	for (size_t i = 0; i < m->n; i++) {
		const struct moat_mount_op *op = &m->ops[i];

		if (op->kind == MOAT_MNT_WRITABLE &&
		    mount(op->target, op->target, NULL, MS_BIND | MS_REC, NULL) < 0)
			return child_fail(rep, MOAT_STEP_MOUNT, errno, "binding writable ",
					  op->target);
	}
	{
		struct x_mount_attr a;

		memset(&a, 0, sizeof(a));
		a.attr_set = X_MOUNT_ATTR_RDONLY;
		if (syscall(X_NR_mount_setattr, AT_FDCWD, "/", X_AT_RECURSIVE, &a, sizeof(a)) < 0)
			return child_fail(rep, MOAT_STEP_MOUNT, errno, "read-only ", "/");
		memset(&a, 0, sizeof(a));
		a.attr_clr = X_MOUNT_ATTR_RDONLY;
		for (size_t i = 0; i < m->n; i++) {
			const struct moat_mount_op *op = &m->ops[i];

			/* EPERM: read-only on the host already (locked) */
			if (op->kind == MOAT_MNT_WRITABLE &&
			    syscall(X_NR_mount_setattr, AT_FDCWD, op->target, X_AT_RECURSIVE, &a,
				    sizeof(a)) < 0 &&
			    errno != EPERM)
				return child_fail(rep, MOAT_STEP_MOUNT, errno, "writable ",
						  op->target);
		}
	}

	/* kept paths: clone their trees now, before a tmpfs hides them */
	for (size_t i = 0; i < m->n; i++) {
		const struct moat_mount_op *op = &m->ops[i];
		int *t;

		if (op->kind != MOAT_MNT_KEEP && op->kind != MOAT_MNT_REVEAL)
			continue;
		if (ntrees == MOAT_ARRAY_SIZE(trees))
			return child_fail(rep, MOAT_STEP_MOUNT, E2BIG, "keeping visible ",
					  op->target);
		t = &trees[ntrees++];
		*t = (int)syscall(X_NR_open_tree, AT_FDCWD, op->target,
				 X_OPEN_TREE_CLONE | O_CLOEXEC | X_AT_RECURSIVE |
				     (op->kind == MOAT_MNT_REVEAL ? AT_SYMLINK_NOFOLLOW : 0));
		if (*t < 0)
			return child_fail(rep, MOAT_STEP_MOUNT, errno, "keeping visible ",
					  op->target);
		/* SECURITY: a path brought back into a mask is the one planned,
		 * not one swapped in since */
		if (op->kind == MOAT_MNT_REVEAL) {
			struct stat tst;

			if (fstat(*t, &tst) < 0 || tst.st_dev != op->dev ||
			    tst.st_ino != op->ino)
				return child_fail(rep, MOAT_STEP_MOUNT, EXDEV,
						  "changed since planned: ", op->target);
		}
		if (op->readonly && (r = set_readonly(*t)) < 0)
			return child_fail(rep, MOAT_STEP_MOUNT, -r, "read-only ", op->target);
	}
	ntrees = 0; /* (taken again in the same order) */
	for (size_t i = 0; i < m->n; i++) {
		const struct moat_mount_op *op = &m->ops[i];

		switch (op->kind) {
		case MOAT_MNT_STASH:
			if (mount("tmpfs", op->target, "tmpfs", op->flags, op->data) < 0)
				return child_fail(rep, MOAT_STEP_MOUNT, errno, "stash on ",
						  op->target);
			stash = open(op->target, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (stash < 0)
				return child_fail(rep, MOAT_STEP_MOUNT, errno, "stash on ",
						  op->target);
			if (fchmodat(stash, ".", 0700, 0) < 0 || (r = make_mask_nodes(stash)) < 0)
				return child_fail(rep, MOAT_STEP_MOUNT, r < 0 ? -r : errno,
						  "stash on ", op->target);
			mask_src = scratch_src = stash;
			break;
		case MOAT_MNT_TMPFS:
			if (mount("tmpfs", op->target, "tmpfs", op->flags, op->data) < 0)
				return child_fail(rep, MOAT_STEP_MOUNT, errno, "tmpfs on ",
						  op->target);
			break;
		case MOAT_MNT_REVEAL:
		case MOAT_MNT_KEEP:
			r = make_mountpoint(op->target, op->is_dir);
			if (r < 0)
				return child_fail(rep, MOAT_STEP_MOUNT, -r, "mount point for ",
						  op->target);
			if (syscall(X_NR_move_mount, trees[ntrees], "", AT_FDCWD, op->target,
				    X_MOVE_MOUNT_F_EMPTY_PATH) < 0)
				return child_fail(rep, MOAT_STEP_MOUNT, errno, "keeping visible ",
						  op->target);
			close(trees[ntrees++]);
			break;
		case MOAT_MNT_SELF_BIND:
			if (mount(op->target, op->target, NULL, MS_BIND | MS_REC, NULL) < 0)
				return child_fail(rep, MOAT_STEP_MOUNT, errno, "pinning ",
						  op->target);
			break;
		case MOAT_MNT_MASK_DIR:
		case MOAT_MNT_MASK_FILE:
			if (op->reveals) {
				/* an empty tmpfs to hold the mount points of the
				 * paths bound back; sealed read-only after them */
				if (mount("tmpfs", op->target, "tmpfs",
					  MS_NOSUID | MS_NODEV | MS_NOEXEC,
					  "mode=0111,size=64k,nr_inodes=256") < 0)
					return child_fail(rep, MOAT_STEP_MOUNT, errno, "masking ",
							  op->target);
				break;
			}
			if (mask_src < 0) {
				mask_src = make_mask_source();
				if (mask_src < 0)
					return child_fail(rep, MOAT_STEP_MOUNT, -mask_src,
							  "the mask tmpfs", NULL);
				mask_ro = true;
			}
			/* SECURITY: every mask is a read-only mount (a clone of the
			 * stash is made read-only on its own) */
			if (op->beneath && m->check) {
				int tfd = open_hit(m, op, &wsfd);

				if (tfd == -ESTALE)
					return child_fail(rep, MOAT_STEP_MOUNT, ESTALE,
							  op->target, " (not what the scan found)");
				r = tfd < 0 ? tfd
					    : attach_clone_at(mask_src,
							      op->kind == MOAT_MNT_MASK_DIR ? "d"
											    : "f",
							      0, !mask_ro, NULL, tfd);
				if (tfd >= 0)
					close(tfd);
			} else {
				r = attach_clone(mask_src, op->kind == MOAT_MNT_MASK_DIR ? "d" : "f",
						 0, !mask_ro, op->target);
			}
			/* a target gone since it was found: the workspace (or the
			 * home) changed meanwhile, prepared again */
			if (r == -ENOENT || r == -ENOTDIR)
				return child_fail(rep, MOAT_STEP_MOUNT, ESTALE, op->target,
						  " (gone since it was found)");
			if (r < 0)
				return child_fail(rep, MOAT_STEP_MOUNT, -r, "masking ", op->target);
			break;
		case MOAT_MNT_RO_BIND:
			r = attach_clone(AT_FDCWD, op->target,
					 op->nofollow ? AT_SYMLINK_NOFOLLOW : 0, !op->nofollow,
					 op->target);
			/* a protected link's target the sandbox does not show
			 * (the host's /tmp) cannot be written through it either */
			if (r == -ENOENT && op->optional)
				r = 0;
			if (r < 0)
				return child_fail(rep, MOAT_STEP_MOUNT, -r, "protecting ",
						  op->target);
			break;
		case MOAT_MNT_PROC:
			if (mount("proc", "/proc", "proc", op->flags, NULL) < 0)
				return child_fail(rep, MOAT_STEP_MOUNT, errno, "proc on ", "/proc");
			break;
		case MOAT_MNT_DEVPTS:
			if (mount("devpts", op->target, "devpts", op->flags, op->data) < 0)
				return child_fail(rep, MOAT_STEP_MOUNT, errno, "devpts on ",
						  op->target);
			break;
		case MOAT_MNT_PTMX:
			if (mount("/dev/pts/ptmx", op->target, NULL, MS_BIND, NULL) < 0)
				return child_fail(rep, MOAT_STEP_MOUNT, errno, "ptmx on ",
						  op->target);
			break;
		case MOAT_MNT_WRITABLE:
			break; /* done above */
		case MOAT_MNT_OVERLAY:
			if (scratch_src < 0) {
				scratch_src = make_scratch_source();
				if (scratch_src < 0)
					return child_fail(rep, MOAT_STEP_MOUNT, -scratch_src,
							  "the overlay tmpfs", NULL);
			}
			/* the view only adds writes that vanish: when overlayfs
			 * refuses (an old kernel, a home it cannot stack on),
			 * the home directory stays read-only and its late
			 * Landlock rule is skipped (moat_ns_child_cow_ok) */
			r = mount_overlay(scratch_src, i, op->target);
			if (r == -EINVAL)
				r = mount_overlay_plain(scratch_src, i, op->target);
			cow_ok = r == 0;
			r = 0;
			break;
		}
	}
	/* the masks holding paths bound back: read-only now (this mount only;
	 * the binds below keep their own flags) */
	for (size_t i = 0; i < m->n; i++) {
		const struct moat_mount_op *op = &m->ops[i];

		if (op->kind == MOAT_MNT_MASK_DIR && op->reveals &&
		    mount(NULL, op->target, NULL,
			  MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  NULL) < 0)
			return child_fail(rep, MOAT_STEP_MOUNT, errno, "sealing the mask on ",
					  op->target);
	}
	/* closing a detached tree unmounts it (an RCU grace period each); the
	 * stash is attached, and closing its O_PATH descriptor is cheap */
	if (scratch_src >= 0 && scratch_src != stash)
		close(scratch_src);
	if (mask_src >= 0 && mask_src != stash)
		close(mask_src);
	if (stash >= 0)
		close(stash);
	if (wsfd >= 0)
		close(wsfd);
	return 0;
}

/* pid_max bounds the PIDs 1 .. pid_max - 1: moat's init (PID 1) and
 * `pids` processes of the command. Once the numbers wrap the kernel hands
 * out only PIDs from 300 (RESERVED_PIDS) up, so pid_max leaves those 300
 * aside: `pids` stay usable after the wrap (a build with -j that forks
 * thousands of processes in turn kept only 214 of 512), and before it at
 * most 300 more can run at once. */
#define NS_RESERVED_PIDS 300
int moat_ns_child_pid_max(long pids, struct moat_child_report *rep)
{
	char buf[24];
	size_t n = fmt_ulong(buf, (unsigned long)pids + 2 + NS_RESERVED_PIDS);
	int r = write_file("/proc/sys/kernel/pid_max", buf, n);

	if (r < 0)
		return child_fail(rep, MOAT_STEP_PID_MAX, -r, "/proc/sys/kernel/pid_max", NULL);
	return 0;
}

/* SysV shared memory in the sandbox's own IPC namespace: capped at the
 * memory limit (its pages are counted by no rlimit). Best effort: a kernel
 * that refuses leaves the namespace's defaults. */
void moat_ns_child_shm_limit(unsigned long long mem_bytes)
{
	char buf[24];
	size_t n;

	if (!mem_bytes)
		return;
	n = fmt_ulong(buf, (unsigned long)mem_bytes);
	(void)write_file("/proc/sys/kernel/shmmax", buf, n);
	n = fmt_ulong(buf, (unsigned long)(mem_bytes / 4096));
	(void)write_file("/proc/sys/kernel/shmall", buf, n);
}

int moat_ns_child_loopback(struct moat_child_report *rep)
{
	struct ifreq ifr;
	long fd = moat_sys3(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return child_fail(rep, MOAT_STEP_NETWORK, (int)-fd, "socket", NULL);
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	r = moat_sys3(SYS_ioctl, fd, SIOCGIFFLAGS, &ifr);
	if (r == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		r = moat_sys3(SYS_ioctl, fd, SIOCSIFFLAGS, &ifr);
	}
	moat_sys1(SYS_close, fd);
	if (r < 0)
		return child_fail(rep, MOAT_STEP_NETWORK, (int)-r, "loopback up", NULL);
	return 0;
}
