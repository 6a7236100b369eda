/* tests/objects/fs_env.h — room tests/objects: the filesystem-provider test
 * helpers of test_fs_provider.c and test_fs_stage.c (fs_env.c, linked into
 * both executables only). */
#ifndef ADCP_TEST_OBJECTS_FS_ENV_H
#define ADCP_TEST_OBJECTS_FS_ENV_H

#include "testutil.h"

#include "adcp/objects.h"

typedef struct fs_env {
  char *tmp;      /* removed at the end */
  char root[512]; /* the conformance store */
} fs_env;

extern fs_env env; /* test-only fixture: each executable's main sets env.tmp */

/* A filesystem provider on root (bucket "default") with the test hook hk/hctx and write slice. */
adcp_object_provider *make_fs(const char *root, const char *prefix, int (*hk)(void *, int, const char *), void *hctx,
                              size_t slice);

/* root/rel in one of four rotating buffers, so two paths can appear in one call. */
char *path_in(const char *root, const char *rel);

/* Creates env.tmp/name (mode 0700) and writes its path to out. */
void make_root(char *out, size_t n, const char *name);

/* The provider's temporary files (".adcp~" names) in dir. */
int count_temps(const char *dir);

typedef struct fault {
  int fail_step;
  int counts[8];
} fault;

/* The provider test hook: counts each step, fails the one at fail_step. */
int fault_hook(void *ctx, int step, const char *key);

#endif
