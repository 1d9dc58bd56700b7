import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { createApp } from '../app/app.js';
import { AppError } from '../http/errors.js';
import { GrpcStatus } from './index.js';
import { clientFor, collect, connect, unary, GREETER_PROTO } from './testkit.js';

const greeter = {
  SayHello: ({ name }: { name: string }) => ({ message: `Hello, ${name}` }),
  async *SayHelloMany({ name, count }: { name: string; count: number }) {
    for (let i = 0; i < count; i++) yield { message: `Hello #${i + 1}, ${name}` };
  },
};

describe('when an App registers a gRPC service', () => {
  it('should serve HTTP routes and gRPC calls on one port, then shut down', async () => {
    const app = createApp({ port: 0, grpc: {}, enable_request_id: true }, (a) => {
      a.get('/hello', () => ({ hello: 'http' }));
      a.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', greeter);
    });
    const handle = await app.listen({ handleSignals: false });
    const client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), `127.0.0.1:${handle.port}`);
    try {
      const http = await fetch(`${handle.url}/hello`);
      assert.deepEqual(await http.json(), { hello: 'http' });
      const r = await unary(client, 'SayHello', { name: 'app' });
      assert.equal(r.value?.message, 'Hello, app');
      assert.match(String(r.headers?.get('x-request-id')[0]), /^[0-9a-f-]{36}$/);
      const s = await collect(client.SayHelloMany({ name: 'app', count: 2 }));
      assert.equal(s.messages.length, 2);
    } finally {
      client.close();
      await handle.close();
    }
  });

  it('should apply the server-level API key to gRPC calls', async () => {
    const app = createApp({ port: 0, grpc: {}, api_key_auth: { keys: ['grpc-key-1'] } }, (a) => a.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', greeter));
    const handle = await app.listen({ handleSignals: false });
    const client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), `127.0.0.1:${handle.port}`);
    try {
      const denied = await unary(client, 'SayHello', { name: 'x' });
      const m = new grpc.Metadata();
      m.set('x-api-key', 'grpc-key-1');
      const allowed = await unary(client, 'SayHello', { name: 'x' }, m);
      assert.equal(denied.error?.code, GrpcStatus.UNAUTHENTICATED);
      assert.equal(allowed.value?.message, 'Hello, x');
    } finally {
      client.close();
      await handle.close();
    }
  });

  it('should apply the server-level rate limit to gRPC calls (RESOURCE_EXHAUSTED with grpc-retry-pushback-ms)', async () => {
    const app = createApp({ host: '127.0.0.1', port: 0, grpc: {}, rate_limit: { per_second: 1, burst: 5 } }, (a) => {
      a.get('/hello', () => ({ hello: 'http' }));
      a.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', greeter);
    });
    const handle = await app.listen({ handleSignals: false });
    const client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), `127.0.0.1:${handle.port}`);
    try {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => unary(client, 'SayHello', { name: `n${i}` })));
      const ok = results.filter((r) => r.value);
      const refused = results.filter((r) => r.error);
      assert.equal(ok.length, 5, 'the burst is served');
      assert.equal(refused.length, 15);
      for (const r of refused) {
        assert.equal(r.error!.code, GrpcStatus.RESOURCE_EXHAUSTED);
        assert.match(r.error!.details, /Rate limit exceeded/);
        assert.equal(r.error!.metadata.get('grpc-retry-pushback-ms')[0], '1000');
      }
      // One bucket per client for both protocols: HTTP is refused too now.
      const http = await fetch(`${handle.url}/hello`);
      assert.equal(http.status, 429);
    } finally {
      client.close();
      await handle.close();
    }
  });

  it('should not speak gRPC when grpc.enabled is false', async () => {
    const app = createApp({ port: 0, grpc: { enabled: false } }, (a) => a.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', greeter));
    const handle = await app.listen({ handleSignals: false });
    const client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), `127.0.0.1:${handle.port}`);
    try {
      const r = await unary(client, 'SayHello', { name: 'x' }, new grpc.Metadata(), { deadline: Date.now() + 2000 });
      assert.notEqual(r.error, undefined);
      assert.equal(r.value, undefined);
    } finally {
      client.close();
      await handle.close();
    }
  });

  it('should throw AppError when ServerConfig.grpc is not set', () => {
    assert.throws(() => createApp({}, (a) => a.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', greeter)), (e: unknown) => e instanceof AppError && /ServerConfig\.grpc is null/.test(e.message));
  });
});

describe('when an HTTP/2 request to an App route carries a body without Content-Length', () => {
  // RFC 9113 §8.1: Content-Length is optional in HTTP/2 (and Transfer-Encoding absent): the body is what the DATA
  // frames carry up to END_STREAM. Before, keel applied HTTP/1.1's rule (RFC 9112 §6.3) and ignored such a body.
  async function post(port: number, headers: http2.OutgoingHttpHeaders, body: string | null): Promise<{ status: number; body: string }> {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    try {
      return await new Promise((resolve, reject) => {
        const req = session.request({ ':method': 'POST', ':path': '/echo', 'content-type': 'application/json', ...headers }, { endStream: body === null });
        let status = 0;
        let text = '';
        req.setEncoding('utf8');
        req.on('response', (h) => (status = Number(h[':status'])));
        req.on('data', (c: string) => (text += c));
        req.on('end', () => resolve({ status, body: text }));
        req.on('error', reject);
        if (body !== null) req.end(body);
      });
    } finally {
      session.close();
    }
  }
  for (const [what, headers, body, answer] of [
    ['no Content-Length', {}, '{"a":1}', '{"got":{"a":1}}'],
    ['Content-Length', { 'content-length': 7 }, '{"a":1}', '{"got":{"a":1}}'],
    ['END_STREAM on HEADERS (no body)', {}, null, '{"got":null}'],
    ['Content-Length 0', { 'content-length': 0 }, '', '{"got":null}'],
  ] as const) {
    it(`should read the body the DATA frames carry (${what})`, async () => {
      const app = createApp({ port: 0, grpc: {} }, (a) => {
        a.post('/echo', (d) => ({ got: d.body ?? null }));
        a.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', greeter);
      });
      const handle = await app.listen({ handleSignals: false });
      try {
        assert.deepEqual(await post(handle.port, headers, body), { status: 200, body: answer });
      } finally {
        await handle.close();
      }
    });
  }
});
