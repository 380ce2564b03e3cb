/* The armed sandbox's watch (fsrec.c), judged by the kernel's own events:
 * a directory the workspace scan read counts a change that could change
 * a mask (a directory, a name a pattern's component may match, the
 * directory itself) and nothing else; a directory watched whole counts
 * every change; a watch of thousands of directories holds. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "sandbox/fsrec.h"
#include "tap.h"

static char root[PATH_MAX / 2];

static const char *at(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int k;

	k = (k + 1) % 4;
	if ((size_t)snprintf(buf[k], sizeof(buf[k]), "%s/%s", root, rel) >= sizeof(buf[k]))
		abort();
	return buf[k];
}

static void put(const char *rel, const char *text)
{
	int fd = open(at(rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	if (fd >= 0)
		close(fd);
}

static const char *const pats[] = {"**/.env", "**/*.pem", "**/.ssh/**", "**/.docker/config.json",
				   "build/secrets/*.key", "**/sec/?.txt"};

/* A watch over the scan's directories of the tree (src, src/a, src/b,
 * the top), the way to the top watched; NULL when it cannot be made. */
static struct moat_fswatch *scan_watch(void)
{
	moat_fsrec_begin();
	moat_fsrec_scan_patterns(pats, sizeof(pats) / sizeof(pats[0]));
	moat_fsrec_scan_dir(root, true);
	moat_fsrec_scan_dir(at("src"), false);
	moat_fsrec_scan_dir(at("src/a"), false);
	moat_fsrec_scan_dir(at("src/b"), false);
	moat_fsrec_end();
	return moat_fswatch_start();
}

static void tree(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
	CHECK(mkdir(root, 0700) == 0);
	CHECK(mkdir(at("src"), 0700) == 0);
	CHECK(mkdir(at("src/a"), 0700) == 0);
	CHECK(mkdir(at("src/b"), 0700) == 0);
	put("src/a/main.c", "int main;\n");
	put("src/b/.env", "secret\n");
}

/* Each change in a fresh tree under a fresh watch: does it count? */
static void one(const char *what, void (*change)(void), int counts)
{
	struct moat_fswatch *w;

	tree();
	w = scan_watch();
	if (!CHECKF(w && moat_fswatch_quiet(w), "the watch is made and quiet (%s)", what)) {
		moat_fswatch_free(w);
		return;
	}
	change();
	CHECKF(moat_fswatch_quiet(w) == !counts, "%s: %s", what, counts ? "counts" : "does not count");
	moat_fswatch_free(w);
}

static void edit_source(void) { put("src/a/main.c", "int main(void);\n"); }
static void new_source(void) { put("src/a/util.c", "\n"); }
static void remove_source(void) { CHECK(unlink(at("src/a/main.c")) == 0); }
static void rename_source(void) { CHECK(rename(at("src/a/main.c"), at("src/a/m.c")) == 0); }
static void chmod_source(void) { CHECK(chmod(at("src/a/main.c"), 0644) == 0); }
static void new_env(void) { put("src/a/.env", "x\n"); }
static void new_pem(void) { put("src/a/server.pem", "x\n"); }
static void rename_to_env(void) { CHECK(rename(at("src/a/main.c"), at("src/a/.env")) == 0); }
static void env_gone(void) { CHECK(unlink(at("src/b/.env")) == 0); }
static void env_edited(void) { put("src/b/.env", "other\n"); }
static void new_dir(void) { CHECK(mkdir(at("src/a/lib"), 0700) == 0); }
static void dir_renamed(void) { CHECK(rename(at("src/b"), at("src/c")) == 0); }
static void dir_swapped(void)
{
	CHECK(rename(at("src/b"), at("b-old")) == 0);
	CHECK(symlink(at("b-old"), at("src/b")) == 0);
}
static void link_named_docker(void) { CHECK(symlink("a", at("src/.docker")) == 0); }
static void link_other_name(void) { CHECK(symlink("a", at("src/alias")) == 0); }
static void config_json(void) { put("src/a/config.json", "{}\n"); }
static void key_file(void) { put("src/a/x.key", "k\n"); }
static void utf8_name(void) { put("src/a/\xc3\xa9.txt", "x\n"); }
static void two_byte_name(void) { put("src/a/ab.txt", "x\n"); }
static void dir_chmod(void) { CHECK(chmod(at("src/a"), 0755) == 0); }
static void top_renamed(void)
{
	char to[PATH_MAX + 8];

	snprintf(to, sizeof(to), "%s.old", root);
	CHECK(rename(root, to) == 0);
	CHECK(mkdir(root, 0700) == 0);
	snprintf(to, sizeof(to), "rm -rf '%s.old'", root);
	CHECK(system(to) == 0);
}

/* A watch of 3,000 scanned directories: made, quiet, and a secret in the
 * last one counts. */
static void many(void)
{
	struct moat_fswatch *w;
	char rel[64];

	tree();
	for (int i = 0; i < 3000; i++) {
		snprintf(rel, sizeof(rel), "d%d", i);
		if (mkdir(at(rel), 0700) != 0)
			CHECKF(0, "mkdir %s: %s", rel, strerror(errno));
	}
	moat_fsrec_begin();
	moat_fsrec_scan_patterns(pats, sizeof(pats) / sizeof(pats[0]));
	moat_fsrec_scan_dir(root, true);
	for (int i = 0; i < 3000; i++) {
		snprintf(rel, sizeof(rel), "d%d", i);
		moat_fsrec_scan_dir(at(rel), false);
	}
	moat_fsrec_end();
	w = moat_fswatch_start();
	CHECKF(w && moat_fswatch_quiet(w), "a watch of 3,000 directories is made and quiet");
	put("d1234/notes.txt", "x\n");
	CHECKF(w && moat_fswatch_quiet(w), "3,000 directories: a plain file does not count");
	put("d2999/.env", "x\n");
	CHECKF(w && !moat_fswatch_quiet(w), "3,000 directories: a secret in the last one counts");
	moat_fswatch_free(w);
}

/* A directory watched whole (a listing) counts every change. */
static void whole(void)
{
	struct moat_fswatch *w;

	tree();
	moat_fsrec_begin();
	moat_fsrec_dir_at(AT_FDCWD, at("src/a"));
	moat_fsrec_end();
	w = moat_fswatch_start();
	CHECKF(w && moat_fswatch_quiet(w), "a directory watched whole: made and quiet");
	edit_source();
	CHECKF(w && !moat_fswatch_quiet(w), "a directory watched whole: a file written counts");
	moat_fswatch_free(w);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR"), *must = getenv("MOAT_MUST_WORK");
	struct statfs sf;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	/* the watch is made only on a local file system (a container's
	 * overlay reports no change made in a lower layer) */
	if (statfs(tmp, &sf) == 0 && !moat_fs_local_type((unsigned long)sf.f_type)) {
		if (must && !strcmp(must, "1")) {
			printf("1..1\nnot ok 1 - %s is no local file system (MOAT_MUST_WORK=1)\n", tmp);
			return 1;
		}
		printf("1..0 # SKIP %s is no local file system (an overlay): moat makes no watch "
		       "there, and prepares each call's sandbox at the call\n",
		       tmp);
		return 0;
	}
	snprintf(root, sizeof(root), "%s/moat-fswatch-%d", tmp, (int)getpid());
	one("a source file edited", edit_source, 0);
	one("a source file created", new_source, 0);
	one("a source file removed", remove_source, 0);
	one("a source file renamed", rename_source, 0);
	one("a source file's mode changed", chmod_source, 0);
	one("a link of another name made", link_other_name, 0);
	one("a .env created", new_env, 1);
	one("a .pem created", new_pem, 1);
	one("a file renamed to .env", rename_to_env, 1);
	one("a secret removed", env_gone, 1);
	one("a secret's content changed", env_edited, 0);
	one("a directory created", new_dir, 1);
	one("a directory renamed", dir_renamed, 1);
	one("a directory swapped for a link", dir_swapped, 1);
	one("a link named .docker made", link_named_docker, 1);
	one("config.json (a component of .docker/config.json) created", config_json, 1);
	one("a .key file created (a workspace-relative pattern)", key_file, 1);
	one("a scanned directory's mode changed", dir_chmod, 1);
	one("a name of one non-ASCII character and .txt (?.txt matches it by character)", utf8_name, 1);
	one("a name '?.txt' cannot match (ab.txt)", two_byte_name, 0);
	one("the workspace renamed and made again", top_renamed, 1);
	many();
	whole();
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		CHECK(system(cmd) == 0);
	}
	return tap_done();
}
