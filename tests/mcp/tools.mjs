// Every tool through the SDK client, checked on disk: write_file,
// read_file (numbered, raw, paged), edit_file (unique, replace_all,
// ambiguous, absent), list_directory, bash (and its alias), with the
// structured results validated by the SDK against the output schemas.
import fs from 'node:fs';
import path from 'node:path';
import { main, ok, world, connect, text, auditRecords } from './lib.mjs';

await main(async () => {
	const w = world('tools');
	const c = await connect(w);
	await c.client.listTools(); // the SDK validates structuredContent from here on
	const call = (name, args) => c.client.callTool({ name, arguments: args });
	const f = (p) => path.join(w.ws, p);

	// write_file
	let r = await call('write_file', { path: 'hello.txt', content: 'hello\nworld\n' });
	ok(!r.isError && fs.readFileSync(f('hello.txt'), 'utf8') === 'hello\nworld\n', 'write_file creates the file with the content', r);
	ok(r.structuredContent && r.structuredContent.created === true && r.structuredContent.bytes === 12, 'write_file: structured {created, bytes}', r.structuredContent);
	fs.chmodSync(f('hello.txt'), 0o640);
	r = await call('write_file', { path: f('hello.txt'), content: 'hello\nthere\nworld\n' });
	ok(!r.isError && fs.readFileSync(f('hello.txt'), 'utf8') === 'hello\nthere\nworld\n', 'write_file replaces a file (absolute path)', r);
	ok((fs.statSync(f('hello.txt')).mode & 0o777) === 0o640, 'write_file keeps the mode');
	ok(r.structuredContent && r.structuredContent.created === false, 'write_file: created false on replace');
	r = await call('write_file', { path: 'nodir/deeper/x.txt', content: 'x' });
	ok(!r.isError && fs.readFileSync(f('nodir/deeper/x.txt'), 'utf8') === 'x', 'write_file into missing directories makes them (on disk)', r);
	ok(r.structuredContent && JSON.stringify(r.structuredContent.created_dirs) === JSON.stringify([f('nodir'), f('nodir/deeper')]) &&
		text(r).includes(f('nodir/deeper')), 'write_file: the made directories in the text and in created_dirs', r);
	r = await call('write_file', { path: 'nodir/y.txt', content: 'y' });
	ok(!r.isError && r.structuredContent.created_dirs.length === 0, 'write_file into an existing directory: created_dirs empty', r.structuredContent);

	// read_file
	r = await call('read_file', { path: 'hello.txt' });
	ok(!r.isError && text(r).includes('     1\thello') && text(r).includes('     3\tworld'), 'read_file numbers the lines', text(r));
	ok(r.structuredContent && r.structuredContent.lines === 3 && r.structuredContent.binary === false, 'read_file: structured lines', r.structuredContent);
	ok(r.structuredContent && r.structuredContent.text === text(r), 'read_file: structuredContent.text is the text content', r.structuredContent);
	r = await call('read_file', { path: 'hello.txt', raw: true });
	ok(text(r) === 'hello\nthere\nworld\n', 'read_file raw is the exact text', text(r));
	r = await call('read_file', { path: 'hello.txt', offset: 2, limit: 1 });
	ok(!r.isError && text(r).includes('     2\tthere') && !text(r).includes('hello'), 'read_file offset and limit page', text(r));
	fs.writeFileSync(f('bin.dat'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0, 0xff]));
	r = await call('read_file', { path: 'bin.dat' });
	ok(r.structuredContent && r.structuredContent.binary === true && !text(r).includes('\u0000'), 'read_file reports a binary file, not its bytes', r);
	r = await call('read_file', { path: 'missing.txt' });
	ok(r.isError && /missing\.txt/.test(text(r)), 'read_file of a missing file: an error naming it', text(r));

	// edit_file
	r = await call('edit_file', { path: 'hello.txt', old_string: 'there', new_string: 'brave new' });
	ok(!r.isError && fs.readFileSync(f('hello.txt'), 'utf8') === 'hello\nbrave new\nworld\n', 'edit_file replaces a unique string on disk', r);
	ok(r.structuredContent && r.structuredContent.replacements === 1, 'edit_file: structured replacements');
	fs.writeFileSync(f('dup.txt'), 'a x a x a\n');
	r = await call('edit_file', { path: 'dup.txt', old_string: 'a', new_string: 'b' });
	ok(r.isError && fs.readFileSync(f('dup.txt'), 'utf8') === 'a x a x a\n', 'edit_file refuses an ambiguous old_string, file unchanged', text(r));
	r = await call('edit_file', { path: 'dup.txt', old_string: 'zzz', new_string: 'b' });
	ok(r.isError && fs.readFileSync(f('dup.txt'), 'utf8') === 'a x a x a\n', 'edit_file: an absent old_string fails, file unchanged', text(r));
	r = await call('edit_file', { path: 'dup.txt', old_string: 'a', new_string: 'b', replace_all: true });
	ok(!r.isError && fs.readFileSync(f('dup.txt'), 'utf8') === 'b x b x b\n' && r.structuredContent.replacements === 3, 'edit_file replace_all', r);

	// list_directory
	fs.mkdirSync(f('sub'));
	r = await call('list_directory', { path: '.' });
	const names = r.structuredContent ? r.structuredContent.entries.map((e) => e.name) : [];
	ok(!r.isError && ['bin.dat', 'dup.txt', 'hello.txt', 'nodir', 'sub'].every((x) => names.includes(x)), 'list_directory lists the workspace', r);
	ok(names.join() === [...names].sort().join(), 'list_directory is sorted');
	const sub = r.structuredContent && r.structuredContent.entries.find((e) => e.name === 'sub');
	ok(sub && sub.type === 'dir', 'list_directory gives the type');

	// bash
	r = await call('bash', { command: 'echo out; echo err >&2; echo made >made-by-bash.txt' });
	ok(!r.isError && r.structuredContent.stdout === 'out\n' && r.structuredContent.stderr === 'err\n', 'bash returns stdout and stderr', r);
	ok(fs.readFileSync(f('made-by-bash.txt'), 'utf8') === 'made\n', 'bash writes in the workspace (on disk)');
	r = await call('bash', { command: 'exit 3' });
	ok(r.isError && /exit code 3/.test(text(r)), 'bash: a non-zero exit is an error result saying the code', text(r));
	r = await call('bash', { command: 'pwd', cwd: 'sub' });
	ok(!r.isError && r.structuredContent.stdout.trim() === f('sub'), 'bash cwd runs in a subdirectory', r);
	r = await call('run_shell_command', { command: 'echo alias' });
	ok(!r.isError && text(r).includes('alias'), 'the alias run_shell_command runs bash', r);
	r = await call('bash', { command: 'sleep 5', timeout: 1 });
	ok(r.isError && /timed out/.test(text(r)), 'bash timeout kills a slow command', text(r));

	await c.close();
	const recs = auditRecords(w);
	ok(recs.length > 0 && recs.every((x) => x.source === 'mcp'), 'audit records say source mcp', recs[0]);
	w.cleanup();
});
