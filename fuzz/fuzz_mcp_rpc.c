/* Fuzz the MCP server's request path: newline framing (split at a point the
 * input chooses, so lines cross reads), the strict parse and the
 * classification of every line, id keys, and the elicitation answer
 * mapping, and the fast path of tools/call (what it takes, the strict parser
 * reads alike). It never crashes or reads out of bounds; a message it accepts
 * is well formed (its kind matches its members); every reply it would
 * write is one line of JSON that parses back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mcp/mcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(char *s, size_t len)
{
	json_t *back;

	if (!s)
		return;
	if (len == 0 || s[len - 1] != '\n' || memchr(s, '\n', len - 1))
		abort();
	back = json_loadb(s, len, JSON_ALLOW_NUL, NULL);
	if (!json_is_object(back))
		abort();
	json_decref(back);
	free(s);
}

static void one(const char *line, size_t len)
{
	struct moat_rpc_msg m;
	struct moat_rpc_fault f;
	char key[MOAT_RPC_ID_KEY_MAX], *out;
	json_t *empty;
	size_t n = 0;
	struct moat_rpc_call c;

	/* the fast path of tools/call reads what the strict parser reads */
	if (moat_rpc_parse_call(line, len, &c) == 0) {
		json_t *args = NULL;

		if (moat_rpc_parse(line, len, &m, &f) < 0 || m.kind != MOAT_RPC_REQUEST ||
		    strcmp(m.method, "tools/call") || !json_equal(m.id, c.id) ||
		    moat_json_parse_flat(c.args, c.args_len, MOAT_MCP_MAX_LINE, &args) < 0 ||
		    !json_equal(args, json_object_get(m.params, "arguments")))
			abort();
		json_decref(args);
		json_decref(c.id);
		moat_rpc_msg_release(&m);
	}
	if (moat_rpc_parse(line, len, &m, &f) < 0) {
		if (f.code >= 0)
			abort();
		out = moat_rpc_error(f.id, f.code, f.message, NULL, &n);
		check_line(out, n);
		moat_rpc_fault_release(&f);
		return;
	}
	switch (m.kind) {
	case MOAT_RPC_REQUEST:
		if (!m.method || !m.id || moat_rpc_id_key(m.id, key, sizeof(key)) < 0)
			abort();
		empty = json_object();
		out = moat_rpc_result(m.id, m.params ? m.params : empty, &n);
		json_decref(empty);
		check_line(out, n);
		break;
	case MOAT_RPC_NOTIFICATION:
		if (!m.method || m.id)
			abort();
		break;
	case MOAT_RPC_RESPONSE: {
		struct moat_ask ask = {.tool = "bash", .always_prefix = "git *"};
		struct moat_reply rep;

		if (!m.id || !!m.result == !!m.error)
			abort();
		if (m.result && moat_mcp_elicit_answer(m.result, &ask, &rep) == 0 &&
		    (unsigned)rep.answer > MOAT_ANSWER_APPROVED_ALWAYS)
			abort();
		break;
	}
	default:
		abort();
	}
	if (m.params && !json_is_object(m.params))
		abort();
	moat_rpc_msg_release(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct moat_rpc_reader r;
	const char *line;
	size_t len, split;
	json_t *s;
	int k;

	if (size == 0)
		return 0;
	/* the first byte chooses where the input is split in two reads, and a
	 * small line limit half the time, to reach the too-long paths */
	split = size > 1 ? data[0] % size : 0;
	moat_rpc_reader_init(&r, (data[0] & 1) ? 64 : MOAT_MCP_MAX_LINE);
	data++;
	size--;
	if (split > size)
		split = size;
	for (int part = 0; part < 2; part++) {
		const uint8_t *p = part ? data + split : data;
		size_t n = part ? size - split : split;

		if (moat_rpc_reader_feed(&r, (const char *)p, n) < 0)
			break;
		while ((k = moat_rpc_reader_next(&r, &line, &len)) != 0) {
			if (k == MOAT_RPC_LINE)
				one(line, len);
		}
	}
	if (moat_rpc_reader_flush(&r, &line, &len) == MOAT_RPC_LINE)
		one(line, len);
	moat_rpc_reader_release(&r);
	/* tool output of any bytes becomes a valid JSON string */
	s = moat_rpc_string((const char *)data, size);
	if (!s)
		abort();
	json_decref(s);
	return 0;
}
