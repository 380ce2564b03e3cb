// The audit log holds exactly one line per tools/call that reached moat,
// whatever its outcome (success, tool failure, policy denial, approval
// denial, invalid arguments), in order for sequential calls, each a
// complete JSON record; protocol errors (unknown tool, malformed request)
// are not tool calls and leave no line.
import fs from 'node:fs';
import path from 'node:path';
import { main, ok, world, connect, auditLines, raw } from './lib.mjs';

await main(async () => {
	const w = world('audit', { require_approval_for_writes: true });
	fs.writeFileSync(path.join(w.ws, 'a.txt'), 'a\n');
	fs.writeFileSync(path.join(w.ws, '.env'), 'API_KEY=sk-live-SECRETSECRETSECRET\n');
	const c = await connect(w);
	const calls = [
		['read_file', { path: 'a.txt' }, 'allow'],
		['read_file', { path: 'missing.txt' }, 'allow'],
		['read_file', { path: '.env' }, 'deny'],
		['write_file', { path: 'b.txt', content: 'b' }, 'deny'], // asks; no elicitation
		['read_file', { nope: 1 }, 'deny'],
		['bash', { command: 'echo hi' }, 'allow'],
		['bash', { command: 'exit 2' }, 'allow'],
		['bash', { command: 'rm -rf /' }, 'deny'],
		['list_directory', { path: '.' }, 'allow'],
		['run_shell_command', { command: 'echo API_KEY=sk-live-SECRETSECRETSECRET' }, 'allow'],
	];
	for (const [name, args] of calls)
		await c.client.callTool({ name, arguments: args });
	try {
		await c.client.callTool({ name: 'not_a_tool', arguments: {} });
	} catch {
		/* -32602: not a tool call */
	}
	await c.close();
	const x = raw(w);
	await x.initialize();
	x.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":\n');
	x.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: {} } });
	await x.reply(2);
	await x.close();

	const lines = auditLines(w);
	ok(lines.length === calls.length, `exactly one audit line per call (${calls.length})`, lines.length);
	let recs = [];
	try {
		recs = lines.map((l) => JSON.parse(l));
		ok(true, 'every line is one complete JSON object');
	} catch (e) {
		ok(false, 'every line is one complete JSON object', e.message);
	}
	const same = (t, n) => t === n || (n === 'run_shell_command' && t === 'bash');
	ok(recs.length === calls.length && recs.every((r, i) => same(r.tool, calls[i][0])), 'the lines are the calls, in order', recs.map((r) => r.tool));
	ok(recs.every((r, i) => r.final === calls[i][2]), 'each records the final decision', recs.map((r) => r.final));
	ok(recs.every((r) => r.source === 'mcp' && r.call_id && r.time && r.decision && r.decision.rule), 'each names source, call id, time, decision and rule');
	ok(new Set(recs.map((r) => r.call_id)).size === recs.length, 'call ids are distinct');
	ok(!lines.join('\n').includes('SECRETSECRETSECRET'), 'no secret in the audit log (redacted)');
	const ws = recs[3];
	ok(ws && ws.approval && ws.approval.by === 'elicitation' && ws.final === 'deny', 'the unasked write records the elicitation approver and the denial', ws);
	w.cleanup();
});
