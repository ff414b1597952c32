/**
 * API_HEAP_RETAIN_BYTES: a real API process takes digest sessions of 8 MiB PATCHes, and the kernel
 * (field 10 of /proc/<pid>/stat, minor faults, all threads) says how often it faulted memory in:
 * with the default, under 5 % of a PATCH's pages, every run. With `0` it says the setting is off;
 * how often such an API faults then varies from run to run (12-410 a PATCH here, whether its
 * freed buffers end at the top of glibc's heap), so the mechanism's control, a server that does
 * fault without it, is libs/native/test/heap.test.ts. Digests against Node's crypto.
 */
import { type ApiProcess, startApiProcess } from './helpers/api-process';
import { createTestEnv, type TestEnv } from './helpers/env';
import { processStat, STAT_MINFLT } from './helpers/threads';
import { MiB, nodeDigest, uploadAndGet } from './helpers/tus';

const PATCH_BYTES = 8 * MiB;
const PATCHES = 8;
const PAGES = PATCH_BYTES / 4096;

(process.platform === 'linux' ? describe : describe.skip)('API heap retention (e2e)', () => {
  let env: TestEnv;
  const apis: ApiProcess[] = [];

  beforeAll(async () => {
    env = await createTestEnv();
  });

  afterAll(async () => {
    await Promise.all(apis.map((api) => api.process.stop('SIGTERM')));
    await env?.cleanup();
  });

  /** Minor faults per 8 MiB PATCH of a warm API started with `settings`, and its start log line. */
  async function faultsPerPatch(settings: Record<string, string>) {
    const api = await startApiProcess({ ...env.env, ...settings });
    apis.push(api);
    const data = Buffer.alloc(PATCHES * PATCH_BYTES, 0x5a);
    data.writeUInt32BE(0xdecaf, 12345);
    const upload = async () => {
      const session = await uploadAndGet(api.url, data, {
        chunkSize: PATCH_BYTES,
        headers: env.auth,
        algorithms: ['sha256'],
      });
      expect(session.status).toBe('succeeded');
      expect(session.digests.sha256.hex).toBe(nodeDigest('sha256', data));
    };
    await upload(); // warm: code compiled, heaps grown
    const before = processStat(api.process.pid, STAT_MINFLT);
    await upload();
    const perPatch = (processStat(api.process.pid, STAT_MINFLT) - before) / PATCHES;
    const listening = api.process.lines.find((line) => line.msg === 'hashq api listening');
    return { perPatch, heapRetained: listening?.heapRetained };
  }

  it('the default keeps the freed body buffers; 0 leaves glibc to trim them', async () => {
    const kept = await faultsPerPatch({});
    const plain = await faultsPerPatch({ API_HEAP_RETAIN_BYTES: '0' });
    expect([kept.heapRetained, plain.heapRetained]).toEqual([true, false]);
    expect(kept.perPatch).toBeLessThan(PAGES / 20);
  }, 120_000);
});
