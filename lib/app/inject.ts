/**
 * `app.inject()`: requests served by an App in-process, without a socket — the shape of Fastify's
 * `inject()` (light-my-request). The request goes through the whole router built by `intoRouter()`
 * (hooks, validation, middleware, body limits, problem answers), the same function `listen()` hands
 * to node:http; only what node:http does around it is absent (connection limits, keep-alive,
 * Slowloris timeouts: lib/server/connections.ts), since there is no connection.
 *
 * light-my-request is loaded the first time `inject()` runs, so a served App never loads it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type LightMyRequest from 'light-my-request';
// Named type imports for the exported types: a default import of light-my-request's `export =` names its
// `default` member (a function, no namespace) under TypeScript's CommonJS settings, and the emitted
// .d.ts then fails with "Cannot find namespace 'LightMyRequest'" (issue 43).
import type { Chain, InjectOptions as LightMyRequestOptions, Response } from 'light-my-request';
import { lazyRequire } from '../http/lazy-require.js';
import type { KeelRouter } from './plugin.js';
import { CONTRACT_VIOLATION, type ContractViolation } from './pipeline/contract.js';

/**
 * What `app.inject()` rejects with when the App refused its own answer because it broke the route's
 * response schema (`response_validation: 'strict'`, docs/routes.md): a test that reaches a contract
 * violation fails by default, even one that only looks at part of the body. `response` is the 500
 * problem the client got; `status`, `schema` and `errors` say what the handler answered wrong.
 */
export class ResponseContractError extends Error {
  override readonly name = 'ResponseContractError';
  readonly route: string;
  readonly status: number;
  readonly schema: string;
  readonly errors: ContractViolation['errors'];
  readonly response: InjectResponse;
  constructor(v: ContractViolation, response: InjectResponse) {
    super(`${v.route} answered ${v.status} with a body that breaks its ${v.schema} schema: ${v.errors.map((e) => `${e.path} ${e.message}`).join('; ')}`);
    this.route = v.route;
    this.status = v.status;
    this.schema = v.schema;
    this.errors = v.errors;
    this.response = response;
  }
}

/** The violation an injected answer carries, as an error (undefined: none). */
function violationOf(response: InjectResponse | undefined): ResponseContractError | undefined {
  const v = (response?.raw?.res as { [CONTRACT_VIOLATION]?: ContractViolation } | undefined)?.[CONTRACT_VIOLATION];
  return v ? new ResponseContractError(v, response!) : undefined;
}

function surface(response: InjectResponse): InjectResponse {
  const err = violationOf(response);
  if (err) throw err;
  return response;
}

/**
 * What `app.inject()` takes: a URL string, or light-my-request's options — `method`, `url`, `query`,
 * `headers`, `payload` (object → JSON, string, Buffer or stream), `cookies`, `remoteAddress`, …
 */
export type InjectOptions = LightMyRequestOptions;
/** The answer: `statusCode`, `headers`, `body` (text), `rawPayload` (bytes), `json()`, `cookies`, … */
export type InjectResponse = Response;
/**
 * What `app.inject()` returns: a promise of the InjectResponse, also a builder
 * (`app.inject().post('/x').payload({ a: 1 }).end()`); the request starts when it is awaited or ended.
 */
export type InjectChain = Chain;

const lightMyRequest = lazyRequire<typeof LightMyRequest>('light-my-request');

/** The part of the App that `injectInto` needs (App implements it). */
export interface Injectable {
  ready(): Promise<unknown>;
  intoRouter(): KeelRouter;
}

/** Routers already built, per App, so later injections dispatch without waiting a tick. */
const routers = new WeakMap<Injectable, KeelRouter>();

/**
 * Serve one request from `app` in-process. The App is made `ready()` first, as `listen()` does; a
 * failure there (a protocol package missing, a bad route) rejects the returned promise.
 */
export function injectInto(app: Injectable, options?: string | InjectOptions): InjectChain {
  const dispatch = function keelInjectDispatch(req: IncomingMessage, res: ServerResponse): void {
    markStreamedBody(req);
    const built = routers.get(app);
    if (built) {
      built(req, res);
      return;
    }
    app
      .ready()
      .then(() => {
        const router = app.intoRouter();
        routers.set(app, router);
        router(req, res);
      })
      // light-my-request rejects the injection with an error emitted on the response.
      .catch((err: unknown) => res.emit('error', err));
  };
  // With no options, a builder: it waits for `.get(url)`… and `.end()` (or `await`) to start.
  return surfacingViolations(lightMyRequest()(dispatch, options ?? { autoStart: false }));
}

/**
 * The chain, its answer passed through surface(): `end()`, `end(callback)` and the promise methods
 * (which light-my-request runs through its own start) all see a contract violation as an error.
 */
function surfacingViolations(chain: InjectChain): InjectChain {
  type Internal = InjectChain & { _promise: Promise<InjectResponse> | null };
  const c = chain as Internal;
  const end = c.end.bind(c) as (cb?: (err: Error | undefined, res?: InjectResponse) => void) => Promise<InjectResponse> | undefined;
  const patched = function end_(cb?: (err: Error | undefined, res?: InjectResponse) => void) {
    if (typeof cb === 'function') return end((err, res) => (err ? cb(err) : cb(violationOf(res), res)));
    c._promise = end()!.then(surface);
    return c._promise;
  };
  Object.defineProperty(c, 'end', { value: patched, writable: true, configurable: true });
  for (const m of ['then', 'catch', 'finally'] as const) {
    Object.defineProperty(c, m, {
      value: (...args: unknown[]) => {
        if (!c._promise) patched();
        return (c._promise as unknown as Record<string, (...a: unknown[]) => unknown>)[m]!.apply(c._promise, args);
      },
      writable: true, configurable: true,
    });
  }
  return chain;
}

/**
 * light-my-request sends a stream payload with neither Content-Length nor Transfer-Encoding, and
 * such a request has no body (RFC 9112 §6.3), so keel would never read it. Over a socket, node's
 * client sends a body of unknown length chunked: say so here too, unless the caller gave a length.
 * The payload is where light-my-request keeps it (`_lightMyRequest`), whichever form set it.
 */
function markStreamedBody(req: IncomingMessage): void {
  const { headers } = req;
  if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return;
  const payload = (req as IncomingMessage & { _lightMyRequest?: { payload?: unknown } })._lightMyRequest?.payload;
  if (payload && typeof (payload as { resume?: unknown }).resume === 'function') headers['transfer-encoding'] = 'chunked';
}
