/* The plan: profiles and their layering (seed 003/004), flag parsing, and
 * plan construction from fake kernel features (no privilege, no kernel:
 * this binary links only the pure core). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan.h"
#include "tap.h"

static const char *const denied[] = {"/etc/shadow", "/etc/passwd",	    "**/.env",	 "**/*.pem",
				     "**/.ssh/**",  "**/.config/gcloud/**", "~/.aws/**", NULL};

static struct moat_plan *build(const char *profile, const struct moat_kfeatures *kf,
			       const struct moat_profile *over, int *ret_r)
{
	struct moat_profile p;
	struct moat_plan_context ctx;
	struct moat_plan *plan = NULL;
	struct moat_error err;
	/* the plan borrows argv: it must outlive it */
	static char *argv[] = {"/bin/true", NULL};
	int r;

	moat_error_clear(&err);
	r = moat_profile_builtin(profile, &p);
	if (r == 0 && over)
		r = moat_profile_layer(&p, over, &err);
	if (r == 0) {
		memset(&ctx, 0, sizeof(ctx));
		ctx.workspace = "/home/u/proj";
		ctx.cwd = "/home/u/proj/src";
		ctx.home = "/home/u";
		ctx.denied = denied;
		ctx.argv = argv;
		r = moat_plan_build(&p, &ctx, kf, &plan, &err);
	}
	moat_profile_release(&p);
	if (ret_r)
		*ret_r = r;
	return plan;
}

static const struct moat_fs_rule *rule(const struct moat_plan *p, const char *path)
{
	for (size_t i = 0; i < p->nfs; i++)
		if (!strcmp(p->fs[i].path, path))
			return &p->fs[i];
	return NULL;
}

static const struct moat_mask *mask(const struct moat_plan *p, const char *pattern)
{
	for (size_t i = 0; i < p->nmasks; i++)
		if (!strcmp(p->masks[i].pattern, pattern))
			return &p->masks[i];
	return NULL;
}

static bool gap(const struct moat_plan *p, enum moat_feature f)
{
	return p->feat[f].requested && !p->feat[f].enforced;
}

static void test_normpath(void)
{
	static const struct {
		const char *in, *out;
		int r;
	} t[] = {
	    {"/", "/", 0},	     {"//a//b/", "/a/b", 0},
	    {"/a/./b/.", "/a/b", 0}, {"/a/b/../c", "/a/c", 0},
	    {"/../../x", "/x", 0},   {"/a/..", "/", 0},
	    {"/a/b/..", "/a", 0},    {"/...", "/...", 0},
	    {"/a/..b", "/a/..b", 0}, {"relative", NULL, -EINVAL},
	    {"", NULL, -EINVAL},
	};
	char out[64];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r = moat_plan_normpath(t[i].in, out, sizeof(out));

		CHECKF(r == t[i].r, "normpath(%s) = %d", t[i].in, r);
		if (r == 0)
			CHECK_STR(out, t[i].out);
	}
	/* boundary: the output buffer */
	CHECK_INT(moat_plan_normpath("/abc", out, 5), 0);
	CHECK_INT(moat_plan_normpath("/abcd", out, 5), -ENAMETOOLONG);
}

static void test_builtin(void)
{
	struct moat_profile p;

	for (size_t i = 0; moat_profile_builtin_names[i]; i++) {
		CHECK_INT(moat_profile_builtin(moat_profile_builtin_names[i], &p), 0);
		CHECK_STR(p.name, moat_profile_builtin_names[i]);
		CHECK(p.mem_mb == 2048 && p.pids == 512 && p.fsize_mb == 4096);
		CHECK(p.fallback == MOAT_FALLBACK_DENY);
		moat_profile_release(&p);
	}
	CHECK_INT(moat_profile_builtin("workspace-writ", &p), -ENOENT);
	CHECK_INT(moat_profile_builtin("", &p), -ENOENT);
	CHECK_INT(moat_profile_builtin(NULL, &p), 0);
	CHECK_STR(p.name, "workspace-write");
	CHECK(p.net == MOAT_NET_ALLOW && p.workspace == MOAT_WS_RW); /* seed 002 */
	CHECK(p.protect.n > 5);
	moat_profile_release(&p);
	CHECK_INT(moat_profile_builtin("readonly", &p), 0);
	CHECK(p.workspace == MOAT_WS_RO && p.net == MOAT_NET_DENY);
	CHECK(p.immutable & MOAT_DIM_NET);
	moat_profile_release(&p);
	CHECK_INT(moat_profile_builtin("workspace-write-no-network", &p), 0);
	CHECK(p.workspace == MOAT_WS_RW && p.net == MOAT_NET_DENY && (p.immutable & MOAT_DIM_NET));
	moat_profile_release(&p);
}

static void test_layering(void)
{
	struct moat_profile base, over;
	struct moat_error err;

	/* seed 004: an immutable network cannot be loosened ... */
	moat_profile_builtin("workspace-write-no-network", &base);
	moat_profile_init(&over, "flags");
	CHECK_INT(moat_parse_net("allow", &over, &err), 0);
	CHECK_INT(moat_profile_layer(&base, &over, &err), -EPERM);
	CHECK(strstr(err.msg, "immutable") != NULL);
	CHECK(base.net == MOAT_NET_DENY); /* a refused layer changes nothing */
	CHECK_INT(moat_parse_net("443", &over, &err), 0);
	CHECK_INT(moat_profile_layer(&base, &over, &err), -EPERM);
	/* ... but may be restated */
	CHECK_INT(moat_parse_net("deny", &over, &err), 0);
	CHECK_INT(moat_profile_layer(&base, &over, &err), 0);
	moat_profile_release(&over);
	moat_profile_release(&base);

	/* a mutable one follows the layer (seed 003: set replaces) */
	moat_profile_builtin("workspace-write", &base);
	moat_profile_init(&over, "flags");
	moat_parse_net("deny", &over, &err);
	CHECK_INT(moat_profile_layer(&base, &over, &err), 0);
	CHECK(base.net == MOAT_NET_DENY);
	/* unset fields inherit */
	CHECK(base.mem_mb == 2048 && base.workspace == MOAT_WS_RW);
	moat_profile_release(&over);

	/* lists extend; replace replaces */
	moat_profile_init(&over, "flags");
	moat_strv_add(&over.protect, ".github/workflows");
	over.set |= MOAT_PF_PROTECT;
	size_t before = base.protect.n;
	CHECK_INT(moat_profile_layer(&base, &over, &err), 0);
	CHECK_INT(base.protect.n, before + 1);
	over.protect.replace = true;
	CHECK_INT(moat_profile_layer(&base, &over, &err), 0);
	CHECK_INT(base.protect.n, 1);
	moat_profile_release(&over);
	moat_profile_release(&base);

	/* readonly: no rw paths, no wider workspace; masks still allowed */
	moat_profile_builtin("readonly", &base);
	moat_profile_init(&over, "flags");
	over.home_cow = false;
	over.set |= MOAT_PF_HOME;
	CHECK_INT(moat_profile_layer(&base, &over, &err), 0); /* ro home: tighter */
	over.home_cow = true;
	CHECK_INT(moat_profile_layer(&base, &over, &err), -EPERM);
	moat_profile_release(&over);
	moat_profile_init(&over, "flags");
	moat_strv_add(&over.rw, "/data");
	over.set |= MOAT_PF_RW;
	CHECK_INT(moat_profile_layer(&base, &over, &err), -EPERM);
	CHECK_INT((int)base.rw.n, 0);
	moat_profile_release(&over);
	moat_profile_init(&over, "flags");
	over.workspace = MOAT_WS_RW;
	over.set |= MOAT_PF_WORKSPACE;
	CHECK_INT(moat_profile_layer(&base, &over, &err), -EPERM);
	moat_profile_release(&over);
	moat_profile_init(&over, "flags");
	moat_strv_add(&over.mask, "~/secret");
	over.set |= MOAT_PF_MASK;
	CHECK_INT(moat_profile_layer(&base, &over, &err), 0);
	over.mask.replace = true; /* replacing the masks would loosen */
	CHECK_INT(moat_profile_layer(&base, &over, &err), -EPERM);
	moat_profile_release(&over);
	moat_profile_release(&base);

	/* an immutable process dimension only tightens */
	moat_profile_builtin("workspace-write", &base);
	base.immutable |= MOAT_DIM_PROC | MOAT_DIM_ENV;
	moat_profile_init(&over, "flags");
	over.mem_mb = 4096;
	over.set |= MOAT_PF_MEM;
	CHECK_INT(moat_profile_layer(&base, &over, &err), -EPERM);
	over.mem_mb = 0; /* "no limit" loosens */
	CHECK_INT(moat_profile_layer(&base, &over, &err), -EPERM);
	over.mem_mb = 1024;
	CHECK_INT(moat_profile_layer(&base, &over, &err), 0);
	CHECK(base.mem_mb == 1024);
	moat_profile_release(&over);
	moat_profile_init(&over, "flags");
	over.env = MOAT_ENV_FULL;
	over.set |= MOAT_PF_ENV;
	CHECK_INT(moat_profile_layer(&base, &over, &err), -EPERM);
	over.env = MOAT_ENV_NONE;
	CHECK_INT(moat_profile_layer(&base, &over, &err), 0);
	moat_profile_release(&over);
	/* a layer adds immutability, never removes it */
	moat_profile_init(&over, "flags");
	over.immutable = MOAT_DIM_NET;
	CHECK_INT(moat_profile_layer(&base, &over, &err), 0);
	CHECK(base.immutable & MOAT_DIM_NET && base.immutable & MOAT_DIM_PROC);
	moat_profile_release(&over);
	moat_profile_release(&base);

	/* boundary: list size */
	moat_profile_init(&over, "flags");
	for (int i = 0; i < MOAT_PLAN_MAX_PATHS; i++) {
		char s[32];

		snprintf(s, sizeof(s), "/p%d", i);
		if (moat_strv_add(&over.ro, s) != 0)
			break;
	}
	CHECK_INT((int)over.ro.n, MOAT_PLAN_MAX_PATHS);
	CHECK_INT(moat_strv_add(&over.ro, "/one-more"), -E2BIG);
	CHECK_INT(moat_strv_add(&over.ro, "/p0"), 0); /* a duplicate is not new */
	moat_profile_release(&over);
}

/* moat_strv_add is a set whatever way its entries came in */
static void test_strv_set(void)
{
	struct moat_strv l = {.v = NULL};
	char **hand = malloc(2 * sizeof(*hand));

	CHECK_INT(moat_strv_add(&l, "a"), 0);
	CHECK_INT(moat_strv_add(&l, "b"), 0);
	CHECK_INT(moat_strv_add(&l, "a"), 0);
	CHECK_INT((int)l.n, 2);
	for (int i = 0; i < 300; i++) { /* growth keeps every entry */
		char s[16];

		snprintf(s, sizeof(s), "n%d", i % 150);
		CHECK_INT(moat_strv_add(&l, s), 0);
	}
	CHECK_INT((int)l.n, 152);
	CHECK_STR(l.v[0], "a");
	CHECK_STR(l.v[151], "n149");
	moat_strv_release(&l);
	CHECK(!l.v && !l.n && !l.h && !l.hn && !l.cap);
	/* entries put in without moat_strv_add are still compared */
	hand[0] = strdup("x");
	hand[1] = strdup("y");
	l.v = hand;
	l.n = 2;
	CHECK_INT(moat_strv_add(&l, "y"), 0);
	CHECK_INT((int)l.n, 2);
	CHECK_INT(moat_strv_add(&l, "z"), 0);
	CHECK_INT((int)l.n, 3);
	CHECK_STR(l.v[2], "z");
	moat_strv_release(&l);
}

static void test_parse(void)
{
	static const struct {
		const char *s;
		int r;
		enum moat_net_mode m;
		size_t n;
	} t[] = {
	    {"deny", 0, MOAT_NET_DENY, 0},
	    {"none", 0, MOAT_NET_DENY, 0},
	    {"allow", 0, MOAT_NET_ALLOW, 0},
	    {"443", 0, MOAT_NET_PORTS, 1},
	    {"80,443", 0, MOAT_NET_PORTS, 2},
	    {"1,65535", 0, MOAT_NET_PORTS, 2},
	    {"0", -EINVAL, 0, 0},
	    {"65536", -EINVAL, 0, 0},
	    {"80,", -EINVAL, 0, 0},
	    {",80", -EINVAL, 0, 0},
	    {"80,,443", -EINVAL, 0, 0},
	    {"", -EINVAL, 0, 0},
	    {"abc", -EINVAL, 0, 0},
	    {"-1", -EINVAL, 0, 0},
	    {"+80", -EINVAL, 0, 0},
	    {"1234567", -EINVAL, 0, 0},
	    {"Allow", -EINVAL, 0, 0},
	};
	struct moat_profile p;
	struct moat_error err;
	char buf[1024];
	enum moat_env_mode em;
	enum moat_fallback fb;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r;

		moat_profile_init(&p, "x");
		r = moat_parse_net(t[i].s, &p, &err);
		CHECKF(r == t[i].r, "--net %s -> %d (got %d)", t[i].s, t[i].r, r);
		if (r == 0)
			CHECKF(p.net == t[i].m && p.nports == t[i].n && (p.set & MOAT_PF_NET),
			       "--net %s mode/ports", t[i].s);
	}
	/* boundary: the port count */
	buf[0] = '\0';
	for (int i = 1; i <= MOAT_PLAN_MAX_PORTS; i++) {
		size_t l = strlen(buf);

		snprintf(buf + l, sizeof(buf) - l, "%s%d", i > 1 ? "," : "", i);
	}
	moat_profile_init(&p, "x");
	CHECK_INT(moat_parse_net(buf, &p, &err), 0);
	CHECK_INT((int)p.nports, MOAT_PLAN_MAX_PORTS);
	{
		size_t l = strlen(buf);

		snprintf(buf + l, sizeof(buf) - l, ",999");
	}
	CHECK_INT(moat_parse_net(buf, &p, &err), -E2BIG);

	CHECK(moat_parse_env_mode("none", &em) == 0 && em == MOAT_ENV_NONE);
	CHECK(moat_parse_env_mode("restricted", &em) == 0 && em == MOAT_ENV_RESTRICTED);
	CHECK(moat_parse_env_mode("full", &em) == 0 && em == MOAT_ENV_FULL);
	CHECK(moat_parse_env_mode("FULL", &em) == -EINVAL);
	CHECK(moat_parse_fallback("deny", &fb) == 0 && fb == MOAT_FALLBACK_DENY);
	CHECK(moat_parse_fallback("ask", &fb) == 0 && fb == MOAT_FALLBACK_ASK);
	CHECK(moat_parse_fallback("warn", &fb) == 0 && fb == MOAT_FALLBACK_WARN);
	CHECK(moat_parse_fallback("", &fb) == -EINVAL);
}

static void test_env(void)
{
	static const struct {
		const char *name, *value;
		bool secret;
	} t[] = {
	    {"OPENAI_API_KEY", "x", true},
	    {"ANTHROPIC_API_KEY", "x", true},
	    {"GITHUB_TOKEN", "x", true},
	    {"GH_TOKEN", "x", true},
	    {"AWS_SECRET_ACCESS_KEY", "x", true},
	    {"AWS_SESSION_TOKEN", "x", true},
	    {"AWS_ACCESS_KEY_ID", "x", true},
	    {"DB_PASSWORD", "x", true},
	    {"npm_config__authToken", "x", true},
	    {"STRIPE_KEY", "x", true},
	    {"SENTRY_DSN", "x", true},
	    {"MY_SECRET", "x", true},
	    {"client_secret", "x", true},
	    {"HOME", "/home/u", false},
	    {"PATH", "/usr/bin:/bin", false},
	    {"LANG", "C.UTF-8", false},
	    {"KEYBOARD", "us", false},
	    {"TERM", "xterm", false},
	    /* by value */
	    {"SOMETHING", "ghp_0123456789abcdefghijABCDEFGHIJ", true},
	    {"X", "sk-proj-0123456789abcdefghij0123", true},
	    {"X", "AKIAIOSFODNN7EXAMPLE", true},
	    {"X", "xoxb-1234567890-abcdef", true},
	    {"DATABASE_URL", "postgres://user:hunter2@db:5432/x", true},
	    {"URL", "https://example.com/a@b", false},
	    {"X", "-----BEGIN OPENSSH PRIVATE KEY-----", true},
	    {"X", "sk-short", false},
	    /* the shapes are the redactor's (redact.c): each one it hides
	     * is scrubbed from the environment too, anywhere a word starts */
	    {"X", "glpat-abcdefgh12345678", true},
	    {"X", "AIzaSyA1234567890abcdefghijklmnopq", true},
	    {"X", "ghr_abcdefghijklmnopqrstuv", true},
	    {"X", "pypi-AgEIcHlwaS5vcmcCJGE2YjQ4YjY0LWQ0ZjYtNGY5Zi1hZjEzLWQ3", true},
	    {"X", "sk_live_abcdefghijklmnop1234", true},
	    {"HEADER", "Bearer ghp_0123456789abcdefghijABCDEFGHIJ", true},
	    {"X", "xghp_0123456789abcdefghijABCDEFGHIJ", false},
	    {"X", "glpat-short", false},
	    /* read loosely: any body of letters, digits, '_' and '-' */
	    {"TERM", "sk-proj-abcdefghijklmnopqrstuvwxyz", true},
	    {"X", "ghp_abc-def_ghi-jkl_mno-pqr", true},
	    {"X", "hf_abcdefghij0123456789abcdefghij", true},
	    {"X", "AKIAIOSFODNN7EXAMPLEX_y", true},
	    {"X", "xoxb-123_456-789", true},
	    {"X", "see-sk-proj-abcdefghijklmnopqrstuvwxyz", true},
	    {"EDITOR", "vim", false},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECKF(moat_env_is_secret(t[i].name, t[i].value) == t[i].secret,
		       "secret(%s=%s) = %d", t[i].name, t[i].value, t[i].secret);
	/* a long value of word starts is read once (not a scan from each) */
	{
		size_t n = 3 * 43000;
		char *v = malloc(n + 1);

		CHECK(v != NULL);
		for (size_t i = 0; v && i < n; i += 3)
			memcpy(v + i, "xo-", 3);
		if (v) {
			v[n] = '\0';
			CHECK(!moat_env_is_secret("TERM", v));
			memcpy(v + n - 24, "ghp_0123456789abcdefghij", 24);
			CHECK(moat_env_is_secret("TERM", v));
		}
		free(v);
	}
	CHECK(moat_env_is_safe("PATH") && moat_env_is_safe("TZ") && moat_env_is_safe("LC_ALL"));
	CHECK(!moat_env_is_safe("LD_PRELOAD") && !moat_env_is_safe("SSH_AUTH_SOCK"));
}

static void test_plan_full(void)
{
	struct moat_kfeatures kf;
	struct moat_plan *p;
	const struct moat_fs_rule *r;
	int rc;

	moat_kfeatures_full(&kf);
	p = build("workspace-write-no-network", &kf, NULL, &rc);
	CHECK_INT(rc, 0);
	if (!p)
		return;
	CHECK(p->userns && p->mntns && p->pidns && p->netns && p->ipcns);
	CHECK(p->landlock && p->ll.abi == 7);
	CHECK(p->ll_net_handled == 0); /* its own network namespace: a private loopback to serve on */
	CHECK(p->ll_scoped == (MOAT_LL_SCOPE_ABSTRACT_UNIX_SOCKET | MOAT_LL_SCOPE_SIGNAL));
	CHECK(p->seccomp && !p->seccomp_no_inet);
	CHECK(p->private_tmp && p->hide_run && p->fresh_proc && !p->scratch_tmp);
	CHECK(p->home_cow && p->private_pts);
	CHECK_INT((int)moat_plan_gaps(p, NULL, 0), 0);
	r = rule(p, "/");
	CHECK(r && r->access == (MOAT_FS_READ | MOAT_FS_EXEC));
	r = rule(p, "/home/u/proj");
	CHECK(r && (r->access & MOAT_FS_WRITE));
	r = rule(p, "/tmp");
	CHECK(r && (r->access & MOAT_FS_WRITE));
	CHECK(rule(p, "/etc") == NULL); /* nothing else writable */
	for (size_t i = 0; i < p->nfs; i++)
		if (p->fs[i].access & MOAT_FS_WRITE)
			CHECKF(!strcmp(p->fs[i].path, "/home/u/proj") ||
				   !strcmp(p->fs[i].path, "/tmp") ||
				   !strcmp(p->fs[i].path, "/dev/shm"),
			       "writable: %s", p->fs[i].path);
	/* masks: "**" patterns in the workspace (scan) and at home */
	CHECK(mask(p, "**/.env") && mask(p, "**/.env")->kind == MOAT_MASK_WORKSPACE_NAME);
	CHECK(mask(p, "/home/u/.env") && mask(p, "/home/u/.env")->kind == MOAT_MASK_PATH);
	CHECK(mask(p, "/home/u/*.pem") && mask(p, "/home/u/*.pem")->kind == MOAT_MASK_GLOB);
	CHECK(mask(p, "/home/u/.ssh") != NULL);
	CHECK(mask(p, "/home/u/.config/gcloud") != NULL);
	CHECK(mask(p, "/home/u/.aws") != NULL);
	CHECK(mask(p, "/etc/shadow") != NULL);
	/* libc needs these: never masked, and said so */
	CHECK(mask(p, "/etc/passwd") == NULL);
	CHECK(p->mask_exempt.n == 1 && !strcmp(p->mask_exempt.v[0], "/etc/passwd"));
	CHECK(p->protect.n > 5);
	CHECK(p->mem_mech == MOAT_LIMIT_RLIMIT && p->mem_bytes == 2048ULL << 20);
	CHECK(p->pids_mech == MOAT_LIMIT_PIDNS && p->pids == 512);
	CHECK(p->env == MOAT_ENV_RESTRICTED);
	CHECK_STR(p->cwd, "/home/u/proj/src");
	{
		/* the JSON is valid and says what it should */
		struct moat_buf b = MOAT_BUF_INIT;
		json_error_t je;
		json_t *j;

		CHECK_INT(moat_plan_to_json(p, &b), 0);
		j = json_loads(b.data, 0, &je);
		CHECKF(j != NULL, "plan json parses (%s line %d)", je.text, je.line);
		if (j) {
			CHECK_STR(json_string_value(json_object_get(j, "profile")),
				  "workspace-write-no-network");
			CHECK_STR(json_string_value(
				      json_object_get(json_object_get(j, "network"), "mode")),
				  "deny");
			CHECK(json_is_true(json_object_get(
			    json_object_get(json_object_get(j, "features"), "network"),
			    "enforced")));
			CHECK(
			    json_is_true(json_object_get(json_object_get(j, "namespaces"), "net")));
			json_decref(j);
		}
		moat_buf_release(&b);
	}
	moat_plan_free(p);

	/* the default profile: network allowed, no netns, no landlock tcp */
	p = build(NULL, &kf, NULL, &rc);
	CHECK(p && !p->netns && p->ll_net_handled == 0 && p->net == MOAT_NET_ALLOW);
	moat_plan_free(p);

	/* readonly: nothing writable but the private /tmp; no protected mounts needed */
	p = build("readonly", &kf, NULL, &rc);
	CHECK(p && p->ws_access == MOAT_WS_RO && p->protect.n == 0);
	if (p)
		for (size_t i = 0; i < p->nfs; i++)
			if (p->fs[i].access & MOAT_FS_WRITE)
				CHECKF(!strcmp(p->fs[i].path, "/tmp") ||
					   !strcmp(p->fs[i].path, "/dev/shm"),
				       "readonly writable: %s", p->fs[i].path);
	moat_plan_free(p);

	/* ports: landlock connect rules */
	{
		struct moat_profile o;
		struct moat_error err;

		moat_profile_init(&o, "flags");
		moat_parse_net("443,80", &o, &err);
		p = build("workspace-write", &kf, &o, &rc);
		CHECK(p && p->net == MOAT_NET_PORTS && p->nports == 2 && !p->netns);
		CHECK(p && (p->ll_net_handled & MOAT_LL_NET_CONNECT_TCP));
		CHECK(p && !gap(p, MOAT_FEAT_NETWORK));
		moat_plan_free(p);
		moat_profile_release(&o);
	}
}

static void test_plan_degraded(void)
{
	struct moat_kfeatures kf;
	struct moat_plan *p;
	char names[256];
	int rc;

	/* no user namespaces: Landlock and seccomp still confine; the rest are gaps */
	moat_kfeatures_full(&kf);
	kf.userns = false;
	snprintf(kf.userns_why, sizeof(kf.userns_why), "faked");
	p = build("workspace-write-no-network", &kf, NULL, &rc);
	CHECK(p != NULL);
	if (p) {
		CHECK(!p->mntns && !p->pidns && !p->netns);
		CHECK(p->seccomp_no_inet); /* network deny without a netns */
		CHECK(!gap(p, MOAT_FEAT_NETWORK) && !gap(p, MOAT_FEAT_FS_WRITE));
		/* secrets: Landlock carves its read rules around them */
		CHECK(!gap(p, MOAT_FEAT_SECRETS) && gap(p, MOAT_FEAT_PRIVATE_TMP));
		CHECK(strstr(p->feat[MOAT_FEAT_SECRETS].mechanism, "landlock") != NULL);
		/* host unix sockets: no unix sockets at all with the network denied */
		CHECK(gap(p, MOAT_FEAT_PIDNS) && !gap(p, MOAT_FEAT_HOST_SOCKETS));
		CHECK(p->seccomp_no_unix && p->seccomp_no_ns &&
		      moat_plan_seccomp_variant(p) ==
			  (MOAT_SC_NO_INET | MOAT_SC_NO_UNIX | MOAT_SC_NO_NS));
		/* no read-only tree without a mount namespace: a reported gap */
		CHECK(gap(p, MOAT_FEAT_METADATA));
		CHECK(!gap(p, MOAT_FEAT_SCOPES)); /* landlock abi 6 scopes */
		CHECK(p->scratch_tmp && rule(p, "/tmp") == NULL);
		CHECK(!p->home_cow && !p->private_pts); /* both need a mount namespace */
		CHECK(p->pids_mech == MOAT_LIMIT_RLIMIT);
		CHECK(strstr(p->feat[MOAT_FEAT_PRIVATE_TMP].hint, "faked") != NULL);
		/* every gap's hint is whole, the reason after it too (a hint
		 * is cut at 160 bytes to make room for the reason) */
		for (int f = 0; f < MOAT_FEAT__COUNT; f++) {
			const char *h = p->feat[f].hint, *why = strstr(h, " (faked)");

			if (!why)
				continue;
			tap_ok(why[8] == '\0' && (size_t)(why - h) < 160,
			       "the hint of gap %d is whole before its reason: %s", f, h);
		}
		CHECK(moat_plan_gaps(p, names, sizeof(names)) >= 3 &&
		      strstr(names, "private-tmp") && !strstr(names, "secrets"));
	}
	moat_plan_free(p);

	/* ... and as root, RLIMIT_NPROC means nothing: a gap */
	kf.is_root = true;
	p = build("workspace-write", &kf, NULL, &rc);
	CHECK(p && gap(p, MOAT_FEAT_PIDS) && p->pids_mech == MOAT_LIMIT_NONE);
	moat_plan_free(p);

	/* no landlock (errno faked): writes are not confined */
	moat_kfeatures_full(&kf);
	kf.landlock_abi = 0;
	kf.landlock_errno = 95;
	p = build("workspace-write", &kf, NULL, &rc);
	CHECK(p && !p->landlock && gap(p, MOAT_FEAT_FS_WRITE) && gap(p, MOAT_FEAT_TRUNCATE));
	CHECK(p && !gap(p, MOAT_FEAT_SECRETS)); /* the mount namespace masks */
	moat_plan_free(p);
	/* neither Landlock nor user namespaces: secrets are a gap */
	kf.userns = false;
	p = build("workspace-write", &kf, NULL, &rc);
	CHECK(p && gap(p, MOAT_FEAT_SECRETS));
	CHECK(p && strstr(p->feat[MOAT_FEAT_FS_WRITE].hint, "lsm=") != NULL);
	moat_plan_free(p);

	/* ABI 3: no TCP rules, no scopes. Deny still holds through the netns;
	 * ports cannot be expressed; with the network allowed, abstract
	 * sockets are not scoped */
	moat_kfeatures_full(&kf);
	kf.landlock_abi = 3;
	p = build("workspace-write-no-network", &kf, NULL, &rc);
	CHECK(p && p->netns && p->ll_net_handled == 0 && !gap(p, MOAT_FEAT_NETWORK));
	CHECK(p && !gap(p, MOAT_FEAT_SCOPES)); /* namespaces stand in */
	moat_plan_free(p);
	p = build("workspace-write", &kf, NULL, &rc);
	CHECK(p && gap(p, MOAT_FEAT_SCOPES));
	moat_plan_free(p);
	{
		struct moat_profile o;
		struct moat_error err;

		moat_profile_init(&o, "flags");
		moat_parse_net("443", &o, &err);
		p = build("workspace-write", &kf, &o, &rc);
		CHECK(p && gap(p, MOAT_FEAT_NETWORK));
		moat_plan_free(p);
		moat_profile_release(&o);
	}
	/* ABI 2: truncate is a gap; ABI 1: also REFER missing from the masks */
	kf.landlock_abi = 2;
	p = build("workspace-write", &kf, NULL, &rc);
	CHECK(p && gap(p, MOAT_FEAT_TRUNCATE) && !gap(p, MOAT_FEAT_FS_WRITE));
	moat_plan_free(p);
	kf.landlock_abi = 1;
	p = build("workspace-write", &kf, NULL, &rc);
	CHECK(p && !(p->ll.fs & MOAT_LL_FS_REFER));
	moat_plan_free(p);

	/* a kernel without per-namespace pid_max: RLIMIT_NPROC in the userns */
	moat_kfeatures_full(&kf);
	kf.pidns_pid_max = false;
	p = build("workspace-write", &kf, NULL, &rc);
	CHECK(p && p->pids_mech == MOAT_LIMIT_RLIMIT && !gap(p, MOAT_FEAT_PIDS));
	moat_plan_free(p);
	/* pid_max cannot go below 301: a smaller --pids uses RLIMIT_NPROC */
	moat_kfeatures_full(&kf);
	{
		struct moat_profile o;

		moat_profile_init(&o, "flags");
		o.pids = 299;
		o.set |= MOAT_PF_PIDS;
		p = build("workspace-write", &kf, &o, &rc);
		CHECK(p && p->pids_mech == MOAT_LIMIT_RLIMIT);
		moat_plan_free(p);
		o.pids = 300;
		p = build("workspace-write", &kf, &o, &rc);
		CHECK(p && p->pids_mech == MOAT_LIMIT_PIDNS);
		moat_plan_free(p);
		o.pids = 0; /* no limit asked: nothing planned */
		p = build("workspace-write", &kf, &o, &rc);
		CHECK(p && p->pids_mech == MOAT_LIMIT_NONE && !p->feat[MOAT_FEAT_PIDS].requested);
		moat_plan_free(p);
		moat_profile_release(&o);
	}
	/* a delegated cgroup wins */
	kf.cgroup = true;
	p = build("workspace-write", &kf, NULL, &rc);
	CHECK(p && p->mem_mech == MOAT_LIMIT_CGROUP && p->pids_mech == MOAT_LIMIT_CGROUP);
	moat_plan_free(p);
	/* no seccomp: a gap, and network deny without netns has nothing left */
	moat_kfeatures_full(&kf);
	kf.seccomp = false;
	kf.userns = false;
	p = build("workspace-write-no-network", &kf, NULL, &rc);
	CHECK(p && gap(p, MOAT_FEAT_SECCOMP) && gap(p, MOAT_FEAT_NETWORK));
	moat_plan_free(p);
}

static void test_plan_errors(void)
{
	struct moat_kfeatures kf;
	struct moat_profile p, o;
	struct moat_plan_context ctx;
	struct moat_plan *plan = NULL;
	struct moat_error err;
	char *argv[] = {"x", NULL};

	moat_kfeatures_full(&kf);
	moat_profile_builtin(NULL, &p);
	memset(&ctx, 0, sizeof(ctx));
	ctx.argv = argv;
	ctx.home = "/home/u";
	ctx.denied = denied;

	ctx.workspace = "/home/u/proj";
	ctx.cwd = "/home/u/other"; /* seed 000: cwd outside the workspace */
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), -EINVAL);
	CHECK(plan == NULL && strstr(err.msg, "outside the workspace"));
	ctx.cwd = "/home/u/proj_evil"; /* a prefix is not "inside" */
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), -EINVAL);
	ctx.cwd = "/home/u/proj/../other";
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), -EINVAL);
	ctx.workspace = "/";
	ctx.cwd = "/";
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), -EINVAL);
	ctx.workspace = "proj";
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), -EINVAL);

	ctx.workspace = "/home/u/proj";
	ctx.cwd = "/home/u/proj";
	/* a mask above the workspace is masked around it (the sandbox's
	 * business); one on the workspace itself would hide it */
	moat_profile_init(&o, "flags");
	moat_strv_add(&o.mask, "~");
	o.set |= MOAT_PF_MASK;
	moat_profile_layer(&p, &o, &err);
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), 0);
	plan = moat_plan_free(plan);
	moat_profile_release(&o);
	moat_profile_init(&o, "flags");
	moat_strv_add(&o.mask, "~/proj");
	o.set |= MOAT_PF_MASK;
	moat_profile_layer(&p, &o, &err);
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), -EINVAL);
	CHECK(strstr(err.msg, "hide the workspace") != NULL);
	moat_profile_release(&o);
	moat_profile_release(&p);

	/* protected names must stay inside the workspace */
	moat_profile_builtin(NULL, &p);
	moat_profile_init(&o, "flags");
	moat_strv_add(&o.protect, "../outside");
	o.set |= MOAT_PF_PROTECT;
	moat_profile_layer(&p, &o, &err);
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), -EINVAL);
	moat_profile_release(&o);
	moat_profile_release(&p);
	moat_profile_builtin(NULL, &p);
	moat_profile_init(&o, "flags");
	moat_strv_add(&o.protect, "/etc");
	o.set |= MOAT_PF_PROTECT;
	moat_profile_layer(&p, &o, &err);
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), -EINVAL);
	moat_profile_release(&o);
	moat_profile_release(&p);

	/* rw paths: relative ones are joined to the cwd; globs are refused */
	moat_profile_builtin(NULL, &p);
	moat_profile_init(&o, "flags");
	moat_strv_add(&o.rw, "build/../out");
	moat_strv_add(&o.ro, "~/lib");
	o.set |= MOAT_PF_RW | MOAT_PF_RO;
	moat_profile_layer(&p, &o, &err);
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), 0);
	CHECK(plan && rule(plan, "/home/u/proj/out") && rule(plan, "/home/u/lib"));
	CHECK(plan && (rule(plan, "/home/u/proj/out")->access & MOAT_FS_WRITE));
	CHECK(plan && !(rule(plan, "/home/u/lib")->access & MOAT_FS_WRITE));
	plan = moat_plan_free(plan);
	moat_profile_release(&o);
	moat_profile_init(&o, "flags");
	moat_strv_add(&o.rw, "/data/*");
	o.set |= MOAT_PF_RW;
	moat_profile_layer(&p, &o, &err);
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), -EINVAL);
	moat_profile_release(&o);
	moat_profile_release(&p);

	/* no home: "~" masks are skipped, "**" ones still scan the workspace */
	moat_profile_builtin(NULL, &p);
	ctx.home = NULL;
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), 0);
	CHECK(plan && mask(plan, "**/.env") && !mask(plan, "/home/u/.aws"));
	plan = moat_plan_free(plan);
	moat_profile_release(&p);
	CHECK(moat_plan_free(NULL) == NULL);
}

static void test_env_limit(void)
{
	struct moat_kfeatures kf;
	struct moat_profile o;
	struct moat_plan *p;
	int rc;

	/* boundary: MOAT_PLAN_MAX_ENV_NAMES names pass, one more is refused */
	moat_kfeatures_full(&kf);
	moat_profile_init(&o, "flags");
	for (int i = 0; i < MOAT_PLAN_MAX_ENV_NAMES; i++) {
		char s[32];

		snprintf(s, sizeof(s), "VAR_%d", i);
		moat_strv_add(&o.env_pass, s);
	}
	o.set |= MOAT_PF_ENV_PASS;
	p = build(NULL, &kf, &o, &rc);
	CHECK(p && p->env_pass.n == MOAT_PLAN_MAX_ENV_NAMES);
	moat_plan_free(p);
	moat_strv_add(&o.env_pass, "ONE_MORE");
	p = build(NULL, &kf, &o, &rc);
	CHECK(p == NULL && rc == -E2BIG);
	moat_profile_release(&o);
	/* a name with '=' is refused */
	moat_profile_init(&o, "flags");
	moat_strv_add(&o.env_pass, "A=B");
	o.set |= MOAT_PF_ENV_PASS;
	p = build(NULL, &kf, &o, &rc);
	CHECK(p == NULL && rc == -EINVAL);
	moat_profile_release(&o);
}

static void test_seccomp_rows(void)
{
	static const char *const required[] = {
	    "ptrace",
	    "process_vm_readv",
	    "process_vm_writev",
	    "keyctl",
	    "add_key",
	    "request_key",
	    "bpf",
	    "perf_event_open",
	    "userfaultfd",
	    "io_uring_setup",
	    "io_uring_enter",
	    "io_uring_register",
	    "kexec_load",
	    "kexec_file_load",
	    "init_module",
	    "finit_module",
	    "delete_module",
	    "mount",
	    "umount2",
	    "pivot_root",
	    "move_mount",
	    "open_tree",
	    "fsopen",
	    "fsmount",
	    "fsconfig",
	    "fspick",
	    "mount_setattr",
	    "setns",
	    "unshare",
	    "clone",
	    "clone3",
	    "personality",
	    "ioctl",
	    "open_by_handle_at",
	    "acct",
	    "swapon",
	    "swapoff",
	    "reboot",
	    "memfd_create",
	    "execveat",
	    NULL,
	};

	for (size_t i = 0; required[i]; i++) {
		bool found = false;

		for (const struct moat_sc_rule *r = moat_seccomp_rules; r->syscall && !found; r++)
			found = !strcmp(r->syscall, required[i]);
		CHECKF(found, "seccomp row for %s", required[i]);
	}
	for (const struct moat_sc_rule *r = moat_seccomp_rules; r->syscall; r++)
		CHECKF(r->err == 1 || r->err == 38 ||
			   (r->err == 0 && !strcmp(r->syscall, "personality")),
		       "%s returns EPERM or ENOSYS (never kills)", r->syscall);
}

/* ---- named profiles (sandbox.profiles): extends, extra versus replace,
 * cycles, immutability through the chain, per-tool rules ---- */

/* A named profile built in the test: name, base, and a layer. */
static void def_init(struct moat_profile_def *d, const char *name, const char *extends)
{
	memset(d, 0, sizeof(*d));
	d->name = strdup(name);
	d->extends = extends ? strdup(extends) : NULL;
	moat_profile_init(&d->layer, name);
}

static bool has(const struct moat_strv *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

static void test_named_profiles(void)
{
	struct moat_profile_def defs[6];
	struct moat_profile p, dflt;
	struct moat_error err;
	size_t culprit = 0;

	/* strict extends offline extends workspace-write-no-network */
	def_init(&defs[0], "strict", "offline");
	moat_strv_add(&defs[0].layer.rw, "/data/out"); /* plain key: replaces */
	defs[0].layer.rw.replace = true;
	moat_strv_add(&defs[0].layer.ro, "/srv/ref"); /* "extra": adds */
	defs[0].layer.set |= MOAT_PF_RW | MOAT_PF_RO;
	defs[0].layer.mem_mb = 512;
	defs[0].layer.set |= MOAT_PF_MEM;
	def_init(&defs[1], "offline", "workspace-write-no-network");
	moat_strv_add(&defs[1].layer.rw, "/data/cache");
	moat_strv_add(&defs[1].layer.ro, "/srv/docs");
	defs[1].layer.set |= MOAT_PF_RW | MOAT_PF_RO;
	defs[1].layer.env = MOAT_ENV_NONE;
	defs[1].layer.set |= MOAT_PF_ENV;
	defs[1].layer.immutable = MOAT_DIM_ENV;
	/* a cycle: a -> b -> a; c extends it */
	def_init(&defs[2], "a", "b");
	def_init(&defs[3], "b", "a");
	def_init(&defs[4], "c", "a");
	/* loosens the network made immutable by its base */
	def_init(&defs[5], "leaky", "offline");
	defs[5].layer.net = MOAT_NET_ALLOW;
	defs[5].layer.set |= MOAT_PF_NET;

	moat_error_clear(&err);
	CHECK_INT(moat_profile_resolve("strict", defs, 6, NULL, &p, &culprit, &err), 0);
	CHECK_STR(p.name, "strict");
	CHECK(culprit == SIZE_MAX);
	CHECK(p.net == MOAT_NET_DENY && p.workspace == MOAT_WS_RW); /* from the built-in */
	CHECK(p.env == MOAT_ENV_NONE);				    /* from offline */
	CHECK(p.mem_mb == 512 && p.pids == 512);		    /* set / inherited */
	/* replace: offline's rw path is gone; extra: both ro paths stay */
	CHECK(p.rw.n == 1 && has(&p.rw, "/data/out") && !has(&p.rw, "/data/cache"));
	CHECK(p.ro.n == 2 && has(&p.ro, "/srv/docs") && has(&p.ro, "/srv/ref"));
	CHECK(p.immutable & MOAT_DIM_NET && p.immutable & MOAT_DIM_ENV);
	CHECK(p.protect.n > 5); /* the built-in's protected names were inherited */
	/* resolving does not change the definitions */
	CHECK(defs[0].layer.rw.n == 1 && defs[1].layer.rw.n == 1);
	moat_profile_release(&p);

	/* immutability binds every profile built on the base */
	{
		struct moat_profile over;

		CHECK_INT(moat_profile_resolve("offline", defs, 6, NULL, &p, NULL, &err), 0);
		moat_profile_init(&over, "flags");
		over.env = MOAT_ENV_FULL;
		over.set |= MOAT_PF_ENV;
		CHECK_INT(moat_profile_layer(&p, &over, &err), -EPERM);
		moat_profile_release(&over);
		moat_profile_release(&p);
	}
	moat_error_clear(&err);
	CHECK_INT(moat_profile_resolve("leaky", defs, 6, NULL, &p, &culprit, &err), -EPERM);
	CHECK(culprit == 5);
	CHECK(strstr(err.msg, "profile 'leaky'") && strstr(err.msg, "immutable"));

	/* cycles, also reached through another profile */
	moat_error_clear(&err);
	CHECK_INT(moat_profile_resolve("a", defs, 6, NULL, &p, &culprit, &err), -ELOOP);
	CHECK(strstr(err.msg, "cycle") && strstr(err.msg, "'a' -> 'b' -> 'a'"));
	CHECK(culprit == 3);
	CHECK_INT(moat_profile_resolve("c", defs, 6, NULL, &p, &culprit, &err), -ELOOP);
	/* unknown names and bases fail closed */
	moat_error_clear(&err);
	CHECK_INT(moat_profile_resolve("nope", defs, 6, NULL, &p, &culprit, &err), -ENOENT);
	CHECK(culprit == SIZE_MAX && strstr(err.msg, "unknown profile 'nope'"));
	free(defs[1].extends);
	defs[1].extends = strdup("workspace-write-no-networks");
	CHECK_INT(moat_profile_resolve("strict", defs, 6, NULL, &p, &culprit, &err), -ENOENT);
	CHECK(culprit == 1 && strstr(err.msg, "'offline' extends the unknown profile"));
	free(defs[1].extends);
	defs[1].extends = NULL;
	CHECK_INT(moat_profile_resolve("offline", defs, 6, NULL, &p, &culprit, &err), -ENOENT);
	free(defs[1].extends);
	defs[1].extends = strdup("workspace-write-no-network");

	/* built-in names resolve without definitions; NULL is the default */
	CHECK_INT(moat_profile_resolve(NULL, NULL, 0, NULL, &p, NULL, &err), 0);
	CHECK_STR(p.name, MOAT_PROFILE_DEFAULT);
	moat_profile_release(&p);
	CHECK_INT(moat_profile_resolve("readonly", NULL, 0, NULL, &p, NULL, &err), 0);
	CHECK(p.workspace == MOAT_WS_RO);
	moat_profile_release(&p);

	/* the configuration's defaults sit under the named layers */
	moat_profile_init(&dflt, "configuration");
	dflt.fallback = MOAT_FALLBACK_WARN;
	dflt.mem_mb = 100;
	dflt.set |= MOAT_PF_FALLBACK | MOAT_PF_MEM;
	CHECK_INT(moat_profile_resolve("strict", defs, 6, &dflt, &p, NULL, &err), 0);
	CHECK(p.fallback == MOAT_FALLBACK_WARN && p.mem_mb == 512); /* strict sets its own */
	moat_profile_release(&p);
	CHECK_INT(moat_profile_resolve("offline", defs, 6, &dflt, &p, NULL, &err), 0);
	CHECK(p.mem_mb == 100);
	moat_profile_release(&p);
	moat_profile_release(&dflt);

	for (size_t i = 0; i < 6; i++)
		moat_profile_def_release(&defs[i]);
}

static void test_extends_depth(void)
{
	/* a chain at the limit resolves, one more is refused */
	struct moat_profile_def defs[MOAT_PLAN_MAX_EXTENDS + 1];
	struct moat_profile p;
	struct moat_error err;
	char name[16], base[16];

	for (int i = 0; i <= MOAT_PLAN_MAX_EXTENDS; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		snprintf(base, sizeof(base), "p%d", i + 1);
		def_init(&defs[i], name, i == MOAT_PLAN_MAX_EXTENDS ? "readonly" : base);
	}
	moat_error_clear(&err);
	CHECK_INT(moat_profile_resolve("p1", defs, MOAT_PLAN_MAX_EXTENDS + 1, NULL, &p, NULL, &err),
		  0);
	moat_profile_release(&p);
	CHECK_INT(moat_profile_resolve("p0", defs, MOAT_PLAN_MAX_EXTENDS + 1, NULL, &p, NULL, &err),
		  -ELOOP);
	CHECK(strstr(err.msg, "longer than") != NULL);
	for (int i = 0; i <= MOAT_PLAN_MAX_EXTENDS; i++)
		moat_profile_def_release(&defs[i]);
}

static void test_profile_names(void)
{
	static const struct {
		const char *s;
		bool ok;
	} t[] = {
	    {"strict", true}, {"a.b-c_D9", true}, {"", false},	 {"a b", false},
	    {"a/b", false},   {"ü", false},	  {NULL, false},
	};
	char longest[MOAT_PLAN_MAX_NAME + 2];

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(t); i++)
		CHECKF(moat_profile_name_ok(t[i].s) == t[i].ok, "profile name %zu", i);
	memset(longest, 'x', sizeof(longest));
	longest[MOAT_PLAN_MAX_NAME] = '\0';
	CHECK(moat_profile_name_ok(longest));
	longest[MOAT_PLAN_MAX_NAME] = 'x';
	longest[MOAT_PLAN_MAX_NAME + 1] = '\0';
	CHECK(!moat_profile_name_ok(longest));
	CHECK(moat_profile_is_builtin("readonly") && !moat_profile_is_builtin("Readonly"));
	CHECK(!moat_profile_is_builtin(NULL));

	CHECK(moat_protect_name_ok(".git/hooks") && moat_protect_name_ok(".vscode/"));
	CHECK(!moat_protect_name_ok("/etc") && !moat_protect_name_ok("a/../b") &&
	      !moat_protect_name_ok("./a") && !moat_protect_name_ok("a//b") &&
	      !moat_protect_name_ok("") && !moat_protect_name_ok(".."));
}

static void test_tool_rules(void)
{
	struct moat_tool_rule rules[] = {
	    {"bash", "workspace-write"},
	    {"mcp_fs", "readonly"},
	    {"bash", "readonly"}, /* shadowed: the first match wins */
	};

	CHECK_STR(moat_profile_for_tool(rules, 3, "bash", "strict"), "workspace-write");
	CHECK_STR(moat_profile_for_tool(rules, 3, "mcp_fs", NULL), "readonly");
	CHECK_STR(moat_profile_for_tool(rules, 3, "Bash", "strict"), "strict"); /* exact */
	CHECK_STR(moat_profile_for_tool(rules, 3, "web_fetch", NULL), MOAT_PROFILE_DEFAULT);
	CHECK_STR(moat_profile_for_tool(NULL, 0, "bash", NULL), MOAT_PROFILE_DEFAULT);
	CHECK_STR(moat_profile_for_tool(rules, 3, NULL, "strict"), "strict");
}

static void test_profile_copy(void)
{
	struct moat_profile a, b;

	CHECK_INT(moat_profile_builtin("readonly", &a), 0);
	moat_strv_add(&a.ro, "/x");
	a.ro.replace = true;
	CHECK_INT(moat_profile_copy(&b, &a), 0);
	CHECK(b.ro.n == 1 && b.ro.replace && b.ro.v != a.ro.v && b.protect.n == a.protect.n);
	CHECK(b.immutable == a.immutable && b.net == a.net);
	moat_profile_release(&a);
	CHECK_STR(b.ro.v[0], "/x"); /* independent of the original */
	moat_profile_release(&b);
}

/* a read-only path inside a writable one needs a mount; without one it is a
 * gap even when no protected name is asked for */
static void test_ro_inside_rw(void)
{
	struct moat_kfeatures kf;
	struct moat_profile over;
	struct moat_plan *p;
	int r;

	moat_profile_init(&over, "flags");
	over.protect.replace = true; /* no protected names */
	over.set |= MOAT_PF_PROTECT;
	moat_kfeatures_full(&kf);
	kf.userns = false;
	p = build("workspace-write", &kf, &over, &r);
	CHECK(r == 0 && p && !p->feat[MOAT_FEAT_PROTECTED].requested);
	moat_plan_free(p);
	moat_strv_add(&over.ro, "/home/u/proj/vendor");
	over.set |= MOAT_PF_RO;
	p = build("workspace-write", &kf, &over, &r);
	CHECK(r == 0 && p && gap(p, MOAT_FEAT_PROTECTED));
	moat_plan_free(p);
	moat_kfeatures_full(&kf);
	p = build("workspace-write", &kf, &over, &r);
	CHECK(r == 0 && p && p->feat[MOAT_FEAT_PROTECTED].enforced);
	moat_plan_free(p);
	moat_profile_release(&over);
}

/* the user's configuration directory: a protected name inside a writable
 * workspace, a read-only rule inside another writable path, nothing
 * elsewhere; listed for the carve in both cases */
static struct moat_plan *build_conf(const char *ws, const char *conf, const char *rw, int *ret_r)
{
	static char *argv[] = {"x", NULL};
	const char *dirs[] = {conf, NULL};
	struct moat_kfeatures kf;
	struct moat_profile p;
	struct moat_plan_context ctx;
	struct moat_plan *plan = NULL;
	struct moat_error err;

	moat_error_clear(&err);
	moat_kfeatures_full(&kf);
	*ret_r = moat_profile_builtin("workspace-write", &p);
	if (*ret_r == 0 && rw)
		*ret_r = moat_strv_add(&p.rw, rw);
	if (*ret_r == 0) {
		memset(&ctx, 0, sizeof(ctx));
		ctx.workspace = ws;
		ctx.cwd = ws;
		ctx.home = "/home/u";
		ctx.argv = argv;
		ctx.user_config = dirs;
		*ret_r = moat_plan_build(&p, &ctx, &kf, &plan, &err);
	}
	moat_profile_release(&p);
	return plan;
}

static bool has_str(const struct moat_strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return true;
	return false;
}

static void test_user_config(void)
{
	struct moat_plan *p;
	const struct moat_fs_rule *r;
	int rc;

	p = build_conf("/home/u", "/home/u/.config/moat", NULL, &rc);
	CHECK(rc == 0 && p && has_str(&p->protect, ".config/moat") &&
	      has_str(&p->config_dirs, "/home/u/.config/moat"));
	moat_plan_free(p);
	p = build_conf("/home/u/proj", "/home/u/proj/xdg/moat", NULL, &rc);
	CHECK(rc == 0 && p && has_str(&p->protect, "xdg/moat"));
	moat_plan_free(p);
	p = build_conf("/home/u/.config/moat", "/home/u/.config/moat", NULL, &rc);
	CHECK(rc == 0 && p && has_str(&p->protect, "config.json") &&
	      has_str(&p->config_dirs, "/home/u/.config/moat/config.json"));
	moat_plan_free(p);
	p = build_conf("/home/u/proj", "/home/u/.config/moat", NULL, &rc);
	CHECK(rc == 0 && p && !has_str(&p->protect, ".config/moat") && p->config_dirs.n == 0 &&
	      rule(p, "/home/u/.config/moat") == NULL);
	moat_plan_free(p);
	p = build_conf("/home/u/proj", "/home/u/.config/moat", "/home/u/.config", &rc);
	r = p ? rule(p, "/home/u/.config/moat") : NULL;
	CHECK(rc == 0 && r && !(r->access & MOAT_FS_WRITE) && r->optional &&
	      has_str(&p->config_dirs, "/home/u/.config/moat") &&
	      !has_str(&p->protect, ".config/moat"));
	moat_plan_free(p);
}

/* host unix sockets: hidden by the mounts; with the network denied no unix
 * socket can be created either (seccomp), unless a named one is allowed */
static void test_host_sockets(void)
{
	struct moat_kfeatures kf;
	struct moat_profile over;
	struct moat_plan *p;
	int r;

	moat_kfeatures_full(&kf);
	p = build("workspace-write-no-network", &kf, NULL, &r);
	CHECK(p && p->seccomp_no_unix && !p->seccomp_no_inet &&
	      moat_plan_seccomp_variant(p) == MOAT_SC_NO_UNIX);
	CHECK(p && p->feat[MOAT_FEAT_HOST_SOCKETS].enforced &&
	      strstr(p->feat[MOAT_FEAT_HOST_SOCKETS].mechanism, "seccomp"));
	moat_plan_free(p);
	p = build("workspace-write", &kf, NULL, &r); /* network allowed */
	CHECK(p && !p->seccomp_no_unix && p->feat[MOAT_FEAT_HOST_SOCKETS].enforced &&
	      moat_plan_seccomp_variant(p) == 0);
	moat_plan_free(p);
	/* a named host socket needs unix sockets */
	moat_profile_init(&over, "flags");
	moat_strv_add(&over.sockets, "/run/user/1000/bus");
	over.set |= MOAT_PF_SOCKETS;
	p = build("workspace-write-no-network", &kf, &over, &r);
	CHECK(p && !p->seccomp_no_unix && p->feat[MOAT_FEAT_HOST_SOCKETS].enforced);
	moat_plan_free(p);
	/* without namespaces: the network allowed leaves host sockets reachable (a gap);
	 * denied, they are not; with a named one allowed, a gap again */
	kf.userns = false;
	p = build("workspace-write", &kf, NULL, &r);
	CHECK(p && gap(p, MOAT_FEAT_HOST_SOCKETS) &&
	      strstr(p->feat[MOAT_FEAT_HOST_SOCKETS].hint, "--net deny"));
	moat_plan_free(p);
	p = build("workspace-write-no-network", &kf, &over, &r);
	CHECK(p && gap(p, MOAT_FEAT_HOST_SOCKETS) && !p->seccomp_no_unix);
	moat_plan_free(p);
	/* without seccomp nothing can refuse them */
	kf.seccomp = false;
	p = build("workspace-write-no-network", &kf, NULL, &r);
	CHECK(p && gap(p, MOAT_FEAT_HOST_SOCKETS) && !p->seccomp_no_unix);
	moat_plan_free(p);
	moat_profile_release(&over);
}

/* Layer a --mask flag onto p. */
static void add_mask_flag(struct moat_profile *p, const char *mask)
{
	struct moat_profile o;
	struct moat_error err;

	moat_profile_init(&o, "flags");
	moat_strv_add(&o.mask, mask);
	o.set |= MOAT_PF_MASK;
	moat_profile_layer(p, &o, &err);
	moat_profile_release(&o);
}

/* A globstar inside a --mask path: right after the workspace it is the
 * workspace scan's pattern; anywhere else it is refused, never read by
 * glob(3) as one "*" that masks nothing. */
static void test_mask_inner_globstar(void)
{
	struct moat_kfeatures kf;
	struct moat_profile p;
	struct moat_plan_context ctx;
	struct moat_plan *plan = NULL;
	struct moat_error err;
	char *argv[] = {"x", NULL};
	bool found = false;

	moat_kfeatures_full(&kf);
	moat_profile_builtin(NULL, &p);
	memset(&ctx, 0, sizeof(ctx));
	ctx.argv = argv;
	ctx.home = "/home/u";
	ctx.denied = denied;
	ctx.workspace = "/home/u/proj";
	ctx.cwd = "/home/u/proj";
	add_mask_flag(&p, "/home/u/proj/**/*.out");
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), 0);
	for (size_t i = 0; plan && i < plan->nmasks; i++)
		found |= plan->masks[i].kind == MOAT_MASK_WORKSPACE_NAME &&
			 !strcmp(plan->masks[i].pattern, "**/*.out");
	CHECK(found);
	moat_plan_free(plan);
	plan = NULL;
	moat_profile_release(&p);

	moat_profile_builtin(NULL, &p);
	add_mask_flag(&p, "/var/**/*.out");
	CHECK_INT(moat_plan_build(&p, &ctx, &kf, &plan, &err), -EINVAL);
	CHECK(plan == NULL && strstr(err.msg, "inside a path") != NULL);
	moat_profile_release(&p);
}

static bool strv_has(const struct moat_strv *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

/* exempt_paths (issue 21): resolved as the policy resolves them, compiled
 * once; a literal denied path they match is no mask, the others carry
 * whether they apply; a project file's denied paths and --mask are never
 * lifted. */
static struct moat_plan *build_exempt(const char *ws, const struct moat_strv *ex,
				      const struct moat_strv *extra, const struct moat_strv *proj,
				      const char *flag_mask, int *ret_r, struct moat_error *err)
{
	static char *argv[] = {"x", NULL};
	struct moat_kfeatures kf;
	struct moat_profile p;
	struct moat_plan_context ctx;
	struct moat_plan *plan = NULL;

	moat_kfeatures_full(&kf);
	moat_profile_builtin(NULL, &p);
	if (flag_mask)
		add_mask_flag(&p, flag_mask);
	memset(&ctx, 0, sizeof(ctx));
	ctx.argv = argv;
	ctx.home = "/home/u";
	ctx.denied = denied;
	ctx.denied_extra = extra;
	ctx.denied_project = proj;
	ctx.exempt = ex;
	ctx.workspace = ws;
	ctx.cwd = ws;
	moat_error_clear(err);
	*ret_r = moat_plan_build(&p, &ctx, &kf, &plan, err);
	moat_profile_release(&p);
	return plan;
}

static void test_plan_exempt(void)
{
	struct moat_strv ex = {.v = NULL}, extra = {.v = NULL}, proj = {.v = NULL};
	struct moat_strv none = {.v = NULL};
	struct moat_plan *p, *q;
	struct moat_buf b = MOAT_BUF_INIT;
	const struct moat_mask *mk;
	struct moat_error err;
	int r;

	moat_strv_add(&ex, "**/test/certs/*.pem");
	moat_strv_add(&ex, "test/fixtures/*.key");
	moat_strv_add(&ex, "./rel/x.pem");
	moat_strv_add(&ex, "k.pem");
	moat_strv_add(&ex, "~/fixture.pem");
	moat_strv_add(&ex, "~/.ssh/**");
	moat_strv_add(&ex, "<cwd>/own/**");
	moat_strv_add(&ex, "/etc/shadow");
	moat_strv_add(&ex, "/home/u/.config/gcloud/**");
	moat_strv_add(&extra, "**/*.key");
	moat_strv_add(&proj, "**/.env");
	moat_strv_add(&proj, "~/.config/gcloud/**");
	p = build_exempt("/home/u/proj", &ex, &extra, &proj, "~/*.pem", &r, &err);
	CHECKF(r == 0 && p, "plan with exempt_paths (%s)", err.msg);
	if (!p)
		return;
	/* resolved: relative to the workspace, a bare name anywhere, ~ the home */
	CHECK_INT(p->exempt.n, 9);
	CHECK(strv_has(&p->exempt, "**/test/certs/*.pem"));
	CHECK(strv_has(&p->exempt, "/home/u/proj/test/fixtures/*.key"));
	CHECK(strv_has(&p->exempt, "/home/u/proj/rel/x.pem"));
	CHECK(strv_has(&p->exempt, "**/k.pem"));
	CHECK(strv_has(&p->exempt, "/home/u/fixture.pem"));
	CHECK(strv_has(&p->exempt, "/home/u/.ssh/**"));
	CHECK(strv_has(&p->exempt, "/home/u/proj/own/**"));
	CHECK(strv_has(&p->exempt, "/etc/shadow"));
	/* the matcher */
	CHECK(moat_plan_exempt(p, "/home/u/proj/test/certs/a.pem"));
	CHECK(moat_plan_exempt(p, "/home/u/proj/deep/test/certs/a.pem"));
	CHECK(!moat_plan_exempt(p, "/home/u/proj/test/certs/sub/a.pem"));
	CHECK(!moat_plan_exempt(p, "/home/u/proj/other/b.pem"));
	CHECK(moat_plan_exempt(p, "/home/u/proj/test/fixtures/a.key"));
	CHECK(!moat_plan_exempt(p, "/home/u/proj/sub/test/fixtures/a.key"));
	CHECK(moat_plan_exempt(p, "/x/y/k.pem"));
	CHECK(moat_plan_exempt(p, "/home/u/fixture.pem"));
	CHECK(!moat_plan_exempt(p, "/home/u/other.pem"));
	CHECK(moat_plan_exempt(p, "/home/u/proj/own"));
	CHECK(!moat_plan_exempt(p, "/home/u/proj/own2"));
	CHECK(!moat_plan_exempt(NULL, "/home/u/fixture.pem"));
	/* literal denied paths an exemption matches are no masks at all */
	CHECK(mask(p, "/etc/shadow") == NULL);
	CHECK(mask(p, "/home/u/.ssh") == NULL);
	mk = mask(p, "/etc/passwd");
	CHECK(mk == NULL); /* (never masked: libc's) */
	/* ... but a project file's are (not exemptible) */
	mk = mask(p, "/home/u/.config/gcloud");
	CHECK(mk && mk->kind == MOAT_MASK_PATH && !mk->exemptible);
	mk = mask(p, "**/.env");
	CHECK(mk && !mk->exemptible); /* the built-in one and the project's: the project wins */
	/* globs and the workspace scan: left to the sandbox, per match */
	mk = mask(p, "**/*.pem");
	CHECK(mk && mk->kind == MOAT_MASK_WORKSPACE_NAME && mk->exemptible);
	CHECK(moat_plan_mask_exempt(p, mk, "/home/u/proj/test/certs/a.pem"));
	CHECK(!moat_plan_mask_exempt(p, mk, "/home/u/proj/b.pem"));
	mk = mask(p, "**/*.key");
	CHECK(mk && mk->exemptible); /* the user's own denied path */
	CHECK(moat_plan_mask_exempt(p, mk, "/home/u/proj/test/fixtures/a.key"));
	/* the built-in pattern's home mask, also a --mask: not exemptible */
	mk = mask(p, "/home/u/*.pem");
	CHECK(mk && mk->kind == MOAT_MASK_GLOB && !mk->exemptible);
	CHECK(!moat_plan_mask_exempt(p, mk, "/home/u/fixture.pem"));
	CHECK(!moat_plan_mask_exempt(p, NULL, "/home/u/fixture.pem"));
	/* the plan's JSON names them, and the masks they do not apply to */
	CHECK_INT(moat_plan_to_json(p, &b), 0);
	CHECK(b.data && strstr(b.data, "\"exempt_paths\": [\"**/test/certs/*.pem\", "
					"\"/home/u/proj/test/fixtures/*.key\", "));
	CHECK(b.data && strstr(b.data, "{\"pattern\": \"/home/u/*.pem\", \"kind\": \"glob\", "
					"\"origin\": \"denied_paths\", \"exempt_paths_apply\": false}"));
	CHECK(b.data && strstr(b.data, "{\"pattern\": \"**/*.pem\", \"kind\": "
					"\"workspace-scan\", \"origin\": \"denied_paths\"}"));
	moat_buf_release(&b);
	/* the same sandbox only with the same exemptions */
	q = build_exempt("/home/u/proj", &ex, &extra, &proj, "~/*.pem", &r, &err);
	CHECK(q && moat_plan_same_sandbox(p, q));
	if (q) {
		mk = mask(q, "**/*.pem");
		((struct moat_mask *)mk)->exemptible = false;
		CHECK(!moat_plan_same_sandbox(p, q));
	}
	moat_plan_free(q);
	q = build_exempt("/home/u/proj", &none, &extra, &proj, "~/*.pem", &r, &err);
	CHECK(q && !moat_plan_same_sandbox(p, q) && q->exempt.n == 0 && !q->exempt_set);
	if (q) {
		CHECK(mask(q, "/etc/shadow") && mask(q, "/home/u/.ssh"));
		CHECK_INT(moat_plan_to_json(q, &b), 0);
		CHECK(b.data && strstr(b.data, "\"exempt_paths\": []") &&
		      !strstr(b.data, "exempt_paths_apply"));
		moat_buf_release(&b);
		CHECK(!moat_plan_exempt(q, "/home/u/fixture.pem"));
	}
	moat_plan_free(q);
	moat_plan_free(p);

	/* the workspace is literal text in a pattern */
	moat_strv_release(&ex);
	moat_strv_add(&ex, "t/*.pem");
	p = build_exempt("/home/u/a*b", &ex, NULL, NULL, NULL, &r, &err);
	CHECK(p && p->exempt.n == 1 && !strcmp(p->exempt.v[0], "/home/u/a\\*b/t/*.pem"));
	CHECK(p && moat_plan_exempt(p, "/home/u/a*b/t/x.pem"));
	CHECK(p && !moat_plan_exempt(p, "/home/u/aXb/t/x.pem"));
	moat_plan_free(p);
	/* at most MOAT_PLAN_MAX_PATHS */
	moat_strv_release(&ex);
	for (int i = 0; i <= MOAT_PLAN_MAX_PATHS; i++) {
		char s[32];

		snprintf(s, sizeof(s), "/x/%d", i);
		if (i < MOAT_PLAN_MAX_PATHS)
			moat_strv_add(&ex, s);
	}
	p = build_exempt("/home/u/proj", &ex, NULL, NULL, NULL, &r, &err);
	CHECK(p && r == 0);
	moat_plan_free(p);
	{
		char *v[MOAT_PLAN_MAX_PATHS + 1];
		char s[MOAT_PLAN_MAX_PATHS + 1][16];
		struct moat_strv big = {.v = v, .n = MOAT_PLAN_MAX_PATHS + 1};

		for (int i = 0; i <= MOAT_PLAN_MAX_PATHS; i++) {
			snprintf(s[i], sizeof(s[i]), "/x/%d", i);
			v[i] = s[i];
		}
		p = build_exempt("/home/u/proj", &big, NULL, NULL, NULL, &r, &err);
		CHECK(!p && r == -E2BIG && strstr(err.msg, "too many exempt_paths"));
	}
	moat_strv_release(&ex);
	moat_strv_release(&extra);
	moat_strv_release(&proj);
}

/* An early start (spawn.c) is used only by a plan that asks for exactly
 * what it made: every plan that denies the network with namespaces must fit
 * it at every ABI, or each call starts its sandbox twice (the TCP rules
 * must be handled in the early start as in the plan). */
static void test_plan_early(void)
{
	struct moat_kfeatures kf;
	struct moat_profile net_deny;
	struct moat_plan *p;
	int rc;

	memset(&net_deny, 0, sizeof(net_deny));
	net_deny.net = MOAT_NET_DENY;
	net_deny.set |= MOAT_PF_NET;
	for (int abi = 0; abi <= MOAT_LL_ABI_MAX + 1; abi++) {
		moat_kfeatures_full(&kf);
		kf.landlock_abi = abi;
		p = build("workspace-write-no-network", &kf, NULL, &rc);
		CHECK_INT(rc, 0);
		CHECKF(p && moat_plan_fits_early(&kf, false, p), "workspace-write-no-network, ABI %d", abi);
		moat_plan_free(p);
		p = build("workspace-write", &kf, &net_deny, &rc);
		CHECK_INT(rc, 0);
		CHECKF(p && moat_plan_fits_early(&kf, false, p), "workspace-write --net deny, ABI %d", abi);
		moat_plan_free(p);
		p = build("readonly", &kf, NULL, &rc);
		CHECK_INT(rc, 0);
		CHECKF(p && moat_plan_fits_early(&kf, false, p), "readonly, ABI %d", abi);
		moat_plan_free(p);
		/* the network allowed: no network namespace, not the early one
		 * of a denied network, but exactly the one of an allowed one */
		p = build("workspace-write", &kf, NULL, &rc);
		CHECK_INT(rc, 0);
		CHECKF(p && !moat_plan_fits_early(&kf, false, p), "workspace-write, ABI %d", abi);
		CHECKF(p && moat_plan_fits_early(&kf, true, p),
		       "workspace-write, the network allowed, ABI %d", abi);
		moat_plan_free(p);
		p = build("workspace-write-no-network", &kf, NULL, &rc);
		CHECKF(p && !moat_plan_fits_early(&kf, true, p),
		       "workspace-write-no-network is not an allowed network's, ABI %d", abi);
		moat_plan_free(p);
	}
	/* without user namespaces (Landlock + seccomp only): the early child
	 * loads this mode's filter, and the plans that deny the network ask
	 * for exactly it */
	for (int abi = 0; abi <= MOAT_LL_ABI_MAX + 1; abi++) {
		moat_kfeatures_full(&kf);
		kf.userns = false;
		kf.ns_admin = false;
		kf.landlock_abi = abi;
		p = build("workspace-write-no-network", &kf, NULL, &rc);
		CHECKF(p && moat_plan_fits_early(&kf, false, p),
		       "no namespaces: workspace-write-no-network, ABI %d", abi);
		CHECKF(p && !p->mntns && p->seccomp &&
			   moat_plan_seccomp_variant(p) ==
			       (MOAT_SC_NO_INET | MOAT_SC_NO_UNIX | MOAT_SC_NO_NS),
		       "no namespaces: the filter of the mode, ABI %d", abi);
		moat_plan_free(p);
		p = build("workspace-write", &kf, &net_deny, &rc);
		CHECKF(p && moat_plan_fits_early(&kf, false, p), "no namespaces: --net deny, ABI %d",
		       abi);
		moat_plan_free(p);
		p = build("readonly", &kf, NULL, &rc);
		CHECKF(p && moat_plan_fits_early(&kf, false, p), "no namespaces: readonly, ABI %d", abi);
		moat_plan_free(p);
		/* the network allowed: another filter, not the early one; and
		 * no early start for it in this mode */
		p = build("workspace-write", &kf, NULL, &rc);
		CHECKF(p && !moat_plan_fits_early(&kf, false, p), "no namespaces: workspace-write, ABI %d",
		       abi);
		CHECKF(p && !moat_plan_fits_early(&kf, true, p),
		       "no namespaces: no early start with the network allowed, ABI %d", abi);
		moat_plan_free(p);
	}
	/* a masked /proc (podman, Kubernetes): the namespaces but the PID
	 * one, every mask kept, exactly one gap more than the full plan;
	 * and the early start asks for the same */
	for (int net = 0; net < 2; net++) {
		moat_kfeatures_full(&kf);
		kf.fresh_proc = false;
		p = build(net ? "workspace-write" : "workspace-write-no-network", &kf, NULL, &rc);
		CHECK_INT(rc, 0);
		CHECKF(p && p->userns && p->mntns && p->ipcns && p->netns == !net && !p->pidns &&
			   !p->fresh_proc && p->private_tmp && p->seccomp_no_ns,
		       "masked /proc: namespaces but the PID one (net %d)", net);
		CHECKF(p && p->feat[MOAT_FEAT_PIDNS].requested && !p->feat[MOAT_FEAT_PIDNS].enforced &&
			   p->feat[MOAT_FEAT_SECRETS].enforced &&
			   p->feat[MOAT_FEAT_PRIVATE_TMP].enforced &&
			   p->feat[MOAT_FEAT_HOST_SOCKETS].enforced &&
			   strstr(p->feat[MOAT_FEAT_PIDNS].hint, "fresh /proc"),
		       "masked /proc: pid-namespace is the gap, with its hint (net %d)", net);
		CHECKF(p && moat_plan_gaps(p, NULL, 0) == 1, "masked /proc: one gap (net %d)", net);
		CHECKF(p && moat_plan_fits_early(&kf, net, p), "masked /proc: the early start fits (net %d)", net);
		moat_plan_free(p);
	}
	/* root without user namespaces makes the other namespaces: no fit */
	moat_kfeatures_full(&kf);
	kf.userns = false;
	kf.ns_admin = true;
	p = build("workspace-write-no-network", &kf, NULL, &rc);
	CHECK(p && !moat_plan_fits_early(&kf, false, p));
	moat_plan_free(p);
}

/* A sandbox armed ahead of its call is the call's only when the call's plan
 * asks for the same sandbox: the working directory, the command and the
 * timeout may differ, nothing else. */
static void test_same_sandbox(void)
{
	struct moat_kfeatures kf, kf_old;
	struct moat_plan *a, *b, *c;
	struct moat_profile over;
	static char *argv2[] = {"/bin/sh", "-c", "make", NULL};
	int rc;

	moat_kfeatures_full(&kf);
	a = build("workspace-write-no-network", &kf, NULL, &rc);
	b = build("workspace-write-no-network", &kf, NULL, &rc);
	if (!a || !b) {
		CHECK(0);
		moat_plan_free(a);
		moat_plan_free(b);
		return;
	}
	CHECK(moat_plan_same_sandbox(a, b));
	/* the call's own directory, command and timeout */
	free(b->cwd);
	b->cwd = strdup("/home/u/proj");
	b->argv = argv2;
	b->timeout_s = 7;
	CHECK(moat_plan_same_sandbox(a, b));
	/* anything else: another sandbox */
	b->fs[0].optional = !b->fs[0].optional;
	CHECK(!moat_plan_same_sandbox(a, b));
	b->fs[0].optional = !b->fs[0].optional;
	b->mem_bytes++;
	CHECK(!moat_plan_same_sandbox(a, b));
	b->mem_bytes--;
	b->masks[0].origin[0] ^= 1;
	CHECK(!moat_plan_same_sandbox(a, b));
	b->masks[0].origin[0] ^= 1;
	b->seccomp_no_ns = !b->seccomp_no_ns;
	CHECK(!moat_plan_same_sandbox(a, b));
	b->seccomp_no_ns = !b->seccomp_no_ns;
	CHECK(moat_plan_same_sandbox(a, b));
	/* another profile, a flag layer, an older kernel */
	c = build("workspace-write", &kf, NULL, &rc);
	CHECK(c && !moat_plan_same_sandbox(a, c));
	moat_plan_free(c);
	moat_profile_init(&over, "flags");
	over.pids = 17;
	over.set = MOAT_PF_PIDS;
	c = build("workspace-write-no-network", &kf, &over, &rc);
	CHECK(c && !moat_plan_same_sandbox(a, c));
	moat_plan_free(c);
	moat_profile_release(&over);
	kf_old = kf;
	kf_old.landlock_abi = 3;
	c = build("workspace-write-no-network", &kf_old, NULL, &rc);
	CHECK(c && !moat_plan_same_sandbox(a, c));
	moat_plan_free(c);
	moat_plan_free(a);
	moat_plan_free(b);
}

/* accepted gaps: names to sets and back (src/core/gaps.c) */
static void test_gap_sets(void)
{
	unsigned set = 0;
	const char *bad = NULL;
	size_t badlen = 0;
	char out[512];

	for (int f = 0; f < MOAT_FEAT__COUNT; f++) {
		const char *n = moat_feature_name((enum moat_feature)f);

		CHECK_INT(moat_feature_by_name(n, strlen(n)), f);
	}
	CHECK_INT(moat_feature_by_name("pid", 3), -1);
	CHECK_INT(moat_feature_by_name("pid-namespace", 4), -1);
	CHECK_INT(moat_parse_gap_list("pid-namespace,metadata", &set, &bad, &badlen), 0);
	CHECK(set == ((1u << MOAT_FEAT_PIDNS) | (1u << MOAT_FEAT_METADATA)));
	CHECK_INT((int)moat_gap_set_names(set, ",", out, sizeof(out)), 2);
	CHECK_STR(out, "pid-namespace,metadata");
	CHECK_INT(moat_parse_gap_list("secrets,pid-ns", &set, &bad, &badlen), -EINVAL);
	CHECK(badlen == 6 && !strncmp(bad, "pid-ns", 6));
	CHECK_INT(moat_parse_gap_list("", &set, &bad, &badlen), -EINVAL);
	CHECK_INT(moat_parse_gap_list("metadata,", &set, &bad, &badlen), -EINVAL);
	CHECK(badlen == 0);
	CHECK_INT((int)moat_gap_set_names(0, ",", out, sizeof(out)), 0);
	CHECK_STR(out, "");
	/* a short buffer: cut, terminated, every name counted */
	CHECK_INT((int)moat_gap_set_names((1u << MOAT_FEAT__COUNT) - 1, ", ", out, 8),
		  MOAT_FEAT__COUNT);
	CHECK(strlen(out) == 7);
}

int main(void)
{
	test_gap_sets();
	test_same_sandbox();
	test_plan_early();
	test_normpath();
	test_builtin();
	test_layering();
	test_strv_set();
	test_parse();
	test_env();
	test_plan_full();
	test_plan_degraded();
	test_plan_errors();
	test_env_limit();
	test_seccomp_rows();
	test_named_profiles();
	test_extends_depth();
	test_profile_names();
	test_tool_rules();
	test_profile_copy();
	test_ro_inside_rw();
	test_user_config();
	test_host_sockets();
	test_mask_inner_globstar();
	test_plan_exempt();
	return tap_done();
}
