/**
 * Issue 35 item 5: one client spreading gRPC calls over many h2c sessions. max_concurrent_streams bounds one
 * session; 100 sessions × 100 calls from one address (refused RESOURCE_EXHAUSTED by the rate limit, each after
 * the guard ran) stalled `/health` 2.1–6.1 s. CI size: a few sessions against a small max_calls_per_client.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { App } from '../../lib/app.js';
import '../../lib/grpc/index.js';
import type { GrpcAttachment } from '../../lib/grpc/index.js';
import { GREETER_PROTO } from '../../lib/grpc/testkit.js';
import type { Server } from 'node:http';
import { SAFETY_MS } from './h2c.js';

const MESSAGE = Buffer.from([0, 0, 0, 0, 3, 0x0a, 0x01, 0x61]); // SayHello { name: "a" }, framed

interface CallResult { status: string; pushback?: string }

/** One unary SayHello on `session` over raw HTTP/2; the grpc-status it ended with. */
function call(session: http2.ClientHttp2Session): Promise<CallResult> {
  return new Promise((resolve) => {
    const stream = session.request({ ':method': 'POST', ':path': '/keel.examples.v1.Greeter/SayHello', 'content-type': 'application/grpc', te: 'trailers' });
    const out: CallResult = { status: 'none' };
    const take = (h: http2.IncomingHttpHeaders) => {
      if (h['grpc-status'] !== undefined) out.status = String(h['grpc-status']);
      if (h['grpc-retry-pushback-ms'] !== undefined) out.pushback = String(h['grpc-retry-pushback-ms']);
    };
    stream.on('response', take);
    stream.on('trailers', take);
    stream.on('error', (e: NodeJS.ErrnoException) => (out.status = `error ${e.code}`));
    stream.on('data', () => {});
    stream.on('close', () => resolve(out));
    stream.end(MESSAGE);
  });
}

describe('when one client spreads gRPC calls over many h2c sessions (max_calls_per_client)', () => {
  it('should run at most max_calls_per_client at once across its sessions and refuse the rest at once with RESOURCE_EXHAUSTED', async () => {
    let running = 0;
    let most = 0;
    let ran = 0;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const app = new App({ host: '127.0.0.1', port: 0, grpc: { max_calls_per_client: 20 } });
    app.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', {
      async SayHello({ name }: { name: string }) {
        ran++;
        most = Math.max(most, ++running);
        await held;
        running--;
        return { message: `Hello, ${name}` };
      },
      async *SayHelloMany() {},
    });
    const handle = await app.listen({ handleSignals: false });
    const grpc = (handle.server as Server & { grpc: GrpcAttachment }).grpc;
    const sessions = Array.from({ length: 5 }, () => http2.connect(handle.url));
    const goaways: number[] = [];
    for (const s of sessions) {
      s.on('error', () => {});
      s.on('goaway', (code) => goaways.push(code));
    }
    try {
      // 5 sessions × 40 calls (each session within its own max_concurrent_streams of 100).
      const calls = sessions.flatMap((s) => Array.from({ length: 40 }, () => call(s)));
      const deadline = Date.now() + SAFETY_MS;
      while (grpc.refusedCalls() < 180 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      // 180 refused while the first 20 are still held by their handler: refused without waiting for them.
      assert.equal(grpc.refusedCalls(), 180);
      assert.equal(running, 20);
      release();
      const results = await Promise.all(calls);
      const byStatus = new Map<string, number>();
      for (const r of results) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
      assert.deepEqual(Object.fromEntries(byStatus), { 0: 20, 8: 180 });
      assert.ok(results.filter((r) => r.status === '8').every((r) => r.pushback === '1000'), 'a retry hint on every refusal');
      assert.equal(ran, 20, 'no refused call reached its handler');
      assert.equal(most, 20);
      assert.deepEqual(goaways, [], 'no session was closed');
      // Once they ended, the client may call again.
      assert.equal((await call(sessions[0]!)).status, '0');
    } finally {
      release();
      for (const s of sessions) s.close();
      await handle.close();
    }
  });
});
