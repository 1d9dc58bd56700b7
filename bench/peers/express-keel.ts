/**
 * Express 5 with keel's cors, securityHeaders, compression and rateLimit in place of the cors,
 * helmet, compression and express-rate-limit packages, given the same package options
 * (KIT_OPTIONS): the express-kit scenario's "swap one package for one factory" stack.
 */
import express from 'express';
import { cors } from '../../middleware/cors/index.js';
import { securityHeaders } from '../../middleware/security-headers/index.js';
import { compression } from '../../middleware/compression/index.js';
import { rateLimit } from '../../middleware/rate-limit/index.js';
import { KIT_OPTIONS } from './express.js';
import type { PeerContext } from './types.js';

export async function start(scenario: string, _ctx: PeerContext): Promise<number> {
  if (scenario !== 'express-kit') throw new Error(`express-keel: no ${scenario} scenario`);
  const app = express();
  app.disable('x-powered-by');
  app.use(cors(KIT_OPTIONS.cors));
  app.use(securityHeaders({ helmet: KIT_OPTIONS.helmet }));
  app.use(compression(KIT_OPTIONS.compression));
  app.use(rateLimit(KIT_OPTIONS.rateLimit));
  app.get('/hello', (_req, res) => void res.json({ hello: 'world' }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return (server.address() as { port: number }).port;
}
