import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { GrpcStatus, UNKNOWN_ERROR_MESSAGE, createGrpcRouter, type GrpcCallContext } from './index.js';
import { clientFor, collect, connect, probeServer, start, unary, GREETER_PROTO } from './testkit.js';

type Probe = Awaited<ReturnType<typeof probeServer>>;
const md = (entries: Record<string, string | Buffer>) => {
  const m = new grpc.Metadata();
  for (const [k, v] of Object.entries(entries)) m.set(k, v);
  return m;
};

describe('when a grpc-js client calls keel', () => {
  let s: Probe;
  before(async () => {
    s = await probeServer();
  });
  after(() => s.close());

  it('should answer a unary call', async () => {
    const r = await unary(s.client, 'Unary', { text: 'hi', reply_bytes: 3, payload: Buffer.from('abcd') });
    assert.equal(r.error, undefined);
    assert.equal(r.value.text, 'hi');
    assert.deepEqual(r.value.payload, Buffer.from('aaa'));
    assert.equal(r.value.received_bytes, 4);
  });

  it('should stream every message of a server-streaming call, in order', async () => {
    const r = await collect(s.client.ServerStream({ text: 's', count: 5 }));
    assert.equal(r.status.code, GrpcStatus.OK);
    assert.deepEqual(r.messages.map((m) => m.index), [0, 1, 2, 3, 4]);
  });

  it('should hand every message of a client-streaming call to the handler', async () => {
    const value = await new Promise<any>((resolve, reject) => {
      const call = s.client.ClientStream((err: Error | null, v: unknown) => (err ? reject(err) : resolve(v)));
      for (const text of ['a', 'b', 'c']) call.write({ text, payload: Buffer.alloc(10) });
      call.end();
    });
    assert.equal(value.text, 'a,b,c');
    assert.equal(value.index, 3);
    assert.equal(value.received_bytes, 30);
  });

  it('should answer a bidirectional call message by message', async () => {
    const call = s.client.Bidi();
    const result = collect(call);
    const first = await new Promise<any>((resolve) => {
      call.once('data', resolve);
      call.write({ text: 'one' });
    });
    // The reply to the first message arrives before the client sends the second one.
    assert.equal(first.text, 'one');
    call.write({ text: 'two' });
    call.end();
    const r = await result;
    assert.equal(r.status.code, GrpcStatus.OK);
    assert.deepEqual(r.messages.map((m) => m.text), ['one', 'two']);
  });

  it('should pass request metadata, text and binary, to the handler', async () => {
    await unary(s.client, 'Unary', { text: 'md' }, md({ 'x-custom': 'v1', 'x-blob-bin': Buffer.from([0, 1, 2]) }));
    const seen = s.log.calls.at(-1)!.metadata;
    assert.equal(seen['x-custom'], 'v1');
    assert.deepEqual(seen['x-blob-bin'], Buffer.from([0, 1, 2]));
    assert.equal(seen['grpc-timeout'], undefined);
  });

  it('should end with the status code, message and trailing metadata of a GrpcError', async () => {
    const r = await unary(s.client, 'Unary', { text: 'no such user: ünïcode 100%', fail_code: GrpcStatus.NOT_FOUND });
    assert.equal(r.error?.code, GrpcStatus.NOT_FOUND);
    assert.equal(r.error?.details, 'no such user: ünïcode 100%');
    assert.deepEqual(r.error?.metadata.get('x-failed'), ['yes']);
  });

  it('should end a server stream with a GrpcError after the messages already sent', async () => {
    const router = createGrpcRouter();
    router.addService(GREETER_PROTO, 'keel.examples.v1.Greeter', {
      async *SayHelloMany() {
        yield { message: 'first' };
        throw new (await import('./status.js')).GrpcError(GrpcStatus.INTERNAL, 'Error after 1 message');
      },
    });
    const srv = await start(router);
    const client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), srv.address);
    const r = await collect(client.SayHelloMany({ name: 'x', count: 3 }));
    client.close();
    await srv.close();
    assert.deepEqual(r.messages, [{ message: 'first' }]);
    assert.equal(r.status.code, GrpcStatus.INTERNAL);
    assert.equal(r.status.details, 'Error after 1 message');
  });
});

describe('when a handler sends response metadata', () => {
  it('should deliver initial metadata in headers and trailers beside grpc-status', async () => {
    const router = createGrpcRouter();
    router.addService(GREETER_PROTO, 'keel.examples.v1.Greeter', {
      SayHello: ({ name }: { name: string }, call: GrpcCallContext) => {
        call.sendMetadata({ 'x-stream-id': 'stream-42', 'x-sig-bin': Buffer.from([9, 9]) });
        call.setTrailer('x-processed', 'true');
        return { message: name };
      },
    });
    const srv = await start(router);
    const client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), srv.address);
    const r = await unary(client, 'SayHello', { name: 'm' });
    client.close();
    await srv.close();
    assert.deepEqual(r.headers?.get('x-stream-id'), ['stream-42']);
    assert.deepEqual(r.headers?.get('x-sig-bin'), [Buffer.from([9, 9])]);
    assert.deepEqual(r.trailers?.get('x-processed'), ['true']);
  });
});

describe('when a handler fails with an ordinary error', () => {
  it('should answer UNKNOWN without the error message and report the error to onError', async () => {
    const router = createGrpcRouter();
    router.addService(GREETER_PROTO, 'keel.examples.v1.Greeter', {
      SayHello: () => {
        throw new Error('db password is hunter2');
      },
    });
    const reported: unknown[] = [];
    const srv = await start(router, {}, { onError: (err) => reported.push(err) });
    const client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), srv.address);
    const r = await unary(client, 'SayHello', { name: 'x' });
    client.close();
    await srv.close();
    assert.equal(r.error?.code, GrpcStatus.UNKNOWN);
    assert.equal(r.error?.details, UNKNOWN_ERROR_MESSAGE);
    assert.equal((reported[0] as Error).message, 'db password is hunter2');
  });
});

describe('when the method is not served', () => {
  let s: Probe;
  before(async () => {
    s = await probeServer();
  });
  after(() => s.close());

  it('should answer UNIMPLEMENTED for a method without a handler', async () => {
    const r = await unary(s.client, 'NotImplemented', {});
    assert.equal(r.error?.code, GrpcStatus.UNIMPLEMENTED);
  });

  it('should answer UNIMPLEMENTED for an unknown service', async () => {
    const client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), s.address);
    const r = await unary(client, 'SayHello', { name: 'x' });
    client.close();
    assert.equal(r.error?.code, GrpcStatus.UNIMPLEMENTED);
    assert.match(r.error!.details, /keel\.examples\.v1\.Greeter\/SayHello/);
  });

  it('should answer UNIMPLEMENTED for an unknown method of a known service', async () => {
    const r = await new Promise<grpc.ServiceError | null>((resolve) => {
      s.client.makeUnaryRequest('/keel.test.v1.Probe/Missing', (x: Buffer) => x, (x: Buffer) => x, Buffer.alloc(0), (err: grpc.ServiceError | null) => resolve(err));
    });
    assert.equal(r?.code, GrpcStatus.UNIMPLEMENTED);
  });
});
