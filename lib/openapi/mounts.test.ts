/**
 * Mounted protocols in the OpenAPI document: the JSON-RPC endpoint and GraphQL routes describe their
 * operations through `MountOptions.openapi` (lib/app/plugin.ts); keel/openapi lists them beside the routes,
 * reading the mounts when the document is first served (OpenAPI is installed before the others).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { pino } from 'pino';
import { App, type ServerConfigInput, type ServerHandle } from '../index.js';

type Json = Record<string, any>;
const silent = { logger: pino({ level: 'silent' }) };
const SECRET = 'openapi-mounts-secret-openapi-mounts-secret';

async function assertValidOpenApi(doc: unknown): Promise<void> {
  const result = await new Validator().validate(doc as Parameters<Validator['validate']>[0]);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
}

/** Every `$ref` and discriminator mapping of the document that points at no component schema. */
function danglingRefs(doc: Json): string[] {
  const out: string[] = [];
  const walk = (node: unknown, mapping = false): void => {
    if (Array.isArray(node)) return node.forEach((n) => walk(n));
    if (typeof node !== 'object' || node === null) return;
    for (const [k, v] of Object.entries(node)) {
      if ((k === '$ref' || mapping) && typeof v === 'string') {
        const name = /^#\/components\/schemas\/(.+)$/.exec(v)?.[1];
        if (!name || !(name in doc.components.schemas)) out.push(v);
      } else walk(v, k === 'mapping');
    }
  };
  walk(doc);
  return out;
}

/** Serve `setup`'s App and fetch its OpenAPI document. */
async function documentOf(config: ServerConfigInput, setup: (app: App) => void): Promise<Json> {
  const app = new App({ port: 0, openapi: { enabled: true, title: 'Mounts', version: '1.0.0' }, ...config }, silent);
  setup(app);
  const handle = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  try {
    const res = await fetch(`${handle.url}/openapi.json`);
    assert.equal(res.status, 200);
    return (await res.json()) as Json;
  } finally {
    await handle.close();
  }
}

function rpcAndGraphql(app: App): void {
  app.get('/items', () => [], { openapi: { summary: 'List items' } });
  app.rpc({ method_name: 'items.count', description: 'How many items exist', result_schema: { type: 'integer' } }, () => 0);
  app.rpc(
    {
      method_name: 'math.add',
      description: 'Add two numbers',
      params_schema: { type: 'object', required: ['a', 'b'], properties: { a: { $ref: '#/definitions/Num' }, b: { $ref: '#/definitions/Num' } }, definitions: { Num: { type: 'number' } } },
      deprecated: true,
    },
    ({ a, b }: { a: number; b: number }) => a + b,
  );
  app.rpc({ method_name: 'by position', params_schema: { type: 'array', items: { type: 'string' } } }, () => null);
  app.registerGraphqlRoute('/graphql', 'POST', 'query_only');
  app.registerGraphqlSdlRoute('/read-only', 'GET', 'type Query { hello: String }', { hello: 'hi' }, { introspection_enabled: true });
}

describe('when JSON-RPC and GraphQL are on', () => {
  let doc: Json;
  before(async () => {
    doc = await documentOf({ jsonrpc: { endpoint_path: '/rpc', max_batch_size: 7 } }, rpcAndGraphql);
  });

  it('should produce a valid OpenAPI 3.1 document whose references all resolve', async () => {
    await assertValidOpenApi(doc);
    assert.deepEqual(danglingRefs(doc), []);
  });

  it('should list the routes, then the endpoints, and not the docs pages or their assets', () => {
    assert.deepEqual(Object.keys(doc.paths), ['/items', '/rpc', '/graphql', '/read-only']);
    assert.deepEqual(doc.tags, [{ name: 'JSON-RPC' }, { name: 'GraphQL' }]);
  });

  it('should describe the JSON-RPC endpoint as POST with one request or a batch of up to max_batch_size', () => {
    const op = doc.paths['/rpc'].post;
    assert.equal(op.operationId, 'jsonRpc');
    assert.deepEqual(Object.keys(doc.paths['/rpc']), ['post']);
    const body = op.requestBody.content['application/json'];
    assert.deepEqual(body.schema.oneOf, [
      { title: 'request', $ref: '#/components/schemas/JsonRpcRequest' },
      { title: 'batch', type: 'array', minItems: 1, maxItems: 7, items: { $ref: '#/components/schemas/JsonRpcRequest' }, description: 'A batch of up to 7 requests (JSON-RPC 2.0 §6)' },
    ]);
    assert.deepEqual(body.examples.call.value, { jsonrpc: '2.0', method: 'items.count', id: 1 }, 'an example that can be sent as it is: a method needing no params');
    assert.deepEqual(Object.keys(body.examples), ['call', 'notification', 'discover', 'batch']);
    assert.match(op.description, /`items\.count`, `math\.add`, `by position`, `rpc\.discover`/);
  });

  it('should give each registered method its own request schema: method constant, params schema, id', () => {
    const s = doc.components.schemas;
    const variants = s.JsonRpcRequest.oneOf.map((v: Json) => s[v.$ref.split('/').pop()]);
    assert.deepEqual(variants.map((v: Json) => v.properties.method.const), ['items.count', 'math.add', 'by position', 'rpc.discover']);
    const add = s['JsonRpcRequest_math.add'];
    assert.deepEqual(add.required, ['jsonrpc', 'method', 'params'], 'params the schema requires are required');
    assert.equal(add.deprecated, true);
    assert.equal(add.description, 'Add two numbers');
    assert.deepEqual(add.properties.jsonrpc, { type: 'string', const: '2.0', description: 'Always "2.0"' });
    assert.deepEqual(add.properties.params, { $ref: '#/components/schemas/JsonRpcParams_math.add' });
    assert.deepEqual(s['JsonRpcParams_math.add'].properties.a, { $ref: '#/components/schemas/Num' }, 'definitions are hoisted like route schemas');
    assert.deepEqual(s.Num, { type: 'number' });
    assert.deepEqual(s['JsonRpcRequest_items.count'].required, ['jsonrpc', 'method']);
    assert.ok(s.JsonRpcRequest_by_position, 'a name with a space becomes a valid component name');
    assert.equal(s.JsonRpcRequest.discriminator.propertyName, 'method');
    assert.equal(s.JsonRpcRequest.discriminator.mapping['by position'], '#/components/schemas/JsonRpcRequest_by_position');
  });

  it('should answer 200 with a result or error object (or an array), 204 for notifications, problems for HTTP failures', () => {
    const r = doc.paths['/rpc'].post.responses;
    assert.deepEqual(Object.keys(r), ['200', '204', '413', '415']);
    assert.equal(r['204'].content, undefined);
    assert.deepEqual(r['413'].content['application/problem+json'].schema, { $ref: '#/components/schemas/ProblemDetails' });
    const [success, failure] = doc.components.schemas.JsonRpcResponse.oneOf;
    assert.deepEqual(success.required, ['jsonrpc', 'result', 'id']);
    assert.deepEqual(failure.required, ['jsonrpc', 'error', 'id']);
    assert.deepEqual(doc.components.schemas.JsonRpcErrorObject.required, ['code', 'message']);
  });

  it('should describe a POST GraphQL route as POST and GET with the GraphQL-over-HTTP request and response', () => {
    const item = doc.paths['/graphql'];
    assert.deepEqual(Object.keys(item), ['get', 'post']);
    assert.deepEqual(item.post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/GraphQLRequest' });
    assert.deepEqual(item.get.parameters.map((p: Json) => [p.name, p.required]), [['query', true], ['operationName', false], ['variables', false], ['extensions', false]]);
    const s = doc.components.schemas;
    assert.deepEqual(Object.keys(s.GraphQLRequest.properties), ['query', 'operationName', 'variables', 'extensions']);
    assert.deepEqual(s.GraphQLRequest.required, ['query']);
    assert.deepEqual(Object.keys(s.GraphQLResponse.properties), ['data', 'errors', 'extensions']);
    for (const op of [item.get, item.post]) {
      assert.deepEqual(op.responses['200'].content['application/graphql-response+json'].schema, { $ref: '#/components/schemas/GraphQLResponse' });
      assert.ok(op.responses['400'], 'request errors');
    }
    assert.deepEqual([item.get.operationId, item.post.operationId], ['getGraphql', 'postGraphql']);
  });

  it('should describe a GET GraphQL route as GET only, sharing the GraphQL schemas', () => {
    assert.deepEqual(Object.keys(doc.paths['/read-only']), ['get']);
    assert.equal(Object.keys(doc.components.schemas).filter((n) => n.startsWith('GraphQLRequest')).length, 1);
  });
});

describe('when the server authenticates', () => {
  it('should give the endpoints the server requirement and a 401 response', async () => {
    const doc = await documentOf({ jwt_auth: { secret: SECRET } }, rpcAndGraphql);
    await assertValidOpenApi(doc);
    for (const op of [doc.paths['/rpc'].post, doc.paths['/graphql'].post, doc.paths['/graphql'].get]) {
      assert.deepEqual(op.security, [{ bearerAuth: [] }]);
      assert.ok(op.responses['401']);
    }
  });
});

describe('when batches are off', () => {
  it('should take a single request object only', async () => {
    const doc = await documentOf({ jsonrpc: { enable_batch: false } }, (app) => app.rpc('ping', () => 'pong'));
    await assertValidOpenApi(doc);
    const body = doc.paths['/rpc'].post.requestBody.content['application/json'];
    assert.deepEqual(body.schema, { $ref: '#/components/schemas/JsonRpcRequest' });
    assert.equal(body.examples.batch, undefined);
  });
});

describe('when names clash with the routes', () => {
  let doc: Json;
  before(async () => {
    doc = await documentOf({}, (app) => {
      // A route holding the endpoint's operationId and a schema named like the GraphQL one.
      app.get('/mine', () => 'mine', {
        openapi: { operationId: 'jsonRpc' },
        response: { $ref: '#/definitions/GraphQLRequest', definitions: { GraphQLRequest: { type: 'string', description: 'not GraphQL at all' } } },
      });
      app.rpc('ping', () => 'pong');
      app.registerGraphqlRoute('/graphql', 'POST', 'query_only');
    });
  });

  it('should keep the route names and rename the endpoint ones, references included', async () => {
    await assertValidOpenApi(doc);
    assert.deepEqual(danglingRefs(doc), []);
    assert.equal(doc.paths['/mine'].get.operationId, 'jsonRpc');
    assert.equal(doc.paths['/rpc'].post.operationId, 'jsonRpc_2');
    assert.equal(doc.components.schemas.GraphQLRequest.description, 'not GraphQL at all');
    assert.deepEqual(doc.paths['/graphql'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/GraphQLRequest_2' });
    assert.deepEqual(doc.components.schemas.GraphQLRequest_2.required, ['query']);
  });
});

describe('when a route and a mount share a path and method', () => {
  it('should list the route, which is what answers', async () => {
    const doc = await documentOf({}, (app) => {
      app.post('/rpc', () => ({}), { openapi: { summary: 'My own /rpc' } });
      app.rpc('ping', () => 'pong');
    });
    await assertValidOpenApi(doc);
    assert.equal(doc.paths['/rpc'].post.summary, 'My own /rpc');
  });
});

describe('when an App mounts its own handler with a description', () => {
  let handle: ServerHandle;
  let calls = 0;
  before(async () => {
    const app = new App({ port: 0, openapi: { enabled: true } }, silent);
    app.mount('GET', '/hooks/{name}', (_req, res) => void res.end('ok'), {
      openapi: () => {
        calls++;
        return { operations: { get: { summary: 'A raw hook', responses: { '200': { description: 'ok', content: { 'text/plain': { schema: { $ref: '#/components/schemas/Hook' } } } } } } }, schemas: { Hook: { type: 'string' } } };
      },
    });
    handle = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  });
  after(() => handle.close());

  it('should describe it once, when the document is first served, and keep serving that document', async () => {
    assert.equal(calls, 0, 'not at start-up');
    const first = (await (await fetch(`${handle.url}/openapi.json`)).json()) as Json;
    const second = (await (await fetch(`${handle.url}/openapi.json`)).json()) as Json;
    assert.equal(calls, 1);
    assert.deepEqual(first, second);
    await assertValidOpenApi(first);
    assert.equal(first.paths['/hooks/{name}'].get.summary, 'A raw hook');
    assert.equal(first.paths['/hooks/{name}'].get.operationId, 'getHooksName');
    assert.deepEqual(first.components.schemas.Hook, { type: 'string' });
  });
});

describe('when keel/openapi is read', () => {
  it('should not import the protocols it describes', () => {
    const dir = new URL('./', import.meta.url);
    const bad = readdirSync(dir)
      .filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts'))
      .flatMap((n) => [...readFileSync(new URL(n, dir), 'utf8').matchAll(/from\s+'([^']+)'|import\('([^']+)'\)/g)].map((m) => `${n}: ${m[1] ?? m[2]}`))
      .filter((line) => /\/(jsonrpc|graphql|asyncapi|ws|grpc)\//.test(line));
    assert.deepEqual(bad, []);
  });
});
