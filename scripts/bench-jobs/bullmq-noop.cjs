// The raw BullMQ peer of bench:jobs, in a process of its own as the hashq worker is: a Worker with a
// no-op processor on queue "noop" under the given prefix. Prints "ready" once connected, then
// "done" when it has completed `count` jobs.
//   node bullmq-noop.cjs <redisUrl> <prefix> <concurrency> <count>
const { Worker } = require('bullmq');
const { Redis } = require('ioredis');

const [redisUrl, prefix, concurrency, count] = process.argv.slice(2);
const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
let completed = 0;
const worker = new Worker('noop', async () => undefined, {
  connection,
  prefix,
  concurrency: Number(concurrency),
  removeOnComplete: { count: 1000 },
});
worker.on('completed', () => {
  completed += 1;
  if (completed === Number(count)) process.stdout.write('done\n');
});
worker.on('error', (err) => process.stderr.write(`[bullmq-noop] ${err.message}\n`));
worker.waitUntilReady().then(() => process.stdout.write('ready\n'));
process.on('SIGTERM', () => {
  worker.close().then(
    () => connection.quit().finally(() => process.exit(0)),
    () => process.exit(1),
  );
});
