/**
 * The JSON-RPC endpoint as an OpenAPI operation (MountOptions.openapi, lib/app/plugin.ts): `POST
 * endpoint_path` whose body is one Request object or a batch (JSON-RPC 2.0 §4, §6), one schema per
 * registered method (its `method` a constant, its `params` the method's params_schema), and whose
 * answers are 200 with a Response object (or an array of them), 204 when only notifications were sent,
 * and problem details for HTTP-level failures. keel/openapi reads this without importing keel/jsonrpc.
 */
import type { MountOpenApi } from '../app/plugin.js';
import type { JsonRpcConfig } from '../records/protocol.js';
import type { JsonRpcRegistry } from './registry.js';

type Json = Record<string, unknown>;

/** Tag of the endpoint's operation in the OpenAPI document. */
export const JSONRPC_OPENAPI_TAG = 'JSON-RPC';
/** operationId of the endpoint's operation. */
export const JSONRPC_OPERATION_ID = 'jsonRpc';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ref('ProblemDetails') } } });
const JSONRPC_VERSION = { type: 'string', const: '2.0', description: 'Always "2.0"' };

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Params the method refuses to do without: a schema requiring properties or items. */
function paramsRequired(schema: unknown): boolean {
  if (!isObject(schema)) return false;
  return (Array.isArray(schema.required) && schema.required.length > 0) || (typeof schema.minItems === 'number' && schema.minItems > 0);
}

/** Component-name-safe and unique: `math.add` stays, `a b` becomes `a_b` (then `a_b_2`). */
function componentNamer(): (prefix: string, method: string) => string {
  const used = new Set<string>();
  return (prefix, method) => {
    const base = `${prefix}${method.replace(/[^A-Za-z0-9._-]/g, '_')}`;
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    return name;
  };
}

/**
 * The OpenAPI description of a JSON-RPC endpoint serving `registry` under `config`.
 *
 * @example
 * app.mount('POST', '/rpc', handler, { readBody: true, openapi: () => jsonRpcOpenApi(registry, config) });
 */
export function jsonRpcOpenApi(registry: JsonRpcRegistry, config: Readonly<JsonRpcConfig>): MountOpenApi {
  const name = componentNamer();
  const schemas: Json = {
    JsonRpcId: { type: ['string', 'number', 'null'], description: 'Chosen by the client; echoed in the response. Absent in a notification.' },
  };
  const variants: Json[] = [];
  const mapping: Record<string, string> = {};
  const request = (method: string, description: string | null | undefined, params: Json, required: boolean, deprecated: boolean): void => {
    const schemaName = name('JsonRpcRequest_', method);
    const s: Json = {
      title: method,
      type: 'object',
      required: required ? ['jsonrpc', 'method', 'params'] : ['jsonrpc', 'method'],
      properties: { jsonrpc: JSONRPC_VERSION, method: { type: 'string', const: method }, params, id: ref('JsonRpcId') },
      additionalProperties: false,
    };
    if (description) s.description = description;
    if (deprecated) s.deprecated = true;
    schemas[schemaName] = s;
    variants.push(ref(schemaName));
    mapping[method] = `#/components/schemas/${schemaName}`;
  };
  for (const { info } of registry.list()) {
    let params: Json = { type: ['object', 'array'], description: 'By name (object) or by position (array)' };
    if (info.params_schema !== null && info.params_schema !== undefined) {
      const paramsName = name('JsonRpcParams_', info.method_name);
      schemas[paramsName] = info.params_schema;
      params = ref(paramsName);
    }
    request(info.method_name, info.description, params, paramsRequired(info.params_schema), info.deprecated);
  }
  request('rpc.discover', 'The OpenRPC 1.3 document of these methods (service discovery)', { type: ['object', 'array'], maxProperties: 0, maxItems: 0 }, false, false);

  schemas.JsonRpcRequest = { description: 'A Request object (JSON-RPC 2.0 §4); without `id` it is a notification', oneOf: variants, discriminator: { propertyName: 'method', mapping } };
  schemas.JsonRpcErrorObject = {
    type: 'object',
    required: ['code', 'message'],
    properties: {
      code: { type: 'integer', description: '-32700 parse error, -32600 invalid request, -32601 method not found, -32602 invalid params, -32603 internal error; other codes are the methods\' own' },
      message: { type: 'string' },
      data: { description: 'Details, e.g. the params validation errors of -32602' },
    },
  };
  schemas.JsonRpcResponse = {
    description: 'A Response object (JSON-RPC 2.0 §5): `result` on success, `error` otherwise',
    oneOf: [
      { title: 'success', type: 'object', required: ['jsonrpc', 'result', 'id'], properties: { jsonrpc: JSONRPC_VERSION, result: { description: "The method's result (its result schema is in rpc.discover)" }, id: ref('JsonRpcId') } },
      { title: 'error', type: 'object', required: ['jsonrpc', 'error', 'id'], properties: { jsonrpc: JSONRPC_VERSION, error: ref('JsonRpcErrorObject'), id: ref('JsonRpcId') } },
    ],
  };

  // Examples a reader can send as they are ("Try it out"): the first method that needs no params, else rpc.discover.
  const simple = registry.list().find(({ info }) => !paramsRequired(info.params_schema))?.info.method_name ?? 'rpc.discover';
  const call = { jsonrpc: '2.0', method: simple, id: 1 };
  const requestExamples: Json = {
    call: { summary: `Call ${simple}`, value: call },
    notification: { summary: 'A notification: no id, no response (204)', value: { jsonrpc: '2.0', method: simple } },
    discover: { summary: 'The OpenRPC document of the methods', value: { jsonrpc: '2.0', method: 'rpc.discover', id: 'discover' } },
  };
  if (config.enable_batch) requestExamples.batch = { summary: 'A batch', value: [call, { jsonrpc: '2.0', method: 'no.such.method', id: 2 }] };
  const responseExamples: Json = {
    result: { summary: 'A result', value: { jsonrpc: '2.0', result: '…', id: 1 } },
    error: { summary: 'An error', value: { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 2 } },
  };
  const batch = { title: 'batch', type: 'array', minItems: 1, maxItems: config.max_batch_size, items: ref('JsonRpcRequest'), description: `A batch of up to ${config.max_batch_size} requests (JSON-RPC 2.0 §6)` };
  const methods = [...registry.list().map(({ info }) => info.method_name), 'rpc.discover'].map((m) => `\`${m}\``).join(', ');
  const operation: Json = {
    tags: [JSONRPC_OPENAPI_TAG],
    summary: 'JSON-RPC 2.0 endpoint',
    description:
      `Calls the methods ${methods}. The body is one Request object${config.enable_batch ? ' or a batch (an array of them)' : ''}. ` +
      'Every JSON-RPC answer, error or not, is 200 with the Response object(s); notifications (no `id`) get none, ' +
      'and a request made only of notifications gets 204 with no body.',
    operationId: JSONRPC_OPERATION_ID,
    requestBody: {
      required: true,
      content: { 'application/json': { schema: config.enable_batch ? { oneOf: [{ title: 'request', ...ref('JsonRpcRequest') }, batch] } : ref('JsonRpcRequest'), examples: requestExamples } },
    },
    responses: {
      '200': {
        description: 'The Response object, or for a batch an array of them (one per request that was not a notification)',
        content: {
          'application/json': {
            schema: config.enable_batch ? { oneOf: [{ title: 'response', ...ref('JsonRpcResponse') }, { title: 'batch', type: 'array', items: ref('JsonRpcResponse') }] } : ref('JsonRpcResponse'),
            examples: responseExamples,
          },
        },
      },
      '204': { description: 'Only notifications were sent: no response (JSON-RPC 2.0 §4.1)' },
      '413': problem('Request body too large'),
      '415': problem('The body is not application/json'),
    },
  };
  return { operations: { post: operation }, schemas };
}
