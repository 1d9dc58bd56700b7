/**
 * What each shipped case asks of an implementation, and on whose word (docs/conformance.md, "What
 * conformance means"): its **requirement** is
 *
 * - `required`: the specification or an RFC (or the Fetch / WebSocket standards) says so; `basis` cites it;
 * - `reference`: the reference implementation's answer (Spikard's crates/spikard-http) where the
 *   specification is silent: its wording, its choices; `basis` says which;
 * - `keel`: keel's deliberate choice where it answers differently or says more (docs/conformance.md,
 *   "Where keel answers differently, on purpose"); `basis` is the one-line why.
 *
 * A case's standing is the most particular of what it asserts: a 401 whose problem is worded as the
 * reference words it is `reference`, though its status and `WWW-Authenticate` are RFC requirements.
 * Standings are assigned by rule per category and table, from what the case expects (status, body,
 * headers) and sends, never per case id.
 */
import type { Json, SuiteCase } from './build.js';
import type { SessionDocument } from './sessions.js';

export type Requirement = 'required' | 'reference' | 'keel';
/** From the least to the most particular: `--require reference` runs `required` and `reference` cases. */
export const REQUIREMENTS: readonly Requirement[] = ['required', 'reference', 'keel'];

export interface Standing {
  requirement: Requirement;
  /** The citation (required), the reference's behaviour (reference) or keel's one-line why (keel). */
  basis: string;
}

const required = (basis: string): Standing => ({ requirement: 'required', basis });
const reference = (basis: string): Standing => ({ requirement: 'reference', basis });
const keel = (basis: string): Standing => ({ requirement: 'keel', basis });

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The facts of a case the rules read. */
interface Facts {
  status: number;
  /** The expected body is a problem document with wording (title or detail). */
  worded: boolean;
  headers: Record<string, string>;
  method: string;
  handlerMethod: string;
  request: Json;
  handler: Json;
  body: unknown;
}

function factsOf(c: SuiteCase): Facts {
  const expected = c.expected_response;
  const body = expected.body;
  const headers = Object.fromEntries(Object.entries((expected.headers ?? {}) as Json).map(([k, v]) => [k.toLowerCase(), String(v)]));
  return {
    status: expected.status_code as number,
    worded: isObject(body) && ('title' in body || 'detail' in body),
    headers,
    method: String(c.request.method).toUpperCase(),
    handlerMethod: String(c.handler.method).toUpperCase(),
    request: c.request,
    handler: c.handler,
    body,
  };
}

const SPEC_ERRORS = 'the specification (Errors: RFC 9457 problem details, application/problem+json)';
const REFERENCE_PROBLEMS = "worded as the reference's problem.rs / auth.rs / cors.rs answers (docs/conformance.md, \"Framework-owned answers\")";
const EVERY_REFUSAL = 'every refusal is an RFC 9457 problem document (the specification\'s error format); the reference answers this one with a bare body';

function routing(f: Facts): Standing {
  if (f.status === 405 && f.worded) return keel(`a 405 is a problem document with Allow (RFC 9110 §15.5.6); the reference sends axum's empty 405, and ${f.method === 'OPTIONS' ? 'an OPTIONS request without a CORS record is no exception' : 'the detail names method and path'}`);
  if (f.status === 405) return required('RFC 9110 §15.5.6: a 405 MUST carry Allow, listing the methods the target supports (HEAD with GET, §9.3.2)');
  if (f.status === 404 && f.worded) return reference(`RFC 9110 §15.5.5 (404); ${REFERENCE_PROBLEMS}`);
  if (f.method === 'HEAD') return required('RFC 9110 §9.3.2: HEAD answers as GET would, without content');
  if (f.status === 204) return required('RFC 9110 §15.3.5: a 204 has no content; the handler\'s status passes through');
  return required('the specification: route patterns with typed placeholders ({id:int}, {rest:path}) reach their handler');
}

function params(f: Facts): Standing {
  if (f.status === 422) return reference("the reference's validation items (Pydantic wording: type, loc, msg, input) for a parameter text that does not convert; status 422 and the problem are the specification's");
  return required('the specification: path, query, header and cookie parameters are converted to their declared type before the handler');
}

function validation(f: Facts): Standing {
  if (f.status !== 422) return required('JSON Schema (2020-12) validation keywords: a value within the bound reaches the handler');
  const errors = isObject(f.body) && Array.isArray(f.body.errors) ? (f.body.errors as Json[]) : [];
  if (errors.some((e) => /not a valid (email|IPv4)/.test(String(e.msg)))) return keel('a failed format names the format instead of quoting a pattern the user never wrote (product requirement)');
  return reference("the reference's validation items for the keyword (type, loc, msg, ctx as Spikard words them); status 422, detail and errors are the specification's");
}

function limits(f: Facts): Standing {
  if (f.status === 400 && f.worded) return keel('JSON nested deeper than 64 levels is refused before it is parsed (hostile by default: bounded CPU and stack per request)');
  if (f.status === 400) return required(`RFC 9110 §15.5.1 (400) for a body that is not JSON, as ${SPEC_ERRORS}`);
  if ((f.status === 413 || f.status === 431 || f.status === 415) && f.worded) {
    const rfc = f.status === 413 ? 'RFC 9110 §15.5.14' : f.status === 431 ? 'RFC 6585 §5' : 'RFC 9110 §15.5.16';
    return keel(`the status is ${rfc}; the problem's title${f.status === 413 ? ', detail and limit member' : ' and detail'} are keel's wording (the reference sends its own text)`);
  }
  if (f.status === 414) return required(`RFC 9110 §15.5.15: a request target longer than the route's max_uri_length, as ${SPEC_ERRORS}`);
  if (f.request.form_data !== undefined) return keel('form fields are converted by the body schema, not by how they look (the reference turns any number text into a number)');
  if (isObject(f.request.headers) && Object.keys(f.request.headers).some((h) => h.toLowerCase() === 'content-type')) return required('RFC 9110 §8.3.1: media types are case-insensitive and take parameters (application/json; charset=utf-8)');
  return required('a limit must not refuse what is within it (the specification: body_limit / max_body_size, max_uri_length, header limits)');
}

function cors(f: Facts): Standing {
  const h = isObject(f.request.headers) ? (f.request.headers as Record<string, string>) : {};
  const requested = h['Access-Control-Request-Method'];
  if (requested !== undefined && requested !== requested.toUpperCase()) return keel('CORS method names are compared exactly (the specification\'s is_method_allowed: "true only on an exact list match"); the reference ignores case');
  if (f.status === 403 && f.worded) return keel(`${EVERY_REFUSAL} (an origin refusal: {"detail"}; a method or header: empty)`);
  const cfg = isObject(f.handler.cors) ? f.handler.cors : {};
  const wildcard = Array.isArray(cfg.allowed_origins) && cfg.allowed_origins.includes('*');
  if (wildcard && cfg.allow_credentials) return keel('`*` with credentials answers `*` without Allow-Credentials: a browser refuses the pair (Fetch), and echoing any origin with credentials opens every user\'s session to every site; the reference reflects the origin');
  if (cfg.allow_credentials) return required('Fetch standard, CORS check: with credentials, Access-Control-Allow-Origin must be the request\'s origin (never `*`) and Access-Control-Allow-Credentials `true`');
  if (f.status === 403) return reference("the reference's cors.rs refuses a preflight header outside allowed_headers with 403 and no CORS headers");
  return reference("the reference's cors.rs: the origin echoed, the record's lists joined with `, `, preflights answered 204 before any handler");
}

function auth(f: Facts): Standing {
  const authz = isObject(f.request.headers) ? String((f.request.headers as Json).Authorization ?? '') : '';
  if (f.status !== 401) {
    if (/^bearer /.test(authz)) return required('RFC 9110 §11.1: the authentication scheme is case-insensitive (`bearer` is `Bearer`)');
    return required('RFC 7519 / RFC 6750 (a valid Bearer token) and the specification\'s API keys: a valid credential reaches the handler');
  }
  const detail = isObject(f.body) ? String(f.body.detail ?? '') : '';
  if (/algorithm is not allowed/.test(detail)) return keel('a token signed with another algorithm is refused before any signature check (RFC 8725 §3.1), saying so; the reference says "Token validation failed: InvalidAlgorithm"');
  if (String(f.request.path).includes('?')) return keel('API keys in the query string are read only with allow_query: URLs end up in access logs, proxy logs and history (RFC 6750 §5.3 gives the same advice for tokens); the reference reads them');
  if (!f.worded) return required('RFC 8725 §3.1 (an unsigned token is refused), RFC 9110 §15.5.2 (401), as ' + SPEC_ERRORS);
  return reference(`${REFERENCE_PROBLEMS}; WWW-Authenticate on a 401 is RFC 9110 §15.5.2's MUST (the reference sends none)`);
}

function problemDetails(f: Facts): Standing {
  if (f.status === 500) return reference("the reference's problem.rs: a 500 says nothing of the failure (\"Internal server error\")");
  if (f.status === 422) return required(`the specification: a validation failure is a 422 problem (${SPEC_ERRORS})`);
  if (isObject(f.body) && f.body.type === 'about:blank') return required('RFC 9457 §4.2.1: about:blank with the status phrase as title');
  return required('RFC 9457 §3.1: a handler\'s error rendered as a problem with its detail and instance');
}

function requestId(f: Facts): Standing {
  const sent = isObject(f.request.headers) ? (f.request.headers as Json)['X-Request-ID'] : undefined;
  const mw = isObject(f.handler.middleware) && isObject(f.handler.middleware.request_id) ? f.handler.middleware.request_id : {};
  if (mw.enabled === false) return required('the specification: request ids are off unless enabled (enable_request_id)');
  if (sent !== undefined && f.headers['x-request-id'] === '<<uuid>>') return keel('incoming request ids are validated before being echoed (1-128 characters of A-Z a-z 0-9 . _ : -): an id ends up in logs and other services\' headers; the reference echoes any value');
  return reference("the reference's tower-http request-id layers: a generated UUID v4, an incoming id propagated, on every answer");
}

function compression(f: Facts): Standing {
  const accept = isObject(f.request.headers) ? String((f.request.headers as Json)['Accept-Encoding'] ?? '') : '';
  if (/q=0(\.0*)?(\s*,|$)/.test(accept) || /q=/.test(accept)) return required('RFC 9110 §12.5.3: Accept-Encoding quality values (q=0 is "not acceptable") choose the coding');
  return reference("the reference's tower-http compression layer: br preferred to gzip, min_size, Vary: Accept-Encoding");
}

function rateLimit(): Standing {
  return keel('429 is RFC 6585 §4; keel answers it as a problem with Retry-After (RFC 9110 §10.2.3) and the IETF RateLimit-Policy header, so a client knows when to retry; the reference answers tower-governor\'s text');
}

function requestTimeout(f: Facts): Standing {
  if (f.status === 408) return keel('a timeout is a 408 problem with Connection: close (RFC 9110 §15.5.9); the reference sends an empty 408');
  return required('the specification: request_timeout refuses only handlers slower than it');
}

function websocketHandshake(f: Facts): Standing {
  if (f.status === 404) return keel('a plain GET to a WebSocket-only path is a 404 problem: the path has no HTTP route');
  return required('RFC 6455 §4.2.2: the opening handshake answers 101 with Sec-WebSocket-Accept derived from the key');
}

const RULES: Record<string, (f: Facts) => Standing> = {
  routing,
  limits,
  cors,
  auth,
  problem_details: problemDetails,
  request_id: requestId,
  compression,
  rate_limit: rateLimit,
  request_timeout: requestTimeout,
  websocket: websocketHandshake,
};

function session(d: SessionDocument): Standing {
  if (d.category === 'graphql_subscription') return required('GraphQL over WebSocket (graphql-transport-ws protocol) and the GraphQL specification\'s validation and execution');
  const messages = (d.websocket.session.messages ?? []) as Json[];
  if (messages.some((m) => m.frame_type === 'ping')) return required('RFC 6455 §5.5.2-3: a ping is answered by a pong with the same application data');
  return reference("the reference's websocket.rs: JSON text frames, its error frames for invalid JSON and a message failing the schema, a reply failing the response schema dropped");
}

/** The standing of one shipped case document (see the module comment). */
export function standingOf(d: SuiteCase | SessionDocument): Standing {
  if ('websocket' in d) return session(d);
  const f = factsOf(d);
  if (d.category.startsWith('params_')) return params(f);
  if (d.category.startsWith('validation_')) return validation(f);
  const rule = RULES[d.category];
  if (!rule) throw new Error(`suite/standing.ts: no standing rule for category ${JSON.stringify(d.category)}: add one`);
  return rule(f);
}
