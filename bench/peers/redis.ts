/**
 * A redis-server for the `ratelimit-redis` bench scenario: started on a free loopback port by the
 * benchmark server process (test/helpers/redis-server.ts), killed when it exits. Needs redis-server on the PATH.
 */
import { RedisStore } from '../../middleware/rate-limit/index.js';
import { HAVE_REDIS, startRedis } from '../../test/helpers/redis-server.js';

export async function startBenchRedis(): Promise<RedisStore> {
  if (!HAVE_REDIS) throw new Error('ratelimit-redis needs redis-server on the PATH (apt-get install redis-server)');
  const redis = await startRedis();
  // kill() sends SIGKILL synchronously, so it still happens in an 'exit' listener.
  process.once('exit', () => void redis.kill());
  const { client } = redis;
  return new RedisStore({ sendCommand: (command, ...args) => client.call(command!, ...args) as Promise<unknown> });
}
