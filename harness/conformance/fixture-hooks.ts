/**
 * The lifecycle hooks the corpus refers to by `handler` name, written as an application would write
 * them. They are app code (like a handler): they decide *what* a short-circuit says; keel's hook
 * runner decides *that* it short-circuits, in which phase and in which order.
 */
import { randomUUID } from 'node:crypto';
import type { App } from '../../lib/app/app.js';
import { response } from '../../lib/app/handler.js';
import type { Hook, HookPhase } from '../../lib/app/hooks.js';
import type { CaseHandler } from './types.js';

/** Bearer tokens the fixture app's authenticator accepts. */
export const FIXTURE_TOKENS: Readonly<Record<string, { user_id: string; roles: readonly string[] }>> = Object.freeze({
  'valid-token-12345': { user_id: 'user-123', roles: ['user', 'admin'] },
  'user-token-11111': { user_id: 'user-111', roles: ['user'] },
});

function state(ctx: Parameters<Hook>[0]): Record<string, unknown> {
  return ctx.data.state;
}

/** Factories, one per `handler` name; each call makes fresh state (a rate-limit counter per route). */
const HOOKS: Record<string, () => Hook> = {
  log_request: () => (ctx) => {
    state(ctx).request_logged = true;
  },
  add_request_id: () => (ctx) => {
    const id = randomUUID();
    state(ctx).request_id = id;
    ctx.res.setHeader('X-Request-ID', id);
  },
  check_rate_limit: () => {
    let count = 0;
    return (ctx) => {
      const cfg = (ctx.config ?? {}) as { max_requests?: number; window_seconds?: number };
      const max = cfg.max_requests ?? Number.POSITIVE_INFINITY;
      if (count >= max) {
        return response({ error: 'Rate limit exceeded', message: 'Too many requests, please try again later' }, { status: 429, headers: { 'Retry-After': String(cfg.window_seconds ?? 60) } });
      }
      count++;
      state(ctx).rate_limit_checked = true;
      return undefined;
    };
  },
  validate_auth_token: () => (ctx) => {
    const header = ctx.req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const user = match ? FIXTURE_TOKENS[match[1]!] : undefined;
    if (!user) return response({ error: 'Unauthorized', message: 'Invalid or expired authentication token' }, { status: 401 });
    state(ctx).user = user;
    return undefined;
  },
  check_admin_role: () => (ctx) => {
    const user = state(ctx).user as { roles: readonly string[] } | undefined;
    if (!user?.roles.includes('admin')) return response({ error: 'Forbidden', message: 'Admin role required for this endpoint' }, { status: 403 });
    return undefined;
  },
  check_user_permissions: () => (ctx) => {
    if (!state(ctx).user) return response({ error: 'Forbidden', message: 'Authentication required' }, { status: 403 });
    return undefined;
  },
  add_security_headers: () => (ctx) => {
    if (!ctx.response) return;
    Object.assign(ctx.response.headers, {
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'X-XSS-Protection': '1; mode=block',
      'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
    });
  },
  record_start_time: () => (ctx) => {
    state(ctx).started_at = performance.now();
  },
  add_response_time: () => (ctx) => {
    const started = state(ctx).started_at as number | undefined;
    if (ctx.response) ctx.response.headers['X-Response-Time'] = `${Math.round(performance.now() - (started ?? performance.now()))}ms`;
  },
  log_successful_action: () => (ctx) => {
    state(ctx).audited = true;
  },
  log_error: () => (ctx) => {
    state(ctx).error_logged = true;
  },
  format_error_response: () => () =>
    response({ error: 'Internal Server Error', message: 'An unexpected error occurred', error_id: randomUUID() }, { status: 500, headers: { 'Content-Type': 'application/json' } }),
  append_first: () => (ctx) => appendOrder(ctx, 'first_hook'),
  append_second: () => (ctx) => appendOrder(ctx, 'second_hook'),
  append_third: () => (ctx) => appendOrder(ctx, 'third_hook'),
};

function appendOrder(ctx: Parameters<Hook>[0], name: string): void {
  const s = state(ctx);
  ((s.execution_order as string[] | undefined) ?? (s.execution_order = [])).push(name);
}

/** Whether the fixture app knows every hook a case refers to. */
export function unknownHooks(handler: CaseHandler): string[] {
  const hooks = (handler.middleware?.lifecycle_hooks ?? {}) as Record<string, Array<{ handler?: string }>>;
  return Object.values(hooks).flat().map((r) => r.handler ?? '').filter((h) => !(h in HOOKS));
}

/**
 * Register the named hooks a case refers to (`name` → the behaviour of `handler`), once per
 * (phase, name) on this App.
 */
export function registerCaseHooks(app: App, handler: CaseHandler): void {
  const hooks = (handler.middleware?.lifecycle_hooks ?? {}) as Record<string, Array<{ name: string; handler: string }>>;
  for (const [phase, refs] of Object.entries(hooks)) {
    for (const ref of refs ?? []) {
      const make = HOOKS[ref.handler];
      if (!make || app.hooks.has(phase as HookPhase, ref.name)) continue;
      app.hook(phase as HookPhase, ref.name, make());
    }
  }
}
