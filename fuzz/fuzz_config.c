/* libFuzzer harness for the configuration loader and the strict JSON
 * helpers. Each input is loaded as a user config and as a project config;
 * when it loads, its to_json output must load again and print the same
 * (abort otherwise); every key of a parsed object must be found again by the
 * locator. The input is also fed to the flag helpers as a CSV list. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "core/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *fuzz_env(const char *name, void *ud)
{
	(void)ud;
	if (!strcmp(name, "HOME"))
		return "/home/fuzz";
	if (!strcmp(name, "GLOBBY"))
		return "/a*b?[c]{d,e}\\$~";
	if (!strcmp(name, "EMPTY"))
		return "";
	return NULL;
}

static void check_roundtrip(const struct moat_config *c)
{
	struct moat_config again;
	struct moat_error err;
	char *a = moat_config_to_json(c), *b;

	if (!a)
		return;
	moat_config_init(&again);
	if (moat_config_load_string(&again, a, strlen(a), "roundtrip", 0, &err) < 0)
		abort(); /* the effective config must always load */
	b = moat_config_to_json(&again);
	if (b && strcmp(a, b))
		abort(); /* and print the same */
	free(a);
	free(b);
	moat_config_release(&again);
}

static void check_locator(const char *text, size_t len)
{
	struct moat_error err;
	json_t *obj;
	const char *key;
	json_t *v;

	if (moat_json_parse_object(text, len, "fuzz", MOAT_CONFIG_MAX_BYTES, &obj, &err) < 0)
		return;
	json_object_foreach(obj, key, v)
	{
		const char *path[1] = {key};
		size_t off;

		if (moat_json_locate_offset(text, len, path, 1, true, &off) < 0 ||
		    !moat_json_string_equals(text, len, off, key))
			abort();
		if (moat_json_locate_offset(text, len, path, 1, false, &off) < 0)
			abort();
		if (json_is_array(v) && json_array_size(v) > 0) {
			const char *p2[2] = {key, "[0]"};

			if (moat_json_locate_offset(text, len, p2, 2, false, &off) < 0)
				abort();
		}
	}
	json_decref(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct moat_config c;
	struct moat_error err;
	const char *text = (const char *)data;
	char *s;

	moat_config_set_env(fuzz_env, NULL);
	moat_error_clear(&err);

	moat_config_init(&c);
	if (moat_config_load_string(&c, text, size, "fuzz", 0, &err) == 0)
		check_roundtrip(&c);
	else if (!strncmp(err.msg, "internal error", 14))
		abort(); /* the scanner and jansson disagree about the document */
	moat_config_release(&c);

	moat_config_init(&c);
	if (moat_config_load_string(&c, text, size, "fuzz", MOAT_CONFIG_PROJECT, &err) == 0) {
		/* a project file never loosens */
		if (!c.hardline || !c.default_denied_paths || !c.default_denied_commands ||
		    c.ntools || c.allow_local_network || c.sandbox_mode != MOAT_SANDBOX_LOCAL)
			abort();
	}
	moat_config_release(&c);

	check_locator(text, size);

	/* the flag helpers and the expander take C strings */
	s = moat_strndup(text, size);
	if (s && strlen(s) == size && size <= 8192) {
		struct moat_buf b = MOAT_BUF_INIT;

		moat_config_init(&c);
		moat_config_add_denied_paths_csv(&c, s, &err);
		moat_config_set_allowed_paths_csv(&c, s, &err);
		check_roundtrip(&c);
		moat_config_release(&c);
		moat_config_expand_ex(s, 0, &b, &err);
		moat_config_expand_ex(s, MOAT_EXPAND_GLOB, &b, &err);
		moat_buf_release(&b);
	}
	free(s);
	return 0;
}
