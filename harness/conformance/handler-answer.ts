/**
 * What a case's handler answers, and nothing the framework owns: the one thing the harness tells a
 * server about a case's answer (the manifest's `handler_response`), and what keel's fixture app's
 * handlers return. Decided here once so the two cannot drift apart.
 *
 * - a successful case (status < 400): its status, body, cookies and the headers a handler sets
 *   (never framework headers such as CORS, request ids, Content-Encoding, Retry-After; a
 *   `<<present>>` / `<<uuid>>` handler header gets a made-up value, as an application would);
 * - an error only the application can know (404 on a request its route matches, 409, 5xx): the
 *   handler raises it (`error`: the status, and the detail and instance it gives; a 500 gives none);
 * - any other error (400, 401, 403, 405, 408, 413, 414, 415, 422, 429, 431, a 404 no route matches):
 *   the framework must answer before the handler runs, so the handler is only told to say it was
 *   reached (HANDLER_REACHED, status 200). The expected error itself is never handed over.
 */
import { randomUUID } from 'node:crypto';
import type { ConformanceCase } from './types.js';

/** Statuses keel (not the handler) is responsible for producing. */
export const FRAMEWORK_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 405, 406, 408, 411, 413, 414, 415, 422, 429, 431]);
/** Response headers a handler never sets: they belong to the framework's middleware. */
const FRAMEWORK_HEADERS = /^(content-encoding|content-length|transfer-encoding|vary|access-control-.*|x-content-type-options|x-frame-options|x-xss-protection|strict-transport-security|retry-after|x-ratelimit-.*|ratelimit.*|x-response-time|connection|upgrade|sec-websocket-.*)$/i;
/** The marker body of a handler that should never have been reached. */
export const HANDLER_REACHED = Object.freeze({ fixture: 'handler reached', note: 'the framework should have answered this request before the handler ran' });

type Json = Record<string, unknown>;

/** A handler's answer (the manifest's `handler_response`). */
export interface HandlerAnswer {
  status: number;
  headers?: Record<string, string>;
  /** The JSON body (absent: no body, or not asserted by the case). */
  body?: unknown;
  /** Response cookies as the case writes them (`{name: {value, path, httponly, …}}`). */
  cookies?: Record<string, unknown>;
  /** A streamed body (`{content_type, chunks: [{value} | {base64}]}`), sent instead of `body`. */
  streaming?: Json;
  /** The handler raises this error instead of answering (the framework renders it as a problem). */
  error?: { detail?: string; instance?: string };
  /** Milliseconds the handler takes before answering (`request_timeout.sleep_ms`). */
  sleep_ms?: number;
}

function routeRegex(route: string): RegExp {
  const src = route.split(/(\{[^}]+\})/).map((part) => {
    if (!part.startsWith('{')) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
    return part.includes(':path') ? '.+' : '[^/]+';
  });
  return new RegExp(`^${src.join('')}$`);
}

/** True when a failing status is the application's to produce (see the module comment). */
export function isHandlerOwnedError(c: ConformanceCase): boolean {
  const status = c.expected.status_code;
  if (status < 400) return false;
  // A case without handler.route (loader.ts, impliedHandler) declares no record for the framework to
  // act on: whatever status it expects, only its application can produce it.
  if (c.handler.implied === true) return true;
  if (FRAMEWORK_STATUSES.has(status)) return false;
  if (status === 404) {
    // Routing 404s are the framework's; a 404 on a request that matches the route is the handler's answer.
    // A route made a WebSocket endpoint (a `websocket` record) has no HTTP handler to answer a plain request.
    const ws = (c.handler.middleware as Json | undefined)?.websocket as Json | undefined;
    if (ws !== undefined && ws !== null && ws.enabled !== false) return false;
    const path = c.request.path.split('?', 1)[0]!;
    return c.request.method.toUpperCase() === c.handler.method.toUpperCase() && routeRegex(c.handler.route).test(path);
  }
  return true;
}

/** True when the case's expected answer is the framework's, not the handler's (status ≥ 400 it must produce). */
export function isFrameworkOwnedError(c: ConformanceCase): boolean {
  return c.expected.status_code >= 400 && !isHandlerOwnedError(c);
}

function errorDetail(body: unknown): string | undefined {
  if (typeof body === 'string') return body;
  const b = (body ?? {}) as Json;
  for (const k of ['detail', 'message', 'error']) if (typeof b[k] === 'string') return b[k] as string;
  return undefined;
}

/** The handler-owned headers of a successful case (see the module comment). */
function handlerHeaders(c: ConformanceCase, error = false): Record<string, string> {
  const mw = (c.handler.middleware ?? {}) as Json;
  // X-Request-ID is the framework's when the case turns request ids on; otherwise a literal one is the handler's.
  const requestIdIsFrameworks = mw.request_id !== undefined;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(c.expected.headers ?? {})) {
    const value = String(v);
    // Retry-After on an error the application raises (a 503, RFC 9110 §10.2.3) is the application's.
    const own = error && /^retry-after$/i.test(k);
    if ((!own && FRAMEWORK_HEADERS.test(k)) || (requestIdIsFrameworks && /^x-request-id$/i.test(k))) continue;
    if (value === '<<present>>' || value === '<<uuid>>') {
      headers[k] = /^set-cookie$/i.test(k) ? `session=${randomUUID()}; Path=/; HttpOnly` : randomUUID();
    } else if (!value.startsWith('<<') && !value.includes('.*')) headers[k] = value;
  }
  return headers;
}

/** The answer of one case's handler (see the module comment). */
export function handlerAnswer(c: ConformanceCase): HandlerAnswer {
  const mw = (c.handler.middleware ?? {}) as Json;
  const sleepMs = Number((mw.request_timeout as Json | undefined)?.sleep_ms ?? 0);
  const sleep = sleepMs > 0 ? { sleep_ms: sleepMs } : {};
  const status = c.expected.status_code;
  if (status >= 400) {
    if (!isHandlerOwnedError(c)) return { status: 200, body: { ...HANDLER_REACHED }, ...sleep };
    // A failure's detail is the application's secret: a 500 is raised with nothing to tell.
    if (status === 500) return { status, error: {}, ...sleep };
    const body = c.expected.body as Json | undefined;
    const detail = errorDetail(body);
    const instance = body?.instance;
    const headers = handlerHeaders(c, true);
    return { status, error: { ...(detail !== undefined ? { detail } : {}), ...(typeof instance === 'string' ? { instance } : {}) }, ...(Object.keys(headers).length ? { headers } : {}), ...sleep };
  }
  const headers = handlerHeaders(c);
  const streaming = c.extra.streaming as Json | undefined;
  const cookies = c.expected.cookies as Record<string, unknown> | undefined;
  return {
    status,
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(c.expected.body !== undefined ? { body: c.expected.body } : {}),
    ...(cookies && Object.keys(cookies).length ? { cookies } : {}),
    ...(streaming && Array.isArray(streaming.chunks) ? { streaming } : {}),
    ...sleep,
  };
}
