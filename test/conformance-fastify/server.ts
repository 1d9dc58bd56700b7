/**
 * An implementation of keel's shipped conformance suite on another framework: Fastify 5 and its own
 * plugins (@fastify/cors, @fastify/jwt, @fastify/rate-limit, @fastify/compress), written from
 * docs/conformance.md alone, as a Fastify user would: each record of the manifest is mapped onto the
 * plugin that does that job, and what a plugin answers is left as the plugin answers it, except that
 * every error goes through one error handler that renders it as an RFC 9457 problem worded as the
 * page's table of framework-owned answers says. Validation is the worked example's Ajv module, in
 * the page's wording for the shipped suite (`validate(…, 'page')`).
 *
 *   keel-conformance --exec "node --import tsx test/conformance-fastify/server.ts {case_file} {port}"
 *
 * Its failures, category by category, and why, are in expectation.json beside it (a test checks them).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import cors from '@fastify/cors';
import jwt from '@fastify/jwt';
import rateLimit from '@fastify/rate-limit';
import compress from '@fastify/compress';
import { validate, type Json, type ManifestCase } from '../conformance-example/validation.js';

const [caseFile, port] = process.argv.slice(2);
if (!caseFile || !port) {
  process.stderr.write('usage: server.ts <case_file> <port>\n');
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(caseFile, 'utf8')) as { case_header: string; cases: ManifestCase[] };
const PROBLEM = 'https://fastify-impl.example/errors/';
const mw = (c: ManifestCase) => (c.handler.middleware ?? {}) as Record<string, Json | undefined>;
const first = <T>(pick: (c: ManifestCase) => T | undefined) => manifest.cases.map(pick).find((x) => x !== undefined);

function problemBody(status: number, slug: string, title: string, detail?: string, extra: Json = {}): Json {
  return { type: PROBLEM + slug, title, status, ...(detail !== undefined ? { detail } : {}), ...extra };
}
function sendProblem(reply: FastifyReply, status: number, slug: string, title: string, detail?: string, extra: Json = {}): FastifyReply {
  return reply.code(status).type('application/problem+json').send(problemBody(status, slug, title, detail, extra));
}

/** Routes as patterns over raw paths (for 405 and Allow, which Fastify does not answer: it says 404). */
const patterns = manifest.cases.map((c) => ({ method: c.method.toUpperCase(), rx: new RegExp(`^${c.route.split('/').map((s) => (/^\{\w+:path\}$/.test(s) ? '.+' : /^\{\w+(:\w+)?\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`) }));

const app = Fastify({
  logger: false,
  // Request ids (docs: X-Request-ID echoed, else a generated UUID): Fastify's own request id.
  requestIdHeader: 'x-request-id',
  genReqId: () => randomUUID(),
  routerOptions: { maxParamLength: 1000 },
  // Node's HTTP parser refuses an oversized header section before Fastify sees it: answer it as the page's 431 problem.
  clientErrorHandler: (err, socket) => {
    const code = (err as { code?: string }).code;
    const body = code === 'HPE_HEADER_OVERFLOW'
      ? JSON.stringify(problemBody(431, 'request-header-fields-too-large', 'Request Header Fields Too Large', 'The request header fields are too large'))
      : JSON.stringify(problemBody(400, 'bad-request', 'Bad Request'));
    const status = code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    else socket.destroy();
  },
});
// A JSON route reads JSON: Fastify's text/plain parser would hand the handler a string (the page: 415).
app.removeContentTypeParser('text/plain');

// JSON bodies: Fastify's parser; the content types it does not know are its 415.
await app.register(cors, {
  hook: 'onRequest',
  delegator: (req, cb) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const c = manifest.cases.find((x) => x.handler.cors && patterns[manifest.cases.indexOf(x)]!.rx.test(path));
    if (!c) return cb(null, { origin: false });
    const r = c.handler.cors as Json;
    const origins = (r.allowed_origins as string[]) ?? [];
    cb(null, {
      origin: origins.includes('*') ? '*' : origins,
      methods: (r.allowed_methods as string[]) ?? ['GET', 'HEAD', 'POST'],
      ...(r.allowed_headers ? { allowedHeaders: r.allowed_headers as string[] } : {}),
      ...(r.expose_headers ? { exposedHeaders: r.expose_headers as string[] } : {}),
      ...(r.allow_credentials ? { credentials: true } : {}),
      ...(r.max_age !== undefined ? { maxAge: r.max_age as number } : {}),
    });
  },
});

const jwtRecord = first((c) => mw(c).jwt_auth);
if (jwtRecord) {
  await app.register(jwt, {
    secret: String(jwtRecord.secret),
    verify: { algorithms: [String(jwtRecord.algorithm ?? 'HS256')] as ['HS256'], ...(jwtRecord.issuer ? { allowedIss: String(jwtRecord.issuer) } : {}), ...(jwtRecord.audience ? { allowedAud: jwtRecord.audience as string[] } : {}) },
  });
}
await app.register(rateLimit, { global: false, enableDraftSpec: true, errorResponseBuilder: (_req, ctx) => ({ statusCode: ctx.statusCode, ...problemBody(429, 'rate-limit-exceeded', 'Too Many Requests', `Rate limit exceeded, retry in ${ctx.after}`) }) });
await app.register(compress, { global: false });

// Every error as a problem: Fastify's own errors (body too large, media type, JSON syntax) and the plugins'.
app.setErrorHandler((err: FastifyError & { statusCode?: number }, req, reply) => {
  const status = err.statusCode ?? 500;
  if (status === 429) return reply.code(429).type('application/problem+json').send({ ...(err as unknown as Json), statusCode: undefined });
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    const limit = req.routeOptions.bodyLimit ?? 1_048_576;
    return sendProblem(reply, 413, 'payload-too-large', 'Payload Too Large', `Request body of ${req.headers['content-length']} bytes exceeds the limit of ${limit} bytes`, { limit });
  }
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendProblem(reply, 415, 'unsupported-media-type', 'Unsupported Media Type', 'Unsupported media type');
  if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (err as { name?: string }).name === 'SyntaxError') return sendProblem(reply, 400, 'bad-request', 'Bad Request', 'Malformed JSON');
  if (err.code?.startsWith('FST_JWT') || err.code?.startsWith('FAST_JWT')) return jwtProblem(err, req, reply);
  if (status >= 500) return sendProblem(reply, 500, 'internal-server-error', 'Internal Server Error', 'Internal server error');
  return sendProblem(reply, status, 'error', err.name, err.message);
});

/** @fastify/jwt's refusals, worded as docs/conformance.md's table says where the plugin says why. */
function jwtProblem(err: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('WWW-Authenticate', 'Bearer');
  const auth = req.headers.authorization;
  if (!auth) return sendProblem(reply, 401, 'unauthorized', 'Missing or invalid Authorization header', "Expected 'Authorization: Bearer <token>'");
  if (!/^Bearer\s/i.test(auth) || err.code === 'FST_JWT_BAD_REQUEST') return sendProblem(reply, 401, 'unauthorized', 'Invalid Authorization header format', "Authorization header must use Bearer scheme: 'Bearer <token>'");
  const parts = auth.split(' ')[1]?.split('.').length ?? 0;
  if (parts !== 3) return sendProblem(reply, 401, 'unauthorized', 'Malformed JWT token', `Malformed JWT token: expected 3 parts separated by dots, found ${parts}`);
  if (err.code === 'FST_JWT_AUTHORIZATION_TOKEN_EXPIRED') return sendProblem(reply, 401, 'unauthorized', 'JWT validation failed', 'Token has expired');
  const m = err.message;
  const detail = /signature/i.test(m) ? 'Token signature is invalid' : /aud/i.test(m) ? 'Token audience is invalid' : /iss/i.test(m) ? `Token issuer is invalid, expected '${String(jwtRecord?.issuer)}'` : /active|nbf/i.test(m) ? 'JWT not valid yet, not before claim is in the future' : 'Token is invalid';
  return sendProblem(reply, 401, 'unauthorized', 'JWT validation failed', detail);
}

app.setNotFoundHandler((req, reply) => {
  const path = req.url.split('?', 1)[0]!;
  const methods = new Set(patterns.filter((p) => p.rx.test(path)).map((p) => p.method));
  if (methods.has('GET')) methods.add('HEAD');
  if (methods.size) return sendProblem(reply.header('Allow', [...methods].sort().join(', ')), 405, 'method-not-allowed', 'Method Not Allowed', `${req.method} is not allowed for ${path}`);
  return sendProblem(reply, 404, 'not-found', 'Resource Not Found', `No route matches ${req.method} ${path}`);
});

// The page's RateLimit-Policy (@fastify/rate-limit sends its own RateLimit-* headers, not this one).
const policies = new Map(manifest.cases.filter((c) => mw(c).rate_limit).map((c) => [c.route_colon.replace(/\*\w+$/, '*'), mw(c).rate_limit!]));
app.addHook('onSend', async (req, reply) => {
  const rl = policies.get(req.routeOptions.url ?? '');
  if (rl) reply.header('RateLimit-Policy', `${Number(rl.burst)};w=${Number(rl.burst) / Number(rl.per_second)}`);
});

// Request ids: echo the incoming or generated id.
const requestIds = new Set(manifest.cases.filter((c) => mw(c).request_id?.enabled === true).map((c) => c.route_colon.replace(/\*\w+$/, '*')));
app.addHook('onSend', async (req, reply) => {
  if (requestIds.has(req.routeOptions.url ?? '')) reply.header('X-Request-ID', req.id);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const routes = new Map<string, ManifestCase[]>();
for (const c of manifest.cases) {
  const key = `${c.method.toUpperCase()} ${c.route_colon.replace(/\*\w+$/, '*')}`;
  routes.set(key, [...(routes.get(key) ?? []), c]);
}
for (const [key, cases] of routes) {
  const [method, url] = key.split(' ') as [string, string];
  const c0 = cases[0]!;
  const m = mw(c0);
  const limit = (m.body_limit?.max_bytes ?? c0.handler.max_body_size) as number | undefined;
  const rl = m.rate_limit;
  const comp = m.compression;
  const apiKey = m.api_key_auth;
  app.route({
    method: method as 'GET',
    url,
    ...(limit !== undefined ? { bodyLimit: limit } : {}),
    ...(rl ? { config: { rateLimit: { max: Number(rl.burst ?? 1), timeWindow: Math.ceil((1000 * Number(rl.burst ?? 1)) / Number(rl.per_second ?? 1)) } } } : {}),
    ...(comp ? { compress: { threshold: Number(comp.min_size ?? 1024), encodings: [...(comp.brotli !== false ? ['br' as const] : []), ...(comp.gzip !== false ? ['gzip' as const] : [])] } } : {}),
    onRequest: async (req, reply) => {
      const maxUri = c0.handler.max_uri_length as number | undefined;
      if (maxUri !== undefined && req.url.length > maxUri) return sendProblem(reply, 414, 'uri-too-long', 'URI Too Long', `Request URI exceeds ${maxUri} characters`);
      if (m.jwt_auth?.enabled) await req.jwtVerify();
      if (apiKey) {
        const name = String(apiKey.header_name ?? 'X-API-Key');
        const got = req.headers[name.toLowerCase()];
        reply.header('WWW-Authenticate', `ApiKey header="${name}"`);
        if (got === undefined) return sendProblem(reply, 401, 'unauthorized', 'Missing API key', `Expected '${name}' header with valid API key`);
        if (!(apiKey.keys as string[]).includes(String(got))) return sendProblem(reply, 401, 'unauthorized', 'Invalid API key', 'The provided API key is not valid');
        reply.removeHeader('WWW-Authenticate');
      }
      return undefined;
    },
    handler: async (req, reply) => {
      const id = req.headers[manifest.case_header.toLowerCase()];
      const c = cases.find((x) => x.id === id) ?? c0;
      const items = validate(c, req, 'page');
      if (items.length) return reply.code(422).type('application/problem+json').send(problemBody(422, 'validation-error', 'Request Validation Failed', `${items.length} validation error${items.length === 1 ? '' : 's'} in request`, { errors: items }));
      const timeout = mw(c).request_timeout;
      if (timeout) {
        const sleepMs = Number(timeout.sleep_ms ?? 0);
        if (sleepMs > Number(timeout.seconds) * 1000) {
          await sleep(Number(timeout.seconds) * 1000);
          return sendProblem(reply.header('Connection', 'close'), 408, 'request-timeout', 'Request Timeout', `The server did not answer within ${timeout.seconds} second${timeout.seconds === 1 ? '' : 's'}`, { timeout: timeout.seconds });
        }
        await sleep(sleepMs);
      }
      const answer = c.handler_response as ManifestCase['handler_response'] & { error?: { detail?: string; instance?: string } };
      if (answer.error) {
        if (answer.status >= 500) throw new Error('handler failed');
        const title = answer.status === 404 ? 'Resource Not Found' : (await import('node:http')).STATUS_CODES[answer.status] ?? 'Error';
        const slug = answer.status === 404 ? 'not-found' : undefined;
        return reply.code(answer.status).type('application/problem+json').send({ type: slug ? PROBLEM + slug : 'about:blank', title, status: answer.status, ...answer.error });
      }
      for (const [k, v] of Object.entries(answer.headers ?? {})) reply.header(k, v);
      reply.code(answer.status);
      return answer.body === undefined || answer.status === 204 ? reply.send() : reply.send(answer.body);
    },
  });
}

await app.listen({ host: '127.0.0.1', port: Number(port) });
const stop = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
