// What the glue keeps per Node.js environment: the error factory and the
// async queue.
#ifndef HASHQ_BINDING_INSTANCE_H
#define HASHQ_BINDING_INSTANCE_H

#include <napi.h>

#include "async_queue.h"

namespace hashq {

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

}  // namespace hashq

#endif
