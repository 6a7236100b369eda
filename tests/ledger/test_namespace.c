/* tests/ledger/test_namespace.c — the deployment namespace, on SQLite and
 * PostgreSQL: a database used under the default namespace and then another
 * one (and the reverse) keeps working for postgres-kind commits, reads and
 * the binding list; an object binding registered under namespace A is
 * refused under B with a message naming the namespace and the docs, while
 * postgres-kind commits under B still work; listing bindings never writes
 * (it runs on a read-only connection). */
#include "adcp/objects.h"
#include "ledger_fixture.h"

static adcp_ledger *open_ns(adcp_sql_conn *c, const char *ns) {
  adcp_error err = {0};
  adcp_ledger *l;
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .deployment_namespace = ns};
  OK(adcp_ledger_open(&l, c, &o, &err));
  return l;
}

static int commit_pg(adcp_ledger *l, const char *rev, gen *g, adcp_error *err) {
  adcp_commit_result res;
  int rc = commit_gen(&res, l, "acct", "ob1", rev, ADCP_FINALITY_SNAPSHOT, g, err);
  if (!rc) {
    assert_string_equal(res.row_binding_id, "postgres");
    adcp_commit_result_free(&res);
  }
  return rc;
}

static void list_ok(adcp_ledger *l) {
  adcp_error err = {0};
  adcp_binding_info *bi;
  size_t n;
  OK(adcp_ledger_list_bindings(&bi, &n, l, &err));
  assert_int_equal(n, 1);
  assert_string_equal(bi[0].id, "postgres");
  assert_int_equal(bi[0].configured && bi[0].identity_matches && bi[0].namespace_matches, 1);
  adcp_binding_info_free(bi);
}

static void switch_namespace(const fixture *f, const char *first, const char *second) {
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  gen g1, g2;
  gen_init(&g1, 700, 6, 1);
  gen_init(&g2, 700, 6, 2);
  adcp_ledger *a = open_ns(c, first);
  OK(commit_pg(a, "r1", &g1, &err));
  list_ok(a);
  adcp_ledger_close(a);
  adcp_ledger *b = open_ns(c, second);
  OK(commit_pg(b, "r2", &g2, &err));
  OK(adcp_ledger_verify_revision(b, "acct", "r1", NULL, NULL, &err));
  OK(adcp_ledger_verify_revision(b, "acct", "r2", NULL, NULL, &err));
  list_ok(b);
  OK(adcp_ledger_register_binding(b, "postgres", &err));
  adcp_ledger_close(b);
  /* and back again */
  a = open_ns(c, first);
  gen g3;
  gen_init(&g3, 10, 6, 3);
  OK(commit_pg(a, "r3", &g3, &err));
  OK(adcp_ledger_verify_revision(a, "acct", "r2", NULL, NULL, &err));
  list_ok(a);
  adcp_ledger_close(a);
  adcp_buf_free(&g1.line), adcp_buf_free(&g2.line), adcp_buf_free(&g3.line);
  adcp_storage_close(s);
}

static void default_then_custom(void **state) { switch_namespace(*state, NULL, "tenant-b"); }
static void custom_then_default(void **state) { switch_namespace(*state, "tenant-a", NULL); }

static void object_binding_foreign(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  char *dir = tu_mkdtemp();
  char root[600];
  snprintf(root, sizeof root, "%s/bucket", dir);
  adcp_object_provider *p;
  adcp_fs_provider_options po = {"bucket", "rows", 1, 0, NULL, NULL};
  OK(adcp_fs_provider_new(&p, root, &po, &err));
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "fs1",
                                   .provider = "filesystem",
                                   .location = loc,
                                   .n_location = 1,
                                   .prefix = "rows",
                                   .compression = 1,
                                   .client = p};
  adcp_ledger *a = open_ns(c, "ns-a");
  OK(adcp_ledger_configure_binding(a, &bc, &err));
  OK(adcp_ledger_register_binding(a, "fs1", &err));
  adcp_ledger_close(a);

  adcp_ledger *b = open_ns(c, "ns-b");
  OK(adcp_ledger_configure_binding(b, &bc, &err));
  assert_int_equal(adcp_ledger_register_binding(b, "fs1", &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "binding fs1 was registered under another deployment namespace"));
  assert_non_null(strstr(err.message, "docs/objects.md"));
  gen g;
  gen_init(&g, 50, 6, 1);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "ob1",
                            .revision_id = "o1",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g,
                            .binding_id = "fs1"};
  adcp_commit_result res;
  assert_int_equal(adcp_ledger_commit_revision(&res, b, &req, &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "another deployment namespace"));
  /* postgres kind is unaffected */
  OK(commit_pg(b, "p1", &g, &err));
  OK(adcp_ledger_verify_revision(b, "acct", "p1", NULL, NULL, &err));
  adcp_binding_info *bi;
  size_t n;
  OK(adcp_ledger_list_bindings(&bi, &n, b, &err));
  assert_int_equal(n, 2);
  assert_string_equal(bi[0].id, "fs1");
  assert_int_equal(bi[0].namespace_matches, 0);
  assert_int_equal(bi[0].identity_matches, 1);
  assert_string_equal(bi[1].id, "postgres");
  assert_int_equal(bi[1].namespace_matches, 1);
  adcp_binding_info_free(bi);
  adcp_ledger_close(b);
  /* under ns-a the object binding still writes */
  a = open_ns(c, "ns-a");
  OK(adcp_ledger_configure_binding(a, &bc, &err));
  g.next = 0;
  OK(adcp_ledger_commit_revision(&res, a, &req, &err));
  assert_string_equal(res.row_binding_id, "fs1");
  adcp_commit_result_free(&res);
  adcp_ledger_close(a);
  adcp_buf_free(&g.line);
  adcp_object_provider_free(p);
  adcp_storage_close(s);
  tu_rmtree(dir);
  free(dir);
}

/* binding list on a fresh database: shows the implicit postgres binding and
 * writes nothing, even on a connection that refuses writes. */
static void list_read_only(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  OK(adcp_sql_exec_script(
      c, f->dialect == ADCP_SQL_POSTGRES ? "SET default_transaction_read_only = on" : "PRAGMA query_only = 1", &err));
  adcp_ledger *l = open_ns(c, "ro");
  list_ok(l);
  adcp_binding_info *bi;
  size_t n;
  OK(adcp_ledger_list_bindings(&bi, &n, l, &err));
  assert_string_equal(bi[0].state, "active");
  adcp_binding_info_free(bi);
  /* the connection really refuses writes: registration fails there */
  assert_int_not_equal(adcp_ledger_register_binding(l, "postgres", &err), 0);
  adcp_ledger_close(l);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_row_bindings"), 0);
  adcp_storage_close(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {BOTH(default_then_custom), BOTH(custom_then_default), BOTH(object_binding_foreign),
                                     BOTH(list_read_only)};
  return cmocka_run_group_tests_name("ledger deployment namespace (SQLite + PostgreSQL)", tests, NULL, NULL);
}
