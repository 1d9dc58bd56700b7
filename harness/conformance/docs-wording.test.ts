import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED_CORPUS } from '../../test/helpers/shared-corpus.js';
import { wording } from './contradiction-verdict.js';
import { situationOf } from './error-situation.js';
import { loadCases } from './loader.js';
import { isWebSocketCase, type ConformanceCase } from './types.js';

/** A row of docs/conformance.md's wording table. */
interface Row {
  kind: string;
  type: string;
  msg: string;
  ctx: string[] | null;
  input: boolean;
  line: string;
}

/** A cell's text without its code quotes (`x` or ``x``). */
const code = (cell: string) => cell.trim().replace(/^``(.*)``$/s, '$1').replace(/^`(.*)`$/s, '$1');

function wordingTable(): Row[] {
  const doc = readFileSync(join(process.cwd(), 'docs', 'conformance.md'), 'utf8');
  const table = /<!-- wording-table[^>]*-->\n([\s\S]*?)<!-- \/wording-table -->/.exec(doc);
  assert.ok(table, 'docs/conformance.md has the wording table between its markers');
  return table[1]!.trim().split('\n').slice(2).map((line) => {
    // Split on the column bars, not on a bar inside a code span.
    const cells = line.replace(/^\||\|$/g, '').split(/ \| /);
    assert.equal(cells.length, 5, line);
    const ctx = cells[3]!.trim();
    return { kind: code(cells[0]!), type: code(cells[1]!), msg: code(cells[2]!), ctx: ctx === '—' ? null : ctx.split(',').map(code).sort(), input: cells[4]!.trim().startsWith('yes'), line };
  });
}

interface Item {
  id: string;
  kind: string;
  item: Record<string, unknown>;
}

function corpusItems(): Item[] {
  const cases = loadCases([SHARED_CORPUS]).filter((c): c is ConformanceCase => 'handler' in c && 'expected' in c && !isWebSocketCase(c));
  const out: Item[] = [];
  for (const c of cases) {
    const errors = (c.expected.body as { errors?: unknown })?.errors;
    if (!Array.isArray(errors)) continue;
    for (const item of errors as Array<Record<string, unknown>>) {
      const kind = typeof item.msg === 'string' ? situationOf(c, item.loc) : undefined;
      if (kind) out.push({ id: c.id, kind, item });
    }
  }
  return out;
}

/** Whether a corpus item is worded as a row says (ctx and input optional in the item, as the format has them). */
function matches(row: Row, { kind, item }: Item, exact: boolean): boolean {
  if (row.kind !== kind || row.type !== item.type || wording(row.msg) !== wording(String(item.msg))) return false;
  const ctx = item.ctx && typeof item.ctx === 'object' ? Object.keys(item.ctx).sort() : null;
  if (exact ? JSON.stringify(ctx) !== JSON.stringify(row.ctx) : ctx !== null && JSON.stringify(ctx) !== JSON.stringify(row.ctx)) return false;
  return exact ? 'input' in item === row.input : !('input' in item) || row.input;
}

describe('docs/conformance.md wording table', { skip: existsSync(SHARED_CORPUS) ? false : `shared corpus not found at ${SHARED_CORPUS}: skipped` }, () => {
  const rows = wordingTable();
  const items = corpusItems();

  it('should have rows', () => assert.ok(rows.length > 20, `${rows.length} rows`));

  it('should say each row as the corpus words it (kind, type, msg, ctx members, input)', () => {
    const wrong = rows.filter((row) => !items.some((i) => matches(row, i, true))).map((r) => r.line);
    assert.deepEqual(wrong, []);
  });

  it('should have a row for every way the corpus words a kind of error', () => {
    const missing = items.filter((i) => !rows.some((row) => matches(row, i, false))).map((i) => `${i.id}: ${i.kind} ${JSON.stringify(i.item)}`);
    assert.deepEqual(missing, []);
  });

  it('should word multipleOf, uniqueItems and the ipv4, uri and date formats as the corpus does', () => {
    for (const kind of ['multipleOf', 'uniqueItems', 'format:ipv4', 'format:uri', 'format:date']) {
      const corpus = items.filter((i) => i.kind === kind);
      assert.ok(corpus.length > 0, `${kind} is in the corpus`);
      for (const i of corpus) assert.ok(rows.some((row) => row.kind === kind && matches(row, i, true)), `${kind}: ${JSON.stringify(i.item)}`);
    }
  });
});
