/*
 * bench/mcp_bare.c: the ceiling of the MCP benchmark (bench/mcp_bench.mjs).
 *
 * A minimal MCP server over stdio (newline-delimited JSON-RPC) with NO
 * policy, NO audit and no sandbox: it answers initialize, ping, tools/list
 * (one tool, read_file) and tools/call of read_file, which opens, reads and
 * closes the file at the given path on every call, like a real server. The
 * bench drives it with exactly the workloads it runs against `moat mcp` and
 * the reference server, to show what the client and this machine allow.
 *
 * Like `moat mcp`, it reads stdin in chunks and writes the replies to all
 * the complete lines of one chunk with one write(2), and after replying it
 * polls stdin for up to 50 us (yielding the CPU on each turn) before it
 * sleeps in read(2), while requests come back to back (the spin of
 * src/mcp/server.c: waking an idle CPU costs a whole call on a VM).
 *
 * It must never be used as a real server: it reads any path it is given.
 * It is not part of libmoat and includes no moat header. Requests are
 * scanned, not fully parsed: the line must be one well-formed JSON object;
 * "id" is copied to the reply verbatim (a number or a string).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BARE_READ_CHUNK (64u << 10) /* bytes read from stdin at once */
#define BARE_MAX_LINE (4u << 20)    /* one JSON-RPC message, bytes */
#define BARE_MAX_FILE (1u << 20)    /* a file read_file returns, bytes */
#define BARE_MAX_PATH 4096	    /* the path argument, bytes once unescaped */
#define BARE_MAX_DEPTH 64	    /* nesting of one message */
#define BARE_LATEST_VERSION "2025-11-25"
#define BARE_SPIN_NS 50000u	    /* as MCP_SPIN_NS of src/mcp/server.c */
#define BARE_SPIN_GAP_NS 150000u    /* as MCP_SPIN_GAP_NS */

static const char *const versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

struct span {
	const char *p;
	size_t n;
};

struct buf {
	char *p;
	size_t len;
	size_t cap;
};

static char file_buf[BARE_MAX_FILE + 1];

static void die(const char *what)
{
	fprintf(stderr, "mcp_bare: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void buf_reserve(struct buf *b, size_t more)
{
	size_t need, cap;
	char *p;

	if (more > SIZE_MAX / 4 - b->len) {
		errno = ENOMEM;
		die("buffer");
	}
	need = b->len + more;
	if (need <= b->cap)
		return;
	cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		die("realloc");
	b->p = p;
	b->cap = cap;
}

static void buf_add(struct buf *b, const void *s, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

/* s as a JSON string, quotes included; bytes >= 0x80 pass as they are */
static void buf_json_str(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char *o;
	size_t i;

	buf_reserve(b, n * 6 + 2);
	o = b->p + b->len;
	*o++ = '"';
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = (char)c;
		} else if (c >= 0x20) {
			*o++ = (char)c;
		} else if (c == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else if (c == '\t') {
			*o++ = '\\';
			*o++ = 't';
		} else if (c == '\r') {
			*o++ = '\\';
			*o++ = 'r';
		} else {
			memcpy(o, "\\u00", 4);
			o += 4;
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o++ = '"';
	b->len = (size_t)(o - b->p);
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		p += w;
		n -= (size_t)w;
	}
}

/* ---- the scanner ---- */

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* p at the opening quote; returns just past the closing one, or NULL */
static const char *skip_string(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '"')
			return p + 1;
		if (*p == '\\') {
			if (++p == end)
				return NULL;
		} else if ((unsigned char)*p < 0x20) {
			return NULL;
		}
	}
	return NULL;
}

static bool scalar_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' ||
	       c == '.' || c == 'E';
}

/* one JSON value from p (leading blanks skipped); returns just past it, or NULL */
static const char *skip_value(const char *p, const char *end, int depth)
{
	const char *q;
	char close;
	bool obj;

	if (depth > BARE_MAX_DEPTH)
		return NULL;
	p = skip_ws(p, end);
	if (p == end)
		return NULL;
	if (*p == '"')
		return skip_string(p, end);
	if (*p != '{' && *p != '[') {
		for (q = p; q < end && scalar_char(*q); q++)
			;
		return q == p ? NULL : q;
	}
	obj = *p == '{';
	close = obj ? '}' : ']';
	p = skip_ws(p + 1, end);
	if (p < end && *p == close)
		return p + 1;
	for (;;) {
		if (obj) {
			if (p == end || *p != '"')
				return NULL;
			p = skip_ws(skip_string(p, end), end);
			if (!p || p == end || *p != ':')
				return NULL;
			p++;
		}
		p = skip_value(p, end, depth + 1);
		if (!p)
			return NULL;
		p = skip_ws(p, end);
		if (p == end)
			return NULL;
		if (*p == close)
			return p + 1;
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1, end);
	}
}

/*
 * The value of member `key` of the object in obj (already checked well
 * formed by skip_value), compared raw (keys with escapes do not match).
 */
static bool obj_get(struct span obj, const char *key, struct span *ret_val)
{
	const char *end = obj.p + obj.n;
	const char *p = skip_ws(obj.p, end);
	size_t klen = strlen(key);

	if (p == end || *p != '{')
		return false;
	p = skip_ws(p + 1, end);
	while (p < end && *p == '"') {
		const char *k = p + 1;
		const char *ke = skip_string(p, end);
		const char *v, *ve;

		if (!ke)
			return false;
		p = skip_ws(ke, end);
		if (p == end || *p != ':')
			return false;
		v = skip_ws(p + 1, end);
		ve = skip_value(v, end, 1);
		if (!ve)
			return false;
		if ((size_t)(ke - 1 - k) == klen && memcmp(k, key, klen) == 0) {
			ret_val->p = v;
			ret_val->n = (size_t)(ve - v);
			return true;
		}
		p = skip_ws(ve, end);
		if (p < end && *p == ',')
			p = skip_ws(p + 1, end);
	}
	return false;
}

/* the raw contents of a string value, quotes off, escapes kept */
static bool str_raw(struct span v, struct span *ret_s)
{
	if (v.n < 2 || v.p[0] != '"')
		return false;
	ret_s->p = v.p + 1;
	ret_s->n = v.n - 2;
	return true;
}

static bool span_is(struct span s, const char *lit)
{
	return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

static int hex4(const char *p, const char *end)
{
	int v = 0, i;

	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* unescape a raw JSON string into out (NUL-terminated, no NUL inside) */
static bool str_unescape(struct span s, char *out, size_t cap)
{
	const char *p = s.p, *end = s.p + s.n;
	size_t o = 0;

	while (p < end) {
		unsigned char tmp[4];
		size_t k = 0;
		long cp;

		if (*p != '\\') {
			tmp[k++] = (unsigned char)*p++;
		} else {
			if (++p == end)
				return false;
			switch (*p++) {
			case '"': tmp[k++] = '"'; break;
			case '\\': tmp[k++] = '\\'; break;
			case '/': tmp[k++] = '/'; break;
			case 'b': tmp[k++] = '\b'; break;
			case 'f': tmp[k++] = '\f'; break;
			case 'n': tmp[k++] = '\n'; break;
			case 'r': tmp[k++] = '\r'; break;
			case 't': tmp[k++] = '\t'; break;
			case 'u':
				cp = hex4(p, end);
				if (cp <= 0)
					return false;
				p += 4;
				if (cp >= 0xd800 && cp < 0xdc00) {
					long lo;

					if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
						return false;
					lo = hex4(p + 2, end);
					if (lo < 0xdc00 || lo >= 0xe000)
						return false;
					p += 6;
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				} else if (cp >= 0xdc00 && cp < 0xe000) {
					return false;
				}
				if (cp < 0x80) {
					tmp[k++] = (unsigned char)cp;
				} else if (cp < 0x800) {
					tmp[k++] = (unsigned char)(0xc0 | (cp >> 6));
					tmp[k++] = (unsigned char)(0x80 | (cp & 0x3f));
				} else if (cp < 0x10000) {
					tmp[k++] = (unsigned char)(0xe0 | (cp >> 12));
					tmp[k++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
					tmp[k++] = (unsigned char)(0x80 | (cp & 0x3f));
				} else {
					tmp[k++] = (unsigned char)(0xf0 | (cp >> 18));
					tmp[k++] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
					tmp[k++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
					tmp[k++] = (unsigned char)(0x80 | (cp & 0x3f));
				}
				break;
			default:
				return false;
			}
		}
		if (o + k >= cap)
			return false;
		memcpy(out + o, tmp, k);
		o += k;
	}
	out[o] = '\0';
	return true;
}

/* ---- replies ---- */

static void reply_head(struct buf *out, struct span id)
{
	buf_str(out, "{\"jsonrpc\":\"2.0\",\"id\":");
	buf_add(out, id.p, id.n);
}

static void reply_error(struct buf *out, struct span id, int code, const char *msg)
{
	char num[32];

	reply_head(out, id);
	snprintf(num, sizeof(num), "%d", code);
	buf_str(out, ",\"error\":{\"code\":");
	buf_str(out, num);
	buf_str(out, ",\"message\":");
	buf_json_str(out, msg, strlen(msg));
	buf_str(out, "}}\n");
}

static void do_initialize(struct buf *out, struct span id, struct span params)
{
	const char *v = BARE_LATEST_VERSION;
	struct span pv, s;
	int i;

	if (obj_get(params, "protocolVersion", &pv) && str_raw(pv, &s)) {
		for (i = 0; versions[i]; i++) {
			if (span_is(s, versions[i])) {
				v = versions[i];
				break;
			}
		}
	}
	reply_head(out, id);
	buf_str(out, ",\"result\":{\"protocolVersion\":\"");
	buf_str(out, v);
	buf_str(out, "\",\"capabilities\":{\"tools\":{}},"
		     "\"serverInfo\":{\"name\":\"mcp-bare\",\"version\":\"0.1.0\"}}}\n");
}

static void do_ping(struct buf *out, struct span id)
{
	reply_head(out, id);
	buf_str(out, ",\"result\":{}}\n");
}

static void do_tools_list(struct buf *out, struct span id)
{
	reply_head(out, id);
	buf_str(out, ",\"result\":{\"tools\":[{\"name\":\"read_file\","
		     "\"description\":\"Read a file (no policy, no audit: a benchmark)\","
		     "\"inputSchema\":{\"type\":\"object\","
		     "\"properties\":{\"path\":{\"type\":\"string\"}},"
		     "\"required\":[\"path\"]}}]}}\n");
}

static void tool_text(struct buf *out, struct span id, const char *text, size_t n, bool is_error)
{
	reply_head(out, id);
	buf_str(out, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
	buf_json_str(out, text, n);
	buf_str(out, is_error ? "}],\"isError\":true}}\n" : "}],\"isError\":false}}\n");
}

static void do_tools_call(struct buf *out, struct span id, struct span params)
{
	char path[BARE_MAX_PATH + 1];
	struct span v, s, args;
	size_t len = 0;
	ssize_t r;
	int fd;

	if (!obj_get(params, "name", &v) || !str_raw(v, &s) || !span_is(s, "read_file")) {
		reply_error(out, id, -32602, "unknown tool (this server has only read_file)");
		return;
	}
	if (!obj_get(params, "arguments", &args) || !obj_get(args, "path", &v) ||
	    !str_raw(v, &s) || !str_unescape(s, path, sizeof(path))) {
		reply_error(out, id, -32602, "read_file needs arguments.path, a string");
		return;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		const char *e = strerror(errno);

		tool_text(out, id, e, strlen(e), true);
		return;
	}
	for (;;) {
		r = read(fd, file_buf + len, sizeof(file_buf) - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || len + (size_t)r == sizeof(file_buf))
			break;
		len += (size_t)r;
	}
	if (r < 0) {
		const char *e = strerror(errno);

		close(fd);
		tool_text(out, id, e, strlen(e), true);
		return;
	}
	close(fd);
	if (r > 0) {
		static const char big[] = "the file is larger than 1 MiB";

		tool_text(out, id, big, sizeof(big) - 1, true);
		return;
	}
	tool_text(out, id, file_buf, len, false);
}

static void handle_line(const char *line, size_t n, struct buf *out)
{
	static const struct span null_id = { "null", 4 };
	const char *end = line + n;
	struct span msg, id, m, method, params = { "{}", 2 };
	const char *e;

	line = skip_ws(line, end);
	if (line == end)
		return;
	e = skip_value(line, end, 0);
	if (!e || skip_ws(e, end) != end || *line != '{') {
		reply_error(out, null_id, -32700, "parse error (one JSON object per line)");
		return;
	}
	msg.p = line;
	msg.n = (size_t)(e - line);
	if (!obj_get(msg, "method", &m) || !str_raw(m, &method))
		return; /* a response, or nothing we answer */
	if (!obj_get(msg, "id", &id))
		return; /* a notification */
	if (id.p[0] != '"' && id.p[0] != '-' && (id.p[0] < '0' || id.p[0] > '9')) {
		reply_error(out, null_id, -32600, "the id must be a number or a string");
		return;
	}
	obj_get(msg, "params", &params);
	if (span_is(method, "tools/call"))
		do_tools_call(out, id, params);
	else if (span_is(method, "ping"))
		do_ping(out, id);
	else if (span_is(method, "initialize"))
		do_initialize(out, id, params);
	else if (span_is(method, "tools/list"))
		do_tools_list(out, id);
	else
		reply_error(out, id, -32601, "method not found");
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Wait until stdin is readable: first a short spin when requests have been
 * coming back to back, as `moat mcp` does. */
static void wait_input(uint64_t *replied_ns, bool *spin)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	int n = 0;

	if (*spin && *replied_ns) {
		uint64_t t0 = mono_ns();

		while ((n = poll(&p, 1, 0)) == 0 && mono_ns() - t0 < BARE_SPIN_NS)
			sched_yield();
	}
	if (n == 0)
		n = poll(&p, 1, -1);
	if (n > 0 && *replied_ns) {
		*spin = mono_ns() - *replied_ns <= BARE_SPIN_GAP_NS;
		*replied_ns = 0;
	}
}

int main(void)
{
	struct buf in = { 0 }, out = { 0 };
	uint64_t replied_ns = 0;
	bool spin = false;

	for (;;) {
		size_t off = 0;
		const char *nl;
		ssize_t r;

		buf_reserve(&in, BARE_READ_CHUNK);
		wait_input(&replied_ns, &spin);
		r = read(0, in.p + in.len, BARE_READ_CHUNK);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("read");
		}
		if (r == 0)
			break;
		in.len += (size_t)r;
		while ((nl = memchr(in.p + off, '\n', in.len - off))) {
			handle_line(in.p + off, (size_t)(nl - (in.p + off)), &out);
			off = (size_t)(nl - in.p) + 1;
		}
		memmove(in.p, in.p + off, in.len - off);
		in.len -= off;
		if (in.len > BARE_MAX_LINE) {
			errno = EMSGSIZE;
			die("a line longer than 4 MiB");
		}
		if (out.len) {
			write_all(1, out.p, out.len);
			out.len = 0;
			replied_ns = mono_ns();
		}
	}
	if (in.len)
		handle_line(in.p, in.len, &out);
	if (out.len)
		write_all(1, out.p, out.len);
	free(in.p);
	free(out.p);
	return 0;
}
