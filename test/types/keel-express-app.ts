// A typed Express app as it is written against @types/express, with only the import switched to keel's entry
// (test/types.test.ts compiles it twice: importing keel/express with @types/express 5, keel/express4 with 4).
import express, { json, Router, urlencoded, type Application, type ErrorRequestHandler, type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'keel/express';
import type * as Original from 'express';

// middleware typed with @types/express, passed to keel's app
const fromTheApp: Original.RequestHandler = (req, _res, next) => {
  if (req.headers['x-stop']) return next(new Error('stopped'));
  next();
};
const timing: RequestHandler = (_req, res, next) => {
  res.setHeader('x-started', String(Date.now()));
  next();
};

const app: Express = express();
app.use(express.json({ limit: '1mb' }), express.urlencoded({ extended: false }), json(), urlencoded({ extended: true }));
app.use(fromTheApp, timing, express.static('public'));
app.get('/users/:id', (req, res) => {
  const id: string = req.params.id;
  res.status(200).json({ id, q: req.query.q });
});
app.post('/users', (req: Request<{}, { id: number }, { name: string }>, res: Response<{ id: number }>) => {
  res.status(201).json({ id: req.body.name.length });
});

const api = Router({ mergeParams: true });
api.get('/items/:itemId', (req, res, next: NextFunction) => {
  if (req.params.itemId === '0') return next();
  res.send(req.params.itemId.toUpperCase());
});
api.route('/things').get((_req, res) => { res.sendStatus(204); }).post((_req, res) => { res.end(); });
const nested = express.Router();
nested.use('/api', api);
app.use(nested);

const onError: ErrorRequestHandler = (err, _req, res, next) => {
  if (res.headersSent) return next(err);
  res.status(500).json({ message: err instanceof Error ? err.message : String(err) });
};
app.use(onError);
app.use((err: Error, _req: Request, res: Response, _next: NextFunction) => { res.status(500).send(err.message); });

const asApplication: Application = app;
const asOriginal: Original.Express = app;
export const server = app.listen(0, () => server.close());
export { asApplication, asOriginal };
