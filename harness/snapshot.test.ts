import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { SnapshotError } from '../lib/http/errors.js';
import { snapshotFromParts, snapshotResponse } from './snapshot.js';

const TEXT = 'hello, snapshot — ünïcödé\n'.repeat(20);

/** Routes: /enc/<codings> sends TEXT encoded with each coding in order; a few special cases. */
function handler(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname.startsWith('/enc/')) {
    const codings = decodeURIComponent(url.pathname.slice(5)).split(',').map((s) => s.trim());
    let body = Buffer.from(TEXT);
    for (const c of codings) {
      if (c === 'gzip') body = gzipSync(body);
      else if (c === 'br') body = brotliCompressSync(body);
      else if (c === 'deflate') body = deflateSync(body);
      else if (c === 'identity') body = Buffer.from(body);
    }
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Encoding': codings.join(', ') });
    res.end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  switch (url.pathname) {
    case '/raw-deflate':
      res.writeHead(200, { 'Content-Encoding': 'deflate' });
      res.end(deflateRawSync(Buffer.from(TEXT)));
      return;
    case '/corrupt-gzip':
      res.writeHead(200, { 'Content-Encoding': 'gzip' });
      res.end(Buffer.concat([gzipSync(Buffer.from(TEXT)).subarray(0, 12), Buffer.from('garbage')]));
      return;
    case '/truncated-gzip': {
      const gz = gzipSync(Buffer.from(TEXT));
      res.writeHead(200, { 'Content-Encoding': 'gzip' });
      res.end(gz.subarray(0, gz.length - 10));
      return;
    }
    case '/not-gzip':
      res.writeHead(200, { 'Content-Encoding': 'gzip' });
      res.end('this was never gzip');
      return;
    case '/zstd':
      res.writeHead(200, { 'Content-Encoding': 'compress' });
      res.end('abc');
      return;
    case '/json':
      res.setHeader('Set-Cookie', ['a=1; Path=/', 'b=2']);
      res.setHeader('Content-Type', 'application/problem+json');
      res.end(JSON.stringify({ status: 404, title: 'Not Found' }));
      return;
    case '/not-json':
      res.setHeader('Content-Type', 'application/json');
      res.end('{oops');
      return;
    case '/utf8-header':
      // node's server writes non-ASCII header strings as UTF-8 bytes; its client reads them as latin1.
      res.setHeader('X-Name', 'café');
      res.end('ok');
      return;
    default:
      res.end('plain');
  }
}

let server: Server;
let base: string;
// node's server cannot send arbitrary header bytes, so invalid UTF-8 comes from a raw TCP server.
let rawServer: NetServer;
let badHeaderUrl: string;
before(async () => {
  server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  rawServer = createNetServer((sock) => {
    sock.once('data', () => {
      // "caf" + a lone 0xE9 byte: latin1 é, never valid UTF-8.
      sock.end(Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nX-Bad: caf'), Buffer.from([0xe9]), Buffer.from('\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok')]));
    });
  });
  await new Promise<void>((r) => rawServer.listen(0, '127.0.0.1', r));
  badHeaderUrl = `http://127.0.0.1:${(rawServer.address() as AddressInfo).port}/`;
});
after(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await new Promise<void>((r) => rawServer.close(() => r()));
});

function raw(path: string, method = 'GET'): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = get(path.startsWith('http') ? path : `${base}${path}`, { method, agent: false }, resolve);
    req.on('error', reject);
  });
}

describe('snapshotResponse', () => {
  describe('when given a raw node:http response', () => {
    for (const codings of ['gzip', 'br', 'deflate', 'identity', 'gzip, br', 'br, gzip, deflate']) {
      it(`should decode a body with Content-Encoding "${codings}"`, async () => {
        const snap = await snapshotResponse(await raw(`/enc/${encodeURIComponent(codings)}`));
        assert.equal(snap.status, 200);
        assert.equal(snap.text, TEXT);
        assert.deepEqual(snap.body, Buffer.from(TEXT));
        assert.equal(snap.headers['content-encoding'], codings);
      });
    }

    it('should accept raw DEFLATE sent as "deflate" (what browsers accept too)', async () => {
      const snap = await snapshotResponse(await raw('/raw-deflate'));
      assert.equal(snap.text, TEXT);
    });

    it('should leave the empty body of a HEAD response alone', async () => {
      const snap = await snapshotResponse(await raw('/enc/gzip', 'HEAD'));
      assert.equal(snap.body.length, 0);
      assert.equal(snap.headers['content-encoding'], 'gzip');
    });

    it('should throw SnapshotError Decompression for a corrupt gzip body', async () => {
      await assert.rejects(snapshotResponse(await raw('/corrupt-gzip')), (err: unknown) => {
        assert.ok(err instanceof SnapshotError);
        assert.equal(err.kind, 'Decompression');
        assert.match(err.message, /gzip/);
        return true;
      });
    });

    it('should throw SnapshotError Decompression for a truncated gzip body', async () => {
      await assert.rejects(snapshotResponse(await raw('/truncated-gzip')), (err: unknown) => err instanceof SnapshotError && err.kind === 'Decompression');
    });

    it('should throw SnapshotError Decompression for an unsupported coding', async () => {
      await assert.rejects(snapshotResponse(await raw('/zstd')), (err: unknown) => err instanceof SnapshotError && err.kind === 'Decompression' && /compress/.test(err.message));
    });

    it('should decode UTF-8 header values sent as raw bytes', async () => {
      const snap = await snapshotResponse(await raw('/utf8-header'));
      assert.equal(snap.headers['x-name'], 'café');
    });

    it('should throw SnapshotError InvalidHeader for a header that is not UTF-8', async () => {
      await assert.rejects(snapshotResponse(await raw(badHeaderUrl)), (err: unknown) => {
        assert.ok(err instanceof SnapshotError);
        assert.equal(err.kind, 'InvalidHeader');
        assert.match(err.message, /x-bad/);
        return true;
      });
    });

    it('should parse +json bodies and keep Set-Cookie as a list', async () => {
      const snap = await snapshotResponse(await raw('/json'));
      assert.deepEqual(snap.json, { status: 404, title: 'Not Found' });
      assert.deepEqual(snap.headers['set-cookie'], ['a=1; Path=/', 'b=2']);
    });

    it('should keep a JSON-typed body that does not parse as text only', async () => {
      const snap = await snapshotResponse(await raw('/not-json'));
      assert.equal(snap.json, undefined);
      assert.equal(snap.text, '{oops');
    });
  });

  describe('when given a fetch Response', () => {
    it('should return the body fetch decoded, with the headers', async () => {
      const snap = await snapshotResponse(await fetch(`${base}/enc/gzip,br`));
      assert.equal(snap.text, TEXT);
      assert.equal(snap.headers['content-type'], 'text/plain; charset=utf-8');
    });

    it('should throw SnapshotError Decompression when the body is corrupt', async () => {
      await assert.rejects(snapshotResponse(await fetch(`${base}/not-gzip`)), (err: unknown) => err instanceof SnapshotError && err.kind === 'Decompression');
    });

    it('should throw SnapshotError InvalidHeader for a header that is not UTF-8', async () => {
      await assert.rejects(snapshotResponse(await fetch(badHeaderUrl)), (err: unknown) => err instanceof SnapshotError && err.kind === 'InvalidHeader');
    });
  });

  describe('when given a supertest response', () => {
    it('should snapshot status, headers, text and JSON', async () => {
      const snap = await snapshotResponse(await request(server).get('/json'));
      assert.equal(snap.status, 200);
      assert.deepEqual(snap.json, { status: 404, title: 'Not Found' });
      assert.deepEqual(snap.headers['set-cookie'], ['a=1; Path=/', 'b=2']);
    });

    it('should use the body superagent decompressed', async () => {
      const snap = await snapshotResponse(await request(server).get('/enc/gzip'));
      assert.equal(snap.text, TEXT);
    });
  });

  describe('when given raw parts', () => {
    it('should merge repeated headers with ", " (RFC 9110 §5.3)', () => {
      const snap = snapshotFromParts({ status: 200, headers: [['Vary', 'Origin'], ['vary', 'Accept-Encoding']], body: Buffer.alloc(0) });
      assert.equal(snap.headers.vary, 'Origin, Accept-Encoding');
    });

    it('should decode stacked codings in reverse order of application', () => {
      const body = gzipSync(brotliCompressSync(Buffer.from('x')));
      const snap = snapshotFromParts({ status: 200, headers: { 'content-encoding': 'br, gzip' }, body });
      assert.equal(snap.text, 'x');
    });

    it('should fail to decode codings listed in the wrong order', () => {
      const body = gzipSync(brotliCompressSync(Buffer.from('x')));
      assert.throws(() => snapshotFromParts({ status: 200, headers: { 'content-encoding': 'gzip, br' }, body }), SnapshotError);
    });
  });
});
