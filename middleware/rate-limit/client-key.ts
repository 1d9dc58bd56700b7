/**
 * The client key of an address-keyed limit: which address (the socket's peer, Express's `req.ip`, or the
 * one a trusted proxy forwarded) and its key (ip-key.ts: IPv6 grouped by subnet).
 */
import { lazyRequire } from '../../lib/http/lazy-require.js';
import type { TrustProxySetting } from '../../lib/records/index.js';
import type { KeelRequest } from '../../lib/http/request.js';
import { ipKey, preloadIpKey } from './ip-key.js';

/** proxy-addr, loaded by the first limiter given a trust setting. */
/**
 * The part of proxy-addr keel calls, typed here: its types (@types/proxy-addr) are a devDependency, and an
 * exported `typeof import('proxy-addr')` would put them in keel's .d.ts, where a strict app
 * (`skipLibCheck: false`) cannot resolve them.
 */
interface ProxyAddrModule {
  (req: import('node:http').IncomingMessage, trust: (addr: string, i: number) => boolean): string;
  compile(val: string | string[]): (addr: string, i: number) => boolean;
}
export const proxyAddr = lazyRequire<ProxyAddrModule>('proxy-addr');

/** Default IPv6 prefix length that counts as one client: one /56 is what a single site is usually given (express-rate-limit's default). */
export const DEFAULT_IPV6_SUBNET = 56;

/** Client addresses whose IPv6 key one limiter remembers; the memo starts over when it is full. */
export const IPV6_KEY_MEMO_SIZE = 10_000;

/**
 * The default client key: ipKey (./ip-key.ts, express-rate-limit's ipKeyGenerator rules) groups IPv6
 * addresses by subnet and unwraps IPv4-mapped ones (what IPv4 clients look like to a server bound to
 * `::`), parsing the address twice (~10 µs).
 * The key only depends on the address, so it is remembered; an address without a colon is IPv4,
 * which ipKey returns as it is.
 */
export function clientKeys(subnet: number | false): (ip: string) => string {
  const memo = new Map<string, string>();
  preloadIpKey();
  return function clientKey(ip: string): string {
    if (!ip.includes(':')) return ip;
    let key = memo.get(ip);
    if (key === undefined) {
      key = ipKey(ip, subnet);
      if (memo.size >= IPV6_KEY_MEMO_SIZE) memo.clear();
      memo.set(ip, key);
    }
    return key;
  };
}

/** proxy-addr's trust function for a setting, compiled once (as Express compiles `trust proxy`). */
export function compileTrust(setting: TrustProxySetting | ((addr: string, i: number) => boolean)): ((addr: string, i: number) => boolean) | null {
  if (typeof setting === 'function') return setting;
  if (setting === false) return null;
  if (setting === true) return () => true;
  if (typeof setting === 'number') return (_addr, i) => i < setting;
  const list = typeof setting === 'string' ? setting.split(',').map((s) => s.trim()) : [...setting];
  return proxyAddr().compile(list);
}

/**
 * The client address: with a trust setting, the one proxy-addr picks from X-Forwarded-For; under
 * Express, `req.ip` (which honours `app.set('trust proxy', …)`); else the socket's peer.
 */
export function keyFromAddress(clientKey: (ip: string) => string, trust: ((addr: string, i: number) => boolean) | null): (req: KeelRequest) => string {
  if (trust !== null) {
    const addrOf = proxyAddr();
    return (req) => clientKey(addrOf(req, trust));
  }
  return (req) => {
    const ip = (req as { ip?: unknown }).ip;
    return clientKey(typeof ip === 'string' ? ip : (req.socket.remoteAddress ?? 'unknown'));
  };
}
