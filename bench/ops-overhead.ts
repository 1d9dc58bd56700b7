/**
 * What readiness + metrics and OpenTelemetry spans add per request (docs/operations.md, "Cost when off,
 * and when on"): the work keel's wrapper does around the router, measured alone, so that a shared
 * machine's load (which makes req/s and whole-request CPU swing by ±50 %) does not drown a few µs.
 *
 *   npm run bench:ops [-- --rounds 15 --requests 200000]
 *
 * The router is a stub that answers at once (sets the route pattern and status, emits 'close'), behind
 * `instrumentRouter` as `app.intoRouter()` builds it, for: all off (the router itself: nothing added),
 * metrics + readiness on, spans on with no OTel SDK (the API's no-op tracer), spans on with an SDK
 * (BasicTracerProvider, batch processor, an exporter that drops the batch); and, for spans, a route of
 * one middleware and a handler wrapped in their INTERNAL spans as lib/app/dispatch.ts wraps them, against
 * the same route unwrapped (what the INTERNAL spans add). Each round runs every
 * variant in a new random order; the table gives CPU ns per request, median of rounds, minus the bare
 * stub's. The SDK variant registers the global tracer provider, so it runs last, after the others.
 * `npm run bench -- --scenarios hello,hello-metrics,hello-otel --peers keel` measures whole requests
 * over sockets.
 */
import { EventEmitter } from 'node:events';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { createApp } from '../lib/index.js';
import { instrumentRouter } from '../lib/observability/index.js';
import type { KeelRouter } from '../lib/app/plugin.js';
import { traceHandler, traceMiddleware } from '../lib/observability/internal-spans.js';
import type { Middleware } from '../lib/http/request.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string' }, requests: { type: 'string' } } });
const ROUNDS = Number(args.rounds ?? 15);
const REQUESTS = Number(args.requests ?? 200_000);
const silent = pino({ level: 'silent' });

/** Answers at once, as a static route does: the pattern, a status, the end of the answer. */
const stub = Object.assign(function keelRouter(req: { routePattern?: string }, res: EventEmitter & { statusCode: number; writableFinished: boolean }) {
  req.routePattern = '/hello';
  res.statusCode = 200;
  res.writableFinished = true;
  res.emit('close');
}, { handleUpgrade() {} }) as unknown as KeelRouter;

/**
 * The stub as the router runs a route when spans are on (lib/app/dispatch.ts): one middleware and the
 * handler, each in its INTERNAL span; with spans off the same two calls run unwrapped.
 */
const answer = (req: { routePattern?: string }, res: EventEmitter & { statusCode: number; writableFinished: boolean }) => {
  res.statusCode = 200;
  res.writableFinished = true;
  res.emit('close');
};
const passOn: Middleware = function securityHeaders(_req, _res, next) {
  next();
};
function routed(traced: boolean): KeelRouter {
  const core = (traced ? traceHandler(answer as never, '/hello') : answer) as typeof answer;
  const mw = traced ? traceMiddleware(passOn, '/hello') : passOn;
  return Object.assign(function keelRouter(req: { routePattern?: string }, res: EventEmitter & { statusCode: number; writableFinished: boolean }) {
    req.routePattern = '/hello';
    mw(req as never, res as never, () => core(req, res));
  }, { handleUpgrade() {} }) as unknown as KeelRouter;
}

const headers = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'user-agent': 'bench' };
const socket = { remoteAddress: '127.0.0.1' };

/** CPU ns per request; yields every 256 requests, so the SDK's batch processor exports as it would in a server. */
async function run(router: KeelRouter, n: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    if ((i & 255) === 0) await new Promise<void>((r) => setImmediate(r));
    const req = { method: 'GET', url: '/hello', headers, httpVersion: '1.1', socket };
    const res = Object.assign(new EventEmitter(), { statusCode: 0, writableFinished: false });
    (router as unknown as (a: unknown, b: unknown) => void)(req, res);
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / n;
}

const wrapped = (config: Record<string, unknown>, router: KeelRouter = stub): KeelRouter => instrumentRouter(createApp(config, undefined, { logger: silent }), router);

async function main(): Promise<void> {
  const routedBare = routed(false);
  const variants: Array<{ name: string; router: KeelRouter; base?: string }> = [
    { name: 'bare router (all off: what intoRouter() returns)', router: wrapped({}) },
    { name: 'metrics + readiness on', router: wrapped({ metrics: { default_metrics: false }, readiness: {} }) },
    { name: 'spans on, no OTel SDK', router: wrapped({ opentelemetry: {} }) },
    { name: 'the route (a middleware, the handler) unwrapped', router: routedBare },
    { name: 'spans on, no OTel SDK, the route with its 2 INTERNAL spans (vs the route unwrapped)', router: wrapped({ opentelemetry: {} }, routed(true)), base: 'the route (a middleware, the handler) unwrapped' },
  ];
  if (variants[0]!.router !== stub) throw new Error('with everything off the router must be returned unwrapped');
  const measure = async (list: typeof variants, into: Map<string, number[]>) => {
    for (const v of list) await run(v.router, 20_000); // warm-up: JIT, label children
    for (const v of list) into.set(v.name, []); // the table in this order
    for (let r = 0; r < ROUNDS; r++) {
      for (const v of [...list].sort(() => Math.random() - 0.5)) {
        const ns = await run(v.router, REQUESTS);
        into.get(v.name)!.push(ns);
      }
    }
  };
  const samples = new Map<string, number[]>();
  await measure(variants, samples);
  const [{ trace }, { BasicTracerProvider, BatchSpanProcessor }] = await Promise.all([import('@opentelemetry/api'), import('@opentelemetry/sdk-trace-base')]);
  const exporter = { export: (_s: unknown[], done: (r: { code: number }) => void) => done({ code: 0 }), shutdown: async () => undefined };
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  const sdk = [
    variants[0]!,
    { name: 'spans on, OTel SDK registered', router: wrapped({ opentelemetry: {} }) },
    variants[3]!,
    { name: 'spans on, OTel SDK registered, the route with its 2 INTERNAL spans (vs the route unwrapped)', router: wrapped({ opentelemetry: {} }, routed(true)), base: 'the route (a middleware, the handler) unwrapped' },
  ];
  const sdkSamples = new Map<string, number[]>();
  await measure(sdk, sdkSamples);
  await provider.shutdown();

  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  console.log(`\n${ROUNDS} rounds × ${REQUESTS} requests per variant, Node ${process.version}; CPU ns per request added to the bare router, median of rounds:\n`);
  console.log('| variant | added CPU per request |');
  console.log('|---|---:|');
  const bases = new Map([...variants, ...sdk].map((v) => [v.name, v.base ?? variants[0]!.name]));
  const print = (m: Map<string, number[]>) => {
    for (const [name, xs] of m) {
      if (name === variants[0]!.name || name === 'the route (a middleware, the handler) unwrapped') continue;
      console.log(`| ${name} | ${Math.round(median(xs) - median(m.get(bases.get(name)!)!))} ns |`);
    }
  };
  console.log(`| ${variants[0]!.name} | 0 ns |`);
  print(samples);
  print(sdkSamples);
}

await main();
