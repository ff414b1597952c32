/**
 * API_LOOP_PRIORITY: a real API process takes a digest session of 8 MiB (hashed on libuv's pool)
 * and the kernel (fields 19, 40 and 41 of /proc/<pid>/task/<tid>/stat: the nice value, the
 * real-time priority, the policy) says where each of its threads runs. `high` (the default) puts
 * the event loop and the pool threads it started LOOP_NICE_STEP below the test's own nice value
 * where the test may raise a priority (root, as CI runs), and leaves V8's helpers; `realtime`
 * puts the event loop at SCHED_FIFO LOOP_FIFO_PRIORITY and every other thread of the process at
 * HELPER_FIFO_PRIORITY; `normal` leaves every thread. Without the right, the API logs why and
 * runs.
 */
import { readFileSync } from 'node:fs';
import { getPriority } from 'node:os';

import {
  HELPER_FIFO_PRIORITY,
  LOOP_FIFO_PRIORITY,
  LOOP_NICE_STEP,
} from '../apps/api/src/common/loop-priority';
import { type ApiProcess, startApiProcess } from './helpers/api-process';
import { createTestEnv, type TestEnv } from './helpers/env';
import { STAT_NICE, STAT_POLICY, STAT_RT_PRIORITY, threadStat } from './helpers/threads';
import { MiB, nodeDigest, uploadAndGet } from './helpers/tus';

/** Whether this process may lower a nice value (root or CAP_SYS_NICE): bit 23 of CapEff. */
function mayRaisePriority(): boolean {
  const status = readFileSync('/proc/self/status', 'utf8');
  const effective = BigInt(`0x${/^CapEff:\s*([0-9a-f]+)/m.exec(status)![1]}`);
  return (effective & (1n << 23n)) !== 0n;
}

(process.platform === 'linux' ? describe : describe.skip)('API event-loop priority (e2e)', () => {
  let env: TestEnv;
  const apis: ApiProcess[] = [];
  const base = getPriority(0);

  beforeAll(async () => {
    env = await createTestEnv();
  });

  afterAll(async () => {
    await Promise.all(apis.map((api) => api.process.stop('SIGTERM')));
    await env?.cleanup();
  });

  /** An API process with `settings` that has hashed an 8 MiB session on its pool, digests checked. */
  async function apiThatHashed(settings: Record<string, string>): Promise<ApiProcess> {
    const api = await startApiProcess({ ...env.env, ...settings });
    apis.push(api);
    const data = Buffer.alloc(8 * MiB, 0x5a);
    data.writeUInt32BE(0xdecaf, 12345);
    const algorithms = ['sha256', 'sha512'];
    const session = await uploadAndGet(api.url, data, {
      chunkSize: 4 * MiB,
      headers: env.auth,
      algorithms,
    });
    expect(session.status).toBe('succeeded');
    for (const algorithm of algorithms)
      expect(session.digests[algorithm].hex).toBe(nodeDigest(algorithm, data));
    return api;
  }

  it.each([
    ['high (default)', {}, true],
    ['normal', { API_LOOP_PRIORITY: 'normal' }, false],
  ])(
    '%s',
    async (_name, settings, high) => {
      const api = await apiThatHashed(settings);
      const pid = api.process.pid;
      const threads = threadStat(pid, STAT_NICE);
      const raised = [...threads].filter(([, nice]) => nice < base);
      const listening = api.process.lines.find((line) => line.msg === 'hashq api listening');
      if (high && mayRaisePriority()) {
        const target = Math.max(-20, base - LOOP_NICE_STEP);
        expect(threads.get(pid)).toBe(target); // the event loop
        expect(listening?.loopNice).toBe(target);
        // the pool threads that hashed (4 by default) followed it; V8's helpers did not
        expect(raised.every(([, nice]) => nice === target)).toBe(true);
        expect(raised.length).toBeGreaterThanOrEqual(2);
        expect(raised.length).toBeLessThanOrEqual(5);
        expect(threads.size - raised.length).toBeGreaterThan(0);
      } else if (high) {
        expect(raised).toEqual([]);
        expect(api.process.lines.some((line) => /priority unchanged/.test(String(line.msg)))).toBe(
          true,
        );
      } else {
        expect(raised).toEqual([]);
        expect(listening?.loopNice).toBeUndefined();
      }
    },
    120_000,
  );

  it('realtime', async () => {
    const api = await apiThatHashed({ API_LOOP_PRIORITY: 'realtime' });
    const pid = api.process.pid;
    const policies = threadStat(pid, STAT_POLICY);
    const priorities = threadStat(pid, STAT_RT_PRIORITY);
    const listening = api.process.lines.find((line) => line.msg === 'hashq api listening');
    const SCHED_FIFO = 1;
    if (mayRaisePriority()) {
      expect([policies.get(pid), priorities.get(pid)]).toEqual([SCHED_FIFO, LOOP_FIFO_PRIORITY]);
      const helpers = [...policies.keys()].filter((tid) => tid !== pid);
      // V8's helpers and libuv's pool (started as the modules loaded), all below the loop
      expect(helpers.length).toBeGreaterThanOrEqual(4);
      for (const tid of helpers)
        expect([tid, policies.get(tid), priorities.get(tid)]).toEqual([
          tid,
          SCHED_FIFO,
          HELPER_FIFO_PRIORITY,
        ]);
      expect(listening?.loopFifoThreads).toBe(policies.size);
    } else {
      expect([...policies.values()].every((policy) => policy === 0)).toBe(true);
      expect(listening?.loopFifoThreads).toBeUndefined();
      expect(api.process.lines.some((line) => /not in real time/.test(String(line.msg)))).toBe(
        true,
      );
    }
  }, 120_000);
});
