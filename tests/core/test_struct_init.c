/* tests/core/test_struct_init.c — room core (tests): the versioned structs' ADCP_<NAME>_INIT
 * macros and adcp_<name>_init functions (issue 31): each init sets the version and zeroes
 * the rest, refuses version 0 and one newer than the library; and one call per room
 * refuses a struct of a version it does not know. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "adcp/audit.h"
#include "adcp/collector.h"
#include "adcp/config.h"
#include "adcp/feed.h"
#include "adcp/import.h"
#include "adcp/inline.h"
#include "adcp/ledger.h"
#include "adcp/log.h"
#include "adcp/objects.h"
#include "adcp/principals.h"
#include "adcp/retention.h"
#include "adcp/sql.h"
#include "adcp/storage.h"
#include "adcp/worker.h"

/* Fills a struct with 0xA5, inits it, and checks: version set, every other byte zero. */
#define CHECK_INIT(type, fn, VER) \
  do { \
    type s, zero; \
    memset(&s, 0xA5, sizeof s); \
    memset(&zero, 0, sizeof zero); \
    assert_int_equal(fn(&s, (unsigned)(VER)), 0); \
    assert_int_equal(s.version, (VER)); \
    zero.version = (VER); \
    assert_memory_equal(&s, &zero, sizeof s); \
    memset(&s, 0xA5, sizeof s); \
    assert_int_equal(fn(&s, 0), ADCP_EINVALID_INPUT); \
    assert_int_equal(fn(&s, (unsigned)(VER) + 1), ADCP_EINVALID_INPUT); \
    assert_int_equal(fn(NULL, (unsigned)(VER)), ADCP_EINVALID_INPUT); \
  } while (0)

/* The static initializer sets the version (the other fields are zero by C's rules). */
#define CHECK_STATIC(type, INIT, VER) \
  do { \
    type s = INIT; \
    assert_int_equal(s.version, (VER)); \
  } while (0)

static void test_init_functions(void **state) {
  (void)state;
  CHECK_INIT(adcp_audit_retirement, adcp_audit_retirement_init, ADCP_AUDIT_RETIREMENT_VERSION);
  CHECK_INIT(adcp_audit_options, adcp_audit_options_init, ADCP_AUDIT_OPTIONS_VERSION);
  CHECK_INIT(adcp_collector_options, adcp_collector_options_init, ADCP_COLLECTOR_OPTIONS_VERSION);
  CHECK_INIT(adcp_config_search, adcp_config_search_init, ADCP_CONFIG_SEARCH_VERSION);
  CHECK_INIT(adcp_config_apply_options, adcp_config_apply_options_init, ADCP_CONFIG_APPLY_OPTIONS_VERSION);
  CHECK_INIT(adcp_changes_query, adcp_changes_query_init, ADCP_CHANGES_QUERY_VERSION);
  CHECK_INIT(adcp_feed_prune_options, adcp_feed_prune_options_init, ADCP_FEED_PRUNE_OPTIONS_VERSION);
  CHECK_INIT(adcp_import_options, adcp_import_options_init, ADCP_IMPORT_OPTIONS_VERSION);
  CHECK_INIT(adcp_inline_options, adcp_inline_options_init, ADCP_INLINE_OPTIONS_VERSION);
  CHECK_INIT(adcp_ledger_options, adcp_ledger_options_init, ADCP_LEDGER_OPTIONS_VERSION);
  CHECK_INIT(adcp_ledger_commit, adcp_ledger_commit_init, ADCP_LEDGER_COMMIT_VERSION);
  CHECK_INIT(adcp_ledger_binding_config, adcp_ledger_binding_config_init, ADCP_LEDGER_BINDING_CONFIG_VERSION);
  CHECK_INIT(adcp_logger, adcp_logger_init, ADCP_LOGGER_VERSION);
  CHECK_INIT(adcp_object_provider, adcp_object_provider_init, ADCP_OBJECT_PROVIDER_VERSION);
  CHECK_INIT(adcp_principal_put, adcp_principal_put_init, ADCP_PRINCIPAL_PUT_VERSION);
  CHECK_INIT(adcp_retention_policy, adcp_retention_policy_init, ADCP_RETENTION_POLICY_VERSION);
  CHECK_INIT(adcp_retention_options, adcp_retention_options_init, ADCP_RETENTION_OPTIONS_VERSION);
  CHECK_INIT(adcp_migrate_options, adcp_migrate_options_init, ADCP_MIGRATE_OPTIONS_VERSION);
  CHECK_INIT(adcp_storage_options, adcp_storage_options_init, ADCP_STORAGE_OPTIONS_VERSION);
  CHECK_INIT(adcp_worker_pass, adcp_worker_pass_init, ADCP_WORKER_PASS_VERSION);
  CHECK_INIT(adcp_worker_task, adcp_worker_task_init, ADCP_WORKER_TASK_VERSION);
  CHECK_INIT(adcp_worker_options, adcp_worker_options_init, ADCP_WORKER_OPTIONS_VERSION);
  CHECK_INIT(adcp_worker_run_options, adcp_worker_run_options_init, ADCP_WORKER_RUN_OPTIONS_VERSION);
  CHECK_INIT(adcp_worker_sweep_ctx, adcp_worker_sweep_ctx_init, ADCP_WORKER_SWEEP_CTX_VERSION);
  CHECK_INIT(adcp_worker_prune_ctx, adcp_worker_prune_ctx_init, ADCP_WORKER_PRUNE_CTX_VERSION);
  CHECK_INIT(adcp_worker_issues_ctx, adcp_worker_issues_ctx_init, ADCP_WORKER_ISSUES_CTX_VERSION);
  CHECK_INIT(adcp_worker_stalled_ctx, adcp_worker_stalled_ctx_init, ADCP_WORKER_STALLED_CTX_VERSION);
  CHECK_INIT(adcp_worker_audit_ctx, adcp_worker_audit_ctx_init, ADCP_WORKER_AUDIT_CTX_VERSION);
  CHECK_INIT(adcp_retention_task_ctx, adcp_retention_task_ctx_init, ADCP_RETENTION_TASK_CTX_VERSION);
  CHECK_INIT(adcp_worker_collector_ctx, adcp_worker_collector_ctx_init, ADCP_WORKER_COLLECTOR_CTX_VERSION);
}

static void test_init_macros(void **state) {
  (void)state;
  CHECK_STATIC(adcp_audit_retirement, ADCP_AUDIT_RETIREMENT_INIT, ADCP_AUDIT_RETIREMENT_VERSION);
  CHECK_STATIC(adcp_audit_options, ADCP_AUDIT_OPTIONS_INIT, ADCP_AUDIT_OPTIONS_VERSION);
  CHECK_STATIC(adcp_collector_options, ADCP_COLLECTOR_OPTIONS_INIT, ADCP_COLLECTOR_OPTIONS_VERSION);
  CHECK_STATIC(adcp_config_search, ADCP_CONFIG_SEARCH_INIT, ADCP_CONFIG_SEARCH_VERSION);
  CHECK_STATIC(adcp_config_apply_options, ADCP_CONFIG_APPLY_OPTIONS_INIT, ADCP_CONFIG_APPLY_OPTIONS_VERSION);
  CHECK_STATIC(adcp_changes_query, ADCP_CHANGES_QUERY_INIT, ADCP_CHANGES_QUERY_VERSION);
  CHECK_STATIC(adcp_feed_prune_options, ADCP_FEED_PRUNE_OPTIONS_INIT, ADCP_FEED_PRUNE_OPTIONS_VERSION);
  CHECK_STATIC(adcp_import_options, ADCP_IMPORT_OPTIONS_INIT, ADCP_IMPORT_OPTIONS_VERSION);
  CHECK_STATIC(adcp_inline_options, ADCP_INLINE_OPTIONS_INIT, ADCP_INLINE_OPTIONS_VERSION);
  CHECK_STATIC(adcp_ledger_options, ADCP_LEDGER_OPTIONS_INIT, ADCP_LEDGER_OPTIONS_VERSION);
  CHECK_STATIC(adcp_ledger_commit, ADCP_LEDGER_COMMIT_INIT, ADCP_LEDGER_COMMIT_VERSION);
  CHECK_STATIC(adcp_ledger_binding_config, ADCP_LEDGER_BINDING_CONFIG_INIT, ADCP_LEDGER_BINDING_CONFIG_VERSION);
  CHECK_STATIC(adcp_logger, ADCP_LOGGER_INIT, ADCP_LOGGER_VERSION);
  CHECK_STATIC(adcp_object_provider, ADCP_OBJECT_PROVIDER_INIT, ADCP_OBJECT_PROVIDER_VERSION);
  CHECK_STATIC(adcp_principal_put, ADCP_PRINCIPAL_PUT_INIT, ADCP_PRINCIPAL_PUT_VERSION);
  CHECK_STATIC(adcp_retention_policy, ADCP_RETENTION_POLICY_INIT, ADCP_RETENTION_POLICY_VERSION);
  CHECK_STATIC(adcp_retention_options, ADCP_RETENTION_OPTIONS_INIT, ADCP_RETENTION_OPTIONS_VERSION);
  CHECK_STATIC(adcp_migrate_options, ADCP_MIGRATE_OPTIONS_INIT, ADCP_MIGRATE_OPTIONS_VERSION);
  CHECK_STATIC(adcp_storage_options, ADCP_STORAGE_OPTIONS_INIT, ADCP_STORAGE_OPTIONS_VERSION);
  CHECK_STATIC(adcp_worker_pass, ADCP_WORKER_PASS_INIT, ADCP_WORKER_PASS_VERSION);
  CHECK_STATIC(adcp_worker_task, ADCP_WORKER_TASK_INIT, ADCP_WORKER_TASK_VERSION);
  CHECK_STATIC(adcp_worker_options, ADCP_WORKER_OPTIONS_INIT, ADCP_WORKER_OPTIONS_VERSION);
  CHECK_STATIC(adcp_worker_run_options, ADCP_WORKER_RUN_OPTIONS_INIT, ADCP_WORKER_RUN_OPTIONS_VERSION);
  CHECK_STATIC(adcp_worker_sweep_ctx, ADCP_WORKER_SWEEP_CTX_INIT, ADCP_WORKER_SWEEP_CTX_VERSION);
  CHECK_STATIC(adcp_worker_prune_ctx, ADCP_WORKER_PRUNE_CTX_INIT, ADCP_WORKER_PRUNE_CTX_VERSION);
  CHECK_STATIC(adcp_worker_issues_ctx, ADCP_WORKER_ISSUES_CTX_INIT, ADCP_WORKER_ISSUES_CTX_VERSION);
  CHECK_STATIC(adcp_worker_stalled_ctx, ADCP_WORKER_STALLED_CTX_INIT, ADCP_WORKER_STALLED_CTX_VERSION);
  CHECK_STATIC(adcp_worker_audit_ctx, ADCP_WORKER_AUDIT_CTX_INIT, ADCP_WORKER_AUDIT_CTX_VERSION);
  CHECK_STATIC(adcp_retention_task_ctx, ADCP_RETENTION_TASK_CTX_INIT, ADCP_RETENTION_TASK_CTX_VERSION);
  CHECK_STATIC(adcp_worker_collector_ctx, ADCP_WORKER_COLLECTOR_CTX_INIT, ADCP_WORKER_COLLECTOR_CTX_VERSION);
}

/* One public call per room given a struct one version newer than it knows. */
static void test_wrong_version_refused(void **state) {
  (void)state;
  adcp_error err;
  adcp_sql_conn *conn = NULL;
  assert_int_equal(adcp_sql_connect(&conn, "sqlite::memory:", &err), 0);

  adcp_ledger_options lo = ADCP_LEDGER_OPTIONS_INIT;
  lo.version = ADCP_LEDGER_OPTIONS_VERSION + 1;
  adcp_ledger *l = NULL;
  assert_int_equal(adcp_ledger_open(&l, conn, &lo, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "unknown options version"));

  adcp_feed_prune_options po = ADCP_FEED_PRUNE_OPTIONS_INIT;
  po.version = ADCP_FEED_PRUNE_OPTIONS_VERSION + 1;
  adcp_feed_prune_result pr;
  assert_int_equal(adcp_feed_prune(&pr, conn, &po, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "unknown options version"));

  adcp_retention_policy rp = ADCP_RETENTION_POLICY_INIT, checked;
  rp.version = ADCP_RETENTION_POLICY_VERSION + 1;
  assert_int_equal(adcp_retention_policy_check(&checked, &rp, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "unknown version"));

  adcp_worker_options wo = ADCP_WORKER_OPTIONS_INIT;
  wo.version = ADCP_WORKER_OPTIONS_VERSION + 1;
  adcp_worker *w = NULL;
  assert_int_equal(adcp_worker_new(&w, &wo, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "unknown options version"));

  adcp_config_search cs = ADCP_CONFIG_SEARCH_INIT;
  cs.version = ADCP_CONFIG_SEARCH_VERSION + 1;
  char path[256];
  assert_int_equal(adcp_config_find(path, sizeof path, NULL, &cs, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "unknown version"));

  adcp_storage_options so = ADCP_STORAGE_OPTIONS_INIT;
  so.version = ADCP_STORAGE_OPTIONS_VERSION + 1;
  adcp_storage *st = NULL;
  assert_int_equal(adcp_storage_open(&st, "sqlite::memory:", &so, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "unknown options version"));

  adcp_audit_options ao = ADCP_AUDIT_OPTIONS_INIT;
  ao.version = ADCP_AUDIT_OPTIONS_VERSION + 1;
  adcp_audit_report ar;
  assert_int_equal(adcp_audit_run(&ar, conn, &ao, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "unknown options version"));

  adcp_changes_query q = ADCP_CHANGES_QUERY_INIT;
  q.version = ADCP_CHANGES_QUERY_VERSION + 1;
  adcp_change_page page;
  assert_int_equal(adcp_feed_changes_after(&page, conn, &q, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "unknown query version"));
  adcp_sql_close(conn);
}

/* The three structs the library took without reading their version (issue 31):
 * an unknown one is refused with INVALID_INPUT naming the struct and the version. */
static void test_logger_version_refused(void **state) {
  (void)state;
  adcp_error err;
  adcp_logger lg = ADCP_LOGGER_INIT;
  adcp_worker_options wo = ADCP_WORKER_OPTIONS_INIT;
  wo.log = &lg;
  adcp_worker *w = NULL;
  lg.version = ADCP_LOGGER_VERSION + 1;
  assert_int_equal(adcp_worker_new(&w, &wo, &err), ADCP_EINVALID_INPUT);
  assert_null(w);
  char want[96];
  snprintf(want, sizeof want, "unknown adcp_logger version %d", ADCP_LOGGER_VERSION + 1);
  assert_non_null(strstr(err.message, want));
  lg.version = 0;
  assert_int_equal(adcp_worker_new(&w, &wo, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "unknown adcp_logger version 0"));
  lg.version = ADCP_LOGGER_VERSION;
  assert_int_equal(adcp_worker_new(&w, &wo, &err), 0);
  adcp_worker_free(w);
}

static void test_migrate_options_version_refused(void **state) {
  (void)state;
  adcp_error err;
  adcp_migration_set *set = NULL;
  assert_int_equal(adcp_migrations_bundled(&set, ADCP_SQL_SQLITE, &err), 0);
  adcp_sql_conn *c = NULL;
  assert_int_equal(adcp_sql_connect(&c, "sqlite::memory:", &err), 0);
  adcp_migrate_options mo = ADCP_MIGRATE_OPTIONS_INIT;
  mo.version = ADCP_MIGRATE_OPTIONS_VERSION + 1;
  size_t applied = 99;
  assert_int_equal(adcp_migrate_apply(&applied, c, set, &mo, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(applied, 0);
  char want[96];
  snprintf(want, sizeof want, "unknown adcp_migrate_options version %d", ADCP_MIGRATE_OPTIONS_VERSION + 1);
  assert_non_null(strstr(err.message, want));
  /* Refused before anything ran: the database still has no migration history. */
  adcp_migration_status *st = NULL;
  assert_int_equal(adcp_migrate_status(&st, c, set, &err), 0);
  for (size_t i = 0; i < st->count; i++) assert_int_equal(st->entries[i].state, ADCP_MIGRATION_PENDING);
  adcp_migration_status_free(st);
  mo.version = ADCP_MIGRATE_OPTIONS_VERSION;
  assert_int_equal(adcp_migrate_apply(&applied, c, set, &mo, &err), 0);
  assert_true(applied > 0);
  adcp_sql_close(c);
  adcp_migrations_free(set);
}

static void test_collector_ctx_version_refused(void **state) {
  (void)state;
  adcp_error err;
  adcp_worker_collector_ctx c = ADCP_WORKER_COLLECTOR_CTX_INIT;
  c.version = ADCP_WORKER_COLLECTOR_CTX_VERSION + 1;
  adcp_worker_pass pass = ADCP_WORKER_PASS_INIT;
  adcp_worker_report r;
  memset(&r, 0, sizeof r);
  /* No ledger: the version is checked before anything is read. */
  assert_int_equal(adcp_worker_task_orphan_collection(&c, &pass, &r, &err), ADCP_EINVALID_INPUT);
  char want[96];
  snprintf(want, sizeof want, "unknown adcp_worker_collector_ctx version %d", ADCP_WORKER_COLLECTOR_CTX_VERSION + 1);
  assert_non_null(strstr(err.message, want));
  assert_int_equal(adcp_worker_task_orphan_collection(NULL, &pass, &r, &err), ADCP_EINVALID_INPUT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_init_functions),
      cmocka_unit_test(test_init_macros),
      cmocka_unit_test(test_wrong_version_refused),
      cmocka_unit_test(test_logger_version_refused),
      cmocka_unit_test(test_migrate_options_version_refused),
      cmocka_unit_test(test_collector_ctx_version_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
