/**
 * The `cors` package's options for keel's cors: names, validation and normalisation. Normalised once
 * at factory time for static options; per request for an options delegate (`cors((req, cb) => …)`).
 * The middleware that answers with them is package-mode.ts.
 */
import { fail } from '../../lib/records/define.js';
import type { KeelRequest } from '../../lib/http/request.js';
import { isPackageStyle as packageStyle } from '../../lib/http/package-style.js';

/** A static `origin` value: `'*'`, true (reflect), false (no CORS), an origin, a RegExp, or a list of origins and RegExps. */
export type StaticOrigin = boolean | string | RegExp | readonly (string | RegExp)[];
/** The `cors` package's origin callback: `callback(null, allow)` with true/false or a static origin value. */
export type CorsOriginFunction = (origin: string | undefined, callback: (err: Error | null, allow?: StaticOrigin) => void) => void;

/** The `cors` package options keel accepts (cors 2.8 names and meanings). */
export interface CorsPackageOptions {
  /** `'*'` (default), true (reflect any origin), false (no CORS), an origin, a RegExp, a list of those, or `(origin, cb) => …`. */
  origin?: StaticOrigin | CorsOriginFunction;
  /** Allowed methods, `'GET,POST'` or a list, sent as given. Default cors's `GET,HEAD,PUT,PATCH,POST,DELETE`. */
  methods?: string | readonly string[];
  /** Allowed request headers, a comma-separated string or a list. Default: reflect what the preflight asks for. */
  allowedHeaders?: string | readonly string[];
  /** The cors package's alias of `allowedHeaders`. */
  headers?: string | readonly string[];
  /** Response headers the browser may read. */
  exposedHeaders?: string | readonly string[];
  /** Send `Access-Control-Allow-Credentials: true`. */
  credentials?: boolean;
  /** Access-Control-Max-Age, seconds. */
  maxAge?: number | string;
  /** true: after setting the preflight headers, pass the OPTIONS request on instead of answering it. */
  preflightContinue?: boolean;
  /** Status of an answered preflight. Default {@link PACKAGE_DEFAULT_OPTIONS_STATUS} (204). */
  optionsSuccessStatus?: number;
}

/**
 * The cors package's options delegate: options computed per request (`cb(null, options)`), or an
 * error for `next(err)` (`cb(err)`).
 */
export type CorsOptionsDelegate = (req: KeelRequest, callback: (err: unknown, options?: CorsPackageOptions) => void) => void;

/** Keys only the `cors` package uses; `allowedHeaders` and `maxAge` mean the same in both styles. */
export const PACKAGE_KEYS: readonly string[] = ['origin', 'methods', 'headers', 'exposedHeaders', 'credentials', 'preflightContinue', 'optionsSuccessStatus'];
/** Keys both styles spell alike; a call with only these (or none) is the cors package's `cors()`. */
export const SHARED_KEYS: readonly string[] = ['allowedHeaders', 'maxAge'];
/** keel's CorsConfig keys (both spellings). */
export const RECORD_KEYS: readonly string[] = [
  'allowed_origins', 'allowedOrigins', 'allowed_methods', 'allowedMethods', 'allowed_headers', 'expose_headers', 'exposeHeaders',
  'max_age', 'allow_credentials', 'allowCredentials',
];
/** The cors package's default methods. */
export const PACKAGE_DEFAULT_METHODS = Object.freeze(['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE']);
/** The cors package's default preflight status: 204. */
export const PACKAGE_DEFAULT_OPTIONS_STATUS = 204;

/** Package options, normalised: header values ready to send. */
export interface PackageCors {
  /** No CORS at all (a falsy `origin`): the middleware passes every request on. */
  disabled: boolean;
  /** A static origin, or undefined with `originFn`. */
  origin: StaticOrigin | undefined;
  originFn: CorsOriginFunction | undefined;
  /** Access-Control-Allow-Methods, as the package sends it (a list joined with ","). */
  methods: string;
  /** Access-Control-Allow-Headers; undefined reflects the request's (with Vary), '' sends none. */
  allowedHeaders: string | undefined;
  exposedHeaders: string | undefined;
  credentials: boolean;
  maxAge: string | undefined;
  preflightContinue: boolean;
  status: number;
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

/** A list option as the package sends it: a list joined with ",", a string as given. */
function joined(key: string, value: unknown): string | undefined {
  if (value === undefined || value === null || value === false || value === '') return undefined;
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(',');
  return fail('CorsConfig', WHERE, key, value, 'a comma-separated string or a list of strings');
}

/**
 * An http(s) URL that is not a serialised origin (`https://a.example/`) would never equal the Origin
 * browsers send (RFC 6454 §6.2): refused with the spelling to use. Other strings are the package's to
 * send as given.
 */
function checkSerialised(key: string, value: string): void {
  if (!/^https?:\/\//i.test(value)) return;
  let serialised: string | undefined;
  try {
    serialised = new URL(value).origin;
  } catch {
    return;
  }
  if (serialised !== value) fail('CorsConfig', WHERE, key, value, 'a serialised origin such as "https://example.com"', `Write it as ${JSON.stringify(serialised)}.`);
}

function checkOrigin(origin: unknown): void {
  const ok = (o: unknown): boolean => typeof o === 'string' || o instanceof RegExp;
  if (typeof origin === 'string') checkSerialised('origin', origin);
  if (Array.isArray(origin)) origin.forEach((o, i) => typeof o === 'string' && checkSerialised(`origin[${i}]`, o));
  if (origin === undefined || origin === null || typeof origin === 'boolean' || typeof origin === 'function' || ok(origin)) return;
  if (Array.isArray(origin) && origin.every(ok)) return;
  fail('CorsConfig', WHERE, 'origin', origin, "'*', true, false, an origin, a RegExp, a list of origins and RegExps, or a function (origin, callback)");
}

/**
 * Validate and normalise the package's options (the package's defaults for what is absent, as its
 * `Object.assign({}, defaults, options)` does); a ConfigError names an option keel cannot honour.
 */
export function normalisePackageOptions(options: Record<string, unknown>): PackageCors {
  for (const key of Object.keys(options)) {
    if (options[key] === undefined || PACKAGE_KEYS.includes(key) || SHARED_KEYS.includes(key)) continue;
    fail('CorsConfig', WHERE, key, options[key], `one of the cors package options keel accepts (${[...PACKAGE_KEYS, ...SHARED_KEYS].join(', ')})`);
  }
  // The package's defaults are assigned over: a key present with `undefined` replaces the default.
  const origin = 'origin' in options ? options.origin : '*';
  checkOrigin(origin);
  const bool = (key: string): boolean => {
    const v = options[key];
    if (v !== undefined && typeof v !== 'boolean') fail('CorsConfig', WHERE, key, v, 'true or false');
    return v === true;
  };
  const status = options.optionsSuccessStatus ?? PACKAGE_DEFAULT_OPTIONS_STATUS;
  if (!(Number.isInteger(status) && (status as number) >= 200 && (status as number) <= 299)) {
    fail('CorsConfig', WHERE, 'optionsSuccessStatus', status, 'a 2xx status (204, or 200 for old browsers)');
  }
  const maxAge = options.maxAge;
  if (maxAge !== undefined && maxAge !== null && !(typeof maxAge === 'number' && Number.isInteger(maxAge) && maxAge >= -1) && !(typeof maxAge === 'string' && /^-?\d+$/.test(maxAge))) {
    fail('CorsConfig', WHERE, 'maxAge', maxAge, 'a whole number of seconds');
  }
  // `headers` is the package's alias; an empty list sends no Access-Control-Allow-Headers, no value reflects.
  const headersKey = options.allowedHeaders ? 'allowedHeaders' : 'headers';
  const headersValue = options.allowedHeaders || options.headers;
  const allowedHeaders = headersValue ? (joined(headersKey, headersValue) ?? '') : undefined;
  return {
    disabled: !origin,
    origin: typeof origin === 'function' ? undefined : (origin as StaticOrigin | undefined),
    originFn: typeof origin === 'function' ? (origin as CorsOriginFunction) : undefined,
    methods: joined('methods', options.methods ?? PACKAGE_DEFAULT_METHODS) ?? '',
    allowedHeaders,
    exposedHeaders: joined('exposedHeaders', options.exposedHeaders),
    credentials: bool('credentials'),
    maxAge: maxAge === undefined || maxAge === null ? undefined : String(maxAge),
    preflightContinue: bool('preflightContinue'),
    status: status as number,
  };
}

/** Whether a static origin value allows `origin`, as the package decides (exact strings, RegExps, lists, true). */
export function isOriginAllowed(origin: string | undefined, allowed: StaticOrigin): boolean {
  if (Array.isArray(allowed)) return allowed.some((a) => isOriginAllowed(origin, a));
  if (typeof allowed === 'string') return origin === allowed;
  if (allowed instanceof RegExp) {
    // lastIndex reset: a /g or /y pattern would otherwise alternate between matches and misses.
    allowed.lastIndex = 0;
    return allowed.test(origin as string);
  }
  return !!allowed;
}
