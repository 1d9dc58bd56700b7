/**
 * A redis-server for the `ratelimit-redis` bench scenario: started on a free loopback port by the
 * benchmark server process, killed when it exits. Needs redis-server on the PATH.
 */
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisStore } from '../../middleware/rate-limit/index.js';

export async function startBenchRedis(): Promise<RedisStore> {
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => probe.once('listening', r));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  server.once('error', (err) => {
    throw new Error(`ratelimit-redis needs redis-server on the PATH: ${err.message}`);
  });
  process.once('exit', () => server.kill('SIGKILL'));
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  for (let i = 0; ; i++) {
    try {
      if (client.status === 'wait' || client.status === 'end') await client.connect();
      await client.ping();
      break;
    } catch (err) {
      if (i > 200) throw err;
      await sleep(50);
    }
  }
  return new RedisStore({ sendCommand: (command, ...args) => client.call(command!, ...args) as Promise<unknown> });
}
