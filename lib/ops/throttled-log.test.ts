import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { ThrottledLog } from './throttled-log.js';

/** A ThrottledLog over 1000 ms intervals writing into `lines`; the clock is node's mock, moved by the test. */
function recorder(perKey = false) {
  const lines: string[] = [];
  const log = new ThrottledLog<string, string>({
    intervalMs: 1000,
    perKey,
    first: (key, context) => void lines.push(`first ${key} (${context})`),
    interval: (counts, ms) => void lines.push(`${ms} ms: ${[...counts].map(([key, { count, context }]) => `${key}×${count} (${context})`).join(', ')}`),
  });
  return { lines, log };
}

beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
afterEach(() => mock.timers.reset());

describe('when events come in a storm', () => {
  it('should write the first at once, then one line per interval with the counts since the last', () => {
    const { lines, log } = recorder();
    for (let i = 0; i < 500; i++) log.note('EPIPE', `client ${i}`);
    for (let i = 0; i < 7; i++) log.note('ECONNRESET', `client ${i}`);
    assert.deepEqual(lines, ['first EPIPE (client 0)']);
    mock.timers.tick(999);
    assert.equal(lines.length, 1);
    mock.timers.tick(1);
    assert.deepEqual(lines.slice(1), ['1000 ms: EPIPE×499 (client 499), ECONNRESET×7 (client 6)']);
    log.note('EPIPE', 'late');
    mock.timers.tick(1000);
    assert.deepEqual(lines.slice(2), ['1000 ms: EPIPE×1 (late)']);
  });

  it('should fall silent after a quiet interval, and write the next event at once', () => {
    const { lines, log } = recorder();
    log.note('EPIPE', 'a');
    mock.timers.tick(5000);
    assert.deepEqual(lines, ['first EPIPE (a)']);
    log.note('ECONNRESET', 'b');
    assert.deepEqual(lines, ['first EPIPE (a)', 'first ECONNRESET (b)']);
  });
});

describe('when one interval covers every key (the default)', () => {
  it('should count a new key during the interval instead of writing it at once', () => {
    const { lines, log } = recorder();
    log.note('queue_full', 'job 1');
    log.note('shut_down', 'job 2');
    assert.deepEqual(lines, ['first queue_full (job 1)']);
    mock.timers.tick(1000);
    assert.deepEqual(lines.slice(1), ['1000 ms: shut_down×1 (job 2)']);
  });
});

describe('when each key has its own first line (perKey)', () => {
  it('should write each key\'s first at once, and end a key after a quiet interval', () => {
    const { lines, log } = recorder(true);
    log.note('refused', 'a');
    log.note('refused', 'b');
    log.note('dropped', 'c');
    assert.deepEqual(lines, ['first refused (a)', 'first dropped (c)']);
    mock.timers.tick(1000);
    assert.deepEqual(lines.slice(2), ['1000 ms: refused×1 (b)']);
    log.note('dropped', 'd'); // 'dropped' was quiet for the interval just ended: a first line again
    log.note('refused', 'e'); // 'refused' wrote a count in it: still counted
    assert.deepEqual(lines.slice(3), ['first dropped (d)']);
    mock.timers.tick(1000);
    assert.deepEqual(lines.slice(4), ['1000 ms: refused×1 (e)']);
  });
});

describe('when the logger throws', () => {
  it('should drop the line and keep counting', () => {
    let calls = 0;
    const log = new ThrottledLog<string>({
      intervalMs: 1000,
      first: () => { calls++; throw new Error('logger down'); },
      interval: () => { calls++; throw new Error('logger down'); },
    });
    assert.doesNotThrow(() => log.note('EPIPE', undefined));
    log.note('EPIPE', undefined);
    assert.doesNotThrow(() => mock.timers.tick(1000));
    assert.equal(calls, 2);
  });
});

describe('when it is closed', () => {
  it('should write no interval line', () => {
    const { lines, log } = recorder();
    log.note('EPIPE', 'a');
    log.note('EPIPE', 'b');
    log.close();
    mock.timers.tick(5000);
    assert.deepEqual(lines, ['first EPIPE (a)']);
  });
});
