import express from 'express';
import { rateLimit } from 'keel/middleware/rate-limit';
import { jwtAuth } from 'keel/middleware/jwt-auth';
import { createApp } from 'keel';

const legacy = express();
legacy.use(rateLimit({ per_second: 20, burst: 40 })); // one keel factory at a time, in any Express 4/5 app
legacy.use('/admin', jwtAuth({ secret: process.env.JWT_SECRET }));

const api = createApp({}, (app) => {
  app.get('/v2/health', () => ({ status: 'ok' }));
});
legacy.use(api.intoRouter()); // keel's routes inside Express; unmatched requests fall through to Express
legacy.listen(3000);
