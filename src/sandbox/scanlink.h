/* Multi-component denied-path patterns through a linked directory
 * (scanlink.c), for the workspace scan (scan.c). Internal to the sandbox
 * layer. */
#ifndef MOAT_SANDBOX_SCANLINK_H
#define MOAT_SANDBOX_SCANLINK_H

#include <stdbool.h>
#include <stddef.h>

/* ---- multi-component patterns through a linked directory ----
 *
 * The walk follows no link, and matches each pattern against the path it
 * walked: "**" then two components or more (".docker/config.json",
 * ".config/gh/hosts.yml") would miss a secret reached through a link
 * standing for one of the components before the last (".docker" a link to
 * "dreal": "dreal/config.json" is read as ".docker/config.json"). A link
 * whose name fits component k of such a pattern, the k before it fitting
 * the end of the path it is in, has the pattern's rest looked up where it
 * leads (links followed, in or out of the workspace); what is found is a
 * hit as a link (ns.c masks the real path). A match wholly inside a tree
 * a link leads to out of the workspace is that tree's to mask by its own
 * rules; inside the workspace the walk reads it under its own path. */
#define LINK_PAT_COMPS 16

struct link_pat {
	char *copy; /* the components, NUL-separated */
	const char *comp[LINK_PAT_COMPS];
	/* each component with a wildcard compiled (matched by character, as
	 * the policy does), else NULL */
	struct moat_glob *g[LINK_PAT_COMPS];
	size_t n;
	bool dir_only; /* ends in a globstar: the last must be a directory */
};

/* pat as a link pattern (released with moat_link_pat_release): 1, or 0
 * when it is not "**" then two components or more with no other globstar
 * (or classes, braces, escapes), or -ENOMEM */
int moat_link_pat_of(const char *pat, struct link_pat *lp);
void moat_link_pat_release(struct link_pat *lp);
/* Does component k of lp fit the link name (nl bytes, NUL-terminated), the
 * k before it the end of the path prel (plen bytes) it is in? */
bool moat_link_fits_at(const struct link_pat *lp, size_t k, const char *prel, size_t plen,
		       const char *name, size_t nl);
/* The rest of lp from component from, below path (len bytes of a
 * PATH_MAX buffer; where a link led, links followed): hit(ud, path) for
 * each match, count(ud, n) for the entries a wildcard lists (false: past
 * the scan's bound, -E2BIG). 0 or -errno. */
int moat_link_rest(char *path, size_t len, const struct link_pat *lp, size_t from,
		   int (*hit)(void *ud, const char *path), bool (*count)(void *ud, size_t n),
		   void *ud);

#endif
