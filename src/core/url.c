/* URL parsing and host classification for network policy.
 *
 * The policy decides on the host a URL names, so this parser must read a URL
 * the way the program that later fetches it will. Where browsers (WHATWG) and
 * curl disagree, or where a URL only works through lenient repair, it refuses
 * the URL instead of guessing: a refused URL is a DENY, a mis-read one is a
 * bypass. Pure: no I/O, no DNS, no allocation; it never prints.
 *
 * Host handling follows the WHATWG host parser: percent-decode, then ASCII
 * lower-case, then "ends in a number" hosts must parse as IPv4 in one of the
 * inet_aton spellings or the URL is invalid (so 0x7f.1 and 2130706433 are
 * 127.0.0.1 and 1.2.3.4.5 is an error, never a name). Full IDNA is not done;
 * a small table folds the compatibility characters most used to hide
 * addresses (fullwidth forms, ideographic dots, circled and mathematical
 * digits, invisible joiners) as UTS #46 would, and any other non-ASCII host
 * is kept as it is. */
#include "core/url.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/str.h"

/* Decoded host bytes before folding; longer hosts are refused. */
#define URL_HOST_DECODE_MAX 1024
/* Longest zone id accepted in an IPv6 literal ("%25eth0"). */
#define URL_ZONE_MAX 64

static bool is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static unsigned char to_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* WHATWG forbidden domain code points, ASCII part (controls checked apart). */
static bool is_forbidden_host_char(unsigned char c)
{
	return c == ' ' || c == '#' || c == '%' || c == '/' || c == ':' || c == '<' || c == '>' ||
	       c == '?' || c == '@' || c == '[' || c == '\\' || c == ']' || c == '^' || c == '|';
}

/* ---- IPv4 ---- */

/* One inet_aton part: 0x.. hex, 0.. octal, else decimal. Values beyond 32
 * bits saturate so the caller's range check fails. */
static int ipv4_part(const char *s, size_t n, uint64_t *ret)
{
	uint64_t v = 0;
	unsigned base = 10;
	size_t i = 0;

	if (n == 0)
		return -EINVAL;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (n >= 2 && s[0] == '0') {
		base = 8;
		i = 1;
	}
	for (; i < n; i++) {
		int d = moat_hexval((unsigned char)s[i]);

		if (d < 0 || (unsigned)d >= base)
			return -EINVAL;
		v = v * base + (unsigned)d;
		if (v > 0xffffffffull)
			v = 0x100000000ull;
	}
	*ret = v;
	return 0;
}

/* Parse every inet_aton spelling: 1-4 parts, the last filling the rest. */
static int ipv4_parse(const char *s, size_t n, uint32_t *ret)
{
	uint64_t parts[4];
	size_t np = 0, start = 0;
	uint64_t v;

	if (n > 0 && s[n - 1] == '.')
		n--;
	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (np == 4)
			return -EINVAL;
		if (ipv4_part(s + start, i - start, &parts[np]) < 0)
			return -EINVAL;
		np++;
		start = i + 1;
	}
	for (size_t i = 0; i + 1 < np; i++)
		if (parts[i] > 255)
			return -EINVAL;
	if (parts[np - 1] >= (1ull << (8 * (5 - np))))
		return -EINVAL;
	v = parts[np - 1];
	for (size_t i = 0; i + 1 < np; i++)
		v += parts[i] << (8 * (3 - i));
	*ret = (uint32_t)v;
	return 0;
}

/* WHATWG "ends in a number": the last label is all digits or 0x + hex. Such
 * a host must be an IPv4 address; otherwise the URL is invalid. */
static bool ends_in_number(const char *s, size_t n)
{
	size_t i;

	if (n > 0 && s[n - 1] == '.')
		n--;
	i = n;
	while (i > 0 && s[i - 1] != '.')
		i--;
	if (i == n)
		return false;
	if (n - i >= 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		for (size_t k = i + 2; k < n; k++)
			if (moat_hexval((unsigned char)s[k]) < 0)
				return false;
		return true;
	}
	for (size_t k = i; k < n; k++)
		if (!is_digit((unsigned char)s[k]))
			return false;
	return true;
}

static void ipv4_format(uint32_t a, char *out, size_t outsz)
{
	snprintf(out, outsz, "%u.%u.%u.%u", (a >> 24) & 255, (a >> 16) & 255, (a >> 8) & 255,
		 a & 255);
}

/* ---- IPv6 (WHATWG IPv6 parser) ---- */

static int ipv6_parse(const char *s, size_t n, uint16_t pieces[8])
{
	size_t p = 0;
	int idx = 0, compress = -1;

	memset(pieces, 0, 8 * sizeof(pieces[0]));
	if (n == 0)
		return -EINVAL;
	if (s[0] == ':') {
		if (n < 2 || s[1] != ':')
			return -EINVAL;
		p = 2;
		idx = 1;
		compress = 1;
	}
	while (p < n) {
		unsigned value = 0, length = 0;

		if (idx == 8)
			return -EINVAL;
		if (s[p] == ':') {
			if (compress != -1)
				return -EINVAL;
			p++;
			idx++;
			compress = idx;
			continue;
		}
		while (length < 4 && p < n && moat_hexval((unsigned char)s[p]) >= 0) {
			value = value * 16 + (unsigned)moat_hexval((unsigned char)s[p]);
			p++;
			length++;
		}
		if (p < n && s[p] == '.') {
			int seen = 0;

			if (length == 0)
				return -EINVAL;
			p -= length;
			if (idx > 6)
				return -EINVAL;
			while (p < n) {
				int piece = -1;

				if (seen > 0) {
					if (s[p] == '.' && seen < 4)
						p++;
					else
						return -EINVAL;
				}
				if (p >= n || !is_digit((unsigned char)s[p]))
					return -EINVAL;
				while (p < n && is_digit((unsigned char)s[p])) {
					int d = s[p] - '0';

					if (piece == -1)
						piece = d;
					else if (piece == 0)
						return -EINVAL;
					else
						piece = piece * 10 + d;
					if (piece > 255)
						return -EINVAL;
					p++;
				}
				pieces[idx] = (uint16_t)(pieces[idx] * 0x100 + piece);
				seen++;
				if (seen == 2 || seen == 4)
					idx++;
			}
			if (seen != 4)
				return -EINVAL;
			break;
		} else if (p < n && s[p] == ':') {
			p++;
			if (p >= n)
				return -EINVAL;
		} else if (p < n) {
			return -EINVAL;
		}
		pieces[idx] = (uint16_t)value;
		idx++;
	}
	if (compress != -1) {
		int swaps = idx - compress;

		idx = 7;
		while (idx != 0 && swaps > 0) {
			uint16_t t = pieces[idx];

			pieces[idx] = pieces[compress + swaps - 1];
			pieces[compress + swaps - 1] = t;
			idx--;
			swaps--;
		}
	} else if (idx != 8) {
		return -EINVAL;
	}
	return 0;
}

/* WHATWG serialisation: lower-case hex, the first longest run of two or more
 * zero pieces compressed to "::". */
static void ipv6_format(const uint16_t pieces[8], char *out, size_t outsz)
{
	int best = -1, best_len = 1;
	size_t o = 0;

	for (int i = 0; i < 8;) {
		int j = i;

		while (j < 8 && pieces[j] == 0)
			j++;
		if (j - i > best_len) {
			best = i;
			best_len = j - i;
		}
		i = j > i ? j : i + 1;
	}
	out[0] = '\0';
	for (int i = 0; i < 8; i++) {
		int w;

		if (i == best) {
			w = snprintf(out + o, outsz - o, "::");
			o += (size_t)w;
			i += best_len - 1;
			continue;
		}
		w = snprintf(out + o, outsz - o, "%x%s", pieces[i],
			     (i < 7 && i + 1 != best) ? ":" : "");
		o += (size_t)w;
	}
}

/* ---- Unicode folding of host look-alikes ---- */

#define FOLD_KEEP (-1)
#define FOLD_DROP (-2)

/* The part of UTS #46 mapping that turns non-ASCII spellings into ASCII
 * host syntax: returns the ASCII character, FOLD_DROP for code points the
 * mapping deletes, FOLD_KEEP for everything else. */
static int fold_cp(uint32_t cp)
{
	/* single letters that NFKC makes of letter-like symbols */
	static const struct {
		uint32_t cp;
		char c;
	} letterlike[] = {
	    {0x00aa, 'a'}, {0x00ba, 'o'}, {0x017f, 's'}, {0x2102, 'c'}, {0x210a, 'g'},
	    {0x210b, 'h'}, {0x210c, 'h'}, {0x210d, 'h'}, {0x210e, 'h'}, {0x2110, 'i'},
	    {0x2111, 'i'}, {0x2112, 'l'}, {0x2113, 'l'}, {0x2115, 'n'}, {0x2119, 'p'},
	    {0x211a, 'q'}, {0x211b, 'r'}, {0x211c, 'r'}, {0x211d, 'r'}, {0x2124, 'z'},
	    {0x2128, 'z'}, {0x212a, 'k'}, {0x212c, 'b'}, {0x212d, 'c'}, {0x212f, 'e'},
	    {0x2130, 'e'}, {0x2131, 'f'}, {0x2133, 'm'}, {0x2134, 'o'}, {0x2139, 'i'},
	    {0x2160, 'i'}, {0x2164, 'v'}, {0x2169, 'x'}, {0x216c, 'l'}, {0x216d, 'c'},
	    {0x216e, 'd'}, {0x216f, 'm'}, {0x2170, 'i'}, {0x2174, 'v'}, {0x2179, 'x'},
	    {0x217c, 'l'}, {0x217d, 'c'}, {0x217e, 'd'}, {0x217f, 'm'},
	};

	if (cp >= 0xff01 && cp <= 0xff5e) /* fullwidth ASCII, incl. U+FF0E '.' */
		return (int)(cp - 0xfee0);
	if (cp >= 0x2460 && cp <= 0x2468) /* circled 1-9 */
		return (int)('1' + (cp - 0x2460));
	if (cp >= 0x24b6 && cp <= 0x24cf) /* circled A-Z */
		return (int)('a' + (cp - 0x24b6));
	if (cp >= 0x24d0 && cp <= 0x24e9) /* circled a-z */
		return (int)('a' + (cp - 0x24d0));
	if (cp >= 0x2074 && cp <= 0x2079) /* superscript 4-9 */
		return (int)('4' + (cp - 0x2074));
	if (cp >= 0x2080 && cp <= 0x2089) /* subscript 0-9 */
		return (int)('0' + (cp - 0x2080));
	if (cp >= 0x1d7ce && cp <= 0x1d7ff) /* mathematical digits, five styles */
		return (int)('0' + (cp - 0x1d7ce) % 10);
	if (cp >= 0x1d400 && cp <= 0x1d6a3) /* mathematical letters, A-Z a-z per style */
		return (int)('a' + (cp - 0x1d400) % 52 % 26);
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(letterlike); i++)
		if (letterlike[i].cp == cp)
			return letterlike[i].c;
	if (cp >= 0xfe00 && cp <= 0xfe0f) /* variation selectors */
		return FOLD_DROP;
	if (cp >= 0x200b && cp <= 0x200d)
		return FOLD_DROP;
	switch (cp) {
	case 0x24ea: /* circled 0 */
	case 0x2070: /* superscript 0 */
		return '0';
	case 0x00b9:
		return '1';
	case 0x00b2:
		return '2';
	case 0x00b3:
		return '3';
	case 0x3002: /* ideographic full stop */
	case 0xff61: /* halfwidth ideographic full stop */
	case 0xfe52: /* small full stop */
	case 0x2024: /* one dot leader */
		return '.';
	case 0x00ad: /* soft hyphen */
	case 0x034f:
	case 0x180b:
	case 0x180c:
	case 0x180d:
	case 0x2060:
	case 0xfeff:
		return FOLD_DROP;
	default:
		return FOLD_KEEP;
	}
}

/* Decode one UTF-8 sequence already known valid; returns its length. */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		*cp = ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
		return 2;
	}
	if ((s[0] & 0xf0) == 0xe0) {
		*cp = ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) |
		      (s[2] & 0x3f);
		return 3;
	}
	*cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
	      ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
	return 4;
}

static int check_host_byte(unsigned char c, struct moat_error *err)
{
	if (c < 0x20 || c == 0x7f) {
		moat_error_set(err, "control character in host");
		return -EINVAL;
	}
	if (c == ' ') {
		moat_error_set(err, "space in host");
		return -EINVAL;
	}
	if (is_forbidden_host_char(c)) {
		moat_error_set(err, "invalid character '%c' in host", c);
		return -EINVAL;
	}
	return 0;
}

/* Turn the raw host of an authority into its canonical form. */
static int host_canon(const char *raw, size_t n, struct moat_url *u, struct moat_error *err)
{
	char dec[URL_HOST_DECODE_MAX];
	char out[sizeof(u->host)];
	size_t dn = 0, on = 0;
	bool ascii = true;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)raw[i];

		if (c == '%') {
			int hi = i + 2 < n ? moat_hexval((unsigned char)raw[i + 1]) : -1;
			int lo = i + 2 < n ? moat_hexval((unsigned char)raw[i + 2]) : -1;

			if (hi < 0 || lo < 0) {
				moat_error_set(err, "invalid percent-escape in host");
				return -EINVAL;
			}
			c = (unsigned char)(hi * 16 + lo);
			i += 2;
		}
		if (dn == sizeof(dec)) {
			moat_error_set(err, "host longer than %zu bytes", sizeof(u->host) - 1);
			return -EINVAL;
		}
		if (c >= 0x80)
			ascii = false;
		dec[dn++] = (char)c;
	}
	if (!ascii && !moat_utf8_valid(dec, dn)) {
		moat_error_set(err, "invalid utf-8 in host");
		return -EINVAL;
	}
	/* SECURITY: every character is checked after decoding and folding, so
	 * %2f, %40 or a fullwidth solidus cannot smuggle a delimiter into the
	 * host that another parser would split on. */
	for (size_t i = 0; i < dn;) {
		uint32_t cp;
		size_t k = utf8_decode((const unsigned char *)dec + i, &cp);
		int f = cp < 0x80 ? (int)cp : fold_cp(cp);

		if (f == FOLD_DROP) {
			i += k;
			continue;
		}
		if (f >= 0) {
			int r = check_host_byte((unsigned char)f, err);

			if (r < 0)
				return r;
			if (on + 1 >= sizeof(out))
				goto too_long;
			out[on++] = (char)to_lower((unsigned char)f);
		} else {
			if (on + k >= sizeof(out))
				goto too_long;
			memcpy(out + on, dec + i, k);
			on += k;
		}
		i += k;
	}
	if (on > 0 && out[on - 1] == '.')
		on--;
	out[on] = '\0';
	if (on > 0 && (out[0] == '.' || strstr(out, "..") || out[on - 1] == '.')) {
		moat_error_set(err, "empty label in host");
		return -EINVAL;
	}
	u->host_is_ip = false;
	if (ends_in_number(out, on)) {
		uint32_t a;

		if (ipv4_parse(out, on, &a) < 0) {
			moat_error_set(err, "invalid ipv4 address '%s'", out);
			return -EINVAL;
		}
		ipv4_format(a, u->host, sizeof(u->host));
		u->host_is_ip = true;
		return 0;
	}
	memcpy(u->host, out, on + 1);
	return 0;
too_long:
	moat_error_set(err, "host longer than %zu bytes", sizeof(u->host) - 1);
	return -EINVAL;
}

static int ipv6_literal(const char *s, size_t n, struct moat_url *u, struct moat_error *err)
{
	uint16_t pieces[8];
	const char *pct = memchr(s, '%', n);

	if (pct) {
		size_t zi = (size_t)(pct - s) + 1, zn;

		if (zi + 2 <= n && pct[1] == '2' && pct[2] == '5')
			zi += 2;
		zn = n - zi;
		if (zn == 0 || zn > URL_ZONE_MAX) {
			moat_error_set(err, "invalid ipv6 zone id");
			return -EINVAL;
		}
		for (size_t i = zi; i < n; i++) {
			unsigned char c = (unsigned char)s[i];

			if (!is_alpha(c) && !is_digit(c) && c != '.' && c != '_' && c != '~' &&
			    c != '-') {
				moat_error_set(err, "invalid ipv6 zone id");
				return -EINVAL;
			}
		}
		n = (size_t)(pct - s);
	}
	if (ipv6_parse(s, n, pieces) < 0) {
		moat_error_set(err, "invalid ipv6 address");
		return -EINVAL;
	}
	ipv6_format(pieces, u->host, sizeof(u->host));
	u->host_is_ip = true;
	return 0;
}

static int parse_port(const char *s, size_t n, int def, int *ret, struct moat_error *err)
{
	long v = 0;

	if (n == 0) {
		*ret = def;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (!is_digit((unsigned char)s[i])) {
			moat_error_set(err, "invalid port");
			return -EINVAL;
		}
		v = v * 10 + (s[i] - '0');
		if (v > 65535) {
			moat_error_set(err, "port out of range");
			return -EINVAL;
		}
	}
	*ret = (int)v;
	return 0;
}

static int default_port(const char *scheme)
{
	static const struct {
		const char *name;
		int port;
	} tab[] = {
	    {"http", 80}, {"https", 443}, {"ws", 80}, {"wss", 443}, {"ftp", 21},
	};

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(tab); i++)
		if (strcmp(scheme, tab[i].name) == 0)
			return tab[i].port;
	return -1;
}

/* Schemes whose URLs must name a host (WHATWG special schemes but file). */
static bool needs_host(const char *scheme)
{
	return default_port(scheme) > 0;
}

int moat_url_parse(const char *s, size_t len, struct moat_url *ret, struct moat_error *err)
{
	struct moat_url u;
	const char *rest, *auth, *end, *hp, *at = NULL;
	size_t sn = 0, rn, an, hn;
	int r;

	memset(&u, 0, sizeof(u));
	u.port = -1;
	if (!s || !ret) {
		moat_error_set(err, "no url given");
		return -EINVAL;
	}
	if (len == 0) {
		moat_error_set(err, "empty url");
		return -EINVAL;
	}
	if (len > MOAT_URL_MAX) {
		moat_error_set(err, "url longer than %d bytes", MOAT_URL_MAX);
		return -EINVAL;
	}
	/* SECURITY: fetchers strip or stop at control characters (WHATWG
	 * removes tab and newline anywhere), so the text we check would not be
	 * the URL they fetch. */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f) {
			moat_error_set(err, c ? "control character in url" : "nul byte in url");
			return -EINVAL;
		}
	}

	/* scheme */
	if (!is_alpha((unsigned char)s[0])) {
		moat_error_set(err, "missing scheme");
		return -EINVAL;
	}
	while (sn < len && (is_alpha((unsigned char)s[sn]) || is_digit((unsigned char)s[sn]) ||
			    s[sn] == '+' || s[sn] == '-' || s[sn] == '.'))
		sn++;
	if (sn == len || s[sn] != ':') {
		moat_error_set(err, "missing scheme");
		return -EINVAL;
	}
	if (sn >= sizeof(u.scheme)) {
		moat_error_set(err, "scheme longer than %zu bytes", sizeof(u.scheme) - 1);
		return -EINVAL;
	}
	for (size_t i = 0; i < sn; i++)
		u.scheme[i] = (char)to_lower((unsigned char)s[i]);
	u.scheme[sn] = '\0';
	rest = s + sn + 1;
	rn = len - sn - 1;

	if (rn < 2 || rest[0] != '/' || rest[1] != '/') {
		/* SECURITY: browsers repair "http:host", "http:/host" and
		 * "http:\\host" into http://host; curl does not. Refuse. */
		if (needs_host(u.scheme)) {
			moat_error_set(err, "ambiguous url: expected '//' after '%s:'", u.scheme);
			return -EINVAL;
		}
		if (strcmp(u.scheme, "file") != 0) {
			size_t k = 0;

			/* "localhost:8080/x" has the syntax of scheme
			 * "localhost", but curl and people read host:port. */
			while (k < rn && is_digit((unsigned char)rest[k]))
				k++;
			if (k > 0 &&
			    (k == rn || rest[k] == '/' || rest[k] == '?' || rest[k] == '#')) {
				moat_error_set(err, "ambiguous url: looks like host:port without a "
						    "scheme");
				return -EINVAL;
			}
		}
		u.host[0] = '\0';
		*ret = u;
		return 0;
	}

	auth = rest + 2;
	end = auth;
	while (end < s + len && *end != '/' && *end != '?' && *end != '#')
		end++;
	an = (size_t)(end - auth);
	/* SECURITY: WHATWG ends the authority of http(s) at '\', curl does
	 * not: http://evil.com\@127.0.0.1/ names two different hosts. */
	if (memchr(auth, '\\', an)) {
		moat_error_set(err, "ambiguous url: backslash in authority");
		return -EINVAL;
	}
	for (const char *p = auth; p < end; p++)
		if (*p == '@')
			at = p;
	if (at) {
		u.has_userinfo = true;
		hp = at + 1;
	} else {
		hp = auth;
	}
	hn = (size_t)(end - hp);

	u.port = default_port(u.scheme);
	if (hn > 0 && hp[0] == '[') {
		const char *rb = memchr(hp, ']', hn);

		if (!rb) {
			moat_error_set(err, "unterminated ipv6 literal");
			return -EINVAL;
		}
		r = ipv6_literal(hp + 1, (size_t)(rb - hp - 1), &u, err);
		if (r < 0)
			return r;
		if (rb + 1 < end) {
			if (rb[1] != ':') {
				moat_error_set(err, "invalid characters after ipv6 literal");
				return -EINVAL;
			}
			r = parse_port(rb + 2, (size_t)(end - rb - 2), u.port, &u.port, err);
			if (r < 0)
				return r;
		}
	} else {
		const char *colon = memchr(hp, ':', hn);
		size_t hostn = colon ? (size_t)(colon - hp) : hn;

		if (colon) {
			if (memchr(colon + 1, ':', (size_t)(end - colon - 1))) {
				moat_error_set(err, "ipv6 address must be in brackets");
				return -EINVAL;
			}
			r = parse_port(colon + 1, (size_t)(end - colon - 1), u.port, &u.port, err);
			if (r < 0)
				return r;
		}
		r = host_canon(hp, hostn, &u, err);
		if (r < 0)
			return r;
	}
	if (u.host[0] == '\0' && needs_host(u.scheme)) {
		moat_error_set(err, "empty host in %s url", u.scheme);
		return -EINVAL;
	}
	*ret = u;
	return 0;
}

/* ---- classification ---- */

static enum moat_host_class classify_v4(uint32_t a)
{
	static const uint32_t metadata[] = {
	    0xa9fea9feu, /* 169.254.169.254: AWS, GCP, Azure, OCI, ... */
	    0xa9feaa02u, /* 169.254.170.2: AWS ECS task credentials */
	    0xa9feaa17u, /* 169.254.170.23: AWS EKS pod identity */
	    0x646464c8u, /* 100.100.100.200: Alibaba Cloud */
	    0xa83f8110u, /* 168.63.129.16: Azure wire server */
	};
	static const struct {
		uint32_t net, mask;
		enum moat_host_class c;
	} nets[] = {
	    {0x00000000u, 0xff000000u, MOAT_HOST_UNSPECIFIED}, /* 0/8 "this network" */
	    {0x7f000000u, 0xff000000u, MOAT_HOST_LOOPBACK},
	    {0xa9fe0000u, 0xffff0000u, MOAT_HOST_LINK_LOCAL},
	    {0x0a000000u, 0xff000000u, MOAT_HOST_PRIVATE},
	    {0xac100000u, 0xfff00000u, MOAT_HOST_PRIVATE},
	    {0xc0a80000u, 0xffff0000u, MOAT_HOST_PRIVATE},
	    {0x64400000u, 0xffc00000u, MOAT_HOST_PRIVATE}, /* 100.64/10 CGNAT */
	    {0xc0000000u, 0xffffff00u, MOAT_HOST_PRIVATE}, /* 192.0.0/24 IETF */
	    {0xc6120000u, 0xfffe0000u, MOAT_HOST_PRIVATE}, /* 198.18/15 benchmarking */
	    {0xe0000000u, 0xf0000000u, MOAT_HOST_PRIVATE}, /* 224/4 multicast */
	    {0xf0000000u, 0xf0000000u, MOAT_HOST_PRIVATE}, /* 240/4 reserved, broadcast */
	};

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(metadata); i++)
		if (a == metadata[i])
			return MOAT_HOST_METADATA;
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(nets); i++)
		if ((a & nets[i].mask) == nets[i].net)
			return nets[i].c;
	return MOAT_HOST_PUBLIC;
}

static uint32_t v4_at(const uint16_t *p)
{
	return ((uint32_t)p[0] << 16) | p[1];
}

static enum moat_host_class classify_v6(const uint16_t p[8])
{
	bool z0_4 = !p[0] && !p[1] && !p[2] && !p[3];

	/* SECURITY: addresses that embed an IPv4 address reach that address
	 * (mapped, compatible, SIIT, NAT64), so they are what it is. */
	if (z0_4 && !p[4] && !p[5] && !p[6] && !p[7])
		return MOAT_HOST_UNSPECIFIED;
	if (z0_4 && !p[4] && !p[5] && !p[6] && p[7] == 1)
		return MOAT_HOST_LOOPBACK;
	if (z0_4 && !p[4] && (p[5] == 0xffff || p[5] == 0)) /* ::ffff:a.b.c.d, ::a.b.c.d */
		return classify_v4(v4_at(p + 6));
	if (z0_4 && p[4] == 0xffff && !p[5]) /* ::ffff:0:a.b.c.d SIIT */
		return classify_v4(v4_at(p + 6));
	if (p[0] == 0x64 && p[1] == 0xff9b && !p[2] && !p[3] && !p[4] && !p[5])
		return classify_v4(v4_at(p + 6));
	if (p[0] == 0x64 && p[1] == 0xff9b && p[2] == 1) /* 64:ff9b:1::/48 local NAT64 */
		return MOAT_HOST_PRIVATE;
	if (p[0] == 0x2002) { /* 6to4 */
		enum moat_host_class c = classify_v4(v4_at(p + 1));

		if (c != MOAT_HOST_PUBLIC)
			return c;
	}
	if (p[0] == 0xfd00 && p[1] == 0x0ec2 && !p[2] && !p[3] && !p[4] && !p[5] && !p[6] &&
	    (p[7] == 0x254 || p[7] == 0x23))
		return MOAT_HOST_METADATA;
	if ((p[0] & 0xffc0) == 0xfe80)
		return MOAT_HOST_LINK_LOCAL;
	if ((p[0] & 0xfe00) == 0xfc00 || (p[0] & 0xffc0) == 0xfec0 || (p[0] & 0xff00) == 0xff00)
		return MOAT_HOST_PRIVATE;
	return MOAT_HOST_PUBLIC;
}

static bool name_eq(const char *h, size_t n, const char *lit)
{
	size_t ln = strlen(lit);

	if (n != ln)
		return false;
	for (size_t i = 0; i < n; i++)
		if (to_lower((unsigned char)h[i]) != (unsigned char)lit[i])
			return false;
	return true;
}

/* h ends with ".suffix" (suffix given with its leading dot) */
static bool name_has_suffix(const char *h, size_t n, const char *suffix)
{
	size_t sl = strlen(suffix);

	return n > sl && name_eq(h + n - sl, sl, suffix);
}

enum moat_host_class moat_host_classify(const char *h, bool is_ip)
{
	static const char *const loopback_names[] = {
	    "localhost",
	    "localhost.localdomain",
	    "ip6-localhost",
	    "ip6-loopback",
	};
	static const char *const metadata_names[] = {
	    "metadata.google.internal",	  "metadata", "metadata.goog", "instance-data",
	    "instance-data.ec2.internal",
	};
	static const char *const internal_suffixes[] = {
	    ".internal", ".local", ".lan", ".home.arpa", ".intranet", ".localdomain",
	};
	size_t n;

	if (!h)
		return MOAT_HOST_INTERNAL_NAME;
	n = strlen(h);
	if (n > 2 && h[0] == '[' && h[n - 1] == ']') {
		h++;
		n -= 2;
	}
	if (n > 0 && h[n - 1] == '.')
		n--;
	/* No host: a file: URL or similar names this machine. */
	if (n == 0)
		return MOAT_HOST_LOOPBACK;
	/* SECURITY: a name that is really an address is classified as the
	 * address whatever the caller said, in every spelling. */
	if (memchr(h, ':', n)) {
		uint16_t p[8];
		const char *pct = memchr(h, '%', n);

		if (ipv6_parse(h, pct ? (size_t)(pct - h) : n, p) < 0)
			return MOAT_HOST_INTERNAL_NAME;
		return classify_v6(p);
	}
	if (is_ip || ends_in_number(h, n)) {
		uint32_t a;

		if (ipv4_parse(h, n, &a) < 0)
			return MOAT_HOST_INTERNAL_NAME;
		return classify_v4(a);
	}
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(metadata_names); i++)
		if (name_eq(h, n, metadata_names[i]))
			return MOAT_HOST_METADATA;
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(loopback_names); i++)
		if (name_eq(h, n, loopback_names[i]))
			return MOAT_HOST_LOOPBACK;
	if (name_has_suffix(h, n, ".localhost"))
		return MOAT_HOST_LOOPBACK;
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(internal_suffixes); i++)
		if (name_has_suffix(h, n, internal_suffixes[i]))
			return MOAT_HOST_INTERNAL_NAME;
	if (!memchr(h, '.', n))
		return MOAT_HOST_INTERNAL_NAME;
	return MOAT_HOST_PUBLIC;
}

const char *moat_host_class_name(enum moat_host_class c)
{
	switch (c) {
	case MOAT_HOST_PUBLIC:
		return "public";
	case MOAT_HOST_LOOPBACK:
		return "loopback";
	case MOAT_HOST_UNSPECIFIED:
		return "unspecified";
	case MOAT_HOST_LINK_LOCAL:
		return "link_local";
	case MOAT_HOST_METADATA:
		return "metadata";
	case MOAT_HOST_PRIVATE:
		return "private";
	case MOAT_HOST_INTERNAL_NAME:
		return "internal_name";
	}
	return "unknown";
}

static bool name_eq_ci(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (to_lower((unsigned char)a[i]) != to_lower((unsigned char)b[i]))
			return false;
	return true;
}

bool moat_domain_match(const char *host, const char *pattern)
{
	size_t hn, pn;

	if (!host || !pattern)
		return false;
	hn = strlen(host);
	pn = strlen(pattern);
	if (hn > 0 && host[hn - 1] == '.')
		hn--;
	if (hn == 0)
		return false;
	if (strcmp(pattern, "*") == 0)
		return true;
	if (pn > 0 && pattern[pn - 1] == '.')
		pn--;
	if (pn == 0)
		return false;
	if (pn >= 2 && pattern[0] == '*' && pattern[1] == '.') {
		pattern++;
		pn--;
	}
	if (pattern[0] == '.') {
		/* ".github.com": the bare domain or any subdomain, and only at
		 * a label boundary, so evilgithub.com does not match. */
		pattern++;
		pn--;
		if (pn == 0)
			return false;
		if (hn == pn)
			return name_eq_ci(host, pattern, pn);
		return hn > pn && host[hn - pn - 1] == '.' &&
		       name_eq_ci(host + hn - pn, pattern, pn);
	}
	return hn == pn && name_eq_ci(host, pattern, pn);
}
