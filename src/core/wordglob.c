/* Glob words expanded through the filesystem (wordglob.h). The C
 * library's glob(3) has no bound on what it reads (and no directory
 * hooks to add one portably): the expansion is done here, one component
 * at a time, with readdir(3) and fnmatch(3). */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/wordglob.h"

struct expansion {
	struct moat_wordglob_budget *b;
	int (*visit)(const char *match, void *ud);
	void *ud;
	char path[PATH_MAX];
};

void moat_wordglob_budget_init(struct moat_wordglob_budget *b)
{
	b->entries = MOAT_WORDGLOB_MAX_ENTRIES;
	b->matches = MOAT_WORDGLOB_MAX_MATCHES;
}

static bool has_glob(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			return true;
	return false;
}

static int found(struct expansion *x)
{
	struct stat st;

	/* (a match is a name that exists; a dangling link is one too) */
	if (lstat(x->path, &st) < 0)
		return 0;
	if (!x->b->matches)
		return -E2BIG;
	x->b->matches--;
	return x->visit(x->path, x->ud);
}

/* Expand rest below x->path[0..len) (a directory, or "" for the root). */
static int expand(struct expansion *x, size_t len, const char *rest, int depth)
{
	const char *e;
	size_t cl;
	char comp[NAME_MAX + 1];
	struct dirent *d;
	DIR *dir;
	int r = 0;

	if (depth > 256)
		return -E2BIG;
	while (*rest == '/')
		rest++;
	if (!*rest)
		return found(x);
	e = strchr(rest, '/');
	cl = e ? (size_t)(e - rest) : strlen(rest);
	if (!has_glob(rest, cl)) {
		if (len + 1 + cl >= sizeof(x->path))
			return 0; /* (the kernel cannot open it either) */
		x->path[len] = '/';
		memcpy(x->path + len + 1, rest, cl);
		x->path[len + 1 + cl] = '\0';
		return expand(x, len + 1 + cl, rest + cl, depth + 1);
	}
	if (cl > NAME_MAX)
		return 0; /* a component no name can match */
	memcpy(comp, rest, cl);
	comp[cl] = '\0';
	if (!x->b->entries)
		return -E2BIG;
	x->b->entries--;
	dir = opendir(len ? x->path : "/");
	if (!dir)
		return 0; /* not a directory, or one the shell cannot read either */
	while ((d = readdir(dir))) {
		size_t nl;

		/* SECURITY: "." and ".." match a component spelled with a
		 * leading dot (".*", ".[.]") in dash, bash before 5.2 and bash
		 * with globskipdots off, which a nested "sh -c" or "bash +O
		 * globskipdots -c" runs: read as matches too, more paths checked
		 * than bash 5.2 opens. Never for "*": no shell matches them. */
		if ((!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..")) && comp[0] != '.')
			continue;
		if (!x->b->entries) {
			r = -E2BIG;
			break;
		}
		x->b->entries--;
		if (fnmatch(comp, d->d_name, FNM_PERIOD | FNM_NOESCAPE) != 0)
			continue;
		nl = strlen(d->d_name);
		if (len + 1 + nl >= sizeof(x->path))
			continue;
		x->path[len] = '/';
		memcpy(x->path + len + 1, d->d_name, nl + 1);
		r = expand(x, len + 1 + nl, rest + cl, depth + 1);
		x->path[len] = '\0';
		if (r)
			break;
	}
	closedir(dir);
	return r;
}

int moat_wordglob(const char *pattern, struct moat_wordglob_budget *b,
		  int (*visit)(const char *match, void *ud), void *ud)
{
	struct expansion *x;
	int r;

	if (pattern[0] != '/')
		return -EINVAL;
	x = malloc(sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->b = b;
	x->visit = visit;
	x->ud = ud;
	x->path[0] = '\0';
	r = expand(x, 0, pattern, 0);
	free(x);
	return r;
}
