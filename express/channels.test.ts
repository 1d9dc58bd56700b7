import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { tracingChannel } from 'node:diagnostics_channel';
import request from 'supertest';
import express5 from './index.js';
import express4 from './express4.js';

// The tracing channels keel's engines publish (router/channels.ts, docs/express-engine.md "Sentry 11 and other
// APMs"), subscribed to here as an APM does.
interface Seen { event: string; layer?: string; path?: unknown; error?: unknown; stackLength?: number }

function subscribe(module: 'router' | 'express'): { seen: Seen[]; off: () => void } {
  const seen: Seen[] = [];
  const handle = tracingChannel(`orchestrion:${module}:handle`);
  const register = tracingChannel(`orchestrion:${module}:register`);
  const handlers = {
    start: (c: any) => seen.push({ event: 'handle start', layer: c.self.name }),
    end: () => {},
    asyncStart: (c: any) => seen.push({ event: 'next', layer: c.self.name, ...(c.error === undefined ? {} : { error: c.error.message }) }),
    asyncEnd: () => {},
    error: (c: any) => seen.push({ event: 'error', layer: c.self.name, error: c.error.message }),
  };
  const registers = {
    start: () => {}, asyncStart: () => {}, asyncEnd: () => {}, error: () => {},
    end: (c: any) => seen.push({ event: 'register', path: c.arguments[0], stackLength: c.self.stack.length }),
  };
  handle.subscribe(handlers as any);
  register.subscribe(registers as any);
  return { seen, off: () => { handle.unsubscribe(handlers as any); register.unsubscribe(registers as any); } };
}

describe('when an APM subscribes to the orchestrion tracing channels', () => {
  let off: (() => void) | undefined;
  afterEach(() => off?.());

  for (const [name, express, module, routeLayer] of [
    ['keel/express', express5, 'router', 'handle'], ['keel/express4', express4, 'express', 'bound dispatch'],
  ] as const) {
    it(`should publish each registration and each layer run, with next and next(err), on ${module}'s channels (${name})`, async () => {
      const sub = subscribe(module);
      off = sub.off;
      const app = (express as any)();
      app.use(function stamp(_req: any, _res: any, next: any) { next(); });
      const router = (express as any).Router();
      router.get('/users/:id', function show(req: any, res: any) { res.send(req.params.id); });
      router.get('/fail', function fail(_req: any, _res: any, next: any) { next(new Error('boom')); });
      app.use('/api', router);
      app.use((err: any, _req: any, res: any, _next: any) => res.status(500).send(err.message));
      const registered = sub.seen.filter((s) => s.event === 'register').map((s) => s.path);
      // app.use(fn) registers at '/', as Express's app.use does
      assert.deepEqual(registered, ['/', '/users/:id', '/fail', '/api', '/']);

      sub.seen.length = 0;
      await request(app).get('/api/users/7').expect(200, '7');
      const runs = sub.seen.filter((s) => s.event === 'handle start').map((s) => s.layer);
      assert.deepEqual(runs, ['stamp', 'router', routeLayer, 'show']);

      sub.seen.length = 0;
      await request(app).get('/api/fail').expect(500, 'boom');
      assert.deepEqual(sub.seen.filter((s) => s.event === 'error'), [
        { event: 'error', layer: 'fail', error: 'boom' },
        { event: 'error', layer: routeLayer, error: 'boom' },
        { event: 'error', layer: 'router', error: 'boom' },
      ]);
    });
  }

  it("should publish nothing on the other engine's channels", async () => {
    const sub = subscribe('express');
    off = sub.off;
    const app = express5();
    app.get('/', (_req: any, res: any) => res.send('ok'));
    await request(app).get('/').expect(200);
    assert.deepEqual(sub.seen, []);
  });
});

describe("when a package patches keel/express4's Layer.prototype.handle_request (as Express 4's)", () => {
  it('should run every layer through the patch', async () => {
    const Layer = (express4 as any)[Symbol.for('keel.express.parts')].Layer;
    const original = Layer.prototype.handle_request;
    const names: string[] = [];
    Layer.prototype.handle_request = function patched(this: any, req: any, res: any, next: any) {
      names.push(this.name);
      return original.call(this, req, res, next);
    };
    try {
      const app = express4();
      app.use(function first(_req: any, _res: any, next: any) { next(); });
      app.get('/', function answer(_req: any, res: any) { res.send('ok'); });
      await request(app).get('/').expect(200, 'ok');
      assert.deepEqual(names, ['first', 'bound dispatch', 'answer']);
    } finally {
      Layer.prototype.handle_request = original;
    }
  });
});
