/**
 * Lifecycle hooks as data (after fastify's lib/hooks.js): a const list of phases, an `add()` that
 * validates, named hooks resolved per phase at build time, and one runner for sync and async hooks
 * that stops as soon as a response exists.
 */
import type { ServerResponse } from 'node:http';
import { AppError } from '../http/errors.js';
import { HOOK_PHASES, type HookPhase, type LifecycleHookRef } from '../records/route.js';
import { isThenable, type KeelResponse, type RequestData } from './handler.js';
import type { KeelRequest } from '../http/request.js';

export { HOOK_PHASES, type HookPhase };

export interface HookContext {
  readonly phase: HookPhase;
  readonly req: KeelRequest;
  readonly res: ServerResponse;
  readonly data: RequestData;
  /** Route pattern, e.g. `/users/{id}`. */
  readonly route: string;
  /** The response so far (on_response). Mutate its headers or return a replacement. */
  response?: KeelResponse;
  /** The error being handled (on_error). */
  error?: unknown;
  /** A named hook's `config` from its LifecycleHookRef. */
  config?: unknown;
}

/** A hook returns nothing to continue, or a Response to short-circuit (or, on_response, replace). */
export type Hook = (ctx: HookContext) => void | KeelResponse | undefined | Promise<void | KeelResponse | undefined>;

interface NamedHook {
  fn: Hook;
}

export interface ResolvedHook {
  name: string;
  fn: Hook;
  config: unknown;
}

export type PhaseHooks = Readonly<Record<HookPhase, readonly ResolvedHook[]>>;

function assertPhase(phase: string): asserts phase is HookPhase {
  if (!(HOOK_PHASES as readonly string[]).includes(phase)) {
    throw new AppError('Route', `Unknown hook phase ${JSON.stringify(phase)}; phases are ${HOOK_PHASES.join(', ')}`);
  }
}

/** Global hooks (every route) and named hooks (referenced by LifecycleHookRef) for each phase. */
export class HookRegistry {
  readonly #global: Record<HookPhase, ResolvedHook[]> = { on_request: [], pre_validation: [], pre_handler: [], on_response: [], on_error: [] };
  readonly #named: Record<HookPhase, Map<string, NamedHook>> = {
    on_request: new Map(), pre_validation: new Map(), pre_handler: new Map(), on_response: new Map(), on_error: new Map(),
  };

  /** Add a hook that runs for every route, in registration order. */
  add(phase: HookPhase, fn: Hook): void {
    assertPhase(phase);
    if (typeof fn !== 'function') throw new AppError('Route', `A ${phase} hook must be a function, got ${typeof fn}`);
    this.#global[phase].push({ name: fn.name || `${phase}#${this.#global[phase].length}`, fn, config: null });
  }

  /** Register a named hook; routes reference it by name (resolved only within this phase). */
  register(phase: HookPhase, name: string, fn: Hook): void {
    assertPhase(phase);
    if (typeof name !== 'string' || !name) throw new AppError('Route', `A named ${phase} hook needs a non-empty name`);
    if (typeof fn !== 'function') throw new AppError('Route', `Hook ${JSON.stringify(name)} (${phase}) must be a function`);
    if (this.#named[phase].has(name)) throw new AppError('Route', `A ${phase} hook named ${JSON.stringify(name)} is already registered`);
    this.#named[phase].set(name, { fn });
  }

  has(phase: HookPhase, name: string): boolean {
    return this.#named[phase].has(name);
  }

  /**
   * Resolve a route's hooks: global hooks first, then the route's refs ordered by `dependencies`
   * (a dependency runs first, pulled in if the route did not list it), then `order`, then position.
   * Unknown names and dependency cycles are AppErrors at build time.
   */
  resolve(refs: Partial<Record<HookPhase, readonly Readonly<LifecycleHookRef>[]>> | undefined, route: string): PhaseHooks {
    const out = {} as Record<HookPhase, ResolvedHook[]>;
    for (const phase of HOOK_PHASES) {
      const list = [...(refs?.[phase] ?? [])];
      const byName = new Map(list.map((r) => [r.name, r]));
      const sorted = list
        .map((r, i) => ({ r, i }))
        .sort((a, b) => (a.r.order ?? Number.MAX_SAFE_INTEGER) - (b.r.order ?? Number.MAX_SAFE_INTEGER) || a.i - b.i)
        .map((x) => x.r);
      const result: ResolvedHook[] = [];
      const state = new Map<string, 'visiting' | 'done'>();
      const visit = (name: string, ref: Readonly<LifecycleHookRef> | undefined, via: string[]) => {
        const s = state.get(name);
        if (s === 'done') return;
        if (s === 'visiting') throw new AppError('Route', `Hook dependency cycle in ${phase} of ${route}: ${[...via, name].join(' -> ')}`);
        const named = this.#named[phase].get(name);
        if (!named) {
          const known = [...this.#named[phase].keys()];
          throw new AppError('Route', `Route ${route} references ${phase} hook ${JSON.stringify(name)}, which is not registered for ${phase}. Registered: ${known.length ? known.join(', ') : 'none'}.`);
        }
        state.set(name, 'visiting');
        for (const dep of ref?.dependencies ?? []) visit(dep, byName.get(dep), [...via, name]);
        state.set(name, 'done');
        result.push({ name, fn: named.fn, config: ref?.config ?? null });
      };
      for (const ref of sorted) visit(ref.name, ref, []);
      out[phase] = [...this.#global[phase], ...result];
    }
    return Object.freeze(out);
  }
}

/**
 * Run a phase's hooks in order. Returns the first Response a hook returns (short-circuit), or
 * undefined. Stops early when a hook already wrote the response itself.
 */
export async function runHooks(hooks: readonly ResolvedHook[], ctx: Omit<HookContext, 'config'>): Promise<KeelResponse | undefined> {
  for (const h of hooks) {
    const c = ctx as HookContext;
    c.config = h.config;
    let r = h.fn(c);
    if (isThenable(r)) r = await r;
    if (ctx.res.writableEnded) return undefined;
    if (r) {
      if (ctx.phase === 'on_response') c.response = r as KeelResponse;
      else return r as KeelResponse;
    }
  }
  return undefined;
}
