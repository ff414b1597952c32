// Node-API glue for the hashq C core: argument checks, async work, errors.
//
// Contexts live in JavaScript-owned Uint8Arrays of HQ_CTX_SIZE bytes (plain
// data, copyable), and outputs are written into buffers allocated in
// JavaScript: creating objects here costs far more than a 64-byte hash.
// Errors are built by a factory the TypeScript layer registers (setup), so
// they come out as HashqError subclasses with a stable code.
#include <napi.h>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <cstring>
#include <mutex>
#include <string>

#include "hashq.h"
#include "hashq_testing.h"

namespace {

// A read-only view of bytes: any TypedArray, DataView or Buffer.
struct Bytes {
  const uint8_t *data = nullptr;
  size_t len = 0;
};

// Async updates. Each call becomes a task in its environment's queue; at
// most `limit` DrainWorkers (libuv pool work) are in flight, each taking the
// oldest task and, where the C core can run two messages interleaved
// (hq_pairable: SHA-1/SHA-256 on the SHA extensions, where one message is
// latency-bound), a second task of the same kind, so concurrent updates on
// different hashers share a pool thread at ~1.5-1.8x the throughput of one.
// A task keeps its context, its data and its callback referenced until its
// callback has run, so nothing a pool thread reads is collected.
struct AsyncTask {
  hq_ctx *ctx;
  Bytes data;
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

// Per environment (main thread, each worker thread).
struct InstanceData {
  Napi::FunctionReference errorFactory;  // (status, message) => Error
  AsyncQueue queue;
  ~InstanceData() {
    // Tasks never taken (the environment is going away): their references
    // belong to a dying environment, so they are not released one by one.
    for (AsyncTask *t : queue.pending) {
      t->ctxRef.SuppressDestruct();
      t->dataRef.SuppressDestruct();
      t->callback.SuppressDestruct();
      delete t;
    }
  }
};


// Throws a HashqError made by the registered factory (falls back to a plain
// Error before setup), with status an hq_status (positive).
void ThrowStatus(Napi::Env env, int status, const std::string &message) {
  InstanceData *data = env.GetInstanceData<InstanceData>();
  if (data && !data->errorFactory.IsEmpty()) {
    Napi::Value err = data->errorFactory.Call(
        {Napi::Number::New(env, status), Napi::String::New(env, message)});
    if (env.IsExceptionPending()) return;
    Napi::Error(env, err).ThrowAsJavaScriptException();
    return;
  }
  Napi::Error::New(env, message).ThrowAsJavaScriptException();
}

void ThrowBadArgument(Napi::Env env, const std::string &message) {
  ThrowStatus(env, HQ_ERR_BAD_ARGUMENT, message);
}

// A TypedArray's bytes, without throwing when v is none.
bool IsTypedArray(napi_env env, napi_value v, Bytes *out) {
  napi_typedarray_type type;
  size_t count;
  void *data;
  // One call for the common case; it fails without side effects on
  // anything that is not a TypedArray.
  if (napi_get_typedarray_info(env, v, &type, &count, &data, nullptr,
                               nullptr) == napi_ok) {
    size_t elem = 1;
    switch (type) {
      case napi_int16_array: case napi_uint16_array: elem = 2; break;
      case napi_int32_array: case napi_uint32_array: case napi_float32_array:
        elem = 4; break;
      case napi_float64_array: case napi_bigint64_array:
      case napi_biguint64_array: elem = 8; break;
      default: elem = 1;
    }
    out->data = static_cast<const uint8_t *>(data);
    out->len = count * elem;
    return true;
  }
  return false;
}

bool GetBytes(Napi::Env env, napi_value v, Bytes *out, const char *what) {
  if (IsTypedArray(env, v, out)) return true;
  void *data;
  bool is = false;
  if (napi_is_dataview(env, v, &is) == napi_ok && is) {
    size_t len;
    napi_get_dataview_info(env, v, &len, &data, nullptr, nullptr);
    out->data = static_cast<const uint8_t *>(data);
    out->len = len;
    return true;
  }
  ThrowBadArgument(env, std::string(what) +
                            " must be a Buffer, TypedArray or DataView");
  return false;
}

// A writable Uint8Array (Buffer).
bool GetOutput(Napi::Env env, napi_value v, uint8_t **data, size_t *len,
               const char *what) {
  napi_typedarray_type type;
  if (napi_get_typedarray_info(env, v, &type, len,
                               reinterpret_cast<void **>(data), nullptr,
                               nullptr) != napi_ok ||
      type != napi_uint8_array) {
    ThrowBadArgument(env, std::string(what) + " must be a Uint8Array");
    return false;
  }
  return true;
}

// The context: a Uint8Array of exactly HQ_CTX_SIZE bytes, 8-byte aligned.
hq_ctx *GetCtx(Napi::Env env, napi_value v) {
  uint8_t *data;
  size_t len;
  if (!GetOutput(env, v, &data, &len, "context")) return nullptr;
  if (len != HQ_CTX_SIZE) {
    ThrowBadArgument(env, "context must be " + std::to_string(HQ_CTX_SIZE) +
                              " bytes");
    return nullptr;
  }
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0) {
    ThrowBadArgument(env, "context must be 8-byte aligned");
    return nullptr;
  }
  return reinterpret_cast<hq_ctx *>(data);
}

bool GetUint32(Napi::Env env, napi_value v, uint32_t *out, const char *what) {
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok || !(d >= 0) ||
      d > 4294967295.0 || d != static_cast<double>(static_cast<uint32_t>(d))) {
    ThrowBadArgument(env, std::string(what) + " must be an integer >= 0");
    return false;
  }
  *out = static_cast<uint32_t>(d);
  return true;
}

// Checks that a live context holds a known algorithm (a context buffer
// filled by anything but hq_init/hq_deserialize must not reach the core).
bool CtxReady(Napi::Env env, const hq_ctx *ctx) {
  if (!hq_info_of(hq_ctx_algorithm(ctx))) {
    ThrowStatus(env, HQ_ERR_STATE_INVALID, "context is not initialised");
    return false;
  }
  return true;
}

// setup(errorFactory): registers the factory used for every error.
Napi::Value Setup(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!info[0].IsFunction()) {
    Napi::TypeError::New(env, "setup(errorFactory)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  env.GetInstanceData<InstanceData>()->errorFactory =
      Napi::Persistent(info[0].As<Napi::Function>());
  return env.Undefined();
}

// algorithms(): [{ name, id, digestLength, blockSize, xof, customizable,
// standard, implementation }] for every algorithm linked in.
Napi::Value Algorithms(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  int n = hq_algorithm_count();
  Napi::Array list = Napi::Array::New(env, n);
  for (int i = 0; i < n; i++) {
    const hq_info *a = hq_algorithm_at(i);
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", a->name);
    o.Set("id", a->id);
    o.Set("digestLength", a->digest_len);
    o.Set("blockSize", a->block_len);
    o.Set("xof", a->xof != 0);
    o.Set("customizable", a->customizable != 0);
    o.Set("standard", a->standard ? a->standard : "");
    const char *impl = hq_implementation(a->id);
    o.Set("implementation", impl ? impl : "portable");
    list.Set(i, o);
  }
  return list;
}

// init(ctx, id, custom | undefined, outlen)
Napi::Value Init(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  hq_ctx *ctx = GetCtx(env, info[0]);
  if (!ctx) return env.Undefined();
  uint32_t id, outlen;
  if (!GetUint32(env, info[1], &id, "algorithm id")) return env.Undefined();
  Bytes custom;
  if (!info[2].IsUndefined() && !GetBytes(env, info[2], &custom, "customization"))
    return env.Undefined();
  if (!GetUint32(env, info[3], &outlen, "output length")) return env.Undefined();
  if (custom.len > HQ_CUSTOM_MAX) {
    ThrowBadArgument(env, "customization is longer than " +
                              std::to_string(HQ_CUSTOM_MAX) + " bytes");
    return env.Undefined();
  }
  int rc = hq_init(ctx, static_cast<int>(id), custom.data, custom.len, outlen);
  if (rc < 0) {
    ThrowStatus(env, -rc,
                rc == -HQ_ERR_UNKNOWN_ALGORITHM
                    ? "unknown algorithm"
                    : "invalid options for this algorithm (customization or "
                      "output length)");
  }
  return env.Undefined();
}

// Hashes a JavaScript string as UTF-8 without creating a Buffer.
template <typename Fn>
bool WithString(Napi::Env env, napi_value v, Fn fn) {
  size_t len;
  if (napi_get_value_string_utf8(env, v, nullptr, 0, &len) != napi_ok)
    return false;
  char stack[1024];
  char *p = len < sizeof stack ? stack : static_cast<char *>(std::malloc(len + 1));
  if (!p) {
    Napi::Error::New(env, "out of memory").ThrowAsJavaScriptException();
    return false;
  }
  napi_get_value_string_utf8(env, v, p, len + 1, &len);
  fn(reinterpret_cast<const uint8_t *>(p), len);
  if (p != stack) std::free(p);
  return true;
}

// update(ctx, data): data is bytes or a string (UTF-8).
Napi::Value Update(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  hq_ctx *ctx = GetCtx(env, info[0]);
  if (!ctx || !CtxReady(env, ctx)) return env.Undefined();
  if (info[1].IsString()) {
    WithString(env, info[1], [ctx](const uint8_t *p, size_t n) {
      hq_update(ctx, p, n);
    });
    return env.Undefined();
  }
  Bytes in;
  if (!GetBytes(env, info[1], &in, "data")) return env.Undefined();
  hq_update(ctx, in.data, in.len);
  return env.Undefined();
}

// copyUpdate(dst, src, data): dst = src, then update(dst, data). One call
// for the immutable Hash.
Napi::Value CopyUpdate(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  hq_ctx *dst = GetCtx(env, info[0]);
  if (!dst) return env.Undefined();
  hq_ctx *src = GetCtx(env, info[1]);
  if (!src || !CtxReady(env, src)) return env.Undefined();
  Bytes in;
  if (!GetBytes(env, info[2], &in, "data")) return env.Undefined();
  std::memcpy(dst, src, HQ_CTX_SIZE);
  hq_update(dst, in.data, in.len);
  return env.Undefined();
}

long ReportFinal(Napi::Env env, long rc) {
  if (rc < 0)
    ThrowStatus(env, static_cast<int>(-rc),
                "invalid output length for this algorithm");
  return rc;
}

// final(ctx, out, outlen) → bytes written. out must hold outlen bytes.
Napi::Value Final(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  hq_ctx *ctx = GetCtx(env, info[0]);
  if (!ctx || !CtxReady(env, ctx)) return env.Undefined();
  uint8_t *out;
  size_t cap;
  uint32_t outlen;
  if (!GetOutput(env, info[1], &out, &cap, "output") ||
      !GetUint32(env, info[2], &outlen, "output length"))
    return env.Undefined();
  size_t want = outlen ? outlen : hq_ctx_outlen(ctx);
  if (cap < want) {
    ThrowBadArgument(env, "output buffer too small");
    return env.Undefined();
  }
  long rc = ReportFinal(env, hq_final(ctx, out, outlen));
  return rc < 0 ? env.Undefined() : Napi::Number::New(env, rc);
}

// hash(id, data, out, outlen | undefined, custom | undefined): the digest
// in out (outlen 0 or left out: the algorithm's default length).
Napi::Value Hash(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  uint32_t id, outlen = 0;
  if (!GetUint32(env, info[0], &id, "algorithm id")) return env.Undefined();
  uint8_t *out;
  size_t cap;
  if (!GetOutput(env, info[2], &out, &cap, "output") ||
      (!info[3].IsUndefined() &&
       !GetUint32(env, info[3], &outlen, "output length")))
    return env.Undefined();
  const hq_info *a = hq_info_of(static_cast<int>(id));
  if (!a) {
    ThrowStatus(env, HQ_ERR_UNKNOWN_ALGORITHM, "unknown algorithm");
    return env.Undefined();
  }
  if (cap < (outlen ? outlen : a->digest_len)) {
    ThrowBadArgument(env, "output buffer too small");
    return env.Undefined();
  }
  Bytes custom;
  if (info.Length() > 4 && !info[4].IsUndefined() &&
      !GetBytes(env, info[4], &custom, "customization"))
    return env.Undefined();
  long rc = 0;
  Bytes in;
  // Bytes first: one N-API call for the common case (GetBytes asks for a
  // TypedArray before anything else), the string check only after it.
  if (IsTypedArray(env, info[1], &in)) {
    rc = hq_hash(static_cast<int>(id), in.data, in.len, custom.data,
                 custom.len, out, outlen);
  } else if (info[1].IsString()) {
    if (!WithString(env, info[1], [&](const uint8_t *p, size_t n) {
          rc = hq_hash(static_cast<int>(id), p, n, custom.data, custom.len,
                       out, outlen);
        }))
      return env.Undefined();
  } else {
    if (!GetBytes(env, info[1], &in, "data")) return env.Undefined();
    rc = hq_hash(static_cast<int>(id), in.data, in.len, custom.data,
                 custom.len, out, outlen);
  }
  if (rc < 0)
    ThrowStatus(env, static_cast<int>(-rc),
                "invalid options for this algorithm (customization or output "
                "length)");
  return env.Undefined();
}

// The one-shot's common case, hash(id, data, out) with three arguments
// (default output length, no customization, data a TypedArray), in raw N-API
// calls: node-addon-api's CallbackInfo, a fourth argument to convert and a
// returned Number cost about 25 ns of the ~300 ns a 64-byte hash takes
// through Node (measured with empty functions: 17 ns raw, 27 ns through
// node-addon-api, ~9 ns per integer argument). Whatever else it is given,
// or a call the core refuses, goes to Hash(), which validates and throws.
napi_value HashFast(napi_env env, napi_callback_info cbinfo) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, cbinfo, &argc, argv, nullptr, nullptr) == napi_ok &&
      argc == 3) {
    double id;
    Bytes in;
    napi_typedarray_type type;
    size_t cap;
    void *out;
    const hq_info *a;
    if (napi_get_value_double(env, argv[0], &id) == napi_ok && id >= 0 &&
        id <= 255 && id == static_cast<double>(static_cast<int>(id)) &&
        (a = hq_info_of(static_cast<int>(id))) != nullptr &&
        IsTypedArray(env, argv[1], &in) &&
        napi_get_typedarray_info(env, argv[2], &type, &cap, &out, nullptr,
                                 nullptr) == napi_ok &&
        type == napi_uint8_array && cap >= a->digest_len &&
        hq_hash(static_cast<int>(id), in.data, in.len, nullptr, 0,
                static_cast<uint8_t *>(out), 0) >= 0)
      return nullptr;
  }
  return Hash(Napi::CallbackInfo(env, cbinfo));
}

// serialize(ctx, out, offset) → length written at out[offset…]; at least
// HQ_STATE_MAX bytes must follow offset.
Napi::Value Serialize(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  hq_ctx *ctx = GetCtx(env, info[0]);
  if (!ctx || !CtxReady(env, ctx)) return env.Undefined();
  uint8_t *out;
  size_t cap;
  uint32_t offset = 0;
  if (!GetOutput(env, info[1], &out, &cap, "output")) return env.Undefined();
  if (info.Length() > 2 && !GetUint32(env, info[2], &offset, "offset"))
    return env.Undefined();
  if (offset > cap || cap - offset < HQ_STATE_MAX) {
    ThrowBadArgument(env, "output buffer too small");
    return env.Undefined();
  }
  // A small integer: napi_create_int32 makes a Smi, cheaper than a double.
  napi_value n;
  napi_create_int32(env, static_cast<int32_t>(hq_serialize(ctx, out + offset)),
                    &n);
  return Napi::Value(env, n);
}

// deserialize(ctx, state, expectId) → the algorithm id (> 0) on success,
// else a negated hq_status: the TypeScript layer words the error for its
// caller (Hasher.restore and the resumable-hash classes say it differently).
Napi::Value Deserialize(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  hq_ctx *ctx = GetCtx(env, info[0]);
  if (!ctx) return env.Undefined();
  Bytes state;
  if (!GetBytes(env, info[1], &state, "state")) return env.Undefined();
  int32_t expect = -1;
  if (napi_get_value_int32(env, info[2], &expect) != napi_ok) expect = -1;
  int rc = hq_deserialize(ctx, state.data, state.len, expect < 0 ? -1 : expect);
  napi_value n;
  napi_create_int32(env, rc < 0 ? rc : hq_ctx_algorithm(ctx), &n);
  return Napi::Value(env, n);
}

// ctxOutlen(ctx): the context's default output length.
Napi::Value CtxOutlen(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  hq_ctx *ctx = GetCtx(env, info[0]);
  if (!ctx) return env.Undefined();
  return Napi::Number::New(env, hq_ctx_outlen(ctx));
}

// ctxBytes(ctx): message bytes absorbed (a double: exact up to 2^53).
Napi::Value CtxBytes(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  hq_ctx *ctx = GetCtx(env, info[0]);
  if (!ctx) return env.Undefined();
  return Napi::Number::New(env, static_cast<double>(hq_ctx_bytes(ctx)));
}

void Pump(Napi::Env env, AsyncQueue *q);

class DrainWorker : public Napi::AsyncWorker {
 public:
  DrainWorker(Napi::Env env, AsyncQueue *q)
      : Napi::AsyncWorker(env, "hashq.updateAsync"), q_(q) {}

  void Execute() override {
    {
      std::lock_guard<std::mutex> lock(q_->mu);
      q_->waiting--;
      if (q_->pending.empty()) return;
      a_ = q_->pending.front();
      q_->pending.pop_front();
      for (auto it = q_->pending.begin(); it != q_->pending.end(); ++it) {
        if (hq_pairable(a_->ctx, (*it)->ctx)) {
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
    } else if (a_) {
      hq_update(a_->ctx, a_->data.data, a_->data.len);
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
  // Releases the task and calls its callback with raw Node-API calls that
  // report failure instead of throwing: while a worker thread terminates,
  // JavaScript can no longer run, and a throw would abort the process.
  // False when JavaScript could not be called at all.
  static bool Finish(napi_env env, AsyncTask *t, napi_value *error) {
    if (!t) return true;
    Napi::FunctionReference cb = std::move(t->callback);
    delete t;  // releases the context and the data
    napi_value fn, recv, result;
    if (napi_get_reference_value(env, cb, &fn) != napi_ok || !fn) return false;
    napi_get_undefined(env, &recv);
    if (napi_call_function(env, recv, fn, 0, nullptr, &result) == napi_ok)
      return true;
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (!pending) return false;
    napi_value e;
    napi_get_and_clear_last_exception(env, &e);
    if (!*error) *error = e;
    return true;
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

// updateAsync(ctx, data, callback): data must be bytes (the TypeScript
// layer turns strings into Buffers first).
Napi::Value UpdateAsync(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  hq_ctx *ctx = GetCtx(env, info[0]);
  if (!ctx || !CtxReady(env, ctx)) return env.Undefined();
  Bytes in;
  if (!GetBytes(env, info[1], &in, "data")) return env.Undefined();
  if (!info[2].IsFunction()) {
    ThrowBadArgument(env, "callback must be a function");
    return env.Undefined();
  }
  AsyncQueue *q = &env.GetInstanceData<InstanceData>()->queue;
  auto *t = new AsyncTask{ctx, in, Napi::Persistent(info[0].As<Napi::Object>()),
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

Napi::Value CpuCycles(const Napi::CallbackInfo &info) {
  return Napi::BigInt::New(info.Env(), static_cast<uint64_t>(hq_cpucycles()));
}

Napi::Value CpuCyclesSource(const Napi::CallbackInfo &info) {
  return Napi::String::New(info.Env(), hq_cpucycles_source());
}

// Dispatch once per process: the module may be loaded again by worker
// threads while pool threads of the first instance are hashing.
// HASHQ_NATIVE_DISABLE hides CPU features by name (e.g. "avx512vl,avx2")
// so the next path down is used: tests reach every path the machine has.
std::once_flag dispatchOnce;
bool forcedPortable = false;
int badFeature = 0; // position of an unknown name in HASHQ_NATIVE_DISABLE

Napi::Array FeatureNames(Napi::Env env, uint32_t bits) {
  Napi::Array out = Napi::Array::New(env);
  uint32_t n = 0;
  for (uint32_t bit = 1; bit != 0; bit <<= 1) {
    const char *name = (bits & bit) ? hq_cpu_feature_name(bit) : nullptr;
    if (name) out.Set(n++, Napi::String::New(env, name));
  }
  return out;
}

// The size limits of hashq.h, for the TypeScript layer's checks.
Napi::Object Limits(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("ctxSize", Napi::Number::New(env, HQ_CTX_SIZE));
  o.Set("stateMax", Napi::Number::New(env, HQ_STATE_MAX));
  o.Set("outputMax", Napi::Number::New(env, HQ_OUTLEN_MAX));
  o.Set("defaultOutputMax", Napi::Number::New(env, HQ_DEFAULT_OUTLEN_MAX));
  o.Set("customMax", Napi::Number::New(env, HQ_CUSTOM_MAX));
  return o;
}

// enum hq_status by name without the HQ_ prefix: the `code` of the
// matching HashqError.
Napi::Object Statuses(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("ERR_UNKNOWN_ALGORITHM", Napi::Number::New(env, HQ_ERR_UNKNOWN_ALGORITHM));
  o.Set("ERR_STATE_INVALID", Napi::Number::New(env, HQ_ERR_STATE_INVALID));
  o.Set("ERR_STATE_ALGORITHM_MISMATCH", Napi::Number::New(env, HQ_ERR_STATE_ALGORITHM_MISMATCH));
  o.Set("ERR_STATE_VERSION", Napi::Number::New(env, HQ_ERR_STATE_VERSION));
  o.Set("ERR_BAD_ARGUMENT", Napi::Number::New(env, HQ_ERR_BAD_ARGUMENT));
  return o;
}

Napi::Object Module(Napi::Env env, Napi::Object exports) {
  std::call_once(dispatchOnce, [] {
    const char *impl = std::getenv("HASHQ_NATIVE_IMPL");
    forcedPortable = impl && std::strcmp(impl, "portable") == 0;
    const char *disable = std::getenv("HASHQ_NATIVE_DISABLE");
    uint32_t hidden = 0;
    if (disable) badFeature = hq_cpu_feature_bits(disable, &hidden);
    if (forcedPortable) hq_dispatch_init(1);
    else hq_dispatch_init_hiding(badFeature ? 0 : hidden);
  });
  if (badFeature) {
    Napi::Error err = Napi::Error::New(
        env, "HASHQ_NATIVE_DISABLE: unknown CPU feature name at position " + std::to_string(badFeature) +
                 " (known: ssse3, sse4.1, sse4.2, sha, bmi1, bmi2, pclmul, avx2, vpclmul, avx512vl, "
                 "sha1, sha2, sha512, crc32, pmull, zbb, zknh, zbc)");
    err.Set("code", Napi::String::New(env, "ERR_BAD_ARGUMENT"));
    err.ThrowAsJavaScriptException();
    return exports;
  }
  env.SetInstanceData(new InstanceData());
  exports.Set("setup", Napi::Function::New(env, Setup));
  exports.Set("algorithms", Napi::Function::New(env, Algorithms));
  exports.Set("init", Napi::Function::New(env, Init));
  exports.Set("update", Napi::Function::New(env, Update));
  exports.Set("copyUpdate", Napi::Function::New(env, CopyUpdate));
  exports.Set("final", Napi::Function::New(env, Final));
  {
    napi_value hash;
    napi_create_function(env, "hash", NAPI_AUTO_LENGTH, HashFast, nullptr, &hash);
    exports.Set("hash", Napi::Value(env, hash));
  }
  exports.Set("serialize", Napi::Function::New(env, Serialize));
  exports.Set("deserialize", Napi::Function::New(env, Deserialize));
  exports.Set("ctxOutlen", Napi::Function::New(env, CtxOutlen));
  exports.Set("ctxBytes", Napi::Function::New(env, CtxBytes));
  exports.Set("updateAsync", Napi::Function::New(env, UpdateAsync));
  exports.Set("setAsyncLimit", Napi::Function::New(env, SetAsyncLimit));
  exports.Set("asyncStats", Napi::Function::New(env, AsyncStats));
  exports.Set("cpucycles", Napi::Function::New(env, CpuCycles));
  exports.Set("cpucyclesSource", Napi::Function::New(env, CpuCyclesSource));
  exports.Set("forcedPortable", Napi::Boolean::New(env, forcedPortable));
  exports.Set("cpuFeatures", FeatureNames(env, hq_cpu_features()));
  exports.Set("cpuDetected", FeatureNames(env, hq_cpu_detected()));
  exports.Set("version", Napi::String::New(env, HASHQ_VERSION_STRING));
  exports.Set("limits", Limits(env));
  exports.Set("status", Statuses(env));
  return exports;
}

}  // namespace

NODE_API_MODULE(hashq, Module)
