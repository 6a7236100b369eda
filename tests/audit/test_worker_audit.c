/* tests/audit/test_worker_audit.c — the maintenance worker's checkpoint task
 * (src/worker/tasks_audit.c) on SQLite and PostgreSQL: a pass signs each
 * account whose log grew (and publishes to a filesystem binding), a second
 * pass finds nothing changed, the pass limit leaves the rest pending, dry
 * runs write nothing, and without a signer the task reports
 * skipped_unconfigured. */
#include "adcp/audit.h"
#include "adcp/worker.h"
#include "ledger/ledger_fixture.h"

static adcp_audit_signer *keygen(const char *dir) {
  char path[4200], cmd[4500];
  snprintf(path, sizeof path, "%s/k.pem", dir);
  snprintf(cmd, sizeof cmd, "openssl genpkey -algorithm ed25519 -out '%s' 2>/dev/null", path);
  assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
  adcp_audit_signer *s;
  adcp_error err = {0};
  OK(adcp_audit_signer_load(&s, path, &err));
  return s;
}

static int64_t count(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c, sql, NULL, 0, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  int64_t v = adcp_sql_get_int64(r, 0);
  adcp_sql_rows_free(r);
  return v;
}

static void scheduled_checkpoints(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_ledger *l = ledger_on(c, 0);
  char *dir = tu_mkdtemp();
  adcp_audit_signer *signer = keygen(dir);
  static const char *const accounts[] = {"a1", "a2", "a3"};
  for (int i = 0; i < 3; i++) {
    char ob[16], rev[16];
    snprintf(ob, sizeof ob, "ob_%d", i);
    snprintf(rev, sizeof rev, "rev_%d", i);
    adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                              .account_id = accounts[i],
                              .obligation_id = ob,
                              .revision_id = rev,
                              .finality = ADCP_FINALITY_SNAPSHOT,
                              .period_start = "2026-10-01T00:00:00Z",
                              .period_end = "2026-10-02T00:00:00Z"};
    adcp_commit_result res;
    OK(adcp_ledger_commit_revision(&res, l, &req, &err));
    adcp_commit_result_free(&res);
  }
  adcp_object_provider *fs;
  char root[4300];
  snprintf(root, sizeof root, "%s/bucket", dir);
  adcp_fs_provider_options fo = {.root_name = "demo", .prefix = "rows", .create_root = 1};
  OK(adcp_fs_provider_new(&fs, root, &fo, &err));
  OK(adcp_object_probe(fs, NULL, &err)); /* creates the root */
  adcp_worker_audit_ctx ctx = {.version = ADCP_WORKER_AUDIT_CTX_VERSION, .conn = c, .signer = signer, .publish = fs};
  adcp_worker_pass pass = {.version = ADCP_WORKER_PASS_VERSION, .limit = 2};
  adcp_worker_report rep = {0};
  /* Limit 2: two accounts signed, one left pending. */
  OK(adcp_worker_task_audit_checkpoint(&ctx, &pass, &rep, &err));
  assert_int_equal(adcp_worker_report_get(&rep, "checkpointed"), 2);
  assert_int_equal(adcp_worker_report_get(&rep, "published"), 2);
  assert_int_equal(adcp_worker_report_get(&rep, "pending"), 1);
  assert_int_equal(adcp_worker_report_get(&rep, "failed"), 0);
  memset(&rep, 0, sizeof rep);
  pass.limit = 10;
  OK(adcp_worker_task_audit_checkpoint(&ctx, &pass, &rep, &err));
  assert_int_equal(adcp_worker_report_get(&rep, "checkpointed"), 1);
  assert_int_equal(adcp_worker_report_get(&rep, "unchanged"), 2);
  assert_int_equal(count(c, "SELECT count(*) FROM adcp_audit_checkpoints"), 3);
  adcp_audit_checkpoint *items;
  size_t n;
  OK(adcp_audit_checkpoints_fetch(&items, &n, NULL, NULL, fs, &err));
  assert_int_equal(n, 3);
  adcp_audit_checkpoints_free(items, n);
  /* Nothing changed: nothing signed. A dry run counts without writing. */
  memset(&rep, 0, sizeof rep);
  OK(adcp_worker_task_audit_checkpoint(&ctx, &pass, &rep, &err));
  assert_int_equal(adcp_worker_report_get(&rep, "unchanged"), 3);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "a1",
                            .obligation_id = "ob_0",
                            .revision_id = "rev_x",
                            .finality = ADCP_FINALITY_SNAPSHOT};
  adcp_commit_result res;
  OK(adcp_ledger_commit_revision(&res, l, &req, &err));
  adcp_commit_result_free(&res);
  memset(&rep, 0, sizeof rep);
  pass.dry_run = 1;
  OK(adcp_worker_task_audit_checkpoint(&ctx, &pass, &rep, &err));
  assert_int_equal(adcp_worker_report_get(&rep, "checkpointed"), 1);
  assert_int_equal(count(c, "SELECT count(*) FROM adcp_audit_checkpoints"), 3);
  /* No signer configured. */
  adcp_worker_audit_ctx none = {.version = ADCP_WORKER_AUDIT_CTX_VERSION, .conn = c};
  memset(&rep, 0, sizeof rep);
  OK(adcp_worker_task_audit_checkpoint(&none, &pass, &rep, &err));
  assert_int_equal(adcp_worker_report_get(&rep, "skipped_unconfigured"), 1);
  adcp_object_provider_free(fs);
  adcp_audit_signer_free(signer);
  adcp_ledger_close(l);
  adcp_storage_close(s);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {BOTH(scheduled_checkpoints)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
