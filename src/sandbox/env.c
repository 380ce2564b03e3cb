/* The command's environment: none, restricted (PATH HOME USER LOGNAME LANG
 * LANGUAGE LC_* TERM TZ) or full; in every mode a variable whose name or
 * value looks like a secret is dropped unless the profile names it
 * (--env NAME). The classification is pure (moat_env_is_secret in
 * src/core/plan.c); this file only copies.
 *
 * The result is one heap block (pointer array followed by the strings) so
 * the child never allocates and the parent frees it with one free(). This
 * file must never pass a variable it was not asked to pass. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/path.h"
#include "sandbox/sandbox.h"

static bool named(const struct moat_plan *p, const char *name, size_t nlen)
{
	for (size_t i = 0; i < p->env_pass.n; i++)
		if (strlen(p->env_pass.v[i]) == nlen && !memcmp(p->env_pass.v[i], name, nlen))
			return true;
	return false;
}

/* Should the variable "name=value" pass? */
static bool keep(const struct moat_plan *p, const char *var)
{
	const char *eq = strchr(var, '=');
	char name[256];
	size_t nlen;

	if (!eq || eq == var)
		return false;
	nlen = (size_t)(eq - var);
	if (nlen >= sizeof(name))
		return false;
	memcpy(name, var, nlen);
	name[nlen] = '\0';
	if (named(p, name, nlen))
		return true; /* explicitly asked for, even if it looks secret */
	/* with a private /tmp the host's TMPDIR (often under /tmp or /run) is
	 * not there; without one moat sets its own scratch TMPDIR */
	if (!strcmp(name, "TMPDIR"))
		return false;
	switch (p->env) {
	case MOAT_ENV_NONE:
		return false;
	case MOAT_ENV_RESTRICTED:
		if (!moat_env_is_safe(name))
			return false;
		break;
	case MOAT_ENV_FULL:
		break;
	}
	/* SECURITY: secrets never pass by default, whatever the mode */
	return !moat_env_is_secret(name, eq + 1);
}

int moat_env_build(const struct moat_plan *p, char *const *parent_env, const char *scratch,
		   char ***ret, size_t *ret_dropped)
{
	size_t n = 0, bytes = 0, kept = 0, dropped = 0;
	char **v, *s;
	static const char tmpdir[] = "TMPDIR=";

	for (size_t i = 0; parent_env && parent_env[i]; i++) {
		if (keep(p, parent_env[i])) {
			n++;
			bytes += strlen(parent_env[i]) + 1;
		} else {
			dropped++;
		}
	}
	if (scratch && *scratch) {
		n++;
		bytes += sizeof(tmpdir) + strlen(scratch);
	}
	if (p->home)
		bytes += sizeof("HOME=") + strlen(p->home);
	v = malloc((n + 1) * sizeof(*v) + bytes);
	if (!v)
		return -ENOMEM;
	s = (char *)(v + n + 1);
	for (size_t i = 0; parent_env && parent_env[i]; i++) {
		size_t l;

		if (!keep(p, parent_env[i]))
			continue;
		/* HOME where it really is (the plan's, links resolved): a link
		 * under /tmp or a masked path would not be there inside */
		if (p->home && !strncmp(parent_env[i], "HOME=", 5) &&
		    strcmp(parent_env[i] + 5, p->home)) {
			l = strlen(p->home) + 1;
			memcpy(s, "HOME=", 5);
			memcpy(s + 5, p->home, l);
			v[kept++] = s;
			s += 5 + l;
			continue;
		}
		l = strlen(parent_env[i]) + 1;
		memcpy(s, parent_env[i], l);
		v[kept++] = s;
		s += l;
	}
	if (scratch && *scratch) {
		size_t l = strlen(scratch) + 1;

		memcpy(s, tmpdir, sizeof(tmpdir) - 1);
		memcpy(s + sizeof(tmpdir) - 1, scratch, l);
		v[kept++] = s;
	}
	v[kept] = NULL;
	*ret = v;
	if (ret_dropped)
		*ret_dropped = dropped;
	return 0;
}

/* The home directory of uid from /etc/passwd, read directly: moat is linked
 * statically, where glibc's getpwuid would load NSS modules of whatever
 * glibc the machine has. Users known only to
 * a directory service (LDAP, sssd) are not found: they have $HOME set in
 * practice. A line is NAME:PASSWORD:UID:GID:GECOS:DIR:SHELL; a line longer
 * than the buffer is skipped whole. */
int moat_passwd_home(uid_t uid, char *out, size_t outsz)
{
	char line[4096];
	bool cont = false; /* inside a line longer than the buffer */
	FILE *f;
	int r = -ENOENT;

	if (!out || !outsz)
		return -EINVAL;
	f = fopen("/etc/passwd", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		bool whole = len && line[len - 1] == '\n';
		char *field[7], *c = line, *end;
		unsigned long id;
		int n = 0;

		if (cont || !whole) {
			cont = !whole;
			continue;
		}
		line[len - 1] = '\0';
		while (n < 7) {
			field[n++] = c;
			c = strchr(c, ':');
			if (!c)
				break;
			*c++ = '\0';
		}
		if (n != 7 || c || !field[2][0] || field[2][0] == '-')
			continue;
		errno = 0;
		id = strtoul(field[2], &end, 10);
		if (errno || *end || id != (unsigned long)uid)
			continue;
		if (field[5][0] == '/')
			r = strlen(field[5]) < outsz ? 0 : -ENAMETOOLONG;
		if (r == 0)
			memcpy(out, field[5], strlen(field[5]) + 1);
		break;
	}
	fclose(f);
	return r;
}

int moat_audit_default_path(char *out, size_t outsz)
{
	const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char pwhome[PATH_MAX];
	int n;

	if (!out || !outsz)
		return -EINVAL;
	/* the XDG base directory spec ignores relative values */
	if (x && x[0] == '/') {
		n = snprintf(out, outsz, "%s/moat/audit.jsonl", x);
	} else {
		if (!home || home[0] != '/') {
			if (moat_passwd_home(geteuid(), pwhome, sizeof(pwhome)) < 0)
				return -ENOENT;
			home = pwhome;
		}
		n = snprintf(out, outsz, "%s/.local/state/moat/audit.jsonl",
			     strcmp(home, "/") ? home : "");
	}
	if (n < 0 || (size_t)n >= outsz)
		return -ENAMETOOLONG;
	return 0;
}
