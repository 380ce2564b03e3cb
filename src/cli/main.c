/* moat: the command-line front door. One table of subcommands; each lives
 * in its own file (check.c, config_cmd.c, ...). Nothing else happens here. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

static const struct moat_cmd commands[] = {
	{"check", cmd_check, "decide what moat would do with one tool call, without running it"},
	{"run", cmd_run, "run a command inside the Linux sandbox"},
	{"tool", cmd_tool, "run one tool call through policy, approval, sandbox and audit"},
	{"hook", cmd_hook, "answer Claude Code's PreToolUse hook with moat's policy and audit"},
	{"mcp", cmd_mcp, "serve the tools to an MCP client (Claude Code, Codex, Cursor) over stdio"},
	{"status", cmd_status, "show what this kernel can enforce, requested versus enforced"},
	{"config", cmd_config, "show the effective configuration or validate a file"},
	{"redact", cmd_redact, "copy stdin to stdout with secrets redacted"},
	{"audit", cmd_audit, "read the audit log back, or verify it"},
	{"version", cmd_version, "print the version"},
	{"help", cmd_help, "show this help"},
};

static int cmd_version(int argc, char **argv)
{
	printf("moat %s\n", MOAT_VERSION);
	return 0;
}

static int cmd_help(int argc, char **argv)
{
	printf("usage: moat COMMAND [ARGS]\n\n"
	       "moat stands between an AI agent and the machine: every tool call passes\n"
	       "policy, approval, a kernel sandbox and audit.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		printf("  %-9s %s\n", commands[i].name, commands[i].summary);
	printf("\n'moat COMMAND --help' describes each command; docs/cli.md has them all.\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		cmd_help(0, NULL);
		return MOAT_EXIT_USAGE;
	}
	if (cli_is_help(argv[1]))
		return cmd_help(0, NULL);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(0, NULL);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "moat: unknown command '%s' (see 'moat help')\n", argv[1]);
	return MOAT_EXIT_USAGE;
}
