import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import request from 'supertest';
import { bodyLimit, DEFAULT_MAX_BODY_SIZE, type BodyLimitOptions } from './index.js';
import { readRawBody } from '../../lib/http/body.js';
import { ConfigError } from '../../lib/http/errors.js';
import type { KeelRequest } from '../../lib/http/request.js';
import { describeOnReject, describeOnRejectConfig } from '../../test/helpers/on-reject.js';

/** Express app: bodyLimit, then express.json(); the handler echoes what it got. */
// Every test in this block runs under Express 4 and under Express 5 (test/helpers/express-versions.ts).
for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
function appWith(options?: BodyLimitOptions) {
  const app = express();
  app.use(bodyLimit(options));
  app.use(express.json({ limit: '20mb' }));
  app.use(express.text({ limit: '20mb' }));
  app.post('/echo', (req, res) => {
    const k = req as KeelRequest;
    res.json({ body: req.body ?? null, rawBodyBytes: k.rawBody ? k.rawBody.length : null });
  });
  app.get('/ping', (_req, res) => res.json({ pong: true }));
  return app;
}

async function listen(app: express.Express): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}

/** POST a body with Transfer-Encoding: chunked (no Content-Length), in several chunks. */
async function postChunked(port: number, path: string, parts: string[], contentType = 'application/json'): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'Content-Type': contentType } });
  const response = once(req, 'response') as Promise<[http.IncomingMessage]>;
  for (const part of parts) req.write(part);
  req.end();
  const [res] = await response;
  let body = '';
  for await (const chunk of res) body += chunk;
  return { status: res.statusCode!, headers: res.headers, body };
}

/** Send raw requests one after another on one TCP connection; return each raw response. */
async function onOneConnection(port: number, requests: string[]): Promise<string[]> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let buffered = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => (buffered += d));
  const responses: string[] = [];
  for (const raw of requests) {
    socket.write(raw);
    // Wait for one complete response (headers + Content-Length bytes).
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(buffered.slice(0, end));
      if (end >= 0 && length && buffered.length >= end + 4 + Number(length[1])) {
        const total = end + 4 + Number(length[1]);
        responses.push(buffered.slice(0, total));
        buffered = buffered.slice(total);
        break;
      }
      const closed = await Promise.race([once(socket, 'data').then(() => false), once(socket, 'close').then(() => true)]);
      if (closed) throw new Error(`connection closed after ${responses.length} response(s)`);
    }
  }
  socket.destroy();
  return responses;
}

describe('bodyLimit: when called without options', () => {
  it('should cap bodies at 10 MiB', async () => {
    assert.equal(DEFAULT_MAX_BODY_SIZE, 10 * 1024 * 1024);
    const big = 'x'.repeat(DEFAULT_MAX_BODY_SIZE + 1);
    const res = await request(appWith()).post('/echo').set('Content-Type', 'text/plain').send(big);
    assert.equal(res.status, 413);
  });

  it('should let a small JSON body through to express.json()', async () => {
    const res = await request(appWith()).post('/echo').send({ note: 'small' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { body: { note: 'small' }, rawBodyBytes: null });
  });

  it('should let requests without a body through', async () => {
    const res = await request(appWith()).get('/ping');
    assert.deepEqual(res.body, { pong: true });
  });
});

describe('bodyLimit: when the declared Content-Length is over the cap', () => {
  const app = appWith({ max_body_size: 64 });

  it('should answer 413 problem details without running the handler', async () => {
    const res = await request(app).post('/echo').send({ note: 'x'.repeat(100) });
    assert.equal(res.status, 413);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.body.type, 'https://keel.dev/errors/payload-too-large');
    assert.equal(res.body.title, 'Payload Too Large');
    assert.equal(res.body.status, 413);
    assert.equal(res.body.limit, 64);
    assert.match(res.body.detail, /exceeds the limit of 64 bytes/);
  });

  it('should accept a body of exactly the cap', async () => {
    const body = JSON.stringify({ note: 'x'.repeat(64 - 11) });
    assert.equal(Buffer.byteLength(body), 64);
    const res = await request(app).post('/echo').set('Content-Type', 'application/json').send(body);
    assert.equal(res.status, 200);
  });

  it('should keep a keep-alive connection usable for the next request', async () => {
    const { server, port } = await listen(app);
    try {
      const body = 'y'.repeat(100);
      const [first, second] = await onOneConnection(port, [
        `POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        'GET /ping HTTP/1.1\r\nHost: t\r\n\r\n',
      ]);
      assert.match(first!, /^HTTP\/1\.1 413 /);
      assert.match(second!, /^HTTP\/1\.1 200 /);
      assert.match(second!, /\{"pong":true\}$/);
    } finally {
      server.close();
    }
  });

  it('should answer with Connection: close when the declared body is larger than it drains', async () => {
    const { server, port } = await listen(app);
    try {
      const socket = net.connect(port, '127.0.0.1');
      socket.write('POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 50000000\r\n\r\n');
      let raw = '';
      socket.setEncoding('latin1');
      socket.on('data', (d: string) => (raw += d));
      await once(socket, 'close');
      assert.match(raw, /^HTTP\/1\.1 413 /);
      assert.match(raw, /\r\nConnection: close\r\n/i);
    } finally {
      server.close();
    }
  });
});

describe('bodyLimit: when a chunked body has no Content-Length', () => {
  let server: http.Server;
  let port: number;
  before(async () => ({ server, port } = await listen(appWith({ maxBodySize: 64 }))));
  after(() => server.close());

  it('should hand a body under the cap to express.json() and set req.rawBody', async () => {
    const res = await postChunked(port, '/echo', ['{"note":', '"small"}']);
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { body: { note: 'small' }, rawBodyBytes: 16 });
  });

  it('should hand the body to express.text() too', async () => {
    const res = await postChunked(port, '/echo', ['hello ', 'world'], 'text/plain');
    assert.deepEqual(JSON.parse(res.body), { body: 'hello world', rawBodyBytes: 11 });
  });

  it('should answer 413 problem details once the counted bytes pass the cap', async () => {
    const res = await postChunked(port, '/echo', ['{"note":"', 'x'.repeat(40), 'x'.repeat(40), '"}']);
    assert.equal(res.status, 413);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(JSON.parse(res.body).limit, 64);
  });

  it('should keep a keep-alive connection usable after a chunked 413', async () => {
    const chunk = 'z'.repeat(100);
    const [first, second] = await onOneConnection(port, [
      `POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`,
      'GET /ping HTTP/1.1\r\nHost: t\r\n\r\n',
    ]);
    assert.match(first!, /^HTTP\/1\.1 413 /);
    assert.match(second!, /^HTTP\/1\.1 200 /);
  });

  it('should restore a multi-megabyte chunked body byte for byte', async () => {
    const s = await listen(appWith());
    try {
      const parts = Array.from({ length: 80 }, (_, i) => String.fromCharCode(97 + (i % 26)).repeat(64 * 1024));
      const res = await postChunked(s.port, '/echo', parts, 'text/plain');
      assert.equal(res.status, 200);
      const got = JSON.parse(res.body) as { body: string; rawBodyBytes: number };
      assert.equal(got.rawBodyBytes, 80 * 64 * 1024);
      assert.equal(got.body, parts.join(''));
    } finally {
      s.server.close();
    }
  });

  it('should leave the body for keel readRawBody (same bytes, read once)', async () => {
    const app = express();
    app.use(bodyLimit({ max_body_size: 64 }));
    app.post('/raw', async (req, res) => {
      const body = await readRawBody(req as KeelRequest, 64);
      res.json({ text: body.toString('utf8'), same: body === (req as KeelRequest).rawBody });
    });
    const s = await listen(app);
    try {
      const res = await postChunked(s.port, '/raw', ['ab', 'cd']);
      assert.deepEqual(JSON.parse(res.body), { text: 'abcd', same: true });
    } finally {
      s.server.close();
    }
  });
});

describe('bodyLimit: when max_body_size is null or 0', () => {
  it('should return a pass-through for null and accept any size', async () => {
    assert.equal(bodyLimit({ max_body_size: null }).name, 'bodyLimitDisabled');
    const res = await request(appWith({ max_body_size: null })).post('/echo').set('Content-Type', 'text/plain').send('x'.repeat(2_000_000));
    assert.equal(res.status, 200);
    assert.equal(res.body.body.length, 2_000_000);
  });

  it('should reject any non-empty body with 0', async () => {
    const res = await request(appWith({ max_body_size: 0 })).post('/echo').set('Content-Type', 'text/plain').send('x');
    assert.equal(res.status, 413);
  });

  it('should accept an empty body with 0', async () => {
    const res = await request(appWith({ max_body_size: 0 })).post('/echo').set('Content-Type', 'text/plain').send('');
    assert.equal(res.status, 200);
  });
});

describe('bodyLimit: when the options are invalid', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['an unknown key, with a suggestion', { max_body_sise: 5 }, /Unknown key "max_body_sise".*Did you mean "max_body_size"/],
    ['the fixture spelling max_bytes', { max_bytes: 64 }, /Unknown key "max_bytes".*Allowed keys: max_body_size/],
    ['a negative size', { max_body_size: -1 }, /BodyLimitOptions\.max_body_size: expected an integer >= 0, got -1/],
    ['a fractional size', { max_body_size: 1.5 }, /expected an integer >= 0, got 1.5/],
    ['a size as a string', { max_body_size: '10mb' }, /got "10mb"/],
    ['a boolean', { max_body_size: true }, /got true/],
    ['a bare number', 1024, /expected an object/],
  ];
  for (const [what, input, message] of cases) {
    it(`should throw a ConfigError for ${what}`, () => {
      assert.throws(() => bodyLimit(input as BodyLimitOptions), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, message);
        return true;
      });
    });
  }
});
});

describeOnReject('bodyLimit, declared Content-Length over the cap', {
  make: (onReject) => bodyLimit({ max_body_size: 8, onReject }),
  send: (agent) => agent.post('/').set('Content-Type', 'text/plain').send('x'.repeat(64)),
  status: 413,
});
describeOnReject('bodyLimit, a chunked body over the cap', {
  make: (onReject) => bodyLimit({ max_body_size: 8, onReject }),
  send: (agent) => {
    const t = agent.post('/').set('Content-Type', 'text/plain').set('Transfer-Encoding', 'chunked');
    t.write('x'.repeat(32));
    return t;
  },
  status: 413,
});
describeOnRejectConfig('bodyLimit', (o) => bodyLimit(o), /BodyLimitOptions/);
