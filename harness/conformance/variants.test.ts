// keel:integration
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from './cli-main.js';
import { situationOf } from './error-situation.js';
import { loadCases } from './loader.js';
import { startReplayServer } from './replay-server.js';
import { runCases } from './runner.js';
import { isRunnable, type ConformanceCase } from './types.js';
import { contradictedBases, frameworkOwned, generateVariants, variantsOf, type VariantCase } from './variants.js';

/** `../shared/conformance` beside the repository (read in place, never copied). */
const SHARED = fileURLToPath(new URL('../../../shared/conformance', import.meta.url));
const SEED = 20261128;

function kase(partial: Partial<ConformanceCase> & Pick<ConformanceCase, 'handler' | 'request' | 'expected'>): ConformanceCase {
  return { id: 'unit/base', category: 'unit', name: 'base', source: 'memory', extra: {}, ...partial };
}

const problem = (errors: unknown[]) => ({ type: 'https://spikard.dev/errors/validation-error', title: 'Request Validation Failed', status: 422, detail: '1 validation error in request', errors });

/** A query parameter `term` with minLength 3, sent as "ab": the corpus's generic style. */
const minLength = kase({
  handler: { route: '/search', method: 'GET', parameters: { query: { term: { type: 'string', minLength: 3, required: true } } } },
  request: { method: 'GET', path: '/search', query_params: { term: 'ab' } },
  expected: { status_code: 422, body: problem([{ type: 'validation_error', loc: ['query', 'term'], msg: 'String length must be at least 3', ctx: { min_length: 3, actual_length: 2 } }]) },
});

const errorsOf = (v: ConformanceCase) => (v.expected.body as { errors: Array<Record<string, unknown>> }).errors;

describe('generated variants', () => {
  describe('when a 422 case fails a keyword with a bound', () => {
    it('should send other values failing the same keyword, with ctx derived', () => {
      const vs = variantsOf(minLength, { perCase: 3, seed: 1 });
      const values = vs.filter((v) => v.variant_rule === 'value');
      assert.ok(values.length >= 1, 'a value variant');
      for (const v of values) {
        const term = String(v.request.query_params!.term);
        assert.ok(term.length < 3 && term !== 'ab', term);
        assert.equal(situationOf(v, ['query', 'term']), 'minLength');
        assert.deepEqual(errorsOf(v)[0]!.ctx, { min_length: 3, actual_length: term.length });
        assert.equal(v.expected.status_code, 422);
        assert.equal(v.variant_of, 'unit/base');
      }
    });

    it('should move an echoed input with the value (as sent for a query, converted for a path)', () => {
      const path = kase({
        handler: { route: '/items/{id}', method: 'GET', parameters: { path: { id: { type: 'integer', maximum: 100 } } } },
        request: { method: 'GET', path: '/items/101' },
        expected: { status_code: 422, body: problem([{ type: 'less_than_equal', loc: ['path', 'id'], msg: 'Input should be less than or equal to 100', input: 101, ctx: { le: 100 } }]) },
      });
      const v = variantsOf(path, { perCase: 3, seed: 3 }).find((x) => x.variant_rule === 'value')!;
      const sent = Number(v.request.path.split('/')[2]);
      assert.ok(sent > 100);
      assert.equal(errorsOf(v)[0]!.input, sent);
      assert.deepEqual(errorsOf(v)[0]!.ctx, { le: 100 });
    });

    it('should rename the parameter in the schema, the request and loc together', () => {
      const v = variantsOf(minLength, { perCase: 6, seed: 2 }).find((x) => x.variant_rule === 'rename-param')!;
      const [name] = Object.keys(v.handler.parameters!.query!);
      assert.match(name!, /^term_[a-z]{3}$/);
      assert.deepEqual(Object.keys(v.request.query_params!), [name]);
      assert.deepEqual(errorsOf(v)[0]!.loc, ['query', name]);
    });

    it('should rename a path segment in the route and the request together, keeping its length', () => {
      for (const v of variantsOf(minLength, { perCase: 3, seed: 4 })) {
        assert.equal(v.handler.route, v.request.path.split('?')[0]);
        assert.notEqual(v.handler.route, '/search');
        assert.equal(v.handler.route.length, '/search'.length);
      }
    });
  });

  describe('when the seed is the same', () => {
    it('should generate the same variants, and others with another seed', () => {
      const a = variantsOf(minLength, { perCase: 3, seed: 9 });
      assert.deepEqual(variantsOf(minLength, { perCase: 3, seed: 9 }), a);
      assert.notDeepEqual(variantsOf(minLength, { perCase: 3, seed: 10 }), a);
    });
  });

  describe('when the answer is not the framework\'s', () => {
    it('should generate nothing (success, a handler error, a 404 on a matched route, a 413 no record asks for)', () => {
      const ok = kase({ handler: { route: '/a', method: 'GET' }, request: { method: 'GET', path: '/a' }, expected: { status_code: 200, body: { a: 1 } } });
      const failing = kase({ handler: { route: '/a', method: 'GET' }, request: { method: 'GET', path: '/a' }, expected: { status_code: 500 } });
      const notFound = kase({ handler: { route: '/items/{id}', method: 'GET' }, request: { method: 'GET', path: '/items/7' }, expected: { status_code: 404 } });
      const fileTooLarge = kase({ handler: { route: '/files', method: 'POST' }, request: { method: 'POST', path: '/files', body: { a: 'x' } }, expected: { status_code: 413, body: { detail: 'File too large' } } });
      for (const c of [ok, failing, notFound, fileTooLarge]) {
        assert.equal(frameworkOwned(c), false, c.expected.status_code.toString());
        assert.deepEqual(variantsOf(c, { perCase: 3, seed: 1 }), []);
      }
    });
  });

  describe('when a case is refused by a record', () => {
    it('should send other bad tokens signed the way the base token was (its claims kept)', () => {
      const secret = 'test-secret-key-do-not-use-in-production';
      const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const head = b64({ alg: 'HS256', typ: 'JWT' });
      const body = b64({ sub: 'u1', exp: 1000 });
      const token = `${head}.${body}.${createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')}`;
      const expired = kase({
        handler: { route: '/api/me', method: 'GET', middleware: { jwt_auth: { enabled: true, algorithm: 'HS256', secret } } },
        request: { method: 'GET', path: '/api/me', headers: { Authorization: `Bearer ${token}` } },
        expected: { status_code: 401, body: { detail: 'Token has expired' } },
      });
      const v = variantsOf(expired, { perCase: 3, seed: 5 }).find((x) => x.variant_rule === 'token')!;
      const [h, p, s] = v.request.headers!.Authorization!.slice(7).split('.');
      assert.equal(createHmac('sha256', secret).update(`${h}.${p}`).digest('base64url'), s, 'signed with the record\'s secret');
      const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
      assert.equal(claims.exp, 1000);
      assert.notEqual(claims.sub, 'u1');
      assert.deepEqual(v.expected, expired.expected);
    });

    it('should send other origins the CORS record does not allow, moving the answer\'s mention of it', () => {
      const c = kase({
        handler: { route: '/api/data', method: 'GET', cors: { allow_origins: ['https://example.com'] } },
        request: { method: 'GET', path: '/api/data', headers: { Origin: 'https://evil.com' } },
        expected: { status_code: 403, body: { detail: "CORS request from origin 'https://evil.com' not allowed" } },
      });
      const v = variantsOf(c, { perCase: 3, seed: 6 }).find((x) => x.variant_rule === 'origin')!;
      const origin = v.request.headers!.Origin!;
      assert.notEqual(origin, 'https://evil.com');
      assert.deepEqual(v.expected.body, { detail: `CORS request from origin '${origin}' not allowed` });
    });

    it('should send other bodies over a body limit', () => {
      const c = kase({
        handler: { route: '/upload', method: 'POST', max_body_size: 64 },
        request: { method: 'POST', path: '/upload', body: { data: 'x'.repeat(100) } },
        expected: { status_code: 413 },
      });
      const v = variantsOf(c, { perCase: 3, seed: 7 }).find((x) => x.variant_rule === 'body-size')!;
      const n = Number(/(\d+) times/.exec(String((v.request.body as { data: string }).data))![1]);
      assert.ok(n > 64);
    });

    it('should move an answer\'s mention of the body size with the body', () => {
      const c = kase({
        handler: { route: '/upload', method: 'POST', max_body_size: 64 },
        request: { method: 'POST', path: '/upload', body: { data: 'x'.repeat(100) } },
        expected: { status_code: 413, body: { detail: 'Request body of 111 bytes exceeds the limit of 64 bytes' } },
      });
      const v = variantsOf(c, { perCase: 3, seed: 8 }).find((x) => x.variant_rule === 'body-size')!;
      const n = Number(/(\d+) times/.exec(String((v.request.body as { data: string }).data))![1]);
      assert.deepEqual(v.expected.body, { detail: `Request body of ${n + 11} bytes exceeds the limit of 64 bytes` });
    });
  });

  describe('when the CLI is given --variants', () => {
    it('should refuse a bad count or a seed without --variants (exit 2)', async () => {
      const err: string[] = [];
      const io = { out: () => {}, err: (l: string) => err.push(l) };
      assert.equal(await main(['--variants', '0', 'x'], io), 2);
      assert.equal(await main(['--seed', '5', 'x'], io), 2);
      assert.equal(await main(['--variants', '2', '--seed', 'abc', 'x'], io), 2);
      assert.match(err.join('\n'), /--variants must be an integer/);
      assert.match(err.join('\n'), /--seed chooses the variants/);
    });
  });
});

describe('generated variants of the suite shipped with the runner', () => {
  it('should vary its framework-owned cases too, and keel should pass them', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-variants-'));
    try {
      const json = join(dir, 'run.json');
      await main(['--quiet', '--no-diffs', '--exit-zero', '--variants', '3', '--seed', String(SEED), '--json', json], { out: () => {}, err: () => {} });
      const run = JSON.parse(readFileSync(json, 'utf8')) as { summary: { variants: { generated: number; passed: number } } };
      assert.ok(run.summary.variants.generated >= 300, `${run.summary.variants.generated} variants`);
      assert.ok(run.summary.variants.passed / run.summary.variants.generated >= 0.95, `keel passes ${run.summary.variants.passed} of ${run.summary.variants.generated}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('generated variants of the shared corpus', () => {
  it('should give >= 300 variants of framework-owned cases that keel passes (>= 85%) and a replaying server does not (<= 10%)', { timeout: 300_000 }, async (t) => {
    if (!existsSync(SHARED)) {
      t.skip('../shared/conformance is absent: the variants of the shared corpus cannot be generated');
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'keel-variants-'));
    try {
      const json = join(dir, 'run.json');
      const report = join(dir, 'report.html');
      const lines: string[] = [];
      await main(['--quiet', '--no-diffs', '--exit-zero', '--variants', '3', '--seed', String(SEED), '--json', json, '--report', report, SHARED], { out: (l) => lines.push(l), err: (l) => lines.push(l) });
      const run = JSON.parse(readFileSync(json, 'utf8')) as { summary: { variants: { seed: number; generated: number; passed: number } }; cases: Array<{ id: string; status: string; variant_of?: string; expected_status?: number }> };
      const variants = run.cases.filter((c) => c.variant_of);
      const bases = new Map(run.cases.filter((c) => !c.variant_of).map((c) => [c.id, c]));
      assert.equal(run.summary.variants.seed, SEED);
      assert.ok(variants.length >= 300, `${variants.length} variants`);
      for (const v of variants) {
        assert.ok((bases.get(v.variant_of!)?.expected_status ?? 0) >= 400, `${v.id}: base of a framework-owned answer`);
        assert.equal(v.expected_status, bases.get(v.variant_of!)!.expected_status, `${v.id} keeps its expected status`);
      }
      const keelRate = run.summary.variants.passed / variants.length;
      assert.ok(keelRate >= 0.85, `keel's fixture app passes ${(keelRate * 100).toFixed(1)}% of the variants`);
      assert.ok(lines.some((l) => l.includes(`--seed ${SEED}`)), 'the seed is in the summary');
      assert.match(readFileSync(report, 'utf8'), /<table class="sum">/);

      // The same variants, against a server that replays the public answer for the same method, path and body.
      const corpus = loadCases([SHARED]);
      const generated: VariantCase[] = generateVariants(corpus, { perCase: 3, seed: SEED, exclude: contradictedBases(corpus) });
      assert.deepEqual(generated.map((v) => v.id), variants.map((v) => v.id));
      const replay = await startReplayServer(corpus);
      try {
        const publicRun = await runCases(corpus.filter((c) => isRunnable(c) && c.expected.status_code >= 400), { target: replay.url, corpus });
        assert.ok(publicRun.passed / (publicRun.passed + publicRun.failed) > 0.5, 'the replaying server passes the public framework-owned cases');
        const variantRun = await runCases(generated, { target: replay.url, corpus });
        const replayRate = variantRun.passed / generated.length;
        assert.ok(replayRate <= 0.1, `the replaying server passes ${(replayRate * 100).toFixed(1)}% of the variants`);
      } finally {
        await replay.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
