/**
 * A strict Express app (4 or 5: the test maps `express` to either's types) using keel's factories
 * and problemHandler(), reading the properties keel sets on `req` without a cast.
 */
import express from 'express';
import { App, HttpError, type OnReject } from 'keel';
import { apiKeyAuth } from 'keel/middleware/api-key-auth';
import { authorization } from 'keel/middleware/authorization';
import { bodyLimit } from 'keel/middleware/body-limit';
import { compression } from 'keel/middleware/compression';
import { cors } from 'keel/middleware/cors';
import { httpTrace } from 'keel/middleware/http-trace';
import { expressjwt, jwtAuth, UnauthorizedError, type GetVerificationKey, type Request as JWTRequest } from 'keel/middleware/jwt-auth';
import { problemHandler } from 'keel/middleware/problem-handler';
import { rateLimit } from 'keel/middleware/rate-limit';
import { requestId } from 'keel/middleware/request-id';
import { securityHeaders } from 'keel/middleware/security-headers';
import { staticFiles } from 'keel/middleware/static-files';
import { timeout } from 'keel/middleware/timeout';

const app = express();
app.use(requestId());
app.use(httpTrace());
app.use(securityHeaders());
app.use(cors({ allowed_origins: ['https://app.example.com'], onReject: 'next' }));
// The cors package's options delegate: per-request options.
app.use(cors((req, cb) => cb(null, { origin: req.headers.origin === 'https://app.example.com', credentials: true })));
app.use(cors({ origin: [/\.example\.com$/], headers: ['Content-Type'] }));
app.use(rateLimit({ per_second: 5, burst: 10, onReject: 'next' }));
app.use(bodyLimit({ max_body_size: 1024, onReject: 'next' }));
app.use(timeout({ request_timeout: 30, onReject: 'next' }));
app.use(compression());
app.use('/static', staticFiles({ directory: '.', route_prefix: '/', on_reject: 'next' }));
app.use('/admin', apiKeyAuth({ keys: ['k'], onReject: (err, _req, res) => void res.writeHead(err.status).end() }));
app.use(express.json());

app.get(
  '/me',
  jwtAuth({ secret: process.env.JWT_SECRET ?? '', onReject: 'next' }),
  authorization({ required_roles: ['user'], onReject: 'next' }),
  (req, res) => {
    const sub: unknown = req.auth?.sub;
    const id: string | undefined = req.requestId;
    const trace: string | undefined = req.traceContext?.traceId;
    const source: 'header' | 'query' | undefined = req.apiKey?.source;
    const late: boolean | undefined = req.timedout;
    res.json({ sub, id, trace, source, late });
  },
);

// express-jwt's options through its own name: secret callback, isRevoked, .unless() (express-unless).
const tenantSecret: GetVerificationKey = async (_req, token) => (typeof token?.payload === 'object' ? String(token.payload.iss) : undefined);
app.use('/api', expressjwt({ secret: tenantSecret, algorithms: ['HS256'], isRevoked: async (_req, token) => token === undefined }).unless({ path: ['/api/login'], method: 'OPTIONS' }));
app.use(jwtAuth({ secret: process.env.JWT_SECRET ?? '', onReject: 'next' }).unless((req: express.Request) => req.path === '/health'));
// express-jwt's README handler, with its Request type imported from keel instead.
app.get('/protected', (req: JWTRequest, res: express.Response) => {
  const admin: unknown = req.auth?.admin;
  const sub: string | undefined = req.auth?.sub;
  res.status(admin ? 200 : 401).json({ sub, host: req.headers.host });
});

// express-jwt's documented error handler, unchanged.
app.use((err: Error & { code?: string }, _req: express.Request, res: express.Response, next: express.NextFunction) => {
  if (err.name === 'UnauthorizedError') {
    res.status(401).send('invalid token...');
    return;
  }
  if (err instanceof UnauthorizedError && err.code === 'credentials_required') return next(err);
  next(err);
});
app.use(problemHandler());
app.use(problemHandler({ logger: { error: (obj, msg) => console.error(msg, obj) } }));

// What keel does not set is still an error.
app.get('/nope', (req, res) => {
  // @ts-expect-error -- not a property keel (or Express) sets
  res.json(req.notAKeelProperty);
});

// A router of this Express merged into a keel App, run on this Express.
const legacyRoutes = express.Router();
legacyRoutes.get('/legacy', (req, res) => void res.json({ id: req.requestId }));
const keel = new App().mergeRouter(legacyRoutes, { express });
app.use(keel.intoRouter());

const custom: OnReject = (err, _req, res) => {
  const status: number = err instanceof HttpError ? err.status : 500;
  res.writeHead(status).end();
};
app.use(rateLimit({ onReject: custom }));

export { app };
