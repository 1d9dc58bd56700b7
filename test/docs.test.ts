/**
 * The documentation a user reads from the package (README.md and the docs/ pages `npm pack` ships)
 * must make sense in `node_modules/keel`: every relative link lands on a file the tarball holds, and
 * no page sends the reader to what only a checkout of this repository has (source paths, ../shared)
 * or to "the specification" / "the reference implementation" without a link.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** The public Spikard repository: where a behaviour keel copies is defined. */
export const SPIKARD_URL = 'https://github.com/Goldziher/spikard';

// --dry-run lists exactly what `npm pack` would write (package.json `files`), without building.
const packed = (JSON.parse(execFileSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' })) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
const pages = packed.filter((p) => /^(README\.md|docs\/[^/]+\.md)$/.test(p));

/** The text of a page without its fenced code blocks (commands run in a checkout may name its files). */
function prose(markdown: string): string {
  return markdown.replace(/```[\s\S]*?```/g, '').replace(/<!--[\s\S]*?-->/g, '');
}

/** Sections (from one heading to the next), each on one line so a wrapped phrase is found too. */
function sections(text: string): string[] {
  return text.split(/^(?=#{1,6} )/m).map((p) => p.replace(/\s*\n\s*/g, ' '));
}

/** `[text](target)` links of a page, external ones and bare anchors left out. */
function relativeLinks(markdown: string): string[] {
  const out: string[] = [];
  for (const m of prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!;
    if (!/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#')) out.push(target);
  }
  return out;
}

/** Repository paths a user of the package does not have. */
const SOURCE_PATH = /(?:^|[\s(`'"])(?:\.\.\/shared\b|(?:lib|middleware|harness|test|scripts|bench|express|examples)\/[\w./*-]*|crates\/spikard[\w./-]*)/g;

describe('when a user reads the docs from the installed package', () => {
  it('should ship README.md and the user docs (architecture, benchmarks and peer-suites are for contributors, on the repository)', () => {
    assert.ok(pages.includes('README.md'));
    assert.ok(pages.includes('docs/configuration.md') && pages.includes('docs/migrating-from-express.md'), pages.join(' '));
    assert.deepEqual(pages.filter((p) => /architecture|benchmarks|peer-suites/.test(p)), []);
  });

  for (const page of pages) {
    const text = readFileSync(`${root}/${page}`, 'utf8');

    it(`should resolve every relative link of ${page} inside the tarball`, () => {
      const dead = relativeLinks(text).filter((target) => {
        const file = posix.normalize(posix.join(posix.dirname(page), decodeURI(target.split('#')[0]!)));
        return !packed.includes(file) && !packed.some((p) => p.startsWith(`${file.replace(/\/$/, '')}/`));
      });
      assert.deepEqual(dead, [], `${page} links to files the package does not ship`);
    });

    it(`should name no repository source path or ../shared in ${page}`, () => {
      // README's "This repository" section is about a checkout, where examples/ exists.
      const body = page === 'README.md' ? prose(text).replace(/## This repository[\s\S]*?(?=\n## )/, '') : prose(text);
      const found = [...body.matchAll(SOURCE_PATH)].map((m) => m[0].trim()).filter((p) => !body.includes(`${SPIKARD_URL}/blob/main/${p.replace(/^[(`'"]/, '')}`));
      assert.deepEqual(found, [], 'say what the behaviour is, or link the public repository');
    });

    it(`should link what ${page} calls the specification or the reference implementation, once per section`, () => {
      const unlinked = sections(prose(text)).filter((p) => {
        // "The reference" alone tells a reader nothing: name Spikard, and link it in the section that does.
        const reference = (/reference implementation|\bthe reference\b/i.test(p) || /\bSpikard\b/.test(p)) && !p.includes(SPIKARD_URL);
        const spec = page !== 'docs/specification.md' && /\bthe spec(ification)?\b|\bspec's\b|specification's/i.test(p) && !/\]\((?:docs\/)?specification\.md/.test(p);
        return reference || spec;
      });
      assert.deepEqual(unlinked.map((p) => p.slice(0, 160)), []);
    });
  }
});
