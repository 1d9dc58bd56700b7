// keel:integration
/**
 * A second outside implementation in CI: Fastify 5 with its own plugins (@fastify/cors, @fastify/jwt,
 * @fastify/rate-limit, @fastify/compress), written from docs/conformance.md
 * (test/conformance-fastify/server.ts), runs the whole shipped suite through --exec. Its failures,
 * category by category, must be exactly those test/conformance-fastify/expectation.json lists, each
 * with a reason (what Fastify or a plugin does, or what the implementation leaves out); a new failure
 * is a suite defect to fix or a reason to write down, and a case that starts passing is taken off.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './helpers/conformance-cli.js';

const SERVER = 'node --import tsx test/conformance-fastify/server.ts {case_file} {port}';

interface Expectation {
  reasons: Record<string, { kind: 'framework' | 'implementation'; why: string }>;
  failures: Record<string, Record<string, string>>;
}
const expectation = JSON.parse(readFileSync(new URL('./conformance-fastify/expectation.json', import.meta.url), 'utf8')) as Expectation;

describe('a Fastify 5 implementation with its plugins, run through the shipped suite (--exec)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'keel-conformance-fastify-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('should explain every failure it lists, as the framework\'s behaviour or the implementation\'s', () => {
    for (const [category, cases] of Object.entries(expectation.failures)) {
      for (const [id, reason] of Object.entries(cases)) {
        assert.ok(id.startsWith(`keel/${category}/`), `${id} is listed under ${category}`);
        assert.ok(expectation.reasons[reason], `${id}: reason ${reason} is explained`);
      }
    }
    for (const [key, r] of Object.entries(expectation.reasons)) assert.ok(['framework', 'implementation'].includes(r.kind) && r.why.length > 40, key);
  });

  it('should fail exactly the listed cases, category by category, and pass every other', { timeout: 600_000 }, async () => {
    const json = join(dir, 'report.json');
    const r = await runCli(['--exec', SERVER, '--quiet', '--no-diffs', '--exit-zero', '--json', json]);
    assert.equal(r.code, 0, r.err);
    const report = JSON.parse(readFileSync(json, 'utf8')) as { summary: { contradicted: number }; cases: Array<{ id: string; category: string; status: string; error?: string }> };
    assert.equal(report.summary.contradicted, 0);
    const failed: Record<string, string[]> = {};
    for (const c of report.cases) if (c.status === 'failed') (failed[c.category] ??= []).push(c.id);
    const categories = [...new Set([...Object.keys(failed), ...Object.keys(expectation.failures)])].sort();
    for (const category of categories) {
      const got = (failed[category] ?? []).sort();
      const want = Object.keys(expectation.failures[category] ?? {}).sort();
      const details = report.cases.filter((c) => got.includes(c.id) && !want.includes(c.id)).map((c) => `${c.id}${c.error ? `: ${c.error}` : ''}`);
      assert.deepEqual(got, want, `${category}: new failures (${details.join('; ') || 'none'}) or cases that now pass`);
    }
    // Only WebSocket sessions are skipped (the manifest describes HTTP cases).
    assert.ok(report.cases.filter((c) => c.status === 'skipped').every((c) => /^keel\/(websocket_session|graphql_subscription)\//.test(c.id)));
  });
});
