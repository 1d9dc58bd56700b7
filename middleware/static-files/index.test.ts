import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type express from 'express';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import request from 'supertest';
import { staticFiles, type StaticFilesConfigInput } from './index.js';
import { ConfigError } from '../../lib/http/errors.js';
import { describeOnReject, describeOnRejectConfig } from '../../test/helpers/on-reject.js';

const base = mkdtempSync(join(tmpdir(), 'keel-static-'));
const pub = join(base, 'public');
const HELLO = 'Hello from static storage';

function tree(): void {
  mkdirSync(join(pub, 'sub'), { recursive: true });
  mkdirSync(join(pub, 'empty'));
  mkdirSync(join(pub, '.git'));
  mkdirSync(join(pub, 'evil-index'));
  mkdirSync(join(pub, 'snow \u2603'));
  mkdirSync(join(base, 'outside'));
  mkdirSync(join(base, 'public-secret'));
  writeFileSync(join(pub, 'hello.txt'), HELLO);
  writeFileSync(join(pub, 'index.html'), '<!doctype html><h1>Welcome</h1>');
  writeFileSync(join(pub, 'sub', 'index.html'), '<p>sub</p>');
  writeFileSync(join(pub, 'sub', 'a b.txt'), 'spaced');
  writeFileSync(join(pub, '.env'), 'SECRET=1');
  writeFileSync(join(pub, '.git', 'config'), '[core]');
  writeFileSync(join(base, 'outside', 'secret.txt'), 'outside secret');
  writeFileSync(join(base, 'secret.txt'), 'parent secret');
  writeFileSync(join(base, 'public-secret', 's.txt'), 'sibling secret');
  symlinkSync(join(base, 'outside', 'secret.txt'), join(pub, 'link-out.txt'));
  symlinkSync(join(base, 'outside'), join(pub, 'dir-out'));
  symlinkSync('../public-secret/s.txt', join(pub, 'sibling.txt'));
  symlinkSync('hello.txt', join(pub, 'link-in.txt'));
  symlinkSync('.env', join(pub, 'visible-env.txt'));
  symlinkSync(join(base, 'outside', 'secret.txt'), join(pub, 'evil-index', 'index.html'));
}
tree();
after(() => rmSync(base, { recursive: true, force: true }));

// Every test in this block runs under Express 4 and under Express 5 (test/helpers/express-versions.ts).
for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
function appWith(options: StaticFilesConfigInput | StaticFilesConfigInput[]) {
  const app = express();
  app.use(staticFiles(options));
  app.use((_req, res) => {
    res.status(404).type('text/plain').send('fell through');
  });
  return app;
}

/** A raw request, so that no client normalises `..` or percent-encoding in the path. */
function raw(server: Server, path: string): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
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

describe('staticFiles: when serving with the defaults', () => {
  const app = appWith({ directory: pub, route_prefix: '/public' });

  it('should serve a file with its content type, validators and no Cache-Control', async () => {
    const res = await request(app).get('/public/hello.txt');
    assert.equal(res.status, 200);
    assert.equal(res.text, HELLO);
    assert.match(res.headers['content-type'] ?? '', /^text\/plain/);
    assert.ok(res.headers.etag);
    assert.ok(res.headers['last-modified']);
    assert.equal(res.headers['cache-control'], undefined);
  });

  it('should answer HEAD with the headers and no body', async () => {
    const res = await request(app).head('/public/hello.txt');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-length'], String(HELLO.length));
    assert.equal(res.text, undefined);
  });

  it('should answer a matching If-None-Match with 304', async () => {
    const first = await request(app).get('/public/hello.txt');
    const res = await request(app).get('/public/hello.txt').set('If-None-Match', first.headers.etag!);
    assert.equal(res.status, 304);
  });

  it('should serve a byte range with 206', async () => {
    const res = await request(app).get('/public/hello.txt').set('Range', 'bytes=0-4');
    assert.equal(res.status, 206);
    assert.equal(res.text, 'Hello');
    assert.equal(res.headers['content-range'], `bytes 0-4/${HELLO.length}`);
  });

  it('should answer an unsatisfiable range with a 416 problem carrying Content-Range', async () => {
    const res = await request(app).get('/public/hello.txt').set('Range', 'bytes=999-');
    assert.equal(res.status, 416);
    assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
    assert.equal(res.body.status, 416);
    assert.equal(res.headers['content-range'], `bytes */${HELLO.length}`);
    assert.equal(res.headers.etag, undefined);
  });

  it('should serve index.html for the directory root', async () => {
    const res = await request(app).get('/public/');
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type'] ?? '', /^text\/html/);
    assert.equal(res.text, '<!doctype html><h1>Welcome</h1>');
  });

  it('should redirect a directory without its trailing slash, keeping the query', async () => {
    const res = await request(app).get('/public/sub?x=1');
    assert.equal(res.status, 301);
    assert.equal(res.headers.location, '/public/sub/?x=1');
  });

  it('should serve percent-encoded names', async () => {
    const res = await request(app).get('/public/sub/a%20b.txt');
    assert.equal(res.text, 'spaced');
  });

  it('should serve a symlink that stays inside the directory', async () => {
    const res = await request(app).get('/public/link-in.txt');
    assert.equal(res.text, HELLO);
  });

  for (const [name, path] of [
    ['a missing file', '/public/nope.txt'],
    ['a directory without index.html', '/public/empty/'],
    ['a path outside the prefix', '/other/hello.txt'],
    ['a prefix that only shares its start', '/publicity/hello.txt'],
    ['a file named with a trailing slash', '/public/hello.txt/'],
    ['a dotfile', '/public/.env'],
    ['a file inside a dot directory', '/public/.git/config'],
    ['a symlink to a dotfile', '/public/visible-env.txt'],
    ['an absolute path after the prefix', `/public/${base}/secret.txt`],
  ]) {
    it(`should fall through to next() for ${name}`, async () => {
      const res = await request(app).get(path!);
      assert.equal(res.status, 404);
      assert.equal(res.text, 'fell through');
    });
  }

  it('should fall through for methods other than GET and HEAD', async () => {
    const res = await request(app).post('/public/hello.txt');
    assert.equal(res.text, 'fell through');
  });
});

describe('staticFiles: when a request tries to leave the directory', () => {
  let server: Server;
  before(async () => {
    server = appWith({ directory: pub, route_prefix: '/public' }).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
  });
  after(() => server.close());

  for (const [name, path, status] of [
    ['a literal ..', '/public/../secret.txt', 403],
    ['%2e%2e', '/public/%2e%2e/secret.txt', 403],
    ['%2E%2E upper-case', '/public/%2E%2E/secret.txt', 403],
    ['..%2f', '/public/..%2fsecret.txt', 403],
    ['%2e%2e%2f', '/public/%2e%2e%2fsecret.txt', 403],
    ['a deep ../..', '/public/sub/../../secret.txt', 403],
    ['a backslash', '/public/..%5csecret.txt', 403],
    ['a symlink to a file outside', '/public/link-out.txt', 403],
    ['a symlink to a sibling directory sharing the name prefix', '/public/sibling.txt', 403],
    ['a file under a symlinked directory outside', '/public/dir-out/secret.txt', 403],
    ['an index.html symlinked outside', '/public/evil-index/', 403],
    ['a NUL byte', '/public/hello.txt%00', 400],
    ['a NUL byte before the extension', '/public/%00hello.txt', 400],
    ['broken percent-encoding', '/public/%E0%A4%A', 400],
  ] as const) {
    it(`should refuse ${name} with a ${status} problem`, async () => {
      const res = await raw(server, path);
      assert.equal(res.status, status);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      assert.equal(JSON.parse(res.body).status, status);
      assert.doesNotMatch(res.body, /secret/);
    });
  }
});

describe('staticFiles: options', () => {
  it('should send cache_control when set', async () => {
    const res = await request(appWith({ directory: pub, route_prefix: '/public', cache_control: 'public, max-age=60' })).get('/public/hello.txt');
    assert.equal(res.headers['cache-control'], 'public, max-age=60');
  });

  it('should not serve index.html when index_file is false', async () => {
    const app = appWith({ directory: pub, routePrefix: '/public', indexFile: false });
    assert.equal((await request(app).get('/public/')).text, 'fell through');
    assert.equal((await request(app).get('/public/sub')).text, 'fell through');
    assert.equal((await request(app).get('/public/index.html')).status, 200);
  });

  it('should mount at / when route_prefix is /', async () => {
    const app = appWith({ directory: pub, route_prefix: '/' });
    assert.equal((await request(app).get('/hello.txt')).text, HELLO);
    assert.equal((await request(app).get('/')).status, 200);
  });

  it('should ignore a trailing slash on route_prefix', async () => {
    assert.equal((await request(appWith({ directory: pub, route_prefix: '/public/' })).get('/public/hello.txt')).text, HELLO);
  });

  it('should try several mounts in order and fall through past all of them', async () => {
    const app = appWith([
      { directory: join(pub, 'sub'), route_prefix: '/a' },
      { directory: pub, route_prefix: '/a' },
    ]);
    assert.equal((await request(app).get('/a/index.html')).text, '<p>sub</p>');
    assert.equal((await request(app).get('/a/hello.txt')).text, HELLO);
    assert.equal((await request(app).get('/a/none.txt')).text, 'fell through');
  });

  it('should serve relative to the mount point under express app.use(path, …)', async () => {
    const app = express();
    app.use('/mnt', staticFiles({ directory: pub, route_prefix: '/' }));
    assert.equal((await request(app).get('/mnt/hello.txt')).text, HELLO);
    const res = await request(app).get('/mnt/sub');
    assert.equal(res.headers.location, '/mnt/sub/');
  });
});

describe('staticFiles: when the configuration is invalid', () => {
  const file = join(pub, 'hello.txt');
  const bad: [string, unknown, RegExp][] = [
    ['a missing directory key', { route_prefix: '/p' }, /directory/],
    ['a directory that does not exist', { directory: join(base, 'nope'), route_prefix: '/p' }, /directory.*existing directory/],
    ['a directory that is a file', { directory: file, route_prefix: '/p' }, /directory.*not a file/],
    ['an empty directory string', { directory: '', route_prefix: '/p' }, /directory/],
    ['a missing route_prefix', { directory: pub }, /route_prefix/],
    ['a route_prefix without a leading slash', { directory: pub, route_prefix: 'public' }, /route_prefix/],
    ['a string index_file', { directory: pub, route_prefix: '/p', index_file: 'yes' }, /index_file/],
    ['a numeric cache_control', { directory: pub, route_prefix: '/p', cache_control: 60 }, /cache_control/],
    ['a cache_control with a line break', { directory: pub, route_prefix: '/p', cache_control: 'public\r\nX-Evil: 1' }, /cache_control/],
    ['an unknown key', { directory: pub, route_prefix: '/p', indx: true }, /Unknown key "indx"/],
    ["serve-static's index in a record", { directory: pub, route_prefix: '/p', index: true }, /index is serve-static's option: .*staticFiles\(root/],
    ["serve-static's boolean cacheControl in a record", { directory: pub, route_prefix: '/p', cacheControl: false }, /cacheControl is serve-static's option/],
  ];
  for (const [name, options, message] of bad) {
    it(`should throw a ConfigError for ${name}`, () => {
      assert.throws(() => staticFiles(options as StaticFilesConfigInput), (e: unknown) => e instanceof ConfigError && message.test(e.message));
    });
  }

  it('should name the failing entry of a list', () => {
    assert.throws(
      () => staticFiles([{ directory: pub, route_prefix: '/a' }, { directory: join(base, 'nope'), route_prefix: '/b' }]),
      (e: unknown) => e instanceof ConfigError && /static_files\[1\]\.directory/.test(e.message),
    );
  });
});
});

describeOnReject('staticFiles, a path that leaves the directory', {
  make: (onReject) => staticFiles({ directory: pub, route_prefix: '/public', onReject }),
  send: (agent) => agent.get('/public/%2e%2e/secret.txt'),
  status: 403,
});
describeOnReject('staticFiles, bad percent-encoding', {
  make: (onReject) => staticFiles({ directory: pub, route_prefix: '/public', onReject }),
  send: (agent) => agent.get('/public/%E0%A4%A'),
  status: 400,
});
describeOnReject('staticFiles, a range that cannot be satisfied', {
  make: (onReject) => staticFiles({ directory: pub, route_prefix: '/public', onReject }),
  send: (agent) => agent.get('/public/hello.txt').set('Range', 'bytes=9999-'),
  status: 416,
  headers: ['Content-Range'],
});
describeOnRejectConfig('staticFiles', (o) => staticFiles({ directory: pub, route_prefix: '/', ...o }), /StaticFilesConfig/);

describe('staticFiles: when an earlier handler rewrote req.url to a non-ASCII directory', () => {
  it('should redirect to the percent-encoded slash form instead of failing on the header', async () => {
    const serve = staticFiles({ directory: pub, route_prefix: '/' });
    const server = createServer((req, res) => {
      req.url = req.url!.replace('/snow', '/snow \u2603');
      serve(req, res, () => res.writeHead(404).end('fell through'));
    });
    const res = await request(server).get('/snow?q=1').expect(301);
    assert.equal(res.headers.location, '/snow%20%E2%98%83/?q=1');
  });
});
