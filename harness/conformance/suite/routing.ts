/**
 * Routing the framework owns: an unknown path is a 404 problem, a known path under another method a
 * 405 problem with `Allow` (RFC 9110 §15.5.6), HEAD answers as GET without a body (RFC 9110 §9.3.2),
 * OPTIONS without a CORS record is a 405 with `Allow`, typed placeholders.
 */
import { numbered, ok, problem, type Draft, type SuiteCase } from './build.js';

const notFound = (method: string, path: string) => problem(404, 'not-found', 'Resource Not Found', `No route matches ${method} ${path}`);
const notAllowed = (method: string, path: string, allow: string) => problem(405, 'method-not-allowed', 'Method Not Allowed', `${method} is not allowed for ${path}`, {}, { Allow: allow });

const THINGS = { route: '/things', method: 'GET' };
const ITEM = { route: '/things/{id:int}', method: 'GET' };
const CREATE = { route: '/things', method: 'POST' };

function routing(): Draft[] {
  const out: Draft[] = [];
  for (const path of ['/nothing', '/things/extra/deeper', '/thing', '/THINGS', '/things-and-more', '/api/things', '/%74hings-x']) {
    out.push({ slug: `unknown_path_${out.length + 1}`, description: `GET ${path}: no route matches, keel answers 404 itself.`, handler: THINGS, request: { method: 'GET', path }, expected_response: notFound('GET', path) });
  }
  out.push({ slug: 'unknown_path_query_not_in_detail', description: 'The query is not part of the path a 404 names.', handler: THINGS, request: { method: 'GET', path: '/nothing?x=1' }, expected_response: notFound('GET', '/nothing') });
  out.push({ slug: 'unknown_path_post', description: 'POST to an unknown path is a 404, not a 405.', handler: THINGS, request: { method: 'POST', path: '/elsewhere', body: { a: 1 } }, expected_response: notFound('POST', '/elsewhere') });
  for (const method of ['DELETE', 'POST', 'PUT', 'PATCH']) {
    out.push({ slug: `get_route_${method.toLowerCase()}_405`, description: `${method} on a GET-only path: 405 with Allow naming GET and HEAD.`, handler: THINGS, request: { method, path: '/things' }, expected_response: notAllowed(method, '/things', 'GET, HEAD') });
  }
  for (const method of ['GET', 'DELETE', 'PUT']) {
    out.push({ slug: `post_route_${method.toLowerCase()}_405`, description: `${method} on a POST-only path: 405 with Allow: POST.`, handler: CREATE, request: { method, path: '/things' }, expected_response: notAllowed(method, '/things', 'POST') });
  }
  out.push({ slug: 'typed_route_405', description: 'A 405 on a placeholder route names the path as sent.', handler: ITEM, request: { method: 'DELETE', path: '/things/7' }, expected_response: notAllowed('DELETE', '/things/7', 'GET, HEAD') });
  out.push({ slug: 'get_success', description: 'A matched GET reaches the handler.', handler: THINGS, request: { method: 'GET', path: '/things' }, expected_response: ok({ things: ['a', 'b'] }) });
  out.push({ slug: 'head_on_get_route', description: 'HEAD on a GET route answers as GET, without a body (RFC 9110 §9.3.2).', handler: THINGS, request: { method: 'HEAD', path: '/things' }, expected_response: { status_code: 200, headers: { 'Content-Type': 'application/json' } } });
  out.push({ slug: 'head_unknown_path', description: 'HEAD on an unknown path is a 404 without a body.', handler: THINGS, request: { method: 'HEAD', path: '/nothing' }, expected_response: { status_code: 404, headers: { 'Content-Type': 'application/problem+json' } } });
  out.push({ slug: 'head_on_post_route', description: 'HEAD on a POST-only path is a 405 naming the allowed method.', handler: CREATE, request: { method: 'HEAD', path: '/things' }, expected_response: { status_code: 405, headers: { Allow: 'POST' } } });
  out.push({ slug: 'options_without_cors', description: 'OPTIONS on a route without a CORS record or an OPTIONS handler is a 405 naming the allowed methods (as the reference\'s router answers).', handler: THINGS, request: { method: 'OPTIONS', path: '/things' }, expected_response: notAllowed('OPTIONS', '/things', 'GET, HEAD') });
  out.push({ slug: 'options_unknown_path', description: 'OPTIONS on an unknown path is a 404.', handler: THINGS, request: { method: 'OPTIONS', path: '/nothing' }, expected_response: notFound('OPTIONS', '/nothing') });
  out.push({ slug: 'typed_int_placeholder', description: '{id:int} matches digits and passes an integer.', handler: ITEM, request: { method: 'GET', path: '/things/42' }, expected_response: ok({ id: 42 }) });
  out.push({ slug: 'catch_all_placeholder', description: '{rest:path} takes the rest of the path, slashes included.', handler: { route: '/files/{rest:path}', method: 'GET' }, request: { method: 'GET', path: '/files/a/b/c.txt' }, expected_response: ok({ rest: 'a/b/c.txt' }) });
  out.push({ slug: 'created_201', description: 'A handler answer of 201 with Location is passed through.', handler: CREATE, request: { method: 'POST', path: '/things', body: { name: 'x' } }, expected_response: ok({ id: 1, name: 'x' }, 201, { Location: '/things/1' }) });
  out.push({ slug: 'no_content_204', description: 'A handler answer of 204 has no body.', handler: { route: '/things/{id:int}', method: 'DELETE' }, request: { method: 'DELETE', path: '/things/3' }, expected_response: { status_code: 204 } });
  return out;
}

export function routingCases(): SuiteCase[] {
  return numbered('routing', routing());
}
