/**
 * The documents of issue 26's "small input, huge work" attacks, built at any size: used by
 * test/hostile/budgets.test.ts and by bench/replay-budgets.ts (the figures of the closing note).
 */

/**
 * Schemas s0 … s<levels> where each level's object has two properties referencing the level below:
 * s<levels> expands to about 5 × 2^levels nodes. 14 levels: ~82,000, under the old per-message budget.
 */
export function fanOutSchemas(levels: number): Record<string, unknown> {
  const schemas: Record<string, unknown> = { s0: { type: 'string' } };
  for (let i = 1; i <= levels; i++) {
    const ref = { $ref: `#/components/schemas/s${i - 1}` };
    schemas[`s${i}`] = { type: 'object', properties: { a: ref, b: ref } };
  }
  return schemas;
}

/** An AsyncAPI 3.0 document of `bytes` bytes: as many messages as fit, each with the fanned-out payload. */
export function fanOutDocument(bytes: number, levels = 14): string {
  const messages: Record<string, unknown> = {};
  const doc = { asyncapi: '3.0.0', info: { title: 'fan-out', version: '1' }, components: { schemas: fanOutSchemas(levels), messages } };
  for (let i = 0; ; i++) {
    messages[`m${i}`] = { payload: { $ref: `#/components/schemas/s${levels}` } };
    if (JSON.stringify(doc).length > bytes) {
      delete messages[`m${i}`];
      return JSON.stringify(doc);
    }
  }
}

/** `aliases` aliases of `hello(name: $n)`, sent with a `$n` that brings the request to `bytes`. */
export function aliasQueryBody(aliases: number, bytes: number): string {
  const query = `query($n: String) { ${Array.from({ length: aliases }, (_, i) => `a${i}: hello(name: $n)`).join(' ')} }`;
  const shell = JSON.stringify({ query, variables: { n: '' } });
  return JSON.stringify({ query, variables: { n: 'x'.repeat(bytes - shell.length) } });
}


/**
 * Issue 35's near-budget AsyncAPI document: 1.8 KB whose messages share an 11-level fan-out, 71,666
 * nodes, just inside `max_expanded_nodes` (100,000), so it is answered: ~70 ms of CPU on a quiet machine.
 */
export function nearBudgetDocument(): string {
  return fanOutDocument(1800, 11);
}
