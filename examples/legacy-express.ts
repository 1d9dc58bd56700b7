/**
 * A legacy Express 5 application adopting keel piecemeal: nothing of the existing app changes
 * except three `app.use(...)` lines, each a keel middleware factory that also runs inside keel.
 *
 *   npx tsx examples/legacy-express.ts        # PORT (default 3000), HOST (default 127.0.0.1)
 *   curl -i http://127.0.0.1:3000/api/orders -H 'Origin: https://shop.example.com'
 *
 * Bad keel configuration fails here, at start-up (ConfigError), never at request time.
 */
import { pathToFileURL } from 'node:url';
import express, { type ErrorRequestHandler } from 'express';
import { pino, type Logger } from 'pino';
import { requestId } from '../middleware/request-id/index.js';
import { httpTrace } from '../middleware/http-trace/index.js';
import { cors } from '../middleware/cors/index.js';
import type { KeelRequestExtensions } from '../lib/index.js';

export interface LegacyAppOptions {
  /** Where the per-request trace records go (default: pino at info to stdout). */
  logger?: Logger;
}

interface Order {
  id: number;
  item: string;
}

export function buildLegacyApp(options: LegacyAppOptions = {}): express.Express {
  const app = express();
  app.disable('x-powered-by');

  // --- keel, adopted piecemeal -------------------------------------------------------------
  app.use(requestId()); // X-Request-ID: echoed when valid, generated otherwise; req.requestId
  app.use(httpTrace({ logger: options.logger ?? pino() })); // W3C traceparent + one record per request
  app.use(
    cors({
      allowedOrigins: ['https://shop.example.com'],
      allowedMethods: ['GET', 'POST'],
      allowedHeaders: ['Content-Type', 'X-Request-ID'],
      exposeHeaders: ['X-Request-ID'],
      maxAge: 600,
    }),
  );

  // --- the legacy application, untouched ------------------------------------------------------
  const orders: Order[] = [{ id: 1, item: 'keel' }];
  app.use(express.json());
  app.get('/api/orders', (_req, res) => {
    res.json(orders);
  });
  app.post('/api/orders', (req, res) => {
    const { item }: { item?: unknown } = req.body ?? {};
    if (typeof item !== 'string' || item === '') {
      res.status(400).json({ error: 'item is required' });
      return;
    }
    const order = { id: orders.length + 1, item };
    orders.push(order);
    res.status(201).json(order);
  });
  app.get('/api/whoami', (req, res) => {
    // keel's middleware write plain properties on the request, readable from any Express handler.
    const { requestId: id, traceContext }: KeelRequestExtensions = req;
    res.json({ requestId: id, traceId: traceContext?.traceId });
  });
  const onError: ErrorRequestHandler = (_err, _req, res, _next) => {
    res.status(500).json({ error: 'something broke' });
  };
  app.use(onError);
  return app;
}

export const app = buildLegacyApp();

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT ?? 3000);
  const host = process.env.HOST ?? '127.0.0.1';
  const server = app.listen(port, host, () => {
    const addr = server.address();
    const bound = typeof addr === 'object' && addr ? addr.port : port;
    console.log(`legacy app listening on http://${host}:${bound}`);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => server.close(() => process.exit(0)));
}
