/**
 * The JSON Schemas (draft 2020-12) emitted for ServerConfig and the per-route records: valid JSON
 * Schema, accepting the defaults and what the parsers accept, rejecting unknown keys.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import {
  recordJsonSchemas, ServerConfig, CorsConfig, RequestIdConfig, JwtAuthConfig, ApiKeyAuthConfig, AuthorizationConfig,
  LifecycleHooksConfig, SchemaConfig, DynamicSchemaConfig, GraphQlRouteConfig, JsonRpcMethodInfo,
} from '../lib/records/index.js';


function compile(schema: Record<string, unknown>) {
  const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true });
  return ajv.compile(schema);
}

/** A valid value for every record (the defaults, or the smallest valid input where a key is required). */
const validValues: Record<string, unknown> = {
  ServerConfig: ServerConfig.defaults(),
  CorsConfig: CorsConfig.defaults().toJSON(),
  RequestIdConfig: RequestIdConfig.parse({ enabled: false }),
  JwtAuthConfig: JwtAuthConfig.defaults(),
  ApiKeyAuthConfig: ApiKeyAuthConfig.defaults(),
  AuthorizationConfig: AuthorizationConfig.defaults(),
  LifecycleHooksConfig: LifecycleHooksConfig.parse({ on_request: [{ name: 'a', handler: 'h', order: 1, config: { x: 1 } }] }),
  SchemaConfig: SchemaConfig.defaults(),
  DynamicSchemaConfig: DynamicSchemaConfig.parse({ introspection_enabled: true, field_errors: [{ path: 'user.email', message: 'x' }] }),
  GraphQlRouteConfig: new GraphQlRouteConfig().toJSON(),
  JsonRpcMethodInfo: JsonRpcMethodInfo.parse({ method_name: 'add' }),
};

describe('when the record JSON Schemas are compiled with Ajv (draft 2020-12)', () => {
  const schemas = recordJsonSchemas();

  it('should emit one schema per record, each declaring draft 2020-12', () => {
    assert.deepEqual(Object.keys(schemas).sort(), Object.keys(validValues).sort());
    for (const [name, s] of Object.entries(schemas)) {
      assert.equal(s.$schema, 'https://json-schema.org/draft/2020-12/schema', name);
      assert.equal(s.title, name);
      assert.equal(s.additionalProperties, false, name);
    }
  });

  for (const [name, schema] of Object.entries(schemas)) {
    describe(`when the ${name} schema is used`, () => {
      const validate = compile(schema);

      it('should accept the record with its defaults', () => {
        assert.equal(validate(JSON.parse(JSON.stringify(validValues[name]))), true, JSON.stringify(validate.errors));
      });

      it('should reject an unknown key', () => {
        const value = { ...(JSON.parse(JSON.stringify(validValues[name])) as object), definitely_unknown: 1 };
        assert.equal(validate(value), false);
        assert.ok(validate.errors?.some((e: { keyword: string }) => e.keyword === 'additionalProperties'), JSON.stringify(validate.errors));
      });
    });
  }
});

describe('when ServerConfig values are checked against its schema', () => {
  const validate = compile(ServerConfig.jsonSchema());

  it('should accept a full configuration with nested records', () => {
    const full = ServerConfig.parse({
      compression: {}, rate_limit: {}, jwt_auth: { secret: 's' }, api_key_auth: { keys: ['k'] },
      static_files: [{ directory: 'd', route_prefix: '/s' }], openapi: { security_schemes: { b: { type: 'http', scheme: 'bearer', bearer_format: 'JWT' }, k: { type: 'apiKey', location: 'header', name: 'X-API-Key' } } },
      asyncapi: { enabled: true, spec: { asyncapi: '3.0.0' } }, jsonrpc: {}, grpc: {}, max_body_size: null,
    });
    assert.equal(validate(JSON.parse(JSON.stringify(full))), true, JSON.stringify(validate.errors));
  });

  const invalid: Array<[string, Record<string, unknown>]> = [
    ['port above 65535', { port: 70000 }],
    ['a string port', { port: '80' }],
    ['an unknown nested key', { compression: { gzp: true } }],
    ['compression quality 12', { compression: { quality: 12 } }],
    ['a static mount without route_prefix', { static_files: [{ directory: 'd' }] }],
    ['an unknown security scheme type', { openapi: { security_schemes: { x: { type: 'oauth2' } } } }],
  ];
  for (const [what, value] of invalid) {
    it(`should reject ${what}`, () => {
      assert.equal(validate(value), false);
      assert.throws(() => ServerConfig.parse(value), 'the parser must agree with the schema');
    });
  }

  it('should state the defaults in the schema', () => {
    const props = ServerConfig.jsonSchema().properties as Record<string, { default?: unknown }>;
    assert.equal(props.port?.default, 8000);
    assert.equal(props.host?.default, '127.0.0.1');
    assert.equal(props.max_body_size?.default, 10485760);
    assert.equal(props.shutdown_timeout?.default, 30);
  });
});

describe('when AuthorizationConfig input uses the required_role alias', () => {
  it('should accept it in the schema too', () => {
    const validate = compile(AuthorizationConfig.jsonSchema());
    assert.equal(validate({ required_role: 'admin' }), true, JSON.stringify(validate.errors));
  });
});
