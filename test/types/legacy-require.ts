// A legacy CommonJS TypeScript app taking keel's factories the way it took the packages they replace:
// `import cors = require('cors')` (the form @types/cors, @types/compression and @types/serve-static declare with
// `export =`), the factory called directly, its types read off it (`cors.CorsOptions`). Type-checked by
// test/types/module-settings.test.ts under the CommonJS settings only (import-assignment is not ES module syntax).
import express = require('express');
import cors = require('keel/middleware/cors');
import compression = require('keel/middleware/compression');
import rateLimit = require('keel/middleware/rate-limit');
import helmet = require('keel/middleware/security-headers');
import serveStatic = require('keel/middleware/static-files');
import jwt = require('keel/middleware/jwt-auth');

const options: cors.CorsOptions = { origin: 'https://a.example', credentials: true };
const store: rateLimit.MemoryStore = new rateLimit.MemoryStore();
const app = express();
app.use(cors(options), compression({ threshold: 512 }), helmet(), helmet.hsts({ maxAge: 60 }));
app.use(rateLimit({ windowMs: 60_000, limit: 100 }), rateLimit.rateLimit({ windowMs: 1000, limit: 5 }));
app.use('/static', serveStatic('public', { maxAge: '1d' }));
app.use(jwt.expressjwt({ secret: 'a-secret-of-at-least-32-bytes!!!', algorithms: ['HS256'] }));
app.use((err: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
  if (err instanceof jwt.UnauthorizedError) res.status(err.status).end();
  else next(err);
});
// @ts-expect-error allowed_origins is a list of strings: the entry is keel's factory, not `any`
cors({ allowed_origins: 42 });
// @ts-expect-error the namespace carries types, not the factory's options
const wrong: cors.CorsOptions = 42;
export = { app, store, wrong };
