/* Multi-component denied-path patterns through a linked directory: which
 * link a pattern's component may stand for (scanlink.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/str.h"
#include "core/glob.h"
#include "sandbox/scanlink.h"
/* last: the lookups below are recorded for an armed sandbox's watch */
#include "sandbox/fsrec_wrap.h"

/* Does component k of lp fit name (nl bytes)? */
static bool comp_fits(const struct link_pat *lp, size_t k, const char *name, size_t nl)
{
	return lp->g[k] ? moat_glob_match(lp->g[k], name, nl)
			: strlen(lp->comp[k]) == nl && !memcmp(lp->comp[k], name, nl);
}

void moat_link_pat_release(struct link_pat *lp)
{
	for (size_t k = 0; k < lp->n; k++)
		moat_glob_free(lp->g[k]);
	free(lp->copy);
	memset(lp, 0, sizeof(*lp));
}

/* pat as a link pattern: 1, 0 when it is not one, -ENOMEM */
int moat_link_pat_of(const char *pat, struct link_pat *lp)
{
	const char *t = pat + 3;
	size_t n;
	char *c;

	memset(lp, 0, sizeof(*lp));
	if (strncmp(pat, "**/", 3) || strpbrk(t, "{}[]\\"))
		return 0;
	n = strlen(t);
	if (n > 3 && !strcmp(t + n - 3, "/**")) {
		n -= 3;
		lp->dir_only = true;
	}
	if (!(lp->copy = moat_strndup(t, n)))
		return -ENOMEM;
	for (c = lp->copy;; c++) {
		char *sl = strchr(c, '/');

		if (sl)
			*sl = '\0';
		if (!*c || strstr(c, "**") || lp->n == LINK_PAT_COMPS)
			break;
		lp->comp[lp->n++] = c;
		if (!sl) {
			if (lp->n < 2)
				break;
			for (size_t k = 0; k < lp->n; k++)
				if (strpbrk(lp->comp[k], "*?") &&
				    moat_glob_compile(lp->comp[k], MOAT_GLOB_PATH, &lp->g[k], NULL) < 0) {
					/* (a component of a pattern that compiled) */
					moat_link_pat_release(lp);
					return -ENOMEM;
				}
			return 1;
		}
		c = sl;
	}
	moat_link_pat_release(lp);
	return 0;
}

/* Does component k of lp fit the link name (nl bytes, NUL-terminated), the
 * k before it the end of the path prel (plen bytes) it is in? */
bool moat_link_fits_at(const struct link_pat *lp, size_t k, const char *prel, size_t plen,
		       const char *name, size_t nl)
{
	size_t end = plen;

	if (!comp_fits(lp, k, name, nl))
		return false;
	for (size_t j = k; j > 0; j--) {
		char part[NAME_MAX + 1];
		size_t b = end;

		if (!end)
			return false;
		while (b > 0 && prel[b - 1] != '/')
			b--;
		if (end - b > NAME_MAX)
			return false;
		memcpy(part, prel + b, end - b);
		part[end - b] = '\0';
		if (!comp_fits(lp, j - 1, part, end - b))
			return false;
		end = b ? b - 1 : 0;
	}
	return true;
}

/* The rest of lp from component from, below path (len bytes, where a link
 * led; links followed): each match a hit as a link. */
int moat_link_rest(char *path, size_t len, const struct link_pat *lp, size_t from,
		   int (*hit)(void *ud, const char *path), bool (*count)(void *ud, size_t n),
		   void *ud)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int r = 0;

	if (stat(path, &st) < 0)
		return 0; /* (nothing there, or dangling) */
	if (from == lp->n)
		return lp->dir_only && !S_ISDIR(st.st_mode) ? 0 : hit(ud, path);
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (!lp->g[from]) {
		size_t cl = strlen(lp->comp[from]);

		if (len + 1 + cl >= PATH_MAX)
			return -ENAMETOOLONG;
		path[len] = '/';
		memcpy(path + len + 1, lp->comp[from], cl + 1);
		r = moat_link_rest(path, len + 1 + cl, lp, from + 1, hit, count, ud);
		path[len] = '\0';
		return r;
	}
	if (!(d = opendir(path)))
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	while (r == 0 && (e = readdir(d))) {
		size_t nl = strlen(e->d_name);

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !moat_glob_match(lp->g[from], e->d_name, nl))
			continue;
		if (!count(ud, 1))
			r = -E2BIG;
		else if (len + 1 + nl >= PATH_MAX)
			r = -ENAMETOOLONG;
		else {
			path[len] = '/';
			memcpy(path + len + 1, e->d_name, nl + 1);
			r = moat_link_rest(path, len + 1 + nl, lp, from + 1, hit, count, ud);
			path[len] = '\0';
		}
	}
	closedir(d);
	return r;
}
