import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import request from 'supertest';
import { buildSchema } from 'graphql';
import { HttpError } from '../http/errors.js';
import type { UploadFile } from '../http/multipart.js';
import { createGraphqlHttpHandler } from './http.js';

const schema = buildSchema('scalar Upload\ntype File { filename: String!, mimetype: String, size: Int!, text: String! }\ntype Query { ok: Boolean }\ntype Mutation { one(file: Upload!): File!, many(title: String!, files: [Upload!]!): [File!]!, tooBig(file: Upload!): File }');
const fileOf = (f: UploadFile) => ({ filename: f.filename, mimetype: f.contentType, size: f.size, text: f.asBytes().toString('utf8') });
const m = schema.getMutationType()!.getFields();
m.one!.resolve = (_s, { file }) => fileOf(file as UploadFile);
m.many!.resolve = (_s, { files }) => (files as UploadFile[]).map(fileOf);
m.tooBig!.resolve = (_s, { file }) => { throw new HttpError(400, 'File too large', { extensions: { code: 'FILE_TOO_LARGE', size: (file as UploadFile).size } }); };

function server(s = schema, maxBodySize?: number) {
  const handler = createGraphqlHttpHandler(s, maxBodySize === undefined ? {} : { maxBodySize });
  return createServer((req, res) => void handler(req, res));
}
const ONE = 'mutation ($file: Upload!) { one(file: $file) { filename mimetype size text } }';
const upload = (srv: ReturnType<typeof server>, operations: unknown, map: unknown, files: Array<[string, string, string]>) => {
  let r = request(srv).post('/graphql').field('operations', JSON.stringify(operations)).field('map', JSON.stringify(map));
  for (const [name, filename, content] of files) r = r.attach(name, Buffer.from(content), { filename, contentType: 'text/plain' });
  return r;
};

describe('when a schema declares scalar Upload', () => {
  it('should give a resolver each file of a GraphQL multipart request', async () => {
    const res = await upload(server(), { query: ONE, variables: { file: null } }, { 0: ['variables.file'] }, [['0', 'a.txt', 'hello']]);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { data: { one: { filename: 'a.txt', mimetype: 'text/plain', size: 5, text: 'hello' } } });
  });

  it('should place files inside lists', async () => {
    const res = await upload(server(), { query: 'mutation ($t: String!, $f: [Upload!]!) { many(title: $t, files: $f) { filename text } }', variables: { t: 'x', f: [null, null] } },
      { a: ['variables.f.0'], b: ['variables.f.1'] }, [['a', '1.txt', 'one'], ['b', '2.txt', 'two']]);
    assert.deepEqual(res.body, { data: { many: [{ filename: '1.txt', text: 'one' }, { filename: '2.txt', text: 'two' }] } });
  });

  it('should keep the code an application error names in extensions', async () => {
    const res = await upload(server(), { query: 'mutation ($file: Upload!) { tooBig(file: $file) { size } }', variables: { file: null } }, { 0: ['variables.file'] }, [['0', 'a.txt', 'hello']]);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.errors[0].extensions, { code: 'FILE_TOO_LARGE', size: 5 });
  });

  it('should refuse a malformed multipart request with 400, one fault at a time', async () => {
    const cases: Array<[unknown, unknown, Array<[string, string, string]>, RegExp]> = [
      [{ query: ONE, variables: { file: null } }, { 0: ['variables.file'] }, [], /file "0" named by the map is missing/],
      [{ query: ONE, variables: { file: null } }, { 0: ['query'] }, [['0', 'a', 'x']], /must point into variables/],
      [{ query: ONE, variables: { file: null } }, { 0: ['variables.__proto__.x'] }, [['0', 'a', 'x']], /must point into variables/],
      [{ query: ONE, variables: { file: null } }, { 0: ['variables.nope.deeper'] }, [['0', 'a', 'x']], /does not exist/],
      [[{ query: ONE }], { 0: ['0.variables.file'] }, [['0', 'a', 'x']], /one GraphQL request/],
      [{ query: ONE, variables: { file: null } }, ['variables.file'], [['0', 'a', 'x']], /map must be a JSON object/],
    ];
    for (const [ops, map, files, detail] of cases) {
      const res = await upload(server(), ops, map, files);
      assert.equal(res.status, 400, JSON.stringify({ ops, map }));
      assert.match(res.body.detail, detail);
      assert.match(res.headers['content-type']!, /problem\+json/);
    }
  });

  it('should read operations under a JSON body\'s rules (nesting depth, __proto__ keys)', async () => {
    let deep: unknown = null;
    for (let i = 0; i < 100; i++) deep = [deep];
    const nested = await upload(server(), { query: ONE, variables: { file: null, deep } }, { 0: ['variables.file'] }, [['0', 'a', 'x']]);
    assert.equal(nested.status, 400);
    assert.match(nested.body.detail, /nesting exceeds/);
    const poisoned = await request(server()).post('/graphql')
      .field('operations', `{"query": ${JSON.stringify(ONE)}, "variables": {"file": null, "__proto__": {"x": 1}}}`)
      .field('map', '{"0": ["variables.file"]}').attach('0', Buffer.from('x'), { filename: 'a', contentType: 'text/plain' });
    assert.equal(poisoned.status, 400);
  });

  it('should refuse more fields than operations and map (413)', async () => {
    const res = await upload(server(), { query: ONE, variables: { file: null } }, { 0: ['variables.file'] }, [['0', 'a', 'x']]).field('extra', '1');
    assert.equal(res.status, 413);
  });

  it('should keep the body cap', async () => {
    const res = await upload(server(schema, 200), { query: ONE, variables: { file: null } }, { 0: ['variables.file'] }, [['0', 'a', 'x'.repeat(500)]]);
    assert.equal(res.status, 413);
  });
});

describe('when a schema does not declare scalar Upload', () => {
  it('should answer a multipart body with 415', async () => {
    const plain = buildSchema('type Query { ok: Boolean }');
    const res = await upload(server(plain), { query: '{ ok }' }, {}, []);
    assert.equal(res.status, 415);
  });
});
