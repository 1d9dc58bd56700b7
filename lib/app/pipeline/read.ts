/**
 * The read phase: the request body, read under the route's cap and parsed (lib/http/body.ts,
 * lib/http/content.ts). Inside a legacy Express app an earlier parser may have consumed the stream
 * already: its parsed body is all there is left.
 */
import { declaredTooLarge, drain, readRawBody, readRawBodyThen } from '../../http/body.js';
import type { ProblemDetails } from '../../http/problem.js';
import { parseBody } from '../../http/content.js';
import type { KeelRequest } from '../../http/request.js';
import { isThenable, type RequestData } from '../handler.js';
import type { CoreState } from './core.js';

/** A parsed body lands in the request data and, Express's way, on `req.body`. */
function useBody(req: KeelRequest, data: RequestData, parsed: Awaited<ReturnType<typeof parseBody>>): void {
  data.body = parsed.body;
  data.files = parsed.files;
  req.body = parsed.body;
}

/** Parse a read body under the route's multipart limits, charged to the client's CPU budget when work limits are on. */
function parseRaw(core: CoreState, req: KeelRequest, raw: Buffer): ReturnType<typeof parseBody> {
  const parse = () => parseBody(raw, req.headers['content-type'], req.headers, core.expectJson, core.jsonPoisoning, core.multipartLimits);
  return core.chargedParse ? core.chargedParse(req, raw.length, parse) : parse();
}

/** An earlier parser (express.json(), urlencoded()) already consumed the stream. */
function consumedEarlier(req: KeelRequest): boolean {
  return !req.rawBody && req.readableEnded && req.body !== undefined;
}

/** Read and parse the body into `data` (general path: awaited). */
export async function readBody(core: CoreState, req: KeelRequest, data: RequestData): Promise<void> {
  if (consumedEarlier(req)) {
    data.body = req.body;
    return;
  }
  const raw = await readRawBody(req, core.maxBodySize);
  data.rawBody = raw;
  if (!core.skipJsonParse) {
    const p = parseRaw(core, req, raw);
    useBody(req, data, isThenable(p) ? await p : p);
  }
}

/**
 * Read and parse the body with a callback (no promise unless the body is multipart), then call
 * `then` with the request data filled in, or `failed` with what went wrong, or `refused` with the
 * problem to answer (a body over the cap on a route without on_error hooks: no error is built).
 */
export function readBodyThen(
  core: CoreState, req: KeelRequest, data: RequestData, then: () => void, failed: (err: unknown) => void, refused: (problem: ProblemDetails) => void,
): void {
  if (consumedEarlier(req)) {
    data.body = req.body;
    return then();
  }
  if (!core.hasOnError && !req.rawBody) {
    // A declared length over the cap, where no on_error hook would see the error: its problem, without the error.
    const tooLarge = declaredTooLarge(req, core.maxBodySize);
    if (tooLarge) {
      drain(req);
      return refused(tooLarge);
    }
  }
  readRawBodyThen(req, core.maxBodySize, (err, raw) => {
    if (err) return failed(err);
    data.rawBody = raw!;
    if (core.skipJsonParse) return then();
    let parsed: ReturnType<typeof parseBody>;
    try {
      parsed = parseRaw(core, req, raw!);
    } catch (e) {
      return failed(e);
    }
    if (isThenable(parsed)) {
      parsed.then(
        (p) => {
          useBody(req, data, p);
          then();
        },
        failed,
      );
      return;
    }
    useBody(req, data, parsed);
    then();
  });
}
