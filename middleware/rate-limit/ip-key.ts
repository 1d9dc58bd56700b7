/**
 * The client key of an address-keyed rate limit: IPv6 addresses grouped by prefix, IPv4-mapped and
 * IPv4-compatible ones (what IPv4 clients look like to a server bound to `::`) as plain IPv4. The same
 * keys as express-rate-limit's `ipKeyGenerator` (v8), on the library it uses for the address
 * arithmetic (ip-address), without express-rate-limit's peer dependency on Express.
 */
import { isIPv6 } from 'node:net';
import type { Address6 as Address6Class } from 'ip-address';
import { lazyRequire } from '../../lib/lazy-require.js';

/** ip-address, loaded by the first rate limit keyed by address. */
const loadIpAddress = lazyRequire<{ Address6: typeof Address6Class }>('ip-address');

/** `::/96`: the deprecated IPv4-compatible range (RFC 4291 §2.5.5.1). */
let ipv4CompatibleSubnet: Address6Class | undefined;

/**
 * The key of `ip`: IPv4 as it is; IPv6 with an embedded IPv4 address as that IPv4 address; other IPv6
 * addresses as their `/subnet` network (e.g. `2001:db8:1:2::/56`), or whole when `subnet` is false.
 */
export function ipKey(ip: string, subnet: number | false): string {
  if (!isIPv6(ip)) return ip;
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
