import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import request from 'supertest';
import { PLAYGROUND_ASSET_NAMES, playgroundPage } from './playground.js';
import { graphqlRoute } from './route.js';

function serve(enablePlayground: boolean) {
  const route = graphqlRoute('/api/graphql', 'POST', 'query_only', {}, { enablePlayground });
  return createServer((req, res) => void route.handler(req, res));
}

describe('when the playground is enabled', () => {
  const srv = serve(true);
  it('should serve the GraphiQL page to a browser navigation', async () => {
    const res = await request(srv).get('/api/graphql').set('Accept', 'text/html,application/xhtml+xml');
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type']!, /^text\/html; charset=utf-8/);
    assert.match(res.text, /data-endpoint="\/api\/graphql"/);
  });
  it('should load every script and style from the server itself', () => {
    const html = playgroundPage('/g', '/g/graphiql');
    // data:, is the empty favicon (no request to /favicon.ico).
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((u) => u !== 'data:,');
    assert.deepEqual(urls.sort(), PLAYGROUND_ASSET_NAMES.map((n) => `/g/graphiql/${n}`).sort());
    assert.equal(/https?:\/\//.test(html), false, 'no absolute URL in the page');
    assert.equal(/<script>[^<]/.test(html), false, 'no inline script');
  });
  it('should serve each asset with its media type', async () => {
    for (const name of PLAYGROUND_ASSET_NAMES) {
      const res = await request(srv).get(`/api/graphql/graphiql/${name}`);
      assert.equal(res.status, 200, name);
      assert.match(res.headers['content-type']!, name.endsWith('.css') ? /^text\/css/ : /^text\/javascript/, name);
      assert.ok(Number(res.headers['content-length']) > 0, name);
    }
  });
  it('should answer 404 for a file that is not one of its assets', async () => {
    for (const name of ['package.json', '..%2Fpackage.json', 'graphiql.js', 'constructor']) {
      assert.equal((await request(srv).get(`/api/graphql/graphiql/${name}`)).status, 404, name);
    }
  });
  it('should escape the endpoint in the page', () => {
    assert.match(playgroundPage('/g"><script>', '/a'), /data-endpoint="\/g&quot;&gt;&lt;script&gt;"/);
  });
  it('should still answer GraphQL GET requests that carry a query', async () => {
    const res = await request(srv).get('/api/graphql').set('Accept', 'text/html, application/json').query({ query: '{ hello }' });
    assert.deepEqual(res.body, { data: { hello: 'Hello, World!' } });
  });
});

describe('when the playground is disabled', () => {
  const srv = serve(false);
  it('should not serve the page', async () => {
    const res = await request(srv).get('/api/graphql').set('Accept', 'text/html');
    assert.doesNotMatch(res.headers['content-type'] ?? '', /text\/html/);
  });
  it('should not serve the assets', async () => {
    const res = await request(srv).get('/api/graphql/graphiql/graphiql.min.js');
    assert.notEqual(res.status, 200);
  });
});
