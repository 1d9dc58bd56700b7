/**
 * Request-body size cap: 413 (RFC 9110 §15.5.14) for bodies over `max_body_size`, as problem details.
 *
 * The cap is enforced without taking the body away from whatever parses it next (express.json(),
 * multer, busboy, keel's own body reader):
 * - a declared Content-Length over the cap is rejected before a byte is read; one within the cap
 *   needs no counting at all, because the HTTP parser never delivers more bytes than were declared
 *   (RFC 9112 §6.3), so the body is left in the stream untouched;
 * - a chunked body (no Content-Length) has to be counted: it is read under the cap into
 *   `req.rawBody` and then pushed back into the request stream with `readable.unshift()` before its
 *   'end' event fires, so the next reader sees an unread request (body-parser 2 skips requests whose
 *   stream has ended, which would otherwise leave `req.body` undefined).
 *
 * After a 413 the rest of the body is drained (up to lib/http/body.ts DRAIN_LIMIT) so that a keep-alive
 * client reads the 413 and can send its next request on the same connection; a body declared larger
 * than that bound is answered with `Connection: close`.
 *
 * The cap counts bytes on the wire. A `Content-Encoding: gzip` request body can inflate far beyond
 * it; the parser that decompresses (body-parser's `limit`, keel's reader) must cap the inflated size.
 */
import type { ServerResponse } from 'node:http';
import { DRAIN_LIMIT, checkDeclaredLength, drain, hasRequestBody, payloadTooLarge } from '../../lib/http/body.js';
import { HttpError } from '../../lib/http/errors.js';
import { rejecter, takeOnReject, type OnRejectOption } from '../../lib/http/reject.js';
import { defineRecord, t, type InputOf } from '../../lib/records/define.js';
import { DEFAULT_MAX_BODY_SIZE } from '../../lib/records/server.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';

export { DEFAULT_MAX_BODY_SIZE };

export { DEFAULT_ON_REJECT } from '../../lib/http/reject.js';

/**
 * Options: ServerConfig's `max_body_size`, snake_case or camelCase (type generated from the record below): largest
 * accepted body in bytes, `null` = unlimited. Default {@link DEFAULT_MAX_BODY_SIZE} (10 MiB). Plus `onReject` (lib/http/reject.ts).
 */
export type BodyLimitOptions = InputOf<typeof BodyLimitRecord> & OnRejectOption;

const BodyLimitRecord = defineRecord<{ max_body_size: number | null }>()('BodyLimitOptions', {
  max_body_size: { type: t.integer(0), nullable: true, default: DEFAULT_MAX_BODY_SIZE, doc: 'Maximum request body, bytes; null = unlimited' },
});

/**
 * Read a chunked body under `limit`, then put the bytes back into the stream for the next reader.
 * Resolves with the body, or rejects with an HttpError (413 over the cap, 400 when the client aborts).
 */
export function bufferAndRestore(req: KeelRequest, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('readable', onReadable);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onReadable = () => {
      let chunk: Buffer | null;
      while ((chunk = req.read() as Buffer | null) !== null) {
        size += chunk.length;
        if (size > limit) {
          cleanup();
          drain(req);
          reject(payloadTooLarge(limit));
          return;
        }
        chunks.push(chunk);
      }
      // `complete` is set before the parser pushes the end of the stream, so at this point every byte
      // has been read and 'end' is only scheduled: unshifting now cancels it (see node's endReadableNT).
      if (req.complete) {
        cleanup();
        const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
        if (body.length > 0) req.unshift(body);
        resolve(body);
      }
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new HttpError(400, 'Request body could not be read', { cause: err }));
    };
    const onClose = () => {
      if (req.complete) return;
      cleanup();
      reject(new HttpError(400, 'Client aborted the request body'));
    };
    req.on('readable', onReadable);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * Reject request bodies larger than `max_body_size` with a 413 problem.
 *
 * @example
 * import express from 'express';
 * import { bodyLimit } from 'keel/middleware/body-limit';
 *
 * const app = express();
 * app.use(bodyLimit({ max_body_size: 1024 * 1024 }));
 * // express.json()'s own limit (100 KiB by default) still applies after bodyLimit.
 * app.use(express.json({ limit: '1mb' }));
 * app.post('/items', (req, res) => res.status(201).json(req.body));
 * app.listen(8000);
 *
 * With `onReject: 'next'` the 413 (and the 400 for a bad Content-Length) is handed to `next(err)`
 * as an HttpError (headers included) for the Express error handler after it, e.g. `problemHandler()`.
 */
export function bodyLimit(options: BodyLimitOptions = {}): Middleware {
  const { onReject, rest } = takeOnReject(options, 'BodyLimitOptions');
  const limit = BodyLimitRecord.parse(rest, 'BodyLimitOptions').max_body_size;
  const reject = rejecter(onReject);
  if (limit === null) {
    // Unlimited: nothing to count, and nothing is buffered here.
    return function bodyLimitDisabled(_req: KeelRequest, _res: ServerResponse, next: NextFunction): void {
      next();
    };
  }

  return function bodyLimit(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    if (req.rawBody) {
      if (req.rawBody.length > limit) return reject.refuse(req, res, next, payloadTooLarge(limit));
      return next();
    }
    if (!hasRequestBody(req) || req.readableEnded) return next();
    const declaredError = checkDeclaredLength(req, limit);
    if (declaredError) {
      const declared = Number(req.headers['content-length']);
      drain(req);
      // More than we are willing to drain: say so, rather than reset a connection the client expects to reuse.
      reject.refuse(req, res, next, declaredError, declared > DRAIN_LIMIT ? { Connection: 'close' } : undefined);
      return;
    }
    if (req.headers['content-length'] !== undefined) return next();
    bufferAndRestore(req, limit).then(
      (body) => {
        req.rawBody = body;
        next();
      },
      (err: unknown) => reject.refuse(req, res, next, err as HttpError),
    );
  };
}
