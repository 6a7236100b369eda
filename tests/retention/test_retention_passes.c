/* tests/retention/test_retention_passes.c — room retention, how a pass
 * orders and groups its work, on both engines: a failing binding backing off
 * without starving another binding, a period that keeps failing never taking
 * the only slot once its backoff has run out (issue 30 defect 1), periods
 * retired in batches of one transaction per phase (issue 32), and one failing
 * period in a batch not losing or wrongly retiring the others. Split from
 * test_retention.c (issue 31: no file over 900 lines). */
#include "retention_fixture.h"

static void failing_binding_backs_off(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 20, 8, 2);
  OK(rcommit(e.l, "acct", "pa", 1, "ra", &g, "fsa", &err));
  OK(rcommit(e.l, "acct", "pb", 2, "rb", &g, "fsb", &err));
  backdate(&e, "pa", "2021-01-01T00:00:00.000000Z");
  backdate(&e, "pb", "2021-01-02T00:00:00.000000Z");
  atomic_store(&e.fail_a, 1);
  adcp_retention_options o = ropts(1);
  adcp_retention_counters c;
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.failed, 1);
  assert_int_equal(c.done, 0);
  assert_int_equal(c.pending, 1);
  assert_int_equal(c.n_failures, 1);
  assert_string_equal(c.failures[0].obligation_id, "pa");
  assert_int_equal(c.failures[0].code, ADCP_EPROVIDER_UNAVAILABLE);
  /* pa is in backoff: excluded before LIMIT, so pb is retired. */
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 1);
  assert_int_equal(c.stalled, 1);
  assert_int_equal(c.failed, 0);
  char s[16];
  assert_string_equal(tomb_state(&e, "pb", s), "retired");
  assert_string_equal(tomb_state(&e, "pa", s), "retiring");
  adcp_retention_stalled *items;
  size_t n;
  OK(adcp_retention_list_stalled(&items, &n, e.l, 0, &err));
  assert_int_equal(n, 1);
  assert_string_equal(items[0].obligation_id, "pa");
  assert_string_equal(items[0].operation, "retirement");
  assert_int_equal(items[0].failures, 1);
  assert_non_null(strstr(items[0].last_cause, "PROVIDER_UNAVAILABLE"));
  free(items);
  OK(adcp_retention_list_stalled(&items, &n, e.l, 3600, &err));
  assert_int_equal(n, 0);
  free(items);
  /* Reads of the retiring period: expired, never an integrity failure. */
  adcp_ledger_page pg;
  adcp_ledger_page_init(&pg);
  assert_int_equal(adcp_ledger_read_revision_rows(&pg, e.l, "acct", "ra", 0, 5, &err), ADCP_EROWS_EXPIRED);
  adcp_ledger_page_free(&pg);
  /* A process without fsa configured skips it (no limit used, not failed). */
  adcp_ledger *l2 = renv_ledger(&e, e.c, 0);
  rexec(&e, "DELETE FROM adcp_reporting_retention_attempts WHERE obligation_id = $1",
        "DELETE FROM adcp_reporting_retention_attempts WHERE obligation_id = $1", "pa", NULL);
  OK(adcp_retention_retire(&c, l2, &o, &err));
  assert_int_equal(c.skipped_unconfigured, 1);
  assert_int_equal(c.failed + c.done + c.pending, 0);
  adcp_ledger_close(l2);
  /* The store recovers: the backoff is gone (deleted above), the retirement resumes. */
  atomic_store(&e.fail_a, 0);
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 1);
  assert_int_equal(c.resumed, 1);
  assert_string_equal(tomb_state(&e, "pa", s), "retired");
  assert_int_equal(retirement_changes(&e, "pa"), 1);
  assert_int_equal(tu_dir_entries(e.root_a) >= 0, 1);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

/* Issue 30 defect 1: a period whose phase 2 keeps failing (its bucket root
 * replaced by a file) must not take the only slot (limit 1) of every pass
 * once its backoff has run out: the other periods retire first. */
static void expire_backoff(renv *e, const char *obl) {
  rexec(e, "UPDATE adcp_reporting_retention_attempts SET next_attempt_at = $2::timestamptz WHERE obligation_id = $1",
        "UPDATE adcp_reporting_retention_attempts SET next_attempt_at = $2 WHERE obligation_id = $1", obl,
        "2001-01-01T00:00:00.000000Z");
}

static void stuck_period_does_not_starve(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 20, 8, 2);
  OK(rcommit(e.l, "acct", "pa", 1, "ra", &g, "fsa", &err));
  OK(rcommit(e.l, "acct", "pb", 2, "rb", &g, "fsb", &err));
  OK(rcommit(e.l, "acct", "pc", 3, "rc", &g, NULL, &err));
  backdate(&e, "pa", "2021-01-01T00:00:00.000000Z");
  backdate(&e, "pb", "2021-01-02T00:00:00.000000Z");
  backdate(&e, "pc", "2021-01-03T00:00:00.000000Z");
  char moved[700];
  snprintf(moved, sizeof moved, "%s.moved", e.root_a);
  assert_int_equal(rename(e.root_a, moved), 0);
  FILE *fp = fopen(e.root_a, "w");
  assert_non_null(fp);
  fclose(fp);
  adcp_retention_options o = ropts(1);
  adcp_retention_counters c;
  char s[16];
  OK(adcp_retention_retire(&c, e.l, &o, &err)); /* pa first by period_end: phase 2 fails */
  assert_int_equal(c.failed, 1);
  assert_string_equal(tomb_state(&e, "pa", s), "retiring");
  /* Every later pass comes after pa's backoff has run out (hourly passes). */
  for (int pass = 0; pass < 2; pass++) {
    expire_backoff(&e, "pa");
    OK(adcp_retention_retire(&c, e.l, &o, &err));
    if (c.done != 1)
      fail_msg("pass %d: the stuck period took the slot (done %llu, failed %llu)", pass + 2, (unsigned long long)c.done,
               (unsigned long long)c.failed);
    assert_int_equal(c.failed, 0);
  }
  assert_string_equal(tomb_state(&e, "pb", s), "retired");
  assert_string_equal(tomb_state(&e, "pc", s), "retired");
  /* Nothing else left: pa gets its turn again, and still fails. */
  expire_backoff(&e, "pa");
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.failed, 1);
  assert_int_equal(q64(e.c, "SELECT failures FROM adcp_reporting_retention_attempts WHERE obligation_id = $1", "pa"), 2);
  /* The root restored: the retirement resumes and completes. */
  assert_int_equal(unlink(e.root_a), 0);
  assert_int_equal(rename(moved, e.root_a), 0);
  expire_backoff(&e, "pa");
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 1);
  assert_int_equal(c.resumed, 1);
  assert_string_equal(tomb_state(&e, "pa", s), "retired");
  adcp_buf_free(&g.line);
  renv_close(&e);
}

/* Issue 32: periods retire in batches, several per transaction. The step
 * hook runs inside phase 3's transaction, before its COMMIT; a second
 * connection counts the retired tombstones it can see there. Batches grow 1,
 * 2, 4: the third and fifth period see nothing of the second and fourth (same
 * transaction); one transaction per period would show 0, 1, 2, 3, 4. */
typedef struct seen {
  adcp_sql_conn *other;
  int64_t at[8];
  int n;
} seen;

static int count_retired(void *ctx, int step) {
  seen *s = ctx;
  if (step == ADCP_RETENTION_STEP_PHASE3 && s->n < 8)
    s->at[s->n++] =
        q64(s->other, "SELECT count(*) FROM adcp_reporting_obligation_tombstones WHERE state = 'retired'", NULL);
  return 0;
}

static int64_t retirement_leaves(renv *e, const char *obl) {
  return q64(e->c, "SELECT count(*) FROM adcp_audit_log_leaves WHERE entry_kind = 'retirement' AND obligation_id = $1",
             obl);
}

static void batched_pass_one_transaction(void **state) {
  const fixture *f = *state;
  renv e;
  renv_open(&e, f);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 20, 8, 21);
  const char *obl[5] = {"q1", "q2", "q3", "q4", "q5"};
  for (int i = 0; i < 5; i++) {
    char rev[8];
    snprintf(rev, sizeof rev, "qr%d", i);
    OK(rcommit(e.l, "acct", obl[i], i + 1, rev, &g, i == 2 ? "fsb" : NULL, &err));
    char ts[40];
    snprintf(ts, sizeof ts, "2021-01-0%dT00:00:00.000000Z", i + 1);
    backdate(&e, obl[i], ts);
  }
  seen sn = {0};
  OK(adcp_sql_connect(&sn.other, f->url, &err));
  adcp_retention_options o = ropts(10);
  o.step_hook = count_retired, o.step_ctx = &sn;
  adcp_retention_counters c;
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 5);
  assert_int_equal(c.failed, 0);
  assert_int_equal(sn.n, 5);
  const int64_t want[5] = {0, 1, 1, 3, 3};
  for (int i = 0; i < 5; i++)
    if (sn.at[i] != want[i])
      fail_msg("period %d saw %lld retired before its COMMIT, want %lld (not batched)", i + 1, (long long)sn.at[i],
               (long long)want[i]);
  char st[16];
  for (int i = 0; i < 5; i++) {
    assert_string_equal(tomb_state(&e, obl[i], st), "retired");
    assert_int_equal(retirement_changes(&e, obl[i]), 1);
    assert_int_equal(retirement_leaves(&e, obl[i]), 1);
  }
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks", NULL), 0);
  adcp_sql_close(sn.other);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

/* A period failing inside a batch rolls back alone: in the batch of four
 * (periods 4-7), p5's phase 3 and p6's phase 1 are refused by a trigger; p4
 * and p7 retire with their evidence, p5 stays retiring with every record, p6
 * keeps no tombstone; both back off and retire once the trigger is gone. */
static void batch_failure_isolated(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 20, 8, 22);
  const char *obl[7] = {"p1", "p2", "p3", "p4", "p5", "p6", "p7"};
  for (int i = 0; i < 7; i++) {
    char rev[8];
    snprintf(rev, sizeof rev, "pr%d", i + 1);
    OK(rcommit(e.l, "acct", obl[i], i + 1, rev, &g, i == 4 ? "fsb" : NULL, &err));
    char ts[40];
    snprintf(ts, sizeof ts, "2021-01-0%dT00:00:00.000000Z", i + 1);
    backdate(&e, obl[i], ts);
  }
  if (e.pg)
    OK(adcp_sql_exec_script(
        e.c,
        "CREATE FUNCTION adcp_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION "
        "'test: refused'; END $$; CREATE TRIGGER adcp_test_refuse3 BEFORE DELETE ON adcp_reporting_obligations FOR "
        "EACH ROW WHEN (OLD.obligation_id = 'p5') EXECUTE FUNCTION adcp_test_refuse(); CREATE TRIGGER "
        "adcp_test_refuse1 BEFORE INSERT ON adcp_reporting_obligation_tombstones FOR EACH ROW WHEN "
        "(NEW.obligation_id = 'p6') EXECUTE FUNCTION adcp_test_refuse();",
        &err));
  else
    OK(adcp_sql_exec_script(e.c,
                            "CREATE TRIGGER adcp_test_refuse3 BEFORE DELETE ON adcp_reporting_obligations WHEN "
                            "OLD.obligation_id = 'p5' BEGIN SELECT RAISE(ABORT, 'test: refused'); END; CREATE TRIGGER "
                            "adcp_test_refuse1 BEFORE INSERT ON adcp_reporting_obligation_tombstones WHEN "
                            "NEW.obligation_id = 'p6' BEGIN SELECT RAISE(ABORT, 'test: refused'); END;",
                            &err));
  adcp_retention_options o = ropts(10);
  adcp_retention_counters c;
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 5);
  assert_int_equal(c.failed, 2);
  char st[16];
  for (int i = 0; i < 7; i++) {
    if (i == 4 || i == 5) continue;
    assert_string_equal(tomb_state(&e, obl[i], st), "retired");
    assert_int_equal(retirement_changes(&e, obl[i]), 1);
    assert_int_equal(retirement_leaves(&e, obl[i]), 1);
  }
  /* p5: tombstoned and its object deleted, but its records and no evidence. */
  assert_string_equal(tomb_state(&e, "p5", st), "retiring");
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_revisions WHERE obligation_id = $1", "p5"), 1);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_row_sets WHERE obligation_id = $1", "p5"), 1);
  assert_int_equal(retirement_changes(&e, "p5"), 0);
  assert_int_equal(retirement_leaves(&e, "p5"), 0);
  /* p6: untouched. */
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_obligation_tombstones WHERE obligation_id = $1", "p6"), 0);
  assert_int_equal(q64(e.c,
                       "SELECT count(*) FROM adcp_reporting_row_sets WHERE obligation_id = $1 AND rows_state = "
                       "'live'",
                       "p6"),
                   1);
  assert_int_equal(retirement_leaves(&e, "p6"), 0);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_retention_attempts WHERE failures = 1", NULL), 2);
  OK(adcp_sql_exec_script(e.c,
                          e.pg ? "DROP TRIGGER adcp_test_refuse3 ON adcp_reporting_obligations; DROP TRIGGER "
                                 "adcp_test_refuse1 ON adcp_reporting_obligation_tombstones"
                               : "DROP TRIGGER adcp_test_refuse3; DROP TRIGGER adcp_test_refuse1",
                          &err));
  expire_backoff(&e, "p5");
  expire_backoff(&e, "p6");
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 2);
  assert_int_equal(c.resumed, 1);
  assert_int_equal(c.failed, 0);
  for (int i = 0; i < 7; i++) {
    assert_string_equal(tomb_state(&e, obl[i], st), "retired");
    assert_int_equal(retirement_changes(&e, obl[i]), 1);
    assert_int_equal(retirement_leaves(&e, obl[i]), 1);
  }
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks", NULL), 0);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_retention_attempts", NULL), 0);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(failing_binding_backs_off),
      BOTH(stuck_period_does_not_starve),
      BOTH(batched_pass_one_transaction),
      BOTH(batch_failure_isolated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
