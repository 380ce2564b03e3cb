/* The built-in tools: read_file, write_file, edit_file, list_directory and
 * bash (alias run_shell_command). A tool runs only after the policy (and,
 * for ASK, the gate) said yes; it still defends itself: file tools do their
 * I/O beneath an allowed root with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS) and check the real path of what they opened against
 * the policy once more; bash runs under the sandbox (src/sandbox/runner.h)
 * in a child process of its own (forked by the fork server below, when one
 * runs).
 *
 * Thread-safe: calls may run concurrently on a shared env. */
#ifndef MOAT_TOOLS_H
#define MOAT_TOOLS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <moat/policy.h>

#include "core/config.h"
#include "sandbox/runner.h"

enum moat_tool_kind {
	MOAT_TOOL_NONE = 0, /* not a built-in tool */
	MOAT_TOOL_READ_FILE,
	MOAT_TOOL_WRITE_FILE,
	MOAT_TOOL_EDIT_FILE,
	MOAT_TOOL_LIST_DIRECTORY,
	MOAT_TOOL_BASH,
	MOAT_TOOL__COUNT,
};

/* "bash" and its alias "run_shell_command" are both MOAT_TOOL_BASH. */
enum moat_tool_kind moat_tool_lookup(const char *name);
/* The canonical name ("bash" for the alias). */
const char *moat_tool_name(enum moat_tool_kind k);

/* Caps (docs/tools.md); each is tested at its boundary. */
#define MOAT_READ_MAX_BYTES (256u << 10)     /* read_file: bytes returned per call */
#define MOAT_READ_DEFAULT_LINES 2000u	     /* read_file: lines without "limit" */
#define MOAT_WRITE_MAX_BYTES (16u << 20)     /* write_file / edit_file content */
#define MOAT_LIST_MAX_ENTRIES 1000u	     /* list_directory */
#define MOAT_BASH_OUTPUT_CAP (64u << 10)     /* bash: per stream, default */
#define MOAT_BASH_MAX_COMMAND (256u << 10)   /* bash: command bytes */
#define MOAT_BASH_DEFAULT_TIMEOUT_S 120	     /* bash: without "timeout" */
#define MOAT_BASH_MAX_TIMEOUT_S 3600

struct moat_bash_server;

/* What the tools share for a session. Borrowed, must outlive the calls. */
struct moat_tool_env {
	const struct moat_policy *policy; /* for the check after open */
	const struct moat_config *cfg;	  /* sandbox profiles, denied paths */
	const char *workspace;		  /* absolute, symlinks resolved: --cwd / --workspace */
	size_t output_cap;		  /* bash, per stream; 0: MOAT_BASH_OUTPUT_CAP */
	char *const *env;		  /* environment for bash to filter; NULL: environ */
	const struct moat_config *project_cfg; /* a project file (tighten-only), may be NULL:
						* its denied paths are masked for bash too */
	/* bash's fork server (moat_bash_server_start), NULL: each bash call
	 * forks the caller */
	struct moat_bash_server *bash_server;
	/* the file the session's audit record goes to, as opened (a real
	 * path), protected in bash's sandbox; NULL: none */
	const char *audit_log;
};

/* Per call. */
struct moat_tool_call {
	int cancel_fd; /* readable (e.g. an eventfd) once the call is cancelled; -1 none */
	/* bash: called about once a second while the command runs; may be NULL */
	void (*progress)(void *ud, double elapsed_ms, size_t bytes_so_far);
	void *progress_ud;
};

struct moat_tool_result {
	bool ok;
	char *output;	    /* heap text for the model, NUL-terminated; NULL none */
	size_t output_len;
	char error[512];    /* when !ok: one sentence a model can act on */
	json_t *data;	    /* structured result (owned), NULL none */
	/* for the audit record */
	int exit_code;	    /* bash: the exit code, -1 when killed or not run; else -1 */
	int signal;	    /* bash: the killing signal, 0 none */
	bool timed_out;
	bool cancelled;
	double duration_ms;
	size_t bytes_out;		       /* bytes of output produced (before capping) */
	char sandbox[MOAT_RUN_SANDBOX_JSON_MAX]; /* bash: requested/enforced JSON, "" else */
};

void moat_tool_result_init(struct moat_tool_result *r);
void moat_tool_result_release(struct moat_tool_result *r);

/* Run one tool call. args is the parsed argument object (borrowed).
 * Returns 0 when the call was carried out or refused by the tool itself
 * (ret->ok false and ret->error say why: file not found, old_string not
 * unique, the real path is denied, ...); -EINVAL for invalid arguments
 * (missing, wrong type, unknown key) with ret->error naming the argument;
 * -ENOMEM. Never runs anything on error. */
int moat_tool_run(const struct moat_tool_env *env, enum moat_tool_kind k, json_t *args,
		  const struct moat_tool_call *call, struct moat_tool_result *ret);

/* Per tool (registry.c dispatches to these). */
int moat_tool_read_file(const struct moat_tool_env *env, json_t *args,
			const struct moat_tool_call *call, struct moat_tool_result *ret);
int moat_tool_write_file(const struct moat_tool_env *env, json_t *args,
			 const struct moat_tool_call *call, struct moat_tool_result *ret);
int moat_tool_edit_file(const struct moat_tool_env *env, json_t *args,
			const struct moat_tool_call *call, struct moat_tool_result *ret);
int moat_tool_list_directory(const struct moat_tool_env *env, json_t *args,
			     const struct moat_tool_call *call, struct moat_tool_result *ret);
int moat_tool_bash(const struct moat_tool_env *env, json_t *args,
		   const struct moat_tool_call *call, struct moat_tool_result *ret);

/* bash's fork server: a small process forked once, while the caller is
 * still single-threaded, that forks the sandbox runner of each bash call
 * (forking a multi-threaded caller and running the runner in the child is
 * unsafe: a lock another thread held at the fork, in malloc, stdio or NSS,
 * stays locked in the child). It keeps what it needs from the moment of the
 * fork: env->cfg and env->env (environ when NULL) and the contents they
 * point to, which must not change while it runs; a call on an env whose
 * cfg or env differ from the server's forks the caller instead. It dies with
 * the thread that started it and with its socket.
 *
 * Start: call before the process starts threads; sets env->bash_server.
 * Returns 0 (also when one runs already) or negative errno (err says why;
 * calls then fork the caller, as without a server). Stop: when no call runs;
 * closes the server's socket and waits for it (bounded), sets
 * env->bash_server to NULL; NULL-safe. */
int moat_bash_server_start(struct moat_tool_env *env, struct moat_error *err);
void moat_bash_server_stop(struct moat_tool_env *env);

/* JSON Schemas of the tools' inputs and outputs, for MCP tools/list
 * (static strings, one JSON object each). */
const char *moat_tool_description(enum moat_tool_kind k);
const char *moat_tool_input_schema(enum moat_tool_kind k);

/* Do args fit tool k's input schema (an object; only its properties, of
 * their types and bounds; the required ones present; no NUL in a string)?
 * 0, or -EINVAL with a sentence naming the argument in err. For checking a
 * call before anything runs (a replayed session, `moat check`); the tool
 * itself checks again when it runs. */
int moat_tool_args_check(enum moat_tool_kind k, json_t *args, char *err, size_t errsz);
const char *moat_tool_output_schema(enum moat_tool_kind k);

#endif
