/* Internal policy entry points shared with the tools and the MCP server:
 * checking an already parsed argument object. Pure. */
#ifndef MOAT_CORE_POLICY_CHECK_H
#define MOAT_CORE_POLICY_CHECK_H

#include <jansson.h>

#include <moat/policy.h>

#define MOAT_ARGS_MAX_BYTES (4u << 20) /* 4 MiB of tool arguments */

int moat_policy_check_args(const struct moat_policy *p, const char *tool, json_t *args,
			   struct moat_decision *ret, struct moat_error *err);
/* Flags of moat_policy_check_args_ex. UNSANDBOXED: nothing confines what
 * the call runs (a hook answering for an agent that runs the tool itself),
 * so what the policy leaves to moat's sandbox is decided here: a shell
 * command naming a denied path is DENY, not ASK (the sandbox would hide the
 * path), and a shell command asks whenever allowed_paths is set (the
 * sandbox would enforce it). */
#define MOAT_CHECK_UNSANDBOXED 1u
int moat_policy_check_args_ex(const struct moat_policy *p, const char *tool, json_t *args,
			      unsigned flags, struct moat_decision *ret, struct moat_error *err);

/* What a check found besides its decision, for the audit record. */
#define MOAT_POLICY_MAX_NOTES 8
struct moat_policy_notes {
	/* the user's exempt_paths patterns (as the policy holds them: absolute,
	 * or starting with "**"), each once in the order met, that kept a
	 * path the call names (an argument, a spelling, a link on its way, a
	 * word of its command) from being a denied path; at most
	 * MOAT_POLICY_MAX_NOTES. They point into the policy. */
	const char *exempt[MOAT_POLICY_MAX_NOTES];
	size_t nexempt;
};
/* moat_policy_check_args_ex, and what it found into notes (may be NULL). */
int moat_policy_check_args_notes(const struct moat_policy *p, const char *tool, json_t *args,
				 unsigned flags, struct moat_decision *ret,
				 struct moat_policy_notes *notes, struct moat_error *err);
/* Effects of a tool (MOAT_EFFECT_*), 0 for an undeclared tool. */
unsigned moat_policy_tool_effects(const struct moat_policy *p, const char *tool);
bool moat_policy_logs_commands(const struct moat_policy *p);

/* The decision the policy gives TOOL for one absolute path, as if it were
 * the tool's path argument, without resolving symlinks: for the check of
 * the real path of a descriptor after open (the file tools). Returns 0, or
 * -EINVAL (with *ret a DENY) for a path that is not a usable absolute path. */
int moat_policy_check_path(const struct moat_policy *p, const char *tool, const char *path,
			   struct moat_decision *ret);
/* The allowed roots: for each allowed_paths glob (every layer), its literal
 * directory before the first glob character ("/ws/a*.c" -> "/ws",
 * "/ws/a.txt" -> "/ws", "**\/x" -> "/"; globstars likewise). out[i] points into the policy
 * and is NOT NUL-terminated: out_len[i] bytes. Fills at most max entries and
 * returns how many there are; 0 when no layer has an allow-list. */
size_t moat_policy_roots(const struct moat_policy *p, const char **out, size_t *out_len,
			 size_t max);
/* The home directory "~" stands for in this policy (absolute, normalized),
 * "" when none is known (or p is NULL): the file tools expand "~" with it,
 * so what they open is the spelling the policy checked. */
const char *moat_policy_home(const struct moat_policy *p);

#endif
