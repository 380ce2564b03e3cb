/* Unit tests for the strict JSON helpers (base/json.c) and the configuration
 * loader (core/config.c): defaults, the Aar document shapes, exact
 * file:line:column of every kind of error, project-file refusals, variable
 * expansion, limits at their boundary, and the to_json round trip. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "core/config.h"
#include "tap.h"

/* ---- helpers ------------------------------------------------------------ */

static const char *fake_env(const char *name, void *ud)
{
	static const char *const vars[][2] = {
	    {"HOME", "/home/u"}, {"PROJ", "/srv/proj"},	  {"EMPTY", ""},   {"STAR", "/a*b"},
	    {"DOLLAR", "/d$x"},	 {"REL", "relative/dir"}, {"TILDE", "~x"}, {"USER", "alice"},
	};
	(void)ud;
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(vars); i++)
		if (!strcmp(vars[i][0], name))
			return vars[i][1];
	return NULL;
}

static const char *relative_home_env(const char *name, void *ud)
{
	(void)ud;
	return !strcmp(name, "HOME") ? "home/u" : NULL;
}

static int load(struct moat_config *c, const char *doc, unsigned flags, struct moat_error *e)
{
	moat_error_clear(e);
	return moat_config_load_string(c, doc, strlen(doc), "t.json", flags, e);
}

static bool starts_with(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static char *repeat(const char *s, size_t n)
{
	struct moat_buf b = MOAT_BUF_INIT;

	for (size_t i = 0; i < n; i++)
		moat_buf_puts(&b, s);
	return moat_buf_steal(&b);
}

/* ---- defaults ----------------------------------------------------------- */

static void test_defaults(void)
{
	struct moat_config c;
	size_t n;

	CHECK_INT(moat_config_init(&c), 0);
	CHECK(!c.read_only && !c.require_approval_for_writes && !c.require_approval_for_execute);
	CHECK(!c.log_all_commands);
	CHECK(c.hardline && c.default_denied_paths && c.default_denied_commands);
	CHECK(c.sandbox_mode == MOAT_SANDBOX_LOCAL && !c.sandbox_workspace && !c.max_memory_mb);
	CHECK(!c.allowed_paths_set && !c.allowed_paths.n && !c.npath_rules && !c.ntools);
	CHECK(!c.allow_local_network);
	CHECK(!c.approvals && !c.napprovals);
	CHECK_INT(c.approval_timeout_s, 120);
	CHECK(!c.approval_timeout_set);
	CHECK(!c.audit_log && !c.audit_fsync && c.audit_required && !c.audit_syslog);
	moat_config_release(&c);

	for (n = 0; moat_default_denied_paths[n]; n++)
		;
	CHECK_INT(n, 90); /* 25 from seed 000 + 65 additions */
	CHECK_STR(moat_default_denied_paths[0], "/etc/shadow");
	CHECK_STR(moat_default_denied_paths[24], "**/.pypirc");
	CHECK_STR(moat_default_denied_paths[29], "**/.pgpass");
	CHECK_STR(moat_default_denied_paths[62], "**/.config/BraveSoftware/**");
	for (n = 0; moat_default_denied_commands[n]; n++)
		;
	CHECK_INT(n, 36); /* 26 from seed 000 + 10 additions */
	CHECK_STR(moat_default_denied_commands[0], "rm -rf /");
	CHECK_STR(moat_default_denied_commands[12], ":(){:|:&};:");
	CHECK_STR(moat_default_denied_commands[25], "history -c");
	CHECK_STR(moat_default_denied_commands[35], "/dev/udp");

	/* moat_config_new / free */
	struct moat_config *p = NULL;

	CHECK_INT(moat_config_new(&p), 0);
	CHECK(p && p->hardline);
	CHECK(moat_config_free(p) == NULL);
	CHECK(moat_config_free(NULL) == NULL);
}

/* ---- document shapes ---------------------------------------------------- */

static void test_shapes(void)
{
	struct moat_config a, b;
	struct moat_error e;
	char *ja, *jb;

	moat_config_init(&a);
	moat_config_init(&b);
	CHECK_INT(load(&a, "{\"read_only\": true, \"denied_paths\": [\"/x/**\"]}", 0, &e), 0);
	CHECK_INT(
	    load(&b, "{\"safety\": {\"read_only\": true, \"denied_paths\": [\"/x/**\"]}}", 0, &e),
	    0);
	ja = moat_config_to_json(&a);
	jb = moat_config_to_json(&b);
	CHECK(ja && jb && !strcmp(ja, jb));
	CHECK(a.read_only && a.denied_paths.n == 1);
	free(ja);
	free(jb);
	moat_config_release(&a);
	moat_config_release(&b);

	/* empty documents, Aar keys without safety, safety: {} */
	static const char *const ok[] = {
	    "{}",
	    "  {\n}\n",
	    "{\"safety\": {}}",
	    "{\"provider\": {\"name\": \"x\", \"deep\": [1, {\"a\": null}]}, \"max_steps\": 30, "
	    "\"timeout\": 120.0, \"model\": \"m\", \"system_prompt\": \"s\", \"max_tokens\": 5, "
	    "\"temperature\": 0.2}",
	};
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(ok); i++) {
		moat_config_init(&a);
		CHECKF(load(&a, ok[i], 0, &e) == 0, "document %zu loads (%s)", i, e.msg);
		CHECK(!a.read_only && a.hardline && !a.denied_paths.n);
		moat_config_release(&a);
	}
}

/* Seed 000's example AgentConfig, and its other snippets. */
static void test_aar_examples(void)
{
	static const char aar[] =
	    "{\n"
	    "  \"provider\": {\n"
	    "    \"name\": \"anthropic\",\n"
	    "    \"model\": \"claude-sonnet-4-6\"\n"
	    "  },\n"
	    "  \"safety\": {\n"
	    "    \"read_only\": false,\n"
	    "    \"require_approval_for_writes\": true,\n"
	    "    \"require_approval_for_execute\": true,\n"
	    "    \"denied_paths\": [\"**/.env\", \"**/secrets/**\"],\n"
	    "    \"allowed_paths\": [\"/home/user/project/**\"],\n"
	    "    \"sandbox\": {\n"
	    "      \"mode\": \"auto\",\n"
	    "      \"linux\": { \"workspace\": \"/home/user/project\" },\n"
	    "      \"windows\": { \"workspace\": \"C:/Users/user/project\" }\n"
	    "    }\n"
	    "  },\n"
	    "  \"max_steps\": 30,\n"
	    "  \"timeout\": 120.0\n"
	    "}\n";
	static const char *const snippets[] = {
	    "{\"safety\": {\"allowed_paths\": [\"<cwd>/**\", \"/home/user/shared/**\"]}}",
	    "{\"safety\": {\"sandbox\": {\"mode\": \"linux\", \"linux\": {\"workspace\": "
	    "\"/home/user/project\", \"max_memory_mb\": 512}}}}",
	    "{\"safety\": {\"sandbox\": {\"mode\": \"local\"}}}",
	    "{\"safety\": {\"sandbox\": {\"mode\": \"auto\", \"wsl\": {\"profile\": "
	    "\"~/.aar/distros/alpine-base.json\"}, \"windows\": {\"use_low_integrity\": false}}}}",
	    "{\"safety\": {\"read_only\": true, \"require_approval_for_writes\": true}}",
	};
	struct moat_config c;
	struct moat_error e;

	moat_config_init(&c);
	CHECKF(load(&c, aar, 0, &e) == 0, "aar example loads (%s: %s)", e.where, e.msg);
	CHECK(!c.read_only && c.require_approval_for_writes && c.require_approval_for_execute);
	CHECK_INT(c.denied_paths.n, 2);
	CHECK_STR(c.denied_paths.v[1], "**/secrets/**");
	CHECK_INT(c.denied_paths.loc[1].line, 10);
	CHECK_INT(c.denied_paths.loc[1].column, 33);
	CHECK_STR(c.denied_paths.loc[1].file, "t.json");
	CHECK(c.allowed_paths_set && c.allowed_paths.n == 1);
	CHECK_STR(c.allowed_paths.v[0], "/home/user/project/**");
	CHECK(c.sandbox_mode == MOAT_SANDBOX_AUTO);
	CHECK_STR(c.sandbox_workspace, "/home/user/project");
	moat_config_release(&c);

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(snippets); i++) {
		moat_config_init(&c);
		CHECKF(load(&c, snippets[i], 0, &e) == 0, "seed snippet %zu loads (%s)", i, e.msg);
		moat_config_release(&c);
	}
	moat_config_init(&c);
	load(&c, snippets[0], 0, &e);
	CHECK_STR(c.allowed_paths.v[0], "<cwd>/**"); /* the policy expands it */
	moat_config_release(&c);
	moat_config_init(&c);
	load(&c, snippets[1], 0, &e);
	CHECK(c.sandbox_mode == MOAT_SANDBOX_LINUX && c.max_memory_mb == 512);
	moat_config_release(&c);
}

/* ---- errors, with exact positions --------------------------------------- */

struct err_case {
	const char *doc;
	unsigned flags;
	const char *where;
	const char *key;
	const char *msg; /* prefix */
};

#define PROJ MOAT_CONFIG_PROJECT
#define LOOSEN "not allowed in a project config: it could loosen the policy"
#define LOOSEN_FALSE "false is not allowed in a project config: it could loosen the policy"

static const struct err_case err_cases[] = {
    /* wrong types */
    {"{\n  \"read_only\": \"yes\"\n}", 0, "t.json:2:16", "safety.read_only",
     "expected boolean, got string"},
    {"{\"denied_paths\": \"/x\"}", 0, "t.json:1:18", "safety.denied_paths",
     "expected array, got string"},
    {"{\"denied_commands\": [\"rm\", 3]}", 0, "t.json:1:28", "safety.denied_commands[1]",
     "expected string, got integer"},
    {"{\"safety\": []}", 0, "t.json:1:12", "safety", "expected object, got array"},
    {"[]", 0, "t.json:1:1", "", "expected object, got array"},
    {"{\"sandbox\": {\"linux\": {\"max_memory_mb\": 0}}}", 0, "t.json:1:41",
     "safety.sandbox.linux.max_memory_mb", "expected an integer from 1 to 1048576, got 0"},
    {"{\"sandbox\": {\"linux\": {\"max_memory_mb\": 1048577}}}", 0, "t.json:1:41",
     "safety.sandbox.linux.max_memory_mb", "expected an integer from 1 to 1048576"},
    {"{\"sandbox\": {\"linux\": {\"max_memory_mb\": 1.5}}}", 0, "t.json:1:41",
     "safety.sandbox.linux.max_memory_mb", "expected integer, got number"},
    {"{\"sandbox\": {\"mode\": \"windows\"}}", 0, "t.json:1:22", "safety.sandbox.mode",
     "mode \"windows\" is not available in moat"},
    {"{\"sandbox\": {\"mode\": \"docker\"}}", 0, "t.json:1:22", "safety.sandbox.mode",
     "expected \"local\", \"linux\" or \"auto\""},
    {"{\"sandbox\": {\"windows\": 1}}", 0, "t.json:1:25", "safety.sandbox.windows",
     "expected object, got integer"},
    {"{\"network\": {\"allow_local\": null}}", 0, "t.json:1:29", "safety.network.allow_local",
     "expected boolean, got null"},
    /* unknown keys, at the key */
    {"{\n"
     "  \"safety\": {\n"
     "    \"path_rules\": [\n"
     "      {\"pattern\": \"/a/**\"},\n"
     "      {\"pattern\": \"/b/**\", \"allow_read\": false},\n"
     "      {\"pattern\": \"/c/**\", \"alow_write\": true}\n"
     "    ]\n"
     "  }\n"
     "}\n",
     0, "t.json:6:28", "safety.path_rules[2].alow_write",
     "unknown key (did you mean \"allow_write\"?)"},
    {"{\"safety\": {}, \"read_only\": true}", 0, "t.json:1:16", "read_only",
     "unknown key (safety keys belong inside \"safety\")"},
    {"{\"safety\": {}, \"tools\": {}}", 0, "t.json:1:16", "tools",
     "unknown key (safety keys belong inside \"safety\")"},
    {"{\"provider\": {}, \"approval\": {}}", 0, "t.json:1:18", "approval", "unknown key"},
    {"{\"safty\": {}}", 0, "t.json:1:2", "safety.safty", "unknown key"},
    {"{\"sandbox\": {\"profies\": {}}}", 0, "t.json:1:14", "safety.sandbox.profies",
     "unknown key (did you mean \"profiles\"?)"},
    {"{\"network\": {\"allow\": []}}", 0, "t.json:1:14", "safety.network.allow", "unknown key"},
    {"{\"weird\\nkey\": 1}", 0, "t.json:1:2", "safety.weird?key", "unknown key"},
    /* duplicate keys, at the second key */
    {"{\n  \"read_only\": true,\n  \"read_only\": false\n}", 0, "t.json:3:3", "",
     "duplicate object key \"read_only\""},
    {"{\"safety\": {\"sandbox\": {\"mode\": \"linux\",\n"
     "  \"linux\": {\"workspace\": \"/w\", \"workspace\": \"/x\"}}}}",
     0, "t.json:2:32", "", "duplicate object key \"workspace\""},
    {"{\"provider\": {\"a\": 1, \"a\": 1}}", 0, "t.json:1:23", "", "duplicate object key \"a\""},
    {"{\"r\\u0065ad_only\": true, \"read_only\": true}", 0, "t.json:1:26", "",
     "duplicate object key \"read_only\""},
    /* NUL and UTF-8 */
    {"{\n  \"denied_paths\": [\"/a\\u0000b\"]\n}", 0, "t.json:2:20", "",
     "string contains a NUL character (\\u0000)"},
    {"{\"denied_paths\": [\"/a\xff\"]}", 0, "t.json:1:19", "", "invalid UTF-8"},
    {"\xef\xbb\xbf{}", 0, "t.json:1:1", "", "byte order mark not allowed"},
    /* syntax */
    {"{\n  \"a\": tru\n}", 0, "t.json:2:8", "", "invalid token near 'tru'"},
    {"{\"read_only\": true,}", 0, "t.json:1:20", "", "string or '}' expected"},
    {"{\"read_only\": true} {}", 0, "t.json:1:21", "", "end of file expected"},
    {"", 0, "t.json:1:1", "", "'[' or '{' expected"},
    /* patterns */
    {"{\n  \"command_rules\": [\n    {\"pattern\": \"(ab\", \"is_regex\": true, \"decision\": "
     "\"deny\"}\n  ]\n}",
     0, "t.json:3:17", "safety.command_rules[0].pattern",
     "invalid regex at offset 3: missing closing parenthesis"},
    {"{\"command_rules\": [{\"is_regex\": true, \"decision\": \"deny\", \"pattern\": \"a{2,1}\"}]}",
     0, "t.json:1:70", "safety.command_rules[0].pattern", "invalid regex at offset"},
    {"{\"command_rules\": [{\"pattern\": \"git [\", \"decision\": \"ask\", \"match\": \"glob\"}]}", 0,
     "t.json:1:32", "safety.command_rules[0].pattern", "invalid glob"},
    {"{\"command_rules\": [{\"pattern\": \"x\", \"decision\": \"ask\", \"match\": \"fuzzy\"}]}", 0,
     "t.json:1:65", "safety.command_rules[0].match",
     "expected \"substring\", \"glob\" or \"regex\""},
    {"{\"command_rules\": [{\"pattern\": \"x\", \"decision\": \"ask\", \"match\": \"glob\", "
     "\"is_regex\": true}]}",
     0, "t.json:1:65", "safety.command_rules[0].match",
     "\"match\": \"glob\" contradicts \"is_regex\": true"},
    {"{\"command_rules\": [{\"pattern\": \"x\", \"decision\": \"ask\", \"is_regex\": false, "
     "\"match\": \"regex\"}]}",
     0, "t.json:1:84", "safety.command_rules[0].match",
     "\"match\": \"regex\" contradicts \"is_regex\": false"},
    {"{\"command_rules\": [{\"pattern\": \" \\t\", \"decision\": \"deny\"}]}", 0, "t.json:1:32",
     "safety.command_rules[0].pattern", "an empty or blank substring would match every"},
    {"{\"path_rules\": [{\"pattern\": \"/a/[bc\"}]}", 0, "t.json:1:29",
     "safety.path_rules[0].pattern", "invalid glob: unmatched '['"},
    {"{\"denied_paths\": [\"/ok/**\",\n                  \"/x/{a,b\"]}", 0, "t.json:2:19",
     "safety.denied_paths[1]", "invalid glob: unmatched '{'"},
    {"{\"read_only_paths\": [\"\"]}", 0, "t.json:1:22", "safety.read_only_paths[0]",
     "empty pattern"},
    {"{\"denied_commands\": [\"\"]}", 0, "t.json:1:22", "safety.denied_commands[0]",
     "empty pattern"},
    {"{\"denied_paths\": [\"$NOPE/x\"]}", 0, "t.json:1:19", "safety.denied_paths[0]",
     "environment variable NOPE is not set"},
    {"{\"allowed_paths\": [\"$EMPTY/**\"]}", 0, "t.json:1:20", "safety.allowed_paths[0]",
     "environment variable EMPTY is empty"},
    {"{\"path_rules\": [{\"pattern\": \"~bob/x\"}]}", 0, "t.json:1:29",
     "safety.path_rules[0].pattern", "~user is not supported"},
    {"{\"sandbox\": {\"linux\": {\"workspace\": \"${PROJ\"}}}", 0, "t.json:1:37",
     "safety.sandbox.linux.workspace", "invalid variable reference"},
    /* required keys and enumerations */
    {"{\"path_rules\": [{\"allow_read\": true}]}", 0, "t.json:1:17", "safety.path_rules[0].pattern",
     "missing required key \"pattern\""},
    {"{\"command_rules\": [{\"pattern\": \"git *\"}]}", 0, "t.json:1:20",
     "safety.command_rules[0].decision", "missing required key \"decision\""},
    {"{\"command_rules\": [{\"pattern\": \"git *\", \"decision\": \"maybe\"}]}", 0, "t.json:1:53",
     "safety.command_rules[0].decision", "expected \"allow\", \"deny\" or \"ask\""},
    {"{\"command_rules\": [{\"pattern\": \"git *\", \"decision\": \"ALLOW\"}]}", 0, "t.json:1:53",
     "safety.command_rules[0].decision", "expected \"allow\""},
    {"{\"tools\": {\"bad name\": {\"effects\": []}}}", 0, "t.json:1:12", "safety.tools.bad name",
     "invalid tool name"},
    {"{\"tools\": {\"\": {\"effects\": []}}}", 0, "t.json:1:12", "safety.tools.",
     "invalid tool name"},
    {"{\"tools\": {\"t\": {}}}", 0, "t.json:1:17", "safety.tools.t.effects",
     "missing required key \"effects\""},
    {"{\"tools\": {\"t\": {\"effects\": [\"read\", \"delete\"]}}}", 0, "t.json:1:38",
     "safety.tools.t.effects[1]", "expected \"read\", \"write\", \"execute\" or \"network\""},
    {"{\"tools\": {\"t\": {\"effects\": [], \"path_args\": [\"\"]}}}", 0, "t.json:1:47",
     "safety.tools.t.path_args[0]", "empty argument name"},
    {"{\"tools\": {\"t\": {\"effects\": [], \"command_arg\": 5}}}", 0, "t.json:1:48",
     "safety.tools.t.command_arg", "expected string, got integer"},
    {"{\"tools\": {\"t\": {\"effects\": [], \"paths\": []}}}", 0, "t.json:1:33",
     "safety.tools.t.paths", "unknown key"},
    {"{\"tools\": {\"t\": {\"effects\": [], \"path_arg\": []}}}", 0, "t.json:1:33",
     "safety.tools.t.path_arg", "unknown key (did you mean \"path_args\"?)"},
    {"{\"network\": {\"allow_domains\": [\"http://x.com\"]}}", 0, "t.json:1:32",
     "safety.network.allow_domains[0]", "invalid domain"},
    {"{\"network\": {\"block_domains\": [\"a b\"]}}", 0, "t.json:1:32",
     "safety.network.block_domains[0]", "invalid domain"},
/* sandbox profiles: fail closed (seed 002), at the place */
#define SP(x) "{\"sandbox\": {\"profiles\": {" x "}}}"
#define SPP(x) SP("\"p\": {\"extends\": \"workspace-write\", " x "}")
    {SP("\"p\": {\"extends\": \"nope\"}"), 0, "t.json:1:44", "safety.sandbox.profiles.p.extends",
     "profile 'p' extends the unknown profile 'nope'"},
    {SP("\"p\": {}"), 0, "t.json:1:32", "safety.sandbox.profiles.p.extends",
     "missing required key \"extends\""},
    {SP("\"a\": {\"extends\": \"b\"},\n \"b\": {\"extends\": \"a\"}"), 0, "t.json:2:19",
     "safety.sandbox.profiles.b.extends",
     "profiles extend each other in a cycle: 'a' -> 'b' -> 'a'"},
    {SP("\"a\": {\"extends\": \"a\"}"), 0, "t.json:1:44", "safety.sandbox.profiles.a.extends",
     "profiles extend each other in a cycle: 'a' -> 'a'"},
    {SP("\"c\": {\"extends\": \"a\"}, \"a\": {\"extends\": \"b\"}, \"b\": {\"extends\": \"x\"}"), 0,
     "t.json:1:90", "safety.sandbox.profiles.b.extends",
     "profile 'b' extends the unknown profile 'x'"},
    {SP("\"readonly\": {\"extends\": \"readonly\"}"), 0, "t.json:1:27",
     "safety.sandbox.profiles.readonly", "the built-in profile 'readonly' cannot be redefined"},
    {SP("\"a b\": {\"extends\": \"readonly\"}"), 0, "t.json:1:27", "safety.sandbox.profiles.a b",
     "invalid profile name"},
    {SP("\"p\": {\"extends\": \"a/b\"}"), 0, "t.json:1:44", "safety.sandbox.profiles.p.extends",
     "invalid profile name"},
    {SP("\"p\": \"readonly\""), 0, "t.json:1:32", "safety.sandbox.profiles.p",
     "expected object, got string"},
    {"{\"sandbox\": {\"profiles\": []}}", 0, "t.json:1:26", "safety.sandbox.profiles",
     "expected object, got array"},
    {SP("\"p\": {\"extends\": \"readonly\", \"rw\": [\"/x\"]}"), 0, "t.json:1:27",
     "safety.sandbox.profiles.p",
     "profile 'p': profile 'readonly' makes the filesystem dimension immutable"},
    {SP("\"q\": {\"extends\": \"p\", \"network\": [443]},\n"
	" \"p\": {\"extends\": \"workspace-write\", \"immutable\": [\"network\"], \"network\": "
	"\"deny\"}"),
     0, "t.json:1:27", "safety.sandbox.profiles.q",
     "profile 'q': profile 'p' makes the network dimension"},
    {SPP("\"netwrok\": \"deny\""), 0, "t.json:1:63", "safety.sandbox.profiles.p.netwrok",
     "unknown key (did you mean \"network\"?)"},
    {SPP("\"network\": 5"), 0, "t.json:1:74", "safety.sandbox.profiles.p.network",
     "expected \"deny\", \"allow\" or an array of ports, got integer"},
    {SPP("\"network\": \"none\""), 0, "t.json:1:74", "safety.sandbox.profiles.p.network",
     "expected \"deny\", \"allow\" or an array of ports"},
    {SPP("\"network\": []"), 0, "t.json:1:74", "safety.sandbox.profiles.p.network",
     "expected at least one port"},
    {SPP("\"network\": [443, 0]"), 0, "t.json:1:80", "safety.sandbox.profiles.p.network[1]",
     "expected a port from 1 to 65535, got 0"},
    {SPP("\"network\": [65536]"), 0, "t.json:1:75", "safety.sandbox.profiles.p.network[0]",
     "expected a port from 1 to 65535, got 65536"},
    {SPP("\"network\": [\"443\"]"), 0, "t.json:1:75", "safety.sandbox.profiles.p.network[0]",
     "expected integer, got string"},
    {SPP("\"limits\": {\"mem_mb\": -1}"), 0, "t.json:1:84",
     "safety.sandbox.profiles.p.limits.mem_mb",
     "expected an integer from 0 (no limit) to 4194304, got -1"},
    {SPP("\"limits\": {\"pids\": 4194305}"), 0, "t.json:1:82",
     "safety.sandbox.profiles.p.limits.pids",
     "expected an integer from 0 (no limit) to 4194304, got 4194305"},
    {SPP("\"limits\": {\"nofile\": \"8\"}"), 0, "t.json:1:84",
     "safety.sandbox.profiles.p.limits.nofile", "expected integer, got string"},
    {SPP("\"limits\": {\"memory\": 1}"), 0, "t.json:1:74",
     "safety.sandbox.profiles.p.limits.memory", "unknown key"},
    {SPP("\"timeout_s\": 1.5"), 0, "t.json:1:76", "safety.sandbox.profiles.p.timeout_s",
     "expected integer, got number"},
    {SPP("\"timeout_s\": 31536001"), 0, "t.json:1:76", "safety.sandbox.profiles.p.timeout_s",
     "expected an integer from 0 (no limit) to 31536000"},
    {SPP("\"ro\": [\"relative/dir\"]"), 0, "t.json:1:70", "safety.sandbox.profiles.p.ro[0]",
     "expected an absolute path"},
    {SPP("\"rw\": [\"$REL/x\"]"), 0, "t.json:1:70", "safety.sandbox.profiles.p.rw[0]",
     "expected an absolute path"},
    {SPP("\"rw\": [\"$NOPE/x\"]"), 0, "t.json:1:70", "safety.sandbox.profiles.p.rw[0]",
     "environment variable NOPE is not set"},
    {SPP("\"ro\": \"/x\""), 0, "t.json:1:69", "safety.sandbox.profiles.p.ro",
     "expected array, got string"},
    {SPP("\"allow_sockets\": [\"\"]"), 0, "t.json:1:81",
     "safety.sandbox.profiles.p.allow_sockets[0]", "empty entry"},
    {SPP("\"mask\": [\"x.pem\"]"), 0, "t.json:1:72", "safety.sandbox.profiles.p.mask[0]",
     "expected an absolute path or glob"},
    {SPP("\"mask\": [\"/a/[b\"]"), 0, "t.json:1:72", "safety.sandbox.profiles.p.mask[0]",
     "invalid glob: unmatched '['"},
    {SPP("\"protect\": [\"../x\"]"), 0, "t.json:1:75", "safety.sandbox.profiles.p.protect[0]",
     "expected a path relative to the workspace"},
    {SPP("\"protect\": [\"/etc\"]"), 0, "t.json:1:75", "safety.sandbox.profiles.p.protect[0]",
     "expected a path relative to the workspace"},
    {SPP("\"env_keep\": [\"A-B\"]"), 0, "t.json:1:76", "safety.sandbox.profiles.p.env_keep[0]",
     "expected an environment variable name"},
    {SPP("\"env\": \"all\""), 0, "t.json:1:70", "safety.sandbox.profiles.p.env",
     "expected \"none\", \"restricted\" or \"full\""},
    {SPP("\"home\": \"rw\""), 0, "t.json:1:71", "safety.sandbox.profiles.p.home",
     "expected \"cow\" or \"ro\""},
    {SPP("\"workspace\": \"none\""), 0, "t.json:1:76", "safety.sandbox.profiles.p.workspace",
     "expected \"ro\" or \"rw\""},
    {SPP("\"fallback\": \"maybe\""), 0, "t.json:1:75", "safety.sandbox.profiles.p.fallback",
     "expected \"deny\", \"ask\" or \"warn\""},
    {SPP("\"immutable\": [\"net\"]"), 0, "t.json:1:77", "safety.sandbox.profiles.p.immutable[0]",
     "expected \"filesystem\", \"network\", \"process\" or \"environment\""},
    {SPP("\"extra\": {\"network\": \"deny\"}"), 0, "t.json:1:73",
     "safety.sandbox.profiles.p.extra.network", "unknown key"},
    {SPP("\"extra\": {\"rw\": [\"rel\"]}"), 0, "t.json:1:80",
     "safety.sandbox.profiles.p.extra.rw[0]", "expected an absolute path"},
    {SPP("\"description\": 5"), 0, "t.json:1:78", "safety.sandbox.profiles.p.description",
     "expected string, got integer"},
    {"{\"sandbox\": {\"profile\": \"nope\"}}", 0, "t.json:1:25", "safety.sandbox.profile",
     "unknown profile 'nope'"},
    {"{\"sandbox\": {\"profile\": \"\"}}", 0, "t.json:1:25", "safety.sandbox.profile",
     "invalid profile name"},
    {"{\"sandbox\": {\"fallback\": \"never\"}}", 0, "t.json:1:26", "safety.sandbox.fallback",
     "expected \"deny\", \"ask\" or \"warn\""},
    {"{\"sandbox\": {\"rules\": [{\"tool\": \"bash\"}]}}", 0, "t.json:1:24",
     "safety.sandbox.rules[0].profile", "missing required key \"profile\""},
    {"{\"sandbox\": {\"rules\": [{\"tool\": \"bash\", \"profile\": \"readonly\"},\n"
     "  {\"tool\": \"x\", \"profile\": \"nope\"}]}}",
     0, "t.json:2:28", "safety.sandbox.rules[1].profile", "unknown profile 'nope'"},
    {"{\"sandbox\": {\"rules\": [{\"tool\": \"b a\", \"profile\": \"readonly\"}]}}", 0,
     "t.json:1:33", "safety.sandbox.rules[0].tool", "invalid tool name"},
    {"{\"sandbox\": {\"rules\": {}}}", 0, "t.json:1:23", "safety.sandbox.rules",
     "expected array, got object"},
    {"{\"sandbox\": {\"rules\": [{\"tool\": \"t\", \"profile\": \"readonly\", \"args\": {}}]}}", 0,
     "t.json:1:61", "safety.sandbox.rules[0].args", "unknown key"},
    /* a project file may neither define nor pick a profile (it could loosen) */
    {SP("\"p\": {\"extends\": \"readonly\"}"), PROJ, "t.json:1:14", "safety.sandbox.profiles",
     LOOSEN},
    {"{\"sandbox\": {\"profile\": \"readonly\"}}", PROJ, "t.json:1:14", "safety.sandbox.profile",
     LOOSEN},
    {"{\"sandbox\": {\"fallback\": \"deny\"}}", PROJ, "t.json:1:14", "safety.sandbox.fallback",
     LOOSEN},
    {"{\"sandbox\": {\"rules\": []}}", PROJ, "t.json:1:14", "safety.sandbox.rules", LOOSEN},
    /* sandbox.accept_gaps: the user's only, every name known */
    {"{\"sandbox\": {\"accept_gaps\": [\"pid-namespace\"]}}", PROJ, "t.json:1:14",
     "safety.sandbox.accept_gaps",
     "not allowed in a project config: a repository must not accept gaps in its own sandbox"},
    {"{\"sandbox\": {\"accept_gaps\": []}}", PROJ, "t.json:1:14", "safety.sandbox.accept_gaps",
     "not allowed in a project config: a repository must not accept gaps"},
    {"{\"sandbox\": {\"accept_gaps\": [\"pid-namespace\",\n  \"pid-ns\"]}}", 0, "t.json:2:3",
     "safety.sandbox.accept_gaps[1]",
     "unknown protection \"pid-ns\" (expected one of: filesystem, truncate, secrets"},
    {"{\"sandbox\": {\"accept_gaps\": [\"\"]}}", 0, "t.json:1:30",
     "safety.sandbox.accept_gaps[0]", "unknown protection \"\""},
    {"{\"sandbox\": {\"accept_gaps\": \"metadata\"}}", 0, "t.json:1:29",
     "safety.sandbox.accept_gaps", "expected array, got string"},
    {"{\"sandbox\": {\"accept_gaps\": [1]}}", 0, "t.json:1:30", "safety.sandbox.accept_gaps[0]",
     "expected string, got integer"},
    /* project files: only tighten */
    {"{\"hardline\": false}", PROJ, "t.json:1:2", "safety.hardline", LOOSEN},
    {"{\"hardline\": true}", PROJ, "t.json:1:2", "safety.hardline", LOOSEN},
    {"{\"read_only\": false}", PROJ, "t.json:1:15", "safety.read_only", LOOSEN_FALSE},
    {"{\"require_approval_for_writes\": false}", PROJ, "t.json:1:33",
     "safety.require_approval_for_writes", LOOSEN_FALSE},
    {"{\"require_approval_for_execute\": false}", PROJ, "t.json:1:34",
     "safety.require_approval_for_execute", LOOSEN_FALSE},
    {"{\"default_denied_paths\": false}", PROJ, "t.json:1:2", "safety.default_denied_paths",
     LOOSEN},
    {"{\"safety\": {\"default_denied_commands\": false}}", PROJ, "t.json:1:13",
     "safety.default_denied_commands", LOOSEN},
    {"{\"tools\": {\"t\": {\"effects\": []}}}", PROJ, "t.json:1:2", "safety.tools", LOOSEN},
    {"{\"network\": {\"allow_local\": true}}", PROJ, "t.json:1:14", "safety.network.allow_local",
     LOOSEN},
    {"{\"sandbox\": {\"mode\": \"linux\"}}", PROJ, "t.json:1:14", "safety.sandbox.mode", LOOSEN},
    {"{\"sandbox\": {\"linux\": {\"workspace\": \"/\"}}}", PROJ, "t.json:1:24",
     "safety.sandbox.linux.workspace", LOOSEN},
    {"{\"sandbox\": {\"linux\": {\"max_memory_mb\": 64}}}", PROJ, "t.json:1:24",
     "safety.sandbox.linux.max_memory_mb", LOOSEN},
    {"{\"allowed_paths\": null}", PROJ, "t.json:1:19", "safety.allowed_paths",
     "null is not allowed in a project config"},
    /* a project file is as strict as any other */
    {"{\"denied_paths\": [\"/x/**\"], \"bogus\": 1}", PROJ, "t.json:1:29", "safety.bogus",
     "unknown key"},
    /* approvals and the audit log */
    {"{\"approvals\": {}}", 0, "t.json:1:15", "safety.approvals", "expected array, got object"},
    {"{\"approvals\": [\"git *\"]}", 0, "t.json:1:16", "safety.approvals[0]",
     "expected object, got string"},
    {"{\"approvals\": [{\"tool\": \"bash\", \"arg\": \"command\"}]}", 0, "t.json:1:16",
     "safety.approvals[0].match", "missing required key \"match\""},
    {"{\"approvals\": [{\"arg\": \"command\", \"match\": \"x\"}]}", 0, "t.json:1:16",
     "safety.approvals[0].tool", "missing required key \"tool\""},
    {"{\"approvals\": [{\"tool\": \"bash\", \"match\": \"x\"}]}", 0, "t.json:1:16",
     "safety.approvals[0].arg", "missing required key \"arg\""},
    {"{\"approvals\": [{\"tool\": \"bash\", \"arg\": \"command\", \"match\": \"git *\"},\n"
     "               {\"tool\": \"bash\", \"arg\": \"command\", \"match\": \"npm [test\"}]}",
     0, "t.json:2:60", "safety.approvals[1].match", "invalid glob"},
    {"{\"approvals\": [{\"tool\": \"bash\", \"arg\": \"command\", \"match\": \"\"}]}", 0,
     "t.json:1:60", "safety.approvals[0].match", "empty pattern"},
    {"{\"approvals\": [{\"tool\": \"b a\", \"arg\": \"command\", \"match\": \"x\"}]}", 0,
     "t.json:1:25", "safety.approvals[0].tool", "invalid tool name"},
    {"{\"approvals\": [{\"tool\": 1, \"arg\": \"command\", \"match\": \"x\"}]}", 0, "t.json:1:25",
     "safety.approvals[0].tool", "expected string, got integer"},
    {"{\"approvals\": [{\"tool\": \"bash\", \"arg\": \"\", \"match\": \"x\"}]}", 0, "t.json:1:40",
     "safety.approvals[0].arg", "empty argument name"},
    {"{\"approvals\": [{\"tool\": \"bash\", \"arg\": \"command\", \"match\": \"x\", \"when\": 1}]}",
     0, "t.json:1:65", "safety.approvals[0].when", "unknown key"},
    {"{\"approval_timeout\": 0}", 0, "t.json:1:22", "safety.approval_timeout",
     "expected an integer from 1 to 86400 (seconds), got 0"},
    {"{\"approval_timeout\": 86401}", 0, "t.json:1:22", "safety.approval_timeout",
     "expected an integer from 1 to 86400 (seconds), got 86401"},
    {"{\"approval_timeout\": -5}", 0, "t.json:1:22", "safety.approval_timeout",
     "expected an integer from 1 to 86400"},
    {"{\"approval_timeout\": 1.5}", 0, "t.json:1:22", "safety.approval_timeout",
     "expected integer, got number"},
    {"{\"approval_timeout\": \"120\"}", 0, "t.json:1:22", "safety.approval_timeout",
     "expected integer, got string"},
    {"{\"approval_timeout\": null}", 0, "t.json:1:22", "safety.approval_timeout",
     "expected integer, got null"},
    {"{\"audit_log\": \"audit.jsonl\"}", 0, "t.json:1:15", "safety.audit_log",
     "expected an absolute path"},
    {"{\"audit_log\": \"\"}", 0, "t.json:1:15", "safety.audit_log", "empty path"},
    {"{\"audit_log\": \"$NOPE/a.jsonl\"}", 0, "t.json:1:15", "safety.audit_log",
     "environment variable NOPE is not set"},
    {"{\"audit_log\": \"$REL/a.jsonl\"}", 0, "t.json:1:15", "safety.audit_log",
     "expected an absolute path"},
    {"{\"audit_log\": 1}", 0, "t.json:1:15", "safety.audit_log", "expected string, got integer"},
    {"{\"audit_fsync\": \"yes\"}", 0, "t.json:1:17", "safety.audit_fsync",
     "expected boolean, got string"},
    {"{\"audit_required\": 0}", 0, "t.json:1:20", "safety.audit_required",
     "expected boolean, got integer"},
    {"{\"audit_syslog\": null}", 0, "t.json:1:18", "safety.audit_syslog",
     "expected boolean, got null"},
    {"{\"safety\": {\"approval_timeot\": 5}}", 0, "t.json:1:13", "safety.approval_timeot",
     "unknown key (did you mean \"approval_timeout\"?)"},
    /* a cloned repository must not pre-approve itself nor move or weaken the audit log */
    {"{\"approvals\": []}", PROJ, "t.json:1:2", "safety.approvals",
     "not allowed in a project config: a repository must not pre-approve its own tool calls"},
    {"{\"approvals\": [{\"tool\": \"bash\", \"arg\": \"command\", \"match\": \"*\"}]}", PROJ,
     "t.json:1:2", "safety.approvals", "not allowed in a project config: a repository"},
    {"{\"audit_log\": \"/dev/null\"}", PROJ, "t.json:1:2", "safety.audit_log",
     "not allowed in a project config: a repository must not move the audit log"},
    {"{\"audit_log\": null}", PROJ, "t.json:1:2", "safety.audit_log",
     "not allowed in a project config: a repository must not move the audit log"},
    {"{\"audit_required\": false}", PROJ, "t.json:1:20", "safety.audit_required",
     "false is not allowed in a project config: a repository must not weaken the audit log"},
    {"{\"audit_syslog\": false}", PROJ, "t.json:1:18", "safety.audit_syslog",
     "false is not allowed in a project config: a repository must not weaken the audit log"},
    {"{\"audit_fsync\": false}", PROJ, "t.json:1:17", "safety.audit_fsync",
     "false is not allowed in a project config: a repository must not weaken the audit log"},
    {"{\"approval_timeout\": 0}", PROJ, "t.json:1:22", "safety.approval_timeout",
     "expected an integer from 1 to 86400"},
    /* exempt_paths: the user's only, strict like denied_paths */
    {"{\n  \"exempt_paths\": [\"**/test/certs/*.pem\"]\n}", PROJ, "t.json:2:3",
     "safety.exempt_paths",
     "not allowed in a project config: a repository must not exempt its own files from the "
     "denied paths"},
    {"{\"safety\": {\"exempt_paths\": []}}", PROJ, "t.json:1:13", "safety.exempt_paths",
     "not allowed in a project config: a repository must not exempt"},
    {"{\"exempt_paths\": \"**/*.pem\"}", 0, "t.json:1:18", "safety.exempt_paths",
     "expected array, got string"},
    {"{\"exempt_paths\": [\"/a\", 7]}", 0, "t.json:1:25", "safety.exempt_paths[1]",
     "expected string, got integer"},
    {"{\"exempt_paths\": [\"\"]}", 0, "t.json:1:19", "safety.exempt_paths[0]", "empty pattern"},
    {"{\"exempt_paths\": [\"/a/[b\"]}", 0, "t.json:1:19", "safety.exempt_paths[0]",
     "invalid glob: unmatched '['"},
    {"{\"exempt_paths\": [\"/a/{b\"]}", 0, "t.json:1:19", "safety.exempt_paths[0]",
     "invalid glob"},
    {"{\"exempt_paths\": [\"$NOPE/x.pem\"]}", 0, "t.json:1:19", "safety.exempt_paths[0]",
     "environment variable NOPE is not set"},
    {"{\"exempt_paths\": [\"a\\u0000b\"]}", 0, "t.json:1:19", "",
     "string contains a NUL character"},
    {"{\"exempt_path\": []}", 0, "t.json:1:2", "safety.exempt_path",
     "unknown key (did you mean \"exempt_paths\"?)"},
};

static void test_errors(void)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(err_cases); i++) {
		const struct err_case *t = &err_cases[i];
		struct moat_config c;
		struct moat_error e;
		int r;

		moat_config_init(&c);
		r = load(&c, t->doc, t->flags, &e);
		CHECKF(r == -EINVAL, "case %zu refused (r=%d)", i, r);
		CHECKF(!strcmp(e.where, t->where), "case %zu where %s (got %s)", i, t->where,
		       e.where);
		CHECKF(!strcmp(e.key, t->key), "case %zu key '%s' (got '%s')", i, t->key, e.key);
		CHECKF(starts_with(e.msg, t->msg), "case %zu msg '%s' (got '%s')", i, t->msg,
		       e.msg);
		moat_config_release(&c);
	}
}

/* exempt_paths: appended across documents, variables expanded as in
 * denied_paths, printed back by the effective configuration */
static void test_exempt_paths(void)
{
	struct moat_config c;
	struct moat_error e;
	char *j;

	moat_config_init(&c);
	CHECK_INT(c.exempt_paths.n, 0);
	CHECK_INT(load(&c, "{\"exempt_paths\": [\"**/test/certs/*.pem\", \"~/f.pem\"]}", 0, &e),
		  0);
	CHECK_INT(load(&c, "{\"safety\": {\"exempt_paths\": [\"$STAR/k.key\"]}}", 0, &e), 0);
	CHECK_INT(c.exempt_paths.n, 3);
	if (c.exempt_paths.n == 3) {
		CHECK_STR(c.exempt_paths.v[0], "**/test/certs/*.pem");
		CHECK_STR(c.exempt_paths.v[1], "/home/u/f.pem");
		CHECK_STR(c.exempt_paths.v[2], "/a\\*b/k.key"); /* a value is data */
		CHECK_INT(c.exempt_paths.loc[1].line, 1);
		CHECK_INT(c.exempt_paths.loc[1].column, 42);
	}
	/* all or nothing: a refused document leaves the list as it was */
	CHECK_INT(load(&c, "{\"exempt_paths\": [\"/x\", \"/[\"]}", 0, &e), -EINVAL);
	CHECK_INT(c.exempt_paths.n, 3);
	j = moat_config_to_json(&c);
	CHECK(j && strstr(j, "\"exempt_paths\": [\n      \"**/test/certs/*.pem\",\n      "
			     "\"/home/u/f.pem\",\n      \"/a\\\\*b/k.key\"\n    ],\n"));
	free(j);
	moat_config_release(&c);
	moat_config_init(&c);
	j = moat_config_to_json(&c);
	CHECK(j && strstr(j, "\"exempt_paths\": [],\n"));
	free(j);
	moat_config_release(&c);
}

/* a raw NUL byte in the text (strlen cannot carry it) */
static void test_raw_nul(void)
{
	static const char doc[] = "{\"read_only\": true}\0{\"read_only\": false}";
	static const char doc2[] = "{\"denied_paths\": [\"/a\0b\"]}";
	struct moat_config c;
	struct moat_error e;

	moat_config_init(&c);
	moat_error_clear(&e);
	CHECK_INT(moat_config_load_string(&c, doc, sizeof(doc) - 1, "t.json", 0, &e), -EINVAL);
	CHECK_STR(e.where, "t.json:1:20");
	CHECK_STR(e.msg, "NUL byte in the document");
	CHECK(!c.read_only);
	CHECK_INT(moat_config_load_string(&c, doc2, sizeof(doc2) - 1, "t.json", 0, &e), -EINVAL);
	CHECK_STR(e.where, "t.json:1:22");
	CHECK(!c.denied_paths.n);
	moat_config_release(&c);
}

/* ---- limits at their boundary ------------------------------------------- */

static int load_buf(struct moat_config *c, struct moat_buf *b, struct moat_error *e)
{
	moat_error_clear(e);
	return moat_config_load_string(c, b->data, b->len, "t.json", 0, e);
}

static void test_limits(void)
{
	struct moat_config c;
	struct moat_error e;
	struct moat_buf b = MOAT_BUF_INIT;
	char *s;

	/* string length: MOAT_CONFIG_MAX_STRING bytes pass, one more fails */
	for (int extra = 0; extra <= 1; extra++) {
		moat_config_init(&c);
		moat_buf_reset(&b);
		s = repeat("a", MOAT_CONFIG_MAX_STRING + (size_t)extra);
		moat_buf_printf(&b, "{\"denied_commands\": [\"%s\"]}", s);
		free(s);
		if (!extra) {
			CHECK_INT(load_buf(&c, &b, &e), 0);
		} else {
			CHECK_INT(load_buf(&c, &b, &e), -EINVAL);
			CHECK_STR(e.msg, "pattern longer than 4096 bytes");
			CHECK_STR(e.where, "t.json:1:22");
		}
		moat_config_release(&c);
	}
	/* the same bound after expansion: a short entry expanding past it */
	moat_config_init(&c);
	moat_buf_reset(&b);
	s = repeat("x", MOAT_CONFIG_MAX_STRING - 5);
	moat_buf_printf(&b, "{\"denied_paths\": [\"~/%s\"]}", s);
	free(s);
	CHECK_INT(load_buf(&c, &b, &e), -EINVAL);
	CHECK(starts_with(e.msg, "expanded path longer than 4096 bytes"));
	moat_config_release(&c);

	/* nesting: MOAT_CONFIG_MAX_DEPTH levels pass (even in ignored keys) */
	for (int extra = 0; extra <= 1; extra++) {
		size_t k = MOAT_CONFIG_MAX_DEPTH - 1 + (size_t)extra;
		char *open = repeat("[", k), *close = repeat("]", k);

		moat_config_init(&c);
		moat_buf_reset(&b);
		moat_buf_printf(&b, "{\"provider\": %s%s}", open, close);
		free(open);
		free(close);
		if (!extra) {
			CHECK_INT(load_buf(&c, &b, &e), 0);
		} else {
			CHECK_INT(load_buf(&c, &b, &e), -EINVAL);
			CHECK_STR(e.msg, "nesting deeper than 32 levels");
			CHECK_STR(e.where, "t.json:1:45");
		}
		moat_config_release(&c);
	}
	/* far deeper than jansson's own limit: refused before jansson recurses */
	{
		char *open = repeat("[", 100000);

		moat_config_init(&c);
		moat_buf_reset(&b);
		moat_buf_printf(&b, "{\"provider\": %s", open);
		free(open);
		CHECK_INT(load_buf(&c, &b, &e), -EINVAL);
		CHECK(starts_with(e.msg, "nesting deeper"));
		moat_config_release(&c);
	}

	/* entries: MOAT_CONFIG_MAX_RULES pass, one more fails (also across loads) */
	for (int extra = 0; extra <= 1; extra++) {
		moat_config_init(&c);
		moat_buf_reset(&b);
		moat_buf_puts(&b, "{\"denied_commands\": [");
		for (size_t i = 0; i < (size_t)MOAT_CONFIG_MAX_RULES + (size_t)extra; i++)
			moat_buf_puts(&b, i ? ",\"x\"" : "\"x\"");
		moat_buf_puts(&b, "]}");
		if (!extra) {
			CHECK_INT(load_buf(&c, &b, &e), 0);
			CHECK_INT(c.denied_commands.n, MOAT_CONFIG_MAX_RULES);
			CHECK_INT(load(&c, "{\"denied_commands\": [\"y\"]}", 0, &e), -EINVAL);
			CHECK_STR(e.msg, "too many entries (limit 100000)");
			CHECK_INT(c.denied_commands.n, MOAT_CONFIG_MAX_RULES);
		} else {
			CHECK_INT(load_buf(&c, &b, &e), -EINVAL);
			CHECK_STR(e.msg, "too many entries (limit 100000)");
			CHECK_STR(e.where, "t.json:1:21");
			CHECK_STR(e.key, "safety.denied_commands");
		}
		moat_config_release(&c);
	}

	/* document size: MOAT_CONFIG_MAX_BYTES pass, one more byte fails */
	for (int extra = 0; extra <= 1; extra++) {
		moat_config_init(&c);
		moat_buf_reset(&b);
		moat_buf_reserve(&b, MOAT_CONFIG_MAX_BYTES + 2);
		moat_buf_puts(&b, "{}");
		while (b.len < MOAT_CONFIG_MAX_BYTES + (size_t)extra)
			moat_buf_putc(&b, ' ');
		if (!extra) {
			CHECK_INT(load_buf(&c, &b, &e), 0);
		} else {
			CHECK_INT(load_buf(&c, &b, &e), -EINVAL);
			CHECK_STR(e.msg, "document larger than 16777216 bytes");
			CHECK_STR(e.where, "t.json");
		}
		moat_config_release(&c);
	}

	/* tool names: 64 characters pass, 65 fail */
	for (int extra = 0; extra <= 1; extra++) {
		s = repeat("n", MOAT_CONFIG_MAX_TOOL_NAME + (size_t)extra);
		moat_config_init(&c);
		moat_buf_reset(&b);
		moat_buf_printf(&b, "{\"tools\": {\"%s\": {\"effects\": [\"read\"]}}}", s);
		free(s);
		CHECK_INT(load_buf(&c, &b, &e), extra ? -EINVAL : 0);
		moat_config_release(&c);
	}
	/* tool declarations: MOAT_CONFIG_MAX_TOOLS pass, one more fails */
	for (int extra = 0; extra <= 1; extra++) {
		moat_config_init(&c);
		moat_buf_reset(&b);
		moat_buf_puts(&b, "{\"tools\": {");
		for (size_t i = 0; i < MOAT_CONFIG_MAX_TOOLS + (size_t)extra; i++)
			moat_buf_printf(&b, "%s\"t%zu\": {\"effects\": []}", i ? "," : "", i);
		moat_buf_puts(&b, "}}");
		CHECK_INT(load_buf(&c, &b, &e), extra ? -EINVAL : 0);
		if (extra)
			CHECK_STR(e.msg, "too many tools (limit 4096)");
		else
			CHECK_INT(c.ntools, MOAT_CONFIG_MAX_TOOLS);
		moat_config_release(&c);
	}
	/* max_memory_mb: 1 and 1048576 pass */
	moat_config_init(&c);
	CHECK_INT(load(&c, "{\"sandbox\": {\"linux\": {\"max_memory_mb\": 1}}}", 0, &e), 0);
	CHECK_INT(c.max_memory_mb, 1);
	CHECK_INT(load(&c, "{\"sandbox\": {\"linux\": {\"max_memory_mb\": 1048576}}}", 0, &e), 0);
	CHECK_INT(c.max_memory_mb, 1048576);
	CHECK_INT(load(&c, "{\"sandbox\": {\"linux\": {\"max_memory_mb\": null}}}", 0, &e), 0);
	CHECK_INT(c.max_memory_mb, 0);
	moat_config_release(&c);
	moat_buf_release(&b);
}

/* ---- project files ------------------------------------------------------ */

static void test_project(void)
{
	static const char ok[] =
	    "{\"read_only\": true, \"require_approval_for_writes\": true,\n"
	    " \"require_approval_for_execute\": true, \"denied_paths\": [\"/x/**\"],\n"
	    " \"path_rules\": [{\"pattern\": \"/y/**\", \"allow_write\": true}],\n"
	    " \"allowed_paths\": [\"<cwd>/**\"], \"read_only_paths\": [\"<cwd>/.git/**\"],\n"
	    " \"command_rules\": [{\"pattern\": \"git *\", \"decision\": \"allow\"}],\n"
	    " \"denied_commands\": [\"npm publish\"], \"log_all_commands\": false,\n"
	    " \"network\": {\"block_domains\": [\"Evil.COM\"], \"allow_domains\": "
	    "[\"github.com\"]},\n"
	    " \"sandbox\": {\"windows\": {}, \"wsl\": {}}}";
	struct moat_config c;
	struct moat_error e;

	moat_config_init(&c);
	CHECKF(load(&c, ok, PROJ, &e) == 0, "tightening project file loads (%s: %s: %s)", e.where,
	       e.key, e.msg);
	CHECK(c.read_only && c.require_approval_for_writes && c.require_approval_for_execute);
	CHECK(c.allowed_paths_set && c.npath_rules == 1 && c.ncommand_rules == 1);
	CHECK_STR(c.block_domains.v[0], "evil.com");
	moat_config_release(&c);

	/* the same file wrapped as an AgentConfig */
	moat_config_init(&c);
	CHECK_INT(load(&c, "{\"provider\": {}, \"safety\": {\"read_only\": true}}", PROJ, &e), 0);
	CHECK(c.read_only);
	moat_config_release(&c);

	/* a refused project file leaves the config as it was */
	moat_config_init(&c);
	CHECK_INT(load(&c, "{\"denied_paths\": [\"/a/**\"], \"hardline\": false}", PROJ, &e),
		  -EINVAL);
	CHECK(c.hardline && !c.denied_paths.n);
	moat_config_release(&c);
}

/* ---- approvals and the audit log ----------------------------------------- */

static void roundtrip(const char *doc, const char *what);

static void test_approvals(void)
{
	static const char doc[] =
	    "{\"approvals\": [\n"
	    "   {\"tool\": \"bash\", \"arg\": \"command\", \"match\": \"git *\"},\n"
	    "   {\"tool\": \"run_shell_command\", \"arg\": \"command\", \"match\": \"npm test\"},\n"
	    "   {\"tool\": \"write_file\", \"arg\": \"path\", \"match\": \"$HOME/**\"}],\n"
	    " \"approval_timeout\": 30, \"audit_log\": \"~/logs/${USER}.jsonl\",\n"
	    " \"audit_fsync\": true, \"audit_required\": false, \"audit_syslog\": true}";
	struct moat_config c, p;
	struct moat_error e;
	char *j;

	moat_config_init(&c);
	CHECKF(load(&c, doc, 0, &e) == 0, "approvals load (%s: %s: %s)", e.where, e.key, e.msg);
	CHECK_INT(c.napprovals, 3);
	if (c.napprovals == 3) {
		CHECK_STR(c.approvals[0].tool, "bash");
		CHECK_STR(c.approvals[0].arg, "command");
		CHECK_STR(c.approvals[0].match, "git *");
		CHECK_INT(c.approvals[0].loc.line, 2);
		CHECK_INT(c.approvals[0].loc.column, 4);
		CHECK_STR(c.approvals[0].loc.file, "t.json");
		/* the alias is canonicalised */
		CHECK_STR(c.approvals[1].tool, "bash");
		CHECK_STR(c.approvals[1].match, "npm test");
		/* match is a pattern, never expanded */
		CHECK_STR(c.approvals[2].match, "$HOME/**");
	}
	CHECK_INT(c.approval_timeout_s, 30);
	CHECK(c.approval_timeout_set);
	CHECK_STR(c.audit_log, "/home/u/logs/alice.jsonl");
	CHECK(c.audit_fsync && !c.audit_required && c.audit_syslog);

	/* appended across files; a later scalar replaces */
	CHECK_INT(load(&c,
		       "{\"approvals\": [{\"tool\": \"edit_file\", \"arg\": \"path\", \"match\": "
		       "\"src/*.c\"}], \"approval_timeout\": 86400, \"audit_log\": \"-\"}",
		       0, &e),
		  0);
	CHECK_INT(c.napprovals, 4);
	CHECK_STR(c.approvals[3].tool, "edit_file");
	CHECK_INT(c.approval_timeout_s, 86400);
	CHECK_STR(c.audit_log, "-");
	/* a failing file changes none of it */
	CHECK_INT(load(&c,
		       "{\"approvals\": [{\"tool\": \"x\", \"arg\": \"y\", \"match\": \"z\"}], "
		       "\"approval_timeout\": 0}",
		       0, &e),
		  -EINVAL);
	CHECK_INT(c.napprovals, 4);
	CHECK_INT(c.approval_timeout_s, 86400);
	/* null: the default audit log again */
	CHECK_INT(load(&c, "{\"audit_log\": null, \"approval_timeout\": 1}", 0, &e), 0);
	CHECK(c.audit_log == NULL);
	CHECK_INT(c.approval_timeout_s, 1);

	/* the effective configuration prints them and loads back the same */
	j = moat_config_to_json(&c);
	CHECK(j && strstr(j, "\"approvals\": [\n      {\"tool\": \"bash\", \"arg\": \"command\", "
			     "\"match\": \"git *\"},"));
	CHECK(j && strstr(j, "\"approval_timeout\": 1,\n"));
	CHECK(j && strstr(j, "\"audit_log\": null,\n"));
	CHECK(j && strstr(j, "\"audit_syslog\": true\n  }\n}\n"));
	free(j);
	moat_config_release(&c);
	roundtrip(doc, "approvals");
	roundtrip("{\"audit_log\": \"/var/log/a\\\\$b/\\\\x~.jsonl\"}", "audit log with escapes");
	roundtrip("{\"audit_log\": \"-\", \"audit_required\": false}", "audit log on stderr");

	/* a copy of a configuration with approvals is independent of it */
	moat_config_init(&c);
	CHECK_INT(load(&c, doc, 0, &e), 0);
	CHECK_INT(load(&c, "{\"read_only\": true}", 0, &e), 0); /* works on a copy */
	CHECK_INT(c.napprovals, 3);
	CHECK_STR(c.approvals[2].tool, "write_file");
	CHECK_STR(c.audit_log, "/home/u/logs/alice.jsonl");
	moat_config_release(&c);

	/* a project file may tighten: fsync on, the log required, syslog on,
	 * a timeout (the session keeps the shorter of the two) */
	moat_config_init(&p);
	CHECKF(load(&p,
		    "{\"audit_fsync\": true, \"audit_required\": true, \"audit_syslog\": true, "
		    "\"approval_timeout\": 10}",
		    PROJ, &e) == 0,
	       "project tightening the audit log loads (%s: %s)", e.key, e.msg);
	CHECK(p.audit_fsync && p.audit_required && p.audit_syslog);
	CHECK(p.approval_timeout_s == 10 && p.approval_timeout_set);
	CHECK(!p.napprovals && !p.audit_log);
	moat_config_release(&p);
	/* one refused key refuses the file */
	moat_config_init(&p);
	CHECK_INT(load(&p,
		       "{\"audit_fsync\": true, \"approvals\": [{\"tool\": \"bash\", \"arg\": "
		       "\"command\", \"match\": \"*\"}]}",
		       PROJ, &e),
		  -EINVAL);
	CHECK(!p.audit_fsync && !p.napprovals);
	moat_config_release(&p);

	/* limits at the boundary: the timeout, the match length */
	for (int extra = 0; extra <= 1; extra++) {
		struct moat_buf b = MOAT_BUF_INIT;
		char *m = repeat("a", MOAT_CONFIG_MAX_STRING + (size_t)extra);

		moat_config_init(&c);
		moat_buf_printf(&b,
				"{\"approvals\": [{\"tool\": \"bash\", \"arg\": \"command\", "
				"\"match\": \"%s\"}]}",
				m);
		CHECK_INT(load_buf(&c, &b, &e), extra ? -EINVAL : 0);
		if (extra)
			CHECK_STR(e.msg, "pattern longer than 4096 bytes");
		moat_config_release(&c);
		moat_buf_release(&b);
		free(m);
	}
	for (int extra = 0; extra <= 1; extra++) {
		struct moat_buf b = MOAT_BUF_INIT;
		char *a = repeat("a", MOAT_CONFIG_MAX_TOOL_NAME + (size_t)extra);

		moat_config_init(&c);
		moat_buf_printf(&b,
				"{\"approvals\": [{\"tool\": \"%s\", \"arg\": \"%s\", \"match\": "
				"\"x\"}]}",
				a, a);
		CHECK_INT(load_buf(&c, &b, &e), extra ? -EINVAL : 0);
		if (extra)
			CHECK(starts_with(e.msg, "invalid tool name"));
		moat_config_release(&c);
		moat_buf_release(&b);
		free(a);
	}
}

/* ---- expansion ---------------------------------------------------------- */

struct exp_case {
	const char *in;
	unsigned flags;
	const char *out; /* NULL: error */
	const char *msg;
};

static const struct exp_case exp_cases[] = {
    {"~", MOAT_EXPAND_GLOB, "/home/u", NULL},
    {"~/.ssh/**", MOAT_EXPAND_GLOB, "/home/u/.ssh/**", NULL},
    {"$HOME/x", MOAT_EXPAND_GLOB, "/home/u/x", NULL},
    {"${HOME}/x", MOAT_EXPAND_GLOB, "/home/u/x", NULL},
    {"${PROJ}/**", MOAT_EXPAND_GLOB, "/srv/proj/**", NULL},
    {"/data/$USER/cache", MOAT_EXPAND_GLOB, "/data/alice/cache", NULL},
    {"$HOME$PROJ", MOAT_EXPAND_GLOB, "/home/u/srv/proj", NULL},
    {"/a/$USER_x", MOAT_EXPAND_GLOB, NULL, "environment variable USER_x is not set"},
    {"/a/${USER}_x", MOAT_EXPAND_GLOB, "/a/alice_x", NULL},
    {"/x/~", MOAT_EXPAND_GLOB, "/x/~", NULL},
    {"/x$", MOAT_EXPAND_GLOB, "/x$", NULL},
    {"/x$/y", MOAT_EXPAND_GLOB, "/x$/y", NULL},
    {"/x/$1", MOAT_EXPAND_GLOB, "/x/$1", NULL},
    {"<cwd>/**", MOAT_EXPAND_GLOB, "<cwd>/**", NULL},
    /* values are data, not patterns */
    {"$STAR/**", MOAT_EXPAND_GLOB, "/a\\*b/**", NULL},
    {"$STAR/**", 0, "/a*b/**", NULL},
    {"$DOLLAR", MOAT_EXPAND_GLOB, "/d\\$x", NULL},
    {"$TILDE/y", MOAT_EXPAND_GLOB, "\\~x/y", NULL},
    /* escapes */
    {"\\$HOME", MOAT_EXPAND_GLOB, "\\$HOME", NULL},
    {"\\$HOME", 0, "$HOME", NULL},
    {"\\~/x", 0, "~/x", NULL},
    {"a\\", 0, "a\\", NULL},
    {"a\\", MOAT_EXPAND_GLOB, "a\\", NULL},
    {"/a\\*b", MOAT_EXPAND_GLOB, "/a\\*b", NULL},
    /* errors */
    {"$NOPE", MOAT_EXPAND_GLOB, NULL, "environment variable NOPE is not set"},
    {"${NOPE}/x", 0, NULL, "environment variable NOPE is not set"},
    {"$EMPTY/**", MOAT_EXPAND_GLOB, NULL, "environment variable EMPTY is empty"},
    {"~bob/x", MOAT_EXPAND_GLOB, NULL, "~user is not supported"},
    {"${}", MOAT_EXPAND_GLOB, NULL, "invalid variable reference"},
    {"${HOME", MOAT_EXPAND_GLOB, NULL, "invalid variable reference"},
    {"${1A}", MOAT_EXPAND_GLOB, NULL, "invalid variable reference"},
    {"${A-B}", MOAT_EXPAND_GLOB, NULL, "invalid variable reference"},
};

static void test_expand(void)
{
	struct moat_buf b = MOAT_BUF_INIT;
	struct moat_error e;
	char *longname;

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(exp_cases); i++) {
		const struct exp_case *t = &exp_cases[i];
		int r;

		moat_error_clear(&e);
		r = moat_config_expand_ex(t->in, t->flags, &b, &e);
		if (t->out)
			CHECKF(r == 0 && !strcmp(b.data, t->out),
			       "expand '%s' -> '%s' (got %d '%s' %s)", t->in, t->out, r,
			       r == 0 ? b.data : "", e.msg);
		else
			CHECKF(r == -EINVAL && starts_with(e.msg, t->msg),
			       "expand '%s' refused: %s (got %d %s)", t->in, t->msg, r, e.msg);
	}
	/* moat_config_expand is the glob form */
	CHECK_INT(moat_config_expand("$STAR", &b, &e), 0);
	CHECK_STR(b.data, "/a\\*b");

	/* variable names: 255 characters are a name, 256 are refused */
	longname = repeat("V", MOAT_CONFIG_MAX_VAR_NAME + 1);
	longname[0] = '$';
	CHECK_INT(moat_config_expand(longname, &b, &e), -EINVAL);
	CHECK(starts_with(e.msg, "environment variable VVV") && strlen(e.msg) == 21 + 255 + 11);
	free(longname);
	longname = repeat("V", MOAT_CONFIG_MAX_VAR_NAME + 2);
	longname[0] = '$';
	CHECK_INT(moat_config_expand(longname, &b, &e), -EINVAL);
	CHECK_STR(e.msg, "variable name too long");
	free(longname);

	/* a relative HOME is refused for ~ and $HOME */
	moat_config_set_env(relative_home_env, NULL);
	CHECK_INT(moat_config_expand("~/x", &b, &e), -EINVAL);
	CHECK_STR(e.msg, "HOME is not an absolute path");
	CHECK_INT(moat_config_expand("$HOME/x", &b, &e), -EINVAL);
	/* without an installed lookup nothing is set (the core never reads the
	 * process environment) */
	moat_config_set_env(NULL, NULL);
	CHECK(moat_config_env("HOME") == NULL);
	CHECK_INT(moat_config_expand("~/x", &b, &e), -EINVAL);
	CHECK_STR(e.msg, "environment variable HOME is not set");
	CHECK_INT(moat_config_expand("/plain/**", &b, &e), 0);
	moat_config_set_env(fake_env, NULL);
	CHECK_STR(moat_config_env("PROJ"), "/srv/proj");

	/* in a document */
	struct moat_config c;

	moat_config_init(&c);
	CHECK_INT(load(&c,
		       "{\"denied_paths\": [\"~/.secret/**\", \"${PROJ}/.env\"],"
		       " \"allowed_paths\": [\"$PROJ/**\", \"<cwd>/**\"],"
		       " \"read_only_paths\": [\"$STAR\"],"
		       " \"path_rules\": [{\"pattern\": \"~/notes/**\"}],"
		       " \"sandbox\": {\"linux\": {\"workspace\": \"$HOME/ws\"}}}",
		       0, &e),
		  0);
	CHECK_STR(c.denied_paths.v[0], "/home/u/.secret/**");
	CHECK_STR(c.denied_paths.v[1], "/srv/proj/.env");
	CHECK_STR(c.allowed_paths.v[0], "/srv/proj/**");
	CHECK_STR(c.allowed_paths.v[1], "<cwd>/**");
	CHECK_STR(c.read_only_paths.v[0], "/a\\*b");
	CHECK_STR(c.path_rules[0].pattern, "/home/u/notes/**");
	CHECK_STR(c.sandbox_workspace, "/home/u/ws");
	moat_config_release(&c);
	moat_buf_release(&b);
}

/* ---- merging, locations, atomicity -------------------------------------- */

static void test_merge(void)
{
	struct moat_config c;
	struct moat_error e;
	char *before, *after;

	moat_config_init(&c);
	CHECK_INT(
	    load(&c,
		 "{\"denied_paths\": [\"/a/**\"], \"allowed_paths\": [\"/w/**\"],\n"
		 " \"tools\": {\"mv\": {\"effects\": [\"read\"], \"path_args\": [\"src\"]}},\n"
		 " \"path_rules\": [{\"pattern\": \"/p/**\"}]}",
		 0, &e),
	    0);
	CHECK_INT(
	    load(&c,
		 "{\"denied_paths\": [\"/b/**\"], \"allowed_paths\": [\"/v/**\"],\n"
		 " \"tools\": {\"mv\": {\"effects\": [\"write\"], \"path_args\": [\"source_path\", "
		 "\"destination_path\"]},\n"
		 "           \"fetch2\": {\"effects\": [\"network\"], \"url_arg\": \"u\"}},\n"
		 " \"path_rules\": [{\"pattern\": \"/q/**\", \"allow_read\": false, "
		 "\"allow_write\": true}]}",
		 0, &e),
	    0);
	CHECK_INT(c.denied_paths.n, 2);						 /* appended */
	CHECK(c.allowed_paths.n == 1 && !strcmp(c.allowed_paths.v[0], "/v/**")); /* replaced */
	CHECK_INT(c.ntools, 2); /* same name replaced */
	CHECK_STR(c.tools[0].name, "mv");
	CHECK_INT(c.tools[0].effects, MOAT_EFFECT_WRITE);
	CHECK_INT(c.tools[0].path_args.n, 2);
	CHECK_STR(c.tools[0].path_args.v[1], "destination_path");
	CHECK_INT(c.tools[0].loc.line, 2);
	CHECK_INT(c.tools[0].loc.column, 12);
	CHECK_STR(c.tools[1].url_arg, "u");
	CHECK(c.tools[1].command_arg == NULL);
	CHECK_INT(c.npath_rules, 2);
	CHECK(c.path_rules[0].allow_read && !c.path_rules[0].allow_write);
	CHECK(!c.path_rules[1].allow_read && c.path_rules[1].allow_write);
	CHECK_INT(c.path_rules[1].loc.line, 4);
	CHECK_INT(c.path_rules[1].loc.column, 17);
	CHECK_INT(c.files.n, 1); /* the same name is kept once */
	CHECK(c.path_rules[0].loc.file == c.path_rules[1].loc.file);

	/* "allowed_paths": [] is an allow-list that allows nothing; null drops it */
	CHECK_INT(load(&c, "{\"allowed_paths\": []}", 0, &e), 0);
	CHECK(c.allowed_paths_set && c.allowed_paths.n == 0);
	CHECK_INT(load(&c, "{\"allowed_paths\": null}", 0, &e), 0);
	CHECK(!c.allowed_paths_set);

	/* a failing load changes nothing, even when it fails late */
	before = moat_config_to_json(&c);
	CHECK_INT(load(&c,
		       "{\"read_only\": true, \"denied_paths\": [\"/c/**\"], \"tools\": {\"mv\": "
		       "{\"effects\": []}}, \"path_rules\": [{\"pattern\": \"/z/**\"}], "
		       "\"sandbox\": {\"mode\": \"bogus\"}}",
		       0, &e),
		  -EINVAL);
	after = moat_config_to_json(&c);
	CHECK(before && after && !strcmp(before, after));
	CHECK(!c.read_only);
	free(before);
	free(after);

	/* a second file name is interned; locations keep pointing at it */
	CHECK_INT(
	    moat_config_load_string(&c, "{\"denied_paths\": [\"/d/**\"]}", 27, "other.json", 0, &e),
	    0);
	CHECK_INT(c.files.n, 2);
	CHECK_STR(c.denied_paths.loc[2].file, "other.json");
	CHECK_STR(c.denied_paths.loc[0].file, "t.json");
	moat_config_release(&c);

	/* NULL arguments */
	moat_config_init(&c);
	CHECK_INT(moat_config_load_string(NULL, "{}", 2, "x", 0, &e), -EINVAL);
	CHECK_INT(moat_config_load_string(&c, NULL, 2, "x", 0, &e), -EINVAL);
	CHECK_INT(moat_config_load_string(&c, "{}", 2, NULL, 0, NULL), 0);
	CHECK_INT(moat_config_load_string(&c, "{\"x\": 1}", 8, NULL, 0, &e), -EINVAL);
	CHECK_STR(e.where, "<config>:1:2");
	CHECK(moat_config_to_json(NULL) == NULL);
	moat_config_release(&c);
}

/* ---- flag helpers ------------------------------------------------------- */

static void test_csv(void)
{
	struct moat_config c;
	struct moat_error e;

	moat_config_init(&c);
	moat_error_clear(&e);
	CHECK_INT(moat_config_add_denied_paths_csv(&c, " /a/** ,\t/b/{x,y}/** ", &e), 0);
	CHECK_INT(c.denied_paths.n, 2);
	CHECK_STR(c.denied_paths.v[0], "/a/**");
	CHECK_STR(c.denied_paths.v[1], "/b/{x,y}/**");
	CHECK_INT(moat_config_add_denied_paths_csv(&c, "~/.x,/c\\,d", &e), 0);
	CHECK_INT(c.denied_paths.n, 4);
	CHECK_STR(c.denied_paths.v[2], "/home/u/.x");
	CHECK_STR(c.denied_paths.v[3], "/c\\,d");

	static const char *const bad[] = {"",	 " ",	 "/a/**,,/b/**", "/a/**,",
					  ",/a", "/a/[", "$NOPE/x",	 "/x/{a,b"};
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(bad); i++) {
		moat_error_clear(&e);
		CHECKF(moat_config_add_denied_paths_csv(&c, bad[i], &e) == -EINVAL,
		       "csv '%s' refused (%s)", bad[i], e.msg);
		CHECKF(c.denied_paths.n == 4, "csv '%s' leaves the list", bad[i]);
		CHECKF(moat_config_set_allowed_paths_csv(&c, bad[i], &e) == -EINVAL,
		       "allowed csv '%s' refused", bad[i]);
		CHECK(!c.allowed_paths_set);
	}
	CHECK_INT(moat_config_add_denied_paths_csv(&c, "/a/**,,/b", &e), -EINVAL);
	CHECK_STR(e.msg, "empty entry in comma-separated list");
	CHECK_INT(moat_config_add_denied_paths_csv(&c, "/ok,/a/[", &e), -EINVAL);
	CHECK(starts_with(e.msg, "\"/a/[\": invalid glob"));

	CHECK_INT(moat_config_set_allowed_paths_csv(&c, "<cwd>/**, /srv/**", &e), 0);
	CHECK(c.allowed_paths_set && c.allowed_paths.n == 2);
	CHECK_STR(c.allowed_paths.v[1], "/srv/**");
	CHECK_INT(moat_config_set_allowed_paths_csv(&c, "/only/**", &e), 0);
	CHECK(c.allowed_paths.n == 1 && !strcmp(c.allowed_paths.v[0], "/only/**"));

	/* strlist_add interns the file name */
	struct moat_loc loc = {"flags.json", 3, 4};

	CHECK_INT(moat_config_strlist_add(&c, &c.read_only_paths, "/r/**", &loc), 0);
	CHECK_INT(moat_config_strlist_add(&c, &c.read_only_paths, "/s/**", NULL), 0);
	CHECK_STR(c.read_only_paths.loc[0].file, "flags.json");
	CHECK(c.read_only_paths.loc[0].file != loc.file);
	CHECK(c.read_only_paths.loc[1].file == NULL);
	CHECK_INT(c.files.n, 1);
	moat_config_release(&c);
}

/* ---- to_json ------------------------------------------------------------ */

static const char rich[] =
    "{\"safety\": {\n"
    "  \"read_only\": true, \"require_approval_for_writes\": true,\n"
    "  \"log_all_commands\": true, \"hardline\": false,\n"
    "  \"path_rules\": [{\"pattern\": \"/p/**\", \"allow_write\": true},\n"
    "                 {\"pattern\": \"~/q\\\\*/**\", \"allow_read\": false}],\n"
    "  \"denied_paths\": [\"**/.env\", \"$STAR/**\", \"/d\\u00e9j\\u00e0/**\", \"$DOLLAR/x\"],\n"
    "  \"allowed_paths\": [\"<cwd>/**\", \"/tab\\there\"],\n"
    "  \"read_only_paths\": [\"<cwd>/.git/**\"],\n"
    "  \"command_rules\": [{\"pattern\": \"^git (status|log)\", \"decision\": \"allow\", "
    "\"is_regex\": true},\n"
    "                    {\"pattern\": \"npm *\", \"decision\": \"ask\"}],\n"
    "  \"denied_commands\": [\"rm -rf /\", \"terraform destroy\", \"say \\\"hi\\\"\"],\n"
    "  \"network\": {\"allow_domains\": [\".github.com\"], \"block_domains\": [\"x.org\"],\n"
    "              \"allow_local\": true},\n"
    "  \"sandbox\": {\"mode\": \"linux\", \"linux\": {\"workspace\": \"$DOLLAR/w\\\\\\\\s\", "
    "\"max_memory_mb\": 2048}},\n"
    "  \"tools\": {\"move_file\": {\"effects\": [\"write\", \"read\"], \"path_args\": "
    "[\"source_path\", \"destination_path\"]},\n"
    "            \"run\": {\"effects\": [\"execute\"], \"command_arg\": \"cmd\"},\n"
    "            \"noop\": {\"effects\": []}}\n"
    "}}\n";

static void roundtrip(const char *doc, const char *what)
{
	struct moat_config a, b;
	struct moat_error e;
	char *ja, *jb;

	moat_config_init(&a);
	moat_config_init(&b);
	CHECKF(load(&a, doc, 0, &e) == 0, "%s loads (%s: %s: %s)", what, e.where, e.key, e.msg);
	ja = moat_config_to_json(&a);
	CHECKF(ja != NULL, "%s to_json", what);
	CHECKF(ja && load(&b, ja, 0, &e) == 0, "%s: to_json output loads (%s: %s: %s)", what,
	       e.where, e.key, e.msg);
	jb = moat_config_to_json(&b);
	CHECKF(ja && jb && !strcmp(ja, jb), "%s round-trips", what);
	if (ja && jb && strcmp(ja, jb))
		printf("# first:\n%s\n# second:\n%s\n", ja, jb);
	free(ja);
	free(jb);
	moat_config_release(&a);
	moat_config_release(&b);
}

static void test_to_json(void)
{
	struct moat_config c;
	struct moat_error e;
	char *j;
	json_t *parsed;

	roundtrip("{}", "defaults");
	roundtrip(rich, "rich config");
	roundtrip("{\"default_denied_paths\": false, \"default_denied_commands\": false, "
		  "\"denied_paths\": [\"**/.env\"], \"allowed_paths\": []}",
		  "without defaults");
	roundtrip("{\"exempt_paths\": [\"**/test/certs/*.pem\", \"~/fixture.pem\", \"$STAR/k.key\"]}",
		  "exempt_paths");

	moat_config_init(&c);
	CHECK_INT(load(&c, rich, 0, &e), 0);
	j = moat_config_to_json(&c);
	CHECK(j != NULL);
	/* valid strict JSON, stable order, defaults first, no repeated default */
	CHECK_INT(moat_json_parse_object(j, strlen(j), "out", MOAT_CONFIG_MAX_BYTES, &parsed, &e),
		  0);
	if (j && parsed) {
		json_t *s = json_object_get(parsed, "safety");
		json_t *dp = json_object_get(s, "denied_paths");
		json_t *dc = json_object_get(s, "denied_commands");
		size_t n = 0, nd = 0, nc = 0;

		while (moat_default_denied_paths[nd])
			nd++;
		CHECK_STR(json_string_value(json_array_get(dp, 0)), "/etc/shadow");
		CHECK_INT(json_array_size(dp), nd + 3); /* "**" "/.env" is a default */
		CHECK_STR(json_string_value(json_array_get(dp, nd)), "/a\\*b/**");
		CHECK_STR(json_string_value(json_array_get(dp, nd + 1)), "/d\xc3\xa9j\xc3\xa0/**");
		while (moat_default_denied_commands[nc])
			nc++;
		CHECK_INT(json_array_size(dc), nc + 2);
		CHECK_STR(json_string_value(json_array_get(dc, nc + 1)), "say \"hi\"");
		CHECK_STR(
		    json_string_value(json_object_get(
			json_object_get(json_object_get(s, "sandbox"), "linux"), "workspace")),
		    "/d\\$x/w\\\\s");
		CHECK(json_is_true(json_object_get(json_object_get(s, "network"), "allow_local")));
		CHECK(json_is_false(json_object_get(s, "hardline")));
		for (void *it = json_object_iter(s); it; it = json_object_iter_next(s, it))
			n++;
		CHECK_INT(n, 23);
		CHECK(strstr(j, "\"read_only\": true,\n    \"require_approval_for_writes\"") !=
		      NULL);
		json_decref(parsed);
	}
	CHECK_STR(c.sandbox_workspace, "/d$x/w\\s");
	free(j);
	moat_config_release(&c);

	/* defaults: no user entries, null allow-list */
	moat_config_init(&c);
	j = moat_config_to_json(&c);
	CHECK(j && strstr(j, "\"allowed_paths\": null") && strstr(j, "\"tools\": {}") &&
	      strstr(j, "\"path_rules\": []") && strstr(j, "\"mode\": \"local\""));
	free(j);
	moat_config_release(&c);
}

/* ---- sandbox profiles ---------------------------------------------------- */

static const char profiles_doc[] =
    "{\"sandbox\": {\"profile\": \"strict\", \"fallback\": \"warn\",\n"
    "  \"profiles\": {\n"
    "    \"strict\": {\"extends\": \"offline\", \"description\": \"agents\",\n"
    "               \"rw\": [\"~/out\"], \"extra\": {\"ro\": [\"$PROJ/ref\"], \"mask\": "
    "[\"**/*.db\"]},\n"
    "               \"limits\": {\"mem_mb\": 1024, \"pids\": 0, \"cpu_s\": null}, \"timeout_s\": "
    "60,\n"
    "               \"env\": \"none\", \"env_keep\": [\"CI\"], \"home\": \"ro\",\n"
    "               \"immutable\": [\"process\", \"environment\"]},\n"
    "    \"offline\": {\"extends\": \"workspace-write-no-network\", \"rw\": [\"/srv/cache\"],\n"
    "                \"protect\": [\".github/workflows\"], \"fallback\": \"deny\"},\n"
    "    \"web\": {\"extends\": \"workspace-write\", \"network\": [443, 80, 443],\n"
    "            \"workspace\": \"ro\", \"allow_sockets\": [\"/run/user/1/bus\"]}\n"
    "  },\n"
    "  \"rules\": [{\"tool\": \"bash\", \"profile\": \"offline\"},\n"
    "            {\"tool\": \"fetch\", \"profile\": \"web\"}]}}\n";

static void test_sandbox_profiles(void)
{
	struct moat_config c;
	struct moat_profile p;
	struct moat_error e;
	const struct moat_profile_def *d;

	moat_config_init(&c);
	CHECK(c.sandbox_fallback == -1 && !c.sandbox_profile && !c.nprofiles);
	CHECKF(load(&c, profiles_doc, 0, &e) == 0, "profiles load (%s: %s: %s)", e.where, e.key,
	       e.msg);
	CHECK_INT((int)c.nprofiles, 3);
	CHECK_STR(c.sandbox_profile, "strict");
	CHECK(c.sandbox_fallback == MOAT_FALLBACK_WARN);
	d = &c.profiles[0];
	CHECK_STR(d->name, "strict");
	CHECK_STR(d->extends, "offline");
	CHECK_STR(d->description, "agents");
	/* plain keys replace, "extra" adds; paths expanded */
	CHECK(d->layer.rw.replace && d->layer.rw.n == 1 &&
	      !strcmp(d->layer.rw.v[0], "/home/u/out"));
	CHECK(!d->layer.ro.replace && d->layer.ro.n == 1 &&
	      !strcmp(d->layer.ro.v[0], "/srv/proj/ref"));
	CHECK(!d->layer.mask.replace && !strcmp(d->layer.mask.v[0], "**/*.db"));
	CHECK(d->layer.mem_mb == 1024 && d->layer.pids == 0 && (d->layer.set & MOAT_PF_PIDS));
	CHECK(!(d->layer.set & MOAT_PF_CPU)); /* null: inherited */
	CHECK(d->layer.timeout_s == 60 && d->layer.env == MOAT_ENV_NONE && !d->layer.home_cow);
	CHECK(d->layer.immutable == (MOAT_DIM_PROC | MOAT_DIM_ENV));
	CHECK(c.profiles[2].layer.net == MOAT_NET_PORTS && c.profiles[2].layer.nports == 2);
	CHECK(c.profiles[2].layer.workspace == MOAT_WS_RO);
	/* where they were written */
	CHECK(c.profile_locs[0].name.line == 3 && c.profile_locs[1].extends.line == 8);

	/* the default profile, resolved over its chain with the defaults */
	moat_error_clear(&e);
	CHECK_INT(moat_config_sandbox_profile(&c, NULL, &p, &e), 0);
	CHECK_STR(p.name, "strict");
	CHECK(p.net == MOAT_NET_DENY && p.workspace == MOAT_WS_RW);
	CHECK(p.rw.n == 1 && !strcmp(p.rw.v[0], "/home/u/out")); /* offline's replaced */
	CHECK(p.fallback == MOAT_FALLBACK_DENY); /* offline's own beats sandbox.fallback */
	CHECK(p.mem_mb == 1024 && p.pids == 0 && p.cpu_s == 3600);
	moat_profile_release(&p);
	CHECK_INT(moat_config_sandbox_profile(&c, "web", &p, &e), 0);
	CHECK(p.fallback == MOAT_FALLBACK_WARN && p.net == MOAT_NET_PORTS);
	moat_profile_release(&p);
	CHECK_INT(moat_config_sandbox_profile(&c, "readonly", &p, &e), 0);
	CHECK(p.fallback == MOAT_FALLBACK_WARN && p.workspace == MOAT_WS_RO);
	moat_profile_release(&p);
	CHECK_INT(moat_config_sandbox_profile(&c, "nope", &p, &e), -ENOENT);

	/* per-tool rules (seed 002) */
	CHECK_STR(moat_config_profile_for_tool(&c, "bash"), "offline");
	CHECK_STR(moat_config_profile_for_tool(&c, "fetch"), "web");
	CHECK_STR(moat_config_profile_for_tool(&c, "read_file"), "strict");
	CHECK_STR(moat_config_profile_for_tool(NULL, "bash"), MOAT_PROFILE_DEFAULT);

	/* a later file replaces a profile of the same name and appends rules */
	CHECKF(
	    load(&c,
		 "{\"sandbox\": {\"profiles\": {\"web\": {\"extends\": \"readonly\"}}, "
		 "\"rules\": [{\"tool\": \"bash\", \"profile\": \"readonly\"}], \"profile\": null, "
		 "\"fallback\": null}}",
		 0, &e) == 0,
	    "second file loads (%s)", e.msg);
	CHECK_INT((int)c.nprofiles, 3);
	CHECK_STR(c.profiles[2].extends, "readonly");
	CHECK(!(c.profiles[2].layer.set & MOAT_PF_NET));
	CHECK_INT((int)c.nsandbox_rules, 3);
	CHECK_STR(moat_config_profile_for_tool(&c, "bash"), "offline"); /* first match */
	CHECK(!c.sandbox_profile && c.sandbox_fallback == -1);
	CHECK_STR(moat_config_profile_for_tool(&c, "x"), MOAT_PROFILE_DEFAULT);

	/* sandbox.accept_gaps: a set of protections; a later file replaces it */
	CHECK(c.sandbox_accept_gaps == 0);
	CHECKF(load(&c,
		    "{\"sandbox\": {\"accept_gaps\": [\"pid-namespace\", \"metadata\", "
		    "\"pid-namespace\"]}}",
		    0, &e) == 0,
	       "accept_gaps loads (%s)", e.msg);
	CHECK(c.sandbox_accept_gaps ==
	      ((1u << MOAT_FEAT_PIDNS) | (1u << MOAT_FEAT_METADATA)));
	CHECKF(load(&c, "{\"sandbox\": {\"accept_gaps\": [\"secrets\"]}}", 0, &e) == 0,
	       "accept_gaps again (%s)", e.msg);
	CHECK(c.sandbox_accept_gaps == 1u << MOAT_FEAT_SECRETS);
	CHECKF(load(&c, "{\"sandbox\": {\"accept_gaps\": null}}", 0, &e) == 0,
	       "accept_gaps null (%s)", e.msg);
	CHECK(c.sandbox_accept_gaps == 0);

	/* a refused file changes nothing (all or nothing) */
	CHECK_INT(load(&c,
		       "{\"sandbox\": {\"profiles\": {\"offline\": {\"extends\": \"strict\"}}}}", 0,
		       &e),
		  -EINVAL);
	CHECK(strstr(e.msg, "cycle") != NULL);
	CHECK_STR(c.profiles[1].extends, "workspace-write-no-network");
	moat_config_release(&c);

	/* a profile used by another file must exist when that file loads */
	moat_config_init(&c);
	CHECK_INT(load(&c, "{\"sandbox\": {\"profile\": \"later\"}}", 0, &e), -EINVAL);
	moat_config_release(&c);

	roundtrip(profiles_doc, "profiles");
	roundtrip(
	    "{\"sandbox\": {\"profiles\": {\"e\": {\"extends\": \"workspace-write\", \"ro\": [], "
	    "\"extra\": {\"mask\": []}, \"limits\": {}, \"network\": \"deny\", \"immutable\": "
	    "[]}}}}",
	    "empty lists");
	roundtrip("{\"sandbox\": {\"profiles\": {\"d\": {\"extends\": \"workspace-write\", \"ro\": "
		  "[\"$DOLLAR/x\", \"$STAR/y\"], \"extra\": {\"mask\": [\"$STAR/**\"]}}}}}",
		  "escaped paths");
}

/* limits on the profile lists, at their boundary */
static void test_profile_limits(void)
{
	struct moat_config c;
	struct moat_error e;
	struct moat_buf b = MOAT_BUF_INIT;
	char *doc;

	for (int over = 0; over < 2; over++) {
		/* MOAT_PLAN_MAX_PATHS paths (plain + extra count together) */
		moat_buf_reset(&b);
		moat_buf_puts(&b, "{\"sandbox\": {\"profiles\": {\"p\": {\"extends\": "
				  "\"workspace-write\", \"ro\": [");
		for (int i = 0; i < MOAT_PLAN_MAX_PATHS - 1; i++)
			moat_buf_printf(&b, "%s\"/p%d\"", i ? ", " : "", i);
		moat_buf_printf(&b, "], \"extra\": {\"ro\": [\"/x\"%s]}}}}}",
				over ? ", \"/y\"" : "");
		moat_config_init(&c);
		CHECKF(load(&c, b.data, 0, &e) == (over ? -EINVAL : 0), "%d paths", 256 + over);
		if (over)
			CHECK(strstr(e.msg, "too many entries (limit 256)") != NULL);
		moat_config_release(&c);

		/* MOAT_PLAN_MAX_ENV_NAMES names */
		moat_buf_reset(&b);
		moat_buf_puts(&b, "{\"sandbox\": {\"profiles\": {\"p\": {\"extends\": "
				  "\"workspace-write\", \"env_keep\": [");
		for (int i = 0; i < MOAT_PLAN_MAX_ENV_NAMES + over; i++)
			moat_buf_printf(&b, "%s\"V%d\"", i ? ", " : "", i);
		moat_buf_puts(&b, "]}}}}");
		moat_config_init(&c);
		CHECKF(load(&c, b.data, 0, &e) == (over ? -EINVAL : 0), "%d env names",
		       MOAT_PLAN_MAX_ENV_NAMES + over);
		moat_config_release(&c);

		/* MOAT_PLAN_MAX_PROFILES profiles */
		moat_buf_reset(&b);
		moat_buf_puts(&b, "{\"sandbox\": {\"profiles\": {");
		for (int i = 0; i < MOAT_PLAN_MAX_PROFILES + over; i++)
			moat_buf_printf(&b, "%s\"p%d\": {\"extends\": \"%s\"}", i ? ", " : "", i,
					i ? "p0" : "readonly");
		moat_buf_puts(&b, "}}}");
		moat_config_init(&c);
		CHECKF(load(&c, b.data, 0, &e) == (over ? -EINVAL : 0), "%d profiles",
		       MOAT_PLAN_MAX_PROFILES + over);
		if (over)
			CHECK(strstr(e.msg, "too many profiles") != NULL);
		moat_config_release(&c);

		/* MOAT_PLAN_MAX_RULES rules */
		moat_buf_reset(&b);
		moat_buf_puts(&b, "{\"sandbox\": {\"rules\": [");
		for (int i = 0; i < MOAT_PLAN_MAX_RULES + over; i++)
			moat_buf_printf(&b, "%s{\"tool\": \"t%d\", \"profile\": \"readonly\"}",
					i ? ", " : "", i);
		moat_buf_puts(&b, "]}}");
		moat_config_init(&c);
		CHECKF(load(&c, b.data, 0, &e) == (over ? -EINVAL : 0), "%d rules",
		       MOAT_PLAN_MAX_RULES + over);
		moat_config_release(&c);

		/* MOAT_PLAN_MAX_PORTS ports */
		moat_buf_reset(&b);
		moat_buf_puts(&b, "{\"sandbox\": {\"profiles\": {\"p\": {\"extends\": "
				  "\"workspace-write\", \"network\": [");
		for (int i = 0; i < MOAT_PLAN_MAX_PORTS + over; i++)
			moat_buf_printf(&b, "%s%d", i ? ", " : "", 1000 + i);
		moat_buf_puts(&b, "]}}}}");
		moat_config_init(&c);
		CHECKF(load(&c, b.data, 0, &e) == (over ? -EINVAL : 0), "%d ports",
		       MOAT_PLAN_MAX_PORTS + over);
		moat_config_release(&c);
	}
	/* a name of MOAT_PLAN_MAX_NAME characters, and one more */
	doc = repeat("n", MOAT_PLAN_MAX_NAME);
	moat_buf_reset(&b);
	moat_buf_printf(&b, "{\"sandbox\": {\"profiles\": {\"%s\": {\"extends\": \"readonly\"}}}}",
			doc);
	moat_config_init(&c);
	CHECK_INT(load(&c, b.data, 0, &e), 0);
	moat_config_release(&c);
	moat_buf_reset(&b);
	moat_buf_printf(&b, "{\"sandbox\": {\"profiles\": {\"%sn\": {\"extends\": \"readonly\"}}}}",
			doc);
	moat_config_init(&c);
	CHECK_INT(load(&c, b.data, 0, &e), -EINVAL);
	moat_config_release(&c);
	free(doc);
	moat_buf_release(&b);
}

/* ---- the JSON helpers --------------------------------------------------- */

static void test_json_locate(void)
{
	static const char doc[] = "{\n \"a\": {\"b\\u0063\": [1, {\"d\": true}]},\n \"e\": 2\n}";
	static const char *const p1[] = {"a", "bc", "[1]", "d"};
	static const char *const p2[] = {"e"};
	static const char *const p3[] = {"a", "bc", "[2]"};
	static const char *const p4[] = {"a", "nope"};
	static const char *const p5[] = {"a", "bc", "d"};
	static const char *const p6[] = {"a", "bc", "[x]"};
	int line = 0, col = 0;
	size_t len = strlen(doc);

	CHECK_INT(moat_json_locate(doc, len, p1, 4, &line, &col), 0);
	CHECK(line == 2 && col == 29);
	CHECK_INT(moat_json_locate_key(doc, len, p1, 4, &line, &col), 0);
	CHECK(line == 2 && col == 24);
	CHECK_INT(moat_json_locate_key(doc, len, p1, 2, &line, &col), 0);
	CHECK(line == 2 && col == 8);
	CHECK_INT(moat_json_locate(doc, len, p2, 1, &line, &col), 0);
	CHECK(line == 3 && col == 7);
	CHECK_INT(moat_json_locate(doc, len, p1, 0, &line, &col), 0);
	CHECK(line == 1 && col == 1);
	CHECK_INT(moat_json_locate(doc, len, p3, 3, &line, &col), -ENOENT);
	CHECK_INT(moat_json_locate(doc, len, p4, 2, &line, &col), -ENOENT);
	CHECK_INT(moat_json_locate(doc, len, p5, 3, &line, &col), -ENOENT);
	CHECK_INT(moat_json_locate(doc, len, p6, 3, &line, &col), -ENOENT);
	/* columns count characters, not bytes */
	static const char u[] = "{\"\xc3\xa9\": 1, \"x\": \"\xe2\x82\xac\", \"y\": 3}";
	static const char *const px[] = {"x"};
	static const char *const py[] = {"y"};
	static const char *const pe[] = {"\xc3\xa9"};

	CHECK_INT(moat_json_locate(u, strlen(u), px, 1, &line, &col), 0);
	CHECK_INT(col, 15);
	CHECK_INT(moat_json_locate(u, strlen(u), py, 1, &line, &col), 0);
	CHECK_INT(col, 25);
	CHECK_INT(moat_json_locate_key(u, strlen(u), pe, 1, &line, &col), 0);
	CHECK_INT(col, 2);
	/* surrogate pairs in keys */
	static const char sp[] = "{\"\\ud83d\\ude00\": 7}";
	static const char *const ps[] = {"\xf0\x9f\x98\x80"};

	CHECK_INT(moat_json_locate(sp, strlen(sp), ps, 1, &line, &col), 0);
	CHECK_INT(col, 18);
	/* malformed text fails cleanly */
	static const char bad[] = "{\"a\": [1, 2";
	static const char *const pb[] = {"a", "[5]"};

	CHECK_INT(moat_json_locate(bad, strlen(bad), pb, 2, &line, &col), -ENOENT);
	CHECK_INT(moat_json_locate("", 0, pb, 1, &line, &col), -ENOENT);
	CHECK_INT(moat_json_locate("\"abc", 4, pb, 1, &line, &col), -ENOENT);
}

static void test_json_parse(void)
{
	struct moat_error e;
	json_t *j = NULL;
	char *open, *close;
	struct moat_buf b = MOAT_BUF_INIT;

	moat_error_clear(&e);
	CHECK_INT(moat_json_parse_object("{\"path\": \"/x\"}", 14, "args", 100, &j, &e), 0);
	CHECK_STR(json_string_value(json_object_get(j, "path")), "/x");
	json_decref(j);
	j = NULL;
	CHECK_INT(moat_json_parse_object("[1]", 3, "args", 100, &j, &e), -EINVAL);
	CHECK_STR(e.msg, "expected object, got array");
	CHECK(j == NULL);
	CHECK_INT(moat_json_parse_object("{\"path\": \"/ok\", \"path\": \"/etc/shadow\"}", 38,
					 "args", 100, &j, &e),
		  -EINVAL);
	CHECK_STR(e.where, "args:1:17");
	CHECK_STR(e.msg, "duplicate object key \"path\"");
	CHECK_INT(moat_json_parse_object("{\"a\": {\"b\": 1, \"b\": 2}}", 23, NULL, 100, &j, &e),
		  -EINVAL);
	CHECK_STR(e.where, "<input>:1:16");
	CHECK_INT(moat_json_parse_object("{\"p\": \"a\\u0000b\"}", 17, "args", 100, &j, &e),
		  -EINVAL);
	CHECK_STR(e.msg, "string contains a NUL character (\\u0000)");
	CHECK_INT(moat_json_parse_object("{\"p\\u0000\": 1}", 14, "args", 100, &j, &e), -EINVAL);
	CHECK_STR(e.msg, "string contains a NUL character (\\u0000)");
	CHECK_INT(moat_json_parse_object("{\"p\": \"\xc0\xaf\"}", 11, "args", 100, &j, &e),
		  -EINVAL);
	CHECK(starts_with(e.msg, "invalid UTF-8"));
	CHECK_INT(moat_json_parse_object("{\"p\": \"\xed\xa0\x80\"}", 12, "args", 100, &j, &e),
		  -EINVAL); /* encoded surrogate */
	CHECK_INT(moat_json_parse_object("{\"p\": \"\\ud800\"}", 15, "args", 100, &j, &e),
		  -EINVAL); /* lone surrogate escape */
	/* size limit at the boundary */
	CHECK_INT(moat_json_parse_object("{\"a\": 1}", 8, "args", 8, &j, &e), 0);
	json_decref(j);
	CHECK_INT(moat_json_parse_object("{\"a\": 1} ", 9, "args", 8, &j, &e), -EINVAL);
	CHECK_STR(e.msg, "document larger than 8 bytes");
	/* depth limit at the boundary: 64 levels pass, 65 fail */
	for (int extra = 0; extra <= 1; extra++) {
		size_t k = MOAT_JSON_MAX_DEPTH - 1 + (size_t)extra;

		open = repeat("[", k);
		close = repeat("]", k);
		moat_buf_reset(&b);
		moat_buf_printf(&b, "{\"a\":%s%s}", open, close);
		free(open);
		free(close);
		j = NULL;
		CHECK_INT(moat_json_parse_object(b.data, b.len, "args", 1 << 20, &j, &e),
			  extra ? -EINVAL : 0);
		json_decref(j);
	}
	CHECK_STR(e.msg, "nesting deeper than 64 levels");
	/* brackets inside strings do not count */
	moat_buf_reset(&b);
	open = repeat("[", 1000);
	moat_buf_printf(&b, "{\"a\": \"%s\\\"{{\"}", open);
	free(open);
	CHECK_INT(moat_json_parse_object(b.data, b.len, "args", 1 << 20, &j, &e), 0);
	json_decref(j);
	/* messages never carry control characters from the input */
	CHECK_INT(moat_json_parse_object("{\"a\": \x1b[31m}", 13, "args", 100, &j, &e), -EINVAL);
	CHECK(strchr(e.msg, '\x1b') == NULL);
	moat_buf_release(&b);

	CHECK_STR(moat_json_type_name(NULL), "nothing");
	j = json_real(1.5);
	CHECK_STR(moat_json_type_name(j), "number");
	json_decref(j);
}

/* command_rules[].match: Aar's substring by default, "glob" and "regex" by
 * name (is_regex still spells regex); the warnings of `moat config check`. */
struct warned {
	size_t n;
	char text[8][512];
};

static void note_warning(const struct moat_loc *loc, const char *key, const char *msg, void *ud)
{
	struct warned *w = ud;

	if (w->n < 8)
		snprintf(w->text[w->n], sizeof(w->text[0]), "%s:%d:%d: %s: %s",
			 loc->file ? loc->file : "?", loc->line, loc->column, key, msg);
	w->n++;
}

static void test_match_and_warnings(void)
{
	static const char doc[] =
	    "{\"command_rules\": [\n"
	    "  {\"pattern\": \"DROP TABLE\", \"decision\": \"deny\"},\n"
	    "  {\"pattern\": \"rm .*\", \"decision\": \"deny\"},\n"
	    "  {\"pattern\": \"git *\", \"decision\": \"allow\", \"match\": \"glob\"},\n"
	    "  {\"pattern\": \"a*b\", \"decision\": \"ask\", \"match\": \"substring\"},\n"
	    "  {\"pattern\": \"^x\", \"decision\": \"ask\", \"is_regex\": true},\n"
	    "  {\"pattern\": \"^y\", \"decision\": \"ask\", \"match\": \"regex\", \"is_regex\": true},\n"
	    "  {\"pattern\": \"z?\", \"decision\": \"ask\", \"is_regex\": false}],\n"
	    " \"denied_commands\": [\"DROP DATABASE\", \"it's\"]}";
	struct moat_config c;
	struct moat_error e;
	struct warned w = {0};
	char *json;

	moat_config_init(&c);
	CHECKF(load(&c, doc, 0, &e) == 0, "match keys load (%s: %s)", e.key, e.msg);
	CHECK_INT(c.ncommand_rules, 7);
	CHECK_INT(c.command_rules[0].match, MOAT_CMD_MATCH_SUBSTRING);
	CHECK(!c.command_rules[0].match_given);
	CHECK_INT(c.command_rules[2].match, MOAT_CMD_MATCH_GLOB);
	CHECK_INT(c.command_rules[3].match, MOAT_CMD_MATCH_SUBSTRING);
	CHECK(c.command_rules[3].match_given);
	CHECK_INT(c.command_rules[4].match, MOAT_CMD_MATCH_REGEX);
	CHECK_INT(c.command_rules[5].match, MOAT_CMD_MATCH_REGEX);
	CHECK_INT(c.command_rules[6].match, MOAT_CMD_MATCH_SUBSTRING);
	CHECK_INT(moat_config_warnings(&c, note_warning, &w), 3);
	CHECK_INT(w.n, 3);
	CHECKF(strstr(w.text[0], "t.json:3:15: safety.command_rules[1].pattern: \"rm .*\" holds glob") ==
		   w.text[0],
	       "the warning names the rule and its place: %s", w.text[0]);
	CHECK(strstr(w.text[0], "\"match\": \"glob\"") != NULL);
	CHECKF(strstr(w.text[1], "safety.command_rules[6].pattern: \"z?\"") != NULL, "%s", w.text[1]);
	CHECKF(strstr(w.text[2], "t.json:9:39: safety.denied_commands[1]: \"it's\" is not a shell") ==
		   w.text[2],
	       "%s", w.text[2]);
	/* the effective configuration names the match of every rule */
	json = moat_config_to_json(&c);
	CHECK(json && strstr(json, "{\"pattern\": \"DROP TABLE\", \"decision\": \"deny\", "
				   "\"match\": \"substring\"}"));
	CHECK(json && strstr(json, "{\"pattern\": \"git *\", \"decision\": \"allow\", "
				   "\"match\": \"glob\"}"));
	CHECK(json && strstr(json, "\"match\": \"regex\"}"));
	CHECK(json && !strstr(json, "is_regex"));
	free(json);
	CHECK(moat_config_is_default_denied_command("shutdown"));
	CHECK(moat_config_is_default_denied_command("curl | sh"));
	CHECK(!moat_config_is_default_denied_command("DROP DATABASE"));
	CHECK(!moat_config_is_default_denied_command(NULL));
	CHECK_INT(moat_config_warnings(NULL, NULL, NULL), 0);
	moat_config_release(&c);
}

int main(void)
{
	moat_config_set_env(fake_env, NULL);
	test_defaults();
	test_shapes();
	test_aar_examples();
	test_errors();
	test_raw_nul();
	test_exempt_paths();
	test_limits();
	test_project();
	test_approvals();
	test_expand();
	test_merge();
	test_csv();
	test_match_and_warnings();
	test_to_json();
	test_json_locate();
	test_json_parse();
	test_sandbox_profiles();
	test_profile_limits();
	return tap_done();
}
