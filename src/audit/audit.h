/* The audit log: one JSON line per tool call.
 *
 * A record is built whole in memory and appended with one write(2) to a
 * file opened O_APPEND, so that concurrent writers (threads or processes)
 * never interleave and a record is complete or absent. Arguments and
 * command text are redacted (core/redact.h) before they are written.
 * When the log cannot be written the caller fails the call closed, unless
 * the configuration says audit_required: false. */
#ifndef MOAT_AUDIT_H
#define MOAT_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <moat/error.h>
#include <moat/policy.h>

#define MOAT_AUDIT_MAX_RECORD (1u << 20)  /* bytes per record; longer fields are cut */
#define MOAT_AUDIT_MAX_FIELD (64u << 10)  /* bytes per string field after redaction */
/* nesting of a record: the arguments (at most MOAT_JSON_MAX_DEPTH) inside it */
#define MOAT_AUDIT_MAX_DEPTH 66

struct moat_audit_opts {
	const char *path;  /* file; "-": stderr; NULL: $XDG_STATE_HOME/moat/audit.jsonl
			    * (~/.local/state/moat/audit.jsonl), directories created 0700 */
	bool fsync;	   /* fsync after each record */
	bool required;	   /* a failed write fails the call (default true) */
	bool syslog;	   /* also send each record to the local syslog (RFC 5424) */
};

struct moat_audit;

int moat_audit_open(const struct moat_audit_opts *o, struct moat_audit **ret,
		    struct moat_error *err);
struct moat_audit *moat_audit_close(struct moat_audit *a);
/* The file written to ("-" for stderr). */
const char *moat_audit_path(const struct moat_audit *a);
bool moat_audit_required(const struct moat_audit *a);
/* (moat_audit_default_path, the default log path: sandbox/sandbox.h) */
/* The real path of the file the log is written to, as it was opened (its
 * descriptor's): 0, or -ENOENT (standard error, not a file, or gone). */
int moat_audit_real_path(const struct moat_audit *a, char *out, size_t outsz);
/* Can a record be written now? Checked before a call runs so that a full
 * disk refuses the call up front: 0, or -ENOSPC when the file system holding
 * the log has less than MOAT_AUDIT_MAX_RECORD free (fstatvfs on the open
 * log), other negative errno; err says which file and why. "-" is always
 * ready. An early refusal only (the write is what fails a call closed):
 * the file system is asked again when the free space it reported last,
 * less the bytes written through this handle since, is under twice the
 * margin, when the last look failed or said full, or after a second;
 * otherwise the last answer (ready) stands. */
int moat_audit_ready(struct moat_audit *a, struct moat_error *err);

/* One record. Strings may be NULL (the field is left out). */
struct moat_audit_record {
	const char *call_id;
	const char *source;	   /* "tool", "mcp", "hook:claude-code", "check" */
	const char *tool;
	json_t *args;		   /* borrowed; redacted on the way out */
	const char *command;	   /* log_all_commands: the full command text (redacted) */
	const struct moat_decision *decision;
	const char *final;	   /* "allow" / "deny" after approval, NULL: same as decision */
	const char *approval_by;   /* "tty", "preapproved", ... */
	const char *approval_answer;
	const char *sandbox_json;  /* requested / enforced / limits object as JSON text */
	/* the user's exempt_paths patterns that kept a path the call names
	 * from being a denied path ("exempt_paths", left out when none) */
	const char *const *exempt_paths;
	size_t nexempt_paths;
	bool has_result;	   /* the tool ran: the fields below are set */
	bool ok;
	int exit_code;		   /* -1: none */
	int signal;
	bool timed_out;
	bool cancelled;
	double duration_ms;
	size_t bytes_out;
	const char *error;
};

/* Build and append one record (time: RFC 3339 UTC with ms). Returns 0, or
 * negative errno with err naming the file and the cause. */
int moat_audit_write(struct moat_audit *a, const struct moat_audit_record *r,
		     struct moat_error *err);
/* The record as one JSON line (with '\n'), exactly as written: for tests
 * and the syslog sink. Heap string. */
char *moat_audit_format(const struct moat_audit_record *r, size_t *ret_len);

/* syslog.c: RFC 5424 over the local socket (/dev/log), datagram. */
int moat_syslog_send(const char *json_line, size_t len, int severity);

/* reader.c: `moat audit` */
struct moat_audit_filter {
	double since_ms;      /* epoch ms; 0: all */
	const char *tool;     /* NULL: all */
	const char *decision; /* "allow", "deny", "ask", NULL: all */
};
/* Iterate the records of a log that match; cb returns non-zero to stop.
 * A line that does not parse is reported through bad (line number, text)
 * and skipped. path NULL: the default path; "-": standard input. A record
 * needs "time", "tool", "decision" {"verdict"} and "final"; a line without
 * them, an empty line, a line over MOAT_AUDIT_MAX_RECORD and a last line
 * without its newline (a short write) are bad too. */
int moat_audit_read(const char *path, const struct moat_audit_filter *f,
		    int (*cb)(void *ud, json_t *rec, size_t lineno),
		    void (*bad)(void *ud, size_t lineno, const char *why), void *ud,
		    struct moat_error *err);
/* Parse "2026-11-22T10:00:00Z", "2026-11-22", or a relative "15m", "2h", "3d". */
int moat_audit_parse_time(const char *s, double now_ms, double *ret_ms);

#endif
