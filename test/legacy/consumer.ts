/**
 * A consumer project as a user has it (issue 43): a temporary folder whose node_modules/keel is the packed tarball,
 * unpacked (what `npm install keel` puts there: only the files "files" ships, through package.json "exports"), and
 * whose other packages (express@4, jest, mocha, vitest, typescript…) resolve to the repository's node_modules through
 * a node_modules symlink one folder up, so no test installs from the registry. Needs a built dist/ (npm run build).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BUILT = existsSync(join(ROOT, 'dist/lib/index.js')) && existsSync(join(ROOT, 'dist/lib/index.mjs'));
/** Why the consumer tests skip, or false. */
export const SKIP = BUILT ? false : 'dist/ is not built (run npm run build)';
/** One child process (a test runner, tsc): bounded, so a hung tool fails the test instead of stalling CI. */
export const RUN_TIMEOUT_MS = 60_000;

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

export interface Consumer {
  /** The project folder (package.json, sources, node_modules/keel). */
  dir: string;
  /** Run `args` with node in the project; stdout and stderr together. */
  node(args: string[], env?: Record<string, string>): { status: number | null; out: string };
  /** Remove everything the consumer wrote. */
  remove(): void;
}

/**
 * A fresh project with `files` (path → text) and keel unpacked from `npm pack` of the repository.
 * `type` is the project's package.json "type" (a legacy app is CommonJS).
 */
export function consumer(files: Record<string, string>, type: 'commonjs' | 'module' = 'commonjs'): Consumer {
  const base = mkdtempSync(join(tmpdir(), 'keel-legacy-'));
  symlinkSync(join(ROOT, 'node_modules'), join(base, 'node_modules'), 'dir');
  const dir = join(base, 'app');
  const keel = join(dir, 'node_modules', 'keel');
  mkdirSync(keel, { recursive: true });
  // --ignore-scripts: dist/ is what `npm run build` wrote; rebuilding it here would race other tests reading it.
  const packed = JSON.parse(execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', base], { cwd: ROOT, encoding: 'utf8' })) as { filename: string }[];
  execFileSync('tar', ['-xzf', join(base, packed[0]!.filename), '-C', keel, '--strip-components=1']);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'legacy-app', private: true, type }, null, 2));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return {
    dir,
    node(args, env = {}) {
      const r = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8', timeout: RUN_TIMEOUT_MS, env: { ...process.env, NODE_ENV: 'test', NODE_OPTIONS: '', CI: 'true', ...env } });
      return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
    },
    remove() {
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** The bin script of a package in the repository's node_modules (`jest30` → its jest.js). */
export function binOf(pkg: string, bin: string): string {
  const manifest = (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { bin: string | Record<string, string> }).bin;
  return join(ROOT, 'node_modules', pkg, typeof manifest === 'string' ? manifest : manifest[bin]!);
}
