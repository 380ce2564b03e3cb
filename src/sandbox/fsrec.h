/* What a preparation of the mounts looks at, watched as it looks
 * (fsrec.c): how a sandbox armed ahead of its call knows that nothing it
 * was made from has changed since. */
#ifndef MOAT_SANDBOX_FSREC_H
#define MOAT_SANDBOX_FSREC_H

#include <dirent.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Watch what every lookup of ns.c depends on, before it looks, from now
 * on (an earlier record dropped) until moat_fsrec_end; moat_fswatch_start
 * then takes the watch over. */
void moat_fsrec_begin(void);
void moat_fsrec_end(void);
bool moat_fsrec_on(void);
/* A directory the caller relies on without reading it (the scan's record
 * says what is in it): watched whole, as if opened. */
void moat_fsrec_dir_at(int dfd, const char *name);
/* A directory (an absolute path) the workspace scan reads, or relies on
 * unread (its record): watched for what the scan depends on, the entries
 * that are directories and the names moat_fsrec_scan_patterns may pick;
 * what is written to its other files does not matter. top: the
 * workspace itself (the way to it watched too); else a directory found
 * in one the scan watched so before it read it. */
void moat_fsrec_scan_dir(const char *path, bool top);
/* The scan's patterns, for moat_fsrec_scan_dir (copied). */
void moat_fsrec_scan_patterns(const char *const *pats, size_t n);
/* While recording: fd readable means the recording is given up (the call
 * it was made for has come); moat_fsrec_cancelled says so (and the record
 * is then spoiled), asking the kernel once in 64 calls. -1: never. */
void moat_fsrec_cancel_fd(int fd);
/* The record so far cannot make a watch (moat_fswatch_start would give
 * NULL). */
bool moat_fsrec_spoiled(void);
bool moat_fsrec_cancelled(void);
/* Forget the record (moat_fswatch_start takes it over otherwise). */
void moat_fsrec_drop(void);
/* A lookup the record cannot follow (glob(3)): no watch can be made. */
void moat_fsrec_unrecordable(void);

/* A filesystem (statfs f_type) whose every change this kernel makes, so
 * that its times and inotify events can be trusted: ext2/3/4, xfs, btrfs,
 * tmpfs, f2fs (never a network filesystem or FUSE, whose server sets them). */
bool moat_fs_local_type(unsigned long f_type);

struct moat_fswatch;
/* The watch made while recording (the record ends); NULL when it cannot
 * be relied on (fsrec.c says when). */
struct moat_fswatch *moat_fswatch_start(void);
/* Nothing that matters changed since the watch started (and none of the
 * events so far was one that matters). */
bool moat_fswatch_quiet(struct moat_fswatch *w);
void moat_fswatch_free(struct moat_fswatch *w);

/* the recorders (fsrec_wrap.h puts them in place of the calls) */
int moat_fsrec_stat(const char *p, struct stat *st);
int moat_fsrec_lstat(const char *p, struct stat *st);
int moat_fsrec_access(const char *p, int mode);
int moat_fsrec_fstatat(int dfd, const char *name, struct stat *st, int flags);
int moat_fsrec_open(const char *p, int flags, ...);
int moat_fsrec_openat(int dfd, const char *name, int flags, ...);
DIR *moat_fsrec_opendir(const char *p);
DIR *moat_fsrec_fdopendir(int fd);
char *moat_fsrec_realpath(const char *p, char *out);
ssize_t moat_fsrec_readlink(const char *p, char *buf, size_t n);
ssize_t moat_fsrec_readlinkat(int dfd, const char *name, char *buf, size_t n);

#endif
