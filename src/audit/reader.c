/* Reading the audit log back (`moat audit`): a bounded line reader, the
 * strict JSON parser for each line, the fields every record must carry,
 * the filters, and the time parser for --since.
 *
 * The log is evidence: a line that is not a complete record (garbage, a
 * missing field, a partial last line left by a short write) is reported
 * with its number, never silently skipped and never half-used. This module
 * must never print and never buffer more than one record's worth of a
 * line. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"
#include "sandbox/sandbox.h"
#include "base/compat.h"
#include "base/json.h"
#include "base/str.h"

/* --since 10000000d is about 27,000 years: enough, and far from overflow. */
#define AUDIT_MAX_RELATIVE 10000000L

/* ---- time ---- */

/* Exactly n decimal digits at s. */
static bool digits(const char *s, int n, int *ret)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v;
	return true;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static long days_from_civil(long y, int m, int d)
{
	long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* RFC 3339 ("2026-11-22T10:00:00.123Z", "...+02:00"), also without
 * seconds, with a space or a lower-case t/z, without a zone (UTC), or a bare
 * date (midnight UTC). */
static int parse_absolute(const char *s, double *ret_ms)
{
	static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y, mo, d, h = 0, mi = 0, sec = 0, oh = 0, om = 0, sign = 0;
	double frac = 0, ms;
	const char *p = s;

	if (!digits(p, 4, &y) || p[4] != '-' || !digits(p + 5, 2, &mo) || p[7] != '-' ||
	    !digits(p + 8, 2, &d))
		return -EINVAL;
	p += 10;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap(y)))
		return -EINVAL;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		if (!digits(p + 1, 2, &h) || p[3] != ':' || !digits(p + 4, 2, &mi))
			return -EINVAL;
		p += 6;
		if (*p == ':') {
			if (!digits(p + 1, 2, &sec))
				return -EINVAL;
			p += 3;
			if (*p == '.') {
				double scale = 0.1;
				int nd = 0;

				for (p++; *p >= '0' && *p <= '9'; p++, nd++) {
					if (nd < 9)
						frac += (*p - '0') * scale;
					scale /= 10;
				}
				if (nd == 0 || nd > 9)
					return -EINVAL;
			}
		}
		/* 60: a leap second, counted as the next second */
		if (h > 23 || mi > 59 || sec > 60)
			return -EINVAL;
		if (*p == 'Z' || *p == 'z') {
			p++;
		} else if (*p == '+' || *p == '-') {
			sign = *p == '+' ? 1 : -1;
			if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) ||
			    oh > 23 || om > 59)
				return -EINVAL;
			p += 6;
		}
	}
	if (*p)
		return -EINVAL;
	ms = ((double)days_from_civil(y, mo, d) * 86400.0 + h * 3600.0 + mi * 60.0 + sec -
	      sign * (oh * 3600.0 + om * 60.0) + frac) *
	     1000.0;
	*ret_ms = ms;
	return 0;
}

int moat_audit_parse_time(const char *s, double now_ms, double *ret_ms)
{
	size_t n;
	long v;
	double unit;
	char num[16];

	if (!s || !ret_ms)
		return -EINVAL;
	n = strlen(s);
	if (n >= 2 && n < sizeof(num) && s[0] >= '0' && s[0] <= '9' && strchr("smhdw", s[n - 1])) {
		switch (s[n - 1]) {
		case 's':
			unit = 1e3;
			break;
		case 'm':
			unit = 60e3;
			break;
		case 'h':
			unit = 3600e3;
			break;
		case 'd':
			unit = 86400e3;
			break;
		default:
			unit = 7 * 86400e3;
			break;
		}
		memcpy(num, s, n - 1);
		num[n - 1] = '\0';
		if (moat_parse_long(num, 0, AUDIT_MAX_RELATIVE, &v) < 0)
			return -EINVAL;
		*ret_ms = now_ms - (double)v * unit;
		return 0;
	}
	return parse_absolute(s, ret_ms);
}

/* ---- records ---- */

/* The fields every record carries; *why says which is missing. */
static bool record_ok(json_t *rec, double *ret_time, const char **why)
{
	json_t *t = json_object_get(rec, "time"), *d = json_object_get(rec, "decision");
	json_t *v = json_object_get(d, "verdict"), *fin = json_object_get(rec, "final");

	if (!json_is_string(t) || parse_absolute(json_string_value(t), ret_time) < 0) {
		*why = "missing or invalid \"time\" (RFC 3339)";
		return false;
	}
	if (!json_is_string(json_object_get(rec, "tool"))) {
		*why = "missing \"tool\"";
		return false;
	}
	if (!json_is_object(d) || !json_is_string(v)) {
		*why = "missing \"decision\" {\"verdict\"}";
		return false;
	}
	if (!json_is_string(fin)) {
		*why = "missing \"final\"";
		return false;
	}
	return true;
}

static bool matches(json_t *rec, double t, const struct moat_audit_filter *f)
{
	const char *v, *fin;

	if (!f)
		return true;
	if (f->since_ms > 0 && t < f->since_ms)
		return false;
	if (f->tool && strcmp(json_string_value(json_object_get(rec, "tool")), f->tool) != 0)
		return false;
	if (f->decision) {
		/* the policy's verdict or the final outcome: "ask" finds every
		 * call that asked, "allow" the approved ones too */
		v = json_string_value(json_object_get(json_object_get(rec, "decision"), "verdict"));
		fin = json_string_value(json_object_get(rec, "final"));
		if (strcmp(v, f->decision) != 0 && strcmp(fin, f->decision) != 0)
			return false;
	}
	return true;
}

struct reader {
	const struct moat_audit_filter *f;
	int (*cb)(void *ud, json_t *rec, size_t lineno);
	void (*bad)(void *ud, size_t lineno, const char *why);
	void *ud;
};

static void report(struct reader *rd, size_t lineno, const char *why)
{
	if (rd->bad)
		rd->bad(rd->ud, lineno, why);
}

/* One complete line (without its newline). Returns non-zero to stop. */
static int one_line(struct reader *rd, const char *line, size_t len, size_t lineno)
{
	struct moat_error e;
	const char *why = NULL;
	double t = 0;
	json_t *rec = NULL;
	int stop = 0;

	if (len == 0) {
		report(rd, lineno, "empty line");
		return 0;
	}
	moat_error_clear(&e);
	if (moat_json_parse(line, len, "line", MOAT_AUDIT_MAX_RECORD, MOAT_AUDIT_MAX_DEPTH, &rec,
			    &e) < 0) {
		const char *col = strrchr(e.where, ':');
		char msg[1100];

		/* where is "line:1:COLUMN": the line number is ours */
		if (col && col[1] && strcmp(col + 1, "0"))
			snprintf(msg, sizeof(msg), "not JSON at column %s: %s", col + 1, e.msg);
		else
			snprintf(msg, sizeof(msg), "not JSON: %s", e.msg);
		report(rd, lineno, msg);
		return 0;
	}
	if (!json_is_object(rec)) {
		report(rd, lineno, "not a JSON object");
	} else if (!record_ok(rec, &t, &why)) {
		report(rd, lineno, why);
	} else if (matches(rec, t, rd->f) && rd->cb) {
		stop = rd->cb(rd->ud, rec, lineno);
	}
	json_decref(rec);
	return stop;
}

int moat_audit_read(const char *path, const struct moat_audit_filter *f,
		    int (*cb)(void *ud, json_t *rec, size_t lineno),
		    void (*bad)(void *ud, size_t lineno, const char *why), void *ud,
		    struct moat_error *err)
{
	struct reader rd = {f, cb, bad, ud};
	struct moat_buf line = MOAT_BUF_INIT;
	char def[4096], chunk[65536], ebuf[128];
	bool overlong = false, stop = false;
	size_t lineno = 0;
	int fd = STDIN_FILENO, r = 0;

	if (f && f->decision && strcmp(f->decision, "allow") && strcmp(f->decision, "deny") &&
	    strcmp(f->decision, "ask")) {
		moat_error_set(err, "decision filter '%.100s' is not allow, deny or ask",
			       f->decision);
		return -EINVAL;
	}
	if (!path) {
		r = moat_audit_default_path(def, sizeof(def));
		if (r < 0) {
			moat_error_set(err, "no default audit log: set XDG_STATE_HOME or HOME");
			return r;
		}
		path = def;
	}
	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0) {
			r = -errno;
			moat_error_set(err, "cannot open the audit log '%.400s': %s", path,
				       moat_strerror(-r, ebuf, sizeof(ebuf)));
			return r;
		}
	}
	while (!stop) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		size_t i = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			moat_error_set(err, "cannot read the audit log '%.400s': %s", path,
				       moat_strerror(-r, ebuf, sizeof(ebuf)));
			break;
		}
		if (n == 0) {
			if (line.len || overlong)
				report(&rd, lineno + 1,
				       "no newline at the end: an incomplete record (short write)");
			break;
		}
		while (i < (size_t)n && !stop) {
			const char *nl = memchr(chunk + i, '\n', (size_t)n - i);
			size_t seg = nl ? (size_t)(nl - (chunk + i)) : (size_t)n - i;

			/* SECURITY: bounded: a line longer than a record is
			 * counted, not buffered */
			if (!overlong && line.len + seg > MOAT_AUDIT_MAX_RECORD - 1) {
				overlong = true;
				moat_buf_release(&line);
			}
			if (!overlong)
				moat_buf_append(&line, chunk + i, seg);
			i += seg;
			if (!nl)
				break;
			i++;
			lineno++;
			if (line.oom) {
				r = -ENOMEM;
				moat_error_set(err, "out of memory reading '%.400s'", path);
				stop = true;
			} else if (overlong) {
				char msg[80];

				snprintf(msg, sizeof(msg), "line longer than %u bytes",
					 MOAT_AUDIT_MAX_RECORD);
				report(&rd, lineno, msg);
			} else if (one_line(&rd, line.data ? line.data : "", line.len, lineno)) {
				stop = true;
			}
			overlong = false;
			moat_buf_reset(&line);
		}
	}
	if (fd != STDIN_FILENO)
		close(fd);
	moat_buf_release(&line);
	return r;
}
