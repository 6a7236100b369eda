/* bench/bench_day.c — a tenth of the shared persistence proposal's example day
 * (2,000 feeds x 96 pulses x 1,000 rows) against PostgreSQL: 200 obligations x
 * 96 pulses, about half of them repeating the previous pulse's rows
 * (header-only), committed by 4 writer processes, while one process follows
 * the deployment-wide change feed and one samples random verified 500-row
 * pages. Rows go to a filesystem object binding at or above 256 KiB of
 * canonical bytes and to the postgres kind below (the spec's typical routing,
 * chosen by the ledger's binding selector as a host configures it). Not a
 * test: run through bench/day.sh (or `make bench`), which starts a throwaway
 * PostgreSQL cluster with fsync on.
 *
 * usage: bench_day POOL.jsonl PG_URL OBJECT_ROOT
 *   POOL.jsonl   rows from shared/bench/gen-rows.py; each pulse is 1,000 of
 *                them picked by a per-(obligation, content version) stride,
 *                so every changed pulse has new content
 *   OBJECT_ROOT  absolute directory of the filesystem binding
 * Environment (all optional):
 *   ADCP_BENCH_DAY_SCALE        fraction of the 96 pulses to run (default 1)
 *   ADCP_BENCH_DAY_OBLIGATIONS  default 200;  ADCP_BENCH_DAY_WRITERS default 4
 *   ADCP_BENCH_DAY_ROWS         rows per pulse on average (default 1000)
 *   ADCP_BENCH_DAY_SPREAD       obligations' pulse sizes spread evenly over
 *                               ROWS +- SPREAD in 11 steps (default 500; 0 =
 *                               every pulse exactly ROWS rows)
 *   ADCP_BENCH_DAY_OBJECT_MIN_BYTES  selector threshold (default 262144)
 *   ADCP_BENCH_DAY_PAGE_HZ      page samples per second (default 20)
 *   ADCP_BENCH_DAY_ROUTE        "selector" (default): the ledger's binding
 *                               selector sees the encoded size (the rows are
 *                               spooled to a temporary file first); "rows": the
 *                               writer names the binding from the pulse's row
 *                               count times the pool's mean canonical row size,
 *                               as a host that knows its feeds' sizes can
 *   ADCP_BENCH_PG_PID           postmaster PID: adds the server's CPU time
 *   ADCP_BENCH_DAY_SETTLE       1 (default): VACUUM (ANALYZE) and CHECKPOINT
 *                               before the clock starts, so a reused cluster's
 *                               leftover maintenance (bench/run.sh runs the
 *                               day after other sections) is not timed; 0: off.
 *                               A database without revisions is not settled:
 *                               ANALYZE would record its tables as empty, and
 *                               the writers' foreign-key checks would keep plans
 *                               made for empty tables (a sequential scan of the
 *                               row sets per chunk insert) until autovacuum
 *                               analyzes them again, a minute or more into the run
 * Prints one JSON object per process, then the summary object. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adcp/feed.h"
#include "adcp/ledger.h"
#include "adcp/objects.h"
#include "adcp/storage.h"
#include "bench_cpu.h"

#define PULSES_PER_DAY 96
#define TENTH_OF_DAY_S 8640.0
#define ACCOUNTS 40 /* obligation o belongs to account o % 40; writer o % W owns it */

typedef struct cfg {
  const char *pool_path, *url, *root;
  char run[32], bid[64], prefix[64];
  int obligations, writers, pulses;
  long rows, spread;
  uint64_t object_min;
  double page_hz;
  int route_rows;   /* 1: choose the binding from the row count (no spool) */
  double row_bytes; /* mean canonical bytes of a pool row */
  /* pool */
  const char *data;
  size_t *off, *len, n;
} cfg;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const adcp_error *err) {
  fprintf(stderr, "bench_day: %s: %s: %s\n", what, adcp_error_code_name(err->code), err->message);
  exit(1);
}

static uint64_t mix(uint64_t x) { /* splitmix64 */
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, int p) {
  if (!n) return 0;
  qsort(v, n, sizeof *v, cmp_d);
  size_t i = n * (size_t)p / 100;
  return v[i < n ? i : n - 1];
}

static long rows_of(const cfg *c, int o) {
  if (!c->spread) return c->rows;
  long step = (long)(mix((uint64_t)o) % 11); /* 0..10 -> ROWS - SPREAD .. ROWS + SPREAD */
  return c->rows - c->spread + step * c->spread / 5;
}

/* 1 when pulse p of obligation o carries new rows (pulse 0 always; then every
 * other pulse, alternating between obligations so each pulse is half new). */
static int changed(int o, int p) { return p == 0 || ((o + p) & 1); }

static void names(const cfg *c, int o, char acct[32], char ob[64]) {
  snprintf(acct, 32, "acct_day_%02d", o % ACCOUNTS);
  snprintf(ob, 64, "ob_day_%s_%03d", c->run, o);
}

typedef struct pulse_rows {
  const cfg *c;
  uint64_t a, b;
  long k, n;
} pulse_rows;

static int next_row(void *ctx, const char **row, size_t *len, adcp_error *err) {
  (void)err;
  pulse_rows *r = ctx;
  if (r->k >= r->n) return 0;
  size_t i = (size_t)((r->a + (uint64_t)r->k * r->b) % r->c->n);
  *row = r->c->data + r->c->off[i], *len = r->c->len[i];
  r->k++;
  return 1;
}

static uint64_t gcd(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* The rows of content version v of obligation o: a stride through the pool
 * coprime with its size, so the n rows are distinct. */
static void pulse_init(pulse_rows *r, const cfg *c, int o, int v) {
  uint64_t h = mix(((uint64_t)o << 20) ^ (uint64_t)v ^ 0xD1B54A32D192ED03ull);
  r->c = c, r->k = 0, r->n = rows_of(c, o);
  r->a = h % c->n;
  r->b = 1 + mix(h) % (c->n - 1);
  while (gcd(r->b, c->n) != 1) r->b = r->b % (c->n - 1) + 1;
}

/* ---- storage ------------------------------------------------------------------ */

typedef struct session {
  adcp_storage *s;
  adcp_ledger *l;
  adcp_object_provider *p;
} session;

static int select_binding(void *ctx, const adcp_ledger_select_input *in, const char **binding_id, adcp_error *err) {
  (void)err;
  const cfg *c = ctx;
  *binding_id = in->canonical_byte_count >= c->object_min ? c->bid : ADCP_LEDGER_POSTGRES_BINDING;
  return 0;
}

static void session_open(session *x, cfg *c, int with_ledger) {
  adcp_error err = {0};
  memset(x, 0, sizeof *x);
  adcp_storage_options so = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  if (adcp_storage_open(&x->s, c->url, &so, &err)) die("storage", &err);
  if (!with_ledger) return;
  if (adcp_ledger_open(&x->l, adcp_storage_sql(x->s), NULL, &err)) die("ledger", &err);
  adcp_fs_provider_options po = {"bench", c->prefix, 1, 0, NULL, NULL};
  if (adcp_fs_provider_new(&x->p, c->root, &po, &err)) die("fs provider", &err);
  adcp_object_kv loc[1] = {{"root", "bench"}};
  adcp_ledger_binding_config bc = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = c->bid,
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = c->prefix,
      .compression = ADCP_OBJECT_COMPRESSION_NONE,
      .client = x->p,
  };
  if (adcp_ledger_configure_binding(x->l, &bc, &err)) die("binding", &err);
  adcp_ledger_set_binding_selector(x->l, select_binding, c);
}

static void session_close(session *x) {
  if (x->l) adcp_ledger_close(x->l);
  if (x->s) adcp_storage_close(x->s);
  if (x->p) adcp_object_provider_free(x->p);
}

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         (double)ru.ru_stime.tv_usec / 1e6;
}

static long maxrss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* Children tell the parent they are connected, then wait for the start. */
static int ready_w = -1, go_r = -1, done_r = -1;
static void wait_for_start(void) {
  char b = 1;
  if (write(ready_w, &b, 1) != 1) _exit(1);
  while (read(go_r, &b, 1) < 0 && errno == EINTR) {
  }
}

static int load_done(void) {
  struct pollfd pf = {done_r, POLLIN, 0};
  return poll(&pf, 1, 0) > 0;
}

/* ---- writer ---------------------------------------------------------------------- */

static void run_writer(cfg *c, int w) {
  session x;
  session_open(&x, c, 1);
  int mine = 0;
  for (int o = w; o < c->obligations; o += c->writers) mine++;
  int *version = calloc((size_t)c->obligations, sizeof *version);
  size_t cap = (size_t)mine * (size_t)c->pulses + 1, nlat = 0;
  double *lat = malloc(cap * sizeof *lat);
  uint64_t commits = 0, shared = 0, object = 0, pg = 0, bytes = 0, new_bytes = 0, rows = 0;
  wait_for_start();
  double t0 = now();
  for (int p = 0; p < c->pulses; p++) {
    for (int o = w; o < c->obligations; o += c->writers) {
      if (changed(o, p)) version[o] = p;
      pulse_rows r;
      pulse_init(&r, c, o, version[o]);
      char acct[32], ob[64], rev[96];
      names(c, o, acct, ob);
      snprintf(rev, sizeof rev, "rev_day_%s_%03d_%02d", c->run, o, p);
      adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                                .account_id = acct,
                                .obligation_id = ob,
                                .revision_id = rev,
                                .finality = ADCP_FINALITY_SNAPSHOT,
                                .period_start = "2026-10-01",
                                .period_end = "2026-10-02",
                                .next_row = next_row,
                                .row_ctx = &r};
      if (c->route_rows)
        req.binding_id = (double)r.n * c->row_bytes >= (double)c->object_min ? c->bid : ADCP_LEDGER_POSTGRES_BINDING;
      adcp_commit_result res;
      adcp_error err = {0};
      double t = now();
      if (adcp_ledger_commit_revision(&res, x.l, &req, &err)) die("commit", &err);
      lat[nlat++] = now() - t;
      commits++;
      rows += res.header.row_count;
      bytes += res.header.canonical_byte_count;
      if (res.shared) shared++;
      else new_bytes += res.header.canonical_byte_count;
      if (strcmp(res.row_binding_id, ADCP_LEDGER_POSTGRES_BINDING)) object++;
      else pg++;
      adcp_commit_result_free(&res);
    }
  }
  double dt = now() - t0;
  double p50 = pct(lat, nlat, 50), p99 = pct(lat, nlat, 99);
  session_close(&x);
  printf(
      "{\"role\":\"writer\",\"id\":%d,\"commits\":%llu,\"header_only\":%llu,\"object_kind\":%llu,"
      "\"postgres_kind\":%llu,\"rows\":%llu,\"canonical_bytes\":%llu,\"new_bytes\":%llu,\"seconds\":%.3f,"
      "\"commit_p50_ms\":%.2f,\"commit_p99_ms\":%.2f,\"cpu_s\":%.2f,\"max_rss_kb\":%ld}\n",
      w, (unsigned long long)commits, (unsigned long long)shared, (unsigned long long)object, (unsigned long long)pg,
      (unsigned long long)rows, (unsigned long long)bytes, (unsigned long long)new_bytes, dt, p50 * 1e3, p99 * 1e3,
      cpu_s(), maxrss_kb());
  free(version), free(lat);
}

/* ---- change-feed follower ------------------------------------------------------------ */

static double recorded_epoch(const char *t) { /* YYYY-MM-DDTHH:MM:SS.ffffffZ */
  struct tm tm = {0};
  int us = 0;
  if (sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d.%6d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
             &tm.tm_sec, &us) != 7)
    return 0;
  tm.tm_year -= 1900, tm.tm_mon -= 1;
  return (double)timegm(&tm) + us / 1e6;
}

static double wall_epoch(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_follower(cfg *c, char *cursor) {
  session x;
  session_open(&x, c, 0);
  adcp_sql_conn *conn = adcp_storage_sql(x.s);
  adcp_error err = {0};
  char name[64];
  snprintf(name, sizeof name, "bench_day_%s", c->run);
  if (adcp_feed_consumer_register(conn, name, NULL, cursor, &err)) die("consumer", &err);
  size_t cap = (size_t)c->obligations * (size_t)c->pulses * 2 + 16, nlag = 0;
  double *lag = malloc(cap * sizeof *lag);
  uint64_t changes = 0, polls = 0, empty = 0;
  wait_for_start();
  for (int finishing = 0;;) {
    adcp_changes_query q = {.version = ADCP_CHANGES_QUERY_VERSION, .cursor = cursor, .limit = 1000};
    adcp_change_page pg = {0};
    if (adcp_feed_changes_after(&pg, conn, &q, &err)) die("changes", &err);
    polls++;
    double t = wall_epoch();
    for (size_t i = 0; i < pg.count; i++)
      if (nlag < cap) lag[nlag++] = t - recorded_epoch(pg.items[i].recorded_at);
    changes += pg.count;
    if (pg.count && adcp_feed_consumer_advance(conn, name, pg.cursor, &err)) die("consumer advance", &err);
    free(cursor);
    cursor = strdup(pg.cursor);
    size_t got = pg.count;
    adcp_change_page_free(&pg);
    if (got) continue;
    empty++;
    if (finishing) break;
    if (load_done()) finishing = 1; /* one more empty page after the writers ended */
    else usleep(20000);
  }
  double p50 = pct(lag, nlag, 50), p99 = pct(lag, nlag, 99), mx = nlag ? lag[nlag - 1] : 0;
  adcp_feed_consumer_drop(conn, name, &err);
  session_close(&x);
  printf(
      "{\"role\":\"feed\",\"changes\":%llu,\"polls\":%llu,\"empty_polls\":%llu,\"lag_p50_ms\":%.1f,"
      "\"lag_p99_ms\":%.1f,\"lag_max_ms\":%.1f,\"cpu_s\":%.2f,\"max_rss_kb\":%ld}\n",
      (unsigned long long)changes, (unsigned long long)polls, (unsigned long long)empty, p50 * 1e3, p99 * 1e3, mx * 1e3,
      cpu_s(), maxrss_kb());
  free(lag), free(cursor);
}

/* ---- page sampler ------------------------------------------------------------------- */

static void run_sampler(cfg *c) {
  session x;
  session_open(&x, c, 1);
  size_t cap = 1 << 16, n = 0;
  double *lat = malloc(cap * sizeof *lat);
  uint64_t seed = 0x5DEECE66Dull, misses = 0;
  adcp_ledger_page page;
  adcp_ledger_page_init(&page);
  wait_for_start();
  double interval = c->page_hz > 0 ? 1.0 / c->page_hz : 0, next = now();
  while (!load_done()) {
    seed = mix(seed);
    int o = (int)(seed % (uint64_t)c->obligations);
    char acct[32], ob[64];
    names(c, o, acct, ob);
    adcp_revision_header h;
    int found = 0;
    adcp_error err = {0};
    if (adcp_ledger_get_current_revision(&h, &found, x.l, acct, ob, &err)) die("current", &err);
    if (found && h.row_count >= 500) {
      uint64_t off = mix(seed ^ 1) % (h.row_count - 500 + 1);
      double t = now();
      if (adcp_ledger_read_revision_rows(&page, x.l, acct, h.revision_id, off, 500, &err)) die("page read", &err);
      if (n < cap) lat[n++] = now() - t;
      if (page.count != 500) die("short page", &err);
    } else {
      misses++;
    }
    if (found) adcp_revision_header_free(&h);
    next += interval;
    double wait = next - now();
    if (wait > 0) usleep((useconds_t)(wait * 1e6));
    else next = now();
  }
  adcp_ledger_page_free(&page);
  double p50 = pct(lat, n, 50), p99 = pct(lat, n, 99), mx = n ? lat[n - 1] : 0;
  session_close(&x);
  printf(
      "{\"role\":\"pages\",\"reads\":%zu,\"not_yet_committed\":%llu,\"p50_ms\":%.2f,\"p99_ms\":%.2f,"
      "\"max_ms\":%.2f,\"cpu_s\":%.2f,\"max_rss_kb\":%ld}\n",
      n, (unsigned long long)misses, p50 * 1e3, p99 * 1e3, mx * 1e3, cpu_s(), maxrss_kb());
  free(lat);
}

/* ---- PostgreSQL server CPU (optional) -------------------------------------------------- */

/* CPU seconds of the postmaster, the children it reaped, and its live
 * children; *sys the kernel's share. */
static double server_cpu_s(double *sys, long pm) {
  *sys = 0;
  if (pm <= 0) return 0;
  double total = 0;
  FILE *f = popen("ps -e -o pid= -o ppid=", "r");
  if (!f) return 0;
  long pid, ppid;
  while (fscanf(f, "%ld %ld", &pid, &ppid) == 2) {
    if (pid != pm && ppid != pm) continue;
    double user, ksys, reaped, reaped_sys;
    if (bench_proc_cpu(&user, &ksys, &reaped, &reaped_sys, pid)) continue;
    total += user + ksys, *sys += ksys;
    if (pid == pm) total += reaped, *sys += reaped_sys;
  }
  pclose(f);
  return total;
}

/* ---- main ------------------------------------------------------------------------------ */

static double env_d(const char *name, double dflt) {
  const char *v = getenv(name);
  return v && *v ? strtod(v, NULL) : dflt;
}

static void load_pool(cfg *c) {
  FILE *f = fopen(c->pool_path, "rb");
  if (!f) perror(c->pool_path), exit(1);
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *d = malloc((size_t)sz + 1);
  if (!d || fread(d, 1, (size_t)sz, f) != (size_t)sz) fprintf(stderr, "bench_day: cannot read the pool\n"), exit(1);
  fclose(f);
  size_t cap = 1024;
  c->off = malloc(cap * sizeof *c->off), c->len = malloc(cap * sizeof *c->len);
  for (const char *p = d, *end = d + sz; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (n) {
      if (c->n == cap)
        cap *= 2, c->off = realloc(c->off, cap * sizeof *c->off), c->len = realloc(c->len, cap * sizeof *c->len);
      c->off[c->n] = (size_t)(p - d), c->len[c->n++] = n;
    }
    p += n + 1;
  }
  c->data = d;
}

int main(int argc, char **argv) {
  if (argc < 4 || argv[3][0] != '/') {
    fprintf(stderr, "usage: bench_day POOL.jsonl PG_URL /ABSOLUTE/OBJECT_ROOT\n");
    return 2;
  }
  cfg c = {.pool_path = argv[1], .url = argv[2], .root = argv[3]};
  double scale = env_d("ADCP_BENCH_DAY_SCALE", 1);
  c.obligations = (int)env_d("ADCP_BENCH_DAY_OBLIGATIONS", 200);
  c.writers = (int)env_d("ADCP_BENCH_DAY_WRITERS", 4);
  c.rows = (long)env_d("ADCP_BENCH_DAY_ROWS", 1000);
  c.spread = (long)env_d("ADCP_BENCH_DAY_SPREAD", 500);
  c.object_min = (uint64_t)env_d("ADCP_BENCH_DAY_OBJECT_MIN_BYTES", 262144);
  c.page_hz = env_d("ADCP_BENCH_DAY_PAGE_HZ", 20);
  c.pulses = (int)(PULSES_PER_DAY * scale + 0.5);
  if (c.pulses < 2) c.pulses = 2;
  if (c.spread >= c.rows) c.spread = c.rows - 1;
  load_pool(&c);
  if (c.n < 2 || (long)c.n <= c.rows + c.spread) {
    fprintf(stderr, "bench_day: the pool needs more rows than a pulse (%ld)\n", c.rows + c.spread);
    return 2;
  }
  const char *route = getenv("ADCP_BENCH_DAY_ROUTE");
  c.route_rows = route && !strcmp(route, "rows");
  {
    adcp_error err = {0};
    adcp_rows_encoder_options eo = {ADCP_PROFILE_REVISION_ENVELOPE_V1, "rrev_pool", NULL,
                                    ADCP_BINDING_RFC8785_JCS_V1,       NULL,        NULL};
    adcp_rows_encoder *enc;
    adcp_rows_result res;
    if (adcp_rows_encoder_new(&enc, &eo, &err)) die("encoder", &err);
    for (size_t i = 0; i < c.n; i++)
      if (adcp_rows_encoder_add_json(enc, c.data + c.off[i], c.len[i], &err)) die("pool row", &err);
    if (adcp_rows_encoder_finish(enc, &res, &err)) die("pool", &err);
    adcp_rows_encoder_free(enc);
    c.row_bytes = (double)res.canonical_byte_count / (double)c.n;
  }
  snprintf(c.run, sizeof c.run, "%ld", (long)time(NULL));
  snprintf(c.bid, sizeof c.bid, "day_fs_%s", c.run);
  snprintf(c.prefix, sizeof c.prefix, "day-%s", c.run);

  /* Set up once: schema, binding registration, the feed's head (the follower
   * reads only what this run commits). Closed before forking. */
  char *head = NULL;
  double settle_s = -1;
  {
    session x;
    adcp_error err = {0};
    session_open(&x, &c, 1);
    if (adcp_storage_migrate(NULL, x.s, NULL, &err) || adcp_ledger_register_binding(x.l, c.bid, &err))
      die("setup", &err);
    char any[8] = "";
    int found = 0;
    adcp_error qe = {0};
    if (adcp_sql_query_text(any, sizeof any, &found, adcp_storage_sql(x.s),
                            "SELECT 1 FROM adcp_reporting_revisions LIMIT 1", NULL, 0, &qe))
      die("setup", &qe);
    const int settle = env_d("ADCP_BENCH_DAY_SETTLE", 1) != 0;
    if (settle && !found)
      fprintf(stderr, "bench_day: a fresh database: not settled (ANALYZE of empty tables would mislead the planner)\n");
    if (settle && found) {
      /* Autovacuum's work on what earlier sections left (deleted bodies,
       * grown tables) and their dirty buffers would otherwise run inside the
       * day and be counted as its server CPU. Not fatal: a role without the
       * right to CHECKPOINT still measures, unsettled. */
      settle_s = now();
      adcp_sql_conn *sc = adcp_storage_sql(x.s);
      if (adcp_sql_exec(sc, "VACUUM (ANALYZE)", NULL, 0, &err) || adcp_sql_exec(sc, "CHECKPOINT", NULL, 0, &err))
        fprintf(stderr, "bench_day: settling the database failed (measuring unsettled): %s\n", err.message);
      settle_s = now() - settle_s;
    }
    if (adcp_feed_head(&head, adcp_storage_sql(x.s), NULL, &err)) die("setup", &err);
    session_close(&x);
  }
  int ready[2], go[2], done[2];
  if (pipe(ready) || pipe(go) || pipe(done)) return perror("pipe"), 1;
  ready_w = ready[1], go_r = go[0], done_r = done[0];
  int nproc = c.writers + 2;
  pid_t *pids = calloc((size_t)nproc, sizeof *pids);
  fflush(stdout);
  for (int i = 0; i < nproc; i++) {
    pid_t pid = fork();
    if (pid < 0) return perror("fork"), 1;
    if (pid == 0) {
      close(ready[0]), close(go[1]), close(done[1]);
      if (i < c.writers) run_writer(&c, i);
      else if (i == c.writers) run_follower(&c, head);
      else run_sampler(&c);
      fflush(stdout);
      _exit(0);
    }
    pids[i] = pid;
  }
  close(ready[1]), close(go[0]), close(done[0]);
  for (int i = 0; i < nproc; i++) {
    char b;
    if (read(ready[0], &b, 1) != 1) return fprintf(stderr, "bench_day: a child failed to start\n"), 1;
  }
  long pm = (long)env_d("ADCP_BENCH_PG_PID", 0);
  double srv_sys0, srv_sys;
  double srv0 = server_cpu_s(&srv_sys0, pm);
  double t0 = now();
  close(go[1]); /* start */
  int failed = 0;
  for (int i = 0; i < c.writers; i++) {
    int st;
    waitpid(pids[i], &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) failed = 1;
  }
  double wall = now() - t0;
  close(done[1]);
  for (int i = c.writers; i < nproc; i++) {
    int st;
    waitpid(pids[i], &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) failed = 1;
  }
  double wall_feed = now() - t0;
  double srv = server_cpu_s(&srv_sys, pm) - srv0;
  srv_sys -= srv_sys0;
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  double client_sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  double client = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + client_sys;
  if (failed) return fprintf(stderr, "bench_day: a child process failed\n"), 1;
  double real = TENTH_OF_DAY_S * c.pulses / PULSES_PER_DAY * c.obligations / 200.0;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  uint64_t revisions = (uint64_t)c.obligations * (uint64_t)c.pulses;
  printf(
      "{\"measure\":\"day\",\"obligations\":%d,\"pulses\":%d,\"writers\":%d,\"revisions\":%llu,"
      "\"pool_rows\":%zu,\"pool_row_bytes\":%.1f,\"route\":\"%s\",\"object_min_bytes\":%llu,\"wall_s\":%.2f,\"wall_until_feed_caught_up_s\":%.2f,"
      "\"real_time_s\":%.0f,\"x_real_time\":%.1f,\"commits_per_s\":%.1f,\"client_cpu_s\":%.1f,"
      "\"server_cpu_s\":%.1f,\"client_sys_cpu_s\":%.1f,\"server_sys_cpu_s\":%.1f,\"machine_cores\":%ld,\"cores_full_day_from_wall\":%.3f,"
      "\"cores_full_day_from_cpu\":%.3f,\"settle_before_s\":%.2f}\n",
      c.obligations, c.pulses, c.writers, (unsigned long long)revisions, c.n, c.row_bytes,
      c.route_rows ? "rows" : "selector", (unsigned long long)c.object_min, wall, wall_feed, real, real / wall,
      (double)revisions / wall, client, srv, client_sys, srv_sys, cores, (double)cores * wall / real,
      (client + srv) / real, settle_s);
  free(pids), free(head), free(c.off), free(c.len), free((void *)c.data);
  return 0;
}
