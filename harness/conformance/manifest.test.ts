import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { SHARED_CORPUS } from '../../test/helpers/shared-corpus.js';
import { HANDLER_REACHED, isFrameworkOwnedError } from './handler-answer.js';
import { loadCases } from './loader.js';
import { buildManifest, colonRoute, normaliseParameters, routeTable, type Manifest } from './manifest.js';
import { CASE_HEADER } from './runner.js';
import { loadSuite } from './suite/index.js';
import { isRunnable, type ConformanceCase } from './types.js';

const SCHEMA = JSON.parse(readFileSync(new URL('../../schemas/ConformanceManifest.schema.json', import.meta.url), 'utf8'));
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(SCHEMA);
const OWN_CASES = new URL('../../test/fixtures/conformance', import.meta.url).pathname;

/** Every property name the schema declares, by where it is declared. */
function declared(schema: Record<string, unknown>, at = '$', out = new Map<string, string[]>()): Map<string, string[]> {
  const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (props) out.set(at, Object.keys(props));
  for (const [k, v] of Object.entries(props ?? {})) declared(v, `${at}.${k}`, out);
  for (const [k, v] of Object.entries((schema.$defs as Record<string, Record<string, unknown>>) ?? {})) declared(v, `#${k}`, out);
  for (const alt of (schema.oneOf as Record<string, unknown>[] | undefined) ?? []) declared(alt, at, out);
  const items = schema.items as Record<string, unknown> | undefined;
  if (items && !items.$ref) declared(items, `${at}[]`, out);
  return out;
}

function used(manifests: Manifest[]): Set<string> {
  const keys = new Set<string>();
  for (const m of manifests) {
    Object.keys(m).forEach((k) => keys.add(`$.${k}`));
    for (const c of m.cases) {
      Object.keys(c).forEach((k) => keys.add(`#case.${k}`));
      c.parameters.forEach((p) => Object.keys(p).forEach((k) => keys.add(`#parameter.${k}`)));
      Object.keys(c.request).forEach((k) => keys.add(`#request.${k}`));
      if (c.body) Object.keys(c.body).forEach((k) => keys.add(`#case.body.${k}`));
      Object.keys(c.handler_response).forEach((k) => keys.add(`#case.handler_response.${k}`));
      Object.keys(c.handler_response.error ?? {}).forEach((k) => keys.add(`#case.handler_response.error.${k}`));
    }
    m.routes.forEach((r) => Object.keys(r).forEach((k) => keys.add(`$.routes[].${k}`)));
    m.skipped.forEach((s) => Object.keys(s).forEach((k) => keys.add(`$.skipped[].${k}`)));
  }
  return keys;
}

const corpus = existsSync(SHARED_CORPUS) ? [join(SHARED_CORPUS, 'testing_data'), join(SHARED_CORPUS, 'fixtures')] : [];

/**
 * Cases that carry every optional part of the manifest (a typed body with its content
 * type, a request body, a parameter separator and default, a skipped case), so the check below
 * passes or fails on keel's own data alone, whether or not the shared corpus is beside the repo.
 */
const OPTIONAL_PARTS = [
  {
    id: 'optional-parts',
    category: 'json_bodies',
    name: 'optional parts',
    description: 'a case with every optional manifest part',
    source: 'manifest.test.ts',
    handler: {
      route: '/items',
      method: 'post',
      parameters: { query: { tags: { type: 'array', items: { type: 'string' }, separator: '|' }, limit: { type: 'integer', default: 10 } } },
      body_schema: { type: 'object' },
      content_type: 'application/json',
    },
    request: { method: 'POST', path: '/items', body: { a: 1 } },
    expected: { status_code: 200 },
    extra: {},
  },
  { id: 'skipped-case', category: 'json_bodies', name: 'skipped', source: 'manifest.test.ts', handler: { route: '/x', method: 'get' }, request: { method: 'GET', path: '/x' }, expected: { status_code: 200 }, extra: {}, skip: 'skipped by the corpus for node: example' },
] as unknown as ConformanceCase[];

describe('the conformance manifest', () => {
  const own = [buildManifest(loadCases([OWN_CASES])), buildManifest(OPTIONAL_PARTS), buildManifest(loadSuite())];
  const manifests = [...own, ...(corpus.length ? [buildManifest(loadCases(corpus))] : [])];

  describe('when checked against schemas/ConformanceManifest.schema.json', () => {
    it(`should validate for keel's own cases${corpus.length ? ' and the shared corpus' : ' (the shared corpus is absent: keel\'s own cases only)'}`, () => {
      for (const m of manifests) assert.ok(validate(m), JSON.stringify(validate.errors?.slice(0, 5), null, 2));
    });

    it('should declare no property the manifest never produces (keel\'s own cases)', () => {
      const produced = used(own);
      const unused: string[] = [];
      for (const [at, names] of declared(SCHEMA)) {
        for (const n of names) {
          const key = at === '$' ? `$.${n}` : `${at}.${n}`;
          if (at.startsWith('$.') && !at.startsWith('$.routes[]') && !at.startsWith('$.skipped[]')) continue;
          if (!produced.has(key)) unused.push(key);
        }
      }
      assert.deepEqual(unused, []);
    });
  });

  describe('when a case expects an answer the framework owns (the shipped suite)', () => {
    const cases = loadSuite().filter(isRunnable);
    const m = buildManifest(cases);
    const owned = new Set(cases.filter(isFrameworkOwnedError).map((c) => c.id));

    it('should tell the server only that the handler was reached, never the expected error', () => {
      assert.ok(owned.size > 150, `${owned.size} framework-owned cases`);
      for (const c of m.cases) {
        assert.equal('expected_response' in c || 'expected_status' in c, false, c.id);
        if (owned.has(c.id)) assert.deepEqual({ status: c.handler_response.status, body: c.handler_response.body }, { status: 200, body: { ...HANDLER_REACHED } }, c.id);
      }
    });

    it('should carry none of the framework\'s answers anywhere in the manifest', () => {
      const text = JSON.stringify(m);
      for (const words of ['Request Validation Failed', 'validation error in request', 'Payload Too Large', 'not allowed', 'Method Not Allowed', 'JWT validation failed', 'Invalid API key', 'Too Many Requests', 'Retry-After', 'Access-Control-Allow-Origin', 'string_too_short', 'int_parsing']) {
        assert.equal(text.includes(words), false, `the manifest mentions ${JSON.stringify(words)}`);
      }
    });

    it('should still give a successful case its handler\'s answer', () => {
      const created = m.cases.find((c) => c.id === 'keel/routing/26_created_201')!;
      assert.deepEqual(created.handler_response, { status: 201, headers: { Location: '/things/1' }, body: { id: 1, name: 'x' } });
    });
  });

  describe('when normalising a case', () => {
    const c = {
      id: 'x',
      category: 'query_params',
      name: 'x',
      source: 'x.json',
      handler: {
        route: '/items/{item_id:int}/{rest:path}',
        method: 'get',
        parameters: {
          query: { q: { type: 'string', description: 'free text' }, limit: { type: 'integer', default: 10 }, opt: { type: 'string', optional: true }, off: { type: 'string', required: false }, tags: { type: 'array', items: { type: 'string' }, separator: '|' } },
          headers: { 'X-Token': { type: 'string', minLength: 3 } },
        },
      },
      request: { method: 'GET', path: '/items/1/a/b?q=x', query_params: { q: 'x', tags: 'a|b' } },
      expected: { status_code: 200 },
      extra: {},
    } as unknown as ConformanceCase;

    it('should decide required-ness: required unless optional, required: false or a default; path always', () => {
      const byName = Object.fromEntries(normaliseParameters(c.handler).map((p) => [p.name, p]));
      assert.deepEqual(Object.fromEntries(Object.entries(byName).map(([k, p]) => [k, p.required])), { item_id: true, rest: true, q: true, limit: false, opt: false, off: false, tags: true, 'X-Token': true });
      assert.deepEqual(byName.item_id!.schema, { type: 'integer' });
      assert.deepEqual(byName.q!.schema, { type: 'string' }, 'meta keys are lifted out of the schema');
      assert.equal(byName.tags!.separator, '|');
      assert.equal(byName.limit!.default, 10);
    });

    it('should give the route in both syntaxes and the exact request', () => {
      assert.equal(colonRoute(c.handler.route), '/items/:item_id/*rest');
      const m = buildManifest([c]);
      assert.equal(m.cases[0]!.request.path, '/items/1/a/b?q=x&tags=a%7Cb');
      assert.deepEqual(m.cases[0]!.request.headers, [[CASE_HEADER, 'x']]);
      assert.equal(m.cases[0]!.method, 'GET');
      assert.deepEqual(m.cases[0]!.handler_response, { status: 200 });
    });

    it('should count handler definitions per route as routers see it ({id} and {item_id} are one route)', () => {
      const a = buildManifest([c]).cases[0]!;
      const b = { ...a, id: 'y', route: '/items/{id}/{rest:path}', handler: { ...a.handler, route: '/items/{id}/{rest:path}' } };
      assert.deepEqual(routeTable([a, b]).map((r) => [r.method, r.cases, r.handlers]), [['GET', ['x', 'y'], 2]]);
    });
  });
});
