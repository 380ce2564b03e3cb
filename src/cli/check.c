/* moat check: decide one tool call (or a stream of them with --batch)
 * without running anything. Prints one JSON object per decision:
 * {"decision": "allow|deny|ask", "rule": ..., "reason": ..., "hard": bool}.
 * Exit: 0 allow, 1 deny, 3 ask, 2 bad input (nothing decided as allow). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/json.h"
#include "base/str.h"
#include "cli/cli.h"
#include "cli/policy_opts.h"
#include "core/policy_check.h"

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

/* One batch line: {"tool": "...", "args": {...}}. Returns 0 or -EINVAL. */
static int batch_line(const struct moat_policy *p, const char *line, size_t len,
		      struct moat_decision *d)
{
	struct moat_error err;
	json_t *root = NULL, *tool, *args;
	const char *key;
	json_t *val;
	int r;

	moat_error_clear(&err);
	r = moat_json_parse_object(line, len, "line", BATCH_LINE_MAX, &root, &err);
	if (r < 0) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "invalid JSON line: %s", err.msg);
		deny_input(d, msg);
		return -EINVAL;
	}
	json_object_foreach(root, key, val) {
		if (strcmp(key, "tool") != 0 && strcmp(key, "args") != 0 &&
		    strcmp(key, "id") != 0) {
			char msg[512];

			snprintf(msg, sizeof(msg), "unknown key \"%.200s\" (expected tool, args)",
				 key);
			deny_input(d, msg);
			json_decref(root);
			return -EINVAL;
		}
	}
	tool = json_object_get(root, "tool");
	args = json_object_get(root, "args");
	if (!json_is_string(tool) || (args && !json_is_object(args))) {
		deny_input(d, "each line needs \"tool\" (a string) and \"args\" (an object)");
		json_decref(root);
		return -EINVAL;
	}
	if (!args) {
		args = json_object();
		json_object_set_new(root, "args", args);
	}
	r = moat_policy_check_args(p, json_string_value(tool), args, d, &err);
	json_decref(root);
	return r;
}

static int run_batch(const struct moat_policy *p)
{
	struct moat_buf line = MOAT_BUF_INIT, out = MOAT_BUF_INIT;
	bool bad = false, overlong = false;
	char chunk[65536];
	size_t n;

	/* Bounded line reader: a line over BATCH_LINE_MAX is refused, not buffered. */
	for (;;) {
		n = fread(chunk, 1, sizeof(chunk), stdin);
		for (size_t i = 0; i < n || (n == 0 && (line.len || overlong)); i++) {
			bool eol = n == 0 || chunk[i] == '\n';
			struct moat_decision d;

			if (!eol) {
				if (overlong)
					continue;
				if (line.len >= BATCH_LINE_MAX) {
					overlong = true;
					moat_buf_reset(&line);
					continue;
				}
				moat_buf_putc(&line, chunk[i]);
				continue;
			}
			if (overlong) {
				deny_input(&d, "line too long");
				bad = true;
			} else if (line.len == 0 || (line.len == 1 && line.data[0] == '\r')) {
				moat_buf_reset(&line);
				if (n == 0)
					break;
				continue;
			} else if (batch_line(p, line.data, line.len, &d) < 0) {
				bad = true;
			}
			print_decision(&out, &d);
			overlong = false;
			moat_buf_reset(&line);
			if (out.len > 1 << 16) {
				fwrite(out.data, 1, out.len, stdout);
				moat_buf_reset(&out);
			}
			if (n == 0)
				break;
		}
		if (n == 0)
			break;
	}
	if (out.len)
		fwrite(out.data, 1, out.len, stdout);
	fflush(stdout);
	moat_buf_release(&line);
	moat_buf_release(&out);
	if (ferror(stdin)) {
		fprintf(stderr, "moat check: error reading standard input\n");
		return MOAT_EXIT_USAGE;
	}
	return bad ? MOAT_EXIT_USAGE : MOAT_EXIT_OK;
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
