/**
 * Attack replay (issue 13, item 6): 1,000 SayHello calls as fast as one client can send them, against a
 * server-level limit of 50/s (burst 100). They all succeeded before; now the calls beyond the bucket end
 * with RESOURCE_EXHAUSTED and a retry hint (`grpc-retry-pushback-ms`).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApp } from '../../lib/app/app.js';
import '../../lib/grpc/index.js';
import { GrpcStatus } from '../../lib/grpc/index.js';
import { clientFor, connect, unary, GREETER_PROTO } from '../../lib/grpc/testkit.js';

describe('when a client floods gRPC calls past the server-level rate limit', () => {
  it('should serve the burst plus the refill and refuse the rest with RESOURCE_EXHAUSTED', async () => {
    const app = createApp({ host: '127.0.0.1', port: 0, grpc: {}, rate_limit: { per_second: 50, burst: 100 } }, (a) =>
      a.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', { SayHello: ({ name }: { name: string }) => ({ message: `Hello, ${name}` }), async *SayHelloMany() {} }));
    const handle = await app.listen({ handleSignals: false });
    const client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), `127.0.0.1:${handle.port}`);
    try {
      const started = Date.now();
      const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => unary(client, 'SayHello', { name: `n${i}` })));
      const seconds = (Date.now() - started) / 1000;
      const ok = results.filter((r) => r.value).length;
      const refused = results.filter((r) => r.error?.code === GrpcStatus.RESOURCE_EXHAUSTED);
      assert.ok(ok >= 100, `the burst was served (${ok})`);
      assert.ok(ok <= 100 + Math.ceil(50 * seconds) + 1, `${ok} calls served in ${seconds.toFixed(2)} s`);
      assert.equal(ok + refused.length, 1000, 'every other call was refused with RESOURCE_EXHAUSTED');
      assert.ok(refused.every((r) => Number(r.error!.metadata.get('grpc-retry-pushback-ms')[0]) >= 1000));
    } finally {
      client.close();
      await handle.close();
    }
  });
});
