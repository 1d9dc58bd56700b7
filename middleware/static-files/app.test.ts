/**
 * staticFiles inside keel's createApp (ServerConfig.static_files) and against the shared
 * conformance cases, read in place from ../shared/conformance (never copied into the repository).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import request from 'supertest';
import { pino } from 'pino';
import { createApp, ConfigError, type ServerConfigInput } from '../../lib/index.js';
import { sharedCaseFiles } from '../../test/helpers/shared-corpus.js';

const silent = { logger: pino({ level: 'silent' }) };
const base = mkdtempSync(join(tmpdir(), 'keel-static-app-'));
after(() => rmSync(base, { recursive: true, force: true }));

const pub = join(base, 'public');
mkdirSync(join(pub, 'docs'), { recursive: true });
writeFileSync(join(pub, 'hello.txt'), 'hello');
writeFileSync(join(pub, 'docs', 'index.html'), '<h1>docs</h1>');
writeFileSync(join(base, 'secret.txt'), 'secret');
symlinkSync(join(base, 'secret.txt'), join(pub, 'out.txt'));

describe('staticFiles inside a keel App (ServerConfig.static_files)', () => {
  const app = createApp(
    { port: 0, static_files: [{ directory: pub, route_prefix: '/assets', cache_control: 'public, max-age=60' }] },
    (a) => {
      a.get('/assets/api', () => ({ route: true }));
    },
    silent,
  );
  const router = app.intoRouter();

  it('should serve a file with its Cache-Control', async () => {
    const res = await request(router).get('/assets/hello.txt');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'hello');
    assert.equal(res.headers['cache-control'], 'public, max-age=60');
  });

  it('should let keel routes win over the static mount', async () => {
    assert.deepEqual((await request(router).get('/assets/api')).body, { route: true });
  });

  it('should serve a directory index', async () => {
    assert.equal((await request(router).get('/assets/docs/')).text, '<h1>docs</h1>');
  });

  it("should answer a missing file with keel's 404 problem", async () => {
    const res = await request(router).get('/assets/missing.txt');
    assert.equal(res.status, 404);
    assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
  });

  it('should refuse a symlink out of the directory with a 403 problem', async () => {
    const res = await request(router).get('/assets/out.txt');
    assert.equal(res.status, 403);
    assert.doesNotMatch(res.text, /secret/);
  });

  it('should refuse to build an App whose static directory does not exist', () => {
    assert.throws(
      () => createApp({ port: 0, static_files: [{ directory: join(base, 'nope'), route_prefix: '/x' }] }, undefined, silent).intoRouter(),
      (e: unknown) => e instanceof ConfigError && /static_files\[0\]\.directory/.test(e.message),
    );
  });
});

const { dir, files: cases } = sharedCaseFiles('static_files');

describe('static_files conformance cases (../shared/conformance/testing_data/static_files)', () => {
  if (cases.length === 0) {
    it.skip('skipped: ../shared/conformance is absent', () => {});
    return;
  }
  for (const file of cases) {
    const c = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    it(`should pass ${file}: ${c.description}`, async () => {
      // Each case describes its files; they are written to a temporary directory per mount.
      const mounts = (c.handler.middleware.static_files as Record<string, any>[]).map((m, i) => {
        const d = join(base, `${file}-${i}`);
        for (const f of m.files as { path: string; content: string }[]) {
          mkdirSync(dirname(join(d, f.path)), { recursive: true });
          writeFileSync(join(d, f.path), f.content);
        }
        const { files: _files, ...config } = m;
        return { ...config, directory: d };
      });
      // Corpus data (JSON), checked by the runtime parse.
      const app = createApp({ port: 0, static_files: mounts as unknown as ServerConfigInput['static_files'] }, undefined, silent);
      const res = await request(app.intoRouter())[c.request.method.toLowerCase() as 'get'](c.request.path);
      assert.equal(res.status, c.expected_response.status_code);
      assert.equal(res.text, c.expected_response.body);
      for (const [k, v] of Object.entries(c.expected_response.headers as Record<string, string>)) {
        // Content types are compared by media type: send adds `; charset=UTF-8` to text types.
        const actual = String(res.headers[k.toLowerCase()]);
        assert.equal(k.toLowerCase() === 'content-type' ? actual.split(';')[0] : actual, v, k);
      }
    });
  }
});
