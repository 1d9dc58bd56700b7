// keel:integration
/**
 * Cross-instance events through RedisPubSub, two keel processes: a GraphQL subscription on instance B
 * receives the book added through instance A (built-in `full` schema), an SDL route's subscription
 * on B receives what A publishes, a WebSocket client on B receives A's broadcast; with Redis down,
 * publish fails open by default (this instance's subscribers still get the event). docs/scaling.md.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { NO_REDIS, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { connectGraphqlWs, sendFrame, waitForFrame } from '../helpers/graphql-ws-client.js';
import { startInstance, type Instance } from './instances.js';

/** Wait until `count` instances have subscribed the channel of `topic` in Redis. */
async function subscribers(redis: RedisServer, topic: string, count: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [, n] = (await redis.client.call('PUBSUB', 'NUMSUB', `keel:ps:${topic}`)) as [string, number];
    if (n >= count) return;
    await sleep(25);
  }
  assert.fail(`no subscriber of ${topic} in Redis`);
}

const post = (base: string, path: string, body: unknown) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });

/** `p`, or a rejection after `ms`: a lost event fails the test instead of hanging it. */
function within<T>(p: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no event within ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

function nextMessage(ws: WebSocket, match: (text: string) => boolean): Promise<string> {
  return within(new Promise((resolve, reject) => {
    const onMessage = (d: Buffer) => {
      if (!match(d.toString())) return;
      ws.off('message', onMessage);
      resolve(d.toString());
    };
    ws.on('message', onMessage);
    ws.once('close', () => reject(new Error('closed')));
  }));
}

describe('when two instances share events through Redis pub/sub', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  let a: Instance;
  let b: Instance;
  const sockets: WebSocket[] = [];

  before(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([startInstance({ REDIS_URL: redis.url, INSTANCE: 'A' }), startInstance({ REDIS_URL: redis.url, INSTANCE: 'B' })]);
  });
  after(async () => {
    for (const s of sockets) s.terminate();
    await Promise.all([a?.kill(), b?.kill()]);
    await redis?.stop();
  });

  it('should deliver a book added on A to a bookAdded subscription on B', async () => {
    const ws = await connectGraphqlWs(`${b.url.replace('http', 'ws')}/graphql`);
    sockets.push(ws);
    sendFrame(ws, { id: '1', type: 'subscribe', payload: { query: 'subscription { bookAdded { title author { name } } }' } });
    await subscribers(redis, 'graphql:/graphql:bookAdded', 1);
    const event = within(waitForFrame(ws, (m) => m.type === 'next' && m.id === '1'));
    const res = await post(a.url, '/graphql', { query: 'mutation { addBook(input: {title: "Dawn", authorId: "a2"}) { id } }' });
    assert.equal(res.status, 200);
    assert.deepEqual((await event).payload, { data: { bookAdded: { title: 'Dawn', author: { name: 'Octavia E. Butler' } } } });
    sendFrame(ws, { id: '1', type: 'complete' });
  });

  it('should deliver what A publishes to an SDL route subscription on B', async () => {
    const ws = await connectGraphqlWs(`${b.url.replace('http', 'ws')}/sdl`);
    sockets.push(ws);
    sendFrame(ws, { id: 's', type: 'subscribe', payload: { query: 'subscription { ticks { n } }' } });
    await subscribers(redis, 'graphql:/sdl:ticks', 1);
    const event = within(waitForFrame(ws, (m) => m.type === 'next' && m.id === 's'));
    assert.equal((await post(a.url, '/publish', { topic: 'graphql:/sdl:ticks', payload: { n: 42 } })).status, 200);
    assert.deepEqual((await event).payload, { data: { ticks: { n: 42 } } });
  });

  it('should deliver a WebSocket message sent to A to a client of B', async () => {
    const onA = new WebSocket(`${a.url.replace('http', 'ws')}/ws/chat`);
    const onB = new WebSocket(`${b.url.replace('http', 'ws')}/ws/chat`);
    sockets.push(onA, onB);
    await Promise.all([nextMessage(onA, (t) => t === 'subscribed'), nextMessage(onB, (t) => t === 'subscribed')]);
    await subscribers(redis, 'chat', 2);
    const onBGot = nextMessage(onB, (t) => t.startsWith('A:'));
    onA.send('hello');
    assert.equal(await onBGot, 'A: hello');
  });

  describe('when Redis goes down', () => {
    before(() => redis.kill());

    it('should still deliver events to subscribers of the publishing instance (fail open, the default)', async () => {
      const ws = new WebSocket(`${a.url.replace('http', 'ws')}/ws/chat`);
      sockets.push(ws);
      await nextMessage(ws, (t) => t === 'subscribed');
      const got = nextMessage(ws, (t) => t.startsWith('A:'));
      const res = await post(a.url, '/publish', { topic: 'chat', payload: 'A: still here' });
      assert.equal(res.status, 200);
      assert.equal(await got, 'A: still here');
    });
  });
});

describe('when the pub/sub fails closed and Redis is down', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  let a: Instance;
  before(async () => {
    redis = await startRedis();
    a = await startInstance({ REDIS_URL: redis.url, INSTANCE: 'A', PUBSUB_FAIL_CLOSED: '1' });
    await redis.kill();
  });
  after(async () => {
    await a?.kill();
    await redis?.stop();
  });

  it('should refuse the publish with a 503 problem', async () => {
    const res = await post(a.url, '/publish', { topic: 'chat', payload: 'x' });
    assert.equal(res.status, 503);
    assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
  });
  it('should fail the mutation that publishes, visibly', async () => {
    const res = await post(a.url, '/graphql', { query: 'mutation { addBook(input: {title: "Dawn", authorId: "a2"}) { id } }' });
    const body = await res.json() as { errors?: { message: string }[] };
    assert.ok(body.errors?.length, JSON.stringify(body));
  });
});
