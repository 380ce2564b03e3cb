/* Where the configuration comes from, and the policy flags of seed 000.
 *
 * Precedence: built-in defaults, then one user file (--config FILE, else
 * $XDG_CONFIG_HOME/moat/config.json or ~/.config/moat/config.json when it
 * exists), then flags. The project file <cwd>/.moat/config.json is loaded
 * into a separate layer that may only tighten; there is no flag to skip it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/policy_opts.h"
#include "core/config.h"

const char cli_policy_help[] =
	"policy options:\n"
	"  --config FILE          configuration file (default: $XDG_CONFIG_HOME/moat/config.json)\n"
	"  --cwd DIR              working directory for relative paths and <cwd> (default: .)\n"
	"  --read-only            block every tool that writes or executes\n"
	"  --require-approval     ask before writes and shell commands\n"
	"  --no-require-approval  do not ask before writes and shell commands\n"
	"  --restrict-to-cwd      allow file tools only under the working directory\n"
	"  --no-restrict-to-cwd   drop the allowed-paths restriction\n"
	"  --denied-paths GLOBS   comma-separated globs appended to the denied paths\n"
	"  --allowed-paths GLOBS  comma-separated globs; replaces --restrict-to-cwd\n"
	"a project file <cwd>/.moat/config.json is always applied and can only tighten.\n";

void cli_policy_init(struct cli_policy *cp)
{
	memset(cp, 0, sizeof(*cp));
	cp->require_approval = -1;
	cp->restrict_to_cwd = -1;
}

void cli_policy_release(struct cli_policy *cp)
{
	moat_policy_free(cp->policy);
	moat_config_free(cp->user);
	moat_config_free(cp->project);
	cp->policy = NULL;
	cp->user = NULL;
	cp->project = NULL;
}

/* "--name VALUE" or "--name=VALUE" */
static int opt_value(const char *sub, const char *name, int argc, char **argv, int *i,
		     const char **ret)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0)
		return 0;
	if (a[n] == '=') {
		*ret = a + n + 1;
	} else if (a[n] == '\0') {
		if (*i + 1 >= argc)
			return cli_usage_error(sub, "option %s needs a value", name);
		*ret = argv[++*i];
	} else {
		return 0;
	}
	if (!**ret)
		return cli_usage_error(sub, "option %s needs a non-empty value", name);
	return 1;
}

int cli_policy_opt(struct cli_policy *cp, const char *sub, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v = NULL;
	int r;

	if ((r = opt_value(sub, "--config", argc, argv, i, &cp->config_path)) != 0)
		return r;
	if ((r = opt_value(sub, "--cwd", argc, argv, i, &cp->cwd_arg)) != 0)
		return r;
	if ((r = opt_value(sub, "--allowed-paths", argc, argv, i, &cp->allowed_paths)) != 0)
		return r;
	if ((r = opt_value(sub, "--denied-paths", argc, argv, i, &v)) != 0) {
		if (r != 1)
			return r;
		if (cp->ndenied_paths >= (int)MOAT_ARRAY_SIZE(cp->denied_paths))
			return cli_usage_error(sub, "too many --denied-paths options");
		cp->denied_paths[cp->ndenied_paths++] = v;
		return 1;
	}
	if (!strcmp(a, "--read-only"))
		cp->read_only = true;
	else if (!strcmp(a, "--require-approval"))
		cp->require_approval = 1;
	else if (!strcmp(a, "--no-require-approval"))
		cp->require_approval = 0;
	else if (!strcmp(a, "--restrict-to-cwd"))
		cp->restrict_to_cwd = 1;
	else if (!strcmp(a, "--no-restrict-to-cwd"))
		cp->restrict_to_cwd = 0;
	else
		return 0;
	return 1;
}

static int apply_flags(struct cli_policy *cp, const char *sub)
{
	struct moat_config *c = cp->user;
	struct moat_error err;

	moat_error_clear(&err);
	if (cp->read_only)
		c->read_only = true;
	if (cp->require_approval >= 0) {
		c->require_approval_for_writes = cp->require_approval;
		c->require_approval_for_execute = cp->require_approval;
	}
	if (cp->allowed_paths) {
		if (moat_config_set_allowed_paths_csv(c, cp->allowed_paths, &err) < 0) {
			moat_error_set_where(&err, "argument --allowed-paths", 0, 0);
			return cli_print_error(sub, &err);
		}
	} else if (cp->restrict_to_cwd == 1) {
		if (moat_config_set_allowed_paths_csv(c, "<cwd>/**", &err) < 0)
			return cli_print_error(sub, &err);
	} else if (cp->restrict_to_cwd == 0) {
		for (size_t k = 0; k < c->allowed_paths.n; k++)
			free(c->allowed_paths.v[k]);
		c->allowed_paths.n = 0;
		c->allowed_paths_set = false;
	}
	for (int k = 0; k < cp->ndenied_paths; k++) {
		if (moat_config_add_denied_paths_csv(c, cp->denied_paths[k], &err) < 0) {
			moat_error_set_where(&err, "argument --denied-paths", 0, 0);
			return cli_print_error(sub, &err);
		}
	}
	return 0;
}

int cli_policy_load(struct cli_policy *cp, const char *sub, bool compile)
{
	struct moat_error err;
	char project[MOAT_PATH_MAX + 32];
	int r;

	moat_error_clear(&err);
	cli_install_env();
	r = cli_resolve_cwd(cp->cwd_arg, cp->cwd, sizeof(cp->cwd));
	if (r < 0)
		return cli_usage_error(sub, "--cwd: not a usable directory: %s", strerror(-r));
	/* a directory given explicitly must be one (a file or a missing path
	 * is bad input, refused before anything is decided or run) */
	if (cp->cwd_arg) {
		struct stat st;

		if (stat(cp->cwd, &st) < 0)
			return cli_usage_error(sub, "--cwd %s: %s", cp->cwd_arg, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return cli_usage_error(sub, "--cwd %s: not a directory", cp->cwd_arg);
	}
	if (moat_config_new(&cp->user) < 0)
		return cli_usage_error(sub, "out of memory");
	if (cp->config_path) {
		moat_strlcpy(cp->user_source, cp->config_path, sizeof(cp->user_source));
	} else if (moat_config_user_path(cp->user_source, sizeof(cp->user_source)) < 0) {
		cp->user_source[0] = '\0';
	}
	if (cp->user_source[0] &&
	    moat_config_load_file(cp->user, cp->user_source, 0, &err) < 0)
		return cli_print_error(sub, &err);
	r = apply_flags(cp, sub);
	if (r)
		return r;
	if (moat_config_project_path(cp->cwd, project, sizeof(project)) == 0) {
		moat_strlcpy(cp->project_source, project, sizeof(cp->project_source));
		if (moat_config_new(&cp->project) < 0)
			return cli_usage_error(sub, "out of memory");
		if (moat_config_load_file(cp->project, project, MOAT_CONFIG_PROJECT, &err) < 0)
			return cli_print_error(sub, &err);
	}
	if (!compile)
		return 0;
	if (moat_policy_new(cp->user, cp->project, cp->cwd, &cp->policy, &err) < 0)
		return cli_print_error(sub, &err);
	return 0;
}
