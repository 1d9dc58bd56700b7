import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';

// `npm install` runs `prepare`, which builds dist/; these imports go through package.json "exports"
// exactly as a user's would (a package may import itself by name).
const built = existsSync(new URL('../dist/lib/index.js', import.meta.url));
const middleware = readdirSync(new URL('../middleware/', import.meta.url));

describe('when keel is imported through its package exports', { skip: built ? false : 'dist/ is not built (run npm run build)' }, () => {
  it('should expose createApp and the records from "keel", with types', async () => {
    const keel = await import('keel');
    assert.equal(typeof keel.createApp, 'function');
    assert.equal(typeof keel.ServerConfig.parse, 'function');
    assert.ok(existsSync(new URL('../dist/lib/index.d.ts', import.meta.url)));
  });

  for (const name of middleware) {
    it(`should expose a factory from "keel/middleware/${name}", with types`, async () => {
      const mod = (await import(`keel/middleware/${name}`)) as Record<string, unknown>;
      const camel = name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      assert.equal(typeof mod[camel], 'function', `keel/middleware/${name} exports ${camel}()`);
      assert.ok(existsSync(new URL(`../dist/middleware/${name}/index.d.ts`, import.meta.url)));
    });
  }

  it('should expose the harness from "keel/harness"', async () => {
    const harness = await import('keel/harness');
    assert.equal(typeof harness.snapshotResponse, 'function');
  });
});
