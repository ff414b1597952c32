/**
 * Batch tests' helpers: submit through the API, wait for the end, read the report, write trees of
 * files with awkward names.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import type { INestApplication } from '@nestjs/common';
import request from 'supertest';

import type { BatchResponse } from '../../apps/api/src/batches/batch.view';
import type { WorkerProcess } from './worker-process';

/** A batch as the API answers it (JSON: dates are strings, which no helper reads). */
export type BatchBody = BatchResponse;

export interface ItemBody {
  seq: number;
  name: string;
  size: number | null;
  status: string;
  digests: Record<string, { hex: string; base64: string }> | null;
  jobId: string | null;
  line: number | null;
  error: { code: string; message: string | null } | null;
}

export const ENDED = ['succeeded', 'completed_with_failures', 'failed', 'canceled'];

/** Names that need care in reports: spaces, newline, backslash, non-ASCII, nested folders. */
export const AWKWARD_NAMES = [
  'plain.txt',
  'with space.bin',
  'new\nline.txt',
  'back\\slash.txt',
  'ünïcødé ✓ 文件.txt',
  'carriage\rreturn',
  'sub/dir/nested file',
  'sub/z-last',
  '-leading-dash',
];

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Writes `files` (relative name → content) under `dir`; returns dir. */
export async function writeTree(dir: string, files: Record<string, Buffer>): Promise<string> {
  for (const [name, data] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), data);
  }
  await mkdir(dir, { recursive: true });
  return dir;
}

export class BatchClient {
  constructor(
    private readonly app: INestApplication,
    private readonly workers: () => WorkerProcess[] = () => [],
  ) {}

  http() {
    return request(this.app.getHttpServer());
  }

  async submit(body: Record<string, unknown>, key?: string): Promise<BatchBody> {
    const req = this.http().post('/v1/batches');
    if (key) req.set('Idempotency-Key', key);
    const res = await req.send(body);
    if (res.status !== 202)
      throw new Error(`submit answered ${res.status}: ${JSON.stringify(res.body)}`);
    expect(res.headers.location).toBe(`/v1/batches/${res.body.id}`);
    return res.body as BatchBody;
  }

  async get(id: string): Promise<BatchBody> {
    const res = await this.http().get(`/v1/batches/${id}`).expect(200);
    return res.body as BatchBody;
  }

  async ended(id: string, timeoutMs = 60_000): Promise<BatchBody> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const body = await this.get(id);
      if (ENDED.includes(body.status)) return body;
      if (Date.now() > deadline) {
        const tails = this.workers()
          .map((w) => w.tail())
          .join('\n---\n');
        throw new Error(`batch ${id} still ${JSON.stringify(body)}\n${tails}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async items(id: string, status?: string): Promise<ItemBody[]> {
    const out: ItemBody[] = [];
    let cursor: string | null = null;
    do {
      const query: Record<string, string> = { limit: '1000' };
      if (status) query.status = status;
      if (cursor) query.cursor = cursor;
      const res = await this.http().get(`/v1/batches/${id}/items`).query(query).expect(200);
      out.push(...(res.body.items as ItemBody[]));
      cursor = res.body.nextCursor as string | null;
    } while (cursor);
    return out;
  }

  async report(id: string, format: string, algorithm?: string): Promise<Buffer> {
    const query: Record<string, string> = { format };
    if (algorithm) query.algorithm = algorithm;
    const res = await this.http()
      .get(`/v1/batches/${id}/report`)
      .query(query)
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    return res.body as Buffer;
  }
}
