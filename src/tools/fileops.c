/* The common ground of the file tools: arguments, opening beneath an
 * allowed root, the check of the real path after open, and atomic
 * replacement.
 *
 * Every open is relative to a descriptor: of the allowed root holding the
 * path (the longest of moat_policy_roots, "/" without an allow-list), or of
 * a directory opened beneath it. openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS) does the resolution in one call; where it is
 * missing, or refuses a path only because of an absolute symlink, a walk of
 * one O_NOFOLLOW component at a time does it, interpreting each symlink
 * itself and starting again from the root that holds the link's target.
 * Whatever was opened, the real path of the descriptor (/proc/self/fd/N) is
 * then checked against the policy once more. A path argument's "~" and
 * "~/..." are the home directory, by the policy's rule and from its source.
 *
 * Must never: open a path by name from the process's root or working
 * directory, follow a symlink out of the allowed roots, write a file in
 * place (writes go to a temporary file renamed over the name), or hand out a
 * descriptor whose real path the policy denies. */
#include "tools/fileops.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/json.h"
#include "base/str.h"
#include "core/policy_check.h"

/* ---- results ---------------------------------------------------------- */

int moat_fo_fail(struct moat_tool_result *ret, const char *fmt, ...)
{
	va_list ap;

	ret->ok = false;
	va_start(ap, fmt);
	vsnprintf(ret->error, sizeof(ret->error), fmt, ap);
	va_end(ap);
	return MOAT_FO_FAILED;
}

int moat_fo_invalid(struct moat_tool_result *ret, const char *fmt, ...)
{
	va_list ap;

	ret->ok = false;
	va_start(ap, fmt);
	vsnprintf(ret->error, sizeof(ret->error), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int moat_fo_sysfail(struct moat_tool_result *ret, int err, const char *path)
{
	char buf[128];

	switch (err) {
	case ENOMEM:
		snprintf(ret->error, sizeof(ret->error), "out of memory");
		ret->ok = false;
		return -ENOMEM;
	case ENOENT:
		return moat_fo_fail(ret, "%.400s does not exist", path);
	case ENOTDIR:
		return moat_fo_fail(ret, "a component of %.400s is not a directory", path);
	case EXDEV:
		return moat_fo_fail(ret,
				    "%.400s lies outside the allowed directories (or a symbolic "
				    "link on its way leads there)",
				    path);
	case ELOOP:
		return moat_fo_fail(ret,
				    "%.400s goes through too many symbolic links, or through a "
				    "link in /proc",
				    path);
	case EACCES:
	case EPERM:
		return moat_fo_fail(ret, "permission denied for %.400s", path);
	case ENAMETOOLONG:
		return moat_fo_fail(ret, "%.400s is too long a path or name", path);
	case ENOSPC:
	case EDQUOT:
		return moat_fo_fail(ret, "no space left on the device (or over quota) for %.400s",
				    path);
	case EROFS:
		return moat_fo_fail(ret, "%.400s is on a read-only file system", path);
	case EISDIR:
		return moat_fo_fail(ret, "%.400s is a directory", path);
	case ETXTBSY:
		return moat_fo_fail(ret, "%.400s is a program being run; it cannot be written",
				    path);
	default:
		return moat_fo_fail(ret, "cannot access %.400s: %s", path,
				    moat_strerror(err, buf, sizeof(buf)));
	}
}

/* ---- arguments -------------------------------------------------------- */

static const char *type_word(enum moat_fo_type t)
{
	switch (t) {
	case MOAT_FO_STRING:
		return "a string";
	case MOAT_FO_INT:
		return "an integer";
	case MOAT_FO_BOOL:
		return "true or false";
	}
	return "?";
}

int moat_fo_args(const char *tool, json_t *args, const struct moat_fo_arg *spec, size_t n,
		 json_t **vals, struct moat_tool_result *ret)
{
	const char *key;
	json_t *v;

	if (!json_is_object(args))
		return moat_fo_invalid(ret, "the arguments of %s must be a JSON object", tool);
	for (size_t i = 0; i < n; i++)
		vals[i] = NULL;
	json_object_foreach(args, key, v) {
		size_t i = 0;

		while (i < n && strcmp(spec[i].name, key) != 0)
			i++;
		if (i == n) {
			char names[160] = "";
			size_t used = 0;

			for (size_t k = 0; k < n && used < sizeof(names); k++)
				used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
							 k ? ", " : "", spec[k].name);
			return moat_fo_invalid(ret,
					       "unknown argument '%.100s' for %s (it takes %s)",
					       key, tool, names);
		}
		vals[i] = v;
	}
	for (size_t i = 0; i < n; i++) {
		bool ok;

		v = vals[i];
		if (!v) {
			if (spec[i].required)
				return moat_fo_invalid(ret, "%s needs the argument '%s' (%s)", tool,
						       spec[i].name, type_word(spec[i].type));
			continue;
		}
		switch (spec[i].type) {
		case MOAT_FO_STRING:
			ok = json_is_string(v);
			break;
		case MOAT_FO_INT:
			ok = json_is_integer(v);
			break;
		case MOAT_FO_BOOL:
			ok = json_is_boolean(v);
			break;
		default:
			ok = false;
		}
		if (!ok)
			return moat_fo_invalid(ret, "argument '%s' of %s must be %s, not %s",
					       spec[i].name, tool, type_word(spec[i].type),
					       moat_json_type_name(v));
		/* SECURITY: a NUL byte would cut a path or content short */
		if (spec[i].type == MOAT_FO_STRING &&
		    memchr(json_string_value(v), '\0', json_string_length(v)))
			return moat_fo_invalid(ret, "argument '%s' of %s holds a NUL byte",
					       spec[i].name, tool);
	}
	return 0;
}

/* SECURITY: "~" and "~/..." are expanded by the same rule as the policy's
 * (home_path in src/core/policy.c: the home directory, then the rest), so
 * the path the tool opens is the spelling the policy checked, never the
 * literal "<workspace>/~/..." next to it. "~name" is refused: the policy
 * reads it both as a name in the working directory and as a guess at that
 * user's home, and the tool must not pick one of them silently. 0 (with
 * *ret_done true when out was written: s began with "~"), MOAT_FO_FAILED or
 * -EINVAL. */
static int expand_tilde(const struct moat_policy *p, const char *s, size_t len, char *out,
			bool *ret_done, struct moat_tool_result *ret)
{
	const char *home = moat_policy_home(p);
	char joined[MOAT_PATH_MAX];
	size_t e = 1;
	int k, r;

	if (s[0] != '~')
		return 0;
	while (e < len && s[e] != '/')
		e++;
	if (e > 1)
		return moat_fo_invalid(ret,
				       "argument 'path' starts with '%.*s': only '~' and '~/...' "
				       "(the home directory) are expanded; give the absolute "
				       "path, or './%.*s' for a name in the workspace",
				       (int)(e > 100 ? 100 : e), s, (int)(e > 100 ? 100 : e), s);
	if (!home[0] || moat_path_is_windows_form(home))
		return moat_fo_fail(ret,
				    "cannot expand '~' in %.300s: no home directory is known (HOME "
				    "is unset or not an absolute path); give an absolute path",
				    s);
	k = snprintf(joined, sizeof(joined), "%s%.*s", home, (int)(len - 1), s + 1);
	if (k < 0 || (size_t)k >= sizeof(joined))
		return moat_fo_invalid(ret, "argument 'path' is longer than %d bytes",
				       MOAT_PATH_MAX - 1);
	r = moat_path_normalize_posix(joined, (size_t)k, NULL, out, MOAT_PATH_MAX);
	if (r == -ENAMETOOLONG)
		return moat_fo_invalid(ret, "argument 'path' is longer than %d bytes",
				       MOAT_PATH_MAX - 1);
	if (r < 0)
		return moat_fo_invalid(ret, "argument 'path' is not a usable path");
	*ret_done = true;
	return 0;
}

int moat_fo_abspath(const struct moat_tool_env *env, json_t *path, char *out,
		    struct moat_tool_result *ret)
{
	const char *s = json_string_value(path);
	size_t len = json_string_length(path);
	const char *cwd = env->workspace;
	bool done = false;
	int r;

	if (!len)
		return moat_fo_invalid(ret, "argument 'path' is empty");
	r = expand_tilde(env->policy, s, len, out, &done, ret);
	if (r || done)
		return r;
	if (s[0] != '/' && (!cwd || cwd[0] != '/'))
		return moat_fo_invalid(ret,
				       "argument 'path' is relative but no workspace is set; give "
				       "an absolute path");
	r = moat_path_normalize_posix(s, len, s[0] == '/' ? NULL : cwd, out, MOAT_PATH_MAX);
	if (r == -ENAMETOOLONG)
		return moat_fo_invalid(ret, "argument 'path' is longer than %d bytes",
				       MOAT_PATH_MAX - 1);
	if (r < 0)
		return moat_fo_invalid(ret, "argument 'path' is not a usable path");
	return 0;
}

/* ---- roots and resolution --------------------------------------------- */

static bool root_holds(const char *abs, const char *root, size_t len)
{
	if (len == 1 && root[0] == '/')
		return true;
	return strncmp(abs, root, len) == 0 && (abs[len] == '/' || abs[len] == '\0');
}

/* The longest allowed root holding abs, into root (MOAT_PATH_MAX bytes);
 * "/" without an allow-list; -EXDEV when no root holds abs. */
static int pick_root(const struct moat_policy *p, const char *abs, char *root, size_t *ret_len)
{
	const char *s_inline[MOAT_FO_ROOTS_INLINE], **s = s_inline;
	size_t l_inline[MOAT_FO_ROOTS_INLINE], *l = l_inline;
	size_t n, best = SIZE_MAX, blen = 0;

	n = moat_policy_roots(p, s, l, MOAT_FO_ROOTS_INLINE);
	if (n == 0) {
		root[0] = '/';
		root[1] = '\0';
		*ret_len = 1;
		return 0;
	}
	if (n > MOAT_FO_ROOTS_INLINE) {
		s = calloc(n, sizeof(*s));
		l = calloc(n, sizeof(*l));
		if (!s || !l) {
			free(s);
			free(l);
			return -ENOMEM;
		}
		n = moat_policy_roots(p, s, l, n);
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = l[i];

		while (len > 1 && s[i][len - 1] == '/')
			len--;
		if (len < MOAT_PATH_MAX && root_holds(abs, s[i], len) &&
		    (best == SIZE_MAX || len > blen)) {
			best = i;
			blen = len;
		}
	}
	if (best != SIZE_MAX) {
		memcpy(root, s[best], blen);
		root[blen] = '\0';
		*ret_len = blen;
	}
	if (s != s_inline) {
		free(s);
		free(l);
	}
	return best == SIZE_MAX ? -EXDEV : 0;
}

/* Set once the kernel said openat2 does not exist (a kernel feature: safe
 * to remember). */
static atomic_int no_openat2;

/* Resolve abs (MOAT_PATH_MAX bytes, rewritten through the symlinks met)
 * one component at a time from the root holding it, without letting the
 * kernel follow any symlink: each link is read and its target resolved from
 * the root that holds it. Returns an O_PATH descriptor. */
static int walk(const struct moat_tool_env *env, char *abs, int *ret_fd)
{
	char root[MOAT_PATH_MAX], link[MOAT_PATH_MAX], next[MOAT_PATH_MAX], name[NAME_MAX + 1];
	int hops = 0;

	for (;;) {
		const char *p;
		size_t rl;
		int cur, r;
		bool relinked = false;

		r = pick_root(env->policy, abs, root, &rl);
		if (r < 0)
			return r;
		cur = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cur < 0)
			return -errno;
		p = abs + rl;
		for (;;) {
			const char *comp;
			size_t cl;
			struct stat st;
			int fd, k;
			ssize_t n;

			while (*p == '/')
				p++;
			if (!*p)
				break;
			comp = p;
			cl = strcspn(p, "/");
			p += cl;
			if (cl > NAME_MAX) {
				close(cur);
				return -ENAMETOOLONG;
			}
			memcpy(name, comp, cl);
			name[cl] = '\0';
			fd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0 || fstat(fd, &st) < 0) {
				r = -errno;
				if (fd >= 0)
					close(fd);
				close(cur);
				return r;
			}
			if (!S_ISLNK(st.st_mode)) {
				if (*p && !S_ISDIR(st.st_mode)) {
					close(fd);
					close(cur);
					return -ENOTDIR;
				}
				close(cur);
				cur = fd;
				continue;
			}
			/* a symlink: read it, splice its target in, start over */
			n = readlinkat(fd, "", link, sizeof(link));
			r = n < 0 ? -errno : 0;
			close(fd);
			close(cur);
			if (r < 0)
				return r;
			if ((size_t)n >= sizeof(link))
				return -ENAMETOOLONG;
			link[n] = '\0';
			if (++hops > MOAT_SYMLINK_MAX)
				return -ELOOP;
			if (link[0] == '/')
				k = snprintf(next, sizeof(next), "%s%s", link, p);
			else
				k = snprintf(next, sizeof(next), "%.*s/%s%s", (int)(comp - abs),
					     abs, link, p);
			if (k < 0 || (size_t)k >= sizeof(next))
				return -ENAMETOOLONG;
			/* (the components before the link were real directories,
			 * so ".." in its target is resolved lexically right) */
			r = moat_path_normalize_posix(next, (size_t)k, NULL, abs, MOAT_PATH_MAX);
			if (r < 0)
				return r == -ENAMETOOLONG ? r : -ENOENT;
			relinked = true;
			break;
		}
		if (!relinked) {
			*ret_fd = cur;
			return 0;
		}
	}
}

/* An O_PATH descriptor of what abs names, symlinks followed beneath the
 * allowed roots. abs may be rewritten (by the walk). */
static int resolve(const struct moat_tool_env *env, char *abs, int *ret_fd)
{
	char root[MOAT_PATH_MAX];
	size_t rl;
	int r, rootfd, fd = -1, e = 0;

	r = pick_root(env->policy, abs, root, &rl);
	if (r < 0)
		return r;
	if (!atomic_load_explicit(&no_openat2, memory_order_relaxed)) {
		/* SECURITY: beneath the root; "/" as the root is the whole
		 * tree, where RESOLVE_IN_ROOT reads absolute symlinks as the
		 * kernel always does. Magic links (/proc/N/fd) never. */
		struct open_how how = {
		    .flags = O_PATH | O_CLOEXEC,
		    .resolve =
			RESOLVE_NO_MAGICLINKS | (rl == 1 ? RESOLVE_IN_ROOT : RESOLVE_BENEATH),
		};
		const char *rel = abs + rl;

		while (*rel == '/')
			rel++;
		if (!*rel)
			rel = ".";
		rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0)
			return -errno;
		/* EAGAIN: a rename raced the lookup; the kernel asks us to retry */
		for (int tries = 0; tries < 4; tries++) {
			fd = (int)syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
			e = fd < 0 ? errno : 0;
			if (fd >= 0 || e != EAGAIN)
				break;
		}
		close(rootfd);
		if (fd >= 0) {
			*ret_fd = fd;
			return 0;
		}
		if (e == ENOSYS)
			atomic_store_explicit(&no_openat2, 1, memory_order_relaxed);
		/* EXDEV: an absolute symlink (refused beneath a root even
		 * when it points inside) or a way out; ELOOP: a magic link or
		 * a loop; EPERM: a seccomp filter refusing openat2. The walk
		 * decides them itself. */
		else if (e != EXDEV && e != ELOOP && e != EAGAIN && e != EPERM)
			return -e;
	}
	return walk(env, abs, ret_fd);
}

static int fd_real_path(int fd, char *out, size_t n)
{
	char proc[40];
	ssize_t k;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	k = readlink(proc, out, n);
	if (k < 0)
		return -errno;
	if ((size_t)k >= n)
		return -ENAMETOOLONG;
	out[k] = '\0';
	return out[0] == '/' ? 0 : -ENOENT;
}

static int real_path_fail(struct moat_tool_result *ret, int r, const char *display)
{
	if (r == -ENOMEM)
		return moat_fo_sysfail(ret, ENOMEM, display);
	return moat_fo_fail(ret,
			    "cannot check the real path of %.400s (is /proc mounted?); it is not "
			    "opened",
			    display);
}

/* SECURITY: the check after open. The call was decided (and, if asked,
 * approved) for display, the path the model gave; what was opened may
 * differ (a symlink on the way, ".." after a missing name, a swap in
 * between). DENY for the real path refuses; ASK passes only when the real
 * path is the one decided, since no one was asked about another. */
static int post_check(const struct moat_tool_env *env, const char *tool, const char *real,
		      const char *display, struct moat_tool_result *ret)
{
	struct moat_decision d;

	if (moat_policy_check_path(env->policy, tool, real, &d) == 0 &&
	    (d.verdict == MOAT_ALLOW || (d.verdict == MOAT_ASK && strcmp(real, display) == 0)))
		return 0;
	if (d.verdict == MOAT_ASK)
		return moat_fo_fail(ret,
				    "refused: %.300s opens %.300s, which needs approval of its own "
				    "(%.300s); name it directly",
				    display, real, d.reason);
	if (strcmp(real, display) == 0)
		return moat_fo_fail(ret, "refused: %.400s", d.reason);
	return moat_fo_fail(ret, "refused: %.300s opens %.300s, and %.300s", display, real,
			    d.reason);
}

/* The fast path: abs is normalised (no ".", "..", "//") and lies
 * lexically beneath an allowed root; opened with RESOLVE_NO_SYMLINKS, the
 * kernel followed no symlink on the way, so what was opened is the object
 * at exactly that name when it was looked up: its real path is abs, and no
 * readlink is needed. Any symlink on the way (ELOOP), an old kernel, or
 * anything unexpected sends the caller to the slow path. */
static int open_fast(const char *abs, int flags, int *ret_fd)
{
	struct open_how how = {
	    .flags = (uint64_t)(flags | O_CLOEXEC | O_NOCTTY),
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	if (atomic_load_explicit(&no_openat2, memory_order_relaxed))
		return -ENOSYS;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, abs, &how, sizeof(how));
	if (fd < 0) {
		if (errno == ENOSYS)
			atomic_store_explicit(&no_openat2, 1, memory_order_relaxed);
		return -errno;
	}
	*ret_fd = fd;
	return 0;
}

static int wrong_type(struct moat_tool_result *ret, enum moat_fo_want want, mode_t mode,
		      const char *abs)
{
	if (want == MOAT_FO_DIRECTORY)
		return moat_fo_fail(ret, "%.400s is not a directory; read a file with read_file",
				    abs);
	if (S_ISDIR(mode))
		return moat_fo_fail(ret, "%.400s is a directory; list it with list_directory", abs);
	return moat_fo_fail(ret,
			    "%.400s is not a regular file (a FIFO, socket or device); it is not "
			    "read",
			    abs);
}

static bool type_ok(enum moat_fo_want want, mode_t mode)
{
	return want == MOAT_FO_DIRECTORY ? S_ISDIR(mode) : S_ISREG(mode);
}

/* After the resolution beneath the roots said ENOENT for abs: is abs a
 * symbolic link (or a chain of them) whose target is missing? Then say so
 * (MOAT_FO_FAILED); 0 when it is not, or cannot be told (the caller then
 * says "does not exist"). Every step is an O_PATH lookup beneath a root
 * (resolve), never an open of the target.
 *
 * SECURITY: the target is named only when it lies beneath an allowed root
 * and the policy does not deny it; a denied target gets the refusal an
 * existing one is given (post_check), one outside the roots the refusal of a
 * link leading out (EXDEV), so the message shows nothing about the
 * existence of a path the policy would not show. */
static int dangling_link(const struct moat_tool_env *env, const char *tool, const char *abs,
			 struct moat_tool_result *ret)
{
	char path[MOAT_PATH_MAX], dir[MOAT_PATH_MAX], rdir[MOAT_PATH_MAX], link[MOAT_PATH_MAX];
	char next[MOAT_PATH_MAX], root[MOAT_PATH_MAX];
	struct stat st;
	size_t rl;
	int hops = 0;

	moat_strlcpy(path, abs, sizeof(path));
	for (;;) {
		const char *slash = strrchr(path, '/'), *name = slash + 1;
		size_t dl = (size_t)(slash - path);
		bool missing = false;
		ssize_t n;
		int pfd, r, k;

		if (!*name || hops > MOAT_SYMLINK_MAX)
			return 0;
		if (hops) {
			if (pick_root(env->policy, path, root, &rl) < 0)
				return moat_fo_sysfail(ret, EXDEV, abs);
			/* every hop, as the policy checks every hop */
			r = post_check(env, tool, path, abs, ret);
			if (r)
				return r;
		}
		memcpy(dir, path, dl ? dl : 1);
		dir[dl ? dl : 1] = '\0';
		r = resolve(env, dir, &pfd);
		if (r == -ENOENT || r == -ENOTDIR) {
			/* the target's directory is missing: so is the target */
			if (!hops)
				return 0;
			missing = true;
		} else if (r < 0) {
			return 0;
		} else {
			r = fd_real_path(pfd, rdir, sizeof(rdir));
			if (r == 0 && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				r = errno == ENOENT ? 1 : -errno;
				missing = r == 1;
			}
			if (r == 0 && !S_ISLNK(st.st_mode))
				r = -EEXIST; /* there after all (a race): not ours to tell */
			if (r == 0) {
				n = readlinkat(pfd, name, link, sizeof(link));
				r = n < 0 || (size_t)n >= sizeof(link) ? -ENAMETOOLONG : 0;
				if (r == 0)
					link[n] = '\0';
			}
			close(pfd);
			if (r < 0)
				return 0;
		}
		if (missing) {
			if (!hops)
				return 0; /* abs itself: a plain missing path */
			if (hops == 1)
				return moat_fo_fail(
				    ret,
				    "%.400s is a symbolic link to %.400s, which does "
				    "not exist",
				    abs, path);
			return moat_fo_fail(ret,
					    "%.400s is a symbolic link (through %d links) to "
					    "%.400s, which does not exist",
					    abs, hops, path);
		}
		/* a link: its target, from the real directory that holds it */
		k = link[0] == '/' ? snprintf(next, sizeof(next), "%s", link)
				   : snprintf(next, sizeof(next), "%s/%s",
					      strcmp(rdir, "/") ? rdir : "", link);
		if (k < 0 || (size_t)k >= sizeof(next) ||
		    moat_path_normalize_posix(next, (size_t)k, NULL, path, sizeof(path)) < 0)
			return 0;
		hops++;
	}
}

int moat_fo_open(const struct moat_tool_env *env, const char *tool, const char *abs,
		 enum moat_fo_want want, int *ret_fd, struct stat *ret_st, char *ret_real,
		 struct moat_tool_result *ret)
{
	char path[MOAT_PATH_MAX], root[MOAT_PATH_MAX];
	int flags = want == MOAT_FO_DIRECTORY ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK;
	struct stat st, st0;
	size_t rl;
	int pfd, fd, r;

	if (!env->policy)
		return moat_fo_invalid(ret, "the tool environment has no policy");
	r = pick_root(env->policy, abs, root, &rl);
	if (r < 0)
		return moat_fo_sysfail(ret, -r, abs);

	/* SECURITY: a regular file is looked at before it is opened: opening
	 * a FIFO would block, opening a device can have effects (O_DIRECTORY
	 * opens nothing else). The descriptor is then checked to be the same
	 * file. */
	if (want == MOAT_FO_DIRECTORY ||
	    (fstatat(AT_FDCWD, abs, &st0, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st0.st_mode))) {
		if (open_fast(abs, flags, &fd) == 0) {
			if (fstat(fd, &st) == 0 && type_ok(want, st.st_mode) &&
			    (want == MOAT_FO_DIRECTORY ||
			     (st.st_dev == st0.st_dev && st.st_ino == st0.st_ino))) {
				moat_strlcpy(ret_real, abs, MOAT_PATH_MAX);
				goto opened;
			}
			close(fd);
		}
	}

	/* the slow path: beneath the root, symlinks followed there, the real
	 * path read back; the type checked on an O_PATH descriptor before the
	 * file itself is opened */
	moat_strlcpy(path, abs, sizeof(path));
	r = resolve(env, path, &pfd);
	if (r == -ENOENT) {
		r = dangling_link(env, tool, abs, ret);
		if (r)
			return r;
		return moat_fo_sysfail(ret, ENOENT, abs);
	}
	if (r < 0)
		return moat_fo_sysfail(ret, -r, abs);
	r = fd_real_path(pfd, ret_real, MOAT_PATH_MAX);
	if (r < 0) {
		close(pfd);
		return real_path_fail(ret, r, abs);
	}
	r = post_check(env, tool, ret_real, abs, ret);
	if (r == 0 && fstat(pfd, &st) < 0)
		r = moat_fo_sysfail(ret, errno, abs);
	if (r == 0 && !type_ok(want, st.st_mode))
		r = wrong_type(ret, want, st.st_mode, abs);
	if (r) {
		close(pfd);
		return r;
	}
	fd = moat_fo_reopen(pfd, flags);
	close(pfd);
	if (fd < 0)
		return moat_fo_sysfail(ret, -fd, abs);
	*ret_fd = fd;
	*ret_st = st;
	return 0;
opened:
	r = post_check(env, tool, ret_real, abs, ret);
	if (r) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	*ret_st = st;
	return 0;
}

int moat_fo_reopen(int opath_fd, int flags)
{
	char proc[40];
	int fd;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", opath_fd);
	fd = open(proc, flags | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

/* ---- targets for writing ---------------------------------------------- */

void moat_fo_target_close(struct moat_fo_target *t)
{
	if (t->dirfd >= 0)
		close(t->dirfd);
	t->dirfd = -1;
}

/* The directory of real (a path ending in "/name"): its length. */
static size_t dir_len(const char *real)
{
	const char *slash = strrchr(real, '/');

	return slash && slash > real ? (size_t)(slash - real) : 1;
}

/* Remove the made directories below fd, the deepest of them (its real path
 * is the first dl bytes of real), deepest first; each only while its real
 * path is still the one it was made at and it is empty (rmdir refuses
 * anything else). Takes fd. Returns how many are left. */
static unsigned unmake(int fd, const char *real, size_t dl, unsigned made)
{
	char want[MOAT_PATH_MAX], got[MOAT_PATH_MAX];

	if (dl >= sizeof(want)) {
		close(fd);
		return made;
	}
	memcpy(want, real, dl);
	want[dl] = '\0';
	while (made > 0) {
		char *slash = strrchr(want, '/');
		int up;

		if (!slash || slash == want || fd_real_path(fd, got, sizeof(got)) < 0 ||
		    strcmp(got, want) != 0)
			break;
		up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0)
			break;
		close(fd);
		fd = up;
		*slash = '\0';
		if (fd_real_path(fd, got, sizeof(got)) < 0 || strcmp(got, want) != 0 ||
		    unlinkat(fd, slash + 1, AT_REMOVEDIR) < 0)
			break;
		made--;
	}
	close(fd);
	return made;
}

void moat_fo_target_unmake(struct moat_fo_target *t)
{
	int fd;

	if (!t->made || t->dirfd < 0)
		return;
	fd = openat(t->dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		t->made = unmake(fd, t->real, dir_len(t->real), t->made);
}

/* A refusal of a directory write_file would make, checked as the file is:
 * DENY refuses; ASK passes only for a directory on the way to display, the
 * path the call was decided for (see post_check). */
static int check_new_dir(const struct moat_tool_env *env, const char *tool, const char *dir,
			 const char *display, struct moat_tool_result *ret)
{
	struct moat_decision d;
	size_t dl = strlen(dir);
	bool on_way = strncmp(dir, display, dl) == 0 && display[dl] == '/';

	if (moat_policy_check_path(env->policy, tool, dir, &d) == 0 &&
	    (d.verdict == MOAT_ALLOW || (d.verdict == MOAT_ASK && on_way)))
		return 0;
	return moat_fo_fail(ret,
			    "refused: writing %.300s would create the directory %.300s, and "
			    "%.300s; nothing was created",
			    display, dir, d.reason);
}

/* write_file: dir, abs's directory, does not exist. Make its missing
 * directories: the deepest that exists is resolved as any parent is
 * (beneath a root, symlinks followed there, its real path read back); then,
 * before anything is made, the real path of every directory to make and of
 * the file itself (name) is checked against the policy; then each missing
 * component is made with mkdirat in the one before and opened
 * O_DIRECTORY | O_NOFOLLOW, so a name that is (or was swapped for) a
 * symbolic link is refused rather than followed, and its real path must be
 * the one checked. On success *ret_dfd is the deepest, opened O_RDONLY, its
 * real path in rdir, t->made the number made (the last components of
 * rdir); on failure what was made is removed again. */
static int make_parents(const struct moat_tool_env *env, const char *tool, const char *dir,
			const char *name, const char *abs, struct moat_fo_target *t, int *ret_dfd,
			char *rdir, struct moat_tool_result *ret)
{
	char base[MOAT_PATH_MAX], rbase[MOAT_PATH_MAX], root[MOAT_PATH_MAX];
	char plan[MOAT_PATH_MAX], got[MOAT_PATH_MAX];
	size_t rl, keep = strlen(dir), bl, pl, cur_end;
	const char *rest;
	int pfd, cur, r, k;

	r = pick_root(env->policy, dir, root, &rl);
	if (r < 0)
		return moat_fo_sysfail(ret, -r, abs);
	/* the deepest existing directory, never above the root */
	for (;;) {
		size_t was = keep;

		while (keep > 0 && dir[keep - 1] != '/')
			keep--;
		keep = keep > 1 ? keep - 1 : 1;
		if (keep < rl || keep >= was)
			return moat_fo_fail(ret, "the directory of %.400s does not exist", abs);
		memcpy(base, dir, keep);
		base[keep] = '\0';
		r = resolve(env, base, &pfd);
		if (r == 0)
			break;
		if (r != -ENOENT)
			return moat_fo_sysfail(ret, -r, abs);
	}
	rest = dir + keep + (dir[keep] == '/');
	r = fd_real_path(pfd, rbase, sizeof(rbase));
	if (r < 0) {
		close(pfd);
		return real_path_fail(ret, r, abs);
	}
	bl = strcmp(rbase, "/") ? strlen(rbase) : 0;
	k = snprintf(plan, sizeof(plan), "%.*s/%s/%s", (int)bl, rbase, rest, name);
	if (k < 0 || (size_t)k >= sizeof(plan)) {
		close(pfd);
		return moat_fo_sysfail(ret, ENAMETOOLONG, abs);
	}
	/* SECURITY: every directory to make, and the file, before any is made */
	r = post_check(env, tool, plan, abs, ret);
	for (pl = bl + 1; r == 0 && plan[pl]; pl++) {
		if (plan[pl] != '/')
			continue;
		plan[pl] = '\0';
		r = check_new_dir(env, tool, plan, abs, ret);
		plan[pl] = '/';
		if (pl == (size_t)k - strlen(name) - 1)
			break;
	}
	if (r) {
		close(pfd);
		return r;
	}
	/* make them, one component at a time */
	cur = pfd;
	cur_end = bl;
	t->made = 0;
	for (pl = bl + 1;; pl++) {
		const char *comp = plan + pl;
		size_t cl = strcspn(comp, "/");
		char cname[NAME_MAX + 1];
		int nfd;
		bool made = false;

		if (!comp[cl])
			break; /* the file's own name */
		if (cl > NAME_MAX) {
			r = moat_fo_sysfail(ret, ENAMETOOLONG, abs);
			break;
		}
		memcpy(cname, comp, cl);
		cname[cl] = '\0';
		pl += cl;
		if (mkdirat(cur, cname, 0755) == 0) {
			made = true;
		} else if (errno != EEXIST || t->made) {
			/* (a name that appeared in a directory made here just
			 * now: someone else is writing there) */
			r = errno == EEXIST
				? moat_fo_fail(ret,
					       "%.400s changed while its directories were being "
					       "created; nothing was written",
					       abs)
				: moat_fo_sysfail(ret, errno, abs);
			break;
		}
		nfd = openat(cur, cname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			struct stat st;
			int e = errno;

			plan[pl] = '\0';
			if (fstatat(cur, cname, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				r = moat_fo_fail(
				    ret,
				    "%.300s is a symbolic link that leads nowhere; "
				    "write_file makes a missing directory itself, never "
				    "through a link (writing %.300s)",
				    plan, abs);
			else
				r = moat_fo_sysfail(ret, e == ELOOP ? ENOTDIR : e, abs);
			plan[pl] = '/';
			break;
		}
		plan[pl] = '\0';
		/* the real path must be the one checked */
		if (fd_real_path(nfd, got, sizeof(got)) < 0 || strcmp(got, plan) != 0) {
			plan[pl] = '/';
			if (made)
				t->made++;
			close(cur);
			cur = nfd;
			cur_end = pl;
			r = moat_fo_fail(ret,
					 "%.400s changed while its directories were being created; "
					 "nothing was written",
					 abs);
			break;
		}
		plan[pl] = '/';
		close(cur);
		cur = nfd;
		cur_end = pl;
		if (made)
			t->made++;
	}
	if (r) {
		if (t->made) {
			/* the made ones end with cur (those made come last) */
			t->made = unmake(cur, plan, cur_end, t->made);
		} else {
			close(cur);
		}
		return r;
	}
	/* cur was opened O_RDONLY (pfd, the O_PATH one, is not left here: at
	 * least one component was missing) */
	memcpy(rdir, plan, (size_t)k - strlen(name) - 1);
	rdir[(size_t)k - strlen(name) - 1] = '\0';
	*ret_dfd = cur;
	return 0;
}

int moat_fo_open_target(const struct moat_tool_env *env, const char *tool, const char *abs,
			bool mkdirs, struct moat_fo_target *t, struct moat_tool_result *ret)
{
	char path[MOAT_PATH_MAX], dir[MOAT_PATH_MAX], rdir[MOAT_PATH_MAX], link[MOAT_PATH_MAX];
	char next[MOAT_PATH_MAX], asked[MOAT_PATH_MAX];

	t->dirfd = -1;
	t->exists = false;
	t->made = 0;
	if (!env->policy)
		return moat_fo_invalid(ret, "the tool environment has no policy");
	moat_strlcpy(path, abs, sizeof(path));
	for (int hops = 0;; hops++) {
		const char *slash = strrchr(path, '/'), *name = slash + 1;
		size_t dl = (size_t)(slash - path);
		struct stat st;
		int pfd, dfd, r, k;
		size_t rl;
		ssize_t n;

		if (hops > MOAT_SYMLINK_MAX)
			return moat_fo_sysfail(ret, ELOOP, abs);
		if (!*name)
			return moat_fo_fail(ret, "%.400s is a directory, not a file", abs);
		if (strlen(name) > NAME_MAX)
			return moat_fo_sysfail(ret, ENAMETOOLONG, abs);
		memcpy(dir, path, dl ? dl : 1);
		dir[dl ? dl : 1] = '\0';
		r = pick_root(env->policy, dir, rdir, &rl);
		if (r < 0)
			return moat_fo_sysfail(ret, -r, abs);
		/* no symlink on the way: the directory's real path is dir */
		if (open_fast(dir, O_RDONLY | O_DIRECTORY, &dfd) == 0) {
			moat_strlcpy(rdir, dir, sizeof(rdir));
			goto dir_open;
		}
		moat_strlcpy(asked, dir, sizeof(asked)); /* (resolve may rewrite dir) */
		r = resolve(env, dir, &pfd);
		if (r == -ENOENT && mkdirs && !hops) {
			r = make_parents(env, tool, asked, name, abs, t, &dfd, rdir, ret);
			if (r)
				return r;
			/* the real path was checked before anything was made; in a
			 * directory made just now the name is new, and anything
			 * there was put there meanwhile by someone else */
			k = snprintf(t->real, sizeof(t->real), "%s/%s", rdir, name);
			moat_strlcpy(t->name, name, sizeof(t->name));
			t->dirfd = dfd;
			if (k < 0 || (size_t)k >= sizeof(t->real) ||
			    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) {
				moat_fo_target_unmake(t);
				moat_fo_target_close(t);
				return moat_fo_fail(
				    ret,
				    "%.400s changed while its directories were being "
				    "created; nothing was written",
				    abs);
			}
			return 0;
		}
		if (r == -ENOENT)
			return moat_fo_fail(
			    ret, "the directory of %.400s does not exist%s", abs,
			    !mkdirs ? " (write_file creates missing directories)"
			    : hops  ? " (a symbolic link leads there, and write_file makes "
				      "no directory through a link)"
				    : "");
		if (r < 0)
			return moat_fo_sysfail(ret, -r, abs);
		dfd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = dfd < 0 ? -errno : 0;
		close(pfd);
		if (r < 0)
			return moat_fo_sysfail(ret, -r, abs);
		r = fd_real_path(dfd, rdir, sizeof(rdir));
		if (r < 0) {
			close(dfd);
			return real_path_fail(ret, r, abs);
		}
	dir_open:
		k = snprintf(t->real, sizeof(t->real), "%s/%s", strcmp(rdir, "/") ? rdir : "",
			     name);
		if (k < 0 || (size_t)k >= sizeof(t->real)) {
			close(dfd);
			return moat_fo_sysfail(ret, ENAMETOOLONG, abs);
		}
		r = post_check(env, tool, t->real, abs, ret);
		if (r) {
			close(dfd);
			return r;
		}
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = errno;
			if (r != ENOENT) {
				close(dfd);
				return moat_fo_sysfail(ret, r, abs);
			}
			/* a new file */
			moat_strlcpy(t->name, name, sizeof(t->name));
			t->dirfd = dfd;
			return 0;
		}
		if (S_ISLNK(st.st_mode)) {
			/* SECURITY: follow the link ourselves: its target is
			 * resolved beneath a root and checked like any path */
			n = readlinkat(dfd, name, link, sizeof(link));
			r = n < 0 ? errno : 0;
			close(dfd);
			if (r == EINVAL || r == ENOENT)
				continue; /* no longer a link: swapped since; look again */
			if (r)
				return moat_fo_sysfail(ret, r, abs);
			if ((size_t)n >= sizeof(link))
				return moat_fo_sysfail(ret, ENAMETOOLONG, abs);
			link[n] = '\0';
			k = link[0] == '/' ? snprintf(next, sizeof(next), "%s", link)
					   : snprintf(next, sizeof(next), "%s/%s", rdir, link);
			if (k < 0 || (size_t)k >= sizeof(next) ||
			    moat_path_normalize_posix(next, (size_t)k, NULL, path, sizeof(path)) <
				0)
				return moat_fo_sysfail(ret, ENAMETOOLONG, abs);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			close(dfd);
			return moat_fo_fail(ret, "%.400s is a directory, not a file", abs);
		}
		if (!S_ISREG(st.st_mode)) {
			close(dfd);
			return moat_fo_fail(ret,
					    "%.400s is not a regular file (a FIFO, socket or "
					    "device); it is not written",
					    abs);
		}
		/* SECURITY: another name of the same file may lie outside the
		 * allowed directories (the rename below would leave it alone,
		 * but the user asked for the file to change there too) */
		if (st.st_nlink > 1) {
			close(dfd);
			return moat_fo_fail(ret,
					    "%.400s has %lu hard links; hard links are refused for "
					    "writes (another name of the file may lie outside the "
					    "allowed directories)",
					    abs, (unsigned long)st.st_nlink);
		}
		moat_strlcpy(t->name, name, sizeof(t->name));
		t->dirfd = dfd;
		t->exists = true;
		t->st = st;
		return 0;
	}
}

static uint64_t tmp_token(void)
{
	static atomic_uint_fast64_t counter;
	uint64_t x;
	struct timespec ts;

	if (getrandom(&x, sizeof(x), GRND_NONBLOCK) == (ssize_t)sizeof(x))
		return x;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 40);
	return x ^ atomic_fetch_add(&counter, 0x9e3779b97f4a7c15ull);
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len > (1u << 30) ? (1u << 30) : len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int moat_fo_replace(struct moat_fo_target *t, const char *data, size_t len, bool unchanged,
		    const char *display, struct moat_tool_result *ret)
{
	char tmp[NAME_MAX + 1];
	int fd = -1, r;

	for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
		snprintf(tmp, sizeof(tmp), ".%.200s.moat-%016llx", t->name,
			 (unsigned long long)tmp_token());
		/* SECURITY: a fresh name, never an existing file or link;
		 * private until the mode is set */
		fd = openat(t->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    t->exists ? 0600 : 0644);
		if (fd < 0 && errno != EEXIST)
			return moat_fo_sysfail(ret, errno, display);
	}
	if (fd < 0)
		return moat_fo_sysfail(ret, EEXIST, display);
	r = write_all(fd, data, len);
	if (r == 0 && t->exists) {
		/* SECURITY: setuid and setgid are dropped, as the kernel drops
		 * them when a file is written */
		if (t->st.st_uid != geteuid() || t->st.st_gid != getegid()) {
			if (fchown(fd, t->st.st_uid, t->st.st_gid) < 0)
				(void)!fchown(fd, (uid_t)-1, t->st.st_gid);
		}
		if (fchmod(fd, t->st.st_mode & 0777) < 0)
			r = -errno;
	}
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && unchanged) {
		struct stat now;

		if (fstatat(t->dirfd, t->name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
		    (t->exists ? !same_file(&now, &t->st) : true)) {
			unlinkat(t->dirfd, tmp, 0);
			return moat_fo_fail(
			    ret,
			    "%.400s changed while it was being edited; read it again "
			    "and retry",
			    display);
		}
	}
	if (r == 0 && renameat(t->dirfd, tmp, t->dirfd, t->name) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(t->dirfd, tmp, 0);
		return moat_fo_sysfail(ret, -r, display);
	}
	/* the rename itself must reach the disk too; a directory that cannot
	 * be synced (some file systems) still holds the new file */
	(void)fsync(t->dirfd);
	return 0;
}

/* ---- text ------------------------------------------------------------- */

int moat_fo_utf8_fix(struct moat_buf *b, size_t from)
{
	struct moat_buf o = MOAT_BUF_INIT;
	size_t i, len = b->len;

	if (from >= len)
		return 0;
	i = from + moat_utf8_valid_prefix(b->data + from, len - from);
	if (i == len)
		return 0;
	moat_buf_reserve(&o, len + len / 8 + 16);
	moat_buf_append(&o, b->data, i);
	if (moat_buf_append_utf8(&o, b->data + i, len - i, false) < 0) {
		moat_buf_release(&o);
		return -ENOMEM;
	}
	moat_buf_release(b);
	*b = o;
	return 0;
}

int moat_fo_put_name(struct moat_buf *b, const char *name, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t k = moat_utf8_valid_prefix(name + i, len - i), j = 0;

		/* the valid run, with control characters and backslashes escaped */
		while (j < k) {
			unsigned char c = (unsigned char)name[i + j];

			if (c < 0x20 || c == 0x7f || c == '\\') {
				moat_buf_printf(b, "\\x%02x", c);
				j++;
				continue;
			}
			size_t run = j;

			while (run < k && !((unsigned char)name[i + run] < 0x20 ||
					    name[i + run] == 0x7f || name[i + run] == '\\'))
				run++;
			moat_buf_append(b, name + i + j, run - j);
			j = run;
		}
		i += k;
		if (i < len) {
			moat_buf_printf(b, "\\x%02x", (unsigned char)name[i]);
			i++;
		}
	}
	return b->oom ? -ENOMEM : 0;
}
