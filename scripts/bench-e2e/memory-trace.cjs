// A diagnostic preload for a bench's processes: `BENCH_WORKER_NODE_ARGS="--require
// ./scripts/bench-e2e/memory-trace.cjs"`. Writes .data/memory-trace-<pid>.tsv: every 250 ms the
// process's memory (rss, V8 heap, external and array buffers, old and large-object spaces, MiB),
// and one line per GC with its kind and the old space after it. Where a peak RSS comes from: V8's
// heap, array buffers (Buffers whose wrappers were promoted live until a full GC) or native memory
// (rss minus the others), and whether a full GC ran during the batch (docs/batches.md, "Memory").
const fs = require('node:fs');
const path = require('node:path');
const { PerformanceObserver, constants } = require('node:perf_hooks');
const v8 = require('node:v8');

const dir = path.join(process.cwd(), '.data');
fs.mkdirSync(dir, { recursive: true });
const out = fs.openSync(path.join(dir, `memory-trace-${process.pid}.tsv`), 'w');
const started = performance.now();
const mib = (bytes) => (bytes / 1048576).toFixed(1);
const seconds = (ms) => ((ms - started) / 1000).toFixed(2);
const space = (name) =>
  v8.getHeapSpaceStatistics().find((s) => s.space_name === name).space_used_size;
const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
};

fs.writeSync(out, 's\trss\theapTotal\theapUsed\texternal\tarrayBuffers\told\tlargeObjects\n');
setInterval(() => {
  const m = process.memoryUsage();
  const row = [m.rss, m.heapTotal, m.heapUsed, m.external, m.arrayBuffers, space('old_space')];
  fs.writeSync(
    out,
    `${seconds(performance.now())}\t${[...row, space('large_object_space')].map(mib).join('\t')}\n`,
  );
}, 250).unref();
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = KINDS[entry.detail.kind] ?? entry.detail.kind;
    fs.writeSync(
      out,
      `${seconds(entry.startTime)}\tgc ${kind} ${entry.duration.toFixed(1)} ms, old ${mib(space('old_space'))}\n`,
    );
  }
}).observe({ entryTypes: ['gc'] });
