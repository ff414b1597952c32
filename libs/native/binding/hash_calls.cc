#include "hash_calls.h"

#include <cstring>

#include "args.h"

namespace hashq {

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

static long ReportFinal(Napi::Env env, long rc) {
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
static Napi::Value Hash(const Napi::CallbackInfo &info) {
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
// returned Number are a sizeable part of a short hash's cost (README,
// implementation notes). Whatever else it is given, or a call the core
// refuses, goes to Hash(), which validates and throws.
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

}  // namespace hashq
