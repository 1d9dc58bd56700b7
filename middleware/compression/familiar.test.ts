/**
 * compression with the `compression` package's options, against the package itself on the same
 * requests, under Express 4 and 5. Intended differences, each asserted below:
 * - keel does not answer `deflate` (only br and gzip): a client that accepts only deflate gets identity.
 * The default filter is keel's list of compressible types (see isCompressible), not the mime-db list
 * of the `compressible` package; both agree on JSON, text and images.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import packageCompression from 'compression';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { ConfigError } from '../../lib/http/errors.js';
import { EXPRESS_VERSIONS, type ExpressFactory } from '../../test/helpers/express-versions.js';
import { compression, type CompressionPackageOptions } from './index.js';

type Mw = (req: any, res: any, next: any) => void;
interface Answer { status: number; headers: Record<string, string | undefined>; raw: Buffer }

const doc = (bytes: number) => ({ rows: Array.from({ length: Math.ceil(bytes / 40) }, (_, i) => ({ i, name: `row-${i}`, ok: true })) });

function appWith(express: ExpressFactory, mw: Mw) {
  const app = express();
  app.use(mw);
  app.get('/small', (_req, res) => void res.json(doc(300)));
  app.get('/medium', (_req, res) => void res.json(doc(3000)));
  app.get('/png', (_req, res) => void res.type('png').send(Buffer.alloc(4000, 7)));
  return app;
}

/** One GET over a real socket, raw bytes (supertest would decode the body). */
async function send(app: { listen(port: number, host: string): Server }, path: string, headers: Record<string, string | undefined>): Promise<Answer> {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise<Answer>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path, headers: headers as Record<string, string>, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, raw: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
  } finally {
    server.close();
  }
}

function decode(a: Answer): string {
  const enc = a.headers['content-encoding'];
  const body = enc === 'gzip' ? zlib.gunzipSync(a.raw) : enc === 'br' ? zlib.brotliDecompressSync(a.raw) : enc === 'deflate' ? zlib.inflateSync(a.raw) : a.raw;
  return body.toString('utf8');
}

async function compare(express: ExpressFactory, options: Record<string, unknown>, path: string, headers: Record<string, string>) {
  const pkg = await send(appWith(express, packageCompression(options as never)), path, headers);
  const keel = await send(appWith(express, compression(options as CompressionPackageOptions)), path, headers);
  return { pkg, keel };
}
const vary = (a: Answer) => (a.headers.vary ?? '').toLowerCase();

for (const { name, express } of EXPRESS_VERSIONS) {
  describe(`compression with the compression package's options under ${name}`, () => {
    describe('when the options are the defaults ({ threshold: 1kb })', () => {
      for (const coding of ['gzip', 'br']) {
        it(`should compress a body over the threshold with ${coding}, as the package does`, async () => {
          const { pkg, keel } = await compare(express, { threshold: '1kb' }, '/medium', { 'accept-encoding': coding });
          assert.equal(keel.headers['content-encoding'], pkg.headers['content-encoding']);
          assert.equal(keel.headers['content-encoding'], coding);
          assert.equal(decode(keel), decode(pkg));
          assert.equal(vary(keel), vary(pkg));
        });
      }
      it('should leave a body under the threshold alone, as the package does', async () => {
        const { pkg, keel } = await compare(express, { threshold: '1kb' }, '/small', { 'accept-encoding': 'gzip' });
        assert.equal(keel.headers['content-encoding'], undefined);
        assert.equal(pkg.headers['content-encoding'], undefined);
        assert.equal(decode(keel), decode(pkg));
        assert.equal(vary(keel), vary(pkg));
      });
      it('should not compress an image, as the package does not', async () => {
        const { pkg, keel } = await compare(express, { threshold: 1024 }, '/png', { 'accept-encoding': 'gzip' });
        assert.equal(keel.headers['content-encoding'], pkg.headers['content-encoding']);
        assert.equal(keel.headers['content-encoding'], undefined);
      });
      it('should not answer deflate (the package does: intended difference)', async () => {
        const { pkg, keel } = await compare(express, { threshold: 1024 }, '/medium', { 'accept-encoding': 'deflate' });
        assert.equal(pkg.headers['content-encoding'], 'deflate');
        assert.equal(keel.headers['content-encoding'], undefined);
        assert.equal(decode(keel), decode(pkg));
      });
    });

    describe('when threshold is lowered to 100 bytes', () => {
      it('should compress the small body too, as the package does', async () => {
        const { pkg, keel } = await compare(express, { threshold: 100 }, '/small', { 'accept-encoding': 'gzip' });
        assert.equal(keel.headers['content-encoding'], 'gzip');
        assert.equal(pkg.headers['content-encoding'], 'gzip');
        assert.equal(decode(keel), decode(pkg));
      });
    });

    describe('when level is 1 or 9', () => {
      it('should produce the same gzip size as the package at each level', async () => {
        for (const level of [1, 9]) {
          const { pkg, keel } = await compare(express, { level }, '/medium', { 'accept-encoding': 'gzip' });
          assert.equal(keel.raw.length, pkg.raw.length, `level ${level}`);
        }
      });
    });

    describe('when a filter is given', () => {
      it('should compress only what the filter allows, building on compression.filter as with the package', async () => {
        const pkgFilter = (req: { headers: Record<string, string> }, res: unknown) => !req.headers['x-no-compression'] && packageCompression.filter(req as never, res as never);
        const keelFilter = (req: { headers: Record<string, string> }, res: unknown) => !req.headers['x-no-compression'] && compression.filter(req as never, res as never);
        for (const headers of [{ 'accept-encoding': 'gzip' }, { 'accept-encoding': 'gzip', 'x-no-compression': '1' }]) {
          const pkg = await send(appWith(express, packageCompression({ filter: pkgFilter as never })), '/medium', headers);
          const keel = await send(appWith(express, compression({ filter: keelFilter })), '/medium', headers);
          assert.equal(keel.headers['content-encoding'], pkg.headers['content-encoding'], JSON.stringify(headers));
          assert.equal(decode(keel), decode(pkg));
        }
      });
      it('should let a filter compress a type the default leaves alone, as the package does', async () => {
        const always = () => true;
        const { pkg, keel } = await compare(express, { filter: always }, '/png', { 'accept-encoding': 'gzip' });
        assert.equal(keel.headers['content-encoding'], pkg.headers['content-encoding']);
        assert.equal(keel.headers['content-encoding'], 'gzip');
      });
    });
  });
}

describe('compression with the compression package options: refused configuration', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["keel's and the package's keys in one call", { threshold: 100, min_size: 100 }, /not both.*threshold is the compression package's, min_size is keel's/],
    ['a brotli options object next to keel keys', { brotli: { params: {} }, quality: 4 }, /not both/],
    ['memLevel', { level: 6, memLevel: 9 }, /memLevel is not supported.*use level/],
    ['an enforceEncoding that is not a name', { threshold: 0, enforceEncoding: 5 }, /enforceEncoding: expected a coding name/],
    ['a level of 10', { level: 10 }, /level.*-1.*9/],
    ['a threshold that is not a size', { threshold: 'lots' }, /threshold/],
    ['a filter that is not a function', { filter: 'json' }, /filter/],
    ['brotli parameters other than quality', { brotli: { params: { [zlib.constants.BROTLI_PARAM_LGWIN]: 10 } } }, /brotli.*BROTLI_PARAM_QUALITY/],
    ['an unknown key next to package keys', { threshold: 10, treshold: 5 }, /treshold/],
  ];
  for (const [what, options, message] of cases) {
    it(`should throw a ConfigError for ${what}`, () => {
      assert.throws(() => compression(options as CompressionPackageOptions), (err: unknown) => err instanceof ConfigError && message.test(err.message));
    });
  }
});
