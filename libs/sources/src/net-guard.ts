import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

import { SourceError } from './source-error';

/**
 * SSRF guard for remote sources (HTTP and S3).
 *
 * Every connection is checked on the address it is about to use: host names go
 * through `lookup` below (given to the HTTP agents), so the address checked is
 * the address connected to (no DNS-rebinding window between a check and the
 * connect); IP literals, which Node connects to without a lookup, are checked
 * by `assertHostAllowed` before each request (redirects included).
 *
 * Only global unicast is allowed unless HASHQ_ALLOW_HOSTS lists the address: an
 * address is judged by the longest prefix of RANGES that holds it. An IPv6
 * address that embeds IPv4 ones (mapped, compatible, SIIT, NAT64, 6to4, Teredo)
 * is judged by those IPv4 addresses.
 */

/** An address as its bytes: 4 for IPv4, 16 for IPv6. */
type Bytes = Uint8Array;

/** 'global' may be connected to; 'refused' needs HASHQ_ALLOW_HOSTS; a function gives the IPv4 addresses embedded. */
type Reach = 'global' | 'refused' | ((address: Bytes) => Bytes[]);

const GLOBAL = 'global';
const REFUSED = 'refused';
const last32 = (address: Bytes): Bytes[] => [address.subarray(12, 16)];
const sixToFour = (address: Bytes): Bytes[] => [address.subarray(2, 6)];
/** Teredo: the server's address (bits 32-63) and the client's (the last 32 bits, inverted). */
const teredo = (address: Bytes): Bytes[] => [
  address.subarray(4, 8),
  address.subarray(12, 16).map((byte) => ~byte & 255),
];

/**
 * Every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890;
 * iana.org/assignments/iana-ipv4-special-registry and iana-ipv6-special-registry, as of 2025: the
 * newest entries are 3fff::/20, 5f00::/16, 2001:1::3 and 100:0:0:1::/64), plus IPv4 multicast
 * (RFC 5771) and the IPv6 space outside global unicast 2000::/3 (RFC 4291). Every entry is REFUSED,
 * also those IANA marks "Globally Reachable" (anycast relays, AS112 sinks: no object is served
 * there); the IPv4-embedding forms are judged by what they embed, except the local-use NAT64 prefix,
 * whose layout its operator chooses. The
 * registry's IPv4-mapped ::ffff:0:0/96 is read as its IPv4 address before the table (see reachable).
 * The policy and the reasons behind these choices: docs/sources.md, "SSRF policy".
 */
const RANGES: Array<[cidr: string, reach: Reach]> = [
  ['0.0.0.0/0', GLOBAL], // IPv4 unicast
  ['0.0.0.0/8', REFUSED], // "This network" (RFC 791)
  ['0.0.0.0/32', REFUSED], // "This host on this network" (RFC 1122)
  ['10.0.0.0/8', REFUSED], // Private-Use (RFC 1918)
  ['100.64.0.0/10', REFUSED], // Shared Address Space (RFC 6598)
  ['127.0.0.0/8', REFUSED], // Loopback (RFC 1122)
  ['169.254.0.0/16', REFUSED], // Link Local (RFC 3927), the cloud metadata address 169.254.169.254
  ['172.16.0.0/12', REFUSED], // Private-Use (RFC 1918)
  ['192.0.0.0/24', REFUSED], // IETF Protocol Assignments (RFC 6890)
  ['192.0.0.0/29', REFUSED], // IPv4 Service Continuity Prefix (RFC 7335)
  ['192.0.0.8/32', REFUSED], // IPv4 dummy address (RFC 7600)
  ['192.0.0.9/32', REFUSED], // Port Control Protocol Anycast (RFC 7723)
  ['192.0.0.10/32', REFUSED], // Traversal Using Relays around NAT Anycast (RFC 8155)
  ['192.0.0.170/32', REFUSED], // NAT64/DNS64 Discovery (RFC 8880, RFC 7050)
  ['192.0.0.171/32', REFUSED], // NAT64/DNS64 Discovery (RFC 8880, RFC 7050)
  ['192.0.2.0/24', REFUSED], // Documentation, TEST-NET-1 (RFC 5737)
  ['192.31.196.0/24', REFUSED], // AS112-v4 (RFC 7535)
  ['192.52.193.0/24', REFUSED], // AMT (RFC 7450)
  ['192.88.99.0/24', REFUSED], // Deprecated, 6to4 Relay Anycast (RFC 7526)
  ['192.88.99.2/32', REFUSED], // 6a44-relay anycast address (RFC 6751)
  ['192.168.0.0/16', REFUSED], // Private-Use (RFC 1918)
  ['192.175.48.0/24', REFUSED], // Direct Delegation AS112 Service (RFC 7534)
  ['198.18.0.0/15', REFUSED], // Benchmarking (RFC 2544)
  ['198.51.100.0/24', REFUSED], // Documentation, TEST-NET-2 (RFC 5737)
  ['203.0.113.0/24', REFUSED], // Documentation, TEST-NET-3 (RFC 5737)
  ['224.0.0.0/4', REFUSED], // Multicast (RFC 5771)
  ['240.0.0.0/4', REFUSED], // Reserved (RFC 1112)
  ['255.255.255.255/32', REFUSED], // Limited Broadcast (RFC 8190, RFC 919)

  ['::/0', REFUSED], // outside global unicast: multicast ff00::/8, site-local fec0::/10, unassigned
  ['2000::/3', GLOBAL], // Global Unicast (RFC 4291)
  ['::/128', REFUSED], // Unspecified Address (RFC 4291)
  ['::1/128', REFUSED], // Loopback Address (RFC 4291)
  ['::/96', last32], // IPv4-compatible, deprecated (RFC 4291 section 2.5.5.1)
  ['::ffff:0:0:0/96', last32], // SIIT IPv4-translated (RFC 2765)
  ['64:ff9b::/96', last32], // IPv4-IPv6 Translation, well-known prefix (RFC 6052)
  ['64:ff9b:1::/48', REFUSED], // IPv4-IPv6 Translation, local use (RFC 8215)
  ['100::/64', REFUSED], // Discard-Only Address Block (RFC 6666)
  ['100:0:0:1::/64', REFUSED], // Dummy IPv6 Prefix (RFC 9780)
  ['2001::/23', REFUSED], // IETF Protocol Assignments (RFC 2928)
  ['2001::/32', teredo], // TEREDO (RFC 4380, RFC 8190)
  ['2001:1::1/128', REFUSED], // Port Control Protocol Anycast (RFC 7723)
  ['2001:1::2/128', REFUSED], // Traversal Using Relays around NAT Anycast (RFC 8155)
  ['2001:1::3/128', REFUSED], // DNS-SD Service Registration Protocol Anycast (RFC 9665)
  ['2001:2::/48', REFUSED], // Benchmarking (RFC 5180)
  ['2001:3::/32', REFUSED], // AMT (RFC 7450)
  ['2001:4:112::/48', REFUSED], // AS112-v6 (RFC 7535)
  ['2001:10::/28', REFUSED], // Deprecated, previously ORCHID (RFC 4843)
  ['2001:20::/28', REFUSED], // ORCHIDv2 (RFC 7343)
  ['2001:30::/28', REFUSED], // Drone Remote ID Protocol Entity Tags (RFC 9374)
  ['2001:db8::/32', REFUSED], // Documentation (RFC 3849)
  ['2002::/16', sixToFour], // 6to4 (RFC 3056)
  ['2620:4f:8000::/48', REFUSED], // Direct Delegation AS112 Service (RFC 7534)
  ['3fff::/20', REFUSED], // Documentation (RFC 9637)
  ['5f00::/16', REFUSED], // Segment Routing (SRv6) SIDs (RFC 9602)
  ['fc00::/7', REFUSED], // Unique-Local (RFC 4193, RFC 8190), incl. fd00:ec2::254
  ['fe80::/10', REFUSED], // Link-Local Unicast (RFC 4291)
];

/** "::ffff:127.0.0.1" → "127.0.0.1"; other addresses unchanged (lower case, no brackets). */
export function normalizeAddress(address: string): string {
  let text = address.trim().toLowerCase();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (mapped) return mapped[1];
  const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(text);
  if (mappedHex) {
    const hi = parseInt(mappedHex[1], 16);
    const lo = parseInt(mappedHex[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return text;
}

/** The bytes of an address (brackets, case and a zone id ignored); null when the text is none. */
function parseAddress(text: string): Bytes | null {
  const address = text
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '');
  const version = isIP(address);
  if (version === 4) return Uint8Array.from(address.split('.'), Number);
  if (version !== 6) return null;
  const [head, tail] = address.split('::');
  const left = wordsOf(head);
  const right = wordsOf(tail);
  const words = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return Uint8Array.from(words.flatMap((word) => [word >> 8, word & 255]));
}

/** The 16-bit words of one side of "::" (a trailing dotted quad is two words). */
function wordsOf(part: string | undefined): number[] {
  if (!part) return [];
  return part.split(':').flatMap((group) => {
    if (!group.includes('.')) return [parseInt(group, 16)];
    const [a, b, c, d] = group.split('.').map(Number);
    return [(a << 8) | b, (c << 8) | d];
  });
}

/** A network: the first `prefix` bits of `net`. */
class Cidr {
  constructor(
    private readonly net: Bytes,
    readonly prefix: number,
  ) {}

  /** "10.0.0.0/8", "[fd00::]/8", or a single address ("::ffff:a.b.c.d" as a.b.c.d); null for anything else. */
  static parse(text: string): Cidr | null {
    const [address, prefix, ...rest] = text.split('/');
    const net = parseAddress(prefix === undefined ? normalizeAddress(address) : address);
    if (!net || rest.length > 0) return null;
    if (prefix === undefined) return new Cidr(net, net.length * 8);
    if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > net.length * 8) return null;
    return new Cidr(net, Number(prefix));
  }

  contains(address: Bytes): boolean {
    if (address.length !== this.net.length) return false;
    const whole = this.prefix >> 3;
    for (let i = 0; i < whole; i++) if (address[i] !== this.net[i]) return false;
    const mask = (0xff00 >> (this.prefix & 7)) & 255;
    return mask === 0 || ((address[whole] ^ this.net[whole]) & mask) === 0;
  }
}

/** RANGES, longest prefix first, so that the first range holding an address is the one that judges it. */
const TABLE = RANGES.map(([cidr, reach]) => ({ cidr: Cidr.parse(cidr) as Cidr, reach })).sort(
  (a, b) => b.cidr.prefix - a.cidr.prefix,
);

/** How the table judges an address (0.0.0.0/0 and ::/0 hold every one). */
function reachOf(address: Bytes): Reach {
  return (TABLE.find((range) => range.cidr.contains(address)) as { reach: Reach }).reach;
}

/** IPv4-mapped addresses: to the kernel, the IPv4 address itself. */
const MAPPED = Cidr.parse('::ffff:0:0/96') as Cidr;

/**
 * Whether an address may be connected to, `listed` telling whether HASHQ_ALLOW_HOSTS lists one.
 * An embedded IPv4 address is judged by the table only: behind a translator or tunnel it is
 * another host's view of that address (64:ff9b::7f00:1 is the gateway's loopback, not ours).
 */
function reachable(address: Bytes, listed: (address: Bytes) => boolean): boolean {
  const own = MAPPED.contains(address) ? address.subarray(12) : address;
  if (listed(address) || listed(own)) return true;
  const reach = reachOf(own);
  if (typeof reach !== 'function') return reach === GLOBAL;
  return reach(own).every((embedded) => reachOf(embedded) === GLOBAL);
}

/** True when the address is not global unicast (before the allow list), or no address at all. */
export function isForbiddenAddress(address: string): boolean {
  const bytes = parseAddress(address);
  return !bytes || !reachable(bytes, () => false);
}

/** The allow list of HASHQ_ALLOW_HOSTS: host names, addresses and CIDRs. */
export class NetGuard {
  private readonly hosts = new Set<string>();
  private readonly allowed: Cidr[] = [];

  constructor(entries: readonly string[] = []) {
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (entry === '') continue;
      const cidr = Cidr.parse(entry);
      if (cidr) this.allowed.push(cidr);
      else if (entry.includes('/')) throw new Error(`HASHQ_ALLOW_HOSTS: invalid CIDR "${raw}"`);
      else this.hosts.add(entry.replace(/\.$/, ''));
    }
  }

  /** A host name listed in HASHQ_ALLOW_HOSTS may resolve to anything. */
  hostListed(hostname: string): boolean {
    return this.hosts.has(hostname.toLowerCase().replace(/\.$/, ''));
  }

  addressAllowed(address: string): boolean {
    const bytes = parseAddress(address);
    return (
      bytes !== null &&
      reachable(bytes, (candidate) => this.allowed.some((cidr) => cidr.contains(candidate)))
    );
  }

  /**
   * Checks what can be checked before connecting: a URL host that is an IP
   * literal. Host names are checked at connect time by `lookup`.
   */
  assertHostAllowed(hostname: string): void {
    if (this.hostListed(hostname) || parseAddress(hostname) === null) return;
    if (!this.addressAllowed(hostname))
      throw addressForbidden(hostname, normalizeAddress(hostname));
  }

  /**
   * A dns.lookup replacement for http(s) agents and the S3 client's handler:
   * resolves, drops every refused address, fails with SOURCE_ADDRESS_FORBIDDEN
   * when none is left. The connection uses only the addresses returned here.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    const opts = typeof options === 'object' && options !== null ? options : {};
    const wantAll = Boolean((opts as { all?: boolean }).all);
    dnsLookup(hostname, { ...opts, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return (callback as (e: Error) => void)(err);
      const usable = this.hostListed(hostname)
        ? addresses
        : addresses.filter((a) => this.addressAllowed(a.address));
      if (usable.length === 0) {
        return (callback as (e: Error) => void)(
          addressForbidden(hostname, addresses.map((a) => a.address).join(',')),
        );
      }
      if (wantAll) return (callback as (e: null, a: LookupAddress[]) => void)(null, usable);
      return (callback as (e: null, a: string, f: number) => void)(
        null,
        usable[0].address,
        usable[0].family,
      );
    });
  };
}

function addressForbidden(host: string, address: string): SourceError {
  return new SourceError(
    'SOURCE_ADDRESS_FORBIDDEN',
    `connection to ${host} (${address}) refused: not a global unicast address (HASHQ_ALLOW_HOSTS lists exceptions)`,
    { host, address },
  );
}
