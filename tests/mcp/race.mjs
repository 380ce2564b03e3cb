// The symlink-swap race of the reference filesystem server: a link in the
// workspace flips between a file inside and a canary outside (atomic
// rename, as fast as it can) while the SDK client reads and writes through
// it, 16 calls at a time. Zero leaks: no reply holds the canary's bytes and
// the canary is never changed. The race must really happen: both outcomes
// (read inside, refused) are seen.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { main, ok, note, world, connect, text } from './lib.mjs';

const READS = Number(process.env.MOAT_RACE_READS || 1500);
const WRITES = Number(process.env.MOAT_RACE_WRITES || 300);

async function pool(n, k, fn) {
	let next = 0;
	await Promise.all(Array.from({ length: k }, async () => {
		while (next < n)
			await fn(next++);
	}));
}

await main(async () => {
	const w = world('race');
	const inside = path.join(w.ws, 'inside.txt');
	const canary = path.join(w.outside, 'canary');
	const link = path.join(w.ws, 'link');
	fs.writeFileSync(inside, 'inside-content\n');
	fs.symlinkSync(inside, link);
	const swapper = spawn(process.execPath, ['-e', `
		const fs = require('fs');
		const [link, a, b] = process.argv.slice(1);
		const tmp = link + '.tmp';
		const end = Date.now() + 120000;
		for (let i = 0; Date.now() < end; i++) {
			try { fs.unlinkSync(tmp); } catch {}
			fs.symlinkSync(i % 2 ? a : b, tmp);
			fs.renameSync(tmp, link);
		}`, link, inside, canary], { stdio: 'ignore' });

	const c = await connect(w);
	try {
		let leaks = 0, insideOk = 0, refused = 0;
		await pool(READS, 16, async () => {
			const r = await c.client.callTool({ name: 'read_file', arguments: { path: 'link', raw: true } });
			const s = JSON.stringify(r);
			if (s.includes('canary-content'))
				leaks++;
			else if (!r.isError && text(r) === 'inside-content\n')
				insideOk++;
			else
				refused++;
		});
		note(`reads: ${insideOk} inside, ${refused} refused, ${leaks} leaked`);
		ok(leaks === 0, `read_file through a swapping symlink: zero leaks in ${READS} reads`, { leaks, insideOk, refused });
		ok(insideOk > 0 && refused > 0, 'the race happened (reads both succeeded and were refused)', { insideOk, refused });

		let wrote = 0;
		await pool(WRITES, 16, async (i) => {
			const r = await c.client.callTool({ name: 'write_file', arguments: { path: 'link', content: `w${i}\n` } });
			if (!r.isError)
				wrote++;
		});
		ok(fs.readFileSync(canary, 'utf8') === 'canary-content\n', `write_file through a swapping symlink: the outside canary unchanged after ${WRITES} writes (${wrote} succeeded)`);
		ok(fs.readdirSync(w.outside).join() === 'canary', 'nothing created outside');
	} finally {
		swapper.kill('SIGKILL');
		await c.close();
		w.cleanup();
	}
});
