/**
 * A tenant's allowed_hosts rule: an entry is a host name exactly, or `*.suffix` for any name below
 * the suffix (not the suffix itself); case and a trailing dot do not count.
 */
export function hostAllowed(allowed: readonly string[], host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return allowed.some((entry) => {
    const pattern = entry.toLowerCase().replace(/\.$/, '');
    return pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : name === pattern;
  });
}
