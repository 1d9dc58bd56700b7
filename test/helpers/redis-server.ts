/**
 * A throwaway redis-server on a free loopback port, for tests that need a real Redis (.ci/run
 * installs it). Tests skip visibly when it is not installed: `{ skip: NO_REDIS }`.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { after, before } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from '../../harness/conformance/exec.js';

export { freePort };
// A Redis Cluster on loopback (issue 37) lives beside this file, to keep each helper short.
export { NO_REDIS_CLUSTER, startRedisCluster, type ClusterNode, type RedisCluster, type StartRedisClusterOptions } from './redis-cluster.js';

export const HAVE_REDIS = spawnSync('redis-server', ['--version']).status === 0;
/** The `skip` option of a suite that needs redis-server. */
export const NO_REDIS: string | false = HAVE_REDIS ? false : 'redis-server is not installed (apt-get install redis-server)';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** A client for assertions (disconnected by stop()). */
  readonly client: Redis;
  /** Kill redis-server (an outage); start() brings it back on the same port, empty. */
  kill(): Promise<void>;
  /** SIGSTOP redis-server: a hung Redis (sockets stay open, nothing answers); resume() sends SIGCONT. */
  pause(): void;
  resume(): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartRedisOptions {
  /**
   * Keep data across kill() / start(): AOF with `appendfsync always` in a temporary directory (removed
   * by stop()), as docs/scaling.md asks of a Redis that holds jobs. Default false (nothing survives).
   */
  persist?: boolean;
}

export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = options.persist ? mkdtempSync(join(tmpdir(), 'keel-redis-')) : undefined;
  const persistence = dir ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir] : ['--appendonly', 'no'];
  let proc: ChildProcess | undefined;
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {}); // connection attempts while redis-server starts or is down on purpose
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    client,
    async start() {
      proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence], { stdio: 'ignore' });
      // redis-server takes a while to listen on a loaded machine.
      for (let i = 0; ; i++) {
        try {
          if (client.status === 'wait' || client.status === 'end') await client.connect();
          await client.ping();
          return;
        } catch (err) {
          if (i > 200) throw err;
          await sleep(50);
        }
      }
    },
    async kill() {
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await once(proc, 'exit');
    },
    pause() {
      proc?.kill('SIGSTOP');
    },
    resume() {
      proc?.kill('SIGCONT');
    },
    async stop() {
      client.disconnect();
      proc?.kill('SIGCONT'); // a stopped process would not act on SIGKILL's exit until continued on some systems
      await server.kill();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

/** How long the teardown of useRedis() may take, ms: 60000 (a hang fails the file instead of holding the run). */
export const USE_REDIS_TEARDOWN_MS = 60_000;

/** A redis-server for the enclosing suite (useRedis): the server's members, and closers for what the tests opened. */
export interface UsedRedis extends Omit<RedisServer, 'start' | 'stop'> {
  /** Close these after the suite's tests (the last registered first), before redis-server stops; failures are ignored. */
  closeAtEnd(...closers: (() => Promise<unknown>)[]): void;
}

/**
 * Starts a redis-server before the enclosing describe()'s tests and, after them, resumes it (a test may leave it
 * paused), runs the closers registered with `closeAtEnd` (last first), then stops it. Call it in the describe body.
 */
export function useRedis(options: StartRedisOptions = {}): UsedRedis {
  let server: RedisServer | undefined;
  const closers: (() => Promise<unknown>)[] = [];
  const started = (): RedisServer => server ?? assert.fail('useRedis(): redis-server is not started yet (use it inside a test or hook)');
  before(async () => {
    server = await startRedis(options);
  });
  after(async () => {
    server?.resume();
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await server?.stop();
  }, { timeout: USE_REDIS_TEARDOWN_MS });
  return {
    get port() { return started().port; },
    get url() { return started().url; },
    get client() { return started().client; },
    kill: () => started().kill(),
    pause: () => started().pause(),
    resume: () => started().resume(),
    closeAtEnd: (...more) => void closers.push(...more),
  };
}
