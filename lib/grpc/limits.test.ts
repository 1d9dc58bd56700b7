import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { GrpcStatus, frameMessage } from './index.js';
import { collect, encodeProbe, probeServer, unary } from './testkit.js';
import { rawCall } from './h2raw.js';

type Probe = Awaited<ReturnType<typeof probeServer>>;
const UNARY = '/keel.test.v1.Probe/Unary';

describe('when a request message is larger than max_message_size', () => {
  let s: Probe;
  before(async () => {
    s = await probeServer({ max_message_size: 1024 });
  });
  after(() => s.close());

  it('should accept a message just under the limit', async () => {
    const r = await unary(s.client, 'Unary', { payload: Buffer.alloc(1000) });
    assert.equal(r.error, undefined);
    assert.equal(r.value.received_bytes, 1000);
  });

  it('should make a grpc-js client report RESOURCE_EXHAUSTED without calling the handler', async () => {
    const before = s.log.calls.length;
    const r = await unary(s.client, 'Unary', { text: 'big', payload: Buffer.alloc(2000) });
    assert.equal(r.error?.code, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.match(r.error!.details, /exceeds max_message_size \(1024\)/);
    assert.equal(s.log.calls.length, before);
  });

  it('should answer HTTP 413 with grpc-status RESOURCE_EXHAUSTED', async () => {
    const r = await rawCall(s.address, UNARY, [encodeProbe('ProbeRequest', { payload: Buffer.alloc(2000) })]);
    assert.equal(r.headers[':status'], 413);
    assert.equal(r.grpcStatus, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.equal(r.body.length, 0);
  });

  it('should reject a small gzip message that inflates past the limit', async () => {
    const bomb = gzipSync(encodeProbe('ProbeRequest', { payload: Buffer.alloc(100_000) }));
    assert.ok(bomb.length < 1024);
    const r = await rawCall(s.address, UNARY, [frameMessage(bomb, true)], { 'grpc-encoding': 'gzip' }, { framed: false });
    assert.equal(r.headers[':status'], 413);
    assert.equal(r.grpcStatus, GrpcStatus.RESOURCE_EXHAUSTED);
  });

  it('should cap each message of a client stream, not their total', async () => {
    const value = await new Promise<any>((resolve, reject) => {
      const call = s.client.ClientStream((err: Error | null, v: unknown) => (err ? reject(err) : resolve(v)));
      for (let i = 0; i < 10; i++) call.write({ payload: Buffer.alloc(1000) });
      call.end();
    });
    assert.equal(value.received_bytes, 10_000);
  });
});

describe('when a response message is larger than max_message_size', () => {
  let s: Probe;
  before(async () => {
    s = await probeServer({ max_message_size: 1024 });
  });
  after(() => s.close());

  it('should end a unary call with RESOURCE_EXHAUSTED and send no message', async () => {
    const r = await unary(s.client, 'Unary', { reply_bytes: 2000 });
    assert.equal(r.value, undefined);
    assert.equal(r.error?.code, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.match(r.error!.details, /Response message of \d+ bytes exceeds max_message_size \(1024\)/);
  });

  it('should end a server stream with RESOURCE_EXHAUSTED at the first oversize message', async () => {
    const r = await collect(s.client.ServerStream({ reply_bytes: 2000, count: 3 }));
    assert.equal(r.messages.length, 0);
    assert.equal(r.status.code, GrpcStatus.RESOURCE_EXHAUSTED);
  });
});

describe('when a streaming response would exceed max_stream_response_bytes', () => {
  const reply = (index: number) => encodeProbe('ProbeReply', { text: 's', index, payload: Buffer.alloc(100, 0x61) }).length + 5;
  // Room for exactly three framed replies.
  const cap = reply(0) + reply(1) + reply(2) + reply(3) - 1;
  let s: Probe;
  before(async () => {
    s = await probeServer({ max_stream_response_bytes: cap });
  });
  after(() => s.close());

  it('should deliver the messages that fit, then RESOURCE_EXHAUSTED', async () => {
    const r = await collect(s.client.ServerStream({ text: 's', count: 10, reply_bytes: 100 }));
    assert.deepEqual(r.messages.map((m) => m.index), [0, 1, 2]);
    assert.equal(r.status.code, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.match(r.status.details, /max_stream_response_bytes/);
  });

  it('should apply the cap to bidirectional streams', async () => {
    const call = s.client.Bidi();
    const result = collect(call);
    for (let i = 0; i < 6; i++) call.write({ text: 's', reply_bytes: 100 });
    call.end();
    const r = await result;
    assert.equal(r.messages.length, 3);
    assert.equal(r.status.code, GrpcStatus.RESOURCE_EXHAUSTED);
  });

  it('should not apply the cap to a unary response', async () => {
    const r = await unary(s.client, 'Unary', { reply_bytes: cap * 2 });
    assert.equal(r.error, undefined);
    assert.equal(r.value.payload.length, cap * 2);
  });
});

describe('when messages are compressed', () => {
  let s: Probe;
  before(async () => {
    s = await probeServer({}, {}, { 'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip });
  });
  after(() => s.close());

  it('should read gzip request messages from a grpc-js client', async () => {
    const r = await unary(s.client, 'Unary', { payload: Buffer.alloc(50_000, 0x62) });
    assert.equal(r.error, undefined);
    assert.equal(r.value.received_bytes, 50_000);
  });

  it('should gzip large response messages for a client that accepts gzip', async () => {
    const r = await rawCall(s.address, UNARY, [encodeProbe('ProbeRequest', { reply_bytes: 5000 })], { 'grpc-accept-encoding': 'gzip' });
    assert.equal(r.grpcStatus, GrpcStatus.OK);
    assert.equal(r.headers['grpc-encoding'], 'gzip');
    assert.equal(r.body[0], 1, 'compressed flag');
    assert.ok(r.body.length < 1000);
  });

  it('should send response messages uncompressed to a client that does not accept gzip', async () => {
    const r = await rawCall(s.address, UNARY, [encodeProbe('ProbeRequest', { reply_bytes: 5000 })]);
    assert.equal(r.headers['grpc-encoding'], undefined);
    assert.equal(r.body[0], 0);
  });

  it('should answer UNIMPLEMENTED to an unknown grpc-encoding and list the known ones', async () => {
    const r = await rawCall(s.address, UNARY, [encodeProbe('ProbeRequest', {})], { 'grpc-encoding': 'snappy' });
    assert.equal(r.grpcStatus, GrpcStatus.UNIMPLEMENTED);
    assert.match(String(r.headers['grpc-accept-encoding']), /gzip/);
  });
});

describe('when enable_compression is false', () => {
  let s: Probe;
  before(async () => {
    s = await probeServer({ enable_compression: false });
  });
  after(() => s.close());

  it('should answer UNIMPLEMENTED to a gzip request and accept only identity', async () => {
    const r = await rawCall(s.address, UNARY, [frameMessage(gzipSync(encodeProbe('ProbeRequest', {})), true)], { 'grpc-encoding': 'gzip' }, { framed: false });
    assert.equal(r.grpcStatus, GrpcStatus.UNIMPLEMENTED);
    assert.equal(r.headers['grpc-accept-encoding'], 'identity');
  });

  it('should never compress responses', async () => {
    const r = await rawCall(s.address, UNARY, [encodeProbe('ProbeRequest', { reply_bytes: 5000 })], { 'grpc-accept-encoding': 'gzip' });
    assert.equal(r.grpcStatus, GrpcStatus.OK);
    assert.equal(r.body[0], 0);
  });
});

describe('when a call runs past its deadline', () => {
  let s: Probe;
  before(async () => {
    s = await probeServer({ request_timeout: 1 });
  });
  after(() => s.close());

  it('should end the call with DEADLINE_EXCEEDED after request_timeout and abort the handler', async () => {
    const r = await unary(s.client, 'Unary', { delay_ms: -1 });
    assert.equal(r.error?.code, GrpcStatus.DEADLINE_EXCEEDED);
    assert.ok(s.log.aborted.includes(UNARY));
  });

  it('should honour a shorter grpc-timeout header', async () => {
    const r = await rawCall(s.address, UNARY, [encodeProbe('ProbeRequest', { delay_ms: -1 })], { 'grpc-timeout': '50m' });
    assert.equal(r.grpcStatus, GrpcStatus.DEADLINE_EXCEEDED);
    assert.equal(r.grpcMessage, 'Deadline exceeded');
  });

  it('should abort the handler when a grpc-js client deadline passes', async () => {
    const aborted = s.log.aborted.length;
    const r = await unary(s.client, 'Unary', { delay_ms: -1 }, new grpc.Metadata(), { deadline: Date.now() + 100 });
    assert.equal(r.error?.code, GrpcStatus.DEADLINE_EXCEEDED);
    for (let i = 0; i < 50 && s.log.aborted.length === aborted; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(s.log.aborted.length, aborted + 1);
  });

  it('should end a server stream with DEADLINE_EXCEEDED after the messages sent in time', async () => {
    const r = await rawCall(s.address, '/keel.test.v1.Probe/ServerStream', [encodeProbe('ProbeRequest', { delay_ms: -1, count: 1 })], { 'grpc-timeout': '20m' });
    assert.equal(r.grpcStatus, GrpcStatus.DEADLINE_EXCEEDED);
  });
});

describe('when grpc-timeout is beyond node\'s timer range and request_timeout is unset', () => {
  it('should treat it as no deadline', async () => {
    const s = await probeServer();
    const r = await rawCall(s.address, UNARY, [encodeProbe('ProbeRequest', { text: 'far', delay_ms: 20 })], { 'grpc-timeout': '99999999H' });
    await s.close();
    assert.equal(r.grpcStatus, GrpcStatus.OK);
  });
});

describe('when a client opens more streams than max_concurrent_streams', () => {
  let s: Probe;
  before(async () => {
    s = await probeServer({ max_concurrent_streams: 2 });
  });
  after(() => s.close());

  it('should advertise the limit in its HTTP/2 SETTINGS', async () => {
    const session = http2.connect(`http://${s.address}`);
    const settings = await new Promise<http2.Settings>((resolve) => session.once('remoteSettings', resolve));
    session.close();
    assert.equal(settings.maxConcurrentStreams, 2);
  });

  it('should run at most that many calls of one connection at once and complete them all', async () => {
    const calls = Array.from({ length: 5 }, () => unary(s.client, 'Unary', { delay_ms: -2 }));
    const settle = async (n: number) => {
      for (let i = 0; i < 200 && s.log.release.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    };
    await settle(2);
    // Give the extra streams every chance to arrive: they must not.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(s.log.inFlight, 2);
    for (let released = 0; released < 5; released++) {
      await settle(released + 1);
      s.log.release[released]!();
    }
    const results = await Promise.all(calls);
    assert.deepEqual(results.map((r) => r.error?.code ?? 0), [0, 0, 0, 0, 0]);
    assert.equal(s.log.maxInFlight, 2);
  });
});

describe('when a client stream passes max_stream_request_bytes or max_stream_request_messages', () => {
  let s: Probe;
  before(async () => {
    s = await probeServer({ max_message_size: 4096, max_stream_request_bytes: 10_000, max_stream_request_messages: 50 });
  });
  after(() => s.close());

  /** A client stream writing `count` messages (paced by grpc-js's write callbacks); its status. */
  const clientStream = (count: number, payload: number) =>
    new Promise<{ value?: any; error?: grpc.ServiceError }>((resolve) => {
      const call = s.client.ClientStream((error: grpc.ServiceError | null, value: unknown) => resolve(error ? { error } : { value }));
      call.on('error', () => {});
      let i = 0;
      const write = (): void => {
        while (i < count) {
          i++;
          if (!call.write({ text: String(i), payload: Buffer.alloc(payload) })) {
            call.once('drain', write);
            return;
          }
        }
        call.end();
      };
      write();
    });

  it('should answer a stream within both caps', async () => {
    const r = await clientStream(9, 1000);
    assert.equal(r.error, undefined);
    assert.equal(r.value.received_bytes, 9000);
  });

  it('should end a stream past the byte cap with RESOURCE_EXHAUSTED naming the setting', async () => {
    const r = await clientStream(1000, 1000);
    assert.equal(r.error?.code, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.match(r.error!.details, /max_stream_request_bytes \(10000 bytes per call\)/);
  });

  it('should end a stream past the message cap with RESOURCE_EXHAUSTED naming the setting', async () => {
    const r = await clientStream(1000, 1);
    assert.equal(r.error?.code, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.match(r.error!.details, /max_stream_request_messages \(50 messages per call\)/);
  });

  it('should count bidi requests too', async () => {
    const call = s.client.Bidi();
    for (let i = 0; i < 60; i++) call.write({ text: 'x', reply_bytes: 0 });
    call.end();
    const r = await collect(call);
    assert.equal(r.status.code, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.ok(r.messages.length <= 50, `${r.messages.length} answers`);
  });

  it('should not count unary requests against the stream caps', async () => {
    const r = await unary(s.client, 'Unary', { payload: Buffer.alloc(4000) });
    assert.equal(r.error, undefined);
  });

  it('should count gzip messages after decompression', async () => {
    const frames = Array.from({ length: 4 }, () => frameMessage(gzipSync(encodeProbe('ProbeRequest', { payload: Buffer.alloc(4000) })), true));
    assert.ok(frames.reduce((n, f) => n + f.length, 0) < 10_000);
    const r = await rawCall(s.address, '/keel.test.v1.Probe/ClientStream', frames, { 'grpc-encoding': 'gzip' }, { framed: false });
    assert.equal(r.grpcStatus, GrpcStatus.RESOURCE_EXHAUSTED);
  });
});

describe('when the stream caps are null', () => {
  it('should read a client stream past the defaults', async () => {
    const s = await probeServer({ max_stream_request_bytes: null, max_stream_request_messages: null });
    try {
      const value = await new Promise<any>((resolve, reject) => {
        const call = s.client.ClientStream((err: Error | null, v: unknown) => (err ? reject(err) : resolve(v)));
        for (let i = 0; i < 10_001; i++) call.write({ text: '' });
        call.end();
      });
      assert.equal(value.index, 10_001);
    } finally {
      await s.close();
    }
  });
});
