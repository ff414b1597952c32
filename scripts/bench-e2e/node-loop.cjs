#!/usr/bin/env node
// A peer for bench:e2e: the same read/hash pipeline as the worker, without the service around it.
// Reads FILE with node:fs into reused buffers (one chunk read ahead while the previous one is
// hashed, like FileSource) and feeds Hasher.updateAsync. Prints {"seconds":…,"hex":…} on stdout.
//
// usage: node-loop.cjs FILE ALGORITHM CHUNK_BYTES [READ_AHEAD]
const { open } = require('node:fs/promises');
const path = require('node:path');

const { createHasher } = require(
  path.join(__dirname, '..', '..', 'libs', 'native', 'dist', 'index.js'),
);

async function main() {
  const [file, algorithm, chunkArg, aheadArg] = process.argv.slice(2);
  const chunkBytes = Number(chunkArg);
  const ahead = Number(aheadArg ?? 1);
  const started = performance.now();
  const handle = await open(file, 'r');
  const { size } = await handle.stat();
  // ahead chunks being read + the one being hashed + one spare (the Source contract keeps it valid).
  const buffers = Array.from({ length: ahead + 2 }, () => Buffer.allocUnsafeSlow(chunkBytes));
  const hasher = createHasher(algorithm);
  let position = 0;
  let turn = 0;
  const pending = [];
  const readNext = () => {
    const buffer = buffers[turn++ % buffers.length];
    const length = Math.min(chunkBytes, size - position);
    const at = position;
    position += length;
    pending.push(
      (async () => {
        let filled = 0;
        while (filled < length) {
          const { bytesRead } = await handle.read(buffer, filled, length - filled, at + filled);
          if (bytesRead === 0) throw new Error('file shrank');
          filled += bytesRead;
        }
        return buffer.subarray(0, length);
      })(),
    );
  };
  while (pending.length < ahead && position < size) readNext();
  while (pending.length > 0) {
    const chunk = await pending.shift();
    if (position < size) readNext();
    await hasher.updateAsync(chunk);
  }
  const hex = Buffer.from(hasher.digest()).toString('hex');
  await handle.close();
  process.stdout.write(JSON.stringify({ seconds: (performance.now() - started) / 1000, hex }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
