/**
 * WORKER_HASH_PRIORITY: a real worker process hashes a file job; the kernel (field 41 of
 * /proc/<pid>/task/<tid>/stat: 0 SCHED_OTHER, 5 SCHED_IDLE) says which of its threads ran at
 * which policy. `idle` (the default) puts the pool threads that hashed at SCHED_IDLE and leaves
 * the event loop (leases, heartbeats) alone; `normal` leaves every thread.
 */
import { STAT_POLICY, threadStat } from './helpers/threads';
import { fileDigest, hasFinished, WorkerTestEnv } from './helpers/worker-process';

const SCHED_IDLE = 5;

(process.platform === 'linux' ? describe : describe.skip)('worker hash priority', () => {
  const env = new WorkerTestEnv();

  beforeAll(() => env.setUp());
  afterAll(() => env.tearDown());

  it.each([
    ['idle (default)', {}, true],
    ['normal', { WORKER_HASH_PRIORITY: 'normal' }, false],
  ])(
    '%s',
    async (_name, settings, idle) => {
      const path = await env.createFile(`priority-${String(idle)}.bin`, 24);
      const worker = env.startWorker(settings);
      const id = await env.submit(path, ['sha256', 'sha512']);
      const done = await env.waitForJob(id, hasFinished, worker);
      expect(done.status).toBe('succeeded');
      expect(done.digests?.sha256.hex).toBe(await fileDigest('sha256', path));
      expect(done.digests?.sha512.hex).toBe(await fileDigest('sha512', path));

      const threads = threadStat(worker.pid, STAT_POLICY);
      const idleThreads = [...threads].filter(([, policy]) => policy === SCHED_IDLE);
      expect(threads.get(worker.pid)).toBe(0); // the event loop
      expect(idleThreads.length > 0).toBe(idle);
      // the thread pool has 4 threads: at most those are moved
      expect(idleThreads.length).toBeLessThanOrEqual(4);
      await worker.stop('SIGTERM');
    },
    120_000,
  );
});
