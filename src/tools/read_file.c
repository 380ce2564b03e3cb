/* read_file {path, offset?, limit?, raw?}: a regular file's text, with line
 * numbers as `cat -n` prints them ("%6u\t" before each line), or raw.
 *
 * offset is the first line (1-based; 0 means 1), limit the number of lines
 * (MOAT_READ_DEFAULT_LINES without it); at most MOAT_READ_MAX_BYTES of text
 * are returned, ending with a "[truncated: ...]" line that says how to read
 * on. A NUL byte in the first MOAT_FO_BINARY_PROBE bytes makes the file
 * binary: reported, never dumped. Invalid UTF-8 is shown as U+FFFD.
 *
 * Must never: open anything but a regular file for reading (FIFOs and
 * devices are refused from an O_PATH descriptor, before any open that could
 * block or have effects), or read a file whose real path the policy denies
 * (fileops.c). Allocates nothing per call beyond the output. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tools/fileops.h"

#define CHUNK 16384

struct reader {
	struct moat_buf out;
	size_t offset, limit; /* first line, lines wanted */
	bool raw;
	size_t line;	   /* number of the line being read */
	size_t emitted;	   /* lines started in the output */
	size_t line_start; /* out.len where the current line began */
	bool bol;	   /* at the start of a line */
	bool done;	   /* stop reading */
	bool more;	   /* text follows what was returned */
	bool cut;	   /* the first line was cut at the byte cap */
	bool capped;	   /* the byte cap ended the output */
	bool last_nl;	   /* the last byte read was '\n' (or nothing was read) */
};

static void put_number(struct moat_buf *b, size_t n)
{
	char tmp[32];
	size_t k = sizeof(tmp);

	tmp[--k] = '\t';
	do {
		tmp[--k] = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	while (sizeof(tmp) - k < 7) /* as "%6zu\t" */
		tmp[--k] = ' ';
	moat_buf_append(b, tmp + k, sizeof(tmp) - k);
}

/* Feed one chunk of the file. */
static void feed(struct reader *rd, const char *s, size_t n)
{
	size_t i = 0;

	if (n)
		rd->last_nl = s[n - 1] == '\n';
	while (i < n && !rd->done) {
		const char *q;
		size_t end, seg;

		if (rd->line < rd->offset) {
			q = memchr(s + i, '\n', n - i);
			if (!q)
				return;
			i = (size_t)(q - s) + 1;
			rd->line++;
			continue;
		}
		if (rd->bol) {
			if (rd->emitted == rd->limit) {
				rd->more = rd->done = true;
				return;
			}
			rd->line_start = rd->out.len;
			if (!rd->raw)
				put_number(&rd->out, rd->line);
			rd->bol = false;
			rd->emitted++;
		}
		q = memchr(s + i, '\n', n - i);
		end = q ? (size_t)(q - s) + 1 : n;
		seg = end - i;
		if (rd->out.len + seg > MOAT_READ_MAX_BYTES) {
			rd->more = rd->capped = rd->done = true;
			if (rd->emitted > 1) {
				/* the output ends before the line that does not fit */
				rd->out.len = rd->line_start;
				if (rd->out.data)
					rd->out.data[rd->out.len] = '\0';
				rd->emitted--;
			} else {
				/* one line longer than the cap: cut, on a character
				 * boundary */
				size_t room = MOAT_READ_MAX_BYTES - rd->out.len;

				while (room && ((unsigned char)s[i + room] & 0xc0) == 0x80)
					room--;
				moat_buf_append(&rd->out, s + i, room);
				rd->cut = true;
			}
			return;
		}
		moat_buf_append(&rd->out, s + i, seg);
		i = end;
		if (q) {
			rd->bol = true;
			rd->line++;
		}
	}
}

/* After U+FFFD replacements the text may have grown past the cap: keep the
 * whole lines that fit. */
static void recap(struct reader *rd)
{
	size_t keep = MOAT_READ_MAX_BYTES, lines = 0;

	if (rd->out.len <= MOAT_READ_MAX_BYTES)
		return;
	while (keep && rd->out.data[keep - 1] != '\n')
		keep--;
	if (!keep) {
		keep = MOAT_READ_MAX_BYTES;
		while (keep && ((unsigned char)rd->out.data[keep] & 0xc0) == 0x80)
			keep--;
		rd->cut = true;
	} else {
		rd->cut = false;
	}
	for (size_t i = 0; i < keep; i++)
		lines += rd->out.data[i] == '\n';
	rd->out.len = keep;
	rd->out.data[keep] = '\0';
	rd->line = rd->offset + lines;
	rd->emitted = lines + (rd->cut ? 1 : 0);
	rd->more = rd->capped = true;
}

int moat_tool_read_file(const struct moat_tool_env *env, json_t *args,
			const struct moat_tool_call *call, struct moat_tool_result *ret)
{
	static const struct moat_fo_arg spec[] = {
	    {"path", MOAT_FO_STRING, true},
	    {"offset", MOAT_FO_INT, false},
	    {"limit", MOAT_FO_INT, false},
	    {"raw", MOAT_FO_BOOL, false},
	};
	json_t *v[MOAT_ARRAY_SIZE(spec)];
	char abs[MOAT_PATH_MAX], real[MOAT_PATH_MAX], chunk[CHUNK];
	struct reader rd;
	struct stat st;
	size_t probed = 0, want, nread = 0;
	bool binary = false;
	int fd, r;

	(void)call;
	moat_tool_result_init(ret);
	r = moat_fo_args("read_file", args, spec, MOAT_ARRAY_SIZE(spec), v, ret);
	if (r)
		return moat_fo_ret(r);
	memset(&rd, 0, sizeof(rd));
	rd.offset = 1;
	rd.limit = MOAT_READ_DEFAULT_LINES;
	if (v[1]) {
		json_int_t o = json_integer_value(v[1]);

		if (o < 0)
			return moat_fo_invalid(ret, "argument 'offset' of read_file must be a line "
						    "number (1 is the first line)");
		rd.offset = o ? (size_t)o : 1;
	}
	if (v[2]) {
		json_int_t l = json_integer_value(v[2]);

		if (l < 1)
			return moat_fo_invalid(
			    ret, "argument 'limit' of read_file must be 1 or more lines");
		rd.limit = (size_t)l;
	}
	rd.raw = v[3] && json_is_true(v[3]);
	r = moat_fo_abspath(env, v[0], abs, ret);
	if (r)
		return moat_fo_ret(r);
	r = moat_fo_open(env, "read_file", abs, MOAT_FO_REGULAR, &fd, &st, real, ret);
	if (r)
		return moat_fo_ret(r);

	want = (size_t)st.st_size < MOAT_READ_MAX_BYTES ? (size_t)st.st_size : MOAT_READ_MAX_BYTES;
	moat_buf_reserve(&rd.out, want + (rd.raw ? 0 : want / 4 + 64) + 160);
	rd.line = 1;
	rd.bol = true;
	rd.last_nl = true;
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = errno;
			close(fd);
			moat_buf_release(&rd.out);
			return moat_fo_ret(moat_fo_sysfail(ret, r, abs));
		}
		if (n == 0)
			break;
		if (probed < MOAT_FO_BINARY_PROBE) {
			size_t k = MOAT_FO_BINARY_PROBE - probed;

			if (k > (size_t)n)
				k = (size_t)n;
			if (memchr(chunk, '\0', k)) {
				binary = true;
				break;
			}
			probed += k;
		}
		feed(&rd, chunk, (size_t)n);
		if (rd.done)
			break;
		/* A short read of a regular file that reached the size fstat
		 * saw is its end at that moment: no second read(2) to see 0.
		 * (A file reporting size 0, as /proc's do, is read to the 0.) */
		nread += (size_t)n;
		if ((size_t)n < sizeof(chunk) && st.st_size > 0 && nread >= (size_t)st.st_size)
			break;
	}
	close(fd);

	if (binary) {
		moat_buf_reset(&rd.out);
		moat_buf_printf(&rd.out,
				"%s is a binary file (%lld bytes); its content is not shown\n", abs,
				(long long)st.st_size);
	} else if (!rd.emitted && rd.offset > 1) {
		size_t total = rd.line - 1 + (rd.last_nl ? 0 : 1);

		moat_buf_release(&rd.out);
		return moat_fo_ret(
		    moat_fo_fail(ret, "offset %zu is past the end of %.400s, which has %zu line%s",
				 rd.offset, abs, total, total == 1 ? "" : "s"));
	} else {
		if (moat_fo_utf8_fix(&rd.out, 0) < 0) {
			moat_buf_release(&rd.out);
			return moat_fo_ret(moat_fo_sysfail(ret, ENOMEM, abs));
		}
		recap(&rd);
		if (!rd.emitted && !rd.raw)
			moat_buf_puts(&rd.out, "[the file is empty]\n");
		if (rd.more) {
			size_t next = rd.cut ? rd.line + 1 : rd.line;

			if (rd.out.len && rd.out.data[rd.out.len - 1] != '\n')
				moat_buf_putc(&rd.out, '\n');
			if (rd.cut)
				moat_buf_printf(&rd.out,
						"[truncated: line %zu is longer than the %u-byte "
						"cap and was cut; read on with offset=%zu]\n",
						rd.line, MOAT_READ_MAX_BYTES, next);
			else if (rd.capped)
				moat_buf_printf(&rd.out,
						"[truncated at the %u-byte cap; read on with "
						"offset=%zu]\n",
						MOAT_READ_MAX_BYTES, next);
			else
				moat_buf_printf(&rd.out,
						"[truncated: %zu lines shown; read on with "
						"offset=%zu]\n",
						rd.emitted, next);
		}
	}
	moat_buf_append(&rd.out, "", 0); /* NUL-terminated even when empty */
	if (rd.out.oom) {
		moat_buf_release(&rd.out);
		return moat_fo_ret(moat_fo_sysfail(ret, ENOMEM, abs));
	}
	/* (built directly: json_pack's format parsing costs as much again) */
	ret->data = json_object();
	if (ret->data) {
		json_object_set_new_nocheck(ret->data, "path", json_string(abs));
		json_object_set_new_nocheck(ret->data, "size", json_integer(st.st_size));
		json_object_set_new_nocheck(ret->data, "offset",
					    json_integer((json_int_t)rd.offset));
		json_object_set_new_nocheck(ret->data, "lines",
					    json_integer(binary ? 0 : (json_int_t)rd.emitted));
		json_object_set_new_nocheck(ret->data, "truncated", json_boolean(rd.more));
		json_object_set_new_nocheck(ret->data, "binary", json_boolean(binary));
		if (rd.more && !binary)
			json_object_set_new_nocheck(
			    ret->data, "next_offset",
			    json_integer((json_int_t)(rd.cut ? rd.line + 1 : rd.line)));
		/* the text itself, as the text content has it: a client that
		 * hands the model the structured result (Claude Code, Codex)
		 * shows it nothing else (valid UTF-8: fixed above) */
		if (json_object_set_new_nocheck(
			ret->data, "text",
			json_stringn_nocheck(rd.out.data ? rd.out.data : "", rd.out.len)) < 0) {
			json_decref(ret->data);
			ret->data = NULL;
		}
	}
	if (!ret->data) {
		moat_buf_release(&rd.out);
		return moat_fo_ret(moat_fo_sysfail(ret, ENOMEM, abs));
	}
	ret->output_len = rd.out.len;
	ret->bytes_out = rd.out.len;
	ret->output = moat_buf_steal(&rd.out);
	ret->ok = true;
	return 0;
}
