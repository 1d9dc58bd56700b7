/**
 * Instructions per request, whatever the machine's load: start one peer's server for one scenario in
 * this process, warm it up over loopback with a minimal keep-alive client, then count the next N
 * requests' instructions (client included, a constant) under valgrind's callgrind, switched on and
 * off around them with callgrind_control.
 *
 *   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.%p \
 *     node --import tsx bench/instructions.ts full keel [warm=20000] [n=2000]
 *   callgrind_annotate /tmp/cg.<pid> | head -30     # the PROGRAM TOTALS line ÷ n
 *
 * Without valgrind it runs too (a quick check that the scenario answers 2xx/4xx as expected).
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { scenarios } from './scenarios.js';
import type { PeerContext, StartPeer } from './peers/types.js';

const [scenarioId = 'full', peer = 'keel', warmArg = '20000', nArg = '2000'] = process.argv.slice(2);
const warm = Number(warmArg);
const n = Number(nArg);
const scenario = scenarios('unused').find((s) => s.id === scenarioId);
if (!scenario) throw new Error(`no scenario ${scenarioId}`);
// the express-engine scenarios run one app on each Express engine and Fastify (as bench/server.ts loads them)
const start: StartPeer = scenarioId.startsWith('express-engine')
  ? ((engine) => (s: string, c: PeerContext) => engine.start(peer, s, c))(await import('./peers/express-engine.js'))
  : ((await import(`./peers/${peer}.js`)) as { start: StartPeer }).start;
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

/**
 * Switches callgrind's instrumentation. callgrind only reads a command while the program runs code, so the
 * tool runs in a child while a 1 ms timer keeps this process waking up (a synchronous call blocks in a syscall,
 * callgrind_control times out, and nothing is counted). No pipes to the child: pipe sockets change the stream
 * classes' maps, V8 then deoptimises node's stream code and recompiles it inside the counted window (it was
 * ~95k instructions per request of TurboFan work at N = 4000). A first, uncounted spawn before the warm-up makes
 * whatever a spawn changes happen before the code warms up.
 */
const callgrind = (what: string[]) => new Promise<void>((resolve) => {
  const awake = setInterval(() => {}, 1);
  const done = () => {
    clearInterval(awake);
    resolve();
  };
  // not under valgrind (or no callgrind_control): the error is ignored
  spawn('callgrind_control', [...what, String(process.pid)], { stdio: 'ignore' }).once('error', done).once('exit', done);
});
await callgrind(['-i', 'off']);
for (let i = 0; i < warm; i++) await once();
await callgrind(['-i', 'on']);
for (let i = 0; i < n; i++) await once();
await callgrind(['-i', 'off']);
console.log(`${peer} ${scenarioId}: last status ${status}, ${n} requests counted after ${warm} warm-up`);
socket.destroy();
process.exit(0);
