// A scripted model server for the real agent clients (tests/agents): it
// speaks the API the client expects on 127.0.0.1, answers each turn of the
// conversation with the next tool call of a script, and records every
// request it receives, so that the test reads from outside what the model
// was given.
//
//   const m = await startModel({ api: 'anthropic' | 'openai', script, log });
//   m.url, m.requests (each {seq, method, url, headers, body}), m.close()
//
// The script is an array of steps {tool: NAME, args: {...}}. NAME is a
// client's own tool ("Bash", "ToolSearch") or "moat:TOOL", moat's MCP tool
// TOOL under whatever name the client gives it (Claude Code:
// mcp__moat__TOOL; Codex: TOOL in its namespace mcp__moat). Step k answers
// the turn whose conversation holds k tool results; past the last step the
// model says "done" and the client's turn ends. A request that offers no
// tools (a client's side question: a title, a command prefix) gets a short
// text answer.
//
// APIs:
// - anthropic: POST /v1/messages (Anthropic Messages: the streaming events
//   message_start, content_block_start/delta/stop, message_delta,
//   message_stop; one JSON message when "stream" is false), POST
//   /v1/messages/count_tokens.
// - openai: POST /v1/responses (OpenAI Responses: the streaming events
//   response.created, response.output_item.added/done, response.completed).
// Anything else is answered 404, and recorded like the rest. log, when
// given, gets every request as a JSON line too (for a failure's post
// mortem).
import fs from 'node:fs';
import http from 'node:http';

export function startModel({ api, script, log }) {
	if (api !== 'anthropic' && api !== 'openai')
		throw new Error('startModel: api is anthropic or openai');
	const requests = [];
	const logFd = log ? fs.openSync(log, 'a') : -1;
	let seq = 0;

	function record(req, body) {
		const headers = {};
		for (const [k, v] of Object.entries(req.headers))
			if (!/^(authorization|x-api-key)$/i.test(k)) headers[k] = v;
		const r = { seq: seq++, method: req.method, url: req.url, headers, body };
		requests.push(r);
		if (logFd >= 0)
			fs.writeSync(logFd, JSON.stringify(r) + '\n');
	}

	// The client's name for the step's tool, from the tools offered.
	function toolName(step, names) {
		if (!step.tool.startsWith('moat:'))
			return names.includes(step.tool) ? step.tool : null;
		const t = step.tool.slice(5);
		return names.find((n) => n === `mcp__moat__${t}`) ||
			names.find((n) => /moat/.test(n) && (n.endsWith(`__${t}`) || n.endsWith(`.${t}`) || n.endsWith(`/${t}`))) || null;
	}

	// What to answer: {kind: 'tool', name, args, id} or {kind: 'text', text}.
	function decide(names, results) {
		if (!names.length)
			return { kind: 'text', text: 'ok' };
		if (results >= script.length)
			return { kind: 'text', text: 'done' };
		const step = script[results];
		const name = toolName(step, names);
		if (!name)
			return { kind: 'text', text: `the tool ${step.tool} is not offered (tools: ${names.join(', ')})` };
		return { kind: 'tool', name, args: step.args, id: `call_${results}_${seq}` };
	}

	// ---- Anthropic Messages ----
	function anthropic(body, res) {
		const names = (body.tools || []).map((t) => t.name).filter(Boolean);
		let results = 0;
		for (const m of body.messages || [])
			if (Array.isArray(m.content))
				results += m.content.filter((b) => b && b.type === 'tool_result').length;
		const d = decide(names, results);
		const id = `msg_${seq}`;
		const block = d.kind === 'tool'
			? { type: 'tool_use', id: `toolu_${d.id}`, name: d.name, input: d.args }
			: { type: 'text', text: d.text };
		const stop = d.kind === 'tool' ? 'tool_use' : 'end_turn';
		const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
		const model = body.model || 'scripted';
		if (!body.stream) {
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model, content: [block], stop_reason: stop, stop_sequence: null, usage }));
			return;
		}
		res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
		const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
		ev('message_start', { message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
		if (d.kind === 'tool') {
			ev('content_block_start', { index: 0, content_block: { ...block, input: {} } });
			ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(d.args) } });
		} else {
			ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
			ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: d.text } });
		}
		ev('content_block_stop', { index: 0 });
		ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
		ev('message_stop', {});
		res.end();
	}

	// ---- OpenAI Responses ----
	function openai(body, res) {
		// a tool of a namespace (Codex puts an MCP server's tools in one,
		// "mcp__SERVER") is called by its name with the namespace beside it
		const names = [];
		const ns = new Map();
		for (const t of body.tools || []) {
			if (t && t.type === 'namespace' && Array.isArray(t.tools)) {
				for (const u of t.tools)
					if (u && u.name) {
						names.push(`${t.name}__${u.name}`);
						ns.set(`${t.name}__${u.name}`, { namespace: t.name, name: u.name });
					}
			} else if (t && t.name) {
				names.push(t.name);
			}
		}
		const results = (body.input || []).filter((i) => i && i.type === 'function_call_output').length;
		const d = decide(names, results);
		const rid = `resp_${seq}`;
		const item = d.kind === 'tool'
			? { type: 'function_call', id: `fc_${d.id}`, call_id: d.id, ...(ns.get(d.name) || { name: d.name }), arguments: JSON.stringify(d.args), status: 'completed' }
			: { type: 'message', id: `msg_${seq}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: d.text, annotations: [] }] };
		res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
		const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
		ev('response.created', { response: { id: rid, status: 'in_progress' } });
		ev('response.output_item.added', { output_index: 0, item: d.kind === 'tool' ? { ...item, arguments: '', status: 'in_progress' } : { ...item, content: [], status: 'in_progress' } });
		if (d.kind === 'text')
			ev('response.output_text.delta', { output_index: 0, content_index: 0, item_id: item.id, delta: d.text });
		ev('response.output_item.done', { output_index: 0, item });
		ev('response.completed', {
			response: {
				id: rid, status: 'completed', output: [item],
				usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 },
			},
		});
		res.end();
	}

	const server = http.createServer((req, res) => {
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => {
			const raw = Buffer.concat(chunks).toString('utf8');
			record(req, raw);
			const url = req.url.split('?')[0];
			let body = {};
			try {
				body = raw ? JSON.parse(raw) : {};
			} catch {
				res.writeHead(400, { 'content-type': 'application/json' });
				res.end('{"error":{"type":"invalid_request_error","message":"not JSON"}}');
				return;
			}
			if (req.method === 'POST' && api === 'anthropic' && url.endsWith('/messages/count_tokens')) {
				res.writeHead(200, { 'content-type': 'application/json' });
				res.end('{"input_tokens":10}');
			} else if (req.method === 'POST' && api === 'anthropic' && url.endsWith('/messages')) {
				anthropic(body, res);
			} else if (req.method === 'POST' && api === 'openai' && url.endsWith('/responses')) {
				openai(body, res);
			} else {
				res.writeHead(404, { 'content-type': 'application/json' });
				res.end('{"error":{"type":"not_found_error","message":"not here"}}');
			}
		});
	});
	return new Promise((resolve, reject) => {
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			resolve({
				url: `http://127.0.0.1:${server.address().port}`,
				requests,
				close() {
					server.closeAllConnections();
					server.close();
					if (logFd >= 0)
						fs.closeSync(logFd);
				},
			});
		});
	});
}
