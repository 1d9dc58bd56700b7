/**
 * The handler contract (spec: Handler contract) and the Response value handlers return.
 */
import type { Readable } from 'node:stream';
import { HttpError } from '../http/errors.js';
import type { KeelRequest } from '../http/request.js';
import type { UploadFile } from '../http/multipart.js';

/** A cookie to set on the response (RFC 6265 §4.1). */
export interface ResponseCookie {
  name: string;
  value: string;
  maxAge?: number;
  expires?: Date;
  path?: string;
  domain?: string;
  secure?: boolean;
  httpOnly?: boolean;
  sameSite?: 'Strict' | 'Lax' | 'None';
}

export type ResponseContent = unknown;

/** Type-only brands of a KeelResponse: the status and body a typed route checks (lib/app/typed-route.ts). */
declare const statusBrand: unique symbol;
declare const bodyBrand: unique symbol;

/**
 * A handler's response (spec: Response): `content` (JSON value, string, bytes or a stream),
 * `status_code` (default 200), `headers`. Mutable until written, so on_response hooks can adjust it.
 *
 * `Status` and `Body` exist only in the types: `response(body, { status: 201 })` returns a
 * `KeelResponse<201, typeof body>`, which a route's `responses: { 201: schema }` checks at compile
 * time. A response built without literals (`new KeelResponse(...)`) is `KeelResponse<number, unknown>`.
 */
export class KeelResponse<Status extends number = number, Body = unknown> {
  content: ResponseContent;
  status_code: number;
  headers: Record<string, string>;
  cookies: ResponseCookie[];
  /** Type-only: the status this response was built with (never set at run time). */
  declare readonly [statusBrand]?: Status;
  /** Type-only: the body this response was built with (never set at run time). */
  declare readonly [bodyBrand]?: Body;
  constructor(content: ResponseContent = null, statusCode = 200, headers: Record<string, string> = {}, cookies: ResponseCookie[] = []) {
    if (!Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599) {
      throw new TypeError(`Response status_code must be an integer from 100 to 599, got ${String(statusCode)}`);
    }
    this.content = content;
    this.status_code = statusCode;
    this.headers = { ...headers };
    this.cookies = [...cookies];
  }
}

/** The options of `response()`: the status (a literal picks the route's schema for it), headers, cookies. */
export interface ResponseOptions<Status extends number = number> {
  status?: Status;
  headers?: Record<string, string>;
  cookies?: ResponseCookie[];
}

/**
 * Type-only: the body a typed route allows for `Status`, read from the outcome the call's context
 * expects (`Outcome`, inferred from the handler's return type): the schema of that status, so a wrong
 * or missing member is reported at the member or at the `response(...)` argument, in a block-bodied
 * handler too (the compiler checks such a handler's returns only as a whole, at its first line).
 * `unknown` outside a typed route.
 */
type ExpectedBody<Outcome, Status extends number> = unknown extends Outcome ? unknown : OrUndeclared<BodyIn<Outcome, Status>, Status>;
/** A status the route's `responses` do not list: named in the compiler's message. */
export interface StatusNotInResponses<Status extends number> { readonly 'this status is not in the route\'s responses': Status }
type OrUndeclared<B, Status extends number> = [B] extends [never] ? StatusNotInResponses<Status> : B;
/** The argument's type: the expected body inside a typed route, the body as written elsewhere. */
type CheckedBody<Body, Expected> = unknown extends Expected ? Body : Expected;
type BodyIn<Outcome, Status extends number> = Outcome extends KeelResponse<infer S, infer B> ? ([Status] extends [S] ? B : never) : never;

/**
 * Build a Response. `response({ ok: true }, { status: 201, headers: { Location: '/x' } })`.
 *
 * Generic over the status literal and the body, so a route with `responses: { 201: schema }` checks
 * the body against the 201 schema at compile time (and refuses a status it does not list). The status
 * comes from `options.status` only (200 without it), never from what the route would accept.
 *
 * @example
 * app.post('/notes', (d) => response({ id: 1, title: d.body.title }, { status: 201 }), { body, responses: { 201: note } });
 */
export function response<const Body = null, const Status extends number = 200, Outcome = unknown>(
  content?: CheckedBody<Body, NoInfer<ExpectedBody<Outcome, Status>>>, options?: ResponseOptions<Status>,
): KeelResponse<NoInfer<Status>, Body> & Outcome;
export function response(content: ResponseContent = null, options: ResponseOptions = {}): KeelResponse {
  return new KeelResponse(content, options.status ?? 200, options.headers ?? {}, options.cookies ?? []);
}

/** A streamed body: any Readable or (async) iterable of strings / bytes. */
export type StreamContent = Readable | AsyncIterable<string | Uint8Array>;

/** Opaque result of a handler (spec: HandlerResult). */
export class HandlerResult {
  readonly #response: KeelResponse;
  private constructor(r: KeelResponse) {
    this.#response = r;
  }
  /** @internal */
  static from(r: KeelResponse): HandlerResult {
    return new HandlerResult(r);
  }
  /** @internal */
  unwrap(): KeelResponse {
    return this.#response;
  }
}

/** spec: handler_result_from_response(outcome). */
export function handlerResultFromResponse(r: KeelResponse | { content?: unknown; status_code?: number; headers?: Record<string, string> }): HandlerResult {
  return HandlerResult.from(r instanceof KeelResponse ? r : new KeelResponse(r.content ?? null, r.status_code ?? 200, r.headers ?? {}));
}

/**
 * A handler error: an HTTP status code plus a message (rendered as problem details). A client error
 * (4xx) is an answer, not a fault: it is never logged, so no stack is captured for it (capturing one
 * was the largest cost of a 404 answer, bench `problem`); a 5xx keeps its stack for the error log.
 */
export function handlerError(status: number, message: string): HttpError {
  if (status >= 500) return new HttpError(status, message);
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new HttpError(status, message);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Extracted request data given to handlers (spec: raw_body, body, headers, cookies, validated_params).
 * The type parameters are filled from the route (path pattern and schemas) by `app.get/post/.../route`;
 * see lib/app/typed-route.ts.
 */
export interface RequestData<
  PathParams = Record<string, unknown>,
  Query = Record<string, unknown>,
  Headers = Record<string, string>,
  Cookies = Record<string, string>,
  Body = unknown,
  Auth = Record<string, unknown> | undefined,
> {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Path parameters (coerced to their schema types after validation). */
  pathParams: PathParams;
  /** Query parameters; repeated keys become arrays. Coerced after validation. */
  query: Query;
  /** Lower-case header names. Empty when the handler says it does not want them. */
  headers: Headers;
  cookies: Cookies;
  /** Parsed body: JSON value, urlencoded / multipart fields, or undefined. */
  body: Body;
  rawBody: Buffer | null;
  /** Multipart files by field name (arrays when a field repeats). */
  files: Record<string, UploadFile | UploadFile[]>;
  /** Validated and coerced path/query/header/cookie values, or null when the handler extracts itself. */
  validatedParams: { path: Record<string, unknown>; query: Record<string, unknown>; headers: Record<string, unknown>; cookies: Record<string, unknown> } | null;
  requestId: string | undefined;
  /**
   * Verified JWT claims, when a JWT requirement passed. On a typed route, typed from `jwt_auth.claims`
   * and never `undefined` where the route requires a JWT (lib/app/typed-route.ts).
   */
  auth: Auth;
  /** Per-request scratch space shared by hooks and the handler. */
  state: Record<string, unknown>;
  /**
   * Enqueue background work (present when the background executor is enabled): a closure (in-process
   * executor only) or a job registered with `app.job(name, fn)` and its JSON payload. A durable
   * executor (BullMQ) returns a promise: `await` it so a refusal (503) reaches the client.
   */
  background?: BackgroundApi;
}

/** `data.background` (docs/protocols.md, docs/scaling.md). */
export interface BackgroundApi {
  enqueue(task: (signal: AbortSignal) => unknown, metadata?: { name?: string; request_id?: string | null }): void | Promise<void>;
  enqueue(name: string, payload?: unknown, metadata?: { name?: string; request_id?: string | null }): void | Promise<void>;
}

export type HandlerOutcome = KeelResponse | HandlerResult | HttpError | unknown;

/** The spec's handler contract. Only `call` is required; every flag defaults as documented. */
export interface Handler {
  call(request: KeelRequest, data: RequestData): HandlerOutcome | Promise<HandlerOutcome>;
  /** Default false. When true and the route has no body schema, the body is not JSON-parsed. */
  prefersRawJsonBody?(): boolean;
  /** Default false. When true, keel skips its own path/query/header/cookie validation. */
  prefersParameterExtraction?(): boolean;
  /** Default true. When false, headers are not collected for requests without a body. */
  wantsHeaders?(): boolean;
  /** Default true. When false, cookies are not parsed for requests without a body. */
  wantsCookies?(): boolean;
  /** Default true. When false, the request data is not stored on the request (`req.keel`). */
  wantsRequestExtensions?(): boolean;
  /** A pre-built response served directly, bypassing the pipeline. */
  staticResponse?(): KeelResponse | null | undefined;
}

export type HandlerFunction = (data: RequestData, request: KeelRequest) => HandlerOutcome | Promise<HandlerOutcome>;

export interface HandlerFlags {
  prefersRawJsonBody?: boolean;
  prefersParameterExtraction?: boolean;
  wantsHeaders?: boolean;
  wantsCookies?: boolean;
  wantsRequestExtensions?: boolean;
  staticResponse?: KeelResponse;
}

/**
 * spec: into_handler(). Wraps a plain (async) function as a Handler.
 *
 * @example
 * const h = intoHandler(async (data) => ({ hello: data.query.name }), { wantsCookies: false });
 */
export function intoHandler(fn: HandlerFunction, flags: HandlerFlags = {}): Handler {
  if (typeof fn !== 'function') throw new TypeError('intoHandler expects a function (data, request) => response');
  return {
    call: (request, data) => fn(data, request),
    prefersRawJsonBody: () => flags.prefersRawJsonBody ?? false,
    prefersParameterExtraction: () => flags.prefersParameterExtraction ?? false,
    wantsHeaders: () => flags.wantsHeaders ?? true,
    wantsCookies: () => flags.wantsCookies ?? true,
    wantsRequestExtensions: () => flags.wantsRequestExtensions ?? true,
    staticResponse: () => flags.staticResponse ?? null,
  };
}

/** Handler flags with their defaults, read once at build time. */
export function handlerFlags(h: Handler): Required<Omit<HandlerFlags, 'staticResponse'>> & { staticResponse: KeelResponse | null } {
  return {
    prefersRawJsonBody: h.prefersRawJsonBody?.() ?? false,
    prefersParameterExtraction: h.prefersParameterExtraction?.() ?? false,
    wantsHeaders: h.wantsHeaders?.() ?? true,
    wantsCookies: h.wantsCookies?.() ?? true,
    wantsRequestExtensions: h.wantsRequestExtensions?.() ?? true,
    staticResponse: h.staticResponse?.() ?? null,
  };
}

/** Whether a handler, hook or method returned a promise (or any thenable) rather than a value. */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function';
}

/** Normalise whatever a handler returned (or threw as HttpError) into a KeelResponse or an error. */
export function toResponse(outcome: HandlerOutcome): KeelResponse | Error {
  if (outcome instanceof KeelResponse) return outcome;
  if (outcome instanceof HandlerResult) return outcome.unwrap();
  if (outcome instanceof Error) return outcome;
  return new KeelResponse(outcome === undefined ? null : outcome, outcome === undefined ? 204 : 200);
}
