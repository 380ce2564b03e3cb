/* URL parsing and host classification for network policy. Pure: no I/O, no DNS.
 *
 * Parses scheme://[userinfo@]host[:port][/path][?query][#frag] as WHATWG
 * browsers and curl agree on for http(s): userinfo is split off at the LAST
 * '@' before the path, so http://a.com@127.0.0.1/ has host 127.0.0.1.
 * IPv4 hosts in every spelling inet_aton accepts (decimal 2130706433, hex
 * 0x7f.1, octal 0177.0.0.1, short 127.1) are canonicalised to dotted quad;
 * IPv6 in brackets, including IPv4-mapped forms. Hostnames are lower-cased and
 * a trailing dot dropped.
 *
 * Refused with -EINVAL (err->msg says why), because a fetcher could read them
 * differently: control characters or NUL anywhere; a backslash in the
 * authority (http://evil.com\@127.0.0.1/); http(s)/ws(s)/ftp without "//" or
 * with an empty host; "localhost:8080/x" (scheme-less host:port); spaces,
 * bad percent-escapes or delimiters (%2f, %40) in the host; numeric-looking
 * hosts that are not valid IPv4 (1.2.3.4.5, 08.1); ports above 65535; hosts
 * over 255 bytes; URLs over MOAT_URL_MAX. Compatibility characters that
 * UTS #46 maps to ASCII (fullwidth, circled, mathematical) are folded first. */
#ifndef MOAT_CORE_URL_H
#define MOAT_CORE_URL_H

#include <stdbool.h>
#include <stddef.h>

#include <moat/error.h>

#define MOAT_URL_MAX 8192

enum moat_host_class {
	MOAT_HOST_PUBLIC = 0,
	MOAT_HOST_LOOPBACK,	 /* localhost, 127/8, ::1, ::ffff:127.x */
	MOAT_HOST_UNSPECIFIED,	 /* 0.0.0.0, :: */
	MOAT_HOST_LINK_LOCAL,	 /* 169.254/16, fe80::/10 */
	MOAT_HOST_METADATA,	 /* 169.254.169.254, fd00:ec2::254, metadata.google.internal */
	MOAT_HOST_PRIVATE,	 /* 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7 */
	MOAT_HOST_INTERNAL_NAME, /* *.internal, *.local, *.localhost, single-label names */
};

struct moat_url {
	char scheme[16];
	char host[256]; /* canonical: lower-case name, dotted quad, or IPv6 without brackets */
	int port;	/* explicit or scheme default; -1 if unknown */
	bool host_is_ip;
	bool has_userinfo;
};

int moat_url_parse(const char *s, size_t len, struct moat_url *ret, struct moat_error *err);
/* Classify a host. Any address spelling is classified as the address even
 * with is_ip false ("0x7f.1", "[::1]"); IPv4-mapped, compatible, NAT64 and
 * 6to4 IPv6 addresses as their IPv4 address. An empty host (file:///x) is
 * LOOPBACK; a numeric host that is not an address is INTERNAL_NAME. Names
 * are not resolved: 127.0.0.1.nip.io is PUBLIC. */
enum moat_host_class moat_host_classify(const char *canonical_host, bool is_ip);
const char *moat_host_class_name(enum moat_host_class c);
/* Domain list entry match: "github.com" matches only github.com; ".github.com"
 * and "*.github.com" match github.com and every subdomain (never
 * evilgithub.com); "*" matches every host. Case-insensitive, a trailing dot
 * ignored. */
bool moat_domain_match(const char *host, const char *pattern);

#endif
