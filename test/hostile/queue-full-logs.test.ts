/**
 * Attack replay (issue 13, item 8): a flood against a route that enqueues background jobs fills the
 * queue; every refused request gets a 503. The refusal is expected and client-visible, so it must not
 * be logged at error level with a stack per request (11,481 lines in a second): one warn line at once,
 * then at most one line per second with a count.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { App } from '../../lib/app/app.js';
import { captureLogs, type LogRecord } from '../helpers/log-capture.js';

/**
 * Every record written until `done(records)` holds (or `maxMs` passed), then until `quietMs` pass without one. One
 * `next()` is awaited at a time, so no record is taken by a waiter that gave up.
 */
async function drainRecords(next: () => Promise<LogRecord>, done: (records: LogRecord[]) => boolean, maxMs: number, quietMs: number): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  const deadline = performance.now() + maxMs;
  let pending = next();
  for (;;) {
    const wait = done(out) || performance.now() >= deadline ? quietMs : Math.min(500, deadline - performance.now());
    const r = await Promise.race([pending, new Promise<undefined>((res) => setTimeout(() => res(undefined), wait))]);
    if (r === undefined) {
      if (done(out) || performance.now() >= deadline) return out;
      continue;
    }
    out.push(r);
    pending = next();
  }
}

describe('when a flood fills the background queue', () => {
  it('should log the 503 refusals at warn, without a stack, aggregated per second', async () => {
    const { logger, next } = captureLogs();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const app = new App({ host: '127.0.0.1', port: 0, background_tasks: { enabled: true, max_queue_size: 1, max_concurrent_tasks: 1 } }, { logger });
    app.post('/work', (data) => {
      data.background!.enqueue(() => held, { name: 'slow' });
      return { queued: true };
    });
    const server = await app.listen({ handleSignals: false });
    try {
      const statuses: number[] = [];
      const started = performance.now();
      for (let round = 0; round < 4; round++) {
        const batch = await Promise.all(Array.from({ length: 50 }, () => fetch(`${server.url}/work`, { method: 'POST' }).then((r) => r.status)));
        statuses.push(...batch);
      }
      const floodSeconds = (performance.now() - started) / 1000;
      const refused = statuses.filter((s) => s === 503).length;
      assert.ok(refused >= 150, `most requests were refused (${refused} of ${statuses.length})`);
      // The aggregated line comes one interval (1 s) after the first refusal, later on a busy machine: read until
      // the lines count every refusal (15 s at most), then 1.5 s more for any line that should not be there.
      const counted = (rs: LogRecord[]) => rs.reduce((n, r) => n + (/jobs refused/.test(String(r.msg)) ? (r.refused as number) : 0), 0);
      const records = (await drainRecords(next, (rs) => counted(rs) >= refused, 15_000, 1500)).filter((r) => r.msg !== 'listening');
      assert.deepEqual(records.filter((r) => (r.level as number) >= 50), [], 'nothing at error level');
      const lines = records.filter((r) => /jobs refused/.test(String(r.msg)));
      // One line at once, then at most one a second while refusals go on: bounded by how long the
      // flood took (a second or less on an idle machine, several on a loaded one), never one per request.
      const most = Math.ceil(floodSeconds) + 2;
      assert.ok(lines.length >= 1 && lines.length <= most && lines.length * 10 <= refused, `${lines.length} refusal lines for ${refused} refusals in ${floodSeconds.toFixed(1)} s`);
      for (const line of lines) {
        assert.equal(line.level, 40, 'warn');
        assert.equal(line.err, undefined, 'no error object, no stack');
      }
      assert.equal(lines.reduce((n, l) => n + (l.refused as number), 0), refused, 'the counts add up to the refusals');
    } finally {
      release();
      await server.close();
    }
  });
});
