/**
 * The Redis connections keel opens itself (RedisPubSub, bullmqBackground): one Redis, given as a URL or
 * ioredis options, or a Redis Cluster, given as seed nodes (issue 37, docs/scaling.md#redis-cluster).
 * Checked once when the component is built; ioredis (an optional peer dependency) is passed in, so this
 * file loads nothing.
 */
import { boundedRetryStrategy, CLUSTER_SLOTS_REFRESH_MS, DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './redis-policy.js';

/**
 * A Redis Cluster: `cluster` lists seed nodes (`'host:port'` or `{ host, port }`; ioredis finds the rest
 * with CLUSTER SLOTS), `clusterOptions` are ioredis `Cluster` options (`redisOptions: { password, tls }`
 * for every node, `dnsLookup`, `natMap`, …).
 */
export interface RedisClusterConnection {
  cluster: ReadonlyArray<string | { host: string; port: number }>;
  clusterOptions?: Record<string, unknown>;
}

/** Redis URL (`redis://127.0.0.1:6379`), ioredis options (`{ host, port, password, tls }`), or a cluster's seed nodes. */
export type RedisConnection = string | Record<string, unknown> | RedisClusterConnection;

export function isClusterConnection(c: unknown): c is RedisClusterConnection {
  return typeof c === 'object' && c !== null && 'cluster' in c;
}

/**
 * `host:port,host:port,…` (REDIS_CLUSTER_NODES) as seed nodes; throws naming the bad entry. IPv6 hosts
 * go in brackets: `[::1]:7000`.
 *
 * @example
 * new RedisPubSub({ connection: { cluster: parseClusterNodes(process.env.REDIS_CLUSTER_NODES!) } });
 */
export function parseClusterNodes(text: string): { host: string; port: number }[] {
  if (typeof text !== 'string' || text.trim() === '') throw new TypeError(`Redis cluster nodes must be "host:port,host:port,…", got ${JSON.stringify(text)}`);
  return text.split(',').map((entry) => parseNode(entry.trim(), text));
}

function parseNode(entry: string, whole: string): { host: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:/[\]]+)):(\d{1,5})$/.exec(entry);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port < 1 || port > 65535) throw new TypeError(`Redis cluster node ${JSON.stringify(entry)} (in ${JSON.stringify(whole)}) is not host:port with a port 1-65535`);
  return { host: (m[1] ?? m[2])!, port };
}

/** Why `c` is not a connection keel can open (undefined when it is): `what` names the option. */
export function connectionProblem(c: unknown): string | undefined {
  if (typeof c === 'string') return /^rediss?:\/\//.test(c) ? undefined : 'a redis:// URL (rediss:// for TLS)';
  if (typeof c !== 'object' || c === null) return 'a redis:// URL, ioredis options or { cluster: [seed nodes] }';
  if (!isClusterConnection(c)) return undefined;
  const nodes = c.cluster as unknown;
  if (!Array.isArray(nodes) || nodes.length === 0) return '{ cluster: a non-empty array of "host:port" or { host, port } }';
  for (const n of nodes) {
    if (typeof n === 'string') {
      try {
        parseNode(n, n);
      } catch (err) {
        return (err as Error).message;
      }
    } else if (!(typeof n === 'object' && n !== null && typeof n.host === 'string' && Number.isInteger(n.port) && n.port > 0 && n.port < 65536)) {
      return 'cluster seed nodes as "host:port" or { host, port }';
    }
  }
  if (c.clusterOptions !== undefined && (typeof c.clusterOptions !== 'object' || c.clusterOptions === null)) return 'clusterOptions: ioredis Cluster options (an object)';
  const extra = Object.keys(c).filter((k) => k !== 'cluster' && k !== 'clusterOptions');
  if (extra.length) return `{ cluster, clusterOptions } only (unknown key ${extra[0]}; node options go in clusterOptions.redisOptions)`;
  return undefined;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- ioredis is optional: its types stay out of keel's declarations */

/**
 * A client of `c` with keel's bounds: `own` (per-command options such as `maxRetriesPerRequest`,
 * `commandTimeout`) override the user's; reconnects are bounded unless the user chose a strategy. For a
 * cluster, `own` applies to every node's connection and `ownCluster` to the Cluster itself.
 */
export function createRedisClient(ioredis: any, c: RedisConnection, own: Record<string, unknown>, ownCluster: Record<string, unknown> = {}): any {
  const Redis = ioredis.Redis ?? ioredis.default;
  if (isClusterConnection(c)) {
    const user = c.clusterOptions ?? {};
    const nodes = c.cluster.map((n) => (typeof n === 'string' ? parseNode(n, n) : n));
    return new ioredis.Cluster(nodes, {
      clusterRetryStrategy: boundedRetryStrategy,
      slotsRefreshInterval: CLUSTER_SLOTS_REFRESH_MS,
      ...user,
      ...ownCluster,
      redisOptions: { ...(user.redisOptions as object | undefined), ...own },
    });
  }
  const extra = { retryStrategy: boundedRetryStrategy, ...(typeof c === 'object' ? c : {}), ...own };
  return typeof c === 'string' ? new Redis(c, extra) : new Redis(extra);
}

/**
 * The slots a store needs answer, or the one server a PING (issue 47). In a cluster, one keyed read
 * (`EXISTS`) per distinct hash slot group of `keys` goes to the primary that serves it now: a hung
 * primary of another shard is not asked, and once the cluster promoted a replica for one of ours, the
 * next probe asks the replica. A failed probe asks ioredis to read the slot map again (else it keeps
 * sending to the hung node until its own refresh, up to 5 s later). No keys (a pub/sub with no channel
 * yet): any primary that answers.
 */
export async function pingSlotsOf(client: any, keys: readonly string[], timeoutMs = DEFAULT_REDIS_COMMAND_TIMEOUT_MS): Promise<void> {
  if (typeof client.nodes !== 'function') {
    await client.ping();
    return;
  }
  try {
    if (keys.length === 0) {
      const primaries = client.nodes('master') as any[];
      if (primaries.length === 0) throw new Error('Redis Cluster: no primary known yet');
      await Promise.any(primaries.map((n) => n.ping())).catch((err: AggregateError) => {
        throw err.errors?.[0] ?? err;
      });
      return;
    }
    // One key per hash tag: keys sharing `{tag}` share a slot (most of keel's do: '{keel:bull}').
    const bySlotGroup = new Map<string, string>();
    for (const key of keys) bySlotGroup.set(/\{([^}]+)\}/.exec(key)?.[1] ?? key, key);
    // Our own bound: a client without commandTimeout would wait on a stopped node for ever, and the
    // slot map would not be read again.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...bySlotGroup.values()].map((key) => client.exists(key))),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Redis Cluster: no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  } catch (err) {
    if (typeof client.refreshSlotsCache === 'function') client.refreshSlotsCache();
    throw err;
  }
}

/**
 * Every hash slot has a primary that answers (a store whose keys spread over all slots: the rate limit's),
 * as the cluster sees it now: CLUSTER SLOTS from any node that answers, then a PING to each primary it
 * names. ioredis's own list (`nodes('master')`) keeps a hung primary after its replica took over, until
 * it reads the slot map again; this does not. One server: a PING.
 *
 * @example
 * new RedisStore({ sendCommand: (c, ...a) => cluster.call(c!, ...a), ping: () => pingEverySlot(cluster) });
 */
export async function pingEverySlot(client: any): Promise<void> {
  if (typeof client.nodes !== 'function') {
    await client.ping();
    return;
  }
  const nodes = client.nodes('all') as any[];
  const ranges = (await Promise.any(nodes.map((n) => n.call('CLUSTER', 'SLOTS')))) as [number, number, [string, number]][];
  const covered = ranges.reduce((n, [from, to]) => n + to - from + 1, 0);
  if (covered < 16384) throw new Error(`Redis Cluster: ${16384 - covered} slots have no primary`);
  const owners = new Set(ranges.map(([, , [host, port]]) => `${host}:${port}`));
  const byAddress = new Map(nodes.map((n) => [`${n.options?.host}:${n.options?.port}`, n]));
  const missing = [...owners].filter((a) => !byAddress.has(a));
  if (missing.length) {
    if (typeof client.refreshSlotsCache === 'function') client.refreshSlotsCache();
    throw new Error(`Redis Cluster: primary ${missing[0]} not connected yet`);
  }
  await Promise.all([...owners].map((a) => byAddress.get(a).ping()));
}

/**
 * PING every primary of a cluster, or the one server. Readiness and store health no longer use it (a hung
 * primary of any shard kept every store down until it came back): see pingSlotsOf.
 */
export async function pingEveryPrimary(client: any): Promise<void> {
  if (typeof client.nodes !== 'function') {
    await client.ping();
    return;
  }
  const primaries = client.nodes('master') as any[];
  if (primaries.length === 0) throw new Error('Redis Cluster: no primary known yet');
  await Promise.all(primaries.map((n) => n.ping()));
}
