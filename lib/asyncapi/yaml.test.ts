/**
 * AsyncAPI documents are most often YAML: `/asyncapi/parse` and `/asyncapi/validate` read YAML bodies
 * (RFC 9512 `application/yaml` and the older names) as data only, bounded against alias bombs.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { stringify } from 'yaml';
import { asyncApiMounts } from './index.js';

const v3 = JSON.parse(readFileSync(new URL('../../test/fixtures/asyncapi/orders-v3.json', import.meta.url), 'utf8')) as Record<string, unknown>;

describe('when AsyncAPI requests arrive as YAML', () => {
  let url: string;
  let server: Server;
  before(async () => {
    const mounts = asyncApiMounts({ config: { enabled: true }, maxBodySize: 64 * 1024 });
    server = createServer((req, res) => {
      const m = mounts.find((x) => x.method === req.method && x.path === req.url);
      if (m) void m.handler(req, res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const parseJson = async () => (await request(url).post('/asyncapi/parse').send({ spec: v3 }).expect(200)).body;

  for (const type of ['application/yaml', 'text/yaml', 'application/x-yaml', 'application/vnd.aai.asyncapi+yaml; version=3.0.0']) {
    it(`should parse a bare document sent as ${type} exactly as its JSON form`, async () => {
      const res = await request(url).post('/asyncapi/parse').set('Content-Type', type).send(stringify(v3)).expect(200);
      assert.deepEqual(res.body, await parseJson());
    });
  }

  it('should parse a ParseRequest record written in YAML', async () => {
    const res = await request(url).post('/asyncapi/parse').set('Content-Type', 'application/yaml').send(stringify({ spec: v3 })).expect(200);
    assert.deepEqual(res.body, await parseJson());
  });

  it('should validate a payload sent as a YAML ValidateRequest', async () => {
    const json = await request(url).post('/asyncapi/validate').send({ spec: v3, channel: 'orders', message: 'orderPlaced', payload: {} }).expect(200);
    const yaml = await request(url).post('/asyncapi/validate').set('Content-Type', 'application/yaml').send(stringify({ spec: v3, channel: 'orders', message: 'orderPlaced', payload: {} })).expect(200);
    assert.deepEqual(yaml.body, json.body);
  });

  it('should answer malformed YAML with a 400 problem', async () => {
    const res = await request(url).post('/asyncapi/parse').set('Content-Type', 'application/yaml').send('asyncapi: [3.0.0\ninfo: {').expect(400).expect('Content-Type', /problem\+json/);
    assert.match(res.body.detail, /not valid YAML/);
  });

  it('should refuse duplicate keys with a 400 problem', async () => {
    await request(url).post('/asyncapi/parse').set('Content-Type', 'application/yaml').send('asyncapi: 3.0.0\nasyncapi: 2.6.0\n').expect(400);
  });

  it('should refuse an alias bomb ("billion laughs") with a 400 problem instead of expanding it', async () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      lines.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    lines.push('spec: *i');
    const res = await request(url).post('/asyncapi/parse').set('Content-Type', 'application/yaml').send(lines.join('\n')).expect(400);
    assert.match(res.body.detail, /alias/i);
  });

  it('should refuse language-specific tags with a 400 problem, never run them nor print a warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const res = await request(url).post('/asyncapi/parse').set('Content-Type', 'application/yaml').send('spec: !!js/function "function () { process.exit(1) }"\n');
      assert.equal(res.status, 400, res.text);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.match(res.body.detail, /not valid YAML: .*js\/function/);
    } finally {
      process.off('warning', onWarning);
    }
    // A client's body never reaches the server's stderr as a process warning.
    assert.deepEqual(warnings.map((w) => w.message), []);
  });

  it('should refuse __proto__ keys in YAML as in JSON bodies (400 problem)', async () => {
    const res = await request(url).post('/asyncapi/parse').set('Content-Type', 'application/yaml').send('spec:\n  asyncapi: 3.0.0\n  __proto__:\n    polluted: true\n');
    assert.equal(res.status, 400, res.text);
    assert.equal(res.headers['content-type'], 'application/problem+json');
  });

  it('should keep the document checks: a YAML document without info is a 422 problem', async () => {
    const res = await request(url).post('/asyncapi/parse').set('Content-Type', 'application/yaml').send('asyncapi: 3.0.0\n').expect(422);
    assert.match(res.body.detail, /info\.title/);
  });

  it('should answer 413 for a YAML body over the cap', async () => {
    await request(url).post('/asyncapi/parse').set('Content-Type', 'application/yaml').send(`asyncapi: 3.0.0\npad: ${'x'.repeat(70 * 1024)}\n`).expect(413);
  });
});
