/* tests/ledger/test_read_limits.c — bounds and configuration guards found in
 * review: a page larger than the handle's page limit is refused (no call holds
 * a whole large revision); two object bindings over one store with overlapping
 * prefixes are refused; a gzip locator recording an implausible stored size is
 * refused before anything is fetched. Runs on SQLite and PostgreSQL. */
#include "ledger_fixture.h"

#include "adcp/objects.h"

static void commit_rows(adcp_ledger *l, const char *rev, uint64_t n, size_t pad) {
  adcp_error err = {0};
  gen g = {.n = n, .pad = pad, .big = -1};
  adcp_buf_init(&g.line);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct_a",
                            .obligation_id = "ob_limits",
                            .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-11-01T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g};
  adcp_commit_result res;
  OK(adcp_ledger_commit_revision(&res, l, &req, &err));
  adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
}

static void page_limit(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l;
  /* 150 KiB page limit: 2,000 rows of ~112 bytes are 224 KB in four 56 KB segments. */
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .max_page_bytes = 150 * 1024};
  OK(adcp_ledger_open(&l, adcp_storage_sql(s), &o, &err));
  commit_rows(l, "rrev_limits_1", 2000, 80);
  adcp_ledger_page page;
  adcp_ledger_page_init(&page);
  /* The whole revision (limit 0) and a large page are refused with a precise message. */
  assert_int_equal(adcp_ledger_read_revision_rows(&page, l, "acct_a", "rrev_limits_1", 0, 0, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "page limit"));
  assert_int_equal(adcp_ledger_read_revision_rows(&page, l, "acct_a", "rrev_limits_1", 100, 1500, &err),
                   ADCP_EINVALID_INPUT);
  /* A page within the limit (one or two segments) is served and verified. */
  OK(adcp_ledger_read_revision_rows(&page, l, "acct_a", "rrev_limits_1", 490, 20, &err));
  assert_int_equal(page.count, 20);
  /* Streaming the whole revision is not limited. */
  OK(adcp_ledger_verify_revision(l, "acct_a", "rrev_limits_1", NULL, NULL, &err));
  adcp_ledger_page_free(&page);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

static void overlapping_bindings(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  char *dir = tu_mkdtemp();
  char root[4200];
  snprintf(root, sizeof root, "%s/bucket", dir);
  adcp_object_provider *p1, *p2, *p3;
  adcp_fs_provider_options po1 = {"bucket", "rows", 1, 0, NULL, NULL};
  adcp_fs_provider_options po2 = {"bucket", "rows/sub", 1, 0, NULL, NULL};
  adcp_fs_provider_options po3 = {"bucket", "other", 1, 0, NULL, NULL};
  OK(adcp_fs_provider_new(&p1, root, &po1, &err));
  OK(adcp_fs_provider_new(&p2, root, &po2, &err));
  OK(adcp_fs_provider_new(&p3, root, &po3, &err));
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config b1 = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "fs1",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "rows",
      .compression = ADCP_OBJECT_COMPRESSION_NONE,
      .client = p1,
  };
  OK(adcp_ledger_configure_binding(l, &b1, &err));
  /* Same store, same prefix under another ID, through the same client. */
  adcp_ledger_binding_config b1b = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "fs1b",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "rows",
      .compression = ADCP_OBJECT_COMPRESSION_GZIP,
      .client = p1,
  };
  assert_int_equal(adcp_ledger_configure_binding(l, &b1b, &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "overlap binding fs1"));
  /* Same store (same location), nested prefix, another client. */
  adcp_ledger_binding_config b2 = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "fs2",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "rows/sub",
      .compression = ADCP_OBJECT_COMPRESSION_NONE,
      .client = p2,
  };
  assert_int_equal(adcp_ledger_configure_binding(l, &b2, &err), ADCP_EUNSAFE_BINDING);
  /* A disjoint prefix in the same store is fine ("rowsX" would be too: not a path prefix). */
  adcp_ledger_binding_config b3 = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "fs3",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "other",
      .compression = ADCP_OBJECT_COMPRESSION_NONE,
      .client = p3,
  };
  OK(adcp_ledger_configure_binding(l, &b3, &err));
  adcp_ledger_close(l);
  adcp_object_provider_free(p1), adcp_object_provider_free(p2), adcp_object_provider_free(p3);
  adcp_storage_close(s);
  tu_rmtree(dir);
  free(dir);
}

static void implausible_gzip_locator(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_ledger *l = ledger_on(c, -1);
  char *dir = tu_mkdtemp();
  char root[4200];
  snprintf(root, sizeof root, "%s/bucket", dir);
  adcp_object_provider *p;
  adcp_fs_provider_options po = {"bucket", "rows", 1, 0, NULL, NULL};
  OK(adcp_fs_provider_new(&p, root, &po, &err));
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config b = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                  .id = "fsg",
                                  .provider = "filesystem",
                                  .location = loc,
                                  .n_location = 1,
                                  .prefix = "rows",
                                  .compression = ADCP_OBJECT_COMPRESSION_GZIP,
                                  .client = p};
  OK(adcp_ledger_configure_binding(l, &b, &err));
  gen g = {.n = 600, .pad = 40, .big = -1};
  adcp_buf_init(&g.line);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct_a",
                            .obligation_id = "ob_gz",
                            .revision_id = "rrev_gz_1",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-11-01T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g,
                            .binding_id = "fsg"};
  adcp_commit_result res;
  OK(adcp_ledger_commit_revision(&res, l, &req, &err));
  adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
  adcp_ledger_page page;
  adcp_ledger_page_init(&page);
  OK(adcp_ledger_read_revision_rows(&page, l, "acct_a", "rrev_gz_1", 0, 10, &err));
  /* A database editor records a huge stored size: refused before any fetch. */
  const char *untrigger = f->dialect == ADCP_SQL_POSTGRES ? "ALTER TABLE adcp_reporting_row_chunks DISABLE TRIGGER USER"
                                                          : "DROP TRIGGER adcp_reporting_row_chunks_immutable";
  if (adcp_sql_exec_script(c, untrigger, &err) ||
      adcp_sql_exec(c,
                    "UPDATE adcp_reporting_row_chunks SET physical_byte_count = 1000000000 "
                    "WHERE row_set_id IN (SELECT row_set_id FROM adcp_reporting_row_sets)",
                    NULL, 0, &err))
    fail_msg("tamper: %s", err.message);
  assert_int_equal(adcp_ledger_read_revision_rows(&page, l, "acct_a", "rrev_gz_1", 0, 10, &err),
                   ADCP_EROWS_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "implausible stored size"));
  adcp_ledger_page_free(&page);
  adcp_ledger_close(l);
  adcp_object_provider_free(p);
  adcp_storage_close(s);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {BOTH(page_limit), BOTH(overlapping_bindings), BOTH(implausible_gzip_locator)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
