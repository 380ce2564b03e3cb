/* write_file {path, content}: replace or create a file with content,
 * atomically (a temporary file beside it, fsync, rename, fsync of the
 * directory: after a crash the file holds the old or the new content, never
 * a mix), keeping the mode of a file it replaces (new files: 0644 less the
 * umask). Missing directories of the path are made (0755 less the umask;
 * fileops.c: each checked against the policy before any is made, never
 * through a symbolic link); the result names them.
 *
 * Must never: write through a symlink whose target lies outside the allowed
 * roots, write a hard-linked file, write in place, or write a file whose
 * real path the policy denies (fileops.c does the resolution and checks). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/fileops.h"

int moat_tool_write_file(const struct moat_tool_env *env, json_t *args,
			 const struct moat_tool_call *call, struct moat_tool_result *ret)
{
	static const struct moat_fo_arg spec[] = {
	    {"path", MOAT_FO_STRING, true},
	    {"content", MOAT_FO_STRING, true},
	};
	json_t *v[MOAT_ARRAY_SIZE(spec)];
	char abs[MOAT_PATH_MAX];
	struct moat_fo_target t;
	struct moat_buf out = MOAT_BUF_INIT;
	json_t *dirs;
	size_t len;
	int r;

	(void)call;
	moat_tool_result_init(ret);
	r = moat_fo_args("write_file", args, spec, MOAT_ARRAY_SIZE(spec), v, ret);
	if (r)
		return moat_fo_ret(r);
	len = json_string_length(v[1]);
	if (len > MOAT_WRITE_MAX_BYTES)
		return moat_fo_invalid(ret,
				       "argument 'content' of write_file is %zu bytes, over the "
				       "limit of %u",
				       len, MOAT_WRITE_MAX_BYTES);
	r = moat_fo_abspath(env, v[0], abs, ret);
	if (r)
		return moat_fo_ret(r);
	r = moat_fo_open_target(env, "write_file", abs, true, &t, ret);
	if (r)
		return moat_fo_ret(r);
	r = moat_fo_replace(&t, json_string_value(v[1]), len, false, abs, ret);
	if (r)
		moat_fo_target_unmake(&t); /* nothing made is left */
	moat_fo_target_close(&t);
	if (r)
		return moat_fo_ret(r);
	dirs = json_array();
	if (t.made && dirs) {
		/* the made directories: the last t.made components of the
		 * file's real directory, shallowest first */
		size_t dl = (size_t)(strrchr(t.real, '/') - t.real), at = dl;

		for (unsigned i = 0; i < t.made; i++)
			while (at > 0 && t.real[--at] != '/')
				;
		moat_buf_puts(&out,
			      t.made == 1 ? "Created the directory" : "Created the directories");
		for (size_t i = at + 1; i <= dl; i++) {
			if (i < dl && t.real[i] != '/')
				continue;
			moat_buf_printf(&out, "%s %.*s", json_array_size(dirs) ? "," : "", (int)i,
					t.real);
			json_array_append_new(dirs, json_stringn(t.real, i));
		}
		moat_buf_putc(&out, '\n');
	}
	moat_buf_printf(&out, "%s %zu byte%s to %s\n", t.exists ? "Wrote" : "Created a file of",
			len, len == 1 ? "" : "s", abs);
	if (out.oom || !dirs || json_array_size(dirs) != t.made) {
		json_decref(dirs);
		moat_buf_release(&out);
		return moat_fo_ret(moat_fo_sysfail(ret, ENOMEM, abs));
	}
	ret->data = json_pack("{s:s, s:I, s:b, s:o}", "path", abs, "bytes", (json_int_t)len,
			      "created", (int)!t.exists, "created_dirs", dirs);
	ret->output_len = out.len;
	ret->bytes_out = out.len;
	ret->output = moat_buf_steal(&out);
	ret->ok = true;
	return 0;
}
