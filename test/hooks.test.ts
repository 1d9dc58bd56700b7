/**
 * Lifecycle hooks: phase order, on_error, short-circuits from every phase, named hooks through
 * LifecycleHooksConfig (order, dependencies, config) and their build-time checks.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { App } from '../lib/app/app.js';
import { AppError, HttpError } from '../lib/http/errors.js';
import { response } from '../lib/app/handler.js';
import { HOOK_PHASES, type HookContext, type HookPhase } from '../lib/app/hooks.js';
import type { LifecycleHooksConfigInput } from '../lib/records/route.js';

/** An app whose hooks and handler append to `log` (reset per request through on_request). */
function tracingApp(shortCircuitAt?: HookPhase) {
  const log: string[] = [];
  const app = new App({ port: 0 });
  const hook = (phase: HookPhase) => (ctx: HookContext) => {
    log.push(phase);
    if (phase === shortCircuitAt) return response({ stoppedAt: phase }, { status: 203 });
    if (phase === 'on_response' && ctx.response) ctx.response.headers['X-Seen-By'] = 'on_response';
    return undefined;
  };
  app.onRequest(hook('on_request')).preValidation(hook('pre_validation')).preHandler(hook('pre_handler')).onResponse(hook('on_response')).onError(hook('on_error'));
  app.get('/ok', () => {
    log.push('handler');
    return { ok: true };
  }, { parameters: { query: { n: { type: 'integer', optional: true } } } });
  app.get('/fail', () => {
    log.push('handler');
    throw new HttpError(409, 'conflict');
  });
  return { app, log, router: app.intoRouter() };
}

describe('when global hooks are registered for every phase', () => {
  it('should run on_request, pre_validation, pre_handler, handler, on_response in that order', async () => {
    const { router, log } = tracingApp();
    const res = await request(router).get('/ok');
    assert.equal(res.status, 200);
    assert.deepEqual(log, ['on_request', 'pre_validation', 'pre_handler', 'handler', 'on_response']);
    assert.equal(res.headers['x-seen-by'], 'on_response');
  });

  it('should run on_error (and not on_response) when the handler fails', async () => {
    const { router, log } = tracingApp();
    const res = await request(router).get('/fail');
    assert.equal(res.status, 409);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.deepEqual(log, ['on_request', 'pre_validation', 'pre_handler', 'handler', 'on_error']);
  });

  it('should run pre_validation before validation and skip pre_handler when validation fails', async () => {
    const { router, log } = tracingApp();
    const res = await request(router).get('/ok?n=abc');
    assert.equal(res.status, 422);
    assert.deepEqual(log.slice(0, 2), ['on_request', 'pre_validation']);
    assert.equal(log.includes('pre_handler'), false);
    assert.equal(log.includes('handler'), false);
  });

  for (const phase of ['on_request', 'pre_validation', 'pre_handler'] as const) {
    it(`should stop at ${phase} when it returns a response, without running the handler`, async () => {
      const { router, log } = tracingApp(phase);
      const res = await request(router).get('/ok');
      assert.equal(res.status, 203);
      assert.deepEqual(res.body, { stoppedAt: phase });
      const i = HOOK_PHASES.indexOf(phase);
      assert.deepEqual(log, [...HOOK_PHASES.slice(0, i + 1), 'on_response']);
      assert.equal(log.includes('handler'), false);
    });
  }

  it('should answer with the response of an on_request short-circuit even when validation would fail', async () => {
    const { router } = tracingApp('on_request');
    const res = await request(router).get('/ok?n=abc');
    assert.equal(res.status, 203);
  });

  it('should let on_response replace the response', async () => {
    const app = new App({ port: 0 });
    app.onResponse((ctx) => response({ wrapped: ctx.response?.content }, { status: 201 }));
    app.get('/x', () => ({ v: 1 }));
    const res = await request(app.intoRouter()).get('/x');
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { wrapped: { v: 1 } });
  });

  it('should let on_error answer instead of the default problem', async () => {
    const app = new App({ port: 0 });
    let seen: unknown;
    app.onError((ctx) => {
      seen = ctx.error;
      return response({ recovered: true }, { status: 503 });
    });
    app.get('/x', () => {
      throw new Error('boom');
    });
    const res = await request(app.intoRouter()).get('/x');
    assert.equal(res.status, 503);
    assert.deepEqual(res.body, { recovered: true });
    assert.ok(seen instanceof Error && seen.message === 'boom');
  });

  it('should answer a failing hook with a problem, running on_error', async () => {
    const app = new App({ port: 0 });
    const log: string[] = [];
    app.preHandler(() => {
      throw new HttpError(401, 'no');
    });
    app.onError(() => void log.push('on_error'));
    app.get('/x', () => {
      log.push('handler');
      return {};
    });
    const res = await request(app.intoRouter()).get('/x');
    assert.equal(res.status, 401);
    assert.deepEqual(log, ['on_error']);
  });

  it('should share data.state between hooks and the handler', async () => {
    const app = new App({ port: 0 });
    app.onRequest((ctx) => {
      ctx.data.state.user = 'alice';
    });
    app.preHandler(async (ctx) => {
      await new Promise((r) => setImmediate(r));
      ctx.data.state.checked = true;
    });
    app.get('/x', (d) => d.state);
    const res = await request(app.intoRouter()).get('/x');
    assert.deepEqual(res.body, { user: 'alice', checked: true });
  });

  it('should reject an unknown phase and a non-function hook', () => {
    const app = new App();
    assert.throws(() => app.hooks.add('before_all' as HookPhase, () => undefined), AppError);
    assert.throws(() => app.onRequest('not a function' as never), AppError);
  });
});

describe('when routes reference named hooks through lifecycle_hooks', () => {
  function namedApp(hooks: LifecycleHooksConfigInput | undefined) {
    const log: string[] = [];
    const configs: Record<string, unknown> = {};
    const app = new App({ port: 0 });
    for (const name of ['auth', 'load', 'audit', 'metrics']) {
      app.hook('pre_handler', name, (ctx) => {
        log.push(name);
        configs[name] = ctx.config;
      });
    }
    app.hook('on_request', 'only-on-request', () => void log.push('only-on-request'));
    app.get('/x', () => {
      log.push('handler');
      return {};
    }, { lifecycle_hooks: hooks });
    return { app, log, configs };
  }

  it('should run them ordered by order, then position', async () => {
    const { app, log } = namedApp({
      pre_handler: [
        { name: 'audit', handler: 'audit', order: 3 },
        { name: 'auth', handler: 'auth', order: 1 },
        { name: 'metrics', handler: 'metrics' },
        { name: 'load', handler: 'load', order: 2 },
      ],
    });
    await request(app.intoRouter()).get('/x').expect(200);
    assert.deepEqual(log, ['auth', 'load', 'audit', 'metrics', 'handler']);
  });

  it('should pull in dependencies the route did not list and run them first', async () => {
    const { app, log } = namedApp({ pre_handler: [{ name: 'audit', handler: 'audit', dependencies: ['auth', 'load'] }] });
    await request(app.intoRouter()).get('/x').expect(200);
    assert.deepEqual(log, ['auth', 'load', 'audit', 'handler']);
  });

  it('should run a listed dependency before its dependant even when order says otherwise', async () => {
    const { app, log } = namedApp({
      pre_handler: [
        { name: 'audit', handler: 'audit', order: 1, dependencies: ['auth'] },
        { name: 'auth', handler: 'auth', order: 5 },
      ],
    });
    await request(app.intoRouter()).get('/x').expect(200);
    assert.deepEqual(log, ['auth', 'audit', 'handler']);
  });

  it('should pass each hook its config', async () => {
    const { app, configs } = namedApp({ preHandler: [{ name: 'auth', handler: 'auth', config: { role: 'admin' } }, { name: 'load', handler: 'load' }] });
    await request(app.intoRouter()).get('/x').expect(200);
    assert.deepEqual(configs, { auth: { role: 'admin' }, load: null });
  });

  it('should not run named hooks on routes that do not reference them', async () => {
    const { app, log } = namedApp(undefined);
    await request(app.intoRouter()).get('/x').expect(200);
    assert.deepEqual(log, ['handler']);
  });

  it('should refuse an unknown hook name with an AppError when the router is built', () => {
    const { app } = namedApp({ pre_handler: [{ name: 'nope', handler: 'nope' }] });
    assert.throws(() => app.intoRouter(), (err: unknown) => err instanceof AppError && err.kind === 'Route' && /"nope"/.test(err.message));
  });

  it('should refuse an unknown dependency', () => {
    const { app } = namedApp({ pre_handler: [{ name: 'auth', handler: 'auth', dependencies: ['ghost'] }] });
    assert.throws(() => app.intoRouter(), (err: unknown) => err instanceof AppError && /"ghost"/.test(err.message));
  });

  it('should not resolve a name registered only for another phase', () => {
    const { app } = namedApp({ pre_handler: [{ name: 'only-on-request', handler: 'h' }] });
    assert.throws(() => app.intoRouter(), (err: unknown) => err instanceof AppError && /not registered for pre_handler/.test(err.message));
  });

  it('should resolve that name in its own phase', async () => {
    const { app, log } = namedApp({ on_request: [{ name: 'only-on-request', handler: 'h' }] });
    await request(app.intoRouter()).get('/x').expect(200);
    assert.deepEqual(log, ['only-on-request', 'handler']);
  });

  it('should refuse a dependency cycle', () => {
    const { app } = namedApp({
      pre_handler: [
        { name: 'auth', handler: 'auth', dependencies: ['load'] },
        { name: 'load', handler: 'load', dependencies: ['auth'] },
      ],
    });
    assert.throws(() => app.intoRouter(), (err: unknown) => err instanceof AppError && /cycle/.test(err.message));
  });

  it('should refuse a bad LifecycleHooksConfig when the route is registered', () => {
    const app = new App();
    // @ts-expect-error a hook reference without `handler` (refused by the compiler and at run time)
    assert.throws(() => app.get('/x', () => ({}), { lifecycle_hooks: { pre_handler: [{ name: 'a' }] } }), AppError);
    // @ts-expect-error `before` is not a phase
    assert.throws(() => app.get('/y', () => ({}), { lifecycle_hooks: { before: [] } }), AppError);
  });

  it('should refuse registering the same name twice in one phase', () => {
    const app = new App();
    app.hook('on_request', 'a', () => undefined);
    assert.throws(() => app.hook('on_request', 'a', () => undefined), AppError);
    assert.doesNotThrow(() => app.hook('pre_handler', 'a', () => undefined));
  });

  it('should run global hooks before the named ones of a phase', async () => {
    const { app, log } = namedApp({ pre_handler: [{ name: 'auth', handler: 'auth' }] });
    app.preHandler(() => void log.push('global'));
    await request(app.intoRouter()).get('/x').expect(200);
    assert.deepEqual(log, ['global', 'auth', 'handler']);
  });
});
