/**
 * keel's own work in a request as INTERNAL spans, children of the request's SERVER span (keel's, or
 * instrumentation-http's under the standard setup), named as instrumentation-express names Express's
 * layers so dashboards built for Express read keel's the same way:
 *
 * - `middleware - <function name>`: each middleware of the route's chain (records such as cors, rate
 *   limit, JWT auth, and `app.use()`), from its call until it calls `next()`, or until the answer when
 *   it answers itself. `keel.type: middleware`, `keel.name`, `http.route`.
 * - `request handler - <route>`: the route's core (body, validation, hooks, handler, response) until
 *   the answer is complete. `keel.type: request_handler`, `http.route`.
 *
 * The router wraps its pieces only when `ServerConfig.opentelemetry` is on (lib/app/dispatch.ts), so an
 * App without spans runs its chain unwrapped. Each wrapper reads the request's trace
 * (`requestTraceOf`, set by lib/observability/tracing.ts) and runs unwrapped without one, or when the
 * SERVER span does not record (no SDK registered, or the request sampled out): its children would not
 * record either under the SDK's default parent-based sampler, so they are not started at all.
 */
import type { ServerResponse } from 'node:http';
import type { KeelRequest, Middleware, NextFunction } from '../http/request.js';
import { isNextError, requestTraceOf } from './spans.js';

/** A route's core, as lib/app/pipeline.ts compiles it. */
type Core = (req: KeelRequest, res: ServerResponse, params: Record<string, string | undefined>, search: string) => void;

/** `mw` with an INTERNAL span around it (see above). */
export function traceMiddleware(mw: Middleware, route: string): Middleware {
  const name = mw.name || 'anonymous';
  const spanName = `middleware - ${name}`;
  const attributes = { 'http.route': route, 'keel.type': 'middleware', 'keel.name': name };
  return function tracedMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    const t = requestTraceOf(req);
    if (!t?.server.isRecording()) return mw(req, res, next);
    const parent = t.kit.active();
    const { span, context } = t.kit.startInternal(spanName, attributes, parent);
    t.open.push(span);
    const done: NextFunction = (err?: unknown) => {
      if (span.isRecording()) {
        if (isNextError(err)) t.kit.recordError(span, err, 'middleware failed');
        span.end();
      }
      // The next middleware is this one's sibling, not its child.
      t.kit.run(parent, () => next(err));
    };
    t.kit.run(context, () => mw(req, res, done));
  };
}

/** A route's core with a `request handler - <route>` span around it (see above). */
export function traceHandler<C extends Core>(core: C, route: string): C {
  const spanName = `request handler - ${route}`;
  const attributes = { 'http.route': route, 'keel.type': 'request_handler' };
  return function tracedHandler(req: KeelRequest, res: ServerResponse, params: Record<string, string | undefined>, search: string): void {
    const t = requestTraceOf(req);
    if (!t?.server.isRecording()) return core(req, res, params, search);
    const { span, context } = t.kit.startInternal(spanName, attributes);
    t.open.push(span);
    t.kit.run(context, () => core(req, res, params, search));
  } as C;
}
