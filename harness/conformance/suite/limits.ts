/**
 * Limits the framework enforces before a handler runs: the body limit (413, RFC 9110 §15.5.14), the
 * request-target limit (414, §15.5.15), the header section (431, RFC 6585 §5), JSON nesting depth
 * (400), and media types a JSON route does not read (415, RFC 9110 §15.5.16).
 */
import { numbered, ok, problem, PROBLEM_JSON, type Draft, type SuiteCase } from './build.js';

const LIMIT = 64;
const UPLOAD = { route: '/upload', method: 'POST', middleware: { body_limit: { max_bytes: LIMIT } } };
const JSON_ROUTE = { route: '/items', method: 'POST', body_schema: { type: 'object', properties: { name: { type: 'string' } } } };
const ANY_JSON = { route: '/deep', method: 'POST', body_schema: {} };

/** A JSON body `{"data":"xxx…"}` of exactly `bytes` bytes. */
const sized = (bytes: number) => ({ data: 'x'.repeat(bytes - 11) });
const tooLarge = (bytes: number) => problem(413, 'payload-too-large', 'Payload Too Large', `Request body of ${bytes} bytes exceeds the limit of ${LIMIT} bytes`, { limit: LIMIT });

function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
}

function limits(): Draft[] {
  const out: Draft[] = [];
  for (const bytes of [65, 100, 1_000, 20_000]) {
    out.push({ slug: `body_${bytes}_over_limit`, description: `A ${bytes}-byte body on a route limited to ${LIMIT} bytes: 413 before the handler.`, handler: UPLOAD, request: { method: 'POST', path: '/upload', body: sized(bytes) }, expected_response: tooLarge(bytes) });
  }
  for (const bytes of [12, LIMIT]) {
    out.push({ slug: `body_${bytes}_within_limit`, description: `A ${bytes}-byte body within a ${LIMIT}-byte limit reaches the handler.`, handler: UPLOAD, request: { method: 'POST', path: '/upload', body: sized(bytes) }, expected_response: ok({ stored: true }) });
  }
  out.push({ slug: 'max_body_size_key', description: 'The handler-level max_body_size spelling limits the body too.', handler: { route: '/upload', method: 'POST', max_body_size: LIMIT }, request: { method: 'POST', path: '/upload', body: sized(200) }, expected_response: tooLarge(200) });
  out.push({ slug: 'uri_over_limit_414', description: 'A request target longer than max_uri_length is a 414 problem.', handler: { route: '/search', method: 'GET', max_uri_length: 64 }, request: { method: 'GET', path: `/search?q=${'q'.repeat(100)}` }, expected_response: { status_code: 414, headers: PROBLEM_JSON } });
  out.push({ slug: 'uri_within_limit', description: 'A request target within max_uri_length is served.', handler: { route: '/search', method: 'GET', max_uri_length: 64 }, request: { method: 'GET', path: '/search?q=short' }, expected_response: ok({ results: [] }) });
  const headersTooLarge = problem(431, 'request-header-fields-too-large', 'Request Header Fields Too Large', 'The request header fields are too large');
  out.push({ slug: 'one_header_too_large_431', description: 'One header of 20 KB exceeds the server\'s header limit (16 KiB): 431 problem.', handler: { route: '/things', method: 'GET' }, request: { method: 'GET', path: '/things', headers: { 'X-Big': 'b'.repeat(20_000) } }, expected_response: headersTooLarge });
  const many: Record<string, string> = {};
  for (let i = 0; i < 40; i++) many[`X-Filler-${i}`] = 'f'.repeat(500);
  out.push({ slug: 'many_headers_too_large_431', description: 'Forty 500-byte headers together exceed the header limit: 431 problem.', handler: { route: '/things', method: 'GET' }, request: { method: 'GET', path: '/things', headers: many }, expected_response: headersTooLarge });
  out.push({ slug: 'headers_within_limit', description: 'A few kilobytes of headers are served.', handler: { route: '/things', method: 'GET' }, request: { method: 'GET', path: '/things', headers: { 'X-Medium': 'm'.repeat(4_000) } }, expected_response: ok({ things: [] }) });
  const tooDeep = problem(400, 'bad-request', 'Bad Request', 'JSON body nesting exceeds the limit of 64 levels', { limit: 64 });
  for (const kind of ['array', 'object'] as const) {
    for (const depth of [65, 500]) {
      out.push({ slug: `json_${kind}_depth_${depth}`, description: `JSON nested ${depth} levels (${kind}s) is refused with a 400 before it is parsed.`, handler: ANY_JSON, request: { method: 'POST', path: '/deep', headers: { 'Content-Type': 'application/json' }, body: nested(depth, kind) }, expected_response: tooDeep });
    }
    out.push({ slug: `json_${kind}_depth_64`, description: `JSON nested 64 levels (${kind}s) is within the limit.`, handler: ANY_JSON, request: { method: 'POST', path: '/deep', headers: { 'Content-Type': 'application/json' }, body: nested(64, kind) }, expected_response: ok({ accepted: true }) });
  }
  out.push({ slug: 'malformed_json_400', description: 'A body that is not JSON on a JSON route is a 400 problem.', handler: JSON_ROUTE, request: { method: 'POST', path: '/items', headers: { 'Content-Type': 'application/json' }, body: '{"name": "x"' }, expected_response: { status_code: 400, headers: PROBLEM_JSON } });
  const unsupported = problem(415, 'unsupported-media-type', 'Unsupported Media Type', 'Unsupported media type');
  for (const type of ['text/plain', 'application/xml', 'text/html', 'application/octet-stream', 'image/png', 'multipart/mixed']) {
    out.push({ slug: `media_type_${type.replace(/\W+/g, '_')}_415`, description: `A ${type} body on a route that reads JSON: 415.`, handler: JSON_ROUTE, request: { method: 'POST', path: '/items', headers: { 'Content-Type': type }, body: 'name: x' }, expected_response: unsupported });
  }
  out.push({ slug: 'form_body_on_schema_route', description: 'A urlencoded form on a route with a body schema is read as the schema\'s object (fields converted to its types).', handler: JSON_ROUTE, request: { method: 'POST', path: '/items', form_data: { name: 'x' } }, expected_response: ok({ created: true }, 201) });
  for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON']) {
    out.push({ slug: `media_type_json_${out.length + 1}_accepted`, description: `Content-Type ${type} is JSON.`, handler: JSON_ROUTE, request: { method: 'POST', path: '/items', headers: { 'Content-Type': type }, body: '{"name":"x"}' }, expected_response: ok({ created: true }, 201) });
  }
  return out;
}

export function limitCases(): SuiteCase[] {
  return numbered('limits', limits());
}


