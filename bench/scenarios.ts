/**
 * The benchmark scenarios: one request shape each, the same for every peer, plus the schemas and
 * payloads every peer validates with its own mechanism (keel's records, Fastify's JSON schema,
 * Express + Ajv by hand, node:http + Ajv by hand).
 */
import { randomBytes } from 'node:crypto';

/** The peers, in table order. `node` is the hand-written ceiling. */
export const PEERS = ['keel', 'node', 'fastify', 'express', 'express-std', 'express-keel', 'keel-express', 'express4', 'keel-express4'] as const;
export type Peer = (typeof PEERS)[number];

export const PEER_LABELS: Record<Peer, string> = {
  keel: 'keel',
  node: 'node:http',
  fastify: 'Fastify 5',
  express: 'Express 5',
  'express-std': 'Express 5 + std middleware',
  'express-keel': 'Express 5 + keel factories',
  'keel-express': 'keel/express',
  express4: 'Express 4',
  'keel-express4': 'keel/express4',
};

/** The express-kit scenario's allowed CORS origin (the request sends it). */
export const KIT_ORIGIN = 'https://app.example.com';

/** HS256 secret shared by the JWT scenario's server and client (benchmark only). */
export const BENCH_JWT_SECRET = 'bench-secret-0123456789-abcdefghijklmnop';

/** Rate-limit budget so large that no benchmark ever hits it: the cost is the bookkeeping. */
export const HUGE_RATE = 1_000_000_000;

/** Why only keel runs the operations scenarios: they compare keel's hello with its metrics or spans on. */
const OPS_WHY: Partial<Record<Peer, string>> = {
  node: "compares keel's hello with metrics / spans on and off", fastify: "compares keel's hello with metrics / spans on and off", express: "compares keel's hello with metrics / spans on and off",
  'express-std': "compares keel's hello with metrics / spans on and off", 'express-keel': "compares keel's hello with metrics / spans on and off",
};

/** Why only keel runs the rate-limit store scenarios: they compare keel's memory and Redis stores. */
const STORE_WHY: Partial<Record<Peer, string>> = {
  node: 'compares keel\'s own stores', fastify: 'compares keel\'s own stores', express: 'compares keel\'s own stores', 'express-std': 'compares keel\'s own stores', 'express-keel': 'compares keel\'s own stores',
};

export interface ScenarioRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
}

export interface Scenario {
  id: string;
  title: string;
  request: ScenarioRequest;
  /** Peers with an equivalent (the others are reported as n/a, with `why`). */
  peers: readonly Peer[];
  why?: Partial<Record<Peer, string>>;
  /** A response check run once per peer before measuring, so no peer is timed serving errors. */
  check: (status: number, headers: Record<string, string | string[] | undefined>, body: Buffer) => string | null;
}

export const orderSchema = {
  type: 'object',
  required: ['customer', 'items'],
  properties: {
    customer: {
      type: 'object',
      required: ['id', 'name', 'email'],
      properties: {
        id: { type: 'integer', minimum: 1 },
        name: { type: 'string', minLength: 1, maxLength: 200 },
        email: { type: 'string', format: 'email' },
      },
    },
    items: {
      type: 'array',
      minItems: 1,
      maxItems: 5000,
      items: {
        type: 'object',
        required: ['sku', 'qty', 'price'],
        properties: {
          sku: { type: 'string', pattern: '^[A-Z]{2}-[0-9]+$' },
          qty: { type: 'integer', minimum: 1 },
          price: { type: 'number', minimum: 0 },
          note: { type: 'string', maxLength: 200 },
        },
      },
    },
  },
} as const;

/** A 20-member account as an API answers it (issue 45): strings, integers, numbers, booleans, a date-time, an enum. */
export const accountSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'login', 'name', 'email', 'plan', 'active', 'verified', 'balance', 'credit_limit', 'orders', 'created_at', 'updated_at', 'country', 'city', 'postcode', 'phone', 'locale', 'timezone', 'score', 'referrals'],
  properties: {
    id: { type: 'integer' }, login: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' },
    plan: { type: 'string', enum: ['free', 'pro', 'team'] }, active: { type: 'boolean' }, verified: { type: 'boolean' },
    balance: { type: 'number' }, credit_limit: { type: 'number' }, orders: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' },
    country: { type: 'string' }, city: { type: 'string' }, postcode: { type: 'string' }, phone: { type: 'string' },
    locale: { type: 'string' }, timezone: { type: 'string' }, score: { type: 'number' }, referrals: { type: 'integer' },
  },
} as const;

/** The row a handler returns from a variable: the 20 declared members and one the schema forbids. */
export const ACCOUNT_ROW = {
  id: 4242, login: 'ada', name: 'Ada Lovelace', email: 'ada@example.com', plan: 'pro', active: true, verified: true,
  balance: 1234.5, credit_limit: 5000, orders: 87, created_at: '2024-03-01T09:30:00.000Z', updated_at: '2026-11-30T17:05:12.000Z',
  country: 'GB', city: 'London', postcode: 'W1A 1AA', phone: '+44 20 7946 0000', locale: 'en-GB', timezone: 'Europe/London',
  score: 0.87, referrals: 12, internalNote: 'do not leak',
};

/** The problem body the problem scenario answers (RFC 9457). */
export const PROBLEM_404 = { type: 'https://keel.dev/problems/not-found', title: 'Not Found', status: 404, detail: 'no such account' };

/** The body limit of the too-large scenario: its order (~2 KB) is over it. */
export const SMALL_BODY_LIMIT = 1024;

/** Query parameters: q (required), limit 1..100 (default 10), offset ≥ 0 (default 0). */
export const searchQuerySchema = {
  type: 'object',
  required: ['q'],
  properties: {
    q: { type: 'string', minLength: 1, maxLength: 100 },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    offset: { type: 'integer', minimum: 0, default: 0 },
  },
} as const;

export const rpcAddParamsSchema = {
  type: 'object',
  required: ['a', 'b'],
  additionalProperties: false,
  properties: { a: { type: 'number' }, b: { type: 'number' } },
} as const;

export const GRAPHQL_SDL = `
type Post { id: Int, title: String }
type User { id: Int, name: String, email: String, posts: [Post] }
type Query { user: User }
`;
export const GRAPHQL_DATA = {
  user: { id: 1, name: 'Ada Lovelace', email: 'ada@example.com', posts: [{ id: 1, title: 'Notes' }, { id: 2, title: 'Engines' }] },
};
export const GRAPHQL_QUERY = '{ user { id name email posts { id title } } }';

/** A JSON order of about `bytes` bytes that passes `orderSchema`. */
export function orderOfSize(bytes: number): Buffer {
  const order: { customer: object; items: object[] } = { customer: { id: 7, name: 'Ada Lovelace', email: 'ada@example.com' }, items: [] };
  let i = 0;
  do {
    order.items.push({ sku: `AB-${1000 + i}`, qty: 1 + (i % 5), price: 9.5 + i, note: i % 3 ? 'gift wrap' : 'leave at the door' });
    i++;
  } while (JSON.stringify(order).length < bytes);
  return Buffer.from(JSON.stringify(order));
}

/** A small order that fails `orderSchema` twice: a bad e-mail and an item quantity of 0. */
export function invalidOrder(): Buffer {
  return Buffer.from(JSON.stringify({ customer: { id: 7, name: 'Ada Lovelace', email: 'not-an-email' }, items: [{ sku: 'AB-1000', qty: 0, price: 9.5 }] }));
}

/** The ~20 KB JSON document the compression scenario serves (compressible, like real API output). */
export function reportDocument(): { rows: { i: number; name: string; status: string; amount: number }[] } {
  const rows = [];
  for (let i = 0; i < 260; i++) rows.push({ i, name: `customer-${i}`, status: i % 4 ? 'active' : 'suspended', amount: (i * 37) % 1000 });
  return { rows };
}

/** The static file's size (the runner writes it to a temporary directory). */
export const STATIC_FILE_BYTES = 16 * 1024;
export const STATIC_FILE_NAME = 'app.css';
export function staticFileContent(): Buffer {
  const line = '.keel-bench { color: #0a3d62; margin: 0 auto; padding: 4px 8px; }\n';
  return Buffer.from(line.repeat(Math.ceil(STATIC_FILE_BYTES / line.length)).slice(0, STATIC_FILE_BYTES));
}

const BOUNDARY = '----keelbench7MA4YWxkTrZu0gW';
/** One text field and one 16 KB file, as a browser would send them. */
function multipartBody(): Buffer {
  const file = randomBytes(8 * 1024).toString('hex');
  return Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="title"\r\n\r\nquarterly report\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="report.txt"\r\nContent-Type: text/plain\r\n\r\n${file}\r\n` +
      `--${BOUNDARY}--\r\n`,
  );
}

const ALL: readonly Peer[] = PEERS.filter((p) => p !== 'express-std' && p !== 'express-keel' && p !== 'keel-express' && p !== 'express4' && p !== 'keel-express4');
/** The express-engine scenarios' peers: each Express major on express and on keel's entry, Fastify as the reference. */
const ENGINE: readonly Peer[] = ['express', 'keel-express', 'express4', 'keel-express4', 'fastify'];

/** Why the express-engine scenarios run only Express 5 and 4, keel/express and keel/express4, and Fastify. */
const ENGINE_WHY: Partial<Record<Peer, string>> = {
  keel: 'compares Express engines (keel/express is keel\'s)', node: 'compares Express engines', 'express-std': 'compares Express engines', 'express-keel': 'compares Express engines',
};
const json = (b: Buffer): unknown => JSON.parse(b.toString('utf8'));
const expectJson = (status: number, want: (v: any) => boolean) => (s: number, _h: unknown, b: Buffer) => {
  if (s !== status) return `status ${s}: ${b.toString('utf8').slice(0, 200)}`;
  try {
    return want(json(b)) ? null : `unexpected body ${b.toString('utf8').slice(0, 200)}`;
  } catch {
    return `not JSON: ${b.toString('utf8').slice(0, 200)}`;
  }
};

function jsonPost(path: string, body: Buffer, extra: Record<string, string> = {}): ScenarioRequest {
  return { method: 'POST', path, headers: { 'content-type': 'application/json', ...extra }, body };
}

/** Build the scenario list (`jwt` is the Bearer token the JWT scenario sends). */
export function scenarios(jwt: string): Scenario[] {
  const small = orderOfSize(100);
  const medium = orderOfSize(5 * 1024);
  const large = orderOfSize(150 * 1024);
  const nItems = (b: Buffer) => (json(b) as { items: unknown[] }).items.length;
  const orderCheck = (b: Buffer) => expectJson(200, (v) => v.ok === true && v.items === nItems(b));
  return [
    {
      id: 'hello', title: 'hello JSON (every feature off)', peers: ALL,
      request: { method: 'GET', path: '/hello' },
      check: expectJson(200, (v) => v.hello === 'world'),
    },
    {
      id: 'param', title: 'path parameter (integer)', peers: ALL,
      request: { method: 'GET', path: '/users/42' },
      check: expectJson(200, (v) => v.id === 42),
    },
    {
      id: 'query', title: 'query parameters, validated', peers: ALL,
      request: { method: 'GET', path: '/search?q=anchor&limit=25' },
      check: expectJson(200, (v) => v.q === 'anchor' && v.limit === 25 && v.offset === 0),
    },
    { id: 'json-100b', title: `JSON body ${small.length} B, schema`, peers: ALL, request: jsonPost('/orders', small), check: orderCheck(small) },
    { id: 'json-5kb', title: `JSON body ${(medium.length / 1024).toFixed(1)} KB, schema`, peers: ALL, request: jsonPost('/orders', medium), check: orderCheck(medium) },
    { id: 'json-150kb', title: `JSON body ${(large.length / 1024).toFixed(0)} KB, schema`, peers: ALL, request: jsonPost('/orders', large), check: orderCheck(large) },
    {
      // Issue 45: a 20-member answer with its response schema, the handler returning a row (one member the
      // schema forbids) from a variable: keel serialises from the schema after its check, Fastify from the schema.
      id: 'response-schema', title: '20-member JSON answer with its response schema (undeclared member dropped)', peers: ['keel', 'fastify'],
      why: { node: 'compares response serialisers', express: 'Express has no response schemas' },
      request: { method: 'GET', path: '/accounts/4242' },
      check: expectJson(200, (v) => Object.keys(v).length === 20 && v.internalNote === undefined && v.id === 4242),
    },
    {
      // The same route with response_validation: 'off': JSON.stringify as keel wrote it before issue 45 (in production).
      id: 'response-schema-off', title: "20-member JSON answer, response_validation: 'off' (keel before issue 45)", peers: ['keel'],
      why: { fastify: 'keel against itself', node: 'keel against itself', express: 'keel against itself' },
      request: { method: 'GET', path: '/accounts/4242' },
      check: expectJson(200, (v) => Object.keys(v).length === 21),
    },
    {
      id: 'problem', title: 'a 404 problem body (RFC 9457) from a route with a response schema', peers: ['keel', 'fastify'],
      why: { node: 'compares response serialisers', express: 'Express has no response schemas' },
      request: { method: 'GET', path: '/accounts/7' },
      check: (s, h, b) => (s !== 404 ? `status ${s}` : !String(h['content-type']).startsWith('application/problem+json') ? `type ${String(h['content-type'])}` : (json(b) as { status?: number }).status !== 404 ? 'bad body' : null),
    },
    {
      // A client's bad request (issue 48): the json-100b order with a zero quantity and a bad e-mail, so
      // two schema errors. keel answers its 422 problem (errors listed), Fastify its 400, Express and
      // node:http + Ajv a 422 problem built from Ajv's errors.
      id: 'json-invalid', title: 'JSON body failing its schema (keel 422 problem, Fastify 400)', peers: ALL,
      request: jsonPost('/orders', invalidOrder()),
      check: (s, _h, b) => (s !== 422 && s !== 400 ? `status ${s}: ${b.toString('utf8').slice(0, 200)}` : b[0] !== 0x7b ? `not a JSON object: ${b.toString('utf8').slice(0, 200)}` : null),
    },
    {
      // Issue 48: a method the path does not serve. keel answers its 405 problem with Allow by itself;
      // Fastify (which answers 404 there) and Express with a 405 handler written once for the app, node:http by hand.
      id: 'method-not-allowed', title: 'a method the path does not serve (405 problem with Allow)', peers: ALL,
      request: { method: 'DELETE', path: '/hello' },
      check: (s, h, b) => (s !== 405 ? `status ${s}: ${b.toString('utf8').slice(0, 200)}` : !/\bGET\b/.test(String(h.allow)) ? `Allow ${String(h.allow)}` : b[0] !== 0x7b ? 'not a JSON object' : null),
    },
    {
      // Issue 48: a body over the limit (SMALL_BODY_LIMIT), refused on its Content-Length before it is read.
      // keel, Express and node:http answer and read the rest on the same connection; Fastify answers with
      // `Connection: close` (content-type-parser.js), so its figure includes a new connection per request.
      id: 'too-large', title: `JSON body over a ${SMALL_BODY_LIMIT} B limit (413)`, peers: ALL,
      request: jsonPost('/orders', orderOfSize(2 * SMALL_BODY_LIMIT)),
      check: (s, _h, b) => (s !== 413 ? `status ${s}: ${b.toString('utf8').slice(0, 200)}` : null),
    },
    {
      id: 'form', title: 'urlencoded form', peers: ALL,
      request: {
        method: 'POST', path: '/form', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: Buffer.from('name=Ada+Lovelace&email=ada%40example.com&age=36&plan=pro&newsletter=on&comment=hello%20world'),
      },
      check: expectJson(200, (v) => v.name === 'Ada Lovelace' && v.fields === 6),
    },
    {
      id: 'multipart', title: 'multipart upload (16 KB file)', peers: ALL,
      request: { method: 'POST', path: '/upload', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body: multipartBody() },
      check: expectJson(200, (v) => v.title === 'quarterly report' && v.size === 16 * 1024),
    },
    {
      id: 'jwt', title: 'JWT-protected route (HS256)', peers: ALL,
      request: { method: 'GET', path: '/me', headers: { authorization: `Bearer ${jwt}` } },
      check: expectJson(200, (v) => v.sub === 'user-42'),
    },
    {
      id: 'compress', title: '20 KB JSON, gzip', peers: ALL,
      request: { method: 'GET', path: '/report', headers: { 'accept-encoding': 'gzip' } },
      check: (s, h, b) => (s !== 200 ? `status ${s}` : h['content-encoding'] !== 'gzip' ? `not gzip (${String(h['content-encoding'])})` : b.length > 8000 ? `compressed body too large: ${b.length}` : null),
    },
    {
      id: 'static', title: `static file (${STATIC_FILE_BYTES / 1024} KB)`, peers: ALL,
      request: { method: 'GET', path: `/static/${STATIC_FILE_NAME}` },
      check: (s, _h, b) => (s !== 200 ? `status ${s}` : b.length !== STATIC_FILE_BYTES ? `length ${b.length}` : null),
    },
    {
      id: 'full', title: 'full default stack (request id, security headers, rate limit, compression, body limit, timeout)',
      peers: ['keel', 'fastify', 'express-std'],
      why: { node: 'no hand-written equivalent of the whole stack', express: 'Express alone has no stack; see Express + std middleware' },
      request: { method: 'GET', path: '/hello' },
      check: (s, h, b) => (s !== 200 ? `status ${s}` : !h['x-request-id'] ? 'no X-Request-ID' : !h['x-content-type-options'] ? 'no security headers' : (json(b) as { hello?: string }).hello !== 'world' ? 'bad body' : null),
    },
    {
      // What a legacy app pays per request for the four packages keel replaces, and for keel's four
      // factories under the same policy: Express 5 bare (the baseline), with cors + helmet +
      // compression + express-rate-limit ("std" here), and with keel's cors, securityHeaders,
      // compression and rateLimit given the very same package options.
      id: 'express-kit', title: 'Express 5: cors + helmet + compression + rate limit, packages vs keel factories',
      peers: ['express', 'express-std', 'express-keel'],
      why: { keel: 'the kit is measured inside Express (Express 5 + keel factories)' },
      request: { method: 'GET', path: '/hello', headers: { origin: KIT_ORIGIN, 'accept-encoding': 'gzip, deflate, br' } },
      check: expectJson(200, (v) => v.hello === 'world'),
    },
    {
      // One Express app (bench/peers/express-engine.ts) on express@5 and on keel/express, Fastify as the
      // reference: 40 resources in an express.Router at /api/:version, app.param + router.param, express.json,
      // cookie-parser and an error handler; the request hits the 38th resource's GET /:id with a cookie.
      id: 'express-engine', title: 'Express app (40 resources in a Router, params, json, cookie-parser): express@5 vs keel/express',
      peers: ENGINE,
      why: ENGINE_WHY,
      request: { method: 'GET', path: '/api/v1/r37/42', headers: { cookie: 'session=abc123; theme=dark', accept: 'application/json' } },
      check: expectJson(200, (v) => v.resource === 'r37' && v.id === 42 && v.version === 1 && v.session === 'abc123'),
    },
    {
      id: 'express-engine-hello', title: "Express hello world (res.send('Hello World!')): express@5 vs keel/express",
      peers: ENGINE,
      why: ENGINE_WHY,
      request: { method: 'GET', path: '/' },
      check: (status, _h, body) => (status === 200 && body.toString() === 'Hello World!' ? null : `status ${status}: ${body.toString().slice(0, 100)}`),
    },
    {
      // docs/operations.md: hello with ServerConfig.metrics (and readiness) on: a counter and a histogram per request.
      id: 'hello-metrics', title: 'hello JSON, Prometheus metrics on (prom-client)', peers: ['keel'],
      why: OPS_WHY,
      request: { method: 'GET', path: '/hello' },
      check: expectJson(200, (v) => v.hello === 'world'),
    },
    {
      // hello with ServerConfig.opentelemetry on and an OTel SDK registered (BasicTracerProvider, batch processor,
      // an exporter that drops the batch): one recorded SERVER span per request, the SDK's cost included.
      id: 'hello-otel', title: 'hello JSON, OpenTelemetry spans on (SDK registered)', peers: ['keel'],
      why: OPS_WHY,
      request: { method: 'GET', path: '/hello', headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } },
      check: expectJson(200, (v) => v.hello === 'world'),
    },
    {
      id: 'ratelimit', title: 'per-route rate limit, memory store', peers: ['keel'],
      why: STORE_WHY,
      request: { method: 'GET', path: '/limited' },
      check: (s, h) => (s !== 200 ? `status ${s}` : !h['ratelimit'] ? 'no RateLimit header' : null),
    },
    {
      id: 'ratelimit-redis', title: 'per-route rate limit, RedisStore (shared by instances; Lua script per request)', peers: ['keel'],
      why: STORE_WHY,
      request: { method: 'GET', path: '/limited' },
      check: (s, h) => (s !== 200 ? `status ${s}` : !h['ratelimit'] ? 'no RateLimit header' : null),
    },
    {
      id: 'jsonrpc', title: 'JSON-RPC call (params schema)', peers: ALL,
      request: jsonPost('/rpc', Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'math.add', params: { a: 2, b: 3 }, id: 1 }))),
      check: expectJson(200, (v) => v.result === 5 && v.id === 1),
    },
    {
      id: 'graphql', title: 'GraphQL query', peers: ALL,
      request: jsonPost('/graphql', Buffer.from(JSON.stringify({ query: GRAPHQL_QUERY })), { accept: 'application/graphql-response+json, application/json' }),
      check: expectJson(200, (v) => v.data?.user?.posts?.length === 2 && v.data.user.name === 'Ada Lovelace'),
    },
  ];
}

/** The `--quick` selection: hello and the full stack, keel against Fastify. */
export const QUICK = { scenarios: ['hello', 'full'], peers: ['keel', 'fastify'] as Peer[] };
