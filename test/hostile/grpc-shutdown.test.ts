/**
 * Graceful shutdown with gRPC on the same port (issue 13, item 4): the HTTP/2 side gets GOAWAY when
 * shutdown begins (a preShutdown hook, beside the HTTP/1.1 drain), running calls finish, new calls are
 * refused, and close() does not wait for shutdown_timeout.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApp } from '../../lib/app/app.js';
import '../../lib/grpc/index.js';
import { GrpcStatus } from '../../lib/grpc/index.js';
import { clientFor, connect, unary, GREETER_PROTO } from '../../lib/grpc/testkit.js';

describe('when an App serving gRPC shuts down with a call in flight', () => {
  it('should let the call finish, refuse new ones, and close long before shutdown_timeout', async () => {
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    const app = createApp({ host: '127.0.0.1', port: 0, grpc: {}, shutdown_timeout: 20 }, (a) => {
      a.get('/hello', () => ({ hello: 'http' }));
      a.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', {
        async SayHello({ name }: { name: string }) {
          entered();
          await new Promise((r) => setTimeout(r, 300));
          return { message: `Hello, ${name}` };
        },
        async *SayHelloMany() {},
      });
    });
    const handle = await app.listen({ handleSignals: false });
    const client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), `127.0.0.1:${handle.port}`);
    try {
      const inFlight = unary(client, 'SayHello', { name: 'late' });
      await inHandler;
      const started = Date.now();
      const closed = handle.close();
      const refused = await unary(client, 'SayHello', { name: 'new' }, undefined, { deadline: Date.now() + 3000 });
      const done = await inFlight;
      await closed;
      assert.equal(done.value?.message, 'Hello, late', `the in-flight call finished: ${done.error?.message}`);
      assert.ok(refused.error, 'a call started after shutdown began is refused');
      assert.ok([GrpcStatus.UNAVAILABLE, GrpcStatus.DEADLINE_EXCEEDED].includes(refused.error!.code as never), refused.error!.message);
      assert.ok(Date.now() - started < 5000, `close() took ${Date.now() - started} ms`);
    } finally {
      client.close();
    }
  });
});
