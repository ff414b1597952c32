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

import type { CheckpointStore, FinalResult, FinishItem } from './checkpoint-store';
import { expectedDigestError } from './expected-digests';
import type { RunMetrics } from './worker-metrics';

export interface JobGroupHost {
  jobs: JobsRepository;
  store: CheckpointStore;
  tenants: TenantsRepository;
  config: HashqConfig;
  log: Logger;
  metrics?: RunMetrics;
  /** Puts a job on the hash queue as a BullMQ job of its own. */
  dispatchAlone(job: LeasedJob): Promise<void>;
}

export interface GroupCounts {
  hashed: number;
  /** Dispatched alone, to the single-job path (an error to word, a checkpoint, an option). */
  alone: number;
  /** Not queued any more (finished, canceled, running elsewhere), or not landed for that reason. */
  skipped: number;
}

/** Queued jobs that open beneath one root and hash with the same algorithms: one native call. */
interface FileSet {
  root: string;
  algorithms: string[];
  outputLength?: number;
  jobs: LeasedJob[];
  /** The jobs' paths relative to the root. */
  names: string[];
}

/**
 * One job group (HASH_GROUP_JOB). Its queued jobs are read in one statement, their files hashed on
 * the thread pool by hashFiles (opened beneath the tenant's root with RESOLVE_BENEATH, fstat'ed
 * again after the read, as the single-job path checks them), and their results written in one
 * statement that lands only for jobs still queued with the fence they were read with: no lease,
 * no queue job and no JavaScript stream per file. A cancel or a lease of the single-job path that
 * comes first wins; a retry of the group (BullMQ, after a crash) finds finished jobs no longer
 * queued. A job this path cannot end as the single-job path would (its file missing or changed, a
 * checkpoint of an earlier attempt, a path outside the roots, attempts used up) is dispatched
 * alone, unread, so every error keeps the words and codes of that path.
 */
export async function runJobGroup(
  jobIds: readonly string[],
  host: JobGroupHost,
): Promise<GroupCounts> {
  const queued = await host.jobs.queuedOfGroup(jobIds);
  const { sets, alone } = await fileSets(queued, host);
  const finishes: FinishItem[] = [];
  for (const set of sets) {
    const hashed = await hashSet(set);
    set.jobs.forEach((job, i) => {
      if (hashed?.ok(i)) finishes.push({ job, result: result(job, set, hashed, i) });
      else alone.push(job);
    });
  }
  const landed = finishes.length > 0 ? await host.store.finishQueued(finishes) : new Set();
  for (const job of alone) await host.dispatchAlone(job);
  let bytes = 0;
  for (const { job, result } of finishes) {
    bytes += result.totalBytes;
    if (landed.has(job.id))
      host.log.info(
        { jobId: job.id, totalBytes: result.totalBytes, status: result.status, grouped: true },
        'finished',
      );
  }
  host.metrics?.bytesHashed(bytes);
  const counts = {
    hashed: landed.size,
    alone: alone.length,
    skipped: jobIds.length - landed.size - alone.length,
  };
  host.log.debug({ jobs: jobIds.length, ...counts }, 'job group done');
  return counts;
}

/** The queued jobs by root and algorithms; those for the single-job path apart. */
async function fileSets(
  queued: readonly LeasedJob[],
  host: JobGroupHost,
): Promise<{ sets: FileSet[]; alone: LeasedJob[] }> {
  const sets = new Map<string, FileSet>();
  const alone: LeasedJob[] = [];
  const rootsOf = new Map<string, string[]>();
  for (const job of queued) {
    let roots = rootsOf.get(job.tenantId);
    if (!roots) {
      const tenant = await host.tenants.settings(job.tenantId);
      roots = realRoots(tenantFileRoots(tenant?.fileRoots, host.config.fileRoots));
      rootsOf.set(job.tenantId, roots);
    }
    const path = job.source.type === 'file' ? String(job.source.path) : undefined;
    const root = path === undefined ? undefined : roots.find((base) => isWithin(base, path));
    const { customization, s3Checksum, outputLength } = job.options;
    const single =
      job.checkpointOffset > 0 || job.attempts >= host.config.maxJobAttempts || customization;
    if (path === undefined || !root || single || s3Checksum) {
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

/** The job's result, as HashRun's finalize writes it. */
function result(job: LeasedJob, set: FileSet, hashed: HashFilesResult, i: number): FinalResult {
  const digests: Record<string, DigestValue> = {};
  set.algorithms.forEach((algorithm, a) => {
    const digest = hashed.digest(i, a);
    digests[algorithm] = { hex: digest.toString('hex'), base64: digest.toString('base64') };
  });
  const size = hashed.size(i);
  const error = expectedDigestError(digests, job.options.expected);
  return {
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
  };
}
