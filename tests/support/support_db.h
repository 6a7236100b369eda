/* tests/support/support_db.h — room tests/support (the test library): one fresh
 * SQLite file or one fresh PostgreSQL database per test (CREATE DATABASE on
 * the throwaway cluster of scripts/pg-cluster.sh via ADCP_TEST_PG_URL; the
 * PostgreSQL run FAILS when it is unset), plus a generated row source whose
 * rows are already canonical, so expected output is the generated text. */
#ifndef ADCP_TEST_SUPPORT_DB_H
#define ADCP_TEST_SUPPORT_DB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adcp/ledger.h"
#include "adcp/storage.h"
#include "testutil.h"

typedef struct backend {
  adcp_sql_dialect dialect;
} backend;

typedef struct fixture {
  adcp_sql_dialect dialect;
  char url[512];
  char dbname[64];
  char *dir;
} fixture;

extern backend SQLITE;
extern backend POSTGRES;

#define OK(expr) \
  do { \
    int rc_ = (expr); \
    if (rc_) fail_msg("%s failed: %d %s", #expr, rc_, err.message); \
  } while (0)

/* The test cluster's admin URL (ADCP_TEST_PG_URL); fails the test when it is unset. */
const char *pg_admin_url(void);

/* URL of database `db` on the test cluster: the admin URL with its last path part replaced. */
void pg_url_for(char *out, size_t n, const char *db);

/* Runs sql on the admin database; fails the test on error. */
void pg_admin(const char *sql);

int setup(void **state);

int teardown(void **state);

adcp_storage *open_migrated(const fixture *f);

/* A ledger on c with a manifest cache of `cache` entries. */
adcp_ledger *ledger_on(adcp_sql_conn *c, int cache);

/* Generated canonical rows: {"i":N,"p":"pkg_NNNN","s":"<pad>"}; row `big` (if
 * >= 0) carries a pad of big_bytes. */
typedef struct gen {
  uint64_t n, next;
  size_t pad;
  int64_t big;
  size_t big_bytes;
  uint64_t salt;
  adcp_buf line;
} gen;

void gen_line(gen *g, uint64_t i);
/* adcp_ledger_commit.next_row over a gen. */

int gen_next(void *ctx, const char **row, size_t *len, adcp_error *err);

void gen_init(gen *g, uint64_t n, size_t pad, uint64_t salt);

/* Writes rows 0..n-1 of a gen (pad, salt), each followed by '\n', to path. */
void gen_write_file(const char *path, uint64_t n, size_t pad, uint64_t salt);

/* The request commit_gen sends (period 2026-10-01, g's rows from the start; g
 * NULL: header only), for a test that adds a field before committing. */
adcp_ledger_commit gen_commit_request(const char *account, const char *obligation, const char *revision,
                                      adcp_finality fin, gen *g);
/* Commits revision of obligation (period 2026-10-01) with g's rows (g NULL: header only). */
int commit_gen(adcp_commit_result *res, adcp_ledger *l, const char *account, const char *obligation,
               const char *revision, adcp_finality fin, gen *g, adcp_error *err);

/* Fails the test unless page p holds exactly rows offset..offset+count-1 of g, each followed by '\n'. */
void expect_rows(const adcp_ledger_page *p, gen *g, uint64_t offset, uint64_t count);

/* Reads rows off..off+lim (lim 0: to the end) of revision rev and checks them against g, the
 * total, and that the envelope was verified exactly when the whole revision was read. */
void read_page(adcp_ledger *l, const char *acct, const char *rev, gen *g, uint64_t total, uint64_t off, uint64_t lim);

/* Configures and registers on l the filesystem binding "fs" (root name "t",
 * prefix "st", no compression) over provider p. */
void fs_binding_on(adcp_ledger *l, adcp_object_provider *p);
/* A filesystem provider rooted at DIR/objects (created; root name "t", prefix
 * "st": the one fs_binding_on expects). Fails the test if it cannot be made. */
adcp_object_provider *fs_provider_under(const char *dir);

/* The single value of a one-row, one-column query (fails the test otherwise). */
int64_t tu_scalar(adcp_sql_conn *c, const char *sql);
/* PostgreSQL xids are cluster-wide: an open transaction of ANY test on the
 * shared cluster holds the deployment feed back (correctly). Before asserting
 * deployment-feed counts, wait (at most 30 s) until every change row is below
 * the snapshot xmin. No-op on SQLite. */
void settle(const char *url);

/* Monotonic seconds, for tests that bound how long something waits. */
double mono_s(void);

#define BOTH(fn) \
  {"sqlite/" #fn, fn, setup, teardown, &SQLITE}, { "postgres/" #fn, fn, setup, teardown, &POSTGRES }

#endif
