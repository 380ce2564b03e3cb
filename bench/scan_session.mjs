// One `moat mcp` session in the workspace WS: BENCH_N bash calls of
// `true` one at a time after a warm-up, BENCH_GAP_MS apart (default 50),
// through the official SDK client; prints the median wall time of a call
// in milliseconds. Started by bench/scan.sh.
//
//   MOAT=build/moat MOAT_NPM_PREFIX=/opt/moat-npm WS=DIR CONFIG=FILE node bench/scan_session.mjs
import { createRequire } from 'node:module';
import path from 'node:path';

const PREFIX = process.env.MOAT_NPM_PREFIX || '/opt/moat-npm';
const require = createRequire(path.join(PREFIX, 'resolve-from-here.js'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const N = Number(process.env.BENCH_N || 30);
const GAP = Number(process.env.BENCH_GAP_MS || 50);
const ws = process.env.WS;
const transport = new StdioClientTransport({
	command: process.env.MOAT, args: ['mcp', '--workspace', ws, '--config', process.env.CONFIG, '--audit-log', '/dev/null'], cwd: ws,
	env: { PATH: '/usr/bin:/bin', HOME: process.env.HOME || '/root' },
});
const client = new Client({ name: 'scan-bench', version: '1' });
await client.connect(transport);
const call = async () => {
	const r = await client.callTool({ name: 'bash', arguments: { command: 'true' } });
	if (r.isError)
		throw new Error(JSON.stringify(r));
};
for (let i = 0; i < 5; i++)
	await call();
const t = [];
for (let i = 0; i < N; i++) {
	// the agent thinks between calls: the runner arms the next sandbox then
	await new Promise((res) => setTimeout(res, GAP));
	const t0 = process.hrtime.bigint();
	await call();
	t.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
t.sort((a, b) => a - b);
console.log(t[Math.floor(t.length / 2)].toFixed(2));
await client.close();
