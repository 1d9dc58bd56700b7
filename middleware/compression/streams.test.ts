/**
 * What a streaming writer sees through compression() (issue 23): back-pressure ('drain' only when the
 * compressor can take more), write()/end() after end answer false as the compression package's do,
 * node's HTTP/2 compatibility server, `compression(null)` and `enforceEncoding`. Real sockets, node:http
 * and Express 4 and 5.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import { compression, type CompressionPackageOptions } from './index.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Plain node:http and both Express majors, each serving `handler` behind `compression(options)`. */
const HOSTS: { name: string; make: (options: CompressionPackageOptions | null, handler: Handler) => http.Server }[] = [
  {
    name: 'node:http',
    make: (options, handler) => {
      const mw = compression(options);
      return http.createServer((req, res) => mw(req as never, res, () => handler(req, res)));
    },
  },
  ...EXPRESS_VERSIONS.map(({ name, express }) => ({
    name,
    make: (options: CompressionPackageOptions | null, handler: Handler) => {
      const app = express();
      app.use(compression(options) as never);
      app.get('/', (req, res) => handler(req, res));
      return http.createServer(app);
    },
  })),
];

async function listening(server: http.Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** GET / with exactly these request headers (node adds no Accept-Encoding of its own). */
async function get(port: number, headers: Record<string, string>): Promise<{ res: IncomingMessage; body: Buffer }> {
  const req = http.get({ host: '127.0.0.1', port, path: '/', headers });
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return { res, body: Buffer.concat(chunks) };
}

for (const host of HOSTS) describe(`under ${host.name}`, () => {
  describe('when a streaming writer fills the compressor while the client reads nothing', () => {
    it('should emit drain only when write() can take more again', async () => {
      const chunk = randomBytes(128 * 1024);
      const seen: { drainsBeforePressure: number; writeAfterDrain?: boolean } = { drainsBeforePressure: 0 };
      let filled!: () => void;
      const full = new Promise<void>((r) => (filled = r));
      let pressureOn = false;
      const server = host.make({ threshold: 0 }, (_req, res) => {
        res.setHeader('Content-Type', 'text/plain');
        res.on('drain', () => {
          if (!pressureOn) seen.drainsBeforePressure++;
        });
        res.write('start');
        // Incompressible bytes until the compressor refuses more (flush pushes each through zlib).
        setImmediate(() => {
          pressureOn = true;
          while (res.write(chunk) !== false) (res as unknown as { flush(): void }).flush();
          res.once('drain', () => {
            seen.writeAfterDrain = res.write('end');
            res.end();
          });
          filled();
        });
      });
      const port = await listening(server);
      try {
        const req = http.get({ host: '127.0.0.1', port, path: '/', headers: { 'Accept-Encoding': 'gzip' } });
        const [res] = (await once(req, 'response')) as [IncomingMessage];
        assert.equal(res.headers['content-encoding'], 'gzip');
        res.pause();
        await full;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.resume();
        await once(res, 'end');
        assert.equal(seen.drainsBeforePressure, 0, 'no drain reached the app before it was told to wait');
        assert.equal(seen.writeAfterDrain, true, "write() right after 'drain' takes the chunk");
        assert.ok(zlib.gunzipSync(Buffer.concat(chunks)).toString('latin1').endsWith('end'));
      } finally {
        server.close();
      }
    });
  });

  describe('when the response is written after it ended', () => {
    it('should answer false from write() and end(), as the compression package does', async () => {
      const answers: unknown[] = [];
      const server = host.make({ threshold: 0 }, (_req, res) => {
        res.setHeader('Content-Type', 'text/plain');
        res.end('hello, world');
        answers.push(res.write('more'), res.end());
      });
      const port = await listening(server);
      try {
        const { res, body } = await get(port, { 'Accept-Encoding': 'gzip' });
        assert.equal(res.headers['content-encoding'], 'gzip');
        assert.equal(zlib.gunzipSync(body).toString(), 'hello, world');
        assert.deepEqual(answers, [false, false]);
      } finally {
        server.close();
      }
    });
  });

  describe('when called as compression(null)', () => {
    it("should behave as the package's defaults (1 kB threshold, its compressible types)", async () => {
      const server = host.make(null, (req, res) => {
        if (req.headers['x-typed'] === 'no') res.end('x'.repeat(2048));
        else {
          res.setHeader('Content-Type', 'text/plain');
          res.end('x'.repeat(req.headers['x-small'] ? 100 : 2048));
        }
      });
      const port = await listening(server);
      try {
        assert.equal((await get(port, { 'Accept-Encoding': 'gzip' })).res.headers['content-encoding'], 'gzip');
        assert.equal((await get(port, { 'Accept-Encoding': 'gzip', 'X-Small': '1' })).res.headers['content-encoding'], undefined);
        // No Content-Type: the package's filter (compressible types) says no, where keel's record would compress.
        assert.equal((await get(port, { 'Accept-Encoding': 'gzip', 'X-Typed': 'no' })).res.headers['content-encoding'], undefined);
      } finally {
        server.close();
      }
    });
  });

  describe('when enforceEncoding is given', () => {
    it('should use it only for a request without Accept-Encoding (RFC 9110 §12.5.3)', async () => {
      const servers: http.Server[] = [];
      const serve = async (enforceEncoding: string) => {
        const s = host.make({ threshold: 0, enforceEncoding }, (_req, res) => {
          res.setHeader('Content-Type', 'text/plain');
          res.end('hello, world');
        });
        servers.push(s);
        return listening(s);
      };
      try {
        const gzip = await serve('gzip');
        const absent = await get(gzip, {});
        assert.equal(absent.res.headers['content-encoding'], 'gzip');
        assert.equal(zlib.gunzipSync(absent.body).toString(), 'hello, world');
        // An empty Accept-Encoding asks for no coding: it gets none.
        assert.equal((await get(gzip, { 'Accept-Encoding': '' })).res.headers['content-encoding'], undefined);
        // What the client names still wins.
        assert.equal((await get(gzip, { 'Accept-Encoding': 'br' })).res.headers['content-encoding'], 'br');
        assert.equal((await get(await serve('br'), {})).res.headers['content-encoding'], 'br');
        for (const none of ['identity', '*', 'bogus', 'deflate']) {
          assert.equal((await get(await serve(none), {})).res.headers['content-encoding'], undefined, none);
        }
      } finally {
        for (const s of servers) s.close();
      }
    });
  });
});

describe("under node's HTTP/2 compatibility server", () => {
  async function fetch2(server: http2.Http2Server, path: string): Promise<{ headers: http2.IncomingHttpHeaders; body: Buffer }> {
    const port = (server.address() as AddressInfo).port;
    const client = http2.connect(`http://127.0.0.1:${port}`);
    try {
      const req = client.request({ ':path': path, 'accept-encoding': 'gzip' });
      const [headers] = (await once(req, 'response')) as [http2.IncomingHttpHeaders];
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      return { headers, body: Buffer.concat(chunks) };
    } finally {
      client.close();
    }
  }

  it('should compress a whole body and a streamed one, with no protocol error and no hang', async () => {
    const mw = compression({ threshold: 0 });
    const big = 'y'.repeat(300_000);
    const server = http2.createServer((req, res) => {
      mw(req as never, res as never, () => {
        res.setHeader('Content-Type', 'text/plain');
        if (req.url === '/whole') res.end('hello, world');
        else {
          res.write(big.slice(0, 100_000));
          res.write(big.slice(100_000));
          res.end();
        }
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const whole = await fetch2(server, '/whole');
      assert.equal(whole.headers[':status'], 200);
      assert.equal(whole.headers['content-encoding'], 'gzip');
      assert.equal(zlib.gunzipSync(whole.body).toString(), 'hello, world');
      const streamed = await fetch2(server, '/streamed');
      assert.equal(streamed.headers['content-encoding'], 'gzip');
      assert.equal(zlib.gunzipSync(streamed.body).toString(), big);
    } finally {
      server.close();
    }
  });
});
