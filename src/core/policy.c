/* The policy engine: one tool call in, one decision out (ALLOW, DENY, ASK),
 * with a stable rule id and a human reason.
 *
 * Order (seed 000), hard steps first: read-only mode; path rules; denied
 * paths; allowed paths (and read-only paths); URL checks; command rules and
 * the unrecoverable-operation floor; denied commands; then the soft steps:
 * forced ASK for the shell when allowed_paths is set but the sandbox mode
 * cannot enforce it; approval requirements; otherwise ALLOW.
 *
 * A project layer (.moat/config.json) is a second, independent set of rules
 * evaluated the same way; the stricter verdict wins, so a project file can
 * only tighten. A compiled policy is immutable: checks are thread-safe.
 *
 * Pure: no output, no writes. It reads the filesystem only to resolve
 * symlinks (core/path.c). On any error the answer is DENY. */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/json.h"
#include "base/str.h"
#include "core/cmd.h"
#include "core/config.h"
#include "core/glob.h"
#include "core/path.h"
#include "core/policy_check.h"
#include "core/search.h"
#include "core/strset.h"
#include "core/url.h"
#include "core/wordglob.h"

#define ACCESS_READ 1u
#define ACCESS_WRITE 2u

struct cmd_rule {
	char *pattern;
	enum moat_verdict decision;
	enum moat_cmd_match match;
	pcre2_code *re; /* the regex rules' */
};

/* The strset classes of the command rules' substrings (class 0 and 1, as
 * masks here): a deny or ask rule matches where its text occurs, an allow
 * rule only as the start of one program invocation
 * (moat_strset_first_prefix). */
#define SUB_STOP MOAT_STRSET_CLASS0  /* deny, ask: class 0 */
#define SUB_ALLOW MOAT_STRSET_CLASS1 /* allow: class 1 */

/* A quick "can this path match any denied path?" for the shell's path
 * operands: each pattern needs its longest literal run (within a path
 * component) somewhere in a matching path; runs are indexed by their first
 * two bytes. Built with the policy, read-only afterwards. */
#define PF_SLOTS 256u /* hash slots of the first two bytes (a power of two) */

struct pathfilter {
	uint64_t bits[1024]; /* a bit per first two bytes of a run */
	struct pf_run {
		uint16_t key;
		uint16_t len;
		const char *s;
	} *runs; /* sorted by key */
	size_t nruns;
	struct {
		uint16_t key, first, count; /* runs[first .. first + count) have this key */
	} slot[PF_SLOTS];
	char *store;
	bool all; /* a pattern has no run of two bytes: everything may match */
};

/* path's last component is an environment file's template that the
 * denied pattern would otherwise hold (core/config.h) */
static bool template_name(const char *pattern, const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return pattern && moat_denied_template(pattern, b, strlen(b));
}

static unsigned pf_hash(unsigned key)
{
	return (key * 40503u >> 8) & (PF_SLOTS - 1);
}

static bool pathfilter_hit(const struct pathfilter *f, const char *s, size_t n);

static int pf_cmp(const void *a, const void *b)
{
	const struct pf_run *x = a, *y = b;

	return (int)x->key - (int)y->key;
}

struct layer {
	const char *prefix; /* "" or "project:" */
	bool read_only, req_writes, req_execute, hardline, forced_ask;
	bool allow_list; /* the user layer has allowed_paths (forced ASK without a sandbox) */

	struct moat_globset *path_rules;
	bool *path_rule_read, *path_rule_write;
	struct moat_globset *denied_paths;
	struct moat_globset *allowed_paths; /* NULL: no allow-list */
	struct moat_globset *read_only_paths;
	/* exempt_paths: a path matching one is not a denied path of this
	 * layer; NULL when there are none (always in the project layer) */
	struct moat_globset *exempt_paths;
	/* The same sets lower-cased, for drive and UNC paths (Windows names
	 * are case-insensitive); NULL when lower-casing changes no pattern. */
	struct moat_globset *path_rules_ci, *denied_paths_ci, *allowed_paths_ci;
	struct moat_globset *read_only_paths_ci, *exempt_paths_ci;

	struct cmd_rule *cmd_rules;
	size_t ncmd_rules;
	struct moat_globset *cmd_globs; /* glob rules, text mode */
	size_t *cmd_glob_rule;		/* glob index -> rule index */
	size_t *cmd_regex_rule;		/* regex rules in order */
	size_t ncmd_regex;
	/* substring rules by rule index: their text with blanks as the views
	 * join words (one space), for the views; as written, for the raw
	 * command (NULL when that is the same set) */
	struct moat_strset *cmd_subs, *cmd_subs_raw;
	/* the configured denied_commands as Aar reads them, substrings (but
	 * repeats of the built-in patterns while those are on), by entry
	 * index; NULL when none */
	struct moat_strset *denied_subs, *denied_subs_raw;
	char **denied_sub_src;
	size_t ndenied_sub_src;
	struct moat_cmdpat **denied_cmds;
	size_t ndenied_cmds;
	/* the patterns grouped by what they need (moat_cmdpat_needs): indexes
	 * denied_by_need[denied_need_at[n] .. denied_need_at[n + 1]), ascending */
	size_t *denied_by_need;
	size_t denied_need_at[MOAT_CMDPAT_NEEDS_ANY + 2];
	unsigned char denied_first[32]; /* a bit per first program byte some pattern needs */
	uint64_t *denied_pair;	 /* per pattern: moat_cmdpat_pair, 0 for none */
	struct pathfilter *shell_paths; /* prefilter of denied_paths, NULL when there are none */
	bool shell_cwd_hit; /* the working directory itself may hold a denied path */

	char **allow_domains, **block_domains;
	size_t nallow_domains, nblock_domains;
	bool allow_local;
};

struct tool_decl {
	char *name;
	unsigned effects;
	char **path_args;
	size_t npath_args;
	char *command_arg;
	char *url_arg;
};

struct moat_policy {
	struct layer layers[2];
	size_t nlayers;
	struct tool_decl *tools;
	size_t ntools;
	bool log_all_commands;
	char cwd[MOAT_PATH_MAX];
	size_t cwd_len;
	char home[MOAT_PATH_MAX];
	size_t home_len;
};

#define BUILTIN(n, e, c, u)                                                                \
	{.name = n, .len = sizeof(n) - 1, .effects = e, .command_arg = c, .url_arg = u}
static const struct {
	const char *name;
	size_t len;
	unsigned effects;
	const char *command_arg;
	const char *url_arg;
} builtin_tools[] = {
	BUILTIN("read_file", MOAT_EFFECT_READ, NULL, NULL),
	BUILTIN("list_directory", MOAT_EFFECT_READ, NULL, NULL),
	BUILTIN("write_file", MOAT_EFFECT_WRITE, NULL, NULL),
	BUILTIN("edit_file", MOAT_EFFECT_WRITE, NULL, NULL),
	BUILTIN("bash", MOAT_EFFECT_EXECUTE, "command", NULL),
	BUILTIN("run_shell_command", MOAT_EFFECT_EXECUTE, "command", NULL),
	BUILTIN("web_fetch", MOAT_EFFECT_NETWORK, NULL, "url"),
};
#undef BUILTIN

/* The builtin_tools entry named tool (of len bytes), or -1. */
static long builtin_index(const char *tool, size_t len)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(builtin_tools); i++)
		if (builtin_tools[i].len == len && !memcmp(builtin_tools[i].name, tool, len))
			return (long)i;
	return -1;
}

const char *moat_verdict_name(enum moat_verdict v)
{
	switch (v) {
	case MOAT_ALLOW:
		return "allow";
	case MOAT_ASK:
		return "ask";
	case MOAT_DENY:
	default:
		return "deny";
	}
}

/* ---- compile ---------------------------------------------------------- */

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void layer_release(struct layer *l)
{
	moat_globset_free(l->path_rules);
	free(l->path_rule_read);
	free(l->path_rule_write);
	moat_globset_free(l->denied_paths);
	moat_globset_free(l->allowed_paths);
	moat_globset_free(l->read_only_paths);
	moat_globset_free(l->path_rules_ci);
	moat_globset_free(l->denied_paths_ci);
	moat_globset_free(l->allowed_paths_ci);
	moat_globset_free(l->read_only_paths_ci);
	moat_globset_free(l->exempt_paths);
	moat_globset_free(l->exempt_paths_ci);
	for (size_t i = 0; i < l->ncmd_rules; i++) {
		free(l->cmd_rules[i].pattern);
		if (l->cmd_rules[i].re)
			pcre2_code_free(l->cmd_rules[i].re);
	}
	free(l->cmd_rules);
	moat_strset_free(l->cmd_subs);
	moat_strset_free(l->cmd_subs_raw);
	moat_strset_free(l->denied_subs);
	moat_strset_free(l->denied_subs_raw);
	free_strv(l->denied_sub_src, l->ndenied_sub_src);
	moat_globset_free(l->cmd_globs);
	free(l->cmd_glob_rule);
	free(l->cmd_regex_rule);
	for (size_t i = 0; i < l->ndenied_cmds; i++)
		moat_cmdpat_free(l->denied_cmds[i]);
	free(l->denied_cmds);
	free(l->denied_by_need);
	free(l->denied_pair);
	free_strv(l->allow_domains, l->nallow_domains);
	free_strv(l->block_domains, l->nblock_domains);
	if (l->shell_paths) {
		free(l->shell_paths->runs);
		free(l->shell_paths->store);
		free(l->shell_paths);
	}
	memset(l, 0, sizeof(*l));
}

/* The longest literal run of a path glob within one component, copied to
 * buf; returns its length (0 when there is none of two bytes). Escaped
 * bytes count as literal; classes and alternatives end a run. */
static size_t glob_run(const char *g, char *buf, size_t cap)
{
	size_t best = 0, cur = 0;
	char run[MOAT_PATH_MAX];

	for (size_t i = 0; g[i]; i++) {
		char ch = g[i];

		if (ch == '\\' && g[i + 1]) {
			ch = g[++i];
			if (ch == '/') { /* SECURITY: "a\/b" still spans components */
				cur = 0;
				continue;
			}
		} else if (ch == '*' || ch == '?' || ch == '/' || ch == '[' || ch == '{' ||
			   ch == '}' || ch == ',') {
			if (ch == '[')
				while (g[i + 1] && g[i + 1] != ']')
					i++;
			if (ch == '{') {
				/* skip the alternatives as a whole */
				int depth = 1;

				while (g[i + 1] && depth) {
					i++;
					depth += g[i] == '{' ? 1 : g[i] == '}' ? -1 : 0;
				}
			}
			cur = 0;
			continue;
		}
		if (cur + 1 >= sizeof(run))
			cur = 0;
		run[cur++] = ch;
		if (cur > best && cur < cap) {
			best = cur;
			memcpy(buf, run, cur);
		}
	}
	return best >= 2 ? best : 0;
}

static int build_pathfilter(struct layer *l)
{
	const struct moat_globset *set = l->denied_paths;
	size_t n = set ? moat_globset_count(set) : 0, used = 0, total = 0;
	struct pathfilter *f;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		total += strlen(moat_globset_pattern(set, i)) + 1;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->runs = calloc(n, sizeof(*f->runs));
	f->store = malloc(total);
	if (!f->runs || !f->store) {
		free(f->runs);
		free(f->store);
		free(f);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		char *dst = f->store + used;
		size_t len = glob_run(moat_globset_pattern(set, i), dst, total - used);
		unsigned key;

		if (!len) {
			f->all = true;
			continue;
		}
		key = (unsigned)(unsigned char)dst[0] << 8 | (unsigned char)dst[1];
		f->bits[key >> 6] |= (uint64_t)1 << (key & 63);
		f->runs[f->nruns].key = (uint16_t)key;
		f->runs[f->nruns].len = (uint16_t)len;
		f->runs[f->nruns].s = dst;
		f->nruns++;
		used += len;
	}
	/* one slot per distinct first two bytes (at most PF_SLOTS - 1 of them) */
	qsort(f->runs, f->nruns, sizeof(*f->runs), pf_cmp);
	for (size_t k = 0, distinct = 0; k < f->nruns;) {
		size_t e = k;
		unsigned h = pf_hash(f->runs[k].key);

		while (e < f->nruns && f->runs[e].key == f->runs[k].key)
			e++;
		if (++distinct >= PF_SLOTS || e - k > UINT16_MAX || k > UINT16_MAX) {
			f->all = true; /* too many to index: check everything */
			break;
		}
		while (f->slot[h].count)
			h = (h + 1) & (PF_SLOTS - 1);
		f->slot[h].key = f->runs[k].key;
		f->slot[h].first = (uint16_t)k;
		f->slot[h].count = (uint16_t)(e - k);
		k = e;
	}
	l->shell_paths = f;
	return 0;
}

struct moat_policy *moat_policy_free(struct moat_policy *p)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->nlayers; i++)
		layer_release(&p->layers[i]);
	for (size_t i = 0; i < p->ntools; i++) {
		free(p->tools[i].name);
		free_strv(p->tools[i].path_args, p->tools[i].npath_args);
		free(p->tools[i].command_arg);
		free(p->tools[i].url_arg);
	}
	free(p->tools);
	free(p);
	return NULL;
}

static void loc_error(struct moat_error *err, const struct moat_loc *loc)
{
	if (err && loc && loc->file)
		moat_error_set_where(err, loc->file, loc->line, loc->column);
}

/* Turn a configured path pattern into the absolute glob the policy matches:
 * "<cwd>" expands to the working directory; a pattern without any '/' is a
 * name anywhere ("*.pem" -> "**\/ *.pem" without the space); a relative
 * pattern is relative to the working directory; Windows drive letters are
 * lower-cased as the path normalizer does. */
/* The working directory as literal glob text: its glob characters escaped. */
static void put_glob_literal(struct moat_buf *out, const char *s)
{
	for (; *s; s++) {
		if (strchr("*?[]{}\\", *s))
			moat_buf_putc(out, '\\');
		moat_buf_putc(out, *s);
	}
}

static void put_cwd_literal(const struct moat_policy *p, struct moat_buf *out)
{
	if (strcmp(p->cwd, "/"))
		put_glob_literal(out, p->cwd);
}

static int absolute_pattern(const struct moat_policy *p, const char *pat, struct moat_buf *out)
{
	moat_buf_reset(out);
	if (moat_str_has_prefix(pat, "<cwd>")) {
		put_cwd_literal(p, out);
		moat_buf_puts(out, pat + 5);
	} else if (pat[0] == '/' || moat_str_has_prefix(pat, "**")) {
		moat_buf_puts(out, pat);
	} else if (((pat[0] | 0x20) >= 'a' && (pat[0] | 0x20) <= 'z') && pat[1] == ':') {
		moat_buf_putc(out, (char)(pat[0] | 0x20));
		moat_buf_puts(out, pat + 1);
	} else if (!strchr(pat, '/')) {
		moat_buf_puts(out, "**/");
		moat_buf_puts(out, pat);
	} else {
		put_cwd_literal(p, out);
		moat_buf_putc(out, '/');
		moat_buf_puts(out, pat[0] == '.' && pat[1] == '/' ? pat + 2 : pat);
	}
	return out->oom ? -ENOMEM : 0;
}

static int add_path_glob(const struct moat_policy *p, struct moat_globset *set, const char *pat,
			 const struct moat_loc *loc, struct moat_error *err)
{
	struct moat_buf b = MOAT_BUF_INIT;
	long r;

	if (absolute_pattern(p, pat, &b) < 0)
		return -ENOMEM;
	r = moat_globset_add(set, b.data, err);
	moat_buf_release(&b);
	if (r < 0) {
		loc_error(err, loc);
		return (int)r;
	}
	return 0;
}

/* The same glob with its literal head resolved, when that head goes
 * through a symbolic link: "/home/me/link/..." also as "/data/real/...",
 * "~/.netrc" (a link into a dotfiles repository) also as its target. The
 * policy matches every path a call visits (the spelling, each link, the
 * resolved path), so a set holding only one spelling would deny a workspace
 * given through a link and miss a secret read at its real place. Returns 1
 * when it wrote a variant into out, 0 when there is none. */
static int resolved_variant(const char *g, struct moat_buf *out)
{
	size_t i, head;
	char *real;

	if (g[0] != '/')
		return 0;
	for (i = 0; g[i] && !strchr("*?[]{}\\", g[i]); i++)
		;
	/* the whole glob when it is literal, else up to the last '/' */
	head = i;
	if (g[i])
		while (head > 0 && g[head] != '/')
			head--;
	if (head <= 1 || head >= MOAT_PATH_MAX)
		return 0;
	{
		char lit[MOAT_PATH_MAX];

		memcpy(lit, g, head);
		lit[head] = '\0';
		real = realpath(lit, NULL);
		if (!real)
			return 0;
		if (!strcmp(real, lit)) {
			free(real);
			return 0;
		}
	}
	moat_buf_reset(out);
	/* "/" resolved is "" + rest */
	if (strcmp(real, "/") || g[head] != '/')
		put_glob_literal(out, real);
	moat_buf_puts(out, g + head);
	free(real);
	return out->oom ? -ENOMEM : 1;
}

static int add_path_glob_resolved(const struct moat_policy *p, struct moat_globset *set,
				  const char *pat, const struct moat_loc *loc,
				  struct moat_error *err)
{
	struct moat_buf b = MOAT_BUF_INIT, v = MOAT_BUF_INIT;
	long r;
	int k;

	if (absolute_pattern(p, pat, &b) < 0)
		return -ENOMEM;
	r = moat_globset_add(set, b.data, err);
	k = r < 0 ? 0 : resolved_variant(b.data, &v);
	if (k < 0)
		r = -ENOMEM;
	else if (k > 0)
		r = moat_globset_add(set, v.data, err);
	/* a name anywhere ("**" then a literal: ".config/gcloud/..", ".env")
	 * that is a link in the home directory or the working directory: its
	 * target too (a credentials directory kept in a dotfiles repository,
	 * a .env pointing at ../secrets/prod.env) */
	for (int base = 0; r >= 0 && base < 2 && !strncmp(b.data, "**/", 3); base++) {
		const char *dir = base ? p->cwd : p->home;
		struct moat_buf c = MOAT_BUF_INIT;
		struct stat st;

		if (!dir[0] || (base && !strcmp(p->cwd, p->home)))
			continue;
		moat_buf_puts(&c, dir);
		moat_buf_putc(&c, '/');
		moat_buf_puts(&c, b.data + 3);
		/* one lstat answers most: the first name does not exist */
		{
			size_t cut = strlen(dir) + 1;

			while (c.data && c.data[cut] && !strchr("/*?[]{}\\", c.data[cut]))
				cut++;
			if (c.data && (c.data[cut] == '/' || !c.data[cut])) {
				char was = c.data[cut];

				c.data[cut] = '\0';
				k = lstat(c.data, &st);
				c.data[cut] = was;
			} else {
				k = -1; /* the name itself is a glob ("*.pem") */
			}
		}
		if (k == 0)
			k = c.oom ? -1 : resolved_variant(c.data, &v);
		else
			k = 0;
		if (k < 0)
			r = -ENOMEM;
		else if (k > 0)
			r = moat_globset_add(set, v.data, err);
		moat_buf_release(&c);
	}
	moat_buf_release(&b);
	moat_buf_release(&v);
	if (r < 0) {
		loc_error(err, loc);
		return (int)r;
	}
	return 0;
}

static int build_pathset(const struct moat_policy *p, struct moat_globset **ret,
			 const struct moat_strlist *user, const char *const *defaults,
			 struct moat_error *err)
{
	struct moat_globset *set;
	int r;

	r = moat_globset_new(MOAT_GLOB_PATH, &set);
	if (r < 0)
		return r;
	for (size_t i = 0; defaults && defaults[i]; i++) {
		r = add_path_glob_resolved(p, set, defaults[i], NULL, err);
		if (r < 0)
			goto fail;
	}
	for (size_t i = 0; user && i < user->n; i++) {
		r = add_path_glob_resolved(p, set, user->v[i], user->loc ? &user->loc[i] : NULL,
					   err);
		if (r < 0)
			goto fail;
	}
	r = moat_globset_build(set);
	if (r < 0)
		goto fail;
	*ret = set;
	return 0;
fail:
	moat_globset_free(set);
	return r;
}

static bool has_upper(const char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			return true;
	return false;
}

/* The lower-cased twin of a path set, index for index, or NULL when no
 * pattern has an upper-case letter. A pattern that does not compile
 * lower-cased (a class range such as [Z-a]) is kept as it is. */
static int ci_twin(const struct moat_globset *set, struct moat_globset **ret)
{
	size_t n = set ? moat_globset_count(set) : 0;
	struct moat_globset *t = NULL;
	struct moat_buf b = MOAT_BUF_INIT;
	bool upper = false;
	int r;

	*ret = NULL;
	for (size_t i = 0; i < n && !upper; i++)
		upper = has_upper(moat_globset_pattern(set, i));
	if (!upper)
		return 0;
	r = moat_globset_new(MOAT_GLOB_PATH, &t);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		const char *pat = moat_globset_pattern(set, i);
		struct moat_error e;
		long gi;

		moat_buf_reset(&b);
		for (const char *q = pat; *q; q++)
			moat_buf_putc(&b, (*q >= 'A' && *q <= 'Z') ? (char)(*q + 32) : *q);
		if (b.oom) {
			r = -ENOMEM;
			goto fail;
		}
		gi = moat_globset_add(t, b.data, &e);
		if (gi < 0)
			gi = moat_globset_add(t, pat, &e);
		if (gi < 0) {
			r = (int)gi;
			goto fail;
		}
	}
	r = moat_globset_build(t);
	if (r < 0)
		goto fail;
	moat_buf_release(&b);
	*ret = t;
	return 0;
fail:
	moat_buf_release(&b);
	moat_globset_free(t);
	return r;
}

static int dup_strlist(const struct moat_strlist *l, char ***ret, size_t *ret_n)
{
	char **v;

	*ret = NULL;
	*ret_n = 0;
	if (!l->n)
		return 0;
	v = calloc(l->n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		v[i] = moat_strdup(l->v[i]);
		if (!v[i]) {
			free_strv(v, i);
			return -ENOMEM;
		}
	}
	*ret = v;
	*ret_n = l->n;
	return 0;
}

/* s with every run of blanks made one space (as the views join words):
 * into out. */
static int squeeze_blanks(const char *s, struct moat_buf *out)
{
	moat_buf_reset(out);
	for (size_t i = 0; s[i]; i++) {
		if (strchr(" \t\n\r\v\f", s[i])) {
			if (!out->len || out->data[out->len - 1] != ' ')
				moat_buf_putc(out, ' ');
			continue;
		}
		moat_buf_putc(out, s[i]);
	}
	moat_buf_putc(out, '\0');
	return out->oom ? -ENOMEM : 0;
}

/* Add one substring to the views' set (blanks squeezed; an allow's trimmed:
 * it must start an invocation) and to the raw set (as written). *differs
 * is set when the two spellings differ. */
static int add_substring(struct moat_strset *views, struct moat_strset *raw, const char *pat,
			 long id, unsigned cls, bool trim, bool *differs)
{
	struct moat_buf b = MOAT_BUF_INIT;
	const char *t;
	size_t n;
	int r;

	r = squeeze_blanks(pat, &b);
	if (r < 0)
		goto out;
	t = b.data;
	n = b.len - 1;
	if (trim) {
		while (n && t[0] == ' ') {
			t++;
			n--;
		}
		while (n && t[n - 1] == ' ')
			n--;
	}
	if (n != strlen(pat) || memcmp(t, pat, n) != 0)
		*differs = true;
	r = moat_strset_add(views, t, n, id, cls);
	if (r >= 0)
		r = moat_strset_add(raw, pat, strlen(pat), id, cls);
out:
	moat_buf_release(&b);
	return r;
}

/* The views' set and the raw one, built; the raw one dropped when it is the
 * same. */
static int build_substrings(struct moat_strset **views, struct moat_strset **raw, bool differs)
{
	int r = moat_strset_build(*views);

	if (r < 0)
		return r;
	if (!differs) {
		*raw = moat_strset_free(*raw);
		return 0;
	}
	return moat_strset_build(*raw);
}

static int compile_cmd_rules(struct layer *l, const struct moat_config *c, struct moat_error *err)
{
	size_t nglob = 0, nsub = 0;
	bool differs = false;
	int r;

	l->cmd_rules = calloc(c->ncommand_rules + 1, sizeof(*l->cmd_rules));
	l->cmd_glob_rule = calloc(c->ncommand_rules + 1, sizeof(size_t));
	l->cmd_regex_rule = calloc(c->ncommand_rules + 1, sizeof(size_t));
	if (!l->cmd_rules || !l->cmd_glob_rule || !l->cmd_regex_rule)
		return -ENOMEM;
	r = moat_globset_new(MOAT_GLOB_TEXT, &l->cmd_globs);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c->ncommand_rules; i++) {
		const struct moat_cmd_rule *cr = &c->command_rules[i];
		struct cmd_rule *rule = &l->cmd_rules[l->ncmd_rules];

		rule->pattern = moat_strdup(cr->pattern);
		rule->decision = cr->decision;
		rule->match = cr->match;
		if (!rule->pattern)
			return -ENOMEM;
		l->ncmd_rules++;
		if (cr->match == MOAT_CMD_MATCH_REGEX) {
			int ecode;
			PCRE2_SIZE eoff;

			rule->re = pcre2_compile((PCRE2_SPTR)cr->pattern, PCRE2_ZERO_TERMINATED,
						 PCRE2_UTF | PCRE2_NO_UTF_CHECK * 0, &ecode, &eoff,
						 NULL);
			if (!rule->re) {
				PCRE2_UCHAR msg[256];

				pcre2_get_error_message(ecode, msg, sizeof(msg));
				moat_error_set(err, "invalid regex at offset %zu: %s", (size_t)eoff,
					       (const char *)msg);
				loc_error(err, &cr->loc);
				return -EINVAL;
			}
			pcre2_jit_compile(rule->re, PCRE2_JIT_COMPLETE);
			l->cmd_regex_rule[l->ncmd_regex++] = i;
		} else if (cr->match == MOAT_CMD_MATCH_GLOB) {
			long gi = moat_globset_add(l->cmd_globs, cr->pattern, err);

			if (gi < 0) {
				loc_error(err, &cr->loc);
				return (int)gi;
			}
			l->cmd_glob_rule[nglob++] = i;
		} else {
			bool allow = cr->decision == MOAT_ALLOW;

			if (!l->cmd_subs && ((r = moat_strset_new(&l->cmd_subs)) < 0 ||
					     (r = moat_strset_new(&l->cmd_subs_raw)) < 0))
				return r;
			r = add_substring(l->cmd_subs, l->cmd_subs_raw, cr->pattern, (long)i,
					  allow ? 1 : 0, allow, &differs);
			if (r < 0)
				return r;
			nsub++;
		}
	}
	if (nsub && (r = build_substrings(&l->cmd_subs, &l->cmd_subs_raw, differs)) < 0)
		return r;
	return moat_globset_build(l->cmd_globs);
}

static int compile_denied_cmds(struct layer *l, const struct moat_config *c, bool defaults,
			       struct moat_error *err)
{
	size_t ndef = 0, cap;
	bool differs = false;

	while (defaults && moat_default_denied_commands[ndef])
		ndef++;
	cap = ndef + c->denied_commands.n;
	l->denied_cmds = calloc(cap + 1, sizeof(*l->denied_cmds));
	l->denied_by_need = calloc(cap + 1, sizeof(*l->denied_by_need));
	l->denied_pair = calloc(cap + 1, sizeof(*l->denied_pair));
	if (!l->denied_cmds || !l->denied_by_need || !l->denied_pair)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++) {
		const char *src =
			i < ndef ? moat_default_denied_commands[i] : c->denied_commands.v[i - ndef];
		int r = moat_cmdpat_compile(src, &l->denied_cmds[l->ndenied_cmds], err);
		bool blank = !src[strspn(src, " \t\n\r\v\f")];

		/* a user's entry that is no shell command ("it's", "a; b") is
		 * still Aar's substring; a blank one would match everything */
		if (r == -EINVAL && i >= ndef && !blank) {
			if (err)
				moat_error_clear(err);
		} else if (r < 0) {
			if (i >= ndef && c->denied_commands.loc)
				loc_error(err, &c->denied_commands.loc[i - ndef]);
			return r;
		} else {
			l->denied_pair[l->ndenied_cmds] =
			    moat_cmdpat_pair(l->denied_cmds[l->ndenied_cmds]);
			l->ndenied_cmds++;
		}
		/* (a repeat of a built-in pattern, with the built-ins on, is that
		 * pattern: the effective configuration writes them out) */
		if (i < ndef || (defaults && moat_config_is_default_denied_command(src)))
			continue;
		if (!l->denied_subs) {
			l->denied_sub_src = calloc(c->denied_commands.n, sizeof(char *));
			if (!l->denied_sub_src || (r = moat_strset_new(&l->denied_subs)) < 0 ||
			    (r = moat_strset_new(&l->denied_subs_raw)) < 0)
				return -ENOMEM;
		}
		l->denied_sub_src[l->ndenied_sub_src] = moat_strdup(src);
		if (!l->denied_sub_src[l->ndenied_sub_src])
			return -ENOMEM;
		r = add_substring(l->denied_subs, l->denied_subs_raw, src, (long)l->ndenied_sub_src,
				  0, false, &differs);
		l->ndenied_sub_src++;
		if (r < 0)
			return r;
	}
	if (l->denied_subs) {
		int r = build_substrings(&l->denied_subs, &l->denied_subs_raw, differs);

		if (r < 0)
			return r;
	}
	/* counting sort by need, stable: each group stays in pattern order */
	for (size_t i = 0; i < l->ndenied_cmds; i++)
		l->denied_need_at[moat_cmdpat_needs(l->denied_cmds[i]) + 1]++;
	for (size_t n = 1; n < MOAT_ARRAY_SIZE(l->denied_need_at); n++)
		l->denied_need_at[n] += l->denied_need_at[n - 1];
	{
		size_t fill[MOAT_CMDPAT_NEEDS_ANY + 1];

		memcpy(fill, l->denied_need_at, sizeof(fill));
		for (size_t i = 0; i < l->ndenied_cmds; i++)
			l->denied_by_need[fill[moat_cmdpat_needs(l->denied_cmds[i])]++] = i;
	}
	for (int n = 0; n < 256; n++) /* (the needs below 256 are first bytes) */
		if (l->denied_need_at[n] != l->denied_need_at[n + 1])
			l->denied_first[n >> 3] |= (unsigned char)(1u << (n & 7));
	return 0;
}

/* Add the patterns of one need group to the sorted candidates (but those
 * whose program no view's first two bytes allow). */
static size_t denied_group(const struct layer *l, const struct moat_cmd_analysis *a, int need,
			   size_t n, size_t *out, size_t cap)
{
	for (size_t k = l->denied_need_at[need], hi = l->denied_need_at[need + 1]; k < hi; k++) {
		/* insertion keeps the list in pattern order */
		size_t idx = l->denied_by_need[k], j = n < cap ? n : cap;

		if (l->denied_pair[idx] && !(a->prog_pairs & l->denied_pair[idx]))
			continue;
		if (n < cap) {
			while (j > 0 && out[j - 1] > idx) {
				out[j] = out[j - 1];
				j--;
			}
			out[j] = idx;
		}
		n++;
	}
	return n;
}

/* The denied-command patterns that can match this analysis at all, in
 * pattern order: those needing a program one of its views runs (by first
 * byte), a pipe, a redirection or a fork bomb it has, and the rest. Writes
 * at most cap indexes; returns how many there are. */
static size_t denied_candidates(const struct layer *l, const struct moat_cmd_analysis *a,
				size_t *out, size_t cap)
{
	size_t n = 0;

	/* the first bytes of the programs run that some pattern needs, eight
	 * bytes of the two bitmaps at a time (usually a bit or two in all) */
	for (size_t w = 0; w < sizeof(a->prog_first); w += 8) {
		uint64_t x, y;

		memcpy(&x, a->prog_first + w, 8);
		memcpy(&y, l->denied_first + w, 8);
		x &= y;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* (bit k of the word is bit k % 8 of byte w + k / 8) */
		while (x) {
			int k = __builtin_ctzll(x);

			x &= x - 1;
			n = denied_group(l, a, (int)(w * 8) + k, n, out, cap);
		}
#else
		if (!x)
			continue;
		for (size_t b = w; b < w + 8; b++) {
			unsigned m = a->prog_first[b] & l->denied_first[b];

			while (m) {
				int bit = __builtin_ctz(m);

				m &= m - 1;
				n = denied_group(l, a, (int)(b * 8) + bit, n, out, cap);
			}
		}
#endif
	}
	if (a->fed)
		n = denied_group(l, a, MOAT_CMDPAT_NEEDS_PIPE, n, out, cap);
	if (a->nredirs)
		n = denied_group(l, a, MOAT_CMDPAT_NEEDS_REDIR, n, out, cap);
	if (a->fork_bomb >= 0)
		n = denied_group(l, a, MOAT_CMDPAT_NEEDS_FORK, n, out, cap);
	return denied_group(l, a, MOAT_CMDPAT_NEEDS_ANY, n, out, cap);
}

static int compile_layer(struct moat_policy *p, struct layer *l, const struct moat_config *c,
			 bool project, struct moat_error *err)
{
	struct moat_strlist rules = {0};
	int r;

	l->prefix = project ? "project:" : "";
	l->read_only = c->read_only;
	l->req_writes = c->require_approval_for_writes;
	l->req_execute = c->require_approval_for_execute;
	/* SECURITY: the floor stays on in the project layer whatever it says. */
	l->hardline = project ? true : c->hardline;
	/* Forced ASK: an allow-list is set but the sandbox cannot enforce it. */
	l->forced_ask = !project && c->allowed_paths_set && c->sandbox_mode == MOAT_SANDBOX_LOCAL;
	l->allow_list = !project && c->allowed_paths_set;
	l->allow_local = project ? false : c->allow_local_network;

	/* path rules */
	r = moat_globset_new(MOAT_GLOB_PATH, &l->path_rules);
	if (r < 0)
		return r;
	l->path_rule_read = calloc(c->npath_rules + 1, sizeof(bool));
	l->path_rule_write = calloc(c->npath_rules + 1, sizeof(bool));
	if (!l->path_rule_read || !l->path_rule_write)
		return -ENOMEM;
	for (size_t i = 0; i < c->npath_rules; i++) {
		r = add_path_glob(p, l->path_rules, c->path_rules[i].pattern, &c->path_rules[i].loc,
				  err);
		if (r < 0)
			return r;
		l->path_rule_read[i] = c->path_rules[i].allow_read;
		l->path_rule_write[i] = c->path_rules[i].allow_write;
	}
	r = moat_globset_build(l->path_rules);
	if (r < 0)
		return r;
	(void)rules;

	r = build_pathset(p, &l->denied_paths, &c->denied_paths,
			  (!project && c->default_denied_paths) ? moat_default_denied_paths : NULL,
			  err);
	if (r < 0)
		return r;
	if (c->allowed_paths_set) {
		r = build_pathset(p, &l->allowed_paths, &c->allowed_paths, NULL, err);
		if (r < 0)
			return r;
	}
	r = build_pathset(p, &l->read_only_paths, &c->read_only_paths, NULL, err);
	if (r < 0)
		return r;
	/* SECURITY: only the user's configuration lifts denied paths (a
	 * project file holding exempt_paths is refused when it loads) */
	if (!project && c->exempt_paths.n) {
		r = build_pathset(p, &l->exempt_paths, &c->exempt_paths, NULL, err);
		if (r < 0)
			return r;
	}
	if ((r = build_pathfilter(l)) < 0)
		return r;
	l->shell_cwd_hit = pathfilter_hit(l->shell_paths, p->cwd, strlen(p->cwd));
	if ((r = ci_twin(l->path_rules, &l->path_rules_ci)) < 0 ||
	    (r = ci_twin(l->denied_paths, &l->denied_paths_ci)) < 0 ||
	    (r = ci_twin(l->allowed_paths, &l->allowed_paths_ci)) < 0 ||
	    (r = ci_twin(l->read_only_paths, &l->read_only_paths_ci)) < 0 ||
	    (r = ci_twin(l->exempt_paths, &l->exempt_paths_ci)) < 0)
		return r;
	r = compile_cmd_rules(l, c, err);
	if (r < 0)
		return r;
	r = compile_denied_cmds(l, c, !project && c->default_denied_commands, err);
	if (r < 0)
		return r;
	r = dup_strlist(&c->allow_domains, &l->allow_domains, &l->nallow_domains);
	if (r < 0)
		return r;
	return dup_strlist(&c->block_domains, &l->block_domains, &l->nblock_domains);
}

static int compile_tools(struct moat_policy *p, const struct moat_config *c)
{
	if (!c->ntools)
		return 0;
	p->tools = calloc(c->ntools, sizeof(*p->tools));
	if (!p->tools)
		return -ENOMEM;
	for (size_t i = 0; i < c->ntools; i++) {
		struct tool_decl *t = &p->tools[p->ntools++];
		const struct moat_tool_decl *d = &c->tools[i];

		t->name = moat_strdup(d->name);
		t->effects = d->effects;
		t->command_arg = d->command_arg ? moat_strdup(d->command_arg) : NULL;
		t->url_arg = d->url_arg ? moat_strdup(d->url_arg) : NULL;
		if (!t->name || (d->command_arg && !t->command_arg) || (d->url_arg && !t->url_arg))
			return -ENOMEM;
		if (dup_strlist(&d->path_args, &t->path_args, &t->npath_args) < 0)
			return -ENOMEM;
	}
	return 0;
}

int moat_policy_new(const struct moat_config *user, const struct moat_config *project,
		    const char *cwd, struct moat_policy **ret, struct moat_error *err)
{
	struct moat_policy *p;
	const char *home;
	int r;

	if (!user || !cwd || !ret)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	r = cwd[0] == '/' ? moat_path_normalize(cwd, strlen(cwd), "/", p->cwd, sizeof(p->cwd))
			  : -EINVAL;
	if (r < 0 || p->cwd[0] != '/') {
		moat_error_set(err, "working directory '%s' is not a usable absolute path", cwd);
		moat_policy_free(p);
		return -EINVAL;
	}
	p->cwd_len = strlen(p->cwd);
	home = moat_config_env("HOME");
	if (home && home[0] == '/')
		moat_path_normalize(home, strlen(home), "/", p->home, sizeof(p->home));
	p->home_len = strlen(p->home);
	p->log_all_commands = user->log_all_commands;
	r = compile_layer(p, &p->layers[0], user, false, err);
	p->nlayers = 1;
	if (r >= 0 && project) {
		p->nlayers = 2;
		r = compile_layer(p, &p->layers[1], project, true, err);
	}
	if (r >= 0)
		r = compile_tools(p, user);
	if (r < 0) {
		if (r == -ENOMEM)
			moat_error_set(err, "out of memory");
		moat_policy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

bool moat_policy_logs_commands(const struct moat_policy *p)
{
	return p->log_all_commands;
}

/* ---- decide ----------------------------------------------------------- */

/* Verdict strictness: DENY > ASK > ALLOW. */
static int strictness(enum moat_verdict v)
{
	return v == MOAT_DENY ? 2 : v == MOAT_ASK ? 1 : 0;
}

/* The running result for one layer. */
struct verdict {
	enum moat_verdict v;
	bool hard;
	bool set;
	char rule[160];
	char reason[512];
	size_t rule_len, reason_len; /* strlen of rule and reason */
};

__attribute__((format(printf, 5, 6))) static void vset(struct verdict *out, enum moat_verdict v,
						       bool hard, const char *rule,
						       const char *fmt, ...)
{
	va_list ap;
	size_t n;

	/* keep the first, strictest answer */
	if (out->set && strictness(out->v) >= strictness(v))
		return;
	out->v = v;
	out->hard = hard;
	out->set = true;
	n = moat_strlcpy(out->rule, rule, sizeof(out->rule));
	out->rule_len = n < sizeof(out->rule) ? n : sizeof(out->rule) - 1;
	if (!strchr(fmt, '%')) { /* a fixed sentence: no formatting to pay for */
		n = moat_strlcpy(out->reason, fmt, sizeof(out->reason));
	} else {
		int k;

		va_start(ap, fmt);
		k = vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
		va_end(ap);
		if (k < 0) {
			out->reason[0] = '\0';
			k = 0;
		}
		n = (size_t)k;
	}
	out->reason_len = n < sizeof(out->reason) ? n : sizeof(out->reason) - 1;
	if (n >= sizeof(out->reason)) { /* cut: on a character boundary */
		out->reason_len = moat_utf8_cut(out->reason, out->reason_len);
		out->reason[out->reason_len] = '\0';
	}
}

/* vset for a literal rule and reason (no formatting, lengths known) */
#define vset_lit(out, v, hard, rule, reason)                                                 \
	vset_n(out, v, hard, rule "", sizeof(rule) - 1, reason "", sizeof(reason) - 1)

static inline void vset_n(struct verdict *out, enum moat_verdict v, bool hard, const char *rule,
			  size_t rule_len, const char *reason, size_t reason_len)
{
	if (out->set && strictness(out->v) >= strictness(v))
		return;
	out->v = v;
	out->hard = hard;
	out->set = true;
	memcpy(out->rule, rule, rule_len + 1);
	out->rule_len = rule_len;
	memcpy(out->reason, reason, reason_len + 1);
	out->reason_len = reason_len;
}

/* The decision of one layer, copied out (the lengths are known). */
static void verdict_out(const struct verdict *lv, struct moat_decision *ret)
{
	_Static_assert(sizeof(ret->rule) == sizeof(lv->rule), "rule sizes");
	_Static_assert(sizeof(ret->reason) == sizeof(lv->reason), "reason sizes");
	ret->verdict = lv->v;
	ret->hard = lv->hard;
	memcpy(ret->rule, lv->rule, lv->rule_len + 1);
	memcpy(ret->reason, lv->reason, lv->reason_len + 1);
}

static const struct tool_decl *find_decl(const struct moat_policy *p, const char *tool)
{
	for (size_t i = 0; i < p->ntools; i++)
		if (!strcmp(p->tools[i].name, tool))
			return &p->tools[i];
	return NULL;
}

unsigned moat_policy_tool_effects(const struct moat_policy *p, const char *tool)
{
	const struct tool_decl *d = find_decl(p, tool);

	if (d)
		return d->effects;
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(builtin_tools); i++)
		if (!strcmp(builtin_tools[i].name, tool))
			return builtin_tools[i].effects;
	return 0;
}

/* (moat_policy_check_args sets every field one by one: a new field must be
 * set there too) */
struct call {
	const struct moat_policy *p;
	const char *tool;
	unsigned effects;
	bool declared;
	unsigned access; /* ACCESS_* for path arguments */
	const char *command;
	size_t command_len;
	const char *url;
	struct verdict lv[2]; /* per layer */
	bool path_done[2];    /* a path rule decided this path for the layer */
	bool builtin_file_tool; /* read_file, list_directory, write_file, edit_file */
	bool unsandboxed;	/* MOAT_CHECK_UNSANDBOXED */
	const struct tool_decl *decl; /* the configured declaration, or NULL */
	struct moat_policy_notes *notes; /* may be NULL */
};

/* An exempt_paths pattern of layer l that subj (of len bytes, lower-cased
 * when ci), a denied path of the layer, matches: noted for the audit
 * record. false when none does. */
static bool exempt_match(struct call *c, const struct layer *l, bool ci, const char *subj,
			 size_t len)
{
	const struct moat_globset *ex =
	    ci && l->exempt_paths_ci ? l->exempt_paths_ci : l->exempt_paths;
	struct moat_policy_notes *n = c->notes;
	const char *pat;
	long i;

	if (!ex)
		return false;
	i = moat_globset_first(ex, subj, len);
	if (i < 0)
		return false;
	pat = moat_globset_pattern(l->exempt_paths, (size_t)i);
	if (n && pat) {
		size_t k = 0;

		while (k < n->nexempt && n->exempt[k] != pat)
			k++;
		if (k == n->nexempt && k < MOAT_POLICY_MAX_NOTES)
			n->exempt[n->nexempt++] = pat;
	}
	return true;
}

static void rule_id(char *out, size_t n, const struct layer *l, const char *kind,
		    const char *pattern)
{
	if (pattern)
		snprintf(out, n, "%s%s:%s", l->prefix, kind, pattern);
	else
		snprintf(out, n, "%s%s", l->prefix, kind);
}

/* Check one path (the argument itself or a symlink hop/target) in one layer. */
static void check_path_layer(struct call *c, size_t li, const char *path, bool is_link)
{
	const struct layer *l = &c->p->layers[li];
	struct verdict *out = &c->lv[li];
	size_t len = strlen(path);
	char rule[160];
	const char *via = is_link ? " (through a symbolic link)" : "";
	/* SECURITY: Windows opens C:/X/.SSH as c:/x/.ssh: drive and UNC
	 * paths meet lower-cased patterns lower-cased */
	bool ci = moat_path_is_windows_form(path);
	const struct moat_globset *rules =
	    ci && l->path_rules_ci ? l->path_rules_ci : l->path_rules;
	const struct moat_globset *denied =
	    ci && l->denied_paths_ci ? l->denied_paths_ci : l->denied_paths;
	const struct moat_globset *allowed =
	    ci && l->allowed_paths_ci ? l->allowed_paths_ci : l->allowed_paths;
	const struct moat_globset *ro =
	    ci && l->read_only_paths_ci ? l->read_only_paths_ci : l->read_only_paths;
	char low[MOAT_PATH_MAX], name[MOAT_PATH_MAX];
	const char *subj = path;
	long i;

	if (out->set && out->v == MOAT_DENY)
		return;
	if (ci && len < sizeof(low)) {
		for (size_t k = 0; k <= len; k++)
			low[k] =
			    (path[k] >= 'A' && path[k] <= 'Z') ? (char)(path[k] + 32) : path[k];
		subj = low;
	}
	/* 2. path rules: first match wins, its answer is final for this path
	 * (an empty set is not even asked: it still hashes the path) */
	i = moat_globset_count(rules) ? moat_globset_first(rules, subj, len) : -1;
	if (i >= 0) {
		bool ok = ((c->access & ACCESS_READ) ? l->path_rule_read[i] : true) &&
			  ((c->access & ACCESS_WRITE) ? l->path_rule_write[i] : true);

		if (!ok) {
			rule_id(rule, sizeof(rule), l, "path_rules",
				moat_globset_pattern(l->path_rules, (size_t)i));
			vset(out, MOAT_DENY, true, rule, "path rule forbids %s of %s%s",
			     (c->access & ACCESS_WRITE) ? "writing" : "reading", path, via);
		}
		return;
	}
	/* 3. denied paths (a path holding no pattern's literal run matches
	 * none: the prefilter of the shell's operands answers most paths) */
	if (!ci && !pathfilter_hit(l->shell_paths, subj, len))
		i = -1;
	else
		i = moat_globset_first(denied, subj, len);
	if (i >= 0 && template_name(moat_globset_pattern(l->denied_paths, (size_t)i), subj))
		i = -1; /* .env.example: no secret */
	/* exempt_paths: the user lifted the denied paths from this one (not
	 * the steps before or after) */
	if (i >= 0 && exempt_match(c, l, ci, subj, len))
		i = -1;
	if (i >= 0) {
		rule_id(rule, sizeof(rule), l, "denied_paths",
			moat_globset_pattern(l->denied_paths, (size_t)i));
		vset(out, MOAT_DENY, true, rule, "%s is a denied path%s", path, via);
		return;
	}
	/* 4. read-only paths: readable, never writable */
	i = moat_globset_count(ro) ? moat_globset_first(ro, subj, len) : -1;
	if (i >= 0) {
		if (c->access & ACCESS_WRITE) {
			rule_id(rule, sizeof(rule), l, "read_only_paths",
				moat_globset_pattern(l->read_only_paths, (size_t)i));
			vset(out, MOAT_DENY, true, rule, "%s is read-only%s", path, via);
		}
		return;
	}
	/* 4. allowed paths: if set, everything else is outside */
	if (allowed && moat_globset_first(allowed, subj, len) < 0) {
		rule_id(rule, sizeof(rule), l, "allowed_paths", NULL);
		vset(out, MOAT_DENY, true, rule, "%s is outside the allowed paths%s", path, via);
		return;
	}
	/* SECURITY: a file tool writing a shell startup file gets the same
	 * ASK as the shell writing it, or write_file would be the way round */
	/* (the list is the shell analysis's, core/cmd.c) */
	if ((c->access & ACCESS_WRITE) &&
	    moat_cmd_startup_name(c->p->home, path, name, sizeof(name))) {
		char id[96];

		snprintf(id, sizeof(id), "startup-write:%.80s", name);
		rule_id(rule, sizeof(rule), l, id, NULL);
		vset(out, MOAT_ASK, false, rule,
		     "writes to %s, a startup, persistence or credential file%s", name, via);
	}
}

struct visit_ctx {
	struct call *c;
	const char *original;
};

static int visit_path(const char *path, void *ud)
{
	struct visit_ctx *v = ud;
	bool is_link = strcmp(path, v->original) != 0;
	bool all_denied = true;

	for (size_t li = 0; li < v->c->p->nlayers; li++) {
		check_path_layer(v->c, li, path, is_link);
		if (!(v->c->lv[li].set && v->c->lv[li].v == MOAT_DENY))
			all_denied = false;
	}
	return all_denied ? 1 : 0;
}

/* Check one spelling of a path argument: normalized, then every symlink on
 * its way. */
/* Why the normalizer refused a path, in words a model can act on. */
static const char *unusable_path_why(const char *s, size_t len, int r)
{
	if (r == -ENAMETOOLONG)
		return "too long";
	if (!len)
		return "empty";
	if (memchr(s, '\0', len))
		return "it holds a NUL byte";
	if (!moat_utf8_valid(s, len))
		return "not valid UTF-8";
	if (len >= 2 && ((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z') && s[1] == ':')
		return "a drive-relative Windows path such as C:x has no fixed meaning; give an "
		       "absolute path or one relative to the working directory";
	if (len >= 2 && (s[0] == '\\' || s[0] == '/') && (s[1] == '\\' || s[1] == '/'))
		return "a Windows device or UNC path this system cannot open";
	return "a spelling the path resolver refuses (a Windows device name or stream?)";
}

static int check_one_path(struct call *c, const char *key, const char *s, size_t len,
			  struct moat_error *err)
{
	char norm[MOAT_PATH_MAX];
	struct visit_ctx v = {c, norm};
	int r;

	r = moat_path_normalize(s, len, c->p->cwd, norm, sizeof(norm));
	if (r < 0) {
		moat_error_set(err, "argument '%s' is not a usable path (%s)", key,
			       unusable_path_why(s, len, r));
		return -EINVAL;
	}
	/* SECURITY: resolve from the raw spelling, as the kernel will: ".."
	 * after a symlink applies to the link's target, and a Windows-looking
	 * name is also checked as the relative Linux file name it really is. */
	r = moat_path_resolve_input(s, len, c->p->cwd, norm, sizeof(norm), visit_path, &v);
	if (r < 0) {
		/* SECURITY: a path we cannot resolve is not allowed. */
		for (size_t li = 0; li < c->p->nlayers; li++) {
			if (r == -EXDEV)
				vset(&c->lv[li], MOAT_DENY, true, "path:unresolvable",
				     "cannot resolve %s: it goes through a link in /proc whose "
				     "target depends on the process that opens it",
				     norm);
			else
				vset(&c->lv[li], MOAT_DENY, true, "path:unresolvable",
				     "cannot resolve %s: %s", norm, strerror(-r));
		}
	}
	return 0;
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

static int hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
		return (ch | 0x20) - 'a' + 10;
	return -1;
}

/* "file:///x", "file://localhost/x", "file:/x" -> "/x"; "file://host/x" ->
 * "//host/x" (UNC); percent-escapes decoded. 1: written, 0: not a file URI,
 * <0: a file URI that cannot be read safely. */
static int file_uri_path(const char *s, size_t len, struct moat_buf *out)
{
	size_t i = 5;

	if (len < 5 || strncasecmp(s, "file:", 5) != 0)
		return 0;
	if (len >= 7 && s[5] == '/' && s[6] == '/') {
		size_t h = 7, e = 7;

		while (e < len && s[e] != '/')
			e++;
		if (!(e - h == 0 || (e - h == 9 && strncasecmp(s + h, "localhost", 9) == 0))) {
			moat_buf_puts(out, "//");
			moat_buf_append(out, s + h, e - h);
		}
		i = e;
	}
	for (; i < len; i++) {
		if (s[i] == '?' || s[i] == '#')
			break;
		if (s[i] == '%') {
			int hi = i + 2 < len ? hex_digit(s[i + 1]) : -1;
			int lo = i + 2 < len ? hex_digit(s[i + 2]) : -1;

			/* SECURITY: "%00" would cut the path the tool opens */
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return -EINVAL;
			moat_buf_putc(out, (char)(hi * 16 + lo));
			i += 2;
			continue;
		}
		moat_buf_putc(out, s[i]);
	}
	if (out->oom)
		return -ENOMEM;
	return out->len > 0 ? 1 : -EINVAL;
}

/* "~", "~/x", "~name/x", "$HOME/x", "${HOME}/x" as a tool that expands them
 * reads them. 1: written, 0: nothing to expand, <0: cannot expand. */
static int home_path(const struct moat_policy *p, const char *s, size_t len, struct moat_buf *out)
{
	size_t rest;

	if (len >= 1 && s[0] == '~') {
		size_t e = 1;

		while (e < len && s[e] != '/')
			e++;
		if (e == 1) {
			if (!p->home[0])
				return -ENOENT;
			moat_buf_puts(out, p->home);
		} else {
			/* ~name: the usual home of that user; the literal
			 * relative name is checked as well */
			for (size_t k = 1; k < e; k++)
				if (!((s[k] | 0x20) >= 'a' && (s[k] | 0x20) <= 'z') &&
				    !(s[k] >= '0' && s[k] <= '9') && !strchr("._-", s[k]))
					return 0;
			moat_buf_puts(out, e == 5 && !strncmp(s + 1, "root", 4) ? "/" : "/home/");
			moat_buf_append(out, s + 1, e - 1);
		}
		rest = e;
	} else if (len >= 5 && !strncmp(s, "$HOME", 5) && (len == 5 || s[5] == '/')) {
		rest = 5;
	} else if (len >= 7 && !strncmp(s, "${HOME}", 7) && (len == 7 || s[7] == '/')) {
		rest = 7;
	} else {
		return 0;
	}
	if (s[0] == '$') {
		if (!p->home[0])
			return -ENOENT;
		moat_buf_puts(out, p->home);
	}
	moat_buf_append(out, s + rest, len - rest);
	return out->oom ? -ENOMEM : 1;
}

/* A path argument is checked as written and as any program might read it:
 * without surrounding whitespace (tools often strip), with "~" and $HOME
 * expanded (tools often expand them), and a file:// URI as its path. Every
 * spelling must pass; each can only add a denial. */
static int check_path_str(struct call *c, const char *key, const char *s, size_t len,
			  struct moat_error *err)
{
	struct moat_buf b = MOAT_BUF_INIT;
	const char *t = s;
	size_t tl = len;
	int r;

	r = check_one_path(c, key, s, len, err);
	if (r < 0)
		return r;
	while (tl > 0 && is_space(t[0])) {
		t++;
		tl--;
	}
	while (tl > 0 && is_space(t[tl - 1]))
		tl--;
	if (tl > 0 && tl != len) {
		r = check_one_path(c, key, t, tl, err);
		if (r < 0)
			return r;
	}
	if (tl == 0)
		return 0;
	r = home_path(c->p, t, tl, &b);
	if (r == 0) {
		moat_buf_reset(&b);
		r = file_uri_path(t, tl, &b);
	}
	if (r > 0)
		r = check_one_path(c, key, b.data, b.len, err);
	else if (r == -ENOENT) {
		for (size_t li = 0; li < c->p->nlayers; li++)
			vset(&c->lv[li], MOAT_DENY, true, "path:unresolvable",
			     "cannot expand '~' or $HOME in argument '%s': no home directory is "
			     "known",
			     key);
		r = 0;
	} else if (r < 0) {
		moat_error_set(err, "argument '%s' is not a usable path (%s)", key,
			       r == -ENOMEM ? "out of memory" : "bad file URI");
	}
	moat_buf_release(&b);
	return r < 0 ? -EINVAL : 0;
}

static int check_path_value(struct call *c, const char *key, json_t *val, struct moat_error *err)
{
	return check_path_str(c, key, json_string_value(val), json_string_length(val), err);
}

static bool is_path_key(const struct call *c, const char *key)
{
	const struct tool_decl *d = c->decl;

	if (moat_path_arg_name(key))
		return true;
	for (size_t i = 0; d && i < d->npath_args; i++)
		if (!strcmp(d->path_args[i], key))
			return true;
	return false;
}

static bool is_paths_key(const char *key)
{
	size_t n = strlen(key);

	/* every spelling ends in 's' */
	if (n < 5 || (key[n - 1] | 0x20) != 's')
		return false;
	return !strcasecmp(key, "paths") || (n > 6 && !strcasecmp(key + n - 6, "_paths")) ||
	       (n > 5 && !strcmp(key + n - 5, "Paths") && key[n - 6] >= 'a' && key[n - 6] <= 'z');
}

/* Names that MCP servers and agents commonly give to path arguments,
 * beyond the built-in path-like names. They are checked only for tools
 * nobody declared: such a tool gets ASK anyway, so treating one more of its
 * arguments as a path can only turn that ASK into a DENY for a denied path,
 * never allow anything; a declared tool says which arguments are paths. */
static bool undeclared_path_name(const char *key)
{
	static const char *const exact[] = {
	    "file",	"files",   "filename",	  "filenames", "file_name",   "fname",
	    "pathname", "dir",	   "dirs",	  "dirname",   "folder",      "folders",
	    "root",	"source",  "sources",	  "src",       "destination", "dest",
	    "dst",	"target",  "targets",	  "output",    "location",    "uri",
	    "uris",	"workdir", "working_dir",
	};
	static const char *const suffixes[] = {"_file", "_files", "_folder", "_dirs", "_uri"};
	static const char *const camel[] = {"File", "Files", "Folder", "Dirs", "Uri"};
	size_t n = strlen(key);

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(exact); i++)
		if (!strcasecmp(key, exact[i]))
			return true;
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(suffixes); i++) {
		size_t k = strlen(suffixes[i]);

		if (n > k && !strcasecmp(key + n - k, suffixes[i]))
			return true;
	}
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(camel); i++) {
		size_t k = strlen(camel[i]);

		if (n > k && !strcmp(key + n - k, camel[i]) &&
		    ((key[n - k - 1] >= 'a' && key[n - k - 1] <= 'z') ||
		     (key[n - k - 1] >= '0' && key[n - k - 1] <= '9')))
			return true;
	}
	return false;
}

/* An undeclared tool's arguments, at any depth: strings under path-like
 * names (built-in or common), and file:// URIs anywhere. */
static int check_undeclared(struct call *c, const char *key, json_t *val, bool named,
			    struct moat_error *err)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_string(val)) {
		const char *s = json_string_value(val);
		size_t len = json_string_length(val);

		if (named)
			return check_path_str(c, key, s, len, err);
		if (len >= 5 && !strncasecmp(s, "file:", 5))
			return check_path_str(c, key, s, len, err);
		return 0;
	}
	if (json_is_array(val)) {
		json_array_foreach(val, i, v) {
			if (check_undeclared(c, key, v, named, err) < 0)
				return -EINVAL;
		}
		return 0;
	}
	if (json_is_object(val)) {
		json_object_foreach(val, k, v) {
			bool nm = is_path_key(c, k) || is_paths_key(k) || undeclared_path_name(k);

			if (check_undeclared(c, k, v, nm, err) < 0)
				return -EINVAL;
		}
	}
	return 0;
}

static int check_paths(struct call *c, json_t *args, struct moat_error *err)
{
	const char *key;
	json_t *val;
	bool any_path = false;

	if (c->builtin_file_tool) {
		for (void *it = json_object_iter(args); it; it = json_object_iter_next(args, it)) {
			if (is_path_key(c, json_object_iter_key(it))) {
				any_path = true;
				break;
			}
		}
	}
	/* SECURITY: a built-in file tool without a path would act on a default
	 * the policy never saw; it is bad input, not an allow. */
	if (!any_path && c->builtin_file_tool) {
		moat_error_set(err, "'%s' needs a \"path\" argument", c->tool);
		return -EINVAL;
	}
	/* (an explicit iterator: json_object_foreach looks each key up again) */
	for (void *it = json_object_iter(args); it; it = json_object_iter_next(args, it)) {
		/* (each name is classified once) */
		bool paths_key;

		key = json_object_iter_key(it);
		val = json_object_iter_value(it);
		if (is_path_key(c, key)) {
			if (!json_is_string(val)) {
				moat_error_set(err, "argument '%s' must be a string path", key);
				return -EINVAL;
			}
			if (check_path_value(c, key, val, err) < 0)
				return -EINVAL;
			continue;
		}
		paths_key = is_paths_key(key);
		if (paths_key && json_is_array(val)) {
			size_t i;
			json_t *el;

			json_array_foreach(val, i, el) {
				if (!json_is_string(el)) {
					moat_error_set(err, "argument '%s' must hold string paths",
						       key);
					return -EINVAL;
				}
				if (check_path_value(c, key, el, err) < 0)
					return -EINVAL;
			}
		} else if (paths_key && json_is_string(val)) {
			/* SECURITY: a tool may take one path where it takes several */
			if (check_path_value(c, key, val, err) < 0)
				return -EINVAL;
		} else if (!c->declared) {
			if (check_undeclared(c, key, val, undeclared_path_name(key), err) < 0)
				return -EINVAL;
		}
	}
	return 0;
}

static void check_url(struct call *c, size_t li)
{
	const struct layer *l = &c->p->layers[li];
	struct verdict *out = &c->lv[li];
	struct moat_url u;
	struct moat_error e;
	enum moat_host_class hc;
	char rule[160];

	if (moat_url_parse(c->url, strlen(c->url), &u, &e) < 0) {
		rule_id(rule, sizeof(rule), l, "url:invalid", NULL);
		vset(out, MOAT_DENY, true, rule, "the URL cannot be parsed safely: %s", e.msg);
		return;
	}
	if (strcmp(u.scheme, "http") != 0 && strcmp(u.scheme, "https") != 0) {
		rule_id(rule, sizeof(rule), l, "url:scheme", u.scheme);
		vset(out, MOAT_DENY, true, rule, "only http and https URLs may be fetched, not %s",
		     u.scheme);
		return;
	}
	for (size_t i = 0; i < l->nblock_domains; i++) {
		if (moat_domain_match(u.host, l->block_domains[i])) {
			rule_id(rule, sizeof(rule), l, "network.block_domains", l->block_domains[i]);
			vset(out, MOAT_DENY, true, rule, "%s is a blocked domain", u.host);
			return;
		}
	}
	hc = moat_host_classify(u.host, u.host_is_ip);
	if (hc != MOAT_HOST_PUBLIC && hc != MOAT_HOST_PRIVATE && !l->allow_local) {
		rule_id(rule, sizeof(rule), l, "url", moat_host_class_name(hc));
		vset(out, MOAT_DENY, true, rule,
		     "%s is a %s address; fetching it could reach services on this machine or "
		     "its cloud metadata",
		     u.host, moat_host_class_name(hc));
		return;
	}
	if (l->nallow_domains) {
		bool ok = false;

		for (size_t i = 0; i < l->nallow_domains && !ok; i++)
			ok = moat_domain_match(u.host, l->allow_domains[i]);
		if (!ok) {
			rule_id(rule, sizeof(rule), l, "network.allow_domains", NULL);
			vset(out, MOAT_DENY, true, rule, "%s is not in the allowed domains",
			     u.host);
			return;
		}
	}
	if (hc == MOAT_HOST_PRIVATE && !l->allow_local) {
		rule_id(rule, sizeof(rule), l, "url", "private");
		vset(out, MOAT_ASK, false, rule, "%s is a private network address", u.host);
	}
}

static _Thread_local pcre2_match_data *tl_md;

/* The first regex rule (below limit, a rule index or -1 for none) found in
 * text; -1 if none. */
static long first_regex_rule(const struct layer *l, const char *text, size_t len, long limit)
{
	if (l->ncmd_regex && !tl_md)
		tl_md = pcre2_match_data_create(1, NULL);
	for (size_t k = 0; k < l->ncmd_regex; k++) {
		size_t ri = l->cmd_regex_rule[k];

		if (limit >= 0 && ri > (size_t)limit)
			break;
		if (tl_md && pcre2_match(l->cmd_rules[ri].re, (PCRE2_SPTR)text, len, 0, 0, tl_md,
					 NULL) >= 0)
			return (long)ri;
	}
	return -1;
}

static long min_rule(long a, long b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* A deny or ask substring rule matching the view's text with the blank
 * runs inside its words squeezed too (`psql -c 'DROP  TABLE x'` holds
 * "DROP TABLE" for the shell's reader as for SQL's); -1 if none or when
 * no word holds such a run. An allow is matched as written: squeezing
 * may only deny or ask more. */
static long first_stop_squeezed(const struct layer *l, const char *text, size_t len)
{
	struct moat_buf b = MOAT_BUF_INIT;
	bool run = false;
	long r;

	for (size_t i = 0; i < len && !run; i++)
		run = (text[i] != ' ' && is_space(text[i])) ||
		      (text[i] == ' ' && i + 1 < len && is_space(text[i + 1]));
	if (!run)
		return -1;
	if (squeeze_blanks(text, &b) < 0) {
		moat_buf_release(&b);
		/* SECURITY: out of memory: the first deny or ask rule, never none */
		for (size_t i = 0; i < l->ncmd_rules; i++)
			if (l->cmd_rules[i].decision != MOAT_ALLOW)
				return (long)i;
		return -1;
	}
	r = moat_strset_first_in(l->cmd_subs, b.data, b.len - 1, SUB_STOP);
	moat_buf_release(&b);
	return r;
}

/* First command rule matching one view's text; -1 if none: a glob over the
 * whole text, a regex found in it, a deny or ask substring occurring in it,
 * an allow substring starting it. */
static long first_cmd_rule(const struct layer *l, const char *text)
{
	size_t len;
	long best = -1, gi;

	if (!l->ncmd_rules)
		return -1;
	len = strlen(text);
	gi = moat_globset_count(l->cmd_globs) ? moat_globset_first(l->cmd_globs, text, len) : -1;
	if (gi >= 0)
		best = (long)l->cmd_glob_rule[gi];
	if (l->cmd_subs) {
		best = min_rule(best, moat_strset_first_in(l->cmd_subs, text, len, SUB_STOP));
		best = min_rule(best, moat_strset_first_prefix(l->cmd_subs, text, len, SUB_ALLOW));
		best = min_rule(best, first_stop_squeezed(l, text, len));
	}
	return min_rule(best, first_regex_rule(l, text, len, best));
}

/* First command rule matching the command as written (Aar's subject): a
 * glob over all of it (blanks around it aside), a regex or any substring
 * found in it; -1 if none. Only a deny or ask decides anything here (an
 * allow is for one program invocation at a time), but an allow found first
 * is still the first match, as in Aar: an exception stays one. */
static long first_cmd_rule_raw(const struct layer *l, const char *cmd, size_t len)
{
	const struct moat_strset *subs = l->cmd_subs_raw ? l->cmd_subs_raw : l->cmd_subs;
	size_t b = 0, e = len;
	long best = -1, gi;

	while (b < e && is_space(cmd[b]))
		b++;
	while (e > b && is_space(cmd[e - 1]))
		e--;
	gi = moat_globset_count(l->cmd_globs) ? moat_globset_first(l->cmd_globs, cmd + b, e - b)
					      : -1;
	if (gi >= 0)
		best = (long)l->cmd_glob_rule[gi];
	if (subs)
		best = min_rule(best, moat_strset_first_in(subs, cmd, len, MOAT_STRSET_ALL));
	return min_rule(best, first_regex_rule(l, cmd, len, best));
}

/* A view whose program, or whose script, cannot be known before it runs. */
static bool view_unknown(const struct moat_cmdview *v)
{
	return (v->flags & (MOAT_VIEW_DYNAMIC | MOAT_VIEW_SHELL_STDIN)) != 0;
}

/* Can the path (of len bytes) match a denied path at all? */
static bool pathfilter_hit(const struct pathfilter *f, const char *s, size_t n)
{
	if (!f)
		return false;
	if (f->all)
		return true;
	for (size_t i = 0; i + 1 < n; i++) {
		unsigned key = (unsigned)(unsigned char)s[i] << 8 | (unsigned char)s[i + 1];

		unsigned h;

		if (!(f->bits[key >> 6] & ((uint64_t)1 << (key & 63))))
			continue;
		for (h = pf_hash(key); f->slot[h].count && f->slot[h].key != key;
		     h = (h + 1) & (PF_SLOTS - 1))
			;
		for (size_t k = f->slot[h].first, e = k + f->slot[h].count; k < e; k++)
			if (f->runs[k].len <= n - i &&
			    memcmp(s + i + 2, f->runs[k].s + 2, f->runs[k].len - 2u) == 0)
				return true;
	}
	return false;
}

/* The files the command's words name, against the denied paths: ASK, since
 * the sandbox hides them anyway and a human may approve (a path rule that
 * allows the access, or a command rule that allows the view, wins). */
/* May the glob word w (an absolute path whose components may hold * ? [..])
 * name a path the denied pattern pat matches? Component by component: a
 * glob component against a literal one is matched as the shell would
 * (a leading dot must be spelt); "**" takes any number of components; a
 * component that is a glob on both sides is taken as no match (`cat *`
 * against "**" + "/" + "*.pem" would otherwise ask for every listing); a word that
 * names a directory a "**" pattern covers (`cp -r ~/.s* x`) matches. */
static bool glob_meets(const char *w, const char *pat, int depth, int fnflags)
{
	const char *we, *pe;
	size_t wl, pl;
	char wc[256], pc[256];
	bool wg, pg;

	if (depth > 64)
		return false;
	while (*w == '/')
		w++;
	while (*pat == '/')
		pat++;
	if (!strcmp(pat, "**") || !strncmp(pat, "**/", 3)) {
		const char *rest = pat[2] ? pat + 3 : "";

		if (!*rest)
			return true;
		for (const char *k = w;; ) {
			if (glob_meets(k, rest, depth + 1, fnflags))
				return true;
			k = strchr(k, '/');
			if (!k)
				return false;
			k++;
		}
	}
	if (!*w)
		return false; /* (a directory-and-below pattern was taken above) */
	if (!*pat)
		return false;
	we = strchr(w, '/');
	pe = strchr(pat, '/');
	wl = we ? (size_t)(we - w) : strlen(w);
	pl = pe ? (size_t)(pe - pat) : strlen(pat);
	if (wl >= sizeof(wc) || pl >= sizeof(pc))
		return false;
	memcpy(wc, w, wl);
	wc[wl] = '\0';
	memcpy(pc, pat, pl);
	pc[pl] = '\0';
	wg = strpbrk(wc, "*?[") != NULL;
	pg = strpbrk(pc, "*?[") != NULL;
	if (wg && pg)
		return false;
	/* a glob with fewer than two literal characters ("*", "?*", "*s")
	 * would meet every name: taken as no match, or every `cat` of a whole directory
	 * would ask; a secret's name spelt with a wildcard or two (".e?v",
	 * "sha*", "[s]hadow") keeps enough of it */
	if (wg) {
		size_t lit = 0;
		bool br = false;

		for (const char *k = wc; *k; k++) {
			if (*k == '[')
				br = true;
			else if (*k == ']' && br)
				br = false;
			else if (!br && *k != '*' && *k != '?')
				lit++;
		}
		if (lit < 2)
			return false;
	}
	if (wg ? fnmatch(wc, pc, fnflags) != 0
	       : pg ? fnmatch(pc, wc, FNM_PERIOD) != 0 : strcmp(wc, pc) != 0)
		return false;
	if (!we) /* the word ends here: the pattern too, or it covers what is below */
		return !pe || !strcmp(pe + 1, "**");
	if (!pe)
		return false;
	return glob_meets(we + 1, pe + 1, depth + 1, fnflags);
}

/* The first denied pattern a glob word may name, or -1 (span: its '*'
 * stand for unknown values, which may start with a dot). */
static long glob_denied(const struct layer *l, const char *home, const char *w, bool span)
{
	size_t n = moat_globset_count(l->denied_paths);
	char exp[MOAT_PATH_MAX];

	for (size_t i = 0; i < n; i++) {
		const char *pat = moat_globset_pattern(l->denied_paths, i);

		if (!pat)
			continue;
		if (pat[0] == '~' && pat[1] == '/' && home) {
			if ((size_t)snprintf(exp, sizeof(exp), "%s%s", home, pat + 1) >= sizeof(exp))
				continue;
			pat = exp;
		}
		if (glob_meets(w, pat, 0, span ? 0 : FNM_PERIOD))
			return (long)i;
	}
	return -1;
}

/* The denied pattern a shell word's path (or, for a glob word, the
 * path with its glob rest) matches, or -1; a path rule that allows the
 * access wins. */
static long word_denied(struct call *c, const struct layer *l, const char *home, const char *subj,
			size_t len, unsigned pflags)
{
	bool glob = (pflags & MOAT_CMD_PATH_GLOB) != 0;
	long i = -1, pr;

	if (glob || pathfilter_hit(l->shell_paths, subj, len))
		i = moat_globset_first(l->denied_paths, subj, len);
	if (i >= 0 && template_name(moat_globset_pattern(l->denied_paths, (size_t)i), subj))
		i = -1; /* .env.example: no secret */
	/* exempt_paths: a path the user lifted from the denied paths
	 * (SECURITY: not a glob word, whose text is no path: it names
	 * whatever it matches when the command runs) */
	if (i >= 0 && !glob && exempt_match(c, l, false, subj, len))
		return -1;
	/* SECURITY: an unquoted glob names whatever it matches when the
	 * command runs (cat /etc/[s]hadow, ~/.s* then id_*, .e?v) */
	if (i < 0 && glob)
		i = glob_denied(l, home, subj, (pflags & MOAT_CMD_PATH_SPAN) != 0);
	if (i < 0)
		return -1;
	pr = moat_globset_first(l->path_rules, subj, len);
	if (pr >= 0 && l->path_rule_read[pr] &&
	    (!(pflags & MOAT_CMD_PATH_WRITE) || l->path_rule_write[pr]))
		return -1;
	return i;
}

/* Resolving a shell word's path through the filesystem, where no sandbox
 * stands behind the command (every symlink hop and the target). */
struct word_visit {
	struct call *c;
	const struct layer *l;
	const char *home;
	const char *original; /* the word's own path (checked already) */
	const char *rest;     /* a glob word: what follows the resolved directory */
	unsigned pflags;
	long hit;
	int err;			   /* a match that cannot be resolved: its errno */
	bool matched;			   /* the hit is a glob word's match, as spelt */
	struct moat_wordglob_budget *gb;   /* a glob word's expansions */
	char where[MOAT_PATH_MAX];
	char match[MOAT_PATH_MAX];
};

static int visit_word(const char *path, void *ud)
{
	struct word_visit *w = ud;
	char buf[MOAT_PATH_MAX];
	const char *subj = path;
	size_t len;
	long i;

	if (w->rest) {
		size_t n = (size_t)snprintf(buf, sizeof(buf), "%s%s%s", path,
					    path[0] == '/' && path[1] == '\0' ? "" : "/", w->rest);

		if (n >= sizeof(buf))
			return 0; /* (the kernel cannot open it either) */
		subj = buf;
	}
	if (!strcmp(subj, w->original))
		return 0;
	len = strlen(subj);
	i = word_denied(w->c, w->l, w->home, subj, len, w->pflags);
	if (i < 0)
		return 0;
	w->hit = i;
	memcpy(w->where, subj, len + 1);
	return 1;
}

/* Words past this many are not resolved through the filesystem: the
 * command asks (MOAT_CHECK_UNSANDBOXED only) */
#define WORDS_RESOLVED_MAX 4096

/* A word spelt in /proc, checked as spelt (core/cmd.c reads /proc/PID/root
 * and cwd), or a name of the standard descriptors, which leads there. */
static bool proc_spelt(const char *p)
{
	if (!strncmp(p, "/proc/", 6) || !strcmp(p, "/dev/stdin") || !strcmp(p, "/dev/stdout") ||
	    !strcmp(p, "/dev/stderr") || !strcmp(p, "/dev/fd"))
		return true;
	if (strncmp(p, "/dev/fd/", 8) || !p[8])
		return false;
	for (p += 8; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* One match of a glob word, checked as the path it is (lexically, then
 * every link on its way): 1 when it names a denied path (w->hit,
 * w->where), -1 when it cannot be resolved (w->err), else 0. */
static int visit_match(const char *m, void *ud)
{
	struct word_visit *w = ud;
	const char *cwd = w->c->p->cwd;
	size_t len;
	long i;
	int r;

	if (moat_path_normalize_posix(m, strlen(m), cwd, w->match, sizeof(w->match)) < 0)
		return 0; /* (too long for the kernel to open as well) */
	len = strlen(w->match);
	i = word_denied(w->c, w->l, w->home, w->match, len, w->pflags);
	if (i >= 0) {
		w->hit = i;
		w->matched = true;
		memcpy(w->where, w->match, len + 1);
		return 1;
	}
	w->original = w->match;
	r = moat_path_resolve_each(w->match, visit_word, w);
	if (r > 0)
		return 1;
	if (r < 0 && r != -ELOOP && !(r == -EXDEV && proc_spelt(w->match))) {
		w->err = -r;
		memcpy(w->where, w->match, len + 1);
		return -1;
	}
	return 0;
}

/* -1: no denied path on the way; >= 0: the pattern (w->where the path);
 * -2: the path cannot be resolved (errno in *ret_err); -3: a glob word
 * whose matches cannot all be known (errno in *ret_err: E2BIG past the
 * bound). */
static long resolve_word(struct word_visit *w, const char *subj, int *ret_err)
{
	char dir[MOAT_PATH_MAX];
	const char *g, *what = subj;
	int r;

	w->hit = -1;
	w->rest = NULL;
	w->matched = false;
	w->original = subj;
	if ((w->pflags & MOAT_CMD_PATH_GLOB) && (g = strpbrk(subj, "*?["))) {
		/* the directory before the first glob component is resolved,
		 * the rest matched as a glob below each place it leads to */
		size_t d = (size_t)(g - subj);

		while (d > 0 && subj[d] != '/')
			d--;
		if (subj[d] != '/')
			return -1;
		memcpy(dir, subj, d);
		dir[d ? d : 1] = '\0';
		if (!d)
			dir[0] = '/';
		w->rest = subj + d + 1;
		what = dir;
	}
	r = moat_path_resolve_each(what, visit_word, w);
	if (r > 0)
		return w->hit;
	/* SECURITY: a glob word names what it matches when the command runs:
	 * each match, and every link on its way, is checked as a path
	 * (`cat .*`, `cat * /x`, `cat lnk/x*`); matches past the bound, or an
	 * expansion that failed, are not known to be clean */
	if (what != subj && (r >= 0 || r == -ELOOP) && w->gb) {
		unsigned pflags = w->pflags;

		w->rest = NULL;
		w->pflags &= ~MOAT_CMD_PATH_GLOB;
		r = moat_wordglob(subj, w->gb, visit_match, w);
		w->pflags = pflags;
		if (r > 0)
			return w->hit;
		if (r == -1) {
			*ret_err = w->err;
			return -2;
		}
		if (r < 0) {
			*ret_err = -r;
			return -3;
		}
		return -1;
	}
	/* a link in /proc resolves for the process that opens it: a word
	 * spelt there was checked as spelt (`cat /proc/self/status`, `>
	 * /dev/stderr`); one led there by a link of its own is refused, as a
	 * file tool's path is; a loop opens nothing */
	if (r < 0 && r != -ELOOP && !(r == -EXDEV && proc_spelt(what))) {
		*ret_err = -r;
		return -2;
	}
	return -1;
}

/* The walks below the trees one command reads, and what they share. */
struct tree_walk {
	struct moat_search_budget pool;	  /* what the walks of the command may spend */
	struct moat_search_budget budget; /* one walk's share of it */
	size_t left;			  /* trees still to walk, this one included */
	char root[MOAT_PATH_MAX];
	char hit[PATH_MAX];
	struct moat_decision why;
};

/* The tree below subj (a normalised absolute path; a glob word: the
 * directory before its first wildcard) that the program of pp's view
 * reads whole: true when it set the layer's verdict (a denied path below
 * it is DENY, naming it; a tree too large to walk, or that cannot be
 * walked, asks). */
/* Does the tree at path (by its real path) lie within the working
 * directory, and hold neither the home nor a directory above it? */
static bool project_tree(const struct call *c, const char *path)
{
	const char *home = moat_policy_home(c->p);
	char real[PATH_MAX];
	size_t cl = c->p->cwd_len, rl, hl;

	if (!realpath(path, real))
		return false;
	rl = strlen(real);
	if (rl < cl || memcmp(real, c->p->cwd, cl) ||
	    !(real[cl] == '/' || real[cl] == '\0' || (cl == 1 && real[0] == '/')))
		return false;
	hl = home ? strlen(home) : 0;
	return !(hl && hl >= rl && !memcmp(home, real, rl) &&
		 (home[rl] == '/' || home[rl] == '\0' || (rl == 1 && real[0] == '/')));
}

static bool check_tree(struct call *c, size_t li, const struct moat_cmd_analysis *a,
		       const struct moat_cmd_path *pp, const char *subj, struct tree_walk *tw)
{
	const struct layer *l = &c->p->layers[li];
	struct verdict *out = &c->lv[li];
	const char *g;
	char rule[160];
	size_t n = strlen(subj);
	int r;

	if (n >= sizeof(tw->root)) {
		rule_id(rule, sizeof(rule), l, "command:tree-unchecked", NULL);
		vset(out, MOAT_ASK, false, rule,
		     "'%.200s' reads the whole of a tree whose name is too long to walk",
		     a->views[pp->view].text);
		return false;
	}
	memcpy(tw->root, subj, n + 1);
	if ((pp->flags & MOAT_CMD_PATH_GLOB) && (g = strpbrk(tw->root, "*?["))) {
		char *sl = tw->root + (g - tw->root);

		while (sl > tw->root && *sl != '/')
			sl--;
		sl[sl == tw->root] = '\0';
	}
	/* SECURITY: each tree walks on its share of what is left, so a large
	 * first one (tar cf x ../big ~) cannot leave the home unwalked */
	moat_search_budget_share(&tw->pool, tw->left, &tw->budget);
	{
		size_t given = tw->budget.entries;

		r = moat_search_denied(c->p, tw->root, NULL,
				       (pp->flags & MOAT_CMD_PATH_FOLLOW) ? MOAT_SEARCH_FOLLOW : 0,
				       &tw->budget, tw->hit,
				       sizeof(tw->hit), &tw->why);
		moat_search_budget_spend(&tw->pool, given, &tw->budget);
		if (tw->left > 1)
			tw->left--;
	}
	if (r == 0)
		return false;
	if (r == 1 && !strcmp(tw->why.rule, "path:unresolvable")) {
		/* a name the policy cannot read (not UTF-8): not known to be denied */
		rule_id(rule, sizeof(rule), l, "command:tree-unchecked", NULL);
		vset(out, MOAT_ASK, false, rule,
		     "'%.200s' reads the whole of %.200s, which holds %.200s, a name moat cannot "
		     "check against the denied paths",
		     a->views[pp->view].text, tw->root, tw->hit);
		return false;
	}
	if (r == 1) {
		vset(out, MOAT_DENY, true, tw->why.rule,
		     "'%.200s' reads the whole of %.200s, which holds %.200s, a denied path: no "
		     "sandbox hides it where this command runs",
		     a->views[pp->view].text, tw->root, tw->hit);
		return true;
	}
	rule_id(rule, sizeof(rule), l, "command:tree-unchecked", NULL);
	vset(out, MOAT_ASK, false, rule,
	     "'%.200s' reads the whole of %.200s, and moat cannot tell whether that holds a "
	     "denied path (%s)",
	     a->views[pp->view].text, tw->root,
	     r == -E2BIG	   ? "too many entries or levels to walk"
	     : r == -ETIMEDOUT ? "it takes too long to walk"
			       : strerror(-r));
	return false;
}

static void check_command_paths(struct call *c, size_t li, const struct moat_cmd_analysis *a,
				const long *decided)
{
	const struct layer *l = &c->p->layers[li];
	struct verdict *out = &c->lv[li];
	char norm[MOAT_PATH_MAX], phys[MOAT_PATH_MAX], rule[160];
	struct word_visit *wv = NULL;
	struct tree_walk *tw = NULL;
	struct moat_wordglob_budget gb;
	bool tw_ready = false;
	size_t resolved = 0;

	moat_wordglob_budget_init(&gb);

	for (size_t k = 0; k < a->npaths; k++) {
		const struct moat_cmd_path *pp = &a->paths[k];
		const char *subj = pp->abs, *via = "";
		size_t len;
		long i;
		bool lexical = true;

		/* SECURITY: with a sandbox, an ASK or DENY already stands and
		 * nothing here can change it; with none, a denied path is a DENY
		 * that an earlier ASK must not hide (vset keeps the strictest) */
		if (out->set && (c->unsandboxed ? out->v == MOAT_DENY : out->v != MOAT_ALLOW))
			break;
		/* SECURITY: with no sandbox, a word through another process's
		 * working directory (/proc/PID/cwd/x) names a place no check
		 * can see before the command runs */
		if (c->unsandboxed && (pp->flags & MOAT_CMD_PATH_PROC)) {
			rule_id(rule, sizeof(rule), l, "path:unresolvable", NULL);
			vset(out, MOAT_DENY, true, rule,
			     "'%s' names %s, through a working directory in /proc that cannot be "
			     "known before the command runs, and no sandbox hides what it reaches",
			     a->views[pp->view].text, pp->text);
			break;
		}
		/* SECURITY: with no sandbox, a word whose place cannot be known
		 * before running (HOME=$X; cat ~/y, cd "$D" && cat y) may name
		 * any file: not known to be clean (it is still checked as
		 * written, and the other words may still be denied) */
		if (c->unsandboxed && (pp->flags & MOAT_CMD_PATH_UNKNOWN)) {
			rule_id(rule, sizeof(rule), l, "command:path-unknown", NULL);
			vset(out, MOAT_ASK, false, rule,
			     "'%s' names %s, whose place cannot be known before the command runs, "
			     "and no sandbox hides what it reaches",
			     a->views[pp->view].text, pp->text);
		}
		/* a word of unknown parts (a pattern of them) is the hook's:
		 * the sandbox hides whatever they turn out to name */
		if ((pp->flags & MOAT_CMD_PATH_SPAN) && !c->unsandboxed)
			continue;
		/* a command rule that allows the program covers its operands
		 * where a sandbox hides the denied paths; never its
		 * redirections, and where no sandbox runs the command only a
		 * path rule lifts a denied path */
		if (!c->unsandboxed && !(pp->flags & (MOAT_CMD_PATH_READ | MOAT_CMD_PATH_WRITE)) &&
		    pp->view < a->nviews && decided[pp->view] >= 0 &&
		    l->cmd_rules[decided[pp->view]].decision == MOAT_ALLOW)
			continue;
		/* (a glob word may match a denied name without holding its
		 * literal run: it skips the prefilter) */
		bool glob = (pp->flags & MOAT_CMD_PATH_GLOB) != 0;

		if (subj) {
			size_t skip = 0, cl = c->p->cwd_len;

			len = strlen(subj);
			/* a run lies within one component: below a working
			 * directory that holds none, only the rest can hold one */
			if (!l->shell_cwd_hit && cl > 1 && len > cl && subj[cl] == '/' &&
			    memcmp(subj, c->p->cwd, cl) == 0)
				skip = cl;
			if (!glob && !pathfilter_hit(l->shell_paths, subj + skip, len - skip)) {
				if (!c->unsandboxed)
					continue;
				lexical = false;
			}
		} else {
			/* SECURITY: a denied pattern's literal run lies within one
			 * component, so it is in the name or in the directory */
			len = strlen(pp->text);
			if (!glob && !pathfilter_hit(l->shell_paths, pp->text, len)) {
				/* (the working directory itself may hold a denied path) */
				if ((pp->text[0] == '/' || !l->shell_cwd_hit) && !c->unsandboxed)
					continue;
				lexical = false;
			}
			if (moat_path_normalize_posix(pp->text, len, c->p->cwd, norm, sizeof(norm)) < 0)
				continue;
			subj = norm;
			len = strlen(norm);
		}
		/* (a word that failed the prefilter is matched here when the
		 * working directory may hold a denied path) */
		i = lexical || l->shell_cwd_hit
			? word_denied(c, l, moat_policy_home(c->p), subj, len, pp->flags)
			: -1;
		/* SECURITY: ".." after a link is its target's parent for the
		 * kernel (/var/run/../etc/shadow is /etc/shadow), not the
		 * lexical one: with no sandbox, the path the kernel opens */
		if (i < 0 && c->unsandboxed && !(pp->flags & MOAT_CMD_PATH_GLOB) && !pp->abs &&
		    moat_path_has_dotdot(pp->text)) {
			if (!moat_path_physical(c->p->cwd, pp->text, phys, sizeof(phys))) {
				rule_id(rule, sizeof(rule), l, "command:path-unknown", NULL);
				vset(out, MOAT_ASK, false, rule,
				     "'%s' names %s, whose place cannot be resolved before the "
				     "command runs, and no sandbox hides what it reaches",
				     a->views[pp->view].text, pp->text);
				continue;
			}
			if (strcmp(phys, subj)) {
				subj = phys;
				len = strlen(phys);
				i = word_denied(c, l, moat_policy_home(c->p), subj, len, pp->flags);
			}
		}
		/* SECURITY: with no sandbox behind the command, the word is
		 * what the kernel opens: every link on its way (an existing
		 * k -> ~/.kube in `cat k/config`) must pass too */
		/* (no file is named by that pattern: nothing to resolve or walk) */
		if (i < 0 && (pp->flags & MOAT_CMD_PATH_SPAN))
			continue;
		if (i < 0 && c->unsandboxed && ++resolved > WORDS_RESOLVED_MAX) {
			if (resolved == WORDS_RESOLVED_MAX + 1) {
				rule_id(rule, sizeof(rule), l, "command:paths-unchecked", NULL);
				vset(out, MOAT_ASK, false, rule,
				     "the command names more than %d files, too many to resolve "
				     "before it runs",
				     WORDS_RESOLVED_MAX);
			}
		} else if (i < 0 && c->unsandboxed) {
			int e = 0;

			if (!wv && !(wv = malloc(sizeof(*wv)))) {
				vset(out, MOAT_DENY, true, "internal:oom",
				     "out of memory while deciding");
				return;
			}
			wv->c = c;
			wv->l = l;
			wv->home = moat_policy_home(c->p);
			wv->pflags = pp->flags;
			wv->gb = &gb;
			i = resolve_word(wv, subj, &e);
			if (i == -3) {
				rule_id(rule, sizeof(rule), l, "command:paths-unchecked", NULL);
				vset(out, MOAT_ASK, false, rule,
				     "'%s' names %s, whose matches moat cannot all check before the "
				     "command runs (%s)",
				     a->views[pp->view].text, subj,
				     e == E2BIG ? "too many files or directories to expand"
						: strerror(e));
				i = -1;
			} else if (i == -2) {
				rule_id(rule, sizeof(rule), l, "path:unresolvable", NULL);
				vset(out, MOAT_DENY, true, rule, "'%s' names %s, which cannot be resolved: %s",
				     a->views[pp->view].text, subj,
				     e == EXDEV ? "it goes through a link in /proc whose target "
						  "depends on the process that opens it"
						: strerror(e));
				break;
			}
			if (i >= 0) {
				subj = wv->where;
				via = wv->matched ? " (a match of the glob)" : " (through a symbolic link)";
			}
		}
		/* SECURITY: with no sandbox, a program that reads the whole tree
		 * (tar c, cp -r, grep -r) reads every denied file below it */
		if (i < 0 && c->unsandboxed && (pp->flags & MOAT_CMD_PATH_TREE)) {
			/* (git add within the working directory leaves out what
			 * the project's .gitignore names: docs/hooks.md) */
			if ((pp->flags & MOAT_CMD_PATH_OUTSIDE) && project_tree(c, subj))
				continue;
			if (!tw && !(tw = malloc(sizeof(*tw)))) {
				vset(out, MOAT_DENY, true, "internal:oom",
				     "out of memory while deciding");
				break;
			}
			if (!tw_ready) {
				moat_search_budget_init(&tw->pool, MOAT_SEARCH_MAX_MS);
				tw->left = 0;
				for (size_t j = k; j < a->npaths; j++)
					tw->left += (a->paths[j].flags & MOAT_CMD_PATH_TREE) != 0;
				tw_ready = true;
			}
			if (check_tree(c, li, a, pp, subj, tw))
				break;
			continue;
		}
		if (i < 0)
			continue;
		rule_id(rule, sizeof(rule), l, "denied_paths", moat_globset_pattern(l->denied_paths, (size_t)i));
		/* SECURITY: the ASK stands on the sandbox hiding the path; with
		 * no sandbox behind the call the command would read it */
		if (c->unsandboxed && (pp->flags & MOAT_CMD_PATH_SPAN))
			vset(out, MOAT_DENY, true, rule,
			     "'%s' may name %s (each part not known before running as '*'), a "
			     "denied path: the command would %s it, and no sandbox hides it where "
			     "this command runs",
			     a->views[pp->view].text, subj,
			     (pp->flags & MOAT_CMD_PATH_WRITE) ? "write" : "read or change");
		else if (c->unsandboxed)
			vset(out, MOAT_DENY, true, rule,
			     "'%s' names %s, a denied path%s: the command would %s it, and no "
			     "sandbox hides it where this command runs",
			     a->views[pp->view].text, subj, via,
			     (pp->flags & MOAT_CMD_PATH_WRITE) ? "write" : "read or change");
		else
			vset(out, MOAT_ASK, false, rule,
			     "'%s' names %s, a denied path: the command would %s it (the sandbox "
			     "hides it)",
			     a->views[pp->view].text, subj,
			     (pp->flags & MOAT_CMD_PATH_WRITE) ? "write" : "read or change");
		break;
	}
	free(wv);
	free(tw);
}

static void check_command_layer(struct call *c, size_t li, const struct moat_cmd_analysis *a)
{
	const struct layer *l = &c->p->layers[li];
	struct verdict *out = &c->lv[li];
	char rule[160];
	bool all_allowed = a->nviews > 0;
	long first_allow = -1, raw_rule = -1;
	long *decided, decided_buf[32];

	/* the floor first: no rule lifts it */
	for (size_t i = 0; i < a->nfindings; i++) {
		const struct moat_cmd_finding *f = &a->findings[i];

		if (f->verdict != MOAT_FINDING_DENY || !l->hardline)
			continue;
		rule_id(rule, sizeof(rule), l, f->rule, NULL);
		vset(out, MOAT_DENY, true, rule, "%s", f->reason);
		return;
	}
	/* (no allocation for the usual few views) */
	decided = a->nviews < MOAT_ARRAY_SIZE(decided_buf) ? decided_buf
							    : calloc(a->nviews + 1, sizeof(long));
	if (!decided) {
		vset(out, MOAT_DENY, true, "internal:oom", "out of memory while deciding");
		return;
	}
	/* 5. command rules, per program invocation; first match wins */
	for (size_t i = 0; i < a->nviews; i++) {
		long ri = l->ncmd_rules ? first_cmd_rule(l, a->views[i].text) : -1;

		/* SECURITY: a program or script unknown before running is never
		 * allowed by a rule; a deny or ask rule still applies to it. */
		if (ri >= 0 && l->cmd_rules[ri].decision == MOAT_ALLOW && view_unknown(&a->views[i]))
			ri = -1;
		decided[i] = ri;
		if (ri < 0) {
			all_allowed = false;
			continue;
		}
		rule_id(rule, sizeof(rule), l, "command_rules", l->cmd_rules[ri].pattern);
		switch (l->cmd_rules[ri].decision) {
		case MOAT_DENY:
			vset(out, MOAT_DENY, true, rule, "a command rule denies '%s'",
			     a->views[i].text);
			break;
		case MOAT_ASK:
			all_allowed = false;
			vset(out, MOAT_ASK, false, rule, "a command rule asks before '%s'",
			     a->views[i].text);
			break;
		case MOAT_ALLOW:
			if (first_allow < 0)
				first_allow = ri;
			break;
		}
	}
	/* the command as written, as Aar reads it: its first matching rule,
	 * when it denies or asks, holds for the whole command (a comment or a
	 * quoted mention no program invocation shows) */
	if (l->ncmd_rules) {
		long ri = raw_rule = first_cmd_rule_raw(l, c->command, c->command_len);

		if (ri >= 0 && l->cmd_rules[ri].decision != MOAT_ALLOW) {
			bool deny = l->cmd_rules[ri].decision == MOAT_DENY;

			rule_id(rule, sizeof(rule), l, "command_rules", l->cmd_rules[ri].pattern);
			vset(out, deny ? MOAT_DENY : MOAT_ASK, deny, rule,
			     "a command rule %s '%.300s'", deny ? "denies" : "asks before",
			     c->command);
			all_allowed = false;
		}
	}
	/* 6. denied commands, by structure; an explicit rule for the view wins.
	 * Most patterns need a program no view runs: only candidates are tried
	 * (all of them, in order, when there are too many to list). */
	size_t cand[64], ncand = denied_candidates(l, a, cand, MOAT_ARRAY_SIZE(cand));
	bool all = ncand > MOAT_ARRAY_SIZE(cand);

	for (size_t j = 0; j < (all ? l->ndenied_cmds : ncand); j++) {
		size_t vi = 0, k = all ? j : cand[j];

		if (out->set && out->v == MOAT_DENY)
			break; /* nothing after can change the answer */
		if (!moat_cmdpat_match(l->denied_cmds[k], a, &vi))
			continue;
		if (vi < a->nviews && decided[vi] >= 0)
			continue;
		rule_id(rule, sizeof(rule), l, "denied_commands",
			moat_cmdpat_source(l->denied_cmds[k]));
		vset(out, MOAT_DENY, true, rule, "'%s' matches the denied command '%s'",
		     vi < a->nviews ? a->views[vi].text : c->command,
		     moat_cmdpat_source(l->denied_cmds[k]));
	}
	/* the user's entries as Aar reads them: text occurring in a program
	 * invocation without a rule of its own, or in the command as written
	 * unless a command rule allows the command as written (Aar checks its
	 * command rules first, on that text) and every program it runs:
	 * `ps""ql -c "DROP TABLE x"` holds no "psql" for Aar, whose
	 * denied_commands then see it */
	if (l->denied_subs && !(out->set && out->v == MOAT_DENY)) {
		const struct moat_strset *raw = l->denied_subs_raw ? l->denied_subs_raw
								    : l->denied_subs;
		long k = -1;
		size_t vi = a->nviews;

		for (size_t i = 0; i < a->nviews && k < 0; i++) {
			if (decided[i] >= 0)
				continue;
			k = moat_strset_first_in(l->denied_subs, a->views[i].text,
						 strlen(a->views[i].text), MOAT_STRSET_ALL);
			vi = i;
		}
		if (k < 0 && !(all_allowed && first_allow >= 0 && raw_rule >= 0 &&
			       l->cmd_rules[raw_rule].decision == MOAT_ALLOW)) {
			k = moat_strset_first_in(raw, c->command, c->command_len, MOAT_STRSET_ALL);
			vi = a->nviews;
		}
		if (k >= 0) {
			rule_id(rule, sizeof(rule), l, "denied_commands", l->denied_sub_src[k]);
			vset(out, MOAT_DENY, true, rule, "'%.300s' holds the denied command '%s'",
			     vi < a->nviews ? a->views[vi].text : c->command,
			     l->denied_sub_src[k]);
		}
	}
	/* configuration-independent asks: startup-file writes, unknown programs */
	for (size_t i = 0; i < a->nfindings; i++) {
		const struct moat_cmd_finding *f = &a->findings[i];

		/* SECURITY: with no sandbox, a write into startup files
		 * persists outside any confinement: a command rule that
		 * allows the program (tar, cp) does not lift it */
		if (f->verdict == MOAT_FINDING_ASK &&
		    (!(f->flags & MOAT_FINDING_F_UNSANDBOXED) || c->unsandboxed) &&
		    ((f->flags & MOAT_FINDING_F_BESIDE) ||
		     (c->unsandboxed && !strncmp(f->rule, "startup-write:", 14)) ||
		     !(f->view < a->nviews && decided[f->view] >= 0))) {
			rule_id(rule, sizeof(rule), l, f->rule, NULL);
			vset(out, MOAT_ASK, false, rule, "%s", f->reason);
			all_allowed = false;
		}
	}
	for (size_t i = 0; i < a->nviews; i++) {
		const struct moat_cmdview *v = &a->views[i];

		if (decided[i] >= 0 && l->cmd_rules[decided[i]].decision == MOAT_ALLOW)
			continue;
		if (v->flags & MOAT_VIEW_DYNAMIC) {
			rule_id(rule, sizeof(rule), l, "command:dynamic", NULL);
			vset(out, MOAT_ASK, false, rule,
			     "the program '%s' cannot be known before the command runs", v->text);
			all_allowed = false;
		} else if (v->flags & MOAT_VIEW_SHELL_STDIN) {
			rule_id(rule, sizeof(rule), l, "command:shell-stdin", NULL);
			vset(out, MOAT_ASK, false, rule,
			     "'%s' runs a script fed through its input, which cannot be checked "
			     "before it runs",
			     v->text);
			all_allowed = false;
		}
	}
	if (a->npaths) {
		check_command_paths(c, li, a, decided);
		if (out->set && out->v != MOAT_ALLOW)
			all_allowed = false;
	}
	if (decided != decided_buf)
		free(decided);
	if (!out->set && all_allowed && first_allow >= 0) {
		rule_id(rule, sizeof(rule), l, "command_rules", l->cmd_rules[first_allow].pattern);
		vset(out, MOAT_ALLOW, false, rule, "command rules allow every program it runs");
	}
}

static void check_command(struct call *c)
{
	struct moat_cmd_analysis *a = NULL;
	struct moat_cmd_opts opts = {
		.home = c->p->home[0] ? c->p->home : NULL,
		.hardline = true,
		.cwd = c->p->cwd[0] == '/' ? c->p->cwd : NULL,
		.normalized = true, /* moat_policy_new normalised both */
		.home_len = c->p->home_len,
		.cwd_len = c->p->cwd_len,
	};
	struct moat_error e;
	int r;

	moat_error_clear(&e);
	r = moat_cmd_analyze(c->command, c->command_len, &opts, &a, &e);
	if (r < 0) {
		for (size_t li = 0; li < c->p->nlayers; li++) {
			char rule[160];

			rule_id(rule, sizeof(rule), &c->p->layers[li], "command:unparseable", NULL);
			vset(&c->lv[li], MOAT_DENY, true, rule,
			     "the command cannot be parsed as the shell would read it: %s", e.msg);
		}
		return;
	}
	for (size_t li = 0; li < c->p->nlayers; li++)
		if (!(c->lv[li].set && c->lv[li].v == MOAT_DENY))
			check_command_layer(c, li, a);
	moat_cmd_analysis_free(a);
}

/* Steps 1-8 for one layer (paths and command checks were done before). */
static void finish_layer(struct call *c, size_t li)
{
	const struct layer *l = &c->p->layers[li];
	struct verdict *out = &c->lv[li];
	char rule[160];

	if (out->set && (out->v == MOAT_DENY || out->v == MOAT_ALLOW))
		return;
	if (out->set) /* an ASK from the hard steps stands */
		return;
	if (!c->declared) {
		rule_id(rule, sizeof(rule), l, "tool:undeclared", c->tool);
		vset(out, MOAT_ASK, false, rule,
		     "'%s' is not a known tool; declare its effects under \"tools\" to decide "
		     "without asking",
		     c->tool);
		return;
	}
	/* 7. forced approval: the boundary cannot be enforced on the shell */
	if ((c->effects & MOAT_EFFECT_EXECUTE) && l->forced_ask) {
		rule_id(rule, sizeof(rule), l, "sandbox:forced-ask", NULL);
		vset(out, MOAT_ASK, false, rule,
		     "allowed_paths is set but sandbox mode 'local' cannot enforce it on a shell "
		     "command");
		return;
	}
	if ((c->effects & MOAT_EFFECT_EXECUTE) && l->allow_list && c->unsandboxed) {
		rule_id(rule, sizeof(rule), l, "sandbox:forced-ask", NULL);
		vset(out, MOAT_ASK, false, rule,
		     "allowed_paths is set but no sandbox enforces it on a shell command run "
		     "where this call runs");
		return;
	}
	/* 8. approval requirements */
	if ((c->effects & MOAT_EFFECT_WRITE) && l->req_writes) {
		rule_id(rule, sizeof(rule), l, "require_approval_for_writes", NULL);
		vset(out, MOAT_ASK, false, rule, "writes need approval");
		return;
	}
	if ((c->effects & MOAT_EFFECT_EXECUTE) && l->req_execute) {
		rule_id(rule, sizeof(rule), l, "require_approval_for_execute", NULL);
		vset(out, MOAT_ASK, false, rule, "shell commands need approval");
		return;
	}
	/* 9. */
	vset_lit(out, MOAT_ALLOW, false, "default", "no rule restricts this call");
}

/* Only ASCII bytes (then valid UTF-8: no NUL within a C string) */
static bool ascii_name(const char *s, size_t n)
{
	unsigned char any = 0;

	for (size_t i = 0; i < n; i++)
		any |= (unsigned char)s[i];
	return any < 0x80;
}

/* json_object_get, without hashing the name for the usual one or two
 * arguments (names in an object are unique: the strict parser refuses
 * duplicates, and jansson keeps one value per name) */
static json_t *arg_get(json_t *args, const char *name)
{
	if (json_object_size(args) > 4)
		return json_object_get(args, name);
	for (void *it = json_object_iter(args); it; it = json_object_iter_next(args, it))
		if (!strcmp(json_object_iter_key(it), name))
			return json_object_iter_value(it);
	return NULL;
}

static void decide_fail(struct moat_decision *ret, const char *rule, const char *reason)
{
	ret->verdict = MOAT_DENY;
	ret->hard = true;
	moat_strlcpy(ret->rule, rule, sizeof(ret->rule));
	moat_strlcpy(ret->reason, reason, sizeof(ret->reason));
}

int moat_policy_check_args(const struct moat_policy *p, const char *tool, json_t *args,
			   struct moat_decision *ret, struct moat_error *err)
{
	return moat_policy_check_args_ex(p, tool, args, 0, ret, err);
}

int moat_policy_check_args_ex(const struct moat_policy *p, const char *tool, json_t *args,
			      unsigned flags, struct moat_decision *ret, struct moat_error *err)
{
	return moat_policy_check_args_notes(p, tool, args, flags, ret, NULL, err);
}

int moat_policy_check_args_notes(const struct moat_policy *p, const char *tool, json_t *args,
				 unsigned flags, struct moat_decision *ret,
				 struct moat_policy_notes *notes, struct moat_error *err)
{
	struct call c;
	const struct tool_decl *d;
	const char *command_arg = NULL, *url_arg = NULL;
	size_t best = 0, tool_len;

	/* (field by field: the verdicts' text buffers are written before
	 * they are read, and zeroing them is a good part of a decision) */
	c.p = p;
	c.tool = tool;
	c.effects = 0;
	c.declared = false;
	c.access = 0;
	c.command = NULL;
	c.command_len = 0;
	c.url = NULL;
	c.builtin_file_tool = false;
	c.unsandboxed = (flags & MOAT_CHECK_UNSANDBOXED) != 0;
	c.decl = NULL;
	c.notes = notes;
	if (notes)
		notes->nexempt = 0;
	for (size_t li = 0; li < MOAT_ARRAY_SIZE(c.lv); li++) {
		c.lv[li].v = MOAT_ALLOW;
		c.lv[li].hard = false;
		c.lv[li].set = false;
		c.lv[li].rule[0] = '\0';
		c.lv[li].reason[0] = '\0';
		c.lv[li].rule_len = c.lv[li].reason_len = 0;
		c.path_done[li] = false;
	}
	tool_len = tool ? strlen(tool) : 0;
	if (!tool_len || tool_len > 128 ||
	    (!ascii_name(tool, tool_len) && !moat_utf8_valid(tool, tool_len))) {
		moat_error_set(err, "the tool name is empty, too long or not UTF-8");
		decide_fail(ret, "input:invalid", "the tool name is empty, too long or not UTF-8");
		return -EINVAL;
	}
	if (!json_is_object(args)) {
		moat_error_set(err, "tool arguments must be a JSON object");
		decide_fail(ret, "input:invalid", "tool arguments must be a JSON object");
		return -EINVAL;
	}
	d = find_decl(p, tool);
	c.decl = d;
	if (d) {
		c.effects = d->effects;
		c.declared = true;
		command_arg = d->command_arg;
		url_arg = d->url_arg;
	} else {
		long i = builtin_index(tool, tool_len);

		if (i >= 0) {
			c.effects = builtin_tools[i].effects;
			c.declared = true;
			command_arg = builtin_tools[i].command_arg;
			url_arg = builtin_tools[i].url_arg;
			c.builtin_file_tool = (builtin_tools[i].effects &
					       (MOAT_EFFECT_READ | MOAT_EFFECT_WRITE)) != 0;
		}
	}
	/* An undeclared tool is checked as if it wrote: its effects are unknown. */
	c.access = (c.effects & MOAT_EFFECT_WRITE) || !c.declared ? ACCESS_WRITE : ACCESS_READ;
	if (command_arg) {
		json_t *v = arg_get(args, command_arg);

		if (!json_is_string(v)) {
			moat_error_set(err, "argument '%s' must be a string", command_arg);
			decide_fail(ret, "input:invalid", err ? err->msg : "bad command argument");
			return -EINVAL;
		}
		c.command = json_string_value(v);
		c.command_len = json_string_length(v);
	}
	if (url_arg) {
		json_t *v = arg_get(args, url_arg);

		if (!json_is_string(v)) {
			moat_error_set(err, "argument '%s' must be a string URL", url_arg);
			decide_fail(ret, "input:invalid", err ? err->msg : "bad url argument");
			return -EINVAL;
		}
		c.url = json_string_value(v);
	}

	/* 1. read-only mode */
	for (size_t li = 0; li < p->nlayers; li++) {
		const struct layer *l = &p->layers[li];
		char rule[160];

		if (l->read_only &&
		    ((c.effects & (MOAT_EFFECT_WRITE | MOAT_EFFECT_EXECUTE)) || !c.declared)) {
			rule_id(rule, sizeof(rule), l, "read_only", NULL);
			vset(&c.lv[li], MOAT_DENY, true, rule,
			     "read-only mode blocks tools that write or execute");
		}
	}
	/* 2-4. every path-like argument, and every symlink on its way */
	if (check_paths(&c, args, err) < 0) {
		decide_fail(ret, "input:invalid", err ? err->msg : "bad path argument");
		return -EINVAL;
	}
	for (size_t li = 0; li < p->nlayers; li++)
		if (c.url && !(c.lv[li].set && c.lv[li].v == MOAT_DENY))
			check_url(&c, li);
	/* 5-6. commands */
	if (c.command) {
		bool need = false;

		for (size_t li = 0; li < p->nlayers; li++)
			need |= !(c.lv[li].set && c.lv[li].v == MOAT_DENY);
		if (need)
			check_command(&c);
	}
	/* 7-9. */
	for (size_t li = 0; li < p->nlayers; li++)
		finish_layer(&c, li);

	for (size_t li = 1; li < p->nlayers; li++)
		if (strictness(c.lv[li].v) > strictness(c.lv[best].v))
			best = li;
	verdict_out(&c.lv[best], ret);
	return 0;
}

int moat_policy_check(const struct moat_policy *p, const char *tool, const char *args_json,
		      size_t args_len, struct moat_decision *ret, struct moat_error *err)
{
	json_t *args = NULL;
	int r;

	r = moat_json_parse_object(args_json, args_len, "arguments", MOAT_ARGS_MAX_BYTES, &args,
				   err);
	if (r < 0) {
		char msg[512];

		snprintf(msg, sizeof(msg), "invalid tool arguments: %.400s", err ? err->msg : "");
		decide_fail(ret, "input:invalid", msg);
		return r;
	}
	r = moat_policy_check_args(p, tool, args, ret, err);
	json_decref(args);
	return r;
}

/* ---- for the file tools (src/tools): the check after open ------------- */

/* The decision for one absolute path as TOOL's path argument, without
 * resolving symlinks: the caller passes the real path of what it opened
 * (readlink of /proc/self/fd/N), so there is nothing left to resolve.
 * Steps 1 (read-only mode), 2-4 (paths) and 7-9 of each layer. */
int moat_policy_check_path(const struct moat_policy *p, const char *tool, const char *path,
			   struct moat_decision *ret)
{
	struct call c;
	char norm[MOAT_PATH_MAX];
	size_t best = 0;

	/* SECURITY: a path the normaliser refuses (not absolute, invalid
	 * UTF-8, too long) is denied, never waved through */
	if (!p || !tool || !path || path[0] != '/' ||
	    moat_path_normalize_posix(path, strlen(path), "/", norm, sizeof(norm)) < 0) {
		decide_fail(ret, "path:unresolvable", "the path is not a usable absolute path");
		return -EINVAL;
	}
	memset(&c, 0, sizeof(c));
	c.p = p;
	c.tool = tool;
	c.effects = moat_policy_tool_effects(p, tool);
	c.declared = c.effects != 0 || find_decl(p, tool) != NULL;
	c.access = (c.effects & MOAT_EFFECT_WRITE) || !c.declared ? ACCESS_WRITE : ACCESS_READ;
	for (size_t li = 0; li < p->nlayers; li++) {
		const struct layer *l = &p->layers[li];
		char rule[160];

		if (l->read_only &&
		    ((c.effects & (MOAT_EFFECT_WRITE | MOAT_EFFECT_EXECUTE)) || !c.declared)) {
			rule_id(rule, sizeof(rule), l, "read_only", NULL);
			vset(&c.lv[li], MOAT_DENY, true, rule,
			     "read-only mode blocks tools that write or execute");
		}
		check_path_layer(&c, li, norm, false);
		finish_layer(&c, li);
	}
	for (size_t li = 1; li < p->nlayers; li++)
		if (strictness(c.lv[li].v) > strictness(c.lv[best].v))
			best = li;
	ret->verdict = c.lv[best].v;
	ret->hard = c.lv[best].hard;
	moat_strlcpy(ret->rule, c.lv[best].rule, sizeof(ret->rule));
	moat_strlcpy(ret->reason, c.lv[best].reason, sizeof(ret->reason));
	return 0;
}

/* The literal directory part of one absolute path glob: up to the last '/'
 * before the first glob character or escape ("/ws/src/a*.c" -> "/ws/src",
 * "/ws/a.txt" -> "/ws", "**\/x" -> ""). An escape ends it early: a shorter
 * root is still a correct one, only a looser first fence. */
static size_t glob_literal_dir(const char *g)
{
	size_t slash = 0, i;

	for (i = 0; g[i] && !strchr("*?[]{}\\", g[i]); i++)
		if (g[i] == '/')
			slash = i;
	return slash;
}

const char *moat_policy_home(const struct moat_policy *p)
{
	return p ? p->home : "";
}

size_t moat_policy_roots(const struct moat_policy *p, const char **out, size_t *out_len,
			 size_t max)
{
	size_t n = 0;

	for (size_t li = 0; p && li < p->nlayers; li++) {
		const struct moat_globset *set = p->layers[li].allowed_paths;
		size_t count = set ? moat_globset_count(set) : 0;

		for (size_t i = 0; i < count; i++, n++) {
			const char *g = moat_globset_pattern(set, i);
			size_t len = g[0] == '/' ? glob_literal_dir(g) : 0;

			if (n >= max)
				continue;
			out[n] = len ? g : "/";
			out_len[n] = len ? len : 1;
		}
	}
	return n;
}
