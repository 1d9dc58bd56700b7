/**
 * docs/configuration.md's ServerConfig table against the record itself: every key the parser accepts
 * has a row (a key added to lib/records/server.ts fails here until it is documented), no row names a
 * key that does not exist, and a row's default, where it is one JSON value, is the record's default.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ServerConfig } from '../lib/records/server.js';

const page = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');

/** The rows of the first table under `## ServerConfig`: the keys of its first cell and its Default cell. */
function serverConfigRows(markdown: string): Array<{ keys: string[]; default: string }> {
  const section = /\n## ServerConfig\n([\s\S]*?)(?=\n## |$)/.exec(markdown)?.[1] ?? '';
  const table = /((?:^\|.*\|\n)+)/m.exec(section)?.[1] ?? '';
  return table
    .trim()
    .split('\n')
    .slice(2) // the header and the |---| line
    .map((line) => {
      const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
      return { keys: [...cells[0]!.matchAll(/`([a-z][a-z0-9_]*)`/g)].map((m) => m[1]!), default: cells[1]! };
    });
}

describe('when docs/configuration.md lists the ServerConfig keys', () => {
  const rows = serverConfigRows(page);
  const documented = rows.flatMap((r) => r.keys);

  it('should find the table', () => {
    assert.ok(rows.length >= 10, `${rows.length} rows`);
  });

  it('should have a row for every key of the record, and for no other key', () => {
    const keys = Object.keys(ServerConfig.fields);
    assert.deepEqual(keys.filter((k) => !documented.includes(k)), [], 'add these keys to the ServerConfig table of docs/configuration.md');
    assert.deepEqual(documented.filter((k) => !keys.includes(k)), [], 'these rows name no ServerConfig key');
    assert.equal(new Set(documented).size, documented.length, 'one row per key');
  });

  it('should give the record\'s own default wherever the Default cell is one JSON value', () => {
    const defaults = ServerConfig.defaults() as unknown as Record<string, unknown>;
    let compared = 0;
    for (const row of rows) {
      const literal = /^`([^`]+)`$/.exec(row.default)?.[1];
      if (!literal || row.keys.length !== 1) continue;
      let value: unknown;
      try {
        value = JSON.parse(literal);
      } catch {
        continue; // prose such as `{ enabled: false, … }`
      }
      assert.deepEqual(defaults[row.keys[0]!], value, `default of ${row.keys[0]}`);
      compared++;
    }
    assert.ok(compared >= 10, `${compared} defaults compared`);
  });
});
