/* The configuration model: defaults, the strict loader for JSON documents,
 * ~/$VAR expansion in path lists, the flag helpers, and the effective
 * configuration printed back as JSON.
 *
 * Loading is all or nothing: a document is applied to a private copy of the
 * configuration and the copy replaces the original only when every key
 * passed. Every error names file:line:column (found by the scanner in
 * base/json.c, in one linear pass for the whole walk) and the key path
 * ("safety.path_rules[2].allow_write").
 *
 * A project file (MOAT_CONFIG_PROJECT) may only tighten: keys that could
 * loosen the policy are refused outright, so a cloned repository cannot
 * grant itself access, pre-approve its own tool calls, or move or switch
 * off the audit log.
 *
 * Pure: never does I/O, never prints, never reads the process environment (it
 * comes through moat_config_set_env). */
#include "core/config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/json.h"
#include "core/cmd.h"
#include "core/glob.h"
#include "core/path.h"

/* Seed 000's table, in its order, then additions (docs/configuration.md). */
const char *const moat_default_denied_paths[] = {
    /* Unix system files */
    "/etc/shadow",
    "/etc/passwd",
    "/etc/sudoers",
    "/etc/sudoers.d/**",
    /* environment files */
    "**/.env",
    "**/.env.*",
    /* credentials */
    "**/credentials",
    "**/credentials.*",
    "**/secrets",
    "**/secrets.*",
    /* key material */
    "**/*.pem",
    "**/*.key",
    "**/*.p12",
    "**/*.pfx",
    /* SSH */
    "**/.ssh/**",
    "**/id_rsa",
    "**/id_dsa",
    "**/id_ecdsa",
    "**/id_ed25519",
    /* cloud providers */
    "**/.aws/**",
    "**/.azure/**",
    "**/.config/gcloud/**",
    /* package manager tokens */
    "**/.netrc",
    "**/.npmrc",
    "**/.pypirc",
    /* moat additions: more credential stores of the same kind */
    "**/.gnupg/**",
    "**/.kube/config",
    "**/.docker/config.json",
    "**/.git-credentials",
    "**/.pgpass",
    /* moat additions found by red-teaming: system keys, other processes'
     * secrets (the host's /proc; inside the sandbox /proc is private), and
     * more token stores, key stores, shell histories and browser profiles */
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    "/etc/ssh/ssh_host_*_key",
    "/proc/*/environ",
    "/proc/*/task/*/environ",
    "/proc/*/mem",
    "/proc/*/task/*/mem",
    "**/secrets/**",
    "**/.kube/**",
    "**/.config/gh/hosts.yml",
    "**/.vault-token",
    "**/.password-store/**",
    "**/.local/share/keyrings/**",
    "**/containers/auth.json",
    "**/.my.cnf",
    "**/.s3cfg",
    "**/.boto",
    "**/*.ppk",
    "**/*.jks",
    "**/*.keystore",
    "**/*.kdbx",
    "**/id_ecdsa_sk",
    "**/id_ed25519_sk",
    "**/.*_history",
    "**/.zhistory",
    "**/.histfile",
    "**/fish_history",
    "**/.mozilla/**",
    "**/.config/google-chrome/**",
    "**/.config/chromium/**",
    "**/.config/BraveSoftware/**",
    /* agents' own tokens, more tool token stores, mail and
     * Kerberos credentials, more browsers, wallets, Wi-Fi secrets */
    "**/.credentials.json",
    "**/.codex/auth.json",
    "**/.gemini/oauth_creds.json",
    "**/.config/github-copilot/**",
    "**/.config/hub",
    "**/.terraform.d/credentials.tfrc.json",
    "**/.config/rclone/rclone.conf",
    "**/.composer/auth.json",
    "**/.cache/huggingface/token",
    "**/.huggingface/token",
    "**/.kaggle/kaggle.json",
    "**/.databrickscfg",
    "**/.authinfo",
    "**/.authinfo.gpg",
    "**/.msmtprc",
    "**/.smbcredentials",
    "/etc/krb5.keytab",
    "**/.config/microsoft-edge/**",
    "**/.config/vivaldi/**",
    "**/.thunderbird/**",
    "**/.bitcoin/wallet.dat",
    "**/.ethereum/keystore/**",
    "**/.config/solana/id.json",
    "/etc/NetworkManager/system-connections/**",
    /* root-equivalent daemon sockets outside /run (the sandbox hides /run
     * and /tmp; these it masks): LXD and Incus grant root to their group */
    "/var/snap/lxd/common/lxd/unix.socket",
    "/var/lib/lxd/unix.socket",
    "/var/lib/incus/unix.socket",
    NULL,
};

bool moat_denied_template(const char *pattern, const char *name, size_t nl)
{
	static const char *const sfx[] = {".example", ".sample", ".template", ".dist",
					  ".defaults", NULL};
	size_t pl = strlen(pattern);

	if (pl < 6 || strcmp(pattern + pl - 6, ".env.*") || (pl > 6 && pattern[pl - 7] != '/'))
		return false;
	if (nl < 6 || memcmp(name, ".env.", 5) || memchr(name, '/', nl))
		return false;
	for (size_t k = 0; sfx[k]; k++) {
		size_t l = strlen(sfx[k]);

		if (nl == 4 + l && !memcmp(name + 4, sfx[k], l))
			return true; /* exactly ".env" + suffix */
	}
	return false;
}

/* Seed 000's table verbatim, then moat's additions. The policy matches them
 * by structure (core/cmd.h), not as substrings. */
const char *const moat_default_denied_commands[] = {
    /* filesystem destruction */
    "rm -rf /",
    "rm -rf /*",
    "rm -rf ~",
    "mkfs",
    "dd if=",
    "> /dev/sda",
    /* system control */
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
    "init 0",
    "init 6",
    /* fork bomb */
    ":(){:|:&};:",
    /* permission escalation */
    "chmod 777",
    "chmod -R 777",
    /* remote code execution */
    "curl|sh",
    "curl | sh",
    "curl|bash",
    "curl | bash",
    "wget|sh",
    "wget | sh",
    "wget|bash",
    "wget | bash",
    /* reverse shell */
    "nc -e",
    "ncat -e",
    /* history wipe */
    "history -c",
    /* moat additions found by red-teaming: more reverse shells, matched by
     * structure (a shell handed to a network peer) */
    "nc -c",
    "netcat -e",
    "netcat -c",
    "ncat -c",
    "ncat --sh-exec",
    "ncat --lua-exec",
    "socat exec:",
    "socat system:",
    "/dev/tcp",
    "/dev/udp",
    NULL,
};

bool moat_config_is_default_denied_command(const char *entry)
{
	for (size_t i = 0; entry && moat_default_denied_commands[i]; i++)
		if (!strcmp(entry, moat_default_denied_commands[i]))
			return true;
	return false;
}

size_t moat_config_warnings(const struct moat_config *c, moat_config_warn_fn fn, void *ud)
{
	char key[64], msg[MOAT_ERROR_MSG_MAX];
	size_t n = 0;

	for (size_t i = 0; c && i < c->ncommand_rules; i++) {
		const struct moat_cmd_rule *cr = &c->command_rules[i];

		if (cr->match != MOAT_CMD_MATCH_SUBSTRING || cr->match_given || !cr->pattern ||
		    !strpbrk(cr->pattern, "*?["))
			continue;
		snprintf(key, sizeof(key), "safety.command_rules[%zu].pattern", i);
		snprintf(msg, sizeof(msg),
			 "\"%.200s\" holds glob characters but matches as a substring (Aar's "
			 "reading: this text must occur in the command); write \"match\": \"glob\" "
			 "to match it as a glob over each program invocation, or \"match\": "
			 "\"substring\" to keep it and silence this warning",
			 cr->pattern);
		if (fn)
			fn(&cr->pattern_loc, key, msg, ud);
		n++;
	}
	for (size_t i = 0; c && i < c->denied_commands.n; i++) {
		struct moat_cmdpat *pat = NULL;
		struct moat_error e;
		struct moat_loc none = {NULL, 0, 0};

		moat_error_clear(&e);
		if (moat_cmdpat_compile(c->denied_commands.v[i], &pat, &e) != -EINVAL) {
			moat_cmdpat_free(pat);
			continue;
		}
		snprintf(key, sizeof(key), "safety.denied_commands[%zu]", i);
		snprintf(msg, sizeof(msg),
			 "\"%.200s\" is not a shell command (%.200s); it denies only commands "
			 "whose text holds it (Aar's substring)",
			 c->denied_commands.v[i], e.msg);
		if (fn)
			fn(c->denied_commands.loc ? &c->denied_commands.loc[i] : &none, key, msg, ud);
		n++;
	}
	return n;
}

/* ---- environment -------------------------------------------------------- */

/* Installed once at startup by the program's edge (the CLI); none by default,
 * so that the pure core never reads the process environment by itself. */
static moat_getenv_fn env_fn;
static void *env_ud;

void moat_config_set_env(moat_getenv_fn fn, void *ud)
{
	env_fn = fn;
	env_ud = ud;
}

const char *moat_config_env(const char *name)
{
	return env_fn && name ? env_fn(name, env_ud) : NULL;
}

/* ---- lists -------------------------------------------------------------- */

/* Arrays grow in powers of two from 8; the capacity is implied by the count,
 * so the public structs need no capacity field. Only the helpers below may
 * grow an array. */
static size_t implied_cap(size_t n)
{
	size_t c = 8;

	if (!n)
		return 0;
	while (c < n)
		c <<= 1;
	return c;
}

/* Make room for element n (0-based) of an array of n elements. */
static int grow(void **p, size_t n, size_t elsize)
{
	size_t cap = implied_cap(n), want;
	void *q;

	if (n < cap)
		return 0;
	want = implied_cap(n + 1);
	if (want > SIZE_MAX / elsize)
		return -ENOMEM;
	q = realloc(*p, want * elsize);
	if (!q)
		return -ENOMEM;
	*p = q;
	return 0;
}

static void strlist_release(struct moat_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->loc);
	l->v = NULL;
	l->loc = NULL;
	l->n = 0;
}

/* Append s (taken over; freed on failure). */
static int strlist_push(struct moat_strlist *l, char *s, const struct moat_loc *loc)
{
	if (!s || grow((void **)&l->v, l->n, sizeof(*l->v)) < 0 ||
	    grow((void **)&l->loc, l->n, sizeof(*l->loc)) < 0) {
		free(s);
		return -ENOMEM;
	}
	l->v[l->n] = s;
	if (loc)
		l->loc[l->n] = *loc;
	else
		l->loc[l->n] = (struct moat_loc){NULL, 0, 0};
	l->n++;
	return 0;
}

/* The file names that locations point to live in c->files, once each. */
static const char *intern_file(struct moat_config *c, const char *name)
{
	for (size_t i = 0; i < c->files.n; i++)
		if (!strcmp(c->files.v[i], name))
			return c->files.v[i];
	if (strlist_push(&c->files, moat_strdup(name), NULL) < 0)
		return NULL;
	return c->files.v[c->files.n - 1];
}

int moat_config_strlist_add(struct moat_config *c, struct moat_strlist *l, const char *s,
			    const struct moat_loc *loc)
{
	struct moat_loc copy = {NULL, 0, 0};

	if (!c || !l || !s)
		return -EINVAL;
	if (l->n >= MOAT_CONFIG_MAX_RULES)
		return -E2BIG;
	if (loc) {
		copy = *loc;
		if (loc->file && l != &c->files) {
			copy.file = intern_file(c, loc->file);
			if (!copy.file)
				return -ENOMEM;
		}
	}
	return strlist_push(l, moat_strdup(s), &copy);
}

/* ---- life cycle --------------------------------------------------------- */

int moat_config_init(struct moat_config *c)
{
	if (!c)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->hardline = true;
	c->default_denied_paths = true;
	c->default_denied_commands = true;
	c->sandbox_mode = MOAT_SANDBOX_LOCAL;
	c->sandbox_fallback = -1;
	c->approval_timeout_s = MOAT_CONFIG_DEFAULT_APPROVAL_TIMEOUT_S;
	c->audit_required = true;
	return 0;
}

static void approvals_release(struct moat_config *c)
{
	for (size_t i = 0; i < c->napprovals; i++) {
		free(c->approvals[i].tool);
		free(c->approvals[i].arg);
		free(c->approvals[i].match);
	}
	free(c->approvals);
	c->approvals = NULL;
	c->napprovals = 0;
}

static void tool_release(struct moat_tool_decl *t)
{
	free(t->name);
	strlist_release(&t->path_args);
	free(t->command_arg);
	free(t->url_arg);
	memset(t, 0, sizeof(*t));
}

void moat_config_release(struct moat_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->npath_rules; i++)
		free(c->path_rules[i].pattern);
	free(c->path_rules);
	strlist_release(&c->denied_paths);
	strlist_release(&c->exempt_paths);
	strlist_release(&c->allowed_paths);
	strlist_release(&c->read_only_paths);
	for (size_t i = 0; i < c->ncommand_rules; i++)
		free(c->command_rules[i].pattern);
	free(c->command_rules);
	strlist_release(&c->denied_commands);
	for (size_t i = 0; i < c->ntools; i++)
		tool_release(&c->tools[i]);
	free(c->tools);
	strlist_release(&c->allow_domains);
	strlist_release(&c->block_domains);
	for (size_t i = 0; i < c->nprofiles; i++)
		moat_profile_def_release(&c->profiles[i]);
	free(c->profiles);
	free(c->profile_locs);
	free(c->sandbox_profile);
	for (size_t i = 0; i < c->nsandbox_rules; i++) {
		free(c->sandbox_rules[i].tool);
		free(c->sandbox_rules[i].profile);
	}
	free(c->sandbox_rules);
	free(c->sandbox_rule_locs);
	free(c->sandbox_workspace);
	approvals_release(c);
	free(c->audit_log);
	strlist_release(&c->files);
	moat_config_init(c);
}

int moat_config_new(struct moat_config **ret)
{
	struct moat_config *c;

	if (!ret)
		return -EINVAL;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	moat_config_init(c);
	*ret = c;
	return 0;
}

struct moat_config *moat_config_free(struct moat_config *c)
{
	if (c) {
		moat_config_release(c);
		free(c);
	}
	return NULL;
}

/* ---- deep copy (loading works on a copy: all or nothing) ---------------- */

static struct moat_loc remap_loc(const struct moat_config *src, const struct moat_config *dst,
				 struct moat_loc loc)
{
	const char *f = loc.file;

	loc.file = NULL;
	for (size_t i = 0; f && i < src->files.n; i++)
		if (src->files.v[i] == f)
			loc.file = dst->files.v[i];
	return loc;
}

static int strlist_copy(const struct moat_config *src, const struct moat_config *dst,
			const struct moat_strlist *from, struct moat_strlist *to)
{
	memset(to, 0, sizeof(*to));
	for (size_t i = 0; i < from->n; i++) {
		struct moat_loc loc = {NULL, 0, 0};

		if (from->loc)
			loc = dst ? remap_loc(src, dst, from->loc[i]) : from->loc[i];
		if (strlist_push(to, moat_strdup(from->v[i]), &loc) < 0)
			return -ENOMEM;
	}
	return 0;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = moat_strdup(s);
	if (!d)
		*oom = true;
	return d;
}

static int config_copy(const struct moat_config *src, struct moat_config *dst)
{
	bool oom = false;
	int r;

	*dst = *src;
	/* nothing below is shared with src */
	memset(&dst->files, 0, sizeof(dst->files));
	dst->path_rules = NULL;
	dst->npath_rules = 0;
	memset(&dst->denied_paths, 0, sizeof(dst->denied_paths));
	memset(&dst->exempt_paths, 0, sizeof(dst->exempt_paths));
	memset(&dst->allowed_paths, 0, sizeof(dst->allowed_paths));
	memset(&dst->read_only_paths, 0, sizeof(dst->read_only_paths));
	dst->command_rules = NULL;
	dst->ncommand_rules = 0;
	memset(&dst->denied_commands, 0, sizeof(dst->denied_commands));
	dst->tools = NULL;
	dst->ntools = 0;
	memset(&dst->allow_domains, 0, sizeof(dst->allow_domains));
	memset(&dst->block_domains, 0, sizeof(dst->block_domains));
	dst->sandbox_workspace = NULL;
	dst->profiles = NULL;
	dst->profile_locs = NULL;
	dst->nprofiles = 0;
	dst->sandbox_profile = NULL;
	dst->sandbox_rules = NULL;
	dst->sandbox_rule_locs = NULL;
	dst->nsandbox_rules = 0;
	dst->approvals = NULL;
	dst->napprovals = 0;
	dst->audit_log = NULL;

	r = strlist_copy(src, NULL, &src->files, &dst->files);
	if (r < 0)
		goto fail;
	for (size_t i = 0; i < src->npath_rules; i++) {
		struct moat_path_rule *pr;

		if (grow((void **)&dst->path_rules, dst->npath_rules, sizeof(*pr)) < 0)
			goto fail;
		pr = &dst->path_rules[dst->npath_rules];
		*pr = src->path_rules[i];
		pr->loc = remap_loc(src, dst, pr->loc);
		pr->pattern = dup_or_null(src->path_rules[i].pattern, &oom);
		dst->npath_rules++;
		if (oom)
			goto fail;
	}
	for (size_t i = 0; i < src->ncommand_rules; i++) {
		struct moat_cmd_rule *cr;

		if (grow((void **)&dst->command_rules, dst->ncommand_rules, sizeof(*cr)) < 0)
			goto fail;
		cr = &dst->command_rules[dst->ncommand_rules];
		*cr = src->command_rules[i];
		cr->loc = remap_loc(src, dst, cr->loc);
		cr->pattern_loc = remap_loc(src, dst, cr->pattern_loc);
		cr->pattern = dup_or_null(src->command_rules[i].pattern, &oom);
		dst->ncommand_rules++;
		if (oom)
			goto fail;
	}
	for (size_t i = 0; i < src->ntools; i++) {
		const struct moat_tool_decl *s = &src->tools[i];
		struct moat_tool_decl *t;

		if (grow((void **)&dst->tools, dst->ntools, sizeof(*t)) < 0)
			goto fail;
		t = &dst->tools[dst->ntools++];
		memset(t, 0, sizeof(*t));
		t->effects = s->effects;
		t->loc = remap_loc(src, dst, s->loc);
		t->name = dup_or_null(s->name, &oom);
		t->command_arg = dup_or_null(s->command_arg, &oom);
		t->url_arg = dup_or_null(s->url_arg, &oom);
		if (oom || strlist_copy(src, dst, &s->path_args, &t->path_args) < 0)
			goto fail;
	}
	if (strlist_copy(src, dst, &src->denied_paths, &dst->denied_paths) < 0 ||
	    strlist_copy(src, dst, &src->exempt_paths, &dst->exempt_paths) < 0 ||
	    strlist_copy(src, dst, &src->allowed_paths, &dst->allowed_paths) < 0 ||
	    strlist_copy(src, dst, &src->read_only_paths, &dst->read_only_paths) < 0 ||
	    strlist_copy(src, dst, &src->denied_commands, &dst->denied_commands) < 0 ||
	    strlist_copy(src, dst, &src->allow_domains, &dst->allow_domains) < 0 ||
	    strlist_copy(src, dst, &src->block_domains, &dst->block_domains) < 0)
		goto fail;
	dst->sandbox_workspace = dup_or_null(src->sandbox_workspace, &oom);
	if (oom)
		goto fail;
	for (size_t i = 0; i < src->nprofiles; i++) {
		const struct moat_profile_def *sd = &src->profiles[i];
		struct moat_profile_def *d;

		if (grow((void **)&dst->profiles, dst->nprofiles, sizeof(*d)) < 0 ||
		    grow((void **)&dst->profile_locs, dst->nprofiles, sizeof(*dst->profile_locs)) <
			0)
			goto fail;
		d = &dst->profiles[dst->nprofiles];
		memset(d, 0, sizeof(*d));
		if (moat_profile_copy(&d->layer, &sd->layer) < 0)
			goto fail;
		dst->profile_locs[dst->nprofiles].name =
		    remap_loc(src, dst, src->profile_locs[i].name);
		dst->profile_locs[dst->nprofiles].extends =
		    remap_loc(src, dst, src->profile_locs[i].extends);
		dst->nprofiles++;
		d->name = dup_or_null(sd->name, &oom);
		d->extends = dup_or_null(sd->extends, &oom);
		d->description = dup_or_null(sd->description, &oom);
		if (oom)
			goto fail;
	}
	dst->sandbox_profile = dup_or_null(src->sandbox_profile, &oom);
	dst->sandbox_profile_loc = remap_loc(src, dst, src->sandbox_profile_loc);
	if (oom)
		goto fail;
	for (size_t i = 0; i < src->nsandbox_rules; i++) {
		struct moat_tool_rule *tr;

		if (grow((void **)&dst->sandbox_rules, dst->nsandbox_rules, sizeof(*tr)) < 0 ||
		    grow((void **)&dst->sandbox_rule_locs, dst->nsandbox_rules,
			 sizeof(*dst->sandbox_rule_locs)) < 0)
			goto fail;
		tr = &dst->sandbox_rules[dst->nsandbox_rules];
		dst->sandbox_rule_locs[dst->nsandbox_rules] =
		    remap_loc(src, dst, src->sandbox_rule_locs[i]);
		tr->tool = dup_or_null(src->sandbox_rules[i].tool, &oom);
		tr->profile = dup_or_null(src->sandbox_rules[i].profile, &oom);
		dst->nsandbox_rules++;
		if (oom)
			goto fail;
	}
	for (size_t i = 0; i < src->napprovals; i++) {
		const struct moat_approval_rule *sa = &src->approvals[i];
		struct moat_approval_rule *a;

		if (grow((void **)&dst->approvals, dst->napprovals, sizeof(*a)) < 0)
			goto fail;
		a = &dst->approvals[dst->napprovals++];
		a->loc = remap_loc(src, dst, sa->loc);
		a->tool = dup_or_null(sa->tool, &oom);
		a->arg = dup_or_null(sa->arg, &oom);
		a->match = dup_or_null(sa->match, &oom);
		if (oom)
			goto fail;
	}
	dst->audit_log = dup_or_null(src->audit_log, &oom);
	if (oom)
		goto fail;
	return 0;
fail:
	moat_config_release(dst);
	return -ENOMEM;
}

/* ---- expansion ---------------------------------------------------------- */

static bool name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

/* Characters a glob gives meaning to, plus '$' and '~' so that the expanded
 * text expands to itself again (moat_config_to_json round-trips). */
static bool glob_special(char c)
{
	return strchr("\\*?[]{},$~", c) != NULL;
}

static int put_value(struct moat_buf *out, const char *name, const char *val, char next,
		     unsigned flags, struct moat_error *err)
{
	char norm[MOAT_PATH_MAX];

	/* SECURITY: an unset or empty variable is an error, never "": with X
	 * empty, "$X/<star><star>" would become "/<star><star>", every path. */
	if (!val) {
		moat_error_set(err, "environment variable %s is not set", name);
		return -EINVAL;
	}
	if (!val[0]) {
		moat_error_set(err, "environment variable %s is empty", name);
		return -EINVAL;
	}
	if (!strcmp(name, "HOME") && val[0] != '/') {
		moat_error_set(err, "HOME is not an absolute path");
		return -EINVAL;
	}
	/* SECURITY: an absolute value goes in normalized, as the paths it is
	 * compared with are: with HOME=/home/u/ (or /), "~/.x/<star><star>"
	 * would read "/home/u//.x/..." ("//.x/...") and never match */
	if (val[0] == '/') {
		if (moat_path_normalize_posix(val, strlen(val), NULL, norm, sizeof(norm)) < 0) {
			moat_error_set(err, "environment variable %s is not a usable path", name);
			return -EINVAL;
		}
		if (!strcmp(norm, "/") && next == '/')
			return 0;
		val = norm;
	}
	for (const char *p = val; *p; p++) {
		/* SECURITY: a value is data, not a pattern: "/home/a*" must
		 * not match /home/alice. */
		if ((flags & MOAT_EXPAND_GLOB) && glob_special(*p))
			moat_buf_putc(out, '\\');
		moat_buf_putc(out, *p);
	}
	return 0;
}

int moat_config_expand_ex(const char *in, unsigned flags, struct moat_buf *out,
			  struct moat_error *err)
{
	char name[MOAT_CONFIG_MAX_VAR_NAME + 1];
	size_t i = 0;
	int r;

	if (!in || !out)
		return -EINVAL;
	moat_buf_reset(out);
	if (in[0] == '~') {
		if (in[1] != '\0' && in[1] != '/') {
			moat_error_set(err,
				       "~user is not supported (use an absolute path or $HOME)");
			return -EINVAL;
		}
		r = put_value(out, "HOME", moat_config_env("HOME"), in[1], flags, err);
		if (r < 0)
			return r;
		i = 1;
	}
	while (in[i]) {
		char c = in[i];
		size_t n = 0;

		if (c == '\\') {
			/* an escaped character is never expanded; a glob keeps
			 * the backslash (the glob removes it), a plain path
			 * drops it */
			if (flags & MOAT_EXPAND_GLOB)
				moat_buf_putc(out, c);
			if (in[i + 1]) {
				moat_buf_putc(out, in[i + 1]);
				i += 2;
			} else {
				if (!(flags & MOAT_EXPAND_GLOB))
					moat_buf_putc(out, c);
				i++;
			}
			continue;
		}
		if (c != '$' || (in[i + 1] != '{' && !name_start(in[i + 1]))) {
			moat_buf_putc(out, c);
			i++;
			continue;
		}
		if (in[i + 1] == '{') {
			const char *s = in + i + 2;

			while (name_char(s[n]) && n < MOAT_CONFIG_MAX_VAR_NAME)
				n++;
			if (!n || !name_start(s[0]) || s[n] != '}') {
				moat_error_set(err,
					       "invalid variable reference (expected ${NAME})");
				return -EINVAL;
			}
			memcpy(name, s, n);
			i += n + 3;
		} else {
			const char *s = in + i + 1;

			while (name_char(s[n]) && n < MOAT_CONFIG_MAX_VAR_NAME)
				n++;
			if (name_char(s[n])) {
				moat_error_set(err, "variable name too long");
				return -EINVAL;
			}
			memcpy(name, s, n);
			i += n + 1;
		}
		name[n] = '\0';
		r = put_value(out, name, moat_config_env(name), in[i], flags, err);
		if (r < 0)
			return r;
		if (out->len > MOAT_CONFIG_MAX_STRING)
			break;
	}
	if (out->oom) {
		moat_error_set(err, "out of memory");
		return -ENOMEM;
	}
	if (out->len > MOAT_CONFIG_MAX_STRING) {
		moat_error_set(err, "expanded path longer than %d bytes", MOAT_CONFIG_MAX_STRING);
		return -EINVAL;
	}
	if (!out->data)
		moat_buf_reserve(out, 0);
	return out->oom ? -ENOMEM : 0;
}

int moat_config_expand(const char *in, struct moat_buf *out, struct moat_error *err)
{
	return moat_config_expand_ex(in, MOAT_EXPAND_GLOB, out, err);
}

/* ---- validation shared by the loader and the flag helpers --------------- */

static int check_glob(const char *pattern, unsigned mode, struct moat_error *err)
{
	struct moat_glob *g = NULL;
	struct moat_error gerr;
	int r;

	moat_error_clear(&gerr);
	r = moat_glob_compile(pattern, mode, &g, &gerr);
	moat_glob_free(g);
	if (r == -ENOMEM) {
		moat_error_set(err, "out of memory");
		return r;
	}
	if (r < 0) {
		/* the glob module usually says "invalid glob: ..." itself */
		if (moat_str_has_prefix(gerr.msg, "invalid glob"))
			moat_error_set(err, "%s", gerr.msg);
		else
			moat_error_set(err, "invalid glob: %s", gerr.msg[0] ? gerr.msg : "error");
		return -EINVAL;
	}
	return 0;
}

static int check_regex(const char *pattern, struct moat_error *err)
{
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE eoff = 0;
	int ecode = 0;
	pcre2_code *re;

	re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ecode, &eoff,
			   NULL);
	if (re) {
		pcre2_code_free(re);
		return 0;
	}
	if (ecode == PCRE2_ERROR_HEAPLIMIT || ecode == PCRE2_ERROR_NOMEMORY) {
		moat_error_set(err, "out of memory");
		return -ENOMEM;
	}
	if (pcre2_get_error_message(ecode, msg, sizeof(msg)) < 0)
		moat_strlcpy((char *)msg, "error", sizeof(msg));
	moat_error_set(err, "invalid regex at offset %zu: %s", (size_t)eoff, (const char *)msg);
	return -EINVAL;
}

/* Expand a path-list entry and check that it compiles as a glob. */
static int path_pattern(const char *in, char **ret, struct moat_error *err)
{
	struct moat_buf b = MOAT_BUF_INIT;
	int r;

	r = moat_config_expand_ex(in, MOAT_EXPAND_GLOB, &b, err);
	if (r >= 0)
		r = check_glob(b.data, MOAT_GLOB_PATH, err);
	if (r < 0) {
		moat_buf_release(&b);
		return r;
	}
	*ret = moat_buf_steal(&b);
	return *ret ? 0 : -ENOMEM;
}

/* ---- the loader --------------------------------------------------------- */

#define WALK_MAX_DEPTH 16

struct key_spec;

struct walker {
	const char *text;
	size_t len;
	const char *name; /* for messages */
	const char *file; /* interned in c->files, for locations */
	bool project;
	bool wrapped; /* {"safety": {...}} rather than a bare safety object */
	struct moat_config *c;
	struct moat_error *err;
	struct moat_json_pos pos;
	const struct key_spec *safety; /* for hints at the top level */
	size_t nsafety;
	size_t ntools_before; /* tools declared by earlier documents */
	const char *comp[WALK_MAX_DEPTH];
	char idx[WALK_MAX_DEPTH][24];
	size_t depth;
};

static void push_key(struct walker *w, const char *key)
{
	if (w->depth < WALK_MAX_DEPTH)
		w->comp[w->depth] = key;
	w->depth++;
}

static void push_index(struct walker *w, size_t i)
{
	if (w->depth < WALK_MAX_DEPTH) {
		snprintf(w->idx[w->depth], sizeof(w->idx[0]), "[%zu]", i);
		w->comp[w->depth] = w->idx[w->depth];
	}
	w->depth++;
}

static void pop(struct walker *w)
{
	w->depth--;
}

/* "safety.path_rules[2].pattern"; a bare document still reads "safety.". */
static void key_path(const struct walker *w, char *out, size_t outsz)
{
	size_t o = 0, n = w->depth < WALK_MAX_DEPTH ? w->depth : WALK_MAX_DEPTH;

	out[0] = '\0';
	if (!w->depth)
		return; /* the document itself */
	if (!w->wrapped)
		o = moat_strlcpy(out, "safety", outsz);
	for (size_t i = 0; i < n && o + 1 < outsz; i++) {
		const char *s = w->comp[i];

		if (s != w->idx[i] && o > 0)
			out[o++] = '.';
		for (; *s && o + 1 < outsz; s++) {
			unsigned char ch = (unsigned char)*s;

			out[o++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
		}
		out[o] = '\0';
	}
	if (o >= outsz)
		out[outsz - 1] = '\0';
}

__attribute__((format(printf, 3, 4))) static int fail_at(struct walker *w, size_t off,
							 const char *fmt, ...)
{
	char key[sizeof(w->err->key)];
	va_list ap;
	int line, col;

	if (!w->err)
		return -EINVAL;
	moat_json_linecol(w->text, w->len, off, &line, &col);
	moat_error_set_where(w->err, w->name, line, col);
	key_path(w, key, sizeof(key));
	moat_error_set_key(w->err, key);
	va_start(ap, fmt);
	vsnprintf(w->err->msg, sizeof(w->err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* An error already described in w->err->msg (by a helper): add the place. */
static int fail_keep_msg(struct walker *w, size_t off, int r)
{
	char msg[MOAT_ERROR_MSG_MAX];

	if (!w->err)
		return r;
	moat_strlcpy(msg, w->err->msg, sizeof(msg));
	fail_at(w, off, "%s", msg);
	return r;
}

static int fail_internal(struct walker *w, size_t off)
{
	return fail_at(w, off, "internal error: the document and its parse disagree");
}

static struct moat_loc loc_at(struct walker *w, size_t off)
{
	struct moat_loc loc = {w->file, 0, 0};

	moat_json_pos_seek(&w->pos, w->text, w->len, off, &loc.line, &loc.column);
	return loc;
}

static int expect_type(struct walker *w, json_t *v, size_t off, json_type t)
{
	static const char *const names[] = {
	    [JSON_OBJECT] = "object",	[JSON_ARRAY] = "array", [JSON_STRING] = "string",
	    [JSON_INTEGER] = "integer", [JSON_REAL] = "number", [JSON_TRUE] = "boolean",
	    [JSON_FALSE] = "boolean",	[JSON_NULL] = "null",
	};
	json_type have = json_typeof(v);

	if (have == t || (t == JSON_TRUE && have == JSON_FALSE))
		return 0;
	return fail_at(w, off, "expected %s, got %s", names[t], moat_json_type_name(v));
}

/* A non-empty string of bounded length. what names it in messages. */
static int get_string(struct walker *w, json_t *v, size_t off, const char *what, const char **ret)
{
	int r = expect_type(w, v, off, JSON_STRING);

	if (r < 0)
		return r;
	if (json_string_length(v) == 0)
		return fail_at(w, off, "empty %s", what);
	if (json_string_length(v) > MOAT_CONFIG_MAX_STRING)
		return fail_at(w, off, "%s longer than %d bytes", what, MOAT_CONFIG_MAX_STRING);
	*ret = json_string_value(v);
	return 0;
}

static int check_count(struct walker *w, size_t off, size_t have, size_t add)
{
	if (have + add > MOAT_CONFIG_MAX_RULES)
		return fail_at(w, off, "too many entries (limit %d)", MOAT_CONFIG_MAX_RULES);
	return 0;
}

static int oom(struct walker *w, size_t off)
{
	fail_at(w, off, "out of memory");
	return -ENOMEM;
}

/* ---- key tables ----- */

enum project_rule {
	P_ANY,	     /* any value tightens or is neutral */
	P_TRUE_ONLY, /* boolean that may only be switched on */
	P_NEVER,     /* could loosen the policy */
};

struct key_spec;
typedef int (*key_fn)(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
		      void *target);

struct key_spec {
	const char *name;
	key_fn fn;
	enum project_rule project;
	bool required;
	size_t field; /* offsetof() into the target, for the generic handlers */
};

#define FIELD(type, member) offsetof(type, member)

/* Edit distance for "did you mean" (short keys only). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[40];

	if (la >= 39 || lb >= 39)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static int fail_unknown(struct walker *w, size_t koff, const char *key,
			const struct key_spec *specs, size_t n)
{
	const char *best = NULL;
	size_t bestd = 3;

	for (size_t i = 0; i < n; i++) {
		size_t d = distance(key, specs[i].name);

		if (d < bestd) {
			bestd = d;
			best = specs[i].name;
		}
	}
	if (best)
		return fail_at(w, koff, "unknown key (did you mean \"%s\"?)", best);
	if (w->wrapped && w->depth == 1) {
		for (size_t i = 0; i < w->nsafety; i++)
			if (!strcmp(key, w->safety[i].name))
				return fail_at(
				    w, koff, "unknown key (safety keys belong inside \"safety\")");
	}
	return fail_at(w, koff, "unknown key");
}

/* Visit the members of an object in text order, next to jansson's view of
 * them (jansson keeps insertion order, and duplicates were refused, so the
 * two agree). cb gets the key, value, and both offsets. */
typedef int (*member_fn)(struct walker *w, const char *key, json_t *v, size_t koff, size_t voff,
			 void *ud);

static int walk_members(struct walker *w, json_t *obj, size_t off, member_fn cb, void *ud)
{
	struct moat_json_iter it;
	void *ji = json_object_iter(obj);
	size_t koff, voff;
	int r;

	if (moat_json_iter_init(&it, w->text, w->len, off) < 0)
		return fail_internal(w, off);
	while ((r = moat_json_iter_next(&it, &koff, &voff)) > 0) {
		const char *key;
		json_t *v;

		if (!ji)
			return fail_internal(w, koff);
		key = json_object_iter_key(ji);
		v = json_object_iter_value(ji);
		ji = json_object_iter_next(obj, ji);
		if (!moat_json_string_equals(w->text, w->len, koff, key))
			return fail_internal(w, koff);
		push_key(w, key);
		r = cb(w, key, v, koff, voff, ud);
		pop(w);
		if (r < 0)
			return r;
	}
	if (r < 0 || ji)
		return fail_internal(w, off);
	return 0;
}

typedef int (*element_fn)(struct walker *w, size_t i, json_t *v, size_t voff, void *ud);

static int walk_elements(struct walker *w, json_t *arr, size_t off, element_fn cb, void *ud)
{
	struct moat_json_iter it;
	size_t voff, i = 0;
	int r;

	if (moat_json_iter_init(&it, w->text, w->len, off) < 0)
		return fail_internal(w, off);
	while ((r = moat_json_iter_next(&it, NULL, &voff)) > 0) {
		json_t *v = json_array_get(arr, i);

		if (!v)
			return fail_internal(w, voff);
		push_index(w, i);
		r = cb(w, i, v, voff, ud);
		pop(w);
		if (r < 0)
			return r;
		i++;
	}
	if (r < 0 || i != json_array_size(arr))
		return fail_internal(w, off);
	return 0;
}

struct object_ctx {
	const struct key_spec *specs;
	size_t n;
	void *target;
	uint64_t seen;
};

static const char *project_refusal(const struct key_spec *s);

static int object_member(struct walker *w, const char *key, json_t *v, size_t koff, size_t voff,
			 void *ud)
{
	struct object_ctx *o = ud;
	const struct key_spec *s = NULL;
	size_t i;

	for (i = 0; i < o->n; i++) {
		if (!strcmp(o->specs[i].name, key)) {
			s = &o->specs[i];
			break;
		}
	}
	if (!s)
		return fail_unknown(w, koff, key, o->specs, o->n);
	o->seen |= 1ull << i;
	if (w->project) {
		/* SECURITY: a project file comes with the repository; it may
		 * only tighten what the user configured. */
		const char *why = project_refusal(s);

		if (s->project == P_NEVER)
			return fail_at(w, koff, "not allowed in a project config: %s", why);
		if (s->project == P_TRUE_ONLY && json_is_false(v))
			return fail_at(w, voff, "false is not allowed in a project config: %s",
				       why);
	}
	return s->fn(w, s, v, voff, o->target);
}

/* Walk an object against a key table: unknown keys are errors, required
 * keys must be present. */
static int walk_object(struct walker *w, json_t *obj, size_t off, const struct key_spec *specs,
		       size_t n, void *target)
{
	struct object_ctx o = {specs, n, target, 0};
	int r = expect_type(w, obj, off, JSON_OBJECT);

	if (r < 0)
		return r;
	r = walk_members(w, obj, off, object_member, &o);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		if (specs[i].required && !(o.seen & (1ull << i))) {
			push_key(w, specs[i].name);
			r = fail_at(w, off, "missing required key \"%s\"", specs[i].name);
			pop(w);
			return r;
		}
	}
	return 0;
}

/* ---- generic handlers ----- */

static int h_bool(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	int r = expect_type(w, v, off, JSON_TRUE);

	if (r < 0)
		return r;
	*(bool *)((char *)t + s->field) = json_is_true(v);
	return 0;
}

static int h_ignore(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	return 0;
}

/* Aar's sub-objects for other platforms: accepted when they are objects. */
static int h_ignore_object(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			   void *t)
{
	return expect_type(w, v, off, JSON_OBJECT);
}

/* ---- path lists ----- */

struct list_ctx {
	struct moat_strlist *list;
};

static int pathlist_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct list_ctx *lc = ud;
	const char *s;
	char *pat;
	struct moat_loc loc;
	int r = get_string(w, v, off, "pattern", &s);

	if (r < 0)
		return r;
	r = path_pattern(s, &pat, w->err);
	if (r < 0)
		return fail_keep_msg(w, off, r);
	loc = loc_at(w, off);
	if (strlist_push(lc->list, pat, &loc) < 0)
		return oom(w, off);
	return 0;
}

static int pathlist_fill(struct walker *w, json_t *v, size_t off, struct moat_strlist *l)
{
	struct list_ctx lc = {l};
	int r = expect_type(w, v, off, JSON_ARRAY);

	if (r < 0)
		return r;
	r = check_count(w, off, l->n, json_array_size(v));
	if (r < 0)
		return r;
	return walk_elements(w, v, off, pathlist_element, &lc);
}

/* denied_paths, read_only_paths, exempt_paths: appended */
static int h_pathlist(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	return pathlist_fill(w, v, off, (struct moat_strlist *)((char *)t + s->field));
}

/* allowed_paths: replaces any earlier value; null removes the allow-list */
static int h_allowed_paths(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			   void *t)
{
	struct moat_config *c = t;

	if (json_is_null(v)) {
		if (w->project)
			return fail_at(w, off,
				       "null is not allowed in a project config: it could "
				       "loosen the policy");
		strlist_release(&c->allowed_paths);
		c->allowed_paths_set = false;
		return 0;
	}
	if (json_is_array(v)) {
		strlist_release(&c->allowed_paths);
		c->allowed_paths_set = true;
	}
	return pathlist_fill(w, v, off, &c->allowed_paths);
}

/* ---- path_rules ----- */

static int h_rule_path_pattern(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			       void *t)
{
	struct moat_path_rule *pr = t;
	const char *str;
	int r = get_string(w, v, off, "pattern", &str);

	if (r < 0)
		return r;
	r = path_pattern(str, &pr->pattern, w->err);
	return r < 0 ? fail_keep_msg(w, off, r) : 0;
}

static const struct key_spec path_rule_specs[] = {
    {"pattern", h_rule_path_pattern, P_ANY, true, 0},
    {"allow_read", h_bool, P_ANY, false, FIELD(struct moat_path_rule, allow_read)},
    {"allow_write", h_bool, P_ANY, false, FIELD(struct moat_path_rule, allow_write)},
};

static int path_rule_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct moat_config *c = ud;
	struct moat_path_rule *pr;

	if (grow((void **)&c->path_rules, c->npath_rules, sizeof(*pr)) < 0)
		return oom(w, off);
	pr = &c->path_rules[c->npath_rules++];
	pr->pattern = NULL;
	pr->allow_read = true;
	pr->allow_write = false;
	pr->loc = loc_at(w, off);
	return walk_object(w, v, off, path_rule_specs, MOAT_ARRAY_SIZE(path_rule_specs), pr);
}

static int h_path_rules(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct moat_config *c = t;
	int r = expect_type(w, v, off, JSON_ARRAY);

	if (r < 0)
		return r;
	r = check_count(w, off, c->npath_rules, json_array_size(v));
	if (r < 0)
		return r;
	return walk_elements(w, v, off, path_rule_element, c);
}

/* ---- command_rules ----- */

struct cmd_rule_ctx {
	struct moat_cmd_rule *rule;
	size_t pattern_off, match_off, is_regex_off;
	int is_regex; /* -1: not written */
	int match;    /* -1: not written, else enum moat_cmd_match */
};

static int h_cmd_pattern(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct cmd_rule_ctx *cc = t;
	const char *str;
	int r = get_string(w, v, off, "pattern", &str);

	if (r < 0)
		return r;
	cc->rule->pattern = moat_strdup(str);
	if (!cc->rule->pattern)
		return oom(w, off);
	cc->pattern_off = off;
	return 0;
}

static int h_cmd_decision(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			  void *t)
{
	struct cmd_rule_ctx *cc = t;
	const char *str;
	int r = expect_type(w, v, off, JSON_STRING);

	if (r < 0)
		return r;
	str = json_string_value(v);
	if (!strcmp(str, "allow"))
		cc->rule->decision = MOAT_ALLOW;
	else if (!strcmp(str, "deny"))
		cc->rule->decision = MOAT_DENY;
	else if (!strcmp(str, "ask"))
		cc->rule->decision = MOAT_ASK;
	else
		return fail_at(w, off, "expected \"allow\", \"deny\" or \"ask\"");
	return 0;
}

static int h_cmd_is_regex(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			  void *t)
{
	struct cmd_rule_ctx *cc = t;
	int r = expect_type(w, v, off, JSON_TRUE);

	if (r < 0)
		return r;
	cc->is_regex = json_is_true(v);
	cc->is_regex_off = off;
	return 0;
}

/* The names of enum moat_cmd_match, in its order. */
static const char *const cmd_match_names[] = {"substring", "glob", "regex", NULL};

static int h_cmd_match(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct cmd_rule_ctx *cc = t;
	int r = expect_type(w, v, off, JSON_STRING);

	if (r < 0)
		return r;
	for (int k = 0; cmd_match_names[k]; k++)
		if (!strcmp(json_string_value(v), cmd_match_names[k])) {
			cc->match = k;
			cc->match_off = off;
			return 0;
		}
	return fail_at(w, off, "expected \"substring\", \"glob\" or \"regex\"");
}

static const struct key_spec cmd_rule_specs[] = {
    {"pattern", h_cmd_pattern, P_ANY, true, 0},
    {"decision", h_cmd_decision, P_ANY, true, 0},
    {"is_regex", h_cmd_is_regex, P_ANY, false, 0},
    {"match", h_cmd_match, P_ANY, false, 0},
};

static int cmd_rule_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct moat_config *c = ud;
	struct cmd_rule_ctx cc;
	int r;

	if (grow((void **)&c->command_rules, c->ncommand_rules, sizeof(*cc.rule)) < 0)
		return oom(w, off);
	cc.rule = &c->command_rules[c->ncommand_rules++];
	memset(cc.rule, 0, sizeof(*cc.rule));
	cc.rule->decision = MOAT_DENY;
	cc.rule->loc = loc_at(w, off);
	cc.pattern_off = cc.match_off = cc.is_regex_off = off;
	cc.is_regex = cc.match = -1;
	r = walk_object(w, v, off, cmd_rule_specs, MOAT_ARRAY_SIZE(cmd_rule_specs), &cc);
	if (r < 0)
		return r;
	/* is_regex (Aar's key) and match must agree */
	if (cc.match >= 0 && cc.is_regex >= 0 &&
	    (cc.is_regex == 1) != (cc.match == MOAT_CMD_MATCH_REGEX)) {
		push_key(w, "match");
		r = fail_at(w, cc.match_off, "\"match\": \"%s\" contradicts \"is_regex\": %s",
			    cmd_match_names[cc.match], cc.is_regex ? "true" : "false");
		pop(w);
		return r;
	}
	cc.rule->match = cc.match >= 0	  ? (enum moat_cmd_match)cc.match
			 : cc.is_regex == 1 ? MOAT_CMD_MATCH_REGEX
					    : MOAT_CMD_MATCH_SUBSTRING;
	cc.rule->match_given = cc.match >= 0 || cc.is_regex == 1;
	cc.rule->pattern_loc = loc_at(w, cc.pattern_off);
	/* match may follow the pattern: check the pattern last */
	push_key(w, "pattern");
	switch (cc.rule->match) {
	case MOAT_CMD_MATCH_REGEX:
		r = check_regex(cc.rule->pattern, w->err);
		break;
	case MOAT_CMD_MATCH_GLOB:
		r = check_glob(cc.rule->pattern, MOAT_GLOB_TEXT, w->err);
		break;
	case MOAT_CMD_MATCH_SUBSTRING:
	default:
		r = 0;
		if (!cc.rule->pattern[strspn(cc.rule->pattern, " \t\n\r\v\f")]) {
			moat_error_set(w->err, "an empty or blank substring would match every "
					       "command");
			r = -EINVAL;
		}
		break;
	}
	if (r < 0)
		r = fail_keep_msg(w, cc.pattern_off, r);
	pop(w);
	return r;
}

static int h_command_rules(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			   void *t)
{
	struct moat_config *c = t;
	int r = expect_type(w, v, off, JSON_ARRAY);

	if (r < 0)
		return r;
	r = check_count(w, off, c->ncommand_rules, json_array_size(v));
	if (r < 0)
		return r;
	return walk_elements(w, v, off, cmd_rule_element, c);
}

/* ---- plain string lists (denied_commands) ----- */

static int cmdlist_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct list_ctx *lc = ud;
	const char *s;
	struct moat_loc loc;
	int r = get_string(w, v, off, "pattern", &s);

	if (r < 0)
		return r;
	loc = loc_at(w, off);
	if (strlist_push(lc->list, moat_strdup(s), &loc) < 0)
		return oom(w, off);
	return 0;
}

static int h_cmdlist(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct list_ctx lc = {(struct moat_strlist *)((char *)t + s->field)};
	int r = expect_type(w, v, off, JSON_ARRAY);

	if (r < 0)
		return r;
	r = check_count(w, off, lc.list->n, json_array_size(v));
	if (r < 0)
		return r;
	return walk_elements(w, v, off, cmdlist_element, &lc);
}

/* ---- network ----- */

static int domain_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct list_ctx *lc = ud;
	const char *s;
	char *d;
	struct moat_loc loc;
	int r = get_string(w, v, off, "domain", &s);

	if (r < 0)
		return r;
	if (strlen(s) > MOAT_CONFIG_MAX_DOMAIN)
		return fail_at(w, off, "domain longer than %u bytes", MOAT_CONFIG_MAX_DOMAIN);
	for (const char *p = s; *p; p++) {
		char ch = *p;

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || strchr(".-_*:[]", ch)))
			return fail_at(
			    w, off,
			    "invalid domain (expected a host name such as "
			    "\"example.com\" or \".example.com\", without scheme or path)");
	}
	d = moat_strdup(s);
	if (!d)
		return oom(w, off);
	/* host names compare without case: store them lower-cased */
	for (char *p = d; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	loc = loc_at(w, off);
	if (strlist_push(lc->list, d, &loc) < 0)
		return oom(w, off);
	return 0;
}

static int h_domains(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct list_ctx lc = {(struct moat_strlist *)((char *)t + s->field)};
	int r = expect_type(w, v, off, JSON_ARRAY);

	if (r < 0)
		return r;
	r = check_count(w, off, lc.list->n, json_array_size(v));
	if (r < 0)
		return r;
	return walk_elements(w, v, off, domain_element, &lc);
}

static const struct key_spec network_specs[] = {
    {"allow_domains", h_domains, P_ANY, false, FIELD(struct moat_config, allow_domains)},
    {"block_domains", h_domains, P_ANY, false, FIELD(struct moat_config, block_domains)},
    {"allow_local", h_bool, P_NEVER, false, FIELD(struct moat_config, allow_local_network)},
};

static int h_network(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	return walk_object(w, v, off, network_specs, MOAT_ARRAY_SIZE(network_specs), t);
}

/* ---- sandbox ----- */

static int h_sandbox_mode(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			  void *t)
{
	struct moat_config *c = t;
	const char *m;
	int r = expect_type(w, v, off, JSON_STRING);

	if (r < 0)
		return r;
	m = json_string_value(v);
	if (!strcmp(m, "local"))
		c->sandbox_mode = MOAT_SANDBOX_LOCAL;
	else if (!strcmp(m, "linux"))
		c->sandbox_mode = MOAT_SANDBOX_LINUX;
	else if (!strcmp(m, "auto"))
		c->sandbox_mode = MOAT_SANDBOX_AUTO;
	else if (!strcmp(m, "windows") || !strcmp(m, "wsl"))
		return fail_at(w, off,
			       "mode \"%s\" is not available in moat (expected \"local\", "
			       "\"linux\" or \"auto\")",
			       m);
	else
		return fail_at(w, off, "expected \"local\", \"linux\" or \"auto\"");
	return 0;
}

static int h_workspace(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct moat_config *c = t;
	struct moat_buf b = MOAT_BUF_INIT;
	const char *str;
	int r;

	if (json_is_null(v)) {
		free(c->sandbox_workspace);
		c->sandbox_workspace = NULL;
		return 0;
	}
	r = get_string(w, v, off, "path", &str);
	if (r < 0)
		return r;
	r = moat_config_expand_ex(str, 0, &b, w->err);
	if (r < 0) {
		moat_buf_release(&b);
		return fail_keep_msg(w, off, r);
	}
	free(c->sandbox_workspace);
	c->sandbox_workspace = moat_buf_steal(&b);
	return c->sandbox_workspace ? 0 : oom(w, off);
}

static int h_max_memory(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct moat_config *c = t;
	json_int_t mb;
	int r;

	if (json_is_null(v)) {
		c->max_memory_mb = 0;
		return 0;
	}
	r = expect_type(w, v, off, JSON_INTEGER);
	if (r < 0)
		return r;
	mb = json_integer_value(v);
	if (mb < 1 || mb > MOAT_CONFIG_MAX_MEMORY_MB)
		return fail_at(w, off, "expected an integer from 1 to %u, got %lld",
			       MOAT_CONFIG_MAX_MEMORY_MB, (long long)mb);
	c->max_memory_mb = (long)mb;
	return 0;
}

static const struct key_spec sandbox_linux_specs[] = {
    {"workspace", h_workspace, P_NEVER, false, 0},
    {"max_memory_mb", h_max_memory, P_NEVER, false, 0},
};

static int h_sandbox_linux(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			   void *t)
{
	return walk_object(w, v, off, sandbox_linux_specs, MOAT_ARRAY_SIZE(sandbox_linux_specs), t);
}

/* ---- sandbox profiles ----- */

/* A named profile being loaded: its definition and where it was written. */
struct profile_ctx {
	struct moat_profile_def *d;
	struct moat_profile_locs *locs;
	bool extra; /* inside "extra": lists add to the base instead of replacing it */
};

/* The list a profile key fills, and the field bit it sets. */
static struct moat_strv *profile_list(struct moat_profile *p, const char *key, unsigned *bit)
{
	static const struct {
		const char *key;
		size_t off;
		unsigned bit;
	} lists[] = {
	    {"ro", offsetof(struct moat_profile, ro), MOAT_PF_RO},
	    {"rw", offsetof(struct moat_profile, rw), MOAT_PF_RW},
	    {"mask", offsetof(struct moat_profile, mask), MOAT_PF_MASK},
	    {"protect", offsetof(struct moat_profile, protect), MOAT_PF_PROTECT},
	    {"allow_sockets", offsetof(struct moat_profile, sockets), MOAT_PF_SOCKETS},
	    {"env_keep", offsetof(struct moat_profile, env_pass), MOAT_PF_ENV_PASS},
	};

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(lists); i++) {
		if (!strcmp(lists[i].key, key)) {
			*bit = lists[i].bit;
			return (struct moat_strv *)((char *)p + lists[i].off);
		}
	}
	return NULL;
}

static bool env_name_ok(const char *s)
{
	size_t n = 0;

	if (!name_start(s[0]))
		return false;
	while (s[n] && name_char(s[n]))
		n++;
	return !s[n] && n <= MOAT_CONFIG_MAX_VAR_NAME;
}

struct plist_ctx {
	struct moat_strv *l;
	const char *key;
};

static int profile_list_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct plist_ctx *pc = ud;
	struct moat_buf b = MOAT_BUF_INIT;
	const char *str;
	char *val = NULL;
	int r = get_string(w, v, off, "entry", &str);

	if (r < 0)
		return r;
	if (!strcmp(pc->key, "mask")) {
		/* a glob: absolute (after ~ and $VAR) or "**" + "/NAME" */
		r = path_pattern(str, &val, w->err);
		if (r < 0)
			return fail_keep_msg(w, off, r);
		if (val[0] != '/' && strncmp(val, "**/", 3)) {
			free(val);
			return fail_at(w, off,
				       "expected an absolute path or glob (or ~/..., $VAR/..., "
				       "**/NAME)");
		}
	} else if (!strcmp(pc->key, "protect")) {
		if (!moat_protect_name_ok(str))
			return fail_at(w, off,
				       "expected a path relative to the workspace, without '.' "
				       "or '..' components");
	} else if (!strcmp(pc->key, "env_keep")) {
		if (!env_name_ok(str))
			return fail_at(w, off,
				       "expected an environment variable name "
				       "([A-Za-z_][A-Za-z0-9_]*, at most %u bytes)",
				       MOAT_CONFIG_MAX_VAR_NAME);
	} else {
		/* ro, rw, allow_sockets: plain paths, not globs */
		r = moat_config_expand_ex(str, 0, &b, w->err);
		if (r < 0) {
			moat_buf_release(&b);
			return fail_keep_msg(w, off, r);
		}
		if (!b.data || b.data[0] != '/') {
			moat_buf_release(&b);
			return fail_at(w, off, "expected an absolute path (or ~/..., $VAR/...)");
		}
		val = moat_buf_steal(&b);
		if (!val)
			return oom(w, off);
	}
	r = moat_strv_add(pc->l, val ? val : str);
	free(val);
	if (r == -E2BIG)
		return fail_at(w, off, "too many entries (limit %d)",
			       !strcmp(pc->key, "env_keep") ? MOAT_PLAN_MAX_ENV_NAMES
							    : MOAT_PLAN_MAX_PATHS);
	if (r < 0)
		return oom(w, off);
	if (!strcmp(pc->key, "env_keep") && pc->l->n > MOAT_PLAN_MAX_ENV_NAMES)
		return fail_at(w, off, "too many entries (limit %d)", MOAT_PLAN_MAX_ENV_NAMES);
	return 0;
}

/* ro, rw, mask, protect, allow_sockets, env_keep: a plain key replaces the
 * base's list, inside "extra" it adds to it (seed 003) */
static int h_pf_list(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct profile_ctx *pc = t;
	struct plist_ctx lc;
	unsigned bit = 0;
	int r = expect_type(w, v, off, JSON_ARRAY);

	if (r < 0)
		return r;
	lc.key = s->name;
	lc.l = profile_list(&pc->d->layer, s->name, &bit);
	if (!lc.l)
		return fail_internal(w, off);
	if (!pc->extra)
		lc.l->replace = true;
	pc->d->layer.set |= bit;
	return walk_elements(w, v, off, profile_list_element, &lc);
}

/* A string that must be one of names[]; *ret gets its index. */
static int get_enum(struct walker *w, json_t *v, size_t off, const char *const *names,
		    const char *expected, int *ret)
{
	int r = expect_type(w, v, off, JSON_STRING);

	if (r < 0)
		return r;
	for (int i = 0; names[i]; i++) {
		if (!strcmp(json_string_value(v), names[i])) {
			*ret = i;
			return 0;
		}
	}
	return fail_at(w, off, "expected %s", expected);
}

static int get_profile_name(struct walker *w, json_t *v, size_t off, const char **ret)
{
	int r = expect_type(w, v, off, JSON_STRING);

	if (r < 0)
		return r;
	if (!moat_profile_name_ok(json_string_value(v)))
		return fail_at(w, off,
			       "invalid profile name (expected 1 to %d characters of A-Z a-z 0-9 "
			       "_ . -)",
			       MOAT_PLAN_MAX_NAME);
	*ret = json_string_value(v);
	return 0;
}

static int h_pf_extends(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct profile_ctx *pc = t;
	const char *name;
	int r = get_profile_name(w, v, off, &name);

	if (r < 0)
		return r;
	free(pc->d->extends);
	pc->d->extends = moat_strdup(name);
	pc->locs->extends = loc_at(w, off);
	return pc->d->extends ? 0 : oom(w, off);
}

static int h_pf_description(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			    void *t)
{
	struct profile_ctx *pc = t;
	const char *str;
	int r = get_string(w, v, off, "description", &str);

	if (r < 0)
		return r;
	free(pc->d->description);
	pc->d->description = moat_strdup(str);
	return pc->d->description ? 0 : oom(w, off);
}

static int h_pf_workspace(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			  void *t)
{
	static const char *const names[] = {"ro", "rw", NULL};
	struct moat_profile *p = &((struct profile_ctx *)t)->d->layer;
	int i, r = get_enum(w, v, off, names, "\"ro\" or \"rw\"", &i);

	if (r < 0)
		return r;
	p->workspace = i ? MOAT_WS_RW : MOAT_WS_RO;
	p->set |= MOAT_PF_WORKSPACE;
	return 0;
}

static int h_pf_home(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	static const char *const names[] = {"ro", "cow", NULL};
	struct moat_profile *p = &((struct profile_ctx *)t)->d->layer;
	int i, r = get_enum(w, v, off, names, "\"cow\" or \"ro\"", &i);

	if (r < 0)
		return r;
	p->home_cow = i == 1;
	p->set |= MOAT_PF_HOME;
	return 0;
}

static int h_pf_env(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	static const char *const names[] = {"none", "restricted", "full", NULL};
	struct moat_profile *p = &((struct profile_ctx *)t)->d->layer;
	int i, r = get_enum(w, v, off, names, "\"none\", \"restricted\" or \"full\"", &i);

	if (r < 0)
		return r;
	p->env = i == 0 ? MOAT_ENV_NONE : i == 1 ? MOAT_ENV_RESTRICTED : MOAT_ENV_FULL;
	p->set |= MOAT_PF_ENV;
	return 0;
}

static const char *const fallback_names[] = {"deny", "ask", "warn", NULL};
#define FALLBACK_EXPECTED "\"deny\", \"ask\" or \"warn\""

static enum moat_fallback fallback_of(int i)
{
	return i == 0 ? MOAT_FALLBACK_DENY : i == 1 ? MOAT_FALLBACK_ASK : MOAT_FALLBACK_WARN;
}

static int h_pf_fallback(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct moat_profile *p = &((struct profile_ctx *)t)->d->layer;
	int i, r = get_enum(w, v, off, fallback_names, FALLBACK_EXPECTED, &i);

	if (r < 0)
		return r;
	p->fallback = fallback_of(i);
	p->set |= MOAT_PF_FALLBACK;
	return 0;
}

static int port_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct moat_profile *p = ud;
	json_int_t port;
	int r = expect_type(w, v, off, JSON_INTEGER);

	if (r < 0)
		return r;
	port = json_integer_value(v);
	if (port < 1 || port > 65535)
		return fail_at(w, off, "expected a port from 1 to 65535, got %lld",
			       (long long)port);
	for (size_t k = 0; k < p->nports; k++)
		if (p->ports[k] == (uint16_t)port)
			return 0;
	if (p->nports >= MOAT_PLAN_MAX_PORTS)
		return fail_at(w, off, "too many ports (limit %d)", MOAT_PLAN_MAX_PORTS);
	p->ports[p->nports++] = (uint16_t)port;
	return 0;
}

/* "deny", "allow", or the TCP ports that may be connected to */
static int h_pf_network(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	static const char *const names[] = {"deny", "allow", NULL};
	struct moat_profile *p = &((struct profile_ctx *)t)->d->layer;
	int i, r;

	p->set |= MOAT_PF_NET;
	p->nports = 0;
	if (json_is_array(v)) {
		if (json_array_size(v) == 0)
			return fail_at(w, off, "expected at least one port (\"deny\" allows none)");
		p->net = MOAT_NET_PORTS;
		return walk_elements(w, v, off, port_element, p);
	}
	if (!json_is_string(v))
		return fail_at(w, off, "expected \"deny\", \"allow\" or an array of ports, got %s",
			       moat_json_type_name(v));
	r = get_enum(w, v, off, names, "\"deny\", \"allow\" or an array of ports", &i);
	if (r < 0)
		return r;
	p->net = i ? MOAT_NET_ALLOW : MOAT_NET_DENY;
	return 0;
}

/* The limits: each an integer from 0 (no limit) to its maximum, or null
 * (inherit). */
static const struct {
	const char *name;
	size_t off;
	unsigned bit;
	long max;
} limit_keys[] = {
    {"mem_mb", offsetof(struct moat_profile, mem_mb), MOAT_PF_MEM, MOAT_PLAN_MAX_MEM_MB},
    {"pids", offsetof(struct moat_profile, pids), MOAT_PF_PIDS, MOAT_PLAN_MAX_PIDS},
    {"cpu_s", offsetof(struct moat_profile, cpu_s), MOAT_PF_CPU, MOAT_PLAN_MAX_TIMEOUT_S},
    {"fsize_mb", offsetof(struct moat_profile, fsize_mb), MOAT_PF_FSIZE, MOAT_PLAN_MAX_MEM_MB},
    {"nofile", offsetof(struct moat_profile, nofile), MOAT_PF_NOFILE, MOAT_PLAN_MAX_NOFILE},
    {"timeout_s", offsetof(struct moat_profile, timeout_s), MOAT_PF_TIMEOUT,
     MOAT_PLAN_MAX_TIMEOUT_S},
};

static int h_pf_limit(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct moat_profile *p = &((struct profile_ctx *)t)->d->layer;
	json_int_t n;
	int r;

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(limit_keys); i++) {
		if (strcmp(limit_keys[i].name, s->name))
			continue;
		if (json_is_null(v)) {
			p->set &= ~limit_keys[i].bit;
			return 0;
		}
		r = expect_type(w, v, off, JSON_INTEGER);
		if (r < 0)
			return r;
		n = json_integer_value(v);
		if (n < 0 || n > limit_keys[i].max)
			return fail_at(w, off,
				       "expected an integer from 0 (no limit) to %ld, got %lld",
				       limit_keys[i].max, (long long)n);
		*(long *)((char *)p + limit_keys[i].off) = (long)n;
		p->set |= limit_keys[i].bit;
		return 0;
	}
	return fail_internal(w, off);
}

static const struct key_spec limits_specs[] = {
    {"mem_mb", h_pf_limit, P_ANY, false, 0}, {"pids", h_pf_limit, P_ANY, false, 0},
    {"cpu_s", h_pf_limit, P_ANY, false, 0},  {"fsize_mb", h_pf_limit, P_ANY, false, 0},
    {"nofile", h_pf_limit, P_ANY, false, 0},
};

static int h_pf_limits(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	return walk_object(w, v, off, limits_specs, MOAT_ARRAY_SIZE(limits_specs), t);
}

static const char *const dim_names[] = {"filesystem", "network", "process", "environment", NULL};
static const unsigned dim_bits[] = {MOAT_DIM_FS, MOAT_DIM_NET, MOAT_DIM_PROC, MOAT_DIM_ENV};

static int dim_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct moat_profile *p = ud;
	int k, r = get_enum(w, v, off, dim_names,
			    "\"filesystem\", \"network\", \"process\" or \"environment\"", &k);

	if (r < 0)
		return r;
	p->immutable |= dim_bits[k];
	return 0;
}

/* seed 004: dimensions a later layer (another profile, the flags) may only
 * tighten */
static int h_pf_immutable(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			  void *t)
{
	struct moat_profile *p = &((struct profile_ctx *)t)->d->layer;
	int r = expect_type(w, v, off, JSON_ARRAY);

	if (r < 0)
		return r;
	return walk_elements(w, v, off, dim_element, p);
}

static const struct key_spec extra_specs[] = {
    {"ro", h_pf_list, P_ANY, false, 0},
    {"rw", h_pf_list, P_ANY, false, 0},
    {"mask", h_pf_list, P_ANY, false, 0},
    {"protect", h_pf_list, P_ANY, false, 0},
    {"allow_sockets", h_pf_list, P_ANY, false, 0},
    {"env_keep", h_pf_list, P_ANY, false, 0},
};

static int h_pf_extra(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct profile_ctx *pc = t;
	int r;

	pc->extra = true;
	r = walk_object(w, v, off, extra_specs, MOAT_ARRAY_SIZE(extra_specs), t);
	pc->extra = false;
	return r;
}

static const struct key_spec profile_specs[] = {
    {"extends", h_pf_extends, P_ANY, true, 0},
    {"description", h_pf_description, P_ANY, false, 0},
    {"workspace", h_pf_workspace, P_ANY, false, 0},
    {"ro", h_pf_list, P_ANY, false, 0},
    {"rw", h_pf_list, P_ANY, false, 0},
    {"mask", h_pf_list, P_ANY, false, 0},
    {"protect", h_pf_list, P_ANY, false, 0},
    {"allow_sockets", h_pf_list, P_ANY, false, 0},
    {"home", h_pf_home, P_ANY, false, 0},
    {"network", h_pf_network, P_ANY, false, 0},
    {"env", h_pf_env, P_ANY, false, 0},
    {"env_keep", h_pf_list, P_ANY, false, 0},
    {"limits", h_pf_limits, P_ANY, false, 0},
    {"timeout_s", h_pf_limit, P_ANY, false, 0},
    {"fallback", h_pf_fallback, P_ANY, false, 0},
    {"immutable", h_pf_immutable, P_ANY, false, 0},
    {"extra", h_pf_extra, P_ANY, false, 0},
};

static int profile_member(struct walker *w, const char *key, json_t *v, size_t koff, size_t voff,
			  void *ud)
{
	struct moat_config *c = ud;
	struct profile_ctx pc;
	size_t i;

	if (!moat_profile_name_ok(key))
		return fail_at(w, koff,
			       "invalid profile name (expected 1 to %d characters of A-Z a-z 0-9 "
			       "_ . -)",
			       MOAT_PLAN_MAX_NAME);
	if (moat_profile_is_builtin(key))
		return fail_at(w, koff,
			       "the built-in profile '%s' cannot be redefined (define a new one "
			       "that extends it)",
			       key);
	/* a later file's definition replaces an earlier one of the same name */
	for (i = 0; i < c->nprofiles; i++)
		if (!strcmp(c->profiles[i].name, key))
			break;
	if (i < c->nprofiles) {
		moat_profile_def_release(&c->profiles[i]);
	} else {
		if (c->nprofiles >= MOAT_PLAN_MAX_PROFILES)
			return fail_at(w, koff, "too many profiles (limit %d)",
				       MOAT_PLAN_MAX_PROFILES);
		if (grow((void **)&c->profiles, c->nprofiles, sizeof(*c->profiles)) < 0 ||
		    grow((void **)&c->profile_locs, c->nprofiles, sizeof(*c->profile_locs)) < 0)
			return oom(w, koff);
		i = c->nprofiles++;
	}
	memset(&c->profiles[i], 0, sizeof(c->profiles[i]));
	moat_profile_init(&c->profiles[i].layer, key);
	c->profiles[i].name = moat_strdup(key);
	if (!c->profiles[i].name)
		return oom(w, koff);
	c->profile_locs[i].name = loc_at(w, koff);
	c->profile_locs[i].extends = c->profile_locs[i].name;
	pc.d = &c->profiles[i];
	pc.locs = &c->profile_locs[i];
	pc.extra = false;
	return walk_object(w, v, voff, profile_specs, MOAT_ARRAY_SIZE(profile_specs), &pc);
}

static int h_profiles(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	int r = expect_type(w, v, off, JSON_OBJECT);

	if (r < 0)
		return r;
	return walk_members(w, v, off, profile_member, t);
}

static int h_sandbox_profile(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			     void *t)
{
	struct moat_config *c = t;
	const char *name;
	int r;

	free(c->sandbox_profile);
	c->sandbox_profile = NULL;
	if (json_is_null(v))
		return 0;
	r = get_profile_name(w, v, off, &name);
	if (r < 0)
		return r;
	c->sandbox_profile = moat_strdup(name);
	c->sandbox_profile_loc = loc_at(w, off);
	return c->sandbox_profile ? 0 : oom(w, off);
}

static int h_sandbox_fallback(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			      void *t)
{
	struct moat_config *c = t;
	int i, r;

	if (json_is_null(v)) {
		c->sandbox_fallback = -1;
		return 0;
	}
	r = get_enum(w, v, off, fallback_names, FALLBACK_EXPECTED, &i);
	if (r < 0)
		return r;
	c->sandbox_fallback = (int)fallback_of(i);
	return 0;
}

static int accept_gap_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct moat_config *c = ud;
	char names[512];
	int f, r = expect_type(w, v, off, JSON_STRING);

	(void)i;
	if (r < 0)
		return r;
	f = moat_feature_by_name(json_string_value(v), json_string_length(v));
	if (f < 0) {
		moat_gap_set_names((1u << MOAT_FEAT__COUNT) - 1, ", ", names, sizeof(names));
		return fail_at(w, off, "unknown protection \"%.64s\" (expected one of: %s)",
			       json_string_value(v), names);
	}
	c->sandbox_accept_gaps |= 1u << f;
	return 0;
}

/* sandbox.accept_gaps: names of protections (moat_feature_name) */
static int h_sandbox_accept_gaps(struct walker *w, const struct key_spec *s, json_t *v,
				 size_t off, void *t)
{
	struct moat_config *c = t;
	int r;

	c->sandbox_accept_gaps = 0;
	if (json_is_null(v))
		return 0;
	r = expect_type(w, v, off, JSON_ARRAY);
	if (r < 0)
		return r;
	return walk_elements(w, v, off, accept_gap_element, c);
}

static bool valid_tool_name(const char *s);

struct rule_ctx {
	struct moat_config *c;
	struct moat_tool_rule *r;
};

static int h_rule_tool(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct rule_ctx *rc = t;
	int r = expect_type(w, v, off, JSON_STRING);

	if (r < 0)
		return r;
	if (!valid_tool_name(json_string_value(v)))
		return fail_at(
		    w, off, "invalid tool name (expected 1 to %u characters of A-Z a-z 0-9 _ . -)",
		    MOAT_CONFIG_MAX_TOOL_NAME);
	rc->r->tool = moat_strdup(json_string_value(v));
	return rc->r->tool ? 0 : oom(w, off);
}

static int h_rule_profile(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			  void *t)
{
	struct rule_ctx *rc = t;
	const char *name;
	int r = get_profile_name(w, v, off, &name);

	if (r < 0)
		return r;
	rc->r->profile = moat_strdup(name);
	rc->c->sandbox_rule_locs[rc->c->nsandbox_rules - 1] = loc_at(w, off);
	return rc->r->profile ? 0 : oom(w, off);
}

static const struct key_spec sandbox_rule_specs[] = {
    {"tool", h_rule_tool, P_ANY, true, 0},
    {"profile", h_rule_profile, P_ANY, true, 0},
};

static int sandbox_rule_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct moat_config *c = ud;
	struct rule_ctx rc;

	if (c->nsandbox_rules >= MOAT_PLAN_MAX_RULES)
		return fail_at(w, off, "too many rules (limit %d)", MOAT_PLAN_MAX_RULES);
	if (grow((void **)&c->sandbox_rules, c->nsandbox_rules, sizeof(*c->sandbox_rules)) < 0 ||
	    grow((void **)&c->sandbox_rule_locs, c->nsandbox_rules, sizeof(*c->sandbox_rule_locs)) <
		0)
		return oom(w, off);
	rc.c = c;
	rc.r = &c->sandbox_rules[c->nsandbox_rules];
	memset(rc.r, 0, sizeof(*rc.r));
	c->sandbox_rule_locs[c->nsandbox_rules] = loc_at(w, off);
	c->nsandbox_rules++;
	return walk_object(w, v, off, sandbox_rule_specs, MOAT_ARRAY_SIZE(sandbox_rule_specs), &rc);
}

/* sandbox.rules: appended across files; the first rule naming a tool wins */
static int h_sandbox_rules(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			   void *t)
{
	int r = expect_type(w, v, off, JSON_ARRAY);

	if (r < 0)
		return r;
	return walk_elements(w, v, off, sandbox_rule_element, t);
}

/* The configuration-wide layer under every named profile. */
static void sandbox_defaults(const struct moat_config *c, struct moat_profile *d)
{
	moat_profile_init(d, "configuration");
	if (c->sandbox_fallback >= 0) {
		d->fallback = (enum moat_fallback)c->sandbox_fallback;
		d->set |= MOAT_PF_FALLBACK;
	}
	if (c->max_memory_mb > 0) {
		d->mem_mb = c->max_memory_mb;
		d->set |= MOAT_PF_MEM;
	}
}

int moat_config_sandbox_profile(const struct moat_config *c, const char *name,
				struct moat_profile *ret, struct moat_error *err)
{
	struct moat_profile d;

	if (!c || !ret)
		return -EINVAL;
	sandbox_defaults(c, &d);
	return moat_profile_resolve(name ? name : c->sandbox_profile, c->profiles, c->nprofiles, &d,
				    ret, NULL, err);
}

const char *moat_config_profile_for_tool(const struct moat_config *c, const char *tool)
{
	if (!c)
		return MOAT_PROFILE_DEFAULT;
	return moat_profile_for_tool(c->sandbox_rules, c->nsandbox_rules, tool, c->sandbox_profile);
}

/* An error found after the walk, at a location recorded during it. */
static int fail_at_loc(struct walker *w, const struct moat_loc *loc, const char *key,
		       const char *msg)
{
	if (!w->err)
		return -EINVAL;
	moat_error_set_where(w->err, loc->file ? loc->file : w->name, loc->line, loc->column);
	moat_error_set_key(w->err, key);
	moat_strlcpy(w->err->msg, msg, sizeof(w->err->msg));
	return -EINVAL;
}

/* SECURITY: seed 002's fail-closed table: every named profile, the default
 * profile and every rule's profile must resolve when the file loads, so a
 * broken profile is reported by `moat config check` and refused by `moat
 * run`, never silently replaced by another one. */
static int validate_profiles(struct walker *w, struct moat_config *c)
{
	struct moat_profile d, p;
	struct moat_error e;
	char key[MOAT_PLAN_MAX_NAME + 64];
	int r;

	sandbox_defaults(c, &d);
	for (size_t i = 0; i < c->nprofiles; i++) {
		size_t culprit = SIZE_MAX;

		moat_error_clear(&e);
		r = moat_profile_resolve(c->profiles[i].name, c->profiles, c->nprofiles, &d, &p,
					 &culprit, &e);
		if (r == 0) {
			moat_profile_release(&p);
			continue;
		}
		if (r == -ENOMEM)
			return oom(w, 0);
		if (culprit >= c->nprofiles)
			culprit = i;
		if (r == -ENOENT || r == -ELOOP) {
			snprintf(key, sizeof(key), "safety.sandbox.profiles.%s.extends",
				 c->profiles[culprit].name);
			return fail_at_loc(w, &c->profile_locs[culprit].extends, key, e.msg);
		}
		snprintf(key, sizeof(key), "safety.sandbox.profiles.%s", c->profiles[culprit].name);
		return fail_at_loc(w, &c->profile_locs[culprit].name, key, e.msg);
	}
	if (c->sandbox_profile && !moat_profile_is_builtin(c->sandbox_profile)) {
		bool found = false;

		for (size_t i = 0; i < c->nprofiles && !found; i++)
			found = !strcmp(c->profiles[i].name, c->sandbox_profile);
		if (!found) {
			snprintf(e.msg, sizeof(e.msg),
				 "unknown profile '%s' (built-in: readonly, workspace-write, "
				 "workspace-write-no-network; others are defined in "
				 "sandbox.profiles)",
				 c->sandbox_profile);
			return fail_at_loc(w, &c->sandbox_profile_loc, "safety.sandbox.profile",
					   e.msg);
		}
	}
	for (size_t k = 0; k < c->nsandbox_rules; k++) {
		const char *name = c->sandbox_rules[k].profile;
		bool found = moat_profile_is_builtin(name);

		for (size_t i = 0; i < c->nprofiles && !found; i++)
			found = !strcmp(c->profiles[i].name, name);
		if (!found) {
			snprintf(e.msg, sizeof(e.msg), "unknown profile '%s'", name);
			snprintf(key, sizeof(key), "safety.sandbox.rules[%zu].profile", k);
			return fail_at_loc(w, &c->sandbox_rule_locs[k], key, e.msg);
		}
	}
	return 0;
}

/* Keys that choose or weaken confinement are P_NEVER: a project file may
 * neither define profiles nor pick one (it could loosen). */
/* sandbox.scan_max_entries: the workspace scan's bound (src/sandbox/scan.h) */
static int h_scan_max(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct moat_config *c = t;
	json_int_t n;
	int r;

	r = expect_type(w, v, off, JSON_INTEGER);
	if (r < 0)
		return r;
	n = json_integer_value(v);
	if (n < 1000 || (unsigned long long)n > MOAT_CONFIG_MAX_SCAN_ENTRIES)
		return fail_at(w, off, "expected an integer from 1000 to %llu, got %lld",
			       (unsigned long long)MOAT_CONFIG_MAX_SCAN_ENTRIES, (long long)n);
	c->scan_max_entries = (size_t)n;
	return 0;
}

static const struct key_spec sandbox_specs[] = {
    {"mode", h_sandbox_mode, P_NEVER, false, 0},
    {"scan_max_entries", h_scan_max, P_NEVER, false, 0},
    {"linux", h_sandbox_linux, P_ANY, false, 0},
    {"profile", h_sandbox_profile, P_NEVER, false, 0},
    {"fallback", h_sandbox_fallback, P_NEVER, false, 0},
    {"accept_gaps", h_sandbox_accept_gaps, P_NEVER, false, 0},
    {"profiles", h_profiles, P_NEVER, false, 0},
    {"rules", h_sandbox_rules, P_NEVER, false, 0},
    /* Aar compatibility: settings for other platforms, ignored */
    {"local", h_ignore_object, P_ANY, false, 0},
    {"windows", h_ignore_object, P_ANY, false, 0},
    {"wsl", h_ignore_object, P_ANY, false, 0},
};

static int h_sandbox(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	int r = walk_object(w, v, off, sandbox_specs, MOAT_ARRAY_SIZE(sandbox_specs), t);

	return r < 0 ? r : validate_profiles(w, t);
}

/* ---- tools ----- */

static int effect_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct moat_tool_decl *d = ud;
	const char *e;
	int r = expect_type(w, v, off, JSON_STRING);

	if (r < 0)
		return r;
	e = json_string_value(v);
	if (!strcmp(e, "read"))
		d->effects |= MOAT_EFFECT_READ;
	else if (!strcmp(e, "write"))
		d->effects |= MOAT_EFFECT_WRITE;
	else if (!strcmp(e, "execute"))
		d->effects |= MOAT_EFFECT_EXECUTE;
	else if (!strcmp(e, "network"))
		d->effects |= MOAT_EFFECT_NETWORK;
	else
		return fail_at(w, off, "expected \"read\", \"write\", \"execute\" or \"network\"");
	return 0;
}

static int h_effects(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	int r = expect_type(w, v, off, JSON_ARRAY);

	if (r < 0)
		return r;
	if (json_array_size(v) > MOAT_CONFIG_MAX_TOOL_ARGS)
		return fail_at(w, off, "too many entries (limit %u)", MOAT_CONFIG_MAX_TOOL_ARGS);
	return walk_elements(w, v, off, effect_element, t);
}

/* Argument names: what a tool call's JSON object uses as keys. */
static int arg_name(struct walker *w, json_t *v, size_t off, const char **ret)
{
	int r = get_string(w, v, off, "argument name", ret);

	if (r < 0)
		return r;
	if (strlen(*ret) > MOAT_CONFIG_MAX_TOOL_NAME)
		return fail_at(w, off, "argument name longer than %u bytes",
			       MOAT_CONFIG_MAX_TOOL_NAME);
	return 0;
}

static int path_arg_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct moat_tool_decl *d = ud;
	const char *s;
	struct moat_loc loc;
	int r = arg_name(w, v, off, &s);

	if (r < 0)
		return r;
	loc = loc_at(w, off);
	if (strlist_push(&d->path_args, moat_strdup(s), &loc) < 0)
		return oom(w, off);
	return 0;
}

static int h_path_args(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	int r = expect_type(w, v, off, JSON_ARRAY);

	if (r < 0)
		return r;
	if (json_array_size(v) > MOAT_CONFIG_MAX_TOOL_ARGS)
		return fail_at(w, off, "too many entries (limit %u)", MOAT_CONFIG_MAX_TOOL_ARGS);
	return walk_elements(w, v, off, path_arg_element, t);
}

static int h_tool_arg(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	char **field = (char **)((char *)t + s->field);
	const char *str;
	int r;

	if (json_is_null(v)) {
		free(*field);
		*field = NULL;
		return 0;
	}
	r = arg_name(w, v, off, &str);
	if (r < 0)
		return r;
	free(*field);
	*field = moat_strdup(str);
	return *field ? 0 : oom(w, off);
}

static const struct key_spec tool_specs[] = {
    {"effects", h_effects, P_ANY, true, 0},
    {"path_args", h_path_args, P_ANY, false, 0},
    {"command_arg", h_tool_arg, P_ANY, false, FIELD(struct moat_tool_decl, command_arg)},
    {"url_arg", h_tool_arg, P_ANY, false, FIELD(struct moat_tool_decl, url_arg)},
};

static bool valid_tool_name(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > MOAT_CONFIG_MAX_TOOL_NAME)
		return false;
	for (; *s; s++) {
		char ch = *s;

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-'))
			return false;
	}
	return true;
}

static int tool_member(struct walker *w, const char *key, json_t *v, size_t koff, size_t voff,
		       void *ud)
{
	struct moat_config *c = ud;
	struct moat_tool_decl *d = NULL;

	if (!valid_tool_name(key))
		return fail_at(w, koff,
			       "invalid tool name (expected 1 to %u characters of "
			       "A-Z a-z 0-9 _ . -)",
			       MOAT_CONFIG_MAX_TOOL_NAME);
	/* A later declaration of the same tool replaces the earlier one. Names
	 * are unique within one document (duplicate keys are refused), so only
	 * the tools of earlier documents need looking at. */
	for (size_t i = 0; i < w->ntools_before; i++) {
		if (!strcmp(c->tools[i].name, key)) {
			d = &c->tools[i];
			tool_release(d);
			break;
		}
	}
	if (!d) {
		if (c->ntools >= MOAT_CONFIG_MAX_TOOLS)
			return fail_at(w, koff, "too many tools (limit %u)", MOAT_CONFIG_MAX_TOOLS);
		if (grow((void **)&c->tools, c->ntools, sizeof(*d)) < 0)
			return oom(w, koff);
		d = &c->tools[c->ntools++];
		memset(d, 0, sizeof(*d));
	}
	d->name = moat_strdup(key);
	if (!d->name)
		return oom(w, koff);
	d->loc = loc_at(w, koff);
	return walk_object(w, v, voff, tool_specs, MOAT_ARRAY_SIZE(tool_specs), d);
}

static int h_tools(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	int r = expect_type(w, v, off, JSON_OBJECT);

	if (r < 0)
		return r;
	return walk_members(w, v, off, tool_member, t);
}

/* ---- approvals and the audit log ----- */

/* The alias the policy and the tools accept for bash (seed 000's Gemini
 * name): approvals name the canonical tool, so that an entry written for
 * either name applies to both. */
static const char *canonical_tool(const char *name)
{
	return !strcmp(name, "run_shell_command") ? "bash" : name;
}

struct approval_ctx {
	struct moat_approval_rule *r;
};

static int h_approval_tool(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			   void *t)
{
	struct approval_ctx *ac = t;
	int r = expect_type(w, v, off, JSON_STRING);

	if (r < 0)
		return r;
	if (!valid_tool_name(json_string_value(v)))
		return fail_at(
		    w, off, "invalid tool name (expected 1 to %u characters of A-Z a-z 0-9 _ . -)",
		    MOAT_CONFIG_MAX_TOOL_NAME);
	ac->r->tool = moat_strdup(canonical_tool(json_string_value(v)));
	return ac->r->tool ? 0 : oom(w, off);
}

static int h_approval_arg(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			  void *t)
{
	struct approval_ctx *ac = t;
	const char *str;
	int r = arg_name(w, v, off, &str);

	if (r < 0)
		return r;
	ac->r->arg = moat_strdup(str);
	return ac->r->arg ? 0 : oom(w, off);
}

static int h_approval_match(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			    void *t)
{
	struct approval_ctx *ac = t;
	const char *str;
	int r = get_string(w, v, off, "pattern", &str);

	if (r < 0)
		return r;
	/* The gate compiles it as a path glob for path arguments and as a
	 * text glob otherwise; the syntax is the same, check both anyway. */
	r = check_glob(str, MOAT_GLOB_TEXT, w->err);
	if (r >= 0)
		r = check_glob(str, MOAT_GLOB_PATH, w->err);
	if (r < 0)
		return fail_keep_msg(w, off, r);
	ac->r->match = moat_strdup(str);
	return ac->r->match ? 0 : oom(w, off);
}

static const struct key_spec approval_specs[] = {
    {"tool", h_approval_tool, P_ANY, true, 0},
    {"arg", h_approval_arg, P_ANY, true, 0},
    {"match", h_approval_match, P_ANY, true, 0},
};

static int approval_element(struct walker *w, size_t i, json_t *v, size_t off, void *ud)
{
	struct moat_config *c = ud;
	struct approval_ctx ac;

	if (grow((void **)&c->approvals, c->napprovals, sizeof(*ac.r)) < 0)
		return oom(w, off);
	ac.r = &c->approvals[c->napprovals++];
	memset(ac.r, 0, sizeof(*ac.r));
	ac.r->loc = loc_at(w, off);
	return walk_object(w, v, off, approval_specs, MOAT_ARRAY_SIZE(approval_specs), &ac);
}

/* approvals: appended across files */
static int h_approvals(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct moat_config *c = t;
	int r = expect_type(w, v, off, JSON_ARRAY);

	if (r < 0)
		return r;
	r = check_count(w, off, c->napprovals, json_array_size(v));
	if (r < 0)
		return r;
	return walk_elements(w, v, off, approval_element, c);
}

static int h_approval_timeout(struct walker *w, const struct key_spec *s, json_t *v, size_t off,
			      void *t)
{
	struct moat_config *c = t;
	json_int_t sec;
	int r = expect_type(w, v, off, JSON_INTEGER);

	if (r < 0)
		return r;
	sec = json_integer_value(v);
	if (sec < 1 || sec > MOAT_CONFIG_MAX_APPROVAL_TIMEOUT_S)
		return fail_at(w, off, "expected an integer from 1 to %d (seconds), got %lld",
			       MOAT_CONFIG_MAX_APPROVAL_TIMEOUT_S, (long long)sec);
	c->approval_timeout_s = (long)sec;
	c->approval_timeout_set = true;
	return 0;
}

/* audit_log: an absolute path after expansion, "-" for standard error, or
 * null for the default ($XDG_STATE_HOME/moat/audit.jsonl, chosen by the
 * audit writer: the core never reads the environment by itself). */
static int h_audit_log(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	struct moat_config *c = t;
	struct moat_buf b = MOAT_BUF_INIT;
	const char *str;
	int r;

	if (json_is_null(v)) {
		free(c->audit_log);
		c->audit_log = NULL;
		return 0;
	}
	r = get_string(w, v, off, "path", &str);
	if (r < 0)
		return r;
	if (!strcmp(str, "-")) {
		moat_buf_puts(&b, "-");
	} else {
		r = moat_config_expand_ex(str, 0, &b, w->err);
		if (r < 0) {
			moat_buf_release(&b);
			return fail_keep_msg(w, off, r);
		}
		if (!b.data || b.data[0] != '/') {
			moat_buf_release(&b);
			return fail_at(w, off,
				       "expected an absolute path (\"~/\" and variables expand) or "
				       "\"-\" for standard error");
		}
	}
	free(c->audit_log);
	c->audit_log = moat_buf_steal(&b);
	return c->audit_log ? 0 : oom(w, off);
}

/* ---- safety and the document ----- */

static const struct key_spec safety_specs[] = {
    {"read_only", h_bool, P_TRUE_ONLY, false, FIELD(struct moat_config, read_only)},
    {"require_approval_for_writes", h_bool, P_TRUE_ONLY, false,
     FIELD(struct moat_config, require_approval_for_writes)},
    {"require_approval_for_execute", h_bool, P_TRUE_ONLY, false,
     FIELD(struct moat_config, require_approval_for_execute)},
    {"path_rules", h_path_rules, P_ANY, false, 0},
    {"denied_paths", h_pathlist, P_ANY, false, FIELD(struct moat_config, denied_paths)},
    {"default_denied_paths", h_bool, P_NEVER, false,
     FIELD(struct moat_config, default_denied_paths)},
    {"exempt_paths", h_pathlist, P_NEVER, false, FIELD(struct moat_config, exempt_paths)},
    {"allowed_paths", h_allowed_paths, P_ANY, false, 0},
    {"read_only_paths", h_pathlist, P_ANY, false, FIELD(struct moat_config, read_only_paths)},
    {"command_rules", h_command_rules, P_ANY, false, 0},
    {"denied_commands", h_cmdlist, P_ANY, false, FIELD(struct moat_config, denied_commands)},
    {"default_denied_commands", h_bool, P_NEVER, false,
     FIELD(struct moat_config, default_denied_commands)},
    {"log_all_commands", h_bool, P_ANY, false, FIELD(struct moat_config, log_all_commands)},
    {"hardline", h_bool, P_NEVER, false, FIELD(struct moat_config, hardline)},
    {"network", h_network, P_ANY, false, 0},
    {"sandbox", h_sandbox, P_ANY, false, 0},
    {"tools", h_tools, P_NEVER, false, 0},
    {"approvals", h_approvals, P_NEVER, false, 0},
    {"approval_timeout", h_approval_timeout, P_ANY, false, 0},
    {"audit_log", h_audit_log, P_NEVER, false, 0},
    {"audit_fsync", h_bool, P_TRUE_ONLY, false, FIELD(struct moat_config, audit_fsync)},
    {"audit_required", h_bool, P_TRUE_ONLY, false, FIELD(struct moat_config, audit_required)},
    {"audit_syslog", h_bool, P_TRUE_ONLY, false, FIELD(struct moat_config, audit_syslog)},
};
static const size_t nsafety_specs = MOAT_ARRAY_SIZE(safety_specs);

/* Why a project file may not say this (after "not allowed in a project
 * config: "). */
static const char *project_refusal(const struct key_spec *s)
{
	if (s->fn == h_approvals)
		return "a repository must not pre-approve its own tool calls";
	if (s->fn == h_audit_log)
		return "a repository must not move the audit log";
	if (s->fn == h_sandbox_accept_gaps)
		return "a repository must not accept gaps in its own sandbox";
	if (s->fn == h_pathlist && s >= safety_specs && s < safety_specs + nsafety_specs &&
	    s->field == FIELD(struct moat_config, exempt_paths))
		return "a repository must not exempt its own files from the denied paths";
	if (s->fn == h_bool && s >= safety_specs && s < safety_specs + nsafety_specs &&
	    (s->field == FIELD(struct moat_config, audit_required) ||
	     s->field == FIELD(struct moat_config, audit_syslog) ||
	     s->field == FIELD(struct moat_config, audit_fsync)))
		return "a repository must not weaken the audit log";
	return "it could loosen the policy";
}

static int h_safety(struct walker *w, const struct key_spec *s, json_t *v, size_t off, void *t)
{
	return walk_object(w, v, off, safety_specs, nsafety_specs, t);
}

/* An Aar AgentConfig: "safety" is ours, the agent's own keys are ignored. */
static const struct key_spec document_specs[] = {
    {"safety", h_safety, P_ANY, false, 0},     {"provider", h_ignore, P_ANY, false, 0},
    {"model", h_ignore, P_ANY, false, 0},      {"max_steps", h_ignore, P_ANY, false, 0},
    {"timeout", h_ignore, P_ANY, false, 0},    {"system_prompt", h_ignore, P_ANY, false, 0},
    {"max_tokens", h_ignore, P_ANY, false, 0}, {"temperature", h_ignore, P_ANY, false, 0},
};

static int walk_document(struct walker *w, json_t *root)
{
	size_t off;
	const char *key;
	json_t *v;

	if (moat_json_root(w->text, w->len, &off) < 0)
		return fail_internal(w, 0);
	if (!json_is_object(root))
		return fail_at(w, off, "expected object, got %s", moat_json_type_name(root));
	/* wrapped when any top-level key is an AgentConfig key */
	json_object_foreach(root, key, v)
	{
		for (size_t i = 0; i < MOAT_ARRAY_SIZE(document_specs); i++)
			if (!strcmp(key, document_specs[i].name))
				w->wrapped = true;
	}
	if (w->wrapped)
		return walk_object(w, root, off, document_specs, MOAT_ARRAY_SIZE(document_specs),
				   w->c);
	return walk_object(w, root, off, safety_specs, nsafety_specs, w->c);
}

int moat_config_load_string(struct moat_config *c, const char *json, size_t len, const char *name,
			    unsigned flags, struct moat_error *err)
{
	struct moat_config tmp;
	struct walker w;
	json_t *root;
	int r;

	if (!c || (!json && len))
		return -EINVAL;
	if (!json)
		json = "";
	if (!name)
		name = "<config>";
	r = moat_json_parse(json, len, name, MOAT_CONFIG_MAX_BYTES, MOAT_CONFIG_MAX_DEPTH, &root,
			    err);
	if (r < 0)
		return r;
	r = config_copy(c, &tmp);
	if (r < 0) {
		json_decref(root);
		moat_error_set(err, "out of memory");
		return r;
	}
	memset(&w, 0, sizeof(w));
	w.text = json;
	w.len = len;
	w.name = name;
	w.project = flags & MOAT_CONFIG_PROJECT;
	w.c = &tmp;
	w.err = err;
	w.safety = safety_specs;
	w.nsafety = nsafety_specs;
	w.ntools_before = tmp.ntools;
	moat_json_pos_init(&w.pos);
	w.file = intern_file(&tmp, name);
	r = w.file ? walk_document(&w, root) : oom(&w, 0);
	json_decref(root);
	if (r < 0) {
		moat_config_release(&tmp);
		return r;
	}
	moat_config_release(c);
	*c = tmp;
	return 0;
}

/* ---- flag helpers ------------------------------------------------------- */

/* Split a flag value at commas outside braces ("{a,b}" stays whole), trim
 * blanks, refuse empty entries; expand and check each as a path glob. */
static int parse_csv(const char *csv, struct moat_strlist *out, struct moat_error *err)
{
	const char *p = csv;

	if (!csv)
		return -EINVAL;
	for (;;) {
		const char *s = p, *e;
		int depth = 0;
		char *entry, *pat;
		int r;

		while (*p && !(*p == ',' && depth == 0)) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '{')
				depth++;
			else if (*p == '}' && depth > 0)
				depth--;
			p++;
		}
		e = p;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (s == e) {
			moat_error_set(err, "empty entry in comma-separated list");
			return -EINVAL;
		}
		if ((size_t)(e - s) > MOAT_CONFIG_MAX_STRING) {
			moat_error_set(err, "entry longer than %d bytes", MOAT_CONFIG_MAX_STRING);
			return -EINVAL;
		}
		if (out->n >= MOAT_CONFIG_MAX_RULES) {
			moat_error_set(err, "too many entries (limit %d)", MOAT_CONFIG_MAX_RULES);
			return -EINVAL;
		}
		entry = moat_strndup(s, (size_t)(e - s));
		if (!entry)
			return -ENOMEM;
		r = path_pattern(entry, &pat, err);
		if (r < 0) {
			char msg[MOAT_ERROR_MSG_MAX];

			moat_strlcpy(msg, err ? err->msg : "", sizeof(msg));
			moat_error_set(err, "\"%.200s\": %s", entry, msg);
			free(entry);
			return r;
		}
		free(entry);
		if (strlist_push(out, pat, NULL) < 0)
			return -ENOMEM;
		if (!*p)
			return 0;
		p++;
	}
}

int moat_config_add_denied_paths_csv(struct moat_config *c, const char *csv, struct moat_error *err)
{
	struct moat_strlist l;
	int r;

	if (!c || !csv)
		return -EINVAL;
	r = strlist_copy(c, NULL, &c->denied_paths, &l);
	if (r >= 0)
		r = parse_csv(csv, &l, err);
	if (r >= 0 && l.n > MOAT_CONFIG_MAX_RULES) {
		moat_error_set(err, "too many entries (limit %d)", MOAT_CONFIG_MAX_RULES);
		r = -EINVAL;
	}
	if (r < 0) {
		if (r == -ENOMEM)
			moat_error_set(err, "out of memory");
		strlist_release(&l);
		return r;
	}
	strlist_release(&c->denied_paths);
	c->denied_paths = l;
	return 0;
}

int moat_config_set_allowed_paths_csv(struct moat_config *c, const char *csv,
				      struct moat_error *err)
{
	struct moat_strlist l = {0};
	int r;

	if (!c || !csv)
		return -EINVAL;
	r = parse_csv(csv, &l, err);
	if (r < 0) {
		if (r == -ENOMEM)
			moat_error_set(err, "out of memory");
		strlist_release(&l);
		return r;
	}
	strlist_release(&c->allowed_paths);
	c->allowed_paths = l;
	c->allowed_paths_set = true;
	return 0;
}

/* ---- effective configuration as JSON ------------------------------------ */

static void put_indent(struct moat_buf *b, int level)
{
	for (int i = 0; i < level; i++)
		moat_buf_puts(b, "  ");
}

static void put_str(struct moat_buf *b, const char *s)
{
	moat_buf_json_str(b, s, strlen(s));
}

static void put_key(struct moat_buf *b, int level, const char *key)
{
	put_indent(b, level);
	put_str(b, key);
	moat_buf_puts(b, ": ");
}

static void put_bool(struct moat_buf *b, int level, const char *key, bool v, bool last)
{
	put_key(b, level, key);
	moat_buf_puts(b, v ? "true" : "false");
	moat_buf_puts(b, last ? "\n" : ",\n");
}

static bool in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* A string array; defaults (may be NULL) first, then the user's entries
 * that do not repeat a default (so that loading the output again yields the
 * same output). */
static void put_list(struct moat_buf *b, int level, const char *key, const char *const *defaults,
		     const struct moat_strlist *l, bool last)
{
	bool any = false;

	put_key(b, level, key);
	moat_buf_putc(b, '[');
	for (size_t i = 0; defaults && defaults[i]; i++) {
		moat_buf_puts(b, any ? ",\n" : "\n");
		put_indent(b, level + 1);
		put_str(b, defaults[i]);
		any = true;
	}
	for (size_t i = 0; i < l->n; i++) {
		if (defaults && in_list(defaults, l->v[i]))
			continue;
		moat_buf_puts(b, any ? ",\n" : "\n");
		put_indent(b, level + 1);
		put_str(b, l->v[i]);
		any = true;
	}
	if (any) {
		moat_buf_putc(b, '\n');
		put_indent(b, level);
	}
	moat_buf_puts(b, last ? "]\n" : "],\n");
}

/* A plain path (not a glob) written so that loading expands it to itself. */
static void put_plain_path(struct moat_buf *b, const char *s)
{
	struct moat_buf e = MOAT_BUF_INIT;

	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '\\' || s[i] == '$' || (i == 0 && s[i] == '~'))
			moat_buf_putc(&e, '\\');
		moat_buf_putc(&e, s[i]);
	}
	if (e.oom)
		b->oom = true;
	else
		moat_buf_json_str(b, e.data ? e.data : "", e.len);
	moat_buf_release(&e);
}

/* The names command_rules use (moat_verdict_name lives in the policy). */
static const char *decision_name(enum moat_verdict v)
{
	return v == MOAT_ALLOW ? "allow" : v == MOAT_ASK ? "ask" : "deny";
}

static void put_opt_str(struct moat_buf *b, const char *s)
{
	if (s)
		put_str(b, s);
	else
		moat_buf_puts(b, "null");
}

static void put_strv(struct moat_buf *b, const struct moat_strv *l, bool plain_path)
{
	moat_buf_putc(b, '[');
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			moat_buf_puts(b, ", ");
		if (plain_path)
			put_plain_path(b, l->v[i]);
		else
			put_str(b, l->v[i]);
	}
	moat_buf_putc(b, ']');
}

/* One named profile, every field it sets; lists that replace the base's as
 * plain keys, lists that add to it under "extra" (loading it again gives
 * the same profile). */
static void put_profile(struct moat_buf *b, const struct moat_profile_def *d)
{
	static const struct {
		const char *key;
		unsigned bit;
		bool plain_path;
	} lists[] = {
	    {"ro", MOAT_PF_RO, true},
	    {"rw", MOAT_PF_RW, true},
	    {"mask", MOAT_PF_MASK, false},
	    {"protect", MOAT_PF_PROTECT, false},
	    {"allow_sockets", MOAT_PF_SOCKETS, true},
	    {"env_keep", MOAT_PF_ENV_PASS, false},
	};
	static const char *const envs[] = {"none", "restricted", "full"};
	const struct moat_profile *p = &d->layer;
	bool any = false;

	moat_buf_puts(b, "{\"extends\": ");
	put_str(b, d->extends ? d->extends : MOAT_PROFILE_DEFAULT);
	if (d->description) {
		moat_buf_puts(b, ", \"description\": ");
		put_str(b, d->description);
	}
	if (p->set & MOAT_PF_WORKSPACE)
		moat_buf_printf(b, ", \"workspace\": \"%s\"",
				p->workspace == MOAT_WS_RW ? "rw" : "ro");
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(lists); i++) {
		unsigned bit;
		const struct moat_strv *l =
		    profile_list((struct moat_profile *)p, lists[i].key, &bit);

		if (!(p->set & lists[i].bit) || !l->replace)
			continue;
		moat_buf_printf(b, ", \"%s\": ", lists[i].key);
		put_strv(b, l, lists[i].plain_path);
	}
	if (p->set & MOAT_PF_HOME)
		moat_buf_printf(b, ", \"home\": \"%s\"", p->home_cow ? "cow" : "ro");
	if (p->set & MOAT_PF_NET) {
		if (p->net == MOAT_NET_PORTS) {
			moat_buf_puts(b, ", \"network\": [");
			for (size_t i = 0; i < p->nports; i++)
				moat_buf_printf(b, "%s%u", i ? ", " : "", p->ports[i]);
			moat_buf_putc(b, ']');
		} else {
			moat_buf_printf(b, ", \"network\": \"%s\"",
					p->net == MOAT_NET_ALLOW ? "allow" : "deny");
		}
	}
	if ((p->set & MOAT_PF_ENV) && (unsigned)p->env < MOAT_ARRAY_SIZE(envs))
		moat_buf_printf(b, ", \"env\": \"%s\"", envs[p->env]);
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(limit_keys); i++) {
		if (!(p->set & limit_keys[i].bit) || !strcmp(limit_keys[i].name, "timeout_s"))
			continue;
		moat_buf_puts(b, any ? ", " : ", \"limits\": {");
		moat_buf_printf(b, "\"%s\": %ld", limit_keys[i].name,
				*(const long *)((const char *)p + limit_keys[i].off));
		any = true;
	}
	if (any)
		moat_buf_putc(b, '}');
	if (p->set & MOAT_PF_TIMEOUT)
		moat_buf_printf(b, ", \"timeout_s\": %ld", p->timeout_s);
	if (p->set & MOAT_PF_FALLBACK)
		moat_buf_printf(b, ", \"fallback\": \"%s\"",
				fallback_names[p->fallback == MOAT_FALLBACK_DENY  ? 0
					       : p->fallback == MOAT_FALLBACK_ASK ? 1
										  : 2]);
	if (p->immutable) {
		bool first = true;

		moat_buf_puts(b, ", \"immutable\": [");
		for (size_t i = 0; dim_names[i]; i++) {
			if (!(p->immutable & dim_bits[i]))
				continue;
			moat_buf_printf(b, "%s\"%s\"", first ? "" : ", ", dim_names[i]);
			first = false;
		}
		moat_buf_putc(b, ']');
	}
	any = false;
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(lists); i++) {
		unsigned bit;
		const struct moat_strv *l =
		    profile_list((struct moat_profile *)p, lists[i].key, &bit);

		if (!(p->set & lists[i].bit) || l->replace)
			continue;
		moat_buf_printf(b, "%s\"%s\": ", any ? ", " : ", \"extra\": {", lists[i].key);
		put_strv(b, l, lists[i].plain_path);
		any = true;
	}
	if (any)
		moat_buf_putc(b, '}');
	moat_buf_putc(b, '}');
}

static void put_sandbox_profiles(struct moat_buf *b, const struct moat_config *c)
{
	put_key(b, 3, "profile");
	if (c->sandbox_profile)
		put_str(b, c->sandbox_profile);
	else
		moat_buf_puts(b, "null");
	moat_buf_puts(b, ",\n");
	put_key(b, 3, "fallback");
	if (c->sandbox_fallback >= 0)
		moat_buf_printf(b, "\"%s\"",
				fallback_names[c->sandbox_fallback == MOAT_FALLBACK_DENY  ? 0
					       : c->sandbox_fallback == MOAT_FALLBACK_ASK ? 1
											  : 2]);
	else
		moat_buf_puts(b, "null");
	moat_buf_puts(b, ",\n");
	put_key(b, 3, "accept_gaps");
	moat_buf_putc(b, '[');
	for (int f = 0; f < MOAT_FEAT__COUNT; f++)
		if (c->sandbox_accept_gaps & (1u << f)) {
			moat_buf_puts(b, (c->sandbox_accept_gaps & ((1u << f) - 1)) ? ", " : "");
			put_str(b, moat_feature_name((enum moat_feature)f));
		}
	moat_buf_puts(b, "],\n");
	put_key(b, 3, "profiles");
	moat_buf_putc(b, '{');
	for (size_t i = 0; i < c->nprofiles; i++) {
		moat_buf_puts(b, i ? ",\n" : "\n");
		put_key(b, 4, c->profiles[i].name);
		put_profile(b, &c->profiles[i]);
	}
	if (c->nprofiles) {
		moat_buf_putc(b, '\n');
		put_indent(b, 3);
	}
	moat_buf_puts(b, "},\n");
	put_key(b, 3, "rules");
	moat_buf_putc(b, '[');
	for (size_t i = 0; i < c->nsandbox_rules; i++) {
		moat_buf_puts(b, i ? ", " : "");
		moat_buf_puts(b, "{\"tool\": ");
		put_str(b, c->sandbox_rules[i].tool);
		moat_buf_puts(b, ", \"profile\": ");
		put_str(b, c->sandbox_rules[i].profile);
		moat_buf_putc(b, '}');
	}
	moat_buf_puts(b, "]\n");
}

char *moat_config_to_json(const struct moat_config *c)
{
	static const char *const modes[] = {"local", "linux", "auto"};
	static const struct {
		unsigned bit;
		const char *name;
	} effects[] = {{MOAT_EFFECT_READ, "read"},
		       {MOAT_EFFECT_WRITE, "write"},
		       {MOAT_EFFECT_EXECUTE, "execute"},
		       {MOAT_EFFECT_NETWORK, "network"}};
	struct moat_buf b = MOAT_BUF_INIT;

	if (!c)
		return NULL;
	moat_buf_puts(&b, "{\n  \"safety\": {\n");
	put_bool(&b, 2, "read_only", c->read_only, false);
	put_bool(&b, 2, "require_approval_for_writes", c->require_approval_for_writes, false);
	put_bool(&b, 2, "require_approval_for_execute", c->require_approval_for_execute, false);
	put_bool(&b, 2, "log_all_commands", c->log_all_commands, false);
	put_bool(&b, 2, "hardline", c->hardline, false);
	put_bool(&b, 2, "default_denied_paths", c->default_denied_paths, false);
	put_bool(&b, 2, "default_denied_commands", c->default_denied_commands, false);

	put_key(&b, 2, "path_rules");
	moat_buf_putc(&b, '[');
	for (size_t i = 0; i < c->npath_rules; i++) {
		const struct moat_path_rule *pr = &c->path_rules[i];

		moat_buf_puts(&b, i ? ",\n" : "\n");
		put_indent(&b, 3);
		moat_buf_puts(&b, "{\"pattern\": ");
		put_str(&b, pr->pattern ? pr->pattern : "");
		moat_buf_printf(&b, ", \"allow_read\": %s, \"allow_write\": %s}",
				pr->allow_read ? "true" : "false",
				pr->allow_write ? "true" : "false");
	}
	if (c->npath_rules) {
		moat_buf_putc(&b, '\n');
		put_indent(&b, 2);
	}
	moat_buf_puts(&b, "],\n");

	put_list(&b, 2, "denied_paths", c->default_denied_paths ? moat_default_denied_paths : NULL,
		 &c->denied_paths, false);
	put_list(&b, 2, "exempt_paths", NULL, &c->exempt_paths, false);
	if (c->allowed_paths_set) {
		put_list(&b, 2, "allowed_paths", NULL, &c->allowed_paths, false);
	} else {
		put_key(&b, 2, "allowed_paths");
		moat_buf_puts(&b, "null,\n");
	}
	put_list(&b, 2, "read_only_paths", NULL, &c->read_only_paths, false);

	put_key(&b, 2, "command_rules");
	moat_buf_putc(&b, '[');
	for (size_t i = 0; i < c->ncommand_rules; i++) {
		const struct moat_cmd_rule *cr = &c->command_rules[i];

		moat_buf_puts(&b, i ? ",\n" : "\n");
		put_indent(&b, 3);
		moat_buf_puts(&b, "{\"pattern\": ");
		put_str(&b, cr->pattern ? cr->pattern : "");
		moat_buf_printf(&b, ", \"decision\": \"%s\", \"match\": \"%s\"}",
				decision_name(cr->decision), cmd_match_names[cr->match]);
	}
	if (c->ncommand_rules) {
		moat_buf_putc(&b, '\n');
		put_indent(&b, 2);
	}
	moat_buf_puts(&b, "],\n");
	put_list(&b, 2, "denied_commands",
		 c->default_denied_commands ? moat_default_denied_commands : NULL,
		 &c->denied_commands, false);

	moat_buf_puts(&b, "    \"network\": {\n");
	put_list(&b, 3, "allow_domains", NULL, &c->allow_domains, false);
	put_list(&b, 3, "block_domains", NULL, &c->block_domains, false);
	put_bool(&b, 3, "allow_local", c->allow_local_network, true);
	moat_buf_puts(&b, "    },\n");

	moat_buf_puts(&b, "    \"sandbox\": {\n");
	put_key(&b, 3, "mode");
	put_str(&b, (unsigned)c->sandbox_mode < MOAT_ARRAY_SIZE(modes) ? modes[c->sandbox_mode]
								       : "local");
	moat_buf_puts(&b, ",\n");
	put_key(&b, 3, "linux");
	moat_buf_puts(&b, "{\"workspace\": ");
	if (c->sandbox_workspace)
		put_plain_path(&b, c->sandbox_workspace);
	else
		moat_buf_puts(&b, "null");
	if (c->max_memory_mb > 0)
		moat_buf_printf(&b, ", \"max_memory_mb\": %ld},\n", c->max_memory_mb);
	else
		moat_buf_puts(&b, ", \"max_memory_mb\": null},\n");
	moat_buf_printf(&b, "      \"scan_max_entries\": %zu,\n",
			c->scan_max_entries ? c->scan_max_entries : (size_t)MOAT_CONFIG_SCAN_ENTRIES);
	put_sandbox_profiles(&b, c);
	moat_buf_puts(&b, "    },\n");

	put_key(&b, 2, "tools");
	moat_buf_putc(&b, '{');
	for (size_t i = 0; i < c->ntools; i++) {
		const struct moat_tool_decl *d = &c->tools[i];
		bool first = true;

		moat_buf_puts(&b, i ? ",\n" : "\n");
		put_key(&b, 3, d->name);
		moat_buf_puts(&b, "{\"effects\": [");
		for (size_t k = 0; k < MOAT_ARRAY_SIZE(effects); k++) {
			if (!(d->effects & effects[k].bit))
				continue;
			moat_buf_puts(&b, first ? "" : ", ");
			put_str(&b, effects[k].name);
			first = false;
		}
		moat_buf_puts(&b, "], \"path_args\": [");
		for (size_t k = 0; k < d->path_args.n; k++) {
			moat_buf_puts(&b, k ? ", " : "");
			put_str(&b, d->path_args.v[k]);
		}
		moat_buf_puts(&b, "], \"command_arg\": ");
		put_opt_str(&b, d->command_arg);
		moat_buf_puts(&b, ", \"url_arg\": ");
		put_opt_str(&b, d->url_arg);
		moat_buf_putc(&b, '}');
	}
	if (c->ntools) {
		moat_buf_putc(&b, '\n');
		put_indent(&b, 2);
	}
	moat_buf_puts(&b, "},\n");

	put_key(&b, 2, "approvals");
	moat_buf_putc(&b, '[');
	for (size_t i = 0; i < c->napprovals; i++) {
		const struct moat_approval_rule *a = &c->approvals[i];

		moat_buf_puts(&b, i ? ",\n" : "\n");
		put_indent(&b, 3);
		moat_buf_puts(&b, "{\"tool\": ");
		put_str(&b, a->tool ? a->tool : "");
		moat_buf_puts(&b, ", \"arg\": ");
		put_str(&b, a->arg ? a->arg : "");
		moat_buf_puts(&b, ", \"match\": ");
		put_str(&b, a->match ? a->match : "");
		moat_buf_putc(&b, '}');
	}
	if (c->napprovals) {
		moat_buf_putc(&b, '\n');
		put_indent(&b, 2);
	}
	moat_buf_puts(&b, "],\n");
	put_key(&b, 2, "approval_timeout");
	moat_buf_printf(&b, "%ld,\n", c->approval_timeout_s);
	put_key(&b, 2, "audit_log");
	if (c->audit_log)
		put_plain_path(&b, c->audit_log);
	else
		moat_buf_puts(&b, "null");
	moat_buf_puts(&b, ",\n");
	put_bool(&b, 2, "audit_fsync", c->audit_fsync, false);
	put_bool(&b, 2, "audit_required", c->audit_required, false);
	put_bool(&b, 2, "audit_syslog", c->audit_syslog, true);
	moat_buf_puts(&b, "  }\n}\n");
	return moat_buf_steal(&b);
}
