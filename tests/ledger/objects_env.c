/* tests/ledger/objects_env.c — room tests/ledger: the object-kind test
 * environment shared by test_objects.c and test_objects_staged.c (a migrated
 * database, a filesystem bucket in a temporary directory, a ledger with one
 * binding "fs1"), and the commit and read checks both use. */
#include "objects_env.h"

adcp_ledger *ledger_with(adcp_sql_conn *c, adcp_object_provider *p, int compression, const char *ns, const char *tmpl,
                         adcp_error *err, int *rc_out) {
  adcp_ledger *l;
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .deployment_namespace = ns, .write_deadline_ms = 2000};
  int rc = adcp_ledger_open(&l, c, &o, err);
  if (rc) fail_msg("open: %s", err->message);
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "fs1",
                                   .provider = "filesystem",
                                   .location = loc,
                                   .n_location = 1,
                                   .prefix = "rows",
                                   .key_template = tmpl,
                                   .compression = compression,
                                   .client = p};
  *rc_out = adcp_ledger_configure_binding(l, &bc, err);
  return l;
}

void env_open_hooked(objenv *e, const fixture *f, int compression, int (*hook)(void *, int, const char *), void *hctx) {
  adcp_error err = {0};
  memset(e, 0, sizeof *e);
  e->s = open_migrated(f);
  e->c = adcp_storage_sql(e->s);
  e->dir = tu_mkdtemp();
  snprintf(e->root, sizeof e->root, "%s/bucket", e->dir);
  adcp_fs_provider_options po = {"bucket", "rows", 1, 0, hook, hctx};
  OK(adcp_fs_provider_new(&e->p, e->root, &po, &err));
  int rc;
  e->l = ledger_with(e->c, e->p, compression, NULL, NULL, &err, &rc);
  OK(rc);
}

void env_open(objenv *e, const fixture *f, int compression) { env_open_hooked(e, f, compression, NULL, NULL); }

void env_close(objenv *e) {
  adcp_ledger_close(e->l);
  adcp_object_provider_free(e->p);
  adcp_storage_close(e->s);
  tu_rmtree(e->dir);
  free(e->dir);
}

void exec(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  OK(adcp_sql_exec_script(c, sql, &err));
}

void expire_all(adcp_sql_conn *c) {
  exec(c, "UPDATE adcp_reporting_row_write_intents SET expires_at = '2001-01-01T00:00:00.000000Z'");
  exec(c,
       "UPDATE adcp_reporting_obligations SET lease_expires_at = '2001-01-01T00:00:00.000000Z' "
       "WHERE lease_owner IS NOT NULL");
}

int commit_obj(adcp_commit_result *res, adcp_ledger *l, const char *rev, gen *g, const char *binding,
               int (*hook)(void *, int), void *hctx, adcp_error *err) {
  g->next = 0;
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "ob1",
                            .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = g,
                            .binding_id = binding,
                            .step_hook = hook,
                            .step_ctx = hctx};
  return adcp_ledger_commit_revision(res, l, &req, err);
}

void expected_text(adcp_buf *out, gen *g) {
  adcp_buf_reset(out);
  for (uint64_t i = 0; i < g->n; i++) {
    gen_line(g, i);
    adcp_buf_append(out, g->line.data, g->line.len);
    adcp_buf_append_byte(out, '\n');
  }
}

int collect(void *ctx, const uint8_t *b, size_t n, uint64_t rows, adcp_error *err) {
  (void)rows, (void)err;
  return adcp_buf_append(ctx, b, n);
}

void check_reads(adcp_ledger *l, const char *rev, gen *g) {
  adcp_error err = {0};
  adcp_buf exp, got;
  adcp_buf_init(&exp);
  adcp_buf_init(&got);
  expected_text(&exp, g);
  OK(adcp_ledger_verify_revision(l, "acct", rev, collect, &got, &err));
  assert_int_equal(got.len, exp.len);
  if (exp.len) assert_memory_equal(got.data, exp.data, exp.len);
  adcp_ledger_page page;
  adcp_ledger_page_init(&page);
  uint64_t off = g->n > 10010 ? 9990 : 0, lim = 30;
  OK(adcp_ledger_read_revision_rows(&page, l, "acct", rev, off, lim, &err));
  assert_int_equal(page.count, g->n < off + lim ? g->n - off : lim);
  /* compare against the expected slice */
  size_t start = 0;
  for (uint64_t i = 0; i < off; i++)
    start = (size_t)((uint8_t *)memchr(exp.data + start, '\n', exp.len - start) - exp.data) + 1;
  if (page.data.len) assert_memory_equal(page.data.data, exp.data + start, page.data.len);
  /* the whole revision as one page checks the envelope too */
  OK(adcp_ledger_read_revision_rows(&page, l, "acct", rev, 0, 0, &err));
  assert_int_equal(page.envelope_verified, 1);
  assert_int_equal(page.data.len, exp.len);
  adcp_ledger_page_free(&page);
  adcp_buf_free(&exp);
  adcp_buf_free(&got);
}
