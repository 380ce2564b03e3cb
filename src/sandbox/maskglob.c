/* Denied-path globs outside the workspace, expanded by walking the
 * directories they name (maskglob.h). glob(3) matches by byte and keeps a
 * leading '.' from the wildcards of every component but the last; the
 * policy does neither, so the masks follow the policy's own matcher: each
 * {a,b} alternative is split into components, each component with a
 * wildcard is compiled with core/glob.h and matched against the entries
 * of the directories reached so far, and what is found is matched against
 * the whole pattern once more. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/str.h"
#include "core/glob.h"
#include "sandbox/maskglob.h"
/* last: the lookups below are recorded for an armed sandbox's watch */
#include "sandbox/fsrec_wrap.h"

#define MASKGLOB_MAX_COMPS 128

struct walk {
	const struct moat_glob *whole;
	int (*hit)(void *ud, const char *path, bool unlisted);
	void *ud;
	size_t entries;
	struct moat_error *err;
	/* one alternative's components: the text, its glob when it has a
	 * wildcard (else the name, escapes removed, in text) */
	char *text[MASKGLOB_MAX_COMPS];
	struct moat_glob *g[MASKGLOB_MAX_COMPS];
	size_t n;
	bool globstar_last; /* the last component was "**": it names the dir */
};

/* ---- {a,b} alternatives ---- */

/* The end of a [...] class opening at c (its ']'), as core/glob.h reads
 * one: '!' or '^' first, then a ']' first is a member, '\\' escapes; NULL
 * when it is not closed. */
static const char *class_end(const char *c)
{
	c++;
	if (*c == '!' || *c == '^')
		c++;
	if (*c == ']')
		c++;
	for (; *c && *c != ']'; c++)
		if (*c == '\\' && c[1])
			c++;
	return *c ? c : NULL;
}

/* The end of the alternative starting at c: its ',' or the group's '}';
 * NULL when the group is not closed. */
static const char *brace_sub_end(const char *c)
{
	size_t depth = 0;

	while (*c) {
		const char *e = *c == '[' ? class_end(c) : NULL;

		if (e) { /* (a ',' or a brace inside a class is a member) */
			c = e + 1;
		} else if (*c == '\\') {
			if (!*++c)
				return NULL;
			c++;
		} else if ((*c == '}' && depth-- == 0) || (*c == ',' && depth == 0)) {
			return c;
		} else if (*c++ == '{') {
			depth++;
		}
	}
	return NULL;
}

static int walk_one(struct walk *w, const char *alt);

/* Each alternative of pat (the first unescaped '{' opens a group; {a}
 * and {} are groups of one), walked in turn. */
static int expand(struct walk *w, const char *pat, int *budget)
{
	const char *open = pat, *end = NULL, *alt, *sep;
	int r = 0;

	while (*open && *open != '{') {
		const char *e = *open == '[' ? class_end(open) : NULL;

		open = e ? e + 1 : open + (open[0] == '\\' && open[1] ? 2 : 1);
	}
	if (*open)
		for (end = brace_sub_end(open + 1); end && *end != '}';)
			end = brace_sub_end(end + 1);
	if (!end) {
		if (--*budget < 0) {
			moat_error_set(w->err, "over %d {a,b} alternatives",
				       MOAT_MASKGLOB_MAX_EXPANSIONS);
			return -E2BIG;
		}
		return walk_one(w, pat);
	}
	for (alt = open + 1; r == 0; alt = sep + 1) {
		size_t pl = (size_t)(open - pat), al, sl = strlen(end + 1);
		char *one;

		sep = brace_sub_end(alt);
		al = (size_t)(sep - alt);
		if (!(one = malloc(pl + al + sl + 1))) {
			moat_error_set(w->err, "out of memory");
			return -ENOMEM;
		}
		memcpy(one, pat, pl);
		memcpy(one + pl, alt, al);
		memcpy(one + pl + al, end + 1, sl + 1);
		r = expand(w, one, budget);
		free(one);
		if (sep == end)
			break;
	}
	return r;
}

/* ---- one alternative ---- */

/* Split alt (absolute) into w's components at each '/' outside a class;
 * compile those with a wildcard. */
static int split(struct walk *w, const char *alt)
{
	const char *c = alt + 1, *start = c;
	bool wild = false;

	for (;; c++) {
		if (*c == '\\' && c[1]) {
			c++;
			continue;
		}
		if (*c == '[') {
			const char *e = class_end(c);

			if (e) {
				wild = true;
				c = e;
				continue;
			}
		}
		if (*c == '*' || *c == '?')
			wild = true;
		if (*c && *c != '/')
			continue;
		if (c > start) { /* (an empty component, "a//b", is none) */
			size_t len = (size_t)(c - start);
			char *t;

			if (w->n == MASKGLOB_MAX_COMPS) {
				moat_error_set(w->err, "more than %d components", MASKGLOB_MAX_COMPS);
				return -E2BIG;
			}
			if (!(t = moat_strndup(start, len))) {
				moat_error_set(w->err, "out of memory");
				return -ENOMEM;
			}
			w->text[w->n] = t;
			w->g[w->n] = NULL;
			if (wild && len >= 2 && strspn(t, "*") == len) {
				if (*c) {
					moat_error_set(w->err, "a globstar ('**') before the last "
							       "component is not supported outside the "
							       "workspace");
					w->n++;
					return -EINVAL;
				}
				w->globstar_last = true; /* (names the directory itself) */
				free(t);
				return 0;
			}
			if (wild) {
				if (moat_glob_compile(t, MOAT_GLOB_PATH, &w->g[w->n], w->err) < 0) {
					w->n++;
					return -EINVAL;
				}
			} else { /* a literal name: its escapes removed */
				size_t o = 0;

				for (size_t i = 0; t[i]; i++)
					t[o++] = t[i] == '\\' && t[i + 1] ? t[++i] : t[i];
				t[o] = '\0';
			}
			w->n++;
		}
		if (!*c)
			return 0;
		start = c + 1;
		wild = false;
	}
}

/* path (len bytes of a PATH_MAX buffer) extended by "/name" */
static int append(struct walk *w, char *path, size_t len, const char *name)
{
	size_t nl = strlen(name);

	if (len + 1 + nl >= PATH_MAX) {
		moat_error_set(w->err, "a path it names is longer than PATH_MAX");
		return -ENAMETOOLONG;
	}
	path[len] = '/';
	memcpy(path + len + 1, name, nl + 1);
	return 0;
}

static int descend(struct walk *w, char *path, size_t len, size_t k)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int r = 0;

	if (k == w->n) {
		const char *at = len ? path : "/";

		if (lstat(at, &st) < 0)
			return 0; /* nothing there */
		/* (X followed by a globstar names X too, whatever it is) */
		return moat_glob_match(w->whole, at, strlen(at)) ? w->hit(w->ud, at, false) : 0;
	}
	if (!w->g[k]) {
		if ((r = append(w, path, len, w->text[k])) == 0)
			r = descend(w, path, len + 1 + strlen(w->text[k]), k + 1);
		path[len] = '\0';
		return r;
	}
	if (!(d = opendir(len ? path : "/"))) {
		if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
			return 0;
		/* SECURITY: a directory that cannot be listed may hold a match
		 * the sandbox can still open by name: hide all of it */
		return len ? w->hit(w->ud, path, true) : 0;
	}
	for (;;) {
		errno = 0;
		if (r != 0 || !(e = readdir(d)))
			break;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (++w->entries > MOAT_MASKGLOB_MAX_ENTRIES) {
			moat_error_set(w->err, "it reads more than %d directory entries",
				       MOAT_MASKGLOB_MAX_ENTRIES);
			r = -E2BIG;
			break;
		}
		if (!moat_glob_match(w->g[k], e->d_name, strlen(e->d_name)))
			continue;
		if (k + 1 < w->n && e->d_type != DT_DIR && e->d_type != DT_LNK &&
		    e->d_type != DT_UNKNOWN)
			continue; /* (no directory: nothing below it) */
		if ((r = append(w, path, len, e->d_name)) == 0)
			r = descend(w, path, len + 1 + strlen(e->d_name), k + 1);
		path[len] = '\0';
	}
	/* SECURITY: a listing cut short may have left a match unread: hide
	 * the directory whole */
	if (r == 0 && errno != 0 && len)
		r = w->hit(w->ud, path, true);
	closedir(d);
	return r;
}

static void release(struct walk *w)
{
	for (size_t k = 0; k < w->n; k++) {
		free(w->text[k]);
		moat_glob_free(w->g[k]);
	}
	w->n = 0;
	w->globstar_last = false;
}

static int walk_one(struct walk *w, const char *alt)
{
	char path[PATH_MAX];
	int r;

	if (alt[0] != '/') {
		moat_error_set(w->err, "not an absolute path");
		return -EINVAL;
	}
	r = split(w, alt);
	path[0] = '\0';
	if (r == 0)
		r = descend(w, path, 0, 0);
	release(w);
	return r;
}

int moat_mask_glob_expand(const char *pat, int (*hit)(void *ud, const char *path, bool unlisted),
			  void *ud, struct moat_error *err)
{
	struct moat_glob *whole;
	struct walk w;
	int budget = MOAT_MASKGLOB_MAX_EXPANSIONS, r;

	if (moat_glob_compile(pat, MOAT_GLOB_PATH, &whole, err) < 0)
		return -EINVAL;
	memset(&w, 0, sizeof(w));
	w.whole = whole;
	w.hit = hit;
	w.ud = ud;
	w.err = err;
	r = expand(&w, pat, &budget);
	moat_glob_free(whole);
	return r;
}
