/* bench/bench_issues.c — the issue-event outbox (spec 07 §8): events claimed
 * and completed per second over 100,000 pending events with 1 and 4
 * concurrent workers (own connection each; claim 100, complete the batch in
 * one transaction), and the time of one claim at 1,000 vs 100,000 pending
 * events (claims must stay O(limit)). The 1-worker run is the reference
 * the 4-worker figure is compared with, in the same run.
 *
 * usage: bench_issues SQLITE_PATH [PG_ADMIN_URL]   (PG_ADMIN_URL defaults to
 * $ADCP_BENCH_PG_URL; a scratch database is created beside it and dropped).
 * ADCP_BENCH_ISSUE_EVENTS overrides 100,000. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adcp/issues.h"
#include "adcp/storage.h"

static void die(const char *what, const adcp_error *err) {
  fprintf(stderr, "bench_issues: %s: %s\n", what, err->message);
  exit(1);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* n pending events, one occurrence each (the common case: every occurrence's
 * head is claimable), inserted in bulk; the bench measures claims, not
 * writers. IDs follow the shape, not the derivation, of real ones. */
static void seed(adcp_sql_conn *c, int64_t n) {
  adcp_error err = {0};
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  adcp_sql_param p = adcp_sql_int64(n);
  if (adcp_sql_exec_script(c, "DELETE FROM reporting_issue_events", &err)) die("clear", &err);
  int rc = adcp_sql_exec(
      c,
      pg ? "INSERT INTO reporting_issue_events (event_id, account_id, issue_id, issue_key, generation, kind, "
           "issue_state, occurred_at) SELECT 'rpie_b' || g, 'acct-' || (g % 50), 'rpti_b' || g, 'bench:' || g, 1, "
           "'opened', 'open', clock_timestamp() FROM generate_series(1, $1) g"
         : "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < $1) "
           "INSERT INTO reporting_issue_events (event_id, seq, account_id, issue_id, issue_key, generation, kind, "
           "issue_state, occurred_at, recorded_at, available_at) SELECT 'rpie_b' || i, i, 'acct-' || (i % 50), "
           "'rpti_b' || i, 'bench:' || i, 1, 'opened', 'open', adcp_now(), adcp_now(), adcp_now() FROM g",
      &p, 1, &err);
  if (rc) die("seed", &err);
  if (adcp_sql_exec_script(c, pg ? "ANALYZE reporting_issue_events" : "ANALYZE", &err)) die("analyze", &err);
}

typedef struct worker {
  const char *url;
  int64_t done;
  int rc;
  adcp_error err;
} worker;

static void *drain(void *arg) {
  worker *w = arg;
  adcp_sql_conn *c;
  if ((w->rc = adcp_sql_connect(&c, w->url, &w->err))) return NULL;
  adcp_issues *s;
  adcp_issues_open(&s, c, &w->err);
  for (;;) {
    adcp_issue_event *v;
    size_t n;
    if ((w->rc = adcp_issues_claim_events(&v, &n, s, 100, 60000, &w->err))) {
      if (w->rc == ADCP_ECONFLICT) { /* SQLite busy: another worker holds the writer lock */
        w->rc = 0;
        continue;
      }
      break;
    }
    if (!n) {
      free(v);
      break;
    }
    adcp_issue_event_lease l[100];
    for (size_t i = 0; i < n; i++) l[i] = (adcp_issue_event_lease){v[i].event_id, v[i].lease_token};
    int64_t k = 0;
    w->rc = adcp_issues_complete_events(NULL, &k, s, l, n, &w->err);
    free(v);
    if (w->rc) break;
    w->done += k;
  }
  adcp_issues_close(s);
  adcp_sql_close(c);
  return NULL;
}

static double throughput(adcp_sql_conn *c, const char *url, int workers, int64_t n, int64_t *done) {
  seed(c, n);
  worker w[8];
  pthread_t t[8];
  double t0 = now();
  for (int i = 0; i < workers; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].url = url;
    pthread_create(&t[i], NULL, drain, &w[i]);
  }
  *done = 0;
  for (int i = 0; i < workers; i++) {
    pthread_join(t[i], NULL);
    if (w[i].rc) die("drain", &w[i].err);
    *done += w[i].done;
  }
  double el = now() - t0;
  if (*done != n) {
    fprintf(stderr, "bench_issues: drained %" PRId64 " of %" PRId64 "\n", *done, n);
    exit(1);
  }
  return (double)*done / el;
}

/* Mean time of one claim (limit 10) with `pending` events waiting; each
 * batch is completed outside the timed part, so the head moves on. */
static double claim_ms(adcp_sql_conn *c, adcp_issues *s, int64_t pending) {
  seed(c, pending);
  adcp_error err = {0};
  enum { CLAIMS = 50 };
  double total = 0;
  for (int i = 0; i < CLAIMS; i++) {
    adcp_issue_event *v;
    size_t n;
    double t0 = now();
    if (adcp_issues_claim_events(&v, &n, s, 10, 60000, &err)) die("claim", &err);
    total += now() - t0;
    adcp_issue_event_lease l[10];
    for (size_t k = 0; k < n; k++) l[k] = (adcp_issue_event_lease){v[k].event_id, v[k].lease_token};
    if (adcp_issues_complete_events(NULL, NULL, s, l, n, &err)) die("complete", &err);
    free(v);
  }
  return total / CLAIMS * 1000.0;
}

static void run(const char *url, const char *engine, int64_t n, int max_workers) {
  adcp_error err = {0};
  adcp_storage *st;
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  if (adcp_storage_open(&st, url, &o, &err)) die("open", &err);
  if (adcp_storage_migrate(NULL, st, NULL, &err)) die("migrate", &err);
  adcp_sql_conn *c = adcp_storage_sql(st);
  adcp_issues *s;
  if (adcp_issues_open(&s, c, &err)) die("store", &err);
  int64_t done;
  double one = throughput(c, url, 1, n, &done);
  printf("{\"engine\":\"%s\",\"measure\":\"claim_complete_1_worker\",\"events\":%" PRId64
         ",\"events_per_s\":%.0f,\"claim_limit\":100}\n",
         engine, done, one);
  fflush(stdout);
  if (max_workers >= 4) {
    double four = throughput(c, url, 4, n, &done);
    printf("{\"engine\":\"%s\",\"measure\":\"claim_complete_4_workers\",\"events\":%" PRId64
           ",\"events_per_s\":%.0f,\"claim_limit\":100,\"ratio_to_1_worker\":%.2f}\n",
           engine, done, four, four / one);
    fflush(stdout);
  }
  double small = claim_ms(c, s, 1000), big = claim_ms(c, s, n);
  printf("{\"engine\":\"%s\",\"measure\":\"claim_latency\",\"ms_at_1000\":%.3f,\"ms_at_%" PRId64
         "\":%.3f,\"pending_big\":%" PRId64 ",\"ratio\":%.2f,\"claim_limit\":10}\n",
         engine, small, n, big, n, big / small);
  fflush(stdout);
  adcp_issues_close(s);
  adcp_storage_close(st);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_issues SQLITE_PATH [PG_ADMIN_URL]\n");
    return 1;
  }
  const char *e = getenv("ADCP_BENCH_ISSUE_EVENTS");
  int64_t n = e && *e ? strtoll(e, NULL, 10) : 100000;
  char url[4200];
  snprintf(url, sizeof url, "sqlite:%s", argv[1]);
  run(url, "sqlite", n, 1);
  const char *pg = argc > 2 && *argv[2] ? argv[2] : getenv("ADCP_BENCH_PG_URL");
  if (pg && *pg) {
    adcp_error err = {0};
    adcp_sql_conn *admin;
    if (adcp_sql_connect(&admin, pg, &err)) die("pg admin", &err);
    if (adcp_sql_exec_script(admin, "DROP DATABASE IF EXISTS adcp_bench_issues WITH (FORCE)", &err) ||
        adcp_sql_exec_script(admin, "CREATE DATABASE adcp_bench_issues", &err))
      die("pg create", &err);
    const char *slash = strrchr(pg, '/');
    const char *q = strchr(pg, '?');
    snprintf(url, sizeof url, "%.*s/adcp_bench_issues%s", (int)(slash - pg), pg, q ? q : "");
    run(url, "postgres", n, 4);
    if (adcp_sql_exec_script(admin, "DROP DATABASE IF EXISTS adcp_bench_issues WITH (FORCE)", &err))
      die("pg drop", &err);
    adcp_sql_close(admin);
  }
  return 0;
}
