/* Fuzz the audit log's parsers and its writer together:
 *  - the time parser on the first line (no crash; a parsed time is finite);
 *  - the reader on the whole input as a log (no crash, no out-of-bounds
 *    read; every record it hands out carries the required fields);
 *  - the writer on the input as command, error, sandbox text and, when it
 *    parses as an object, arguments: the record is exactly one line under
 *    MOAT_AUDIT_MAX_RECORD, and the reader accepts it as one good record.
 * The reader takes a path, so inputs go through a memfd. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "audit/audit.h"
#include "base/json.h"
#include "base/str.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t good, bad;

static int on_rec(void *ud, json_t *rec, size_t lineno)
{
	if (!json_is_object(rec) || !json_is_string(json_object_get(rec, "time")) ||
	    !json_is_string(json_object_get(rec, "tool")) ||
	    !json_is_string(json_object_get(rec, "final")) ||
	    !json_is_string(json_object_get(json_object_get(rec, "decision"), "verdict")))
		abort();
	good++;
	return 0;
}

static void on_bad(void *ud, size_t lineno, const char *why)
{
	if (!why || !why[0] || lineno == 0)
		abort();
	bad++;
}

/* Read [p, p+n) as a log through a memfd. */
static void read_log(const void *p, size_t n, const struct moat_audit_filter *f)
{
	char path[64];
	int fd = memfd_create("audit", MFD_CLOEXEC);

	if (fd < 0)
		return;
	if (n && write(fd, p, n) != (ssize_t)n) {
		close(fd);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	good = bad = 0;
	moat_audit_read(path, f, on_rec, on_bad, NULL, NULL);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	const char *nl = memchr(in, '\n', size);
	size_t first = nl ? (size_t)(nl - in) : size;
	struct moat_audit_filter f = {0};
	struct moat_decision d = {.verdict = MOAT_ASK};
	struct moat_audit_record r = {.tool = "fuzz", .decision = &d, .has_result = true};
	char t[80], *text, *line;
	json_t *args = NULL;
	size_t len;
	double ms = 0;

	if (size > (1u << 20))
		return 0;
	/* 1. the time parser */
	if (first < sizeof(t)) {
		memcpy(t, in, first);
		t[first] = '\0';
		if (moat_audit_parse_time(t, 1.7e12, &ms) == 0) {
			if (!isfinite(ms))
				abort();
			f.since_ms = ms;
		}
	}

	/* 2. the reader, with and without a filter */
	read_log(in, size, NULL);
	f.tool = "bash";
	f.decision = "allow";
	read_log(in, size, &f);

	/* 3. the writer, and the reader on what it wrote */
	text = moat_strndup(in, size);
	if (!text)
		return 0;
	moat_json_parse_object(in, size, "fuzz", 1u << 20, &args, NULL);
	r.args = args;
	r.command = text;
	r.error = text;
	r.sandbox_json = text;
	r.call_id = text;
	moat_strlcpy(d.reason, text, sizeof(d.reason));
	line = moat_audit_format(&r, &len);
	if (!line)
		abort();
	if (len == 0 || len > MOAT_AUDIT_MAX_RECORD || line[len - 1] != '\n' ||
	    memchr(line, '\n', len - 1) || strlen(line) != len)
		abort();
	read_log(line, len, NULL);
	if (good != 1 || bad != 0) {
		fprintf(stderr, "the reader refused a written record:\n%s", line);
		abort();
	}
	free(line);
	json_decref(args);
	free(text);
	return 0;
}
