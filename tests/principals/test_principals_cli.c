/* tests/principals/test_principals_cli.c — `principal …` and
 * `subscription-state …` through the real binary on a fresh SQLite file and
 * a fresh PostgreSQL database: JSON outputs, --help, --json failure
 * documents and one check per refusal with its exit status. */
#include <sys/stat.h>

#include "ledger/ledger_fixture.h"
#include "support/support_cli.h"

/* Runs adcp-ledger --db on f's database in its scratch folder. */
#define run(r, f, ...) tu_cli_run_db((r), (f)->dir, (f)->url, __VA_ARGS__)

/* Exactly one JSON document on stdout: one line starting with '{'. */
static void one_doc(const tu_cli_run *r) {
  const char *s = TU_OUT(*r);
  int n = 0;
  for (const char *p = s; *p; p++) n += *p == '\n';
  if (s[0] != '{' || n != 1) fail_msg("not one JSON document: [%s]", s);
}

static void cli_principal_commands(void **state) {
  fixture *f = *state;
  if (!f->dir) f->dir = tu_mkdtemp();
  tu_cli_run r;
  adcp_buf_init(&r.out);
  adcp_buf_init(&r.err);
  /* A read never creates the SQLite file. */
  if (f->dialect == ADCP_SQL_SQLITE) {
    assert_int_equal(run(&r, f, "principal list"), 4);
    assert_non_null(strstr(TU_ERR(r), "does not exist"));
    struct stat st;
    assert_int_not_equal(stat(f->url + 7, &st), 0);
    tu_write_file(f->url + 7, "", 0);
  }
  /* Unmigrated: REPORTING_SCHEMA_BEHIND, exit 4, a JSON document under --json. */
  assert_int_equal(run(&r, f, "principal get p1 --json"), 4);
  one_doc(&r);
  assert_non_null(strstr(TU_OUT(r), "REPORTING_SCHEMA_BEHIND"));
  assert_int_equal(run(&r, f, "migrate"), 0);

  const char *helps[] = {"principal --help", "subscription-state --help", "help principal", "help subscription-state"};
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(run(&r, f, "%s", helps[i]), 0);
    assert_non_null(strstr(TU_OUT(r), "usage: adcp-ledger"));
  }

  /* put / get / list / disable. */
  assert_int_equal(run(&r, f,
                       "principal put buyer:1 --account acct_1 --name 'Buyer One' "
                       "--attributes '{\"tier\":\"gold\",\"a\":1}'"),
                   0);
  one_doc(&r);
  assert_non_null(strstr(TU_OUT(r), "\"principal_id\":\"buyer:1\""));
  assert_non_null(strstr(TU_OUT(r), "\"attributes\":{\"a\":1,\"tier\":\"gold\"}"));
  assert_non_null(strstr(TU_OUT(r), "\"version\":1"));
  char attrs[700];
  snprintf(attrs, sizeof attrs, "%s/attrs.json", f->dir);
  tu_write_file(attrs, "{\"tier\": \"silver\"}\n", 19);
  assert_int_equal(
      run(&r, f, "principal put buyer:1 --account acct_1 --attributes-file '%s' --expected-version 1", attrs), 0);
  assert_non_null(strstr(TU_OUT(r), "\"version\":2"));
  assert_non_null(strstr(TU_OUT(r), "\"display_name\":\"\""));
  /* CONFLICT: stale version, and create of an existing one (exit 2). */
  assert_int_equal(run(&r, f, "principal put buyer:1 --account acct_1 --expected-version 1"), 2);
  assert_non_null(strstr(TU_ERR(r), "CONFLICT"));
  assert_int_equal(run(&r, f, "principal put buyer:1 --account acct_1 --json"), 2);
  one_doc(&r);
  assert_non_null(strstr(TU_OUT(r), "\"code\":\"CONFLICT\""));
  assert_int_equal(run(&r, f, "principal get buyer:1"), 0);
  one_doc(&r);
  assert_non_null(strstr(TU_OUT(r), "\"tier\":\"silver\""));
  assert_int_equal(run(&r, f, "principal get nobody"), 5);
  assert_non_null(strstr(TU_ERR(r), "REFERENCE_NOT_FOUND"));
  assert_int_equal(run(&r, f, "principal disable nobody --json"), 5);
  one_doc(&r);
  for (int i = 0; i < 3; i++) assert_int_equal(run(&r, f, "principal put p%d --account acct_2", i), 0);
  assert_int_equal(run(&r, f, "principal list --limit 2"), 0);
  one_doc(&r);
  assert_non_null(strstr(TU_OUT(r), "\"principal_id\":\"buyer:1\""));
  assert_non_null(strstr(TU_OUT(r), "\"principal_id\":\"p0\""));
  const char *nc = strstr(TU_OUT(r), "\"next_cursor\":\"");
  assert_non_null(nc);
  char cursor[600];
  snprintf(cursor, sizeof cursor, "%.*s", (int)strcspn(nc + 15, "\""), nc + 15);
  assert_int_equal(run(&r, f, "principal list --limit 2 --cursor '%s'", cursor), 0);
  assert_non_null(strstr(TU_OUT(r), "\"principal_id\":\"p1\""));
  assert_non_null(strstr(TU_OUT(r), "\"principal_id\":\"p2\""));
  assert_non_null(strstr(TU_OUT(r), "\"next_cursor\":null"));
  assert_int_equal(run(&r, f, "principal disable p1 --expected-version 7"), 2);
  assert_int_equal(run(&r, f, "principal disable p1"), 0);
  assert_non_null(strstr(TU_OUT(r), "\"status\":\"disabled\""));

  /* Refusals. Usage (exit 1): */
  const char *usage[] = {"principal", "principal frob x", "principal put x", "principal get", "principal get a b",
                         "principal list x", "principal get x --account a", "principal list --expected-version 1",
                         "principal put x --account a --bogus 1",
                         "principal put x --account a --attributes {} --attributes-file y",
                         "principal put x --account a --attributes-file /nonexistent/file",
                         /* option values the table refuses before anything runs */
                         "principal put x --account ''", "principal put x --account a --status paused",
                         "principal put x --account a --expected-version -1", "principal list --limit 5000",
                         "principal list --limit x", "principal list --limit ' 5'", NULL};
  for (int i = 0; usage[i]; i++)
    if (run(&r, f, "%s", usage[i]) != 1) fail_msg("%s: exit %d, want 1", usage[i], r.rc);
  /* Input refused (exit 2): */
  const char *refused[] = {"principal put 'a\tb' --account acct", "principal put x --account a --attributes '[1]'",
                           "principal put x --account a --attributes '{'", "principal list --cursor bogus", NULL};
  for (int i = 0; refused[i]; i++) {
    if (run(&r, f, "%s --json", refused[i]) != 2) fail_msg("%s: exit %d, want 2", refused[i], r.rc);
    one_doc(&r);
  }

  /* subscription-state: writes, then the reads. */
  assert_int_equal(run(&r, f, "subscription-state grant buyer:1 --subject report_a --scope acct_1"), 0);
  one_doc(&r);
  assert_non_null(strstr(TU_OUT(r), "\"seq\":1,\"action\":\"grant\""));
  assert_int_equal(run(&r, f, "subscription-state revoke buyer:1 --subject report_a --scope acct_1"), 0);
  assert_non_null(strstr(TU_OUT(r), "\"seq\":2,\"action\":\"revoke\""));
  assert_int_equal(run(&r, f, "subscription-state journal buyer:1"), 0);
  one_doc(&r);
  assert_non_null(strstr(TU_OUT(r), "\"head\":2,\"entries\":[{\"seq\":1,"));
  assert_int_equal(run(&r, f, "subscription-state journal buyer:1 --after 1"), 0);
  assert_null(strstr(TU_OUT(r), "\"seq\":1,"));
  assert_non_null(strstr(TU_OUT(r), "\"seq\":2,"));
  assert_int_equal(run(&r, f,
                       "subscription-state exception-put buyer:1 --subject report_a --state open "
                       "--reason 'webhook failing'"),
                   0);
  assert_non_null(strstr(TU_OUT(r), "\"state\":\"open\",\"reason\":\"webhook failing\",\"version\":1"));
  assert_int_equal(run(&r, f, "subscription-state exception-put buyer:1 --subject report_a --state cleared"), 2);
  assert_int_equal(run(&r, f,
                       "subscription-state exception-put buyer:1 --subject report_a --state cleared "
                       "--expected-version 1"),
                   0);
  assert_int_equal(run(&r, f, "subscription-state exceptions buyer:1"), 0);
  one_doc(&r);
  assert_non_null(strstr(TU_OUT(r), "\"state\":\"cleared\""));
  assert_int_equal(run(&r, f, "subscription-state snapshot buyer:1"), 0);
  assert_non_null(strstr(TU_OUT(r), "\"found\":false"));
  char snap[700];
  snprintf(snap, sizeof snap, "%s/state.json", f->dir);
  tu_write_file(snap, "{\"grants\": []}", 14);
  assert_int_equal(run(&r, f, "subscription-state snapshot-put buyer:1 --state-file '%s' --journal-seq 3", snap), 2);
  assert_int_equal(run(&r, f, "subscription-state snapshot-put buyer:1 --state-file '%s' --journal-seq 2", snap), 0);
  assert_non_null(strstr(TU_OUT(r), "\"version\":1,\"journal_seq\":2,\"state\":{\"grants\":[]}"));
  assert_int_equal(run(&r, f, "subscription-state snapshot-put buyer:1 --state-file '%s' --journal-seq 2", snap), 2);
  assert_non_null(strstr(TU_ERR(r), "CONFLICT"));
  assert_int_equal(run(&r, f, "subscription-state snapshot buyer:1 --json"), 0);
  one_doc(&r);
  assert_non_null(strstr(TU_OUT(r), "\"found\":true,\"version\":1"));
  /* Refusals. */
  assert_int_equal(run(&r, f, "subscription-state journal nobody --json"), 5);
  one_doc(&r);
  assert_int_equal(run(&r, f, "subscription-state grant nobody --subject s --scope a"), 5);
  const char *sub_usage[] = {
      "subscription-state", "subscription-state frob p", "subscription-state journal",
      "subscription-state grant buyer:1 --subject s", "subscription-state journal buyer:1 --subject s",
      "subscription-state exception-put buyer:1 --subject s", "subscription-state snapshot-put buyer:1 --journal-seq 1",
      "subscription-state snapshot buyer:1 --limit 3",
      /* option values the table refuses before anything runs */
      "subscription-state exception-put buyer:1 --subject s --state closed",
      "subscription-state journal buyer:1 --after -3", "subscription-state grant buyer:1 --subject '' --scope a", NULL};
  for (int i = 0; sub_usage[i]; i++)
    if (run(&r, f, "%s", sub_usage[i]) != 1) fail_msg("%s: exit %d, want 1", sub_usage[i], r.rc);

  /* Non-durable storage in production: exit 4, naming the components. */
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "ADCP_ENV=production '%s' --db sqlite::memory: principal list --json", ADCP_CLI_PATH);
  adcp_buf_reset(&r.out);
  assert_int_equal(tu_run(cmd, NULL, 0, &r.out), 4);
  adcp_buf_cstr(&r.out);
  one_doc(&r);
  assert_non_null(strstr(TU_OUT(r), "REPORTING_STORAGE_NOT_DURABLE"));
  assert_non_null(strstr(TU_OUT(r), "principals, subscription_state"));
  adcp_buf_free(&r.out);
  adcp_buf_free(&r.err);
}

int main(void) {
  const struct CMUnitTest tests[] = {BOTH(cli_principal_commands)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
