/**
 * Authentication failures the framework answers before a handler: JWT (RFC 7519, RFC 6750 Bearer)
 * and API keys, each a 401 problem with a `WWW-Authenticate` challenge (RFC 9110 §11.6.1), worded
 * as docs/conformance.md's table of framework-owned answers says. Tokens are signed when the suite
 * loads (HS256, fixed claims), so each case is still one concrete request.
 */
import { claims, FAR_FUTURE, jwt, JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET, numbered, ok, problem, type Draft, type SuiteCase } from './build.js';

const JWT_ROUTE = { route: '/me', method: 'GET', middleware: { jwt_auth: { enabled: true, algorithm: 'HS256', secret: JWT_SECRET, issuer: JWT_ISSUER, audience: [JWT_AUDIENCE] } } };
const KEY = 'suite-key-0123456789abcdef';
const KEY_ROUTE = { route: '/reports', method: 'GET', middleware: { api_key_auth: { keys: [KEY, 'suite-key-second-0123456789'], header_name: 'X-API-Key' } } };
const CUSTOM_KEY_ROUTE = { route: '/reports', method: 'GET', middleware: { api_key_auth: { keys: [KEY], header_name: 'X-Service-Token' } } };

const unauthorized = (title: string, detail: string) => problem(401, 'unauthorized', title, detail, {}, { 'WWW-Authenticate': '<<present>>' });
const jwtFailed = (detail: string) => unauthorized('JWT validation failed', detail);
const bearer = (token: string) => ({ method: 'GET', path: '/me', headers: { Authorization: `Bearer ${token}` } });

function auth(): Draft[] {
  const out: Draft[] = [];
  const me = (slug: string, description: string, request: Record<string, unknown>, expected: Record<string, unknown>) => out.push({ slug, description, handler: JWT_ROUTE, request, expected_response: expected });
  me('jwt_valid', 'A valid token reaches the handler.', bearer(jwt(claims())), ok({ sub: 'user-7' }));
  me('jwt_valid_lowercase_scheme', 'The Bearer scheme is case-insensitive (RFC 9110 §11.1).', { method: 'GET', path: '/me', headers: { Authorization: `bearer ${jwt(claims())}` } }, ok({ sub: 'user-7' }));
  me('jwt_missing', 'No Authorization header: 401.', { method: 'GET', path: '/me' }, unauthorized('Missing or invalid Authorization header', "Expected 'Authorization: Bearer <token>'"));
  for (const value of ['Basic dXNlcjpwYXNz', 'Token abc', jwt(claims())]) {
    me(`jwt_not_bearer_${out.length + 1}`, `Authorization without the Bearer scheme (${value.slice(0, 12)}…): 401.`, { method: 'GET', path: '/me', headers: { Authorization: value } }, unauthorized('Invalid Authorization header format', "Authorization header must use Bearer scheme: 'Bearer <token>'"));
  }
  for (const [token, parts] of [['abc', 1], ['abc.def', 2], ['a.b.c.d', 4]] as const) {
    me(`jwt_malformed_${parts}_parts`, `A token of ${parts} part(s): 401 malformed.`, bearer(token), unauthorized('Malformed JWT token', `Malformed JWT token: expected 3 parts separated by dots, found ${parts}`));
  }
  me('jwt_wrong_secret', 'A token signed with another secret: bad signature.', bearer(jwt(claims(), 'another-secret-0123456789abcdef-XYZ')), jwtFailed('Token signature is invalid'));
  const valid = jwt(claims());
  me('jwt_tampered_claims', 'Claims changed after signing: bad signature.', bearer(`${valid.split('.')[0]}.${Buffer.from(JSON.stringify(claims({ sub: 'admin' }))).toString('base64url')}.${valid.split('.')[2]}`), jwtFailed('Token signature is invalid'));
  me('jwt_truncated_signature', 'A signature cut short: bad signature.', bearer(valid.slice(0, -4)), jwtFailed('Token signature is invalid'));
  me('jwt_expired', 'exp in the past: expired.', bearer(jwt(claims({ exp: 1_600_003_600, iat: 1_600_000_000 }))), jwtFailed('Token has expired'));
  me('jwt_not_yet_valid', 'nbf in the future: not yet valid.', bearer(jwt(claims({ nbf: FAR_FUTURE - 10 }))), jwtFailed('JWT not valid yet, not before claim is in the future'));
  me('jwt_wrong_audience', 'aud not the configured audience.', bearer(jwt(claims({ aud: 'other-api' }))), jwtFailed('Token audience is invalid'));
  me('jwt_wrong_issuer', 'iss not the configured issuer.', bearer(jwt(claims({ iss: 'https://elsewhere.example' }))), jwtFailed(`Token issuer is invalid, expected '${JWT_ISSUER}'`));
  me('jwt_alg_none', 'An unsigned token (alg none) is refused before any signature check (RFC 8725 §3.1).', bearer(`${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}.`), { status_code: 401, headers: { 'Content-Type': 'application/problem+json' } });
  me('jwt_other_algorithm', 'A token signed with HS512 on an HS256 route is refused (RFC 8725 §3.1).', bearer(jwt(claims(), JWT_SECRET, { alg: 'HS512', typ: 'JWT' })), jwtFailed("Token algorithm is not allowed, expected 'HS256'"));
  const key = (slug: string, description: string, headers: Record<string, string> | undefined, expected: Record<string, unknown>, handler = KEY_ROUTE) => out.push({ slug, description, handler, request: { method: 'GET', path: '/reports', ...(headers ? { headers } : {}) }, expected_response: expected });
  key('api_key_valid', 'A listed key reaches the handler.', { 'X-API-Key': KEY }, ok({ reports: [] }));
  key('api_key_second_valid', 'Any listed key is accepted.', { 'X-API-Key': 'suite-key-second-0123456789' }, ok({ reports: [] }));
  key('api_key_header_name_case', 'Header names are case-insensitive.', { 'x-api-key': KEY }, ok({ reports: [] }));
  key('api_key_missing', 'No key: 401 naming the header.', undefined, unauthorized('Missing API key', "Expected 'X-API-Key' header with valid API key"));
  for (const wrong of ['nope', `${KEY}x`, KEY.toUpperCase(), KEY.slice(0, -1)]) {
    key(`api_key_wrong_${out.length + 1}`, `A key not in the list (${wrong.slice(0, 16)}…): 401.`, { 'X-API-Key': wrong }, unauthorized('Invalid API key', 'The provided API key is not valid'));
  }
  key('api_key_in_query_not_read', 'A key in the query is not read unless allow_query is set.', undefined, unauthorized('Missing API key', "Expected 'X-API-Key' header with valid API key"));
  out[out.length - 1]!.request = { method: 'GET', path: `/reports?api_key=${KEY}` };
  key('api_key_custom_header', 'A route naming another header reads the key there.', { 'X-Service-Token': KEY }, ok({ reports: [] }), CUSTOM_KEY_ROUTE);
  key('api_key_custom_header_missing', 'The default header does not count on a route naming another one.', { 'X-API-Key': KEY }, unauthorized('Missing API key', "Expected 'X-Service-Token' header with valid API key"), CUSTOM_KEY_ROUTE);
  return out;
}

export function authCases(): SuiteCase[] {
  return numbered('auth', auth());
}
