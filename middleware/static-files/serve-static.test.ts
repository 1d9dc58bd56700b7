/**
 * staticFiles(root, options): serve-static's form, under Express 4 and 5 and a bare node:http server.
 * The side-by-side comparison with express.static itself is familiar.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { EXPRESS_VERSIONS, type ExpressFactory } from '../../test/helpers/express-versions.js';
import type { KeelRequest } from '../../lib/http/request.js';
import { serveStatic, staticFiles, type ServeStaticOptions } from './index.js';

const base = mkdtempSync(join(tmpdir(), 'keel-serve-static-'));
const pub = join(base, 'public');
const HELLO = 'Hello from static storage';
for (const d of ['sub', 'empty', '.git', 'evil-index', 'snow \u2603']) mkdirSync(join(pub, d), { recursive: true });
for (const d of ['outside', 'public-secret']) mkdirSync(join(base, d));
const files: Record<string, string> = {
  'hello.txt': HELLO, 'index.html': '<h1>Welcome</h1>', 'about.html': '<p>about</p>', 'sub/index.html': '<p>sub</p>',
  'sub/a b.txt': 'spaced', '.env': 'SECRET=1', '.git/config': '[core]', 'snow \u2603/x.txt': 'snow',
};
for (const [name, body] of Object.entries(files)) writeFileSync(join(pub, name), body);
writeFileSync(join(base, 'outside', 'secret.txt'), 'outside secret');
writeFileSync(join(base, 'secret.txt'), 'parent secret');
writeFileSync(join(base, 'public-secret', 's.txt'), 'sibling secret');
symlinkSync(join(base, 'outside', 'secret.txt'), join(pub, 'link-out.txt'));
symlinkSync(join(base, 'outside'), join(pub, 'dir-out'));
symlinkSync('../public-secret/s.txt', join(pub, 'sibling.txt'));
symlinkSync('hello.txt', join(pub, 'link-in.txt'));
symlinkSync('.env', join(pub, 'visible-env.txt'));
symlinkSync(join(base, 'outside', 'secret.txt'), join(pub, 'evil-index', 'index.html'));
after(() => rmSync(base, { recursive: true, force: true }));

/** A raw GET, so that no client normalises `..` or percent-encoding in the path. */
function raw(server: Server, path: string): Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }> {
  const { port } = server.address() as { port: number };
  return new Promise((resolve, reject) => {
    const r = httpRequest({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    r.on('error', reject);
    r.end();
  });
}

for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
  /** `staticFiles(root, options)` at `mount`, then 'fell through' (404) and an error handler naming the error. */
  function appWith(root: string, options?: ServeStaticOptions | null, mount = '/', before?: (req: KeelRequest) => void) {
    const app = (express as ExpressFactory)();
    if (before) app.use((req, _res, next) => (before(req), next()));
    app.use(mount, staticFiles(root, options));
    app.use((_req, res) => void res.status(404).type('text/plain').send('fell through'));
    app.use((err: { status?: number; name?: string }, _req: unknown, res: ServerResponse, _next: unknown) => {
      res.statusCode = err.status ?? 500;
      res.setHeader('Content-Type', 'text/plain');
      res.end(`error ${err.status} ${err.name}`);
    });
    return app;
  }

  describe('staticFiles(root): when serving with serve-static\'s defaults', () => {
    const app = appWith(pub);

    it('should serve a file with Cache-Control: public, max-age=0, ETag, Last-Modified and Accept-Ranges', async () => {
      const res = await request(app).get('/hello.txt').expect(200, HELLO);
      assert.equal(res.headers['cache-control'], 'public, max-age=0');
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(res.headers['accept-ranges'], 'bytes');
      assert.ok(res.headers.etag && res.headers['last-modified']);
    });

    it('should serve a path with ../ that stays inside the root', async () => {
      await request(app).get('/sub/../hello.txt').expect(200, HELLO);
    });

    it('should redirect a directory without its slash with an inert HTML page', async () => {
      const res = await request(app).get('/sub?x=1').expect(301);
      assert.equal(res.headers.location, '/sub/?x=1');
      assert.equal(res.headers['content-type'], 'text/html; charset=UTF-8');
      assert.equal(res.headers['content-security-policy'], "default-src 'none'");
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.match(res.text, /Redirecting to \/sub\/\?x=1/);
    });

    it('should serve index.html for a directory and fall through for one without', async () => {
      await request(app).get('/sub/').expect(200, '<p>sub</p>');
      await request(app).get('/empty/').expect(404, 'fell through');
    });

    it('should hand a 416 for a found file to next(err)', async () => {
      await request(app).get('/hello.txt').set('Range', 'bytes=999-').expect(416, 'error 416 RangeNotSatisfiableError');
    });

    it('should fall through for POST', async () => {
      await request(app).post('/hello.txt').expect(404, 'fell through');
    });
  });

  describe('staticFiles(root): when mounted with app.use(path, …)', () => {
    const app = appWith(pub, null, '/static');

    it('should redirect relative to the original URL, the mount point included', async () => {
      assert.equal((await request(app).get('/static/sub').expect(301)).headers.location, '/static/sub/');
      assert.equal((await request(app).get('/static').expect(301)).headers.location, '/static/');
      await request(app).get('/static/').expect(200, '<h1>Welcome</h1>');
    });

    it('should serve a non-ASCII name after req.url was rewritten to it', async () => {
      const rewritten = appWith(pub, null, '/', (req) => void (req.url = req.url!.replace('/snow/', '/snow \u2603/')));
      await request(rewritten).get('/snow/x.txt').expect(200, 'snow');
    });
  });

  describe('staticFiles(root, options): when options are given', () => {
    it('should redirect /dir but not serve /dir/ with index: false', async () => {
      const app = appWith(pub, { index: false }, '/static');
      assert.equal((await request(app).get('/static/sub').expect(301)).headers.location, '/static/sub/');
      await request(app).get('/static/sub/').expect(404, 'fell through');
    });

    it('should fall through for a directory without its slash with redirect: false', async () => {
      await request(appWith(pub, { redirect: false })).get('/sub').expect(404, 'fell through');
    });

    it('should send maxAge and immutable in Cache-Control', async () => {
      const res = await request(appWith(pub, { maxAge: '1h', immutable: true })).get('/hello.txt');
      assert.equal(res.headers['cache-control'], 'public, max-age=3600, immutable');
    });

    it('should leave out Cache-Control, Last-Modified, ETag and ranges when switched off', async () => {
      const app = appWith(pub, { cacheControl: false, lastModified: false, etag: false, acceptRanges: false });
      const res = await request(app).get('/hello.txt').set('Range', 'bytes=0-1').expect(200, HELLO);
      for (const h of ['cache-control', 'last-modified', 'etag', 'accept-ranges', 'content-range']) assert.equal(res.headers[h], undefined, h);
    });

    it('should try extensions in order', async () => {
      await request(appWith(pub, { extensions: ['htm', 'html'] })).get('/about').expect(200, '<p>about</p>');
    });

    it('should call setHeaders with the requested path for a file, not for a redirect', async () => {
      const seen: string[] = [];
      const app = appWith(pub, { setHeaders: (res, path) => (seen.push(path), res.setHeader('X-Custom', 'set')) });
      assert.equal((await request(app).get('/link-in.txt').expect(200, HELLO)).headers['x-custom'], 'set');
      assert.equal((await request(app).get('/sub').expect(301)).headers['x-custom'], undefined);
      assert.deepEqual(seen, [join(pub, 'link-in.txt')]);
    });

    it('should serve dotfiles with dotfiles: allow and refuse them with deny', async () => {
      const res = await request(appWith(pub, { dotfiles: 'allow' })).get('/.env').expect(200);
      assert.equal(String(res.body), 'SECRET=1');
      await request(appWith(pub, { dotfiles: 'deny', fallthrough: false })).get('/.env').expect(403, 'error 403 ForbiddenError');
    });

    it('should hand misses to next(err) and answer other methods with a 405 problem when fallthrough is false', async () => {
      const app = appWith(pub, { fallthrough: false });
      await request(app).get('/nope.txt').expect(404, /^error 404 /);
      const res = await request(app).post('/hello.txt').expect(405);
      assert.equal(res.headers.allow, 'GET, HEAD');
      assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
      assert.equal(res.body.status, 405);
    });

    it('should fall through while the root does not exist, and serve it once it does', async () => {
      const later = join(base, `later-${expressVersion}`);
      const app = appWith(later);
      await request(app).get('/a.txt').expect(404, 'fell through');
      mkdirSync(later);
      writeFileSync(join(later, 'a.txt'), 'now');
      await request(app).get('/a.txt').expect(200, 'now');
    });

    it('should serve a root that is a file at its mount point', async () => {
      const app = appWith(join(pub, 'hello.txt'), null, '/hello');
      await request(app).get('/hello').expect(200, HELLO);
      await request(app).get('/hello/').expect(404, 'fell through');
    });
  });

  describe('staticFiles(root): when a request tries to leave the root or reach a hidden file', () => {
    let server: Server;
    let strict: Server;
    before(async () => {
      server = appWith(pub).listen(0, '127.0.0.1');
      strict = appWith(pub, { fallthrough: false }).listen(0, '127.0.0.1');
      await Promise.all([server, strict].map((s) => new Promise((r) => s.once('listening', r))));
    });
    after(() => (server.close(), strict.close()));

    for (const [name, path, status] of [
      ['a literal ..', '/../secret.txt', 403],
      ['%2e%2e', '/%2e%2e/secret.txt', 403],
      ['%2E%2E upper-case', '/%2E%2E/secret.txt', 403],
      ['..%2f', '/sub/..%2f..%2fsecret.txt', 403],
      ['a deep ../..', '/sub/../../secret.txt', 403],
      ['a NUL byte', '/hello.txt%00', 400],
      ['broken percent-encoding', '/%E0%A4%A', 400],
      ['a name too long for the file system', `/${'a'.repeat(5000)}`, 404],
      ['thousands of segments', `/${'a/'.repeat(3000)}x`, 404],
      ['a dotfile', '/.env', 404],
      ['a file in a dot directory', '/.git/config', 404],
      ['a symlink to a dotfile', '/visible-env.txt', 404],
      ['a symlink to a file outside', '/link-out.txt', 404],
      ['a symlink to a sibling directory sharing the name prefix', '/sibling.txt', 404],
      ['a file under a symlinked directory outside', '/dir-out/secret.txt', 404],
      ['an index.html symlinked outside', '/evil-index/', 404],
    ] as const) {
      it(`should fall through for ${name}, and hand a ${status} to next(err) with fallthrough: false`, async () => {
        const passed = await raw(server, path);
        assert.equal(passed.status, 404);
        assert.equal(passed.body, 'fell through');
        const refused = await raw(strict, path);
        assert.equal(refused.status, status);
        assert.match(refused.body, new RegExp(`^error ${status} `));
      });
    }

    it('should serve a symlink that stays inside the root', async () => {
      assert.equal((await raw(server, '/link-in.txt')).body, HELLO);
    });

    it('should open the path it checked when the symlink is swapped after the check', async () => {
      // setHeaders runs after the check and before the file is opened: re-point the link outside there.
      const link = join(pub, `swap-${expressVersion}.txt`);
      symlinkSync('hello.txt', link);
      const swap = () => (symlinkSync(join(base, 'outside', 'secret.txt'), `${link}.new`), renameSync(`${link}.new`, link));
      const res = await request(appWith(pub, { setHeaders: swap })).get(`/swap-${expressVersion}.txt`).expect(200);
      assert.equal(res.text, HELLO);
      assert.equal((await raw(server, `/swap-${expressVersion}.txt`)).body, 'fell through');
    });
  });
});

describe('serveStatic(root): when run by a bare node:http server', () => {
  it('should percent-encode a non-ASCII redirect target, in Location and in the page', async () => {
    const serve = serveStatic(pub);
    const server = createServer((req, res) => {
      req.url = req.url!.replace('/snow', '/snow \u2603');
      serve(req, res, () => res.writeHead(404).end('fell through'));
    });
    const res = await request(server).get('/snow').expect(301);
    assert.equal(res.headers.location, '/snow%20%E2%98%83/');
    assert.match(res.text, />Redirecting to \/snow%20%E2%98%83\/</);
  });
});

describe('staticFiles(root, options): when the configuration is invalid', () => {
  const bad: [string, () => unknown, RegExp][] = [
    ['no root', () => (staticFiles as (r?: string) => unknown)(), /root path required/],
    ['a numeric root', () => staticFiles(42 as unknown as string), /root path must be a string/],
    ['a setHeaders that is not a function', () => staticFiles(pub, { setHeaders: 3 as never }), /setHeaders.*function/],
    ['a string cacheControl', () => staticFiles(pub, { cacheControl: 'no-store' as never }), /cacheControl.*true or false.*setHeaders/],
    ['an unknown option', () => staticFiles(pub, { dotFiles: 'deny' } as never), /dotFiles.*serve-static's options.*misspelt/],
    ['a dotfiles value send does not know', () => staticFiles(pub, { dotfiles: 'Deny' as never }), /dotfiles.*"allow", "deny" or "ignore"/],
    ['a maxAge that is not a duration', () => staticFiles(pub, { maxAge: '1 dya' }), /maxAge.*"1 dya"/],
    ['a negative maxAge', () => staticFiles(pub, { maxAge: -1 }), /maxAge.*>= 0/],
    ['index: true', () => staticFiles(pub, { index: true as never }), /index.*a name, a list of names, or false/],
    ['a non-boolean fallthrough', () => staticFiles(pub, { fallthrough: 'no' as never }), /fallthrough.*true or false/],
  ];
  for (const [name, make, message] of bad) {
    it(`should throw a ConfigError for ${name}`, () => {
      assert.throws(make, (e: unknown) => e instanceof Error && e.name === 'ConfigError' && message.test(e.message));
    });
  }
});
