import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { pino } from 'pino';
import { createApp, response, type App } from '../index.js';
import { backgroundOf } from './index.js';
import { sharedCaseFiles } from '../../test/helpers/shared-corpus.js';

const silent = { logger: pino({ level: 'silent' }) };
const BODY = { type: 'object', properties: { event: { type: 'string' } }, required: ['event'], additionalProperties: false };

function eventsApp(config: Record<string, unknown>, task?: (event: string) => Promise<void>): { app: App; events: string[] } {
  const events: string[] = [];
  const app = createApp(
    { port: 0, ...config },
    (a) => {
      a.post(
        '/background/events',
        (data) => {
          const event = (data.body as { event: string }).event;
          data.background!.enqueue(task ? () => task(event) : () => void events.push(event), { name: 'log_event' });
          return response({ status: 'queued' }, { status: 202 });
        },
        { body: BODY },
      );
      a.get('/background/events', () => ({ events }));
      a.get('/has-background', (data) => ({ present: data.background !== undefined }));
    },
    silent,
  );
  return { app, events };
}

describe('background tasks in a keel App', () => {
  it('should not start an executor by default', async () => {
    const { app } = eventsApp({});
    const res = await request(app.intoRouter()).get('/has-background');
    assert.deepEqual(res.body, { present: false });
    assert.equal(backgroundOf(app), undefined);
  });

  it('should start the executor when the router is built and run jobs after the 202', async () => {
    const { app } = eventsApp({ background_tasks: { enabled: true } });
    const router = app.intoRouter();
    assert.equal(backgroundOf(app)?.stats().state, 'running');
    const res = await request(router).post('/background/events').send({ event: 'alpha' });
    assert.equal(res.status, 202);
    assert.match(res.headers['content-type'] ?? '', /^application\/json/);
    await backgroundOf(app)!.idle();
    assert.deepEqual((await request(router).get('/background/events')).body, { events: ['alpha'] });
  });

  it('should answer 503 problem with Retry-After when the queue is full', async () => {
    const release: (() => void)[] = [];
    const { app } = eventsApp({ background_tasks: { enabled: true, max_queue_size: 1, max_concurrent_tasks: 1 } }, () => new Promise<void>((r) => release.push(r)));
    const router = app.intoRouter();
    assert.equal((await request(router).post('/background/events').send({ event: 'a' })).status, 202);
    assert.equal((await request(router).post('/background/events').send({ event: 'b' })).status, 202);
    const res = await request(router).post('/background/events').send({ event: 'c' });
    assert.equal(res.status, 503);
    assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
    assert.match(res.body.type, /background-queue-full$/);
    assert.equal(res.headers['retry-after'], '1');
    while (release.length) release.shift()!();
    await new Promise((r) => setImmediate(r));
    while (release.length) release.shift()!();
    await backgroundOf(app)!.idle();
  });

  it('should drain the executor when the server closes', async () => {
    const { app, events } = eventsApp({ background_tasks: { enabled: true } });
    const handle = await app.listen({ port: 0, handleSignals: false });
    await request(handle.url).post('/background/events').send({ event: 'last' });
    await handle.close();
    assert.deepEqual(events, ['last']);
    assert.equal(backgroundOf(app)?.stats().state, 'stopped');
  });
});

const { dir, files: cases } = sharedCaseFiles('background');

describe('background conformance cases (../shared/conformance/testing_data/background)', () => {
  if (cases.length === 0) {
    it.skip('skipped: ../shared/conformance is absent', () => {});
    return;
  }
  for (const file of cases) {
    const c = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    it(`should pass ${file}: ${c.description}`, async () => {
      const state: unknown[] = [];
      const { state_path, state_key, value_field, expected_state } = c.background;
      const app = createApp(
        { port: 0, background_tasks: { enabled: true } },
        (a) => {
          a.route({
            method: c.handler.method,
            path: c.handler.route,
            body: c.handler.body_schema,
            handler: (data) => {
              const value = (data.body as Record<string, unknown>)[value_field];
              data.background!.enqueue(() => void state.push(value), { name: file });
              return response({ status: 'queued' }, { status: 202 });
            },
          });
          a.get(state_path, () => ({ [state_key]: state }));
        },
        silent,
      );
      const router = app.intoRouter();
      const res = await request(router)[c.request.method.toLowerCase() as 'post'](c.request.path).send(c.request.body);
      assert.equal(res.status, c.expected_response.status_code);
      for (const [k, v] of Object.entries(c.expected_response.headers ?? {})) assert.ok(String(res.headers[k.toLowerCase()]).startsWith(String(v)), k);
      await backgroundOf(app)!.idle();
      const after = await request(router).get(state_path);
      assert.deepEqual(after.body[state_key], expected_state);
      await backgroundOf(app)!.shutdown();
    });
  }
});

describe('when a listening App with background tasks shuts down', () => {
  it('should accept jobs enqueued by requests still in flight, and drain them before close() resolves', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    const done: string[] = [];
    const app = createApp({ host: '127.0.0.1', port: 0, background_tasks: { enabled: true } }, (a) => {
      a.post('/late', async (data) => {
        entered();
        await held;
        data.background!.enqueue(async () => {
          await new Promise((r) => setTimeout(r, 50));
          done.push('late job');
        }, { name: 'late' });
        return response({ status: 'queued' }, { status: 202 });
      });
    }, silent);
    const server = await app.listen({ handleSignals: false });
    const answer = fetch(`${server.url}/late`, { method: 'POST' });
    await inHandler;
    const closed = server.close();
    // Shutdown has begun (the server no longer accepts); the request enqueues only now.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(backgroundOf(app)!.stats().state, 'running', 'the executor still accepts while HTTP drains');
    release();
    const res = await answer;
    assert.equal(res.status, 202);
    assert.equal(res.headers.get('connection'), 'close');
    await closed;
    assert.deepEqual(done, ['late job'], 'the job ran before close() resolved');
    assert.equal(backgroundOf(app)!.stats().state, 'stopped');
  });
});
