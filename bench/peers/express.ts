/**
 * Express 5 as its users assemble it: express.json/urlencoded, Ajv by hand for schemas, multer,
 * express-jwt, compression, express.static; `express-std` adds the standard stack a user would put
 * in front of everything (request id, helmet, express-rate-limit, compression, body limit, timeout).
 */
import { randomUUID } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import compression from 'compression';
import helmet from 'helmet';
import multer from 'multer';
import { rateLimit } from 'express-rate-limit';
import { expressjwt } from 'express-jwt';
import { createHandler } from 'graphql-http/lib/use/express';
import cors from 'cors';
import { BENCH_JWT_SECRET, HUGE_RATE, KIT_ORIGIN, reportDocument, SMALL_BODY_LIMIT } from '../scenarios.js';
import { graphqlRoot, graphqlSchema, rpcServer, validateOrder, validateSearch, validationProblem } from './shared.js';
import type { PeerContext } from './types.js';

function routes(app: Express, scenario: string, ctx: PeerContext): void {
  switch (scenario) {
    case 'hello':
    case 'full':
    case 'express-kit':
      app.get('/hello', (_req, res) => void res.json({ hello: 'world' }));
      return;
    case 'method-not-allowed':
      // Express answers 404 for a method a path does not serve; the usual 405 is route('/x').get(…).all(405).
      app.route('/hello')
        .get((_req, res) => void res.json({ hello: 'world' }))
        .all((req, res) => void res.status(405).set('Allow', 'GET, HEAD').type('application/problem+json')
          .send(JSON.stringify({ type: 'about:blank', title: 'Method Not Allowed', status: 405, detail: `${req.method} is not allowed for ${req.path}` })));
      return;
    case 'too-large':
      // body-parser's 413 (it reads the rest of the body, then calls next(err)), answered as a problem.
      app.post('/orders', express.json({ limit: SMALL_BODY_LIMIT }), (req, res) => void res.json({ ok: true, items: (req.body as { items: unknown[] }).items.length }));
      app.use(((err, _req, res, _next) => {
        const status = (err as { status?: number }).status ?? 500;
        res.status(status).type('application/problem+json').send(JSON.stringify({ type: 'about:blank', title: 'Payload Too Large', status, detail: (err as Error).message }));
      }) as express.ErrorRequestHandler);
      return;
    case 'param':
      app.get('/users/:id', (req, res) => {
        const id = Number(req.params.id);
        if (!Number.isInteger(id)) return void res.status(422).json({ detail: 'id must be an integer' });
        res.json({ id });
      });
      return;
    case 'query':
      app.get('/search', (req, res) => {
        const q = { ...(req.query as Record<string, unknown>) };
        if (!validateSearch(q)) return void res.status(422).type('application/problem+json').send(validationProblem(validateSearch.errors));
        res.json({ q: q.q, limit: q.limit, offset: q.offset });
      });
      return;
    case 'json-100b':
    case 'json-5kb':
    case 'json-150kb':
    case 'json-invalid':
      app.post('/orders', express.json({ limit: '1mb' }), (req, res) => {
        if (!validateOrder(req.body)) return void res.status(422).type('application/problem+json').send(validationProblem(validateOrder.errors));
        res.json({ ok: true, items: (req.body as { items: unknown[] }).items.length });
      });
      return;
    case 'form':
      app.post('/form', express.urlencoded({ extended: false }), (req, res) => {
        const f = req.body as Record<string, string>;
        res.json({ name: f.name, fields: Object.keys(f).length });
      });
      return;
    case 'multipart': {
      const upload = multer({ storage: multer.memoryStorage() });
      app.post('/upload', upload.single('file'), (req, res) => {
        res.json({ title: (req.body as Record<string, string>).title, size: req.file?.size ?? 0 });
      });
      return;
    }
    case 'jwt':
      app.get('/me', expressjwt({ secret: BENCH_JWT_SECRET, algorithms: ['HS256'] }), (req, res) => {
        res.json({ sub: (req as unknown as { auth: { sub: string } }).auth.sub });
      });
      return;
    case 'compress': {
      const doc = reportDocument();
      app.get('/report', compression(), (_req, res) => void res.json(doc));
      return;
    }
    case 'static':
      app.use('/static', express.static(ctx.staticDir));
      return;
    case 'jsonrpc':
      app.post('/rpc', express.json(), rpcServer.middleware() as unknown as RequestHandler);
      return;
    case 'graphql':
      app.post('/graphql', createHandler({ schema: graphqlSchema, rootValue: graphqlRoot }));
      return;
    default:
      throw new Error(`express: no ${scenario} scenario`);
  }
}

/** The standard stack, in the order keel runs its own (docs/architecture.md). */
function standardStack(app: Express): void {
  app.use((req, res, next) => {
    const id = (req.headers['x-request-id'] as string | undefined) ?? randomUUID();
    res.setHeader('X-Request-ID', id);
    next();
  });
  app.use(helmet());
  app.use(rateLimit({ windowMs: 1000, limit: HUGE_RATE, standardHeaders: 'draft-7', legacyHeaders: false }));
  // connect-timeout's job, by hand: a 503 if the handler has not answered in 30 s.
  app.use((_req, res, next) => {
    const timer = setTimeout(() => {
      if (!res.headersSent) res.status(503).json({ detail: 'timeout' });
    }, 30_000);
    res.on('finish', () => clearTimeout(timer));
    res.on('close', () => clearTimeout(timer));
    next();
  });
  app.use(compression());
  app.use(express.json({ limit: '1mb' }));
}

/**
 * The express-kit policy, in package options: one allowed origin, helmet's defaults, compression
 * over 1 kB, a rate limit never reached (draft-7 headers). bench/peers/express-keel.ts passes the
 * same objects to keel's factories.
 */
export const KIT_OPTIONS = Object.freeze({
  cors: { origin: [KIT_ORIGIN] },
  helmet: {},
  compression: { threshold: 1024 },
  rateLimit: { windowMs: 1000, limit: HUGE_RATE, standardHeaders: 'draft-7', legacyHeaders: false } as const,
});

function packageKit(app: Express): void {
  app.use(cors(KIT_OPTIONS.cors));
  app.use(helmet(KIT_OPTIONS.helmet));
  app.use(compression(KIT_OPTIONS.compression));
  app.use(rateLimit(KIT_OPTIONS.rateLimit));
}

export async function start(scenario: string, ctx: PeerContext, std = false): Promise<number> {
  const app = express();
  app.disable('x-powered-by');
  if (std) (scenario === 'express-kit' ? packageKit : standardStack)(app);
  routes(app, scenario, ctx);
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return (server.address() as { port: number }).port;
}
