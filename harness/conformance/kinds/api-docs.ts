/**
 * API description cases (see api-docs-spec.ts for what each format checks) and keel's fixture for
 * them: the AsyncAPI endpoints on with the document configured; the OpenAPI document's operations as
 * keel routes with keel/openapi on; the OpenRPC document's methods as `app.rpc` methods.
 */
import { pino } from 'pino';
import type { Mismatch } from '../compare.js';
import type { ApiDocSpec } from './api-docs-spec.js';
import { isObject, type Json, type KindOutcome, type KindRuntime, type PlayOptions } from './kind.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Local `$ref`s inlined (bounded: a recursive schema keeps its reference past depth 32). */
export function inline(doc: Json, v: unknown, depth = 0): unknown {
  if (Array.isArray(v)) return v.map((x) => inline(doc, x, depth + 1));
  if (!isObject(v)) return v;
  if (typeof v.$ref === 'string' && v.$ref.startsWith('#/') && depth < 32) {
    let target: unknown = doc;
    for (const t of v.$ref.slice(2).split('/')) target = isObject(target) ? target[t.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    if (target !== undefined) return inline(doc, target, depth + 1);
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, inline(doc, x, depth + 1)]));
}

interface Operation { path: string; method: string; params: Array<{ name: string; in: string; required: boolean; schema: Json }>; body?: Json }

/** The operations of an OpenAPI document (path-level parameters merged into each). */
export function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    if (!isObject(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      const params = [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])].map((p) => inline(doc, p)).filter(isObject)
        .map((p) => ({ name: String(p.name), in: String(p.in), required: p.required === true || p.in === 'path', schema: (isObject(p.schema) ? p.schema : {}) as Json }));
      const rb = inline(doc, op.requestBody) as Json | undefined;
      const json = isObject(rb) && isObject(rb.content) ? (rb.content['application/json'] as Json | undefined) : undefined;
      out.push({ path, method: method.toUpperCase(), params, ...(isObject(json?.schema) ? { body: json.schema } : {}) });
    }
  }
  return out;
}

const LOCATION: Record<string, string> = { query: 'query', path: 'path', header: 'headers', cookie: 'cookies' };

/** OpenRPC params (by name) as one JSON Schema object. */
function paramsSchema(doc: Json, m: Json): Json {
  const params = (Array.isArray(m.params) ? m.params : []).map((p) => inline(doc, p)).filter(isObject);
  return { type: 'object', properties: Object.fromEntries(params.map((p) => [String(p.name), isObject(p.schema) ? p.schema : {}])), required: params.filter((p) => p.required === true).map((p) => String(p.name)) };
}

async function serve(raw: Json) {
  const spec = raw as ApiDocSpec;
  const { App } = await import('../../../lib/app/app.js');
  const base = { host: '127.0.0.1', port: 0, graceful_shutdown: false, shutdown_timeout: 0 };
  const logger = pino({ level: 'silent' });
  let app: InstanceType<typeof App>;
  if (spec.format === 'asyncapi') app = new App({ ...base, asyncapi: { enabled: true, spec: spec.document } }, { logger });
  else if (spec.format === 'openapi') {
    app = new App({ ...base, openapi: { enabled: true } }, { logger });
    for (const op of operationsOf(spec.document)) {
      const parameters: Record<string, Record<string, Json>> = {};
      for (const p of op.params) (parameters[LOCATION[p.in] ?? p.in] ??= {})[p.name] = { ...p.schema, required: p.required };
      app.route({ method: op.method, path: op.path, parameters, ...(op.body ? { body_schema: op.body } : {}), handler: () => ({}) } as never);
    }
  } else {
    app = new App({ ...base, jsonrpc: {} }, { logger });
    for (const m of (Array.isArray(spec.document.methods) ? spec.document.methods : []).filter(isObject)) {
      const examples = (Array.isArray(m.examples) ? m.examples : []).filter(isObject);
      app.rpc({ method_name: String(m.name), params_schema: paramsSchema(spec.document, m) }, (params) => {
        const hit = examples.find((ex) => same(Object.fromEntries((Array.isArray(ex.params) ? ex.params : []).filter(isObject).map((p) => [p.name, p.value])), params));
        return isObject(hit?.result) ? hit.result.value : null;
      });
    }
  }
  await app.ready();
  const handle = await app.listen({ host: '127.0.0.1', port: 0, handleSignals: false });
  return { url: handle.url, close: () => handle.close() };
}

async function post(baseUrl: string, path: string, body: unknown, options: PlayOptions, sent: string[]): Promise<{ status: number; body: unknown }> {
  sent.push(`POST ${path}`);
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(options.caseHeader ? { [options.caseHeader[0]]: options.caseHeader[1] } : {}) };
  const res = await fetch(new URL(path, baseUrl), { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(options.timeoutMs) });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

/** AsyncAPI: what /asyncapi/parse reports, and /asyncapi/validate's verdicts (see api-docs-spec.ts). */
async function playAsyncApi(spec: ApiDocSpec, baseUrl: string, options: PlayOptions, sent: string[], out: Mismatch[]): Promise<unknown> {
  const doc = spec.document;
  const parsed = await post(baseUrl, '/asyncapi/parse', { spec: doc }, options, sent);
  if (parsed.status !== 200 || !isObject(parsed.body)) {
    out.push({ what: 'POST /asyncapi/parse', expected: 200, actual: `${parsed.status} ${JSON.stringify(parsed.body).slice(0, 200)}` });
    return parsed.body;
  }
  const r = parsed.body as { spec_version: string; title: string; api_version: string; channels: Json[]; operations: Json[]; messages: Json[] };
  const exp = spec.expected ?? {};
  const info = isObject(doc.info) ? doc.info : {};
  const check = (what: string, want: unknown, got: unknown) => void (!same(want, got) && out.push({ what, expected: want, actual: got }));
  check('spec_version', exp.spec_version ?? doc.asyncapi, r.spec_version);
  check('title', exp.title ?? info.title, r.title);
  check('api_version', exp.api_version ?? info.version, r.api_version);
  const channels = isObject(doc.channels) ? Object.keys(doc.channels) : [];
  check('channel count', exp.channels_count ?? exp.channel_count ?? channels.length, r.channels.length);
  check('channel names', [...((exp.channel_names as string[] | undefined) ?? channels)].sort(), r.channels.map((c) => c.name).sort());
  const ops = (exp.operations as Json[] | undefined) ?? Object.entries(isObject(doc.operations) ? doc.operations : {}).map(([name, o]) => ({ name, action: (o as Json).action }));
  check('operations', ops.map((o) => `${o.name}:${o.action}`).sort(), r.operations.map((o) => `${o.name}:${o.action}`).sort());
  for (const b of (exp.bindings as Json[] | undefined) ?? []) {
    const ch = r.channels.find((c) => c.name === b.channel);
    const bound = isObject(ch?.bindings) ? ch.bindings[String(b.protocol)] : undefined;
    if (!isObject(bound) || (b.method !== undefined && bound.method !== b.method)) out.push({ what: `channel ${String(b.channel)} bindings.${String(b.protocol)}`, expected: b, actual: ch?.bindings ?? '<<absent>>' });
  }
  for (const m of (exp.resolved_messages as Json[] | undefined) ?? []) {
    const got = r.messages.find((x) => x.name === m.name);
    const props = isObject(got?.schema) && isObject(got.schema.properties) ? Object.keys(got.schema.properties).sort() : undefined;
    check(`message ${String(m.name)} schema properties`, [...(m.schema_properties as string[])].sort(), props ?? '<<unresolved>>');
  }
  const validations: Array<{ channel: string; message: string; payload: unknown; valid: boolean }> = spec.validation ? [{ ...spec.validation, valid: exp.valid !== false }] : [];
  for (const c of r.channels) {
    for (const name of (c.messages as string[]) ?? []) {
      const m = inline(doc, (isObject(doc.channels) ? (doc.channels[String(c.name)] as Json | undefined)?.messages : undefined) as unknown) as Json | undefined;
      const msg = isObject(m) ? (m[name] as Json | undefined) : undefined;
      for (const ex of Array.isArray(msg?.examples) ? msg.examples : []) if (isObject(ex) && 'payload' in ex) validations.push({ channel: String(c.name), message: name, payload: ex.payload, valid: true });
    }
  }
  for (const v of validations) {
    const res = await post(baseUrl, '/asyncapi/validate', { spec: doc, channel: v.channel, message: v.message, payload: v.payload }, options, sent);
    const b = isObject(res.body) ? res.body : {};
    if (res.status !== 200 || b.valid !== v.valid) out.push({ what: `validate ${v.channel} / ${v.message}`, expected: { valid: v.valid }, actual: res.body });
    else if (!v.valid && !(Array.isArray(b.errors) && b.errors.length >= ((exp.errors as unknown[] | undefined)?.length ?? 1))) out.push({ what: `validate ${v.channel} / ${v.message} errors`, expected: exp.errors, actual: b.errors });
  }
  return r;
}

/** OpenAPI: each operation of the document is described again by the served /openapi.json. */
async function playOpenApi(spec: ApiDocSpec, baseUrl: string, options: PlayOptions, sent: string[], out: Mismatch[]): Promise<unknown> {
  sent.push('GET /openapi.json');
  const res = await fetch(new URL('/openapi.json', baseUrl), { headers: options.caseHeader ? { [options.caseHeader[0]]: options.caseHeader[1] } : {}, signal: AbortSignal.timeout(options.timeoutMs) });
  const generated = (await res.json().catch(() => ({}))) as Json;
  if (res.status !== 200) return void out.push({ what: 'GET /openapi.json', expected: 200, actual: res.status });
  const ops = operationsOf(generated);
  for (const want of operationsOf(spec.document)) {
    const got = ops.find((o) => o.path === want.path && o.method === want.method);
    if (!got) {
      out.push({ what: `${want.method} ${want.path}`, expected: 'described', actual: '<<absent>>' });
      continue;
    }
    for (const p of want.params) {
      if (p.in === 'header' && /^(accept|content-type|authorization)$/i.test(p.name)) continue; // OpenAPI 3.1 §4.8.12.1
      const g = got.params.find((x) => x.in === p.in && x.name.toLowerCase() === p.name.toLowerCase());
      if (!g || g.required !== p.required) out.push({ what: `${want.method} ${want.path} parameter ${p.in}.${p.name}`, expected: { required: p.required }, actual: g ? { required: g.required } : '<<absent>>' });
    }
    if (want.body && !got.body) out.push({ what: `${want.method} ${want.path} requestBody`, expected: 'an application/json schema', actual: '<<absent>>' });
  }
  return { paths: Object.keys(isObject(generated.paths) ? generated.paths : {}) };
}

/** OpenRPC: each example answers its result; rpc.discover lists every method. */
async function playOpenRpc(spec: ApiDocSpec, baseUrl: string, options: PlayOptions, sent: string[], out: Mismatch[]): Promise<unknown> {
  const methods = (Array.isArray(spec.document.methods) ? spec.document.methods : []).filter(isObject);
  let id = 0;
  for (const m of methods) {
    for (const ex of (Array.isArray(m.examples) ? m.examples : []).filter(isObject)) {
      const params = Object.fromEntries((Array.isArray(ex.params) ? ex.params : []).filter(isObject).map((p) => [p.name, p.value]));
      const res = await post(baseUrl, '/rpc', { jsonrpc: '2.0', method: m.name, params, id: ++id }, options, sent);
      const want = isObject(ex.result) ? ex.result.value : undefined;
      const b = isObject(res.body) ? res.body : {};
      if (!same(b.result, want)) out.push({ what: `${String(m.name)} example ${JSON.stringify(ex.name ?? id)}`, expected: want, actual: b.error ?? b.result ?? res.body });
    }
  }
  const disc = await post(baseUrl, '/rpc', { jsonrpc: '2.0', method: 'rpc.discover', id: ++id }, options, sent);
  const listed = isObject(disc.body) && isObject(disc.body.result) && Array.isArray(disc.body.result.methods) ? disc.body.result.methods.filter(isObject).map((x) => x.name) : [];
  for (const m of methods) if (!listed.includes(m.name)) out.push({ what: `rpc.discover method ${String(m.name)}`, expected: 'listed', actual: '<<absent>>' });
  return { discovered: listed };
}

async function play(raw: Json, baseUrl: string, options: PlayOptions): Promise<KindOutcome> {
  const spec = raw as ApiDocSpec;
  const sent: string[] = [];
  const mismatches: Mismatch[] = [];
  const run = spec.format === 'asyncapi' ? playAsyncApi : spec.format === 'openapi' ? playOpenApi : playOpenRpc;
  const actual = await run(spec, baseUrl, options, sent, mismatches);
  return { mismatches, sent, expected: spec.expected ?? `the ${spec.format} document's own content`, actual };
}

export const apiDocsRuntime: KindRuntime = { play, serve };
