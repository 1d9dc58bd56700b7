/**
 * Hostile replays (issue 26, items 2 and 7): small requests that cost huge work, refused by the
 * request's work budget before the answer is built.
 *
 * - AsyncAPI `$ref` fan-out: a 23.5 KB document whose ~400 messages each reference one schema that
 *   expands to ~82,000 nodes (under the old 100,000-node budget per message, 37 million for the
 *   request). Before: 43 s of CPU, RSS 124 MB → 1.03 GB, a 193 MB answer.
 *
 * - GraphQL amplification: 490 aliases of the built-in `hello(name: $n)` (complexity 490, under the
 *   example server's 500) with a ~400 KB `$n`, a 410 KB request. Before: a 191 MiB answer, +880 MB RSS.
 * - JSON-RPC results: a method whose result is its argument repeated (`repeat({ text, times })`), asked
 *   for 64 MiB with a 20-byte request: serialised whole before, now a -32603 error naming the limit.
 *
 * What is asserted: the refusal (status, problem type, the setting and limit), that the answer is
 * small, and that this process's RSS grew by far less than the expansion would take (< 50 MB, where
 * building it took ~900 MB). The server runs in this process, so RSS covers its work.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { parse } from 'graphql';
import { createApp, type ServerHandle } from '../../lib/index.js';
import { builtinSchema } from '../../lib/graphql/builtin-schemas.js';
import { measureComplexity } from '../../lib/graphql/limits.js';
import { DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES } from '../../lib/records/graphql.js';
import { connectGraphqlWs, sendFrame, waitForFrame } from '../helpers/graphql-ws-client.js';
import { aliasQueryBody, fanOutDocument, fanOutSchemas } from '../helpers/budget-attacks.js';
import { DEFAULT_ASYNCAPI_MAX_EXPANDED_NODES, DEFAULT_JSONRPC_MAX_RESPONSE_BYTES } from '../../lib/records/protocol.js';

const silent = { logger: pino({ level: 'silent' }) };
const RSS_GROWTH_LIMIT = 50 * 1024 * 1024;

let server: ServerHandle;

before(async () => {
  const app = createApp({ port: 0, host: '127.0.0.1', asyncapi: { enabled: true }, jsonrpc: {} }, (a) => {
    a.get('/health', () => ({ ok: true }));
    a.rpc('repeat', (p) => {
      const { text, times } = p as { text: string; times: number };
      return text.repeat(times);
    });
  }, silent);
  // The example server's GraphQL route (examples/server.ts): complexity 490 passes its limit of 500.
  app.registerGraphqlRoute('/graphql', 'POST', 'full', { depth_limit: 8, complexity_limit: 500 });
  app.registerGraphqlSdlRoute('/big', 'POST', 'type Query { big: String quotes: String small: String }', {
    big: 'x'.repeat(2 * 1024 * 1024), quotes: '"'.repeat(600_000), small: 'ok',
  }, { introspection_enabled: false });
  server = await app.listen({ handleSignals: false });
});
after(() => server.close());

type Problem = { type: string; status: number; title: string; detail: string; setting?: string; limit?: number };

function post(path: string, body: string): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
}

async function assertBudgetRefusal(res: Response, setting: string): Promise<Problem> {
  const text = await res.text();
  assert.equal(res.status, 422, text.slice(0, 300));
  assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
  assert.ok(text.length < 2048, `a small answer, got ${text.length} bytes`);
  const problem = JSON.parse(text) as Problem;
  assert.match(problem.type, /\/work-budget-exceeded$/);
  assert.equal(problem.setting, setting);
  assert.equal(typeof problem.limit, 'number');
  return problem;
}

describe('when a 23.5 KB AsyncAPI document references one schema from ~400 messages', () => {
  const doc = fanOutDocument(23_500);

  it('should be the attack: 23.5 KB, each message under the old per-message budget', () => {
    assert.ok(doc.length > 23_000 && doc.length <= 23_500, `${doc.length} bytes`);
    const messages = Object.keys((JSON.parse(doc) as { components: { messages: object } }).components.messages).length;
    assert.ok(messages > 350, `${messages} messages`);
  });

  it('should refuse /asyncapi/parse with a 422 work-budget-exceeded problem, RSS growing < 50 MB', async () => {
    const rss = process.memoryUsage().rss;
    const problem = await assertBudgetRefusal(await post('/asyncapi/parse', JSON.stringify({ spec: JSON.parse(doc) })), 'max_expanded_nodes');
    assert.equal(problem.limit, DEFAULT_ASYNCAPI_MAX_EXPANDED_NODES);
    const growth = process.memoryUsage().rss - rss;
    assert.ok(growth < RSS_GROWTH_LIMIT, `RSS grew ${(growth / 1048576).toFixed(1)} MB`);
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  });

  it('should refuse the same fan-out through channel bindings', async () => {
    const spec = JSON.parse(doc) as { channels?: Record<string, unknown>; components: { messages: Record<string, unknown> } };
    spec.components.messages = {};
    spec.channels = {};
    for (let i = 0; i < 300; i++) spec.channels[`c${i}`] = { bindings: { $ref: '#/components/schemas/s14' } };
    await assertBudgetRefusal(await post('/asyncapi/parse', JSON.stringify({ spec })), 'max_expanded_nodes');
  });

  it('should refuse /asyncapi/validate when the payload schema fans out past the budget', async () => {
    const spec = { asyncapi: '3.0.0', info: { title: 't', version: '1' }, channels: { c: { messages: { m: { payload: { $ref: '#/components/schemas/s30' } } } } }, components: { schemas: fanOutSchemas(30) } };
    await assertBudgetRefusal(await post('/asyncapi/validate', JSON.stringify({ spec, channel: 'c', message: 'm', payload: {} })), 'max_expanded_nodes');
  });

  it('should refuse /asyncapi/validate for a payload of more values than the budget (Ajv keeps an error per failing value)', async () => {
    const spec = { asyncapi: '3.0.0', info: { title: 't', version: '1' }, channels: { c: { messages: { m: { payload: { type: 'array', items: { type: 'string' } } } } } } };
    const payload = new Array(DEFAULT_ASYNCAPI_MAX_EXPANDED_NODES + 1).fill(0);
    const problem = await assertBudgetRefusal(await post('/asyncapi/validate', JSON.stringify({ spec, channel: 'c', message: 'm', payload })), 'max_expanded_nodes');
    assert.match(problem.detail, /payload/);
  });

  it('should still parse and validate the same schemas within the budget (control)', async () => {
    const spec = { asyncapi: '3.0.0', info: { title: 't', version: '1' }, channels: { c: { messages: { m: { payload: { $ref: '#/components/schemas/s4' } } } } }, components: { schemas: fanOutSchemas(4) } };
    const parsed = await post('/asyncapi/parse', JSON.stringify({ spec }));
    assert.equal(parsed.status, 200);
    const result = await parsed.json() as { messages: Array<{ schema: { properties: { a: unknown } } }> };
    assert.equal(result.messages.length, 1);
    assert.deepEqual(Object.keys(result.messages[0]!.schema.properties), ['a', 'b']);
    const validated = await post('/asyncapi/validate', JSON.stringify({ spec, channel: 'c', message: 'm', payload: { a: { a: {} } } }));
    assert.deepEqual(await validated.json(), { valid: true, errors: [] });
  });
});

describe('when AsyncApiConfig sets the budget', () => {
  it('should refuse by max_response_bytes when the answer would pass it', async () => {
    const app = createApp({ port: 0, host: '127.0.0.1', asyncapi: { enabled: true, max_response_bytes: 10_000 } }, () => {}, silent);
    const small = await app.listen({ handleSignals: false });
    try {
      const spec = { asyncapi: '3.0.0', info: { title: 't', version: '1' }, components: { schemas: fanOutSchemas(10), messages: { m: { payload: { $ref: '#/components/schemas/s10' } } } } };
      const res = await fetch(`${small.url}/asyncapi/parse`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ spec }) });
      const problem = await assertBudgetRefusal(res, 'max_response_bytes');
      assert.equal(problem.limit, 10_000);
    } finally {
      await small.close();
    }
  });

  it('should refuse a budget that is not a positive integer when the App is built', () => {
    assert.throws(() => createApp({ asyncapi: { enabled: true, max_expanded_nodes: 0 } }, () => {}, silent), /max_expanded_nodes/);
  });
});

type RpcAnswer = { jsonrpc: '2.0'; id: unknown; result?: unknown; error?: { code: number; message: string; data?: { max_response_bytes?: number } } };

describe('when a JSON-RPC method is asked for a 64 MiB result', () => {
  it('should answer -32603 naming max_response_bytes instead of the result', async () => {
    const res = await post('/rpc', JSON.stringify({ jsonrpc: '2.0', method: 'repeat', params: { text: 'x'.repeat(1024), times: 64 * 1024 }, id: 7 }));
    const text = await res.text();
    assert.equal(res.status, 200);
    assert.ok(text.length < 1024, `a small answer, got ${text.length} bytes`);
    const answer = JSON.parse(text) as RpcAnswer;
    assert.equal(answer.id, 7);
    assert.equal(answer.error?.code, -32603);
    assert.equal(answer.error?.data?.max_response_bytes, DEFAULT_JSONRPC_MAX_RESPONSE_BYTES);
  });

  it('should still answer a result within the limit (control)', async () => {
    const res = await post('/rpc', JSON.stringify({ jsonrpc: '2.0', method: 'repeat', params: { text: 'ab', times: 3 }, id: 1 }));
    assert.deepEqual(await res.json(), { jsonrpc: '2.0', result: 'ababab', id: 1 });
  });

  it('should share the budget between the calls of a batch, in request order', async () => {
    const app = createApp({ port: 0, host: '127.0.0.1', jsonrpc: { max_response_bytes: 1000 } }, (a) => {
      a.rpc('repeat', (p) => 'x'.repeat((p as { times: number }).times));
    }, silent);
    const small = await app.listen({ handleSignals: false });
    try {
      const call = (id: number) => ({ jsonrpc: '2.0', method: 'repeat', params: { times: 400 }, id });
      const res = await fetch(`${small.url}/rpc`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify([call(1), call(2), call(3)]) });
      const answers = await res.json() as RpcAnswer[];
      assert.deepEqual(answers.map((a) => a.id), [1, 2, 3]);
      assert.equal(typeof answers[0]!.result, 'string');
      assert.equal(typeof answers[1]!.result, 'string');
      assert.equal(answers[2]!.error?.code, -32603);
      assert.equal(answers[2]!.error?.data?.max_response_bytes, 1000);
    } finally {
      await small.close();
    }
  });
});

type GraphqlAnswer = { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string; limit?: number; estimated_bytes?: number } }> };

function postGraphql(path: string, body: string): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body });
}

describe('when a 410 KB GraphQL request echoes a 400 KB variable through 490 aliases', () => {
  const body = aliasQueryBody(490, 410 * 1024);

  it('should be the attack: complexity 490, under the limit of 500 that let it through', () => {
    const { query } = JSON.parse(body) as { query: string };
    const document = parse(query);
    const operation = document.definitions[0]! as Parameters<typeof measureComplexity>[2];
    assert.equal(measureComplexity(builtinSchema('full'), document, operation), 490);
    assert.equal(body.length, 410 * 1024);
  });

  it('should refuse it before execution with RESPONSE_SIZE_LIMIT_EXCEEDED (400), RSS growing < 50 MB', async () => {
    const rss = process.memoryUsage().rss;
    const res = await postGraphql('/graphql', body);
    const text = await res.text();
    assert.equal(res.status, 400, text.slice(0, 300));
    assert.ok(text.length < 2048, `a small answer, got ${text.length} bytes`);
    const answer = JSON.parse(text) as GraphqlAnswer;
    assert.equal('data' in answer, false);
    const error = answer.errors?.[0]?.extensions;
    assert.equal(error?.code, 'RESPONSE_SIZE_LIMIT_EXCEEDED');
    assert.equal(error?.limit, DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES);
    // 490 copies of the variable: the estimate is what the answer would have been (191 MiB), not 490.
    assert.ok((error?.estimated_bytes ?? 0) > 190 * 1024 * 1024, `estimated ${error?.estimated_bytes}`);
    const growth = process.memoryUsage().rss - rss;
    assert.ok(growth < RSS_GROWTH_LIMIT, `RSS grew ${(growth / 1048576).toFixed(1)} MB`);
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  });

  it('should refuse two such 1 MiB requests sent at once', async () => {
    const big = aliasQueryBody(490, 1000 * 1024);
    const answers = await Promise.all([postGraphql('/graphql', big), postGraphql('/graphql', big)]);
    for (const res of answers) {
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as GraphqlAnswer).errors?.[0]?.extensions?.code, 'RESPONSE_SIZE_LIMIT_EXCEEDED');
    }
  });

  it('should refuse it over the WebSocket transport too, with an error frame', async () => {
    const { query, variables } = JSON.parse(body) as { query: string; variables: Record<string, unknown> };
    const ws = await connectGraphqlWs(`${server.url.replace('http', 'ws')}/graphql`);
    try {
      sendFrame(ws, { id: 'attack', type: 'subscribe', payload: { query, variables } });
      const frame = await waitForFrame(ws, (m) => m.id === 'attack');
      assert.equal(frame.type, 'error');
      assert.match(JSON.stringify(frame.payload), /RESPONSE_SIZE_LIMIT_EXCEEDED/);
    } finally {
      ws.terminate();
    }
  });

  it('should still answer the same query with a 1.7 KB name, a ~0.9 MB answer (control)', async () => {
    const res = await postGraphql('/graphql', aliasQueryBody(490, 12_500));
    assert.equal(res.status, 200);
    const answer = await res.json() as { data: Record<string, string> };
    assert.equal(Object.keys(answer.data).length, 490);
  });
});

describe('when what a resolver returns is larger than max_response_bytes', () => {
  it('should answer data: null and RESPONSE_SIZE_LIMIT_EXCEEDED instead of a 2 MiB answer', async () => {
    const res = await postGraphql('/big', JSON.stringify({ query: '{ big }' }));
    const text = await res.text();
    assert.equal(res.status, 200);
    assert.ok(text.length < 1024, `a small answer, got ${text.length} bytes`);
    const answer = JSON.parse(text) as GraphqlAnswer;
    assert.equal(answer.data, null);
    assert.equal(answer.errors?.[0]?.extensions?.code, 'RESPONSE_SIZE_LIMIT_EXCEEDED');
    assert.equal(answer.errors?.[0]?.extensions?.limit, DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES);
  });

  it('should count the serialized bytes: 600,000 quotes escape to 1.2 MB', async () => {
    const answer = await (await postGraphql('/big', JSON.stringify({ query: '{ quotes }' }))).json() as GraphqlAnswer;
    assert.equal(answer.data, null);
    assert.equal(answer.errors?.[0]?.extensions?.code, 'RESPONSE_SIZE_LIMIT_EXCEEDED');
  });

  it('should answer a small field of the same route (control)', async () => {
    assert.deepEqual(await (await postGraphql('/big', JSON.stringify({ query: '{ small }' }))).json(), { data: { small: 'ok' } });
  });
});
