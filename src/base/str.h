/* Small string and buffer helpers shared by every layer. Pure: no I/O. */
#ifndef MOAT_BASE_STR_H
#define MOAT_BASE_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Growable byte buffer, always NUL-terminated when data != NULL.
 * On allocation failure the buffer sets oom and further appends are no-ops,
 * so callers may check once at the end. */
struct moat_buf {
	char *data;
	size_t len;
	size_t cap;
	bool oom;
};

#define MOAT_BUF_INIT {NULL, 0, 0, false}

void moat_buf_init(struct moat_buf *b);
void moat_buf_release(struct moat_buf *b);
void moat_buf_reset(struct moat_buf *b);
int moat_buf_reserve(struct moat_buf *b, size_t extra);
int moat_buf_append(struct moat_buf *b, const void *s, size_t n);
int moat_buf_puts(struct moat_buf *b, const char *s);
int moat_buf_putc(struct moat_buf *b, char c);
int moat_buf_printf(struct moat_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append v in decimal (no printf: the audit record and the session's
 * result JSON write many per call). */
int moat_buf_put_llong(struct moat_buf *b, long long v);
/* Append s as a JSON string literal (with quotes), escaping as RFC 8259 requires. */
int moat_buf_json_str(struct moat_buf *b, const char *s, size_t n);
/* Hand over the heap string (never NULL unless oom); the buffer is reset. */
char *moat_buf_steal(struct moat_buf *b);

/* strlcpy semantics: always terminates, returns strlen(src). */
size_t moat_strlcpy(char *dst, const char *src, size_t size);
char *moat_strdup(const char *s);
char *moat_strndup(const char *s, size_t n);
bool moat_str_has_prefix(const char *s, const char *prefix);
bool moat_str_has_suffix(const char *s, const char *suffix);
/* Strict decimal parse of a whole string into [min,max]. 0 or -EINVAL/-ERANGE. */
int moat_parse_long(const char *s, long min, long max, long *ret);
/* true when [s, s+n) is valid UTF-8 without NUL bytes and without overlongs/surrogates */
bool moat_utf8_valid(const char *s, size_t n);
/* Length of the longest prefix of s[0..n) that is valid UTF-8 without NUL
 * (overlong forms, surrogates and code points past U+10FFFF are invalid). */
size_t moat_utf8_valid_prefix(const char *s, size_t n);
/* n, or less so that s[0..n) does not end inside a multi-byte character
 * (an incomplete sequence at the end is left out): where to cut a string
 * truncated at n bytes. */
size_t moat_utf8_cut(const char *s, size_t n);
/* Append s[0..n) as valid UTF-8: each byte that does not start a valid
 * character becomes U+FFFD, and so does NUL unless keep_nul. 0 or -ENOMEM. */
int moat_buf_append_utf8(struct moat_buf *b, const char *s, size_t n, bool keep_nul);
/* SECURITY: append s[0..n) as text that cannot act on a terminal or hide
 * what follows it in a human's view: C0 and C1 controls, DEL, invalid UTF-8
 * bytes and invisible or bidi format characters (U+200B-U+200F,
 * U+2028-U+202E, U+2060-U+206F, U+FEFF, U+FFF9-U+FFFB) are written as
 * escapes (\n \t \r \xNN \uNNNN) and a backslash as \\, so what is shown
 * is unambiguous. 0 or -ENOMEM. */
int moat_buf_put_shown(struct moat_buf *b, const char *s, size_t n);
/* The same, at most max bytes of shown text (never cutting an escape or a
 * character), then "... (N more bytes)" with N the input bytes left out. */
int moat_buf_put_shown_capped(struct moat_buf *b, const char *s, size_t n, size_t max);
/* The value of a hexadecimal digit (either case), or -1. */
int moat_hexval(int c);
/* 64-bit FNV-1a */
uint64_t moat_hash(const void *s, size_t n);

#define MOAT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
