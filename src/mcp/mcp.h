/* The MCP server's internals: JSON-RPC 2.0 framing and classification
 * (jsonrpc.c), the event loop (server.c) and approvals by elicitation
 * (elicit.c). An edge like the CLI: it stands on the session API only.
 *
 * Every size a client controls has a named limit here; exceeding one is an
 * error reply, never a crash and never unbounded memory. */
#ifndef MOAT_MCP_H
#define MOAT_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <moat/session.h>

#include "base/json.h"

/* ---- limits ---- */
#define MOAT_MCP_MAX_LINE (4u << 20)		/* one JSON-RPC message, bytes */
#define MOAT_MCP_MAX_DEPTH MOAT_JSON_MAX_DEPTH	/* nesting of one message */
#define MOAT_MCP_MAX_INFLIGHT 256		/* tools/call requests queued or running */
#define MOAT_MCP_MAX_INFLIGHT_BYTES (64u << 20) /* their argument bytes, together */
#define MOAT_MCP_MAX_ID_LEN 128			/* a string request id, bytes */
#define MOAT_MCP_MAX_REPLY (16u << 20)		/* one serialized reply, bytes */
#define MOAT_MCP_MAX_WORKERS 16			/* threads running tool calls */
#define MOAT_MCP_READ_CHUNK (64u << 10)		/* bytes read from stdin at once */
#define MOAT_MCP_ELICIT_MAX_ARGS 2000		/* argument bytes shown in an approval */

/* ---- protocol revisions, newest first ---- */
#define MOAT_MCP_LATEST_VERSION "2025-11-25"
extern const char *const moat_mcp_versions[]; /* NULL-terminated */
/* The revision to answer to a client asking for v (NULL: absent): v itself
 * when supported, else the latest. */
const char *moat_mcp_negotiate(const char *v);
/* true when revision a is at least b (both "YYYY-MM-DD"). */
bool moat_mcp_version_ge(const char *a, const char *b);

/* ---- JSON-RPC error codes ---- */
#define MOAT_RPC_PARSE_ERROR (-32700)
#define MOAT_RPC_INVALID_REQUEST (-32600)
#define MOAT_RPC_METHOD_NOT_FOUND (-32601)
#define MOAT_RPC_INVALID_PARAMS (-32602)
#define MOAT_RPC_INTERNAL_ERROR (-32603)
#define MOAT_RPC_SERVER_BUSY (-32000) /* a limit on calls in flight */

/* ---- framing: newline-delimited messages ---- */
struct moat_rpc_reader {
	char *buf;
	size_t len;  /* bytes held */
	size_t off;  /* start of the first unreturned line */
	size_t scan; /* where the search for '\n' resumes */
	size_t cap;
	size_t max_line; /* longest line accepted, without its '\n' */
	bool discarding; /* inside a line already reported as too long */
};

void moat_rpc_reader_init(struct moat_rpc_reader *r, size_t max_line);
void moat_rpc_reader_release(struct moat_rpc_reader *r);
/* Append n bytes. -ENOMEM. Bytes of a line already reported too long are
 * dropped here, so memory stays bounded by max_line plus one feed. */
int moat_rpc_reader_feed(struct moat_rpc_reader *r, const char *data, size_t n);
/* Read once from fd (at most MOAT_MCP_READ_CHUNK bytes). Returns the number
 * of bytes read, 0 at end of file, or a negative errno (-EAGAIN, -EINTR). */
long moat_rpc_reader_fill(struct moat_rpc_reader *r, int fd);

#define MOAT_RPC_LINE 1	    /* a line: *ret_line, *ret_len (no '\n', no trailing '\r') */
#define MOAT_RPC_TOO_LONG 2 /* a line longer than max_line was dropped */
/* The next complete line, 0 when none is complete. The line stays valid
 * until the next feed, fill or flush. Empty lines are skipped. */
int moat_rpc_reader_next(struct moat_rpc_reader *r, const char **ret_line, size_t *ret_len);
/* At end of input: the last line when it had no '\n' (same returns). */
int moat_rpc_reader_flush(struct moat_rpc_reader *r, const char **ret_line, size_t *ret_len);

/* ---- classification ---- */
enum moat_rpc_kind {
	MOAT_RPC_REQUEST = 1,  /* method and id: needs a reply */
	MOAT_RPC_NOTIFICATION, /* method, no id: never a reply */
	MOAT_RPC_RESPONSE,     /* id and result or error: answers one of ours */
};

struct moat_rpc_msg {
	enum moat_rpc_kind kind;
	json_t *root;	    /* owned */
	json_t *id;	    /* borrowed: an integer or a string; NULL for notifications */
	const char *method; /* requests and notifications */
	json_t *params;	    /* an object, or NULL when absent */
	json_t *result;	    /* responses: NULL unless a result */
	json_t *error;	    /* responses: NULL unless an error object */
};

/* Why a message was refused, and how to answer. */
struct moat_rpc_fault {
	int code; /* MOAT_RPC_* */
	char message[512];
	json_t *id;    /* owned: the request's id when it could be read, else NULL (null) */
	bool no_reply; /* a notification or a response: answer nothing */
};

void moat_rpc_msg_release(struct moat_rpc_msg *m);
void moat_rpc_fault_release(struct moat_rpc_fault *f);
/* Parse one line strictly (duplicate keys, bad UTF-8, NUL, depth over
 * MOAT_MCP_MAX_DEPTH refused) and classify it. 0 with *ret filled, or
 * -EINVAL / -ENOMEM with *fault filled (*ret untouched). A batch (a top-level
 * array) is refused with MOAT_RPC_INVALID_REQUEST. */
int moat_rpc_parse(const char *line, size_t len, struct moat_rpc_msg *ret,
		   struct moat_rpc_fault *fault);

/* The fast path of moat_rpc_parse for the usual tools/call request, without
 * a JSON tree: an object with exactly the members "jsonrpc": "2.0", "id" (an
 * integer of at most 18 digits, or a plain string of at most
 * MOAT_MCP_MAX_ID_LEN bytes), "method": "tools/call" and "params", in any
 * order, each once; params with exactly "name" (a plain string) and
 * "arguments" (an object that moat_json_parse_flat accepts), each once.
 * Plain strings: printable ASCII, no escapes (base/json.h). Such a line is
 * one moat_rpc_parse accepts as that request. 0 with *ret filled (ret->id a
 * new reference, the rest pointing into line); -EAGAIN for anything else,
 * valid or not (moat_rpc_parse then decides, and explains); -ENOMEM. */
struct moat_rpc_call {
	json_t *id;
	const char *name; /* name_len bytes, not NUL-terminated */
	size_t name_len;
	const char *args; /* the arguments object as written, args_len bytes */
	size_t args_len;
};
int moat_rpc_parse_call(const char *line, size_t len, struct moat_rpc_call *ret);

/* A key naming an id for matching ("i:42", "s:abc"). -EINVAL for other types
 * or a string over MOAT_MCP_MAX_ID_LEN. */
#define MOAT_RPC_ID_KEY_MAX (MOAT_MCP_MAX_ID_LEN + 4)
int moat_rpc_id_key(const json_t *id, char *out, size_t outsz);

/* ---- serialization: one line each, '\n'-terminated, heap ---- */
/* {"jsonrpc":"2.0","id":ID,"result":RESULT}; id NULL means null.
 * Returns NULL on allocation failure. A reply over MOAT_MCP_MAX_REPLY
 * becomes an internal-error reply naming the limit. */
char *moat_rpc_result(const json_t *id, json_t *result, size_t *ret_len);
/* {"jsonrpc":"2.0","id":ID,"error":{"code":C,"message":M[,"data":D]}} */
char *moat_rpc_error(const json_t *id, int code, const char *message, json_t *data,
		     size_t *ret_len);
/* {"jsonrpc":"2.0","id":ID,"method":M,"params":P} and without id. */
char *moat_rpc_request(json_int_t id, const char *method, json_t *params, size_t *ret_len);
char *moat_rpc_notification(const char *method, json_t *params, size_t *ret_len);
/* A JSON string of [s, s+n): invalid UTF-8 becomes U+FFFD (tool output may
 * hold any bytes). NULL on allocation failure. */
json_t *moat_rpc_string(const char *s, size_t n);

/* ---- elicitation (elicit.c) ---- */
/* Sends one line to the client, whole; 0 or a negative errno. */
typedef int (*moat_mcp_send_fn)(void *ud, const char *line, size_t len);

struct moat_mcp_elicit;

int moat_mcp_elicit_new(moat_mcp_send_fn send, void *send_ud, struct moat_mcp_elicit **ret);
struct moat_mcp_elicit *moat_mcp_elicit_free(struct moat_mcp_elicit *e);
/* What initialize said: does the client take form-mode elicitation, and the
 * negotiated revision (for the request's shape). */
void moat_mcp_elicit_configure(struct moat_mcp_elicit *e, bool form_supported, const char *version);
bool moat_mcp_elicit_enabled(struct moat_mcp_elicit *e);

/* The per-call approver's user data. */
struct moat_mcp_elicit_call {
	struct moat_mcp_elicit *e;
	bool cancelled; /* under e's lock: set by moat_mcp_elicit_cancel */
};
/* moat_approver_fn: sends elicitation/create and waits for the answer.
 * -ENOTTY when the client cannot elicit, -ETIMEDOUT, -ECANCELED (the call was
 * cancelled or the server is stopping), -EPROTO (an answer not understood),
 * -EIO (the client answered with an error). */
int moat_mcp_elicit_approver(void *ud, const struct moat_ask *ask, int timeout_ms,
			     struct moat_reply *ret);
/* Route a response from the client. true when it answered one of ours. */
bool moat_mcp_elicit_route(struct moat_mcp_elicit *e, const struct moat_rpc_msg *m);
/* A malformed response (an unknown member, no "jsonrpc") whose id is that
 * of a pending elicitation: the ask ends at once as not answered (denied),
 * rather than at the approval timeout. True when one was pending. */
bool moat_mcp_elicit_fail(struct moat_mcp_elicit *e, const json_t *id);
/* Cancel the asks of one call, now and later, or with call NULL of every
 * call (the server stops): waiters return -ECANCELED. */
void moat_mcp_elicit_cancel(struct moat_mcp_elicit *e, struct moat_mcp_elicit_call *call);
/* The form the client is shown (exposed for tests): params of
 * elicitation/create. NULL on allocation failure. */
json_t *moat_mcp_elicit_params(const struct moat_ask *ask, const char *version);
/* Map an elicitation result object to a reply; 0, -EPROTO. */
int moat_mcp_elicit_answer(const json_t *result, const struct moat_ask *ask,
			   struct moat_reply *ret);

/* ---- the server (server.c) ---- */
struct moat_mcp_opts {
	int in_fd;	       /* requests; -1: 0 */
	int out_fd;	       /* replies; -1: 1 */
	const char *workspace; /* named in the initialize instructions; may be NULL */
	unsigned workers;      /* 0: MOAT_MCP_MAX_WORKERS */
};

/* Serve until end of input (or SIGTERM/SIGINT/SIGHUP when the caller routed
 * them with moat_mcp_install_signals): every call in flight is cancelled and
 * waited for. 0, or a negative errno when the server could not start or the
 * output broke. */
int moat_mcp_serve(struct moat_session *s, const struct moat_mcp_opts *o);
/* SIGTERM, SIGINT and SIGHUP stop the server as end of input would; SIGPIPE
 * is ignored (a closed output is an EPIPE). For the command, not for tests. */
int moat_mcp_install_signals(void);

#endif
