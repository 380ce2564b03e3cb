/* moat policy: configuration and decisions.
 *
 * A configuration is built from defaults, then at most one user file, then
 * flags; a project file (.moat/config.json) is loaded into a second
 * configuration that may only tighten. A policy compiles them once; checks
 * are then thread-safe and allocate only for the argument JSON they parse.
 *
 * A decision is not an error: when moat_policy_check fails (bad arguments),
 * it still fills a DENY decision, and callers must act on it. */
#ifndef MOAT_POLICY_H
#define MOAT_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include <moat/error.h>

#ifdef __cplusplus
extern "C" {
#endif

enum moat_verdict {
	MOAT_ALLOW = 0,
	MOAT_DENY = 1,
	MOAT_ASK = 2,
};

struct moat_decision {
	enum moat_verdict verdict;
	bool hard;	  /* true: approval can never turn this into ALLOW */
	char rule[160];	  /* stable id: "denied_paths:**\/.env", "hardline:rm-root", "default" */
	char reason[512]; /* one human sentence */
};

const char *moat_verdict_name(enum moat_verdict v);

struct moat_config;
struct moat_policy;

/* Flags for loading */
#define MOAT_CONFIG_PROJECT 1u /* a project file: refuse keys that could loosen */

/* A configuration holding the built-in defaults. */
int moat_config_new(struct moat_config **ret);
struct moat_config *moat_config_free(struct moat_config *c);
/* Merge a JSON document (bare safety object or {"safety": {...}}) into c.
 * name is used in error positions ("config.json:3:14"). Strict: duplicate
 * keys, unknown keys, wrong types, invalid globs/regexes are -EINVAL. */
int moat_config_load_string(struct moat_config *c, const char *json, size_t len, const char *name,
			    unsigned flags, struct moat_error *err);
int moat_config_load_file(struct moat_config *c, const char *path, unsigned flags,
			  struct moat_error *err);
/* The user's configuration file, $XDG_CONFIG_HOME/moat/config.json (else
 * ~/.config/moat/config.json), into out: 0 when it exists, -ENOENT when it
 * does not or no home is known, -ENAMETOOLONG. */
int moat_config_user_path(char *out, size_t outsz);
/* A project's file, DIR/.moat/config.json, into out: 0 when it exists,
 * -ENOENT when it does not, -ENAMETOOLONG. It may only tighten
 * (MOAT_CONFIG_PROJECT). */
int moat_config_project_path(const char *dir, char *out, size_t outsz);
/* The effective configuration as pretty JSON (heap string, caller frees). */
char *moat_config_to_json(const struct moat_config *c);

/* Compile. project may be NULL. cwd is used for relative paths and <cwd>. */
int moat_policy_new(const struct moat_config *user, const struct moat_config *project,
		    const char *cwd, struct moat_policy **ret, struct moat_error *err);
struct moat_policy *moat_policy_free(struct moat_policy *p);

/* Decide one tool call; args_json is a JSON object (duplicate keys refused).
 * Returns 0, or -EINVAL for bad input with *ret a DENY naming the problem. */
int moat_policy_check(const struct moat_policy *p, const char *tool, const char *args_json,
		      size_t args_len, struct moat_decision *ret, struct moat_error *err);

#ifdef __cplusplus
}
#endif
#endif
