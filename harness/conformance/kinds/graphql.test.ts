import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildManifest } from '../manifest.js';
import { casesOf, run } from './testkit.js';

const SDL = 'type Query {\n  book(id: ID!): Book\n  secret: String\n}\n\ntype Book {\n  id: ID!\n  title: String!\n  price: Float\n}';
const gql = (query: string, expected: Record<string, unknown>, resolvers: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  name: 'book', operation_type: 'query', endpoint: '/graphql', schema: SDL, resolvers, ...extra,
  request: { method: 'POST', path: '/graphql', headers: { 'Content-Type': 'application/json' }, body: { query, variables: { id: 'b1' } } },
  expected_response: expected,
});
const BOOK = 'query($id: ID!) { book(id: $id) { id title } }';

describe('GraphQL kind', () => {
  describe('when a GraphQL document is run against keel\'s GraphQL route', () => {
    it('should pass a query answered by a mock resolver', async () => {
      const [c] = casesOf(gql(BOOK, { status_code: 200, data: { book: { id: 'b1', title: 'Dune' } } }, { 'Query.book': { type: 'mock', return_value: { id: 'b1', title: 'Dune', price: 9.5 } } }));
      const r = await run(c!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
    });

    it('should send a batch to a route that takes batches and compare each response\'s data in order', async () => {
      const mapping = { 'Query.book': { type: 'mock_with_args', arg_mapping: { b1: '{"id": "b1", "title": "Dune"}', b2: '{"id": "b2", "title": "Emma"}' } } };
      const doc = (titles: string[]) => ({
        ...gql(BOOK, { status_code: 200, data: titles.map((t, i) => ({ book: { id: `b${i + 1}`, title: t } })) }, mapping),
        request: { method: 'POST', path: '/graphql', headers: { 'Content-Type': 'application/json' }, body: [{ query: '{ book(id: "b1") { id title } }' }, { query: '{ book(id: "b2") { id title } }' }] },
      });
      const [c] = casesOf(doc(['Dune', 'Emma']));
      const r = await run(c!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
      assert.deepEqual((await run(casesOf(doc(['Dune', 'Persuasion']))[0]!)).mismatches.map((m) => m.what), ['body $[1].data']);
      // A route that does not say it takes batches refuses the array (the case sent to a single-operation case's server).
      assert.equal((await run(c!, casesOf(gql(BOOK, { status_code: 200, data: { book: null } }))[0]!)).status, 'failed');
    });

    it('should answer a resolver written as code (factory) with the expected data at its field', async () => {
      const [c] = casesOf(gql(BOOK, { status_code: 200, data: { book: { id: 'b1', title: 'Emma' } } }, { 'Query.book': { type: 'factory', factory_fn: 'load_book' } }));
      assert.equal((await run(c!)).status, 'passed');
    });

    it('should carry an error resolver\'s status when the case expects one (an application\'s 401)', async () => {
      const [c] = casesOf(gql('{ secret }', { status_code: 401, errors: [{ message: 'Token expired' }] }, { 'Query.secret': { type: 'error', error_message: 'Token expired' } }));
      const r = await run(c!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
    });

    it('should leave validation to keel: an unknown field is a 400 with its location', async () => {
      const [c] = casesOf(gql('{\n  book(id: "b1") { isbn }\n}', { status_code: 400, errors: [{ message: 'Cannot query field "isbn" on type "Book".', locations: [{ line: 2, column: 20 }] }] }));
      const r = await run(c!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
    });

    it('should give an SDL without a Query type a placeholder one (GraphQL spec §3.3.1)', async () => {
      const [c] = casesOf({ ...gql('mutation { ping }', { status_code: 200, data: { ping: 'pong' } }, { 'Mutation.ping': { type: 'mock', return_value: 'pong' } }), operation_type: 'mutation', schema: 'type Mutation { ping: String }' });
      assert.equal((await run(c!)).status, 'passed');
    });

    it('should fail when the answer differs', async () => {
      const [want] = casesOf(gql(BOOK, { status_code: 200, data: { book: { id: 'b1', title: 'Dune' } } }, { 'Query.book': { type: 'mock', return_value: { id: 'b1', title: 'Dune' } } }));
      const [other] = casesOf(gql(BOOK, { status_code: 200, data: { book: { id: 'b1', title: 'Emma' } } }, { 'Query.book': { type: 'mock', return_value: { id: 'b1', title: 'Emma' } } }));
      assert.deepEqual((await run(want!, other!)).mismatches.map((m) => m.what), ['body $.data']);
    });
  });

  describe('when the manifest carries a GraphQL case', () => {
    it('should give the SDL, resolvers and data, never the expected errors', () => {
      const [c] = casesOf(gql('{ nope }', { status_code: 400, errors: [{ message: 'Cannot query field "nope" on type "Query".' }] }));
      const server = buildManifest([c!]).protocols[0]!.server;
      assert.deepEqual(Object.keys(server).sort(), ['data', 'endpoint', 'limits', 'resolver_error_status', 'resolvers', 'sdl']);
      assert.doesNotMatch(JSON.stringify(server), /Cannot query/);
    });
  });
});
