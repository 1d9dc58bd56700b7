/**
 * `/health` prober for bench/floods.ts, in its own process so the latencies it measures are the
 * server's, not the flood clients': forked with the server URL, it requests `/health` one at a time
 * (a new request 5 ms, or argv[3] ms, after each answer) between a 'start' and a 'stop' message, then sends back every
 * latency in milliseconds.
 */
const url = `${process.argv[2]}/health`;
/** Pause after each answer, ms (argv[3]; default 5). bench/replay-cost.ts polls every 100 ms. */
const gap = Number(process.argv[3] ?? 5);
let running = false;
let latencies = [];
let failures = 0;

async function probe() {
  while (running) {
    const t0 = performance.now();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
      await res.arrayBuffer();
      if (res.status !== 200) failures++;
    } catch {
      failures++;
    }
    latencies.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, gap));
  }
}

let loop;
process.on('message', async (m) => {
  if (m === 'start') {
    latencies = [];
    failures = 0;
    running = true;
    loop = probe();
  } else if (m === 'stop') {
    running = false;
    await loop;
    process.send({ latencies, failures });
  } else if (m === 'exit') {
    process.exit(0);
  }
});
// One untimed request first: node's first fetch() loads undici (hundreds of ms on a busy machine), and a
// first probe that measured that would be the prober's own start-up, not the server.
await fetch(url).then((r) => r.arrayBuffer()).catch(() => undefined);
process.send('ready');
