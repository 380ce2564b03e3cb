// Shared helpers of the MCP client tests: the official TypeScript SDK
// client (loaded from the npm prefix scripts/deps.sh installs), a scratch
// world (workspace, an outside directory with a canary, a config, an audit
// log), moat started as a real MCP server over stdio, and a tiny TAP writer.
//
// Every check looks from outside where it can: bytes on disk, the audit
// log's lines, the process table; never moat's own word alone.
import { createRequire } from 'node:module';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const MOAT = process.env.MOAT;
export const PREFIX = process.env.MOAT_NPM_PREFIX || '/opt/moat-npm';
const require = createRequire(path.join(PREFIX, 'resolve-from-here.js'));

export const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
export const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
export const types = require('@modelcontextprotocol/sdk/types.js');
export const Ajv = (() => {
	const m = require('ajv');
	return m.default || m;
})();

// ---- TAP ----
let n = 0;
let failed = 0;

export function ok(cond, desc, diag) {
	n++;
	if (cond) {
		console.log(`ok ${n} - ${desc}`);
	} else {
		failed++;
		console.log(`not ok ${n} - ${desc}`);
		if (diag !== undefined)
			for (const l of String(typeof diag === 'string' ? diag : JSON.stringify(diag)).split('\n').slice(0, 20))
				console.log(`#   ${l}`);
	}
	return !!cond;
}

export function note(msg) {
	for (const l of String(msg).split('\n'))
		console.log(`# ${l}`);
}

export function done() {
	console.log(`1..${n}`);
	process.exitCode = failed ? 1 : 0;
}

// Run a test body; a throw is a failure, not a crash without a plan.
export async function main(body) {
	try {
		await body();
	} catch (e) {
		ok(false, `unexpected exception: ${e && e.message}`, e && e.stack);
	}
	done();
}

// ---- the scratch world ----
export function world(name, config = {}) {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), `moat-mcp-${name}-`));
	fs.chmodSync(root, 0o755);
	const w = {
		root,
		ws: path.join(root, 'ws'),
		outside: path.join(root, 'outside'),
		evil: path.join(root, 'ws_evil'), // prefix confusion: "<ws>_evil"
		home: path.join(root, 'home'),
		audit: path.join(root, 'audit.jsonl'),
		config: path.join(root, 'config.json'),
	};
	for (const d of [w.ws, w.outside, w.evil, w.home, path.join(w.home, '.config'), path.join(w.home, '.state')])
		fs.mkdirSync(d, { recursive: true });
	fs.writeFileSync(path.join(w.outside, 'canary'), 'canary-content\n');
	fs.writeFileSync(path.join(w.evil, 'secret'), 'evil-canary\n');
	fs.writeFileSync(w.config, JSON.stringify(config));
	w.cleanup = () => fs.rmSync(root, { recursive: true, force: true });
	return w;
}

// w.asNobody: the server runs as the unprivileged user (setpriv), the
// world handed to it first (asNobody() below)
export function serverParams(w, extra = []) {
	const args = ['mcp', '--workspace', w.ws, '--config', w.config, '--audit-log', w.audit, ...extra];
	return {
		command: w.asNobody ? 'setpriv' : MOAT,
		args: w.asNobody ? ['--reuid=65534', '--regid=65534', '--clear-groups', MOAT, ...args] : args,
		env: {
			PATH: process.env.PATH || '/usr/bin:/bin',
			HOME: w.home,
			XDG_CONFIG_HOME: path.join(w.home, '.config'),
			XDG_STATE_HOME: path.join(w.home, '.state'),
			// sanitizer builds report through these
			...Object.fromEntries(['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']
				.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]])),
		},
		cwd: w.ws,
		stderr: 'pipe',
	};
}

// An SDK client connected to a fresh `moat mcp`. capabilities: the
// client's (e.g. {elicitation: {}}).
export async function connect(w, { capabilities = {}, extra = [], name = 'moat-test' } = {}) {
	const transport = new StdioClientTransport(serverParams(w, extra));
	let stderr = '';
	const client = new Client({ name, version: '1.0.0' }, { capabilities });
	await client.connect(transport);
	if (transport.stderr)
		transport.stderr.on('data', (d) => {
			stderr += d.toString();
		});
	return {
		client,
		transport,
		get stderr() {
			return stderr;
		},
		pid: transport.pid,
		close: async () => {
			await client.close();
		},
	};
}

// Hand the world to the unprivileged user (nobody, 65534) and run its
// server as that user: the workspace, home and audit log become nobody's
// (files the test writes later as root stay readable: umask 022).
export function asNobody(w) {
	execFileSync('chown', ['-R', '65534:65534', w.ws, w.home, w.outside]);
	fs.writeFileSync(w.audit, '');
	execFileSync('chown', ['65534:65534', w.audit]);
	w.asNobody = true;
	return w;
}

// Sanitizer builds arm nothing (the early child cannot share the caller's
// memory under ASan); the armed tests still run their checks there.
export const arms = !process.env.ASAN_OPTIONS;

// True once an armed sandbox masking file waits; false at once where
// nothing is ever armed, after 5 s elsewhere.
// (up to 15 s: an arming scans the workspace and builds a sandbox, which a
// loaded machine delays; it is seen as soon as it is made)
export function waitArmed(file, step = 20) {
	return arms ? waitFor(() => armedPid(file) !== null, 15000, step) : Promise.resolve(false);
}

// the process waiting in an armed sandbox: a child of the runner started
// ahead (both named moat-bash-warm) whose own mount table masks file
export function armedPid(file) {
	const comm = {}, ppid = {};
	for (const d of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(d))
			continue;
		try {
			const st = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
			const close = st.lastIndexOf(')');
			comm[d] = st.slice(st.indexOf('(') + 1, close);
			ppid[d] = st.slice(close + 2).split(' ')[1];
		} catch {
			/* gone */
		}
	}
	for (const [pid, c] of Object.entries(comm)) {
		/* the armed child: the sandbox's init (its command cloned, waiting
		 * too), or without a PID namespace the child itself, under the
		 * runner that has no call yet */
		if ((c !== 'moat-init' && c !== 'moat-bash-warm') || comm[ppid[pid]] !== 'moat-bash-warm')
			continue;
		try {
			if (fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n').some((l) => l.split(' ')[4] === file))
				return pid;
		} catch {
			/* gone, or not ours to read */
		}
	}
	return null;
}

export function text(result) {
	return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
}

export function auditLines(w) {
	if (!fs.existsSync(w.audit))
		return [];
	return fs.readFileSync(w.audit, 'utf8').split('\n').filter((l) => l !== '');
}

export function auditRecords(w) {
	return auditLines(w).map((l) => JSON.parse(l));
}

// pids of processes whose command line contains tag (never our own)
export function pgrep(tag) {
	try {
		return execFileSync('pgrep', ['-f', tag], { encoding: 'utf8' })
			.split('\n')
			.filter((p) => p && Number(p) !== process.pid);
	} catch {
		return [];
	}
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Poll cond() up to ms; true as soon as it holds.
export async function waitFor(cond, ms = 10000, step = 50) {
	const end = Date.now() + ms;
	for (;;) {
		if (await cond())
			return true;
		if (Date.now() > end)
			return false;
		await sleep(step);
	}
}

// ---- raw JSON-RPC, for what the SDK would never send ----
// A moat mcp process spoken to line by line. lines() collects its output.
export function raw(w, extra = []) {
	const p = serverParams(w, extra);
	const child = spawn(p.command, p.args, { env: p.env, cwd: p.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
	let buf = '';
	const msgs = [];
	const waiters = [];
	let stderr = '';
	child.stdout.on('data', (d) => {
		buf += d.toString();
		let i;
		while ((i = buf.indexOf('\n')) >= 0) {
			const line = buf.slice(0, i);
			buf = buf.slice(i + 1);
			let m;
			try {
				m = JSON.parse(line);
			} catch {
				m = { unparsable: line };
			}
			msgs.push(m);
			for (const wt of waiters.splice(0))
				wt();
		}
	});
	child.stderr.on('data', (d) => {
		stderr += d.toString();
	});
	const exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
	return {
		child,
		msgs,
		exited,
		get stderr() {
			return stderr;
		},
		send(obj) {
			child.stdin.write((typeof obj === 'string' ? obj : JSON.stringify(obj)) + '\n');
		},
		write(s) {
			child.stdin.write(s);
		},
		// the reply with this id (waits up to ms)
		async reply(id, ms = 10000) {
			const end = Date.now() + ms;
			for (;;) {
				const m = msgs.find((x) => x && Object.prototype.hasOwnProperty.call(x, 'id') && x.id === id && !x.method);
				if (m)
					return m;
				if (Date.now() > end)
					return undefined;
				await Promise.race([new Promise((r) => waiters.push(r)), sleep(100)]);
			}
		},
		async count(pred, k, ms = 10000) {
			await waitFor(() => msgs.filter(pred).length >= k, ms);
			return msgs.filter(pred).length;
		},
		async initialize(version = '2025-11-25', capabilities = {}) {
			this.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: version, capabilities, clientInfo: { name: 'raw', version: '1' } } });
			const r = await this.reply('init');
			this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
			return r;
		},
		async close() {
			child.stdin.end();
			return exited;
		},
	};
}
