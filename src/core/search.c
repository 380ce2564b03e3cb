/* The bounded walk below a search root (search.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <search.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/str.h"
#include "core/search.h"
#include "core/glob.h"
#include "core/policy_check.h"

struct walk {
	const struct moat_policy *p;
	struct moat_glob **filter; /* any of them; NULL: every file counts */
	bool *filter_by_name;
	size_t nfilter;
	const char *root; /* the root's real path */
	size_t root_len;
	struct moat_search_budget *budget;
	char *hit;
	size_t hitsz;
	struct moat_decision *why;
	bool follow;   /* MOAT_SEARCH_FOLLOW: links to directories are walked */
	void *visited; /* (follow) the directories read, by device and inode (tsearch) */
};

struct dir_id {
	dev_t dev;
	ino_t ino;
};

static int dir_id_cmp(const void *a, const void *b)
{
	const struct dir_id *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Following links: has the directory open at fd been read already (a
 * loop, or a second way to it)? 1 yes, 0 no (now marked), -ENOMEM. */
static int seen_dir(struct walk *w, int fd)
{
	struct dir_id *id;
	struct stat st;
	void *got;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!(id = malloc(sizeof(*id))))
		return -ENOMEM;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	got = tsearch(id, &w->visited, dir_id_cmp);
	if (!got) {
		free(id);
		return -ENOMEM;
	}
	if (*(struct dir_id **)got != id) {
		free(id);
		return 1;
	}
	return 0;
}

/* A directory to read, with its depth below the root. */
struct dir_item {
	char *path;
	unsigned depth;
};

struct queue {
	struct dir_item *v;
	size_t head, n, cap;
};

static int push(struct queue *q, const char *path, unsigned depth)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		struct dir_item *v = realloc(q->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		q->v = v;
		q->cap = cap;
	}
	q->v[q->n].path = moat_strdup(path);
	if (!q->v[q->n].path)
		return -ENOMEM;
	q->v[q->n].depth = depth;
	q->n++;
	return 0;
}

static void queue_release(struct queue *q)
{
	for (size_t i = q->head; i < q->n; i++)
		free(q->v[i].path);
	free(q->v);
}

/* Does the search read this entry at all (the filter)? */
static bool searched(const struct walk *w, const char *path)
{
	const char *rel, *name;

	/* (a tree a followed link leads to lies outside the root: every
	 * file of it counts) */
	if (!w->filter || strncmp(path, w->root, w->root_len) ||
	    (path[w->root_len] != '/' && path[w->root_len] != '\0'))
		return true;
	rel = path + w->root_len;
	while (*rel == '/')
		rel++;
	name = strrchr(path, '/');
	name = name ? name + 1 : path;
	for (size_t i = 0; i < w->nfilter; i++)
		if (w->filter_by_name[i] ? moat_glob_match(w->filter[i], name, strlen(name))
					 : moat_glob_match(w->filter[i], rel, strlen(rel)))
			return true;
	return false;
}

/* JavaScript's \s beyond ASCII, in UTF-8 (String.prototype.split(/\s+/)
 * splits at each): U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F,
 * U+205F, U+3000, U+FEFF */
static const char *const js_spaces[] = {
    "\xc2\xa0",     "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82",
    "\xe2\x80\x83", "\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87",
    "\xe2\x80\x88", "\xe2\x80\x89", "\xe2\x80\x8a", "\xe2\x80\xa8", "\xe2\x80\xa9",
    "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80", "\xef\xbb\xbf",
};

/* The length of the whitespace at s (0: none) */
static size_t js_space(const char *s)
{
	if (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		return 1;
	if (!((unsigned char)*s & 0x80))
		return 0;
	for (size_t i = 0; i < sizeof(js_spaces) / sizeof(js_spaces[0]); i++) {
		size_t n = strlen(js_spaces[i]);

		if (!strncmp(s, js_spaces[i], n))
			return n;
	}
	return 0;
}

int moat_search_pieces(const char *glob, char ***ret, size_t *ret_n)
{
	size_t len = strlen(glob), max = len / 2 + 2, n = 0;
	char **v = malloc(max * sizeof(char *) + len + 1);
	char *o;

	if (!v)
		return -ENOMEM;
	o = (char *)(v + max);
	for (const char *s = glob; *s;) {
		const char *e;
		size_t k, pl;
		bool brace;

		while ((k = js_space(s)))
			s += k;
		if (!*s)
			break;
		for (e = s; *e && !js_space(e); e++)
			;
		pl = (size_t)(e - s);
		brace = memchr(s, '{', pl) && memchr(s, '}', pl);
		/* one piece, or its comma-separated parts */
		for (const char *c = s; c < e;) {
			const char *ce = brace ? e : memchr(c, ',', (size_t)(e - c));

			if (!ce)
				ce = e;
			if (ce > c) {
				memcpy(o, c, (size_t)(ce - c));
				v[n++] = o;
				o += ce - c;
				*o++ = '\0';
			}
			c = ce + (ce < e);
		}
		s = e;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* 1 when the policy denies reading path (hit and why filled), else 0. */
static int denied(struct walk *w, const char *path)
{
	struct moat_decision d;

	/* a path the policy cannot check is not a clean one */
	if (moat_policy_check_path(w->p, "read_file", path, &d) < 0 || d.verdict == MOAT_DENY) {
		moat_strlcpy(w->hit, path, w->hitsz);
		*w->why = d;
		return 1;
	}
	return 0;
}

/* A symbolic link below the root: the link itself, and what it points at
 * (a search that follows links reads that). */
static int check_link(struct walk *w, const char *path)
{
	char real[PATH_MAX];

	if (denied(w, path))
		return 1;
	if (!realpath(path, real))
		return 0; /* dangling, or a loop: nothing to read */
	return denied(w, real);
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return ~0ull; /* SECURITY: no clock: past any deadline */
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

void moat_search_budget_init(struct moat_search_budget *b, unsigned max_ms)
{
	b->entries = MOAT_SEARCH_MAX_ENTRIES;
	b->max_ms = max_ms;
	b->deadline_ns = now_ns() + (unsigned long long)max_ms * 1000000ull;
}

void moat_search_budget_share(const struct moat_search_budget *pool, size_t parts,
			      struct moat_search_budget *share)
{
	unsigned long long now = now_ns();
	unsigned long long left = pool->deadline_ns > now ? pool->deadline_ns - now : 0;

	if (!parts)
		parts = 1;
	share->entries = pool->entries / parts;
	share->deadline_ns = now + left / parts;
	share->max_ms = pool->max_ms;
}

void moat_search_budget_spend(struct moat_search_budget *pool, size_t given,
			      const struct moat_search_budget *share)
{
	size_t spent = given > share->entries ? given - share->entries : 0;

	pool->entries = pool->entries > spent ? pool->entries - spent : 0;
}

/* Spend one entry: 0, or -E2BIG / -ETIMEDOUT past the budget (the clock
 * is read every 256 entries and at each directory). */
static int spend(struct walk *w, bool dir)
{
	struct moat_search_budget *b = w->budget;

	if (!b->entries)
		return -E2BIG;
	b->entries--;
	if ((dir || (b->entries & 255) == 0) && now_ns() >= b->deadline_ns)
		return -ETIMEDOUT;
	return 0;
}

static int read_dir(struct walk *w, struct queue *q, const struct dir_item *it)
{
	char path[PATH_MAX];
	size_t dl = strlen(it->path);
	struct dirent *e;
	DIR *d;
	int r = 0;

	if ((r = spend(w, true)) < 0)
		return r;
	d = opendir(it->path);
	if (!d) {
		/* SECURITY: only a directory the user cannot read (or that went
		 * away) is skipped: the search cannot read it either */
		if (errno == EACCES || errno == ENOENT || errno == ENOTDIR)
			return 0;
		return -errno;
	}
	if (w->follow && (r = seen_dir(w, dirfd(d))) != 0) {
		closedir(d);
		return r < 0 ? r : 0;
	}
	while ((errno = 0, e = readdir(d))) {
		unsigned char type = e->d_type;
		int n;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((r = spend(w, false)) < 0)
			break;
		n = snprintf(path, sizeof(path), "%s%s%s", it->path,
			     dl && it->path[dl - 1] == '/' ? "" : "/", e->d_name);
		if (n < 0 || (size_t)n >= sizeof(path)) {
			r = -ENAMETOOLONG;
			break;
		}
		if (type == DT_UNKNOWN) {
			struct stat st;

			if (lstat(path, &st) < 0)
				continue;
			type = S_ISDIR(st.st_mode)   ? DT_DIR
			       : S_ISLNK(st.st_mode) ? DT_LNK
						     : DT_REG;
		}
		if (type == DT_DIR) {
			if (it->depth + 1 > MOAT_SEARCH_MAX_DEPTH) {
				r = -E2BIG;
				break;
			}
			if ((r = push(q, path, it->depth + 1)) < 0)
				break;
			continue;
		}
		if (!searched(w, path))
			continue;
		r = type == DT_LNK ? check_link(w, path) : denied(w, path);
		if (r)
			break;
		/* SECURITY: a reader that follows links (grep -R, zip -r, tar
		 * -h) reads the tree a link to a directory leads to */
		if (type == DT_LNK && w->follow) {
			char real[PATH_MAX];
			struct stat st;

			if (realpath(path, real) && stat(real, &st) == 0 && S_ISDIR(st.st_mode) &&
			    (r = push(q, real, it->depth + 1)) < 0)
				break;
		}
	}
	if (!e && errno && !r)
		r = -errno;
	closedir(d);
	return r;
}

static void filters_free(struct walk *w)
{
	for (size_t i = 0; i < w->nfilter; i++)
		moat_glob_free(w->filter[i]);
	free(w->filter);
	w->filter = NULL;
	w->nfilter = 0;
}

/* The globs the search is limited to: w->nfilter of them, or none (every
 * file counts). */
static int compile_filters(struct walk *w, const char *filter, unsigned flags)
{
	char *one[1] = {(char *)filter}, **pieces = one;
	size_t n = 1;
	int r = 0;

	if (!filter || !filter[0])
		return 0;
	if ((flags & MOAT_SEARCH_GREP_GLOB) && moat_search_pieces(filter, &pieces, &n) < 0)
		return -ENOMEM;
	w->filter = calloc(n ? n : 1, sizeof(*w->filter) + sizeof(*w->filter_by_name));
	if (!w->filter) {
		r = -ENOMEM;
		goto out;
	}
	w->filter_by_name = (bool *)(w->filter + (n ? n : 1));
	for (size_t i = 0; i < n; i++) {
		struct moat_error e;

		/* SECURITY: a negated piece only takes files away: it limits
		 * nothing (the other pieces still do) */
		if (pieces[i][0] == '!')
			continue;
		/* a piece moat cannot read, or anchored at the root, limits
		 * nothing: every file counts */
		if (pieces[i][0] == '/' ||
		    moat_glob_compile(pieces[i], MOAT_GLOB_PATH, &w->filter[w->nfilter], &e) < 0) {
			filters_free(w);
			goto out;
		}
		w->filter_by_name[w->nfilter++] = !strchr(pieces[i], '/');
	}
	if (!w->nfilter)
		filters_free(w); /* only negations: every file counts */
out:
	if (pieces != one)
		free(pieces);
	return r;
}

int moat_search_denied(const struct moat_policy *p, const char *root, const char *filter,
		       unsigned flags, struct moat_search_budget *budget, char *hit, size_t hitsz,
		       struct moat_decision *why)
{
	struct walk w = {.p = p,
			 .budget = budget,
			 .hit = hit,
			 .hitsz = hitsz,
			 .why = why,
			 .follow = (flags & MOAT_SEARCH_FOLLOW) != 0};
	struct queue q = {0};
	char real[PATH_MAX];
	struct stat st;
	int r;

	if (!p || !root || root[0] != '/' || !budget)
		return -EINVAL;
	/* (the policy checked the root as written, its links and its target) */
	if (!realpath(root, real) || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if ((r = compile_filters(&w, filter, flags)) < 0)
		return r;
	w.root = real;
	w.root_len = strlen(real);
	r = push(&q, real, 0);
	while (r == 0 && q.head < q.n) {
		struct dir_item it = q.v[q.head++];

		r = read_dir(&w, &q, &it);
		free(it.path);
	}
	queue_release(&q);
	filters_free(&w);
	tdestroy(w.visited, free);
	return r;
}
