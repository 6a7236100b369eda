/* bench/bench_statements.c — bench room: statements and round trips per
 * commit kind (issue 32), read from the SQL port's per-connection counters
 * (adcp_sql_counters_get) around each commit. Kinds: new obligation, new rows
 * of an existing obligation, header-only repeat (same rows again), replay
 * (same revision ID again), each for the postgres kind and a filesystem
 * object binding, plus one verified 500-row page read of each kind, with the
 * client's CPU time and (PostgreSQL on this host) the backend's from /proc.
 * Every figure is the mean over REPEATS commits after one warm-up round (so
 * first-use prepares are not counted). Not a test.
 *
 * usage: bench_statements DB_URL OBJECT_ROOT [ROWS [REPEATS]]
 *   DB_URL       sqlite:PATH or a PostgreSQL URL (the schema is migrated)
 *   OBJECT_ROOT  absolute directory of the filesystem binding
 * Prints one JSON object per kind, then a Markdown table. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adcp/ledger.h"
#include "adcp/objects.h"
#include "adcp/sql.h"
#include "adcp/storage.h"
#include "bench_cpu.h"

static void die(const char *what, const adcp_error *err) {
  fprintf(stderr, "bench_statements: %s: %s: %s\n", what, adcp_error_code_name(err->code), err->message);
  exit(1);
}

typedef struct rows_src {
  long k, n, seed;
  char buf[512];
} rows_src;

static int next_row(void *ctx, const char **row, size_t *len, adcp_error *err) {
  (void)err;
  rows_src *r = ctx;
  if (r->k >= r->n) return 0;
  int m = snprintf(r->buf, sizeof r->buf,
                   "{\"date\":\"2026-10-01\",\"package_id\":\"pkg_%ld\",\"creative_id\":\"cr_%ld\",\"impressions\":%ld,"
                   "\"clicks\":%ld,\"spend\":{\"amount\":%ld.25,\"currency\":\"USD\"},\"placement\":\"homepage_top\"}",
                   r->k % 37, (r->k * 7 + r->seed) % 101, 1000 + r->k * 13 + r->seed, r->k % 17, r->k + r->seed);
  *row = r->buf, *len = (size_t)m;
  r->k++;
  return 1;
}

enum { K_NEW_OBL, K_NEW_ROWS, K_REPEAT, K_REPLAY, K_PAGE, NKINDS };
static const char *const KIND[NKINDS] = {"new obligation", "new rows", "header-only repeat", "replay", "page read"};

typedef struct tally {
  adcp_sql_counters sum;
  double cpu_s, server_s;
  long n;
} tally;

/* CPU seconds of the PostgreSQL backend serving this connection (loopback
 * server on this host: /proc/PID/stat utime + stime, in clock ticks, so only
 * means over many commits are meaningful); 0 when unknown. */
static long backend_pid;
static double server_cpu(void) {
  double user, sys, reaped, reaped_sys;
  if (backend_pid <= 0 || bench_proc_cpu(&user, &sys, &reaped, &reaped_sys, backend_pid)) return 0;
  return user + sys;
}

static void add(tally *t, const adcp_sql_counters *a, const adcp_sql_counters *b, double cpu, double server) {
  t->server_s += server;
  t->sum.statements += b->statements - a->statements;
  t->sum.round_trips += b->round_trips - a->round_trips;
  t->sum.prepares += b->prepares - a->prepares;
  t->cpu_s += cpu;
  t->n++;
}

/* One commit; counted into t when t is not NULL. */
static void commit(adcp_ledger *l, const char *bid, const char *acct, const char *ob, const char *rev, long seed,
                   long nrows, tally *t, int expect_shared) {
  rows_src r = {0, nrows, seed, {0}};
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = acct,
                            .obligation_id = ob,
                            .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01",
                            .period_end = "2026-10-02",
                            .binding_id = bid,
                            .next_row = next_row,
                            .row_ctx = &r};
  adcp_commit_result res;
  adcp_error err = {0};
  adcp_sql_counters a, b;
  adcp_sql_counters_get(&a, adcp_ledger_conn(l));
  double c0 = bench_cpu_now(), s0 = server_cpu();
  if (adcp_ledger_commit_revision(&res, l, &req, &err)) die("commit", &err);
  double c1 = bench_cpu_now(), s1 = server_cpu();
  adcp_sql_counters_get(&b, adcp_ledger_conn(l));
  if (expect_shared >= 0 && res.shared != expect_shared) {
    fprintf(stderr, "bench_statements: %s: shared=%d, expected %d\n", rev, res.shared, expect_shared);
    exit(1);
  }
  adcp_commit_result_free(&res);
  if (t) add(t, &a, &b, c1 - c0, s1 - s0);
}

static void page(adcp_ledger *l, const char *acct, const char *rev, tally *t) {
  adcp_ledger_page pg;
  adcp_ledger_page_init(&pg);
  adcp_error err = {0};
  adcp_sql_counters a, b;
  adcp_sql_counters_get(&a, adcp_ledger_conn(l));
  double c0 = bench_cpu_now(), s0 = server_cpu();
  if (adcp_ledger_read_revision_rows(&pg, l, acct, rev, 100, 500, &err)) die("page", &err);
  double c1 = bench_cpu_now(), s1 = server_cpu();
  adcp_sql_counters_get(&b, adcp_ledger_conn(l));
  if (pg.count != 500) die("short page", &err);
  adcp_ledger_page_free(&pg);
  if (t) add(t, &a, &b, c1 - c0, s1 - s0);
}

/* One round of every kind on obligation ob (created here) of binding bid. */
static void round_of(adcp_ledger *l, const char *bid, const char *tag, int i, long nrows, tally *t) {
  char acct[32], ob[64], r0[96], r1[96], r2[96];
  snprintf(acct, sizeof acct, "acct_st_%s", tag);
  snprintf(ob, sizeof ob, "ob_st_%s_%ld_%d", tag, (long)time(NULL), i);
  snprintf(r0, sizeof r0, "%s_r0", ob);
  snprintf(r1, sizeof r1, "%s_r1", ob);
  snprintf(r2, sizeof r2, "%s_r2", ob);
  commit(l, bid, acct, ob, r0, 1, nrows, t ? &t[K_NEW_OBL] : NULL, 0);
  commit(l, bid, acct, ob, r1, 2, nrows, t ? &t[K_NEW_ROWS] : NULL, 0);
  commit(l, bid, acct, ob, r2, 2, nrows, t ? &t[K_REPEAT] : NULL, 1);
  commit(l, bid, acct, ob, r2, 2, nrows, t ? &t[K_REPLAY] : NULL, -1);
  page(l, acct, r1, t ? &t[K_PAGE] : NULL);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_statements DB_URL OBJECT_ROOT [ROWS [REPEATS]]\n");
    return 2;
  }
  long nrows = argc > 3 ? atol(argv[3]) : 1000;
  int repeats = argc > 4 ? atoi(argv[4]) : 5;
  if (nrows < 600 || repeats < 1) return fprintf(stderr, "bench_statements: ROWS >= 600, REPEATS >= 1\n"), 2;
  adcp_error err = {0};
  adcp_storage *s;
  adcp_storage_options so = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  if (adcp_storage_open(&s, argv[1], &so, &err)) die("storage", &err);
  if (adcp_storage_migrate(NULL, s, NULL, &err)) die("migrate", &err);
  adcp_ledger *l;
  if (adcp_ledger_open(&l, adcp_storage_sql(s), NULL, &err)) die("ledger", &err);
  adcp_object_provider *p;
  adcp_fs_provider_options po = {.root_name = "bench", .prefix = "st", .create_root = 1};
  if (adcp_fs_provider_new(&p, argv[2], &po, &err)) die("fs provider", &err);
  adcp_object_kv loc[1] = {{"root", "bench"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "fs_st",
                                   .provider = "filesystem",
                                   .location = loc,
                                   .n_location = 1,
                                   .prefix = "st",
                                   .compression = ADCP_OBJECT_COMPRESSION_NONE,
                                   .client = p};
  if (adcp_ledger_configure_binding(l, &bc, &err) || adcp_ledger_register_binding(l, "fs_st", &err))
    die("binding", &err);
  const char *engine = adcp_sql_dialect_of(adcp_ledger_conn(l)) == ADCP_SQL_POSTGRES ? "postgresql" : "sqlite";
  if (engine[0] == 'p') {
    char pid[24];
    int found = 0;
    if (adcp_sql_query_text(pid, sizeof pid, &found, adcp_ledger_conn(l), "SELECT pg_backend_pid()::text", NULL, 0, &err))
      die("backend pid", &err);
    backend_pid = found ? atol(pid) : 0;
  }
  const char *bids[2] = {ADCP_LEDGER_POSTGRES_BINDING, "fs_st"};
  tally t[2][NKINDS];
  memset(t, 0, sizeof t);
  for (int b = 0; b < 2; b++) {
    round_of(l, bids[b], b ? "obj" : "pg", 0, nrows, NULL); /* warm-up: first-use prepares */
    for (int i = 1; i <= repeats; i++) round_of(l, bids[b], b ? "obj" : "pg", i, nrows, t[b]);
  }
  for (int b = 0; b < 2; b++)
    for (int k = 0; k < NKINDS; k++) {
      const tally *x = &t[b][k];
      double n = x->n ? (double)x->n : 1;
      printf(
          "{\"measure\":\"statements\",\"engine\":\"%s\",\"binding\":\"%s\",\"kind\":\"%s\",\"rows\":%ld,"
          "\"statements\":%.1f,\"round_trips\":%.1f,\"prepares\":%.1f,\"client_cpu_ms\":%.3f,\"server_cpu_ms\":%.3f}\n",
          engine, b ? "object" : "postgres", KIND[k], nrows, (double)x->sum.statements / n,
          (double)x->sum.round_trips / n, (double)x->sum.prepares / n, x->cpu_s * 1e3 / n, x->server_s * 1e3 / n);
    }
  printf("\n| %s, %ld rows | postgres kind: statements / round trips | object kind: statements / round trips |\n",
         engine, nrows);
  printf("| --- | --- | --- |\n");
  for (int k = 0; k < NKINDS; k++) {
    double n0 = t[0][k].n ? (double)t[0][k].n : 1, n1 = t[1][k].n ? (double)t[1][k].n : 1;
    printf("| %s | %.0f / %.0f | %.0f / %.0f |\n", KIND[k], (double)t[0][k].sum.statements / n0,
           (double)t[0][k].sum.round_trips / n0, (double)t[1][k].sum.statements / n1,
           (double)t[1][k].sum.round_trips / n1);
  }
  adcp_ledger_close(l);
  adcp_storage_close(s);
  adcp_object_provider_free(p);
  return 0;
}
