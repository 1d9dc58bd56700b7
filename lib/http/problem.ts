/**
 * RFC 9457 problem details: the one error path every client-visible error takes.
 *
 * Middleware calls `sendProblem(res, …)` itself (rather than `next(err)`) so that the same
 * function renders problem+json under plain Express, whose default error handler would send HTML.
 */
import { ServerResponse } from 'node:http';
import { recordRequestError } from '../observability/spans.js';
import { HttpError, KeelError, ERROR_CODES, problemType, statusTitle, type ErrorCode } from './errors.js';
import { problemJson, problemJsonByteLength, standardProblemJson } from './problem-json.js';
import { setTypeAndLength } from './fixed-headers.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const nativeWriteHead = ServerResponse.prototype.writeHead;

/** RFC 9457 §3: the standard members plus flattened extension members. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  [extension: string]: unknown;
}

/** Build a problem object; `type` defaults to `about:blank` (RFC 9457 §4.2.1). */
export function problem(
  status: number,
  detail?: string,
  options: { title?: string; type?: string; instance?: string; extensions?: Record<string, unknown> } = {},
): ProblemDetails {
  const p: ProblemDetails = {
    type: options.type ?? 'about:blank',
    title: options.title ?? statusTitle(status),
    status,
  };
  if (detail !== undefined) p.detail = detail;
  if (options.instance !== undefined) p.instance = options.instance;
  const extensions = options.extensions;
  if (extensions) {
    // Own enumerable keys in Object.entries' order, without the array of pairs (most problems have none).
    for (const k in extensions) {
      // Extensions never overwrite the standard members (RFC 9457 §3.2).
      if (Object.hasOwn(extensions, k) && !(k in p) && k !== 'detail' && k !== 'instance') p[k] = extensions[k];
    }
  }
  return p;
}

/** A problem for one of keel's request error codes. */
export function problemFor(code: ErrorCode, detail?: string, extensions?: Record<string, unknown>): ProblemDetails {
  const info: { status: number; title: string; detail?: string } = ERROR_CODES[code];
  return problem(info.status, detail ?? info.detail, { title: info.title, type: problemType(code), extensions });
}

/**
 * Map any thrown value to a problem. Unknown errors, and any value whose status is not 4xx/5xx,
 * become a bare 500: no message, no stack, nothing internal reaches the client.
 */
export function toProblem(err: unknown): { problem: ProblemDetails; headers: Record<string, string> } {
  if (err instanceof HttpError && isErrorStatus(err.status)) {
    return {
      problem: problem(err.status, err.detail, { title: err.title, type: err.type, instance: err.instance, extensions: err.extensions as Record<string, unknown> }),
      headers: err.headers as Record<string, string>,
    };
  }
  if (err instanceof KeelError && err.errorClass === 'graphql') {
    const status = err.status === 200 ? 500 : err.status;
    const expose = status < 500;
    return { problem: problemFor(err.code, expose ? err.message : undefined), headers: {} };
  }
  // body-parser style errors carry a client status we can trust (4xx) but messages we do not repeat verbatim.
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown; message?: unknown };
  const status = typeof e?.status === 'number' ? e.status : typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (isErrorStatus(status) && status < 500) {
    return { problem: problem(status, e.expose && typeof e.message === 'string' ? e.message : undefined), headers: {} };
  }
  return { problem: problemFor('KEEL_INTERNAL'), headers: {} };
}

/** True when `o` has no own enumerable member. */
function noMembers(o: object): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return false;
  return true;
}

/** Serialise a problem; `status` on the wire is the real HTTP status. */
export function sendProblem(res: ServerResponse, input: ProblemDetails | unknown, extraHeaders?: Record<string, string>): void {
  let p: ProblemDetails | undefined;
  let headers: Record<string, string>;
  // A problem object first: a plain object costs no call of HttpError's own instanceof (KeelError's Symbol.hasInstance).
  if (isProblem(input)) {
    p = input;
    headers = {};
  } else if (input instanceof HttpError && isErrorStatus(input.status) && noMembers(input.extensions)) {
    // Its problem (toProblem) would hold the standard members only: written from the error's own, below.
    headers = input.headers as Record<string, string>;
  } else ({ problem: p, headers } = toProblem(input));
  const status = p === undefined ? (input as HttpError).status : p.status;
  // A server error: its exception on the request's spans, when spans are on (the client sees only the problem).
  if (status >= 500) recordRequestError(res.req, input, p === undefined ? ((input as HttpError).detail ?? (input as HttpError).title) : (p.detail ?? p.title));
  if (res.headersSent) {
    // Too late for a status line: end the response so the client is not left waiting.
    if (!res.writableEnded) res.end();
    return;
  }
  // JSON.stringify's bytes: from a head made once per problem type, or compiled (lib/http/problem-json.ts).
  let body: string | undefined;
  if (p === undefined) {
    const e = input as HttpError;
    body = standardProblemJson(e.type, e.title, e.status, e.detail, e.instance);
    body ??= problemJson(toProblem(e).problem);
  } else body = problemJson(p);
  for (const k in headers) res.setHeader(k, headers[k]!);
  if (extraHeaders) for (const k in extraHeaders) res.setHeader(k, extraHeaders[k]!);
  const length = String(problemJsonByteLength(body));
  // Type and length go into node's header map as checked headers (lib/http/fixed-headers.ts) and
  // writeHead(status) writes the map: a header list given to writeHead() is checked pair by pair, two
  // regular expressions per header, as lib/app/respond.ts writes answers. Headers set earlier are kept;
  // a wrapped writeHead (compression decides at end()) gets the headers and the status, and end() writes the head.
  setTypeAndLength(res, PROBLEM_CONTENT_TYPE, length);
  if (res.writeHead === nativeWriteHead) res.writeHead(status);
  else res.statusCode = status;
  res.end(res.req?.method === 'HEAD' ? undefined : body);
}

/**
 * An error answer is a client error or a server error (RFC 9110 §15.5, §15.6). A thrown value that
 * claims any other status (`{status: 200}`, `{status: 302}`, `new HttpError(99)`) is a bug in the code
 * that threw it, not an answer: it becomes a bare 500, never a success or a redirect.
 */
export function isErrorStatus(status: unknown): status is number {
  return Number.isInteger(status) && (status as number) >= 400 && (status as number) <= 599;
}

function isProblem(v: unknown): v is ProblemDetails {
  return typeof v === 'object' && v !== null && !(v instanceof Error) && isErrorStatus((v as ProblemDetails).status) && typeof (v as ProblemDetails).title === 'string';
}
