import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerHandle } from '../../lib/index.js';
import { buildGreeterApp, GREETER_PROTO_PATH, GREET_ALL_KEPT_NAMES, GREET_NAME_CHARS } from './server.js';
import { clientFor, collect, connect, unary, HEALTH_PROTO, REFLECTION_PROTO } from '../../lib/grpc/testkit.js';

// The calls of examples/grpc/README.md (grpcurl), made with @grpc/grpc-js.
describe('when the gRPC example runs', () => {
  let handle: ServerHandle;
  let greeter: any;
  before(async () => {
    handle = await buildGreeterApp({ port: 0 }).listen({ handleSignals: false });
    greeter = connect(clientFor(GREETER_PROTO_PATH, 'keel.examples.v1.Greeter'), `127.0.0.1:${handle.port}`);
  });
  after(async () => {
    greeter.close();
    await handle.close();
  });

  it('should list its services through reflection (grpcurl list)', async () => {
    const reflection = connect(clientFor(REFLECTION_PROTO, 'grpc.reflection.v1alpha.ServerReflection', { keepCase: true, oneofs: true }), `127.0.0.1:${handle.port}`);
    const call = reflection.ServerReflectionInfo();
    const result = collect(call);
    call.write({ list_services: '' });
    call.end();
    const [r] = (await result).messages as any[];
    reflection.close();
    assert.deepEqual(r.list_services_response.service.map((s: { name: string }) => s.name).sort(), [
      'grpc.health.v1.Health', 'grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection', 'keel.examples.v1.Greeter',
    ]);
  });

  it('should greet (SayHello)', async () => {
    const r = await unary(greeter, 'SayHello', { name: 'Ada' });
    assert.deepEqual(r.value, { message: 'Hello, Ada!' });
    assert.deepEqual(r.trailers?.get('x-greeted'), ['1']);
  });

  it('should stream greetings (SayHelloMany)', async () => {
    const r = await collect(greeter.SayHelloMany({ name: 'Ada', count: 3 }));
    assert.deepEqual(r.messages.map((m: any) => m.message), ['Hello #1, Ada!', 'Hello #2, Ada!', 'Hello #3, Ada!']);
  });

  it('should greet every streamed name at once (GreetAll)', async () => {
    const value = await new Promise<any>((resolve, reject) => {
      const call = greeter.GreetAll((err: Error | null, v: unknown) => (err ? reject(err) : resolve(v)));
      call.write({ name: 'Ada' });
      call.write({ name: 'Grace' });
      call.end();
    });
    assert.equal(value.message, 'Hello, Ada, Grace!');
  });

  it('should keep at most GREET_ALL_KEPT_NAMES names, each cut, and count the rest (GreetAll)', async () => {
    const value = await new Promise<any>((resolve, reject) => {
      const call = greeter.GreetAll((err: Error | null, v: unknown) => (err ? reject(err) : resolve(v)));
      for (let i = 0; i < GREET_ALL_KEPT_NAMES + 5; i++) call.write({ name: `${i}`.padEnd(1000, 'x') });
      call.end();
    });
    assert.ok(value.message.length < GREET_ALL_KEPT_NAMES * (GREET_NAME_CHARS + 3) + 40, `${value.message.length} characters`);
    assert.match(value.message, / and 5 more!$/);
  });

  it('should chat (Chat)', async () => {
    const call = greeter.Chat();
    const result = collect(call);
    call.write({ name: 'Ada' });
    call.end();
    assert.deepEqual((await result).messages, [{ message: 'Hi Ada, how are you?' }]);
  });

  it('should answer INVALID_ARGUMENT to an empty name', async () => {
    const r = await unary(greeter, 'SayHello', { name: '' });
    assert.equal(r.error?.code, 3);
    assert.equal(r.error?.details, 'name must not be empty');
  });

  it('should report SERVING to a health check', async () => {
    const health = connect(clientFor(HEALTH_PROTO, 'grpc.health.v1.Health'), `127.0.0.1:${handle.port}`);
    const r = await unary(health, 'Check', { service: '' });
    health.close();
    assert.equal(r.value?.status, 'SERVING');
  });

  it('should answer HTTP on the same port', async () => {
    const res = await fetch(`${handle.url}/health`);
    assert.deepEqual(await res.json(), { status: 'ok' });
  });
});
