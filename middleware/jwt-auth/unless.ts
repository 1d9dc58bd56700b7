/**
 * `.unless()` on jwtAuth's middleware, as express-jwt has it: the `express-unless` package itself (the
 * one express-jwt attaches; 3 kB, no dependencies), so `path`, `method`, `ext`, `custom` and
 * `useOriginalUrl` skip exactly the requests they skip with express-jwt. Loaded on the first call.
 *
 * Skipping authentication by path is only as safe as the patterns: express-unless compares the
 * pathname of `req.originalUrl` (strings exactly, RegExps unanchored unless you anchor them).
 */
import type { ServerResponse } from 'node:http';
import { lazyRequire } from '../../lib/http/lazy-require.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';

/** A path express-unless skips: exact string, RegExp, or either restricted to some methods. */
export type UnlessPath = string | RegExp | { url: string | RegExp; method?: string; methods?: string | readonly string[] };

/** express-unless's options (the same names and meanings). */
export interface UnlessOptions {
  /** Skip these methods (e.g. 'OPTIONS'). */
  method?: string | readonly string[];
  /** Skip these paths (the pathname of `req.originalUrl`, or `req.url` with `useOriginalUrl: false`). */
  path?: UnlessPath | readonly UnlessPath[];
  /** Skip paths ending in these extensions ('.css'). */
  ext?: string | readonly string[];
  /** Compare `req.originalUrl` (default true) rather than `req.url`. */
  useOriginalUrl?: boolean;
  /** Skip when this returns (or resolves to) true. */
  custom?: (req: any) => boolean | Promise<boolean>;
}

/** jwtAuth's middleware: `(req, res, next)` plus express-jwt's `.unless(options)`. */
export interface JwtMiddleware extends Middleware {
  /** The same middleware, skipped for the requests `options` describe (express-unless). */
  unless(options: UnlessOptions | ((req: any) => boolean | Promise<boolean>)): JwtMiddleware;
}

type Unless = (this: Middleware, options: unknown) => (req: KeelRequest, res: ServerResponse, next: NextFunction) => Promise<void>;
const expressUnless = lazyRequire<{ unless: Unless }>('express-unless');

/** `middleware` with `.unless()`; the skipping middleware it returns has `.unless()` too. */
export function withUnless(middleware: Middleware): JwtMiddleware {
  const m = middleware as JwtMiddleware;
  m.unless = function unless(options) {
    // express-unless mutates the options object it is given (useOriginalUrl); give it a copy.
    const opts = typeof options === 'function' ? { custom: options } : { ...options };
    const skipping = expressUnless().unless.call(middleware, opts);
    return withUnless(function jwtAuthUnless(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
      // A throwing `custom` is the application's error: Express's next(err), not an unhandled rejection.
      skipping(req, res, next).catch((err: unknown) => next(err));
    });
  };
  return m;
}
