import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, realpath, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { projectRoot } from '@hashq/config';

import { FileRoots } from './file-roots';
import { FileSource, fileVersion } from './file-source';
import type { SourceVersion } from './source';
import { SourceError } from './source-error';

/** Bounds of the attack: whichever comes first. */
const ATTEMPTS = 2_000;
const MAX_ATTEMPT_MS = 5_000;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Every number and string inside a value (error details, a version), however nested. */
function leaves(value: unknown): unknown[] {
  if (value === null || typeof value !== 'object') return [value];
  return Object.values(value).flatMap(leaves);
}

/** What one attempt shows its caller: the bytes read (when it read) and every identity it reported. */
interface Seen {
  digest?: string;
  identity: unknown;
}

async function read(source: FileSource, expected: SourceVersion | null): Promise<Seen> {
  const opened = await source.open(0, expected);
  try {
    const parts: Buffer[] = [];
    for await (const chunk of opened.stream) parts.push(Buffer.from(chunk));
    return { digest: sha256(Buffer.concat(parts)), identity: [opened.version, opened.size] };
  } finally {
    await opened.close();
  }
}

/** The API's check at submission: the size it reports becomes the job's totalBytes. */
async function submit(roots: FileRoots, path: string): Promise<Seen> {
  const { stats } = await roots.locateRegularFile(path);
  return { identity: [Number(stats.size), stats.ino.toString()] };
}

/**
 * A user who can write inside a root swaps `root/dir` with a symlink to a
 * directory outside it (renameat2 RENAME_EXCHANGE, in a tight loop, from a
 * small C program) while `root/dir/f` is opened again and again: no open may
 * ever read the outside file, and no result or error may show its size, inode
 * or mtime.
 */
describe('FileSource under a symlink swap race', () => {
  let base: string;
  let root: string;
  let swapper: ChildProcess;
  let insideVersion: SourceVersion;
  const inside = randomBytes(4_096);
  const outside = randomBytes(10_007);

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'hashq-race-')));
    root = join(base, 'root');
    await mkdir(join(root, 'dir'), { recursive: true });
    await mkdir(join(base, 'outside'));
    await writeFile(join(root, 'dir', 'f'), inside);
    await writeFile(join(base, 'outside', 'f'), outside);
    const past = new Date('2001-02-03T04:05:06.789Z'); // an mtime the inside file cannot share
    await utimes(join(base, 'outside', 'f'), past, past);
    await symlink(join(base, 'outside'), join(root, 'link'));
    insideVersion = fileVersion(await stat(join(root, 'dir', 'f'), { bigint: true }));
    const program = join(base, 'rename-exchange');
    execFileSync('cc', [
      '-O2',
      '-o',
      program,
      join(projectRoot(), 'libs/sources/test/rename-exchange.c'),
    ]);
    swapper = spawn(program, [join(root, 'dir'), join(root, 'link'), '60'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(swapper.stdout!, 'data')) as [Buffer];
    expect(line.toString()).toBe('ready\n');
  });

  afterAll(async () => {
    if (swapper.exitCode === null && swapper.signalCode === null) {
      swapper.kill('SIGKILL');
      await once(swapper, 'exit');
    }
    await rm(base, { recursive: true, force: true });
  });

  it('never yields the outside file nor reveals its size, inode or mtime', async () => {
    const outsideVersion = fileVersion(await stat(join(base, 'outside', 'f'), { bigint: true }));
    const secrets = new Set<unknown>([
      outsideVersion.size,
      outsideVersion.ino,
      outsideVersion.mtimeMs,
    ]);
    expect(insideVersion.size).not.toBe(outsideVersion.size);
    expect(insideVersion.ino).not.toBe(outsideVersion.ino);
    expect(insideVersion.mtimeMs).not.toBe(outsideVersion.mtimeMs);

    const path = join(root, 'dir', 'f');
    const roots = new FileRoots([root]);
    const source = new FileSource(path, roots);
    const attempts: Array<() => Promise<Seen>> = [
      () => read(source, null), // a first attempt
      () => read(source, insideVersion), // a resumed attempt
      async () => ({ identity: await source.currentVersion() }),
      () => submit(roots, path),
    ];
    const tally = {
      attempts: 0,
      inside: 0,
      outsideBytes: 0,
      otherBytes: 0,
      identityLeaks: 0,
      refused: 0,
    };
    const codes: Record<string, number> = {};
    const started = Date.now();
    for (; tally.attempts < ATTEMPTS && Date.now() - started < MAX_ATTEMPT_MS; tally.attempts++) {
      let seen: Seen;
      try {
        seen = await attempts[tally.attempts % attempts.length]();
      } catch (err) {
        if (!(err instanceof SourceError)) throw err;
        tally.refused++;
        codes[err.code] = (codes[err.code] ?? 0) + 1;
        seen = { identity: [err.message, err.details] };
      }
      if (seen.digest === sha256(inside)) tally.inside++;
      else if (seen.digest === sha256(outside)) tally.outsideBytes++;
      else if (seen.digest !== undefined) tally.otherBytes++;
      if (leaves(seen.identity).some((value) => secrets.has(value))) tally.identityLeaks++;
    }
    // The race was run: both states of the swap were met.
    expect(tally.inside).toBeGreaterThan(0);
    expect(tally.refused).toBeGreaterThan(0);
    const result = { ...tally, codes }; // the whole tally is shown when it fails
    expect(result).toEqual({ ...result, outsideBytes: 0, otherBytes: 0, identityLeaks: 0 });
  }, 60_000);
});
