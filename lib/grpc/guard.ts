/**
 * Server auth for gRPC calls from keel's own HTTP middleware (jwtAuth, apiKeyAuth): each middleware runs
 * against the call's headers as it would against an HTTP request; a middleware that answers (401/403 problem)
 * instead of calling next() rejects the call with the mapped gRPC status (401 → UNAUTHENTICATED 16,
 * 403 → PERMISSION_DENIED 7, 429 → RESOURCE_EXHAUSTED 8) and the problem's `detail` as grpc-message.
 * A `Retry-After` (rate limit) becomes the `grpc-retry-pushback-ms` trailer, gRPC's way of telling a client
 * when to retry (gRFC A6, "Pushback"): grpc-js and the other gRPC libraries honour it under a retry policy.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { KeelRequest, Middleware } from '../http/request.js';
import type { GrpcGuard, GrpcGuardContext } from './call.js';
import { GrpcError, grpcCodeForHttpStatus } from './status.js';

interface Captured {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Run one middleware; resolves `undefined` when it calls next(), the captured answer otherwise. */
function run(mw: Middleware, req: KeelRequest): Promise<Captured | undefined> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    // The small part of ServerResponse that sendProblem uses; enough for a middleware that rejects.
    const res = {
      statusCode: 200,
      headersSent: false,
      writableEnded: false,
      req,
      setHeader(k: string, v: unknown) {
        headers[k.toLowerCase()] = String(v);
        return res;
      },
      getHeader: (k: string) => headers[k.toLowerCase()],
      removeHeader: (k: string) => delete headers[k.toLowerCase()],
      end(body?: unknown) {
        res.writableEnded = true;
        res.headersSent = true;
        resolve({ status: res.statusCode, headers, body: body === undefined ? '' : String(body) });
        return res;
      },
    };
    try {
      mw(req, res as never, (err?: unknown) => (err ? reject(err) : resolve(undefined)));
    } catch (err) {
      reject(err);
    }
  });
}

function detailOf(c: Captured): string {
  try {
    const p = JSON.parse(c.body) as { detail?: unknown; title?: unknown };
    return String(p.detail ?? p.title ?? 'Rejected');
  } catch {
    return 'Rejected';
  }
}

/**
 * A GrpcGuard running `middlewares` in order; it returns `{ ...req.auth }` (JWT claims) plus `apiKey` when set.
 *
 * @example
 * attachGrpc(server, router, {}, { guard: guardFromMiddleware([jwtAuth({ secret })]) });
 */
export function guardFromMiddleware(middlewares: readonly Middleware[]): GrpcGuard {
  const chain = [...middlewares];
  return async function grpcMiddlewareGuard(ctx: GrpcGuardContext) {
    const headers: IncomingHttpHeaders = {};
    for (const [k, v] of Object.entries(ctx.headers)) if (!k.startsWith(':')) headers[k] = v;
    const req = { headers, method: 'POST', url: ctx.path, socket: { remoteAddress: ctx.peer } } as unknown as KeelRequest;
    for (const mw of chain) {
      const answer = await run(mw, req);
      if (answer) {
        const challenge = answer.headers['www-authenticate'];
        const retryAfter = Number(answer.headers['retry-after']);
        throw new GrpcError(grpcCodeForHttpStatus(answer.status), detailOf(answer), challenge ? { 'www-authenticate': challenge } : {}, {
          retryPushbackMs: retryAfter > 0 ? retryAfter * 1000 : undefined,
        });
      }
    }
    return { ...(req.auth ?? {}), ...(req.apiKey ? { apiKey: req.apiKey } : {}) };
  };
}
