/**
 * Generated variants, part 2: rules keyed on what a case is — its route, its configuration records
 * (`cors`, `jwt_auth`, `api_key_auth`, body limits) and the framework-owned answer it expects — never
 * on case ids. Each rule returns one new case (a fresh random choice per call) or undefined when the
 * case is not one it can vary; the expected answer is the base's, changed only where the rule says how.
 */
import { createHmac } from 'node:crypto';
import { buildRequest } from './client.js';
import type { ConformanceCase } from './types.js';
import { type Rng, word } from './variant-rng.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));
const pick = <T>(rng: Rng, list: readonly T[]): T => list[Math.floor(rng() * list.length)]!;

function headerKey(c: ConformanceCase, name: string): string | undefined {
  return Object.keys(c.request.headers ?? {}).find((k) => k.toLowerCase() === name.toLowerCase());
}

/** Replace `from` by `to` in every string of a JSON value. */
function substitute(v: unknown, from: string, to: string): unknown {
  if (typeof v === 'string') return v.split(from).join(to);
  if (Array.isArray(v)) return v.map((x) => substitute(x, from, to));
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, from, to)]));
  return v;
}

/** Whether a string of `v` (not a key) holds `name` as a whole word. */
function mentionsWord(v: unknown, name: string): boolean {
  const re = new RegExp(`(^|[^A-Za-z0-9_])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^A-Za-z0-9_]|$)`);
  const walk = (x: unknown): boolean => (typeof x === 'string' ? re.test(x) : Array.isArray(x) ? x.some(walk) : isObject(x) ? Object.values(x).some(walk) : false);
  return walk(v);
}

/** Replace the whole word `from` by `to` in every string of a JSON value. */
function substituteWord(v: unknown, from: string, to: string): unknown {
  const re = new RegExp(`(^|[^A-Za-z0-9_])${from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=[^A-Za-z0-9_]|$)`, 'g');
  const walk = (x: unknown): unknown => (typeof x === 'string' ? x.replace(re, `$1${to}`) : Array.isArray(x) ? x.map(walk) : isObject(x) ? Object.fromEntries(Object.entries(x).map(([k, y]) => [k, walk(y)])) : x);
  return walk(v);
}

const mentions = (v: unknown, s: string) => s !== '' && JSON.stringify(v ?? null).includes(s);

/**
 * Rename one literal segment of the route and of the request path together, keeping its length (a URI
 * length limit sees the same length). Not when the expected answer mentions the path.
 */
export function renamePathSegment(base: ConformanceCase, rng: Rng): ConformanceCase | undefined {
  const route = base.handler.route.split('/');
  const [path, query] = base.request.path.split(/\?(.*)/s, 2) as [string, string | undefined];
  const segs = path.split('/');
  if (route.length !== segs.length || mentions(base.expected, path)) return undefined;
  const literal = route.map((s, i) => i).filter((i) => route[i] !== '' && !route[i]!.includes('{') && route[i] === segs[i] && /^[A-Za-z0-9_-]+$/.test(route[i]!));
  if (!literal.length) return undefined;
  const i = pick(rng, literal);
  let name = word(rng, route[i]!.length);
  if (name === route[i]) name = `${name.slice(0, -1)}${name.endsWith('q') ? 'z' : 'q'}`;
  const v = structuredClone(base);
  const r = [...route];
  r[i] = name;
  segs[i] = name;
  v.handler.route = r.join('/');
  v.request.path = segs.join('/') + (query !== undefined ? `?${query}` : '');
  return v;
}

const PARAM_SECTIONS: Record<string, 'query' | 'path' | 'cookies'> = { query: 'query', path: 'path', cookie: 'cookies' };

/**
 * Rename the parameter every error item of a 422 names (query, path or cookie), in the handler's
 * parameters, the route's placeholder, the request and each item's `loc` together.
 */
export function renameParameter(base: ConformanceCase, rng: Rng): ConformanceCase | undefined {
  const errors = (base.expected.body as Json | undefined)?.errors;
  if (base.expected.status_code !== 422 || !Array.isArray(errors) || !errors.length) return undefined;
  const locs = errors.map((e) => (isObject(e) && Array.isArray(e.loc) ? e.loc : []));
  const [source, name] = locs[0] ?? [];
  const section = PARAM_SECTIONS[String(source)];
  if (!section || typeof name !== 'string' || locs.some((l) => l.length !== 2 || l[0] !== source || l[1] !== name)) return undefined;
  const params = base.handler.parameters?.[section];
  if (!params || !isObject(params[name]) || 'alias' in params[name]!) return undefined;
  const renamed = `${name}_${word(rng, 3)}`;
  const v = structuredClone(base);
  v.handler.parameters![section] = Object.fromEntries(Object.entries(params).map(([k, spec]) => [k === name ? renamed : k, structuredClone(spec)]));
  const req = v.request;
  if (section === 'path') {
    const route = v.handler.route.replace(new RegExp(`\\{${name}(:[A-Za-z]+)?\\}`), (_m, t: string | undefined) => `{${renamed}${t ?? ''}}`);
    if (route === v.handler.route) return undefined;
    v.handler.route = route;
  } else if (section === 'query') {
    if (req.query_params && name in req.query_params) {
      req.query_params = Object.fromEntries(Object.entries(req.query_params).map(([k, x]) => [k === name ? renamed : k, x]));
    }
    const rename = (q: string) => q.split('&').map((p) => (decodeURIComponent(p.split('=')[0]!.replace(/\+/g, ' ')) === name ? `${encodeURIComponent(renamed)}${p.slice(p.split('=')[0]!.length)}` : p)).join('&');
    if (req.query_string !== undefined) req.query_string = rename(req.query_string);
    const q = req.path.indexOf('?');
    if (q >= 0) req.path = `${req.path.slice(0, q)}?${rename(req.path.slice(q + 1))}`;
  } else if (req.cookies && name in req.cookies) {
    req.cookies = Object.fromEntries(Object.entries(req.cookies).map(([k, x]) => [k === name ? renamed : k, x]));
  } else if (headerKey(v, 'cookie')) return undefined;
  for (const e of (v.expected.body as { errors: Json[] }).errors) (e.loc as unknown[])[1] = renamed;
  // The old name anywhere else (a message, a body, another record) is something this rule cannot move.
  if (mentionsWord(v.expected, name) || mentions(v.handler, `"${name}"`)) return undefined;
  return v;
}

/** Whether the request path matches the route (a `{x:path}` placeholder takes the rest). */
export function matchesRoute(route: string, path: string): boolean {
  const src = route.split(/(\{[^}]+\})/).map((part) => (!part.startsWith('{') ? part.replace(/[.*+?^$()|[\]\\]/g, '\\$&') : part.includes(':path') ? '.+' : '[^/]+'));
  return new RegExp(`^${src.join('')}$`).test(path.split('?', 1)[0]!);
}

/** A 404 for a path no route matches: other unknown paths (the answer's mentions of the path moved with it). */
export function unknownPath(base: ConformanceCase, rng: Rng): ConformanceCase | undefined {
  if (base.expected.status_code !== 404 || matchesRoute(base.handler.route, base.request.path)) return undefined;
  const [path, query] = base.request.path.split(/\?(.*)/s, 2) as [string, string | undefined];
  const v = structuredClone(base);
  const next = `/${word(rng, int(rng, 4, 9))}/${word(rng, int(rng, 3, 8))}`;
  v.request.path = next + (query !== undefined ? `?${query}` : '');
  v.expected = substitute(v.expected, path, next) as ConformanceCase['expected'];
  return v;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** A 405 for a method the route does not serve: other such methods (the `Allow` header stays the route's). */
export function unknownMethod(base: ConformanceCase, rng: Rng): ConformanceCase | undefined {
  const sent = base.request.method.toUpperCase();
  if (base.expected.status_code !== 405 || sent === base.handler.method.toUpperCase()) return undefined;
  const allowed = new Set([base.handler.method.toUpperCase(), ...String(Object.entries(base.expected.headers ?? {}).find(([k]) => k.toLowerCase() === 'allow')?.[1] ?? '').split(/\s*,\s*/)]);
  const others = METHODS.filter((m) => !allowed.has(m) && m !== sent);
  if (!others.length || mentions(base.expected.body, sent)) return undefined;
  const v = structuredClone(base);
  v.request.method = pick(rng, others);
  return v;
}

function corsRecord(c: ConformanceCase): Json | undefined {
  const r = (c.handler.middleware as Json | undefined)?.cors ?? c.handler.cors;
  return isObject(r) ? r : undefined;
}
const listOf = (r: Json, key: string) => (Array.isArray(r[`allowed_${key}`]) ? r[`allowed_${key}`] : Array.isArray(r[`allow_${key}`]) ? r[`allow_${key}`] : undefined) as string[] | undefined;

/**
 * A CORS refusal (status ≥ 400) of an origin the record does not allow: other disallowed origins; of a
 * preflight whose origin is allowed but whose requested headers or method are not: other such headers
 * or methods. The answer's mentions of the origin move with it.
 */
export function disallowedCors(base: ConformanceCase, rng: Rng): ConformanceCase | undefined {
  const cors = corsRecord(base);
  const originKey = headerKey(base, 'origin');
  if (!cors || !originKey || base.expected.status_code < 400) return undefined;
  const origins = listOf(cors, 'origins') ?? [];
  const origin = base.request.headers![originKey]!;
  const v = structuredClone(base);
  if (!origins.includes('*') && !origins.includes(origin) && !cors.allow_origin_regex && !cors.origin_regex) {
    const next = `https://${word(rng, int(rng, 4, 10))}.example.${pick(rng, ['net', 'org', 'io'])}`;
    v.request.headers![originKey] = next;
    if (origin.length >= 4) v.expected = substitute(v.expected, origin, next) as ConformanceCase['expected'];
    else if (mentions(base.expected, origin)) return undefined;
    return v;
  }
  const acrh = headerKey(base, 'access-control-request-headers');
  const acrm = headerKey(base, 'access-control-request-method');
  const allowedHeaders = (listOf(cors, 'headers') ?? []).map((h) => h.toLowerCase());
  const allowedMethods = (listOf(cors, 'methods') ?? []).map((m) => m.toUpperCase());
  if (base.request.method.toUpperCase() !== 'OPTIONS' || !acrm) return undefined;
  const sentHeaders = acrh ? base.request.headers![acrh]!.split(',').map((h) => h.trim().toLowerCase()) : [];
  if (acrh && !allowedHeaders.includes('*') && sentHeaders.some((h) => !allowedHeaders.includes(h)) && allowedMethods.includes(base.request.headers![acrm]!.toUpperCase())) {
    if (mentions(base.expected, base.request.headers![acrh]!)) return undefined;
    v.request.headers![acrh] = `X-${word(rng, 1).toUpperCase()}${word(rng, int(rng, 3, 8))}`;
    return v;
  }
  if (!allowedMethods.includes('*') && !allowedMethods.includes(base.request.headers![acrm]!.toUpperCase()) && !mentions(base.expected, base.request.headers![acrm]!)) {
    const others = METHODS.filter((m) => !allowedMethods.includes(m) && m !== base.request.headers![acrm]!.toUpperCase());
    if (!others.length) return undefined;
    v.request.headers![acrm] = pick(rng, others);
    return v;
  }
  return undefined;
}

/** A 413 from a body limit record (`body_limit.max_bytes`, `max_body_size`): other bodies over the limit. */
export function oversizeBody(base: ConformanceCase, rng: Rng): ConformanceCase | undefined {
  const limit = Number(((base.handler.middleware as Json | undefined)?.body_limit as Json | undefined)?.max_bytes ?? base.handler.max_body_size);
  if (base.expected.status_code !== 413 || !Number.isInteger(limit) || limit <= 0 || headerKey(base, 'content-length')) return undefined;
  const size = limit + int(rng, 1, Math.max(2, limit));
  const v = structuredClone(base);
  const body = v.request.body;
  const fill = `{{ repeat '${pick(rng, ['x', 'y', 'z', 'a'])}' ${size} times }}`;
  if (typeof body === 'string') v.request.body = fill;
  else if (isObject(body)) {
    const key = Object.keys(body).find((k) => typeof body[k] === 'string');
    if (key === undefined) return undefined;
    body[key] = fill;
  } else return undefined;
  // An answer that states the body's size states the new one (`Request body of 211 bytes …`).
  const before = String(buildRequest(base.request).body?.length ?? 0);
  const after = String(buildRequest(v.request).body?.length ?? 0);
  if (mentionsWord(base.expected, after)) return undefined;
  if (mentionsWord(base.expected, before)) v.expected = substituteWord(v.expected, before, after) as ConformanceCase['expected'];
  return v;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/**
 * A JWT refusal (401/403 with a `jwt_auth` HS256 record): another token failing the same way. The
 * base token's header and claims are kept (so an expired, not-yet-valid, wrong-issuer, claim-less or
 * other-algorithm token stays so) with another subject; it is signed (HMAC-SHA256) with the record's
 * secret when the base's signature holds, else with another secret; a token that is not three base64url parts is replaced by another such.
 */
export function otherBadToken(base: ConformanceCase, rng: Rng): ConformanceCase | undefined {
  const jwt = (base.handler.middleware as Json | undefined)?.jwt_auth;
  const key = headerKey(base, 'authorization');
  if (!isObject(jwt) || !key || ![401, 403].includes(base.expected.status_code) || (jwt.algorithm ?? 'HS256') !== 'HS256' || typeof jwt.secret !== 'string') return undefined;
  const value = base.request.headers![key]!;
  const bearer = /^Bearer /.test(value);
  const token = bearer ? value.slice(7) : value;
  const parts = token.split('.');
  const v = structuredClone(base);
  let payload: Json | undefined;
  try {
    payload = parts.length === 3 ? (JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Json) : undefined;
  } catch {
    payload = undefined;
  }
  if (!isObject(payload)) {
    if (!bearer || mentions(base.expected, token)) return undefined;
    // As many dot-separated parts as the base token (an answer may count them).
    v.request.headers![key] = `Bearer ${parts.map(() => word(rng, int(rng, 4, 12))).join('.')}`;
    return v;
  }
  const signingInput = `${parts[0]}.${parts[1]}`;
  const valid = createHmac('sha256', jwt.secret).update(signingInput).digest('base64url') === parts[2];
  if (mentions(base.expected, String(payload.sub ?? '\u0000'))) return undefined;
  const claims = { ...payload, ...('sub' in payload ? { sub: `user-${word(rng, 6)}` } : { jti: word(rng, 10) }) };
  // The base's header as sent: its `alg` may be what the refusal is about.
  const head = parts[0]!;
  const body = b64url(JSON.stringify(claims));
  const secret = valid ? jwt.secret : `${jwt.secret}-${word(rng, 8)}`;
  const sig = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
  v.request.headers![key] = `${bearer ? 'Bearer ' : ''}${head}.${body}.${sig}`;
  return v;
}

/** A 401 from an `api_key_auth` record for a key it does not list: other unlisted keys. */
export function otherBadApiKey(base: ConformanceCase, rng: Rng): ConformanceCase | undefined {
  const rec = (base.handler.middleware as Json | undefined)?.api_key_auth;
  if (!isObject(rec) || base.expected.status_code !== 401) return undefined;
  const key = headerKey(base, String(rec.header_name ?? 'X-API-Key'));
  const keys = Array.isArray(rec.keys) ? rec.keys.map(String) : [];
  if (!key || keys.includes(base.request.headers![key]!) || mentions(base.expected, base.request.headers![key]!)) return undefined;
  const v = structuredClone(base);
  v.request.headers![key] = `sk_${word(rng, int(rng, 6, 16))}`;
  return v;
}
