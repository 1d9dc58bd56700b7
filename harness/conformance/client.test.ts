import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';
import { buildRequest, NoResponseError, send } from './client.js';

/** Echoes what it received: method, url, headers (raw casing), body; parses multipart with busboy. */
let server: Server;
let base: string;
before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const echo = { method: req.method, url: req.url, rawHeaders: req.rawHeaders, body: body.toString('latin1') };
      if (!(req.headers['content-type'] ?? '').startsWith('multipart/')) {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(echo));
        return;
      }
      const parts: unknown[] = [];
      const bb = busboy({ headers: req.headers });
      bb.on('field', (name, value) => parts.push({ field: name, value }));
      bb.on('file', (name, stream, info) => {
        const data: Buffer[] = [];
        stream.on('data', (d: Buffer) => data.push(d));
        stream.on('end', () => parts.push({ file: name, filename: info.filename, mimeType: info.mimeType, hex: Buffer.concat(data).toString('hex') }));
      });
      bb.on('close', () => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ ...echo, parts }));
      });
      bb.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

async function roundTrip(req: Parameters<typeof buildRequest>[0]) {
  const snap = await send(base, buildRequest(req));
  return snap.json as { method: string; url: string; rawHeaders: string[]; body: string; parts?: unknown[] };
}

describe('buildRequest and send', () => {
  describe('when the case has query parameters', () => {
    it('should encode scalars and repeat arrays', async () => {
      const e = await roundTrip({ method: 'get', path: '/items', query_params: { q: 'a b', ids: [1, 2], flag: true } });
      assert.equal(e.method, 'GET');
      assert.equal(e.url, '/items?q=a+b&ids=1&ids=2&flag=true');
    });
    it('should append to a query already in the path', async () => {
      assert.equal((await roundTrip({ method: 'GET', path: '/x?a=1', query_params: { b: 2 } })).url, '/x?a=1&b=2');
    });
    it('should send a parameter given in the path and in query_params once', async () => {
      assert.equal((await roundTrip({ method: 'GET', path: '/items/?limit=10', query_params: { limit: 10 } })).url, '/items/?limit=10');
      assert.equal((await roundTrip({ method: 'GET', path: '/items?colors=red;green;blue', query_params: { colors: 'red;green;blue', page: 2 } })).url, '/items?colors=red;green;blue&page=2');
    });
    it('should send query_string verbatim', async () => {
      assert.equal((await roundTrip({ method: 'GET', path: '/x', query_string: 'q=foo&q=bar', query_params: { q: ['foo', 'bar'] } })).url, '/x?q=foo&q=bar');
    });
  });

  describe('when a JSON body holds -0', () => {
    it('should keep the sign (JSON.stringify would write 0)', async () => {
      assert.equal((await roundTrip({ method: 'POST', path: '/', body: { offset: -0, list: [-0, 0] } })).body, '{"offset":-0,"list":[-0,0]}');
    });
  });

  describe('when the case has headers and cookies', () => {
    it('should keep header casing and join cookies into one Cookie header', async () => {
      const e = await roundTrip({ method: 'GET', path: '/', headers: { 'X-Custom-Header': 'v' }, cookies: { a: '1', b: 'two' } });
      const pairs = new Map<string, string>();
      for (let i = 0; i < e.rawHeaders.length; i += 2) pairs.set(e.rawHeaders[i]!, e.rawHeaders[i + 1]!);
      assert.equal(pairs.get('X-Custom-Header'), 'v');
      assert.equal(pairs.get('Cookie'), 'a=1; b=two');
    });
  });

  describe('when the case has a body', () => {
    it('should send JSON with application/json', () => {
      const w = buildRequest({ method: 'POST', path: '/', body: { a: 1 } });
      assert.deepEqual(w.headers, [['Content-Type', 'application/json']]);
      assert.equal(w.body!.toString(), '{"a":1}');
    });
    it('should send a string body as is, with the case Content-Type', async () => {
      const e = await roundTrip({ method: 'POST', path: '/', headers: { 'Content-Type': 'application/json' }, body: '{"name": ' });
      assert.equal(e.body, '{"name": ');
      assert.deepEqual(e.rawHeaders.filter((h) => /content-type/i.test(h)), ['Content-Type']);
    });
    it('should urlencode form_data', async () => {
      const e = await roundTrip({ method: 'POST', path: '/', form_data: { user: 'john doe', tags: ['a', 'b'] } });
      assert.equal(e.body, 'user=john+doe&tags=a&tags=b');
    });
    it('should build multipart from data and files that a real parser reads back', async () => {
      const e = await roundTrip({
        method: 'POST',
        path: '/',
        content_type: 'multipart/form-data',
        data: { username: 'x' },
        files: [
          { field_name: 'doc', filename: 'a "b".txt', content: 'hello', content_type: 'text/plain', headers: { 'x-custom': 'f2' } },
          { field_name: 'img', filename: 'p.png', content_type: 'image/png', magic_bytes: '89504e47' },
          { field_name: 'b64', filename: 'b.bin', content: Buffer.from([1, 2, 3]).toString('base64'), content_encoding: 'base64' },
        ],
      });
      assert.deepEqual(e.parts, [
        { field: 'username', value: 'x' },
        { file: 'doc', filename: 'a %22b%22.txt', mimeType: 'text/plain', hex: Buffer.from('hello').toString('hex') },
        { file: 'img', filename: 'p.png', mimeType: 'image/png', hex: '89504e47' },
        { file: 'b64', filename: 'b.bin', mimeType: 'text/plain', hex: '010203' },
      ]);
    });
  });

  describe('when a JSON body is sent as multipart/form-data without a boundary', () => {
    it('should encode file objects as file parts and the rest as fields, with a boundary', async () => {
      const e = await roundTrip({
        method: 'POST',
        path: '/',
        headers: { 'Content-Type': 'multipart/form-data' },
        body: {
          file: { filename: 'document.pdf', content: 'PDF content', content_type: 'application/pdf' },
          description: 'Important document',
          tags: ['important', 'archive'],
          files: [{ filename: 'a.txt', content: 'A' }, { filename: 'b.txt', content: 'B' }],
          packed: { filename: 'data.gz', content_encoding: 'gzip', content: 'compressed data' },
        },
      });
      assert.match(e.rawHeaders[e.rawHeaders.findIndex((h) => /^content-type$/i.test(h)) + 1]!, /^multipart\/form-data; boundary=keel-[0-9a-f]{24}$/);
      assert.equal(e.rawHeaders.filter((h) => /^content-type$/i.test(h)).length, 1);
      const hex = (t: string) => Buffer.from(t).toString('hex');
      assert.deepEqual(e.parts, [
        { field: 'description', value: 'Important document' },
        { field: 'tags', value: 'important' },
        { field: 'tags', value: 'archive' },
        { file: 'file', filename: 'document.pdf', mimeType: 'application/pdf', hex: hex('PDF content') },
        { file: 'files', filename: 'a.txt', mimeType: 'text/plain', hex: hex('A') },
        { file: 'files', filename: 'b.txt', mimeType: 'text/plain', hex: hex('B') },
        { file: 'packed', filename: 'data.gz', mimeType: 'text/plain', hex: hex('compressed data') },
      ]);
      assert.match(e.body, /Content-Encoding: gzip\r\n/);
    });
    it('should keep a JSON body whose Content-Type names a boundary, and a JSON array, as JSON', () => {
      const withBoundary = buildRequest({ method: 'POST', path: '/', headers: { 'Content-Type': 'multipart/form-data; boundary=x' }, body: { a: 1 } });
      assert.equal(withBoundary.body!.toString(), '{"a":1}');
      const array = buildRequest({ method: 'POST', path: '/', headers: { 'Content-Type': 'multipart/form-data' }, body: [1] });
      assert.equal(array.body!.toString(), '[1]');
    });
  });

  describe('when the server switches protocols', () => {
    // Without an 'upgrade' listener node drops the connection and the request never settles: the
    // timeout turns that regression into a failure instead of a hung run.
    it('should resolve the 101 with its headers and an empty body, then close the connection', { timeout: 5000 }, async () => {
      // A hand-written handshake answer, as any server (keel or not) puts it on the wire, followed
      // by a WebSocket text frame ("hi") that belongs to the new protocol, not to the snapshot.
      const upgrading = createServer();
      let clientClosed!: Promise<void>;
      let seen: Record<string, string | string[] | undefined> = {};
      upgrading.on('upgrade', (req, socket) => {
        seen = req.headers;
        // node's http server keeps sockets half-open: the client's close arrives as 'end'.
        clientClosed = new Promise((r) => socket.once('end', () => {
          socket.destroy();
          r();
        }));
        socket.on('error', () => {});
        socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nX-Extra: one\r\nX-Extra: two\r\n\r\n');
        socket.write(Buffer.from([0x81, 0x02, 0x68, 0x69]));
      });
      await new Promise<void>((r) => upgrading.listen(0, '127.0.0.1', r));
      try {
        const url = `http://127.0.0.1:${(upgrading.address() as AddressInfo).port}`;
        const snap = await send(url, buildRequest({
          method: 'GET', path: '/ws',
          headers: { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13' },
        }));
        assert.equal(seen['sec-websocket-key'], 'dGhlIHNhbXBsZSBub25jZQ==');
        assert.equal(snap.status, 101);
        assert.equal(snap.headers.upgrade, 'websocket');
        assert.equal(snap.headers.connection, 'Upgrade');
        assert.equal(snap.headers['sec-websocket-accept'], 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
        assert.equal(snap.headers['x-extra'], 'one, two');
        assert.equal(snap.body.length, 0);
        assert.equal(snap.text, '');
        await clientClosed;
      } finally {
        upgrading.closeAllConnections();
        await new Promise<void>((r) => upgrading.close(() => r()));
      }
    });
  });

  describe('when the server sends the head of an answer, then part of its body, then nothing', () => {
    it('should give up after the per-request timeout with NoResponse (a budget for the whole answer, not an idle timer)', async () => {
      const stalled = createServer((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '100' });
        // A byte now and then keeps the socket busy: an idle timer would never fire.
        const drip = setInterval(() => res.write('x'), 100);
        res.on('close', () => clearInterval(drip));
      });
      await new Promise<void>((r) => stalled.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
      try {
        await assert.rejects(send(url, buildRequest({ method: 'GET', path: '/' }), 600), (err: Error) => err instanceof NoResponseError && /No response within 600 ms/.test(err.message));
      } finally {
        stalled.closeAllConnections();
        await new Promise<void>((r) => stalled.close(() => r()));
      }
    });
  });

  describe('when the server is not there', () => {
    it('should reject with the connection error', async () => {
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
      await new Promise<void>((r) => closed.close(() => r()));
      await assert.rejects(send(url, buildRequest({ method: 'GET', path: '/' })), /ECONNREFUSED/);
    });
  });
});
