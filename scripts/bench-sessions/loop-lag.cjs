// Preloaded into the API process by bench:sessions (node --require): its event-loop delay
// (perf_hooks.monitorEventLoopDelay, 1 ms resolution) on request over the IPC channel, so the
// figure is the API's own loop, not the load generator's. 'reset' starts a new window.
const { monitorEventLoopDelay } = require('node:perf_hooks');

const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
process.on('message', (message) => {
  if (message === 'reset') histogram.reset();
  if (message === 'lag') {
    const ms = (ns) => Math.round((ns / 1e6) * 10) / 10;
    process.send({
      lag: { max: ms(histogram.max), p99: ms(histogram.percentile(99)), mean: ms(histogram.mean) },
    });
  }
});
process.channel?.unref(); // the channel must not keep the API alive on its own
