/**
 * The RequestData a handler receives, built lazily.
 *
 * Most handlers read one or two fields. Flattening every header, parsing the Cookie header and
 * the query string up front cost more than a whole hello-world response, so those fields are
 * accessors that compute on first read and cache (Fastify's Request does the same for headers).
 * Every field stays writable: hooks replace `query`, `headers` or `state` as before.
 */
import type { RequestData } from './handler.js';
import type { UploadFile } from '../http/multipart.js';
import { parseCookies, parseQuery } from '../http/query.js';
import { flattenHeaders, type KeelRequest } from '../http/request.js';

export class LazyRequestData implements RequestData {
  method: string;
  pathParams: Record<string, unknown>;
  body: unknown = undefined;
  rawBody: Buffer | null = null;
  files: Record<string, UploadFile | UploadFile[]> = {};
  validatedParams: RequestData['validatedParams'] = null;
  requestId: string | undefined;
  auth: Record<string, unknown> | undefined;
  background?: RequestData['background'];

  readonly #req: KeelRequest;
  readonly #search: string;
  /** spec (wants_headers / wants_cookies): when false, requests without a body get `{}`. */
  readonly #collectHeaders: boolean;
  readonly #collectCookies: boolean;
  #path: string | undefined;
  #query: Record<string, unknown> | undefined;
  #headers: Record<string, string> | undefined;
  #cookies: Record<string, string> | undefined;

  constructor(req: KeelRequest, pathParams: Record<string, unknown>, search: string, collectHeaders: boolean, collectCookies: boolean) {
    this.#req = req;
    this.#search = search;
    this.#collectHeaders = collectHeaders;
    this.#collectCookies = collectCookies;
    this.method = req.method ?? 'GET';
    this.pathParams = pathParams;
    this.requestId = req.requestId;
    this.auth = req.auth;
  }

  get path(): string {
    if (this.#path === undefined) {
      const url = this.#req.url ?? '/';
      const q = url.indexOf('?');
      this.#path = q < 0 ? url : url.slice(0, q);
    }
    return this.#path;
  }
  set path(v: string) {
    this.#path = v;
  }

  get query(): Record<string, unknown> {
    return (this.#query ??= parseQuery(this.#search));
  }
  set query(v: Record<string, unknown>) {
    this.#query = v;
  }

  get headers(): Record<string, string> {
    return (this.#headers ??= this.#collectHeaders ? flattenHeaders(this.#req.headers) : {});
  }
  set headers(v: Record<string, string>) {
    this.#headers = v;
  }

  get cookies(): Record<string, string> {
    return (this.#cookies ??= this.#collectCookies ? parseCookies(this.#req.headers.cookie) : {});
  }
  set cookies(v: Record<string, string>) {
    this.#cookies = v;
  }

  /** Shared with hooks and middleware through `req.state`. */
  get state(): Record<string, unknown> {
    return (this.#req.state ??= {});
  }
  set state(v: Record<string, unknown>) {
    this.#req.state = v;
  }

  /** Accessors live on the prototype: list them for JSON.stringify and loggers. */
  toJSON(): Omit<RequestData, 'background'> {
    return {
      method: this.method, path: this.path, pathParams: this.pathParams, query: this.query, headers: this.headers, cookies: this.cookies,
      body: this.body, rawBody: this.rawBody, files: this.files, validatedParams: this.validatedParams, requestId: this.requestId, auth: this.auth,
      state: this.state,
    };
  }
}
