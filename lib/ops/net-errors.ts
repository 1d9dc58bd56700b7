/**
 * Expected network errors: the client went away (EPIPE, ECONNRESET, a stream closed before its end).
 * They are part of serving the open internet, not failures of the server, so keel never logs them at
 * warn/error with a stack: one debug line, and under a storm (a GraphQL subscription client that
 * hangs up while 1,000 `next` frames are queued wrote 2,658 stack traces, issue 26) at most one line
 * per interval with a count (ThrottledLog, as for the background queue's refusals).
 */
import type { Logger } from 'pino';
import { ThrottledLog } from './throttled-log.js';

/** Network errors logged at most once per this many ms, with a count: 1000. */
export const DEFAULT_NETWORK_ERROR_LOG_INTERVAL_MS = 1000;

/** Codes of errors that only mean "the peer is gone". */
const EXPECTED_CODES: ReadonlySet<string> = new Set([
  'EPIPE',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
  'ERR_HTTP2_STREAM_CANCEL',
  'ERR_HTTP2_INVALID_STREAM',
]);

/** Whether `err` only says the client left (or its connection broke): nothing to fix on the server. */
export function isExpectedNetworkError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && EXPECTED_CODES.has(code)) return true;
  // ws reports a send on a closing socket as a plain Error: "WebSocket is not open: readyState 2 (CLOSING)".
  return err instanceof Error && /^WebSocket is not open/.test(err.message);
}

/**
 * Log expected network errors of one kind (`where`: 'graphql-ws', 'websocket', 'http', …) at debug,
 * without a stack: the first at once, then one line per `intervalMs` with the count since the last.
 */
export class NetworkErrorLog {
  readonly #logger: Pick<Logger, 'debug'>;
  readonly #line: ThrottledLine;
  /** Keyed by where and code; one interval for all of them (a storm of mixed codes is one storm). */
  readonly #log: ThrottledLog<string>;

  /**
   * `line` turns the same throttling to other events that can come in storms (a client over its
   * connection budget, lib/server/client-budget.ts): its level, message and fields. Default: debug, 'client connection lost'.
   */
  constructor(logger: Pick<Logger, 'debug'>, intervalMs = DEFAULT_NETWORK_ERROR_LOG_INTERVAL_MS, line: ThrottledLine = LOST_LINE) {
    this.#logger = logger;
    this.#line = line;
    this.#log = new ThrottledLog<string>({
      intervalMs,
      first: (key) => this.#write(key, 1),
      interval: (counts, ms) => { for (const [key, { count }] of counts) this.#write(key, count, ms); },
    });
  }

  /** Record one expected error. */
  note(where: string, err: unknown): void {
    this.#log.note(`${where}\u0000${codeOf(err)}`, undefined);
  }

  #write(key: string, count: number, intervalMs?: number): void {
    const [where, code] = key.split('\u0000') as [string, string];
    try {
      const { level, message, fields } = this.#line;
      (this.#logger as Pick<Logger, 'debug' | 'warn'>)[level]({ where, code, count, ...(intervalMs ? { interval_ms: intervalMs } : {}), ...fields }, message);
    } catch {
      // A failing logger must not turn a lost client into a crash.
    }
  }
}

/** What one throttled line says: its level, message and extra fields. */
export interface ThrottledLine {
  level: 'debug' | 'warn';
  message: string;
  fields?: Readonly<Record<string, unknown>>;
}
const LOST_LINE: ThrottledLine = { level: 'debug', message: 'client connection lost' };

function codeOf(err: unknown): string {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : 'closed';
}

const logs = new WeakMap<object, NetworkErrorLog>();

/** The one NetworkErrorLog of `logger` (shared by every part of an App that logs to it). */
export function networkErrorLog(logger: Pick<Logger, 'debug'>): NetworkErrorLog {
  let log = logs.get(logger);
  if (!log) logs.set(logger, (log = new NetworkErrorLog(logger)));
  return log;
}
