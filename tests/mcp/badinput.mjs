// Bad input of every kind. Protocol errors over a raw connection (what an
// SDK would never send): malformed JSON -32700, not a request -32600,
// unknown method -32601, bad params -32602, limits (line size, depth, ids,
// calls in flight). Invalid tool arguments through the SDK client: a tool
// result with isError true and a message naming the problem. After each,
// the server still answers.
import fs from 'node:fs';
import path from 'node:path';
import { main, ok, world, connect, text, raw, types, pgrep, waitFor } from './lib.mjs';

await main(async () => {
	const w = world('badinput');
	const x = raw(w);
	await x.initialize();
	const err = (m) => (m && m.error ? m.error.code : m);
	let seq = 0;
	// send a raw line, return the next message that is an error with id null
	const nullErr = async (line) => {
		const before = x.msgs.filter((m) => m.error && m.id === null).length;
		x.write(Buffer.isBuffer(line) ? Buffer.concat([line, Buffer.from('\n')]) : line + '\n');
		await x.count((m) => m.error && m.id === null, before + 1, 5000);
		return x.msgs.filter((m) => m.error && m.id === null)[before];
	};
	const req = async (obj) => {
		const id = obj.id !== undefined ? obj.id : `q${seq++}`;
		x.send({ jsonrpc: '2.0', id, ...obj });
		return x.reply(id, 5000);
	};

	ok(err(await nullErr('{"jsonrpc":"2.0","id":1,"method":')) === -32700, 'truncated JSON: -32700 with id null');
	ok(err(await nullErr('not json at all')) === -32700, 'text that is not JSON: -32700');
	ok(err(await nullErr('{"jsonrpc":"2.0","id":5,"id":6,"method":"ping"}')) === -32700, 'duplicate keys: -32700 (strict parser)');
	const badUtf8 = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}')]);
	ok(err(await nullErr(badUtf8)) === -32700, 'invalid UTF-8: -32700');
	ok(err(await nullErr('[' + '{"jsonrpc":"2.0","id":1,"method":"ping"}' + ']')) === -32600, 'a batch: -32600');
	ok(err(await nullErr('42')) === -32600, 'a bare number: -32600');
	const deep = '{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"a":' + '['.repeat(100) + ']'.repeat(100) + '}}';
	ok(err(await nullErr(deep)) === -32700, 'nesting deeper than the limit: refused');
	ok(err(await req({ id: 'nv', jsonrpc: '1.0', method: 'ping' })) === -32600, 'jsonrpc "1.0": -32600 with its id');
	ok(err(await nullErr('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}')) === -32600, 'an object id: -32600, id null');
	ok(err(await nullErr(`{"jsonrpc":"2.0","id":"${'i'.repeat(200)}","method":"ping"}`)) === -32600, 'an id over 128 bytes: -32600');
	ok(err(await req({ method: 'no/such/method' })) === -32601, 'unknown method: -32601');
	ok(err(await req({ method: 'resources/list' })) === -32601, 'resources/list (not offered): -32601');
	ok(err(await req({ method: 'tools/call', params: { arguments: {} } })) === -32602, 'tools/call without a name: -32602');
	ok(err(await req({ method: 'tools/call', params: { name: 'rm_rf', arguments: {} } })) === -32602, 'an unknown tool: -32602');
	ok(err(await req({ method: 'tools/call', params: { name: 'read_file', arguments: ['a'] } })) === -32602, 'arguments not an object: -32602');
	ok(err(await req({ method: 'tools/call', params: [1] })) === -32602, 'params an array: -32602');
	ok(err(await req({ method: 'logging/setLevel', params: { level: 'loud' } })) === -32602, 'logging/setLevel with an unknown level: -32602');
	ok(err(await req({ method: 'tools/call', extra: 1 })) === -32600, 'an unknown member: -32600');
	const nul = await req({ method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a\u0000b' } } });
	ok(nul && nul.result && nul.result.isError === true && /NUL|\\u0000/.test(nul.result.content[0].text), 'a NUL character in an argument: a tool error result', nul);
	ok(err(await req({ method: 'ping\u0000' })) === -32600, 'a NUL character in the method: -32600 with its id');
	// valid JSON numbers past 64 bits: answered with the request's id
	// (an SDK client would otherwise wait out its own timeout)
	x.write('{"jsonrpc":"2.0","id":"big1","method":"tools/call","params":{"name":"bash","arguments":{"command":"touch big_ran","timeout":18446744073709551617}}}\n');
	const big1 = await x.reply('big1', 5000);
	ok(err(big1) === -32602 && /out of range/.test(big1.error.message), 'an integer past 64 bits: -32602 with the request id', big1);
	x.write('{"jsonrpc":"2.0","id":"big2","method":"tools/call","params":{"name":"read_file","arguments":{"path":"a","offset":1e400}}}\n');
	ok(err(await x.reply('big2', 5000)) === -32602, 'a double past its range: -32602 with the request id');
	ok(!fs.existsSync(path.join(w.ws, 'big_ran')), 'the call with the huge number did not run (seen from outside)');

	// notifications and stray responses are never answered
	const n0 = x.msgs.length;
	x.send({ jsonrpc: '2.0', method: 'notifications/unknown' });
	x.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'nothing' } });
	x.send({ jsonrpc: '2.0', id: 999, result: {} });
	x.send({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'bash', arguments: { command: 'touch notified' } } });
	const p = await req({ method: 'ping' });
	ok(p && p.result && x.msgs.length === n0 + 1, 'notifications and stray responses get no reply', x.msgs.slice(n0));
	ok(!fs.existsSync(path.join(w.ws, 'notified')), 'a tools/call sent as a notification (no id) does not run');

	// a line over the 4 MiB limit: refused, its bytes dropped, the server goes on
	const big = '{"jsonrpc":"2.0","id":"big","method":"ping","params":{"p":"' + 'a'.repeat(5 << 20) + '"}}';
	const m = await nullErr(big);
	ok(err(m) === -32600 && /larger/.test(m.error.message), 'a 5 MiB line: -32600 saying it is too large', m && m.error);
	const after = await req({ method: 'ping' });
	ok(after && after.result, 'the server answers after the oversized line');

	// duplicate id of a call in flight
	x.send({ jsonrpc: '2.0', id: 'dup', method: 'tools/call', params: { name: 'bash', arguments: { command: 'sleep 2' } } });
	x.send({ jsonrpc: '2.0', id: 'dup', method: 'tools/call', params: { name: 'read_file', arguments: { path: '.' } } });
	await x.count((mm) => mm.id === 'dup', 2, 10000);
	const dups = x.msgs.filter((mm) => mm.id === 'dup');
	ok(dups.some((d) => d.error && d.error.code === -32600) && dups.some((d) => d.result), 'a second request with the id of a call in flight: -32600', dups);

	// more calls in flight than the limit (256): the rest get -32000 at once
	const tag = `30.${process.pid % 100000}3`;
	let lines = '';
	for (let i = 0; i < 270; i++)
		lines += JSON.stringify({ jsonrpc: '2.0', id: `fl${i}`, method: 'tools/call', params: { name: 'bash', arguments: { command: `sleep ${tag}` } } }) + '\n';
	x.write(lines);
	const busy = await x.count((mm) => mm.error && mm.error.code === -32000, 14, 20000);
	ok(busy === 14, 'calls beyond 256 in flight: -32000 each, at once', busy);
	const pp = await req({ method: 'ping' });
	ok(pp && pp.result, 'ping answered with 256 calls in flight');
	ok(await waitFor(() => pgrep(`sleep ${tag}`).length > 0, 15000), 'some of them run');
	const exit = await x.close();
	ok(exit.code === 0, 'end of input: exit 0 with calls in flight', exit);
	ok(await waitFor(() => pgrep(`sleep ${tag}`).length === 0, 20000), 'end of input: none of their sleeps is left', pgrep(`sleep ${tag}`));
	const queued = x.msgs.filter((mm) => typeof mm.id === 'string' && mm.id.startsWith('fl') && mm.error && mm.error.code === -32603);
	ok(queued.length > 0 && /stopping/.test(queued[0].error.message), 'queued calls are answered: the server is stopping', queued[0]);

	// invalid arguments through the SDK: tool results with isError
	const c = await connect(w);
	await c.client.listTools();
	const bad = {
		'a missing required argument': ['read_file', {}, /path/],
		'an unknown argument': ['read_file', { path: 'x', colour: 'red' }, /colour/],
		'a wrong type': ['read_file', { path: 42 }, /path/],
		'a negative limit': ['read_file', { path: 'x', limit: -1 }, /limit/],
		'bash without command': ['bash', { cmd: 'ls' }, /command/],
		'bash timeout over the maximum': ['bash', { command: 'true', timeout: 99999 }, /timeout/],
		'edit_file without old_string': ['edit_file', { path: 'x', new_string: 'y' }, /old_string/],
	};
	for (const [what, [name, args, re]] of Object.entries(bad)) {
		const r = await c.client.callTool({ name, arguments: args });
		ok(r.isError === true && re.test(text(r)), `${what}: isError with a message naming it`, text(r));
	}
	let threw = null;
	try {
		await c.client.callTool({ name: 'no_such_tool', arguments: {} });
	} catch (e) {
		threw = e;
	}
	ok(threw && threw.code === types.ErrorCode.InvalidParams, 'an unknown tool through the SDK: McpError -32602', threw && threw.message);
	await c.close();
	w.cleanup();
});
