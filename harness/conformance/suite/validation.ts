/**
 * Each validation keyword × each source (path, query, header, cookie, JSON body): a value just
 * inside the bound reaches the handler, a value outside is a 422 with keel's item for the keyword
 * (docs/conformance.md, "Validation: Spikard's rules"). Query, header and cookie values are quoted
 * as sent in the item's `input`; path values are converted; body values are JSON as sent.
 */
import { invalid, numbered, ok, type Draft, type Item, type Json, type SuiteCase } from './build.js';
import { carry, SOURCES, type Source } from './params.js';

type AnySource = Source | 'body';

interface KeywordRow {
  keyword: string;
  schema: Json;
  /** A value inside the bound and one outside, as JSON values (sent as text outside the body). */
  good: unknown;
  bad: unknown;
  item: (input: unknown) => Omit<Item, 'loc' | 'input'>;
  /** Sources the row does not apply to. */
  not?: AnySource[];
}

const ROWS: KeywordRow[] = [
  { keyword: 'minLength', schema: { type: 'string', minLength: 3 }, good: 'abc', bad: 'ab', item: () => ({ type: 'string_too_short', msg: 'String should have at least 3 characters', ctx: { min_length: 3 } }) },
  { keyword: 'maxLength', schema: { type: 'string', maxLength: 5 }, good: 'abcde', bad: 'abcdef', item: () => ({ type: 'string_too_long', msg: 'String should have at most 5 characters', ctx: { max_length: 5 } }) },
  { keyword: 'pattern', schema: { type: 'string', pattern: '^[a-z]+-\\d{2}$' }, good: 'sku-12', bad: 'SKU-1', item: () => ({ type: 'string_pattern_mismatch', msg: "String should match pattern '^[a-z]+-\\d{2}$'", ctx: { pattern: '^[a-z]+-\\d{2}$' } }) },
  { keyword: 'minimum', schema: { type: 'integer', minimum: 10 }, good: 10, bad: 9, item: () => ({ type: 'greater_than_equal', msg: 'Input should be greater than or equal to 10', ctx: { ge: 10 } }) },
  { keyword: 'maximum', schema: { type: 'integer', maximum: 100 }, good: 100, bad: 101, item: () => ({ type: 'less_than_equal', msg: 'Input should be less than or equal to 100', ctx: { le: 100 } }) },
  { keyword: 'exclusiveMinimum', schema: { type: 'number', exclusiveMinimum: 0 }, good: 0.5, bad: 0, item: () => ({ type: 'greater_than', msg: 'Input should be greater than 0', ctx: { gt: 0 } }) },
  { keyword: 'exclusiveMaximum', schema: { type: 'number', exclusiveMaximum: 1 }, good: 0.75, bad: 1, item: () => ({ type: 'less_than', msg: 'Input should be less than 1', ctx: { lt: 1 } }) },
  { keyword: 'enum', schema: { type: 'string', enum: ['red', 'green', 'blue'] }, good: 'green', bad: 'purple', item: () => ({ type: 'enum', msg: "Input should be 'red', 'green' or 'blue'", ctx: { expected: "'red', 'green' or 'blue'" } }) },
  { keyword: 'multipleOf', schema: { type: 'integer', multipleOf: 5 }, good: 15, bad: 17, item: (v) => ({ type: 'validation_error', msg: `${String(v)} is not a multiple of 5` }) },
  { keyword: 'format_email', schema: { type: 'string', format: 'email' }, good: 'ada@example.com', bad: 'not-an-email', item: () => ({ type: 'string_pattern_mismatch', msg: 'value is not a valid email address' }), not: ['path'] },
  { keyword: 'format_ipv4', schema: { type: 'string', format: 'ipv4' }, good: '192.0.2.1', bad: '192.0.2.300', item: () => ({ type: 'format_error', msg: 'Input is not a valid IPv4 address' }) },
  { keyword: 'required', schema: { type: 'string' }, good: 'here', bad: undefined, item: () => ({ type: 'missing', msg: 'Field required' }), not: ['path'] },
];

/** The handler and request for `value` in the JSON body under property `value`. */
function inBody(schema: Json, value: unknown): { handler: Json; request: Json; loc: string[] } {
  const handler = { route: '/validate', method: 'POST', body_schema: { type: 'object', properties: { value: schema }, required: ['value'] } };
  return { handler, request: { method: 'POST', path: '/validate', body: value === undefined ? {} : { value } }, loc: ['body', 'value'] };
}

/** What a source's item echoes as `input`: text as sent (query, header, cookie), converted (path), JSON (body). */
function inputFor(source: AnySource, value: unknown): unknown {
  if (source === 'body' || source === 'path') return value;
  return String(value);
}

function cases(source: AnySource): Draft[] {
  const out: Draft[] = [];
  for (const row of ROWS) {
    if (row.not?.includes(source)) continue;
    const at = (v: unknown) => (source === 'body' ? inBody(row.schema, v) : carry(source, row.schema, v === undefined ? undefined : String(v), '/validate'));
    const good = at(row.good);
    out.push({ slug: `${row.keyword}_ok`, description: `${source}: ${JSON.stringify(row.good)} satisfies ${row.keyword} and reaches the handler.`, handler: good.handler, request: good.request, expected_response: ok({ valid: true }) });
    const bad = at(row.bad);
    const { type, msg, ctx } = row.item(row.bad);
    const missing = row.bad === undefined;
    const item: Item = { type, loc: bad.loc, msg, ...(missing ? (source === 'body' ? { input: {} } : {}) : { input: inputFor(source, row.bad) }), ...(ctx ? { ctx } : {}) };
    out.push({ slug: `${row.keyword}_violated`, description: `${source}: ${row.bad === undefined ? 'no value' : JSON.stringify(row.bad)} fails ${row.keyword}: 422 ${type} at ${JSON.stringify(bad.loc)}.`, handler: bad.handler, request: bad.request, expected_response: invalid(item) });
  }
  return out;
}

/**
 * List keywords, where a parameter can be a list: the query (repeated keys) and the JSON body. The
 * words are the reference's: "item" after any minimum, "items" after any maximum.
 */
const LIST_ROWS: Array<{ keyword: string; schema: Json; good: string[]; bad: string[]; item: Omit<Item, 'loc' | 'input'> }> = [
  { keyword: 'minItems', schema: { type: 'array', items: { type: 'string' }, minItems: 2 }, good: ['a', 'b'], bad: ['a'], item: { type: 'too_short', msg: 'List should have at least 2 item after validation', ctx: { min_length: 2 } } },
  { keyword: 'maxItems', schema: { type: 'array', items: { type: 'string' }, maxItems: 3 }, good: ['a', 'b', 'c'], bad: ['a', 'b', 'c', 'd'], item: { type: 'too_long', msg: 'List should have at most 3 items after validation', ctx: { max_length: 3 } } },
];

function listCases(source: 'query' | 'body'): Draft[] {
  const out: Draft[] = [];
  for (const row of LIST_ROWS) {
    for (const [kind, value] of [['ok', row.good], ['violated', row.bad]] as const) {
      const at = source === 'body'
        ? inBody(row.schema, value)
        : { handler: { route: '/validate', method: 'GET', parameters: { query: { value: row.schema } } }, request: { method: 'GET', path: '/validate', query_params: { value } }, loc: ['query', 'value'] };
      const expected = kind === 'ok' ? ok({ valid: true }) : invalid({ ...row.item, loc: at.loc, input: value } as Item);
      out.push({ slug: `${row.keyword}_${kind}`, description: `${source}: a list of ${value.length} ${kind === 'ok' ? 'satisfies' : 'fails'} ${row.keyword}.`, handler: at.handler, request: at.request, expected_response: expected });
    }
  }
  return out;
}

/** Object keywords of a JSON body. */
function objectCases(): Draft[] {
  const closed = { route: '/validate', method: 'POST', body_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false } };
  return [
    { slug: 'additionalProperties_ok', description: 'body: only declared members pass additionalProperties: false.', handler: closed, request: { method: 'POST', path: '/validate', body: { name: 'a' } }, expected_response: ok({ valid: true }) },
    { slug: 'additionalProperties_violated', description: 'body: an undeclared member fails additionalProperties: false.', handler: closed, request: { method: 'POST', path: '/validate', body: { name: 'a', extra: 1 } }, expected_response: invalid({ type: 'validation_error', loc: ['body', 'extra'], msg: 'Additional properties are not allowed', input: { name: 'a', extra: 1 }, ctx: { additional_properties: false, unexpected_field: 'extra' } }) },
    { slug: 'required_member_missing_and_type', description: 'body: a missing member and a mistyped one are both reported, by location.', handler: { route: '/validate', method: 'POST', body_schema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'] } }, request: { method: 'POST', path: '/validate', body: { age: 'old' } }, expected_response: invalid({ type: 'int_parsing', loc: ['body', 'age'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'old' }, { type: 'missing', loc: ['body', 'name'], msg: 'Field required', input: { age: 'old' } }) },
  ];
}

export function validationCases(): SuiteCase[] {
  return [...SOURCES, 'body' as const].flatMap((s) => numbered(`validation_${s}`, [...cases(s), ...(s === 'query' || s === 'body' ? listCases(s) : []), ...(s === 'body' ? objectCases() : [])]));
}
