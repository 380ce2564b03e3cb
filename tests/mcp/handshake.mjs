// The handshake and the listing through the official SDK client:
// initialize (versions negotiated), ping, tools/list with five tools whose
// input and output schemas compile, logging/setLevel and log messages.
import fs from 'node:fs';
import path from 'node:path';
import { main, ok, world, connect, raw, Ajv, types } from './lib.mjs';

const NAMES = ['read_file', 'write_file', 'edit_file', 'list_directory', 'bash'];

await main(async () => {
	const w = world('handshake');
	const c = await connect(w);

	const info = c.client.getServerVersion();
	ok(info && info.name === 'moat' && typeof info.version === 'string', 'serverInfo names moat and its version', info);
	const caps = c.client.getServerCapabilities();
	ok(caps && caps.tools && caps.tools.listChanged === false, 'capabilities.tools.listChanged is false', caps);
	ok(caps && caps.logging && typeof caps.logging === 'object', 'capabilities.logging is declared', caps);
	const instr = c.client.getInstructions();
	ok(typeof instr === 'string' && instr.includes(w.ws), 'instructions name the workspace', instr);

	const pong = await c.client.ping();
	ok(pong && Object.keys(pong).length === 0, 'ping answers {}', pong);

	const list = await c.client.listTools();
	const names = list.tools.map((t) => t.name);
	ok(names.length === 5 && NAMES.every((x) => names.includes(x)), 'tools/list has the five tools', names);
	ok(list.nextCursor === undefined, 'one page: no nextCursor');
	const ajv = new Ajv({ strict: false, allErrors: true });
	for (const t of list.tools) {
		ok(typeof t.description === 'string' && t.description.length > 80, `${t.name}: a description a model can use`);
		let inOk = false, outOk = false, err;
		try {
			ajv.compile(t.inputSchema);
			inOk = t.inputSchema.type === 'object';
		} catch (e) {
			err = e.message;
		}
		ok(inOk, `${t.name}: inputSchema compiles as an object schema`, err);
		try {
			ajv.compile(t.outputSchema);
			outOk = t.outputSchema.type === 'object';
		} catch (e) {
			err = e.message;
		}
		ok(outOk, `${t.name}: outputSchema compiles as an object schema`, err);
		ok(t.annotations && typeof t.annotations.readOnlyHint === 'boolean', `${t.name}: annotations`);
	}
	const rf = list.tools.find((t) => t.name === 'read_file');
	ok(rf && rf.inputSchema.required.includes('path') && rf.inputSchema.additionalProperties === false,
		'read_file: path required, no other keys', rf && rf.inputSchema);
	const bash = list.tools.find((t) => t.name === 'bash');
	ok(bash && bash.inputSchema.properties.command && bash.inputSchema.properties.timeout,
		'bash: command and timeout described');
	ok(rf && rf.annotations.readOnlyHint === true && bash && bash.annotations.destructiveHint === true,
		'read_file is read-only, bash is destructive (hints)');

	// logging: nothing before setLevel, messages after
	const logs = [];
	c.client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => logs.push(n.params));
	const sl = await c.client.setLoggingLevel('debug');
	ok(sl && Object.keys(sl).length === 0, 'logging/setLevel answers {}', sl);
	await c.client.callTool({ name: 'list_directory', arguments: { path: '.' } });
	await c.client.ping(); // a round trip: the log line came before this reply
	ok(logs.length >= 1 && logs[0].logger === 'moat' && /list_directory/.test(JSON.stringify(logs[0].data)),
		'a call logs a notifications/message at level debug', logs);
	await c.client.setLoggingLevel('error');
	const before = logs.length;
	await c.client.callTool({ name: 'list_directory', arguments: { path: '.' } });
	await c.client.ping();
	ok(logs.length === before, 'level error filters an ordinary call out', logs.slice(before));
	await c.close();

	// protocol revisions: the client's when supported, else the latest
	const r = raw(w);
	for (const v of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01']) {
		r.send({ jsonrpc: '2.0', id: `v${v}`, method: 'initialize', params: { protocolVersion: v, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
		const rep = await r.reply(`v${v}`);
		const want = v === '1999-01-01' ? '2025-11-25' : v;
		if (v === '2025-11-25')
			ok(rep && rep.result && rep.result.protocolVersion === want, `initialize ${v} -> ${want}`, rep);
		else
			ok(rep && rep.error && rep.error.code === -32600, `a second initialize (${v}) is refused`, rep);
	}
	await r.close();
	// the lifecycle: nothing but ping before initialize (a tool call there
	// would run before the client said what it can answer)
	{
		const x = raw(w);
		x.send({ jsonrpc: '2.0', id: 'pre1', method: 'tools/call', params: { name: 'bash', arguments: { command: 'touch PRE_INIT' } } });
		x.send({ jsonrpc: '2.0', id: 'pre2', method: 'tools/list' });
		x.send({ jsonrpc: '2.0', id: 'pre3', method: 'ping' });
		const a = await x.reply('pre1'), b = await x.reply('pre2'), c3 = await x.reply('pre3');
		ok(a && a.error && a.error.code === -32600 && /initialize/.test(a.error.message),
			'a tools/call before initialize is refused (-32600)', a);
		ok(b && b.error && b.error.code === -32600, 'tools/list before initialize is refused', b);
		ok(c3 && c3.result && Object.keys(c3.result).length === 0, 'ping before initialize is answered', c3);
		const rep = await x.initialize('2025-11-25');
		ok(rep && rep.result, 'initialize after them works', rep);
		await x.close();
		ok(!fs.existsSync(path.join(w.ws, 'PRE_INIT')), 'the command sent before initialize did not run (seen from outside)');
	}
	for (const v of ['2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01']) {
		const x = raw(w);
		const rep = await x.initialize(v);
		const want = v === '1999-01-01' ? '2025-11-25' : v;
		ok(rep && rep.result && rep.result.protocolVersion === want, `initialize ${v} -> ${want}`, rep);
		x.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
		const tl = await x.reply(2);
		const hasOut = tl && tl.result && tl.result.tools.every((t) => t.outputSchema);
		const noOut = tl && tl.result && tl.result.tools.every((t) => !t.outputSchema);
		ok(want >= '2025-06-18' ? hasOut : noOut,
			`${want}: outputSchema ${want >= '2025-06-18' ? 'present' : 'absent (not in this revision)'}`);
		await x.close();
	}
	w.cleanup();
});
