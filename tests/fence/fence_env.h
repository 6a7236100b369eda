/* tests/fence/fence_env.h — room tests/fence: the fence test environment
 * of test_fence.c and test_fence_crash.c (fence_env.c, linked into both
 * executables only). */
#ifndef ADCP_TEST_LEDGER_FENCE_ENV_H
#define ADCP_TEST_LEDGER_FENCE_ENV_H

#include "adcp/fence.h"
#include "adcp/objects.h"
#include "ledger/ledger_fixture.h"
#include "support/support_fs.h"

typedef struct fenv {
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  adcp_object_provider *p;
  char *dir; /* owns the bucket (shared by clones) */
  char root[600];
} fenv;

typedef struct hook_opts {
  const char *owner;
  int (*step)(void *, int);
  void *step_ctx;
  int64_t ttl, advance;
} hook_opts;

/* A ledger on c with binding "fs1" over p; h (may be NULL) sets the fence owner, hook, TTL and interval. */
adcp_ledger *fledger(adcp_sql_conn *c, adcp_object_provider *p, const hook_opts *h);

/* Opens (and migrates) url with a bucket in bucket_dir (NULL: a fresh temporary directory e owns). */
void fenv_open_url(fenv *e, const char *url, const char *bucket_dir, const hook_opts *h);
void fenv_open(fenv *e, const fixture *f);
void fenv_close(fenv *e);

/* Runs a SQL script; fails the test on error. */
void exec(adcp_sql_conn *c, const char *sql);

/* Fence objects in the bucket directory of the ledger's namespace, as a bitmask of epochs 1..63. */
uint64_t fence_epochs(fenv *e);

/* The file of fence object `epoch` of binding fs1. */
void fence_path(char *out, size_t n, fenv *e, uint64_t epoch);

/* adcp_fence_acquire on fs1 (c may be NULL); fails the test on error, returns the cause. */
adcp_fence_cause acquire(fenv *e, adcp_fence_claim *c);

/* Commits acct/obligation/rev (1,500 rows of salt, several chunks) through fs1. */
int fcommit(fenv *e, const char *obligation, const char *rev, uint64_t salt, int (*hook)(void *, int), adcp_error *err);

/* Fails the test unless rev verifies with all of its 1,500 rows. */
void verifies(fenv *e, const char *rev);

/* Fails the test unless a commit of rev is refused UNSAFE_BINDING naming cause. */
void expect_commit_refused(fenv *e, const char *cause, const char *rev);

#endif
