/**
 * `node --import tsx bench/graphql-worst.ts [--size 4096]`: the CPU time keel spends refusing (or
 * accepting) hostile GraphQL documents before execution: parse + graphql-js's rules + keel's limits,
 * with the example server's limits (depth 8, complexity 500) and a fresh document cache per run.
 * Prints the median of 9 runs per shape, worst first. docs/graphql.md (Limits) quotes its figures.
 */
import { parseArgs } from 'node:util';
import { builtinSchema } from '../lib/graphql/builtin-schemas.js';
import { DocumentCache, isRejected } from '../lib/graphql/documents.js';

const { values } = parseArgs({ options: { size: { type: 'string', default: '4096' } } });
const size = Number(values.size);
const schema = builtinSchema('full');
const LIMITS = { introspection_enabled: true, depth_limit: 8, complexity_limit: 500 };

/** The longest `wrap(units joined by spaces)` not over `size` characters. */
function fill(wrap: (items: string[]) => string, unit: (i: number) => string): string {
  let n = 1;
  while (wrap(Array.from({ length: n * 2 }, (_, i) => unit(i))).length <= size) n *= 2;
  let [lo, hi] = [n, n * 2];
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (wrap(Array.from({ length: mid }, (_, i) => unit(i))).length <= size) lo = mid;
    else hi = mid;
  }
  return wrap(Array.from({ length: lo }, (_, i) => unit(i)));
}
/** Fragments spreading the previous one `width` times, as many levels as fit. */
function fanOut(width: number, first: string, level: (i: number) => string, root: (top: number) => string): string {
  let best = '';
  for (let levels = 1; ; levels++) {
    const parts = [first];
    for (let i = 1; i <= levels; i++) parts.push(level(i));
    const q = `${root(levels)} ${parts.join(' ')}`;
    if (q.length > size) return best;
    best = q;
  }
}

const shapes: Record<string, string> = {
  'fragment fan-out x10': fanOut(10, 'fragment F0 on Query { hello }', (i) => `fragment F${i} on Query { ${Array(10).fill(`...F${i - 1}`).join(' ')} }`, (n) => `{ ...F${n} }`),
  'fragment fan-out x2 with overlapping fields': fanOut(2, 'fragment F0 on Query { a: hello }', (i) => `fragment F${i} on Query { a: hello ...F${i - 1} ...F${i - 1} }`, (n) => `{ ...F${n} }`),
  'fragment fan-out through fields': fanOut(2, 'fragment F0 on Book { id }', (i) => `fragment F${i} on Book { author { books { ...F${i - 1} } } ...F${i - 1} ...F${i - 1} }`, (n) => `{ books { ...F${n} } }`),
  'same field repeated': fill((f) => `{ ${f.join(' ')} }`, () => 'hello'),
  'same nested field repeated': fill((f) => `{ ${f.join(' ')} }`, () => 'books { id }'),
  'same alias, conflicting arguments': fill((f) => `{ ${f.join(' ')} }`, (i) => `a: echo(message: "${i}")`),
  'distinct aliases': fill((f) => `{ ${f.join(' ')} }`, (i) => `a${i}: hello`),
  'repeated directive': fill((f) => `{ hello ${f.join(' ')} }`, () => '@include(if: true)'),
  'deep nesting': fill((f) => `{ ${'books { author { '.repeat(f.length)}id${' } }'.repeat(f.length)} }`, () => ''),
  'unused variables': fill((f) => `query (${f.join(' ')}) { hello }`, (i) => `$v${i}: Int`),
  'many operations on one fragment': fill((f) => `${f.join(' ')} fragment F on Query { hello }`, (i) => `query Q${i} { ...F }`),
  'introspection aliases': fill((f) => `{ ${f.join(' ')} }`, (i) => `a${i}: __schema { types { name } }`),
};

const rows: { name: string; bytes: number; ms: number; outcome: string }[] = [];
for (const [name, query] of Object.entries(shapes)) {
  const times: number[] = [];
  let outcome = '';
  for (let run = 0; run < 9; run++) {
    const documents = new DocumentCache(schema, LIMITS);
    const before = process.cpuUsage();
    const checked = documents.prepare(query, {});
    const used = process.cpuUsage(before);
    times.push((used.user + used.system) / 1000);
    outcome = isRejected(checked) ? `refused: ${checked[0]!.message.slice(0, 60)}` : 'accepted';
  }
  rows.push({ name, bytes: query.length, ms: times.sort((a, b) => a - b)[4]!, outcome });
}
rows.sort((a, b) => b.ms - a.ms);
console.log(`GraphQL documents up to ${size} characters, limits depth 8 / complexity 500, CPU ms (median of 9):`);
for (const r of rows) console.log(`${r.ms.toFixed(1).padStart(8)} ms  ${String(r.bytes).padStart(7)} B  ${r.name.padEnd(44)} ${r.outcome}`);
