/* tests/fence/test_fence_s3.c — the ownership fence through an s3 binding on
 * the loopback fake S3 (tests/objects/fake_s3.js), on SQLite and PostgreSQL:
 * create-only fence objects (If-None-Match), their bytes as the encoder's,
 * pruning to the newest two, a copied database refused (database_copied)
 * until take-over, which then fences the original (commit refused, sweep
 * deletes nothing) while every revision in both databases verifies. */
#include <sys/stat.h>

#include "../objects/fake_server.h"
#include "adcp/fence.h"
#include "adcp/objects.h"
#include "ledger/ledger_fixture.h"

#define AK "AKFENCETEST"
#define SK "fence/Secret+Key=11"

static fake_server fake;
static int bucket_seq;

typedef struct senv {
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  adcp_object_provider *p;
} senv;

static void senv_open(senv *e, const char *url, const char *bucket) {
  adcp_error err = {0};
  memset(e, 0, sizeof *e);
  adcp_storage_options so = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  OK(adcp_storage_open(&e->s, url, &so, &err));
  OK(adcp_storage_migrate(NULL, e->s, NULL, &err));
  e->c = adcp_storage_sql(e->s);
  char ep[64];
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d", fake.port);
  adcp_s3_provider_options po = {.bucket = bucket,
                                 .region = "us-east-1",
                                 .endpoint = ep,
                                 .path_style = 1,
                                 .prefix = "rows",
                                 .credential_ref = "env",
                                 .backoff_base_ms = 20};
  OK(adcp_s3_provider_new(&e->p, &po, &err));
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 20000, .fence_cache_ttl_ms = -1};
  OK(adcp_ledger_open(&e->l, e->c, &o, &err));
  adcp_object_kv loc[4] = {{"bucket", bucket}, {"region", "us-east-1"}, {"endpoint", ep}, {"path_style", "true"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "s3b",
                                   .provider = "s3",
                                   .location = loc,
                                   .n_location = 4,
                                   .prefix = "rows",
                                   .compression = 1,
                                   .credential_ref = "env",
                                   .client = e->p};
  OK(adcp_ledger_configure_binding(e->l, &bc, &err));
}

static void senv_close(senv *e) {
  adcp_ledger_close(e->l);
  adcp_object_provider_free(e->p);
  adcp_storage_close(e->s);
}

/* Fence objects listed through the provider, as a bitmask of epochs. */
static uint64_t listed(senv *e) {
  adcp_error err = {0};
  char pre[1200];
  OK(adcp_fence_key_prefix(pre, sizeof pre, e->l, "s3b", &err));
  adcp_object_list_page pg = {0};
  OK(adcp_object_list(e->p, &pg, pre, NULL, 1000, NULL, &err));
  uint64_t m = 0;
  for (size_t i = 0; i < pg.n_entries; i++) {
    unsigned long long ep = 0;
    if (sscanf(pg.entries[i].key + strlen(pre), "%16llu.json", &ep) == 1 && ep < 64) m |= 1ULL << ep;
  }
  adcp_object_list_page_free(&pg);
  return m;
}

static int commit(senv *e, const char *ob, const char *rev, uint64_t salt, adcp_error *err) {
  gen g;
  gen_init(&g, 800, 20, salt);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = ob,
                            .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g,
                            .binding_id = "s3b"};
  adcp_commit_result res;
  memset(&res, 0, sizeof res);
  int rc = adcp_ledger_commit_revision(&res, e->l, &req, err);
  if (!rc) adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
  return rc;
}

static void verifies(senv *e, const char *rev) {
  adcp_error err = {0};
  OK(adcp_ledger_verify_revision(e->l, "acct", rev, NULL, NULL, &err));
}

static void s3_fence(void **state) {
  fixture *f = *state;
  char bucket[64], q[200];
  snprintf(bucket, sizeof bucket, "fence-%d-%d", (int)getpid(), ++bucket_seq);
  snprintf(q, sizeof q, "/__ctl/bucket?name=%s&versioning=Enabled", bucket);
  assert_int_equal(fake_ctl(&fake, q, 0, NULL), 200);
  senv a, b;
  senv_open(&a, f->url, bucket);
  adcp_error err = {0};
  adcp_fence_claim c;
  adcp_fence_cause cause = 99;
  for (int i = 1; i <= 3; i++) {
    OK(adcp_fence_acquire(&c, &cause, a.l, "s3b", &err));
    assert_int_equal(cause, ADCP_FENCE_OK);
    assert_int_equal(c.epoch, (uint64_t)i);
  }
  assert_int_equal(listed(&a), (1ULL << 2) | (1ULL << 3));
  /* the stored bytes are the encoder's record */
  adcp_buf key, body;
  adcp_buf_init(&key), adcp_buf_init(&body);
  char pre[1200];
  OK(adcp_fence_key_prefix(pre, sizeof pre, a.l, "s3b", &err));
  char nsk[65];
  snprintf(nsk, sizeof nsk, "%.64s", pre + 5); /* "rows/" + namespace_key */
  OK(adcp_fence_object_key(&key, "rows", nsk, 3, &err));
  adcp_object_info info;
  OK(adcp_object_head(a.p, &info, (const char *)key.data, NULL, &err));
  adcp_object_get_input gi = {(const char *)key.data, info.native_version, 0, 0, 0, ADCP_FENCE_RECORD_MAX};
  OK(adcp_object_get(a.p, &body, &gi, NULL, &err));
  adcp_fence_record rec;
  OK(adcp_fence_record_parse(&rec, body.data, body.len, &err));
  assert_string_equal(rec.owner_token, c.owner_token);
  adcp_buf_free(&key), adcp_buf_free(&body);
  OK(adcp_fence_recheck(&c, &cause, a.l, &err));
  assert_int_equal(cause, ADCP_FENCE_OK);
  OK(commit(&a, "ob1", "r1", 1, &err));

  /* the copy */
  char url2[700], db2[96] = "";
  senv_close(&a);
  if (f->dialect == ADCP_SQL_SQLITE) {
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "cp '%s/ledger.db' '%s/copy.db'", f->dir, f->dir);
    assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
    snprintf(url2, sizeof url2, "sqlite:%s/copy.db", f->dir);
  } else {
    snprintf(db2, sizeof db2, "%s_copy", f->dbname);
    char sql[200];
    snprintf(sql, sizeof sql, "CREATE DATABASE %s TEMPLATE %s", db2, f->dbname);
    pg_admin(sql);
    pg_url_for(url2, sizeof url2, db2);
  }
  senv_open(&a, f->url, bucket);
  senv_open(&b, url2, bucket);
  OK(adcp_fence_acquire(&c, &cause, b.l, "s3b", &err));
  assert_int_equal(cause, ADCP_FENCE_DATABASE_COPIED);
  adcp_error e2 = {0};
  assert_int_equal(commit(&b, "ob2", "c2", 2, &e2), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(e2.message, "database_copied"));
  adcp_fence_claim tc;
  OK(adcp_fence_take_over(&tc, b.l, "s3b", 1, &err));
  assert_int_equal(tc.epoch, 4);
  OK(commit(&b, "ob3", "c3", 3, &err));
  OK(adcp_fence_acquire(&c, &cause, a.l, "s3b", &err));
  assert_int_equal(cause, ADCP_FENCE_ADVANCED);
  e2 = (adcp_error){0};
  assert_int_equal(commit(&a, "ob4", "r4", 4, &e2), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(e2.message, "fence_advanced"));
  adcp_sweep_counters sc;
  OK(adcp_sql_exec_script(a.c, "UPDATE adcp_reporting_row_write_intents SET expires_at = '2001-01-01T00:00:00.000000Z'",
                          &err));
  OK(adcp_ledger_sweep_intents(&sc, a.l, NULL, 0, &err));
  assert_int_equal(sc.objects_deleted, 0);
  assert_int_equal(sc.fenced, 1);
  verifies(&a, "r1"), verifies(&b, "r1"), verifies(&b, "c3");
  senv_close(&b);
  senv_close(&a);
  if (db2[0]) {
    char sql[200];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db2);
    pg_admin(sql);
  }
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
  const struct CMUnitTest tests[] = {BOTH(s3_fence)};
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  fake_stop(&fake);
  return failed;
}
