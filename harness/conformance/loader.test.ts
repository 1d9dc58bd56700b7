import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCases } from './loader.js';
import { isRunnable, type ConformanceCase, type ProtocolCase } from './types.js';

const httpCase = (name: string) => ({
  name,
  handler: { route: '/items/{id:int}', method: 'GET' },
  request: { method: 'GET', path: '/items/1' },
  expected_response: { status_code: 200, body: { id: 1 } },
});

let root: string;
const write = (rel: string, value: unknown) => {
  const p = join(root, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, typeof value === 'string' ? value : JSON.stringify(value));
};

before(() => {
  root = mkdtempSync(join(tmpdir(), 'keel-cases-'));
  write('testing_data/path_params/01_int.json', httpCase('int id'));
  write('testing_data/path_params/schema.json', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' });
  write('testing_data/00-FIXTURE-SCHEMA.json', { $schema: 'http://json-schema.org/draft-07/schema#', title: 'schema' });
  write('testing_data/graphql/queries/01_user.json', { operation_type: 'query', endpoint: '/graphql', schema: 'type Query { a: Int }' });
  write('testing_data/protobuf/01_unary.json', { name: 'unary', protobuf: { package: 'x' }, handler: { service: 'S', method: 'M' }, request: { message: {} }, expected_response: { status_code: 'OK' } });
  write('fixtures/status_codes.json', [
    { id: 'ok', category: 'status_codes', description: 'ok', http: httpCase('ok') },
    { id: 'trace', category: 'status_codes', description: 'no TRACE in node', http: httpCase('trace'), skip: { languages: ['node'], reason: 'TRACE is not supported' } },
    { id: 'rust_only', category: 'status_codes', description: 'rust skip', http: httpCase('rust'), skip: { languages: ['rust'], reason: 'tower' } },
  ]);
});
after(() => rmSync(root, { recursive: true, force: true }));

describe('loadCases', () => {
  describe('when given a corpus directory with both layouts', () => {
    it('should load one case per file and one per array item, with ids relative to the directory', () => {
      const ids = loadCases([root]).map((c) => c.id);
      assert.deepEqual(ids, [
        'fixtures/status_codes/ok',
        'fixtures/status_codes/trace',
        'fixtures/status_codes/rust_only',
        'testing_data/graphql/queries/01_user',
        'testing_data/path_params/01_int',
        'testing_data/protobuf/01_unary',
      ]);
    });

    it('should not treat schema.json or JSON Schema documents as cases', () => {
      assert.ok(loadCases([root]).every((c) => !c.id.includes('schema')));
    });

    it('should normalise an HTTP case', () => {
      const c = loadCases([join(root, 'testing_data/path_params')])[0] as ConformanceCase;
      assert.equal(c.id, 'testing_data/path_params/01_int');
      assert.equal(c.category, 'path_params');
      assert.equal(c.name, 'int id');
      assert.equal(c.handler.route, '/items/{id:int}');
      assert.equal(c.expected.status_code, 200);
      assert.ok(isRunnable(c));
    });

    it('should skip other protocols with a reason', () => {
      const byId = new Map(loadCases([root]).map((c) => [c.id, c]));
      assert.match(byId.get('testing_data/graphql/queries/01_user')!.skip!, /GraphQL/);
      assert.match(byId.get('testing_data/protobuf/01_unary')!.skip!, /protobuf/);
    });

    it('should honour skip only when it names node', () => {
      const byId = new Map(loadCases([root]).map((c) => [c.id, c]));
      assert.match(byId.get('fixtures/status_codes/trace')!.skip!, /TRACE is not supported/);
      assert.equal(byId.get('fixtures/status_codes/rust_only')!.skip, undefined);
    });
  });

  describe('when given the two layouts as separate directories', () => {
    it('should keep the layout in the ids, so copies of one case in both layouts do not collide', () => {
      write('fixtures/path_params.json', [{ id: '01_int', category: 'path_params', http: httpCase('copy') }]);
      try {
        const ids = loadCases([join(root, 'testing_data'), join(root, 'fixtures')]).map((c) => c.id);
        assert.ok(ids.includes('testing_data/path_params/01_int'));
        assert.ok(ids.includes('fixtures/path_params/01_int'));
        assert.deepEqual([...ids].sort(), loadCases([root]).map((c) => c.id).sort(), 'the same ids as when the corpus root is given');
      } finally {
        rmSync(join(root, 'fixtures/path_params.json'));
      }
    });

    it('should give a folder outside the layouts ids relative to it', () => {
      write('own/fixtures/conformance/basics/01_a.json', httpCase('own'));
      try {
        assert.deepEqual(loadCases([join(root, 'own/fixtures/conformance')]).map((c) => c.id), ['basics/01_a']);
      } finally {
        rmSync(join(root, 'own'), { recursive: true });
      }
    });
  });

  describe('when a case needs a feature outside the specification', () => {
    it('should skip dependency injection and SQL cases with that reason', () => {
      write('di/basics/01_di.json', { ...httpCase('di'), handler: { route: '/x', method: 'GET', dependencies: { db: { type: 'value', value: 1 } } } });
      write('di/basics/02_sql.json', { ...httpCase('sql'), tags: ['sql'] });
      write('di/basics/03_plain.json', httpCase('plain'));
      // Cases the runner has never seen: recognised by category and tags, not only by handler fields.
      write('di/di/04_by_category.json', httpCase('by category'));
      write('di/basics/05_by_tag.json', { ...httpCase('by tag'), tags: ['auth', 'dependency_injection_singleton'] });
      write('di/database/06_by_category.json', httpCase('sql by category'));
      write('di/basics/07_by_tag.json', { ...httpCase('sql by tag'), tags: ['Database'] });
      try {
        const byId = new Map(loadCases([join(root, 'di')]).map((c) => [c.id, c]));
        assert.match(byId.get('basics/01_di')!.skip!, /outside the specification: dependency injection \(handler\.dependencies\)/);
        assert.match(byId.get('basics/02_sql')!.skip!, /outside the specification: SQL/);
        assert.equal(byId.get('basics/03_plain')!.skip, undefined);
        assert.match(byId.get('di/04_by_category')!.skip!, /dependency injection \(category "di"\)/);
        assert.match(byId.get('basics/05_by_tag')!.skip!, /dependency injection \(tag "dependency_injection_singleton"\)/);
        assert.match(byId.get('database/06_by_category')!.skip!, /SQL \/ database access \(category "database"\)/);
        assert.match(byId.get('basics/07_by_tag')!.skip!, /SQL \/ database access \(tag "database"\)/);
      } finally {
        rmSync(join(root, 'di'), { recursive: true });
      }
    });

    it('should load a gRPC call written as an HTTP/1.1 JSON request as a gRPC case, and refuse a path that is no gRPC method', () => {
      const grpc = httpCase('grpc');
      const headers = { 'content-type': 'application/grpc+proto', te: 'trailers' };
      write('grpc/calls/01_unary.json', { ...grpc, handler: { route: '/pkg.Items/Get', method: 'POST' }, request: { method: 'POST', path: '/pkg.Items/Get', headers, body: { id: 1 } }, expected_response: { status_code: 200, headers: { 'grpc-status': '5' }, body: { code: 'NOT_FOUND', message: 'no item' } } });
      write('grpc/calls/02_json.json', { ...grpc, request: { ...(grpc.request as object), headers: { 'Content-Type': 'application/json' } } });
      write('grpc/calls/03_path.json', { ...grpc, request: { ...(grpc.request as object), headers } });
      try {
        const byId = new Map(loadCases([join(root, 'grpc')]).map((c) => [c.id, c]));
        const unary = byId.get('calls/01_unary') as ProtocolCase;
        assert.equal(unary.kind, 'grpc');
        assert.equal(unary.spec.service, 'pkg.Items');
        assert.deepEqual((unary.spec.expected as Record<string, unknown>).status_message, 'no item');
        assert.match(String(unary.spec.proto), /message GetRequest \{\n  int64 id = 1;/);
        assert.equal(byId.get('calls/02_json')!.skip, undefined);
        assert.match(byId.get('calls/03_path')!.skip!, /path must be \/<package>\.<Service>\/<Method>/);
      } finally {
        rmSync(join(root, 'grpc'), { recursive: true });
      }
    });
  });

  describe('when given single files', () => {
    it('should name cases after the parent folder or the array file', () => {
      const ids = loadCases([join(root, 'testing_data/path_params/01_int.json'), join(root, 'fixtures/status_codes.json')]).map((c) => c.id);
      assert.deepEqual(ids, ['testing_data/path_params/01_int', 'fixtures/status_codes/ok', 'fixtures/status_codes/trace', 'fixtures/status_codes/rust_only']);
    });
  });

  describe('when given bad input', () => {
    it('should name a file that is not JSON', () => {
      write('bad/broken.json', '{ nope');
      assert.throws(() => loadCases([join(root, 'bad')]), /broken\.json: not valid JSON/);
      rmSync(join(root, 'bad'), { recursive: true });
    });

    it('should reject duplicate ids', () => {
      const p = join(root, 'testing_data/path_params/01_int.json');
      assert.throws(() => loadCases([p, p]), /Duplicate case id "testing_data\/path_params\/01_int"/);
    });

    it('should fail for a path that does not exist', () => {
      assert.throws(() => loadCases([join(root, 'missing')]), /ENOENT/);
    });
  });
});
