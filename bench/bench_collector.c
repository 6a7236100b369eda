/* bench/bench_collector.c — the orphan collector over one filesystem binding
 * holding N objects (default 1,000,000; ADCP_BENCH_COLLECTOR_N), 1% of them
 * orphans, on SQLite: objects listed and checked per second by a dry-run
 * pass, the database cost per listed object (that pass minus a bare listing
 * of the same objects, measured in the same run as the reference), the
 * deleting pass, and the peak RSS (the pass holds one page at a time).
 * Objects are tiny files written directly (aged with futimens); chunk rows of
 * the 99% referenced objects are inserted in bulk. One JSON line on stdout.
 * usage: bench_collector SCRATCH_DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "adcp/collector.h"
#include "adcp/ledger.h"
#include "adcp/objects.h"
#include "adcp/storage.h"
#include "ledger/collector_support.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds (user + system) of this process: robust on a shared machine. */
static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         (double)ru.ru_stime.tv_usec / 1e6;
}

static long rss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static void die(const char *what, const adcp_error *e) {
  fprintf(stderr, "bench_collector: %s: %s\n", what, e ? e->message : "");
  exit(1);
}

static int one_row(void *ctx, const char **r, size_t *len, adcp_error *err) {
  (void)err;
  int *done = ctx;
  if (*done) return 0;
  *done = 1;
  *r = "{\"i\":1}", *len = 7;
  return 1;
}

static double g_list_cpu;

static double bare_list(adcp_object_provider *p, const char *prefix, long *listed) {
  adcp_error err = {0};
  double t0 = now_s(), c0 = cpu_s();
  *listed = 0;
  char *tok = NULL;
  for (;;) {
    adcp_object_list_page pg;
    if (adcp_object_list(p, &pg, prefix, tok, 1000, NULL, &err)) die("list", &err);
    *listed += (long)pg.n_entries;
    free(tok);
    tok = pg.next_token ? strdup(pg.next_token) : NULL;
    adcp_object_list_page_free(&pg);
    if (!tok) break;
  }
  double c = cpu_s() - c0;
  if (g_list_cpu == 0 || c < g_list_cpu) g_list_cpu = c;
  return now_s() - t0;
}

static void hex_of(char out[65], uint64_t a, uint64_t b) {
  snprintf(out, 65, "%016llx%016llx%016llx%016llx", (unsigned long long)a, (unsigned long long)b,
           (unsigned long long)(a * 31 + 7), (unsigned long long)(b * 17 + 3));
}

int main(int argc, char **argv) {
  if (argc < 2) return fprintf(stderr, "usage: bench_collector SCRATCH_DIR\n"), 2;
  const char *dir = argv[1];
  long n = getenv("ADCP_BENCH_COLLECTOR_N") ? atol(getenv("ADCP_BENCH_COLLECTOR_N")) : 1000000;
  if (n < 1000) n = 1000;
  const long per_set = 1000;
  long sets = n / per_set;
  n = sets * per_set;
  adcp_error err = {0};
  char url[1200], root[1100];
  snprintf(url, sizeof url, "sqlite:%s/collector.db", dir);
  snprintf(root, sizeof root, "%s/bucket", dir);
  adcp_storage *s;
  adcp_storage_options so = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  if (adcp_storage_open(&s, url, &so, &err) || adcp_storage_migrate(NULL, s, NULL, &err)) die("open", &err);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_ledger *l;
  adcp_ledger_options lo = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 30000};
  if (adcp_ledger_open(&l, c, &lo, &err)) die("ledger", &err);
  adcp_object_provider *p;
  adcp_fs_provider_options po = {"bucket", "rows", 1, 0, NULL, NULL};
  if (adcp_fs_provider_new(&p, root, &po, &err)) die("provider", &err);
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config bc = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "fs1",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "rows",
      .compression = ADCP_OBJECT_COMPRESSION_NONE,
      .client = p,
  };
  if (adcp_ledger_configure_binding(l, &bc, &err) || adcp_ledger_register_binding(l, "fs1", &err)) die("binding", &err);
  char ns[65];
  if (adcp_ledger_collector_namespace_key(ns, l, &err)) die("namespace", &err);
  /* ADCP_BENCH_COLLECTOR_DRY_ONLY=1 on an existing scratch dir: just the dry pass (profiling). */
  if (getenv("ADCP_BENCH_COLLECTOR_DRY_ONLY")) {
    adcp_collector_options o = {.version = ADCP_COLLECTOR_OPTIONS_VERSION, .dry_run = 1, .page_cap = 100000};
    adcp_collector_report rep;
    double t = now_s();
    if (adcp_collector_collect_orphaned_row_objects(&rep, l, &o, &err)) die("dry run", &err);
    printf("{\"dry_listed\":%llu,\"dry_s\":%.2f}\n", (unsigned long long)rep.totals.listed, now_s() - t);
    adcp_collector_report_free(&rep);
    return 0;
  }
  /* One real commit: the obligation and a row set the bulk rows copy. */
  int given = 0;
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "ob",
                            .revision_id = "seed",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .binding_id = "fs1",
                            .next_row = one_row,
                            .row_ctx = &given};
  adcp_commit_result res;
  if (adcp_ledger_commit_revision(&res, l, &req, &err)) die("seed commit", &err);
  adcp_commit_result_free(&res);

  /* Objects and chunk rows. */
  double t0 = now_s();
  struct timespec old[2] = {{time(NULL) - 30 * 86400, 0}, {time(NULL) - 30 * 86400, 0}};
  char path[2600], key[1200], acct[65], rk[65], content[65], rs[32];
  hex_of(acct, 1, 2);
  if (adcp_sql_begin(c, 1, &err)) die("begin", &err);
  for (long si = 0; si < sets; si++) {
    hex_of(rk, 100 + (uint64_t)si, 5);
    hex_of(content, 200 + (uint64_t)si, 9);
    snprintf(rs, sizeof rs, "bulk-%ld", si);
    snprintf(path, sizeof path, "mkdir -p '%s/rows/%s/%s/undated/snapshot/%s/%s'", root, ns, acct, rk, content);
    if (system(path)) die("mkdir", NULL);
    adcp_sql_param rp[2] = {adcp_sql_text(rs), adcp_sql_text(content)};
    if (adcp_sql_exec(c,
                      "INSERT INTO adcp_reporting_row_sets (row_set_id, row_set_kind, account_id, obligation_id, "
                      "encoding, digest_profile, content_sha256, canonical_byte_count, row_count, row_manifest_sha256, "
                      "chunk_count, row_binding_id) SELECT $1, row_set_kind, account_id, obligation_id, encoding, "
                      "digest_profile, $2, canonical_byte_count, row_count, row_manifest_sha256, 1000, row_binding_id "
                      "FROM adcp_reporting_row_sets WHERE row_set_id = 'seed'",
                      rp, 2, &err))
      die("row set", &err);
    for (long ci = 0; ci < per_set; ci++) {
      snprintf(key, sizeof key, "rows/%s/%s/undated/snapshot/%s/%s/%06ld.jsonl", ns, acct, rk, content, ci);
      snprintf(path, sizeof path, "%s/%s", root, key);
      int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0 || write(fd, "{}\n", 3) != 3 || futimens(fd, old) || close(fd)) die("object file", NULL);
      if (ci % 100 == 7) continue; /* 1% orphans */
      adcp_sql_param cp[3] = {adcp_sql_text(rs), adcp_sql_int64(ci), adcp_sql_text(key)};
      if (adcp_sql_exec(c,
                        "INSERT INTO adcp_reporting_row_chunks (row_set_id, chunk_index, account_id, obligation_id, "
                        "first_ordinal, row_count, byte_count, sha256, segments, object_key, native_version, "
                        "compression, physical_sha256, physical_byte_count) VALUES ($1, $2, 'acct', 'ob', 0, 1, 3, "
                        "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '[]', $3, 'v', 'none', "
                        "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 3)",
                        cp, 3, &err))
        die("chunk row", &err);
    }
  }
  if (adcp_sql_commit(c, &err)) die("commit", &err);
  double setup_s = now_s() - t0;
  long rss_setup = rss_kb();

  /* Reference: a bare listing of the same prefix (best of one run before and one after the dry pass). */
  char prefix[200];
  snprintf(prefix, sizeof prefix, "rows/%s/", ns);
  long listed = 0;
  double list_s = bare_list(p, prefix, &listed);
  /* The dry-run pass: list + E2/E3/E4 per page. */
  adcp_collector_options o = {.version = ADCP_COLLECTOR_OPTIONS_VERSION, .dry_run = 1, .page_cap = (size_t)(n / 1000 + 10)};
  adcp_collector_report rep;
  t0 = now_s();
  double c0 = cpu_s();
  if (adcp_collector_collect_orphaned_row_objects(&rep, l, &o, &err)) die("dry run", &err);
  double dry_s = now_s() - t0, dry_cpu = cpu_s() - c0;
  adcp_collector_counters dry = rep.totals;
  if (rep.n_bindings && rep.bindings[0].failure[0]) fprintf(stderr, "dry run: %s\n", rep.bindings[0].failure);
  adcp_collector_report_free(&rep);
  long rss_dry = rss_kb();
  double list2_s = bare_list(p, prefix, &listed);
  if (list2_s < list_s) list_s = list2_s;

  /* The deleting pass. */
  o.dry_run = 0, o.acknowledge_exclusive_namespace = 1, o.limit = ADCP_COLLECTOR_LIMIT_MAX;
  t0 = now_s();
  if (adcp_collector_collect_orphaned_row_objects(&rep, l, &o, &err)) die("deleting run", &err);
  double del_s = now_s() - t0;
  adcp_collector_counters del = rep.totals;
  char status[24];
  snprintf(status, sizeof status, "%s", rep.n_bindings ? rep.bindings[0].status : "");
  adcp_collector_report_free(&rep);

  double checked_per_s = (double)dry.listed / dry_s, list_per_s = (double)listed / list_s;
  printf(
      "{\"engine\":\"sqlite\",\"objects\":%ld,\"orphans\":%ld,\"setup_s\":%.1f,\"list_only_per_s\":%.0f,"
      "\"dry_listed\":%llu,\"dry_candidates\":%llu,\"dry_referenced\":%llu,\"dry_s\":%.2f,"
      "\"listed_checked_per_s\":%.0f,\"ratio_to_list_only\":%.3f,\"db_us_per_listed\":%.2f,"
      "\"delete_pass_s\":%.2f,\"deleted\":%llu,\"delete_pass_listed_per_s\":%.0f,\"status\":\"%s\","
      "\"rss_kb_after_setup\":%ld,\"rss_kb_peak_after_dry\":%ld,\"rss_kb_peak\":%ld,"
      "\"dry_cpu_s\":%.2f,\"listed_checked_per_cpu_s\":%.0f,\"list_only_per_cpu_s\":%.0f,"
      "\"db_cpu_us_per_listed\":%.2f}\n",
      n, n / 100, setup_s, list_per_s, (unsigned long long)dry.listed, (unsigned long long)dry.candidates,
      (unsigned long long)dry.skipped_referenced, dry_s, checked_per_s, checked_per_s / list_per_s,
      (dry_s - list_s) * 1e6 / (double)(dry.listed ? dry.listed : 1), del_s, (unsigned long long)del.deleted,
      (double)del.listed / del_s, status, rss_setup, rss_dry, rss_kb(), dry_cpu, (double)dry.listed / dry_cpu,
      (double)listed / g_list_cpu, (dry_cpu - g_list_cpu) * 1e6 / (double)(dry.listed ? dry.listed : 1));
  adcp_ledger_close(l);
  adcp_object_provider_free(p);
  adcp_storage_close(s);
  return 0;
}
