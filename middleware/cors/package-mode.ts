/**
 * keel's cors with the `cors` package's options (or an options delegate): answers as the package
 * (cors 2.8) does, header for header, so an Express app swapping the import keeps its behaviour:
 * - an origin of `'*'` (the default) sends `Access-Control-Allow-Origin: *` to every request, with or
 *   without `Origin`; a string origin is sent as given with `Vary: Origin`; true / a RegExp / a list /
 *   a function reflect an allowed request origin, with `Vary: Origin` whether allowed or not;
 * - every OPTIONS request is answered as a preflight (the package does not look at
 *   Access-Control-Request-Method); without `allowedHeaders` (or its alias `headers`) the requested
 *   headers are reflected with `Vary: Access-Control-Request-Headers`;
 * - a disallowed origin gets no Access-Control-Allow-Origin, and the browser refuses the response
 *   (Fetch, CORS check); keel refuses it itself only with `rejectDisallowedOrigins`.
 */
import type { ServerResponse } from 'node:http';
import { problemFor } from '../../lib/http/problem.js';
import type { Rejecter } from '../../lib/http/reject.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';
import { isOriginAllowed, normalisePackageOptions, type CorsOptionsDelegate, type PackageCors, type StaticOrigin } from './familiar.js';
import { isSameOrigin, type TrustFunction } from './same-origin.js';
import { appendVary } from './vary.js';

/** keel's extensions, as the factory read them. */
export interface PackageModeExtensions {
  rejectDisallowed: boolean;
  allowPrivateNetwork: boolean;
  trust: TrustFunction;
  reject: Rejecter;
}

/** The middleware for static package options (normalised here, once) or an options delegate. */
export function packageCors(source: Record<string, unknown> | CorsOptionsDelegate, ext: PackageModeExtensions): Middleware {
  function apply(o: PackageCors, allow: StaticOrigin, req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    const requestOrigin = req.headers.origin;
    const method = typeof req.method === 'string' ? req.method.toUpperCase() : '';
    let allowOrigin: string | undefined;
    let vary = true;
    if (!allow || allow === '*') {
      allowOrigin = '*';
      vary = false;
    } else if (typeof allow === 'string') {
      allowOrigin = allow;
    } else {
      allowOrigin = isOriginAllowed(requestOrigin, allow) ? requestOrigin : undefined;
    }
    if (method !== 'OPTIONS' && ext.rejectDisallowed && requestOrigin && allowOrigin !== '*' && allowOrigin !== requestOrigin
      && !isSameOrigin(req, requestOrigin, ext.trust)) {
      ext.reject.refuse(req, res, next, problemFor('KEEL_FORBIDDEN', `CORS request from origin '${requestOrigin}' not allowed`));
      return;
    }
    if (allowOrigin) res.setHeader('Access-Control-Allow-Origin', allowOrigin);
    if (vary) appendVary(res, 'Origin');
    if (o.credentials) res.setHeader('Access-Control-Allow-Credentials', 'true');
    if (method !== 'OPTIONS') {
      if (o.exposedHeaders) res.setHeader('Access-Control-Expose-Headers', o.exposedHeaders);
      next();
      return;
    }
    if (o.methods) res.setHeader('Access-Control-Allow-Methods', o.methods);
    let allowHeaders = o.allowedHeaders;
    if (allowHeaders === undefined) {
      const requested = req.headers['access-control-request-headers'];
      allowHeaders = Array.isArray(requested) ? requested.join(',') : requested;
      appendVary(res, 'Access-Control-Request-Headers');
    }
    if (allowHeaders) res.setHeader('Access-Control-Allow-Headers', allowHeaders);
    if (o.maxAge !== undefined) res.setHeader('Access-Control-Max-Age', o.maxAge);
    if (o.exposedHeaders) res.setHeader('Access-Control-Expose-Headers', o.exposedHeaders);
    // Private Network Access: granted only where asked for, to an origin that got Allow-Origin.
    if (ext.allowPrivateNetwork && allowOrigin && req.headers['access-control-request-private-network'] === 'true') {
      res.setHeader('Access-Control-Allow-Private-Network', 'true');
    }
    if (o.preflightContinue) {
      next();
      return;
    }
    res.statusCode = o.status;
    // Safari waits for a body on a 204 without Content-Length (the package's comment).
    res.setHeader('Content-Length', '0');
    res.end();
  }

  function run(o: PackageCors, req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    if (o.disabled) return next();
    const fn = o.originFn;
    if (fn === undefined) return apply(o, o.origin!, req, res, next);
    let answered = false;
    try {
      fn(req.headers.origin, (err, allow) => {
        if (answered) return;
        answered = true;
        // An error, or no origin allowed: on without CORS headers (or to the error handler), as the package does.
        if (err || !allow) return next(err ?? undefined);
        apply(o, allow, req, res, next);
      });
    } catch (err) {
      if (answered) throw err;
      answered = true;
      next(err);
    }
  }

  if (typeof source !== 'function') {
    const fixed = normalisePackageOptions(source);
    if (fixed.disabled) {
      return function corsDisabled(_req: KeelRequest, _res: ServerResponse, next: NextFunction): void {
        next();
      };
    }
    return function corsMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
      run(fixed, req, res, next);
    };
  }

  const delegate = source;
  return function corsMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    let answered = false;
    try {
      delegate(req, (err, options) => {
        if (answered) return;
        answered = true;
        if (err) return next(err);
        let o: PackageCors;
        try {
          // The delegate's options are checked like static ones; a bad one is this request's error.
          o = normalisePackageOptions({ ...(options ?? {}) } as Record<string, unknown>);
        } catch (e) {
          return next(e);
        }
        run(o, req, res, next);
      });
    } catch (err) {
      if (answered) throw err;
      answered = true;
      next(err);
    }
  };
}
