/* The configuration model: plain data built from defaults, one user file,
 * flags, and (separately) a project file that may only tighten.
 *
 * Loading is strict: JSON with duplicate keys, unknown keys, wrong types,
 * invalid globs or regexes is refused with file:line:column and the key path.
 * Pure: no I/O here (the file reader lives in src/lib/). */
#ifndef MOAT_CORE_CONFIG_H
#define MOAT_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <moat/policy.h>

#include "base/str.h"
#include "core/plan.h"

#define MOAT_CONFIG_MAX_BYTES (16u << 20) /* 16 MiB */
#define MOAT_CONFIG_MAX_DEPTH 32
#define MOAT_CONFIG_MAX_RULES 100000
#define MOAT_CONFIG_MAX_STRING 4096
#define MOAT_CONFIG_MAX_VAR_NAME 255u	   /* ${NAME} in path lists */
#define MOAT_CONFIG_MAX_DOMAIN 253u	   /* network.allow_domains / block_domains entries */
#define MOAT_CONFIG_MAX_TOOL_NAME 64u	   /* tools: NAME and argument names */
#define MOAT_CONFIG_MAX_TOOL_ARGS 64u	   /* tools: entries of effects / path_args */
#define MOAT_CONFIG_MAX_TOOLS 4096u	   /* tools: declarations */
#define MOAT_CONFIG_MAX_MEMORY_MB 1048576u /* sandbox.linux.max_memory_mb */
/* sandbox.scan_max_entries: the default, and the most it may be set to */
#define MOAT_CONFIG_SCAN_ENTRIES 20000000u
#define MOAT_CONFIG_MAX_SCAN_ENTRIES 1000000000ull
#define MOAT_CONFIG_DEFAULT_APPROVAL_TIMEOUT_S 120 /* approval_timeout */
#define MOAT_CONFIG_MAX_APPROVAL_TIMEOUT_S 86400   /* approval_timeout: 1 to a day */

/* Where a value came from, for error messages. file is owned by the config. */
struct moat_loc {
	const char *file;
	int line;
	int column;
};

/* Grown only through moat_config_strlist_add (capacity is implied by n);
 * shrinking n (and freeing the dropped strings) is fine. */
struct moat_strlist {
	char **v;
	struct moat_loc *loc;
	size_t n;
};

struct moat_path_rule {
	char *pattern;
	bool allow_read;
	bool allow_write;
	struct moat_loc loc;
};

/* How a command rule's pattern meets a command (docs/configuration.md):
 * Aar's substring (the default), a glob over the whole program invocation,
 * a PCRE2 regex ("is_regex": true). */
enum moat_cmd_match {
	MOAT_CMD_MATCH_SUBSTRING = 0,
	MOAT_CMD_MATCH_GLOB,
	MOAT_CMD_MATCH_REGEX,
};

struct moat_cmd_rule {
	char *pattern;
	enum moat_verdict decision;
	enum moat_cmd_match match;
	bool match_given; /* "match" or "is_regex" was written (no warning then) */
	struct moat_loc loc;
	struct moat_loc pattern_loc;
};

#define MOAT_EFFECT_READ 1u
#define MOAT_EFFECT_WRITE 2u
#define MOAT_EFFECT_EXECUTE 4u
#define MOAT_EFFECT_NETWORK 8u

struct moat_tool_decl {
	char *name;
	unsigned effects;
	struct moat_strlist path_args;
	char *command_arg; /* may be NULL */
	char *url_arg;	   /* may be NULL */
	struct moat_loc loc;
};

/* "approvals": [{"tool": "bash", "arg": "command", "match": "git *"}]: an
 * ASK for TOOL whose argument ARG (a string) matches the case-sensitive glob
 * MATCH is approved without asking. Never applies to another tool or
 * argument, never to a hard DENY. */
struct moat_approval_rule {
	char *tool;  /* canonical tool name */
	char *arg;
	char *match; /* glob, validated at load */
	struct moat_loc loc;
};

enum moat_sandbox_mode {
	MOAT_SANDBOX_LOCAL = 0,
	MOAT_SANDBOX_LINUX,
	MOAT_SANDBOX_AUTO,
};

struct moat_config {
	bool read_only;
	bool require_approval_for_writes;
	bool require_approval_for_execute;
	bool log_all_commands;
	bool hardline;		   /* unrecoverable-operation floor; only "hardline": false drops it */
	bool default_denied_paths;   /* false only by explicit "default_denied_paths": false */
	bool default_denied_commands; /* false only by explicit "default_denied_commands": false */

	struct moat_path_rule *path_rules;
	size_t npath_rules;
	struct moat_strlist denied_paths;    /* user additions; defaults are added at compile */
	/* exempt_paths (user files only): a matching path is not denied by
	 * denied_paths (built-in or the user's), neither by the file tools'
	 * policy nor by the sandbox's masks (docs/configuration.md) */
	struct moat_strlist exempt_paths;
	struct moat_strlist allowed_paths;   /* empty: no allow-list */
	bool allowed_paths_set;		     /* an allow-list was given (even if empty) */
	struct moat_strlist read_only_paths;
	struct moat_cmd_rule *command_rules;
	size_t ncommand_rules;
	struct moat_strlist denied_commands; /* user additions */

	struct moat_tool_decl *tools;
	size_t ntools;

	/* web_fetch and later the network sandbox */
	struct moat_strlist allow_domains; /* empty: any public host */
	struct moat_strlist block_domains;
	bool allow_local_network;	   /* loopback/link-local/metadata: default false */

	enum moat_sandbox_mode sandbox_mode;
	char *sandbox_workspace;	/* NULL: cwd */
	long max_memory_mb;		/* 0: profile default */
	size_t scan_max_entries;	/* sandbox.scan_max_entries; 0: the default */

	/* sandbox profiles (docs/configuration.md, "Sandbox profiles"): named
	 * profiles, the default one, the default fallback, per-tool rules.
	 * Every name resolves (moat_profile_resolve) when the file loads. */
	struct moat_profile_def *profiles;
	struct moat_profile_locs *profile_locs; /* parallel to profiles */
	size_t nprofiles;
	char *sandbox_profile;		 /* sandbox.profile; NULL: MOAT_PROFILE_DEFAULT */
	struct moat_loc sandbox_profile_loc;
	int sandbox_fallback;		 /* sandbox.fallback (enum moat_fallback); -1: unset */
	/* sandbox.accept_gaps: the protections runs may go without (a set of
	 * enum moat_feature bits, moat_parse_gap_list); the others still
	 * follow the fallback policy. A user file's only. */
	unsigned sandbox_accept_gaps;
	struct moat_tool_rule *sandbox_rules; /* sandbox.rules, first match wins */
	struct moat_loc *sandbox_rule_locs;   /* each rule's "profile" value */
	size_t nsandbox_rules;

	/* approvals (docs/configuration.md, "Approvals"; the gate compiles them) */
	struct moat_approval_rule *approvals; /* pre-approvals, seed 000's aar run */
	size_t napprovals;
	long approval_timeout_s; /* an unanswered ask is DENIED after this; default 120 */
	bool approval_timeout_set; /* given by a file (a project file's shorter value counts
				    * only then: the session takes the smaller of the two) */

	/* the audit log (docs/audit.md) */
	char *audit_log;     /* NULL: $XDG_STATE_HOME/moat/audit.jsonl; "-": stderr */
	bool audit_fsync;    /* default false */
	bool audit_required; /* default true: an unwritable log fails the call */
	bool audit_syslog;   /* default false */

	/* every file name a location points to */
	struct moat_strlist files;
};

/* Where a named profile and its base were written, for messages. */
struct moat_profile_locs {
	struct moat_loc name;	 /* the key */
	struct moat_loc extends; /* the "extends" value */
};

/* Defaults (Aar's PolicyConfig defaults: nothing read-only, no approvals,
 * default deny lists on, hardline on, sandbox mode local). */
int moat_config_init(struct moat_config *c);
void moat_config_release(struct moat_config *c);

/* The built-in lists, NULL-terminated. */
extern const char *const moat_default_denied_paths[];
/* Templates of environment files (".env.example", ".env.sample",
 * ".env.template", ".env.dist", ".env.defaults") hold no secret and are
 * what a project is set up from: the pattern "**" "/.env.*" leaves them
 * out. pattern: the denied path (or its tail after "**" "/"), name: the
 * entry's name, nl bytes. */
bool moat_denied_template(const char *pattern, const char *name, size_t nl);
extern const char *const moat_default_denied_commands[];

/* Is this denied_commands entry one of the built-in patterns? While the
 * built-ins are on, such an entry is matched as the built-in is, by
 * structure only, so that the effective configuration (which writes them
 * out) loads back to the same meaning. */
bool moat_config_is_default_denied_command(const char *entry);

/* Warnings about a loaded configuration that is valid but may not mean
 * what it says (`moat config check`): a substring command rule holding
 * glob characters, a denied_commands entry that is no shell command. fn is
 * called once per warning, in file order, with where the value is, its key
 * path ("safety.command_rules[0].pattern") and the sentence. Returns how
 * many there were. Indexes count from the first entry of the
 * configuration, so they match the file when one file was loaded. */
typedef void (*moat_config_warn_fn)(const struct moat_loc *loc, const char *key, const char *msg,
				    void *ud);
size_t moat_config_warnings(const struct moat_config *c, moat_config_warn_fn fn, void *ud);

/* Environment lookup used for ~, $HOME, ${VAR} in path lists (tests inject one). */
typedef const char *(*moat_getenv_fn)(const char *name, void *ud);
void moat_config_set_env(moat_getenv_fn fn, void *ud);
/* Look a variable up through the installed lookup (NULL when none is installed). */
const char *moat_config_env(const char *name);

/* Expand ~, ~/..., $HOME, ${VAR}, $VAR in a path entry (out is reset first).
 * -EINVAL for an unset or empty variable, "~user", a malformed ${...}, or a
 * result over MOAT_CONFIG_MAX_STRING. A backslash escapes the next character.
 * With MOAT_EXPAND_GLOB the result is a glob: substituted values have their
 * glob characters escaped (a value is data, never a pattern) and backslash
 * escapes are kept for the glob; without it the result is a plain path and
 * escapes are removed. moat_config_expand is the glob form. */
#define MOAT_EXPAND_GLOB 1u
int moat_config_expand_ex(const char *in, unsigned flags, struct moat_buf *out,
			  struct moat_error *err);
int moat_config_expand(const char *in, struct moat_buf *out, struct moat_error *err);

/* Flag helpers (CLI). csv: comma-separated globs. Appends never shrink defaults. */
int moat_config_add_denied_paths_csv(struct moat_config *c, const char *csv, struct moat_error *err);
int moat_config_set_allowed_paths_csv(struct moat_config *c, const char *csv, struct moat_error *err);
int moat_config_strlist_add(struct moat_config *c, struct moat_strlist *l, const char *s,
			    const struct moat_loc *loc);

/* The sandbox profile the configuration gives NAME (NULL: sandbox.profile,
 * else MOAT_PROFILE_DEFAULT): a built-in or named profile resolved over its
 * extends chain, with the configuration-wide defaults (sandbox.fallback,
 * sandbox.linux.max_memory_mb) under the named layers. Fails closed like
 * moat_profile_resolve (-ENOENT, -ELOOP, -EPERM, -E2BIG, -ENOMEM). */
int moat_config_sandbox_profile(const struct moat_config *c, const char *name,
				struct moat_profile *ret, struct moat_error *err);
/* The profile name for a call of TOOL (seed 002): the first sandbox.rules
 * entry naming it, else sandbox.profile, else MOAT_PROFILE_DEFAULT. */
const char *moat_config_profile_for_tool(const struct moat_config *c, const char *tool);

/* Strict JSON helpers shared with the tool-argument parser. */
struct json_t;

#endif
