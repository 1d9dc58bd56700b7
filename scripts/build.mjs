// `npm run build` (and `prepare`, so a git install builds too): a clean dist/ from tsconfig.build.json,
// then the package's bin made executable. tsc writes files with the default mode (0644 under the
// usual umask), so without this a rebuilt dist/harness/cli.js answers "Permission denied" to
// `npx keel-conformance` in a checkout (npm sets the bit itself only when it installs a package).
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

rmSync(join(root, 'dist'), { recursive: true, force: true });
const tsPackage = createRequire(join(root, 'package.json')).resolve('typescript/package.json');
const tsc = join(dirname(tsPackage), JSON.parse(readFileSync(tsPackage, 'utf8')).bin.tsc);
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);

// Every bin: add the execute bits wherever the read bits are (0644 → 0755). chmod is a no-op on Windows.
for (const bin of Object.values(typeof pkg.bin === 'string' ? { [pkg.name]: pkg.bin } : pkg.bin ?? {})) {
  const file = join(root, bin);
  const mode = statSync(file).mode & 0o777;
  chmodSync(file, mode | ((mode & 0o444) >> 2));
}
