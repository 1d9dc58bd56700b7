/**
 * JSON-RPC 2.0 error objects (https://www.jsonrpc.org/specification §5.1) and the translation of
 * Ajv's schema errors into the `data` member clients see for -32602 Invalid params.
 */
import type { ErrorObject } from 'ajv';

/** The reserved error codes of JSON-RPC 2.0 §5.1, with the specification's messages. */
export const JSON_RPC_ERRORS = Object.freeze({
  PARSE_ERROR: { code: -32700, message: 'Parse error' },
  INVALID_REQUEST: { code: -32600, message: 'Invalid Request' },
  METHOD_NOT_FOUND: { code: -32601, message: 'Method not found' },
  INVALID_PARAMS: { code: -32602, message: 'Invalid params' },
  INTERNAL_ERROR: { code: -32603, message: 'Internal error' },
} as const);

/** The error member of a JSON-RPC response. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * Throw this from an RPC handler to answer with a chosen error (application codes live outside
 * -32768..-32000, which JSON-RPC reserves). Anything else a handler throws becomes -32603
 * without details, so internals never reach the client.
 *
 * @example
 * throw new JsonRpcError(404, 'User not found', { userId });
 */
export class JsonRpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    if (!Number.isInteger(code)) throw new TypeError(`JsonRpcError code must be an integer, got ${String(code)}`);
    this.name = 'JsonRpcError';
    this.code = code;
    this.data = data;
  }

  toJSON(): JsonRpcErrorObject {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

/** One failed schema check, as sent in `error.data.errors`. */
export interface ParamIssue {
  /** Dotted path from the params root (`userData.email`, `items.0.id`); "" for the root. */
  field: string;
  reason: string;
  /** The JSON Schema keyword that failed (`required`, `type`, `format`, ...). */
  keyword: string;
}

/** Formats whose conventional spelling is upper case in messages ("Invalid UUID format"). */
const UPPER_FORMATS = new Set(['uuid', 'uri', 'iri', 'ipv4', 'ipv6', 'url']);

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function valueAt(root: unknown, pointer: string): unknown {
  if (!pointer) return root;
  let cur: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

function dotted(pointer: string, extra?: string): string {
  const parts = pointer ? pointer.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')) : [];
  if (extra !== undefined) parts.push(extra);
  return parts.join('.');
}

/** Turn Ajv's errors into `{field, reason}` pairs written for people (the input value is never echoed). */
export function describeSchemaErrors(errors: readonly ErrorObject[] | null | undefined, input: unknown): ParamIssue[] {
  const out: ParamIssue[] = [];
  for (const e of errors ?? []) {
    const p = e.params as Record<string, unknown>;
    let field = dotted(e.instancePath);
    let reason: string;
    switch (e.keyword) {
      case 'required':
        field = dotted(e.instancePath, String(p.missingProperty));
        reason = 'Required field is missing';
        break;
      case 'additionalProperties':
        field = dotted(e.instancePath, String(p.additionalProperty));
        reason = 'Unknown field';
        break;
      case 'type':
        reason = `Expected ${String(p.type).replace(/,/g, ' or ')}, got ${typeName(valueAt(input, e.instancePath))}`;
        break;
      case 'format': {
        const f = String(p.format);
        reason = `Invalid ${UPPER_FORMATS.has(f) ? f.toUpperCase() : f} format`;
        break;
      }
      case 'enum':
        reason = `Must be one of: ${(p.allowedValues as unknown[]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`;
        break;
      case 'minLength':
        reason = `Must be at least ${String(p.limit)} characters`;
        break;
      case 'maxLength':
        reason = `Must not exceed ${String(p.limit)} characters`;
        break;
      default:
        reason = (e.message ?? 'Invalid value').replace(/^must/, 'Must');
    }
    out.push({ field, reason, keyword: e.keyword });
  }
  return out;
}

/**
 * `data` of a -32602 response: the first issue flattened (`field`, `reason`, what most clients show)
 * plus every issue in `errors` (Ajv runs with allErrors).
 */
export function invalidParamsData(issues: readonly ParamIssue[]): { field: string; reason: string; errors: readonly ParamIssue[] } {
  const first = issues[0] ?? { field: '', reason: 'Invalid params', keyword: 'schema' };
  return { field: first.field, reason: first.reason, errors: issues };
}

/**
 * keel's own server errors (§5.1 leaves -32000..-32099 to implementations; the codes and messages are the
 * ones EIP-1474 gave them, which many JSON-RPC clients already know): a client past its CPU budget
 * (HTTP 429), a server shedding expensive work (HTTP 503). Sent with `Retry-After` (lib/jsonrpc/work.ts).
 */
export const JSON_RPC_SERVER_ERRORS = Object.freeze({
  LIMIT_EXCEEDED: { code: -32005, message: 'Limit exceeded' },
  RESOURCE_UNAVAILABLE: { code: -32002, message: 'Resource unavailable' },
} as const);
