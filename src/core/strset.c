/* Literal strings matched together: a trie with failure links (Aho and
 * Corasick, 1975). Each node keeps, per class, the lowest id of the string
 * ending there (own) and of any string that is a suffix of its path (out),
 * so a scan reads the answer off the state it is in. Children are a linked
 * list, the root's a table of 256: most strings share few prefixes. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/strset.h"

#define NONE INT32_MAX

struct node {
	uint32_t child, sibling, fail;
	int32_t own[2], out[2];
	unsigned char byte;
};

struct moat_strset {
	struct node *n;
	size_t nn, cap;
	size_t count, bytes;
	uint32_t root_next[256];
	bool built;
};

static int new_node(struct moat_strset *set, unsigned char byte, uint32_t *ret)
{
	struct node *x;

	if (set->nn >= UINT32_MAX)
		return -E2BIG;
	if (set->nn == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 64;
		struct node *n = realloc(set->n, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		set->n = n;
		set->cap = cap;
	}
	x = &set->n[set->nn];
	memset(x, 0, sizeof(*x));
	x->byte = byte;
	x->own[0] = x->own[1] = x->out[0] = x->out[1] = NONE;
	*ret = (uint32_t)set->nn++;
	return 0;
}

int moat_strset_new(struct moat_strset **ret)
{
	struct moat_strset *set = calloc(1, sizeof(*set));
	uint32_t root;
	int r;

	if (!set)
		return -ENOMEM;
	r = new_node(set, 0, &root);
	if (r < 0) {
		free(set);
		return r;
	}
	*ret = set;
	return 0;
}

struct moat_strset *moat_strset_free(struct moat_strset *set)
{
	if (set) {
		free(set->n);
		free(set);
	}
	return NULL;
}

size_t moat_strset_count(const struct moat_strset *set)
{
	return set ? set->count : 0;
}

/* The child of node u by byte b, or 0 (the root is no one's child). */
static uint32_t child(const struct moat_strset *set, uint32_t u, unsigned char b)
{
	for (uint32_t c = set->n[u].child; c; c = set->n[c].sibling)
		if (set->n[c].byte == b)
			return c;
	return 0;
}

int moat_strset_add(struct moat_strset *set, const char *s, size_t len, long id, unsigned cls)
{
	uint32_t u = 0;

	if (!set || cls > 1 || id < 0 || id >= NONE || (len && !s))
		return -EINVAL;
	if (len > (size_t)INT32_MAX - set->bytes)
		return -E2BIG;
	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)s[i];
		uint32_t c = child(set, u, b);

		if (!c) {
			int r = new_node(set, b, &c);

			if (r < 0)
				return r;
			set->n[c].sibling = set->n[u].child;
			set->n[u].child = c;
		}
		u = c;
	}
	if ((int32_t)id < set->n[u].own[cls])
		set->n[u].own[cls] = (int32_t)id;
	set->count++;
	set->bytes += len;
	set->built = false;
	return 0;
}

int moat_strset_build(struct moat_strset *set)
{
	uint32_t *queue;
	size_t head = 0, tail = 0;

	if (!set)
		return -EINVAL;
	queue = malloc(set->nn * sizeof(*queue));
	if (!queue)
		return -ENOMEM;
	memset(set->root_next, 0, sizeof(set->root_next));
	set->n[0].fail = 0;
	set->n[0].out[0] = set->n[0].own[0];
	set->n[0].out[1] = set->n[0].own[1];
	for (uint32_t c = set->n[0].child; c; c = set->n[c].sibling) {
		set->root_next[set->n[c].byte] = c;
		set->n[c].fail = 0;
		queue[tail++] = c;
	}
	while (head < tail) {
		uint32_t u = queue[head++];
		struct node *x = &set->n[u];

		for (int k = 0; k < 2; k++) {
			int32_t f = set->n[x->fail].out[k];

			x->out[k] = x->own[k] < f ? x->own[k] : f;
		}
		for (uint32_t c = x->child; c; c = set->n[c].sibling) {
			unsigned char b = set->n[c].byte;
			uint32_t f = x->fail, g;

			while (f && !child(set, f, b))
				f = set->n[f].fail;
			g = f ? child(set, f, b) : set->root_next[b];
			set->n[c].fail = g != c ? g : 0;
			queue[tail++] = c;
		}
	}
	free(queue);
	set->built = true;
	return 0;
}

static int32_t pick(const int32_t v[2], unsigned mask)
{
	int32_t a = (mask & MOAT_STRSET_CLASS0) ? v[0] : NONE;
	int32_t b = (mask & MOAT_STRSET_CLASS1) ? v[1] : NONE;

	return a < b ? a : b;
}

long moat_strset_first_in(const struct moat_strset *set, const char *s, size_t len,
			  unsigned mask)
{
	int32_t best;
	uint32_t u = 0;

	if (!set || !set->built || set->count == 0)
		return -1;
	best = pick(set->n[0].out, mask);
	for (size_t i = 0; i < len && best > 0; i++) {
		unsigned char b = (unsigned char)s[i];
		uint32_t c = 0;

		while (u && !(c = child(set, u, b)))
			u = set->n[u].fail;
		if (!u)
			c = set->root_next[b];
		u = c;
		if (u) {
			int32_t v = pick(set->n[u].out, mask);

			if (v < best)
				best = v;
		}
	}
	return best == NONE ? -1 : best;
}

long moat_strset_first_prefix(const struct moat_strset *set, const char *s, size_t len,
			      unsigned mask)
{
	int32_t best = NONE;
	uint32_t u = 0;

	if (!set || !set->built || set->count == 0)
		return -1;
	for (size_t d = 0;; d++) {
		int32_t v = pick(set->n[u].own, mask);

		if (v < best && (d == len || s[d] == ' ' || (d > 0 && s[d - 1] == ' ')))
			best = v;
		if (d == len)
			break;
		u = u ? child(set, u, (unsigned char)s[d]) : set->root_next[(unsigned char)s[d]];
		if (!u)
			break;
	}
	return best == NONE ? -1 : best;
}
