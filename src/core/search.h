/* What a search below a root would read: a search tool of the agent
 * (Claude Code's Grep and Glob) or a command that reads a whole tree
 * (tar c, cp -r, grep -r). Where no sandbox hides the denied paths, what
 * the policy allowed by its root alone is checked entry by entry against
 * the policy, bounded in entries and time. */
#ifndef MOAT_CORE_SEARCH_H
#define MOAT_CORE_SEARCH_H

#include <stddef.h>

#include <moat/policy.h>

/* Entries (files, directories, links) looked at below the roots of one
 * budget; past it the search is not known to be clean. */
#define MOAT_SEARCH_MAX_ENTRIES 500000u
/* Directory levels below the root walked; deeper ones count as past the
 * bound too. */
#define MOAT_SEARCH_MAX_DEPTH 64u
/* Milliseconds one budget may walk for. */
#define MOAT_SEARCH_MAX_MS 3000u

/* What the walks of one decision may still spend: entries, and a
 * deadline (CLOCK_MONOTONIC, in nanoseconds). */
struct moat_search_budget {
	size_t entries;
	unsigned long long deadline_ns;
	unsigned max_ms; /* as given, for the messages */
};

/* A budget of MOAT_SEARCH_MAX_ENTRIES entries and max_ms milliseconds
 * from now. */
void moat_search_budget_init(struct moat_search_budget *b, unsigned max_ms);

/* A share of what pool has left, for one of parts walks still to come:
 * its entries and its time, each divided by parts (so a large first tree
 * cannot leave nothing to the trees after it). */
void moat_search_budget_share(const struct moat_search_budget *pool, size_t parts,
			      struct moat_search_budget *share);
/* What a share of pool given `given` entries spent, taken from pool. */
void moat_search_budget_spend(struct moat_search_budget *pool, size_t given,
			      const struct moat_search_budget *share);

/* Walk root (an absolute directory; a file or a missing root has nothing
 * below it) breadth first, without following symbolic links into
 * directories (unless MOAT_SEARCH_FOLLOW), and check each file, link and link target the search may
 * read against the policy as a read_file path. filter, when not NULL, is
 * the glob the search is limited to (Grep's glob, Glob's pattern): a
 * pattern without '/' is matched against an entry's name, one with '/'
 * against its path below root; NULL (or a filter moat cannot read, or a
 * negated one, or one anchored with a leading '/') limits nothing. The
 * walk spends from *budget.
 *
 * Returns 0 when nothing below root is denied; 1 when something is, with
 * hit its path and *why the policy's decision for it; -E2BIG past the
 * budget's entries or MOAT_SEARCH_MAX_DEPTH; -ETIMEDOUT past its
 * deadline; another negative errno when the walk failed (a directory the
 * user cannot read is skipped: the search cannot read it either). */
int moat_search_denied(const struct moat_policy *p, const char *root, const char *filter,
		       unsigned flags, struct moat_search_budget *budget, char *hit, size_t hitsz,
		       struct moat_decision *why);

/* flags: filter is Grep's glob, which Claude Code splits into one ripgrep
 * --glob per piece (moat_search_pieces); the pieces count as a union, and
 * a negated one ("!x") limits nothing. */
#define MOAT_SEARCH_GREP_GLOB 1u
/* flags: the search follows symbolic links to directories (grep -R, zip
 * -r, tar -h): the trees they lead to are walked too, each directory once
 * (by device and inode), on the same budget. */
#define MOAT_SEARCH_FOLLOW 2u

/* The pieces Claude Code's Grep makes of its glob: split at whitespace
 * (JavaScript's \s, Unicode spaces included), then each piece without both
 * '{' and '}' at commas; empty pieces dropped. *ret is one allocation
 * (free() it), *ret_n entries. 0 or -ENOMEM. */
int moat_search_pieces(const char *glob, char ***ret, size_t *ret_n);

#endif
