import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { SourceError } from './source-error.js';

/**
 * SSRF guard for remote sources (HTTP and S3).
 *
 * Every connection is checked on the address it is about to use: host names go
 * through `lookup` below (given to the HTTP agents), so the address checked is
 * the address connected to (no DNS-rebinding window between a check and the
 * connect); IP literals, which Node connects to without a lookup, are checked
 * by `assertHostAllowed` before each request (redirects included).
 *
 * Refused unless allowed by HASHQ_ALLOW_HOSTS: loopback, "this network",
 * private (RFC 1918), carrier-grade NAT, link-local (incl. the cloud metadata
 * address 169.254.169.254), IPv6 loopback/unspecified, unique-local fc00::/7
 * (incl. fd00:ec2::254) and link-local fe80::/10. IPv4-mapped IPv6 addresses
 * are checked as their IPv4 address.
 */
const FORBIDDEN_V4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
];
const FORBIDDEN_V6: Array<[string, number]> = [
  ['::1', 128],
  ['::', 128],
  ['fc00::', 7],
  ['fe80::', 10],
];

const forbidden = new BlockList();
for (const [net, prefix] of FORBIDDEN_V4) forbidden.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of FORBIDDEN_V6) forbidden.addSubnet(net, prefix, 'ipv6');

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

function family(address: string): 'ipv4' | 'ipv6' | null {
  const kind = isIP(address);
  return kind === 4 ? 'ipv4' : kind === 6 ? 'ipv6' : null;
}

/** True when the address lies in one of the refused ranges (before the allow list). */
export function isForbiddenAddress(address: string): boolean {
  const normalized = normalizeAddress(address);
  const kind = family(normalized);
  if (!kind) return true; // not an address at all: refuse
  return forbidden.check(normalized, kind);
}

/** The allow list of HASHQ_ALLOW_HOSTS: host names, addresses and CIDRs. */
export class NetGuard {
  private readonly hosts = new Set<string>();
  private readonly allowed = new BlockList();

  constructor(entries: readonly string[] = []) {
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (entry === '') continue;
      const slash = entry.indexOf('/');
      if (slash >= 0) {
        const net = normalizeAddress(entry.slice(0, slash));
        const prefix = Number(entry.slice(slash + 1));
        const kind = family(net);
        if (!kind || !Number.isInteger(prefix) || prefix < 0 || prefix > (kind === 'ipv4' ? 32 : 128)) {
          throw new Error(`HASHQ_ALLOW_HOSTS: invalid CIDR "${raw}"`);
        }
        this.allowed.addSubnet(net, prefix, kind);
      } else {
        const address = normalizeAddress(entry);
        const kind = family(address);
        if (kind) this.allowed.addAddress(address, kind);
        else this.hosts.add(entry.replace(/\.$/, ''));
      }
    }
  }

  /** HASHQ_ALLOW_HOSTS from the environment (empty by default: nothing internal is allowed). */
  static fromEnv(env: Record<string, string | undefined> = process.env): NetGuard {
    return new NetGuard((env.HASHQ_ALLOW_HOSTS ?? '').split(','));
  }

  /** A host name listed in HASHQ_ALLOW_HOSTS may resolve to anything. */
  hostListed(hostname: string): boolean {
    return this.hosts.has(hostname.toLowerCase().replace(/\.$/, ''));
  }

  addressAllowed(address: string): boolean {
    const normalized = normalizeAddress(address);
    const kind = family(normalized);
    if (!kind) return false;
    return !forbidden.check(normalized, kind) || this.allowed.check(normalized, kind);
  }

  /**
   * Checks what can be checked before connecting: a URL host that is an IP
   * literal. Host names are checked at connect time by `lookup`.
   */
  assertHostAllowed(hostname: string): void {
    const host = normalizeAddress(hostname);
    if (this.hostListed(hostname) || !family(host)) return;
    if (!this.addressAllowed(host)) throw addressForbidden(hostname, host);
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
      const usable = this.hostListed(hostname) ? addresses : addresses.filter((a) => this.addressAllowed(a.address));
      if (usable.length === 0) {
        return (callback as (e: Error) => void)(addressForbidden(hostname, addresses.map((a) => a.address).join(',')));
      }
      if (wantAll) return (callback as (e: null, a: LookupAddress[]) => void)(null, usable);
      return (callback as (e: null, a: string, f: number) => void)(null, usable[0].address, usable[0].family);
    });
  };
}

function addressForbidden(host: string, address: string): SourceError {
  return new SourceError(
    'SOURCE_ADDRESS_FORBIDDEN',
    `connection to ${host} (${address}) refused: loopback, private, link-local and metadata addresses need HASHQ_ALLOW_HOSTS`,
    { host, address },
  );
}
