/**
 * Types only: what a handler receives, inferred from its route.
 *
 * - the path pattern gives `pathParams` (`{id:int}` → number, `{slug}` / `:slug` / `{id:uuid}` /
 *   `{rest:path}` → string), the same placeholder table as lib/app/router.ts PATH_PARAM_TYPES;
 * - the route's JSON Schemas (written inline or `as const`) give `body`, `query`, `headers` and
 *   `cookies` through json-schema-to-ts's `FromSchema` (the library Fastify's type provider uses:
 *   no JSON-Schema-to-type code of our own);
 * - a `response` schema (the 200 / default one) or a `responses` map by status types what the handler
 *   may return, `response(body, { status })` included (lib/app/handler.ts brands it with its status);
 * - a `jwt_auth` record's `claims` schema types `data.auth` (present, not `| undefined`, on a route
 *   that requires a JWT), an `authorization` record adds the claims it reads, an `api_key_auth`
 *   record makes `request.apiKey` present.
 *
 * Everything here matches what the runtime does after validation: query and path values are coerced
 * to their schema types, query parameters with a `default` are always present, header and cookie
 * values stay strings (their coerced values are in `validatedParams`).
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Handler, HandlerResult, KeelResponse, RequestData } from './handler.js';
import type { HttpError } from '../http/errors.js';
import type { KeelRequest } from '../http/request.js';
import type { RouteOptionsInput } from './route-definition.js';
import type { ApiKeyAuthConfigInput, AuthorizationConfigInput, JwtAuthConfigInput } from '../records/route.js';

// ---------------------------------------------------------------- path parameters

/** The value type a `{name:type}` placeholder gives (lib/app/router.ts PATH_PARAM_TYPES). */
type PlaceholderType<T extends string> = T extends 'int' | 'integer' | 'float' | 'number' ? number : T extends 'bool' | 'boolean' ? boolean : string;

type SegmentParam<S extends string> =
  S extends `{${infer N}:${infer T}}` ? { [K in N]: PlaceholderType<T> }
  : S extends `{${infer N}}` ? { [K in N]: string }
  : S extends `:${infer N}` ? { [K in N]: string }
  : S extends '*' ? { '*': string }
  : {};

type SegmentParams<P extends string> = P extends `${infer A}/${infer B}` ? SegmentParam<A> & SegmentParams<B> : SegmentParam<P>;

/** `'/users/{id:int}/files/{rest:path}'` → `{ id: number; rest: string }`. A non-literal path gives a record. */
export type PathParamsOf<P extends string> = string extends P ? Record<string, unknown> : Flatten<SegmentParams<P>>;

// ---------------------------------------------------------------- schemas

type Flatten<T> = { [K in keyof T]: T[K] } & {};

/**
 * A schema written as a literal must be a JSON Schema (json-schema-to-ts's `JSONSchema`): a misspelt
 * keyword value (`type: 'strng'`) is then a compile error at the value instead of a silent `unknown`
 * in `data.body`. Schemas typed as plain objects are left to the registration-time check.
 */
export type ValidSchema<S> = object extends S ? unknown : S extends JSONSchema ? unknown : true extends WidenedString<S> ? unknown : JSONSchema;

/**
 * A schema held in a variable without `as const` has `type: string`: it cannot be checked (nor typed)
 * here, only at registration, so it is let through rather than made an error it was not before.
 */
type WidenedString<T, Depth extends unknown[] = []> = Depth['length'] extends 6 ? false
  : T extends string ? (string extends T ? true : false)
  : T extends readonly (infer U)[] ? WidenedString<U, [...Depth, unknown]>
  : T extends object ? { [K in keyof T]-?: WidenedString<T[K], [...Depth, unknown]> }[keyof T]
  : false;

/** `FromSchema` for anything that is a JSON Schema; `unknown` otherwise (e.g. keel's form-body shorthand). */
export type SchemaType<S> = object extends S ? unknown : S extends JSONSchema ? FromSchema<S> : unknown;

/** keel's per-parameter keywords (lib/http/validation.ts PARAM_META), removed before `FromSchema`. */
type ParamMeta = 'required' | 'optional' | 'annotation' | 'separator' | 'description' | 'source' | 'alias' | 'error_style';
type ParamSchemaType<E> = SchemaType<Omit<E, ParamMeta>>;
/** Required unless the entry says `optional: true` or `required: false` (FastAPI semantics); a `default` is filled in. */
type OptionalParam<E> = E extends { optional: true } ? true : E extends { required: false } ? true : false;

/**
 * The values of one parameter source: `{ limit: { type: 'integer', default: 10 } }` → `{ limit: number }`,
 * or a whole-object schema (`{ type: 'object', properties, required }`) → its `FromSchema`.
 */
export type ParamValues<M> = [M] extends [undefined]
  ? {}
  : object extends M
    ? Record<string, unknown>
  : M extends { type: 'object'; properties: object }
    ? SchemaType<M>
    : Flatten<
        { -readonly [K in keyof M as OptionalParam<M[K]> extends true ? never : K]: ParamSchemaType<M[K]> } & {
          -readonly [K in keyof M as OptionalParam<M[K]> extends true ? K : never]?: ParamSchemaType<M[K]>;
        }
      >;

/** Header and cookie values stay strings in `data.headers` / `data.cookies`; a string enum keeps its literals. */
type AsString<V> = V extends string ? V : string;
type StringValues<T> = { [K in keyof T]: AsString<T[K]> };
type LowerKeys<T> = { [K in keyof T as K extends string ? Lowercase<K> : K]: T[K] };

/** The `parameters` member of a route: a name → schema map (or one object schema) per source. */
export interface RouteParameters {
  path?: object;
  query?: object;
  headers?: object;
  cookies?: object;
  files?: object;
  body?: object;
}

type Source<Pm, K extends keyof RouteParameters> = Pm extends { [P in K]?: infer M } ? M : undefined;

/** `data.body`: the body schema's type; `| undefined` when the route says `body_required: false`. */
type BodyOf<Pm, B, BR> = [B] extends [undefined]
  ? ([Source<Pm, 'body'>] extends [undefined] ? unknown : Record<string, unknown>)
  : SchemaType<B> | (BR extends false ? undefined : never);

/** The handler's `data`, inferred from the path `P`, `parameters` `Pm`, body schema `B`, `body_required` `BR` and claims `A`. */
export type RouteData<P extends string, Pm, B, BR = undefined, A = DefaultAuth> = RequestData<
  Flatten<Omit<PathParamsOf<P>, keyof ParamValues<Source<Pm, 'path'>>> & ParamValues<Source<Pm, 'path'>>>,
  ParamValues<Source<Pm, 'query'>> & Record<string, unknown>,
  StringValues<LowerKeys<ParamValues<Source<Pm, 'headers'>>>> & Record<string, string>,
  StringValues<ParamValues<Source<Pm, 'cookies'>>> & Record<string, string>,
  BodyOf<Pm, B, BR>,
  A
>;

// ---------------------------------------------------------------- responses by status

/**
 * A route's `responses`: a JSON Schema per status code (`{ 201: note, 404: problem }`), or `null` for a
 * status answered without content (`204: null`).
 */
export type ResponsesInput = { readonly [status: number]: object | null };

/** `201` or `'201'` → 201. */
type StatusOf<K> = K extends number ? K : K extends `${infer N extends number}` ? N : never;
type Digit = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9;
type ToNumber<S> = S extends `${infer N extends number}` ? N : never;
/** Redirects and errors (300-599): not checked against a `response` schema, which describes success. */
type NonSuccessStatus = ToNumber<`${3 | 4 | 5}${Digit}${Digit}`>;
/** Statuses that never carry content (RFC 9110 §15.3.5, §15.3.6, §15.4.5). */
export type NoContentStatus = 204 | 205 | 304;

/**
 * `response()` keeps its body's literals (a `const` type parameter, so `'open'` can match an enum):
 * its arrays are then readonly tuples, which a schema's `string[]` would refuse; bodies are compared
 * read-only (keel never writes to them).
 */
type DeepReadonly<T> = T extends (infer U)[] ? readonly DeepReadonly<U>[] : T extends Function ? T : T extends object ? { readonly [K in keyof T as DeclaredKey<K>]: DeepReadonly<T[K]> } : T;
/**
 * An object schema without `additionalProperties: false` gives `FromSchema` an index signature, which
 * an `interface` value (no index signature) could never match: compared on its declared keys only.
 */
type DeclaredKey<K> = string extends K ? never : number extends K ? never : K;
/** The body a status allows: its schema's type; none for `null` or a no-content status. */
type StatusBody<S, Schema> = S extends NoContentStatus ? null | undefined : [Schema] extends [null] ? null | undefined : DeepReadonly<SchemaType<Schema>>;

/** `response` as the 200 entry of the map, beside `responses`. */
type Declared<R, Rs> = [R] extends [undefined] ? Rs : Omit<Rs, 200 | '200'> & { 200: R };

/** One `KeelResponse<status, body>` per declared status. */
type ResponsesOutcome<M> = { [K in keyof M]-?: KeelResponse<StatusOf<K>, StatusBody<StatusOf<K>, M[K]>> }[keyof M];
/** A bare return value is a 200 (204 when `undefined`): allowed when the map declares that status. */
type BareOutcome<M> = (200 extends StatusOf<keyof M> ? StatusBody<200, M[Extract<keyof M, 200 | '200'>]> : never) | (204 extends StatusOf<keyof M> ? undefined | void : never);

/**
 * What a handler may return: anything without a schema; with a `response` schema (the 200 / default
 * one), that type, a `response()` of it for any success status, or any redirect / error response; with
 * `responses`, only what one of its statuses allows (an unlisted status is a compile error). An
 * HttpError (`handlerError()`) and a HandlerResult (the unchecked escape hatch) are always allowed.
 */
export type RouteOutcome<R, Rs = undefined> = [Rs] extends [undefined]
  ? ([R] extends [undefined] ? unknown : SchemaType<R> | KeelResponse<number, DeepReadonly<SchemaType<R>>> | KeelResponse<NonSuccessStatus | NoContentStatus, unknown> | HandlerResult | HttpError)
  : ResponsesOutcome<Declared<R, Rs>> | BareOutcome<Declared<R, Rs>> | HandlerResult | HttpError;

// ---------------------------------------------------------------- claims and credentials

/** `data.auth` where nothing says more: the verified claims when some JWT requirement passed. */
export type DefaultAuth = Record<string, unknown> | undefined;

/** What the server-level records give every route (App's type parameter, from createApp's config). */
export interface AuthTypes {
  /** `data.auth` on routes that say nothing of JWT. */
  auth: unknown;
  /** `request.apiKey` on routes that say nothing of API keys. */
  apiKey: unknown;
}
/** Without server-level jwt_auth / api_key_auth (or when the config is not a literal). */
export interface DefaultAuthTypes extends AuthTypes {
  auth: DefaultAuth;
  apiKey: ApiKeyInfo | undefined;
}
/** `req.apiKey` after apiKeyAuth accepted a key. */
export type ApiKeyInfo = { source: 'header' | 'query'; index: number };

/** Verified claims under a `claims` schema (`FromSchema`), or any claims without one. */
export type ClaimsOf<J> = J extends { claims: infer C }
  ? ([C] extends [null | undefined] ? Record<string, unknown> : object extends C ? Record<string, unknown> : C extends JSONSchema ? FromSchema<C> & Record<string, unknown> : Record<string, unknown>)
  : Record<string, unknown>;

/** What the server-level records `{ jwt_auth, api_key_auth }` give: claims always present under jwt_auth. */
export type ServerAuthOf<J, K> = {
  /** A config that may lack jwt_auth (not a literal) promises nothing. */
  auth: undefined extends J ? DefaultAuth : null extends J ? DefaultAuth : ClaimsOf<J>;
  apiKey: undefined extends K ? ApiKeyInfo | undefined : null extends K ? ApiKeyInfo | undefined : ApiKeyInfo;
};

/**
 * The claims the authorization middleware reads (middleware/authorization: `roles` / `role`, `scope` /
 * `scp`, `permissions`), in the forms it accepts. A `claims` schema that declares them narrows them.
 */
export interface GrantClaims {
  roles?: string | string[];
  role?: string | string[];
  scope?: string | string[];
  scp?: string | string[];
  permissions?: string | string[];
}

type Enabled<X> = X extends { enabled: false } ? false : X extends object ? true : undefined;

/**
 * `data.auth` of a route: its own `jwt_auth` (claims typed by `claims`, never undefined: the handler only
 * runs once the token is verified), `undefined` when it turns JWT off, the server's otherwise; an
 * `authorization` record adds the grant claims it reads (and, like JWT, only lets verified callers in).
 */
export type RouteAuth<J, Az, SA extends AuthTypes> = WithGrants<
  Enabled<J> extends true ? ClaimsOf<J> : Enabled<J> extends false ? undefined : SA['auth'],
  Az
>;
type WithGrants<A, Az> = Az extends object ? (NonNullable<A> extends infer N ? ([N] extends [never] ? undefined : N & Omit<GrantClaims, DeclaredKeys<N>>) : never) : A;
/** The named keys of a type, without its index signature's `string`. */
type DeclaredKeys<T> = keyof { [K in keyof T as DeclaredKey<K>]: 0 };

/** `request.apiKey` of a route: present when its own `api_key_auth` (or the server's) requires a key. */
export type RouteApiKey<K, SA extends AuthTypes> = Enabled<K> extends true ? ApiKeyInfo : Enabled<K> extends false ? SA['apiKey'] | undefined : SA['apiKey'];

/** The handler's `request`: `apiKey` typed from the route's API-key requirement. */
export type RouteRequest<Key> = [Key] extends [ApiKeyInfo] ? KeelRequest & { apiKey: ApiKeyInfo } : KeelRequest;

/** A handler whose `data`, `request` and return value are typed from its route. */
export type RouteHandler<P extends string, Pm, B, R, BR = undefined, Rs = undefined, A = DefaultAuth, Key = ApiKeyInfo | undefined> = (
  data: RouteData<P, Pm, B, BR, A>,
  request: RouteRequest<Key>,
) => RouteOutcome<R, NoInfer<Rs>> | Promise<RouteOutcome<R, NoInfer<Rs>>>;

/** `responses` values must be JSON Schemas (or null): a literal that is not one is an error at the value. */
type ValidResponses<Rs> = { [K in keyof Rs]: Rs[K] extends null ? unknown : ValidSchema<Rs[K]> };

/**
 * Route options whose schemas are kept as written (`parameters` `Pm`, `body` `B`, `response` `R`,
 * `responses` `Rs`, and the `jwt_auth` `J`, `api_key_auth` `K` and `authorization` `Az` records), so the
 * handler's types can be read from them; every other option is the generated record input type.
 */
export type TypedRouteOptions<Pm, B, R, BR = undefined, Rs = undefined, J = undefined, K = undefined, Az = undefined> = Omit<
  RouteOptionsInput,
  'parameters' | 'body' | 'body_schema' | 'body_required' | 'response' | 'responses' | 'jwt_auth' | 'api_key_auth' | 'authorization'
> & {
  parameters?: Pm;
  /** JSON Schema of the request body (alias `body_schema`): types `data.body`. */
  body?: B & ValidSchema<B>;
  body_schema?: B & ValidSchema<B>;
  /** Whether a body is required when `body` is set (default true); `false` makes `data.body` possibly undefined. */
  body_required?: BR;
  /** JSON Schema of the successful (200 / default) response: types the handler's return value. */
  response?: R & ValidSchema<R>;
  /**
   * A JSON Schema per status (`{ 201: note, 204: null, 404: problem }`): the handler may only answer
   * these, each with its body (`response(body, { status })`); the OpenAPI document lists each one.
   */
  responses?: Rs & ValidResponses<Rs>;
  /** JWT required on this route (`claims` types `data.auth`); `{ enabled: false }` turns the server's off. */
  jwt_auth?: J & (JwtAuthConfigInput | null);
  /** API key required on this route (`request.apiKey` is then present). */
  api_key_auth?: K & (ApiKeyAuthConfigInput | null);
  /** Roles / scopes / permissions required (the claims it reads are typed on `data.auth`). */
  authorization?: Az & (AuthorizationConfigInput | null);
};

/**
 * A handler object (`{ call(request, data) }`, e.g. from `intoHandler`). Every function also has a
 * `call` member (Function.prototype.call), so without `apply?: never` a plain function would match
 * this member of the union and escape the typed signature.
 */
export type HandlerObject = Handler & { apply?: never };
