/* objects/fs_internal.h — room objects, private to the filesystem provider
 * (fs_*.c): its handle, its fixed names and the helpers its files share. The
 * path walk (fs_path.c) is the only code that opens anything under the root. */
#ifndef ADCP_OBJECTS_FS_INTERNAL_H
#define ADCP_OBJECTS_FS_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

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

typedef struct fs_stat {
  int regular;
  uint64_t size;
  long mtime_nsec;
  int64_t mtime_ms; /* listing's last_modified (of the fd: never a followed symlink) */
  char version[ADCP_OBJECT_VERSION_MAX + 1];
} fs_stat;

/* fs_path.c: errors, the fault hook, the key check and the O_NOFOLLOW walk. */
extern _Thread_local int adcp_objects__fs_last_errno;
int adcp_objects__fs_fail(adcp_error *err, const char *what, const char *key);
int adcp_objects__fs_fail_errno(adcp_error *err, const char *what, const char *key, int e);
int adcp_objects__fs_hook(fs_provider *fs, int step, const char *key, adcp_error *err);
int adcp_objects__fs_own_key(const fs_provider *fs, const char *key, adcp_error *err);
int adcp_objects__fs_root_is_symlink(const char *root);
int adcp_objects__fs_open_root(const fs_provider *fs, int *out, adcp_error *err);
int adcp_objects__fs_open_parent_mode(int rootfd, const char *key, mode_t create, int *dirfd, const char **leaf,
                                      adcp_error *err);
int adcp_objects__fs_open_parent(int rootfd, const char *key, int create, int *dirfd, const char **leaf, adcp_error *err);
int adcp_objects__fs_stat_fd(int fd, fs_stat *out);
int adcp_objects__fs_open_leaf(int dirfd, const char *leaf, const char *key, int *out, adcp_error *err);
int adcp_objects__fs_open_object(fs_provider *fs, const char *key, int *out_dirfd, const char **leaf, int *out_fd,
                                 fs_stat *st, adcp_error *err);

/* fs_provider.c: create-only put, pinned delete and their I/O. */
int adcp_objects__fs_write_all(int fd, const uint8_t *p, size_t n);
ssize_t adcp_objects__fs_pread_full(int fd, uint8_t *p, size_t n, off_t off);
int adcp_objects__fs_compare_existing(fs_provider *fs, int dirfd, const char *leaf, const adcp_object_put_input *in,
                                      adcp_object_put_result *out, const adcp_object_ctx *ctx, adcp_error *err);
int adcp_objects__fs_stamp_version(int fd, const uint8_t rnd[16]);
int adcp_objects__fs_after_link(fs_provider *fs, adcp_object_put_result *out, int dirfd, const char *key, adcp_error *err);
int adcp_objects__fs_put_at(fs_provider *fs, adcp_object_put_result *out, const adcp_object_put_input *in,
                            const adcp_object_ctx *ctx, adcp_error *err);
int adcp_objects__fs_delete_at(fs_provider *fs, int *outcome, const char *key, const char *version,
                               const adcp_object_ctx *ctx, adcp_error *err);

/* fs_stage.c */
int adcp_objects__fs_stage_put(adcp_object_provider *self, adcp_object_stage **out, const uint8_t *bytes, size_t len,
                               const adcp_object_ctx *ctx, adcp_error *err);
int adcp_objects__fs_stage_link(adcp_object_provider *self, adcp_object_put_result *out, adcp_object_stage *st,
                                const adcp_object_put_input *in, const adcp_object_ctx *ctx, adcp_error *err);
void adcp_objects__fs_stage_drop(adcp_object_provider *self, adcp_object_stage *st);
void adcp_objects__fs_staging_sweep(fs_provider *fs);

/* fs_list.c */
int adcp_objects__fs_list(adcp_object_provider *self, adcp_object_list_page *out, const char *prefix, const char *token,
                          size_t page_size, const adcp_object_ctx *ctx, adcp_error *err);

/* fs_probe.c */
int adcp_objects__fs_validate_location(adcp_object_provider *self, const adcp_object_kv *loc, size_t n, adcp_error *err);
int adcp_objects__fs_probe(adcp_object_provider *self, const adcp_object_ctx *ctx, adcp_error *err);

#endif
