/**
 * The `cors` package's options for keel's cors, translated once at factory time into a CorsConfig
 * record plus, for a RegExp or function `origin`, an origin matcher.
 */
import type { ServerResponse } from 'node:http';
import { fail } from '../../lib/records/define.js';
import type { KeelRequest, NextFunction } from '../../lib/request.js';
import { isPackageStyle as packageStyle } from '../../lib/package-style.js';

type StaticOrigin = boolean | string | RegExp | readonly (string | RegExp)[];
/** The `cors` package's origin callback: `callback(null, allow)` with true/false or a static origin value. */
export type CorsOriginFunction = (origin: string | undefined, callback: (err: Error | null, allow?: StaticOrigin) => void) => void;

/** The `cors` package options keel accepts (cors 2.8 names and meanings). */
export interface CorsPackageOptions {
  /** `'*'` (default), true (reflect any origin), false (no CORS), an origin, a RegExp, a list of those, or `(origin, cb) => …`. */
  origin?: StaticOrigin | CorsOriginFunction;
  /** Allowed methods, `'GET,POST'` or a list. Default cors's `GET,HEAD,PUT,PATCH,POST,DELETE`. */
  methods?: string | readonly string[];
  /** Allowed request headers, a comma-separated string or a list. Default: reflect what the preflight asks for. */
  allowedHeaders?: string | readonly string[];
  /** Response headers the browser may read. */
  exposedHeaders?: string | readonly string[];
  /** Send `Access-Control-Allow-Credentials: true`. */
  credentials?: boolean;
  /** Access-Control-Max-Age, seconds. */
  maxAge?: number;
  /** true: after setting the preflight headers, pass the OPTIONS request on instead of answering it. */
  preflightContinue?: boolean;
  /** Status of an answered preflight. Default 204. */
  optionsSuccessStatus?: number;
}

/** Keys only the `cors` package uses; `allowedHeaders` and `maxAge` mean the same in both styles. */
export const PACKAGE_KEYS: readonly string[] = ['origin', 'methods', 'exposedHeaders', 'credentials', 'preflightContinue', 'optionsSuccessStatus'];
/** Keys both styles spell alike; a call with only these (or none) is the cors package's `cors()`. */
export const SHARED_KEYS: readonly string[] = ['allowedHeaders', 'maxAge'];
/** keel's CorsConfig keys (both spellings). */
export const RECORD_KEYS: readonly string[] = [
  'allowed_origins', 'allowedOrigins', 'allowed_methods', 'allowedMethods', 'allowed_headers', 'expose_headers', 'exposeHeaders',
  'max_age', 'allow_credentials', 'allowCredentials',
];
/** The cors package's default methods. */
export const PACKAGE_DEFAULT_METHODS = Object.freeze(['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE']);

/** What the translation gives the factory. */
export interface TranslatedCors {
  record: Record<string, unknown>;
  /** origin: false: no CORS at all. */
  disabled: boolean;
  /** A RegExp or function origin (or `true`): decides per request; the record's allowed_origins is empty then. */
  matchOrigin?: (origin: string, req: KeelRequest) => boolean;
  /** A function origin: decides before the middleware runs (it may call back later). */
  decide?: (req: KeelRequest, res: ServerResponse, next: NextFunction, run: (allowed: boolean) => void) => void;
  preflightContinue: boolean;
  preflightStatus?: number;
}

const WHERE = 'cors(cors package options)';

/** True when `options` uses the `cors` package's keys; both styles in one call is a ConfigError. */
export function isPackageStyle(options: Record<string, unknown>): boolean {
  return packageStyle(
    options,
    (k) => PACKAGE_KEYS.includes(k),
    (k) => RECORD_KEYS.includes(k),
    (pkg, keel) => fail('CorsConfig', 'cors(options)', keel, options[keel], `keel's CorsConfig keys or the cors package's (${pkg.join(', ')}), not both`,
      `${pkg[0]} is the cors package's, ${keel} is keel's: write the whole call in one style.`),
  );
}

function list(key: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value.split(',').map((s) => s.trim()).filter(Boolean);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return [...value];
  return fail('CorsConfig', WHERE, key, value, 'a comma-separated string or a list of strings');
}

/** Translate `cors` package options; a ConfigError names any option keel cannot honour. */
export function fromCorsPackage(options: Record<string, unknown>): TranslatedCors {
  for (const key of Object.keys(options)) {
    if (options[key] === undefined || PACKAGE_KEYS.includes(key) || SHARED_KEYS.includes(key)) continue;
    fail('CorsConfig', WHERE, key, options[key], `one of the cors package options keel accepts (${[...PACKAGE_KEYS, ...SHARED_KEYS].join(', ')})`);
  }
  const record: Record<string, unknown> = {
    allowed_methods: (list('methods', options.methods) ?? PACKAGE_DEFAULT_METHODS).map((m) => m.toUpperCase()),
  };
  const headers = list('allowedHeaders', options.allowedHeaders);
  if (headers) record.allowed_headers = headers;
  const exposed = list('exposedHeaders', options.exposedHeaders);
  if (exposed) record.expose_headers = exposed;
  if (options.maxAge !== undefined) record.max_age = typeof options.maxAge === 'string' && /^\d+$/.test(options.maxAge) ? Number(options.maxAge) : options.maxAge;
  if (options.credentials !== undefined) record.allow_credentials = options.credentials;
  const bool = (key: string): boolean => {
    const v = options[key];
    if (v !== undefined && typeof v !== 'boolean') fail('CorsConfig', WHERE, key, v, 'true or false');
    return v === true;
  };
  const status = options.optionsSuccessStatus;
  if (status !== undefined && !(Number.isInteger(status) && (status as number) >= 200 && (status as number) <= 299)) {
    fail('CorsConfig', WHERE, 'optionsSuccessStatus', status, 'a 2xx status (204, or 200 for old browsers)');
  }
  const out: TranslatedCors = { record, disabled: false, preflightContinue: bool('preflightContinue'), ...(status !== undefined ? { preflightStatus: status as number } : {}) };

  const origin = options.origin ?? '*';
  if (origin === false) return { ...out, disabled: true };
  if (typeof origin === 'function') {
    const fn = origin as CorsOriginFunction;
    // The callback's answer for the request about to run: the middleware reads it synchronously, first
    // thing, in the call that follows (a variable, not a request property: a new property on an
    // Express request is an uncached map transition).
    let decided = false;
    record.allowed_origins = [];
    out.matchOrigin = () => decided;
    out.decide = (req, _res, next, run) => {
      const requestOrigin = req.headers.origin;
      if (requestOrigin === undefined) return run(false);
      let called = false;
      try {
        fn(requestOrigin, (err, allow) => {
          if (called) return;
          called = true;
          if (err) return next(err);
          let allowed: boolean;
          try {
            allowed = allow === undefined ? false : matcherFor(allow)(requestOrigin);
          } catch (e) {
            return next(e);
          }
          decided = allowed;
          run(allowed);
        });
      } catch (err) {
        next(err);
      }
    };
    return out;
  }
  if (origin === '*') {
    record.allowed_origins = ['*'];
    return out;
  }
  if (typeof origin === 'string' || (Array.isArray(origin) && origin.every((o) => typeof o === 'string'))) {
    record.allowed_origins = typeof origin === 'string' ? [origin] : [...(origin as string[])];
    return out;
  }
  if (origin === true || origin instanceof RegExp || Array.isArray(origin)) {
    record.allowed_origins = [];
    const match = matcherFor(origin as StaticOrigin);
    out.matchOrigin = (o) => match(o);
    return out;
  }
  return fail('CorsConfig', WHERE, 'origin', origin, "'*', true, false, an origin, a RegExp, a list of origins and RegExps, or a function (origin, callback)");
}

/** A static `origin` value as a predicate, as the cors package reads it. */
function matcherFor(allow: StaticOrigin): (origin: string) => boolean {
  if (allow === true || allow === '*') return () => true;
  if (allow === false) return () => false;
  if (typeof allow === 'string') return (o) => o === allow;
  if (allow instanceof RegExp) {
    // A fresh RegExp: a /g or /y pattern's lastIndex would make test() alternate between calls.
    const re = new RegExp(allow.source, allow.flags.replace(/[gy]/g, ''));
    return (o) => re.test(o);
  }
  if (Array.isArray(allow)) {
    const parts = allow.map((a) => {
      if (typeof a !== 'string' && !(a instanceof RegExp)) fail('CorsConfig', WHERE, 'origin', allow, 'a list of origins (strings) and RegExps');
      return matcherFor(a);
    });
    return (o) => parts.some((p) => p(o));
  }
  return fail('CorsConfig', WHERE, 'origin', allow, "'*', true, false, an origin, a RegExp or a list of those");
}
