/**
 * A throwaway Redis Cluster on loopback (issue 37): `primaries` redis-servers in cluster mode (and
 * `replicas` per primary), each on a free port with its own bus port and temporary directory, joined
 * by `redis-cli --cluster create`. stop() kills every node and removes the directories. Tests skip
 * visibly without redis-server / redis-cli: `{ skip: NO_REDIS_CLUSTER }`.
 */
import { spawn, spawnSync, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis } from 'ioredis';
import { freePort } from '../../harness/conformance/exec.js';

const run = promisify(execFile);

const HAVE_REDIS = spawnSync('redis-server', ['--version']).status === 0;
export const HAVE_REDIS_CLI = spawnSync('redis-cli', ['--version']).status === 0;
/** The `skip` option of a suite that needs a cluster. */
export const NO_REDIS_CLUSTER: string | false = HAVE_REDIS && HAVE_REDIS_CLI ? false : 'redis-server or redis-cli is not installed (apt-get install redis-server redis-tools)';

export interface ClusterNode {
  readonly port: number;
  /** `127.0.0.1:port` */
  readonly address: string;
  /** A plain (non-cluster) client of this node alone, for assertions. */
  readonly client: Redis;
  /** SIGKILL the node (a crash). */
  kill(): Promise<void>;
  /** SIGSTOP the node (a hang: its sockets stay open, nothing answers); resume() sends SIGCONT. */
  pause(): void;
  resume(): void;
  readonly alive: boolean;
}

export interface RedisCluster {
  readonly nodes: readonly ClusterNode[];
  /** `127.0.0.1:p1,127.0.0.1:p2,…` (the primaries), as REDIS_CLUSTER_NODES takes it. */
  readonly seeds: string;
  /** A cluster client for assertions (disconnected by stop()). */
  readonly client: Cluster;
  /** The node serving `slot` as primary now (CLUSTER SLOTS asked of a live node). */
  primaryOf(slot: number): Promise<ClusterNode>;
  /** Resolves once every live node reports cluster_state:ok and agrees on the primaries; bounded by `ms`. */
  healthy(ms?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface StartRedisClusterOptions {
  /** Primaries (≥ 3, as redis-cli --cluster create requires). Default 3. */
  primaries?: number;
  /** Replicas per primary, each in sync with its primary when startRedisCluster resolves. Default 0. */
  replicas?: number;
  /** cluster-node-timeout, ms: how long a primary may be unreachable before its replica takes over. Default 1000. */
  nodeTimeoutMs?: number;
}

export async function startRedisCluster(options: StartRedisClusterOptions = {}): Promise<RedisCluster> {
  const primaries = options.primaries ?? 3;
  const replicas = options.replicas ?? 0;
  const dir = mkdtempSync(join(tmpdir(), 'keel-redis-cluster-'));
  const procs: ChildProcess[] = [];
  const nodes: ClusterNode[] = [];
  const stopAll = async () => {
    for (const n of nodes) n.client.disconnect();
    await Promise.all(nodes.map((n) => n.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < primaries * (1 + replicas); i++) {
      const port = await freePort();
      let bus = await freePort();
      while (bus === port) bus = await freePort();
      const proc = spawn('redis-server', [
        '--port', String(port), '--cluster-port', String(bus), '--bind', '127.0.0.1',
        '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 1000),
        // A replica may take over however long its link to the primary was down: on a busy machine a 1 s node timeout
        // times the default validity factor (10) is easily passed, and the replica would never be promoted.
        '--cluster-replica-validity-factor', '0',
        // A replica's first full sync starts at once, not after the default 5 s wait for more replicas.
        '--repl-diskless-sync-delay', '0',
        '--dir', dir, '--dbfilename', `dump-${port}.rdb`, '--save', '', '--appendonly', 'no',
      ], { stdio: 'ignore' });
      procs.push(proc);
      const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 100 });
      client.on('error', () => {});
      nodes.push({
        port, address: `127.0.0.1:${port}`, client,
        get alive() {
          return proc.exitCode === null && proc.signalCode === null;
        },
        pause() {
          proc.kill('SIGSTOP');
        },
        resume() {
          proc.kill('SIGCONT');
        },
        async kill() {
          if (proc.exitCode !== null || proc.signalCode !== null) return;
          proc.kill('SIGCONT'); // a stopped process acts on SIGKILL only once continued on some systems
          proc.kill('SIGKILL');
          await once(proc, 'exit');
        },
      });
    }
    // redis-server takes a while to listen on a loaded machine.
    for (const n of nodes) {
      for (let i = 0; ; i++) {
        try {
          if (n.client.status === 'wait' || n.client.status === 'end') await n.client.connect();
          await n.client.ping();
          break;
        } catch (err) {
          if (i > 200) throw err;
          await sleep(50);
        }
      }
    }
    await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => n.address), '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: 60_000 });
  } catch (err) {
    await stopAll();
    throw err;
  }
  const client = new Cluster(nodes.slice(0, primaries).map((n) => ({ host: '127.0.0.1', port: n.port })), { redisOptions: { maxRetriesPerRequest: 1 } });
  client.on('error', () => {});
  const cluster: RedisCluster = {
    nodes,
    seeds: nodes.slice(0, primaries).map((n) => n.address).join(','),
    client,
    async primaryOf(slot) {
      const live = nodes.find((n) => n.alive)!;
      const ranges = (await live.client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      const range = ranges.find(([from, to]) => slot >= from && slot <= to);
      if (!range) throw new Error(`slot ${slot} is not served`);
      return nodes.find((n) => n.port === Number(range[2][1]))!;
    },
    async healthy(ms = 30_000) {
      const until = Date.now() + ms;
      for (;;) {
        const states = await Promise.all(nodes.filter((n) => n.alive).map(async (n) => {
          try {
            const info = String(await n.client.call('CLUSTER', 'INFO'));
            return /cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info) ? '' : `${n.port}: ${/cluster_state:\w+/.exec(info)?.[0]} ${/cluster_slots_ok:\d+/.exec(info)?.[0]}`;
          } catch (err) {
            return `${n.port}: ${(err as Error).message}`;
          }
        }));
        if (states.every((s) => s === '')) return;
        if (Date.now() > until) {
          const view = await nodes.find((n) => n.alive)?.client.call('CLUSTER', 'NODES').catch((err: Error) => err.message);
          throw new Error(`cluster not healthy within ${ms} ms: ${states.filter(Boolean).join('; ')}\n${String(view)}`);
        }
        await sleep(100);
      }
    },
    async stop() {
      client.disconnect();
      await stopAll();
    },
  };
  try {
    await cluster.healthy();
    // A replica copies its primary some seconds after the cluster is up (its handshake, then a full sync): until
    // then a failover promotes an empty node (cluster-replica-validity-factor 0), losing every job its primary held.
    // The cluster-failover test killed primaries whose replica was still in 'handshake' (ROLE). Wait for every link.
    for (const until = Date.now() + 120_000; ;) {
      const links = await Promise.all(nodes.map(async (n) => String(await n.client.info('replication').catch(() => ''))));
      if (links.every((info) => !info.includes('role:slave') || info.includes('master_link_status:up'))) break;
      if (Date.now() > until) throw new Error(`replicas not in sync within 120 s: ${links.filter((i) => i.includes('role:slave') && !i.includes('master_link_status:up')).length} not linked`);
      await sleep(100);
    }
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
