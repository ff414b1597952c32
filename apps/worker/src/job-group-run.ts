import { closeSync, constants, openSync } from 'node:fs';
import { relative } from 'node:path';

import type { HashqConfig } from '@hashq/config';
import {
  type DigestValue,
  type JobsRepository,
  type LeasedJob,
  realRoots,
  tenantFileRoots,
  type TenantsRepository,
} from '@hashq/jobs';
import { hashFiles, type HashFilesResult } from '@hashq/native';
import { fileVersion, isWithin } from '@hashq/sources';
import type { Logger } from 'pino';

import type { CheckpointStore } from './checkpoint-store';
import { expectedDigestError } from './expected-digests';
import { LeaseLostError } from './job-errors';
import type { RunMetrics } from './worker-metrics';

export interface JobGroupHost {
  jobs: JobsRepository;
  store: CheckpointStore;
  tenants: TenantsRepository;
  config: HashqConfig;
  log: Logger;
  metrics?: RunMetrics;
  /** This worker's lease owner name. */
  owner: string;
  /** Puts a job on the hash queue as a BullMQ job of its own. */
  dispatchAlone(job: LeasedJob): Promise<void>;
}

export interface GroupCounts {
  hashed: number;
  /** Given back to the single-job path (an error to word, a checkpoint, an option). */
  released: number;
  /** Not leased: finished, canceled, or out of attempts meanwhile. */
  skipped: number;
}

/** Leased jobs that open beneath one root and hash with the same algorithms: one native call. */
interface FileSet {
  root: string;
  algorithms: string[];
  outputLength?: number;
  jobs: LeasedJob[];
  /** The jobs' paths relative to the root. */
  names: string[];
}

/**
 * One job group (HASH_GROUP_JOB): its jobs are leased in one statement, their files hashed on the
 * thread pool by hashFiles (opened beneath the tenant's root with RESOLVE_BENEATH, fstat'ed again
 * after the read, as the single-job path checks them), and their results written in one fenced
 * statement; no JavaScript stream, no queue job per file. A job this path cannot finish exactly as
 * the single-job path would (its file missing or changed, a checkpoint of an earlier attempt, a
 * path outside the roots) is released unread and dispatched alone, so every error keeps the words
 * and codes of that path. A group that throws (PostgreSQL away) is retried by BullMQ; the leases
 * it took are fenced, so a retry or a second worker can never finish a job twice.
 */
export async function runJobGroup(
  jobIds: readonly string[],
  host: JobGroupHost,
): Promise<GroupCounts> {
  const { config } = host;
  const leases = await Promise.all(
    jobIds.map((id) => host.jobs.lease(id, host.owner, config.leaseSeconds, config.maxJobAttempts)),
  );
  let skipped = 0;
  for (const [i, lease] of leases.entries()) {
    if (lease) continue;
    skipped++;
    const exhausted = await host.jobs.failExhaustedOnLease(jobIds[i], config.maxJobAttempts);
    if (exhausted)
      host.log.error(
        { jobId: jobIds[i], maxAttempts: config.maxJobAttempts, ...exhausted },
        'job failed: ATTEMPTS_EXHAUSTED',
      );
  }
  const leased = leases.filter((lease): lease is LeasedJob => lease !== null);
  const { sets, alone } = await fileSets(leased, host);
  const finishes: Promise<boolean>[] = [];
  let bytes = 0;
  for (const set of sets) {
    const hashed = await hashSet(set);
    set.jobs.forEach((job, i) => {
      if (!hashed?.ok(i)) {
        alone.push(job);
        return;
      }
      bytes += hashed.size(i);
      finishes.push(finish(job, set, hashed, i, host));
    });
  }
  const landed = await Promise.all(finishes);
  const released = await Promise.all(alone.map((job) => release(job, host)));
  host.metrics?.bytesHashed(bytes);
  const counts = {
    hashed: landed.filter(Boolean).length,
    released: released.filter(Boolean).length,
    skipped,
  };
  host.log.debug({ jobs: jobIds.length, ...counts }, 'job group done');
  return counts;
}

/** The leased jobs by root and algorithms; those for the single-job path apart. */
async function fileSets(
  leased: readonly LeasedJob[],
  host: JobGroupHost,
): Promise<{ sets: FileSet[]; alone: LeasedJob[] }> {
  const sets = new Map<string, FileSet>();
  const alone: LeasedJob[] = [];
  const rootsOf = new Map<string, string[]>();
  for (const job of leased) {
    let roots = rootsOf.get(job.tenantId);
    if (!roots) {
      const tenant = await host.tenants.settings(job.tenantId);
      roots = realRoots(tenantFileRoots(tenant?.fileRoots, host.config.fileRoots));
      rootsOf.set(job.tenantId, roots);
    }
    const path = job.source.type === 'file' ? String(job.source.path) : undefined;
    const root = path === undefined ? undefined : roots.find((base) => isWithin(base, path));
    const { customization, s3Checksum, outputLength } = job.options;
    if (path === undefined || !root || job.checkpointOffset > 0 || customization || s3Checksum) {
      alone.push(job);
      continue;
    }
    const key = `${root}\0${job.algorithms.join(',')}\0${outputLength ?? ''}`;
    const set = sets.get(key) ?? {
      root,
      algorithms: job.algorithms,
      outputLength,
      jobs: [],
      names: [],
    };
    set.jobs.push(job);
    set.names.push(relative(root, path));
    sets.set(key, set);
  }
  return { sets: [...sets.values()], alone };
}

/**
 * The set's files hashed; null when its root cannot be opened (each job then goes alone). The
 * root is opened synchronously: one syscall, cheaper than a FileHandle for every group.
 */
async function hashSet(set: FileSet): Promise<HashFilesResult | null> {
  let dir: number;
  try {
    dir = openSync(set.root, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    return null;
  }
  try {
    return await hashFiles(dir, set.names, set.algorithms, { outputLength: set.outputLength });
  } finally {
    closeSync(dir);
  }
}

/** The job's result, as HashRun's finalize writes it; false when its lease was lost meanwhile. */
async function finish(
  job: LeasedJob,
  set: FileSet,
  hashed: HashFilesResult,
  i: number,
  host: JobGroupHost,
): Promise<boolean> {
  const digests: Record<string, DigestValue> = {};
  set.algorithms.forEach((algorithm, a) => {
    const digest = hashed.digest(i, a);
    digests[algorithm] = { hex: digest.toString('hex'), base64: digest.toString('base64') };
  });
  const size = hashed.size(i);
  const error = expectedDigestError(digests, job.options.expected);
  try {
    await host.store.finish(job, {
      status: error ? 'failed' : 'succeeded',
      digests,
      totalBytes: size,
      bytesRead: job.bytesRead + size,
      error,
      sourceVersion: fileVersion({
        size: BigInt(size),
        mtimeNs: hashed.mtimeNs(i),
        ino: hashed.ino(i),
      }),
    });
  } catch (err) {
    if (!(err instanceof LeaseLostError)) throw err;
    host.log.warn(
      { jobId: job.id, fence: job.fence },
      'lease lost: another worker owns this job now',
    );
    return false;
  }
  host.log.info(
    { jobId: job.id, totalBytes: size, status: error ? 'failed' : 'succeeded', grouped: true },
    'finished',
  );
  return true;
}

/** The job back to 'queued' and on the queue alone; false when its lease was lost meanwhile. */
async function release(job: LeasedJob, host: JobGroupHost): Promise<boolean> {
  try {
    await host.store.release(job);
  } catch (err) {
    if (err instanceof LeaseLostError) return false;
    throw err;
  }
  await host.dispatchAlone(job);
  return true;
}
