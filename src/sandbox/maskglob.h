/* Denied-path globs outside the workspace, expanded by walking the
 * directories they name (maskglob.c), for the masks of ns.c. Internal to
 * the sandbox layer. */
#ifndef MOAT_SANDBOX_MASKGLOB_H
#define MOAT_SANDBOX_MASKGLOB_H

#include <stdbool.h>

#include <moat/error.h>

/* The bound on the directory entries one pattern's walk reads: past it
 * the walk refuses (-E2BIG), as a pattern not expanded hides nothing. */
#define MOAT_MASKGLOB_MAX_ENTRIES 200000
/* {a,b} alternatives of one pattern, at most */
#define MOAT_MASKGLOB_MAX_EXPANSIONS 256

/* Call hit(ud, path, false) for each existing path the absolute glob pat
 * names, matched as the policy matches it (core/glob.h: by character, a
 * wildcard takes a leading '.', {a,b} alternatives, a trailing globstar
 * names the directory itself), and hit(ud, dir, true) for each directory
 * on the way that cannot be listed (what it holds is unknown). Returns 0,
 * hit's first nonzero result, or -errno with err set: a pattern that does
 * not compile or holds a globstar before its last component (-EINVAL),
 * more alternatives or entries than the bounds above (-E2BIG), a path
 * past PATH_MAX (-ENAMETOOLONG), no memory. */
int moat_mask_glob_expand(const char *pat, int (*hit)(void *ud, const char *path, bool unlisted),
			  void *ud, struct moat_error *err);

#endif
