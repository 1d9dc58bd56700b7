/**
 * Rate limiting per client IP (or one global bucket), in two styles chosen by the options' keys:
 * - keel's record (`per_second`, `burst`): token buckets, see store.ts (GCRA, one number per client)
 *   and redis.ts (the same step as one atomic Lua script, for limits shared between instances);
 * - express-rate-limit's options (`windowMs`, `limit`, `store`, …): its fixed windows and Store API,
 *   see window-limiter.ts.
 */
import type { ServerResponse } from 'node:http';
import { preloadIpKey } from './ip-key.js';
import { observe } from '../../lib/observability/observe.js';
import { clientKeys, compileTrust, DEFAULT_IPV6_SUBNET, keyFromAddress, proxyAddr } from './client-key.js';
import { problemFor, sendProblem } from '../../lib/http/problem.js';
import { rejecter, takeOnReject, type OnRejectOption, type Rejecter } from '../../lib/http/reject.js';
import { RateLimitConfig, checkTrustProxy, fail, type TrustProxySetting } from '../../lib/records/index.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';
import { MemoryStore, STORE_UNAVAILABLE_EXTENSIONS, STORE_UNAVAILABLE_HEADERS, type BucketPolicy, type RateLimitStore, type TakeResult } from './store.js';
import { PACKAGE_KEYS, parseWindowOptions, type RateLimitPackageOptions } from './window-options.js';
import { windowLimiter, type RateLimitRequestHandler } from './window-limiter.js';
import type { WindowStore } from './window-store.js';

export { DEFAULT_RATE_BURST, DEFAULT_RATE_PER_SECOND } from '../../lib/records/index.js';
export { MemoryStore, DEFAULT_MEMORY_STORE_MAX_KEYS, STORE_UNAVAILABLE_HEADERS, STORE_UNAVAILABLE_RETRY_AFTER_SECONDS, gcraTake, type BucketPolicy, type MemoryStoreOptions, type RateLimitStore, type TakeResult } from './store.js';
export { RedisStore, RedisCommandTimeoutError, DEFAULT_REDIS_PREFIX, DEFAULT_REDIS_COMMAND_TIMEOUT_MS, type RedisStoreOptions } from './redis.js';
export {
  PACKAGE_DEFAULT_LIMIT, PACKAGE_DEFAULT_MESSAGE, PACKAGE_DEFAULT_REQUEST_PROPERTY, PACKAGE_DEFAULT_STATUS, PACKAGE_DEFAULT_WINDOW_MS,
  type RateLimitPackageOptions, type ValueDeterminingMiddleware,
} from './window-options.js';
export { FixedWindowMemoryStore, type ClientRateLimitInfo, type IncrementCallback, type LegacyWindowStore, type StoreInitOptions, type WindowStore } from './window-store.js';
export type { RateLimitRequestHandler } from './window-limiter.js';
export type { RateLimitInfo, DraftHeadersVersion } from './window-headers.js';
export { ValidationError, ChangeWarning, type RateLimitLogger } from './window-validations.js';
export { ipKeyGenerator } from './ip-key.js';
export { DEFAULT_ON_REJECT } from '../../lib/http/reject.js';
export { compileTrust, DEFAULT_IPV6_SUBNET, IPV6_KEY_MEMO_SIZE } from './client-key.js';

/** Key of the single bucket when `ip_based` is false. */
export const GLOBAL_KEY = 'global';

/** The RateLimitConfig record, snake_case or camelCase (type generated from the record). */
export type { RateLimitConfigInput } from '../../lib/records/server.js';
import type { RateLimitConfigInput } from '../../lib/records/server.js';
import { isPackageStyle } from '../../lib/http/package-style.js';
import { refillRate } from './phrases.js';
import { fixedHeader, setCheckedHeader, setFixedHeaders } from '../../lib/http/fixed-headers.js';
/** RateLimitConfig under the name the migration guide uses. */
export type RateLimitConfigOptions = RateLimitConfigInput;

/**
 * keel's RateLimitConfig, or express-rate-limit's options (`windowMs`, `limit`, …; one style per call),
 * plus `onReject` (lib/http/reject.ts).
 */
export type RateLimitOptions = (RateLimitConfigInput | RateLimitPackageOptions) & OnRejectOption;

/** keel extensions, not part of the RateLimitConfig record; the factory's second argument. */
export interface RateLimitExtensions {
  /** Where buckets live. Default: a new `MemoryStore` per middleware. Use `RedisStore` to share a limit between instances. */
  store?: RateLimitStore;
  /**
   * The client key when `ip_based` is true. Default: the client address, IPv6 addresses grouped by
   * `ipv6Subnet`. The address is `req.ip` under Express (so `app.set('trust proxy', …)` applies), the
   * address `trustProxy` picks when it is given, else the socket's peer.
   */
  key?: (req: KeelRequest) => string;
  /**
   * Which proxies to believe about the client address, with Express's `trust proxy` semantics
   * (proxy-addr): `true`, a hop count, addresses / subnets / `loopback` | `linklocal` | `uniquelocal`,
   * or a function `(addr, i) => boolean`. Behind a reverse proxy every request comes from the proxy,
   * so without this everyone shares one bucket. Never trust `X-Forwarded-For` from the open internet:
   * clients can write anything there. Default `DEFAULT_TRUST_PROXY` (false): the socket's peer, or `req.ip` under Express.
   */
  trustProxy?: TrustProxySetting | ((addr: string, i: number) => boolean);
  /** IPv6 prefix length treated as one client, or false for whole addresses. Default `DEFAULT_IPV6_SUBNET` (56). */
  ipv6Subnet?: number | false;
  /** When the store fails (e.g. Redis is down): true lets the request through, false answers 503. Default false. */
  passOnStoreError?: boolean;
}

function checkExtensions(ext: RateLimitExtensions): void {
  const bad = (key: string, value: unknown, expected: string): never => fail('RateLimitConfig', 'rateLimit(options, extensions)', key, value, expected);
  if (typeof ext !== 'object' || ext === null) bad('', ext, 'an object');
  const known = ['store', 'key', 'ipv6Subnet', 'passOnStoreError', 'trustProxy'];
  for (const k of Object.keys(ext)) if (!known.includes(k)) bad(k, ext[k as keyof RateLimitExtensions], `one of the extensions ${known.join(', ')}`);
  if (ext.store !== undefined && typeof ext.store?.take !== 'function') bad('store', ext.store, 'a RateLimitStore (an object with take(key, policy))');
  if (ext.key !== undefined && typeof ext.key !== 'function') bad('key', ext.key, 'a function (req) => string');
  if (ext.ipv6Subnet !== undefined && ext.ipv6Subnet !== false && !(Number.isInteger(ext.ipv6Subnet) && ext.ipv6Subnet >= 1 && ext.ipv6Subnet <= 128)) {
    bad('ipv6Subnet', ext.ipv6Subnet, 'an integer from 1 to 128, or false');
  }
  if (ext.passOnStoreError !== undefined && typeof ext.passOnStoreError !== 'boolean') bad('passOnStoreError', ext.passOnStoreError, 'true or false');
  if (ext.trustProxy !== undefined && typeof ext.trustProxy !== 'function') checkTrustProxy('RateLimitConfig', 'rateLimit(options, extensions)', 'trustProxy', ext.trustProxy);
}

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as Promise<T>)?.then === 'function';

/**
 * Limit requests with a token bucket: `burst` at once, refilled at `per_second` per second, per
 * client IP (`ip_based`, the default) or in one global bucket.
 *
 * Every response carries the IETF RateLimit headers in the draft-7 form that express-rate-limit
 * emits with `standardHeaders: 'draft-7'` (draft-ietf-httpapi-ratelimit-headers-07):
 * `RateLimit-Policy: <burst>;w=<burst/per_second, rounded up>` and
 * `RateLimit: limit=<burst>, remaining=<tokens left>, reset=<seconds until the bucket is full>`.
 * A refused request gets a 429 problem with `Retry-After: <seconds until one token is back>`
 * (an integer ≥ 1, RFC 9110 §10.2.3; RFC 6585 §4).
 *
 * Behind a proxy, pass a `key` function (see RateLimitExtensions.key).
 *
 * With express-rate-limit's options it behaves as express-rate-limit 8 (window-limiter.ts): at most
 * `limit` requests per `windowMs` window, any express-rate-limit `store`, `req.rateLimit`, the headers
 * `standardHeaders` / `legacyHeaders` ask for; the returned middleware has `resetKey` and `getKey`.
 *
 * @example
 * // express-rate-limit's options, with rate-limit-redis (or keel's RedisStore) shared by every instance
 * app.use(rateLimit({ windowMs: 15 * 60_000, limit: 100, standardHeaders: 'draft-8', store: new RedisStore({ sendCommand }) }));
 *
 * @example
 * import express from 'express';
 * import { rateLimit } from 'keel/middleware/rate-limit';
 *
 * const app = express();
 * app.use(rateLimit({ per_second: 5, burst: 10 }));
 * app.get('/', (_req, res) => res.send('ok'));
 *
 * With `onReject: 'next'` the 429 (and the 503 of a failed store) goes to `next(err)` as an
 * HttpError whose `headers` hold `Retry-After`, `RateLimit` and `RateLimit-Policy`.
 */
export function rateLimit(options?: RateLimitConfigInput & OnRejectOption, extensions?: RateLimitExtensions): Middleware;
export function rateLimit(options: RateLimitPackageOptions & OnRejectOption, extensions?: RateLimitExtensions): RateLimitRequestHandler;
export function rateLimit(options?: RateLimitOptions, extensions?: RateLimitExtensions): Middleware;
export function rateLimit(options: RateLimitOptions = {}, extensions: RateLimitExtensions = {}): Middleware {
  const { onReject, rest } = takeOnReject(options, 'RateLimitConfig');
  const reject = rejecter(onReject);
  if (packageStyle(rest)) return packageLimiter(rest as Record<string, unknown>, extensions, reject, 'onReject' in options || 'on_reject' in options);
  return limiter(RateLimitConfig.parse(rest, 'RateLimitConfig'), extensions, reject);
}

/**
 * express-rate-limit's options: its fixed windows, Store API, hooks and headers (window-limiter.ts).
 * keel's extensions still apply: `trustProxy` (the address of the default key), `key` (a keyGenerator),
 * `store` (an express-rate-limit Store), `ipv6Subnet` and `passOnStoreError`.
 */
function packageLimiter(options: Record<string, unknown>, extensions: RateLimitExtensions, reject: Rejecter, onRejectGiven: boolean): RateLimitRequestHandler {
  if (options.handler !== undefined && onRejectGiven) {
    fail('RateLimitConfig', 'rateLimit(options)', 'handler', '[function]', "one of express-rate-limit's handler and keel's onReject", 'Both say what to do with a refused request: keep one.');
  }
  const { store, ...rest } = extensions;
  checkExtensions(rest);
  if (store !== undefined && typeof (store as Partial<WindowStore>).increment !== 'function') {
    fail('RateLimitConfig', 'rateLimit(options, extensions)', 'store', store, "an express-rate-limit Store (increment, decrement, resetKey) with express-rate-limit's options",
      'keel token-bucket stores go with keel\'s { per_second, burst }; pass the store as the store option, or use RedisStore, which implements both.');
  }
  const merged: Record<string, unknown> = { ...options };
  if (rest.passOnStoreError !== undefined && merged.passOnStoreError === undefined) merged.passOnStoreError = rest.passOnStoreError;
  if (rest.ipv6Subnet !== undefined && merged.ipv6Subnet === undefined) merged.ipv6Subnet = rest.ipv6Subnet;
  if (rest.key !== undefined && merged.keyGenerator === undefined) merged.keyGenerator = rest.key;
  const config = parseWindowOptions(merged, store as WindowStore | undefined);
  const trust = rest.trustProxy === undefined ? null : compileTrust(rest.trustProxy);
  const addressOf = trust !== null
    ? (req: KeelRequest): string => proxyAddr()(req, trust)
    // Express's req.ip honours `app.set('trust proxy', …)`; elsewhere the socket's peer.
    : (req: KeelRequest): string | undefined => (req as { ip?: string }).ip ?? req.socket?.remoteAddress;
  if (trust !== null) proxyAddr();
  preloadIpKey();
  return windowLimiter(config, reject, addressOf, trust !== null);
}

/** express-rate-limit options (any of its keys) rather than keel's record; both in one call is a ConfigError. */
function packageStyle(options: object): boolean {
  if (typeof options !== 'object' || options === null) return false;
  const o = options as Record<string, unknown>;
  return isPackageStyle(
    options,
    (k) => PACKAGE_KEYS.includes(k),
    (k) => RECORD_KEYS.includes(k),
    (pkg, keel) => fail('RateLimitConfig', 'rateLimit(options)', keel, o[keel],
      `keel's keys (per_second, burst, ip_based) or express-rate-limit's (${pkg.join(', ')}), not both`,
      `Write either { per_second, burst } or { windowMs, limit }: ${pkg[0]} is express-rate-limit's, ${keel} is keel's.`),
  );
}

/** RateLimitConfig's keys in both spellings. */
const RECORD_KEYS: readonly string[] = ['per_second', 'perSecond', 'burst', 'ip_based', 'ipBased'];

function limiter(config: Readonly<RateLimitConfig>, extensions: RateLimitExtensions, reject: Rejecter): Middleware {
  checkExtensions(extensions);
  // `enabled: false` (the reference's records carry it): no limit, no headers, nothing per request.
  if (!config.enabled) {
    return function rateLimitDisabled(_req: KeelRequest, _res: ServerResponse, next: NextFunction): void {
      next();
    };
  }
  const policy: BucketPolicy = Object.freeze({ burst: config.burst, perSecond: config.per_second });
  const store = extensions.store ?? new MemoryStore();
  const passOnStoreError = extensions.passOnStoreError ?? false;
  const subnet = extensions.ipv6Subnet ?? DEFAULT_IPV6_SUBNET;
  const keyOf: (req: KeelRequest) => string = !config.ip_based
    ? () => GLOBAL_KEY
    : (extensions.key ?? keyFromAddress(clientKeys(subnet), extensions.trustProxy === undefined ? null : compileTrust(extensions.trustProxy)));

  // The window a full bucket refills in, whole seconds (rounded to µs first: 3 / (3 / 900) is 900.0000000000001).
  const windowSeconds = Math.ceil(Math.round((policy.burst / policy.perSecond) * 1e6) / 1e6);
  const policyHeader = `${policy.burst};w=${windowSeconds}`;
  const policyFixed = [fixedHeader('RateLimit-Policy', policyHeader)];
  const exceeded = `Rate limit exceeded: ${policy.burst} requests at once, refilled at ${refillRate(policy.perSecond)}`;
  const detailFor = (retryAfter: number): string => `${exceeded}; retry in ${retryAfter} s`;
  const unavailable = Object.freeze(problemFor('KEEL_SERVICE_UNAVAILABLE', 'The rate limiter is unavailable', STORE_UNAVAILABLE_EXTENSIONS));

  // The RateLimit field of the last (remaining, reset) answered: under steady traffic they repeat from
  // one request to the next, so the string is built when they change, not per request.
  let lastRemaining = -1;
  let lastReset = -1;
  let lastState = '';
  const stateOf = (remaining: number, reset: number): string => {
    if (remaining !== lastRemaining || reset !== lastReset) {
      lastState = `limit=${policy.burst}, remaining=${remaining}, reset=${reset}`;
      lastRemaining = remaining;
      lastReset = reset;
    }
    return lastState;
  };

  function answer(req: KeelRequest, res: ServerResponse, next: NextFunction, result: TakeResult): void {
    const state = stateOf(result.remaining, Math.ceil(result.resetMs / 1000));
    if (!res.headersSent) {
      // Both made of numbers keel formatted: node's header checks would find nothing (lib/http/fixed-headers.ts).
      setFixedHeaders(res, policyFixed);
      setCheckedHeader(res, 'RateLimit', 'ratelimit', state);
    }
    observe.rateLimit(result.allowed ? 'allowed' : 'limited', req, res);
    if (result.allowed) return next();
    const retryAfter = Math.max(1, Math.ceil(Math.round(result.retryAfterMs) / 1000));
    const headers: Record<string, string> = reject.mode === 'respond'
      ? { 'Retry-After': String(retryAfter) }
      // Handed on, the error carries every header its answer needs, not only those already on `res`.
      : { 'Retry-After': String(retryAfter), 'RateLimit-Policy': policyHeader, RateLimit: state };
    reject.refuse(req, res, next, problemFor('KEEL_RATE_LIMITED', detailFor(retryAfter)), headers);
  }

  function storeFailed(req: KeelRequest, res: ServerResponse, next: NextFunction, err: unknown): void {
    observe.storeError('rate_limit', err);
    observe.rateLimit(passOnStoreError ? 'store_error_passed' : 'store_error_refused', req, res);
    if (passOnStoreError) return next();
    reject.refuse(req, res, next, unavailable, STORE_UNAVAILABLE_HEADERS);
  }

  return function rateLimitMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    let key: string;
    try {
      key = keyOf(req);
    } catch (err) {
      // A throwing key function is a bug in the application: a 500 without internals (or next(err)).
      return reject.fail(req, res, next, err);
    }
    let taken: TakeResult | Promise<TakeResult>;
    try {
      taken = store.take(key, policy);
    } catch (err) {
      return storeFailed(req, res, next, err);
    }
    // The memory store answers synchronously: no promise, no extra tick per request.
    if (!isPromise(taken)) return answer(req, res, next, taken);
    taken
      .then(
        (result) => answer(req, res, next, result),
        (err: unknown) => storeFailed(req, res, next, err),
      )
      // An error thrown further down the chain must not become an unhandled rejection.
      .catch((err: unknown) => sendProblem(res, err));
  };
}
