// Argument checks of the Node-API glue: bytes in (any TypedArray, DataView
// or Buffer), writable outputs, contexts, integers. A failed check throws a
// HashqError (ERR_BAD_ARGUMENT, or the hq_status given) and returns false or
// null. Inline: they sit on every call's path.
#ifndef HASHQ_BINDING_ARGS_H
#define HASHQ_BINDING_ARGS_H

#include <napi.h>

#include <cstdlib>
#include <string>

#include "hashq.h"

namespace hashq {

// A read-only view of bytes: any TypedArray, DataView or Buffer.
struct Bytes {
  const uint8_t *data = nullptr;
  size_t len = 0;
};

// Throws a HashqError made by the registered factory (falls back to a plain
// Error before setup), with status an hq_status (positive).
void ThrowStatus(Napi::Env env, int status, const std::string &message);

inline void ThrowBadArgument(Napi::Env env, const std::string &message) {
  ThrowStatus(env, HQ_ERR_BAD_ARGUMENT, message);
}

// A TypedArray's bytes, without throwing when v is none.
inline bool IsTypedArray(napi_env env, napi_value v, Bytes *out) {
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

inline bool GetBytes(Napi::Env env, napi_value v, Bytes *out, const char *what) {
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
inline bool GetOutput(Napi::Env env, napi_value v, uint8_t **data, size_t *len,
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
inline hq_ctx *GetCtx(Napi::Env env, napi_value v) {
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

inline bool GetUint32(Napi::Env env, napi_value v, uint32_t *out, const char *what) {
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
inline bool CtxReady(Napi::Env env, const hq_ctx *ctx) {
  if (!hq_info_of(hq_ctx_algorithm(ctx))) {
    ThrowStatus(env, HQ_ERR_STATE_INVALID, "context is not initialised");
    return false;
  }
  return true;
}

// Hashes a JavaScript string as UTF-8 without creating a Buffer.
template <typename Fn>
inline bool WithString(Napi::Env env, napi_value v, Fn fn) {
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

}  // namespace hashq

#endif
