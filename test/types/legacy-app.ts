// A legacy Express app adopting keel (issue 43), type-checked by test/types/module-settings.test.ts under each
// TypeScript module setting (commonjs/node10, node16 and nodenext from CommonJS and ES modules, bundler), strict,
// skipLibCheck false, with TypeScript 5 and the current one. The @ts-expect-error lines prove the types are keel's,
// not `any` from an unresolved module.
import express from 'express';
import keelExpress from 'keel/express';
import { cors, type CorsOptions } from 'keel/middleware/cors';
import helmet, { hsts } from 'keel/middleware/security-headers';
import { compression } from 'keel/middleware/compression';
import { rateLimit } from 'keel/middleware/rate-limit';
import { expressjwt, UnauthorizedError } from 'keel/middleware/jwt-auth';
import { staticFiles } from 'keel/middleware/static-files';
import corsFactory from 'keel/middleware/cors'; // the default export, as `import cors from 'cors'`
import rateLimitFactory from 'keel/middleware/rate-limit';
import { createApp, AppError, type ServerHandle } from 'keel';
import { JsonRpcRegistry } from 'keel/jsonrpc';
import { snapshotResponse } from 'keel/harness';

const options: CorsOptions = { allowed_origins: ['https://a.example'] };
const legacy = express();
legacy.use(cors(options), helmet(), hsts({ maxAge: 60 }), compression(), rateLimit({ windowMs: 60_000, limit: 100 }));
legacy.use(expressjwt({ secret: 'a-secret-of-at-least-32-bytes!!!', algorithms: ['HS256'] }));
legacy.use('/static', staticFiles('public'));
legacy.use('/v1', corsFactory({ origin: 'https://a.example' }), rateLimitFactory({ windowMs: 1000, limit: 5 }));
legacy.use((err: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
  if (err instanceof UnauthorizedError) res.status(err.status).end();
  else next(err);
});

const app = createApp({ port: 0 }, (a) => {
  a.get('/users/{id}', (data) => ({ id: data.pathParams.id }));
});
legacy.use('/api', app.intoRouter());

const engine = keelExpress();
engine.get('/users/:id', (req, res) => {
  const id: string = req.params.id;
  res.json({ id });
});

export const rpc = new JsonRpcRegistry();
export const snapshot: typeof snapshotResponse = snapshotResponse;
export async function start(): Promise<ServerHandle | AppError> {
  return app.listen().catch((err: unknown) => (err instanceof AppError ? err : Promise.reject(err)));
}
// @ts-expect-error allowed_origins is a list of strings
cors({ allowed_origins: 42 });
// @ts-expect-error createApp takes a config record
createApp('not a record');
export { legacy, engine };
