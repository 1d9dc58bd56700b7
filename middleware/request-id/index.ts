/**
 * Request ids: echo a client's X-Request-ID when it is safe to, otherwise generate a UUID (RFC 9562 v4),
 * expose it as `req.requestId` and on the response.
 *
 * A client-supplied id ends up in logs, traces and other services' headers, so only a short id of
 * unreserved characters is echoed: no spaces, commas, quotes or control characters means no log-line
 * injection (CWE-117) and no header splitting. Anything else is replaced, not rejected: a bad
 * correlation id is not a reason to fail a request.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { defineRecord, fail, t, type InputOf } from '../../lib/records/define.js';
import type { RequestIdConfig } from '../../lib/records/route.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';
import { setCheckedHeader } from '../../lib/http/fixed-headers.js';

/** Header carrying the id, on the request and the response: `X-Request-ID`. */
export const DEFAULT_REQUEST_ID_HEADER = 'X-Request-ID';
/** Request ids are on when the factory gets no options: true. */
export const DEFAULT_REQUEST_ID_ENABLED = true;
/** Longest incoming id that is echoed: 128 characters. */
export const MAX_REQUEST_ID_LENGTH = 128;

/**
 * Options: the RequestIdConfig record (`{enabled}`) plus keel's `header_name`, snake_case or camelCase.
 * A parsed RequestIdConfig is valid input as it is. `enabled` defaults to {@link DEFAULT_REQUEST_ID_ENABLED} (true),
 * `header_name` to {@link DEFAULT_REQUEST_ID_HEADER} (`X-Request-ID`). Type generated from the record below.
 */
export type RequestIdOptions = InputOf<typeof RequestIdOptionsRecord>;

interface ParsedRequestIdOptions {
  enabled: boolean;
  header_name: string;
}

/** RFC 9110 §5.1 field name (a token). */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const RequestIdOptionsRecord = defineRecord<ParsedRequestIdOptions>()(
  'RequestIdOptions',
  {
    enabled: { type: t.boolean(), default: DEFAULT_REQUEST_ID_ENABLED, doc: 'Generate and propagate request ids (RequestIdConfig.enabled)' },
    header_name: {
      type: t.string({ pattern: FIELD_NAME, hint: 'an HTTP header name (RFC 9110 token)' }),
      default: DEFAULT_REQUEST_ID_HEADER,
      doc: 'keel extension: header carrying the id',
    },
  },
  {
    check: (v, path) => {
      // The id must not replace a header with its own semantics on the response.
      if (/^(content-|transfer-encoding$|connection$|set-cookie$|host$)/i.test(v.header_name)) {
        fail('RequestIdOptions', path, 'header_name', v.header_name, 'a header name of its own', 'Pick a dedicated header such as "X-Request-ID".');
      }
    },
  },
);

const VALID_ID = new RegExp(`^[A-Za-z0-9._:-]{1,${MAX_REQUEST_ID_LENGTH}}$`);

/**
 * True for an id keel echoes: 1 to {@link MAX_REQUEST_ID_LENGTH} characters of `A-Z a-z 0-9 . _ : -`
 * (UUIDs, ULIDs, W3C trace ids, `trace-123`). Everything else is replaced by a fresh UUID.
 */
export function isValidRequestId(id: unknown): id is string {
  return typeof id === 'string' && VALID_ID.test(id);
}

/** Which header an earlier requestId() on this response set, so a later one can take it back. */
const kHeader = Symbol('keel.requestId.header');
type TaggedResponse = ServerResponse & { [kHeader]?: string };

/**
 * Generate or propagate a request id.
 *
 * Several instances compose: a route-level `requestId({ enabled: false })` after a server-level one
 * removes the id again (no `req.requestId`, no response header), and a second enabled instance keeps
 * the id the first one chose.
 *
 * @example
 * import express from 'express';
 * import { requestId } from 'keel/middleware/request-id';
 *
 * const app = express();
 * app.use(requestId());
 * app.get('/', (req, res) => res.json({ id: (req as { requestId?: string }).requestId }));
 * app.listen(8000);
 */
export function requestId(options: RequestIdOptions = {}): Middleware {
  const config = RequestIdOptionsRecord.parse(options, 'RequestIdOptions');
  const header = config.header_name;
  const incomingKey = header.toLowerCase();

  if (!config.enabled) {
    return function requestIdDisabled(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
      const tagged = res as TaggedResponse;
      if (tagged[kHeader] !== undefined) {
        if (!res.headersSent) res.removeHeader(tagged[kHeader]);
        tagged[kHeader] = undefined;
      }
      delete req.requestId;
      next();
    };
  }

  return function requestId(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    const tagged = res as TaggedResponse;
    let id = req.requestId;
    if (!isValidRequestId(id)) {
      const incoming = req.headers[incomingKey];
      id = isValidRequestId(incoming) ? incoming : randomUUID();
    }
    req.requestId = id;
    if (!res.headersSent) {
      if (tagged[kHeader] !== undefined && tagged[kHeader] !== header) res.removeHeader(tagged[kHeader]);
      // The name was checked by the record and the id is token characters (VALID_ID): no checks per response.
      setCheckedHeader(res, header, incomingKey, id);
      tagged[kHeader] = header;
    }
    next();
  };
}
