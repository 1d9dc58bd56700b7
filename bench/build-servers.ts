/**
 * The benchmark servers' entry point, compiled once per run (bench/run.ts, bench/instructions.ts).
 * Servers run compiled JavaScript, as in production: under tsx every keel closure created per
 * request also pays esbuild's keepNames `__name()` call, a cost no deployed app has. `tsx` runs the
 * sources instead (no build step).
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Build bench/server.ts and what it imports (unless `tsx`) into node_modules/.cache/keel-bench[-suffix]
 * (inside node_modules, so the packages resolve); return the entry to run with node. A suffix keeps
 * two runs from deleting each other's build.
 */
export function serverEntry(tsx: boolean, suffix = ''): string {
  if (tsx) return join(here, 'server.ts');
  const buildDir = join(here, '..', 'node_modules', '.cache', `keel-bench${suffix}`);
  const entry = join(buildDir, 'bench', 'server.js');
  rmSync(buildDir, { recursive: true, force: true });
  const tsc = spawnSync(process.execPath, [join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc'), '-p', join(here, 'tsconfig.json'), '--outDir', buildDir], { encoding: 'utf8' });
  // Type errors elsewhere in a working tree still emit JavaScript; only a missing entry point is fatal.
  if (!existsSync(entry)) throw new Error(`building the benchmark servers failed:\n${tsc.stdout}${tsc.stderr}`);
  return entry;
}
