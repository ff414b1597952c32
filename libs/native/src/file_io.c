/*
 * File input for the core: a range of an open descriptor absorbed into one
 * or more contexts (hq_update_fd), and one file beneath a directory
 * descriptor hashed whole (hq_hash_file_at). POSIX (pread, fstat); the
 * lookup of hq_hash_file_at needs Linux's openat2 (5.6+), elsewhere it
 * reports ENOSYS. Both run on the caller's thread: the binding calls them on
 * a libuv pool thread, so one core reads a piece into a small buffer and
 * hashes it while it is still in that core's cache (README, "File input").
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/openat2.h>
#include <sys/syscall.h>
#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif
#endif

#include "hashq.h"

/* Absorbs p[0..n) into every context (two of a kind interleaved). */
static void absorb(hq_ctx *const *ctxs, size_t count, const uint8_t *p,
                   size_t n) {
  size_t i = 0;
  if (count == 2 && hq_pairable(ctxs[0], ctxs[1])) {
    hq_update2(ctxs[0], p, n, ctxs[1], p, n);
    return;
  }
  for (; i < count; i++) hq_update(ctxs[i], p, n);
}

int64_t hq_update_fd(hq_ctx *const *ctxs, size_t count, int fd,
                     uint64_t offset, uint64_t length, uint8_t *buf,
                     size_t buflen) {
  uint64_t done = 0;
  if (buflen == 0) return -EINVAL;
  if (offset > (uint64_t)INT64_MAX || length > (uint64_t)INT64_MAX - offset)
    return -EINVAL;
  while (done < length) {
    uint64_t left = length - done;
    size_t want = left < buflen ? (size_t)left : buflen;
    ssize_t got = pread(fd, buf, want, (off_t)(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return -(int64_t)errno;
    }
    if (got == 0) break; /* end of file */
    absorb(ctxs, count, buf, (size_t)got);
    done += (uint64_t)got;
  }
  return (int64_t)done;
}

static int64_t mtime_ns(const struct stat *st) {
#if defined(__APPLE__)
  const struct timespec *t = &st->st_mtimespec;
#else
  const struct timespec *t = &st->st_mtim;
#endif
  return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* openat2 beneath dirfd: O_NONBLOCK so that a FIFO never blocks the open
 * (it is refused after fstat), O_NOCTTY for terminals. */
static int open_beneath(int dirfd, const char *name, unsigned flags) {
#if defined(__linux__)
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  if (flags & HQ_FILE_NO_SYMLINKS) {
    how.flags |= O_NOFOLLOW;
    how.resolve |= RESOLVE_NO_SYMLINKS;
  }
  for (;;) {
    long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof how);
    if (fd >= 0) return (int)fd;
    if (errno != EINTR) return -errno;
  }
#else
  (void)dirfd;
  (void)name;
  (void)flags;
  return -ENOSYS;
#endif
}

static int status_of_errno(int e) {
  switch (e) {
    case ENOENT:
    case ENOTDIR:
    case ENAMETOOLONG:
      return HQ_FILE_NOT_FOUND;
    case EACCES:
    case EPERM:
      return HQ_FILE_FORBIDDEN;
    case EXDEV: /* RESOLVE_BENEATH: the name leads out of the directory */
    case ELOOP: /* a symlink refused, or too many */
      return HQ_FILE_OUTSIDE;
    case ENOSYS:
      return HQ_FILE_UNSUPPORTED;
    default:
      return HQ_FILE_READ_FAILED;
  }
}

int hq_hash_file_at(int dirfd, const char *name, unsigned flags,
                    const hq_ctx *const *templates, hq_ctx *const *ctxs,
                    size_t count, uint8_t *buf, size_t buflen,
                    hq_file_info *info) {
  struct stat before, after;
  uint64_t done = 0;
  size_t i;
  int fd, status = HQ_FILE_OK;
  memset(info, 0, sizeof *info);
  if (buflen == 0) return info->err = EINVAL, HQ_FILE_READ_FAILED;
  fd = open_beneath(dirfd, name, flags);
  if (fd < 0) {
    info->err = -fd;
    return status_of_errno(-fd);
  }
  if (fstat(fd, &before) != 0) {
    info->err = errno;
    status = HQ_FILE_READ_FAILED;
    goto out;
  }
  info->size = (uint64_t)before.st_size;
  info->mtime_ns = mtime_ns(&before);
  info->dev = (uint64_t)before.st_dev;
  info->ino = (uint64_t)before.st_ino;
  if (!S_ISREG(before.st_mode)) {
    status = HQ_FILE_NOT_REGULAR;
    goto out;
  }
  for (i = 0; i < count; i++) memcpy(ctxs[i], templates[i], HQ_CTX_SIZE);
  /* [0, size) as fstat saw it, then fstat again: a file that shrank, grew
   * or was rewritten meanwhile has no digest (as for jobs). */
  while (done < info->size) {
    uint64_t left = info->size - done;
    ssize_t got = read(fd, buf, left < buflen ? (size_t)left : buflen);
    if (got < 0) {
      if (errno == EINTR) continue;
      info->err = errno;
      status = HQ_FILE_READ_FAILED;
      goto out;
    }
    if (got == 0) break;
    absorb(ctxs, count, buf, (size_t)got);
    done += (uint64_t)got;
  }
  if (fstat(fd, &after) != 0) {
    info->err = errno;
    status = HQ_FILE_READ_FAILED;
  } else if (done != info->size || after.st_size != before.st_size ||
             mtime_ns(&after) != info->mtime_ns ||
             after.st_ino != before.st_ino || after.st_dev != before.st_dev) {
    status = HQ_FILE_CHANGED;
  }
out:
  close(fd);
  return status;
}
