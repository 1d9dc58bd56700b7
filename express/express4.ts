/**
 * keel/express4: Express 4's API and semantics (path-to-regexp 0.1 paths, the extended query parser, `app.del`,
 * synchronous error catching only) on keel's engine.
 *
 * @example
 * const express = require('keel/express4');
 * const app = express();
 * app.get('/users/:id?', (req, res) => { res.send(req.params.id || 'all'); });
 * app.listen(3000);
 */
import bodyParser from 'body-parser-v1';
import serveStatic from 'serve-static-v1';
import { createExpress4 } from './express4/create.js';

const express = createExpress4({ bodyParser, serveStatic });
export default express;
