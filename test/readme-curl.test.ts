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

  it('should find the setup line and the curl lines', () => {
    assert.ok(setup.some((l) => l.startsWith('BASE=')), 'the block sets BASE from PORT');
    assert.ok(curls.length >= 15, `${curls.length} curl lines`);
  });

  it('should answer every line, with the status its comment names', async () => {
    for (const line of curls) {
      // curl is wrapped so it prints the status last; lines piped into another command are checked for success only.
      const script = `curl() { command curl -sS -w '\\n%{http_code}' "$@"; }\n${setup.join('\n')}\n${line}\n`;
      // Asynchronously: the server answers from this process's event loop.
      const r = await run('bash', ['-c', script], { env: { ...process.env, PORT: String(server.port) }, encoding: 'utf8', timeout: 15_000 })
        .catch((err: { code?: number; stderr?: string }) => assert.fail(`${line}\n${err.code}: ${err.stderr}`));
      if (line.includes('|')) continue;
      const status = Number(r.stdout.trimEnd().split('\n').pop());
      assert.ok(status >= 200 && status < 600, `${line}: ${r.stdout.slice(-200)}`);
      const want = promised(line);
      if (want !== undefined) assert.equal(status, want, line);
    }
  });
});
