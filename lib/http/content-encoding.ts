/**
 * Request bodies sent with a content coding (RFC 9110 §8.4): `gzip` (and its alias `x-gzip`, §8.4.1.3),
 * `deflate` (zlib format, §8.4.1.2) and `br` (RFC 7932) are decoded with node:zlib, as Express's
 * body-parser does. The cap counts the *decoded* bytes: a gzip bomb (10 MB of zeros in 10 KB) is cut off
 * with a 413 as soon as its output passes the limit, after at most one zlib chunk past it. The bytes on
 * the wire count against the same cap, which bounds the work a body of empty blocks can cause.
 * Any other coding, and codings stacked on one another (`gzip, br`), get a 415 that lists the accepted
 * ones in Accept-Encoding (RFC 9110 §15.5.16, §12.5.3): stacked layers would each need their own bound,
 * and no client we know sends them.
 */
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Transform } from 'node:stream';
import { HttpError } from './errors.js';
import type { KeelRequest } from './request.js';

/** The request content codings keel decodes, as listed in the 415's Accept-Encoding. */
export const ACCEPTED_CONTENT_CODINGS = ['gzip', 'deflate', 'br'] as const;
const ACCEPT_ENCODING = ACCEPTED_CONTENT_CODINGS.join(', ');

const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

function unsupported(detail: string): HttpError {
  return new HttpError(415, detail, { code: 'KEEL_UNSUPPORTED_CONTENT_ENCODING', headers: { 'Accept-Encoding': ACCEPT_ENCODING }, extensions: { accepted: [...ACCEPTED_CONTENT_CODINGS] } });
}

/**
 * The one coding a Content-Encoding header names (lower-cased), null for none or `identity`, or the
 * 415 HttpError for an unknown or stacked coding.
 */
export function requestCoding(header: string): string | null | HttpError {
  const codings = header.toLowerCase().split(',').map((c) => c.trim()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return null;
  if (codings.length > 1) return unsupported(`Stacked content codings (${codings.join(', ')}) are not supported; send the body with one of ${ACCEPT_ENCODING}`);
  const coding = codings[0]!;
  if (!Object.hasOwn(DECODERS, coding)) return unsupported(`Content-Encoding ${JSON.stringify(coding)} is not supported; send the body with one of ${ACCEPT_ENCODING}, or none`);
  return coding;
}

/**
 * Read `req`'s body through the decoder for `coding`, under `limit` decoded (and wire) bytes:
 * `done(null, decoded)` or `done(HttpError)` once (413 over the cap, 400 for a corrupt stream or an
 * aborted request). `onRefused` is called when reading stops early, to dispose of the rest of the body.
 */
export function readDecodedBody(
  req: KeelRequest,
  coding: string,
  limit: number | null,
  onRefused: () => void,
  done: (err: unknown, body?: Buffer) => void,
): void {
  const decoder = DECODERS[coding]!();
  const chunks: Buffer[] = [];
  let size = 0;
  let wire = 0;
  let finished = false;
  const finish = (err?: unknown) => {
    if (finished) return;
    finished = true;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    req.off('aborted', onAborted);
    if (err) {
      decoder.destroy();
      return done(err);
    }
    done(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  };
  const refuse = (err: HttpError) => {
    finish(err);
    onRefused();
  };
  const onData = (chunk: Buffer) => {
    wire += chunk.length;
    if (limit !== null && wire > limit) return refuse(tooLarge(limit, coding));
    decoder.write(chunk);
  };
  const onEnd = () => decoder.end();
  const onError = (err: Error) => finish(new HttpError(400, 'Request body could not be read', { cause: err }));
  const onAborted = () => finish(new HttpError(400, 'Client aborted the request body'));
  decoder.on('data', (out: Buffer) => {
    if (finished) return;
    size += out.length;
    if (limit !== null && size > limit) return refuse(tooLarge(limit, coding));
    chunks.push(out);
  });
  decoder.on('end', () => finish());
  decoder.on('error', (err: Error) => {
    if (finished) return;
    refuse(new HttpError(400, `Request body is not valid ${coding} data: ${err.message}`, { cause: err }));
  });
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('aborted', onAborted);
}

function tooLarge(limit: number, coding: string): HttpError {
  return new HttpError(413, `Request body exceeds the limit of ${limit} bytes once decoded (${coding})`, { extensions: { limit } });
}
