import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('./index.ts', import.meta.url));

/** Starts a keel/express app in a child process whose GET /slow answers after 300 ms; resolves with its port. */
function startApp(settings: string) {
  const code = `
    import express from ${JSON.stringify(entry)};
    const app = express();
    ${settings}
    app.get('/slow', (req, res) => { console.log('started'); setTimeout(() => res.send('finished'), 300); });
    const server = app.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waitFor = (prefix: string) => new Promise<string>((resolve) => {
    const check = () => { const l = lines.find((x) => x.startsWith(prefix)); if (l) { child.stdout.off('data', onData); resolve(l); } };
    const onData = (d: Buffer) => { lines.push(...String(d).split('\n')); check(); };
    child.stdout.on('data', onData);
    check();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, waitFor, exited };
}

function get(port: number): Promise<{ status?: number; body?: string; error?: string }> {
  return new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: '/slow', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
      res.on('error', (e) => resolve({ error: e.message }));
    }).on('error', (e) => resolve({ error: e.message }));
  });
}

describe("when app.set('graceful shutdown') is on and the process gets SIGTERM mid-request", () => {
  it('should finish the in-flight request, then exit 0', async () => {
    const app = startApp("app.set('graceful shutdown', { timeout_ms: 5000 });");
    const port = Number((await app.waitFor('port ')).slice(5));
    const pending = get(port);
    await app.waitFor('started');
    app.child.kill('SIGTERM');
    assert.deepEqual(await pending, { status: 200, body: 'finished' });
    assert.equal(await app.exited, 0);
  });

  it('should lose the in-flight request without it (as with Express)', async () => {
    const app = startApp('');
    const port = Number((await app.waitFor('port ')).slice(5));
    const pending = get(port);
    await app.waitFor('started');
    app.child.kill('SIGTERM');
    const result = await pending;
    assert.ok(result.error, `expected the request to fail, got ${JSON.stringify(result)}`);
    await app.exited;
  });
});

describe("when app.set('connection limits') is given", () => {
  it("should put keel's deadlines on the server app.listen() returns, and refuse a bad value when listening", async () => {
    const { default: express } = await import('./index.js');
    const app = express();
    app.set('connection limits', { headers_timeout_ms: 1234, request_receive_timeout_ms: 5000, keep_alive_timeout_ms: 777 });
    const server: http.Server = app.listen(0, '127.0.0.1');
    try {
      assert.deepEqual([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout], [1234, 5000, 777]);
    } finally {
      server.close();
    }
    const bad = express();
    bad.set('connection limits', { headers_timeout_ms: -1 });
    assert.throws(() => bad.listen(0), /headers_timeout_ms/);
    const plain: http.Server = express().listen(0, '127.0.0.1');
    try {
      assert.notEqual(plain.headersTimeout, 1234);
    } finally {
      plain.close();
    }
  });
});
