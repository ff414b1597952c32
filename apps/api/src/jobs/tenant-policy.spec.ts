import { hostAllowed } from './tenant-policy';

describe('hostAllowed (a tenant allowed_hosts entry)', () => {
  const allowed = ['files.example.com', '*.cdn.example.net', '2001:db8::1', '192.0.2.7'];

  it.each([
    'files.example.com',
    'FILES.Example.COM',
    'files.example.com.',
    'a.cdn.example.net',
    'a.b.cdn.example.net',
    '2001:db8::1',
    '192.0.2.7',
  ])('allows %s', (host) => expect(hostAllowed(allowed, host)).toBe(true));

  it.each([
    'cdn.example.net', // *.suffix is below the suffix only
    'xcdn.example.net',
    'example.com',
    'sub.files.example.com', // an exact entry has no subdomains
    'files.example.com.evil.org',
    'evil-files.example.com',
    '2001:db8::2',
    '192.0.2.70',
    '',
  ])('refuses %s', (host) => expect(hostAllowed(allowed, host)).toBe(false));

  it('an empty list allows nothing', () =>
    expect(hostAllowed([], 'files.example.com')).toBe(false));
});
