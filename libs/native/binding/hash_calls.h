// The synchronous calls of the addon: algorithm metadata, contexts (init,
// update, final), one-shot hashes, serialized states.
#ifndef HASHQ_BINDING_HASH_CALLS_H
#define HASHQ_BINDING_HASH_CALLS_H

#include <napi.h>

namespace hashq {

Napi::Value Algorithms(const Napi::CallbackInfo &info);
Napi::Value Init(const Napi::CallbackInfo &info);
Napi::Value Update(const Napi::CallbackInfo &info);
Napi::Value CopyUpdate(const Napi::CallbackInfo &info);
Napi::Value Final(const Napi::CallbackInfo &info);
// hash() in raw N-API: napi_create_function, not Napi::Function::New.
napi_value HashFast(napi_env env, napi_callback_info cbinfo);
Napi::Value Serialize(const Napi::CallbackInfo &info);
Napi::Value Deserialize(const Napi::CallbackInfo &info);
Napi::Value CtxOutlen(const Napi::CallbackInfo &info);
Napi::Value CtxBytes(const Napi::CallbackInfo &info);

}  // namespace hashq

#endif
