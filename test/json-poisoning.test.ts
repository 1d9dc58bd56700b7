/**
 * Prototype-poisoning keys in JSON bodies (issue 13 item 8): refused with a 400 problem by default,
 * removed or kept with ServerConfig `on_proto_poisoning` / `on_constructor_poisoning` (secure-json-parse's
 * `protoAction` / `constructorAction`), per route too; JSON-RPC and GraphQL bodies included.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { pino } from 'pino';
import { App } from '../lib/app/app.js';
import { ConfigError } from '../lib/http/errors.js';
import { ServerConfig } from '../lib/records/server.js';

const silent = { logger: pino({ level: 'silent' }) };

/** Each key form, as raw JSON text. */
const POISONED: [string, string][] = [
  ['a top-level __proto__', '{"__proto__": {"admin": true}, "name": "x"}'],
  ['a nested __proto__', '{"user": {"profile": {"__proto__": {"admin": true}}}}'],
  ['a __proto__ inside an array', '{"items": [1, {"__proto__": {"admin": true}}]}'],
  ['a __proto__ in a top-level array', '[{"__proto__": {"admin": true}}]'],
  ['constructor.prototype', '{"constructor": {"prototype": {"admin": true}}}'],
  ['a nested constructor.prototype', '{"a": [{"constructor": {"prototype": {"admin": true}}}]}'],
  ['an escaped "\\u005f_proto__"', '{"\\u005f_proto__": {"admin": true}}'],
  ['a fully escaped __proto__', '{"\\u005f\\u005f\\u0070\\u0072\\u006f\\u0074\\u006f\\u005f\\u005f": {"admin": true}}'],
  ['an escaped constructor', '{"\\u0063onstructor": {"prototype": {"admin": true}}}'],
  ['a __proto__ with spaces before the colon', '{"__proto__"   : {"admin": true}}'],
];

function appWith(config: Record<string, unknown> = {}, route: Record<string, unknown> = {}) {
  const app = new App({ port: 0, ...config }, silent);
  app.post('/echo', (d) => ({ own: d.body !== null && typeof d.body === 'object' ? Object.keys(d.body as object) : [], body: d.body }), route);
  app.post('/schema', (d) => d.body, { ...route, body: { type: 'object' } });
  return app.intoRouter();
}

const post = (router: ReturnType<typeof appWith>, path: string, text: string) =>
  request(router).post(path).set('Content-Type', 'application/json').send(text);

describe('when a JSON body carries a prototype-poisoning key (defaults)', () => {
  const router = appWith();

  for (const [label, text] of POISONED) {
    it(`should refuse ${label} with a 400 forbidden-json-key problem`, async () => {
      for (const path of ['/echo', '/schema']) {
        const res = await post(router, path, text);
        assert.equal(res.status, 400, path);
        assert.equal(res.headers['content-type'], 'application/problem+json');
        assert.equal(res.body.type, 'https://keel.dev/errors/forbidden-json-key');
        assert.equal(res.body.title, 'Forbidden JSON Key');
      }
      assert.equal(({} as Record<string, unknown>).admin, undefined);
    });
  }

  it('should accept ordinary keys named constructor or prototype, and the words inside strings', async () => {
    const text = '{"constructor": "Car", "prototype": {"admin": true}, "note": "__proto__ and constructor are words", "c": {"constructor": 1}}';
    const res = await post(router, '/echo', text).expect(200);
    assert.deepEqual(res.body.own, ['constructor', 'prototype', 'note', 'c']);
  });

  it('should still call malformed JSON malformed', async () => {
    const res = await post(router, '/echo', '{"__proto__": ').expect(400);
    assert.equal(res.body.type, 'https://keel.dev/errors/malformed-json');
  });
});

describe('when on_proto_poisoning / on_constructor_poisoning is "remove"', () => {
  const router = appWith({ on_proto_poisoning: 'remove', on_constructor_poisoning: 'remove' });

  it('should hand the body to the handler without the keys', async () => {
    const res = await post(router, '/echo', '{"__proto__": {"admin": true}, "name": "x", "n": {"constructor": {"prototype": {}}, "k": 1}}').expect(200);
    assert.deepEqual(res.body.body, { name: 'x', n: { k: 1 } });
  });
});

describe('when on_proto_poisoning is "ignore"', () => {
  const router = appWith({ on_proto_poisoning: 'ignore' });

  it('should hand the body to the handler with its own __proto__ key (JSON.parse semantics)', async () => {
    const res = await post(router, '/echo', '{"__proto__": {"admin": true}}').expect(200);
    assert.deepEqual(res.body.own, ['__proto__']);
  });

  it('should still refuse constructor.prototype (its own setting)', async () => {
    await post(router, '/echo', '{"constructor": {"prototype": {}}}').expect(400);
  });
});

describe('when a route overrides the server setting', () => {
  it('should use the route value (camelCase or snake_case)', async () => {
    const relaxed = appWith({}, { onProtoPoisoning: 'remove' });
    const res = await post(relaxed, '/echo', '{"__proto__": {}, "a": 1}').expect(200);
    assert.deepEqual(res.body.body, { a: 1 });
    const strict = appWith({ on_proto_poisoning: 'ignore' }, { on_proto_poisoning: 'error' });
    await post(strict, '/echo', '{"__proto__": {}}').expect(400);
  });
});

describe('when the setting is misspelt', () => {
  it('should throw a ConfigError naming the key and the accepted values', () => {
    assert.throws(() => ServerConfig.parse({ on_proto_poisoning: 'strip' }), (e: unknown) => e instanceof ConfigError && e.key === 'on_proto_poisoning' && /error|remove|ignore/.test(e.message));
    assert.throws(() => new App({ port: 0 }).post('/x', () => 1, { on_constructor_poisoning: 'drop' } as never), /on_constructor_poisoning/);
  });

  it('should default both to "error"', () => {
    const d = ServerConfig.defaults();
    assert.equal(d.on_proto_poisoning, 'error');
    assert.equal(d.on_constructor_poisoning, 'error');
  });
});

describe('when a JSON-RPC body carries a poisoning key', () => {
  const app = new App({ port: 0 }, silent).rpc('keys', (p) => Object.keys(p as object));
  let router: ReturnType<App['intoRouter']>;
  before(async () => {
    await app.ready();
    router = app.intoRouter();
  });

  it('should answer -32600 Invalid Request and not call the method', async () => {
    for (const text of ['{"jsonrpc": "2.0", "method": "keys", "params": {"__proto__": {"admin": true}}, "id": 1}', '[{"jsonrpc": "2.0", "method": "keys", "params": {"constructor": {"prototype": {}}}, "id": 1}]']) {
      const res = await post(router, '/rpc', text).expect(200);
      assert.equal(res.body.error.code, -32600);
      assert.match(res.body.error.data.reason, /__proto__/);
    }
  });

  it('should call the method with the key removed when the server says "remove"', async () => {
    const ownApp = new App({ port: 0, on_proto_poisoning: 'remove' }, silent).rpc('keys', (p) => Object.keys(p as object));
    await ownApp.ready();
    const own = ownApp.intoRouter();
    const res = await post(own, '/rpc', '{"jsonrpc": "2.0", "method": "keys", "params": {"__proto__": {}, "a": 1}, "id": 1}').expect(200);
    assert.deepEqual(res.body.result, ['a']);
  });
});

describe('when a GraphQL body carries a poisoning key', () => {
  const app = new App({ port: 0 }, silent);
  app.registerGraphqlSdlRoute('/graphql', 'POST', 'type Query { a: Int }', { a: 1 }, { introspection_enabled: true });
  let router: ReturnType<App['intoRouter']>;
  before(async () => {
    await app.ready();
    router = app.intoRouter();
  });

  it('should refuse it with a 400 problem', async () => {
    const res = await post(router, '/graphql', '{"query": "{ a }", "variables": {"__proto__": {"admin": true}}}');
    assert.equal(res.status, 400);
    assert.equal(res.body.type, 'https://keel.dev/errors/forbidden-json-key');
  });

  it('should still answer a clean query', async () => {
    const res = await post(router, '/graphql', '{"query": "{ a }"}').expect(200);
    assert.deepEqual(res.body, { data: { a: 1 } });
  });

  it('should leave malformed JSON to graphql-http', async () => {
    const res = await post(router, '/graphql', '{"query": ');
    assert.equal(res.status, 400);
    assert.notEqual(res.body.type, 'https://keel.dev/errors/forbidden-json-key');
  });
});
