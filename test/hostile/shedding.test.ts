/**
 * Issue 44 #9: shedding covered only expensive work, so a botnet of polite clients (199 addresses × 45 cheap requests
 * a second, each under every limit) saturated the server. Now, while the event loop's mean delay passes
 * `shed_event_loop_delay_ms`, every new HTTP request is answered 503 `overloaded` with Retry-After before routing,
 * except the health, readiness and metrics paths; each is published on `keel.shed` (onShed). The loop is made late
 * by blocking it here; the requests are written while it is blocked, so they are read right after the late window
 * is measured (what is asserted is the answer, never a time).
 */
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { App } from '../../lib/app/app.js';
import { onShed, type ShedEvent } from '../../lib/index.js';
import { warmSocket } from '../helpers/raw-http.js';

async function start(config: Record<string, unknown>) {
  const app = new App({ host: '127.0.0.1', port: 0, rate_limit: null, ...config }, { logger: pino({ level: 'silent' }) });
  app.get('/cheap', () => ({ cheap: true }));
  app.get('/health', () => ({ status: 'ok' }));
  return app.listen({ handleSignals: false });
}


function answer(s: Socket): Promise<{ status: number; retryAfter?: string; body: string }> {
  return new Promise((resolve) => {
    let text = '';
    s.on('data', (c: Buffer) => (text += c.toString('latin1')));
    s.once('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), retryAfter: /\r\nretry-after: (\S+)/i.exec(head)?.[1], body });
    });
  });
}

/** Block the loop in 150 ms slices for `ms`, then write `requests` (one per socket) during one more slice. */
async function lateLoopThen(sockets: Socket[], paths: string[], ms = 1200): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const slice = performance.now() + 150;
    while (performance.now() < slice);
    await new Promise((r) => setImmediate(r));
  }
  sockets.forEach((s, i) => s.write(`GET ${paths[i]} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
  const slice = performance.now() + 150;
  while (performance.now() < slice);
}

describe('when the event loop is late past shed_event_loop_delay_ms', () => {
  it('should answer cheap requests 503 overloaded with Retry-After, answer /health, and publish each on keel.shed', async () => {
    const server = await start({ shed_event_loop_delay_ms: 30 });
    const events: ShedEvent[] = [];
    const stop = onShed((e) => events.push(e));
    try {
      const sockets = await Promise.all([warmSocket(server.port), warmSocket(server.port)]);
      const answers = sockets.map(answer);
      await lateLoopThen(sockets, ['/cheap', '/health']);
      const [cheap, health] = await Promise.all(answers);
      assert.equal(cheap!.status, 503);
      assert.equal(cheap!.retryAfter, '1');
      const problem = JSON.parse(cheap!.body) as { type: string; reason: string };
      assert.match(problem.type, /overloaded$/);
      assert.equal(problem.reason, 'overloaded');
      assert.equal(health!.status, 200, '/health is never shed');
      assert.deepEqual(events.map((e) => [e.kind, e.reason]), [['request', 'overloaded']]);
      // Once the loop has been on time for a window, cheap requests are served again.
      await new Promise((r) => setTimeout(r, 1200));
      assert.equal((await fetch(`${server.url}/cheap`)).status, 200);
    } finally {
      stop();
      await server.close();
    }
  });

  it('should shed nothing at shed_event_loop_delay_ms: 0', async () => {
    const server = await start({ shed_event_loop_delay_ms: 0 });
    try {
      const [s] = await Promise.all([warmSocket(server.port)]);
      const pending = answer(s!);
      await lateLoopThen([s!], ['/cheap']);
      assert.equal((await pending).status, 200);
    } finally {
      await server.close();
    }
  });
});
