/* Strict JSON parsing over jansson and a linear scanner that maps nodes back
 * to line:column in the source text.
 *
 * SECURITY: every document that decides something (configuration, tool-call
 * arguments) goes through moat_json_parse, so that the value moat checks is
 * the value the tool uses: duplicate keys, NUL characters and invalid UTF-8
 * are refused rather than resolved one way or another.
 *
 * The scanner never recurses and never allocates; it is linear in the text.
 * Pure: no I/O, never prints. */
#include "base/json.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/str.h"

const char *moat_json_type_name(const json_t *v)
{
	if (!v)
		return "nothing";
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	case JSON_NULL:
		return "null";
	}
	return "unknown";
}

/* ---- positions ---------------------------------------------------------- */

/* A byte starts a character unless it is a UTF-8 continuation byte. */
static bool starts_char(unsigned char c)
{
	return (c & 0xc0) != 0x80;
}

void moat_json_pos_init(struct moat_json_pos *p)
{
	p->off = 0;
	p->line = 1;
	p->col = 0;
}

void moat_json_pos_seek(struct moat_json_pos *p, const char *text, size_t len, size_t off,
			int *ret_line, int *ret_col)
{
	if (off > len)
		off = len;
	if (off < p->off)
		moat_json_pos_init(p);
	for (size_t i = p->off; i < off; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\n') {
			p->line++;
			p->col = 0;
		} else if (starts_char(c)) {
			p->col++;
		}
	}
	p->off = off;
	if (ret_line)
		*ret_line = p->line;
	if (ret_col)
		*ret_col = p->col + 1;
}

void moat_json_linecol(const char *text, size_t len, size_t off, int *ret_line, int *ret_col)
{
	struct moat_json_pos p;

	moat_json_pos_init(&p);
	moat_json_pos_seek(&p, text, len, off, ret_line, ret_col);
}

/* ---- scanner ------------------------------------------------------------ */

static size_t skip_ws(const char *t, size_t len, size_t i)
{
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i;
}

/* t[i] == '"'; returns the offset just past the closing quote, or 0. */
static size_t scan_string(const char *t, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (t[i] == '\\')
			i++;
		else if (t[i] == '"')
			return i + 1;
	}
	return 0;
}

static bool is_delim(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':' ||
	       c == '[' || c == ']' || c == '{' || c == '}' || c == '"';
}

/* Offset just past the value starting at i, or 0 when malformed. Iterative. */
static size_t skip_value(const char *t, size_t len, size_t i)
{
	size_t depth = 0;

	if (i >= len)
		return 0;
	if (t[i] == '"')
		return scan_string(t, len, i);
	if (t[i] != '{' && t[i] != '[') {
		size_t s = i;

		while (i < len && !is_delim(t[i]))
			i++;
		return i > s ? i : 0;
	}
	while (i < len) {
		char c = t[i];

		if (c == '"') {
			i = scan_string(t, len, i);
			if (!i)
				return 0;
			continue;
		}
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return 0;
			if (--depth == 0)
				return i + 1;
		}
		i++;
	}
	return 0;
}

int moat_json_root(const char *text, size_t len, size_t *ret_off)
{
	size_t i = skip_ws(text, len, 0);

	if (i >= len)
		return -EINVAL;
	*ret_off = i;
	return 0;
}

int moat_json_iter_init(struct moat_json_iter *it, const char *text, size_t len,
			size_t container_off)
{
	if (container_off >= len || (text[container_off] != '{' && text[container_off] != '['))
		return -EINVAL;
	it->text = text;
	it->len = len;
	it->object = text[container_off] == '{';
	it->off = container_off + 1;
	it->first = true;
	return 0;
}

int moat_json_iter_next(struct moat_json_iter *it, size_t *ret_key_off, size_t *ret_value_off)
{
	const char *t = it->text;
	size_t len = it->len, i = skip_ws(t, len, it->off), key = 0, end;
	char close = it->object ? '}' : ']';

	if (i >= len)
		return -EINVAL;
	if (t[i] == close)
		return 0;
	if (!it->first) {
		if (t[i] != ',')
			return -EINVAL;
		i = skip_ws(t, len, i + 1);
		if (i >= len)
			return -EINVAL;
	}
	if (it->object) {
		if (t[i] != '"')
			return -EINVAL;
		key = i;
		i = scan_string(t, len, i);
		if (!i)
			return -EINVAL;
		i = skip_ws(t, len, i);
		if (i >= len || t[i] != ':')
			return -EINVAL;
		i = skip_ws(t, len, i + 1);
	} else {
		key = i;
	}
	end = skip_value(t, len, i);
	if (!end)
		return -EINVAL;
	it->first = false;
	it->off = end;
	if (ret_key_off)
		*ret_key_off = key;
	if (ret_value_off)
		*ret_value_off = i;
	return 1;
}

static int hex4(const char *t, size_t len, size_t i, uint32_t *ret)
{
	uint32_t v = 0;

	if (i + 4 > len)
		return -EINVAL;
	for (size_t k = 0; k < 4; k++) {
		int h = moat_hexval(t[i + k]);

		if (h < 0)
			return -EINVAL;
		v = (v << 4) | (uint32_t)h;
	}
	*ret = v;
	return 0;
}

static size_t put_utf8(uint32_t cp, unsigned char out[4])
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | (cp >> 6));
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | (cp >> 12));
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (unsigned char)(0xf0 | (cp >> 18));
	out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

bool moat_json_string_equals(const char *t, size_t len, size_t off, const char *key)
{
	size_t i = off + 1, j = 0;

	if (off >= len || t[off] != '"')
		return false;
	while (i < len && t[i] != '"') {
		unsigned char buf[4];
		size_t n = 1;

		if (t[i] != '\\') {
			buf[0] = (unsigned char)t[i++];
		} else {
			if (i + 1 >= len)
				return false;
			char e = t[i + 1];

			i += 2;
			switch (e) {
			case 'b':
				buf[0] = '\b';
				break;
			case 'f':
				buf[0] = '\f';
				break;
			case 'n':
				buf[0] = '\n';
				break;
			case 'r':
				buf[0] = '\r';
				break;
			case 't':
				buf[0] = '\t';
				break;
			case 'u': {
				uint32_t cp, lo;

				if (hex4(t, len, i, &cp) < 0)
					return false;
				i += 4;
				if (cp >= 0xd800 && cp < 0xdc00 && i + 1 < len && t[i] == '\\' &&
				    t[i + 1] == 'u' && hex4(t, len, i + 2, &lo) == 0 &&
				    lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					i += 6;
				}
				n = put_utf8(cp, buf);
				break;
			}
			default:
				buf[0] = (unsigned char)e; /* '"', '\\', '/' */
			}
		}
		for (size_t k = 0; k < n; k++, j++)
			if ((unsigned char)key[j] != buf[k] || key[j] == '\0')
				return false;
	}
	return i < len && key[j] == '\0';
}

/* "[123]" -> 123; -1 when the component is not an index. */
static long parse_index(const char *s)
{
	long v = 0;
	size_t i = 1;

	if (s[0] != '[' || s[1] == ']')
		return -1;
	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > 100000000L)
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return s[i] == ']' && s[i + 1] == '\0' ? v : -1;
}

int moat_json_locate_offset(const char *text, size_t len, const char *const *path, size_t n,
			    bool want_key, size_t *ret_off)
{
	size_t off;

	if (!text || moat_json_root(text, len, &off) < 0)
		return -ENOENT;
	for (size_t c = 0; c < n; c++) {
		struct moat_json_iter it;
		size_t k, v;
		bool found = false;
		int r;

		if (!path[c] || moat_json_iter_init(&it, text, len, off) < 0)
			return -ENOENT;
		if (it.object) {
			while ((r = moat_json_iter_next(&it, &k, &v)) > 0) {
				if (moat_json_string_equals(text, len, k, path[c])) {
					found = true;
					break;
				}
			}
		} else {
			long want = parse_index(path[c]);

			for (long idx = 0; want >= 0 && (r = moat_json_iter_next(&it, &k, &v)) > 0;
			     idx++) {
				if (idx == want) {
					found = true;
					break;
				}
			}
		}
		if (!found)
			return -ENOENT;
		off = (want_key && c + 1 == n) ? k : v;
	}
	*ret_off = off;
	return 0;
}

static int locate_lc(const char *text, size_t len, const char *const *path, size_t n, bool key,
		     int *ret_line, int *ret_col)
{
	size_t off;
	int r = moat_json_locate_offset(text, len, path, n, key, &off);

	if (r < 0)
		return r;
	moat_json_linecol(text, len, off, ret_line, ret_col);
	return 0;
}

int moat_json_locate(const char *text, size_t len, const char *const *path_components, size_t n,
		     int *ret_line, int *ret_col)
{
	return locate_lc(text, len, path_components, n, false, ret_line, ret_col);
}

int moat_json_locate_key(const char *text, size_t len, const char *const *path_components, size_t n,
			 int *ret_line, int *ret_col)
{
	return locate_lc(text, len, path_components, n, true, ret_line, ret_col);
}

/* ---- parsing ------------------------------------------------------------ */

/* Copy s into out for an error message: control characters and bytes of
 * invalid UTF-8 become '?', so a message never carries terminal escapes. */
static void sanitize(char *out, size_t outsz, const char *s, size_t n)
{
	bool utf8_ok = moat_utf8_valid(s, n);
	size_t o = 0;

	if (!outsz)
		return;
	for (size_t i = 0; i < n && o + 1 < outsz; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8_ok))
			c = '?';
		out[o++] = (char)c;
	}
	out[o] = '\0';
}

static void set_where_off(struct moat_error *err, const char *name, const char *text, size_t len,
			  size_t off)
{
	int line, col;

	moat_json_linecol(text, len, off, &line, &col);
	moat_error_set_where(err, name ? name : "<input>", line, col);
}

/* Linear pre-scan: bound the nesting before jansson recurses, and refuse raw
 * NUL bytes (jansson reads them as the end of the input). */
static int prescan(const char *t, size_t len, const char *name, unsigned max_depth,
		   struct moat_error *err)
{
	unsigned depth = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char c = t[i];

		if (c == '\0') {
			set_where_off(err, name, t, len, i);
			moat_error_set(err, "NUL byte in the document");
			return -EINVAL;
		}
		if (in_str) {
			if (c == '\\' && i + 1 < len && t[i + 1] != '\0')
				i++;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			if (++depth > max_depth) {
				set_where_off(err, name, t, len, i);
				moat_error_set(err, "nesting deeper than %u levels", max_depth);
				return -EINVAL;
			}
		} else if ((c == '}' || c == ']') && depth > 0) {
			depth--;
		}
	}
	return 0;
}

/* Turn a jansson error into ours. jansson reports the position after the
 * token it choked on and quotes the token ("... near 'TOKEN'"); when the
 * quoted token sits right before that position, point at its first
 * character, which is where a reader looks. */
static void map_error(const json_error_t *je, const char *text, size_t len, const char *name,
		      struct moat_error *err)
{
	const char *near = strstr(je->text, " near '");
	size_t msglen = near ? (size_t)(near - je->text) : strlen(je->text);
	const char *tok = NULL;
	size_t toklen = 0;
	char q[MOAT_JSON_MAX_QUOTE + 1], m[sizeof(je->text)];
	bool placed = false;

	if (near) {
		const char *s = near + 7, *e = strrchr(s, '\'');

		/* the message may be truncated: then there is no closing quote */
		if (e && e[1] == '\0') {
			tok = s;
			toklen = (size_t)(e - s);
		}
	}
	if (tok && toklen && je->position >= 0 && (size_t)je->position >= toklen &&
	    (size_t)je->position <= len && memcmp(text + je->position - toklen, tok, toklen) == 0) {
		set_where_off(err, name, text, len, (size_t)je->position - toklen);
		placed = true;
	}
	if (!placed) {
		if (je->position >= 0 && (size_t)je->position <= len)
			set_where_off(err, name, text, len, (size_t)je->position);
		else
			moat_error_set_where(err, name ? name : "<input>", je->line, je->column);
	}

	switch (json_error_code(je)) {
	case json_error_duplicate_key:
		if (tok && toklen >= 2 && tok[0] == '"' && tok[toklen - 1] == '"') {
			sanitize(q, sizeof(q), tok + 1, toklen - 2);
			moat_error_set(err, "duplicate object key \"%s\"%s", q,
				       toklen - 2 > MOAT_JSON_MAX_QUOTE ? "..." : "");
		} else {
			moat_error_set(err, "duplicate object key");
		}
		return;
	case json_error_null_character:
	case json_error_null_byte_in_key:
		moat_error_set(err, "string contains a NUL character (\\u0000)");
		return;
	case json_error_out_of_memory:
		moat_error_set(err, "out of memory");
		return;
	case json_error_invalid_utf8:
		sanitize(m, sizeof(m), je->text, msglen);
		moat_error_set(err, "invalid UTF-8: %s", m);
		return;
	default:
		break;
	}
	sanitize(m, sizeof(m), je->text, strlen(je->text));
	if (m[0] >= 'A' && m[0] <= 'Z' && !(m[1] >= 'A' && m[1] <= 'Z'))
		m[0] = (char)(m[0] - 'A' + 'a');
	moat_error_set(err, "%s", m[0] ? m : "invalid JSON");
}

int moat_json_parse(const char *text, size_t len, const char *name, size_t max_bytes,
		    unsigned max_depth, json_t **ret, struct moat_error *err)
{
	json_error_t je;
	json_t *j;
	int r;

	if (!text && len)
		return -EINVAL;
	if (!text)
		text = "";
	if (len > max_bytes) {
		moat_error_set_where(err, name ? name : "<input>", 0, 0);
		moat_error_set(err, "document larger than %zu bytes", max_bytes);
		return -EINVAL;
	}
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		moat_error_set_where(err, name ? name : "<input>", 1, 1);
		moat_error_set(err,
			       "byte order mark not allowed (save the file as UTF-8 without BOM)");
		return -EINVAL;
	}
	r = prescan(text, len, name, max_depth, err);
	if (r < 0)
		return r;
	/* SECURITY: no JSON_ALLOW_NUL, no JSON_DECODE_ANY, duplicates refused,
	 * and jansson refuses invalid UTF-8 and trailing garbage itself. */
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		map_error(&je, text, len, name, err);
		return json_error_code(&je) == json_error_out_of_memory ? -ENOMEM : -EINVAL;
	}
	*ret = j;
	return 0;
}

/* ---- the fast path of the usual flat object ------------------------------ */

size_t moat_json_skip_ws(const char *t, size_t len, size_t i)
{
	return skip_ws(t, len, i);
}

size_t moat_json_plain_string(const char *t, size_t len, size_t i)
{
	if (i >= len || t[i] != '"')
		return 0;
	for (i++; i < len; i++) {
		unsigned char c = (unsigned char)t[i];

		if (c == '"')
			return i + 1;
		/* escapes, control characters, DEL and anything not ASCII: the
		 * full parser's business */
		if (c < 0x20 || c > 0x7e || c == '\\')
			return 0;
	}
	return 0;
}

size_t moat_json_plain_int(const char *t, size_t len, size_t i, json_int_t *ret)
{
	json_int_t v = 0;
	bool neg = false;
	size_t d = 0;

	if (i < len && t[i] == '0') {
		*ret = 0;
		return i + 1;
	}
	if (i < len && t[i] == '-') {
		neg = true;
		i++;
	}
	if (i >= len || t[i] < '1' || t[i] > '9')
		return 0;
	/* at most 18 digits: no overflow, no range error to reproduce */
	while (i < len && t[i] >= '0' && t[i] <= '9') {
		if (++d > 18)
			return 0;
		v = v * 10 + (t[i] - '0');
		i++;
	}
	*ret = neg ? -v : v;
	return i;
}

/* Just past a literal word at t[i] (true, false, null), or 0. */
static size_t plain_word(const char *t, size_t len, size_t i, const char *w)
{
	size_t n = strlen(w);

	return len - i >= n && memcmp(t + i, w, n) == 0 ? i + n : 0;
}

/* The flat object at t[i] ('{'): the offset just past its '}', or 0 when
 * it is not one (moat_json_flat_end). Its members are added to obj when obj
 * is not NULL; *oom is set on allocation failure. */
static size_t flat_object(const char *t, size_t len, size_t i, json_t *obj, bool *oom)
{
	size_t koff[MOAT_JSON_FLAT_MAX_MEMBERS], klen[MOAT_JSON_FLAT_MAX_MEMBERS], n = 0;

	if (i >= len || t[i] != '{')
		return 0;
	i = skip_ws(t, len, i + 1);
	if (i < len && t[i] == '}')
		return i + 1;
	for (;;) {
		size_t ks = i, ke = moat_json_plain_string(t, len, i), ve;
		json_int_t iv = 0;
		json_t *v = NULL;

		if (!ke || n == MOAT_JSON_FLAT_MAX_MEMBERS)
			return 0;
		/* a key met twice: the full parser refuses it, and says so */
		for (size_t k = 0; k < n; k++)
			if (klen[k] == ke - ks - 2 && !memcmp(t + koff[k], t + ks + 1, klen[k]))
				return 0;
		koff[n] = ks + 1;
		klen[n] = ke - ks - 2;
		n++;
		i = skip_ws(t, len, ke);
		if (i >= len || t[i] != ':')
			return 0;
		i = skip_ws(t, len, i + 1);
		if (i >= len)
			return 0;
		switch (t[i]) {
		case '"':
			ve = moat_json_plain_string(t, len, i);
			if (ve && obj)
				v = json_stringn_nocheck(t + i + 1, ve - i - 2);
			break;
		case 't':
			ve = plain_word(t, len, i, "true");
			if (ve && obj)
				v = json_true();
			break;
		case 'f':
			ve = plain_word(t, len, i, "false");
			if (ve && obj)
				v = json_false();
			break;
		case 'n':
			ve = plain_word(t, len, i, "null");
			if (ve && obj)
				v = json_null();
			break;
		default:
			ve = moat_json_plain_int(t, len, i, &iv);
			if (ve && obj)
				v = json_integer(iv);
			break;
		}
		if (!ve)
			return 0;
		if (obj) {
			if (!v ||
			    json_object_setn_new_nocheck(obj, t + ks + 1, ke - ks - 2, v) < 0) {
				*oom = true;
				return 0;
			}
		}
		/* what follows a value: "12a", "01", "1.5", "truex" end here */
		i = skip_ws(t, len, ve);
		if (i >= len)
			return 0;
		if (t[i] == '}')
			return i + 1;
		if (t[i] != ',')
			return 0;
		i = skip_ws(t, len, i + 1);
	}
}

size_t moat_json_flat_end(const char *t, size_t len, size_t off)
{
	return flat_object(t, len, off, NULL, NULL);
}

int moat_json_parse_flat(const char *text, size_t len, size_t max_bytes, json_t **ret)
{
	size_t i, end;
	bool oom = false;
	json_t *obj;

	if (!text || len > max_bytes)
		return -EAGAIN;
	i = skip_ws(text, len, 0);
	end = flat_object(text, len, i, NULL, NULL);
	if (!end || skip_ws(text, len, end) != len)
		return -EAGAIN;
	if (!ret)
		return 0;
	obj = json_object();
	if (!obj)
		return -ENOMEM;
	if (flat_object(text, len, i, obj, &oom) != end) {
		json_decref(obj);
		return oom ? -ENOMEM : -EAGAIN;
	}
	*ret = obj;
	return 0;
}

int moat_json_parse_object(const char *text, size_t len, const char *name, size_t max_bytes,
			   json_t **ret, struct moat_error *err)
{
	json_t *j;
	int r = moat_json_parse(text, len, name, max_bytes, MOAT_JSON_MAX_DEPTH, &j, err);

	if (r < 0)
		return r;
	if (!json_is_object(j)) {
		size_t off = 0;

		moat_json_root(text, len, &off);
		set_where_off(err, name, text, len, off);
		moat_error_set(err, "expected object, got %s", moat_json_type_name(j));
		json_decref(j);
		return -EINVAL;
	}
	*ret = j;
	return 0;
}
