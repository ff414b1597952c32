/*
 * File input for the core: a range of an open descriptor absorbed into one
 * or more contexts (hq_update_fd), and one file beneath a directory
 * descriptor hashed whole (hq_hash_file_at). POSIX (pread, fstat); the
 * lookup of hq_hash_file_at needs Linux's openat2 (5.6+), elsewhere it
 * reports ENOSYS. hq_open_beneath opens one file beneath a root for the
 * caller (the file sources' fast path). All run on the caller's thread: the binding calls them on
 * a libuv pool thread, so one core reads a piece into a small buffer and
 * hashes it while it is still in that core's cache (README, "File input").
 * On 64-bit Linux, long ranges of a regular file are hashed from a mapping
 * of the page cache instead, with no copy (file_map.c).
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

#include "file_map.h"
#include "hashq.h"

void hq_absorb(hq_ctx *const *ctxs, size_t count, const uint8_t *p,
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
  /* as much as a mapping can give (all of it, or up to where the file
   * shrank under it: the rest then goes through pread, which tells) */
  if (length >= HQ_MAP_MIN_BYTES) {
    int64_t mapped = hq_update_mapped(ctxs, count, fd, offset, length);
    if (mapped < 0) return mapped;
    done = (uint64_t)mapped;
  }
  while (done < length) {
    uint64_t left = length - done;
    size_t want = left < buflen ? (size_t)left : buflen;
    ssize_t got = pread(fd, buf, want, (off_t)(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return -(int64_t)errno;
    }
    if (got == 0) break; /* end of file */
    hq_absorb(ctxs, count, buf, (size_t)got);
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

/* openat2 beneath dirfd (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS plus
 * `resolve`): the descriptor, or a negated errno. */
static int openat2_beneath(int dirfd, const char *name, uint64_t flags,
                           uint64_t resolve) {
#if defined(__linux__)
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = flags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | resolve;
  for (;;) {
    long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof how);
    if (fd >= 0) return (int)fd;
    if (errno != EINTR) return -errno;
  }
#else
  (void)dirfd;
  (void)name;
  (void)flags;
  (void)resolve;
  return -ENOSYS;
#endif
}

/* For reading: O_NONBLOCK so that a FIFO never blocks the open (it is
 * refused after fstat), O_NOCTTY for terminals. */
static int open_beneath(int dirfd, const char *name, unsigned flags) {
  uint64_t how = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, resolve = 0;
#if defined(__linux__)
  if (flags & HQ_FILE_NO_SYMLINKS) {
    how |= O_NOFOLLOW;
    resolve = RESOLVE_NO_SYMLINKS;
  }
#endif
  return openat2_beneath(dirfd, name, how, resolve);
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
    hq_absorb(ctxs, count, buf, (size_t)got);
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

#if defined(__linux__)
static void fill_info(hq_opened_file *out, const struct stat *st) {
  out->size = (uint64_t)st->st_size;
  out->mtime_ns = mtime_ns(st);
  out->dev = (uint64_t)st->st_dev;
  out->ino = (uint64_t)st->st_ino;
  out->mode = (uint32_t)st->st_mode;
}

/* The lookup's errno: EPERM and EINVAL come from a seccomp filter or a
 * kernel without these flags (path lookup itself says EACCES), EAGAIN from
 * a rename race RESOLVE_BENEATH could not rule out: the caller decides. */
static int lookup_status(int e) {
  switch (e) {
    case EPERM:
    case EINVAL:
      return HQ_FILE_UNSUPPORTED;
    case EAGAIN:
      return HQ_FILE_OUTSIDE;
    default:
      return status_of_errno(e);
  }
}

/* open(2) that retries EINTR; a negated errno on failure. */
static int open_retry(const char *path, int flags) {
  for (;;) {
    int fd = open(path, flags);
    if (fd >= 0) return fd;
    if (errno != EINTR) return -errno;
  }
}

/* fd's magic link in /proc: reopening it opens the very inode fd names. */
static void fd_link(char *buf, size_t n, int fd) {
  snprintf(buf, n, "/proc/self/fd/%d", fd);
}
#endif

int hq_open_beneath(const char *root, const char *rel, hq_opened_file *out) {
#if defined(__linux__)
  char link[32];
  struct stat st;
  ssize_t n;
  int rootfd, step, fd;
  memset(out, 0, offsetof(hq_opened_file, path));
  out->fd = -1;
  out->path[0] = 0;
  rootfd = open_retry(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) return out->err = -rootfd, status_of_errno(-rootfd);
  step = openat2_beneath(rootfd, *rel ? rel : ".", O_PATH | O_CLOEXEC, 0);
  close(rootfd);
  if (step < 0) return out->err = -step, lookup_status(-step);
  if (fstat(step, &st) != 0) {
    out->err = errno;
    close(step);
    return HQ_FILE_READ_FAILED;
  }
  fill_info(out, &st);
  if (!S_ISREG(st.st_mode)) {
    close(step);
    return HQ_FILE_NOT_REGULAR;
  }
  fd_link(link, sizeof link, step);
  fd = open_retry(link, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  close(step);
  /* ENOENT: no /proc (the magic link of an open descriptor always exists) */
  if (fd < 0)
    return out->err = -fd,
           -fd == ENOENT ? HQ_FILE_UNSUPPORTED : status_of_errno(-fd);
  fd_link(link, sizeof link, fd);
  n = readlink(link, out->path, HQ_OPEN_PATH_MAX + 1);
  if (n < 0 || n > HQ_OPEN_PATH_MAX) {
    out->err = n < 0 ? errno : ENAMETOOLONG;
    close(fd);
    return out->err == ENOENT ? HQ_FILE_UNSUPPORTED : HQ_FILE_READ_FAILED;
  }
  if (fstat(fd, &st) != 0) {
    out->err = errno;
    close(fd);
    return HQ_FILE_READ_FAILED;
  }
  out->path[n] = 0;
  out->path_len = (size_t)n;
  fill_info(out, &st);
  out->fd = fd;
  return HQ_FILE_OK;
#else
  (void)root;
  (void)rel;
  memset(out, 0, offsetof(hq_opened_file, path));
  out->fd = -1;
  out->path[0] = 0;
  out->err = ENOSYS;
  return HQ_FILE_UNSUPPORTED;
#endif
}
