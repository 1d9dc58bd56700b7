/**
 * What `npm run build` (which `npm test` runs first, and `prepack` before a tarball is packed) leaves in dist/: the
 * package's bin is executable, so `npx keel-conformance` runs in a checkout as it does once installed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };
const built = existsSync(join(root, 'dist/lib/index.js'));

describe('when the package is built', { skip: !built ? 'dist/ is not built (run npm run build)' : process.platform === 'win32' ? 'Windows has no execute bit' : false }, () => {
  for (const [name, file] of Object.entries(pkg.bin)) {
    it(`should leave the ${name} bin (${file}) executable, with its shebang`, () => {
      const mode = statSync(join(root, file)).mode;
      assert.equal(mode & 0o111, 0o111, `mode ${(mode & 0o777).toString(8)}: run npm run build`);
      assert.match(readFileSync(join(root, file), 'utf8'), /^#!\/usr\/bin\/env node\n/);
    });
  }

  it('should build through the one script that sets the mode (build and prepack alike), with no install-time build', () => {
    assert.equal(pkg.scripts.build, 'node scripts/build.mjs');
    assert.equal(pkg.scripts.prepack, pkg.scripts.build);
    // An install-time script of keel's own runs in every app that installs the tarball (npm warns, npm 12 blocks).
    assert.equal(pkg.scripts.prepare, undefined);
  });
});
