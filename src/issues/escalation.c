/* issues/escalation.c — sweep_issue_escalations (spec 07 §7): published
 * occurrences whose escalation boundary (opened_at + after) has passed get
 * one `escalated` event. Candidates are read without a lock, then each
 * account is settled under its account lock: the candidate is re-read (a
 * concurrent sweeper or operator may have moved it), the host's settle
 * callback may report the condition cleared (resolved instead), and the
 * event insert relies on UNIQUE (issue_id, kind), so four sweepers record
 * it once. */
#include "issues/internal.h"

#include <stdlib.h>
#include <string.h>

#define Q(name) char name[2048]

typedef struct cand {
  char account_id[ADCP_ISSUE_ACCOUNT_MAX];
  char issue_key[ADCP_ISSUE_KEY_MAX];
  char issue_id[ADCP_ISSUE_ID_LEN + 1];
  size_t ord; /* position in the opening-order scan */
} cand;

static const char CANDIDATES[] =
    "SELECT account_id, issue_key, issue_id FROM reporting_issue_lifecycle l "
    "WHERE issue_state IN ('open', 'acknowledged') AND opened_at <= @in(1) AND NOT EXISTS (SELECT 1 FROM "
    "reporting_issue_events e WHERE e.issue_id = l.issue_id AND e.kind = 'escalated') "
    "ORDER BY opened_at, issue_id LIMIT $2";
static const char COUNT_CANDIDATES[] =
    "SELECT count(*) FROM reporting_issue_lifecycle l WHERE issue_state IN ('open', 'acknowledged') AND "
    "opened_at <= @in(1) AND NOT EXISTS (SELECT 1 FROM reporting_issue_events e WHERE e.issue_id = l.issue_id "
    "AND e.kind = 'escalated')";

static int by_account(const void *a, const void *b) {
  /* qsort is not stable: the scan position keeps the opening order. */
  const cand *x = a, *y = b;
  int c = strcmp(x->account_id, y->account_id);
  return c ? c : (x->ord < y->ord ? -1 : x->ord > y->ord);
}

static int count_candidates(int64_t *n, adcp_issues *s, const char *boundary, adcp_error *err) {
  Q(q);
  char text[32];
  int found = 0;
  adcp_sql_param p = adcp_sql_text(boundary);
  int rc = adcp_sql_query_text(text, sizeof text, &found, s->conn, adcp_issues__sql(s, q, sizeof q, COUNT_CANDIDATES),
                               &p, 1, err);
  if (!rc) *n = found ? strtoll(text, NULL, 10) : 0;
  return rc;
}

/* One candidate inside its account's locked transaction. */
static int settle_one(adcp_escalation_counters *o, adcp_issues *s, const cand *c, const char *now,
                      adcp_issue_settle_fn settle, void *ctx, adcp_error *err) {
  adcp_issue cur;
  int found = 0;
  int rc = adcp_issues__get_live(&cur, &found, s, c->account_id, c->issue_key, err);
  if (rc) return rc;
  /* Moved since the candidate scan: another generation, waived, resolved. */
  if (!found || strcmp(cur.issue_id, c->issue_id) || !strcmp(cur.state, "waived")) {
    o->skipped++;
    return 0;
  }
  int present = 1;
  if (settle && (rc = settle(ctx, s->conn, &cur, &present, err))) return rc;
  if (!present) {
    adcp_issue_result res;
    memset(&res, 0, sizeof res);
    if ((rc = adcp_issues__retire_locked(&res, s, c->account_id, c->issue_key, now, err))) return rc;
    o->resolved += res.changed;
    return 0;
  }
  int recorded = 0;
  if ((rc = adcp_issues__record(&recorded, s, &cur, "escalated", cur.state, now, err))) return rc;
  if (recorded) o->escalated++;
  else o->skipped++;
  return 0;
}

int adcp_issues_sweep_escalations(adcp_escalation_counters *out, adcp_issues *s, int64_t after_ms, size_t limit,
                                  adcp_issue_settle_fn settle, void *settle_ctx, int dry_run, adcp_error *err) {
  adcp_escalation_counters local;
  if (!out) out = &local;
  memset(out, 0, sizeof *out);
  if (after_ms <= 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "the escalation window must be positive");
  if (!limit) limit = 100;
  if (limit > 10000) return adcp_error_set(err, ADCP_EINVALID_INPUT, "sweep limit must be 1..10000");
  int rc = adcp_issues__require_ready(s, err);
  char boundary[32];
  if (!rc) rc = adcp_issues__now_plus(s, boundary, -after_ms, err);
  if (rc) return rc;
  if (dry_run) return count_candidates(&out->pending, s, boundary, err);
  Q(q);
  adcp_sql_param p[2] = {adcp_sql_text(boundary), adcp_sql_int64((int64_t)limit)};
  adcp_sql_rows *r;
  if ((rc = adcp_sql_query(&r, s->conn, adcp_issues__sql(s, q, sizeof q, CANDIDATES), p, 2, err))) return rc;
  cand *v = calloc(limit, sizeof *v);
  size_t n = 0;
  if (!v) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  while (!rc && (rc = adcp_sql_next(r, err)) == 1 && n < limit) {
    rc = 0;
    adcp_issues__copy(v[n].account_id, sizeof v[n].account_id, adcp_sql_get_text(r, 0, NULL));
    adcp_issues__copy(v[n].issue_key, sizeof v[n].issue_key, adcp_sql_get_text(r, 1, NULL));
    adcp_issues__copy(v[n].issue_id, sizeof v[n].issue_id, adcp_sql_get_text(r, 2, NULL));
    v[n].ord = n;
    n++;
  }
  adcp_sql_rows_free(r);
  if (rc < 0) {
    free(v);
    return rc;
  }
  qsort(v, n, sizeof *v, by_account);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && !strcmp(v[j].account_id, v[i].account_id)) j++;
    adcp_error e = {0};
    char now[32];
    int arc = adcp_issues__begin_locked(s, v[i].account_id, &e);
    /* The instant after the lock: the escalation happens now, not at the scan. */
    if (!arc && (arc = adcp_sql_now(s->conn, now, &e))) adcp_issues__abort(s, arc);
    int64_t esc0 = out->escalated, res0 = out->resolved, sk0 = out->skipped;
    for (size_t k = i; !arc && k < j; k++) arc = settle_one(out, s, &v[k], now, settle, settle_ctx, &e);
    if (!arc) arc = adcp_sql_commit(s->conn, &e);
    if (arc) {
      adcp_issues__abort(s, arc);
      out->escalated = esc0, out->resolved = res0, out->skipped = sk0;
      out->failed += (int64_t)(j - i);
      if (!out->first_failure[0]) adcp_issues__copy(out->first_failure, sizeof out->first_failure, e.message);
    }
    i = j;
  }
  free(v);
  if (n == limit) {
    char b2[32];
    if ((rc = adcp_issues__now_plus(s, b2, -after_ms, err))) return rc;
    return count_candidates(&out->pending, s, b2, err);
  }
  return 0;
}
