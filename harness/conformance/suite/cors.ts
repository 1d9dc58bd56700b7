/**
 * CORS (Fetch standard, "CORS protocol") on routes with a CorsConfig record: preflights answered by
 * the framework, simple requests, credentials, the `null` origin, refusals as 403 problems
 * (docs/conformance.md, "Framework-owned answers").
 */
import { numbered, ok, problem, type Draft, type Json, type SuiteCase } from './build.js';

const APP = 'https://app.example.com';
const ADMIN = 'https://admin.example.com';
const RECORD = { allowed_origins: [APP, ADMIN], allowed_methods: ['GET', 'POST', 'PUT'], allowed_headers: ['Content-Type', 'X-Token'], expose_headers: ['X-Total'], max_age: 600 };
const route = (cors: Json, method = 'POST') => ({ route: '/api/data', method, cors });
const refused = (origin: string) => problem(403, 'forbidden', 'Forbidden', `CORS request from origin '${origin}' not allowed`, {}, { 'Access-Control-Allow-Origin': '<<absent>>' });
const preflight = (origin: string | undefined, method: string, headers?: string): Json => ({
  method: 'OPTIONS',
  path: '/api/data',
  headers: { ...(origin !== undefined ? { Origin: origin } : {}), 'Access-Control-Request-Method': method, ...(headers ? { 'Access-Control-Request-Headers': headers } : {}) },
});

function cors(): Draft[] {
  const out: Draft[] = [];
  for (const origin of [APP, ADMIN]) {
    for (const method of RECORD.allowed_methods) {
      out.push({
        slug: `preflight_${origin === APP ? 'app' : 'admin'}_${method.toLowerCase()}`,
        description: `Preflight from an allowed origin for ${method}: 204 with the record's lists, answered before any handler.`,
        handler: route(RECORD),
        request: preflight(origin, method, 'Content-Type'),
        expected_response: { status_code: 204, headers: { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Methods': 'GET, POST, PUT', 'Access-Control-Allow-Headers': 'Content-Type, X-Token', 'Access-Control-Max-Age': '600' } },
      });
    }
  }
  for (const origin of ['https://evil.example', 'https://app.example.com.evil.example', 'http://app.example.com', 'https://APP.example.com']) {
    out.push({ slug: `preflight_origin_refused_${out.length + 1}`, description: `Preflight from ${origin}, not in the list: 403 problem.`, handler: route(RECORD), request: preflight(origin, 'POST'), expected_response: refused(origin) });
  }
  for (const method of ['DELETE', 'PATCH', 'put']) {
    out.push({ slug: `preflight_method_refused_${method}`, description: `Preflight for ${method}, outside allowed_methods (compared exactly): 403.`, handler: route(RECORD), request: preflight(APP, method), expected_response: problem(403, 'forbidden', 'Forbidden', `CORS preflight for method '${method}' not allowed`) });
  }
  out.push({ slug: 'preflight_header_refused', description: 'Preflight asking for a header outside allowed_headers: 403.', handler: route(RECORD), request: preflight(APP, 'POST', 'X-Other'), expected_response: { status_code: 403, headers: { 'Access-Control-Allow-Origin': '<<absent>>' } } });
  out.push({ slug: 'options_without_origin', description: 'OPTIONS without Origin on a route with a CORS record: 403 naming the empty origin.', handler: route(RECORD), request: { method: 'OPTIONS', path: '/api/data', headers: { 'Access-Control-Request-Method': 'POST' } }, expected_response: problem(403, 'forbidden', 'Forbidden', "CORS request from origin '' not allowed") });
  out.push({ slug: 'preflight_null_origin_refused', description: 'The opaque origin `null` is not a listed origin: 403.', handler: route(RECORD), request: preflight('null', 'POST'), expected_response: refused('null') });
  for (const origin of [APP, ADMIN]) {
    out.push({ slug: `simple_${origin === APP ? 'app' : 'admin'}_allowed`, description: 'An actual request from an allowed origin reaches the handler and carries the origin and exposed headers.', handler: route(RECORD, 'GET'), request: { method: 'GET', path: '/api/data', headers: { Origin: origin } }, expected_response: ok({ data: [1, 2] }, 200, { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': 'X-Total' }) });
  }
  for (const origin of ['https://evil.example', 'null']) {
    out.push({ slug: `simple_origin_refused_${out.length + 1}`, description: `An actual request from ${origin} on a route with a CORS record: 403 problem.`, handler: route(RECORD, 'GET'), request: { method: 'GET', path: '/api/data', headers: { Origin: origin } }, expected_response: refused(origin) });
  }
  out.push({ slug: 'same_origin_no_origin_header', description: 'A request without Origin (same-origin or not a browser) is served without CORS headers.', handler: route(RECORD, 'GET'), request: { method: 'GET', path: '/api/data' }, expected_response: ok({ data: [1, 2] }, 200, { 'Access-Control-Allow-Origin': '<<absent>>' }) });
  const creds = { ...RECORD, allow_credentials: true };
  out.push({ slug: 'credentials_preflight', description: 'With allow_credentials, a preflight echoes the origin and allows credentials.', handler: route(creds), request: preflight(APP, 'POST'), expected_response: { status_code: 204, headers: { 'Access-Control-Allow-Origin': APP, 'Access-Control-Allow-Credentials': 'true' } } });
  out.push({ slug: 'credentials_simple', description: 'With allow_credentials, an actual request gets the origin echoed and Allow-Credentials.', handler: route(creds, 'GET'), request: { method: 'GET', path: '/api/data', headers: { Origin: APP, Cookie: 'sid=1' } }, expected_response: ok({ data: [] }, 200, { 'Access-Control-Allow-Origin': APP, 'Access-Control-Allow-Credentials': 'true' }) });
  out.push({ slug: 'no_credentials_header_by_default', description: 'Without allow_credentials, no Allow-Credentials header.', handler: route(RECORD, 'GET'), request: { method: 'GET', path: '/api/data', headers: { Origin: APP } }, expected_response: ok({ data: [] }, 200, { 'Access-Control-Allow-Credentials': '<<absent>>' }) });
  const wildcard = { allowed_origins: ['*'], allowed_methods: ['GET', 'POST'] };
  out.push({ slug: 'wildcard_simple', description: 'allowed_origins ["*"]: any origin is allowed and echoed (as the reference\'s cors.rs answers).', handler: route(wildcard, 'GET'), request: { method: 'GET', path: '/api/data', headers: { Origin: 'https://anyone.example' } }, expected_response: ok({ data: [] }, 200, { 'Access-Control-Allow-Origin': 'https://anyone.example' }) });
  out.push({ slug: 'wildcard_preflight', description: 'allowed_origins ["*"]: a preflight from any origin is allowed, the origin echoed.', handler: route(wildcard), request: preflight('https://anyone.example', 'POST'), expected_response: { status_code: 204, headers: { 'Access-Control-Allow-Origin': 'https://anyone.example', 'Access-Control-Allow-Methods': 'GET, POST' } } });
  out.push({ slug: 'wildcard_with_credentials', description: '`*` with credentials answers `*` without Allow-Credentials (a browser refuses the pair).', handler: route({ ...wildcard, allow_credentials: true }, 'GET'), request: { method: 'GET', path: '/api/data', headers: { Origin: 'https://anyone.example' } }, expected_response: ok({ data: [] }, 200, { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Credentials': '<<absent>>' }) });
  out.push({ slug: 'null_origin_listed', description: 'An origin list naming `null` allows the opaque origin.', handler: route({ allowed_origins: ['null'], allowed_methods: ['GET'] }, 'GET'), request: { method: 'GET', path: '/api/data', headers: { Origin: 'null' } }, expected_response: ok({ data: [] }, 200, { 'Access-Control-Allow-Origin': 'null' }) });
  return out;
}

export function corsCases(): SuiteCase[] {
  return numbered('cors', cors());
}
