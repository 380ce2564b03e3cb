/* The check of the workspace scan once the masks are attached.
 *
 * The scan reads the workspace one directory after another while anyone
 * may rename, swap or replace its directories: a listing of a directory
 * and the reading of what it names happen at different times, so a swap
 * in between can show the scan one directory under two names and hide
 * the other (and its secret), and a mask attached later by path can land
 * in a directory that has moved. So the scan notes, for every directory
 * it relies on (lists, or takes unchanged from a record), its identity
 * (device, inode) and change times, taken before its entries are. Once
 * the sandbox's child has attached every mask, it opens each of them
 * again by its path below the workspace (no link followed), in its own
 * mount namespace, and compares: all unchanged, the tree at a moment
 * between the scan's end and the check's start was the tree the scan
 * read (no entry can be added to, removed from or renamed in a directory
 * without changing its ctime, which nobody can set back: utimes sets it
 * to now; a directory replaced or moved has another identity at that
 * path), so every secret in it then was found, and each mask was
 * attached through directories that were the scan's. From then on a
 * mask stays on its entry wherever it is renamed to. Any difference: the
 * child stops before anything runs, and the runner prepares again
 * (docs/sandbox.md: masks).
 *
 * A change stamped in the same tick of the clock that stamps changes as
 * an earlier one can leave the times as they were: the scan takes a
 * directory's times only once its ctime is older than that clock read
 * before them (it waits out the tick otherwise, scan.c), so any later
 * change stamps another. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <unistd.h>

#include "base/str.h"
#include "core/path.h"
#include "sandbox/sandbox.h"
#include "sandbox/scancheck.h"

struct moat_scan_check *moat_scan_check_new(const char *ws)
{
	struct moat_scan_check *c = calloc(1, sizeof(*c));

	if (c && !(c->ws = moat_strdup(ws))) {
		free(c);
		c = NULL;
	}
	return c;
}

void moat_scan_check_free(struct moat_scan_check *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].rel);
	free(c->v);
	free(c->ws);
	free(c);
}

bool moat_scan_check_add(struct moat_scan_check *c, const char *rel, const struct stat *st,
			 bool settled)
{
	struct moat_scan_dir *d;

	if (c->failed)
		return false;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct moat_scan_dir *v = realloc(c->v, cap * sizeof(*v));

		if (!v) {
			c->failed = true;
			return false;
		}
		c->v = v;
		c->cap = cap;
	}
	d = &c->v[c->n];
	memset(d, 0, sizeof(*d));
	if (!(d->rel = moat_strdup(rel))) {
		c->failed = true;
		return false;
	}
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	d->ct = st->st_ctim;
	d->mt = st->st_mtim;
	d->settled = settled;
	c->n++;
	c->sorted = false;
	return true;
}

/* Paths in the order of a walk, parents first: '/' before every other
 * byte, so that a directory's subtree follows it at once (and every path
 * that starts with a given one is in one run). */
static int path_cmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;

	for (;; x++, y++) {
		int cx = *x == '/' ? 1 : *x, cy = *y == '/' ? 1 : *y;

		if (cx != cy || !cx)
			return cx - cy;
	}
}

static int dir_cmp(const void *a, const void *b)
{
	return path_cmp(((const struct moat_scan_dir *)a)->rel, ((const struct moat_scan_dir *)b)->rel);
}

/* the first directory whose rel is not below key (sorted) */
static size_t lower_bound(const struct moat_scan_check *c, const char *key)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (path_cmp(c->v[mid].rel, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct moat_scan_dir *find(const struct moat_scan_check *c, const char *rel)
{
	size_t i;

	if (!c || !c->sorted)
		return NULL;
	i = lower_bound(c, rel);
	return i < c->n && !strcmp(c->v[i].rel, rel) ? &c->v[i] : NULL;
}

/* Mark the directories at or below path (absolute) covered or not. */
static void mark(struct moat_scan_check *c, const char *path, bool covered)
{
	size_t wl = strlen(c->ws), rl;
	const char *rel;

	if (moat_path_within(c->ws, path)) {
		/* the workspace itself is at or below it: every directory */
		for (size_t i = 0; i < c->n; i++)
			c->v[i].covered = covered;
		return;
	}
	if (!moat_path_within(path, c->ws))
		return;
	rel = path + wl + (c->ws[wl - 1] == '/' ? 0 : 1);
	rl = strlen(rel);
	/* (every rel that starts with rel is in one run of the sorted list) */
	for (size_t i = lower_bound(c, rel); i < c->n && !strncmp(c->v[i].rel, rel, rl); i++)
		if (c->v[i].rel[rl] == '\0' || c->v[i].rel[rl] == '/')
			c->v[i].covered = covered;
}

struct region {
	const char *path;
	size_t len;
	bool covers;
};

static int region_cmp(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	return x->len < y->len ? -1 : x->len > y->len;
}

void moat_scan_check_cover(struct moat_scan_check *c, const struct moat_mounts *m)
{
	struct region *r;
	size_t nr = 0;

	if (!c)
		return;
	if (!c->sorted) {
		if (c->n)
			qsort(c->v, c->n, sizeof(*c->v), dir_cmp);
		c->sorted = true;
	}
	/* what hides a directory in the sandbox (a mask, a tmpfs, the home's
	 * overlay, whose identities are not the scan's) and what brings one
	 * back (a path kept or bound back: the same tree, cloned); the
	 * deepest one above a directory decides */
	r = malloc((m->n ? m->n : 1) * sizeof(*r));
	if (!r) {
		c->failed = true;
		return;
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct moat_mount_op *op = &m->ops[i];
		bool covers;

		switch (op->kind) {
		case MOAT_MNT_MASK_DIR:
		case MOAT_MNT_TMPFS:
		case MOAT_MNT_STASH:
		case MOAT_MNT_OVERLAY:
			covers = true;
			break;
		case MOAT_MNT_KEEP:
		case MOAT_MNT_REVEAL:
			covers = false;
			break;
		default:
			continue;
		}
		if (!moat_path_within(op->target, c->ws) && !moat_path_within(c->ws, op->target))
			continue;
		r[nr].path = op->target;
		r[nr].len = strlen(op->target);
		r[nr++].covers = covers;
	}
	qsort(r, nr, sizeof(*r), region_cmp);
	for (size_t i = 0; i < nr; i++)
		mark(c, r[i].path, r[i].covers);
	free(r);
}

static bool same_times(const struct moat_scan_dir *d, const struct stat *st)
{
	return d->dev == st->st_dev && d->ino == st->st_ino &&
	       d->ct.tv_sec == st->st_ctim.tv_sec && d->ct.tv_nsec == st->st_ctim.tv_nsec &&
	       d->mt.tv_sec == st->st_mtim.tv_sec && d->mt.tv_nsec == st->st_mtim.tv_nsec;
}

int moat_scan_check_unchanged_at(const struct moat_scan_check *c, const char *rel, int dfd)
{
	const struct moat_scan_dir *d = find(c, rel);
	struct stat st;

	if (!d)
		return 0; /* (not relied on) */
	if (fstat(dfd, &st) < 0 || !same_times(d, &st) || !S_ISDIR(st.st_mode))
		return -ESTALE;
	return 0;
}

void moat_scan_check_retake(struct moat_scan_check *c, const char *rel, int dfd)
{
	struct moat_scan_dir *d = find(c, rel);
	struct stat st;

	if (!d)
		return;
	/* moat's own changes since moat_scan_check_unchanged_at: a change by
	 * another between them and this (or later in the same tick) can only
	 * add to it what was not in the tree the scan read (each directory of
	 * that tree is still looked at by its path and times), like a secret
	 * made after the scan */
	if (fstat(dfd, &st) == 0 && st.st_dev == d->dev && st.st_ino == d->ino) {
		d->ct = st.st_ctim;
		d->mt = st.st_mtim;
		d->settled = true;
	} else {
		d->ino = 0; /* (it is another now: the check refuses) */
	}
}

int moat_open_beneath(int wsfd, const char *rel, bool dir)
{
	struct open_how how;
	char part[NAME_MAX + 1];
	const char *p = rel;
	int fd, dfd = wsfd;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC | (dir ? O_DIRECTORY : 0);
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, wsfd, rel, &how, sizeof(how));
	if (fd >= 0)
		return fd;
	if (errno != ENOSYS && errno != EPERM)
		return -errno;
	/* without openat2: one component at a time, none a link, none ".." */
	fd = -ENOENT;
	while (*p) {
		size_t n = strcspn(p, "/");
		bool last = p[n] == '\0';

		if (n == 0 || n > NAME_MAX || (n <= 2 && p[0] == '.' && (n == 1 || p[1] == '.'))) {
			fd = -EINVAL;
			break;
		}
		memcpy(part, p, n);
		part[n] = '\0';
		fd = openat(dfd, part,
			    O_PATH | O_NOFOLLOW | O_CLOEXEC | (!last || dir ? O_DIRECTORY : 0));
		if (fd < 0)
			fd = -errno;
		if (dfd != wsfd)
			close(dfd);
		if (fd < 0 || last)
			break;
		dfd = fd;
		p += n + 1;
	}
	return fd;
}

static void say(char *why, size_t whysz, const char *ws, const char *rel)
{
	size_t n = 0;

	if (!whysz)
		return;
	for (const char *s = ws; *s && n + 1 < whysz; s++)
		why[n++] = *s;
	if (*rel && n + 1 < whysz)
		why[n++] = '/';
	for (const char *s = rel; *s && n + 1 < whysz; s++)
		why[n++] = *s;
	why[n] = '\0';
}

/* rel is below the directory top (its rel, tl bytes; 0: the workspace) */
static bool below(const char *top, size_t tl, const char *rel)
{
	return tl == 0 || (!strncmp(rel, top, tl) && rel[tl] == '/');
}

/* The directories open on the way down (their rels, parents first): each
 * is looked up in its parent's descriptor, one name, as the walk did. */
#define CHECK_DEPTH 128

int moat_scan_check_verify(const struct moat_scan_check *c, char *why, size_t whysz)
{
	int fds[CHECK_DEPTH];
	const char *rels[CHECK_DEPTH];
	size_t lens[CHECK_DEPTH], depth = 1;
	struct timespec now;
	int r = 0;

	if (!c)
		return 0;
	if (c->failed || !c->sorted) {
		say(why, whysz, c->ws, "");
		return -ESTALE;
	}
	fds[0] = open(c->ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	rels[0] = "";
	lens[0] = 0;
	if (fds[0] < 0) {
		say(why, whysz, c->ws, "");
		return -ESTALE;
	}
	for (size_t i = 0; i < c->n && r == 0; i++) {
		const struct moat_scan_dir *d = &c->v[i];
		const char *rest;
		size_t rl = strlen(d->rel);
		bool push;
		struct stat st;
		int fd = -1;

		if (d->covered)
			continue;
		while (depth > 1 && !below(rels[depth - 1], lens[depth - 1], d->rel))
			close(fds[--depth]);
		/* what lies between the deepest directory open and this one:
		 * its name, or (its parent covered, or too deep) a path, opened
		 * beneath with no link followed */
		rest = d->rel + lens[depth - 1] + (lens[depth - 1] ? 1 : 0);
		push = depth < CHECK_DEPTH && i + 1 < c->n && below(d->rel, rl, c->v[i + 1].rel);
		if (!*d->rel)
			r = fstat(fds[0], &st);
		else if (!push && !strchr(rest, '/'))
			r = fstatat(fds[depth - 1], rest, &st, AT_SYMLINK_NOFOLLOW);
		else if ((fd = moat_open_beneath(fds[depth - 1], rest, true)) < 0)
			r = -1;
		else
			r = fstat(fd, &st);
		if (r == 0 && (!S_ISDIR(st.st_mode) || !same_times(d, &st)))
			r = -1;
		if (r < 0)
			say(why, whysz, c->ws, d->rel);
		if (fd >= 0 && push && r == 0) {
			fds[depth] = fd;
			rels[depth] = d->rel;
			lens[depth++] = rl;
		} else if (fd >= 0) {
			close(fd);
		}
	}
	while (depth)
		close(fds[--depth]);
	if (r < 0)
		return -ESTALE;
	/* a ctime in the future (a clock set back since it was stamped) proves
	 * nothing once a change could be stamped with it */
	clock_gettime(CLOCK_REALTIME, &now);
	for (size_t i = 0; i < c->n; i++) {
		const struct moat_scan_dir *d = &c->v[i];

		if (!d->covered && !d->settled &&
		    (d->ct.tv_sec < now.tv_sec ||
		     (d->ct.tv_sec == now.tv_sec && d->ct.tv_nsec <= now.tv_nsec))) {
			say(why, whysz, c->ws, d->rel);
			return -ESTALE;
		}
	}
	return 0;
}

int moat_scan_check_child(const struct moat_mounts *m, struct moat_child_report *rep)
{
	int r;

	if (!m->check)
		return 0;
	r = moat_scan_check_verify(m->check, rep->detail, sizeof(rep->detail));
	if (r < 0) {
		rep->step = MOAT_STEP_MOUNT;
		rep->err = ESTALE;
		return r;
	}
	rep->detail[0] = '\0';
	return 0;
}
