/* Strings: UTF-8 validation (the one validator the audit log, the tools and
 * the MCP server share), the U+FFFD replacement, and the JSON escaper. */
#include <limits.h>
#include <string.h>

#include "base/str.h"
#include "tap.h"

#define FFFD "\xef\xbf\xbd"

static const struct {
	const char *s;
	size_t n;
	size_t prefix;	    /* valid prefix length */
	const char *clean;  /* without NUL */
	const char *nulkeep; /* keep_nul: NUL bytes shown as '0' here */
} cases[] = {
    {"", 0, 0, "", ""},
    {"plain ascii text, more than 32 bytes long.....", 46, 46,
     "plain ascii text, more than 32 bytes long.....", "plain ascii text, more than 32 bytes long....."},
    {"caf\xc3\xa9", 5, 5, "caf\xc3\xa9", "caf\xc3\xa9"},
    {"\xe2\x82\xac\xf0\x9f\x98\x80", 7, 7, "\xe2\x82\xac\xf0\x9f\x98\x80", "\xe2\x82\xac\xf0\x9f\x98\x80"},
    {"a\0b", 3, 1, "a" FFFD "b", "a0b"},
    {"\xc0\xaf", 2, 0, FFFD FFFD, FFFD FFFD},		       /* overlong '/' */
    {"\xe0\x80\xaf", 3, 0, FFFD FFFD FFFD, FFFD FFFD FFFD},     /* overlong, 3 bytes */
    {"\xed\xa0\x80", 3, 0, FFFD FFFD FFFD, FFFD FFFD FFFD},     /* a surrogate */
    {"\xf4\x90\x80\x80", 4, 0, FFFD FFFD FFFD FFFD, FFFD FFFD FFFD FFFD}, /* past U+10FFFF */
    {"ab\xc3", 3, 2, "ab" FFFD, "ab" FFFD},		       /* cut in a character */
    {"\x80x", 2, 0, FFFD "x", FFFD "x"},		       /* a lone continuation byte */
    {"x\xff\xfey", 4, 1, "x" FFFD FFFD "y", "x" FFFD FFFD "y"},
    {"0123456789abcdef0123456789abcdef\xff", 33, 32, "0123456789abcdef0123456789abcdef" FFFD,
     "0123456789abcdef0123456789abcdef" FFFD},
};

static void test_utf8(void)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(cases); i++) {
		struct moat_buf a = MOAT_BUF_INIT, b = MOAT_BUF_INIT;
		char want[128];
		size_t wl = strlen(cases[i].nulkeep);

		tap_ok(moat_utf8_valid_prefix(cases[i].s, cases[i].n) == cases[i].prefix,
		       "valid prefix of case %zu", i);
		tap_ok(moat_utf8_valid(cases[i].s, cases[i].n) == (cases[i].prefix == cases[i].n),
		       "valid of case %zu", i);
		CHECK_INT(moat_buf_append_utf8(&a, cases[i].s, cases[i].n, false), 0);
		tap_ok(a.len == strlen(cases[i].clean) && !memcmp(a.data ? a.data : "", cases[i].clean, a.len),
		       "U+FFFD replacement of case %zu", i);
		tap_ok(moat_utf8_valid(a.data ? a.data : "", a.len), "the result of case %zu is valid", i);
		memcpy(want, cases[i].nulkeep, wl);
		for (size_t k = 0; k < wl && k < cases[i].n; k++)
			if (cases[i].s[k] == '\0' && want[k] == '0')
				want[k] = '\0';
		CHECK_INT(moat_buf_append_utf8(&b, cases[i].s, cases[i].n, true), 0);
		tap_ok(b.len == wl && !memcmp(b.data ? b.data : "", want, wl),
		       "keep_nul replacement of case %zu", i);
		moat_buf_release(&a);
		moat_buf_release(&b);
	}
}

static void test_json_str(void)
{
	static const struct {
		const char *in;
		size_t n;
		const char *out;
	} t[] = {
	    {"", 0, "\"\""},
	    {"a\"b\\c", 5, "\"a\\\"b\\\\c\""},
	    {"\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\""},
	    {"\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\""},
	    {"a\0b", 3, "\"a\\u0000b\""},
	    {"caf\xc3\xa9 /", 7, "\"caf\xc3\xa9 /\""},
	};

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(t); i++) {
		struct moat_buf b = MOAT_BUF_INIT;

		moat_buf_puts(&b, "x");
		CHECK_INT(moat_buf_json_str(&b, t[i].in, t[i].n), 0);
		tap_ok(b.data && !strcmp(b.data + 1, t[i].out) && b.len == strlen(t[i].out) + 1,
		       "json string %zu: %s", i, b.data ? b.data + 1 : "(null)");
		moat_buf_release(&b);
	}
}

static void test_put_llong(void)
{
	static const struct {
		long long v;
		const char *want;
	} rows[] = {{0, "0"},
		    {7, "7"},
		    {-1, "-1"},
		    {1234567890123LL, "1234567890123"},
		    {LLONG_MAX, "9223372036854775807"},
		    {LLONG_MIN, "-9223372036854775808"}};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct moat_buf b = MOAT_BUF_INIT;

		CHECK_INT(moat_buf_put_llong(&b, rows[i].v), 0);
		CHECK_STR(b.data, rows[i].want);
		moat_buf_release(&b);
	}
}

static void test_utf8_cut(void)
{
	static const struct {
		const char *s;
		size_t n, cut;
	} cuts[] = {
	    {"abc", 3, 3},
	    {"", 0, 0},
	    {"ab\xc3", 3, 2},			/* a two-byte character begun */
	    {"ab\xc3\xa9", 4, 4},		/* and ended */
	    {"a\xe2\x82", 3, 1},		/* three bytes, two there */
	    {"a\xe2\x82\xac", 4, 4},
	    {"a\xf0\x9f\x98", 4, 1},		/* four bytes, three there */
	    {"a\xf0\x9f\x98\x80", 5, 5},
	    {"\x80\x80", 2, 2},		/* no lead byte: left to the replacement */
	    {"a\xff", 2, 2},
	};

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(cuts); i++)
		tap_ok(moat_utf8_cut(cuts[i].s, cuts[i].n) == cuts[i].cut, "utf8 cut of case %zu", i);
}

int main(void)
{
	test_put_llong();
	test_utf8();
	test_utf8_cut();
	test_json_str();
	return tap_done();
}
