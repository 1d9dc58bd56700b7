/**
 * keel's side of every scenario: one App per scenario. Scenario routes run with every feature off
 * (security headers too) so they do the same work as the peers; `full` is createApp's stack.
 */
import { pino } from 'pino';
import { createApp, type App, type UploadFile } from '../../lib/index.js';
import { handlerError } from '../../lib/index.js';
import {
  ACCOUNT_ROW, accountSchema, BENCH_JWT_SECRET, GRAPHQL_DATA, GRAPHQL_SDL, HUGE_RATE, orderSchema, reportDocument, rpcAddParamsSchema, searchQuerySchema, SMALL_BODY_LIMIT,
} from '../scenarios.js';
import type { PeerContext } from './types.js';
import type { RateLimitStore } from '../../middleware/rate-limit/index.js';

const silent = pino({ level: 'silent' });

function order(d: { body: unknown }) {
  return { ok: true, items: (d.body as { items: unknown[] }).items.length };
}

export async function start(scenario: string, ctx: PeerContext): Promise<number> {
  const config: Record<string, unknown> = { host: '127.0.0.1', port: 0, graceful_shutdown: false };
  let securityHeaders: false | undefined = false;
  let setup: (app: App) => void;
  let rateLimitStore: RateLimitStore | undefined;
  switch (scenario) {
    case 'hello':
    case 'method-not-allowed':
      // DELETE /hello: the router's 405 problem, with Allow.
      setup = (app) => app.get('/hello', () => ({ hello: 'world' }));
      break;
    case 'param':
      setup = (app) => app.get('/users/{id:int}', (d) => ({ id: d.pathParams.id }));
      break;
    case 'query':
      // keel's fixture-style parameters carry `required` per parameter.
      setup = (app) => app.get('/search', (d) => ({ q: d.query.q, limit: d.query.limit, offset: d.query.offset }), {
        parameters: {
          query: {
            q: { ...searchQuerySchema.properties.q, required: true },
            limit: { ...searchQuerySchema.properties.limit },
            offset: { ...searchQuerySchema.properties.offset },
          },
        },
      });
      break;
    case 'json-100b':
    case 'json-5kb':
    case 'json-150kb':
    case 'json-invalid':
      config.max_body_size = 1024 * 1024;
      setup = (app) => app.post('/orders', order, { body: orderSchema as unknown as Record<string, unknown> });
      break;
    case 'too-large':
      config.max_body_size = SMALL_BODY_LIMIT;
      setup = (app) => app.post('/orders', order, { body: orderSchema as unknown as Record<string, unknown> });
      break;
    case 'response-schema':
    case 'response-schema-off':
    case 'problem':
      // The row comes from a variable (the compiler cannot see its extra member); /accounts/7 is not there: a 404 problem.
      if (scenario === 'response-schema-off') config.response_validation = 'off';
      setup = (app) => app.get('/accounts/{id:int}', (d) => (d.pathParams.id === 4242 ? ACCOUNT_ROW : handlerError(404, 'no such account')) as never, { response: accountSchema });
      break;
    case 'form':
      setup = (app) => app.post('/form', (d) => {
        const f = d.body as Record<string, string>;
        return { name: f.name, fields: Object.keys(f).length };
      });
      break;
    case 'multipart':
      setup = (app) => app.post('/upload', (d) => {
        const file = d.files.file as UploadFile;
        return { title: (d.body as Record<string, string>).title, size: file.size };
      });
      break;
    case 'jwt':
      setup = (app) => app.get('/me', (d) => ({ sub: (d.auth as { sub?: string } | undefined)?.sub }), { jwt_auth: { secret: BENCH_JWT_SECRET } });
      break;
    case 'compress': {
      const doc = reportDocument();
      setup = (app) => app.get('/report', () => doc, { compression: { brotli: false } });
      break;
    }
    case 'static':
      config.static_files = [{ directory: ctx.staticDir, route_prefix: '/static' }];
      setup = () => undefined;
      break;
    case 'full':
      // createApp's stack: request ids, helmet's security headers (on by default), a rate limit no
      // client reaches, compression, a body cap and a timeout.
      securityHeaders = undefined;
      Object.assign(config, {
        enable_request_id: true,
        rate_limit: { per_second: HUGE_RATE, burst: HUGE_RATE },
        compression: {},
        max_body_size: 1024 * 1024,
        request_timeout: 30,
      });
      setup = (app) => app.get('/hello', () => ({ hello: 'world' }));
      break;
    case 'hello-metrics':
      config.metrics = {};
      config.readiness = {};
      setup = (app) => app.get('/hello', () => ({ hello: 'world' }));
      break;
    case 'hello-otel': {
      const [{ trace }, { BasicTracerProvider, BatchSpanProcessor }] = await Promise.all([import('@opentelemetry/api'), import('@opentelemetry/sdk-trace-base')]);
      // Spans are recorded and batched as an app's SDK would; the exporter drops them (no network in the figure).
      const exporter = { export: (_spans: unknown[], done: (r: { code: number }) => void) => done({ code: 0 }), shutdown: async () => undefined };
      trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] }));
      config.opentelemetry = {};
      setup = (app) => app.get('/hello', () => ({ hello: 'world' }));
      break;
    }
    case 'ratelimit':
      setup = (app) => app.get('/limited', () => ({ hello: 'world' }), { rate_limit: { per_second: HUGE_RATE, burst: HUGE_RATE } });
      break;
    case 'ratelimit-redis': {
      // The same route with its buckets in a redis-server of its own on loopback (docs/scaling.md).
      const { startBenchRedis } = await import('./redis.js');
      rateLimitStore = await startBenchRedis();
      setup = (app) => app.get('/limited', () => ({ hello: 'world' }), { rate_limit: { per_second: HUGE_RATE, burst: HUGE_RATE } });
      break;
    }
    case 'jsonrpc':
      config.jsonrpc = { enabled: true };
      setup = (app) => app.rpc({ method_name: 'math.add', params_schema: rpcAddParamsSchema as unknown as Record<string, unknown> }, ({ a, b }: { a: number; b: number }) => a + b);
      break;
    case 'graphql':
      setup = (app) => app.registerGraphqlSdlRoute('/graphql', 'POST', GRAPHQL_SDL, GRAPHQL_DATA, { introspection_enabled: true });
      break;
    default:
      throw new Error(`keel: unknown scenario ${scenario}`);
  }
  const app = createApp(config, setup, { logger: silent, ...(securityHeaders === false ? { securityHeaders: false } : {}), ...(rateLimitStore ? { rateLimit: { store: rateLimitStore } } : {}) });
  const handle = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  return handle.port;
}
