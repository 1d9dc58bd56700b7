/**
 * JSON-RPC cases as calls over HTTP POST, and keel's fixture for them: an App with `jsonrpc` on at
 * the case's endpoint and `app.rpc` per method (its params/result schemas when the case gives them),
 * whose handler answers what the spec says for the params it got (a result, an application error,
 * or an unexpected failure), else `{}`. Parse errors, invalid requests, unknown methods, invalid params, batches and
 * notifications are keel's.
 *
 * Comparison (JSON-RPC 2.0 §5): `jsonrpc`, `id`, the result (deep equal), the error's code and
 * message; the error's `data` only where the application gave it (a protocol error's data is each
 * server's own wording: the corpus's documents use four different shapes). A batch's answers are
 * matched by id (§6: any order); no expected body means no body (notifications, §4.1).
 */
import { pino } from 'pino';
import type { Mismatch } from '../compare.js';
import { isProtocolError, type JsonRpcMethodSpec, type JsonRpcSpec } from './jsonrpc-spec.js';
import { isObject, type Json, type KindOutcome, type KindRuntime, type PlayOptions } from './kind.js';

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

async function serve(raw: Json) {
  const spec = raw as JsonRpcSpec;
  const { App } = await import('../../../lib/app/app.js');
  const { JsonRpcError } = await import('../../../lib/jsonrpc/errors.js');
  const app = new App({ host: '127.0.0.1', port: 0, graceful_shutdown: false, shutdown_timeout: 0, jsonrpc: { endpoint_path: spec.endpoint } }, { logger: pino({ level: 'silent' }) });
  const handler = (m: JsonRpcMethodSpec) => (params: unknown) => {
    const hit = m.answers.find((a) => same(a.params, params));
    if (hit?.error) throw new JsonRpcError(hit.error.code, hit.error.message, hit.error.data);
    if (hit?.fails) throw new Error(`fixture: the handler of ${m.name} fails, as the case says`);
    return hit && 'result' in hit ? hit.result : {};
  };
  for (const m of spec.methods) {
    app.rpc({ method_name: m.name, ...(m.params_schema ? { params_schema: m.params_schema } : {}), ...(m.result_schema ? { result_schema: m.result_schema } : {}) }, handler(m));
  }
  await app.ready();
  const handle = await app.listen({ host: '127.0.0.1', port: 0, handleSignals: false });
  return { url: handle.url, close: () => handle.close() };
}

function compareError(path: string, want: Json, got: unknown, out: Mismatch[]): void {
  if (!isObject(got)) return void out.push({ what: `${path}`, expected: want, actual: got ?? '<<missing>>' });
  if (Number(want.code) !== got.code) out.push({ what: `${path}.code`, expected: Number(want.code), actual: got.code });
  if (typeof want.message === 'string' && want.message !== got.message) out.push({ what: `${path}.message`, expected: want.message, actual: got.message });
  // An application error's data is the handler's own, so it must arrive unchanged.
  if ('data' in want && !isProtocolError(Number(want.code)) && !same(want.data, got.data)) out.push({ what: `${path}.data`, expected: want.data, actual: got.data });
}

/** One response object against its expectation. */
function compareOne(path: string, want: Json, got: unknown, out: Mismatch[]): void {
  if (!isObject(got)) return void out.push({ what: path, expected: want, actual: got ?? '<<missing>>' });
  if (got.jsonrpc !== '2.0') out.push({ what: `${path}.jsonrpc`, expected: '2.0', actual: got.jsonrpc });
  if ('id' in want && !same(want.id, got.id)) out.push({ what: `${path}.id`, expected: want.id, actual: got.id });
  if ('result' in want) {
    if (!same(want.result, got.result)) out.push({ what: `${path}.result`, expected: want.result, actual: 'result' in got ? got.result : '<<missing>>' });
  } else if (isObject(want.error)) compareError(`${path}.error`, want.error, got.error, out);
}

/** The differences between the expected answer and what came back (status, parsed body or null). */
export function compareJsonRpc(spec: JsonRpcSpec, status: number, body: unknown): Mismatch[] {
  const exp = spec.expected;
  const out: Mismatch[] = [];
  if (exp.success) {
    if (!isObject(body) || !('result' in body) || 'error' in body) out.push({ what: 'body', expected: 'a result', actual: body });
    return out;
  }
  if (exp.error) {
    compareError('body $.error', exp.error, isObject(body) ? body.error : undefined, out);
    return out;
  }
  const want = exp.response;
  if (want === null || (Array.isArray(want) && want.length === 0)) {
    if (body !== null && body !== '') out.push({ what: 'body', expected: '<<no body>>', actual: body });
    if (status >= 300) out.push({ what: 'status', expected: '2xx', actual: status });
    return out;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(body)) return [{ what: 'body', expected: 'a batch answer (array)', actual: body }];
    if (body.length !== want.length) out.push({ what: 'body length', expected: want.length, actual: body.length });
    want.forEach((w, i) => {
      const got = isObject(w) && w.id !== null && w.id !== undefined ? body.find((b) => isObject(b) && same(b.id, w.id)) : body[i];
      compareOne(`body $[${i}]`, w as Json, got, out);
    });
    return out;
  }
  if (isObject(want)) compareOne('body $', want, body, out);
  return out;
}

async function play(raw: Json, baseUrl: string, options: PlayOptions): Promise<KindOutcome> {
  const spec = raw as JsonRpcSpec;
  const text = spec.request.raw ?? JSON.stringify(spec.request.json);
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (options.caseHeader) headers[options.caseHeader[0]] = options.caseHeader[1];
  const res = await fetch(new URL(spec.endpoint, baseUrl), { method: 'POST', headers, body: text, signal: AbortSignal.timeout(options.timeoutMs) });
  const got = await res.text();
  let body: unknown = got === '' ? null : got;
  try {
    if (got !== '') body = JSON.parse(got);
  } catch {
    // Not JSON: compared as text (and fails).
  }
  const sent = [`POST ${spec.endpoint} ${text.length > 200 ? `${text.slice(0, 200)}… (${text.length} characters)` : text}`];
  return { mismatches: compareJsonRpc(spec, res.status, body), sent, expected: spec.expected, actual: { status: res.status, body } };
}

export const jsonrpcRuntime: KindRuntime = { play, serve };
