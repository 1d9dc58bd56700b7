import { createApp, handlerError, response } from 'keel';

const item = {
  type: 'object',
  required: ['id', 'name', 'price'],
  properties: { id: { type: 'integer' }, name: { type: 'string', minLength: 1 }, price: { type: 'number', exclusiveMinimum: 0 } },
  additionalProperties: false,
} as const;
const newItem = { ...item, required: ['name', 'price'], properties: { name: item.properties.name, price: item.properties.price } } as const;

const items = new Map([[1, { id: 1, name: 'Anchor', price: 120 }]]);

export const app = createApp(
  {
    port: Number(process.env.PORT ?? 8000),
    compression: { min_size: 512 }, // br / gzip by Accept-Encoding
    rate_limit: { per_second: 50, burst: 100 }, // per client IP
    request_timeout: 10, // seconds: 408 problem after that
  },
  (app) => {
    // Query values are converted to their schema's types: `limit` is a number, 10 when absent.
    app.get('/items', (data) => [...items.values()].slice(0, data.query.limit), {
      parameters: { query: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 } } },
    });
    // A `response` schema types what the handler returns.
    app.get('/items/{id:int}', (data) => items.get(data.pathParams.id) ?? handlerError(404, 'no such item'), { response: item });
    // `responses` by status: `response(body, { status: 201 })` is checked against the 201 schema at
    // compile time (an unlisted status does not compile), and /openapi.json lists 201, not 200.
    // Per-route records: a JWT (HS256 needs a secret of at least 32 bytes) whose `claims` schema
    // types `data.auth`, and a role.
    app.post('/items', (data) => {
      const created = { id: items.size + 1, ...data.body };
      items.set(created.id, created);
      // data.auth.sub is a string: the claims schema requires it, and the route cannot run without a JWT.
      app.logger.info({ by: data.auth.sub, id: created.id }, 'item created');
      return response(created, { status: 201, headers: { Location: `/items/${created.id}` } });
    }, {
      body: newItem,
      responses: { 201: item },
      jwt_auth: { secret: process.env.JWT_SECRET, claims: { type: 'object', required: ['sub'], properties: { sub: { type: 'string' } } } }, // e.g. `openssl rand -base64 64`
      authorization: { required_roles: ['admin'] },
    });
  },
);
