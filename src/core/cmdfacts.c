/* Facts about programs, variables and system files (cmdfacts.h). */
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "core/cmdfacts.h"

const char *const moat_env_runs[] = {
    "PROMPT_COMMAND", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "PAGER",
    "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF",
    "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "GIT_ASKPASS", "SUDO_ASKPASS",
    "BROWSER", "MANPAGER", "FCEDIT", "PS4", "GIT_PROXY_COMMAND", "SYSTEMD_PAGER",
    "SYSTEMD_EDITOR", "SUDO_EDITOR", "FZF_DEFAULT_COMMAND", "DIFFPROG", "RSYNC_RSH",
    "CVS_RSH", NULL};

const char *const moat_env_loads[] = {
    "BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG",
    "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_DIR", "GIT_WORK_TREE", "PERL5OPT", "RUBYOPT",
    "NODE_OPTIONS", "TAR_OPTIONS", "ZIPOPT", "RIPGREP_CONFIG_PATH", "RCLONE_COPY_LINKS",
    "MAKEFLAGS", "GNUMAKEFLAGS", NULL};

/* docs/policy.md lists them with the system trees */
static const char *const critical_files[] = {
    "/etc/passwd",  "/etc/shadow",   "/etc/group",	   "/etc/gshadow",    "/etc/fstab",
    "/etc/sudoers", "/etc/crypttab", "/etc/nsswitch.conf", "/etc/login.defs", "/etc/inittab",
    "/etc/pam.conf",
};

const char *moat_cmd_critical_file_at(size_t i)
{
	return i < MOAT_ARRAY_SIZE(critical_files) ? critical_files[i] : NULL;
}

bool moat_cmd_critical_file(const char *path)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(critical_files); i++)
		if (!strcmp(path, critical_files[i]))
			return true;
	return false;
}

/* the letters of tar's old-style first word (tar czf) */
static const char tar_letters[] = "abcdfhijklmopqrtuvwxzABCGHJKLMNOPRSTUVWXZ";

/* Programs that read every file below an operand: always, or when one of
 * the short letters (in any cluster of short options) or long options is
 * given (any prefix of two letters or more, as getopt_long takes an
 * unambiguous one: an ambiguous one fails the program anyway), or a
 * valued option (short letter or long name) has the value given
 * ("grep -d recurse", "--directories=recurse"); tar's first word may be
 * its old-style cluster without '-'. search: a searcher whose first
 * operand is the pattern and which searches the working directory when
 * no path follows (grep -r KEY, rg KEY); vshorts: its short options that
 * take a value (the next word, or the rest of the cluster). */
static const struct {
	const char *prog;
	bool always;
	const char *shorts;
	const char *const longs[3];
	bool bare_cluster; /* the first word may be a cluster without '-' (tar) */
	char vshort;	   /* valued option: its letter (0: none) */
	const char *vlong, *value;
	bool search;
	const char *vshorts;
} tree_readers[] = {
    {"tar", false, "cru", {"--create", "--append", "--update"}, true, 0, NULL, NULL, false, NULL},
    {"bsdtar", false, "cru", {"--create", "--append", "--update"}, true, 0, NULL, NULL, false,
     NULL},
    {"gtar", false, "cru", {"--create", "--append", "--update"}, true, 0, NULL, NULL, false, NULL},
    {"cp", false, "rRa", {"--recursive", "--archive"}, false, 0, NULL, NULL, false, NULL},
    {"scp", false, "r", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"rsync", false, "rad", {"--recursive", "--archive", "--dirs"}, false, 0, NULL, NULL, false,
     NULL},
    {"zip", false, "rR", {"--recurse-paths", "--recurse-patterns"}, false, 0, NULL, NULL, false,
     NULL},
    {"grep", false, "rR", {"--recursive", "--dereference-recursive"}, false, 'd', "--directories",
     "recurse", true, "ABCDdefm"},
    {"egrep", false, "rR", {"--recursive", "--dereference-recursive"}, false, 'd',
     "--directories", "recurse", true, "ABCDdefm"},
    {"fgrep", false, "rR", {"--recursive", "--dereference-recursive"}, false, 'd',
     "--directories", "recurse", true, "ABCDdefm"},
    {"rgrep", true, "", {NULL}, false, 0, NULL, NULL, true, "ABCDdefm"},
    {"ugrep", false, "rR", {"--recursive", "--dereference-recursive"}, false, 'd',
     "--directories", "recurse", true, "ABCDdefmgKMNtJ"},
    {"ug", false, "rR", {"--recursive", "--dereference-recursive"}, false, 'd', "--directories",
     "recurse", true, "ABCDdefmgKMNtJ"},
    {"diff", false, "r", {"--recursive"}, false, 0, NULL, NULL, false, NULL},
    {"md5deep", false, "r", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"sha256deep", false, "r", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"gzip", false, "r", {"--recursive"}, false, 0, NULL, NULL, false, NULL},
    {"rg", true, "", {NULL}, false, 0, NULL, NULL, true, "ABCEefgjMmrTt"},
    {"ag", true, "", {NULL}, false, 0, NULL, NULL, true, "ABCGgmp"},
    {"ack", true, "", {NULL}, false, 0, NULL, NULL, true, "ABCgm"},
    /* archivers, compressors and hashers that recurse */
    {"7z", true, "", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"7za", true, "", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"7zr", true, "", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"pax", false, "w", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"jar", false, "cu", {"--create", "--update"}, true, 0, NULL, NULL, false, NULL},
    {"tarsnap", false, "c", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"zstd", false, "r", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"lz4", false, "r", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"pigz", false, "r", {"--recursive"}, false, 0, NULL, NULL, false, NULL},
    {"hashdeep", false, "r", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"sha1deep", false, "r", {NULL}, false, 0, NULL, NULL, false, NULL},
    /* backup and transfer tools: every operand is a tree they send */
    {"restic", true, "", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"borg", true, "", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"rclone", true, "", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"rdiff-backup", true, "", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"duplicity", true, "", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"croc", true, "", {NULL}, false, 0, NULL, NULL, false, NULL},
    {"wormhole", true, "", {NULL}, false, 0, NULL, NULL, false, NULL},
};

/* a is --NAME or a prefix of it of two letters or more (=VALUE aside) */
static bool long_prefix(const char *a, const char *name)
{
	size_t n = strcspn(a, "=");

	return n >= 4 && n <= strlen(name) && !strncmp(a, name, n);
}

static size_t reader_of(const char *prog)
{
	size_t t;

	for (t = 0; t < MOAT_ARRAY_SIZE(tree_readers); t++)
		if (prog[0] == tree_readers[t].prog[0] && !strcmp(prog, tree_readers[t].prog))
			break;
	return t;
}

bool moat_cmd_reads_tree(const char *prog, const char *const *argv, size_t argc)
{
	size_t t = reader_of(prog);

	if (t == MOAT_ARRAY_SIZE(tree_readers))
		return false;
	if (tree_readers[t].always)
		return true;
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			break;
		if (a[0] == '-' && a[1] == '-') {
			const char *eq = strchr(a, '=');

			for (size_t k = 0; k < 3 && tree_readers[t].longs[k]; k++)
				if (long_prefix(a, tree_readers[t].longs[k]))
					return true;
			if (tree_readers[t].vlong && long_prefix(a, tree_readers[t].vlong) &&
			    !strcmp(eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : "",
				    tree_readers[t].value))
				return true;
			continue;
		}
		if (a[0] == '-' && a[1]) {
			/* letters up to the first that takes a value */
			for (size_t k = 1; a[k]; k++) {
				if (strchr(tree_readers[t].shorts, a[k]))
					return true;
				if (tree_readers[t].vshort && a[k] == tree_readers[t].vshort &&
				    !strcmp(a[k + 1] ? a + k + 1 : i + 1 < argc ? argv[i + 1] : "",
					    tree_readers[t].value))
					return true;
				if (tree_readers[t].vshorts && strchr(tree_readers[t].vshorts, a[k]))
					break;
			}
			continue;
		}
		if (i == 1 && tree_readers[t].bare_cluster && a[0] != '-' &&
		    strspn(a, tar_letters) == strlen(a) &&
		    strpbrk(a, tree_readers[t].shorts))
			return true;
	}
	return false;
}

bool moat_cmd_searches_cwd(const char *prog, const char *const *argv, size_t argc)
{
	size_t t = reader_of(prog), ops = 0;
	bool pattern_given = false, done = false;

	if (t == MOAT_ARRAY_SIZE(tree_readers) || !tree_readers[t].search)
		return false;
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!done && !strcmp(a, "--")) {
			done = true;
			continue;
		}
		if (!done && a[0] == '-' && a[1] == '-') {
			if (long_prefix(a, "--regexp") || long_prefix(a, "--file"))
				pattern_given = true;
			continue; /* (a long option's value in the next word counts as an operand) */
		}
		if (!done && a[0] == '-' && a[1]) {
			for (size_t k = 1; a[k]; k++) {
				if (a[k] == 'e' || a[k] == 'f')
					pattern_given = true;
				if (strchr(tree_readers[t].vshorts, a[k])) {
					if (!a[k + 1])
						i++;
					break;
				}
			}
			continue;
		}
		ops++;
	}
	return ops <= (pattern_given ? 0u : 1u);
}

/* How readers of trees treat the links to directories they meet: a
 * reader not listed here follows them (fail closed: it reads the trees
 * they lead to: zip, jar, scp, diff, 7z); one listed reads a link as a
 * link unless always, or one of the short letters (in a cluster, or
 * tar's first word) or long options (a prefix of four letters or more) is
 * given; always ones stop following with one of nofollow. */
static const struct {
	const char *prog;
	bool always;
	const char *shorts;
	const char *const longs[3];
	const char *const nofollow[2];
	bool bare_cluster; /* the first word may be a cluster without '-' (tar) */
} followers[] = {
    {"grep", false, "R", {"--dereference-recursive"}, {NULL}, false},
    {"egrep", false, "R", {"--dereference-recursive"}, {NULL}, false},
    {"fgrep", false, "R", {"--dereference-recursive"}, {NULL}, false},
    {"rgrep", false, "R", {"--dereference-recursive"}, {NULL}, false},
    {"ugrep", false, "RS", {"--dereference-recursive"}, {NULL}, false},
    {"ug", false, "RS", {"--dereference-recursive"}, {NULL}, false},
    {"rg", false, "L", {"--follow"}, {NULL}, false},
    {"ag", false, "f", {"--follow"}, {NULL}, false},
    {"ack", false, "", {"--follow"}, {NULL}, false},
    {"cp", false, "L", {"--dereference"}, {NULL}, false},
    {"rsync", false, "Lk", {"--copy-links", "--copy-dirlinks", "--copy-unsafe-links"}, {NULL},
     false},
    {"rclone", false, "L", {"--copy-links"}, {NULL}, false},
    {"tar", false, "h", {"--dereference"}, {NULL}, true},
    {"gtar", false, "h", {"--dereference"}, {NULL}, true},
    {"bsdtar", false, "hL", {"--dereference"}, {NULL}, true},
    {"tarsnap", false, "hL", {"--dereference"}, {NULL}, false},
    {"pax", false, "L", {NULL}, {NULL}, false},
    {"zip", true, "", {NULL}, {"-y", "--symlinks"}, false},
    {"restic", false, "", {NULL}, {NULL}, false},
    {"borg", false, "", {NULL}, {NULL}, false},
    {"gzip", false, "", {NULL}, {NULL}, false},
    {"pigz", false, "", {NULL}, {NULL}, false},
    {"md5deep", false, "", {NULL}, {NULL}, false},
    {"sha1deep", false, "", {NULL}, {NULL}, false},
    {"sha256deep", false, "", {NULL}, {NULL}, false},
    {"hashdeep", false, "", {NULL}, {NULL}, false},
};

bool moat_cmd_follows_links(const char *prog, const char *const *argv, size_t argc)
{
	for (size_t t = 0; t < MOAT_ARRAY_SIZE(followers); t++) {
		bool off = false;

		if (prog[0] != followers[t].prog[0] || strcmp(prog, followers[t].prog))
			continue;
		for (size_t i = 1; i < argc; i++) {
			const char *a = argv[i];

			if (!strcmp(a, "--"))
				break;
			for (size_t k = 0; k < 2 && followers[t].nofollow[k]; k++)
				if (!strcmp(a, followers[t].nofollow[k]))
					off = true;
			if (a[0] == '-' && a[1] == '-') {
				for (size_t k = 0; k < 3 && followers[t].longs[k]; k++)
					if (long_prefix(a, followers[t].longs[k]))
						return true;
			} else if (a[0] == '-' && a[1] && strpbrk(a + 1, followers[t].shorts)) {
				return true;
			} else if (i == 1 && followers[t].bare_cluster &&
				   strspn(a, tar_letters) == strlen(a) && strpbrk(a, followers[t].shorts)) {
				return true; /* tar's old-style cluster (tar czhf) */
			}
		}
		return followers[t].always && !off;
	}
	return true;
}

/* Programs whose subcommand reads every file below its operands. The
 * subcommand's words are the program's first words that are not options
 * (gvalued: the options before them that take the next word as their
 * value), or, where an option these tables do not know takes a value, the
 * first such words found further on (fail closed: gcloud alpha storage
 * cp, kubectl -v 6 cp). need: one of these must be given after the
 * subcommand (a long option, or a prefix of it of two letters or more;
 * "-X": the letter X in a cluster of short options); none: always. vals:
 * the subcommand's short options that take a value (the next word, or the
 * rest of the cluster). dest: the operand it writes (the last, the first,
 * or none). search: the first operand is a pattern unless -e or -f gives
 * one, and with no path after it the working directory is searched; bare:
 * with no operand the working directory (or git's) is the tree. outside:
 * the program leaves out what the tree's .gitignore names (git add, git
 * grep --untracked), so a tree counts as read whole only outside the
 * working directory, unless one of unignore is given (git add -f). */
enum { DEST_NONE, DEST_LAST, DEST_FIRST };
static const char git_globals[] = " -C -c --git-dir --work-tree --namespace --exec-path "
				  "--super-prefix --config-env --list-cmds --attr-source ";
static const char aws_globals[] = " --profile --region --endpoint-url --output --query "
				  "--ca-bundle --cli-read-timeout --cli-connect-timeout --color "
				  "--cli-binary-format ";
static const char gsutil_globals[] = " -o -h -u -i ";
static const char gcloud_globals[] = " --project --account --configuration --verbosity "
				     "--format --impersonate-service-account --billing-project "
				     "--flags-file ";
static const char docker_globals[] = " -H --host -c --context --config -l --log-level "
				     "--tlscacert --tlscert --tlskey --url -n --namespace --root "
				     "--connection --address ";
static const char kubectl_globals[] = " -n --namespace --context --kubeconfig --cluster --user "
				      "-s --server --token --as --as-group --request-timeout -v "
				      "--cache-dir --loglevel ";
static const struct {
	const char *prog;
	const char *sub[2];
	const char *gvalued;
	const char *need[3];
	const char *vals;
	unsigned char dest;
	bool search, bare, outside;
	const char *unignore[2];
	bool follows; /* it follows the links to directories it meets */
} sub_readers[] = {
    {"git", {"diff", NULL}, git_globals, {"--no-index"}, "", DEST_NONE, false, false, false,
     {NULL}, false},
    {"git", {"grep", NULL}, git_globals, {"--no-index"}, "efABCm", DEST_NONE, true, false, false,
     {NULL}, false},
    {"git", {"grep", NULL}, git_globals, {"--untracked"}, "efABCm", DEST_NONE, true, false, true,
     {"--no-exclude-standard"}, false},
    {"git", {"add", NULL}, git_globals, {NULL}, "", DEST_NONE, false, true, true,
     {"--force", "-f"}, false},
    {"git", {"stage", NULL}, git_globals, {NULL}, "", DEST_NONE, false, true, true,
     {"--force", "-f"}, false},
    {"aws", {"s3", "cp"}, aws_globals, {"--recursive"}, "", DEST_LAST, false, false, false,
     {NULL}, true},
    {"aws", {"s3", "mv"}, aws_globals, {"--recursive"}, "", DEST_LAST, false, false, false,
     {NULL}, true},
    {"aws", {"s3", "sync"}, aws_globals, {NULL}, "", DEST_LAST, false, false, false, {NULL}, true},
    {"gsutil", {"cp", NULL}, gsutil_globals, {"-r", "-R"}, "", DEST_LAST, false, false, false,
     {NULL}, true},
    {"gsutil", {"rsync", NULL}, gsutil_globals, {"-r", "-R"}, "", DEST_LAST, false, false, false,
     {NULL}, true},
    {"gsutil", {"mv", NULL}, gsutil_globals, {NULL}, "", DEST_LAST, false, false, false,
     {NULL}, true},
    {"gcloud", {"storage", "cp"}, gcloud_globals, {"-r", "-R", "--recursive"}, "", DEST_LAST,
     false, false, false, {NULL}, true},
    {"gcloud", {"storage", "rsync"}, gcloud_globals, {"-r", "-R", "--recursive"}, "", DEST_LAST,
     false, false, false, {NULL}, true},
    {"azcopy", {"copy", NULL}, "", {"--recursive"}, "", DEST_LAST, false, false, false,
     {NULL}, true},
    {"azcopy", {"cp", NULL}, "", {"--recursive"}, "", DEST_LAST, false, false, false,
     {NULL}, true},
    {"azcopy", {"sync", NULL}, "", {NULL}, "", DEST_LAST, false, false, false, {NULL}, true},
    {"docker", {"cp", NULL}, docker_globals, {NULL}, "", DEST_LAST, false, false, false,
     {NULL}, false},
    {"podman", {"cp", NULL}, docker_globals, {NULL}, "", DEST_LAST, false, false, false,
     {NULL}, false},
    {"nerdctl", {"cp", NULL}, docker_globals, {NULL}, "", DEST_LAST, false, false, false,
     {NULL}, false},
    {"kubectl", {"cp", NULL}, kubectl_globals, {NULL}, "c", DEST_LAST, false, false, false,
     {NULL}, false},
    {"oc", {"cp", NULL}, kubectl_globals, {NULL}, "c", DEST_LAST, false, false, false,
     {NULL}, false},
    /* python3 -m MODULE: the module is the subcommand (python_sub) */
    {"python", {"zipfile", NULL}, "", {"-c", "--create"}, "", DEST_FIRST, false, false, false,
     {NULL}, true},
    {"python", {"tarfile", NULL}, "", {"-c", "--create"}, "", DEST_FIRST, false, false, false,
     {NULL}, false},
};

/* Is a (an option word) in the blank-framed list? (--opt=VALUE: no) */
static bool in_words(const char *list, const char *a)
{
	size_t n = strlen(a);

	for (const char *p = strstr(list, a); p; p = strstr(p + 1, a))
		if (p > list && p[-1] == ' ' && p[n] == ' ')
			return true;
	return false;
}

/* Is prog a python (python, python3, python3.11)? */
static bool is_python(const char *prog)
{
	return !strncmp(prog, "python", 6) && strspn(prog + 6, "0123456789.") == strlen(prog + 6);
}

/* python's -m MODULE (or -mMODULE) after its own options: the index of
 * the word after it, and the module in *mod; 0 when there is none.
 * python's options that take the next word: -W, -X, -c (a command: the
 * rest is its arguments, no module). */
static size_t python_sub(const char *const *argv, size_t argc, const char **mod)
{
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-' || !strcmp(a, "-") || !strcmp(a, "--"))
			return 0; /* a script, or standard input */
		for (size_t k = 1; a[1] != '-' && a[k]; k++) {
			if (a[k] == 'c')
				return 0;
			if (a[k] == 'm') {
				if (a[k + 1]) {
					*mod = a + k + 1;
					return i + 1;
				}
				if (i + 1 >= argc)
					return 0;
				*mod = argv[i + 1];
				return i + 2;
			}
			if (a[k] == 'W' || a[k] == 'X') {
				i += !a[k + 1];
				break;
			}
		}
	}
	return 0;
}

/* The index of the word after argv's subcommand words, or 0. Each word
 * is the first that is no option after the one before (the values of
 * gvalued skipped), else, fail closed, the first word spelt so further
 * on. *cdir: git's -C directories, the word of the last (0: none);
 * *worktree: git --work-tree given. */
static size_t sub_words(const char *const *argv, size_t argc, const char *const sub[2],
			const char *gvalued, size_t *cdir, bool *worktree, bool *unplaced)
{
	size_t i = 1;

	for (size_t s = 0; s < 2 && sub[s]; s++) {
		size_t k = i;

		while (k < argc && argv[k][0] == '-') {
			if (!strcmp(argv[k], "--"))
				return 0;
			if (!strncmp(argv[k], "--work-tree", 11) || !strncmp(argv[k], "--git-dir", 9))
				*worktree = true;
			/* (a tree named apart, or -C after -C: not placed here) */
			if (!strncmp(argv[k], "--work-tree", 11) || (*cdir && !strcmp(argv[k], "-C")))
				*unplaced = true;
			if (in_words(gvalued, argv[k])) {
				if (!strcmp(argv[k], "-C") && k + 1 < argc)
					*cdir = k + 1;
				k++;
			}
			k++;
		}
		if (k < argc && !strcmp(argv[k], sub[s])) {
			i = k + 1;
			continue;
		}
		for (k = i; k < argc && strcmp(argv[k], sub[s]); k++)
			if (!strcmp(argv[k], "--"))
				return 0;
		if (k >= argc)
			return 0;
		i = k + 1;
	}
	return i;
}

/* Is option word a one of the options (a long one, or a prefix of it of
 * two letters or more; "-X": the letter X in a cluster of short ones)? */
static bool option_given(const char *a, const char *const opts[], size_t n)
{
	for (size_t k = 0; k < n && opts[k]; k++) {
		const char *o = opts[k];
		size_t l = strcspn(a, "=");

		if (o[1] == '-' ? a[1] == '-' && l >= 3 && l <= strlen(o) && !strncmp(a, o, l)
				: a[1] != '-' && strchr(a + 1, o[1]))
			return true;
	}
	return false;
}

bool moat_cmd_subtree(const char *prog, const char *const *argv, size_t argc,
		      struct moat_cmd_subtree *out)
{
	const char *mod = NULL;
	size_t pyfrom = is_python(prog) ? python_sub(argv, argc, &mod) : 0;

	memset(out, 0, sizeof(*out));
	for (size_t t = 0; t < MOAT_ARRAY_SIZE(sub_readers); t++) {
		size_t from, cdir = 0, first = 0, last = 0, nops = 0;
		bool needed = !sub_readers[t].need[0], pattern_given = false, done = false;
		bool worktree = false, unignored = false, unplaced = false;

		if (pyfrom) {
			if (strcmp(sub_readers[t].prog, "python") || strcmp(mod, sub_readers[t].sub[0]))
				continue;
			from = pyfrom;
		} else if (prog[0] != sub_readers[t].prog[0] || strcmp(prog, sub_readers[t].prog) ||
			   !(from = sub_words(argv, argc, sub_readers[t].sub, sub_readers[t].gvalued,
					      &cdir, &worktree, &unplaced))) {
			continue;
		}
		for (size_t i = from; i < argc; i++) {
			const char *a = argv[i];

			if (!done && !strcmp(a, "--")) {
				done = true;
				continue;
			}
			if (!done && a[0] == '-' && a[1]) {
				needed |= option_given(a, sub_readers[t].need, 3);
				unignored |= option_given(a, sub_readers[t].unignore, 2);
				if (a[1] == '-')
					continue;
				for (size_t k = 1; a[k]; k++) {
					if (a[k] == 'e' || a[k] == 'f')
						pattern_given = true;
					if (strchr(sub_readers[t].vals, a[k])) {
						if (!a[k + 1])
							i++;
						break;
					}
				}
				continue;
			}
			if (!nops++)
				first = i;
			last = i;
		}
		if (!needed)
			continue;
		out->from = from;
		out->cdir = cdir;
		out->unplaced = unplaced;
		out->follows = sub_readers[t].follows;
		/* (another work tree, or what .gitignore names asked for) */
		out->outside = sub_readers[t].outside && !worktree && !unignored && !unplaced;
		if (sub_readers[t].dest == DEST_LAST && nops >= 2)
			out->dest = last;
		else if (sub_readers[t].dest == DEST_FIRST && nops >= 1)
			out->dest = first;
		if (sub_readers[t].search && !pattern_given && first) {
			out->pattern = first;
			nops--;
		}
		out->bare = (sub_readers[t].bare || sub_readers[t].search) && !nops;
		return true;
	}
	return false;
}

/* Programs that read the names of the files they read from their input
 * or from a file (cpio -o, zip -@, tar -T, rsync --files-from, gsutil cp
 * -I, git add --pathspec-from-file): letters in a cluster of short options
 * (up to the first of vals, which take a value: zip -x@LIST is a list of
 * patterns), long options in full or as a prefix of four letters or more;
 * pax -w with no operand, or -rw with one (the destination), reads them
 * from its input. */
static const struct {
	const char *prog;
	const char *shorts, *vals;
	const char *const longs[2];
	bool bare_cluster; /* the first word may be a cluster without '-' (tar) */
} name_lists[] = {
    {"cpio", "op", "", {"--create", "--pass-through"}, false},
    {"zip", "@", "bnxitPZ", {"--names-stdin"}, false},
    {"tar", "T", "", {"--files-from"}, true},
    {"gtar", "T", "", {"--files-from"}, true},
    {"bsdtar", "T", "", {"--files-from"}, true},
    {"rsync", "", "", {"--files-from"}, false},
    {"gsutil", "I", "ohui", {NULL}, false},
    {"git", "", "", {"--pathspec-from-file"}, false},
    {"azcopy", "", "", {"--list-of-files"}, false},
};

bool moat_cmd_names_from_input(const char *prog, const char *const *argv, size_t argc)
{
	if (!strcmp(prog, "pax")) {
		bool r = false, w = false;
		size_t ops = 0;

		for (size_t i = 1; i < argc; i++) {
			const char *a = argv[i];

			if (a[0] != '-' || !a[1]) {
				ops++;
				continue;
			}
			for (size_t k = 1; a[k]; k++) {
				r |= a[k] == 'r';
				w |= a[k] == 'w';
				if (strchr("fsbxopBGTU", a[k])) {
					if (!a[k + 1])
						i++;
					break;
				}
			}
		}
		return w && ops <= (r ? 1u : 0u);
	}
	for (size_t t = 0; t < MOAT_ARRAY_SIZE(name_lists); t++) {
		/* (tar -T names what to extract too: only a tar that reads
		 * files, c, r or u, reads those) */
		if (prog[0] != name_lists[t].prog[0] || strcmp(prog, name_lists[t].prog) ||
		    (name_lists[t].bare_cluster && !moat_cmd_reads_tree(prog, argv, argc)))
			continue;
		for (size_t i = 1; i < argc; i++) {
			const char *a = argv[i];

			if (!strcmp(a, "--"))
				break;
			if (a[0] == '-' && a[1] == '-') {
				for (size_t k = 0; k < 2 && name_lists[t].longs[k]; k++)
					if (long_prefix(a, name_lists[t].longs[k]))
						return true;
			} else if (a[0] == '-' && a[1]) {
				for (size_t k = 1; a[k]; k++) {
					if (strchr(name_lists[t].shorts, a[k]))
						return true;
					if (strchr(name_lists[t].vals, a[k]))
						break;
				}
			} else if (i == 1 && name_lists[t].bare_cluster &&
				   strspn(a, tar_letters) == strlen(a) && strchr(a, 'T')) {
				return true; /* tar's old-style cluster (tar cT list) */
			}
		}
		return false;
	}
	return false;
}

/* Programs that may put entries, links among them, into a tree that a
 * reader elsewhere in the same command walks: movers and copiers (mv, cp,
 * a hard ln, rsync, rclone, docker cp), extractors (tar, cpio and pax
 * reading an archive; unzip, 7z, unsquashfs, patch, python3 -m
 * zipfile/tarfile), and git's and gh's subcommands that write a work
 * tree. */
static const char *const placers[] = {"mv",	   "cp",    "install", "rsync",	    "scp",
				      "rclone",	   "unzip", "bsdunzip", "unsquashfs", "7z",
				      "7za",	   "7zr",   "patch",   "jar",	    "cpio",
				      "docker",	   "podman", "kubectl", "nerdctl"};
static const char *const git_placers[] = {"clone", "checkout", "switch", "pull", "restore",
					  "reset", "stash", "apply", "am", "merge", "rebase",
					  "cherry-pick", "worktree", "submodule"};

bool moat_cmd_places_entries(const char *prog, const char *const *argv, size_t argc)
{
	if (!strcmp(prog, "ln")) {
		/* a symbolic link is remembered as made; a hard one may copy a
		 * link that is there (ln -S SUF: a suffix, not -s) */
		for (size_t i = 1; i < argc && strcmp(argv[i], "--"); i++) {
			const char *a = argv[i];

			if (!strcmp(a, "--symbolic"))
				return false;
			if (!strncmp(a, "--suffix", 8) && !strchr(a, '='))
				i++;
			else if (a[0] == '-' && a[1] != '-')
				for (size_t k = 1; a[k]; k++) {
					if (a[k] == 's')
						return false;
					if (a[k] == 'S' || a[k] == 't') {
						i += !a[k + 1];
						break;
					}
				}
		}
		return true;
	}
	if (!strcmp(prog, "git") || !strcmp(prog, "gh")) {
		/* the subcommand: the first word that is no option (git's -C
		 * and -c take the next) */
		for (size_t i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "-C") || !strcmp(argv[i], "-c")) {
				i++;
				continue;
			}
			if (argv[i][0] == '-')
				continue;
			if (!strcmp(prog, "gh"))
				return !strcmp(argv[i], "repo") && i + 1 < argc &&
				       !strcmp(argv[i + 1], "clone");
			/* (git stash list, show, drop and clear write nothing) */
			if (!strcmp(argv[i], "stash") && i + 1 < argc &&
			    (!strcmp(argv[i + 1], "list") || !strcmp(argv[i + 1], "show") ||
			     !strcmp(argv[i + 1], "drop") || !strcmp(argv[i + 1], "clear")))
				return false;
			for (size_t k = 0; k < MOAT_ARRAY_SIZE(git_placers); k++)
				if (!strcmp(argv[i], git_placers[k]))
					return true;
			return false;
		}
		return false;
	}
	if (!strcmp(prog, "tar") || !strcmp(prog, "gtar") || !strcmp(prog, "bsdtar") ||
	    !strcmp(prog, "pax")) {
		/* extracting: tar x (or --extract, --get), pax -r (-rw copies) */
		bool pax = prog[0] == 'p';

		for (size_t i = 1; i < argc && strcmp(argv[i], "--"); i++) {
			const char *a = argv[i];
			bool bare = !pax && i == 1 && a[0] != '-'; /* (tar xzf) */

			if (!strncmp(a, "--extract", 9) || !strcmp(a, "--get"))
				return true;
			if ((a[0] != '-' || a[1] == '-') && !bare)
				continue;
			for (size_t k = !bare; a[k]; k++) {
				if (a[k] == (pax ? 'r' : 'x'))
					return true;
				/* (a letter that takes a value ends the cluster) */
				if (!bare && strchr(pax ? "fsbxopBGTU" : "fCTXbgHKLNV", a[k]))
					break;
			}
		}
		return false;
	}
	if (is_python(prog)) {
		const char *mod = NULL;
		size_t from = python_sub(argv, argc, &mod);

		if (!from || (strcmp(mod, "zipfile") && strcmp(mod, "tarfile")))
			return false;
		for (size_t i = from; i < argc; i++)
			if (!strcmp(argv[i], "-e") || !strncmp(argv[i], "--extract", 9))
				return true;
		return false;
	}
	for (size_t k = 0; k < MOAT_ARRAY_SIZE(placers); k++)
		if (prog[0] == placers[k][0] && !strcmp(prog, placers[k]))
			return true;
	return false;
}

/* sorted (bsearch) */
static const char *const printers[] = {
    "base32", "base64",  "bzip2", "cat",    "cp",	"gzip",	  "head", "hexdump",
    "less",   "more",    "nl",	  "od",	    "rsync",	"scp",	  "strings", "tac",
    "tail",   "tar",	 "xxd",	  "xz",	    "zip",	"zstd",
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, *(const char *const *)b);
}

bool moat_cmd_prints_operands(const char *prog)
{
	return bsearch(prog, printers, MOAT_ARRAY_SIZE(printers), sizeof(printers[0]), cmp_name) !=
	       NULL;
}

/* long options whose value is a pattern of names (GNU grep, tar, rsync,
 * diff, rg, ag, ugrep) */
static const char *const pattern_longs[] = {
    "exclude", "exclude-dir", "include", "include-dir", "glob", "iglob", "filter",
};

bool moat_cmd_pattern_option(const char *prog, const char *a)
{
	size_t n;

	if (a[0] != '-')
		return false;
	if (a[1] != '-')
		return !strcmp(a, "-g") &&
		       (!strcmp(prog, "rg") || !strcmp(prog, "ag") || !strcmp(prog, "ugrep") ||
			!strcmp(prog, "ug"));
	n = strcspn(a + 2, "=");
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(pattern_longs); i++)
		if (strlen(pattern_longs[i]) == n && !strncmp(a + 2, pattern_longs[i], n))
			return true;
	return false;
}
