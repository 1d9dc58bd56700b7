/**
 * gRPC cases, normalised from the corpus's two shapes into one spec (the manifest's `protocol`):
 * - protobuf documents (`{protobuf {package, messages, services}, handler {service, method},
 *   request {metadata, message | stream | stream_size + stream_generator}, expected_response {status_code (gRPC name), message | stream}}`);
 * - gRPC calls written as HTTP/1.1 JSON exchanges (`Content-Type: application/grpc`, route
 *   `/<package>.<Service>/<Method>`, a JSON body and a body_schema; the expected `grpc-status`
 *   header and body): their messages are derived from the request's body_schema and the expected
 *   body's JSON types (string, int64 for integers, double, bool), so they become real gRPC calls.
 * The spec carries a `.proto` text an implementation can load (protoText).
 */
import { generatedStream } from './grpc-generated-stream.js';
import { isObject, type Json, type KindLoad, type KindLoader } from './kind.js';

export interface ProtoField { name: string; type: string; number: number; label?: string; oneof?: string }
export interface ProtoMessage { name: string; fields: ProtoField[] }
export interface ProtoMethod { name: string; input_type: string; output_type: string; client_streaming?: boolean; server_streaming?: boolean }
export interface ProtoService { name: string; methods: ProtoMethod[] }

/** gRPC status names by code (gRPC status codes, doc/statuscodes.md). */
export const GRPC_STATUS_NAMES: readonly string[] = ['OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED'];

export interface GrpcSpec extends Json {
  package: string;
  messages: ProtoMessage[];
  services: ProtoService[];
  /** Fully qualified service (`example.v1.Greeter`) and method name. */
  service: string;
  method: string;
  client_streaming: boolean;
  server_streaming: boolean;
  /** Request metadata (lower-case keys; `grpc-timeout` becomes the call's deadline). */
  metadata: Record<string, string>;
  /** The request messages, in order (one for unary and server-streaming calls). */
  requests: Json[];
  expected: {
    /** gRPC status name and code. */
    status: string;
    code: number;
    /** Status message (`grpc-message`) when the case gives one. */
    status_message?: string;
    /** The response message (unary, client streaming). */
    message?: Json;
    /** The response messages in order (server streaming, bidi), or only their count. */
    stream?: Json[];
    stream_count?: number;
    /** Response metadata (headers) and trailers the case lists. */
    headers?: Record<string, string>;
    trailers?: Record<string, string>;
  };
  /** The `.proto` text of the messages and the service. */
  proto: string;
}

function strings(v: unknown): Record<string, string> {
  if (!isObject(v)) return {};
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.toLowerCase(), String(x)]));
}

/** A status name or number as [name, code], or undefined. */
export function grpcStatus(v: unknown): [string, number] | undefined {
  if (typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v))) {
    const code = Number(v);
    return GRPC_STATUS_NAMES[code] ? [GRPC_STATUS_NAMES[code]!, code] : undefined;
  }
  const code = typeof v === 'string' ? GRPC_STATUS_NAMES.indexOf(v.toUpperCase()) : -1;
  return code >= 0 ? [GRPC_STATUS_NAMES[code]!, code] : undefined;
}

/** The `.proto` (proto3) text of a package's messages and services. */
export function protoText(pkg: string, messages: readonly ProtoMessage[], services: readonly ProtoService[]): string {
  const lines = ['syntax = "proto3";', '', ...(pkg ? [`package ${pkg};`, ''] : [])];
  for (const m of messages) {
    lines.push(`message ${m.name} {`);
    const oneofs = new Map<string, ProtoField[]>();
    for (const f of m.fields) {
      if (f.oneof) oneofs.set(f.oneof, [...(oneofs.get(f.oneof) ?? []), f]);
      else lines.push(`  ${f.label === 'repeated' ? 'repeated ' : ''}${f.type} ${f.name} = ${f.number};`);
    }
    for (const [name, fields] of oneofs) lines.push(`  oneof ${name} {`, ...fields.map((f) => `    ${f.type} ${f.name} = ${f.number};`), '  }');
    lines.push('}', '');
  }
  for (const s of services) {
    lines.push(`service ${s.name} {`);
    for (const m of s.methods) lines.push(`  rpc ${m.name} (${m.client_streaming ? 'stream ' : ''}${m.input_type}) returns (${m.server_streaming ? 'stream ' : ''}${m.output_type});`);
    lines.push('}', '');
  }
  return lines.join('\n');
}

function statusMessage(exp: Json): string | undefined {
  const err = isObject(exp.error) ? exp.error : undefined;
  if (typeof err?.message === 'string') return err.message;
  if (typeof exp.error_message === 'string') return exp.error_message;
  return undefined;
}

/** A protobuf document (`protobuf`, `handler`, `request`, `expected_response`). */
export function fromProtobufDocument(doc: Json): KindLoad {
  const pb = doc.protobuf as Json;
  const handler = isObject(doc.handler) ? doc.handler : {};
  const request = isObject(doc.request) ? doc.request : {};
  const exp = isObject(doc.expected_response) ? doc.expected_response : {};
  const pkg = String(pb.package ?? '');
  const messages = (Array.isArray(pb.messages) ? pb.messages : []) as ProtoMessage[];
  const services = (Array.isArray(pb.services) ? pb.services : []) as ProtoService[];
  const service = String(handler.service ?? '');
  const svc = services.find((s) => `${pkg}.${s.name}` === service || s.name === service);
  const method = svc?.methods.find((m) => m.name === handler.method);
  if (!svc || !method) return { skip: `malformed protobuf case: handler ${service}/${String(handler.method)} is not among protobuf.services` };
  const status = grpcStatus(exp.status_code);
  if (!status) return { skip: `malformed protobuf case: expected_response.status_code ${JSON.stringify(exp.status_code)} is not a gRPC status` };
  let requests: Json[];
  if (Array.isArray(request.stream)) requests = request.stream as Json[];
  else if (isObject(request.message)) requests = [request.message];
  else if (request.stream_size !== undefined) {
    const generated = generatedStream(request.stream_size, request.stream_generator, messages.find((m) => m.name === method.input_type || `${pkg}.${m.name}` === method.input_type));
    if (!Array.isArray(generated)) return { skip: `the request stream cannot be generated: ${generated.skip}` };
    requests = generated;
  }
  else requests = [{}];
  const headers = strings(exp.headers ?? exp.metadata);
  delete headers['content-type'];
  const trailers = { ...strings(exp.trailers), ...strings((exp.protobuf as Json | undefined)?.trailers) };
  const message = isObject(exp.message) ? exp.message : undefined;
  const spec: GrpcSpec = {
    package: pkg, messages, services: [svc], service: `${pkg}.${svc.name}`, method: method.name,
    client_streaming: !!method.client_streaming, server_streaming: !!method.server_streaming,
    metadata: strings(request.metadata), requests,
    expected: {
      status: status[0], code: status[1],
      ...(statusMessage(exp) !== undefined ? { status_message: statusMessage(exp)! } : {}),
      ...(message && status[1] === 0 ? { message } : {}),
      ...(Array.isArray(exp.stream) ? { stream: exp.stream as Json[] } : {}),
      ...(typeof exp.stream_count === 'number' && !Array.isArray(exp.stream) ? { stream_count: exp.stream_count } : {}),
      ...(Object.keys(headers).length ? { headers } : {}),
      ...(Object.keys(trailers).length ? { trailers } : {}),
    },
    proto: protoText(pkg, messages, [svc]),
  };
  return { spec, ...(typeof doc.name === 'string' ? { name: doc.name } : {}), ...(typeof doc.description === 'string' ? { description: doc.description } : {}) };
}

const JSON_TYPE_TO_PROTO: Record<string, string> = { string: 'string', integer: 'int64', number: 'double', boolean: 'bool' };

function protoTypeOfValue(v: unknown): string | undefined {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'double';
  return undefined;
}

/** Message fields from a JSON Schema's scalar properties, else from a JSON value's scalar members. */
function fieldsOf(schema: unknown, value: unknown): ProtoField[] | string {
  const fields: ProtoField[] = [];
  const props = isObject(schema) && isObject(schema.properties) ? schema.properties : undefined;
  const entries = props ? Object.entries(props).map(([k, s]) => [k, JSON_TYPE_TO_PROTO[String((s as Json).type)]] as const) : Object.entries(isObject(value) ? value : {}).map(([k, v]) => [k, protoTypeOfValue(v)] as const);
  for (const [name, type] of entries) {
    if (!type) return `field ${name} is not a scalar (a JSON-written gRPC call can only describe scalar fields)`;
    fields.push({ name, type, number: fields.length + 1 });
  }
  return fields;
}

/** True when an HTTP case's request is a gRPC call written as HTTP/1.1 JSON (`Content-Type: application/grpc`). */
export function isGrpcJsonCase(request: unknown): boolean {
  const headers = isObject(request) && isObject(request.headers) ? request.headers : {};
  const type = Object.entries(headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1];
  return typeof type === 'string' && /^application\/grpc(\+json|\+proto|;|$)/i.test(type.trim());
}

/** A gRPC call written as an HTTP/1.1 JSON exchange, as a real gRPC call (see the module comment). */
export function fromGrpcJsonCase(http: Json): KindLoad {
  const handler = isObject(http.handler) ? http.handler : {};
  const request = http.request as Json;
  const exp = isObject(http.expected_response) ? http.expected_response : {};
  const path = String(request.path ?? handler.route ?? '').split('?', 1)[0]!;
  const m = /^\/((?:[A-Za-z_]\w*\.)*)([A-Za-z_]\w*)\/([A-Za-z_]\w*)$/.exec(path);
  if (!m) return { skip: `a gRPC call's path must be /<package>.<Service>/<Method>, got ${JSON.stringify(path)}` };
  const pkg = m[1]!.replace(/\.$/, '');
  const headers = strings(request.headers);
  const respHeaders = strings(exp.headers);
  const status = grpcStatus(respHeaders['grpc-status'] ?? (isObject(exp.body) ? exp.body.code : undefined) ?? 0) ?? ['OK', 0];
  const body = isObject(exp.body) ? exp.body : undefined;
  const errorBody = status[1] !== 0 && body && typeof body.message === 'string' ? body : undefined;
  const input = fieldsOf(handler.body_schema, request.body);
  const output = fieldsOf(undefined, errorBody ? {} : body);
  if (typeof input === 'string') return { skip: `request ${input}` };
  if (typeof output === 'string') return { skip: `response ${output}` };
  const messages: ProtoMessage[] = [{ name: `${m[3]}Request`, fields: input }, { name: `${m[3]}Response`, fields: output }];
  const services: ProtoService[] = [{ name: m[2]!, methods: [{ name: m[3]!, input_type: `${m[3]}Request`, output_type: `${m[3]}Response` }] }];
  const metadata = Object.fromEntries(Object.entries(headers).filter(([k]) => !['content-type', 'te', 'content-length', 'host'].includes(k)));
  const responseMetadata = Object.fromEntries(Object.entries(respHeaders).filter(([k]) => k !== 'content-type' && !k.startsWith('grpc-')));
  const spec: GrpcSpec = {
    package: pkg, messages, services, service: `${pkg ? `${pkg}.` : ''}${m[2]}`, method: m[3]!,
    client_streaming: false, server_streaming: false, metadata,
    requests: [isObject(request.body) ? request.body : {}],
    expected: {
      status: status[0], code: status[1],
      ...(errorBody ? { status_message: errorBody.message as string } : {}),
      ...(status[1] === 0 && body ? { message: body } : {}),
      ...(Object.keys(responseMetadata).length ? { headers: responseMetadata } : {}),
    },
    proto: protoText(pkg, messages, services),
  };
  return { spec };
}

export const grpcLoader: KindLoader = {
  kind: 'grpc',
  load(doc) {
    if (!isObject(doc)) return undefined;
    if (isObject(doc.protobuf)) return fromProtobufDocument(doc);
    const http = isObject(doc.http) ? doc.http : doc;
    if (isObject(http.request) && isGrpcJsonCase(http.request) && isObject(http.expected_response)) return fromGrpcJsonCase(http);
    return undefined;
  },
  server(raw) {
    const spec = raw as GrpcSpec;
    const { status, code, ...answer } = spec.expected;
    // DEADLINE_EXCEEDED is the transport's answer: the handler is only told never to answer.
    return {
      package: spec.package, service: spec.service, method: spec.method, client_streaming: spec.client_streaming, server_streaming: spec.server_streaming, proto: spec.proto,
      requests: spec.requests,
      handler: code === 4 ? { never_answers: true, ...(answer.headers ? { headers: answer.headers } : {}), ...(answer.trailers ? { trailers: answer.trailers } : {}) } : { status, code, ...answer },
    };
  },
};
