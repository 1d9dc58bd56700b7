/**
 * rateLimit with express-rate-limit's options: its fixed-window semantics (at most `limit` requests per
 * `windowMs` per client), its Store API, `req.rateLimit`, its headers and its hooks, step for step as
 * express-rate-limit 8 runs them, so that an Express app swapping the import sees the same limits.
 *
 * Two things stay keel's, because they are what keel promises every client: a refused request is
 * answered with a 429 application/problem+json (RFC 9457) unless the options ask for
 * express-rate-limit's answer (`message`, `handler` or `statusCode`), and a failing store answers 503
 * problem (RFC 9110 §15.6.4: the limiter is unavailable) unless `passOnStoreError` lets requests through.
 */
import type { ServerResponse } from 'node:http';
import { isIPv6 } from 'node:net';
import { problemFor } from '../../lib/http/problem.js';
import type { Rejecter } from '../../lib/http/reject.js';
import type { KeelRequest, NextFunction } from '../../lib/http/request.js';
import { ipKeyGenerator } from './ip-key.js';
import { STORE_UNAVAILABLE_EXTENSIONS, STORE_UNAVAILABLE_HEADERS } from './store.js';
import {
  defaultIdentifier, resetSeconds, setDraft6Headers, setDraft7Headers, setDraft8Headers, setLegacyHeaders,
  setRetryAfterHeader, type RateLimitInfo,
} from './window-headers.js';
import type { WindowConfig } from './window-options.js';
import type { ClientRateLimitInfo } from './window-store.js';
import { observe } from '../../lib/observability/observe.js';
import { requestsPerWindow } from './phrases.js';

/** The middleware, with express-rate-limit's two methods for the store behind it. */
export interface RateLimitRequestHandler {
  (req: KeelRequest, res: ServerResponse, next: NextFunction): Promise<void>;
  /** Forget a client's hits (e.g. after a successful login). */
  resetKey(key: string): void | Promise<void>;
  /** A client's hits and window end; throws when the store has no `get`. */
  getKey(key: string): Promise<ClientRateLimitInfo | undefined> | ClientRateLimitInfo | undefined;
}

/** Where the limiter reads the client address (keel's trustProxy / Express's req.ip / the socket). */
export type AddressOf = (req: KeelRequest) => string | undefined;

const NAMES_TO_FORWARD = ['Retry-After', 'RateLimit', 'RateLimit-Policy', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset',
  'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

const valueOf = async <T>(v: T | ((req: KeelRequest, res: ServerResponse) => T | Promise<T>), req: KeelRequest, res: ServerResponse): Promise<T> =>
  typeof v === 'function' ? await (v as (req: KeelRequest, res: ServerResponse) => T | Promise<T>)(req, res) : v;

/**
 * The limiter for completed options. `addressOf` gives the client address for the default key;
 * `reject` delivers keel's refusals (onReject).
 */
export function windowLimiter(config: WindowConfig, reject: Rejecter, addressOf: AddressOf, trustsForwarded: boolean): RateLimitRequestHandler {
  const { store, validations, logger, windowMs } = config;
  validations.creationStack(store);
  validations.unsharedStore(store);
  if (typeof store.init === 'function') {
    // init may be async: the limiter is returned now, and a failure is logged (express-rate-limit's rule).
    try {
      const started = store.init(config.view as never);
      if (started instanceof Promise) started.catch((err: unknown) => logger.error(err, 'express-rate-limit: async error during store initialization.'));
    } catch (err) {
      logger.error(err, 'express-rate-limit: error during store initialization.');
    }
  }
  const unavailable = Object.freeze(problemFor('KEEL_SERVICE_UNAVAILABLE', 'The rate limiter is unavailable', STORE_UNAVAILABLE_EXTENSIONS));

  async function keyOf(req: KeelRequest, res: ServerResponse): Promise<string> {
    if (config.keyGenerator) return String(await config.keyGenerator(req, res));
    const ip = addressOf(req) as string;
    validations.ip(ip);
    validations.trustProxy(req);
    // keel's trustProxy reads X-Forwarded-For itself: the header is expected then.
    if (!trustsForwarded) validations.xForwardedForHeader(req);
    validations.forwardedHeader(req);
    let subnet: number | false = 56;
    if (typeof ip === 'string' && isIPv6(ip)) {
      subnet = await valueOf(config.ipv6Subnet, req, res);
      if (typeof config.ipv6Subnet === 'function') validations.ipv6Subnet(subnet);
    }
    return ipKeyGenerator(ip, subnet);
  }

  /** The refusal when the options did not ask for express-rate-limit's: keel's 429 problem. */
  async function refuse(req: KeelRequest, res: ServerResponse, next: NextFunction, info: RateLimitInfo): Promise<void> {
    if (config.handler) return void (await config.handler(req, res, next, config.view));
    if (config.packageAnswer) {
      res.statusCode = config.statusCode;
      const message = await valueOf(config.message, req, res);
      if (!res.writableEnded) send(res, message);
      return;
    }
    const wait = resetSeconds(windowMs, info.resetTime);
    const problem = problemFor('KEEL_RATE_LIMITED', `Rate limit exceeded: ${requestsPerWindow(info.limit, windowMs)}; retry in ${wait} s`);
    // Handed on (onReject 'next' or a function), the error carries the headers its answer needs.
    const headers: Record<string, string> = {};
    if (reject.mode !== 'respond') {
      for (const name of NAMES_TO_FORWARD) {
        const v = res.getHeader(name);
        if (v !== undefined) headers[name] = Array.isArray(v) ? v.join(', ') : String(v);
      }
    }
    reject.refuse(req, res, next, problem, headers);
  }

  async function limit(req: KeelRequest, res: ServerResponse, next: NextFunction): Promise<void> {
    // Listen before any await, so a response that ends (or a client that leaves) meanwhile is seen.
    const watchFailure = config.skipFailedRequests;
    const closed = watchFailure && new Promise<void>((resolve) => res.once('close', () => resolve()));
    const finished = (watchFailure || config.skipSuccessfulRequests) && new Promise<void>((resolve) => res.once('finish', () => resolve()));
    const errored = watchFailure && new Promise<void>((resolve) => res.once('error', () => resolve()));

    if (config.skip && (await config.skip(req, res))) return next();
    const key = await keyOf(req, res);
    let counted: ClientRateLimitInfo;
    try {
      counted = await store.increment(key);
    } catch (err) {
      observe.storeError('rate_limit', err);
      observe.rateLimit(config.passOnStoreError ? 'store_error_passed' : 'store_error_refused', req, res);
      if (config.passOnStoreError) {
        logger.error(err, 'express-rate-limit: error from store, allowing request without rate-limiting.');
        return next();
      }
      return reject.refuse(req, res, next, unavailable, STORE_UNAVAILABLE_HEADERS);
    }
    const { totalHits, resetTime } = counted;
    validations.positiveHits(totalHits);
    validations.singleCount(req, store, key);
    const max = await valueOf(config.limit, req, res);
    validations.limit(max);

    const info: RateLimitInfo = { limit: max, used: totalHits, remaining: Math.max(max - totalHits, 0), resetTime, key };
    // `current` (the pre-v7 name of `used`) stays readable but out of JSON.stringify and iteration.
    Object.defineProperty(info, 'current', { configurable: false, enumerable: false, value: totalHits });
    (req as unknown as Record<string, unknown>)[config.requestPropertyName] = info;

    if (config.legacyHeaders && !res.headersSent) setLegacyHeaders(res, info);
    if (config.standardHeaders && !res.headersSent) await standardHeaders(req, res, info, key);

    if (config.skipFailedRequests || config.skipSuccessfulRequests) {
      let decremented = false;
      const takeBack = async (): Promise<void> => {
        if (decremented) return;
        // The window has ended: the store has already started a new count, which is not this hit's.
        if (resetTime && Date.now() >= resetTime.getTime()) return;
        decremented = true;
        await store.decrement(key);
      };
      const onError = (err: unknown): void => logger.error(err, 'express-rate-limit: error while taking a hit back.');
      if (finished) {
        void finished.then(async () => {
          const ok = await config.requestWasSuccessful(req, res);
          if (ok ? config.skipSuccessfulRequests : config.skipFailedRequests) await takeBack();
        }).catch(onError);
      }
      // A client that leaves before the answer is complete did not get one: a failed request.
      if (closed) void closed.then(() => (res.writableEnded ? undefined : takeBack())).catch(onError);
      if (errored) void errored.then(takeBack).catch(onError);
    }

    observe.rateLimit(totalHits > max ? 'limited' : 'allowed', req, res);
    if (totalHits > max) {
      if (config.legacyHeaders || config.standardHeaders) setRetryAfterHeader(res, info, windowMs);
      return refuse(req, res, next, info);
    }
    next();
  }

  async function standardHeaders(req: KeelRequest, res: ServerResponse, info: RateLimitInfo, key: string): Promise<void> {
    switch (config.standardHeaders) {
      case 'draft-6':
        return setDraft6Headers(res, info, windowMs);
      case 'draft-7':
        validations.headersResetTime(info.resetTime);
        return setDraft7Headers(res, info, windowMs);
      case 'draft-8': {
        const name = config.identifier === undefined ? defaultIdentifier(info.limit, windowMs) : await valueOf(config.identifier, req, res);
        validations.headersResetTime(info.resetTime);
        return setDraft8Headers(res, info, windowMs, name, key);
      }
      default:
        // An unknown draft name writes no header; the check says why (once).
        validations.headersDraftVersion(config.standardHeaders);
    }
  }

  const middleware = async function rateLimitMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): Promise<void> {
    try {
      await limit(req, res, next);
    } catch (err) {
      // A throwing skip, keyGenerator, limit, message or handler is the application's error: Express's next(err).
      next(err);
    }
  } as RateLimitRequestHandler;
  middleware.resetKey = store.resetKey.bind(store);
  middleware.getKey = typeof store.get === 'function' ? store.get.bind(store) : () => {
    throw new Error('The current store does not support the get/getKey method');
  };
  return middleware;
}

/** res.send under Express; without it, the same bodies: text as HTML (Express's default), objects as JSON. */
function send(res: ServerResponse, message: unknown): void {
  const r = res as ServerResponse & { send?: (body: unknown) => void };
  if (typeof r.send === 'function') return r.send(message);
  let body: string | Buffer;
  if (Buffer.isBuffer(message)) {
    body = message;
    if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', 'application/octet-stream');
  } else if (typeof message === 'string') {
    body = message;
    if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', 'text/html; charset=utf-8');
  } else {
    body = JSON.stringify(message) ?? '';
    if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', 'application/json; charset=utf-8');
  }
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
