/* URL parsing and host classification for network policy. Pure: no I/O, no DNS.
 *
 * Parses scheme://[userinfo@]host[:port][/path][?query][#frag] as WHATWG
 * browsers and curl agree on for http(s): userinfo is split off at the LAST
 * '@' before the path, so http://a.com@127.0.0.1/ has host 127.0.0.1.
 * IPv4 hosts in every spelling inet_aton accepts (decimal 2130706433, hex
 * 0x7f.1, octal 0177.0.0.1, short 127.1) are canonicalised to dotted quad;
 * IPv6 in brackets, including IPv4-mapped forms. Hostnames are lower-cased and
 * a trailing dot dropped. */
#ifndef MOAT_CORE_URL_H
#define MOAT_CORE_URL_H

#include <stdbool.h>
#include <stddef.h>

#include <moat/error.h>

#define MOAT_URL_MAX 8192

enum moat_host_class {
	MOAT_HOST_PUBLIC = 0,
	MOAT_HOST_LOOPBACK,	/* localhost, 127/8, ::1, ::ffff:127.x */
	MOAT_HOST_UNSPECIFIED,	/* 0.0.0.0, :: */
	MOAT_HOST_LINK_LOCAL,	/* 169.254/16, fe80::/10 */
	MOAT_HOST_METADATA,	/* 169.254.169.254, fd00:ec2::254, metadata.google.internal */
	MOAT_HOST_PRIVATE,	/* 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7 */
	MOAT_HOST_INTERNAL_NAME, /* *.internal, *.local, *.localhost, single-label names */
};

struct moat_url {
	char scheme[16];
	char host[256];	/* canonical: lower-case name, dotted quad, or IPv6 without brackets */
	int port;	/* explicit or scheme default; -1 if unknown */
	bool host_is_ip;
	bool has_userinfo;
};

int moat_url_parse(const char *s, size_t len, struct moat_url *ret, struct moat_error *err);
enum moat_host_class moat_host_classify(const char *canonical_host, bool is_ip);
const char *moat_host_class_name(enum moat_host_class c);
/* Domain list entry match: "github.com" matches only github.com; ".github.com"
 * and "*.github.com" match github.com and every subdomain. Case-insensitive. */
bool moat_domain_match(const char *host, const char *pattern);

#endif
