/* mktree DIR ENTRIES [SECRETS]: a workspace shaped like a monorepo after a
 * build, for the workspace scan's benchmark (bench/scan.sh) and tests.
 *
 * ENTRIES files and directories in all (within a few percent): sources
 * under src/ (a tree six levels deep), node_modules/ (packages of a few
 * files), target/ (Rust build output), .venv/ (site-packages), .git/
 * (loose objects); SECRETS files named *.pem (half in test/certs/, the rest
 * spread through node_modules fixtures; default 3,000); one chain 40
 * levels deep; and .env files at the top, 40 levels down, in node_modules,
 * .venv, .git and target/. Every file is empty. The layout depends on the
 * arguments only, so two trees made alike are alike. The names of the
 * secrets are printed, one per line, on stdout with MKTREE_LIST=1. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static long made, budget;
static int list;

static void die(const char *what, const char *path)
{
	fprintf(stderr, "mktree: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static void mkdir_p(const char *path)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(buf, 0755) < 0 && errno != EEXIST)
				die("mkdir", buf);
			*s = '/';
		}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		die("mkdir", buf);
	made++;
}

static void touch(const char *dir, const char *name, int secret)
{
	char buf[4096];
	int fd;

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	fd = open(buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("create", buf);
	if (secret)
		(void)!write(fd, "SECRET\n", 7);
	close(fd);
	made++;
	if (secret && list)
		printf("%s\n", buf);
}

/* a tree of directories with fanout subdirectories and files per level,
 * until its share of the budget is spent */
static void tree(const char *dir, int depth, int fanout, int files, const char *ext, long share)
{
	char sub[4096], name[64];
	long start = made;

	mkdir_p(dir);
	for (int i = 0; i < files && made - start < share; i++) {
		snprintf(name, sizeof(name), "f%d.%s", i, ext);
		touch(dir, name, 0);
	}
	for (int i = 0; depth > 0 && i < fanout && made - start < share; i++) {
		snprintf(sub, sizeof(sub), "%s/d%d", dir, i);
		tree(sub, depth - 1, fanout, files, ext, (share - (made - start)) / (fanout - i));
	}
}

int main(int argc, char **argv)
{
	char dir[4096], name[64];
	long secrets = 3000, pkgs;
	const char *root;

	if (argc < 3) {
		fprintf(stderr, "usage: mktree DIR ENTRIES [SECRETS]\n");
		return 2;
	}
	root = argv[1];
	budget = atol(argv[2]);
	if (argc > 3)
		secrets = atol(argv[3]);
	list = getenv("MKTREE_LIST") && !strcmp(getenv("MKTREE_LIST"), "1");
	mkdir_p(root);
	touch(root, "README.md", 0);
	touch(root, ".env", 1);

	/* the secrets first: half in one directory beside a README */
	snprintf(dir, sizeof(dir), "%s/test/certs", root);
	mkdir_p(dir);
	touch(dir, "README", 0);
	for (long i = 0; i < secrets / 2; i++) {
		snprintf(name, sizeof(name), "cert%ld.pem", i);
		touch(dir, name, 1);
	}
	/* a chain 40 levels deep */
	snprintf(dir, sizeof(dir), "%s/deep", root);
	for (int i = 0; i < 40; i++) {
		size_t l = strlen(dir);
		snprintf(dir + l, sizeof(dir) - l, "/l%d", i);
	}
	mkdir_p(dir);
	touch(dir, ".env", 1);
	touch(dir, "notes.txt", 0);

	/* node_modules: packages of ~8 entries; fixtures hold the other half */
	pkgs = budget * 35 / 100 / 8;
	for (long i = 0; i < pkgs; i++) {
		snprintf(dir, sizeof(dir), "%s/node_modules/pkg%ld/lib", root, i);
		mkdir_p(dir);
		for (int k = 0; k < 4; k++) {
			snprintf(name, sizeof(name), "m%d.js", k);
			touch(dir, name, 0);
		}
		snprintf(dir, sizeof(dir), "%s/node_modules/pkg%ld", root, i);
		touch(dir, "package.json", 0);
		if (i == 7)
			touch(dir, ".env", 1);
		if (pkgs && i < secrets - secrets / 2 && i % 1 == 0) {
			snprintf(dir, sizeof(dir), "%s/node_modules/pkg%ld/test", root, i);
			mkdir_p(dir);
			touch(dir, "key.pem", 1);
		}
	}
	snprintf(dir, sizeof(dir), "%s/target/debug", root);
	tree(dir, 3, 8, 12, "o", budget * 10 / 100);
	touch(dir, ".env", 1);
	snprintf(dir, sizeof(dir), "%s/.venv/lib/python3.11/site-packages", root);
	tree(dir, 3, 10, 10, "py", budget * 15 / 100);
	snprintf(dir, sizeof(dir), "%s/.venv/lib/python3.11/site-packages/d9/d9/d9", root);
	mkdir_p(dir);
	touch(dir, ".env", 1);
	snprintf(dir, sizeof(dir), "%s/.git/objects", root);
	tree(dir, 1, 256, 3, "obj", budget * 5 / 100);
	snprintf(dir, sizeof(dir), "%s/.git", root);
	touch(dir, ".env", 1);
	/* the sources take what is left */
	snprintf(dir, sizeof(dir), "%s/src", root);
	tree(dir, 6, 6, 10, "c", budget - made > 0 ? budget - made : 0);
	fprintf(stderr, "mktree: %ld entries in %s\n", made, root);
	return 0;
}
