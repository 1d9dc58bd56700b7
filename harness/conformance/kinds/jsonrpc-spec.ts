/**
 * JSON-RPC documents as calls: one case per example and per error case (JSON-RPC 2.0 over HTTP POST
 * to the document's `endpoint`, default /rpc). The corpus writes them in four shapes, all read here:
 * - a method document (`method`, `params_schema`, `result_schema`, `examples`, `error_cases`): an
 *   example or error case gives `params` (the method's params, or a whole request object), a
 *   `raw_request` (text sent as is), or `request` + `expected_response` (batches);
 * - a document of named scenarios (`{name: {request, expected_response}}`);
 * - a validation item (`{name, method, params, expectedSuccess, expectedError?}`): a call whose answer
 *   is only "succeeds" or the error it expects.
 * An expected -32602 for a method the document gives no params schema states, in its `data`, the
 * constraint the params break: that is the method's params schema (jsonrpc-constraints.ts).
 * The spec says which methods the server has (every method called, but one the call expects -32601
 * for), their schemas (the document's params/result schema for its own method), and what each
 * method's handler answers for given params: its result, or an application error (a code outside
 * JSON-RPC's reserved -32768..-32000 range). Protocol errors (parse, invalid request, unknown method,
 * invalid params, internal) are the server's to produce and never handed to a handler.
 */
import { paramsSchemaFromConstraints } from './jsonrpc-constraints.js';
import { isObject, type Json, type KindLoad, type KindLoader } from './kind.js';

/**
 * What a method's handler does for given params: returns `result`, raises an application `error`, or
 * `fails` (an unexpected failure: JSON-RPC 2.0 §5.1's -32603 Internal error is then the server's answer).
 */
export interface JsonRpcAnswer { params: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown }; fails?: true }
export interface JsonRpcMethodSpec { name: string; params_schema?: Json; result_schema?: Json; answers: JsonRpcAnswer[] }

export interface JsonRpcSpec extends Json {
  endpoint: string;
  methods: JsonRpcMethodSpec[];
  /** What is sent: `raw` text as is, else `json` serialised. */
  request: { raw?: string; json?: unknown };
  /** The whole expected answer (object, or array for a batch; null: no body), or only success / an error. */
  expected: { response?: unknown; success?: true; error?: { code: number; message?: string; data?: unknown } };
}

/** JSON-RPC 2.0 §5.1: codes from -32768 to -32000 are reserved for the protocol and the server. */
export function isProtocolError(code: number): boolean {
  return code >= -32768 && code <= -32000;
}

function call(method: string, params: unknown, id: number): Json {
  return { jsonrpc: '2.0', method, ...(params !== undefined ? { params } : {}), id };
}

/** The calls in a request value (an object or a batch array). */
function callsOf(request: unknown): Json[] {
  return (Array.isArray(request) ? request : [request]).filter(isObject);
}

/** The expected answer to `c` inside an expected response (object or batch array), by id. */
function answerTo(c: Json, response: unknown): Json | undefined {
  if (c.id === undefined) return undefined;
  return (Array.isArray(response) ? response : [response]).filter(isObject).find((r) => JSON.stringify(r.id) === JSON.stringify(c.id));
}

function errorOf(v: unknown): JsonRpcSpec['expected']['error'] | undefined {
  if (!isObject(v) || v.code === undefined || !Number.isFinite(Number(v.code))) return undefined;
  return { code: Number(v.code), ...(typeof v.message === 'string' ? { message: v.message } : {}), ...('data' in v ? { data: v.data } : {}) };
}

/** Build the spec of one call (or batch) given what is sent and what is expected. */
function spec(doc: Json, request: JsonRpcSpec['request'], expected: JsonRpcSpec['expected']): JsonRpcSpec {
  const methods = new Map<string, JsonRpcMethodSpec>();
  const own = typeof doc.method === 'string' ? doc.method : undefined;
  for (const c of request.json !== undefined ? callsOf(request.json) : []) {
    if (typeof c.method !== 'string') continue;
    const answer = expected.response !== undefined ? answerTo(c, expected.response) : undefined;
    const err = errorOf(answer?.error) ?? (expected.error && !Array.isArray(request.json) ? expected.error : undefined);
    if (err?.code === -32601) continue;
    const m = methods.get(c.method) ?? { name: c.method, answers: [], ...(c.method === own && isObject(doc.params_schema) ? { params_schema: doc.params_schema } : {}), ...(c.method === own && isObject(doc.result_schema) ? { result_schema: doc.result_schema } : {}) };
    // An invalid-params answer for a method the document gives no schema: its data states the constraint the params break.
    if (err?.code === -32602 && !m.params_schema) {
      const declared = paramsSchemaFromConstraints(err.data, c.params);
      if (declared) m.params_schema = declared;
    }
    if (answer && 'result' in answer) m.answers.push({ params: c.params, result: answer.result });
    else if (err && !isProtocolError(err.code)) m.answers.push({ params: c.params, error: { code: err.code, message: err.message ?? '', ...('data' in err ? { data: err.data } : {}) } });
    else if (err?.code === -32603) m.answers.push({ params: c.params, fails: true });
    methods.set(c.method, m);
  }
  return { endpoint: typeof doc.endpoint === 'string' && doc.endpoint.startsWith('/') ? doc.endpoint : '/rpc', methods: [...methods.values()], request, expected };
}

/** One example or error case of a method document. */
function fromItem(doc: Json, item: Json, i: number, kind: 'example' | 'error'): KindLoad {
  const name = typeof item.name === 'string' ? item.name : `${kind}_${i}`;
  const base = { suffix: name, name, ...(typeof item.description === 'string' ? { description: item.description } : {}) };
  if (typeof item.raw_request === 'string') return { ...base, spec: spec(doc, { raw: item.raw_request }, { response: { jsonrpc: '2.0', error: errorOf(item.error), id: null } }) };
  if (item.request !== undefined && 'expected_response' in item) {
    const sent = typeof item.request === 'string' ? { raw: item.request } : { json: item.request };
    return { ...base, spec: spec(doc, sent, { response: item.expected_response }) };
  }
  // A whole request object in `params` (with `jsonrpc`, or a `method` and an `id`: invalid requests leave `jsonrpc` out).
  const whole = isObject(item.params) && (item.params.jsonrpc !== undefined || (typeof item.params.method === 'string' && 'id' in item.params)) ? item.params : undefined;
  const method = typeof doc.method === 'string' ? doc.method : undefined;
  if (!whole && !method) return { skip: `${name}: no request (params of a method the document does not name)` };
  const request = whole ?? call(method!, item.params, i + 1);
  const id = (request as Json).id;
  if (kind === 'example') return { ...base, spec: spec(doc, { json: request }, { response: id === undefined ? null : { jsonrpc: '2.0', result: item.result, id } }) };
  const error = errorOf(item.error);
  // The case gives no id: after an invalid request or a parse error, null or the request's id are both
  // right (JSON-RPC 2.0 §5: null when the server could not detect it), so only the error is compared.
  if (error && (error.code === -32600 || error.code === -32700)) return { ...base, spec: spec(doc, { json: request }, { error }) };
  return { ...base, spec: spec(doc, { json: request }, { response: { jsonrpc: '2.0', error, id: id ?? null } }) };
}

/** Every case of a JSON-RPC document (see the module comment), or undefined when it is not one. */
export function fromJsonRpcDocument(doc: unknown, category: string): KindLoad[] | KindLoad | undefined {
  if (!isObject(doc)) return undefined;
  if (typeof doc.method === 'string' && 'params' in doc && ('expectedSuccess' in doc || 'expectedError' in doc)) {
    const request = call(doc.method, doc.params, 1);
    const err = errorOf(doc.expectedError);
    return { ...(typeof doc.name === 'string' ? { name: doc.name } : {}), spec: spec({}, { json: request }, doc.expectedSuccess === true || !err ? { success: true } : { error: err }) };
  }
  // A method document names its method (or sits in a jsonrpc category): other documents have examples too (message schemas).
  if ((Array.isArray(doc.examples) || Array.isArray(doc.error_cases)) && (typeof doc.method === 'string' || category.toLowerCase().includes('jsonrpc'))) {
    const items = [
      ...(Array.isArray(doc.examples) ? doc.examples : []).map((e, i) => (isObject(e) ? fromItem(doc, e, i, 'example') : { skip: `examples[${i}] is not an object` })),
      ...(Array.isArray(doc.error_cases) ? doc.error_cases : []).map((e, i) => (isObject(e) ? fromItem(doc, e, i, 'error') : { skip: `error_cases[${i}] is not an object` })),
    ];
    return items.length ? items : { skip: 'a JSON-RPC method document without examples or error cases' };
  }
  // An HTTP case of a jsonrpc category (`http: {handler, request, expected_response}`) stays an HTTP case.
  if (!category.toLowerCase().includes('jsonrpc') || isObject(doc.http) || isObject(doc.handler)) return undefined;
  const scenarios = Object.entries(doc).filter(([, v]) => isObject(v) && 'request' in v && 'expected_response' in v) as Array<[string, Json]>;
  if (!scenarios.length) return undefined;
  return scenarios.map(([name, v]) => fromItem({}, { ...v, name }, 0, 'example'));
}

export const jsonrpcLoader: KindLoader = {
  kind: 'jsonrpc',
  load: fromJsonRpcDocument,
  // The methods with their schemas and their handlers' answers (results, application errors only).
  server: (raw) => ({ endpoint: raw.endpoint, methods: raw.methods }),
};
