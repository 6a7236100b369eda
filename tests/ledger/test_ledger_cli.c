/* tests/ledger/test_ledger_cli.c — the ledger commands of the real adcp-ledger
 * binary on an embedded SQLite file: commit (new, replay, conflict, official,
 * nothing after the official), read of a page and of the whole revision,
 * show --json, not found without disclosure (exit 5), and `verify --all`
 * naming a revision whose stored bytes were edited (exit 3). */
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "adcp/sql.h"
#include "testutil.h"
#include "support/support_cli.h"

static void rows_text(adcp_buf *b, int n, int salt) {
  adcp_buf_reset(b);
  for (int i = 0; i < n; i++)
    adcp_buf_printf(b, "{ \"spend\": \"%d.50\", \"impressions\": %d, \"date\": \"2026-10-%02d\" }\n", i + salt, i * 3,
                    1 + i % 28);
  adcp_buf_cstr(b);
}

#define COMMIT \
  "commit --account acct_1 --obligation ob_1 --period-start 2026-10-01T00:00:00Z " \
  "--period-end 2026-11-01T00:00:00Z "

static void ledger_commands(void **state) {
  const tu_scratch *s = *state;
  adcp_buf out, err_b, rows;
  adcp_buf_init(&out), adcp_buf_init(&err_b), adcp_buf_init(&rows);
  assert_int_equal(tu_scratch_cli(s, "init", NULL, &out, &err_b), 0);

  rows_text(&rows, 1200, 0);
  assert_int_equal(tu_scratch_cli(s, COMMIT "--revision rrev_1 --finality snapshot", (char *)rows.data, &out, &err_b), 0);
  assert_non_null(strstr((char *)out.data, "number 1, snapshot"));
  /* Replay: same ID, same rows. */
  assert_int_equal(tu_scratch_cli(s, COMMIT "--revision rrev_1 --finality snapshot", (char *)rows.data, &out, &err_b), 0);
  assert_non_null(strstr((char *)out.data, "replayed"));
  /* Same ID, another or a garbage period, another finality: refused naming
   * the field and both values (issue 27 item 6, issue 33 item 4). */
  assert_int_equal(tu_scratch_cli(s,
                                  "commit --account acct_1 --obligation ob_1 --period-start 2026-09-01T00:00:00Z "
                                  "--period-end 2026-11-01T00:00:00Z --revision rrev_1 --finality snapshot",
                                  (char *)rows.data, &out, &err_b),
                   2);
  assert_non_null(strstr((char *)err_b.data, "CONFLICT"));
  assert_non_null(strstr((char *)err_b.data, "period_start 2026-10-01T00:00:00.000000Z; given 2026-09-01T00:00:00.000000Z"));
  assert_int_equal(tu_scratch_cli(s,
                                  "commit --account acct_1 --obligation ob_1 --period-start garbage "
                                  "--period-end 2026-11-01T00:00:00Z --revision rrev_1 --finality snapshot",
                                  (char *)rows.data, &out, &err_b),
                   1); /* the option table refuses it before any replay check */
  assert_non_null(strstr((char *)err_b.data, "--period-start"));
  assert_int_equal(tu_scratch_cli(s, COMMIT "--revision rrev_1 --finality official", (char *)rows.data, &out, &err_b), 2);
  assert_non_null(strstr((char *)err_b.data, "finality snapshot; given official"));
  assert_null(strstr((char *)err_b.data, "stored ")); /* no digest prefixes */
  /* Same ID, different rows. */
  adcp_buf other;
  adcp_buf_init(&other);
  rows_text(&other, 1200, 7);
  assert_int_equal(tu_scratch_cli(s, COMMIT "--revision rrev_1 --finality snapshot", (char *)other.data, &out, &err_b), 2);
  assert_non_null(strstr((char *)err_b.data, "CONTENT_CONFLICT"));
  /* A row refused mid-stream: nothing is committed. */
  assert_int_equal(
      tu_scratch_cli(s, COMMIT "--revision rrev_bad --finality snapshot", "{\"a\":1}\n{\"a\":1,\"a\":2}\n", &out, &err_b),
      2);
  assert_non_null(strstr((char *)err_b.data, "INVALID_ROW"));
  assert_int_equal(tu_scratch_cli(s, "show --account acct_1 --revision rrev_bad", NULL, &out, &err_b), 5);
  /* A row that is not JSON is refused with the same code, naming its line and
   * ordinal, never its text (issue 33). */
  assert_int_equal(
      tu_scratch_cli(s, COMMIT "--revision rrev_bad --finality snapshot", "{\"a\":1}\n{\"a\":\"secret\"\n", &out, &err_b),
      2);
  assert_non_null(strstr((char *)err_b.data, "commit: INVALID_ROW: row at ordinal 1:"));
  assert_non_null(strstr((char *)err_b.data, "(input line 2)"));
  assert_null(strstr((char *)err_b.data, "secret"));
  assert_int_equal(tu_scratch_cli(s, "show --account acct_1 --revision rrev_bad", NULL, &out, &err_b), 5);
  /* A refused request is no row's fault: no input line is named. */
  assert_int_equal(tu_scratch_cli(s, "commit --account acct_1 --obligation ob_new --revision rrev_n --finality snapshot",
                                  "{\"a\":1}\n", &out, &err_b),
                   2);
  assert_non_null(strstr((char *)err_b.data, "INVALID_INPUT: obligation ob_new does not exist yet"));
  assert_null(strstr((char *)err_b.data, "input line"));
  /* Official, then nothing after it. */
  assert_int_equal(tu_scratch_cli(s, COMMIT "--revision rrev_2 --finality official", (char *)other.data, &out, &err_b), 0);
  assert_non_null(strstr((char *)out.data, "number 2, official"));
  assert_int_equal(tu_scratch_cli(s, COMMIT "--revision rrev_3 --finality snapshot", (char *)rows.data, &out, &err_b), 2);
  assert_non_null(strstr((char *)err_b.data, "already has an official revision"));

  /* A page crossing the 500-row segment boundary equals the canonical rows. */
  assert_int_equal(
      tu_scratch_cli(s, "read --account acct_1 --revision rrev_1 --offset 498 --limit 3", NULL, &out, &err_b), 0);
  adcp_buf want, canon;
  adcp_buf_init(&want), adcp_buf_init(&canon);
  assert_int_equal(tu_scratch_cli(s, "canonicalize --lines", (char *)rows.data, &canon, &err_b), 0);
  const char *p = (char *)canon.data;
  for (int i = 0; i < 498; i++) p = strchr(p, '\n') + 1;
  const char *q = p;
  for (int i = 0; i < 3; i++) q = strchr(q, '\n') + 1;
  assert_int_equal(out.len, (size_t)(q - p));
  assert_memory_equal(out.data, p, out.len);
  /* The whole revision streams out identical to the canonical rows. */
  assert_int_equal(tu_scratch_cli(s, "read --account acct_1 --revision rrev_1", NULL, &out, &err_b), 0);
  assert_int_equal(out.len, canon.len);
  assert_memory_equal(out.data, canon.data, canon.len);

  /* show --json is JSON with the header's digests. */
  assert_int_equal(tu_scratch_cli(s, "show --account acct_1 --revision rrev_2 --json", NULL, &out, &err_b), 0);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  assert_int_equal(adcp_json_parse(&doc, (char *)out.data, out.len, NULL, NULL), 0);
  assert_true(adcp_json_str_eq(&doc, adcp_json_get(&doc, 0, "finality"), "official"));
  adcp_json_doc_free(&doc);

  /* Another account: the same answer as an unknown revision (exit 5). */
  assert_int_equal(tu_scratch_cli(s, "read --account acct_2 --revision rrev_1 --limit 1", NULL, &out, &err_b), 5);
  assert_non_null(strstr((char *)err_b.data, "REFERENCE_NOT_FOUND: revision not found"));
  adcp_buf keep;
  adcp_buf_init(&keep);
  adcp_buf_append_str(&keep, (char *)err_b.data);
  adcp_buf_cstr(&keep);
  assert_int_equal(tu_scratch_cli(s, "read --account acct_1 --revision rrev_nope --limit 1", NULL, &out, &err_b), 5);
  assert_string_equal((char *)err_b.data, (char *)keep.data);

  /* verify --all: both fine, then one body edited in the database. */
  assert_int_equal(tu_scratch_cli(s, "verify --all", NULL, &out, &err_b), 0);
  assert_non_null(strstr((char *)out.data, "checked 2: 2 verified, 0 failed"));
  adcp_sql_conn *c;
  adcp_error err = {0};
  assert_int_equal(adcp_sql_connect(&c, s->db, &err), 0);
  /* rrev_2 shares no body with rrev_1 (different rows): edit one of its bytes. */
  /* A database editor: triggers dropped, CHECKs ignored. */
  if (adcp_sql_exec_script(c, "DROP TRIGGER adcp_reporting_chunk_bodies_immutable; PRAGMA ignore_check_constraints=ON",
                           &err) ||
      adcp_sql_exec(c,
                    "UPDATE adcp_reporting_chunk_bodies SET body = CAST(replace(CAST(body AS TEXT), '7.50', '7.51') "
                    "AS BLOB) WHERE sha256 IN (SELECT sha256 FROM adcp_reporting_row_chunks WHERE row_set_id = 'rrev_2')",
                    NULL, 0, &err))
    fail_msg("tamper: %s", err.message);
  adcp_sql_close(c);
  assert_int_equal(tu_scratch_cli(s, "verify --all", NULL, &out, &err_b), 3);
  assert_non_null(strstr((char *)out.data, "checked 2: 1 verified, 1 failed"));
  assert_non_null(strstr((char *)out.data, "rrev_2") ? (char *)out.data : strstr((char *)err_b.data, "rrev_2"));
  assert_null(strstr((char *)err_b.data, "rrev_1:"));
  /* And its rows are never released. */
  assert_int_equal(tu_scratch_cli(s, "read --account acct_1 --revision rrev_2 --limit 10", NULL, &out, &err_b), 3);
  assert_non_null(strstr((char *)err_b.data, "ROWS_INTEGRITY_FAILED"));
  assert_int_equal(out.len, 0);

  adcp_buf_free(&out), adcp_buf_free(&err_b), adcp_buf_free(&rows), adcp_buf_free(&other);
  adcp_buf_free(&want), adcp_buf_free(&canon), adcp_buf_free(&keep);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(ledger_commands, tu_scratch_setup, tu_scratch_teardown)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
