/**
 * Automatic persisted queries (Apollo's APQ protocol,
 * https://github.com/apollographql/apollo-link-persisted-queries#protocol): a client sends
 * `extensions.persistedQuery = {version: 1, sha256Hash}` and no `query`; the server answers from the
 * query text it has under that hash, or with `PersistedQueryNotFound` (code PERSISTED_QUERY_NOT_FOUND),
 * after which the client sends the text with the hash and the server keeps it. A text whose SHA-256
 * is not the hash it came with is refused (PERSISTED_QUERY_HASH_MISMATCH), so one client cannot make
 * a hash answer another query.
 *
 * What is kept is a bounded LRU per route (entries and total text, the same bounds as the document
 * cache), so clients cannot grow memory without limit; a request without the extension costs nothing.
 * Errors are request errors: 400 with `errors` and no `data` (docs/graphql.md's status table).
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { GraphQLError } from 'graphql';
import { DEFAULT_DOCUMENT_CACHE_ENTRIES, DEFAULT_DOCUMENT_CACHE_TEXT } from './documents.js';

export interface PersistedQueryOptions {
  /** Most hashes kept. Default DEFAULT_DOCUMENT_CACHE_ENTRIES (1000). */
  maxEntries?: number;
  /** Most query text kept, in UTF-16 code units. Default DEFAULT_DOCUMENT_CACHE_TEXT (256 Ki). */
  maxText?: number;
}

const SHA256_HEX = /^[0-9a-f]{64}$/i;

function refused(message: string, code: string, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extra } });
}

/** The query text of one request with the APQ extension, or the error to answer it with. */
export type PersistedOutcome = { query: string } | { error: GraphQLError };

export class PersistedQueries {
  readonly #texts: LRUCache<string, string>;

  constructor(options: PersistedQueryOptions = {}) {
    const maxText = options.maxText ?? DEFAULT_DOCUMENT_CACHE_TEXT;
    this.#texts = new LRUCache<string, string>({ max: options.maxEntries ?? DEFAULT_DOCUMENT_CACHE_ENTRIES, maxSize: maxText, sizeCalculation: (text) => Math.max(1, text.length) });
    this.maxText = maxText;
  }

  readonly maxText: number;

  /**
   * Resolve a request's `extensions.persistedQuery` against its `query` (undefined when the request
   * does not use APQ: it is served as it is).
   */
  resolve(query: unknown, extensions: unknown): PersistedOutcome | undefined {
    const pq = extensions !== null && typeof extensions === 'object' ? (extensions as Record<string, unknown>).persistedQuery : undefined;
    if (pq === undefined) return undefined;
    const { version, sha256Hash: hash } = (pq ?? {}) as Record<string, unknown>;
    if (version !== 1) return { error: refused('Unsupported persisted query version', 'PERSISTED_QUERY_VERSION_UNSUPPORTED', { version: version ?? null }) };
    if (typeof hash !== 'string' || !SHA256_HEX.test(hash)) return { error: refused('persistedQuery.sha256Hash must be a SHA-256 hex digest', 'PERSISTED_QUERY_INVALID') };
    const key = hash.toLowerCase();
    if (typeof query === 'string') {
      if (createHash('sha256').update(query).digest('hex') !== key) return { error: refused('provided sha does not match query', 'PERSISTED_QUERY_HASH_MISMATCH') };
      // A text over the whole budget is served but not kept (the LRU would evict everything for it).
      if (query.length <= this.maxText) this.#texts.set(key, query);
      return { query };
    }
    const text = this.#texts.get(key);
    return text === undefined ? { error: refused('PersistedQueryNotFound', 'PERSISTED_QUERY_NOT_FOUND', { hash }) } : { query: text };
  }
}

/**
 * A request with its persisted query text in place (a POST's JSON body, or a GET's URL), and the
 * refusal to answer it with when the text is not found or does not match (the caller answers it:
 * graphql-http needs a query to reach its onSubscribe hook, so the text is then empty).
 */
export function withPersistedQuery(persisted: PersistedQueries, body: string | Record<string, unknown> | null, url: string): { body: typeof body; url: string; refusal?: GraphQLError } {
  if (body !== null && typeof body === 'object') {
    const outcome = persisted.resolve(body.query, body.extensions);
    if (!outcome) return { body, url };
    return 'error' in outcome ? { body: { ...body, query: '' }, url, refusal: outcome.error } : { body: { ...body, query: outcome.query }, url };
  }
  const q = url.indexOf('?');
  if (body !== null || q < 0) return { body, url };
  const params = new URLSearchParams(url.slice(q + 1));
  let extensions: unknown;
  try {
    extensions = JSON.parse(params.get('extensions') ?? 'null');
  } catch {
    return { body, url }; // graphql-http answers the unparsable parameter itself
  }
  const outcome = persisted.resolve(params.get('query') ?? undefined, extensions);
  if (!outcome) return { body, url };
  params.set('query', 'error' in outcome ? '' : outcome.query);
  const rewritten = `${url.slice(0, q)}?${params}`;
  return 'error' in outcome ? { body, url: rewritten, refusal: outcome.error } : { body, url: rewritten };
}
