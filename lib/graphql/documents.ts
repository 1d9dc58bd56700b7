/**
 * Parsed and validated GraphQL documents, cached per query text (as mercurius does): parsing and
 * running graphql-js's ~30 validation rules cost far more than executing a small query, and clients
 * send the same few query strings over and over.
 *
 * What is cached is the *outcome* of parse + validation (specified rules and the route's limits:
 * introspection, depth, complexity), so a document rejected by a limit is rejected again from the
 * cache and every distinct query text is checked once with every rule. The one input besides the
 * text is the request's variables, which complexity (`first: $n`) and the response-size estimate (any
 * argument: a `$n` echoed back costs its length) read; a document whose arguments take a variable has
 * those two checked again on each request.
 *
 * The cache is a bounded LRU (entries and total query text), so distinct queries from clients
 * cannot grow memory without limit; queries longer than the text budget are checked but not kept.
 */
import { LRUCache } from 'lru-cache';
import {
  BREAK, GraphQLError, Kind, parse, specifiedRules, validate, visit,
  type DocumentNode, type GraphQLSchema, type ValidationRule, type ValueNode,
} from 'graphql';
import { complexityLimitRule, depthLimitRule, introspectionDisabledRule, PAGINATION_ARGUMENTS, type GraphqlLimits } from './limits.js';
import { responseSizeErrors, responseSizeRule } from './budget.js';
import { withoutSuggestions } from './suggestions.js';

/** Most distinct query texts kept per route (mercurius keeps 1024). */
export const DEFAULT_DOCUMENT_CACHE_ENTRIES = 1000;
/**
 * Most query text kept per route, in UTF-16 code units. A parsed document holds its tokens and locations
 * (error locations need them): about 100 bytes of heap per character, so this bounds the cache near 25 MB.
 */
export const DEFAULT_DOCUMENT_CACHE_TEXT = 256 * 1024;

/**
 * Most lexical tokens in one query (graphql-js's `parse(…, { maxTokens })`), checked while parsing, so
 * a query over it costs no validation. Parsing and validating up to this many tokens took at most
 * ~100 ms of CPU in the worst shapes found (the same nested field repeated, which graphql-js's
 * OverlappingFieldsCanBeMergedRule compares pairwise); GraphiQL's introspection query has under 200
 * tokens, and graphql-armor's default is 1000.
 */
export const DEFAULT_MAX_TOKENS = 5000;

export interface DocumentCacheOptions {
  /** Default DEFAULT_DOCUMENT_CACHE_ENTRIES (1000). */
  maxEntries?: number;
  /** Default DEFAULT_DOCUMENT_CACHE_TEXT (256 Ki code units). */
  maxText?: number;
  /** Most tokens in a query; more is refused with TOKEN_LIMIT_EXCEEDED (400). Default DEFAULT_MAX_TOKENS (5000). */
  maxTokens?: number;
}

interface Checked {
  /** Null when the text does not parse. */
  readonly document: DocumentNode | null;
  /** The errors of every rule whose outcome the document alone decides. */
  readonly errors: readonly GraphQLError[];
  /** Complexity reads the request's variables (`first: $n`): left out of `errors`, checked per request. */
  readonly variableComplexity: boolean;
  /** The response-size estimate reads them (any argument): left out of `errors`, estimated per request. */
  readonly variableSize: boolean;
}

function holdsVariable(value: ValueNode): boolean {
  if (value.kind === Kind.VARIABLE) return true;
  if (value.kind === Kind.LIST) return value.values.some(holdsVariable);
  if (value.kind === Kind.OBJECT) return value.fields.some((f) => holdsVariable(f.value));
  return false;
}

/** True when an argument's value (a pagination argument's, when `paginationOnly`) holds a variable: a measure then depends on the request. */
function argumentTakesVariable(document: DocumentNode, paginationOnly: boolean): boolean {
  let found = false;
  visit(document, {
    Argument(node) {
      if ((!paginationOnly || PAGINATION_ARGUMENTS.includes(node.name.value)) && holdsVariable(node.value)) {
        found = true;
        return BREAK;
      }
      return false;
    },
  });
  return found;
}

/** True when `prepare` answered with errors rather than a document. */
export function isRejected(checked: DocumentNode | readonly GraphQLError[]): checked is readonly GraphQLError[] {
  return Array.isArray(checked);
}

/**
 * Parse + validate with the route's limits, through a per-route cache.
 *
 * @example
 * const documents = new DocumentCache(schema, { introspection_enabled: false, depth_limit: 8, complexity_limit: null });
 * const checked = documents.prepare('{ me { id } }', undefined); // a DocumentNode, or the errors to send
 */
export class DocumentCache {
  readonly #schema: GraphQLSchema;
  readonly #limits: Readonly<GraphqlLimits>;
  /** The specified rules and the limits that never read variables (introspection, depth; built once). */
  readonly #baseRules: readonly ValidationRule[];
  /** Serialized answer cap (null: unlimited; lib/graphql/budget.ts). */
  readonly #maxResponseBytes: number | null;
  readonly #cache: LRUCache<string, Checked>;
  readonly #maxTokens: number;

  constructor(schema: GraphQLSchema, limits: Readonly<GraphqlLimits>, options: DocumentCacheOptions = {}) {
    this.#schema = schema;
    this.#limits = limits;
    this.#maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    if (!Number.isInteger(this.#maxTokens) || this.#maxTokens < 1) {
      throw new TypeError(`maxTokens must be a positive integer, got ${String(options.maxTokens)}`);
    }
    const base: ValidationRule[] = [...specifiedRules];
    if (!limits.introspection_enabled) base.push(introspectionDisabledRule);
    if (limits.depth_limit !== null) base.push(depthLimitRule(limits.depth_limit));
    this.#baseRules = base;
    this.#maxResponseBytes = limits.max_response_bytes ?? null;
    this.#cache = new LRUCache<string, Checked>({
      max: options.maxEntries ?? DEFAULT_DOCUMENT_CACHE_ENTRIES,
      maxSize: options.maxText ?? DEFAULT_DOCUMENT_CACHE_TEXT,
      // A query longer than the whole budget is not stored (lru-cache skips entries above maxSize).
      sizeCalculation: (_value, query) => Math.max(1, query.length),
    });
  }

  /** Query texts currently cached. */
  get size(): number {
    return this.#cache.size;
  }

  /** The document to execute for `query`, or the errors to answer with (syntax, token limit, validation, limits). */
  prepare(query: string, variables: Readonly<Record<string, unknown>> | null | undefined): DocumentNode | readonly GraphQLError[] {
    let checked = this.#cache.get(query);
    if (checked === undefined) {
      checked = this.#check(query);
      this.#cache.set(query, checked);
    }
    const { document } = checked;
    if (document === null || (!checked.variableComplexity && !checked.variableSize)) return checked.errors.length > 0 ? checked.errors : document!;
    const vars = variables ?? {};
    if (checked.errors.length > 0) {
      // Already invalid: validate again with every rule so errors come in the order graphql-js reports them.
      return this.#hideSuggestions(validate(this.#schema, document, this.#rules(vars, true, true)));
    }
    const errors: GraphQLError[] = [];
    if (checked.variableComplexity) errors.push(...validate(this.#schema, document, [complexityLimitRule(this.#limits.complexity_limit!, vars)]));
    // The estimate walks the document itself: no second graphql-js validation pass per request.
    if (checked.variableSize) errors.push(...responseSizeErrors(this.#schema, document, this.#maxResponseBytes!, vars));
    return errors.length > 0 ? this.#hideSuggestions(errors) : document;
  }

  /** The base rules, then complexity and the response-size estimate (with `variables`) when asked for and limited. */
  #rules(variables: Readonly<Record<string, unknown>>, complexity: boolean, size: boolean): ValidationRule[] {
    const rules = [...this.#baseRules];
    if (complexity && this.#limits.complexity_limit !== null) rules.push(complexityLimitRule(this.#limits.complexity_limit, variables));
    if (size && this.#maxResponseBytes !== null) rules.push(responseSizeRule(this.#maxResponseBytes, variables));
    return rules;
  }

  /** With introspection disabled, validation messages do not suggest names of the schema (withoutSuggestions). */
  #hideSuggestions(errors: readonly GraphQLError[]): readonly GraphQLError[] {
    return this.#limits.introspection_enabled ? errors : errors.map(withoutSuggestions);
  }

  #check(query: string): Checked {
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: this.#maxTokens });
    } catch (err) {
      if (err instanceof GraphQLError) {
        // graphql-js: "Document contains more that N tokens. Parsing aborted." (sic): keel's wording and a code.
        const error = /tokens\. Parsing aborted\.$/.test(err.message)
          ? new GraphQLError(`Query exceeds the limit of ${this.#maxTokens} tokens`, { extensions: { code: 'TOKEN_LIMIT_EXCEEDED', limit: this.#maxTokens } })
          : err;
        return { document: null, errors: [error], variableComplexity: false, variableSize: false };
      }
      // graphql-js parses recursively: a few thousand nested selections overflow the stack. That is
      // the query's fault (400), and the stack overflow is not a message for the client.
      if (err instanceof RangeError) return { document: null, errors: [new GraphQLError('Syntax Error: Document is nested too deeply. Parsing aborted.')], variableComplexity: false, variableSize: false };
      throw err;
    }
    const variableComplexity = this.#limits.complexity_limit !== null && argumentTakesVariable(document, true);
    const variableSize = this.#maxResponseBytes !== null && argumentTakesVariable(document, false);
    const errors = validate(this.#schema, document, this.#rules({}, !variableComplexity, !variableSize));
    return { document, errors: this.#hideSuggestions(errors), variableComplexity, variableSize };
  }
}
