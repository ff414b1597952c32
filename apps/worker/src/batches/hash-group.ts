import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { relative } from 'node:path';

import type { ItemResult, PendingItem } from '@hashq/batches/batch-items.repository';
import { createHasher, type Hasher, hashFiles } from '@hashq/native';
import type { SourceFactory, SourceSpec } from '@hashq/sources';
import { isWithin } from '@hashq/sources/open-beneath';

import { withRemoteHeapRoom } from '../heap-room';
import { classifyError } from '../job-errors';

export interface GroupSettings {
  algorithms: readonly string[];
  outputLength?: number;
  /** Real paths of the tenant's roots (inside HASHQ_FILE_ROOTS): file items open beneath them. */
  fileRoots: readonly string[];
  sources: SourceFactory;
  /** Remote items read at once. */
  remoteParallel: number;
  /** The group's last attempt: a transient fault is then the item's result too. */
  lastAttempt: boolean;
  /**
   * BATCH_SMALL_ITEM_BYTES: a remote item listed without a size that turns out this big (its
   * response's length, or the bytes read when the response has none) is not hashed here.
   */
  promoteBytes: number;
}

/** A remote item of unknown size that turned out big: it runs as an ordinary job instead. */
export interface PromotedItem {
  item: PendingItem;
  /** Its length as the response told it (null: a response without one). */
  size: number | null;
}

export interface GroupOutcome {
  results: ItemResult[];
  promoted: PromotedItem[];
}

/**
 * Hashes the small items of one group and tells each one's outcome (a result per item, never a
 * throw for one item's fault; a transient fault, e.g. S3 unreachable, is thrown so BullMQ retries
 * the group). Local files go to the native layer in one call per root (opened with
 * RESOLVE_BENEATH, read and hashed on the thread pool, no JavaScript per file); remote items are
 * streamed through their Source, a few at once, and those of unknown size that turn out big are
 * handed back as promoted (the caller makes them jobs).
 */
export async function hashGroup(
  items: readonly PendingItem[],
  settings: GroupSettings,
): Promise<GroupOutcome> {
  const files = items.filter((item) => item.source.type === 'file');
  const remote = items.filter((item) => item.source.type !== 'file');
  const fileResults = await hashFileItems(files, settings);
  const remoteOutcomes =
    remote.length === 0
      ? []
      : await withRemoteHeapRoom(() =>
          mapLimited(remote, settings.remoteParallel, (item) => hashRemoteItem(item, settings)),
        );
  const results = fileResults.map((result, i) => verify(result, files[i]));
  const promoted: PromotedItem[] = [];
  remoteOutcomes.forEach((outcome, i) => {
    if ('item' in outcome) promoted.push(outcome);
    else results.push(verify(outcome, remote[i]));
  });
  return { results, promoted };
}

/** An item with expected digests (verify mode) that hashed to others is a mismatch. */
function verify(result: ItemResult, item: PendingItem): ItemResult {
  if (result.status !== 'succeeded' || !item.expected || !result.digests) return result;
  const differing = Object.entries(item.expected).filter(
    ([algorithm, hex]) => result.digests![algorithm] !== hex.toLowerCase(),
  );
  if (differing.length === 0) return result;
  return {
    ...result,
    status: 'mismatch',
    errorCode: 'DIGEST_MISMATCH',
    errorMessage: `digest differs from the expected one: ${differing.map(([a]) => a).join(', ')}`,
  };
}

async function hashFileItems(
  items: readonly PendingItem[],
  settings: GroupSettings,
): Promise<ItemResult[]> {
  const results = new Map<number, ItemResult>();
  const byRoot = new Map<string, PendingItem[]>();
  for (const item of items) {
    const path = (item.source as { path: string }).path;
    const root = settings.fileRoots.find((candidate) => isWithin(candidate, path));
    if (!root) {
      results.set(
        item.seq,
        failed(item, 'PATH_OUTSIDE_ROOTS', 'file is outside the allowed roots'),
      );
      continue;
    }
    const rooted = byRoot.get(root);
    if (rooted) rooted.push(item);
    else byRoot.set(root, [item]);
  }
  for (const [root, rooted] of byRoot) {
    const dir = await open(root, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      const names = rooted.map((item) => beneath(root, (item.source as { path: string }).path));
      const hashed = await hashFiles(dir.fd, names, settings.algorithms, {
        outputLength: settings.outputLength,
      });
      rooted.forEach((item, i) => {
        const error = hashed.error(i);
        if (error) {
          results.set(item.seq, failed(item, error.code, error.message));
          return;
        }
        const digests: Record<string, string> = {};
        settings.algorithms.forEach((algorithm, a) => {
          digests[algorithm] = hashed.digest(i, a).toString('hex');
        });
        results.set(item.seq, {
          seq: item.seq,
          status: 'succeeded',
          size: hashed.size(i),
          digests,
        });
      });
    } finally {
      await dir.close();
    }
  }
  return items.map((item) => results.get(item.seq)!);
}

/** An empty, `.` or `..` segment: such a name needs path.relative() to be resolved. */
const UNNORMALIZED = /(^|\/)\.{0,2}(\/|$)/;

/**
 * `path` relative to `root` (isWithin holds): a slice of the path, as listings write them, rather
 * than path.relative() for every item (it resolves both paths: most of a group's garbage).
 */
function beneath(root: string, path: string): string {
  const rest = path.slice(root.endsWith('/') ? root.length : root.length + 1);
  return UNNORMALIZED.test(rest) ? relative(root, path) : rest;
}

/**
 * One remote item read and hashed whole; one listed without a size is promoted (not read on) once
 * its response's length, or the bytes read so far, reach promoteBytes: a big object gets a job's
 * checkpoints, and at most promoteBytes were read for nothing.
 */
async function hashRemoteItem(
  item: PendingItem,
  settings: GroupSettings,
): Promise<ItemResult | PromotedItem> {
  let opened;
  try {
    const source = settings.sources.create(item.source as unknown as SourceSpec);
    opened = await source.open(0, item.version);
  } catch (err) {
    return itemError(item, err, settings.lastAttempt);
  }
  const unsized = item.size === null;
  try {
    if (unsized && opened.size !== null && opened.size >= settings.promoteBytes)
      return { item, size: opened.size };
    const hashers: Hasher[] = settings.algorithms.map((name) =>
      createHasher(name, { outputLength: settings.outputLength }),
    );
    let size = 0;
    for await (const chunk of opened.stream) {
      size += chunk.length;
      if (unsized && size >= settings.promoteBytes) return { item, size: opened.size };
      for (const hasher of hashers) hasher.update(chunk);
    }
    const digests: Record<string, string> = {};
    settings.algorithms.forEach((name, a) => {
      digests[name] = Buffer.from(hashers[a].digest()).toString('hex');
    });
    return { seq: item.seq, status: 'succeeded', size, digests };
  } catch (err) {
    return itemError(item, err, settings.lastAttempt);
  } finally {
    await opened.close();
  }
}

/** A permanent fault is the item's result; a transient one fails the group (BullMQ retries it). */
function itemError(item: PendingItem, err: unknown, lastAttempt: boolean): ItemResult {
  const error = classifyError(err);
  if (!error.permanent && !lastAttempt) throw err;
  return failed(item, error.code, error.message);
}

function failed(item: PendingItem, code: string, message: string): ItemResult {
  return { seq: item.seq, status: 'failed', errorCode: code, errorMessage: message };
}

async function mapLimited<T, R>(
  values: readonly T[],
  limit: number,
  run: (value: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array<R>(values.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, values.length) }, async () => {
    while (next < values.length) {
      const index = next++;
      out[index] = await run(values[index]);
    }
  });
  await Promise.all(lanes);
  return out;
}
