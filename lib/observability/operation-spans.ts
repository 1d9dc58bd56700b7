/**
 * Protocol operations inside a request as INTERNAL spans, named per their OpenTelemetry semantic
 * conventions (the request's SERVER span stays the HTTP one: one SERVER span per request):
 *
 * - GraphQL: `query getUser` (`<type> <name>`, the type alone for an anonymous operation),
 *   `graphql.operation.type`, `graphql.operation.name` (lib/graphql/http.ts).
 * - JSON-RPC: the method's name, `rpc.system: jsonrpc`, `rpc.jsonrpc.version: 2.0`, `rpc.method`,
 *   `rpc.jsonrpc.request_id`, and `rpc.jsonrpc.error_code` / `rpc.jsonrpc.error_message` for an error
 *   answer (lib/jsonrpc/dispatch.ts); each call of a batch has its own span.
 *
 * Nothing happens for a request without spans (`requestTraceOf` is undefined): one property read.
 */
import { requestTraceOf, type KitSpan } from './spans.js';

/** What an operation's outcome adds to its span: attributes, and an error message (status ERROR). */
export interface OperationOutcome {
  attributes?: Record<string, string | number | boolean>;
  error?: string;
}

const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof (v as PromiseLike<unknown> | null)?.then === 'function';

/**
 * Run `fn` (the operation) inside an INTERNAL span named `name`, child of the active span, when `req`
 * has spans; ended when `fn` settles. `attributes` is called only then (nothing is built without spans). A throw or rejection is recorded (exception event, status ERROR);
 * `outcome` reads the value (a JSON-RPC error object answered without throwing, GraphQL errors).
 *
 * @example
 * const response = traceOperation(req, 'users.get', () => ({ 'rpc.system': 'jsonrpc', 'rpc.method': 'users.get' }), () => invoke(call));
 */
export function traceOperation<T>(
  req: object | null | undefined,
  name: string,
  attributes: () => Record<string, string | number | boolean>,
  fn: () => T,
  outcome?: (value: Awaited<T>) => OperationOutcome | undefined,
): T {
  const t = requestTraceOf(req);
  // Not recording (no SDK, sampled out): nor would its children be (parent-based sampling), so none is started.
  if (!t?.server.isRecording()) return fn();
  const { kit } = t;
  const { span, context } = kit.startInternal(name, attributes());
  t.open.push(span);
  const done = (value: Awaited<T>) => {
    if (outcome && span.isRecording()) settle(span, outcome(value), kit.api.SpanStatusCode.ERROR);
    span.end();
    return value;
  };
  const failed = (err: unknown): never => {
    kit.recordError(span, err, 'operation failed');
    span.end();
    throw err;
  };
  let out: T;
  try {
    out = kit.run(context, fn);
  } catch (err) {
    return failed(err);
  }
  if (isThenable(out)) return Promise.resolve(out).then(done as (v: unknown) => Awaited<T>, failed) as T;
  return done(out as Awaited<T>) as T;
}

function settle(span: KitSpan, o: OperationOutcome | undefined, ERROR: number): void {
  if (!o) return;
  if (o.attributes) span.setAttributes(o.attributes);
  if (o.error !== undefined) span.setStatus({ code: ERROR, message: o.error });
}
