/* tests/ledger/ledger_fixture.h — shared by the ledger suites: one fresh
 * SQLite file or one fresh PostgreSQL database per test (CREATE DATABASE on
 * the throwaway cluster of scripts/pg-cluster.sh via ADCP_TEST_PG_URL; the
 * PostgreSQL run FAILS when it is unset), plus a generated row source whose
 * rows are already canonical, so expected output is the generated text. */
#ifndef ADCP_LEDGER_FIXTURE_H
#define ADCP_LEDGER_FIXTURE_H

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

static backend SQLITE = {ADCP_SQL_SQLITE};
static backend POSTGRES = {ADCP_SQL_POSTGRES};

#define OK(expr)                                                     \
  do {                                                               \
    int rc_ = (expr);                                                \
    if (rc_) fail_msg("%s failed: %d %s", #expr, rc_, err.message); \
  } while (0)

static const char *pg_admin_url(void) {
  const char *u = getenv("ADCP_TEST_PG_URL");
  if (!u || !*u)
    fail_msg("ADCP_TEST_PG_URL is not set: run the suite through scripts/test.sh (it starts a throwaway "
             "PostgreSQL cluster); PostgreSQL tests are never skipped silently");
  return u;
}

/* URL of database `db` on the test cluster: the admin URL with its last path part replaced. */
static inline void pg_url_for(char *out, size_t n, const char *db) {
  const char *admin = pg_admin_url();
  const char *slash = strrchr(admin, '/');
  assert_non_null(slash);
  snprintf(out, n, "%.*s/%s", (int)(slash - admin), admin, db);
}

static void pg_admin(const char *sql) {
  adcp_sql_conn *c;
  adcp_error err = {0};
  int rc = adcp_sql_connect(&c, pg_admin_url(), &err);
  if (rc) fail_msg("cannot connect to the test cluster: %s", err.message);
  rc = adcp_sql_exec_script(c, sql, &err);
  if (rc) fail_msg("admin statement failed: %s", err.message);
  adcp_sql_close(c);
}

static int setup(void **state) {
  const backend *b = *state;
  fixture *f = calloc(1, sizeof *f);
  f->dialect = b->dialect;
  if (b->dialect == ADCP_SQL_SQLITE) {
    f->dir = tu_mkdtemp();
    snprintf(f->url, sizeof f->url, "sqlite:%s/ledger.db", f->dir);
  } else {
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20) ^ (uint64_t)(uintptr_t)f;
    snprintf(f->dbname, sizeof f->dbname, "t_%016llx", (unsigned long long)tu_rand(&seed));
    char sql[128];
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", f->dbname);
    pg_admin(sql);
    pg_url_for(f->url, sizeof f->url, f->dbname);
  }
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  if (f->dir) {
    tu_rmtree(f->dir);
    free(f->dir);
  }
  if (f->dbname[0]) {
    char sql[128];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", f->dbname);
    pg_admin(sql);
  }
  free(f);
  return 0;
}

static inline adcp_storage *open_migrated(const fixture *f) {
  adcp_error err = {0};
  adcp_storage *s;
  adcp_storage_options o = {.version = 1, .skip_schema_check = 1};
  OK(adcp_storage_open(&s, f->url, &o, &err));
  OK(adcp_storage_migrate(NULL, s, NULL, &err));
  return s;
}

static inline adcp_ledger *ledger_on(adcp_sql_conn *c, int cache) {
  adcp_error err = {0};
  adcp_ledger *l;
  adcp_ledger_options o = {.version = 1, .manifest_cache_entries = cache};
  OK(adcp_ledger_open(&l, c, &o, &err));
  return l;
}

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

static inline void gen_line(gen *g, uint64_t i) {
  adcp_buf_reset(&g->line);
  size_t pad = (g->big >= 0 && (uint64_t)g->big == i) ? g->big_bytes : g->pad;
  adcp_buf_printf(&g->line, "{\"i\":%llu,\"p\":\"pkg_%04llu\",\"s\":\"", (unsigned long long)i,
                  (unsigned long long)((i + g->salt) % 10000));
  adcp_buf_reserve(&g->line, pad + 4);
  memset(g->line.data + g->line.len, 'a' + (int)((i + g->salt) % 26), pad);
  g->line.len += pad;
  adcp_buf_append_str(&g->line, "\"}");
}

static inline int gen_next(void *ctx, const char **row, size_t *len, adcp_error *err) {
  (void)err;
  gen *g = ctx;
  if (g->next >= g->n) return 0;
  gen_line(g, g->next++);
  *row = (const char *)g->line.data, *len = g->line.len;
  return 1;
}

static inline void gen_init(gen *g, uint64_t n, size_t pad, uint64_t salt) {
  memset(g, 0, sizeof *g);
  g->n = n, g->pad = pad, g->big = -1, g->salt = salt;
  adcp_buf_init(&g->line);
}

static inline int commit_gen(adcp_commit_result *res, adcp_ledger *l, const char *account, const char *obligation,
                      const char *revision, adcp_finality fin, gen *g, adcp_error *err) {
  if (g) g->next = 0;
  adcp_ledger_commit req = {.version = 1,
                            .account_id = account,
                            .obligation_id = obligation,
                            .revision_id = revision,
                            .finality = fin,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = g ? gen_next : NULL,
                            .row_ctx = g};
  return adcp_ledger_commit_revision(res, l, &req, err);
}

/* Monotonic seconds, for tests that bound how long something waits. */
static inline double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define BOTH(fn) {"sqlite/" #fn, fn, setup, teardown, &SQLITE}, {"postgres/" #fn, fn, setup, teardown, &POSTGRES}

#endif
