/**
 * What a floods server process (floods-server.ts: keel; floods-node-h2.ts: node's own HTTP/2 server) answers its
 * parent: on 'reset', start counting again; on 'read', the event loop's delay p99 and max (ms) since, and RSS (MB) at
 * the reset, its peak since (sampled every 100 ms) and now: the floods' "RSS growth".
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

export function answerReadings(): void {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const mb = () => process.memoryUsage.rss() / 1_048_576;
  let rssAtReset = mb();
  let rssPeak = rssAtReset;
  setInterval(() => (rssPeak = Math.max(rssPeak, mb())), 100).unref();
  process.on('message', (m) => {
    if (m === 'reset') (delay.reset(), (rssAtReset = rssPeak = mb()));
    if (m === 'read') process.send!({ p99: delay.percentile(99) / 1e6, max: delay.max / 1e6, rssStart: rssAtReset, rssAtReset, rssPeak: Math.max(rssPeak, mb()), rss: mb() });
  });
}
