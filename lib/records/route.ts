/**
 * Per-route records: CORS, request-id override, JWT, API key, authorization, lifecycle hooks.
 */
import { ConfigError } from '../http/errors.js';
import { defineRecord, fail, t, type InputOf, type RecordDef } from './define.js';
import { DEFAULT_API_KEY_HEADER, DEFAULT_JWT_ALGORITHM, JWT_ALGORITHMS, checkJwtKeys, jwtFields, rejectPlaceholder, secretString, type JwtAlgorithm } from './server.js';

// ---------------------------------------------------------------- response_validation (ServerConfig and each route)
export { DEFAULT_RESPONSE_VALIDATION, RESPONSE_VALIDATION_MODES, type ResponseValidationMode } from '../http/response-validation.js';

// ---------------------------------------------------------------- CORS (lib/records/cors.ts: ServerConfig.cors uses it too)
export { CorsConfig, type CorsConfigData, type CorsConfigInput } from './cors.js';

// ---------------------------------------------------------------- request id
export interface RequestIdConfig { enabled: boolean }
/** `{enabled}`; a bare boolean is rejected (the wire shape is always an object). */
export const RequestIdConfig = defineRecord<RequestIdConfig>()('RequestIdConfig', {
  enabled: { type: t.boolean(), required: true },
});

// ---------------------------------------------------------------- JWT (per route)
export interface JwtAuthConfig {
  enabled: boolean;
  secret?: string;
  public_key?: string;
  algorithm: JwtAlgorithm;
  audience: readonly string[] | null;
  issuer: string | null;
  leeway: number;
  /** JSON Schema the verified claims must match (a mismatch is a 401 like a bad token); types `data.auth`. */
  claims: Readonly<Record<string, unknown>> | null;
}
/**
 * The record itself does not insist on secret vs public_key (spec); the jwtAuth factory does, when
 * the route is enabled, so a bad route fails at start-up.
 */
export const JwtAuthConfig = defineRecord<JwtAuthConfig>()('JwtAuthConfig', {
  enabled: { type: t.boolean(), default: true },
  secret: { type: secretString('secret') },
  public_key: { type: secretString('public key') },
  ...jwtFields,
});
export { DEFAULT_JWT_ALGORITHM, JWT_ALGORITHMS, checkJwtKeys };

// ---------------------------------------------------------------- API key (per route)
export interface ApiKeyAuthConfig { enabled: boolean; keys: readonly string[]; header_name: string }
export const ApiKeyAuthConfig = defineRecord<ApiKeyAuthConfig>()(
  'ApiKeyAuthConfig',
  {
    enabled: { type: t.boolean(), default: true },
    keys: { type: t.list(secretString('key')), default: () => [] },
    header_name: { type: t.string({ minLength: 1 }), default: DEFAULT_API_KEY_HEADER },
  },
  { check: (v, path) => v.keys.forEach((k, i) => rejectPlaceholder('ApiKeyAuthConfig', path, `keys[${i}]`, k)) },
);

/** Start-up check: an enabled API-key requirement with no keys would be an open gate (spec, Authentication 4). */
export function assertApiKeysPresent(v: Readonly<ApiKeyAuthConfig>, path = 'ApiKeyAuthConfig'): void {
  if (v.enabled && v.keys.length === 0) {
    fail('ApiKeyAuthConfig', path, 'keys', v.keys, 'at least one key', 'An enabled API-key requirement with no keys is never an open gate; add keys or set enabled: false.');
  }
}

// ---------------------------------------------------------------- authorization
export interface AuthorizationConfig {
  required_roles: readonly string[];
  required_scopes: readonly string[];
  required_permissions: readonly string[];
  require_all: boolean;
}
/** `required_role` (alias filling `required_roles`) is accepted by the record's rewrite. */
type RequiredRoleAlias = { required_role?: string | readonly string[]; requiredRole?: string | readonly string[] };
export const AuthorizationConfig = defineRecord<AuthorizationConfig, RequiredRoleAlias>()(
  'AuthorizationConfig',
  {
    required_roles: { type: t.list(t.string({ minLength: 1 })), default: () => [] },
    required_scopes: { type: t.list(t.string({ minLength: 1 })), default: () => [] },
    required_permissions: { type: t.list(t.string({ minLength: 1 })), default: () => [] },
    require_all: { type: t.boolean(), default: true, doc: 'true: every requirement must hold; false: any one suffices' },
  },
  {
    // The singular `required_role` is accepted and fills `required_roles` (spec).
    rewrite(input, path) {
      const both = (a: string, b: string) => {
        if (a in input && b in input) {
          throw new ConfigError(`Key "${a}" of AuthorizationConfig at ${path} is given twice (as "${a}" and "${b}"). Keep one.`, { record: 'AuthorizationConfig', path: `${path}.${a}`, key: a, value: input[b] });
        }
      };
      both('required_role', 'requiredRole');
      both('required_roles', 'requiredRoles');
      const key = 'required_role' in input ? 'required_role' : 'requiredRole' in input ? 'requiredRole' : undefined;
      if (key === undefined) return input;
      const role = input[key];
      delete input[key];
      const roles = typeof role === 'string' ? [role] : role;
      if (!Array.isArray(roles)) fail('AuthorizationConfig', path, key, role, 'a role name or a list of role names');
      const listKey = 'requiredRoles' in input ? 'requiredRoles' : 'required_roles';
      const existing = input[listKey] ?? [];
      if (!Array.isArray(existing)) fail('AuthorizationConfig', path, 'required_roles', existing, 'a list of strings');
      delete input[listKey];
      input.required_roles = [...existing, ...roles];
      return input;
    },
    extraSchemaProperties: { required_role: { type: 'string', description: 'Alias: fills required_roles' } },
  },
);

// ---------------------------------------------------------------- lifecycle hooks
export interface LifecycleHookRef {
  name: string;
  handler: string;
  dependencies: readonly string[];
  config: unknown;
  order: number | null;
}
export const LifecycleHookRef = defineRecord<LifecycleHookRef>()('LifecycleHookRef', {
  name: { type: t.string({ minLength: 1 }), required: true, doc: 'A hook name registered for this phase' },
  handler: { type: t.string({ minLength: 1 }), required: true },
  dependencies: { type: t.list(t.string()), default: () => [], doc: 'Hooks of the same phase that run before this one' },
  config: { type: t.json(), nullable: true, doc: 'Free-form, passed to the hook' },
  order: { type: t.integer(), nullable: true, doc: 'Explicit order within the phase (lower first)' },
});

export const HOOK_PHASES = ['on_request', 'pre_validation', 'pre_handler', 'on_response', 'on_error'] as const;
export type HookPhase = (typeof HOOK_PHASES)[number];
/** The spec's LifecycleHookPhase names, in run order. */
export const LIFECYCLE_HOOK_PHASES = ['OnRequest', 'PreValidation', 'PreHandler', 'OnResponse', 'OnError'] as const;

export type LifecycleHooksConfig = { readonly [P in HookPhase]: readonly Readonly<LifecycleHookRef>[] };
const hookList = { type: t.list(t.record(LifecycleHookRef)), default: () => [] };
// Written out (not built from HOOK_PHASES) so the input type names each phase.
export const LifecycleHooksConfig = defineRecord<LifecycleHooksConfig>()('LifecycleHooksConfig', {
  on_request: hookList, pre_validation: hookList, pre_handler: hookList, on_response: hookList, on_error: hookList,
});

// ---------------------------------------------------------------- input types (generated from the fields above)
export type RequestIdConfigInput = InputOf<typeof RequestIdConfig>;
export type JwtAuthConfigInput = InputOf<typeof JwtAuthConfig>;
export type ApiKeyAuthConfigInput = InputOf<typeof ApiKeyAuthConfig>;
export type AuthorizationConfigInput = InputOf<typeof AuthorizationConfig>;
export type LifecycleHookRefInput = InputOf<typeof LifecycleHookRef>;
export type LifecycleHooksConfigInput = InputOf<typeof LifecycleHooksConfig>;
