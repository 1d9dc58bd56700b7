/**
 * express-rate-limit's misconfiguration checks (its `validate` option), with the same codes and help
 * links, so logs and `validate: { <name>: false }` settings carry over.
 *
 * Each check runs at most once per limiter and reports through the limiter's `logger` rather than
 * throwing: most of them look at live requests (an undefined `req.ip`, a permissive `trust proxy`), where
 * throwing would take the application down for a warning. Options keel can check when the factory runs
 * with no doubt (wrong types, impossible values) are ConfigErrors instead (package-options.ts).
 */
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { SUPPORTED_DRAFT_VERSIONS } from './window-headers.js';
import type { WindowStore } from './window-store.js';

/** express-rate-limit's `Logger`: where validation errors and store failures are reported. */
export interface RateLimitLogger {
  error(error: unknown, message?: string): void;
  warn(error: unknown, message?: string): void;
}

/** Reports to the console, message first (as express-rate-limit's ConsoleLogger). */
export const CONSOLE_LOGGER: RateLimitLogger = {
  error: (...args: unknown[]) => console.error(...args.reverse()),
  warn: (...args: unknown[]) => console.warn(...args.reverse()),
};

/** A misconfiguration found by a check; `code` is express-rate-limit's (`ERR_ERL_…`). */
export class ValidationError extends Error {
  readonly code: string;
  readonly help: string;
  constructor(code: string, message: string) {
    const help = `https://express-rate-limit.github.io/${code}/`;
    super(`${message} See ${help} for more information.`);
    this.name = new.target.name;
    this.code = code;
    this.help = help;
  }
}

/** A behaviour change between major versions (`WRN_ERL_…`), reported with `logger.warn`. */
export class ChangeWarning extends ValidationError {}

type Req = IncomingMessage & { ip?: string; app?: { get?(name: string): unknown } };

/** Stores already given to a limiter: one store per limiter, or two limiters count into one key. */
const usedStores = new WeakSet<object>();
/** Keys counted for each request, per store (or per store class for shared stores). */
const countedKeys = new WeakMap<object, Map<unknown, string[]>>();

const trustProxyOf = (req: Req): unknown => (typeof req.app?.get === 'function' ? req.app.get('trust proxy') : undefined);

const CHECKS = {
  ip(ip: unknown): void {
    if (ip === undefined) {
      throw new ValidationError('ERR_ERL_UNDEFINED_IP_ADDRESS', "An undefined 'request.ip' was detected. This might indicate a misconfiguration or the connection being destroyed prematurely.");
    }
    if (typeof ip !== 'string' || !isIP(ip)) {
      throw new ValidationError('ERR_ERL_INVALID_IP_ADDRESS', `An invalid 'request.ip' (${String(ip)}) was detected. Consider passing a custom 'keyGenerator' function to the rate limiter.`);
    }
  },
  trustProxy(req: Req): void {
    if (trustProxyOf(req) === true) {
      throw new ValidationError('ERR_ERL_PERMISSIVE_TRUST_PROXY', "The Express 'trust proxy' setting is true, which allows anyone to trivially bypass IP-based rate limiting.");
    }
  },
  xForwardedForHeader(req: Req): void {
    if (req.headers?.['x-forwarded-for'] && trustProxyOf(req) === false) {
      throw new ValidationError('ERR_ERL_UNEXPECTED_X_FORWARDED_FOR', "The 'X-Forwarded-For' header is set but the Express 'trust proxy' setting is false (default). This could indicate a misconfiguration which would prevent express-rate-limit from accurately identifying users.");
    }
  },
  forwardedHeader(req: Req): void {
    if (req.headers?.forwarded && req.ip === req.socket?.remoteAddress) {
      throw new ValidationError('ERR_ERL_FORWARDED_HEADER', "The 'Forwarded' header (standardized X-Forwarded-For) is set but currently being ignored. Add a custom keyGenerator to use a value from this header.");
    }
  },
  positiveHits(hits: unknown): void {
    if (typeof hits !== 'number' || hits < 1 || hits !== Math.round(hits)) {
      throw new ValidationError('ERR_ERL_INVALID_HITS', `The totalHits value returned from the store must be a positive integer, got ${String(hits)}`);
    }
  },
  unsharedStore(store: WindowStore): void {
    if (usedStores.has(store)) {
      const prefix = store.localKeys ? '' : ' (with a unique prefix)';
      throw new ValidationError('ERR_ERL_STORE_REUSE', `A Store instance must not be shared across multiple rate limiters. Create a new instance of ${store.constructor.name}${prefix} for each limiter instead.`);
    }
    usedStores.add(store);
  },
  singleCount(req: object, store: WindowStore, key: string): void {
    let perStore = countedKeys.get(req);
    if (!perStore) countedKeys.set(req, (perStore = new Map()));
    // A shared store (Redis…) is the same keyspace in every instance of its class.
    const storeKey = store.localKeys ? store : store.constructor.name;
    let keys = perStore.get(storeKey);
    if (!keys) perStore.set(storeKey, (keys = []));
    const prefixed = `${store.prefix ?? ''}${key}`;
    if (keys.includes(prefixed)) {
      throw new ValidationError('ERR_ERL_DOUBLE_COUNT', `The hit count for ${key} was incremented more than once for a single request.`);
    }
    keys.push(prefixed);
  },
  limit(limit: number): void {
    if (limit === 0) {
      throw new ChangeWarning('WRN_ERL_MAX_ZERO', 'Setting limit or max to 0 disables rate limiting in express-rate-limit v6 and older, but will cause all requests to be blocked in v7');
    }
  },
  draftPolliHeaders(value: unknown): void {
    if (value) {
      throw new ChangeWarning('WRN_ERL_DEPRECATED_DRAFT_POLLI_HEADERS', "The draft_polli_ratelimit_headers configuration option is deprecated and has been removed in express-rate-limit v7, please set standardHeaders: 'draft-6' instead.");
    }
  },
  onLimitReached(value: unknown): void {
    if (value) throw new ChangeWarning('WRN_ERL_DEPRECATED_ON_LIMIT_REACHED', 'The onLimitReached configuration option is deprecated and has been removed in express-rate-limit v7.');
  },
  headersDraftVersion(version: unknown): void {
    if (typeof version !== 'string' || !(SUPPORTED_DRAFT_VERSIONS as readonly string[]).includes(version)) {
      throw new ValidationError('ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION', `standardHeaders: only the following versions of the IETF draft specification are supported: ${SUPPORTED_DRAFT_VERSIONS.join(', ')}.`);
    }
  },
  headersResetTime(resetTime: unknown): void {
    if (!resetTime) {
      throw new ValidationError('ERR_ERL_HEADERS_NO_RESET', "standardHeaders:  'draft-7' requires a 'resetTime', but the store did not provide one. The 'windowMs' value will be used instead, which may cause clients to wait longer than necessary.");
    }
  },
  knownOptions(options: object): void {
    for (const key of Object.keys(options)) {
      if (!KNOWN_OPTIONS.includes(key)) throw new ValidationError('ERR_ERL_UNKNOWN_OPTION', `Unexpected configuration option: ${key}`);
    }
  },
  creationStack(store: WindowStore): void {
    const { stack } = new Error('express-rate-limit validation check (set options.validate.creationStack=false to disable)');
    // Express 4 and 5 frames: a limiter created while answering a request gets a new store each time.
    if (stack?.includes('Layer.handle [as handle_request]') || stack?.includes('Layer.handleRequest')) {
      const usually = store.localKeys ? '' : ' *usually*';
      throw new ValidationError('ERR_ERL_CREATED_IN_REQUEST_HANDLER', `express-rate-limit instance should${usually} be created at app initialization, not when responding to a request.`);
    }
  },
  ipv6Subnet(subnet: unknown): void {
    if (subnet === false) return;
    if (!Number.isInteger(subnet) || (subnet as number) < 32 || (subnet as number) > 64) {
      throw new ValidationError('ERR_ERL_IPV6_SUBNET', `Unexpected ipv6Subnet value: ${String(subnet)}. Expected an integer between 32 and 64 (usually 48-64).`);
    }
  },
  ipv6SubnetOrKeyGenerator(options: Record<string, unknown>): void {
    if (options.ipv6Subnet !== undefined && options.keyGenerator) {
      throw new ValidationError('ERR_ERL_IPV6SUBNET_OR_KEYGENERATOR', "Incompatible options: the 'ipv6Subnet' option is ignored when a custom 'keyGenerator' function is also set.");
    }
  },
  keyGeneratorIpFallback(keyGenerator: unknown): void {
    if (typeof keyGenerator !== 'function') return;
    const src = keyGenerator.toString();
    if ((src.includes('req.ip') || src.includes('request.ip')) && !src.includes('ipKeyGenerator')) {
      throw new ValidationError('ERR_ERL_KEY_GEN_IPV6', 'Custom keyGenerator appears to use request IP without calling the ipKeyGenerator helper function for IPv6 addresses. This could allow IPv6 users to bypass limits.');
    }
  },
  windowMs(windowMs: unknown): void {
    const max = 2 ** 31 - 1;
    if (typeof windowMs !== 'number' || Number.isNaN(windowMs) || windowMs < 1 || windowMs > max) {
      throw new ValidationError('ERR_ERL_WINDOW_MS', `Invalid windowMs value: ${String(windowMs)}, must be a number between 1 and ${max} when using the default MemoryStore`);
    }
  },
};

/** express-rate-limit's options (the known-options check warns about any other key). */
export const KNOWN_OPTIONS: readonly string[] = [
  'windowMs', 'limit', 'message', 'statusCode', 'legacyHeaders', 'standardHeaders', 'identifier', 'requestPropertyName',
  'skipFailedRequests', 'skipSuccessfulRequests', 'keyGenerator', 'ipv6Subnet', 'handler', 'skip', 'requestWasSuccessful',
  'store', 'validate', 'headers', 'max', 'passOnStoreError', 'logger',
  // Gone or belonging to express-slow-down, which shares option objects: checked elsewhere or harmless.
  'draft_polli_ratelimit_headers', 'delayAfter', 'delayMs', 'maxDelayMs', 'onLimitReached',
];

/** The names `validate: { … }` accepts. */
export const VALIDATION_NAMES: readonly string[] = [...Object.keys(CHECKS), 'validationsConfig', 'default'];

export type Validations = { [K in keyof typeof CHECKS]: (...args: Parameters<(typeof CHECKS)[K]>) => void } & {
  /** Which checks are still to run (false once a check has run, or when turned off). */
  readonly enabled: Record<string, boolean>;
};

/**
 * The checks for one limiter: `validate` is true / false (all on / off) or `{ name: boolean, default }`.
 * A check's failure goes to `logger.error` (`logger.warn` for a ChangeWarning), once.
 */
export function getValidations(validate: boolean | Record<string, boolean>, logger: RateLimitLogger): Validations {
  const enabled: Record<string, boolean> = typeof validate === 'boolean' ? { default: validate } : { default: true, ...validate };
  const out = { enabled } as Validations & Record<string, unknown>;
  for (const [name, check] of Object.entries(CHECKS)) {
    out[name] = (...args: unknown[]): void => {
      if (!(enabled[name] ?? enabled.default)) return;
      enabled[name] = false;
      try {
        (check as (...a: unknown[]) => void)(...args);
      } catch (error) {
        if (error instanceof ChangeWarning) logger.warn(error);
        else logger.error(error);
      }
    };
  }
  // An unknown name in `validate` is most likely a typo that leaves a check on.
  for (const key of Object.keys(enabled)) {
    if (!VALIDATION_NAMES.includes(key)) {
      logger.error(new ValidationError('ERR_ERL_UNKNOWN_VALIDATION', `options.validate.${key} is not recognized. Supported validate options are: ${VALIDATION_NAMES.join(', ')}.`));
      break;
    }
  }
  return out;
}
