// feed / feedWait: a body that arrives in many small reads, hashed on the
// pool as it arrives. The JavaScript thread queues each chunk (no copy: a
// reference keeps it alive); a pool task hashes the queue in order and keeps
// going while chunks keep coming, so the pool neither waits for the
// JavaScript thread between chunks nor wakes it, except when it is asked to
// (a backlog small enough, the feed idle).
#include "feed.h"

#include <cmath>
#include <utility>

#include "instance.h"

namespace hashq {

namespace {

// On the JavaScript thread, after a pool task's progress or end: releases
// the hashed chunks, calls the waiters that are satisfied, asks the task to
// signal when the next one is, and deletes the feed once nothing uses it.
void Settle(napi_env env, InstanceData *d, Feed *f) {
  std::vector<napi_ref> hashed;
  std::vector<napi_ref> ready;
  bool done;
  {
    std::lock_guard<std::mutex> lock(f->mu);
    hashed.swap(f->hashed);
    bool idle = !f->running && f->queue.empty();
    uint64_t wakeAt = UINT64_MAX;
    std::vector<FeedWaiter> still;
    for (const FeedWaiter &w : f->waiters) {
      if (w.below == 0 ? idle : f->backlog <= w.below) {
        ready.push_back(w.callback);
      } else {
        still.push_back(w);
        if (w.below > 0 && w.below < wakeAt) wakeAt = w.below;
      }
    }
    f->waiters.swap(still);
    f->wakeAt = wakeAt;
    done = idle && f->waiters.empty() && f->tasks == 0 && f->signals == 0;
  }
  for (napi_ref r : hashed) napi_delete_reference(env, r);
  if (done) {
    d->feeds.erase(f->ctx);
    napi_delete_reference(env, f->ctxRef);
    delete f;
  }
  // The first exception goes to 'uncaughtException' once all have been called.
  napi_value error = nullptr;
  for (napi_ref cb : ready) {
    CallReporting(env, cb, &error);
    napi_delete_reference(env, cb);
  }
  if (error) napi_fatal_exception(env, error);
}

// A signal from a pool task (InstanceData::feedSignal): the backlog fell to
// what a waiter asked for. env is null when the environment is going away.
void OnSignal(napi_env env, napi_value, void *, void *data) {
  if (!env) return;
  Feed *f = static_cast<Feed *>(data);
  {
    std::lock_guard<std::mutex> lock(f->mu);
    f->signals--;
  }
  void *instance = nullptr;
  if (napi_get_instance_data(env, &instance) != napi_ok || !instance) return;
  Settle(env, static_cast<InstanceData *>(instance), f);
}

class FeedRun : public Napi::AsyncWorker {
 public:
  FeedRun(Napi::Env env, InstanceData *d, Feed *f)
      : Napi::AsyncWorker(env, "hashq.feed"), d_(d), f_(f) {}

  void Execute() override {
    ApplyPoolPolicy();
    for (;;) {
      FeedChunk c;
      {
        std::lock_guard<std::mutex> lock(f_->mu);
        if (f_->queue.empty()) {
          f_->running = false;
          return;
        }
        c = f_->queue.front();
        f_->queue.pop_front();
      }
      // the bytes were written by the JavaScript thread, on another core
      hq_update_cold(f_->ctx, c.data.data, c.data.len);
      bool signal = false;
      {
        std::lock_guard<std::mutex> lock(f_->mu);
        f_->hashed.push_back(c.ref);
        f_->backlog -= c.data.len;
        if (f_->backlog <= f_->wakeAt) {
          f_->wakeAt = UINT64_MAX;
          f_->signals++;
          signal = true;
        }
      }
      if (signal &&
          napi_call_threadsafe_function(d_->feedSignal, f_, napi_tsfn_nonblocking) != napi_ok) {
        std::lock_guard<std::mutex> lock(f_->mu);
        f_->signals--;  // closing: the environment is going away
      }
    }
  }

  void OnOK() override {
    f_->tasks--;
    Settle(Env(), d_, f_);
  }

 private:
  InstanceData *d_;
  Feed *f_;
};

}  // namespace

// feed(ctx, chunk): queues the chunk's bytes after those fed before and
// starts a pool task if none runs. Returns the backlog (bytes queued or being
// hashed). The chunk is referenced until hashed; it must not change before.
// The caller keeps every other use of the context away until feedWait(ctx,
// 0) has called back.
Napi::Value FeedChunkCall(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  hq_ctx *ctx = GetCtx(env, info[0]);
  if (!ctx || !CtxReady(env, ctx)) return env.Undefined();
  Bytes in;
  if (!GetBytes(env, info[1], &in, "data")) return env.Undefined();
  InstanceData *d = env.GetInstanceData<InstanceData>();
  if (in.len == 0) {  // tells the backlog; a feed made for it would never be settled
    auto it = d->feeds.find(ctx);
    if (it == d->feeds.end()) return Napi::Number::New(env, 0);
    std::lock_guard<std::mutex> lock(it->second->mu);
    return Napi::Number::New(env, static_cast<double>(it->second->backlog));
  }
  if (!d->feedSignal) {
    napi_value name;
    napi_create_string_utf8(env, "hashq.feed", NAPI_AUTO_LENGTH, &name);
    if (napi_create_threadsafe_function(env, nullptr, nullptr, name, 0, 1, nullptr, nullptr,
                                        nullptr, OnSignal, &d->feedSignal) != napi_ok) {
      d->feedSignal = nullptr;
      ThrowStatus(env, HQ_ERR_BAD_ARGUMENT, "cannot create the feed's signal");
      return env.Undefined();
    }
    napi_unref_threadsafe_function(env, d->feedSignal);  // the process may exit meanwhile
  }
  Feed *&f = d->feeds[ctx];
  if (!f) {
    f = new Feed();
    f->ctx = ctx;
    napi_create_reference(env, info[0], 1, &f->ctxRef);
  }
  uint64_t backlog;
  bool start = false;
  napi_ref ref;
  napi_create_reference(env, info[1], 1, &ref);
  {
    std::lock_guard<std::mutex> lock(f->mu);
    f->queue.push_back(FeedChunk{in, ref});
    f->backlog += in.len;
    start = !f->running;
    f->running = true;
    backlog = f->backlog;
  }
  if (start) {
    f->tasks++;
    (new FeedRun(env, d, f))->Queue();
  }
  return Napi::Number::New(env, static_cast<double>(backlog));
}

// feedWait(ctx, below, callback): calls back once the backlog of ctx's feed
// is at or below `below` bytes or, for below = 0, once the feed is idle (the
// context is then the caller's again). At once when it already is.
Napi::Value FeedWait(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  hq_ctx *ctx = GetCtx(env, info[0]);
  if (!ctx) return env.Undefined();
  double below = info[1].IsNumber() ? info[1].As<Napi::Number>().DoubleValue() : -1;
  if (!(below >= 0 && below <= 9007199254740991.0) || std::floor(below) != below) {  // NaN too
    ThrowBadArgument(env, "below must be a non-negative integer");
    return env.Undefined();
  }
  if (!info[2].IsFunction()) {
    ThrowBadArgument(env, "callback must be a function");
    return env.Undefined();
  }
  InstanceData *d = env.GetInstanceData<InstanceData>();
  auto it = d->feeds.find(ctx);
  if (it == d->feeds.end()) {  // never fed, or idle and gone
    info[2].As<Napi::Function>().Call({});
    return env.Undefined();
  }
  Feed *f = it->second;
  napi_ref cb;
  napi_create_reference(env, info[2], 1, &cb);
  {
    std::lock_guard<std::mutex> lock(f->mu);
    f->waiters.push_back(FeedWaiter{static_cast<uint64_t>(below), cb});
  }
  Settle(env, d, f);  // calls it at once if satisfied, else sets the signal
  return env.Undefined();
}

}  // namespace hashq
