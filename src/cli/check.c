/* moat check: decide one tool call (or a stream of them with --batch)
 * without running anything. Prints one JSON object per decision:
 * {"decision": "allow|deny|ask", "rule": ..., "reason": ..., "hard": bool}.
 * Exit: 0 allow, 1 deny, 3 ask, 2 bad input (nothing decided as allow). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/json.h"
#include "base/str.h"
#include "cli/cli.h"
#include "cli/policy_opts.h"
#include "core/policy_check.h"
#include "tools/tools.h"

#define BATCH_LINE_MAX (MOAT_ARGS_MAX_BYTES + 4096)

static const char check_usage[] =
	"usage: moat check [options] TOOL 'ARGS_JSON'\n"
	"       moat check [options] --batch < calls.jsonl\n"
	"\n"
	"Decide what moat would do with a tool call, without running it. Prints\n"
	"{\"decision\": \"allow\"|\"deny\"|\"ask\", \"rule\": ID, \"reason\": TEXT, \"hard\": BOOL}.\n"
	"With --batch, reads one {\"tool\": NAME, \"args\": {...}} per line and prints one\n"
	"decision per line, in order.\n"
	"\n"
	"exit status: 0 allow, 1 deny, 3 ask, 2 bad input or configuration\n"
	"(--batch: 0, or 2 when a line was bad; each line's decision is printed).\n\n";

static void print_decision(struct moat_buf *out, const struct moat_decision *d)
{
	moat_buf_puts(out, "{\"decision\":");
	moat_buf_json_str(out, moat_verdict_name(d->verdict), strlen(moat_verdict_name(d->verdict)));
	moat_buf_puts(out, ",\"rule\":");
	moat_buf_json_str(out, d->rule, strlen(d->rule));
	moat_buf_puts(out, ",\"reason\":");
	moat_buf_json_str(out, d->reason, strlen(d->reason));
	moat_buf_puts(out, d->hard ? ",\"hard\":true}\n" : ",\"hard\":false}\n");
}

static int exit_for(enum moat_verdict v)
{
	return v == MOAT_ALLOW ? MOAT_EXIT_OK : v == MOAT_ASK ? MOAT_EXIT_ASK : MOAT_EXIT_DENY;
}

static void deny_input(struct moat_decision *d, const char *what)
{
	d->verdict = MOAT_DENY;
	d->hard = true;
	moat_strlcpy(d->rule, "input:invalid", sizeof(d->rule));
	moat_strlcpy(d->reason, what, sizeof(d->reason));
}

/* The arguments of a built-in tool, checked as the tool will check them
 * (moat tool and moat mcp refuse what does not fit): a call it would
 * refuse is bad input here too, not an allow. Other tool names (the
 * policy decides for any) are taken as they are. 0, or -EINVAL with the
 * reason in why. A tool name with a control character is bad input. */
static int tool_args_ok(const char *tool, json_t *args, char *why, size_t whysz)
{
	enum moat_tool_kind k = moat_tool_lookup(tool);

	for (const char *c = tool; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			snprintf(why, whysz, "the tool name holds a control character");
			return -EINVAL;
		}
	if (k == MOAT_TOOL_NONE)
		return 0;
	return moat_tool_args_check(k, args, why, whysz);
}

/* One batch line: {"tool": "...", "args": {...}}. Returns 0 or -EINVAL. */
static int batch_line(const struct moat_policy *p, const char *line, size_t len,
		      struct moat_decision *d)
{
	struct moat_error err;
	json_t *root = NULL, *tool = NULL, *args = NULL;
	int r;

	moat_error_clear(&err);
	r = moat_json_parse_object(line, len, "line", BATCH_LINE_MAX, &root, &err);
	if (r < 0) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "invalid JSON line: %s", err.msg);
		deny_input(d, msg);
		return -EINVAL;
	}
	/* one pass over the keys (they are unique: duplicates were refused) */
	for (void *it = json_object_iter(root); it; it = json_object_iter_next(root, it)) {
		const char *key = json_object_iter_key(it);

		if (!strcmp(key, "tool")) {
			tool = json_object_iter_value(it);
		} else if (!strcmp(key, "args")) {
			args = json_object_iter_value(it);
		} else if (strcmp(key, "id") != 0) {
			char msg[512];

			snprintf(msg, sizeof(msg), "unknown key \"%.200s\" (expected tool, args)",
				 key);
			deny_input(d, msg);
			json_decref(root);
			return -EINVAL;
		}
	}
	if (!json_is_string(tool) || (args && !json_is_object(args))) {
		deny_input(d, "each line needs \"tool\" (a string) and \"args\" (an object)");
		json_decref(root);
		return -EINVAL;
	}
	if (!args) {
		args = json_object();
		json_object_set_new(root, "args", args);
	}
	{
		char why[300];

		if (tool_args_ok(json_string_value(tool), args, why, sizeof(why)) < 0) {
			deny_input(d, why);
			json_decref(root);
			return -EINVAL;
		}
	}
	r = moat_policy_check_args(p, json_string_value(tool), args, d, &err);
	json_decref(root);
	return r;
}

#define BATCH_CHUNK (1u << 16)	   /* bytes read at once */
#define BATCH_OUT_FLUSH (1u << 16) /* decisions are written in blocks of about this */

struct batch {
	const struct moat_policy *p;
	struct moat_buf out;
	bool bad;
	/* the last decision printed, and its line: most decisions repeat one */
	struct moat_decision last;
	struct moat_buf last_line;
	bool have_last;
};

static void batch_print(struct batch *b, const struct moat_decision *d)
{
	size_t at = b->out.len;

	if (b->have_last && d->verdict == b->last.verdict && d->hard == b->last.hard &&
	    !strcmp(d->rule, b->last.rule) && !strcmp(d->reason, b->last.reason)) {
		moat_buf_append(&b->out, b->last_line.data, b->last_line.len);
		return;
	}
	print_decision(&b->out, d);
	b->last = *d;
	moat_buf_reset(&b->last_line);
	moat_buf_append(&b->last_line, b->out.data + at, b->out.len - at);
	b->have_last = !b->out.oom && !b->last_line.oom;
}

/* One line without its '\n'; too_long: it was over BATCH_LINE_MAX (dropped). */
static void batch_one(struct batch *b, const char *line, size_t len, bool too_long)
{
	struct moat_decision d;

	if (too_long || len > BATCH_LINE_MAX) {
		deny_input(&d, "line too long");
		b->bad = true;
	} else if (strspn(line, " \t\r") >= len) {
		/* one decision per line, in order: an empty line is a bad one */
		deny_input(&d, "an empty line (each line is one call)");
		b->bad = true;
	} else if (batch_line(b->p, line, len, &d) < 0) {
		b->bad = true;
	}
	batch_print(b, &d);
	if (b->out.len > BATCH_OUT_FLUSH) {
		fwrite(b->out.data, 1, b->out.len, stdout);
		moat_buf_reset(&b->out);
	}
}

/* Lines are decided where they lie in a large read buffer (no copy); a line
 * over BATCH_LINE_MAX is refused, not buffered: the buffer never holds more
 * than that plus one read. */
static int run_batch(const struct moat_policy *p)
{
	struct batch b = {.p = p, .out = MOAT_BUF_INIT, .last_line = MOAT_BUF_INIT};
	char *buf = NULL;
	size_t cap = 0, have = 0; /* buf[0..have): the start of a line not yet decided */
	bool overlong = false, eof = false, rerr = false;

	while (!eof) {
		size_t start = 0, scan;
		ssize_t n;

		if (cap - have < BATCH_CHUNK) {
			size_t ncap = cap ? 2 * cap : 4 * BATCH_CHUNK;
			char *nb;

			if (ncap < have + BATCH_CHUNK)
				ncap = have + BATCH_CHUNK;
			nb = realloc(buf, ncap);
			if (!nb) {
				fprintf(stderr, "moat check: out of memory\n");
				free(buf);
				moat_buf_release(&b.out);
				moat_buf_release(&b.last_line);
				return MOAT_EXIT_USAGE;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(STDIN_FILENO, buf + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			eof = true;
			rerr = n < 0;
			n = 0;
		}
		scan = have;
		have += (size_t)n;
		for (;;) {
			char *nl = memchr(buf + scan, '\n', have - scan);

			if (!nl)
				break;
			batch_one(&b, buf + start, (size_t)(nl - buf) - start, overlong);
			overlong = false;
			start = scan = (size_t)(nl - buf) + 1;
		}
		if (have - start > BATCH_LINE_MAX) {
			/* SECURITY: bounded: the rest of this line is dropped as it comes */
			overlong = true;
			start = have;
		}
		if (eof && (have > start || overlong))
			batch_one(&b, buf + start, have - start, overlong);
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	if (b.out.len)
		fwrite(b.out.data, 1, b.out.len, stdout);
	fflush(stdout);
	free(buf);
	moat_buf_release(&b.out);
	moat_buf_release(&b.last_line);
	if (rerr) {
		fprintf(stderr, "moat check: error reading standard input\n");
		return MOAT_EXIT_USAGE;
	}
	return b.bad ? MOAT_EXIT_USAGE : MOAT_EXIT_OK;
}

int cmd_check(int argc, char **argv)
{
	struct cli_policy cp;
	struct moat_decision d;
	struct moat_error err;
	struct moat_buf out = MOAT_BUF_INIT;
	const char *pos[2] = {NULL, NULL};
	int npos = 0, r, rc;
	bool batch = false, dashdash = false;

	cli_policy_init(&cp);
	for (int i = 1; i < argc; i++) {
		if (!dashdash && argv[i][0] == '-' && argv[i][1]) {
			if (!strcmp(argv[i], "--")) {
				dashdash = true;
				continue;
			}
			if (cli_is_help(argv[i])) {
				fputs(check_usage, stdout);
				fputs(cli_policy_help, stdout);
				return 0;
			}
			if (!strcmp(argv[i], "--batch")) {
				batch = true;
				continue;
			}
			r = cli_policy_opt(&cp, "check", argc, argv, &i);
			if (r == 1)
				continue;
			if (r)
				return r;
			return cli_usage_error("check", "unknown option '%s' (see moat check --help)",
					       argv[i]);
		}
		if (npos >= 2)
			return cli_usage_error("check", "too many arguments (quote the JSON)");
		pos[npos++] = argv[i];
	}
	if (batch && npos)
		return cli_usage_error("check", "--batch takes no TOOL or ARGS_JSON");
	if (!batch && npos < 1)
		return cli_usage_error("check", "missing TOOL (see moat check --help)");
	r = cli_policy_load(&cp, "check", true);
	if (r) {
		cli_policy_release(&cp);
		return r;
	}
	if (batch) {
		rc = run_batch(cp.policy);
		cli_policy_release(&cp);
		return rc;
	}
	moat_error_clear(&err);
	r = moat_policy_check(cp.policy, pos[0], pos[1] ? pos[1] : "{}",
			      pos[1] ? strlen(pos[1]) : 2, &d, &err);
	if (r >= 0) {
		json_t *args = NULL;
		char why[300];
		struct moat_error perr;

		moat_error_clear(&perr);
		if (moat_json_parse_object(pos[1] ? pos[1] : "{}", pos[1] ? strlen(pos[1]) : 2,
					   "argument ARGS_JSON", MOAT_ARGS_MAX_BYTES, &args,
					   &perr) == 0 &&
		    tool_args_ok(pos[0], args, why, sizeof(why)) < 0) {
			deny_input(&d, why);
			moat_error_set_where(&err, "argument ARGS_JSON", 0, 0);
			moat_error_set(&err, "%s", why);
			r = -EINVAL;
		}
		json_decref(args);
	}
	print_decision(&out, &d);
	fwrite(out.data, 1, out.len, stdout);
	moat_buf_release(&out);
	if (r < 0) {
		if (!err.where[0])
			moat_error_set_where(&err, "argument ARGS_JSON", 0, 0);
		cli_print_error("check", &err);
		rc = MOAT_EXIT_USAGE;
	} else {
		rc = exit_for(d.verdict);
	}
	cli_policy_release(&cp);
	return rc;
}
