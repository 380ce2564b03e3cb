// Path escapes through the SDK client, judged by the bytes: no outside
// content in any reply, no file created or changed outside the workspace.
// "..", absolute paths outside, prefix confusion (<ws>_evil), symlinks out,
// hard links to outside files, NUL bytes, and bash writing outside.
import fs from 'node:fs';
import path from 'node:path';
import { main, ok, world, connect, text } from './lib.mjs';

await main(async () => {
	const w = world('escapes');
	const c = await connect(w);
	await c.client.listTools();
	const call = (name, args) => c.client.callTool({ name, arguments: args });
	const canary = path.join(w.outside, 'canary');
	const leaked = (r) => JSON.stringify(r).includes('canary-content') || JSON.stringify(r).includes('evil-canary');
	const unchanged = () => fs.readFileSync(canary, 'utf8') === 'canary-content\n';

	fs.symlinkSync(w.outside, path.join(w.ws, 'outlink'));
	fs.symlinkSync(canary, path.join(w.ws, 'canlink'));
	fs.linkSync(canary, path.join(w.ws, 'hardlink'));
	const rel = path.relative(w.ws, canary); // ../outside/canary

	const reads = {
		'..': { path: rel },
		'deep ..': { path: `sub/../../outside/canary` },
		'absolute outside': { path: canary },
		'prefix confusion <ws>_evil': { path: path.join(w.evil, 'secret') },
		'prefix confusion as ../ws_evil': { path: `../${path.basename(w.evil)}/secret` },
		'symlinked directory out': { path: 'outlink/canary' },
		'symlink to an outside file': { path: 'canlink' },
		'NUL byte in the path': { path: `canlink\u0000ignored` },
		'/proc/self/root': { path: `/proc/self/root${canary}` },
	};
	for (const [what, args] of Object.entries(reads)) {
		const r = await call('read_file', args);
		ok(r.isError && !leaked(r), `read_file ${what}: refused, nothing leaked`, text(r));
	}
	let r = await call('list_directory', { path: 'outlink' });
	ok(r.isError && !JSON.stringify(r).includes('"canary"'), 'list_directory through a symlink out: refused', text(r));
	r = await call('list_directory', { path: w.outside });
	ok(r.isError, 'list_directory of an outside directory: refused', text(r));

	// writes: nothing created or changed outside
	const writes = {
		'..': { path: '../outside/new.txt', content: 'x' },
		'absolute outside': { path: path.join(w.outside, 'new.txt'), content: 'x' },
		'prefix confusion': { path: path.join(w.evil, 'new.txt'), content: 'x' },
		'symlinked directory out': { path: 'outlink/new.txt', content: 'x' },
		'symlink to an outside file': { path: 'canlink', content: 'pwned' },
		'hard link to an outside file': { path: 'hardlink', content: 'pwned' },
		'NUL byte in the path': { path: 'ok.txt\u0000/../../outside/new.txt', content: 'x' },
	};
	for (const [what, args] of Object.entries(writes)) {
		r = await call('write_file', args);
		ok(r.isError && unchanged() && !fs.existsSync(path.join(w.outside, 'new.txt')) &&
			!fs.existsSync(path.join(w.evil, 'new.txt')), `write_file ${what}: refused, outside untouched`, text(r));
	}
	for (const p of ['canlink', 'hardlink', rel]) {
		r = await call('edit_file', { path: p, old_string: 'canary', new_string: 'pwned' });
		ok(r.isError && unchanged(), `edit_file ${p}: refused, the outside file unchanged`, text(r));
	}
	ok(fs.lstatSync(path.join(w.ws, 'canlink')).isSymbolicLink(), 'the symlink in the workspace is still a symlink');

	// bash: the sandbox keeps writes in the workspace
	r = await call('bash', { command: `echo pwned > ${JSON.stringify(canary)}; echo pwned > ${JSON.stringify(path.join(w.outside, 'bash.txt'))}; true` });
	ok(unchanged() && !fs.existsSync(path.join(w.outside, 'bash.txt')), 'bash cannot write outside the workspace (on disk)', text(r));
	r = await call('bash', { command: 'echo pwned > canlink; true' });
	ok(unchanged(), 'bash writing through a symlink out: the outside file unchanged', text(r));
	r = await call('bash', { command: `ln ${JSON.stringify(canary)} newlink && echo pwned > newlink` });
	ok(unchanged() && !fs.existsSync(path.join(w.ws, 'newlink')), 'bash cannot hard-link an outside file into the workspace', text(r));
	r = await call('bash', { command: `cat ${JSON.stringify(path.join(w.home, '.ssh', 'id_rsa'))}` });
	ok(r.isError, 'bash reading ~/.ssh/id_rsa is refused', text(r));

	await c.close();
	w.cleanup();
});
