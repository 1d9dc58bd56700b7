/**
 * node's own HTTP/2 server, for bench/floods.ts's `rapid-reset-node` (the comparison issue 44 #3 asks for): in one
 * process, `/health` over HTTP/1.1 on one port (node:http) and a node:http2 server on another that answers every
 * stream as keel's `/health` does (200, a small JSON body), with none of keel's limits. Same event loop, so a flood
 * on the HTTP/2 port shows in the `/health` latencies. IPC as bench/floods-server.ts: 'read' answers the loop delay
 * and RSS; the first message gives both ports.
 */
import http from 'node:http';
import http2 from 'node:http2';
import { answerReadings } from './floods-readings.js';

const body = JSON.stringify({ status: 'ok' });
const health = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
const h2 = http2.createServer();
h2.on('stream', (stream) => {
  stream.on('error', () => {});
  // As keel's handlers: the answer comes a turn later (middleware, an async handler).
  setImmediate(() => {
    if (stream.destroyed || stream.closed) return;
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    stream.end(body);
  });
});
h2.on('session', (s) => s.on('error', () => {}));
await new Promise<void>((r) => health.listen(0, '127.0.0.1', r));
await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
answerReadings();
process.send!({ health: `http://127.0.0.1:${(health.address() as { port: number }).port}`, h2: `http://127.0.0.1:${(h2.address() as { port: number }).port}` });
