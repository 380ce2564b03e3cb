/* list_directory {path}: the entries of a directory with their type (file,
 * dir, symlink, other) and size, sorted by name (bytewise), at most
 * MOAT_LIST_MAX_ENTRIES of them: the first ones by name, with a line saying
 * how many there were when some are left out. Symlinks are shown with their
 * target text and never followed. Names are shown as valid UTF-8 on one
 * line (control characters, backslashes and invalid bytes as \xNN).
 *
 * Must never: list a directory whose real path the policy denies, follow a
 * symlink out of the allowed roots (fileops.c), or hold more than the cap
 * of names in memory however large the directory is. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/fileops.h"

struct entry {
	char *name;
	size_t len;
};

/* The kept entries are a max-heap by name: the largest kept name is
 * dropped when a smaller one comes. */
static int name_cmp(const struct entry *a, const struct entry *b)
{
	return strcmp(a->name, b->name);
}

static void sift_down(struct entry *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct entry tmp;

		if (l < n && name_cmp(&h[l], &h[m]) > 0)
			m = l;
		if (r < n && name_cmp(&h[r], &h[m]) > 0)
			m = r;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

static void sift_up(struct entry *h, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		struct entry tmp;

		if (name_cmp(&h[i], &h[p]) <= 0)
			return;
		tmp = h[i];
		h[i] = h[p];
		h[p] = tmp;
		i = p;
	}
}

static int qcmp(const void *a, const void *b)
{
	return name_cmp(a, b);
}

static const char *type_name(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISDIR(m))
		return "dir";
	if (S_ISLNK(m))
		return "symlink";
	return "other";
}

static int list(int dfd, const char *abs, struct moat_tool_result *ret)
{
	struct entry *heap;
	size_t n = 0, total = 0;
	struct moat_buf out = MOAT_BUF_INIT, esc = MOAT_BUF_INIT;
	json_t *entries = NULL;
	struct dirent *de;
	DIR *d;
	int r = 0;

	heap = calloc(MOAT_LIST_MAX_ENTRIES, sizeof(*heap));
	if (!heap) {
		close(dfd);
		return moat_fo_sysfail(ret, ENOMEM, abs);
	}
	d = fdopendir(dfd);
	if (!d) {
		r = moat_fo_sysfail(ret, errno, abs);
		close(dfd);
		free(heap);
		return r;
	}
	for (;;) {
		struct entry e;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				r = moat_fo_sysfail(ret, errno, abs);
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		total++;
		e.name = de->d_name;
		if (n == MOAT_LIST_MAX_ENTRIES && name_cmp(&e, &heap[0]) >= 0)
			continue;
		e.len = strlen(de->d_name);
		e.name = moat_strndup(de->d_name, e.len);
		if (!e.name) {
			r = moat_fo_sysfail(ret, ENOMEM, abs);
			break;
		}
		if (n == MOAT_LIST_MAX_ENTRIES) {
			free(heap[0].name);
			heap[0] = e;
			sift_down(heap, n, 0);
		} else {
			heap[n] = e;
			sift_up(heap, n++);
		}
	}
	if (r)
		goto out;
	qsort(heap, n, sizeof(*heap), qcmp);
	entries = json_array();
	if (!entries) {
		r = moat_fo_sysfail(ret, ENOMEM, abs);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		char link[MOAT_PATH_MAX];
		ssize_t ln = -1;
		json_t *ent;
		const char *type;
		long long size = -1;

		if (fstatat(dirfd(d), heap[i].name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			type = "other"; /* gone since it was listed */
		} else {
			type = type_name(st.st_mode);
			if (!S_ISDIR(st.st_mode))
				size = (long long)st.st_size;
			if (S_ISLNK(st.st_mode))
				ln = readlinkat(dirfd(d), heap[i].name, link, sizeof(link) - 1);
		}
		moat_buf_reset(&esc);
		moat_fo_put_name(&esc, heap[i].name, heap[i].len);
		if (!strcmp(type, "dir"))
			moat_buf_printf(&out, "%-7s %12s  %s/\n", type, "-", esc.data);
		else
			moat_buf_printf(&out, "%-7s %12lld  %s", type, size, esc.data);
		if (ln >= 0) {
			moat_buf_puts(&out, " -> ");
			moat_fo_put_name(&out, link, (size_t)ln);
		}
		if (strcmp(type, "dir"))
			moat_buf_putc(&out, '\n');
		ent = esc.oom ? NULL
			      : json_pack("{s:s, s:s, s:I}", "name", esc.data, "type", type, "size",
					  (json_int_t)size);
		if (ent && ln >= 0) {
			/* the link's target, as the text shows it */
			moat_buf_reset(&esc);
			moat_fo_put_name(&esc, link, (size_t)ln);
			if (esc.oom ||
			    json_object_set_new(ent, "target", json_string(esc.data)) < 0) {
				json_decref(ent);
				ent = NULL;
			}
		}
		if (!ent || json_array_append_new(entries, ent) < 0) {
			r = moat_fo_sysfail(ret, ENOMEM, abs);
			goto out;
		}
	}
	if (total == 0)
		moat_buf_puts(&out, "[the directory is empty]\n");
	else if (total > n)
		moat_buf_printf(&out,
				"[truncated: the first %zu of %zu entries by name are shown; list "
				"a narrower directory or use bash]\n",
				n, total);
	moat_buf_append(&out, "", 0);
	if (out.oom) {
		r = moat_fo_sysfail(ret, ENOMEM, abs);
		goto out;
	}
	ret->data = json_pack("{s:s, s:I, s:b}", "path", abs, "total", (json_int_t)total,
			      "truncated", (int)(total > n));
	if (ret->data)
		json_object_set_new(ret->data, "entries", entries); /* (takes it) */
	else
		json_decref(entries);
	entries = NULL;
	ret->output_len = out.len;
	ret->bytes_out = out.len;
	ret->output = moat_buf_steal(&out);
	ret->ok = true;
out:
	json_decref(entries);
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(heap[i].name);
	free(heap);
	moat_buf_release(&out);
	moat_buf_release(&esc);
	return r;
}

int moat_tool_list_directory(const struct moat_tool_env *env, json_t *args,
			     const struct moat_tool_call *call, struct moat_tool_result *ret)
{
	static const struct moat_fo_arg spec[] = {
	    {"path", MOAT_FO_STRING, true},
	};
	json_t *v[MOAT_ARRAY_SIZE(spec)];
	char abs[MOAT_PATH_MAX], real[MOAT_PATH_MAX];
	struct stat st;
	int dfd, r;

	(void)call;
	moat_tool_result_init(ret);
	r = moat_fo_args("list_directory", args, spec, MOAT_ARRAY_SIZE(spec), v, ret);
	if (r)
		return moat_fo_ret(r);
	r = moat_fo_abspath(env, v[0], abs, ret);
	if (r)
		return moat_fo_ret(r);
	r = moat_fo_open(env, "list_directory", abs, MOAT_FO_DIRECTORY, &dfd, &st, real, ret);
	if (r)
		return moat_fo_ret(r);
	return moat_fo_ret(list(dfd, abs, ret));
}
