import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { pino } from 'pino';
import request from 'supertest';
import { App, ConfigError, type ServerHandle } from '../index.js';
import { openApiMounts } from './index.js';

const silent = { logger: pino({ level: 'silent' }) };
const SECRET = 'openapi-test-secret-openapi-test-secret';
type Json = Record<string, any>;

async function assertValidOpenApi(doc: unknown): Promise<void> {
  const result = await new Validator().validate(doc as Parameters<Validator["validate"]>[0]);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
}

function petsApp(config: Json = {}): App {
  const app = new App({ port: 0, ...config }, silent);
  app.get('/pets', () => [], {
    parameters: { query: { limit: { type: 'integer', minimum: 1, required: true }, tags: { type: 'array', items: { type: 'string' }, separator: ',', optional: true } } },
    response: { type: 'array', items: { $ref: '#/definitions/Pet' }, definitions: { Pet: { type: 'object', properties: { name: { type: 'string', nullable: true } } } } },
    openapi: { operationId: 'listPets', summary: 'List pets', tags: ['pets'] },
  });
  app.post('/pets', () => ({}), {
    body: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } },
    openapi: { tags: ['pets'], description: 'Create a pet', responses: { '201': { description: 'Created', schema: { type: 'object' } } } },
    authorization: { required_roles: ['admin'] },
  });
  app.get('/pets/{id:int}', () => ({}), { openapi: { deprecated: true, tags: ['pets', 'legacy'] }, jwt_auth: { enabled: false } });
  app.delete('/owners/:ownerId/pets/:petId', () => null, { parameters: { headers: { 'X-Trace': { type: 'string', optional: true }, Authorization: { type: 'string', optional: true } }, cookies: { session: { type: 'string', required: true } } } });
  app.get('/files/{rest:path}', () => null, { api_key_auth: { header_name: 'X-Other-Key', keys: ['k2'] } });
  return app;
}

describe('OpenAPI generation', () => {
  const app = petsApp({
    jwt_auth: { secret: SECRET },
    api_key_auth: { keys: ['k1'] },
    openapi: {
      enabled: true,
      title: 'Pets',
      version: '2.0.0',
      description: 'A *pet* store',
      contact: { name: 'Team', email: 'team@example.com' },
      license: { name: 'MIT' },
      servers: [{ url: 'https://api.example.com', description: 'production' }],
    },
  });
  const mounts = openApiMounts({ config: app.config.openapi, routes: app.routes(), server: app.config });
  let doc: Json;
  before(async () => {
    const jsonMount = mounts.find((m) => m.path === '/openapi.json')!;
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve) => {
      const res = { statusCode: 0, setHeader() {}, end: (b: string) => (chunks.push(Buffer.from(b)), resolve()), req: { method: 'GET' } };
      void jsonMount.handler({} as never, res as never);
    });
    doc = JSON.parse(Buffer.concat(chunks).toString());
  });

  it('should produce a valid OpenAPI 3.1 document', async () => {
    assert.equal(doc.openapi, '3.1.0');
    await assertValidOpenApi(doc);
  });
  it('should fill info and servers from OpenApiConfig', () => {
    assert.deepEqual(doc.info, { title: 'Pets', version: '2.0.0', description: 'A *pet* store', contact: { name: 'Team', email: 'team@example.com' }, license: { name: 'MIT', identifier: 'MIT' } });
    assert.deepEqual(doc.servers, [{ url: 'https://api.example.com', description: 'production' }]);
  });
  it('should convert path templates to {name}', () => {
    assert.deepEqual(Object.keys(doc.paths), ['/pets', '/pets/{id}', '/owners/{ownerId}/pets/{petId}', '/files/{rest}']);
  });
  it('should describe parameters with their schema, location and requiredness', () => {
    const list = doc.paths['/pets'].get;
    assert.deepEqual(list.parameters, [
      { name: 'limit', in: 'query', required: true, schema: { type: 'integer', minimum: 1 } },
      { name: 'tags', in: 'query', required: false, style: 'form', explode: false, schema: { type: 'array', items: { type: 'string' } } },
    ]);
    const id = doc.paths['/pets/{id}'].get.parameters[0];
    assert.equal(id.in, 'path');
    assert.equal(id.required, true);
    assert.equal(id.schema.type, 'integer');
    const del = doc.paths['/owners/{ownerId}/pets/{petId}'].delete.parameters;
    assert.deepEqual(del.map((p: Json) => [p.name, p.in, p.required]), [['X-Trace', 'header', false], ['session', 'cookie', true], ['ownerId', 'path', true], ['petId', 'path', true]]);
  });
  it('should describe the request body and hoist draft-07 definitions into components', () => {
    const create = doc.paths['/pets'].post;
    assert.deepEqual(create.requestBody, { required: true, content: { 'application/json': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } } } } });
    assert.deepEqual(doc.paths['/pets'].get.responses['200'].content['application/json'].schema, { type: 'array', items: { $ref: '#/components/schemas/Pet' } });
    assert.deepEqual(doc.components.schemas.Pet, { type: 'object', properties: { name: { type: ['string', 'null'] } } });
  });
  it('should document 422 problem responses with the shared ProblemDetails schema', () => {
    const r = doc.paths['/pets'].post.responses;
    assert.deepEqual(r['422'].content['application/problem+json'].schema, { $ref: '#/components/schemas/ProblemDetails' });
    assert.deepEqual(doc.components.schemas.ProblemDetails.required, ['type', 'title', 'status']);
    assert.equal(r['201'].description, 'Created');
    assert.equal(r['200'], undefined);
    assert.ok(r['403'], 'authorization documents 403');
  });
  it('should use given operation ids and generate the others uniquely', () => {
    const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId));
    assert.deepEqual(ids, ['listPets', 'postPets', 'getPetsId', 'deleteOwnersOwnerIdPetsPetId', 'getFilesRest']);
  });
  it('should carry tags and deprecation', () => {
    assert.deepEqual(doc.tags, [{ name: 'pets' }, { name: 'legacy' }]);
    assert.equal(doc.paths['/pets/{id}'].get.deprecated, true);
    assert.equal(doc.paths['/pets'].get.deprecated, undefined);
  });
  it('should detect security schemes from the JWT and API-key config', () => {
    assert.deepEqual(doc.components.securitySchemes, {
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      apiKeyAuth_X_Other_Key: { type: 'apiKey', in: 'header', name: 'X-Other-Key' },
    });
  });
  it('should state each operation security requirement, honouring per-route overrides', () => {
    assert.deepEqual(doc.paths['/pets'].get.security, [{ bearerAuth: [], apiKeyAuth: [] }]);
    assert.deepEqual(doc.paths['/pets/{id}'].get.security, [{ apiKeyAuth: [] }], 'jwt_auth disabled on the route');
    assert.deepEqual(doc.paths['/files/{rest}'].get.security, [{ bearerAuth: [], apiKeyAuth_X_Other_Key: [] }]);
    assert.ok(doc.paths['/pets'].get.responses['401']);
  });
});

describe('when security_schemes are configured', () => {
  it('should use them instead of detected ones', async () => {
    const app = petsApp({
      jwt_auth: { secret: SECRET },
      openapi: { enabled: true, security_schemes: { jwt: { type: 'http', scheme: 'bearer', bearer_format: 'JWT' }, key: { type: 'apiKey', location: 'header', name: 'X-Other-Key' } } },
    });
    const { handler } = openApiMounts({ config: app.config.openapi, routes: app.routes(), server: app.config })[0]!;
    let body = '';
    handler({} as never, { setHeader() {}, end: (b: string) => void (body = b), req: { method: 'GET' } } as never);
    const doc = JSON.parse(body);
    await assertValidOpenApi(doc);
    assert.deepEqual(Object.keys(doc.components.securitySchemes), ['jwt', 'key']);
    assert.deepEqual(doc.paths['/pets'].get.security, [{ jwt: [] }]);
    assert.deepEqual(doc.paths['/files/{rest}'].get.security, [{ jwt: [], key: [] }]);
    assert.equal(doc.paths['/pets/{id}'].get.security, undefined, 'no requirement left');
  });
});

describe('when the OpenAPI config cannot produce a valid document', () => {
  it('should throw ConfigError for a duplicate operationId', () => {
    const app = new App({}, silent);
    app.get('/a', () => null, { openapi: { operationId: 'same' } });
    app.get('/b', () => null, { openapi: { operationId: 'same' } });
    assert.throws(() => openApiMounts({ config: { enabled: true }, routes: app.routes() }), (e: unknown) => e instanceof ConfigError && /same/.test(e.message));
  });
  for (const [what, config] of [
    ['a path without a slash', { enabled: true, openapi_json_path: 'openapi.json' }],
    ['an unknown key', { enabled: true, swagger_path: '/x' }],
    ['a security scheme of unknown type', { enabled: true, security_schemes: { x: { type: 'oauth2' } } }],
    ['an apiKey scheme in the body', { enabled: true, security_schemes: { x: { type: 'apiKey', location: 'body', name: 'k' } } }],
    ['a license without a name', { enabled: true, license: { url: 'https://x' } }],
  ] as const) {
    it(`should throw ConfigError for ${what}`, () => assert.throws(() => openApiMounts({ config: config as never, routes: [] }), ConfigError));
  }
  it('should mount nothing when disabled', () => assert.deepEqual(openApiMounts({ config: { enabled: false }, routes: [] }), []));
});

describe('when a documentation page is turned off with null', () => {
  const paths = (config: Json) => openApiMounts({ config: { enabled: true, ...config }, routes: [] }).map((m) => m.path);
  it('should serve the document and Redoc only, with swagger_ui_path: null', () => {
    const p = paths({ swagger_ui_path: null });
    assert.ok(p.includes('/openapi.json') && p.includes('/redoc'));
    assert.deepEqual(p.filter((x) => x.startsWith('/docs')), []);
  });
  it('should serve the document and Swagger UI only, with redoc_path: null', () => {
    const p = paths({ redoc_path: null });
    assert.ok(p.includes('/openapi.json') && p.includes('/docs'));
    assert.deepEqual(p.filter((x) => x.startsWith('/redoc')), []);
  });
  it('should serve the document alone with both null', () => assert.deepEqual(paths({ swagger_ui_path: null, redoc_path: null }), ['/openapi.json']));
  it('should answer 404 at a page that is off, in a running App', async () => {
    const app = petsApp({ openapi: { enabled: true, swagger_ui_path: null, redoc_path: null } });
    const handle = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    try {
      await request(handle.url).get('/openapi.json').expect(200);
      await request(handle.url).get('/docs').expect(404);
      await request(handle.url).get('/redoc').expect(404);
    } finally {
      await handle.close();
    }
  });
});

describe('OpenAPI in a running App', () => {
  let handle: ServerHandle;
  before(async () => {
    const app = petsApp({ jwt_auth: { secret: SECRET }, openapi: { enabled: true, title: 'Pets <API>' } });
    handle = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  });
  after(() => handle.close());

  it('should serve the document without credentials even when the API requires a JWT', async () => {
    const res = await request(handle.url).get('/openapi.json').expect(200).expect('Content-Type', /application\/json/);
    assert.equal(res.body.info.title, 'Pets <API>');
    await request(handle.url).get('/pets?limit=1').expect(401);
  });
  for (const page of ['/docs', '/redoc']) {
    it(`should serve ${page} as HTML with a same-origin-only CSP and no external URL`, async () => {
      const res = await request(handle.url).get(page).expect(200).expect('Content-Type', /text\/html/);
      assert.doesNotMatch(res.text, /(src|href)="https?:/);
      assert.doesNotMatch(res.text, /Pets <API>/, 'the title is escaped');
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /script-src 'self'/);
      assert.doesNotMatch(csp, /unpkg|jsdelivr|redoc\.ly/);
    });
  }
  const assets: Array<[string, RegExp]> = [
    ['/docs/swagger-ui.css', /text\/css/],
    ['/docs/swagger-ui-bundle.js', /javascript/],
    ['/docs/swagger-ui-standalone-preset.js', /javascript/],
    ['/docs/swagger-ui-init.js', /javascript/],
    ['/docs/favicon-32x32.png', /image\/png/],
    ['/redoc/redoc.standalone.js', /javascript/],
    ['/redoc/redoc-init.js', /javascript/],
  ];
  for (const [path, type] of assets) {
    it(`should serve ${path} locally`, async () => {
      const res = await request(handle.url).get(path).buffer(true).parse((r, cb) => { let n = 0; r.on('data', (c: Buffer) => (n += c.length)); r.on('end', () => cb(null, n)); }).expect(200);
      assert.match(String(res.headers['content-type']), type);
      assert.ok((res.body as number) > 20);
    });
  }
  it('should answer a conditional request for an asset with 304', async () => {
    const first = await request(handle.url).get('/docs/swagger-ui.css').expect(200);
    await request(handle.url).get('/docs/swagger-ui.css').set('If-None-Match', String(first.headers.etag)).expect(304);
  });
  it('should point the init scripts at the document', async () => {
    assert.match((await request(handle.url).get('/docs/swagger-ui-init.js')).text, /url: "\/openapi.json"/);
    assert.match((await request(handle.url).get('/redoc/redoc-init.js')).text, /Redoc\.init\("\/openapi.json"/);
  });
});

describe('OpenAPI in an App where it is off', () => {
  it('should mount nothing', async () => {
    const handle = await petsApp({ openapi: { enabled: false } }).listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    try {
      await request(handle.url).get('/openapi.json').expect(404);
      await request(handle.url).get('/docs').expect(404);
    } finally {
      await handle.close();
    }
  });
});
