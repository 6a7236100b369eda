/* objects/fs_stage.c — room objects, filesystem provider: staged writes
 * (stage_put, stage_link, stage_drop) and the sweep of a crashed writer's
 * staging files. May touch: PREFIX/.adcp~staging and the key it links to,
 * only through the fs_path.c walk. */
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
  dev_t dev; /* identity of the file written, checked again before and after link */
  ino_t ino;
  /* Once linked, never link again: the inode (and so the version) would be
   * the same as the first object's, and a pinned delete of that one would
   * remove the second. A retry only compares with what is at the key. */
  int linked;
};

/* Opens PREFIX/.adcp~staging (created when `create`). ADCP_ENOT_FOUND when absent. */
static int open_staging(fs_provider *fs, int create, int *out, adcp_error *err) {
  int rootfd, rc = adcp_objects__fs_open_root(fs, &rootfd, err);
  if (rc) return rc;
  adcp_buf path;
  adcp_buf_init(&path);
  if (adcp_buf_printf(&path, "%s/" STAGING_DIR "/x", fs->prefix) || adcp_buf_cstr(&path)) {
    close(rootfd);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  const char *leaf;
  rc = adcp_objects__fs_open_parent_mode(rootfd, (const char *)path.data, create ? fs->dir_mode : 0, out, &leaf, err);
  adcp_buf_free(&path);
  close(rootfd);
  return rc;
}

int adcp_objects__fs_stage_put(adcp_object_provider *self, adcp_object_stage **out, const uint8_t *bytes, size_t len,
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
    rc = adcp_objects__fs_fail(err, "random temp name", STAGE_WHAT);
    goto done;
  }
  adcp_hex_encode(hex, rnd, sizeof rnd);
  snprintf(st->name, sizeof st->name, TEMP_PREFIX "%s" STAGE_SUFFIX, hex);
  st->len = len;
  tfd = openat(sdir, st->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, fs->file_mode);
  if (tfd < 0) {
    rc = adcp_objects__fs_fail(err, "temp file create", STAGE_WHAT);
    goto done;
  }
  if (fchmod(tfd, fs->file_mode) != 0) {
    rc = adcp_objects__fs_fail(err, "chmod", STAGE_WHAT);
    goto done;
  }
  if ((rc = adcp_objects__fs_hook(fs, ADCP_FS_STEP_TEMP_CREATED, STAGE_WHAT, err))) goto done;
  for (size_t off = 0; off < len;) {
    if ((rc = adcp_object_ctx_check(ctx, err))) goto done;
    size_t n = len - off < fs->slice ? len - off : fs->slice;
    if (adcp_objects__fs_write_all(tfd, bytes + off, n) != 0) {
      rc = adcp_objects__fs_fail(err, "write", STAGE_WHAT);
      goto done;
    }
    off += n;
    if ((rc = adcp_objects__fs_hook(fs, ADCP_FS_STEP_WROTE_SLICE, STAGE_WHAT, err))) goto done;
  }
  if (adcp_objects__fs_stamp_version(tfd, rnd) != 0) {
    rc = adcp_objects__fs_fail(err, "timestamp", STAGE_WHAT);
    goto done;
  }
  {
    struct stat sb;
    if (fstat(tfd, &sb) != 0) {
      rc = adcp_objects__fs_fail(err, "stat", STAGE_WHAT);
      goto done;
    }
    st->dev = sb.st_dev, st->ino = sb.st_ino;
  }
  if ((rc = adcp_objects__fs_hook(fs, ADCP_FS_STEP_FSYNC_FILE, STAGE_WHAT, err))) goto done;
  if (fsync(tfd) != 0) {
    rc = adcp_objects__fs_fail(err, "fsync", STAGE_WHAT);
    goto done;
  }
  rc = adcp_objects__fs_hook(fs, ADCP_FS_STEP_STAGED, STAGE_WHAT, err);
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
  if (adcp_buf_reserve(b, (size_t)st->len ? (size_t)st->len : 1))
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  ssize_t got = adcp_objects__fs_pread_full(fd, b->data, (size_t)st->len, 0);
  if (got < 0 || (uint64_t)got != st->len) return adcp_objects__fs_fail(err, "read", STAGE_WHAT);
  b->len = (size_t)st->len;
  return 0;
}

int adcp_objects__fs_stage_link(adcp_object_provider *self, adcp_object_put_result *out, adcp_object_stage *st,
                                const adcp_object_put_input *in, const adcp_object_ctx *ctx, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  memset(out, 0, sizeof *out);
  int rc = adcp_objects__fs_own_key(fs, in->key, err);
  if (rc) return rc;
  int rootfd = -1, dirfd = -1, sdir = -1, sfd = -1;
  const char *leaf;
  adcp_buf bytes;
  adcp_buf_init(&bytes);
  if ((rc = adcp_objects__fs_open_root(fs, &rootfd, err))) return rc;
  rc = adcp_objects__fs_open_parent_mode(rootfd, in->key, fs->dir_mode, &dirfd, &leaf, err);
  close(rootfd);
  if (rc) return rc;
  if ((rc = open_staging(fs, 0, &sdir, err))) {
    if (rc == ADCP_ENOT_FOUND)
      rc = adcp_objects__fs_fail_errno(err, "staged file vanished before link", in->key, ENOENT);
    goto done;
  }
  sfd = openat(sdir, st->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (sfd < 0) {
    rc = adcp_objects__fs_fail(err, "staged file open", in->key);
    goto done;
  }
  fs_stat sst;
  struct stat sb;
  if (adcp_objects__fs_stat_fd(sfd, &sst) != 0 || fstat(sfd, &sb) != 0 || !sst.regular || sst.size != st->len) {
    rc = adcp_objects__fs_fail_errno(err, "staged file check", in->key, EIO);
    goto done;
  }
  if (sb.st_dev != st->dev || sb.st_ino != st->ino) {
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "staged file for key %.160s was replaced before its link", in->key);
    goto done;
  }
  if ((rc = adcp_object_ctx_check(ctx, err))) goto done;
  if ((rc = adcp_objects__fs_hook(fs, ADCP_FS_STEP_BEFORE_LINK, in->key, err))) goto done;
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
        rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "staged file for key %.160s was replaced before its link", in->key);
        break;
      }
      st->linked = 1;
      memcpy(out->native_version, sst.version, sizeof sst.version);
      rc = adcp_objects__fs_after_link(fs, out, dirfd, in->key, err);
      break;
    }
    int e = errno;
    if (e == EXDEV) {
      /* The key's directory is on another filesystem: copy as a plain put. */
      if (!(rc = read_staged(&bytes, sfd, st, err))) {
        adcp_object_put_input pi = *in;
        pi.bytes = bytes.data, pi.len = bytes.len;
        rc = adcp_objects__fs_put_at(fs, out, &pi, ctx, err);
        if (!rc && out->outcome == ADCP_OBJECT_CREATED) st->linked = 1;
      }
      break;
    }
    if (e != EEXIST) {
      rc = e == EPERM || e == EOPNOTSUPP
               ? adcp_error_set(err, ADCP_EUNSAFE_BINDING, "filesystem does not support hard links")
               : adcp_objects__fs_fail_errno(err, "link", in->key, e);
      break;
    }
    if (!bytes.len && st->len && (rc = read_staged(&bytes, sfd, st, err))) break;
    adcp_object_put_input pi = *in;
    pi.bytes = bytes.data, pi.len = (size_t)st->len;
    rc = adcp_objects__fs_compare_existing(fs, dirfd, leaf, &pi, out, ctx, err);
    if (rc == 0) out->outcome = ADCP_OBJECT_ADOPTED_IDENTICAL;
    if (rc == ADCP_ENOT_FOUND && st->linked) {
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "staged write for key %.160s was already linked once; stage it again", in->key);
      break;
    }
  }
  if (rc == ADCP_ENOT_FOUND)
    rc = adcp_objects__fs_fail_errno(err, "link (the key keeps being deleted)", in->key, ENOENT);
done:
  if (sfd >= 0) close(sfd);
  if (sdir >= 0) close(sdir);
  close(dirfd);
  adcp_buf_free(&bytes);
  return rc;
}

void adcp_objects__fs_stage_drop(adcp_object_provider *self, adcp_object_stage *st) {
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
void adcp_objects__fs_staging_sweep(fs_provider *fs) {
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
