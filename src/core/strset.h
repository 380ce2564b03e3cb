/* An ordered set of literal strings matched together (the command rules'
 * and denied commands' substrings, Aar's reading of them): which is the
 * first (lowest id) that occurs in a subject, or that starts it at a word
 * boundary. One pass over the subject whatever the number of strings (an
 * Aho-Corasick automaton); never allocates when matching.
 *
 * Each string has a class (0 or 1) so that one set answers for two kinds
 * of rule (the command rules' deny-or-ask and allow strings); a query names
 * the classes it wants. Compiled sets are immutable and thread-safe.
 * Pure: no I/O. */
#ifndef MOAT_CORE_STRSET_H
#define MOAT_CORE_STRSET_H

#include <stdbool.h>
#include <stddef.h>

#define MOAT_STRSET_CLASS0 1u
#define MOAT_STRSET_CLASS1 2u
#define MOAT_STRSET_ALL (MOAT_STRSET_CLASS0 | MOAT_STRSET_CLASS1)

struct moat_strset;

int moat_strset_new(struct moat_strset **ret);
/* Add s (len bytes, any bytes) with an id (0 .. INT32_MAX) and a class (0
 * or 1). -ENOMEM, -E2BIG (over 2^31 bytes in all), -EINVAL (a bad class or
 * id). Adding after build un-builds the set. */
int moat_strset_add(struct moat_strset *set, const char *s, size_t len, long id, unsigned cls);
/* Must be called after the last add and before the first query. */
int moat_strset_build(struct moat_strset *set);
/* The lowest id among the strings of the classes in mask that occur in the
 * subject (s, len bytes), or -1. */
long moat_strset_first_in(const struct moat_strset *set, const char *s, size_t len,
			  unsigned mask);
/* The lowest id among the strings of the classes in mask that the subject
 * starts with, ending at a word boundary: the subject ends there, a space
 * follows, or the string itself ends in a space ("git status" starts "git
 * status --short", not "git statusx"). -1 when none. */
long moat_strset_first_prefix(const struct moat_strset *set, const char *s, size_t len,
			      unsigned mask);
size_t moat_strset_count(const struct moat_strset *set);
struct moat_strset *moat_strset_free(struct moat_strset *set);

#endif
