/* A shell glob word expanded as the shell will expand it, where no sandbox
 * stands between the command and the files its words match. */
#ifndef MOAT_CORE_WORDGLOB_H
#define MOAT_CORE_WORDGLOB_H

#include <stddef.h>

/* Directory entries the expansions of one decision may read. */
#define MOAT_WORDGLOB_MAX_ENTRIES 100000u
/* Matches the expansions of one decision may yield. */
#define MOAT_WORDGLOB_MAX_MATCHES 4096u

/* What the expansions of one decision may still spend. */
struct moat_wordglob_budget {
	size_t entries;
	size_t matches;
};

void moat_wordglob_budget_init(struct moat_wordglob_budget *b);

/* Expand pattern (an absolute path whose components may hold * ? [..], the
 * shell word after quote removal, so a backslash is literal) as bash does
 * by default: a name starting with '.' only where the component spells the
 * dot; "." and ".." never (bash 5.2's globskipdots); a match is a name that
 * exists (lstat). Each directory read and each entry spends one entry.
 * visit is called with each match (absolute, not normalised); a nonzero
 * return ends the expansion and is returned.
 *
 * Returns 0 (every match visited; none when nothing matches), visit's
 * nonzero value, -E2BIG past the budget (some match may not have been
 * visited), or another negative errno. */
int moat_wordglob(const char *pattern, struct moat_wordglob_budget *b,
		  int (*visit)(const char *match, void *ud), void *ud);

#endif
