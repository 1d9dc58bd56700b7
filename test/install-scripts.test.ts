/**
 * Dependency install scripts (docs/architecture.md, "Dependency install scripts"): every package of the lock that has
 * one is named in package.json's allowScripts, each entry is a package that still has one, and each has its reason in
 * the docs' table. `.ci/run` installs with --strict-allow-scripts, so what this test lets through is all that runs.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const pkg = JSON.parse(read('package.json')) as { allowScripts?: Record<string, boolean>; scripts: Record<string, string> };
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };
const withScripts = new Set(Object.entries(lock.packages)
  .filter(([path, p]) => path !== '' && p.hasInstallScript)
  .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)));
const table = /## Dependency install scripts[\s\S]*?\n\|---\|---\|---\|\n((?:\|.*\|\n)+)/.exec(read('docs/architecture.md'))?.[1] ?? '';
const documented = new Map([...table.matchAll(/^\| `([^`]+)`[^|]*\|([^|]+)\|([^|]+)\|$/gm)].map((m) => [m[1]!, m[3]!.trim()]));

describe('when dependencies have install scripts', () => {
  it('should name every such package of the lock in allowScripts', () => {
    const unreviewed = [...withScripts].filter((name) => pkg.allowScripts?.[name] === undefined);
    assert.deepEqual(unreviewed, [], 'add each to allowScripts (false unless keel needs it) and to the docs table');
  });
  it('should list no package that no longer has one', () => {
    assert.deepEqual(Object.keys(pkg.allowScripts ?? {}).filter((name) => !withScripts.has(name)), []);
  });
  it('should give each entry a reason in docs/architecture.md', () => {
    assert.ok(documented.size > 0, 'the table is found');
    for (const name of Object.keys(pkg.allowScripts ?? {})) assert.ok(documented.get(name), `${name} has a row with a reason`);
  });
  it('should deny every one of them: keel needs none', () => {
    assert.deepEqual(Object.entries(pkg.allowScripts ?? {}).filter(([, allowed]) => allowed !== false).map(([name]) => name), []);
  });
});

describe("when keel's own package is installed", () => {
  it('should run no install-time script of its own (npm warns about them from a tarball, npm 12 blocks them)', () => {
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) assert.equal(pkg.scripts[script], undefined, script);
  });
});
