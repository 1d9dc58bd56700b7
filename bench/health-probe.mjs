/**
 * `/health` prober for bench/floods.ts, in its own process so the latencies it measures are the
 * server's, not the flood clients': forked with the server URL, it requests `/health` one at a time
 * (a new request 5 ms after each answer, or every `intervalMs` when given as the second argument: the
 * issue 35 "polled every 100 ms", a late answer delaying the next request) between a 'start' and a
 * 'stop' message, then sends back every latency in milliseconds.
 */
const url = `${process.argv[2]}/health`;
const intervalMs = Number(process.argv[3] ?? 0);
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
    const took = performance.now() - t0;
    latencies.push(took);
    await new Promise((r) => setTimeout(r, intervalMs > 0 ? Math.max(0, intervalMs - took) : 5));
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
