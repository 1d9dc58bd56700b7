/**
 * The OpenRPC 1.3 document `rpc.discover` returns (https://spec.open-rpc.org/#service-discovery-method),
 * built from the registered methods' JsonRpcMethodInfo.
 */
import type { JsonRpcRegistry } from './registry.js';

/** The OpenRPC version keel writes. */
export const OPENRPC_VERSION = '1.3.2';
/** Default `info.title` of the discovery document. */
export const DEFAULT_OPENRPC_TITLE = 'JSON-RPC API';
/** Default `info.version` of the discovery document. */
export const DEFAULT_OPENRPC_VERSION = '1.0.0';

export interface OpenRpcInfo {
  /** Default `DEFAULT_OPENRPC_TITLE` ("JSON-RPC API"). */
  title?: string;
  /** Default `DEFAULT_OPENRPC_VERSION` ("1.0.0"). */
  version?: string;
  description?: string | null;
  /** Where the endpoint is served (becomes `servers[0].url`). */
  url?: string;
}

interface ContentDescriptor {
  name: string;
  schema: unknown;
  required?: boolean;
  description?: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * OpenRPC describes params as a list of content descriptors. An object schema becomes one descriptor
 * per property (by-name); an array schema with positional items one per position (by-position);
 * anything else one descriptor named "params".
 */
function paramsOf(schema: unknown): { params: ContentDescriptor[]; paramStructure: 'by-name' | 'by-position' | 'either' } {
  if (isObject(schema) && isObject(schema.properties)) {
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const params = Object.entries(schema.properties).map(([name, s]) => {
      const d: ContentDescriptor = { name, schema: s, required: required.has(name) };
      if (isObject(s) && typeof s.description === 'string') d.description = s.description;
      return d;
    });
    return { params, paramStructure: 'by-name' };
  }
  const positional = isObject(schema) ? (Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : null) : null;
  if (isObject(schema) && positional) {
    const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
    return { params: positional.map((s, i) => ({ name: `param${i}`, schema: s, required: i < min })), paramStructure: 'by-position' };
  }
  if (schema === null || schema === undefined) return { params: [], paramStructure: 'either' };
  return { params: [{ name: 'params', schema, required: true }], paramStructure: 'either' };
}

/** Build the OpenRPC document for a registry. */
export function openRpcDocument(registry: JsonRpcRegistry, info: OpenRpcInfo = {}): Record<string, unknown> {
  const docInfo: Record<string, unknown> = { title: info.title ?? DEFAULT_OPENRPC_TITLE, version: info.version ?? DEFAULT_OPENRPC_VERSION };
  if (info.description) docInfo.description = info.description;
  const methods = registry.list().map(({ info: m }) => {
    const { params, paramStructure } = paramsOf(m.params_schema);
    const method: Record<string, unknown> = { name: m.method_name };
    if (m.description) method.description = m.description;
    if (m.tags.length > 0) method.tags = m.tags.map((name) => ({ name }));
    method.params = params;
    method.paramStructure = paramStructure;
    method.result = { name: 'result', schema: m.result_schema ?? {} };
    if (m.deprecated) method.deprecated = true;
    return method;
  });
  const doc: Record<string, unknown> = { openrpc: OPENRPC_VERSION, info: docInfo };
  if (info.url) doc.servers = [{ name: 'default', url: info.url }];
  doc.methods = methods;
  return doc;
}
