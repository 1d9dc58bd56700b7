import '../test/helpers/quiet-express-deprecations.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { createResponsePrototype } from './response.js';
import { createResponsePrototype4 } from './express4/response.js';
import { assertSameAsExpress, exchange, type Exchange } from '../test/helpers/express-prototypes.js';

const THIS_FILE = fileURLToPath(import.meta.url);
const THIS_DIR = fileURLToPath(new URL('.', import.meta.url));

type Handler = (req: any, res: any, next: any) => void;

/** Routes exercising the response API; each is answered by Express and by keel's prototypes and compared. */
const ROUTES: Record<string, Handler> = {
  'send-string': (_req, res) => res.send('<p>hello</p>'),
  'send-empty': (_req, res) => res.send(''),
  'send-null': (_req, res) => res.send(null),
  'send-undefined': (_req, res) => res.send(),
  'send-buffer': (_req, res) => res.send(Buffer.from('bytes')),
  'send-object': (_req, res) => res.send({ a: [1, 'two'] }),
  'send-true': (_req, res) => res.send(true),
  'send-typed': (_req, res) => res.type('text/plain; charset=iso-8859-1').send('latin'),
  'send-large': (_req, res) => res.send('x'.repeat(5000)),
  'send-preset-etag': (_req, res) => res.set('ETag', '"mine"').send('body'),
  'send-204': (_req, res) => res.status(204).set('Content-Type', 'text/plain').send('dropped'),
  'send-205': (_req, res) => res.status(205).send('dropped'),
  'json-null': (_req, res) => res.json(null),
  'json-undefined': (_req, res) => res.json(undefined),
  'json-string': (_req, res) => res.json('<script>&'),
  'json-typed': (_req, res) => res.type('application/vnd.api+json').json({ a: 1 }),
  'jsonp': (_req, res) => res.jsonp({ line: 'a\u2028b\u2029c' }),
  'jsonp-undefined': (_req, res) => res.jsonp(undefined),
  'send-status': (_req, res) => res.sendStatus(418),
  'send-status-unknown': (_req, res) => res.sendStatus(599),
  'status-invalid': (_req, res) => res.status(1000).send('x'),
  'status-string': (_req, res) => res.status('201' as any).send('x'),
  'type-js': (_req, res) => res.type('js').send('f()'),
  'type-unknown': (_req, res) => res.type('nope').send('x'),
  'set-json-type': (_req, res) => res.set('Content-Type', 'application/json').send('{}'),
  'set-object': (_req, res) => res.set({ 'X-A': 1, 'X-B': ['b', 2] }).end(),
  'set-array-type': (_req, res) => res.set('Content-Type', ['a', 'b']).end(),
  'append': (_req, res) => res.append('Link', '<a>').append('Link', ['<b>', '<c>']).append('X-One', 'only').end(),
  'links': (_req, res) => res.links({ next: '/p2', last: '/p9' }).links({ prev: '/p0' }).end(),
  'vary': (_req, res) => res.vary('Accept').vary(['Origin', 'accept']).end(),
  'cookie': (req, res) => {
    req.secret = 'keyboard cat';
    res.cookie('plain', 'v a l', { httpOnly: true, sameSite: 'lax' })
      .cookie('obj', { a: 1 })
      .cookie('signed', 'value', { signed: true, path: '/admin' })
      .cookie('aged', '1', { maxAge: 60000 })
      .end();
  },
  'cookie-unsigned-secret': (_req, res) => res.cookie('s', 'v', { signed: true }).end(),
  'clear-cookie': (_req, res) => res.clearCookie('sid', { path: '/x', domain: 'keel.test' }).end(),
  // options inheriting their fields (Express 4 copies inherited enumerable ones, Express 5 own ones only)
  'cookie-inherited-options': (_req, res) => res.cookie('c', 'v', Object.create({ path: '/inherited', httpOnly: true })).end(),
  'clear-cookie-inherited-options': (_req, res) => res.clearCookie('c', Object.create({ path: '/inherited' })).end(),
  'location': (_req, res) => res.location('/caf\u00e9?q=a b#frag').end(),
  'location-back': (_req, res) => res.location('back').end(),
  'redirect': (_req, res) => res.redirect('/to?x=<y>'),
  'redirect-301': (_req, res) => res.redirect(301, 'http://example.com/'),
  'format': (_req, res) => res.format({
    text: () => res.send('text'),
    'application/json': () => res.json({ fmt: 'json' }),
    html: () => res.send('<b>html</b>'),
  }),
  'format-406': (_req, res) => res.format({ json: () => res.json(1), 'image/png': () => res.send('png') }),
  'format-default': (_req, res) => res.format({ json: () => res.json(1), default: () => res.status(406).send('dflt') }),
  'attachment': (_req, res) => res.attachment('/files/r\u00e9sum\u00e9 2024.pdf').send('pdf'),
  'attachment-none': (_req, res) => res.attachment().send('x'),
  'send-file': (_req, res) => res.sendFile(THIS_FILE, { headers: { 'X-Sent': 'yes' } }),
  'send-file-root': (_req, res) => res.sendFile('response.test.ts', { root: THIS_DIR, maxAge: 60000 }),
  'send-file-missing': (_req, res) => res.sendFile('/definitely/not/here.txt'),
  'send-file-relative': (_req, res) => res.sendFile('relative.txt'),
  'send-file-dir': (_req, res, next) => res.sendFile(THIS_DIR, (err: any) => next(err ?? new Error('no error'))),
  'download': (_req, res) => res.download(THIS_FILE, 'report \u20ac.ts', { headers: { 'Content-Disposition': 'inline', 'X-D': '1' } }),
};

const ETAG_ROUTES = ['send-string', 'send-object', 'send-large', 'send-buffer', 'send-preset-etag'];

function build(app: any) {
  for (const [name, handler] of Object.entries(ROUTES)) app.all('/' + name, handler);
}

const plain = (path: string, headers?: Record<string, string>): Exchange => (headers ? { path, headers } : { path });

for (const major of [4, 5] as const) {
  describe(`response prototype (Express ${major}): when compared with Express ${major} itself`, () => {
    it('should answer every response method with the same status, headers and body', async () => {
      // Express 4 hands status 1000 to node, which throws mid-response: no well-formed answer to compare
      const names = Object.keys(ROUTES).filter((name) => !(major === 4 && name === 'status-invalid'));
      await assertSameAsExpress(major, build, names.map((name) => plain('/' + name)));
    });

    it('should answer HEAD requests the same (headers, no body)', async () => {
      const names = ['send-string', 'send-object', 'redirect', 'jsonp', 'send-file'];
      await assertSameAsExpress(major, build, names.map((name) => ({ method: 'head', path: '/' + name })));
    });

    it('should negotiate format, redirect and jsonp the same', async () => {
      await assertSameAsExpress(major, build, [
        plain('/format', { Accept: 'application/json' }),
        plain('/format', { Accept: 'text/html;q=0.9, text/plain;q=0.5' }),
        plain('/format-406', { Accept: 'text/html' }),
        plain('/format-default', { Accept: 'text/html' }),
        plain('/redirect', { Accept: 'text/html' }),
        plain('/redirect', { Accept: 'text/plain' }),
        plain('/redirect', { Accept: 'image/png' }),
        plain('/location-back', { Referer: 'http://a.test/from' }),
        plain('/jsonp?callback=cb.fn[0]<script>'),
        plain('/jsonp?callback=a&callback=b'),
        plain('/jsonp-undefined?callback=cb'),
      ]);
    });

    it('should answer 304 exactly when Express does, for generated and preset ETags', async () => {
      // learn each route's ETag from Express, then revalidate with it
      const [first] = await assertSameAsExpress(major, build, [plain('/send-object')]);
      const etag = first!.headers.etag as string;
      await assertSameAsExpress(major, build, [
        ...ETAG_ROUTES.map((name) => plain('/' + name, { 'If-None-Match': etag })),
        plain('/send-object', { 'If-None-Match': etag }),
        plain('/send-object', { 'If-None-Match': etag.slice(2) }),
        plain('/send-preset-etag', { 'If-None-Match': '"mine"' }),
        plain('/send-file', { 'If-Modified-Since': new Date(Date.now() + 60_000).toUTCString() }),
      ]);
    });

    it('should follow the json and etag settings the same', async () => {
      const withSettings = (app: any) => {
        app.set('json spaces', 2);
        app.set('json replacer', (k: string, v: unknown) => (k === 'secret' ? undefined : v));
        app.set('json escape', true);
        app.set('etag', 'strong');
        app.set('jsonp callback name', 'cb');
        build(app);
      };
      await assertSameAsExpress(major, withSettings, [
        plain('/json-string'),
        plain('/send-object'),
        plain('/jsonp?cb=done'),
        plain('/send-string'),
      ]);
      await assertSameAsExpress(major, (app) => {
        app.set('etag', false);
        build(app);
      }, [plain('/send-string'), plain('/send-large'), plain('/send-file')]);
      await assertSameAsExpress(major, (app) => {
        app.set('etag', (body: Buffer, encoding?: string) => `"custom-${body.length}-${encoding}"`);
        build(app);
      }, [plain('/send-string'), plain('/send-large'), plain('/send-buffer')]);
    });
  });
}

describe('response prototype: when Express 4 and 5 differ', () => {
  const legacy: Record<string, Handler> = {
    'send-status-body': (_req, res) => res.send(201, 'made'),
    'send-body-status': (_req, res) => res.send('made', 201),
    'send-number': (_req, res) => res.send(404),
    'json-status': (_req, res) => res.json(202, { ok: true }),
    'jsonp-status': (_req, res) => res.jsonp({ ok: true }, 203),
    'redirect-url-status': (_req, res) => res.redirect('/there', 301),
    'sendfile': (_req, res) => res.sendfile(THIS_FILE),
    'vary-empty': (_req, res) => res.vary().end(),
  };
  it("should keep Express 4's deprecated forms working as Express 4 does", async () => {
    const answers = await assertSameAsExpress(4, (app) => {
      for (const [name, handler] of Object.entries(legacy)) app.all('/' + name, handler);
    }, Object.keys(legacy).map((name) => plain('/' + name)));
    assert.deepEqual(answers.map((a) => a.status), [201, 201, 404, 202, 203, 301, 200, 200]);
  });

  it('should reject an out-of-range status in Express 5 and not in Express 4', async () => {
    const five = await assertSameAsExpress(5, build, [plain('/status-invalid')]);
    assert.equal(five[0]!.status, 500);
    assert.match(five[0]!.body, /RangeError: Invalid status code: 1000/);
  });
});

describe('createResponsePrototype and createResponsePrototype4: when called', () => {
  it('should return a fresh object each time, inheriting from http.ServerResponse.prototype', () => {
    const a = createResponsePrototype4();
    const b = createResponsePrototype4();
    assert.notEqual(a, b);
    assert.ok(http.ServerResponse.prototype.isPrototypeOf(a));
    assert.equal(typeof a.sendfile, 'function');
    assert.equal(typeof createResponsePrototype().sendfile, 'undefined');
  });
});

describe('res.send on keel/express: when the etag setting is one of the built-in generators', () => {
  const bodies: Record<string, Handler> = {
    small: (_req, res) => res.send('hello'),
    large: (_req, res) => res.send('é'.repeat(3000)),
    empty: (_req, res) => res.send(''),
    surrogate: (_req, res) => res.send('lone \ud800 surrogate'),
    buffer: (_req, res) => res.send(Buffer.from([0, 1, 2, 255])),
    json: (_req, res) => res.json({ a: 'ü', list: [1, 2, 3] }),
    typed: (_req, res) => res.send(new Uint8Array([9, 8, 7])),
  };
  for (const setting of [true, 'weak', 'strong'] as const) {
    it(`should give the same ETag, length and body as Express for etag=${String(setting)}`, async () => {
      const apps = [(await import('express')).default(), (await import('./index.js')).default()];
      for (const app of apps) {
        app.set('etag', setting);
        for (const [name, handler] of Object.entries(bodies)) app.get('/' + name, handler);
      }
      for (const name of Object.keys(bodies)) {
        const [expected, actual] = [await exchange(apps[0], { path: '/' + name }), await exchange(apps[1], { path: '/' + name })];
        assert.equal(actual.headers.etag, expected.headers.etag, name);
        assert.ok(actual.headers.etag, name);
        assert.equal(actual.headers['content-length'], expected.headers['content-length'], name);
        assert.equal(actual.body, expected.body, name);
        // and revalidating with it answers 304 on both
        const again = await exchange(apps[1], { path: '/' + name, headers: { 'If-None-Match': String(expected.headers.etag) } });
        assert.equal(again.status, 304, name);
      }
    });
  }
});
