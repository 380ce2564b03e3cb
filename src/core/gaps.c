/* Accepted gaps: the protections a user lets a run go without, one by one
 * (sandbox.accept_gaps in the user's configuration, `moat run
 * --accept-gap NAME`). A set of protections is a bit mask of enum
 * moat_feature; the names are the plan's own (moat_feature_name), the ones
 * `moat status`, the refusal and the audit record's "missing" use.
 *
 * Pure and allocation-free. An unknown name is an error for the caller to
 * refuse (never ignored: a misspelt acceptance must not silently leave the
 * protection required while the user believes otherwise, nor the other way
 * round). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/plan.h"

_Static_assert(MOAT_FEAT__COUNT <= 32, "a gap set is a 32-bit mask");

int moat_feature_by_name(const char *name, size_t len)
{
	for (int f = 0; f < MOAT_FEAT__COUNT; f++) {
		const char *n = moat_feature_name((enum moat_feature)f);

		if (strlen(n) == len && !memcmp(n, name, len))
			return f;
	}
	return -1;
}

int moat_parse_gap_list(const char *s, unsigned *set, const char **bad, size_t *badlen)
{
	const char *p = s;

	if (!*s) {
		*bad = s;
		*badlen = 0;
		return -EINVAL;
	}
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int f = moat_feature_by_name(p, len);

		if (f < 0) {
			*bad = p;
			*badlen = len;
			return -EINVAL;
		}
		*set |= 1u << f;
		if (!end)
			return 0;
		p = end + 1;
	}
}

size_t moat_gap_set_names(unsigned set, const char *sep, char *out, size_t outsz)
{
	size_t n = 0, o = 0;

	if (out && outsz)
		out[0] = '\0';
	for (int f = 0; f < MOAT_FEAT__COUNT; f++) {
		if (!(set & (1u << f)))
			continue;
		if (out && o < outsz) {
			int w = snprintf(out + o, outsz - o, "%s%s", n ? sep : "",
					 moat_feature_name((enum moat_feature)f));
			if (w > 0)
				o += (size_t)w;
		}
		n++;
	}
	return n;
}

unsigned moat_plan_gap_set(const struct moat_plan *p)
{
	unsigned set = 0;

	for (int f = 0; f < MOAT_FEAT__COUNT; f++)
		if (p->feat[f].requested && !p->feat[f].enforced)
			set |= 1u << f;
	return set;
}
