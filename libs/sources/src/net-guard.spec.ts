import { lookup as dnsLookup } from 'node:dns/promises';
import { isForbiddenAddress, NetGuard, normalizeAddress } from './net-guard';
import { loadRemoteConfig } from './remote-config';
import { SourceError } from './source-error';

/** The ranges of the SSRF policy (issue 4), and the allow list of HASHQ_ALLOW_HOSTS. */
describe('NetGuard', () => {
  it('refuses loopback, private, link-local, metadata, CGNAT, ULA and unspecified addresses', () => {
    const refused = [
      '127.0.0.1', '127.255.255.254', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255',
      '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fc00::1', 'fd00:ec2::254',
      'fe80::1', 'febf::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '[::1]', 'not-an-address',
    ];
    for (const address of refused) expect([address, isForbiddenAddress(address)]).toEqual([address, true]);
    const public_ = ['8.8.8.8', '172.15.255.255', '172.32.0.1', '192.169.0.1', '169.255.0.1', '100.128.0.1', '2001:4860:4860::8888', 'fec0::1'];
    for (const address of public_) expect([address, isForbiddenAddress(address)]).toEqual([address, false]);
  });

  it('normalizes IPv4-mapped IPv6 addresses', () => {
    expect(normalizeAddress('::FFFF:10.0.0.1')).toBe('10.0.0.1');
    expect(normalizeAddress('::ffff:a00:1')).toBe('10.0.0.1');
    expect(normalizeAddress('[fe80::1]')).toBe('fe80::1');
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
        guard.lookup('localhost', { all }, (err, address) => (err ? reject(err) : resolve(address))),
      );
    await expect(viaGuard(new NetGuard([]), true)).rejects.toMatchObject({ code: 'SOURCE_ADDRESS_FORBIDDEN' });
    if (resolved.some((a) => a.address === '127.0.0.1')) {
      expect(await viaGuard(new NetGuard(['127.0.0.1']), true)).toEqual([{ address: '127.0.0.1', family: 4 }]);
      expect(await viaGuard(new NetGuard(['127.0.0.1']), false)).toBe('127.0.0.1');
    }
  });

  it('remote configuration: defaults and validation', () => {
    const config = loadRemoteConfig({});
    expect([config.connectTimeoutMs, config.idleTimeoutMs, config.maxRedirects]).toEqual([15000, 30000, 5]);
    expect(config.s3).toEqual({ endpoint: undefined, region: 'us-east-1', credentials: undefined, forcePathStyle: false, maxAttempts: 4 });
    expect(config.guard.addressAllowed('127.0.0.1')).toBe(false);
    expect(() => loadRemoteConfig({ HTTP_MAX_REDIRECTS: 'x', S3_ENDPOINT: 'ftp://a', S3_ACCESS_KEY_ID: 'a' })).toThrow(
      /S3_ENDPOINT[\s\S]*S3_SECRET_ACCESS_KEY[\s\S]*HTTP_MAX_REDIRECTS/,
    );
  });
});
