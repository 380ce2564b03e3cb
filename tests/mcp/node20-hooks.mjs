// Module hooks for node20-shim.mjs: 'fs' -> node:fs plus globSync.
// The glob supports what the conformance suite needs: '*' and '**'
// path segments and '*' inside a name, relative to options.cwd.
const SHIM = 'moat-node20-shim:fs';

const source = `
import fs from 'node:fs';
import path from 'node:path';
export * from 'node:fs';

function segre(seg) {
	const esc = seg.replace(/[.+^\${}()|[\\]\\\\]/g, '\\\\$&').replace(/\\*/g, '[^/]*').replace(/\\?/g, '[^/]');
	return new RegExp('^' + esc + '$');
}

function match(parts, segs) {
	if (segs.length === 0)
		return parts.length === 0;
	if (segs[0] === '**') {
		for (let i = 0; i <= parts.length; i++)
			if (match(parts.slice(i), segs.slice(1)))
				return true;
		return false;
	}
	return parts.length > 0 && segre(segs[0]).test(parts[0]) && match(parts.slice(1), segs.slice(1));
}

export function globSync(patterns, options = {}) {
	const cwd = options.cwd ? String(options.cwd) : process.cwd();
	const list = Array.isArray(patterns) ? patterns : [patterns];
	const out = [];
	const walk = (rel) => {
		let ents;
		try {
			ents = fs.readdirSync(path.join(cwd, rel), { withFileTypes: true });
		} catch {
			return;
		}
		for (const e of ents) {
			const r = rel ? rel + '/' + e.name : e.name;
			if (list.some((p) => match(r.split('/'), p.split('/').filter((s) => s !== ''))))
				out.push(r);
			if (e.isDirectory() && e.name !== 'node_modules')
				walk(r);
		}
	};
	walk('');
	return out.sort();
}

const all = { ...fs, globSync };
export default all;
`;

export async function resolve(specifier, context, next) {
	if (specifier === 'fs' && context.parentURL && !context.parentURL.startsWith(SHIM))
		return { url: SHIM, shortCircuit: true };
	return next(specifier, context);
}

export async function load(url, context, next) {
	if (url === SHIM)
		return { format: 'module', source, shortCircuit: true };
	return next(url, context);
}
