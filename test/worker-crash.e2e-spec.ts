/**
 * Crash tests: real worker processes killed with SIGKILL in the middle of a
 * 1 GiB job; the next worker continues from the last checkpoint and the
 * digest still equals Node's crypto over the same file.
 */
import { fileDigest, isCheckpoint, MiB, WorkerTestEnv } from './helpers/worker-process';

const CHECKPOINT_BYTES = 16 * MiB;
const CHUNK_BYTES = 8 * MiB;
// Each kill follows a 'checkpoint >= offset' line and one PostgreSQL query while the worker keeps
// hashing (~1.3 GiB/s here): what is left after the last kill point must take far longer than
// that, or the job finishes first ('running' fails). With 512 MiB only 160 MiB (~0.12 s) was left.
const FILE_MIB = 1024;

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
      // Die between checkpoints, with reads past the last one on record. What the row says when the
      // worker is polled can be taken back before the kill lands: a checkpoint whose snapshot had not
      // counted its read-ahead chunk yet commits bytes_read = checkpoint_offset (then 'lost > 0' below
      // fails). So the worker is frozen (SIGSTOP), its statements already sent are let finish, and the
      // row is read again: only when it still shows reads past the checkpoint is the frozen worker
      // killed (nothing of it can commit any more); otherwise it goes on (SIGCONT) and this repeats.
      // bytes_read counts every attempt's reads, so earlier attempts' re-reads (readPastCheckpoints)
      // are part of bytes_read - checkpoint_offset: this attempt has read past its checkpoint only
      // when the difference exceeds them.
      const readPastByThisAttempt = (job: {
        bytes_read: number;
        checkpoint_offset: number;
      }): boolean => job.bytes_read - job.checkpoint_offset > readPastCheckpoints;
      for (;;) {
        await env.waitForJob(id, readPastByThisAttempt, worker, 20_000);
        worker.kill('SIGSTOP');
        await env.waitForWorkerStatementsDone();
        if (readPastByThisAttempt(await env.job(id))) break;
        worker.kill('SIGCONT');
      }
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
    const done = await env.waitForJob(
      id,
      (job) => job.status !== 'running' && job.status !== 'queued',
      last,
    );
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
    const resumedAt = last.lines.find(
      (line) => line.jobId === id && line.msg === 'resuming from checkpoint',
    );
    expect(resumedAt?.offset).toBeGreaterThanOrEqual(killAt[killAt.length - 1]);
    expect(await env.states(id)).toEqual(new Map()); // states are deleted once the digest is written
  }, 240_000); // 45-60 s measured here (machine shared, load 7-12): four worker start-ups, three stall recoveries
});
