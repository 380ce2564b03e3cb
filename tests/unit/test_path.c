/* Unit tests of src/core/path.c: normalization as a table (Unix, Windows
 * drive, UNC, relative, limits, refused bytes), argument names, containment,
 * and symlink resolution against a real directory tree under /tmp. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/str.h"
#include "core/path.h"
#include "tap.h"

#define CWD "/home/u/proj"

struct ncase {
	const char *in;
	size_t len; /* 0: strlen(in) */
	const char *cwd;
	const char *want; /* NULL: error */
	int err;
};

/* clang-format off */
#define OK(i, c, w) {i, 0, c, w, 0}
#define BAD(i, c, e) {i, 0, c, NULL, e}

static const struct ncase cases[] = {
	/* Unix absolute */
	OK("/etc/../etc/passwd", NULL, "/etc/passwd"),
	OK("/", NULL, "/"),
	OK("//", NULL, "/"),
	OK("////a//b/", NULL, "/a/b"),
	OK("/../../etc", NULL, "/etc"),
	OK("/..", NULL, "/"),
	OK("/a/./b/.", NULL, "/a/b"),
	OK("/a/b/..", NULL, "/a"),
	OK("/a/..", NULL, "/"),
	OK("/a/b/../../..", NULL, "/"),
	OK("/...", NULL, "/..."),
	OK("/a/..b/c../.d", NULL, "/a/..b/c../.d"),
	OK("/ws/", CWD, "/ws"),
	/* a leading "//" is Unix (the kernel reads "//etc" as "/etc"), not UNC */
	OK("//etc/passwd", NULL, "/etc/passwd"),
	OK("//server/share/f", NULL, "/server/share/f"),
	/* on a Unix path a backslash is a file name character */
	OK("/a\\b", NULL, "/a\\b"),
	OK("/a\\..\\..\\etc", NULL, "/a\\..\\..\\etc"),
	OK("/\\\\server\\share", NULL, "/\\\\server\\share"),
	OK("/c:/x", NULL, "/c:/x"),
	OK("/tmp/\xc3\xbc/\xe6\x97\xa5", NULL, "/tmp/\xc3\xbc/\xe6\x97\xa5"),
	/* relative */
	OK(".", CWD, CWD),
	OK("./", CWD, CWD),
	OK("./x/../..", CWD, "/home/u"),
	OK("src/app.py", CWD, CWD "/src/app.py"),
	OK("README.md", CWD, CWD "/README.md"),
	OK("a//b/./c/", CWD, CWD "/a/b/c"),
	OK("../../../../../x", CWD, "/x"),
	OK("..", "/", "/"),
	OK("x", "/", "/x"),
	OK("x", "//a/../b/", "/b/x"),
	OK("~", CWD, CWD "/~"),
	OK("~/x", CWD, CWD "/~/x"),
	OK("a\\b", CWD, CWD "/a\\b"),
	OK("\\x", CWD, CWD "/\\x"),
	OK("...", CWD, CWD "/..."),
	BAD("x", NULL, -EINVAL),
	BAD("x", "", -EINVAL),
	BAD("x", "rel/dir", -EINVAL),
	BAD("x", "C:", -EINVAL),
	BAD("x", "/a\xff", -EINVAL),
	/* Windows drive */
	OK("C:\\proj\\file.py", NULL, "c:/proj/file.py"),
	OK("C:/proj/file.py", NULL, "c:/proj/file.py"),
	OK("c:/proj/file.py", NULL, "c:/proj/file.py"),
	OK("C:\\A\\..\\B", NULL, "c:/B"),
	OK("c:\\..\\..\\Windows", NULL, "c:/Windows"),
	OK("C:\\", NULL, "c:/"),
	OK("C:/", NULL, "c:/"),
	OK("C:\\..", NULL, "c:/"),
	OK("C:\\a\\\\b\\", NULL, "c:/a/b"),
	OK("C:\\a/b\\.\\c", NULL, "c:/a/b/c"),
	OK("Z:\\x", CWD, "z:/x"),
	/* Windows opens "D:" as D, "x::$DATA" as x, "secrets." as secrets */
	OK("C:\\a\\D:\\b", NULL, "c:/a/D/b"),
	OK("C:\\p\\.env::$DATA", NULL, "c:/p/.env"),
	OK("C:\\p\\.env:x:$DATA", NULL, "c:/p/.env"),
	OK("C:\\p\\.ssh::$INDEX_ALLOCATION\\k", NULL, "c:/p/.ssh/k"),
	OK("C:\\p\\secrets. . ", NULL, "c:/p/secrets"),
	OK("\\\\srv\\sh\\.env.", NULL, "//srv/sh/.env"),
	BAD("C:\\p\\.. \\x", NULL, -EINVAL),
	BAD("C:\\p\\...\\x", NULL, -EINVAL),
	BAD("C:\\p\\::$DATA", NULL, -EINVAL),
	BAD("C:", NULL, -EINVAL),
	BAD("C:foo", CWD, -EINVAL),
	BAD("C:..\\x", CWD, -EINVAL),
	/* UNC */
	OK("\\\\server\\share\\f", NULL, "//server/share/f"),
	OK("\\\\server\\share", NULL, "//server/share"),
	OK("\\\\server\\share\\", NULL, "//server/share"),
	OK("\\\\server\\share\\..\\..\\x", NULL, "//server/share/x"),
	OK("\\\\server\\share\\a\\..", NULL, "//server/share"),
	OK("\\\\server/share/f", NULL, "//server/share/f"),
	OK("\\\\?\\C:\\Windows\\x", NULL, "c:/Windows/x"),
	OK("\\\\?\\c:", NULL, "c:/"),
	OK("\\\\.\\C:\\x\\..\\..", NULL, "c:/"),
	OK("\\\\?\\UNC\\srv\\sh\\f", NULL, "//srv/sh/f"),
	OK("\\\\?\\unc\\srv\\sh", NULL, "//srv/sh"),
	BAD("\\\\", NULL, -EINVAL),
	BAD("\\\\server", NULL, -EINVAL),
	BAD("\\\\server\\", NULL, -EINVAL),
	BAD("\\\\\\x\\y", NULL, -EINVAL),
	BAD("\\\\server\\\\share", NULL, -EINVAL),
	BAD("\\\\..\\share\\x", NULL, -EINVAL),
	BAD("\\\\.\\PhysicalDrive0", NULL, -EINVAL),
	BAD("\\\\?\\Volume{1}\\x", NULL, -EINVAL),
	BAD("\\\\?\\UNC\\", NULL, -EINVAL),
	BAD("\\\\?", NULL, -EINVAL),
	/* relative against a Windows cwd: its separators and root */
	OK("src\\a.py", "C:\\proj", "c:/proj/src/a.py"),
	OK("..\\..\\..", "C:\\proj", "c:/"),
	OK("\\x", "C:\\proj\\sub", "c:/x"),
	OK("x", "\\\\srv\\sh\\d", "//srv/sh/d/x"),
	OK("..\\..\\y", "\\\\srv\\sh\\d", "//srv/sh/y"),
	/* refused bytes */
	BAD("", CWD, -EINVAL),
	{"/etc/passwd\0.txt", 16, NULL, NULL, -EINVAL},
	{"\0", 1, CWD, NULL, -EINVAL},
	BAD("/a\xff", NULL, -EINVAL),
	BAD("/a\xc0\xaf", NULL, -EINVAL),         /* overlong '/' */
	BAD("/a/\xe0\x80\xae\xe0\x80\xae", NULL, -EINVAL), /* overlong ".." */
	BAD("/\xed\xa0\x80", NULL, -EINVAL),      /* surrogate */
	BAD("/\xf4\x90\x80\x80", NULL, -EINVAL),  /* above U+10FFFF */
	BAD("/a\xe6\x97", NULL, -EINVAL),         /* truncated */
	BAD("C:\\\xc1\x9c", NULL, -EINVAL),       /* overlong '\\' */
};
/* clang-format on */

static void test_table(void)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(cases); i++) {
		const struct ncase *c = &cases[i];
		size_t len = c->len ? c->len : strlen(c->in);
		char out[MOAT_PATH_MAX], again[MOAT_PATH_MAX];
		int r;

		memset(out, 'Z', sizeof(out));
		r = moat_path_normalize(c->in, len, c->cwd, out, sizeof(out));
		if (!c->want) {
			CHECKF(r == c->err && out[0] == 'Z', "case %zu refused: %d (want %d)", i, r,
			       c->err);
			continue;
		}
		CHECKF(r == 0 && !strcmp(out, c->want), "case %zu: got %d \"%s\" want \"%s\"", i, r,
		       r == 0 ? out : "", c->want);
		if (r != 0)
			continue;
		/* idempotent; a UNC result is re-read in its backslash spelling */
		if (out[0] == '/' && out[1] == '/')
			for (char *p = out; *p; p++)
				if (*p == '/')
					*p = '\\';
		r = moat_path_normalize(out, strlen(out), c->cwd, again, sizeof(again));
		CHECKF(r == 0 && !strcmp(again, c->want), "case %zu idempotent: \"%s\"", i,
		       r == 0 ? again : "");
	}
}

/* "/" followed by components of 99 characters, exactly n bytes long */
static void make_long(char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (i % 100 == 0) ? '/' : 'a';
	if (buf[n - 1] == '/')
		buf[n - 1] = 'b';
	buf[n] = '\0';
}

static void test_limits(void)
{
	static char in[MOAT_PATH_MAX + 8], out[MOAT_PATH_MAX + 8], cwd[MOAT_PATH_MAX + 8];
	char small[16];
	int r;

	make_long(in, MOAT_PATH_MAX - 1);
	r = moat_path_normalize(in, MOAT_PATH_MAX - 1, NULL, out, MOAT_PATH_MAX);
	CHECK_INT(r, 0);
	CHECK(r == 0 && strlen(out) == MOAT_PATH_MAX - 1 && !strcmp(out, in));
	/* the result fits PATH_MAX but not the caller's buffer */
	r = moat_path_normalize(in, MOAT_PATH_MAX - 1, NULL, out, MOAT_PATH_MAX - 1);
	CHECK_INT(r, -ENAMETOOLONG);

	make_long(in, MOAT_PATH_MAX);
	CHECK_INT(moat_path_normalize(in, MOAT_PATH_MAX, NULL, out, sizeof(out)), -ENAMETOOLONG);
	/* too long as input even when it would normalize short */
	memset(in, '/', MOAT_PATH_MAX);
	CHECK_INT(moat_path_normalize(in, MOAT_PATH_MAX, NULL, out, sizeof(out)), -ENAMETOOLONG);
	CHECK_INT(moat_path_normalize(in, MOAT_PATH_MAX - 1, NULL, out, sizeof(out)), 0);
	CHECK_STR(out, "/");

	/* joined to cwd: the result decides */
	make_long(cwd, 3000);
	memset(in, 'x', 1200);
	r = moat_path_normalize(in, 1200, cwd, out, sizeof(out));
	CHECK_INT(r, -ENAMETOOLONG);
	r = moat_path_normalize(in, 1094, cwd, out, sizeof(out)); /* 3000 + 1 + 1094 = 4095 */
	CHECK_INT(r, 0);
	CHECK(r == 0 && strlen(out) == MOAT_PATH_MAX - 1);
	r = moat_path_normalize(in, 1095, cwd, out, sizeof(out));
	CHECK_INT(r, -ENAMETOOLONG);
	/* longer than PATH_MAX on the way, short at the end */
	memset(in, 'b', 1200);
	in[1200] = '/';
	for (size_t i = 1201; i + 3 <= 3997; i += 3)
		memcpy(in + i, "../", 3);
	r = moat_path_normalize(in, 3997, cwd, out, sizeof(out));
	CHECK_INT(r, 0);
	CHECK_STR(out, "/");
	make_long(cwd, MOAT_PATH_MAX);
	CHECK_INT(moat_path_normalize("x", 1, cwd, out, sizeof(out)), -ENAMETOOLONG);

	/* the caller's buffer: exact fit and one short; never written on failure */
	CHECK_INT(moat_path_normalize("/etc/passwd", 11, NULL, small, 12), 0);
	CHECK_STR(small, "/etc/passwd");
	memset(small, 'Z', sizeof(small));
	CHECK_INT(moat_path_normalize("/etc/passwd", 11, NULL, small, 11), -ENAMETOOLONG);
	CHECK(small[0] == 'Z' && small[10] == 'Z');
	CHECK_INT(moat_path_normalize("/", 1, NULL, small, 1), -ENAMETOOLONG);
	CHECK_INT(moat_path_normalize("/", 1, NULL, small, 2), 0);
	CHECK_INT(moat_path_normalize(NULL, 0, NULL, small, 2), -EINVAL);
	CHECK_INT(moat_path_normalize("/", 1, NULL, NULL, 2), -EINVAL);
}

static void test_posix(void)
{
	char out[MOAT_PATH_MAX];

	CHECK_INT(moat_path_normalize_posix("C:\\x", 4, "/ws", out, sizeof(out)), 0);
	CHECK_STR(out, "/ws/C:\\x");
	CHECK_INT(moat_path_normalize_posix("C:/../../x", 10, "/ws/a", out, sizeof(out)), 0);
	CHECK_STR(out, "/ws/x");
	CHECK_INT(moat_path_normalize_posix("C:", 2, "/ws", out, sizeof(out)), 0);
	CHECK_STR(out, "/ws/C:");
	CHECK_INT(moat_path_normalize_posix("\\\\srv\\sh", 8, "/ws", out, sizeof(out)), 0);
	CHECK_STR(out, "/ws/\\\\srv\\sh");
	CHECK_INT(moat_path_normalize_posix("x", 1, "C:\\ws", out, sizeof(out)), -EINVAL);
	CHECK_INT(moat_path_normalize_posix("/a/\0", 4, "/ws", out, sizeof(out)), -EINVAL);

	CHECK(moat_path_is_windows_form("c:/x"));
	CHECK(moat_path_is_windows_form("c:/"));
	CHECK(moat_path_is_windows_form("//srv/sh"));
	CHECK(!moat_path_is_windows_form("/c:/x"));
	CHECK(!moat_path_is_windows_form("/"));
	CHECK(!moat_path_is_windows_form("c:"));
	CHECK(!moat_path_is_windows_form(NULL));
}

static void test_arg_names(void)
{
	static const char *const yes[] = {
	    "path",	   "file_path",	       "filepath",   "directory",  "cwd",
	    "source_path", "destination_path", "work_dir",   "output_dir", "_path",
	    "Path",	   "FILE_PATH",	       "Target_Path"};
	static const char *const no[] = {
	    "content",	"paths",   "dir",   "source",	  "destination", "target",
	    "pathname", "mypath",  "path_", "file_paths", "_pathx",	 "dirs",
	    "",		"command", "url",   "directoryx", "cwd2",	 "old_string"};

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(yes); i++)
		CHECKF(moat_path_arg_name(yes[i]), "'%s' is a path argument", yes[i]);
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(no); i++)
		CHECKF(!moat_path_arg_name(no[i]), "'%s' is not a path argument", no[i]);
	CHECK(!moat_path_arg_name(NULL));
}

static void test_within(void)
{
	static const struct {
		const char *p, *dir;
		bool want;
	} w[] = {
	    {"/ws", "/ws", true},
	    {"/ws/a", "/ws", true},
	    {"/ws/a/b", "/ws", true},
	    {"/ws_evil", "/ws", false},
	    {"/ws_evil/x", "/ws", false},
	    {"/wsx", "/ws", false},
	    {"/w", "/ws", false},
	    {"/", "/ws", false},
	    {"/ws/a", "/ws/", true},
	    {"/x", "/", true},
	    {"/", "/", true},
	    {"c:/x", "/", true},
	    {"c:/x", "c:/", true},
	    {"c:/", "c:/", true},
	    {"d:/x", "c:/", false},
	    {"c:/x", "c:/x/y", false},
	    {"//s/sh/f", "//s/sh", true},
	    {"//s/sh2", "//s/sh", false},
	    {"", "/", false},
	    {"/x", "", false},
	};

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(w); i++)
		CHECKF(moat_path_within(w[i].p, w[i].dir) == w[i].want, "within(%s, %s) == %d",
		       w[i].p, w[i].dir, w[i].want);
	CHECK(!moat_path_within(NULL, "/"));
	CHECK(!moat_path_within("/", NULL));
}

/* ---- resolution ---- */

#define MAXV 64

struct seen {
	int n;
	int stop_at; /* return 7 on this visit (1-based); 0: never */
	char v[MAXV][MOAT_PATH_MAX];
};

static int record(const char *path, void *ud)
{
	struct seen *s = ud;

	if (s->n < MAXV)
		moat_strlcpy(s->v[s->n], path, sizeof(s->v[0]));
	s->n++;
	return s->n == s->stop_at ? 7 : 0;
}

static char tmp[PATH_MAX];

static const char *T(const char *rel)
{
	static char buf[8][PATH_MAX];
	static int k;
	char *b = buf[k++ % 8];

	if (snprintf(b, PATH_MAX, "%s%s%s", tmp, rel[0] ? "/" : "", rel) >= PATH_MAX)
		abort();
	return b;
}

static int resolve(const char *path, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	return moat_path_resolve_each(path, record, s);
}

static bool has(const struct seen *s, const char *path)
{
	for (int i = 0; i < s->n && i < MAXV; i++)
		if (!strcmp(s->v[i], path))
			return true;
	return false;
}

static bool no_repeats(const struct seen *s)
{
	for (int i = 1; i < s->n && i < MAXV; i++)
		if (!strcmp(s->v[i], s->v[i - 1]))
			return false;
	return true;
}

/* the visits are exactly the given paths, in order (NULL-terminated) */
static bool seq(const struct seen *s, const char *const *want)
{
	int i;

	for (i = 0; want[i]; i++)
		if (i >= s->n || strcmp(s->v[i], want[i]))
			return false;
	return i == s->n;
}

#define SEQ(s, ...) seq(s, (const char *const[]){__VA_ARGS__, NULL})

static void mk(const char *target, const char *rel)
{
	if (symlink(target, T(rel)) < 0)
		perror(rel);
}

static void setup(void)
{
	char tpl[] = "/tmp/moat-path-XXXXXX";
	FILE *f;

	if (!mkdtemp(tpl) || !realpath(tpl, tmp)) {
		perror("mkdtemp");
		exit(1);
	}
	mkdir(T("real"), 0755);
	mkdir(T("real/sub"), 0755);
	mkdir(T("real/a"), 0755);
	mkdir(T("real/a/b"), 0755);
	mkdir(T("C:"), 0755);
	f = fopen(T("file"), "w");
	if (f)
		fclose(f);
	f = fopen(T("real/f"), "w");
	if (f)
		fclose(f);
	f = fopen(T("real/x"), "w");
	if (f)
		fclose(f);
	mk(T("file"), "leaf");
	mk("real", "dl");
	mk("c2", "c1");
	mk("c3", "c2");
	mk("file", "c3");
	mk("../x", "real/sub/up");
	mk("/etc/passwd", "pw");
	mk("newfile", "dang");
	mk("/nonexistent-moat-dir/new", "dangabs");
	mk("loop2", "loop1");
	mk("loop1", "loop2");
	mk("self", "self");
	mk("real/sub", "deep");
	mk("dl", "dl2");
	/* a chain of exactly MOAT_SYMLINK_MAX links, and one longer */
	for (int i = 0; i <= MOAT_SYMLINK_MAX; i++) {
		char name[32], target[32];

		snprintf(name, sizeof(name), "n%d", i);
		if (i == MOAT_SYMLINK_MAX)
			snprintf(target, sizeof(target), "file");
		else
			snprintf(target, sizeof(target), "n%d", i + 1);
		mk(target, name);
	}
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

static void cleanup(void)
{
	if (strncmp(tmp, "/tmp/moat-path-", 15) == 0 &&
	    nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		fprintf(stderr, "cleanup of %s failed\n", tmp);
}

static void test_resolve(void)
{
	static struct seen s;
	char name[32];
	int r;

	/* fast path: one visit for a plain path, existing or not */
	CHECK_INT(resolve(T("file"), &s), 0);
	CHECK(SEQ(&s, T("file")));
	CHECK_INT(resolve(T("real/a/b"), &s), 0);
	CHECK(SEQ(&s, T("real/a/b")));
	CHECK_INT(resolve(T("real/new.txt"), &s), 0);
	CHECK(SEQ(&s, T("real/new.txt")));
	CHECK_INT(resolve(T("real/n1/n2/n3"), &s), 0);
	CHECK(SEQ(&s, T("real/n1/n2/n3")));
	CHECK_INT(resolve(T("file/x"), &s), 0); /* a file as a directory */
	CHECK(SEQ(&s, T("file/x")));
	CHECK_INT(resolve("/", &s), 0);
	CHECK(SEQ(&s, "/"));
	CHECK_INT(resolve("/nonexistent-moat-dir/x", &s), 0);
	CHECK(SEQ(&s, "/nonexistent-moat-dir/x"));

	/* leaf link */
	CHECK_INT(resolve(T("leaf"), &s), 0);
	CHECK(SEQ(&s, T("leaf"), T("file")));
	/* interior directory link (relative target) */
	CHECK_INT(resolve(T("dl/f"), &s), 0);
	CHECK(SEQ(&s, T("dl/f"), T("real/f")));
	/* interior link to a file */
	CHECK_INT(resolve(T("leaf/x"), &s), 0);
	CHECK(SEQ(&s, T("leaf/x"), T("file/x")));
	/* chain of 3 */
	CHECK_INT(resolve(T("c1"), &s), 0);
	CHECK(SEQ(&s, T("c1"), T("c2"), T("c3"), T("file")));
	/* relative "../x" from the link's directory */
	CHECK_INT(resolve(T("real/sub/up"), &s), 0);
	CHECK(SEQ(&s, T("real/sub/up"), T("real/x")));
	/* a link out of the tree */
	CHECK_INT(resolve(T("pw"), &s), 0);
	CHECK(has(&s, "/etc/passwd"));
	CHECK(s.n >= 2 && !strcmp(s.v[s.n - 1], "/etc/passwd"));
	/* dangling: where a write would create the file */
	CHECK_INT(resolve(T("dang"), &s), 0);
	CHECK(SEQ(&s, T("dang"), T("newfile")));
	CHECK_INT(resolve(T("dangabs"), &s), 0);
	CHECK(SEQ(&s, T("dangabs"), "/nonexistent-moat-dir/new"));
	/* nonexistent tail under a linked directory */
	CHECK_INT(resolve(T("dl/new/file.txt"), &s), 0);
	CHECK(SEQ(&s, T("dl/new/file.txt"), T("real/new/file.txt")));
	/* links to links to directories */
	CHECK_INT(resolve(T("dl2/sub/up"), &s), 0);
	CHECK(SEQ(&s, T("dl2/sub/up"), T("dl/sub/up"), T("real/sub/up"), T("real/x")));
	CHECK(no_repeats(&s));
	/* loops */
	CHECK_INT(resolve(T("loop1"), &s), -ELOOP);
	CHECK_INT(resolve(T("self"), &s), -ELOOP);
	CHECK(no_repeats(&s));
	CHECK_INT(resolve(T("loop1/x/y"), &s), -ELOOP);
	/* exactly MOAT_SYMLINK_MAX hops are followed, one more is a loop */
	snprintf(name, sizeof(name), "n%d", 1);
	CHECK_INT(resolve(T(name), &s), 0);
	CHECK(s.n == MOAT_SYMLINK_MAX + 1 && !strcmp(s.v[s.n - 1], T("file")));
	CHECK_INT(resolve(T("n0"), &s), -ELOOP);

	/* visit() stops the walk with its value */
	memset(&s, 0, sizeof(s));
	s.stop_at = 1;
	CHECK_INT(moat_path_resolve_each(T("c1"), record, &s), 7);
	CHECK_INT(s.n, 1);
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	CHECK_INT(moat_path_resolve_each(T("c1"), record, &s), 7);
	CHECK_INT(s.n, 2);

	/* Windows forms: the string only */
	CHECK_INT(resolve("c:/windows/x", &s), 0);
	CHECK(SEQ(&s, "c:/windows/x"));
	CHECK_INT(resolve("//srv/sh/x", &s), 0);
	CHECK(SEQ(&s, "//srv/sh/x"));

	CHECK_INT(resolve("", &s), -EINVAL);
	CHECK_INT(resolve("rel/x", &s), -EINVAL);
	CHECK_INT(moat_path_resolve_each(NULL, record, &s), -EINVAL);
	CHECK_INT(moat_path_resolve_each("/", NULL, NULL), -EINVAL);
	r = resolve(T("real"), &s);
	CHECK(r == 0 && s.n == 1);
}

static int input(const char *in, const char *cwd, struct seen *s, char *norm)
{
	memset(s, 0, sizeof(*s));
	return moat_path_resolve_input(in, strlen(in), cwd, norm, MOAT_PATH_MAX, record, s);
}

static void test_resolve_input(void)
{
	static struct seen s;
	char norm[MOAT_PATH_MAX], in[PATH_MAX + 32];

	/* plain: as normalize + resolve_each */
	CHECK_INT(input("real/./f", tmp, &s, norm), 0);
	CHECK_STR(norm, T("real/f"));
	CHECK(SEQ(&s, T("real/f")));
	CHECK_INT(input("dl/f", tmp, &s, norm), 0);
	CHECK(SEQ(&s, T("dl/f"), T("real/f")));

	/* ".." after a symlink: the kernel applies it to the target */
	CHECK_INT(input("deep/../f", tmp, &s, norm), 0);
	CHECK_STR(norm, T("f"));
	CHECK(SEQ(&s, T("f"), T("real/f")));
	snprintf(in, sizeof(in), "%s/deep/../../file", tmp);
	CHECK_INT(input(in, "/", &s, norm), 0);
	CHECK(has(&s, T("file")));
	CHECK(!strcmp(s.v[0], norm) && strcmp(norm, T("file")) != 0);
	CHECK_INT(input("deep/../new/x", tmp, &s, norm), 0);
	CHECK(SEQ(&s, T("new/x"), T("real/new/x")));
	/* a missing component before "..": the kernel stops there, a tool
	 * that collapses ".." first opens the lexical path, links followed */
	CHECK_INT(input("nope/../dl/f", tmp, &s, norm), 0);
	CHECK_STR(norm, T("dl/f"));
	CHECK(SEQ(&s, T("dl/f"), T("real/f")));
	CHECK_INT(input("nope/../dl2/f", tmp, &s, norm), 0);
	CHECK(SEQ(&s, T("dl2/f"), T("dl/f"), T("real/f")));
	CHECK_INT(input("nope/../pw", tmp, &s, norm), 0);
	CHECK(SEQ(&s, T("pw"), "/etc/passwd"));
	CHECK_INT(input("real/zz/../../leaf", tmp, &s, norm), 0);
	CHECK(SEQ(&s, T("leaf"), T("file")));
	CHECK_INT(input("nope/../loop1", tmp, &s, norm), -ELOOP);
	/* ".." without links: one visit */
	CHECK_INT(input("real/sub/../f", tmp, &s, norm), 0);
	CHECK(SEQ(&s, T("real/f")));
	CHECK_INT(input("real/zz/../f", tmp, &s, norm), 0);
	CHECK(has(&s, T("real/f")) && no_repeats(&s));

	/* Windows spellings are relative names for the kernel */
	CHECK_INT(input("C:/../file", tmp, &s, norm), 0);
	CHECK_STR(norm, "c:/file");
	CHECK(SEQ(&s, "c:/file", T("file")));
	CHECK_INT(input("C:/../leaf", tmp, &s, norm), 0);
	CHECK(SEQ(&s, "c:/leaf", T("leaf"), T("file")));
	CHECK_INT(input("C:\\x", tmp, &s, norm), 0);
	CHECK(SEQ(&s, "c:/x", T("C:\\x")));
	CHECK_INT(input("\\\\srv\\sh\\f", tmp, &s, norm), 0);
	CHECK(SEQ(&s, "//srv/sh/f", T("\\\\srv\\sh\\f")));
	/* no Linux reading against a Windows cwd, or without a cwd */
	CHECK_INT(input("x\\y", "C:\\proj", &s, norm), 0);
	CHECK(SEQ(&s, "c:/proj/x/y"));
	CHECK_INT(input("C:\\x", NULL, &s, norm), 0);
	CHECK(SEQ(&s, "c:/x"));

	CHECK_INT(input("", tmp, &s, norm), -EINVAL);
	CHECK_INT(input("x", "rel", &s, norm), -EINVAL);
	CHECK_INT(s.n, 0);
	CHECK_INT(moat_path_resolve_input("/x", 2, NULL, norm, 2, record, &s), -ENAMETOOLONG);
	CHECK_INT(input("loop1/../x", tmp, &s, norm), -ELOOP);
}

int main(void)
{
	test_table();
	test_limits();
	test_posix();
	test_arg_names();
	test_within();
	setup();
	test_resolve();
	test_resolve_input();
	cleanup();
	return tap_done();
}
