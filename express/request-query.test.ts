import '../test/helpers/quiet-express-deprecations.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import realExpress5 from 'express';
import realExpress4 from 'express4';
import express from './index.js';
import express4 from './express4.js';

// req.query and its family as Express 4 and Express 5 give them, which differ: Express 4's app sets `req.query`
// once per request, a plain property, in the query middleware its router starts with (`if (!req.query)`), with the
// parser the app had when that router was made; Express 5's is a getter parsing req.url on every read with the
// app's parser of the moment. Each scenario runs on real Express and on keel's engine for the same major, and the
// answers must be equal.
type Build = (app: any, express: any) => void;

const PAIRS = [
  { major: 4, real: realExpress4 as any, keel: express4 as any },
  { major: 5, real: realExpress5 as any, keel: express as any },
] as const;

/** Builds the app on `engine` with `build` and answers each path's JSON body. */
async function answers(engine: any, build: Build, paths: string[]): Promise<unknown[]> {
  const app = engine();
  build(app, engine);
  const out: unknown[] = [];
  for (const path of paths) {
    const res = await request(app).get(path);
    out.push({ status: res.status, body: res.body });
  }
  return out;
}

/** How `req` holds its query: an own property (and writable), or read through the prototype chain. */
function holding(req: any): string {
  const own = Object.getOwnPropertyDescriptor(req, 'query');
  if (own) return own.writable ? 'own writable' : 'own accessor';
  return 'query' in req ? 'inherited' : 'absent';
}

const SCENARIOS: Array<{ name: string; build: Build; paths: string[]; expect: Record<4 | 5, unknown> }> = [
  {
    name: 'a middleware inside a mounted router rewrites req.url with a new query string',
    build(app, engine) {
      const router = engine.Router();
      router.use((req: any, _res: any, next: any) => {
        req.url = '/x?b=2';
        next();
      });
      router.get('/x', (req: any, res: any) => res.json(req.query));
      app.use('/r', router);
    },
    paths: ['/r/y?a=1'],
    expect: { 4: [{ status: 200, body: { a: '1' } }], 5: [{ status: 200, body: { b: '2' } }] },
  },
  {
    name: 'an app middleware rewrites req.url with a new query string before the routes',
    build(app) {
      app.use((req: any, _res: any, next: any) => {
        req.url = req.url.replace('?', '?from=rewrite&');
        next();
      });
      app.get('/q', (req: any, res: any) => res.json(req.query));
    },
    paths: ['/q?a=1', '/q'],
    expect: {
      4: [{ status: 200, body: { a: '1' } }, { status: 200, body: {} }],
      5: [{ status: 200, body: { from: 'rewrite', a: '1' } }, { status: 200, body: {} }],
    },
  },
  {
    name: 'a middleware assigns req.query',
    build(app) {
      app.use((req: any, res: any, next: any) => {
        res.locals.before = holding(req);
        try {
          req.query = { assigned: 'yes' };
          res.locals.assign = 'ok';
        } catch (err) {
          res.locals.assign = (err as Error).name;
        }
        next();
      });
      app.get('/q', (req: any, res: any) => res.json({ ...res.locals, after: holding(req), query: req.query }));
    },
    paths: ['/q?a=1'],
    expect: {
      4: [{ status: 200, body: { before: 'own writable', assign: 'ok', after: 'own writable', query: { assigned: 'yes' } } }],
      5: [{ status: 200, body: { before: 'inherited', assign: 'TypeError', after: 'inherited', query: { a: '1' } } }],
    },
  },
  {
    name: "the app sets 'query parser' after its first route",
    build(app) {
      app.set('query parser', 'simple');
      app.get('/q', (req: any, res: any) => res.json(req.query));
      app.set('query parser', (s: string) => ({ raw: s }));
    },
    paths: ['/q?a[b]=1'],
    expect: { 4: [{ status: 200, body: { 'a[b]': '1' } }], 5: [{ status: 200, body: { raw: 'a[b]=1' } }] },
  },
  ...(['simple', 'extended', true, false] as const).map((setting) => ({
    name: `the app's 'query parser' is ${JSON.stringify(setting)}`,
    build(app: any) {
      app.set('query parser', setting);
      app.get('/q', (req: any, res: any) => res.json({ query: req.query, proto: Object.getPrototypeOf(req.query) === Object.prototype }));
    },
    paths: ['/q?a[b]=1&c=2&c=3'],
    expect: undefined as any,
  })),
  {
    name: "a sub-app with its own 'query parser' is mounted in an app",
    build(app, engine) {
      const sub = engine();
      sub.set('query parser', (s: string) => ({ sub: s }));
      sub.get('/q', (req: any, res: any) => res.json(req.query));
      app.use('/sub', sub);
    },
    paths: ['/sub/q?a=1'],
    expect: { 4: [{ status: 200, body: { a: '1' } }], 5: [{ status: 200, body: { sub: 'a=1' } }] },
  },
  {
    name: "a middleware clears req.query before a sub-app with its own 'query parser'",
    build(app, engine) {
      const sub = engine();
      sub.set('query parser', (s: string) => ({ sub: s }));
      sub.get('/q', (req: any, res: any) => res.json({ query: req.query, cleared: res.locals.cleared }));
      app.use((req: any, res: any, next: any) => {
        try {
          req.query = undefined;
          res.locals.cleared = 'ok';
        } catch (err) {
          res.locals.cleared = (err as Error).name;
        }
        next();
      });
      app.use('/sub', sub);
    },
    paths: ['/sub/q?a=1'],
    expect: {
      4: [{ status: 200, body: { query: { sub: 'a=1' }, cleared: 'ok' } }],
      5: [{ status: 200, body: { query: { sub: 'a=1' }, cleared: 'TypeError' } }],
    },
  },
  {
    name: 'a middleware writes to req.query and a later one reads it',
    build(app) {
      app.use((req: any, _res: any, next: any) => {
        req.query.added = '1';
        next();
      });
      app.get('/q', (req: any, res: any) => res.json({ query: req.query, same: req.query === req.query }));
    },
    paths: ['/q?a=1'],
    expect: {
      4: [{ status: 200, body: { query: { a: '1', added: '1' }, same: true } }],
      5: [{ status: 200, body: { query: { a: '1' }, same: false } }],
    },
  },
  {
    name: 'a handler calls req.param()',
    build(app) {
      app.get('/u/:id', (req: any, res: any) => {
        if (typeof req.param !== 'function') return res.json({ param: typeof req.param });
        res.json({ param: [req.param('id'), req.param('q'), req.param('none', 'dflt')] });
      });
    },
    paths: ['/u/7?q=query&id=from-query'],
    expect: { 4: [{ status: 200, body: { param: ['7', 'query', 'dflt'] } }], 5: [{ status: 200, body: { param: 'undefined' } }] },
  },
  {
    name: "a handler calls Express 4's singular accepts* aliases",
    build(app) {
      app.get('/a', (req: any, res: any) => {
        const out: Record<string, unknown> = {};
        for (const [name, arg] of [['acceptsCharset', 'utf-8'], ['acceptsEncoding', 'gzip'], ['acceptsLanguage', 'fr']]) {
          out[name] = typeof req[name] === 'function' ? req[name](arg) : typeof req[name];
        }
        res.json(out);
      });
    },
    paths: ['/a'],
    expect: {
      4: [{ status: 200, body: { acceptsCharset: 'utf-8', acceptsEncoding: 'gzip', acceptsLanguage: 'fr' } }],
      5: [{ status: 200, body: { acceptsCharset: 'undefined', acceptsEncoding: 'undefined', acceptsLanguage: 'undefined' } }],
    },
  },
];

describe('req.query (Express 4): when a keel/express4 app is mounted in real express@4', () => {
  it('should keep the query the outer app parsed, as an Express 4 sub-app does', async () => {
    const build = (engine: any) => (app: any) => {
      app.set('query parser', 'simple');
      const sub = engine();
      sub.use((req: any, _res: any, next: any) => {
        req.url = '/q?rewritten=1';
        next();
      });
      sub.get('/q', (req: any, res: any) => res.json({ query: req.query, own: Object.prototype.hasOwnProperty.call(req, 'query') }));
      app.use('/sub', sub);
    };
    const expected = await answers(realExpress4, build(realExpress4), ['/sub/x?a[b]=1']);
    assert.deepEqual(expected, [{ status: 200, body: { query: { 'a[b]': '1' }, own: true } }]);
    assert.deepEqual(await answers(realExpress4, build(express4), ['/sub/x?a[b]=1']), expected);
  });
});

for (const { major, real, keel } of PAIRS) {
  describe(`req.query (Express ${major}): when compared with real express@${major}`, () => {
    for (const scenario of SCENARIOS) {
      it(`should answer as Express ${major} when ${scenario.name}`, async () => {
        const expected = await answers(real, scenario.build, scenario.paths);
        // the expectation pins what real Express does, so a change in it shows here rather than passing silently
        if (scenario.expect) assert.deepEqual(expected, scenario.expect[major]);
        assert.deepEqual(await answers(keel, scenario.build, scenario.paths), expected);
      });
    }
  });
}
