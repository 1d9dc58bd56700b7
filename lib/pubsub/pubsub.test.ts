import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { pino } from 'pino';
import { AppError } from '../http/errors.js';
import { createApp, MemoryPubSub, RedisPubSub, type ServerHandle } from '../index.js';
import { checkTopic, encodePayload } from './memory.js';

const silent = pino({ level: 'silent' });

function messages(ws: WebSocket, count: number): Promise<string[]> {
  const got: string[] = [];
  return new Promise((resolve, reject) => {
    ws.on('message', (d: Buffer) => {
      got.push(d.toString());
      if (got.length === count) resolve(got);
    });
    ws.once('error', reject);
  });
}

describe('when an App publishes to WebSocket sessions (in-memory pub/sub, the default)', () => {
  let handle: ServerHandle;
  let base: string;
  let publish: (topic: string, payload: unknown) => Promise<void>;
  let pubsub: MemoryPubSub;
  before(async () => {
    pubsub = new MemoryPubSub();
    const app = createApp({ port: 0, host: '127.0.0.1' }, (a) => {
      a.ws('/ws/news', async (ws) => {
        ws.subscribe('news');
        await ws.send('ready');
        for await (const m of ws) if (m.type === 'close') break;
      });
    }, { logger: silent, pubsub });
    publish = (t, p) => app.publish(t, p);
    handle = await app.listen({ handleSignals: false });
    base = handle.url.replace('http', 'ws');
  });
  after(() => handle.close());

  it('should send each subscriber a string as text and other JSON values as JSON', async () => {
    const clients = [new WebSocket(`${base}/ws/news`), new WebSocket(`${base}/ws/news`)];
    const got = clients.map((c) => messages(c, 3));
    // 'ready' is sent after subscribe(): once both saw it, both are subscribed.
    await Promise.all(clients.map((c) => new Promise((r) => c.once('message', r))));
    await publish('news', 'plain');
    await publish('news', { id: 1 });
    for (const g of await Promise.all(got)) assert.deepEqual(g, ['ready', 'plain', '{"id":1}']);
    for (const c of clients) c.close();
  });

  it('should release the subscription when the connection closes', async () => {
    const released = async () => {
      for (let i = 0; i < 200 && pubsub.listenerCount('news') > 0; i++) await new Promise((r) => setTimeout(r, 10));
    };
    await released(); // the clients of the test before
    const ws = new WebSocket(`${base}/ws/news`);
    await new Promise((r) => ws.once('message', r));
    assert.equal(pubsub.listenerCount('news'), 1);
    ws.close();
    await released();
    assert.equal(pubsub.listenerCount('news'), 0);
  });
});

describe('when pub/sub input is bad', () => {
  it('should refuse an empty or oversized topic, and a payload JSON cannot carry', () => {
    assert.throws(() => checkTopic(''), TypeError);
    assert.throws(() => checkTopic('x'.repeat(513)), /1 to 512/);
    assert.throws(() => encodePayload('t', () => 1), /must be a JSON value/);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.throws(() => encodePayload('t', cycle), /must be a JSON value/);
    assert.throws(() => encodePayload('t', 10n), /must be a JSON value/);
  });
  it('should refuse a RedisPubSub without a redis URL, naming the option', () => {
    assert.throws(() => new RedisPubSub({ connection: 'http://127.0.0.1' }), /connection: a redis:\/\/ URL/);
    assert.throws(() => new RedisPubSub({ connection: 'redis://127.0.0.1', passOnStoreError: 'yes' as never }), /passOnStoreError/);
  });
  it('should refuse an AppOptions.pubsub that is not a PubSub', () => {
    assert.throws(() => createApp({}, undefined, { logger: silent, pubsub: {} as never }), (e: Error) => e instanceof AppError && /AppOptions\.pubsub/.test(e.message));
  });
});
