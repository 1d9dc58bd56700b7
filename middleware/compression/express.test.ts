/**
 * compression under Express 4 and 5, where its response wrappers live on the app's response
 * prototype (response.ts): responses that do not pass through compression() stay untouched, mounted
 * sub-apps and earlier wrappers of res.end still work, and `res.flush()` exists.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import zlib from 'node:zlib';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import { compression } from './index.js';

const big = { rows: Array.from({ length: 200 }, (_, i) => ({ i, name: `row-${i}` })) };

async function get(app: { listen(port: number, host: string): Server }, path: string): Promise<{ encoding: string | undefined; body: string }> {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path, headers: { 'accept-encoding': 'gzip' }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const encoding = res.headers['content-encoding'];
          resolve({ encoding, body: (encoding === 'gzip' ? zlib.gunzipSync(raw) : raw).toString('utf8') });
        });
      }).on('error', reject);
    });
  } finally {
    server.close();
  }
}

for (const { name, express } of EXPRESS_VERSIONS) {
  describe(`compression inside an Express app under ${name}`, () => {
    it('should leave responses that do not pass through compression() untouched', async () => {
      const app = express();
      app.get('/before', (_req, res) => void res.json(big));
      app.use(compression({ min_size: 100 }));
      app.get('/after', (_req, res) => void res.json(big));
      const before = await get(app, '/before');
      const after = await get(app, '/after');
      assert.equal(before.encoding, undefined);
      assert.deepEqual(JSON.parse(before.body), big);
      assert.equal(after.encoding, 'gzip');
      assert.deepEqual(JSON.parse(after.body), big);
      // And again, now that the app's response prototype carries the wrappers.
      assert.equal((await get(app, '/before')).encoding, undefined);
    });

    it('should compress inside a mounted sub-app and not outside it', async () => {
      const app = express();
      const sub = express();
      sub.use(compression({ min_size: 100 }));
      sub.get('/x', (_req, res) => void res.json(big));
      app.use('/sub', sub);
      app.get('/y', (_req, res) => void res.json(big));
      const inside = await get(app, '/sub/x');
      assert.equal(inside.encoding, 'gzip');
      assert.deepEqual(JSON.parse(inside.body), big);
      assert.equal((await get(app, '/y')).encoding, undefined);
    });

    it('should compress when an earlier middleware wrapped res.end itself', async () => {
      const app = express();
      let wrapped = 0;
      app.use((_req, res, next) => {
        const end = res.end;
        res.end = function (this: typeof res, ...args: unknown[]) {
          wrapped++;
          return (end as (...a: unknown[]) => typeof res).apply(this, args);
        } as typeof res.end;
        next();
      });
      app.use(compression({ min_size: 100 }));
      app.get('/', (_req, res) => void res.json(big));
      const answer = await get(app, '/');
      assert.equal(answer.encoding, 'gzip');
      assert.deepEqual(JSON.parse(answer.body), big);
      assert.equal(wrapped, 1);
    });

    it('should give every response res.flush(), pushing streamed compressed data out', async () => {
      const app = express();
      app.use(compression({ min_size: 0 }));
      app.get('/stream', (_req, res) => {
        res.type('text/plain');
        res.write('first line\n');
        (res as unknown as { flush(): void }).flush();
        res.end('second line\n');
      });
      const answer = await get(app, '/stream');
      assert.equal(answer.encoding, 'gzip');
      assert.equal(answer.body, 'first line\nsecond line\n');
    });
  });
}
