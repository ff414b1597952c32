/**
 * retainFreedMemory: glibc's M_TRIM_THRESHOLD, set for the process. Its effect (freed 64 KiB socket
 * buffers reused instead of paged in again) is measured by bench:e2e (README); here, that the call
 * applies where the C library is glibc and checks its argument.
 */
import { retainFreedMemory } from '../lib/memory';

const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
const glibc = process.platform === 'linux' && !!report.header?.glibcVersionRuntime;

test('applies on glibc, reports false elsewhere', () => {
  expect(retainFreedMemory(64 * 1024 * 1024)).toBe(glibc);
  expect(retainFreedMemory(128 * 1024)).toBe(glibc); // glibc's default again
});

test('a size outside 0..1 GiB is refused, nothing changed', () => {
  for (const bad of [-1, 2 ** 31, Number.NaN, '1' as unknown as number]) {
    expect(() => retainFreedMemory(bad)).toThrow(/retainFreedMemory\(bytes\): 0\.\.1 GiB/);
  }
});
