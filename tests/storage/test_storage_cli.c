/* tests/storage/test_storage_cli.c — `adcp-ledger migrate` and `init` as an
 * operator runs them: output lines, dry run, status, exit codes, URL
 * resolution and password masking. SQLite files plus one PostgreSQL database
 * (ADCP_TEST_PG_URL must be set; the test fails otherwise). */
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adcp/sql.h"
#include "testutil.h"

static int cli(adcp_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cli(adcp_buf *out, const char *fmt, ...) {
  char args[4096], cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", ADCP_CLI_PATH, args);
  adcp_buf_reset(out);
  return tu_run(cmd, NULL, 0, out);
}

static const char *txt(adcp_buf *b) { return b->data ? (const char *)b->data : ""; }

static void migrate_on_sqlite(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  adcp_buf out;
  adcp_buf_init(&out);
  char url[4200];
  snprintf(url, sizeof url, "sqlite:%s/l.db", dir);
  /* --status and --dry-run never create a database file... */
  assert_int_equal(cli(&out, "--db '%s' migrate --status", url), 4);
  {
    char p[4300];
    snprintf(p, sizeof p, "%s/l.db", dir);
    struct stat st;
    assert_int_not_equal(stat(p, &st), 0);
    /* ...but read an empty (unmigrated) one: every step pending. */
    tu_write_file(p, "", 0);
  }

  assert_int_equal(cli(&out, "migrate --help"), 0);
  assert_non_null(strstr(txt(&out), "exit status"));
  assert_int_equal(cli(&out, "--db '%s' migrate --status --dry-run", url), 1);
  assert_int_equal(cli(&out, "--db '%s' migrate --bogus", url), 1);

  assert_int_equal(cli(&out, "--db '%s' migrate --status", url), 0);
  assert_non_null(strstr(txt(&out), "pending 0001 ledger_core additive\n"));
  assert_non_null(strstr(txt(&out), "pending 0002 row_storage additive\n"));
  assert_non_null(strstr(txt(&out), "pending 0003 chunk_body_storage additive\n"));
  assert_int_equal(cli(&out, "--db '%s' migrate --dry-run", url), 0);
  assert_string_equal(txt(&out),
                      "would-apply 0001 ledger_core additive\nwould-apply 0002 row_storage additive\n"
                      "would-apply 0003 chunk_body_storage additive\nwould-apply 0004 change_feed additive\n"
                      "would-apply 0005 inline_storage additive\nwould-apply 0006 retention additive\n"
                      "would-apply 0007 principals additive\n"
                      "would-apply 0008 issue_events additive\n"
                      "would-apply 0009 history additive\n"
                      "would-apply 0010 collector_fence additive\n"
                      "would-apply 0011 legacy_import additive\n"
                      "would-apply 0012 orphan_collector additive\n"
                      "would-apply 0013 row_set_share_index additive\n"
                      "would-apply 0014 revision_clock_index additive\n");
  /* Neither read-only mode created anything. */
  adcp_sql_conn *c;
  adcp_error err = {0};
  assert_int_equal(adcp_sql_connect(&c, url, &err), 0);
  char n[16];
  int found;
  assert_int_equal(adcp_sql_query_text(n, sizeof n, &found, c, "SELECT count(*) FROM sqlite_master", NULL, 0, &err), 0);
  assert_string_equal(n, "0");

  assert_int_equal(cli(&out, "--db '%s' migrate", url), 0);
  assert_string_equal(txt(&out),
                      "applying 0001 ledger_core additive\ndone 0001\n"
                      "applying 0002 row_storage additive\ndone 0002\n"
                      "applying 0003 chunk_body_storage additive\ndone 0003\n"
                      "applying 0004 change_feed additive\ndone 0004\n"
                      "applying 0005 inline_storage additive\ndone 0005\n"
                      "applying 0006 retention additive\ndone 0006\n"
                      "applying 0007 principals additive\ndone 0007\n"
                      "applying 0008 issue_events additive\ndone 0008\n"
                      "applying 0009 history additive\ndone 0009\n"
                      "applying 0010 collector_fence additive\ndone 0010\n"
                      "applying 0011 legacy_import additive\ndone 0011\n"
                      "applying 0012 orphan_collector additive\ndone 0012\n"
                      "applying 0013 row_set_share_index additive\ndone 0013\n"
                      "applying 0014 revision_clock_index additive\ndone 0014\n");
  assert_int_equal(cli(&out, "--db '%s' migrate", url), 0);
  assert_string_equal(txt(&out), "up to date\n");
  assert_int_equal(cli(&out, "--db '%s' migrate --dry-run", url), 0);
  assert_string_equal(txt(&out), "up to date\n");
  assert_int_equal(cli(&out, "--db '%s' migrate --status", url), 0);
  assert_non_null(strstr(txt(&out), "applied 0001 ledger_core additive 20"));
  assert_non_null(strstr(txt(&out), "up to date\n"));

  /* A tampered history is refused loudly with the storage exit code. */
  assert_int_equal(adcp_sql_exec_script(c,
                                        "UPDATE adcp_schema_migrations SET checksum = "
                                        "'0000000000000000000000000000000000000000000000000000000000000000' "
                                        "WHERE version = '0002'",
                                        &err),
                   0);
  assert_int_equal(cli(&out, "--db '%s' migrate", url), 4);
  assert_non_null(strstr(txt(&out), "INTEGRITY_FAILED"));
  assert_non_null(strstr(txt(&out), "0002"));
  assert_int_equal(cli(&out, "--db '%s' migrate --status", url), 0);
  assert_non_null(strstr(txt(&out), "checksum-mismatch 0002"));
  adcp_sql_close(c);

  /* Resolution order: ADCP_DATABASE_URL beats DATABASE_URL; --db beats both. */
  char other[4200];
  snprintf(other, sizeof other, "sqlite:%s/other.db", dir);
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "cd '%s' && ADCP_DATABASE_URL='%s' DATABASE_URL='sqlite:%s/never.db' '%s' migrate", dir,
           other, dir, ADCP_CLI_PATH);
  assert_int_equal(tu_run(cmd, NULL, 0, &out), 0);
  assert_non_null(strstr(txt(&out), "done 0003"));
  snprintf(cmd, sizeof cmd, "test -f '%s/other.db' && test ! -f '%s/never.db'", dir, dir);
  assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
  /* The default ./adcp-ledger.db: a dry run never creates it. */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && env -u ADCP_DATABASE_URL -u DATABASE_URL '%s' migrate --dry-run 2>&1; "
           "test ! -e adcp-ledger.db",
           dir, ADCP_CLI_PATH);
  assert_int_equal(tu_run(cmd, NULL, 0, &out), 0);
  assert_non_null(strstr(txt(&out), "database file does not exist"));

  /* init creates and migrates a SQLite ledger; refuses non-SQLite targets. */
  snprintf(cmd, sizeof cmd, "cd '%s' && env -u ADCP_DATABASE_URL -u DATABASE_URL '%s' init", dir, ADCP_CLI_PATH);
  assert_int_equal(tu_run(cmd, NULL, 0, &out), 0);
  assert_non_null(strstr(txt(&out), "initialized sqlite:./adcp-ledger.db"));
  snprintf(cmd, sizeof cmd, "cd '%s' && env -u ADCP_DATABASE_URL -u DATABASE_URL '%s' migrate --status", dir,
           ADCP_CLI_PATH);
  assert_int_equal(tu_run(cmd, NULL, 0, &out), 0);
  assert_non_null(strstr(txt(&out), "applied 0002"));
  assert_int_equal(cli(&out, "--db 'postgresql://x@127.0.0.1:1/d' init"), 1);
  assert_int_equal(cli(&out, "init --help"), 0);
  /* ...and refuses to adopt a SQLite file that holds someone else's tables. */
  char foreign[4200];
  snprintf(foreign, sizeof foreign, "sqlite:%s/foreign.db", dir);
  assert_int_equal(adcp_sql_connect(&c, foreign, &err), 0);
  assert_int_equal(adcp_sql_exec_script(c, "CREATE TABLE mine (k TEXT)", &err), 0);
  adcp_sql_close(c);
  assert_int_equal(cli(&out, "init '%s/foreign.db'", dir), 4);
  assert_non_null(strstr(txt(&out), "refusing"));

  adcp_buf_free(&out);
  tu_rmtree(dir);
  free(dir);
}

static void migrate_on_postgres_and_password_masking(void **state) {
  (void)state;
  const char *admin = getenv("ADCP_TEST_PG_URL");
  if (!admin || !*admin)
    fail_msg("ADCP_TEST_PG_URL is not set: run through scripts/test.sh (PostgreSQL tests never skip)");
  uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
  char db[40], url[512], sql[128];
  snprintf(db, sizeof db, "t_cli_%016llx", (unsigned long long)tu_rand(&seed));
  const char *slash = strrchr(admin, '/');
  snprintf(url, sizeof url, "%.*s/%s", (int)(slash - admin), admin, db);
  adcp_sql_conn *c;
  adcp_error err = {0};
  assert_int_equal(adcp_sql_connect(&c, admin, &err), 0);
  snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
  assert_int_equal(adcp_sql_exec_script(c, sql, &err), 0);

  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(cli(&out, "--db '%s' migrate --dry-run", url), 0);
  assert_string_equal(txt(&out),
                      "would-apply 0001 ledger_core additive\nwould-apply 0002 row_storage additive\n"
                      "would-apply 0003 chunk_body_storage additive\nwould-apply 0004 change_feed additive\n"
                      "would-apply 0005 inline_storage additive\nwould-apply 0006 retention additive\n"
                      "would-apply 0007 principals additive\n"
                      "would-apply 0008 issue_events additive\n"
                      "would-apply 0009 history additive\n"
                      "would-apply 0010 collector_fence additive\n"
                      "would-apply 0011 legacy_import additive\n"
                      "would-apply 0012 orphan_collector additive\n"
                      "would-apply 0013 row_set_share_index additive\n"
                      "would-apply 0014 revision_clock_index additive\n");
  assert_int_equal(cli(&out, "--db='%s' migrate", url), 0);
  assert_non_null(strstr(txt(&out), "done 0003\n"));
  assert_int_equal(cli(&out, "--db '%s' migrate --status", url), 0);
  assert_non_null(strstr(txt(&out), "applied 0002 row_storage additive 20"));

  /* Credentials never reach the terminal (stdout + stderr), whatever fails:
   * real connection attempts to a closed loopback port, every spelling. */
  static const char *const leaky[] = {
      "postgresql://mallory:hunter2secret@127.0.0.1:1/x?connect_timeout=2",
      "postgresql://mallory@127.0.0.1:1/x?password=hunter2secret&connect_timeout=2",
      "postgresql://mallory@127.0.0.1:1/x?pass%77ord=hunter2secret&connect_timeout=2",
      "postgresql://mallory@127.0.0.1:1/x?sslpassword=hunter2secret&connect_timeout=2",
      "postgresql://mallory:hunter2/secret@127.0.0.1:1/x",
      "host=127.0.0.1 port=1 password=hunter2secret connect_timeout=2",
      "host=127.0.0.1 port=1 password='hunter2 \\'secret' connect_timeout=2",
      "host=127.0.0.1 port=1 password=x://hunter2secret connect_timeout=2",
      "host=127.0.0.1 port=1 sslpassword=hunter2secret connect_timeout=2",
  };
  for (size_t i = 0; i < sizeof leaky / sizeof *leaky; i++) {
    const char *sub[] = {"migrate", "migrate --status", "migrate --dry-run"};
    for (size_t j = 0; j < 3; j++) {
      int st = cli(&out, "--db \"%s\" %s", leaky[i], sub[j]);
      if (st != 4 || strstr(txt(&out), "hunter2") || strstr(txt(&out), "secret"))
        fail_msg("%s %s: exit %d, output:\n%s", leaky[i], sub[j], st, txt(&out));
      assert_non_null(strstr(txt(&out), "STORAGE_ERROR"));
    }
  }
  /* An unusable URL: STORAGE_ERROR, exit 4, from every command. */
  assert_int_equal(cli(&out, "--db 'mysql://u:hunter2secret@h/d' migrate"), 4);
  assert_null(strstr(txt(&out), "hunter2secret"));
  /* init refuses non-SQLite targets without echoing them either. */
  assert_int_equal(cli(&out, "--db 'postgresql://u:hunter2secret@127.0.0.1:1/d' init"), 1);
  assert_null(strstr(txt(&out), "hunter2secret"));

  snprintf(sql, sizeof sql, "DROP DATABASE %s WITH (FORCE)", db);
  assert_int_equal(adcp_sql_exec_script(c, sql, &err), 0);
  adcp_sql_close(c);
  adcp_buf_free(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(migrate_on_sqlite),
      cmocka_unit_test(migrate_on_postgres_and_password_masking),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
