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
	free(c->order);
	free(c->pos);
	free(c->end);
	free(c->first);
	free(c->kids);
	free(c->ws);
	free(c);
}

size_t moat_scan_check_add(struct moat_scan_check *c, size_t parent, const char *rel,
			   const struct stat *st, bool settled)
{
	struct moat_scan_dir *d;

	if (c->failed)
		return SIZE_MAX;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct moat_scan_dir *v = realloc(c->v, cap * sizeof(*v));

		if (!v) {
			c->failed = true;
			return SIZE_MAX;
		}
		c->v = v;
		c->cap = cap;
	}
	d = &c->v[c->n];
	memset(d, 0, sizeof(*d));
	if (!(d->rel = moat_strdup(rel))) {
		c->failed = true;
		return SIZE_MAX;
	}
	d->parent = parent;
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	d->ct = st->st_ctim;
	d->mt = st->st_mtim;
	d->settled = settled;
	c->sorted = false;
	return c->n++;
}

/* The order (parents first, each subtree in one run), by the parents'
 * indices: no comparison of paths. */
static bool put_in_order(struct moat_scan_check *c)
{
	size_t n = c->n, *stack, top = 0, k = 0;

	c->order = malloc((n + 1) * sizeof(size_t));
	c->pos = malloc((n + 1) * sizeof(size_t));
	c->end = malloc((n + 1) * sizeof(size_t));
	c->first = calloc(n + 2, sizeof(size_t));
	c->kids = malloc((n + 1) * sizeof(size_t));
	stack = malloc((n + 1) * sizeof(size_t));
	if (!c->order || !c->pos || !c->end || !c->first || !c->kids || !stack) {
		free(stack);
		return false;
	}
	c->root = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		if (c->v[i].parent >= n) {
			if (c->v[i].rel[0] || c->root != SIZE_MAX) {
				free(stack);
				return false; /* (a directory without its parent: never) */
			}
			c->root = i;
		} else {
			c->first[c->v[i].parent + 1]++;
		}
	}
	for (size_t i = 0; i < n; i++)
		c->first[i + 1] += c->first[i];
	{
		size_t *fill = c->pos; /* (reused below) */

		memcpy(fill, c->first, n * sizeof(size_t));
		for (size_t i = 0; i < n; i++)
			if (c->v[i].parent < n)
				c->kids[fill[c->v[i].parent]++] = i;
	}
	/* depth first from the root; an entry's end is set when its subtree
	 * is done (marked by pushing it again, as ~i) */
	if (c->root != SIZE_MAX)
		stack[top++] = c->root;
	while (top) {
		size_t i = stack[--top];

		if (i >= n) {
			c->end[~i] = k;
			continue;
		}
		c->pos[i] = k;
		c->order[k++] = i;
		stack[top++] = ~i;
		for (size_t j = c->first[i]; j < c->first[i + 1]; j++)
			stack[top++] = c->kids[j];
	}
	free(stack);
	return k == n;
}

/* The index of the directory at rel (below the workspace), following the
 * children's lists: SIZE_MAX when the scan did not rely on it. */
static size_t find_idx(const struct moat_scan_check *c, const char *rel)
{
	size_t i = c->root;

	while (i != SIZE_MAX && *rel) {
		size_t nl = strcspn(rel, "/"), next = SIZE_MAX;

		for (size_t j = c->first[i]; j < c->first[i + 1] && next == SIZE_MAX; j++) {
			const char *r = c->v[c->kids[j]].rel, *name = strrchr(r, '/');

			name = name ? name + 1 : r;
			if (strlen(name) == nl && !memcmp(name, rel, nl))
				next = c->kids[j];
		}
		i = next;
		rel += nl + (rel[nl] == '/');
	}
	return i;
}

static struct moat_scan_dir *find(const struct moat_scan_check *c, const char *rel)
{
	size_t i;

	if (!c || !c->sorted)
		return NULL;
	i = find_idx(c, rel);
	return i == SIZE_MAX ? NULL : &c->v[i];
}

/* Mark the directories at or below path (absolute) covered or not. */
static void mark(struct moat_scan_check *c, const char *path, bool covered)
{
	size_t wl = strlen(c->ws), i;

	if (moat_path_within(c->ws, path)) {
		/* the workspace itself is at or below it: every directory */
		for (i = 0; i < c->n; i++)
			c->v[i].covered = covered;
		return;
	}
	if (!moat_path_within(path, c->ws))
		return;
	i = find_idx(c, path + wl + 1);
	/* (a path the scan did not rely on has nothing it relied on below) */
	for (size_t k = i == SIZE_MAX ? 0 : c->pos[i]; i != SIZE_MAX && k < c->end[i]; k++)
		c->v[c->order[k]].covered = covered;
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
		if (!put_in_order(c)) {
			c->failed = true;
			return;
		}
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
	return d->dev == st->st_dev && d->ino == st->st_ino && d->ct.tv_sec == st->st_ctim.tv_sec &&
	       d->ct.tv_nsec == st->st_ctim.tv_nsec && d->mt.tv_sec == st->st_mtim.tv_sec &&
	       d->mt.tv_nsec == st->st_mtim.tv_nsec;
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

#define SCAN_SETTLE_TRIES 20

bool moat_ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* fstat of a directory about to be listed, taken once its ctime is older
 * than the coarse clock read just before: the kernel stamps every change
 * with that clock or a finer one, so a change after the listing is sure
 * to stamp another change time (scancheck.c). One changed in the current tick
 * (1 to 10 ms) is waited out, at most SCAN_SETTLE_TRIES times; *settled is
 * false when it kept changing, or when its ctime is in the future (a clock
 * set back: not waited for). -1 when fstat fails. */
int moat_scan_fstat_settled(int fd, struct stat *st, bool *settled)
{
	for (int i = 0;; i++) {
		struct timespec c0, ms = {0, 1000000};

		clock_gettime(CLOCK_REALTIME_COARSE, &c0);
		if (fstat(fd, st) < 0)
			return -1;
		*settled = moat_ts_before(&st->st_ctim, &c0);
		if (*settled || st->st_ctim.tv_sec > c0.tv_sec + 1 || i == SCAN_SETTLE_TRIES)
			return 0;
		nanosleep(&ms, NULL);
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

/* The directories open on the way down (their indices, parents first):
 * each looked up in its parent's descriptor, one name, as the walk did. */
#define CHECK_DEPTH 128

int moat_scan_check_verify(const struct moat_scan_check *c, char *why, size_t whysz)
{
	int fds[CHECK_DEPTH];
	size_t idx[CHECK_DEPTH], depth = 1;
	struct timespec now;
	int r = 0;

	if (!c)
		return 0;
	if (c->failed || !c->sorted || c->root == SIZE_MAX) {
		say(why, whysz, c->ws, "");
		return c->n ? -ESTALE : 0;
	}
	fds[0] = open(c->ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	idx[0] = c->root;
	if (fds[0] < 0) {
		say(why, whysz, c->ws, "");
		return -ESTALE;
	}
	for (size_t k = 0; k < c->n && r == 0; k++) {
		size_t i = c->order[k];
		const struct moat_scan_dir *d = &c->v[i];
		const char *name;
		bool push;
		struct stat st;
		int fd = -1;

		if (d->covered)
			continue;
		while (depth > 1 && idx[depth - 1] != d->parent)
			close(fds[--depth]);
		/* its name in its parent, open; else (its parent covered, or too
		 * deep) its path from the workspace, opened beneath with no link
		 * followed */
		name = strrchr(d->rel, '/');
		name = idx[depth - 1] == d->parent ? (name ? name + 1 : d->rel) : d->rel;
		push = depth < CHECK_DEPTH && c->end[i] > k + 1;
		if (i == c->root)
			r = fstat(fds[0], &st);
		else if (!push && !strchr(name, '/'))
			r = fstatat(fds[depth - 1], name, &st, AT_SYMLINK_NOFOLLOW);
		else if ((fd = moat_open_beneath(name == d->rel ? fds[0] : fds[depth - 1], name,
						 true)) < 0)
			r = -1;
		else
			r = fstat(fd, &st);
		if (r == 0 && (!S_ISDIR(st.st_mode) || !same_times(d, &st)))
			r = -1;
		if (r < 0)
			say(why, whysz, c->ws, d->rel);
		if (fd >= 0 && push && r == 0) {
			fds[depth] = fd;
			idx[depth++] = i;
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
