/* The file tools' defences, checked from outside: symlinks (relative,
 * absolute, through a parent directory, /proc magic links) cannot lead out
 * of the allowed roots or onto a denied path; hard links are refused for
 * writes; a thread swapping a path between a real file and a symlink to an
 * outside canary thousands of times never gets the canary read, written or
 * edited; a writer killed with SIGKILL at random points leaves the old or
 * the new content, never a mix. Also the policy entry points the tools use
 * (moat_policy_check_path, moat_policy_roots).
 *
 * Each defence runs under two configurations: an allow-list (the root
 * fences the path) and no allow-list with the outside denied (the check of
 * the real path after open does). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <moat/policy.h>

#include "base/compat.h"
#include "base/str.h"
#include "core/policy_check.h"
#include "tap.h"
#include "tools/tools.h"

#define CANARY "CANARY-SECRET\n"
#define READ_ROUNDS 4000
#define WRITE_ROUNDS 1000
#define KILL_ROUNDS 40

/* (halved for the second pass, without openat2) */
static int read_rounds = READ_ROUNDS, write_rounds = WRITE_ROUNDS;

struct fx {
	char base[PATH_MAX], ws[PATH_MAX], out[PATH_MAX];
	bool allow_list;
	struct moat_config *cfg;
	struct moat_policy *pol;
	struct moat_tool_env env;
};

static void path_of(char *out, const char *dir, const char *rel)
{
	if (snprintf(out, PATH_MAX, "%s/%s", dir, rel) >= PATH_MAX)
		abort();
}

static void put(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
}

static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY | O_NOFOLLOW);

	if (fd < 0)
		return NULL;
	fstat(fd, &st);
	buf = malloc((size_t)st.st_size + 1);
	if (read(fd, buf, (size_t)st.st_size) != st.st_size)
		abort();
	buf[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	close(fd);
	return buf;
}

static bool file_is(const char *path, const char *want, size_t wlen)
{
	size_t len;
	char *got = slurp(path, &len);
	bool ok = got && len == wlen && !memcmp(got, want, len);

	free(got);
	return ok;
}

static bool has(const char *s, const char *needle)
{
	return s && strstr(s, needle) != NULL;
}

/* Entries of a directory other than "." and "..". */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static void fx_new(struct fx *f, bool allow_list)
{
	char tmpl[64], json[3 * PATH_MAX];
	struct moat_error err;

	memset(f, 0, sizeof(*f));
	f->allow_list = allow_list;
	/* tmpfs when there is one: the write races fsync thousands of times */
	snprintf(tmpl, sizeof(tmpl), "%s/moat-fo-XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(tmpl) || !realpath(tmpl, f->base))
		abort();
	path_of(f->ws, f->base, "ws");
	path_of(f->out, f->base, "out");
	if (mkdir(f->ws, 0755) < 0 || mkdir(f->out, 0755) < 0)
		abort();
	if (allow_list)
		snprintf(json, sizeof(json), "{\"allowed_paths\": [\"%s/**\"]}", f->ws);
	else
		snprintf(json, sizeof(json), "{\"denied_paths\": [\"%s/**\"]}", f->out);
	if (moat_config_new(&f->cfg) < 0 ||
	    moat_config_load_string(f->cfg, json, strlen(json), "test", 0, &err) < 0 ||
	    moat_policy_new(f->cfg, NULL, f->ws, &f->pol, &err) < 0) {
		fprintf(stderr, "fixture: %s\n", err.msg);
		abort();
	}
	f->env.policy = f->pol;
	f->env.cfg = f->cfg;
	f->env.workspace = f->ws;
	{
		char p[PATH_MAX];

		path_of(p, f->out, "canary");
		put(p, CANARY, strlen(CANARY));
	}
}

static void fx_free(struct fx *f)
{
	moat_policy_free(f->pol);
	moat_config_free(f->cfg);
	nftw(f->base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

__attribute__((format(printf, 4, 5))) static int
tool(struct fx *f, enum moat_tool_kind k, struct moat_tool_result *res, const char *fmt, ...)
{
	char *text;
	va_list ap;
	json_t *args;
	int r, n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	args = json_loads(text, 0, NULL);
	if (!args)
		abort();
	free(text);
	moat_tool_result_release(res);
	r = moat_tool_run(&f->env, k, args, NULL, res);
	json_decref(args);
	return r;
}

/* ---- the policy entry points ------------------------------------------ */

static struct moat_policy *policy_of(const char *json, const char *project_json, const char *cwd)
{
	struct moat_config *c = NULL, *pc = NULL;
	struct moat_policy *p = NULL;
	struct moat_error err;

	if (moat_config_new(&c) < 0 ||
	    moat_config_load_string(c, json, strlen(json), "test", 0, &err) < 0)
		abort();
	if (project_json && (moat_config_new(&pc) < 0 ||
			     moat_config_load_string(pc, project_json, strlen(project_json),
						     "project", MOAT_CONFIG_PROJECT, &err) < 0)) {
		fprintf(stderr, "project: %s\n", err.msg);
		abort();
	}
	if (moat_policy_new(c, pc, cwd, &p, &err) < 0)
		abort();
	moat_config_free(c);
	moat_config_free(pc);
	return p;
}

static bool root_is(const char *s, size_t len, const char *want)
{
	return len == strlen(want) && !memcmp(s, want, len);
}

static void test_policy_entry_points(void)
{
	struct moat_policy *p;
	struct moat_decision d;
	const char *roots[8];
	size_t lens[8], n;

	p = policy_of("{\"allowed_paths\": [\"/ws/**\", \"/ws/sub/a*.c\", \"**/x\", "
		      "\"/lit/file.txt\", \"src/**\", \"/br/{a,b}/**\"]}",
		      NULL, "/proj");
	n = moat_policy_roots(p, roots, lens, 8);
	CHECK_INT(n, 6);
	CHECK(n == 6 && root_is(roots[0], lens[0], "/ws"));
	CHECK(n == 6 && root_is(roots[1], lens[1], "/ws/sub"));
	CHECK(n == 6 && root_is(roots[2], lens[2], "/"));
	CHECK(n == 6 && root_is(roots[3], lens[3], "/lit"));
	CHECK(n == 6 && root_is(roots[4], lens[4], "/proj/src"));
	CHECK(n == 6 && root_is(roots[5], lens[5], "/br"));
	/* fewer slots than roots: the count is still the whole */
	memset(roots, 0, sizeof(roots));
	CHECK_INT(moat_policy_roots(p, roots, lens, 2), 6);
	CHECK(roots[2] == NULL);

	/* the check of one real path */
	CHECK_INT(moat_policy_check_path(p, "read_file", "/ws/a.c", &d), 0);
	CHECK_INT(d.verdict, MOAT_ALLOW);
	CHECK_INT(moat_policy_check_path(p, "read_file", "/ws/.env", &d), 0);
	CHECK(d.verdict == MOAT_DENY && d.hard && has(d.rule, "denied_paths"));
	CHECK_INT(moat_policy_check_path(p, "read_file", "/etc/hostname", &d), 0);
	CHECK(d.verdict == MOAT_DENY && has(d.rule, "allowed_paths"));
	CHECK_INT(moat_policy_check_path(p, "list_directory", "/ws", &d), 0);
	CHECK_INT(d.verdict, MOAT_ALLOW);
	CHECK_INT(moat_policy_check_path(p, "read_file", "ws/a.c", &d), -EINVAL);
	CHECK_INT(d.verdict, MOAT_DENY);
	CHECK_INT(moat_policy_check_path(p, "read_file", "/ws/\xff", &d), -EINVAL);
	CHECK_INT(d.verdict, MOAT_DENY);
	CHECK_INT(moat_policy_check_path(p, "read_file", "/ws/../etc/passwd", &d), 0);
	CHECK_INT(d.verdict, MOAT_DENY);
	moat_policy_free(p);

	/* no allow-list: no roots */
	p = policy_of("{}", NULL, "/proj");
	CHECK_INT(moat_policy_roots(p, roots, lens, 8), 0);
	CHECK_INT(moat_policy_check_path(p, "write_file", "/etc/passwd", &d), 0);
	CHECK_INT(d.verdict, MOAT_DENY);
	moat_policy_free(p);

	/* the project layer's allow-list gives roots too; both layers decide */
	p = policy_of("{}", "{\"allowed_paths\": [\"/proj/**\"]}", "/proj");
	n = moat_policy_roots(p, roots, lens, 8);
	CHECK(n == 1 && root_is(roots[0], lens[0], "/proj"));
	CHECK_INT(moat_policy_check_path(p, "read_file", "/other/x", &d), 0);
	CHECK_INT(d.verdict, MOAT_DENY);
	moat_policy_free(p);

	/* read-only mode, read-only paths, write approvals */
	p = policy_of("{\"read_only\": true}", NULL, "/proj");
	CHECK_INT(moat_policy_check_path(p, "write_file", "/proj/a", &d), 0);
	CHECK(d.verdict == MOAT_DENY && has(d.rule, "read_only"));
	CHECK_INT(moat_policy_check_path(p, "read_file", "/proj/a", &d), 0);
	CHECK_INT(d.verdict, MOAT_ALLOW);
	moat_policy_free(p);
	p = policy_of("{\"read_only_paths\": [\"/proj/ro/**\"], \"require_approval_for_writes\": "
		      "true}",
		      NULL, "/proj");
	CHECK_INT(moat_policy_check_path(p, "edit_file", "/proj/ro/a", &d), 0);
	CHECK(d.verdict == MOAT_DENY && has(d.rule, "read_only_paths"));
	CHECK_INT(moat_policy_check_path(p, "read_file", "/proj/ro/a", &d), 0);
	CHECK_INT(d.verdict, MOAT_ALLOW);
	CHECK_INT(moat_policy_check_path(p, "write_file", "/proj/a", &d), 0);
	CHECK_INT(d.verdict, MOAT_ASK);
	moat_policy_free(p);
}

/* ---- static links -------------------------------------------------------- */

static void test_links(struct fx *f)
{
	struct moat_tool_result r;
	char p[PATH_MAX], q[PATH_MAX], canary[PATH_MAX];
	const char *cfg = f->allow_list ? "allow-list" : "no allow-list";
	int fd;

	moat_tool_result_init(&r);
	path_of(canary, f->out, "canary");
	path_of(p, f->ws, "in.txt");
	put(p, "INSIDE\n", 7);
	path_of(p, f->ws, "sub");
	mkdir(p, 0755);
	path_of(p, f->ws, "rel");
	symlink("in.txt", p);
	path_of(p, f->ws, "abs");
	path_of(q, f->ws, "in.txt");
	symlink(q, p);
	path_of(p, f->ws, "sub/deep");
	symlink("../in.txt", p);
	path_of(p, f->ws, "esc");
	symlink(canary, p);
	path_of(p, f->ws, "esc_rel");
	symlink("../out/canary", p);
	path_of(p, f->ws, "dir_esc");
	symlink(f->out, p);
	path_of(p, f->ws, "loop");
	symlink("loop", p);

	/* links that stay inside are followed, absolute ones included */
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"rel\", \"raw\": true}"), 0);
	CHECKF(r.ok && has(r.output, "INSIDE"), "%s: relative link inside is read", cfg);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"abs\", \"raw\": true}"), 0);
	CHECKF(r.ok && has(r.output, "INSIDE"), "%s: absolute link inside is read", cfg);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"sub/deep\", \"raw\": true}"), 0);
	CHECKF(r.ok && has(r.output, "INSIDE"), "%s: ../ link inside is read", cfg);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"loop\"}"), 0);
	CHECKF(!r.ok && has(r.error, "symbolic links"), "%s: a link loop ends", cfg);

	/* links that lead out are refused, whatever the tool */
	static const char *const outs[] = {"esc", "esc_rel", "dir_esc/canary",
					   "sub/../../out/canary"};
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"%s\"}", outs[i]), 0);
		CHECKF(!r.ok && !r.output && !has(r.error, "CANARY"), "%s: read %s refused (%s)",
		       cfg, outs[i], r.error);
		CHECK_INT(tool(f, MOAT_TOOL_WRITE_FILE, &r,
			       "{\"path\": \"%s\", \"content\": \"PWNED\"}", outs[i]),
			  0);
		CHECKF(!r.ok, "%s: write %s refused (%s)", cfg, outs[i], r.error);
		CHECK_INT(tool(f, MOAT_TOOL_EDIT_FILE, &r,
			       "{\"path\": \"%s\", \"old_string\": \"CANARY\", \"new_string\": "
			       "\"PWNED\"}",
			       outs[i]),
			  0);
		CHECKF(!r.ok, "%s: edit %s refused (%s)", cfg, outs[i], r.error);
	}
	CHECK_INT(tool(f, MOAT_TOOL_LIST_DIRECTORY, &r, "{\"path\": \"dir_esc\"}"), 0);
	CHECKF(!r.ok && !has(r.output, "canary"), "%s: list through a link out refused", cfg);
	CHECK_INT(
	    tool(f, MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"dir_esc/new\", \"content\": \"x\"}"),
	    0);
	CHECKF(!r.ok, "%s: new file through a directory link out refused", cfg);
	CHECK(file_is(canary, CANARY, strlen(CANARY)));
	CHECKF(count_entries(f->out) == 1, "%s: nothing was created outside", cfg);

	/* a write through a link inside changes the target, keeps the link */
	CHECK_INT(tool(f, MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"abs\", \"content\": \"NEW\\n\"}"),
		  0);
	CHECK(r.ok);
	path_of(p, f->ws, "in.txt");
	CHECK(file_is(p, "NEW\n", 4));
	path_of(p, f->ws, "abs");
	{
		struct stat st;

		CHECKF(lstat(p, &st) == 0 && S_ISLNK(st.st_mode), "%s: the link stays a link", cfg);
	}
	CHECK_INT(
	    tool(f, MOAT_TOOL_EDIT_FILE, &r,
		 "{\"path\": \"sub/deep\", \"old_string\": \"NEW\", \"new_string\": \"OLD\"}"),
	    0);
	CHECK(r.ok);
	path_of(p, f->ws, "in.txt");
	CHECK(file_is(p, "OLD\n", 4));

	/* a denied path inside the root: the check after open refuses it,
	 * by its name or through a link */
	path_of(p, f->ws, ".env");
	put(p, "TOKEN=hunter2\n", 14);
	path_of(p, f->ws, "innocent");
	symlink(".env", p);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \".env\"}"), 0);
	CHECKF(!r.ok && !has(r.output, "hunter2") && has(r.error, "denied"),
	       "%s: denied file inside refused (%s)", cfg, r.error);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"innocent\"}"), 0);
	CHECKF(!r.ok && !has(r.output, "hunter2") && has(r.error, ".env"),
	       "%s: link to a denied file refused (%s)", cfg, r.error);
	CHECK_INT(tool(f, MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"innocent\", \"content\": \"x\"}"),
		  0);
	CHECK(!r.ok);
	path_of(p, f->ws, ".env");
	CHECK(file_is(p, "TOKEN=hunter2\n", 14));

	/* hard links are refused for writes; the outside file is unchanged */
	path_of(p, f->out, "hl");
	put(p, "HARDLINK-CANARY\n", 16);
	path_of(q, f->ws, "hl");
	CHECK(link(p, q) == 0);
	CHECK_INT(tool(f, MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"hl\", \"content\": \"PWNED\"}"),
		  0);
	CHECKF(!r.ok && has(r.error, "hard link"), "%s: write to a hard link refused", cfg);
	CHECK_INT(
	    tool(f, MOAT_TOOL_EDIT_FILE, &r,
		 "{\"path\": \"hl\", \"old_string\": \"HARDLINK\", \"new_string\": \"PWNED\"}"),
	    0);
	CHECKF(!r.ok && has(r.error, "hard link"), "%s: edit of a hard link refused", cfg);
	CHECK(file_is(p, "HARDLINK-CANARY\n", 16));
	CHECK(file_is(q, "HARDLINK-CANARY\n", 16));
	unlink(p);

	/* a magic link in /proc does not jump anywhere */
	fd = open(canary, O_RDONLY);
	path_of(p, f->ws, "magic");
	snprintf(q, sizeof(q), "/proc/self/fd/%d", fd);
	symlink(q, p);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"magic\"}"), 0);
	CHECKF(!r.ok && !has(r.output, "CANARY"), "%s: /proc magic link refused (%s)", cfg,
	       r.error);
	close(fd);

	/* devices are never opened (root can make one) */
	path_of(p, f->ws, "null");
	if (geteuid() == 0 && mknod(p, S_IFCHR | 0666, makedev(1, 3)) < 0 && errno == EPERM) {
		/* (a container without CAP_MKNOD) */
		tap_ok(1, "# SKIP %s: no device node can be made here", cfg);
	} else if (geteuid() == 0) {
		CHECK(access(p, F_OK) == 0);
		CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"null\"}"), 0);
		CHECK(!r.ok && has(r.error, "not a regular file"));
		CHECK_INT(
		    tool(f, MOAT_TOOL_WRITE_FILE, &r, "{\"path\": \"null\", \"content\": \"x\"}"),
		    0);
		CHECK(!r.ok && has(r.error, "not a regular file"));
	}
	CHECK(file_is(canary, CANARY, strlen(CANARY)));
	moat_tool_result_release(&r);
}

/* ---- races --------------------------------------------------------------- */

struct swapper {
	char a[PATH_MAX], b[PATH_MAX]; /* exchanged again and again */
	char link_target[PATH_MAX];    /* re-made at b when writes replaced the link */
	char tmp[PATH_MAX];
	atomic_bool stop;
	atomic_long swaps;
};

static void *swap_loop(void *arg)
{
	struct swapper *s = arg;
	struct stat sa, sb;
	long n = 0;
	unsigned seed = 42;

	while (!atomic_load(&s->stop)) {
		moat_renameat2(AT_FDCWD, s->a, AT_FDCWD, s->b, RENAME_EXCHANGE);
		n++;
		/* a pause of random length, so the swaps never fall into step
		 * with the calls they race */
		for (volatile unsigned spin = rand_r(&seed) % 4096; spin; spin--)
			;
		/* a write may have replaced the link by a file: make it again */
		if (s->link_target[0] && (n & 15) == 0 && lstat(s->a, &sa) == 0 &&
		    lstat(s->b, &sb) == 0 && !S_ISLNK(sa.st_mode) && !S_ISLNK(sb.st_mode)) {
			unlink(s->tmp);
			if (symlink(s->link_target, s->tmp) == 0)
				rename(s->tmp, s->b);
		}
	}
	atomic_store(&s->swaps, n);
	return NULL;
}

static void swap_start(struct swapper *s, pthread_t *t)
{
	atomic_store(&s->stop, false);
	atomic_store(&s->swaps, 0);
	if (pthread_create(t, NULL, swap_loop, s) != 0)
		abort();
}

static long swap_stop(struct swapper *s, pthread_t t)
{
	atomic_store(&s->stop, true);
	pthread_join(t, NULL);
	return atomic_load(&s->swaps);
}

/* Put the pair back as it began: a is the real one, b the link. */
static void swap_settle(struct swapper *s)
{
	struct stat st;

	if (lstat(s->a, &st) == 0 && S_ISLNK(st.st_mode))
		moat_renameat2(AT_FDCWD, s->a, AT_FDCWD, s->b, RENAME_EXCHANGE);
}

static void race_reads(struct fx *f, struct swapper *s, const char *arg, const char *what)
{
	struct moat_tool_result r;
	const char *cfg = f->allow_list ? "allow-list" : "no allow-list";
	int leaks = 0, oks = 0, refused = 0;
	pthread_t t;
	long swaps;

	moat_tool_result_init(&r);
	swap_start(s, &t);
	for (int i = 0; i < read_rounds || (oks == 0 && i < 4 * read_rounds); i++) {
		tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"%s\", \"raw\": true}", arg);
		if (has(r.output, "CANARY") || has(r.error, "CANARY"))
			leaks++;
		else if (r.ok && has(r.output, "SAFE"))
			oks++;
		else
			refused++;
	}
	swaps = swap_stop(s, t);
	swap_settle(s);
	CHECKF(leaks == 0,
	       "%s, %s: read_file leaked the canary %d times in %d (%d read, %d "
	       "refused, %ld swaps)",
	       cfg, what, leaks, leaks + oks + refused, oks, refused, swaps);
	CHECKF(oks > 0 && swaps > 0, "%s, %s: the race ran (%d reads of the real file)", cfg, what,
	       oks);
	moat_tool_result_release(&r);
}

/* The same race against a plain open(): it must leak, or the race above
 * proved nothing. */
static void race_naive(struct swapper *s, const char *path)
{
	pthread_t t;
	int leaks = 0, i;
	char buf[64];

	swap_start(s, &t);
	for (i = 0; i < 200000 && leaks == 0; i++) {
		int fd = open(path, O_RDONLY);
		ssize_t n;

		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			leaks += strstr(buf, "CANARY") != NULL;
		}
	}
	swap_stop(s, t);
	swap_settle(s);
	CHECKF(leaks > 0, "a naive open() under the same race does leak (after %d opens)", i);
}

static void race_writes(struct fx *f, struct swapper *s, const char *arg, const char *what,
			const char *other, const char *other_text)
{
	struct moat_tool_result r;
	const char *cfg = f->allow_list ? "allow-list" : "no allow-list";
	char canary[PATH_MAX];
	int oks = 0, before = count_entries(f->out);
	pthread_t t;

	moat_tool_result_init(&r);
	path_of(canary, f->out, "canary");
	swap_start(s, &t);
	/* (more rounds until one lands inside: proof the race ran both ways) */
	for (int i = 0; i < write_rounds || (oks == 0 && i < 8 * write_rounds); i++) {
		if (i & 1)
			tool(f, MOAT_TOOL_EDIT_FILE, &r,
			     "{\"path\": \"%s\", \"old_string\": \"CANARY\", \"new_string\": "
			     "\"PWNED\"}",
			     arg);
		else
			tool(f, MOAT_TOOL_WRITE_FILE, &r,
			     "{\"path\": \"%s\", \"content\": \"PWNED\"}", arg);
		oks += r.ok;
	}
	swap_stop(s, t);
	swap_settle(s);
	CHECKF(file_is(canary, CANARY, strlen(CANARY)),
	       "%s, %s: the canary is unchanged after %d writes and edits (%d written)", cfg, what,
	       write_rounds, oks);
	CHECKF(!other || file_is(other, other_text, strlen(other_text)),
	       "%s, %s: the file beside the canary is unchanged", cfg, what);
	CHECKF(count_entries(f->out) == before, "%s, %s: no file was created outside", cfg, what);
	CHECKF(oks > 0, "%s, %s: the race ran (%d writes landed inside)", cfg, what, oks);
	moat_tool_result_release(&r);
}

/* A dangling symlink is named as one: "P is a symbolic link to T, which
 * does not exist", T named only inside the roots and not denied. A link to
 * a missing path outside, or to a missing denied path, gets exactly the
 * refusal a link to an existing one gets: the message shows nothing about
 * the existence of a path the policy hides. */
static void test_dangling(struct fx *f)
{
	struct moat_tool_result r;
	char p[PATH_MAX], t[PATH_MAX], want[3 * PATH_MAX], e1[sizeof(r.error)];

	moat_tool_result_init(&r);
	/* absolute and relative links to a missing file inside */
	path_of(p, f->ws, "dl-abs");
	path_of(t, f->ws, "gone.txt");
	CHECK(symlink(t, p) == 0);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"dl-abs\"}"), 0);
	snprintf(want, sizeof(want), "%s is a symbolic link to %s, which does not exist", p, t);
	CHECK_STR(r.error, want);
	CHECK(!r.ok);
	path_of(p, f->ws, "dl-rel");
	CHECK(symlink("sub/../gone2.txt", p) == 0);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"dl-rel\"}"), 0);
	path_of(t, f->ws, "gone2.txt");
	snprintf(want, sizeof(want), "%s is a symbolic link to %s, which does not exist", p, t);
	CHECK_STR(r.error, want);
	/* a chain, and a link into a missing directory */
	path_of(p, f->ws, "dl-c1");
	CHECK(symlink("dl-c2", p) == 0);
	path_of(p, f->ws, "dl-c2");
	CHECK(symlink("gone3.txt", p) == 0);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"dl-c1\"}"), 0);
	path_of(t, f->ws, "gone3.txt");
	CHECK(!r.ok && has(r.error, "through 2 links") && has(r.error, t) &&
	      has(r.error, "does not exist"));
	path_of(p, f->ws, "dl-dir");
	path_of(t, f->ws, "nodir/x");
	CHECK(symlink(t, p) == 0);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"dl-dir\"}"), 0);
	CHECK(!r.ok && has(r.error, "symbolic link to") && has(r.error, t));
	path_of(p, f->ws, "dl-ls");
	path_of(t, f->ws, "nodir");
	CHECK(symlink(t, p) == 0);
	CHECK_INT(tool(f, MOAT_TOOL_LIST_DIRECTORY, &r, "{\"path\": \"dl-ls\"}"), 0);
	CHECK(!r.ok && has(r.error, "symbolic link to") && has(r.error, t));
	/* a plain missing path, and one through a dangling directory link */
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"nothere.txt\"}"), 0);
	CHECK(!r.ok && has(r.error, "does not exist") && !has(r.error, "link"));
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"dl-ls/f.txt\"}"), 0);
	CHECK(!r.ok && has(r.error, "does not exist"));

	/* outside: a missing target and the canary give the same message */
	path_of(p, f->ws, "dl-out");
	path_of(t, f->out, "canarz");
	CHECK(symlink(t, p) == 0);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"dl-out\"}"), 0);
	CHECK(!r.ok && !has(r.error, "does not exist") && !has(r.error, "symbolic link to"));
	moat_strlcpy(e1, r.error, sizeof(e1));
	CHECK(unlink(p) == 0);
	path_of(t, f->out, "canary");
	CHECK(symlink(t, p) == 0);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"dl-out\"}"), 0);
	CHECK(!r.ok && !has(r.output, "CANARY"));
	{
		char *z = strstr(e1, "canarz");

		while (z) {
			z[5] = 'y';
			z = strstr(z, "canarz");
		}
	}
	CHECKF(!strcmp(e1, r.error), "a dangling link out says what a link to the canary says (%s)",
	       r.error);
	CHECK(unlink(p) == 0);
	/* a missing denied path inside (.env): the refusal of an existing one */
	path_of(p, f->ws, "dl-env");
	path_of(t, f->ws, ".env");
	CHECK(symlink(t, p) == 0);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"dl-env\"}"), 0);
	CHECK(!r.ok && has(r.error, "refused") && !has(r.error, "does not exist"));
	moat_strlcpy(e1, r.error, sizeof(e1));
	put(t, "ENVSECRET", 9);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"dl-env\"}"), 0);
	CHECK(!r.ok && !has(r.output, "ENVSECRET"));
	CHECKF(!strcmp(e1, r.error),
	       "a dangling link to a denied path says what a live one says (%s)", r.error);
	CHECK(unlink(t) == 0);
	/* a chain leading out through a link inside */
	path_of(p, f->ws, "dl-o1");
	CHECK(symlink("dl-o2", p) == 0);
	path_of(p, f->ws, "dl-o2");
	path_of(t, f->out, "missing");
	CHECK(symlink(t, p) == 0);
	CHECK_INT(tool(f, MOAT_TOOL_READ_FILE, &r, "{\"path\": \"dl-o1\"}"), 0);
	CHECKF(!r.ok && !has(r.error, "does not exist") &&
		   (f->allow_list ? !has(r.error, t) : has(r.error, "refused")),
	       "a chain of links leading out: refused, saying nothing of existence (%s)", r.error);
	/* nothing was created anywhere */
	CHECK_INT(count_entries(f->out), 1);
	path_of(t, f->ws, "gone.txt");
	CHECK(access(t, F_OK) < 0);
	moat_tool_result_release(&r);
}

static void test_races(struct fx *f)
{
	struct swapper s;
	char canary[PATH_MAX], p[PATH_MAX];

	path_of(canary, f->out, "canary");

	/* 1. the file itself: a real file <-> a symlink to the canary */
	memset(&s, 0, sizeof(s));
	path_of(s.a, f->ws, "f");
	path_of(s.b, f->ws, "g");
	put(s.a, "SAFE\n", 5);
	symlink(canary, s.b);
	race_reads(f, &s, "f", "file swap (absolute link)");
	if (!f->allow_list)
		race_naive(&s, s.a);
	unlink(s.b);
	symlink("../out/canary", s.b);
	race_reads(f, &s, "f", "file swap (relative link)");
	moat_strlcpy(s.link_target, canary, sizeof(s.link_target));
	path_of(s.tmp, f->ws, ".swap-tmp");
	race_writes(f, &s, "f", "file swap", NULL, NULL);

	/* 2. a parent directory: a real directory <-> a symlink to outside */
	memset(&s, 0, sizeof(s));
	path_of(s.a, f->ws, "d");
	path_of(s.b, f->ws, "e");
	mkdir(s.a, 0755);
	path_of(p, s.a, "f");
	put(p, "SAFE\n", 5);
	path_of(p, f->out, "f");
	put(p, "CANARY-IN-DIR\n", 14);
	symlink(f->out, s.b);
	race_reads(f, &s, "d/f", "parent swap");
	{
		struct moat_tool_result r;
		pthread_t t;
		int leaks = 0;

		moat_tool_result_init(&r);
		swap_start(&s, &t);
		for (int i = 0; i < read_rounds / 4; i++) {
			tool(f, MOAT_TOOL_LIST_DIRECTORY, &r, "{\"path\": \"d\"}");
			leaks += has(r.output, "canary") || has(r.output, "CANARY");
		}
		swap_stop(&s, t);
		CHECKF(leaks == 0, "%s, parent swap: list_directory never lists outside (%d)",
		       f->allow_list ? "allow-list" : "no allow-list", leaks);
		moat_tool_result_release(&r);
	}
	race_writes(f, &s, "d/f", "parent swap", p, "CANARY-IN-DIR\n");
	CHECK(file_is(canary, CANARY, strlen(CANARY)));
}

/* ---- kill -9 mid-write ---------------------------------------------------- */

static void test_kill9(struct fx *f)
{
	size_t alen = 2u << 20, blen = 3u << 20, len;
	char *a = malloc(alen), *b = malloc(blen), p[PATH_MAX];
	json_t *args[2];
	int torn = 0, olds = 0, news = 0, temps = 0;
	unsigned seed = (unsigned)time(NULL);

	/* lines that say which version and where: a mix would show */
	for (size_t i = 0; i < alen; i++)
		a[i] = (i % 64 == 63) ? '\n' : 'A';
	for (size_t i = 0; i < blen; i++)
		b[i] = (i % 64 == 63) ? '\n' : 'B';
	args[0] = json_pack("{s:s, s:o}", "path", "k.txt", "content", json_stringn(a, alen));
	args[1] = json_pack("{s:s, s:o}", "path", "k.txt", "content", json_stringn(b, blen));
	path_of(p, f->ws, "k.txt");
	put(p, a, alen);
	for (int round = 0; round < KILL_ROUNDS; round++) {
		pid_t pid = fork();
		int status;
		char *got;

		if (pid == 0) {
			struct moat_tool_result r;

			moat_tool_result_init(&r);
			for (unsigned i = 0;; i++) {
				moat_tool_run(&f->env, MOAT_TOOL_WRITE_FILE, args[i & 1], NULL, &r);
				moat_tool_result_release(&r);
			}
		}
		usleep((useconds_t)(rand_r(&seed) % 8000));
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		got = slurp(p, &len);
		if (got && len == alen && !memcmp(got, a, alen))
			olds++;
		else if (got && len == blen && !memcmp(got, b, blen))
			news++;
		else
			torn++;
		free(got);
		/* the temporary files of killed writers */
		{
			DIR *d = opendir(f->ws);
			struct dirent *de;

			while (d && (de = readdir(d))) {
				if (strstr(de->d_name, ".k.txt.moat-")) {
					char t[PATH_MAX];

					temps++;
					path_of(t, f->ws, de->d_name);
					unlink(t);
				}
			}
			if (d)
				closedir(d);
		}
	}
	CHECKF(torn == 0,
	       "kill -9 mid-write: the file is always the old or the new content "
	       "(%d torn, %d A, %d B in %d rounds)",
	       torn, olds, news, KILL_ROUNDS);
	CHECKF(temps > 0, "kill -9 landed mid-write at least once (%d temporary files left)",
	       temps);
	json_decref(args[0]);
	json_decref(args[1]);
	free(a);
	free(b);
}

/* Make openat2 answer ENOSYS, as an old kernel (or a container's seccomp
 * profile) does: the tools must fall back to their own walk. */
static bool hide_openat2(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	bool ok = ctx && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0) == 0 &&
		  seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1) == 0 && seccomp_load(ctx) == 0;

	seccomp_release(ctx);
	return ok;
}

int main(void)
{
	struct fx f;

	test_policy_entry_points();
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			/* the same again without openat2 */
			bool hidden = hide_openat2();

			CHECKF(hidden, "openat2 hidden behind ENOSYS for the second pass");
			if (!hidden)
				break;
			printf("# second pass: without openat2\n");
			read_rounds /= 2;
			write_rounds /= 2;
		}
		for (int cfg = 0; cfg < 2; cfg++) {
			fx_new(&f, cfg == 0);
			test_links(&f);
			test_dangling(&f);
			test_races(&f);
			if (cfg == 0 && pass == 0)
				test_kill9(&f);
			fx_free(&f);
		}
	}
	return tap_done();
}
