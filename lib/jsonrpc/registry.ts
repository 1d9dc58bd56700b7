/**
 * The RPC methods of an App: metadata (JsonRpcMethodInfo), handler, and the Ajv validators compiled
 * once, when the method is registered, so a bad schema fails at start-up and never per call.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ConfigError } from '../http/errors.js';
import { JsonRpcMethodInfo } from '../records/protocol.js';
import type { KeelRequest } from '../http/request.js';

// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** A request id (JSON-RPC 2.0 §4: string, number or null). */
export type JsonRpcId = string | number | null;

/** What an RPC handler learns about the call besides its params. */
export interface RpcContext {
  /** The HTTP request that carried the call (auth claims on `request.auth`, request id on `request.requestId`). */
  request: KeelRequest | undefined;
  /** The call's id; undefined for a notification. */
  id: JsonRpcId | undefined;
  /** True when the client sent no id and will get no response (JSON-RPC 2.0 §4.1). */
  notification: boolean;
  /** The method's metadata. */
  method: Readonly<JsonRpcMethodInfo>;
}

/** `(params, ctx) => result`; throw `JsonRpcError` to answer with a chosen error code. */
export type RpcHandler<P = any, R = unknown> = (params: P, ctx: RpcContext) => R | Promise<R>;

/** JsonRpcMethodInfo as accepted from code: snake_case or camelCase keys (generated from the record). */
export type { JsonRpcMethodInfoInput } from '../records/protocol.js';
import type { JsonRpcMethodInfoInput } from '../records/protocol.js';

export interface RegisteredRpcMethod {
  readonly info: Readonly<JsonRpcMethodInfo>;
  readonly handler: RpcHandler;
  readonly validateParams: ValidateFunction | undefined;
  readonly validateResult: ValidateFunction | undefined;
}

export interface JsonRpcRegistryOptions {
  /**
   * Check results against `result_schema`. Default: `process.env.NODE_ENV !== 'production'`
   * (read when the registry is created): a development aid that costs a validation per call.
   */
  validateResults?: boolean;
}

/** `rpc.` names are reserved for system extensions (JSON-RPC 2.0 §4). */
const RESERVED_PREFIX = 'rpc.';

/**
 * The methods one JSON-RPC endpoint serves.
 *
 * @example
 * const registry = new JsonRpcRegistry();
 * registry.register({ method_name: 'math.add', params_schema: { type: 'array', items: { type: 'number' } } },
 *   (params: number[]) => params.reduce((a, b) => a + b, 0));
 */
export class JsonRpcRegistry {
  readonly #methods = new Map<string, RegisteredRpcMethod>();
  readonly #ajv: Ajv;
  readonly validateResults: boolean;

  constructor(options: JsonRpcRegistryOptions = {}) {
    this.validateResults = options.validateResults ?? process.env.NODE_ENV !== 'production';
    // strict: false accepts annotation keywords people put in schemas (examples, x-*) without failing start-up.
    this.#ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(this.#ajv);
  }

  /** Register a method; throws ConfigError for bad metadata, a duplicate or reserved name, or an uncompilable schema. */
  register(infoInput: JsonRpcMethodInfoInput | Readonly<JsonRpcMethodInfo>, handler: RpcHandler): this {
    const info = JsonRpcMethodInfo.parse(infoInput, 'JsonRpcMethodInfo');
    const name = info.method_name;
    const bad = (key: string, value: unknown, message: string): never => {
      throw new ConfigError(`Invalid JsonRpcMethodInfo at JsonRpcMethodInfo.${key}: ${message}`, { record: 'JsonRpcMethodInfo', path: `JsonRpcMethodInfo.${key}`, key, value });
    };
    if (typeof handler !== 'function') bad('handler', handler, `method ${JSON.stringify(name)} needs a handler function (params, ctx) => result.`);
    if (name.startsWith(RESERVED_PREFIX)) bad('method_name', name, `names starting with "rpc." are reserved for system extensions (JSON-RPC 2.0 §4).`);
    if (this.#methods.has(name)) bad('method_name', name, `method ${JSON.stringify(name)} is already registered.`);
    const compile = (key: 'params_schema' | 'result_schema'): ValidateFunction | undefined => {
      const schema = info[key];
      if (schema === null || schema === undefined) return undefined;
      if (typeof schema !== 'object' && typeof schema !== 'boolean') bad(key, schema, 'expected a JSON Schema (object or boolean).');
      try {
        return this.#ajv.compile(schema as object);
      } catch (err) {
        return bad(key, schema, `the schema of ${JSON.stringify(name)} does not compile: ${(err as Error).message}`);
      }
    };
    const validateParams = compile('params_schema');
    // Compiled even when results are not checked, so a broken result_schema fails in production start-up too.
    const resultValidator = compile('result_schema');
    const validateResult = this.validateResults ? resultValidator : undefined;
    this.#methods.set(name, Object.freeze({ info, handler, validateParams, validateResult }));
    return this;
  }

  get(name: string): RegisteredRpcMethod | undefined {
    return this.#methods.get(name);
  }

  /** Registered methods in registration order. */
  list(): RegisteredRpcMethod[] {
    return [...this.#methods.values()];
  }

  get size(): number {
    return this.#methods.size;
  }
}
