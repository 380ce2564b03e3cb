/* edit_file {path, old_string, new_string, replace_all?}: exact text
 * replacement in an existing file. old_string must occur exactly once
 * (or, with replace_all, at least once); the error says how many times it
 * was found and what to do. The new content replaces the file atomically as
 * write_file does, and only if the file did not change since it was read.
 * Line endings: in a CRLF file the "\n" line breaks of old_string and
 * new_string are read as "\r\n" (models never send "\r"); in an LF file
 * new_string's "\r\n" are written "\n".
 *
 * Must never: edit through a symlink out of the allowed roots, edit a
 * hard-linked file, a binary file or a file whose real path the policy
 * denies; never leave the file half-edited, nor mix line endings in a file
 * that had one kind. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tools/fileops.h"

/* Read the whole regular file t names (at most max bytes) into b; the
 * descriptor must be the file t->st describes. */
static int read_target(struct moat_fo_target *t, size_t max, struct moat_buf *b,
		       const char *display, struct moat_tool_result *ret)
{
	struct stat st;
	int fd, r = 0;

	/* SECURITY: t->st said a regular file; O_NOFOLLOW and O_NONBLOCK
	 * keep a link or a FIFO swapped in since from being followed or
	 * blocking, and the descriptor must be that same file */
	fd = openat(t->dirfd, t->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno != ELOOP)
		return moat_fo_sysfail(ret, errno, display);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != t->st.st_dev ||
	    st.st_ino != t->st.st_ino || st.st_nlink > 1) {
		if (fd >= 0)
			close(fd);
		return moat_fo_fail(ret, "%.400s changed while it was being opened; try again",
				    display);
	}
	t->st = st;
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return moat_fo_fail(ret,
				    "%.400s is %lld bytes, over the %zu-byte limit of edit_file; "
				    "use bash for a file this large",
				    display, (long long)st.st_size, max);
	}
	if (moat_buf_reserve(b, (size_t)st.st_size + 1) < 0) {
		close(fd);
		return moat_fo_sysfail(ret, ENOMEM, display);
	}
	for (;;) {
		ssize_t n;

		if (moat_buf_reserve(b, 65536) < 0) {
			r = moat_fo_sysfail(ret, ENOMEM, display);
			break;
		}
		n = read(fd, b->data + b->len, b->cap - b->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = moat_fo_sysfail(ret, errno, display);
			break;
		}
		if (n == 0)
			break;
		b->len += (size_t)n;
		b->data[b->len] = '\0';
		if (b->len > max) {
			r = moat_fo_fail(ret, "%.400s grew over the %zu-byte limit of edit_file",
					 display, max);
			break;
		}
	}
	close(fd);
	moat_buf_append(b, "", 0);
	return r;
}

static size_t count_matches(const char *s, size_t n, const char *pat, size_t pn)
{
	size_t count = 0;
	const char *p = s, *end = s + n;

	while ((size_t)(end - p) >= pn) {
		const char *q = memmem(p, (size_t)(end - p), pat, pn);

		if (!q)
			break;
		count++;
		p = q + pn;
	}
	return count;
}

/* The line endings of a text. */
enum eol {
	EOL_NONE,  /* no line break */
	EOL_LF,	   /* every "\n" alone */
	EOL_CRLF,  /* every "\n" after a "\r" */
	EOL_MIXED, /* both */
};

static enum eol line_endings(const char *s, size_t n)
{
	const char *p = s, *end = s + n;
	bool lf = false, crlf = false;

	while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
		if (p > s && p[-1] == '\r')
			crlf = true;
		else
			lf = true;
		if (lf && crlf)
			return EOL_MIXED;
		p++;
	}
	return crlf ? EOL_CRLF : lf ? EOL_LF : EOL_NONE;
}

/* s has a "\n" not preceded by "\r" */
static bool has_bare_lf(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r'))
			return true;
	return false;
}

/* s into out with each "\n" not preceded by "\r" written "\r\n" */
static void to_crlf(const char *s, size_t n, struct moat_buf *out)
{
	size_t from = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\n' || (i > 0 && s[i - 1] == '\r'))
			continue;
		moat_buf_append(out, s + from, i - from);
		moat_buf_append(out, "\r\n", 2);
		from = i + 1;
	}
	moat_buf_append(out, s + from, n - from);
	moat_buf_append(out, "", 0);
}

/* s into out with each "\r\n" written "\n" */
static void to_lf(const char *s, size_t n, struct moat_buf *out)
{
	size_t from = 0;

	for (size_t i = 0; i + 1 < n; i++) {
		if (s[i] != '\r' || s[i + 1] != '\n')
			continue;
		moat_buf_append(out, s + from, i - from);
		from = i + 1; /* the "\n" is kept */
	}
	moat_buf_append(out, s + from, n - from);
	moat_buf_append(out, "", 0);
}

int moat_tool_edit_file(const struct moat_tool_env *env, json_t *args,
			const struct moat_tool_call *call, struct moat_tool_result *ret)
{
	static const struct moat_fo_arg spec[] = {
	    {"path", MOAT_FO_STRING, true},
	    {"old_string", MOAT_FO_STRING, true},
	    {"new_string", MOAT_FO_STRING, true},
	    {"replace_all", MOAT_FO_BOOL, false},
	};
	json_t *v[MOAT_ARRAY_SIZE(spec)];
	char abs[MOAT_PATH_MAX];
	struct moat_fo_target t;
	struct moat_buf text = MOAT_BUF_INIT, edited = MOAT_BUF_INIT, out = MOAT_BUF_INIT;
	struct moat_buf oldc = MOAT_BUF_INIT, newc = MOAT_BUF_INIT;
	const char *olds, *news, *pat, *rep, *eol_note = NULL;
	size_t oldn, newn, patn, repn, count;
	bool all, crlf_match = false;
	enum eol eol;
	int r;

	(void)call;
	moat_tool_result_init(ret);
	r = moat_fo_args("edit_file", args, spec, MOAT_ARRAY_SIZE(spec), v, ret);
	if (r)
		return moat_fo_ret(r);
	olds = json_string_value(v[1]);
	oldn = json_string_length(v[1]);
	news = json_string_value(v[2]);
	newn = json_string_length(v[2]);
	all = v[3] && json_is_true(v[3]);
	if (!oldn)
		return moat_fo_invalid(ret, "argument 'old_string' of edit_file is empty; give the "
					    "exact text to replace (write_file creates files)");
	if (oldn > MOAT_WRITE_MAX_BYTES || newn > MOAT_WRITE_MAX_BYTES)
		return moat_fo_invalid(ret,
				       "argument '%s' of edit_file is over the limit of %u "
				       "bytes",
				       oldn > MOAT_WRITE_MAX_BYTES ? "old_string" : "new_string",
				       MOAT_WRITE_MAX_BYTES);
	r = moat_fo_abspath(env, v[0], abs, ret);
	if (r)
		return moat_fo_ret(r);
	if (oldn == newn && memcmp(olds, news, oldn) == 0)
		return moat_fo_ret(moat_fo_fail(ret, "old_string and new_string are the same; "
						     "there is nothing to change"));
	r = moat_fo_open_target(env, "edit_file", abs, false, &t, ret);
	if (r)
		return moat_fo_ret(r);
	if (!t.exists) {
		moat_fo_target_close(&t);
		return moat_fo_ret(
		    moat_fo_fail(ret, "%.400s does not exist; create it with write_file", abs));
	}
	r = read_target(&t, MOAT_WRITE_MAX_BYTES, &text, abs, ret);
	if (r)
		goto out;
	if (memchr(text.data, '\0', text.len)) {
		r = moat_fo_fail(ret, "%.400s is a binary file; edit_file changes text only", abs);
		goto out;
	}
	pat = olds;
	patn = oldn;
	rep = news;
	repn = newn;
	eol = line_endings(text.data, text.len);
	/* A CRLF file and an old_string with "\n" line breaks (models never
	 * send "\r"): match with old_string's and new_string's line breaks
	 * read as "\r\n", by the same rules (unique, or replace_all). As it
	 * is, such an old_string matches nowhere, or (a leading "\n") only
	 * the second half of a line break, which the edit would split. */
	if (eol == EOL_CRLF && has_bare_lf(olds, oldn)) {
		to_crlf(olds, oldn, &oldc);
		if (oldc.oom) {
			r = moat_fo_sysfail(ret, ENOMEM, abs);
			goto out;
		}
		pat = oldc.data;
		patn = oldc.len;
		crlf_match = true;
	}
	count = count_matches(text.data, text.len, pat, patn);
	if (count == 0) {
		/* say what the line endings were when they may be why */
		const char *why = "";

		if (memchr(olds, '\n', oldn) || memchr(olds, '\r', oldn)) {
			if (eol == EOL_CRLF)
				why = " (the file has CRLF line endings, and old_string does not "
				      "match with its line breaks read as CRLF)";
			else if (eol == EOL_MIXED)
				why = " (the file mixes CRLF and LF line endings; old_string must "
				      "have the same ones where it matches)";
			else if (eol == EOL_LF && memmem(olds, oldn, "\r\n", 2))
				why = " (the file has LF line endings, old_string has CRLF)";
		}
		r = moat_fo_fail(ret,
				 "old_string was not found in %.250s%s; it must match the file "
				 "exactly, whitespace and indentation included: read the file "
				 "again and copy the text",
				 abs, why);
		goto out;
	}
	if (count > 1 && !all) {
		r = moat_fo_fail(ret,
				 "old_string occurs %zu times in %.300s%s; include more of the "
				 "surrounding lines to make it unique, or set replace_all to true "
				 "to replace every occurrence",
				 count, abs,
				 crlf_match ? " (with its line breaks read as CRLF, the file's)"
					    : "");
		goto out;
	}
	/* new_string's line breaks as the file's, when the file has one kind:
	 * never a mix of CRLF and LF made by the edit */
	if (eol == EOL_CRLF && has_bare_lf(news, newn)) {
		to_crlf(news, newn, &newc);
		eol_note = "CRLF";
	} else if (eol == EOL_LF && !memchr(olds, '\r', oldn) && memmem(news, newn, "\r\n", 2)) {
		to_lf(news, newn, &newc);
		eol_note = "LF";
	}
	if (eol_note) {
		if (newc.oom) {
			r = moat_fo_sysfail(ret, ENOMEM, abs);
			goto out;
		}
		rep = newc.data;
		repn = newc.len;
		if (repn == patn && memcmp(rep, pat, patn) == 0) {
			r = moat_fo_fail(
			    ret,
			    "old_string and new_string differ only in their line "
			    "endings, and new_string's are written as the file's (%s): "
			    "there is nothing to change",
			    eol_note);
			goto out;
		}
	}
	/* the size of the result, without overflow: each term is capped */
	if (repn > patn && (repn - patn) > (MOAT_WRITE_MAX_BYTES - text.len) / count) {
		r = moat_fo_fail(ret, "the edited %.400s would be over the %u-byte limit", abs,
				 MOAT_WRITE_MAX_BYTES);
		goto out;
	}
	moat_buf_reserve(&edited, text.len - count * patn + count * repn);
	{
		const char *p = text.data, *end = text.data + text.len;

		for (size_t k = 0; k < count; k++) {
			const char *q = memmem(p, (size_t)(end - p), pat, patn);

			moat_buf_append(&edited, p, (size_t)(q - p));
			moat_buf_append(&edited, rep, repn);
			p = q + patn;
		}
		moat_buf_append(&edited, p, (size_t)(end - p));
	}
	if (edited.oom) {
		r = moat_fo_sysfail(ret, ENOMEM, abs);
		goto out;
	}
	r = moat_fo_replace(&t, edited.data, edited.len, true, abs, ret);
	if (r)
		goto out;
	moat_buf_printf(&out, "Replaced %zu occurrence%s of old_string in %s\n", count,
			count == 1 ? "" : "s", abs);
	if (crlf_match)
		moat_buf_puts(&out, "old_string matched with its line breaks read as CRLF, the "
				    "file's line endings\n");
	if (eol_note)
		moat_buf_printf(&out,
				"new_string's line breaks were written as %s, the file's line "
				"endings\n",
				eol_note);
	if (out.oom) {
		r = moat_fo_sysfail(ret, ENOMEM, abs);
		goto out;
	}
	ret->data = json_pack("{s:s, s:I, s:I}", "path", abs, "replacements", (json_int_t)count,
			      "bytes", (json_int_t)edited.len);
	/* what the text says of line endings, for a client that shows the
	 * structured result only */
	if (ret->data && crlf_match)
		json_object_set_new(ret->data, "crlf_matched", json_true());
	if (ret->data && eol_note)
		json_object_set_new(ret->data, "new_line_breaks", json_string(eol_note));
	ret->output_len = out.len;
	ret->bytes_out = out.len;
	ret->output = moat_buf_steal(&out);
	ret->ok = true;
out:
	moat_fo_target_close(&t);
	moat_buf_release(&text);
	moat_buf_release(&edited);
	moat_buf_release(&out);
	moat_buf_release(&oldc);
	moat_buf_release(&newc);
	return moat_fo_ret(r);
}
