/* objects/fs_path.c — room objects, filesystem provider: the security-critical
 * walk. Every path component is opened with openat(O_NOFOLLOW) from a root
 * directory fd, so a symlink planted anywhere under the root is refused, never
 * followed; the final file opens O_NOFOLLOW too. May touch: the directories and
 * files under the provider's root (open, mkdir, fsync, stat), nothing else. */
#define _GNU_SOURCE /* statx, getrandom */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "adcp/objects.h"
#include "objects/fs_internal.h"

/* errno of the last adcp_objects__fs_fail() on this thread: lets the probe tell a transient
 * failure (ENOENT race, EIO, ENOSPC...) from a permission problem. */
_Thread_local int adcp_objects__fs_last_errno;

int adcp_objects__fs_fail(adcp_error *err, const char *what, const char *key) {
  adcp_objects__fs_last_errno = errno;
  /* Never errno text or paths: the key (inside the owned prefix) is enough to act on. */
  return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "filesystem %s failed for key %.160s", what, key);
}

/* adcp_objects__fs_fail() with the errno captured by the caller (errno itself was clobbered since). */
int adcp_objects__fs_fail_errno(adcp_error *err, const char *what, const char *key, int e) {
  errno = e;
  return adcp_objects__fs_fail(err, what, key);
}

int adcp_objects__fs_hook(fs_provider *fs, int step, const char *key, adcp_error *err) {
  if (fs->hook && fs->hook(fs->hook_ctx, step, key))
    return adcp_objects__fs_fail_errno(err, "step (injected fault)", key, EIO);
  return 0;
}

int adcp_objects__fs_own_key(const fs_provider *fs, const char *key, adcp_error *err) {
  size_t n = key ? strlen(key) : 0, pl = strlen(fs->prefix);
  if (!adcp_object_key_is_valid(key, n))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "object key is not a valid key");
  if (n <= pl + 1 || memcmp(key, fs->prefix, pl) != 0 || key[pl] != '/')
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "object key %.160s lies outside the owned prefix", key);
  return 0;
}

/* O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR or ELOOP depending on
 * the kernel path taken; lstat tells the two cases apart. */
int adcp_objects__fs_root_is_symlink(const char *root) {
  struct stat st;
  return lstat(root, &st) == 0 && S_ISLNK(st.st_mode);
}

int adcp_objects__fs_open_root(const fs_provider *fs, int *out, adcp_error *err) {
  int fd = open(fs->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    *out = fd;
    return 0;
  }
  if (adcp_objects__fs_root_is_symlink(fs->root))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "filesystem root %s is a symbolic link", fs->root_name);
  if (errno == ENOENT || errno == ENOTDIR)
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "filesystem root %s is missing (probe creates it)",
                          fs->root_name);
  return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "filesystem root %s cannot be opened", fs->root_name);
}

/* Opens the parent directory of key under rootfd, component by component with
 * O_NOFOLLOW, creating missing directories with mode `create` (exactly: the
 * umask is undone by fchmod) when it is not 0. *leaf points into key. Without
 * create, a missing or non-directory component is ADCP_ENOT_FOUND. */
int adcp_objects__fs_open_parent_mode(int rootfd, const char *key, mode_t create, int *dirfd, const char **leaf,
                                      adcp_error *err) {
  int cur = dup(rootfd);
  if (cur < 0) return adcp_objects__fs_fail(err, "open", key);
  const char *seg = key;
  char name[ADCP_OBJECT_KEY_MAX + 1];
  for (const char *slash; (slash = strchr(seg, '/')) != NULL; seg = slash + 1) {
    size_t n = (size_t)(slash - seg);
    memcpy(name, seg, n);
    name[n] = '\0';
    int next = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && create) {
      int made = mkdirat(cur, name, create) == 0;
      if (made) {
        /* The new entry must survive a crash before anything under it claims durability. */
        if (fsync(cur) != 0) {
          close(cur);
          return adcp_objects__fs_fail(err, "directory fsync", key);
        }
      } else if (errno != EEXIST) {
        close(cur);
        return adcp_objects__fs_fail(err, "mkdir", key);
      }
      next = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next >= 0 && made && fchmod(next, create) != 0) {
        close(next), close(cur);
        return adcp_objects__fs_fail(err, "chmod", key);
      }
    }
    if (next < 0) {
      int e = errno;
      struct stat st;
      int is_link = fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      close(cur);
      if (is_link) return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "path of key %.160s contains a symbolic link", key);
      if (!create && (e == ENOENT || e == ENOTDIR)) return ADCP_ENOT_FOUND;
      return adcp_objects__fs_fail_errno(
          err, e == ENOTDIR ? "directory walk (a file blocks the path)" : "directory walk", key, e);
    }
    close(cur);
    cur = next;
  }
  *dirfd = cur;
  *leaf = seg;
  return 0;
}

/* adcp_objects__fs_open_parent_mode; `create` creates missing directories owner-only (0700). */
int adcp_objects__fs_open_parent(int rootfd, const char *key, int create, int *dirfd, const char **leaf, adcp_error *err) {
  return adcp_objects__fs_open_parent_mode(rootfd, key, create ? 0700 : 0, dirfd, leaf, err);
}

/* Native version: "fs1-" + 32 hex of SHA-256 over device, inode, size, mtime and
 * birth time (ns). Hashed so it is opaque and fixed-length. */
int adcp_objects__fs_stat_fd(int fd, fs_stat *out) {
  struct statx sx;
  char pre[160];
  memset(out, 0, sizeof *out);
  if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &sx) == 0) {
    int has_btime = (sx.stx_mask & STATX_BTIME) != 0;
    snprintf(pre, sizeof pre, "%u:%u:%llu:%llu:%lld.%09u:%lld.%09u", sx.stx_dev_major, sx.stx_dev_minor,
             (unsigned long long)sx.stx_ino, (unsigned long long)sx.stx_size, (long long)sx.stx_mtime.tv_sec,
             sx.stx_mtime.tv_nsec, has_btime ? (long long)sx.stx_btime.tv_sec : 0LL,
             has_btime ? sx.stx_btime.tv_nsec : 0u);
    out->regular = S_ISREG(sx.stx_mode);
    out->size = sx.stx_size;
    out->mtime_nsec = (long)sx.stx_mtime.tv_nsec;
    out->mtime_ms = (int64_t)sx.stx_mtime.tv_sec * 1000 + sx.stx_mtime.tv_nsec / 1000000;
  } else {
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    snprintf(pre, sizeof pre, "%u:%u:%llu:%llu:%lld.%09ld:0.000000000", major(st.st_dev), minor(st.st_dev),
             (unsigned long long)st.st_ino, (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
             st.st_mtim.tv_nsec);
    out->regular = S_ISREG(st.st_mode);
    out->size = (uint64_t)st.st_size;
    out->mtime_nsec = st.st_mtim.tv_nsec;
    out->mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
  }
  char hex[65];
  if (adcp_sha256_hex(hex, pre, strlen(pre), NULL)) return -1;
  snprintf(out->version, sizeof out->version, FS_VERSION_PREFIX "%.32s", hex);
  return 0;
}

/* Opens the final file without following a symlink. Returns 0, ADCP_ENOT_FOUND,
 * or an error (symlink = UNSAFE_BINDING). */
int adcp_objects__fs_open_leaf(int dirfd, const char *leaf, const char *key, int *out, adcp_error *err) {
  int fd = openat(dirfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) {
    *out = fd;
    return 0;
  }
  if (errno == ENOENT || errno == ENOTDIR) return ADCP_ENOT_FOUND;
  if (errno == ELOOP) return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "object at key %.160s is a symbolic link", key);
  return adcp_objects__fs_fail(err, "open", key);
}

/* Opens key's file and checks it is a regular file; shared by get/delete/head.
 * Returns 0, ADCP_ENOT_FOUND or an error. dirfd is returned for delete. */
int adcp_objects__fs_open_object(fs_provider *fs, const char *key, int *out_dirfd, const char **leaf, int *out_fd,
                                 fs_stat *st, adcp_error *err) {
  int rootfd = -1, dirfd = -1, fd = -1, rc = adcp_objects__fs_open_root(fs, &rootfd, err);
  if (rc) return rc;
  rc = adcp_objects__fs_open_parent(rootfd, key, 0, &dirfd, leaf, err);
  close(rootfd);
  if (rc) return rc;
  if ((rc = adcp_objects__fs_open_leaf(dirfd, *leaf, key, &fd, err))) {
    close(dirfd);
    return rc;
  }
  if (adcp_objects__fs_stat_fd(fd, st) != 0) {
    close(fd), close(dirfd);
    return adcp_objects__fs_fail(err, "stat", key);
  }
  *out_fd = fd;
  if (out_dirfd) *out_dirfd = dirfd;
  else close(dirfd);
  return 0;
}
