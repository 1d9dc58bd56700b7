/**
 * Token-bucket rate limiting per client IP (or one global bucket), with a pluggable store.
 *
 * Semantics and store design: see store.ts (GCRA = token bucket, one number per client) and redis.ts
 * (the same step as one atomic Lua script, for limits shared between instances).
 */
import type { ServerResponse } from 'node:http';
import { ipKey, preloadIpKey } from './ip-key.js';
import { problemFor, sendProblem } from '../../lib/problem.js';
import { rejecter, takeOnReject, type OnRejectOption } from '../../lib/reject.js';
import { RateLimitConfig, fail } from '../../lib/records/index.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/request.js';
import { MemoryStore, type BucketPolicy, type RateLimitStore, type TakeResult } from './store.js';

export { DEFAULT_RATE_BURST, DEFAULT_RATE_PER_SECOND } from '../../lib/records/index.js';
export { MemoryStore, DEFAULT_MEMORY_STORE_MAX_KEYS, gcraTake, type BucketPolicy, type MemoryStoreOptions, type RateLimitStore, type TakeResult } from './store.js';
export { RedisStore, DEFAULT_REDIS_PREFIX, type RedisStoreOptions } from './redis.js';
export { DEFAULT_ON_REJECT } from '../../lib/reject.js';

/** Default IPv6 prefix length that counts as one client: one /56 is what a single site is usually given (express-rate-limit's default). */
export const DEFAULT_IPV6_SUBNET = 56;
/** Key of the single bucket when `ip_based` is false. */
export const GLOBAL_KEY = 'global';

/** RateLimitConfig, snake_case or camelCase, and `onReject` (lib/reject.ts). */
export type RateLimitOptions = RateLimitConfigInput & OnRejectOption;
import type { RateLimitConfigInput } from '../../lib/records/server.js';

/** The record input under the name the house style uses for every factory. */
export type { RateLimitConfigInput } from '../../lib/records/server.js';

/** keel extensions, not part of the RateLimitConfig record; the factory's second argument. */
export interface RateLimitExtensions {
  /** Where buckets live. Default: a new `MemoryStore` per middleware. Use `RedisStore` to share a limit between instances. */
  store?: RateLimitStore;
  /**
   * The client key when `ip_based` is true. Default: `req.socket.remoteAddress`, IPv6 addresses
   * grouped by `ipv6Subnet`. Behind a reverse proxy or load balancer every request comes from the
   * proxy, so everyone would share one bucket: derive the key from the proxy's forwarded address
   * instead (Express: `key: (req) => ipKeyGenerator(req.ip)` with `app.set('trust proxy', …)`). Never
   * trust `X-Forwarded-For` from the open internet: clients can write anything there.
   */
  key?: (req: KeelRequest) => string;
  /** IPv6 prefix length treated as one client, or false for whole addresses. Default `DEFAULT_IPV6_SUBNET` (56). */
  ipv6Subnet?: number | false;
  /** When the store fails (e.g. Redis is down): true lets the request through, false answers 503. Default false. */
  passOnStoreError?: boolean;
}

function checkExtensions(ext: RateLimitExtensions): void {
  const bad = (key: string, value: unknown, expected: string): never => fail('RateLimitConfig', 'rateLimit(options, extensions)', key, value, expected);
  if (typeof ext !== 'object' || ext === null) bad('', ext, 'an object');
  const known = ['store', 'key', 'ipv6Subnet', 'passOnStoreError'];
  for (const k of Object.keys(ext)) if (!known.includes(k)) bad(k, ext[k as keyof RateLimitExtensions], `one of the extensions ${known.join(', ')}`);
  if (ext.store !== undefined && typeof ext.store?.take !== 'function') bad('store', ext.store, 'a RateLimitStore (an object with take(key, policy))');
  if (ext.key !== undefined && typeof ext.key !== 'function') bad('key', ext.key, 'a function (req) => string');
  if (ext.ipv6Subnet !== undefined && ext.ipv6Subnet !== false && !(Number.isInteger(ext.ipv6Subnet) && ext.ipv6Subnet >= 1 && ext.ipv6Subnet <= 128)) {
    bad('ipv6Subnet', ext.ipv6Subnet, 'an integer from 1 to 128, or false');
  }
  if (ext.passOnStoreError !== undefined && typeof ext.passOnStoreError !== 'boolean') bad('passOnStoreError', ext.passOnStoreError, 'true or false');
}

/** Client addresses whose IPv6 key one limiter remembers; the memo starts over when it is full. */
export const IPV6_KEY_MEMO_SIZE = 10_000;

/**
 * The default client key: ipKey (./ip-key.ts, express-rate-limit's ipKeyGenerator rules) groups IPv6
 * addresses by subnet and unwraps IPv4-mapped ones (what IPv4 clients look like to a server bound to
 * `::`), parsing the address twice (~10 µs).
 * The key only depends on the address, so it is remembered; an address without a colon is IPv4,
 * which ipKey returns as it is.
 */
function clientKeys(subnet: number | false): (ip: string) => string {
  const memo = new Map<string, string>();
  preloadIpKey();
  return function clientKey(ip: string): string {
    if (!ip.includes(':')) return ip;
    let key = memo.get(ip);
    if (key === undefined) {
      key = ipKey(ip, subnet);
      if (memo.size >= IPV6_KEY_MEMO_SIZE) memo.clear();
      memo.set(ip, key);
    }
    return key;
  };
}

function keyFromSocket(clientKey: (ip: string) => string): (req: KeelRequest) => string {
  return (req) => clientKey(req.socket.remoteAddress ?? 'unknown');
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
export function rateLimit(options: RateLimitOptions = {}, extensions: RateLimitExtensions = {}): Middleware {
  const { onReject, rest } = takeOnReject(options, 'RateLimitConfig');
  const reject = rejecter(onReject);
  const config = RateLimitConfig.parse(rest, 'RateLimitConfig');
  checkExtensions(extensions);
  const policy: BucketPolicy = Object.freeze({ burst: config.burst, perSecond: config.per_second });
  const store = extensions.store ?? new MemoryStore();
  const passOnStoreError = extensions.passOnStoreError ?? false;
  const subnet = extensions.ipv6Subnet ?? DEFAULT_IPV6_SUBNET;
  const keyOf: (req: KeelRequest) => string = !config.ip_based
    ? () => GLOBAL_KEY
    : (extensions.key ?? keyFromSocket(clientKeys(subnet)));

  const policyHeader = `${policy.burst};w=${Math.ceil(policy.burst / policy.perSecond)}`;
  const exceeded = `Rate limit exceeded: ${policy.burst} requests at once, refilled at ${policy.perSecond} per second`;
  const unavailable = Object.freeze(problemFor('KEEL_SERVICE_UNAVAILABLE', 'The rate limiter is unavailable'));

  function answer(req: KeelRequest, res: ServerResponse, next: NextFunction, result: TakeResult): void {
    const state = `limit=${policy.burst}, remaining=${result.remaining}, reset=${Math.ceil(result.resetMs / 1000)}`;
    if (!res.headersSent) {
      res.setHeader('RateLimit-Policy', policyHeader);
      res.setHeader('RateLimit', state);
    }
    if (result.allowed) return next();
    const retryAfter = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
    const headers: Record<string, string> = reject.mode === 'respond'
      ? { 'Retry-After': String(retryAfter) }
      // Handed on, the error carries every header its answer needs, not only those already on `res`.
      : { 'Retry-After': String(retryAfter), 'RateLimit-Policy': policyHeader, RateLimit: state };
    reject.refuse(req, res, next, problemFor('KEEL_RATE_LIMITED', `${exceeded}; retry in ${retryAfter} s`), headers);
  }

  function storeFailed(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    if (passOnStoreError) return next();
    reject.refuse(req, res, next, unavailable);
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
    } catch {
      return storeFailed(req, res, next);
    }
    // The memory store answers synchronously: no promise, no extra tick per request.
    if (!isPromise(taken)) return answer(req, res, next, taken);
    taken
      .then(
        (result) => answer(req, res, next, result),
        () => storeFailed(req, res, next),
      )
      // An error thrown further down the chain must not become an unhandled rejection.
      .catch((err: unknown) => sendProblem(res, err));
  };
}
