/**
 * Hostile replay (issue 26, item 5): JSON nested far past MAX_JSON_DEPTH sent where keel parses JSON
 * outside route bodies — JSON-RPC `params`, GraphQL `variables` (POST body and GET query), AsyncAPI
 * documents — answers the same 400 problem as a too-deep JSON body, and the server keeps serving.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createApp, type ServerHandle } from '../../lib/index.js';
import { MAX_JSON_DEPTH } from '../../lib/http/content.js';

const silent = { logger: pino({ level: 'silent' }) };
const deep = (levels: number, leaf = '1') => '['.repeat(levels) + leaf + ']'.repeat(levels);
const deepObject = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

let server: ServerHandle;
let rpcCalls = 0;

before(async () => {
  const app = createApp({ port: 0, host: '127.0.0.1', jsonrpc: {}, asyncapi: { enabled: true } }, (a) => {
    a.get('/health', () => ({ ok: true }));
    a.post('/echo', (d) => ({ body: d.body }));
    a.rpc('echo', (p) => {
      rpcCalls++;
      return p;
    });
  }, silent);
  app.registerGraphqlSdlRoute('/graphql', 'POST', 'type Query { a(x: String): Int }', { a: 1 }, { introspection_enabled: false });
  app.registerGraphqlSdlRoute('/graphql-get', 'GET', 'type Query { a(x: String): Int }', { a: 1 }, { introspection_enabled: false });
  server = await app.listen({ handleSignals: false });
});
after(() => server.close());

type Problem = { type: string; status: number; title: string; detail: string; limit?: number };

/** The problem a too-deep JSON body gets: what every other JSON parser must answer. */
async function bodyProblem(): Promise<Problem> {
  const res = await post('/echo', deep(MAX_JSON_DEPTH + 1));
  assert.equal(res.status, 400);
  return await res.json() as Problem;
}

function post(path: string, body: string): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body });
}

async function assertSameProblem(res: Response): Promise<void> {
  assert.equal(res.status, 400);
  assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
  const got = await res.json() as Problem;
  const want = await bodyProblem();
  assert.equal(got.type, want.type);
  assert.match(got.type, /bad-request$/);
  assert.equal(got.limit, MAX_JSON_DEPTH);
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
}

describe('when JSON-RPC params are nested 100,000 deep', () => {
  it('should answer the JSON body 400 problem without calling the method', async () => {
    const before = rpcCalls;
    await assertSameProblem(await post('/rpc', `{"jsonrpc":"2.0","method":"echo","params":${deep(100_000)},"id":1}`));
    assert.equal(rpcCalls, before);
  });
  it('should still call the method at the limit (control)', async () => {
    const res = await post('/rpc', `{"jsonrpc":"2.0","method":"echo","params":${deep(MAX_JSON_DEPTH - 1)},"id":1}`);
    assert.equal(res.status, 200);
    assert.ok('result' in (await res.json() as object));
  });
});

describe('when GraphQL variables are nested 10,000 deep', () => {
  it('should answer the JSON body 400 problem for a POST', async () => {
    await assertSameProblem(await post('/graphql', `{"query":"{ a }","variables":{"v":${deepObject(10_000)}}}`));
  });
  it('should answer the JSON body 400 problem for a GET (1,000 deep: 10,000 would not fit in a URL, a 431)', async () => {
    const url = `${server.url}/graphql-get?query=${encodeURIComponent('{ a }')}&variables=${encodeURIComponent(`{"v":${deep(1_000)}}`)}`;
    await assertSameProblem(await fetch(url, { headers: { Accept: 'application/json' } }));
  });
  it('should still execute with variables at the limit (control)', async () => {
    const res = await post('/graphql', `{"query":"{ a }","variables":{"v":${deep(MAX_JSON_DEPTH - 2)}}}`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { data: { a: 1 } });
  });
});

describe('when an AsyncAPI document is nested 100,000 deep', () => {
  for (const path of ['/asyncapi/parse', '/asyncapi/validate']) {
    it(`should answer the JSON body 400 problem on ${path}, not a 500`, async () => {
      await assertSameProblem(await post(path, `{"spec":{"asyncapi":"3.0.0","info":{"title":"t","version":"1"},"x":${deep(100_000)}}}`));
    });
  }
  const yaml = (body: string) => fetch(`${server.url}/asyncapi/parse`, { method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body });
  it('should answer the same 400 problem for a YAML document with 100,000 nested flow sequences (the yaml package runs out of memory on it)', async () => {
    await assertSameProblem(await yaml(`asyncapi: 3.0.0\ninfo: {title: t, version: '1'}\nx: ${deep(100_000)}\n`));
  });
  it('should answer the same 400 problem for a YAML document with 100 nested block mappings', async () => {
    let nested = 'x:\n';
    for (let i = 1; i <= 100; i++) nested += `${' '.repeat(i)}a:\n`;
    await assertSameProblem(await yaml(`asyncapi: 3.0.0\ninfo: {title: t, version: '1'}\n${nested}${' '.repeat(101)}b: 1\n`));
  });
  it('should still read a YAML document nested within the limit (control)', async () => {
    const res = await yaml(`asyncapi: 3.0.0\ninfo: {title: t, version: '1'}\nchannels: {}\nx-deep: ${deep(MAX_JSON_DEPTH - 4)}\n`);
    assert.notEqual(res.status, 400, await res.clone().text());
    assert.ok(res.status < 500);
  });
});
