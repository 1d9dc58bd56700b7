/**
 * express-rate-limit's options (v8 names, defaults and meanings), checked and completed once when
 * the factory runs.
 *
 * What express-rate-limit only warns about (its `validate` checks: an unsupported draft name, an
 * ipv6Subnet outside 32–64, `limit: 0`) is reported the same way, through `logger`; what cannot work at
 * all (a store without `increment`, a logger without `error`, a handler that is not a function, a status
 * outside 100–599) is a ConfigError naming the option.
 */
import type { ServerResponse } from 'node:http';
import { fail } from '../../lib/records/define.js';
import type { KeelRequest, NextFunction } from '../../lib/http/request.js';
import type { DraftHeadersVersion } from './window-headers.js';
import { FixedWindowMemoryStore, promisifyStore, type LegacyWindowStore, type WindowStore } from './window-store.js';
import { CONSOLE_LOGGER, getValidations, type RateLimitLogger, type Validations } from './window-validations.js';

/** express-rate-limit's default window: one minute. */
export const PACKAGE_DEFAULT_WINDOW_MS = 60_000;
/** express-rate-limit's default limit: 5 requests per window. */
export const PACKAGE_DEFAULT_LIMIT = 5;
/** express-rate-limit's default refusal text (sent only when `message`/`handler`/`statusCode` ask for its answer). */
export const PACKAGE_DEFAULT_MESSAGE = 'Too many requests, please try again later.';
/** express-rate-limit's default status, 429 Too Many Requests (RFC 6585 §4). */
export const PACKAGE_DEFAULT_STATUS = 429;
/** express-rate-limit's default `req` property for the client's quota: `req.rateLimit`. */
export const PACKAGE_DEFAULT_REQUEST_PROPERTY = 'rateLimit';

/** A value computed per request, maybe asynchronously (express-rate-limit's ValueDeterminingMiddleware). */
export type ValueDeterminingMiddleware<T> = (req: any, res: any) => T | Promise<T>;

/** The options of express-rate-limit 8 (all optional; see docs/migrating-from-express.md). */
export interface RateLimitPackageOptions {
  /** Window length, ms. Default `PACKAGE_DEFAULT_WINDOW_MS` (60000). */
  windowMs?: number;
  /** Requests allowed per window, or a function of the request. 0 refuses everyone. Default `PACKAGE_DEFAULT_LIMIT` (5). */
  limit?: number | ValueDeterminingMiddleware<number>;
  /** Older name of `limit`. */
  max?: number | ValueDeterminingMiddleware<number>;
  /** Body of a refusal, sent as express-rate-limit sends it (res.send). Without it, keel's 429 problem+json. */
  message?: unknown;
  /** Status of a refusal. Default `PACKAGE_DEFAULT_STATUS` (429). Given: express-rate-limit's answer. */
  statusCode?: number;
  /** `X-RateLimit-*` headers. Default true (as express-rate-limit). */
  legacyHeaders?: boolean;
  /** Pre-6.x name of `legacyHeaders`. */
  headers?: boolean;
  /** IETF RateLimit headers: 'draft-6' (or true), 'draft-7', 'draft-8', or false. Default false. */
  standardHeaders?: boolean | DraftHeadersVersion;
  /** The draft-8 policy name. Default `<limit>-in-<window>` (e.g. `5-in-1min`). */
  identifier?: string | ValueDeterminingMiddleware<string>;
  /** The `req` property that receives `{ limit, used, remaining, resetTime, key }`. Default 'rateLimit'. */
  requestPropertyName?: string;
  /** Take the hit back when the response fails (status ≥ 400, error or closed early). */
  skipFailedRequests?: boolean;
  /** Take the hit back when the response succeeds (status < 400). */
  skipSuccessfulRequests?: boolean;
  /** Whether a response counts as successful. Default: status < 400. */
  requestWasSuccessful?: ValueDeterminingMiddleware<boolean>;
  /** The client key. Default: the client IP (IPv6 grouped by `ipv6Subnet`), see ipKeyGenerator. */
  keyGenerator?: ValueDeterminingMiddleware<string>;
  /** IPv6 prefix length that is one client (32–64), false for whole addresses, or a function. Default 56. */
  ipv6Subnet?: number | false | ValueDeterminingMiddleware<number>;
  /** Answers a refused request: `(req, res, next, options)`. */
  handler?: (req: any, res: any, next: NextFunction, options: Readonly<Record<string, unknown>>) => unknown;
  /** true: neither count nor limit this request. */
  skip?: ValueDeterminingMiddleware<boolean>;
  /** Where hits are counted: any express-rate-limit Store (rate-limit-redis …). Default: a FixedWindowMemoryStore. */
  store?: WindowStore | LegacyWindowStore;
  /** true: a failing store lets requests through (logged). Default false: 503 problem. */
  passOnStoreError?: boolean;
  /** Misconfiguration checks: true, false or `{ checkName: boolean }`. Default true. */
  validate?: boolean | Record<string, boolean>;
  /** Where validation errors and store failures are reported. Default: the console. */
  logger?: RateLimitLogger;
}

/** The option names; any of them (defined) selects express-rate-limit's behaviour. */
export const PACKAGE_KEYS: readonly string[] = [
  'windowMs', 'limit', 'max', 'message', 'statusCode', 'legacyHeaders', 'headers', 'standardHeaders', 'identifier',
  'requestPropertyName', 'skipFailedRequests', 'skipSuccessfulRequests', 'requestWasSuccessful', 'keyGenerator',
  'ipv6Subnet', 'handler', 'skip', 'store', 'passOnStoreError', 'validate', 'logger',
];

/** The completed settings of one limiter. */
export interface WindowConfig {
  windowMs: number;
  limit: number | ValueDeterminingMiddleware<number>;
  message: unknown;
  statusCode: number;
  legacyHeaders: boolean;
  /** false, or the draft to write (an unknown name is kept: express-rate-limit then writes none and warns). */
  standardHeaders: false | string;
  identifier: string | ValueDeterminingMiddleware<string> | undefined;
  requestPropertyName: string;
  skipFailedRequests: boolean;
  skipSuccessfulRequests: boolean;
  requestWasSuccessful: ValueDeterminingMiddleware<boolean>;
  keyGenerator: ValueDeterminingMiddleware<string> | undefined;
  ipv6Subnet: number | false | ValueDeterminingMiddleware<number>;
  /** The user's handler; undefined means keel's 429 problem unless `packageAnswer`. */
  handler: RateLimitPackageOptions['handler'];
  /** message, handler or statusCode was given: refuse as express-rate-limit does, not with a problem. */
  packageAnswer: boolean;
  skip: ValueDeterminingMiddleware<boolean> | undefined;
  store: WindowStore;
  passOnStoreError: boolean;
  logger: RateLimitLogger;
  validations: Validations;
  /** What the store's `init` and the handler receive (express-rate-limit's `Options`). */
  view: Readonly<Record<string, unknown>>;
}

const WHERE = 'rateLimit(express-rate-limit options)';

/** Complete express-rate-limit options; `defaultStore` is the store when `store` is not given. */
export function parseWindowOptions(passed: Record<string, unknown>, defaultStore?: WindowStore): WindowConfig {
  // undefined is the same as absent (express-rate-limit's rule), so defaults still apply.
  const o: Record<string, unknown> = Object.fromEntries(Object.entries(passed).filter(([, v]) => v !== undefined));
  const bad = (key: string, expected: string, fix?: string): never => fail('RateLimitConfig', WHERE, key, o[key], expected, fix);
  const fn = (key: string): void => void (o[key] !== undefined && typeof o[key] !== 'function' && bad(key, 'a function'));
  const bool = (key: string): void => void (o[key] !== undefined && typeof o[key] !== 'boolean' && bad(key, 'true or false'));

  const logger = (o.logger ?? CONSOLE_LOGGER) as RateLimitLogger;
  if (typeof logger !== 'object' || logger === null || typeof logger.error !== 'function' || typeof logger.warn !== 'function') {
    // A TypeError, as express-rate-limit throws for it (code that catches it keeps working), worded as keel's ConfigErrors.
    throw new TypeError(`Invalid RateLimitConfig at ${WHERE}.logger: expected an object with error(…) and warn(…) functions (express-rate-limit's Logger), got ${typeof logger === 'object' ? JSON.stringify(logger) : String(logger)}. Pass { error, warn }, e.g. console.`);
  }
  const validate = o.validate ?? true;
  if (typeof validate !== 'boolean' && (typeof validate !== 'object' || validate === null)) bad('validate', 'true, false or { checkName: boolean }');
  const validations = getValidations(validate as boolean | Record<string, boolean>, logger);
  validations.knownOptions(o);
  validations.draftPolliHeaders(o.draft_polli_ratelimit_headers);
  validations.onLimitReached(o.onLimitReached);

  if (o.limit !== undefined && o.max !== undefined) bad('max', 'only one of limit and max', 'max is the older name of limit: keep limit.');
  const limitKey = o.max !== undefined ? 'max' : 'limit';
  const limit = o[limitKey] ?? PACKAGE_DEFAULT_LIMIT;
  if (typeof limit !== 'function' && !(Number.isInteger(limit) && (limit as number) >= 0)) {
    bad(limitKey, 'an integer >= 0 (0 refuses every request) or a function (req, res) => number');
  }
  const windowMs = o.windowMs ?? PACKAGE_DEFAULT_WINDOW_MS;
  if (typeof windowMs !== 'number' || !Number.isFinite(windowMs) || windowMs <= 0) bad('windowMs', 'a number of milliseconds > 0');
  const statusCode = o.statusCode ?? PACKAGE_DEFAULT_STATUS;
  // RFC 9110 §15: a status code is three digits, 100–599.
  if (!Number.isInteger(statusCode) || (statusCode as number) < 100 || (statusCode as number) > 599) bad('statusCode', 'an HTTP status code from 100 to 599');
  for (const key of ['keyGenerator', 'skip', 'handler', 'requestWasSuccessful']) fn(key);
  for (const key of ['legacyHeaders', 'headers', 'skipFailedRequests', 'skipSuccessfulRequests', 'passOnStoreError']) bool(key);
  if (o.identifier !== undefined && typeof o.identifier !== 'string' && typeof o.identifier !== 'function') bad('identifier', 'a string or a function (req, res) => string');
  const property = o.requestPropertyName ?? PACKAGE_DEFAULT_REQUEST_PROPERTY;
  if (typeof property !== 'string' || property === '') bad('requestPropertyName', 'a non-empty string');
  const subnet = o.ipv6Subnet ?? 56;
  if (subnet !== false && typeof subnet !== 'number' && typeof subnet !== 'function') bad('ipv6Subnet', 'a prefix length (32–64), false or a function');
  // A number outside 32–64 is express-rate-limit's warning (ERR_ERL_IPV6_SUBNET), not an error.
  if (o.ipv6Subnet !== undefined && typeof o.ipv6Subnet !== 'function') validations.ipv6Subnet(o.ipv6Subnet);
  validations.keyGeneratorIpFallback(o.keyGenerator);
  validations.ipv6SubnetOrKeyGenerator(o);

  let standardHeaders = (o.standardHeaders ?? false) as boolean | string;
  if (standardHeaders === true) standardHeaders = 'draft-6';
  if (typeof standardHeaders !== 'string' && standardHeaders !== false) bad('standardHeaders', "'draft-6', 'draft-7', 'draft-8', true or false");

  const given = (o.store ?? defaultStore ?? new FixedWindowMemoryStore()) as WindowStore | LegacyWindowStore;
  if (typeof given !== 'object' || given === null) bad('store', "an express-rate-limit Store (an object with increment, decrement and resetKey)");
  const store = promisifyStore(given);
  const s = store as unknown as Record<string, unknown>;
  if (typeof s.increment !== 'function' || typeof s.decrement !== 'function' || typeof s.resetKey !== 'function'
    || (s.resetAll !== undefined && typeof s.resetAll !== 'function') || (s.init !== undefined && typeof s.init !== 'function')) {
    fail('RateLimitConfig', WHERE, 'store', given, "an express-rate-limit Store: increment(key), decrement(key) and resetKey(key) functions (init, get, resetAll optional)",
      'Pass a store that implements the Store interface (rate-limit-redis, rate-limit-memcached, keel\'s RedisStore or FixedWindowMemoryStore).');
  }

  const config: WindowConfig = {
    windowMs: windowMs as number,
    limit: limit as WindowConfig['limit'],
    message: o.message ?? PACKAGE_DEFAULT_MESSAGE,
    statusCode: statusCode as number,
    legacyHeaders: (o.legacyHeaders ?? o.headers ?? true) as boolean,
    standardHeaders,
    identifier: o.identifier as WindowConfig['identifier'],
    requestPropertyName: property as string,
    skipFailedRequests: (o.skipFailedRequests ?? false) as boolean,
    skipSuccessfulRequests: (o.skipSuccessfulRequests ?? false) as boolean,
    requestWasSuccessful: (o.requestWasSuccessful ?? ((_req: KeelRequest, res: ServerResponse) => res.statusCode < 400)) as ValueDeterminingMiddleware<boolean>,
    keyGenerator: o.keyGenerator as WindowConfig['keyGenerator'],
    ipv6Subnet: subnet as WindowConfig['ipv6Subnet'],
    handler: o.handler as WindowConfig['handler'],
    packageAnswer: o.message !== undefined || o.handler !== undefined || o.statusCode !== undefined,
    skip: o.skip as WindowConfig['skip'],
    store,
    passOnStoreError: (o.passOnStoreError ?? false) as boolean,
    logger,
    validations,
    view: {},
  };
  // The settings in effect, as express-rate-limit hands them to store.init and handler (options
  // keel does not know, such as the pre-6.x `headers`, pass through as they came).
  config.view = {
    ...o, windowMs: config.windowMs, limit: config.limit, message: config.message, statusCode: config.statusCode,
    legacyHeaders: config.legacyHeaders, standardHeaders: config.standardHeaders, requestPropertyName: config.requestPropertyName,
    skipFailedRequests: config.skipFailedRequests, skipSuccessfulRequests: config.skipSuccessfulRequests,
    requestWasSuccessful: config.requestWasSuccessful, ipv6Subnet: config.ipv6Subnet, store, passOnStoreError: config.passOnStoreError,
    logger, validate: validations.enabled,
  };
  return config;
}
