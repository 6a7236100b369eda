/* tests/ledger/test_ledger_cli_verify_header.c — the real adcp-ledger binary on a SQLite
 * file whose headers were edited as a database editor would (trigger and
 * partial unique index dropped, then plain UPDATEs): `verify` exits 3 naming
 * the broken header invariant, `read` without a range releases nothing, and
 * an untouched revision still verifies. */
#include <stdlib.h>
#include <string.h>

#include "adcp/sql.h"
#include "testutil.h"
#include "support/support_cli.h"

static const char *both(adcp_buf *out, adcp_buf *err_b, const char *needle) {
  adcp_buf_cstr(out), adcp_buf_cstr(err_b);
  const char *a = out->data ? strstr((const char *)out->data, needle) : NULL;
  return a ? a : err_b->data ? strstr((const char *)err_b->data, needle) : NULL;
}

#define COMMIT(ob) \
  "commit --account acct_1 --obligation " ob \
  " --period-start 2026-10-01T00:00:00Z " \
  "--period-end 2026-11-01T00:00:00Z --finality snapshot "

static void verify_names_broken_header_invariants(void **state) {
  const tu_scratch *s = *state;
  adcp_buf out, err_b;
  adcp_buf_init(&out), adcp_buf_init(&err_b);
  assert_int_equal(tu_scratch_cli(s, "init", NULL, &out, &err_b), 0);
  assert_int_equal(tu_scratch_cli(s, COMMIT("ob_1") "--revision r1", "{\"a\":1}\n{\"a\":2}\n", &out, &err_b), 0);
  assert_int_equal(tu_scratch_cli(s, COMMIT("ob_1") "--revision r2", "{\"a\":3}\n", &out, &err_b), 0);
  assert_int_equal(tu_scratch_cli(s, COMMIT("ob_2") "--revision q1", "{\"b\":1}\n", &out, &err_b), 0);
  assert_int_equal(tu_scratch_cli(s, "verify --all", NULL, &out, &err_b), 0);

  adcp_sql_conn *c;
  adcp_error err = {0};
  assert_int_equal(adcp_sql_connect(&c, s->db, &err), 0);
  if (adcp_sql_exec_script(c,
                           "DROP TRIGGER adcp_reporting_revisions_immutable;"
                           "DROP INDEX adcp_reporting_revisions_one_official;"
                           "UPDATE adcp_reporting_revisions SET finality = 'official' WHERE revision_id = 'r1'",
                           &err))
    fail_msg("tamper: %s", err.message);
  adcp_sql_close(c);

  /* Failure lines may go to stdout or stderr: look at both. */
  assert_int_equal(tu_scratch_cli(s, "verify --revision r1", NULL, &out, &err_b), 3);
  assert_non_null(both(&out, &err_b, "finality is official but a later revision exists"));
  assert_int_equal(tu_scratch_cli(s, "verify --all", NULL, &out, &err_b), 3);
  assert_non_null(both(&out, &err_b, "header invariant broken: finality is official"));
  assert_null(both(&out, &err_b, "q1"));
  assert_int_equal(tu_scratch_cli(s, "read --account acct_1 --revision r1", NULL, &out, &err_b), 3);
  assert_int_equal(out.len, 0);
  assert_non_null(strstr((const char *)err_b.data, "ROWS_INTEGRITY_FAILED: header invariant"));
  /* q1's own bytes and header verify, but the dropped trigger and index are
   * schema drift: verify names them and exits 4. */
  assert_int_equal(tu_scratch_cli(s, "verify --revision q1", NULL, &out, &err_b), 4);
  assert_non_null(strstr((const char *)out.data, "checked 1: 1 verified, 0 failed"));
  assert_non_null(strstr((const char *)out.data,
                         "drift missing trigger:adcp_reporting_revisions.adcp_reporting_revisions_immutable\n"));
  assert_non_null(strstr((const char *)err_b.data, "SCHEMA_UNREADY"));
  adcp_buf_free(&out), adcp_buf_free(&err_b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(verify_names_broken_header_invariants, tu_scratch_setup, tu_scratch_teardown)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
