/**
 * The worker's own Prometheus endpoint (WORKER_METRICS_PORT): a real worker process hashes a
 * job with several checkpoints, then GET /metrics shows the checkpoint latency histogram and
 * the bytes it hashed. The figures are checked against the job row in PostgreSQL and the
 * worker's own "checkpoint saved" log lines, not against constants.
 */
import { request } from 'node:http';
import { createServer } from 'node:net';

import {
  fileDigest,
  hasFinished,
  isCheckpoint,
  MiB,
  WorkerTestEnv,
} from './helpers/worker-process';

/** A port nothing listens on right now (the kernel picks it). */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

function get(port: number, path: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolveGet, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolveGet({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type']),
          body,
        }),
      );
    });
    req.once('error', reject);
    req.end();
  });
}

/** The value of one sample line (`name{labels} value`) of the Prometheus text. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const prefix = labels ? `${name}{${labels}} ` : `${name} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(prefix.length));
}

describe('worker metrics endpoint (real process)', () => {
  const env = new WorkerTestEnv();

  beforeAll(() => env.setUp());
  afterAll(() => env.tearDown());

  it('serves the checkpoint latency histogram and the bytes hashed after a job', async () => {
    const path = await env.createFile('metrics.bin', 40);
    const port = await freePort();
    const worker = env.startWorker({
      CHUNK_BYTES: String(4 * MiB),
      CHECKPOINT_BYTES: String(8 * MiB),
      CHECKPOINT_SECONDS: '3600',
      WORKER_METRICS_PORT: String(port),
    });
    await worker.waitForLog(
      (line) => line.msg === 'metrics endpoint listening' && line.port === port,
    );

    const before = await get(port, '/metrics');
    expect(before.status).toBe(200);
    expect(before.type).toMatch(/^text\/plain/);
    expect(sample(before.body, 'hashq_checkpoint_duration_seconds_count')).toBe(0);

    const id = await env.submit(path, ['sha256']);
    const done = await env.waitForJob(id, hasFinished, worker);
    expect(done.status).toBe('succeeded');
    expect(done.digests?.sha256.hex).toBe(await fileDigest('sha256', path));

    // the log lines arrive through a pipe: the last one of the job comes after every checkpoint
    await worker.waitForLog((line) => line.jobId === id && line.msg === 'finished');
    const checkpoints = worker.lines.filter((line) => line.jobId === id && isCheckpoint()(line));
    expect(checkpoints.length).toBeGreaterThan(0);

    const { status, body } = await get(port, '/metrics');
    expect(status).toBe(200);
    expect(body).toContain('# TYPE hashq_checkpoint_duration_seconds histogram');
    const count = sample(body, 'hashq_checkpoint_duration_seconds_count');
    expect(count).toBeGreaterThan(0);
    // one observation per checkpoint the worker logged
    expect(count).toBe(checkpoints.length);
    expect(sample(body, 'hashq_checkpoint_duration_seconds_bucket', 'le="+Inf"')).toBe(count);
    // the histogram sum is the logged durations' sum (ms in the log, seconds in the metric)
    const loggedSeconds = checkpoints.reduce((sum, line) => sum + (line.ms as number) / 1000, 0);
    expect(sample(body, 'hashq_checkpoint_duration_seconds_sum')).toBeCloseTo(loggedSeconds, 6);
    // every byte of the file was hashed exactly once by this worker
    expect(sample(body, 'hashq_worker_bytes_hashed_total')).toBe(done.total_bytes);

    expect((await get(port, '/nothing')).status).toBe(404);

    const exit = await worker.stop('SIGTERM');
    expect(exit.signal).not.toBe('SIGKILL');
    await expect(get(port, '/metrics')).rejects.toThrow(/ECONNREFUSED/);
  }, 120_000);
});
