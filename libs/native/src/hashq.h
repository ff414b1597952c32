/*
 * hashq — resumable hash functions with a portable serialized state.
 * Public C API. No Node headers: the same core builds into the Node addon,
 * the C test driver and the fuzz harness.
 */
#ifndef HASHQ_H
#define HASHQ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version (semantic versioning; the npm package's version). */
#define HASHQ_VERSION_MAJOR 0
#define HASHQ_VERSION_MINOR 1
#define HASHQ_VERSION_PATCH 0
#define HASHQ_VERSION_STRING "0.1.0"

/* Error codes returned (negated) by the functions below. Stable: the
 * addon exports them by name without the HQ_ prefix, and the TypeScript
 * layer maps each one to a HashqError subclass whose `code` is that name. */
enum hq_status {
  HQ_OK = 0,
  HQ_ERR_UNKNOWN_ALGORITHM = 1,
  HQ_ERR_STATE_INVALID = 2,
  HQ_ERR_STATE_ALGORITHM_MISMATCH = 3, /* valid state of another algorithm */
  HQ_ERR_STATE_VERSION = 4,            /* format version from the future */
  HQ_ERR_BAD_ARGUMENT = 5
};

/* Largest context, in bytes; contexts are plain data (no pointers), so a
 * context may be copied with memcpy. It must be 8-byte aligned. */
#define HQ_CTX_SIZE 448
/* Largest serialized state, in bytes. */
#define HQ_STATE_MAX 512
/* Longest output of one digest call, and longest default output length a
 * context (or a serialized state) may carry. */
#define HQ_OUTLEN_MAX (1u << 30)
#define HQ_DEFAULT_OUTLEN_MAX 65536u
/* Longest customization string (CXOF), bytes (SP 800-232: 2048 bits). */
#define HQ_CUSTOM_MAX 256

typedef struct hq_ctx hq_ctx;

typedef struct hq_info {
  int id;                 /* stable algorithm id (written into states) */
  const char *name;       /* e.g. "sha256" */
  uint32_t digest_len;    /* digest length; default output length of XOFs */
  uint32_t block_len;     /* block size / sponge rate, bytes */
  int xof;                /* 1 for extendable-output functions */
  int customizable;       /* 1 when a customization string is accepted */
  const char *standard;   /* e.g. "FIPS 180-4" */
} hq_info;

/* Select implementations. force_portable != 0 disables every CPU-specific
 * path. Called once at load; tests may call it again (never while another
 * thread hashes). */
void hq_dispatch_init(int force_portable);

int hq_algorithm_count(void);
/* index in [0, hq_algorithm_count()); NULL outside. */
const hq_info *hq_algorithm_at(int index);
/* by name (exact, lower case) → id, or -1 */
int hq_find(const char *name);
const hq_info *hq_info_of(int id);
/* name of the code path dispatched for this algorithm, e.g. "sha-ni" */
const char *hq_implementation(int id);

/* Initialise ctx (HQ_CTX_SIZE bytes, 8-aligned). custom may be NULL.
 * outlen 0 means the algorithm's default digest length; an XOF's default
 * output length may be set up to 65536 bytes. */
int hq_init(hq_ctx *ctx, int id, const uint8_t *custom, size_t custom_len,
            uint32_t outlen);
void hq_update(hq_ctx *ctx, const uint8_t *data, size_t len);
/* hq_update(a, ina, lena) and hq_update(b, inb, lenb) in one call: when
 * hq_pairable(a, b) the whole blocks the two messages have in common run
 * interleaved (one message is latency-bound on the SHA extensions: two use
 * the idle issue slots), otherwise one after the other. The result is the
 * same either way; a and b must be different contexts. */
void hq_update2(hq_ctx *a, const uint8_t *ina, size_t lena, hq_ctx *b,
                const uint8_t *inb, size_t lenb);
/* hq_update for bytes this core is unlikely to hold in its caches (written
 * by another thread, or a mapping of the page cache): in HQ_COLD_STEP
 * steps, each after prefetching the bytes HQ_COLD_AHEAD further on. The
 * hardware prefetcher alone leaves a latency-bound block loop (SHA-NI)
 * waiting for memory; a few lines at a time keep the core's line fill
 * buffers free (a whole page at once stalls on them). */
#define HQ_COLD_STEP 1024
#define HQ_COLD_AHEAD 4096
void hq_update_cold(hq_ctx *ctx, const uint8_t *data, size_t len);
/* 1 when hq_update2 interleaves a and b (distinct contexts whose
 * algorithms share a two-message block function on this CPU's path). */
int hq_pairable(const hq_ctx *a, const hq_ctx *b);
/* Output outlen bytes (0 = the context's default length) without changing
 * ctx. Returns the number of bytes written or a negated hq_status. Fixed-
 * length algorithms accept only their digest length (or 0). */
long hq_final(const hq_ctx *ctx, uint8_t *out, size_t outlen);
int hq_ctx_algorithm(const hq_ctx *ctx);
uint64_t hq_ctx_bytes(const hq_ctx *ctx);
uint32_t hq_ctx_outlen(const hq_ctx *ctx);

/* One shot: init + update + final. */
long hq_hash(int id, const uint8_t *data, size_t len, const uint8_t *custom,
             size_t custom_len, uint8_t *out, size_t outlen);

/* Serialize into out (at least HQ_STATE_MAX bytes); returns the length. */
size_t hq_serialize(const hq_ctx *ctx, uint8_t *out);
/* Validate and load a serialized state; on any error ctx is left zeroed
 * and a negated hq_status is returned. expect_id < 0 accepts any
 * algorithm. Also accepts resumable-hash 0.2.5 states (96/112 bytes). */
int hq_deserialize(hq_ctx *ctx, const uint8_t *in, size_t len, int expect_id);

/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of p[0..n),
 * continuing from crc, the CRC of the bytes before (0 to start). Init and
 * xorout 0xffffffff are applied inside: hq_crc32c(0, "123456789", 9) is
 * 0xE3069283, and hq_crc32c(hq_crc32c(0, a, m), b, n) is the CRC of a‖b. */
uint32_t hq_crc32c(uint32_t crc, const uint8_t *p, size_t n);

/* File input (src/file_io.c; POSIX, openat2 on Linux). Both run on the
 * caller's thread and read into buf (buflen > 0 bytes, reused), so each
 * piece is hashed while it is hot in this core's cache. */

/* Reads [offset, offset + length) of fd and absorbs each piece into every
 * one of the count contexts (distinct): from a mapping of the page cache
 * when the range is long and fd a regular file on 64-bit Linux (a file
 * that shrinks meanwhile is handled: src/file_map.c), else with pread into
 * buf. Returns the bytes absorbed (fewer than length: end of file) or a
 * negated errno. */
int64_t hq_update_fd(hq_ctx *const *ctxs, size_t count, int fd,
                     uint64_t offset, uint64_t length, uint8_t *buf,
                     size_t buflen);

/* hq_hash_file_at's result: HQ_FILE_OK or why the file has no digest. */
enum hq_file_status {
  HQ_FILE_OK = 0,
  HQ_FILE_NOT_FOUND = 1,   /* ENOENT, ENOTDIR, ENAMETOOLONG */
  HQ_FILE_FORBIDDEN = 2,   /* EACCES, EPERM */
  HQ_FILE_OUTSIDE = 3,     /* EXDEV, ELOOP: leads out of dirfd, or a
                              symlink refused */
  HQ_FILE_NOT_REGULAR = 4, /* a directory, FIFO, socket, device */
  HQ_FILE_CHANGED = 5,     /* size, mtime or inode changed while read */
  HQ_FILE_UNSUPPORTED = 6, /* ENOSYS: no openat2 */
  HQ_FILE_READ_FAILED = 7  /* any other errno (EIO, EMFILE, ...) */
};
/* hq_hash_file_at flags: refuse every symlink (default: follow those that
 * stay beneath dirfd). */
#define HQ_FILE_NO_SYMLINKS 1u

typedef struct hq_file_info {
  uint64_t size; /* fstat of the opened file (filled when it was opened) */
  int64_t mtime_ns;
  uint64_t dev;
  uint64_t ino;
  int err; /* the errno behind the status, 0 when none */
} hq_file_info;

/* Opens name beneath dirfd (openat2, RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS; O_NONBLOCK so a FIFO does not block), checks that
 * it is a regular file, copies templates[i] (initialised contexts) into
 * ctxs[i] and absorbs the file's [0, size) into them, fstat again, closes.
 * On HQ_FILE_OK ctxs[i] hold the file's hash (hq_final them). */
int hq_hash_file_at(int dirfd, const char *name, unsigned flags,
                    const hq_ctx *const *templates, hq_ctx *const *ctxs,
                    size_t count, uint8_t *buf, size_t buflen,
                    hq_file_info *info);

/* hq_open_beneath's result (status: enum hq_file_status, CHANGED unused). */
#define HQ_OPEN_PATH_MAX 4096
typedef struct hq_opened_file {
  int fd; /* O_RDONLY | O_CLOEXEC, the caller's to close (-1 unless OK) */
  uint64_t size; /* fstat of fd (filled when OK or NOT_REGULAR) */
  int64_t mtime_ns;
  uint64_t dev;
  uint64_t ino;
  uint32_t mode;
  int err; /* the errno behind the status, 0 when none */
  size_t path_len;
  char path[HQ_OPEN_PATH_MAX + 1]; /* the kernel's name of fd, NUL-ended */
} hq_opened_file;

/* Opens the regular file rel beneath the directory root without ever
 * opening anything else for real: root with O_PATH | O_DIRECTORY
 * (symlinks in root followed: the operator's path), rel with openat2
 * (O_PATH, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS: no `..`, absolute
 * symlink or magic link leads out; a FIFO or device is only named), fstat
 * (must be regular), then reopened O_RDONLY through /proc/self/fd, whose
 * link also gives the kernel's path of the file. An empty rel is root.
 * HQ_FILE_UNSUPPORTED: no openat2 (ENOSYS, or EPERM/EINVAL from a filter
 * or an old kernel) or no /proc. */
int hq_open_beneath(const char *root, const char *rel, hq_opened_file *out);

/* Network input (src/socket_io.c; POSIX). Sets SO_RCVLOWAT of a connected
 * stream socket: poll reports it readable once `bytes` are queued (or at
 * its end), so a fast stream is read in fewer, larger pieces, with fewer
 * wake-ups. Returns 0 or a negated errno. */
int hq_set_recv_lowat(int fd, int bytes);

#ifdef __cplusplus
}
#endif
#endif
