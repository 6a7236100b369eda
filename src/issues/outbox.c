/* issues/outbox.c — the issue-event outbox (spec 07 §4-§6, §8): the event
 * appended inside a transition's transaction, and the delivery side —
 * leased claims (at most one event per occurrence at a time, in recording
 * order), complete, release, dead-letter and prune. */
#include "issues/internal.h"

#include "adcp/json.h"
#include "core/uuid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define Q(name) char name[4096]

int adcp_issues__record(int *recorded, adcp_issues *s, const adcp_issue *i, const char *kind, const char *state_after,
                        const char *occurred_at, adcp_error *err) {
  *recorded = 0;
  char event_id[ADCP_ISSUE_ID_LEN + 1];
  int rc = adcp_issue_event_id(event_id, i->issue_id, kind, err);
  if (rc) return rc;
  Q(q);
  adcp_sql_param p[9] = {
      adcp_sql_text(event_id),       adcp_sql_text(i->account_id),
      adcp_sql_text(i->issue_id),    adcp_sql_text(i->issue_key),
      adcp_sql_int64(i->generation), i->consumer_id[0] ? adcp_sql_text(i->consumer_id) : adcp_sql_null(),
      adcp_sql_text(kind),           adcp_sql_text(state_after),
      adcp_sql_text(occurred_at)};
  /* SQLite: seq and the recording instants are drawn here, under the writer
   * lock the transaction holds; PostgreSQL: BIGSERIAL and clock_timestamp(). */
  const char *t = s->dialect == ADCP_SQL_POSTGRES
                      ? "INSERT INTO reporting_issue_events (event_id, account_id, issue_id, issue_key, generation, "
                        "consumer_id, kind, issue_state, occurred_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, @in(9)) "
                        "ON CONFLICT (issue_id, kind) DO NOTHING"
                      : "INSERT INTO reporting_issue_events (event_id, seq, account_id, issue_id, issue_key, "
                        "generation, consumer_id, kind, issue_state, occurred_at, recorded_at, available_at) VALUES "
                        "($1, (SELECT coalesce(max(seq), 0) + 1 FROM reporting_issue_events), $2, $3, $4, $5, $6, $7, "
                        "$8, $9, adcp_now(), adcp_now()) ON CONFLICT (issue_id, kind) DO NOTHING";
  int64_t n = 0;
  rc = adcp_sql_exec_changes(&n, s->conn, adcp_issues__sql(s, q, sizeof q, t), p, 9, err);
  if (!rc) *recorded = n == 1;
  return rc;
}

/* ---- claims ------------------------------------------------------------------------- */

#define EVENT_COLS \
  "event_id, seq, account_id, issue_id, issue_key, generation, consumer_id, kind, issue_state, @ts(occurred_at), " \
  "@ts(recorded_at), @ts(available_at), lease_token, @ts(lease_expires_at), attempts, @ts(completed_at), " \
  "@ts(dead_lettered_at), (SELECT l.external_ref FROM reporting_issue_lifecycle l WHERE l.issue_id = " \
  "reporting_issue_events.issue_id)"

static void read_event(adcp_issue_event *e, adcp_sql_rows *r) {
  memset(e, 0, sizeof *e);
  adcp_issues__copy(e->event_id, sizeof e->event_id, adcp_sql_get_text(r, 0, NULL));
  e->seq = adcp_sql_get_int64(r, 1);
  adcp_issues__copy(e->account_id, sizeof e->account_id, adcp_sql_get_text(r, 2, NULL));
  adcp_issues__copy(e->issue_id, sizeof e->issue_id, adcp_sql_get_text(r, 3, NULL));
  adcp_issues__copy(e->issue_key, sizeof e->issue_key, adcp_sql_get_text(r, 4, NULL));
  e->generation = adcp_sql_get_int64(r, 5);
  adcp_issues__copy(e->consumer_id, sizeof e->consumer_id, adcp_sql_get_text(r, 6, NULL));
  adcp_issues__copy(e->kind, sizeof e->kind, adcp_sql_get_text(r, 7, NULL));
  adcp_issues__copy(e->issue_state, sizeof e->issue_state, adcp_sql_get_text(r, 8, NULL));
  adcp_issues__copy(e->occurred_at, sizeof e->occurred_at, adcp_sql_get_text(r, 9, NULL));
  adcp_issues__copy(e->recorded_at, sizeof e->recorded_at, adcp_sql_get_text(r, 10, NULL));
  adcp_issues__copy(e->available_at, sizeof e->available_at, adcp_sql_get_text(r, 11, NULL));
  adcp_issues__copy(e->lease_token, sizeof e->lease_token, adcp_sql_get_text(r, 12, NULL));
  adcp_issues__copy(e->lease_expires_at, sizeof e->lease_expires_at, adcp_sql_get_text(r, 13, NULL));
  e->attempts = adcp_sql_get_int64(r, 14);
  adcp_issues__copy(e->completed_at, sizeof e->completed_at, adcp_sql_get_text(r, 15, NULL));
  adcp_issues__copy(e->dead_lettered_at, sizeof e->dead_lettered_at, adcp_sql_get_text(r, 16, NULL));
  adcp_issues__copy(e->external_ref, sizeof e->external_ref, adcp_sql_get_text(r, 17, NULL));
}

static int by_seq(const void *a, const void *b) {
  const adcp_issue_event *x = a, *y = b;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int random_hex(char out[33], adcp_error *err) {
  uint8_t b[16];
  int rc = adcp_core_uuid_random(b, 0, "a lease token", err);
  if (!rc) adcp_hex_encode(out, b, 16);
  return rc;
}

int adcp_issues_claim_events(adcp_issue_event **out, size_t *count, adcp_issues *s, size_t limit, int64_t lease_ms,
                             adcp_error *err) {
  *out = NULL, *count = 0;
  if (limit < 1 || limit > 1000) return adcp_error_set(err, ADCP_EINVALID_INPUT, "claim limit must be 1..1000");
  if (lease_ms <= 0 || lease_ms > 86400000LL)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "lease must be more than 0 and at most 24 h");
  int rc = adcp_issues__require_ready(s, err);
  if (rc) return rc;
  char nonce[33], now[32] = "", expires[32] = "";
  int pg = s->dialect == ADCP_SQL_POSTGRES;
  if ((rc = random_hex(nonce, err))) return rc;
  /* PostgreSQL reads its clock in the statement (one round trip); SQLite's
   * clock is this host's, read through the connection. */
  if (!pg && (rc = adcp_issues__now_plus(s, now, 0, err))) return rc;
  if (!pg && adcp_issues__shift(expires, now, lease_ms))
    return adcp_error_set(err, ADCP_EINTERNAL, "database clock unreadable");
  Q(q);
  /* Candidates in recording order from the pending index; an event whose
   * occurrence has an earlier incomplete event is never a candidate, so one
   * occurrence contributes at most its head. The scan stops at the limit.
   * Each event's token is derived from this claim's nonce and its event_id
   * (distinct per event, one random draw per claim). */
  const char *t =
      s->dialect == ADCP_SQL_POSTGRES
          ? "UPDATE reporting_issue_events SET lease_token = substr(encode(sha256(convert_to($1 || event_id, "
            "'UTF8')), 'hex'), 1, 32), lease_expires_at = clock_timestamp() + CAST($2 AS bigint) * interval "
            "'1 millisecond', attempts = attempts + 1 WHERE event_id IN (SELECT e.event_id FROM "
            "reporting_issue_events e WHERE e.completed_at IS NULL AND e.dead_lettered_at IS NULL AND "
            "e.available_at <= clock_timestamp() AND (e.lease_expires_at IS NULL OR e.lease_expires_at <= "
            "clock_timestamp()) "
            "AND NOT EXISTS (SELECT 1 FROM reporting_issue_events p WHERE p.issue_id = e.issue_id AND "
            "p.completed_at IS NULL AND p.dead_lettered_at IS NULL AND p.seq < e.seq) ORDER BY e.seq LIMIT $3"
            "@lock) RETURNING " EVENT_COLS
          : "UPDATE reporting_issue_events SET lease_token = substr(adcp_sha256_hex(CAST($1 || event_id AS BLOB)), "
            "1, 32), lease_expires_at = $2, attempts = attempts + 1 WHERE event_id IN (SELECT e.event_id FROM "
            "reporting_issue_events e INDEXED BY reporting_issue_events_pending WHERE e.completed_at IS NULL AND "
            "e.dead_lettered_at IS NULL AND e.available_at <= $3 AND (e.lease_expires_at IS NULL OR "
            "e.lease_expires_at <= $3) AND NOT EXISTS (SELECT 1 FROM reporting_issue_events p INDEXED BY "
            "reporting_issue_events_occurrence WHERE p.issue_id = e.issue_id AND p.completed_at IS NULL AND "
            "p.dead_lettered_at IS NULL AND p.seq < e.seq) ORDER BY e.seq LIMIT $4) RETURNING " EVENT_COLS;
  adcp_sql_param p[4] = {adcp_sql_text(nonce), pg ? adcp_sql_int64(lease_ms) : adcp_sql_text(expires),
                         adcp_sql_text(now), adcp_sql_int64((int64_t)limit)};
  if (pg) p[2] = adcp_sql_int64((int64_t)limit);
  adcp_sql_rows *r;
  if ((rc = adcp_sql_query(&r, s->conn, adcp_issues__sql(s, q, sizeof q, t), p, pg ? 3 : 4, err))) return rc;
  adcp_issue_event *v = calloc(limit, sizeof *v);
  if (!v) {
    adcp_sql_rows_free(r);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  size_t n = 0;
  while ((rc = adcp_sql_next(r, err)) == 1 && n < limit) read_event(&v[n++], r);
  adcp_sql_rows_free(r);
  if (rc < 0) {
    free(v);
    return rc;
  }
  qsort(v, n, sizeof *v, by_seq);
  *out = v, *count = n;
  return 0;
}

/* One token-matched, unexpired lease change. */
static int settle(int *ok, adcp_issues *s, const char *event_id, const char *token, const char *tmpl,
                  const char *instant, adcp_error *err) {
  if (ok) *ok = 0;
  if (!event_id || !token || !*event_id || !*token)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "event_id and lease_token are required");
  Q(q);
  adcp_sql_param p[3] = {adcp_sql_text(event_id), adcp_sql_text(token), adcp_sql_text(instant)};
  int64_t n = 0;
  int rc = adcp_sql_exec_changes(&n, s->conn, adcp_issues__sql(s, q, sizeof q, tmpl), p, instant ? 3 : 2, err);
  if (!rc && ok) *ok = n == 1;
  return rc;
}

#define LEASE_HELD "event_id = $1 AND lease_token = $2 AND completed_at IS NULL AND lease_expires_at > @now"

/* The whole batch in one statement (one round trip, one commit): the
 * (event_id, token) pairs travel as one JSON array parameter. */
static const char COMPLETE_PG[] =
    "UPDATE reporting_issue_events e SET completed_at = clock_timestamp(), lease_token = NULL, lease_expires_at = "
    "NULL FROM json_to_recordset(CAST($1 AS json)) AS v(id text, tok text) WHERE e.event_id = v.id AND "
    "e.lease_token = v.tok AND e.completed_at IS NULL AND e.lease_expires_at > clock_timestamp() "
    "RETURNING e.event_id";
static const char COMPLETE_SQ[] =
    "UPDATE reporting_issue_events SET completed_at = adcp_now(), lease_token = NULL, lease_expires_at = NULL "
    "WHERE completed_at IS NULL AND lease_expires_at > adcp_now() AND (event_id, lease_token) IN (SELECT "
    "json_extract(value, '$.id'), json_extract(value, '$.tok') FROM json_each($1)) RETURNING event_id";

int adcp_issues_complete_events(int *ok, int64_t *completed, adcp_issues *s, const adcp_issue_event_lease *leases,
                                size_t n, adcp_error *err) {
  if (completed) *completed = 0;
  if (ok && n) memset(ok, 0, n * sizeof *ok);
  int rc = adcp_issues__require_ready(s, err);
  if (rc) return rc;
  if (n > 1000) return adcp_error_set(err, ADCP_EINVALID_INPUT, "at most 1000 events per complete");
  if (!n) return 0;
  adcp_buf j;
  adcp_buf_init(&j);
  rc = adcp_buf_append_byte(&j, '[');
  for (size_t i = 0; !rc && i < n; i++) {
    const char *id = leases[i].event_id, *tok = leases[i].lease_token;
    if (!id || !tok || !*id || !*tok || adcp_issues__check_text(id, ADCP_ISSUE_KEY_MAX, 0, "event_id", NULL) ||
        adcp_issues__check_text(tok, ADCP_ISSUE_KEY_MAX, 0, "lease_token", NULL)) {
      adcp_buf_free(&j);
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "event_id and lease_token are required (valid text)");
    }
    rc = adcp_buf_append_str(&j, i ? ",{\"id\":" : "{\"id\":");
    if (!rc) rc = adcp_jcs_write_string(&j, id, strlen(id));
    if (!rc) rc = adcp_buf_append_str(&j, ",\"tok\":");
    if (!rc) rc = adcp_jcs_write_string(&j, tok, strlen(tok));
    if (!rc) rc = adcp_buf_append_byte(&j, '}');
  }
  if (!rc) rc = adcp_buf_append_byte(&j, ']');
  if (rc) {
    adcp_buf_free(&j);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_sql_param p = adcp_sql_textn((const char *)j.data, j.len);
  adcp_sql_rows *r;
  rc = adcp_sql_query(&r, s->conn, s->dialect == ADCP_SQL_POSTGRES ? COMPLETE_PG : COMPLETE_SQ, &p, 1, err);
  adcp_buf_free(&j);
  if (rc) return rc;
  int64_t done = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    const char *id = adcp_sql_get_text(r, 0, NULL);
    done++;
    for (size_t i = 0; ok && i < n; i++)
      if (!ok[i] && !strcmp(leases[i].event_id, id)) {
        ok[i] = 1;
        break;
      }
  }
  adcp_sql_rows_free(r);
  if (rc < 0) {
    if (ok) memset(ok, 0, n * sizeof *ok);
    return rc;
  }
  if (completed) *completed = done;
  return 0;
}

int adcp_issues_complete_event(int *ok, adcp_issues *s, const char *event_id, const char *lease_token, adcp_error *err) {
  adcp_issue_event_lease l = {event_id, lease_token};
  int one = 0;
  int rc = adcp_issues_complete_events(&one, NULL, s, &l, 1, err);
  if (ok) *ok = one;
  return rc;
}

int adcp_issues_release_event(int *ok, adcp_issues *s, const char *event_id, const char *lease_token,
                              int64_t retry_after_ms, adcp_error *err) {
  if (ok) *ok = 0;
  if (retry_after_ms < 0 || retry_after_ms > 30LL * 86400000)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "retry_after must be 0..30 days");
  int rc = adcp_issues__require_ready(s, err);
  char at[32];
  if (!rc) rc = adcp_issues__now_plus(s, at, retry_after_ms, err);
  if (rc) return rc;
  return settle(ok, s, event_id, lease_token,
                "UPDATE reporting_issue_events SET available_at = @in(3), lease_token = NULL, lease_expires_at = NULL "
                "WHERE " LEASE_HELD,
                at, err);
}

int adcp_issues_dead_letter_event(int *ok, adcp_issues *s, const char *event_id, const char *lease_token, adcp_error *err) {
  int rc = adcp_issues__require_ready(s, err);
  if (rc) return rc;
  return settle(ok, s, event_id, lease_token,
                "UPDATE reporting_issue_events SET dead_lettered_at = @now, lease_token = NULL, lease_expires_at = "
                "NULL WHERE " LEASE_HELD,
                NULL, err);
}

int adcp_issues_prune_events(int64_t *deleted, adcp_issues *s, int64_t older_than_ms, size_t limit, adcp_error *err) {
  if (deleted) *deleted = 0;
  if (older_than_ms < 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "older_than must not be negative");
  if (!limit) limit = 10000;
  int rc = adcp_issues__require_ready(s, err);
  char before[32];
  if (!rc) rc = adcp_issues__now_plus(s, before, -older_than_ms, err);
  if (rc) return rc;
  Q(q);
  adcp_sql_param p[2] = {adcp_sql_text(before), adcp_sql_int64((int64_t)limit)};
  int64_t n = 0;
  /* completed_at IS NOT NULL is the only way in: incomplete and dead-lettered
   * events are never deleted. */
  rc = adcp_sql_exec_changes(&n, s->conn,
                             adcp_issues__sql(s, q, sizeof q,
                                              "DELETE FROM reporting_issue_events WHERE event_id IN (SELECT event_id FROM "
                                              "reporting_issue_events WHERE completed_at IS NOT NULL AND completed_at < "
                                              "@in(1) ORDER BY completed_at LIMIT $2)"),
                             p, 2, err);
  if (!rc && deleted) *deleted = n;
  return rc;
}

int adcp_issues_event_stats(adcp_issue_event_stats *out, adcp_issues *s, adcp_error *err) {
  memset(out, 0, sizeof *out);
  int r = adcp_issues__ready(s, err);
  if (r <= 0) return r;
  Q(q);
  adcp_sql_rows *rows;
  int rc = adcp_sql_query(
      &rows, s->conn,
      adcp_issues__sql(s, q, sizeof q,
                       "SELECT coalesce(sum(CASE WHEN completed_at IS NULL AND dead_lettered_at IS NULL THEN 1 ELSE 0 "
                       "END), 0), coalesce(sum(CASE WHEN completed_at IS NULL AND lease_expires_at > @now THEN 1 ELSE 0 "
                       "END), 0), coalesce(sum(CASE WHEN completed_at IS NOT NULL THEN 1 ELSE 0 END), 0), "
                       "coalesce(sum(CASE WHEN dead_lettered_at IS NOT NULL THEN 1 ELSE 0 END), 0) "
                       "FROM reporting_issue_events"),
      NULL, 0, err);
  if (rc) return rc;
  if ((rc = adcp_sql_next(rows, err)) == 1) {
    out->pending = adcp_sql_get_int64(rows, 0);
    out->leased = adcp_sql_get_int64(rows, 1);
    out->completed = adcp_sql_get_int64(rows, 2);
    out->dead_lettered = adcp_sql_get_int64(rows, 3);
    rc = 0;
  }
  adcp_sql_rows_free(rows);
  return rc < 0 ? rc : 0;
}
