/**
 * The client key of an address-keyed rate limit: IPv6 addresses grouped by prefix, IPv4-mapped and
 * IPv4-compatible ones (what IPv4 clients look like to a server bound to `::`) as plain IPv4. The same
 * keys as express-rate-limit's `ipKeyGenerator` (v8), on the library it uses for the address
 * arithmetic (ip-address), without express-rate-limit's peer dependency on Express.
 */
import { isIPv6 } from 'node:net';
import type { Address6 as Address6Class } from 'ip-address';
import { lazyRequire } from '../../lib/http/lazy-require.js';

/** ip-address, loaded by the first rate limit keyed by address. */
const loadIpAddress = lazyRequire<{ Address6: typeof Address6Class }>('ip-address');

/** `::/96`: the deprecated IPv4-compatible range (RFC 4291 §2.5.5.1). */
let ipv4CompatibleSubnet: Address6Class | undefined;

/**
 * The key of `ip`: IPv4 as it is; IPv6 with an embedded IPv4 address as that IPv4 address; other IPv6
 * addresses as their `/subnet` network (e.g. `2001:db8:1:2::/56`), or whole when `subnet` is false.
 */
export function ipKey(ip: string, subnet: number | false): string {
  // Not an IPv6 address (IPv4, or no address at all): the key is the value itself, as in express-rate-limit.
  if (typeof ip !== 'string' || !isIPv6(ip)) return ip;
  const { Address6 } = loadIpAddress();
  const address = new Address6(ip);
  ipv4CompatibleSubnet ??= new Address6('::/96');
  // The IPv4-compatible notation shares its range with `::` and `::1`: the notation tells them apart.
  if (address.isMapped4() || (address.is4() && address.isInSubnet(ipv4CompatibleSubnet))) return address.to4().correctForm();
  if (subnet) return new Address6(`${ip}/${subnet}`).networkForm();
  return ip;
}

/** Load ip-address now (when a rate limit keyed by address is created), not on the first IPv6 request. */
export function preloadIpKey(): void {
  loadIpAddress();
}

/** express-rate-limit's default `ipv6Subnet`: a /56 is what one site is usually given. */
export const DEFAULT_IP_KEY_SUBNET = 56;

/**
 * express-rate-limit's `ipKeyGenerator(ip, ipv6Subnet = 56)`, same signature and keys: an IPv4 address
 * as it is, an IPv4-mapped IPv6 address as IPv4, other IPv6 addresses as their `/ipv6Subnet` network
 * (one client may hold a whole /56 or /64: counting single addresses would let it rotate through
 * billions of them), or whole when `ipv6Subnet` is false. Use it in a custom keyGenerator that falls
 * back to the address: `keyGenerator: (req) => req.user?.id ?? ipKeyGenerator(req.ip)`.
 *
 * @example
 * import { rateLimit, ipKeyGenerator } from 'keel/middleware/rate-limit';
 * app.use(rateLimit({ windowMs: 60_000, limit: 100, keyGenerator: (req) => req.get('x-api-key') ?? ipKeyGenerator(req.ip) }));
 */
export function ipKeyGenerator(ip: string, ipv6Subnet: number | false = DEFAULT_IP_KEY_SUBNET): string {
  return ipKey(ip, ipv6Subnet);
}
