/**
 * Where a postback may go (SSRF): a tracker's URL is typed by a manager but resolved by DNS we
 * do not control, so the check is made on the address actually connected to, at connect time
 * (`guardedLookup`), not only on the name when the URL is added: a name that later resolves to
 * 127.0.0.1, 10.x or 169.254.169.254 (cloud metadata) is refused then. Private, loopback,
 * link-local, unspecified, multicast and reserved ranges are refused unless the definition allows
 * private destinations.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96]] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** Why an address may not be a destination, or undefined when it may. */
export function blockedAddressReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  // An IPv4-mapped IPv6 address is the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blockedAddressReason(mapped[1] as string);
  if (blocked.check(address, family === 4 ? 'ipv4' : 'ipv6')) return `${address} is a private, loopback, link-local or reserved address`;
  return undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http.request that resolves the name and refuses a blocked address (unless allowed). */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses) => {
      if (error) return callback(error, '');
      const list = addresses as LookupAddress[];
      if (!allowPrivate) {
        for (const a of list) {
          const why = blockedAddressReason(a.address);
          if (why) return callback(Object.assign(new Error(`refused destination ${hostname}: ${why} (the postback does not allow private destinations)`), { code: 'EDESTBLOCKED' }), '');
        }
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} resolves to no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}

/** Resolves a URL's host now and names the problem: what `postbacks add` checks. */
export async function checkDestination(url: URL, allowPrivate: boolean): Promise<string | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses: LookupAddress[] = isIP(host) ? [{ address: host, family: isIP(host) }] : await new Promise((resolve) => {
    dnsLookup(host, { all: true }, (error, list) => resolve(error ? [] : list));
  });
  if (addresses.length === 0) return `${host} does not resolve`;
  if (allowPrivate) return undefined;
  for (const a of addresses) {
    const why = blockedAddressReason(a.address);
    if (why) return `${host}: ${why}; give --allow-private only for a tracker inside your own network`;
  }
  return undefined;
}
