// A node:test reporter writing full titles (parents joined by a space, as mocha's fullTitle) and
// outcomes to KEEL_PEER_RESULTS. Suites (tests with children) are not counted as tests.
import { writeFileSync } from 'node:fs';
export default async function* keelPeerReporter(source) {
  const out = { passed: [], failed: [], skipped: [] };
  const stacks = new Map();
  for await (const event of source) {
    const d = event.data;
    if (event.type === 'test:start') {
      const stack = stacks.get(d.file) ?? [];
      stack.length = d.nesting;
      stack.push(d.name);
      stacks.set(d.file, stack);
    } else if (event.type === 'test:pass' || event.type === 'test:fail') {
      if (d.details?.type === 'suite') continue;
      const stack = stacks.get(d.file) ?? [];
      const title = [...stack.slice(0, d.nesting), d.name].join(' ');
      if (d.skip || d.todo) out.skipped.push(title);
      else if (event.type === 'test:pass') out.passed.push(title);
      else out.failed.push({ title, error: String(d.details?.error?.cause?.message ?? d.details?.error?.message ?? '').slice(0, 500) });
    }
  }
  writeFileSync(process.env.KEEL_PEER_RESULTS, JSON.stringify(out));
}
