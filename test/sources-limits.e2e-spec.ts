/**
 * Hostile HTTP sources against a real worker process: a node:http server on 127.0.0.1 that
 * drip-feeds, sends an endless chunked body, announces a huge Content-Length, or stalls mid-body.
 * The job must end (SOURCE_TOO_SLOW, SOURCE_TOO_LARGE, canceled) and the worker must close the
 * connection, where before a drip-feed or a stall held the worker slot until the server gave up.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { INestApplication } from '@nestjs/common';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import {
  isCheckpoint,
  type JobRow,
  type WorkerProcess,
  WorkerTestEnv,
} from './helpers/worker-process';

const KiB = 1024;
const MAX_BYTES = 1024 * KiB;
const CHUNK = 64 * KiB;
/** Limits that make a drip-feed fail within a second or so (the defaults allow 1 MiB per 30 s). */
const limits = {
  CHUNK_BYTES: String(CHUNK),
  CHECKPOINT_BYTES: String(2 * CHUNK),
  HASHQ_ALLOW_HOSTS: '127.0.0.1',
  SOURCE_MAX_BYTES: String(MAX_BYTES),
  SOURCE_MIN_BYTES_PER_INTERVAL: String(16 * KiB),
  SOURCE_PROGRESS_INTERVAL_MS: '200',
};

/** One request as the server saw it: what it sent and when the client closed the connection. */
interface Served {
  path: string;
  bytesSent: number;
  closed: Promise<void>;
}

describe('HTTP sources that never end, crawl or stall', () => {
  const env = new WorkerTestEnv();
  let api: INestApplication;
  let server: Server;
  let base: string;
  const served: Served[] = [];
  const timers = new Set<NodeJS.Timeout>();

  /** Writes `piece` every `ms` until the client goes away. */
  function drip(res: ServerResponse, record: Served, piece: Buffer, ms: number): void {
    const timer = setInterval(() => {
      res.write(piece);
      record.bytesSent += piece.length;
    }, ms);
    timers.add(timer);
    res.once('close', () => clearInterval(timer));
  }

  /** Writes as fast as the client reads, forever. */
  function flood(res: ServerResponse, record: Served): void {
    const piece = randomBytes(64 * KiB);
    let open = true;
    res.once('close', () => (open = false));
    const pump = () => {
      while (open) {
        record.bytesSent += piece.length;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
    };
    pump();
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
    const record: Served = { path: req.url ?? '', bytesSent: 0, closed };
    served.push(record);
    if (req.method !== 'GET') return void res.writeHead(405).end();
    switch (req.url) {
      case '/drip': // one byte every 20 ms: never silent for long, far below the minimum progress
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return drip(res, record, Buffer.from('x'), 20);
      case '/endless': // chunked, no length, no end
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return flood(res, record);
      case '/declared': // announces more than the maximum, then sends it as fast as it is read
        res.writeHead(200, { 'content-length': 10 * 1024 ** 3 });
        return flood(res, record);
      case '/stall': {
        // four chunks at once, then silence with the connection open (the body promises 1 MiB)
        const head = randomBytes(4 * CHUNK);
        res.writeHead(200, { 'content-length': MAX_BYTES });
        res.write(head);
        record.bytesSent = head.length;
        return;
      }
      default:
        res.writeHead(404).end();
    }
  }

  beforeAll(async () => {
    server = createServer(handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await env.setUp();
    api = await createApiApp({
      ...env.env,
      env: { ...env.env.env, HASHQ_ALLOW_HOSTS: '127.0.0.1' },
    });
  });

  afterAll(async () => {
    for (const timer of timers) clearInterval(timer);
    await api?.close();
    await env.tearDown();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function submit(path: string): Promise<string> {
    const res = await request(api.getHttpServer())
      .post('/v1/jobs')
      .send({ source: `${base}${path}`, algorithms: ['sha256'] })
      .expect(202);
    return res.body.id as string;
  }

  const ended = (job: JobRow) => !['queued', 'running'].includes(job.status);

  /** The request the worker made for `path`, once it arrived. */
  async function requestFor(path: string): Promise<Served> {
    for (let i = 0; i < 300; i++) {
      const found = served.find((record) => record.path === path);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no request for ${path}`);
  }

  /** Resolves when the server saw the worker close the connection; fails after `ms` (a bound on the wait only). */
  function closedWithin(record: Served, ms: number): Promise<void> {
    let timer: NodeJS.Timeout;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`connection for ${record.path} still open after ${ms} ms`)),
        ms,
      );
    });
    return Promise.race([record.closed, timeout]).finally(() => clearTimeout(timer));
  }

  describe('with limits', () => {
    let worker: WorkerProcess;
    beforeAll(() => {
      worker = env.startWorker(limits);
    });
    afterAll(() => worker.stop());

    it('fails a drip-feeding source with SOURCE_TOO_SLOW and closes its connection', async () => {
      const id = await submit('/drip');
      const job = await env.waitForJob(id, ended, worker, 30_000);
      expect(job.status).toBe('failed');
      expect(job.error_code).toBe('SOURCE_TOO_SLOW');
      expect(job.error_details).toMatchObject({
        minBytesPerInterval: 16 * KiB,
        progressIntervalMs: 200,
      });
      const record = await requestFor('/drip');
      expect(record.bytesSent).toBeGreaterThan(0); // it was dripping, not silent
      await closedWithin(record, 10_000);
      expect(served.filter((r) => r.path === '/drip')).toHaveLength(1); // permanent: no retry
    });

    it('fails an endless chunked body with SOURCE_TOO_LARGE once it passes the maximum', async () => {
      const id = await submit('/endless');
      const job = await env.waitForJob(id, ended, worker, 30_000);
      expect(job.status).toBe('failed');
      expect(job.error_code).toBe('SOURCE_TOO_LARGE');
      expect(job.error_details).toMatchObject({ maxBytes: MAX_BYTES });
      expect((job.error_details as { bytesRead: number }).bytesRead).toBeGreaterThan(MAX_BYTES);
      expect(job.digests).toBeNull();
      await closedWithin(await requestFor('/endless'), 10_000);
    });

    it('fails a Content-Length above the maximum with SOURCE_TOO_LARGE before reading the body', async () => {
      const id = await submit('/declared');
      const job = await env.waitForJob(id, ended, worker, 30_000);
      expect(job.status).toBe('failed');
      expect(job.error_code).toBe('SOURCE_TOO_LARGE');
      expect(job.error_details).toEqual({ size: 10 * 1024 ** 3, maxBytes: MAX_BYTES });
      expect(job.bytes_read).toBe(0);
      expect(job.total_bytes).toBeNull(); // never started
      await closedWithin(await requestFor('/declared'), 10_000);
    });
  });

  it('cancels a job whose read is blocked: canceled, checkpoint offset kept, states deleted, connection closed', async () => {
    // No minimum progress here: only the cancel can end this read (the idle timeout is 30 s).
    const worker = env.startWorker({ ...limits, SOURCE_MIN_BYTES_PER_INTERVAL: '0' });
    try {
      const id = await submit('/stall');
      await worker.waitForLog((line) => line.jobId === id && isCheckpoint(CHUNK)(line), 30_000);
      const record = await requestFor('/stall');
      const running = await env.waitForJob(
        id,
        (job) => job.status === 'running' && job.checkpoint_offset > 0,
        worker,
      );

      const cancel = await request(api.getHttpServer()).post(`/v1/jobs/${id}/cancel`).expect(202);
      expect(cancel.body.cancelRequested).toBe(true);
      const job = await env.waitForJob(id, ended, worker, 20_000);
      expect(job.status).toBe('canceled');
      expect(job.checkpoint_offset).toBeGreaterThanOrEqual(running.checkpoint_offset);
      expect(job.checkpoint_offset).toBeLessThanOrEqual(record.bytesSent);
      expect((await env.states(id)).size).toBe(0); // a job that ends keeps no hash state
      await closedWithin(record, 10_000);
      expect(worker.running).toBe(true);
    } finally {
      await worker.stop();
    }
  });
});
