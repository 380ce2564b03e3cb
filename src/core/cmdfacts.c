/* Facts about programs, variables and system files (cmdfacts.h). */
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
    "GIT_DIR", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "PERL5OPT", "RUBYOPT", "NODE_OPTIONS",
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
