/**
 * A parameter's `error_style: 'generic'`: constraint errors as `validation_error` items with the limit
 * and the value in `ctx` and no `input` (the corpus's second wording); the default stays the reference's.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { App } from '../lib/app/app.js';
import type { ValidationIssue } from '../lib/http/validation.js';

const generic = { error_style: 'generic' } as const;
const app = new App({ port: 0 });
app.get('/q', (d) => ({ v: d.validatedParams?.query }), {
  parameters: {
    query: {
      name: { type: 'string', minLength: 3, maxLength: 5, optional: true, ...generic },
      code: { type: 'string', pattern: '^[0-9]+$', optional: true, ...generic },
      low: { type: 'integer', minimum: 1, optional: true, ...generic },
      high: { type: 'integer', maximum: 100, optional: true, ...generic },
      gt: { type: 'integer', exclusiveMinimum: 0, optional: true, ...generic },
      lt: { type: 'number', exclusiveMaximum: 1, optional: true, ...generic },
      step: { type: 'integer', multipleOf: 5, optional: true, ...generic },
      ids: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 3, uniqueItems: true, optional: true, ...generic },
      email: { type: 'string', format: 'email', optional: true, ...generic },
      ip: { type: 'string', format: 'ipv4', optional: true, ...generic },
      sort: { type: 'string', enum: ['asc', 'desc'], optional: true, ...generic },
      count: { type: 'integer', required: true, ...generic },
      plain: { type: 'integer', maximum: 100, optional: true },
    },
  },
});
app.get('/events/{date}', (d) => ({ v: d.pathParams }), { parameters: { path: { date: { type: 'string', format: 'date', ...generic } } } });
app.get('/auth', () => ({ ok: true }), {
  parameters: { headers: { Authorization: { type: 'string', pattern: '^Bearer [A-Za-z0-9._~+/-]+=*$', ...generic }, 'X-API-Key': { type: 'string', pattern: '^[a-f0-9]{32}$', optional: true, ...generic } } },
});
const router = app.intoRouter();

async function issues(path: string, headers: Record<string, string> = {}): Promise<ValidationIssue[]> {
  const res = await request(router).get(path).set(headers);
  assert.equal(res.status, 422, JSON.stringify(res.body));
  return res.body.errors as ValidationIssue[];
}
const one = async (query: string) => (await issues(`/q?count=1&${query}`))[0];

describe('when a parameter says error_style: generic', () => {
  it('should word string, number and list bounds with the limit and the value in ctx, without input', async () => {
    assert.deepEqual(await one('name=ab'), { type: 'validation_error', loc: ['query', 'name'], msg: 'String length must be at least 3', ctx: { min_length: 3, actual_length: 2 } });
    assert.deepEqual(await one('name=abcdefg'), { type: 'validation_error', loc: ['query', 'name'], msg: 'String length must not exceed 5', ctx: { max_length: 5, actual_length: 7 } });
    assert.deepEqual(await one('code=12a'), { type: 'validation_error', loc: ['query', 'code'], msg: 'String does not match pattern', ctx: { pattern: '^[0-9]+$', value: '12a' } });
    assert.deepEqual(await one('low=0'), { type: 'validation_error', loc: ['query', 'low'], msg: 'Value must be at least 1', ctx: { minimum: 1, value: 0 } });
    assert.deepEqual(await one('high=150'), { type: 'validation_error', loc: ['query', 'high'], msg: 'Value must not exceed 100', ctx: { maximum: 100, value: 150 } });
    assert.deepEqual(await one('gt=0'), { type: 'validation_error', loc: ['query', 'gt'], msg: 'Value must be greater than 0', ctx: { exclusive_minimum: 0, value: 0 } });
    assert.deepEqual(await one('lt=1.5'), { type: 'validation_error', loc: ['query', 'lt'], msg: 'Value must be less than 1', ctx: { exclusive_maximum: 1, value: 1.5 } });
    assert.deepEqual(await one('step=17'), { type: 'validation_error', loc: ['query', 'step'], msg: 'Value must be a multiple of 5', ctx: { multiple_of: 5, value: 17 } });
    assert.deepEqual(await one('ids=1'), { type: 'validation_error', loc: ['query', 'ids'], msg: 'Array must contain at least 2 items', ctx: { min_items: 2, actual_items: 1 } });
    assert.deepEqual(await one('ids=1&ids=2&ids=3&ids=4'), { type: 'validation_error', loc: ['query', 'ids'], msg: 'Array must not contain more than 3 items', ctx: { max_items: 3, actual_items: 4 } });
    assert.deepEqual(await one('ids=1&ids=2&ids=2'), { type: 'validation_error', loc: ['query', 'ids'], msg: 'Array items must be unique', ctx: { unique_items: true, duplicate_value: 2, duplicate_index: 2 } });
    assert.deepEqual(await one('sort=up'), { type: 'validation_error', loc: ['query', 'sort'], msg: 'Value must be one of: asc, desc', ctx: { enum: ['asc', 'desc'], value: 'up' } });
  });

  it('should name the format a value does not have', async () => {
    assert.deepEqual(await one('email=nope'), { type: 'validation_error', loc: ['query', 'email'], msg: 'Invalid email format', ctx: { format: 'email', value: 'nope' } });
    assert.deepEqual(await one('ip=999.1.1.1'), { type: 'validation_error', loc: ['query', 'ip'], msg: 'Invalid IPv4 address format', ctx: { format: 'ipv4', value: '999.1.1.1' } });
    assert.deepEqual(await issues('/events/2025-13-45'), [{ type: 'validation_error', loc: ['path', 'date'], msg: 'Invalid date format', ctx: { format: 'date', value: '2025-13-45' } }]);
  });

  it('should say what a credential header holds', async () => {
    assert.deepEqual(await issues('/auth', { Authorization: 'Bearer a b' }), [{ type: 'validation_error', loc: ['headers', 'authorization'], msg: 'Invalid Bearer token format', ctx: { pattern: '^Bearer [A-Za-z0-9._~+/-]+=*$', value: 'Bearer a b' } }]);
    assert.deepEqual(await issues('/auth', { Authorization: 'Bearer ok', 'X-API-Key': 'short' }), [{ type: 'validation_error', loc: ['headers', 'x-api-key'], msg: 'Invalid API key format', ctx: { pattern: '^[a-f0-9]{32}$', value: 'short' } }]);
  });

  it('should keep the missing and unreadable items of the reference', async () => {
    assert.deepEqual(await issues('/q'), [{ type: 'missing', loc: ['query', 'count'], msg: 'Field required', input: null }]);
    assert.deepEqual(await issues('/q?count=abc'), [{ type: 'int_parsing', loc: ['query', 'count'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'abc' }]);
  });
});

describe('when a parameter leaves error_style out', () => {
  it('should word its errors as the reference does', async () => {
    assert.deepEqual(await one('plain=150'), { type: 'less_than_equal', loc: ['query', 'plain'], msg: 'Input should be less than or equal to 100', input: '150', ctx: { le: 100 } });
  });
});

describe('when error_style is not a style', () => {
  it('should refuse the route, naming the parameter and the value', () => {
    const bad = new App({ port: 0 });
    assert.throws(() => bad.get('/x', () => ({}), { parameters: { query: { q: { type: 'string', error_style: 'loud' } } } } as never), /parameters\.query\.q\.error_style must be one of "reference", "generic", got "loud"/);
  });
});
