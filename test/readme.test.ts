/**
 * The README's code is real code: every TypeScript (and tsconfig) block is a file under
 * examples/readme/ that the README quotes verbatim, and those files compile with the README's
 * tsconfig (strict), `keel` mapped to this repository's sources.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

interface Block {
  lang: string;
  body: string;
  /** The file named by the `<!-- file: path -->` line right before the fence, if any. */
  file: string | undefined;
}

function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  const re = /(?:<!-- file: (\S+) -->\n)?```(\w*)\n([\s\S]*?)```/g;
  for (let m = re.exec(markdown); m; m = re.exec(markdown)) out.push({ file: m[1], lang: m[2]!, body: m[3]! });
  return out;
}

describe('when the README shows code', () => {
  const all = blocks(readme);

  it('should quote every TypeScript and JSON block from a file under examples/readme/', () => {
    const unquoted = all.filter((b) => ['ts', 'typescript', 'json', 'jsonc'].includes(b.lang) && !b.file);
    assert.deepEqual(unquoted.map((b) => b.body.split('\n')[0]), [], 'add <!-- file: examples/readme/… --> before these blocks');
    assert.ok(all.filter((b) => b.file).length >= 3);
  });

  for (const b of all.filter((x) => x.file)) {
    it(`should quote ${b.file} exactly`, () => {
      assert.match(b.file!, /^examples\/readme\//);
      assert.equal(b.body, readFileSync(new URL(`../${b.file}`, import.meta.url), 'utf8'));
    });
  }

  it('should link to nothing outside the repository (no ../shared)', () => {
    assert.doesNotMatch(readme, /\]\(\.\.\//);
  });

  it('should give the set-up commands of this repository', () => {
    assert.match(readme, /npm install && npm start/);
    assert.match(readme, /npm install && npm test/);
  });

  it('should compile the quoted examples with the README\'s tsconfig (strict)', { timeout: 120_000 }, () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    try {
      execFileSync(process.execPath, [tsc, '-p', 'examples/readme/tsconfig.check.json'], { cwd: root, encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      assert.fail(`README examples do not compile:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
  });
});
