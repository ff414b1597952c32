/**
 * Crash tests: real worker processes killed with SIGKILL in the middle of a
 * 512 MiB job; the next worker continues from the last checkpoint and the
 * digest still equals Node's crypto over the same file.
 */
import { fileDigest, isCheckpoint, MiB, WorkerTestEnv } from './helpers/worker-process';

const CHECKPOINT_BYTES = 16 * MiB;
const CHUNK_BYTES = 8 * MiB;
const FILE_MIB = 512;

describe('worker crash recovery (SIGKILL)', () => {
  const env = new WorkerTestEnv();
  let path: string;
  let expected: { sha256: string; sha1: string };

  beforeAll(async () => {
    await env.setUp();
    path = await env.createFile('big.bin', FILE_MIB);
    expected = { sha256: await fileDigest('sha256', path), sha1: await fileDigest('sha1', path) };
  });
  afterAll(() => env.tearDown());

  const settings = {
    CHECKPOINT_BYTES: String(CHECKPOINT_BYTES),
    CHUNK_BYTES: String(CHUNK_BYTES),
    CHECKPOINT_SECONDS: '3600', // bytes decide: the bound below is about them
  };

  it('survives several kills of the same job and re-reads at most one interval per kill', async () => {
    const id = await env.submit(path, ['sha256', 'sha1']);
    const killAt = [96 * MiB, 224 * MiB, 352 * MiB];
    // bytes_read - checkpoint_offset: what was read past the last checkpoint, summed over the killed attempts
    let readPastCheckpoints = 0;
    for (const offset of killAt) {
      const worker = env.startWorker(settings);
      await worker.waitForLog((line) => line.jobId === id && isCheckpoint(offset)(line), 40_000);
      // die between checkpoints, with reads past the last one on record
      await env.waitForJob(id, (job) => job.bytes_read > job.checkpoint_offset, worker, 20_000);
      worker.kill('SIGKILL');
      const exit = await worker.exited;
      expect(exit.signal).toBe('SIGKILL');
      await env.waitForWorkerSessionsGone(); // a statement sent just before the kill may still commit
      const row = await env.job(id);
      expect(row.status).toBe('running'); // nobody released it: the worker died
      expect(row.checkpoint_offset).toBeGreaterThanOrEqual(offset);
      const lostByThisKill = row.bytes_read - row.checkpoint_offset - readPastCheckpoints;
      expect(lostByThisKill).toBeGreaterThan(0);
      expect(lostByThisKill).toBeLessThanOrEqual(CHECKPOINT_BYTES + CHUNK_BYTES);
      readPastCheckpoints += lostByThisKill;
    }

    const last = env.startWorker(settings);
    const done = await env.waitForJob(id, (job) => job.status !== 'running' && job.status !== 'queued', last);
    await last.stop();

    expect(done.status).toBe('succeeded');
    expect(done.digests?.sha256.hex).toBe(expected.sha256);
    expect(done.digests?.sha1.hex).toBe(expected.sha1);
    expect(done.total_bytes).toBe(FILE_MIB * MiB);
    expect(done.resumes).toBeGreaterThanOrEqual(killAt.length);
    expect(done.attempts).toBe(killAt.length + 1);
    const reread = done.bytes_read - done.total_bytes!;
    process.stdout.write(
      `crash test: ${killAt.length} SIGKILLs, attempts=${done.attempts} resumes=${done.resumes} ` +
        `totalBytes=${done.total_bytes} bytesRead=${done.bytes_read} re-read=${reread} ` +
        `(bound ${killAt.length} x (${CHECKPOINT_BYTES} + ${CHUNK_BYTES})) sha256=${done.digests?.sha256.hex}\n`,
    );
    // every byte a killed worker had read past its last checkpoint was read again by its successor, nothing else
    expect(reread).toBe(readPastCheckpoints);
    expect(reread).toBeLessThanOrEqual(killAt.length * (CHECKPOINT_BYTES + CHUNK_BYTES));
    // each resumed attempt started exactly at a checkpoint written by the killed one
    const resumedAt = last.lines.find((line) => line.jobId === id && line.msg === 'resuming from checkpoint');
    expect(resumedAt?.offset).toBeGreaterThanOrEqual(killAt[killAt.length - 1]);
    expect(await env.states(id)).toEqual(new Map()); // states are deleted once the digest is written
  }, 240_000); // 45-60 s measured here (machine shared, load 7-12): four worker start-ups, three stall recoveries
});
