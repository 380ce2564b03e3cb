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

size_t moat_utf8_cut(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t k = 0, need;

	/* back over up to three continuation bytes to their lead byte */
	while (k < 3 && k < n && (p[n - 1 - k] & 0xC0) == 0x80)
		k++;
	if (k == n || (p[n - 1 - k] & 0x80) == 0)
		return n; /* ASCII last (or only continuation bytes: invalid anyway) */
	need = (p[n - 1 - k] & 0xE0) == 0xC0 ? 2 : (p[n - 1 - k] & 0xF0) == 0xE0 ? 3
	       : (p[n - 1 - k] & 0xF8) == 0xF0				     ? 4
										     : 1;
	return k + 1 < need ? n - 1 - k : n;
}

size_t moat_utf8_valid_prefix(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned c = p[i];
		uint32_t cp;
		size_t k;

		/* ASCII without a NUL, 32 then 8 bytes at a time: a byte is
		 * neither when its top bit is clear and it is not zero */
		if (c < 0x80) {
			const uint64_t ones = 0x0101010101010101ull, tops = 0x8080808080808080ull;
			uint64_t w[4];

			while (i + 32 <= n) {
				memcpy(w, p + i, 32);
				if (((w[0] | ((w[0] - ones) & ~w[0])) |
				     (w[1] | ((w[1] - ones) & ~w[1])) |
				     (w[2] | ((w[2] - ones) & ~w[2])) |
				     (w[3] | ((w[3] - ones) & ~w[3]))) &
				    tops)
					break;
				i += 32;
			}
			while (i + 8 <= n) {
				memcpy(w, p + i, 8);
				if ((w[0] | ((w[0] - ones) & ~w[0])) & tops)
					break;
				i += 8;
			}
			if (i >= n)
				break;
			c = p[i];
		}
		if (c >= 0x01 && c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			k = 1;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			k = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			k = 3;
			cp = c & 0x07;
		} else {
			return i; /* NUL, a continuation byte, or never valid */
		}
		if (n - i <= k)
			return i;
		for (size_t j = 1; j <= k; j++) {
			if ((p[i + j] & 0xc0) != 0x80)
				return i;
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		if ((k == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (k == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return i;
		i += k + 1;
	}
	return i;
}

bool moat_utf8_valid(const char *str, size_t n)
{
	return moat_utf8_valid_prefix(str, n) == n;
}

int moat_buf_append_utf8(struct moat_buf *b, const char *s, size_t n, bool keep_nul)
{
	size_t i = 0;

	while (i < n) {
		size_t k = moat_utf8_valid_prefix(s + i, n - i);

		moat_buf_append(b, s + i, k);
		i += k;
		if (i >= n)
			break;
		if (keep_nul && s[i] == '\0')
			moat_buf_putc(b, '\0');
		else
			moat_buf_append(b, "\xef\xbf\xbd", 3); /* U+FFFD for one bad byte */
		i++;
	}
	return b->oom ? -ENOMEM : 0;
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

/* ---- showing untrusted text to a human ---- */

#define SHOWN_ONE_MAX 12 /* the shown form of one character, with its NUL */

/* Code points a terminal or a client's text view acts on, or that change
 * how text reads: C1 controls (0x9b is CSI on some terminals), zero-width
 * and direction marks, line and paragraph separators, bidi embeddings,
 * overrides and isolates ("Trojan Source"), invisible operators, the byte
 * order mark, interlinear annotations. */
static bool shown_invisible(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff ||
	       (cp >= 0xfff9 && cp <= 0xfffb) || cp == 0xad || cp == 0x61c ||
	       (cp >= 0xe0000 && cp <= 0xe007f); /* soft hyphen, Arabic letter mark, tags */
}

/* Decode one UTF-8 sequence at s (n bytes left): its length, or 0 when
 * invalid (overlong, surrogate, past U+10FFFF, truncated). */
static size_t shown_utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
	size_t len;
	unsigned c = s[0], min;

	if (c < 0xc2 || c > 0xf4)
		return 0;
	len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
	if (n < len)
		return 0;
	c &= len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* The shown form of the character at s[0..n): its bytes in out (at most
 * SHOWN_ONE_MAX with the NUL), their count in *out_len; returns the input bytes consumed. */
static size_t shown_one(const char *s, size_t n, char out[static SHOWN_ONE_MAX], size_t *out_len)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned c = u[0], cp;
	size_t len;

	if (c < 0x80) {
		if (c == '\n')
			moat_strlcpy(out, "\\n", SHOWN_ONE_MAX);
		else if (c == '\t')
			moat_strlcpy(out, "\\t", SHOWN_ONE_MAX);
		else if (c == '\r')
			moat_strlcpy(out, "\\r", SHOWN_ONE_MAX);
		else if (c == '\\')
			moat_strlcpy(out, "\\\\", SHOWN_ONE_MAX);
		else if (c < 0x20 || c == 0x7f)
			snprintf(out, SHOWN_ONE_MAX, "\\x%02x", c);
		else {
			out[0] = (char)c;
			out[1] = '\0';
		}
		*out_len = strlen(out);
		return 1;
	}
	len = shown_utf8_decode(u, n, &cp);
	if (!len) {
		snprintf(out, SHOWN_ONE_MAX, "\\x%02x", c);
		*out_len = 4;
		return 1;
	}
	if (shown_invisible(cp)) {
		snprintf(out, SHOWN_ONE_MAX, "\\u%04x", cp);
		*out_len = 6;
		return len;
	}
	memcpy(out, s, len);
	out[len] = '\0';
	*out_len = len;
	return len;
}

int moat_buf_put_shown_capped(struct moat_buf *b, const char *s, size_t n, size_t max)
{
	size_t i = 0, used = 0;

	while (i < n) {
		char one[SHOWN_ONE_MAX];
		size_t olen, k = shown_one(s + i, n - i, one, &olen);

		if (used + olen > max) {
			moat_buf_printf(b, "... (%zu more bytes)", n - i);
			break;
		}
		moat_buf_append(b, one, olen);
		used += olen;
		i += k;
	}
	return b->oom ? -ENOMEM : 0;
}

int moat_buf_put_shown(struct moat_buf *b, const char *s, size_t n)
{
	return moat_buf_put_shown_capped(b, s, n, SIZE_MAX);
}

int moat_buf_put_llong(struct moat_buf *b, long long v)
{
	char tmp[24];
	size_t k = sizeof(tmp);
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;

	do {
		tmp[--k] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[--k] = '-';
	return moat_buf_append(b, tmp + k, sizeof(tmp) - k);
}
