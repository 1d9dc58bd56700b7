/**
 * Whether a request's `Origin` is the request's own origin. Browsers send `Origin` on same-origin
 * POSTs (and other non-GET requests) too (Fetch standard, "append a request `Origin` header"); such
 * a request is not a CORS request, so a CorsConfig must neither refuse it nor decorate it.
 *
 * The own origin is the scheme and the Host header (RFC 6454 §4). Behind a trusted proxy
 * (ServerConfig.trust_proxy, as Express's 'trust proxy') X-Forwarded-Proto / X-Forwarded-Host say what
 * the browser used; from anyone else they are ignored, or a client could make a cross-origin request
 * look same-origin.
 */
import type ProxyAddr from 'proxy-addr';
import type { TLSSocket } from 'node:tls';
import { lazyRequire } from '../../lib/http/lazy-require.js';
import type { TrustProxySetting } from '../../lib/records/server.js';
import type { KeelRequest } from '../../lib/http/request.js';

const proxyAddr = lazyRequire<typeof ProxyAddr>('proxy-addr');

/** Which peer addresses may set X-Forwarded-*: proxy-addr's trust function, or null for none. */
export type TrustFunction = ((addr: string, i: number) => boolean) | null;

/** Compile a trust_proxy setting once (as Express compiles 'trust proxy'). */
export function compileTrust(setting: TrustProxySetting | undefined): TrustFunction {
  if (setting === undefined || setting === false) return null;
  if (setting === true) return () => true;
  if (typeof setting === 'number') return (_addr, i) => i < setting;
  const list = typeof setting === 'string' ? setting.split(',').map((s) => s.trim()) : [...setting];
  return proxyAddr().compile(list);
}

/** The first element of a comma-separated header (the proxy closest to the client wrote it). */
function first(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  const comma = text.indexOf(',');
  return (comma === -1 ? text : text.slice(0, comma)).trim() || undefined;
}

/** The request's own origin (`scheme://host[:port]`, serialised), or undefined without a usable Host. */
export function ownOrigin(req: KeelRequest, trust: TrustFunction): string | undefined {
  let scheme = (req.socket as TLSSocket | undefined)?.encrypted ? 'https' : 'http';
  let host = req.headers.host;
  if (trust !== null && req.socket && trust(req.socket.remoteAddress ?? '', 0)) {
    scheme = first(req.headers['x-forwarded-proto'])?.toLowerCase() ?? scheme;
    host = first(req.headers['x-forwarded-host']) ?? host;
  } else if (trust === null) {
    // Under Express, req.protocol honours the app's own 'trust proxy' setting.
    const protocol = (req as { protocol?: unknown }).protocol;
    if (protocol === 'http' || protocol === 'https') scheme = protocol;
  }
  if (!host) return undefined;
  const plain = `${scheme}://${host}`;
  try {
    // Serialised as browsers send Origin: lower-case host, default port dropped.
    return new URL(plain).origin;
  } catch {
    return undefined;
  }
}

/** True when `origin` (the request's Origin header) is the request's own origin. */
export function isSameOrigin(req: KeelRequest, origin: string, trust: TrustFunction): boolean {
  const host = req.headers.host;
  if (host === undefined) return false;
  if (trust === null) {
    // Cheap refusal of the common cross-origin case, before any URL parsing: the authorities differ
    // (unless the Host spells a default port or upper case, which only the serialisation can settle).
    const authority = origin.slice(origin.indexOf('://') + 3);
    if (authority !== host && authority !== host.toLowerCase() && !host.endsWith(':80') && !host.endsWith(':443')) return false;
  }
  return ownOrigin(req, trust) === origin;
}
