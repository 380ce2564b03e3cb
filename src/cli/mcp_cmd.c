/* moat mcp: serve the built-in tools to an MCP client over stdio
 * (newline-delimited JSON-RPC 2.0 on stdin and stdout), every call through
 * policy, approval (elicitation), sandbox and audit.
 *
 * This file parses options, loads the configuration and builds the
 * session: the workspace is the working directory, and when no
 * configuration sets allowed_paths the file tools are confined to
 * <workspace>/ and below. It never writes to stdout itself: stdout is the
 * protocol's. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <moat/session.h>

#include "cli/cli.h"
#include "cli/policy_opts.h"
#include "core/config.h"
#include "mcp/mcp.h"

static const char mcp_usage[] =
    "usage: moat mcp [--config FILE] [--workspace DIR] [--audit-log FILE] [policy options]\n"
    "\n"
    "Serve moat's tools (read_file, write_file, edit_file, list_directory, bash) to an\n"
    "MCP client over stdin and stdout (newline-delimited JSON-RPC 2.0, MCP revisions\n"
    "2024-11-05 to 2025-11-25). Every call goes through the policy, the approval gate,\n"
    "the sandbox and the audit log. A call that needs approval is asked to the user\n"
    "through the client (MCP elicitation) when the client supports it, else denied.\n"
    "\n"
    "options:\n"
    "  --workspace DIR    the root: file tools are confined to DIR/** unless the\n"
    "                     configuration sets allowed_paths, and bash runs in DIR\n"
    "                     (default: the current directory; same as --cwd)\n"
    "  --audit-log FILE   append audit records here ('-': stderr) instead of the\n"
    "                     configuration's audit_log\n"
    "\n"
    "Client set-up (Claude Code .mcp.json, Codex config.toml, Cursor mcp.json):\n"
    "docs/mcp.md. Ends at end of input (calls in flight are cancelled) or on\n"
    "SIGTERM, SIGINT, SIGHUP.\n"
    "\n"
    "exit status: 0 when the client closed the connection, 2 bad options or\n"
    "configuration, 1 when the server failed.\n\n";

/* "--name VALUE" or "--name=VALUE": 1 consumed, 0 not this option, else an exit status. */
static int opt_value(const char *name, int argc, char **argv, int *i, const char **ret)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
		return 0;
	if (a[n] == '=')
		*ret = a + n + 1;
	else if (*i + 1 < argc)
		*ret = argv[++*i];
	else
		return cli_usage_error("mcp", "option %s needs a value", name);
	if (!**ret)
		return cli_usage_error("mcp", "option %s needs a non-empty value", name);
	return 1;
}

/* The workspace is the root when nothing says otherwise. */
static int confine_to_workspace(struct cli_policy *cp)
{
	struct moat_error err;

	if (cp->allowed_paths || cp->restrict_to_cwd == 0)
		return 0; /* the flags said */
	if (cp->user->allowed_paths_set || (cp->project && cp->project->allowed_paths_set))
		return 0; /* a configuration file said */
	moat_error_clear(&err);
	if (moat_config_set_allowed_paths_csv(cp->user, "<cwd>/**", &err) < 0)
		return cli_print_error("mcp", &err);
	/* bash always runs under the Linux sandbox here (workspace-write
	 * profile): say so, or the policy would ask before every command
	 * because mode "local" cannot enforce the allow-list */
	if (cp->user->sandbox_mode == MOAT_SANDBOX_LOCAL)
		cp->user->sandbox_mode = MOAT_SANDBOX_LINUX;
	return 0;
}

int cmd_mcp(int argc, char **argv)
{
	struct cli_policy cp;
	struct moat_session_opts so;
	struct moat_session *s = NULL;
	struct moat_mcp_opts mo;
	struct moat_error err;
	const char *audit = NULL, *workspace = NULL;
	int i, r;

	cli_policy_init(&cp);
	moat_error_clear(&err);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (cli_is_help(a)) {
			fputs(mcp_usage, stdout);
			fputs(cli_policy_help, stdout);
			return 0;
		}
		r = opt_value("--workspace", argc, argv, &i, &workspace);
		if (r == 1)
			continue;
		if (r)
			return r;
		r = opt_value("--audit-log", argc, argv, &i, &audit);
		if (r == 1)
			continue;
		if (r)
			return r;
		r = cli_policy_opt(&cp, "mcp", argc, argv, &i);
		if (r == 1)
			continue;
		if (r)
			return r;
		return cli_usage_error("mcp", "unexpected argument '%s' (see moat mcp --help)", a);
	}
	if (workspace) {
		if (cp.cwd_arg && strcmp(cp.cwd_arg, workspace) != 0)
			return cli_usage_error("mcp", "--workspace and --cwd name different "
						      "directories");
		cp.cwd_arg = workspace;
		{
			struct stat st;

			if (stat(workspace, &st) < 0)
				return cli_usage_error("mcp", "--workspace %s: %s", workspace,
						       strerror(errno));
			if (!S_ISDIR(st.st_mode))
				return cli_usage_error("mcp", "--workspace %s: not a directory",
						       workspace);
		}
	}

	r = cli_policy_load(&cp, "mcp", false);
	if (r)
		goto out;
	/* SECURITY: the workspace is the file tools' root and the shell's
	 * writable tree: the whole filesystem is none (moat run and the bash
	 * tool refuse it too) */
	if (!strcmp(cp.cwd, "/")) {
		r = cli_usage_error("mcp", "--workspace: the workspace cannot be '/' (give a "
					   "project directory)");
		goto out;
	}
	r = confine_to_workspace(&cp);
	if (r)
		goto out;
	if (moat_policy_new(cp.user, cp.project, cp.cwd, &cp.policy, &err) < 0) {
		r = cli_print_error("mcp", &err);
		goto out;
	}
	memset(&so, 0, sizeof(so));
	so.config = cp.user;
	so.project = cp.project;
	so.policy = cp.policy;
	so.cwd = cp.cwd;
	so.audit_path = audit;
	so.source = "mcp";
	/* no session-wide approver: each call brings the elicitation approver */
	r = moat_session_new(&so, &s, &err);
	if (r < 0) {
		r = cli_print_error("mcp", &err);
		goto out;
	}
	r = moat_mcp_install_signals();
	if (r < 0) {
		fprintf(stderr, "moat mcp: cannot install signal handlers: %s\n", strerror(-r));
		r = 1;
		goto out;
	}
	if (isatty(0))
		fprintf(stderr,
			"moat mcp: serving MCP (JSON-RPC, one message a line) on stdin "
			"and stdout for workspace %s; an MCP client starts this command "
			"(docs/mcp.md). Ctrl-D ends.\n",
			cp.cwd);
	memset(&mo, 0, sizeof(mo));
	mo.in_fd = 0;
	mo.out_fd = 1;
	mo.workspace = cp.cwd;
	r = moat_mcp_serve(s, &mo);
	if (r < 0) {
		fprintf(stderr, "moat mcp: %s\n", strerror(-r));
		r = 1;
	}
out:
	moat_session_free(s);
	cli_policy_release(&cp);
	return r;
}
