// An encrypted directory (fscrypt) in the workspace unlocked between the
// arming of the next call's sandbox and the call: its real names come back
// with no inotify event and no change of its times, so neither the armed
// sandbox's watch nor a record of the workspace scan may stand for it. The
// call must not print the secret inside. Needs root, mkfs.ext4, a loop
// device and fscrypt (tests/helpers/fscrypt_key.c, MOAT_FSCRYPT_KEY);
// otherwise it skips.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { main, ok, note, world, connect, sleep, armedPid } from './lib.mjs';

await main(async () => {
	const KEY = process.env.MOAT_FSCRYPT_KEY;
	const base = fs.mkdtempSync(path.join('/var/tmp', 'moat-armed-fscrypt-'));
	const mnt = path.join(base, 'mnt');
	let mounted = false;
	const undo = () => {
		if (mounted)
			try {
				execFileSync('umount', [mnt]);
			} catch {
				/* busy: left for the reboot */
			}
		fs.rmSync(base, { recursive: true, force: true });
	};
	try {
		if (process.getuid() !== 0 || !KEY || !fs.existsSync(KEY))
			throw new Error('needs root and MOAT_FSCRYPT_KEY');
		execFileSync('truncate', ['-s', '64M', path.join(base, 'img')]);
		execFileSync('mkfs.ext4', ['-q', '-O', 'encrypt', '-F', path.join(base, 'img')], { stdio: 'ignore' });
		fs.mkdirSync(mnt);
		execFileSync('mount', ['-o', 'loop', path.join(base, 'img'), mnt], { stdio: 'ignore' });
		mounted = true;
		fs.mkdirSync(path.join(mnt, 'probe'));
		execFileSync(KEY, ['setpolicy', path.join(mnt, 'probe')], { stdio: 'ignore' });
	} catch (e) {
		// (MOAT_MUST_WORK=1, as in CI: a skip is a failure)
		const why = `an encrypted directory cannot be made here (${e.message.split('\n')[0]})`;
		if (process.env.MOAT_MUST_WORK === '1')
			ok(false, why);
		else
			ok(true, `# SKIP ${why}`);
		undo();
		return;
	}
	process.env.TMPDIR = mnt;
	const w = world('armedfscrypt', {
		sandbox: { mode: 'linux', rules: [{ tool: 'bash', profile: 'workspace-write-no-network' }] },
	});
	const ws = (...p) => path.join(w.ws, ...p);
	const vault = ws('vault');
	fs.mkdirSync(ws('.git'));
	fs.writeFileSync(ws('.env'), 'env-canary\n');
	fs.mkdirSync(vault);
	execFileSync(KEY, ['setpolicy', vault]);
	fs.writeFileSync(path.join(vault, '.env'), 'vault-canary\n');
	execFileSync(KEY, ['lock', vault]);
	ok(!fs.readdirSync(vault).includes('.env'), 'locked, the directory lists encoded names');
	fs.writeFileSync(ws('show.sh'), 'cat vault/.env 2>&1; echo done\n');
	const c = await connect(w);
	const bash = async (command) => {
		const r = await c.client.callTool({ name: 'bash', arguments: { command } });
		return { r, out: JSON.stringify(r) };
	};
	for (const [what, wait] of [['older than the scan record\'s trust', 3000], ['just made', 0]]) {
		await bash('true');
		await sleep(wait);
		await bash('true'); // the next sandbox is armed after this call
		// an encrypted directory lists other names once its key is added,
		// with no event: no watch can stand for it, so nothing is armed
		// (the arming gives up as soon as its watch is spoiled)
		await sleep(1500);
		ok(armedPid(ws('.env')) === null, `nothing armed while a locked directory is in the workspace (${what})`);
		execFileSync(KEY, ['unlock', vault]);
		const { r, out } = await bash('sh show.sh');
		ok(r.structuredContent && r.structuredContent.stdout.includes('done') && !out.includes('vault-canary'),
			`a secret in a directory unlocked after the arming is masked in the call (${what})`, out);
		execFileSync(KEY, ['lock', vault]);
	}
	await c.close();
	w.cleanup();
	undo();
});
