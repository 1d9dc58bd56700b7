/**
 * Replays issue 26's work-budget attacks (item 2) against the example server in a child process and
 * prints the figures of the closing note: status, answer size, time to answer and the server's RSS
 * (VmRSS / VmHWM from /proc, Linux) before and after each.
 *
 *   node --import tsx bench/replay-budgets.ts
 *
 * Attacks: the 23.5 KB AsyncAPI document whose messages share one fanned-out schema (/asyncapi/parse and
 * /asyncapi/validate), the 410 KB GraphQL query of 490 `hello(name: $n)` aliases, and two such 1 MiB
 * queries at once. Before the budgets: 43 s and RSS 124 MB → 1.03 GB with a 193 MB answer; a 191 MiB
 * answer and +880 MB; a 1 GB heap out of memory in 7 s.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { aliasQueryBody, fanOutDocument, fanOutSchemas } from '../test/helpers/budget-attacks.js';
import { spawnFixture } from '../test/helpers/spawn-fixture.js';

const script = fileURLToPath(new URL('../examples/server.ts', import.meta.url));
const server = await spawnFixture(script, {
  env: { PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'production', KEEL_LOG_LEVEL: 'silent' },
  stderr: 'inherit',
  ready: /keel example server on (http:\/\/\S+)/,
});
const { child } = server;
const base = server.ready[1]!;

/** The child's resident and peak resident memory, MB. */
function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

async function replay(name: string, requests: Array<{ path: string; body: string }>): Promise<void> {
  await fetch(`${base}/health`);
  const before = memory();
  const started = performance.now();
  const answers = await Promise.all(requests.map(async ({ path, body }) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body });
    const text = await res.text();
    return { status: res.status, bytes: text.length, head: text.slice(0, 160) };
  }));
  const ms = performance.now() - started;
  const after = memory();
  const sent = requests.map((r) => `${(r.body.length / 1000).toFixed(1)} kB`).join(' + ');
  console.log(`${name}: sent ${sent}; answered ${answers.map((a) => `${a.status} (${a.bytes} B)`).join(', ')} in ${ms.toFixed(0)} ms; `
    + `RSS ${before.rss.toFixed(0)} → ${after.rss.toFixed(0)} MB (peak ${before.peak.toFixed(0)} → ${after.peak.toFixed(0)} MB)`);
  console.log(`  ${answers[0]!.head}`);
}

try {
  const doc = fanOutDocument(23_500 - '{"spec":}'.length);
  // The first AsyncAPI request loads keel/asyncapi and Ajv (lazy protocol loading): a small document first.
  await replay('AsyncAPI parse, warm-up (small document)', [{ path: '/asyncapi/parse', body: JSON.stringify({ spec: { asyncapi: '3.0.0', info: { title: 't', version: '1' } } }) }]);
  await replay('AsyncAPI parse, 23.5 KB fan-out', [{ path: '/asyncapi/parse', body: JSON.stringify({ spec: JSON.parse(doc) }) }]);
  const spec = JSON.parse(doc) as { channels?: Record<string, unknown>; components: { messages: Record<string, unknown> } };
  spec.components.messages = {};
  spec.channels = {};
  for (let i = 0; spec.channels && JSON.stringify(spec).length < 23_300; i++) spec.channels[`c${i}`] = { bindings: { $ref: '#/components/schemas/s14' } };
  await replay('AsyncAPI parse, the fan-out in channel bindings', [{ path: '/asyncapi/parse', body: JSON.stringify({ spec }) }]);
  // 1 KB: one payload schema of 30 levels, each referencing the one below twice (5 × 2^30 nodes expanded).
  const payload = { asyncapi: '3.0.0', info: { title: 't', version: '1' }, channels: { c: { messages: { m: { payload: { $ref: '#/components/schemas/s30' } } } } }, components: { schemas: fanOutSchemas(30) } };
  await replay('AsyncAPI validate, a 30-level payload fan-out', [{ path: '/asyncapi/validate', body: JSON.stringify({ spec: payload, channel: 'c', message: 'm', payload: {} }) }]);
  // The first GraphQL request loads graphql-js and graphql-http: a small query first.
  await replay('GraphQL warm-up (small query)', [{ path: '/graphql', body: JSON.stringify({ query: '{ hello }' }) }]);
  await replay('GraphQL 490 aliases, 410 KB', [{ path: '/graphql', body: aliasQueryBody(490, 410 * 1024) }]);
  const big = aliasQueryBody(490, 1024 * 1024);
  await replay('GraphQL 490 aliases, 2 × 1 MiB at once', [{ path: '/graphql', body: big }, { path: '/graphql', body: big }]);
} finally {
  await server.kill();
}
