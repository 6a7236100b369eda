/* objects/fs_provider.c — the filesystem object provider (single host).
 *
 * An object is the file root/<key>. Create-only writes: temp file in the
 * target directory, write, stamp a random sub-millisecond mtime, fsync, link()
 * to the final name (fails with EEXIST instead of replacing), fsync the
 * directory. Every path component is opened with openat(O_NOFOLLOW) from a
 * root directory fd, so a symlink planted anywhere under the root is refused,
 * never followed. Native versions hash the file's identity; see objects.h and
 * docs/objects.md for why they are only practically write-unique. */
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

#define FS_VERSION_PREFIX "fs1-"
#define TEMP_PREFIX ".adcp~" /* '~' is outside the key alphabet: a temp name is never a key */
/* Each probe works in its own directory PREFIX/.adcp~probe-<32 hex>/ and removes
 * only that one, so concurrent probes never pull a directory from under each
 * other. '~' keeps the name outside the key alphabet: list skips a leftover
 * (crashed) probe directory like a temp file, and no object key can reach it. */
#define PROBE_DIR_PREFIX ".adcp~probe-"

typedef struct fs_provider {
  adcp_object_provider base;
  char *root;
  char *root_name;
  char *prefix;
  int create_root;
  size_t slice;
  int (*hook)(void *, int, const char *);
  void *hook_ctx;
  mode_t file_mode, dir_mode; /* exact modes of what this provider creates (owner-only by default) */
} fs_provider;

/* errno of the last fail() on this thread: lets the probe tell a transient
 * failure (ENOENT race, EIO, ENOSPC...) from a permission problem. */
static _Thread_local int fs_last_errno;

static int fail(adcp_error *err, const char *what, const char *key) {
  fs_last_errno = errno;
  /* Never errno text or paths: the key (inside the owned prefix) is enough to act on. */
  return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "filesystem %s failed for key %.160s", what, key);
}

/* fail() with the errno captured by the caller (errno itself was clobbered since). */
static int fail_errno(adcp_error *err, const char *what, const char *key, int e) {
  errno = e;
  return fail(err, what, key);
}

static int hook(fs_provider *fs, int step, const char *key, adcp_error *err) {
  if (fs->hook && fs->hook(fs->hook_ctx, step, key)) return fail_errno(err, "step (injected fault)", key, EIO);
  return 0;
}

static int own_key(const fs_provider *fs, const char *key, adcp_error *err) {
  size_t n = key ? strlen(key) : 0, pl = strlen(fs->prefix);
  if (!adcp_object_key_is_valid(key, n)) return adcp_error_set(err, ADCP_EINVALID_INPUT, "object key is not a valid key");
  if (n <= pl + 1 || memcmp(key, fs->prefix, pl) != 0 || key[pl] != '/')
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "object key %.160s lies outside the owned prefix", key);
  return 0;
}

/* O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR or ELOOP depending on
 * the kernel path taken; lstat tells the two cases apart. */
static int root_is_symlink(const char *root) {
  struct stat st;
  return lstat(root, &st) == 0 && S_ISLNK(st.st_mode);
}

static int open_root(const fs_provider *fs, int *out, adcp_error *err) {
  int fd = open(fs->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    *out = fd;
    return 0;
  }
  if (root_is_symlink(fs->root))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "filesystem root %s is a symbolic link", fs->root_name);
  if (errno == ENOENT || errno == ENOTDIR)
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "filesystem root %s is missing (probe creates it)", fs->root_name);
  return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "filesystem root %s cannot be opened", fs->root_name);
}

/* Opens the parent directory of key under rootfd, component by component with
 * O_NOFOLLOW, creating missing directories with mode `create` (exactly: the
 * umask is undone by fchmod) when it is not 0. *leaf points into key. Without
 * create, a missing or non-directory component is ADCP_ENOT_FOUND. */
static int open_parent_mode(int rootfd, const char *key, mode_t create, int *dirfd, const char **leaf,
                            adcp_error *err) {
  int cur = dup(rootfd);
  if (cur < 0) return fail(err, "open", key);
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
          return fail(err, "directory fsync", key);
        }
      } else if (errno != EEXIST) {
        close(cur);
        return fail(err, "mkdir", key);
      }
      next = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next >= 0 && made && fchmod(next, create) != 0) {
        close(next), close(cur);
        return fail(err, "chmod", key);
      }
    }
    if (next < 0) {
      int e = errno;
      struct stat st;
      int is_link = fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      close(cur);
      if (is_link)
        return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "path of key %.160s contains a symbolic link", key);
      if (!create && (e == ENOENT || e == ENOTDIR)) return ADCP_ENOT_FOUND;
      return fail_errno(err, e == ENOTDIR ? "directory walk (a file blocks the path)" : "directory walk", key, e);
    }
    close(cur);
    cur = next;
  }
  *dirfd = cur;
  *leaf = seg;
  return 0;
}

/* open_parent_mode; `create` creates missing directories owner-only (0700). */
static int open_parent(int rootfd, const char *key, int create, int *dirfd, const char **leaf, adcp_error *err) {
  return open_parent_mode(rootfd, key, create ? 0700 : 0, dirfd, leaf, err);
}

typedef struct fs_stat {
  int regular;
  uint64_t size;
  long mtime_nsec;
  int64_t mtime_ms; /* listing's last_modified (of the fd: never a followed symlink) */
  char version[ADCP_OBJECT_VERSION_MAX + 1];
} fs_stat;

/* Native version: "fs1-" + 32 hex of SHA-256 over device, inode, size, mtime and
 * birth time (ns). Hashed so it is opaque and fixed-length. */
static int stat_fd(int fd, fs_stat *out) {
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
static int open_leaf(int dirfd, const char *leaf, const char *key, int *out, adcp_error *err) {
  int fd = openat(dirfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) {
    *out = fd;
    return 0;
  }
  if (errno == ENOENT || errno == ENOTDIR) return ADCP_ENOT_FOUND;
  if (errno == ELOOP) return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "object at key %.160s is a symbolic link", key);
  return fail(err, "open", key);
}

static int write_all(int fd, const uint8_t *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static ssize_t pread_full(int fd, uint8_t *p, size_t n, off_t off) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, p + got, n - got, off + (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

/* Compares the existing object with bytes. 0 identical, ADCP_ECONTENT_CONFLICT,
 * ADCP_ENOT_FOUND (vanished: retry the link), or an error. */
static int compare_existing(fs_provider *fs, int dirfd, const char *leaf, const adcp_object_put_input *in,
                            adcp_object_put_result *out, const adcp_object_ctx *ctx, adcp_error *err) {
  int fd = -1, rc = open_leaf(dirfd, leaf, in->key, &fd, err);
  if (rc) return rc;
  fs_stat st;
  if (stat_fd(fd, &st) != 0) {
    close(fd);
    return fail(err, "stat", in->key);
  }
  if (!st.regular) {
    close(fd);
    return adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "key %.160s is occupied by something that is not an object", in->key);
  }
  memcpy(out->native_version, st.version, sizeof st.version);
  if (st.size != in->len) {
    close(fd);
    return adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "object at key %.160s holds different bytes", in->key);
  }
  uint8_t buf[65536];
  for (size_t off = 0; off < in->len;) {
    if ((rc = adcp_object_ctx_check(ctx, err))) break;
    size_t want = in->len - off < sizeof buf ? in->len - off : sizeof buf;
    ssize_t got = pread_full(fd, buf, want, (off_t)off);
    if (got < 0) {
      rc = fail(err, "read", in->key);
      break;
    }
    if ((size_t)got != want || memcmp(buf, in->bytes + off, want) != 0) {
      rc = adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "object at key %.160s holds different bytes", in->key);
      break;
    }
    off += want;
  }
  (void)fs;
  close(fd);
  return rc;
}

/* A random sub-millisecond mtime makes an identical re-creation at the same
 * key (possibly reusing the inode) get a different version (as JS does). */
static int stamp_version(int fd, const uint8_t rnd[16]) {
  struct timespec ts[2];
  uint32_t r;
  memcpy(&r, rnd, sizeof r);
  clock_gettime(CLOCK_REALTIME, &ts[0]);
  ts[0].tv_nsec = (ts[0].tv_nsec / 1000000) * 1000000 + (long)(r % 1000000u);
  ts[1] = ts[0];
  return futimens(fd, ts);
}

/* After link(): the object exists, so any failure from here is "unknown",
 * never "not written". Makes the new name durable. */
static int after_link(fs_provider *fs, adcp_object_put_result *out, int dirfd, const char *key, adcp_error *err) {
  int rc = hook(fs, ADCP_FS_STEP_FSYNC_DIR, key, err);
  if (rc) return rc;
  if (fsync(dirfd) != 0) return fail(err, "directory fsync", key);
  out->outcome = ADCP_OBJECT_CREATED;
  return 0;
}

/* put without the key check: the probe writes under its own directory, whose
 * name is deliberately outside the key alphabet. */
static int put_at(fs_provider *fs, adcp_object_put_result *out, const adcp_object_put_input *in,
                  const adcp_object_ctx *ctx, adcp_error *err) {
  memset(out, 0, sizeof *out);
  int rc = adcp_object_ctx_check(ctx, err);
  if (rc) return rc;
  int rootfd = -1, dirfd = -1, tfd = -1;
  const char *leaf;
  if ((rc = open_root(fs, &rootfd, err))) return rc;
  rc = open_parent_mode(rootfd, in->key, fs->dir_mode, &dirfd, &leaf, err);
  close(rootfd);
  if (rc) return rc;

  uint8_t rnd[16];
  char tmp[sizeof TEMP_PREFIX + 40], hex[33];
  if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
    close(dirfd);
    return fail(err, "random temp name", in->key);
  }
  adcp_hex_encode(hex, rnd, sizeof rnd);
  snprintf(tmp, sizeof tmp, TEMP_PREFIX "%s.tmp", hex);
  tfd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, fs->file_mode);
  if (tfd < 0) {
    close(dirfd);
    return fail(err, "temp file create", in->key);
  }
  if (fchmod(tfd, fs->file_mode) != 0) { /* exactly the configured mode, whatever the umask */
    rc = fail(err, "chmod", in->key);
    goto done;
  }
  if ((rc = hook(fs, ADCP_FS_STEP_TEMP_CREATED, in->key, err))) goto done;
  for (size_t off = 0; off < in->len;) {
    if ((rc = adcp_object_ctx_check(ctx, err))) goto done;
    size_t n = in->len - off < fs->slice ? in->len - off : fs->slice;
    if (write_all(tfd, in->bytes + off, n) != 0) {
      rc = fail(err, "write", in->key);
      goto done;
    }
    off += n;
    if ((rc = hook(fs, ADCP_FS_STEP_WROTE_SLICE, in->key, err))) goto done;
  }
  if (stamp_version(tfd, rnd) != 0) {
    rc = fail(err, "timestamp", in->key);
    goto done;
  }
  if ((rc = hook(fs, ADCP_FS_STEP_FSYNC_FILE, in->key, err))) goto done;
  if (fsync(tfd) != 0) {
    rc = fail(err, "fsync", in->key);
    goto done;
  }
  /* Last point at which a deadline still means "nothing under the final key". */
  if ((rc = adcp_object_ctx_check(ctx, err))) goto done;
  if ((rc = hook(fs, ADCP_FS_STEP_BEFORE_LINK, in->key, err))) goto done;
  rc = ADCP_ENOT_FOUND; /* "retry": the existing object vanished before it could be compared */
  for (int attempt = 0; attempt < 4 && rc == ADCP_ENOT_FOUND; attempt++) {
    if (linkat(dirfd, tmp, dirfd, leaf, 0) == 0) {
      fs_stat st;
      if (stat_fd(tfd, &st) != 0) {
        rc = fail(err, "stat", in->key);
        break;
      }
      memcpy(out->native_version, st.version, sizeof st.version);
      rc = after_link(fs, out, dirfd, in->key, err);
      break;
    }
    if (errno != EEXIST) {
      rc = errno == EPERM || errno == EOPNOTSUPP ? adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                                                                  "filesystem does not support hard links")
                                                 : fail(err, "link", in->key);
      break;
    }
    rc = compare_existing(fs, dirfd, leaf, in, out, ctx, err);
    if (rc == 0) out->outcome = ADCP_OBJECT_ADOPTED_IDENTICAL;
  }
  if (rc == ADCP_ENOT_FOUND) rc = fail_errno(err, "link (the key keeps being deleted)", in->key, ENOENT);
done:
  close(tfd);
  unlinkat(dirfd, tmp, 0); /* the final name, if linked, keeps the inode */
  close(dirfd);
  return rc;
}

static int fs_put(adcp_object_provider *self, adcp_object_put_result *out, const adcp_object_put_input *in,
                  const adcp_object_ctx *ctx, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  memset(out, 0, sizeof *out);
  int rc = own_key(fs, in->key, err);
  return rc ? rc : put_at(fs, out, in, ctx, err);
}

/* ---- staged writes ----------------------------------------------------------------
 * Staged bytes live in PREFIX/.adcp~staging/.adcp~<32 hex>.stage: under the owned
 * prefix, on the same filesystem as every key (so link() works), outside the
 * key alphabet (never listed, never reachable by a key). stage_put writes,
 * stamps and fsyncs; stage_link hard-links the file to the key exactly as put
 * does; stage_drop unlinks the staging name. Provider creation and the probe
 * remove staging files older than ADCP_OBJECT_STAGE_MAX_AGE_S (left by a crash). */
#define STAGING_DIR TEMP_PREFIX "staging"
#define STAGE_SUFFIX ".stage"
#define STAGE_WHAT "(none yet: staged write under .adcp~staging)"

struct adcp_object_stage {
  char name[sizeof TEMP_PREFIX + 32 + sizeof STAGE_SUFFIX];
  uint64_t len;
  dev_t dev;  /* identity of the file written, checked again before and after link */
  ino_t ino;
  /* Once linked, never link again: the inode (and so the version) would be
   * the same as the first object's, and a pinned delete of that one would
   * remove the second. A retry only compares with what is at the key. */
  int linked;
};

/* Opens PREFIX/.adcp~staging (created when `create`). ADCP_ENOT_FOUND when absent. */
static int open_staging(fs_provider *fs, int create, int *out, adcp_error *err) {
  int rootfd, rc = open_root(fs, &rootfd, err);
  if (rc) return rc;
  adcp_buf path;
  adcp_buf_init(&path);
  if (adcp_buf_printf(&path, "%s/" STAGING_DIR "/x", fs->prefix) || adcp_buf_cstr(&path)) {
    close(rootfd);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  const char *leaf;
  rc = open_parent_mode(rootfd, (const char *)path.data, create ? fs->dir_mode : 0, out, &leaf, err);
  adcp_buf_free(&path);
  close(rootfd);
  return rc;
}

static int fs_stage_put(adcp_object_provider *self, adcp_object_stage **out, const uint8_t *bytes, size_t len,
                        const adcp_object_ctx *ctx, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  *out = NULL;
  adcp_object_stage *st = calloc(1, sizeof *st);
  if (!st) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int sdir = -1, tfd = -1, rc = open_staging(fs, 1, &sdir, err);
  if (rc) {
    free(st);
    return rc;
  }
  uint8_t rnd[16];
  char hex[33];
  if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
    rc = fail(err, "random temp name", STAGE_WHAT);
    goto done;
  }
  adcp_hex_encode(hex, rnd, sizeof rnd);
  snprintf(st->name, sizeof st->name, TEMP_PREFIX "%s" STAGE_SUFFIX, hex);
  st->len = len;
  tfd = openat(sdir, st->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, fs->file_mode);
  if (tfd < 0) {
    rc = fail(err, "temp file create", STAGE_WHAT);
    goto done;
  }
  if (fchmod(tfd, fs->file_mode) != 0) {
    rc = fail(err, "chmod", STAGE_WHAT);
    goto done;
  }
  if ((rc = hook(fs, ADCP_FS_STEP_TEMP_CREATED, STAGE_WHAT, err))) goto done;
  for (size_t off = 0; off < len;) {
    if ((rc = adcp_object_ctx_check(ctx, err))) goto done;
    size_t n = len - off < fs->slice ? len - off : fs->slice;
    if (write_all(tfd, bytes + off, n) != 0) {
      rc = fail(err, "write", STAGE_WHAT);
      goto done;
    }
    off += n;
    if ((rc = hook(fs, ADCP_FS_STEP_WROTE_SLICE, STAGE_WHAT, err))) goto done;
  }
  if (stamp_version(tfd, rnd) != 0) {
    rc = fail(err, "timestamp", STAGE_WHAT);
    goto done;
  }
  {
    struct stat sb;
    if (fstat(tfd, &sb) != 0) {
      rc = fail(err, "stat", STAGE_WHAT);
      goto done;
    }
    st->dev = sb.st_dev, st->ino = sb.st_ino;
  }
  if ((rc = hook(fs, ADCP_FS_STEP_FSYNC_FILE, STAGE_WHAT, err))) goto done;
  if (fsync(tfd) != 0) {
    rc = fail(err, "fsync", STAGE_WHAT);
    goto done;
  }
  rc = hook(fs, ADCP_FS_STEP_STAGED, STAGE_WHAT, err);
done:
  if (tfd >= 0) close(tfd);
  if (rc) {
    if (tfd >= 0) unlinkat(sdir, st->name, 0); /* only a file this call created */
    free(st);
  } else {
    *out = st;
  }
  close(sdir);
  return rc;
}

/* Reads the whole staged file (for comparing with an existing object). */
static int read_staged(adcp_buf *b, int fd, const adcp_object_stage *st, adcp_error *err) {
  adcp_buf_reset(b);
  if (adcp_buf_reserve(b, (size_t)st->len ? (size_t)st->len : 1)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  ssize_t got = pread_full(fd, b->data, (size_t)st->len, 0);
  if (got < 0 || (uint64_t)got != st->len) return fail(err, "read", STAGE_WHAT);
  b->len = (size_t)st->len;
  return 0;
}

static int fs_stage_link(adcp_object_provider *self, adcp_object_put_result *out, adcp_object_stage *st,
                         const adcp_object_put_input *in, const adcp_object_ctx *ctx, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  memset(out, 0, sizeof *out);
  int rc = own_key(fs, in->key, err);
  if (rc) return rc;
  int rootfd = -1, dirfd = -1, sdir = -1, sfd = -1;
  const char *leaf;
  adcp_buf bytes;
  adcp_buf_init(&bytes);
  if ((rc = open_root(fs, &rootfd, err))) return rc;
  rc = open_parent_mode(rootfd, in->key, fs->dir_mode, &dirfd, &leaf, err);
  close(rootfd);
  if (rc) return rc;
  if ((rc = open_staging(fs, 0, &sdir, err))) {
    if (rc == ADCP_ENOT_FOUND) rc = fail_errno(err, "staged file vanished before link", in->key, ENOENT);
    goto done;
  }
  sfd = openat(sdir, st->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (sfd < 0) {
    rc = fail(err, "staged file open", in->key);
    goto done;
  }
  fs_stat sst;
  struct stat sb;
  if (stat_fd(sfd, &sst) != 0 || fstat(sfd, &sb) != 0 || !sst.regular || sst.size != st->len) {
    rc = fail_errno(err, "staged file check", in->key, EIO);
    goto done;
  }
  if (sb.st_dev != st->dev || sb.st_ino != st->ino) {
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "staged file for key %.160s was replaced before its link", in->key);
    goto done;
  }
  if ((rc = adcp_object_ctx_check(ctx, err))) goto done;
  if ((rc = hook(fs, ADCP_FS_STEP_BEFORE_LINK, in->key, err))) goto done;
  rc = ADCP_ENOT_FOUND;
  for (int attempt = 0; attempt < 4 && rc == ADCP_ENOT_FOUND; attempt++) {
    if (st->linked) {
      errno = EEXIST; /* compare with the key's current object below */
    } else if (linkat(sdir, st->name, dirfd, leaf, 0) == 0) {
      /* link() works on the staging *name*: make sure it still named the file
       * checked above (not a swapped-in file or symlink). */
      struct stat b;
      if (fstatat(dirfd, leaf, &b, AT_SYMLINK_NOFOLLOW) != 0 || b.st_dev != st->dev || b.st_ino != st->ino) {
        unlinkat(dirfd, leaf, 0); /* the entry this call just created */
        rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "staged file for key %.160s was replaced before its link",
                            in->key);
        break;
      }
      st->linked = 1;
      memcpy(out->native_version, sst.version, sizeof sst.version);
      rc = after_link(fs, out, dirfd, in->key, err);
      break;
    }
    int e = errno;
    if (e == EXDEV) {
      /* The key's directory is on another filesystem: copy as a plain put. */
      if (!(rc = read_staged(&bytes, sfd, st, err))) {
        adcp_object_put_input pi = *in;
        pi.bytes = bytes.data, pi.len = bytes.len;
        rc = put_at(fs, out, &pi, ctx, err);
        if (!rc && out->outcome == ADCP_OBJECT_CREATED) st->linked = 1;
      }
      break;
    }
    if (e != EEXIST) {
      rc = e == EPERM || e == EOPNOTSUPP ? adcp_error_set(err, ADCP_EUNSAFE_BINDING, "filesystem does not support hard links")
                                         : fail_errno(err, "link", in->key, e);
      break;
    }
    if (!bytes.len && st->len && (rc = read_staged(&bytes, sfd, st, err))) break;
    adcp_object_put_input pi = *in;
    pi.bytes = bytes.data, pi.len = (size_t)st->len;
    rc = compare_existing(fs, dirfd, leaf, &pi, out, ctx, err);
    if (rc == 0) out->outcome = ADCP_OBJECT_ADOPTED_IDENTICAL;
    if (rc == ADCP_ENOT_FOUND && st->linked) {
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "staged write for key %.160s was already linked once; stage it again",
                          in->key);
      break;
    }
  }
  if (rc == ADCP_ENOT_FOUND) rc = fail_errno(err, "link (the key keeps being deleted)", in->key, ENOENT);
done:
  if (sfd >= 0) close(sfd);
  if (sdir >= 0) close(sdir);
  close(dirfd);
  adcp_buf_free(&bytes);
  return rc;
}

static void fs_stage_drop(adcp_object_provider *self, adcp_object_stage *st) {
  fs_provider *fs = (fs_provider *)self;
  if (!st) return;
  int sdir;
  adcp_error ignored;
  if (open_staging(fs, 0, &sdir, &ignored) == 0) {
    unlinkat(sdir, st->name, 0); /* a linked object keeps the inode */
    close(sdir);
  }
  free(st);
}

/* Removes staging files a crashed writer left behind (probe time). */
static void staging_sweep(fs_provider *fs) {
  int sdir;
  adcp_error ignored;
  if (open_staging(fs, 0, &sdir, &ignored) != 0) return;
  int fd = dup(sdir);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    close(sdir);
    return;
  }
  time_t cutoff = time(NULL) - ADCP_OBJECT_STAGE_MAX_AGE_S;
  size_t tl = strlen(TEMP_PREFIX), sl = strlen(STAGE_SUFFIX);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t n = strlen(e->d_name);
    if (n <= tl + sl || strncmp(e->d_name, TEMP_PREFIX, tl) || strcmp(e->d_name + n - sl, STAGE_SUFFIX)) continue;
    struct stat st;
    if (fstatat(sdir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_mtime < cutoff)
      unlinkat(sdir, e->d_name, 0);
  }
  closedir(d);
  close(sdir);
}

/* Opens key's file and checks it is a regular file; shared by get/delete/head.
 * Returns 0, ADCP_ENOT_FOUND or an error. dirfd is returned for delete. */
static int open_object(fs_provider *fs, const char *key, int *out_dirfd, const char **leaf, int *out_fd,
                       fs_stat *st, adcp_error *err) {
  int rootfd = -1, dirfd = -1, fd = -1, rc = open_root(fs, &rootfd, err);
  if (rc) return rc;
  rc = open_parent(rootfd, key, 0, &dirfd, leaf, err);
  close(rootfd);
  if (rc) return rc;
  if ((rc = open_leaf(dirfd, *leaf, key, &fd, err))) {
    close(dirfd);
    return rc;
  }
  if (stat_fd(fd, st) != 0) {
    close(fd), close(dirfd);
    return fail(err, "stat", key);
  }
  *out_fd = fd;
  if (out_dirfd) *out_dirfd = dirfd;
  else close(dirfd);
  return 0;
}

static int fs_get(adcp_object_provider *self, adcp_buf *out, const adcp_object_get_input *in,
                  const adcp_object_ctx *ctx, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  int rc = own_key(fs, in->key, err);
  if (rc || (rc = adcp_object_ctx_check(ctx, err))) return rc;
  int fd;
  const char *leaf;
  fs_stat st;
  if ((rc = open_object(fs, in->key, NULL, &leaf, &fd, &st, err))) {
    if (rc == ADCP_ENOT_FOUND) adcp_error_set(err, rc, "no object at key %.160s", in->key);
    return rc;
  }
  if (!st.regular || strcmp(st.version, in->native_version) != 0) {
    close(fd);
    return adcp_error_set(err, ADCP_ENOT_FOUND, "object at key %.160s is not at the pinned version", in->key);
  }
  uint64_t off = in->has_range ? in->offset : 0;
  if (off > st.size || (in->has_range && in->length > st.size - off)) {
    close(fd);
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "requested range exceeds the stored object at key %.160s", in->key);
  }
  uint64_t len = in->has_range ? in->length : st.size - off;
  if (len > in->max_bytes || len > SIZE_MAX / 2) {
    close(fd);
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "object at key %.160s exceeds the %llu-byte read limit",
                          in->key, (unsigned long long)in->max_bytes);
  }
  if (adcp_buf_reserve(out, (size_t)len + 1)) {
    close(fd);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory reading an object");
  }
  size_t start = out->len;
  for (uint64_t done = 0; done < len;) {
    if ((rc = adcp_object_ctx_check(ctx, err))) break;
    size_t n = (size_t)(len - done < fs->slice ? len - done : fs->slice);
    ssize_t got = pread_full(fd, out->data + out->len, n, (off_t)(off + done));
    if (got < 0) {
      rc = fail(err, "read", in->key);
      break;
    }
    if ((size_t)got != n) { /* shrank under us: not the pinned object any more */
      rc = adcp_error_set(err, ADCP_ENOT_FOUND, "object at key %.160s changed while reading", in->key);
      break;
    }
    out->len += n;
    done += n;
  }
  fs_stat after;
  if (!rc && (stat_fd(fd, &after) != 0 || strcmp(after.version, st.version) != 0))
    rc = adcp_error_set(err, ADCP_ENOT_FOUND, "object at key %.160s changed while reading", in->key);
  if (rc) out->len = start;
  close(fd);
  return rc;
}

static int delete_at(fs_provider *fs, int *outcome, const char *key, const char *version,
                     const adcp_object_ctx *ctx, adcp_error *err) {
  *outcome = 0;
  int rc = adcp_object_ctx_check(ctx, err);
  if (rc) return rc;
  int dirfd, fd;
  const char *leaf;
  fs_stat st;
  if ((rc = open_object(fs, key, &dirfd, &leaf, &fd, &st, err))) {
    if (rc != ADCP_ENOT_FOUND) return rc;
    *outcome = ADCP_OBJECT_ABSENT;
    return 0;
  }
  close(fd);
  if (!st.regular || strcmp(st.version, version) != 0) {
    close(dirfd);
    *outcome = ADCP_OBJECT_VERSION_MISMATCH;
    return 0;
  }
  /* Window: a delete+re-create by another process between the check above and
   * unlinkat would be removed too. The ledger's per-object lock (spec 02 §7.3)
   * serializes the two; the provider is single-host by contract. */
  if ((rc = adcp_object_ctx_check(ctx, err))) {
    close(dirfd);
    return rc;
  }
  if (unlinkat(dirfd, leaf, 0) != 0) {
    rc = errno == ENOENT ? 0 : fail(err, "unlink", key);
    if (!rc) *outcome = ADCP_OBJECT_ABSENT;
    close(dirfd);
    return rc;
  }
  if ((rc = hook(fs, ADCP_FS_STEP_FSYNC_DIR, key, err)) == 0 && fsync(dirfd) != 0) rc = fail(err, "directory fsync", key);
  close(dirfd);
  if (!rc) *outcome = ADCP_OBJECT_DELETED;
  return rc;
}

static int fs_delete(adcp_object_provider *self, int *outcome, const char *key, const char *version,
                     const adcp_object_ctx *ctx, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  *outcome = 0;
  int rc = own_key(fs, key, err);
  return rc ? rc : delete_at(fs, outcome, key, version, ctx, err);
}

static int fs_head(adcp_object_provider *self, adcp_object_info *out, const char *key, const adcp_object_ctx *ctx,
                   adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  int rc = own_key(fs, key, err);
  if (rc || (rc = adcp_object_ctx_check(ctx, err))) return rc;
  int fd;
  const char *leaf;
  fs_stat st;
  if ((rc = open_object(fs, key, NULL, &leaf, &fd, &st, err))) {
    if (rc == ADCP_ENOT_FOUND) adcp_error_set(err, rc, "no object at key %.160s", key);
    return rc;
  }
  close(fd);
  if (!st.regular) return adcp_error_set(err, ADCP_ENOT_FOUND, "no object at key %.160s", key);
  out->size = st.size;
  memcpy(out->native_version, st.version, sizeof st.version);
  return 0;
}

/* ---- list ----------------------------------------------------------------------- */

typedef struct list_state {
  const char *prefix; /* string prefix every key must start with */
  const char *token;  /* keys must sort strictly after it (NULL = none) */
  size_t page_size;
  adcp_object_list_page *page;
  size_t cap;
  int more;           /* a key beyond the page exists */
  const adcp_object_ctx *ctx;
  adcp_error *err;
} list_state;

typedef struct dent {
  char *sortkey; /* name, plus '/' for directories: makes the walk yield byte-sorted keys */
  int is_dir;
} dent;

static int dent_cmp(const void *a, const void *b) {
  return strcmp(((const dent *)a)->sortkey, ((const dent *)b)->sortkey);
}

static int valid_segment(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || (n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.')) return 0;
  return adcp_object_key_is_valid(name, n);
}

static int add_entry(list_state *ls, int dirfd, const char *name, const char *key) {
  int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ELOOP ? 0 : fail(ls->err, "list open", key);
  fs_stat st;
  int ok = stat_fd(fd, &st) == 0;
  close(fd);
  if (!ok) return fail(ls->err, "list stat", key);
  if (!st.regular) return 0;
  adcp_object_list_page *pg = ls->page;
  if (pg->n_entries == ls->cap) {
    size_t cap = ls->cap ? ls->cap * 2 : 16;
    adcp_object_entry *e = realloc(pg->entries, cap * sizeof *e);
    if (!e) return adcp_error_set(ls->err, ADCP_ENOMEM, "out of memory listing objects");
    pg->entries = e;
    ls->cap = cap;
  }
  adcp_object_entry *e = &pg->entries[pg->n_entries];
  e->key = strdup(key);
  e->native_version = strdup(st.version);
  e->size = st.size;
  e->last_modified = st.mtime_ms;
  if (!e->key || !e->native_version) {
    free(e->key), free(e->native_version);
    return adcp_error_set(ls->err, ADCP_ENOMEM, "out of memory listing objects");
  }
  pg->n_entries++;
  return 0;
}

/* Depth-first walk of dirfd whose keys start with path (ending in '/'). Takes ownership of dirfd. */
static int walk(list_state *ls, int dirfd, adcp_buf *path) {
  int rc = adcp_object_ctx_check(ls->ctx, ls->err);
  if (rc) {
    close(dirfd);
    return rc;
  }
  DIR *d = fdopendir(dirfd);
  if (!d) {
    close(dirfd);
    return fail(ls->err, "list directory", ls->prefix);
  }
  dent *ents = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *de; (de = readdir(d)) != NULL;) {
    if (!valid_segment(de->d_name)) continue; /* temp files, dot entries, foreign names */
    struct stat sb;
    if (fstatat(dirfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode)) continue; /* symlinks are never objects */
    if (n == cap) {
      cap = cap ? cap * 2 : 32;
      dent *g = realloc(ents, cap * sizeof *g);
      if (!g) {
        rc = adcp_error_set(ls->err, ADCP_ENOMEM, "out of memory listing objects");
        break;
      }
      ents = g;
    }
    size_t nl = strlen(de->d_name);
    ents[n].is_dir = S_ISDIR(sb.st_mode);
    ents[n].sortkey = malloc(nl + 2);
    if (!ents[n].sortkey) {
      rc = adcp_error_set(ls->err, ADCP_ENOMEM, "out of memory listing objects");
      break;
    }
    memcpy(ents[n].sortkey, de->d_name, nl);
    ents[n].sortkey[nl] = '/';
    ents[n].sortkey[nl + (ents[n].is_dir ? 1u : 0u)] = '\0';
    n++;
  }
  if (!rc && n) qsort(ents, n, sizeof *ents, dent_cmp); /* ents is NULL for an empty directory */
  size_t base = path->len, plen = strlen(ls->prefix);
  for (size_t i = 0; i < n && !rc && !ls->more; i++) {
    path->len = base;
    if (adcp_buf_append_str(path, ents[i].sortkey) || adcp_buf_cstr(path)) {
      rc = adcp_error_set(ls->err, ADCP_ENOMEM, "out of memory listing objects");
      break;
    }
    const char *full = (const char *)path->data;
    size_t fl = path->len;
    if (ents[i].is_dir) {
      /* Descend only if keys below can match the prefix and can sort after the token. */
      int prefix_ok = fl >= plen ? memcmp(full, ls->prefix, plen) == 0 : memcmp(ls->prefix, full, fl) == 0;
      if (!prefix_ok) continue;
      if (ls->token && strcmp(full, ls->token) < 0 && strncmp(ls->token, full, fl) != 0) continue;
      ents[i].sortkey[strlen(ents[i].sortkey) - 1] = '\0';
      int sub = openat(dirfd, ents[i].sortkey, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) continue; /* removed or replaced meanwhile */
      rc = walk(ls, sub, path);
    } else {
      if (fl < plen || memcmp(full, ls->prefix, plen) != 0) continue;
      if (fl > ADCP_OBJECT_KEY_MAX) continue;
      if (ls->token && strcmp(full, ls->token) <= 0) continue;
      if (ls->page->n_entries == ls->page_size) {
        ls->more = 1;
        break;
      }
      rc = add_entry(ls, dirfd, ents[i].sortkey, full);
    }
  }
  path->len = base;
  for (size_t i = 0; i < n; i++) free(ents[i].sortkey);
  free(ents);
  closedir(d);
  return rc;
}

static int fs_list(adcp_object_provider *self, adcp_object_list_page *out, const char *prefix, const char *token,
                   size_t page_size, const adcp_object_ctx *ctx, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  memset(out, 0, sizeof *out);
  size_t pl = strlen(fs->prefix), n = strlen(prefix);
  if (n <= pl || memcmp(prefix, fs->prefix, pl) != 0 || prefix[pl] != '/')
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "list prefix lies outside the owned prefix");
  if (token && !adcp_object_key_is_valid(token, strlen(token)))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "list page token is not valid");
  int rc = adcp_object_ctx_check(ctx, err);
  if (rc) return rc;
  /* Start at the deepest whole directory named by the prefix. */
  const char *last = strrchr(prefix, '/');
  size_t dir_len = (size_t)(last - prefix) + 1; /* includes the '/' */
  adcp_buf path;
  adcp_buf_init(&path);
  if (adcp_buf_append(&path, prefix, dir_len) || adcp_buf_append_str(&path, "x") || adcp_buf_cstr(&path))
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory listing objects");
  int rootfd, dirfd;
  const char *leaf;
  if ((rc = open_root(fs, &rootfd, err))) {
    adcp_buf_free(&path);
    return rc;
  }
  /* "<dir>/x" makes open_parent return <dir> itself. */
  rc = open_parent(rootfd, (const char *)path.data, 0, &dirfd, &leaf, err);
  close(rootfd);
  if (rc == ADCP_ENOT_FOUND) {
    adcp_buf_free(&path);
    return 0; /* nothing under the prefix yet */
  }
  if (rc) {
    adcp_buf_free(&path);
    return rc;
  }
  path.len = dir_len;
  list_state ls = {prefix, token, page_size, out, 0, 0, ctx, err};
  rc = walk(&ls, dirfd, &path);
  adcp_buf_free(&path);
  if (!rc && ls.more && out->n_entries) {
    out->next_token = strdup(out->entries[out->n_entries - 1].key);
    if (!out->next_token) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory listing objects");
  }
  return rc;
}

/* ---- probe, location, lifecycle ---------------------------------------------------------- */

static int fs_validate_location(adcp_object_provider *self, const adcp_object_kv *loc, size_t n, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  if (n != 1 || strcmp(loc[0].key, "root") != 0)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "filesystem locations name exactly one entry, root");
  if (strcmp(loc[0].value, fs->root_name) != 0)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "filesystem root %.64s is not configured", loc[0].value);
  return 0;
}

static int mkdir_parents(const char *path, mode_t mode) {
  char buf[4096];
  size_t n = strlen(path);
  if (n >= sizeof buf) return -1;
  memcpy(buf, path, n + 1);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, mode) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(buf, mode) == 0) return chmod(buf, mode); /* the root itself gets exactly the mode */
  return errno != EEXIST ? -1 : 0;
}

static int unsafe(adcp_error *err, const char *fmt, const char *a) {
  return adcp_error_set(err, ADCP_EUNSAFE_BINDING, fmt, a);
}

/* errnos that describe the configuration (permissions, read-only mount, a file
 * or link in the way), not a passing condition. Everything else — ENOENT from
 * a concurrent cleanup, EAGAIN, EINTR, ENOSPC, EDQUOT, EIO, EMFILE, ENOMEM —
 * is transient: the probe reports PROVIDER_UNAVAILABLE and can be retried. */
static int config_errno(int e) {
  return e == EACCES || e == EPERM || e == EROFS || e == ENOTDIR || e == ELOOP || e == ENAMETOOLONG;
}

/* Maps a failed probe step. Returns the code to report, or 0 when the failure
 * says the binding is unsafe (the caller words that refusal). */
static int probe_step_failed(const fs_provider *fs, int rc, const adcp_error *inner, const char *step,
                             adcp_error *err) {
  if (rc == ADCP_EDEADLINE_EXCEEDED || rc == ADCP_EABORTED || rc == ADCP_ENOMEM)
    return adcp_error_set(err, rc, "%s", inner->message);
  if (rc == ADCP_EPROVIDER_UNAVAILABLE && !config_errno(fs_last_errno))
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE,
                          "probe of filesystem root %s failed transiently (%s): %.200s; retry", fs->root_name, step,
                          inner->message);
  return 0;
}

/* Removes the probe's own directory (best effort: a leftover is invisible to
 * list and never collides with a key). */
static void probe_dir_remove(fs_provider *fs, const char *dir_name) {
  int rootfd, pfd;
  const char *leaf;
  adcp_error ignored;
  if (open_root(fs, &rootfd, &ignored)) return;
  adcp_buf pdir;
  adcp_buf_init(&pdir);
  if (adcp_buf_printf(&pdir, "%s/x", fs->prefix) == 0 && adcp_buf_cstr(&pdir) == 0 &&
      open_parent(rootfd, (const char *)pdir.data, 0, &pfd, &leaf, &ignored) == 0) {
    unlinkat(pfd, dir_name, AT_REMOVEDIR); /* no fsync: a resurrected empty directory is harmless */
    close(pfd);
  }
  adcp_buf_free(&pdir);
  close(rootfd);
}

static int fs_probe(adcp_object_provider *self, const adcp_object_ctx *ctx, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  int rc = adcp_object_ctx_check(ctx, err);
  if (rc) return rc;
  if (fs->create_root) mkdir_parents(fs->root, fs->dir_mode); /* failures surface as "missing" below */
  int rootfd = open(fs->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rootfd < 0) {
    int e = errno;
    if (root_is_symlink(fs->root)) return unsafe(err, "filesystem root %s is a symbolic link", fs->root_name);
    if (e == ENOTDIR) return unsafe(err, "filesystem root %s is not a directory", fs->root_name);
    if (e == ENOENT) return unsafe(err, "filesystem root %s does not exist and was not created", fs->root_name);
    if (config_errno(e)) return unsafe(err, "filesystem root %s cannot be opened", fs->root_name);
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "filesystem root %s cannot be opened right now; retry",
                          fs->root_name);
  }
  struct stat st;
  if (fstat(rootfd, &st) != 0) {
    close(rootfd);
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "filesystem root %s cannot be inspected right now; retry",
                          fs->root_name);
  }
  /* Anyone able to write the root could plant entries (symlinks, files) in our paths. */
  if ((st.st_mode & S_IWOTH) != 0) {
    close(rootfd);
    return unsafe(err, "filesystem root %s is writable by every user", fs->root_name);
  }
  if (faccessat(rootfd, ".", W_OK | X_OK, AT_EACCESS) != 0) {
    int e = errno;
    close(rootfd);
    if (config_errno(e)) return unsafe(err, "filesystem root %s is not writable by this process", fs->root_name);
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "filesystem root %s cannot be checked right now; retry",
                          fs->root_name);
  }
  /* Every existing component of the owned prefix must be a real directory. */
  adcp_buf probe_dir;
  adcp_buf_init(&probe_dir);
  if (adcp_buf_printf(&probe_dir, "%s/x", fs->prefix) || adcp_buf_cstr(&probe_dir)) {
    close(rootfd);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  int dirfd;
  const char *leaf;
  adcp_error inner;
  fs_last_errno = 0;
  rc = open_parent_mode(rootfd, (const char *)probe_dir.data, fs->dir_mode, &dirfd, &leaf, &inner);
  adcp_buf_free(&probe_dir);
  close(rootfd);
  if (rc == ADCP_EUNSAFE_BINDING) return unsafe(err, "a component of binding prefix %.128s is a symbolic link", fs->prefix);
  if (rc) {
    int t = probe_step_failed(fs, rc, &inner, "creating the prefix directories", err);
    return t ? t : unsafe(err, "binding prefix %.128s cannot be created as directories under the root", fs->prefix);
  }
  close(dirfd);
  staging_sweep(fs);

  /* Empirical create-only check (as the S3/Azure probes do): link() must exist,
   * must refuse to replace, and sub-second mtimes must survive. The probe object
   * lives in a directory of its own (see PROBE_DIR_PREFIX). */
  uint8_t rnd[16];
  char hex[33], dir_name[sizeof PROBE_DIR_PREFIX + 32];
  if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) return fail(err, "probe", fs->prefix);
  adcp_hex_encode(hex, rnd, sizeof rnd);
  snprintf(dir_name, sizeof dir_name, PROBE_DIR_PREFIX "%s", hex);
  adcp_buf key;
  adcp_buf_init(&key);
  if (adcp_buf_printf(&key, "%s/%s/probe", fs->prefix, dir_name) || adcp_buf_cstr(&key))
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  const char *k = (const char *)key.data;
  adcp_object_put_input a = {k, (const uint8_t *)"adcp-probe-1\n", 13, "application/x-ndjson", NULL, 0};
  adcp_object_put_input b = {k, (const uint8_t *)"adcp-probe-2\n", 13, "application/x-ndjson", NULL, 0};
  adcp_object_put_result r1, r2;
  fs_last_errno = 0;
  rc = put_at(fs, &r1, &a, ctx, &inner);
  if (rc) {
    int t = rc == ADCP_EUNSAFE_BINDING ? 0 : probe_step_failed(fs, rc, &inner, "first write", err);
    if (t) rc = t;
    else if (rc == ADCP_EUNSAFE_BINDING && strstr(inner.message, "hard links"))
      rc = unsafe(err, "filesystem under root %s does not support hard links (link())", fs->root_name);
    else
      rc = unsafe(err, "create-only test write under root %s failed", fs->root_name);
  } else if (r1.outcome != ADCP_OBJECT_CREATED) {
    rc = unsafe(err, "create-only test write under root %s failed", fs->root_name);
  }
  if (!rc) {
    fs_last_errno = 0;
    int r = put_at(fs, &r2, &b, ctx, &inner);
    if (r != ADCP_ECONTENT_CONFLICT) {
      int t = r ? probe_step_failed(fs, r, &inner, "second write", err) : 0;
      rc = t ? t : unsafe(err, "filesystem under root %s did not refuse a second create-only write", fs->root_name);
    }
  }
  if (!rc) {
    int fd;
    fs_stat pst;
    fs_last_errno = 0;
    int r = open_object(fs, k, NULL, &leaf, &fd, &pst, &inner);
    if (r == 0) close(fd);
    int t = r && r != ADCP_ENOT_FOUND ? probe_step_failed(fs, r, &inner, "re-reading the probe object", err) : 0;
    if (t) rc = t;
    else if (r || strcmp(pst.version, r1.native_version) != 0)
      rc = unsafe(err, "probe object under root %s changed version", fs->root_name);
    else if (pst.mtime_nsec == 0)
      rc = unsafe(err, "filesystem under root %s keeps whole-second modification times; native versions would not be write-unique", fs->root_name);
  }
  int outcome = 0;
  if (r1.native_version[0]) {
    fs_last_errno = 0;
    int d = delete_at(fs, &outcome, k, r1.native_version, ctx, &inner);
    if (!rc && (d || outcome != ADCP_OBJECT_DELETED)) {
      int t = d ? probe_step_failed(fs, d, &inner, "deleting the probe object", err) : 0;
      rc = t ? t : unsafe(err, "probe object under root %s could not be deleted at its version", fs->root_name);
    }
  }
  probe_dir_remove(fs, dir_name);
  adcp_buf_free(&key);
  return rc;
}

static void fs_destroy(adcp_object_provider *self) {
  fs_provider *fs = (fs_provider *)self;
  free(fs->root);
  free(fs->root_name);
  free(fs->prefix);
  free(fs);
}

static int root_name_ok(const char *s) {
  size_t n = strlen(s);
  if (n < 1 || n > 64) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
      return 0;
  }
  return 1;
}

int adcp_fs_provider_new(adcp_object_provider **out, const char *root_dir, const adcp_fs_provider_options *options,
                         adcp_error *err) {
  *out = NULL;
  if (!root_dir || root_dir[0] != '/' || strlen(root_dir) >= 4096)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "filesystem root must be an absolute directory path");
  if (!options) return adcp_error_set(err, ADCP_EINVALID_INPUT, "filesystem provider options are missing");
  const char *name = options->root_name ? options->root_name : "default";
  if (!root_name_ok(name)) return adcp_error_set(err, ADCP_EINVALID_INPUT, "filesystem root name must match ^[A-Za-z0-9_.-]{1,64}$");
  int rc = adcp_object_prefix_validate(options->prefix, err);
  if (rc) return rc;
  fs_provider *fs = calloc(1, sizeof *fs);
  if (!fs) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  fs->root = strdup(root_dir);
  fs->root_name = strdup(name);
  fs->prefix = strdup(options->prefix);
  if (!fs->root || !fs->root_name || !fs->prefix) {
    fs_destroy(&fs->base);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  /* Trailing slashes would make the root's O_NOFOLLOW check see "" as last component. */
  for (size_t n = strlen(fs->root); n > 1 && fs->root[n - 1] == '/'; n--) fs->root[n - 1] = '\0';
  fs->create_root = options->create_root;
  fs->slice = options->write_slice ? options->write_slice : (size_t)1 << 20;
  fs->hook = options->hook;
  fs->hook_ctx = options->hook_ctx;
  fs->file_mode = 0600, fs->dir_mode = 0700;
  fs->base.version = ADCP_OBJECT_PROVIDER_VERSION;
  fs->base.name = "filesystem";
  fs->base.prefix = fs->prefix;
  fs->base.capabilities = ADCP_OBJECT_CAP_RANGED_READS | ADCP_OBJECT_CAP_NATIVE_CREATE_ONLY | ADCP_OBJECT_CAP_HEAD |
                          ADCP_OBJECT_CAP_LIST;
  fs->base.validate_location = fs_validate_location;
  fs->base.probe = fs_probe;
  fs->base.put_create_only = fs_put;
  fs->base.get = fs_get;
  fs->base.delete_version = fs_delete;
  fs->base.head = fs_head;
  fs->base.list = fs_list;
  fs->base.destroy = fs_destroy;
  fs->base.stage_put = fs_stage_put;
  fs->base.stage_link = fs_stage_link;
  fs->base.stage_drop = fs_stage_drop;
  /* Leftovers of crashed writers go at every start, not only when a binding
   * is first registered (the ledger probes only then). */
  staging_sweep(fs);
  *out = &fs->base;
  return 0;
}

int adcp_fs_provider_set_modes(adcp_object_provider *p, unsigned int file_mode, unsigned int dir_mode,
                               adcp_error *err) {
  if (!p || p->destroy != fs_destroy)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "file and directory modes apply to filesystem providers only");
  /* The owner must keep access; nobody else may write (planted entries). */
  if (file_mode && ((file_mode & ~0777u) || (file_mode & 0600) != 0600 || (file_mode & 0002)))
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "filesystem file_mode %04o must be within 0777, include 0600 and not be world-writable",
                          file_mode & 07777u);
  if (dir_mode && ((dir_mode & ~0777u) || (dir_mode & 0700) != 0700 || (dir_mode & 0002)))
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "filesystem dir_mode %04o must be within 0777, include 0700 and not be world-writable",
                          dir_mode & 07777u);
  fs_provider *fs = (fs_provider *)p;
  fs->file_mode = file_mode ? (mode_t)file_mode : 0600;
  fs->dir_mode = dir_mode ? (mode_t)dir_mode : 0700;
  return 0;
}
