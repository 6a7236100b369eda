/* tests/issues/test_issues.c — the issue lifecycle and the outbox (spec 07)
 * on SQLite and PostgreSQL: identity vectors, the state machine, events iff
 * transitions commit, escalation exactly once (four concurrent sweepers),
 * claims (order, leases, expiry, disjoint concurrent claimers, stale
 * leases), pruning, and an unmigrated database. */
#include "issues_fixture.h"

#include "adcp/json.h"
#include "adcp/worker.h"

#define ACCT "acct-1"

/* ---- identity: the sourced vectors and the [P] event rule, from one fixture ---- */

static void identity_vectors(void **state) {
  (void)state;
  size_t len;
  char *src = (char *)tu_read_file(ADCP_SOURCE_DIR "/tests/issues/fixtures/issue-identity-v1.json", &len);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_error err = {0};
  OK(adcp_json_parse(&d, src, len, NULL, &err));
  int n = 0;
  uint32_t arr = adcp_json_get(&d, 0, "issue_id");
  for (uint32_t v = adcp_json_first(&d, arr); v; v = adcp_json_next(&d, arr, v), n++) {
    size_t kl, il;
    const char *k = adcp_json_str(&d, adcp_json_get(&d, v, "issue_key"), &kl);
    const char *id = adcp_json_str(&d, adcp_json_get(&d, v, "issue_id"), &il);
    uint64_t g;
    OK(adcp_json_get_u64(&g, &d, adcp_json_get(&d, v, "generation"), &err));
    char key[64], want[64], got[ADCP_ISSUE_ID_LEN + 1];
    snprintf(key, sizeof key, "%.*s", (int)kl, k);
    snprintf(want, sizeof want, "%.*s", (int)il, id);
    OK(adcp_issue_id(got, key, (int64_t)g, &err));
    assert_string_equal(got, want);
  }
  assert_int_equal(n, 3);
  arr = adcp_json_get(&d, 0, "event_id");
  n = 0;
  for (uint32_t v = adcp_json_first(&d, arr); v; v = adcp_json_next(&d, arr, v), n++) {
    size_t a, b, c;
    const char *iid = adcp_json_str(&d, adcp_json_get(&d, v, "issue_id"), &a);
    const char *kind = adcp_json_str(&d, adcp_json_get(&d, v, "kind"), &b);
    const char *eid = adcp_json_str(&d, adcp_json_get(&d, v, "event_id"), &c);
    char i1[64], k1[32], want[64], got[ADCP_ISSUE_ID_LEN + 1];
    snprintf(i1, sizeof i1, "%.*s", (int)a, iid);
    snprintf(k1, sizeof k1, "%.*s", (int)b, kind);
    snprintf(want, sizeof want, "%.*s", (int)c, eid);
    OK(adcp_issue_event_id(got, i1, k1, &err));
    assert_string_equal(got, want);
  }
  assert_int_equal(n, 2);
  char out[ADCP_ISSUE_ID_LEN + 1];
  assert_int_equal(adcp_issue_id(out, "k", 0, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_issue_id(out, "a\nb", 1, &err), ADCP_EINVALID_INPUT);
  adcp_json_doc_free(&d);
  free(src);
}

/* ---- lifecycle ------------------------------------------------------------------ */

static void lifecycle_state_machine(void **state) {
  fixture *f = *state;
  adcp_storage *st = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(st);
  adcp_issues *s = store_on(c);
  adcp_error err = {0};
  adcp_issue_result r;
  int ready = 0;
  OK(adcp_issues_events_ready(&ready, s, &err));
  assert_true(ready);

  OK(adcp_issues_ensure_opened(&r, s, ACCT, "k", NULL, "2026-01-01T00:00:00Z", &err));
  assert_true(r.ready && r.changed && r.recorded);
  assert_string_equal(r.issue.issue_id, "rpti_6vYqFjLeEtY0aRs6tLCIlRh7yRimhoP7");
  assert_string_equal(r.issue.opened_at, "2026-01-01T00:00:00.000000Z");
  assert_int_equal(n_events(c), 1);
  /* Idempotent ensure: the first caller's opened_at, nothing recorded. */
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "k", NULL, "2026-02-01T00:00:00Z", &err));
  assert_false(r.changed || r.recorded);
  assert_string_equal(r.issue.opened_at, "2026-01-01T00:00:00.000000Z");
  assert_int_equal(n_events(c), 1);

  /* Operators set only acknowledged / waived. */
  assert_int_equal(adcp_issues_set_state(&r, s, ACCT, "k", "resolved", NULL, NULL, &err),
                   ADCP_EISSUE_STATE_NOT_OPERATOR_SETTABLE);
  assert_int_equal(adcp_issues_set_state(&r, s, ACCT, "k", "open", NULL, NULL, &err),
                   ADCP_EISSUE_STATE_NOT_OPERATOR_SETTABLE);
  assert_int_equal(adcp_issues_set_state(&r, s, ACCT, "nope", "acknowledged", NULL, NULL, &err), ADCP_EISSUE_NOT_OPEN);

  OK(adcp_issues_set_state(&r, s, ACCT, "k", "acknowledged", NULL, "TICKET-1", &err));
  assert_true(r.changed && r.recorded);
  assert_string_equal(r.issue.state, "acknowledged");
  assert_int_equal(n_events(c), 2);
  /* Re-acknowledge records nothing; an external_ref-only change records nothing. */
  OK(adcp_issues_set_state(&r, s, ACCT, "k", "acknowledged", NULL, NULL, &err));
  assert_false(r.changed || r.recorded);
  OK(adcp_issues_set_state(&r, s, ACCT, "k", "acknowledged", NULL, "TICKET-2", &err));
  assert_true(r.changed);
  assert_false(r.recorded);
  assert_string_equal(r.issue.external_ref, "TICKET-2");
  assert_int_equal(n_events(c), 2);

  OK(adcp_issues_set_state(&r, s, ACCT, "k", "waived", NULL, NULL, &err));
  assert_true(r.recorded);
  assert_string_equal(r.issue.external_ref, "TICKET-2");
  assert_true(r.issue.retired_at[0]);
  assert_int_equal(adcp_issues_set_state(&r, s, ACCT, "k", "acknowledged", NULL, NULL, &err),
                   ADCP_EISSUE_STATE_TRANSITION_INVALID);
  /* Waived is live (not reopened) and not retirable. */
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "k", NULL, NULL, &err));
  assert_false(r.changed);
  assert_string_equal(r.issue.state, "waived");
  OK(adcp_issues_retire(&r, s, ACCT, "k", NULL, &err));
  assert_false(r.changed || r.recorded);
  assert_int_equal(n_events(c), 3);

  /* A resolved occurrence is never reopened: a recurrence is generation 2. */
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "k2", "buyer-9", NULL, &err));
  OK(adcp_issues_retire(&r, s, ACCT, "k2", NULL, &err));
  assert_true(r.changed && r.recorded);
  assert_string_equal(r.issue.state, "resolved");
  OK(adcp_issues_retire(&r, s, ACCT, "k2", NULL, &err));
  assert_false(r.changed);
  assert_int_equal(adcp_issues_set_state(&r, s, ACCT, "k2", "acknowledged", NULL, NULL, &err), ADCP_EISSUE_NOT_OPEN);
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "k2", NULL, NULL, &err));
  assert_int_equal(r.issue.generation, 2);
  assert_int_equal(n_events(c), 6);

  /* issue_id hashes the key only: another account with the same key is refused. */
  assert_int_equal(adcp_issues_ensure_opened(&r, s, "acct-2", "k2", NULL, NULL, &err), ADCP_ECONFLICT);

  adcp_issue got;
  int found = 0;
  OK(adcp_issues_get(&got, &found, s, ACCT, "k2", NULL, &err));
  assert_true(found);
  assert_int_equal(got.generation, 2);
  assert_int_equal(got.pending_events, 1);
  OK(adcp_issues_get(&got, &found, s, "acct-2", NULL, r.issue.issue_id, &err));
  assert_false(found);
  adcp_issue *v;
  size_t n;
  adcp_issue_filter fl = {.account_id = ACCT};
  OK(adcp_issues_list(&v, &n, s, &fl, &err));
  assert_int_equal(n, 2); /* k (waived) and k2 gen 2 */
  free(v);
  fl.include_retired = 1;
  OK(adcp_issues_list(&v, &n, s, &fl, &err));
  assert_int_equal(n, 3);
  free(v);
  adcp_issues_close(s);
  adcp_storage_close(st);
}

/* An event exists iff its transition committed: the event insert fails (a
 * planted row holds its event_id under another (issue_id, kind)), so the
 * whole transition rolls back and nothing is recorded. */
static void rollback_records_nothing(void **state) {
  fixture *f = *state;
  adcp_storage *st = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(st);
  adcp_issues *s = store_on(c);
  adcp_error err = {0};
  char iid[ADCP_ISSUE_ID_LEN + 1], eid[ADCP_ISSUE_ID_LEN + 1];
  OK(adcp_issue_id(iid, "k", 1, &err));
  OK(adcp_issue_event_id(eid, iid, "opened", &err));
  adcp_sql_param p = adcp_sql_text(eid);
  OK(adcp_sql_exec(c,
                   f->dialect == ADCP_SQL_POSTGRES
                       ? "INSERT INTO reporting_issue_events (event_id, account_id, issue_id, issue_key, generation, "
                         "kind, issue_state, occurred_at) VALUES ($1, 'x', 'planted', 'x', 1, 'opened', 'open', now())"
                       : "INSERT INTO reporting_issue_events (event_id, seq, account_id, issue_id, issue_key, "
                         "generation, kind, issue_state, occurred_at, recorded_at, available_at) VALUES ($1, 1, 'x', "
                         "'planted', 'x', 1, 'opened', 'open', adcp_now(), adcp_now(), adcp_now())",
                   &p, 1, &err));
  adcp_issue_result r;
  assert_int_not_equal(adcp_issues_ensure_opened(&r, s, ACCT, "k", NULL, NULL, &err), 0);
  assert_int_equal(count_sql(c, "SELECT count(*) FROM reporting_issue_lifecycle"), 0);
  assert_int_equal(n_events(c), 1);
  assert_false(adcp_sql_in_transaction(c));
  adcp_issues_close(s);
  adcp_storage_close(st);
}

/* ---- escalation -------------------------------------------------------------------- */

static int settle_gone(void *ctx, adcp_sql_conn *conn, const adcp_issue *i, int *present, adcp_error *err) {
  (void)conn, (void)err;
  (*(int *)ctx)++;
  *present = strncmp(i->issue_key, "gone:", 5) != 0;
  return 0;
}

static void escalation_once(void **state) {
  fixture *f = *state;
  adcp_storage *st = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(st);
  adcp_issues *s = store_on(c);
  adcp_error err = {0};
  adcp_issue_result r;
  const char *old = "2020-01-01T00:00:00Z";
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "a-open", NULL, old, &err));
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "b-ack", NULL, old, &err));
  OK(adcp_issues_set_state(&r, s, ACCT, "b-ack", "acknowledged", NULL, NULL, &err));
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "c-waived", NULL, old, &err));
  OK(adcp_issues_set_state(&r, s, ACCT, "c-waived", "waived", NULL, NULL, &err));
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "d-resolved", NULL, old, &err));
  OK(adcp_issues_retire(&r, s, ACCT, "d-resolved", NULL, &err));
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "e-recent", NULL, NULL, &err));
  OK(adcp_issues_ensure_opened(&r, s, "acct-2", "gone:x", NULL, old, &err));
  adcp_escalation_counters k;
  assert_int_equal(adcp_issues_sweep_escalations(&k, s, 0, 0, NULL, NULL, 0, &err), ADCP_EINVALID_INPUT);
  OK(adcp_issues_sweep_escalations(&k, s, 3600000, 0, NULL, NULL, 1, &err)); /* dry run */
  assert_int_equal(k.pending, 3);
  assert_int_equal(k.escalated, 0);
  int calls = 0;
  OK(adcp_issues_sweep_escalations(&k, s, 3600000, 0, settle_gone, &calls, 0, &err));
  assert_int_equal(k.escalated, 2);
  assert_int_equal(k.resolved, 1); /* the cleared condition resolves instead */
  assert_int_equal(k.failed, 0);
  assert_int_equal(calls, 3);
  assert_int_equal(count_sql(c, "SELECT count(*) FROM reporting_issue_events WHERE kind = 'escalated'"), 2);
  assert_int_equal(count_sql(c,
                             "SELECT count(*) FROM reporting_issue_events WHERE kind = 'escalated' AND "
                             "issue_key IN ('c-waived', 'd-resolved', 'e-recent', 'gone:x')"),
                   0);
  assert_int_equal(count_sql(c,
                             "SELECT count(*) FROM reporting_issue_lifecycle WHERE issue_key = 'gone:x' AND "
                             "issue_state = 'resolved'"),
                   1);
  OK(adcp_issues_sweep_escalations(&k, s, 3600000, 0, NULL, NULL, 0, &err));
  assert_int_equal(k.escalated + k.resolved + k.pending, 0);
  adcp_issues_close(s);
  adcp_storage_close(st);
}

typedef struct sweeper {
  const fixture *f;
  int64_t escalated, failed;
  int rc;
} sweeper;

static void *sweep_thread(void *arg) {
  sweeper *w = arg;
  adcp_error err = {0};
  adcp_sql_conn *c;
  if ((w->rc = adcp_sql_connect(&c, w->f->url, &err))) return NULL;
  adcp_issues *s;
  adcp_issues_open(&s, c, &err);
  for (int pass = 0; pass < 3 && !w->rc; pass++) {
    adcp_escalation_counters k;
    w->rc = adcp_issues_sweep_escalations(&k, s, 1000, 7, NULL, NULL, 0, &err);
    w->escalated += k.escalated, w->failed += k.failed;
  }
  adcp_issues_close(s);
  adcp_sql_close(c);
  return NULL;
}

static void escalation_four_sweepers(void **state) {
  fixture *f = *state;
  adcp_storage *st = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(st);
  adcp_issues *s = store_on(c);
  adcp_error err = {0};
  adcp_issue_result r;
  for (int i = 0; i < 20; i++) {
    char a[16], k[32];
    snprintf(a, sizeof a, "acct-%d", i % 5);
    snprintf(k, sizeof k, "cond:%d", i);
    OK(adcp_issues_ensure_opened(&r, s, a, k, NULL, "2020-01-01T00:00:00Z", &err));
  }
  sweeper w[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) w[i] = (sweeper){.f = f}, pthread_create(&t[i], NULL, sweep_thread, &w[i]);
  int64_t total = 0, failed = 0;
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].rc, 0);
    total += w[i].escalated, failed += w[i].failed;
  }
  /* 3 passes x 7 per sweeper covers 20 even when some account locks wait. */
  adcp_escalation_counters k;
  OK(adcp_issues_sweep_escalations(&k, s, 1000, 100, NULL, NULL, 0, &err));
  total += k.escalated;
  assert_int_equal(total, 20);
  assert_int_equal(count_sql(c, "SELECT count(*) FROM reporting_issue_events WHERE kind = 'escalated'"), 20);
  (void)failed;
  adcp_issues_close(s);
  adcp_storage_close(st);
}

/* ---- claims ------------------------------------------------------------------------------ */

static void claims_order_and_leases(void **state) {
  fixture *f = *state;
  adcp_storage *st = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(st);
  adcp_issues *s = store_on(c);
  adcp_error err = {0};
  adcp_issue_result r;
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "x", NULL, NULL, &err));
  OK(adcp_issues_set_state(&r, s, ACCT, "x", "acknowledged", NULL, NULL, &err));
  OK(adcp_issues_retire(&r, s, ACCT, "x", NULL, &err));
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "y", NULL, NULL, &err));
  adcp_issue_event *v;
  size_t n;
  assert_int_equal(adcp_issues_claim_events(&v, &n, s, 0, 1000, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_issues_claim_events(&v, &n, s, 10, 0, &err), ADCP_EINVALID_INPUT);
  /* One event per occurrence: x's opened and y's opened, in seq order. */
  OK(adcp_issues_claim_events(&v, &n, s, 10, 60000, &err));
  assert_int_equal(n, 2);
  assert_string_equal(v[0].kind, "opened");
  assert_string_equal(v[0].issue_key, "x");
  assert_string_equal(v[1].issue_key, "y");
  assert_true(v[0].seq < v[1].seq);
  assert_int_equal(v[0].attempts, 1);
  assert_int_equal(strlen(v[0].lease_token), 32);
  assert_string_not_equal(v[0].lease_token, v[1].lease_token);
  adcp_issue_event x0 = v[0], y0 = v[1];
  free(v);
  /* Leased: nothing more (x's later events wait for its head). */
  OK(adcp_issues_claim_events(&v, &n, s, 10, 60000, &err));
  assert_int_equal(n, 0);
  free(v);
  int ok = 0;
  OK(adcp_issues_complete_event(&ok, s, x0.event_id, "00000000000000000000000000000000", &err));
  assert_false(ok);
  OK(adcp_issues_complete_event(&ok, s, x0.event_id, x0.lease_token, &err));
  assert_true(ok);
  OK(adcp_issues_complete_event(&ok, s, x0.event_id, x0.lease_token, &err)); /* twice: refused */
  assert_false(ok);
  OK(adcp_issues_claim_events(&v, &n, s, 10, 300, &err));
  assert_int_equal(n, 1);
  assert_string_equal(v[0].kind, "acknowledged");
  adcp_issue_event a1 = v[0];
  free(v);
  /* Expiry and reclaim: the old token is stale for complete and release. */
  usleep(450000);
  OK(adcp_issues_claim_events(&v, &n, s, 10, 60000, &err));
  assert_int_equal(n, 1); /* x's acknowledged again (y's opened is still leased) */
  assert_string_equal(v[0].event_id, a1.event_id);
  assert_int_equal(v[0].attempts, 2);
  assert_string_not_equal(v[0].lease_token, a1.lease_token);
  adcp_issue_event a2 = v[0], y1 = y0;
  free(v);
  OK(adcp_issues_complete_event(&ok, s, a1.event_id, a1.lease_token, &err));
  assert_false(ok);
  OK(adcp_issues_release_event(&ok, s, a1.event_id, a1.lease_token, 0, &err));
  assert_false(ok);
  assert_int_equal(adcp_issues_release_event(&ok, s, a2.event_id, a2.lease_token, -1, &err), ADCP_EINVALID_INPUT);
  /* Release with retry_after: not claimable until it passes. */
  OK(adcp_issues_release_event(&ok, s, a2.event_id, a2.lease_token, 400, &err));
  assert_true(ok);
  OK(adcp_issues_complete_event(&ok, s, y1.event_id, y1.lease_token, &err));
  assert_true(ok);
  OK(adcp_issues_claim_events(&v, &n, s, 10, 60000, &err));
  assert_int_equal(n, 0);
  free(v);
  usleep(500000);
  OK(adcp_issues_claim_events(&v, &n, s, 10, 60000, &err));
  assert_int_equal(n, 1);
  assert_int_equal(v[0].attempts, 3);
  /* Dead-letter: never claimed again, and no longer holds back `resolved`. */
  OK(adcp_issues_dead_letter_event(&ok, s, v[0].event_id, v[0].lease_token, &err));
  assert_true(ok);
  free(v);
  OK(adcp_issues_claim_events(&v, &n, s, 10, 60000, &err));
  assert_int_equal(n, 1);
  assert_string_equal(v[0].kind, "resolved");
  free(v);
  adcp_issue got;
  int found;
  OK(adcp_issues_get(&got, &found, s, ACCT, "x", NULL, &err));
  assert_int_equal(got.dead_letters, 1);
  adcp_issues_close(s);
  adcp_storage_close(st);
}

/* Claims one event, checks its kind and external_ref, completes it. */
static void claim_expect(adcp_issues *s, const char *kind, const char *ref) {
  adcp_error err = {0};
  adcp_issue_event *v;
  size_t n;
  int ok = 0;
  OK(adcp_issues_claim_events(&v, &n, s, 10, 60000, &err));
  assert_int_equal(n, 1);
  assert_string_equal(v[0].kind, kind);
  assert_string_equal(v[0].external_ref, ref);
  adcp_buf b;
  adcp_buf_init(&b);
  OK(adcp_issue_event_write_json(&b, &v[0], 0));
  adcp_buf_cstr(&b);
  char want[128];
  snprintf(want, sizeof want, *ref ? "\"external_ref\":\"%s\"" : "\"external_ref\":null", ref);
  assert_non_null(strstr((char *)b.data, want));
  adcp_buf_free(&b);
  OK(adcp_issues_complete_event(&ok, s, v[0].event_id, v[0].lease_token, &err));
  assert_true(ok);
  free(v);
}

/* issue 33: the external_ref given with an acknowledgement is carried by
 * that event and every later one; kept without a new value, replaced by one
 * (spec 07 §2). */
static void events_carry_external_ref(void **state) {
  fixture *f = *state;
  adcp_storage *st = open_migrated(f);
  adcp_issues *s = store_on(adcp_storage_sql(st));
  adcp_error err = {0};
  adcp_issue_result r;
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "ref", NULL, NULL, &err));
  claim_expect(s, "opened", "");
  OK(adcp_issues_set_state(&r, s, ACCT, "ref", "acknowledged", NULL, "JIRA-42", &err));
  claim_expect(s, "acknowledged", "JIRA-42");
  adcp_escalation_counters k;
  usleep(5000); /* past opened_at + 1 ms */
  OK(adcp_issues_sweep_escalations(&k, s, 1, 0, NULL, NULL, 0, &err));
  assert_int_equal(k.escalated, 1);
  claim_expect(s, "escalated", "JIRA-42");
  OK(adcp_issues_set_state(&r, s, ACCT, "ref", "waived", NULL, NULL, &err));
  claim_expect(s, "waived", "JIRA-42");
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "ref2", NULL, NULL, &err));
  claim_expect(s, "opened", "");
  OK(adcp_issues_set_state(&r, s, ACCT, "ref2", "acknowledged", NULL, "A-1", &err));
  claim_expect(s, "acknowledged", "A-1");
  OK(adcp_issues_set_state(&r, s, ACCT, "ref2", "acknowledged", NULL, "A-2", &err));
  OK(adcp_issues_retire(&r, s, ACCT, "ref2", NULL, &err));
  claim_expect(s, "resolved", "A-2");
  adcp_issues_close(s);
  adcp_storage_close(st);
}

static void prune_completed_only(void **state) {
  fixture *f = *state;
  adcp_storage *st = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(st);
  adcp_issues *s = store_on(c);
  adcp_error err = {0};
  adcp_issue_result r;
  for (int i = 0; i < 5; i++) {
    char k[16];
    snprintf(k, sizeof k, "p%d", i);
    OK(adcp_issues_ensure_opened(&r, s, ACCT, k, NULL, NULL, &err));
  }
  adcp_issue_event *v;
  size_t n;
  OK(adcp_issues_claim_events(&v, &n, s, 3, 60000, &err));
  assert_int_equal(n, 3);
  int ok;
  OK(adcp_issues_complete_event(&ok, s, v[0].event_id, v[0].lease_token, &err));
  OK(adcp_issues_complete_event(&ok, s, v[1].event_id, v[1].lease_token, &err));
  OK(adcp_issues_dead_letter_event(&ok, s, v[2].event_id, v[2].lease_token, &err));
  free(v);
  int64_t del = -1;
  OK(adcp_issues_prune_events(&del, s, 3600000, 0, &err)); /* too recent */
  assert_int_equal(del, 0);
  usleep(5000);
  OK(adcp_issues_prune_events(&del, s, 0, 0, &err));
  assert_int_equal(del, 2);
  assert_int_equal(n_events(c), 3); /* 2 pending (one leased-never), 1 dead-lettered */
  assert_int_equal(count_sql(c, "SELECT count(*) FROM reporting_issue_events WHERE completed_at IS NOT NULL"), 0);
  adcp_issue_event_stats es;
  OK(adcp_issues_event_stats(&es, s, &err));
  assert_int_equal(es.pending, 2);
  assert_int_equal(es.dead_lettered, 1);
  adcp_issues_close(s);
  adcp_storage_close(st);
}

typedef struct claimer {
  const fixture *f;
  char (*ids)[ADCP_ISSUE_ID_LEN + 1];
  size_t n;
  int rc;
} claimer;

static void *claim_thread(void *arg) {
  claimer *w = arg;
  adcp_error err = {0};
  adcp_sql_conn *c;
  if ((w->rc = adcp_sql_connect(&c, w->f->url, &err))) return NULL;
  adcp_issues *s;
  adcp_issues_open(&s, c, &err);
  for (int empty = 0; empty < 3 && !w->rc;) {
    adcp_issue_event *v;
    size_t n;
    if ((w->rc = adcp_issues_claim_events(&v, &n, s, 7, 60000, &err))) {
      if (w->rc == ADCP_ECONFLICT) w->rc = 0; /* SQLite busy past the timeout: retry */
      continue;
    }
    if (!n) empty++;
    adcp_issue_event_lease l[7];
    for (size_t i = 0; i < n; i++) {
      strcpy(w->ids[w->n++], v[i].event_id);
      l[i] = (adcp_issue_event_lease){v[i].event_id, v[i].lease_token};
    }
    int64_t done = 0;
    if (n) w->rc = adcp_issues_complete_events(NULL, &done, s, l, n, &err);
    if (!w->rc && done != (int64_t)n) w->rc = -999;
    free(v);
  }
  adcp_issues_close(s);
  adcp_sql_close(c);
  return NULL;
}

static int cmp_id(const void *a, const void *b) { return strcmp(a, b); }

static void claims_disjoint_four_workers(void **state) {
  fixture *f = *state;
  adcp_storage *st = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(st);
  adcp_issues *s = store_on(c);
  adcp_error err = {0};
  adcp_issue_result r;
  enum { N = 120 };
  for (int i = 0; i < N; i++) {
    char k[16], a[16];
    snprintf(k, sizeof k, "d%d", i);
    snprintf(a, sizeof a, "acct-%d", i % 3);
    OK(adcp_issues_ensure_opened(&r, s, a, k, NULL, NULL, &err));
    if (i % 4 == 0) OK(adcp_issues_retire(&r, s, a, k, NULL, &err)); /* a second event behind the first */
  }
  int total_events = (int)n_events(c);
  claimer w[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (claimer){.f = f, .ids = calloc(2 * N, sizeof *w[i].ids)};
    pthread_create(&t[i], NULL, claim_thread, &w[i]);
  }
  char(*all)[ADCP_ISSUE_ID_LEN + 1] = calloc(8 * N, sizeof *all);
  size_t m = 0;
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].rc, 0);
    memcpy(all + m, w[i].ids, w[i].n * sizeof *all);
    m += w[i].n;
    free(w[i].ids);
  }
  assert_int_equal(m, (size_t)total_events);
  qsort(all, m, sizeof *all, cmp_id);
  for (size_t i = 1; i < m; i++) assert_string_not_equal(all[i - 1], all[i]);
  assert_int_equal(count_sql(c, "SELECT count(*) FROM reporting_issue_events WHERE completed_at IS NULL"), 0);
  assert_int_equal(count_sql(c, "SELECT count(*) FROM reporting_issue_events WHERE attempts <> 1"), 0);
  free(all);
  adcp_issues_close(s);
  adcp_storage_close(st);
}

/* ---- an unmigrated database (0008 absent) -------------------------------------------- */

static void unmigrated_not_ready(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *st;
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  OK(adcp_storage_open(&st, f->url, &o, &err));
  const adcp_migration_set *all = adcp_storage_migrations(st);
  adcp_migration_set partial = *all;
  while (partial.count && strcmp(partial.items[partial.count - 1].version, "0008") >= 0) partial.count--;
  assert_true(partial.count < all->count);
  adcp_sql_conn *c = adcp_storage_sql(st);
  OK(adcp_migrate_apply(NULL, c, &partial, NULL, &err));
  adcp_issues *s = store_on(c);
  int ready = 1;
  OK(adcp_issues_events_ready(&ready, s, &err));
  assert_false(ready);
  adcp_issue_result r;
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "k", NULL, NULL, &err));
  assert_false(r.ready || r.changed || r.recorded || r.found);
  OK(adcp_issues_note_revision_verified(&r, s, ACCT, "rev-1", ADCP_EROWS_INTEGRITY_FAILED, &err));
  assert_false(r.recorded);
  adcp_issue_event *v;
  size_t n;
  assert_int_equal(adcp_issues_claim_events(&v, &n, s, 10, 1000, &err), ADCP_EREPORTING_SCHEMA_BEHIND);
  adcp_escalation_counters k;
  assert_int_equal(adcp_issues_sweep_escalations(&k, s, 1000, 0, NULL, NULL, 0, &err), ADCP_EREPORTING_SCHEMA_BEHIND);
  int64_t d;
  assert_int_equal(adcp_issues_prune_events(&d, s, 0, 0, &err), ADCP_EREPORTING_SCHEMA_BEHIND);
  assert_int_equal(adcp_migrate_check(c, all, &err), ADCP_EREPORTING_SCHEMA_BEHIND);
  assert_non_null(strstr(err.message, "0008"));
  /* Nothing was created behind the operator's back. */
  assert_int_equal(count_sql(c, f->dialect == ADCP_SQL_SQLITE
                                    ? "SELECT count(*) FROM sqlite_master WHERE name LIKE 'reporting_issue%'"
                                    : "SELECT count(*) FROM pg_class WHERE relname LIKE 'reporting_issue%'"),
                   0);
  /* Additive: applying 0008 later makes it ready; nothing is backfilled. */
  OK(adcp_storage_migrate(NULL, st, NULL, &err));
  OK(adcp_issues_events_ready(&ready, s, &err));
  assert_true(ready);
  assert_int_equal(n_events(c), 0);
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "k", NULL, NULL, &err));
  assert_true(r.ready && r.recorded);
  /* A dropped outbox index is "not ready" again on a fresh store. */
  OK(adcp_sql_exec_script(c, "DROP INDEX reporting_issue_events_pending", &err));
  adcp_issues *s2 = store_on(c);
  OK(adcp_issues_events_ready(&ready, s2, &err));
  assert_false(ready);
  adcp_issues_close(s2);
  adcp_issues_close(s);
  adcp_storage_close(st);
}

/* ---- the ledger's own conditions --------------------------------------------------------- */

static void ledger_conditions(void **state) {
  fixture *f = *state;
  adcp_storage *st = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(st);
  adcp_issues *s = store_on(c);
  adcp_error err = {0};
  adcp_issue_result r;
  OK(adcp_issues_note_revision_verified(&r, s, ACCT, "rev-1", ADCP_EROWS_INTEGRITY_FAILED, &err));
  assert_true(r.recorded);
  assert_string_equal(r.issue.issue_key, "revision_unreadable:rev-1");
  OK(adcp_issues_note_revision_verified(&r, s, ACCT, "rev-1", ADCP_EROWS_UNAVAILABLE, &err));
  assert_false(r.recorded);
  OK(adcp_issues_note_revision_verified(&r, s, ACCT, "rev-1", ADCP_EREFERENCE_NOT_FOUND, &err));
  assert_false(r.changed);
  OK(adcp_issues_note_revision_verified(&r, s, ACCT, "rev-1", 0, &err));
  assert_true(r.changed && r.recorded);
  assert_string_equal(r.issue.state, "resolved");
  OK(adcp_issues_note_retirement_stalled(&r, s, ACCT, "obl-1", 1, &err));
  assert_string_equal(r.issue.issue_key, "retirement_stalled:acct-1:obl-1");
  OK(adcp_issues_note_collector_fenced(&r, s, "bucket-a", 1, &err));
  assert_string_equal(r.issue.account_id, ADCP_ISSUES_DEPLOYMENT_ACCOUNT);
  assert_string_equal(r.issue.issue_key, "orphan_collector_fenced:bucket-a");
  OK(adcp_issues_note_collector_fenced(&r, s, "bucket-a", 0, &err));
  assert_string_equal(r.issue.state, "resolved");
  /* Unconfigured intents: none here, so nothing opens. */
  adcp_ledger *l = ledger_on(c, 0);
  adcp_intent_issue_counters ic;
  OK(adcp_issues_scan_unconfigured_intents(&ic, s, l, 0, &err));
  assert_int_equal(ic.opened + ic.present + ic.resolved, 0);
  adcp_ledger_close(l);
  assert_int_equal(n_events(c), 5);
  adcp_issues_close(s);
  adcp_storage_close(st);
}

/* ---- the worker task --------------------------------------------------------------------- */

static void worker_task_counters(void **state) {
  fixture *f = *state;
  adcp_storage *st = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(st);
  adcp_issues *s = store_on(c);
  adcp_error err = {0};
  adcp_issue_result r;
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "w:1", NULL, "2020-01-01T00:00:00Z", &err));
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "gone:w", NULL, "2020-01-01T00:00:00Z", &err));
  OK(adcp_issues_ensure_opened(&r, s, ACCT, "w:3", NULL, "2020-01-01T00:00:00Z", &err));
  adcp_ledger *l = ledger_on(c, 0);
  int calls = 0;
  adcp_worker_issues_ctx ctx = {.version = ADCP_WORKER_ISSUES_CTX_VERSION,
                                .store = s,
                                .escalation_after_ms = 60000,
                                .settle = settle_gone,
                                .settle_ctx = &calls,
                                .ledger = l};
  atomic_int stop = 0;
  adcp_worker_pass pass = {.version = ADCP_WORKER_PASS_VERSION, .limit = 1, .dry_run = 1, .stop = &stop};
  adcp_worker_report rep;
  memset(&rep, 0, sizeof rep);
  OK(adcp_worker_task_issue_escalation(&ctx, &pass, &rep, &err));
  assert_int_equal(adcp_worker_report_get(&rep, "pending"), 3);
  assert_int_equal(adcp_worker_report_get(&rep, "escalated"), 0);
  assert_int_equal(n_events(c), 3);
  pass.dry_run = 0;
  memset(&rep, 0, sizeof rep);
  OK(adcp_worker_task_issue_escalation(&ctx, &pass, &rep, &err));
  assert_int_equal(adcp_worker_report_get(&rep, "escalated"), 1);
  assert_int_equal(adcp_worker_report_get(&rep, "pending"), 2); /* left by the limit */
  pass.limit = 100;
  memset(&rep, 0, sizeof rep);
  OK(adcp_worker_task_issue_escalation(&ctx, &pass, &rep, &err));
  assert_int_equal(adcp_worker_report_get(&rep, "escalated"), 1);
  assert_int_equal(adcp_worker_report_get(&rep, "resolved"), 1);
  assert_int_equal(adcp_worker_report_get(&rep, "pending"), 0);
  assert_int_equal(adcp_worker_report_get(&rep, "events_pending"), 6);
  /* Every owned counter is reported, zeros included. */
  const char *names[] = {"failed", "skipped", "intents_opened", "intents_resolved", "events_dead_lettered"};
  for (size_t i = 0; i < 5; i++) {
    int seen = 0;
    for (size_t k = 0; k < rep.count; k++) seen |= !strcmp(rep.counters[k].name, names[i]);
    assert_true(seen);
  }
  ctx.version = 2;
  assert_int_equal(adcp_worker_task_issue_escalation(&ctx, &pass, &rep, &err), ADCP_EINVALID_INPUT);
  adcp_ledger_close(l);
  adcp_issues_close(s);
  adcp_storage_close(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(identity_vectors),
      BOTH(lifecycle_state_machine),
      BOTH(rollback_records_nothing),
      BOTH(escalation_once),
      BOTH(escalation_four_sweepers),
      BOTH(claims_order_and_leases),
      BOTH(events_carry_external_ref),
      BOTH(prune_completed_only),
      BOTH(claims_disjoint_four_workers),
      BOTH(unmigrated_not_ready),
      BOTH(ledger_conditions),
      BOTH(worker_task_counters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
