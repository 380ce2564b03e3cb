/* The workspace scan (scan.c): every entry of the workspace that a "**"
 * denied-path pattern names, found by a parallel walk of the whole tree,
 * for ns.c to mask. Internal to the sandbox layer. */
#ifndef MOAT_SANDBOX_SCAN_H
#define MOAT_SANDBOX_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "core/config.h"
#include "moat/error.h"

struct moat_plan;

/* What a name with '*' and '?' only must start and end with: the literal
 * text before its first wildcard and after its last (a wildcard matches at
 * least nothing, so a matching name is at least as long as both together).
 * Checked before the costlier match, it turns most names away. */
struct name_cut {
	const char *pre, *suf;
	size_t npre, nsuf;
};

static inline void name_cut_of(const char *l, size_t n, struct name_cut *c)
{
	size_t first = n, last = 0;

	for (size_t i = 0; i < n; i++)
		if (l[i] == '*' || l[i] == '?') {
			if (first == n)
				first = i;
			last = i + 1;
		}
	c->pre = l;
	c->npre = first;
	c->suf = l + last;
	c->nsuf = first == n ? 0 : n - last; /* (no wildcard: all of it is pre) */
}

static inline bool name_cut_fits(const struct name_cut *c, const char *name, size_t nl)
{
	return nl >= c->npre + c->nsuf && !memcmp(name, c->pre, c->npre) &&
	       !memcmp(name + nl - c->nsuf, c->suf, c->nsuf);
}

/* The default bound on the entries one scan reads (a workspace larger is
 * refused, fail closed, unless the configuration raises it:
 * sandbox.scan_max_entries). */
#define MOAT_SCAN_MAX_ENTRIES MOAT_CONFIG_SCAN_ENTRIES

struct moat_scan_hit {
	char *path; /* absolute: the workspace, then the entry's path below it */
	bool link;  /* a symbolic link (the mask covers where it leads) */
	bool dir;   /* a directory (not a link to one) */
};

struct moat_scan_result {
	struct moat_scan_hit *v; /* sorted by path */
	size_t n;
	size_t entries; /* entries read or taken from the record */
	void *save;	/* the record to keep on disk (moat_scan_save), or NULL */
	/* the directories the scan relied on (scancheck.h), or NULL */
	struct moat_scan_check *check;
};

/* Scan p's workspace for its "**" patterns (MOAT_MASK_WORKSPACE_NAME).
 * 0, or -errno with err set: a glob that does not compile, no memory, the
 * bound reached, a path longer than PATH_MAX that would matter (the scan
 * refuses rather than leaves a secret uncovered); -ESTALE when a
 * directory changed while it was read (an entry listed gone, a directory
 * that kept changing): the caller prepares again. */
int moat_scan_workspace(const struct moat_plan *p, struct moat_scan_result *ret,
			struct moat_error *err);
void moat_scan_result_release(struct moat_scan_result *r);
/* The record ret->save kept on disk for the next run (then freed). */
void moat_scan_save(const struct moat_plan *p, void *save);
void moat_scan_save_free(void *save);

#endif
