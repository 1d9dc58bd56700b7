/**
 * A GraphQL route as OpenAPI operations (MountOptions.openapi, lib/app/plugin.ts): `POST` with the
 * GraphQL-over-HTTP request body (`query`, `operationName`, `variables`, `extensions`) and `GET` with
 * the same as query parameters, both answering a GraphQL response (`data`, `errors`) by the status
 * table of docs/graphql.md. keel/openapi reads this without importing keel/graphql.
 */
import type { MountOpenApi } from '../app/plugin.js';

type Json = Record<string, unknown>;

/** Tag of GraphQL operations in the OpenAPI document. */
export const GRAPHQL_OPENAPI_TAG = 'GraphQL';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ref('ProblemDetails') } } });
const graphqlContent = { 'application/graphql-response+json': { schema: ref('GraphQLResponse') }, 'application/json': { schema: ref('GraphQLResponse') } };

/** GraphQL over HTTP's request, response and error shapes (GraphQL spec §7, GraphQL-over-HTTP draft). */
const SCHEMAS: Json = {
  GraphQLRequest: {
    type: 'object',
    required: ['query'],
    properties: {
      query: { type: 'string', description: 'The GraphQL document', examples: ['{ __typename }'] },
      operationName: { type: ['string', 'null'], description: 'Which operation of the document to run' },
      variables: { type: ['object', 'null'], description: 'Values of the operation\'s variables', additionalProperties: true },
      extensions: { type: ['object', 'null'], description: 'Protocol extensions', additionalProperties: true },
    },
  },
  GraphQLResponse: {
    type: 'object',
    description: 'A GraphQL response: `data` once execution started, `errors` when something failed',
    properties: {
      data: { type: ['object', 'null'], additionalProperties: true },
      errors: { type: 'array', minItems: 1, items: ref('GraphQLError') },
      extensions: { type: 'object', additionalProperties: true },
    },
  },
  GraphQLError: {
    type: 'object',
    required: ['message'],
    properties: {
      message: { type: 'string' },
      locations: { type: 'array', items: { type: 'object', required: ['line', 'column'], properties: { line: { type: 'integer', minimum: 1 }, column: { type: 'integer', minimum: 1 } } } },
      path: { type: 'array', items: { type: ['string', 'integer'] } },
      extensions: { type: 'object', properties: { code: { type: 'string', description: 'e.g. GRAPHQL_VALIDATION_FAILED, DEPTH_LIMIT_EXCEEDED' } }, additionalProperties: true },
    },
  },
};

function responses(html: boolean): Json {
  const ok: Json = { description: 'Executed: `data`, with `errors` for fields that failed', content: { ...graphqlContent } };
  if (html) (ok.content as Json)['text/html'] = { schema: { type: 'string', description: 'GraphiQL, for a browser asking for text/html' } };
  return {
    '200': ok,
    '400': { description: 'Not executed: the document does not parse or validate, variables do not match, or a depth / complexity limit refuses it (`errors` only)', content: graphqlContent },
    '405': problem('A mutation sent with GET, or a method the route does not serve'),
    '406': problem('No acceptable media type in Accept'),
    '413': problem('Request body too large'),
    '415': problem('Unsupported Content-Type'),
  };
}

/** What describing a route needs: its path, methods and whether GraphiQL is served on it. */
export interface GraphqlRouteShape {
  readonly path: string;
  readonly methods: readonly ('GET' | 'POST')[];
  readonly playground: boolean;
}

/**
 * The OpenAPI description of a GraphQL route: POST (when the route is a POST route) and GET.
 *
 * @example
 * app.mount(['POST', 'GET'], route.path, route.handler, { readBody: true, openapi: graphqlOpenApi(route) });
 */
export function graphqlOpenApi(route: GraphqlRouteShape): MountOpenApi {
  const operations: { post?: Json; get?: Json } = {};
  const subscriptions = `Subscriptions use the graphql-transport-ws WebSocket protocol on ${route.path}.`;
  if (route.methods.includes('POST')) {
    operations.post = {
      tags: [GRAPHQL_OPENAPI_TAG],
      summary: 'GraphQL query or mutation',
      description: `GraphQL over HTTP: the document and its variables as JSON. ${subscriptions}`,
      requestBody: { required: true, content: { 'application/json': { schema: ref('GraphQLRequest') } } },
      responses: responses(false),
    };
  }
  if (route.methods.includes('GET')) {
    operations.get = {
      tags: [GRAPHQL_OPENAPI_TAG],
      summary: 'GraphQL query',
      description: `GraphQL over HTTP with the request in the query string; queries only (a mutation is refused with 405).${route.playground ? ' A browser asking for text/html gets GraphiQL.' : ''} ${subscriptions}`,
      parameters: [
        { name: 'query', in: 'query', required: true, description: 'The GraphQL document', schema: { type: 'string' } },
        { name: 'operationName', in: 'query', required: false, description: 'Which operation of the document to run', schema: { type: 'string' } },
        { name: 'variables', in: 'query', required: false, description: 'Variables, JSON-encoded', content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } } },
        { name: 'extensions', in: 'query', required: false, description: 'Protocol extensions, JSON-encoded', content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } } },
      ],
      responses: responses(route.playground),
    };
  }
  return { operations, schemas: SCHEMAS };
}
