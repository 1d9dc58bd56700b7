/**
 * `--variants N --seed S`: new cases derived from each base case whose expected answer a rule can
 * derive, so a server that replays the public answers cannot pass them. Only framework-owned answers
 * are varied (status ≥ 400 and not an error the handler itself returns): a variant that would need a
 * handler to compute something is not generated. The rules (variant-values.ts, variant-rules.ts) look at
 * what a case is — the schema keyword its value fails, its records, its expected problem — never at ids.
 *
 * Each variant changes what its rule varies and, where the route has a literal segment the answer does
 * not mention, renames that segment in the route and the request together: the request a variant sends
 * is then one no public case sends (a replaying server has nothing to replay), and what it measures is
 * unchanged.
 */
import { contradictionIndex } from './contradictions.js';
import type { CaseIdentity, ConformanceCase, LoadedCase } from './types.js';
import { isRunnable } from './types.js';
import { disallowedCors, matchesRoute, otherBadApiKey, otherBadToken, oversizeBody, renameParameter, renamePathSegment, unknownMethod, unknownPath } from './variant-rules.js';
import { otherFailingValue } from './variant-values.js';
import { rngFor, type Rng } from './variant-rng.js';

/**
 * Statuses the framework answers (fixture-app.ts's FRAMEWORK_STATUSES, not imported: this module must
 * not load keel's server code); any other error a handler may return itself, and a 404 is the
 * framework's only when no route matches the request.
 */
const FRAMEWORK_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 405, 406, 408, 411, 413, 414, 415, 422, 429, 431]);

/**
 * The records that make the framework answer these statuses (a 413 needs a body limit, a 403 an auth
 * or CORS record, …); a case expecting one without any of them has a handler deciding it (a file size
 * the handler checks, a GraphQL resolver's refusal).
 */
const RECORDS_FOR: Record<number, readonly string[]> = {
  401: ['jwt_auth', 'api_key_auth', 'authorization', 'lifecycle_hooks'],
  403: ['jwt_auth', 'api_key_auth', 'authorization', 'cors', 'lifecycle_hooks'],
  408: ['request_timeout'],
  413: ['body_limit', 'max_body_size'],
  414: ['max_uri_length'],
  429: ['rate_limit', 'lifecycle_hooks'],
  431: ['max_header_size'],
};

/** A generated case: the base it was derived from and the rule that derived it. */
export type VariantCase = ConformanceCase & { variant_of: string; variant_rule: string };

export interface VariantRule {
  /** Short name, in the variant's id and in reports (`value`, `rename-param`, …). */
  name: string;
  make(base: ConformanceCase, rng: Rng): ConformanceCase | undefined;
  /** The rule changes the path itself (no segment rename on top). */
  movesPath?: boolean;
}

export const VARIANT_RULES: readonly VariantRule[] = [
  { name: 'value', make: otherFailingValue },
  { name: 'rename-param', make: renameParameter },
  { name: 'origin', make: disallowedCors },
  { name: 'body-size', make: oversizeBody },
  { name: 'token', make: otherBadToken },
  { name: 'api-key', make: otherBadApiKey },
  { name: 'unknown-path', make: unknownPath, movesPath: true },
  { name: 'method', make: unknownMethod },
];

/** Renaming a literal path segment: what fills a base case's variants when the rules above find no more. */
const RENAME_PATH: VariantRule = { name: 'rename-path', make: renamePathSegment, movesPath: true };
const SUBSTANTIVE = VARIANT_RULES;

/** Attempts per wanted variant before a base case is given up (rules may find no new value). */
const ATTEMPTS_PER_VARIANT = 8;

/** Whether a case's expected answer is the framework's (see the module comment). */
export function frameworkOwned(c: ConformanceCase): boolean {
  const status = c.expected.status_code;
  const routed = c.request.method.toUpperCase() === c.handler.method.toUpperCase() && matchesRoute(c.handler.route, c.request.path);
  if (!FRAMEWORK_STATUSES.has(status) && !(status === 404 && !routed)) return false;
  // Static files, WebSocket upgrades and streams answer from what the handler or the disk holds.
  const mw = (c.handler.middleware ?? {}) as Record<string, unknown>;
  if (mw.static_files || mw.websocket || c.extra.streaming) return false;
  // A refusal only a record can ask the framework for: without the record, the handler computed it.
  const records = RECORDS_FOR[status];
  return !records || records.some((r) => mw[r] !== undefined || c.handler[r] !== undefined);
}

function signature(c: ConformanceCase): string {
  return JSON.stringify([c.handler, c.request]);
}

export interface VariantOptions {
  /** Variants wanted per base case (at most). */
  perCase: number;
  seed: number;
  /** Base ids to leave alone (e.g. cases the corpus contradicts: their expectation is in doubt). */
  exclude?: ReadonlySet<string>;
}

/** The variants of one base case, in a reproducible order. */
export function variantsOf(base: ConformanceCase, options: VariantOptions): VariantCase[] {
  if (!frameworkOwned(base) || options.exclude?.has(base.id)) return [];
  const rng = rngFor(options.seed, base.id);
  const seen = new Set([signature(base)]);
  const out: VariantCase[] = [];
  const add = (rule: VariantRule, made: ConformanceCase | undefined) => {
    if (!made) return;
    const v = rule.movesPath ? made : (renamePathSegment(made, rng) ?? made);
    const sig = signature(v);
    if (seen.has(sig)) return;
    seen.add(sig);
    const id = `${base.id}~${rule.name}-${out.length + 1}`;
    const identity: Omit<CaseIdentity, 'source'> = { id, category: base.category, name: `${base.name} (${rule.name} variant)` };
    out.push({ ...v, ...identity, source: base.source, variant_of: base.id, variant_rule: rule.name });
  };
  // The rules that vary what the case is about first, in turn; a renamed path alone fills what they leave.
  const budget = options.perCase * ATTEMPTS_PER_VARIANT;
  for (let attempt = 0; out.length < options.perCase && attempt < budget; attempt++) {
    const rule = SUBSTANTIVE[attempt % SUBSTANTIVE.length]!;
    add(rule, rule.make(base, rng));
  }
  for (let attempt = 0; out.length < options.perCase && attempt < budget; attempt++) add(RENAME_PATH, renamePathSegment(base, rng));
  return out;
}

/** Every variant of the runnable HTTP cases given, each after its base's position is irrelevant: appended in case order. */
export function generateVariants(cases: readonly LoadedCase[], options: VariantOptions): VariantCase[] {
  return cases.filter(isRunnable).flatMap((c) => variantsOf(c as ConformanceCase, options));
}

/**
 * Base cases nothing is derived from: those the corpus contradicts (their answer is in doubt). A
 * conflict of validation styles is not one: a variant keeps its base's declaration, and so its style.
 */
export function contradictedBases(corpus: readonly LoadedCase[]): Set<string> {
  return new Set([...contradictionIndex(corpus).values()].flat().filter((e) => e.rule !== 'validation-style').map((e) => e.case));
}

/** `--seed`: a non-negative 32-bit integer; absent, one is drawn (and printed, so the run can be repeated). */
export function parseSeed(text: string | undefined): number | string {
  if (text === undefined) return Math.floor(Math.random() * 2 ** 31);
  if (!/^\d+$/.test(text) || Number(text) > 0xffffffff) return `--seed must be an integer from 0 to 4294967295, got ${JSON.stringify(text)}`;
  return Number(text);
}

/** `--variants`: a positive integer (variants per base case), at most MAX_VARIANTS_PER_CASE. */
export const MAX_VARIANTS_PER_CASE = 50;
export function parseVariantCount(text: string): number | string {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_VARIANTS_PER_CASE) return `--variants must be an integer from 1 to ${MAX_VARIANTS_PER_CASE}, got ${JSON.stringify(text)}`;
  return Number(text);
}

/** What `--json` and the summary say about a run's variants. */
export interface VariantSummary {
  seed: number;
  per_case: number;
  /** Variants generated, and from how many base cases. */
  generated: number;
  bases: number;
  passed: number;
  failed: number;
}

/** The variants' share of a run (results carrying `variant_of`). */
export function summariseVariants(results: ReadonlyArray<{ status: string; variant_of?: string }>, seed: number, perCase: number): VariantSummary {
  const vs = results.filter((r) => r.variant_of);
  return {
    seed,
    per_case: perCase,
    generated: vs.length,
    bases: new Set(vs.map((r) => r.variant_of)).size,
    passed: vs.filter((r) => r.status === 'passed').length,
    failed: vs.filter((r) => r.status === 'failed').length,
  };
}

/** The summary's variants line: `variants: 480 of 520 passed (92.3%; 3 per case from 207 base cases, --seed 7)`. */
export function variantLine(s: VariantSummary): string {
  const run = s.passed + s.failed;
  const rate = run ? ` (${((s.passed / run) * 100).toFixed(1)}%` : ' (-';
  return `variants: ${s.passed} of ${run} passed${rate}; ${s.per_case} per case from ${s.bases} base cases, --seed ${s.seed})`;
}

/** `--variants N` and `--seed S` together: undefined without either, else the settings or a usage error. */
export function parseVariantFlags(variants: string | undefined, seed: string | undefined): { seed: number; perCase: number } | string | undefined {
  if (variants === undefined && seed === undefined) return undefined;
  if (variants === undefined) return '--seed chooses the variants --variants N generates: give it with --variants';
  const perCase = parseVariantCount(variants);
  const s = parseSeed(seed);
  if (typeof perCase === 'string') return perCase;
  if (typeof s === 'string') return s;
  return { seed: s, perCase };
}
