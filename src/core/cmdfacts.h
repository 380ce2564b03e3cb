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

/* Does such a reader follow the links to directories it meets in the
 * tree (grep -R, zip -r, tar -h, cp -rL)? */
bool moat_cmd_follows_links(const char *prog, const char *const *argv, size_t argc);

/* May the invocation put entries (links among them) into a tree that a
 * reader after it in the same command walks (mv, cp, tar x, unzip, git
 * checkout)? */
bool moat_cmd_places_entries(const char *prog, const char *const *argv, size_t argc);

/* A subcommand that reads the whole tree below its operands (git diff
 * --no-index, aws s3 sync, docker cp, python3 -m zipfile -c): where its
 * operands start and which of them are not trees read. */
struct moat_cmd_subtree {
	size_t from;	/* the first word after the subcommand */
	size_t dest;	/* the operand it writes to, not a tree read (0: none) */
	size_t pattern; /* the operand that is a search pattern (0: none) */
	size_t cdir;	/* the word holding git -C's directory, which relative
			 * operands are below (0: none) */
	bool bare;	/* it names no tree: the working directory (or cdir) is one */
	bool outside;	/* it skips what the tree ignores (git add and .gitignore):
			 * a tree counts only outside the working directory */
	bool follows;	/* it follows the links to directories it meets */
	bool unplaced;	/* its tree is named another way (git --work-tree, -C
			 * after -C): not known here */
};

/* Does the invocation run such a subcommand? Fills *out when it does. */
bool moat_cmd_subtree(const char *prog, const char *const *argv, size_t argc,
		      struct moat_cmd_subtree *out);

/* Does the invocation read the names of the files it reads from its input
 * or from a file (cpio -o, zip -@, tar -T LIST, rsync --files-from, pax
 * -w with no operand)? Those files cannot be known before it runs. */
bool moat_cmd_names_from_input(const char *prog, const char *const *argv, size_t argc);

/* Programs that print or copy what their operands name (cat, head, cp,
 * base64, ...): an operand whose value is wholly unknown may be any file. */
bool moat_cmd_prints_operands(const char *prog);

/* Is option word a (of program prog) one whose value is a pattern of
 * names, not a file (--exclude=.env, --include PAT, rg -g GLOB)? */
bool moat_cmd_pattern_option(const char *prog, const char *a);

#endif
