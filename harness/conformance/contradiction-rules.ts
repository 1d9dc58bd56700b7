/**
 * Contradictions found by rule in the corpus itself, so they hold for corpus versions and cases the
 * runner has never seen (contradictions.json keeps only what no rule finds):
 *
 * - `same-request`: two cases with the same handler (route, method, schemas, records) and the same
 *   request that expect different answers, one of them an answer the framework owns (the corpus
 *   README's list: 401, 403, 408, 413, 414, 422, 429, 431; a success body, or any status the
 *   handler itself returns, is the handler's, which the corpus lets answer per case). Each is
 *   contradicted in the field where they differ (the status, a header, or the narrowest body member
 *   holding every difference). Expectations that one answer can meet (a token or pattern such as
 *   `<<uuid>>` against a value it admits, an optional `input`/`ctx` left out) are not contradictions.
 * - `validation-style`: the same kind of validation error (error-situation.ts: the JSON Schema
 *   keyword the sent value fails, read from the case's schema and request) expected in two styles:
 *   another `type`, other members, other wording (case-specific numbers and quoted values taken
 *   out), or other `ctx` members. Each item is contradicted by one case of every other style.
 * - `validation-input`: the same kind of error on the same parameter source (query, path, header,
 *   cookie: the wire carries text there) whose items echo the `input` as different JSON kinds (`42.5`
 *   against `"foobar"`, `""` against `null`).
 */
import { isDeepStrictEqual } from 'node:util';
import { diffJson, isPattern, type Mismatch } from './compare.js';
import { expectedAt, inStyleOf, wording } from './contradiction-verdict.js';
import { situationOf } from './error-situation.js';
import { isWebSocketCase, type ConformanceCase, type Contradiction, type LoadedCase } from './types.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON with object keys sorted: equal for equal values whatever the key order. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (isObject(x) ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, x[k]])) : x));
}

const lowerKeys = (o: unknown) => (isObject(o) ? Object.fromEntries(Object.entries(o).map(([k, v]) => [k.toLowerCase(), v])) : o);

/** The handler and request of a case (and its extra blocks), as one key (header names case-insensitive, method upper case). */
function exchangeKey(c: ConformanceCase): string {
  const { headers, method, ...request } = c.request;
  return canonical({ handler: { ...c.handler, method: c.handler.method.toUpperCase() }, request: { ...request, method: method.toUpperCase(), headers: lowerKeys(headers ?? {}) }, extra: c.extra });
}

/**
 * Statuses the framework answers by itself (the corpus README, "Earning a pass": validation,
 * authentication, timeout, body limit, URI and header limits, rate limit): a handler returning the
 * case's expected response cannot make two such answers agree.
 */
const FRAMEWORK_STATUSES: ReadonlySet<number> = new Set([401, 403, 408, 413, 414, 422, 429, 431]);

/** A value of the corpus's that admits more than itself: a token (`<<uuid>>`) or a pattern (`.*ms`). */
const isOpen = (v: unknown) => typeof v === 'string' && (/^<<\w+>>$/.test(v) || isPattern(v));

/** A mismatch's `what` (`body $.errors[0].msg`, `header etag`) as a field path into a case, or undefined. */
function fieldOf(m: Mismatch): string[] | undefined {
  if (m.what === 'status') return ['status_code'];
  if (m.what.startsWith('header ')) return ['headers', m.what.slice('header '.length)];
  if (m.what === 'body') return ['body'];
  const body = /^body \$(.*)$/.exec(m.what);
  if (!body) return undefined;
  const out = ['body'];
  for (const part of body[1]!.split(/\.|(?=\[)/)) {
    if (part === '' || part === 'length') continue;
    if (/^\[\d+\]$/.test(part)) out.push(part);
    else if (/^[A-Za-z_$][\w$]*$/.test(part)) out.push(part);
    else return ['body']; // A member name the path syntax cannot say (`["x-y"]`): the body as a whole.
  }
  return out;
}

/** The narrowest field holding every difference, as a path (`expected_response.body.errors[0].msg`). */
function commonField(mismatches: readonly Mismatch[]): string | undefined {
  const paths = mismatches.map(fieldOf);
  if (paths.some((p) => p === undefined)) return undefined;
  if (paths.some((p) => p![0] === 'status_code')) return 'expected_response.status_code';
  let common = paths[0]!;
  for (const p of paths.slice(1)) {
    let n = 0;
    while (n < common.length && n < p!.length && common[n] === p![n]) n++;
    common = common.slice(0, n);
  }
  if (common.length === 0 || (common[0] === 'headers' && common.length < 2)) return undefined;
  return `expected_response${common.map((s) => (s.startsWith('[') ? s : `.${s}`)).join('')}`;
}

/** What `a` expects that an answer meeting `b`'s expectation cannot give (compare.ts's rules). */
function differences(a: ConformanceCase['expected'], b: ConformanceCase['expected']): Mismatch[] {
  const out: Mismatch[] = [];
  if (a.status_code !== b.status_code) out.push({ what: 'status', expected: a.status_code, actual: b.status_code });
  const bh = lowerKeys(b.headers ?? {}) as Json;
  for (const [name, want] of Object.entries(a.headers ?? {})) {
    const got = bh[name.toLowerCase()];
    if (got !== undefined && !isOpen(want) && !isOpen(got) && got !== want) out.push({ what: `header ${name.toLowerCase()}`, expected: want, actual: got });
  }
  if ('body' in a && 'body' in b && !isDeepStrictEqual(a.body, b.body)) {
    if (isObject(a.body) || Array.isArray(a.body)) diffJson(a.body, b.body, '$', out);
    else out.push({ what: 'body', expected: a.body, actual: b.body });
  }
  // An answer can meet a token or pattern of the other case together with this case's value.
  return out.filter((m) => !isOpen(m.expected) && !isOpen(m.actual));
}

function sameRequest(cases: readonly ConformanceCase[], out: Contradiction[]): void {
  const groups = new Map<string, ConformanceCase[]>();
  for (const c of cases) {
    const key = exchangeKey(c);
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  for (const group of groups.values()) {
    for (const a of group) {
      for (const b of group) {
        if (a === b || !(FRAMEWORK_STATUSES.has(a.expected.status_code) || FRAMEWORK_STATUSES.has(b.expected.status_code))) continue;
        const ab = differences(a.expected, b.expected);
        // One answer can meet both expectations: no contradiction.
        if (ab.length === 0 || differences(b.expected, a.expected).length === 0) continue;
        const field = commonField(ab);
        if (!field) continue;
        out.push({ case: a.id, conflicts_with: b.id, field, rule: 'same-request', reason: `the same handler and request as ${b.id} with another expectation in ${field.replace(/^expected_response\./, '')} (found by rule: same handler and request, different expected answers)` });
        break;
      }
    }
  }
}

interface ErrorItem {
  c: ConformanceCase;
  index: number;
  item: Json;
  situation: string;
  source: string;
}

function errorItems(cases: readonly ConformanceCase[]): ErrorItem[] {
  const out: ErrorItem[] = [];
  for (const c of cases) {
    const errors = isObject(c.expected.body) ? c.expected.body.errors : undefined;
    if (!Array.isArray(errors)) continue;
    errors.forEach((item: unknown, index) => {
      if (!isObject(item) || typeof item.type !== 'string' || typeof item.msg !== 'string' || !Array.isArray(item.loc)) return;
      let situation: string | undefined;
      try {
        situation = situationOf(c, item.loc);
      } catch {
        // A case the runner cannot read with certainty gives no rule (and never stops a run).
        situation = undefined;
      }
      if (situation) out.push({ c, index, item, situation, source: String(item.loc[0]) });
    });
  }
  return out;
}

const isErrorItem = (v: unknown): v is Json => isObject(v) && typeof v.type === 'string' && typeof v.msg === 'string';

/** An item's style: its type, members (bar the optional input/ctx), wording and ctx members. */
function style(e: Json): { type: string; keys: string; wording: string; ctx?: string } {
  const keys = Object.keys(e).filter((k) => k !== 'input' && k !== 'ctx').sort().join(',');
  return { type: String(e.type), keys, wording: wording(String(e.msg)), ...(isObject(e.ctx) ? { ctx: Object.keys(e.ctx).sort().join(',') } : {}) };
}

/** Which part of two items' styles differs: `item` (type, members, ctx), `msg` (wording only), or none. */
function styleConflict(a: Json, b: Json): 'item' | 'msg' | undefined {
  const [x, y] = [style(a), style(b)];
  if (x.type !== y.type || x.keys !== y.keys || (x.ctx !== undefined && y.ctx !== undefined && x.ctx !== y.ctx)) return 'item';
  return x.wording !== y.wording ? 'msg' : undefined;
}

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const itemField = (e: ErrorItem, member?: string) => `expected_response.body.errors[${e.index}]${member ? `.${member}` : ''}`;

/** One representative per distinct value of `key`, the same source first, then by id (stable). */
function representatives(x: ErrorItem, others: ErrorItem[], key: (e: ErrorItem) => string): ErrorItem[] {
  const sorted = [...others].sort((a, b) => Number(b.source === x.source) - Number(a.source === x.source) || a.c.id.localeCompare(b.c.id) || a.index - b.index);
  const seen = new Set<string>();
  return sorted.filter((e) => !seen.has(key(e)) && seen.add(key(e)));
}

function describeItem(e: Json): string {
  const s = style(e);
  return `{type: '${s.type}', msg: '${String(e.msg)}'${'input' in e ? ', input' : ''}${s.ctx !== undefined ? `, ctx: {${s.ctx}}` : ''}}`;
}

function validationRules(cases: readonly ConformanceCase[], out: Contradiction[]): void {
  const bySituation = new Map<string, ErrorItem[]>();
  for (const e of errorItems(cases)) bySituation.set(e.situation, [...(bySituation.get(e.situation) ?? []), e]);
  for (const [situation, items] of bySituation) {
    for (const x of items) {
      const styled = items.filter((y) => y.c.id !== x.c.id && styleConflict(x.item, y.item));
      for (const y of representatives(x, styled, (e) => canonical(style(e.item)))) {
        const member = styleConflict(x.item, y.item) === 'msg' ? 'msg' : undefined;
        const field = itemField(x, member);
        const other = itemField(y, member);
        out.push({ case: x.c.id, conflicts_with: y.c.id, field, ...(other !== field ? { other_field: other } : {}), rule: 'validation-style', reason: `the ${situation} error at ${JSON.stringify(x.item.loc)} is ${describeItem(x.item)}; ${y.c.id} words the same kind of error ${describeItem(y.item)} (found by rule: same JSON Schema keyword, another style)` });
      }
      // The wire carries text in every parameter source; a body's input is whatever JSON was sent.
      if (x.source === 'body' || !('input' in x.item)) continue;
      const inputs = items.filter((y) => y.c.id !== x.c.id && y.source === x.source && 'input' in y.item && y.item.type === x.item.type && kind(y.item.input) !== kind(x.item.input));
      for (const y of representatives(x, inputs, (e) => kind(e.item.input))) {
        const field = itemField(x, 'input');
        const other = itemField(y, 'input');
        out.push({ case: x.c.id, conflicts_with: y.c.id, field, ...(other !== field ? { other_field: other } : {}), rule: 'validation-input', reason: `the ${situation} error's input at ${JSON.stringify(x.item.loc)} is ${JSON.stringify(x.item.input)} (${kind(x.item.input)}); ${y.c.id} echoes the same kind of error on a ${x.source} value as ${JSON.stringify(y.item.input)} (${kind(y.item.input)}) (found by rule: same keyword and source, input of another JSON kind)` });
      }
    }
  }
}

/** Every contradiction the rules find among the HTTP cases of `corpus` (see the module comment). */
export function contradictionsByRule(corpus: Iterable<LoadedCase>): Contradiction[] {
  // Every HTTP case counts, skipped or not: what the corpus expects is what it expects.
  const cases = [...corpus].filter((c): c is ConformanceCase => 'handler' in c && 'expected' in c && !isWebSocketCase(c));
  const out: Contradiction[] = [];
  sameRequest(cases, out);
  validationRules(cases, out);
  return out;
}

/** `field` is `outer` or lies inside it. */
const within = (outer: string, field: string) => field === outer || field.startsWith(`${outer}.`) || field.startsWith(`${outer}[`);

/**
 * The rule-found contradiction that excuses whatever `entry` (a listed one) excuses: the same case,
 * a field holding the entry's, and an answer equal to the entry's conflicting expectation is the
 * rule's conflicting expectation too. Undefined when no rule finds the entry (it stays listed).
 */
export function foundByRule(entry: Contradiction, found: readonly Contradiction[], corpus: ReadonlyMap<string, LoadedCase>): Contradiction | undefined {
  const own = corpus.get(entry.case);
  const listedOther = corpus.get(entry.conflicts_with);
  if (!own || !listedOther || !('expected' in own) || !('expected' in listedOther) || isWebSocketCase(own) || isWebSocketCase(listedOther)) return undefined;
  return found.find((f) => {
    if (f.case !== entry.case || !within(f.field, entry.field)) return false;
    const ruleOther = corpus.get(f.conflicts_with);
    if (!ruleOther || !('expected' in ruleOther) || isWebSocketCase(ruleOther)) return false;
    const listedValue = expectedAt(listedOther.expected, entry.other_field ?? entry.field);
    const ruleValue = expectedAt(ruleOther.expected, f.other_field ?? f.field);
    // Two error items: the same style (type, members, wording, ctx members) is the same conflict,
    // whatever their case-specific values (loc, limits, patterns).
    if (isErrorItem(listedValue) && isErrorItem(ruleValue)) return canonical(style(listedValue)) === canonical(style(ruleValue));
    return inStyleOf(listedValue, expectedAt(own.expected, f.field), ruleValue);
  });
}
