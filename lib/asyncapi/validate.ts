/**
 * Validating a message payload against an AsyncAPI document, with Ajv.
 *
 * The whole document is added to Ajv under an id derived from its SHA-256, and each payload is
 * compiled as `{ "$ref": "<id>#<pointer>" }`: Ajv then resolves `#/components/schemas/...` and
 * recursive schemas itself. Compiled validators are cached per document hash, in a bounded LRU,
 * because the documents arrive from clients.
 */
import { createHash } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ValidationResponse } from '../records/protocol.js';
import { analyseAsyncApi, type AsyncApiModel } from './parse.js';
import { AsyncApiDocumentError } from './resolve.js';
import { AsyncApiBudgetError, ExpansionBudget } from './budget.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** How many distinct documents keep their compiled validators. */
export const DEFAULT_VALIDATOR_CACHE_SIZE = 32;

/**
 * Payload schema formats Ajv can check: AsyncAPI Schema and JSON Schema (draft-07 family). Avro,
 * RAML, OpenAPI 3.0 and Protobuf payloads are reported as not validatable rather than guessed at.
 */
function isJsonSchemaFormat(format: string | undefined): boolean {
  if (format === undefined) return true;
  const f = format.toLowerCase();
  return f.startsWith('application/vnd.aai.asyncapi') || f.startsWith('application/schema+json') || f.startsWith('application/schema+yaml');
}

interface Entry {
  model: AsyncApiModel;
  ajv: Ajv;
  docId: string;
  validators: Map<string, ValidateFunction>;
}

function formatErrors(v: ValidateFunction): string[] {
  return (v.errors ?? []).map((e) => {
    const where = e.instancePath || '/';
    const extra = e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})` : '';
    return `${where} ${e.message ?? 'is invalid'}${extra}`;
  });
}

/** JSON values in `v`, counting stopped once past `limit` (the body's nesting is at most MAX_JSON_DEPTH). */
function countValues(v: unknown, limit: number): number {
  let count = 1;
  if (typeof v !== 'object' || v === null) return count;
  for (const child of Array.isArray(v) ? v : Object.values(v)) {
    count += countValues(child, limit - count);
    if (count > limit) return count;
  }
  return count;
}

export interface PayloadValidatorOptions {
  /** Documents whose compiled validators are kept. Default `DEFAULT_VALIDATOR_CACHE_SIZE` (32). */
  cacheSize?: number;
}

/** Validates payloads against client-supplied AsyncAPI documents. */
export class PayloadValidator {
  readonly #cache = new Map<string, Entry>();
  readonly #size: number;

  constructor(options: PayloadValidatorOptions = {}) {
    this.#size = options.cacheSize ?? DEFAULT_VALIDATOR_CACHE_SIZE;
    if (!Number.isInteger(this.#size) || this.#size < 1) throw new RangeError(`PayloadValidator cacheSize must be an integer >= 1, got ${String(this.#size)}`);
  }

  #entry(spec: unknown, budget: ExpansionBudget): Entry {
    const hash = createHash('sha256').update(JSON.stringify(spec)).digest('hex');
    const hit = this.#cache.get(hash);
    if (hit) {
      // Re-insert: Map keeps insertion order, so the first key is the least recently used.
      this.#cache.delete(hash);
      this.#cache.set(hash, hit);
      return hit;
    }
    const model = analyseAsyncApi(spec, budget);
    // strict: false because AsyncAPI schemas carry keywords JSON Schema does not know (discriminator, externalDocs, x-*).
    // inlineRefs: false: Ajv would otherwise paste a referenced schema's code at every reference, so one
    // schema referenced a thousand times compiles to a thousand copies (the $ref fan-out, in generated code).
    const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false, inlineRefs: false });
    addFormats(ajv);
    const docId = `https://keel.invalid/asyncapi/${hash}.json`;
    ajv.addSchema(spec as object, docId, undefined, false);
    const entry: Entry = { model, ajv, docId, validators: new Map() };
    this.#cache.set(hash, entry);
    if (this.#cache.size > this.#size) this.#cache.delete(this.#cache.keys().next().value as string);
    return entry;
  }

  /**
   * Validate `payload` as `message` on `channel`. Throws AsyncApiDocumentError when the document
   * itself cannot be read or its payload schema does not compile, AsyncApiBudgetError when the document's
   * bindings or the payload schema expand past `budget` (default: the default limits); unknown channels and messages are `valid: false` with an explanation.
   */
  validate(spec: unknown, channel: string, message: string, payload: unknown, budget: ExpansionBudget = new ExpansionBudget()): ValidationResponse {
    const entry = this.#entry(spec, budget);
    const ch = entry.model.channels.find((c) => c.name === channel) ?? entry.model.channels.find((c) => c.address === channel);
    if (!ch) {
      const known = entry.model.channels.map((c) => JSON.stringify(c.name)).join(', ') || 'none';
      return { valid: false, errors: [`Channel ${JSON.stringify(channel)} is not defined in the document (channels: ${known})`] };
    }
    const msg = ch.messages.find((m) => m.name === message) ?? ch.messages.find((m) => m.aliases.includes(message));
    if (!msg) {
      const known = ch.messages.map((m) => JSON.stringify(m.name)).join(', ') || 'none';
      return { valid: false, errors: [`Message ${JSON.stringify(message)} is not defined on channel ${JSON.stringify(ch.name)} (messages: ${known})`] };
    }
    // A message without a payload schema constrains nothing (AsyncAPI: payload is optional).
    if (msg.payloadPointer === undefined) return { valid: true, errors: [] };
    if (!isJsonSchemaFormat(msg.schemaFormat)) {
      return { valid: false, errors: [`The payload of ${JSON.stringify(msg.name)} uses schemaFormat ${JSON.stringify(msg.schemaFormat)}, which keel cannot validate`] };
    }
    let validator = entry.validators.get(msg.payloadPointer);
    if (!validator) {
      // Ajv follows each $ref at validation time, so a payload schema that fans out costs as much to run
      // as to expand: it is held to the request's budget before it is compiled (AsyncApiBudgetError).
      budget.ensure(budget.measure(spec, { $ref: msg.payloadPointer }, msg.pointer), msg.payloadPointer);
      try {
        validator = entry.ajv.compile({ $ref: `${entry.docId}${msg.payloadPointer}` });
      } catch (err) {
        throw new AsyncApiDocumentError(msg.payloadPointer, `the payload schema of ${JSON.stringify(msg.name)} does not compile: ${(err as Error).message}`);
      }
      entry.validators.set(msg.payloadPointer, validator);
    }
    // With allErrors, Ajv keeps an error object per failing value: a payload of a million values that all
    // fail would hold a million of them. The payload's values draw on the same budget as the expansions.
    const values = countValues(payload, budget.maxNodes - budget.nodes + 1);
    if (budget.nodes + values > budget.maxNodes) {
      throw new AsyncApiBudgetError('', 'max_expanded_nodes', budget.maxNodes, budget.nodes + values, 'the payload, with the document\'s expansions, holds');
    }
    return validator(payload) ? { valid: true, errors: [] } : { valid: false, errors: formatErrors(validator) };
  }
}
