/**
 * keel's fixture app: a keel App built from cases' handler definitions, so that keel itself
 * produces every framework-owned response (corpus README, "Earning a pass").
 *
 * What the generated handler does, and nothing more:
 * - successful case (status < 400): returns the expected body, status, handler-owned headers
 *   (never framework headers such as CORS, request ids, Content-Encoding; a `<<present>>`
 *   handler header gets a made-up value) and cookies;
 * - an error only the application can know (404 on a route that matched, 409, 5xx): throws, so
 *   keel renders it (a plain Error for 500, so keel must not leak it; HttpError otherwise);
 * - any other error (400, 401, 403, 405, 408, 413, 415, 422, 429, ...): answers 200 with a marker
 *   body. keel must have answered before the handler; if it did not, the diff says so.
 * Records (`jwt_auth`, `cors`, `rate_limit`, ...) go to keel's per-route records unchanged except
 * for the corpus's test-driver keys (`sleep_ms`, `warmup_*`, `max_bytes`, `allow_*` spellings).
 * A `websocket` record makes the route a keel WebSocket endpoint instead, and a WebSocket session
 * case's handler becomes an `app.ws(route, jsonWebSocket(...))` endpoint (fixture-ws.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { App, type ServerConfigInput } from '../../lib/app.js';
import type { KeelRouter } from '../../lib/dispatch.js';
import { HttpError } from '../../lib/errors.js';
import { logLevelFromEnv } from '../../lib/log-level.js';
import { response, type HandlerFunction, type ResponseCookie } from '../../lib/handler.js';
import type { CaseTarget } from './runner.js';
import { withCorpusErrorStyle } from './error-style.js';
import { registerCaseHooks } from './fixture-hooks.js';
import { registerJsonWebSocket, registerWebSocket, websocketEnabled, type SessionCounters } from './fixture-ws.js';
import { isWebSocketCase, type ConformanceCase, type RunnableCase, type WebSocketCase } from './types.js';

/** Statuses keel (not the handler) is responsible for producing. */
export const FRAMEWORK_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 405, 406, 408, 411, 413, 414, 415, 422, 429, 431]);
/** Response headers a handler never sets: they belong to keel's middleware. */
const FRAMEWORK_HEADERS = /^(content-encoding|content-length|transfer-encoding|vary|access-control-.*|x-content-type-options|x-frame-options|x-xss-protection|strict-transport-security|retry-after|x-ratelimit-.*|ratelimit.*|x-response-time)$/i;
/** The marker body of a handler that should never have been reached. */
export const HANDLER_REACHED = Object.freeze({ fixture: 'handler reached', note: 'keel should have answered this request before the handler ran' });

type Json = Record<string, unknown>;

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
  if (status < 400 || FRAMEWORK_STATUSES.has(status)) return false;
  if (status === 404) {
    // Routing 404s are keel's; a 404 on a request that matches the route is the handler's answer.
    const path = c.request.path.split('?', 1)[0]!;
    return c.request.method.toUpperCase() === c.handler.method.toUpperCase() && routeRegex(c.handler.route).test(path);
  }
  return true;
}

function errorDetail(body: unknown): string | undefined {
  if (typeof body === 'string') return body;
  const b = (body ?? {}) as Json;
  for (const k of ['detail', 'message', 'error']) if (typeof b[k] === 'string') return b[k] as string;
  return undefined;
}

function responseCookies(spec: Json | undefined): ResponseCookie[] {
  return Object.entries(spec ?? {}).map(([name, raw]) => {
    const c = (raw && typeof raw === 'object' ? raw : { value: raw }) as Json;
    const sameSite = typeof c.samesite === 'string' ? ((c.samesite[0]!.toUpperCase() + c.samesite.slice(1).toLowerCase()) as ResponseCookie['sameSite']) : undefined;
    return {
      name,
      value: String(c.value ?? ''),
      ...(typeof c.max_age === 'number' ? { maxAge: c.max_age } : {}),
      ...(typeof c.path === 'string' ? { path: c.path } : {}),
      ...(typeof c.domain === 'string' ? { domain: c.domain } : {}),
      ...(c.secure === true ? { secure: true } : {}),
      ...(c.httponly === true ? { httpOnly: true } : {}),
      ...(sameSite ? { sameSite } : {}),
    };
  });
}

/** The handler of one case (see the module comment). */
export function caseHandler(c: ConformanceCase): HandlerFunction {
  const expected = c.expected;
  const mw = (c.handler.middleware ?? {}) as Json;
  const sleepMs = Number((mw.request_timeout as Json | undefined)?.sleep_ms ?? 0);
  const status = expected.status_code;
  const headers: Record<string, string> = {};
  // X-Request-ID is keel's when the case turns request ids on; otherwise a literal one is the handler's.
  const requestIdIsKeels = mw.request_id !== undefined;
  for (const [k, v] of Object.entries(expected.headers ?? {})) {
    const value = String(v);
    if (FRAMEWORK_HEADERS.test(k) || (requestIdIsKeels && /^x-request-id$/i.test(k))) continue;
    if (value === '<<present>>' || value === '<<uuid>>') {
      // A handler-owned header the case only asks to exist: the app makes up a value, as an app would.
      headers[k] = /^set-cookie$/i.test(k) ? `session=${randomUUID()}; Path=/; HttpOnly` : randomUUID();
    } else if (!value.startsWith('<<') && !value.includes('.*')) headers[k] = value;
  }
  const streaming = c.extra.streaming as { content_type?: string; chunks?: Array<{ type?: string; value?: string; base64?: string }> } | undefined;
  const cookies = responseCookies(expected.cookies as Json | undefined);
  const owned = isHandlerOwnedError(c);
  return async () => {
    if (sleepMs > 0) await sleep(sleepMs);
    if (status >= 400) {
      if (!owned) return response(HANDLER_REACHED, { status: 200 });
      if (status === 500) throw new Error('fixture handler failure (must not reach the client)');
      // The handler's own problem: its detail and, when the case shows one, its instance (RFC 9457 §3.1.5).
      const instance = (expected.body as Json | undefined)?.instance;
      throw new HttpError(status, errorDetail(expected.body), typeof instance === 'string' ? { instance } : {});
    }
    if (streaming?.chunks) {
      const chunks = streaming.chunks.map((ch) => (typeof ch.base64 === 'string' ? Buffer.from(ch.base64, 'base64') : String(ch.value ?? '')));
      const h = streaming.content_type ? { 'Content-Type': streaming.content_type, ...headers } : headers;
      return response((async function* () { yield* chunks; })(), { status, headers: h, cookies });
    }
    return response(expected.body === undefined ? null : expected.body, { status, headers, cookies });
  };
}

/** Rename the corpus's CORS spellings (`allow_origins`) to the CorsConfig record's (`allowed_origins`). */
function corsRecord(input: unknown): unknown {
  if (!input || typeof input !== 'object') return input;
  return Object.fromEntries(Object.entries(input as Json).map(([k, v]) => [k.replace(/^allow_(origins|methods|headers)$/, 'allowed_$1'), v]));
}

function omit(record: unknown, keys: readonly string[]): unknown {
  if (!record || typeof record !== 'object') return record;
  return Object.fromEntries(Object.entries(record as Json).filter(([k]) => !keys.includes(k)));
}

/** Route input for `app.route()` from a case's handler definition. */
export function routeFor(c: ConformanceCase): Record<string, unknown> {
  const h = c.handler;
  const mw = (h.middleware ?? {}) as Json;
  const def: Json = { method: h.method, path: h.route, handler: caseHandler(c) };
  // The corpus words a parameter's constraint errors by how it declares it (error-style.ts).
  if (h.parameters) def.parameters = withCorpusErrorStyle(h.parameters as Record<string, unknown>);
  if (h.body_schema) def.body_schema = h.body_schema;
  const cors = mw.cors ?? h.cors;
  if (cors) def.cors = corsRecord(cors);
  for (const key of ['jwt_auth', 'api_key_auth', 'authorization', 'request_id', 'compression', 'lifecycle_hooks']) {
    if (mw[key] !== undefined) def[key] = mw[key];
  }
  // warmup_* and sleep_ms_between drive the runner, not the limiter.
  if (mw.rate_limit !== undefined) def.rate_limit = omit(mw.rate_limit, ['warmup_requests', 'warmup_expect_status', 'sleep_ms_between']);
  const bodyLimit = (mw.body_limit as Json | undefined)?.max_bytes ?? h.max_body_size;
  if (bodyLimit !== undefined) def.max_body_size = bodyLimit;
  const timeout = (mw.request_timeout as Json | undefined)?.seconds;
  if (timeout !== undefined) def.request_timeout = timeout;
  return def;
}

interface StaticSpec {
  route_prefix: string;
  index_file?: boolean;
  cache_control?: string | null;
  files?: Array<{ path: string; content: string }>;
}

/** Write a case's static files under `root`; returns StaticFilesConfig records. */
function writeStatic(specs: readonly StaticSpec[], root: string): Json[] {
  return specs.map((s, i) => {
    const dir = join(root, String(i));
    mkdirSync(dir, { recursive: true });
    for (const f of s.files ?? []) {
      const target = resolve(dir, f.path);
      if (!target.startsWith(dir + sep)) throw new Error(`static file path escapes its directory: ${f.path}`);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, f.content);
    }
    return { directory: dir, route_prefix: s.route_prefix, ...(s.index_file !== undefined ? { index_file: s.index_file } : {}), ...(s.cache_control ? { cache_control: s.cache_control } : {}) };
  });
}

export interface FixtureApp {
  app: App;
  router: KeelRouter;
  /** Cases whose method + route an earlier case already registered (their handler is not mounted). */
  shadowed: string[];
  /** What the handler of a WebSocket session case's route saw keel call (CaseTarget.observe). */
  observe(c: WebSocketCase): Record<string, unknown>;
  /** Remove temporary static-file directories. */
  cleanup(): void;
}

/**
 * One keel App serving the given cases, made `ready()` (WebSocket routes load keel/ws) and built.
 * A case with static files gets a static mount instead of a route (the files are what it tests), a
 * case with a `websocket` record an `app.ws()` endpoint. Two cases with the same method and route
 * (or two WebSocket endpoints on one path) cannot both be mounted: the first wins and the rest are
 * reported in `shadowed`.
 */
export async function buildFixtureApp(cases: readonly RunnableCase[]): Promise<FixtureApp> {
  const tmp = mkdtempSync(join(tmpdir(), 'keel-fixture-'));
  try {
    const statics: Json[] = [];
    for (const c of cases) {
      if (isWebSocketCase(c)) continue;
      const specs = (c.handler.middleware as Json | undefined)?.static_files as StaticSpec[] | undefined;
      if (specs?.length) statics.push(...writeStatic(specs, join(tmp, String(statics.length))));
    }
    // shutdown_timeout 0: a case's connections are done when its response arrived; don't wait on them.
    // Handler failures are expected here (500 cases); logs only on request (KEEL_LOG_LEVEL).
    const logger = pino({ level: process.env.KEEL_LOG_LEVEL ? logLevelFromEnv() : 'silent' });
    const app = new App(
      // `statics` is corpus data (JSON): the App's runtime parse checks it.
      { host: '127.0.0.1', port: 0, graceful_shutdown: false, shutdown_timeout: 0, static_files: statics as unknown as ServerConfigInput['static_files'] },
      { logger },
    );
    const seen = new Set<string>();
    const shadowed: string[] = [];
    const counters = new Map<string, SessionCounters>();
    for (const c of cases) {
      const session = isWebSocketCase(c);
      if (!session && ((c.handler.middleware as Json | undefined)?.static_files as unknown[] | undefined)?.length) continue;
      const route = session ? c.websocket.handler.route : c.handler.route;
      const ws = session || websocketEnabled(c.handler);
      // An upgrade is routed by path alone (app.upgrade), so WebSocket endpoints share one key per path.
      const key = ws ? `WebSocket ${route}` : `${c.handler.method.toUpperCase()} ${route}`;
      if (seen.has(key)) {
        shadowed.push(c.id);
        continue;
      }
      seen.add(key);
      if (session) {
        counters.set(route, registerJsonWebSocket(app, c, logger));
        continue;
      }
      registerCaseHooks(app, c.handler);
      if (ws) registerWebSocket(app, c.handler);
      else app.route(routeFor(c) as never);
    }
    await app.ready();
    const router = app.intoRouter();
    const observe = (c: WebSocketCase) => ({ ...counters.get(c.websocket.handler.route) });
    return { app, router, shadowed, observe, cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

export interface ServedFixtureApp {
  url: string;
  shadowed: string[];
  observe: FixtureApp['observe'];
  close(): Promise<void>;
}

/**
 * Build the fixture app for `cases` and serve it with keel's own `app.listen()` (so server-level
 * behaviour is keel's too), on loopback and a free port unless told otherwise.
 */
export async function serveFixtureApp(cases: readonly RunnableCase[], options: { host?: string; port?: number } = {}): Promise<ServedFixtureApp> {
  const fixture = await buildFixtureApp(cases);
  try {
    const handle = await fixture.app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0, handleSignals: false });
    return {
      url: handle.url,
      shadowed: fixture.shadowed,
      observe: fixture.observe,
      close: () => handle.close().finally(() => fixture.cleanup()),
    };
  } catch (err) {
    fixture.cleanup();
    throw err;
  }
}

/**
 * The runner target for keel's fixture app: one App and one `app.listen()` per case (a few
 * milliseconds each on loopback; measured at well under the time the corpus's timeout cases sleep),
 * closed once the case has run, so no case sees another's rate-limit counters or hooks.
 */
export async function fixtureTarget(c: RunnableCase): Promise<CaseTarget> {
  const served = await serveFixtureApp([c]);
  return { baseUrl: served.url, release: () => served.close(), ...(isWebSocketCase(c) ? { observe: served.observe } : {}) };
}
