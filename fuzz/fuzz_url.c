/* Fuzz the URL parser: it never crashes or reads out of bounds, a parsed
 * URL's canonical host parses back to itself, and classification and domain
 * matching accept whatever the parser produced. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/url.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct moat_url u, v;
	struct moat_error e;
	char buf[sizeof(u.scheme) + sizeof(u.host) + 16];
	int n;

	if (moat_url_parse((const char *)data, size, &u, &e) < 0)
		return 0;
	(void)moat_host_class_name(moat_host_classify(u.host, u.host_is_ip));
	(void)moat_domain_match(u.host, ".github.com");
	(void)moat_domain_match("github.com", u.host);
	if (!u.host[0])
		return 0;
	n = snprintf(buf, sizeof(buf), strchr(u.host, ':') ? "%s://[%s]/" : "%s://%s/", u.scheme,
		     u.host);
	if (n < 0 || (size_t)n >= sizeof(buf))
		abort();
	if (moat_url_parse(buf, (size_t)n, &v, &e) < 0 || strcmp(u.host, v.host) != 0 ||
	    u.host_is_ip != v.host_is_ip ||
	    moat_host_classify(u.host, u.host_is_ip) != moat_host_classify(v.host, v.host_is_ip)) {
		fprintf(stderr, "canonical host does not re-parse to itself: '%s'\n", buf);
		abort();
	}
	return 0;
}
