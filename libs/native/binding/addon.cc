// Node-API glue for the hashq C core: the module's exports and the one
// dispatch per process. The calls live beside it: hash_calls.cc (contexts,
// one-shots, states), async_queue.cc (updateAsync on the thread pool),
// feed.cc (a context fed chunk by chunk, hashed on the pool as they come),
// args.h (argument checks, errors).
//
// Contexts live in JavaScript-owned Uint8Arrays of HQ_CTX_SIZE bytes (plain
// data, copyable), and outputs are written into buffers allocated in
// JavaScript: creating objects here costs far more than a 64-byte hash.
// Errors are built by a factory the TypeScript layer registers (setup), so
// they come out as HashqError subclasses with a stable code.
#include <napi.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

#include "async_queue.h"
#include "feed.h"
#include "file_calls.h"
#include "hash_calls.h"
#include "hashq.h"
#include "hashq_testing.h"
#include "instance.h"

namespace {

using namespace hashq;

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

Napi::Value CpuCycles(const Napi::CallbackInfo &info) {
  return Napi::BigInt::New(info.Env(), static_cast<uint64_t>(hq_cpucycles()));
}

Napi::Value CpuCyclesSource(const Napi::CallbackInfo &info) {
  return Napi::String::New(info.Env(), hq_cpucycles_source());
}

// setRecvLowWater(fd, bytes): 0 or a negated errno (hq_set_recv_lowat).
Napi::Value SetRecvLowWater(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  uint32_t fd, bytes;
  if (!GetUint32(env, info[0], &fd, "fd") || !GetUint32(env, info[1], &bytes, "bytes"))
    return env.Undefined();
  if (fd > 0x7fffffff || bytes > 0x7fffffff) {
    ThrowBadArgument(env, "fd and bytes must fit an int");
    return env.Undefined();
  }
  int r = hq_set_recv_lowat(static_cast<int>(fd), static_cast<int>(bytes));
  return Napi::Number::New(env, r);
}

// retainFreedHeap(bytes): true once glibc's malloc keeps up to `bytes` free at
// the top of its heaps (M_TRIM_THRESHOLD) and a quarter of that after it
// trims (M_TOP_PAD); false, changing nothing, under another C library.
Napi::Value RetainFreedHeap(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  uint32_t bytes;
  if (!GetUint32(env, info[0], &bytes, "bytes")) return env.Undefined();
  if (bytes > 0x7fffffff) {
    ThrowBadArgument(env, "bytes must fit an int");
    return env.Undefined();
  }
#if defined(__GLIBC__)
  bool set = mallopt(M_TRIM_THRESHOLD, static_cast<int>(bytes)) == 1 &&
             mallopt(M_TOP_PAD, static_cast<int>(bytes / 4)) == 1;
  return Napi::Boolean::New(env, set);
#else
  return Napi::Boolean::New(env, false);
#endif
}

// setThreadFifo(tid, priority): thread or process `tid` (0: the caller) to
// SCHED_FIFO at `priority` (1-99), or back to SCHED_OTHER with 0. With
// SCHED_RESET_ON_FORK: threads and processes it starts begin at the normal
// policy. 0 or a negated errno (EPERM without CAP_SYS_NICE or RLIMIT_RTPRIO;
// ENOSYS off Linux).
Napi::Value SetThreadFifo(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  uint32_t tid, priority;
  if (!GetUint32(env, info[0], &tid, "tid") || !GetUint32(env, info[1], &priority, "priority"))
    return env.Undefined();
  if (tid > 0x7fffffff || priority > 99) {
    ThrowBadArgument(env, "tid must fit an int and priority be 0-99");
    return env.Undefined();
  }
#if defined(__linux__)
  struct sched_param param = {};
  param.sched_priority = static_cast<int>(priority);
  int policy = (priority > 0 ? SCHED_FIFO : SCHED_OTHER) | SCHED_RESET_ON_FORK;
  int r = sched_setscheduler(static_cast<pid_t>(tid), policy, &param) == 0 ? 0 : -errno;
  return Napi::Number::New(env, r);
#else
  return Napi::Number::New(env, -ENOSYS);
#endif
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

// A plain object of numbers by name.
struct Named {
  const char *name;
  double value;
};
template <size_t N>
Napi::Object Table(Napi::Env env, const Named (&rows)[N]) {
  Napi::Object o = Napi::Object::New(env);
  for (const Named &r : rows) o.Set(r.name, Napi::Number::New(env, r.value));
  return o;
}

// The size limits of hashq.h, for the TypeScript layer's checks.
const Named limits[] = {
    {"ctxSize", HQ_CTX_SIZE},
    {"stateMax", HQ_STATE_MAX},
    {"outputMax", HQ_OUTLEN_MAX},
    {"defaultOutputMax", HQ_DEFAULT_OUTLEN_MAX},
    {"customMax", HQ_CUSTOM_MAX},
};

// enum hq_status by name without the HQ_ prefix: the `code` of the
// matching HashqError.
const Named statuses[] = {
    {"ERR_UNKNOWN_ALGORITHM", HQ_ERR_UNKNOWN_ALGORITHM},
    {"ERR_STATE_INVALID", HQ_ERR_STATE_INVALID},
    {"ERR_STATE_ALGORITHM_MISMATCH", HQ_ERR_STATE_ALGORITHM_MISMATCH},
    {"ERR_STATE_VERSION", HQ_ERR_STATE_VERSION},
    {"ERR_BAD_ARGUMENT", HQ_ERR_BAD_ARGUMENT},
};

// enum hq_file_status by name: hashFiles' per-file status, openBeneath's.
const Named fileStatuses[] = {
    {"OK", HQ_FILE_OK},
    {"NOT_FOUND", HQ_FILE_NOT_FOUND},
    {"FORBIDDEN", HQ_FILE_FORBIDDEN},
    {"OUTSIDE", HQ_FILE_OUTSIDE},
    {"NOT_REGULAR", HQ_FILE_NOT_REGULAR},
    {"CHANGED", HQ_FILE_CHANGED},
    {"UNSUPPORTED", HQ_FILE_UNSUPPORTED},
    {"READ_FAILED", HQ_FILE_READ_FAILED},
};

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
  exports.Set("feed", Napi::Function::New(env, FeedChunkCall));
  exports.Set("feedWait", Napi::Function::New(env, FeedWait));
  exports.Set("setAsyncLimit", Napi::Function::New(env, SetAsyncLimit));
  exports.Set("asyncStats", Napi::Function::New(env, AsyncStats));
  exports.Set("setPoolIdle", Napi::Function::New(env, SetPoolIdle));
  exports.Set("updateFromFile", Napi::Function::New(env, UpdateFromFile));
  exports.Set("hashFiles", Napi::Function::New(env, HashFiles));
  exports.Set("openBeneath", Napi::Function::New(env, OpenBeneath));
  exports.Set("fileStatus", Table(env, fileStatuses));
  exports.Set("setRecvLowWater", Napi::Function::New(env, SetRecvLowWater));
  exports.Set("retainFreedHeap", Napi::Function::New(env, RetainFreedHeap));
  exports.Set("setThreadFifo", Napi::Function::New(env, SetThreadFifo));
  exports.Set("cpucycles", Napi::Function::New(env, CpuCycles));
  exports.Set("cpucyclesSource", Napi::Function::New(env, CpuCyclesSource));
  exports.Set("forcedPortable", Napi::Boolean::New(env, forcedPortable));
  exports.Set("cpuFeatures", FeatureNames(env, hq_cpu_features()));
  exports.Set("cpuDetected", FeatureNames(env, hq_cpu_detected()));
  exports.Set("version", Napi::String::New(env, HASHQ_VERSION_STRING));
  exports.Set("limits", Table(env, limits));
  exports.Set("status", Table(env, statuses));
  return exports;
}

}  // namespace

NODE_API_MODULE(hashq, Module)
