/**
 * What the hand-assembled peers (node:http, Express) share: Ajv validators compiled once at
 * start-up (as an Express user would do by hand), the GraphQL schema, the JSON-RPC server.
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { buildSchema, type GraphQLSchema } from 'graphql';
import jayson from 'jayson';
import { GRAPHQL_DATA, GRAPHQL_SDL, orderSchema, rpcAddParamsSchema, searchQuerySchema } from '../scenarios.js';

// Same Ajv settings as Fastify's defaults: coerce query strings, fill defaults, formats.
const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: true, allErrors: false });
(addFormats as unknown as (a: Ajv) => void)(ajv);
const strict = new Ajv({ useDefaults: true, allErrors: false });
(addFormats as unknown as (a: Ajv) => void)(strict);

export const validateOrder = strict.compile(orderSchema);
export const validateSearch = ajv.compile(searchQuerySchema);
export const validateRpcAdd = strict.compile(rpcAddParamsSchema);

export const graphqlSchema: GraphQLSchema = buildSchema(GRAPHQL_SDL);
export const graphqlRoot = GRAPHQL_DATA;

/** jayson's server with `math.add`, params checked against the same schema. */
export const rpcServer = new jayson.Server({
  'math.add'(params: unknown, callback: (err: unknown, result?: unknown) => void) {
    if (!validateRpcAdd(params)) return callback({ code: -32602, message: 'Invalid params', data: validateRpcAdd.errors });
    const { a, b } = params as { a: number; b: number };
    callback(null, a + b);
  },
});

export function validationProblem(errors: unknown): string {
  return JSON.stringify({ type: 'about:blank', title: 'Unprocessable Content', status: 422, errors });
}
