// Node 20 lacks fs.globSync (added in Node 22), which the MCP conformance
// suite imports by name. Loaded with `node --import`, this registers a
// resolve hook (node20-hooks.mjs) that serves the bare specifier 'fs' from
// a module re-exporting node:fs plus a small globSync. Newer Node: no-op.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function')
	register('./node20-hooks.mjs', import.meta.url);
