/**
 * test/peer-suites/expected-failures.json lists, per replaced package, the tests of the package's own
 * suite that keel's factory fails on purpose, each with its reason (`npm run peer-suites` fails on any
 * other failure). Every listed difference must be one a user can read about: the package's section of
 * docs/migrating-from-express.md quotes each listed test title verbatim (checked here, not generated,
 * so the guide keeps its own words around them).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const PACKAGES = ['cors', 'compression', 'express-rate-limit', 'express-jwt', 'helmet', 'serve-static'];
const data: unknown = JSON.parse(readFileSync(new URL('./expected-failures.json', import.meta.url), 'utf8'));
const guide = readFileSync(new URL('../../docs/migrating-from-express.md', import.meta.url), 'utf8');

/** The text of the guide's `## <pkg>…` section (up to the next `## `), or undefined. */
function section(pkg: string): string | undefined {
  const parts = guide.split(/^(?=## )/m);
  return parts.find((p) => p.startsWith(`## ${pkg}`) || p.startsWith(`## \`${pkg}\``));
}

describe('when the peer-suites data file lists expected failures', () => {
  it('should map known package names to { full test title: reason } objects', () => {
    assert.equal(typeof data, 'object');
    assert.ok(data !== null && !Array.isArray(data));
    for (const [pkg, entries] of Object.entries(data as Record<string, unknown>)) {
      assert.ok(PACKAGES.includes(pkg), `${pkg} is not one of ${PACKAGES.join(', ')}`);
      assert.ok(entries !== null && typeof entries === 'object' && !Array.isArray(entries), `${pkg}: expected an object`);
      for (const [title, reason] of Object.entries(entries as Record<string, unknown>)) {
        assert.ok(title.trim().length > 0, `${pkg}: empty test title`);
        assert.equal(typeof reason, 'string', `${pkg}: "${title}": the reason must be a string`);
        // A reason a user would accept names the rule it follows, not just "differs".
        assert.ok((reason as string).trim().length >= 20, `${pkg}: "${title}": give the security or spec reason`);
      }
    }
  });

  it('should quote every listed test title in the package section of docs/migrating-from-express.md', () => {
    // The section finder itself: the guide's cors section exists and ends before the next package's.
    const cors = section('cors');
    assert.ok(cors?.includes('peer-suites') && !cors.includes('## helmet'), 'the "## cors" section is found and bounded');
    for (const [pkg, entries] of Object.entries(data as Record<string, Record<string, string>>)) {
      const titles = Object.keys(entries);
      if (titles.length === 0) continue;
      const text = section(pkg);
      assert.ok(text, `docs/migrating-from-express.md has no "## ${pkg}" section for its ${titles.length} listed difference(s)`);
      const missing = titles.filter((t) => !text.includes(t));
      assert.deepEqual(missing, [], `the "## ${pkg}" section does not quote these listed test titles`);
    }
  });
});
