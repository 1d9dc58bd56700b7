/**
 * Test support for lib/grpc: a keel dual server on 127.0.0.1 with the probe service, and a real
 * @grpc/grpc-js client for it. Not part of the public API.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { createGrpcRouter, type GrpcCallContext, type GrpcRouter } from './router.js';
import { GrpcError } from './status.js';
import { attachGrpc, type GrpcAttachment, type GrpcServerOptions } from './server.js';

export const PROBE_PROTO = fileURLToPath(new URL('./testdata/probe.proto', import.meta.url));
/** Client-side copies of the standard health and reflection protos. */
export const HEALTH_PROTO = fileURLToPath(new URL('./testdata/health.proto', import.meta.url));
export const REFLECTION_PROTO = fileURLToPath(new URL('./testdata/reflection.proto', import.meta.url));
export const GREETER_PROTO = fileURLToPath(new URL('../../examples/grpc/greeter.proto', import.meta.url));

export interface Running {
  server: http.Server;
  grpc: GrpcAttachment;
  address: string;
  port: number;
  close(): Promise<void>;
}

/** Listen on an ephemeral loopback port with `router` attached; HTTP/1 requests get `http1` (default: 200 "http1"). */
export async function start(router: GrpcRouter, config: unknown = {}, options: GrpcServerOptions = {}, http1?: http.RequestListener): Promise<Running> {
  const server = http.createServer(http1 ?? ((_req, res) => res.end('http1')));
  const attachment = attachGrpc(server, router, config, options);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    grpc: attachment,
    port,
    address: `127.0.0.1:${port}`,
    async close() {
      await attachment.shutdown(100);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A grpc-js client constructor for `service` in `protoPath`. */
export function clientFor(protoPath: string, service: string, loader: protoLoader.Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true }): grpc.ServiceClientConstructor {
  const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(protoPath, loader));
  let node: unknown = pkg;
  for (const part of service.split('.')) node = (node as Record<string, unknown>)[part];
  return node as grpc.ServiceClientConstructor;
}

export function connect(ctor: grpc.ServiceClientConstructor, address: string, options: grpc.ChannelOptions = {}): grpc.Client & Record<string, any> {
  return new ctor(address, grpc.credentials.createInsecure(), options) as grpc.Client & Record<string, any>;
}

/** Promise form of a unary call: resolves `{ value }` or `{ error }` (never rejects). */
export function unary<T = any>(client: any, method: string, request: unknown, metadata = new grpc.Metadata(), options: grpc.CallOptions = {}): Promise<{ value?: T; error?: grpc.ServiceError; headers?: grpc.Metadata; trailers?: grpc.Metadata }> {
  return new Promise((resolve) => {
    let headers: grpc.Metadata | undefined;
    let trailers: grpc.Metadata | undefined;
    const call = client[method](request, metadata, options, (error: grpc.ServiceError | null, value: T) => {
      setImmediate(() => resolve(error ? { error, headers, trailers } : { value, headers, trailers }));
    });
    call.on('metadata', (m: grpc.Metadata) => (headers = m));
    call.on('status', (s: grpc.StatusObject) => (trailers = s.metadata));
  });
}

/** Collect a server stream: the messages received and the final status. */
export function collect<T = any>(call: grpc.ClientReadableStream<T> | grpc.ClientDuplexStream<unknown, T>): Promise<{ messages: T[]; status: grpc.StatusObject; error?: grpc.ServiceError; headers?: grpc.Metadata }> {
  return new Promise((resolve) => {
    const messages: T[] = [];
    let error: grpc.ServiceError | undefined;
    let headers: grpc.Metadata | undefined;
    call.on('metadata', (m: grpc.Metadata) => (headers = m));
    call.on('data', (m: T) => messages.push(m));
    call.on('error', (e: grpc.ServiceError) => (error = e));
    call.on('status', (status: grpc.StatusObject) => setImmediate(() => resolve({ messages, status, error, headers })));
  });
}

export function probeRouter(): GrpcRouter {
  return createGrpcRouter();
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason);
    }, { once: true });
  });

export interface ProbeRequest {
  text: string;
  count: number;
  reply_bytes: number;
  payload: Buffer;
  delay_ms: number;
  fail_code: number;
}

/** What the probe handlers saw (for assertions on the server side). */
export interface ProbeLog {
  calls: { path: string; metadata: Record<string, unknown>; requestId?: string; auth?: unknown }[];
  aborted: string[];
  inFlight: number;
  maxInFlight: number;
  /** Resolves the pending `delay_ms: -2` calls. */
  release: (() => void)[];
}

/** Register keel.test.v1.Probe (NotImplemented has no handler on purpose). */
export function addProbe(router: GrpcRouter, log: ProbeLog = newLog()): ProbeLog {
  const reply = (req: ProbeRequest, index: number) => ({ text: req.text, index, payload: Buffer.alloc(req.reply_bytes, 0x61) });
  const enter = async (req: ProbeRequest, call: GrpcCallContext) => {
    log.calls.push({ path: call.path, metadata: { ...call.metadata }, requestId: call.requestId, auth: call.auth });
    log.inFlight++;
    log.maxInFlight = Math.max(log.maxInFlight, log.inFlight);
    call.signal.addEventListener('abort', () => log.aborted.push(call.path), { once: true });
    try {
      if (req.delay_ms > 0) await sleep(req.delay_ms, call.signal);
      if (req.delay_ms === -1) await sleep(2 ** 30, call.signal);
      if (req.delay_ms === -2) await new Promise<void>((resolve) => log.release.push(resolve));
    } finally {
      log.inFlight--;
    }
    if (req.fail_code) throw new GrpcError(req.fail_code, req.text, { 'x-failed': 'yes' });
  };
  router.addService(PROBE_PROTO, 'keel.test.v1.Probe', {
    Unary: async (req: ProbeRequest, call: GrpcCallContext) => {
      await enter(req, call);
      return { ...reply(req, 0), received_bytes: req.payload.length };
    },
    ServerStream: async function* (req: ProbeRequest, call: GrpcCallContext) {
      await enter(req, call);
      for (let i = 0; i < req.count; i++) yield reply(req, i);
    },
    ClientStream: async (requests: AsyncIterable<ProbeRequest>, call: GrpcCallContext) => {
      log.calls.push({ path: call.path, metadata: { ...call.metadata } });
      const texts: string[] = [];
      let bytes = 0;
      for await (const r of requests) {
        texts.push(r.text);
        bytes += r.payload.length;
      }
      return { text: texts.join(','), index: texts.length, received_bytes: bytes };
    },
    Bidi: async function* (requests: AsyncIterable<ProbeRequest>) {
      let i = 0;
      for await (const r of requests) yield reply(r, i++);
    },
  });
  return log;
}

export function newLog(): ProbeLog {
  return { calls: [], aborted: [], inFlight: 0, maxInFlight: 0, release: [] };
}

/** A keel server with the probe service and a grpc-js client for it. */
export async function probeServer(config: unknown = {}, options: GrpcServerOptions = {}, clientOptions: grpc.ChannelOptions = {}) {
  const router = createGrpcRouter();
  const log = addProbe(router);
  const running = await start(router, config, options);
  const client = connect(clientFor(PROBE_PROTO, 'keel.test.v1.Probe'), running.address, clientOptions);
  return {
    ...running,
    router,
    log,
    client,
    async close() {
      client.close();
      await running.close();
    },
  };
}

let probeRoot: protobuf.Root | undefined;
/** Encode a keel.test.v1 message with protobufjs (for raw HTTP/2 calls and size arithmetic). */
export function encodeProbe(type: 'ProbeRequest' | 'ProbeReply', value: Record<string, unknown>): Buffer {
  probeRoot ??= new protobuf.Root().loadSync(PROBE_PROTO, { keepCase: true });
  const t = probeRoot.lookupType(`keel.test.v1.${type}`);
  return Buffer.from(t.encode(t.fromObject(value)).finish());
}
