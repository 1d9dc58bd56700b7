/**
 * The rest of the framework-owned behaviour: problem details for errors a handler raises (a 500
 * never leaks), request ids, response compression, rate limits (429 + Retry-After), request
 * timeouts (408), and the WebSocket opening handshake (RFC 6455 §4.2.2).
 */
import { createHash } from 'node:crypto';
import { numbered, ok, problem, PROBLEM_JSON, type Draft, type Json, type SuiteCase } from './build.js';

const RID = { route: '/rid', method: 'GET', middleware: { request_id: { enabled: true } } };

/** A JSON body of about `n` × 28 bytes (compressible). */
const big = (n: number) => ({ items: Array.from({ length: n }, (_, i) => ({ id: i, name: `item number ${i}` })) });

function problems(): Draft[] {
  const out: Draft[] = [];
  const route = { route: '/orders/{id:int}', method: 'GET' };
  out.push({ slug: 'handler_500_not_leaked', description: 'A handler failure is a 500 problem that says nothing of the failure.', handler: route, request: { method: 'GET', path: '/orders/1' }, expected_response: problem(500, 'internal-server-error', 'Internal Server Error', 'Internal server error') });
  out.push({ slug: 'handler_404_problem', description: 'A handler that finds nothing raises a 404, rendered as a problem with its detail and instance (RFC 9457 §3.1.5).', handler: route, request: { method: 'GET', path: '/orders/404' }, expected_response: problem(404, 'not-found', 'Resource Not Found', 'Order 404 does not exist', { instance: '/orders/404' }) });
  out.push({ slug: 'handler_409_problem', description: 'A handler conflict (409), a status without a problem type of its own: `about:blank` with the status phrase as title (RFC 9457 §4.2.1).', handler: { route: '/orders', method: 'POST' }, request: { method: 'POST', path: '/orders', body: { id: 1 } }, expected_response: { status_code: 409, headers: PROBLEM_JSON, body: { type: 'about:blank', title: 'Conflict', status: 409, detail: 'Order 1 already exists' } } });
  out.push({ slug: 'validation_is_problem_json', description: 'A validation failure is served as application/problem+json.', handler: { route: '/orders/{id:int}', method: 'GET' }, request: { method: 'GET', path: '/orders/abc' }, expected_response: { status_code: 422, headers: PROBLEM_JSON } });
  return out;
}

function requestIds(): Draft[] {
  const out: Draft[] = [];
  out.push({ slug: 'generated', description: 'With request ids on, a response carries a generated UUID.', handler: RID, request: { method: 'GET', path: '/rid' }, expected_response: ok({ ok: true }, 200, { 'X-Request-ID': '<<uuid>>' }) });
  for (const id of ['trace-123', 'a', 'abc.DEF_ghi:jkl-0', 'x'.repeat(128), '0f8fad5b-d9cb-469f-a165-70867728950e']) {
    out.push({ slug: `propagated_${out.length + 1}`, description: `A well-formed incoming id (${id.length} characters) is echoed.`, handler: RID, request: { method: 'GET', path: '/rid', headers: { 'X-Request-ID': id } }, expected_response: ok({ ok: true }, 200, { 'X-Request-ID': id }) });
  }
  for (const id of ['x'.repeat(129), 'has space', 'semi;colon', '<script>', 'new\tline']) {
    out.push({ slug: `replaced_${out.length + 1}`, description: 'An incoming id outside 1-128 characters of A-Z a-z 0-9 . _ : - is replaced by a generated UUID.', handler: RID, request: { method: 'GET', path: '/rid', headers: { 'X-Request-ID': id } }, expected_response: ok({ ok: true }, 200, { 'X-Request-ID': '<<uuid>>' }) });
  }
  out.push({ slug: 'disabled', description: 'A route that turns request ids off sends none.', handler: { route: '/rid', method: 'GET', middleware: { request_id: { enabled: false } } }, request: { method: 'GET', path: '/rid' }, expected_response: ok({ ok: true }, 200, { 'X-Request-ID': '<<absent>>' }) });
  out.push({ slug: 'on_validation_error', description: 'A 422 carries the request id too.', handler: { ...RID, parameters: { query: { n: { type: 'integer' } } } }, request: { method: 'GET', path: '/rid?n=x' }, expected_response: { status_code: 422, headers: { ...PROBLEM_JSON, 'X-Request-ID': '<<uuid>>' } } });
  return out;
}

function compression(): Draft[] {
  const out: Draft[] = [];
  const record = (extra: Json = {}) => ({ route: '/big', method: 'GET', middleware: { compression: { gzip: true, brotli: true, min_size: 100, ...extra } } });
  const get = (accept?: string) => ({ method: 'GET', path: '/big', ...(accept !== undefined ? { headers: { 'Accept-Encoding': accept } } : {}) });
  const body = big(60);
  const rows: Array<[string, string | undefined, string, Json?]> = [
    ['gzip', 'gzip', 'gzip'],
    ['br', 'br', 'br'],
    ['br_preferred', 'gzip, deflate, br', 'br'],
    ['gzip_by_q', 'gzip;q=1.0, br;q=0.5', 'gzip'],
    ['br_refused_q0', 'br;q=0, gzip', 'gzip'],
    ['identity_only', 'identity', '<<absent>>'],
    ['no_accept_encoding', undefined, '<<absent>>'],
    ['gzip_q0', 'gzip;q=0', '<<absent>>', { brotli: false }],
    ['gzip_only_record', 'br, gzip', 'gzip', { brotli: false }],
    ['unknown_coding', 'compress', '<<absent>>'],
  ];
  for (const [slug, accept, encoding, extra] of rows) {
    out.push({ slug, description: `Accept-Encoding ${JSON.stringify(accept ?? null)}: Content-Encoding ${encoding}.`, handler: record(extra), request: get(accept), expected_response: ok(body, 200, { 'Content-Encoding': encoding, ...(encoding === '<<absent>>' ? {} : { Vary: 'Accept-Encoding' }) }) });
  }
  out.push({ slug: 'below_min_size', description: 'A body smaller than min_size is sent as is.', handler: record(), request: get('gzip, br'), expected_response: ok({ tiny: true }, 200, { 'Content-Encoding': '<<absent>>' }) });
  return out;
}

function rateLimits(): Draft[] {
  const out: Draft[] = [];
  for (const burst of [1, 2, 3, 5]) {
    out.push({ slug: `burst_${burst}_exceeded`, description: `After a burst of ${burst}, keel answers 429 with Retry-After and RateLimit headers.`, handler: { route: '/limited', method: 'GET', middleware: { rate_limit: { per_second: 1, burst, warmup_requests: burst, warmup_expect_status: 200 } } }, request: { method: 'GET', path: '/limited' }, expected_response: { status_code: 429, headers: { ...PROBLEM_JSON, 'Retry-After': '<<present>>', 'RateLimit-Policy': `${burst};w=${burst}` } } });
  }
  for (const burst of [2, 5]) {
    out.push({ slug: `burst_${burst}_within`, description: `The last request of a burst of ${burst} is served.`, handler: { route: '/limited', method: 'GET', middleware: { rate_limit: { per_second: 1, burst, warmup_requests: burst - 1, warmup_expect_status: 200 } } }, request: { method: 'GET', path: '/limited' }, expected_response: ok({ ok: true }, 200, { 'RateLimit-Policy': `${burst};w=${burst}` }) });
  }
  return out;
}

function timeouts(): Draft[] {
  const slow = (seconds: number, sleep: number) => ({ route: '/slow', method: 'GET', middleware: { request_timeout: { seconds, sleep_ms: sleep } } });
  return [
    { slug: 'times_out', description: 'A handler slower than request_timeout: keel answers 408 and closes.', handler: slow(1, 1500), request: { method: 'GET', path: '/slow' }, expected_response: problem(408, 'request-timeout', 'Request Timeout', 'The server did not answer within 1 second', { timeout: 1 }, { Connection: 'close' }) },
    { slug: 'within_time', description: 'A handler within request_timeout answers normally.', handler: slow(2, 0), request: { method: 'GET', path: '/slow' }, expected_response: ok({ done: true }) },
  ];
}

const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';
const accept = (key: string) => createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');

function websocket(): Draft[] {
  const ws = { route: '/ws', method: 'GET', middleware: { websocket: { enabled: true } } };
  const upgrade = (headers: Json = {}) => ({ method: 'GET', path: '/ws', headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': KEY, ...headers } });
  const other = 'x3JJHMbDL1EzLkh9GBhXDw==';
  return [
    { slug: 'handshake', description: 'A valid opening handshake: 101 with the Sec-WebSocket-Accept of RFC 6455 §4.2.2.', handler: ws, request: upgrade(), expected_response: { status_code: 101, headers: { Upgrade: 'websocket', 'Sec-WebSocket-Accept': accept(KEY) } } },
    { slug: 'handshake_other_key', description: 'The accept value is derived from the key sent.', handler: ws, request: upgrade({ 'Sec-WebSocket-Key': other }), expected_response: { status_code: 101, headers: { 'Sec-WebSocket-Accept': accept(other) } } },
    { slug: 'plain_get_on_ws_route', description: 'A plain GET to a WebSocket-only path: 404 (no HTTP route).', handler: ws, request: { method: 'GET', path: '/ws' }, expected_response: { status_code: 404, headers: PROBLEM_JSON } },
  ];
}

export function miscCases(): SuiteCase[] {
  return [
    ...numbered('problem_details', problems()),
    ...numbered('request_id', requestIds()),
    ...numbered('compression', compression()),
    ...numbered('rate_limit', rateLimits()),
    ...numbered('request_timeout', timeouts()),
    ...numbered('websocket', websocket()),
  ];
}
