// keel:integration
/**
 * Issue 44: streams and stores that once grew without bound, replayed against the example server (`npm start`)
 * in a child process whose RSS is read from /proc (Linux; skipped elsewhere). What is asserted is the outcome:
 * the server alive, its memory bounded, the refusal clear. Latencies are bench/floods.ts's (`--only accumulate`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { clientFor, connect, GREETER_PROTO } from '../../lib/grpc/testkit.js';
import { spawnFixture, type Fixture } from '../helpers/spawn-fixture.js';

const linux = existsSync('/proc/self/status');
/** Seconds the gRPC client streams run (the replay: 20; `npm run floods -- --only grpc-stream` runs that). */
const STREAM_SECONDS = Number(process.env.KEEL_HOSTILE_STREAM_SECONDS ?? 6);
/** A name just under the example's max_message_size (1 MiB) with its protobuf framing. */
const NAME = 'n'.repeat(1_048_576 - 16);

let fixture: Fixture | undefined;
let base: string;

/** The server's resident memory, MB. */
function rssMb(): number {
  const status = readFileSync(`/proc/${fixture!.child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

before(async () => {
  if (!linux) return;
  fixture = await spawnFixture(fileURLToPath(new URL('../../examples/server.ts', import.meta.url)), {
    env: { PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'test', KEEL_LOG_LEVEL: 'silent' },
    ready: /keel example server on (http:\/\/\S+)/,
  });
  base = fixture.ready[1]!;
});
after(() => fixture?.kill());

async function healthy(): Promise<boolean> {
  const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(10_000) });
  await res.arrayBuffer();
  return res.status === 200;
}

/** One GreetAll client stream writing 1 MiB names (paced by grpc-js's backpressure) until it ends or `until` passes. */
function greetAll(client: grpc.Client & Record<string, any>, until: number): Promise<{ code: number; details: string; sent: number }> {
  return new Promise((resolve) => {
    let sent = 0;
    const call = client.GreetAll((err: grpc.ServiceError | null) => resolve({ code: err?.code ?? 0, details: err?.details ?? '', sent }));
    call.on('error', () => {});
    let done = false;
    call.on('status', () => (done = true));
    const write = (): void => {
      while (!done && Date.now() < until) {
        sent++;
        if (!call.write({ name: NAME })) {
          call.once('drain', write);
          return;
        }
      }
      if (!done) call.end();
    };
    write();
  });
}

describe('when one client streams 1 MiB names to the example GreetAll (issue 44 crash 1)', { skip: !linux && 'needs /proc' }, () => {
  it('should end each stream with RESOURCE_EXHAUSTED at max_stream_request_bytes and keep RSS growth under 300 MB', async () => {
    const client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), new URL(base).host);
    const start = rssMb();
    let peak = start;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb())), 100);
    const until = Date.now() + STREAM_SECONDS * 1000;
    const results: Awaited<ReturnType<typeof greetAll>>[] = [];
    try {
      // One stream after another for the whole time, as the replay's client reconnecting after each refusal.
      while (Date.now() < until) results.push(await greetAll(client, until));
    } finally {
      clearInterval(sampler);
      client.close();
    }
    const sent = results.reduce((n, r) => n + r.sent, 0);
    const ended = results.filter((r) => r.code === grpc.status.RESOURCE_EXHAUSTED);
    assert.ok(ended.length >= 1, `no stream was ended: ${JSON.stringify(results.map(({ code, sent: s }) => ({ code, sent: s })))}`);
    for (const r of ended) assert.match(r.details, /max_stream_request_bytes/);
    // Without the caps the example kept every name: ~230 MB a second until the 4.2 GB heap crash.
    assert.ok(peak - start < 300, `RSS ${start.toFixed(0)} → peak ${peak.toFixed(0)} MB after ${sent} names in ${results.length} streams`);
    assert.ok(await healthy(), 'the server answers /health');
  });
});

describe('when one client adds books with 900 KB titles at 40 a second (issue 44 crash 2)', { skip: !linux && 'needs /proc' }, () => {
  it('should keep the library bounded (the oldest dropped), RSS growth under 200 MB and the server alive', async () => {
    const title = 't'.repeat(900 * 1024);
    const body = JSON.stringify({ query: 'mutation ($t: String!) { addBook(input: { title: $t, authorId: "a1" }) { id } }', variables: { t: title } });
    const start = rssMb();
    let peak = start;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb())), 100);
    const statuses = new Map<number | string, number>();
    const inFlight: Promise<void>[] = [];
    const t0 = Date.now();
    try {
      for (let i = 0; Date.now() - t0 < STREAM_SECONDS * 1000; i++) {
        inFlight.push(fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(30_000) })
          .then(async (res) => { await res.arrayBuffer(); statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1); })
          .catch((err: Error) => { statuses.set(err.name, (statuses.get(err.name) ?? 0) + 1); }));
        // 40 a second, on schedule (not after each answer), as the replay's client.
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, t0 + (i + 1) * 25 - Date.now())));
      }
      await Promise.all(inFlight);
    } finally {
      clearInterval(sampler);
    }
    const added = statuses.get(200) ?? 0;
    assert.ok(added >= 20, `statuses ${JSON.stringify([...statuses])}`);
    const res = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ books { id } }' }) });
    const books = ((await res.json()) as { data: { books: unknown[] } }).data.books;
    // DEFAULT_BUILTIN_MAX_LIBRARY_BYTES (4 MiB) holds four such titles; before, every one was kept.
    assert.ok(books.length <= 4 + 3, `${books.length} books kept after ${added} added`);
    assert.ok(peak - start < 200, `RSS ${start.toFixed(0)} → peak ${peak.toFixed(0)} MB after ${added} books added`);
    assert.ok(await healthy(), 'the server answers /health');
  });
});
