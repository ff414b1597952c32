// Preloaded into the API process by bench:sessions (node --require): the API's own event-loop
// delay, measured in the API process, read over the IPC channel ('reset' starts a new window with
// the raw measure, 'reset-own' with both, 'lag' answers the window's figures and ends it). Two
// measures:
//   - raw: perf_hooks.monitorEventLoopDelay (1 ms resolution): how late the loop's timers run;
//   - own: the same lateness, per 1 ms tick, minus the time the main thread spent waiting for a
//     CPU meanwhile (its run-queue delay, /proc/self/task/<pid>/schedstat, Linux): on a machine
//     shared with other jobs, the delay the API's own work caused, not its neighbours. Its 1 ms JS
//     ticker (a /proc read each) costs the API's main thread ~1 ms per 8 MiB PATCH: the uploads,
//     compared with a sink that has no such ticker, run without it.
// Both in ms: p50, p99, max.
const fs = require('node:fs');
const { createHistogram, monitorEventLoopDelay } = require('node:perf_hooks');

const raw = monitorEventLoopDelay({ resolution: 1 });
raw.enable();

const own = createHistogram();
const TICK_NS = 1_000_000n;
let schedstat;
try {
  schedstat = fs.openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
} catch {
  schedstat = undefined; // not Linux: "own" stays empty
}
const text = Buffer.alloc(128);
/** ns the main thread has waited on a run queue since it started. */
function runQueueNs() {
  const n = fs.readSync(schedstat, text, 0, text.length, 0);
  return BigInt(text.toString('latin1', 0, n).split(' ')[1]);
}
/** The 1 ms "own" ticker, running only in a window that asked for it (see 'reset-own'). */
let ticker;
function startOwn() {
  if (schedstat === undefined || ticker) return;
  let last = process.hrtime.bigint();
  let waited = runQueueNs();
  ticker = setInterval(() => {
    const now = process.hrtime.bigint();
    const nowWaited = runQueueNs();
    const late = now - last - TICK_NS - (nowWaited - waited);
    own.record(late > 0n ? late : 1n);
    last = now;
    waited = nowWaited;
  }, 1).unref();
}
function stopOwn() {
  clearInterval(ticker);
  ticker = undefined;
}

const ms = (ns) => Math.round((Number(ns) / 1e6) * 10) / 10;
const figures = (h) => ({ p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) });

process.on('message', (message) => {
  if (message === 'reset' || message === 'reset-own') {
    raw.reset();
    own.reset();
    if (message === 'reset-own') startOwn();
  }
  if (message === 'lag') {
    stopOwn();
    process.send({ lag: { raw: figures(raw), own: own.count > 0 ? figures(own) : undefined } });
  }
});
process.channel?.unref(); // the channel must not keep the API alive on its own
