/**
 * The express-engine scenarios: one Express app, written once, run on express@5 (`express` peer), on
 * keel/express (`keel-express`), on express@4 (`express4`) and on keel/express4 (`keel-express4`), with Fastify as the reference (`fastify` peer, the same routes in Fastify's
 * idiom). `express-engine` is the realistic app (40 resources in an express.Router mounted at /api/:version,
 * app.param and router.param, express.json, cookie-parser, an error handler); `express-engine-hello` is hello world.
 */
import { createRequire } from 'node:module';
import Fastify from 'fastify';
import cookie from 'cookie';
import type { PeerContext } from './types.js';

const require = createRequire(import.meta.url);

/** How many resources the realistic app has, and the one the scenario's request hits (deep in the router). */
export const RESOURCES = 40;
export const HIT = 37;

/** The realistic app, for any Express-compatible `express` function. */
export function realisticApp(express: any): any {
  const cookieParser = require('cookie-parser');
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json());
  app.use(cookieParser());
  app.param('version', (req: any, _res: any, next: any, version: string) => {
    if (version !== 'v1') return next(Object.assign(new Error('unknown API version'), { status: 404 }));
    req.apiVersion = 1;
    next();
  });
  const router = express.Router();
  router.param('id', (req: any, _res: any, next: any, id: string) => {
    const n = Number(id);
    if (!Number.isInteger(n) || n < 1) return next(Object.assign(new Error('id must be a positive integer'), { status: 422 }));
    req.resourceId = n;
    next();
  });
  for (let i = 0; i < RESOURCES; i++) {
    const name = `r${i}`;
    router.get(`/${name}`, (_req: any, res: any) => res.json({ resource: name, items: [] }));
    router.post(`/${name}`, (req: any, res: any) => res.status(201).json({ resource: name, created: req.body }));
    router.get(`/${name}/:id`, (req: any, res: any) => {
      res.json({ resource: name, id: req.resourceId, version: req.apiVersion, session: req.cookies.session ?? null });
    });
    router.delete(`/${name}/:id`, (_req: any, res: any) => res.sendStatus(204));
  }
  app.use('/api/:version', router);
  app.use((_req: any, res: any) => res.status(404).json({ error: 'not found' }));
  app.use((err: any, _req: any, res: any, _next: any) => res.status(err.status ?? 500).json({ error: err.message }));
  return app;
}

function helloApp(express: any): any {
  const app = express();
  app.disable('x-powered-by');
  app.get('/', (_req: any, res: any) => res.send('Hello World!'));
  return app;
}

async function fastifyApp(scenario: string): Promise<any> {
  const app = Fastify({ logger: false });
  if (scenario === 'express-engine-hello') {
    app.get('/', async () => 'Hello World!');
    return app;
  }
  app.register(async (api) => {
    api.addHook('preHandler', async (req: any, reply) => {
      if (req.params.version !== 'v1') return reply.code(404).send({ error: 'unknown API version' });
      req.cookies = cookie.parse(req.headers.cookie ?? '');
    });
    for (let i = 0; i < RESOURCES; i++) {
      const name = `r${i}`;
      api.get(`/${name}`, async () => ({ resource: name, items: [] }));
      api.post(`/${name}`, async (req, reply) => reply.code(201).send({ resource: name, created: req.body }));
      api.get(`/${name}/:id`, async (req: any, reply) => {
        const n = Number(req.params.id);
        if (!Number.isInteger(n) || n < 1) return reply.code(422).send({ error: 'id must be a positive integer' });
        return { resource: name, id: n, version: 1, session: req.cookies.session ?? null };
      });
      api.delete(`/${name}/:id`, async (_req, reply) => reply.code(204).send());
    }
  }, { prefix: '/api/:version' });
  return app;
}

export async function start(peer: string, scenario: string, _ctx: PeerContext): Promise<number> {
  if (peer === 'fastify') {
    const app = await fastifyApp(scenario);
    await app.listen({ port: 0, host: '127.0.0.1' });
    return (app.server.address() as { port: number }).port;
  }
  const express = peer === 'keel-express' ? (await import('../../express/index.js')).default
    : peer === 'keel-express4' ? (await import('../../express/express4.js')).default
      : require(peer === 'express4' ? 'express4' : 'express');
  const app = scenario === 'express-engine-hello' ? helloApp(express) : realisticApp(express);
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return (server.address() as { port: number }).port;
}
