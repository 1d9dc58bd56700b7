/**
 * Hostile replay: HTTP/1.1-level attacks from the issue 13 attack run, over real sockets against a
 * createApp server, asserting the outcome that held (or, for the ones fixed since, the fixed one).
 * See test/hostile/README.md for the list.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { connect } from 'node:net';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { createApp, type ServerHandle } from '../../lib/index.js';
import { bodyOf, rawExchange, responseCount, statusOf } from './sockets.js';

const silent = { logger: pino({ level: 'silent' }) };
const LIMIT = 1024 * 1024;
const SECRET = 'TOP-SECRET-7f3a';

let root: string;
let server: ServerHandle;
/** Headers timeout configured for the slowloris replay (the default is 30 s). */
const HEADERS_TIMEOUT_MS = 800;

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'keel-hostile-'));
  mkdirSync(join(root, 'public'));
  writeFileSync(join(root, 'public', 'index.html'), '<h1>public</h1>');
  writeFileSync(join(root, 'secret.txt'), SECRET);
  writeFileSync(join(root, 'public.txt'), SECRET);
  const app = createApp({ port: 0, max_body_size: LIMIT, static_files: [{ directory: join(root, 'public'), route_prefix: '/static' }] }, (a) => {
    a.post('/echo', (d) => ({ body: d.body }));
    a.get('/health', () => ({ ok: true }));
    a.get('/admin', () => ({ admin: 'smuggled' }));
    a.get('/throw/sync', () => {
      throw new Error(`sync ${SECRET}`);
    });
    a.get('/throw/async', async () => {
      await new Promise((r) => setImmediate(r));
      throw new TypeError(`async ${SECRET}`);
    });
    a.get('/throw/string', () => {
      throw `string ${SECRET}`;
    });
    a.get('/throw/null', () => {
      throw null;
    });
    a.get('/throw/status-200', () => {
      throw { status: 200, title: 'OK', detail: SECRET };
    });
    a.get('/throw/reject-object', () => Promise.reject({ message: SECRET }));
  }, silent);
  // The slowloris replay needs the headers timeout checked often: node checks every 30 s by default.
  app.setServerFactory((listener) => http.createServer({ connectionsCheckingInterval: 100 }, listener));
  server = await app.listen({ handleSignals: false });
  server.server.headersTimeout = HEADERS_TIMEOUT_MS;
});

after(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

const POST = 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';
const SMUGGLED = 'GET /admin HTTP/1.1\r\nHost: x\r\n\r\n';

describe('hostile: request smuggling (RFC 9112 §6.1, §6.3)', () => {
  const attacks: [string, string][] = [
    ['CL.TE: Content-Length and Transfer-Encoding together', `${POST}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`],
    ['TE.CL: Transfer-Encoding before Content-Length', `${POST}Transfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n2\r\n{}\r\n0\r\n\r\n${SMUGGLED}`],
    ['duplicate Content-Length with different values', `${POST}Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}${SMUGGLED}`],
    ['duplicate Content-Length with the same value', `${POST}Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}${SMUGGLED}`],
    ['a Content-Length list', `${POST}Content-Length: 2, 40\r\n\r\n{}${SMUGGLED}`],
    ['TE obfuscation: xchunked', `${POST}Transfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n${SMUGGLED}`],
    ['TE obfuscation: space before the colon', `${POST}Transfer-Encoding : chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n${SMUGGLED}`],
    ['TE obfuscation: chunked, identity', `${POST}Transfer-Encoding: chunked, identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n${SMUGGLED}`],
    ['TE obfuscation: two Transfer-Encoding headers', `${POST}Transfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n2\r\n{}\r\n0\r\n\r\n${SMUGGLED}`],
    ['TE obfuscation: obsolete line folding', `${POST}Transfer-Encoding:\r\n chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n${SMUGGLED}`],
    ['bare LF line endings', 'POST /echo HTTP/1.1\nHost: x\nContent-Type: application/json\nTransfer-Encoding: chunked\n\n2\n{}\n0\n\nGET /admin HTTP/1.1\nHost: x\n\n'],
    ['a malformed chunk size', `${POST}Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0x\r\n\r\n${SMUGGLED}`],
  ];
  for (const [label, bytes] of attacks) {
    it(`should answer ${label} with a 400 problem, close the connection and never serve the smuggled request`, async () => {
      const answer = await rawExchange(server.port, bytes);
      assert.equal(statusOf(answer.text), 400, answer.text.slice(0, 200));
      assert.match(answer.text, /content-type: application\/problem\+json/i);
      assert.equal(responseCount(answer.text), 1);
      assert.doesNotMatch(answer.text, /smuggled/);
      assert.equal(answer.closed, true);
    });
  }
});

describe('hostile: slowloris (headers trickled one line at a time)', () => {
  it(`should answer 408 and close the connection once headersTimeout (${HEADERS_TIMEOUT_MS} ms here) passes`, async () => {
    const result = await new Promise<{ text: string; ms: number; lines: number }>((resolve) => {
      const t0 = Date.now();
      let text = '';
      let lines = 0;
      const socket = connect(server.port, '127.0.0.1', () => socket.write('GET /health HTTP/1.1\r\nHost: x\r\n'));
      // One more header line every 100 ms: the request never completes, each read resets no timer.
      const trickle = setInterval(() => {
        if (lines++ < 100) socket.write(`X-Pad-${lines}: a\r\n`);
      }, 100);
      const stop = () => {
        clearInterval(trickle);
        clearTimeout(guard);
        resolve({ text, ms: Date.now() - t0, lines });
      };
      // The client's own bound: a server that never times the headers out leaves the socket open until here.
      const guard = setTimeout(() => {
        socket.destroy();
      }, 20_000);
      socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
      socket.on('close', stop);
      socket.on('error', () => {});
    });
    assert.equal(statusOf(result.text), 408, result.text);
    assert.equal(bodyOf(result.text).type, 'https://keel.dev/errors/request-timeout');
    // The 408 came from the server (the client's guard sends nothing): no wall-clock bound here, which a busy
    // machine would break; the server closed it while the client still had header lines to send.
    assert.ok(result.lines < 100, `closed after ${result.lines} header lines (${result.ms} ms)`);
    assert.ok(result.ms >= HEADERS_TIMEOUT_MS - 50, `closed after ${result.ms} ms`);
  });
});

describe('hostile: path traversal on static files', () => {
  const attempts = [
    '/static/../secret.txt',
    '/static/..%2fsecret.txt',
    '/static/..%2Fsecret.txt',
    '/static/%2e%2e/secret.txt',
    '/static/%2e%2e%2fsecret.txt',
    '/static/..%252fsecret.txt',
    '/static/%252e%252e%252fsecret.txt',
    '/static/..\\secret.txt',
    '/static/..%5csecret.txt',
    '/static/..%5Csecret.txt',
    '/static/....//secret.txt',
    '/static/.%2e/secret.txt',
    '/static/%c0%ae%c0%ae/secret.txt',
    '/static/%c0%af../secret.txt',
    '/static/index.html%00../../secret.txt',
    '/static/..%00/secret.txt',
    '/static/%00',
    '/static/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd',
    '/static//../secret.txt',
    `/static/${'../'.repeat(20)}etc/passwd`,
  ];
  it('should serve the public file (control)', async () => {
    const answer = await rawExchange(server.port, 'GET /static/index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.equal(statusOf(answer.text), 200);
    assert.match(answer.text, /<h1>public<\/h1>/);
  });
  for (const path of attempts) {
    it(`should not serve anything outside the directory for ${path}`, async () => {
      const answer = await rawExchange(server.port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      const status = statusOf(answer.text);
      assert.ok([400, 403, 404].includes(status), `${path}: ${status}`);
      assert.doesNotMatch(answer.text, new RegExp(SECRET));
      assert.doesNotMatch(answer.text, /root:x?:0:0/);
    });
  }
});

describe('hostile: 50 MB bodies against a 1 MB max_body_size', () => {
  it('should answer a declared 50 MB body with 413 before a byte of it is sent', async () => {
    const answer = await rawExchange(server.port, `${POST}Content-Length: ${50 * 1024 * 1024}\r\n\r\n`, { ms: 1500 });
    assert.equal(statusOf(answer.text), 413);
    assert.equal(bodyOf(answer.text).limit, LIMIT);
  });

  it('should answer a chunked 50 MB body with 413 and close the connection long before it is all sent', async () => {
    const total = 50 * 1024 * 1024;
    const result = await new Promise<{ text: string; sent: number }>((resolve) => {
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
      let text = '';
      let sent = 0;
      let closed = false;
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write(`${POST}Transfer-Encoding: chunked\r\n\r\n`);
        pump();
      });
      function pump(): void {
        while (!closed && sent < total) {
          sent += chunk.length;
          if (!socket.write(frame)) {
            socket.once('drain', pump);
            return;
          }
        }
        if (!closed) socket.end('0\r\n\r\n');
      }
      const guard = setTimeout(() => socket.destroy(), 20_000);
      socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
      socket.on('error', () => {});
      socket.on('close', () => {
        closed = true;
        clearTimeout(guard);
        resolve({ text, sent });
      });
    });
    assert.equal(statusOf(result.text), 413);
    assert.ok(result.sent < total / 4, `the client got ${result.sent} bytes out before the server closed`);
  });

  it('should cut a gzip bomb (10 MB of zeros in ~10 KB) off with 413 (fixed in issue 13)', async () => {
    const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024));
    const head = `${POST}Content-Encoding: gzip\r\nContent-Length: ${bomb.length}\r\nConnection: close\r\n\r\n`;
    const answer = await rawExchange(server.port, Buffer.concat([Buffer.from(head), bomb]));
    assert.equal(statusOf(answer.text), 413);
  });
});

describe('hostile: JSON bodies built to poison prototypes (fixed in issue 13)', () => {
  for (const text of ['{"__proto__": {"isAdmin": true}}', '{"a": [{"constructor": {"prototype": {"isAdmin": true}}}]}', '{"\\u005f_proto__": {"isAdmin": true}}']) {
    it(`should refuse ${text} with 400`, async () => {
      const answer = await rawExchange(server.port, `${POST}Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
      assert.equal(statusOf(answer.text), 400);
      assert.equal(bodyOf(answer.text).type, 'https://keel.dev/errors/forbidden-json-key');
      assert.equal(({} as Record<string, unknown>).isAdmin, undefined);
    });
  }
});

describe('hostile: throwing handlers', () => {
  const cases: [string, number][] = [
    ['/throw/sync', 500],
    ['/throw/async', 500],
    ['/throw/string', 500],
    ['/throw/null', 500],
    ['/throw/status-200', 500],
    ['/throw/reject-object', 500],
  ];
  for (const [path, status] of cases) {
    it(`should answer ${path} with a bare ${status} problem and leak nothing`, async () => {
      const res = await fetch(`${server.url}${path}`);
      const text = await res.text();
      assert.equal(res.status, status);
      assert.equal(res.headers.get('content-type'), 'application/problem+json');
      assert.doesNotMatch(text, new RegExp(SECRET));
      assert.doesNotMatch(text, /at .*\.ts:\d+/);
    });
  }

  it('should keep serving after 200 throws in a row', async () => {
    await Promise.all(Array.from({ length: 200 }, (_, i) => fetch(`${server.url}${cases[i % cases.length]![0]}`).then((r) => r.arrayBuffer())));
    const res = await fetch(`${server.url}/health`);
    assert.equal(res.status, 200);
  });
});
