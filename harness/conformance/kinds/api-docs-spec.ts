/**
 * API description documents (AsyncAPI, OpenAPI, OpenRPC) as cases a client checks over HTTP:
 * - AsyncAPI (a whole document, or `{asyncapi: {spec, validation?, expected}}`): what the
 *   specification's endpoints report: `POST /asyncapi/parse` (version, title, channels, operations,
 *   bindings, resolved messages) and `POST /asyncapi/validate` (each message example the document
 *   gives is valid; a case's `validation` payload gets its expected verdict). keel VALIDATES these.
 * - OpenAPI: the document's operations become routes (path, method, parameters, JSON request body);
 *   the server's generated `GET /openapi.json` must describe each of them again (same paths and
 *   methods, each parameter with its location and `required`, a request body where one is
 *   declared). keel GENERATES this.
 * - OpenRPC: the document's methods become JSON-RPC methods (params by name, `required` kept); each
 *   method example is called with its params and must return its result; `rpc.discover` must list
 *   every method. keel GENERATES the discovery document and VALIDATES params.
 */
import { isObject, type Json, type KindLoad, type KindLoader } from './kind.js';

export type ApiDocFormat = 'asyncapi' | 'openapi' | 'openrpc';

export interface ApiDocSpec extends Json {
  format: ApiDocFormat;
  document: Json;
  /** AsyncAPI fixture cases: the payload to validate (`{channel, message, payload}`) and the expected facts. */
  validation?: { channel: string; message: string; payload: unknown };
  expected?: Json;
}

/** The document of a case, if it is an API description (by its version field). */
export function apiDocFormat(doc: Json): ApiDocFormat | undefined {
  if (typeof doc.asyncapi === 'string') return 'asyncapi';
  if (typeof doc.openapi === 'string') return 'openapi';
  if (typeof doc.openrpc === 'string') return 'openrpc';
  return undefined;
}

function fromDocument(doc: unknown): KindLoad | undefined {
  if (!isObject(doc)) return undefined;
  // A fixture case: `{id, asyncapi: {spec, validation?, expected}}`.
  if (isObject(doc.asyncapi) && isObject(doc.asyncapi.spec)) {
    const a = doc.asyncapi;
    const v = isObject(a.validation) ? a.validation : undefined;
    if (v && (typeof v.channel !== 'string' || typeof v.message !== 'string')) return { skip: 'asyncapi.validation needs channel and message names' };
    const spec: ApiDocSpec = {
      format: 'asyncapi', document: a.spec as Json,
      ...(v ? { validation: { channel: v.channel as string, message: v.message as string, payload: v.payload } } : {}),
      ...(isObject(a.expected) ? { expected: a.expected } : {}),
    };
    return { spec, ...(typeof doc.description === 'string' ? { description: doc.description } : {}) };
  }
  const format = apiDocFormat(doc);
  if (!format) return undefined;
  const info = isObject(doc.info) ? doc.info : {};
  return { spec: { format, document: doc }, ...(typeof info.title === 'string' ? { name: info.title } : {}) };
}

export const apiDocsLoader: KindLoader = {
  kind: 'api-description',
  load: fromDocument,
  server: (raw) => ({ format: raw.format, document: raw.document }),
};
