/* issues/lifecycle.c — occurrences of a condition (spec 07 §1-§2):
 * ensure_issue_opened, the operator state machine (acknowledge, waive),
 * retire (resolve), and the reads. Each write is one transaction under the
 * ledger's account lock; its event is appended in that transaction
 * (outbox.c), so the event exists iff the transition committed. */
#include "issues/internal.h"

#include <stdlib.h>
#include <string.h>

#define Q(name) char name[2048]

int adcp_issues__get_live(adcp_issue *out, int *found, adcp_issues *s, const char *account_id, const char *issue_key,
                          adcp_error *err) {
  Q(q);
  adcp_sql_param p[2] = {adcp_sql_text(account_id), adcp_sql_text(issue_key)};
  adcp_sql_rows *r;
  *found = 0;
  int rc = adcp_sql_query(&r, s->conn,
                          adcp_issues__sql(s, q, sizeof q,
                                           "SELECT " ISSUES_LIFECYCLE_COLS " FROM reporting_issue_lifecycle "
                                           "WHERE account_id = $1 AND issue_key = $2 "
                                           "AND issue_state IN ('open', 'acknowledged', 'waived')"),
                          p, 2, err);
  if (rc) return rc;
  if ((rc = adcp_sql_next(r, err)) == 1) {
    adcp_issues__read_issue(out, r, 0);
    *found = 1;
    rc = 0;
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

static int check_ids(const char *account_id, const char *issue_key, adcp_error *err) {
  int rc = adcp_issues__check_text(account_id, ADCP_ISSUE_ACCOUNT_MAX, 0, "account_id", err);
  if (!rc) rc = adcp_issues__check_text(issue_key, ADCP_ISSUE_KEY_MAX, 0, "issue_key", err);
  return rc;
}

/* Starts a write: input checked, result cleared, readiness known. Returns
 * 1 to go on, 0 when not ready (nothing to do), or a negative code. */
static int start(adcp_issue_result *out, adcp_issues *s, adcp_error *err) {
  memset(out, 0, sizeof *out);
  int r = adcp_issues__ready(s, err);
  if (r < 0) return r;
  out->ready = r;
  return r;
}

int adcp_issues_ensure_opened(adcp_issue_result *out, adcp_issues *s, const char *account_id, const char *issue_key,
                              const char *consumer_id, const char *observed_at, adcp_error *err) {
  adcp_issue_result local;
  if (!out) out = &local;
  memset(out, 0, sizeof *out);
  int rc = check_ids(account_id, issue_key, err);
  if (!rc && consumer_id) rc = adcp_issues__check_text(consumer_id, ADCP_ISSUE_ACCOUNT_MAX, 0, "consumer_id", err);
  char at[32];
  if (!rc && observed_at) rc = adcp_issues__instant(s, at, observed_at, err);
  if (rc) return rc;
  if ((rc = start(out, s, err)) <= 0) return rc;
  if ((rc = adcp_issues__begin_locked(s, account_id, err))) return rc;
  if (!observed_at && (rc = adcp_issues__instant(s, at, NULL, err))) return adcp_issues__abort(s, rc);
  int found = 0;
  if ((rc = adcp_issues__get_live(&out->issue, &found, s, account_id, issue_key, err)))
    return adcp_issues__abort(s, rc);
  if (found) {
    /* The second caller sees the first caller's opened_at. */
    out->found = 1;
    rc = adcp_sql_commit(s->conn, err);
    return rc;
  }
  Q(q);
  adcp_sql_param p[6] = {adcp_sql_text(account_id), adcp_sql_text(issue_key)};
  char gen_text[32];
  int got = 0;
  rc = adcp_sql_query_text(gen_text, sizeof gen_text, &got, s->conn,
                           "SELECT coalesce(max(generation), 0) + 1 FROM reporting_issue_lifecycle "
                           "WHERE account_id = $1 AND issue_key = $2",
                           p, 2, err);
  if (rc) return adcp_issues__abort(s, rc);
  adcp_issue *i = &out->issue;
  memset(i, 0, sizeof *i);
  i->generation = got ? strtoll(gen_text, NULL, 10) : 1;
  if ((rc = adcp_issue_id(i->issue_id, issue_key, i->generation, err))) return adcp_issues__abort(s, rc);
  /* issue_id hashes key and generation only: the same key in another account
   * would collide (the unique index refuses it; say why instead). */
  adcp_sql_param pid = adcp_sql_text(i->issue_id);
  char one[8];
  if ((rc = adcp_sql_query_text(one, sizeof one, &got, s->conn,
                                "SELECT 1 FROM reporting_issue_lifecycle WHERE issue_id = $1", &pid, 1, err)))
    return adcp_issues__abort(s, rc);
  if (got)
    return adcp_issues__abort(s, adcp_error_set(err, ADCP_ECONFLICT,
                                                "issue_key is already used by another account (issue_id derives from the "
                                                "key alone: qualify the key, docs/issues.md)"));
  adcp_issues__copy(i->account_id, sizeof i->account_id, account_id);
  adcp_issues__copy(i->issue_key, sizeof i->issue_key, issue_key);
  adcp_issues__copy(i->consumer_id, sizeof i->consumer_id, consumer_id);
  adcp_issues__copy(i->opened_at, sizeof i->opened_at, at);
  adcp_issues__copy(i->state, sizeof i->state, "open");
  p[2] = adcp_sql_int64(i->generation);
  p[3] = adcp_sql_text(i->issue_id);
  p[4] = consumer_id ? adcp_sql_text(consumer_id) : adcp_sql_null();
  p[5] = adcp_sql_text(at);
  rc = adcp_sql_exec(s->conn,
                     adcp_issues__sql(s, q, sizeof q,
                                      "INSERT INTO reporting_issue_lifecycle (account_id, issue_key, generation, issue_id, "
                                      "consumer_id, opened_at, issue_state) VALUES ($1, $2, $3, $4, $5, @in(6), 'open')"),
                     p, 6, err);
  if (!rc) rc = adcp_issues__record(&out->recorded, s, i, "opened", "open", at, err);
  if (!rc) rc = adcp_sql_commit(s->conn, err);
  if (rc) return adcp_issues__abort(s, rc);
  out->found = 1, out->changed = 1;
  return 0;
}

int adcp_issues_set_state(adcp_issue_result *out, adcp_issues *s, const char *account_id, const char *issue_key,
                          const char *state, const char *at_text, const char *external_ref, adcp_error *err) {
  adcp_issue_result local;
  if (!out) out = &local;
  memset(out, 0, sizeof *out);
  int rc = check_ids(account_id, issue_key, err);
  if (rc) return rc;
  if (!state || (strcmp(state, "acknowledged") && strcmp(state, "waived")))
    return adcp_error_set(err, ADCP_EISSUE_STATE_NOT_OPERATOR_SETTABLE,
                          "operators may set only acknowledged or waived (resolved follows the condition)");
  if (external_ref && (rc = adcp_issues__check_text(external_ref, ADCP_ISSUE_REF_MAX, 1, "external_ref", err)))
    return rc;
  char at[32];
  if (at_text && (rc = adcp_issues__instant(s, at, at_text, err))) return rc;
  if ((rc = start(out, s, err)) <= 0) return rc;
  if ((rc = adcp_issues__begin_locked(s, account_id, err))) return rc;
  if (!at_text && (rc = adcp_issues__instant(s, at, NULL, err))) return adcp_issues__abort(s, rc);
  int found = 0;
  adcp_issue *i = &out->issue;
  if ((rc = adcp_issues__get_live(i, &found, s, account_id, issue_key, err))) return adcp_issues__abort(s, rc);
  if (!found)
    return adcp_issues__abort(s, adcp_error_set(err, ADCP_EISSUE_NOT_OPEN,
                                                "no live occurrence of this issue (a retired one is never reopened)"));
  out->found = 1;
  Q(q);
  int same = !strcmp(i->state, state);
  if (!same && !(strcmp(i->state, "open") == 0 || (!strcmp(i->state, "acknowledged") && !strcmp(state, "waived"))))
    return adcp_issues__abort(s, adcp_error_set(err, ADCP_EISSUE_STATE_TRANSITION_INVALID,
                                                "an issue in state %s cannot become %s", i->state, state));
  if (same) {
    /* Idempotent: only a new external_ref changes the row, and records nothing. */
    if (external_ref && strcmp(external_ref, i->external_ref)) {
      adcp_sql_param p[2] = {adcp_sql_text(external_ref), adcp_sql_text(i->issue_id)};
      rc = adcp_sql_exec(s->conn, "UPDATE reporting_issue_lifecycle SET external_ref = $1 WHERE issue_id = $2", p, 2, err);
      if (rc) return adcp_issues__abort(s, rc);
      adcp_issues__copy(i->external_ref, sizeof i->external_ref, external_ref);
      out->changed = 1;
    }
    return (rc = adcp_sql_commit(s->conn, err)) ? adcp_issues__abort(s, rc) : 0;
  }
  int waive = !strcmp(state, "waived");
  adcp_sql_param p[4] = {adcp_sql_text(state), waive ? adcp_sql_text(at) : adcp_sql_null(),
                         external_ref ? adcp_sql_text(external_ref) : adcp_sql_null(), adcp_sql_text(i->issue_id)};
  rc = adcp_sql_exec(s->conn,
                     adcp_issues__sql(s, q, sizeof q,
                                      "UPDATE reporting_issue_lifecycle SET issue_state = $1, retired_at = @in(2), "
                                      "external_ref = coalesce($3, external_ref) WHERE issue_id = $4"),
                     p, 4, err);
  if (!rc) rc = adcp_issues__record(&out->recorded, s, i, state, state, at, err);
  if (!rc) rc = adcp_sql_commit(s->conn, err);
  if (rc) return adcp_issues__abort(s, rc);
  adcp_issues__copy(i->state, sizeof i->state, state);
  if (waive) adcp_issues__copy(i->retired_at, sizeof i->retired_at, at);
  if (external_ref) adcp_issues__copy(i->external_ref, sizeof i->external_ref, external_ref);
  out->changed = 1;
  return 0;
}

int adcp_issues__retire_locked(adcp_issue_result *out, adcp_issues *s, const char *account_id, const char *issue_key,
                               const char *at, adcp_error *err) {
  int found = 0;
  adcp_issue *i = &out->issue;
  int rc = adcp_issues__get_live(i, &found, s, account_id, issue_key, err);
  if (rc || !found) return rc;
  out->found = 1;
  if (!strcmp(i->state, "waived")) return 0; /* waived is not retirable */
  Q(q);
  adcp_sql_param p[2] = {adcp_sql_text(at), adcp_sql_text(i->issue_id)};
  rc = adcp_sql_exec(s->conn,
                     adcp_issues__sql(s, q, sizeof q,
                                      "UPDATE reporting_issue_lifecycle SET issue_state = 'resolved', retired_at = @in(1) "
                                      "WHERE issue_id = $2"),
                     p, 2, err);
  if (!rc) rc = adcp_issues__record(&out->recorded, s, i, "resolved", "resolved", at, err);
  if (rc) return rc;
  adcp_issues__copy(i->state, sizeof i->state, "resolved");
  adcp_issues__copy(i->retired_at, sizeof i->retired_at, at);
  out->changed = 1;
  return 0;
}

int adcp_issues_retire(adcp_issue_result *out, adcp_issues *s, const char *account_id, const char *issue_key,
                       const char *at_text, adcp_error *err) {
  adcp_issue_result local;
  if (!out) out = &local;
  memset(out, 0, sizeof *out);
  int rc = check_ids(account_id, issue_key, err);
  char at[32];
  if (!rc && at_text) rc = adcp_issues__instant(s, at, at_text, err);
  if (rc) return rc;
  if ((rc = start(out, s, err)) <= 0) return rc;
  if ((rc = adcp_issues__begin_locked(s, account_id, err))) return rc;
  if (!at_text && (rc = adcp_issues__instant(s, at, NULL, err))) return adcp_issues__abort(s, rc);
  rc = adcp_issues__retire_locked(out, s, account_id, issue_key, at, err);
  if (!rc) rc = adcp_sql_commit(s->conn, err);
  return rc ? adcp_issues__abort(s, rc) : 0;
}

/* ---- reads -------------------------------------------------------------------------------- */

/* Outbox counts of one occurrence. */
static int event_counts(adcp_issue *i, adcp_issues *s, adcp_error *err) {
  adcp_sql_param p = adcp_sql_text(i->issue_id);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, s->conn,
                          "SELECT coalesce(sum(CASE WHEN completed_at IS NULL AND dead_lettered_at IS NULL "
                          "THEN 1 ELSE 0 END), 0), coalesce(sum(CASE WHEN dead_lettered_at IS NOT NULL THEN 1 "
                          "ELSE 0 END), 0) FROM reporting_issue_events WHERE issue_id = $1",
                          &p, 1, err);
  if (rc) return rc;
  if ((rc = adcp_sql_next(r, err)) == 1) {
    i->pending_events = adcp_sql_get_int64(r, 0);
    i->dead_letters = adcp_sql_get_int64(r, 1);
    rc = 0;
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

int adcp_issues_get(adcp_issue *out, int *found, adcp_issues *s, const char *account_id, const char *issue_key,
                    const char *issue_id, adcp_error *err) {
  *found = 0;
  memset(out, 0, sizeof *out);
  int rc;
  if (issue_key) rc = check_ids(account_id, issue_key, err);
  else rc = adcp_issues__check_text(issue_id, ADCP_ISSUE_KEY_MAX, 0, "issue_id", err);
  if (rc) return rc;
  int r = adcp_issues__ready(s, err);
  if (r <= 0) return r;
  Q(q);
  adcp_sql_param p[2] = {adcp_sql_text(issue_key ? account_id : issue_id), adcp_sql_text(issue_key)};
  adcp_sql_rows *rows;
  /* The live occurrence first, then the newest retired one. */
  rc = adcp_sql_query(
      &rows, s->conn,
      adcp_issues__sql(s, q, sizeof q,
                       issue_key ? "SELECT " ISSUES_LIFECYCLE_COLS " FROM reporting_issue_lifecycle WHERE account_id = $1 "
                                   "AND issue_key = $2 ORDER BY CASE WHEN issue_state IN ('open', 'acknowledged', "
                                   "'waived') THEN 0 ELSE 1 END, generation DESC LIMIT 1"
                                 : "SELECT " ISSUES_LIFECYCLE_COLS " FROM reporting_issue_lifecycle WHERE issue_id = $1"),
      p, issue_key ? 2 : 1, err);
  if (rc) return rc;
  if ((rc = adcp_sql_next(rows, err)) == 1) {
    adcp_issues__read_issue(out, rows, 0);
    *found = 1;
    rc = 0;
  }
  adcp_sql_rows_free(rows);
  if (rc < 0) return rc;
  if (*found && account_id && strcmp(out->account_id, account_id)) {
    /* An issue_id of another account is indistinguishable from none. */
    memset(out, 0, sizeof *out);
    *found = 0;
  }
  return *found ? event_counts(out, s, err) : 0;
}

int adcp_issues_list(adcp_issue **out, size_t *count, adcp_issues *s, const adcp_issue_filter *f, adcp_error *err) {
  *out = NULL, *count = 0;
  adcp_issue_filter none = {0};
  if (!f) f = &none;
  size_t limit = f->limit ? f->limit : 100;
  if (limit > 1000) return adcp_error_set(err, ADCP_EINVALID_INPUT, "limit must be 1..1000");
  int rc;
  if (f->account_id && (rc = adcp_issues__check_text(f->account_id, ADCP_ISSUE_ACCOUNT_MAX, 0, "account_id", err)))
    return rc;
  if (f->key_prefix && (rc = adcp_issues__check_text(f->key_prefix, ADCP_ISSUE_KEY_MAX, 1, "key prefix", err)))
    return rc;
  int r = adcp_issues__ready(s, err);
  if (r <= 0) return r;
  Q(q);
  /* The prefix is matched with substr(), never LIKE: keys may hold % and _. */
  adcp_sql_param p[5] = {f->account_id ? adcp_sql_text(f->account_id) : adcp_sql_null(),
                         f->key_prefix ? adcp_sql_text(f->key_prefix) : adcp_sql_null(),
                         adcp_sql_int64(f->key_prefix ? (int64_t)strlen(f->key_prefix) : 0),
                         adcp_sql_int64(f->include_retired ? 1 : 0), adcp_sql_int64((int64_t)limit)};
  adcp_sql_rows *rows;
  rc = adcp_sql_query(
      &rows, s->conn,
      adcp_issues__sql(s, q, sizeof q,
                       "SELECT " ISSUES_LIFECYCLE_COLS ", (SELECT count(*) FROM reporting_issue_events e WHERE "
                       "e.issue_id = l.issue_id AND e.completed_at IS NULL AND e.dead_lettered_at IS NULL), "
                       "(SELECT count(*) FROM reporting_issue_events e WHERE e.issue_id = l.issue_id AND "
                       "e.dead_lettered_at IS NOT NULL) FROM reporting_issue_lifecycle l "
                       "WHERE (CAST($1 AS TEXT) IS NULL OR account_id = $1) "
                       "AND (CAST($2 AS TEXT) IS NULL OR substr(issue_key, 1, CAST($3 AS INTEGER)) = $2) "
                       "AND ($4 = 1 OR issue_state IN ('open', 'acknowledged', 'waived')) "
                       "ORDER BY account_id, opened_at, issue_id LIMIT $5"),
      p, 5, err);
  if (rc) return rc;
  size_t cap = 0;
  adcp_issue *v = NULL;
  while ((rc = adcp_sql_next(rows, err)) == 1) {
    rc = 0;
    if (*count == cap) {
      size_t nc = cap ? cap * 2 : 16;
      adcp_issue *g = realloc(v, nc * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      v = g, cap = nc;
    }
    adcp_issues__read_issue(&v[*count], rows, 0);
    v[*count].pending_events = adcp_sql_get_int64(rows, 9);
    v[*count].dead_letters = adcp_sql_get_int64(rows, 10);
    (*count)++;
  }
  adcp_sql_rows_free(rows);
  if (rc < 0) {
    free(v);
    *count = 0;
    return rc;
  }
  *out = v;
  return 0;
}
