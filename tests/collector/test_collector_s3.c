/* tests/collector/test_collector_s3.c — the orphan collector over the S3
 * provider against the loopback S3 fake (tests/objects/fake_s3.js), on SQLite
 * and PostgreSQL: LastModified from the listing drives E3 (the fake's age_ms
 * setting backdates new objects), a committed revision's objects are kept, an
 * orphan is deleted at its VersionId, a young orphan is kept; and the version
 * listing: on a bucket that ignores If-None-Match, extra versions at a key a
 * row set pins and every version of an unreferenced key are deleted at their
 * VersionIds, the pinned versions and a young extra version are kept. */
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
  adcp_s3_provider_options so3 = {.bucket = bucket,
                                  .region = "us-east-1",
                                  .endpoint = endpoint,
                                  .path_style = 1,
                                  .prefix = "rows",
                                  .credential_ref = "env",
                                  .backoff_base_ms = 20};
  OK(adcp_s3_provider_new(&p, &so3, &err));
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l;
  adcp_ledger_options lo = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 5000};
  OK(adcp_ledger_open(&l, adcp_storage_sql(s), &lo, &err));
  adcp_object_kv loc[3] = {{"bucket", bucket}, {"endpoint", endpoint}, {"path_style", "true"}};
  adcp_object_kv loc4[4] = {loc[0], {"region", "us-east-1"}, loc[1], loc[2]};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "s3a",
                                   .provider = "s3",
                                   .location = loc4,
                                   .n_location = 4,
                                   .prefix = "rows",
                                   .compression = ADCP_OBJECT_COMPRESSION_NONE,
                                   .client = p};
  OK(adcp_ledger_configure_binding(l, &bc, &err));
  OK(adcp_ledger_register_binding(l, "s3a", &err));
  char ns[65];
  OK(adcp_ledger_collector_namespace_key(ns, l, &err));
  gen g;
  gen_init(&g, 30, 8, 1);
  adcp_commit_result res;
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "ob1",
                            .revision_id = "kept",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g,
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

/* Every live row-object version under pfx through the version listing (2 a
 * page), as "KEY VERSION\n" lines; fence records left out. */
static size_t versions_of(adcp_object_provider *p, adcp_buf *out, const char *pfx) {
  adcp_error err = {0};
  char *token = NULL;
  size_t n = 0;
  adcp_buf_reset(out);
  do {
    adcp_object_list_page pg;
    OK(adcp_object_list_versions(p, &pg, pfx, token, 2, NULL, &err));
    for (size_t i = 0; i < pg.n_entries; i++) {
      if (strstr(pg.entries[i].key, "/_collector-fence/")) continue;
      adcp_buf_printf(out, "%s %s\n", pg.entries[i].key, pg.entries[i].native_version);
      n++;
    }
    free(token);
    token = pg.next_token ? strdup(pg.next_token) : NULL;
    adcp_object_list_page_free(&pg);
  } while (token);
  adcp_buf_cstr(out);
  return n;
}

static void put_raw(adcp_object_provider *p, char ver[ADCP_OBJECT_VERSION_MAX + 1], const char *key, const char *body) {
  adcp_error err = {0};
  adcp_object_put_input in = {key, (const uint8_t *)body, strlen(body), "application/x-ndjson", NULL, 0};
  adcp_object_put_result pr;
  OK(adcp_object_put(p, &pr, &in, NULL, &err));
  assert_int_equal(pr.outcome, ADCP_OBJECT_CREATED); /* the bucket ignores If-None-Match: a new version */
  snprintf(ver, ADCP_OBJECT_VERSION_MAX + 1, "%s", pr.native_version);
}

/* Issue 28: an extra version at a pinned key (a crash between the emulated
 * PUT and its decision, a racing loser) is an orphan the key-level collector
 * never saw: it listed the latest version only, found the key referenced and
 * kept it. Listed by version, exactly the unpinned old versions go. */
static void s3_collect_versions(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  char bucket[32], q[256];
  snprintf(bucket, sizeof bucket, "collv-%d", f->dialect);
  snprintf(q, sizeof q, "/__ctl/bucket?name=%s&versioning=Enabled", bucket);
  ctl(q);
  snprintf(q, sizeof q, "/__ctl/set?bucket=%s&ignore_inm=1&age_ms=%lld", bucket, 9LL * 86400 * 1000);
  ctl(q);
  adcp_object_provider *p, *raw;
  adcp_s3_provider_options so3 = {.bucket = bucket,
                                  .region = "us-east-1",
                                  .endpoint = endpoint,
                                  .path_style = 1,
                                  .prefix = "rows",
                                  .credential_ref = "env",
                                  .backoff_base_ms = 20,
                                  .create_only = "emulated"};
  OK(adcp_s3_provider_new(&p, &so3, &err));
  so3.create_only = "conditional"; /* writes a second version behind the emulated decision's back */
  OK(adcp_s3_provider_new(&raw, &so3, &err));
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l;
  adcp_ledger_options lo = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 5000};
  OK(adcp_ledger_open(&l, adcp_storage_sql(s), &lo, &err));
  adcp_object_kv loc4[4] = {{"bucket", bucket}, {"region", "us-east-1"}, {"endpoint", endpoint}, {"path_style", "true"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "s3v",
                                   .provider = "s3",
                                   .location = loc4,
                                   .n_location = 4,
                                   .prefix = "rows",
                                   .compression = ADCP_OBJECT_COMPRESSION_NONE,
                                   .client = p};
  OK(adcp_ledger_configure_binding(l, &bc, &err));
  OK(adcp_ledger_register_binding(l, "s3v", &err));
  char ns[65], pfx[128];
  OK(adcp_ledger_collector_namespace_key(ns, l, &err));
  snprintf(pfx, sizeof pfx, "rows/%s/", ns);
  gen g;
  gen_init(&g, 30, 8, 1);
  adcp_commit_result res;
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "ob1",
                            .revision_id = "kept",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g,
                            .binding_id = "s3v"};
  OK(adcp_ledger_commit_revision(&res, l, &req, &err));
  adcp_commit_result_free(&res);
  adcp_buf before, after;
  adcp_buf_init(&before), adcp_buf_init(&after);
  size_t pinned = versions_of(p, &before, pfx);
  assert_true(pinned >= 1);
  /* The first pinned object's key and version. */
  char key[512], pin[ADCP_OBJECT_VERSION_MAX + 1];
  assert_int_equal(sscanf((const char *)before.data, "%511s %128s", key, pin), 2);
  char extra1[ADCP_OBJECT_VERSION_MAX + 1], extra2[ADCP_OBJECT_VERSION_MAX + 1], young[ADCP_OBJECT_VERSION_MAX + 1];
  char orphan1[ADCP_OBJECT_VERSION_MAX + 1];
  put_raw(raw, extra1, key, "{\"leftover\":1}\n");
  put_raw(raw, extra2, key, "{\"leftover\":2}\n");
  adcp_buf orphan;
  adcp_buf_init(&orphan);
  put(p, &orphan, ns, "lost", "1111111111111111111111111111111111111111111111111111111111111111");
  put_raw(raw, orphan1, (const char *)orphan.data, "{\"other\":1}\n"); /* a second version of the orphan */
  snprintf(q, sizeof q, "/__ctl/set?bucket=%s&age_ms=0", bucket);
  ctl(q);
  put_raw(raw, young, key, "{\"young\":1}\n"); /* newest and young: kept */
  assert_int_equal(versions_of(p, &after, pfx), pinned + 5);

  adcp_collector_report rep;
  /* page_size 2: pages end inside the versions of one key (the token resumes after a version). */
  adcp_collector_options o = {
      .version = ADCP_COLLECTOR_OPTIONS_VERSION, .acknowledge_exclusive_namespace = 1, .page_size = 2};
  OK(adcp_collector_collect_orphaned_row_objects(&rep, l, &o, &err));
  const adcp_collector_binding_report *b = &rep.bindings[0];
  if (strcmp(b->status, "collected")) fail_msg("status %s %s %s", b->status, b->refusal, b->failure);
  assert_int_equal(b->c.listed, pinned + 5);
  assert_int_equal(b->c.skipped_referenced, pinned);
  assert_int_equal(b->c.skipped_young, 1);
  assert_int_equal(b->c.deleted, 4); /* extra1, extra2, both versions of the orphan */
  assert_int_equal(b->c.failed, 0);
  assert_true(b->complete);
  adcp_collector_report_free(&rep);
  /* Left: exactly the pinned versions and the young one. */
  assert_int_equal(versions_of(p, &after, pfx), pinned + 1);
  char line[1024];
  snprintf(line, sizeof line, "%s %s\n", key, young);
  assert_non_null(strstr((const char *)after.data, line));
  for (char *ln = (char *)before.data; *ln;) { /* every pinned version is still there */
    char *nl = strchr(ln, '\n');
    snprintf(line, sizeof line, "%.*s", (int)(nl - ln + 1), ln);
    assert_non_null(strstr((const char *)after.data, line));
    ln = nl + 1;
  }
  assert_null(strstr((const char *)after.data, extra1));
  assert_null(strstr((const char *)after.data, extra2));
  assert_null(strstr((const char *)after.data, orphan1));
  OK(adcp_ledger_verify_revision(l, "acct", "kept", NULL, NULL, &err));
  adcp_buf_free(&before), adcp_buf_free(&after), adcp_buf_free(&orphan);
  free(g.line.data);
  adcp_ledger_close(l);
  adcp_storage_close(s);
  adcp_object_provider_free(p), adcp_object_provider_free(raw);
}

/* The S3 version listing's token names the first version not returned; if
 * that version is deleted before the resume, the key is listed again from its
 * newest version (seen twice, never skipped), then the keys after it. */
static void s3_version_token_resume(void **state) {
  (void)state;
  adcp_error err = {0};
  ctl("/__ctl/bucket?name=vtok&versioning=Enabled");
  ctl("/__ctl/set?bucket=vtok&ignore_inm=1");
  adcp_object_provider *p;
  adcp_s3_provider_options so3 = {.bucket = "vtok",
                                  .region = "us-east-1",
                                  .endpoint = endpoint,
                                  .path_style = 1,
                                  .prefix = "t",
                                  .credential_ref = "env",
                                  .backoff_base_ms = 20};
  OK(adcp_s3_provider_new(&p, &so3, &err));
  char a1[ADCP_OBJECT_VERSION_MAX + 1], a2[ADCP_OBJECT_VERSION_MAX + 1], a3[ADCP_OBJECT_VERSION_MAX + 1];
  char b1[ADCP_OBJECT_VERSION_MAX + 1];
  put_raw(p, a1, "t/a", "1\n"), put_raw(p, a2, "t/a", "2\n"), put_raw(p, a3, "t/a", "3\n");
  put_raw(p, b1, "t/b", "1\n");
  adcp_object_list_page pg;
  OK(adcp_object_list_versions(p, &pg, "t/", NULL, 1, NULL, &err));
  assert_int_equal(pg.n_entries, 1);
  assert_string_equal(pg.entries[0].native_version, a3); /* newest first */
  char tok[600];
  snprintf(tok, sizeof tok, "t/a!%s", a2);
  assert_string_equal(pg.next_token, tok); /* the first version not returned */
  adcp_object_list_page_free(&pg);
  OK(adcp_object_list_versions(p, &pg, "t/", tok, 2, NULL, &err));
  assert_int_equal(pg.n_entries, 2);
  assert_string_equal(pg.entries[0].native_version, a2);
  assert_string_equal(pg.entries[1].native_version, a1);
  adcp_object_list_page_free(&pg);
  int o = 0;
  OK(adcp_object_delete(p, &o, "t/a", a2, NULL, &err)); /* the resume point goes */
  OK(adcp_object_list_versions(p, &pg, "t/", tok, 10, NULL, &err));
  assert_int_equal(pg.n_entries, 3);
  assert_string_equal(pg.entries[0].native_version, a3);
  assert_string_equal(pg.entries[1].native_version, a1);
  assert_string_equal(pg.entries[2].key, "t/b");
  assert_null(pg.next_token);
  adcp_object_list_page_free(&pg);
  assert_int_equal(adcp_object_list_versions(p, &pg, "t/", "t/a", 10, NULL, &err), ADCP_EINVALID_INPUT);
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
  const struct CMUnitTest tests[] = {BOTH(s3_collect), BOTH(s3_collect_versions),
                                     cmocka_unit_test(s3_version_token_resume)};
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  fake_stop(&fake);
  return failed;
}
