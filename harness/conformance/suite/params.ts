/**
 * Parameter text to typed values, for every source (path, query, header, cookie): values that
 * convert reach the handler, values that do not are a 422 with the type's item at
 * `[source, name]`, the text as sent as `input` (an integer given a decimal number: no `input`
 * asserted, see TYPES).
 */
import { invalid, numbered, ok, type Draft, type Item, type Json, type SuiteCase } from './build.js';

export type Source = 'path' | 'query' | 'headers' | 'cookie';
export const SOURCES: readonly Source[] = ['path', 'query', 'headers', 'cookie'];

/** The parameter's name in each source (headers: the name as declared; loc: lower case). */
const NAME: Record<Source, string> = { path: 'value', query: 'value', headers: 'X-Value', cookie: 'value' };

/** The handler and request carrying `text` in `source` for a parameter of `schema`. */
export function carry(source: Source, schema: Json | undefined, text: string | undefined, route = '/params'): { handler: Json; request: Json; loc: string[] } {
  const name = NAME[source];
  const key = source === 'cookie' ? 'cookies' : source;
  const handler: Json = { route: source === 'path' ? `${route}/{value}` : route, method: 'GET', parameters: schema ? { [key]: { [name]: schema } } : {} };
  const request: Json = { method: 'GET', path: source === 'path' ? `${route}/${encodeURIComponent(text ?? '')}` : route };
  if (text !== undefined) {
    if (source === 'query') request.query_params = { [name]: text };
    if (source === 'headers') request.headers = { [name]: text };
    if (source === 'cookie') request.cookies = { [name]: text };
  }
  return { handler, request, loc: [source, source === 'headers' ? name.toLowerCase() : name] };
}

const INT = 'Input should be a valid integer, unable to parse string as an integer';
const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

interface TypeRow {
  type: string;
  schema: Json;
  good: string[];
  bad: string[];
  item: (text: string) => Omit<Item, 'loc'>;
}

const TYPES: TypeRow[] = [
  // A decimal number given to an integer asserts no `input` (optional in the item format): the corpus
  // echoes it as the number (42.5) in some cases and every other failing text as text, so either
  // choice would contradict another case (contradiction-rules.ts, validation-input).
  { type: 'integer', schema: { type: 'integer' }, good: ['42', '-7', '0', '9007199254740991'], bad: ['4.5', 'abc', '0x1F', '12abc'], item: (t) => ({ type: 'int_parsing', msg: INT, ...(NUMERIC.test(t) && !/^[+-]?\d+$/.test(t) ? {} : { input: t }) }) },
  { type: 'number', schema: { type: 'number' }, good: ['1.5', '-0.25', '1e-3', '10'], bad: ['abc', '1,5', '1.2.3'], item: (t) => ({ type: 'float_parsing', msg: 'Input should be a valid number, unable to parse string as a number', input: t }) },
  { type: 'boolean', schema: { type: 'boolean' }, good: ['true', 'False', '1', '0'], bad: ['yes', 'on', '2'], item: (t) => ({ type: 'bool_parsing', msg: 'Input should be a valid boolean, unable to interpret input', input: t }) },
  { type: 'uuid', schema: { type: 'string', format: 'uuid' }, good: ['c3b5a7e2-1f4d-4c8a-9b6e-2d7f1a3c5e90'], bad: ['not-a-uuid'], item: (t) => ({ type: 'uuid_parsing', msg: 'Input should be a valid UUID', input: t }) },
  { type: 'date', schema: { type: 'string', format: 'date' }, good: ['2024-02-29'], bad: ['2024-13-01'], item: (t) => ({ type: 'date_parsing', msg: 'Input should be a valid date', input: t }) },
];

function params(source: Source): Draft[] {
  const out: Draft[] = [];
  for (const row of TYPES) {
    for (const text of row.good) {
      const { handler, request } = carry(source, row.schema, text);
      out.push({ slug: `${row.type}_${out.length + 1}_ok`, description: `${source} ${row.type} parameter: ${JSON.stringify(text)} converts and reaches the handler.`, handler, request, expected_response: ok({ received: true }) });
    }
    for (const text of row.bad) {
      const { handler, request, loc } = carry(source, row.schema, text);
      out.push({ slug: `${row.type}_${out.length + 1}_unconvertible`, description: `${source} ${row.type} parameter: ${JSON.stringify(text)} does not convert: 422 ${row.item(text).type}.`, handler, request, expected_response: invalid({ ...row.item(text), loc } as Item) });
    }
  }
  return out;
}

export function paramCases(): SuiteCase[] {
  return SOURCES.flatMap((s) => numbered(`params_${s}`, params(s)));
}
