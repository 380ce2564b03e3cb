/* Globs for paths and command text, compiled once, matched without allocation.
 *
 * Syntax: '**' (any number of whole path components, zero included; X
 * followed by '/' and '**' also matches X itself), '*' (any run of characters
 * except '/'), '?' (one character except '/'), '[...]' / '[!...]' / '[^...]'
 * classes with ranges (never matching '/' in path mode), '{a,b}' alternatives
 * (nestable, bounded), '\\' escapes the next character.
 * A pattern matches the whole subject (anchored at both ends), so "*.pem"
 * matches a bare name only (the default lists put "**" and '/' before it).
 * '**' is a globstar only as a whole component (two or more '*'); inside a
 * component ("a**b") it is a plain '*'. A pattern matches when one of its brace
 * expansions does. Characters are UTF-8 code points; each invalid byte of a
 * subject is one character that only wildcards and negated classes match.
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
/* braces inside braces, at most this deep */
#define MOAT_GLOB_MAX_BRACE_DEPTH 16
/* NFA positions of all expansions together (a brace-free pattern of the
 * maximum length always fits) */
#define MOAT_GLOB_MAX_STATES 8192
/* globs in one set */
#define MOAT_GLOBSET_MAX_GLOBS 100000

struct moat_glob;

/* Compile; on error return -EINVAL and describe it (position in the pattern,
 * counted in bytes from 1). Refused: NUL bytes, invalid UTF-8, a trailing
 * backslash, unmatched '[', '{' or '}', ranges out of order, [:name:] classes,
 * and anything over the limits above. -ENOMEM when out of memory. */
int moat_glob_compile(const char *pattern, unsigned flags, struct moat_glob **ret,
		      struct moat_error *err);
/* The same for a counted pattern (which may hold a NUL byte, refused). */
int moat_glob_compile_n(const char *pattern, size_t len, unsigned flags, struct moat_glob **ret,
			struct moat_error *err);
bool moat_glob_match(const struct moat_glob *g, const char *s, size_t len);
const char *moat_glob_pattern(const struct moat_glob *g);
/* Number of NFA positions (for tests and diagnostics). */
size_t moat_glob_states(const struct moat_glob *g);
struct moat_glob *moat_glob_free(struct moat_glob *g);

/* An ordered set of globs answering "which is the first (lowest index) glob
 * that matches this subject", indexed so that 10,000 globs cost little more
 * than a handful: globs are bucketed by literal leading component, literal
 * last component and literal extension; only globs with none of those are
 * scanned. Thread-safe for queries once built. */
struct moat_globset;

int moat_globset_new(unsigned flags, struct moat_globset **ret);
/* Append a glob; returns its index (>= 0) or -EINVAL with err filled
 * (-E2BIG past MOAT_GLOBSET_MAX_GLOBS). Adding after build un-builds the set. */
long moat_globset_add(struct moat_globset *set, const char *pattern, struct moat_error *err);
long moat_globset_add_n(struct moat_globset *set, const char *pattern, size_t len,
			struct moat_error *err);
/* Must be called after the last add and before the first query. */
int moat_globset_build(struct moat_globset *set);
/* Lowest index whose glob matches, or -1. A set that is not built is
 * scanned linearly (same answers, slower). */
long moat_globset_first(const struct moat_globset *set, const char *s, size_t len);
size_t moat_globset_count(const struct moat_globset *set);
const char *moat_globset_pattern(const struct moat_globset *set, size_t index);
struct moat_globset *moat_globset_free(struct moat_globset *set);

#endif
