/** A project on node:http alone (no @types/express in the program): keel's declarations still compile. */
import http from 'node:http';
import { jwtAuth } from 'keel/middleware/jwt-auth';
import { problemHandler } from 'keel/middleware/problem-handler';
import type { KeelRequest } from 'keel';

const auth = jwtAuth({ secret: 'x'.repeat(32), onReject: 'next' });
const onError = problemHandler();
http.createServer((req: KeelRequest, res) => {
  auth(req, res, (err) => (err ? onError(err, req, res, () => res.end()) : res.end(String(req.auth?.sub))));
});
