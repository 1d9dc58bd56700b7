/**
 * docs/conformance.md's worked example: an implementation that is not keel (Fastify + Ajv,
 * test/conformance-example/server.ts) runs the query_params, path_params and json_bodies cases of
 * the shared corpus (both layouts) through the CLI's per-group mode (--exec) and manifest, as an
 * outside author would, and passes every case it implements; the corpus's known contradictions are
 * reported as such, not as its failures. Skips visibly without the corpus.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { runCli } from './helpers/conformance-cli.js';
import { contradictionsByRule } from '../harness/conformance/contradiction-rules.js';
import { CONTRADICTIONS } from '../harness/conformance/contradictions.js';
import { loadCases } from '../harness/conformance/loader.js';
import { SHARED_CORPUS } from './helpers/shared-corpus.js';

const SERVER = 'node --import tsx test/conformance-example/server.ts {case_file} {port}';
const CATEGORIES = ['query_params', 'path_params', 'json_bodies'];
const paths = CATEGORIES.flatMap((c) => [join(SHARED_CORPUS, 'testing_data', c), join(SHARED_CORPUS, 'fixtures', `${c}.json`)]);


let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'keel-conformance-example-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const present = existsSync(SHARED_CORPUS);
describe('a non-keel implementation (Fastify) run through keel-conformance', { skip: present ? false : `shared corpus not found at ${SHARED_CORPUS}: skipped` }, () => {
  describe('when it asks for the manifest of the cases it implements', () => {
    it('should get every case with its route, schemas and exact request, valid against the checked-in schema', async () => {
      const file = join(dir, 'manifest.json');
      const r = await runCli(['--manifest', file, ...paths]);
      assert.equal(r.code, 0, r.err);
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { cases: unknown[]; routes: Array<{ handlers: number }> };
      const schema = JSON.parse(readFileSync(new URL('../schemas/ConformanceManifest.schema.json', import.meta.url), 'utf8'));
      const validate = new Ajv2020({ strict: false }).compile(schema);
      assert.ok(validate(manifest), JSON.stringify(validate.errors?.slice(0, 3)));
      assert.equal(manifest.cases.length, 219);
      assert.ok(manifest.routes.some((route) => route.handlers > 1), 'some routes need several handler definitions: one server cannot serve them all');
    });
  });

  describe('when the harness starts it per group of cases (--exec)', () => {
    it('should pass every case of its categories, with the corpus contradictions reported apart', async () => {
      const json = join(dir, 'report.json');
      const started = performance.now();
      const r = await runCli(['--quiet', '--exec', SERVER, '--json', json, ...paths]);
      const seconds = (performance.now() - started) / 1000;
      const report = JSON.parse(readFileSync(json, 'utf8'));
      assert.equal(report.summary.failed, 0, r.out);
      assert.equal(r.code, 0);
      assert.equal(report.summary.passed + report.summary.contradicted, 219);
      // Contradicted only where the corpus contradicts itself: by rule, or listed.
      const known = new Set([...CONTRADICTIONS, ...contradictionsByRule(loadCases([SHARED_CORPUS]))].map((c) => c.case));
      for (const c of report.cases.filter((x: { status: string }) => x.status === 'contradicted')) assert.ok(known.has(c.id), c.id);
      const starts = Number(/(\d+) server starts?/.exec(r.out)?.[1]);
      assert.ok(starts > 0 && starts <= 15, `grouped into few servers (got ${starts})`);
      process.stdout.write(`# worked example: ${report.summary.passed} passed, ${report.summary.contradicted} contradicted, ${starts} server starts, ${seconds.toFixed(1)} s\n`);
    });
  });
});
