import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import helmet from 'helmet';
import { securityHeaders } from './node_modules/.cache/keel-bench/middleware/security-headers/index.js';
const socket = new Socket();
const mws = { keel: securityHeaders({ helmet: {} }), helmet: helmet(), keelApi: securityHeaders() };
const order = process.argv.slice(2);
for (const name of order) {
  const mw = mws[name];
  const run = (n) => { for (let i = 0; i < n; i++) { const req = new IncomingMessage(socket); const res = new ServerResponse(req); mw(req, res, () => {}); } };
  run(50000);
  const t0 = process.cpuUsage(); const N = 200000; run(N); const t = process.cpuUsage(t0);
  console.log(name.padEnd(8), ((t.user + t.system) / N).toFixed(2), 'µs');
}
