/* The tool registry: names to kinds (with the alias run_shell_command for
 * bash), the dispatch of one call, and the life cycle of a result.
 *
 * Must never: run a tool for an unknown kind or for arguments that are not
 * an object, or decide anything: the policy and the gate have already said
 * yes when moat_tool_run is called. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/str.h"
#include "tools/tools.h"

static const struct {
	const char *name;
	enum moat_tool_kind kind;
} names[] = {
    {"read_file", MOAT_TOOL_READ_FILE}, {"write_file", MOAT_TOOL_WRITE_FILE},
    {"edit_file", MOAT_TOOL_EDIT_FILE}, {"list_directory", MOAT_TOOL_LIST_DIRECTORY},
    {"bash", MOAT_TOOL_BASH},		{"run_shell_command", MOAT_TOOL_BASH},
};

enum moat_tool_kind moat_tool_lookup(const char *name)
{
	for (size_t i = 0; name && i < MOAT_ARRAY_SIZE(names); i++)
		if (!strcmp(names[i].name, name))
			return names[i].kind;
	return MOAT_TOOL_NONE;
}

const char *moat_tool_name(enum moat_tool_kind k)
{
	/* the first name of a kind is its canonical one */
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(names); i++)
		if (names[i].kind == k)
			return names[i].name;
	return NULL;
}

void moat_tool_result_init(struct moat_tool_result *r)
{
	/* (field by field: the text buffers need only be empty strings, and
	 * zeroing 2.5 KiB three times a call shows in a 4 KiB read) */
	r->ok = false;
	r->output = NULL;
	r->output_len = 0;
	r->error[0] = '\0';
	r->data = NULL;
	r->exit_code = -1;
	r->signal = 0;
	r->timed_out = false;
	r->cancelled = false;
	r->duration_ms = 0;
	r->bytes_out = 0;
	r->sandbox[0] = '\0';
}

void moat_tool_result_release(struct moat_tool_result *r)
{
	if (!r)
		return;
	free(r->output);
	json_decref(r->data);
	moat_tool_result_init(r);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int moat_tool_run(const struct moat_tool_env *env, enum moat_tool_kind k, json_t *args,
		  const struct moat_tool_call *call, struct moat_tool_result *ret)
{
	double t0;
	int r;

	if (!ret)
		return -EINVAL;
	moat_tool_result_init(ret);
	if (!env) {
		snprintf(ret->error, sizeof(ret->error), "no tool environment was given");
		return -EINVAL;
	}
	if (!json_is_object(args)) {
		snprintf(ret->error, sizeof(ret->error),
			 "the arguments of %s must be a JSON object",
			 moat_tool_name(k) ? moat_tool_name(k) : "a tool");
		return -EINVAL;
	}
	t0 = now_ms();
	switch (k) {
	case MOAT_TOOL_READ_FILE:
		r = moat_tool_read_file(env, args, call, ret);
		break;
	case MOAT_TOOL_WRITE_FILE:
		r = moat_tool_write_file(env, args, call, ret);
		break;
	case MOAT_TOOL_EDIT_FILE:
		r = moat_tool_edit_file(env, args, call, ret);
		break;
	case MOAT_TOOL_LIST_DIRECTORY:
		r = moat_tool_list_directory(env, args, call, ret);
		break;
	case MOAT_TOOL_BASH:
		/* bash times itself (and reports its exit code and signal) */
		return moat_tool_bash(env, args, call, ret);
	case MOAT_TOOL_NONE:
	case MOAT_TOOL__COUNT:
	default:
		snprintf(ret->error, sizeof(ret->error), "unknown built-in tool");
		return -EINVAL;
	}
	ret->duration_ms = now_ms() - t0;
	return r;
}
