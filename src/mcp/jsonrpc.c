/* JSON-RPC 2.0 for MCP's stdio transport: newline-delimited framing with a
 * bounded line, strict parsing (src/base/json.h: duplicate keys, NUL bytes,
 * bad UTF-8 and deep nesting refused), classification into request,
 * notification and response, and the serialization of replies, one line
 * each.
 *
 * It never trusts a size the client sends: a line is at most max_line
 * bytes, and the bytes of an over-long line are dropped as they arrive, so
 * memory stays bounded. Pure apart from read(2) in moat_rpc_reader_fill;
 * never prints. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"
#include "mcp/mcp.h"

const char *const moat_mcp_versions[] = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

const char *moat_mcp_negotiate(const char *v)
{
	if (v)
		for (size_t i = 0; moat_mcp_versions[i]; i++)
			if (!strcmp(v, moat_mcp_versions[i]))
				return moat_mcp_versions[i];
	return MOAT_MCP_LATEST_VERSION;
}

bool moat_mcp_version_ge(const char *a, const char *b)
{
	/* "YYYY-MM-DD" compares as text */
	return a && b && strcmp(a, b) >= 0;
}

/* ---- framing ---- */

void moat_rpc_reader_init(struct moat_rpc_reader *r, size_t max_line)
{
	memset(r, 0, sizeof(*r));
	r->max_line = max_line ? max_line : MOAT_MCP_MAX_LINE;
}

void moat_rpc_reader_release(struct moat_rpc_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

/* Drop the lines already returned. */
static void compact(struct moat_rpc_reader *r)
{
	if (r->off == 0)
		return;
	memmove(r->buf, r->buf + r->off, r->len - r->off);
	r->len -= r->off;
	r->scan -= r->off;
	r->off = 0;
}

static int reserve(struct moat_rpc_reader *r, size_t extra)
{
	size_t need, cap;
	char *p;

	compact(r);
	if (extra > SIZE_MAX - r->len - 1)
		return -ENOMEM;
	need = r->len + extra + 1;
	if (need <= r->cap)
		return 0;
	cap = r->cap ? r->cap : 4096;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	/* no doubling past what one line and one read can need */
	if (r->max_line < SIZE_MAX / 2 && need <= r->max_line + MOAT_MCP_READ_CHUNK + 2 &&
	    cap > r->max_line + MOAT_MCP_READ_CHUNK + 2)
		cap = r->max_line + MOAT_MCP_READ_CHUNK + 2;
	p = realloc(r->buf, cap);
	if (!p)
		return -ENOMEM;
	r->buf = p;
	r->cap = cap;
	return 0;
}

int moat_rpc_reader_feed(struct moat_rpc_reader *r, const char *data, size_t n)
{
	if (r->discarding) {
		const char *nl = memchr(data, '\n', n);

		if (!nl)
			return 0;
		r->discarding = false;
		n -= (size_t)(nl + 1 - data);
		data = nl + 1;
	}
	if (n == 0)
		return 0;
	if (reserve(r, n) < 0)
		return -ENOMEM;
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	return 0;
}

long moat_rpc_reader_fill(struct moat_rpc_reader *r, int fd)
{
	ssize_t n;

	if (reserve(r, MOAT_MCP_READ_CHUNK) < 0)
		return -ENOMEM;
	n = read(fd, r->buf + r->len, MOAT_MCP_READ_CHUNK);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	if (r->discarding) {
		/* feed() with the bytes in place: move them past the line's end */
		char *start = r->buf + r->len, *nl = memchr(start, '\n', (size_t)n);

		if (!nl)
			return n;
		r->discarding = false;
		memmove(start, nl + 1, (size_t)(start + n - (nl + 1)));
		r->len += (size_t)(start + n - (nl + 1));
		return n;
	}
	r->len += (size_t)n;
	return n;
}

static int take(struct moat_rpc_reader *r, size_t end, size_t next, const char **ret_line,
		size_t *ret_len)
{
	size_t start = r->off, n = end - start;

	r->off = next;
	r->scan = next;
	if (n > r->max_line)
		return MOAT_RPC_TOO_LONG;
	if (n > 0 && r->buf[start + n - 1] == '\r')
		n--;
	r->buf[start + n] = '\0'; /* the '\n' or '\r' (or the spare byte) */
	*ret_line = r->buf + start;
	*ret_len = n;
	return MOAT_RPC_LINE;
}

int moat_rpc_reader_next(struct moat_rpc_reader *r, const char **ret_line, size_t *ret_len)
{
	for (;;) {
		char *nl;
		int k;

		if (r->scan < r->off)
			r->scan = r->off;
		nl = r->len > r->scan ? memchr(r->buf + r->scan, '\n', r->len - r->scan) : NULL;
		if (!nl) {
			r->scan = r->len;
			if (r->len - r->off > r->max_line) {
				/* SECURITY: drop an over-long line as it arrives,
				 * never buffer it whole. */
				r->len = r->off = r->scan = 0;
				r->discarding = true;
				return MOAT_RPC_TOO_LONG;
			}
			return 0;
		}
		k = take(r, (size_t)(nl - r->buf), (size_t)(nl - r->buf) + 1, ret_line, ret_len);
		if (k == MOAT_RPC_LINE && *ret_len == 0)
			continue; /* blank line: nothing to answer */
		return k;
	}
}

int moat_rpc_reader_flush(struct moat_rpc_reader *r, const char **ret_line, size_t *ret_len)
{
	int k;

	if (r->discarding) {
		r->discarding = false;
		r->len = r->off = r->scan = 0;
		return 0;
	}
	if (r->len == r->off)
		return 0;
	if (reserve(r, 0) < 0)
		return 0;
	k = take(r, r->len, r->len, ret_line, ret_len);
	if (k == MOAT_RPC_LINE && *ret_len == 0)
		return 0;
	return k;
}

/* ---- classification ---- */

void moat_rpc_msg_release(struct moat_rpc_msg *m)
{
	if (!m)
		return;
	json_decref(m->root);
	memset(m, 0, sizeof(*m));
}

void moat_rpc_fault_release(struct moat_rpc_fault *f)
{
	if (!f)
		return;
	json_decref(f->id);
	f->id = NULL;
}

static int fault(struct moat_rpc_fault *f, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fault(struct moat_rpc_fault *f, int code, const char *fmt, ...)
{
	va_list ap;

	f->code = code;
	va_start(ap, fmt);
	vsnprintf(f->message, sizeof(f->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool id_valid(const json_t *id)
{
	if (json_is_integer(id))
		return true;
	return json_is_string(id) && json_string_length(id) <= MOAT_MCP_MAX_ID_LEN;
}

/* Quote a client-given name in a message: printable ASCII only, bounded. */
static void quote(char *out, size_t outsz, const char *s)
{
	size_t o = 0;

	for (size_t i = 0; s[i] && o + 4 < outsz; i++) {
		unsigned char c = (unsigned char)s[i];

		out[o++] = (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') ? (char)c : '?';
		if (i >= 64) {
			out[o++] = '.';
			out[o++] = '.';
			out[o++] = '.';
			break;
		}
	}
	out[o] = '\0';
}

static int classify(json_t *root, struct moat_rpc_msg *ret, struct moat_rpc_fault *f)
{
	json_t *jsonrpc = json_object_get(root, "jsonrpc");
	json_t *id = json_object_get(root, "id");
	json_t *method = json_object_get(root, "method");
	json_t *params = json_object_get(root, "params");
	json_t *result = json_object_get(root, "result");
	json_t *error = json_object_get(root, "error");
	const char *key;
	json_t *v;
	char q[80];

	/* Echo the id in any error reply when it is one we could echo. */
	if (id && id_valid(id))
		f->id = json_incref(id);
	/* Without a method this is a response (or garbage): never answer it. */
	if (!method && (result || error))
		f->no_reply = true;
	else if (method && !id)
		f->no_reply = true; /* a notification: never answered, even when bad */

	if (!json_is_string(jsonrpc) || strcmp(json_string_value(jsonrpc), "2.0") != 0)
		return fault(f, MOAT_RPC_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
	json_object_foreach(root, key, v)
	{
		if (strcmp(key, "jsonrpc") && strcmp(key, "id") && strcmp(key, "method") &&
		    strcmp(key, "params") && strcmp(key, "result") && strcmp(key, "error")) {
			quote(q, sizeof(q), key);
			return fault(f, MOAT_RPC_INVALID_REQUEST, "unknown member \"%s\"", q);
		}
	}
	if (id && !id_valid(id)) {
		if (json_is_string(id))
			return fault(f, MOAT_RPC_INVALID_REQUEST, "\"id\" longer than %u bytes",
				     MOAT_MCP_MAX_ID_LEN);
		return fault(f, MOAT_RPC_INVALID_REQUEST,
			     "\"id\" must be a string or an integer, not %s",
			     moat_json_type_name(id));
	}

	if (method) {
		if (!json_is_string(method))
			return fault(f, MOAT_RPC_INVALID_REQUEST, "\"method\" must be a string");
		if (result || error)
			return fault(f, MOAT_RPC_INVALID_REQUEST,
				     "a request cannot carry \"result\" or \"error\"");
		if (params && !json_is_object(params)) {
			return fault(f,
				     json_is_array(params) ? MOAT_RPC_INVALID_PARAMS
							   : MOAT_RPC_INVALID_REQUEST,
				     "\"params\" must be an object");
		}
		memset(ret, 0, sizeof(*ret));
		ret->kind = id ? MOAT_RPC_REQUEST : MOAT_RPC_NOTIFICATION;
		ret->root = root;
		ret->id = id;
		ret->method = json_string_value(method);
		ret->params = params;
		return 0;
	}
	if (!id)
		return fault(f, MOAT_RPC_INVALID_REQUEST, "a message needs \"method\" or \"id\"");
	if (params)
		return fault(f, MOAT_RPC_INVALID_REQUEST, "a response cannot carry \"params\"");
	if (!!result == !!error) {
		f->no_reply = !!result; /* both: still a response */
		return fault(f, MOAT_RPC_INVALID_REQUEST,
			     result ? "a response carries \"result\" or \"error\", not both"
				    : "a message needs \"method\", \"result\" or \"error\"");
	}
	if (error && (!json_is_object(error) || !json_is_integer(json_object_get(error, "code")) ||
		      !json_is_string(json_object_get(error, "message"))))
		return fault(f, MOAT_RPC_INVALID_REQUEST,
			     "\"error\" must be an object with an integer \"code\" and a "
			     "string \"message\"");
	memset(ret, 0, sizeof(*ret));
	ret->kind = MOAT_RPC_RESPONSE;
	ret->root = root;
	ret->id = id;
	ret->result = result;
	ret->error = error;
	return 0;
}

/* A string holding a NUL character anywhere in v (depth bounded by the
 * strict parser's pre-scan, which this text passed). */
static bool has_nul(const json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_string(v))
		return strlen(json_string_value(v)) != json_string_length(v);
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
		{
			if (has_nul(x)) /* keys: jansson refuses NUL in them */
				return true;
		}
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
		{
			if (has_nul(x))
				return true;
		}
	}
	return false;
}

/* The text failed the strict parse only for a "\u0000" escape. Parse it
 * again allowing NUL (duplicates still refused) to learn its id, then:
 * SECURITY: NUL is refused everywhere but in the arguments of tools/call,
 * which are passed on as JSON text ("\u0000"): the session parses them
 * strictly and refuses the call as bad input, with a record in the audit
 * log. -ENOENT: the lenient parse failed too (a plain parse error). */
static int parse_with_nul(const char *line, size_t len, struct moat_rpc_msg *ret,
			  struct moat_rpc_fault *f)
{
	json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	json_t *params;
	int r;

	if (!json_is_object(root)) {
		json_decref(root);
		return -ENOENT;
	}
	r = classify(root, ret, f);
	if (r < 0) {
		json_decref(root);
		return r;
	}
	params = ret->params;
	if (ret->method && !strcmp(ret->method, "tools/call") && json_is_object(params)) {
		json_t *args = json_incref(json_object_get(params, "arguments"));
		bool bad;

		json_object_del(params, "arguments");
		bad = has_nul(root);
		if (args)
			json_object_set_new(params, "arguments", args);
		if (!bad) {
			moat_rpc_fault_release(f);
			return 0;
		}
	} else if (!has_nul(root)) {
		moat_rpc_fault_release(f);
		return 0;
	}
	moat_rpc_msg_release(ret);
	return fault(f, MOAT_RPC_INVALID_REQUEST,
		     "a string holds a NUL character (\\u0000), which moat refuses");
}

/* A copy of the text with every number too large for moat (an integer
 * past 64 bits, a double past its range: valid JSON the parser refuses)
 * replaced by null, padded with blanks to the same length; NULL when there
 * is none (or no memory). */
static char *without_overflow(const char *line, size_t len)
{
	char *copy = malloc(len ? len : 1);
	bool in_str = false, patched = false;

	if (!copy)
		return NULL;
	memcpy(copy, line, len);
	for (size_t i = 0; i < len; i++) {
		char tok[400], *end;
		size_t e = i;
		bool real = false, over;

		if (in_str) {
			if (line[i] == '\\')
				i++;
			else if (line[i] == '"')
				in_str = false;
			continue;
		}
		if (line[i] == '"') {
			in_str = true;
			continue;
		}
		if (line[i] != '-' && (line[i] < '0' || line[i] > '9'))
			continue;
		while (e < len && line[e] && strchr("0123456789+-.eE", line[e])) {
			real |= line[e] == '.' || line[e] == 'e' || line[e] == 'E';
			e++;
		}
		if (e - i >= 4 && e - i < sizeof(tok)) {
			memcpy(tok, line + i, e - i);
			tok[e - i] = '\0';
			errno = 0;
			if (real) {
				double d = strtod(tok, &end);

				over = errno == ERANGE && d != 0;
			} else {
				(void)strtoll(tok, &end, 10);
				over = errno == ERANGE;
			}
			if (over && *end == '\0') {
				memset(copy + i, ' ', e - i);
				memcpy(copy + i, "null", 4);
				patched = true;
			}
		}
		i = e - 1;
	}
	if (!patched) {
		free(copy);
		return NULL;
	}
	return copy;
}

/* The text failed the parse for a number out of range: parse it again with
 * those numbers as null to learn its id, and answer that id (never act on
 * the message). -ENOENT: it fails for another reason too. */
static int parse_overflow(const char *line, size_t len, struct moat_rpc_msg *ret,
			  struct moat_rpc_fault *f)
{
	char *copy = without_overflow(line, len);
	json_t *root = copy ? json_loadb(copy, len, JSON_REJECT_DUPLICATES, NULL) : NULL;
	int r;

	free(copy);
	if (!json_is_object(root)) {
		json_decref(root);
		return -ENOENT;
	}
	r = classify(root, ret, f);
	if (r == 0) {
		moat_rpc_msg_release(ret);
		r = fault(f, MOAT_RPC_INVALID_PARAMS,
			  "a number in the message is out of range (moat reads integers of "
			  "64 bits and doubles): nothing was done");
	} else {
		json_decref(root);
	}
	return r;
}

int moat_rpc_parse(const char *line, size_t len, struct moat_rpc_msg *ret, struct moat_rpc_fault *f)
{
	struct moat_error err;
	json_t *root = NULL;
	size_t i = 0;
	int r;

	memset(f, 0, sizeof(*f));
	moat_error_clear(&err);
	if (len > MOAT_MCP_MAX_LINE)
		return fault(f, MOAT_RPC_INVALID_REQUEST, "message larger than %u bytes",
			     MOAT_MCP_MAX_LINE);
	r = moat_json_parse(line, len, "message", MOAT_MCP_MAX_LINE, MOAT_MCP_MAX_DEPTH, &root,
			    &err);
	if (r == -ENOMEM) {
		fault(f, MOAT_RPC_INTERNAL_ERROR, "out of memory");
		return -ENOMEM;
	}
	if (r < 0 && r != -ENOMEM && (strstr(err.msg, "too big") || strstr(err.msg, "overflow"))) {
		r = parse_overflow(line, len, ret, f);
		if (r != -ENOENT)
			return r;
		r = -EINVAL;
	}
	if (r < 0 && strstr(err.msg, "NUL character")) {
		/* Valid JSON with "\u0000" in a string: answer with the id. */
		r = parse_with_nul(line, len, ret, f);
		if (r != -ENOENT)
			return r;
		r = -EINVAL;
	}
	if (r < 0) {
		char where[sizeof(err.where) + sizeof(err.msg) + 8];

		while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
			i++;
		if (i < len && line[i] != '{' && line[i] != '[' &&
		    memchr(line, '\0', len) == NULL) {
			/* a bare scalar is JSON, but not a request */
			json_t *any = json_loadb(line, len, JSON_DECODE_ANY, NULL);

			if (any) {
				json_decref(any);
				return fault(f, MOAT_RPC_INVALID_REQUEST,
					     "a message must be a JSON object");
			}
		}
		moat_error_format(&err, where, sizeof(where));
		return fault(f, MOAT_RPC_PARSE_ERROR, "parse error: %s", where);
	}
	if (json_is_array(root)) {
		json_decref(root);
		return fault(f, MOAT_RPC_INVALID_REQUEST,
			     "batches (a JSON array) are not supported: send one message a line");
	}
	r = classify(root, ret, f);
	if (r < 0)
		json_decref(root);
	else
		moat_rpc_fault_release(f); /* the id kept for a fault reply */
	return r;
}

/* [s, s+n) == the NUL-terminated w */
static bool span_is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* params of the usual tools/call at line[i] ('{'): just past its '}', or 0. */
static size_t parse_call_params(const char *line, size_t len, size_t i, struct moat_rpc_call *c)
{
	bool name = false, args = false;

	if (i >= len || line[i] != '{')
		return 0;
	i = moat_json_skip_ws(line, len, i + 1);
	for (;;) {
		size_t ke = moat_json_plain_string(line, len, i), ks = i, ve;

		if (!ke)
			return 0;
		i = moat_json_skip_ws(line, len, ke);
		if (i >= len || line[i] != ':')
			return 0;
		i = moat_json_skip_ws(line, len, i + 1);
		if (span_is(line + ks + 1, ke - ks - 2, "name") && !name) {
			ve = moat_json_plain_string(line, len, i);
			if (!ve)
				return 0;
			c->name = line + i + 1;
			c->name_len = ve - i - 2;
			name = true;
		} else if (span_is(line + ks + 1, ke - ks - 2, "arguments") && !args) {
			ve = moat_json_flat_end(line, len, i);
			if (!ve)
				return 0;
			c->args = line + i;
			c->args_len = ve - i;
			args = true;
		} else {
			return 0; /* _meta, another member, a duplicate */
		}
		i = moat_json_skip_ws(line, len, ve);
		if (i < len && line[i] == ',') {
			i = moat_json_skip_ws(line, len, i + 1);
			continue;
		}
		if (i < len && line[i] == '}' && name && args)
			return i + 1;
		return 0;
	}
}

int moat_rpc_parse_call(const char *line, size_t len, struct moat_rpc_call *c)
{
	enum { JSONRPC = 1, ID = 2, METHOD = 4, PARAMS = 8 };
	unsigned seen = 0, bit;
	bool id_str = false;
	json_int_t id_int = 0;
	size_t i, id_off = 0, id_len = 0;

	memset(c, 0, sizeof(*c));
	if (len > MOAT_MCP_MAX_LINE)
		return -EAGAIN;
	i = moat_json_skip_ws(line, len, 0);
	if (i >= len || line[i] != '{')
		return -EAGAIN;
	i = moat_json_skip_ws(line, len, i + 1);
	for (;;) {
		size_t ke = moat_json_plain_string(line, len, i), ks = i, ve, kl;
		const char *k;

		if (!ke)
			return -EAGAIN;
		k = line + ks + 1;
		kl = ke - ks - 2;
		i = moat_json_skip_ws(line, len, ke);
		if (i >= len || line[i] != ':')
			return -EAGAIN;
		i = moat_json_skip_ws(line, len, i + 1);
		if (span_is(k, kl, "jsonrpc")) {
			bit = JSONRPC;
			ve = moat_json_plain_string(line, len, i);
			if (!ve || !span_is(line + i + 1, ve - i - 2, "2.0"))
				return -EAGAIN;
		} else if (span_is(k, kl, "id")) {
			bit = ID;
			id_str = i < len && line[i] == '"';
			if (id_str) {
				ve = moat_json_plain_string(line, len, i);
				if (!ve || ve - i - 2 > MOAT_MCP_MAX_ID_LEN)
					return -EAGAIN;
				id_off = i + 1;
				id_len = ve - i - 2;
			} else {
				ve = moat_json_plain_int(line, len, i, &id_int);
			}
		} else if (span_is(k, kl, "method")) {
			bit = METHOD;
			ve = moat_json_plain_string(line, len, i);
			if (!ve || !span_is(line + i + 1, ve - i - 2, "tools/call"))
				return -EAGAIN;
		} else if (span_is(k, kl, "params")) {
			bit = PARAMS;
			ve = parse_call_params(line, len, i, c);
		} else {
			return -EAGAIN;
		}
		if (!ve || (seen & bit))
			return -EAGAIN;
		seen |= bit;
		i = moat_json_skip_ws(line, len, ve);
		if (i < len && line[i] == ',') {
			i = moat_json_skip_ws(line, len, i + 1);
			continue;
		}
		if (i < len && line[i] == '}')
			break;
		return -EAGAIN;
	}
	if (seen != (JSONRPC | ID | METHOD | PARAMS) || moat_json_skip_ws(line, len, i + 1) != len)
		return -EAGAIN;
	c->id = id_str ? json_stringn_nocheck(line + id_off, id_len) : json_integer(id_int);
	return c->id ? 0 : -ENOMEM;
}

int moat_rpc_id_key(const json_t *id, char *out, size_t outsz)
{
	int n;

	if (json_is_integer(id))
		n = snprintf(out, outsz, "i:%lld", (long long)json_integer_value(id));
	else if (json_is_string(id) && json_string_length(id) <= MOAT_MCP_MAX_ID_LEN &&
		 strlen(json_string_value(id)) == json_string_length(id))
		n = snprintf(out, outsz, "s:%s", json_string_value(id));
	else
		return -EINVAL;
	return n < 0 || (size_t)n >= outsz ? -EINVAL : 0;
}

/* ---- serialization ---- */

/* Dump obj as one line. Takes no reference. */
static char *dump_line(json_t *obj, size_t *ret_len)
{
	char *s = json_dumps(obj, JSON_COMPACT);
	size_t n;
	char *p;

	if (!s)
		return NULL;
	n = strlen(s);
	p = realloc(s, n + 2);
	if (!p) {
		free(s);
		return NULL;
	}
	p[n] = '\n';
	p[n + 1] = '\0';
	*ret_len = n + 1;
	return p;
}

static json_t *envelope(const json_t *id)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (json_object_set_new(o, "jsonrpc", json_string("2.0")) < 0 ||
	    json_object_set_new(o, "id", id ? json_deep_copy(id) : json_null()) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

char *moat_rpc_error(const json_t *id, int code, const char *message, json_t *data, size_t *ret_len)
{
	json_t *o = envelope(id), *e = json_object();
	char *s = NULL;

	if (!o || !e)
		goto out;
	if (json_object_set_new(e, "code", json_integer(code)) < 0 ||
	    json_object_set_new(e, "message", moat_rpc_string(message, strlen(message))) < 0 ||
	    (data && json_object_set(e, "data", data) < 0))
		goto out;
	if (json_object_set(o, "error", e) < 0)
		goto out;
	s = dump_line(o, ret_len);
out:
	json_decref(e);
	json_decref(o);
	return s;
}

char *moat_rpc_result(const json_t *id, json_t *result, size_t *ret_len)
{
	json_t *o = envelope(id);
	char *s = NULL;

	if (!o || !result || json_object_set(o, "result", result) < 0) {
		json_decref(o);
		return NULL;
	}
	s = dump_line(o, ret_len);
	json_decref(o);
	if (s && *ret_len > MOAT_MCP_MAX_REPLY) {
		char msg[128];

		free(s);
		snprintf(msg, sizeof(msg), "the reply is larger than the limit of %u bytes",
			 MOAT_MCP_MAX_REPLY);
		return moat_rpc_error(id, MOAT_RPC_INTERNAL_ERROR, msg, NULL, ret_len);
	}
	return s;
}

char *moat_rpc_request(json_int_t id, const char *method, json_t *params, size_t *ret_len)
{
	json_t *jid = json_integer(id), *o = envelope(jid);
	char *s = NULL;

	if (o && json_object_set_new(o, "method", json_string(method)) == 0 &&
	    (!params || json_object_set(o, "params", params) == 0))
		s = dump_line(o, ret_len);
	json_decref(jid);
	json_decref(o);
	return s;
}

char *moat_rpc_notification(const char *method, json_t *params, size_t *ret_len)
{
	json_t *o = json_object();
	char *s = NULL;

	if (o && json_object_set_new(o, "jsonrpc", json_string("2.0")) == 0 &&
	    json_object_set_new(o, "method", json_string(method)) == 0 &&
	    (!params || json_object_set(o, "params", params) == 0))
		s = dump_line(o, ret_len);
	json_decref(o);
	return s;
}

json_t *moat_rpc_string(const char *s, size_t n)
{
	struct moat_buf b = MOAT_BUF_INIT;
	json_t *j;

	if (!s)
		return json_string("");
	if (moat_utf8_valid(s, n))
		return json_stringn(s, n);
	/* NUL bytes are valid UTF-8 for JSON (\u0000) but moat_utf8_valid
	 * refuses them; keep them, replace only invalid sequences. */
	if (moat_buf_append_utf8(&b, s, n, true) < 0) {
		moat_buf_release(&b);
		return NULL;
	}
	j = json_stringn(b.data ? b.data : "", b.len);
	moat_buf_release(&b);
	return j;
}
