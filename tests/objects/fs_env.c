/* tests/objects/fs_env.c — room tests/objects: the filesystem-provider test
 * helpers shared by test_fs_provider.c and test_fs_stage.c (the temporary
 * directory fixture, a provider factory, paths, the fault hook). */
#include "fs_env.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

fs_env env; /* test-only fixture: each executable's main sets it up */

adcp_object_provider *make_fs(const char *root, const char *prefix, int (*hk)(void *, int, const char *), void *hctx,
                              size_t slice) {
  adcp_fs_provider_options o = {"default", prefix, 1, slice, hk, hctx};
  adcp_object_provider *p = NULL;
  adcp_error err;
  if (adcp_fs_provider_new(&p, root, &o, &err)) fail_msg("fs provider: %s", err.message);
  return p;
}

char *path_in(const char *root, const char *rel) {
  static __thread char buf[4][1200];
  static __thread unsigned next;
  char *b = buf[next++ % 4];
  snprintf(b, sizeof buf[0], "%s/%s", root, rel);
  return b;
}

void make_root(char *out, size_t n, const char *name) {
  snprintf(out, n, "%s/%s", env.tmp, name);
  assert_int_equal(mkdir(out, 0700), 0);
}

int count_temps(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  for (struct dirent *de; (de = readdir(d));) n += strstr(de->d_name, ".adcp~") == de->d_name;
  closedir(d);
  return n;
}

int fault_hook(void *ctx, int step, const char *key) {
  (void)key;
  fault *f = ctx;
  f->counts[step]++;
  return step == f->fail_step;
}
