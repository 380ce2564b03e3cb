// Cancellation, progress and a loop that never waits on a call, seen from
// outside: the process table (pgrep) shows the sandboxed sleep before the
// cancel and nothing after it; the audit log records the call cancelled.
// A ping is answered while a slow call runs; progress notifications arrive
// for a long call with a progress token; closing the input kills what runs.
import { main, ok, note, world, connect, text, pgrep, waitFor, auditRecords, sleep } from './lib.mjs';

await main(async () => {
	const w = world('cancel');
	const tag = `30.${process.pid % 100000}1`; // `sleep 30.<unique>`: findable by pgrep -f
	const c = await connect(w);

	// 1. notifications/cancelled kills the sandboxed process tree
	const ac = new AbortController();
	const pending = c.client.callTool({ name: 'bash', arguments: { command: `sleep ${tag} & sleep ${tag}; wait` } }, undefined, { signal: ac.signal, timeout: 60000 });
	pending.catch(() => {});
	ok(await waitFor(() => pgrep(`sleep ${tag}`).length >= 2, 15000), 'the sandboxed sleeps run (seen in the process table)', pgrep(`sleep ${tag}`));
	ac.abort('test cancels');
	let rejected = false;
	try {
		await pending;
	} catch {
		rejected = true;
	}
	ok(rejected, 'the client sees its call cancelled');
	ok(await waitFor(() => pgrep(`sleep ${tag}`).length === 0, 15000), 'after notifications/cancelled no sleep is left (process table)', pgrep(`sleep ${tag}`));
	ok(await waitFor(() => auditRecords(w).some((r) => r.tool === 'bash' && r.result && r.result.cancelled === true), 10000),
		'the audit log records the call as cancelled', auditRecords(w));
	const pong = await c.client.ping();
	ok(pong !== undefined, 'the server still answers after a cancellation');

	// 2. a slow call never blocks a ping
	let slowDone = false;
	const slow = c.client.callTool({ name: 'bash', arguments: { command: 'sleep 3' } }).then(() => {
		slowDone = true;
	});
	await sleep(300);
	await c.client.ping();
	ok(!slowDone, 'ping answered while a 3 s bash call runs');
	await c.client.listTools();
	ok(!slowDone, 'tools/list answered while it runs');
	await slow;

	// 3. progress notifications for a call with a progress token
	const prog = [];
	const r = await c.client.callTool({ name: 'bash', arguments: { command: 'echo start; sleep 3; echo end' } }, undefined, {
		onprogress: (p) => prog.push(p),
		timeout: 60000,
	});
	note(`progress: ${JSON.stringify(prog)}`);
	ok(!r.isError && text(r).includes('end'), 'the long call completes');
	ok(prog.length >= 1, 'notifications/progress arrive during a long call', prog);
	ok(prog.every((p, i) => i === 0 || p.progress > prog[i - 1].progress), 'progress increases', prog);

	// 4. closing the input cancels what runs, and moat exits
	const tag2 = `30.${process.pid % 100000}2`;
	const c2 = await connect(w);
	const p2 = c2.client.callTool({ name: 'bash', arguments: { command: `sleep ${tag2}` } }, undefined, { timeout: 60000 });
	p2.catch(() => {});
	ok(await waitFor(() => pgrep(`sleep ${tag2}`).length >= 1, 15000), 'a second sleep runs');
	const pid = c2.pid;
	await c2.close();
	ok(await waitFor(() => pgrep(`sleep ${tag2}`).length === 0, 15000), 'end of input: the sleep is killed', pgrep(`sleep ${tag2}`));
	ok(await waitFor(() => {
		try {
			process.kill(pid, 0);
			return false;
		} catch {
			return true;
		}
	}, 15000), 'end of input: moat mcp exits');

	await c.close();
	w.cleanup();
});
