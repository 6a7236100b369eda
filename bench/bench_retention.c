/* bench/bench_retention.c — period retirement throughput (periods/s and freed
 * MB/s) over expired periods of 1,000 rows, postgres kind and a filesystem
 * binding, on SQLite and PostgreSQL, against the commit MB/s of the same data
 * in the same run; and the p99 of a concurrent 100-row page read of a live
 * revision, idle vs while retirement runs. Not a test: `make bench`
 * (bench/run_retention.sh).
 *
 * usage: bench_retention SCRATCH_DIR [PG_ADMIN_URL]  (PG defaults to
 * $ADCP_BENCH_PG_URL; a scratch database is created and dropped)
 * ADCP_BENCH_RET_PERIODS: periods per engine and kind (default 1000; the
 * issue's figure is 10000). Prints one JSON object per measurement. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adcp/ledger.h"
#include "adcp/retention.h"
#include "adcp/storage.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const adcp_error *err) {
  fprintf(stderr, "bench_retention: %s: %s: %s\n", what, adcp_error_code_name(err->code), err->message);
  exit(1);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p) {
  if (!n) return 0;
  qsort(v, n, sizeof *v, cmp_d);
  return v[(size_t)(p * (double)(n - 1) + 0.5)];
}

typedef struct gen {
  uint64_t n, next, salt;
  char line[256];
} gen;

static int gen_row(void *ctx, const char **row, size_t *len, adcp_error *err) {
  (void)err;
  gen *g = ctx;
  if (g->next >= g->n) return 0;
  int k =
      snprintf(g->line, sizeof g->line,
               "{\"clicks\":%" PRIu64 ",\"impressions\":%" PRIu64 ",\"package_id\":\"pkg_%06" PRIu64
               "\",\"spend\":%" PRIu64 ".25}",
               (g->next * 7 + g->salt) % 1000, g->next * 31 + g->salt, (g->next + g->salt) % 100000, g->next + g->salt);
  g->next++;
  *row = g->line, *len = (size_t)k;
  return 1;
}

static adcp_object_provider *fs_provider(const char *root) {
  adcp_error err = {0};
  adcp_object_provider *p;
  adcp_fs_provider_options po = {"bench", "rows", 1, 0, NULL, NULL};
  if (adcp_fs_provider_new(&p, root, &po, &err)) die("fs provider", &err);
  return p;
}

static adcp_ledger *open_ledger(adcp_sql_conn *c, adcp_object_provider *p) {
  adcp_error err = {0};
  adcp_ledger *l;
  adcp_ledger_options o = ADCP_LEDGER_OPTIONS_INIT;
  if (adcp_ledger_open(&l, c, &o, &err)) die("ledger", &err);
  adcp_object_kv loc[1] = {{"root", "bench"}};
  adcp_ledger_binding_config bc = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "fs",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "rows",
      .compression = ADCP_OBJECT_COMPRESSION_NONE,
      .client = p,
  };
  if (adcp_ledger_configure_binding(l, &bc, &err)) die("binding", &err);
  return l;
}

typedef struct reader {
  const char *url;
  adcp_object_provider *p;
  atomic_int stop;
  double *lat, *own; /* own: wall minus the time spent waiting for a CPU */
  size_t n, cap;
} reader;

/* Nanoseconds this thread has waited on a run queue (Linux schedstat; 0
 * when unavailable): on a shared machine that wait is other people's load,
 * not something retirement makes the reader wait for. */
static double runq_wait_ms(void) {
  FILE *f = fopen("/proc/thread-self/schedstat", "r");
  if (!f) return 0;
  unsigned long long run = 0, wait = 0;
  int k = fscanf(f, "%llu %llu", &run, &wait);
  fclose(f);
  return k == 2 ? (double)wait / 1e6 : 0;
}

static void *read_loop(void *v) {
  reader *r = v;
  adcp_error err = {0};
  adcp_sql_conn *c;
  if (adcp_sql_connect(&c, r->url, &err)) die("reader connect", &err);
  adcp_ledger *l = open_ledger(c, r->p);
  adcp_ledger_page pg;
  adcp_ledger_page_init(&pg);
  uint64_t off = 0;
  while (!atomic_load(&r->stop) && r->n < r->cap) {
    double w = runq_wait_ms(), t = now();
    if (adcp_ledger_read_revision_rows(&pg, l, "live", "live_rev", off, 100, &err)) die("page read", &err);
    double ms = (now() - t) * 1000, own = ms - (runq_wait_ms() - w);
    r->own[r->n] = own < 0 ? 0 : own;
    r->lat[r->n++] = ms;
    off = (off + 100) % 900;
    struct timespec ts = {0, 2 * 1000000L};
    nanosleep(&ts, NULL);
  }
  adcp_ledger_page_free(&pg);
  adcp_ledger_close(l);
  adcp_sql_close(c);
  return NULL;
}

static double page_p99(reader *r, double seconds, double *own_p99) {
  r->n = 0;
  atomic_store(&r->stop, 0);
  pthread_t t;
  pthread_create(&t, NULL, read_loop, r);
  struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  nanosleep(&ts, NULL);
  atomic_store(&r->stop, 1);
  pthread_join(t, NULL);
  *own_p99 = pct(r->own, r->n, 0.99);
  return pct(r->lat, r->n, 0.99);
}

static void backdate_all(adcp_sql_conn *c, int pg) {
  adcp_error err = {0};
  const char *s =
      pg ? "BEGIN; SET LOCAL session_replication_role = replica; "
           "UPDATE adcp_reporting_obligations SET period_start = '2020-12-31T00:00:00Z', period_end = "
           "'2021-01-01T00:00:00Z', created_at = '2021-01-01T00:00:00Z' WHERE account_id = 'acct'; "
           "UPDATE adcp_reporting_revisions SET recorded_at = '2021-01-01T00:00:00Z' WHERE account_id = 'acct'; "
           "COMMIT;"
         : "DROP TRIGGER IF EXISTS adcp_reporting_revisions_immutable; BEGIN; "
           "UPDATE adcp_reporting_obligations SET period_start = '2020-12-31T00:00:00.000000Z', period_end = "
           "'2021-01-01T00:00:00.000000Z', created_at = '2021-01-01T00:00:00.000000Z' WHERE account_id = 'acct'; "
           "UPDATE adcp_reporting_revisions SET recorded_at = '2021-01-01T00:00:00.000000Z' WHERE account_id = "
           "'acct'; COMMIT;";
  if (adcp_sql_exec_script(c, s, &err)) die("backdate", &err);
}

static void run(const char *url, const char *engine, const char *dir, int object_kind, int periods) {
  adcp_error err = {0};
  adcp_storage *s;
  adcp_storage_options so = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  if (adcp_storage_open(&s, url, &so, &err)) die("open", &err);
  if (adcp_storage_migrate(NULL, s, NULL, &err)) die("migrate", &err);
  adcp_sql_conn *c = adcp_storage_sql(s);
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  char root[1024];
  snprintf(root, sizeof root, "%s/bucket-%s-%d", dir, engine, object_kind);
  adcp_object_provider *p = fs_provider(root);
  adcp_ledger *l = open_ledger(c, p);
  const char *binding = object_kind ? "fs" : NULL;
  gen g = {1000, 0, 1, ""};
  /* The live revision the concurrent reader pages through. */
  adcp_ledger_commit lr = {.version = ADCP_LEDGER_COMMIT_VERSION,
                           .account_id = "live",
                           .obligation_id = "live_obl",
                           .revision_id = "live_rev",
                           .finality = ADCP_FINALITY_SNAPSHOT,
                           .period_start = "2026-10-01T00:00:00Z",
                           .period_end = "2026-10-02T00:00:00Z",
                           .next_row = gen_row,
                           .row_ctx = &g,
                           .binding_id = binding};
  adcp_commit_result res;
  if (adcp_ledger_commit_revision(&res, l, &lr, &err)) die("commit live", &err);
  adcp_commit_result_free(&res);
  uint64_t canon = 0;
  double t0 = now();
  for (int i = 0; i < periods; i++) {
    char obl[32], rev[32];
    snprintf(obl, sizeof obl, "obl_%06d", i), snprintf(rev, sizeof rev, "rev_%06d", i);
    gen gi = {1000, 0, (uint64_t)i * 1000 + 7, ""};
    adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                              .account_id = "acct",
                              .obligation_id = obl,
                              .revision_id = rev,
                              .finality = ADCP_FINALITY_SNAPSHOT,
                              .period_start = "2026-10-01T00:00:00Z",
                              .period_end = "2026-10-02T00:00:00Z",
                              .configuration_id = "cfg",
                              .period_ordinal = i,
                              .next_row = gen_row,
                              .row_ctx = &gi,
                              .binding_id = binding};
    if (adcp_ledger_commit_revision(&res, l, &req, &err)) die("commit", &err);
    canon += res.header.canonical_byte_count;
    adcp_commit_result_free(&res);
  }
  double commit_s = now() - t0;
  backdate_all(c, pg);
  reader r = {.url = url, .p = p, .cap = 200000};
  r.lat = calloc(r.cap, sizeof *r.lat);
  r.own = calloc(r.cap, sizeof *r.own);
  double idle_own = 0, idle = page_p99(&r, 2.0, &idle_own);
  /* Retirement, with the reader running. */
  r.n = 0;
  atomic_store(&r.stop, 0);
  pthread_t t;
  pthread_create(&t, NULL, read_loop, &r);
  adcp_retention_policy pol = {.version = ADCP_RETENTION_POLICY_VERSION, .status_retention_days = 1};
  adcp_retention_options o = {.version = ADCP_RETENTION_OPTIONS_VERSION, .policy = &pol, .limit = 100};
  uint64_t retired = 0, freed = 0;
  double t1 = now();
  for (;;) {
    adcp_retention_counters cn;
    if (adcp_retention_retire(&cn, l, &o, &err)) die("retire", &err);
    if (cn.failed) {
      fprintf(stderr, "bench_retention: %" PRIu64 " failed: %s\n", cn.failed, cn.failures[0].message);
      exit(1);
    }
    retired += cn.done, freed += cn.bytes_freed;
    if (!cn.done && !cn.pending) break;
  }
  double retire_s = now() - t1;
  atomic_store(&r.stop, 1);
  pthread_join(t, NULL);
  double during = pct(r.lat, r.n, 0.99), during_own = pct(r.own, r.n, 0.99);
  size_t nd = r.n;
  double commit_mb = (double)canon / commit_s / 1e6, freed_mb = (double)freed / retire_s / 1e6;
  printf(
      "{\"engine\":\"%s\",\"kind\":\"%s\",\"periods\":%d,\"rows_per_period\":1000,\"commit_s\":%.2f,"
      "\"commit_mb_per_s\":%.1f,\"retired\":%" PRIu64
      ",\"retire_s\":%.2f,\"retire_periods_per_s\":%.1f,"
      "\"freed_mb\":%.1f,\"freed_mb_per_s\":%.1f,\"ratio_freed_to_commit\":%.3f,\"page_p99_idle_ms\":%.3f,"
      "\"page_p99_during_ms\":%.3f,\"p99_ratio\":%.2f,\"reads_during\":%zu,\"page_p99_idle_no_runq_ms\":%.3f,"
      "\"page_p99_during_no_runq_ms\":%.3f,\"p99_ratio_no_runq\":%.2f}\n",
      engine, object_kind ? "filesystem" : "postgres", periods, commit_s, commit_mb, retired, retire_s,
      (double)retired / retire_s, (double)freed / 1e6, freed_mb, freed_mb / commit_mb, idle, during,
      idle > 0 ? during / idle : 0, nd, idle_own, during_own, idle_own > 0 ? during_own / idle_own : 0);
  fflush(stdout);
  free(r.lat);
  free(r.own);
  adcp_ledger_close(l);
  adcp_object_provider_free(p);
  adcp_storage_close(s);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_retention SCRATCH_DIR [PG_ADMIN_URL]\n");
    return 2;
  }
  /* The filesystem binding takes only an absolute root: resolve the scratch
   * folder the caller named (it must exist). */
  char dir[PATH_MAX];
  if (!realpath(argv[1], dir)) {
    fprintf(stderr, "bench_retention: scratch folder %s: %s\n", argv[1], strerror(errno));
    return 2;
  }
  const char *pgurl = argc > 2 && argv[2][0] ? argv[2] : getenv("ADCP_BENCH_PG_URL");
  int periods = getenv("ADCP_BENCH_RET_PERIODS") ? atoi(getenv("ADCP_BENCH_RET_PERIODS")) : 1000;
  if (periods < 1) periods = 1000;
  for (int kind = 0; kind < 2; kind++) {
    char url[PATH_MAX + 64];
    snprintf(url, sizeof url, "sqlite:%s/bench-retention-%d.db", dir, kind);
    run(url, "sqlite", dir, kind, periods);
  }
  if (pgurl && *pgurl) {
    adcp_error err = {0};
    adcp_sql_conn *admin;
    if (adcp_sql_connect(&admin, pgurl, &err)) die("pg admin", &err);
    const char *slash = strrchr(pgurl, '/');
    for (int kind = 0; kind < 2; kind++) {
      if (adcp_sql_exec_script(admin, "DROP DATABASE IF EXISTS adcp_bench_retention WITH (FORCE)", &err) ||
          adcp_sql_exec_script(admin, "CREATE DATABASE adcp_bench_retention", &err))
        die("pg create", &err);
      char url[1200];
      snprintf(url, sizeof url, "%.*s/adcp_bench_retention", (int)(slash ? slash - pgurl : 0), pgurl);
      run(url, "postgres", dir, kind, periods);
    }
    if (adcp_sql_exec_script(admin, "DROP DATABASE IF EXISTS adcp_bench_retention WITH (FORCE)", &err))
      die("pg drop", &err);
    adcp_sql_close(admin);
  }
  return 0;
}
