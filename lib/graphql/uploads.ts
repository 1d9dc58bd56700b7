/**
 * The GraphQL multipart request (https://github.com/jaydenseric/graphql-multipart-request-spec, v2.1):
 * file uploads as multipart/form-data with an `operations` field (the GraphQL request, `null` where
 * each file goes), a `map` field (`{"0": ["variables.file"]}`) and one file part per map key.
 *
 * Served only by a schema that declares `scalar Upload` (the spec's convention): a schema without it
 * keeps answering multipart bodies with 415, so an API that takes no files accepts no multipart body.
 * Each file reaches its resolver as keel's UploadFile (`filename`, `contentType`, `size`, `asBytes()`),
 * the value HTTP routes give file parameters. The body stays under the route's body cap; its parts are
 * bounded by DEFAULT_GRAPHQL_UPLOAD_LIMITS (two fields, at most that many files), the two fields are
 * JSON under a JSON body's rules (nesting depth, `__proto__` keys), and a map path may only point into
 * `variables` (never `__proto__`, `constructor`, `prototype`).
 */
import { GraphQLScalarType, type GraphQLSchema } from 'graphql';
import { HttpError } from '../http/errors.js';
import { parseMultipart, type MultipartLimits, type UploadFile } from '../http/multipart.js';
import { refuseDeepJson } from '../http/content.js';
import { DEFAULT_JSON_POISONING, parseJsonText, type JsonPoisoning } from '../http/json-parse.js';

/** Bounds of a GraphQL multipart request: `operations` and `map`, and at most 100 files. */
export const DEFAULT_GRAPHQL_UPLOAD_LIMITS: MultipartLimits = Object.freeze({ parts: 102, files: 100, fields: 2, fieldSize: null });

const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

/** Does the schema take uploads (declares `scalar Upload`)? */
export function takesUploads(schema: GraphQLSchema): boolean {
  return schema.getType('Upload') instanceof GraphQLScalarType;
}

function bad(message: string): HttpError {
  return new HttpError(400, `Invalid GraphQL multipart request: ${message}`);
}

/** A JSON field, under the rules of a JSON body: nesting depth, then `__proto__` keys (400 problems). */
function jsonField(fields: Record<string, string | string[]>, name: string, poisoning: JsonPoisoning): unknown {
  const text = fields[name];
  if (typeof text !== 'string') throw bad(`the ${JSON.stringify(name)} field is missing (or given twice)`);
  refuseDeepJson(text);
  try {
    return parseJsonText(text, poisoning);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw bad(`the ${JSON.stringify(name)} field is not JSON`);
  }
}

/** Put `file` at `path` (`variables.files.0`) of the operation; the path must lead to an existing member of `variables`. */
function place(operation: Record<string, unknown>, path: string, file: UploadFile): void {
  const segments = path.split('.');
  if (segments[0] !== 'variables' || segments.length < 2 || segments.some((s) => FORBIDDEN_SEGMENTS.has(s) || s === '')) {
    throw bad(`map path ${JSON.stringify(path)} must point into variables`);
  }
  let node: unknown = operation;
  for (const seg of segments.slice(0, -1)) {
    node = node !== null && typeof node === 'object' && Object.hasOwn(node, seg) ? (node as Record<string, unknown>)[seg] : undefined;
    if (node === null || typeof node !== 'object') throw bad(`map path ${JSON.stringify(path)} does not exist in operations`);
  }
  const last = segments[segments.length - 1]!;
  if (Array.isArray(node) && !/^\d+$/.test(last)) throw bad(`map path ${JSON.stringify(path)} does not exist in operations`);
  (node as Record<string, unknown>)[last] = file;
}

/**
 * The GraphQL request of a multipart body, with each file in place of its `null`. A malformed request
 * (a missing or unparsable field, a file the map names but the body lacks, a map path outside
 * `variables`) is a 400; a body past the bounds a 413 naming the bound.
 */
export async function operationFromMultipart(raw: Buffer, headers: Record<string, string | string[] | undefined>, poisoning: JsonPoisoning = DEFAULT_JSON_POISONING, limits: MultipartLimits = DEFAULT_GRAPHQL_UPLOAD_LIMITS): Promise<Record<string, unknown>> {
  const { fields, files } = await parseMultipart(raw, headers, limits);
  const operation = jsonField(fields, 'operations', poisoning);
  // A batch of operations (an array) is not served: keel's GraphQL route takes one operation per request.
  if (operation === null || typeof operation !== 'object' || Array.isArray(operation)) throw bad('operations must be one GraphQL request (a JSON object)');
  const map = jsonField(fields, 'map', poisoning);
  if (map === null || typeof map !== 'object' || Array.isArray(map)) throw bad('map must be a JSON object of file keys to paths');
  for (const [key, paths] of Object.entries(map)) {
    const file = files[key];
    if (file === undefined || Array.isArray(file)) throw bad(`file ${JSON.stringify(key)} named by the map is missing (or given twice)`);
    if (!Array.isArray(paths) || paths.length === 0 || !paths.every((p) => typeof p === 'string')) throw bad(`map entry ${JSON.stringify(key)} must be a list of paths`);
    for (const p of paths) place(operation as Record<string, unknown>, p, file);
  }
  return operation as Record<string, unknown>;
}
