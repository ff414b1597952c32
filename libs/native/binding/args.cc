// Errors of the Node-API glue: made by the factory the TypeScript layer
// registers (setup), so they come out as HashqError subclasses with a code.
#include "args.h"

#include "instance.h"

namespace hashq {

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

}  // namespace hashq
