import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor.js';
import { AppError, ConfigError } from '../http/errors.js';
import { GrpcStatus, attachGrpc, createGrpcRouter } from './index.js';
import { clientFor, collect, connect, probeServer, unary, GREETER_PROTO, HEALTH_PROTO, PROBE_PROTO, REFLECTION_PROTO } from './testkit.js';

type Probe = Awaited<ReturnType<typeof probeServer>>;

describe('when a client asks grpc.health.v1.Health', () => {
  let s: Probe;
  let health: grpc.Client & Record<string, any>;
  before(async () => {
    s = await probeServer();
    health = connect(clientFor(HEALTH_PROTO, 'grpc.health.v1.Health'), s.address);
  });
  after(async () => {
    health.close();
    await s.close();
  });

  it('should report the server as SERVING', async () => {
    assert.equal((await unary(health, 'Check', { service: '' })).value?.status, 'SERVING');
  });

  it('should report a registered service as SERVING', async () => {
    assert.equal((await unary(health, 'Check', { service: 'keel.test.v1.Probe' })).value?.status, 'SERVING');
  });

  it('should answer NOT_FOUND for an unknown service', async () => {
    assert.equal((await unary(health, 'Check', { service: 'no.Such' })).error?.code, GrpcStatus.NOT_FOUND);
  });

  it('should stream status changes to a watcher, and end the watch on shutdown', async () => {
    const call = health.Watch({ service: 'keel.test.v1.Probe' });
    const statuses: string[] = [];
    const done = collect(call);
    call.on('data', (m: { status: string }) => {
      statuses.push(m.status);
      if (statuses.length === 1) s.router.health!.set('keel.test.v1.Probe', 'NOT_SERVING');
      if (statuses.length === 2) s.router.health!.set('keel.test.v1.Probe', 'SERVING');
      if (statuses.length === 3) void s.grpc.shutdown(5000);
    });
    const r = await done;
    assert.deepEqual(statuses, ['SERVING', 'NOT_SERVING', 'SERVING', 'NOT_SERVING']);
    assert.equal(r.status.code, GrpcStatus.UNAVAILABLE);
  });
});

describe('when a client uses server reflection', () => {
  let s: Probe;
  let alpha: grpc.Client & Record<string, any>;
  before(async () => {
    s = await probeServer();
    alpha = connect(clientFor(REFLECTION_PROTO, 'grpc.reflection.v1alpha.ServerReflection', { keepCase: true, oneofs: true }), s.address);
  });
  after(async () => {
    alpha.close();
    await s.close();
  });

  const ask = async (requests: Record<string, unknown>[]) => {
    const call = alpha.ServerReflectionInfo();
    const result = collect(call);
    for (const r of requests) call.write(r);
    call.end();
    return (await result).messages;
  };
  const files = (response: any) =>
    (response.file_descriptor_response.file_descriptor_proto as Buffer[]).map((b) => descriptor.FileDescriptorProto.decode(b) as unknown as { name: string; package: string; service: { name: string; method: { name: string; clientStreaming?: boolean; serverStreaming?: boolean }[] }[] });

  it('should list every registered service, health and reflection included', async () => {
    const [r] = await ask([{ list_services: '' }]);
    const names = r.list_services_response.service.map((x: { name: string }) => x.name).sort();
    assert.deepEqual(names, ['grpc.health.v1.Health', 'grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection', 'keel.test.v1.Probe']);
  });

  it('should serve the file descriptor that defines a service', async () => {
    const [r] = await ask([{ file_containing_symbol: 'keel.test.v1.Probe' }]);
    const file = files(r).find((f) => f.package === 'keel.test.v1')!;
    const probe = file.service.find((x) => x.name === 'Probe')!;
    assert.deepEqual(probe.method.map((m) => m.name), ['Unary', 'ServerStream', 'ClientStream', 'Bidi', 'NotImplemented']);
    assert.equal(probe.method[3]!.clientStreaming, true);
    assert.equal(probe.method[3]!.serverStreaming, true);
  });

  it('should find a file by a method or message symbol and by its file name', async () => {
    const [byMethod, byMessage] = await ask([{ file_containing_symbol: 'keel.test.v1.Probe.Unary' }, { file_containing_symbol: 'keel.test.v1.ProbeReply' }]);
    const name = files(byMethod).find((f) => f.package === 'keel.test.v1')!.name;
    assert.ok(files(byMessage).some((f) => f.name === name));
    const [byName] = await ask([{ file_by_filename: name }]);
    assert.equal(files(byName)[0]!.name, name);
  });

  it('should answer NOT_FOUND in the response for an unknown symbol or file', async () => {
    const [sym, file] = await ask([{ file_containing_symbol: 'no.such.Service' }, { file_by_filename: 'nope.proto' }]);
    assert.equal(sym.error_response.error_code, GrpcStatus.NOT_FOUND);
    assert.equal(file.error_response.error_code, GrpcStatus.NOT_FOUND);
  });

  it('should answer the same on grpc.reflection.v1', async () => {
    const def = clientFor(REFLECTION_PROTO, 'grpc.reflection.v1alpha.ServerReflection', { keepCase: true, oneofs: true }).service.ServerReflectionInfo!;
    const call = alpha.makeBidiStreamRequest('/grpc.reflection.v1.ServerReflection/ServerReflectionInfo', def.requestSerialize, def.responseDeserialize);
    const result = collect(call);
    call.write({ list_services: '' });
    call.end();
    const [r] = (await result).messages as any[];
    assert.ok(r.list_services_response.service.some((x: { name: string }) => x.name === 'keel.test.v1.Probe'));
  });
});

describe('when services are registered', () => {
  it('should accept a protobufjs Root as the definition', async () => {
    const root = protobuf.Root.fromJSON({
      nested: { demo: { nested: {
        Ping: { fields: { text: { type: 'string', id: 1 } } },
        Echo: { methods: { Say: { requestType: 'Ping', responseType: 'Ping' } } },
      } } },
    });
    const router = createGrpcRouter();
    router.addService(root, 'demo.Echo', { Say: ({ text }: { text: string }) => ({ text: text.toUpperCase() }) });
    assert.equal(router.lookup('/demo.Echo/Say')?.kind, 'unary');
  });

  it('should accept handlers named in lowerCamelCase', () => {
    const router = createGrpcRouter();
    router.addService(GREETER_PROTO, 'keel.examples.v1.Greeter', { sayHello: () => ({}) });
    assert.equal(typeof router.lookup('/keel.examples.v1.Greeter/SayHello')?.handler, 'function');
  });

  it('should tell each method kind apart', () => {
    const router = createGrpcRouter();
    router.addService(GREETER_PROTO, 'keel.examples.v1.Greeter', {});
    const kinds = ['SayHello', 'SayHelloMany', 'GreetAll', 'Chat'].map((m) => router.lookup(`/keel.examples.v1.Greeter/${m}`)?.kind);
    assert.deepEqual(kinds, ['unary', 'server_streaming', 'client_streaming', 'bidi_streaming']);
  });
});

describe('when a registration is wrong', () => {
  const router = () => createGrpcRouter();

  it('should throw AppError for a service the .proto does not define, suggesting the closest', () => {
    assert.throws(() => router().addService(GREETER_PROTO, 'keel.examples.v1.Greter', {}), (e: unknown) => e instanceof AppError && /did you mean "keel\.examples\.v1\.Greeter"/.test(e.message));
  });

  it('should throw AppError for a handler that matches no method', () => {
    assert.throws(() => router().addService(GREETER_PROTO, 'keel.examples.v1.Greeter', { SayHelo: () => ({}) }), (e: unknown) => e instanceof AppError && /"SayHelo" matches no method.*"SayHello"/.test(e.message));
  });

  it('should throw AppError for a handler that is not a function', () => {
    assert.throws(() => router().addService(GREETER_PROTO, 'keel.examples.v1.Greeter', { SayHello: 'x' as never }), AppError);
  });

  it('should throw AppError for a service registered twice', () => {
    const r = router().addService(GREETER_PROTO, 'keel.examples.v1.Greeter', {});
    assert.throws(() => r.addService(GREETER_PROTO, 'keel.examples.v1.Greeter', {}), /already registered/);
  });

  it('should throw AppError for a .proto file that does not exist', () => {
    assert.throws(() => router().addService('/nonexistent/x.proto', 'a.B', {}), AppError);
  });

  it('should throw AppError for a .proto file that does not parse', () => {
    assert.throws(() => router().addService(PROBE_PROTO.replace('probe.proto', 'broken.proto'), 'a.B', {}), (e: unknown) => e instanceof AppError && /Loading gRPC definitions failed/.test(e.message));
  });
});

describe('when the GrpcConfig is invalid', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['max_message_size of 0', { max_message_size: 0 }, /max_message_size/],
    ['a string keepalive_interval', { keepalive_interval: '75' }, /keepalive_interval/],
    ['max_concurrent_streams above 2^32-1', { max_concurrent_streams: 2 ** 32 }, /max_concurrent_streams/],
    ['a fractional request_timeout', { request_timeout: 1.5 }, /request_timeout/],
    ['an unknown key', { max_mesage_size: 10 }, /max_mesage_size/],
  ];
  for (const [what, config, key] of cases) {
    it(`should throw ConfigError at attach time for ${what}`, () => {
      const server = http.createServer();
      assert.throws(() => attachGrpc(server, createGrpcRouter(), config), (e: unknown) => e instanceof ConfigError && key.test(e.message) && /GrpcConfig/.test(e.message));
    });
  }
});
