/**
 * The example server: every feature keel has, on 127.0.0.1:8000 (PORT overrides).
 *
 *   npm install && npm start
 *   REDIS_URL=redis://127.0.0.1:6379 npm start    # several instances share limits, jobs and events (docs/scaling.md)
 *   REDIS_CLUSTER_NODES=10.0.0.1:6379,10.0.0.2:6379 npm start    # the same on a Redis Cluster (seed nodes)
 *
 * The README and docs/protocols.md list curl lines for each feature. `buildExampleApp()` is exported for the tests.
 */
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';
import express from 'express';
import { bullmqBackground, createApp, documentationPages, handlerError, HttpError, parseClusterNodes, RedisPubSub, response, type App, type AppOptions } from '../lib/index.js';
import { RedisStore } from '../middleware/rate-limit/index.js';
import { jsonWebSocket } from '../lib/ws/index.js';
import { GREETER_PROTO_PATH, greeterHandlers } from './grpc/server.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Demo credentials: never ship these. Real deployments read them from the environment. */
export const EXAMPLE_API_KEY = process.env.KEEL_EXAMPLE_API_KEY ?? 'demo-key-change-me';
export const EXAMPLE_JWT_SECRET = process.env.KEEL_EXAMPLE_JWT_SECRET ?? 'demo-secret-change-me-32-bytes-long!!';

interface Item {
  id: number;
  name: string;
  price: number;
  tags: string[];
}

/** What GET and POST /items answer: the route's `responses` check handlers against it and list it in /openapi.json. */
const itemSchema = {
  type: 'object',
  required: ['id', 'name', 'price', 'tags'],
  properties: { id: { type: 'integer' }, name: { type: 'string' }, price: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } } },
} as const;

/**
 * The example App. `overrides.rate_limit` replaces its server-level rate limit (`null`: none), e.g. for
 * `npm run soak`, whose load comes from one loopback address.
 */
export function buildExampleApp(overrides: { port?: number; rate_limit?: { per_second: number; burst: number } | null } = {}, options: AppOptions = {}): App {
  const items = new Map<number, Item>([[1, { id: 1, name: 'Anchor', price: 120, tags: ['heavy'] }]]);
  let nextId = 2;
  return createApp(
    {
      host: process.env.HOST ?? '127.0.0.1',
      port: overrides.port ?? Number(process.env.PORT ?? 8000),
      enable_request_id: true,
      max_body_size: 1024 * 1024,
      // A request target (path and query) longer than this is a 414 problem before routing (the default).
      max_uri_length: 8192,
      request_timeout: 10,
      compression: { min_size: 512 },
      rate_limit: overrides.rate_limit !== undefined ? overrides.rate_limit : { per_second: 50, burst: 100 },
      // One budget per client across its connections (docs/workers-and-limits.md#one-budget-per-client), at the
      // defaults: 100 connections (HTTP/1.1, WebSocket, h2c), 1000 WebSocket messages a second across its sockets.
      max_connections_per_client: 100,
      ws_client_messages_per_second: 1000,
      // What one request or stream may accumulate, at the defaults (docs/security.md, issue 44): multipart parts,
      // files and fields (413 past them); a WebSocket with no frame for 120 s is closed (1001).
      multipart_max_parts: 1000,
      multipart_max_files: 100,
      ws_idle_timeout: 120,
      static_files: [{ directory: join(here, 'public'), route_prefix: '/static', cache_control: 'public, max-age=60' }],
      background_tasks: { enabled: true },
      // gRPC on the same port (cleartext HTTP/2 with prior knowledge), with health and reflection.
      // A client stream (GreetAll, Chat) ends with RESOURCE_EXHAUSTED past 16 MiB or 10,000 messages (the defaults).
      grpc: { max_message_size: 1_048_576, request_timeout: 30, max_stream_request_bytes: 16 * 1024 * 1024, max_stream_request_messages: 10_000 },
      // API descriptions: OpenAPI JSON + Swagger UI (/docs) + Redoc (/redoc), AsyncAPI, JSON-RPC at /rpc.
      openapi: { enabled: true, title: 'keel example', version: '1.0.0', description: 'The routes of the keel example server.' },
      asyncapi: { enabled: true, spec: JSON.parse(readFileSync(join(here, 'asyncapi.json'), 'utf8')) },
      jsonrpc: { endpoint_path: '/rpc', max_batch_size: 20 },
      // Expensive work (AsyncAPI parse / validate, GraphQL operations, JSON-RPC batches, gRPC calls) is paid for
      // by its measured time: per client 250 ms of CPU per second (5 s at once), then 429 (JSON-RPC: -32005; gRPC:
      // RESOURCE_EXHAUSTED); a server-wide queue for AsyncAPI and GraphQL that leaves half the event loop to
      // everything else; 503 while the loop is late (the defaults; docs/workers-and-limits.md, "Work limits").
      work_limits: { cpu_ms_per_second: 250, cpu_ms_burst: 5000 },
      // Operations (docs/operations.md): GET /ready (503 problem while Redis or the job executor is down)
      // and Prometheus metrics at GET /metrics (prom-client); both before the rate limit and auth.
      readiness: {},
      metrics: {},
    },
    (app) => {
      // Routes with validated parameters and bodies (422 problem details on bad input).
      // Liveness: 200 while the process serves, whatever Redis does (so no Redis-backed rate limit on it);
      // readiness, which does depend on Redis, is /ready.
      app.get('/health', () => ({ status: 'ok' }), { rate_limit: { enabled: false } });
      app.get('/items', (d) => [...items.values()].slice(0, d.query.limit), { parameters: { query: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 } } } });
      // `responses` by status: the handler may only answer these (a 404 is a problem+json), and
      // /openapi.json lists each one.
      app.get('/items/{id:int}', (d) => {
        const item = items.get(d.pathParams.id); // {id:int}: a number
        return item ?? handlerError(404, 'no such item');
      }, { responses: { 200: itemSchema, 404: null } });
      app.delete('/items/{id:int}', (d) => (items.delete(d.pathParams.id) ? undefined : handlerError(404, 'no such item')), { responses: { 204: null, 404: null } });
      app.post('/items', (d) => {
        // d.body is typed from the schema below: { name: string; price: number; tags?: string[] }.
        const item: Item = { id: nextId++, ...d.body, tags: d.body.tags ?? [] };
        items.set(item.id, item);
        return response(item, { status: 201, headers: { Location: `/items/${item.id}` } });
      }, {
        responses: { 201: itemSchema },
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'price'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 80 },
            price: { type: 'number', exclusiveMinimum: 0 },
            tags: { type: 'array', items: { type: 'string' }, maxItems: 10 },
          },
        },
      });
      // A large response, compressed when the client accepts gzip or br.
      app.get('/report', () => ({ rows: Array.from({ length: 200 }, (_, i) => ({ i, text: 'keel keeps the ship steady' })) }));
      // Per-route records: API key, JWT + authorization, CORS, request-id override.
      app.get('/admin/stats', () => ({ items: items.size }), { api_key_auth: { keys: [EXAMPLE_API_KEY] } });
      app.get('/me', (d) => ({ claims: d.auth }), {
        jwt_auth: { secret: EXAMPLE_JWT_SECRET },
        authorization: { required_roles: ['user'] },
      });
      app.get('/public/info', () => ({ name: 'keel example' }), {
        // allowed_headers lists the request headers a preflight may ask for (default: none).
        cors: { allowed_origins: ['https://example.com'], allowed_methods: ['GET'], allowed_headers: ['Authorization'], max_age: 600 },
        request_id: { enabled: false },
      });
      // Lifecycle hooks by name, with a short-circuit.
      // An error a hook answers with is an HttpError: keel renders it as problem+json with its headers
      // (`expected`: a refusal the server chose, so it is not logged as a failure).
      app.hook('on_request', 'maintenance', (ctx) => {
        if (ctx.req.headers['x-maintenance']) throw new HttpError(503, 'Down for maintenance; try again in two minutes.', { headers: { 'Retry-After': '120' }, expected: true });
      });
      app.hook('on_response', 'stamp', (ctx) => {
        if (ctx.response) ctx.response.headers['X-Served-By'] = 'keel';
      });
      app.get('/hooked', () => ({ hooked: true }), { lifecycle_hooks: { on_request: [{ name: 'maintenance', handler: 'maintenance' }], on_response: [{ name: 'stamp', handler: 'stamp' }] } });
      // Background work: a named job registered at start-up, enqueued from a handler with a JSON payload.
      // In process by default; with REDIS_URL a BullMQ queue any instance may run it from (docs/scaling.md).
      app.job('demo-job', async (payload: { at: number }, ctx) => {
        await new Promise((r) => setTimeout(r, 50));
        app.logger.info({ job: ctx.metadata.name, request_id: ctx.metadata.request_id, queued_at: payload.at }, 'demo-job done');
      });
      app.post('/jobs', async (d) => {
        await d.background?.enqueue('demo-job', { at: Date.now() });
        return response({ queued: true }, { status: 202 });
      }, { responses: { 202: { type: 'object', required: ['queued'], properties: { queued: { type: 'boolean' } } } } });
      // JSON-RPC 2.0 methods (POST /rpc; `rpc.discover` returns their OpenRPC description).
      app.rpc({ method_name: 'items.count', description: 'How many items exist', result_schema: { type: 'integer', minimum: 0 }, tags: ['items'] }, () => items.size);
      app.rpc(
        {
          method_name: 'math.add',
          description: 'Add two numbers',
          params_schema: { type: 'object', required: ['a', 'b'], additionalProperties: false, properties: { a: { type: 'number' }, b: { type: 'number' } } },
          result_schema: { type: 'number' },
          tags: ['math'],
        },
        ({ a, b }: { a: number; b: number }) => a + b,
      );
      // GraphQL: the built-in `full` schema (queries, mutations, subscriptions over graphql-transport-ws
      // on the same path) with the GraphiQL playground at GET /graphql in a browser.
      app.registerGraphqlRoute('/graphql', 'POST', 'full', { depth_limit: 8, complexity_limit: 500 }, { enablePlayground: true });
      // A WebSocket echo: text comes back as text, binary as binary.
      app.ws('/ws/echo', async (ws) => {
        for await (const message of ws) if (message.type === 'text' || message.type === 'binary') await ws.send(message);
      });
      // JSON messages: {"type":"subscribe","channel":"news"} gets {"type":"subscribed","channel":"news","status":"ok"};
      // text that is not JSON, or fails the schema, gets keel's error frame and the connection goes on.
      app.ws('/ws/json', jsonWebSocket({
        messageSchema: { type: 'object', required: ['type', 'channel'], properties: { type: { enum: ['subscribe'] }, channel: { type: 'string', minLength: 1, maxLength: 100 } } },
        onMessage: (m: { type: 'subscribe'; channel: string }) => ({ type: 'subscribed', channel: m.channel, status: 'ok' }),
      }), { maxPayload: 16 * 1024 });
      // A chat room: every text message goes to every client, on every instance with REDIS_URL or REDIS_CLUSTER_NODES.
      app.ws('/ws/chat', async (ws) => {
        ws.subscribe('chat');
        for await (const message of ws) if (message.type === 'text') await app.publish('chat', message.data.slice(0, 1000));
      });
      // gRPC: keel.examples.v1.Greeter (examples/grpc/greeter.proto) beside the HTTP routes.
      app.grpc(GREETER_PROTO_PATH, 'keel.examples.v1.Greeter', greeterHandlers);
      // A legacy Express router, merged: keel routes win, Express serves the rest.
      const legacy = express.Router();
      legacy.get('/legacy/hello', (_req, res) => { res.json({ from: 'express' }); });
      app.mergeRouter(legacy);
    },
    options,
  );
}

/**
 * Redis mode (`REDIS_URL=redis://127.0.0.1:6379 npm start`, or `REDIS_CLUSTER_NODES=host:port,… npm start`
 * for a Redis Cluster): the server-level and per-route rate limits share buckets, background jobs go to a
 * BullMQ queue, GraphQL subscriptions and `/ws/chat` reach clients of every instance. Needs
 * `npm install ioredis bullmq` (dev dependencies of this repository). docs/scaling.md.
 */
export async function redisOptions(connection: string | { cluster: { host: string; port: number }[] }): Promise<AppOptions> {
  const { Cluster, Redis } = await import('ioredis');
  // commandTimeout: a hung Redis answers 503 within 500 ms instead of holding requests (docs/scaling.md).
  const bounds = { maxRetriesPerRequest: 1, commandTimeout: 500 };
  const client = typeof connection === 'string' ? new Redis(connection, bounds) : new Cluster(connection.cluster, { redisOptions: bounds });
  client.on('error', (err) => console.error(`redis: ${err.message}`));
  // Readiness asks every shard of a cluster, not one node picked at random.
  const ping = client instanceof Cluster ? () => Promise.all(client.nodes('master').map((node) => node.ping())) : undefined;
  const store = new RedisStore({ sendCommand: (command, ...args) => client.call(command!, ...args) as Promise<unknown>, ping });
  return { rateLimit: { store }, background: bullmqBackground({ connection }), pubsub: new RedisPubSub({ connection }) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const redisUrl = process.env.REDIS_URL;
  const clusterNodes = process.env.REDIS_CLUSTER_NODES;
  if (redisUrl && clusterNodes) throw new Error('Give REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a Redis Cluster), not both');
  const redis = clusterNodes ? { cluster: parseClusterNodes(clusterNodes) } : redisUrl;
  const app = buildExampleApp({}, redis ? await redisOptions(redis) : {});
  const server = await app.listen();
  const mode = clusterNodes ? ` (Redis Cluster mode: ${clusterNodes})` : redisUrl ? ` (Redis mode: ${redisUrl})` : '';
  console.log(`keel example server on ${server.url}${mode} — try: curl ${server.url}/items`);
  // The documentation pages (Swagger UI, Redoc, the OpenAPI and AsyncAPI documents, GraphiQL), one per line.
  for (const [name, url] of Object.entries(documentationPages(app, server.url) ?? {})) console.log(`  ${name.padEnd(17)} ${url}`);
}
