// 200 calls in flight at once through one SDK client: every one answered,
// each with its own file's content (replies come back in any order and are
// matched by id), bash calls mixed in; the audit log holds one line each.
// Then the same pipelined over a raw connection: ids echoed exactly.
import fs from 'node:fs';
import path from 'node:path';
import { main, ok, note, world, connect, text, auditRecords, raw, sleep } from './lib.mjs';

const N = 200;
// The bash calls run under ASan too: the server's worker threads never
// fork; the bash tool's fork server, forked before them, forks the runners.
const BASH_MIX = true;

await main(async () => {
	const w = world('concurrent');
	for (let i = 0; i < N; i++)
		fs.writeFileSync(path.join(w.ws, `f${i}.txt`), `content-${i}-${'x'.repeat(i)}\n`);
	const c = await connect(w);
	await c.client.listTools();
	const calls = [];
	for (let i = 0; i < N; i++) {
		if (BASH_MIX && i % 20 === 7)
			calls.push(c.client.callTool({ name: 'bash', arguments: { command: `echo bash-${i}` } }, undefined, { timeout: 120000 }));
		else
			calls.push(c.client.callTool({ name: 'read_file', arguments: { path: `f${i}.txt`, raw: true } }, undefined, { timeout: 120000 }));
	}
	const res = await Promise.allSettled(calls);
	let right = 0;
	const wrong = [];
	res.forEach((r, i) => {
		const want = BASH_MIX && i % 20 === 7 ? `bash-${i}\n` : `content-${i}-${'x'.repeat(i)}\n`;
		if (r.status === 'fulfilled' && !r.value.isError && text(r.value) === want)
			right++;
		else
			wrong.push({ i, r: r.status === 'fulfilled' ? text(r.value).slice(0, 200) : String(r.reason) });
	});
	if (!BASH_MIX)
		note('ASan build: no bash calls in the concurrent mix (see the comment at the top)');
	ok(right === N, `${N} concurrent calls all answered correctly`, wrong.slice(0, 5));

	// After calls back to back the loop polls a moment for the next one
	// (the spin of src/mcp/server.c); idle, it must sleep. Its CPU time,
	// read from /proc, must not grow over a second without requests.
	for (let i = 0; i < 300; i++)
		await c.client.callTool({ name: 'read_file', arguments: { path: 'f1.txt', raw: true } });
	await sleep(200);
	const ticks = () => {
		const f = fs.readFileSync(`/proc/${c.pid}/stat`, 'utf8').split(') ')[1].split(' ');
		return Number(f[11]) + Number(f[12]);
	};
	const t0 = ticks();
	await sleep(1000);
	const used = ticks() - t0;
	ok(used <= 2, 'an idle server sleeps after calls back to back (CPU time over 1 s idle: at most 2 clock ticks)', { ticks: used });
	await c.close();
	const recs = auditRecords(w);
	ok(recs.length === N + 300, `the audit log holds ${N + 300} lines`, recs.length);
	ok(new Set(recs.map((r) => r.call_id)).size === N + 300, 'with distinct call ids');

	// raw pipelining: every request written before any reply is read
	const x = raw(w);
	await x.initialize();
	const ids = [];
	let batch = '';
	for (let i = 0; i < N; i++) {
		const id = i % 2 ? `s-${i}` : i * 1000;
		ids.push(id);
		batch += JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_file', arguments: { path: `f${i}.txt`, raw: true } } }) + '\n';
	}
	x.write(batch);
	const got = await x.count((m) => m.result && m.id !== 'init', N, 60000);
	const okIds = ids.filter((id, i) => {
		const m = x.msgs.find((mm) => mm.id === id);
		return m && m.result && m.result.content[0].text === `content-${i}-${'x'.repeat(i)}\n`;
	});
	ok(got === N && okIds.length === N, `${N} pipelined requests: each id answered once with its own result`, { got, matched: okIds.length });
	await x.close();
	w.cleanup();
});
