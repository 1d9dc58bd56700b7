/**
 * The runner's version for reports: keel's package version, read from the package.json above this
 * file (the same walk works from harness/ in the repository and from dist/harness/ once built).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** keel's version, or `unknown` if no keel package.json is found above this module. */
export function runnerVersion(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'keel' && typeof pkg.version === 'string') return (cached = pkg.version);
    }
    const up = dirname(dir);
    if (up === dir) return (cached = 'unknown');
    dir = up;
  }
}
