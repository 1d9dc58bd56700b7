// Runs every *.test.ts under lib/, middleware/, harness/, express/, test/ and examples/ with node's test
// runner (TypeScript through tsx). Node 20's --test takes no globs, so we list the files here.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['lib', 'middleware', 'harness', 'express', 'test', 'examples', 'bench'];
const files = [];
function walk(dir) {
  let entries;
  try { entries = readdirSync(dir); } catch { return; }
  for (const name of entries) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts')) files.push(p);
  }
}
const only = process.argv.slice(2);
if (only.length) files.push(...only); else roots.forEach(walk);
files.sort();
const args = ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...files];
const r = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? 'test' } });
process.exit(r.status ?? 1);
