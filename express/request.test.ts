import '../test/helpers/quiet-express-deprecations.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createRequestPrototype } from './request.js';
import { createRequestPrototype4 } from './express4/request.js';
import { assertSameAsExpress, expressWithKeelPrototypes, exchange, type Exchange } from '../test/helpers/express-prototypes.js';

// A handler that reports what the request API answers, so that Express's and keel's answers can be compared.
function report(req: any) {
  const out: Record<string, unknown> = {};
  const read = (name: string, fn: () => unknown) => {
    try {
      out[name] = fn();
    } catch (err) {
      out[name] = `throws ${(err as Error).name}: ${(err as Error).message}`;
    }
  };
  read('get referrer', () => req.get('Referrer'));
  read('header content-type', () => req.header('Content-Type'));
  read('get without name', () => req.get());
  read('accepts html,json', () => req.accepts('html', 'json'));
  read('accepts list', () => req.accepts(['text/plain', 'application/xml']));
  read('accepts none', () => req.accepts());
  read('acceptsEncodings', () => req.acceptsEncodings('gzip', 'br'));
  read('acceptsCharsets', () => req.acceptsCharsets('utf-8', 'iso-8859-1'));
  read('acceptsLanguages', () => req.acceptsLanguages('en', 'fr'));
  read('is json', () => req.is('json'));
  read('is list', () => req.is(['text/*', 'application/*']));
  read('is extensions', () => req.is('js', 'urlencoded', 'multipart', 'html'));
  read('is without types', () => req.is());
  read('accepts extensions', () => req.accepts('js', 'txt', 'json'));
  read('range', () => req.range(1000));
  read('range combined', () => req.range(1000, { combine: true }));
  for (const name of ['protocol', 'secure', 'ip', 'ips', 'subdomains', 'path', 'hostname', 'host', 'fresh', 'stale', 'xhr', 'query']) {
    read(name, () => req[name]);
  }
  return out;
}

const EXCHANGES: Exchange[] = [
  { path: '/r?a=1&b[c]=2&d=x&d=y' },
  { path: '/r', headers: { Referer: 'http://a.test/x', Accept: 'application/json;q=0.9, text/html;q=0.5', 'Accept-Encoding': 'br, gzip;q=0.5', 'Accept-Charset': 'iso-8859-1', 'Accept-Language': 'fr-CH, en;q=0.8' } },
  { path: '/r', method: 'post', headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: '{}' },
  { path: '/r', headers: { Range: 'bytes=0-10,5-20,900-' } },
  { path: '/r', headers: { Range: 'bytes=2000-' } },
  { path: '/r', headers: { Range: 'items=oops' } },
  { path: '/r', headers: { Host: 'tobi.ferrets.example.com:8080', 'X-Requested-With': 'XMLHttpRequest' } },
  { path: '/r', headers: { Host: '[::1]:3000' } },
  { path: '/r', headers: { Host: '127.0.0.1' } },
  { path: '/r', headers: { 'X-Forwarded-Proto': 'https, http', 'X-Forwarded-Host': 'fwd.example.com, other', 'X-Forwarded-For': '10.0.0.1, 10.0.0.2' } },
  { path: '/r', headers: { 'If-None-Match': '*' } },
  { path: '/r', method: 'post', headers: { 'Content-Type': 'application/javascript', Accept: 'application/javascript, text/javascript;q=0.5' }, body: 'x()' },
  { path: '/r', method: 'post', headers: { 'Content-Type': 'text/javascript' }, body: 'x()' },
];

for (const major of [4, 5] as const) {
  describe(`request prototype (Express ${major}): when compared with Express ${major} itself`, () => {
    it('should answer the request API the same without trusted proxies', async () => {
      await assertSameAsExpress(major, (app) => app.all('/r', (req: any, res: any) => res.json(report(req))), EXCHANGES);
    });

    it('should answer the request API the same with "trust proxy" and "subdomain offset" set', async () => {
      await assertSameAsExpress(major, (app) => {
        app.set('trust proxy', true);
        app.set('subdomain offset', 3);
        app.all('/r', (req: any, res: any) => res.json(report(req)));
      }, EXCHANGES);
    });

    it('should parse the query as each "query parser" setting says', async () => {
      for (const parser of ['simple', 'extended', false]) {
        await assertSameAsExpress(major, (app) => {
          app.set('query parser', parser);
          app.get('/q', (req: any, res: any) => res.json({ q: req.query, proto: Object.getPrototypeOf(req.query) === null }));
        }, [{ path: '/q?a[b]=1&c=2&c=3' }]);
      }
    });

    it('should answer freshness the same for ETag and Last-Modified validators', async () => {
      const lastModified = 'Wed, 21 Oct 2015 07:28:00 GMT';
      await assertSameAsExpress(major, (app) => {
        app.get('/v', (req: any, res: any) => {
          res.set('ETag', '"abc"');
          res.set('Last-Modified', lastModified);
          res.json({ fresh: req.fresh, stale: req.stale });
        });
      }, [
        { path: '/v', headers: { 'If-None-Match': '"abc"' } },
        { path: '/v', headers: { 'If-None-Match': 'W/"abc", "x"' } },
        { path: '/v', headers: { 'If-None-Match': '"nope"' } },
        { path: '/v', headers: { 'If-None-Match': '"abc"', 'Cache-Control': 'no-cache' } },
        { path: '/v', headers: { 'If-Modified-Since': lastModified } },
        { path: '/v', headers: { 'If-Modified-Since': 'Wed, 21 Oct 2015 07:00:00 GMT' } },
        // where Express 4 (fresh 0.5) and Express 5 (fresh 2) disagree: both validators, only the ETag matching
        { path: '/v', headers: { 'If-None-Match': '"abc"', 'If-Modified-Since': 'Wed, 21 Oct 2015 07:00:00 GMT' } },
        { path: '/v', headers: { 'If-None-Match': '*', 'If-Modified-Since': 'Wed, 21 Oct 2015 07:00:00 GMT' } },
      ]);
    });
  });
}

describe('request prototype: when Express 4 and 5 differ', () => {
  it('should give Express 4 req.param() looking in params, then body, then query', async () => {
    const [a] = await assertSameAsExpress(4, (app) => {
      app.get('/u/:id', (req: any, res: any) => {
        req.body = { id: 'body', name: 'from-body' };
        res.json([req.param('id'), req.param('name'), req.param('q'), req.param('none', 'dflt')]);
      });
    }, [{ path: '/u/7?q=query&name=from-query' }]);
    assert.deepEqual(JSON.parse(a!.body), ['7', 'from-body', 'query', 'dflt']);
  });

  it('should give Express 5 no req.param() and Express 4 one', () => {
    assert.equal(typeof createRequestPrototype().param, 'undefined');
    assert.equal(typeof createRequestPrototype4().param, 'function');
  });

  it('should make req.host the full host with port in Express 5 and the hostname in Express 4', async () => {
    const hosts: unknown[] = [];
    for (const major of [4, 5] as const) {
      const app = expressWithKeelPrototypes(major)();
      app.get('/', (req: any, res: any) => res.json(req.host));
      hosts.push(JSON.parse((await exchange(app, { path: '/', headers: { Host: 'example.com:3000' } })).body));
    }
    assert.deepEqual(hosts, ['example.com', 'example.com:3000']);
  });
});

describe('createRequestPrototype: when called', () => {
  it('should return a fresh object each time, inheriting from http.IncomingMessage.prototype', () => {
    const a = createRequestPrototype();
    const b = createRequestPrototype();
    assert.notEqual(a, b);
    assert.ok(http.IncomingMessage.prototype.isPrototypeOf(a));
    a.extra = 1;
    assert.equal(b.extra, undefined);
  });
});

describe('req.query (Express 5): when read several times in one request', () => {
  /** What a handler sees of req.query when a middleware wrote to it first, on an express function. */
  async function writes(expressFn: any, parser: unknown): Promise<unknown> {
    const app = expressFn();
    app.set('query parser', parser);
    app.use((req: any, _res: any, next: any) => {
      req.query.x = 'overwritten';
      req.query.added = '1';
      next();
    });
    const router = expressFn.Router();
    router.get('/q', (req: any, res: any) => {
      const a = req.query;
      const b = req.query;
      a.mutated = true;
      res.json({ query: req.query, same: a === b, nested: b.a === undefined ? null : b.a.b });
    });
    app.use('/api', router);
    return JSON.parse((await exchange(app, { path: '/api/q?x=1&x=2&a[b]=c&y=3' })).body);
  }

  for (const parser of ['simple', 'extended'] as const) {
    it(`should give a new object on each read, so a middleware's writes do not persist, as Express 5 (${parser})`, async () => {
      const express5 = (await import('express')).default;
      const keel5 = (await import('./index.js')).default;
      const ours = await writes(keel5, parser);
      assert.deepEqual(ours, await writes(express5, parser));
      assert.equal((ours as any).same, false);
      assert.equal((ours as any).query.added, undefined);
    });
  }

  it("should run an app's own query parser on every read, as Express 5", async () => {
    let calls = 0;
    const app = expressWithKeelPrototypes(5)();
    app.set('query parser', (s: string) => {
      calls++;
      return { raw: s };
    });
    app.get('/q', (req: any, res: any) => res.json([req.query.raw, req.query.raw, req.query.raw]));
    const answer = await exchange(app, { path: '/q?x=1' });
    assert.deepEqual(JSON.parse(answer.body), ['x=1', 'x=1', 'x=1']);
    assert.equal(calls, 3);
  });

  it('should copy an own __proto__ key as a key, not as the prototype', async () => {
    const keel5 = (await import('./index.js')).default;
    const app = keel5();
    app.get('/q', (req: any, res: any) => res.json({ proto: Object.getPrototypeOf(req.query) === null, keys: Object.keys(req.query) }));
    const answer = await exchange(app, { path: '/q?__proto__=1&a=2' });
    assert.deepEqual(JSON.parse(answer.body), { proto: true, keys: ['__proto__', 'a'] });
  });
});

describe('req.query (Express 4): when a middleware writes to it', () => {
  it('should keep the writes, as Express 4 parses once per request', async () => {
    const express4 = (await import('./express4.js')).default;
    const app = express4();
    app.use((req: any, _res: any, next: any) => {
      req.query.added = '1';
      next();
    });
    app.get('/q', (req: any, res: any) => res.json({ query: req.query, same: req.query === req.query }));
    const answer = await exchange(app, { path: '/q?x=1' });
    assert.deepEqual(JSON.parse(answer.body), { query: { x: '1', added: '1' }, same: true });
  });
});
