/**
 * Test support for the protocol kinds: load a document as the runner does, serve it with keel's
 * fixture, play it, and report the outcome (also against another case's server, to see a check fail).
 */
import assert from 'node:assert/strict';
import { loadProtocol, protocolFixtureTarget, runProtocolCase } from './index.js';
import type { ProtocolCase } from '../types.js';

/** The protocol cases of one document (asserting it is recognised and none is skipped). */
export function casesOf(doc: unknown, category = 'test'): ProtocolCase[] {
  const cases = loadProtocol(doc, { id: `${category}/doc`, category, source: 'inline' });
  assert.ok(cases, 'document not recognised by any kind');
  for (const c of cases) assert.equal(c.skip, undefined, `${c.id}: ${c.skip}`);
  return cases as ProtocolCase[];
}

/** Run `c` against keel's fixture app built from `servedBy` (default: itself). */
export async function run(c: ProtocolCase, servedBy: ProtocolCase = c) {
  return runProtocolCase(c, { target: () => protocolFixtureTarget(servedBy), timeoutMs: 5000 }, 'X-Conformance-Case');
}
