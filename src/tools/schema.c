/* The built-in tools as a model sees them: a description saying what each
 * tool does, its limits and how to use it well, and JSON Schemas (2020-12)
 * of its arguments and of its structured result, for MCP tools/list.
 *
 * The input schemas say what the tools accept (they refuse unknown keys,
 * so additionalProperties is false); the output schemas describe the
 * structured data the tools return (struct moat_tool_result.data) and
 * require only what every successful call returns, so a client validating
 * against them never rejects a real result. Static text only: no I/O. */
#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tools/tools.h"

static const char *const descriptions[MOAT_TOOL__COUNT] = {
    [MOAT_TOOL_READ_FILE] =
	"Read a text file. Returns its lines numbered like `cat -n` (line number, a tab, "
	"the line), by default the first 2000 lines and at "
	"most 256 KiB per call; use `offset` (first line, 1-based) and `limit` (number of "
	"lines) to page through a longer file, and `raw: true` for the exact text without "
	"line numbers. Binary files are reported, not dumped. Relative paths are resolved "
	"against the workspace; every path is checked against moat's policy (denied paths "
	"such as secrets and keys are refused, and only the allowed paths are readable).",
    [MOAT_TOOL_WRITE_FILE] =
	"Create a file or replace its whole content. Missing parent directories are created "
	"(the result names them). The write is atomic (a temporary file "
	"in the same directory, then a rename), keeps the mode of an existing file, and "
	"never follows a symbolic link out of the allowed paths. Content is at most 16 MiB. "
	"To change part of a file prefer edit_file; read a file before overwriting it. "
	"Writes may need the user's approval, and denied paths (secrets, .git/hooks, shell "
	"start-up files, ...) are refused.",
    [MOAT_TOOL_EDIT_FILE] =
	"Replace an exact piece of text in a file. `old_string` must appear exactly once "
	"(copy it from read_file's output without the line-number prefix, with enough "
	"surrounding lines to make it unique), unless `replace_all` is true, which replaces "
	"every occurrence. The edit is atomic like write_file. It fails, changing nothing, "
	"when `old_string` is absent or not unique: read the file again and retry with the "
	"exact current text.",
    [MOAT_TOOL_LIST_DIRECTORY] =
	"List a directory: one entry per line with its type (file, dir, symlink, other) and "
	"size, sorted by name, at most 1000 entries. Not "
	"recursive: list a subdirectory to go deeper. Relative paths are resolved against "
	"the workspace.",
    [MOAT_TOOL_BASH] =
	"Run a shell command with /bin/sh -c in the workspace, inside moat's sandbox (the "
	"filesystem outside the workspace is read-only or hidden, the network may be cut, "
	"privileges are dropped). Returns stdout and stderr (each capped at 64 KiB, with a "
	"truncation marker), the exit code, the signal and whether it timed out. `timeout` "
	"is in seconds (default 120, at most 3600). Commands are checked against moat's policy "
	"first: destructive or exfiltrating commands are refused and some need the user's "
	"approval; a refusal says why, so change the command instead of retrying it. "
	"Prefer read_file, edit_file and list_directory for files. There is no "
	"interactive input: stdin is empty.",
};

static const char *const input_schemas[MOAT_TOOL__COUNT] = {
    [MOAT_TOOL_READ_FILE] =
	"{\"type\":\"object\",\"properties\":{"
	"\"path\":{\"type\":\"string\",\"description\":\"The file to read: absolute, or "
	"relative to the workspace.\"},"
	"\"offset\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"The first line "
	"to return (1 is the first line of the file; 0 means 1). Default: 1.\"},"
	"\"limit\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"How many lines to "
	"return. Default: 2000.\"},"
	"\"raw\":{\"type\":\"boolean\",\"description\":\"true: the exact text, without "
	"line numbers. Default: false.\"}"
	"},\"required\":[\"path\"],\"additionalProperties\":false}",
    [MOAT_TOOL_WRITE_FILE] =
	"{\"type\":\"object\",\"properties\":{"
	"\"path\":{\"type\":\"string\",\"description\":\"The file to write: absolute, or "
	"relative to the workspace. Missing directories on the way are created.\"},"
	"\"content\":{\"type\":\"string\",\"description\":\"The whole new content of the "
	"file.\"}"
	"},\"required\":[\"path\",\"content\"],\"additionalProperties\":false}",
    [MOAT_TOOL_EDIT_FILE] =
	"{\"type\":\"object\",\"properties\":{"
	"\"path\":{\"type\":\"string\",\"description\":\"The file to edit: absolute, or "
	"relative to the workspace.\"},"
	"\"old_string\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The exact "
	"text to replace, as it is in the file now (whitespace and indentation "
	"included).\"},"
	"\"new_string\":{\"type\":\"string\",\"description\":\"The text to put in its "
	"place (may be empty to delete).\"},"
	"\"replace_all\":{\"type\":\"boolean\",\"description\":\"true: replace every "
	"occurrence; false (default): old_string must occur exactly once.\"}"
	"},\"required\":[\"path\",\"old_string\",\"new_string\"],"
	"\"additionalProperties\":false}",
    [MOAT_TOOL_LIST_DIRECTORY] =
	"{\"type\":\"object\",\"properties\":{"
	"\"path\":{\"type\":\"string\",\"description\":\"The directory to list: absolute, "
	"or relative to the workspace (\\\".\\\" is the workspace itself).\"}"
	"},\"required\":[\"path\"],\"additionalProperties\":false}",
    [MOAT_TOOL_BASH] =
	"{\"type\":\"object\",\"properties\":{"
	"\"command\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The command "
	"line, run with /bin/sh -c.\"},"
	"\"cwd\":{\"type\":\"string\",\"description\":\"The directory to run it in: "
	"absolute, or relative to the workspace. Default: the workspace.\"},"
	"\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3600,\"description\":"
	"\"Seconds before the command is "
	"killed. Default: 120.\"}"
	"},\"required\":[\"command\"],\"additionalProperties\":false}",
};

static const char *const output_schemas[MOAT_TOOL__COUNT] = {
    [MOAT_TOOL_READ_FILE] =
	"{\"type\":\"object\",\"properties\":{"
	"\"path\":{\"type\":\"string\",\"description\":\"The file read, as an absolute "
	"path.\"},"
	"\"size\":{\"type\":\"integer\",\"description\":\"Its size in bytes.\"},"
	"\"offset\":{\"type\":\"integer\",\"description\":\"The first line returned.\"},"
	"\"lines\":{\"type\":\"integer\",\"description\":\"Lines returned (0 for a binary "
	"file).\"},"
	"\"truncated\":{\"type\":\"boolean\",\"description\":\"More lines follow: read on "
	"from next_offset.\"},"
	"\"next_offset\":{\"type\":\"integer\",\"description\":\"The offset to read on "
	"with, when truncated.\"},"
	"\"binary\":{\"type\":\"boolean\",\"description\":\"The file is binary: reported, "
	"not dumped.\"},"
	"\"text\":{\"type\":\"string\",\"description\":\"The text returned, exactly as the "
	"text content has it: the lines numbered like cat -n (raw: as they are), then a "
	"[truncated: ...] line when more follows; for a binary file, the sentence saying "
	"so.\"}"
	"},\"required\":[\"path\",\"size\",\"offset\",\"lines\",\"truncated\",\"binary\","
	"\"text\"]}",
    [MOAT_TOOL_WRITE_FILE] =
	"{\"type\":\"object\",\"properties\":{"
	"\"path\":{\"type\":\"string\",\"description\":\"The file written, as an absolute "
	"path.\"},"
	"\"bytes\":{\"type\":\"integer\",\"description\":\"Bytes written.\"},"
	"\"created\":{\"type\":\"boolean\",\"description\":\"The file did not exist "
	"before.\"},"
	"\"created_dirs\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
	"\"description\":\"The directories made for the file (absolute real paths, "
	"shallowest first); empty when its directory existed.\"}"
	"},\"required\":[\"path\",\"bytes\",\"created\",\"created_dirs\"]}",
    [MOAT_TOOL_EDIT_FILE] =
	"{\"type\":\"object\",\"properties\":{"
	"\"path\":{\"type\":\"string\",\"description\":\"The file edited, as an absolute "
	"path.\"},"
	"\"replacements\":{\"type\":\"integer\",\"description\":\"Occurrences "
	"replaced.\"},"
	"\"bytes\":{\"type\":\"integer\",\"description\":\"The file's new size in "
	"bytes.\"},"
	"\"crlf_matched\":{\"type\":\"boolean\",\"description\":\"old_string matched "
	"with its line breaks read as CRLF, the file's line endings.\"},"
	"\"new_line_breaks\":{\"type\":\"string\",\"enum\":[\"CRLF\",\"LF\"],"
	"\"description\":\"new_string's line breaks were written so, as the file's line "
	"endings are.\"}"
	"},\"required\":[\"path\",\"replacements\",\"bytes\"]}",
    [MOAT_TOOL_LIST_DIRECTORY] =
	"{\"type\":\"object\",\"properties\":{"
	"\"path\":{\"type\":\"string\",\"description\":\"The directory listed, as an "
	"absolute path.\"},"
	"\"total\":{\"type\":\"integer\",\"description\":\"Entries in the directory.\"},"
	"\"truncated\":{\"type\":\"boolean\",\"description\":\"Only the first 1000 by name "
	"are listed.\"},"
	"\"entries\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	"\"name\":{\"type\":\"string\"},"
	"\"type\":{\"type\":\"string\",\"description\":\"file, dir, symlink or other.\"},"
	"\"size\":{\"type\":\"integer\",\"description\":\"Bytes; -1 for a directory.\"},"
	"\"target\":{\"type\":\"string\",\"description\":\"A symlink's target, not "
	"followed.\"}"
	"},\"required\":[\"name\",\"type\",\"size\"]}}"
	"},\"required\":[\"path\",\"total\",\"truncated\",\"entries\"]}",
    [MOAT_TOOL_BASH] =
	"{\"type\":\"object\",\"properties\":{"
	"\"stdout\":{\"type\":\"string\",\"description\":\"Standard output, capped.\"},"
	"\"stderr\":{\"type\":\"string\",\"description\":\"Standard error, capped.\"},"
	"\"exit_code\":{\"type\":[\"integer\",\"null\"],\"description\":\"The exit "
	"status; null when the command was killed or did not run.\"},"
	"\"signal\":{\"type\":[\"integer\",\"null\"],\"description\":\"The signal that "
	"killed the command; null for none.\"},"
	"\"duration_ms\":{\"type\":\"number\"},"
	"\"timed_out\":{\"type\":\"boolean\"},"
	"\"cancelled\":{\"type\":\"boolean\"},"
	"\"stdout_truncated\":{\"type\":\"boolean\"},"
	"\"stderr_truncated\":{\"type\":\"boolean\"},"
	"\"stdout_bytes\":{\"type\":\"integer\",\"description\":\"Bytes written to "
	"stdout, before the cap.\"},"
	"\"stderr_bytes\":{\"type\":\"integer\"},"
	"\"warning\":{\"type\":\"string\",\"description\":\"A protection this kernel could "
	"not enforce.\"},"
	"\"sandbox\":{\"type\":[\"object\",\"null\"],\"description\":\"What the sandbox "
	"requested and what this kernel enforced.\"}"
	"},\"required\":[\"stdout\",\"stderr\",\"exit_code\",\"signal\",\"timed_out\"]}",
};

/* the numbers written out above */
_Static_assert(MOAT_READ_DEFAULT_LINES == 2000, "read_file's default line count changed");
_Static_assert(MOAT_LIST_MAX_ENTRIES == 1000, "list_directory's cap changed");
_Static_assert(MOAT_READ_MAX_BYTES == 256u << 10, "read_file's byte cap changed");
_Static_assert(MOAT_WRITE_MAX_BYTES == 16u << 20, "write_file's byte cap changed");
_Static_assert(MOAT_BASH_OUTPUT_CAP == 64u << 10, "bash's output cap changed");
_Static_assert(MOAT_BASH_DEFAULT_TIMEOUT_S == 120, "bash's default timeout changed");
_Static_assert(MOAT_BASH_MAX_TIMEOUT_S == 3600, "bash's longest timeout changed");

static bool valid_kind(enum moat_tool_kind k)
{
	return k > MOAT_TOOL_NONE && k < MOAT_TOOL__COUNT;
}

const char *moat_tool_description(enum moat_tool_kind k)
{
	return valid_kind(k) ? descriptions[k] : NULL;
}

const char *moat_tool_input_schema(enum moat_tool_kind k)
{
	return valid_kind(k) ? input_schemas[k] : NULL;
}

const char *moat_tool_output_schema(enum moat_tool_kind k)
{
	return valid_kind(k) ? output_schemas[k] : NULL;
}

/* one parse of each schema, kept (static text) */
static json_t *schema_of(enum moat_tool_kind k)
{
	static json_t *parsed[MOAT_TOOL__COUNT];

	if (!parsed[k])
		parsed[k] = json_loads(input_schemas[k], 0, NULL);
	return parsed[k];
}

static const char *type_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

int moat_tool_args_check(enum moat_tool_kind k, json_t *args, char *err, size_t errsz)
{
	const char *name = moat_tool_name(k), *key;
	json_t *schema, *props, *req, *v;
	size_t i;

	if (!valid_kind(k) || !(schema = schema_of(k))) {
		snprintf(err, errsz, "no such tool");
		return -EINVAL;
	}
	if (!json_is_object(args)) {
		snprintf(err, errsz, "the arguments of %s must be a JSON object", name);
		return -EINVAL;
	}
	props = json_object_get(schema, "properties");
	json_object_foreach(args, key, v) {
		json_t *p = json_object_get(props, key), *t, *lim;
		const char *want;

		if (!p) {
			snprintf(err, errsz, "unknown argument '%.100s' for %s", key, name);
			return -EINVAL;
		}
		t = json_object_get(p, "type");
		want = json_string_value(t);
		if (!want)
			continue;
		if (json_is_null(v) && strcmp(want, "null")) {
			/* an optional argument given as null: the tools take it as absent */
			continue;
		}
		if ((!strcmp(want, "string") && !json_is_string(v)) ||
		    (!strcmp(want, "integer") && !json_is_integer(v)) ||
		    (!strcmp(want, "boolean") && !json_is_boolean(v))) {
			snprintf(err, errsz, "argument '%s' of %s must be %s, not %s", key, name,
				 !strcmp(want, "integer") ? "an integer" : !strcmp(want, "boolean") ? "a boolean" : "a string",
				 type_of(v));
			return -EINVAL;
		}
		if (json_is_string(v)) {
			if (memchr(json_string_value(v), '\0', json_string_length(v))) {
				snprintf(err, errsz, "argument '%s' of %s holds a NUL byte", key, name);
				return -EINVAL;
			}
			lim = json_object_get(p, "minLength");
			if (json_is_integer(lim) &&
			    (json_int_t)json_string_length(v) < json_integer_value(lim)) {
				snprintf(err, errsz, "argument '%s' of %s is empty", key, name);
				return -EINVAL;
			}
		}
		if (json_is_integer(v)) {
			json_t *lo = json_object_get(p, "minimum"), *hi = json_object_get(p, "maximum");

			if ((json_is_integer(lo) && json_integer_value(v) < json_integer_value(lo)) ||
			    (json_is_integer(hi) && json_integer_value(v) > json_integer_value(hi))) {
				snprintf(err, errsz, "argument '%s' of %s is out of range", key, name);
				return -EINVAL;
			}
		}
	}
	req = json_object_get(schema, "required");
	json_array_foreach(req, i, v) {
		const json_t *got = json_object_get(args, json_string_value(v));

		if (!got || json_is_null(got)) {
			snprintf(err, errsz, "%s needs the argument '%s'", name, json_string_value(v));
			return -EINVAL;
		}
	}
	return 0;
}
