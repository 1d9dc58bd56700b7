/**
 * The per-response side of compression: wraps `res.writeHead` / `write` / `end` so the body goes
 * through zlib when the response qualifies (see index.ts for the rules).
 *
 * The wrappers are module-level functions that find their state (one object per response) on the
 * response instead of closures made for every request: a response that is never compressed (most
 * small API answers) then costs one small object and five properties, not seven closures. Properties
 * are what costs here: Express changes the prototype of every response (`setPrototypeOf(res,
 * app.response)`), after which each new own property is a map transition V8 does not cache (≈ 3.5 µs).
 */
import { ServerResponse, type OutgoingHttpHeaders } from 'node:http';
import type zlib from 'node:zlib';
import type { KeelRequest } from '../../lib/http/request.js';
import type { Coding } from './negotiate.js';
import { getCheckedHeader, setCheckedHeader } from '../../lib/http/fixed-headers.js';

/** What one compression() factory decided at start-up, shared by all its responses. */
export interface CompressionSettings {
  readonly minSize: number;
  readonly syncThreshold: number;
  /** The compression package's filter option; undefined: `compressible(Content-Type)`. */
  readonly filter: ((req: KeelRequest, res: ServerResponse) => boolean) | undefined;
  readonly compressible: (contentType: unknown) => boolean;
  readonly negotiate: (header: string | string[] | undefined) => Coding | null;
  readonly createStream: (coding: Coding, size: number | undefined) => zlib.Gzip | zlib.BrotliCompress;
  readonly compressOnce: (coding: Coding, body: Buffer, cb: (err: Error | null, out: Buffer) => void) => void;
  readonly compressSync: (coding: Coding, body: Buffer) => Buffer;
}

type Chunk = string | Buffer | Uint8Array;
type Callback = (err?: Error | null) => void;
type WriteHead = (this: ServerResponse, statusCode: number, ...rest: unknown[]) => ServerResponse;
type Write = (this: ServerResponse, chunk: Chunk, encoding?: BufferEncoding, cb?: Callback) => boolean;
type End = (this: ServerResponse, chunk?: Chunk | (() => void), encoding?: BufferEncoding, cb?: Callback) => ServerResponse;

/**
 * Each response's state, under a symbol. Not a WeakMap: with one short-lived key per response the
 * garbage collector's work on it cost more (≈ 12 µs per request under Express, measured) than the
 * property itself.
 */
const kState = Symbol('keel.compression.state');
type Wrapped = ServerResponse & { [kState]?: ResponseState; flush?: () => void };

const NO_TRANSFORM = /(?:^|,)\s*no-transform\s*(?:,|$)/i;

/** Append `Accept-Encoding` to Vary unless it is there already or Vary is `*`. */
function addVary(res: ServerResponse): void {
  const current = getCheckedHeader(res, 'vary');
  if (current === undefined) {
    setCheckedHeader(res, 'Vary', 'vary', 'Accept-Encoding');
    return;
  }
  const value = Array.isArray(current) ? current.join(', ') : String(current);
  const tokens = value.split(',').map((s) => s.trim().toLowerCase());
  if (tokens.includes('*') || tokens.includes('accept-encoding')) return;
  res.setHeader('Vary', value.trim() ? `${value}, Accept-Encoding` : 'Accept-Encoding');
}

/** Apply headers passed to writeHead() with setHeader, so the decision sees them. */
function applyHeaderArgument(res: ServerResponse, headers: unknown): void {
  if (Array.isArray(headers)) {
    // Flat raw form [name, value, name, value] or [[name, value], ...].
    const pairs: unknown[][] = Array.isArray(headers[0]) ? (headers as unknown[][]) : [];
    if (!pairs.length) for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([headers[i], headers[i + 1]]);
    for (const [k, v] of pairs) res.setHeader(String(k), v as string);
  } else if (headers && typeof headers === 'object') {
    for (const [k, v] of Object.entries(headers as OutgoingHttpHeaders)) if (v !== undefined) res.setHeader(k, v);
  }
}

function toBuffer(chunk: Chunk, encoding?: BufferEncoding): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : typeof chunk === 'string' ? Buffer.from(chunk, encoding) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/** One response's compression state. */
class ResponseState {
  stream: zlib.Gzip | zlib.BrotliCompress | null = null;
  decided = false;
  ended = false;
  /** Body size when the whole body arrives in one res.end(chunk). */
  endLength: number | undefined = undefined;
  endCallback: (() => void) | undefined = undefined;
  /**
   * Inside a call of the method underneath: node's HTTP/2 compatibility `end(chunk)` writes its chunk
   * through `this.write` (and `this.writeHead`), which are the wrappers; they must pass it through, or
   * the compressed body would be swallowed after Content-Length announced it (NGHTTP2_PROTOCOL_ERROR).
   */
  passThrough = false;

  constructor(
    readonly req: KeelRequest,
    readonly res: ServerResponse,
    public settings: CompressionSettings,
    // node's own methods (or an earlier wrapper's), typed loosely: we forward whatever argument shape the caller used.
    readonly origWriteHead: WriteHead,
    readonly origWrite: Write,
    readonly origEnd: End,
  ) {}

  /** node's end (or an earlier wrapper's) with the wrappers out of the way while it runs. */
  endUnder(data?: Chunk | (() => void), encoding?: BufferEncoding, callback?: Callback | (() => void)): ServerResponse {
    this.passThrough = true;
    try {
      return this.origEnd.call(this.res, data as Chunk, encoding, callback as Callback);
    } finally {
      this.passThrough = false;
    }
  }

  /** Which coding this response gets, or null. Adds Vary to every response that could vary. */
  choose(status: number, size: number | undefined): Coding | null {
    const { res, req, settings } = this;
    if (status < 200 || status === 204) return null;
    if (status === 304) {
      addVary(res);
      return null;
    }
    // Lowercase names read straight from node's header map (lib/http/fixed-headers.ts): this runs for every response.
    const encoding = getCheckedHeader(res, 'content-encoding');
    if (encoding !== undefined && String(encoding).toLowerCase() !== 'identity') return null;
    const cacheControl = getCheckedHeader(res, 'cache-control');
    if (cacheControl !== undefined && NO_TRANSFORM.test(String(cacheControl))) return null;
    if (settings.filter === undefined ? !settings.compressible(getCheckedHeader(res, 'content-type')) : !settings.filter(req, res)) return null;
    addVary(res);
    if (req.method === 'HEAD') return null;
    if (size !== undefined && (size === 0 || size < settings.minSize)) return null;
    return settings.negotiate(req.headers['accept-encoding']);
  }

  /** Headers of an encoded representation. */
  markEncoded(coding: Coding): void {
    const { res } = this;
    res.setHeader('Content-Encoding', coding);
    res.removeHeader('Content-Length');
    // A strong validator names one exact representation (RFC 9110 §8.8.1); the encoded bytes differ.
    const etag = res.getHeader('ETag');
    if (typeof etag === 'string' && etag.startsWith('"')) res.setHeader('ETag', `W/${etag}`);
  }

  /** Route the body through a zlib stream (a body written in pieces, or one too big to compress inline). */
  decide(status: number): void {
    const { res } = this;
    const declared = res.getHeader('Content-Length');
    const size = declared !== undefined ? Number(declared) : this.endLength;
    const coding = this.choose(status, size);
    if (!coding) return;
    const s = (this.stream = this.settings.createStream(coding, size));
    this.markEncoded(coding);
    s.on('data', (chunk: Buffer) => {
      if (this.origWrite.call(res, chunk) === false) s.pause();
    });
    s.on('end', () => {
      this.endUnder(this.endCallback);
    });
    s.on('error', (err) => res.destroy(err));
    // The app writes into the zlib stream, so the 'drain' it waits for is the zlib stream's. The
    // socket's 'drain' (emitted on res by node) only lets the compressed bytes flow again: passed on
    // to the app, it would write while the zlib stream is still full (write() false right after
    // 'drain'). The compression package gets the same effect by moving 'drain' listeners onto its
    // stream; an emit of its own here (only on a streamed response) keeps listeners where the app put them.
    const emit = res.emit;
    s.on('drain', () => emit.call(res, 'drain'));
    res.emit = function emitExceptSocketDrain(this: ServerResponse, event: string | symbol, ...args: unknown[]): boolean {
      if (event !== 'drain') return emit.call(this, event, ...args);
      if (!res.writableNeedDrain) s.resume();
      return false;
    } as typeof res.emit;
    res.once('close', () => {
      if (!s.destroyed) s.destroy();
    });
  }
}

/**
 * Start compression for this response. A second compression() on the same response (an app-wide one
 * and a route's) does not wrap again: the inner, more specific one's settings decide, as they would
 * if it ran its own wrapper first.
 */
export function compressResponse(req: KeelRequest, res: ServerResponse, settings: CompressionSettings): void {
  const wrapped = res as Wrapped;
  const existing = wrapped[kState];
  if (existing !== undefined) {
    existing.settings = settings;
    return;
  }
  const inherited = prototypeWrappers(res);
  if (inherited !== undefined) {
    wrapped[kState] = new ResponseState(req, res, settings, inherited.writeHead, inherited.write, inherited.end);
    return;
  }
  wrapped[kState] = new ResponseState(req, res, settings, res.writeHead as WriteHead, res.write as Write, res.end as End);
  res.writeHead = writeHead as typeof res.writeHead;
  res.write = write as typeof res.write;
  res.end = end as typeof res.end;
  wrapped.flush = flush;
}

/** The methods the prototype wrappers stand in front of (the parent prototype's). */
interface BaseMethods {
  readonly writeHead: WriteHead;
  readonly write: Write;
  readonly end: End;
}
const kBase = Symbol('keel.compression.base');
type PatchedPrototype = Record<PropertyKey, unknown> & { [kBase]?: BaseMethods };

/**
 * Under Express, the wrappers live on the response's prototype (the app's `app.response`, set once),
 * so a request only adds its state: four method properties on every response would cost ≈ 14 µs
 * (see kState). A wrapper on the prototype passes a response without state (one that did not go
 * through compression()) straight to the parent prototype's method. Not used, and own properties
 * are set as before, when the response is a plain node:http one (own properties are cheap there) or
 * when an earlier middleware already put its own writeHead / write / end on it (they would hide
 * the prototype's). Returns the methods to call underneath, or undefined.
 */
function prototypeWrappers(res: ServerResponse): BaseMethods | undefined {
  const proto = Object.getPrototypeOf(res) as PatchedPrototype | null;
  if (proto === null || proto === (ServerResponse.prototype as unknown)) return undefined;
  if (Object.hasOwn(res, 'writeHead') || Object.hasOwn(res, 'write') || Object.hasOwn(res, 'end')) return undefined;
  // Inherited too: a mounted Express sub-app's response prototype inherits from its parent's.
  const found = proto[kBase];
  if (found !== undefined) return found;
  // Underneath: the methods the prototype has now, its own when it defines them (light-my-request's
  // Response, which app.inject() uses, collects the body in its write/end), else inherited ones.
  const parent = proto as unknown as ServerResponse;
  if (typeof parent.writeHead !== 'function' || typeof parent.write !== 'function' || typeof parent.end !== 'function') return undefined;
  const base: BaseMethods = Object.freeze({ writeHead: parent.writeHead as WriteHead, write: parent.write as Write, end: parent.end as End });
  const parentFlush = (parent as Wrapped).flush;
  const define = (name: string, value: unknown) => Object.defineProperty(proto, name, { value, writable: true, configurable: true, enumerable: false });
  define(kBase as unknown as string, base);
  define('writeHead', function writeHeadOrPass(this: Wrapped, statusCode: number, ...rest: unknown[]) {
    return this[kState] === undefined ? base.writeHead.call(this, statusCode, ...rest) : writeHead.call(this, statusCode, ...rest);
  });
  define('write', function writeOrPass(this: Wrapped, ...args: Parameters<typeof write>) {
    return this[kState] === undefined ? (base.write as (...a: unknown[]) => boolean).apply(this, args) : write.apply(this, args);
  });
  define('end', function endOrPass(this: Wrapped, ...args: Parameters<typeof end>) {
    return this[kState] === undefined ? (base.end as (...a: unknown[]) => ServerResponse).apply(this, args) : end.apply(this, args);
  });
  define('flush', function flushOrPass(this: Wrapped) {
    if (this[kState] === undefined) parentFlush?.call(this);
    else flush.call(this);
  });
  return base;
}

function writeHead(this: Wrapped, statusCode: number, ...rest: unknown[]): ServerResponse {
  const st = this[kState]!;
  if (st.passThrough) return st.origWriteHead.call(this, statusCode, ...rest);
  const reason = typeof rest[0] === 'string' ? rest[0] : undefined;
  const headers = typeof rest[0] === 'string' ? rest[1] : rest[0];
  if (!st.decided && !this.headersSent) {
    applyHeaderArgument(this, headers);
    st.decided = true;
    st.decide(statusCode);
    return reason === undefined ? st.origWriteHead.call(this, statusCode) : st.origWriteHead.call(this, statusCode, reason);
  }
  return st.origWriteHead.call(this, statusCode, ...rest);
}

function write(this: Wrapped, chunk: Chunk, encoding?: BufferEncoding | Callback, cb?: Callback): boolean {
  const st = this[kState]!;
  if (st.passThrough) return st.origWrite.call(this, chunk, encoding as BufferEncoding, cb);
  if (st.ended) return false;
  if (!st.decided && !this.headersSent) this.writeHead(this.statusCode);
  const enc = typeof encoding === 'string' ? encoding : undefined;
  const callback = typeof encoding === 'function' ? encoding : cb;
  if (!st.stream) return st.origWrite.call(this, chunk, enc, callback);
  return st.stream.write(toBuffer(chunk, enc), callback);
}

function end(this: Wrapped, chunk?: Chunk | Callback, encoding?: BufferEncoding | Callback, cb?: Callback): ServerResponse {
  const st = this[kState]!;
  if (st.passThrough) return st.origEnd.call(this, chunk as Chunk, encoding as BufferEncoding, cb);
  // The body went to the compressor already: `false`, as the compression package answers (its
  // callers test it); node's own end() would answer `this`.
  if (st.ended) return false as unknown as ServerResponse;
  const callback = typeof chunk === 'function' ? chunk : typeof encoding === 'function' ? encoding : cb;
  const data = typeof chunk === 'function' ? undefined : chunk;
  const enc = typeof encoding === 'string' ? encoding : undefined;
  if (!st.decided && !this.headersSent) {
    const declared = getCheckedHeader(this, 'content-length');
    if (declared === undefined) st.endLength = !data ? 0 : typeof data === 'string' ? Buffer.byteLength(data, enc) : data.byteLength;
    if (data) {
      // The whole body is here (the common case: res.json(), keel's own responses): compress it in
      // one call, no stream. Small bodies inline (see DEFAULT_COMPRESSION_SYNC_THRESHOLD), bigger
      // ones on the thread pool.
      st.decided = true;
      const size = declared !== undefined ? Number(declared) : st.endLength!;
      const coding = st.choose(this.statusCode, size);
      if (!coding) return st.endUnder(data, enc, callback);
      st.ended = true;
      const body = toBuffer(data, enc);
      const { settings } = st;
      if (body.length <= settings.syncThreshold) {
        let out: Buffer;
        try {
          out = settings.compressSync(coding, body);
        } catch (err) {
          this.destroy(err as Error);
          return this;
        }
        st.markEncoded(coding);
        this.setHeader('Content-Length', out.length);
        return st.endUnder(out, undefined, callback);
      }
      settings.compressOnce(coding, body, (err, out) => {
        if (err) return void this.destroy(err);
        if (this.destroyed) return;
        st.markEncoded(coding);
        this.setHeader('Content-Length', out.length);
        st.endUnder(out, undefined, callback);
      });
      return this;
    }
    this.writeHead(this.statusCode);
  }
  if (!st.stream) return st.endUnder(data, enc, callback);
  st.ended = true;
  st.endCallback = callback as (() => void) | undefined;
  if (data !== undefined && data !== null) st.stream.end(toBuffer(data, enc));
  else st.stream.end();
  return this;
}

/** Push what the compressor holds to the client now (streamed JSON lines, long polls). */
function flush(this: Wrapped): void {
  this[kState]?.stream?.flush();
}
