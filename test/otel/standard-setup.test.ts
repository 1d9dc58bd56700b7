/**
 * keel's spans under the standard OpenTelemetry setup, with real packages: the app runs in a child
 * process started with `node --import ./register.mjs`, so a tracer provider (in-memory exporter) and
 * instrumentation-http are registered before keel loads, as NodeSDK with getNodeAutoInstrumentations
 * does. docs/operations.md, "Tracing (OpenTelemetry)".
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NO_REDIS, startRedis, type RedisServer } from '../helpers/redis-server.js';

const SERVER = 1; // SpanKind
const INTERNAL = 0;
const PRODUCER = 3;
const CONSUMER = 4;
const ERROR = 2; // SpanStatusCode

interface SpanData {
  name: string; kind: number; traceId: string; spanId: string; parentSpanId?: string; scope: string;
  attributes: Record<string, unknown>; status: { code: number; message?: string }; events: { name: string; attributes?: Record<string, unknown> }[];
}

class Child {
  readonly proc: ChildProcess;
  url = '';
  constructor(env: Record<string, string>) {
    this.proc = fork(fileURLToPath(new URL('./app.ts', import.meta.url)), {
      execArgv: ['--import', 'tsx', '--import', fileURLToPath(new URL('./register.mjs', import.meta.url))],
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
  }
  /** The next message that `pick` accepts, within 20 s. */
  message<T>(pick: (m: Record<string, unknown>) => T | undefined): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error('the app did not answer within 20 s')), 20_000);
      const onMessage = (m: Record<string, unknown>) => {
        const v = pick(m);
        if (v !== undefined) done(undefined, v);
      };
      const onExit = (code: number) => done(new Error(`the app exited (${code})`));
      const done = (err?: Error, v?: T) => {
        clearTimeout(timer);
        this.proc.off('message', onMessage);
        this.proc.off('exit', onExit);
        if (err) reject(err);
        else resolve(v!);
      };
      this.proc.on('message', onMessage);
      this.proc.on('exit', onExit);
    });
  }
  async start(): Promise<this> {
    this.url = await this.message((m) => m.url as string | undefined);
    return this;
  }
  async spans(): Promise<SpanData[]> {
    const answer = this.message((m) => m.spans as SpanData[] | undefined);
    this.proc.send('spans');
    return answer;
  }
  /** The spans once `ready` holds for them (spans end when the answer's 'close' fires, a tick after the client read it). */
  async spansWhen(ready: (spans: SpanData[]) => boolean): Promise<SpanData[]> {
    let spans: SpanData[] = [];
    for (let i = 0; i < 100; i++) {
      spans = await this.spans();
      if (ready(spans)) return spans;
      await new Promise((r) => setTimeout(r, 50));
    }
    return spans;
  }
  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.send('stop');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

const ofTrace = (spans: SpanData[], traceId: string) => spans.filter((s) => s.traceId === traceId);

/** request → PRODUCER → CONSUMER, in one trace. */
async function jobTrace(child: Child, system: string): Promise<void> {
  const ran = child.message((m) => m.ran as number | undefined);
  const res = await fetch(`${child.url}/users/7/welcome`, { method: 'POST' });
  assert.equal(res.status, 202);
  assert.equal(await ran, 7);
  const spans = await child.spansWhen((list) => list.some((s) => s.kind === CONSUMER));
  const server = spans.find((s) => s.kind === SERVER && s.attributes['http.route'] === '/users/{id:int}/welcome');
  assert.ok(server, spans.map((s) => s.name).join(', '));
  const trace = ofTrace(spans, server.traceId);
  const producer = trace.find((s) => s.kind === PRODUCER);
  const consumer = trace.find((s) => s.kind === CONSUMER);
  assert.ok(producer && consumer, `one trace: ${trace.map((s) => s.name).join(', ')}`);
  assert.equal(producer.name, 'send welcome');
  assert.equal(consumer.name, 'process welcome');
  assert.equal(producer.attributes['messaging.system'], system);
  assert.equal(producer.attributes['messaging.operation.type'], 'send');
  assert.equal(consumer.attributes['messaging.operation.type'], 'process');
  assert.equal(consumer.parentSpanId, producer.spanId, 'the job runs under its enqueue');
  // The enqueue happened inside the handler: its PRODUCER span is the handler span's child.
  const handler = trace.find((s) => s.name === 'request handler - /users/{id:int}/welcome')!;
  assert.equal(handler.parentSpanId, server.spanId);
  assert.equal(producer.parentSpanId, handler.spanId);
  if (system === 'bullmq') {
    assert.equal(typeof producer.attributes['messaging.message.id'], 'string');
    assert.equal(consumer.attributes['messaging.message.id'], producer.attributes['messaging.message.id']);
    assert.equal(consumer.attributes['keel.job.attempt'], 1);
  }
}

describe('when instrumentation-http is registered before keel loads (the standard setup)', () => {
  let child: Child;
  before(async () => {
    child = await new Child({}).start();
  });
  after(() => child?.stop());

  it('should let no query value reach a span attribute (url.query, url.full, http.target, http.url redacted)', async () => {
    const res = await fetch(`${child.url}/users/43?token=secret123&page=2`);
    assert.equal(res.status, 200);
    const spans = await child.spansWhen((list) => list.some((s) => s.kind === SERVER && s.attributes['url.path'] === '/users/43'));
    const server = spans.find((s) => s.attributes['url.path'] === '/users/43')!;
    const leaks = ofTrace(spans, server.traceId).flatMap((s) => Object.entries(s.attributes).filter(([, v]) => String(v).includes('secret123')).map(([k, v]) => `${s.name} ${k}=${String(v)}`));
    assert.deepEqual(leaks, [], 'attributes carrying the token');
    assert.equal(server.attributes['url.query'], 'token=REDACTED&page=REDACTED');
  });

  it("should export exactly one SERVER span, instrumentation-http's, named by the route, with keel's work as INTERNAL children", async () => {
    const res = await fetch(`${child.url}/users/42?token=x`);
    assert.deepEqual(await res.json(), { id: 42 });
    const spans = await child.spansWhen((list) => list.some((s) => s.kind === SERVER && s.attributes['url.path'] === '/users/42'));
    const server = spans.find((s) => s.attributes['url.path'] === '/users/42')!;
    const trace = ofTrace(spans, server.traceId);
    const servers = trace.filter((s) => s.kind === SERVER);
    assert.equal(servers.length, 1, `one SERVER span: ${servers.map((s) => `${s.scope}: ${s.name}`).join(', ')}`);
    assert.match(server.scope, /instrumentation-http/);
    assert.equal(server.name, 'GET /users/{id:int}');
    assert.equal(server.attributes['http.route'], '/users/{id:int}');
    assert.equal(server.attributes['http.response.status_code'], 200);
    assert.equal(server.attributes['server.address'], '127.0.0.1');
    assert.equal(server.attributes['server.port'], Number(new URL(child.url).port));
    const internal = trace.filter((s) => s.kind === INTERNAL);
    assert.ok(internal.some((s) => s.name === 'request handler - /users/{id:int}'), internal.map((s) => s.name).join(', '));
    for (const s of internal) {
      assert.equal(s.scope, 'keel');
      assert.equal(s.parentSpanId, server.spanId, `${s.name} is a child of the SERVER span`);
      assert.equal(s.attributes['http.route'], '/users/{id:int}');
    }
    assert.equal(trace.length, 1 + internal.length, 'nothing else');
  });

  it('should record a 5xx on the SERVER span (exception event, status message) and answer the client without internals', async () => {
    const res = await fetch(`${child.url}/boom`);
    assert.equal(res.status, 500);
    const body = await res.text();
    assert.doesNotMatch(body, /password|admin|Error:|at /);
    const spans = await child.spansWhen((list) => list.some((s) => s.kind === SERVER && s.attributes['http.route'] === '/boom'));
    const server = spans.find((s) => s.kind === SERVER && s.attributes['http.route'] === '/boom')!;
    assert.equal(server.name, 'GET /boom');
    assert.equal(server.status.code, ERROR);
    assert.equal(server.status.message, 'database password rejected for user admin');
    const exception = server.events.find((e) => e.name === 'exception');
    assert.equal(exception?.attributes?.['exception.type'], 'Error');
    assert.equal(exception?.attributes?.['exception.message'], 'database password rejected for user admin');
    assert.match(String(exception?.attributes?.['exception.stacktrace']), /app\.ts/);
    const handler = ofTrace(spans, server.traceId).find((s) => s.name === 'request handler - /boom')!;
    assert.equal(handler.status.code, ERROR);
    assert.ok(handler.events.some((e) => e.name === 'exception'));
  });

  it("should carry one trace from the request through the job's PRODUCER span to its CONSUMER span (in-process executor)", async () => {
    await jobTrace(child, 'keel');
  });
});

describe('when no http instrumentation is registered', () => {
  let child: Child;
  before(async () => {
    child = await new Child({ OTEL_TEST_NO_HTTP: '1' }).start();
  });
  after(() => child?.stop());

  it("should export exactly one SERVER span, keel's, with the same INTERNAL children", async () => {
    assert.equal((await fetch(`${child.url}/users/42`)).status, 200);
    const spans = await child.spansWhen((list) => list.some((s) => s.kind === SERVER));
    const servers = spans.filter((s) => s.kind === SERVER);
    assert.equal(servers.length, 1);
    const [server] = servers;
    assert.equal(server!.scope, 'keel');
    assert.equal(server!.name, 'GET /users/{id:int}');
    assert.equal(server!.attributes['server.port'], Number(new URL(child.url).port));
    const internal = ofTrace(spans, server!.traceId).filter((s) => s.kind === INTERNAL);
    assert.ok(internal.some((s) => s.name === 'request handler - /users/{id:int}'));
    for (const s of internal) assert.equal(s.parentSpanId, server!.spanId);
  });

  it('should carry the job in the request\'s trace too', async () => {
    await jobTrace(child, 'keel');
  });
});

describe('when jobs go through BullMQ on a real redis-server', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  let child: Child;
  before(async () => {
    redis = await startRedis();
    child = await new Child({ REDIS_URL: redis.url }).start();
  });
  after(async () => {
    await child?.stop();
    await redis?.stop();
  });

  it("should carry one trace from the request through Redis to the job's CONSUMER span (the context rides in job.data)", async () => {
    await jobTrace(child, 'bullmq');
  });
});
