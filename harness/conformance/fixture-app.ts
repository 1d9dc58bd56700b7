/**
 * keel's fixture app: a keel App built from cases' handler definitions, so that keel itself
 * produces every framework-owned response (corpus README, "Earning a pass").
 *
 * The generated handler knows what the manifest tells any server (handler-answer.ts): a successful
 * case's answer; an error only the application can know (404 on a route that matched, 409, 5xx),
 * thrown so keel renders it (a plain Error for 500, so keel must not leak it; HttpError otherwise);
 * for any other error, a 200 with a marker body: keel must have answered before the handler, and if
 * it did not, the diff says so.
 * Records (`jwt_auth`, `cors`, `rate_limit`, ...) go to keel's per-route records unchanged except
 * for the corpus's test-driver keys (`sleep_ms`, `warmup_*`, `max_bytes`, `allow_*` spellings).
 * A `websocket` record makes the route a keel WebSocket endpoint instead, and a WebSocket session
 * case's handler becomes an `app.ws(route, jsonWebSocket(...))` endpoint (fixture-ws.ts).
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { App, type ServerConfigInput } from '../../lib/app/app.js';
import type { KeelRouter } from '../../lib/app/dispatch.js';
import { HttpError } from '../../lib/http/errors.js';
import { logLevelFromEnv } from '../../lib/ops/log-level.js';
import { response, type HandlerFunction, type ResponseCookie } from '../../lib/app/handler.js';
import type { CaseTarget } from './runner.js';
import { withCorpusErrorStyle } from './error-style.js';
import { registerCaseHooks } from './fixture-hooks.js';
import { handlerAnswer } from './handler-answer.js';
import { isGraphqlSession, loadWebSocketFixtures, registerGraphqlSession, registerJsonWebSocket, registerWebSocket, websocketEnabled, type SessionCounters } from './fixture-ws.js';
import { protocolFixtureTarget } from './kinds/index.js';
import { isProtocolCase, isWebSocketCase, type ConformanceCase, type RunnableCase, type WebSocketCase } from './types.js';

export { FRAMEWORK_STATUSES, HANDLER_REACHED, isHandlerOwnedError } from './handler-answer.js';

type Json = Record<string, unknown>;

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

/**
 * The handler of one case: it knows only its answer (handler-answer.ts, the manifest's
 * `handler_response`), never the error the framework must give.
 */
export function caseHandler(c: ConformanceCase): HandlerFunction {
  const answer = handlerAnswer(c);
  const { status, headers = {} } = answer;
  const streaming = answer.streaming as { content_type?: string; chunks?: Array<{ type?: string; value?: string; base64?: string }> } | undefined;
  const cookies = responseCookies(answer.cookies as Json | undefined);
  return async () => {
    if (answer.sleep_ms) await sleep(answer.sleep_ms);
    if (answer.error) {
      if (status === 500) throw new Error('fixture handler failure (must not reach the client)');
      // The handler's own problem: its detail and, when the case shows one, its instance (RFC 9457 §3.1.5).
      throw new HttpError(status, answer.error.detail, { ...(answer.error.instance !== undefined ? { instance: answer.error.instance } : {}), ...(answer.headers ? { headers: answer.headers } : {}) });
    }
    if (streaming?.chunks) {
      const chunks = streaming.chunks.map((ch) => (typeof ch.base64 === 'string' ? Buffer.from(ch.base64, 'base64') : String(ch.value ?? '')));
      const h = streaming.content_type ? { 'Content-Type': streaming.content_type, ...headers } : headers;
      return response((async function* () { yield* chunks; })(), { status, headers: h, cookies });
    }
    return response(answer.body === undefined ? null : answer.body, { status, headers, cookies });
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
  if (h.max_uri_length !== undefined) def.max_uri_length = h.max_uri_length;
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
      if (isWebSocketCase(c) || isProtocolCase(c)) continue;
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
    if (cases.some((c) => isWebSocketCase(c) && !isGraphqlSession(c))) await loadWebSocketFixtures();
    for (const c of cases) {
      // A protocol case is served by its kind's own app (kinds/), one per case.
      if (isProtocolCase(c)) continue;
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
        if (isGraphqlSession(c)) registerGraphqlSession(app, c);
        else counters.set(route, registerJsonWebSocket(app, c, logger));
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
  if (isProtocolCase(c)) return protocolFixtureTarget(c);
  const served = await serveFixtureApp([c]);
  return { baseUrl: served.url, release: () => served.close(), ...(isWebSocketCase(c) ? { observe: served.observe } : {}) };
}
