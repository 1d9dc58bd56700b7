import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import request from 'supertest';
import { builtinSchema } from './builtin-schemas.js';
import { createGraphqlHttpHandler, type GraphqlHttpOptions } from './http.js';
import { PersistedQueries } from './persisted.js';

const QUERY = '{ hello(name: "apq") }';
const HASH = createHash('sha256').update(QUERY).digest('hex');
const ext = (sha256Hash: string, version: unknown = 1) => ({ persistedQuery: { version, sha256Hash } });

function server(options: GraphqlHttpOptions = {}) {
  const handler = createGraphqlHttpHandler(builtinSchema('query_mutation'), options);
  return createServer((req, res) => void handler(req, res));
}
const post = (srv: ReturnType<typeof server>, body: unknown) => request(srv).post('/graphql').set('Content-Type', 'application/json').send(JSON.stringify(body));

describe('automatic persisted queries', () => {
  describe('when a client sends only a hash the route does not have', () => {
    it('should answer 400 PersistedQueryNotFound naming the hash', async () => {
      const res = await post(server(), { extensions: ext(HASH) });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', hash: HASH } }] });
    });
  });

  describe('when the client then sends the text with its hash', () => {
    it('should answer it, keep it, and answer the hash alone afterwards (POST and GET)', async () => {
      const srv = server();
      assert.deepEqual((await post(srv, { query: QUERY, extensions: ext(HASH) })).body, { data: { hello: 'Hello, apq!' } });
      const again = await post(srv, { extensions: ext(HASH) });
      assert.equal(again.status, 200);
      assert.deepEqual(again.body, { data: { hello: 'Hello, apq!' } });
      const get = await request(srv).get('/graphql').query({ extensions: JSON.stringify(ext(HASH)) });
      assert.deepEqual(get.body, { data: { hello: 'Hello, apq!' } });
    });
  });

  describe('when the request is wrong', () => {
    it('should refuse a text whose SHA-256 is not its hash, and not keep it', async () => {
      const srv = server();
      const other = '0'.repeat(64);
      const res = await post(srv, { query: QUERY, extensions: ext(other) });
      assert.equal(res.status, 400);
      assert.equal(res.body.errors[0].extensions.code, 'PERSISTED_QUERY_HASH_MISMATCH');
      assert.equal((await post(srv, { extensions: ext(other) })).body.errors[0].extensions.code, 'PERSISTED_QUERY_NOT_FOUND');
    });
    it('should refuse another version and a hash that is not a SHA-256 digest', async () => {
      assert.equal((await post(server(), { query: QUERY, extensions: ext(HASH, 2) })).body.errors[0].extensions.code, 'PERSISTED_QUERY_VERSION_UNSUPPORTED');
      assert.equal((await post(server(), { extensions: ext('abc') })).body.errors[0].extensions.code, 'PERSISTED_QUERY_INVALID');
      assert.equal((await post(server(), { extensions: { persistedQuery: null } })).status, 400);
    });
  });

  describe('when persisted queries are off', () => {
    it('should serve the text and ignore the extension', async () => {
      const srv = server({ persistedQueries: false });
      assert.deepEqual((await post(srv, { query: QUERY, extensions: ext('0'.repeat(64)) })).body, { data: { hello: 'Hello, apq!' } });
      assert.equal((await post(srv, { extensions: ext(HASH) })).body.errors[0].message, 'Missing query');
    });
  });

  describe('when clients send many texts', () => {
    it('should keep at most maxEntries of them', () => {
      const pq = new PersistedQueries({ maxEntries: 2 });
      const texts = ['{ a }', '{ b }', '{ c }'];
      const hashes = texts.map((t) => createHash('sha256').update(t).digest('hex'));
      texts.forEach((t, i) => pq.resolve(t, ext(hashes[i]!)));
      assert.ok('error' in pq.resolve(undefined, ext(hashes[0]!))!);
      assert.deepEqual(pq.resolve(undefined, ext(hashes[2]!)), { query: '{ c }' });
    });
    it('should serve a text over the whole budget without keeping it', () => {
      const pq = new PersistedQueries({ maxText: 10 });
      const long = `{ ${'x'.repeat(20)} }`;
      const h = createHash('sha256').update(long).digest('hex');
      assert.deepEqual(pq.resolve(long, ext(h)), { query: long });
      assert.ok('error' in pq.resolve(undefined, ext(h))!);
    });
  });
});
