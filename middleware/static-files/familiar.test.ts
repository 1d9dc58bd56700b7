/**
 * staticFiles(root, options) against `express.static` itself (serve-static 1.16 in Express 4, 2.2 in
 * Express 5) on the same requests to the same directory, under each Express version. Intended
 * differences, each asserted below (docs/migrating-from-express.md, "serve-static / express.static"):
 * - a symlink whose real path is outside the root is not found (express.static serves the target);
 * - a symlink to a dotfile follows the dotfiles policy (express.static looks at the URL only);
 * - the 405 of `fallthrough: false` is an application/problem+json (express.static: an empty body).
 * Against Express 4's serve-static 1.16 also: JavaScript is `text/javascript` (RFC 9239), where send 0.19
 * says `application/javascript`; `charset=utf-8` is spelt in lower case (send 0.19: `UTF-8`).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { EXPRESS_VERSIONS, type ExpressFactory } from '../../test/helpers/express-versions.js';
import { staticFiles, type ServeStaticOptions } from './index.js';

const base = mkdtempSync(join(tmpdir(), 'keel-static-familiar-'));
const pub = join(base, 'public');
for (const d of ['sub', 'empty', 'snow \u2603']) mkdirSync(join(pub, d), { recursive: true });
mkdirSync(join(base, 'outside'));
const files: Record<string, string> = {
  'hello.txt': 'hello', 'index.html': '<h1>home</h1>', 'about.html': '<p>about</p>', 'sub/index.html': '<p>sub</p>',
  'sub/a b.txt': 'spaced', 'nums.txt': '123456789', '.env': 'SECRET=1', 'snow \u2603/x.txt': 'snow', 'app.js': 'let a = 1',
};
for (const [name, body] of Object.entries(files)) writeFileSync(join(pub, name), body);
writeFileSync(join(base, 'outside', 'secret.txt'), 'outside secret');
symlinkSync(join(base, 'outside', 'secret.txt'), join(pub, 'link-out.txt'));
symlinkSync('.env', join(pub, 'visible-env.txt'));
symlinkSync('hello.txt', join(pub, 'link-in.txt'));
after(() => rmSync(base, { recursive: true, force: true }));

/** The headers a static answer is made of. */
const HEADERS = ['content-type', 'content-length', 'cache-control', 'etag', 'last-modified', 'accept-ranges', 'content-range',
  'location', 'content-security-policy', 'x-content-type-options', 'allow', 'x-custom'];

type Mw = (req: any, res: any, next: any) => void;
interface Answer { status: number; body: string; headers: Record<string, unknown> }

function appWith(express: ExpressFactory, mw: Mw, mount: string) {
  const app = express();
  app.use(mount, mw);
  app.use((_req, res) => void res.status(404).type('text/plain').send('fell through'));
  app.use((err: { status?: number }, _req: unknown, res: any, _next: unknown) => void res.status(err.status ?? 500).type('text/plain').send(`error ${err.status}`));
  return app;
}

async function send(app: unknown, method: 'get' | 'head' | 'post', path: string, headers: Record<string, string>): Promise<Answer> {
  const res = await request(app as never)[method](path).set(headers).buffer(true).parse((r, cb) => {
    let body = '';
    r.setEncoding('utf8');
    r.on('data', (c: string) => (body += c));
    r.on('end', () => cb(null, body));
  });
  const picked: Record<string, unknown> = {};
  for (const h of HEADERS) if (res.headers[h] !== undefined) picked[h] = res.headers[h];
  // Express 4's express.static (send 0.19) writes `charset=UTF-8`, Express 5's `charset=utf-8`, as keel:
  // charset names compare case-insensitively (RFC 9110 §8.3.2).
  if (typeof picked['content-type'] === 'string') picked['content-type'] = picked['content-type'].replace(/charset=UTF-8$/, 'charset=utf-8');
  return { status: res.status, body: String(res.body ?? ''), headers: picked };
}

/** The same request to express.static(pub, options) and to staticFiles(pub, options), mounted alike. */
async function compare(express: ExpressFactory, options: ServeStaticOptions | undefined, path: string, extra: { method?: 'get' | 'head' | 'post'; headers?: Record<string, string>; mount?: string } = {}) {
  const { method = 'get', headers = {}, mount = '/' } = extra;
  const pkg = await send(appWith(express, express.static(pub, options as never) as Mw, mount), method, path, headers);
  const keel = await send(appWith(express, staticFiles(pub, options) as Mw, mount), method, path, headers);
  return { pkg, keel };
}

const SAME: [string, ServeStaticOptions | undefined, string, Parameters<typeof compare>[3]?][] = [
  ['a file', undefined, '/hello.txt'],
  ['HEAD of a file', undefined, '/hello.txt', { method: 'head' }],
  ['a percent-encoded name', undefined, '/sub/a%20b.txt'],
  ['a non-ASCII directory', undefined, '/snow%20%E2%98%83/x.txt'],
  ['a range', undefined, '/nums.txt', { headers: { range: 'bytes=2-5' } }],
  ['an unsatisfiable range', undefined, '/nums.txt', { headers: { range: 'bytes=99-' } }],
  ['a failed If-Match', undefined, '/hello.txt', { headers: { 'if-match': '"nope"' } }],
  ['the root directory', undefined, '/'],
  ['a directory without its slash, with a query', undefined, '/sub?x=1'],
  ['a directory without its slash under a mount', undefined, '/static/sub', { mount: '/static' }],
  ['the mount point without its slash', undefined, '/static', { mount: '/static' }],
  ['a directory without index.html', undefined, '/empty/'],
  ['a missing file', undefined, '/nope.txt'],
  ['a dotfile', undefined, '/.env'],
  ['../ inside the root', undefined, '/sub/../hello.txt'],
  ['../ past the root', undefined, '/../hello.txt'],
  ['a symlink inside the root', undefined, '/link-in.txt'],
  ['POST', undefined, '/hello.txt', { method: 'post' }],
  ['maxAge and immutable', { maxAge: '2h', immutable: true }, '/hello.txt'],
  ['cacheControl: false', { cacheControl: false, maxAge: 1000 }, '/hello.txt'],
  ['etag, lastModified and acceptRanges off', { etag: false, lastModified: false, acceptRanges: false }, '/nums.txt', { headers: { range: 'bytes=0-1' } }],
  ['extensions', { extensions: ['htm', 'html'] }, '/about'],
  ['index: false on a directory', { index: false }, '/sub/'],
  ['index: false without the slash', { index: false }, '/sub'],
  ['a custom index', { index: ['hello.txt'] }, '/'],
  ['redirect: false', { redirect: false }, '/sub'],
  ['dotfiles: allow', { dotfiles: 'allow' }, '/.env'],
  ['dotfiles: deny', { dotfiles: 'deny' }, '/.env'],
  ['fallthrough: false, a missing file', { fallthrough: false }, '/nope.txt'],
  ['fallthrough: false, ../ past the root', { fallthrough: false }, '/../hello.txt'],
  ['fallthrough: false, bad percent-encoding', { fallthrough: false }, '/%'],
  ['setHeaders', { setHeaders: (res) => res.setHeader('X-Custom', 'yes') }, '/hello.txt'],
];

for (const { name, major, express } of EXPRESS_VERSIONS) {
  describe(`staticFiles(root, options) against express.static under ${name}`, () => {
    it('should type JavaScript text/javascript (RFC 9239), as Express 5 does and Express 4 does not', async () => {
      const { pkg, keel } = await compare(express, undefined, '/app.js');
      assert.equal(keel.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(pkg.headers['content-type'], major === 4 ? 'application/javascript; charset=utf-8' : 'text/javascript; charset=utf-8');
      assert.deepEqual({ ...keel, headers: { ...keel.headers, 'content-type': '' } }, { ...pkg, headers: { ...pkg.headers, 'content-type': '' } });
    });

    for (const [what, options, path, extra] of SAME) {
      it(`should answer ${what} as express.static does`, async () => {
        const { pkg, keel } = await compare(express, options, path, extra);
        assert.deepEqual(keel, pkg);
      });
    }

    it('should not serve a symlink to a file outside the root, which express.static serves', async () => {
      const { pkg, keel } = await compare(express, undefined, '/link-out.txt');
      assert.equal(pkg.body, 'outside secret');
      assert.deepEqual([keel.status, keel.body], [404, 'fell through']);
    });

    it('should apply the dotfiles policy to a symlink to a dotfile, which express.static serves', async () => {
      const { pkg, keel } = await compare(express, undefined, '/visible-env.txt');
      assert.equal(pkg.body, 'SECRET=1');
      assert.deepEqual([keel.status, keel.body], [404, 'fell through']);
    });

    it('should answer POST with fallthrough: false with a 405 problem where express.static sends an empty 405', async () => {
      const { pkg, keel } = await compare(express, { fallthrough: false }, '/hello.txt', { method: 'post' });
      assert.deepEqual([pkg.status, pkg.headers.allow, pkg.body], [405, 'GET, HEAD', '']);
      assert.deepEqual([keel.status, keel.headers.allow, keel.headers['content-type']], [405, 'GET, HEAD', 'application/problem+json']);
      assert.equal(JSON.parse(keel.body).status, 405);
    });
  });
}
