import { isIPv4, isIPv6 } from 'node:net';

/** IPv6 groups of `address`, all eight ('::' expanded, a trailing dotted IPv4 as two groups). */
function ipv6Groups(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const hex = dotted
    ? address.slice(0, dotted.index) +
      `${((+dotted[1] << 8) | +dotted[2]).toString(16)}:${((+dotted[3] << 8) | +dotted[4]).toString(16)}`
    : address;
  const [head, tail] = hex.split('::');
  const part = (text: string | undefined) => (text ? text.split(':') : []);
  const left = part(head);
  const right = part(tail);
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16));
}

/**
 * The client a request without a key is counted as: its IPv4 address, or the /64 of its IPv6
 * address (one host usually owns a whole /64 and could rotate through it). IPv4-mapped IPv6
 * addresses count as the IPv4 address. The socket's address: a proxy in front of the API is not
 * trusted to name the client.
 */
export function clientAddress(remote: string | undefined): string {
  const address = (remote ?? '')
    .replace(/%.*$/, '')
    .replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  if (isIPv4(address) || !isIPv6(address)) return address || 'unknown';
  const prefix = ipv6Groups(address)
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':');
  return `${prefix}::/64`;
}
