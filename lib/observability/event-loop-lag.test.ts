import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { createApp } from '../index.js';
import { sample } from '../../test/helpers/exposition.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Holds the event loop `ms`, as a CPU-bound handler would. */
const block = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};
const LAG_STATS = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'];

/** The metrics path of an App with metrics on (`default_metrics` as given), scraped in process. */
function scraper(defaultMetrics: boolean) {
  const app = createApp({ metrics: { default_metrics: defaultMetrics } });
  app.intoRouter();
  return async () => (await app.inject({ method: 'GET', url: '/metrics' })).body;
}

// The process registry is one per process: this file's tests run in order, the one without defaults first.
describe('when metrics are on without the process defaults', () => {
  it('should serve no event-loop lag metrics', async () => {
    const text = await scraper(false)();
    assert.doesNotMatch(text, /nodejs_eventloop_lag/);
  });
});

describe('when metrics are on with the process defaults', () => {
  it('should serve prom-client\'s event-loop lag names, help texts and types, each once', async () => {
    const scrape = scraper(true);
    // prom-client's own, on a registry of its own: what dashboards and alert rules were written against.
    const prom = createRequire(import.meta.url)('prom-client');
    const theirs = new prom.Registry();
    prom.collectDefaultMetrics({ register: theirs });
    const declared = (text: string) => text.split('\n').filter((l) => /^# (HELP|TYPE) nodejs_eventloop_lag_/.test(l)).sort();
    const ours = declared(await scrape());
    assert.equal(ours.length, 16, ours.join('\n'));
    assert.deepEqual(ours, declared(await theirs.metrics()));
  });

  it('should read an idle loop\'s intervals as about the 10 ms resolution, in seconds', async () => {
    const scrape = scraper(true);
    await scrape();
    await sleep(200);
    const text = await scrape();
    // Lower bounds only (a busy machine makes the loop late, never early); 8 ms: node schedules JavaScript timers
    // from a whole-millisecond clock, so an interval can be a fraction of a millisecond under 10.
    for (const stat of ['min', 'p50', 'p99', 'max']) assert.ok(sample(text, `nodejs_eventloop_lag_${stat}_seconds`)! >= 0.008, `${stat}: ${text}`);
    assert.ok(sample(text, 'nodejs_eventloop_lag_seconds')! > 0, 'the setImmediate queued at the last scrape');
  });

  it('should show a 300 ms block that began right after the last scrape in the next one', async () => {
    const scrape = scraper(true);
    await scrape();
    await sleep(100);
    await scrape();
    // In the same turn as the scrape's collect (within one 10 ms resolution of it): prom-client's histogram,
    // reset there, took the first firing after it for its reference point and lost the whole block.
    block(300);
    await sleep(50);
    const text = await scrape();
    for (const stat of ['max', 'p99']) {
      const value = sample(text, `nodejs_eventloop_lag_${stat}_seconds`);
      assert.ok(value! >= 0.25, `nodejs_eventloop_lag_${stat}_seconds ${value}: the block is missing\n${LAG_STATS.map((s) => `${s} ${sample(text, `nodejs_eventloop_lag_${s}_seconds`)}`).join(', ')}`);
    }
  });
});
