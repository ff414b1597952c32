// Async updates (updateAsync) on libuv's thread pool: a queue per
// environment, drained by at most `limit` pool workers at once.
#ifndef HASHQ_BINDING_ASYNC_QUEUE_H
#define HASHQ_BINDING_ASYNC_QUEUE_H

#include <napi.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <vector>

#include "args.h"

namespace hashq {

// Async updates. Each call becomes a task in its environment's queue; at
// most `limit` DrainWorkers (libuv pool work) are in flight, each taking the
// oldest task and, where the C core can run two messages interleaved
// (hq_pairable: SHA-1/SHA-256 on the SHA extensions, where one message is
// latency-bound), a second task of the same kind, so concurrent updates on
// different hashers share a pool thread at ~1.5-1.8x the throughput of one.
// A task keeps its context, its data and its callback referenced until its
// callback has run, so nothing a pool thread reads is collected. `data` is
// one byte view, or (`parts` not empty) an array of them absorbed in order:
// a caller that gathered many pieces hands them over without copying them
// into one buffer; such a task does not pair.
struct AsyncTask {
  hq_ctx *ctx;
  Bytes data;
  std::vector<Bytes> parts;
  Napi::ObjectReference ctxRef;
  Napi::ObjectReference dataRef;
  Napi::FunctionReference callback;
};

struct AsyncQueue {
  std::mutex mu;
  std::deque<AsyncTask *> pending;  // guarded by mu
  uint32_t waiting = 0;             // workers queued, not started (mu)
  uint32_t inFlight = 0;            // main thread only
  uint32_t limit = 2;               // main thread only (setAsyncLimit)
  uint64_t tasks = 0;               // main thread only
  std::atomic<uint64_t> paired{0};  // tasks run as half of a pair
  bool closed = false;              // main thread only: JS cannot run
};

// Calls the function `callback` refers to, with no arguments, from a pool
// task's completion. False when JavaScript could not be called at all; the
// first exception a callback throws goes to *error (for napi_fatal_exception).
bool CallReporting(napi_env env, napi_ref callback, napi_value *error);

// Called first by every pool task that hashes: once setPoolIdle() has been
// called, moves the calling pool thread to SCHED_IDLE (once per thread).
void ApplyPoolPolicy();

// updateAsync(ctx, data | [data, ...], callback), setAsyncLimit(n), asyncStats(),
// setPoolIdle()
Napi::Value UpdateAsync(const Napi::CallbackInfo &info);
Napi::Value SetPoolIdle(const Napi::CallbackInfo &info);
Napi::Value SetAsyncLimit(const Napi::CallbackInfo &info);
Napi::Value AsyncStats(const Napi::CallbackInfo &info);

}  // namespace hashq

#endif
