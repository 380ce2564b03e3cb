// The sandbox armed ahead of a bash call, against changes made between the
// arming and the call in the places its mounts were prepared from (a watch
// on them lets an unchanged sandbox be taken without preparing it again;
// any change there must make the call's sandbox as it would be made now).
// Each case: wait until the armed sandbox is seen waiting (process table),
// change the filesystem the way a user or a tool would, call, and judge by
// the bytes printed and the files on disk. Last, directories renamed in a
// loop while the calls are prepared.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { main, ok, note, world, connect, waitFor, sleep, text, asNobody, armedPid, arms, waitArmed } from './lib.mjs';

async function scenario(who) {
	const okw = (c, d, diag) => ok(c, `${who}: ${d}`, diag);
	const w = world(`armedchg-${who}`, {
		sandbox: { mode: 'linux', rules: [{ tool: 'bash', profile: 'workspace-write-no-network' }] },
	});
	const ws = (...p) => path.join(w.ws, ...p);
	fs.mkdirSync(ws('.git'));
	fs.writeFileSync(ws('.git', 'config'), '[core]\n\tbare = false\n');
	fs.mkdirSync(ws('src', 'deep'), { recursive: true });
	fs.mkdirSync(ws('node_modules', 'pkg', 'lib'), { recursive: true });
	fs.writeFileSync(ws('node_modules', 'pkg', 'lib', 'index.js'), '\n');
	fs.writeFileSync(ws('.env'), 'env-canary\n'); // masked from the start: the armed sandbox is seen by it
	// under the home directory, which the sandbox sees (through its copy-on-write overlay)
	const data = path.join(w.home, 'data');
	fs.mkdirSync(path.join(data, 'one'), { recursive: true });
	fs.mkdirSync(path.join(data, 'two'), { recursive: true });
	fs.writeFileSync(path.join(data, 'two', 'credentials'), 'aws-two-canary\n');
	// ~/.aws leads to data/one (no credentials there yet)
	fs.symlinkSync(path.join(data, 'one'), path.join(w.home, '.aws'));
	// ~/.docker -> ~/links/cur -> ~/docker-one (no config.json there);
	// docker-two has one
	fs.mkdirSync(path.join(w.home, 'docker-one'));
	fs.mkdirSync(path.join(w.home, 'docker-two'));
	fs.writeFileSync(path.join(w.home, 'docker-two', 'config.json'), 'chain-canary\n');
	fs.mkdirSync(path.join(w.home, 'links'));
	fs.symlinkSync(path.join(w.home, 'docker-one'), path.join(w.home, 'links', 'cur'));
	fs.symlinkSync(path.join(w.home, 'links', 'cur'), path.join(w.home, '.docker'));
	// an ordinary directory with nothing that matters in it
	fs.mkdirSync(ws('conf'));
	fs.writeFileSync(ws('conf', 'app.json'), '{}\n');
	// ~/.config leads to cfg (no gcloud there)
	fs.rmSync(path.join(w.home, '.config'), { recursive: true, force: true });
	fs.mkdirSync(path.join(w.home, 'cfg'));
	fs.symlinkSync(path.join(w.home, 'cfg'), path.join(w.home, '.config'));
	// the command prints every file named on its lines that it can read
	fs.writeFileSync(ws('show.sh'), 'while read -r f; do cat "$f" 2>/dev/null; done <files; echo done\n');
	if (who === 'nobody')
		asNobody(w);
	const c = await connect(w);
	const bash = async (command) => {
		const r = await c.client.callTool({ name: 'bash', arguments: { command } });
		return { r, out: JSON.stringify(r) };
	};
	const armed = async (what) => {
		const seen = await waitArmed(ws('.env'));
		if (arms)
			okw(seen, `armed before: ${what}`);
		else
			note(`sanitizer build: nothing armed (${what})`);
	};
	const leaks = async (what, files, canary, change) => {
		fs.writeFileSync(ws('files'), files.join('\n') + '\n');
		await bash('true'); // the next sandbox is armed after this call
		await armed(what);
		change();
		const { r, out } = await bash('sh show.sh');
		okw(!r.isError && r.structuredContent.stdout.includes('done') && !out.includes(canary),
			`${what}: not readable in the call`, out);
	};

	let { r } = await bash('echo start');
	okw(!r.isError, 'a first call runs', r);

	// directories older than the scan's trust (2 s) that hold nothing that
	// matters are not even opened by the scan: watched whole all the same
	await sleep(3000);
	await leaks('a secret in an old directory holding nothing that mattered', [ws('conf', '.env')], 'leaf-canary', () => {
		fs.writeFileSync(ws('conf', '.env'), 'leaf-canary\n');
	});
	// a link that leads through another link: the inner one retargeted
	await leaks('a link through a link, the inner one retargeted', [path.join(w.home, '.docker', 'config.json')], 'chain-canary', () => {
		fs.unlinkSync(path.join(w.home, 'links', 'cur'));
		fs.symlinkSync(path.join(w.home, 'docker-two'), path.join(w.home, 'links', 'cur'));
	});

	await leaks('a secret in a directory created after the arming', [ws('new', 'dir', '.env')], 'nested-canary', () => {
		fs.mkdirSync(ws('new', 'dir'), { recursive: true });
		fs.writeFileSync(ws('new', 'dir', '.env'), 'nested-canary\n');
	});
	await leaks('a secret in an existing deep directory', [ws('src', 'deep', 'id_rsa')], 'deep-canary', () => {
		fs.writeFileSync(ws('src', 'deep', 'id_rsa'), 'deep-canary\n');
	});
	await leaks('a secret in node_modules', [ws('node_modules', 'pkg', 'lib', '.env')], 'nm-canary', () => {
		fs.writeFileSync(ws('node_modules', 'pkg', 'lib', '.env'), 'nm-canary\n');
	});
	await leaks('a secret in .git', [ws('.git', 'server.key')], 'git-key-canary', () => {
		fs.writeFileSync(ws('.git', 'server.key'), 'git-key-canary\n');
	});
	await leaks('a secret moved in from outside the workspace', [ws('src', 'server.pem')], 'moved-canary', () => {
		fs.writeFileSync(path.join(w.root, 'server.pem'), 'moved-canary\n');
		fs.renameSync(path.join(w.root, 'server.pem'), ws('src', 'server.pem'));
	});
	await leaks('a directory of secrets renamed into place', [ws('src', '.ssh', 'key')], 'ssh-canary', () => {
		fs.mkdirSync(ws('src', 'tmpdir'));
		fs.writeFileSync(ws('src', 'tmpdir', 'key'), 'ssh-canary\n');
		fs.renameSync(ws('src', 'tmpdir'), ws('src', '.ssh'));
	});
	await leaks('a home secret where ~/.ssh did not exist', [path.join(w.home, '.ssh', 'id_ed25519')], 'home-ssh-canary', () => {
		fs.mkdirSync(path.join(w.home, '.ssh'));
		fs.writeFileSync(path.join(w.home, '.ssh', 'id_ed25519'), 'home-ssh-canary\n');
	});
	await leaks('a home secret behind a link (~/.aws) retargeted', [path.join(w.home, '.aws', 'credentials')], 'aws-two-canary', () => {
		fs.unlinkSync(path.join(w.home, '.aws'));
		fs.symlinkSync(path.join(data, 'two'), path.join(w.home, '.aws'));
	});
	await leaks('a secret created behind the link (~/.aws leads to it)', [path.join(w.home, '.aws', 'config.json'), path.join(w.home, '.aws', 'token')], 'aws-new-canary', () => {
		fs.writeFileSync(path.join(data, 'two', 'token'), 'aws-new-canary\n');
	});
	await leaks('the directory behind the link swapped for another', [path.join(w.home, '.aws', 'credentials')], 'aws-three-canary', () => {
		fs.renameSync(path.join(data, 'two'), path.join(data, 'two-old'));
		fs.mkdirSync(path.join(data, 'two'));
		fs.writeFileSync(path.join(data, 'two', 'credentials'), 'aws-three-canary\n');
	});

	// a secret that did not exist behind a link on the way (~/.config leads
	// to cfg): the directory it leads to replaced by one that has it
	await leaks('the directory a link on the way leads to replaced', [path.join(w.home, '.config', 'gcloud', 'credentials.db')], 'gcloud-canary', () => {
		fs.renameSync(path.join(w.home, 'cfg'), path.join(w.home, 'cfg-old'));
		fs.mkdirSync(path.join(w.home, 'cfg', 'gcloud'), { recursive: true });
		fs.writeFileSync(path.join(w.home, 'cfg', 'gcloud', 'credentials.db'), 'gcloud-canary\n');
	});

	// the swap made the moment the armed sandbox shows (its mounts are
	// made; the rest of its set-up may still be under way), ten times
	let swapLeaks = 0;
	for (let i = 0; i < 10; i++) {
		fs.writeFileSync(ws('files'), path.join(w.home, '.aws', 'credentials') + '\n');
		await bash('true');
		const seen = await waitArmed(ws('.env'), 1);
		if (!seen && arms)
			break;
		fs.renameSync(path.join(data, 'two'), path.join(data, `two-${i}`));
		fs.mkdirSync(path.join(data, 'two'));
		fs.writeFileSync(path.join(data, 'two', 'credentials'), `aws-race-canary-${i}\n`);
		const { out } = await bash('sh show.sh');
		if (out.includes('aws-race-canary'))
			swapLeaks++;
	}
	okw(swapLeaks === 0, `a directory behind a masked link swapped as the sandbox is armed: never readable (${swapLeaks} of 10)`);

	// a protected name created between the arming and the call stays
	// read-only in the call
	await bash('true');
	await armed('a protected name appears');
	fs.mkdirSync(ws('.vscode'), { recursive: true });
	fs.writeFileSync(ws('.vscode', 'tasks.json'), '{"user": true}\n');
	({ r } = await bash('echo \'{"pwned": true}\' > .vscode/tasks.json; echo x > .vscode/new.json; echo done'));
	okw(fs.readFileSync(ws('.vscode', 'tasks.json'), 'utf8') === '{"user": true}\n' && !fs.existsSync(ws('.vscode', 'new.json')),
		'a protected directory made after the arming is read-only in the call (on disk)', text(r));

	// the user's own change of .git/config between the arming and the call
	// is not taken for the command's (nothing set aside)
	await bash('true');
	await armed('.git/config changes');
	fs.writeFileSync(ws('.git', 'config'), '[core]\n\tbare = false\n[user]\n\tname = someone\n');
	({ r } = await bash('echo hi'));
	okw(!r.isError && fs.readFileSync(ws('.git', 'config'), 'utf8').includes('someone') &&
		!fs.readdirSync(ws('.git')).some((n) => n.includes('quarantined')),
		'a change the user made to .git/config before the call is left as it is', r);

	// nothing changed: the call still masks what was there
	await bash('true');
	await armed('nothing changes');
	fs.writeFileSync(ws('files'), ws('.env') + '\n');
	({ r } = await bash('sh show.sh'));
	okw(!r.isError && !JSON.stringify(r).includes('env-canary') && r.structuredContent.stdout.includes('done'),
		'with nothing changed, the secret masked at the arming stays masked', r);
	await c.close();
	w.cleanup();
}

// A call the sandbox was armed for takes the armed plan without planning
// again while nothing it was planned from changed: the home directory is
// one of those (its real path places the masks of ~/.ssh and the rest).
// HOME is a link here, retargeted between the arming and the call to a
// home with a key: planned afresh, the key is masked.
async function homeLink(who) {
	const okw = (c, d, diag) => ok(c, `${who}: ${d}`, diag);
	const w = world(`armedhome-${who}`, {
		sandbox: { mode: 'linux', rules: [{ tool: 'bash', profile: 'workspace-write-no-network' }] },
	});
	// (the second home inside the first, which the sandbox shows: planned
	// for the first, its ~/.ssh would not be masked)
	const homeA = path.join(w.root, 'homeA'), homeB = path.join(homeA, 'other');
	fs.renameSync(w.home, homeA);
	for (const d of ['.config', '.state', '.ssh'])
		fs.mkdirSync(path.join(homeB, d), { recursive: true });
	fs.writeFileSync(path.join(homeB, '.ssh', 'id_rsa'), 'home-link-canary\n');
	fs.symlinkSync(homeA, w.home);
	fs.writeFileSync(path.join(w.ws, '.env'), 'env-canary\n');
	// (the key's name in a file: a command naming it is refused by the policy)
	// (by its real path: the link itself is in the host's /tmp, which the
	// sandbox does not show)
	fs.writeFileSync(path.join(w.ws, 'keyname'), path.join(homeB, '.ssh', 'id_rsa') + '\n');
	fs.writeFileSync(path.join(w.ws, 'showkey.sh'), 'cat "$(cat keyname)" 2>/dev/null; echo done\n');
	if (who === 'nobody')
		asNobody(w);
	const c = await connect(w);
	const bash = async (command) => {
		const r = await c.client.callTool({ name: 'bash', arguments: { command } });
		return { r, out: JSON.stringify(r) };
	};
	await bash('true');
	await bash('true'); // the next sandbox is armed after this call
	if (arms)
		okw(await waitArmed(path.join(w.ws, '.env')),
			'armed before: HOME (a link) retargeted');
	fs.symlinkSync(homeB, w.home + '.new');
	fs.renameSync(w.home + '.new', w.home);
	const { r, out } = await bash('sh showkey.sh');
	okw(!r.isError && r.structuredContent.stdout.includes('done') && !out.includes('home-link-canary'),
		'HOME (a link) retargeted after the arming: the new home\'s key not readable in the call', out);
	await c.close();
	w.cleanup();
}

// A workspace of more directories than a small watch holds (3,000): the
// sandbox is armed all the same and taken by the call while what changed
// cannot change a mask (a new source file, an edit), and made again when
// it can (a secret, a directory). Which sandbox ran the call is told from
// outside: the armed process's mount namespace against the command's.
async function bigWorkspace(who) {
	const okw = (c, d, diag) => ok(c, `${who}: ${d}`, diag);
	const w = world(`armedbig-${who}`, {
		sandbox: { mode: 'linux', rules: [{ tool: 'bash', profile: 'workspace-write-no-network' }] },
	});
	const ws = (...p) => path.join(w.ws, ...p);
	for (let i = 0; i < 60; i++)
		for (let k = 0; k < 50; k++) {
			fs.mkdirSync(ws('pkgs', `p${i}`, `m${k}`), { recursive: true });
			fs.writeFileSync(ws('pkgs', `p${i}`, `m${k}`, 'index.js'), '\n');
		}
	fs.writeFileSync(ws('.env'), 'env-canary\n');
	fs.writeFileSync(ws('show.sh'), 'readlink /proc/self/ns/mnt; while read -r f; do cat "$f" 2>/dev/null; done <files; echo done\n');
	fs.writeFileSync(ws('files'), '\n');
	if (who === 'nobody')
		asNobody(w);
	const c = await connect(w);
	const bash = async (command) => {
		const r = await c.client.callTool({ name: 'bash', arguments: { command } });
		return { r, out: JSON.stringify(r) };
	};
	const armedNs = async () => {
		if (!(await waitArmed(ws('.env'))))
			return null;
		const pid = armedPid(ws('.env'));
		try {
			return fs.readlinkSync(`/proc/${pid}/ns/mnt`);
		} catch {
			return null;
		}
	};
	// (the command writes no file: the names are given before the call)
	const round = async (what, files, change) => {
		fs.writeFileSync(ws('files'), files.join('\n') + '\n');
		await bash('true'); // the next sandbox is armed after this call
		const ns = await armedNs();
		change();
		const { r, out } = await bash('sh show.sh');
		const stdout = r.structuredContent ? r.structuredContent.stdout : '';
		return { ns, ran: stdout.split('\n')[0], stdout, out, ok: !r.isError && stdout.includes('done') };
	};
	await bash('true');
	// (up to 5 tries: on a loaded machine an arming can give way to the
	// call before it is done, which is no fault; a watch that every source
	// file spoils fails all 5)
	let t;
	for (let tries = 0; tries < 5; tries++) {
		t = await round('a source file written', [ws('.env')], () => {
			fs.writeFileSync(ws('pkgs', 'p7', 'm3', `new${tries}.js`), 'x\n');
			fs.appendFileSync(ws('pkgs', 'p8', 'm1', 'index.js'), 'y\n');
		});
		if (!arms || (t.ok && t.ns === t.ran))
			break;
	}
	if (!arms) {
		note(`sanitizer build: nothing armed (${t.ns})`);
	} else {
		okw(t.ns !== null, 'armed in a workspace of 3,000 directories (process table)');
		okw(t.ok && t.ns === t.ran, 'a source file written after the arming: the armed sandbox takes the call (its mount namespace)', t.out);
	}
	okw(t.ok && !t.out.includes('env-canary'), 'the secret masked at the arming stays masked', t.out);
	t = await round('a secret written deep', [ws('pkgs', 'p42', 'm17', '.env')], () => {
		fs.writeFileSync(ws('pkgs', 'p42', 'm17', '.env'), 'deep-canary\n');
	});
	if (arms)
		okw(t.ns !== null && t.ns !== t.ran, 'a secret written after the arming: the call\'s sandbox is made again', t.out);
	okw(t.ok && !t.out.includes('deep-canary'), 'a secret written deep after the arming is not readable in the call', t.out);
	t = await round('a directory of secrets renamed in', [ws('pkgs', 'p5', 'keys', 'a.txt')], () => {
		fs.mkdirSync(ws('pkgs', 'p5', 'tmp'));
		fs.writeFileSync(ws('pkgs', 'p5', 'tmp', 'a.txt'), 'ssh-dir-canary\n');
		fs.renameSync(ws('pkgs', 'p5', 'tmp'), ws('pkgs', 'p5', '.ssh'));
		fs.symlinkSync('.ssh', ws('pkgs', 'p5', 'keys'));
	});
	okw(t.ok && !t.out.includes('ssh-dir-canary'), 'a directory renamed to .ssh after the arming is not readable in the call', t.out);
	await c.close();
	w.cleanup();
}

// Directories renamed in a loop while the session's calls are prepared
// (armed ahead, then prepared again at the call since the watch saw the
// renames, and checked after the masks): no call prints the secret; each
// either runs or is refused as changed while it was prepared.
async function renameRace(who) {
	const okw = (c, d, diag) => ok(c, `${who}: ${d}`, diag);
	const w = world(`armedrace-${who}`, {
		sandbox: { mode: 'linux', rules: [{ tool: 'bash', profile: 'workspace-write-no-network' }] },
	});
	const ws = (...p) => path.join(w.ws, ...p);
	fs.mkdirSync(ws('dirA'));
	fs.mkdirSync(ws('dirB'));
	fs.writeFileSync(ws('dirA', 'readme'), 'ok\n');
	fs.writeFileSync(ws('dirB', '.env'), 'race-canary\n');
	fs.writeFileSync(ws('.env'), 'env-canary\n');
	// (the names in a file: a command naming them is refused by the policy)
	fs.writeFileSync(ws('files'), 'dirA/.env\ndirB/.env\ntmp/.env\n');
	fs.writeFileSync(ws('show.sh'), 'while read -r f; do cat "$f" 2>/dev/null; done <files; echo done\n');
	if (who === 'nobody')
		asNobody(w);
	const c = await connect(w);
	const bash = async (command) => {
		const r = await c.client.callTool({ name: 'bash', arguments: { command } });
		return { r, out: JSON.stringify(r) };
	};
	await bash('true');
	await bash('true'); // armed after this call
	if (arms)
		await waitArmed(ws('.env'));
	const loop = spawn('perl', ['-e', 'chdir $ARGV[0] or exit 1; for (;;) { rename "dirA", "tmp"; ' +
		'rename "dirB", "dirA"; rename "tmp", "dirB" }', w.ws], { stdio: 'ignore' });
	let leaks = 0, ran = 0, refused = 0;
	try {
		for (let i = 0; i < 20; i++) {
			const { r, out } = await bash('sh show.sh');
			if (out.includes('race-canary'))
				leaks++;
			else if (!r.isError && r.structuredContent.stdout.includes('done'))
				ran++;
			else if (out.includes('changed while the sandbox was prepared'))
				refused++;
			else if (i < 3)
				note(`${who}: ${out.slice(0, 300)}`);
		}
	} finally {
		loop.kill();
	}
	note(`${who}: 20 calls: ${ran} ran, ${refused} refused as changed, ${leaks} leaks`);
	okw(leaks === 0, `directories renamed in a loop during 20 calls: no secret read (${leaks} leaks)`);
	await c.close();
	w.cleanup();
}

// as root, then as the unprivileged user
await main(async () => {
	for (const who of ['root', 'nobody']) {
		await scenario(who);
		await homeLink(who);
		await bigWorkspace(who);
		await renameRace(who);
	}
});
