/* bench/bench_principals.c — the principal and subscription-state stores
 * (issue 17) in one run on one database:
 *   raw_update_1      plain UPDATE … SET version = version + 1 (no CAS), 1 writer: the reference
 *   cas_update_1      adcp_principal_upsert with expected_version, 1 writer (blocks
 *                     alternating with the reference)
 *   cas_update_8      8 writers (own connections), each on its own principal
 *   cas_contended_8   8 writers on ONE principal: read, CAS, retry on CONFLICT
 *   journal_append_1 / _8 / _8_same   grant journal appends
 *   list_page_1k / list_page_1m       list_principals(limit 100) at random cursors
 *                                     with 1,000 and 1,000,000 principals
 * Prints one JSON object per measure.
 * usage: bench_principals URL [N_CAS] [N_JOURNAL] [BIG]   (PostgreSQL: a scratch
 * database is created beside the one in URL and dropped afterwards) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adcp/principals.h"
#include "adcp/storage.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void die(const char *what, const adcp_error *err) {
  fprintf(stderr, "bench_principals: %s: %s\n", what, err->message);
  exit(1);
}

static const char *engine;
static char url[1024];

static adcp_storage *open_s(void) {
  adcp_error err = {0};
  adcp_storage *s;
  adcp_storage_options o = ADCP_STORAGE_OPTIONS_INIT;
  if (adcp_storage_open(&s, url, &o, &err)) die("open", &err);
  return s;
}

static void create(adcp_principal_store *ps, const char *id) {
  adcp_error err = {0};
  adcp_principal_put in = {.version = ADCP_PRINCIPAL_PUT_VERSION,
                           .principal_id = id,
                           .account_scope = "acct_bench",
                           .attributes_json = "{\"tier\":\"gold\"}"};
  if (adcp_principal_upsert(NULL, ps, &in, &err)) die("create", &err);
}

/* ---- workers ---------------------------------------------------------------- */

enum { W_CAS, W_CAS_CONTENDED, W_JOURNAL, W_JOURNAL_SAME };

typedef struct worker {
  int kind, idx, n;
  pthread_barrier_t *start;
  long conflicts;
} worker;

static void *work(void *p) {
  worker *w = p;
  adcp_error err = {0};
  adcp_storage *s = open_s();
  adcp_principal_store *ps;
  adcp_subscription_store *st;
  if (adcp_storage_principals(&ps, s, &err) || adcp_storage_subscriptions(&st, s, &err)) die("stores", &err);
  char id[64];
  snprintf(id, sizeof id, w->kind == W_CAS_CONTENDED || w->kind == W_JOURNAL_SAME ? "shared" : "w%d", w->idx);
  adcp_principal cur;
  if (adcp_principal_get(&cur, ps, id, &err)) die("get", &err);
  int64_t v = cur.version;
  adcp_principal_clear(&cur);
  pthread_barrier_wait(w->start);
  for (int i = 0; i < w->n; i++) {
    if (w->kind == W_JOURNAL || w->kind == W_JOURNAL_SAME) {
      if (adcp_subscription_append(NULL, st, id, i % 4 ? ADCP_GRANT : ADCP_REVOKE, "report_x", "acct_bench", &err))
        die("append", &err);
      continue;
    }
    for (;;) {
      adcp_principal_put in = {.version = ADCP_PRINCIPAL_PUT_VERSION,
                               .principal_id = id,
                               .account_scope = "acct_bench",
                               .attributes_json = "{\"tier\":\"gold\"}",
                               .expected_version = v};
      adcp_principal got;
      int rc = adcp_principal_upsert(&got, ps, &in, &err);
      if (!rc) {
        v = got.version;
        adcp_principal_clear(&got);
        break;
      }
      if (rc != ADCP_ECONFLICT) die("cas", &err);
      w->conflicts++;
      if (adcp_principal_get(&cur, ps, id, &err)) die("get", &err);
      v = cur.version;
      adcp_principal_clear(&cur);
    }
  }
  adcp_storage_close(s);
  return NULL;
}

static void run_workers(const char *measure, int kind, int threads, int per_thread, const char *unit, double ref_per_s) {
  pthread_t th[8];
  worker w[8];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
  for (int i = 0; i < threads; i++) {
    w[i] = (worker){.kind = kind, .idx = i, .n = per_thread, .start = &start};
    pthread_create(&th[i], NULL, work, &w[i]);
  }
  pthread_barrier_wait(&start);
  double t0 = now();
  long conflicts = 0;
  for (int i = 0; i < threads; i++) pthread_join(th[i], NULL), conflicts += w[i].conflicts;
  double dt = now() - t0;
  pthread_barrier_destroy(&start);
  double rate = threads * per_thread / dt;
  printf(
      "{\"engine\":\"%s\",\"measure\":\"%s\",\"writers\":%d,\"%s\":%d,\"seconds\":%.3f,\"%s_per_s\":%.0f,"
      "\"conflicts\":%ld",
      engine, measure, threads, unit, threads * per_thread, dt, unit, rate, conflicts);
  if (ref_per_s > 0) printf(",\"ratio_to_raw_update_1\":%.3f", rate / ref_per_s);
  printf("}\n");
  fflush(stdout);
}

/* ---- paging ----------------------------------------------------------------- */

static void bulk_to(adcp_storage *s, int64_t from, int64_t to) {
  adcp_error err = {0};
  int pg = adcp_storage_dialect(s) == ADCP_SQL_POSTGRES;
  adcp_sql_param p[] = {adcp_sql_int64(from), adcp_sql_int64(to)};
  if (adcp_sql_exec(adcp_storage_sql(s),
                    pg ? "INSERT INTO adcp_principals (principal_id, account_scope, version) "
                         "SELECT 'bulk_' || lpad(g::text, 7, '0'), 'acct_bulk', 1 FROM generate_series($1::bigint, $2::bigint) g"
                       : "WITH RECURSIVE g(i) AS (SELECT $1 UNION ALL SELECT i + 1 FROM g WHERE i < $2) "
                         "INSERT INTO adcp_principals (principal_id, account_scope, version) "
                         "SELECT printf('bulk_%07d', i), 'acct_bulk', 1 FROM g",
                    p, 2, &err))
    die("bulk insert", &err);
  if (adcp_sql_exec_script(adcp_storage_sql(s), pg ? "ANALYZE adcp_principals" : "ANALYZE", &err)) die("analyze", &err);
}

static double page_p50(adcp_principal_store *ps, int64_t size, int pages, const char *measure, double ref_ms) {
  adcp_error err = {0};
  double *lat = calloc((size_t)pages, sizeof *lat);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < pages; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    char id[32], cursor[80];
    snprintf(id, sizeof id, "bulk_%07lld", (long long)(1 + (int64_t)(x % (uint64_t)(size - 100))));
    /* The store's cursor form (p1. + hex of the last ID seen), from a random place. */
    snprintf(cursor, sizeof cursor, "p1.");
    for (size_t k = 0; id[k]; k++) snprintf(cursor + 3 + 2 * k, 3, "%02x", (unsigned char)id[k]);
    adcp_principal_page pg;
    double t0 = now();
    if (adcp_principal_list(&pg, ps, 100, i % 10 == 0 ? NULL : cursor, &err)) die("list", &err);
    lat[i] = (now() - t0) * 1e3;
    if (pg.count != 100) {
      adcp_error_set(&err, ADCP_EINTERNAL, "short page (%zu)", pg.count);
      die("list", &err);
    }
    adcp_principal_page_free(&pg);
  }
  qsort(lat, (size_t)pages, sizeof *lat, cmp_d);
  double p50 = lat[pages / 2], p99 = lat[pages * 99 / 100];
  printf(
      "{\"engine\":\"%s\",\"measure\":\"%s\",\"principals\":%lld,\"page\":100,\"pages\":%d,\"p50_ms\":%.3f,"
      "\"p99_ms\":%.3f",
      engine, measure, (long long)size, pages, p50, p99);
  if (ref_ms > 0) printf(",\"p50_ratio_to_1k\":%.2f", p50 / ref_ms);
  printf("}\n");
  fflush(stdout);
  free(lat);
  return p50;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_principals URL [N_CAS] [N_JOURNAL] [BIG]\n");
    return 2;
  }
  int n_cas = argc > 2 ? atoi(argv[2]) : 2000, n_j = argc > 3 ? atoi(argv[3]) : 1000;
  int64_t big = argc > 4 ? atoll(argv[4]) : 1000000;
  adcp_error err = {0};
  char scratch[64] = "";
  snprintf(url, sizeof url, "%s", argv[1]);
  int pg = adcp_sql_url_dialect(url) == ADCP_SQL_POSTGRES;
  engine = pg ? "postgres" : "sqlite";
  const char *slash = strrchr(argv[1], '/');
  if (pg && slash && !strchr(slash, '?')) {
    /* A scratch database beside the given one, dropped at the end. */
    snprintf(scratch, sizeof scratch, "bench_principals_%d", (int)getpid());
    adcp_sql_conn *admin;
    char sql[128];
    if (adcp_sql_connect(&admin, argv[1], &err)) die("admin connect", &err);
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", scratch);
    if (adcp_sql_exec_script(admin, sql, &err)) die("create database", &err);
    adcp_sql_close(admin);
    snprintf(url, sizeof url, "%.*s/%s", (int)(slash - argv[1]), argv[1], scratch);
  }
  {
    adcp_storage *s;
    adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
    if (adcp_storage_open(&s, url, &o, &err) || adcp_storage_migrate(NULL, s, NULL, &err)) die("migrate", &err);
    adcp_storage_close(s);
  }
  adcp_storage *s = open_s();
  adcp_principal_store *ps;
  if (adcp_storage_principals(&ps, s, &err)) die("store", &err);
  create(ps, "shared");
  create(ps, "raw");
  for (int i = 0; i < 8; i++) {
    char id[16];
    snprintf(id, sizeof id, "w%d", i);
    create(ps, id);
  }
  /* Reference: the bare UPDATE of one row, one writer, autocommit. It and the
   * one-writer CAS run in alternating blocks on the same connection, so load
   * from elsewhere on the machine hits both alike. */
  adcp_sql_param rp[] = {adcp_sql_text("raw")};
  double t_raw = 0, t_cas = 0;
  int64_t v = 1;
  for (int b = 0; b < 4; b++) {
    double t0 = now();
    for (int i = 0; i < n_cas / 4; i++)
      if (adcp_sql_exec(adcp_storage_sql(s), "UPDATE adcp_principals SET version = version + 1 WHERE principal_id = $1",
                        rp, 1, &err))
        die("raw update", &err);
    t_raw += now() - t0;
    t0 = now();
    for (int i = 0; i < n_cas / 4; i++) {
      adcp_principal_put in = {.version = ADCP_PRINCIPAL_PUT_VERSION,
                               .principal_id = "w7",
                               .account_scope = "acct_bench",
                               .attributes_json = "{\"tier\":\"gold\"}",
                               .expected_version = v};
      adcp_principal got;
      if (adcp_principal_upsert(&got, ps, &in, &err)) die("cas", &err);
      v = got.version;
      adcp_principal_clear(&got);
    }
    t_cas += now() - t0;
  }
  int done = n_cas / 4 * 4;
  double raw = done / t_raw;
  printf("{\"engine\":\"%s\",\"measure\":\"raw_update_1\",\"writers\":1,\"updates\":%d,\"updates_per_s\":%.0f}\n",
         engine, done, raw);
  printf(
      "{\"engine\":\"%s\",\"measure\":\"cas_update_1\",\"writers\":1,\"updates\":%d,\"seconds\":%.3f,"
      "\"updates_per_s\":%.0f,\"conflicts\":0,\"ratio_to_raw_update_1\":%.3f}\n",
      engine, done, t_cas, done / t_cas, (done / t_cas) / raw);
  fflush(stdout);
  run_workers("cas_update_8", W_CAS, 8, n_cas / 8 * 2, "updates", raw);
  run_workers("cas_contended_8", W_CAS_CONTENDED, 8, n_cas / 32, "updates", raw);
  run_workers("journal_append_1", W_JOURNAL, 1, n_j, "appends", raw);
  run_workers("journal_append_8", W_JOURNAL, 8, n_j / 8 * 2, "appends", raw);
  run_workers("journal_append_8_same", W_JOURNAL_SAME, 8, n_j / 16, "appends", raw);

  bulk_to(s, 1, 1000);
  double p1k = page_p50(ps, 1000, 300, "list_page_1k", 0);
  bulk_to(s, 1001, big);
  page_p50(ps, big, 300, big == 1000000 ? "list_page_1m" : "list_page_big", p1k);
  adcp_storage_close(s);
  if (scratch[0]) {
    adcp_sql_conn *admin;
    char sql[128];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", scratch);
    if (adcp_sql_connect(&admin, argv[1], &err) || adcp_sql_exec_script(admin, sql, &err)) die("drop", &err);
    adcp_sql_close(admin);
  }
  return 0;
}
