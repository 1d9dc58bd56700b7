/**
 * Mounted protocols in the OpenAPI document: a mount whose `MountOptions.openapi` describes its
 * operations (JSON-RPC, GraphQL over HTTP) is listed beside the routes. The description is data the
 * protocol wrote (lib/app/plugin.ts `MountOpenApi`), so this module never imports a protocol module.
 */
import type { Mount, MountOpenApi, OpenApiMethod } from '../app/plugin.js';
import { openApiPath } from '../app/router.js';
import { SchemaComponents, toOpenApiSchema } from './schema.js';

type Json = Record<string, unknown>;

/** A mount to describe: its path, whether server-level authentication is skipped, its operations. */
export interface OpenApiMountInput {
  path: string;
  public?: boolean;
  openapi: MountOpenApi;
}

/** What adding mounts needs from the document being generated. */
export interface MountContext {
  paths: Record<string, Json>;
  components: SchemaComponents;
  /** operationId → `METHOD path` of the operation holding it. */
  operationIds: Map<string, string>;
  tags: Set<string>;
  /** The server-level security requirement (JWT / API key), or undefined when the server authenticates nothing. */
  serverRequirement(): Json | undefined;
  /** A problem+json response object. */
  problemResponse(description: string): Json;
}

const METHODS: readonly OpenApiMethod[] = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const COMPONENT_REF = /^#\/components\/schemas\/(.+)$/;

/** `GET /users/{id}/files` → `getUsersIdFiles`. */
export function defaultOperationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('') || method.toLowerCase();
}

/** The described mounts of an App, in mount order (a description given as a function is called now). */
export function describedMounts(mounts: readonly Mount[]): OpenApiMountInput[] {
  const out: OpenApiMountInput[] = [];
  for (const m of mounts) {
    const d = typeof m.options.openapi === 'function' ? m.options.openapi() : m.options.openapi;
    if (d) out.push({ path: m.path, public: m.options.public === true, openapi: d });
  }
  return out;
}

/**
 * A deep copy of `node` with references to renamed component schemas pointing at their new names:
 * `$ref`s, and the values of a discriminator's `mapping` (OpenAPI 3.1 §4.8.25), which are references too.
 */
function renameRefs(node: unknown, rename: ReadonlyMap<string, string>, inMapping = false): unknown {
  if (Array.isArray(node)) return node.map((n) => renameRefs(n, rename));
  if (typeof node !== 'object' || node === null) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    const m = (k === '$ref' || inMapping) && typeof v === 'string' ? COMPONENT_REF.exec(v) : null;
    const target = m ? rename.get(m[1]!) : undefined;
    out[k] = target !== undefined ? `#/components/schemas/${target}` : renameRefs(v, rename, k === 'mapping' && isDiscriminator(node));
  }
  return out;
}

function isDiscriminator(node: object): boolean {
  return typeof (node as Json).propertyName === 'string';
}

/** Add the mounts' operations and schemas to the document. A route already answering a method wins. */
export function addMountOperations(ctx: MountContext, mounts: readonly OpenApiMountInput[]): void {
  for (const mount of mounts) {
    const rename = new Map<string, string>();
    const added: string[] = [];
    for (const [name, schema] of Object.entries(mount.openapi.schemas ?? {})) {
      // `add` keeps the name when the same schema is already there (two GraphQL routes share theirs).
      const target = ctx.components.add(name, toOpenApiSchema(schema, ctx.components));
      rename.set(name, target);
      added.push(target);
    }
    for (const target of added) ctx.components.schemas[target] = renameRefs(ctx.components.schemas[target], rename);
    const path = openApiPath(mount.path);
    const item = (ctx.paths[path] ??= {});
    for (const method of METHODS) {
      const given = mount.openapi.operations[method];
      if (!given || item[method]) continue;
      const op = renameRefs(given, rename) as Json;
      const base = typeof op.operationId === 'string' && op.operationId ? op.operationId : defaultOperationId(method, path);
      let id = base;
      for (let n = 2; ctx.operationIds.has(id); n++) id = `${base}_${n}`;
      op.operationId = id;
      ctx.operationIds.set(id, `${method.toUpperCase()} ${mount.path}`);
      if (Array.isArray(op.tags)) for (const t of op.tags) if (typeof t === 'string') ctx.tags.add(t);
      const requirement = mount.public ? undefined : ctx.serverRequirement();
      if (requirement) {
        op.security = [requirement];
        const responses = (op.responses ??= {}) as Json;
        responses['401'] ??= ctx.problemResponse('Missing or invalid credentials');
      }
      item[method] = op;
    }
    if (Object.keys(item).length === 0) delete ctx.paths[path];
  }
}
