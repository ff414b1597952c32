// Feeds (feed, feedWait): a hasher's input queued chunk by chunk from the
// JavaScript thread and hashed, in order, by one pool task that keeps going
// for as long as the queue holds chunks.
#ifndef HASHQ_BINDING_FEED_H
#define HASHQ_BINDING_FEED_H

#include <napi.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "args.h"

namespace hashq {

struct FeedChunk {
  Bytes data;
  napi_ref ref;  // keeps the chunk's object alive until it is hashed
};

// What JavaScript waits for: the backlog at or below `below` bytes, or, for
// below = 0, the feed idle (nothing queued, no pool task touching the ctx).
struct FeedWaiter {
  uint64_t below;
  napi_ref callback;
};

// One context's feed. Created by the first feed() of an idle context,
// deleted once idle with no waiter, no pool task and no signal in flight.
// The JavaScript thread queues; a pool task (FeedRun) hashes and moves each
// hashed chunk's reference to `hashed`, which the JavaScript thread releases.
struct Feed {
  hq_ctx *ctx = nullptr;
  napi_ref ctxRef = nullptr;  // keeps the context's memory alive
  std::mutex mu;
  std::deque<FeedChunk> queue;   // mu
  std::vector<napi_ref> hashed;  // mu
  uint64_t backlog = 0;          // mu: bytes queued or being hashed
  bool running = false;          // mu: a pool task hashes or is queued to
  // mu: a pool task signals the JavaScript thread once the backlog is at or
  // below this (UINT64_MAX: nobody waits for a smaller backlog)
  uint64_t wakeAt = UINT64_MAX;
  uint32_t signals = 0;          // mu: signals sent, not yet handled
  std::vector<FeedWaiter> waiters;  // mu
  uint32_t tasks = 0;               // JavaScript thread: FeedRuns not completed
};

// feed(ctx, chunk) -> backlog; feedWait(ctx, below, callback)
Napi::Value FeedChunkCall(const Napi::CallbackInfo &info);
Napi::Value FeedWait(const Napi::CallbackInfo &info);

}  // namespace hashq

#endif
