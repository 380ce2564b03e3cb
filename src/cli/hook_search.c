/* The bounded walk behind a search tool's root (hook_search.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/str.h"
#include "cli/hook_search.h"
#include "core/glob.h"
#include "core/policy_check.h"

struct walk {
	const struct moat_policy *p;
	struct moat_glob *filter;
	bool filter_by_name;
	size_t root_len;
	size_t entries;
	char *hit;
	size_t hitsz;
	struct moat_decision *why;
};

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
	const char *rel = path + w->root_len, *name;

	if (!w->filter)
		return true;
	while (*rel == '/')
		rel++;
	name = strrchr(path, '/');
	name = name ? name + 1 : path;
	if (w->filter_by_name)
		return moat_glob_match(w->filter, name, strlen(name));
	return moat_glob_match(w->filter, rel, strlen(rel));
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

static int read_dir(struct walk *w, struct queue *q, const struct dir_item *it)
{
	char path[PATH_MAX];
	size_t dl = strlen(it->path);
	struct dirent *e;
	DIR *d;
	int r = 0;

	d = opendir(it->path);
	if (!d) {
		/* SECURITY: only a directory the user cannot read (or that went
		 * away) is skipped: the search cannot read it either */
		if (errno == EACCES || errno == ENOENT || errno == ENOTDIR)
			return 0;
		return -errno;
	}
	while ((errno = 0, e = readdir(d))) {
		unsigned char type = e->d_type;
		int n;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (++w->entries > HOOK_SEARCH_MAX_ENTRIES) {
			r = -E2BIG;
			break;
		}
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
			if (it->depth + 1 > HOOK_SEARCH_MAX_DEPTH) {
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
	}
	if (!e && errno && !r)
		r = -errno;
	closedir(d);
	return r;
}

int hook_search_denied(const struct moat_policy *p, const char *root, const char *filter,
		       char *hit, size_t hitsz, struct moat_decision *why)
{
	struct walk w = {.p = p, .hit = hit, .hitsz = hitsz, .why = why};
	struct queue q = {0};
	char real[PATH_MAX];
	struct stat st;
	int r;

	if (!p || !root || root[0] != '/')
		return -EINVAL;
	/* (the policy checked the root as written, its links and its target) */
	if (!realpath(root, real) || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (filter && filter[0] && filter[0] != '!' && filter[0] != '/') {
		struct moat_error e;

		/* a filter moat cannot read limits nothing: every file counts */
		if (moat_glob_compile(filter, MOAT_GLOB_PATH, &w.filter, &e) < 0)
			w.filter = NULL;
		w.filter_by_name = !strchr(filter, '/');
	}
	w.root_len = strlen(real);
	r = push(&q, real, 0);
	while (r == 0 && q.head < q.n) {
		struct dir_item it = q.v[q.head++];

		r = read_dir(&w, &q, &it);
		free(it.path);
	}
	queue_release(&q);
	moat_glob_free(w.filter);
	return r;
}
