/* objects/fs_probe.c — room objects, filesystem provider: the location check
 * and the store probe (root safety, prefix directories, an empirical
 * create-only test in a directory of its own). May touch: the root itself
 * (created when asked) and PREFIX/.adcp~probe-<hex>, which it removes. */
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

/* ---- probe, location, lifecycle ---------------------------------------------------------- */

int adcp_objects__fs_validate_location(adcp_object_provider *self, const adcp_object_kv *loc, size_t n, adcp_error *err) {
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
static int probe_step_failed(const fs_provider *fs, int rc, const adcp_error *inner, const char *step, adcp_error *err) {
  if (rc == ADCP_EDEADLINE_EXCEEDED || rc == ADCP_EABORTED || rc == ADCP_ENOMEM)
    return adcp_error_set(err, rc, "%s", inner->message);
  if (rc == ADCP_EPROVIDER_UNAVAILABLE && !config_errno(adcp_objects__fs_last_errno))
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
  if (adcp_objects__fs_open_root(fs, &rootfd, &ignored)) return;
  adcp_buf pdir;
  adcp_buf_init(&pdir);
  if (adcp_buf_printf(&pdir, "%s/x", fs->prefix) == 0 && adcp_buf_cstr(&pdir) == 0 &&
      adcp_objects__fs_open_parent(rootfd, (const char *)pdir.data, 0, &pfd, &leaf, &ignored) == 0) {
    unlinkat(pfd, dir_name, AT_REMOVEDIR); /* no fsync: a resurrected empty directory is harmless */
    close(pfd);
  }
  adcp_buf_free(&pdir);
  close(rootfd);
}

int adcp_objects__fs_probe(adcp_object_provider *self, const adcp_object_ctx *ctx, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  int rc = adcp_object_ctx_check(ctx, err);
  if (rc) return rc;
  if (fs->create_root) mkdir_parents(fs->root, fs->dir_mode); /* failures surface as "missing" below */
  int rootfd = open(fs->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rootfd < 0) {
    int e = errno;
    if (adcp_objects__fs_root_is_symlink(fs->root))
      return unsafe(err, "filesystem root %s is a symbolic link", fs->root_name);
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
  adcp_objects__fs_last_errno = 0;
  rc = adcp_objects__fs_open_parent_mode(rootfd, (const char *)probe_dir.data, fs->dir_mode, &dirfd, &leaf, &inner);
  adcp_buf_free(&probe_dir);
  close(rootfd);
  if (rc == ADCP_EUNSAFE_BINDING)
    return unsafe(err, "a component of binding prefix %.128s is a symbolic link", fs->prefix);
  if (rc) {
    int t = probe_step_failed(fs, rc, &inner, "creating the prefix directories", err);
    return t ? t : unsafe(err, "binding prefix %.128s cannot be created as directories under the root", fs->prefix);
  }
  close(dirfd);
  adcp_objects__fs_staging_sweep(fs);

  /* Empirical create-only check (as the S3/Azure probes do): link() must exist,
   * must refuse to replace, and sub-second mtimes must survive. The probe object
   * lives in a directory of its own (see PROBE_DIR_PREFIX). */
  uint8_t rnd[16];
  char hex[33], dir_name[sizeof PROBE_DIR_PREFIX + 32];
  if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) return adcp_objects__fs_fail(err, "probe", fs->prefix);
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
  adcp_objects__fs_last_errno = 0;
  rc = adcp_objects__fs_put_at(fs, &r1, &a, ctx, &inner);
  if (rc) {
    int t = rc == ADCP_EUNSAFE_BINDING ? 0 : probe_step_failed(fs, rc, &inner, "first write", err);
    if (t) rc = t;
    else if (rc == ADCP_EUNSAFE_BINDING && strstr(inner.message, "hard links"))
      rc = unsafe(err, "filesystem under root %s does not support hard links (link())", fs->root_name);
    else rc = unsafe(err, "create-only test write under root %s failed", fs->root_name);
  } else if (r1.outcome != ADCP_OBJECT_CREATED) {
    rc = unsafe(err, "create-only test write under root %s failed", fs->root_name);
  }
  if (!rc) {
    adcp_objects__fs_last_errno = 0;
    int r = adcp_objects__fs_put_at(fs, &r2, &b, ctx, &inner);
    if (r != ADCP_ECONTENT_CONFLICT) {
      int t = r ? probe_step_failed(fs, r, &inner, "second write", err) : 0;
      rc = t ? t : unsafe(err, "filesystem under root %s did not refuse a second create-only write", fs->root_name);
    }
  }
  if (!rc) {
    int fd;
    fs_stat pst;
    adcp_objects__fs_last_errno = 0;
    int r = adcp_objects__fs_open_object(fs, k, NULL, &leaf, &fd, &pst, &inner);
    if (r == 0) close(fd);
    int t = r && r != ADCP_ENOT_FOUND ? probe_step_failed(fs, r, &inner, "re-reading the probe object", err) : 0;
    if (t) rc = t;
    else if (r || strcmp(pst.version, r1.native_version) != 0)
      rc = unsafe(err, "probe object under root %s changed version", fs->root_name);
    else if (pst.mtime_nsec == 0)
      rc = unsafe(
          err, "filesystem under root %s keeps whole-second modification times; native versions would not be write-unique",
          fs->root_name);
  }
  int outcome = 0;
  if (r1.native_version[0]) {
    adcp_objects__fs_last_errno = 0;
    int d = adcp_objects__fs_delete_at(fs, &outcome, k, r1.native_version, ctx, &inner);
    if (!rc && (d || outcome != ADCP_OBJECT_DELETED)) {
      int t = d ? probe_step_failed(fs, d, &inner, "deleting the probe object", err) : 0;
      rc = t ? t : unsafe(err, "probe object under root %s could not be deleted at its version", fs->root_name);
    }
  }
  probe_dir_remove(fs, dir_name);
  adcp_buf_free(&key);
  return rc;
}
