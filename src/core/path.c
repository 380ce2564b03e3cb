/* Path normalization and symlink resolution: the one place where a path an
 * agent wrote is turned into the strings the policy compares with patterns.
 *
 * Normalization is pure string work. The form of a path decides how it is
 * read: "/..." is a Unix path ('\\' is an ordinary file name character);
 * "X:\\..." or "X:/..." is a Windows drive path and "\\\\server\\share..." a UNC
 * path (both separators count, the drive letter is lower-cased, ".." stops
 * at the drive or share root); anything else is relative and joined to cwd,
 * whose form then decides. "\\\\?\\" and "\\\\.\\" prefixes are unwrapped for
 * drives and "UNC\\"; other device paths, drive-relative "C:x" and a UNC
 * path without server or share are refused: there is no safe guess. In
 * drive and UNC components, alternate data streams (":...") and trailing
 * dots and spaces are removed as Windows does when it opens the file.
 *
 * Resolution reads the filesystem with lstat, readlink, open(O_PATH) and
 * close only. The common case costs an open, a readlink of /proc/self/fd/N
 * and a close: when the kernel names the file exactly as the normalized
 * path, no symlink was involved. Otherwise (a link, a missing file, no
 * /proc), and for short paths where an lstat per component is cheaper, the
 * path is walked component by component with the kernel's own rules (links
 * followed in order, ".." applied to what a link resolved to).
 *
 * Must never: write, create or modify anything on the filesystem; turn a
 * refused path into an accepted one (no truncation, no dropping of bad
 * bytes); print; read the environment. */
#include "core/path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/str.h"

enum path_form { FORM_RELATIVE, FORM_UNIX, FORM_DRIVE, FORM_UNC };

/* Room for a cwd and an input, each under PATH_MAX, before ".." shortens
 * them: the result is checked against PATH_MAX only at the end. */
#define NORM_BUF (2 * MOAT_PATH_MAX + 16)
/* A link target spliced in front of the rest of a path being walked. */
#define PEND_MAX (2 * MOAT_PATH_MAX)

struct norm {
	char *buf;
	size_t cap;
	size_t len;
	size_t root; /* length of "/", "c:/" or "//server/share": ".." stops here */
};

static bool is_sep(char c, bool win)
{
	return c == '/' || (win && c == '\\');
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static int put(struct norm *n, const char *s, size_t k)
{
	/* SECURITY: never truncate; keep room for the terminator */
	if (k >= n->cap - n->len)
		return -ENAMETOOLONG;
	memcpy(n->buf + n->len, s, k);
	n->len += k;
	return 0;
}

static void pop(struct norm *n)
{
	size_t i = n->len;

	/* SECURITY: ".." is clamped at the root, never climbs out of it */
	if (i <= n->root)
		return;
	while (i > n->root && n->buf[i - 1] != '/')
		i--;
	/* drop the slash before the component too, unless it belongs to the root */
	n->len = i > n->root ? i - 1 : n->root;
}

/* The name Windows opens for one component of a drive or UNC path: an
 * alternate data stream suffix is cut ("x::$DATA" and "x:s" open file x,
 * "d::$INDEX_ALLOCATION" directory d) and trailing dots and spaces are
 * dropped ("secrets." is "secrets"). A component left empty (".. ", "...")
 * is refused rather than guessed at. */
static int win_component(const char *c, size_t *len)
{
	size_t k = *len;
	const char *colon = memchr(c, ':', k);

	if (colon)
		k = (size_t)(colon - c);
	while (k > 0 && (c[k - 1] == '.' || c[k - 1] == ' '))
		k--;
	if (k == 0)
		return -EINVAL;
	*len = k;
	return 0;
}

/* Append the components of [s, s+len): empty and "." dropped, ".." pops. */
static int put_components(struct norm *n, const char *s, size_t len, bool win)
{
	size_t i = 0;

	while (i < len) {
		size_t st, k;
		int r;

		while (i < len && is_sep(s[i], win))
			i++;
		st = i;
		while (i < len && !is_sep(s[i], win))
			i++;
		k = i - st;
		if (k == 0 || (k == 1 && s[st] == '.'))
			continue;
		if (k == 2 && s[st] == '.' && s[st + 1] == '.') {
			pop(n);
			continue;
		}
		if (win) {
			r = win_component(s + st, &k);
			if (r < 0)
				return r;
		}
		if (n->buf[n->len - 1] != '/') {
			r = put(n, "/", 1);
			if (r < 0)
				return r;
		}
		r = put(n, s + st, k);
		if (r < 0)
			return r;
	}
	return 0;
}

static int put_drive(struct norm *n, char letter)
{
	char root[3] = {ascii_lower(letter), ':', '/'};

	n->len = 0;
	n->root = 3;
	return put(n, root, 3);
}

/* One UNC name (server or share) starting at *pos. */
static int unc_name(const char *in, size_t len, size_t *pos, size_t *ret_start, size_t *ret_len)
{
	size_t s = *pos, e = s;

	while (e < len && !is_sep(in[e], true))
		e++;
	if (e == s)
		return -EINVAL;
	/* "." and ".." would be removed by a later normalization (not
	 * idempotent); "?" is the prefix of a device path */
	if ((e - s == 1 && (in[s] == '.' || in[s] == '?')) ||
	    (e - s == 2 && in[s] == '.' && in[s + 1] == '.'))
		return -EINVAL;
	*ret_start = s;
	*ret_len = e - s;
	*pos = e;
	return 0;
}

static int put_unc(struct norm *n, const char *in, size_t len, size_t *pos)
{
	size_t ss, sl, hs, hl;
	int r;

	r = unc_name(in, len, pos, &ss, &sl);
	if (r < 0)
		return r;
	if (*pos >= len)
		return -EINVAL; /* "\\\\server" without a share */
	(*pos)++;
	r = unc_name(in, len, pos, &hs, &hl);
	if (r < 0)
		return r;
	n->len = 0;
	if ((r = put(n, "//", 2)) < 0 || (r = put(n, in + ss, sl)) < 0 ||
	    (r = put(n, "/", 1)) < 0 || (r = put(n, in + hs, hl)) < 0)
		return r;
	n->root = n->len;
	return 0;
}

/* Decide the form of [in, in+len) and write its root. Returns the form, or
 * a negative errno; *ret_pos is where the components start. */
static int put_root(struct norm *n, const char *in, size_t len, bool win_ok, size_t *ret_pos)
{
	size_t pos;
	int r;

	if (in[0] == '/') {
		n->len = 0;
		n->root = 1;
		r = put(n, "/", 1);
		*ret_pos = 1;
		return r < 0 ? r : FORM_UNIX;
	}
	if (!win_ok || len < 2)
		return FORM_RELATIVE;
	if (is_alpha(in[0]) && in[1] == ':') {
		/* SECURITY: "C:" and "C:x" are relative to a per-drive cwd we
		 * cannot know; refusing beats guessing */
		if (len == 2 || !is_sep(in[2], true))
			return -EINVAL;
		r = put_drive(n, in[0]);
		*ret_pos = 3;
		return r < 0 ? r : FORM_DRIVE;
	}
	if (in[0] != '\\' || in[1] != '\\')
		return FORM_RELATIVE;
	pos = 2;
	if (len >= 4 && (in[2] == '?' || in[2] == '.') && is_sep(in[3], true)) {
		/* SECURITY: \\\\?\\C:\\x is C:\\x; leaving it as a share named
		 * "C:" would dodge every drive pattern */
		pos = 4;
		if (len - pos >= 2 && is_alpha(in[pos]) && in[pos + 1] == ':' &&
		    (len - pos == 2 || is_sep(in[pos + 2], true))) {
			r = put_drive(n, in[pos]);
			*ret_pos = pos + 2;
			return r < 0 ? r : FORM_DRIVE;
		}
		if (len - pos >= 4 && ascii_lower(in[pos]) == 'u' &&
		    ascii_lower(in[pos + 1]) == 'n' && ascii_lower(in[pos + 2]) == 'c' &&
		    is_sep(in[pos + 3], true))
			pos += 4;
		else
			return -EINVAL; /* devices (\\\\.\\PhysicalDrive0, pipes, GUID volumes) */
	}
	r = put_unc(n, in, len, &pos);
	*ret_pos = pos;
	return r < 0 ? r : FORM_UNC;
}

static int validate(const char *s, size_t len)
{
	if (len == 0)
		return -EINVAL;
	if (len >= MOAT_PATH_MAX)
		return -ENAMETOOLONG;
	/* SECURITY: a NUL byte would make the kernel see a shorter path than
	 * the one checked; invalid or overlong UTF-8 could spell a separator
	 * or "." a pattern does not see */
	if (!moat_utf8_valid(s, len))
		return -EINVAL;
	return 0;
}

static int norm_path(struct norm *n, const char *in, size_t len, const char *cwd, bool win_ok)
{
	size_t pos = 0;
	bool win;
	int form, r;

	form = put_root(n, in, len, win_ok, &pos);
	if (form < 0)
		return form;
	if (form == FORM_RELATIVE) {
		size_t clen, cpos = 0;

		if (!cwd)
			return -EINVAL;
		clen = strnlen(cwd, MOAT_PATH_MAX);
		r = validate(cwd, clen);
		if (r < 0)
			return r;
		form = put_root(n, cwd, clen, win_ok, &cpos);
		if (form < 0)
			return form;
		if (form == FORM_RELATIVE)
			return -EINVAL; /* cwd must be absolute */
		win = form != FORM_UNIX;
		r = put_components(n, cwd + cpos, clen - cpos, win);
		if (r < 0)
			return r;
		/* "\\x" against a Windows cwd: the root of its drive or share */
		if (win && is_sep(in[0], true))
			n->len = n->root;
	} else {
		win = form != FORM_UNIX;
	}
	r = put_components(n, in + pos, len - pos, win);
	if (r < 0)
		return r;
	n->buf[n->len] = '\0';
	return form;
}

/* Is [s, s+len) a path normalization leaves as it is: ASCII without NUL,
 * no empty, "." or ".." component, no trailing '/' ("/" alone is one)? */
static bool clean_form(const char *s, size_t len)
{
	size_t i = 0;

	if (len == 0)
		return false;
	if (s[0] == '/') {
		if (len == 1)
			return true;
		i = 1;
	}
	for (;;) { /* at the start of a component */
		if (i >= len || s[i] == '/')
			return false;
		if (s[i] == '.' && (i + 1 == len || s[i + 1] == '/' ||
				    (s[i + 1] == '.' && (i + 2 == len || s[i + 2] == '/'))))
			return false;
		for (; i < len && s[i] != '/'; i++)
			if ((unsigned char)s[i] - 1u >= 0x7fu) /* NUL or not ASCII */
				return false;
		if (i == len)
			return true;
		i++;
	}
}

/* The common cases without the general machinery: an absolute Unix path
 * already in normal form is its own normalization, and a relative one in
 * normal form (not a drive or UNC spelling) is appended to a Unix cwd in
 * normal form. 0 when out was written, 1 to take the general way (which
 * then also reports every error). */
static int normalize_clean(const char *in, size_t len, const char *cwd, char *out, size_t outsz,
			   bool win_ok)
{
	size_t clen, total;

	if (len >= MOAT_PATH_MAX || !clean_form(in, len))
		return 1;
	if (in[0] == '/') {
		if (len >= outsz)
			return 1;
		memcpy(out, in, len);
		out[len] = '\0';
		return 0;
	}
	if (win_ok && len >= 2 &&
	    ((is_alpha(in[0]) && in[1] == ':') || (in[0] == '\\' && in[1] == '\\')))
		return 1;
	if (!cwd || cwd[0] != '/')
		return 1;
	clen = strnlen(cwd, MOAT_PATH_MAX);
	if (clen >= MOAT_PATH_MAX || !clean_form(cwd, clen))
		return 1;
	if (clen == 1)
		clen = 0; /* "/" + in */
	total = clen + 1 + len;
	if (total >= MOAT_PATH_MAX || total >= outsz)
		return 1;
	memcpy(out, cwd, clen);
	out[clen] = '/';
	memcpy(out + clen + 1, in, len);
	out[total] = '\0';
	return 0;
}

static int normalize(const char *in, size_t len, const char *cwd, char *out, size_t outsz,
		     bool win_ok)
{
	char buf[NORM_BUF];
	struct norm n = {buf, sizeof(buf), 0, 0};
	int r;

	if (!in || !out)
		return -EINVAL;
	r = validate(in, len);
	if (r < 0)
		return r;
	r = norm_path(&n, in, len, cwd, win_ok);
	if (r < 0)
		return r;
	if (n.len >= MOAT_PATH_MAX || n.len >= outsz)
		return -ENAMETOOLONG;
	memcpy(out, buf, n.len + 1);
	return 0;
}

int moat_path_normalize(const char *in, size_t len, const char *cwd, char *out, size_t outsz)
{
	if (in && out && normalize_clean(in, len, cwd, out, outsz, true) == 0)
		return 0;
	return normalize(in, len, cwd, out, outsz, true);
}

int moat_path_normalize_posix(const char *in, size_t len, const char *cwd, char *out, size_t outsz)
{
	if (in && out && normalize_clean(in, len, cwd, out, outsz, false) == 0)
		return 0;
	return normalize(in, len, cwd, out, outsz, false);
}

bool moat_path_is_windows_form(const char *p)
{
	if (!p)
		return false;
	return (is_alpha(p[0]) && p[1] == ':' && p[2] == '/') || (p[0] == '/' && p[1] == '/');
}

/* ---- resolution ---- */

struct visitor {
	int (*visit)(const char *path, void *ud);
	void *ud;
	size_t lastlen; /* SIZE_MAX: nothing remembered */
	const char *seen; /* visited already (lex, walked again), or NULL */
	size_t seenlen;
	char last[MOAT_PATH_MAX];
};

static void visitor_init(struct visitor *v, int (*visit)(const char *, void *), void *ud)
{
	v->visit = visit;
	v->ud = ud;
	v->lastlen = SIZE_MAX;
	v->seen = NULL;
	v->seenlen = 0;
}

/* s is NUL-terminated at len. The same string is not visited twice in a
 * row, nor v->seen again. */
static int emit(struct visitor *v, const char *s, size_t len)
{
	if (len == v->lastlen && memcmp(v->last, s, len) == 0)
		return 0;
	if (v->seen && len == v->seenlen && memcmp(v->seen, s, len) == 0)
		return 0;
	if (len < sizeof(v->last)) {
		memcpy(v->last, s, len);
		v->lastlen = len;
	} else {
		v->lastlen = SIZE_MAX;
	}
	return v->visit(s, v->ud);
}

/* true when the kernel names the file behind fd exactly path[0..len) */
static bool fd_is_path(int fd, const char *path, size_t len)
{
	char proc[32] = "/proc/self/fd/";
	char digits[12];
	char got[MOAT_PATH_MAX];
	size_t nd = 0, pl = strlen(proc);
	unsigned int u = (unsigned int)fd;
	ssize_t n;

	do {
		digits[nd++] = (char)('0' + u % 10);
		u /= 10;
	} while (u && nd < sizeof(digits));
	while (nd)
		proc[pl++] = digits[--nd];
	proc[pl] = '\0';
	/* no /proc, or a name ending in " (deleted)": not equal, walk slowly */
	n = readlink(proc, got, sizeof(got));
	return n >= 0 && (size_t)n == len && memcmp(got, path, len) == 0;
}

/* The slow walk: the kernel's algorithm, with a visit per link. */
struct walk {
	struct visitor *v;
	int hops;
	size_t curlen;	     /* cur[0..curlen): existing, link-free; "" is the root */
	size_t pendlen, pos; /* pend[pos..pendlen): still to walk */
	char cur[MOAT_PATH_MAX];
	char pend[PEND_MAX];
	char link[MOAT_PATH_MAX];
	char out[NORM_BUF];
};

/* Visit the lexical normalization of a[0..alen) + "/" + b[0..blen). */
static int emit_joined(struct walk *w, const char *a, size_t alen, const char *b, size_t blen)
{
	struct norm n = {w->out, sizeof(w->out), 0, 1};
	int r;

	if ((r = put(&n, "/", 1)) < 0 || (r = put_components(&n, a, alen, false)) < 0 ||
	    (r = put_components(&n, b, blen, false)) < 0)
		return r;
	if (n.len >= MOAT_PATH_MAX)
		return -ENAMETOOLONG;
	n.buf[n.len] = '\0';
	return emit(w->v, n.buf, n.len);
}

/* An absolute link target usually shares leading directories with the
 * link's own directory cur[0..known), just found existing and link-free:
 * take them as walked instead of asking lstat again. */
static void skip_known(struct walk *w, size_t known)
{
	size_t c = 0, p = w->pos;

	for (;;) {
		size_t s, k, e;

		while (p < w->pendlen && w->pend[p] == '/')
			p++;
		s = p;
		while (p < w->pendlen && w->pend[p] != '/')
			p++;
		k = p - s;
		if (k == 0 || c >= known)
			return;
		e = c + 1; /* cur[c] is '/'; cur holds no "." or ".." to confuse */
		while (e < known && w->cur[e] != '/')
			e++;
		if (e - c - 1 != k || memcmp(w->cur + c + 1, w->pend + s, k) != 0)
			return;
		c = e;
		w->curlen = c;
		w->pos = p;
	}
}

static int walk(struct walk *w, const char *raw, size_t rawlen)
{
	if (rawlen >= sizeof(w->pend))
		return -ENAMETOOLONG;
	memcpy(w->pend, raw, rawlen);
	w->pendlen = rawlen;
	w->pos = 0;
	w->curlen = 0;
	w->hops = 0;
	for (;;) {
		struct stat st;
		size_t s, k, old, restlen;
		ssize_t n;
		int r;

		while (w->pos < w->pendlen && w->pend[w->pos] == '/')
			w->pos++;
		if (w->pos == w->pendlen)
			break;
		s = w->pos;
		while (w->pos < w->pendlen && w->pend[w->pos] != '/')
			w->pos++;
		k = w->pos - s;
		if (k == 1 && w->pend[s] == '.')
			continue;
		if (k == 2 && w->pend[s] == '.' && w->pend[s + 1] == '.') {
			/* cur is physical: its parent is the real parent */
			while (w->curlen > 0 && w->cur[w->curlen - 1] != '/')
				w->curlen--;
			if (w->curlen > 0)
				w->curlen--;
			continue;
		}
		old = w->curlen;
		if (k + 1 >= sizeof(w->cur) - w->curlen)
			return -ENAMETOOLONG;
		w->cur[w->curlen++] = '/';
		memcpy(w->cur + w->curlen, w->pend + s, k);
		w->curlen += k;
		w->cur[w->curlen] = '\0';
		if (lstat(w->cur, &st) < 0) {
			int e = errno;

			/* nothing exists (or can be seen) from here on: the
			 * rest is created, or fails, as spelled. EACCES: the
			 * caller cannot look further, nor can the tool */
			if (e == ENOENT || e == ENOTDIR || e == EACCES)
				return emit_joined(w, w->cur, old, w->pend + s, w->pendlen - s);
			return -e;
		}
		if (!S_ISLNK(st.st_mode))
			continue;
		/* SECURITY: a link inside /proc (/proc/self, /proc/thread-self,
		 * /proc/PID/cwd, root, exe, fd/N) is resolved by the kernel for
		 * the process that opens it and in its namespace, not by its
		 * text: what readlink shows moat is not what the tool opens
		 * (/proc/self/cwd is moat's cwd here, the tool's there). */
		if (w->curlen > 6 && memcmp(w->cur, "/proc/", 6) == 0)
			return -EXDEV;
		/* SECURITY: bounded like the kernel's own limit; a loop is an error */
		if (++w->hops > MOAT_SYMLINK_MAX)
			return -ELOOP;
		n = readlink(w->cur, w->link, sizeof(w->link));
		if (n < 0)
			return -errno;
		if ((size_t)n >= sizeof(w->link))
			return -ENAMETOOLONG;
		if (n == 0) /* an empty target resolves to nothing (ENOENT) */
			return emit_joined(w, w->cur, w->curlen, w->pend + w->pos,
					   w->pendlen - w->pos);
		/* SECURITY: a target we cannot spell is refused, not skipped */
		if (!moat_utf8_valid(w->link, (size_t)n))
			return -EINVAL;
		/* pend = target "/" rest; a relative target starts in the
		 * link's directory, an absolute one at the root */
		w->curlen = w->link[0] == '/' ? 0 : old;
		restlen = w->pendlen - w->pos;
		if ((size_t)n + 1 + restlen >= sizeof(w->pend))
			return -ENAMETOOLONG;
		memmove(w->pend + n + 1, w->pend + w->pos, restlen);
		memcpy(w->pend, w->link, (size_t)n);
		w->pend[n] = '/';
		w->pendlen = (size_t)n + 1 + restlen;
		w->pos = 0;
		r = emit_joined(w, w->cur, w->curlen, w->pend, w->pendlen);
		if (r)
			return r;
		if (w->link[0] == '/')
			skip_known(w, old);
	}
	if (w->curlen == 0)
		return emit(w->v, "/", 1);
	w->cur[w->curlen] = '\0';
	return emit(w->v, w->cur, w->curlen);
}

static int slow_walk(struct visitor *v, const char *raw, size_t rawlen)
{
	struct walk *w = malloc(sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->v = v;
	r = walk(w, raw, rawlen);
	free(w);
	return r;
}

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef RESOLVE_NO_MAGICLINKS
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#endif

struct moat_open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};

/* openat2(O_PATH, RESOLVE_NO_SYMLINKS): an fd when no component of path is
 * a symlink, -ELOOP when one is, -ENOSYS on kernels before 5.6 (or -EPERM
 * under a seccomp filter that refuses it), another -errno otherwise. */
static int open_no_symlinks(const char *path)
{
	struct moat_open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* Up to this many components an lstat each is cheaper than open, readlink
 * of /proc/self/fd/N and close (measured: about 1.1 us per lstat, 5 us for
 * the three). */
#define WALK_FIRST_COMPONENTS 3

static size_t count_components(const char *p)
{
	size_t n = 0;

	for (; *p; p++)
		if (p[0] == '/' && p[1] && p[1] != '/')
			n++;
	return n;
}

/* Visit whatever the kernel would reach through raw (an absolute Unix
 * spelling of lex, with its ".." still in place; raw == lex when there is
 * none), lex itself already visited. */
static int resolve_raw(struct visitor *v, const char *lex, size_t lexlen, const char *raw,
		       size_t rawlen)
{
	int fd, r;

	/* Fastest: one openat2 that refuses every symlink on the way. When it
	 * succeeds there is no link to follow, and without links the kernel's
	 * reading of raw is lex itself. */
	r = open_no_symlinks(raw);
	if (r >= 0) {
		close(r);
		return 0;
	}
	if (r != -ENOSYS && r != -EPERM)
		return slow_walk(v, raw, rawlen);
	if (raw == lex && count_components(lex) <= WALK_FIRST_COMPONENTS)
		return slow_walk(v, raw, rawlen);
	/* A missing path (or any other failure) takes the walk: it stops at
	 * the first missing component, and climbing ancestors with open() to
	 * find the deepest existing one measured slower. */
	fd = open(raw, O_PATH | O_CLOEXEC);
	if (fd >= 0) {
		bool same = fd_is_path(fd, lex, lexlen);

		close(fd);
		if (same)
			return 0;
	}
	return slow_walk(v, raw, rawlen);
}

/* Visit lex, then whatever the kernel would reach through raw, then, when
 * the spellings differ, whatever it would reach through lex. */
static int resolve(struct visitor *v, const char *lex, size_t lexlen, const char *raw,
		   size_t rawlen)
{
	int r;

	r = emit(v, lex, lexlen);
	if (r)
		return r;
	if (moat_path_is_windows_form(lex))
		return 0;
	if (lex[0] != '/' || raw[0] != '/')
		return -EINVAL;
	r = resolve_raw(v, lex, lexlen, raw, rawlen);
	if (r || raw == lex || (rawlen == lexlen && !memcmp(raw, lex, lexlen)))
		return r;
	/* SECURITY: a tool that collapses ".." in the string before it opens
	 * the file (Node's path.resolve, Python's normpath) opens lex, every
	 * link on it followed: "nope/../k/config" with k a link to ~/.kube
	 * fails for the kernel at "nope", and the walk of raw visits what
	 * follows only as spelled */
	v->seen = lex;
	v->seenlen = lexlen;
	r = resolve_raw(v, lex, lexlen, lex, lexlen);
	v->seen = NULL;
	return r;
}

int moat_path_resolve_each(const char *normalized, int (*visit)(const char *path, void *ud),
			   void *ud)
{
	struct visitor v;
	size_t len;

	if (!normalized || !visit)
		return -EINVAL;
	len = strnlen(normalized, MOAT_PATH_MAX);
	if (len == 0)
		return -EINVAL;
	if (len >= MOAT_PATH_MAX)
		return -ENAMETOOLONG;
	visitor_init(&v, visit, ud);
	return resolve(&v, normalized, len, normalized, len);
}

/* true when [s, s+len) has a ".." component ('/' separators only) */
static bool has_dotdot(const char *s, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++)
		if (s[i] == '.' && s[i + 1] == '.' && (i == 0 || s[i - 1] == '/') &&
		    (i + 2 == len || s[i + 2] == '/'))
			return true;
	return false;
}

struct raw_ctx {
	char lex[MOAT_PATH_MAX];
	char raw[PEND_MAX];
};

/* The kernel's reading of in: cwd (normalized, Unix) "/" in, or in itself. */
static int build_raw(struct raw_ctx *c, const char *in, size_t len, const char *cwd,
		     size_t *ret_len)
{
	size_t n = 0;
	int r;

	if (in[0] != '/') {
		if (!cwd)
			return -EINVAL;
		r = moat_path_normalize_posix(cwd, strnlen(cwd, MOAT_PATH_MAX), NULL, c->raw,
					      MOAT_PATH_MAX);
		if (r < 0)
			return r;
		n = strlen(c->raw);
		c->raw[n++] = '/';
	}
	if (len >= sizeof(c->raw) - n)
		return -ENAMETOOLONG;
	memcpy(c->raw + n, in, len);
	n += len;
	c->raw[n] = '\0';
	*ret_len = n;
	return 0;
}

static int resolve_posix_reading(struct visitor *v, const char *in, size_t len, const char *cwd)
{
	struct raw_ctx *c;
	size_t lexlen, rawlen;
	int r;

	/* a Windows cwd has no Linux reading; an absolute Windows path needs a cwd */
	if (!cwd || cwd[0] != '/' || moat_path_is_windows_form(cwd))
		return 0;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	r = moat_path_normalize_posix(in, len, cwd, c->lex, sizeof(c->lex));
	if (r == 0 && has_dotdot(in, len))
		r = build_raw(c, in, len, cwd, &rawlen);
	if (r == 0) {
		lexlen = strlen(c->lex);
		if (has_dotdot(in, len))
			r = resolve(v, c->lex, lexlen, c->raw, rawlen);
		else
			r = resolve(v, c->lex, lexlen, c->lex, lexlen);
	}
	free(c);
	return r;
}

int moat_path_resolve_input(const char *in, size_t len, const char *cwd, char *ret_norm,
			    size_t normsz, int (*visit)(const char *path, void *ud), void *ud)
{
	struct visitor v;
	struct raw_ctx *c;
	size_t nlen, rawlen;
	int r;

	if (!visit)
		return -EINVAL;
	r = moat_path_normalize(in, len, cwd, ret_norm, normsz);
	if (r < 0)
		return r;
	nlen = strlen(ret_norm);
	visitor_init(&v, visit, ud);
	if (moat_path_is_windows_form(ret_norm)) {
		r = emit(&v, ret_norm, nlen);
		if (r)
			return r;
		/* SECURITY: on Linux "C:/../x" and "C:\\x" are relative names;
		 * what the kernel would open must pass as well */
		return resolve_posix_reading(&v, in, len, cwd);
	}
	if (!has_dotdot(in, len))
		return resolve(&v, ret_norm, nlen, ret_norm, nlen);
	/* SECURITY: "/ws/link/../x" is not "/ws/x" when link is a symlink */
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	r = build_raw(c, in, len, cwd, &rawlen);
	if (r == 0)
		r = resolve(&v, ret_norm, nlen, c->raw, rawlen);
	free(c);
	return r;
}

/* ---- argument names and containment ---- */

static bool ascii_ieq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ascii_lower(a[i]) != ascii_lower(b[i]))
			return false;
	return true;
}

/* camelCase spelling of a suffix: "sourcePath", "outputDir" (the suffix's
 * capital follows a lower-case letter or digit, so "XPath" is not one). */
static bool camel_suffix(const char *name, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	char c;

	if (n <= k || memcmp(name + n - k, suffix, k) != 0)
		return false;
	c = name[n - k - 1];
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* Checked for every argument of every call: the last byte picks the only
 * names it can be ("path", "_dir", "directory", "cwd"), so most names cost a
 * strlen and one comparison. */
bool moat_path_arg_name(const char *name)
{
	size_t n;

	if (!name)
		return false;
	n = strlen(name);
	if (n < 3)
		return false;
	switch (ascii_lower(name[n - 1])) {
	case 'd':
		return n == 3 && ascii_ieq(name, "cwd", 3);
	case 'h':
		return (n == 8 && ascii_ieq(name, "filepath", 8)) ||
		       (n == 4 && ascii_ieq(name, "path", 4)) ||
		       (n >= 5 && ascii_ieq(name + n - 5, "_path", 5)) ||
		       camel_suffix(name, n, "Path");
	case 'r':
		return (n >= 4 && ascii_ieq(name + n - 4, "_dir", 4)) ||
		       camel_suffix(name, n, "Dir");
	case 'y':
		return (n == 9 && ascii_ieq(name, "directory", 9)) ||
		       (n >= 10 && ascii_ieq(name + n - 10, "_directory", 10)) ||
		       camel_suffix(name, n, "Directory");
	default:
		return false;
	}
}

bool moat_path_within(const char *p, const char *dir)
{
	size_t dl;

	if (!p || !dir || !p[0] || !dir[0])
		return false;
	dl = strlen(dir);
	while (dl > 0 && dir[dl - 1] == '/')
		dl--;
	if (dl == 0)
		return true; /* "/" holds everything */
	/* SECURITY: component-wise, "/ws" does not hold "/ws_evil" */
	return strncmp(p, dir, dl) == 0 && (p[dl] == '\0' || p[dl] == '/');
}

bool moat_path_has_dotdot(const char *p)
{
	for (const char *d = strstr(p, ".."); d; d = strstr(d + 1, ".."))
		if ((d == p || d[-1] == '/') && (d[2] == '/' || !d[2]))
			return true;
	return false;
}

bool moat_path_physical(const char *cwd, const char *path, char *out, size_t outsz)
{
	char cur[MOAT_PATH_MAX], real[PATH_MAX];
	const char *p = path;
	bool missing = false;
	int n;

	/* (a working directory that is a link itself: its target's parent) */
	if (path[0] != '/' && realpath(cwd, real))
		cwd = real;
	n = snprintf(cur, sizeof(cur), "%s", path[0] == '/' ? "/" : cwd);
	if (n < 0 || (size_t)n >= sizeof(cur))
		return false;
	while (*p) {
		size_t cl, l = strlen(cur);
		struct stat st;

		while (*p == '/')
			p++;
		cl = strcspn(p, "/");
		if (!cl)
			break;
		if (cl == 1 && p[0] == '.') {
			p += cl;
			continue;
		}
		if (cl == 2 && p[0] == '.' && p[1] == '.' && !missing) {
			char *sl = strrchr(cur, '/');

			if (sl && sl != cur)
				*sl = '\0';
			else
				cur[1] = '\0';
			p += cl;
			continue;
		}
		if (l + cl + 2 > sizeof(cur))
			return false;
		if (strcmp(cur, "/"))
			cur[l++] = '/';
		memcpy(cur + l, p, cl);
		cur[l + cl] = '\0';
		p += cl;
		if (missing)
			continue;
		/* (a link: where it leads, fully; a missing name: the rest
		 * lexically, as a file to be made) */
		if (lstat(cur, &st) < 0) {
			missing = true;
		} else if (S_ISLNK(st.st_mode)) {
			/* (a link that leads nowhere yet: a ".." after it is not
			 * known, its target's place may be made) */
			if (!realpath(cur, real)) {
				if (moat_path_has_dotdot(p))
					return false;
				missing = true;
				continue;
			}
			if (strlen(real) >= sizeof(cur))
				return false;
			memcpy(cur, real, strlen(real) + 1);
		}
	}
	if (missing && moat_path_normalize_posix(cur, strlen(cur), "/", out, outsz) < 0)
		return false;
	if (!missing && (size_t)snprintf(out, outsz, "%s", cur) >= outsz)
		return false;
	return true;
}
