/* tests/retention/test_retention_maintain.c — the maintenance worker runs the
 * retention tasks only when retention is enabled in the configuration, their
 * counters equal the work done, a retirement leaves exactly one audit-log
 * retirement leaf (so `audit` calls the revision retired, not missing), and a
 * period stuck in backoff becomes one retirement_stalled issue that resolves
 * once the period moves on. Both engines, through the shipped CLI. */
#define _XOPEN_SOURCE 700
#include "retention_fixture.h"
#include "support/support_config.h"

static void write_cfg(const renv *e, const char *name, const char *extra, char *path, size_t n) {
  snprintf(path, n, "%s/%s", e->dir, name);
  tu_write_config(path,
                  "{\"bindings\": [{\"id\": \"fsb\", \"provider\": \"filesystem\", \"location\": {\"root\": \"b\"}, "
                  "\"root_dir\": \"%s\", \"prefix\": \"rows\", \"compression\": \"gzip\"}]%s}\n",
                  e->root_b, extra);
}

static const char *txt(const adcp_buf *b) { return b->data ? (const char *)b->data : ""; }

/* The JSON object of task `name` in a maintain document (up to its "error"). */
static const char *task_of(const adcp_buf *b, const char *name, char *out, size_t n) {
  char key[96];
  snprintf(key, sizeof key, "{\"name\":\"%s\"", name);
  const char *s = strstr(txt(b), key);
  if (!s) return NULL;
  const char *e = strstr(s, "\"error\":");
  size_t len = e ? (size_t)(e - s) : strlen(s);
  if (len >= n) len = n - 1;
  memcpy(out, s, len);
  out[len] = 0;
  return out;
}

static void retention_tasks_follow_config(void **state) {
  const fixture *f = *state;
  renv e;
  renv_open(&e, f);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 700, 30, 3);
  OK(rcommit(e.l, "acct", "old1", 1, "a1", &g, "fsb", &err));
  OK(rcommit(e.l, "acct", "old1", 1, "a2", &g, NULL, &err));
  OK(rcommit(e.l, "acct", "keep", 2, "k1", &g, "fsb", &err));
  backdate(&e, "old1", OLD);
  char off[700], on[700], forced[700];
  write_cfg(&e, "off.json", "", off, sizeof off);
  write_cfg(&e, "on.json", ", \"retention\": {\"enabled\": true, \"status_retention_days\": 1}", on, sizeof on);
  write_cfg(&e, "forced.json",
            ", \"retention\": {\"enabled\": false, \"status_retention_days\": 1}, "
            "\"worker\": {\"tasks\": {\"period_retirement\": {\"enabled\": true}}}",
            forced, sizeof forced);
  adcp_buf out;
  adcp_buf_init(&out);
  char t[4096];
  /* No retention section: the retention tasks are not registered at all. */
  assert_int_equal(rcli(f, off, "maintain --once --json", &out), 0);
  assert_null(task_of(&out, "period_retirement", t, sizeof t));
  assert_null(task_of(&out, "row_pruning", t, sizeof t));
  assert_non_null(task_of(&out, "retention_issues", t, sizeof t));
  /* Enabling a retention task while retention is off is refused (exit 2). */
  assert_int_equal(rcli(f, forced, "maintain --once --json", &out), 2);
  assert_non_null(strstr(txt(&out), "retention is not"));
  char st[16];
  assert_string_equal(tomb_state(&e, "old1", st), "");
  /* A dry run reports the work and changes nothing. */
  assert_int_equal(rcli(f, on, "maintain --once --dry-run --json", &out), 0);
  assert_non_null(task_of(&out, "period_retirement", t, sizeof t));
  assert_string_equal(tomb_state(&e, "old1", st), "");
  /* Two revision_unreadable issues: one for a revision retirement will take,
   * one for a revision that stays. */
  assert_int_equal(rcli(f, on, "issue open --account acct --key revision_unreadable:a2", &out), 0);
  assert_int_equal(rcli(f, on, "issue open --account acct --key revision_unreadable:k1", &out), 0);
  /* Enabled: exactly the expired period is retired, with every counter. */
  assert_int_equal(rcli(f, on, "maintain --once --json", &out), 0);
  assert_non_null(task_of(&out, "retention_issues", t, sizeof t));
  assert_non_null(strstr(t, "\"retired_revisions_resolved\":1"));
  assert_non_null(task_of(&out, "period_retirement", t, sizeof t));
  assert_non_null(strstr(t, "\"status\":\"ran\""));
  assert_non_null(strstr(t, "\"retired\":1"));
  assert_non_null(strstr(t, "\"failed\":0"));
  assert_non_null(strstr(t, "\"pending\":0"));
  assert_non_null(strstr(t, "\"skipped_unconfigured\":0"));
  /* Row pruning runs first (spec order) and already freed the superseded
   * revision a1's object; retirement deletes a2's body and the records. */
  assert_non_null(strstr(t, "\"objects_deleted\":0"));
  assert_non_null(strstr(t, "\"bodies_deleted\":1"));
  assert_non_null(task_of(&out, "row_pruning", t, sizeof t));
  assert_non_null(strstr(t, "\"pruned\":1"));
  assert_non_null(strstr(t, "\"objects_deleted\":1"));
  assert_string_equal(tomb_state(&e, "old1", st), "retired");
  assert_int_equal(retirement_changes(&e, "old1"), 1);
  /* The audit log keeps the revisions' leaves and gains one retirement leaf
   * naming both; `audit` reports no missing revision. */
  assert_int_equal(q64(e.c,
                       "SELECT count(*) FROM adcp_audit_log_leaves WHERE entry_kind = 'retirement' AND "
                       "entry_id = $1",
                       "old1"),
                   1);
  assert_int_equal(q64(e.c,
                       "SELECT count(*) FROM adcp_audit_log_leaves WHERE entry_kind = 'revision' AND "
                       "account_id = $1",
                       "acct"),
                   3);
  assert_int_equal(rcli(f, on, "audit --json", &out), 3);
  print_message("%s\n", txt(&out));
  /* The test backdated the period in the database only: the log still holds
   * today's recorded_at, so the audit proves the retirement was not due
   * (issue 25 item 2) and accuses nothing else. */
  assert_non_null(strstr(txt(&out), "\"kind\":\"retirement_premature\""));
  assert_null(strstr(txt(&out), "\"kind\":\"revision_missing\",\"account_id\":\"acct\",\"leaf_index\":2"));
  print_message("%s\n", txt(&out));
  /* The retired revision's issue resolved (it could never verify clean again);
   * the live revision's issue stays open. */
  assert_int_equal(rcli(f, on, "issue list --json", &out), 0);
  assert_null(strstr(txt(&out), "revision_unreadable:a2"));
  assert_non_null(strstr(txt(&out), "revision_unreadable:k1"));
  /* A second pass has nothing left to retire. */
  assert_int_equal(rcli(f, on, "maintain --once --json", &out), 0);
  assert_non_null(task_of(&out, "period_retirement", t, sizeof t));
  assert_non_null(strstr(t, "\"retired\":0"));
  assert_int_equal(retirement_changes(&e, "old1"), 1);
  OK(adcp_ledger_verify_revision(e.l, "acct", "k1", NULL, NULL, &err));
  adcp_buf_free(&out);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

static void stalled_period_becomes_issue(void **state) {
  const fixture *f = *state;
  renv e;
  renv_open(&e, f);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 5, 5, 1);
  OK(rcommit(e.l, "acct", "stuck", 1, "s1", &g, NULL, &err));
  char cfg[700];
  write_cfg(&e, "c.json", ", \"worker\": {\"tasks\": {\"retention_issues\": {\"settings\": {\"threshold_s\": 3600}}}}",
            cfg, sizeof cfg);
  /* The period has been failing retirement for two hours (as the retention
   * room records it after repeated failures). */
  rexec(&e,
        "INSERT INTO adcp_reporting_retention_attempts (obligation_id, operation, account_id, failures, "
        "first_failed_at, last_failed_at, next_attempt_at, last_cause) VALUES ($1, 'retirement', $2, 7, "
        "clock_timestamp() - interval '2 hours', clock_timestamp(), clock_timestamp() + interval '1 hour', 'x')",
        "INSERT INTO adcp_reporting_retention_attempts (obligation_id, operation, account_id, failures, "
        "first_failed_at, last_failed_at, next_attempt_at, last_cause) VALUES ($1, 'retirement', $2, 7, "
        "strftime('%Y-%m-%dT%H:%M:%f', 'now', '-2 hours') || '999Z', strftime('%Y-%m-%dT%H:%M:%f', 'now') || '999Z', "
        "strftime('%Y-%m-%dT%H:%M:%f', 'now', '+1 hours') || '999Z', 'x')",
        "stuck", "acct");
  adcp_buf out;
  adcp_buf_init(&out);
  char t[4096];
  assert_int_equal(rcli(f, cfg, "maintain --once --json", &out), 0);
  assert_non_null(task_of(&out, "retention_issues", t, sizeof t));
  assert_non_null(strstr(t, "\"opened\":1"));
  assert_non_null(strstr(t, "\"stalled\":1"));
  assert_int_equal(rcli(f, cfg, "issue list --json", &out), 0);
  assert_non_null(strstr(txt(&out), "retirement_stalled:acct:stuck"));
  /* Still stalled: nothing new (one live occurrence, one opened event). */
  assert_int_equal(rcli(f, cfg, "maintain --once --json", &out), 0);
  assert_non_null(task_of(&out, "retention_issues", t, sizeof t));
  assert_non_null(strstr(t, "\"opened\":0"));
  assert_int_equal(
      q64(e.c, "SELECT count(*) FROM reporting_issue_events WHERE kind = 'opened' AND account_id = $1", "acct"), 1);
  /* The period moved on: the issue resolves. */
  rexec(&e, "DELETE FROM adcp_reporting_retention_attempts WHERE obligation_id = $1",
        "DELETE FROM adcp_reporting_retention_attempts WHERE obligation_id = $1", "stuck", NULL);
  assert_int_equal(rcli(f, cfg, "maintain --once --json", &out), 0);
  assert_non_null(task_of(&out, "retention_issues", t, sizeof t));
  assert_non_null(strstr(t, "\"resolved\":1"));
  assert_int_equal(rcli(f, cfg, "issue list --json", &out), 0);
  assert_null(strstr(txt(&out), "retirement_stalled:acct:stuck"));
  adcp_buf_free(&out);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(retention_tasks_follow_config),
      BOTH(stalled_period_becomes_issue),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
