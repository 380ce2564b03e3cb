/* The MCP server's protocol layer, compiled together with src/mcp: line
 * framing (limits at the boundary, CRLF, blank lines, over-long lines
 * dropped as they arrive), strict parsing and classification with the
 * error code and id each refusal answers with, serialization, revision
 * negotiation, the elicitation form and its answers, the approver's round
 * trip (answer, timeout, cancel, no capability), and the server loop over
 * a pipe pair with a real session: initialize, ping, tools/list, pipelined
 * calls answered by id, end of input. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <moat/moat.h>
#include <moat/session.h>

#include "base/json.h"
#include "base/str.h"
#include "mcp/mcp.h"
#include "tap.h"

/* ---- framing ---- */

static void test_reader(void)
{
	struct moat_rpc_reader r;
	const char *line;
	size_t len;
	char *big;

	moat_rpc_reader_init(&r, 16);
	CHECK(moat_rpc_reader_feed(&r, "{\"a\":1}\r\n\n  \n{\"b\"", 17) == 0);
	CHECK_INT(moat_rpc_reader_next(&r, &line, &len), MOAT_RPC_LINE);
	CHECKF(len == 7 && !memcmp(line, "{\"a\":1}", 7), "framing: CR stripped before LF");
	CHECK_INT(moat_rpc_reader_next(&r, &line, &len), MOAT_RPC_LINE);
	CHECKF(len == 2 && !memcmp(line, "  ", 2), "framing: a blank line is skipped, spaces kept");
	CHECK_INT(moat_rpc_reader_next(&r, &line, &len), 0);
	CHECK(moat_rpc_reader_feed(&r, ":2}\n", 4) == 0);
	CHECK_INT(moat_rpc_reader_next(&r, &line, &len), MOAT_RPC_LINE);
	CHECKF(len == 7 && !memcmp(line, "{\"b\":2}", 7), "framing: a line split over two feeds");

	/* exactly max_line bytes: accepted; one more: refused */
	CHECK(moat_rpc_reader_feed(&r, "0123456789abcdef\n", 17) == 0);
	CHECK_INT(moat_rpc_reader_next(&r, &line, &len), MOAT_RPC_LINE);
	CHECK_INT(len, 16);
	CHECK(moat_rpc_reader_feed(&r, "0123456789abcdefg\nok\n", 21) == 0);
	CHECK_INT(moat_rpc_reader_next(&r, &line, &len), MOAT_RPC_TOO_LONG);
	CHECK_INT(moat_rpc_reader_next(&r, &line, &len), MOAT_RPC_LINE);
	CHECKF(len == 2 && !memcmp(line, "ok", 2),
	       "framing: the line after an over-long one is read");

	/* an over-long line arriving in pieces is dropped as it comes */
	CHECK(moat_rpc_reader_feed(&r, "aaaaaaaaaaaaaaaaaaaaaaaa", 24) == 0);
	CHECK_INT(moat_rpc_reader_next(&r, &line, &len), MOAT_RPC_TOO_LONG);
	CHECKF(r.len == 0 && r.discarding, "framing: an over-long line is not buffered");
	CHECK(moat_rpc_reader_feed(&r, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 34) == 0);
	CHECKF(r.len == 0, "framing: its later bytes are dropped on arrival");
	CHECK_INT(moat_rpc_reader_next(&r, &line, &len), 0);
	CHECK(moat_rpc_reader_feed(&r, "bb\nnext\nlast", 12) == 0);
	CHECK_INT(moat_rpc_reader_next(&r, &line, &len), MOAT_RPC_LINE);
	CHECKF(len == 4 && !memcmp(line, "next", 4), "framing: reading resumes after its newline");
	CHECK_INT(moat_rpc_reader_next(&r, &line, &len), 0);
	CHECK_INT(moat_rpc_reader_flush(&r, &line, &len), MOAT_RPC_LINE);
	CHECKF(len == 4 && !memcmp(line, "last", 4),
	       "framing: the last line without newline at EOF");
	CHECK_INT(moat_rpc_reader_flush(&r, &line, &len), 0);
	moat_rpc_reader_release(&r);

	/* fill() from a pipe, over the real limit */
	{
		int p[2];
		size_t n = MOAT_MCP_MAX_LINE + 10;
		long k, total = 0;
		int got_too_long = 0, got_line = 0;
		bool bounded = true;

		CHECK(pipe(p) == 0);
		big = malloc(n + 8);
		memset(big, 'x', n);
		memcpy(big + n, "\n{}\n", 4);
		moat_rpc_reader_init(&r, MOAT_MCP_MAX_LINE);
		fcntl(p[0], F_SETFL, O_NONBLOCK);
		for (size_t off = 0; off < n + 4;) {
			size_t chunk = n + 4 - off < 65536 ? n + 4 - off : 65536;
			ssize_t w = write(p[1], big + off, chunk);

			if (w <= 0)
				break;
			off += (size_t)w;
			while ((k = moat_rpc_reader_fill(&r, p[0])) > 0) {
				int t;

				total += k;
				while ((t = moat_rpc_reader_next(&r, &line, &len)) != 0) {
					if (t == MOAT_RPC_TOO_LONG)
						got_too_long++;
					else if (len == 2)
						got_line++;
				}
				if (r.cap > MOAT_MCP_MAX_LINE + MOAT_MCP_READ_CHUNK + 2)
					bounded = false;
			}
		}
		CHECKF(got_too_long == 1 && got_line == 1,
		       "framing: a %u+10 byte line refused once, the next read (%d, %d)",
		       MOAT_MCP_MAX_LINE, got_too_long, got_line);
		CHECK_INT(total, (long)(n + 4));
		CHECKF(bounded, "framing: the buffer never exceeds one line and one read");
		moat_rpc_reader_release(&r);
		free(big);
		close(p[0]);
		close(p[1]);
	}
}

/* ---- classification ---- */

static int parse(const char *s, struct moat_rpc_msg *m, struct moat_rpc_fault *f)
{
	return moat_rpc_parse(s, strlen(s), m, f);
}

static void expect_fault(const char *s, int code, const char *id_json, bool no_reply)
{
	struct moat_rpc_msg m;
	struct moat_rpc_fault f;
	int r = parse(s, &m, &f);
	char *id = f.id ? json_dumps(f.id, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;

	CHECKF(r < 0 && f.code == code && (id_json ? id && !strcmp(id, id_json) : !id) &&
		   f.no_reply == no_reply,
	       "refused %.60s: code %d (want %d), id %s (want %s), no_reply %d: %s", s, f.code,
	       code, id ? id : "null", id_json ? id_json : "null", f.no_reply, f.message);
	free(id);
	if (r == 0)
		moat_rpc_msg_release(&m);
	moat_rpc_fault_release(&f);
}

static void test_classify(void)
{
	struct moat_rpc_msg m;
	struct moat_rpc_fault f;
	char deep[600];
	int i, o = 0;

	CHECK(parse("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", &m, &f) == 0);
	CHECKF(m.kind == MOAT_RPC_REQUEST && !strcmp(m.method, "ping") && !m.params &&
		   json_integer_value(m.id) == 7,
	       "a request: method, integer id, no params");
	moat_rpc_msg_release(&m);
	CHECK(parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\",\"params\":{}}",
		    &m, &f) == 0);
	CHECKF(m.kind == MOAT_RPC_NOTIFICATION && !m.id && json_is_object(m.params),
	       "a notification: no id");
	moat_rpc_msg_release(&m);
	CHECK(parse("{\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"result\":{\"action\":\"accept\"}}", &m,
		    &f) == 0);
	CHECKF(m.kind == MOAT_RPC_RESPONSE && m.result && !m.error, "a response with a result");
	moat_rpc_msg_release(&m);
	CHECK(parse("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-1,\"message\":\"x\"}}", &m,
		    &f) == 0);
	CHECKF(m.kind == MOAT_RPC_RESPONSE && m.error, "a response with an error");
	moat_rpc_msg_release(&m);

	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":", MOAT_RPC_PARSE_ERROR, NULL,
		     false);
	expect_fault("\"just a string\"", MOAT_RPC_INVALID_REQUEST, NULL, false);
	expect_fault("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
		     MOAT_RPC_INVALID_REQUEST, NULL, false);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}",
		     MOAT_RPC_PARSE_ERROR, NULL, false);
	expect_fault(
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":1,\"a\":2}}",
	    MOAT_RPC_PARSE_ERROR, NULL, false);
	expect_fault("{\"id\":5,\"method\":\"ping\"}", MOAT_RPC_INVALID_REQUEST, "5", false);
	expect_fault("{\"jsonrpc\":\"1.0\",\"id\":\"a\",\"method\":\"ping\"}",
		     MOAT_RPC_INVALID_REQUEST, "\"a\"", false);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
		     MOAT_RPC_INVALID_REQUEST, NULL, false);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
		     MOAT_RPC_INVALID_REQUEST, NULL, false);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}",
		     MOAT_RPC_INVALID_REQUEST, NULL, false);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":7}", MOAT_RPC_INVALID_REQUEST, "2",
		     false);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\",\"params\":[1]}",
		     MOAT_RPC_INVALID_PARAMS, "2", false);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\",\"params\":\"s\"}",
		     MOAT_RPC_INVALID_REQUEST, "2", false);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\",\"extra\":1}",
		     MOAT_RPC_INVALID_REQUEST, "2", false);
	expect_fault("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":[1]}",
		     MOAT_RPC_INVALID_PARAMS, NULL, true);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{},\"error\":{}}",
		     MOAT_RPC_INVALID_REQUEST, "4", true);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":\"x\"}}",
		     MOAT_RPC_INVALID_REQUEST, "4", true);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":4}", MOAT_RPC_INVALID_REQUEST, "4", false);
	{
		/* a raw NUL byte inside the line */
		static const char nul[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\0b\"}";

		CHECKF(moat_rpc_parse(nul, sizeof(nul) - 1, &m, &f) < 0 &&
			   f.code == MOAT_RPC_PARSE_ERROR,
		       "a raw NUL byte in a line: -32700");
		moat_rpc_fault_release(&f);
	}

	/* ids: 128 bytes accepted, 129 refused */
	{
		char s[400], id[200];

		memset(id, 'i', MOAT_MCP_MAX_ID_LEN + 1);
		id[MOAT_MCP_MAX_ID_LEN] = '\0';
		snprintf(s, sizeof(s), "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"ping\"}",
			 id);
		CHECKF(parse(s, &m, &f) == 0, "an id of %u bytes is accepted", MOAT_MCP_MAX_ID_LEN);
		moat_rpc_msg_release(&m);
		id[MOAT_MCP_MAX_ID_LEN] = 'i';
		id[MOAT_MCP_MAX_ID_LEN + 1] = '\0';
		snprintf(s, sizeof(s), "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"ping\"}",
			 id);
		expect_fault(s, MOAT_RPC_INVALID_REQUEST, NULL, false);
	}

	/* depth: the strict parser's limit, at the boundary */
	o = snprintf(deep, sizeof(deep),
		     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":");
	for (i = 0; i < MOAT_MCP_MAX_DEPTH - 1; i++)
		deep[o++] = '[';
	for (i = 0; i < MOAT_MCP_MAX_DEPTH - 1; i++)
		deep[o++] = ']';
	deep[o++] = '}';
	deep[o] = '\0';
	/* params is an array: classification refuses it, but after parsing */
	CHECK(parse(deep, &m, &f) < 0 && f.code == MOAT_RPC_INVALID_PARAMS);
	moat_rpc_fault_release(&f);
	memmove(deep + 60, deep + 59, strlen(deep + 59) + 1);
	deep[59] = '[';
	memmove(deep + o - 1, deep + o - 2, 3);
	deep[o - 1] = ']';
	CHECKF(parse(deep, &m, &f) < 0 && f.code == MOAT_RPC_PARSE_ERROR,
	       "nesting of %d levels refused: %s", MOAT_MCP_MAX_DEPTH + 1, f.message);
	moat_rpc_fault_release(&f);

	/* "\u0000" in a string: the id is known; only tools/call arguments pass */
	CHECK(parse("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"read_file\",\"arguments\":{\"path\":\"a\\u0000b\"}}}",
		    &m, &f) == 0);
	CHECKF(m.kind == MOAT_RPC_REQUEST &&
		   json_string_length(
		       json_object_get(json_object_get(m.params, "arguments"), "path")) == 3,
	       "a NUL character in tools/call arguments is passed on (the session refuses it)");
	moat_rpc_msg_release(&m);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\\u0000\"}",
		     MOAT_RPC_INVALID_REQUEST, "9", false);
	expect_fault("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":"
		     "\"read_file\\u0000\"}}",
		     MOAT_RPC_INVALID_REQUEST, "9", false);
}

/* ---- serialization, ids, versions ---- */

/* ---- the fast paths: what they accept, the strict parsers accept alike ---- */

/* flat accepted => moat_json_parse_object accepts the same value, members
 * in the same order. Returns whether flat accepted. */
static bool flat_agrees(const char *t, size_t n, bool *agree)
{
	struct moat_error err;
	json_t *a = NULL, *b = NULL;
	int r = moat_json_parse_flat(t, n, 4096, &a), r2;

	*agree = true;
	if (r != 0) {
		*agree = r == -EAGAIN && !a;
		return false;
	}
	moat_error_clear(&err);
	r2 = moat_json_parse_object(t, n, "args", 4096, &b, &err);
	if (r2 != 0 || !json_equal(a, b)) {
		*agree = false;
	} else {
		char *da = json_dumps(a, JSON_COMPACT), *db = json_dumps(b, JSON_COMPACT);

		*agree = da && db && !strcmp(da, db);
		free(da);
		free(db);
	}
	/* check only: the same answer */
	if (moat_json_parse_flat(t, n, 4096, NULL) != 0)
		*agree = false;
	json_decref(a);
	json_decref(b);
	return true;
}

/* parse_call accepted => moat_rpc_parse reads the same request. */
static bool call_agrees(const char *t, size_t n, bool *agree)
{
	struct moat_rpc_call c;
	struct moat_rpc_msg m;
	struct moat_rpc_fault f;
	struct moat_error err;
	json_t *args = NULL, *name;
	int r = moat_rpc_parse_call(t, n, &c);

	*agree = true;
	if (r != 0) {
		*agree = r == -EAGAIN && !c.id;
		return false;
	}
	if (moat_rpc_parse(t, n, &m, &f) != 0) {
		*agree = false;
		moat_rpc_fault_release(&f);
		json_decref(c.id);
		return true;
	}
	name = json_object_get(m.params, "name");
	moat_error_clear(&err);
	*agree = m.kind == MOAT_RPC_REQUEST && !strcmp(m.method, "tools/call") &&
		 json_equal(m.id, c.id) && json_typeof(m.id) == json_typeof(c.id) &&
		 json_object_size(m.params) == 2 && json_is_string(name) &&
		 json_string_length(name) == c.name_len &&
		 !memcmp(json_string_value(name), c.name, c.name_len) &&
		 moat_json_parse_object(c.args, c.args_len, "args", 4096, &args, &err) == 0 &&
		 json_equal(args, json_object_get(m.params, "arguments"));
	json_decref(args);
	moat_rpc_msg_release(&m);
	json_decref(c.id);
	return true;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* One random edit of t (n bytes, room for 8 more). */
static size_t mutate(char *t, size_t n)
{
	static const char alpha[] = "\"\\{}[],: 0123456789-+.eEtrufalsn\x01\x1f\x7f\x80\xc3\xa9/_";
	size_t at = n ? rng() % n : 0;
	char c = alpha[rng() % (sizeof(alpha) - 1)];

	switch (rng() % 4) {
	case 0: /* replace */
		if (n)
			t[at] = c;
		return n;
	case 1: /* delete */
		if (n) {
			memmove(t + at, t + at + 1, n - at - 1);
			n--;
		}
		return n;
	case 2: /* insert */
		memmove(t + at + 1, t + at, n - at);
		t[at] = c;
		return n + 1;
	default: { /* repeat a short run: duplicate keys and members */
		size_t k = 1 + rng() % 8;

		if (at + k > n)
			k = n - at;
		memmove(t + at + k, t + at, n - at);
		return n + k;
	}
	}
}

static void test_fast_paths(void)
{
	static const char *const flat_yes[] = {
	    "{\"path\":\"a.txt\",\"raw\":true}",
	    " { \"path\" : \"/x y\" , \"offset\" : 0 , \"limit\" : -12 , \"x\" : null } ",
	    "{}",
	    "{\"a\":false,\"b\":999999999999999999}",
	};
	static const char *const flat_no[] = {
	    "{\"a\":1,\"a\":2}",	   /* duplicate: the strict parser says so */
	    "{\"a\":\"x\\/y\"}",	   /* an escape */
	    "{\"a\":\"\xc3\xa9\"}",	   /* not ASCII */
	    "{\"a\":{}}",		   /* nesting */
	    "{\"a\":[1]}",		   /* nesting */
	    "{\"a\":1.5}",		   /* a real */
	    "{\"a\":1e3}",		   /* a real */
	    "{\"a\":-0}",		   /* "-0" */
	    "{\"a\":01}",		   /* a leading zero */
	    "{\"a\":1000000000000000000}", /* 19 digits */
	    "{\"a\":tru}",		   /* a bad word */
	    "{\"a\":truex}",		   /* a bad word */
	    "{\"a\":1,}",		   /* a trailing comma */
	    "{\"a\":1}x",		   /* trailing garbage */
	    "\xef\xbb\xbf{}",		   /* a byte order mark */
	    "[1]",			   /* not an object */
	    "{\"a\":\"\x01\"}",		   /* a control character */
	    "{\"a\":1",			   /* cut short */
	};
	static const char *const call_no[] = {
	    /* a notification, other members, _meta, escapes, another method */
	    "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\","
	    "\"arguments\":{}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{},\"_meta\":{}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{}},\"x\":1}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"tools/call\",\"params\":{"
	    "\"name\":\"read_file\",\"arguments\":{}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"method\":\"tools/call\",\"params\":{"
	    "\"name\":\"read_file\",\"arguments\":{}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{}}}",
	    "{\"jsonrpc\":\"2.1\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\"}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{\"path\":\"a\",\"path\":\"b\"}}}",
	    "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{}}}]",
	};
	static const char *const call_base[] = {
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{\"path\":\"/w/a.txt\",\"raw\":true}}}",
	    "{\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\",\"arguments\":{"
	    "\"path\":\"a\",\"offset\":3,\"limit\":10}},\"jsonrpc\":\"2.0\",\"id\":\"k-1\"}",
	    " {\"params\" : {\"arguments\":{}, \"name\":\"bash\"} ,\"id\":-5,\"jsonrpc\":\"2.0\","
	    "\"method\":\"tools/call\"}\t",
	};
	char buf[512];
	bool agree;
	long accepted = 0, checked = 0, bad = 0;

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(flat_yes); i++) {
		bool took = flat_agrees(flat_yes[i], strlen(flat_yes[i]), &agree);

		CHECKF(took && agree, "flat fast path takes and agrees: %s", flat_yes[i]);
	}
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(flat_no); i++) {
		bool took = flat_agrees(flat_no[i], strlen(flat_no[i]), &agree);

		CHECKF(!took && agree, "flat fast path leaves to the strict parser: %s",
		       flat_no[i]);
	}
	{
		char many[400];
		size_t k = 0;

		many[k++] = '{';
		for (int i = 0; i <= MOAT_JSON_FLAT_MAX_MEMBERS; i++)
			k += (size_t)snprintf(many + k, sizeof(many) - k, "%s\"k%d\":%d",
					      i ? "," : "", i, i);
		many[k++] = '}';
		CHECKF(moat_json_parse_flat(many, k, 4096, NULL) == -EAGAIN,
		       "flat fast path: more than %d members go to the strict parser",
		       MOAT_JSON_FLAT_MAX_MEMBERS);
		CHECKF(moat_json_parse_flat(flat_yes[0], strlen(flat_yes[0]), 5, NULL) == -EAGAIN,
		       "flat fast path: over max_bytes goes to the strict parser");
	}
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(call_base); i++) {
		bool took = call_agrees(call_base[i], strlen(call_base[i]), &agree);

		CHECKF(took && agree, "tools/call fast path takes and agrees: %s", call_base[i]);
	}
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(call_no); i++) {
		bool took = call_agrees(call_no[i], strlen(call_no[i]), &agree);

		CHECKF(!took && agree, "tools/call fast path leaves to moat_rpc_parse: %s",
		       call_no[i]);
	}
	/* random edits of the usual shapes: whatever a fast path takes, the
	 * strict parser takes as the same value */
	for (int round = 0; round < 30000; round++) {
		const char *base = call_base[round % MOAT_ARRAY_SIZE(call_base)];
		size_t n = strlen(base);
		int edits = 1 + (int)(rng() % 3);
		const char *args;
		size_t an;

		memcpy(buf, base, n);
		for (int e = 0; e < edits && n + 8 < sizeof(buf); e++)
			n = mutate(buf, n);
		buf[n] = '\0';
		checked++;
		if (call_agrees(buf, n, &agree))
			accepted++;
		if (!agree && bad++ < 5)
			CHECKF(0, "tools/call fast path disagrees with moat_rpc_parse: %.*s",
			       (int)n, buf);
		/* the arguments object alone, edited the same way */
		args = strstr(base, "\"arguments\":") + 12;
		an = (size_t)(strchr(args, '}') + 1 - args);
		memcpy(buf, args, an);
		for (int e = 0; e < edits; e++)
			an = mutate(buf, an);
		buf[an] = '\0';
		if (flat_agrees(buf, an, &agree))
			accepted++;
		if (!agree && bad++ < 5)
			CHECKF(0, "flat fast path disagrees with the strict parser: %.*s", (int)an,
			       buf);
	}
	CHECKF(bad == 0 && accepted > 1000,
	       "fast paths: %ld random edits, %ld taken, all read as the strict parsers read "
	       "them (%ld disagreements)",
	       checked * 2, accepted, bad);
}

static void test_serialize(void)
{
	char key[MOAT_RPC_ID_KEY_MAX], *s;
	json_t *id = json_integer(42), *sid = json_string("abc"), *res, *str;
	size_t len;

	CHECK(moat_rpc_id_key(id, key, sizeof(key)) == 0 && !strcmp(key, "i:42"));
	CHECK(moat_rpc_id_key(sid, key, sizeof(key)) == 0 && !strcmp(key, "s:abc"));
	CHECK(moat_rpc_id_key(json_true(), key, sizeof(key)) == -EINVAL);

	res = json_pack("{s:s}", "text", "two\nlines");
	s = moat_rpc_result(id, res, &len);
	CHECK_STR(s, "{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"text\":\"two\\nlines\"}}\n");
	CHECKF(s && len == strlen(s) && !memchr(s, '\n', len - 1), "a reply is one line");
	free(s);
	s = moat_rpc_error(NULL, MOAT_RPC_PARSE_ERROR, "parse error", NULL, &len);
	CHECK_STR(s, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":"
		     "\"parse error\"}}\n");
	free(s);
	s = moat_rpc_request(3, "elicitation/create", res, &len);
	CHECK(s && strstr(s, "\"id\":3") && strstr(s, "\"method\":\"elicitation/create\""));
	free(s);
	s = moat_rpc_notification("notifications/progress", res, &len);
	CHECK(s && !strstr(s, "\"id\"") && s[len - 1] == '\n');
	free(s);
	json_decref(res);

	/* a reply over the limit becomes an error naming it */
	{
		char *big = malloc(MOAT_MCP_MAX_REPLY + 1);

		memset(big, 'a', MOAT_MCP_MAX_REPLY);
		res = json_pack("{s:s%}", "t", big, (size_t)MOAT_MCP_MAX_REPLY);
		s = moat_rpc_result(id, res, &len);
		CHECKF(s && strstr(s, "\"code\":-32603") && len < 512,
		       "a reply over %u bytes is replaced by an error", MOAT_MCP_MAX_REPLY);
		free(s);
		json_decref(res);
		free(big);
	}

	str = moat_rpc_string("ok \xff\xfe \xe2\x82\xac", 9);
	CHECKF(str && !strcmp(json_string_value(str), "ok \xef\xbf\xbd\xef\xbf\xbd \xe2\x82\xac"),
	       "invalid UTF-8 in tool output becomes U+FFFD, valid bytes kept");
	json_decref(str);
	str = moat_rpc_string("\xed\xa0\x80", 3); /* a surrogate */
	CHECK(str && !strcmp(json_string_value(str), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"));
	json_decref(str);
	json_decref(id);
	json_decref(sid);

	CHECK_STR(moat_mcp_negotiate("2025-06-18"), "2025-06-18");
	CHECK_STR(moat_mcp_negotiate("2024-11-05"), "2024-11-05");
	CHECK_STR(moat_mcp_negotiate("2030-01-01"), MOAT_MCP_LATEST_VERSION);
	CHECK_STR(moat_mcp_negotiate(NULL), MOAT_MCP_LATEST_VERSION);
	CHECK(moat_mcp_version_ge("2025-11-25", "2025-06-18"));
	CHECK(!moat_mcp_version_ge("2025-03-26", "2025-06-18"));
}

/* ---- elicitation ---- */

static void test_elicit_form(void)
{
	struct moat_decision d = {.verdict = MOAT_ASK};
	struct moat_ask ask = {.call_id = "c-1",
			       .tool = "bash",
			       .args_json = "{\"command\":\"git push\"}",
			       .summary = "git push",
			       .decision = &d,
			       .always_prefix = "git *"};
	struct moat_reply rep;
	json_t *p, *e, *a;

	moat_strlcpy(d.rule, "approval:execute", sizeof(d.rule));
	moat_strlcpy(d.reason, "commands need approval", sizeof(d.reason));
	p = moat_mcp_elicit_params(&ask, "2025-11-25");
	e = json_object_get(
	    json_object_get(json_object_get(json_object_get(p, "requestedSchema"), "properties"),
			    "decision"),
	    "enum");
	CHECKF(p && !strcmp(json_string_value(json_object_get(p, "mode")), "form") &&
		   json_array_size(e) == 4,
	       "2025-11-25: mode form; yes, prefix, always, no");
	CHECK(strstr(json_string_value(json_object_get(p, "message")), "git push") &&
	      strstr(json_string_value(json_object_get(p, "message")), "approval:execute"));
	json_decref(p);
	ask.always_prefix = NULL;
	p = moat_mcp_elicit_params(&ask, "2025-06-18");
	e = json_object_get(
	    json_object_get(json_object_get(json_object_get(p, "requestedSchema"), "properties"),
			    "decision"),
	    "enum");
	CHECKF(p && !json_object_get(p, "mode") && json_array_size(e) == 3,
	       "2025-06-18: no mode field; yes, always, no");
	json_decref(p);

#define ANSWER(js, want_r, want_answer)                                                            \
	do {                                                                                       \
		a = json_loads(js, 0, NULL);                                                       \
		memset(&rep, 0x55, sizeof(rep));                                                   \
		int r_ = moat_mcp_elicit_answer(a, &ask, &rep);                                    \
		CHECKF(r_ == (want_r) && (r_ < 0 || rep.answer == (want_answer)),                  \
		       "answer %s -> %d %d", js, r_, r_ == 0 ? (int)rep.answer : -1);              \
		json_decref(a);                                                                    \
	} while (0)
	ANSWER("{\"action\":\"accept\",\"content\":{\"decision\":\"yes\"}}", 0,
	       MOAT_ANSWER_APPROVED);
	ANSWER("{\"action\":\"accept\",\"content\":{\"decision\":\"always\"}}", 0,
	       MOAT_ANSWER_APPROVED_ALWAYS);
	CHECK(rep.always_pattern[0] == '\0');
	ANSWER("{\"action\":\"accept\",\"content\":{\"decision\":\"no\"}}", 0, MOAT_ANSWER_DENIED);
	ANSWER("{\"action\":\"decline\"}", 0, MOAT_ANSWER_DENIED);
	ANSWER("{\"action\":\"cancel\"}", 0, MOAT_ANSWER_DENIED);
	ANSWER("{\"action\":\"accept\"}", -EPROTO, 0);
	ANSWER("{\"action\":\"accept\",\"content\":{\"decision\":\"YES\"}}", -EPROTO, 0);
	ANSWER("{\"action\":\"accept\",\"content\":{\"decision\":\"prefix\"}}", -EPROTO, 0);
	ANSWER("{\"action\":\"maybe\"}", -EPROTO, 0);
	ANSWER("{}", -EPROTO, 0);
	ask.always_prefix = "git *";
	ANSWER("{\"action\":\"accept\",\"content\":{\"decision\":\"prefix\"}}", 0,
	       MOAT_ANSWER_APPROVED_ALWAYS);
	CHECK_STR(rep.always_pattern, "git *");
#undef ANSWER
}

static size_t count_byte(const char *s, char c)
{
	size_t n = 0;

	for (; s && *s; s++)
		n += *s == c;
	return n;
}

/* F5: untrusted text in the elicitation message cannot hide or redraw
 * anything: no raw newline, ESC or bidi override of the agent's reaches the
 * client, and the hidden tail is shown. */
static void test_elicit_untrusted(void)
{
	struct moat_decision d = {.verdict = MOAT_ASK};
	struct moat_buf cmd = MOAT_BUF_INIT, big = MOAT_BUF_INIT;
	struct moat_ask ask = {.tool = "bash", .decision = &d};
	const char *m, *name;
	json_t *p, *names;
	size_t nl_plain;

	moat_strlcpy(d.rule, "approval:execute", sizeof(d.rule));
	moat_strlcpy(d.reason, "matched \x1b", sizeof(d.reason));
	/* the same ask without untrusted control characters: its newline count */
	ask.summary = "ls";
	ask.args_json = "{}";
	ask.always_prefix = "ls *";
	p = moat_mcp_elicit_params(&ask, "2025-11-25");
	nl_plain = count_byte(json_string_value(json_object_get(p, "message")), '\n');
	json_decref(p);

	moat_buf_puts(&cmd, "git status # harmless");
	for (int i = 0; i < 40; i++)
		moat_buf_putc(&cmd, '\n');
	moat_buf_puts(&cmd, "touch EVIL \x1b[1A\x1b[2K\r\xe2\x80\xae\xe2\x81\xa6\xef\xbb\xbf\x7f"
			    "\xc2\x9b\xe2\x80\xa8"
			    "end");
	ask.summary = cmd.data;
	ask.args_json = "{\"command\":\"git status\\n\\u001b[2K \xe2\x80\xae evil\"}";
	ask.always_prefix = "git\n\x1b[2K*";
	moat_strlcpy(d.rule, "approval:\x1b[31mexec\n", sizeof(d.rule));
	p = moat_mcp_elicit_params(&ask, "2025-11-25");
	m = json_string_value(json_object_get(p, "message"));
	CHECKF(m && count_byte(m, '\n') == nl_plain, "no raw newline from the ask (%zu, want %zu)",
	       count_byte(m, '\n'), nl_plain);
	CHECK(m && !strchr(m, '\x1b') && !strchr(m, '\r') && !strchr(m, '\x7f'));
	CHECK(m && !strstr(m, "\xe2\x80\xae") && !strstr(m, "\xe2\x81\xa6") &&
	      !strstr(m, "\xef\xbb\xbf") && !strstr(m, "\xc2\x9b") && !strstr(m, "\xe2\x80\xa8"));
	CHECKF(m && strstr(m, "command: git status # harmless\\n\\n\\n") &&
		   strstr(m, "\\ntouch EVIL \\x1b[1A\\x1b[2K\\r\\u202e\\u2066\\ufeff\\x7f\\u009b"
			     "\\u2028end\n"),
	       "the hidden tail is visible, escaped: %s", m ? m : "(null)");
	CHECK(m && strstr(m, "\\u202e evil") && strstr(m, "rule: approval:\\x1b[31mexec\\n\n"));
	names = json_object_get(
	    json_object_get(json_object_get(json_object_get(p, "requestedSchema"), "properties"),
			    "decision"),
	    "enumNames");
	name = json_string_value(json_array_get(names, 1));
	CHECKF(name && !strchr(name, '\n') && !strchr(name, '\x1b') &&
		   strstr(name, "git\\n\\x1b[2K*"),
	       "the prefix choice is shown escaped: %s", name ? name : "(null)");
	json_decref(p);

	/* the cap: MOAT_MCP_ELICIT_MAX_ARGS shown bytes, then a count of the rest */
	for (int i = 0; i < MOAT_MCP_ELICIT_MAX_ARGS; i++)
		moat_buf_putc(&big, 'a');
	ask.summary = big.data;
	ask.args_json = NULL;
	ask.always_prefix = NULL;
	p = moat_mcp_elicit_params(&ask, "2025-11-25");
	m = json_string_value(json_object_get(p, "message"));
	CHECKF(m && !strstr(m, "more bytes)"), "exactly the limit: shown whole");
	json_decref(p);
	moat_buf_puts(&big, "\n\n\ntouch EVIL");
	ask.summary = big.data;
	p = moat_mcp_elicit_params(&ask, "2025-11-25");
	m = json_string_value(json_object_get(p, "message"));
	CHECKF(m && strstr(m, "a... (13 more bytes)\n") && !strstr(m, "EVIL"),
	       "past the limit: cut with a count of the bytes left out");
	json_decref(p);
	moat_buf_reset(&big);
	for (int i = 0; i < MOAT_MCP_ELICIT_MAX_ARGS; i++)
		moat_buf_putc(&big, '\x1b');
	ask.summary = big.data;
	p = moat_mcp_elicit_params(&ask, "2025-11-25");
	m = json_string_value(json_object_get(p, "message"));
	CHECKF(m && strlen(m) < MOAT_MCP_ELICIT_MAX_ARGS + 512 &&
		   strstr(m, "\\x1b... (1500 more bytes)\n"),
	       "escapes count against the limit");
	json_decref(p);
	moat_buf_release(&cmd);
	moat_buf_release(&big);
}

struct wire {
	pthread_mutex_t mu;
	char *lines[16];
	int n;
};

static int capture(void *ud, const char *line, size_t len)
{
	struct wire *w = ud;

	pthread_mutex_lock(&w->mu);
	if (w->n < 16)
		w->lines[w->n++] = strndup(line, len);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

struct ask_thread {
	struct moat_mcp_elicit_call call;
	int timeout_ms;
	int r;
	struct moat_reply rep;
};

static void *ask_main(void *arg)
{
	struct ask_thread *t = arg;
	struct moat_decision d = {.verdict = MOAT_ASK};
	struct moat_ask ask = {
	    .tool = "write_file", .args_json = "{}", .summary = "x", .decision = &d};

	t->r = moat_mcp_elicit_approver(&t->call, &ask, t->timeout_ms, &t->rep);
	return NULL;
}

/* the id of the n-th captured request, waiting for it */
static json_int_t wait_request(struct wire *w, int n)
{
	for (int i = 0; i < 2000; i++) {
		json_int_t id = -1;

		pthread_mutex_lock(&w->mu);
		if (w->n > n) {
			json_t *j = json_loads(w->lines[n], 0, NULL);

			id = json_integer_value(json_object_get(j, "id"));
			json_decref(j);
		}
		pthread_mutex_unlock(&w->mu);
		if (id >= 0)
			return id;
		usleep(1000);
	}
	return -1;
}

static void route(struct moat_mcp_elicit *e, json_int_t id, const char *result)
{
	char s[256];
	struct moat_rpc_msg m;
	struct moat_rpc_fault f;

	snprintf(s, sizeof(s), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":%s}", (long long)id,
		 result);
	if (moat_rpc_parse(s, strlen(s), &m, &f) == 0) {
		CHECK(moat_mcp_elicit_route(e, &m));
		moat_rpc_msg_release(&m);
	}
}

static void test_elicit_roundtrip(void)
{
	struct wire w = {.mu = PTHREAD_MUTEX_INITIALIZER};
	struct moat_mcp_elicit *e = NULL;
	struct ask_thread t;
	pthread_t th;
	json_int_t id;

	CHECK(moat_mcp_elicit_new(capture, &w, &e) == 0);
	memset(&t, 0, sizeof(t));
	t.call.e = e;
	t.timeout_ms = 5000;
	ask_main(&t);
	CHECKF(t.r == -ENOTTY && w.n == 0, "no elicitation capability: -ENOTTY, nothing sent");

	moat_mcp_elicit_configure(e, true, "2025-11-25");
	pthread_create(&th, NULL, ask_main, &t);
	id = wait_request(&w, 0);
	CHECKF(id > 0 && strstr(w.lines[0], "\"method\":\"elicitation/create\""),
	       "the approver sends elicitation/create");
	route(e, id, "{\"action\":\"accept\",\"content\":{\"decision\":\"yes\"}}");
	pthread_join(th, NULL);
	CHECKF(t.r == 0 && t.rep.answer == MOAT_ANSWER_APPROVED, "the routed answer approves");

	/* an unknown id is not ours */
	{
		struct moat_rpc_msg m;
		struct moat_rpc_fault f;
		const char *s = "{\"jsonrpc\":\"2.0\",\"id\":12345,\"result\":{}}";

		CHECK(moat_rpc_parse(s, strlen(s), &m, &f) == 0 && !moat_mcp_elicit_route(e, &m));
		moat_rpc_msg_release(&m);
	}

	/* timeout: -ETIMEDOUT and the client is told with notifications/cancelled */
	t.timeout_ms = 50;
	ask_main(&t);
	CHECKF(t.r == -ETIMEDOUT && w.n == 3 && strstr(w.lines[2], "notifications/cancelled"),
	       "no answer in time: -ETIMEDOUT, the request cancelled at the client");

	/* a cancelled call: -ECANCELED */
	t.timeout_ms = 60000;
	pthread_create(&th, NULL, ask_main, &t);
	wait_request(&w, 3);
	moat_mcp_elicit_cancel(e, &t.call);
	pthread_join(th, NULL);
	CHECKF(t.r == -ECANCELED, "a cancelled call's ask returns -ECANCELED");
	t.call.cancelled = false;

	/* an error answer: -EIO */
	pthread_create(&th, NULL, ask_main, &t);
	id = wait_request(&w, 5);
	{
		char s[200];
		struct moat_rpc_msg m;
		struct moat_rpc_fault f;

		snprintf(
		    s, sizeof(s),
		    "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-1,\"message\":\"no\"}}",
		    (long long)id);
		CHECK(moat_rpc_parse(s, strlen(s), &m, &f) == 0 && moat_mcp_elicit_route(e, &m));
		moat_rpc_msg_release(&m);
	}
	pthread_join(th, NULL);
	CHECKF(t.r == -EIO, "an error answer: -EIO (the gate denies)");

	/* stopping: every ask fails at once */
	moat_mcp_elicit_cancel(e, NULL);
	ask_main(&t);
	CHECK(t.r == -ECANCELED);
	moat_mcp_elicit_free(e);
	for (int i = 0; i < w.n; i++)
		free(w.lines[i]);
}

/* ---- the server over pipes, with a real session ---- */

struct served {
	struct moat_session *s;
	int in, out;
	int r;
};

static void *serve_main(void *arg)
{
	struct served *sv = arg;
	struct moat_mcp_opts o = {.in_fd = sv->in, .out_fd = sv->out, .workspace = "/ws"};

	sv->r = moat_mcp_serve(sv->s, &o);
	close(sv->out);
	return NULL;
}

static void test_server(void)
{
	char ws[] = "/tmp/moat-mcp-unit-XXXXXX", path[300], audit[300], *out = NULL;
	struct moat_session_opts so;
	struct moat_error err;
	struct served sv;
	int to[2], from[2], n = 50, answered = 0;
	pthread_t th;
	FILE *wf, *rf;
	size_t cap = 0;
	ssize_t len;

	if (!mkdtemp(ws)) {
		CHECKF(0, "mkdtemp");
		return;
	}
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%d.txt", ws, i);
		wf = fopen(path, "w");
		fprintf(wf, "content %d\n", i);
		fclose(wf);
	}
	snprintf(audit, sizeof(audit), "%s.audit", ws);
	memset(&so, 0, sizeof(so));
	moat_error_clear(&err);
	so.config_json = "{}";
	so.cwd = ws;
	so.audit_path = audit;
	so.no_project_config = true;
	so.source = "mcp";
	memset(&sv, 0, sizeof(sv));
	if (moat_session_new(&so, &sv.s, &err) < 0) {
		CHECKF(0, "session: %s", err.msg);
		return;
	}
	CHECK(pipe(to) == 0 && pipe(from) == 0);
	sv.in = to[0];
	sv.out = from[1];
	pthread_create(&th, NULL, serve_main, &sv);
	wf = fdopen(to[1], "w");
	rf = fdopen(from[0], "r");
	fprintf(wf, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
		    "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{"
		    "\"name\":\"unit\",\"version\":\"1\"}}}\n"
		    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
		    "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n"
		    "{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"tools/list\"}\n"
		    "garbage\n");
	for (int i = 1; i <= n; i++)
		fprintf(
		    wf,
		    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"read_file\",\"arguments\":{\"path\":\"f%d.txt\",\"raw\":true}}}\n",
		    i, i - 1);
	fclose(wf); /* end of input right away: the calls still answer or are refused */
	{
		bool init = false, pong = false, list = false, parse_err = false;
		int got[51] = {0}, structured = 0, texts = 0;

		while ((len = getline(&out, &cap, rf)) > 0) {
			json_t *j = json_loads(out, 0, NULL);
			json_t *id = json_object_get(j, "id"), *res = json_object_get(j, "result");

			if (json_is_integer(id) && json_integer_value(id) == 0 && res)
				init = !strcmp(
				    json_string_value(json_object_get(res, "protocolVersion")),
				    "2025-06-18");
			else if (json_is_string(id) && !strcmp(json_string_value(id), "p") && res)
				pong = json_object_size(res) == 0;
			else if (json_is_string(id) && !strcmp(json_string_value(id), "l") && res)
				list = json_array_size(json_object_get(res, "tools")) == 5;
			else if (json_is_null(id))
				parse_err = json_integer_value(json_object_get(
						json_object_get(j, "error"), "code")) == -32700;
			else if (json_is_integer(id) && json_integer_value(id) >= 1 &&
				 json_integer_value(id) <= n) {
				int k = (int)json_integer_value(id);
				char want[32];
				const char *t = json_string_value(json_object_get(
				    json_array_get(json_object_get(res, "content"), 0), "text"));

				const char *st = json_string_value(json_object_get(
				    json_object_get(res, "structuredContent"), "text"));

				snprintf(want, sizeof(want), "content %d\n", k - 1);
				got[k]++;
				if (t && !strcmp(t, want)) {
					answered++;
					texts++;
				}
				/* the structured result carries the text too (a client
				 * may show the model nothing else) */
				if (t && st && !strcmp(st, t))
					structured++;
				else if (json_object_get(j, "error"))
					answered++; /* refused: the server was stopping */
			}
			json_decref(j);
		}
		CHECKF(init && pong && list && parse_err,
		       "server: initialize, ping, tools/list answered; garbage gets -32700");
		CHECKF(answered == n, "server: %d pipelined calls, each answered once (%d)", n,
		       answered);
		CHECKF(
		    texts > 0 && structured == texts,
		    "server: each read_file result's structuredContent.text is its text (%d of %d)",
		    structured, texts);
		for (int i = 1; i <= n; i++)
			if (got[i] != 1)
				CHECKF(0, "call %d answered %d times", i, got[i]);
	}
	pthread_join(th, NULL);
	CHECKF(sv.r == 0, "server: end of input returns 0 (%d)", sv.r);
	fclose(rf);
	free(out);
	close(to[0]);
	moat_session_free(sv.s);
	if (strncmp(ws, "/tmp/moat-mcp-unit-", 19) == 0) {
		for (int i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/f%d.txt", ws, i);
			unlink(path);
		}
		rmdir(ws);
		unlink(audit);
	}
}

/* The same calls written for the fast path and in forms that take the strict
 * parser (an escape, a nested argument): the same replies, the same audit
 * lines; malformed arguments still a -32700. */
static void test_server_paths(void)
{
	static const char *const lines[] = {
	    /* 1, 2: the same read */
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{\"path\":\"a.txt\",\"raw\":true}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{\"path\":\"a\\u002etxt\",\"raw\":true}}}",
	    /* 3, 4: an unknown tool */
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"nope\",\"arguments\":{}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"no\\u0070e\",\"arguments\":{}}}",
	    /* 5: a duplicate key in the arguments: -32700, nothing run */
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{\"path\":\"a.txt\",\"path\":\".env\"}}}",
	    /* 7, 8: a denied path */
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{\"path\":\".env\"}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{\"path\":\"\\u002eenv\"}}}",
	    /* 9: an argument the tool does not take, nested */
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"read_file\",\"arguments\":{\"path\":\"a.txt\",\"x\":{\"y\":1}}}}",
	};
	char ws[] = "/tmp/moat-mcp-unit-XXXXXX", path[300], audit[300], *out = NULL;
	struct moat_session_opts so;
	struct moat_error err;
	struct served sv;
	json_t *rep[10] = {NULL};
	int to[2], from[2], audit_lines = 0;
	pthread_t th;
	FILE *wf, *rf;
	size_t cap = 0;
	ssize_t len;

	if (!mkdtemp(ws)) {
		CHECKF(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/a.txt", ws);
	wf = fopen(path, "w");
	fputs("alpha\nbeta\n", wf);
	fclose(wf);
	snprintf(path, sizeof(path), "%s/.env", ws);
	wf = fopen(path, "w");
	fputs("SECRET=1\n", wf);
	fclose(wf);
	snprintf(audit, sizeof(audit), "%s.audit", ws);
	memset(&so, 0, sizeof(so));
	moat_error_clear(&err);
	so.config_json = "{}";
	so.cwd = ws;
	so.audit_path = audit;
	so.no_project_config = true;
	so.source = "mcp";
	memset(&sv, 0, sizeof(sv));
	if (moat_session_new(&so, &sv.s, &err) < 0) {
		CHECKF(0, "session: %s", err.msg);
		return;
	}
	CHECK(pipe(to) == 0 && pipe(from) == 0);
	sv.in = to[0];
	sv.out = from[1];
	pthread_create(&th, NULL, serve_main, &sv);
	wf = fdopen(to[1], "w");
	rf = fdopen(from[0], "r");
	fprintf(wf, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
		    "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{"
		    "\"name\":\"unit\",\"version\":\"1\"}}}\n");
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(lines); i++)
		fprintf(wf, "%s\n", lines[i]);
	fclose(wf);
	while ((len = getline(&out, &cap, rf)) > 0) {
		json_t *j = json_loads(out, 0, NULL), *id = json_object_get(j, "id");

		if (json_is_integer(id) && json_integer_value(id) >= 1 &&
		    json_integer_value(id) < 10 && !rep[json_integer_value(id)]) {
			rep[json_integer_value(id)] = json_incref(j);
		} else if (json_is_null(id)) {
			json_decref(rep[5]);
			rep[5] = json_incref(j); /* the parse error */
		}
		json_decref(j);
	}
	pthread_join(th, NULL);
	{
		json_t *r1 = json_object_get(rep[1], "result"),
		       *r2 = json_object_get(rep[2], "result");
		json_t *e3 = json_object_get(rep[3], "error"),
		       *e4 = json_object_get(rep[4], "error");
		json_t *r7 = json_object_get(rep[7], "result"),
		       *r8 = json_object_get(rep[8], "result");
		json_t *r9 = json_object_get(rep[9], "result");
		const char *t1 = json_string_value(
		    json_object_get(json_array_get(json_object_get(r1, "content"), 0), "text"));

		CHECKF(r1 && json_equal(r1, r2) && t1 && !strcmp(t1, "alpha\nbeta\n"),
		       "server paths: a read answers the same through both parsers");
		CHECKF(e3 && json_equal(e3, e4) &&
			   json_integer_value(json_object_get(e3, "code")) == -32602,
		       "server paths: an unknown tool, the same -32602 through both");
		CHECKF(json_integer_value(
			   json_object_get(json_object_get(rep[5], "error"), "code")) == -32700,
		       "server paths: a duplicate key in the arguments is still -32700");
		CHECKF(r7 && json_equal(r7, r8) && json_is_true(json_object_get(r7, "isError")),
		       "server paths: a denied path, the same refusal through both");
		CHECKF(r9 && json_is_true(json_object_get(r9, "isError")),
		       "server paths: a nested unknown argument is a tool error");
	}
	rf = freopen(audit, "r", rf);
	while (rf && (len = getline(&out, &cap, rf)) > 0)
		audit_lines++;
	CHECKF(audit_lines == 5, "server paths: one audit line per call run (%d, want 5)",
	       audit_lines);
	if (rf)
		fclose(rf);
	for (int i = 0; i < 10; i++)
		json_decref(rep[i]);
	free(out);
	close(to[0]);
	moat_session_free(sv.s);
	if (strncmp(ws, "/tmp/moat-mcp-unit-", 19) == 0) {
		snprintf(path, sizeof(path), "%s/a.txt", ws);
		unlink(path);
		snprintf(path, sizeof(path), "%s/.env", ws);
		unlink(path);
		rmdir(ws);
		unlink(audit);
	}
}

int main(void)
{
	test_reader();
	test_classify();
	test_fast_paths();
	test_serialize();
	test_elicit_form();
	test_elicit_untrusted();
	test_elicit_roundtrip();
	test_server();
	test_server_paths();
	return tap_done();
}
