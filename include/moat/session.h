/* moat sessions: the one path every agent tool call takes.
 *
 *   policy -> approval (gate) -> execution under enforcement -> audit
 *
 * A session holds the compiled policy, the approval gate (with its
 * pre-approvals and the answers remembered for the session), the tool
 * environment and the audit log. moat_session_call is thread-safe: an MCP
 * server runs many calls of one session at once. */
#ifndef MOAT_SESSION_H
#define MOAT_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include <moat/error.h>
#include <moat/policy.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- approvals ---- */
enum moat_answer {
	MOAT_ANSWER_DENIED = 0,
	MOAT_ANSWER_APPROVED,
	MOAT_ANSWER_APPROVED_ALWAYS,
};
const char *moat_answer_name(enum moat_answer a); /* "denied", "approved", "approved_always" */

/* What an approver is shown. */
struct moat_ask {
	const char *call_id;
	const char *tool;	     /* canonical name ("bash" for run_shell_command) */
	const char *args_json;	     /* the arguments, secrets redacted, compact JSON */
	const char *summary;	     /* the key argument: the command, the path */
	const struct moat_decision *decision; /* the ASK: rule and reason */
	const char *always_prefix;   /* bash: a command prefix glob to offer for "always"
				      * ("git *"), NULL otherwise */
};

struct moat_reply {
	enum moat_answer answer;
	/* APPROVED_ALWAYS for bash: "" remembers the whole tool, else a glob on
	 * the command ("git *") */
	char always_pattern[256];
};

/* An approver answers one ask within timeout_ms (the gate enforces the
 * bound too). Returns 0 with *ret filled; -ETIMEDOUT, -ECANCELED, -ENOTTY (no
 * human to ask) or another negative errno, which the gate turns into
 * DENIED with the reason said. Called from the thread making the call. */
typedef int (*moat_approver_fn)(void *ud, const struct moat_ask *ask, int timeout_ms,
				struct moat_reply *ret);

/* ---- sessions ---- */
struct moat_session;

struct moat_session_opts {
	const char *config_path;  /* --config FILE; NULL: $XDG_CONFIG_HOME/moat/config.json if any */
	const char *config_json;  /* a configuration given as text (instead of a file), may be NULL */
	const char *cwd;	  /* the working directory and shell workspace; NULL: getcwd */
	const char *audit_path;	  /* overrides the configuration's audit_log ("-": stderr) */
	bool no_project_config;	  /* do not read CWD/.moat/config.json */
	moat_approver_fn approver; /* NULL: no human, ASK is DENIED */
	void *approver_ud;
	const char *approver_name; /* for the audit record: "tty", "callback", "elicitation" */
	bool preapproved_only;	   /* only the config's approvals answer ASK */
	/* Prebuilt configuration (the CLI loads files and flags itself): when
	 * config is set, config_path/config_json are ignored and the session
	 * borrows config, project (may be NULL) and policy (NULL: compiled from
	 * the two); they must outlive the session. */
	const struct moat_config *config;
	const struct moat_config *project;
	const struct moat_policy *policy;
	const char *source;	   /* the audit record's "source": "tool" (default), "mcp" */
	size_t output_cap;	   /* bash output per stream; 0: the default */
	/* The caller makes its calls from one thread only (a command-line
	 * tool): bash forks the caller directly, no fork server is started
	 * (saves about 0.4 ms per process). */
	bool single_threaded;
};

/* Create a session before the process starts any thread, on a thread that
 * lives as long as the session (the main thread): it forks bash's fork
 * server (src/tools/tools.h), which copies the process as it is at that
 * moment and runs the sandbox of each bash call; a fork from a
 * multi-threaded process is not safe to run code in. The session's
 * configuration and the environment are the server's copy from then on.
 * moat_session_free stops the server: call it when no call runs. */
int moat_session_new(const struct moat_session_opts *o, struct moat_session **ret,
		     struct moat_error *err);
struct moat_session *moat_session_free(struct moat_session *s);

/* One call's options. */
struct moat_call_opts {
	const char *call_id; /* NULL: the session numbers the calls */
	int cancel_fd;	     /* readable once the call is cancelled; -1 none */
	void (*progress)(void *ud, double elapsed_ms, size_t bytes_so_far);
	void *progress_ud;
	moat_approver_fn approver; /* overrides the session's for this call, may be NULL */
	void *approver_ud;
	const char *approver_name;
	/* Do not wait for a human: when the call needs an approver's answer
	 * (an ASK that no pre-approval or remembered "always" settles), return
	 * MOAT_CALL_DEFERRED at once: nothing ran, nobody was asked, nothing
	 * was recorded. The caller makes the same call again from a thread
	 * that may wait (an event loop hands it to a worker). */
	bool defer_ask;
	/* The caller reads ret->json only when ret->output is NULL (the MCP
	 * server writes output and data_json itself): ret->json is then left
	 * NULL when there is an output. */
	bool lean;
};

enum moat_call_status {
	MOAT_CALL_OK = 0,	/* the tool ran and succeeded */
	MOAT_CALL_FAILED,	/* the tool ran (or tried) and failed: result.error */
	MOAT_CALL_DENIED,	/* policy or approval said no: nothing ran */
	MOAT_CALL_BAD_INPUT,	/* malformed arguments: nothing ran */
	MOAT_CALL_AUDIT_FAILED, /* the audit log could not be written: nothing ran
				 * (or the result was withheld), fails closed */
	MOAT_CALL_DEFERRED,	/* defer_ask: a human must answer; nothing ran, nothing
				 * was asked or recorded */
};

struct moat_call_result {
	enum moat_call_status status;
	struct moat_decision decision;	/* the policy's */
	enum moat_verdict final;	/* after approval */
	char approval_by[32];		/* "", "preapproved", "session", "tty", ... */
	char approval_answer[24];	/* "", "approved", "denied", "approved_always" */
	char call_id[48];
	char *json;			/* the result object (heap): ok, output, error,
					 * decision, data...; always set (but see
					 * moat_call_opts.lean) */
	char *output;			/* heap text for the model, may be NULL */
	char error[512];		/* when not OK */
	bool is_error;
	void *structured;		/* json_t* of structured data (borrowed until release) */
	char *data_json;		/* that data as compact JSON text (heap), NULL when
					 * none: what "data" holds in json */
};

int moat_session_call(struct moat_session *s, const char *tool, const char *args_json,
		      size_t args_len, const struct moat_call_opts *o,
		      struct moat_call_result *ret);
void moat_call_result_release(struct moat_call_result *r);

/* The session's policy (for moat check-like decisions and hooks). */
const struct moat_policy *moat_session_policy(const struct moat_session *s);

#ifdef __cplusplus
}
#endif
#endif
