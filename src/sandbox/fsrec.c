/* What a preparation of the mounts looked at, and a watch on it.
 *
 * A sandbox armed ahead of its call (runner.c) was prepared from the
 * filesystem as it was then: which secrets exist, where links lead, which
 * protected names are there. ns.c's lookups go through the recorders
 * below (fsrec_wrap.h) while moat_fsrec_begin is in force: every path
 * looked up, every directory opened (its entries are what a listing or a
 * scan read). moat_fswatch_start then puts an inotify watch on each
 * directory opened (any change of its entries matters) and on every
 * directory on the way to each path looked up (only a change of the next
 * name on the way matters: a rename, a new entry, an entry gone, its
 * attributes). moat_fswatch_quiet is true when nothing that matters
 * changed since: the call may then take the armed sandbox without
 * preparing the mounts again.
 *
 * Refused (NULL) where a watch could miss a change: a lookup that is not
 * by an absolute path or a descriptor, glob(3) (its walk is not seen), a
 * filesystem whose changes another machine can make (only ext2/3/4, xfs,
 * btrfs, tmpfs and f2fs are watched), too many directories, a watch the
 * kernel refuses. Not thread-safe, like the runner that uses it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/str.h"
#include "sandbox/fsrec.h"

#define FSREC_MAX_PATHS 4096
#define FSWATCH_MAX_DIRS 512
#define FSWATCH_EVENTS                                                                             \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_MODIFY |            \
	 IN_DELETE_SELF | IN_MOVE_SELF)

struct rec_path {
	char *path;
	bool opened; /* a directory opened: all its entries matter */
};

static struct {
	bool on, bad;
	struct rec_path *v;
	size_t n, cap;
} rec;

static void rec_clear(void)
{
	for (size_t i = 0; i < rec.n; i++)
		free(rec.v[i].path);
	free(rec.v);
	memset(&rec, 0, sizeof(rec));
}

void moat_fsrec_begin(void)
{
	rec_clear();
	rec.on = true;
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

static void rec_add(const char *path, bool opened)
{
	char *dup;

	if (!rec.on)
		return;
	if (!path || path[0] != '/' || rec.n >= FSREC_MAX_PATHS) {
		rec.bad = true;
		return;
	}
	for (size_t i = rec.n; i-- > 0 && i + 64 >= rec.n;)
		if (!strcmp(rec.v[i].path, path)) {
			rec.v[i].opened = rec.v[i].opened || opened;
			return;
		}
	if (rec.n == rec.cap) {
		size_t cap = rec.cap ? rec.cap * 2 : 64;
		struct rec_path *v = realloc(rec.v, cap * sizeof(*v));

		if (!v) {
			rec.bad = true;
			return;
		}
		rec.v = v;
		rec.cap = cap;
	}
	if (!(dup = moat_strdup(path))) {
		rec.bad = true;
		return;
	}
	rec.v[rec.n].path = dup;
	rec.v[rec.n++].opened = opened;
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

static void rec_at(int dfd, const char *name, bool opened)
{
	char dir[PATH_MAX], full[2 * PATH_MAX];

	if (!rec.on)
		return;
	if (name && name[0] == '/') {
		rec_add(name, opened);
		return;
	}
	if (dfd == AT_FDCWD || !fd_path(dfd, dir, sizeof(dir))) {
		rec.bad = true;
		return;
	}
	if (!name || !name[0] || !strcmp(name, ".")) {
		rec_add(dir, opened);
		return;
	}
	if ((size_t)snprintf(full, sizeof(full), "%s/%s", strcmp(dir, "/") ? dir : "", name) >=
	    sizeof(full)) {
		rec.bad = true;
		return;
	}
	rec_add(full, opened);
}

static bool fd_is_dir(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

int moat_fsrec_stat(const char *p, struct stat *st)
{
	int r = stat(p, st);

	rec_add(p, false);
	return r;
}

int moat_fsrec_lstat(const char *p, struct stat *st)
{
	int r = lstat(p, st);

	rec_add(p, false);
	return r;
}

int moat_fsrec_access(const char *p, int mode)
{
	int r = access(p, mode);

	rec_add(p, false);
	return r;
}

int moat_fsrec_fstatat(int dfd, const char *name, struct stat *st, int flags)
{
	int r = fstatat(dfd, name, st, flags);

	rec_at(dfd, name, false);
	return r;
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
	fd = open(p, flags, mode);
	if (rec.on)
		rec_add(p, fd_is_dir(fd));
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
	fd = openat(dfd, name, flags, mode);
	if (rec.on)
		rec_at(dfd, name, fd_is_dir(fd));
	return fd;
}

DIR *moat_fsrec_opendir(const char *p)
{
	DIR *d = opendir(p);

	rec_add(p, true);
	return d;
}

DIR *moat_fsrec_fdopendir(int fd)
{
	if (rec.on)
		rec_at(fd, NULL, true);
	return fdopendir(fd);
}

char *moat_fsrec_realpath(const char *p, char *out)
{
	char *r = realpath(p, out);

	rec_add(p, false);
	if (r)
		rec_add(r, false);
	return r;
}

ssize_t moat_fsrec_readlink(const char *p, char *buf, size_t n)
{
	ssize_t r = readlink(p, buf, n);

	rec_add(p, false);
	return r;
}

ssize_t moat_fsrec_readlinkat(int dfd, const char *name, char *buf, size_t n)
{
	ssize_t r = readlinkat(dfd, name, buf, n);

	rec_at(dfd, name, false);
	return r;
}

/* ------------------------------------------------------------------ */
/* the watch                                                          */
/* ------------------------------------------------------------------ */

struct watch_dir {
	int wd;
	bool all;     /* every entry matters */
	char **names; /* else these entries */
	size_t n;
};

struct moat_fswatch {
	int fd;
	pid_t holder; /* holds the last reference to fd (watch_hold) */
	struct watch_dir *v;
	size_t n;
	bool spoiled; /* an event that matters was seen */
};

static bool fs_watchable(const char *dir)
{
	struct statfs sf;

	if (statfs(dir, &sf) < 0)
		return false;
	switch ((unsigned long)sf.f_type) {
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
	free(w->v);
	free(w);
}

/* Watch dir: all its entries (name NULL), or the entry name. 0; -1 when
 * the kernel refused the watch (errno); -2 when it must not be relied on
 * (a filesystem not watched, too many directories, no memory). */
static int watch_add(struct moat_fswatch *w, const char *dir, const char *name, size_t nl)
{
	struct watch_dir *d = NULL;
	int wd;

	wd = inotify_add_watch(w->fd, dir, FSWATCH_EVENTS);
	if (wd < 0)
		return -1;
	for (size_t i = 0; i < w->n && !d; i++)
		if (w->v[i].wd == wd)
			d = &w->v[i];
	if (!d) {
		struct watch_dir *v;

		if (w->n >= FSWATCH_MAX_DIRS || !fs_watchable(dir))
			return -2;
		v = realloc(w->v, (w->n + 1) * sizeof(*v));
		if (!v)
			return -2;
		w->v = v;
		d = &w->v[w->n++];
		memset(d, 0, sizeof(*d));
		d->wd = wd;
	}
	if (!name) {
		d->all = true;
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

/* Every directory on the way to path, each for the next name; path
 * itself too when it is a directory that was opened. A symbolic link on
 * the way: the way to where it leads too (a directory renamed there would
 * change the lookup without an event here); one that leads nowhere cannot
 * be watched (what it will lead to is not known). */
static int watch_path(struct moat_fswatch *w, const char *path, bool opened, int depth)
{
	char pre[PATH_MAX], real[PATH_MAX];
	const char *c = path;
	int r;

	if (strlen(path) >= sizeof(pre) || depth > 16)
		return -1;
	for (;;) {
		const char *name = c + 1, *next = strchr(name, '/');
		size_t nl = next ? (size_t)(next - name) : strlen(name), dl = (size_t)(c - path);
		struct stat st;

		if (nl == 0) {
			if (!next)
				break; /* a trailing '/' */
			c = next;
			continue;
		}
		memcpy(pre, path, dl);
		pre[dl] = '\0';
		r = watch_add(w, dl ? pre : "/", name, nl);
		if (r == -2 || (r == -1 && errno != ENOENT && errno != ENOTDIR))
			return -1;
		if (r == -1)
			return 0; /* the way ends here: its parent watches the name */
		memcpy(pre, path, dl + 1 + nl);
		pre[dl + 1 + nl] = '\0';
		if (lstat(pre, &st) < 0)
			return 0; /* nothing there (yet): the name is watched */
		if (S_ISLNK(st.st_mode)) {
			if (!realpath(pre, real))
				return -1;
			if (watch_path(w, real, false, depth + 1) < 0)
				return -1;
		}
		if (!next)
			break;
		c = next;
	}
	r = opened ? watch_add(w, path, NULL, 0) : 0;
	if (r == -2 || (r == -1 && errno != ENOENT && errno != ENOTDIR))
		return -1;
	return 0;
}

struct moat_fswatch *moat_fswatch_start(void)
{
	struct moat_fswatch *w;
	bool bad = rec.bad;

	rec.on = false;
	if (bad || !(w = calloc(1, sizeof(*w)))) {
		rec_clear();
		return NULL;
	}
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		free(w);
		rec_clear();
		return NULL;
	}
	for (size_t i = 0; i < rec.n; i++) {
		if (watch_path(w, rec.v[i].path, rec.v[i].opened, 0) < 0) {
			moat_fswatch_free(w);
			rec_clear();
			return NULL;
		}
	}
	rec_clear();
	w->holder = watch_hold(w->fd);
	return w;
}

/* Does the event matter? */
static bool event_matters(const struct moat_fswatch *w, const struct inotify_event *ev)
{
	if (ev->mask & (IN_Q_OVERFLOW | IN_IGNORED | IN_UNMOUNT | IN_DELETE_SELF | IN_MOVE_SELF))
		return true;
	for (size_t i = 0; i < w->n; i++) {
		const struct watch_dir *d = &w->v[i];

		if (d->wd != ev->wd)
			continue;
		if (d->all || !ev->len)
			return true;
		for (size_t k = 0; k < d->n; k++)
			if (!strcmp(d->names[k], ev->name))
				return true;
		return false;
	}
	return true; /* a watch we do not know */
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
