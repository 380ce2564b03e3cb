/* String and buffer helpers. Pure: no I/O. */
#include "base/str.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void moat_buf_init(struct moat_buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->oom = false;
}

void moat_buf_release(struct moat_buf *b)
{
	free(b->data);
	moat_buf_init(b);
}

void moat_buf_reset(struct moat_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

int moat_buf_reserve(struct moat_buf *b, size_t extra)
{
	size_t need, ncap;
	char *p;

	if (b->oom)
		return -ENOMEM;
	if (extra > SIZE_MAX / 2 - b->len - 1) {
		b->oom = true;
		return -ENOMEM;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap *= 2;
	p = realloc(b->data, ncap);
	if (!p) {
		b->oom = true;
		return -ENOMEM;
	}
	b->data = p;
	b->cap = ncap;
	return 0;
}

int moat_buf_append(struct moat_buf *b, const void *s, size_t n)
{
	if (moat_buf_reserve(b, n) < 0)
		return -ENOMEM;
	if (n)
		memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int moat_buf_puts(struct moat_buf *b, const char *s)
{
	return moat_buf_append(b, s, strlen(s));
}

int moat_buf_putc(struct moat_buf *b, char c)
{
	return moat_buf_append(b, &c, 1);
}

int moat_buf_printf(struct moat_buf *b, const char *fmt, ...)
{
	va_list ap, ap2;
	int n;

	va_start(ap, fmt);
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || moat_buf_reserve(b, (size_t)n) < 0) {
		va_end(ap2);
		b->oom = true;
		return -ENOMEM;
	}
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	b->len += (size_t)n;
	return 0;
}

int moat_buf_json_str(struct moat_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char *o;

	/* worst case: every byte becomes \u00XX; reserve once, then write */
	if (n > (SIZE_MAX - 8) / 6 || moat_buf_reserve(b, 6 * n + 2) < 0) {
		b->oom = true;
		return -ENOMEM;
	}
	o = b->data + b->len;
	*o++ = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) {
			*o++ = (char)c;
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\n': *o++ = 'n'; break;
		case '\r': *o++ = 'r'; break;
		case '\t': *o++ = 't'; break;
		case '\b': *o++ = 'b'; break;
		case '\f': *o++ = 'f'; break;
		default:
			*o++ = 'u';
			*o++ = '0';
			*o++ = '0';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o++ = '"';
	*o = '\0';
	b->len = (size_t)(o - b->data);
	return 0;
}

char *moat_buf_steal(struct moat_buf *b)
{
	char *p;

	if (b->oom) {
		moat_buf_release(b);
		return NULL;
	}
	if (!b->data && moat_buf_reserve(b, 0) < 0)
		return NULL;
	p = b->data;
	moat_buf_init(b);
	return p;
}

size_t moat_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size) {
		size_t c = n < size - 1 ? n : size - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return n;
}

char *moat_strdup(const char *s)
{
	return s ? moat_strndup(s, strlen(s)) : NULL;
}

char *moat_strndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

bool moat_str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool moat_str_has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

int moat_parse_long(const char *s, long min, long max, long *ret)
{
	char *end;
	long v;

	if (!s || !*s || (*s != '-' && (*s < '0' || *s > '9')))
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end != '\0')
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

bool moat_utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		uint32_t cp;
		int len;

		/* ASCII fast path: eight bytes with no high bit and no NUL */
		if (i + 8 <= n) {
			uint64_t w;

			memcpy(&w, s + i, 8);
			if (!(w & 0x8080808080808080ULL) &&
			    !((w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL)) {
				i += 8;
				continue;
			}
		}
		if (c == 0)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			len = 2;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (i + (size_t)len > n)
			return false;
		for (int k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += (size_t)len;
	}
	return true;
}

int moat_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

uint64_t moat_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ULL;
	}
	return h;
}
