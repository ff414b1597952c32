/**
 * Benchmarks end to end: POST /v1/benchmarks → queue bench-<arch> → the benchmark
 * processor (in this process, on real BullMQ/Redis) → PostgreSQL → JSON and HTML report.
 * Admission: at most BENCHMARK_MAX_ACTIVE runs queued or running, and only for an architecture
 * whose worker reported within BENCHMARK_WORKER_TIMEOUT_SECONDS (this process's worker does).
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import { benchmarkQueueName } from '@hashq/bench';
import { HashqConfigModule } from '@hashq/config';
import { DatabaseModule } from '@hashq/database';
import { bullRootModule } from '@hashq/jobs';
import type { INestApplication } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Queue } from 'bullmq';
import { Client } from 'pg';
import pino from 'pino';
import request from 'supertest';

import { BenchmarkModule } from '../apps/worker/src/benchmark/benchmark.module';
import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';

const ALGORITHMS = ['sha256', 'ascon-hash256', 'crc32c'];
const LENGTHS = [8, 64, 576];
const MAX_ACTIVE = 3;
const WORKER_TIMEOUT_SECONDS = 3;

async function startWorker(env: TestEnv): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      HashqConfigModule.forRoot({
        name: 'worker',
        env: env.env,
        logger: pino({ level: 'silent' }),
      }),
      DatabaseModule,
      bullRootModule('consumer'),
      BenchmarkModule,
    ],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

/** GET /v1/benchmarks/:id as far as these tests read it (run: the report of a finished run). */
interface RunBody {
  status: string;
  cpuModel: string | null;
  errorCode: string | null;
  run: {
    machine: { arch: string; counter: string; counterHz: number };
    series: Array<{ provider: string; algorithm: string }>;
  };
}

/**
 * The report renders under its Content-Security-Policy: no script at all, and every inline
 * <style> allowed by its SHA-256 hash (computed here with Node's crypto), no 'unsafe-inline', no
 * style attribute (a hash does not cover those) and no event handler attribute.
 */
function expectStrictPolicy(res: request.Response): void {
  const directives = new Map(
    (res.headers['content-security-policy'] as string)
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name, values]),
  );
  expect(directives.get('default-src')).toEqual(["'none'"]);
  expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
  expect(directives.has('script-src')).toBe(false); // default-src 'none': no script may run
  const styles = [...res.text.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]);
  expect(styles.length).toBeGreaterThan(0);
  expect(directives.get('style-src')).toEqual(
    styles.map((css) => `'sha256-${createHash('sha256').update(css).digest('base64')}'`),
  );
  expect(res.text).not.toMatch(/<script|\sstyle=|\son[a-z]+=/i);
}

describe('benchmarks API → queue → worker → PostgreSQL → report', () => {
  let env: TestEnv;
  let app: INestApplication;
  let worker: TestingModule | undefined;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    env = await createTestEnv({
      BENCHMARK_MAX_ACTIVE: String(MAX_ACTIVE),
      BENCHMARK_WORKER_TIMEOUT_SECONDS: String(WORKER_TIMEOUT_SECONDS),
      RECONCILE_SECONDS: '1',
    });
    app = await createApiApp(env);
    worker = await startWorker(env);
  }, 120_000);

  afterAll(async () => {
    await worker?.close();
    await app?.close();
    await env?.cleanup();
  });

  async function finished(id: string): Promise<RunBody> {
    for (let i = 0; i < 600; i++) {
      const res = await http().get(`/v1/benchmarks/${id}`).expect(200);
      if (res.body.status === 'succeeded' || res.body.status === 'failed') return res.body;
      await sleep(200);
    }
    throw new Error(`benchmark ${id} did not finish`);
  }

  async function quickRun(): Promise<string> {
    const res = await http()
      .post('/v1/benchmarks')
      .send({ algorithms: ALGORITHMS, lengths: LENGTHS, quick: true, arch: process.arch })
      .expect(202);
    expect(res.body).toMatchObject({ status: 'queued', arch: process.arch });
    return res.body.id;
  }

  let first: string;
  let second: string;

  it('runs a quick benchmark on this architecture and records it', async () => {
    first = await quickRun();
    const run = await finished(first);
    expect(run.status).toBe('succeeded');
    expect(run.cpuModel).toBeTruthy();
    expect(run.run.machine).toMatchObject({ arch: process.arch, counter: expect.any(String) });
    expect(run.run.machine.counterHz).toBeGreaterThan(0);
    const ours = run.run.series.filter((s: { provider: string }) => s.provider === 'hashq');
    expect(ours.map((s: { algorithm: string }) => s.algorithm).sort()).toEqual(
      [...ALGORITHMS].sort(),
    );

    const client = new Client({
      connectionString: env.databaseUrl,
      options: `-c search_path=${env.schema}`,
    });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT algorithm, provider, length, q1, median, q3 FROM benchmark_results WHERE run_id = $1`,
        [first],
      );
      // every series: one row per length plus the long-message slope (length NULL)
      expect(rows).toHaveLength(run.run.series.length * (LENGTHS.length + 1));
      for (const algorithm of ALGORITHMS) {
        const lengths = rows
          .filter((r) => r.algorithm === algorithm && r.provider === 'hashq')
          .map((r) => r.length);
        expect(lengths).toHaveLength(LENGTHS.length + 1);
        expect(new Set(lengths)).toEqual(new Set([...LENGTHS, null]));
      }
      for (const r of rows) expect(r.q1).toBeLessThanOrEqual(r.q3);
    } finally {
      await client.end();
    }
  });

  it('serves the HTML report: a row per algorithm, an SVG series per algorithm, the machine block', async () => {
    const res = await http()
      .get(`/v1/benchmarks/${first}/report`)
      .expect(200)
      .expect('content-type', /text\/html/);
    const html = res.text;
    expect(html).not.toMatch(/<script/i);
    const svgs = html.match(/<svg[^>]*>[\s\S]*?<\/svg>/g) ?? [];
    expect(svgs).toHaveLength(1);
    const svg = svgs[0]!;
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg.match(/<g class="series"/g)).toHaveLength(ALGORITHMS.length);
    for (const a of ALGORITHMS) {
      expect(svg).toContain(`data-algorithm="${a}"`);
      expect(html).toContain(`<td class="name">${a}</td>`);
    }
    expect(html).toContain('<dl class="machine">');
    expect(html).toContain('<h3>576 bytes</h3>');
    expect(html).toContain('long messages (slope 16384→65536 bytes)');
    expectStrictPolicy(res);
  });

  it('lists runs and compares two of them with ratios', async () => {
    second = await quickRun();
    expect((await finished(second)).status).toBe('succeeded');
    const list = await http().get('/v1/benchmarks').expect(200);
    expect(list.body.items.map((r: { id: string }) => r.id)).toEqual(
      expect.arrayContaining([first, second]),
    );
    const res = await http().get(`/v1/benchmarks/${second}/report?compare=${first}`).expect(200);
    expect(res.text).toContain('hashq benchmark comparison');
    expect(res.text).toContain(first);
    expect(res.text).toContain(second);
    expect(res.text).toContain('B ÷ A');
    expect(res.text.match(/<table class="compare">/g)).toHaveLength(LENGTHS.length + 1);
    expectStrictPolicy(res);
  });

  it('refuses bad requests with a client error', async () => {
    const bad = [
      { arch: 'vax' },
      { algorithms: [] },
      { algorithms: ['sha256', 5] },
      { lengths: [-1] },
      { lengths: [1.5] },
      { implementations: ['openssl-cli'] },
      { quick: 'yes' },
      { extra: 1 },
    ];
    for (const body of bad) {
      const res = await http().post('/v1/benchmarks').send(body).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
    }
    const unknown = await http()
      .post('/v1/benchmarks')
      .send({ algorithms: ['md6'] })
      .expect(400);
    expect(unknown.body.error.code).toBe('UNKNOWN_ALGORITHM');
    expect((await http().get('/v1/benchmarks/not-a-uuid').expect(400)).body.error.code).toBe(
      'INVALID_ID',
    );
    expect(
      (await http().get('/v1/benchmarks/00000000-0000-4000-8000-000000000000').expect(404)).body
        .error.code,
    ).toBe('BENCHMARK_NOT_FOUND');
  });

  it('refuses a run for an architecture no worker serves: 422 BENCHMARK_NO_WORKER, nothing recorded', async () => {
    const other = process.arch === 'riscv64' ? 'arm64' : 'riscv64';
    const before = (await http().get('/v1/benchmarks').expect(200)).body.items.length;
    const body = { quick: true, arch: other, algorithms: ['sha256'] };
    const res = await http().post('/v1/benchmarks').send(body).expect(422);
    expect(res.body.error).toMatchObject({ code: 'BENCHMARK_NO_WORKER', details: { arch: other } });
    expect((await http().get('/v1/benchmarks').expect(200)).body.items).toHaveLength(before);
  });

  describe('with the queue paused (runs stay queued)', () => {
    let queue: Queue;
    const queued: string[] = [];

    beforeAll(async () => {
      queue = new Queue(benchmarkQueueName(), {
        connection: { url: env.redisUrl },
        prefix: env.queuePrefix,
      });
      await queue.pause();
    });

    afterAll(() => queue?.close());

    it('admits BENCHMARK_MAX_ACTIVE queued runs, then 429 BENCHMARK_LIMIT_REACHED, under concurrency', async () => {
      // all at once: the count and the insert are one critical section, so exactly MAX_ACTIVE get in
      const answers = await Promise.all(
        Array.from({ length: MAX_ACTIVE + 3 }, () =>
          http()
            .post('/v1/benchmarks')
            .send({ quick: true, algorithms: ['sha256'] }),
        ),
      );
      const accepted = answers.filter((res) => res.status === 202);
      const refused = answers.filter((res) => res.status === 429);
      expect([accepted.length, refused.length]).toEqual([MAX_ACTIVE, 3]);
      for (const res of refused) {
        expect(res.body.error).toMatchObject({
          code: 'BENCHMARK_LIMIT_REACHED',
          details: { maxActive: MAX_ACTIVE },
        });
      }
      queued.push(...accepted.map((res) => res.body.id as string));
    });

    it('answers 409 for the report of a run that has not finished', async () => {
      expect((await http().get(`/v1/benchmarks/${queued[0]}`).expect(200)).body.status).toBe(
        'queued',
      );
      const report = await http().get(`/v1/benchmarks/${queued[0]}/report`).expect(409);
      expect(report.body.error.code).toBe('BENCHMARK_NOT_FINISHED');
    });

    it('once the worker is gone: its queued runs fail BENCHMARK_NO_WORKER, and new runs get 422', async () => {
      await worker!.close(); // it stops reporting
      worker = undefined;
      for (const id of queued) {
        let run: Partial<RunBody> = {};
        for (let i = 0; i < 150 && run.status !== 'failed'; i++) {
          run = (await http().get(`/v1/benchmarks/${id}`).expect(200)).body;
          if (run.status !== 'failed') await sleep(200);
        }
        const expired = {
          status: 'failed',
          errorCode: 'BENCHMARK_NO_WORKER',
          finishedAt: expect.any(String),
        };
        expect(run).toMatchObject(expired);
      }
      const res = await http()
        .post('/v1/benchmarks')
        .send({ quick: true, algorithms: ['sha256'] })
        .expect(422);
      expect(res.body.error.code).toBe('BENCHMARK_NO_WORKER');
    });
  });
});
