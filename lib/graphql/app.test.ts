import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { App } from '../app/app.js';
import { AppError, ConfigError } from '../http/errors.js';
import { GraphQlRouteConfig } from '../records/graphql.js';
import type { ServerHandle } from '../server/server.js';
import { graphqlSubscriptionSnapshot } from '../../harness/graphql-subscription.js';
import { PLAYGROUND_CSP } from './playground.js';

/** Registrations are checked when the router is built, after app.ready() loaded keel/graphql. */
const built = async (app: App) => (await app.ready()).intoRouter();

function appWith(setup: (app: App) => void, config: Record<string, unknown> = {}): App {
  const app = new App({ port: 0, host: '127.0.0.1', ...config });
  setup(app);
  return app;
}

describe('when registering GraphQL routes on an App', () => {
  it('should return the App for chaining', () => {
    const app = new App();
    assert.equal(app.registerGraphqlRoute('/graphql', 'POST', 'query_only', {}), app);
    assert.equal(app.registerGraphqlSdlRoute('/sdl', 'POST', 'type Query { a: Int }', { a: 1 }, { introspection_enabled: true }), app);
  });
  it('should reject an unknown schema_type with AppError GraphQl', async () => {
    await assert.rejects(() => built(new App().registerGraphqlRoute('/graphql', 'POST', 'everything', {})), (e: unknown) => e instanceof AppError && e.kind === 'GraphQl');
  });
  it('should reject each schema_type spelled differently', async () => {
    for (const bad of ['Query_Only', 'queryOnly', 'full ', '']) {
      await assert.rejects(() => built(new App().registerGraphqlRoute('/graphql', 'POST', bad, {})), (e: unknown) => e instanceof AppError && e.kind === 'GraphQl', bad);
    }
  });
  it('should reject an SDL with an enum with AppError GraphQl', async () => {
    await assert.rejects(() => built(new App().registerGraphqlSdlRoute('/g', 'POST', 'enum E { A } type Query { e: E }', {}, { introspection_enabled: true })),
      (e: unknown) => e instanceof AppError && e.kind === 'GraphQl');
  });
  it('should reject a path without a leading slash with AppError Route', async () => {
    await assert.rejects(() => built(new App().registerGraphqlRoute('graphql', 'POST', 'full', {})), (e: unknown) => e instanceof AppError && e.kind === 'Route');
  });
  it('should reject a method GraphQL over HTTP does not use with AppError Route', async () => {
    await assert.rejects(() => built(new App().registerGraphqlRoute('/graphql', 'DELETE', 'full', {})), (e: unknown) => e instanceof AppError && e.kind === 'Route');
  });
  it('should reject a bad SchemaConfig with ConfigError naming the key', async () => {
    await assert.rejects(() => built(new App().registerGraphqlRoute('/graphql', 'POST', 'full', { depth_limit: 0 })), (e: unknown) => e instanceof ConfigError && e.key === 'depth_limit');
  });
  it('should reject a second route on the same path', async () => {
    const app = new App().registerGraphqlRoute('/graphql', 'POST', 'full', {});
    await assert.rejects(() => built(app.registerGraphqlRoute('/graphql', 'POST', 'query_only', {})), AppError);
  });
});

describe('when an App serves a GraphQL route', () => {
  let handle: ServerHandle;
  before(async () => {
    handle = await appWith((app) => {
      app.registerGraphqlRoute('/graphql', 'POST', 'full', { complexity_limit: 50 }, new GraphQlRouteConfig().enablePlayground(true));
      app.registerGraphqlSdlRoute('/get-only', 'GET', 'type Query { a: Int }', { a: 7 }, { introspection_enabled: false });
    }, { enable_request_id: true }).listen();
  });
  after(() => handle.close());

  it('should answer queries behind the server-level middleware', async () => {
    const res = await request(handle.url).post('/graphql').send({ query: '{ hello }' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: { hello: 'Hello, World!' } });
    assert.ok(res.headers['x-request-id'], 'request id middleware ran');
  });
  it('should enforce the route\'s complexity limit', async () => {
    const res = await request(handle.url).post('/graphql').send({ query: '{ books(first: 100) { id } }' });
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].extensions.code, 'COMPLEXITY_LIMIT_EXCEEDED');
  });
  it('should serve the playground page with a same-origin CSP', async () => {
    const res = await request(handle.url).get('/graphql').set('Accept', 'text/html');
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type']!, /^text\/html/);
    assert.equal(res.headers['content-security-policy'], PLAYGROUND_CSP);
    assert.match(res.text, /src="\/graphql\/graphiql\/graphiql\.min\.js"/);
  });
  it('should serve the playground assets locally', async () => {
    const res = await request(handle.url).get('/graphql/graphiql/graphiql.min.js');
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type']!, /javascript/);
  });
  it('should serve only GET on a GET route', async () => {
    assert.deepEqual((await request(handle.url).get('/get-only').query({ query: '{ a }' })).body, { data: { a: 7 } });
    const post = await request(handle.url).post('/get-only').send({ query: '{ a }' });
    assert.equal(post.status, 405);
  });
  it('should not serve a playground where it is off', async () => {
    const res = await request(handle.url).get('/get-only').set('Accept', 'text/html');
    assert.notEqual(res.headers['content-type']?.startsWith('text/html'), true);
    assert.equal((await request(handle.url).get('/get-only/graphiql/init.js')).status, 404);
  });
  it('should run subscriptions on the same path', async () => {
    const snap = await graphqlSubscriptionSnapshot(`${handle.url.replace('http', 'ws')}/graphql`, { query: 'subscription { countdown(from: 1) }' });
    assert.equal(snap.acknowledged, true);
    assert.deepEqual(snap.event, { data: { countdown: 1 } });
    assert.equal(snap.complete_received, true);
  });
});

describe('when the server requires an API key', () => {
  let handle: ServerHandle;
  before(async () => {
    handle = await appWith((app) => app.registerGraphqlRoute('/graphql', 'POST', 'full', {}), { api_key_auth: { keys: ['k-123'] } }).listen();
  });
  after(() => handle.close());

  it('should answer 401 problem details over HTTP without the key', async () => {
    const res = await request(handle.url).post('/graphql').send({ query: '{ hello }' });
    assert.equal(res.status, 401);
    assert.match(res.headers['content-type']!, /^application\/problem\+json/);
  });
  it('should refuse the subscription upgrade without the key', async () => {
    const snap = await graphqlSubscriptionSnapshot(`${handle.url.replace('http', 'ws')}/graphql`, { query: 'subscription { countdown(from: 0) }', timeoutMs: 2000 });
    assert.equal(snap.acknowledged, false);
    assert.match(JSON.stringify(snap.errors), /401/);
  });
  it('should accept the subscription with the key', async () => {
    const snap = await graphqlSubscriptionSnapshot(`${handle.url.replace('http', 'ws')}/graphql`, { query: 'subscription { countdown(from: 0) }', headers: { 'X-API-Key': 'k-123' } });
    assert.deepEqual(snap.event, { data: { countdown: 0 } });
  });
});
