/* What a preparation of the mounts looks at, watched as it looks.
 *
 * A sandbox armed ahead of its call (runner.c) is prepared from the
 * filesystem as it is then: which secrets exist, where links lead, which
 * protected names are there. While moat_fsrec_begin is in force, ns.c's
 * lookups go through the recorders below (fsrec_wrap.h), and each puts an
 * inotify watch on what it depends on BEFORE it looks: every directory on
 * the way to the path, for the next name on the way (a rename, a new
 * entry, an entry gone, its attributes); every symbolic link met on the
 * way followed, link by link, and the way to where each leads watched the
 * same; each directory opened (a listing, a scanned directory) is watched
 * whole before its entries are read. What changes after a look is
 * therefore an event; what changed before it is what the look saw.
 * moat_fswatch_quiet is true while no event that matters has come: the
 * call may then take the armed sandbox without preparing it again.
 *
 * Refused (NULL from moat_fswatch_start) where a watch could miss a
 * change: a lookup that is not by an absolute path or a descriptor,
 * glob(3) (its walk is not seen), a filesystem whose changes another
 * machine can make (only ext2/3/4, xfs, btrfs, tmpfs and f2fs are
 * watched), a chain of links too long, too many directories, a watch the
 * kernel refuses. A directory that folds case has every entry watched
 * (its names are not compared byte for byte). Not thread-safe, like the
 * runner. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <linux/fs.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/str.h"
#include "core/glob.h"
#include "sandbox/fsrec.h"

/* the directories one watch may hold: half of what the kernel lets this
 * user watch (the rest left to the user's editors and tools), at most
 * FSWATCH_CAP_DIRS; at least FSWATCH_MIN_DIRS */
#define FSWATCH_MIN_DIRS 512
#define FSWATCH_CAP_DIRS (1u << 20)
#define FSWATCH_EVENTS                                                                             \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_MODIFY |            \
	 IN_DELETE_SELF | IN_MOVE_SELF)

struct watch_dir {
	int wd;
	bool all;     /* every entry matters */
	bool scan;    /* read by the workspace scan: an entry that is, or
		       * was, a directory, and a name the scan's patterns may
		       * pick, matter (scan_name_matters) */
	char **names; /* and these entries */
	size_t n;
};

struct moat_fswatch {
	int fd;
	pid_t holder; /* holds the last reference to fd (watch_hold) */
	struct watch_dir *v;
	size_t n;
	/* v's index of each watch descriptor + 1 (0: none) */
	size_t *by_wd;
	size_t nby_wd;
	size_t max_dirs;
	/* the components of the scan's patterns ("**" left out), matched
	 * against a name as the scan may match them (fnmatch by byte, and
	 * moat_glob by character); every name matters when one cannot be
	 * told (a brace, which may hold a '/') */
	char **scan_comps;
	struct moat_glob **scan_globs;
	size_t nscan_comps;
	bool scan_any;
	bool spoiled; /* an event that matters was seen */
};

static bool fs_watchable(const char *dir);

/* the ways already watched ("/a/b": the name b watched in /a, and where b
 * leads followed when it is a link) and the directories watched whole: an
 * open-addressing set of strings each, grown at three quarters full */
#define SEEN_MIN_SLOTS 1024
struct seen {
	char **v;
	size_t cap, n;
};

static struct {
	bool on, bad;
	struct moat_fswatch *w;
	struct seen way, whole;
	int cancel_fd; /* readable: the recording is given up (-1: none) */
	unsigned polls;
} rec = {.cancel_fd = -1};

static unsigned long long seen_hash(const char *p, size_t n)
{
	unsigned long long h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	return h;
}

/* t at twice its size (or its first); false when out of memory */
static bool seen_grow(struct seen *t)
{
	size_t cap = t->cap ? t->cap * 2 : SEEN_MIN_SLOTS;
	char **v = calloc(cap, sizeof(*v));

	if (!v)
		return false;
	for (size_t i = 0; i < t->cap; i++) {
		size_t k;

		if (!t->v[i])
			continue;
		k = (size_t)(seen_hash(t->v[i], strlen(t->v[i])) & (cap - 1));
		while (v[k])
			k = (k + 1) & (cap - 1);
		v[k] = t->v[i];
	}
	free(t->v);
	t->v = v;
	t->cap = cap;
	return true;
}

/* Is p[0..n) in the set? It is added when not; *full when it cannot be
 * (out of memory). */
static bool seen_add(struct seen *t, const char *p, size_t n, bool *full)
{
	size_t i;

	*full = false;
	if ((t->n + 1) * 4 > t->cap * 3 && !seen_grow(t)) {
		*full = true;
		return false;
	}
	for (i = (size_t)(seen_hash(p, n) & (t->cap - 1)); t->v[i]; i = (i + 1) & (t->cap - 1))
		if (strlen(t->v[i]) == n && !memcmp(t->v[i], p, n))
			return true;
	if (!(t->v[i] = moat_strndup(p, n)))
		*full = true;
	else
		t->n++;
	return false;
}

static void seen_clear(struct seen *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->v[i]);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* How many directories a watch may hold (FSWATCH_MIN_DIRS..CAP_DIRS). */
static size_t fswatch_max_dirs(void)
{
	char buf[32];
	unsigned long long v = 0;
	ssize_t n;
	int fd = open("/proc/sys/fs/inotify/max_user_watches", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return FSWATCH_MIN_DIRS;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return FSWATCH_MIN_DIRS;
	buf[n] = '\0';
	v = strtoull(buf, NULL, 10) / 2;
	return v < FSWATCH_MIN_DIRS ? FSWATCH_MIN_DIRS : v > FSWATCH_CAP_DIRS ? FSWATCH_CAP_DIRS : (size_t)v;
}

static void rec_clear(void)
{
	moat_fswatch_free(rec.w);
	seen_clear(&rec.way);
	seen_clear(&rec.whole);
	rec.w = NULL;
	rec.on = rec.bad = false;
	rec.cancel_fd = -1;
}

void moat_fsrec_begin(void)
{
	rec_clear();
	rec.on = true;
	rec.w = calloc(1, sizeof(*rec.w));
	if (!rec.w) {
		rec.bad = true;
		return;
	}
	rec.w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	rec.w->max_dirs = fswatch_max_dirs();
	if (rec.w->fd < 0)
		rec.bad = true;
}

void moat_fsrec_end(void)
{
	rec.on = false;
}

void moat_fsrec_drop(void)
{
	rec_clear();
}

void moat_fsrec_unrecordable(void)
{
	if (rec.on)
		rec.bad = true;
}

bool moat_fsrec_on(void)
{
	return rec.on;
}

bool moat_fsrec_spoiled(void)
{
	return rec.bad;
}

void moat_fsrec_cancel_fd(int fd)
{
	rec.cancel_fd = fd;
}

bool moat_fsrec_cancelled(void)
{
	struct pollfd pf = {rec.cancel_fd, POLLIN, 0};

	if (!rec.on || rec.cancel_fd < 0)
		return false;
	if (rec.bad)
		return true;
	/* (one poll in 64 asks) */
	if (rec.polls++ % 64 || poll(&pf, 1, 0) <= 0)
		return false;
	rec.bad = true;
	return true;
}

/* Does the directory fold case (ext4, f2fs, tmpfs casefold)? When it
 * cannot be opened: yes (its entries are all watched); a filesystem
 * without inode flags (FS_IOC_GETFLAGS refused) has no casefold flag to
 * set. */
static bool folds_case(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK), flags = 0;
	bool folds;

	if (fd < 0)
		return true;
	folds = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_CASEFOLD_FL);
	close(fd);
	return folds;
}

/* The directory of watch descriptor wd, or NULL. */
static struct watch_dir *watch_of(const struct moat_fswatch *w, int wd)
{
	return wd > 0 && (size_t)wd < w->nby_wd && w->by_wd[wd] ? &w->v[w->by_wd[wd] - 1] : NULL;
}

/* A new watch_dir for wd (its index noted); NULL when out of memory. */
static struct watch_dir *watch_new(struct moat_fswatch *w, int wd)
{
	struct watch_dir *d;

	if ((size_t)wd >= w->nby_wd) {
		size_t n = w->nby_wd ? w->nby_wd : 256;
		size_t *v;

		while (n <= (size_t)wd)
			n *= 2;
		v = realloc(w->by_wd, n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + w->nby_wd, 0, (n - w->nby_wd) * sizeof(*v));
		w->by_wd = v;
		w->nby_wd = n;
	}
	if ((w->n & (w->n - 1)) == 0 || w->n < 16) {
		/* (grown at each power of two) */
		struct watch_dir *v = realloc(w->v, (w->n < 16 ? 16 : w->n * 2) * sizeof(*v));

		if (!v)
			return NULL;
		w->v = v;
	}
	d = &w->v[w->n++];
	memset(d, 0, sizeof(*d));
	d->wd = wd;
	w->by_wd[wd] = w->n;
	return d;
}

enum watch_how {
	WATCH_NAME, /* the entry name */
	WATCH_ALL,  /* every entry */
	WATCH_SCAN, /* what the workspace scan relies on (watch_dir.scan) */
};

/* Watch dir: the entry name, or all its entries, or what the scan relies
 * on. 0; -1 when the kernel refused the watch (errno); -2 when it must
 * not be relied on (a filesystem not watched, too many directories, no
 * memory). */
static int watch_add(struct moat_fswatch *w, const char *dir, enum watch_how how, const char *name,
		     size_t nl)
{
	struct watch_dir *d;
	int wd;

	wd = inotify_add_watch(w->fd, dir, FSWATCH_EVENTS);
	if (wd < 0)
		return -1;
	d = watch_of(w, wd);
	if (!d) {
		if (w->n >= w->max_dirs || !fs_watchable(dir))
			return -2;
		d = watch_new(w, wd);
		if (!d)
			return -2;
		/* a directory that folds case: "Credentials" is looked up as
		 * "credentials", so every entry matters */
		d->all = folds_case(dir);
		/* SECURITY: an encrypted one lists other names once its key is
		 * added, with no event: not watchable */
		if (moat_encrypted_at(AT_FDCWD, dir, 0))
			return -2;
	}
	if (how == WATCH_ALL) {
		d->all = true;
		return 0;
	}
	if (how == WATCH_SCAN) {
		d->scan = true;
		return 0;
	}
	if (d->all)
		return 0;
	for (size_t k = 0; k < d->n; k++)
		if (strlen(d->names[k]) == nl && !memcmp(d->names[k], name, nl))
			return 0;
	{
		char **v = realloc(d->names, (d->n + 1) * sizeof(*v));

		if (!v)
			return -2;
		d->names = v;
		if (!(d->names[d->n] = moat_strndup(name, nl)))
			return -2;
		d->n++;
	}
	return 0;
}

/* Watch the way to path: each directory on it for the next name, each
 * link met followed to where it leads (its text taken against the
 * directory it is in, link by link: a link in the text is met in turn).
 * 0, or -1: it cannot be watched. */
static int watch_way(const char *path, int depth)
{
	char pre[PATH_MAX], text[PATH_MAX], target[2 * PATH_MAX];
	const char *c = path;
	bool full;
	int r;

	if (path[0] != '/' || strlen(path) >= sizeof(pre) || depth > 32)
		return -1;
	for (;;) {
		const char *name = c + 1, *next = strchr(name, '/');
		size_t nl = next ? (size_t)(next - name) : strlen(name), dl = (size_t)(c - path);
		struct stat st;
		ssize_t tl;

		if (nl == 0 || (nl == 1 && name[0] == '.')) {
			if (!next)
				break;
			c = next;
			continue;
		}
		if (nl == 2 && name[0] == '.' && name[1] == '.')
			return -1; /* (ns.c looks up normalized paths; a link's text may not) */
		if (seen_add(&rec.way, path, dl + 1 + nl, &full)) {
			if (!next)
				break;
			c = next;
			continue;
		}
		if (full)
			return -1;
		memcpy(pre, path, dl);
		pre[dl] = '\0';
		r = watch_add(rec.w, dl ? pre : "/", WATCH_NAME, name, nl);
		if (r == -2 || (r == -1 && errno != ENOENT && errno != ENOTDIR))
			return -1;
		if (r == -1)
			return 0; /* the way ends here: its parent watches the name */
		memcpy(pre, path, dl + 1 + nl);
		pre[dl + 1 + nl] = '\0';
		if (lstat(pre, &st) < 0)
			return 0; /* nothing there (yet): the name is watched */
		if (S_ISLNK(st.st_mode)) {
			tl = readlink(pre, text, sizeof(text) - 1);
			if (tl <= 0)
				return -1;
			text[tl] = '\0';
			if (text[0] == '/')
				r = snprintf(target, sizeof(target), "%s", text);
			else
				r = snprintf(target, sizeof(target), "%.*s/%s", (int)dl, path, text);
			if (r < 0 || (size_t)r >= sizeof(target) || watch_way(target, depth + 1) < 0)
				return -1;
		}
		if (!next)
			break;
		c = next;
	}
	return 0;
}

/* Before a look at path: the way to it watched. */
static void rec_way(const char *path)
{
	if (rec.on && !rec.bad && (!path || watch_way(path, 0) < 0))
		rec.bad = true;
}

/* A directory about to be read: watched whole (a listing: how WATCH_ALL,
 * each such path watched once), or for what the workspace scan depends on
 * (WATCH_SCAN). */
static void rec_dir(const char *path, enum watch_how how)
{
	bool full = false;
	int r;

	if (!rec.on || rec.bad)
		return;
	if (!path || path[0] != '/') {
		rec.bad = true;
		return;
	}
	if (how == WATCH_ALL && seen_add(&rec.whole, path, strlen(path), &full))
		return;
	r = full ? -2 : watch_add(rec.w, path, how, NULL, 0);
	if (r == -2 || (r == -1 && errno != ENOENT && errno != ENOTDIR))
		rec.bad = true;
}

static void rec_whole(const char *path)
{
	rec_dir(path, WATCH_ALL);
}

/* The path of a descriptor, from /proc/self/fd; false when unknown. */
static bool fd_path(int fd, char *out, size_t outsz)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, out, outsz - 1);
	if (n <= 0 || out[0] != '/')
		return false;
	out[n] = '\0';
	/* a directory removed since ("/x (deleted)"): nothing to watch */
	return !strstr(out, " (deleted)");
}

/* dfd/name as a path; false when it cannot be known. */
static bool at_path(int dfd, const char *name, char *out, size_t outsz)
{
	char dir[PATH_MAX];

	if (name && name[0] == '/')
		return (size_t)snprintf(out, outsz, "%s", name) < outsz;
	if (dfd == AT_FDCWD || !fd_path(dfd, dir, sizeof(dir)))
		return false;
	if (!name || !name[0] || !strcmp(name, "."))
		return (size_t)snprintf(out, outsz, "%s", dir) < outsz;
	return (size_t)snprintf(out, outsz, "%s/%s", strcmp(dir, "/") ? dir : "", name) < outsz;
}

/* rec_way or rec_whole (whole) of dfd/name. */
static void rec_at(int dfd, const char *name, bool whole)
{
	char full[2 * PATH_MAX];

	if (!rec.on || rec.bad)
		return;
	if (!at_path(dfd, name, full, sizeof(full)))
		rec.bad = true;
	else if (whole)
		rec_whole(full);
	else
		rec_way(full);
}

void moat_fsrec_dir_at(int dfd, const char *name)
{
	rec_at(dfd, name, false);
	rec_at(dfd, name, true);
}

void moat_fsrec_scan_dir(const char *path, bool top)
{
	/* below the top, the way is the scan's own directories, each
	 * watched for its entries that are directories before it was read */
	if (top)
		rec_way(path);
	rec_dir(path, WATCH_SCAN);
}

void moat_fsrec_scan_patterns(const char *const *pats, size_t n)
{
	struct moat_fswatch *w = rec.w;

	if (!rec.on || rec.bad || !w)
		return;
	for (size_t i = 0; i < n && !w->scan_any; i++) {
		for (const char *c = pats[i]; *c;) {
			size_t cl = strcspn(c, "/");
			char **v;

			if (!(cl == 2 && c[0] == '*' && c[1] == '*') && cl) {
				if (memchr(c, '{', cl)) {
					w->scan_any = true; /* (fnmatch has no braces) */
					break;
				}
				struct moat_glob **g;
				struct moat_error e;

				v = realloc(w->scan_comps, (w->nscan_comps + 1) * sizeof(*v));
				if (v)
					w->scan_comps = v;
				g = v ? realloc(w->scan_globs, (w->nscan_comps + 1) * sizeof(*g)) : NULL;
				if (g)
					w->scan_globs = g;
				if (!g || !(v[w->nscan_comps] = moat_strndup(c, cl))) {
					rec.bad = true;
					return;
				}
				g[w->nscan_comps] = NULL;
				w->nscan_comps++;
				/* (a component the glob refuses: every name counts) */
				if (moat_glob_compile(v[w->nscan_comps - 1], MOAT_GLOB_PATH,
						      &g[w->nscan_comps - 1], &e) < 0) {
					w->scan_any = true;
					break;
				}
			}
			c += cl;
			c += *c == '/';
		}
	}
}

static bool fd_is_dir(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

int moat_fsrec_stat(const char *p, struct stat *st)
{
	rec_way(p);
	return stat(p, st);
}

int moat_fsrec_lstat(const char *p, struct stat *st)
{
	rec_way(p);
	return lstat(p, st);
}

int moat_fsrec_access(const char *p, int mode)
{
	rec_way(p);
	return access(p, mode);
}

int moat_fsrec_fstatat(int dfd, const char *name, struct stat *st, int flags)
{
	rec_at(dfd, name, false);
	return fstatat(dfd, name, st, flags);
}

int moat_fsrec_open(const char *p, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	rec_way(p);
	fd = open(p, flags, mode);
	/* watched whole before its entries are read (after this returns) */
	if (rec.on && fd_is_dir(fd))
		rec_whole(p);
	return fd;
}

int moat_fsrec_openat(int dfd, const char *name, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	rec_at(dfd, name, false);
	fd = openat(dfd, name, flags, mode);
	if (rec.on && fd_is_dir(fd))
		rec_at(dfd, name, true);
	return fd;
}

DIR *moat_fsrec_opendir(const char *p)
{
	rec_way(p);
	rec_whole(p);
	return opendir(p);
}

DIR *moat_fsrec_fdopendir(int fd)
{
	rec_at(fd, NULL, true);
	return fdopendir(fd);
}

char *moat_fsrec_realpath(const char *p, char *out)
{
	rec_way(p);
	return realpath(p, out);
}

ssize_t moat_fsrec_readlink(const char *p, char *buf, size_t n)
{
	rec_way(p);
	return readlink(p, buf, n);
}

ssize_t moat_fsrec_readlinkat(int dfd, const char *name, char *buf, size_t n)
{
	rec_at(dfd, name, false);
	return readlinkat(dfd, name, buf, n);
}

/* ------------------------------------------------------------------ */
/* the watch                                                          */
/* ------------------------------------------------------------------ */

static bool fs_watchable(const char *dir)
{
	struct statfs sf;

	return statfs(dir, &sf) == 0 && moat_fs_local_type((unsigned long)sf.f_type);
}

bool moat_fs_local_type(unsigned long f_type)
{
	switch (f_type) {
	case 0xEF53UL:	   /* ext2/3/4 */
	case 0x58465342UL: /* xfs */
	case 0x9123683EUL: /* btrfs */
	case 0x01021994UL: /* tmpfs */
	case 0xF2F52010UL: /* f2fs */
		return true;
	default:
		return false;
	}
}

/* The last close of an inotify descriptor waits for the kernel's grace
 * periods before its watches are gone (about 20 ms here): a process of its
 * own holds a reference and dies with us (or when the watch is freed), so
 * that wait is in an exit nobody waits for, never in ours or a call's. */
static pid_t watch_hold(int fd)
{
	pid_t parent = getpid(), pid = fork();

	if (pid != 0)
		return pid < 0 ? 0 : pid;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(0);
	/* nothing of ours but the descriptor (no pipe of a call stays open) */
	if ((fd > 0 && syscall(SYS_close_range, 0U, (unsigned)fd - 1, 0U) < 0) ||
	    syscall(SYS_close_range, (unsigned)fd + 1, ~0U, 0U) < 0)
		_exit(0);
	for (;;)
		pause();
}

void moat_fswatch_free(struct moat_fswatch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (w->holder > 0)
		kill(w->holder, SIGKILL); /* (reaped by whoever inherits it) */
	for (size_t i = 0; i < w->n; i++) {
		for (size_t k = 0; k < w->v[i].n; k++)
			free(w->v[i].names[k]);
		free(w->v[i].names);
	}
	for (size_t i = 0; i < w->nscan_comps; i++) {
		free(w->scan_comps[i]);
		moat_glob_free(w->scan_globs[i]);
	}
	free(w->scan_comps);
	free(w->scan_globs);
	free(w->by_wd);
	free(w->v);
	free(w);
}

struct moat_fswatch *moat_fswatch_start(void)
{
	struct moat_fswatch *w = rec.w;
	bool bad = rec.bad || !w;

	rec.w = NULL;
	rec_clear();
	if (bad) {
		moat_fswatch_free(w);
		return NULL;
	}
	w->holder = watch_hold(w->fd);
	return w;
}

/* May the scan's patterns pick an entry of this name, or a path through
 * it (a name of any of their components)? */
static bool scan_name_matters(const struct moat_fswatch *w, const char *name)
{
	if (w->scan_any)
		return true;
	for (size_t i = 0; i < w->nscan_comps; i++)
		if (fnmatch(w->scan_comps[i], name, 0) == 0 ||
		    (w->scan_globs[i] && moat_glob_match(w->scan_globs[i], name, strlen(name))))
			return true;
	return false;
}

/* Does the event matter? */
static bool event_matters(const struct moat_fswatch *w, const struct inotify_event *ev)
{
	const struct watch_dir *d;

	if (ev->mask & (IN_Q_OVERFLOW | IN_IGNORED | IN_UNMOUNT | IN_DELETE_SELF | IN_MOVE_SELF))
		return true;
	d = watch_of(w, ev->wd);
	if (!d)
		return true; /* a watch we do not know */
	if (d->all || !ev->len)
		return true;
	for (size_t k = 0; k < d->n; k++)
		if (!strcmp(d->names[k], ev->name))
			return true;
	/* the scan read the directory: an entry that is or was a directory
	 * (a tree it has not read, or one it relied on, gone), a name its
	 * patterns may pick come or gone. What is written to other files,
	 * or their attributes, masks nothing */
	if (d->scan)
		return (ev->mask & IN_ISDIR) ||
		       ((ev->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)) &&
			scan_name_matters(w, ev->name));
	return false;
}

bool moat_fswatch_quiet(struct moat_fswatch *w)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));

	if (!w || w->fd < 0)
		return false;
	while (!w->spoiled) {
		ssize_t n = read(w->fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break; /* nothing more queued */
		if (n <= 0) {
			w->spoiled = true;
			break;
		}
		for (ssize_t off = 0; off < n;) {
			const struct inotify_event *ev = (const void *)(buf + off);

			if (event_matters(w, ev))
				w->spoiled = true;
			off += (ssize_t)sizeof(*ev) + ev->len;
		}
	}
	return !w->spoiled;
}
