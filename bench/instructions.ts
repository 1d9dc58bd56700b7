/**
 * Instructions per request, whatever the machine's load: start one peer's server for one scenario in
 * this process, warm it up over loopback with a minimal keep-alive client, then count the next N
 * requests' instructions (client included, a constant) under valgrind's callgrind, switched on and
 * off around them with callgrind_control.
 *
 *   valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=/tmp/cg.%p \
 *     node --import tsx bench/instructions.ts full keel [warm=20000] [n=2000]
 *   callgrind_annotate /tmp/cg.<pid> | head -30     # the PROGRAM TOTALS line ÷ n
 *
 * Without valgrind it runs too (a quick check that the scenario answers 2xx/4xx as expected).
 */
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { scenarios } from './scenarios.js';
import type { StartPeer } from './peers/types.js';

const [scenarioId = 'full', peer = 'keel', warmArg = '20000', nArg = '2000'] = process.argv.slice(2);
const warm = Number(warmArg);
const n = Number(nArg);
const scenario = scenarios('unused').find((s) => s.id === scenarioId);
if (!scenario) throw new Error(`no scenario ${scenarioId}`);
const { start } = (await import(`./peers/${peer}.js`)) as { start: StartPeer };
const port = await start(scenarioId, { staticDir: '/tmp' });

const { method, path, headers = {}, body } = scenario.request;
const head = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
if (body) head.push(`content-length: ${body.length}`);
const request = Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n'), body ?? Buffer.alloc(0)]);

const socket = net.connect(port, '127.0.0.1');
await new Promise((r) => socket.once('connect', r));
let pending: Buffer = Buffer.alloc(0);
let status = '';
/** Send one request and resolve when its whole (content-length or chunked) answer has arrived. */
function once(): Promise<void> {
  return new Promise((resolve) => {
    const onData = (chunk: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      const end = pending.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headText = pending.subarray(0, end).toString('latin1');
      const m = /content-length: *(\d+)/i.exec(headText);
      let total: number;
      if (m) total = end + 4 + Number(m[1]);
      else {
        const last = pending.indexOf('\r\n0\r\n\r\n', end);
        if (last < 0) return;
        total = last + 7;
      }
      if (pending.length < total) return;
      status = headText.slice(9, 12);
      pending = pending.subarray(total);
      socket.off('data', onData);
      resolve();
    };
    socket.on('data', onData);
    socket.write(request);
  });
}

const callgrind = (what: string[]) => {
  try {
    execFileSync('callgrind_control', [...what, String(process.pid)], { stdio: 'ignore' });
  } catch {
    /* not under valgrind */
  }
};
for (let i = 0; i < warm; i++) await once();
callgrind(['-i', 'on']);
for (let i = 0; i < n; i++) await once();
callgrind(['-i', 'off']);
console.log(`${peer} ${scenarioId}: last status ${status}, ${n} requests counted after ${warm} warm-up`);
socket.destroy();
process.exit(0);
