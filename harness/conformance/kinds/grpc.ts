/**
 * gRPC cases as real gRPC calls over HTTP/2 (@grpc/grpc-js client, messages encoded with the case's
 * own `.proto`), and keel's fixture service for them (`app.grpc` on keel's dual HTTP/1 + h2c server).
 *
 * The fixture handler knows what any implementation is told: the request messages it must receive
 * (it fails the call with INTERNAL naming the difference when keel decoded something else), the
 * response messages, metadata and trailers, and an error status the service itself raises. What the
 * transport owns is left to keel: decoding, framing, compression, metadata, the status in trailers,
 * and deadlines (a case expecting DEADLINE_EXCEEDED gets a handler that never answers: the client's
 * `grpc-timeout`, or when it sends none the service's `request_timeout` of DEADLINE_CASE_TIMEOUT_S,
 * must end the call).
 */
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { pino } from 'pino';
import { GrpcError } from '../../../lib/grpc/status.js';
import type { GrpcCallContext } from '../../../lib/grpc/types.js';
import type { Mismatch } from '../compare.js';
import type { GrpcSpec } from './grpc-spec.js';
import { isObject, type Json, type KindOutcome, type KindRuntime, type PlayOptions } from './kind.js';

/** The service-side deadline (seconds) of a case expecting DEADLINE_EXCEEDED whose client sends no `grpc-timeout`. */
export const DEADLINE_CASE_TIMEOUT_S = 1;

/** `expected` ⊆ `actual` across representations (int64 as strings, bytes as base64, float32 rounding). */
export function matches(expected: unknown, actual: unknown): boolean {
  if (expected === null || expected === undefined) return true;
  if (Buffer.isBuffer(actual) || actual instanceof Uint8Array) {
    const b = Buffer.from(actual);
    return typeof expected === 'string' && (b.toString('base64') === expected || b.toString() === expected);
  }
  if (typeof expected === 'number') return Math.abs(Number(actual) - expected) <= Math.abs(expected) * 1e-6;
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => matches(e, actual[i]));
  if (typeof expected === 'object') return isObject(actual) && Object.entries(expected).every(([k, v]) => matches(v, actual[k]));
  return String(expected) === String(actual);
}

/** `grpc-timeout` (gRPC over HTTP/2: digits and a unit H M S m u n) in milliseconds. */
export function grpcTimeoutMs(v: string | undefined): number | undefined {
  const m = v === undefined ? null : /^(\d{1,8})([HMSmun])$/.exec(v.trim());
  if (!m) return undefined;
  const per: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };
  return Number(m[1]) * per[m[2]!]!;
}

function rootOf(spec: GrpcSpec): protobuf.Root {
  return protobuf.parse(spec.proto, { keepCase: true }).root;
}

function types(spec: GrpcSpec) {
  const root = rootOf(spec);
  const method = spec.services[0]!.methods.find((m) => m.name === spec.method)!;
  const lookup = (name: string) => root.lookupType(spec.package ? `${spec.package}.${name}` : name);
  return { root, input: lookup(method.input_type), output: lookup(method.output_type) };
}

/** Response message i: the case's, or (when the case gives only a count) request i's same-named fields. */
function reply(spec: GrpcSpec, i: number, requests: unknown[]): unknown {
  if (spec.expected.stream) return spec.expected.stream[i];
  return isObject(requests[i]) ? requests[i] : {};
}

function replyCount(spec: GrpcSpec): number {
  return spec.expected.stream?.length ?? spec.expected.stream_count ?? 0;
}

/** The handler of keel's fixture service for one case (see the module comment). */
function fixtureHandler(spec: GrpcSpec) {
  const exp = spec.expected;
  const received: unknown[] = [];
  const check = (req: unknown) => {
    const i = received.push(req) - 1;
    if (!matches(spec.requests[i], req)) throw new GrpcError(13, `fixture: request message ${i} arrived as ${JSON.stringify(req)}, the client sent ${JSON.stringify(spec.requests[i])}`);
  };
  const begin = (call: GrpcCallContext) => {
    if (exp.headers) call.sendMetadata(exp.headers);
    for (const [k, v] of Object.entries(exp.trailers ?? {})) if (!k.startsWith('grpc-')) call.setTrailer(k, v); // grpc-* keys are the transport's (keel refuses them)
  };
  const finish = async (call: GrpcCallContext) => {
    if (exp.code === 4) await new Promise<never>((_, reject) => call.signal.addEventListener('abort', () => reject(call.signal.reason), { once: true }));
    if (exp.code !== 0) throw new GrpcError(exp.code, exp.status_message ?? exp.status);
  };
  if (spec.client_streaming && spec.server_streaming) {
    return async function* bidi(reqs: AsyncIterable<unknown>, call: GrpcCallContext) {
      begin(call);
      let sent = 0;
      for await (const r of reqs) {
        check(r);
        if (sent < replyCount(spec)) yield reply(spec, sent++, received);
      }
      while (sent < replyCount(spec)) yield reply(spec, sent++, received);
      await finish(call);
    };
  }
  if (spec.client_streaming) {
    return async (reqs: AsyncIterable<unknown>, call: GrpcCallContext) => {
      begin(call);
      for await (const r of reqs) check(r);
      await finish(call);
      return exp.message ?? {};
    };
  }
  if (spec.server_streaming) {
    return async function* serverStream(req: unknown, call: GrpcCallContext) {
      check(req);
      begin(call);
      for (let i = 0; i < replyCount(spec); i++) yield reply(spec, i, received);
      await finish(call);
    };
  }
  return async (req: unknown, call: GrpcCallContext) => {
    check(req);
    begin(call);
    await finish(call);
    return exp.message ?? {};
  };
}

/** keel's fixture app serving the case's service. */
async function serve(raw: Json) {
  const spec = raw as GrpcSpec;
  const clientDeadline = grpcTimeoutMs(spec.metadata['grpc-timeout']);
  const grpcConfig = spec.expected.code === 4 && clientDeadline === undefined ? { request_timeout: DEADLINE_CASE_TIMEOUT_S } : {};
  const { App } = await import('../../../lib/app/app.js');
  const app = new App({ host: '127.0.0.1', port: 0, graceful_shutdown: false, shutdown_timeout: 0, grpc: grpcConfig }, { logger: pino({ level: 'silent' }) });
  app.grpc(rootOf(spec), spec.service, { [spec.method]: fixtureHandler(spec) as never });
  await app.ready();
  const handle = await app.listen({ host: '127.0.0.1', port: 0, handleSignals: false });
  return { url: handle.url, close: () => handle.close() };
}

interface CallResult { messages: unknown[]; status: grpc.StatusObject; headers?: grpc.Metadata }

/** Make the case's call against `baseUrl` and compare. */
async function play(raw: Json, baseUrl: string, options: PlayOptions): Promise<KindOutcome> {
  const spec = raw as GrpcSpec;
  const { input, output } = types(spec);
  const exp = spec.expected;
  const path = `/${spec.service}/${spec.method}`;
  const sent = [`gRPC ${path} (${spec.requests.length} message${spec.requests.length === 1 ? '' : 's'})`];
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(spec.metadata)) if (k !== 'content-type' && k !== 'te' && !k.startsWith('grpc-')) metadata.set(k, v);
  if (options.caseHeader) metadata.set(options.caseHeader[0].toLowerCase(), options.caseHeader[1]);
  const compress = spec.metadata['grpc-encoding'] === 'gzip';
  const client = new grpc.Client(new URL(baseUrl).host, grpc.credentials.createInsecure(), compress ? { 'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip } : {});
  const serialize = (v: unknown) => Buffer.from(input.encode(input.fromObject(v as Json)).finish());
  const deserialize = (b: Buffer) => output.toObject(output.decode(b), { longs: String, enums: String, bytes: String, defaults: true });
  const deadlineMs = grpcTimeoutMs(spec.metadata['grpc-timeout']) ?? options.timeoutMs;
  const callOptions = { deadline: Date.now() + deadlineMs };
  let result: CallResult;
  try {
    result = await new Promise<CallResult>((resolve) => {
      const messages: unknown[] = [];
      let headers: grpc.Metadata | undefined;
      const hook = (call: NodeJS.EventEmitter) => {
        call.on('metadata', (m: grpc.Metadata) => (headers = m));
        call.on('status', (status: grpc.StatusObject) => setImmediate(() => resolve({ messages, status, ...(headers ? { headers } : {}) })));
        call.on('data', (m: unknown) => messages.push(m));
        call.on('error', () => {});
      };
      const unaryCb = (err: grpc.ServiceError | null, value: unknown) => void (err ? undefined : messages.push(value));
      const first = spec.requests[0] ?? {};
      if (!spec.client_streaming && !spec.server_streaming) hook(client.makeUnaryRequest(path, serialize, deserialize, first, metadata, callOptions, unaryCb));
      else if (!spec.client_streaming) hook(client.makeServerStreamRequest(path, serialize, deserialize, first, metadata, callOptions));
      else {
        const call = spec.server_streaming ? client.makeBidiStreamRequest(path, serialize, deserialize, metadata, callOptions) : client.makeClientStreamRequest(path, serialize, deserialize, metadata, callOptions, unaryCb);
        hook(call);
        for (const r of spec.requests) call.write(r);
        call.end();
      }
    });
  } finally {
    client.close();
  }
  return { mismatches: compareCall(spec, result), sent, expected: exp, actual: actualOf(result) };
}

function actualOf(r: CallResult): Json {
  return { status: `${r.status.code} ${r.status.details}`, messages: r.messages, headers: r.headers?.getMap() ?? {}, trailers: r.status.metadata.getMap() };
}

/** The differences between the case's expectation and the call's outcome. */
export function compareCall(spec: GrpcSpec, r: CallResult): Mismatch[] {
  const exp = spec.expected;
  const out: Mismatch[] = [];
  if (r.status.code !== exp.code) return [{ what: 'grpc-status', expected: `${exp.code} ${exp.status}`, actual: `${r.status.code} ${r.status.details}` }];
  if (exp.code !== 0 && exp.status_message !== undefined && exp.code !== 4 && r.status.details !== exp.status_message) out.push({ what: 'grpc-message', expected: exp.status_message, actual: r.status.details });
  if (spec.server_streaming) {
    const want = replyCount(spec);
    if (r.messages.length !== want) out.push({ what: 'response stream length', expected: want, actual: r.messages.length });
    exp.stream?.forEach((m, i) => {
      if (i < r.messages.length && !matches(m, r.messages[i])) out.push({ what: `response stream[${i}]`, expected: m, actual: r.messages[i] });
    });
  } else if (exp.code === 0 && !matches(exp.message ?? {}, r.messages[0])) {
    out.push({ what: 'response message', expected: exp.message, actual: r.messages[0] ?? '<<none>>' });
  }
  const headers = r.headers?.getMap() ?? {};
  const trailers = r.status.metadata.getMap();
  for (const [k, v] of Object.entries(exp.headers ?? {})) {
    // A JSON-written case cannot say whether its metadata is sent before or after the messages.
    const got = headers[k] ?? trailers[k];
    if (String(got) !== v) out.push({ what: `metadata ${k}`, expected: v, actual: got === undefined ? '<<absent>>' : String(got) });
  }
  for (const [k, v] of Object.entries(exp.trailers ?? {})) {
    if (k === 'grpc-status') continue;
    const got = k === 'grpc-message' ? r.status.details : trailers[k];
    if (String(got) !== v) out.push({ what: `trailer ${k}`, expected: v, actual: got === undefined ? '<<absent>>' : String(got) });
  }
  return out;
}

export const grpcRuntime: KindRuntime = { play, serve };
