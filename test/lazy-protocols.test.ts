// Protocol modules load on first use (lib/builtins.ts). These tests run under tsx, whose CommonJS
// require hook cannot hand the App the ES module itself: the App must say which import is missing
// rather than run a second copy of keel. (Compiled apps: test/package-exports.test.ts.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { App, AppError } from '../lib/index.js';

describe('when a protocol module was not imported and cannot be loaded on demand', () => {
  it('should throw an AppError that names the import to add', () => {
    const app = new App({ port: 0 });
    assert.throws(() => app.ws('/chat', () => undefined), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.kind, 'Server');
      assert.match(err.message, /import 'keel\/ws'/);
      return true;
    });
  });

  it('should throw it when the App is built for a protocol turned on by its config', () => {
    const app = new App({ port: 0, openapi: { enabled: true } });
    assert.throws(() => app.intoRouter(), (err: unknown) => err instanceof AppError && /import 'keel\/openapi'/.test(err.message));
  });
});

describe('when the protocol module is imported', () => {
  it('should register its routes on the App', async () => {
    await import('../lib/jsonrpc/index.js');
    const app = new App({ port: 0, jsonrpc: { enabled: true } });
    app.rpc('ping', () => 'pong');
    app.intoRouter();
    assert.deepEqual(app.mounts().map((m) => m.path), ['/rpc']);
  });
});
