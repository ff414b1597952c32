import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

import { loadConfig } from '@hashq/config';

import { isForbiddenAddress, NetGuard, normalizeAddress } from './net-guard';
import { remoteConfig } from './remote-config';
import { SourceError } from './source-error';
import { parseRemoteSource } from './source-spec';

/**
 * The address table of the SSRF policy: every entry of the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries (RFC 6890), IPv4 multicast (RFC 5771) and the IPv6 space outside 2000::/3,
 * each with its first, a middle and its last address, written out by hand. Node's BlockList is
 * the oracle that each sample lies inside its range and each neighbour just outside it.
 */
const REFUSED: Array<[range: string, ...samples: string[]]> = [
  ['0.0.0.0/8', '0.0.0.0', '0.128.0.0', '0.255.255.255'],
  ['10.0.0.0/8', '10.0.0.0', '10.128.0.0', '10.255.255.255'],
  ['100.64.0.0/10', '100.64.0.0', '100.96.0.0', '100.127.255.255'],
  ['127.0.0.0/8', '127.0.0.0', '127.128.0.0', '127.255.255.255'],
  ['169.254.0.0/16', '169.254.0.0', '169.254.169.254', '169.254.255.255'],
  ['172.16.0.0/12', '172.16.0.0', '172.24.0.0', '172.31.255.255'],
  ['192.0.0.0/24', '192.0.0.0', '192.0.0.11', '192.0.0.128', '192.0.0.255'],
  ['192.0.0.0/29', '192.0.0.0', '192.0.0.4', '192.0.0.7'],
  ['192.0.0.8/32', '192.0.0.8'],
  ['192.0.0.170/31', '192.0.0.170', '192.0.0.171'],
  ['192.0.2.0/24', '192.0.2.0', '192.0.2.128', '192.0.2.255'],
  ['192.88.99.0/24', '192.88.99.0', '192.88.99.1', '192.88.99.128', '192.88.99.255'],
  ['192.168.0.0/16', '192.168.0.0', '192.168.128.0', '192.168.255.255'],
  ['198.18.0.0/15', '198.18.0.0', '198.19.0.0', '198.19.255.255'],
  ['198.51.100.0/24', '198.51.100.0', '198.51.100.128', '198.51.100.255'],
  ['203.0.113.0/24', '203.0.113.0', '203.0.113.128', '203.0.113.255'],
  ['224.0.0.0/4', '224.0.0.0', '224.0.0.251', '232.0.0.0', '239.255.255.255'],
  ['240.0.0.0/4', '240.0.0.0', '248.0.0.0', '255.255.255.254'],
  ['255.255.255.255/32', '255.255.255.255'],
  ['::1/128', '::1'],
  ['::/128', '::'],
  [
    '64:ff9b:1::/48',
    '64:ff9b:1::',
    '64:ff9b:1::808:808',
    '64:ff9b:1:8000::',
    '64:ff9b:1:ffff:ffff:ffff:ffff:ffff',
  ],
  ['100::/64', '100::', '100::8000:0:0:0', '100::ffff:ffff:ffff:ffff'],
  ['100:0:0:1::/64', '100:0:0:1::', '100:0:0:1:8000::', '100:0:0:1:ffff:ffff:ffff:ffff'],
  ['2001::/23', '2001:1::', '2001:1::4', '2001:100::', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:2::/48', '2001:2::', '2001:2:0:8000::', '2001:2:0:ffff:ffff:ffff:ffff:ffff'],
  ['2001:10::/28', '2001:10::', '2001:18::', '2001:1f:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:db8::/32', '2001:db8::', '2001:db8:8000::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['3fff::/20', '3fff::', '3fff:800::', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['5f00::/16', '5f00::', '5f00:8000::', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fc00::/7', 'fc00::', 'fd00:ec2::254', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fe80::/10', 'fe80::', 'fe80::1%eth0', 'fea0::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fec0::/10', 'fec0::', 'fec0::1', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['ff00::/8', 'ff00::', 'ff02::1', 'ff0e::fb', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  // IPv6 outside the global unicast 2000::/3 (what no entry above covers)
  ['::/3', '0:0:0:1::', '100:0:0:2::', '1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['4000::/2', '4000::', '6000::', '7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['8000::/1', '8000::', 'c000::', 'fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
];

/** Entries IANA marks globally reachable (anycast relays, AS112 sinks): refused all the same. */
const REGISTRY_GLOBAL: Array<[range: string, ...samples: string[]]> = [
  ['192.0.0.9/32', '192.0.0.9'],
  ['192.0.0.10/32', '192.0.0.10'],
  ['192.31.196.0/24', '192.31.196.0', '192.31.196.128', '192.31.196.255'],
  ['192.52.193.0/24', '192.52.193.0', '192.52.193.128', '192.52.193.255'],
  ['192.88.99.2/32', '192.88.99.2'],
  ['192.175.48.0/24', '192.175.48.0', '192.175.48.128', '192.175.48.255'],
  ['2001:1::1/128', '2001:1::1'],
  ['2001:1::2/128', '2001:1::2'],
  ['2001:1::3/128', '2001:1::3'],
  ['2001:3::/32', '2001:3::', '2001:3:8000::', '2001:3:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:4:112::/48', '2001:4:112::', '2001:4:112:8000::', '2001:4:112:ffff:ffff:ffff:ffff:ffff'],
  ['2001:20::/28', '2001:20::', '2001:28::', '2001:2f:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:30::/28', '2001:30::', '2001:38::', '2001:3f:ffff:ffff:ffff:ffff:ffff:ffff'],
  [
    '2620:4f:8000::/48',
    '2620:4f:8000::',
    '2620:4f:8000:8000::',
    '2620:4f:8000:ffff:ffff:ffff:ffff:ffff',
  ],
];

/** Global unicast just outside a refused range (the range named first), and ordinary public hosts. */
const NEIGHBOURS: Array<[range: string, ...outside: string[]]> = [
  ['0.0.0.0/8', '1.0.0.0', '1.1.1.1'],
  ['10.0.0.0/8', '9.255.255.255', '11.0.0.0'],
  ['100.64.0.0/10', '100.63.255.255', '100.128.0.0'],
  ['127.0.0.0/8', '126.255.255.255', '128.0.0.0'],
  ['169.254.0.0/16', '169.253.255.255', '169.255.0.0'],
  ['172.16.0.0/12', '172.15.255.255', '172.32.0.0'],
  ['192.0.0.0/24', '191.255.255.255', '192.0.1.0'],
  ['192.0.2.0/24', '192.0.1.255', '192.0.3.0'],
  ['192.88.99.0/24', '192.88.98.255', '192.88.100.0'],
  ['192.168.0.0/16', '192.167.255.255', '192.169.0.0'],
  ['198.18.0.0/15', '198.17.255.255', '198.20.0.0'],
  ['198.51.100.0/24', '198.51.99.255', '198.51.101.0'],
  ['203.0.113.0/24', '203.0.112.255', '203.0.114.0'],
  ['224.0.0.0/4', '223.255.255.255', '8.8.8.8'],
  ['2001::/23', '2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '2001:200::', '2001:4860:4860::8888'],
  ['2001:db8::/32', '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db9::'],
  ['2002::/16', '2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '2003::', '2003:de:2016::1'],
  [
    '3fff::/20',
    '3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    '3fff:1000::',
    '3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  ],
  ['fc00::/7', '2000::', '2606:4700::1111', '2a00:1450:4001:80b::200e'],
];

/**
 * IPv6 addresses that embed IPv4 ones, judged by the embedded address: [address, embedded, allowed].
 * Teredo (2001::/32) embeds its server (bits 32-63) and its client (the last 32 bits inverted).
 */
const EMBEDDED: Array<[address: string, embeds: string, allowed: boolean]> = [
  ['::ffff:127.0.0.1', '127.0.0.1', false], // IPv4-mapped ::ffff:0:0/96
  ['::ffff:a9fe:a9fe', '169.254.169.254', false],
  ['::ffff:198.18.0.1', '198.18.0.1', false],
  ['::ffff:0.0.0.0', '0.0.0.0', false],
  ['::ffff:255.255.255.255', '255.255.255.255', false],
  ['::ffff:8.8.8.8', '8.8.8.8', true],
  ['0:0:0:0:0:ffff:7f00:1', '127.0.0.1', false],
  ['0:0:0:0:0:ffff:808:808', '8.8.8.8', true],
  ['::127.0.0.1', '127.0.0.1', false], // IPv4-compatible ::/96
  ['::a9fe:a9fe', '169.254.169.254', false],
  ['::224.0.0.1', '224.0.0.1', false],
  ['::8.8.8.8', '8.8.8.8', true],
  ['::ffff:0:127.0.0.1', '127.0.0.1', false], // SIIT ::ffff:0:0:0/96
  ['::ffff:0:a9fe:a9fe', '169.254.169.254', false],
  ['::ffff:0:8.8.8.8', '8.8.8.8', true],
  ['64:ff9b::127.0.0.1', '127.0.0.1', false], // NAT64 well-known prefix 64:ff9b::/96
  ['64:ff9b::a9fe:a9fe', '169.254.169.254', false],
  ['64:ff9b::10.0.0.1', '10.0.0.1', false],
  ['64:ff9b::', '0.0.0.0', false],
  ['64:ff9b::ffff:ffff', '255.255.255.255', false],
  ['64:ff9b::8.8.8.8', '8.8.8.8', true],
  ['2002:7f00:1::', '127.0.0.1', false], // 6to4 2002::/16: bits 16-47
  ['2002:a9fe:a9fe:1::1', '169.254.169.254', false],
  ['2002::', '0.0.0.0', false],
  ['2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '255.255.255.255', false],
  ['2002:808:808::1', '8.8.8.8', true],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', '65.54.227.120 / 127.0.0.1', false], // Teredo
  ['2001:0:4136:e378:8000:63bf:5601:5601', '65.54.227.120 / 169.254.169.254', false],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '65.54.227.120 / 192.0.2.45', false], // RFC 4380's example
  ['2001:0:7f00:1:8000:63bf:f7f7:f7f7', '127.0.0.1 / 8.8.8.8', false],
  ['2001::', '0.0.0.0 / 255.255.255.255', false],
  ['2001:0:ffff:ffff:ffff:ffff:ffff:ffff', '255.255.255.255 / 0.0.0.0', false],
  ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', '65.54.227.120 / 8.8.8.8', true],
];

/** Node's BlockList as the oracle: is `address` (zone id aside) inside `range`? */
function within(range: string, address: string): boolean {
  const [net, prefix] = range.split('/');
  const plain = address.split('%')[0];
  const kind = isIP(net) === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  list.addSubnet(net, Number(prefix), kind);
  return isIP(plain) === isIP(net) && list.check(plain, kind);
}

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof SourceError) return err.code;
    throw err;
  }
  return 'NO_ERROR';
};

/**
 * Rows [range, address, inside the range, allowed, not forbidden] whose last three are not
 * (inside, allowed, allowed) as expected: an empty list when the whole table holds.
 */
function wrongVerdicts(
  table: Array<[string, ...string[]]>,
  inside: boolean,
  allowed: boolean,
): unknown[][] {
  const none = new NetGuard([]);
  const rows = table.flatMap(([range, ...samples]) =>
    samples.map((address) => [
      range,
      address,
      within(range, address),
      none.addressAllowed(address),
      !isForbiddenAddress(address),
    ]),
  );
  return rows.filter(
    ([, , isInside, ...verdicts]) => isInside !== inside || verdicts.some((v) => v !== allowed),
  );
}

/** The SSRF policy (issues 4 and 12) as a table of addresses, and the allow list of HASHQ_ALLOW_HOSTS. */
describe('NetGuard', () => {
  const none = new NetGuard([]);

  it('refuses every special-purpose range, multicast, reserved space and IPv6 outside 2000::/3', () => {
    expect(wrongVerdicts(REFUSED, true, false)).toEqual([]);
  });

  it('refuses the registry entries IANA marks globally reachable too', () => {
    expect(wrongVerdicts(REGISTRY_GLOBAL, true, false)).toEqual([]);
  });

  it('allows global unicast just outside each refused range', () => {
    expect(wrongVerdicts(NEIGHBOURS, false, true)).toEqual([]);
  });

  it('judges an IPv6 address that embeds IPv4 ones by the embedded addresses', () => {
    const verdicts = EMBEDDED.map(([address, embeds]) => [
      address,
      embeds,
      embeds.split(' / ').every((v4) => none.addressAllowed(v4)),
      none.addressAllowed(address),
    ]);
    expect(verdicts).toEqual(
      EMBEDDED.map(([address, embeds, allowed]) => [address, embeds, allowed, allowed]),
    );
  });

  it('refuses what is no address, and reads brackets, case and zone ids', () => {
    for (const text of ['not-an-address', '', '1.2.3', '256.0.0.1', '::ffff:1.2.3.4.5']) {
      expect([text, isForbiddenAddress(text)]).toEqual([text, true]);
    }
    for (const text of ['[::1]', '[FE80::1%eth0]', 'FF02::1', '[::FFFF:7F00:1]']) {
      expect([text, isForbiddenAddress(text)]).toEqual([text, true]);
    }
    for (const text of ['[2606:4700::1111]', '2606:4700::1111%eth0', '2001:4860:4860::8888']) {
      expect([text, isForbiddenAddress(text)]).toEqual([text, false]);
    }
  });

  it('normalizes IPv4-mapped IPv6 addresses', () => {
    expect(normalizeAddress('::FFFF:10.0.0.1')).toBe('10.0.0.1');
    expect(normalizeAddress('::ffff:a00:1')).toBe('10.0.0.1');
    expect(normalizeAddress('[fe80::1]')).toBe('fe80::1');
  });

  it('refuses an address literal in a URL in every form the URL parser accepts', () => {
    const forbidden = [
      'http://198.18.0.1/',
      'http://3323068417/', // 198.18.0.1 in decimal
      'http://0306.022.0.1/', // octal
      'http://0xc6120001/', // hexadecimal
      'http://0xc6.0x12.0.1/',
      'http://198.18.1/', // a.b.c: the last part is 16 bits
      'http://198.18.0.1.:8080/', // trailing dot
      'http://１９８．１８．０．１/', // full-width digits and dots
      'http://224.1/',
      'http://4294967295/', // 255.255.255.255
      'http://0xf0000001/',
      'https://[::127.0.0.1]/',
      'http://[::ffff:0:127.0.0.1]/',
      'http://[64:ff9b::169.254.169.254]/latest/meta-data/',
      'http://[64:FF9B::7F00:1]:8080/',
      'http://[64:ff9b:1::808:808]/',
      'http://[2002:7f00:1::]/',
      'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
      'http://[ff02::1]/',
      'http://[fec0::1]/',
      'http://user:pw@[::ffff:0:a9fe:a9fe]/x',
    ];
    for (const url of forbidden) {
      expect([url, codeOf(() => parseRemoteSource(url, none))]).toEqual([
        url,
        'SOURCE_ADDRESS_FORBIDDEN',
      ]);
      const asObject = codeOf(() => parseRemoteSource({ type: 'http', url }, none));
      expect([url, asObject]).toEqual([url, 'SOURCE_ADDRESS_FORBIDDEN']);
    }
    // The URL parser refuses zone ids; global addresses in any form pass.
    expect(codeOf(() => parseRemoteSource('http://[fe80::1%25eth0]/', none))).toBe(
      'SOURCE_UNSUPPORTED',
    );
    const global = [
      'http://134744072/', // 8.8.8.8
      'http://[64:ff9b::808:808]/',
      'http://[2002:808:808::1]/',
      'http://[2606:4700::1111]/',
    ];
    for (const url of global) {
      expect([url, codeOf(() => parseRemoteSource(url, none))]).toEqual([url, 'NO_ERROR']);
    }
  });

  it('HASHQ_ALLOW_HOSTS exempts listed addresses, CIDRs and names; an embedded IPv4 one only when mapped', () => {
    const guard = new NetGuard([
      '198.18.0.0/15',
      '224.0.0.251',
      '64:ff9b:1::/48',
      '100::/64',
      '2002:c612::/32',
      'Nat64.internal',
      '127.0.0.1',
    ]);
    const allowed = [
      '198.18.0.1',
      '198.19.255.255',
      '::ffff:198.18.0.1',
      '0:0:0:0:0:ffff:c612:1',
      '224.0.0.251',
      '64:ff9b:1::a9fe:a9fe',
      '100::1',
      '127.0.0.1',
      '::ffff:127.0.0.1',
      '2002:c612:1::',
      '2002:c612:ffff::1',
    ];
    for (const address of allowed)
      expect([address, guard.addressAllowed(address)]).toEqual([address, true]);
    // Behind a translator or tunnel an embedded address is another host's view of it: listing it there allows nothing.
    const refused = [
      '224.0.0.252',
      '127.0.0.2',
      '100:0:0:1::1',
      '169.254.169.254',
      '2002:c613::1',
      '64:ff9b::c612:1',
      '::c612:1',
      '::ffff:0:c612:1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
      '2001:0:4136:e378:8000:63bf:80ff:fffe',
    ];
    for (const address of refused)
      expect([address, guard.addressAllowed(address)]).toEqual([address, false]);
    expect(guard.hostListed('NAT64.internal.')).toBe(true);
    expect(() => guard.assertHostAllowed('nat64.internal')).not.toThrow();
    expect(() => guard.assertHostAllowed('[64:ff9b:1::1]')).not.toThrow();
    expect(codeOf(() => guard.assertHostAllowed('[64:ff9b::7f00:1]'))).toBe(
      'SOURCE_ADDRESS_FORBIDDEN',
    );
  });

  it('allows listed addresses, CIDRs and host names, nothing else', () => {
    const guard = new NetGuard(['127.0.0.1', '10.1.0.0/16', 'files.internal', ' ', 'FD00::/8']);
    expect(guard.addressAllowed('127.0.0.1')).toBe(true);
    expect(guard.addressAllowed('::ffff:127.0.0.1')).toBe(true);
    expect(guard.addressAllowed('127.0.0.2')).toBe(false);
    expect(guard.addressAllowed('10.1.200.3')).toBe(true);
    expect(guard.addressAllowed('10.2.0.1')).toBe(false);
    expect(guard.addressAllowed('fd12::1')).toBe(true);
    expect(guard.addressAllowed('fe80::1')).toBe(false);
    expect(guard.hostListed('FILES.internal.')).toBe(true);
    expect(() => guard.assertHostAllowed('169.254.169.254')).toThrow(SourceError);
    expect(() => guard.assertHostAllowed('files.internal')).not.toThrow();
    expect(() => new NetGuard(['10.0.0.0/33'])).toThrow(/invalid CIDR/);
    expect(() => new NetGuard(['nonsense/8'])).toThrow(/invalid CIDR/);
  });

  it('lookup drops refused addresses and fails with SOURCE_ADDRESS_FORBIDDEN when none is left', async () => {
    const resolved = await dnsLookup('localhost', { all: true });
    const viaGuard = (guard: NetGuard, all: boolean) =>
      new Promise<unknown>((resolve, reject) =>
        guard.lookup('localhost', { all }, (err, address) =>
          err ? reject(err) : resolve(address),
        ),
      );
    await expect(viaGuard(new NetGuard([]), true)).rejects.toMatchObject({
      code: 'SOURCE_ADDRESS_FORBIDDEN',
    });
    if (resolved.some((a) => a.address === '127.0.0.1')) {
      expect(await viaGuard(new NetGuard(['127.0.0.1']), true)).toEqual([
        { address: '127.0.0.1', family: 4 },
      ]);
      expect(await viaGuard(new NetGuard(['127.0.0.1']), false)).toBe('127.0.0.1');
    }
  });

  it('remote configuration: the guard allows what HASHQ_ALLOW_HOSTS lists, nothing internal by default', () => {
    expect(remoteConfig().guard.addressAllowed('127.0.0.1')).toBe(false);
    const config = remoteConfig(
      loadConfig({ HASHQ_ALLOW_HOSTS: '127.0.0.1' }, { requireStateKeys: false }),
    );
    expect(config.guard.addressAllowed('127.0.0.1')).toBe(true);
    expect(config.guard.addressAllowed('127.0.0.2')).toBe(false);
  });
});
