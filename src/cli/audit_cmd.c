/* moat audit: read the audit log back as a table (or the matching JSON
 * lines), and `moat audit verify`: check that every line is a complete
 * record. The log is read with the strict reader of src/audit/reader.c.
 *
 * Everything printed from the log is data an agent influenced (tool names,
 * rules quoting commands, errors): control characters are replaced before
 * they reach a terminal. This command never writes to the log. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "audit/audit.h"
#include "base/str.h"
#include "cli/cli.h"
#include "cli/policy_opts.h"
#include "core/config.h"

static const char audit_usage[] =
    "usage: moat audit [--log FILE] [--since T] [--tool NAME] [--decision D] [--json]\n"
    "       moat audit verify [--log FILE]\n"
    "\n"
    "Read the audit log back: one row per tool call (time, call id, tool, the\n"
    "policy's decision, the final outcome after approval, the rule, the result),\n"
    "or with --json the matching records as JSON lines.\n"
    "\n"
    "  --log FILE       the log to read ('-': standard input); default: the\n"
    "                   configuration's audit_log, else\n"
    "                   $XDG_STATE_HOME/moat/audit.jsonl (~/.local/state/moat/)\n"
    "  --config FILE    the configuration that names the log\n"
    "  --since T        records at or after T: 2026-11-22T10:00:00Z, 2026-11-22,\n"
    "                   or relative: 30s, 15m, 2h, 3d, 1w (times without a zone are UTC)\n"
    "  --tool NAME      records of one tool\n"
    "  --decision D     allow, deny or ask: the policy's verdict or the final outcome\n"
    "  --json           print the matching records, one JSON object per line\n"
    "\n"
    "verify checks that every line is a complete record (a JSON object with time,\n"
    "tool, decision and final, ending in a newline) and prints 'N records, M bad'\n"
    "and the numbers of the bad lines.\n"
    "\n"
    "exit status: 0; verify: 0 when every line is good, 1 otherwise; 2 on bad\n"
    "usage or when the log cannot be read. docs/audit.md describes the records.\n";

#define ROW_TIME 24
#define ROW_CALL 14
#define ROW_TOOL 16
#define ROW_VERDICT 8
#define ROW_FINAL 5
#define ROW_RULE 32
#define ROW_RESULT 60

struct audit_ctx {
	bool json;
	bool verify;
	size_t records;
	size_t bad;
	struct moat_buf out;
};

/* SECURITY: a cell of at most width characters with C0/C1 controls and DEL
 * replaced by '?', cut at a character boundary ("~" marks a cut). */
static void cell(struct moat_buf *b, const char *s, int width, bool pad)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "-");
	int chars = 0;

	while (*p && chars < width) {
		size_t k = 1;

		if (*p >= 0xc0)
			while (p[k] && (p[k] & 0xc0) == 0x80 && k < 4)
				k++;
		if (chars == width - 1 && p[k]) {
			moat_buf_putc(b, '~');
			chars++;
			p += strlen((const char *)p);
			break;
		}
		unsigned cp = k == 2   ? ((p[0] & 0x1fu) << 6) | (p[1] & 0x3fu)
			      : k == 3 ? ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu)
			      : k == 4 ? ((p[0] & 0x07u) << 18) | ((p[1] & 0x3fu) << 12) |
					     ((p[2] & 0x3fu) << 6) | (p[3] & 0x3fu)
				       : 0;

		/* controls, C1, stray bytes, and the marks that change how text
		 * reads (bidi overrides and isolates, zero-width, separators) */
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) ||
		    (*p >= 0x80 && *p < 0xc0) || (cp >= 0x200b && cp <= 0x200f) ||
		    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) ||
		    cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) || cp == 0xad || cp == 0x61c ||
		    (cp >= 0xe0000 && cp <= 0xe007f))
			moat_buf_putc(b, '?');
		else
			moat_buf_append(b, p, k);
		p += k;
		chars++;
	}
	if (pad)
		for (; chars < width; chars++)
			moat_buf_putc(b, ' ');
}

static const char *get_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void result_cell(struct moat_buf *b, json_t *rec)
{
	json_t *res = json_object_get(rec, "result");
	const char *error = get_str(rec, "error");
	char txt[256];
	int n = 0;

	if (json_is_object(res)) {
		json_t *ex = json_object_get(res, "exit_code"),
		       *sig = json_object_get(res, "signal");
		json_t *dur = json_object_get(res, "duration_ms");

		n = snprintf(txt, sizeof(txt), "%s",
			     json_is_true(json_object_get(res, "ok")) ? "ok" : "failed");
		if (json_is_integer(ex))
			n += snprintf(txt + n, sizeof(txt) - (size_t)n, " exit %lld",
				      (long long)json_integer_value(ex));
		if (json_is_integer(sig))
			n += snprintf(txt + n, sizeof(txt) - (size_t)n, " signal %lld",
				      (long long)json_integer_value(sig));
		if (json_is_true(json_object_get(res, "timed_out")))
			n += snprintf(txt + n, sizeof(txt) - (size_t)n, " timed out");
		if (json_is_true(json_object_get(res, "cancelled")))
			n += snprintf(txt + n, sizeof(txt) - (size_t)n, " cancelled");
		if (json_is_number(dur)) {
			double ms = json_number_value(dur);

			n += snprintf(txt + n, sizeof(txt) - (size_t)n,
				      ms < 1	 ? " %.3fms"
				      : ms < 100 ? " %.1fms"
						 : " %.0fms",
				      ms);
		}
		cell(b, txt, ROW_RESULT, false);
		if (error) {
			moat_buf_puts(b, ": ");
			cell(b, error, ROW_RESULT, false);
		}
		return;
	}
	if (error) {
		moat_buf_puts(b, "error: ");
		cell(b, error, ROW_RESULT, false);
		return;
	}
	moat_buf_putc(b, '-');
}

static int on_record(void *ud, json_t *rec, size_t lineno)
{
	struct audit_ctx *c = ud;
	struct moat_buf *b = &c->out;
	json_t *d = json_object_get(rec, "decision");

	c->records++;
	if (c->verify)
		return 0;
	if (c->json) {
		char *s =
		    json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));

		if (!s) {
			b->oom = true;
			return 1;
		}
		moat_buf_puts(b, s);
		moat_buf_putc(b, '\n');
		free(s);
	} else {
		cell(b, get_str(rec, "time"), ROW_TIME, true);
		moat_buf_putc(b, ' ');
		cell(b, get_str(rec, "call_id"), ROW_CALL, true);
		moat_buf_putc(b, ' ');
		cell(b, get_str(rec, "tool"), ROW_TOOL, true);
		moat_buf_putc(b, ' ');
		cell(b, get_str(d, "verdict"), ROW_VERDICT, true);
		moat_buf_putc(b, ' ');
		cell(b, get_str(rec, "final"), ROW_FINAL, true);
		moat_buf_putc(b, ' ');
		cell(b, get_str(d, "rule"), ROW_RULE, true);
		moat_buf_putc(b, ' ');
		result_cell(b, rec);
		moat_buf_putc(b, '\n');
	}
	/* flush as we go: a log can be large */
	if (b->len > 65536) {
		if (fwrite(b->data, 1, b->len, stdout) != b->len)
			return 1;
		moat_buf_reset(b);
	}
	return b->oom;
}

static void on_bad(void *ud, size_t lineno, const char *why)
{
	struct audit_ctx *c = ud;
	struct moat_buf msg = MOAT_BUF_INIT;

	c->bad++;
	cell(&msg, why, 300, false);
	if (c->verify)
		printf("line %zu: %s\n", lineno, msg.data ? msg.data : "");
	else
		fprintf(stderr, "moat audit: line %zu: %s\n", lineno, msg.data ? msg.data : "");
	moat_buf_release(&msg);
}

/* "--name VALUE" or "--name=VALUE": 1 and *ret set, 0 not this option,
 * -1 after printing when the value is missing. */
static int opt(const char *name, int argc, char **argv, int *i, const char **ret)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return 0;
	if (argv[*i][n] == '=') {
		*ret = argv[*i] + n + 1;
		return 1;
	}
	if (argv[*i][n] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		cli_usage_error("audit", "option %s needs a value", name);
		return -1;
	}
	*ret = argv[++*i];
	return 1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

int cmd_audit(int argc, char **argv)
{
	struct audit_ctx c = {.out = MOAT_BUF_INIT};
	struct moat_audit_filter f = {0};
	const char *log = NULL, *config = NULL, *since = NULL;
	struct cli_policy cp;
	struct moat_error err;
	int i = 1, r, rc;

	if (argc > 1 && !strcmp(argv[1], "verify")) {
		c.verify = true;
		i = 2;
	}
	for (; i < argc; i++) {
		const char *a = argv[i];

		if (cli_is_help(a)) {
			fputs(audit_usage, stdout);
			return 0;
		}
		if ((r = opt("--log", argc, argv, &i, &log)) ||
		    (r = opt("--config", argc, argv, &i, &config))) {
			if (r < 0)
				return MOAT_EXIT_USAGE;
			continue;
		}
		if (!c.verify) {
			if ((r = opt("--since", argc, argv, &i, &since)) ||
			    (r = opt("--tool", argc, argv, &i, &f.tool)) ||
			    (r = opt("--decision", argc, argv, &i, &f.decision))) {
				if (r < 0)
					return MOAT_EXIT_USAGE;
				continue;
			}
			if (!strcmp(a, "--json")) {
				c.json = true;
				continue;
			}
		}
		return cli_usage_error("audit",
				       "unexpected argument '%s' (see 'moat audit --help')", a);
	}
	if (since && moat_audit_parse_time(since, now_ms(), &f.since_ms) < 0)
		return cli_usage_error("audit",
				       "--since: '%s' is not a time (2026-11-22T10:00:00Z, "
				       "2026-11-22, 15m, 2h, 3d)",
				       since);
	if (f.decision && strcmp(f.decision, "allow") && strcmp(f.decision, "deny") &&
	    strcmp(f.decision, "ask"))
		return cli_usage_error("audit", "--decision: '%s' is not allow, deny or ask",
				       f.decision);
	if (f.tool && !f.tool[0])
		return cli_usage_error("audit", "--tool: empty name");

	cli_policy_init(&cp);
	if (!log) {
		/* the configuration may name the log */
		cp.config_path = config;
		if (cli_policy_load(&cp, "audit", false))
			return MOAT_EXIT_USAGE;
		if (cp.user && cp.user->audit_log)
			log = cp.user->audit_log;
		if (log && !strcmp(log, "-")) {
			cli_policy_release(&cp);
			return cli_usage_error("audit",
					       "the configured audit log is standard error; "
					       "give --log FILE");
		}
	}

	if (!c.json && !c.verify) {
		cell(&c.out, "TIME", ROW_TIME, true);
		moat_buf_putc(&c.out, ' ');
		cell(&c.out, "CALL", ROW_CALL, true);
		moat_buf_putc(&c.out, ' ');
		cell(&c.out, "TOOL", ROW_TOOL, true);
		moat_buf_putc(&c.out, ' ');
		cell(&c.out, "DECISION", ROW_VERDICT, true);
		moat_buf_putc(&c.out, ' ');
		cell(&c.out, "FINAL", ROW_FINAL, true);
		moat_buf_putc(&c.out, ' ');
		cell(&c.out, "RULE", ROW_RULE, true);
		moat_buf_puts(&c.out, " RESULT\n");
	}
	moat_error_clear(&err);
	r = moat_audit_read(log, &f, on_record, on_bad, &c, &err);
	cli_policy_release(&cp);
	if (r < 0) {
		moat_buf_release(&c.out);
		return cli_print_error("audit", &err);
	}
	if (c.out.oom) {
		moat_buf_release(&c.out);
		return cli_usage_error("audit", "out of memory");
	}
	if (c.out.len && fwrite(c.out.data, 1, c.out.len, stdout) != c.out.len)
		rc = MOAT_EXIT_USAGE;
	else
		rc = 0;
	moat_buf_release(&c.out);
	if (c.verify) {
		printf("%zu records, %zu bad\n", c.records, c.bad);
		if (!rc)
			rc = c.bad ? 1 : 0;
	}
	if (fflush(stdout))
		rc = MOAT_EXIT_USAGE;
	return rc;
}
