/**
 * The diagnostics channels keel's Express engines publish on: the `tracingChannel`s an Express app has once an APM's
 * loader rewrote Express's files (orchestrion, @apm-js-collab/code-transformer, which Sentry 11 and other APMs use),
 * so what subscribes to Express there (spans per layer, the route of the transaction, errors passed to next) works on
 * keel unchanged, whether the app imports keel/express or has keel's alias package installed as `express`.
 *
 * - `orchestrion:router:handle` (keel/express: Express 5's `router` package, `Layer.prototype.handleRequest`) and
 *   `orchestrion:express:handle` (keel/express4: Express 4's `Layer.prototype.handle_request`): one traced call per
 *   layer a request enters (router stack and route stack), context `{ self: layer, arguments: [req, res, next] }`;
 *   `asyncStart`/`asyncEnd` when the layer calls next, `error` when it calls next(err) or throws.
 * - `orchestrion:router:register` and `orchestrion:express:register`: one traced synchronous call per
 *   `router.use()` and `router.route()` (app.use, app.get… go through them), context
 *   `{ self: router, arguments }`, so a subscriber reads the registered path of `self.stack`'s last layer.
 *
 * Nothing is published while no one subscribes: each dispatch site reads one channel's `hasSubscribers`.
 * See docs/express-engine.md ("Tracing and APMs").
 */
import { tracingChannel, type TracingChannel } from 'node:diagnostics_channel';
import type { AnyFn } from '../utils.js';

/** The channels of one engine, and the module name an orchestrion loader gives them. */
export interface EngineChannels {
  /** 'router' (Express 5's router package) or 'express' (Express 4). */
  readonly module: 'router' | 'express';
  readonly handle: TracingChannel<object, any>;
  readonly register: TracingChannel<object, any>;
}

/** The channels an orchestrion loader gives `module`'s router (express4/layer.ts makes Express 4's). */
export function channelsOf(module: 'router' | 'express'): EngineChannels {
  return {
    module,
    handle: tracingChannel(`orchestrion:${module}:handle`),
    register: tracingChannel(`orchestrion:${module}:register`),
  };
}

/** keel/express's channels (Express 5 routes with the `router` package). */
export const ROUTER_CHANNELS = channelsOf('router');

/** What runs a layer's request handler, as Layer has it. */
interface RunnableLayer {
  readonly channels: EngineChannels;
  handleRequest(req: any, res: any, next: AnyFn): void;
}

/** Runs a layer's request handler, published on its engine's `handle` channel when someone subscribes. */
export function runLayer(layer: RunnableLayer, req: any, res: any, next: AnyFn): void {
  const channel = layer.channels.handle;
  if (!channel.start.hasSubscribers) { layer.handleRequest(req, res, next); return; }
  channel.traceCallback(layer.handleRequest, -1, { self: layer, arguments: [req, res, next] }, layer, req, res, next);
}

/**
 * `fn` (a router's use or route) published on `channels.register` when someone subscribes.
 */
export function register<T>(channels: EngineChannels, fn: (...args: any[]) => T, self: unknown, args: ArrayLike<unknown>): T {
  const channel = channels.register;
  if (!channel.start.hasSubscribers) return fn.apply(self, args as unknown[]);
  return channel.traceSync(fn as (...a: any[]) => T, { self, arguments: Array.from(args) }, self, ...Array.from(args));
}

/** Sentry's module-injection marker (@sentry/server-utils), when the process has one. */
interface SentryMarker { bundler?: Set<string> | unknown; runtime?: string[] }

const announced = new Set<string>();

/**
 * Tells an orchestrion-based Sentry SDK (11+) in this process that `module`'s channels are published, as its loader
 * does when it rewrites Express's files: its Express integration subscribes only to modules it saw injected.
 * Done once per module, at the first app; nothing happens unless Sentry is loaded (`globalThis.__SENTRY__`).
 * Other subscribers need no handshake: they subscribe to the channels by name.
 */
export function announceChannels(channels: EngineChannels): void {
  const module = channels.module;
  if (announced.has(module)) return;
  announced.add(module);
  const g = globalThis as any;
  const sentry = g.__SENTRY__;
  if (sentry === undefined || sentry === null || typeof sentry !== 'object') return;
  const marker: SentryMarker = (g.__SENTRY_ORCHESTRION__ ??= {});
  if (Array.isArray(marker.runtime) && marker.runtime.includes(module)) return;
  // the bundler plugin's marker (orchestrionModuleInjected in @sentry/server-utils): a Set of injected module names
  if (marker.bundler === undefined) marker.bundler = new Set<string>();
  if (marker.bundler instanceof Set) marker.bundler.add(module);
  const carrier = sentry[sentry.version];
  const client = carrier?.defaultCurrentScope?.getClient?.() ?? carrier?.defaultIsolationScope?.getClient?.();
  if (typeof client?.emit === 'function') client.emit('orchestrion.module-injected', module);
}
