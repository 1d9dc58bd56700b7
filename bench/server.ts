/**
 * One benchmark server: `node --import tsx bench/server.ts <peer> <scenario>`, run by bench/run.ts
 * as a child process with an IPC channel. Sends `{ port }` once listening; answers `rss` with the
 * peak resident set size it sampled and `cpu` with its CPU time so far (µs); exits on `stop` (or when the runner goes away).
 */
import { existsSync } from 'node:fs';
import type { PeerContext, StartPeer } from './peers/types.js';

const [peer, scenario] = process.argv.slice(2);
const ctx: PeerContext = { staticDir: process.env.BENCH_STATIC_DIR ?? '' };

async function load(name: string | undefined): Promise<StartPeer> {
  // the express-engine scenarios run one app on express@5, keel/express and (the reference) Fastify
  if (scenario?.startsWith('express-engine')) {
    const { start } = await import('./peers/express-engine.js');
    return (s, c) => start(name ?? '', s, c);
  }
  switch (name) {
    case 'keel':
      return (await import('./peers/keel.js')).start;
    case 'node':
      return (await import('./peers/node.js')).start;
    case 'fastify':
      return (await import('./peers/fastify.js')).start;
    case 'express':
      return (await import('./peers/express.js')).start;
    case 'express-std': {
      const { start } = await import('./peers/express.js');
      return (s, c) => start(s, c, true);
    }
    case 'express-keel':
      return (await import('./peers/express-keel.js')).start;
    default:
      throw new Error(`unknown peer ${String(name)}`);
  }
}

// Peak RSS by sampling, only where the kernel keeps no high-water mark: on Linux the runner reads
// VmHWM from /proc/<pid>/status, and a sampler would only add its own cost to the server's CPU time.
let peakRss = process.memoryUsage.rss();
if (!existsSync('/proc/self/status')) {
  const sampler = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss > peakRss) peakRss = rss;
  }, 100);
  sampler.unref();
}

try {
  const port = await (await load(peer))(scenario ?? '', ctx);
  process.send?.({ type: 'ready', port });
} catch (err) {
  process.send?.({ type: 'error', message: (err as Error).stack ?? String(err) });
  process.exit(1);
}
process.on('message', (msg: { type?: string }) => {
  if (msg.type === 'rss') process.send?.({ type: 'rss', rss: Math.max(peakRss, process.memoryUsage.rss()) });
  if (msg.type === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send?.({ type: 'cpu', micros: user + system });
  }
  if (msg.type === 'stop') process.exit(0);
});
process.on('disconnect', () => process.exit(0));
