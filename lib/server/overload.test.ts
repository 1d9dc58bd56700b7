import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LoadMonitor } from './overload.js';

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('when the event loop is blocked', () => {
  it('should count a block that begins right after a window ends in the next window\'s delay', async () => {
    const WINDOW = 1000;
    const monitor = new LoadMonitor({ maxEventLoopDelayMs: 10, maxEventLoopUtilization: 0, sampleIntervalMs: WINDOW });
    monitor.start();
    // Made after the monitor's, with the same period: node runs timers of one period in the order they were made,
    // so this one runs just after each window is measured, before the delay histogram's timer fires again.
    const delays: number[] = [];
    let windows = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        windows++;
        delays.push(monitor.sample.delayMs);
        if (windows === 2) busy(700); // ~30 samples of ~10 ms follow it in this window: mean ≈ (700 + 300) / 31 ms
        if (windows === 4) {
          clearInterval(timer);
          resolve();
        }
      }, WINDOW);
    });
    monitor.stop();
    // delays[2] is the window that held the block (read one window later). Lost, it reads ~0 ms on a quiet machine;
    // kept, ≥ 20 ms whatever the machine's load (load only adds delay).
    assert.ok(delays[2]! >= 15, `window delays ${delays.map((d) => d.toFixed(1)).join(', ')} ms: the 700 ms block is missing`);
  });

  it('should read a window the loop was blocked through as overloaded, and start again from zero', async () => {
    const WINDOW = 200;
    const monitor = new LoadMonitor({ maxEventLoopDelayMs: 100, maxEventLoopUtilization: 0, sampleIntervalMs: WINDOW });
    monitor.start();
    const seen: { delayMs: number; overloaded: boolean; streak: number }[] = [];
    await new Promise<void>((resolve) => {
      let ticks = 0;
      const timer = setInterval(() => {
        ticks++;
        seen.push({ ...monitor.sample, streak: monitor.streak });
        if (ticks === 2) busy(900);
        if (ticks === 4) {
          clearInterval(timer);
          resolve();
        }
      }, WINDOW);
    });
    const worst = seen.reduce((a, b) => (b.delayMs > a.delayMs ? b : a));
    assert.ok(worst.delayMs >= 400 && worst.overloaded && worst.streak >= 1, JSON.stringify(seen));
    monitor.stop();
    assert.deepEqual({ ...monitor.sample, streak: monitor.streak }, { delayMs: 0, utilization: 0, overloaded: false, streak: 0 });
    monitor.start();
    await sleep(WINDOW + 50);
    monitor.stop();
  });
});
