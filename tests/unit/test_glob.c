/* Unit tests for src/core/glob.c: matching semantics (path and text mode),
 * syntax errors with positions, every limit at its boundary, linear-time
 * matching, and the indexed glob set against a linear scan. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/str.h"
#include "core/glob.h"
#include "tap.h"

#define P MOAT_GLOB_PATH
#define T MOAT_GLOB_TEXT

struct mcase {
	unsigned flags;
	const char *pattern;
	const char *subject;
	int expect;
};

static const struct mcase cases[] = {
    /* globstar at the end: X itself and everything below, never a sibling */
    {P, "/ws/**", "/ws", 1},
    {P, "/ws/**", "/ws/a", 1},
    {P, "/ws/**", "/ws/a/b", 1},
    {P, "/ws/**", "/ws/", 1},
    {P, "/ws/**", "/ws_evil/x", 0},
    {P, "/ws/**", "/ws_evil", 0},
    {P, "/ws/**", "/wsx", 0},
    {P, "/ws/**", "/w", 0},
    {P, "/ws/**", "/", 0},
    {P, "/ws/**", "", 0},
    {P, "/ws/**", "/other/ws/a", 0},
    {P, "/etc/sudoers.d/**", "/etc/sudoers.d", 1},
    {P, "/etc/sudoers.d/**", "/etc/sudoers.d/x", 1},
    {P, "/etc/sudoers.d/**", "/etc/sudoers.dx", 0},
    {P, "/a/**", "/a", 1},
    {P, "/a/**", "/ab", 0},
    /* one star stays inside a component */
    {P, "/ws/*", "/ws/a", 1},
    {P, "/ws/*", "/ws/a/b", 0},
    {P, "/ws/*", "/ws", 0},
    {P, "/ws/*", "/ws/", 1},
    {P, "/ws/*", "/ws_evil/a", 0},
    {P, "*", "abc", 1},
    {P, "*", "", 1},
    {P, "*", "a/b", 0},
    {P, "*", "/abc", 0},
    {P, "*.pem", "key.pem", 1},
    {P, "*.pem", "/k/key.pem", 0},
    /* globstar first */
    {P, "**/.env", ".env", 1},
    {P, "**/.env", "/x/.env", 1},
    {P, "**/.env", "/a/b/.env", 1},
    {P, "**/.env", "/.env", 1},
    {P, "**/.env", "/a/b/x.env", 0},
    {P, "**/.env", "a.env", 0},
    {P, "**/.env", "/a/.envrc", 0},
    {P, "**/.env", "/a/b/.env/c", 0},
    {P, "**/*.pem", "/k/key.pem", 1},
    {P, "**/*.pem", "key.pem", 1},
    {P, "**/*.pem", "/k/.pem", 1},
    {P, "**/*.pem", "/k/key.pem.bak", 0},
    {P, "**/*.pem", "/k.pem/x", 0},
    {P, "**/.env.*", "/a/.env.local", 1},
    {P, "**/.env.*", "/a/.env", 0},
    {P, "**/.ssh/**", "/home/u/.ssh", 1},
    {P, "**/.ssh/**", "/home/u/.ssh/id_rsa", 1},
    {P, "**/.ssh/**", "/home/u/.ssh/a/b", 1},
    {P, "**/.ssh/**", ".ssh", 1},
    {P, "**/.ssh/**", "/home/u/.sshx/y", 0},
    {P, "**/.ssh/**", "/home/u/x.ssh/y", 0},
    {P, "**/.config/gcloud/**", "/h/.config/gcloud/c.json", 1},
    {P, "**/.config/gcloud/**", "/h/.config/gcloudx", 0},
    /* globstar between */
    {P, "/a/**/b", "/a/b", 1},
    {P, "/a/**/b", "/a/x/b", 1},
    {P, "/a/**/b", "/a/x/y/b", 1},
    {P, "/a/**/b", "/a/b/b", 1},
    {P, "/a/**/b", "/a/xb", 0},
    {P, "/a/**/b", "/ab", 0},
    {P, "/a/**/b", "/a/b/c", 0},
    {P, "/a/**/b", "/b", 0},
    {P, "/a/**/b", "/ax/b", 0},
    {P, "/a/**/**/b", "/a/b", 1},
    {P, "/a/**/**/b", "/a/x/y/b", 1},
    {P, "/ws/**/", "/ws/", 1},
    {P, "/ws/**/", "/ws/a/", 1},
    {P, "/ws/**/", "/ws", 0},
    {P, "/ws/**/x/**", "/ws/x", 1},
    {P, "/ws/**/x/**", "/ws/a/x/b/c", 1},
    {P, "/ws/**/x/**", "/ws/ax", 0},
    /* globstar alone */
    {P, "**", "", 1},
    {P, "**", "/", 1},
    {P, "**", "/a/b", 1},
    {P, "**", "abc", 1},
    {P, "**/**", "/a", 1},
    {P, "***", "/a/b", 1},
    {P, "/a/***/b", "/a/x/y/b", 1},
    /* "**" inside a component is a plain star */
    {P, "a**b", "axxb", 1},
    {P, "a**b", "ab", 1},
    {P, "a**b", "ax/xb", 0},
    {P, "**b", "ab", 1},
    {P, "**b", "/a/b", 0},
    {P, "b**", "b/c", 0},
    {P, "/a/**b/c", "/a/xb/c", 1},
    {P, "/a/**b/c", "/a/x/b/c", 0},
    {P, "/a/b**/c", "/a/b/x/c", 0},
    /* zero-length components */
    {P, "a//b", "a//b", 1},
    {P, "a//b", "a/b", 0},
    {P, "/a/*/b", "/a//b", 1},
    {P, "/", "/", 1},
    {P, "/", "", 0},
    {P, "", "", 1},
    {P, "", "a", 0},
    /* question mark */
    {P, "?", "a", 1},
    {P, "?", "/", 0},
    {P, "?", "", 0},
    {P, "?", "ab", 0},
    {P, "/a?c", "/abc", 1},
    {P, "/a?c", "/a/c", 0},
    /* classes */
    {P, "[abc]", "b", 1},
    {P, "[abc]", "d", 0},
    {P, "[abc]", "/", 0},
    {P, "[a-z]x", "qx", 1},
    {P, "[a-z]x", "Qx", 0},
    {P, "[a-cx-z]", "y", 1},
    {P, "[a-cx-z]", "d", 0},
    {P, "[!a]", "b", 1},
    {P, "[!a]", "a", 0},
    {P, "[!a]", "/", 0},
    {P, "[^a]", "b", 1},
    {P, "[^a]", "/", 0},
    {P, "a[/]b", "a/b", 0},
    {P, "a[!x]b", "a/b", 0},
    {P, "a[--0]b", "a/b", 0},
    {P, "a[--0]b", "a-b", 1},
    {P, "a[--0]b", "a.b", 1},
    {P, "a[--0]b", "a0b", 1},
    {P, "[]]", "]", 1},
    {P, "[]]", "a", 0},
    {P, "[!]]", "a", 1},
    {P, "[!]]", "]", 0},
    {P, "[]a]", "a", 1},
    {P, "[a-]", "-", 1},
    {P, "[a-]", "b", 0},
    {P, "[-a]", "-", 1},
    {P, "[\\]]", "]", 1},
    {P, "[\\-]", "-", 1},
    {P, "[\\!a]", "!", 1},
    {P, "[{]", "{", 1},
    {P, "[*]", "*", 1},
    {P, "[*]", "a", 0},
    {P, "[[]", "[", 1},
    /* braces */
    {P, "{a,b,c}", "a", 1},
    {P, "{a,b,c}", "c", 1},
    {P, "{a,b,c}", "d", 0},
    {P, "{a,b,c}", "ab", 0},
    {P, "/x/{a,b{c,d}}/y", "/x/a/y", 1},
    {P, "/x/{a,b{c,d}}/y", "/x/bc/y", 1},
    {P, "/x/{a,b{c,d}}/y", "/x/bd/y", 1},
    {P, "/x/{a,b{c,d}}/y", "/x/b/y", 0},
    {P, "/x/{a,b{c,d}}/y", "/x/bcd/y", 0},
    {P, "{{a,b},{c,{d,e}}}", "e", 1},
    {P, "{{a,b},{c,{d,e}}}", "f", 0},
    {P, "{,a}b", "b", 1},
    {P, "{,a}b", "ab", 1},
    {P, "{}", "", 1},
    {P, "{}", "{}", 0},
    {P, "a{b}c", "abc", 1},
    {P, "{a,b}{c,d}", "bd", 1},
    {P, "{a,b}{c,d}", "ba", 0},
    {P, "a,b", "a,b", 1},
    {P, "{a\\,b,c}", "a,b", 1},
    {P, "{a\\,b,c}", "c", 1},
    {P, "{a\\,b,c}", "a", 0},
    {P, "{[,]x,y}", ",x", 1},
    {P, "{[,]x,y}", "y", 1},
    {P, "{**,x}/y", "/a/b/y", 1},
    {P, "{**,x}/y", "x/y", 1},
    {P, "{**,x}/y", "z/y", 1},
    {P, "{/a,/b}/**", "/b/c", 1},
    {P, "{/a,/b}/**", "/c/b", 0},
    {P, "*{*,}", "a/b", 1}, /* expands to a globstar */
    {P, "/{a/b,c}/d", "/a/b/d", 1},
    {P, "/{a/b,c}/d", "/c/d", 1},
    {P, "/{a/b,c}/d", "/a/d", 0},
    {P, "**/{id_rsa,id_dsa}", "/h/.ssh/id_dsa", 1},
    {P, "**/*.{pem,key}", "/x/a.key", 1},
    {P, "**/*.{pem,key}", "/x/a.keys", 0},
    /* escapes */
    {P, "\\*", "*", 1},
    {P, "\\*", "a", 0},
    {P, "\\?", "?", 1},
    {P, "\\?", "a", 0},
    {P, "\\[a]", "[a]", 1},
    {P, "\\{a\\}", "{a}", 1},
    {P, "\\}", "}", 1},
    {P, "\\**", "*abc", 1},
    {P, "\\**", "abc", 0},
    {P, "\\*\\*/x", "**/x", 1},
    {P, "\\*\\*/x", "a/x", 0},
    {P, "a\\/b", "a/b", 1},
    {P, "\\a", "a", 1},
    {P, "\\\\", "\\", 1},
    /* characters, not bytes */
    {P, "/\xc3\xa9/*", "/\xc3\xa9/x", 1},
    {P, "?", "\xc3\xa9", 1},
    {P, "??", "\xc3\xa9", 0},
    {P, "?", "\xf0\x9f\x98\x80", 1},
    {P, "[\xc3\xa9]", "\xc3\xa9", 1},
    {P, "[\xc3\xa9]", "e", 0},
    {P, "[\xc3\xa0-\xc3\xbf]", "\xc3\xa9", 1},
    {P, "[\xc3\xa0-\xc3\xbf]", "a", 0},
    {P, "[!\xc3\xa9]", "\xc3\xa9", 0},
    {P, "[!\xc3\xa9]", "\xc3\xa8", 1},
    {P, "[!\xc3\xa9]", "x", 1},
    {P, "[a-\xc3\xbf]", "/", 0},
    {P, "a*\xc3\xa9", "abc\xc3\xa9", 1},
    {P, "a*\xc3\xa9", "abc\xc3\xa8", 0},
    {P, "\xc3\xa9", "\xc3\xa9", 1},
    {P, "\xc3\xa9", "\xc3", 0},
    /* invalid bytes in a subject are characters only wildcards match */
    {P, "?", "\xff", 1},
    {P, "*", "\xff\xfe", 1},
    {P, "*", "\xff/", 0},
    {P, "[!a]", "\xff", 1},
    {P, "\xc3\xa9", "\xc3\xa9\xff", 0},
    {P, "**/.env", "/\xff/.env", 1},
    {P, "/ws/**", "/ws\xff/x", 0},
    /* text mode: '/' is ordinary */
    {T, "git *", "git status", 1},
    {T, "git *", "git push origin/main", 1},
    {T, "git *", "git ", 1},
    {T, "git *", "git", 0},
    {T, "git *", "gitx status", 0},
    {T, "git *", " git status", 0},
    {T, "*", "a/b c", 1},
    {T, "**", "x/y", 1},
    {T, "?", "/", 1},
    {T, "[/]", "/", 1},
    {T, "[!a]", "/", 1},
    {T, "ls -l?", "ls -la", 1},
    {T, "rm -rf /*", "rm -rf /home/x", 1},
    {T, "rm -rf /*", "rm -rf home", 0},
    {T, "{git,hg} push*", "hg push --force", 1},
    {T, "{git,hg} push*", "svn push", 0},
    {T, "a/**/b", "a/b", 0},
    {T, "a/**/b", "a//b", 1},
    {T, "a/**/b", "a/x/y/b", 1},
    {T, "curl * | sh", "curl http://x/y | sh", 1},
    {T, "curl * | sh", "curl http://x/y | bash", 0},
};

static void test_table(void)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(cases); i++) {
		const struct mcase *c = &cases[i];
		struct moat_error err;
		struct moat_glob *g = NULL;
		int r;

		moat_error_clear(&err);
		r = moat_glob_compile(c->pattern, c->flags, &g, &err);
		if (!CHECKF(r == 0, "compile %s '%s' (%s)", c->flags ? "text" : "path", c->pattern,
			    err.msg))
			continue;
		CHECKF(moat_glob_match(g, c->subject, strlen(c->subject)) == !!c->expect,
		       "%s '%s' vs '%s' -> %d", c->flags ? "text" : "path", c->pattern, c->subject,
		       c->expect);
		CHECK_STR(moat_glob_pattern(g), c->pattern);
		moat_glob_free(g);
	}
}

struct ecase {
	const char *pattern;
	size_t len; /* 0: strlen */
	const char *msg;
};

static const struct ecase errors[] = {
    {"[abc", 0, "unmatched '[' at position 1"},
    {"a/[b", 0, "unmatched '[' at position 3"},
    {"[!]", 0, "unmatched '[' at position 1"},
    {"[]", 0, "unmatched '[' at position 1"},
    {"a{b,c", 0, "unmatched '{' at position 2"},
    {"{a,{b}", 0, "unmatched '{' at position 1"},
    {"{", 0, "unmatched '{' at position 1"},
    {"a}", 0, "unmatched '}' at position 2"},
    {"{a}}", 0, "unmatched '}' at position 4"},
    {"abc\\", 0, "trailing backslash at position 4"},
    {"[\\", 0, "trailing backslash at position 2"},
    {"{a,\\", 0, "trailing backslash at position 4"},
    {"[z-a]", 0, "range out of order in '[...]' at position 3"},
    {"x[\xc3\xbf-a]", 0, "range out of order in '[...]' at position 5"},
    {"[[:alpha:]]", 0, "not supported at position 2"},
    {"{a,[b}", 0, "unmatched '[' at position 4"},
    {"a\0b", 3, "NUL byte at position 2"},
    {"a\xff"
     "b",
     0, "invalid UTF-8 at position 2"},
    {"ab\xc3", 0, "invalid UTF-8 at position 3"},
    {"\xc0\xaf", 0, "invalid UTF-8 at position 1"},
    {"\xed\xa0\x80", 0, "invalid UTF-8 at position 1"},
    {"\xf4\x90\x80\x80", 0, "invalid UTF-8 at position 1"},
    {"\\\xff", 0, "invalid UTF-8 at position 2"},
};

static void test_errors(void)
{
	struct moat_glob *g = (struct moat_glob *)0x1;
	struct moat_error err;

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(errors); i++) {
		const struct ecase *e = &errors[i];
		size_t len = e->len ? e->len : strlen(e->pattern);

		moat_error_clear(&err);
		for (unsigned f = 0; f < 2; f++) {
			g = (struct moat_glob *)0x1;
			CHECK_INT(moat_glob_compile_n(e->pattern, len, f, &g, &err), -EINVAL);
			CHECKF(g == (struct moat_glob *)0x1, "ret untouched on failure");
			CHECKF(strstr(err.msg, e->msg) != NULL, "error #%zu: '%s' contains '%s'", i,
			       err.msg, e->msg);
		}
	}
	CHECK_INT(moat_glob_compile("a", 7, &g, &err), -EINVAL);
	CHECK_INT(moat_glob_compile(NULL, P, &g, &err), -EINVAL);
	CHECK(moat_glob_free(NULL) == NULL);
	CHECK(!moat_glob_match(NULL, "a", 1));
}

static char *repeat(const char *unit, size_t times, const char *tail)
{
	size_t ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(ul * times + tl + 1);

	for (size_t i = 0; i < times; i++)
		memcpy(s + i * ul, unit, ul);
	memcpy(s + ul * times, tail, tl + 1);
	return s;
}

static int compile_ok(const char *p, unsigned flags, struct moat_glob **g)
{
	struct moat_error err;
	int r = moat_glob_compile(p, flags, g, &err);

	if (r < 0)
		printf("# %s\n", err.msg);
	return r;
}

static void test_limits(void)
{
	struct moat_glob *g = NULL;
	struct moat_error err;
	char *p, *s;

	/* pattern length: exactly the maximum, then one more */
	p = repeat("a", MOAT_GLOB_MAX_PATTERN, "");
	CHECK_INT(compile_ok(p, P, &g), 0);
	CHECK(moat_glob_match(g, p, strlen(p)));
	p[100] = 'b';
	CHECK(!moat_glob_match(g, p, strlen(p)));
	CHECK(!moat_glob_match(g, p, strlen(p) - 1));
	g = moat_glob_free(g);
	free(p);
	p = repeat("a", MOAT_GLOB_MAX_PATTERN + 1, "");
	CHECK_INT(moat_glob_compile(p, P, &g, &err), -EINVAL);
	CHECK(strstr(err.msg, "longer than 4096") != NULL);
	free(p);
	/* a maximal pattern of wildcards spans many words and still matches */
	p = repeat("*a", MOAT_GLOB_MAX_PATTERN / 2, "");
	CHECK_INT(compile_ok(p, T, &g), 0);
	s = repeat("xa", MOAT_GLOB_MAX_PATTERN / 2 + 10, "");
	CHECK(moat_glob_match(g, s, strlen(s)));
	CHECK(!moat_glob_match(g, s, MOAT_GLOB_MAX_PATTERN - 2));
	g = moat_glob_free(g);
	free(s);
	free(p);

	/* alternatives: 2^8 = 256 accepted, 2^9 refused; one flat list likewise */
	p = repeat("{a,b}", 8, "");
	CHECK_INT(compile_ok(p, P, &g), 0);
	CHECK(moat_glob_match(g, "abababab", 8));
	CHECK(moat_glob_match(g, "bbbbbbbb", 8));
	CHECK(!moat_glob_match(g, "bbbbbbbc", 8));
	g = moat_glob_free(g);
	free(p);
	p = repeat("{a,b}", 9, "");
	CHECK_INT(moat_glob_compile(p, P, &g, &err), -EINVAL);
	CHECKF(strstr(err.msg, "more than 256 alternatives") != NULL, "%s", err.msg);
	free(p);
	{
		char buf[4096];
		size_t n = 0;

		for (int k = 0; k < 2; k++) {
			int count = MOAT_GLOB_MAX_ALTERNATIVES + k;

			n = 0;
			buf[n++] = '{';
			for (int i = 0; i < count; i++)
				n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%d",
						      i ? "," : "", i);
			buf[n++] = '}';
			buf[n] = '\0';
			if (k == 0) {
				CHECK_INT(compile_ok(buf, P, &g), 0);
				CHECK(moat_glob_match(g, "255", 3));
				CHECK(!moat_glob_match(g, "256", 3));
				g = moat_glob_free(g);
			} else {
				CHECK_INT(moat_glob_compile(buf, P, &g, &err), -EINVAL);
				CHECK(strstr(err.msg, "position 1") != NULL);
			}
		}
	}
	/* nested alternatives count as their expansions: {a,{b,c}} is 3 */
	p = repeat("{a,{b,c}}", 5, "");
	CHECK_INT(compile_ok(p, P, &g), 0); /* 3^5 = 243 */
	g = moat_glob_free(g);
	free(p);
	p = repeat("{a,{b,c}}", 6, ""); /* 729 */
	CHECK_INT(moat_glob_compile(p, P, &g, &err), -EINVAL);
	free(p);

	/* brace depth: exactly the maximum, then one more */
	{
		char buf[128];
		size_t n = 0;

		for (int k = 0; k < 2; k++) {
			int depth = MOAT_GLOB_MAX_BRACE_DEPTH + k;

			n = 0;
			for (int i = 0; i < depth; i++)
				buf[n++] = '{';
			buf[n++] = 'x';
			for (int i = 0; i < depth; i++)
				buf[n++] = '}';
			buf[n] = '\0';
			if (k == 0) {
				CHECK_INT(compile_ok(buf, P, &g), 0);
				CHECK(moat_glob_match(g, "x", 1));
				g = moat_glob_free(g);
			} else {
				CHECK_INT(moat_glob_compile(buf, P, &g, &err), -EINVAL);
				CHECKF(strstr(err.msg, "nested too deeply at position 17") != NULL,
				       "%s", err.msg);
			}
		}
	}

	/* states: 4 expansions of 2046 + 1 tokens need 4 * 2048 = 8192 positions */
	p = repeat("x", 2046, "{a,b,c,d}");
	CHECK_INT(compile_ok(p, P, &g), 0);
	CHECK_INT(moat_glob_states(g), MOAT_GLOB_MAX_STATES);
	s = repeat("x", 2046, "d");
	CHECK(moat_glob_match(g, s, strlen(s)));
	s[2046] = 'e';
	CHECK(!moat_glob_match(g, s, strlen(s)));
	free(s);
	g = moat_glob_free(g);
	free(p);
	p = repeat("x", 2047, "{a,b,c,d}");
	CHECK_INT(moat_glob_compile(p, P, &g, &err), -EINVAL);
	CHECKF(strstr(err.msg, "too complex") != NULL, "%s", err.msg);
	free(p);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_linear(void)
{
	size_t n = 1 << 20;
	char *s = malloc(n + 1);
	struct moat_glob *g = NULL;
	double t0, t;

	memset(s, 'a', n);
	s[n] = '\0';
	CHECK_INT(compile_ok("*a*a*a*b", P, &g), 0);
	t0 = now();
	CHECK(!moat_glob_match(g, s, n));
	s[n - 1] = 'b';
	CHECK(moat_glob_match(g, s, n));
	t = now() - t0;
	printf("# 2 x 1 MiB against *a*a*a*b: %.1f ms\n", t * 1e3);
	CHECKF(t < 2.0, "no backtracking (%.3f s)", t);
	g = moat_glob_free(g);
	CHECK_INT(compile_ok("**/**/**/**/**/x", P, &g), 0);
	s[n - 1] = 'a';
	t0 = now();
	CHECK(!moat_glob_match(g, s, n));
	CHECKF(now() - t0 < 2.0, "globstars stay linear");
	g = moat_glob_free(g);
	free(s);
}

static void test_set_order(void)
{
	static const char *pats[] = {
	    "/ws/**",	 "**/.env",   "/ws/secret/**",	"**/*.pem", "/etc/passwd",
	    "**/id_rsa", "/home/*/x", "{/opt,/srv}/**", "**",
	};
	static const struct {
		const char *s;
		long want;
	} q[] = {
	    {"/ws/.env", 0},	 {"/x/.env", 1},   {"/ws/secret/a", 0}, {"/etc/passwd", 4},
	    {"/etc/passwdx", 8}, {"/h/id_rsa", 5}, {"/a/b.pem", 3},	{"/home/u/x", 6},
	    {"/srv/a", 7},	 {"/opt", 7},	   {"/ws_evil/x", 8},	{"", 8},
	};
	struct moat_globset *set = NULL;
	struct moat_error err;

	CHECK_INT(moat_globset_new(P, &set), 0);
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(pats); i++)
		CHECK_INT(moat_globset_add(set, pats[i], &err), (long)i);
	CHECK_INT(moat_globset_count(set), MOAT_ARRAY_SIZE(pats));
	for (int built = 0; built < 2; built++) {
		if (built)
			CHECK_INT(moat_globset_build(set), 0);
		for (size_t i = 0; i < MOAT_ARRAY_SIZE(q); i++)
			CHECKF(moat_globset_first(set, q[i].s, strlen(q[i].s)) == q[i].want,
			       "set%s: '%s' -> %ld (got %ld)", built ? " built" : "", q[i].s,
			       q[i].want, moat_globset_first(set, q[i].s, strlen(q[i].s)));
	}
	CHECK_STR(moat_globset_pattern(set, 2), "/ws/secret/**");
	CHECK(moat_globset_pattern(set, 99) == NULL);
	CHECK_INT(moat_globset_add(set, "[", &err), -EINVAL);
	CHECK_INT(moat_globset_count(set), MOAT_ARRAY_SIZE(pats));
	/* an add after build: still right before and after the next build */
	CHECK_INT(moat_globset_add_n(set, "/etc/passwdx", 12, &err), 9);
	CHECK_INT(moat_globset_first(set, "/etc/passwdx", 12), 8);
	CHECK_INT(moat_globset_build(set), 0);
	CHECK_INT(moat_globset_first(set, "/etc/passwdx", 12), 8);
	moat_globset_free(set);

	/* a later, more specific glob never wins over an earlier one */
	CHECK_INT(moat_globset_new(P, &set), 0);
	moat_globset_add(set, "**/*.txt", &err);
	moat_globset_add(set, "/home/u/**", &err);
	moat_globset_add(set, "**/a.txt", &err);
	moat_globset_add(set, "/home/u/a.txt", &err);
	CHECK_INT(moat_globset_build(set), 0);
	CHECK_INT(moat_globset_first(set, "/home/u/a.txt", 13), 0);
	CHECK_INT(moat_globset_first(set, "/home/u/a.tx", 12), 1);
	CHECK_INT(moat_globset_first(set, "/h/a.txt", 8), 0);
	CHECK_INT(moat_globset_first(set, "/h/a.tx", 7), -1);
	moat_globset_free(set);

	/* empty set, text mode set */
	CHECK_INT(moat_globset_new(T, &set), 0);
	CHECK_INT(moat_globset_build(set), 0);
	CHECK_INT(moat_globset_first(set, "ls", 2), -1);
	moat_globset_add(set, "git push*", &err);
	moat_globset_add(set, "git *", &err);
	moat_globset_add(set, "*", &err);
	moat_globset_add(set, "ls", &err);
	moat_globset_add(set, "", &err);
	CHECK_INT(moat_globset_build(set), 0);
	CHECK_INT(moat_globset_first(set, "git push --force", 16), 0);
	CHECK_INT(moat_globset_first(set, "git pull", 8), 1);
	CHECK_INT(moat_globset_first(set, "ls", 2), 2);
	CHECK_INT(moat_globset_first(set, "", 0), 2);
	moat_globset_free(set);
	CHECK_INT(moat_globset_new(T, &set), 0);
	moat_globset_add(set, "ls", &err);
	moat_globset_add(set, "", &err);
	moat_globset_add(set, " x", &err);
	CHECK_INT(moat_globset_build(set), 0);
	CHECK_INT(moat_globset_first(set, "ls", 2), 0);
	CHECK_INT(moat_globset_first(set, "", 0), 1);
	CHECK_INT(moat_globset_first(set, " x", 2), 2);
	CHECK_INT(moat_globset_first(set, "ls ", 3), -1);
	moat_globset_free(set);
	CHECK(moat_globset_free(NULL) == NULL);
	CHECK_INT(moat_globset_new(5, &set), -EINVAL);
}

static void test_set_limit(void)
{
	struct moat_globset *set = NULL;
	struct moat_error err;
	char buf[64];
	long r = 0;

	CHECK_INT(moat_globset_new(P, &set), 0);
	for (int i = 0; i < MOAT_GLOBSET_MAX_GLOBS && r >= 0; i++) {
		snprintf(buf, sizeof(buf), "/d%d/**", i);
		r = moat_globset_add(set, buf, &err);
	}
	CHECK_INT(r, MOAT_GLOBSET_MAX_GLOBS - 1);
	CHECK_INT(moat_globset_add(set, "/one/more", &err), -E2BIG);
	CHECK_INT(moat_globset_build(set), 0);
	CHECK_INT(moat_globset_first(set, "/d99999/x", 9), 99999);
	CHECK_INT(moat_globset_first(set, "/d100000/x", 10), -1);
	moat_globset_free(set);
}

/* xorshift: reproducible subjects and globs */
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void random_glob(char *buf, size_t sz, int i)
{
	switch (rnd(12)) {
	case 0:
	case 1:
	case 2:
		snprintf(buf, sz, "/home/u/proj/dir%u/**", rnd(400));
		break;
	case 3:
	case 4:
		snprintf(buf, sz, "**/name%u.txt", rnd(400));
		break;
	case 5:
	case 6:
		snprintf(buf, sz, "**/*.ext%u", rnd(400));
		break;
	case 7:
		snprintf(buf, sz, "/home/u/proj/dir%u/*.ext%u", rnd(400), rnd(20));
		break;
	case 8:
		snprintf(buf, sz, "/home/u/{proj,src}/dir%u/name%u.*", rnd(400), rnd(20));
		break;
	case 9:
		snprintf(buf, sz, "/home/*/proj/dir%u", rnd(400));
		break;
	case 10:
		snprintf(buf, sz, "**/dir%u/**/name%u.txt", rnd(400), rnd(30));
		break;
	default:
		/* a few keyless globs that go to the scan list */
		if (i % 50 == 0)
			snprintf(buf, sz, "/home/u/proj/dir%u?/*", rnd(40));
		else
			snprintf(buf, sz, "**/name%u.ext%u", rnd(400), rnd(400));
		break;
	}
}

static void random_subject(char *buf, size_t sz)
{
	int n = snprintf(buf, sz, "/home/%s/%s", rnd(8) ? "u" : "v", rnd(5) ? "proj" : "src");
	int depth = (int)rnd(4);

	n += snprintf(buf + n, sz - (size_t)n, "/dir%u", rnd(450));
	for (int d = 0; d < depth; d++)
		n += snprintf(buf + n, sz - (size_t)n, "/%s%u", rnd(2) ? "dir" : "sub", rnd(450));
	if (rnd(4))
		snprintf(buf + n, sz - (size_t)n, "/name%u.%s%u", rnd(450), rnd(2) ? "ext" : "txt",
			 rnd(450));
}

static const char *defaults[] = {
    "/etc/shadow",	"/etc/passwd",
    "/etc/sudoers",	"/etc/sudoers.d/**",
    "**/.env",		"**/.env.*",
    "**/credentials",	"**/credentials.*",
    "**/secrets",	"**/secrets.*",
    "**/*.pem",		"**/*.key",
    "**/*.p12",		"**/*.pfx",
    "**/.ssh/**",	"**/id_rsa",
    "**/id_dsa",	"**/id_ecdsa",
    "**/id_ed25519",	"**/.aws/**",
    "**/.azure/**",	"**/.config/gcloud/**",
    "**/.netrc",	"**/.npmrc",
    "**/.pypirc",	"**/.git/hooks/**",
    "**/.git/config",	"/home/u/.bashrc",
    "/home/u/.moat/**", "/home/u/proj/**",
};

static double bench(const struct moat_globset *set, char (*subj)[128], size_t nsubj, long *sink)
{
	size_t iters = 200000;
	double t0 = now();

	for (size_t i = 0; i < iters; i++) {
		const char *s = subj[i % nsubj];

		*sink += moat_globset_first(set, s, strlen(s));
	}
	return (now() - t0) / (double)iters * 1e9;
}

static void test_set_differential(void)
{
	enum { NG = 10000, NS = 2000 };
	struct moat_globset *set = NULL, *small = NULL, *pure = NULL;
	struct moat_glob **gl = calloc(NG, sizeof(*gl));
	char(*subj)[128] = calloc(NS, sizeof(*subj));
	struct moat_error err;
	char buf[128];
	int bad = 0, hits = 0;
	double t_small, t_big, t_pure;
	long sink = 0;

	CHECK_INT(moat_globset_new(P, &set), 0);
	for (int i = 0; i < NG; i++) {
		random_glob(buf, sizeof(buf), i);
		if (moat_globset_add(set, buf, &err) != i || compile_ok(buf, P, &gl[i]) < 0)
			bad++;
	}
	CHECK_INT(bad, 0);
	CHECK_INT(moat_globset_build(set), 0);
	for (int i = 0; i < NS; i++) {
		long want = -1, got;

		random_subject(subj[i], sizeof(subj[i]));
		for (int k = 0; k < NG; k++) {
			if (moat_glob_match(gl[k], subj[i], strlen(subj[i]))) {
				want = k;
				break;
			}
		}
		got = moat_globset_first(set, subj[i], strlen(subj[i]));
		if (got != want) {
			if (bad++ < 5)
				printf("# '%s': set %ld, scan %ld\n", subj[i], got, want);
		}
		hits += want >= 0;
	}
	CHECKF(bad == 0, "10,000 globs: set agrees with a linear scan on %d subjects", NS);
	CHECKF(hits > NS / 4 && hits < NS, "differential subjects both match (%d) and miss", hits);

	CHECK_INT(moat_globset_new(P, &small), 0);
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(defaults); i++)
		CHECK_INT(moat_globset_add(small, defaults[i], &err), (long)i);
	CHECK_INT(moat_globset_build(small), 0);
	/* the shapes of a large generated policy */
	CHECK_INT(moat_globset_new(P, &pure), 0);
	for (int i = 0; i < NG; i++) {
		if (i % 3 == 0)
			snprintf(buf, sizeof(buf), "/home/u/proj/dir%d/**", i / 3);
		else if (i % 3 == 1)
			snprintf(buf, sizeof(buf), "**/name%d.txt", i / 3);
		else
			snprintf(buf, sizeof(buf), "**/*.ext%d", i / 3);
		moat_globset_add(pure, buf, &err);
	}
	CHECK_INT(moat_globset_build(pure), 0);
	t_small = bench(small, subj, NS, &sink);
	t_pure = bench(pure, subj, NS, &sink);
	t_big = bench(set, subj, NS, &sink);
	printf("# globset: %.0f ns/query with %zu default globs; with %d globs: %.0f ns/query "
	       "(%.1fx) for dir/**, name, extension globs, %.0f ns/query (%.1fx) for the mixed "
	       "set above\n",
	       t_small, MOAT_ARRAY_SIZE(defaults), NG, t_pure, t_pure / t_small, t_big,
	       t_big / t_small);
	CHECKF(t_pure < 10 * t_small, "indexed: 10,000 simple globs cost %.1fx of 30",
	       t_pure / t_small);
	/* generous: an unindexed set would be hundreds of times slower */
	CHECKF(t_big < 20 * t_small, "indexed: 10,000 globs cost %.1fx of 30", t_big / t_small);

	for (int i = 0; i < NG; i++)
		moat_glob_free(gl[i]);
	free(gl);
	free(subj);
	moat_globset_free(set);
	moat_globset_free(small);
	moat_globset_free(pure);
}

int main(void)
{
	test_table();
	test_errors();
	test_limits();
	test_linear();
	test_set_order();
	test_set_limit();
	test_set_differential();
	return tap_done();
}
