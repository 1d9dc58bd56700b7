/**
 * Reading a request body once, under a size cap.
 *
 * Declared Content-Length is checked before a byte is read; chunked bodies are counted as they
 * arrive. On overflow we stop buffering but keep draining (up to a bound) so the client can read
 * our 413 instead of seeing a reset connection (RFC 9110 §15.5.14).
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from './errors.js';
import { problemFor, type ProblemDetails } from './problem.js';
import type { KeelRequest } from './request.js';
import { readDecodedBody, requestCoding } from './content-encoding.js';

/** After a 413, how many more bytes we swallow before closing the connection. */
export const DRAIN_LIMIT = 1024 * 1024;

/** The 413 problem for a body over `limit` bytes (`got`: the declared size, when known). */
export function payloadTooLarge(limit: number, got?: number): HttpError {
  return new HttpError(413, tooLargeDetail(limit, got), { extensions: { limit } });
}

/**
 * The 413 problem payloadTooLarge(limit, declared) answers with, when the request's Content-Length (digits
 * only) already exceeds `limit`; undefined otherwise. For a caller that answers it where no code sees an
 * error (lib/app/pipeline/read.ts: no on_error hooks), so no Error is built: its constructor is most of
 * what a refused body costs (issue 48).
 */
export function declaredTooLarge(req: IncomingMessage, limit: number | null): ProblemDetails | undefined {
  const header = req.headers['content-length'];
  if (limit === null || header === undefined || !/^\d+$/.test(header)) return undefined;
  const declared = Number(header);
  if (declared <= limit) return undefined;
  return problemFor('KEEL_PAYLOAD_TOO_LARGE', tooLargeDetail(limit, declared), { limit });
}

const tooLargeDetail = (limit: number, got?: number): string =>
  got !== undefined ? `Request body of ${got} bytes exceeds the limit of ${limit} bytes` : `Request body exceeds the limit of ${limit} bytes`;

/** A 413 error for a request whose Content-Length already exceeds the cap; undefined otherwise. */
export function checkDeclaredLength(req: IncomingMessage, limit: number | null): HttpError | undefined {
  const header = req.headers['content-length'];
  if (header === undefined) return undefined;
  if (!/^\d+$/.test(header)) return new HttpError(400, `Invalid Content-Length header: ${JSON.stringify(header)}`);
  const declared = Number(header);
  if (limit !== null && declared > limit) return payloadTooLarge(limit, declared);
  return undefined;
}

/**
 * RFC 9112 §6.3: an HTTP/1.1 request has a body only when it carries Content-Length (not 0) or Transfer-Encoding.
 * HTTP/2 has no Transfer-Encoding and Content-Length is optional (RFC 9113 §8.1): a request has a body unless
 * it says Content-Length 0 or its HEADERS frame ended the stream (node's compatibility request: `stream.endAfterHeaders`).
 */
export function hasRequestBody(req: IncomingMessage): boolean {
  const cl = req.headers['content-length'];
  if (req.httpVersionMajor === 2 && cl === undefined) return (req as { stream?: { endAfterHeaders?: boolean } }).stream?.endAfterHeaders === false;
  return (cl !== undefined && cl !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** Consume and discard what is left of a rejected body, then let the connection go on or close. */
export function drain(req: IncomingMessage): void {
  if (req.readableEnded || req.destroyed) return;
  let seen = 0;
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DRAIN_LIMIT) req.socket?.destroy();
  });
  req.resume();
}

/**
 * Read the whole body into a Buffer (cached on `req.rawBody`, so a second call returns the same bytes).
 * Rejects with HttpError 413 over `limit` (null = unlimited) and 400 when the client aborts. A body
 * sent with Content-Encoding gzip, deflate or br is decoded, and its decoded size counts; other
 * codings are a 415 (lib/http/content-encoding.ts).
 */
export function readRawBody(req: KeelRequest, limit: number | null): Promise<Buffer> {
  if (req.rawBody) return Promise.resolve(req.rawBody);
  return new Promise((resolve, reject) => readRawBodyThen(req, limit, (err, body) => (err ? reject(err) : resolve(body!))));
}

/**
 * readRawBody with a callback: `done(err)` or `done(null, body)`, called once. Without a promise in
 * between, a mounted handler (JSON-RPC, GraphQL) runs in the tick the last chunk arrives.
 */
export function readRawBodyThen(req: KeelRequest, limit: number | null, done: (err: unknown, body?: Buffer) => void): void {
  if (req.rawBody) return done(null, req.rawBody);
  const declaredError = checkDeclaredLength(req, limit);
  if (declaredError) {
    drain(req);
    return done(declaredError);
  }
  if (req.readableEnded) {
    req.rawBody = Buffer.alloc(0);
    return done(null, req.rawBody);
  }
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined) {
    // gzip / deflate / br are decoded under the same cap (lib/http/content-encoding.ts); others are a 415.
    const coding = requestCoding(encoding);
    if (coding instanceof HttpError) {
      drain(req);
      return done(coding);
    }
    if (coding !== null) {
      return readDecodedBody(req, coding, limit, () => drain(req), (err, body) => {
        if (err) return done(err);
        req.rawBody = body!;
        done(null, body);
      });
    }
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (err?: unknown) => {
    if (finished) return;
    finished = true;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    req.off('aborted', onAborted);
    if (err) return done(err);
    req.rawBody = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    done(null, req.rawBody);
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (limit !== null && size > limit) {
      finish(payloadTooLarge(limit));
      drain(req);
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = () => finish();
  const onError = (err: Error) => finish(new HttpError(400, 'Request body could not be read', { cause: err }));
  const onAborted = () => finish(new HttpError(400, 'Client aborted the request body'));
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('aborted', onAborted);
}
