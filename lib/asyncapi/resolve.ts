/**
 * Local `$ref` resolution inside one AsyncAPI document: JSON Pointers (RFC 6901) in URI fragments
 * (RFC 3986 §3.5), with protection against reference cycles and against documents that expand
 * exponentially (a "billion laughs" of `$ref`s), since documents come from clients.
 */

/** A document that cannot be read as AsyncAPI: names where (a JSON Pointer) and why. */
export class AsyncApiDocumentError extends Error {
  readonly pointer: string;
  constructor(pointer: string, message: string) {
    super(`${pointer || '#'}: ${message}`);
    this.name = 'AsyncApiDocumentError';
    this.pointer = pointer;
  }
}

/**
 * Most nodes one request's answer may expand to by default. It was the budget of each resolved
 * value; it is now the request's (AsyncApiConfig.max_expanded_nodes, DEFAULT_ASYNCAPI_MAX_EXPANDED_NODES).
 */
export const MAX_RESOLVED_NODES = 100_000;
/** Longest chain of `$ref` → `$ref` → … followed before keel calls it a cycle. */
const MAX_REF_CHAIN = 64;

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `a/b` → `a~1b` (RFC 6901 §3), then percent-encoded so the pointer is a valid URI fragment (RFC 6901 §6). */
export function escapeToken(token: string): string {
  return encodeURIComponent(token.replace(/~/g, '~0').replace(/\//g, '~1'));
}

/** Pointer of a child: `#/channels` + `user/events` → `#/channels/user~1events`. */
export function childPointer(pointer: string, key: string | number): string {
  return `${pointer}/${escapeToken(String(key))}`;
}

/** The tokens of a local reference `#/a/b~1c` (URI-decoded, then RFC 6901-unescaped). */
export function refTokens(ref: string, at: string): string[] {
  if (!ref.startsWith('#')) throw new AsyncApiDocumentError(at, `only local $refs ("#/...") are supported, got ${JSON.stringify(ref)}`);
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    throw new AsyncApiDocumentError(at, `$ref ${JSON.stringify(ref)} is not a valid URI fragment`);
  }
  if (fragment === '') return [];
  if (!fragment.startsWith('/')) throw new AsyncApiDocumentError(at, `$ref ${JSON.stringify(ref)} is not a JSON Pointer`);
  return fragment.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Canonical pointer (`#/a/b`) of a local reference. */
export function canonicalPointer(ref: string, at: string): string {
  return '#' + refTokens(ref, at).map((t) => '/' + escapeToken(t)).join('');
}

/** The value a local reference points at. */
export function lookup(doc: unknown, ref: string, at: string): unknown {
  let cur = doc;
  for (const token of refTokens(ref, at)) {
    const next = Array.isArray(cur) ? (/^(0|[1-9]\d*)$/.test(token) ? cur[Number(token)] : undefined) : isObject(cur) ? (Object.hasOwn(cur, token) ? cur[token] : undefined) : undefined;
    if (next === undefined) throw new AsyncApiDocumentError(at, `$ref ${JSON.stringify(ref)} points at nothing`);
    cur = next;
  }
  return cur;
}

/** A value and the pointer it lives at. */
export interface Located {
  value: unknown;
  pointer: string;
}

/** If `value` is a Reference Object, follow it (and any chain) to the real value and its pointer. */
export function follow(doc: unknown, value: unknown, pointer: string): Located {
  const seen = new Set<string>();
  let cur: Located = { value, pointer };
  while (isObject(cur.value) && typeof cur.value.$ref === 'string') {
    const target = canonicalPointer(cur.value.$ref, cur.pointer);
    if (seen.has(target) || seen.size >= MAX_REF_CHAIN) throw new AsyncApiDocumentError(pointer, 'the $ref chain is circular');
    seen.add(target);
    cur = { value: lookup(doc, cur.value.$ref, cur.pointer), pointer: target };
  }
  return cur;
}
