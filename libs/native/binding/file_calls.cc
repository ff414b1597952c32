// File input on libuv's thread pool: updateFromFile (a range of an open
// descriptor into one or more hasher contexts), hashFiles (many small
// files beneath a directory descriptor) and openBeneath (one file opened
// beneath a root for the caller). The C core does the reading and
// hashing (src/file_io.c); this file checks arguments, keeps what the pool
// thread touches referenced, and reports back.
#include "file_calls.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "async_queue.h"

namespace hashq {

namespace {

// One read buffer per pool thread, reused by every call on that thread:
// no allocation or page faults per call, and its lines stay in the core's
// cache between pieces. Aligned for the vector loads of the hash loops.
uint8_t *ThreadBuffer(size_t size) {
  struct Freer {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  thread_local std::unique_ptr<uint8_t, Freer> buf;
  thread_local size_t have = 0;
  if (have != size) {
    buf.reset();
    have = 0;
    void *p = nullptr;
    if (posix_memalign(&p, 64, size) != 0) return nullptr;
    buf.reset(static_cast<uint8_t *>(p));
    have = size;
  }
  return buf.get();
}

// A descriptor of our own for the pool thread: the caller may close its
// own (a cancel closes the file) while the work runs, and the number must
// not be reused under us. Negative errno on failure.
int DupFd(int fd) {
  int d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  return d < 0 ? -errno : d;
}

bool GetFd(Napi::Env env, napi_value v, int *fd, const char *what) {
  uint32_t n;
  if (!GetUint32(env, v, &n, what)) return false;
  if (n > 0x7fffffff) {
    ThrowBadArgument(env, std::string(what) + " is not a descriptor");
    return false;
  }
  *fd = static_cast<int>(n);
  return true;
}

// An integer in [0, 2^53].
bool GetSafeUint(Napi::Env env, napi_value v, uint64_t *out, const char *what) {
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok || !(d >= 0) ||
      d > 9007199254740992.0 || d != static_cast<double>(static_cast<uint64_t>(d))) {
    ThrowBadArgument(env, std::string(what) + " must be a safe integer >= 0");
    return false;
  }
  *out = static_cast<uint64_t>(d);
  return true;
}

// Read buffer sizes a caller may ask for (bytes).
constexpr uint32_t kMinBuffer = 4096;
constexpr uint32_t kMaxBuffer = 16u << 20;

bool GetBufferSize(Napi::Env env, napi_value v, uint32_t *out) {
  if (!GetUint32(env, v, out, "buffer size")) return false;
  if (*out < kMinBuffer || *out > kMaxBuffer) {
    ThrowBadArgument(env, "buffer size must be from 4096 to 16777216 bytes");
    return false;
  }
  return true;
}

class UpdateFromFileWorker : public Napi::AsyncWorker {
 public:
  UpdateFromFileWorker(Napi::Function cb, std::vector<hq_ctx *> ctxs,
                       Napi::Array ctxRefs, int fd, uint64_t offset,
                       uint64_t length, uint32_t bufSize)
      : Napi::AsyncWorker(cb, "hashq.updateFromFile"),
        ctxs_(std::move(ctxs)),
        ctxRefs_(Napi::Persistent(ctxRefs.As<Napi::Object>())),
        fd_(fd),
        offset_(offset),
        length_(length),
        bufSize_(bufSize) {}

  ~UpdateFromFileWorker() override {
    if (fd_ >= 0) close(fd_);
  }

  void Execute() override {
    ApplyPoolPolicy();
    uint8_t *buf = ThreadBuffer(bufSize_);
    if (!buf) {
      result_ = -ENOMEM;
      return;
    }
    result_ = hq_update_fd(ctxs_.data(), ctxs_.size(), fd_, offset_, length_,
                           buf, bufSize_);
  }

  // callback(errno, bytes): errno 0 and the bytes absorbed, or an errno.
  void OnOK() override {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    int64_t r = result_;
    Callback().Call({Napi::Number::New(env, r < 0 ? static_cast<double>(-r) : 0),
                     Napi::Number::New(env, r < 0 ? 0 : static_cast<double>(r))});
  }

 private:
  std::vector<hq_ctx *> ctxs_;
  Napi::ObjectReference ctxRefs_;  // the contexts stay alive while we hash
  int fd_;
  uint64_t offset_, length_;
  uint32_t bufSize_;
  int64_t result_ = 0;
};

// The contexts of an array (each a live, distinct context).
bool GetContexts(Napi::Env env, Napi::Value v, std::vector<hq_ctx *> *out) {
  if (!v.IsArray()) {
    ThrowBadArgument(env, "contexts must be an array");
    return false;
  }
  Napi::Array a = v.As<Napi::Array>();
  uint32_t n = a.Length();
  if (n == 0 || n > 64) {
    ThrowBadArgument(env, "from 1 to 64 hashers are needed");
    return false;
  }
  for (uint32_t i = 0; i < n; i++) {
    hq_ctx *ctx = GetCtx(env, a.Get(i));
    if (!ctx || !CtxReady(env, ctx)) return false;
    for (hq_ctx *seen : *out) {
      if (seen == ctx) {
        ThrowBadArgument(env, "the same hasher is given twice");
        return false;
      }
    }
    out->push_back(ctx);
  }
  return true;
}

// The hashFiles work of one pool thread: names [start, end) of the list.
class HashFilesWorker : public Napi::AsyncWorker {
 public:
  HashFilesWorker(Napi::Function cb, Napi::Object refs, int dirfd,
                  const char *names, size_t namesLen, uint32_t start,
                  uint32_t end, std::vector<uint8_t> templates,
                  std::vector<uint32_t> outlens, unsigned flags,
                  uint8_t *digests, uint32_t stride, int64_t *info,
                  int32_t *status, uint32_t bufSize)
      : Napi::AsyncWorker(cb, "hashq.hashFiles"),
        refs_(Napi::Persistent(refs)),
        dirfd_(dirfd),
        names_(names),
        namesLen_(namesLen),
        start_(start),
        end_(end),
        templates_(std::move(templates)),
        outlens_(std::move(outlens)),
        flags_(flags),
        digests_(digests),
        stride_(stride),
        info_(info),
        status_(status),
        bufSize_(bufSize) {}

  ~HashFilesWorker() override {
    if (dirfd_ >= 0) close(dirfd_);
  }

  void Execute() override {
    ApplyPoolPolicy();
    size_t n = outlens_.size();
    uint8_t *buf = ThreadBuffer(bufSize_);
    // scratch contexts, 8-byte aligned
    std::vector<uint64_t> scratch(n * (HQ_CTX_SIZE / 8));
    std::vector<hq_ctx *> ctxs(n);
    std::vector<const hq_ctx *> tmpl(n);
    for (size_t i = 0; i < n; i++) {
      ctxs[i] = reinterpret_cast<hq_ctx *>(scratch.data() + i * (HQ_CTX_SIZE / 8));
      tmpl[i] = reinterpret_cast<const hq_ctx *>(templates_.data() + i * HQ_CTX_SIZE);
    }
    // skip to name number start_ (names are NUL-terminated, one after another)
    const char *p = names_;
    const char *limit = names_ + namesLen_;
    for (uint32_t i = 0; i < start_ && p < limit; i++) {
      const void *z = std::memchr(p, 0, static_cast<size_t>(limit - p));
      p = z ? static_cast<const char *>(z) + 1 : limit;
    }
    for (uint32_t i = start_; i < end_; i++) {
      hq_file_info fi;
      int st;
      if (!buf) {
        std::memset(&fi, 0, sizeof fi);
        fi.err = ENOMEM;
        st = HQ_FILE_READ_FAILED;
      } else {
        st = hq_hash_file_at(dirfd_, p, flags_, tmpl.data(), ctxs.data(), n,
                             buf, bufSize_, &fi);
      }
      int64_t *row = info_ + 4 * static_cast<size_t>(i);
      row[0] = static_cast<int64_t>(fi.size);
      row[1] = fi.mtime_ns;
      row[2] = static_cast<int64_t>(fi.dev);
      row[3] = static_cast<int64_t>(fi.ino);
      status_[2 * static_cast<size_t>(i)] = st;
      status_[2 * static_cast<size_t>(i) + 1] = fi.err;
      if (st == HQ_FILE_OK) {
        uint8_t *out = digests_ + static_cast<size_t>(i) * stride_;
        for (size_t a = 0; a < n; a++) {
          hq_final(ctxs[a], out, outlens_[a]);
          out += outlens_[a];
        }
      }
      p += std::strlen(p) + 1;  // the list was checked: NUL-terminated
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    Callback().Call({});
  }

 private:
  Napi::ObjectReference refs_;  // names and outputs stay alive
  int dirfd_;
  const char *names_;
  size_t namesLen_;
  uint32_t start_, end_;
  std::vector<uint8_t> templates_;
  std::vector<uint32_t> outlens_;
  unsigned flags_;
  uint8_t *digests_;
  uint32_t stride_;
  int64_t *info_;
  int32_t *status_;
  uint32_t bufSize_;
};

template <typename T>
bool GetTyped(Napi::Env env, napi_value v, napi_typedarray_type want, T **data,
              size_t *count, const char *what) {
  napi_typedarray_type type;
  void *p;
  if (napi_get_typedarray_info(env, v, &type, count, &p, nullptr, nullptr) !=
          napi_ok ||
      type != want) {
    ThrowBadArgument(env, std::string(what) + " has the wrong type");
    return false;
  }
  *data = static_cast<T *>(p);
  return true;
}

// openBeneath's one pool task: hq_open_beneath, then the descriptor is the
// caller's (closed here only when the callback never got it).
class OpenBeneathWorker : public Napi::AsyncWorker {
 public:
  OpenBeneathWorker(Napi::Function cb, std::string root, std::string rel,
                    bool keepOpen)
      : Napi::AsyncWorker(cb, "hashq.openBeneath"),
        root_(std::move(root)),
        rel_(std::move(rel)),
        keepOpen_(keepOpen) {
    out_.fd = -1;
    out_.path_len = 0;
  }

  ~OpenBeneathWorker() override {
    if (out_.fd >= 0) close(out_.fd);
  }

  void Execute() override {
    status_ = hq_open_beneath(root_.c_str(), rel_.c_str(), &out_);
    if (!keepOpen_ && out_.fd >= 0) {  // the caller wants its name and size only
      close(out_.fd);
      out_.fd = -1;
    }
  }

  // callback(status, errno, fd, path, size, mtimeNs, dev, ino, mode): fd -1
  // unless status is OK (and keepOpen), path '' unless OK; the numbers as BigInts, signed 64-bit
  // as in Node's fstat(fd, {bigint: true}).
  static Napi::Value Signed(Napi::Env env, uint64_t v) {
    return Napi::BigInt::New(env, static_cast<int64_t>(v));
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    int fd = out_.fd;
    out_.fd = -1;  // the caller's from now on
    Callback().Call({Napi::Number::New(env, status_), Napi::Number::New(env, out_.err),
                     Napi::Number::New(env, fd),
                     Napi::String::New(env, out_.path, out_.path_len),
                     Signed(env, out_.size), Napi::BigInt::New(env, out_.mtime_ns),
                     Signed(env, out_.dev), Signed(env, out_.ino), Signed(env, out_.mode)});
  }

 private:
  std::string root_, rel_;
  bool keepOpen_;
  hq_opened_file out_;
  int status_ = HQ_FILE_READ_FAILED;
};

// A path argument: a string without NUL (UTF-8 for the kernel).
bool GetPath(Napi::Env env, napi_value v, std::string *out, const char *what) {
  size_t len;
  if (napi_get_value_string_utf8(env, v, nullptr, 0, &len) != napi_ok) {
    ThrowBadArgument(env, std::string(what) + " must be a string");
    return false;
  }
  out->resize(len);
  napi_get_value_string_utf8(env, v, &(*out)[0], len + 1, &len);
  if (std::memchr(out->data(), 0, len) != nullptr) {
    ThrowBadArgument(env, std::string(what) + " must not contain NUL");
    return false;
  }
  return true;
}


}  // namespace

// updateFromFile(ctxs, fd, offset, length, bufferSize, callback) → 0, or a
// negated errno when fd cannot be duplicated (callback never called).
Napi::Value UpdateFromFile(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::vector<hq_ctx *> ctxs;
  int fd;
  uint64_t offset, length;
  uint32_t bufSize;
  if (!GetContexts(env, info[0], &ctxs) || !GetFd(env, info[1], &fd, "fd") ||
      !GetSafeUint(env, info[2], &offset, "offset") ||
      !GetSafeUint(env, info[3], &length, "length") ||
      !GetBufferSize(env, info[4], &bufSize))
    return env.Undefined();
  if (!info[5].IsFunction()) {
    ThrowBadArgument(env, "callback must be a function");
    return env.Undefined();
  }
  int own = DupFd(fd);
  if (own < 0) return Napi::Number::New(env, own);
  (new UpdateFromFileWorker(info[5].As<Napi::Function>(), std::move(ctxs),
                            info[0].As<Napi::Array>(), own, offset, length,
                            bufSize))
      ->Queue();
  return Napi::Number::New(env, 0);
}

// hashFiles(dirfd, names, count, start, end, templates, outlens, flags,
//           digests, info, status, bufferSize, callback) → 0 or a negated
// errno (dirfd cannot be duplicated). names: `count` NUL-terminated names
// one after another; templates: initialised contexts, one per algorithm;
// outlens: Uint32Array of their output lengths; digests: Uint8Array of
// count × sum(outlens); info: BigInt64Array of count × 4 (size, mtime ns,
// dev, ino); status: Int32Array of count × 2 (hq_file_status, errno).
// Entries [start, end) are written.
Napi::Value HashFiles(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  int dirfd;
  uint32_t count, start, end, flags, bufSize;
  Bytes names;
  if (!GetFd(env, info[0], &dirfd, "directory fd") ||
      !GetBytes(env, info[1], &names, "names") ||
      !GetUint32(env, info[2], &count, "count") ||
      !GetUint32(env, info[3], &start, "start") ||
      !GetUint32(env, info[4], &end, "end"))
    return env.Undefined();
  if (start > end || end > count) {
    ThrowBadArgument(env, "bad range of names");
    return env.Undefined();
  }
  // exactly `count` names, each NUL-terminated and not empty
  {
    uint64_t seen = 0;
    size_t len = 0;
    bool empty = false;
    for (size_t i = 0; i < names.len; i++) {
      if (names.data[i] == 0) {
        empty = empty || len == 0;
        seen++;
        len = 0;
      } else {
        len++;
      }
    }
    if (empty || seen != count || len != 0) {
      ThrowBadArgument(env, "names must be non-empty and NUL-terminated");
      return env.Undefined();
    }
  }
  std::vector<hq_ctx *> ctxs;
  if (!GetContexts(env, info[5], &ctxs)) return env.Undefined();
  uint32_t *outlens;
  size_t nOut;
  if (!GetTyped(env, info[6], napi_uint32_array, &outlens, &nOut, "outlens"))
    return env.Undefined();
  if (nOut != ctxs.size()) {
    ThrowBadArgument(env, "one output length per algorithm is needed");
    return env.Undefined();
  }
  uint64_t stride = 0;
  for (size_t i = 0; i < nOut; i++) {
    if (outlens[i] == 0 || outlens[i] > HQ_DEFAULT_OUTLEN_MAX) {
      ThrowBadArgument(env, "bad output length");
      return env.Undefined();
    }
    // a fixed-length algorithm takes its own length only
    const hq_info *a = hq_info_of(hq_ctx_algorithm(ctxs[i]));
    if (!a->xof && outlens[i] != a->digest_len) {
      ThrowBadArgument(env, "output length of a fixed-length algorithm");
      return env.Undefined();
    }
    stride += outlens[i];
  }
  if (!GetUint32(env, info[7], &flags, "flags")) return env.Undefined();
  uint8_t *digests;
  int64_t *fileInfo;
  int32_t *status;
  size_t nd, ni, ns;
  if (!GetTyped(env, info[8], napi_uint8_array, &digests, &nd, "digests") ||
      !GetTyped(env, info[9], napi_bigint64_array, &fileInfo, &ni, "info") ||
      !GetTyped(env, info[10], napi_int32_array, &status, &ns, "status") ||
      !GetBufferSize(env, info[11], &bufSize))
    return env.Undefined();
  if (nd < stride * count || ni < 4ull * count || ns < 2ull * count) {
    ThrowBadArgument(env, "output arrays are too small");
    return env.Undefined();
  }
  if (!info[12].IsFunction()) {
    ThrowBadArgument(env, "callback must be a function");
    return env.Undefined();
  }
  std::vector<uint8_t> templates(ctxs.size() * HQ_CTX_SIZE);
  for (size_t i = 0; i < ctxs.size(); i++)
    std::memcpy(templates.data() + i * HQ_CTX_SIZE, ctxs[i], HQ_CTX_SIZE);
  int own = DupFd(dirfd);
  if (own < 0) return Napi::Number::New(env, own);
  Napi::Object refs = Napi::Object::New(env);
  refs.Set("names", info[1]);
  refs.Set("digests", info[8]);
  refs.Set("info", info[9]);
  refs.Set("status", info[10]);
  (new HashFilesWorker(info[12].As<Napi::Function>(), refs, own,
                       reinterpret_cast<const char *>(names.data), names.len,
                       start, end, std::move(templates),
                       std::vector<uint32_t>(outlens, outlens + nOut), flags & HQ_FILE_NO_SYMLINKS,
                       digests, static_cast<uint32_t>(stride), fileInfo, status,
                       bufSize))
      ->Queue();
  return Napi::Number::New(env, 0);
}

// openBeneath(root, relative, keepOpen, callback): queues one pool task,
// returns undefined; bad arguments throw ERR_BAD_ARGUMENT. keepOpen false:
// the file is closed on the pool thread (callback's fd -1).
Napi::Value OpenBeneath(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string root, rel;
  if (!GetPath(env, info[0], &root, "root") || !GetPath(env, info[1], &rel, "relative path"))
    return env.Undefined();
  if (root.empty()) {
    ThrowBadArgument(env, "root must not be empty");
    return env.Undefined();
  }
  if (!info[2].IsBoolean()) {
    ThrowBadArgument(env, "keepOpen must be a boolean");
    return env.Undefined();
  }
  if (!info[3].IsFunction()) {
    ThrowBadArgument(env, "callback must be a function");
    return env.Undefined();
  }
  (new OpenBeneathWorker(info[3].As<Napi::Function>(), std::move(root), std::move(rel),
                         info[2].As<Napi::Boolean>().Value()))
      ->Queue();
  return env.Undefined();
}

}  // namespace hashq
