/**
 * The ceiling: node:http by hand, with the libraries a careful author would reach for (Ajv, busboy,
 * jose, zlib, graphql-http's node adapter, jayson) and nothing else.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzip } from 'node:zlib';
import busboy from 'busboy';
import { jwtVerify } from 'jose';
import { createHandler } from 'graphql-http/lib/use/http';
import { BENCH_JWT_SECRET, reportDocument, SMALL_BODY_LIMIT, STATIC_FILE_NAME } from '../scenarios.js';
import { graphqlRoot, graphqlSchema, rpcServer, validateOrder, validateSearch, validationProblem } from './shared.js';
import type { PeerContext } from './types.js';

type H = (req: IncomingMessage, res: ServerResponse) => void;

function send(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function readBody(req: IncomingMessage, limit: number, cb: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size > limit) {
      req.destroy();
      return cb(new Error('too large'), Buffer.alloc(0));
    }
    chunks.push(c);
  });
  req.on('end', () => cb(null, Buffer.concat(chunks)));
}

function routes(scenario: string, ctx: PeerContext): H {
  const secret = new TextEncoder().encode(BENCH_JWT_SECRET);
  switch (scenario) {
    case 'hello':
      return (_req, res) => send(res, 200, JSON.stringify({ hello: 'world' }));
    case 'method-not-allowed':
      return (req, res) => {
        const path = (req.url ?? '/').split('?', 1)[0]!;
        if (path !== '/hello') return send(res, 404, '{}');
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          res.setHeader('allow', 'GET, HEAD');
          return send(res, 405, JSON.stringify({ type: 'about:blank', title: 'Method Not Allowed', status: 405, detail: `${req.method} is not allowed for ${path}` }), 'application/problem+json');
        }
        send(res, 200, JSON.stringify({ hello: 'world' }));
      };
    case 'too-large':
      return (req, res) => {
        // Refused on its Content-Length; the rest of the body is read and dropped, so the connection goes on.
        if (Number(req.headers['content-length']) > SMALL_BODY_LIMIT) {
          req.resume();
          return send(res, 413, JSON.stringify({ type: 'about:blank', title: 'Payload Too Large', status: 413 }), 'application/problem+json');
        }
        send(res, 400, '{}');
      };
    case 'param':
      return (req, res) => {
        const m = /^\/users\/(\d+)$/.exec(req.url ?? '');
        if (!m) return send(res, 404, '{}');
        send(res, 200, JSON.stringify({ id: Number(m[1]) }));
      };
    case 'query':
      return (req, res) => {
        const url = req.url ?? '';
        const q = Object.fromEntries(new URLSearchParams(url.slice(url.indexOf('?') + 1)));
        if (!validateSearch(q)) return send(res, 422, validationProblem(validateSearch.errors), 'application/problem+json');
        send(res, 200, JSON.stringify({ q: q.q, limit: q.limit, offset: q.offset }));
      };
    case 'json-100b':
    case 'json-5kb':
    case 'json-150kb':
    case 'json-invalid':
      return (req, res) =>
        readBody(req, 1024 * 1024, (err, raw) => {
          if (err) return send(res, 413, '{}');
          let body: { items: unknown[] };
          try {
            body = JSON.parse(raw.toString('utf8'));
          } catch {
            return send(res, 400, '{}');
          }
          if (!validateOrder(body)) return send(res, 422, validationProblem(validateOrder.errors), 'application/problem+json');
          send(res, 200, JSON.stringify({ ok: true, items: body.items.length }));
        });
    case 'form':
      return (req, res) =>
        readBody(req, 1024 * 1024, (_err, raw) => {
          const f = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
          send(res, 200, JSON.stringify({ name: f.name, fields: Object.keys(f).length }));
        });
    case 'multipart':
      return (req, res) => {
        const fields: Record<string, string> = {};
        let size = 0;
        const bb = busboy({ headers: req.headers });
        bb.on('field', (name, value) => (fields[name] = value));
        bb.on('file', (_name, stream) => {
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => (size = Buffer.concat(chunks).length));
        });
        bb.on('close', () => send(res, 200, JSON.stringify({ title: fields.title, size })));
        req.pipe(bb);
      };
    case 'jwt':
      return (req, res) => {
        const auth = req.headers.authorization ?? '';
        if (!auth.startsWith('Bearer ')) return send(res, 401, '{}');
        jwtVerify(auth.slice(7), secret, { algorithms: ['HS256'] }).then(
          ({ payload }) => send(res, 200, JSON.stringify({ sub: payload.sub })),
          () => send(res, 401, '{}'),
        );
      };
    case 'compress': {
      const doc = reportDocument();
      return (req, res) => {
        const body = JSON.stringify(doc);
        if (!/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) return send(res, 200, body);
        gzip(body, { level: 6 }, (_err, zipped) => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', vary: 'Accept-Encoding', 'content-length': zipped.length });
          res.end(zipped);
        });
      };
    }
    case 'static': {
      const file = join(ctx.staticDir, STATIC_FILE_NAME);
      return (_req, res) => {
        const st = statSync(file);
        res.writeHead(200, {
          'content-type': 'text/css; charset=utf-8',
          'content-length': st.size,
          'last-modified': st.mtime.toUTCString(),
          etag: `W/"${st.size.toString(16)}-${st.mtimeMs.toString(16)}"`,
        });
        createReadStream(file).pipe(res);
      };
    }
    case 'jsonrpc':
      return (req, res) =>
        readBody(req, 1024 * 1024, (_err, raw) => {
          rpcServer.call(raw.toString('utf8'), (error: unknown, success: unknown) => send(res, 200, JSON.stringify(error ?? success)));
        });
    case 'graphql':
      return createHandler({ schema: graphqlSchema, rootValue: graphqlRoot }) as unknown as H;
    default:
      throw new Error(`node: no ${scenario} scenario`);
  }
}

export async function start(scenario: string, ctx: PeerContext): Promise<number> {
  const server = http.createServer(routes(scenario, ctx));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}
