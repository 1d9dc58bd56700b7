import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import express from './index.js';
import express4 from './express4.js';

// res.json/res.send write Content-Type, Content-Length and ETag into node's header map themselves
// (engine-headers.ts) only while nothing observes res.set / res.setHeader: each test makes something observe them
// and checks it saw every header Express would have set through them.
for (const [engine, create] of [['keel/express', express], ['keel/express4', express4]] as const) {
  describe(`when res.json answers (${engine})`, () => {
    it('should give the headers Express gives, as strings, readable with res.get before the head is sent', async () => {
      const app = create();
      app.disable('x-powered-by');
      let seen: unknown[] = [];
      app.get('/', (_req: any, res: any) => {
        const end = res.end;
        res.end = function patchedEnd(this: any, ...args: any[]) {
          seen = [res.get('Content-Type'), res.get('Content-Length'), res.get('ETag'), res.getHeaderNames()];
          return end.apply(this, args);
        };
        res.json({ a: 1 });
      });
      const res = await request(app).get('/').expect(200, '{"a":1}');
      assert.deepEqual(seen, ['application/json; charset=utf-8', '7', res.headers.etag, ['content-type', 'content-length', 'etag']]);
      assert.equal(res.headers['content-length'], '7');
    });

    it("should call an app's own res.set for each header (app.response.set replaced)", async () => {
      const app = create();
      const calls: Array<[string, unknown]> = [];
      const set = app.response.set;
      app.response.set = function recordingSet(this: any, field: any, value?: any) {
        if (typeof field === 'string') calls.push([field, value]);
        return set.apply(this, arguments as any);
      };
      app.get('/', (_req: any, res: any) => res.json({ a: 1 }));
      await request(app).get('/').expect(200, '{"a":1}');
      assert.deepEqual(calls.map(([name]) => name), ['Content-Type', 'Content-Length', 'ETag']);
      assert.deepEqual(calls[1], ['Content-Length', '7']);
    });

    it('should call a wrapped res.setHeader (an APM) for each header', async () => {
      const app = create();
      const names: string[] = [];
      app.use((_req: any, res: any, next: any) => {
        const setHeader = res.setHeader;
        res.setHeader = function wrappedSetHeader(this: any, name: string, value: unknown) {
          names.push(name);
          return setHeader.call(this, name, value);
        };
        next();
      });
      app.get('/', (_req: any, res: any) => res.send('hello'));
      const res = await request(app).get('/').expect(200, 'hello');
      assert.deepEqual(names, ['Content-Type', 'Content-Length', 'ETag']);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    });

    it('should send X-Powered-By first, and through a setHeader wrapped before the app runs', async () => {
      const plain = await request(create().get('/', (_req: any, res: any) => res.json({ a: 1 }))).get('/').expect(200);
      assert.equal(plain.headers['x-powered-by'], 'Express');
      assert.match(plain.text, /^\{"a":1\}$/);
      const app = create();
      const names: string[] = [];
      app.get('/', (_req: any, res: any) => res.json({ a: 1 }));
      // an APM wrapping setHeader on the response before the app gets it
      const res = await request((req: any, response: any) => {
        const setHeader = response.setHeader;
        response.setHeader = function wrappedSetHeader(this: any, name: string, value: unknown) {
          names.push(name);
          return setHeader.call(this, name, value);
        };
        app(req, response);
      }).get('/').expect(200, '{"a":1}');
      assert.deepEqual(names, ['X-Powered-By', 'Content-Type', 'Content-Length', 'ETag']);
      assert.equal(res.headers['x-powered-by'], 'Express');
    });

    it('should keep a Content-Type set before, and throw as Express when the head was sent', async () => {
      const app = create();
      let thrown: any;
      app.get('/', (_req: any, res: any) => {
        res.type('application/vnd.api+json').json({ a: 1 });
        try { res.json({ b: 2 }); } catch (err) { thrown = err; }
      });
      const res = await request(app).get('/').expect(200, '{"a":1}');
      assert.equal(res.headers['content-type'], 'application/vnd.api+json; charset=utf-8');
      assert.equal(thrown?.code, 'ERR_HTTP_HEADERS_SENT');
    });
  });
}
