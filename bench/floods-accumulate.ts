/**
 * The floods of issue 44 for bench/floods.ts (`--only grpc-stream,add-book,multipart,pong`), each at the replay's
 * size: what once crashed the example server (a gRPC client stream of 1 MiB names; `addBook` with 900 KB titles)
 * and what once stalled it (~20,000-part multipart bodies at 10/s; 50 sockets × 200,000 PONGs). floods.ts prints the
 * server's RSS before and at its peak beside `/health`'s latencies. Run with `--shipped` for `npm start`'s settings.
 */
import { fileURLToPath } from 'node:url';
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import WebSocket from 'ws';

export type Flood = (ws: string, http: string) => Promise<string>;

const GREETER_PROTO = fileURLToPath(new URL('../examples/grpc/greeter.proto', import.meta.url));

function tally(map: Map<string, number>, key: string | number): void {
  map.set(String(key), (map.get(String(key)) ?? 0) + 1);
}
const show = (map: Map<string, number>) => [...map].map(([k, n]) => `${n}×${k}`).join(' ');

/**
 * POST `body` to `url` every `everyMs` for 15 s from one address, on schedule (not waiting for answers: a polite
 * client's rate, whatever the server does), then wait for every answer; their statuses (or error names) tallied.
 */
async function pacedPosts(url: string, headers: Record<string, string>, body: string | Buffer, everyMs: number): Promise<Map<string, number>> {
  const statuses = new Map<string, number>();
  const inFlight: Promise<void>[] = [];
  const t0 = Date.now();
  for (let i = 0; Date.now() - t0 < 15_000; i++) {
    inFlight.push(fetch(url, { method: 'POST', headers, body })
      .then(async (r) => { await r.arrayBuffer(); tally(statuses, r.status); }, (e: Error) => tally(statuses, e.name)));
    await sleep(Math.max(0, t0 + (i + 1) * everyMs - Date.now()));
  }
  await Promise.all(inFlight);
  return statuses;
}

/** One client streams 1 MiB names to GreetAll for 20 s, a new stream whenever one ends. */
export const grpcStream: Flood = async (_ws, http) => {
  const def = protoLoader.loadSync(GREETER_PROTO, { keepCase: true, defaults: true });
  const Greeter = (grpc.loadPackageDefinition(def) as any).keel.examples.v1.Greeter as grpc.ServiceClientConstructor;
  const client = new Greeter(new URL(http).host, grpc.credentials.createInsecure()) as grpc.Client & Record<string, any>;
  const name = 'n'.repeat(1_048_576 - 16);
  const until = Date.now() + 20_000;
  const codes = new Map<string, number>();
  let sent = 0;
  let detail = '';
  while (Date.now() < until) {
    await new Promise<void>((resolve) => {
      let done = false;
      const call = client.GreetAll((err: grpc.ServiceError | null) => {
        done = true;
        tally(codes, err?.code ?? 0);
        if (err?.details) detail = err.details;
        resolve();
      });
      call.on('error', () => {});
      const write = (): void => {
        while (!done && Date.now() < until) {
          sent++;
          if (!call.write({ name })) return void call.once('drain', write);
        }
        if (!done) call.end();
      };
      write();
    });
  }
  client.close();
  return `${sent} names of 1 MiB in ${[...codes.values()].reduce((a, b) => a + b, 0)} streams; grpc-status ${show(codes)}${detail ? ` ("${detail}")` : ''}`;
};

/** `addBook` with 900 KB titles at 40 requests/s for 15 s, from one address. */
export const addBook: Flood = async (_ws, http) => {
  const body = JSON.stringify({ query: 'mutation ($t: String!) { addBook(input: { title: $t, authorId: "a1" }) { id } }', variables: { t: 't'.repeat(900 * 1024) } });
  const statuses = await pacedPosts(`${http}/graphql`, { 'content-type': 'application/json' }, body, 25);
  const res = await fetch(`${http}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ books { id } }' }) });
  const kept = ((await res.json()) as { data?: { books: unknown[] } }).data?.books.length;
  return `statuses ${show(statuses)}; ${kept} books kept`;
};

/** Multipart bodies of one-byte file parts filling 1 MiB (~16,000 parts) to POST /items at 10 requests/s for 15 s. */
export const multipart: Flood = async (_ws, http) => {
  const part = '--b\r\nContent-Disposition:form-data;name=f;filename=a\r\n\r\nx\r\n';
  const count = Math.floor((1024 * 1024 - 10) / part.length);
  const body = Buffer.from(part.repeat(count) + '--b--\r\n');
  const statuses = await pacedPosts(`${http}/items`, { 'content-type': 'multipart/form-data; boundary=b' }, body, 100);
  return `${count} parts per body; statuses ${show(statuses)}`;
};

/** 50 sockets to /ws/echo, each sending 200,000 unsolicited PONGs as fast as it can. */
export const pong: Flood = async (wsBase) => {
  const sockets = await Promise.all(Array.from({ length: 50 }, () => new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(`${wsBase}/ws/echo`);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  })));
  const codes: (number | undefined)[] = sockets.map(() => undefined);
  sockets.forEach((ws, i) => { ws.on('error', () => {}); ws.on('close', (c) => { codes[i] = c; }); });
  let sent = 0;
  for (let k = 0; k < 200_000; k += 1000) {
    let open = 0;
    for (const ws of sockets) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      open++;
      for (let i = 0; i < 1000; i++, sent++) ws.pong();
    }
    if (!open) break;
    await turn();
    while (sockets.some((ws) => ws.readyState === WebSocket.OPEN && ws.bufferedAmount > 1 << 20)) await sleep(1);
  }
  await sleep(2000);
  for (const ws of sockets) ws.terminate();
  const counts = new Map<string, number>();
  for (const c of codes) tally(counts, c ?? 'open');
  return `${sent} PONGs sent; sockets ${show(counts)}`;
};
