/* The moat command line: one file per subcommand, one table in main.c.
 * Exit codes shared by all subcommands are named here. */
#ifndef MOAT_CLI_H
#define MOAT_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include <moat/moat.h>

/* exit statuses */
#define MOAT_EXIT_OK 0
#define MOAT_EXIT_DENY 1
#define MOAT_EXIT_USAGE 2 /* bad input: nothing ran */
#define MOAT_EXIT_ASK 3

struct moat_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_check(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_redact(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_hook(int argc, char **argv);
int cmd_tool(int argc, char **argv);
int cmd_mcp(int argc, char **argv);

/* util.c: shared by subcommands */
/* Print "moat SUBCMD: message" to stderr; returns MOAT_EXIT_USAGE. */
int cli_usage_error(const char *sub, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_print_error(const char *sub, const struct moat_error *e);
/* Read a whole file or stdin ("-") with a cap; heap buffer in *ret, length in *ret_len. */
int cli_read_all(const char *path, size_t cap, char **ret, size_t *ret_len);
/* Install the environment lookup used by config expansion. */
void cli_install_env(void);
/* The working directory to use: --cwd or getcwd, normalized. */
int cli_resolve_cwd(const char *arg, char *out, size_t outsz);
bool cli_is_help(const char *arg);

#endif
