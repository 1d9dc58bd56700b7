import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import express from './index.js';
import express4 from './express4.js';

// The settings a response reads are a snapshot taken once per change (hot-settings.ts): each test answers a
// request first (the snapshot is taken), then changes a setting, and the next answer must follow the change.
for (const [engine, create] of [['keel/express', express], ['keel/express4', express4]] as const) {
  describe(`when a setting changes after requests were answered (${engine})`, () => {
    it("should indent JSON by the new 'json spaces' and use the new 'json replacer'", async () => {
      const app = create();
      app.get('/', (_req: any, res: any) => res.json({ a: 1, secret: 's' }));
      await request(app).get('/').expect(200, '{"a":1,"secret":"s"}');
      app.set('json spaces', 2);
      await request(app).get('/').expect(200, '{\n  "a": 1,\n  "secret": "s"\n}');
      app.set('json spaces', 0);
      app.set('json replacer', (key: string, value: unknown) => (key === 'secret' ? undefined : value));
      await request(app).get('/').expect(200, '{"a":1}');
    });

    it("should stop sending ETag and X-Powered-By once they are disabled, and send them again once enabled", async () => {
      const app = create();
      app.get('/', (_req: any, res: any) => res.send('hello'));
      let res = await request(app).get('/').expect(200);
      assert.equal(res.headers['x-powered-by'], 'Express');
      assert.match(res.headers.etag, /^W\/"5-/);
      app.disable('etag');
      app.disable('x-powered-by');
      res = await request(app).get('/').expect(200);
      assert.equal(res.headers.etag, undefined);
      assert.equal(res.headers['x-powered-by'], undefined);
      app.set('etag', 'strong');
      app.enable('x-powered-by');
      res = await request(app).get('/').expect(200);
      assert.match(res.headers.etag, /^"5-/);
      assert.equal(res.headers['x-powered-by'], 'Express');
    });

    it("should give a mounted app its parent's setting changed after the mount and after a request", async () => {
      const parent = create();
      const child = create();
      child.get('/', (_req: any, res: any) => res.json({ a: 1 }));
      parent.use('/child', child);
      await request(parent).get('/child').expect(200, '{"a":1}');
      parent.set('json spaces', 1);
      await request(parent).get('/child').expect(200, '{\n "a": 1\n}');
    });

    it('should answer with a setting an app inherits once it is mounted', async () => {
      const parent = create();
      parent.set('json spaces', 1);
      const child = create();
      child.get('/', (_req: any, res: any) => res.json({ a: 1 }));
      await request(child).get('/').expect(200, '{"a":1}');
      parent.use('/child', child);
      await request(parent).get('/child').expect(200, '{\n "a": 1\n}');
    });
  });
}
