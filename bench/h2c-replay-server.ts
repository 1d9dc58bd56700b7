/**
 * The server of bench/h2c-replay.ts, in its own process (so its fd limit and fd count are its own):
 * `node --import tsx bench/h2c-replay-server.ts`. A keel App with `/health` and the example Greeter on
 * the shared port; GrpcConfig from the `KEEL_H2C_GRPC` environment variable (JSON, default `{}`).
 * Prints one `ready` JSON line; SIGTERM shuts it down gracefully (shutdown_timeout 30 s).
 */
import { createApp } from '../lib/app/app.js';
import '../lib/grpc/index.js';
import { GREETER_PROTO_PATH, greeterHandlers } from '../examples/grpc/server.js';

const grpc = JSON.parse(process.env.KEEL_H2C_GRPC ?? '{}') as Record<string, unknown>;
const app = createApp({ host: '127.0.0.1', port: 0, grpc, shutdown_timeout: 30, rate_limit: null }, (a) => {
  a.get('/health', () => ({ status: 'ok' }));
  a.grpc(GREETER_PROTO_PATH, 'keel.examples.v1.Greeter', greeterHandlers);
});
const handle = await app.listen();
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, port: handle.port })}\n`);
