// What the glue keeps per Node.js environment: the error factory, the
// async queue and the feeds.
#ifndef HASHQ_BINDING_INSTANCE_H
#define HASHQ_BINDING_INSTANCE_H

#include <napi.h>

#include <unordered_map>

#include "async_queue.h"
#include "feed.h"

namespace hashq {

// Per environment (main thread, each worker thread).
struct InstanceData {
  Napi::FunctionReference errorFactory;  // (status, message) => Error
  AsyncQueue queue;
  std::unordered_map<hq_ctx *, Feed *> feeds;  // by context, while in use
  napi_threadsafe_function feedSignal = nullptr;  // a feed's pool task -> here
  ~InstanceData() {
    // Tasks never taken (the environment is going away): their references
    // belong to a dying environment, so they are not released one by one.
    for (AsyncTask *t : queue.pending) {
      t->ctxRef.SuppressDestruct();
      t->dataRef.SuppressDestruct();
      t->callback.SuppressDestruct();
      delete t;
    }
    for (auto &entry : feeds) delete entry.second;  // the same for theirs
  }
};

}  // namespace hashq

#endif
