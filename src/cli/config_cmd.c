/* moat config: "show" prints the effective configuration (defaults, file,
 * flags, and the project layer); "check FILE" validates one file, the health
 * check of seed 002: exit 0 when it loads, 2 with file:line:column otherwise. */
#include <string.h>
#include <stdlib.h>

#include "base/str.h"
#include "cli/cli.h"
#include "cli/policy_opts.h"
#include "core/config.h"

static const char config_usage[] =
	"usage: moat config show [policy options]\n"
	"       moat config check [--project] FILE...\n"
	"\n"
	"show   print the effective configuration as JSON: built-in defaults, then the\n"
	"       user file, then flags; the project layer (.moat/config.json) separately.\n"
	"check  validate configuration files (with --project: as project files, which\n"
	"       may only tighten). Prints 'FILE: ok' or the error with file:line:column;\n"
	"       warnings (a substring command rule that looks like a glob, ...) go to\n"
	"       stderr and leave the exit status 0.\n"
	"\n"
	"exit status: 0 valid, 2 invalid or unreadable.\n\n";

static int config_show(int argc, char **argv)
{
	struct cli_policy cp;
	char *json;
	int r;

	cli_policy_init(&cp);
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			fputs(config_usage, stdout);
			fputs(cli_policy_help, stdout);
			return 0;
		}
		r = cli_policy_opt(&cp, "config show", argc, argv, &i);
		if (r == 1)
			continue;
		if (r)
			return r;
		return cli_usage_error("config show", "unknown argument '%s'", argv[i]);
	}
	/* compile too, so that an invalid combination is reported here as well */
	r = cli_policy_load(&cp, "config show", true);
	if (r) {
		cli_policy_release(&cp);
		return r;
	}
	json = moat_config_to_json(cp.user);
	if (!json) {
		cli_policy_release(&cp);
		return cli_usage_error("config show", "out of memory");
	}
	struct moat_buf b = MOAT_BUF_INIT;

	moat_buf_puts(&b, "{\n\"sources\": {\"user\": ");
	if (cp.user_source[0])
		moat_buf_json_str(&b, cp.user_source, strlen(cp.user_source));
	else
		moat_buf_puts(&b, "null");
	moat_buf_puts(&b, ", \"project\": ");
	if (cp.project_source[0])
		moat_buf_json_str(&b, cp.project_source, strlen(cp.project_source));
	else
		moat_buf_puts(&b, "null");
	moat_buf_puts(&b, ", \"cwd\": ");
	moat_buf_json_str(&b, cp.cwd, strlen(cp.cwd));
	moat_buf_puts(&b, "},\n\"effective\": ");
	moat_buf_puts(&b, json);
	free(json);
	if (cp.project) {
		json = moat_config_to_json(cp.project);
		moat_buf_puts(&b, ",\n\"project\": ");
		moat_buf_puts(&b, json ? json : "null");
		free(json);
	}
	fputs(b.data ? b.data : "", stdout);
	moat_buf_release(&b);
	printf("\n}\n");
	cli_policy_release(&cp);
	return 0;
}

static void print_warning(const struct moat_loc *loc, const char *key, const char *msg, void *ud)
{
	const char *file = loc->file ? loc->file : (const char *)ud;

	if (loc->line > 0)
		fprintf(stderr, "%s:%d:%d: warning: %s: %s\n", file, loc->line, loc->column, key,
			msg);
	else
		fprintf(stderr, "%s: warning: %s: %s\n", file, key, msg);
}

static int config_check(int argc, char **argv)
{
	unsigned flags = 0;
	int nfiles = 0, rc = 0;

	cli_install_env();
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			fputs(config_usage, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--project")) {
			flags |= MOAT_CONFIG_PROJECT;
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("config check", "unknown option '%s'", argv[i]);
	}
	for (int i = 1; i < argc; i++) {
		struct moat_config *c = NULL;
		struct moat_policy *p = NULL;
		struct moat_error err;

		if (argv[i][0] == '-' && argv[i][1])
			continue;
		nfiles++;
		moat_error_clear(&err);
		if (moat_config_new(&c) < 0)
			return cli_usage_error("config check", "out of memory");
		if (moat_config_load_file(c, argv[i], flags, &err) < 0 ||
		    moat_policy_new(c, NULL, "/", &p, &err) < 0) {
			cli_print_error("config check", &err);
			rc = MOAT_EXIT_USAGE;
		} else {
			/* valid, and said so; what may not mean what it says is
			 * on stderr (the exit status stays 0) */
			moat_config_warnings(c, print_warning, argv[i]);
			printf("%s: ok\n", argv[i]);
		}
		moat_policy_free(p);
		moat_config_free(c);
	}
	if (!nfiles)
		return cli_usage_error("config check", "missing FILE");
	return rc;
}

int cmd_config(int argc, char **argv)
{
	if (argc < 2 || cli_is_help(argv[1])) {
		fputs(config_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? MOAT_EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "show"))
		return config_show(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return config_check(argc - 1, argv + 1);
	return cli_usage_error("config", "unknown subcommand '%s' (show, check)", argv[1]);
}
