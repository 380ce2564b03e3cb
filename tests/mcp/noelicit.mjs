// A client without the elicitation capability: a call that needs approval
// is denied with a message saying why and how to pre-approve, nothing is
// written, and a pre-approval from the configuration still lets its calls
// through without asking. A client declaring only URL-mode elicitation
// cannot answer a form either.
import fs from 'node:fs';
import path from 'node:path';
import { main, ok, world, connect, text, auditRecords, raw } from './lib.mjs';

await main(async () => {
	const w = world('noelicit', {
		require_approval_for_writes: true,
		approvals: [{ tool: 'write_file', arg: 'path', match: 'pre/*' }],
	});
	fs.mkdirSync(path.join(w.ws, 'pre'));
	const c = await connect(w);
	await c.client.listTools();
	let r = await c.client.callTool({ name: 'write_file', arguments: { path: 'asked.txt', content: 'x' } });
	const t = text(r);
	ok(r.isError && !fs.existsSync(path.join(w.ws, 'asked.txt')), 'a write that needs approval is denied, nothing written', t);
	ok(/elicitation/.test(t) && /approvals/.test(t), 'the denial says the client cannot be asked and how to pre-approve', t);
	r = await c.client.callTool({ name: 'write_file', arguments: { path: 'pre/ok.txt', content: 'pre\n' } });
	ok(!r.isError && fs.readFileSync(path.join(w.ws, 'pre/ok.txt'), 'utf8') === 'pre\n', 'a pre-approved write goes through without asking', text(r));
	r = await c.client.callTool({ name: 'read_file', arguments: { path: 'pre/ok.txt' } });
	ok(!r.isError, 'reads need no approval');
	await c.close();
	const rec = auditRecords(w).find((x) => x.args && x.args.path === 'asked.txt');
	ok(rec && rec.final === 'deny', 'the denied call is in the audit log', rec);

	// elicitation: {url: {}} only: no form mode, so no asking either
	const x = raw(w);
	await x.initialize('2025-11-25', { elicitation: { url: {} } });
	x.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'write_file', arguments: { path: 'url.txt', content: 'x' } } });
	const rep = await x.reply(7);
	ok(rep && rep.result && rep.result.isError && !x.msgs.some((m) => m.method === 'elicitation/create') &&
		!fs.existsSync(path.join(w.ws, 'url.txt')), 'a URL-mode-only client is not sent a form; denied', rep);
	await x.close();
	w.cleanup();
});
