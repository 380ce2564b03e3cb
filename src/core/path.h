/* Path normalization and symlink resolution for policy checks.
 *
 * moat_path_normalize is pure string work: Unix absolute paths, Windows drive
 * paths (drive letter lower-cased, '\\' to '/'), UNC paths (\\\\server\\share
 * -> //server/share), relative paths joined to cwd; '.' removed, '..' clamped
 * at the root, repeated slashes collapsed, trailing slash dropped.
 * Refuses (-EINVAL) NUL bytes, invalid UTF-8, empty input; -ENAMETOOLONG over
 * PATH_MAX. Never "fixes up" a bad path into an allowed one.
 *
 * moat_path_resolve_each reads the filesystem (lstat, readlink, open(O_PATH),
 * close; never writes) and calls visit() for every path a check must pass:
 * the normalized path itself, every symlink hop's target (interior and leaf
 * links, chains, relative links), and the final resolved path. A path that
 * does not exist yet is resolved through its deepest existing ancestor.
 * Drive and UNC forms are visited as they are (no filesystem). */
#ifndef MOAT_CORE_PATH_H
#define MOAT_CORE_PATH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define MOAT_PATH_MAX PATH_MAX
#define MOAT_SYMLINK_MAX 40

/* '\\' is a separator only in drive ("X:\\", "X:/") and UNC ("\\\\") input,
 * and in relative input against such a cwd; "//x" is Unix ("/x"). "\\\\?\\"
 * and "\\\\.\\" are unwrapped for drives and "UNC\\"; drive-relative "C:x",
 * device paths and a UNC path without server or share are -EINVAL. out is
 * written only on success; cwd may be NULL when in is absolute. */
int moat_path_normalize(const char *in, size_t len, const char *cwd, char *out, size_t outsz);
/* normalized must come from moat_path_normalize (a leading "//" means UNC).
 * visit returns 0 to continue, non-zero to stop (that value is returned).
 * Returns 0, a visit() value, or a negative errno (-ELOOP past MOAT_SYMLINK_MAX;
 * -EXDEV for a path through a symlink inside /proc, such as /proc/self or
 * /proc/PID/fd/N, whose target depends on the process that opens it). */
int moat_path_resolve_each(const char *normalized, int (*visit)(const char *path, void *ud),
			   void *ud);
/* true for argument names that hold paths: path, file_path, filepath,
 * directory, cwd, and any name ending in "_path", "_dir" or "_directory"
 * (ASCII case ignored) or in camelCase "Path", "Dir", "Directory"
 * ("sourcePath", "outputDir"). "paths" arrays are the policy's business. */
bool moat_path_arg_name(const char *name);
/* true when p equals dir or lies beneath it (component-wise, "/ws" vs
 * "/ws_evil"); "/" holds everything. Both normalized. */
bool moat_path_within(const char *p, const char *dir);

/* The path as the Linux kernel reads it: '\\' and "C:" are ordinary
 * characters, so "C:\\x" is a relative file name. Same checks and errors as
 * moat_path_normalize; cwd (when needed) must be a Unix absolute path. */
int moat_path_normalize_posix(const char *in, size_t len, const char *cwd, char *out, size_t outsz);
/* true when a normalized path is in drive ("c:/...") or UNC ("//server/share") form */
bool moat_path_is_windows_form(const char *normalized);
/* Normalize `in` into ret_norm (as moat_path_normalize), then visit every path
 * a check must pass, closing what a normalized string alone cannot show:
 *  - ".." after a symlink: the kernel applies ".." to the link's target, so
 *    "/ws/link/../x" may open a file outside /ws; the physical result is
 *    visited as well as the lexical one;
 *  - ".." after a missing name: "/ws/nope/../link/x" fails for the kernel,
 *    but a tool that collapses ".." first opens "/ws/link/x": the lexical
 *    path is resolved too, every link on it followed;
 *  - a Windows-looking path on Linux: "C:/../x" or "C:\\x" is a relative
 *    name for the kernel; its POSIX reading (against a Unix cwd) is resolved
 *    and visited after the Windows form.
 * The first visit is always ret_norm. Returns the errors of both functions. */
int moat_path_resolve_input(const char *in, size_t len, const char *cwd, char *ret_norm,
			    size_t normsz, int (*visit)(const char *path, void *ud), void *ud);

/* Does path hold a ".." component? */
bool moat_path_has_dotdot(const char *path);
/* path (absolute, or relative to cwd) as the kernel resolves it: each
 * link on the way followed before a ".." after it applies
 * (/var/run/../etc is /etc where /var/run -> /run); the part past the
 * first missing component normalised as written. Reads the filesystem
 * (lstat, realpath). true with out filled; false when it does not fit. */
bool moat_path_physical(const char *cwd, const char *path, char *out, size_t outsz);

#endif
