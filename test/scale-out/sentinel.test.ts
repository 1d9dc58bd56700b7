// keel:integration
/**
 * Two keel instances behind Sentinel (issue 37): ioredis options `{ sentinels, name }` in place of the
 * URL for the rate-limit client, `bullmqBackground` and `RedisPubSub`. A job enqueued on A runs on B and
 * a chat event crosses; the primary is SIGKILLed, the sentinel promotes the replica, and both instances
 * follow: enqueues are accepted again and run once, events cross again. docs/scaling.md#sentinel.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { Redis } from 'ioredis';
import { NO_REDIS_SENTINEL, startRedisSentinel, type RedisSentinelSetup } from '../helpers/redis-sentinel.js';
import { startInstance, type Instance } from './instances.js';

describe('when two instances use a Redis behind Sentinel and the primary dies', { skip: NO_REDIS_SENTINEL }, () => {
  let setup: RedisSentinelSetup;
  let a: Instance;
  let b: Instance;
  let results: Redis;
  let chat: WebSocket;
  const got: string[] = [];

  const enqueue = (n: number) => fetch(`${a.url}/enqueue?n=${n}`, { method: 'POST', signal: AbortSignal.timeout(10_000) }).then((r) => r.status, () => 0);
  const publish = (text: string) => fetch(`${a.url}/publish`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ topic: 'chat', payload: text }), signal: AbortSignal.timeout(10_000) }).then((r) => r.status, () => 0);
  async function runs(want: number): Promise<number[]> {
    let rows: number[] = [];
    for (let i = 0; i < 300; i++) {
      rows = (await results.lrange('test:done', 0, -1)).map((r) => (JSON.parse(r) as { payload: { n: number } }).payload.n);
      if (rows.length >= want) break;
      await sleep(50);
    }
    return rows;
  }

  before(async () => {
    setup = await startRedisSentinel();
    const env = { REDIS_SENTINELS: setup.sentinels, REDIS_SENTINEL_NAME: setup.name };
    [a, b] = await Promise.all([startInstance({ ...env, INSTANCE: 'A', WORKER: '0' }), startInstance({ ...env, INSTANCE: 'B' })]);
    const [host, port] = setup.sentinels.split(':');
    results = new Redis({ sentinels: [{ host: host!, port: Number(port) }], name: setup.name, maxRetriesPerRequest: 1 });
    results.on('error', () => {});
    chat = new WebSocket(`${b.url.replace('http', 'ws')}/ws/chat`);
    chat.on('message', (d: Buffer) => got.push(d.toString()));
    await new Promise((resolve, reject) => chat.once('open', resolve).once('error', reject));
    for (let i = 0; i < 200 && !got.includes('subscribed'); i++) await sleep(25);
    // B's subscription is in Redis once NUMSUB counts it.
    for (let i = 0; i < 200 && Number(((await results.pubsub('NUMSUB', 'keel:ps:chat')) as [string, number])[1]) < 1; i++) await sleep(25);
  });
  after(async () => {
    chat?.terminate();
    results?.disconnect();
    await Promise.all([a?.kill(), b?.kill()]);
    await setup?.stop();
  });

  it('should share jobs and events through the primary the sentinel names', async () => {
    assert.equal(await enqueue(1), 202, a.output());
    assert.deepEqual(await runs(1), [1]);
    assert.equal(await publish('before'), 200);
    for (let i = 0; i < 200 && !got.includes('before'); i++) await sleep(25);
    assert.ok(got.includes('before'), `chat on B got ${JSON.stringify(got)}`);
  });

  it('should follow the promoted replica: jobs accepted and run once again, events cross again', async (t) => {
    const old = await setup.killPrimary();
    const killedAt = performance.now();
    // Enqueue until accepted (each answer bounded); the sentinel needs down-after (1 s) and a vote.
    const answers: number[] = [];
    let slowest = 0;
    let n = 100;
    for (; performance.now() - killedAt < 30_000; n++) {
      const t0 = performance.now();
      const status = await enqueue(n);
      slowest = Math.max(slowest, performance.now() - t0);
      answers.push(status);
      if (status === 202) break;
      assert.equal(status, 503, `enqueue answered ${status}`);
      await sleep(100);
    }
    const backMs = performance.now() - killedAt;
    assert.notEqual(await setup.primaryPort(), old, 'the sentinel promoted the replica');
    assert.ok(slowest < 5000, `slowest enqueue answer ${slowest.toFixed(0)} ms`);
    assert.equal(answers.at(-1), 202, `never accepted again: ${answers.join(',')}`);
    const rows = await runs(2);
    await sleep(500); // a second run would show up here
    assert.deepEqual((await runs(2)).filter((x) => x === n), [n], `job ${n} ran once (runs: ${rows.join(',')})`);
    // Events: B resubscribes on the new primary; a fail-open publish is delivered once it is there.
    let delivered = false;
    for (let i = 0; i < 100 && !delivered; i++) {
      await publish(`after ${i}`);
      for (let j = 0; j < 10 && !got.includes(`after ${i}`); j++) await sleep(20);
      delivered = got.includes(`after ${i}`);
    }
    assert.ok(delivered, `no event crossed after the failover: ${JSON.stringify(got)}`);
    assert.equal(new Set(got).size, got.length, `an event arrived twice: ${JSON.stringify(got)}`);
    t.diagnostic(`enqueues answered 503 for ${(backMs / 1000).toFixed(1)} s after the primary was killed (${answers.length - 1} refused; slowest answer ${slowest.toFixed(0)} ms), then accepted`);
  });
});
