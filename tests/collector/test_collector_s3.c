/* tests/collector/test_collector_s3.c — the orphan collector over the S3
 * provider against the loopback S3 fake (tests/objects/fake_s3.js), on SQLite
 * and PostgreSQL: LastModified from the listing drives E3 (the fake's age_ms
 * setting backdates new objects), a committed revision's objects are kept, an
 * orphan is deleted at its VersionId, a young orphan is kept. */
#include "adcp/collector.h"
#include "adcp/objects.h"
#include "ledger/collector_support.h"
#include "ledger/ledger_fixture.h"
#include "objects/fake_server.h"

static fake_server fake;
static char endpoint[128];

static void ctl(const char *q) { assert_int_equal(fake_ctl(&fake, q, 0, NULL), 200); }

static void put(adcp_object_provider *p, adcp_buf *key, const char *ns, const char *rev, const char *content) {
  adcp_error err = {0};
  adcp_object_key_input ki = {"rows", ns, "acct", rev, NULL, "snapshot", content, 0, ADCP_OBJECT_COMPRESSION_NONE};
  OK(adcp_object_key_render(key, NULL, &ki, &err));
  adcp_object_put_input in = {(const char *)key->data, (const uint8_t *)"{}\n", 3, "application/x-ndjson", NULL, 0};
  adcp_object_put_result pr;
  OK(adcp_object_put(p, &pr, &in, NULL, &err));
}

static int exists(adcp_object_provider *p, const char *key) {
  adcp_object_info info;
  adcp_error err = {0};
  return adcp_object_head(p, &info, key, NULL, &err) == 0;
}

static void s3_collect(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  char bucket[32];
  snprintf(bucket, sizeof bucket, "coll-%d", f->dialect);
  char q[256];
  snprintf(q, sizeof q, "/__ctl/bucket?name=%s&versioning=Enabled", bucket);
  ctl(q);
  snprintf(q, sizeof q, "/__ctl/set?bucket=%s&age_ms=%lld", bucket, 9LL * 86400 * 1000);
  ctl(q);
  adcp_object_provider *p;
  adcp_s3_provider_options so3 = {.bucket = bucket, .region = "us-east-1", .endpoint = endpoint, .path_style = 1,
                                  .prefix = "rows", .credential_ref = "env", .backoff_base_ms = 20};
  OK(adcp_s3_provider_new(&p, &so3, &err));
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l;
  adcp_ledger_options lo = {.version = 1, .write_deadline_ms = 5000};
  OK(adcp_ledger_open(&l, adcp_storage_sql(s), &lo, &err));
  adcp_object_kv loc[3] = {{"bucket", bucket}, {"endpoint", endpoint}, {"path_style", "true"}};
  adcp_object_kv loc4[4] = {loc[0], {"region", "us-east-1"}, loc[1], loc[2]};
  adcp_ledger_binding_config bc = {1, "s3a", "s3", loc4, 4, "rows", NULL, ADCP_OBJECT_COMPRESSION_NONE, NULL, p};
  OK(adcp_ledger_configure_binding(l, &bc, &err));
  OK(adcp_ledger_register_binding(l, "s3a", &err));
  char ns[65];
  OK(adcp_ledger_collector_namespace_key(ns, l, &err));
  gen g;
  gen_init(&g, 30, 8, 1);
  adcp_commit_result res;
  adcp_ledger_commit req = {.version = 1, .account_id = "acct", .obligation_id = "ob1", .revision_id = "kept",
                            .finality = ADCP_FINALITY_SNAPSHOT, .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z", .next_row = gen_next, .row_ctx = &g,
                            .binding_id = "s3a"};
  OK(adcp_ledger_commit_revision(&res, l, &req, &err));
  adcp_commit_result_free(&res);
  adcp_buf orphan, young;
  adcp_buf_init(&orphan), adcp_buf_init(&young);
  put(p, &orphan, ns, "lost", "1111111111111111111111111111111111111111111111111111111111111111");
  snprintf(q, sizeof q, "/__ctl/set?bucket=%s&age_ms=0", bucket);
  ctl(q);
  put(p, &young, ns, "new", "2222222222222222222222222222222222222222222222222222222222222222");
  adcp_collector_report rep;
  adcp_collector_options o = {.version = ADCP_COLLECTOR_OPTIONS_VERSION, .acknowledge_exclusive_namespace = 1};
  OK(adcp_collector_collect_orphaned_row_objects(&rep, l, &o, &err));
  const adcp_collector_binding_report *b = &rep.bindings[0];
  if (strcmp(b->status, "collected")) fail_msg("status %s %s %s", b->status, b->refusal, b->failure);
  assert_int_equal(b->c.listed, 3);
  assert_int_equal(b->c.skipped_referenced, 1);
  assert_int_equal(b->c.skipped_young, 1);
  assert_int_equal(b->c.deleted, 1);
  assert_false(exists(p, (const char *)orphan.data));
  assert_true(exists(p, (const char *)young.data));
  adcp_collector_report_free(&rep);
  adcp_buf_free(&orphan), adcp_buf_free(&young);
  free(g.line.data);
  adcp_ledger_close(l);
  adcp_storage_close(s);
  adcp_object_provider_free(p);
}

int main(void) {
  setenv("AWS_ACCESS_KEY_ID", "AKFAKECOLL", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "fake/Secret+Coll", 1);
  unsetenv("AWS_SESSION_TOKEN");
  char script[600];
  snprintf(script, sizeof script, "%s/tests/objects/fake_s3.js", ADCP_SOURCE_DIR);
  const char *args[] = {"AKFAKECOLL", "fake/Secret+Coll", NULL};
  if (fake_start(&fake, script, args, NULL)) {
    fprintf(stderr, "could not start the fake S3 (node)\n");
    return 1;
  }
  snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", fake.port);
  const struct CMUnitTest tests[] = {BOTH(s3_collect)};
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  fake_stop(&fake);
  return failed;
}
