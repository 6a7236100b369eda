/* tests/ledger/test_upload_concurrency.c — object-kind commits upload their
 * chunks concurrently (adcp_ledger_options.upload_concurrency), through an s3
 * binding on the loopback fake S3 (tests/objects/fake_s3.js) whose PUTs are
 * answered late, on SQLite and PostgreSQL.
 *
 *   widths:  8 chunks, each PUT at least 400 ms late (3x an undelayed upload
 *            phase measured first, so a slow encoder, sanitized or loaded,
 *            still starts all 8 before the first returns). Width 8 keeps all 8 in flight
 *            (the fake counts them) and its upload phase takes ~1 delay, not 8; the default
 *            (network provider) keeps 4; width 1 keeps 1 and takes >= 8
 *            delays. Every revision verifies; no intent is left.
 *   failure: the 3rd PUT is refused while others are in flight: the commit
 *            fails, nothing is committed, the intent records exactly the
 *            objects in the bucket (none unrecorded), the sweep deletes them
 *            all, and the same commit then succeeds. */
#include <time.h>

#include "../objects/fake_server.h"
#include "adcp/objects.h"
#include "ledger_fixture.h"

#define AK "AKUPLOADTEST"
#define SK "upload/Secret+Key=77"
#define DELAY_MIN_MS 400

static int put_delay_ms = DELAY_MIN_MS; /* widths() raises it to 3x the measured undelayed phase */
#define ROWS 80000                      /* 8 chunks of 10 000 rows at this pad */

static fake_server fake;
static int bucket_seq;

typedef struct uenv {
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  adcp_object_provider *p;
  char bucket[64]; /* also the binding ID and the obligation: one per env */
} uenv;

static void env_open(uenv *e, const fixture *f, int width, int compression) {
  adcp_error err = {0};
  memset(e, 0, sizeof *e);
  e->s = open_migrated(f);
  e->c = adcp_storage_sql(e->s);
  snprintf(e->bucket, sizeof e->bucket, "upl-%d-%d", (int)getpid(), ++bucket_seq);
  char q[200], ep[64], port[16];
  snprintf(q, sizeof q, "/__ctl/bucket?name=%s&versioning=Enabled", e->bucket);
  assert_int_equal(fake_ctl(&fake, q, 0, NULL), 200);
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d", fake.port);
  snprintf(port, sizeof port, "%d", fake.port);
  adcp_s3_provider_options po = {.bucket = e->bucket,
                                 .region = "us-east-1",
                                 .endpoint = ep,
                                 .path_style = 1,
                                 .prefix = "rows",
                                 .credential_ref = "env",
                                 .backoff_base_ms = 20};
  OK(adcp_s3_provider_new(&e->p, &po, &err));
  adcp_ledger_options o = {
      .version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 20000 + 12 * put_delay_ms, .upload_concurrency = width};
  OK(adcp_ledger_open(&e->l, e->c, &o, &err));
  adcp_object_kv loc[4] = {{"bucket", e->bucket}, {"region", "us-east-1"}, {"endpoint", ep}, {"path_style", "true"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = e->bucket,
                                   .provider = "s3",
                                   .location = loc,
                                   .n_location = 4,
                                   .prefix = "rows",
                                   .compression = compression,
                                   .credential_ref = "env",
                                   .client = e->p};
  OK(adcp_ledger_configure_binding(e->l, &bc, &err));
  OK(adcp_ledger_register_binding(e->l, e->bucket, &err)); /* the probe's PUTs happen here, undelayed */
}

static void env_close(uenv *e) {
  adcp_ledger_close(e->l);
  adcp_object_provider_free(e->p);
  adcp_storage_close(e->s);
}

static void set_puts(int delay_ms, int fail_at) {
  char q[128];
  snprintf(q, sizeof q, "/__ctl/puts?delay_ms=%d&fail_at=%d", delay_ms, fail_at);
  assert_int_equal(fake_ctl(&fake, q, 0, NULL), 200);
}

static long stat_of(const char *name) {
  char body[4096] = "", pat[64];
  assert_int_equal(fake_ctl(&fake, "/__ctl/stats", 1, body), 200);
  snprintf(pat, sizeof pat, "\"%s\":", name);
  const char *p = strstr(body, pat);
  if (!p) fail_msg("fake stats lack %s: %s", name, body);
  return strtol(p + strlen(pat), NULL, 10);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Step hook: the wall time of the upload phase alone (after transaction A,
 * before transaction B), so encoding speed (sanitizer builds) does not count. */
static double now_ms(void);
static double t_intent, t_uploaded;
static int upload_clock(void *ctx, int step) {
  (void)ctx;
  if (step == ADCP_LEDGER_STEP_INTENT_OPEN) t_intent = now_ms();
  if (step == ADCP_LEDGER_STEP_UPLOADED) t_uploaded = now_ms();
  return 0;
}

static int commit_rev(adcp_commit_result *res, uenv *e, const char *rev, gen *g, adcp_error *err) {
  g->next = 0;
  char rid[96];
  snprintf(rid, sizeof rid, "%s-%s", e->bucket, rev);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = e->bucket,
                            .revision_id = rid,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = g,
                            .binding_id = e->bucket,
                            .step_hook = upload_clock};
  return adcp_ledger_commit_revision(res, e->l, &req, err);
}

static int collect(void *ctx, const uint8_t *data, size_t n, uint64_t rows, adcp_error *err) {
  (void)rows, (void)err;
  return adcp_buf_append(ctx, data, n);
}

static void check_verifies(uenv *e, const char *rev, gen *g) {
  adcp_error err = {0};
  char rid[96];
  snprintf(rid, sizeof rid, "%s-%s", e->bucket, rev);
  adcp_buf exp, got;
  adcp_buf_init(&exp), adcp_buf_init(&got);
  for (uint64_t i = 0; i < g->n; i++) {
    gen_line(g, i);
    adcp_buf_append(&exp, g->line.data, g->line.len);
    adcp_buf_append_byte(&exp, '\n');
  }
  OK(adcp_ledger_verify_revision(e->l, "acct", rid, collect, &got, &err));
  assert_int_equal(got.len, exp.len);
  assert_memory_equal(got.data, exp.data, exp.len);
  adcp_buf_free(&exp), adcp_buf_free(&got);
}

/* Every key under the binding's prefix (one version each in these tests). */
static size_t bucket_objects(uenv *e) {
  adcp_error err = {0};
  size_t n = 0;
  char *tok = NULL;
  do {
    adcp_object_list_page pg = {0};
    OK(adcp_object_list(e->p, &pg, NULL, tok, 1000, NULL, &err));
    free(tok);
    tok = pg.next_token ? strdup(pg.next_token) : NULL;
    for (size_t i = 0; i < pg.n_entries; i++)
      n += !strstr(pg.entries[i].key, "/_collector-fence/"); /* not row objects */
    adcp_object_list_page_free(&pg);
  } while (tok);
  return n;
}

/* One commit of 8 chunks at `width`, each PUT `delay` ms late; returns its
 * upload phase's wall time, checks in-flight PUTs (want_inflight < 0: not). */
static double timed_commit(const fixture *f, int width, long want_inflight, int delay) {
  uenv e;
  env_open(&e, f, width, ADCP_OBJECT_COMPRESSION_NONE);
  adcp_error err = {0};
  gen g;
  gen_init(&g, ROWS, 24, 1);
  set_puts(delay, 0);
  adcp_commit_result res;
  t_intent = t_uploaded = 0;
  OK(commit_rev(&res, &e, "rev1", &g, &err));
  double dt = t_uploaded - t_intent;
  assert_true(t_intent > 0 && t_uploaded > t_intent);
  long inflight = stat_of("putsMaxInFlight");
  set_puts(0, 0);
  assert_int_equal(res.header.chunk_count, 8);
  assert_int_equal(res.objects_created, 8);
  adcp_commit_result_free(&res);
  fprintf(stderr, "# width %d: %.0f ms for 8 chunks at %d ms per PUT, %ld PUTs in flight at most\n", width, dt, delay,
          inflight);
  if (want_inflight >= 0 && inflight != want_inflight)
    fail_msg("width %d: %ld PUTs in flight at most, want %ld", width, inflight, want_inflight);
  assert_int_equal(bucket_objects(&e), 8);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 0);
  check_verifies(&e, "rev1", &g);
  adcp_buf_free(&g.line);
  env_close(&e);
  return dt;
}

static void widths(void **state) {
  fixture *f = *state;
  /* Reference: the same commit with PUTs answered at once (encoding and SQL only). */
  double ref = timed_commit(f, 8, -1, 0);
  if (3.0 * ref > put_delay_ms) put_delay_ms = (int)(3.0 * ref);
  fprintf(stderr, "# undelayed upload phase %.0f ms: each PUT %d ms late\n", ref, put_delay_ms);
  double wide = timed_commit(f, 8, 8, put_delay_ms);
  if (wide >= 3.0 * put_delay_ms) fail_msg("width 8 took %.0f ms: the 8 PUTs did not overlap", wide);
  timed_commit(f, 0, 4, put_delay_ms); /* default for a network provider */
  double serial = timed_commit(f, 1, 1, put_delay_ms);
  if (serial < 8.0 * put_delay_ms) fail_msg("width 1 took %.0f ms, less than 8 delays", serial);
}

static void failure_midway(void **state) {
  fixture *f = *state;
  uenv e;
  env_open(&e, f, 4, ADCP_OBJECT_COMPRESSION_GZIP);
  adcp_error err = {0};
  gen g;
  gen_init(&g, ROWS, 24, 2);
  set_puts(DELAY_MIN_MS, 3);
  adcp_commit_result res;
  int rc = commit_rev(&res, &e, "rev1", &g, &err);
  long inflight = stat_of("putsMaxInFlight");
  set_puts(0, 0);
  if (!rc) fail_msg("the commit succeeded although a PUT was refused");
  fprintf(stderr, "# failed commit: %d %s\n", rc, err.message);
  assert_true(inflight > 1);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_revisions"), 0);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 1);
  /* Every object the failed commit created is recorded in its intent. */
  int64_t recorded =
      tu_scalar(e.c, f->dialect == ADCP_SQL_POSTGRES
                         ? "SELECT jsonb_array_length(created_objects) FROM adcp_reporting_row_write_intents"
                         : "SELECT json_array_length(created_objects) FROM adcp_reporting_row_write_intents");
  size_t stored = bucket_objects(&e);
  fprintf(stderr, "# failed commit: %zu objects stored, %lld recorded\n", stored, (long long)recorded);
  assert_int_equal((int64_t)stored, recorded);
  assert_true(stored >= 2 && stored < 8);
  /* After expiry the sweep deletes exactly those. */
  OK(adcp_sql_exec_script(e.c,
                          "UPDATE adcp_reporting_row_write_intents SET expires_at = '2001-01-01T00:00:00.000000Z';"
                          "UPDATE adcp_reporting_obligations SET lease_expires_at = '2001-01-01T00:00:00.000000Z' "
                          "WHERE lease_owner IS NOT NULL",
                          &err));
  adcp_sweep_counters sc;
  OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 0, &err));
  assert_int_equal(sc.objects_deleted, stored);
  assert_int_equal(bucket_objects(&e), 0);
  /* The same commit then succeeds and verifies. */
  OK(commit_rev(&res, &e, "rev1", &g, &err));
  assert_int_equal(res.objects_created, 8);
  adcp_commit_result_free(&res);
  check_verifies(&e, "rev1", &g);
  adcp_buf_free(&g.line);
  env_close(&e);
}

int main(void) {
  setenv("AWS_ACCESS_KEY_ID", AK, 1);
  setenv("AWS_SECRET_ACCESS_KEY", SK, 1);
  unsetenv("AWS_SESSION_TOKEN"), unsetenv("AWS_ENDPOINT_URL_S3"), unsetenv("AWS_ENDPOINT_URL"), unsetenv("AWS_PROFILE");
  char script[600];
  snprintf(script, sizeof script, "%s/tests/objects/fake_s3.js", ADCP_SOURCE_DIR);
  const char *args[] = {AK, SK, NULL};
  if (fake_start(&fake, script, args, NULL)) {
    fprintf(stderr, "could not start the fake S3 (node)\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {BOTH(widths), BOTH(failure_midway)};
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  fake_stop(&fake);
  return failed;
}
