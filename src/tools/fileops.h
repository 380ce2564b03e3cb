/* Shared machinery of the file tools (internal to src/tools): argument
 * checking, opening beneath an allowed root, the check of the real path
 * after open, and the atomic replacement of a file.
 *
 * Helpers return 0 on success, MOAT_FO_FAILED when the tool refused or
 * failed (ret->ok is false and ret->error says why: the tool returns 0), or
 * a negative errno (-EINVAL for bad arguments, -ENOMEM) with ret->error
 * filled, which the tool returns as it is. */
#ifndef MOAT_TOOLS_FILEOPS_H
#define MOAT_TOOLS_FILEOPS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include <jansson.h>

#include "base/str.h"
#include "core/path.h"
#include "tools/tools.h"

#define MOAT_FO_FAILED 1
/* bytes from the start of a file scanned for a NUL byte to call it binary */
#define MOAT_FO_BINARY_PROBE 8192u
/* allowed roots looked at without allocating */
#define MOAT_FO_ROOTS_INLINE 64u

/* r from a helper -> what the tool returns */
static inline int moat_fo_ret(int r)
{
	return r < 0 ? r : 0;
}

/* ret->ok = false and ret->error = the sentence; returns MOAT_FO_FAILED. */
int moat_fo_fail(struct moat_tool_result *ret, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* ret->error = the sentence; returns -EINVAL. */
int moat_fo_invalid(struct moat_tool_result *ret, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A failed system call on path, as a sentence ("... does not exist").
 * err is a positive errno. MOAT_FO_FAILED, or -ENOMEM for ENOMEM. */
int moat_fo_sysfail(struct moat_tool_result *ret, int err, const char *path);

/* ---- arguments ---- */
enum moat_fo_type {
	MOAT_FO_STRING, /* a JSON string without NUL bytes */
	MOAT_FO_INT,	/* a JSON integer */
	MOAT_FO_BOOL,	/* true or false */
};

struct moat_fo_arg {
	const char *name;
	enum moat_fo_type type;
	bool required;
};

/* Check args against spec (n entries): an object, no unknown key, every
 * required key present, every value of its type. vals[i] is the value of
 * spec[i] (borrowed) or NULL. */
int moat_fo_args(const char *tool, json_t *args, const struct moat_fo_arg *spec, size_t n,
		 json_t **vals, struct moat_tool_result *ret);

/* The path argument as an absolute, normalised path (relative paths
 * against env->workspace); out holds MOAT_PATH_MAX bytes. */
int moat_fo_abspath(const struct moat_tool_env *env, json_t *path, char *out,
		    struct moat_tool_result *ret);

/* ---- opening ---- */

enum moat_fo_want {
	MOAT_FO_REGULAR,   /* opened O_RDONLY|O_NONBLOCK */
	MOAT_FO_DIRECTORY, /* opened O_RDONLY|O_DIRECTORY */
};

/* Open what abs names for reading (symlinks followed, beneath the allowed
 * roots) and check its real path against the policy for tool; refuse
 * anything but want, with a sentence saying what it is. A regular file is
 * never opened before its type is known (FIFOs, devices). ret_real
 * (MOAT_PATH_MAX bytes) receives the real path. */
int moat_fo_open(const struct moat_tool_env *env, const char *tool, const char *abs,
		 enum moat_fo_want want, int *ret_fd, struct stat *ret_st, char *ret_real,
		 struct moat_tool_result *ret);

/* Reopen an O_PATH descriptor with flags (through /proc/self/fd): the same
 * file, whatever its name now means. Returns the new fd or -errno. */
int moat_fo_reopen(int opath_fd, int flags);

/* Where a write goes: a directory descriptor and one name in it. */
struct moat_fo_target {
	int dirfd;		  /* O_RDONLY|O_DIRECTORY, -1 when not open */
	char name[NAME_MAX + 1];  /* one component, never a symlink when checked */
	char real[MOAT_PATH_MAX]; /* real path of dirfd + "/" + name, policy-checked */
	bool exists;		  /* name is an existing regular file, st its status */
	struct stat st;
	unsigned made; /* directories made for it: the last components of
			* real's directory (mkdirs) */
};

/* Resolve abs for writing: the parent directory beneath the allowed roots,
 * symlinks at the last component followed (each hop beneath a root again),
 * the real path checked against the policy for tool. Refuses directories,
 * FIFOs, devices and hard-linked files. t->dirfd is open on success only.
 *
 * mkdirs: a missing directory of abs itself (not of where a link at its
 * name leads) is made, component by component beneath the deepest one that
 * exists: every directory to make and the file are checked against the
 * policy before the first is made, each is made with mkdirat and opened
 * O_NOFOLLOW (a symbolic link in the way is refused, never followed), and
 * its real path must be the one checked. t->made says how many; on a
 * failure nothing made is left. */
int moat_fo_open_target(const struct moat_tool_env *env, const char *tool, const char *abs,
			bool mkdirs, struct moat_fo_target *t, struct moat_tool_result *ret);
void moat_fo_target_close(struct moat_fo_target *t);
/* Remove the directories the open made (t->made), deepest first, each only
 * while it is empty and still where it was made: for a write that failed
 * after the open. t->dirfd stays open. */
void moat_fo_target_unmake(struct moat_fo_target *t);

/* Replace t's file with data atomically: a temporary file beside it
 * (O_CREAT|O_EXCL|O_NOFOLLOW), written, mode kept (new files 0644 less the
 * umask), fsync, renameat over the name, fsync of the directory. With
 * unchanged, refuses (and leaves the file alone) when the name no longer
 * holds the file t->st describes. display is the path named in errors. */
int moat_fo_replace(struct moat_fo_target *t, const char *data, size_t len, bool unchanged,
		    const char *display, struct moat_tool_result *ret);

/* ---- text ---- */

/* Replace NUL bytes and invalid UTF-8 in b from offset from on with U+FFFD. */
int moat_fo_utf8_fix(struct moat_buf *b, size_t from);
/* Append name with control characters, backslashes and invalid UTF-8
 * written as \xNN (valid UTF-8, one line). */
int moat_fo_put_name(struct moat_buf *b, const char *name, size_t len);

#endif
