/* The check of the workspace scan once the masks are attached
 * (scancheck.c): every directory the scan relied on is still the one it
 * read, unchanged, so that no secret moved in a race with the preparation
 * is left unmasked. Internal to the sandbox layer. */
#ifndef MOAT_SANDBOX_SCANCHECK_H
#define MOAT_SANDBOX_SCANCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

struct moat_mounts;
struct moat_child_report;

/* One directory the scan relied on (listed, or found unchanged through a
 * record): its identity and change times taken before its entries were. */
struct moat_scan_dir {
	char *rel;     /* below the workspace; "" for the workspace */
	size_t parent; /* index of the directory holding it; SIZE_MAX: none */
	dev_t dev;
	ino_t ino;
	struct timespec ct, mt;
	/* its ctime was older than the clock that stamps changes when it was
	 * taken (or moat made the last change itself): any later change gives
	 * it another. Else (a ctime in the future, after a clock step) it is
	 * relied on only while it is still in the future */
	bool settled;
	bool covered; /* under a mask: nothing of it is visible, not checked */
};

struct moat_scan_check {
	char *ws;		 /* the workspace (absolute) */
	struct moat_scan_dir *v; /* in the order the scan met them */
	size_t n, cap;
	/* made by moat_scan_check_cover: the directories parents first, each
	 * subtree in one run (order[pos[i]] == i, the subtree of i ending
	 * before end[i]); kids[first[i] .. first[i + 1]) the children of i */
	size_t *order, *pos, *end, *first, *kids;
	size_t root; /* the workspace's index (SIZE_MAX: none) */
	bool sorted;
	bool failed; /* out of memory: the check refuses */
};

struct moat_scan_check *moat_scan_check_new(const char *ws);
void moat_scan_check_free(struct moat_scan_check *c);
/* One more directory, in the one of index parent (SIZE_MAX for the
 * workspace): its index, or SIZE_MAX on no memory (the check then
 * refuses). */
size_t moat_scan_check_add(struct moat_scan_check *c, size_t parent, const char *rel,
			   const struct stat *st, bool settled);
/* Put in order (parents first, in linear time); the directories under a
 * mask of m (and not under a path brought back into one) marked covered. */
void moat_scan_check_cover(struct moat_scan_check *c, const struct moat_mounts *m);

/* The directory dfd (rel below the workspace) is about to be changed by
 * moat itself (an empty stand-in made in it): 0 when it is as the scan
 * saw it, -ESTALE when not. moat_scan_check_retake then takes its times
 * again once moat's changes are made. */
int moat_scan_check_unchanged_at(const struct moat_scan_check *c, const char *rel, int dfd);
void moat_scan_check_retake(struct moat_scan_check *c, const char *rel, int dfd);

/* Every directory not covered still the one the scan relied on, each
 * looked up by its name in its parent's descriptor (or, its parent not
 * open, by its path beneath the workspace), no link followed, in the
 * caller's mount namespace: 0, or -ESTALE with the path of the first that
 * is not in why. No allocation (it runs in the sandbox's child between its
 * mounts and its exec). */
int moat_scan_check_verify(const struct moat_scan_check *c, char *why, size_t whysz);
/* The same in the child, after its mounts: a failure is reported as the
 * mount step's ESTALE (the runner then prepares again). */
int moat_scan_check_child(const struct moat_mounts *m, struct moat_child_report *rep);

bool moat_ts_before(const struct timespec *a, const struct timespec *b);
/* fstat of a directory about to be listed, taken once its ctime is older
 * than the coarse clock read just before (one changed in the current
 * tick waited out, a few times); *settled false when it kept changing or
 * its ctime is in the future. -1 when fstat fails. */
int moat_scan_fstat_settled(int fd, struct stat *st, bool *settled);

/* An O_PATH descriptor of rel below the directory wsfd, no link followed
 * on the way or at its end (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, one
 * component at a time where openat2 is missing); -errno. No allocation. */
int moat_open_beneath(int wsfd, const char *rel, bool dir);

#endif
