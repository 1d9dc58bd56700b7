/**
 * The protobuf cases of the shared conformance corpus (`../shared/conformance/testing_data/protobuf`),
 * driven with the real @grpc/grpc-js client against keel's gRPC server.
 *
 * The fixture app's handlers return the expected messages of successful cases and throw the expected status
 * of handler-level errors (NOT_FOUND, ALREADY_EXISTS, …). What keel itself is responsible for is produced by
 * keel: request decoding (every handler checks that it received the fixture's request), metadata in and out,
 * compression, deadlines (request_timeout), UNAUTHENTICATED from the JWT guard, API keys from the API-key guard,
 * the status in trailers. test/expectations/protobuf.json lists the cases checked differently, with the reason.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { jwtAuth } from '../../middleware/jwt-auth/index.js';
import { apiKeyAuth } from '../../middleware/api-key-auth/index.js';
import { GrpcError, GrpcStatus, createGrpcRouter, guardFromMiddleware, type GrpcCallContext, type GrpcServerOptions } from './index.js';
import { start } from './testkit.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CORPUS = join(ROOT, '../shared/conformance/testing_data/protobuf');
const EXPECTATIONS = JSON.parse(readFileSync(join(ROOT, 'test/expectations/protobuf.json'), 'utf8')) as {
  cases: Record<string, { expect: 'skip' | 'status-only' | 'prefix'; reason: string }>;
};

interface FixtureField { name: string; type: string; number: number; label: string; oneof?: string }
interface Fixture {
  name: string;
  protobuf: {
    package: string;
    messages: { name: string; fields: FixtureField[] }[];
    services: { name: string; methods: { name: string; input_type: string; output_type: string; client_streaming?: boolean; server_streaming?: boolean }[] }[];
  };
  handler: { service: string; method: string };
  request: { metadata?: Record<string, string>; message?: Record<string, unknown>; stream?: Record<string, unknown>[]; stream_size?: number };
  expected_response: {
    status_code: string;
    message?: unknown;
    stream?: Record<string, unknown>[];
    stream_count?: number;
    stream_sample?: Record<string, unknown>[];
    error?: { code: number | string; message: string };
    error_message?: string;
    metadata?: Record<string, string>;
    headers?: Record<string, string>;
    trailers?: Record<string, string>;
    protobuf?: { trailers?: Record<string, string> };
  };
}

function listCases(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listCases(p, `${prefix}${name}/`));
    else if (name.endsWith('.json') && name !== 'schema.json') out.push(`${prefix}${name}`);
  }
  return out;
}

/** The fixture's description as a protobufjs Root (labels other than `repeated` are plain proto3 fields). */
function rootOf(f: Fixture): protobuf.Root {
  const nested: Record<string, unknown> = {};
  for (const m of f.protobuf.messages) {
    const fields: Record<string, unknown> = {};
    const oneofs: Record<string, { oneof: string[] }> = {};
    for (const fl of m.fields) {
      fields[fl.name] = { type: fl.type, id: fl.number, ...(fl.label === 'repeated' ? { rule: 'repeated' } : {}) };
      if (fl.oneof) (oneofs[fl.oneof] ??= { oneof: [] }).oneof.push(fl.name);
    }
    nested[m.name] = { fields, ...(Object.keys(oneofs).length ? { oneofs } : {}) };
  }
  for (const s of f.protobuf.services) {
    const methods: Record<string, unknown> = {};
    for (const m of s.methods) methods[m.name] = { requestType: m.input_type, responseType: m.output_type, requestStream: !!m.client_streaming, responseStream: !!m.server_streaming };
    nested[s.name] = { methods };
  }
  let json: Record<string, unknown> = { nested };
  for (const part of f.protobuf.package.split('.').reverse()) json = { nested: { [part]: json } };
  return protobuf.Root.fromJSON(json as protobuf.INamespace);
}

/** `expected` ⊆ `actual`, comparing across the representations (int64 strings, bytes as base64, float32 rounding). */
function matches(expected: unknown, actual: unknown): boolean {
  if (expected === null || expected === undefined) return true;
  if (Buffer.isBuffer(actual)) return typeof expected === 'string' ? actual.toString('base64') === expected || actual.toString() === expected : false;
  if (typeof expected === 'number') return Math.abs(Number(actual) - expected) <= Math.abs(expected) * 1e-6;
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => matches(e, actual[i]));
  if (typeof expected === 'object') return typeof actual === 'object' && actual !== null && Object.entries(expected).every(([k, v]) => matches(v, (actual as Record<string, unknown>)[k]));
  return String(expected) === String(actual);
}

function generatedStream(id: string, size: number): Record<string, unknown>[] {
  // The two cases whose request stream is described in prose (`stream_generator`).
  if (id.includes('33_stream_large_batch_100')) return Array.from({ length: size }, (_, i) => ({ batch_id: 'batch-large-001', item_number: i, value: i + 1 }));
  if (id.includes('36_stream_rapid_messages')) return Array.from({ length: size }, (_, i) => ({ event_id: 'rapid-batch-001', timestamp: 1704067200000 + i * 2, metric_value: 0.1 * (i + 1) }));
  return [];
}

const statusCode = (name: string | number) => (typeof name === 'number' ? name : GrpcStatus[name as keyof typeof GrpcStatus]);

async function runCase(id: string, f: Fixture, mode: 'full' | 'status-only' | 'prefix'): Promise<void> {
  const pkg = f.protobuf.package;
  const service = f.protobuf.services[0]!;
  const method = service.methods.find((m) => `${pkg}.${service.name}` === f.handler.service && m.name === f.handler.method)!;
  const root = rootOf(f);
  const inType = root.lookupType(`${pkg}.${method.input_type}`);
  const outType = root.lookupType(`${pkg}.${method.output_type}`);
  const exp = f.expected_response;
  const code = statusCode(exp.status_code);
  const requests = f.request.stream ?? (f.request.stream_size ? generatedStream(id, f.request.stream_size) : f.request.message ? [f.request.message] : [{}]);
  const expectedStream = exp.stream ?? (exp.stream_count ? Array.from({ length: exp.stream_count }, () => undefined) : []);
  const errorMessage = exp.error?.message ?? exp.error_message ?? (typeof exp.message === 'string' ? exp.message : undefined) ?? (exp.message as { error_message?: string } | undefined)?.error_message ?? exp.status_code;
  const deadlineCase = code === GrpcStatus.DEADLINE_EXCEEDED;
  const authCase = id.includes('66_unauthenticated') || id.includes('91_api_key_auth');
  const received: unknown[] = [];

  // The fixture app: answers what the case expects; framework-produced outcomes are left to keel.
  const reply = (i: number, req: unknown): unknown => {
    if (id.includes('26_stream_rapid_100_messages')) return { sequence: i + 1, timestamp: 1704067200000 + i, status: 'processed' };
    if (id.includes('49_large_bidirectional')) return req;
    return expectedStream[i];
  };
  const fail = () => {
    if (code !== GrpcStatus.OK && !deadlineCase && !authCase) throw new GrpcError(code, errorMessage);
  };
  const untilDeadline = (call: GrpcCallContext) => new Promise<never>((_, reject) => call.signal.addEventListener('abort', () => reject(call.signal.reason), { once: true }));
  const respondMetadata = (call: GrpcCallContext) => {
    if (id.includes('10_metadata')) call.sendMetadata({ 'x-trace-id': `${call.metadata['x-trace-id']}-response`, 'x-response-time': '45' });
    if (exp.headers) call.sendMetadata(Object.fromEntries(Object.entries(exp.headers).filter(([k]) => k !== 'content-type')));
    for (const [k, v] of Object.entries({ ...exp.trailers, ...exp.protobuf?.trailers })) if (!k.startsWith('grpc-')) call.setTrailer(k, v);
  };
  const unaryReply = (req: unknown, call: GrpcCallContext) => {
    if (id.includes('10_metadata')) {
      return { request_id: (req as { request_id: string }).request_id, received_auth_header: call.metadata.authorization, received_trace_id: call.metadata['x-trace-id'], received_custom_header: call.metadata['x-custom-header'], response_time_ms: 45 };
    }
    return typeof exp.message === 'object' ? exp.message : {};
  };
  const handler = method.client_streaming
    ? method.server_streaming
      ? async function* bidi(reqs: AsyncIterable<unknown>, call: GrpcCallContext) {
          respondMetadata(call);
          let i = 0;
          for await (const r of reqs) {
            received.push(r);
            if (i < expectedStream.length) yield reply(i++, r);
            else if (code !== GrpcStatus.OK) fail();
          }
          while (i < expectedStream.length) yield reply(i++, undefined);
          fail();
        }
      : async (reqs: AsyncIterable<unknown>, call: GrpcCallContext) => {
          respondMetadata(call);
          for await (const r of reqs) received.push(r);
          fail();
          return unaryReply(undefined, call);
        }
    : method.server_streaming
      ? async function* serverStream(req: unknown, call: GrpcCallContext) {
          received.push(req);
          respondMetadata(call);
          const delay = Number((req as { delay_ms?: number }).delay_ms ?? 0);
          for (let i = 0; i < expectedStream.length; i++) {
            if (deadlineCase && delay) await new Promise((r) => setTimeout(r, delay));
            yield reply(i, req);
          }
          if (deadlineCase) await untilDeadline(call);
          fail();
        }
      : async (req: unknown, call: GrpcCallContext) => {
          received.push(req);
          respondMetadata(call);
          if (deadlineCase) await untilDeadline(call);
          fail();
          return unaryReply(req, call);
        };

  const router = createGrpcRouter();
  router.addService(root, f.handler.service, { [method.name]: handler as never });
  const options: GrpcServerOptions = {};
  if (id.includes('66_unauthenticated')) options.guard = guardFromMiddleware([jwtAuth({ secret: 'conformance-secret-of-at-least-32-bytes!' })]);
  if (id.includes('91_api_key_auth')) options.guard = guardFromMiddleware([apiKeyAuth({ keys: [String(f.request.metadata?.['x-api-key'])] })]);
  const clientDeadline = id.includes('29_stream_timeout') ? 1000 : id.includes('52_timeout_exceeded') ? 100 : undefined;
  const server = await start(router, deadlineCase && clientDeadline === undefined ? { request_timeout: 1 } : {}, options);
  const compress = f.request.metadata?.['grpc-encoding'] === 'gzip';
  const client = new grpc.Client(server.address, grpc.credentials.createInsecure(), compress ? { 'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip } : {});
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(f.request.metadata ?? {})) if (k !== 'content-type' && !k.startsWith('grpc-')) metadata.set(k, v);
  const serialize = (v: unknown) => Buffer.from(inType.encode(inType.fromObject(v as Record<string, unknown>)).finish());
  const deserialize = (b: Buffer) => outType.toObject(outType.decode(b), { longs: Number, enums: String, bytes: String, defaults: true });
  const callOptions = clientDeadline ? { deadline: Date.now() + clientDeadline } : {};
  const path = `/${f.handler.service}/${method.name}`;

  const result = await new Promise<{ messages: unknown[]; status: grpc.StatusObject; headers?: grpc.Metadata }>((resolve) => {
    const messages: unknown[] = [];
    let headers: grpc.Metadata | undefined;
    const done = (status: grpc.StatusObject) => setImmediate(() => resolve({ messages, status, headers }));
    // Every grpc-js call object is an EventEmitter with these events (unary calls never emit 'data').
    const hook = (call: NodeJS.EventEmitter) => {
      call.on('metadata', (m: grpc.Metadata) => (headers = m));
      call.on('status', done);
      call.on('data', (m: unknown) => messages.push(m));
      call.on('error', () => {});
    };
    const unaryCb = (err: grpc.ServiceError | null, value: unknown) => {
      if (!err) messages.push(value);
    };
    if (!method.client_streaming && !method.server_streaming) hook(client.makeUnaryRequest(path, serialize, deserialize, requests[0], metadata, callOptions, unaryCb));
    else if (!method.client_streaming) hook(client.makeServerStreamRequest(path, serialize, deserialize, requests[0], metadata, callOptions));
    else {
      const call = method.server_streaming
        ? client.makeBidiStreamRequest(path, serialize, deserialize, metadata, callOptions)
        : client.makeClientStreamRequest(path, serialize, deserialize, metadata, callOptions, unaryCb);
      hook(call);
      for (const r of requests) call.write(r);
      call.end();
    }
  });
  client.close();
  await server.close();

  assert.equal(result.status.code, code, `status ${exp.status_code}: got ${result.status.code} ${result.status.details}`);
  if (mode === 'status-only') return;
  if (!authCase || code === GrpcStatus.OK) {
    // What the handler received is what the client sent (keel's decoding), one message per request.
    // A call that fails mid-stream may stop reading before the client's last message.
    if (code === GrpcStatus.OK) assert.equal(received.length, requests.length, 'request messages received');
    else assert.ok(received.length >= 1 && received.length <= requests.length, `request messages received: ${received.length}`);
    received.forEach((got, i) => assert.ok(matches(requests[i], got), `request ${i}: ${JSON.stringify(got)}`));
  }
  if (code !== GrpcStatus.OK && !deadlineCase && !authCase) assert.equal(result.status.details, errorMessage);
  if (method.server_streaming) {
    const got = result.messages;
    if (mode === 'prefix') assert.ok(got.length >= 1 && got.length <= expectedStream.length, `partial stream of ${got.length}`);
    else assert.equal(got.length, expectedStream.length, 'stream length');
    got.forEach((m, i) => assert.ok(matches(exp.stream?.[i] ?? exp.stream_sample?.find((s) => matches(s.sequence, (m as { sequence?: number }).sequence)), m), `stream[${i}]: ${JSON.stringify(m)}`));
  } else if (code === GrpcStatus.OK) {
    assert.ok(matches(exp.message, result.messages[0]), `message: ${JSON.stringify(result.messages[0])}`);
  }
  for (const [k, v] of Object.entries({ ...exp.metadata, ...exp.headers })) if (k !== 'content-type') assert.deepEqual(result.headers?.get(k), [v], `header ${k}`);
  for (const [k, v] of Object.entries({ ...exp.trailers, ...exp.protobuf?.trailers })) {
    if (k === 'grpc-status') assert.equal(String(result.status.code), v);
    else if (!k.startsWith('grpc-')) assert.deepEqual(result.status.metadata.get(k), [v], `trailer ${k}`);
  }
}

if (!existsSync(CORPUS)) {
  describe('protobuf conformance corpus', () => {
    it(`should run the protobuf cases (skipped: ${CORPUS} not found)`, { skip: `conformance corpus not found at ${CORPUS}` }, () => {});
  });
} else {
  describe('when keel serves the protobuf conformance cases', () => {
    for (const id of listCases(CORPUS)) {
      const exp = EXPECTATIONS.cases[id];
      const f = JSON.parse(readFileSync(join(CORPUS, id), 'utf8')) as Fixture;
      const title = `should pass ${id} (${f.name})`;
      if (exp?.expect === 'skip') it(`${title} (skipped: ${exp.reason})`, { skip: exp.reason }, () => {});
      else it(exp ? `${title} [${exp.expect}: ${exp.reason}]` : title, () => runCase(id, f, exp?.expect === 'status-only' || exp?.expect === 'prefix' ? exp.expect : 'full'));
    }
  });
}
