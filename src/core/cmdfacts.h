/* Facts about programs, variables and system files that the command
 * analysis (cmd.c) reads: tables, one source for each list. Pure data. */
#ifndef MOAT_CORE_CMDFACTS_H
#define MOAT_CORE_CMDFACTS_H

#include <stdbool.h>
#include <stddef.h>

/* Environment variables whose value a program runs as a command (NULL
 * ended): an assignment of one is read as that command. */
extern const char *const moat_env_runs[];
/* Environment variables that make a program load code or another
 * configuration (NULL ended): an assignment of one asks, whatever command
 * rule allows the program. */
extern const char *const moat_env_loads[];

/* Is the absolute, normalised path one of the files without which the
 * system cannot start or log anyone in (/etc/passwd, /etc/fstab, ...)?
 * Removing one, even alone, is the floor. */
bool moat_cmd_critical_file(const char *path);
/* The i-th of those files, or NULL past the last. */
const char *moat_cmd_critical_file_at(size_t i);

/* Does the invocation (prog its program's basename, argv its words)
 * read the whole tree below each of its operands (tar c, cp -r, grep -r,
 * rsync -a, zip -r, scp -r, diff -r, rg)? Options are read well enough to
 * tell; an unknown spelling is not recursive. */
bool moat_cmd_reads_tree(const char *prog, const char *const *argv, size_t argc);

/* Does a searcher of that table (grep -r, rg) given argv search the
 * working directory, no path following its pattern (grep -r KEY, rg -e
 * KEY)? Only when moat_cmd_reads_tree says it reads trees. */
bool moat_cmd_searches_cwd(const char *prog, const char *const *argv, size_t argc);

/* Programs that print or copy what their operands name (cat, head, cp,
 * base64, ...): an operand whose value is wholly unknown may be any file. */
bool moat_cmd_prints_operands(const char *prog);

/* Is option word a (of program prog) one whose value is a pattern of
 * names, not a file (--exclude=.env, --include PAT, rg -g GLOB)? */
bool moat_cmd_pattern_option(const char *prog, const char *a);

#endif
