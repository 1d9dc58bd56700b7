/**
 * The request-target limit: ServerConfig.max_uri_length (default 8192 characters) and a route's own
 * max_uri_length. A longer target is a 414 problem (RFC 9110 §15.5.15) before routing, the query, the
 * body or any middleware. Huge targets, h2c `:path` and WebSocket handshakes: test/hostile/long-targets.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { App, createApp, type ServerHandle } from '../lib/index.js';
import { AppError, ConfigError } from '../lib/http/errors.js';
import { DEFAULT_MAX_URI_LENGTH, ServerConfig } from '../lib/records/server.js';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One request on a raw socket (no client shortening or re-encoding the target); the answer once the server closes. */
function exchange(port: number, request: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let data = '';
    sock.setEncoding('latin1');
    sock.setTimeout(10_000, () => sock.destroy(new Error('no answer within 10 s')));
    sock.on('data', (c: string) => (data += c));
    const done = (err?: Error) => {
      // The server may close while the client still writes (a refused 60 KB request): what came is the answer.
      if (!data.startsWith('HTTP/1.1 ')) return reject(err ?? new Error(`no HTTP answer: ${JSON.stringify(data.slice(0, 80))}`));
      const [head = '', body = ''] = data.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    };
    sock.on('error', done);
    sock.on('close', () => done());
    sock.end(request);
  });
}

const get = (port: number, target: string, method = 'GET') => exchange(port, `${method} ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);

/** A target of exactly `length` characters: `prefix` followed by a query of `x`s. */
function target(length: number, prefix = '/items?q='): string {
  assert.ok(length >= prefix.length);
  return prefix + 'x'.repeat(length - prefix.length);
}

function assertUriTooLong(a: Answer, length: number, limit: number): void {
  assert.equal(a.status, 414, a.body.slice(0, 200));
  assert.equal(a.headers['content-type'], 'application/problem+json');
  assert.deepEqual(JSON.parse(a.body), {
    type: 'https://keel.dev/errors/uri-too-long',
    title: 'URI Too Long',
    status: 414,
    detail: `Request target of ${length} characters exceeds the limit of ${limit} characters`,
    limit,
  });
}

describe('when ServerConfig.max_uri_length is left at its default', () => {
  let server: ServerHandle;
  const calls = { handler: 0, middleware: 0 };
  before(async () => {
    const app = createApp({ port: 0 });
    app.get('/items', () => (calls.handler++, { ok: true }));
    app.post('/items', () => (calls.handler++, { created: true }), {
      body: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      middleware: [(_req, _res, next) => (calls.middleware++, next())],
    });
    server = await app.listen({ handleSignals: false });
  });
  after(() => server.close());

  it('should default to 8192 characters', () => {
    assert.equal(DEFAULT_MAX_URI_LENGTH, 8192);
    assert.equal(ServerConfig.defaults().max_uri_length, 8192);
  });

  it('should serve a target one character under the limit', async () => {
    assert.equal((await get(server.port, target(8191))).status, 200);
  });

  it('should serve a target of exactly the limit', async () => {
    const a = await get(server.port, target(8192));
    assert.equal(a.status, 200);
    assert.deepEqual(JSON.parse(a.body), { ok: true });
  });

  it('should answer a target one character over the limit with a 414 problem', async () => {
    const before = calls.handler;
    assertUriTooLong(await get(server.port, target(8193)), 8193, 8192);
    assert.equal(calls.handler, before, 'the handler did not run');
  });

  it('should count a long path like a long query', async () => {
    assertUriTooLong(await get(server.port, target(9000, '/items/')), 9000, 8192);
    assertUriTooLong(await get(server.port, '/' + 'a/'.repeat(4500)), 9001, 8192);
    assertUriTooLong(await get(server.port, target(9000, '/items?')), 9000, 8192);
  });

  it('should answer 414, not 404, for a long target no route matches (checked before routing)', async () => {
    assertUriTooLong(await get(server.port, target(8193, '/nowhere?q=')), 8193, 8192);
    assert.equal((await get(server.port, target(100, '/nowhere?q='))).status, 404);
  });

  it('should answer 414, not 405, for a long target under a method the path does not serve', async () => {
    assertUriTooLong(await get(server.port, target(8193), 'DELETE'), 8193, 8192);
  });

  it('should answer before the body is read or validated and before the route\'s middleware', async () => {
    const before = { ...calls };
    const body = '{"n": "not a number"}';
    const a = await exchange(server.port, `POST ${target(8193)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    assertUriTooLong(a, 8193, 8192);
    assert.deepEqual(calls, before);
  });

  it('should answer a HEAD request with the 414 status and no body', async () => {
    const a = await get(server.port, target(8193), 'HEAD');
    assert.equal(a.status, 414);
    assert.equal(a.body, '');
  });

  it('should serve targets up to the limit whatever their characters (percent-encoded ones count as sent)', async () => {
    assert.equal((await get(server.port, target(8192, '/items?q=%E2%82%AC'))).status, 200);
    assertUriTooLong(await get(server.port, target(8193, '/items?q=%E2%82%AC')), 8193, 8192);
  });
});

describe('when ServerConfig.max_uri_length is set', () => {
  let server: ServerHandle;
  before(async () => {
    server = await createApp({ port: 0, maxUriLength: 64 }, (app) => app.get('/items', () => ({ ok: true }))).listen({ handleSignals: false });
  });
  after(() => server.close());

  it('should serve 63 and 64 characters and refuse 65', async () => {
    assert.equal((await get(server.port, target(63))).status, 200);
    assert.equal((await get(server.port, target(64))).status, 200);
    assertUriTooLong(await get(server.port, target(65)), 65, 64);
  });

  it('should keep the connection usable after a 414 (the request was read whole)', async () => {
    const sock = connect(server.port, '127.0.0.1');
    let data = '';
    sock.setEncoding('latin1');
    sock.on('data', (c: string) => (data += c));
    const closed = new Promise((r) => sock.on('close', r));
    sock.setTimeout(10_000, () => sock.destroy());
    // Pipelined on one connection; the second asks the server to close after answering.
    sock.write(`GET ${target(65)} HTTP/1.1\r\nHost: x\r\n\r\nGET ${target(64)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    await closed;
    assert.deepEqual([...data.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]), ['414', '200']);
  });
});

describe('when ServerConfig.max_uri_length is null', () => {
  it('should serve any target node\'s parser accepts', async () => {
    const server = await createApp({ port: 0, max_uri_length: null }, (app) => app.get('/items', () => ({ ok: true }))).listen({ handleSignals: false });
    try {
      assert.equal((await get(server.port, target(16_000))).status, 200);
      assert.equal((await get(server.port, target(60_000))).status, 431);
    } finally {
      await server.close();
    }
  });
});

describe('when a route sets its own max_uri_length', () => {
  let server: ServerHandle;
  before(async () => {
    const app = createApp({ port: 0, max_uri_length: 100 });
    app.get('/short', () => ({ route: 'short' }), { max_uri_length: 20 });
    app.get('/long', () => ({ route: 'long' }), { max_uri_length: 1000 });
    app.get('/any', () => ({ route: 'any' }), { max_uri_length: null });
    app.get('/server', () => ({ route: 'server' }));
    server = await app.listen({ handleSignals: false });
  });
  after(() => server.close());

  it('should refuse past a lower route limit what the server would serve', async () => {
    assert.equal((await get(server.port, target(20, '/short?q='))).status, 200);
    assertUriTooLong(await get(server.port, target(21, '/short?q=')), 21, 20);
  });

  it('should serve up to a higher route limit what the server would refuse', async () => {
    assert.equal((await get(server.port, target(1000, '/long?q='))).status, 200);
    assertUriTooLong(await get(server.port, target(1001, '/long?q=')), 1001, 1000);
  });

  it('should keep the server\'s limit for the other routes and for paths no route matches', async () => {
    assert.equal((await get(server.port, target(100, '/server?q='))).status, 200);
    assertUriTooLong(await get(server.port, target(101, '/server?q=')), 101, 100);
    assertUriTooLong(await get(server.port, target(500, '/nowhere?q=')), 500, 100);
  });

  it('should lift the limit on a route that sets null', async () => {
    assert.equal((await get(server.port, target(12_000, '/any?q='))).status, 200);
  });
});

describe('when keel is embedded as middleware (a `next` is given)', () => {
  let server: http.Server;
  let port: number;
  before(async () => {
    const app = createApp({ max_uri_length: 64 }, (a) => a.get('/items', () => ({ ok: true })));
    await app.ready();
    const router = app.intoRouter();
    server = http.createServer((req: IncomingMessage, res: ServerResponse) => router(req, res, () => res.end('next')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('should pass a long target keel has no route for on untouched', async () => {
    const a = await get(port, target(500, '/elsewhere?q='));
    assert.equal(a.status, 200);
    assert.equal(a.body, 'next');
  });

  it('should still refuse a long target on one of its own routes', async () => {
    assertUriTooLong(await get(port, target(65)), 65, 64);
  });
});

describe('when max_uri_length is given a bad value', () => {
  for (const value of [0, -1, 1.5, '8192', true, {}]) {
    it(`should refuse ServerConfig max_uri_length ${JSON.stringify(value)} at start-up, naming record, key and value`, () => {
      assert.throws(() => new App({ max_uri_length: value as never }), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.record, 'ServerConfig');
        assert.equal(err.key, 'max_uri_length');
        assert.match(err.message, /ServerConfig\.max_uri_length: expected an integer >= 1/);
        assert.ok(err.message.includes(`got ${JSON.stringify(value)}`), err.message);
        return true;
      });
    });

    it(`should refuse a route's max_uri_length ${JSON.stringify(value)} when the route is registered`, () => {
      assert.throws(() => new App().get('/x', () => 1, { max_uri_length: value as never }), (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.match(err.message, /Route\(GET \/x\)\.max_uri_length: expected an integer >= 1/);
        assert.ok(err.message.includes(`got ${JSON.stringify(value)}`), err.message);
        return true;
      });
    });
  }

  it('should refuse a misspelt key and name the one meant', () => {
    assert.throws(() => ServerConfig.parse({ max_url_length: 100 }), /max_uri_length/);
  });

  it('should refuse both spellings at once', () => {
    assert.throws(() => ServerConfig.parse({ max_uri_length: 100, maxUriLength: 200 }), /given twice|both/i);
  });
});
