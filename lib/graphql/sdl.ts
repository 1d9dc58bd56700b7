/**
 * SDL routes: a schema from caller-supplied SDL whose resolvers serve a static `response_data` tree
 * (spec, "Rules for GraphQL registration" 2 and 3).
 *
 * - Only object and input-object type definitions are accepted (plus the built-in scalars, lists and
 *   non-null); anything else is an AppError GraphQl naming the definition.
 * - Every resolver reads `response_data` by field name. Arguments do not filter: a result that depends
 *   on arguments must already sit at its path in `response_data`.
 * - `field_errors` make the field at a dot path (field names from the operation root) fail with the
 *   given message; graphql-js then applies null propagation and reports the error's `path`
 *   (GraphQL spec §6.4.4).
 */
import {
  GraphQLError, Kind, assertValidSchema, buildASTSchema, getNamedType, isObjectType, parse,
  type DocumentNode, type GraphQLFieldResolver, type GraphQLSchema,
} from 'graphql';
import { AppError } from '../http/errors.js';
import { DynamicSchemaConfig } from '../records/graphql.js';
import type { PubSub } from '../pubsub/memory.js';

/**
 * A Subscription field fed by the pub/sub: each payload published on its topic is the field's value
 * (shaped like `response_data[field]`), resolved by the same resolvers, field errors included.
 */
function eventsOf(events: SdlEventOptions, field: string): GraphQLFieldResolver<unknown, unknown> {
  return () => {
    const source = events.pubsub.subscribe(events.topicPrefix + field);
    // Mapped without an async generator, so return() reaches the PubSub's iterator at once.
    return {
      next: async () => {
        const r = await source.next();
        return r.done ? r : { done: false, value: { data: { [field]: r.value }, path: '' } satisfies Node };
      },
      return: () => source.return!(),
      throw: (err?: unknown) => source.throw!(err),
      [Symbol.asyncIterator]() {
        return this;
      },
    } as AsyncIterableIterator<unknown>;
  };
}

/** Definition kinds an SDL route accepts. */
export const SDL_ALLOWED_KINDS: ReadonlySet<string> = new Set([Kind.OBJECT_TYPE_DEFINITION, Kind.INPUT_OBJECT_TYPE_DEFINITION]);

const KIND_NAMES: Record<string, string> = {
  [Kind.SCALAR_TYPE_DEFINITION]: 'scalar', [Kind.ENUM_TYPE_DEFINITION]: 'enum', [Kind.INTERFACE_TYPE_DEFINITION]: 'interface',
  [Kind.UNION_TYPE_DEFINITION]: 'union', [Kind.DIRECTIVE_DEFINITION]: 'directive', [Kind.SCHEMA_DEFINITION]: 'schema',
};

/**
 * The source each SDL resolver receives: the sub-tree of `response_data` plus the dot path of field
 * names that led to it (aliases do not change it), so field errors match what the caller wrote.
 */
interface Node { readonly data: unknown; readonly path: string }

function parseSdl(sdl: string): DocumentNode {
  if (typeof sdl !== 'string' || sdl.trim() === '') throw new AppError('GraphQl', 'SDL must be a non-empty string');
  try {
    return parse(sdl);
  } catch (err) {
    throw new AppError('GraphQl', `SDL cannot be parsed: ${(err as Error).message}`, { cause: err });
  }
}

function checkKinds(doc: DocumentNode): void {
  for (const def of doc.definitions) {
    if (SDL_ALLOWED_KINDS.has(def.kind)) {
      if (def.kind === Kind.OBJECT_TYPE_DEFINITION && def.interfaces?.length) {
        throw new AppError('GraphQl', `SDL type "${def.name.value}" implements an interface; only object and input types are supported`);
      }
      if (def.kind === Kind.OBJECT_TYPE_DEFINITION || def.kind === Kind.INPUT_OBJECT_TYPE_DEFINITION) {
        const seen = new Set<string>();
        for (const f of def.fields ?? []) {
          if (seen.has(f.name.value)) throw new AppError('GraphQl', `SDL type "${def.name.value}" defines field "${f.name.value}" more than once`);
          seen.add(f.name.value);
        }
      }
      continue;
    }
    const what = KIND_NAMES[def.kind] ? `${KIND_NAMES[def.kind]} definition` : def.kind.endsWith('Extension') ? 'type extension' : def.kind;
    const name = 'name' in def && def.name ? ` "${def.name.value}"` : '';
    throw new AppError('GraphQl', `SDL ${what}${name} is not supported; only object and input-object types are`);
  }
}

function own(data: unknown, key: string): unknown {
  // Own properties only: a field called "constructor" must not reach Object.prototype.
  return data !== null && typeof data === 'object' && Object.hasOwn(data, key) ? (data as Record<string, unknown>)[key] : null;
}

function wrap(value: unknown, path: string): unknown {
  if (Array.isArray(value)) return value.map((v) => wrap(v, path));
  if (value === null || value === undefined) return null;
  return { data: value, path } satisfies Node;
}

/** Check that each field-error path names a field reachable from a root type. */
function checkFieldErrorPaths(schema: GraphQLSchema, paths: readonly string[]): void {
  const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter((t) => t != null);
  for (const path of paths) {
    const ok = roots.some((root) => {
      let type: unknown = root;
      for (const name of path.split('.')) {
        if (!isObjectType(type)) return false;
        const field = type.getFields()[name];
        if (!field) return false;
        type = getNamedType(field.type);
      }
      return true;
    });
    if (!ok) throw new AppError('GraphQl', `field_errors path "${path}" does not name a field of the schema`);
  }
}

/**
 * Build an executable schema from `sdl` that serves `responseData`.
 * Throws AppError GraphQl for unparsable SDL, unsupported definitions, duplicate fields, an invalid
 * schema (e.g. no Query type, GraphQL spec §3.3) or a field-error path that names no field.
 *
 * @example
 * const schema = buildSdlSchema('type Query { hello: String }', { hello: 'world' }, { introspection_enabled: true });
 */
/** Live SDL subscriptions: each Subscription field streams what is published on `<topicPrefix><field>`. */
export interface SdlEventOptions {
  pubsub: PubSub;
  /** Topic of field `f` is `topicPrefix + f`. An App route uses `graphql:<path>:`. */
  topicPrefix: string;
}

export function buildSdlSchema(sdl: string, responseData: unknown, config: unknown, events?: SdlEventOptions): GraphQLSchema {
  const cfg = DynamicSchemaConfig.parse(config, 'DynamicSchemaConfig');
  const doc = parseSdl(sdl);
  checkKinds(doc);
  let schema: GraphQLSchema;
  try {
    schema = buildASTSchema(doc);
    assertValidSchema(schema);
  } catch (err) {
    throw new AppError('GraphQl', `SDL is not a valid schema: ${(err as Error).message}`, { cause: err });
  }
  const errors = new Map(cfg.field_errors.map((e) => [e.path, e.message]));
  checkFieldErrorPaths(schema, [...errors.keys()]);
  const root: Node = { data: responseData ?? null, path: '' };

  const resolve: GraphQLFieldResolver<Node | undefined, unknown> = (source, _args, _ctx, info) => {
    const node = source ?? root;
    const path = node.path ? `${node.path}.${info.fieldName}` : info.fieldName;
    const message = errors.get(path);
    if (message !== undefined) throw new GraphQLError(message);
    const value = own(node.data, info.fieldName);
    return isObjectType(getNamedType(info.returnType)) ? wrap(value, path) : value ?? null;
  };
  // A Subscription field of an SDL route emits its static data once, then completes.
  const subscribe: GraphQLFieldResolver<unknown, unknown> = async function* once() {
    yield root;
  };

  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    const isSubscription = type === schema.getSubscriptionType();
    for (const field of Object.values(type.getFields())) {
      field.resolve = resolve as GraphQLFieldResolver<unknown, unknown>;
      if (isSubscription) field.subscribe = events ? eventsOf(events, field.name) : subscribe;
    }
  }
  return schema;
}
