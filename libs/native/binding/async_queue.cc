// updateAsync: tasks queue per environment; pool workers (DrainWorker) take
// them oldest first, two at a time where the C core can interleave them.
#include "async_queue.h"

#include <sched.h>

#include "instance.h"

namespace hashq {

namespace {

// Process-wide: libuv's pool is shared by every environment of the process.
std::atomic<bool> poolIdle{false};

void Pump(Napi::Env env, AsyncQueue *q);

class DrainWorker : public Napi::AsyncWorker {
 public:
  DrainWorker(Napi::Env env, AsyncQueue *q)
      : Napi::AsyncWorker(env, "hashq.updateAsync"), q_(q) {}

  void Execute() override {
    ApplyPoolPolicy();
    {
      std::lock_guard<std::mutex> lock(q_->mu);
      q_->waiting--;
      if (q_->pending.empty()) return;
      a_ = q_->pending.front();
      q_->pending.pop_front();
      for (auto it = q_->pending.begin();
           a_->parts.empty() && it != q_->pending.end(); ++it) {
        if ((*it)->parts.empty() && hq_pairable(a_->ctx, (*it)->ctx)) {
          b_ = *it;
          q_->pending.erase(it);
          break;
        }
      }
    }
    if (b_) {
      hq_update2(a_->ctx, a_->data.data, a_->data.len, b_->ctx, b_->data.data,
                 b_->data.len);
      q_->paired += 2;
    } else if (a_ && a_->parts.empty()) {
      // the bytes were written by the JS thread, on another core: prefetched
      hq_update_cold(a_->ctx, a_->data.data, a_->data.len);
    } else if (a_) {
      for (const Bytes &part : a_->parts) hq_update_cold(a_->ctx, part.data, part.len);
    }
  }

  void OnOK() override {
    napi_env env = Env();
    q_->inFlight--;
    // A callback may queue more work (the next slice of a large input). If
    // the first callback throws, the second still runs, then the error goes
    // to 'uncaughtException' as from any other callback.
    napi_value error = nullptr;
    bool live = Finish(env, a_, &error);
    live = Finish(env, b_, &error) && live;
    if (!live) q_->closed = true;  // shutting down: no more pool work
    Pump(Env(), q_);
    if (error) napi_fatal_exception(env, error);
  }

 private:
  // Releases the task and calls its callback (CallReporting). False when
  // JavaScript could not be called at all.
  static bool Finish(napi_env env, AsyncTask *t, napi_value *error) {
    if (!t) return true;
    Napi::FunctionReference cb = std::move(t->callback);
    delete t;  // releases the context and the data
    return CallReporting(env, cb, error);
  }

  AsyncQueue *q_;
  AsyncTask *a_ = nullptr;
  AsyncTask *b_ = nullptr;
};

// Queues workers while fewer than `limit` are in flight and tasks are
// waiting that no queued worker will take.
void Pump(Napi::Env env, AsyncQueue *q) {
  while (!q->closed && q->inFlight < q->limit) {
    {
      std::lock_guard<std::mutex> lock(q->mu);
      if (q->pending.size() <= q->waiting) return;
      q->waiting++;
    }
    q->inFlight++;
    (new DrainWorker(env, q))->Queue();
  }
}

}  // namespace

// Raw Node-API calls that report failure instead of throwing: while a worker
// thread terminates, JavaScript can no longer run, and a throw would abort
// the process. The first exception a callback throws is kept in *error.
bool CallReporting(napi_env env, napi_ref callback, napi_value *error) {
  napi_value fn, recv, result;
  if (napi_get_reference_value(env, callback, &fn) != napi_ok || !fn) return false;
  napi_get_undefined(env, &recv);
  if (napi_call_function(env, recv, fn, 0, nullptr, &result) == napi_ok) return true;
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) return false;
  napi_value e;
  napi_get_and_clear_last_exception(env, &e);
  if (!*error) *error = e;
  return true;
}

// SCHED_IDLE: the thread runs only when no other thread wants the core, and
// a thread that wakes takes the core from it at once. A nice value does not
// do that: the kernel lets the running thread finish its slice (~3 ms), and
// a reader or a server woken for every socket buffer waits behind it. An
// unprivileged thread cannot leave SCHED_IDLE, so this is one-way.
void ApplyPoolPolicy() {
#ifdef SCHED_IDLE
  thread_local bool applied = false;
  if (applied || !poolIdle.load(std::memory_order_relaxed)) return;
  applied = true;
  struct sched_param param = {};
  sched_setscheduler(0, SCHED_IDLE, &param);  // 0: the calling thread (Linux)
#endif
}

// setPoolIdle(): from now on, pool threads that hash run at SCHED_IDLE.
// True where the platform has SCHED_IDLE (Linux), false elsewhere.
Napi::Value SetPoolIdle(const Napi::CallbackInfo &info) {
#ifdef SCHED_IDLE
  poolIdle.store(true, std::memory_order_relaxed);
  return Napi::Boolean::New(info.Env(), true);
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}

// updateAsync(ctx, data, callback): data must be bytes, or an array of byte
// views absorbed in order (the TypeScript layer turns strings into Buffers
// first). The array is referenced until the callback, and with it its views.
Napi::Value UpdateAsync(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  hq_ctx *ctx = GetCtx(env, info[0]);
  if (!ctx || !CtxReady(env, ctx)) return env.Undefined();
  Bytes in;
  std::vector<Bytes> parts;
  if (info[1].IsArray()) {
    Napi::Array array = info[1].As<Napi::Array>();
    parts.resize(array.Length());
    for (uint32_t i = 0; i < parts.size(); i++) {
      napi_value part;
      if (napi_get_element(env, array, i, &part) != napi_ok ||
          !GetBytes(env, part, &parts[i], "data[i]"))
        return env.Undefined();
    }
  } else if (!GetBytes(env, info[1], &in, "data")) {
    return env.Undefined();
  }
  if (!info[2].IsFunction()) {
    ThrowBadArgument(env, "callback must be a function");
    return env.Undefined();
  }
  AsyncQueue *q = &env.GetInstanceData<InstanceData>()->queue;
  auto *t = new AsyncTask{ctx, in, std::move(parts),
                          Napi::Persistent(info[0].As<Napi::Object>()),
                          Napi::Persistent(info[1].As<Napi::Object>()),
                          Napi::Persistent(info[2].As<Napi::Function>())};
  {
    std::lock_guard<std::mutex> lock(q->mu);
    q->pending.push_back(t);
  }
  q->tasks++;
  Pump(env, q);
  return env.Undefined();
}

// setAsyncLimit(n): at most n updates run on the pool at once (n >= 1).
Napi::Value SetAsyncLimit(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  uint32_t n;
  if (!GetUint32(env, info[0], &n, "limit")) return env.Undefined();
  if (n < 1 || n > 1024) {
    ThrowBadArgument(env, "limit must be an integer from 1 to 1024");
    return env.Undefined();
  }
  AsyncQueue *q = &env.GetInstanceData<InstanceData>()->queue;
  q->limit = n;
  Pump(env, q);
  return env.Undefined();
}

// asyncStats(): { limit, inFlight, tasks, paired } of this environment.
Napi::Value AsyncStats(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  AsyncQueue *q = &env.GetInstanceData<InstanceData>()->queue;
  Napi::Object o = Napi::Object::New(env);
  o.Set("limit", Napi::Number::New(env, q->limit));
  o.Set("inFlight", Napi::Number::New(env, q->inFlight));
  o.Set("tasks", Napi::Number::New(env, static_cast<double>(q->tasks)));
  o.Set("paired", Napi::Number::New(env, static_cast<double>(q->paired.load())));
  return o;
}

}  // namespace hashq
