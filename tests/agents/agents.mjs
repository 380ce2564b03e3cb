// The real agent clients with moat: Claude Code (npm @anthropic-ai/claude-code)
// and Codex (npm @openai/codex), set up as README.md and docs/mcp.md say,
// each driven by a scripted model server (model.mjs) on 127.0.0.1 that
// records every request. Everything is judged from outside: what the model
// was given (the recorded requests), bytes on disk, file modes.
//
// For each client, with `moat mcp` as its MCP server: the model receives
// README's text from read_file; a write_file into a new directory lands on
// disk; a bash call runs; the workspace's .env and ~/.ssh/id_rsa (canaries
// unique to the run) appear in nothing the model receives, whether asked
// for with read_file or with bash. For Claude Code also with `moat hook
// claude-code` as its PreToolUse hook: a denied command (chmod -R 777 ~) and
// a denied read (~/.aws/credentials) do not run, an allowed command does.
// Each client's view of a result (the structured result or the text) is
// checked too, as docs/mcp.md states it.
//
// Run by test_agents.sh (in a network namespace of its own: loopback only).
// Env: MOAT, MOAT_NPM_PREFIX; MOAT_MUST_WORK=1 turns a missing client into
// a failure. Each run gets a temporary HOME (and CODEX_HOME), so no real
// configuration is read or touched.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startModel } from './model.mjs';

const MOAT = process.env.MOAT;
const PREFIX = process.env.MOAT_NPM_PREFIX || '/opt/moat-npm';
const MUST = process.env.MOAT_MUST_WORK === '1' || process.env.CI === 'true';
const KEEP = process.env.MOAT_AGENTS_KEEP === '1'; // leave the worlds for a post mortem
const CLIENT_TIMEOUT_MS = 60000;

// ---- TAP ----
let n = 0;
let failed = 0;
function ok(cond, desc, diag) {
	n++;
	console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${desc}`);
	if (!cond) {
		failed++;
		if (diag !== undefined)
			for (const l of String(typeof diag === 'string' ? diag : JSON.stringify(diag)).split('\n').slice(0, 30))
				console.log(`#   ${l}`);
	}
	return !!cond;
}
function skip(desc) {
	n++;
	if (MUST) {
		failed++;
		console.log(`not ok ${n} - ${desc} (MOAT_MUST_WORK=1: a skip is a failure; run scripts/deps.sh)`);
	} else {
		console.log(`ok ${n} - # SKIP ${desc}`);
	}
}
const note = (m) => String(m).split('\n').forEach((l) => console.log(`# ${l}`));

// ---- a world per run ----
function world(name) {
	const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `moat-agents-${name}-`)));
	const tag = crypto.randomBytes(6).toString('hex');
	const w = {
		root,
		tag,
		home: path.join(root, 'home'),
		ws: path.join(root, 'ws'),
		bin: path.join(root, 'bin'),
		readme: `readme-text-${tag}`,
		canaries: { env: `env-canary-${tag}`, ssh: `ssh-canary-${tag}`, aws: `aws-canary-${tag}` },
	};
	for (const d of [w.home, w.ws, w.bin, path.join(w.home, '.ssh'), path.join(w.home, '.aws')])
		fs.mkdirSync(d, { recursive: true, mode: 0o755 });
	fs.chmodSync(path.join(w.home, '.ssh'), 0o700);
	fs.writeFileSync(path.join(w.ws, 'README.md'), `# demo\n\n${w.readme}\n`);
	fs.writeFileSync(path.join(w.ws, '.env'), `API_KEY=${w.canaries.env}\n`);
	fs.writeFileSync(path.join(w.home, '.ssh', 'id_rsa'), `-----BEGIN OPENSSH PRIVATE KEY-----\n${w.canaries.ssh}\n`, { mode: 0o600 });
	fs.writeFileSync(path.join(w.home, '.aws', 'credentials'), `[default]\naws_secret_access_key = ${w.canaries.aws}\n`, { mode: 0o600 });
	// `moat` on the PATH, as the snippets name it
	fs.symlinkSync(MOAT, path.join(w.bin, 'moat'));
	w.cleanup = () => KEEP ? note(`kept ${root}`) : fs.rmSync(root, { recursive: true, force: true });
	return w;
}

// Run a client to its end (bounded); resolves {code, signal, stdout, stderr, ms}.
function run(cmd, args, { env, cwd }) {
	return new Promise((resolve) => {
		const t0 = Date.now();
		const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
		let stdout = '', stderr = '';
		child.stdout.on('data', (d) => (stdout += d));
		child.stderr.on('data', (d) => (stderr += d));
		const bound = setTimeout(() => {
			try {
				process.kill(-child.pid, 'SIGKILL');
			} catch {}
		}, CLIENT_TIMEOUT_MS);
		child.on('error', (e) => {
			clearTimeout(bound);
			resolve({ code: -1, signal: null, stdout, stderr: stderr + String(e), ms: Date.now() - t0 });
		});
		child.on('close', (code, signal) => {
			clearTimeout(bound);
			resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
		});
	});
}

function baseEnv(w) {
	return {
		PATH: `${w.bin}:${process.env.PATH || '/usr/bin:/bin'}`,
		HOME: w.home,
		USER: os.userInfo().username,
		LANG: 'C.UTF-8',
		TMPDIR: os.tmpdir(),
		...Object.fromEntries(['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']
			.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]])),
	};
}

// What the model was given for each of its tool calls, from the last
// request of the conversation (it holds the whole history):
// [{id, name, args, text, isError}] in call order.
function toolResults(requests, api) {
	const bodies = requests.map((r) => {
		try {
			return JSON.parse(r.body);
		} catch {
			return {};
		}
	});
	const flat = (c) => typeof c === 'string' ? c
		: Array.isArray(c) ? c.map((x) => (x && (x.text ?? (x.type === 'tool_reference' ? `<${x.tool_name}>` : ''))) || '').join('\n') : '';
	let best = [];
	for (const b of bodies) {
		const calls = [];
		if (api === 'anthropic') {
			const res = new Map();
			for (const m of b.messages || [])
				for (const blk of Array.isArray(m.content) ? m.content : [])
					if (blk.type === 'tool_result') res.set(blk.tool_use_id, blk);
			for (const m of b.messages || [])
				for (const blk of Array.isArray(m.content) ? m.content : [])
					if (blk.type === 'tool_use' && res.has(blk.id))
						calls.push({ id: blk.id, name: blk.name, args: blk.input, text: flat(res.get(blk.id).content), isError: !!res.get(blk.id).is_error });
		} else {
			const res = new Map();
			for (const i of b.input || [])
				if (i.type === 'function_call_output') res.set(i.call_id, i);
			for (const i of b.input || [])
				if (i.type === 'function_call' && res.has(i.call_id)) {
					let args = {};
					try {
						args = JSON.parse(i.arguments);
					} catch {}
					calls.push({ id: i.call_id, name: i.namespace ? `${i.namespace}__${i.name}` : i.name, args, text: flat(res.get(i.call_id).output) });
				}
		}
		if (calls.length >= best.length)
			best = calls;
	}
	return best;
}

// The structured result a client passed on as JSON (Codex puts a line of
// its own before it), or undefined.
function structuredOf(text) {
	const m = /\{[\s\S]*\}$/.exec(text || '');
	try {
		return m ? JSON.parse(m[0]) : undefined;
	} catch {
		return undefined;
	}
}

const find = (calls, name, pred = () => true) => calls.find((c) => c.name.endsWith(name) && pred(c.args || {}));
const show = (c) => c ? `${c.name} ${JSON.stringify(c.args)} -> ${c.text.slice(0, 600)}` : 'no such call';

// The checks every client passes with moat as its MCP server.
function checkMcp(label, w, requests, calls, api) {
	const all = requests.map((r) => r.body).join('\n');
	const rd = find(calls, 'read_file', (a) => a.path === 'README.md');
	ok(rd && rd.text.includes(w.readme), `${label}: the model receives README's text from read_file`, show(rd));
	const wr = find(calls, 'write_file');
	let disk;
	try {
		disk = fs.readFileSync(path.join(w.ws, 'docs/new/agent.md'), 'utf8');
	} catch {}
	ok(disk === `written by the model ${w.tag}\n`, `${label}: write_file into a new directory lands on disk`, show(wr));
	const made = wr && structuredOf(wr.text);
	ok(made && JSON.stringify(made.created_dirs) === JSON.stringify([path.join(w.ws, 'docs'), path.join(w.ws, 'docs/new')]),
		`${label}: the model is told which directories write_file made`, show(wr));
	const sh = find(calls, 'bash', (a) => /bash-ran/.test(a.command));
	let ran;
	try {
		ran = fs.readFileSync(path.join(w.ws, 'bash-out.txt'), 'utf8');
	} catch {}
	ok(ran === `bash-ran-${w.tag}\n` && sh && sh.text.includes(`bash-said-${w.tag}`),
		`${label}: a bash call runs (its file on disk, its output to the model)`, show(sh));
	const env = find(calls, 'read_file', (a) => a.path === '.env');
	ok(env && /denied|refused/.test(env.text), `${label}: read_file of .env is refused, saying why`, show(env));
	const key = find(calls, 'read_file', (a) => /id_rsa/.test(a.path));
	ok(key && /denied|refused|outside/.test(key.text), `${label}: read_file of ~/.ssh/id_rsa is refused`, show(key));
	const cat = find(calls, 'bash', (a) => /cat/.test(a.command));
	ok(cat && cat.text.length > 0, `${label}: bash cat of both got an answer`, show(cat));
	for (const [what, c] of Object.entries({ '.env': w.canaries.env, '~/.ssh/id_rsa': w.canaries.ssh }))
		ok(!all.includes(c), `${label}: ${what} appears in nothing the model receives (${requests.length} requests)`);
	return { rd };
}

const mcpScript = (w, first = []) => [
	...first,
	{ tool: 'moat:read_file', args: { path: 'README.md' } },
	{ tool: 'moat:write_file', args: { path: 'docs/new/agent.md', content: `written by the model ${w.tag}\n` } },
	{ tool: 'moat:bash', args: { command: `echo bash-ran-${w.tag} > bash-out.txt; echo bash-said-${w.tag}` } },
	{ tool: 'moat:read_file', args: { path: '.env' } },
	{ tool: 'moat:read_file', args: { path: '~/.ssh/id_rsa' } },
	{ tool: 'moat:bash', args: { command: 'cat .env; cat ~/.ssh/id_rsa; echo tried' } },
];

// ---- Claude Code ----
function claudeEnv(w, model) {
	return {
		...baseEnv(w),
		ANTHROPIC_BASE_URL: model.url,
		ANTHROPIC_API_KEY: 'sk-ant-scripted-model',
		// no traffic but the model's: telemetry, error reports, update checks off
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
		DISABLE_TELEMETRY: '1',
		DISABLE_ERROR_REPORTING: '1',
		DISABLE_AUTOUPDATER: '1',
	};
}

// the snippets of README.md and docs/mcp.md, with this world's paths
const claudeMcpJson = (w) => ({ mcpServers: { moat: { command: 'moat', args: ['mcp', '--workspace', w.ws] } } });
const claudePermissions = { permissions: { allow: ['mcp__moat'] } };
const claudeHook = {
	hooks: {
		PreToolUse: [{
			matcher: 'Bash|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS|WebFetch|mcp__.*',
			hooks: [{ type: 'command', command: 'moat hook claude-code', timeout: 30 }],
		}],
	},
};

async function claude(bin) {
	// with moat mcp
	{
		const w = world('claude-mcp');
		fs.writeFileSync(path.join(w.ws, '.mcp.json'), JSON.stringify(claudeMcpJson(w), null, 2));
		fs.mkdirSync(path.join(w.home, '.claude'));
		fs.writeFileSync(path.join(w.home, '.claude', 'settings.json'), JSON.stringify(claudePermissions));
		// Claude Code 2.1 defers MCP tools: a model loads them with ToolSearch first
		const load = [{ tool: 'ToolSearch', args: { query: 'select:mcp__moat__read_file,mcp__moat__write_file,mcp__moat__bash' } }];
		const model = await startModel({ api: 'anthropic', script: mcpScript(w, load), log: path.join(w.root, 'requests.jsonl') });
		const r = await run(bin, ['-p', "Use moat's tools.", '--output-format', 'json'], { env: claudeEnv(w, model), cwd: w.ws });
		model.close();
		note(`claude -p with moat mcp: ${r.ms} ms, ${model.requests.length} requests`);
		let out = {};
		try {
			out = JSON.parse(r.stdout);
		} catch {}
		ok(r.code === 0 && out.result === 'done', 'claude: the scripted session ran to its end', `${r.code} ${r.signal} ${r.stdout.slice(0, 800)} ${r.stderr.slice(0, 800)}`);
		const calls = toolResults(model.requests, 'anthropic');
		const { rd } = checkMcp('claude', w, model.requests, calls, 'anthropic');
		// what it shows the model: the structured result as JSON (docs/mcp.md)
		let sc;
		try {
			sc = JSON.parse(rd.text);
		} catch {}
		ok(rd && rd.text.startsWith('{') && sc && sc.text && sc.text.includes(w.readme) && sc.path === path.join(w.ws, 'README.md'),
			'claude: the model sees the structured result (as JSON) of a successful call', rd && rd.text);
		const env = find(calls, 'read_file', (a) => a.path === '.env');
		ok(env && env.isError && !env.text.startsWith('{'), 'claude: and the text of a failed one (is_error)', show(env));
		w.cleanup();
	}
	// with moat hook claude-code on its own tools
	{
		const w = world('claude-hook');
		fs.mkdirSync(path.join(w.home, '.claude'));
		fs.writeFileSync(path.join(w.home, '.claude', 'settings.json'), JSON.stringify(claudeHook, null, 2));
		const homeMode = fs.statSync(w.home).mode & 0o7777;
		const script = [
			{ tool: 'Bash', args: { command: 'chmod -R 777 ~', description: 'open up the home directory' } },
			{ tool: 'Read', args: { file_path: path.join(w.home, '.aws', 'credentials') } },
			{ tool: 'Bash', args: { command: `echo hook-allowed-${w.tag} > hook-allowed.txt`, description: 'write a file' } },
		];
		const model = await startModel({ api: 'anthropic', script, log: path.join(w.root, 'requests.jsonl') });
		const r = await run(bin, ['-p', 'Go on.', '--output-format', 'json'], { env: claudeEnv(w, model), cwd: w.ws });
		model.close();
		note(`claude -p with moat hook: ${r.ms} ms, ${model.requests.length} requests`);
		let out = {};
		try {
			out = JSON.parse(r.stdout);
		} catch {}
		ok(r.code === 0 && out.result === 'done', 'claude hook: the scripted session ran to its end', `${r.code} ${r.stdout.slice(0, 800)} ${r.stderr.slice(0, 800)}`);
		const calls = toolResults(model.requests, 'anthropic');
		const ch = find(calls, 'Bash', (a) => /chmod/.test(a.command));
		ok((fs.statSync(w.home).mode & 0o7777) === homeMode && (fs.statSync(path.join(w.home, '.ssh', 'id_rsa')).mode & 0o777) === 0o600,
			'claude hook: chmod -R 777 ~ did not run (the modes on disk)', show(ch));
		ok(ch && /moat/.test(ch.text) && /denied/.test(ch.text), "claude hook: the model is told moat's reason", show(ch));
		const rd = find(calls, 'Read');
		ok(rd && !model.requests.some((q) => q.body.includes(w.canaries.aws)), 'claude hook: ~/.aws/credentials was not read (in nothing the model receives)', show(rd));
		let allowed;
		try {
			allowed = fs.readFileSync(path.join(w.ws, 'hook-allowed.txt'), 'utf8');
		} catch {}
		ok(allowed === `hook-allowed-${w.tag}\n`, 'claude hook: an allowed command runs (its file on disk)', show(find(calls, 'Bash', (a) => /hook-allowed/.test(a.command))));
		w.cleanup();
	}
}

// ---- Codex ----
// the snippet of README.md and docs/mcp.md, and a model provider on loopback
function codexConfig(w, model) {
	return `model = "scripted-model"
model_provider = "scripted"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.scripted]
name = "scripted model"
base_url = "${model.url}/v1"
wire_api = "responses"
env_key = "SCRIPTED_MODEL_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.moat]
command = "moat"
args = ["mcp", "--workspace", "${w.ws}"]
default_tools_approval_mode = "approve"
`;
}

async function codex(bin) {
	const w = world('codex-mcp');
	const home = path.join(w.home, '.codex');
	fs.mkdirSync(home);
	const model = await startModel({ api: 'openai', script: mcpScript(w), log: path.join(w.root, 'requests.jsonl') });
	fs.writeFileSync(path.join(home, 'config.toml'), codexConfig(w, model));
	const env = { ...baseEnv(w), CODEX_HOME: home, SCRIPTED_MODEL_API_KEY: 'sk-scripted-model' };
	const r = await run(bin, ['exec', '--skip-git-repo-check', "Use moat's tools."], { env, cwd: w.ws });
	model.close();
	note(`codex exec with moat mcp: ${r.ms} ms, ${model.requests.length} requests`);
	ok(r.code === 0 && /\bdone\b/.test(r.stdout), 'codex: the scripted session ran to its end', `${r.code} ${r.signal} ${r.stdout.slice(-800)} ${r.stderr.slice(-1500)}`);
	ok(!/requires approval/.test(r.stderr + JSON.stringify(model.requests)), "codex: no call was refused by Codex's own approval (moat decides)", r.stderr.slice(-1500));
	const calls = toolResults(model.requests, 'openai');
	const { rd } = checkMcp('codex', w, model.requests, calls, 'openai');
	// what it shows the model: the structured result as JSON, after a line
	// of its own (docs/mcp.md)
	const sc = rd && structuredOf(rd.text);
	ok(sc && sc.text && sc.text.includes(w.readme) && sc.path === path.join(w.ws, 'README.md'),
		'codex: the model sees the structured result (as JSON) of a successful call', rd && rd.text);
	const e = find(calls, 'read_file', (a) => a.path === '.env');
	ok(e && !/\{"/.test(e.text) && /denied|refused/.test(e.text), 'codex: and the text of a failed one', show(e));
	w.cleanup();
}

// ---- main ----
const clients = [
	{ name: 'Claude Code', pkg: '@anthropic-ai/claude-code', bin: 'claude', fn: claude },
	{ name: 'Codex', pkg: '@openai/codex', bin: 'codex', fn: codex },
];
const only = process.argv.slice(2);
try {
	if (!MOAT || !fs.existsSync(MOAT))
		throw new Error('no moat binary (set MOAT)');
	for (const c of clients) {
		if (only.length && !only.includes(c.bin))
			continue;
		const bin = path.join(PREFIX, 'node_modules', '.bin', c.bin);
		let version = '';
		try {
			version = JSON.parse(fs.readFileSync(path.join(PREFIX, 'node_modules', c.pkg, 'package.json'), 'utf8')).version;
		} catch {}
		if (!version || !fs.existsSync(bin)) {
			skip(`${c.name}: the npm package ${c.pkg} is not installed in ${PREFIX}`);
			continue;
		}
		// the package's native binary is an optional dependency of its own
		const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'moat-agents-version-'));
		const v = spawnSync(bin, ['--version'], { env: { PATH: process.env.PATH, HOME: scratch, CODEX_HOME: scratch }, encoding: 'utf8', timeout: 30000 });
		fs.rmSync(scratch, { recursive: true, force: true });
		if (v.status !== 0) {
			skip(`${c.name}: ${bin} --version fails (is its platform package, an optional dependency, missing?): ${(v.stderr || String(v.error)).trim().slice(0, 200)}`);
			continue;
		}
		note(`${c.name} ${version}`);
		const t0 = Date.now();
		await c.fn(bin);
		note(`${c.name}: ${Date.now() - t0} ms in all`);
	}
} catch (e) {
	ok(false, `unexpected exception: ${e && e.message}`, e && e.stack);
}
console.log(`1..${n}`);
process.exitCode = failed ? 1 : 0;
