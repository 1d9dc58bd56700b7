import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { pino } from 'pino';
import { BackgroundExecutor, BackgroundExecutorClosedError, BackgroundQueueFullError, type BackgroundTaskConfigInput } from './index.js';
import { ConfigError } from '../http/errors.js';
import { toProblem } from '../http/problem.js';
import { captureLogs } from '../../test/helpers/log-capture.js';

const capture = () => captureLogs();

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const executor = (config: BackgroundTaskConfigInput = {}, logger = capture().logger) => new BackgroundExecutor(config, { logger });

describe('BackgroundExecutor: defaults', () => {
  it('should take the spec defaults and start in state created', () => {
    const ex = executor();
    assert.equal(ex.config.max_queue_size, 1024);
    assert.equal(ex.config.max_concurrent_tasks, 128);
    assert.equal(ex.config.drain_timeout_secs, 30);
    assert.deepEqual(ex.stats(), { state: 'created', queued: 0, running: 0, succeeded: 0, failed: 0, rejected: 0, abandoned: 0 });
  });
});

describe('BackgroundExecutor: when started', () => {
  it('should run a job on a later turn, not inside enqueue()', async () => {
    const ex = executor();
    ex.start();
    let ran = false;
    ex.enqueue(() => {
      ran = true;
    });
    assert.equal(ran, false);
    await ex.idle();
    assert.equal(ran, true);
    assert.equal(ex.stats().succeeded, 1);
    await ex.shutdown();
  });

  it('should hold jobs enqueued before start() until start()', async () => {
    const ex = executor();
    const seen: string[] = [];
    ex.enqueue(() => void seen.push('a'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(seen, []);
    assert.equal(ex.stats().queued, 1);
    ex.start();
    await ex.idle();
    assert.deepEqual(seen, ['a']);
    await ex.shutdown();
  });

  it('should run jobs in FIFO order and never more than max_concurrent_tasks at once', async () => {
    const ex = executor({ max_concurrent_tasks: 2 });
    ex.start();
    const gates = Array.from({ length: 5 }, deferred);
    const started: number[] = [];
    let active = 0;
    let peak = 0;
    gates.forEach((g, i) =>
      ex.enqueue(async () => {
        started.push(i);
        peak = Math.max(peak, ++active);
        await g.promise;
        active--;
      }),
    );
    await new Promise((r) => setImmediate(r));
    assert.deepEqual({ running: ex.stats().running, queued: ex.stats().queued }, { running: 2, queued: 3 });
    gates.forEach((g) => g.resolve());
    await ex.idle();
    assert.deepEqual(started, [0, 1, 2, 3, 4]);
    assert.equal(peak, 2);
    await ex.shutdown();
  });

  it('should hand each job an AbortSignal that is not aborted while it runs normally', async () => {
    const ex = executor();
    ex.start();
    let aborted: boolean | undefined;
    ex.enqueue((signal) => {
      aborted = signal.aborted;
    });
    await ex.idle();
    assert.equal(aborted, false);
    await ex.shutdown();
  });
});

describe('BackgroundExecutor: when the queue is full', () => {
  it('should throw a typed 503 error (not drop the job) and count it', async () => {
    const log = capture();
    const ex = executor({ max_queue_size: 2 }, log.logger);
    ex.enqueue(() => {});
    ex.enqueue(() => {});
    assert.throws(
      () => ex.enqueue(() => {}, { name: 'third', request_id: 'req-3' }),
      (e: unknown) =>
        e instanceof BackgroundQueueFullError && e.status === 503 && e.code === 'KEEL_BACKGROUND_QUEUE_FULL' && e.metadata.name === 'third' && e.headers['Retry-After'] === '1',
    );
    assert.equal(ex.stats().rejected, 1);
    assert.equal(ex.stats().queued, 2);
    const warn = await log.next();
    assert.deepEqual([warn.level, warn.task, warn.request_id], [40, 'third', 'req-3']);
    await ex.shutdown();
  });

  it('should render as a 503 problem with the background-queue-full type', () => {
    const ex = executor({ max_queue_size: 1 });
    ex.enqueue(() => {});
    try {
      ex.enqueue(() => {});
      assert.fail('expected a throw');
    } catch (err) {
      const { problem, headers } = toProblem(err);
      assert.equal(problem.status, 503);
      assert.match(problem.type, /background-queue-full$/);
      assert.equal(headers['Retry-After'], '1');
    }
  });
});

describe('BackgroundExecutor: when a job fails', () => {
  for (const [name, task] of [
    ['rejects', async () => Promise.reject(new Error('async boom'))],
    ['throws synchronously', () => {
      throw new Error('sync boom');
    }],
  ] as const) {
    it(`should log a job that ${name} with its name and request id, and keep running others`, async () => {
      const log = capture();
      const ex = executor({}, log.logger);
      ex.start();
      ex.enqueue(task, { name: 'mailer', requestId: 'req-9' });
      let after = false;
      ex.enqueue(() => {
        after = true;
      });
      const rec = await log.next();
      await ex.idle();
      assert.equal(rec.level, 50);
      assert.equal(rec.msg, 'background task failed');
      assert.equal(rec.task, 'mailer');
      assert.equal(rec.request_id, 'req-9');
      assert.match(JSON.stringify(rec.err), /boom/);
      assert.equal(after, true);
      assert.deepEqual([ex.stats().failed, ex.stats().succeeded], [1, 1]);
      await ex.shutdown();
    });
  }
});

describe('BackgroundExecutor: unhandled rejections in a real process', () => {
  const run = (body: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `import { BackgroundExecutor } from './lib/background/index.ts';\nimport { pino } from 'pino';\n${body}`], { encoding: 'utf8' });

  // In a child process: node:test's own unhandledRejection listener would claim the rejection in-process.
  it('should log a stray rejection started inside a job and keep the process alive', () => {
    const r = run(`const ex = new BackgroundExecutor({}, { logger: pino({ level: 'info' }) }); ex.start();
      ex.enqueue(() => { setTimeout(() => void Promise.reject(new Error('stray')), 1); }, { name: 'leaky' });
      setTimeout(async () => { await ex.shutdown(); console.log('alive'); }, 100);`);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.at(-1), 'alive');
    const rec = JSON.parse(lines[0]!);
    assert.equal(rec.msg, 'background task left an unhandled rejection');
    assert.equal(rec.task, 'leaky');
    assert.match(rec.err.message, /stray/);
  });

  it('should still crash on an unhandled rejection outside any job (Node default kept)', () => {
    const r = run(`const ex = new BackgroundExecutor({}, { logger: pino({ level: 'silent' }) }); ex.start();
      Promise.reject(new Error('not a job'));
      setTimeout(() => console.log('alive'), 200);`);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /not a job/);
    assert.doesNotMatch(r.stdout, /alive/);
  });
});

describe('BackgroundExecutor: shutdown', () => {
  it('should drain queued and running jobs and report them completed', async () => {
    const ex = executor({ max_concurrent_tasks: 1 });
    ex.start();
    const done: number[] = [];
    for (const i of [1, 2, 3]) ex.enqueue(async () => void done.push(i));
    const report = await ex.shutdown();
    assert.deepEqual(report, { completed: 3, abandoned: [] });
    assert.deepEqual(done, [1, 2, 3]);
    assert.equal(ex.stats().state, 'stopped');
  });

  it('should refuse new jobs once shutdown has begun', async () => {
    const ex = executor();
    ex.start();
    const closing = ex.shutdown();
    assert.throws(() => ex.enqueue(() => {}), (e: unknown) => e instanceof BackgroundExecutorClosedError && e.status === 503);
    await closing;
    assert.throws(() => ex.enqueue(() => {}), BackgroundExecutorClosedError);
    assert.equal(ex.stats().rejected, 2);
  });

  it('should abandon what is left when drain_timeout_secs is 0, abort running jobs and report them', async () => {
    const log = capture();
    const ex = executor({ max_concurrent_tasks: 1, drain_timeout_secs: 0 }, log.logger);
    ex.start();
    let signal: AbortSignal | undefined;
    const started = deferred();
    ex.enqueue(
      (s) => {
        signal = s;
        started.resolve();
        return new Promise<void>(() => {});
      },
      { name: 'stuck', request_id: 'r1' },
    );
    ex.enqueue(() => {}, { name: 'waiting' });
    await started.promise;
    const report = await ex.shutdown();
    assert.deepEqual(report, {
      completed: 0,
      abandoned: [
        { name: 'stuck', request_id: 'r1' },
        { name: 'waiting', request_id: null },
      ],
    });
    assert.equal(signal?.aborted, true);
    assert.equal(ex.stats().abandoned, 2);
    assert.equal((await log.next()).msg, 'background jobs abandoned at shutdown');
    await ex.idle();
  });

  it('should give up on a job that outlives drain_timeout_secs', async () => {
    const ex = executor({ drain_timeout_secs: 1 });
    ex.start();
    ex.enqueue((signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())), { name: 'slow' });
    const report = await ex.shutdown();
    assert.deepEqual(report.abandoned, [{ name: 'slow', request_id: null }]);
  });

  it('should return the same report from repeated calls', async () => {
    const ex = executor();
    ex.start();
    assert.equal(ex.shutdown(), ex.shutdown());
  });

  it('should abandon the queue of an executor that never started', async () => {
    const ex = executor();
    ex.enqueue(() => {}, { name: 'never' });
    assert.deepEqual(await ex.shutdown(), { completed: 0, abandoned: [{ name: 'never', request_id: null }] });
  });
});

describe('BackgroundExecutor: invalid configuration and input', () => {
  for (const [name, config, key] of [
    ['max_queue_size 0', { max_queue_size: 0 }, /max_queue_size/],
    ['a negative max_queue_size', { max_queue_size: -1 }, /max_queue_size/],
    ['a fractional max_queue_size', { max_queue_size: 1.5 }, /max_queue_size/],
    ['a string max_queue_size', { max_queue_size: '10' }, /max_queue_size/],
    ['max_concurrent_tasks 0', { max_concurrent_tasks: 0 }, /max_concurrent_tasks/],
    ['a negative drain_timeout_secs', { drain_timeout_secs: -1 }, /drain_timeout_secs/],
    ['a string enabled', { enabled: 'yes' }, /enabled/],
    ['an unknown key', { timeout_seconds: 30 }, /Unknown key "timeout_seconds"/],
  ] as const) {
    it(`should throw a ConfigError for ${name}`, () => {
      assert.throws(() => executor(config as unknown as BackgroundTaskConfigInput), (e: unknown) => e instanceof ConfigError && key.test(e.message));
    });
  }

  for (const [name, metadata] of [
    ['an empty name', { name: '' }],
    ['a numeric name', { name: 5 }],
    ['a numeric request id', { request_id: 7 }],
    ['an unknown metadata key', { id: 'x' }],
  ] as const) {
    it(`should refuse metadata with ${name}`, () => {
      const ex = executor();
      assert.throws(() => ex.enqueue(() => {}, metadata as never), ConfigError);
      assert.equal(ex.stats().queued, 0);
    });
  }

  it('should refuse a task that is not a function', () => {
    assert.throws(() => executor().enqueue('job' as never), TypeError);
  });

  for (const bad of [0, -5, 1.5, '1000']) {
    it(`should refuse refusalLogIntervalMs ${JSON.stringify(bad)} naming the option`, () => {
      assert.throws(() => new BackgroundExecutor({}, { refusalLogIntervalMs: bad as never }), (e: unknown) => e instanceof ConfigError && /refusalLogIntervalMs/.test(e.message));
    });
  }
});
