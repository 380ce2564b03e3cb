/* Globs for paths and command text, compiled once, matched without allocation.
 *
 * Syntax: '**' (any number of whole path components, zero included; "X/**"
 * also matches X itself), '*' (any run of characters except '/'), '?' (one
 * character except '/'), '[...]' / '[!...]' classes with ranges, '{a,b}'
 * alternatives (nestable, bounded), '\\' escapes the next character.
 * In MOAT_GLOB_TEXT mode '/' is an ordinary character and '*' and '**' both
 * match any run of characters (used for command text such as "git *").
 *
 * Matching is linear in the subject (a bit-parallel NFA), never backtracks,
 * and never allocates. Compiled globs are immutable and thread-safe.
 * Pure: no I/O. */
#ifndef MOAT_CORE_GLOB_H
#define MOAT_CORE_GLOB_H

#include <stdbool.h>
#include <stddef.h>

#include <moat/error.h>

#define MOAT_GLOB_PATH 0u
#define MOAT_GLOB_TEXT 1u
/* limits, each tested at the boundary */
#define MOAT_GLOB_MAX_PATTERN 4096
#define MOAT_GLOB_MAX_ALTERNATIVES 256

struct moat_glob;

/* Compile; on error return -EINVAL and describe it (position in the pattern). */
int moat_glob_compile(const char *pattern, unsigned flags, struct moat_glob **ret,
		      struct moat_error *err);
bool moat_glob_match(const struct moat_glob *g, const char *s, size_t len);
const char *moat_glob_pattern(const struct moat_glob *g);
struct moat_glob *moat_glob_free(struct moat_glob *g);

/* An ordered set of globs answering "which is the first (lowest index) glob
 * that matches this subject", indexed so that 10,000 globs cost little more
 * than a handful: globs are bucketed by literal leading component, literal
 * last component and literal extension; only globs with none of those are
 * scanned. Thread-safe for queries once built. */
struct moat_globset;

int moat_globset_new(unsigned flags, struct moat_globset **ret);
/* Append a glob; returns its index (>= 0) or -EINVAL with err filled. */
long moat_globset_add(struct moat_globset *set, const char *pattern, struct moat_error *err);
/* Must be called after the last add and before the first query. */
int moat_globset_build(struct moat_globset *set);
/* Lowest index whose glob matches, or -1. */
long moat_globset_first(const struct moat_globset *set, const char *s, size_t len);
size_t moat_globset_count(const struct moat_globset *set);
const char *moat_globset_pattern(const struct moat_globset *set, size_t index);
struct moat_globset *moat_globset_free(struct moat_globset *set);

#endif
