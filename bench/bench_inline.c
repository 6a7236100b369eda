/* bench/bench_inline.c — the inline staging store (spec 06) against the
 * database's raw insert of the same bytes, in one run on one database:
 *   stage      adcp_inline_stage of N distinct payloads (one transaction
 *              each: lock, catalog re-audit, insert, read-back, commit)
 *   read       adcp_inline_read of each, p50/p99 latency
 *   raw_insert INSERT of the same payloads into a bare (id, payload) table,
 *              one transaction each, no checks
 * for 4 KiB and 1 MiB payloads. Prints one JSON object per measure.
 * usage: bench_inline URL [N_4K] [N_1M] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adcp/inline.h"
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
  fprintf(stderr, "bench_inline: %s: %s\n", what, err->message);
  exit(1);
}

static void fill(uint8_t *p, size_t n, uint64_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    p[i] = (uint8_t)x;
  }
}

static void run_size(adcp_storage *s, adcp_inline_store *st, size_t size, int n, const char *engine) {
  adcp_error err = {0};
  adcp_sql_conn *c = adcp_storage_sql(s);
  int pg = adcp_storage_dialect(s) == ADCP_SQL_POSTGRES;
  uint8_t *p = malloc(size);
  adcp_inline_staged *refs = calloc((size_t)n, sizeof *refs);
  double *lat = calloc((size_t)n, sizeof *lat);
  uint64_t salt = (uint64_t)time(NULL) << 20;
  /* raw insert first, so both see the same warm-up state of the server */
  if (adcp_sql_exec_script(
          c,
          pg ? "CREATE TABLE IF NOT EXISTS bench_raw_inline (id BIGINT PRIMARY KEY, payload BYTEA NOT NULL)"
             : "CREATE TABLE IF NOT EXISTS bench_raw_inline (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)",
          &err))
    die("raw table", &err);
  adcp_sql_exec_script(c, "DELETE FROM bench_raw_inline", &err);
  double t0 = now();
  for (int i = 0; i < n; i++) {
    fill(p, size, salt + (uint64_t)i);
    adcp_sql_param q[2] = {adcp_sql_int64(i), adcp_sql_blob(p, size)};
    if (adcp_sql_begin(c, 1, &err) ||
        adcp_sql_exec(c, "INSERT INTO bench_raw_inline (id, payload) VALUES ($1, $2)", q, 2, &err) ||
        adcp_sql_commit(c, &err))
      die("raw insert", &err);
  }
  double raw = now() - t0;
  /* hashing the payload is part of staging: generate outside the timer for both */
  t0 = now();
  double gen = 0;
  for (int i = 0; i < n; i++) {
    double g0 = now();
    fill(p, size, salt + (uint64_t)i + 7777777);
    gen += now() - g0;
    if (adcp_inline_stage(&refs[i], st, "bench-account", "bench-exec-key", i % 100000, p, size, &err))
      die("stage", &err);
  }
  double stage = now() - t0 - gen;
  raw -= gen; /* same generator cost in the raw loop */
  adcp_buf out;
  adcp_buf_init(&out);
  for (int i = 0; i < n; i++) {
    double r0 = now();
    if (adcp_inline_read(&out, st, refs[i].object_ref, refs[i].generation, "bench-account", &err)) die("read", &err);
    lat[i] = now() - r0;
  }
  qsort(lat, (size_t)n, sizeof *lat, cmp_d);
  double mb = (double)size * n / 1e6;
  printf(
      "{\"engine\":\"%s\",\"payload_bytes\":%zu,\"objects\":%d,\"measure\":\"stage\",\"mb_per_s\":%.1f,"
      "\"objects_per_s\":%.0f}\n",
      engine, size, n, mb / stage, n / stage);
  printf(
      "{\"engine\":\"%s\",\"payload_bytes\":%zu,\"objects\":%d,\"measure\":\"raw_insert\",\"mb_per_s\":%.1f,"
      "\"objects_per_s\":%.0f}\n",
      engine, size, n, mb / raw, n / raw);
  printf("{\"engine\":\"%s\",\"payload_bytes\":%zu,\"objects\":%d,\"measure\":\"read\",\"p50_ms\":%.3f,\"p99_ms\":%.3f}\n",
         engine, size, n, lat[n / 2] * 1e3, lat[(size_t)((n - 1) * 0.99)] * 1e3);
  printf("{\"engine\":\"%s\",\"payload_bytes\":%zu,\"measure\":\"stage_vs_raw\",\"ratio\":%.2f}\n", engine, size,
         raw / stage);
  fflush(stdout);
  adcp_sql_exec_script(c, "DROP TABLE bench_raw_inline", &err);
  adcp_buf_free(&out);
  free(p), free(refs), free(lat);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_inline URL [N_4K] [N_1M]\n");
    return 1;
  }
  int n4 = argc > 2 ? atoi(argv[2]) : 2000, n1 = argc > 3 ? atoi(argv[3]) : 200;
  adcp_error err = {0};
  adcp_storage *s;
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  if (adcp_storage_open(&s, argv[1], &o, &err)) die("open", &err);
  if (adcp_storage_migrate(NULL, s, NULL, &err)) die("migrate", &err);
  adcp_inline_store *st;
  if (adcp_storage_inline_open(&st, s, NULL, &err)) die("inline open", &err);
  const char *engine = adcp_storage_dialect(s) == ADCP_SQL_POSTGRES ? "postgres" : "sqlite";
  run_size(s, st, 4096, n4, engine);
  run_size(s, st, 1048576, n1, engine);
  adcp_inline_close(st);
  adcp_storage_close(s);
  return 0;
}
