/** The inline (synchronous) path for whole bodies, its threshold, and the header memo. */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { compression, syncThresholdFor, COMPRESSION_MEMO_SIZE, MAX_SYNC_THRESHOLD, MIN_SYNC_THRESHOLD, type CompressionExtensions } from './index.js';
import { BoundedMemo } from './memo.js';
import { ConfigError } from '../../lib/http/errors.js';

const SMALL = JSON.stringify({ rows: Array.from({ length: 100 }, (_, i) => ({ i, name: `customer-${i}` })) });
const BIG = JSON.stringify({ rows: Array.from({ length: 3000 }, (_, i) => ({ i, name: `customer-${i}` })) });

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** Whether the headers were already sent when the handler's res.end() returned. */
  sentOnReturn: boolean;
}

/** A bare node:http server: compression, then a handler that answers `/small`, `/big`, `/stream`. */
async function serve(extensions: CompressionExtensions) {
  const mw = compression({ min_size: 1024 }, extensions);
  const sentOnReturn = new Map<string, boolean>();
  const server = http.createServer((req, res) => {
    mw(req, res, () => {
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/stream') {
        Readable.from([SMALL, SMALL, SMALL]).pipe(res);
        return;
      }
      const body = req.url === '/big' ? BIG : SMALL;
      res.setHeader('Content-Length', Buffer.byteLength(body));
      res.end(body);
      sentOnReturn.set(String(req.headers['x-probe']), res.headersSent);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  let probe = 0;
  const get = (path: string, accept: string): Promise<Raw> =>
    new Promise((resolve, reject) => {
      const id = String(++probe);
      http
        .get({ host: '127.0.0.1', port, path, headers: { 'accept-encoding': accept, 'x-probe': id } }, async (res) => {
          const chunks: Buffer[] = [];
          for await (const c of res) chunks.push(c as Buffer);
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks), sentOnReturn: sentOnReturn.get(id) ?? false });
        })
        .on('error', reject);
    });
  return { server, get };
}

function decode(raw: Raw): string {
  const enc = raw.headers['content-encoding'];
  return (enc === 'gzip' ? zlib.gunzipSync(raw.body) : enc === 'br' ? zlib.brotliDecompressSync(raw.body) : raw.body).toString('utf8');
}

describe('compression: when a whole body is at most syncThreshold bytes', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  before(async () => (s = await serve({ syncThreshold: Buffer.byteLength(SMALL) })));
  after(() => s.server.close());

  for (const coding of ['gzip', 'br']) {
    it(`should ${coding}-encode it before res.end() returns, with the exact Content-Length`, async () => {
      const raw = await s.get('/small', coding);
      assert.equal(raw.headers['content-encoding'], coding);
      assert.equal(raw.headers.vary, 'Accept-Encoding');
      assert.equal(raw.headers['content-length'], String(raw.body.length));
      assert.equal(raw.headers['transfer-encoding'], undefined);
      assert.equal(decode(raw), SMALL);
      assert.equal(raw.sentOnReturn, true);
    });
  }

  it('should give the same bytes as zlib.gzipSync at the record quality', async () => {
    const raw = await s.get('/small', 'gzip');
    assert.deepEqual(raw.body, zlib.gzipSync(SMALL, { level: 6 }));
  });

  it('should compress a bigger whole body off the event loop, still with its exact Content-Length', async () => {
    const raw = await s.get('/big', 'gzip');
    assert.equal(raw.headers['content-encoding'], 'gzip');
    assert.equal(raw.headers['content-length'], String(raw.body.length));
    assert.equal(decode(raw), BIG);
    assert.equal(raw.sentOnReturn, false);
  });

  it('should still stream a body written in pieces (chunked, no Content-Length)', async () => {
    const raw = await s.get('/stream', 'gzip');
    assert.equal(raw.headers['content-encoding'], 'gzip');
    assert.equal(raw.headers['content-length'], undefined);
    assert.equal(raw.headers['transfer-encoding'], 'chunked');
    assert.equal(decode(raw), SMALL.repeat(3));
  });
});

describe('compression: with syncThreshold 0', () => {
  it('should compress every whole body off the event loop', async () => {
    const s = await serve({ syncThreshold: 0 });
    try {
      const raw = await s.get('/small', 'gzip');
      assert.equal(raw.headers['content-encoding'], 'gzip');
      assert.equal(raw.headers['content-length'], String(raw.body.length));
      assert.equal(decode(raw), SMALL);
      assert.equal(raw.sentOnReturn, false);
    } finally {
      s.server.close();
    }
  });
});

describe('compression: the default sync threshold', () => {
  it('should be 64 KiB on one core, an eighth of that per extra core, never below 4 KiB', () => {
    assert.equal(syncThresholdFor(1), MAX_SYNC_THRESHOLD);
    assert.equal(syncThresholdFor(2), 8192);
    assert.equal(syncThresholdFor(3), MIN_SYNC_THRESHOLD);
    assert.equal(syncThresholdFor(64), MIN_SYNC_THRESHOLD);
    assert.equal(syncThresholdFor(0), MAX_SYNC_THRESHOLD);
  });
});

describe('compression: when the extensions are invalid', () => {
  for (const bad of [{ syncThreshold: -1 }, { syncThreshold: 1.5 }, { syncThreshold: '4096' }, { threshold: 10 }, null]) {
    it(`should refuse ${JSON.stringify(bad)} with a ConfigError`, () => {
      assert.throws(() => compression({}, bad as CompressionExtensions), ConfigError);
    });
  }
});

describe('compression: when clients send many distinct Accept-Encoding values', () => {
  it('should negotiate each one correctly past the memo capacity', async () => {
    const s = await serve({});
    try {
      for (let i = 0; i < COMPRESSION_MEMO_SIZE + 10; i += 7) {
        const raw = await s.get('/small', `gzip;q=0.${String(i % 9)}01, br;q=0.${String((i + 4) % 9)}, x-${i}`);
        const want = i % 9 > (i + 4) % 9 ? 'gzip' : 'br';
        assert.equal(raw.headers['content-encoding'], want);
        assert.equal(decode(raw), SMALL);
      }
    } finally {
      s.server.close();
    }
  });
});

describe('BoundedMemo', () => {
  it('should never hold more than its capacity and still answer every key', () => {
    const memo = new BoundedMemo<number>(4, 8);
    for (let i = 0; i < 10; i++) {
      assert.equal(memo.get(`k${i}`, (k) => Number(k.slice(1))), i);
      assert.ok(memo.size <= 4);
    }
  });

  it('should compute a key once while it is held', () => {
    const memo = new BoundedMemo<string | null>(4, 8);
    let calls = 0;
    const compute = () => (calls++, null);
    memo.get('gzip', compute);
    memo.get('gzip', compute);
    assert.equal(calls, 1);
  });

  it('should answer but not keep a key longer than maxKeyLength', () => {
    const memo = new BoundedMemo<number>(4, 8);
    assert.equal(memo.get('x'.repeat(9), (k) => k.length), 9);
    assert.equal(memo.size, 0);
  });
});
