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
    "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "PERL5OPT", "RUBYOPT", "NODE_OPTIONS",
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

/* Programs that read every file below an operand: always, or when one of
 * the short letters (in any cluster of short options) or long options is
 * given; tar's first word may be its old-style cluster without '-'. */
static const struct {
	const char *prog;
	bool always;
	const char *shorts;
	const char *const longs[3];
	bool bare_cluster; /* the first word may be a cluster without '-' (tar) */
} tree_readers[] = {
    {"tar", false, "cru", {"--create", "--append", "--update"}, true},
    {"bsdtar", false, "cru", {"--create", "--append", "--update"}, true},
    {"gtar", false, "cru", {"--create", "--append", "--update"}, true},
    {"cp", false, "rRa", {"--recursive", "--archive"}, false},
    {"scp", false, "r", {NULL}, false},
    {"rsync", false, "ra", {"--recursive", "--archive"}, false},
    {"zip", false, "rR", {"--recurse-paths", "--recurse-patterns"}, false},
    {"grep", false, "rR", {"--recursive", "--dereference-recursive"}, false},
    {"egrep", false, "rR", {"--recursive", "--dereference-recursive"}, false},
    {"fgrep", false, "rR", {"--recursive", "--dereference-recursive"}, false},
    {"diff", false, "r", {"--recursive"}, false},
    {"rg", true, "", {NULL}, false},
    {"ag", true, "", {NULL}, false},
    {"ack", true, "", {NULL}, false},
};

bool moat_cmd_reads_tree(const char *prog, const char *const *argv, size_t argc)
{
	size_t t;

	for (t = 0; t < MOAT_ARRAY_SIZE(tree_readers); t++)
		if (prog[0] == tree_readers[t].prog[0] && !strcmp(prog, tree_readers[t].prog))
			break;
	if (t == MOAT_ARRAY_SIZE(tree_readers))
		return false;
	if (tree_readers[t].always)
		return true;
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			break;
		if (a[0] == '-' && a[1] == '-') {
			size_t n = strcspn(a, "=");

			for (size_t k = 0; k < 3 && tree_readers[t].longs[k]; k++)
				if (n == strlen(tree_readers[t].longs[k]) &&
				    !strncmp(a, tree_readers[t].longs[k], n))
					return true;
			continue;
		}
		if (a[0] == '-' && a[1] && strpbrk(a + 1, tree_readers[t].shorts))
			return true;
		if (i == 1 && tree_readers[t].bare_cluster && a[0] != '-' &&
		    strspn(a, "abcdfhijklmopqrtuvwxzABCGHJKLMNOPRSTUVWXZ") == strlen(a) &&
		    strpbrk(a, tree_readers[t].shorts))
			return true;
	}
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
