/**
 * The gRPC example: keel.examples.v1.Greeter (greeter.proto) and an HTTP route, on one port.
 *
 *   npx tsx examples/grpc/server.ts        # 127.0.0.1:50051 (PORT overrides)
 *
 * See examples/grpc/README.md for grpcurl calls; `buildGreeterApp()` is exported for the tests.
 */
import { fileURLToPath } from 'node:url';
import { createApp, type App } from '../../lib/index.js';
import { GrpcError, GrpcStatus, type GrpcCallContext } from '../../lib/grpc/index.js';

export const GREETER_PROTO_PATH = fileURLToPath(new URL('./greeter.proto', import.meta.url));
/** Upper bound of SayHelloMany's `count`. */
export const MAX_GREETINGS = 100;
/**
 * GreetAll keeps at most this many names, each cut to GREET_NAME_CHARS characters; the rest are only counted.
 * A handler bounds what it keeps (docs/grpc.md): this one once kept every 1 MiB name a client streamed and
 * took the server to a 4.2 GB heap crash in 17.8 s (issue 44); the server's max_stream_request_bytes is the backstop.
 */
export const GREET_ALL_KEPT_NAMES = 10;
/** Characters of each name GreetAll keeps. */
export const GREET_NAME_CHARS = 64;

interface HelloRequest { name: string }
interface HelloManyRequest { name: string; count: number }

function checkName(name: string): string {
  if (!name.trim()) throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, 'name must not be empty');
  return name.trim();
}

export const greeterHandlers = {
  SayHello: ({ name }: HelloRequest, call: GrpcCallContext) => {
    call.setTrailer('x-greeted', '1');
    return { message: `Hello, ${checkName(name)}!` };
  },
  async *SayHelloMany({ name, count }: HelloManyRequest, call: GrpcCallContext) {
    if (count < 1 || count > MAX_GREETINGS) throw new GrpcError(GrpcStatus.OUT_OF_RANGE, `count must be 1..${MAX_GREETINGS}`);
    for (let i = 1; i <= count && !call.signal.aborted; i++) yield { message: `Hello #${i}, ${checkName(name)}!` };
  },
  GreetAll: async (requests: AsyncIterable<HelloRequest>) => {
    const names: string[] = [];
    let others = 0;
    for await (const { name } of requests) {
      const checked = checkName(name);
      if (names.length < GREET_ALL_KEPT_NAMES) names.push(checked.length > GREET_NAME_CHARS ? `${checked.slice(0, GREET_NAME_CHARS)}…` : checked);
      else others++;
    }
    if (!names.length) return { message: 'Hello, nobody!' };
    return { message: `Hello, ${names.join(', ')}${others ? ` and ${others} more` : ''}!` };
  },
  async *Chat(requests: AsyncIterable<HelloRequest>) {
    for await (const { name } of requests) yield { message: `Hi ${checkName(name)}, how are you?` };
  },
};

export function buildGreeterApp(overrides: { port?: number } = {}): App {
  return createApp(
    {
      host: process.env.HOST ?? '127.0.0.1',
      port: overrides.port ?? Number(process.env.PORT ?? 50051),
      enable_request_id: true,
      // gRPC on the HTTP port: h2c with prior knowledge; 1 MiB messages; gzip; 30 s per call.
      grpc: { max_message_size: 1_048_576, request_timeout: 30, max_stream_response_bytes: 10_485_760 },
    },
    (app) => {
      app.get('/health', () => ({ status: 'ok' }));
      app.grpc(GREETER_PROTO_PATH, 'keel.examples.v1.Greeter', greeterHandlers);
    },
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const handle = await buildGreeterApp().listen();
  console.log(`HTTP and gRPC on ${handle.url}`);
}
