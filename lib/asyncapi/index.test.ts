import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { ConfigError } from '../http/errors.js';
import type { MountSpec } from '../openapi/host.js';
import { AsyncApiDocumentError, asyncApiMounts, parseAsyncApi, PayloadValidator, type AsyncApiHandlersOptions } from './index.js';

const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(new URL(`../../test/fixtures/asyncapi/${name}`, import.meta.url), 'utf8'));
const v2 = fixture('chat-v2.json');
const v3 = fixture('orders-v3.json');

async function serve(options: AsyncApiHandlersOptions): Promise<{ url: string; close: () => Promise<void> }> {
  const mounts: MountSpec[] = asyncApiMounts(options);
  const server: Server = createServer((req, res) => {
    const m = mounts.find((x) => x.method === req.method && x.path === req.url);
    if (m) void m.handler(req, res);
    else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('AsyncAPI endpoints', () => {
  let url: string;
  let close: () => Promise<void>;
  before(async () => ({ url, close } = await serve({ config: { enabled: true, spec: v3 }, maxBodySize: 64 * 1024 })));
  after(() => close());

  describe('when GET /asyncapi.json is requested', () => {
    it('should serve the configured document as JSON', async () => {
      const res = await request(url).get('/asyncapi.json').expect(200).expect('Content-Type', /application\/json/);
      assert.deepEqual(res.body, v3);
    });
  });

  describe('when POST /asyncapi/parse receives a 3.0 document', () => {
    it('should report version, title, channels, operations and resolved messages', async () => {
      const res = await request(url).post('/asyncapi/parse').send({ spec: v3 }).expect(200);
      const r = res.body;
      assert.equal(r.spec_version, '3.0.0');
      assert.equal(r.title, 'keel orders (3.0)');
      assert.equal(r.api_version, '3.2.1');
      assert.deepEqual(r.channels.map((c: { name: string; address: string }) => [c.name, c.address]), [
        ['orders', 'orders.{region}'],
        ['categories', 'catalog/categories'],
        ['heartbeat', 'heartbeat'],
      ]);
      assert.deepEqual(r.channels[0].messages, ['orderPlaced', 'orderCancelled']);
      assert.deepEqual(r.channels[0].bindings, { kafka: { topic: 'orders', partitions: 3 } });
      assert.equal(r.channels[1].bindings, null);
      assert.deepEqual(r.operations, [
        { name: 'placeOrder', action: 'receive', channel: 'orders' },
        { name: 'publishCancellation', action: 'send', channel: 'orders' },
        { name: 'publishCategories', action: 'send', channel: 'categories' },
      ]);
      const placed = r.messages.find((m: { name: string }) => m.name === 'orderPlaced');
      assert.deepEqual(placed.schema.properties.total.required, ['amount', 'currency'], 'the Money $ref is resolved');
      const cancelled = r.messages.find((m: { name: string }) => m.name === 'orderCancelled');
      assert.deepEqual(cancelled.schema.required, ['orderId', 'reason'], 'a multi-format payload yields its schema');
      const tree = r.messages.find((m: { name: string }) => m.name === 'categoryTree');
      assert.deepEqual(tree.schema.properties.children.items, { $ref: '#/components/schemas/Category' }, 'a recursive $ref is kept');
      assert.equal(r.messages.find((m: { name: string }) => m.name === 'ping').schema, null);
      assert.ok(r.messages.some((m: { name: string }) => m.name === 'Orphan'), 'unreferenced component messages are listed');
    });
  });

  describe('when POST /asyncapi/parse receives a 2.x document', () => {
    it('should map publish to receive and subscribe to send', async () => {
      const r = (await request(url).post('/asyncapi/parse').send({ spec: v2 }).expect(200)).body;
      assert.equal(r.spec_version, '2.6.0');
      assert.deepEqual(r.operations.slice(0, 3), [
        { name: 'sendChatMessage', action: 'receive', channel: 'rooms/{roomId}/messages' },
        { name: 'receiveRoomEvent', action: 'send', channel: 'rooms/{roomId}/messages' },
        { name: 'presence.subscribe', action: 'send', channel: 'presence' },
      ]);
      assert.deepEqual(r.channels[0].messages, ['chatMessage', 'UserJoined']);
      assert.equal(r.channels[0].address, 'rooms/{roomId}/messages');
      assert.deepEqual(r.channels[0].bindings.ws.query, { type: 'object', properties: { token: { type: 'string' } } });
      assert.deepEqual(r.channels[1].messages, ['presenceUpdate']);
    });
  });

  describe('when POST /asyncapi/validate is called', () => {
    const validate = (body: unknown) => request(url).post('/asyncapi/validate').send(body as object).expect(200);
    const order = { orderId: '550e8400-e29b-41d4-a716-446655440000', email: 'a@example.com', total: { amount: 12.5, currency: 'EUR' } };
    it('should accept a payload that matches', async () => {
      assert.deepEqual((await validate({ spec: v3, channel: 'orders', message: 'orderPlaced', payload: order })).body, { valid: true, errors: [] });
    });
    it('should list every violation of a payload that does not match', async () => {
      const r = (await validate({ spec: v3, channel: 'orders', message: 'orderPlaced', payload: { ...order, orderId: 'x', total: { amount: 0, currency: 'eur' } } })).body;
      assert.equal(r.valid, false);
      assert.deepEqual(r.errors, ['/orderId must match format "uuid"', '/total/amount must be > 0', '/total/currency must match pattern "^[A-Z]{3}$"']);
    });
    it('should follow recursive schemas', async () => {
      const r = (await validate({ spec: v3, channel: 'categories', message: 'categoryTree', payload: { name: 'a', children: [{ name: 'b', children: [{ name: 3 }] }] } })).body;
      assert.deepEqual(r, { valid: false, errors: ['/children/0/children/0/name must be string'] });
    });
    it('should find a message by its component key or declared name too', async () => {
      assert.equal((await validate({ spec: v3, channel: 'orders', message: 'OrderPlaced', payload: order })).body.valid, true);
      assert.equal((await validate({ spec: v3, channel: 'orders', message: 'orderPlacedEvent', payload: {} })).body.valid, false);
    });
    it('should validate 2.x messages, including oneOf members', async () => {
      const ok = await validate({ spec: v2, channel: 'rooms/{roomId}/messages', message: 'userJoined', payload: { userId: '550e8400-e29b-41d4-a716-446655440000' } });
      assert.equal(ok.body.valid, true);
      const bad = await validate({ spec: v2, channel: 'rooms/{roomId}/messages', message: 'chatMessage', payload: { text: 'hi', sentAt: 'yesterday', extra: 1 } });
      assert.deepEqual(bad.body.errors, ['/ must NOT have additional properties (extra)', '/sentAt must match format "date-time"']);
    });
    it('should accept null as a payload to check', async () => {
      const r = (await validate({ spec: v2, channel: 'presence', message: 'presenceUpdate', payload: null })).body;
      assert.deepEqual(r, { valid: false, errors: ['/ must be object'] });
    });
    it('should accept anything for a message without a payload schema', async () => {
      assert.equal((await validate({ spec: v3, channel: 'heartbeat', message: 'ping', payload: 'whatever' })).body.valid, true);
    });
    it('should answer valid:false naming the known channels for an unknown channel', async () => {
      const r = (await validate({ spec: v3, channel: 'nope', message: 'orderPlaced', payload: {} })).body;
      assert.equal(r.valid, false);
      assert.match(r.errors[0], /Channel "nope" is not defined.*"orders", "categories", "heartbeat"/);
    });
    it('should answer valid:false naming the channel messages for an unknown message', async () => {
      const r = (await validate({ spec: v3, channel: 'orders', message: 'categoryTree', payload: {} })).body;
      assert.equal(r.valid, false);
      assert.match(r.errors[0], /Message "categoryTree" is not defined on channel "orders".*"orderPlaced", "orderCancelled"/);
    });
    it('should answer valid:false for a payload format keel cannot check', async () => {
      const r = (await validate({ spec: v2, channel: 'avro', message: 'avroEvent', payload: {} })).body;
      assert.equal(r.valid, false);
      assert.match(r.errors[0], /schemaFormat .*avro/);
    });
  });

  describe('when a request is malformed', () => {
    const cases: Array<[string, string, string | object, number, RegExp]> = [
      ['broken JSON to parse', '/asyncapi/parse', '{"spec": ', 400, /not valid JSON/],
      ['broken JSON to validate', '/asyncapi/validate', '{', 400, /not valid JSON/],
      ['a __proto__ key (prototype poisoning)', '/asyncapi/parse', '{"spec": {"__proto__": {"x": 1}}}', 400, /forbidden "__proto__"/],
      ['a constructor.prototype key', '/asyncapi/validate', '{"spec": {}, "payload": {"constructor": {"prototype": {}}}}', 400, /forbidden/],
      ['no spec', '/asyncapi/parse', {}, 422, /ParseRequest/],
      ['an unknown key', '/asyncapi/parse', { spec: v3, extra: 1 }, 422, /extra/],
      ['a spec that is not an object', '/asyncapi/parse', { spec: 'asyncapi: 3.0.0' }, 422, /JSON object/],
      ['an unsupported version', '/asyncapi/parse', { spec: { ...v3, asyncapi: '1.2.0' } }, 422, /not supported/],
      ['a document without info', '/asyncapi/parse', { spec: { asyncapi: '3.0.0' } }, 422, /info\.title/],
      ['a dangling $ref', '/asyncapi/parse', { spec: { ...v3, channels: { a: { $ref: '#/components/channels/missing' } } } }, 422, /points at nothing/],
      ['an external $ref', '/asyncapi/parse', { spec: { ...v3, channels: { a: { $ref: 'other.yaml#/x' } } } }, 422, /only local/],
      ['an operation with a bad action', '/asyncapi/parse', { spec: { ...v3, operations: { o: { action: 'publish', channel: { $ref: '#/channels/orders' } } } } }, 422, /action/],
      ['validate without a channel', '/asyncapi/validate', { spec: v3, message: 'm', payload: 1 }, 422, /channel/],
      ['validate without a payload', '/asyncapi/validate', { spec: v3, channel: 'orders', message: 'orderPlaced' }, 422, /payload/],
      ['a payload schema that does not compile', '/asyncapi/validate', { spec: { ...v3, components: { ...(v3.components as object), schemas: { ...((v3.components as { schemas: object }).schemas), Order: { type: 'bogus' } } } }, channel: 'orders', message: 'orderPlaced', payload: {} }, 422, /does not compile/],
    ];
    for (const [what, path, body, status, detail] of cases) {
      it(`should answer ${status} problem+json for ${what}`, async () => {
        const res = await request(url).post(path).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body)).expect(status).expect('Content-Type', /application\/problem\+json/);
        assert.equal(res.body.status, status);
        assert.match(res.body.detail, detail);
      });
    }
    it('should answer 415 naming the accepted types for a body neither JSON nor YAML', async () => {
      const res = await request(url).post('/asyncapi/parse').set('Content-Type', 'text/plain').send('asyncapi: 3.0.0').expect(415).expect('Content-Type', /problem\+json/);
      assert.match(res.headers['accept-post'] ?? '', /application\/yaml/);
    });
    it('should answer 413 for a body over the cap', async () => {
      await request(url).post('/asyncapi/parse').send({ spec: v3, pad: 'x'.repeat(70 * 1024) }).expect(413);
    });
  });
});

describe('when AsyncAPI is enabled without a document', () => {
  it('should answer GET /asyncapi.json with a 404 problem and still parse', async () => {
    const { url, close } = await serve({ config: { enabled: true } });
    try {
      const res = await request(url).get('/asyncapi.json').expect(404).expect('Content-Type', /problem\+json/);
      assert.match(res.body.detail, /No AsyncAPI document/);
      await request(url).post('/asyncapi/parse').send({ spec: v2 }).expect(200);
    } finally {
      await close();
    }
  });
});

describe('when AsyncAPI is disabled', () => {
  it('should mount nothing for enabled:false', () => assert.deepEqual(asyncApiMounts({ config: { enabled: false, spec: v3 } }), []));
  it('should mount nothing for a null config', () => assert.deepEqual(asyncApiMounts({ config: null }), []));
});

describe('when the configured document cannot be read', () => {
  for (const [what, spec] of [
    ['a string', 'asyncapi: 3.0.0'],
    ['version 1.x', { asyncapi: '1.0.0', info: { title: 't', version: '1' } }],
    ['a dangling $ref', { asyncapi: '3.0.0', info: { title: 't', version: '1' }, channels: { a: { $ref: '#/nope' } } }],
  ] as const) {
    it(`should throw ConfigError at start-up for ${what}`, () => {
      assert.throws(() => asyncApiMounts({ config: { enabled: true, spec } }), (err: unknown) => err instanceof ConfigError && err.key === 'spec');
    });
  }
  it('should throw ConfigError for an unknown AsyncApiConfig key', () => {
    assert.throws(() => asyncApiMounts({ config: { enabled: true, specs: {} } as never }), ConfigError);
  });
});

describe('when a document refers to itself', () => {
  it('should report a circular $ref chain instead of looping', () => {
    const spec = { asyncapi: '3.0.0', info: { title: 't', version: '1' }, channels: { a: { $ref: '#/components/channels/b' } }, components: { channels: { b: { $ref: '#/channels/a' } } } };
    assert.throws(() => parseAsyncApi(spec), AsyncApiDocumentError);
  });
  it('should refuse a document that expands exponentially', () => {
    const schemas: Record<string, unknown> = { s0: { type: 'string' } };
    for (let i = 1; i <= 30; i++) schemas[`s${i}`] = { type: 'array', items: [{ $ref: `#/components/schemas/s${i - 1}` }, { $ref: `#/components/schemas/s${i - 1}` }] };
    const spec = { asyncapi: '3.0.0', info: { title: 't', version: '1' }, channels: { c: { messages: { m: { payload: { $ref: '#/components/schemas/s30' } } } } }, components: { schemas } };
    assert.throws(() => parseAsyncApi(spec), /expands to more than/);
  });
});

describe('when many documents are validated', () => {
  it('should keep working past the cache size, recompiling evicted documents', () => {
    const validator = new PayloadValidator({ cacheSize: 2 });
    for (let i = 0; i < 5; i++) {
      const spec = { ...v3, info: { title: `t${i}`, version: '1' } };
      assert.equal(validator.validate(spec, 'heartbeat', 'ping', i).valid, true);
      assert.equal(validator.validate(spec, 'categories', 'categoryTree', { name: i }).valid, false);
    }
  });
  it('should refuse a cache size below 1', () => assert.throws(() => new PayloadValidator({ cacheSize: 0 }), RangeError));
});
