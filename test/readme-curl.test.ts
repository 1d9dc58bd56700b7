/**
 * The README's "Try it" curl lines, run as written by bash against the example server on a port other than 8000
 * (PORT is what moves it): every line works for any PORT, and a status the line's comment names is the status
 * the server answers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import type { ServerHandle } from '../lib/index.js';
import { buildExampleApp } from '../examples/server.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const block = /## Try it[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
const lines = block.split('\n').filter((l) => l.trim() && !l.trimStart().startsWith('#'));
const setup = lines.filter((l) => !l.startsWith('curl'));
const curls = lines.filter((l) => l.startsWith('curl'));
const run = promisify(execFile);
const hasCurl = spawnSync('curl', ['--version']).status === 0;

/** The header fields a line's comment names ("# 401 problem + WWW-Authenticate: Bearer" → WWW-Authenticate). */
const promisedHeaders = (line: string): string[] => {
  const comment = line.slice(line.indexOf(' #'));
  return [...comment.matchAll(/\b([A-Z][A-Za-z]*(?:-[A-Z][A-Za-z]*)+)\b/g)].map((m) => m[1]!);
};

/** The status a line's comment promises ("# 422 problem …", "# 200: …"), if any. */
const promised = (line: string): number | undefined => {
  const m = /#\s*(\d{3})\b/.exec(line.slice(line.indexOf(' #')));
  return m ? Number(m[1]) : undefined;
};

describe("when the README's curl lines run against the example server on another PORT", { skip: hasCurl ? false : 'curl is not installed' }, () => {
  let server: ServerHandle;
  before(async () => {
    server = await buildExampleApp({ port: 0 }).listen({ handleSignals: false });
  });
  after(() => server.close());

  it('should read the header names a comment promises', () => {
    assert.deepEqual(promisedHeaders('curl -s $BASE/me  # 401 problem + WWW-Authenticate: Bearer'), ['WWW-Authenticate']);
    assert.deepEqual(promisedHeaders("curl -H 'X-A: 1' $BASE  # X-Request-ID and security headers"), ['X-Request-ID']);
  });

  it('should find the setup line and the curl lines', () => {
    assert.ok(setup.some((l) => l.startsWith('BASE=')), 'the block sets BASE from PORT');
    assert.ok(curls.length >= 15, `${curls.length} curl lines`);
  });

  it('should answer every line, with the status its comment names', async () => {
    const sizes: number[] = [];
    for (const line of curls) {
      // curl is wrapped so it prints the status last; lines piped into another command are checked for success only.
      const script = `curl() { command curl -sS -w '\\n%{http_code}' "$@"; }\n${setup.join('\n')}\n${line}\n`;
      // Asynchronously: the server answers from this process's event loop.
      const r = await run('bash', ['-c', script], { env: { ...process.env, PORT: String(server.port) }, encoding: 'utf8', timeout: 15_000 })
        .catch((err: { code?: number; stderr?: string }) => assert.fail(`${line}\n${err.code}: ${err.stderr}`));
      // A header the comment names is one the line prints (curl -i), not one the reader must take on trust.
      for (const name of promisedHeaders(line)) assert.match(r.stdout, new RegExp(`^${name}:`, 'mi'), `${line}: prints no ${name} header`);
      if (line.includes('|')) {
        // A piped byte count: the compressed report must be smaller than the plain one printed the line before.
        sizes.push(Number(r.stdout.trim().split('\n')[0]));
        continue;
      }
      const status = Number(r.stdout.trimEnd().split('\n').pop());
      assert.ok(status >= 200 && status < 600, `${line}: ${r.stdout.slice(-200)}`);
      const want = promised(line);
      if (want !== undefined) assert.equal(status, want, line);
    }
    assert.equal(sizes.length, 2, 'the plain and the brotli byte counts');
    assert.ok(sizes[1]! > 0 && sizes[1]! < sizes[0]! / 2, `brotli ${sizes[1]} bytes vs plain ${sizes[0]}`);
  });
});
