/**
 * docs/conformance.md's "What conformance means" section, generated from the shipped suite's
 * standings (standing.ts): a test compares the page with `conformanceMeaning()`, so the figures and
 * keel's listed choices are always the suite's.
 */
import { loadSuite } from './index.js';
import { REQUIREMENTS, type Requirement } from './standing.js';

export const MEANING_START = '<!-- conformance-meaning: generated from harness/conformance/suite/standing.ts; a test keeps it equal to conformanceMeaning() -->';
export const MEANING_END = '<!-- /conformance-meaning -->';

const WHAT: Record<Requirement, string> = {
  required: 'the specification or an RFC (Fetch, RFC 6455, JSON Schema) says so, and the case cites it. Every implementation must pass these: `--require required` runs only them',
  reference: "the specification is silent and the case expects the reference implementation's answer (Spikard's wording of problems and validation items, its CORS and request-id behaviour). `--require reference` adds them",
  keel: "keel's deliberate choice where it answers differently or says more than the reference; each says why in one line (below). Another implementation may differ here and still conform to the specification",
};

/** The generated section, markers included. */
export function conformanceMeaning(): string {
  const cases = loadSuite();
  const count = (st: Requirement, category?: string) => cases.filter((c) => c.requirement === st && (category === undefined || c.category === category)).length;
  const lines = [MEANING_START, '', `Of the shipped suite's ${cases.length} cases, each carries a \`requirement\` saying on whose word it asks what it asks, and a \`basis\` (shown by \`--list\`, \`--json\`, \`--report\` and under each failure):`, ''];
  lines.push('| requirement | cases | meaning |', '|---|---|---|');
  for (const st of REQUIREMENTS) lines.push(`| \`${st}\` | ${count(st)} | ${WHAT[st]} |`);
  lines.push('', 'The summary counts each apart (`by standing: required 165/165 passed, …`). Per category:', '', '| category | required | reference | keel |', '|---|---|---|---|');
  for (const category of [...new Set(cases.map((c) => c.category))]) lines.push(`| ${category} | ${REQUIREMENTS.map((st) => count(st, category)).join(' | ')} |`);
  lines.push('', "keel's choices among the cases, with their why:", '');
  const why = new Map<string, Set<string>>();
  for (const c of cases) if (c.requirement === 'keel') why.set(c.basis!, (why.get(c.basis!) ?? new Set()).add(c.category));
  for (const [basis, categories] of why) lines.push(`- ${basis} (${[...categories].join(', ')})`);
  lines.push('', MEANING_END);
  return lines.join('\n');
}
