/**
 * gRPC metadata ↔ HTTP/2 headers (gRPC over HTTP/2, "Custom-Metadata"): lower-case keys, printable ASCII
 * values, and `-bin` keys carrying base64-encoded bytes.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import type { GrpcMetadataInit } from './status.js';
import type { GrpcIncomingMetadata } from './router.js';

/** RFC 9113 §8.2.1 field names, lower-case; gRPC allows this subset for custom metadata. */
const METADATA_KEY = /^[0-9a-z_.-]+$/;
// Headers that are transport, not application metadata (gRPC over HTTP/2, "Requests").
export const RESERVED = new Set(['content-type', 'te', 'grpc-timeout', 'grpc-encoding', 'grpc-accept-encoding', 'connection', 'host', 'content-length']);

export function incomingMetadata(headers: IncomingHttpHeaders): GrpcIncomingMetadata {
  const out: Record<string, string | Buffer> = {};
  for (const [key, raw] of Object.entries(headers)) {
    if (key.startsWith(':') || RESERVED.has(key) || raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    out[key] = key.endsWith('-bin') ? Buffer.from(value, 'base64') : value;
  }
  return out;
}

/** Metadata → HTTP/2 headers; bad keys/values throw (a programming error in the handler, reported as UNKNOWN). */
export function outgoingHeaders(md: GrpcMetadataInit | undefined, into: OutgoingHttpHeaders): OutgoingHttpHeaders {
  for (const [k, v] of Object.entries(md ?? {})) {
    const key = k.toLowerCase();
    if (!METADATA_KEY.test(key) || key.startsWith('grpc-') || RESERVED.has(key)) throw new TypeError(`Invalid or reserved gRPC metadata key "${k}"`);
    const values = (Array.isArray(v) ? v : [v]) as (string | Buffer)[];
    const wire = values.map((x) => {
      if (Buffer.isBuffer(x)) {
        if (!key.endsWith('-bin')) throw new TypeError(`Binary gRPC metadata needs a "-bin" key, got "${k}"`);
        return x.toString('base64');
      }
      if (key.endsWith('-bin')) return Buffer.from(x).toString('base64');
      if (!/^[\x20-\x7e]*$/.test(x)) throw new TypeError(`gRPC metadata "${k}" must be printable ASCII`);
      return x;
    });
    into[key] = wire.length === 1 ? wire[0]! : wire;
  }
  return into;
}

