/**
 * The example server for bench/floods.ts, in its own process: `node --import tsx bench/floods-server.ts
 * <port> [root]` builds examples/server.ts from `root` (default this checkout) with its rate limit off
 * (the floods come from one loopback address) and measures its own event-loop delay, so a flood's
 * stall is reported by the server itself as well as by the /health probe. IPC: 'reset' starts a new
 * measurement, 'read' answers { p99, max } in ms and the RSS at the reset and its peak since (sampled every 100 ms), MB.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const port = Number(process.argv[2] ?? 0);
const root = process.argv[3] ?? new URL('..', import.meta.url).pathname;
const { buildExampleApp } = (await import(pathToFileURL(`${root}/examples/server.ts`).href)) as typeof import('../examples/server.js');
// 'shipped': the example's own settings (its HTTP rate limit on), as `npm start` runs it.
const app = buildExampleApp(process.argv[4] === 'shipped' ? { port } : { port, rate_limit: null });
const handle = await app.listen();
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
// RSS at 'reset' and its peak since (sampled every 100 ms), MB: the floods' "RSS growth".
const mb = () => process.memoryUsage.rss() / 1_048_576;
let rssAtReset = mb();
let rssPeak = rssAtReset;
setInterval(() => (rssPeak = Math.max(rssPeak, mb())), 100).unref();
process.on('message', (m) => {
  if (m === 'reset') (delay.reset(), (rssAtReset = rssPeak = mb()));
  if (m === 'read') process.send!({ p99: delay.percentile(99) / 1e6, max: delay.max / 1e6, rssStart: rssAtReset, rssAtReset, rssPeak: Math.max(rssPeak, mb()), rss: mb() });
});
process.send!({ ready: true, port: handle.port });
