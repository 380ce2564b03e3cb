/* The workspace scan: every entry below the workspace that a "**"
 * denied-path pattern names (".env", "*.pem", ".ssh" followed by a
 * globstar, ...), wherever it sits, for ns.c to mask.
 *
 * The plain path is the walk below: every directory of the workspace is
 * read, in parallel, and nothing is skipped (docs/sandbox.md: masks). The
 * one shortcut, the record of an earlier scan (a scan ahead in this
 * process, or the record on disk), only ever spares reading a directory
 * whose identity and change times prove it unchanged; it declines
 * (reads) whenever it cannot prove that, and the walk finds the same
 * without it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/keyctl.h>
#include <linux/openat2.h>
#include <time.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/str.h"
#include "core/config.h"
#include "core/glob.h"
#include "core/path.h"
#include "sandbox/sandbox.h"
#include "sandbox/scan.h"
#include "sandbox/scancheck.h"
#include "sandbox/scanlink.h"
/* last: the lookups below are recorded for an armed sandbox's watch */
#include "sandbox/fsrec_wrap.h"


/* A globstar mask whose rest is one name, literal or with '*' and '?' only
 * (most of the defaults: ".env", "*.pem", ".ssh" followed by a globstar):
 * matched against the entry's name without a compiled glob (scan_name_of);
 * the others are compiled before the walk. */
struct scan_name {
	const char *name; /* in the pattern */
	size_t len;
	bool literal;
	/* NAME then a globstar: only a directory NAME (a file has nothing under it) */
	bool dir_only;
	struct name_cut cut;
	/* a wildcard name compiled: matched by character, as the policy does */
	struct moat_glob *g;
};

/* A compiled mask glob's quick test: the pattern's last component (before
 * a trailing globstar) must fit the entry's name, or with a trailing
 * globstar some component of the path (X followed by a globstar matches X
 * and what is below it). '*' and '?' never match '/', so the last
 * component of a match is the name. Off for classes, braces and escapes
 * anywhere in the pattern, and for a globstar as that component. */
struct glob_cut {
	bool on, any;
	bool exact; /* no wildcard in the component */
	size_t nexact;
	struct name_cut cut;
};

static void glob_cut_of(const char *pat, struct glob_cut *g)
{
	size_t n = strlen(pat), k;
	bool stars = true;

	memset(g, 0, sizeof(*g));
	if (strpbrk(pat, "{}[]\\"))
		return;
	if (n > 3 && !strcmp(pat + n - 3, "/**")) {
		n -= 3;
		g->any = true;
	}
	for (k = n; k > 0 && pat[k - 1] != '/'; k--)
		;
	if (k == n)
		return;
	for (size_t i = k; i < n; i++)
		stars = stars && pat[i] == '*';
	if (stars && n - k >= 2)
		return; /* a globstar */
	name_cut_of(pat + k, n - k, &g->cut);
	g->exact = !memchr(pat + k, '*', n - k) && !memchr(pat + k, '?', n - k);
	g->nexact = n - k;
	g->on = true;
}

static bool glob_cut_fits(const struct glob_cut *g, const char *rel, size_t len, const char *name,
			  size_t nl)
{
	if (!g->on)
		return true;
	if (!g->any)
		return g->exact ? nl == g->nexact && !memcmp(name, g->cut.pre, nl)
				: name_cut_fits(&g->cut, name, nl);
	for (size_t i = 0; i < len;) {
		const char *c = rel + i, *slash = memchr(c, '/', len - i);
		size_t cl = slash ? (size_t)(slash - c) : len - i;

		if (g->exact ? cl == g->nexact && !memcmp(c, g->cut.pre, cl)
			     : name_cut_fits(&g->cut, c, cl))
			return true;
		i += cl + 1;
	}
	return false;
}

#define SCAN_AHEAD_MAX_DEVS 16

/* each filesystem met, judged once */
struct scan_devs {
	struct {
		dev_t dev;
		bool local;
	} v[SCAN_AHEAD_MAX_DEVS];
	size_t n;
};


static bool ends_globstar(const char *pat)
{
	size_t n = strlen(pat);

	return n >= 3 && !strcmp(pat + n - 3, "/**");
}

/* A directory, or a link to one (what mask_one would mask as one)? */
static bool is_dir_at(int dfd, const char *name, unsigned char type)
{
	struct stat st;

	if (type == DT_DIR)
		return true;
	if (type != DT_LNK && type != DT_UNKNOWN)
		return false;
	return fstatat(dfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

/* ---- the scan ahead (a session's next shell call) ----
 *
 * A runner started ahead of a session's next shell call scans the
 * workspace while the agent thinks, and keeps, for each directory, its
 * identity and change times and what of it matters to the masks: the
 * entries a mask pattern names (matched, or matched if a directory) and
 * the directories to descend. The call's own scan then reads again only
 * the directories that changed since: any entry added, removed or renamed
 * changes a directory's ctime, which no one can set back (utimes sets it
 * to now), a directory replaced or mounted over has another identity.
 * Directories changed within SCAN_TRUST_SLACK_S of the scan ahead are
 * read again anyway (a change in the same clock tick would leave the time
 * as it was), and so are those with whole-second times; nothing is kept
 * of a directory on a filesystem that is not local (a file server's or a
 * FUSE server's times are not this kernel's), and the scan ahead is not
 * used after the wall clock has stepped. What a matched entry is (a link
 * to a directory or not) is looked at again every time, and every mask is
 * resolved afresh. */
#define SCAN_TRUST_SLACK_S 2
#define SCAN_AHEAD_MAX_DIRS 1000000

/* SCAN_LINK: a link whose name may be a component of a multi-component
 * pattern (scan_link_straddles): what it leads to is looked at by that
 * pattern's rest */
enum { SCAN_PLAIN = 1, SCAN_DIRONLY = 2, SCAN_SUB = 4, SCAN_LINK = 8 };

struct scan_cent {
	char *name;
	unsigned char type, what;
};

struct scan_cdir {
	char *rel;
	dev_t dev;
	ino_t ino;
	struct timespec ct, mt;
	size_t entries; /* all of them, as the scan counts */
	struct scan_cent *ents;
	size_t nents;
};

/* the wall clock stepped (date -s, NTP, a resumed VM) by more than this
 * between the scan ahead and the call: the scan ahead is not used */
#define SCAN_CLOCK_STEP_NS 10000000LL

struct scan_cache {
	char *ws, *key; /* the workspace; its scan patterns, one per line */
	struct scan_cdir *dirs;
	size_t n, cap;
	time_t trust_before;
	long long clock_off; /* CLOCK_REALTIME - CLOCK_BOOTTIME, ns */
	struct scan_devs devs;
	bool failed;
	bool dirty; /* something was read, not taken from an earlier record */
};

static struct scan_cache *scan_ahead;
/* while the scan ahead runs: readable when its call has come (-1: none) */
static int scan_ahead_cancel_fd = -1;

static long long realtime_off(void)
{
	struct timespec rt, bt;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	return (rt.tv_sec - bt.tv_sec) * 1000000000LL + (rt.tv_nsec - bt.tv_nsec);
}

/* A filesystem whose change times are this kernel's own (not a file
 * server's, nor FUSE's, which a process sets at will). */
static bool local_fs(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && moat_fs_local_type((unsigned long)sf.f_type);
}

/* Whether directories of dev (fd one of them) may be kept: every device
 * met in the workspace (a mount inside it, a btrfs subvolume) is judged,
 * not only the workspace's own. */
static bool scan_dev_local(struct scan_devs *t, int fd, dev_t dev)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].dev == dev)
			return t->v[i].local;
	if (t->n == SCAN_AHEAD_MAX_DEVS)
		return false;
	t->v[t->n].dev = dev;
	t->v[t->n].local = local_fs(fd);
	return t->v[t->n++].local;
}

static void scan_cdir_release(struct scan_cdir *d)
{
	for (size_t k = 0; k < d->nents; k++)
		free(d->ents[k].name);
	free(d->ents);
	free(d->rel);
	memset(d, 0, sizeof(*d));
}

/* Keep rec (taken over: released when it cannot be kept). */
static void scan_rec_push(struct scan_cache *k, struct scan_cdir *rec)
{
	if (k->n == k->cap && k->n < SCAN_AHEAD_MAX_DIRS) {
		size_t cap = k->cap ? k->cap * 2 : 64;
		struct scan_cdir *v;

		/* (a record of more is refused when loaded) */
		if (cap > SCAN_AHEAD_MAX_DIRS)
			cap = SCAN_AHEAD_MAX_DIRS;
		v = realloc(k->dirs, cap * sizeof(*v));

		if (v) {
			k->dirs = v;
			k->cap = cap;
		}
	}
	if (rec->rel && k->n < k->cap) {
		k->dirs[k->n++] = *rec;
		memset(rec, 0, sizeof(*rec));
		return;
	}
	scan_cdir_release(rec); /* (not kept: read again next time) */
}

/* A record taken unchanged from an earlier one, kept again. */
static void scan_rec_copy(struct scan_cache *k, const struct scan_cdir *c)
{
	struct scan_cdir d = *c;

	d.rel = moat_strdup(c->rel);
	d.ents = c->nents ? calloc(c->nents, sizeof(*d.ents)) : NULL;
	d.nents = 0;
	if (!d.rel || (c->nents && !d.ents)) {
		scan_cdir_release(&d);
		k->failed = true;
		return;
	}
	for (; d.nents < c->nents; d.nents++) {
		d.ents[d.nents] = c->ents[d.nents];
		d.ents[d.nents].name = moat_strdup(c->ents[d.nents].name);
		if (!d.ents[d.nents].name) {
			scan_cdir_release(&d);
			k->failed = true;
			return;
		}
	}
	scan_rec_push(k, &d);
}

static void scan_cdir_release(struct scan_cdir *d);

static void scan_cache_free(struct scan_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		scan_cdir_release(&c->dirs[i]);
	free(c->dirs);
	free(c->ws);
	free(c->key);
	free(c);
}

static int cdir_cmp(const void *a, const void *b)
{
	return strcmp(((const struct scan_cdir *)a)->rel, ((const struct scan_cdir *)b)->rel);
}

/* The record of the directory rel, whatever it says, or NULL. */
static const struct scan_cdir *scan_cache_get(const struct scan_cache *c, const char *rel)
{
	struct scan_cdir key;

	key.rel = (char *)rel;
	return bsearch(&key, c->dirs, c->n, sizeof(key), cdir_cmp);
}

/* The record of the directory rel when it still holds: same identity and
 * times, old enough to be trusted. */
static const struct scan_cdir *scan_cache_find(const struct scan_cache *c, const char *rel,
					       const struct stat *st)
{
	const struct scan_cdir *d = scan_cache_get(c, rel);

	if (!d || d->dev != st->st_dev || d->ino != st->st_ino ||
	    d->ct.tv_sec != st->st_ctim.tv_sec || d->ct.tv_nsec != st->st_ctim.tv_nsec ||
	    d->mt.tv_sec != st->st_mtim.tv_sec || d->mt.tv_nsec != st->st_mtim.tv_nsec ||
	    d->ct.tv_sec >= c->trust_before || d->mt.tv_sec >= c->trust_before ||
	    /* whole seconds only (ext4 with small inodes, ext2/3): never */
	    d->ct.tv_nsec == 0 || d->mt.tv_nsec == 0)
		return NULL;
	return d;
}

/* The scan's compiled globs, kept for the process's life: a session's
 * runner scans the same workspace with the same patterns ahead of the
 * call, to arm its sandbox, and for the call (one compilation is most of
 * a scan of a small workspace). Not thread-safe, like the runner. */
#define GLOB_CACHE_MAX 64
static struct {
	char *pat;
	struct moat_glob *g;
} glob_cache[GLOB_CACHE_MAX];
static size_t nglob_cache;

static bool glob_is_cached(const struct moat_glob *g)
{
	for (size_t i = 0; i < nglob_cache; i++)
		if (glob_cache[i].g == g)
			return true;
	return false;
}

static int glob_compile_cached(const char *pat, struct moat_glob **ret, struct moat_error *err)
{
	char *dup;

	for (size_t i = 0; i < nglob_cache; i++)
		if (!strcmp(glob_cache[i].pat, pat)) {
			*ret = glob_cache[i].g;
			return 0;
		}
	if (moat_glob_compile(pat, MOAT_GLOB_PATH, ret, err) < 0)
		return -1;
	if (nglob_cache < GLOB_CACHE_MAX && (dup = moat_strdup(pat))) {
		glob_cache[nglob_cache].pat = dup;
		glob_cache[nglob_cache++].g = *ret;
	}
	return 0;
}

/* What the patterns say of one entry by its path alone: SCAN_PLAIN when a
 * pattern matches it, else SCAN_DIRONLY when one matches it if it is a
 * directory (NAME followed by a globstar); -1 on a glob that does not
 * compile. */

/* Does the record c hold the directory rec as it is (the same entries
 * that matter, the same count), whatever its times? */
static bool scan_cdir_same(const struct scan_cache *c, const struct scan_cdir *rec)
{
	const struct scan_cdir *d;

	if (!c)
		return false;
	d = scan_cache_get(c, rec->rel);
	/* (a record that was too recent to trust is written again: with a
	 * later record time it is trusted next time) */
	if (!d || d->entries != rec->entries || d->nents != rec->nents || d->dev != rec->dev ||
	    d->ino != rec->ino || d->ct.tv_sec >= c->trust_before || d->mt.tv_sec >= c->trust_before)
		return false;
	for (size_t i = 0; i < d->nents; i++)
		if (d->ents[i].type != rec->ents[i].type || d->ents[i].what != rec->ents[i].what ||
		    strcmp(d->ents[i].name, rec->ents[i].name))
			return false;
	return true;
}

/* One entry of the directory dfd (at s->rel[..rel_len]) whose path alone
 * gave what: masked, or descended, or nothing. */

/* ---- the walk ----
 *
 * The directories still to read are one stack shared by the walkers (the
 * caller's thread, and up to SCAN_MAX_THREADS - 1 helpers started once the
 * walk has shown it is not small). A walker takes a directory, opens it
 * from the workspace's descriptor without following a link on the way
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS: a directory replaced by a
 * link since it was listed is not followed out of the workspace), reads
 * it with getdents64 into a buffer of its own (the entry's type from
 * d_type: no stat but where the filesystem does not say), and puts its
 * subdirectories on the stack. Nothing is skipped: version control data,
 * dependency trees and build output are read like the rest (a secret is
 * as readable there). What is found is gathered under the lock and sorted
 * once the walk is over, so the result does not depend on the order the
 * walkers met it. While a preparation is recorded for an armed sandbox's
 * watch (fsrec.h), one walker reads alone, every lookup recorded. */
#define SCAN_BUF_SIZE (64 * 1024)
#define SCAN_MAX_THREADS 4
#define SCAN_SPAWN_AFTER 32 /* directories read alone before helpers start */

struct walker;

struct scan_job {
	char *rel; /* below the workspace; "" for the workspace itself */
	size_t parent; /* its parent's index in the check (SIZE_MAX: none) */
};

struct scan {
	/* read-only while walking */
	const char **pats;	  /* the other "**" patterns */
	struct moat_glob **globs; /* compiled from pats */
	struct link_pat *lpats;	  /* the "**" then two components or more of pats */
	size_t nlpats;
	struct glob_cut *cuts;	  /* of pats */
	size_t nglobs;
	struct scan_name *names;
	size_t nnames;
	/* the mask of each name and glob, for exempt_paths (NULL: none) */
	const struct moat_plan *plan;
	const struct moat_mask **name_mk, **glob_mk;
	const char *ws;
	size_t wslen;
	int wsfd;
	size_t max_entries;
	bool one_walker;		/* lookups recorded (fsrec): no helpers */
	int cancel_fd;			/* readable: the scan is given up (-1: never) */
	unsigned polls;			/* (atomic) */
	const struct scan_cache *ahead; /* one made before, or NULL */

	/* shared, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct scan_job *jobs;
	size_t njobs, capjobs;
	unsigned busy; /* walkers reading a directory */
	bool stop;
	int failed;		/* -errno of the first failure */
	char why[PATH_MAX + 256]; /* its reason */
	size_t entries;
	struct scan_cache *rec;	   /* the record being made, or NULL */
	struct moat_scan_check *check; /* the directories relied on, or NULL */
	struct scan_devs use_devs; /* the filesystems met, as ahead is used */
	struct moat_scan_hit *hits;
	size_t nhits, caphits;
	/* the walkers: the caller's, and the helpers it starts */
	struct walker *first;
	size_t read; /* directories the first one read */
	bool spawned;
	size_t want_helpers, nhelpers;
	pthread_t tids[SCAN_MAX_THREADS - 1];
	struct walker *helpers;
};

struct walker {
	struct scan *s;
	char *buf; /* SCAN_BUF_SIZE */
	char rel[PATH_MAX];
	size_t len;
	/* the check's index of the directory being read, and of its parent */
	size_t cur, parent;
	/* subdirectories found in the directory being read, pushed at its end */
	char **sub;
	size_t nsub, capsub;
};

static bool openat2_missing; /* ENOSYS, or refused by a seccomp filter */

/* Stop every walker: -errno and its reason (the first one stays). */
static void scan_fail_locked(struct scan *s, int r, const char *why)
{
	if (!s->failed) {
		s->failed = r;
		moat_strlcpy(s->why, why, sizeof(s->why));
	}
	s->stop = true;
	pthread_cond_broadcast(&s->cv);
}

static void scan_fail(struct scan *s, int r, const char *why)
{
	pthread_mutex_lock(&s->mu);
	scan_fail_locked(s, r, why);
	pthread_mutex_unlock(&s->mu);
}

/* SECURITY: a directory of the workspace that cannot be read whole
 * (its entries could be secrets, and one kept searchable can still be
 * entered by name): the walk fails with -err. */
static int scan_unreadable(struct walker *w, int err)
{
	char why[PATH_MAX + 160];

	snprintf(why, sizeof(why),
		 "cannot read the directory %s/%s in the workspace: %s. hint: the scan for "
		 "secrets must read every directory of the workspace (make it readable, or "
		 "move it out)",
		 w->s->ws, w->rel, strerror(err));
	scan_fail(w->s, -err, why);
	return -err;
}

/* The directory at w->rel changed while the walk read it (its parent's
 * listing is out of date): -ESTALE. */
static int scan_changed(struct walker *w)
{
	char why[PATH_MAX + 160];

	/* (the path alone: the runner says what it means) */
	snprintf(why, sizeof(why), "%s/%s (an entry of it listed was gone when read)", w->s->ws,
		 w->rel);
	scan_fail(w->s, -ESTALE, why);
	return -ESTALE;
}

/* n more entries read; false (the walk failed) past the bound */
static bool scan_count(struct scan *s, size_t n)
{
	bool ok;

	pthread_mutex_lock(&s->mu);
	s->entries += n;
	ok = s->entries <= s->max_entries;
	if (!ok) {
		char why[256];

		snprintf(why, sizeof(why),
			 "the workspace holds more than %zu entries, the bound of the scan for "
			 "secrets (sandbox.scan_max_entries)",
			 s->max_entries);
		scan_fail_locked(s, -E2BIG, why);
	}
	pthread_mutex_unlock(&s->mu);
	return ok;
}

/* The directory at w->rel relied on as st says (the check made once the
 * masks are attached, scancheck.c); false (the walk failed) on no memory. */
static bool scan_relied(struct scan *s, size_t parent, const char *rel, const struct stat *st,
			bool settled, size_t *idx)
{
	bool ok;

	*idx = SIZE_MAX;
	if (!s->check)
		return true;
	pthread_mutex_lock(&s->mu);
	*idx = moat_scan_check_add(s->check, parent, rel, st, settled);
	ok = *idx != SIZE_MAX;
	if (!ok)
		scan_fail_locked(s, -ENOMEM, "out of memory");
	pthread_mutex_unlock(&s->mu);
	return ok;
}

static bool scan_devs_local(struct scan *s, int fd, dev_t dev, bool rec)
{
	bool local;

	pthread_mutex_lock(&s->mu);
	local = scan_dev_local(rec ? &s->rec->devs : &s->use_devs, fd, dev);
	pthread_mutex_unlock(&s->mu);
	return local;
}

static int scan_hit(struct scan *s, const char *rel, bool link, bool dir)
{
	size_t n = s->wslen + 1 + strlen(rel) + 1;
	char *path = malloc(n);
	int r = 0;

	if (!path)
		return -ENOMEM;
	snprintf(path, n, "%s/%s", s->ws, rel);
	pthread_mutex_lock(&s->mu);
	if (s->nhits == s->caphits) {
		size_t cap = s->caphits ? s->caphits * 2 : 64;
		struct moat_scan_hit *v = realloc(s->hits, cap * sizeof(*v));

		if (!v)
			r = -ENOMEM;
		else {
			s->hits = v;
			s->caphits = cap;
		}
	}
	if (r == 0) {
		s->hits[s->nhits].path = path;
		s->hits[s->nhits].link = link;
		s->hits[s->nhits++].dir = dir;
		path = NULL;
	}
	pthread_mutex_unlock(&s->mu);
	free(path);
	return r;
}

/* What the patterns say of one entry by its path alone (w->rel, len
 * bytes; name its last nl): SCAN_PLAIN when a pattern matches it, else
 * SCAN_DIRONLY when one matches it if it is a directory (NAME followed by
 * a globstar). */
/* Does the name pattern n match the entry name (nl bytes)? */
static bool name_matches(const struct scan_name *n, const char *name, size_t nl)
{
	return n->literal ? nl == n->len && !memcmp(n->name, name, nl)
			  : name_cut_fits(&n->cut, name, nl) && moat_glob_match(n->g, name, nl) &&
				!moat_denied_template(n->name, name, nl);
}

static int scan_what(const struct scan *s, const struct walker *w, const char *name, size_t nl,
		     size_t len)
{
	int what = 0;

	for (size_t i = 0; i < s->nnames && what != SCAN_PLAIN; i++)
		if (name_matches(&s->names[i], name, nl))
			what = s->names[i].dir_only ? SCAN_DIRONLY : SCAN_PLAIN;
	for (size_t i = 0; i < s->nglobs && what != SCAN_PLAIN; i++)
		if (glob_cut_fits(&s->cuts[i], w->rel, len, name, nl) &&
		    moat_glob_match(s->globs[i], w->rel, len))
			what = ends_globstar(s->pats[i]) ? SCAN_DIRONLY : SCAN_PLAIN;
	return what;
}

/* A match the user's exempt_paths leave out (w->rel its path): every
 * mask that matches it is exemptible (the built-in and the user's denied
 * paths, not a project's or a --mask) and an exemption matches its path
 * and (SECURITY: the mask would cover the real file) where a link leads. */
static bool scan_exempt(const struct scan *s, const struct walker *w, const char *name, size_t nl,
			unsigned char type)
{
	char full[PATH_MAX], real[PATH_MAX];

	if (!s->name_mk || (size_t)snprintf(full, sizeof(full), "%s/%s", s->ws, w->rel) >= sizeof(full))
		return false;
	if (!moat_plan_exempt(s->plan, full))
		return false;
	for (size_t i = 0; i < s->nnames; i++)
		if (name_matches(&s->names[i], name, nl) &&
		    !moat_plan_mask_exempt(s->plan, s->name_mk[i], full))
			return false;
	for (size_t i = 0; i < s->nglobs; i++)
		if (moat_glob_match(s->globs[i], w->rel, w->len) &&
		    !moat_plan_mask_exempt(s->plan, s->glob_mk[i], full))
			return false;
	return type != DT_LNK || !realpath(full, real) || moat_plan_exempt(s->plan, real);
}

/* w->rel extended by "/name" (or name at the top); false when the path
 * would pass PATH_MAX (the caller decides whether that matters). */
static bool rel_push(struct walker *w, const char *name, size_t nl)
{
	size_t len = w->len + (w->len ? 1 : 0) + nl;

	if (w->s->wslen + 1 + len + 1 > PATH_MAX)
		return false;
	if (w->len)
		w->rel[w->len] = '/';
	memcpy(w->rel + len - nl, name, nl + 1);
	w->len = len;
	return true;
}

static void rel_pop(struct walker *w, size_t len)
{
	w->len = len;
	w->rel[len] = '\0';
}

static int sub_add(struct walker *w)
{
	char *d;

	if (w->nsub == w->capsub) {
		size_t cap = w->capsub ? w->capsub * 2 : 16;
		char **v = realloc(w->sub, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->sub = v;
		w->capsub = cap;
	}
	d = moat_strdup(w->rel);
	if (!d)
		return -ENOMEM;
	w->sub[w->nsub++] = d;
	return 0;
}

/* The subdirectories found go on the stack for any walker. */
static int sub_flush(struct walker *w)
{
	struct scan *s = w->s;
	int r = 0;

	if (!w->nsub)
		return 0;
	pthread_mutex_lock(&s->mu);
	if (s->njobs + w->nsub > s->capjobs) {
		size_t cap = s->capjobs ? s->capjobs : 64;
		struct scan_job *v;

		while (cap < s->njobs + w->nsub)
			cap *= 2;
		v = realloc(s->jobs, cap * sizeof(*v));
		if (!v)
			r = -ENOMEM;
		else {
			s->jobs = v;
			s->capjobs = cap;
		}
	}
	/* (pushed in reverse: the first found is read next) */
	for (size_t i = w->nsub; r == 0 && i > 0; i--) {
		s->jobs[s->njobs].parent = w->cur;
		s->jobs[s->njobs++].rel = w->sub[i - 1];
	}
	if (r == 0) {
		w->nsub = 0;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return r;
}

static bool scan_link_straddles(const struct scan *s, const char *prel, size_t plen,
				const char *name, size_t nl)
{
	for (size_t i = 0; i < s->nlpats; i++)
		for (size_t k = 0; k + 1 < s->lpats[i].n; k++)
			if (moat_link_fits_at(&s->lpats[i], k, prel, plen, name, nl))
				return true;
	return false;
}

/* the hooks of moat_link_rest: a hit, and entries counted to the bound */
static int link_hit(void *ud, const char *path)
{
	struct scan *s = ud;

	return scan_hit(s, path + s->wslen + 1, true, false);
}

static bool link_count(void *ud, size_t n)
{
	return scan_count(ud, n);
}

/* The link at w->rel (in the directory at its first plen bytes): the rest
 * of each pattern it straddles looked up where it leads. */
static int scan_link_rest(struct walker *w, size_t plen, const char *name, size_t nl)
{
	struct scan *s = w->s;
	char path[PATH_MAX];
	int r = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", s->ws, w->rel) >= sizeof(path))
		return 0; /* (rel_push kept it shorter) */
	for (size_t i = 0; i < s->nlpats && r == 0; i++)
		for (size_t k = 0; k + 1 < s->lpats[i].n && r == 0; k++)
			if (moat_link_fits_at(&s->lpats[i], k, w->rel, plen, name, nl))
				r = moat_link_rest(path, strlen(path), &s->lpats[i], k + 1, link_hit, link_count, s);
	if (r == -ENAMETOOLONG) {
		char why[PATH_MAX + 128];

		snprintf(why, sizeof(why),
			 "a path in the workspace is longer than %d bytes, so it cannot be "
			 "masked: %s. hint: shorten it, or move it out of the workspace",
			 PATH_MAX, path);
		scan_fail(s, r, why);
	} else if (r < 0 && r != -E2BIG && r != -ENOMEM) {
		char why[PATH_MAX + 128];

		snprintf(why, sizeof(why), "cannot read where the link %s leads: %s", path,
			 strerror(-r));
		scan_fail(s, r, why);
	}
	return r;
}

/* One entry of the directory dfd (at w->rel, w->len bytes) whose path
 * alone gave what: a hit, or a directory to read, or nothing. */
static int scan_act(struct walker *w, int dfd, dev_t ddev, const char *name, size_t nl,
		    unsigned char type, int what)
{
	struct scan *s = w->s;
	size_t rel_len = w->len;
	int r = 0;

	if (!rel_push(w, name, nl)) {
		char why[PATH_MAX + 128];

		/* SECURITY: a path the scan cannot name cannot be masked */
		snprintf(why, sizeof(why),
			 "a path in the workspace is longer than %d bytes, so it cannot be "
			 "masked: %s/%.200s/%s. hint: shorten it, or move it out of the workspace",
			 PATH_MAX, s->ws, w->rel, name);
		scan_fail(s, -ENAMETOOLONG, why);
		return -ENAMETOOLONG;
	}
	if ((what & SCAN_PLAIN) || ((what & SCAN_DIRONLY) && is_dir_at(dfd, name, type))) {
		if (!scan_exempt(s, w, name, nl, type))
			r = scan_hit(s, w->rel, type == DT_LNK, type == DT_DIR);
		/* an exempt directory is not masked whole, but what is in it
		 * is judged on its own (X followed by a globstar lifts all) */
		else if (type == DT_DIR)
			r = sub_add(w);
	} else if (what & SCAN_LINK) {
		r = scan_link_rest(w, rel_len, name, nl);
	} else if (what & SCAN_SUB) {
		const struct scan_cdir *c = NULL;
		struct stat st;
		size_t leaf;

		/* a directory unchanged since the record with nothing in it
		 * that matters (most of them) is not even opened; only on the
		 * filesystem of its parent, judged local (another is a mount
		 * point: opened, and judged on its own) */
		if (s->ahead && (fstatat)(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode) && st.st_dev == ddev && scan_devs_local(s, dfd, ddev, false))
			c = scan_cache_find(s->ahead, w->rel, &st);
		if (c && moat_encrypted_at(dfd, name, AT_SYMLINK_NOFOLLOW))
			c = NULL; /* (SECURITY: see scan_dir) */
		/* an armed sandbox's watch: a directory relied on unread is
		 * watched whole, then found unchanged once more (a change
		 * before the watch began is not among its events) */
		if (c && !c->nents && moat_fsrec_on()) {
			char full[2 * PATH_MAX];

			snprintf(full, sizeof(full), "%s/%s", s->ws, w->rel);
			moat_fsrec_scan_dir(full, false);
			if ((fstatat)(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
			    scan_cache_find(s->ahead, w->rel, &st) != c)
				c = NULL;
		}
		if (c && !c->nents && !scan_relied(s, w->cur, w->rel, &st, true, &leaf))
			r = -ENOMEM;
		else if (c && !c->nents) {
			if (scan_count(s, c->entries) && s->rec) {
				pthread_mutex_lock(&s->mu);
				if (!s->rec->failed)
					scan_rec_copy(s->rec, c);
				pthread_mutex_unlock(&s->mu);
			}
		} else {
			r = sub_add(w);
		}
	}
	rel_pop(w, rel_len);
	return r;
}

/* Open the directory at w->rel below the workspace, no link followed on
 * the way; -1 when it is not there any more (or is not a directory). */
static int scan_open(struct walker *w)
{
	struct scan *s = w->s;
	int fd;

	if (moat_fsrec_on()) {
		char full[2 * PATH_MAX];

		if (w->len)
			snprintf(full, sizeof(full), "%s/%s", s->ws, w->rel);
		else
			snprintf(full, sizeof(full), "%s", s->ws);
		moat_fsrec_scan_dir(full, !w->len);
	}
	if (!w->len)
		return (openat)(s->wsfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* (recorded above) */
	if (!__atomic_load_n(&openat2_missing, __ATOMIC_RELAXED)) {
		struct open_how how;

		memset(&how, 0, sizeof(how));
		how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
		how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
		fd = (int)syscall(SYS_openat2, s->wsfd, w->rel, &how, sizeof(how));
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return fd;
		__atomic_store_n(&openat2_missing, true, __ATOMIC_RELAXED);
	}
	/* without openat2: one component at a time, none a link */
	{
		char part[NAME_MAX + 1];
		const char *c = w->rel;
		int dfd = s->wsfd;

		fd = -1;
		while (*c) {
			size_t n = strcspn(c, "/");

			if (n > NAME_MAX) {
				fd = -1;
				break;
			}
			memcpy(part, c, n);
			part[n] = '\0';
			fd = openat(dfd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (dfd != s->wsfd)
				close(dfd);
			if (fd < 0)
				break;
			dfd = fd;
			c += n;
			c += *c == '/';
		}
		return fd;
	}
}

/* Read the directory dfd (at w->rel; taken over). */
static int scan_dir(struct walker *w, int dfd)
{
	struct scan *s = w->s;
	const struct scan_cdir *c = NULL;
	struct scan_cdir rec;
	struct stat st = {0};
	struct dirent64 *e;
	bool recording = s->rec && !s->rec->failed, whole = true, trusted = true, settled = true;
	size_t count = 0;
	int r = 0;

	/* SECURITY: the identity and times the check compares, taken before
	 * the entries (scancheck.c) */
	if (s->check) {
		if (moat_scan_fstat_settled(dfd, &st, &settled) < 0) {
			close(dfd);
			return scan_unreadable(w, errno);
		}
	} else if ((s->ahead || recording) && fstat(dfd, &st) < 0) {
		close(dfd);
		return 0;
	}
	/* SECURITY: an encrypted directory lists other names once its key is
	 * added, its times unchanged: never judged by a record, never kept */
	if ((s->ahead || recording) && moat_encrypted_at(dfd, "", AT_EMPTY_PATH)) {
		trusted = false;
		recording = false;
	}
	/* (its subdirectories are judged on their own) */
	if (recording && !scan_devs_local(s, dfd, st.st_dev, true))
		recording = false;
	if (s->ahead && trusted && scan_devs_local(s, dfd, st.st_dev, false))
		c = scan_cache_find(s->ahead, w->rel, &st);
	if (!scan_relied(s, w->parent, w->rel, &st, settled || c, &w->cur)) {
		close(dfd);
		return -ENOMEM;
	}
	if (c) {
		/* unchanged since the record */
		if (!scan_count(s, c->entries)) {
			close(dfd);
			return 0;
		}
		if (recording) {
			pthread_mutex_lock(&s->mu);
			scan_rec_copy(s->rec, c);
			pthread_mutex_unlock(&s->mu);
		}
		for (size_t i = 0; i < c->nents && r == 0; i++)
			r = scan_act(w, dfd, st.st_dev, c->ents[i].name, strlen(c->ents[i].name),
				     c->ents[i].type, c->ents[i].what);
		close(dfd);
		return r == 0 ? sub_flush(w) : r;
	}

	memset(&rec, 0, sizeof(rec));
	for (;;) {
		long got = moat_getdents64(dfd, w->buf, SCAN_BUF_SIZE);

		if (got < 0) {
			r = scan_unreadable(w, errno);
			whole = false; /* (never kept as read whole) */
		}
		if (got <= 0 || r < 0)
			break;
		for (long off = 0; off < got && r == 0; off += e->d_reclen) {
			size_t nl, len;
			int what;

			e = (struct dirent64 *)(void *)(w->buf + off);
			if (e->d_name[0] == '.' &&
			    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
				continue;
			nl = strlen(e->d_name);
			count++;
			len = w->len;
			if (!rel_push(w, e->d_name, nl)) {
				what = SCAN_PLAIN; /* (scan_act refuses it) */
			} else {
				what = scan_what(s, w, e->d_name, nl, w->len);
				rel_pop(w, len);
			}
			/* a filesystem that does not say (xfs without ftype,
			 * some network ones): one lstat tells */
			if (e->d_type == DT_UNKNOWN) {
				struct stat est;

				if ((fstatat)(dfd, e->d_name, &est, AT_SYMLINK_NOFOLLOW) == 0)
					e->d_type = S_ISDIR(est.st_mode)   ? DT_DIR
						    : S_ISLNK(est.st_mode) ? DT_LNK
									   : DT_REG;
				else
					e->d_type = DT_DIR; /* (tried as one: fails for others) */
			}
			if (!(what & SCAN_PLAIN) && e->d_type == DT_DIR)
				what |= SCAN_SUB;
			if (!(what & SCAN_PLAIN) && e->d_type == DT_LNK && s->nlpats &&
			    scan_link_straddles(s, w->rel, w->len, e->d_name, nl))
				what |= SCAN_LINK;
			if (!what)
				continue;
			if (recording) {
				struct scan_cent *v =
				    realloc(rec.ents, (rec.nents + 1) * sizeof(*v));
				char *name = v ? moat_strdup(e->d_name) : NULL;

				if (v)
					rec.ents = v;
				if (!name) {
					recording = false;
					pthread_mutex_lock(&s->mu);
					s->rec->failed = true;
					pthread_mutex_unlock(&s->mu);
				} else {
					v[rec.nents].name = name;
					v[rec.nents].type = e->d_type;
					v[rec.nents++].what = (unsigned char)what;
				}
			}
			r = scan_act(w, dfd, st.st_dev, e->d_name, nl, e->d_type, what);
		}
		/* the bound is checked as each buffer is read, so that a
		 * directory of millions of entries stops at it too */
		if (r == 0 && !scan_count(s, count))
			r = -E2BIG;
		rec.entries += count;
		count = 0;
	}
	close(dfd);
	if (r == 0)
		r = sub_flush(w);
	pthread_mutex_lock(&s->mu);
	if (recording && whole && r == 0 && !s->rec->failed) {
		rec.rel = moat_strdup(w->rel);
		rec.dev = st.st_dev;
		rec.ino = st.st_ino;
		rec.ct = st.st_ctim;
		rec.mt = st.st_mtim;
		/* only a change of what matters is worth writing down: a
		 * directory whose times alone changed is read again next time */
		if (!rec.rel || !scan_cdir_same(s->ahead, &rec))
			s->rec->dirty = true;
		scan_rec_push(s->rec, &rec);
	} else if (s->rec) {
		/* not kept: the next scan reads this directory again */
		s->rec->dirty = true;
	}
	pthread_mutex_unlock(&s->mu);
	scan_cdir_release(&rec);
	return r;
}

static void *walk_loop(void *arg);

/* Helpers for a walk that has shown it is not small (threads: the
 * caller's signal mask is kept, every signal blocked in them). */
static size_t walk_spawn(struct scan *s, struct walker *ws, pthread_t *tids, size_t want)
{
	sigset_t all, old;
	size_t n = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (; n < want; n++) {
		ws[n].s = s;
		ws[n].buf = malloc(SCAN_BUF_SIZE);
		if (!ws[n].buf || pthread_create(&tids[n], NULL, walk_loop, &ws[n]) != 0) {
			free(ws[n].buf);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return n;
}

/* A directory of the workspace that neither moat nor the command can
 * enter: no search permission for us (so no name in it can be opened),
 * and not ours (an owner could chmod it open, and the command runs as
 * us). SECURITY: sound because the command never has more than moat's
 * credentials: the same uid and groups, no capability after its exec
 * (securebits; in a user namespace of its own, capabilities never cover
 * an inode whose owner is not mapped into it), nothing setuid (no new
 * privileges). Never for root, whose CAP_DAC_READ_SEARCH opens anything
 * (one without it is refused, as before). It is relied on as unreadable:
 * the check after the mounts finds a chmod (its ctime). */
static bool scan_sealed(struct walker *w)
{
	const char *rel = w->len ? w->rel : ".";
	struct timespec c0;
	struct stat st;

	clock_gettime(CLOCK_REALTIME_COARSE, &c0);
	if (geteuid() == 0 || fstatat(w->s->wsfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISDIR(st.st_mode) || st.st_uid == geteuid() ||
	    faccessat(w->s->wsfd, rel, X_OK, 0) == 0 || errno != EACCES)
		return false;
	size_t idx;

	return scan_relied(w->s, w->parent, w->rel, &st, moat_ts_before(&st.st_ctim, &c0), &idx);
}

static int walk_job(struct walker *w, struct scan_job *job)
{
	int fd;

	if (moat_strlcpy(w->rel, job->rel, sizeof(w->rel)) >= sizeof(w->rel))
		return -ENAMETOOLONG; /* (rel_push kept it shorter) */
	w->len = strlen(w->rel);
	w->parent = job->parent;
	w->cur = SIZE_MAX;
	fd = scan_open(w);
	if (fd < 0) {
		struct stat st;

		/* gone, or replaced by a file or a link since it was listed:
		 * nothing of it to read. SECURITY: the listing it came from is
		 * out of date, and what replaced it may be a directory read
		 * under another name, or none: prepared again (-ESTALE) when
		 * the result is to be checked. One that is there but cannot be
		 * read (no read permission, a search one kept) could still be
		 * entered by name: refused */
		int e = errno;

		if (e == EACCES && scan_sealed(w))
			return 0;
		if (e != ENOENT && e != ENOTDIR && e != ELOOP && e != EXDEV &&
		    (fstatat(w->s->wsfd, w->len ? w->rel : ".", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
		     errno != ENOENT))
			return scan_unreadable(w, e);
		if (w->s->check)
			return scan_changed(w);
		return 0;
	}
	return scan_dir(w, fd);
}

/* A walker: directories off the stack until there are none and no walker
 * is reading one (or the walk failed). */
/* A scan made ahead of a call (the scan ahead, an armed sandbox's) stops
 * when the call comes: the call scans on its own, with every walker,
 * rather than wait for it. */
static bool scan_given_up(struct scan *s)
{
	struct pollfd pf = {s->cancel_fd, POLLIN, 0};

	if (s->one_walker && moat_fsrec_cancelled())
		return true;
	/* (one poll in 64 directories) */
	return s->cancel_fd >= 0 && __atomic_fetch_add(&s->polls, 1, __ATOMIC_RELAXED) % 64 == 0 &&
	       poll(&pf, 1, 0) > 0;
}

static void *walk_loop(void *arg)
{
	struct walker *w = arg;
	struct scan *s = w->s;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		struct scan_job job;
		int r;

		while (!s->njobs && s->busy && !s->stop)
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->stop || !s->njobs)
			break;
		job = s->jobs[--s->njobs];
		s->busy++;
		pthread_mutex_unlock(&s->mu);
		r = scan_given_up(s) ? -ECANCELED : walk_job(w, &job);
		free(job.rel);
		pthread_mutex_lock(&s->mu);
		s->busy--;
		if (r < 0 && !s->failed)
			scan_fail_locked(s, r, r == -ENOMEM ? "out of memory" : strerror(-r));
		if (!s->njobs && !s->busy)
			pthread_cond_broadcast(&s->cv);
		/* the caller's walker starts the helpers once it is clear
		 * they would have work */
		if (w == s->first && !s->spawned && !s->one_walker && ++s->read >= SCAN_SPAWN_AFTER &&
		    s->njobs > 1) {
			s->spawned = true;
			pthread_mutex_unlock(&s->mu);
			s->nhelpers = walk_spawn(s, s->helpers, s->tids, s->want_helpers);
			pthread_mutex_lock(&s->mu);
		}
	}
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* The walk of the whole workspace (s set up, s->wsfd open). */
static int walk(struct scan *s)
{
	struct walker first;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int r;

	memset(&first, 0, sizeof(first));
	first.s = s;
	first.buf = malloc(SCAN_BUF_SIZE);
	s->jobs = malloc(64 * sizeof(*s->jobs));
	if (!first.buf || !s->jobs) {
		free(first.buf);
		return -ENOMEM;
	}
	s->capjobs = 64;
	s->jobs[0].rel = moat_strdup("");
	s->jobs[0].parent = SIZE_MAX;
	if (!s->jobs[0].rel) {
		free(first.buf);
		return -ENOMEM;
	}
	s->njobs = 1;
	s->first = &first;
	s->want_helpers = cpus > 1 ? (size_t)(cpus < SCAN_MAX_THREADS ? cpus : SCAN_MAX_THREADS) - 1
				   : 0;
	if (s->want_helpers && !(s->helpers = calloc(s->want_helpers, sizeof(*s->helpers))))
		s->want_helpers = 0;
	walk_loop(&first);
	for (size_t i = 0; i < s->nhelpers; i++) {
		pthread_join(s->tids[i], NULL);
		free(s->helpers[i].buf);
		for (size_t k = 0; k < s->helpers[i].nsub; k++)
			free(s->helpers[i].sub[k]);
		free(s->helpers[i].sub);
	}
	for (size_t k = 0; k < first.nsub; k++)
		free(first.sub[k]);
	free(first.sub);
	free(first.buf);
	free(s->helpers);
	s->helpers = NULL;
	for (size_t i = 0; i < s->njobs; i++)
		free(s->jobs[i].rel);
	free(s->jobs);
	s->jobs = NULL;
	s->njobs = 0;
	r = s->failed;
	return r;
}


static bool scan_name_of(const char *pattern, struct scan_name *ret)
{
	const char *t = pattern + 3;
	size_t n = strlen(t);
	bool globstar = n > 3 && !strcmp(t + n - 3, "/**"), wild;

	if (globstar)
		n -= 3;
	if (n == 0 || n > NAME_MAX || memchr(t, '/', n) || strpbrk(t, "[]{}\\"))
		return false;
	wild = memchr(t, '*', n) || memchr(t, '?', n);
	if (wild && globstar)
		return false; /* (compiled as a name on its own) */
	ret->name = t;
	ret->len = n;
	ret->literal = !wild;
	ret->dir_only = globstar;
	ret->g = NULL;
	name_cut_of(t, n, &ret->cut);
	return true;
}

/* The scan patterns, one per line: a scan ahead serves a plan with the
 * same ones only. */
static char *scan_key(const struct moat_plan *p)
{
	struct moat_buf b;

	moat_buf_init(&b);
	for (size_t i = 0; i < p->nmasks; i++)
		if (p->masks[i].kind == MOAT_MASK_WORKSPACE_NAME) {
			moat_buf_puts(&b, p->masks[i].pattern);
			moat_buf_putc(&b, '\n');
		}
	if (b.oom || !b.len) {
		moat_buf_release(&b);
		return NULL;
	}
	return moat_buf_steal(&b);
}

/* The scan ahead for this plan, when there is one. */
static const struct scan_cache *scan_ahead_for(const struct moat_plan *p)
{
	char *key;
	bool same;

	if (!scan_ahead || strcmp(scan_ahead->ws, p->workspace))
		return NULL;
	/* SECURITY: a clock set back could give a later change the times
	 * kept: a step since the scan ahead throws it away */
	if (llabs(realtime_off() - scan_ahead->clock_off) > SCAN_CLOCK_STEP_NS) {
		scan_cache_free(scan_ahead);
		scan_ahead = NULL;
		return NULL;
	}
	key = scan_key(p);
	same = key && !strcmp(key, scan_ahead->key);
	free(key);
	return same ? scan_ahead : NULL;
}

/* ---- the scan record on disk ----
 *
 * One-shot runs (`moat run`) keep the scan's record between runs in the
 * user's cache directory ($XDG_CACHE_HOME/moat, else ~/.cache/moat), one
 * file per workspace and pattern set, judged exactly as a scan ahead (the
 * record's time, the wall clock's offset, local filesystems, each
 * directory's identity and times). SECURITY: never where the sandbox can
 * write (inside the workspace or a writable path of the plan: a command
 * could plant a record that hides a secret from the next run); only a
 * regular file of ours that no one else may write; every field checked
 * as it is read (a damaged file is ignored). */
#define SCAN_FILE_MAGIC "MOATSCN3"
#define SCAN_RECORD_MIN_DIRS 32
#define SCAN_KEY_DESC "moat:scan-record-key"
#define SCAN_FILE_MAX (256u << 20)

static unsigned long long fnv1a(unsigned long long h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* The record's file for this plan's workspace and patterns (key), or false
 * when there is none or it would be within the sandbox's reach. */
void moat_ns_scan_key_drop(void)
{
	long id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", SCAN_KEY_DESC, 0);

	if (id >= 0)
		(void)syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
}

static bool scan_file_path(const struct moat_plan *p, const char *key, char *out, size_t outsz,
			   bool judge)
{
	const char *xdg = secure_getenv("XDG_CACHE_HOME");
	char dir[PATH_MAX];
	unsigned long long h = 1469598103934665603ULL;
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(dir, sizeof(dir), "%s/moat", xdg);
	else if (p->home && p->home[0] == '/')
		n = snprintf(dir, sizeof(dir), "%s/.cache/moat", p->home);
	else
		return false;
	/* (a workspace made for the call is never seen again) */
	if (p->tmp_workspace || n < 0 || (size_t)n >= sizeof(dir))
		return false;
	/* a command without the seccomp filter could read the key: no
	 * records for such a run (moat_spawn_prepare drops the key before it
	 * runs) */
	if (!p->seccomp)
		return false;
	/* where it really is: links resolved (~/.cache may lead into the
	 * workspace), the part that does not exist yet as written (only its
	 * name: to see whether there is a record at all, one open) */
	if (judge) {
		char head[PATH_MAX], real[PATH_MAX], *cut = NULL;

		moat_strlcpy(head, dir, sizeof(head));
		while (!realpath(head, real)) {
			char *sl = strrchr(head, '/');

			if (errno != ENOENT || !sl || sl == head)
				return false;
			if (cut)
				*cut = '/';
			*sl = '\0';
			cut = sl;
		}
		n = snprintf(dir, sizeof(dir), "%s%s%s", real, cut ? "/" : "", cut ? cut + 1 : "");
		if (n < 0 || (size_t)n >= sizeof(dir))
			return false;
		/* SECURITY: only a directory of ours no one else may write (root
		 * with another user's HOME would follow that user's links) */
		{
			struct stat st;

			if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
			    (st.st_mode & 022))
				return false;
		}
	}
	if (judge && moat_path_within(dir, p->workspace))
		return false;
	for (size_t i = 0; judge && i < p->nfs; i++) {
		char real[PATH_MAX];

		if (!(p->fs[i].access & MOAT_FS_WRITE))
			continue;
		if (moat_path_within(dir, p->fs[i].path) ||
		    (realpath(p->fs[i].path, real) && moat_path_within(dir, real)))
			return false;
	}
	h = fnv1a(h, p->workspace, strlen(p->workspace) + 1);
	h = fnv1a(h, key, strlen(key));
	n = snprintf(out, outsz, "%s/scan-%016llx", dir, h);
	return n > 0 && (size_t)n < outsz;
}

/* SipHash-2-4 (Aumasson and Bernstein): a keyed hash with a 128-bit key,
 * the record's tag. */
#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND(v0, v1, v2, v3)                                                                   \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = ROTL(v1, 13) ^ v0;                                                            \
		v0 = ROTL(v0, 32);                                                                 \
		v2 += v3;                                                                          \
		v3 = ROTL(v3, 16) ^ v2;                                                            \
		v0 += v3;                                                                          \
		v3 = ROTL(v3, 21) ^ v0;                                                            \
		v2 += v1;                                                                          \
		v1 = ROTL(v1, 17) ^ v2;                                                            \
		v2 = ROTL(v2, 32);                                                                 \
	} while (0)

static uint64_t le64(const unsigned char *p)
{
	uint64_t x = 0;

	for (int i = 7; i >= 0; i--)
		x = (x << 8) | p[i];
	return x;
}

static uint64_t siphash24(const unsigned char key[16], const unsigned char *m, size_t n)
{
	uint64_t k0 = le64(key), k1 = le64(key + 8), b = (uint64_t)n << 56, mi;
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		mi = le64(m + i);
		v3 ^= mi;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= mi;
	}
	for (size_t k = 0; i + k < n; k++)
		b |= (uint64_t)m[i + k] << (8 * k);
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (int r = 0; r < 4; r++)
		SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* The key the records are tagged with: a random one in the user's kernel
 * keyring, made by the first run that needs it. SECURITY: no sandbox can
 * read it (seccomp refuses keyctl, add_key and request_key), so none can
 * forge a record that a later run would believe, even where it can write
 * the cache directory (--rw ~/.cache). Without a keyring: no records. */
static bool scan_mac_key(unsigned char key[16])
{
	long id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", SCAN_KEY_DESC,
			  0);

	if (id < 0) {
		unsigned char fresh[16];

		if (getrandom(fresh, sizeof(fresh), 0) != (ssize_t)sizeof(fresh))
			return false;
		id = syscall(SYS_add_key, "user", SCAN_KEY_DESC, fresh, sizeof(fresh),
			     KEY_SPEC_USER_KEYRING);
		if (id < 0)
			return false;
	}
	return syscall(SYS_keyctl, KEYCTL_READ, id, key, 16) == 16;
}

struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static const void *rd_take(struct rd *r, size_t n)
{
	const void *v = r->p;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	return v;
}

static unsigned long long rd_u(struct rd *r, size_t n)
{
	const unsigned char *v = rd_take(r, n);
	unsigned long long x = 0;

	for (size_t i = 0; v && i < n; i++)
		x |= (unsigned long long)v[i] << (8 * i);
	return x;
}

static char *rd_str(struct rd *r, size_t n)
{
	const char *v = rd_take(r, n);

	if (!v || memchr(v, '\0', n))
		return r->bad = true, NULL;
	return moat_strndup(v, n);
}

static struct scan_cache *scan_cache_load(const struct moat_plan *p, const char *key)
{
	char path[PATH_MAX], *buf = NULL, *ws = NULL, *k = NULL;
	unsigned char mac[16];
	struct scan_cache *c = NULL;
	struct stat st;
	struct rd r;
	size_t ndirs, total = 0;
	long long off;
	int fd;

	if (!scan_file_path(p, key, path, sizeof(path), false))
		return NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL; /* (most runs in a small workspace: none) */
	/* SECURITY: the file opened is the one the checks judged (a link on
	 * the way could have changed in between) */
	{
		struct stat a, b;

		if (!scan_file_path(p, key, path, sizeof(path), true) || fstat(fd, &a) < 0 ||
		    stat(path, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
			close(fd);
			return NULL;
		}
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size < 16 ||
	    (unsigned long long)st.st_size > SCAN_FILE_MAX || !scan_mac_key(mac) ||
	    !(buf = malloc((size_t)st.st_size)) ||
	    read(fd, buf, (size_t)st.st_size) != (ssize_t)st.st_size) {
		close(fd);
		free(buf);
		return NULL;
	}
	close(fd);
	/* SECURITY: the tag first: nothing is believed that moat did not write */
	if (siphash24(mac, (const unsigned char *)buf, (size_t)st.st_size - 8) !=
	    le64((const unsigned char *)buf + st.st_size - 8)) {
		free(buf);
		return NULL;
	}
	r.p = (const unsigned char *)buf;
	r.end = r.p + st.st_size - 8;
	r.bad = false;
	if (memcmp(rd_take(&r, 8), SCAN_FILE_MAGIC, 8) || !(c = calloc(1, sizeof(*c))))
		goto bad;
	c->clock_off = (long long)rd_u(&r, 8);
	c->trust_before = (time_t)rd_u(&r, 8);
	ndirs = (size_t)rd_u(&r, 4);
	ws = rd_str(&r, (size_t)rd_u(&r, 4));
	k = rd_str(&r, (size_t)rd_u(&r, 4));
	off = realtime_off();
	if (r.bad || ndirs > SCAN_AHEAD_MAX_DIRS || strcmp(ws, p->workspace) || strcmp(k, key) ||
	    c->clock_off < off - SCAN_CLOCK_STEP_NS || c->clock_off > off + SCAN_CLOCK_STEP_NS)
		goto bad;
	c->ws = ws;
	c->key = k;
	ws = k = NULL;
	c->dirs = calloc(ndirs ? ndirs : 1, sizeof(*c->dirs));
	if (!c->dirs)
		goto bad;
	c->cap = ndirs;
	while (c->n < ndirs) {
		struct scan_cdir *d = &c->dirs[c->n];
		size_t nents;

		d->rel = rd_str(&r, (size_t)rd_u(&r, 4));
		d->dev = (dev_t)rd_u(&r, 8);
		d->ino = (ino_t)rd_u(&r, 8);
		d->ct.tv_sec = (time_t)rd_u(&r, 8);
		d->ct.tv_nsec = (long)rd_u(&r, 4);
		d->mt.tv_sec = (time_t)rd_u(&r, 8);
		d->mt.tv_nsec = (long)rd_u(&r, 4);
		d->entries = (size_t)rd_u(&r, 4);
		nents = (size_t)rd_u(&r, 4);
		c->n++; /* (from here on released with the rest) */
		total += nents;
		if (r.bad || nents > d->entries || d->entries > MOAT_SCAN_MAX_ENTRIES ||
		    total > MOAT_SCAN_MAX_ENTRIES || d->ct.tv_nsec >= 1000000000L ||
		    d->mt.tv_nsec >= 1000000000L ||
		    (c->n > 1 && strcmp(c->dirs[c->n - 2].rel, d->rel) >= 0))
			goto bad;
		d->ents = nents ? calloc(nents, sizeof(*d->ents)) : NULL;
		if (nents && !d->ents)
			goto bad;
		for (; d->nents < nents; d->nents++) {
			struct scan_cent *e = &d->ents[d->nents];

			e->type = (unsigned char)rd_u(&r, 1);
			e->what = (unsigned char)rd_u(&r, 1);
			e->name = rd_str(&r, (size_t)rd_u(&r, 2));
			if (r.bad || !e->name || !e->name[0] || !e->what ||
			    (e->what & ~(SCAN_PLAIN | SCAN_DIRONLY | SCAN_SUB | SCAN_LINK)) ||
			    strchr(e->name, '/') || !strcmp(e->name, ".") || !strcmp(e->name, "..")) {
				d->nents++;
				goto bad;
			}
		}
	}
	if (r.p != r.end)
		goto bad;
	free(buf);
	return c;
bad:
	free(buf);
	free(ws);
	free(k);
	scan_cache_free(c);
	return NULL;
}

static void wr_u(struct moat_buf *b, unsigned long long x, size_t n)
{
	unsigned char v[8];

	for (size_t i = 0; i < n; i++)
		v[i] = (unsigned char)(x >> (8 * i));
	moat_buf_append(b, v, n);
}

/* At most SCAN_FILES_KEEP records (one per workspace): past it, the
 * least recently written go, and so do leftovers of writes that died. */
#define SCAN_FILES_KEEP 128

struct aged {
	struct timespec t;
	char name[NAME_MAX + 1];
};

static int aged_cmp(const void *a, const void *b)
{
	const struct aged *x = a, *y = b;

	if (x->t.tv_sec != y->t.tv_sec)
		return x->t.tv_sec < y->t.tv_sec ? -1 : 1;
	if (x->t.tv_nsec != y->t.tv_nsec)
		return x->t.tv_nsec < y->t.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void scan_files_prune(const char *dir)
{
	struct aged *v;
	size_t n = 0, max = SCAN_FILES_KEEP * 4;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;
	struct stat st;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	v = malloc(max * sizeof(*v));
	while (v && (e = readdir(d)) && n < max)
		if (!strncmp(e->d_name, "scan-", 5) &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode)) {
			v[n].t = st.st_mtim;
			moat_strlcpy(v[n++].name, e->d_name, sizeof(v[0].name));
		}
	/* past the bound, the newest half stays */
	if (v && n >= SCAN_FILES_KEEP) {
		qsort(v, n, sizeof(*v), aged_cmp);
		for (size_t i = 0; i + SCAN_FILES_KEEP / 2 < n; i++)
			(void)unlinkat(dirfd(d), v[i].name, 0);
	}
	free(v);
	closedir(d);
}

static void scan_cache_write(const struct moat_plan *p, const struct scan_cache *c)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32], *slash;
	unsigned char mac[16];
	struct moat_buf b;
	int fd;

	/* a small workspace is read as fast as a record (and the record
	 * costs its key and its checks): none below SCAN_RECORD_MIN_DIRS */
	if (!c->dirty || c->failed || c->n < SCAN_RECORD_MIN_DIRS ||
	    !scan_file_path(p, c->key, path, sizeof(path), true))
		return;
	moat_buf_init(&b);
	moat_buf_append(&b, SCAN_FILE_MAGIC, 8);
	wr_u(&b, (unsigned long long)c->clock_off, 8);
	wr_u(&b, (unsigned long long)c->trust_before, 8);
	wr_u(&b, c->n, 4);
	wr_u(&b, strlen(c->ws), 4);
	moat_buf_puts(&b, c->ws);
	wr_u(&b, strlen(c->key), 4);
	moat_buf_puts(&b, c->key);
	for (size_t i = 0; i < c->n; i++) {
		const struct scan_cdir *d = &c->dirs[i];

		wr_u(&b, strlen(d->rel), 4);
		moat_buf_puts(&b, d->rel);
		wr_u(&b, (unsigned long long)d->dev, 8);
		wr_u(&b, (unsigned long long)d->ino, 8);
		wr_u(&b, (unsigned long long)d->ct.tv_sec, 8);
		wr_u(&b, (unsigned long long)d->ct.tv_nsec, 4);
		wr_u(&b, (unsigned long long)d->mt.tv_sec, 8);
		wr_u(&b, (unsigned long long)d->mt.tv_nsec, 4);
		wr_u(&b, d->entries, 4);
		wr_u(&b, d->nents, 4);
		for (size_t k = 0; k < d->nents; k++) {
			wr_u(&b, d->ents[k].type, 1);
			wr_u(&b, d->ents[k].what, 1);
			wr_u(&b, strlen(d->ents[k].name), 2);
			moat_buf_puts(&b, d->ents[k].name);
		}
	}
	if (!scan_mac_key(mac)) {
		moat_buf_release(&b);
		return;
	}
	wr_u(&b, siphash24(mac, (const unsigned char *)b.data, b.len), 8);
	if (b.oom || b.len > SCAN_FILE_MAX) {
		moat_buf_release(&b);
		return;
	}
	/* the directories (ours, private), a file of our own, renamed over */
	slash = strrchr(path, '/');
	*slash = '\0';
	if (mkdir(path, 0700) < 0 && errno == ENOENT) {
		char *up = strrchr(path, '/');

		if (up && up != path) {
			*up = '\0';
			(void)mkdir(path, 0700);
			*up = '/';
		}
		(void)mkdir(path, 0700);
	}
	scan_files_prune(path);
	*slash = '/';
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		bool ok = write(fd, b.data, b.len) == (ssize_t)b.len;

		close(fd);
		if (!ok || rename(tmp, path) < 0)
			(void)unlink(tmp);
	}
	moat_buf_release(&b);
}


static int cmp_hit(const void *a, const void *b)
{
	return strcmp(((const struct moat_scan_hit *)a)->path,
		      ((const struct moat_scan_hit *)b)->path);
}

void moat_scan_result_release(struct moat_scan_result *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].path);
	free(r->v);
	moat_scan_save_free(r->save);
	moat_scan_check_free(r->check);
	memset(r, 0, sizeof(*r));
}

void moat_scan_save_free(void *save)
{
	scan_cache_free(save);
}

void moat_scan_save(const struct moat_plan *p, void *save)
{
	if (!save)
		return;
	scan_cache_write(p, save);
	scan_cache_free(save);
}

/* The scan; rec: the record to fill (the scan ahead), else one is made for
 * the next run (ret->save) from the scan ahead or the record on disk. */
static int scan_run(const struct moat_plan *p, struct scan_cache *rec,
		    struct moat_scan_result *ret, struct moat_error *err)
{
	struct scan *s = calloc(1, sizeof(*s));
	struct moat_glob *globs[MOAT_PLAN_MAX_PATHS];
	const char *pats[MOAT_PLAN_MAX_PATHS];
	struct glob_cut cuts[MOAT_PLAN_MAX_PATHS];
	struct scan_name names[MOAT_PLAN_MAX_PATHS];
	const struct moat_mask *name_mk[MOAT_PLAN_MAX_PATHS], *glob_mk[MOAT_PLAN_MAX_PATHS];
	struct scan_cache *disk = NULL, *own = NULL;
	struct link_pat lpats[MOAT_PLAN_MAX_PATHS];
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	memset(globs, 0, sizeof(globs));
	if (!s) {
		moat_error_set(err, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nmasks; i++) {
		if (p->masks[i].kind != MOAT_MASK_WORKSPACE_NAME)
			continue;
		if (!strncmp(p->masks[i].pattern, "**/", 3) &&
		    scan_name_of(p->masks[i].pattern, &names[s->nnames]))
			name_mk[s->nnames++] = &p->masks[i];
		else {
			glob_cut_of(p->masks[i].pattern, &cuts[s->nglobs]);
			glob_mk[s->nglobs] = &p->masks[i];
			pats[s->nglobs++] = p->masks[i].pattern;
		}
	}
	if (s->nglobs + s->nnames == 0)
		goto out;
	/* compiled before the walkers start (read-only while they match) */
	for (size_t i = 0; i < s->nnames; i++)
		if (!names[i].literal && glob_compile_cached(names[i].name, &names[i].g, err) < 0) {
			r = -EINVAL;
			goto out;
		}
	for (size_t i = 0; i < s->nglobs; i++)
		if (glob_compile_cached(pats[i], &globs[i], err) < 0) {
			r = -EINVAL;
			goto out;
		}
	s->wsfd = open(p->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->wsfd < 0)
		goto out; /* (no workspace: nothing in it to hide) */
	s->pats = pats;
	s->lpats = lpats;
	for (size_t i = 0; i < s->nglobs; i++) {
		int lr = moat_link_pat_of(pats[i], &lpats[s->nlpats]);

		if (lr < 0) {
			moat_error_set(err, "out of memory");
			r = lr;
			goto out;
		}
		s->nlpats += (size_t)lr;
	}
	s->plan = p;
	if (p->exempt_set) {
		s->name_mk = name_mk;
		s->glob_mk = glob_mk;
	}
	s->cuts = cuts;
	s->globs = globs;
	s->names = names;
	s->ws = p->workspace;
	s->wslen = strlen(p->workspace);
	s->max_entries = p->scan_max_entries ? p->scan_max_entries : MOAT_SCAN_MAX_ENTRIES;
	s->one_walker = moat_fsrec_on();
	s->cancel_fd = rec ? scan_ahead_cancel_fd : -1;
	if (s->one_walker) {
		const char *all[MOAT_PLAN_MAX_PATHS];
		size_t n = 0;

		for (size_t i = 0; i < p->nmasks && n < MOAT_PLAN_MAX_PATHS; i++)
			if (p->masks[i].kind == MOAT_MASK_WORKSPACE_NAME)
				all[n++] = p->masks[i].pattern;
		moat_fsrec_scan_patterns(all, n);
	}
	/* the scan ahead of this process (a session's runner started ahead),
	 * else the record on disk; a record is made for the next run unless
	 * the caller makes one (the scan ahead) */
	s->ahead = rec ? NULL : scan_ahead_for(p);
	if (!s->ahead) {
		char *key = scan_key(p);

		if (key) {
			s->ahead = disk = scan_cache_load(p, key);
			if (!rec && (own = calloc(1, sizeof(*own)))) {
				own->ws = moat_strdup(p->workspace);
				own->key = key;
				key = NULL;
				own->clock_off = realtime_off();
				own->trust_before = time(NULL) - SCAN_TRUST_SLACK_S;
				if (!own->ws) {
					scan_cache_free(own);
					own = NULL;
				}
			}
			free(key);
		}
	}
	s->rec = rec ? rec : own;
	/* (the scan ahead is never used as found: the call scans again) */
	if (!rec && !(s->check = moat_scan_check_new(p->workspace))) {
		close(s->wsfd);
		scan_cache_free(own);
		scan_cache_free(disk);
		moat_error_set(err, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	r = walk(s);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	close(s->wsfd);
	if (s->rec && r < 0)
		s->rec->failed = true;
	if (own) {
		if (r == 0 && !own->failed && (own->dirty || !disk || own->n != disk->n)) {
			own->dirty = true;
			if (own->n)
				qsort(own->dirs, own->n, sizeof(*own->dirs), cdir_cmp);
			ret->save = own;
		} else {
			scan_cache_free(own);
		}
	}
	scan_cache_free(disk);
	ret->entries = s->entries;
	if (r < 0) {
		if (r == -E2BIG)
			moat_error_set(err,
				       "%s. hint: raise sandbox.scan_max_entries in your own "
				       "configuration (a project's cannot), or give a narrower "
				       "--workspace",
				       s->why);
		else
			moat_error_set(err, "%s", s->why[0] ? s->why : strerror(-r));
		for (size_t i = 0; i < s->nhits; i++)
			free(s->hits[i].path);
		free(s->hits);
		moat_scan_save_free(ret->save);
		moat_scan_check_free(s->check);
		memset(ret, 0, sizeof(*ret));
		goto out;
	}
	if (s->nhits)
		qsort(s->hits, s->nhits, sizeof(*s->hits), cmp_hit);
	ret->v = s->hits;
	ret->n = s->nhits;
	ret->check = s->check;
out:
	for (size_t i = 0; i < s->nglobs; i++)
		if (globs[i] && !glob_is_cached(globs[i]))
			moat_glob_free(globs[i]);
	for (size_t i = 0; i < s->nnames; i++)
		if (names[i].g && !glob_is_cached(names[i].g))
			moat_glob_free(names[i].g);
	for (size_t i = 0; i < s->nlpats; i++)
		moat_link_pat_release(&lpats[i]);
	free(s);
	return r;
}

int moat_scan_workspace(const struct moat_plan *p, struct moat_scan_result *ret,
			struct moat_error *err)
{
	return scan_run(p, NULL, ret, err);
}

void moat_ns_scan_ahead(const struct moat_plan *p, int cancel_fd)
{
	struct scan_cache *c = calloc(1, sizeof(*c));
	struct moat_scan_result res;
	struct moat_error e;
	struct stat st;
	int fd, r;

	scan_cache_free(scan_ahead);
	scan_ahead = NULL;
	if (!c || !p || !p->mntns)
		goto fail;
	c->ws = moat_strdup(p->workspace);
	c->key = scan_key(p);
	if (!c->ws || !c->key)
		goto fail;
	/* local filesystems only (each directory's, scan_dev_local): change
	 * times from another machine's clock, or set by a FUSE server, cannot
	 * be judged by ours */
	fd = open(p->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	if (fstat(fd, &st) < 0 || !scan_dev_local(&c->devs, fd, st.st_dev)) {
		close(fd);
		goto fail;
	}
	close(fd);
	c->clock_off = realtime_off();
	c->trust_before = time(NULL) - SCAN_TRUST_SLACK_S;
	moat_error_clear(&e);
	/* (what it found goes: the call resolves every mask again) */
	scan_ahead_cancel_fd = cancel_fd;
	r = scan_run(p, c, &res, &e);
	scan_ahead_cancel_fd = -1;
	if (r < 0)
		c->failed = true;
	moat_scan_result_release(&res);
	if (c->failed)
		goto fail;
	if (c->n)
		qsort(c->dirs, c->n, sizeof(*c->dirs), cdir_cmp);
	scan_cache_write(p, c); /* for the next run, when anything changed */
	scan_ahead = c;
	return;
fail:
	scan_cache_free(c);
}
