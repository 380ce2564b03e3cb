// The same MCP client workload against `moat mcp` (the default
// configuration: policy on, an audit log file) and the reference server,
// npm @modelcontextprotocol/server-filesystem, side by side. Started by
// bench/mcp.sh, which finds node, the npm prefix and the moat binary.
// With MOAT_MCP_BARE (the path of bench/mcp_bare, which bench/mcp.sh passes
// when it was built), a third server goes through exactly the same
// workloads: a bare C server with no policy and no audit, the ceiling the
// client and this machine allow.
//
//   MOAT=build/moat MOAT_NPM_PREFIX=/opt/moat-npm [MOAT_MCP_BARE=build/bench/mcp_bare] \
//     node bench/mcp_bench.mjs
//
// Workloads, per server, each in a fresh server process:
//  1. the official SDK Client over StdioClientTransport: read_file of a small
//     file, one call at a time (BENCH_N calls after a warm-up): p50, p99,
//     calls/s; then rounds of 200 concurrent calls (Promise.all): wall time;
//     then more sequential calls, reading the server's RSS (VmRSS from
//     /proc/PID/status, from outside) after the handshake, after 1,000,
//     10,000 and 20,000 calls.
//  2. a raw JSON-RPC writer on the server's stdin, after a proper initialize
//     handshake: BENCH_PIPE tools/call lines kept in flight BENCH_WINDOW at a
//     time (moat refuses more than MOAT_MCP_MAX_INFLIGHT = 256 calls in
//     flight with -32000, by design), written in batches before any reply is
//     read, so the server is the bottleneck: calls/s. Then the same number
//     written all at once, counting the replies that carry a result.
// Every reply is checked (the file's exact content, no isError), and moat's
// audit log must hold one line per call at the end: the policy and the audit
// are really on. BENCH_RUNS runs (default 3); the best of each figure is kept
// (the machine is shared); RSS is the largest seen. Progress goes to stderr,
// the markdown table to stdout.
import { createRequire } from 'node:module';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const MOAT = process.env.MOAT;
const BARE = process.env.MOAT_MCP_BARE || '';
const PREFIX = process.env.MOAT_NPM_PREFIX || '/opt/moat-npm';
const require = createRequire(path.join(PREFIX, 'resolve-from-here.js'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const REF_PKG = path.join(PREFIX, 'node_modules/@modelcontextprotocol/server-filesystem');
const REF_MAIN = path.join(REF_PKG, JSON.parse(fs.readFileSync(path.join(REF_PKG, 'package.json'), 'utf8')).bin['mcp-server-filesystem']);

const envInt = (k, d) => {
	const v = process.env[k];
	if (v === undefined || v === '')
		return d;
	if (!/^[0-9]+$/.test(v) || Number(v) < 1)
		throw new Error(`${k} must be a positive integer, not "${v}"`);
	return Number(v);
};
const N_SEQ = envInt('BENCH_N', 5000);
const N_WARM = envInt('BENCH_WARM', 500);
const N_CONC = 200;
const CONC_ROUNDS = envInt('BENCH_CONC_ROUNDS', 10);
const N_PIPE = envInt('BENCH_PIPE', 10000);
const WINDOW = envInt('BENCH_WINDOW', 200);
const RUNS = envInt('BENCH_RUNS', 3);
const RSS_AT = [1000, 5000, 10000, 20000];
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

const log = (s) => process.stderr.write(`mcp_bench: ${s}\n`);

// ---- the scratch world: one workspace, one small file, moat's HOME ----
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'moat-bench-mcp-'));
const ws = path.join(root, 'ws');
const home = path.join(root, 'home');
for (const d of [ws, home, path.join(home, '.config'), path.join(home, '.state')])
	fs.mkdirSync(d, { recursive: true });
const FILE = path.join(ws, 'small.txt');
// 5 lines, 200 bytes: a small source file
const CONTENT = Array.from({ length: 5 }, (_, i) => `line ${i + 1}: ${'abcdefghij'.repeat(3)} ${String(i).padStart(4, '0')}`.padEnd(39, '.') + '\n').join('');
fs.writeFileSync(FILE, CONTENT);
let auditSeq = 0;
process.on('exit', () => fs.rmSync(root, { recursive: true, force: true }));

function serverCmd(kind) {
	const env = { PATH: process.env.PATH || '/usr/bin:/bin', HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_STATE_HOME: path.join(home, '.state') };
	if (kind === 'moat') {
		const audit = path.join(root, `audit-${++auditSeq}.jsonl`);
		return { command: MOAT, args: ['mcp', '--workspace', ws, '--audit-log', audit], env, cwd: ws, audit };
	}
	if (kind === 'bare')
		return { command: BARE, args: [], env, cwd: ws };
	return { command: process.execPath, args: [REF_MAIN, ws], env, cwd: ws };
}

function rssKB(pid) {
	const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
	const m = /^VmRSS:\s+(\d+) kB/m.exec(s);
	if (!m)
		throw new Error(`no VmRSS for pid ${pid}`);
	return Number(m[1]);
}

// the server's CPU time so far (all its threads, user + system), seconds
function cpuSecs(pid) {
	const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
	const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
	return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

// the server's children (moat must not leave any for read_file)
function children(pid) {
	let out = [];
	for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
		const c = fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim();
		if (c)
			out = out.concat(c.split(/\s+/));
	}
	return out;
}

function auditCount(srv) {
	if (!srv.audit)
		return -1;
	return fs.readFileSync(srv.audit, 'utf8').split('\n').filter((l) => l !== '').length;
}

// the read tool and its arguments for this server
function readCall(tools, kind) {
	const names = tools.map((t) => t.name);
	if (kind === 'moat')
		return { name: 'read_file', arguments: { path: FILE, raw: true } };
	if (kind === 'bare') {
		if (!names.includes('read_file'))
			throw new Error(`the bare server has no read_file (tools: ${names.join(', ')})`);
		return { name: 'read_file', arguments: { path: FILE } };
	}
	const name = names.includes('read_text_file') ? 'read_text_file' : 'read_file';
	if (!names.includes(name))
		throw new Error(`the reference server has no read tool (tools: ${names.join(', ')})`);
	return { name, arguments: { path: FILE } };
}

const textOf = (r) => (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');

function quantile(sorted, q) {
	return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// ---- 1: the SDK client ----
async function sdkRun(kind) {
	const srv = serverCmd(kind);
	const transport = new StdioClientTransport({ command: srv.command, args: srv.args, env: srv.env, cwd: srv.cwd, stderr: 'pipe' });
	let stderr = '';
	const client = new Client({ name: 'moat-bench', version: '1.0.0' }, { capabilities: {} });
	await client.connect(transport);
	transport.stderr?.on('data', (d) => {
		stderr += d.toString();
	});
	const pid = transport.pid;
	const { tools } = await client.listTools();
	const call = readCall(tools, kind);
	const r = { tool: call.name, rss: {} };
	r.rss.handshake = rssKB(pid);
	let calls = 0;
	const one = async () => {
		const res = await client.callTool(call);
		calls++;
		if (res.isError || textOf(res) !== CONTENT)
			throw new Error(`${kind}: a wrong reply: ${JSON.stringify(res).slice(0, 300)} ${stderr.slice(0, 300)}`);
		if (RSS_AT.includes(calls))
			r.rss[calls] = rssKB(pid);
	};
	for (let i = 0; i < N_WARM; i++)
		await one();
	const lat = new Float64Array(N_SEQ);
	const c0 = cpuSecs(pid);
	const t0 = process.hrtime.bigint();
	for (let i = 0; i < N_SEQ; i++) {
		const a = process.hrtime.bigint();
		await one();
		lat[i] = Number(process.hrtime.bigint() - a) / 1e6;
	}
	const secs = Number(process.hrtime.bigint() - t0) / 1e9;
	r.cpuSeq = ((cpuSecs(pid) - c0) / N_SEQ) * 1e6;
	lat.sort();
	r.p50 = quantile(lat, 0.5);
	r.p99 = quantile(lat, 0.99);
	r.seq = N_SEQ / secs;
	r.conc = [];
	for (let k = 0; k < CONC_ROUNDS; k++) {
		const a = process.hrtime.bigint();
		await Promise.all(Array.from({ length: N_CONC }, one));
		r.conc.push(Number(process.hrtime.bigint() - a) / 1e6);
	}
	while (calls < RSS_AT[RSS_AT.length - 1])
		await one();
	r.children = children(pid).length;
	r.threads = fs.readdirSync(`/proc/${pid}/task`).length;
	await client.close();
	r.audit = auditCount(srv);
	r.calls = calls;
	if (kind === 'moat' && r.audit !== calls)
		throw new Error(`moat: the audit log holds ${r.audit} lines for ${calls} calls`);
	return r;
}

// ---- 2: raw JSON-RPC, pipelined ----
function rawServer(kind) {
	const srv = serverCmd(kind);
	const child = spawn(srv.command, srv.args, { env: srv.env, cwd: srv.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
	let buf = '';
	let onMsg = null;
	let stderr = '';
	child.stderr.on('data', (d) => {
		stderr += d.toString();
	});
	child.stdout.setEncoding('utf8');
	child.stdout.on('data', (d) => {
		buf += d;
		let start = 0;
		let i;
		while ((i = buf.indexOf('\n', start)) >= 0) {
			const line = buf.slice(start, i);
			start = i + 1;
			if (line !== '' && onMsg)
				onMsg(JSON.parse(line));
		}
		buf = buf.slice(start);
	});
	const exited = new Promise((res) => child.on('exit', (code, sig) => res({ code, sig })));
	return {
		srv,
		child,
		exited,
		get stderr() {
			return stderr;
		},
		set onMsg(f) {
			onMsg = f;
		},
		write(s) {
			child.stdin.write(s);
		},
		// one request, its reply
		request(id, method, params) {
			return new Promise((res, rej) => {
				const t = setTimeout(() => rej(new Error(`${kind}: no reply to ${method} (${stderr.slice(0, 300)})`)), 30000);
				onMsg = (m) => {
					if (m.id === id) {
						clearTimeout(t);
						onMsg = null;
						res(m);
					}
				};
				child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
			});
		},
	};
}

// total calls, at most `window` in flight, refilled in batches when half
// have come back; every reply checked. Resolves { secs, ok, busy, bad }.
function pipeline(x, call, base, total, window) {
	const head = `{"jsonrpc":"2.0","id":`;
	const tail = `,"method":"tools/call","params":${JSON.stringify(call)}}\n`;
	let sent = 0;
	let got = 0;
	const out = { ok: 0, busy: 0, bad: 0, firstBad: null };
	const fill = () => {
		const k = Math.min(window - (sent - got), total - sent);
		if (k <= 0)
			return;
		let s = '';
		for (let i = 0; i < k; i++)
			s += head + (base + sent + i) + tail;
		sent += k;
		x.write(s);
	};
	return new Promise((res, rej) => {
		const t = setTimeout(() => rej(new Error(`pipeline: ${got} of ${total} replies after 120 s`)), 120000);
		const t0 = process.hrtime.bigint();
		x.onMsg = (m) => {
			if (typeof m.id !== 'number' || m.id < base || m.id >= base + total)
				return;
			got++;
			if (m.result && !m.result.isError && m.result.content?.[0]?.text === CONTENT)
				out.ok++;
			else if (m.error && m.error.code === -32000)
				out.busy++;
			else {
				out.bad++;
				out.firstBad ??= JSON.stringify(m).slice(0, 300);
			}
			if (got === total) {
				clearTimeout(t);
				out.secs = Number(process.hrtime.bigint() - t0) / 1e9;
				x.onMsg = null;
				res(out);
			} else if (sent - got <= window / 2) {
				fill();
			}
		};
		fill();
	});
}

async function rawRun(kind) {
	const x = rawServer(kind);
	const init = await x.request(0, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'moat-bench-raw', version: '1' } });
	if (!init.result)
		throw new Error(`${kind}: initialize failed: ${JSON.stringify(init)}`);
	x.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
	const tl = await x.request(1, 'tools/list', {});
	const call = readCall(tl.result.tools, kind);
	const r = {};
	let calls = 0;
	let base = 1000;
	const run = async (total, window) => {
		const o = await pipeline(x, call, base, total, window);
		base += total;
		calls += total;
		return o;
	};
	const w = await run(N_WARM * 2, WINDOW);
	if (w.ok !== N_WARM * 2)
		throw new Error(`${kind}: pipelined warm-up: ${JSON.stringify(w)} ${x.stderr.slice(0, 300)}`);
	const c0 = cpuSecs(x.child.pid);
	const u0 = process.cpuUsage();
	const p = await run(N_PIPE, WINDOW);
	const u = process.cpuUsage(u0);
	r.cpuPipe = ((cpuSecs(x.child.pid) - c0) / N_PIPE) * 1e6;
	r.clientPipe = (u.user + u.system) / N_PIPE;
	if (p.ok !== N_PIPE)
		throw new Error(`${kind}: pipelined: ${JSON.stringify(p)} ${x.stderr.slice(0, 300)}`);
	r.pipe = N_PIPE / p.secs;
	r.rssPipe = rssKB(x.child.pid);
	// all at once: no window at all
	const a = await run(N_PIPE, N_PIPE);
	if (a.bad)
		throw new Error(`${kind}: all at once: ${JSON.stringify(a)}`);
	r.allOk = a.ok;
	r.allBusy = a.busy;
	r.allRate = a.ok / a.secs;
	r.rssAll = rssKB(x.child.pid);
	x.child.stdin.end();
	const e = await x.exited;
	r.exit = e;
	r.audit = auditCount(x.srv);
	if (kind === 'moat' && r.audit !== calls - a.busy)
		throw new Error(`moat: the audit log holds ${r.audit} lines for ${calls - a.busy} calls run`);
	return r;
}

// ---- runs, best of each ----
const KINDS = BARE ? ['moat', 'ref', 'bare'] : ['moat', 'ref'];
const best = { moat: null, ref: null, bare: null };
const perRun = []; // [{ moat, ref, bare }], each run's own figures
const better = (a, b, key, lower) => (a[key] === undefined ? b[key] : lower ? Math.min(a[key], b[key]) : Math.max(a[key], b[key]));

function merge(prev, cur) {
	if (!prev)
		return structuredClone(cur);
	const m = structuredClone(prev);
	for (const k of ['p50', 'p99', 'concBest', 'cpuSeq', 'cpuPipe', 'clientPipe'])
		m[k] = better(prev, cur, k, true);
	for (const k of ['seq', 'pipe', 'allRate'])
		m[k] = better(prev, cur, k, false);
	// memory: the largest seen
	for (const k of ['rssPipe', 'rssAll'])
		m[k] = Math.max(prev[k], cur[k]);
	for (const k of Object.keys(cur.rss))
		m.rss[k] = Math.max(prev.rss[k], cur.rss[k]);
	m.allOkMin = Math.min(prev.allOkMin, cur.allOkMin);
	m.concMedians = prev.concMedians.concat(cur.concMedians);
	return m;
}

for (let run = 1; run <= RUNS; run++) {
	perRun.push({});
	// the order turns by one each run (moat, ref; ref, moat; ... with two)
	const k0 = (run - 1) % KINDS.length;
	for (const kind of KINDS.slice(k0).concat(KINDS.slice(0, k0))) {
		log(`run ${run}/${RUNS}: ${kind}: SDK client`);
		const s = await sdkRun(kind);
		log(`run ${run}/${RUNS}: ${kind}: raw pipelined`);
		const p = await rawRun(kind);
		const sc = [...s.conc].sort((a, b) => a - b);
		const cur = { ...s, ...p, concBest: sc[0], concMedians: [quantile(sc, 0.5)], allOkMin: p.allOk };
		log(`  ${kind} (${s.tool}): p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms, ${s.seq.toFixed(0)} calls/s, 200 concurrent ${sc[0].toFixed(1)} ms (median ${quantile(sc, 0.5).toFixed(1)}), pipelined ${p.pipe.toFixed(0)} calls/s, server CPU/call seq ${s.cpuSeq.toFixed(1)} us pipe ${p.cpuPipe.toFixed(1)} us (client ${p.clientPipe.toFixed(1)} us), all at once ${p.allOk} ok ${p.allBusy} busy ${p.allRate.toFixed(0)}/s, RSS ${JSON.stringify(s.rss)} kB, pipe ${p.rssPipe} kB, threads ${s.threads}, children ${s.children}`);
		best[kind] = merge(best[kind], cur);
		perRun[run - 1][kind] = cur;
	}
}

// ---- the table ----
const M = best.moat;
const R = best.ref;
const B = best.bare; // null without MOAT_MCP_BARE
const f0 = (v) => Math.round(v).toLocaleString('en-US');
const fms = (v) => v.toFixed(3);
const fmb = (kb) => (kb / 1024).toFixed(1);
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
// [what, the figure of one server, its ratio moat/that server]; the ratio
// is '-' where there is none
const num = (label, get, fmt) => [label, (X) => fmt(get(X)), (X, Y) => ratio(get(X), get(Y))];
const specs = [
	num('sequential read_file, p50 (ms)', (X) => X.p50, fms),
	num('sequential read_file, p99 (ms)', (X) => X.p99, fms),
	num(`sequential read_file, calls/s (${N_SEQ.toLocaleString('en-US')} calls)`, (X) => X.seq, f0),
	num(`200 concurrent reads, wall (ms, best of ${CONC_ROUNDS * RUNS})`, (X) => X.concBest, (v) => v.toFixed(1)),
	num(`pipelined, calls/s (${N_PIPE.toLocaleString('en-US')} calls, ${WINDOW} in flight)`, (X) => X.pipe, f0),
	num('server CPU time per call, sequential (us, user + system)', (X) => X.cpuSeq, (v) => v.toFixed(1)),
	num('server CPU time per call, pipelined (us, user + system)', (X) => X.cpuPipe, (v) => v.toFixed(1)),
	[`pipelined, ${N_PIPE.toLocaleString('en-US')} written at once: calls answered with a result`, (X) => (X === M ? `${f0(X.allOkMin)} (the rest: -32000)` : f0(X.allOkMin)), () => '-'],
	num('RSS after the handshake (MB)', (X) => X.rss.handshake, fmb),
	...RSS_AT.map((n) => num(`RSS after ${n.toLocaleString('en-US')} SDK calls (MB)`, (X) => X.rss[n], fmb)),
	num(`RSS after ${(N_PIPE + 2 * N_WARM).toLocaleString('en-US')} pipelined calls (MB)`, (X) => X.rssPipe, fmb),
	num(`RSS after ${N_PIPE.toLocaleString('en-US')} more, written at once (MB)`, (X) => X.rssAll, fmb),
];
const rows = specs.map(([label, fig, rat]) => [label, fig(M), fig(R), rat(M, R)].concat(B ? [fig(B), rat(M, B)] : []));
console.log(`| workload (${RUNS} run${RUNS > 1 ? 's' : ''}, best of each; RSS: the largest) | moat | reference (${R.tool}) | moat/reference |${B ? ' bare C server (no policy, no audit) | moat/bare |' : ''}`);
console.log(B ? '|---|---:|---:|---:|---:|---:|' : '|---|---:|---:|---:|');
for (const r of rows)
	console.log(`| ${r.join(' | ')} |`);
console.log('');
const t = [
	['sequential calls/s at least 5x the reference', M.seq >= 5 * R.seq, `${(M.seq / R.seq).toFixed(2)}x`],
	['pipelined calls/s at least 5x the reference', M.pipe >= 5 * R.pipe, `${(M.pipe / R.pipe).toFixed(2)}x`],
	['p99 under 1 ms', M.p99 < 1, `${fms(M.p99)} ms`],
	['RSS under 8 MB', Math.max(...Object.values(M.rss), M.rssPipe, M.rssAll) < 8192, `${fmb(Math.max(...Object.values(M.rss), M.rssPipe, M.rssAll))} MB at most, in every phase`],
	['RSS flat over 10,000 calls (10,000 -> 20,000 SDK calls)', M.rss[20000] - M.rss[10000] <= 256, `${M.rss[20000] - M.rss[10000]} kB more`],
];
const range = (f, a = 'moat', b = 'ref') => {
	const v = perRun.map((r) => f(r[a]) / f(r[b])).sort((x, y) => x - y);
	return v.length > 1 ? `${v[0].toFixed(2)}x to ${v[v.length - 1].toFixed(2)}x` : `${v[0].toFixed(2)}x`;
};
console.log(`- Each run's own ratio (moat and the reference measured back to back): sequential calls/s ${range((x) => x.seq)}, pipelined calls/s ${range((x) => x.pipe)}, p99 ${range((x) => x.p99)}.`);
if (B)
	console.log(`- Each run's own ratio of the bare C server to the reference: sequential calls/s ${range((x) => x.seq, 'bare', 'ref')}, pipelined calls/s ${range((x) => x.pipe, 'bare', 'ref')}; moat to the bare server: sequential ${range((x) => x.seq, 'moat', 'bare')}, pipelined ${range((x) => x.pipe, 'moat', 'bare')}, p99 ${range((x) => x.p99, 'moat', 'bare')}. The bare server: server CPU per call ${B.cpuSeq.toFixed(1)} us sequential, ${B.cpuPipe.toFixed(1)} us pipelined; the client's own CPU per pipelined call against it ${B.clientPipe.toFixed(1)} us; 200 concurrent, median of the rounds ${quantile(B.concMedians.sort((x, y) => x - y), 0.5).toFixed(1)} ms.`);
// what the bare server itself reaches: the ceiling for a throughput target
const ceiling = (key, what) =>
	`  - the bare C server itself (no policy, no audit): ${(B[key] / R[key]).toFixed(2)}x ${what} (${f0(B[key])} against ${f0(R[key])} calls/s): the ceiling the client and this machine allow; moat reaches ${Math.round((100 * M[key]) / B[key])}% of it`;
for (const [i, [what, met, v]] of t.entries()) {
	console.log(`- ${what}: ${met ? 'met' : 'NOT met'} (${v})`);
	if (B && i === 0)
		console.log(ceiling('seq', 'sequential'));
	if (B && i === 1)
		console.log(ceiling('pipe', 'pipelined'));
}
console.log(`- node ${process.version}, reference server ${JSON.parse(fs.readFileSync(path.join(REF_PKG, 'package.json'), 'utf8')).version}, SDK ${JSON.parse(fs.readFileSync(path.join(PREFIX, 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8')).version}; the client's own CPU per pipelined call: ${M.clientPipe.toFixed(1)} us against moat, ${R.clientPipe.toFixed(1)} us against the reference; 200 concurrent, median of the rounds: moat ${quantile(M.concMedians.sort((a, b) => a - b), 0.5).toFixed(1)} ms, reference ${quantile(R.concMedians.sort((a, b) => a - b), 0.5).toFixed(1)} ms`);
