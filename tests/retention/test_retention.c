/* tests/retention/test_retention.c — retention on both engines: policy
 * refusals, the window at its exact boundary on the database clock, full
 * retirement (both binding kinds) with tombstone and one retirement change,
 * refusal to re-create or replay a retired period, holds/leases/feed
 * consumers with limit 1 not blocking an eligible period, skipped_unconfigured,
 * counters equal to the work done (backoff, fair order and batched passes are
 * in test_retention_passes.c), phase-1 reads answering ROWS_EXPIRED and
 * resume, row-only pruning with header-only sharing, and reads racing
 * retirement. */
#include <pthread.h>

#include "retention_fixture.h"

static void policy_rules(void **state) {
  (void)state;
  adcp_error err = {0};
  adcp_retention_policy out, p = ADCP_RETENTION_POLICY_INIT;
  assert_int_equal(adcp_retention_policy_check(&out, &p, &err), ADCP_EINVALID_INPUT);
  p.status_retention_days = 30, p.ledger_record_retention_days = 29;
  assert_int_equal(adcp_retention_policy_check(&out, &p, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "shorter"));
  p.ledger_record_retention_days = 0;
  OK(adcp_retention_policy_check(&out, &p, &err));
  assert_int_equal(out.ledger_record_retention_days, 30);
  assert_int_equal(out.change_retention_days, 30);
  assert_int_equal(out.max_feed_hold_days, 7);
  p.ledger_record_retention_days = 90;
  OK(adcp_retention_policy_check(&out, &p, &err));
  assert_int_equal(adcp_retention_window_days(&out), 90);
}

static void boundary(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 10, 8, 1);
  OK(rcommit(e.l, "acct", "ob1", 1, "r1", &g, NULL, &err));
  backdate(&e, "ob1", "2021-03-01T12:00:00.000000Z");
  /* Window end = anchor + 1 day = 2021-03-02T12:00:00Z. */
  adcp_retention_status st;
  OK(adcp_retention_get_status(&st, e.l, &POLICY, NULL, "2021-03-02T11:59:59.999999Z", &err));
  assert_int_equal(st.eligible.count, 0);
  OK(adcp_retention_get_status(&st, e.l, &POLICY, NULL, "2021-03-02T12:00:00.000000Z", &err));
  assert_int_equal(st.eligible.count, 1);
  assert_string_equal(st.eligible.oldest_obligation_id, "ob1");
  /* One revision 1 µs later keeps it one more microsecond. */
  backdate_rev(&e, "r1", "2021-03-01T12:00:00.000001Z");
  OK(adcp_retention_get_status(&st, e.l, &POLICY, NULL, "2021-03-02T12:00:00.000000Z", &err));
  assert_int_equal(st.eligible.count, 0);
  adcp_retention_options o = ropts(10);
  adcp_retention_counters c;
  o.as_of = "2021-03-02T12:00:00.000000Z";
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 0);
  o.as_of = "2021-03-02T12:00:00.000001Z";
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 1);
  /* The future is refused: retention never runs ahead of the database clock. */
  o.as_of = "2999-01-01T00:00:00Z";
  assert_int_equal(adcp_retention_retire(&c, e.l, &o, &err), ADCP_EINVALID_INPUT);
  /* Without as_of: the database clock. A period ending in an hour is not eligible. */
  OK(rcommit(e.l, "acct", "ob2", 2, "r2", &g, NULL, &err));
  char now[32];
  OK(adcp_sql_now(e.c, now, &err));
  OK(adcp_retention_get_status(&st, e.l, &POLICY, NULL, NULL, &err));
  assert_int_equal(st.eligible.count, 0);
  assert_int_equal(st.retired, 1);
  backdate(&e, "ob2", OLD);
  OK(adcp_retention_get_status(&st, e.l, &POLICY, NULL, NULL, &err));
  assert_int_equal(st.eligible.count, 1);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

static void retire_both_kinds(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 1200, 40, 3);
  OK(rcommit(e.l, "acct", "obp", 1, "p1", &g, NULL, &err));
  OK(rcommit(e.l, "acct", "obp", 1, "p2", &g, NULL, &err)); /* header-only */
  OK(rcommit(e.l, "acct", "obo", 2, "o1", &g, "fsb", &err));
  OK(rcommit(e.l, "acct", "obo", 2, "o2", &g, "fsb", &err)); /* header-only: same objects */
  backdate(&e, "obp", OLD);
  backdate(&e, "obo", OLD);
  int files = tu_dir_entries(e.root_b);
  assert_true(files > 0);
  adcp_retention_options o = ropts(10);
  adcp_retention_counters c;
  o.dry_run = 1;
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 2);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_obligation_tombstones", NULL), 0);
  o.dry_run = 0;
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 2);
  assert_int_equal(c.failed + c.held + c.protected_ + c.pending + c.stalled + c.skipped_unconfigured, 0);
  assert_int_equal(c.objects_deleted, 1); /* one chunk, shared by the header-only o2 */
  assert_true(c.bodies_deleted >= 1);
  assert_true(c.bytes_freed > 0);
  char st[16];
  assert_string_equal(tomb_state(&e, "obp", st), "retired");
  assert_string_equal(tomb_state(&e, "obo", st), "retired");
  assert_int_equal(retirement_changes(&e, "obp"), 1);
  assert_int_equal(retirement_changes(&e, "obo"), 1);
  assert_int_equal(
      q64(e.c, "SELECT revision_count FROM adcp_reporting_obligation_tombstones WHERE obligation_id = $1", "obp"), 2);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks", NULL), 0);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_chunk_bodies", NULL), 0);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_revisions", NULL), 0);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_obligations", NULL), 0);
  /* Reads: the same not-found as an unknown ID. */
  adcp_ledger_page pg;
  adcp_ledger_page_init(&pg);
  assert_int_equal(adcp_ledger_read_revision_rows(&pg, e.l, "acct", "p2", 0, 10, &err), ADCP_EREFERENCE_NOT_FOUND);
  adcp_ledger_page_free(&pg);
  /* Never re-created, never resurrected by a replay, under any obligation ID. */
  assert_int_equal(rcommit(e.l, "acct", "obp", 1, "p1", &g, NULL, &err), ADCP_ECONTENT_CONFLICT);
  assert_int_equal(rcommit(e.l, "acct", "obp", 1, "p9", &g, NULL, &err), ADCP_ECONTENT_CONFLICT);
  assert_int_equal(rcommit(e.l, "acct", "other", 1, "x1", &g, NULL, &err), ADCP_ECONTENT_CONFLICT);
  assert_int_equal(rcommit(e.l, "acct", "obo", 2, "o1", &g, "fsb", &err), ADCP_ECONTENT_CONFLICT);
  /* Issue 30 defect 6: a replay naming only the obligation (no period, no
   * configuration) answers the same conflict, not "does not exist yet". */
  g.next = 0;
  adcp_ledger_commit bare = {.version = ADCP_LEDGER_COMMIT_VERSION,
                             .account_id = "acct",
                             .obligation_id = "obp",
                             .revision_id = "p1",
                             .finality = ADCP_FINALITY_SNAPSHOT,
                             .next_row = gen_next,
                             .row_ctx = &g};
  adcp_commit_result bres;
  assert_int_equal(adcp_ledger_commit_revision(&bres, e.l, &bare, &err), ADCP_ECONTENT_CONFLICT);
  assert_non_null(strstr(err.message, "retention"));
  /* An obligation that never existed still asks for its period. */
  bare.obligation_id = "never";
  g.next = 0;
  assert_int_equal(adcp_ledger_commit_revision(&bres, e.l, &bare, &err), ADCP_EINVALID_INPUT);
  /* A second pass has nothing to do. */
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 0);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

static void holds_do_not_block(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 5, 8, 1);
  /* p1 leased, p2 explicitly held, p3 behind a live feed consumer, p4 and p5 eligible. */
  const char *obl[5] = {"p1", "p2", "p4", "p5", NULL};
  for (int i = 0; obl[i]; i++) {
    char rev[8];
    snprintf(rev, sizeof rev, "r%s", obl[i] + 1);
    OK(rcommit(e.l, "acct", obl[i], 10 + i, rev, &g, NULL, &err));
  }
  char seq[24];
  snprintf(seq, sizeof seq, "%lld", (long long)q64(e.c, "SELECT max(seq) FROM adcp_reporting_changes", NULL));
  OK(rcommit(e.l, "acct", "p3", 3, "r3", &g, NULL, &err));
  /* An account consumer that has read everything before p3's changes. */
  OK(adcp_feed_consumer_register(e.c, "warehouse", "acct", NULL, &err));
  rexec(&e, "UPDATE adcp_reporting_feed_consumers SET cursor_seq = $1::bigint WHERE consumer_name = $2",
        "UPDATE adcp_reporting_feed_consumers SET cursor_seq = CAST($1 AS INTEGER) WHERE consumer_name = $2", seq,
        "warehouse");
  const char *all5[5] = {"p1", "p2", "p3", "p4", "p5"};
  const char *ts[5] = {"2021-01-01T00:00:00.000000Z", "2021-01-02T00:00:00.000000Z", "2021-01-03T00:00:00.000000Z",
                       "2021-01-04T00:00:00.000000Z", "2021-01-05T00:00:00.000000Z"};
  for (int i = 0; i < 5; i++) backdate(&e, all5[i], ts[i]);
  rexec(&e,
        "UPDATE adcp_reporting_obligations SET lease_owner = 'w', lease_expires_at = clock_timestamp() + "
        "interval '1 hour' WHERE obligation_id = $1",
        "UPDATE adcp_reporting_obligations SET lease_owner = 'w', lease_expires_at = '2999-01-01T00:00:00.000000Z' "
        "WHERE obligation_id = $1",
        "p1", NULL);
  OK(adcp_retention_hold_add(e.l, "legal-1", "acct", "p2", "audit", NULL, &err));
  assert_int_equal(adcp_retention_hold_add(e.l, "legal-1", "acct", "p4", NULL, NULL, &err), ADCP_ECONFLICT);
  assert_int_equal(adcp_retention_hold_add(e.l, "bad id", "acct", "p4", NULL, NULL, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_retention_hold_add(e.l, "h2", "acct", "nope", NULL, NULL, &err), ADCP_EREFERENCE_NOT_FOUND);
  /* An account with no obligation here: the hold would hold nothing (issue 29). */
  assert_int_equal(adcp_retention_hold_add(e.l, "h3", "acct_nosuch", NULL, NULL, NULL, &err), ADCP_EREFERENCE_NOT_FOUND);
  assert_non_null(strstr(err.message, "account acct_nosuch has no obligation here"));

  adcp_retention_status st;
  OK(adcp_retention_get_status(&st, e.l, &POLICY, NULL, NULL, &err));
  assert_int_equal(st.eligible.count, 2);
  assert_string_equal(st.eligible.oldest_obligation_id, "p4");
  assert_int_equal(st.protected_.count, 1);
  assert_string_equal(st.protected_.oldest_obligation_id, "p1");
  assert_int_equal(st.held.count, 2);
  assert_string_equal(st.held.oldest_obligation_id, "p2");
  assert_int_equal(st.holds, 1);

  adcp_retention_options o = ropts(1);
  adcp_retention_counters c;
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  /* Limit 1 took p4 although three older periods are kept. */
  assert_int_equal(c.done, 1);
  assert_int_equal(c.protected_, 1);
  assert_int_equal(c.held, 2);
  assert_int_equal(c.pending, 1);
  assert_int_equal(c.failed + c.stalled + c.skipped_unconfigured, 0);
  char s[16];
  assert_string_equal(tomb_state(&e, "p4", s), "retired");
  assert_string_equal(tomb_state(&e, "p1", s), "");
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 1);
  assert_int_equal(c.pending, 0);
  assert_string_equal(tomb_state(&e, "p5", s), "retired");
  /* Releasing the holds lets them go. */
  OK(adcp_retention_hold_remove(e.l, "legal-1", &err));
  assert_int_equal(adcp_retention_hold_remove(e.l, "legal-1", &err), ADCP_EREFERENCE_NOT_FOUND);
  OK(adcp_feed_consumer_drop(e.c, "warehouse", &err));
  o.limit = 10;
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 2);
  assert_int_equal(c.protected_, 1);
  /* A hold on a retired period is refused. */
  assert_int_equal(adcp_retention_hold_add(e.l, "late", "acct", "p4", NULL, NULL, &err), ADCP_ECONTENT_CONFLICT);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

/* Issue 30 defect 7: recorded instants are never earlier than the
 * obligation's newest, and a writer whose clock is far behind the newest
 * recorded instant of its account is refused (a slow clock is simulated by
 * moving the recorded instant ahead: the same offset). */
static void slow_writer_clock(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 5, 8, 2);
  OK(rcommit(e.l, "acct", "oc", 1, "c1", &g, NULL, &err));
  /* 60 s ahead: within the tolerance, so the next revision is accepted and
   * recorded at c1's instant, not before it. */
  rexec(&e,
        "UPDATE adcp_reporting_revisions SET recorded_at = clock_timestamp() + interval '60 seconds' WHERE "
        "revision_id = $1",
        "UPDATE adcp_reporting_revisions SET recorded_at = strftime('%Y-%m-%dT%H:%M:%f', 'now', '+60 seconds') || "
        "'000Z' WHERE revision_id = $1",
        "c1", NULL);
  OK(rcommit(e.l, "acct", "oc", 1, "c2", &g, NULL, &err));
  assert_int_equal(q64(e.c,
                       "SELECT count(*) FROM adcp_reporting_revisions WHERE revision_id = $1 AND recorded_at = "
                       "(SELECT recorded_at FROM adcp_reporting_revisions WHERE revision_id = 'c1')",
                       "c2"),
                   1);
  /* 3 days ahead: this writer is 3 days slow; refused in any obligation of the account. */
  rexec(&e,
        "UPDATE adcp_reporting_revisions SET recorded_at = clock_timestamp() + interval '3 days' WHERE "
        "revision_id = $1",
        "UPDATE adcp_reporting_revisions SET recorded_at = strftime('%Y-%m-%dT%H:%M:%f', 'now', '+3 days') || "
        "'000Z' WHERE revision_id = $1",
        "c2", NULL);
  assert_int_equal(rcommit(e.l, "acct", "od", 2, "d1", &g, NULL, &err), ADCP_ESTATE_UNAVAILABLE);
  assert_non_null(strstr(err.message, "behind the newest recorded instant"));
  assert_int_equal(rcommit(e.l, "acct", "oc", 1, "c3", &g, NULL, &err), ADCP_ESTATE_UNAVAILABLE);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_revisions WHERE account_id = $1", "acct"), 2);
  /* Another account is not held back by it. */
  OK(rcommit(e.l, "acct2", "oe", 3, "e1", &g, NULL, &err));
  adcp_buf_free(&g.line);
  renv_close(&e);
}

static int stop_at(void *ctx, int step) { return step == *(int *)ctx; }

static void phase1_reads_expired_then_resume(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 30, 8, 4);
  OK(rcommit(e.l, "acct", "ob", 1, "r1", &g, "fsb", &err));
  OK(rcommit(e.l, "acct", "ob2", 2, "s1", &g, NULL, &err));
  backdate(&e, "ob", OLD);
  backdate(&e, "ob2", OLD);
  adcp_retention_options o = ropts(10);
  int at = ADCP_RETENTION_STEP_PHASE1;
  o.step_hook = stop_at, o.step_ctx = &at;
  adcp_retention_counters c;
  assert_int_equal(adcp_retention_retire(&c, e.l, &o, &err), ADCP_EABORTED);
  char s[16];
  assert_string_equal(tomb_state(&e, "ob", s), "retiring");
  adcp_ledger_page pg;
  adcp_ledger_page_init(&pg);
  assert_int_equal(adcp_ledger_read_revision_rows(&pg, e.l, "acct", "r1", 0, 5, &err), ADCP_EROWS_EXPIRED);
  assert_int_equal(adcp_ledger_verify_revision(e.l, "acct", "r1", NULL, NULL, &err), ADCP_EROWS_EXPIRED);
  adcp_ledger_page_free(&pg);
  assert_int_equal(rcommit(e.l, "acct", "ob", 1, "r2", &g, "fsb", &err), ADCP_ECONTENT_CONFLICT);
  assert_int_equal(rcommit(e.l, "acct", "ob", 1, "r1", &g, "fsb", &err), ADCP_ECONTENT_CONFLICT);
  assert_int_equal(adcp_retention_hold_add(e.l, "h", "acct", "ob", NULL, NULL, &err), ADCP_ECONTENT_CONFLICT);
  /* Phase 3 stopped before COMMIT: nothing of it stays. */
  at = ADCP_RETENTION_STEP_PHASE3;
  assert_int_equal(adcp_retention_retire(&c, e.l, &o, &err), ADCP_EABORTED);
  assert_string_equal(tomb_state(&e, "ob", s), "retiring");
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_revisions WHERE obligation_id = $1", "ob"), 1);
  o.step_hook = NULL;
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 2);
  assert_int_equal(c.resumed, 1);
  assert_string_equal(tomb_state(&e, "ob", s), "retired");
  assert_int_equal(retirement_changes(&e, "ob"), 1);
  assert_int_equal(retirement_changes(&e, "ob2"), 1);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks", NULL), 0);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

static void read_ok(adcp_ledger *l, const char *rev, int expect) {
  adcp_error err = {0};
  adcp_ledger_page pg;
  adcp_ledger_page_init(&pg);
  int rc = adcp_ledger_read_revision_rows(&pg, l, "acct", rev, 0, 0, &err);
  if (rc != expect) fail_msg("read %s: %d (%s), want %d", rev, rc, err.message, expect);
  adcp_ledger_page_free(&pg);
}

static void prune_header_only(const fixture *f, const char *binding) {
  renv e;
  renv_open(&e, f);
  adcp_error err = {0};
  gen g, h;
  gen_init(&g, 600, 20, 5);
  gen_init(&h, 600, 20, 6);
  OK(rcommit(e.l, "acct", "ob", 1, "v1", &g, binding, &err));
  OK(rcommit(e.l, "acct", "ob", 1, "v2", &g, binding, &err)); /* header-only: shares v1's bytes */
  OK(rcommit(e.l, "acct", "ob", 1, "v3", &h, binding, &err)); /* new rows */
  assert_int_equal(
      q64(e.c, "SELECT count(*) FROM adcp_reporting_row_sets WHERE rows_shared_from_row_set_id = $1", "v1"), 1);
  /* v1's successor (v2) is older than the window; v2's successor (v3) is not. */
  backdate_rev(&e, "v1", OLD);
  backdate_rev(&e, "v2", OLD);
  adcp_retention_options o = ropts(10);
  adcp_retention_counters c;
  OK(adcp_retention_prune_rows(&c, e.l, &o, &err));
  assert_int_equal(c.done, 1);
  assert_int_equal(c.bytes_freed, 0); /* v2 (live) still references every byte */
  assert_true(c.objects_kept >= 1);
  assert_int_equal(c.failed + c.pending + c.held, 0);
  read_ok(e.l, "v1", ADCP_EROWS_EXPIRED);
  read_ok(e.l, "v2", 0);
  read_ok(e.l, "v3", 0);
  /* Now v3 is old too: v2 goes, and with it the shared bytes (v1 and v2 expired). */
  backdate_rev(&e, "v3", OLD);
  rexec(&e,
        "UPDATE adcp_reporting_obligations SET lease_expires_at = clock_timestamp() + interval '1 hour', "
        "lease_owner = 'w', period_end = '2021-01-01T00:00:00Z', period_start = '2020-12-31T00:00:00Z', "
        "created_at = '2021-01-01T00:00:00Z' WHERE obligation_id = $1",
        "UPDATE adcp_reporting_obligations SET lease_expires_at = '2999-01-01T00:00:00.000000Z', lease_owner = 'w', "
        "period_end = '2021-01-01T00:00:00.000000Z', period_start = '2020-12-31T00:00:00.000000Z', created_at = "
        "'2021-01-01T00:00:00.000000Z' WHERE obligation_id = $1",
        "ob", NULL);
  /* The period is past the window but leased: retirement cannot take it, pruning frees all its bytes. */
  OK(adcp_retention_retire(&c, e.l, &o, &err));
  assert_int_equal(c.done, 0);
  assert_int_equal(c.protected_, 1);
  OK(adcp_retention_prune_rows(&c, e.l, &o, &err));
  if (c.done != 2)
    fail_msg("done %llu failed %llu held %llu pending %llu stalled %llu skipped %llu: %s", (unsigned long long)c.done,
             (unsigned long long)c.failed, (unsigned long long)c.held, (unsigned long long)c.pending,
             (unsigned long long)c.stalled, (unsigned long long)c.skipped_unconfigured,
             c.n_failures ? c.failures[0].message : "");
  assert_true(c.bytes_freed > 0);
  read_ok(e.l, "v2", ADCP_EROWS_EXPIRED);
  read_ok(e.l, "v3", ADCP_EROWS_EXPIRED);
  if (binding) assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks", NULL), 3);
  else assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_chunk_bodies", NULL), 0);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_revisions", NULL), 3); /* records stay */
  OK(adcp_retention_prune_rows(&c, e.l, &o, &err));
  assert_int_equal(c.done, 0);
  /* An explicit hold keeps bytes too. */
  OK(rcommit(e.l, "acct", "ob9", 9, "w1", &g, binding, &err));
  OK(rcommit(e.l, "acct", "ob9", 9, "w2", &h, binding, &err));
  backdate_rev(&e, "w2", OLD);
  OK(adcp_retention_hold_add(e.l, "keep", "acct", NULL, NULL, NULL, &err)); /* the whole account */
  OK(adcp_retention_prune_rows(&c, e.l, &o, &err));
  assert_int_equal(c.done, 0);
  assert_int_equal(c.held, 1);
  read_ok(e.l, "w1", 0);
  adcp_buf_free(&g.line);
  adcp_buf_free(&h.line);
  renv_close(&e);
}

static void prune_postgres_kind(void **state) { prune_header_only(*state, NULL); }
static void prune_object_kind(void **state) { prune_header_only(*state, "fsb"); }

/* A reader thread on its own connection while retirement runs. */
typedef struct racer {
  const fixture *f;
  renv *e;
  atomic_int stop;
  int bad;
  int reads, expired;
  char why[300];
} racer;

static void *reader(void *v) {
  racer *r = v;
  adcp_sql_conn *c;
  adcp_error err = {0};
  if (adcp_sql_connect(&c, r->f->url, &err)) {
    r->bad = 1;
    return NULL;
  }
  adcp_ledger *l = renv_ledger(r->e, c, 1);
  adcp_ledger_page pg;
  adcp_ledger_page_init(&pg);
  while (!atomic_load(&r->stop)) {
    for (int i = 0; i < 8; i++) {
      char rev[16];
      snprintf(rev, sizeof rev, "q%d", i);
      int rc = adcp_ledger_read_revision_rows(&pg, l, "acct", rev, 100, 50, &err);
      r->reads++;
      if (rc == ADCP_EROWS_EXPIRED || rc == ADCP_EREFERENCE_NOT_FOUND) r->expired++;
      else if (rc == ADCP_ECONFLICT || rc == ADCP_ESTORAGE) continue; /* SQLite busy under the writer: not a verdict */
      else if (rc) {
        r->bad = 1;
        snprintf(r->why, sizeof r->why, "%s: %s %s", rev, adcp_error_code_name(rc), err.message);
      }
    }
  }
  adcp_ledger_page_free(&pg);
  adcp_ledger_close(l);
  adcp_sql_close(c);
  return NULL;
}

static void read_races_retirement(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 1100, 10, 7);
  for (int i = 0; i < 8; i++) {
    char obl[16], rev[16];
    snprintf(obl, sizeof obl, "o%d", i), snprintf(rev, sizeof rev, "q%d", i);
    OK(rcommit(e.l, "acct", obl, i, rev, &g, i % 2 ? "fsb" : NULL, &err));
    backdate(&e, obl, OLD);
  }
  racer r = {.f = *state, .e = &e};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, reader, &r), 0);
  struct timespec ts = {0, 50 * 1000000L};
  nanosleep(&ts, NULL);
  adcp_retention_options o = ropts(1);
  adcp_retention_counters c;
  int done = 0;
  for (int k = 0; k < 20 && done < 8; k++) {
    OK(adcp_retention_retire(&c, e.l, &o, &err));
    done += (int)c.done;
    nanosleep(&ts, NULL);
  }
  atomic_store(&r.stop, 1);
  pthread_join(t, NULL);
  if (r.bad) fail_msg("a read raced into %s", r.why);
  assert_int_equal(done, 8);
  assert_true(r.reads > 0);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

/* Two workers on one PostgreSQL database retiring the same periods. */
typedef struct worker_arg {
  const fixture *f;
  renv *e;
  uint64_t done, failed, bad;
  char why[300];
} worker_arg;

static void *retire_worker(void *v) {
  worker_arg *w = v;
  adcp_sql_conn *c;
  adcp_error err = {0};
  if (adcp_sql_connect(&c, w->f->url, &err)) {
    w->bad = 1;
    return NULL;
  }
  adcp_ledger *l = renv_ledger(w->e, c, 1);
  for (int k = 0; k < 200; k++) {
    adcp_retention_options o = ropts(7);
    adcp_retention_counters cn;
    int rc = adcp_retention_retire(&cn, l, &o, &err);
    if (rc) {
      w->bad = 1;
      snprintf(w->why, sizeof w->why, "%s", err.message);
      break;
    }
    w->done += cn.done, w->failed += cn.failed;
    if (cn.failed && !w->why[0]) snprintf(w->why, sizeof w->why, "%s", cn.failures[0].message);
    if (!cn.done && !cn.pending) break;
  }
  adcp_ledger_close(l);
  adcp_sql_close(c);
  return NULL;
}

static void concurrent_retirers(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 50, 8, 12);
  enum { N = 30 };
  for (int i = 0; i < N; i++) {
    char obl[16], rev[16];
    snprintf(obl, sizeof obl, "c%02d", i), snprintf(rev, sizeof rev, "cr%02d", i);
    OK(rcommit(e.l, "acct", obl, i, rev, &g, i % 3 ? NULL : "fsb", &err));
    backdate(&e, obl, OLD);
  }
  worker_arg a = {.f = *state, .e = &e}, b = {.f = *state, .e = &e};
  pthread_t ta, tb;
  assert_int_equal(pthread_create(&ta, NULL, retire_worker, &a), 0);
  assert_int_equal(pthread_create(&tb, NULL, retire_worker, &b), 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  if (a.bad || b.bad || a.failed || b.failed) fail_msg("worker failed: %s / %s", a.why, b.why);
  assert_int_equal(a.done + b.done, N);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_changes WHERE record_kind = 'retirement'", NULL), N);
  assert_int_equal(
      q64(e.c, "SELECT count(DISTINCT record_id) FROM adcp_reporting_changes WHERE record_kind = 'retirement'", NULL), N);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_obligation_tombstones WHERE state = 'retired'", NULL), N);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks", NULL), 0);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

/* A hold-creating write racing retirement: never both a hold and a tombstone. */
typedef struct holder {
  const fixture *f;
  renv *e;
  const char *obl;
  int added, refused, other;
} holder;

static void *hold_writer(void *v) {
  holder *h = v;
  adcp_sql_conn *c;
  adcp_error err = {0};
  if (adcp_sql_connect(&c, h->f->url, &err)) {
    h->other = 1;
    return NULL;
  }
  adcp_ledger *l = renv_ledger(h->e, c, 1);
  for (int i = 0; i < 400 && !h->added && !h->refused; i++) {
    char id[32];
    snprintf(id, sizeof id, "%s-%d", h->obl, i);
    int rc = adcp_retention_hold_add(l, id, "acct", h->obl, NULL, NULL, &err);
    if (!rc) h->added = 1;
    else if (rc == ADCP_ECONTENT_CONFLICT) h->refused = 1;
    else if (rc != ADCP_ECONFLICT && rc != ADCP_ESTORAGE) h->other = rc;
    struct timespec ts = {0, 2 * 1000000L};
    nanosleep(&ts, NULL);
    if (!h->added && !h->refused) adcp_retention_hold_remove(l, id, &err);
  }
  adcp_ledger_close(l);
  adcp_sql_close(c);
  return NULL;
}

static void hold_write_races_retirement(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 20, 8, 13);
  for (int round = 0; round < 3; round++) {
    char obl[8];
    snprintf(obl, sizeof obl, "hp%d", round);
    rexec(&e, "DELETE FROM adcp_reporting_retention_holds WHERE account_id = $1",
          "DELETE FROM adcp_reporting_retention_holds WHERE account_id = $1", "acct", NULL);
    char rev[8];
    snprintf(rev, sizeof rev, "hq%d", round);
    OK(rcommit(e.l, "acct", obl, 10 + round, rev, &g, "fsb", &err));
    backdate(&e, obl, OLD);
    holder h = {.f = *state, .e = &e, .obl = obl};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, hold_writer, &h), 0);
    struct timespec ts = {0, (long)round * 3 * 1000000L};
    nanosleep(&ts, NULL);
    adcp_retention_options o = ropts(10);
    adcp_retention_counters c;
    OK(adcp_retention_retire(&c, e.l, &o, &err));
    pthread_join(t, NULL);
    assert_int_equal(h.other, 0);
    char st[16];
    int64_t holds = q64(e.c, "SELECT count(*) FROM adcp_reporting_retention_holds WHERE obligation_id = $1", obl);
    tomb_state(&e, obl, st);
    /* Exactly one side won, and the loser saw it. */
    if (holds) {
      assert_string_equal(st, "");
      if (c.held < 1)
        fail_msg("round %d: held %llu failed %llu done %llu pending %llu: %s", round, (unsigned long long)c.held,
                 (unsigned long long)c.failed, (unsigned long long)c.done, (unsigned long long)c.pending,
                 c.n_failures ? c.failures[0].message : "");
    } else {
      assert_string_equal(st, "retired");
      assert_int_equal(h.refused, 1);
    }
  }
  adcp_buf_free(&g.line);
  renv_close(&e);
}

static int abort_uploaded(void *ctx, int step) {
  (void)ctx;
  return step == ADCP_LEDGER_STEP_UPLOADED;
}

/* The intent sweep keeps its own backoff: a failing binding's intent does not starve another's. */
static void failing_binding_does_not_starve_intents(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 20, 8, 14);
  const char *bind[2] = {"fsa", "fsb"};
  for (int i = 0; i < 2; i++) {
    char rev[8];
    snprintf(rev, sizeof rev, "i%d", i);
    adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                              .account_id = "acct",
                              .obligation_id = rev,
                              .revision_id = rev,
                              .finality = ADCP_FINALITY_SNAPSHOT,
                              .period_start = "2020-01-01T00:00:00Z",
                              .period_end = "2020-01-02T00:00:00Z",
                              .next_row = gen_next,
                              .row_ctx = &g,
                              .binding_id = bind[i],
                              .step_hook = abort_uploaded};
    g.next = 0;
    adcp_commit_result res;
    assert_int_equal(adcp_ledger_commit_revision(&res, e.l, &req, &err), ADCP_EABORTED);
    /* fsa's intent expired first, so it is the oldest candidate. */
    rexec(&e, "UPDATE adcp_reporting_row_write_intents SET expires_at = $2::timestamptz WHERE row_set_id = $1",
          "UPDATE adcp_reporting_row_write_intents SET expires_at = $2 WHERE row_set_id = $1", rev,
          i ? "2021-01-02T00:00:00.000000Z" : "2021-01-01T00:00:00.000000Z");
  }
  atomic_store(&e.fail_a, 1);
  adcp_sweep_counters sc;
  OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 1, &err));
  assert_int_equal(sc.failed, 1);
  OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 1, &err));
  assert_int_equal(sc.swept, 1);
  assert_int_equal(sc.stalled, 1);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents WHERE row_binding_id = $1", "fsb"), 0);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

/* The worker adapters report every counter, zeros included; dry_run changes nothing. */
static void worker_adapters(void **state) {
  renv e;
  renv_open(&e, *state);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 10, 8, 15);
  OK(rcommit(e.l, "acct", "w1", 1, "wr1", &g, NULL, &err));
  OK(rcommit(e.l, "acct", "w2", 2, "wr2", &g, NULL, &err));
  backdate(&e, "w1", OLD);
  backdate(&e, "w2", OLD);
  adcp_retention_task_ctx ctx = {.version = ADCP_RETENTION_TASK_CTX_VERSION, .ledger = e.l, .policy = &POLICY};
  atomic_int stop = 0;
  adcp_worker_pass pass = {.version = ADCP_WORKER_PASS_VERSION, .limit = 1, .dry_run = 1, .stop = &stop};
  adcp_worker_report r;
  memset(&r, 0, sizeof r);
  OK(adcp_worker_task_period_retirement(&ctx, &pass, &r, &err));
  static const char *const names[] = {
      "retired", "failed",          "held",           "protected",   "stalled", "pending", "skipped_unconfigured",
      "resumed", "objects_deleted", "bodies_deleted", "bytes_freed", NULL};
  for (int i = 0; names[i]; i++) {
    int found = 0;
    for (size_t k = 0; k < r.count; k++) found |= !strcmp(r.counters[k].name, names[i]);
    if (!found) fail_msg("counter %s not reported", names[i]);
  }
  assert_int_equal(adcp_worker_report_get(&r, "retired"), 1); /* dry run, limit 1 */
  assert_int_equal(adcp_worker_report_get(&r, "pending"), 1);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_obligation_tombstones", NULL), 0);
  pass.dry_run = 0, pass.limit = 10;
  memset(&r, 0, sizeof r);
  OK(adcp_worker_task_period_retirement(&ctx, &pass, &r, &err));
  assert_int_equal(adcp_worker_report_get(&r, "retired"), 2);
  assert_true(adcp_worker_report_get(&r, "bytes_freed") > 0);
  memset(&r, 0, sizeof r);
  OK(adcp_worker_task_row_pruning(&ctx, &pass, &r, &err));
  assert_int_equal(adcp_worker_report_get(&r, "pruned"), 0);
  int has_kept = 0;
  for (size_t k = 0; k < r.count; k++) has_kept |= !strcmp(r.counters[k].name, "objects_kept");
  assert_true(has_kept);
  /* stop set: nothing processed, all pending. */
  OK(rcommit(e.l, "acct", "w3", 3, "wr3", &g, NULL, &err));
  backdate(&e, "w3", OLD);
  atomic_store(&stop, 1);
  memset(&r, 0, sizeof r);
  OK(adcp_worker_task_period_retirement(&ctx, &pass, &r, &err));
  assert_int_equal(adcp_worker_report_get(&r, "retired"), 0);
  assert_int_equal(adcp_worker_report_get(&r, "pending"), 1);
  adcp_retention_task_ctx bad = {.version = 2, .ledger = e.l, .policy = &POLICY};
  assert_int_equal(adcp_worker_task_row_pruning(&bad, &pass, &r, &err), ADCP_EINVALID_INPUT);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(policy_rules),
      BOTH(boundary),
      BOTH(retire_both_kinds),
      BOTH(holds_do_not_block),
      BOTH(slow_writer_clock),
      BOTH(phase1_reads_expired_then_resume),
      BOTH(prune_postgres_kind),
      BOTH(prune_object_kind),
      BOTH(read_races_retirement),
      {"postgres/concurrent_retirers", concurrent_retirers, setup, teardown, &POSTGRES},
      BOTH(hold_write_races_retirement),
      BOTH(failing_binding_does_not_starve_intents),
      BOTH(worker_adapters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
