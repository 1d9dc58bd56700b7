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
import * as grpc from '@grpc/grpc-js';
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

describe('when an App serving gRPC shuts down while a client keeps a client stream open and a unary call runs', () => {
  it('should end the open client stream UNAVAILABLE after grpc.shutdown_stream_grace, let the unary call finish, and close long before shutdown_timeout', { timeout: 60_000 }, async () => {
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    let streamed!: () => void;
    const firstName = new Promise<void>((r) => (streamed = r));
    // Issue 44 item 10: an open client stream held shutdown 28 s (its whole shutdown_timeout).
    const app = createApp({ host: '127.0.0.1', port: 0, grpc: { shutdown_stream_grace: 1 }, shutdown_timeout: 20 }, (a) => {
      a.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', {
        async SayHello({ name }: { name: string }) {
          entered();
          // Longer than the stream grace: a unary call in flight is not cut by it.
          await new Promise((r) => setTimeout(r, 2000));
          return { message: `Hello, ${name}` };
        },
        async *SayHelloMany() {},
        async GreetAll(names: AsyncIterable<{ name: string }>) {
          const kept: string[] = [];
          for await (const { name } of names) (kept.push(name), streamed());
          return { message: `Hello, ${kept.join(', ')}` };
        },
      });
    });
    const handle = await app.listen({ handleSignals: false });
    const client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), `127.0.0.1:${handle.port}`);
    try {
      const open = new Promise<grpc.ServiceError | null>((resolve) => {
        const call = client.GreetAll((err: grpc.ServiceError | null) => resolve(err));
        call.write({ name: 'first' }); // and never end it: an idle client stream
      });
      await firstName;
      const inFlight = unary(client, 'SayHello', { name: 'late' });
      await inHandler;
      const started = Date.now();
      const closed = handle.close();
      const [streamErr, done] = await Promise.all([open, inFlight]);
      await closed;
      const took = Date.now() - started;
      assert.equal(done.value?.message, 'Hello, late', `the in-flight unary call finished: ${done.error?.message}`);
      assert.equal(streamErr?.code, GrpcStatus.UNAVAILABLE, `the open client stream: ${streamErr?.message}`);
      // Before: close() waited for the client stream until shutdown_timeout (20 s).
      assert.ok(took < 10_000, `close() took ${took} ms`);
    } finally {
      client.close();
    }
  });
});
