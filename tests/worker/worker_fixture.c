/* tests/worker/worker_fixture.c — room tests/worker: the definitions behind worker_fixture.h,
 * compiled once into the test library. */
#include "worker_fixture.h"

#include "support/support_fs.h"

void wenv_open(wenv *e, const fixture *f, const char *dir) {
  adcp_error err = {0};
  memset(e, 0, sizeof *e);
  e->s = open_migrated(f);
  e->c = adcp_storage_sql(e->s);
  snprintf(e->root, sizeof e->root, "%s/b", dir);
  mkdir(e->root, 0700);
  adcp_fs_provider_options po = {"b", "rows", 1, 0, NULL, NULL};
  OK(adcp_fs_provider_new(&e->p, e->root, &po, &err));
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 2000};
  OK(adcp_ledger_open(&e->l, e->c, &o, &err));
  adcp_object_kv loc[1] = {{"root", "b"}};
  adcp_ledger_binding_config bc = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "fs1",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "rows",
      .compression = ADCP_OBJECT_COMPRESSION_GZIP,
      .client = e->p,
  };
  OK(adcp_ledger_configure_binding(e->l, &bc, &err));
}

void wenv_close(wenv *e) {
  adcp_ledger_close(e->l);
  adcp_object_provider_free(e->p);
  adcp_storage_close(e->s);
}

void wenv_config(char *out, size_t n, const char *dir, const char *extra) {
  snprintf(out, n,
           "{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":"
           "\"%s/b\",\"prefix\":\"rows\"}]%s%s}",
           dir, extra && *extra ? "," : "", extra ? extra : "");
}

int wenv_abort_after_upload(void *ctx, int step) {
  (void)ctx;
  return step == ADCP_LEDGER_STEP_UPLOADED;
}

void wenv_abandon_unconfigured(wenv *e, const char *dir) {
  adcp_error err = {0};
  char root[800];
  snprintf(root, sizeof root, "%s/c", dir);
  mkdir(root, 0700);
  adcp_object_provider *p;
  adcp_fs_provider_options po = {"c", "rows", 1, 0, NULL, NULL};
  OK(adcp_fs_provider_new(&p, root, &po, &err));
  adcp_ledger *l;
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 2000};
  OK(adcp_ledger_open(&l, e->c, &o, &err));
  adcp_object_kv loc[1] = {{"root", "c"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "fs2",
                                   .provider = "filesystem",
                                   .location = loc,
                                   .n_location = 1,
                                   .prefix = "rows",
                                   .compression = ADCP_OBJECT_COMPRESSION_GZIP,
                                   .client = p};
  OK(adcp_ledger_configure_binding(l, &bc, &err));
  gen g;
  gen_init(&g, 10, 8, 99);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "elsewhere",
                            .revision_id = "x1",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g,
                            .binding_id = "fs2",
                            .step_hook = wenv_abort_after_upload};
  adcp_commit_result res;
  assert_int_equal(adcp_ledger_commit_revision(&res, l, &req, &err), ADCP_EABORTED);
  free(g.line.data);
  adcp_ledger_close(l);
  adcp_object_provider_free(p);
}

void wenv_abandon(wenv *e, int first, int n) {
  adcp_error err = {0};
  for (int i = first; i < first + n; i++) {
    gen g;
    gen_init(&g, 10, 8, (uint64_t)i);
    char ob[32], rev[32];
    snprintf(ob, sizeof ob, "ob%d", i);
    snprintf(rev, sizeof rev, "r%d", i);
    adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                              .account_id = "acct",
                              .obligation_id = ob,
                              .revision_id = rev,
                              .finality = ADCP_FINALITY_SNAPSHOT,
                              .period_start = "2026-10-01T00:00:00Z",
                              .period_end = "2026-10-02T00:00:00Z",
                              .next_row = gen_next,
                              .row_ctx = &g,
                              .binding_id = "fs1",
                              .step_hook = wenv_abort_after_upload};
    adcp_commit_result res;
    assert_int_equal(adcp_ledger_commit_revision(&res, e->l, &req, &err), ADCP_EABORTED);
    free(g.line.data);
  }
  OK(adcp_sql_exec_script(e->c,
                          "UPDATE adcp_reporting_row_write_intents SET expires_at = '2001-01-01T00:00:00.000000Z';"
                          "UPDATE adcp_reporting_obligations SET lease_expires_at = '2001-01-01T00:00:00.000000Z' "
                          "WHERE lease_owner IS NOT NULL;",
                          &err));
}

int64_t wenv_scalar(adcp_sql_conn *c, const char *sql) { return tu_scalar(c, sql); }

int wenv_count_files(const char *dir) { return tu_count_jsonl(dir); }
