/* URL parser and host classification: every IPv4 spelling, IPv6 forms,
 * userinfo tricks, ambiguous URLs that must be refused, limits at the
 * boundary, classification and domain matching. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "core/url.h"
#include "tap.h"

struct parse_row {
	const char *url;
	const char *scheme;
	const char *host;
	int port;
	bool is_ip;
	bool userinfo;
};

static const struct parse_row ok_rows[] = {
    {"http://example.com/", "http", "example.com", 80, false, false},
    {"HTTPS://Example.COM:8443/x?y#z", "https", "example.com", 8443, false, false},
    {"http://example.com.", "http", "example.com", 80, false, false},
    {"http://example.com:/", "http", "example.com", 80, false, false},
    {"http://example.com:0080/", "http", "example.com", 80, false, false},
    {"http://example.com:65535/", "http", "example.com", 65535, false, false},
    {"http://example.com:0/", "http", "example.com", 0, false, false},
    {"ws://h.example/", "ws", "h.example", 80, false, false},
    {"wss://h.example/", "wss", "h.example", 443, false, false},
    {"ftp://h.example/f", "ftp", "h.example", 21, false, false},
    {"gopher://h.example:70/", "gopher", "h.example", 70, false, false},
    {"git+ssh://git@github.com/x", "git+ssh", "github.com", -1, false, true},
    {"file:///etc/passwd", "file", "", -1, false, false},
    {"file://localhost/etc/passwd", "file", "localhost", -1, false, false},
    {"file:/etc/passwd", "file", "", -1, false, false},
    {"mailto:someone@example.com", "mailto", "", -1, false, false},
    {"http://ex%41mple.com/", "http", "example.com", 80, false, false},
    /* IPv4 in every inet_aton spelling */
    {"http://127.0.0.1/", "http", "127.0.0.1", 80, true, false},
    {"http://2130706433/", "http", "127.0.0.1", 80, true, false},
    {"http://0x7f000001/", "http", "127.0.0.1", 80, true, false},
    {"http://0X7F000001/", "http", "127.0.0.1", 80, true, false},
    {"http://0177.0.0.1/", "http", "127.0.0.1", 80, true, false},
    {"http://0177.0000.0000.0001/", "http", "127.0.0.1", 80, true, false},
    {"http://127.1/", "http", "127.0.0.1", 80, true, false},
    {"http://127.0.1/", "http", "127.0.0.1", 80, true, false},
    {"http://0x7f.1/", "http", "127.0.0.1", 80, true, false},
    {"http://0x7f.0.0.0x1/", "http", "127.0.0.1", 80, true, false},
    {"http://017700000001/", "http", "127.0.0.1", 80, true, false},
    {"http://127.0.0.1./", "http", "127.0.0.1", 80, true, false},
    {"http://0/", "http", "0.0.0.0", 80, true, false},
    {"http://0x/", "http", "0.0.0.0", 80, true, false},
    {"http://4294967295/", "http", "255.255.255.255", 80, true, false},
    {"http://169.254.43518/", "http", "169.254.169.254", 80, true, false},
    {"http://%31%32%37.0.0.1/", "http", "127.0.0.1", 80, true, false},
    {"http://0x7f.example.com/", "http", "0x7f.example.com", 80, false, false},
    {"http://1.2.3.com/", "http", "1.2.3.com", 80, false, false},
    /* look-alike Unicode folded as UTS #46 would */
    {"http://\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97.0.0.1/", "http", "127.0.0.1", 80, true,
     false}, /* fullwidth 127 */
    {"http://127\xe3\x80\x82"
     "0\xe3\x80\x82"
     "0\xe3\x80\x82"
     "1/",
     "http", "127.0.0.1", 80, true, false}, /* ideographic full stops */
    {"http://\xe2\x91\xa0\xe2\x91\xa1\xe2\x91\xa6.0.0.1/", "http", "127.0.0.1", 80, true,
     false}, /* circled digits */
    {"http://\xef\xbd\x8c\xef\xbd\x8f\xef\xbd\x83\xef\xbd\x81\xef\xbd\x8c"
     "host/",
     "http", "localhost", 80, false, false},				     /* fullwidth "local" */
    {"http://\xe2\x85\xbcocalhost/", "http", "localhost", 80, false, false}, /* roman numeral l */
    {"http://\xf0\x9d\x90\xa5ocalhost/", "http", "localhost", 80, false, false}, /* math bold l */
    {"http://\xe2\x84\xaaube.local/", "http", "kube.local", 80, false, false},	 /* Kelvin sign */
    {"http://loc\xc2\xad"
     "alhost/",
     "http", "localhost", 80, false, false}, /* soft hyphen */
    {"http://b\xc3\xbc"
     "cher.example/",
     "http",
     "b\xc3\xbc"
     "cher.example",
     80, false, false},
    /* IPv6 */
    {"http://[::1]/", "http", "::1", 80, true, false},
    {"http://[::]/", "http", "::", 80, true, false},
    {"http://[0:0:0:0:0:0:0:1]:8080/", "http", "::1", 8080, true, false},
    {"http://[2001:DB8:0:0:1:0:0:1]/", "http", "2001:db8::1:0:0:1", 80, true, false},
    {"http://[2001:db8::]/", "http", "2001:db8::", 80, true, false},
    {"http://[1:0:0:2::3]/", "http", "1:0:0:2::3", 80, true, false},
    {"http://[1:0:0:2:0:0:0:3]/", "http", "1:0:0:2::3", 80, true, false},
    {"http://[1:0:0:2:0:0:3:4]/", "http", "1::2:0:0:3:4", 80, true, false},
    {"http://[1:0:2:0:3:0:4:0]/", "http", "1:0:2:0:3:0:4:0", 80, true, false},
    {"http://[1:2:3:4:5:6:7:8]/", "http", "1:2:3:4:5:6:7:8", 80, true, false},
    {"http://[1::]/", "http", "1::", 80, true, false},
    {"http://[::ffff:127.0.0.1]/", "http", "::ffff:7f00:1", 80, true, false},
    {"http://[::ffff:7f00:1]/", "http", "::ffff:7f00:1", 80, true, false},
    {"http://[::127.0.0.1]/", "http", "::7f00:1", 80, true, false},
    {"http://[64:ff9b::169.254.169.254]/", "http", "64:ff9b::a9fe:a9fe", 80, true, false},
    {"http://[fe80::1%25eth0]/", "http", "fe80::1", 80, true, false},
    {"http://[fe80::1%eth0]/", "http", "fe80::1", 80, true, false},
    {"http://[fd00:ec2::254]/", "http", "fd00:ec2::254", 80, true, false},
    /* userinfo: split at the last '@' of the authority */
    {"http://a.com@127.0.0.1/", "http", "127.0.0.1", 80, true, true},
    {"http://a.com:80@169.254.169.254/", "http", "169.254.169.254", 80, true, true},
    {"http://user:p@ss@10.0.0.1/", "http", "10.0.0.1", 80, true, true},
    {"http://127.0.0.1#@a.com/", "http", "127.0.0.1", 80, true, false},
    {"http://127.0.0.1?@a.com/", "http", "127.0.0.1", 80, true, false},
    {"http://127.0.0.1/@a.com/", "http", "127.0.0.1", 80, true, false},
    {"http://@example.com/", "http", "example.com", 80, false, true},
    {"http://u:p@[::1]:81/", "http", "::1", 81, true, true},
    {"http://a%40b@example.com/", "http", "example.com", 80, false, true},
};

struct bad_row {
	const char *url;
	const char *msg; /* substring of the error message */
};

static const struct bad_row bad_rows[] = {
    {"", "empty url"},
    {"example.com/x", "missing scheme"},
    {"//example.com/", "missing scheme"},
    {"127.0.0.1:80/", "missing scheme"},
    {"localhost:8080/x", "ambiguous"},
    {"example.com:443", "ambiguous"},
    {"averyveryverylongscheme://x/", "scheme longer"},
    {"http:example.com", "ambiguous"},
    {"http:/example.com", "ambiguous"},
    {"http:\\\\example.com", "ambiguous"},
    {"http:///example.com", "empty host"},
    {"http://", "empty host"},
    {"https://:80/", "empty host"},
    {"http://user@/", "empty host"},
    {"http://evil.com\\@127.0.0.1/", "backslash"},
    {"http://evil.com\\.127.0.0.1/", "backslash"},
    {"http://exa mple.com/", "space in host"},
    {"http://example.com%20/", "space in host"},
    {"http://exa\tmple.com/", "control character"},
    {"http://example.com/\n", "control character"},
    {"http://example.com/\x7f", "control character"},
    {"http://ex%zzample.com/", "percent-escape"},
    {"http://ex%4/", "percent-escape"},
    {"http://ex%/", "percent-escape"},
    {"http://ex%00ample.com/", "control character in host"},
    {"http://127.0.0.1%2f.evil.com/", "invalid character"},
    {"http://a.com%40127.0.0.1/", "invalid character"},
    {"http://\xef\xbc\x8f"
     "x.com/",
     "invalid character"}, /* fullwidth solidus */
    {"http://\xff.com/", "utf-8"},
    {"http://example.com:65536/", "port out of range"},
    {"http://example.com:99999999999999999999/", "port out of range"},
    {"http://example.com:-1/", "invalid port"},
    {"http://example.com:8a/", "invalid port"},
    {"http://a:b:c/", "brackets"},
    {"http://::1/", "brackets"},
    /* numeric-looking hosts that are not IPv4 are errors, never names */
    {"http://1.2.3.4.5/", "invalid ipv4"},
    {"http://256.0.0.1/", "invalid ipv4"},
    {"http://127.0.0.256/", "invalid ipv4"},
    {"http://4294967296/", "invalid ipv4"},
    {"http://127.16777216/", "invalid ipv4"},
    {"http://08.0.0.1/", "invalid ipv4"},
    {"http://0x1g.0.0.1/", "invalid ipv4"},
    {"http://a.0x100000000/", "invalid ipv4"},
    {"http://1..2/", "empty label"},
    {"http://.example.com/", "empty label"},
    {"http://example.com../", "empty label"},
    {"http://[::1/", "unterminated"},
    {"http://[::1]x/", "after ipv6"},
    {"http://[::1]:99999/", "port out of range"},
    {"http://[1::2::3]/", "invalid ipv6"},
    {"http://[1:2:3:4:5:6:7:8:9]/", "invalid ipv6"},
    {"http://[::ffff:127.0.0.01]/", "invalid ipv6"},
    {"http://[::ffff:256.0.0.1]/", "invalid ipv6"},
    {"http://[12345::]/", "invalid ipv6"},
    {"http://[1:]/", "invalid ipv6"},
    {"http://[g::]/", "invalid ipv6"},
    {"http://[]/", "invalid ipv6"},
    {"http://[fe80::1%25]/", "zone"},
    {"http://[fe80::1%25a!b]/", "zone"},
    {"http://[fe80::1%25a/b]/", "unterminated"},
};

/* printable form of a test input for the TAP line */
static const char *show(const char *s)
{
	static char buf[512];
	size_t o = 0;

	for (; *s && o + 5 < sizeof(buf); s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return buf;
}

static void test_parse(void)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(ok_rows); i++) {
		const struct parse_row *r = &ok_rows[i];
		struct moat_url u;
		struct moat_error e;
		int rc;

		moat_error_clear(&e);
		rc = moat_url_parse(r->url, strlen(r->url), &u, &e);
		if (!CHECKF(rc == 0, "parse %s (%s)", show(r->url), e.msg))
			continue;
		CHECKF(strcmp(u.scheme, r->scheme) == 0, "%s scheme %s (got %s)", r->url, r->scheme,
		       u.scheme);
		CHECKF(strcmp(u.host, r->host) == 0, "%s host %s (got %s)", r->url, r->host,
		       u.host);
		CHECKF(u.port == r->port, "%s port %d (got %d)", r->url, r->port, u.port);
		CHECKF(u.host_is_ip == r->is_ip, "%s is_ip %d", r->url, r->is_ip);
		CHECKF(u.has_userinfo == r->userinfo, "%s userinfo %d", r->url, r->userinfo);
	}
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(bad_rows); i++) {
		const struct bad_row *r = &bad_rows[i];
		struct moat_url u;
		struct moat_error e;
		int rc;

		memset(&u, 0x5a, sizeof(u));
		moat_error_clear(&e);
		rc = moat_url_parse(r->url, strlen(r->url), &u, &e);
		CHECKF(rc == -EINVAL && strstr(e.msg, r->msg), "refuse %s: want '%s', got %d '%s'",
		       show(r->url), r->msg, rc, e.msg);
		CHECKF(((unsigned char *)&u)[0] == 0x5a, "%s: output untouched on failure",
		       show(r->url));
	}
}

static void test_nul_and_limits(void)
{
	struct moat_url u;
	struct moat_error e;
	char *big;
	size_t n;

	CHECK(moat_url_parse("http://a.com\0@127.0.0.1/", 24, &u, &e) == -EINVAL);
	CHECK(strstr(e.msg, "nul") != NULL);
	CHECK(moat_url_parse(NULL, 0, &u, &e) == -EINVAL);
	CHECK(moat_url_parse("http://a.com/", 13, &u, NULL) == 0); /* err may be NULL */
	CHECK(moat_url_parse("http://", 7, &u, NULL) == -EINVAL);

	/* MOAT_URL_MAX accepted, one more refused */
	big = malloc(MOAT_URL_MAX + 2);
	memcpy(big, "http://a.com/", 13);
	memset(big + 13, 'x', MOAT_URL_MAX + 1 - 13);
	big[MOAT_URL_MAX + 1] = '\0';
	CHECK_INT(moat_url_parse(big, MOAT_URL_MAX, &u, &e), 0);
	CHECK_INT(moat_url_parse(big, MOAT_URL_MAX + 1, &u, &e), -EINVAL);
	CHECK(strstr(e.msg, "longer than") != NULL);

	/* host of 255 bytes accepted, 256 refused */
	memcpy(big, "http://", 7);
	for (n = 0; n < 255; n++)
		big[7 + n] = (n % 64 == 63) ? '.' : 'a';
	memcpy(big + 7 + 255, "/", 2);
	CHECK_INT(moat_url_parse(big, strlen(big), &u, &e), 0);
	CHECK_INT(strlen(u.host), 255);
	big[7 + 255] = 'a';
	memcpy(big + 7 + 256, "/", 2);
	CHECK_INT(moat_url_parse(big, strlen(big), &u, &e), -EINVAL);
	CHECK(strstr(e.msg, "host longer") != NULL);
	/* a percent-encoded host far over the decode buffer */
	memcpy(big, "http://", 7);
	for (n = 0; n < 2000; n++)
		memcpy(big + 7 + 3 * n, "%61", 3);
	memcpy(big + 7 + 6000, "/", 2);
	CHECK_INT(moat_url_parse(big, strlen(big), &u, &e), -EINVAL);
	/* scheme of 15 bytes fits, 16 does not */
	CHECK_INT(moat_url_parse("abcdefghijklmno://h.example/", 28, &u, &e), 0);
	CHECK_INT(moat_url_parse("abcdefghijklmnop://h.example/", 29, &u, &e), -EINVAL);
	free(big);
}

struct class_row {
	const char *url;
	enum moat_host_class c;
};

static const struct class_row class_rows[] = {
    {"http://example.com/", MOAT_HOST_PUBLIC},
    {"http://8.8.8.8/", MOAT_HOST_PUBLIC},
    {"http://[2606:4700::1111]/", MOAT_HOST_PUBLIC},
    {"http://localhost/", MOAT_HOST_LOOPBACK},
    {"http://LOCALHOST./", MOAT_HOST_LOOPBACK},
    {"http://app.localhost/", MOAT_HOST_LOOPBACK},
    {"http://localhost.localdomain/", MOAT_HOST_LOOPBACK},
    {"http://ip6-localhost/", MOAT_HOST_LOOPBACK},
    {"http://127.0.0.1/", MOAT_HOST_LOOPBACK},
    {"http://127.255.255.254/", MOAT_HOST_LOOPBACK},
    {"http://2130706433/", MOAT_HOST_LOOPBACK},
    {"http://0x7f000001/", MOAT_HOST_LOOPBACK},
    {"http://0177.0.0.1/", MOAT_HOST_LOOPBACK},
    {"http://127.1/", MOAT_HOST_LOOPBACK},
    {"http://[::1]/", MOAT_HOST_LOOPBACK},
    {"http://[::ffff:127.0.0.1]/", MOAT_HOST_LOOPBACK},
    {"http://[::ffff:7f00:1]/", MOAT_HOST_LOOPBACK},
    {"http://[::127.0.0.1]/", MOAT_HOST_LOOPBACK},
    {"http://[::ffff:0:127.0.0.1]/", MOAT_HOST_LOOPBACK},
    {"http://[64:ff9b::127.0.0.1]/", MOAT_HOST_LOOPBACK},
    {"http://[2002:7f00:1::]/", MOAT_HOST_LOOPBACK},
    {"http://\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97.0.0.1/", MOAT_HOST_LOOPBACK},
    {"http://0.0.0.0/", MOAT_HOST_UNSPECIFIED},
    {"http://0/", MOAT_HOST_UNSPECIFIED},
    {"http://[::]/", MOAT_HOST_UNSPECIFIED},
    {"http://[::ffff:0.0.0.0]/", MOAT_HOST_UNSPECIFIED},
    {"http://169.254.1.1/", MOAT_HOST_LINK_LOCAL},
    {"http://[fe80::1%25eth0]/", MOAT_HOST_LINK_LOCAL},
    {"http://[febf::1]/", MOAT_HOST_LINK_LOCAL},
    {"http://169.254.169.254/", MOAT_HOST_METADATA},
    {"http://169.254.43518/", MOAT_HOST_METADATA},
    {"http://2852039166/", MOAT_HOST_METADATA},
    {"http://a.com:80@169.254.169.254/", MOAT_HOST_METADATA},
    {"http://169.254.170.2/v2/credentials", MOAT_HOST_METADATA},
    {"http://100.100.100.200/", MOAT_HOST_METADATA},
    {"http://[fd00:ec2::254]/", MOAT_HOST_METADATA},
    {"http://[::ffff:169.254.169.254]/", MOAT_HOST_METADATA},
    {"http://[64:ff9b::a9fe:a9fe]/", MOAT_HOST_METADATA},
    {"http://metadata.google.internal/", MOAT_HOST_METADATA},
    {"http://metadata/", MOAT_HOST_METADATA},
    {"http://10.1.2.3/", MOAT_HOST_PRIVATE},
    {"http://172.16.0.1/", MOAT_HOST_PRIVATE},
    {"http://172.31.255.255/", MOAT_HOST_PRIVATE},
    {"http://172.32.0.1/", MOAT_HOST_PUBLIC},
    {"http://172.15.255.255/", MOAT_HOST_PUBLIC},
    {"http://192.168.1.1/", MOAT_HOST_PRIVATE},
    {"http://100.64.0.1/", MOAT_HOST_PRIVATE},
    {"http://100.127.255.255/", MOAT_HOST_PRIVATE},
    {"http://100.128.0.1/", MOAT_HOST_PUBLIC},
    {"http://[fc00::1]/", MOAT_HOST_PRIVATE},
    {"http://[fdff::1]/", MOAT_HOST_PRIVATE},
    {"http://[::ffff:10.0.0.1]/", MOAT_HOST_PRIVATE},
    {"http://255.255.255.255/", MOAT_HOST_PRIVATE},
    {"http://db.internal/", MOAT_HOST_INTERNAL_NAME},
    {"http://printer.local/", MOAT_HOST_INTERNAL_NAME},
    {"http://nas.lan/", MOAT_HOST_INTERNAL_NAME},
    {"http://router.home.arpa/", MOAT_HOST_INTERNAL_NAME},
    {"http://wiki.intranet/", MOAT_HOST_INTERNAL_NAME},
    {"http://jenkins/", MOAT_HOST_INTERNAL_NAME},
    {"http://internal.example.com/", MOAT_HOST_PUBLIC},
    {"http://localhost.example.com/", MOAT_HOST_PUBLIC},
    /* DNS names that resolve to loopback are public by name (no DNS here) */
    {"http://127.0.0.1.nip.io/", MOAT_HOST_PUBLIC},
};

static void test_classify(void)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(class_rows); i++) {
		struct moat_url u;

		if (!CHECKF(
			moat_url_parse(class_rows[i].url, strlen(class_rows[i].url), &u, NULL) == 0,
			"parse %s", class_rows[i].url))
			continue;
		CHECKF(moat_host_classify(u.host, u.host_is_ip) == class_rows[i].c,
		       "classify %s = %s (got %s)", class_rows[i].url,
		       moat_host_class_name(class_rows[i].c),
		       moat_host_class_name(moat_host_classify(u.host, u.host_is_ip)));
	}
	/* raw, non-canonical input from a config is classified as what it is */
	CHECK(moat_host_classify("0x7f.1", false) == MOAT_HOST_LOOPBACK);
	CHECK(moat_host_classify("[::1]", false) == MOAT_HOST_LOOPBACK);
	CHECK(moat_host_classify("LocalHost", false) == MOAT_HOST_LOOPBACK);
	CHECK(moat_host_classify("1.2.3.4.5", false) == MOAT_HOST_INTERNAL_NAME);
	CHECK(moat_host_classify("", false) == MOAT_HOST_LOOPBACK);
	CHECK(moat_host_classify(NULL, false) == MOAT_HOST_INTERNAL_NAME);
	CHECK_STR(moat_host_class_name(MOAT_HOST_METADATA), "metadata");
	CHECK_STR(moat_host_class_name(MOAT_HOST_INTERNAL_NAME), "internal_name");
	CHECK_STR(moat_host_class_name((enum moat_host_class)99), "unknown");
}

static void test_domain_match(void)
{
	static const struct {
		const char *host, *pattern;
		bool match;
	} rows[] = {
	    {"github.com", "github.com", true},
	    {"GitHub.COM", "github.com", true},
	    {"github.com", "GITHUB.com.", true},
	    {"api.github.com", "github.com", false},
	    {"github.com", ".github.com", true},
	    {"api.github.com", ".github.com", true},
	    {"a.b.github.com", ".github.com", true},
	    {"evilgithub.com", ".github.com", false},
	    {"evilgithub.com", "*.github.com", false},
	    {"evilgithub.com", "github.com", false},
	    {"github.com.evil.com", ".github.com", false},
	    {"github.com", "*.github.com", true},
	    {"api.github.com", "*.github.com", true},
	    {"api.github.com.", "*.github.com", true},
	    {"anything.example", "*", true},
	    {"github.com", "", false},
	    {"", "github.com", false},
	    {"github.com", ".", false},
	    {"github.com", "*.", false},
	    {"127.0.0.1", "127.0.0.1", true},
	    {"127.0.0.10", "127.0.0.1", false},
	    {"om", ".github.com", false},
	};

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(rows); i++)
		CHECKF(moat_domain_match(rows[i].host, rows[i].pattern) == rows[i].match,
		       "domain_match(%s, %s) == %d", rows[i].host, rows[i].pattern, rows[i].match);
	CHECK(!moat_domain_match(NULL, "x"));
	CHECK(!moat_domain_match("x", NULL));
}

/* Every canonical host parses back to itself. */
static void test_canonical_fixpoint(void)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(ok_rows); i++) {
		struct moat_url u, v;
		char buf[400];

		if (moat_url_parse(ok_rows[i].url, strlen(ok_rows[i].url), &u, NULL) < 0 ||
		    !u.host[0])
			continue;
		snprintf(buf, sizeof(buf), strchr(u.host, ':') ? "%s://[%s]/" : "%s://%s/",
			 u.scheme, u.host);
		CHECKF(moat_url_parse(buf, strlen(buf), &v, NULL) == 0 &&
			   strcmp(u.host, v.host) == 0 && u.host_is_ip == v.host_is_ip,
		       "canonical %s re-parses to itself", buf);
	}
}

int main(void)
{
	test_parse();
	test_nul_and_limits();
	test_classify();
	test_domain_match();
	test_canonical_fixpoint();
	return tap_done();
}
