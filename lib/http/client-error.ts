/**
 * A client error (4xx) as `handlerError()` returns it, built without running Error's constructor.
 *
 * A handler that answers "not found" by returning `handlerError(404, …)` made an HttpError per request,
 * and V8's Error constructor alone (the message, the stack accessor, even with no frames captured) was
 * ~4,500 instructions of the ~66k a 404 problem cost (issue 48: the `problem` row, 1.09× Fastify's).
 * The object made here reads the same as the constructor's: `instanceof HttpError` / `KeelError` /
 * `Error`, `constructor` HttpError, the getters, the same enumerable own members in the same order with
 * the same values (so JSON, pino's error serialiser, util.inspect and the problem are the same), and
 * `message` and `stack` read and write as on the real one (`stack` is the one line of a 4xx HttpError,
 * `HttpError: <message>`, formatted when first read, as V8 does). Reflection tells it apart: `message`
 * and `stack` are accessors on a prototype between it and HttpError.prototype, not own properties;
 * `util.types.isNativeError()` is false; `Object.prototype.toString` gives `[object Object]`;
 * structuredClone() keeps neither. Server errors (5xx), whose stack is logged, are real HttpErrors.
 */
import { ERROR_CODES, HttpError, codeForStatus, problemType, statusTitle } from './errors.js';

/** `name: message` as V8 writes an error's first stack line (ErrorUtils::ToString). */
function header(name: unknown, message: unknown): string {
  const n = name === undefined ? 'Error' : String(name);
  const m = message === undefined ? '' : String(message);
  return n === '' ? m : m === '' ? n : `${n}: ${m}`;
}

/**
 * The 4xx HttpError's shape. `message` and `stack` are accessors over private fields: an own
 * non-enumerable property costs a runtime call each (Object.defineProperty, ~2,400 instructions, the same
 * as Error's constructor spends on them), an assignment to a private field a few dozen.
 */
class ClientHttpError {
  #message: string;
  #stack: unknown;
  #stackRead = false;
  constructor(status: number, message: string) {
    const code = codeForStatus(status);
    const info = ERROR_CODES[code];
    const own = info.status === status;
    this.#message = message;
    const e = this as unknown as Record<string, unknown>;
    // HttpError's own members, in its order.
    e.code = code;
    e.status = status;
    e.name = 'HttpError';
    e.title = own ? info.title : statusTitle(status);
    e.type = own ? problemType(code) : 'about:blank';
    e.detail = message;
    e.instance = undefined;
    e.extensions = {};
    e.headers = {};
    e.expected = false;
  }
  get message(): string {
    return this.#message;
  }
  set message(value: string) {
    this.#message = value;
  }
  /** Formatted when first read, from the name and message then, as V8 formats an error's stack. */
  get stack(): unknown {
    if (!this.#stackRead) {
      this.#stackRead = true;
      this.#stack = header((this as unknown as { name?: unknown }).name, this.#message);
    }
    return this.#stack;
  }
  set stack(value: unknown) {
    this.#stackRead = true;
    this.#stack = value;
  }
}
Object.setPrototypeOf(ClientHttpError.prototype, HttpError.prototype);
// `err.constructor` is HttpError (pino's error serialiser and util.inspect name the error by it).
Object.defineProperty(ClientHttpError.prototype, 'constructor', { value: HttpError, writable: true, enumerable: false, configurable: true });

let prepared = false;

/**
 * `new HttpError(status, message)` for a 4xx status and a string message, without Error's constructor.
 * The caller checks both (anything else takes the real constructor).
 */
export function clientHttpError(status: number, message: string): HttpError {
  // One real HttpError first: KeelError lists the class names on the prototype with the first one
  // (cross-copy `instanceof`, lib/http/errors.ts).
  if (!prepared) {
    prepared = true;
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      void new HttpError(status, message);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
  return new ClientHttpError(status, message) as unknown as HttpError;
}
