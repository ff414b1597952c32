// Started by bench:sessions beside the API, with loop-lag.cjs preloaded and scheduled as the API's
// event loop (its nice value, or its real-time priority): an event loop with nothing to do. Its
// delay is what the machine alone (the other processes on its cores, the kernel, the hypervisor)
// imposes on any event loop at that priority meanwhile: the floor under the API's figure,
// measured in the same round.
setInterval(() => {}, 2 ** 30);
