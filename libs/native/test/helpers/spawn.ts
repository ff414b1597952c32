/** Runs test/helpers/child.ts in a fresh node process. */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

export type ImplPath = 'dispatched' | 'portable';

/** A path: the dispatched one, the portable one, or the dispatched one with
 * some CPU features hidden (HASHQ_NATIVE_DISABLE). */
export function runChild<T>(
  command: string,
  input: unknown,
  impl: ImplPath | { disable: string[] },
  nodeFlags: string[] = [],
): T {
  const env = { ...process.env };
  delete env.HASHQ_NATIVE_DISABLE;
  if (impl === 'portable') env.HASHQ_NATIVE_IMPL = 'portable';
  else delete env.HASHQ_NATIVE_IMPL;
  if (typeof impl === 'object') env.HASHQ_NATIVE_DISABLE = impl.disable.join(',');
  const r = spawnSync(
    process.execPath,
    [
      ...nodeFlags,
      '-r',
      path.join(__dirname, 'register.js'),
      path.join(__dirname, 'child.ts'),
      command,
    ],
    { input: JSON.stringify(input ?? null), env, encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (r.status !== 0)
    throw new Error(`child ${command} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
