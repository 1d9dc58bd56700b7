// A CommonJS Express 4 app in TypeScript (`import = require`), only the require switched to keel/express4.
import express = require('keel/express4');

const app = express();
app.use(express.json(), express.query({}));
const router = express.Router();
router.get('/users/:id', (req: express.Request, res: express.Response, next: express.NextFunction) => {
  if (!req.params.id) return next();
  res.json({ id: req.params.id });
});
app.use('/api', router);
app.use(((err, _req, res, _next) => { res.status(500).send(String(err)); }) as express.ErrorRequestHandler);
// keel's entries also type express.Route (@types/express does not declare it)
export const route: express.IRoute = new express.Route('/health');
export default app;
