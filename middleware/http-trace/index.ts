/**
 * Per-request HTTP tracing: one structured pino record per request and W3C Trace Context propagation.
 *
 * Written on pino directly rather than pino-http: keel needs one fixed, small record (method, route
 * pattern, status, duration, request id, trace and span ids) and the traceparent logic, not
 * pino-http's serialised req/res objects.
 */
import type { ServerResponse } from 'node:http';
import { pino, type Level, type LevelWithSilent, type Logger } from 'pino';
import { fail } from '../../lib/records/define.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';
import { DEFAULT_NEW_TRACE_FLAGS, formatTraceparent, newSpanId, newTraceId, parseTraceparent } from './traceparent.js';
import { parseTracestate } from './tracestate.js';

export { parseTraceparent, formatTraceparent, newTraceId, newSpanId, type TraceParent } from './traceparent.js';
export { parseTracestate, TRACESTATE_MAX_MEMBERS, TRACESTATE_MAX_LENGTH } from './tracestate.js';

export interface HttpTraceOptions {
  /** A pino logger. Default: a pino logger at {@link DEFAULT_HTTP_TRACE_LEVEL} (`info`) writing to stdout. */
  logger?: Logger;
  /** Level of the default logger (ignored when `logger` is given). Default {@link DEFAULT_HTTP_TRACE_LEVEL}. */
  level?: LevelWithSilent;
  /** Set `traceparent` (and the caller's `tracestate`) on the response. Default {@link DEFAULT_TRACE_RESPONSE_HEADER} (true). */
  responseHeader?: boolean;
}

/** Level of the default logger: info. */
export const DEFAULT_HTTP_TRACE_LEVEL: Level = 'info';
/** The response carries the request's `traceparent`: true. */
export const DEFAULT_TRACE_RESPONSE_HEADER = true;
/** Message of every trace record. */
export const HTTP_TRACE_MESSAGE = 'request completed';

const LEVELS: readonly LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** One record per request, as logged. */
export interface HttpTraceRecord {
  method: string;
  /** The matched route pattern (keel's `req.routePattern`, Express's `req.baseUrl + req.route.path`); null when unknown. */
  route: string | null;
  /** Path without the query string (queries may carry secrets). */
  path: string;
  status: number;
  duration_ms: number;
  request_id: string | null;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  /** True when the client went away before the response was complete. */
  aborted: boolean;
}

type TracedRequest = KeelRequest & { routePattern?: string; route?: { path?: unknown }; baseUrl?: string };

function routeOf(req: TracedRequest): string | null {
  if (typeof req.routePattern === 'string') return req.routePattern;
  if (req.route && typeof req.route.path === 'string') return `${req.baseUrl ?? ''}${req.route.path}`;
  return null;
}

/**
 * Trace every request: continue the caller's W3C trace (`traceparent`, version 00) with a new span
 * id, or start a new trace when the header is absent or invalid; expose it as `req.traceContext`
 * and on the response's `traceparent`; a valid `tracestate` of a continued trace travels with it
 * (`req.traceContext.tracestate`, and the response) unchanged, and is dropped with an invalid
 * `traceparent` (W3C Trace Context §3.3); log one record when the response ends (5xx at `error`, 4xx
 * and aborted requests at `warn`, the rest at `info`).
 *
 * @example
 * import express from 'express';
 * import { pino } from 'pino';
 * import { httpTrace } from 'keel/middleware/http-trace';
 * const app = express();
 * app.use(httpTrace({ logger: pino() }));
 * app.get('/users/:id', (req, res) => res.json({ trace: (req as any).traceContext.traceId }));
 */
export function httpTrace(options: HttpTraceOptions = {}): Middleware {
  if (options.logger !== undefined && (typeof options.logger !== 'object' || typeof options.logger.info !== 'function')) {
    fail('HttpTraceOptions', 'HttpTraceOptions', 'logger', options.logger, 'a pino logger');
  }
  if (options.level !== undefined && !LEVELS.includes(options.level)) {
    fail('HttpTraceOptions', 'HttpTraceOptions', 'level', options.level, `one of ${LEVELS.join(', ')}`);
  }
  if (options.responseHeader !== undefined && typeof options.responseHeader !== 'boolean') {
    fail('HttpTraceOptions', 'HttpTraceOptions', 'responseHeader', options.responseHeader, 'true or false');
  }
  const logger = options.logger ?? pino({ level: options.level ?? DEFAULT_HTTP_TRACE_LEVEL });
  const responseHeader = options.responseHeader ?? DEFAULT_TRACE_RESPONSE_HEADER;
  // Every pino logger has isLevelEnabled; a look-alike without it gets every record.
  const levelEnabled = typeof logger.isLevelEnabled === 'function' ? (level: Level) => logger.isLevelEnabled(level) : () => true;

  return function httpTraceMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    const started = process.hrtime.bigint();
    const parent = parseTraceparent(req.headers.traceparent);
    // With ServerConfig.opentelemetry on, keel's OTel span (lib/observability/tracing.ts) is this request's
    // span: log and answer its ids, so the record and the response point at the exported span.
    const otel = (req as { keelSpan?: { traceId: string; spanId: string } }).keelSpan;
    const traceId = otel?.traceId ?? parent?.traceId ?? newTraceId();
    const spanId = otel?.spanId ?? newSpanId();
    const flags = parent?.flags ?? DEFAULT_NEW_TRACE_FLAGS;
    // tracestate belongs to the caller's trace: without a valid traceparent it is not parsed (§3.3).
    const tracestate = parent && req.headers.tracestate !== undefined ? parseTracestate(req.headers.tracestate) : undefined;
    req.traceContext = parent
      ? tracestate === undefined
        ? { traceId, spanId, parentSpanId: parent.parentId, flags }
        : { traceId, spanId, parentSpanId: parent.parentId, flags, tracestate }
      : { traceId, spanId, flags };
    if (responseHeader) {
      res.setHeader('traceparent', formatTraceparent(traceId, spanId, flags));
      if (tracestate !== undefined) res.setHeader('tracestate', tracestate);
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = (req as { originalUrl?: string }).originalUrl?.split('?')[0] ?? (q === -1 ? url : url.slice(0, q));

    // 'close' fires once per response, after 'finish' when it completed, alone when the client left
    // (so on(), not once() and its wrapper).
    res.on('close', () => {
      const aborted = !res.writableFinished;
      const level: Level = res.statusCode >= 500 ? 'error' : res.statusCode >= 400 || aborted ? 'warn' : 'info';
      // A level the logger drops (info in production) needs no record.
      if (!levelEnabled(level)) return;
      const requestId = req.requestId ?? res.getHeader('x-request-id');
      const record: HttpTraceRecord = {
        method: req.method ?? 'GET',
        route: routeOf(req as TracedRequest),
        path,
        status: res.statusCode,
        duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
        request_id: typeof requestId === 'string' ? requestId : null,
        trace_id: traceId,
        span_id: spanId,
        parent_span_id: parent?.parentId ?? null,
        aborted,
      };
      logger[level](record, HTTP_TRACE_MESSAGE);
    });
    next();
  };
}
