// The sandbox armed ahead of a bash call (src/sandbox/runner.c, arm_only):
// between two calls of a session, moat makes the next call's sandbox whole
// (namespaces, mounts, Landlock, seccomp) and leaves it waiting before the
// exec. What changed in between must reach the call as if its sandbox were
// made at the call: a secret file replaced (a new inode: the mask on the
// old one no longer covers the path), a new secret in the workspace or in
// the home directory, the call's directory and timeout, a fresh /tmp.
// Judged by the bytes the command prints and by the process table: the
// armed sandbox is seen from outside (a waiting process whose mount table
// already masks the workspace's secret) before each check that needs it.
import fs from 'node:fs';
import path from 'node:path';
import { main, ok, note, world, connect, waitFor, sleep, text, asNobody, armedPid, arms, waitArmed } from './lib.mjs';

async function scenario(who, profile) {
	const okw = (c, d, diag) => ok(c, `${who}, ${profile || 'the default profile (network allowed)'}: ${d}`, diag);
	const w = world(`armed-${who}-${profile ? "nonet" : "net"}`, {
		sandbox: profile ? { mode: 'linux', rules: [{ tool: 'bash', profile }] } : { mode: 'linux' },
	});
	fs.mkdirSync(path.join(w.ws, '.git'));
	fs.mkdirSync(path.join(w.ws, 'sub'));
	const env = path.join(w.ws, '.env');
	fs.writeFileSync(env, 'env-canary-1\n');
	// the commands read the secrets through a script: named on the command
	// line, the policy would stop them before any sandbox (denied paths)
	fs.writeFileSync(path.join(w.ws, 'show.sh'),
		'cat .env sub/credentials.json "$HOME/.aws/credentials" 2>&1; echo done\n');
	if (who === 'nobody')
		asNobody(w);
	const c = await connect(w);
	const bash = async (args) => {
		const r = await c.client.callTool({ name: 'bash', arguments: args });
		return { r, out: JSON.stringify(r) };
	};
	const armed = async (what) => {
		const seen = await waitArmed(env);
		if (arms)
			okw(seen, `an armed sandbox waits before the call (${what}), seen from outside`);
		else
			note(`sanitizer build: no armed sandbox expected (${what}); seen: ${seen}`);
	};

	let { r, out } = await bash({ command: 'sh show.sh' });
	okw(!r.isError && r.structuredContent.stdout.includes('done') && !out.includes('env-canary-1'),
		'first call: the workspace secret is masked', out);

	// 1. the secret replaced by a rename (an editor's save): a new inode
	await armed('before the secret is replaced');
	fs.writeFileSync(env + '.new', 'env-canary-2\n');
	fs.renameSync(env + '.new', env);
	({ r, out } = await bash({ command: 'sh show.sh' }));
	okw(r.structuredContent && r.structuredContent.stdout.includes('done') && !out.includes('env-canary-2'),
		'a secret replaced after the arming is masked in the call', out);

	// 1b. the same file linked back under its name (a new directory entry
	// for the same inode: the mask was on the old entry)
	await armed('before the secret is linked back');
	fs.linkSync(env, path.join(w.root, 'env-link'));
	fs.unlinkSync(env);
	fs.linkSync(path.join(w.root, 'env-link'), env);
	({ r, out } = await bash({ command: 'sh show.sh' }));
	okw(r.structuredContent && r.structuredContent.stdout.includes('done') && !out.includes('env-canary-2'),
		'a secret unlinked and linked back after the arming is masked in the call', out);

	// 2. a new secret in the workspace
	await armed('before a new workspace secret');
	fs.writeFileSync(path.join(w.ws, 'sub', 'credentials.json'), 'cred-canary\n');
	({ r, out } = await bash({ command: 'sh show.sh' }));
	okw(r.structuredContent && r.structuredContent.stdout.includes('done') && !out.includes('cred-canary'),
		'a secret created in the workspace after the arming is masked', out);

	// 3. a new secret in the home directory
	await armed('before a new home secret');
	fs.mkdirSync(path.join(w.home, '.aws'), { recursive: true });
	fs.writeFileSync(path.join(w.home, '.aws', 'credentials'), 'aws-canary\n');
	({ r, out } = await bash({ command: 'sh ../show.sh', cwd: 'sub' }));
	okw(r.structuredContent && r.structuredContent.stdout.includes('done') && !out.includes('aws-canary'),
		'a home secret created after the arming is masked', out);

	// 4. the call's own directory, a fresh /tmp, the call's timeout
	await armed('before a call in a subdirectory');
	({ r } = await bash({ command: 'pwd; echo x >/tmp/moat-armed-mark', cwd: 'sub' }));
	okw(!r.isError && r.structuredContent.stdout.trim() === path.join(w.ws, 'sub'),
		'an armed sandbox runs in the call\'s directory', r);
	await armed('before /tmp is looked at');
	({ r } = await bash({ command: 'cat /tmp/moat-armed-mark 2>/dev/null || echo fresh' }));
	okw(!r.isError && r.structuredContent.stdout.trim() === 'fresh',
		'the armed sandbox has a /tmp of its own (nothing of the last call\'s)', r);
	await armed('before a call with a timeout');
	const t0 = Date.now();
	({ r } = await bash({ command: 'sleep 20', timeout: 1 }));
	okw(r.isError && /timed out after 1 s/.test(text(r)) && Date.now() - t0 < 10000,
		'an armed sandbox keeps the call\'s timeout', r);

	// the network the plan asks for: the host's (the default profile), or
	// a namespace of its own
	await armed('before the network is looked at');
	({ r } = await bash({ command: 'readlink /proc/self/ns/net' }));
	{
		const host = fs.readlinkSync('/proc/self/ns/net');
		const inside = !r.isError && r.structuredContent.stdout.trim();

		okw(profile ? inside && inside !== host : inside === host,
			`an armed sandbox has the plan's network (${profile ? 'a namespace of its own' : 'the host\'s'})`, r);
	}

	// 5. nothing of an armed sandbox outlives the session
	await armed('before the session ends');
	await c.close();
	const gone = await waitFor(() => armedPid(env) === null, 5000, 50);
	okw(gone, 'no armed sandbox is left once the session has ended (process table)');
	await sleep(100);
	w.cleanup();
}

// as root, then as the unprivileged user
await main(async () => {
	for (const who of ['root', 'nobody'])
		await scenario(who, 'workspace-write-no-network');
	await scenario('root', null);
});
