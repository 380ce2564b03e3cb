/* What a search tool of the agent (Claude Code's Grep and Glob) would read
 * below its root: the hook has no sandbox behind it, so a search the
 * policy allowed by its root alone is checked entry by entry against the
 * policy, bounded. */
#ifndef MOAT_CLI_HOOK_SEARCH_H
#define MOAT_CLI_HOOK_SEARCH_H

#include <stddef.h>

#include <moat/policy.h>

/* Entries (files, directories, links) looked at below one root; past it
 * the search is not known to be clean. */
#define HOOK_SEARCH_MAX_ENTRIES 500000u
/* Directory levels below the root walked; deeper ones count as past the
 * bound too. */
#define HOOK_SEARCH_MAX_DEPTH 64u

/* Walk root (an absolute directory; a file or a missing root has nothing
 * below it) breadth first, without following symbolic links into
 * directories, and check each file, link and link target the search may
 * read against the policy as a read_file path. filter, when not NULL, is
 * the glob the search is limited to (Grep's glob, Glob's pattern): a
 * pattern without '/' is matched against an entry's name, one with '/'
 * against its path below root; NULL (or a filter moat cannot read, or a
 * negated one, or one anchored with a leading '/') limits nothing.
 *
 * Returns 0 when nothing below root is denied; 1 when something is, with
 * hit its path and *why the policy's decision for it; -E2BIG past
 * HOOK_SEARCH_MAX_ENTRIES or HOOK_SEARCH_MAX_DEPTH; another negative errno
 * when the walk failed (a directory the user cannot read is skipped: the
 * search cannot read it either). */
int hook_search_denied(const struct moat_policy *p, const char *root, const char *filter,
		       unsigned flags, char *hit, size_t hitsz, struct moat_decision *why);

/* flags: filter is Grep's glob, which Claude Code splits into one ripgrep
 * --glob per piece (hook_search_pieces); the pieces count as a union, and
 * a negated one ("!x") limits nothing. */
#define HOOK_SEARCH_GREP_GLOB 1u

/* The pieces Claude Code's Grep makes of its glob: split at whitespace
 * (JavaScript's \s, Unicode spaces included), then each piece without both
 * '{' and '}' at commas; empty pieces dropped. *ret is one allocation
 * (free() it), *ret_n entries. 0 or -ENOMEM. */
int hook_search_pieces(const char *glob, char ***ret, size_t *ret_n);

#endif
