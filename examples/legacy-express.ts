/**
 * A legacy Express application (4 or 5) adopting keel piecemeal: the routes do not change; keel's
 * factories arrive one `app.use(...)` at a time, imported by package name as any project would.
 * The rejecting ones (rateLimit, bodyLimit, jwtAuth) hand their refusals to `next(err)`
 * (`onReject: 'next'`), so the app's own error handlers still see them (express-jwt's
 * `err.name === 'UnauthorizedError'` convention included), and keel's `problemHandler()` answers
 * every error as problem+json at the end (docs/error-handling.md).
 *
 *   npx tsx examples/legacy-express.ts        # PORT (default 3000), HOST (default 127.0.0.1), JWT_SECRET
 *   curl -i http://127.0.0.1:3000/api/orders -H 'Origin: https://shop.example.com'
 *   curl -i -X POST http://127.0.0.1:3000/api/orders -H 'Content-Type: application/json' -d '{"item":"sail"}'   # 401 problem
 *
 * Bad keel configuration fails here, at start-up (ConfigError), never at request time.
 */
import { pathToFileURL } from 'node:url';
import express from 'express';
import { pino, type Logger } from 'pino';
import { requestId } from 'keel/middleware/request-id';
import { httpTrace } from 'keel/middleware/http-trace';
import { cors } from 'keel/middleware/cors';
import { rateLimit } from 'keel/middleware/rate-limit';
import { bodyLimit } from 'keel/middleware/body-limit';
import { jwtAuth } from 'keel/middleware/jwt-auth';
import { problemHandler } from 'keel/middleware/problem-handler';

/** The example's development secret (HS256 needs 32 bytes, RFC 7518 §3.2); set JWT_SECRET in production. */
export const EXAMPLE_JWT_SECRET = 'legacy-example-secret-of-32-bytes!!';

export interface LegacyAppOptions {
  /** Where trace records and 5xx errors go (default: pino at info to stdout). */
  logger?: Logger;
  /** The Express the app is written for (default: the `express` this project installs, 4 or 5). */
  express?: typeof express;
  /** HS256 secret of the tokens that may create orders. Default JWT_SECRET, else {@link EXAMPLE_JWT_SECRET}. */
  jwtSecret?: string;
  /** Largest accepted request body, bytes. Default 16 KiB. */
  maxBodySize?: number;
  /** Requests per client: `burst` at once, refilled at `perSecond`. Default 20 at once, 10 per second. */
  rate?: { perSecond: number; burst: number };
}

interface Order {
  id: number;
  item: string;
  by?: unknown;
}

export function buildLegacyApp(options: LegacyAppOptions = {}): express.Express {
  const createApp = options.express ?? express;
  const logger = options.logger ?? pino();
  const app = createApp();
  app.disable('x-powered-by');

  // --- keel, adopted piecemeal -------------------------------------------------------------
  app.use(requestId()); // X-Request-ID: echoed when valid, generated otherwise; req.requestId
  app.use(httpTrace({ logger })); // W3C traceparent + one record per request
  app.use(
    cors({
      allowedOrigins: ['https://shop.example.com'],
      allowedMethods: ['GET', 'POST'],
      allowedHeaders: ['Content-Type', 'Authorization', 'X-Request-ID'],
      exposeHeaders: ['X-Request-ID'],
      maxAge: 600,
    }),
  );
  // 429 with Retry-After and the RateLimit headers, handed on as an HttpError.
  app.use(rateLimit({ perSecond: options.rate?.perSecond ?? 10, burst: options.rate?.burst ?? 20, onReject: 'next' }));
  // 413 before a byte of an oversized body is read, handed on as an HttpError.
  app.use(bodyLimit({ maxBodySize: options.maxBodySize ?? 16 * 1024, onReject: 'next' }));
  const requireToken = jwtAuth({ secret: options.jwtSecret ?? process.env.JWT_SECRET ?? EXAMPLE_JWT_SECRET, onReject: 'next' });

  // --- the legacy application, untouched ------------------------------------------------------
  const orders: Order[] = [{ id: 1, item: 'keel' }];
  app.use(express.json());
  app.get('/api/orders', (_req, res) => {
    res.json(orders);
  });
  app.post('/api/orders', requireToken, (req, res) => {
    const { item }: { item?: unknown } = req.body ?? {};
    if (typeof item !== 'string' || item === '') {
      res.status(400).json({ error: 'item is required' });
      return;
    }
    // req.auth is typed on Express's Request by keel's declarations: no cast.
    const order = { id: orders.length + 1, item, by: req.auth?.sub };
    orders.push(order);
    res.status(201).json(order);
  });
  app.get('/api/whoami', (req, res) => {
    res.json({ requestId: req.requestId, traceId: req.traceContext?.traceId });
  });

  // The app's express-jwt-era error handler keeps working: keel's JWT errors have the same name and code.
  app.use((err: Error & { code?: string }, req: express.Request, _res: express.Response, next: express.NextFunction) => {
    if (err.name === 'UnauthorizedError') logger.info({ requestId: req.requestId, code: err.code }, 'refused token');
    next(err);
  });
  // Everything else, and what the handler above passes on: problem+json, 5xx logged, nothing leaked.
  app.use(problemHandler({ logger }));
  return app;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const app = buildLegacyApp();
  const port = Number(process.env.PORT ?? 3000);
  const host = process.env.HOST ?? '127.0.0.1';
  const server = app.listen(port, host, () => {
    const addr = server.address();
    const bound = typeof addr === 'object' && addr ? addr.port : port;
    console.log(`legacy app listening on http://${host}:${bound}`);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => server.close(() => process.exit(0)));
}
