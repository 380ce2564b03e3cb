/* Literal string sets: the first string occurring in a subject, the first
 * starting it at a word boundary, classes, and a cross-check against a
 * plain search over random strings and subjects. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strset.h"
#include "tap.h"

static struct moat_strset *make(const char *const *v, size_t n, const unsigned *cls)
{
	struct moat_strset *s = NULL;

	CHECK(moat_strset_new(&s) == 0);
	for (size_t i = 0; i < n; i++)
		CHECK(moat_strset_add(s, v[i], strlen(v[i]), (long)i, cls ? cls[i] : 0) == 0);
	CHECK(moat_strset_build(s) == 0);
	return s;
}

static long in(const struct moat_strset *s, const char *t, unsigned mask)
{
	return moat_strset_first_in(s, t, strlen(t), mask);
}

static long pre(const struct moat_strset *s, const char *t, unsigned mask)
{
	return moat_strset_first_prefix(s, t, strlen(t), mask);
}

static void basics(void)
{
	static const char *const v[] = {"DROP TABLE", "git push", "rm .*", "push", "he", "she", "hers"};
	struct moat_strset *s = make(v, sizeof(v) / sizeof(v[0]), NULL);

	CHECK_INT(in(s, "psql -c DROP TABLE users", MOAT_STRSET_ALL), 0);
	CHECK_INT(in(s, "psql -c drop table users", MOAT_STRSET_ALL), -1);
	CHECK_INT(in(s, "git push origin", MOAT_STRSET_ALL), 1);
	CHECK_INT(in(s, "git pushx", MOAT_STRSET_ALL), 1);
	CHECK_INT(in(s, "x push", MOAT_STRSET_ALL), 3);
	CHECK_INT(in(s, "echo rm .*", MOAT_STRSET_ALL), 2);
	CHECK_INT(in(s, "ushers", MOAT_STRSET_ALL), 4); /* he, she, hers: the lowest id */
	CHECK_INT(in(s, "ushe", MOAT_STRSET_ALL), 4);
	CHECK_INT(in(s, "", MOAT_STRSET_ALL), -1);
	CHECK_INT(in(s, "git push", MOAT_STRSET_CLASS1), -1);
	CHECK_INT(moat_strset_count(s), 7);
	moat_strset_free(s);
}

static void prefixes(void)
{
	static const char *const v[] = {"git status", "git ", "npm test", "ls"};
	static const unsigned cls[] = {1, 1, 1, 0};
	struct moat_strset *s = make(v, 4, cls);

	CHECK_INT(pre(s, "git status", MOAT_STRSET_CLASS1), 0);
	CHECK_INT(pre(s, "git status --short", MOAT_STRSET_CLASS1), 0);
	CHECK_INT(pre(s, "git statusx", MOAT_STRSET_CLASS1), 1); /* "git " ends in a space */
	CHECK_INT(pre(s, "echo git status", MOAT_STRSET_CLASS1), -1);
	CHECK_INT(pre(s, "npm testx", MOAT_STRSET_CLASS1), -1);
	CHECK_INT(pre(s, "npm test -- a", MOAT_STRSET_CLASS1), 2);
	CHECK_INT(pre(s, "ls -la", MOAT_STRSET_CLASS1), -1); /* class 0 */
	CHECK_INT(pre(s, "ls -la", MOAT_STRSET_CLASS0), 3);
	CHECK_INT(pre(s, "lsblk", MOAT_STRSET_ALL), -1);
	CHECK_INT(in(s, "x; git status", MOAT_STRSET_CLASS1), 0);
	moat_strset_free(s);
	/* an empty set, a set not built */
	CHECK(moat_strset_new(&s) == 0);
	CHECK(moat_strset_build(s) == 0);
	CHECK_INT(in(s, "abc", MOAT_STRSET_ALL), -1);
	CHECK_INT(pre(s, "abc", MOAT_STRSET_ALL), -1);
	CHECK(moat_strset_add(s, "a", 1, 0, 2) == -EINVAL);
	CHECK(moat_strset_add(s, "a", 1, -1, 0) == -EINVAL);
	CHECK(moat_strset_add(s, "a", 1, 5, 0) == 0);
	CHECK_INT(in(s, "abc", MOAT_STRSET_ALL), -1); /* added after build: not built */
	CHECK(moat_strset_build(s) == 0);
	CHECK_INT(in(s, "abc", MOAT_STRSET_ALL), 5);
	moat_strset_free(s);
	moat_strset_free(NULL);
}

/* the automaton against a plain search, over a small alphabet so that
 * strings overlap and share prefixes and suffixes */
static void random_crosscheck(void)
{
	unsigned seed = 20;
	int bad = 0;

	for (int round = 0; round < 300; round++) {
		char strs[24][8], subj[64];
		unsigned cls[24];
		size_t n = 1 + (size_t)(rand_r(&seed) % 24), sl = (size_t)(rand_r(&seed) % 63);
		struct moat_strset *s = NULL;

		if (moat_strset_new(&s) < 0)
			return;
		for (size_t i = 0; i < n; i++) {
			size_t l = 1 + (size_t)(rand_r(&seed) % 5);

			for (size_t k = 0; k < l; k++)
				strs[i][k] = " ab"[rand_r(&seed) % 3];
			strs[i][l] = '\0';
			cls[i] = (unsigned)(rand_r(&seed) % 2);
			moat_strset_add(s, strs[i], l, (long)i, cls[i]);
		}
		moat_strset_build(s);
		for (size_t k = 0; k < sl; k++)
			subj[k] = " ab"[rand_r(&seed) % 3];
		subj[sl] = '\0';
		for (unsigned mask = 1; mask <= 3; mask++) {
			long want_in = -1, want_pre = -1;

			for (size_t i = 0; i < n; i++) {
				size_t l = strlen(strs[i]);

				if (!(mask & (1u << cls[i])))
					continue;
				if (want_in < 0 && strstr(subj, strs[i]))
					want_in = (long)i;
				if (want_pre < 0 && !strncmp(subj, strs[i], l) &&
				    (l == sl || subj[l] == ' ' || strs[i][l - 1] == ' '))
					want_pre = (long)i;
			}
			bad += in(s, subj, mask) != want_in;
			bad += pre(s, subj, mask) != want_pre;
		}
		moat_strset_free(s);
	}
	CHECKF(bad == 0, "the automaton agrees with a plain search (%d disagreements)", bad);
}

int main(void)
{
	basics();
	prefixes();
	random_crosscheck();
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
