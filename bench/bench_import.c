/* bench/bench_import.c — legacy import throughput (docs/adopting.md):
 * builds a py-inline legacy table of N rows (tests/import/legacy_build.h: the
 * spec's layout, non-canonical row text) in the given database, then in the
 * same run measures (a) plain commit of the same rows through
 * adcp_ledger_commit_revision (the reference) and (b) adcp_import_run of the
 * legacy table into the same ledger (under other revision IDs), and prints
 * rows/s, MB/s and the ratio. Target: import >= 50% of commit.
 * usage: bench_import URL [ROWS] [ROWS_PER_REVISION]
 * URL: sqlite:PATH (fresh file) or a PostgreSQL URL (an empty database). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/import/legacy_build.h"
#include "adcp/ledger.h"
#include "adcp/storage.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const adcp_error *e) {
  fprintf(stderr, "bench_import: %s: %s\n", what, e->message);
  exit(1);
}

typedef struct src {
  const lb_spec *s;
  uint64_t i, j;
  adcp_buf row;
} src;

static int next_row(void *ctx, const char **row, size_t *len, adcp_error *err) {
  (void)err;
  src *x = ctx;
  if (x->j == x->s->rows_per_revision) return 0;
  lb_row(&x->row, x->s, x->i, x->j++);
  *row = (const char *)x->row.data, *len = x->row.len;
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_import URL [ROWS] [ROWS_PER_REVISION]\n");
    return 1;
  }
  const char *url = argv[1];
  uint64_t rows = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
  uint64_t per = argc > 3 ? strtoull(argv[3], NULL, 10) : 1000;
  if (!rows || !per) return 1;
  adcp_error err = {0};
  adcp_storage *st;
  adcp_storage_options so = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  if (adcp_storage_open(&st, url, &so, &err)) die("open", &err);
  size_t applied;
  if (adcp_storage_migrate(&applied, st, NULL, &err)) die("migrate", &err);
  const char *engine = adcp_storage_dialect(st) == ADCP_SQL_POSTGRES ? "postgres" : "sqlite";
  lb_spec s = {.source = ADCP_IMPORT_PY_INLINE,
               .revisions = (rows + per - 1) / per,
               .rows_per_revision = per,
               .revisions_per_obligation = 10,
               .accounts = 4,
               .pad = 40};
  double t = now_s();
  if (lb_build(adcp_storage_sql(st), &s, &err)) die("build the legacy table", &err);
  fprintf(stderr, "bench_import: %s legacy table of %llu rows built in %.1f s\n", engine,
          (unsigned long long)(s.revisions * per), now_s() - t);
  adcp_ledger *l;
  if (adcp_storage_ledger(&l, st, &err)) die("ledger", &err);
  adcp_control_totals totals = {0};
  if (adcp_totals_parse(&totals, lb_totals, strlen(lb_totals), &err)) die("totals", &err);

  /* (a) Reference: plain commit of the same rows (same text, same totals). */
  src x = {.s = &s};
  adcp_buf_init(&x.row);
  uint64_t commit_bytes = 0;
  t = now_s();
  for (uint64_t i = 0; i < s.revisions; i++) {
    char rev[64], obl[64], acct[32], ps[40], pe[40];
    lb_ids(&s, i, rev, obl, acct);
    rev[0] = 'c', obl[0] = 'c'; /* other IDs than the import's */
    uint64_t o = i / s.revisions_per_obligation;
    snprintf(ps, sizeof ps, "2027-%02d-%02dT00:00:00Z", (int)(1 + (o / 28) % 12), (int)(1 + o % 28));
    snprintf(pe, sizeof pe, "2027-%02d-%02dT23:59:59Z", (int)(1 + (o / 28) % 12), (int)(1 + o % 28));
    x.i = i, x.j = 0;
    adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                              .account_id = acct,
                              .obligation_id = obl,
                              .revision_id = rev,
                              .finality = ADCP_FINALITY_SNAPSHOT,
                              .period_start = ps,
                              .period_end = pe,
                              .configuration_id = obl,
                              .totals = &totals,
                              .next_row = next_row,
                              .row_ctx = &x,
                              .binding_id = ADCP_LEDGER_POSTGRES_BINDING};
    adcp_commit_result res;
    if (adcp_ledger_commit_revision(&res, l, &req, &err)) die("commit", &err);
    commit_bytes += res.header.canonical_byte_count;
    adcp_commit_result_free(&res);
  }
  double commit_s = now_s() - t;
  adcp_buf_free(&x.row);
  adcp_totals_free(&totals);

  /* (b) The import of the legacy table, from a second connection. */
  adcp_sql_conn *srcc;
  if (adcp_storage_connect(&srcc, st, &err)) die("connect", &err);
  adcp_import_options o = {
      .version = ADCP_IMPORT_OPTIONS_VERSION, .source = ADCP_IMPORT_PY_INLINE, .batch = 100, .source_ref = "bench"};
  adcp_import_report r;
  t = now_s();
  if (adcp_import_run(&r, l, srcc, &o, &err)) die("import", &err);
  double import_s = now_s() - t;
  adcp_sql_close(srcc);
  if (r.migrated != s.revisions || r.quarantined) {
    fprintf(stderr, "bench_import: imported %llu of %llu revisions\n", (unsigned long long)r.migrated,
            (unsigned long long)s.revisions);
    return 1;
  }
  uint64_t n = s.revisions * per;
  double crps = (double)n / commit_s, cmbs = (double)commit_bytes / commit_s / 1e6;
  double irps = (double)r.rows / import_s, imbs = (double)r.bytes / import_s / 1e6;
  printf(
      "{\"engine\":\"%s\",\"measure\":\"commit_reference\",\"rows\":%llu,\"revisions\":%llu,\"seconds\":%.3f,"
      "\"rows_per_s\":%.0f,\"mb_per_s\":%.2f}\n",
      engine, (unsigned long long)n, (unsigned long long)s.revisions, commit_s, crps, cmbs);
  printf(
      "{\"engine\":\"%s\",\"measure\":\"import_py_inline\",\"rows\":%llu,\"revisions\":%llu,\"seconds\":%.3f,"
      "\"rows_per_s\":%.0f,\"mb_per_s\":%.2f,\"ratio_to_commit\":%.3f}\n",
      engine, (unsigned long long)r.rows, (unsigned long long)r.migrated, import_s, irps, imbs, irps / crps);
  fflush(stdout);
  adcp_storage_close(st);
  return 0;
}
