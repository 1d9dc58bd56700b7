import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import type express from 'express';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import { compression, type CompressionConfigInput } from './index.js';
import { CompressionConfig } from '../../lib/records/server.js';

const PAYLOAD = { message: 'Compressed payload', payload: 'a'.repeat(2000) };
const PAYLOAD_TEXT = JSON.stringify(PAYLOAD);
/** 8 MiB of base64 text: compressible only ~25%, so the compressed stream outruns the socket. */
const LARGE = Buffer.from(randomBytes(6 * 1024 * 1024).toString('base64'));

/** Routes shared by the suites; `signals` lets a test release a streaming handler. */
// Every test in this block runs under Express 4 and under Express 5 (test/helpers/express-versions.ts).
for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
function routes(app: express.Express, signals: Map<string, () => void>) {
  app.get('/json', (_req, res) => res.json(PAYLOAD));
  app.get('/tiny', (_req, res) => res.json({ payload: 'tiny' }));
  app.get('/exact/:n', (req, res) => res.type('text/plain').send('x'.repeat(Number(req.params.n))));
  app.get('/png', (_req, res) => res.type('image/png').send(Buffer.alloc(4096, 7)));
  app.get('/typed/:kind', (req, res) => {
    const types: Record<string, string | undefined> = { octet: 'application/octet-stream', pdf: 'application/pdf', svg: 'image/svg+xml', icon: 'image/x-icon', grpc: 'application/grpc+proto', none: undefined };
    const type = types[req.params.kind!];
    const body = Buffer.alloc(4096, 'k');
    if (type === undefined) {
      res.writeHead(200, { 'Content-Length': body.length });
      res.end(body);
    } else res.set('Content-Type', type).send(body);
  });
  app.get('/no-transform', (_req, res) => res.set('Cache-Control', 'public, no-transform').json(PAYLOAD));
  app.get('/pre-encoded', (_req, res) => res.set('Content-Encoding', 'gzip').type('application/json').send(zlib.gzipSync(PAYLOAD_TEXT)));
  app.get('/no-content', (_req, res) => res.status(204).end());
  app.get('/etag', (_req, res) => res.set('ETag', '"v1"').json(PAYLOAD));
  app.get('/vary', (_req, res) => res.set('Vary', 'Origin').json(PAYLOAD));
  app.get('/write-head', (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('w'.repeat(3000));
  });
  app.get('/stream', (_req, res) => {
    res.type('application/x-ndjson');
    Readable.from((function* () {
      for (let i = 0; i < 2000; i++) yield `${JSON.stringify({ i, pad: 'p'.repeat(100) })}\n`;
    })()).pipe(res);
  });
  app.get('/large', (_req, res) => {
    res.type('text/plain');
    const chunks = Array.from({ length: LARGE.length / 65536 }, (_, i) => LARGE.subarray(i * 65536, (i + 1) * 65536));
    Readable.from(chunks).pipe(res);
  });
  app.get('/events', (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.write(`data: ${'e'.repeat(2000)}\n\n`);
    signals.set('events', () => res.end('data: last\n\n'));
  });
  app.get('/flush', (_req, res) => {
    res.type('text/plain');
    res.write('first chunk;');
    (res as unknown as { flush(): void }).flush();
    signals.set('flush', () => res.end('second chunk'));
  });
}

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

async function serve(options?: CompressionConfigInput) {
  const signals = new Map<string, () => void>();
  const app = express();
  app.use(compression(options));
  routes(app, signals);
  const server = http.createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const get = (path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> =>
    new Promise((resolve, reject) => {
      http
        .request({ host: '127.0.0.1', port, path, method, headers }, async (res) => {
          const chunks: Buffer[] = [];
          for await (const c of res) chunks.push(c as Buffer);
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) });
        })
        .on('error', reject)
        .end();
    });
  return { server, port, get, signals };
}

function decode(raw: Raw): string {
  const enc = raw.headers['content-encoding'];
  if (enc === 'gzip') return zlib.gunzipSync(raw.body).toString('utf8');
  if (enc === 'br') return zlib.brotliDecompressSync(raw.body).toString('utf8');
  assert.equal(enc, undefined);
  return raw.body.toString('utf8');
}

describe('compression: with the default record (gzip and brotli, min_size 1024, quality 6)', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  before(async () => (s = await serve()));
  after(() => s.server.close());

  const negotiation: Array<[string, string | undefined]> = [
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['br;q=0.1, gzip;q=0.9', 'gzip'],
    ['*', 'br'],
    ['identity', undefined],
    ['gzip;q=0', undefined],
    ['deflate', undefined],
  ];
  for (const [accept, expected] of negotiation) {
    it(`should answer Accept-Encoding ${JSON.stringify(accept)} with ${expected ?? 'no coding'} and the exact bytes`, async () => {
      const raw = await s.get('/json', { 'Accept-Encoding': accept });
      assert.equal(raw.status, 200);
      assert.equal(raw.headers['content-encoding'], expected);
      assert.equal(raw.headers.vary, 'Accept-Encoding');
      assert.equal(decode(raw), PAYLOAD_TEXT);
      if (expected) {
        assert.ok(raw.body.length < PAYLOAD_TEXT.length / 4, 'the body should be compressed');
        // A whole body given to res.end() is compressed in one call and sent with its exact length.
        assert.equal(raw.headers['content-length'], String(raw.body.length));
        assert.equal(raw.headers['transfer-encoding'], undefined);
      }
    });
  }

  it('should send identity with Vary when the request has no Accept-Encoding', async () => {
    const raw = await s.get('/json');
    assert.equal(raw.headers['content-encoding'], undefined);
    assert.equal(raw.headers.vary, 'Accept-Encoding');
    assert.equal(raw.body.toString(), PAYLOAD_TEXT);
  });

  it('should not compress a body under min_size', async () => {
    const raw = await s.get('/tiny', { 'Accept-Encoding': 'gzip' });
    assert.equal(raw.headers['content-encoding'], undefined);
    assert.equal(raw.body.toString(), '{"payload":"tiny"}');
  });

  it('should compress a body of exactly min_size and not one byte less', async () => {
    assert.equal((await s.get('/exact/1024', { 'Accept-Encoding': 'gzip' })).headers['content-encoding'], 'gzip');
    assert.equal((await s.get('/exact/1023', { 'Accept-Encoding': 'gzip' })).headers['content-encoding'], undefined);
  });

  it('should not compress or vary an image/png body', async () => {
    const raw = await s.get('/png', { 'Accept-Encoding': 'gzip, br' });
    assert.equal(raw.headers['content-encoding'], undefined);
    assert.equal(raw.headers.vary, undefined);
    assert.equal(raw.body.length, 4096);
  });

  describe('when the record decides by media type (the reference: all but gRPC, images other than SVG, SSE)', () => {
    for (const kind of ['octet', 'pdf', 'svg', 'none']) {
      it(`should compress a ${kind} body`, async () => {
        const raw = await s.get(`/typed/${kind}`, { 'Accept-Encoding': 'gzip' });
        assert.equal(raw.headers['content-encoding'], 'gzip');
        assert.equal(zlib.gunzipSync(raw.body).length, 4096);
      });
    }
    for (const kind of ['icon', 'grpc']) {
      it(`should not compress a ${kind} body`, async () => {
        const raw = await s.get(`/typed/${kind}`, { 'Accept-Encoding': 'gzip' });
        assert.equal(raw.headers['content-encoding'], undefined);
        assert.equal(raw.body.length, 4096);
      });
    }
  });

  it('should respect Cache-Control: no-transform', async () => {
    const raw = await s.get('/no-transform', { 'Accept-Encoding': 'gzip' });
    assert.equal(raw.headers['content-encoding'], undefined);
    assert.equal(raw.body.toString(), PAYLOAD_TEXT);
  });

  it('should never encode an already-encoded body twice', async () => {
    const raw = await s.get('/pre-encoded', { 'Accept-Encoding': 'br, gzip' });
    assert.equal(raw.headers['content-encoding'], 'gzip');
    assert.equal(zlib.gunzipSync(raw.body).toString(), PAYLOAD_TEXT);
  });

  it('should not compress a HEAD response', async () => {
    const raw = await s.get('/json', { 'Accept-Encoding': 'gzip' }, 'HEAD');
    assert.equal(raw.headers['content-encoding'], undefined);
    assert.equal(raw.headers['content-length'], String(PAYLOAD_TEXT.length));
  });

  it('should not label a 204 as compressed', async () => {
    const raw = await s.get('/no-content', { 'Accept-Encoding': 'gzip' });
    assert.equal(raw.status, 204);
    assert.equal(raw.headers['content-encoding'], undefined);
  });

  it('should answer a conditional request with a plain 304 and weaken the ETag of the compressed 200', async () => {
    const first = await s.get('/etag', { 'Accept-Encoding': 'gzip' });
    assert.equal(first.headers['content-encoding'], 'gzip');
    assert.equal(first.headers.etag, 'W/"v1"');
    const second = await s.get('/etag', { 'Accept-Encoding': 'gzip', 'If-None-Match': 'W/"v1"' });
    assert.equal(second.status, 304);
    assert.equal(second.headers['content-encoding'], undefined);
    assert.equal(second.body.length, 0);
  });

  it('should append Accept-Encoding to an existing Vary', async () => {
    const raw = await s.get('/vary', { 'Accept-Encoding': 'gzip' });
    assert.equal(raw.headers.vary, 'Origin, Accept-Encoding');
  });

  it('should see headers passed to writeHead()', async () => {
    const raw = await s.get('/write-head', { 'Accept-Encoding': 'gzip' });
    assert.equal(raw.headers['content-encoding'], 'gzip');
    assert.equal(decode(raw), 'w'.repeat(3000));
  });

  it('should compress a piped stream of unknown length to the exact bytes', async () => {
    const raw = await s.get('/stream', { 'Accept-Encoding': 'br' });
    assert.equal(raw.headers['content-encoding'], 'br');
    assert.equal(raw.headers['transfer-encoding'], 'chunked');
    const lines = decode(raw).trimEnd().split('\n');
    assert.equal(lines.length, 2000);
    assert.deepEqual(JSON.parse(lines[1999]!), { i: 1999, pad: 'p'.repeat(100) });
  });

  it('should keep back-pressure on a large streamed body and deliver every byte', { timeout: 20_000 }, async () => {
    for (const coding of ['gzip', 'br']) {
      const raw = await s.get('/large', { 'Accept-Encoding': coding });
      assert.equal(raw.headers['content-encoding'], coding);
      const decoded = coding === 'gzip' ? zlib.gunzipSync(raw.body) : zlib.brotliDecompressSync(raw.body);
      assert.equal(decoded.length, LARGE.length);
      assert.ok(decoded.equals(LARGE));
    }
  });

  it('should pass text/event-stream through uncompressed, event by event', { timeout: 5000 }, async () => {
    const res = await new Promise<http.IncomingMessage>((resolve) =>
      http.get({ host: '127.0.0.1', port: s.port, path: '/events', headers: { 'Accept-Encoding': 'gzip, br' } }, resolve),
    );
    assert.equal(res.headers['content-encoding'], undefined);
    // The first event must arrive while the handler is still open: a buffering compressor would hang here.
    const [first] = (await once(res, 'data')) as [Buffer];
    assert.match(first.toString(), /^data: e+\n\n/);
    s.signals.get('events')!();
    let rest = '';
    for await (const c of res) rest += c;
    assert.match(rest, /data: last\n\n$/);
  });

  it('should flush compressed data before the end when the handler calls res.flush()', { timeout: 5000 }, async () => {
    const res = await new Promise<http.IncomingMessage>((resolve) =>
      http.get({ host: '127.0.0.1', port: s.port, path: '/flush', headers: { 'Accept-Encoding': 'gzip' } }, resolve),
    );
    assert.equal(res.headers['content-encoding'], 'gzip');
    const gunzip = res.pipe(zlib.createGunzip());
    const [first] = (await once(gunzip, 'data')) as [Buffer];
    assert.equal(first.toString(), 'first chunk;');
    s.signals.get('flush')!();
    let rest = '';
    for await (const c of gunzip) rest += c;
    assert.equal(rest, 'second chunk');
  });
});

describe('compression: with the conformance record (gzip only, min_size 0, quality 4)', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  before(async () => (s = await serve({ gzip: true, brotli: false, min_size: 0, quality: 4 })));
  after(() => s.server.close());

  it('should gzip a small body', async () => {
    const raw = await s.get('/tiny', { 'Accept-Encoding': 'gzip' });
    assert.equal(raw.headers['content-encoding'], 'gzip');
    assert.equal(raw.headers.vary, 'Accept-Encoding');
    assert.equal(decode(raw), '{"payload":"tiny"}');
  });

  it('should not use brotli even when the client prefers it', async () => {
    const raw = await s.get('/json', { 'Accept-Encoding': 'br;q=1, gzip;q=0.5' });
    assert.equal(raw.headers['content-encoding'], 'gzip');
  });

  it('should send identity to a brotli-only client', async () => {
    const raw = await s.get('/json', { 'Accept-Encoding': 'br' });
    assert.equal(raw.headers['content-encoding'], undefined);
    assert.equal(raw.body.toString(), PAYLOAD_TEXT);
  });

  it('should still leave an empty 204 alone', async () => {
    const raw = await s.get('/no-content', { 'Accept-Encoding': 'gzip' });
    assert.equal(raw.headers['content-encoding'], undefined);
  });
});

describe('compression: when one coding or both are off', () => {
  it('should not gzip with gzip: false', async () => {
    const s = await serve({ gzip: false, minSize: 0 });
    try {
      assert.equal((await s.get('/json', { 'Accept-Encoding': 'gzip' })).headers['content-encoding'], undefined);
      assert.equal((await s.get('/json', { 'Accept-Encoding': 'gzip, br;q=0.2' })).headers['content-encoding'], 'br');
    } finally {
      s.server.close();
    }
  });

  it('should be a pass-through with neither coding', async () => {
    assert.equal(compression({ gzip: false, brotli: false }).name, 'compressionDisabled');
    const s = await serve({ gzip: false, brotli: false });
    try {
      const raw = await s.get('/json', { 'Accept-Encoding': 'gzip, br' });
      assert.equal(raw.headers['content-encoding'], undefined);
      assert.equal(raw.headers.vary, undefined);
    } finally {
      s.server.close();
    }
  });
});

describe('when min_size is above 65535', () => {
  it('should treat it as 65535, as the reference clamps it', async () => {
    const s = await serve({ min_size: 100_000 });
    try {
      assert.equal((await s.get('/exact/65535', { 'Accept-Encoding': 'gzip' })).headers['content-encoding'], 'gzip');
      assert.equal((await s.get('/exact/65534', { 'Accept-Encoding': 'gzip' })).headers['content-encoding'], undefined);
    } finally {
      s.server.close();
    }
  });
});

describe('compression: when the record says enabled: false', () => {
  it('should be a pass-through, whatever the codings and sizes', async () => {
    assert.equal(compression({ enabled: false, gzip: true, min_size: 0 }).name, 'compressionDisabled');
    const s = await serve({ enabled: false, minSize: 0 });
    try {
      const raw = await s.get('/json', { 'Accept-Encoding': 'gzip, br' });
      assert.equal(raw.headers['content-encoding'], undefined);
      assert.equal(raw.headers.vary, undefined);
    } finally {
      s.server.close();
    }
  });
});

describe('compression: at the quality bounds', () => {
  for (const quality of [0, 9, 11]) {
    it(`should produce decodable gzip and brotli at quality ${quality}`, async () => {
      const s = await serve({ quality });
      try {
        assert.equal(decode(await s.get('/json', { 'Accept-Encoding': 'gzip' })), PAYLOAD_TEXT);
        assert.equal(decode(await s.get('/json', { 'Accept-Encoding': 'br' })), PAYLOAD_TEXT);
      } finally {
        s.server.close();
      }
    });
  }

  it('should accept a parsed CompressionConfig', () => {
    assert.equal(typeof compression(CompressionConfig.parse({ quality: 3 })), 'function');
  });
});
});
