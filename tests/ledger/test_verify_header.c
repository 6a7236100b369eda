/* tests/ledger/test_verify_header.c — the header invariants verify checks
 * (src/ledger/verify_header.c), on SQLite and PostgreSQL. Every case is
 * made the way a database editor would: the guarding triggers, CHECKs,
 * partial unique indexes and foreign keys are dropped or disabled first, then
 * plain UPDATE/DELETE statements break one invariant. verify (and a streamed
 * full read) must then refuse with ROWS_INTEGRITY_FAILED naming what broke, while
 * untouched revisions, header-only sharing included, still verify. */
#include "ledger_fixture.h"

/* What an editor with DDL rights does before editing headers. */
static void unguard_headers(adcp_sql_conn *c, int pg) {
  adcp_error err = {0};
  OK(adcp_sql_exec_script(
      c,
      pg ? "ALTER TABLE adcp_reporting_revisions DISABLE TRIGGER USER;"
           "ALTER TABLE adcp_reporting_row_sets DISABLE TRIGGER USER;"
           "ALTER TABLE adcp_reporting_row_chunks DISABLE TRIGGER USER;"
           "DROP INDEX adcp_reporting_revisions_one_official;"
           "DROP INDEX adcp_reporting_revisions_one_successor;"
           "ALTER TABLE adcp_reporting_revisions DROP CONSTRAINT adcp_reporting_revisions_check,"
           "  DROP CONSTRAINT adcp_reporting_revisions_finality_check,"
           "  DROP CONSTRAINT adcp_reporting_revisions_binding_algorithm_check,"
           "  DROP CONSTRAINT adcp_reporting_revisions_supersedes_revision_id_fkey,"
           "  DROP CONSTRAINT adcp_reporting_revisions_rows_shared_from_revision_id_fkey;"
           "ALTER TABLE adcp_reporting_row_sets DROP CONSTRAINT adcp_reporting_row_sets_row_set_kind_check,"
           "  DROP CONSTRAINT adcp_reporting_row_sets_check1,"
           "  DROP CONSTRAINT adcp_reporting_row_sets_rows_shared_from_row_set_id_fkey;"
           "ALTER TABLE adcp_reporting_row_chunks DROP CONSTRAINT adcp_reporting_row_chunks_row_set_id_fkey;"
         : "DROP TRIGGER adcp_reporting_revisions_immutable;"
           "DROP TRIGGER adcp_reporting_row_sets_immutable;"
           "DROP TRIGGER adcp_reporting_row_chunks_immutable;"
           "DROP INDEX adcp_reporting_revisions_one_official;"
           "DROP INDEX adcp_reporting_revisions_one_successor;"
           "PRAGMA ignore_check_constraints = 1;"
           "PRAGMA foreign_keys = 0;",
      &err));
}

static void commit_n(adcp_ledger *l, const char *ob, const char *rev, adcp_finality fin, uint64_t rows, uint64_t salt) {
  adcp_error err = {0};
  gen g;
  gen_init(&g, rows, 8, salt);
  adcp_commit_result res;
  OK(commit_gen(&res, l, "acct", ob, rev, fin, &g, &err));
  adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
}

static int count_chunk(void *ctx, const uint8_t *bytes, size_t len, uint64_t rows, adcp_error *err) {
  (void)bytes, (void)len, (void)rows, (void)err;
  ++*(size_t *)ctx;
  return 0;
}

/* verify (account-checked and operator-wide) and a full read refuse with
 * ROWS_INTEGRITY_FAILED; the message names the broken invariant. */
static void expect_broken(adcp_ledger *l, const char *rev, const char *why) {
  adcp_error err = {0};
  int rc = adcp_ledger_verify_revision(l, "acct", rev, NULL, NULL, &err);
  if (rc != ADCP_EROWS_INTEGRITY_FAILED || !strstr(err.message, why))
    fail_msg("%s: verify gave %d '%s', want ROWS_INTEGRITY_FAILED naming '%s'", rev, rc, err.message, why);
  assert_non_null(strstr(err.message, "header invariant"));
  rc = adcp_ledger_verify_revision(l, NULL, rev, NULL, NULL, &err);
  if (rc != ADCP_EROWS_INTEGRITY_FAILED || !strstr(err.message, why))
    fail_msg("%s: operator verify gave %d '%s'", rev, rc, err.message);
  rc = adcp_ledger_verify_revision_header(l, "acct", rev, &err);
  if (rc != ADCP_EROWS_INTEGRITY_FAILED || !strstr(err.message, why))
    fail_msg("%s: header check gave %d '%s'", rev, rc, err.message);
  /* A streamed full read (the CLI's `read` without a range) runs the same check. */
  size_t chunks = 0;
  rc = adcp_ledger_verify_revision(l, "acct", rev, count_chunk, &chunks, &err);
  if (rc != ADCP_EROWS_INTEGRITY_FAILED) fail_msg("%s: streamed read gave %d '%s'", rev, rc, err.message);
  assert_int_equal(chunks, 0); /* refused before a single chunk was handed out */
}

static void expect_clean(adcp_ledger *l, const char *rev) {
  adcp_error err = {0};
  OK(adcp_ledger_verify_revision(l, "acct", rev, NULL, NULL, &err));
  OK(adcp_ledger_verify_revision_header(l, NULL, rev, &err));
}

static void header_invariants_are_verified(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_ledger *w = ledger_on(c, 0);
  const adcp_finality S = ADCP_FINALITY_SNAPSHOT, O = ADCP_FINALITY_OFFICIAL;
  /* One obligation per case; z is the untouched control (with sharing). */
  commit_n(w, "ob_a", "a1", S, 30, 1), commit_n(w, "ob_a", "a2", S, 30, 2); /* official with successor */
  commit_n(w, "ob_b", "b1", S, 30, 3), commit_n(w, "ob_b", "b2", S, 30, 4);
  commit_n(w, "ob_b", "b3", S, 30, 4);                                      /* shares b2's rows */
  commit_n(w, "ob_c", "c1", S, 30, 5), commit_n(w, "ob_c", "c2", S, 30, 5); /* c2 shares c1 */
  commit_n(w, "ob_d", "d1", S, 10, 6), commit_n(w, "ob_d", "d2", S, 10, 7), commit_n(w, "ob_d", "d3", S, 10, 8);
  commit_n(w, "ob_e", "e1", S, 10, 9), commit_n(w, "ob_e", "e2", S, 10, 10), commit_n(w, "ob_e", "e3", S, 10, 11);
  commit_n(w, "ob_f", "f1", S, 10, 12);
  commit_n(w, "ob_g", "g1", S, 10, 13), commit_n(w, "ob_g", "g2", O, 10, 14);
  commit_n(w, "ob_h", "h1", S, 10, 15), commit_n(w, "ob_h", "h2", S, 10, 16);
  commit_n(w, "ob_i", "i1", S, 10, 17), commit_n(w, "ob_i", "i2", S, 10, 18);
  commit_n(w, "ob_j", "j1", S, 10, 19), commit_n(w, "ob_j", "j2", S, 10, 20);
  commit_n(w, "ob_k", "k1", S, 10, 21), commit_n(w, "ob_k", "k2", S, 0, 0);
  commit_n(w, "ob_z", "z1", S, 30, 22), commit_n(w, "ob_z", "z2", S, 30, 22), commit_n(w, "ob_z", "z3", O, 30, 23);
  adcp_revision_header h;
  OK(adcp_ledger_get_revision(&h, w, "acct", "b3", &err));
  assert_string_equal(h.rows_shared_from, "b2");
  adcp_revision_header_free(&h);
  OK(adcp_ledger_get_revision(&h, w, "acct", "z2", &err));
  assert_string_equal(h.rows_shared_from, "z1");
  adcp_revision_header_free(&h);
  /* Before any edit every revision verifies. */
  static const char *all[] = {"a1", "a2", "b1", "b2", "b3", "c1", "c2", "d1", "d2", "d3", "e1", "e2", "e3", "f1",
                              "g1", "g2", "h1", "h2", "i1", "i2", "j1", "j2", "k1", "k2", "z1", "z2", "z3"};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) expect_clean(w, all[i]);
  adcp_ledger_close(w);

  unguard_headers(c, pg);
#define RUN(sql) OK(adcp_sql_exec_script(c, sql, &err))
  RUN("UPDATE adcp_reporting_revisions SET finality = 'official' WHERE revision_id = 'a1'");
  /* Shared from a revision with other rows, consistently in header and row set. */
  RUN("UPDATE adcp_reporting_revisions SET rows_shared_from_revision_id = 'b1' WHERE revision_id = 'b3';"
      "UPDATE adcp_reporting_row_sets SET rows_shared_from_row_set_id = 'b1' WHERE row_set_id = 'b3'");
  RUN("UPDATE adcp_reporting_revisions SET rows_shared_from_revision_id = 'gone' WHERE revision_id = 'c2';"
      "UPDATE adcp_reporting_row_sets SET rows_shared_from_row_set_id = 'gone' WHERE row_set_id = 'c2'");
  /* A revision deleted from the middle of the chain. */
  RUN("DELETE FROM adcp_reporting_revisions WHERE revision_id = 'd2'");
  /* e3 re-pointed at e1: a fork and a skipped number. */
  RUN("UPDATE adcp_reporting_revisions SET supersedes_revision_id = 'e1' WHERE revision_id = 'e3'");
  RUN("UPDATE adcp_reporting_revisions SET supersedes_revision_id = 'e2' WHERE revision_id = 'f1'");
  RUN("UPDATE adcp_reporting_revisions SET finality = 'official' WHERE revision_id = 'g1'");
  RUN("UPDATE adcp_reporting_revisions SET finality = 'final' WHERE revision_id = 'h2'");
  RUN("UPDATE adcp_reporting_revisions SET revision_number = 5 WHERE revision_id = 'i2'");
  RUN("UPDATE adcp_reporting_row_sets SET row_set_kind = 'adjustment' WHERE row_set_id = 'j2'");
  /* k2 has zero rows; give it a chunk_count without chunk records. */
  RUN("UPDATE adcp_reporting_row_sets SET chunk_count = 1 WHERE row_set_id = 'k2'");
  RUN("UPDATE adcp_reporting_revisions SET binding_algorithm = 'sha1_of_rows' WHERE revision_id = 'k1'");
#undef RUN
  adcp_ledger *l = ledger_on(c, -1);
  expect_broken(l, "a1", "finality is official but a later revision exists");
  expect_broken(l, "a2", "an earlier revision of obligation ob_a is already official"); /* the later side too */
  expect_broken(l, "b3", "rows_shared_from b1 has a different row manifest digest");
  expect_clean(l, "b1"), expect_clean(l, "b2");
  expect_broken(l, "c2", "rows_shared_from gone does not exist");
  expect_broken(l, "d1", "revision numbers of obligation ob_d are not 1..2 (they run 1..3)");
  expect_broken(l, "d3", "supersedes d2, which does not exist");
  expect_broken(l, "e3", "supersedes e1 (number 1), not number 2");
  expect_broken(l, "e1", "2 revisions supersede it (the chain forks)");
  expect_broken(l, "f1", "revision 1 supersedes e2");
  expect_broken(l, "g1", "obligation ob_g has 2 official revisions");
  expect_broken(l, "g1", "finality is official but a later revision exists");
  expect_broken(l, "g2", "obligation ob_g has 2 official revisions");
  expect_broken(l, "h2", "finality 'final' is neither snapshot nor official");
  expect_broken(l, "i2", "supersedes i1 (number 1), not number 4");
  expect_broken(l, "i1", "are not 1..2 (they run 1..5)");
  expect_broken(l, "j2", "row set kind is 'adjustment', not revision");
  expect_broken(l, "k2", "chunk_count 1 but 0 chunk records");
  expect_broken(l, "k1", "binding_algorithm 'sha1_of_rows' is unknown");
  /* Several broken at once are all listed. */
  adcp_error e2 = {0};
  assert_int_equal(adcp_ledger_verify_revision_header(l, "acct", "g1", &e2), ADCP_EROWS_INTEGRITY_FAILED);
  assert_non_null(strstr(e2.message, "header invariants broken: "));
  /* The untouched obligation, with its shared revision and its official, still verifies. */
  expect_clean(l, "z1"), expect_clean(l, "z2"), expect_clean(l, "z3");
  /* Unknown and other-account revisions stay REFERENCE_NOT_FOUND. */
  assert_int_equal(adcp_ledger_verify_revision_header(l, "acct", "nope", &e2), ADCP_EREFERENCE_NOT_FOUND);
  assert_int_equal(adcp_ledger_verify_revision_header(l, "other", "z1", &e2), ADCP_EREFERENCE_NOT_FOUND);
  assert_int_equal(adcp_ledger_verify_revision(l, "other", "a1", NULL, NULL, &e2), ADCP_EREFERENCE_NOT_FOUND);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* The obligation and account side: a header moved to another account, an
 * obligation with an impossible period, a row_set_id naming another row set. */
static void obligation_and_row_set_links(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_ledger *w = ledger_on(c, 0);
  commit_n(w, "ob_m", "m1", ADCP_FINALITY_SNAPSHOT, 10, 1);
  commit_n(w, "ob_n", "n1", ADCP_FINALITY_SNAPSHOT, 10, 2);
  commit_n(w, "ob_p", "p1", ADCP_FINALITY_SNAPSHOT, 10, 3);
  adcp_ledger_close(w);
  unguard_headers(c, pg);
  OK(adcp_sql_exec_script(c,
                          "UPDATE adcp_reporting_revisions SET account_id = 'acct' WHERE revision_id = 'm1';"
                          "UPDATE adcp_reporting_obligations SET account_id = 'elsewhere' WHERE obligation_id = 'ob_m';"
                          "UPDATE adcp_reporting_revisions SET row_set_id = 'p1' WHERE revision_id = 'n1'",
                          &err));
  OK(adcp_sql_exec_script(
      c,
      pg ? "ALTER TABLE adcp_reporting_obligations DROP CONSTRAINT adcp_reporting_obligations_check;"
           "UPDATE adcp_reporting_obligations SET period_end = period_start WHERE obligation_id = 'ob_p'"
         : "UPDATE adcp_reporting_obligations SET period_end = period_start WHERE obligation_id = 'ob_p'",
      &err));
  adcp_ledger *l = ledger_on(c, -1);
  expect_broken(l, "m1", "account differs from the account of obligation ob_m");
  expect_broken(l, "n1", "row_set_id p1 is not the revision ID");
  expect_broken(l, "p1", "obligation ob_p has period_end not after period_start");
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(header_invariants_are_verified),
      BOTH(obligation_and_row_set_links),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
