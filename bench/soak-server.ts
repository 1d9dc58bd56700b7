/**
 * The example server (examples/server.ts) for `npm run soak`, in its own process:
 * `node --import tsx bench/soak-server.ts <port>`. Its rate limit is off: the soak's load comes from one
 * loopback address and would otherwise be refused with 429 after the first 100 requests.
 * Prints one `ready` JSON line; SIGTERM shuts it down gracefully.
 */
import { buildExampleApp } from '../examples/server.js';

const port = Number(process.argv[2] ?? 0);
const app = buildExampleApp({ port, rate_limit: null });
const handle = await app.listen();
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, port: handle.port })}\n`);
