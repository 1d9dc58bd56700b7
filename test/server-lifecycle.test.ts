/**
 * Serving an App over real loopback sockets: binding from ServerConfig, graceful shutdown with
 * in-flight and idle keep-alive connections, the forced close after shutdown_timeout, lifecycle
 * hooks, and a `workers: 2` cluster in a child process.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { App } from '../lib/app/app.js';
import { AppError } from '../lib/http/errors.js';
import { freePort } from '../harness/conformance/exec.js';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on its own connection (no agent), resolved with the whole reply. */
function get(url: string, agent: http.Agent | false = false): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** A promise with its resolve function, so a test can hold a handler open. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

describe('when an App listens', () => {
  it('should bind the host and port of its ServerConfig (port 0: a free port)', async () => {
    const app = new App({ host: '127.0.0.1', port: 0 });
    app.get('/hi', () => ({ hi: true }));
    const handle = await app.listen({ handleSignals: false });
    try {
      assert.equal(handle.host, '127.0.0.1');
      assert.ok(handle.port > 0);
      assert.equal(handle.url, `http://127.0.0.1:${handle.port}`);
      const r = await get(`${handle.url}/hi`);
      assert.equal(r.status, 200);
      assert.deepEqual(JSON.parse(r.body), { hi: true });
    } finally {
      await handle.close();
    }
  });

  it('should ignore the PORT environment variable (not the App\'s business)', async () => {
    const busy = await freePort();
    const saved = process.env.PORT;
    process.env.PORT = String(busy);
    const app = new App({ port: 0 });
    const handle = await app.listen({ handleSignals: false });
    try {
      assert.notEqual(handle.port, busy);
    } finally {
      if (saved === undefined) delete process.env.PORT;
      else process.env.PORT = saved;
      await handle.close();
    }
  });

  it('should let listen() options override the configured port', async () => {
    const port = await freePort();
    const handle = await new App({ port: 8000 }).listen({ port, handleSignals: false });
    try {
      assert.equal(handle.port, port);
    } finally {
      await handle.close();
    }
  });

  it('should reject with AppError(Server) when the port is taken', async () => {
    const first = await new App({ port: 0 }).listen({ handleSignals: false });
    try {
      await assert.rejects(new App({ port: first.port }).listen({ handleSignals: false }), (err: unknown) => err instanceof AppError && err.kind === 'Server');
    } finally {
      await first.close();
    }
  });

  it('should run onStart with the handle and onShutdown on close', async () => {
    const events: string[] = [];
    const app = new App({ port: 0 });
    app.onStart((h, a) => {
      events.push(`start:${h.port > 0}:${a === app}`);
    });
    app.onShutdown(async () => {
      await new Promise((r) => setImmediate(r));
      events.push('shutdown');
    });
    const handle = await app.listen({ handleSignals: false });
    await handle.close();
    assert.deepEqual(events, ['start:true:true', 'shutdown']);
  });

  it('should make close() idempotent', async () => {
    const handle = await new App({ port: 0 }).listen({ handleSignals: false });
    const a = handle.close();
    const b = handle.close();
    assert.equal(a, b);
    await a;
  });
});

describe('when a listening App shuts down gracefully', () => {
  it('should finish an in-flight request, then refuse new connections', async () => {
    const arrived = gate();
    const release = gate();
    const app = new App({ port: 0, shutdown_timeout: 30 });
    app.get('/slow', async () => {
      arrived.open();
      await release.opened;
      return { done: true };
    });
    const handle = await app.listen({ handleSignals: false });
    const slow = get(`${handle.url}/slow`);
    await arrived.opened;

    let closed = false;
    const closing = handle.close().then(() => (closed = true));
    // close() is under way: the listening socket is gone, the slow request is not.
    await assert.rejects(get(`${handle.url}/slow`), (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED');
    assert.equal(closed, false, 'close() waits for the in-flight request');

    release.open();
    const reply = await slow;
    assert.equal(reply.status, 200);
    assert.deepEqual(JSON.parse(reply.body), { done: true });
    assert.equal(reply.headers.connection, 'close', 'the client is told not to reuse the connection');
    await closing;
    assert.equal(closed, true);
  });

  it('should close idle keep-alive connections instead of waiting for them', async () => {
    const app = new App({ port: 0, shutdown_timeout: 30 });
    app.get('/hi', () => 'hi');
    const handle = await app.listen({ handleSignals: false });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const r = await get(`${handle.url}/hi`, agent);
      assert.equal(r.status, 200);
      const idle = Object.values(agent.freeSockets).flat()[0];
      assert.ok(idle, 'the agent keeps the socket open for reuse');
      // The agent unrefs its free sockets; ref it so waiting for its close keeps the test alive.
      idle.ref();
      const socketClosed = once(idle, 'close');
      await handle.close();
      await socketClosed;
      assert.equal(idle.destroyed, true);
    } finally {
      agent.destroy();
    }
  });

  it('should force-close connections still open after shutdown_timeout', async () => {
    const arrived = gate();
    const app = new App({ port: 0, shutdown_timeout: 1 });
    app.get('/never', () => {
      arrived.open();
      return new Promise(() => undefined);
    });
    const handle = await app.listen({ handleSignals: false });
    const hanging = get(`${handle.url}/never`);
    const outcome = hanging.then(
      () => 'answered',
      (err: NodeJS.ErrnoException) => err.code ?? err.message,
    );
    await arrived.opened;
    const started = process.hrtime.bigint();
    await handle.close();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    assert.ok(seconds >= 0.9, `close() gave the request its shutdown_timeout (${seconds.toFixed(2)} s)`);
    assert.ok(seconds < 10, `close() did not wait for the handler (${seconds.toFixed(2)} s)`);
    assert.equal(await outcome, 'ECONNRESET', 'the client sees the connection closed');
  });
});

describe('when the ServerConfig asks for workers: 2', () => {
  const script = fileURLToPath(new URL('./fixtures/cluster-app.ts', import.meta.url));

  it('should answer from two worker processes and exit 0 on SIGTERM to the primary', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', script, String(port)], {
      env: { ...process.env, NODE_ENV: 'test', KEEL_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    try {
      const ready = await new Promise<{ pid: number; port: number }>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          const line = out.split('\n').find((l) => l.startsWith('{'));
          if (line) resolve(JSON.parse(line));
        });
        void exited.then(([code]) => reject(new Error(`cluster exited early (${code}): ${stderr}`)));
      });
      assert.equal(ready.port, port);

      const pids = new Set<number>();
      for (let i = 0; i < 20 && pids.size < 2; i++) {
        const r = await get(`http://127.0.0.1:${port}/pid`);
        assert.equal(r.status, 200);
        pids.add((JSON.parse(r.body) as { pid: number }).pid);
      }
      assert.equal(pids.size, 2, `two distinct workers answered: ${[...pids].join(', ')}`);
      assert.equal(pids.has(ready.pid), false, 'the primary serves no requests itself');
      assert.equal(pids.has(child.pid!), false);

      child.kill('SIGTERM');
      const [code, signal] = await exited;
      assert.equal(signal, null, stderr);
      assert.equal(code, 0, stderr);
      await assert.rejects(get(`http://127.0.0.1:${port}/pid`), (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
