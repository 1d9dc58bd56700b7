/**
 * Test support for lib/grpc: a keel dual server on 127.0.0.1 with the probe service, and a real
 * @grpc/grpc-js client for it. Not part of the public API.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createGrpcRouter, type GrpcRouter } from './router.js';
import { attachGrpc, type GrpcAttachment, type GrpcServerOptions } from './server.js';

export const PROBE_PROTO = fileURLToPath(new URL('./testdata/probe.proto', import.meta.url));
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
export function clientFor(protoPath: string, service: string, loader: protoLoader.Options = { keepCase: true, longs: Number, defaults: true }): grpc.ServiceClientConstructor {
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
