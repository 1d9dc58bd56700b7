/**
 * The example server for bench/floods.ts, in its own process: `node --import tsx bench/floods-server.ts
 * <port> [root]` builds examples/server.ts from `root` (default this checkout) with its rate limit off
 * (the floods come from one loopback address) and measures its own event-loop delay, so a flood's
 * stall is reported by the server itself as well as by the /health probe. IPC: 'reset' starts a new
 * measurement, 'read' answers { p99, max } in ms and the RSS at the reset and its peak since (sampled every 100 ms), MB.
 */
import { pathToFileURL } from 'node:url';
import { answerReadings } from './floods-readings.js';

const port = Number(process.argv[2] ?? 0);
const root = process.argv[3] ?? new URL('..', import.meta.url).pathname;
const { buildExampleApp } = (await import(pathToFileURL(`${root}/examples/server.ts`).href)) as typeof import('../examples/server.js');
// 'shipped': the example's own settings (its HTTP rate limit on), as `npm start` runs it.
const app = buildExampleApp(process.argv[4] === 'shipped' ? { port } : { port, rate_limit: null });
const handle = await app.listen();
answerReadings();
process.send!({ ready: true, port: handle.port });
