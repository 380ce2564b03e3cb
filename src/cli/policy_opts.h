/* Policy options shared by the subcommands that decide (check, config show,
 * and later tool/mcp): where configuration comes from and seed 000's flags. */
#ifndef MOAT_CLI_POLICY_OPTS_H
#define MOAT_CLI_POLICY_OPTS_H

#include <stdbool.h>

#include <moat/moat.h>

#include "core/path.h"

struct cli_policy {
	const char *config_path; /* --config FILE */
	const char *cwd_arg;	 /* --cwd DIR */
	bool read_only;		 /* --read-only */
	int require_approval;	 /* -1 unset, 0 --no-require-approval, 1 --require-approval */
	int restrict_to_cwd;	 /* -1 unset, 0/1 */
	const char *denied_paths[64];
	int ndenied_paths;
	const char *allowed_paths; /* --allowed-paths CSV (overrides --restrict-to-cwd) */

	char cwd[MOAT_PATH_MAX];
	char user_source[MOAT_PATH_MAX];    /* the user config file used, "" for none */
	char project_source[MOAT_PATH_MAX]; /* the project file used, "" for none */
	struct moat_config *user;
	struct moat_config *project;
	struct moat_policy *policy;
};

void cli_policy_init(struct cli_policy *cp);
void cli_policy_release(struct cli_policy *cp);
/* Try to consume a policy option at argv[*i] (advancing *i past its value).
 * Returns 1 when consumed, 0 when argv[*i] is not a policy option, and
 * MOAT_EXIT_USAGE (after printing) when the option is malformed. */
int cli_policy_opt(struct cli_policy *cp, const char *sub, int argc, char **argv, int *i);
/* Load defaults, files and flags; compile when compile is true.
 * Returns 0 or MOAT_EXIT_USAGE after printing the error. */
int cli_policy_load(struct cli_policy *cp, const char *sub, bool compile);
/* The option help text shared by check and config show. */
extern const char cli_policy_help[];

#endif
