/**
 * Request timeout: answer 408 when the handler has not started its response in time.
 *
 * RFC 9110 §15.5.9 describes 408 as the server giving up on the request, and says the server
 * SHOULD close the connection (`Connection: close`): the client may still be sending a body, and the
 * handler may still write. Everything the handler writes after the 408 is discarded: the response
 * methods become no-ops on this one response, so a late `res.json()` neither throws
 * ERR_HTTP_HEADERS_SENT nor corrupts the next response on a kept-alive socket.
 *
 * Once the handler has sent its status line (a streaming response), it has answered: the timer only
 * guards the time to first byte, never the length of a stream.
 */
import type { ServerResponse } from 'node:http';
import { defineRecord, t, type InputOf } from '../../lib/records/define.js';
import { problemFor, type ProblemDetails } from '../../lib/http/problem.js';
import { rejecter, takeOnReject, type OnRejectOption, type Rejecter } from '../../lib/http/reject.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';

export { DEFAULT_ON_REJECT } from '../../lib/http/reject.js';

/**
 * Options: `request_timeout` (ServerConfig's key), snake_case or camelCase. Seconds, an integer >= 1;
 * `null` means no timeout (the spec's default) and the factory returns a pass-through. The key is required
 * (type generated from the record below). `onReject`: see lib/http/reject.ts.
 */
export type TimeoutOptions = InputOf<typeof TimeoutRecord> & OnRejectOption;

/** The spec's default: no request timeout (null). */
export const DEFAULT_REQUEST_TIMEOUT: number | null = null;

const TimeoutRecord = defineRecord<{ request_timeout: number | null }>()('TimeoutOptions', {
  request_timeout: { type: t.integer(1), nullable: true, required: true, doc: 'Request timeout, seconds; null = none' },
});

/** Response methods that would write or change headers after the 408. */
const WRITERS = ['writeHead', 'write', 'end', 'setHeader', 'appendHeader', 'removeHeader', 'setHeaders', 'flushHeaders', 'writeContinue', 'writeProcessing', 'writeEarlyHints', 'addTrailers'] as const;

/** Turn the handler's late output into no-ops. `write`/`end` still call their callbacks. */
function silence(res: ServerResponse): void {
  const target = res as unknown as Record<string, unknown>;
  for (const name of WRITERS) {
    if (typeof target[name] !== 'function') continue;
    target[name] = function discarded(this: ServerResponse, ...args: unknown[]) {
      const cb = args.find((a) => typeof a === 'function') as (() => void) | undefined;
      if (cb && (name === 'write' || name === 'end')) queueMicrotask(cb);
      // write() reports "no back-pressure" so a late stream does not wait forever for 'drain'.
      return name === 'write' ? true : this;
    };
  }
}

interface Deadline {
  readonly seconds: number;
  readonly problem: ProblemDetails;
  readonly reject: Rejecter;
}

const CLOSE = Object.freeze({ Connection: 'close' });

function onTimeout(req: KeelRequest & { timedout?: boolean }, res: ServerResponse, deadline: Deadline, next: NextFunction): void {
  if (res.headersSent || res.writableEnded) return;
  // connect-timeout's flag: a handler that finishes late can test it and skip its answer.
  req.timedout = true;
  // Whatever of the request body is still unread is not needed any more.
  if (!req.readableEnded) req.resume();
  deadline.reject.refuse(req, res, next, deadline.problem, CLOSE);
  // Under 'next' (or a handler) the error handler writes the answer; what it wrote synchronously is
  // out, and the late handler's output is discarded from then on. An error handler that answers
  // asynchronously races the late handler (as with connect-timeout): test `req.timedout` there.
  if (res.headersSent || res.writableEnded) silence(res);
}

/**
 * Answer 408 (problem details, `Connection: close`) when the handler has not begun its response
 * within `request_timeout` seconds.
 *
 * @example
 * import express from 'express';
 * import { timeout } from 'keel/middleware/timeout';
 *
 * const app = express();
 * app.use(timeout({ request_timeout: 30 }));
 * app.get('/slow', async (_req, res) => {
 *   await new Promise((r) => setTimeout(r, 60_000));
 *   res.json({ late: true }); // discarded: the client already has its 408
 * });
 * app.listen(8000);
 *
 * With `onReject: 'next'` the 408 is handed to `next(err)` (an HttpError with `Connection: close`
 * in its headers) when the timer fires, and `req.timedout` is set, as connect-timeout does.
 */
export function timeout(options: TimeoutOptions): Middleware {
  const { onReject, rest } = takeOnReject(options, 'TimeoutOptions');
  const seconds = TimeoutRecord.parse(rest, 'TimeoutOptions').request_timeout;
  if (seconds === null) {
    return function timeoutDisabled(_req: KeelRequest, _res: ServerResponse, next: NextFunction): void {
      next();
    };
  }
  const ms = seconds * 1000;
  const deadline: Deadline = Object.freeze({
    seconds,
    problem: Object.freeze(problemFor('KEEL_REQUEST_TIMEOUT', `The server did not answer within ${seconds} second${seconds === 1 ? '' : 's'}`, { timeout: seconds })),
    reject: rejecter(onReject),
  });

  // Every deadline of this instance is `ms` after its request arrived, so deadlines expire in arrival
  // order: one queue and one (unref'd) timer per instance instead of a timer per request. Node keeps a
  // timer list per duration, and a lone request's clearTimeout() empties it, so a timer per request
  // paid for a list and a priority-queue entry made and dropped each time.
  const queue: (Pending | undefined)[] = [];
  let head = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = (delay: number): void => {
    timer = setTimeout(expire, delay);
    timer.unref();
  };
  function expire(): void {
    timer = undefined;
    const now = performance.now();
    while (head < queue.length) {
      const p = queue[head]!;
      if (p.res !== null && p.at > now) {
        arm(Math.max(1, Math.ceil(p.at - now)));
        break;
      }
      queue[head++] = undefined;
      if (p.res !== null) {
        const { req, res, next } = p;
        release(p);
        onTimeout(req!, res, deadline, next!);
      }
    }
    compact();
  }
  /** Drop settled entries at the front (requests answer roughly in arrival order), so the queue stays short. */
  function compact(): void {
    while (head < queue.length && queue[head]!.res === null) queue[head++] = undefined;
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
    } else if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
  }
  // Under this instance's own key (two instances on one response each keep theirs).
  const kPending = Symbol('keel.timeout.pending');
  type TimedResponse = ServerResponse & { [kPending]?: Pending };
  // A response emits 'close' once it is done, whether it finished (node emits it right after
  // 'finish') or the connection went away first: one listener covers both. The entry lets go of the
  // request's objects at once; the queue drops it when it reaches the front.
  function settle(this: TimedResponse): void {
    const p = this[kPending];
    if (p !== undefined) release(p);
    this[kPending] = undefined;
  }

  return function timeout(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    const p: Pending = { at: performance.now() + ms, req, res, next };
    (res as TimedResponse)[kPending] = p;
    res.on('close', settle);
    if (head < queue.length && queue[head]!.res === null) compact();
    queue.push(p);
    if (timer === undefined) arm(ms);
    next();
  };
}

/** One request's deadline in an instance's queue; `res` null once the response is done (or timed out). */
interface Pending {
  readonly at: number;
  req: KeelRequest | null;
  res: ServerResponse | null;
  next: NextFunction | null;
}

function release(p: Pending): void {
  p.req = null;
  p.res = null;
  p.next = null;
}
