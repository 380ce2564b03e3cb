// What a tool result carries, per protocol revision, over raw JSON-RPC:
// from 2025-06-18 on, every successful result's structuredContent fits
// the tool's outputSchema and carries everything its text does (a client
// that hands the model the structured result, as Claude Code and Codex do,
// shows it nothing else): read_file the text, list_directory the entries
// and link targets, write_file the directories it made, edit_file what
// changed, bash stdout, stderr and the exit status. Before 2025-06-18
// (2025-03-26, 2024-11-05) there is no structured result at all: no
// structuredContent, no outputSchema, no title; annotations from
// 2025-03-26 on. A failed call is isError with its sentence in the text.
// Also write_file's directories, judged on disk: made where missing, none
// through a link that leaves, none on a denied path.
import fs from 'node:fs';
import path from 'node:path';
import { main, ok, world, raw, Ajv } from './lib.mjs';

const CANARY = 'readme-words-4711';

await main(async () => {
	const ajv = new Ajv({ strict: false, allErrors: true });
	for (const v of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
		const structured = v >= '2025-06-18';
		const w = world(`results-${v}`);
		fs.writeFileSync(path.join(w.ws, 'README.md'), `# title\n${CANARY}\n`);
		fs.writeFileSync(path.join(w.ws, 'crlf.txt'), 'a\r\nb\r\n');
		fs.symlinkSync('README.md', path.join(w.ws, 'readme-link'));
		const x = raw(w);
		const init = await x.initialize(v);
		ok(init && init.result && init.result.protocolVersion === v, `${v}: negotiated`, init);
		x.send({ jsonrpc: '2.0', id: 'tl', method: 'tools/list' });
		const tl = await x.reply('tl');
		const tools = new Map(((tl && tl.result && tl.result.tools) || []).map((t) => [t.name, t]));
		ok(tools.size === 5, `${v}: five tools`, tl);
		ok([...tools.values()].every((t) => structured ? t.outputSchema && t.title : !('outputSchema' in t) && !('title' in t)),
			`${v}: outputSchema and title ${structured ? 'on every tool' : 'absent (not in this revision)'}`);
		ok([...tools.values()].every((t) => v >= '2025-03-26' ? t.annotations : !('annotations' in t)),
			`${v}: annotations ${v >= '2025-03-26' ? 'present' : 'absent (not in this revision)'}`);
		let id = 0;
		const call = async (name, args) => {
			const k = `c${id++}`;
			x.send({ jsonrpc: '2.0', id: k, method: 'tools/call', params: { name, arguments: args } });
			const rep = await x.reply(k);
			return rep && rep.result;
		};
		const txt = (r) => (r && r.content || []).map((c) => c.text).join('');
		// the shape every revision has; structuredContent only from 2025-06-18
		const shape = (r, name, what) => {
			const keys = r ? Object.keys(r).sort().join() : '';
			const want = structured && !r.isError ? 'content,isError,structuredContent' : 'content,isError';
			ok(keys === want && r.content.length === 1 && r.content[0].type === 'text',
				`${v}: ${name} ${what}: the result has ${want}`, r);
			if (structured && !r.isError) {
				const valid = ajv.compile(tools.get(name).outputSchema);
				ok(valid(r.structuredContent), `${v}: ${name} ${what}: structuredContent fits the outputSchema`, valid.errors);
			}
			return structured && r ? r.structuredContent : undefined;
		};

		let r = await call('read_file', { path: 'README.md' });
		let sc = shape(r, 'read_file', 'numbered');
		ok(!r.isError && txt(r).includes(`     2\t${CANARY}`), `${v}: read_file: the text has the numbered lines`, r);
		if (structured)
			ok(sc && sc.text === txt(r) && sc.text.includes(CANARY), `${v}: read_file: structuredContent.text is the text`, sc);
		r = await call('read_file', { path: 'README.md', raw: true, offset: 2 });
		sc = shape(r, 'read_file', 'raw');
		if (structured)
			ok(sc && sc.text === `${CANARY}\n` && sc.offset === 2 && sc.lines === 1, `${v}: read_file raw: the exact text, offset, lines`, sc);
		r = await call('read_file', { path: 'README.md', limit: 1 });
		sc = shape(r, 'read_file', 'truncated');
		if (structured)
			ok(sc && sc.truncated && sc.next_offset === 2 && /\[truncated: 1 lines shown; read on with offset=2\]/.test(sc.text),
				`${v}: read_file truncated: the marker is in the text too`, sc);

		r = await call('list_directory', { path: '.' });
		sc = shape(r, 'list_directory', '');
		ok(!r.isError && txt(r).includes('readme-link -> README.md'), `${v}: list_directory: the text lists the link`, r);
		if (structured) {
			const e = sc && sc.entries.find((y) => y.name === 'readme-link');
			ok(e && e.type === 'symlink' && e.target === 'README.md' && sc.entries.some((y) => y.name === 'README.md'),
				`${v}: list_directory: entries with the link's target`, sc);
		}

		r = await call('write_file', { path: 'made/here/new.md', content: 'new\n' });
		sc = shape(r, 'write_file', 'into new directories');
		ok(!r.isError && fs.readFileSync(path.join(w.ws, 'made/here/new.md'), 'utf8') === 'new\n',
			`${v}: write_file made the directories and the file (on disk)`, r);
		ok(txt(r).includes(path.join(w.ws, 'made')) && txt(r).includes(path.join(w.ws, 'made/here')), `${v}: write_file: the text names the made directories`, r);
		if (structured)
			ok(sc && sc.created === true && sc.bytes === 4 &&
				JSON.stringify(sc.created_dirs) === JSON.stringify([path.join(w.ws, 'made'), path.join(w.ws, 'made/here')]),
				`${v}: write_file: created_dirs`, sc);

		r = await call('edit_file', { path: 'crlf.txt', old_string: 'a\nb', new_string: 'c\nd' });
		sc = shape(r, 'edit_file', 'CRLF');
		ok(!r.isError && fs.readFileSync(path.join(w.ws, 'crlf.txt'), 'utf8') === 'c\r\nd\r\n' && /CRLF/.test(txt(r)),
			`${v}: edit_file: edited on disk, the text says CRLF`, r);
		if (structured)
			ok(sc && sc.replacements === 1 && sc.crlf_matched === true, `${v}: edit_file: replacements and crlf_matched`, sc);

		r = await call('bash', { command: 'echo to-out; echo to-err >&2' });
		sc = shape(r, 'bash', '');
		ok(!r.isError && txt(r) === 'to-out\n[stderr]\nto-err\n', `${v}: bash: stdout then stderr in the text`, r);
		if (structured)
			ok(sc && sc.stdout === 'to-out\n' && sc.stderr === 'to-err\n' && sc.exit_code === 0 && sc.signal === null,
				`${v}: bash: stdout, stderr, exit_code`, sc);

		// failures: isError, the sentence in the text, never structuredContent
		r = await call('bash', { command: 'echo partial; exit 3' });
		shape(r, 'bash', 'failing');
		ok(r.isError && /partial/.test(txt(r)) && /exit code 3/.test(txt(r)), `${v}: a failing bash: isError, output and status in the text`, r);
		r = await call('read_file', { path: 'absent.md' });
		shape(r, 'read_file', 'missing');
		ok(r.isError && /absent\.md/.test(txt(r)), `${v}: a missing file: isError naming it`, r);
		await x.close();
		w.cleanup();
	}

	// write_file's directories, from outside
	const w = world('results-mkdir');
	fs.writeFileSync(w.config, JSON.stringify({ denied_paths: [path.join(w.ws, 'vault')] }));
	fs.symlinkSync(w.outside, path.join(w.ws, 'outlink'));
	fs.symlinkSync(path.join(w.ws, 'gone'), path.join(w.ws, 'dangling'));
	const before = fs.readdirSync(w.outside).sort().join();
	const x = raw(w);
	await x.initialize('2025-11-25');
	let id = 0;
	const call = async (args) => {
		const k = `m${id++}`;
		x.send({ jsonrpc: '2.0', id: k, method: 'tools/call', params: { name: 'write_file', arguments: args } });
		const rep = await x.reply(k);
		return rep && rep.result;
	};
	const msg = (r) => r && r.content && r.content[0].text;
	let r = await call({ path: 'outlink/new/x.txt', content: 'x' });
	ok(r.isError && fs.readdirSync(w.outside).sort().join() === before, 'a new directory under a link that leaves: refused, nothing made outside', msg(r));
	r = await call({ path: 'dangling/sub/x.txt', content: 'x' });
	ok(r.isError && /link/.test(msg(r)) && !fs.existsSync(path.join(w.ws, 'gone')), 'a dangling link in the way: refused, no directory made through it', msg(r));
	r = await call({ path: 'vault/inner/x.txt', content: 'x' });
	ok(r.isError && /vault/.test(msg(r)) && !fs.existsSync(path.join(w.ws, 'vault')), 'a denied directory: refused, nothing made', msg(r));
	fs.writeFileSync(path.join(w.ws, 'afile'), 'f');
	r = await call({ path: 'afile/sub/x.txt', content: 'x' });
	ok(r.isError && /not a directory/.test(msg(r)) && fs.readFileSync(path.join(w.ws, 'afile'), 'utf8') === 'f', 'a file in the way: refused, nothing made', msg(r));
	await x.close();
	w.cleanup();
});
