/**
 * Types only: what a handler receives, inferred from its route.
 *
 * - the path pattern gives `pathParams` (`{id:int}` → number, `{slug}` / `:slug` / `{id:uuid}` /
 *   `{rest:path}` → string), the same placeholder table as lib/router.ts PATH_PARAM_TYPES;
 * - the route's JSON Schemas (written inline or `as const`) give `body`, `query`, `headers` and
 *   `cookies` through json-schema-to-ts's `FromSchema` (the library Fastify's type provider uses:
 *   no JSON-Schema-to-type code of our own);
 * - a `response` schema types what the handler may return.
 *
 * Everything here matches what the runtime does after validation: query and path values are coerced
 * to their schema types, query parameters with a `default` are always present, header and cookie
 * values stay strings (their coerced values are in `validatedParams`).
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Handler, HandlerResult, KeelResponse, RequestData } from './handler.js';
import type { HttpError } from './errors.js';
import type { KeelRequest } from './request.js';
import type { RouteOptionsInput } from './route-definition.js';

// ---------------------------------------------------------------- path parameters

/** The value type a `{name:type}` placeholder gives (lib/router.ts PATH_PARAM_TYPES). */
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

/** keel's per-parameter keywords (lib/validation.ts PARAM_META), removed before `FromSchema`. */
type ParamMeta = 'required' | 'optional' | 'annotation' | 'separator' | 'description' | 'source' | 'alias';
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

/** The handler's `data`, inferred from the path `P`, `parameters` `Pm`, body schema `B` and `body_required` `BR`. */
export type RouteData<P extends string, Pm, B, BR = undefined> = RequestData<
  Flatten<Omit<PathParamsOf<P>, keyof ParamValues<Source<Pm, 'path'>>> & ParamValues<Source<Pm, 'path'>>>,
  ParamValues<Source<Pm, 'query'>> & Record<string, unknown>,
  StringValues<LowerKeys<ParamValues<Source<Pm, 'headers'>>>> & Record<string, string>,
  StringValues<ParamValues<Source<Pm, 'cookies'>>> & Record<string, string>,
  BodyOf<Pm, B, BR>
>;

/** What a handler may return: anything, or with a `response` schema, that type (or a Response / an error). */
export type RouteOutcome<R> = [R] extends [undefined] ? unknown : SchemaType<R> | KeelResponse | HandlerResult | HttpError;

/** A handler whose `data` and return value are typed from its route. */
export type RouteHandler<P extends string, Pm, B, R, BR = undefined> = (data: RouteData<P, Pm, B, BR>, request: KeelRequest) => RouteOutcome<R> | Promise<RouteOutcome<R>>;

/**
 * Route options whose schemas are kept as written (`parameters` `Pm`, `body` `B`, `response` `R`), so the
 * handler's types can be read from them; every other option is the generated record input type.
 */
export type TypedRouteOptions<Pm, B, R, BR = undefined> = Omit<RouteOptionsInput, 'parameters' | 'body' | 'body_schema' | 'body_required' | 'response'> & {
  parameters?: Pm;
  /** JSON Schema of the request body (alias `body_schema`): types `data.body`. */
  body?: B & ValidSchema<B>;
  body_schema?: B & ValidSchema<B>;
  /** Whether a body is required when `body` is set (default true); `false` makes `data.body` possibly undefined. */
  body_required?: BR;
  /** JSON Schema of the successful response: types the handler's return value. */
  response?: R & ValidSchema<R>;
};

/**
 * A handler object (`{ call(request, data) }`, e.g. from `intoHandler`). Every function also has a
 * `call` member (Function.prototype.call), so without `apply?: never` a plain function would match
 * this member of the union and escape the typed signature.
 */
export type HandlerObject = Handler & { apply?: never };
