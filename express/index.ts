/**
 * keel/express: Express 5's API on keel's engine. `import express from 'keel/express'` (or
 * `require('keel/express')`) gives what `express` gives.
 *
 * @example
 * import express from 'keel/express';
 * const app = express();
 * app.get('/users/:id', (req, res) => { res.json({ id: req.params.id }); });
 * app.listen(3000);
 */
import bodyParser from 'body-parser';
import serveStatic from 'serve-static';
import { createExpress } from './create.js';

const express = createExpress({ bodyParser, serveStatic });
export default express;
