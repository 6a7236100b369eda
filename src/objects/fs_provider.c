/* objects/fs_provider.c — room objects: the filesystem object provider (single
 * host), its entry: constructor, vtable, create-only put, pinned get, delete
 * and head. May touch: files under the owned prefix, only through the
 * fs_path.c walk. Staged writes are in fs_stage.c, listing in fs_list.c, the
 * probe in fs_probe.c.
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
#include "objects/fs_internal.h"

int adcp_objects__fs_write_all(int fd, const uint8_t *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

ssize_t adcp_objects__fs_pread_full(int fd, uint8_t *p, size_t n, off_t off) {
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
int adcp_objects__fs_compare_existing(fs_provider *fs, int dirfd, const char *leaf, const adcp_object_put_input *in,
                                      adcp_object_put_result *out, const adcp_object_ctx *ctx, adcp_error *err) {
  int fd = -1, rc = adcp_objects__fs_open_leaf(dirfd, leaf, in->key, &fd, err);
  if (rc) return rc;
  fs_stat st;
  if (adcp_objects__fs_stat_fd(fd, &st) != 0) {
    close(fd);
    return adcp_objects__fs_fail(err, "stat", in->key);
  }
  if (!st.regular) {
    close(fd);
    return adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "key %.160s is occupied by something that is not an object",
                          in->key);
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
    ssize_t got = adcp_objects__fs_pread_full(fd, buf, want, (off_t)off);
    if (got < 0) {
      rc = adcp_objects__fs_fail(err, "read", in->key);
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
int adcp_objects__fs_stamp_version(int fd, const uint8_t rnd[16]) {
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
int adcp_objects__fs_after_link(fs_provider *fs, adcp_object_put_result *out, int dirfd, const char *key, adcp_error *err) {
  int rc = adcp_objects__fs_hook(fs, ADCP_FS_STEP_FSYNC_DIR, key, err);
  if (rc) return rc;
  if (fsync(dirfd) != 0) return adcp_objects__fs_fail(err, "directory fsync", key);
  out->outcome = ADCP_OBJECT_CREATED;
  return 0;
}

/* put without the key check: the probe writes under its own directory, whose
 * name is deliberately outside the key alphabet. */
int adcp_objects__fs_put_at(fs_provider *fs, adcp_object_put_result *out, const adcp_object_put_input *in,
                            const adcp_object_ctx *ctx, adcp_error *err) {
  memset(out, 0, sizeof *out);
  int rc = adcp_object_ctx_check(ctx, err);
  if (rc) return rc;
  int rootfd = -1, dirfd = -1, tfd = -1;
  const char *leaf;
  if ((rc = adcp_objects__fs_open_root(fs, &rootfd, err))) return rc;
  rc = adcp_objects__fs_open_parent_mode(rootfd, in->key, fs->dir_mode, &dirfd, &leaf, err);
  close(rootfd);
  if (rc) return rc;

  uint8_t rnd[16];
  char tmp[sizeof TEMP_PREFIX + 40], hex[33];
  if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
    close(dirfd);
    return adcp_objects__fs_fail(err, "random temp name", in->key);
  }
  adcp_hex_encode(hex, rnd, sizeof rnd);
  snprintf(tmp, sizeof tmp, TEMP_PREFIX "%s.tmp", hex);
  tfd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, fs->file_mode);
  if (tfd < 0) {
    close(dirfd);
    return adcp_objects__fs_fail(err, "temp file create", in->key);
  }
  if (fchmod(tfd, fs->file_mode) != 0) { /* exactly the configured mode, whatever the umask */
    rc = adcp_objects__fs_fail(err, "chmod", in->key);
    goto done;
  }
  if ((rc = adcp_objects__fs_hook(fs, ADCP_FS_STEP_TEMP_CREATED, in->key, err))) goto done;
  for (size_t off = 0; off < in->len;) {
    if ((rc = adcp_object_ctx_check(ctx, err))) goto done;
    size_t n = in->len - off < fs->slice ? in->len - off : fs->slice;
    if (adcp_objects__fs_write_all(tfd, in->bytes + off, n) != 0) {
      rc = adcp_objects__fs_fail(err, "write", in->key);
      goto done;
    }
    off += n;
    if ((rc = adcp_objects__fs_hook(fs, ADCP_FS_STEP_WROTE_SLICE, in->key, err))) goto done;
  }
  if (adcp_objects__fs_stamp_version(tfd, rnd) != 0) {
    rc = adcp_objects__fs_fail(err, "timestamp", in->key);
    goto done;
  }
  if ((rc = adcp_objects__fs_hook(fs, ADCP_FS_STEP_FSYNC_FILE, in->key, err))) goto done;
  if (fsync(tfd) != 0) {
    rc = adcp_objects__fs_fail(err, "fsync", in->key);
    goto done;
  }
  /* Last point at which a deadline still means "nothing under the final key". */
  if ((rc = adcp_object_ctx_check(ctx, err))) goto done;
  if ((rc = adcp_objects__fs_hook(fs, ADCP_FS_STEP_BEFORE_LINK, in->key, err))) goto done;
  rc = ADCP_ENOT_FOUND; /* "retry": the existing object vanished before it could be compared */
  for (int attempt = 0; attempt < 4 && rc == ADCP_ENOT_FOUND; attempt++) {
    if (linkat(dirfd, tmp, dirfd, leaf, 0) == 0) {
      fs_stat st;
      if (adcp_objects__fs_stat_fd(tfd, &st) != 0) {
        rc = adcp_objects__fs_fail(err, "stat", in->key);
        break;
      }
      memcpy(out->native_version, st.version, sizeof st.version);
      rc = adcp_objects__fs_after_link(fs, out, dirfd, in->key, err);
      break;
    }
    if (errno != EEXIST) {
      rc = errno == EPERM || errno == EOPNOTSUPP
               ? adcp_error_set(err, ADCP_EUNSAFE_BINDING, "filesystem does not support hard links")
               : adcp_objects__fs_fail(err, "link", in->key);
      break;
    }
    rc = adcp_objects__fs_compare_existing(fs, dirfd, leaf, in, out, ctx, err);
    if (rc == 0) out->outcome = ADCP_OBJECT_ADOPTED_IDENTICAL;
  }
  if (rc == ADCP_ENOT_FOUND)
    rc = adcp_objects__fs_fail_errno(err, "link (the key keeps being deleted)", in->key, ENOENT);
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
  int rc = adcp_objects__fs_own_key(fs, in->key, err);
  return rc ? rc : adcp_objects__fs_put_at(fs, out, in, ctx, err);
}

static int fs_get(adcp_object_provider *self, adcp_buf *out, const adcp_object_get_input *in,
                  const adcp_object_ctx *ctx, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  int rc = adcp_objects__fs_own_key(fs, in->key, err);
  if (rc || (rc = adcp_object_ctx_check(ctx, err))) return rc;
  int fd;
  const char *leaf;
  fs_stat st;
  if ((rc = adcp_objects__fs_open_object(fs, in->key, NULL, &leaf, &fd, &st, err))) {
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
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "requested range exceeds the stored object at key %.160s",
                          in->key);
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
    ssize_t got = adcp_objects__fs_pread_full(fd, out->data + out->len, n, (off_t)(off + done));
    if (got < 0) {
      rc = adcp_objects__fs_fail(err, "read", in->key);
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
  if (!rc && (adcp_objects__fs_stat_fd(fd, &after) != 0 || strcmp(after.version, st.version) != 0))
    rc = adcp_error_set(err, ADCP_ENOT_FOUND, "object at key %.160s changed while reading", in->key);
  if (rc) out->len = start;
  close(fd);
  return rc;
}

int adcp_objects__fs_delete_at(fs_provider *fs, int *outcome, const char *key, const char *version,
                               const adcp_object_ctx *ctx, adcp_error *err) {
  *outcome = 0;
  int rc = adcp_object_ctx_check(ctx, err);
  if (rc) return rc;
  int dirfd, fd;
  const char *leaf;
  fs_stat st;
  if ((rc = adcp_objects__fs_open_object(fs, key, &dirfd, &leaf, &fd, &st, err))) {
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
    rc = errno == ENOENT ? 0 : adcp_objects__fs_fail(err, "unlink", key);
    if (!rc) *outcome = ADCP_OBJECT_ABSENT;
    close(dirfd);
    return rc;
  }
  if ((rc = adcp_objects__fs_hook(fs, ADCP_FS_STEP_FSYNC_DIR, key, err)) == 0 && fsync(dirfd) != 0)
    rc = adcp_objects__fs_fail(err, "directory fsync", key);
  close(dirfd);
  if (!rc) *outcome = ADCP_OBJECT_DELETED;
  return rc;
}

static int fs_delete(adcp_object_provider *self, int *outcome, const char *key, const char *version,
                     const adcp_object_ctx *ctx, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  *outcome = 0;
  int rc = adcp_objects__fs_own_key(fs, key, err);
  return rc ? rc : adcp_objects__fs_delete_at(fs, outcome, key, version, ctx, err);
}

static int fs_head(adcp_object_provider *self, adcp_object_info *out, const char *key, const adcp_object_ctx *ctx,
                   adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  int rc = adcp_objects__fs_own_key(fs, key, err);
  if (rc || (rc = adcp_object_ctx_check(ctx, err))) return rc;
  int fd;
  const char *leaf;
  fs_stat st;
  if ((rc = adcp_objects__fs_open_object(fs, key, NULL, &leaf, &fd, &st, err))) {
    if (rc == ADCP_ENOT_FOUND) adcp_error_set(err, rc, "no object at key %.160s", key);
    return rc;
  }
  close(fd);
  if (!st.regular) return adcp_error_set(err, ADCP_ENOT_FOUND, "no object at key %.160s", key);
  out->size = st.size;
  memcpy(out->native_version, st.version, sizeof st.version);
  return 0;
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
  if (!root_name_ok(name))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "filesystem root name must match ^[A-Za-z0-9_.-]{1,64}$");
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
  fs->base.capabilities =
      ADCP_OBJECT_CAP_RANGED_READS | ADCP_OBJECT_CAP_NATIVE_CREATE_ONLY | ADCP_OBJECT_CAP_HEAD | ADCP_OBJECT_CAP_LIST;
  fs->base.validate_location = adcp_objects__fs_validate_location;
  fs->base.probe = adcp_objects__fs_probe;
  fs->base.put_create_only = fs_put;
  fs->base.get = fs_get;
  fs->base.delete_version = fs_delete;
  fs->base.head = fs_head;
  fs->base.list = adcp_objects__fs_list;
  fs->base.destroy = fs_destroy;
  fs->base.stage_put = adcp_objects__fs_stage_put;
  fs->base.stage_link = adcp_objects__fs_stage_link;
  fs->base.stage_drop = adcp_objects__fs_stage_drop;
  /* Leftovers of crashed writers go at every start, not only when a binding
   * is first registered (the ledger probes only then). */
  adcp_objects__fs_staging_sweep(fs);
  *out = &fs->base;
  return 0;
}

int adcp_fs_provider_set_modes(adcp_object_provider *p, unsigned int file_mode, unsigned int dir_mode, adcp_error *err) {
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
