/* bench/bench_feed.c — change-feed read throughput and page latency over
 * 1,000,000 change rows, and what the feed adds to a 1,000-row commit (p50
 * with and without the feed, interleaved in the same run), on SQLite and
 * PostgreSQL. Not a test: run through `make bench` (bench/run_feed.sh).
 *
 * usage: bench_feed SQLITE_PATH [PG_ADMIN_URL]   (PG_ADMIN_URL defaults to
 * $ADCP_BENCH_PG_URL; a scratch database is created beside it and dropped;
 * ADCP_BENCH_FEED_ROWS overrides the 1,000,000 change rows)
 * Prints one JSON object per measurement. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adcp/feed.h"
#include "adcp/ledger.h"
#include "adcp/storage.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const adcp_error *err) {
  fprintf(stderr, "bench_feed: %s: %s: %s\n", what, adcp_error_code_name(err->code), err->message);
  exit(1);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p) {
  qsort(v, n, sizeof *v, cmp_d);
  size_t i = (size_t)(p * (double)(n - 1) + 0.5);
  return v[i];
}

/* Half the rows belong to one hot account (its feed is the account-feed
 * measure), the rest spread over 999 accounts; one transaction per 100k
 * rows, so the deployment feed sees several xids. */
static void seed(adcp_sql_conn *c, int64_t rows) {
  adcp_error err = {0};
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  for (int64_t from = 1; from <= rows; from += 100000) {
    int64_t to = from + 99999 < rows ? from + 99999 : rows;
    adcp_sql_param p[2] = {adcp_sql_int64(from), adcp_sql_int64(to)};
    if (adcp_sql_begin(c, 1, &err)) die("begin", &err);
    int rc = adcp_sql_exec(
        c,
        pg ? "INSERT INTO adcp_reporting_changes (account_id, record_kind, record_id, obligation_id) SELECT CASE WHEN "
             "g % 2 = 0 THEN 'hot' ELSE 'acct_' || (g % 999) END, 'revision', 'rev_' || g, 'obl_' || (g / 3) FROM "
             "generate_series($1::bigint, $2::bigint) g"
           : "WITH RECURSIVE s(g) AS (SELECT $1 UNION ALL SELECT g + 1 FROM s WHERE g < $2) INSERT INTO "
             "adcp_reporting_changes (account_id, record_kind, record_id, obligation_id, recorded_at) SELECT CASE "
             "WHEN g % 2 = 0 THEN 'hot' ELSE 'acct_' || (g % 999) END, 'revision', 'rev_' || g, 'obl_' || (g / 3), "
             "adcp_now() FROM s",
        p, 2, &err);
    if (rc) die("seed", &err);
    if (adcp_sql_commit(c, &err)) die("commit", &err);
  }
  if (adcp_sql_exec_script(c, pg ? "ANALYZE adcp_reporting_changes" : "ANALYZE", &err)) die("analyze", &err);
}

/* Reads a whole feed from its start in pages of `limit`; returns changes/s. */
static double read_all(adcp_sql_conn *c, const char *account, size_t limit, uint64_t *total) {
  adcp_error err = {0};
  char *cursor = NULL;
  *total = 0;
  double t = now();
  for (;;) {
    adcp_change_page p;
    adcp_changes_query q = {.version = ADCP_CHANGES_QUERY_VERSION, .cursor = cursor, .account_id = account, .limit = limit};
    if (adcp_feed_changes_after(&p, c, &q, &err)) die("changes_after", &err);
    free(cursor);
    cursor = p.cursor;
    p.cursor = NULL;
    size_t n = p.count;
    *total += n;
    adcp_change_page_free(&p);
    if (!n) break;
  }
  t = now() - t;
  free(cursor);
  return (double)*total / t;
}

/* 500-change pages at random positions of a feed: p50/p99 in ms. */
static void page_latency(adcp_sql_conn *c, const char *engine, const char *account, int64_t max_seq, uint64_t xid) {
  adcp_error err = {0};
  enum { N = 300 };
  double ms[N];
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < N; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    adcp_feed_position pos = {.seq = (int64_t)(s % (uint64_t)(max_seq > 1000 ? max_seq - 1000 : 1)), .xid = xid};
    if (account) snprintf(pos.account_id, sizeof pos.account_id, "%s", account);
    adcp_buf b;
    adcp_buf_init(&b);
    if (adcp_feed_cursor_encode(&b, &pos) || adcp_buf_cstr(&b)) exit(1);
    adcp_change_page p;
    adcp_changes_query q = {
        .version = ADCP_CHANGES_QUERY_VERSION, .cursor = (const char *)b.data, .account_id = account, .limit = 500};
    double t = now();
    if (adcp_feed_changes_after(&p, c, &q, &err)) die("page", &err);
    ms[i] = (now() - t) * 1000;
    if (p.count != 500) {
      fprintf(stderr, "bench_feed: page returned %zu changes\n", p.count);
      exit(1);
    }
    adcp_change_page_free(&p);
    adcp_buf_free(&b);
  }
  double p50 = pct(ms, N, 0.5), p99 = pct(ms, N, 0.99);
  printf("{\"engine\":\"%s\",\"measure\":\"page_500_%s\",\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"pages\":%d}\n", engine,
         account ? "account" : "deployment", p50, p99, N);
}

typedef struct gen {
  int n, next;
  char line[160];
  int salt;
} gen;

static int gen_row(void *ctx, const char **row, size_t *len, adcp_error *err) {
  (void)err;
  gen *g = ctx;
  if (g->next >= g->n) return 0;
  int i = g->next++;
  int k = snprintf(g->line, sizeof g->line,
                   "{\"date\":\"2026-10-%02d\",\"impressions\":%d,\"package_id\":\"pkg_%04d\",\"spend\":\"%d.%02d\"}",
                   i % 28 + 1, i * 7 + g->salt, i % 1000, i + g->salt, i % 100);
  *row = g->line, *len = (size_t)k;
  return 1;
}

/* p50 of 1,000-row commits with and without the feed, interleaved so both
 * see the same database state. new_obligations = 1: every commit creates its
 * obligation (two change rows); 0: a new revision of one of 10 existing
 * obligations (one change row, the steady state). */
static void commit_cost(adcp_sql_conn *c, const char *engine, int new_obligations) {
  adcp_error err = {0};
  adcp_ledger *l;
  adcp_ledger_options lo = ADCP_LEDGER_OPTIONS_INIT;
  if (adcp_ledger_open(&l, c, &lo, &err)) die("ledger", &err);
  enum { N = 100, WARM = 10 };
  double on[N], off[N];
  for (int i = 0; i < 2 * N + WARM; i++) {
    int feed = i % 2 == 0;
    if (adcp_ledger_set_change_feed(l, feed, NULL, 0, &err)) die("feed switch", &err);
    char obl[64], rev[64];
    if (new_obligations) snprintf(obl, sizeof obl, "obl_new_%d", i);
    else snprintf(obl, sizeof obl, "obl_steady_%d", i % 10);
    snprintf(rev, sizeof rev, "rev_%s_%d", new_obligations ? "new" : "steady", i);
    gen g = {.n = 1000, .salt = i};
    adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                              .account_id = "acct_commit",
                              .obligation_id = obl,
                              .revision_id = rev,
                              .finality = ADCP_FINALITY_SNAPSHOT,
                              .period_start = "2026-10-01T00:00:00Z",
                              .period_end = "2026-10-02T00:00:00Z",
                              .next_row = gen_row,
                              .row_ctx = &g};
    adcp_commit_result r;
    double t = now();
    if (adcp_ledger_commit_revision(&r, l, &req, &err)) die("commit", &err);
    t = (now() - t) * 1000;
    adcp_commit_result_free(&r);
    if (i < WARM) continue; /* warm-up (and, steady: creates the 10 obligations) */
    if (feed) on[(i - WARM) / 2] = t;
    else off[(i - WARM) / 2] = t;
  }
  double p_on = pct(on, N, 0.5), p_off = pct(off, N, 0.5);
  printf(
      "{\"engine\":\"%s\",\"measure\":\"commit_1000_rows_p50_%s\",\"with_feed_ms\":%.3f,\"without_feed_ms\":%.3f,"
      "\"added_pct\":%.2f,\"commits_each\":%d}\n",
      engine, new_obligations ? "new_obligation" : "existing_obligation", p_on, p_off, (p_on / p_off - 1) * 100, N);
  adcp_ledger_close(l);
}

static void run(const char *url, const char *engine, int64_t rows) {
  adcp_error err = {0};
  adcp_storage *s;
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  if (adcp_storage_open(&s, url, &o, &err)) die("open", &err);
  if (adcp_storage_migrate(NULL, s, NULL, &err)) die("migrate", &err);
  adcp_sql_conn *c = adcp_storage_sql(s);
  double t = now();
  seed(c, rows);
  fprintf(stderr, "bench_feed: %s seeded %" PRId64 " change rows in %.1f s\n", engine, rows, now() - t);
  uint64_t total;
  double dep = read_all(c, NULL, ADCP_FEED_MAX_LIMIT, &total);
  printf("{\"engine\":\"%s\",\"measure\":\"read_deployment_feed\",\"changes\":%" PRIu64
         ",\"changes_per_s\":%.0f,\"page\":%d}\n",
         engine, total, dep, ADCP_FEED_MAX_LIMIT);
  double dep500 = read_all(c, NULL, 500, &total);
  printf("{\"engine\":\"%s\",\"measure\":\"read_deployment_feed_500\",\"changes\":%" PRIu64
         ",\"changes_per_s\":%.0f,\"page\":500}\n",
         engine, total, dep500);
  double acc = read_all(c, "hot", ADCP_FEED_MAX_LIMIT, &total);
  printf("{\"engine\":\"%s\",\"measure\":\"read_account_feed\",\"changes\":%" PRIu64
         ",\"changes_per_s\":%.0f,\"page\":%d}\n",
         engine, total, acc, ADCP_FEED_MAX_LIMIT);
  /* Random 500-change pages: the deployment feed within the first batch's xid. */
  uint64_t xid0 = 0;
  {
    adcp_change_page p;
    adcp_changes_query q = {.version = ADCP_CHANGES_QUERY_VERSION, .limit = 1};
    if (adcp_feed_changes_after(&p, c, &q, &err)) die("first", &err);
    xid0 = p.count ? p.items[0].xid : 0;
    adcp_change_page_free(&p);
  }
  page_latency(c, engine, NULL, rows < 100000 ? rows : 100000, xid0);
  page_latency(c, engine, "hot", rows, 0);
  commit_cost(c, engine, 0);
  commit_cost(c, engine, 1);
  adcp_storage_close(s);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_feed SQLITE_PATH [PG_ADMIN_URL]\n");
    return 1;
  }
  const char *r = getenv("ADCP_BENCH_FEED_ROWS");
  int64_t rows = r && *r ? strtoll(r, NULL, 10) : 1000000;
  char url[4200];
  snprintf(url, sizeof url, "sqlite:%s", argv[1]);
  run(url, "sqlite", rows);
  const char *pg = argc > 2 && *argv[2] ? argv[2] : getenv("ADCP_BENCH_PG_URL");
  if (pg && *pg) {
    adcp_error err = {0};
    adcp_sql_conn *admin;
    if (adcp_sql_connect(&admin, pg, &err)) die("pg admin", &err);
    if (adcp_sql_exec_script(admin, "DROP DATABASE IF EXISTS adcp_bench_feed WITH (FORCE)", &err) ||
        adcp_sql_exec_script(admin, "CREATE DATABASE adcp_bench_feed", &err))
      die("pg create", &err);
    const char *slash = strrchr(pg, '/');
    const char *q = strchr(pg, '?');
    snprintf(url, sizeof url, "%.*s/adcp_bench_feed%s", (int)(slash - pg), pg, q ? q : "");
    run(url, "postgres", rows);
    if (adcp_sql_exec_script(admin, "DROP DATABASE IF EXISTS adcp_bench_feed WITH (FORCE)", &err)) die("pg drop", &err);
    adcp_sql_close(admin);
  }
  return 0;
}
