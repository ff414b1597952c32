#!/usr/bin/env node
/**
 * The main job of `npm start`, once the API and the worker are up: hash a
 * file through the whole system and check the digests.
 *
 *   node scripts/demo-job.cjs <api url> <file root>
 *
 * Writes <file root>/hashq-demo.bin (HASHQ_DEMO_BYTES, default 256 MiB of
 * seeded pseudo-random bytes, streamed; kept for the next start), submits
 * one job with sha256, sha512, sha3-256 and crc64nvme (one read pass),
 * follows its progress, prints the digests and compares the first three
 * with Node's crypto over the same file. Exit code 0 when they match.
 * The API key comes from HASHQ_API_KEY (npm start sets it from .data/api-key).
 * Its lines come from the services' logger (@hashq/config, built by `npm run build`).
 */
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');

const { createLogger } = require('../dist/libs/config/src/logger.js');

const [url, root] = process.argv.slice(2);
const BYTES = Number(process.env.HASHQ_DEMO_BYTES ?? 256 * 1024 * 1024);
const ALGORITHMS = ['sha256', 'sha512', 'sha3-256', 'crc64nvme'];
const CHECKED = ['sha256', 'sha512', 'sha3-256'];
const logger = createLogger('demo', 'info');
const log = (msg) => logger.info(msg);

async function ensureFile(file) {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  if (st && st.size === BYTES) return;
  log(`writing ${BYTES} bytes to ${file}`);
  const seed = crypto.createHash('sha256').update('hashq demo').digest();
  let counter = 0;
  let left = BYTES;
  async function* blocks() {
    while (left > 0) {
      // AES-256-CTR keystream: fast, deterministic, incompressible
      const n = Math.min(left, 4 << 20);
      const iv = Buffer.alloc(16);
      iv.writeUInt32BE(counter++, 12);
      yield crypto.createCipheriv('aes-256-ctr', seed, iv).update(Buffer.alloc(n));
      left -= n;
    }
  }
  await pipeline(blocks, fs.createWriteStream(file));
}

async function nodeDigests(file) {
  const hashes = CHECKED.map((a) => crypto.createHash(a));
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) {
    for (const h of hashes) h.update(chunk);
  }
  return Object.fromEntries(CHECKED.map((a, i) => [a, hashes[i].digest('hex')]));
}

async function request(method, pathname, body) {
  const res = await fetch(url + pathname, {
    method,
    headers: {
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(process.env.HASHQ_API_KEY
        ? { authorization: `Bearer ${process.env.HASHQ_API_KEY}` }
        : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function main() {
  if (!url || !root) throw new Error('usage: demo-job.cjs <api url> <file root>');
  const file = path.join(root, 'hashq-demo.bin');
  await ensureFile(file);
  const job = await request('POST', '/v1/jobs', {
    source: { type: 'file', path: file },
    algorithms: ALGORITHMS,
  });
  log(
    `submitted job ${job.id}: ${ALGORITHMS.join(' + ')} of ${file} (follow it: curl -H "Authorization: Bearer $(cat .data/api-key)" ${url}/v1/jobs/${job.id})`,
  );
  let view = job;
  let shown = -1;
  const deadline = Date.now() + 10 * 60_000;
  while (!['succeeded', 'failed', 'canceled'].includes(view.status)) {
    if (Date.now() > deadline)
      throw new Error(`job ${job.id} still ${view.status} after 10 minutes`);
    await new Promise((r) => setTimeout(r, 250));
    view = await request('GET', `/v1/jobs/${job.id}`);
    const pct = Math.floor(view.progress?.percent ?? 0);
    if (view.status === 'running' && pct >= shown + 25) {
      shown = pct - (pct % 25);
      log(`${view.status} ${pct} %`);
    }
  }
  if (view.status !== 'succeeded')
    throw new Error(`job ${job.id} ${view.status}: ${JSON.stringify(view.error)}`);
  const mbps = view.throughputBytesPerSecond
    ? (view.throughputBytesPerSecond / 1e6).toFixed(0)
    : '?';
  log(
    `job ${job.id} succeeded: ${view.progress.totalBytes} bytes, ${mbps} MB/s, attempts ${view.attempts}, resumes ${view.resumes}`,
  );
  const want = await nodeDigests(file); // after the job, so the two do not share the CPU
  let ok = true;
  for (const a of ALGORITHMS) {
    const got = view.digests[a].hex;
    const check =
      want[a] === undefined
        ? ''
        : want[a] === got
          ? '  = Node crypto'
          : `  != Node crypto ${want[a]}`;
    if (want[a] !== undefined && want[a] !== got) ok = false;
    log(`  ${a.padEnd(10)} ${got}${check}`);
  }
  if (!ok) throw new Error('a digest differs from Node crypto');
}

main().catch((err) => {
  logger.error(`FAILED: ${err.message}`);
  process.exitCode = 1;
});
