/**
 * A throwaway Sentinel setup on loopback (issue 37): a primary, one replica and one redis-sentinel
 * (quorum 1, down-after 1000 ms) watching them as `mymaster`, each on a free port, with a temporary
 * directory for sentinel's rewritten config; stop() kills them all. Skips visibly without redis-sentinel.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from '../../harness/conformance/exec.js';

export const NO_REDIS_SENTINEL: string | false =
  spawnSync('redis-server', ['--version']).status === 0 && spawnSync('redis-sentinel', ['--version']).status === 0 ? false : 'redis-server or redis-sentinel is not installed (apt-get install redis-server redis-sentinel)';

export const SENTINEL_MASTER_NAME = 'mymaster';

export interface RedisSentinelSetup {
  /** `127.0.0.1:port` of the sentinel (REDIS_SENTINELS). */
  readonly sentinels: string;
  readonly name: string;
  /** The port of the current primary, as the sentinel says. */
  primaryPort(): Promise<number>;
  /** SIGKILL the current primary. */
  killPrimary(): Promise<number>;
  stop(): Promise<void>;
}

export async function startRedisSentinel(): Promise<RedisSentinelSetup> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-redis-sentinel-'));
  const procs = new Map<number, ChildProcess>();
  const clients: Redis[] = [];
  const up = async (port: number) => {
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    client.on('error', () => {});
    clients.push(client);
    for (let i = 0; ; i++) {
      try {
        if (client.status === 'wait' || client.status === 'end') await client.connect();
        await client.ping();
        return client;
      } catch (err) {
        if (i > 200) throw err;
        await sleep(50);
      }
    }
  };
  const stop = async () => {
    for (const c of clients) c.disconnect();
    await Promise.all([...procs.values()].map(async (p) => {
      if (p.exitCode !== null || p.signalCode !== null) return;
      p.kill('SIGKILL');
      await once(p, 'exit');
    }));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [primary, replica, sentinel] = [await freePort(), await freePort(), await freePort()];
    const server = (port: number, ...extra: string[]) => procs.set(port, spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--dbfilename', `dump-${port}.rdb`, ...extra], { stdio: 'ignore' }));
    server(primary);
    await up(primary);
    server(replica, '--replicaof', '127.0.0.1', String(primary));
    const r = await up(replica);
    for (let i = 0; !/master_link_status:up/.test(await r.info('replication')); i++) {
      if (i > 200) throw new Error('the replica did not sync');
      await sleep(50);
    }
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(conf, [
      `port ${sentinel}`, 'bind 127.0.0.1', `dir ${dir}`,
      `sentinel monitor ${SENTINEL_MASTER_NAME} 127.0.0.1 ${primary} 1`,
      `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} 1000`,
      `sentinel failover-timeout ${SENTINEL_MASTER_NAME} 5000`,
      '',
    ].join('\n'));
    procs.set(sentinel, spawn('redis-sentinel', [conf], { stdio: 'ignore' }));
    const s = await up(sentinel);
    // The sentinel knows the replica once it has read the primary's INFO.
    const replicas = async () => {
      const fields = (await s.call('SENTINEL', 'MASTER', SENTINEL_MASTER_NAME)) as string[];
      return Number(fields[fields.indexOf('num-slaves') + 1]);
    };
    for (let i = 0; (await replicas()) < 1; i++) {
      if (i > 400) throw new Error('the sentinel did not find the replica');
      await sleep(50);
    }
    const setup: RedisSentinelSetup = {
      sentinels: `127.0.0.1:${sentinel}`,
      name: SENTINEL_MASTER_NAME,
      async primaryPort() {
        const [, port] = (await s.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_MASTER_NAME)) as [string, string];
        return Number(port);
      },
      async killPrimary() {
        const port = await setup.primaryPort();
        const p = procs.get(port)!;
        p.kill('SIGKILL');
        await once(p, 'exit');
        return port;
      },
      stop,
    };
    return setup;
  } catch (err) {
    await stop();
    throw err;
  }
}
