// File input on the thread pool (file_calls.cc): updateFromFile, hashFiles
// and openBeneath, the C core's hq_update_fd, hq_hash_file_at and
// hq_open_beneath.
#ifndef HASHQ_BINDING_FILE_CALLS_H
#define HASHQ_BINDING_FILE_CALLS_H

#include <napi.h>

namespace hashq {

Napi::Value UpdateFromFile(const Napi::CallbackInfo &info);
Napi::Value HashFiles(const Napi::CallbackInfo &info);
Napi::Value OpenBeneath(const Napi::CallbackInfo &info);

}  // namespace hashq

#endif
