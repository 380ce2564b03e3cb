/* Internal policy entry points shared with the tools and the MCP server:
 * checking an already parsed argument object. Pure. */
#ifndef MOAT_CORE_POLICY_CHECK_H
#define MOAT_CORE_POLICY_CHECK_H

#include <jansson.h>

#include <moat/policy.h>

#define MOAT_ARGS_MAX_BYTES (4u << 20) /* 4 MiB of tool arguments */

int moat_policy_check_args(const struct moat_policy *p, const char *tool, json_t *args,
			   struct moat_decision *ret, struct moat_error *err);
/* Effects of a tool (MOAT_EFFECT_*), 0 for an undeclared tool. */
unsigned moat_policy_tool_effects(const struct moat_policy *p, const char *tool);
bool moat_policy_logs_commands(const struct moat_policy *p);

#endif
