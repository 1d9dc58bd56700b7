/**
 * Fastify 5 with its own plugins: JSON schemas for validation, @fastify/formbody, @fastify/multipart,
 * @fastify/jwt, @fastify/compress, @fastify/static, and for `full` @fastify/helmet + @fastify/rate-limit.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import compress from '@fastify/compress';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import fjwt from '@fastify/jwt';
import multipart from '@fastify/multipart';
import rateLimit from '@fastify/rate-limit';
import fstatic from '@fastify/static';
import { createHandler } from 'graphql-http/lib/use/fastify';
import { ACCOUNT_ROW, accountSchema, PROBLEM_404, BENCH_JWT_SECRET, HUGE_RATE, orderSchema, reportDocument, searchQuerySchema, SMALL_BODY_LIMIT } from '../scenarios.js';
import { graphqlRoot, graphqlSchema, rpcServer } from './shared.js';
import type { PeerContext } from './types.js';

async function routes(app: FastifyInstance, scenario: string, ctx: PeerContext): Promise<void> {
  switch (scenario) {
    case 'hello':
      app.get('/hello', async () => ({ hello: 'world' }));
      return;
    case 'method-not-allowed': {
      // Fastify answers 404 for a method a path does not serve; a 405 with Allow is the app's to write, once:
      // the methods its routes use (onRoute), each looked up for the path, as keel's router does.
      const methods = new Set<string>();
      app.addHook('onRoute', (r) => void (Array.isArray(r.method) ? r.method : [r.method]).forEach((m) => methods.add(m)));
      app.get('/hello', async () => ({ hello: 'world' }));
      app.setNotFoundHandler((req, reply) => {
        const path = req.url.split('?', 1)[0]!;
        const allow: string[] = [];
        for (const m of methods) if (m !== req.method && app.hasRoute({ method: m as 'GET', url: path })) allow.push(m);
        if (!allow.length) return reply.code(404).type('application/problem+json').send({ type: 'about:blank', title: 'Not Found', status: 404 });
        return reply.code(405).header('allow', allow.join(', ')).type('application/problem+json')
          .send({ type: 'about:blank', title: 'Method Not Allowed', status: 405, detail: `${req.method} is not allowed for ${path}` });
      });
      return;
    }
    case 'param':
      app.get('/users/:id', { schema: { params: { type: 'object', properties: { id: { type: 'integer' } } } } }, async (req) => ({ id: (req.params as { id: number }).id }));
      return;
    case 'query':
      app.get('/search', { schema: { querystring: searchQuerySchema } }, async (req) => {
        const q = req.query as { q: string; limit: number; offset: number };
        return { q: q.q, limit: q.limit, offset: q.offset };
      });
      return;
    case 'json-100b':
    case 'json-5kb':
    case 'json-150kb':
    case 'json-invalid':
    case 'too-large':
      app.post('/orders', { schema: { body: orderSchema } }, async (req) => ({ ok: true, items: (req.body as { items: unknown[] }).items.length }));
      return;
    case 'response-schema':
    case 'problem': {
      // Fastify's response schemas: fast-json-stringify per status; the 404 is a problem body with its own schema.
      const problem = { type: 'object', properties: { type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' }, instance: { type: 'string' } }, additionalProperties: true };
      app.get('/accounts/:id', { schema: { params: { type: 'object', properties: { id: { type: 'integer' } } }, response: { 200: accountSchema, 404: problem } } }, async (req, reply) => {
        if ((req.params as { id: number }).id === 4242) return ACCOUNT_ROW;
        return reply.code(404).type('application/problem+json').send(PROBLEM_404);
      });
      return;
    }
    case 'form':
      await app.register(formbody);
      app.post('/form', async (req) => {
        const f = req.body as Record<string, string>;
        return { name: f.name, fields: Object.keys(f).length };
      });
      return;
    case 'multipart':
      await app.register(multipart);
      app.post('/upload', async (req) => {
        let title = '';
        let size = 0;
        for await (const part of req.parts()) {
          if (part.type === 'file') size = (await part.toBuffer()).length;
          else if (part.fieldname === 'title') title = String(part.value);
        }
        return { title, size };
      });
      return;
    case 'jwt':
      await app.register(fjwt, { secret: BENCH_JWT_SECRET, verify: { algorithms: ['HS256'] } });
      app.get('/me', { onRequest: [async (req) => void (await req.jwtVerify())] }, async (req) => ({ sub: (req.user as { sub: string }).sub }));
      return;
    case 'compress': {
      await app.register(compress, { encodings: ['gzip'] });
      const doc = reportDocument();
      app.get('/report', async () => doc);
      return;
    }
    case 'static':
      await app.register(fstatic, { root: ctx.staticDir, prefix: '/static/' });
      return;
    case 'full':
      await app.register(helmet);
      await app.register(rateLimit, { max: HUGE_RATE, timeWindow: 1000 });
      await app.register(compress);
      app.addHook('onRequest', async (req, reply) => void reply.header('x-request-id', req.id));
      app.get('/hello', async () => ({ hello: 'world' }));
      return;
    case 'jsonrpc':
      app.post('/rpc', (req, reply) => {
        rpcServer.call(req.body as never, (error: unknown, success: unknown) => void reply.send(error ?? success));
      });
      return;
    case 'graphql':
      app.post('/graphql', createHandler({ schema: graphqlSchema, rootValue: graphqlRoot }));
      return;
    default:
      throw new Error(`fastify: no ${scenario} scenario`);
  }
}

export async function start(scenario: string, ctx: PeerContext): Promise<number> {
  const full = scenario === 'full';
  const options: FastifyServerOptions = { logger: false, bodyLimit: scenario === 'too-large' ? SMALL_BODY_LIMIT : 1024 * 1024 };
  if (full) {
    // The `full` stack's request id and timeout: Fastify's own genReqId and requestTimeout.
    options.genReqId = (req) => (req.headers['x-request-id'] as string | undefined) ?? randomUUID();
    options.requestTimeout = 30_000;
  }
  const app = Fastify(options);
  await routes(app, scenario, ctx);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as { port: number }).port;
}
