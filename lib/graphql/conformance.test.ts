// keel:integration
/**
 * The GraphQL cases of the shared conformance corpus (../shared/conformance/testing_data/graphql),
 * each served by an App through `registerGraphqlSdlRoute` and checked over real HTTP (queries,
 * mutations) or graphql-transport-ws (subscriptions).
 *
 * The fixture app is the spec's SDL route: `response_data` holds each root resolver's mock value
 * (or, for resolvers that compute from arguments, the case's expected data: results that depend on
 * arguments must already sit at their path, spec rule 3), and resolvers of type `error` become
 * `field_errors` at the path the query reaches them by. Everything else (status, validation errors,
 * null propagation, error paths, introspection) is keel's own behaviour.
 *
 * Cases needing features outside the spec are listed in test/expectations/graphql.json with the
 * reason; a listed case that starts passing fails this test so the list stays true.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, relative } from 'node:path';
import { TypeInfo, parse, visit, visitWithTypeInfo, getNamedType, buildASTSchema, type GraphQLSchema } from 'graphql';
import { App } from '../app/app.js';
import type { ServerHandle } from '../server/server.js';
import { graphqlSubscriptionSnapshot } from '../../harness/graphql-subscription.js';

const CORPUS = fileURLToPath(new URL('../../../shared/conformance/testing_data/graphql', import.meta.url));
const EXPECTATIONS = fileURLToPath(new URL('../../test/expectations/graphql.json', import.meta.url));
const ROOTS = new Set(['Query', 'Mutation', 'Subscription']);

interface GraphqlCase {
  operation_type: 'query' | 'mutation' | 'subscription';
  endpoint?: string;
  schema: string;
  handler_config?: { introspection_enabled?: boolean };
  depth_limit?: number;
  complexity_limit?: number;
  request: { method?: string; path?: string; headers?: Record<string, string>; body?: { query: string; variables?: Record<string, unknown>; operationName?: string } };
  expected_response: { status_code: number; data?: unknown; data_partial?: unknown; errors?: { message?: string; path?: unknown[]; locations?: unknown[]; extensions?: Record<string, unknown> }[] };
  resolvers?: Record<string, { type?: string; return_value?: unknown; error_message?: string }>;
}

function caseFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...caseFiles(p));
    else if (name.endsWith('.json')) out.push(p);
  }
  return out;
}

/** Field-name paths at which the query selects `Type.field` (for `error` resolvers on nested types). */
function pathsOf(sdl: string, query: string, typeName: string, fieldName: string): string[] {
  let schema: GraphQLSchema;
  try {
    schema = buildASTSchema(parse(sdl), { assumeValid: true });
  } catch {
    return [];
  }
  const info = new TypeInfo(schema);
  const stack: string[] = [];
  const found = new Set<string>();
  visit(parse(query), visitWithTypeInfo(info, {
    Field: {
      enter(node) {
        stack.push(node.name.value);
        const parent = info.getParentType();
        if (parent && getNamedType(parent).name === typeName && node.name.value === fieldName) found.add(stack.join('.'));
      },
      leave() {
        stack.pop();
      },
    },
  }));
  return [...found];
}

/** The fixture app's static data and injected errors for a case. */
function fixtureFor(c: GraphqlCase): { data: Record<string, unknown>; fieldErrors: { path: string; message: string }[] } {
  const expected = (c.expected_response.data ?? c.expected_response.data_partial ?? {}) as Record<string, unknown>;
  const data: Record<string, unknown> = { ...(expected && typeof expected === 'object' ? expected : {}) };
  const fieldErrors: { path: string; message: string }[] = [];
  for (const [key, r] of Object.entries(c.resolvers ?? {})) {
    const [type, field] = key.split('.');
    if (!type || !field) continue;
    if (r.type === 'error' && r.error_message) {
      const paths = ROOTS.has(type) ? [field] : pathsOf(c.schema, c.request.body?.query ?? '', type, field);
      for (const path of paths) fieldErrors.push({ path, message: r.error_message });
    } else if (ROOTS.has(type) && r.return_value !== undefined && !(field in data)) {
      data[field] = r.return_value;
    }
  }
  return { data, fieldErrors };
}

/** Differences between what the case expects and what keel answered. */
function compare(c: GraphqlCase, status: number, body: Record<string, unknown>): string[] {
  const exp = c.expected_response;
  const out: string[] = [];
  if (status !== exp.status_code) out.push(`status ${status}, expected ${exp.status_code}`);
  if ('data' in exp) {
    try {
      assert.deepEqual(body.data ?? null, exp.data ?? null);
    } catch {
      out.push(`data ${JSON.stringify(body.data ?? null).slice(0, 160)}, expected ${JSON.stringify(exp.data).slice(0, 160)}`);
    }
  }
  if (exp.data_partial !== undefined && !isSubset(exp.data_partial, body.data)) out.push(`data lacks ${JSON.stringify(exp.data_partial).slice(0, 160)}`);
  const errors = (body.errors ?? []) as Record<string, unknown>[];
  if (exp.errors) {
    if (errors.length !== exp.errors.length) out.push(`${errors.length} errors, expected ${exp.errors.length}: ${JSON.stringify(errors.map((e) => e.message)).slice(0, 200)}`);
    exp.errors.forEach((e, i) => {
      const got = errors[i] ?? {};
      if (e.message !== undefined && got.message !== e.message) out.push(`errors[${i}].message ${JSON.stringify(got.message)}, expected ${JSON.stringify(e.message)}`);
      if (e.path !== undefined && !isSubset(e.path, got.path)) out.push(`errors[${i}].path ${JSON.stringify(got.path)}, expected ${JSON.stringify(e.path)}`);
      if (e.locations !== undefined && !isSubset(e.locations, got.locations)) out.push(`errors[${i}].locations ${JSON.stringify(got.locations)}, expected ${JSON.stringify(e.locations)}`);
      if (e.extensions !== undefined && !isSubset(e.extensions, got.extensions)) out.push(`errors[${i}].extensions ${JSON.stringify(got.extensions)}, expected ${JSON.stringify(e.extensions)}`);
    });
  } else if (errors.length && status === 200) {
    out.push(`unexpected errors ${JSON.stringify(errors.map((e) => e.message)).slice(0, 200)}`);
  }
  return out;
}

function isSubset(expected: unknown, actual: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return expected === actual;
  if (actual === null || typeof actual !== 'object') return false;
  if (Array.isArray(expected)) return Array.isArray(actual) && expected.length === actual.length && expected.every((v, i) => isSubset(v, actual[i]));
  return Object.entries(expected).every(([k, v]) => isSubset(v, (actual as Record<string, unknown>)[k]));
}

/** Run one case on a fresh App; the list of mismatches (empty: pass). */
export async function runCase(c: GraphqlCase): Promise<string[]> {
  const { data, fieldErrors } = fixtureFor(c);
  const path = c.endpoint ?? c.request.path ?? '/graphql';
  const app = new App({ port: 0, host: '127.0.0.1' });
  try {
    app.registerGraphqlSdlRoute(path, 'POST', c.schema, data, {
      introspection_enabled: c.handler_config?.introspection_enabled ?? true,
      max_depth: c.depth_limit ?? null,
      max_complexity: c.complexity_limit ?? null,
      field_errors: fieldErrors,
    });
    // The route is checked when the router is built (after app.ready() loaded keel/graphql).
    (await app.ready()).intoRouter();
  } catch (err) {
    return [`route not registered: ${(err as Error).message}`];
  }
  const handle: ServerHandle = await app.listen();
  try {
    const body = c.request.body ?? { query: '' };
    if (c.operation_type === 'subscription') {
      const snap = await graphqlSubscriptionSnapshot(`${handle.url.replace('http', 'ws')}${path}`, { ...body, timeoutMs: 3000 });
      if (!snap.acknowledged || snap.errors.length) return [`subscription failed: ${JSON.stringify(snap.errors).slice(0, 200)}`];
      return compare(c, 200, (snap.event ?? {}) as Record<string, unknown>);
    }
    const res = await fetch(handle.url + (c.request.path ?? path), {
      method: c.request.method ?? 'POST',
      headers: { 'Content-Type': 'application/json', ...(c.request.headers ?? {}) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return [`status ${res.status}, body is not JSON`];
    }
    return compare(c, res.status, parsed);
  } finally {
    await handle.close();
  }
}

const present = existsSync(CORPUS);

describe('the GraphQL cases of the shared conformance corpus', { skip: present ? false : `shared corpus not found at ${CORPUS}: skipped` }, () => {
  const expectations = (JSON.parse(readFileSync(EXPECTATIONS, 'utf8')) as { cases: Record<string, string> }).cases;
  const files = present ? caseFiles(CORPUS) : [];
  const cases = files
    .map((file) => ({ id: relative(CORPUS, file), doc: JSON.parse(readFileSync(file, 'utf8')) as GraphqlCase }))
    .filter(({ doc }) => typeof doc.operation_type === 'string' && typeof doc.schema === 'string');

  it('should find the cases', () => {
    assert.ok(cases.length > 0, `no GraphQL cases under ${CORPUS}`);
  });

  for (const { id, doc } of cases) {
    const reason = expectations[id];
    it(reason ? `should still differ on ${id} (listed: ${reason})` : `should pass ${id}`, async () => {
      const mismatches = await runCase(doc);
      if (reason) assert.notDeepEqual(mismatches, [], `${id} passes now: remove it from test/expectations/graphql.json`);
      else assert.deepEqual(mismatches, []);
    });
  }

  it('should list no case that does not exist', () => {
    const ids = new Set(cases.map((c) => c.id));
    assert.deepEqual(Object.keys(expectations).filter((id) => !ids.has(id)), []);
  });

  it('should only ignore files that are not cases', () => {
    const ignored = files.map((f) => relative(CORPUS, f)).filter((id) => !cases.some((c) => c.id === id));
    for (const id of ignored) assert.match(id, /(^|\/)schema\.json$/, `${id} was not run`);
  });
});

