/* Error struct helpers. Pure: no I/O. */
#include <moat/error.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/str.h"

void moat_error_clear(struct moat_error *e)
{
	if (!e)
		return;
	e->where[0] = '\0';
	e->key[0] = '\0';
	e->msg[0] = '\0';
}

void moat_error_set(struct moat_error *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

void moat_error_set_where(struct moat_error *e, const char *file, int line, int column)
{
	if (!e)
		return;
	if (line > 0)
		snprintf(e->where, sizeof(e->where), "%s:%d:%d", file ? file : "<input>", line,
			 column > 0 ? column : 1);
	else
		moat_strlcpy(e->where, file ? file : "", sizeof(e->where));
}

void moat_error_set_key(struct moat_error *e, const char *key)
{
	if (!e)
		return;
	moat_strlcpy(e->key, key ? key : "", sizeof(e->key));
}

size_t moat_error_format(const struct moat_error *e, char *out, size_t outsz)
{
	int n;

	if (!outsz)
		return 0;
	if (!e) {
		out[0] = '\0';
		return 0;
	}
	n = snprintf(out, outsz, "%s%s%s%s%s", e->where, e->where[0] ? ": " : "", e->key,
		     e->key[0] ? ": " : "", e->msg[0] ? e->msg : "unknown error");
	if (n < 0)
		return 0;
	return (size_t)n < outsz ? (size_t)n : outsz - 1;
}
