/* issues/store.c — the `issues` room's common part: opening a store over a
 * borrowed connection, the dialect templates (instants are TIMESTAMPTZ on
 * PostgreSQL and UTC text on SQLite), input checks, the readiness check of
 * spec 07 §9 and the locked write transaction. */
#include "issues/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/ledger.h"

int adcp_issues_open(adcp_issues **out, adcp_sql_conn *conn, adcp_error *err) {
  if (!out) return adcp_error_set(err, ADCP_EINVALID_INPUT, "issues: out is NULL");
  *out = NULL;
  if (!conn) return adcp_error_set(err, ADCP_EINVALID_INPUT, "issues: connection is NULL");
  adcp_issues *s = calloc(1, sizeof *s);
  if (!s) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  s->conn = conn;
  s->dialect = adcp_sql_dialect_of(conn);
  *out = s;
  return 0;
}

void adcp_issues_close(adcp_issues *s) { free(s); }

void adcp_issues__copy(char *dst, size_t n, const char *src) {
  size_t k = src ? strlen(src) : 0;
  if (k >= n) k = n - 1;
  if (k) memcpy(dst, src, k);
  dst[k] = 0;
}

/* ---- dialect templates ------------------------------------------------------ */

#define PG_TS ADCP_SQL_PG_INSTANT("(%.*s)")

const char *adcp_issues__sql(const adcp_issues *s, char *out, size_t n, const char *t) {
  int pg = s->dialect == ADCP_SQL_POSTGRES;
  size_t o = 0;
  out[0] = 0;
  while (*t && o + 1 < n) {
    int w = 0;
    if (!strncmp(t, "@ts(", 4)) {
      const char *e = strchr(t + 4, ')');
      int len = (int)(e - (t + 4));
      w = pg ? snprintf(out + o, n - o, PG_TS, len, t + 4) : snprintf(out + o, n - o, "%.*s", len, t + 4);
      t = e + 1;
    } else if (!strncmp(t, "@in(", 4)) {
      const char *e = strchr(t + 4, ')');
      int len = (int)(e - (t + 4));
      w = pg ? snprintf(out + o, n - o, "CAST($%.*s AS timestamptz)", len, t + 4)
             : snprintf(out + o, n - o, "$%.*s", len, t + 4);
      t = e + 1;
    } else if (!strncmp(t, "@now", 4)) {
      w = snprintf(out + o, n - o, "%s", pg ? "clock_timestamp()" : "adcp_now()");
      t += 4;
    } else if (!strncmp(t, "@lock", 5)) {
      w = snprintf(out + o, n - o, "%s", pg ? " FOR UPDATE SKIP LOCKED" : "");
      t += 5;
    } else {
      out[o++] = *t++;
      out[o] = 0;
      continue;
    }
    if (w < 0 || (size_t)w >= n - o) break;
    o += (size_t)w;
  }
  return out;
}

/* ---- instants ------------------------------------------------------------------ */

int adcp_issues__shift(char out[32], const char *base, int64_t delta_ms) {
  int64_t us;
  if (adcp_core_instant_parse_exact(&us, base)) return -1;
  adcp_core_instant_format(out, us + delta_ms * 1000);
  return 0;
}

int adcp_issues__now_plus(adcp_issues *s, char out[32], int64_t delta_ms, adcp_error *err) {
  char now[32];
  int rc = adcp_sql_now(s->conn, now, err);
  if (rc) return rc;
  int64_t us;
  if (adcp_core_instant_parse_exact(&us, now)) return adcp_error_set(err, ADCP_EINTERNAL, "database clock unreadable");
  adcp_core_instant_format(out, us + delta_ms * 1000);
  return 0;
}

int adcp_issues__instant(adcp_issues *s, char out[32], const char *text, adcp_error *err) {
  if (!text) return adcp_sql_now(s->conn, out, err);
  return adcp_core_instant_normalize(out, text, err);
}

/* ---- input ------------------------------------------------------------------------ */

int adcp_issues__check_text(const char *v, size_t max, int allow_empty, const char *field, adcp_error *err) {
  if (!v) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s is required", field);
  size_t n = strlen(v);
  if (!n && allow_empty) return 0;
  if (!n || n >= max) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s must be 1..%zu bytes", field, max - 1);
  if (adcp_utf8_valid_prefix((const uint8_t *)v, n) != n)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s is not valid UTF-8", field);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)v[i];
    int c1 = c == 0xc2 && i + 1 < n && (unsigned char)v[i + 1] >= 0x80 && (unsigned char)v[i + 1] <= 0x9f;
    if (c < 0x20 || c == 0x7f || c1)
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s contains a control character at byte %zu", field, i);
  }
  return 0;
}

/* ---- readiness (spec 07 §9) ---------------------------------------------------------- */

/* Every column of both tables, every named index and the constraints the
 * outbox's guarantees rest on (UNIQUE (issue_id, kind), the kind and lease
 * CHECKs, the one-live index). A missing one is "not ready". */
static const char PG_READY[] =
    "SELECT (SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
    "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND a.attnum > 0 "
    "AND NOT a.attisdropped AND ((c.relname = 'reporting_issue_lifecycle' AND a.attname IN ('issue_key', "
    "'account_id', 'generation', 'issue_id', 'consumer_id', 'opened_at', 'issue_state', 'external_ref', "
    "'retired_at')) OR (c.relname = 'reporting_issue_events' AND a.attname IN ('event_id', 'seq', 'account_id', "
    "'issue_id', 'issue_key', 'generation', 'consumer_id', 'kind', 'issue_state', 'occurred_at', 'recorded_at', "
    "'available_at', 'lease_token', 'lease_expires_at', 'attempts', 'completed_at', 'dead_lettered_at')))), "
    "(SELECT count(*) FROM pg_class i JOIN pg_index x ON x.indexrelid = i.oid JOIN pg_namespace n ON "
    "n.oid = i.relnamespace WHERE n.nspname = current_schema() AND x.indisvalid AND i.relname IN ("
    "'reporting_issue_lifecycle_pk', 'reporting_issue_lifecycle_one_live', 'reporting_issue_lifecycle_issue_id', "
    "'reporting_issue_lifecycle_published', 'reporting_issue_events_pk', 'reporting_issue_events_seq', "
    "'reporting_issue_events_once', 'reporting_issue_events_pending', 'reporting_issue_events_occurrence', "
    "'reporting_issue_events_completed')), "
    "(SELECT count(*) FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace WHERE "
    "n.nspname = current_schema() AND k.convalidated AND k.conname IN ('reporting_issue_lifecycle_state', "
    "'reporting_issue_lifecycle_retired', 'reporting_issue_events_kind', 'reporting_issue_events_state', "
    "'reporting_issue_events_lease'))";
static const char SQ_READY[] =
    "SELECT (SELECT count(*) FROM pragma_table_info('reporting_issue_lifecycle') WHERE name IN ('issue_key', "
    "'account_id', 'generation', 'issue_id', 'consumer_id', 'opened_at', 'issue_state', 'external_ref', "
    "'retired_at')) + (SELECT count(*) FROM pragma_table_info('reporting_issue_events') WHERE name IN ('event_id', "
    "'seq', 'account_id', 'issue_id', 'issue_key', 'generation', 'consumer_id', 'kind', 'issue_state', "
    "'occurred_at', 'recorded_at', 'available_at', 'lease_token', 'lease_expires_at', 'attempts', 'completed_at', "
    "'dead_lettered_at')), "
    "(SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('reporting_issue_lifecycle_one_live', "
    "'reporting_issue_lifecycle_issue_id', 'reporting_issue_lifecycle_published', 'reporting_issue_events_pending', "
    "'reporting_issue_events_occurrence', 'reporting_issue_events_completed')) + 4, "
    "(SELECT count(*) FROM sqlite_master WHERE type = 'table' AND ("
    "(name = 'reporting_issue_lifecycle' AND instr(sql, 'CONSTRAINT reporting_issue_lifecycle_state') > 0 "
    "AND instr(sql, 'CONSTRAINT reporting_issue_lifecycle_retired') > 0) OR "
    "(name = 'reporting_issue_events' AND instr(sql, 'CONSTRAINT reporting_issue_events_once UNIQUE (issue_id, kind)') "
    "> 0 AND instr(sql, 'CONSTRAINT reporting_issue_events_kind') > 0 AND instr(sql, "
    "'CONSTRAINT reporting_issue_events_lease') > 0 AND instr(sql, 'CONSTRAINT reporting_issue_events_state') > 0))) "
    "+ (SELECT CASE WHEN ignore_check_constraints = 0 THEN 3 ELSE -100 END FROM pragma_ignore_check_constraints)";

int adcp_issues_events_ready(int *ready, adcp_issues *s, adcp_error *err) {
  *ready = 0;
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, s->conn, s->dialect == ADCP_SQL_POSTGRES ? PG_READY : SQ_READY, NULL, 0, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    *ready = adcp_sql_get_int64(r, 0) == 26 && adcp_sql_get_int64(r, 1) == 10 && adcp_sql_get_int64(r, 2) == 5;
    rc = 0;
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

int adcp_issues__ready(adcp_issues *s, adcp_error *err) {
  if (s->ready) return 1;
  int ready = 0;
  int rc = adcp_issues_events_ready(&ready, s, err);
  if (rc) return rc;
  s->ready = ready;
  return ready;
}

int adcp_issues__require_ready(adcp_issues *s, adcp_error *err) {
  int r = adcp_issues__ready(s, err);
  if (r < 0) return r;
  if (!r)
    return adcp_error_set(err, ADCP_EREPORTING_SCHEMA_BEHIND,
                          "issue events are not ready: migration 0008 is not applied; run `adcp-ledger migrate`");
  return 0;
}

/* ---- the locked write transaction -------------------------------------------------- */

int adcp_issues__abort(adcp_issues *s, int rc) {
  adcp_sql_rollback(s->conn, NULL);
  return rc;
}

int adcp_issues__begin_locked(adcp_issues *s, const char *account_id, adcp_error *err) {
  if (adcp_sql_in_transaction(s->conn))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "issues: the connection already has an open transaction");
  int rc = adcp_sql_begin(s->conn, 1, err);
  if (!rc) rc = adcp_ledger_lock_account(s->conn, account_id, err);
  if (rc) return adcp_issues__abort(s, rc);
  return 0;
}

void adcp_issues__read_issue(adcp_issue *o, adcp_sql_rows *r, int c) {
  memset(o, 0, sizeof *o);
  adcp_issues__copy(o->account_id, sizeof o->account_id, adcp_sql_get_text(r, c, NULL));
  adcp_issues__copy(o->issue_key, sizeof o->issue_key, adcp_sql_get_text(r, c + 1, NULL));
  o->generation = adcp_sql_get_int64(r, c + 2);
  adcp_issues__copy(o->issue_id, sizeof o->issue_id, adcp_sql_get_text(r, c + 3, NULL));
  adcp_issues__copy(o->consumer_id, sizeof o->consumer_id, adcp_sql_get_text(r, c + 4, NULL));
  adcp_issues__copy(o->opened_at, sizeof o->opened_at, adcp_sql_get_text(r, c + 5, NULL));
  adcp_issues__copy(o->state, sizeof o->state, adcp_sql_get_text(r, c + 6, NULL));
  adcp_issues__copy(o->external_ref, sizeof o->external_ref, adcp_sql_get_text(r, c + 7, NULL));
  adcp_issues__copy(o->retired_at, sizeof o->retired_at, adcp_sql_get_text(r, c + 8, NULL));
}

/* ---- JSON ------------------------------------------------------------------------------- */

static int jkey(adcp_buf *b, const char *k, const char *v, int null_if_empty, int first) {
  int rc = adcp_buf_append_str(b, first ? "{\"" : ",\"");
  if (!rc) rc = adcp_buf_append_str(b, k);
  if (!rc) rc = adcp_buf_append_str(b, "\":");
  if (rc) return rc;
  if (null_if_empty && (!v || !*v)) return adcp_buf_append_str(b, "null");
  return adcp_jcs_write_string(b, v ? v : "", v ? strlen(v) : 0);
}

int adcp_issue_write_json(adcp_buf *b, const adcp_issue *i) {
  int rc = jkey(b, "account_id", i->account_id, 0, 1);
  if (!rc) rc = jkey(b, "issue_key", i->issue_key, 0, 0);
  if (!rc) rc = adcp_buf_printf(b, ",\"generation\":%lld", (long long)i->generation);
  if (!rc) rc = jkey(b, "issue_id", i->issue_id, 0, 0);
  if (!rc) rc = jkey(b, "consumer_id", i->consumer_id, 1, 0);
  if (!rc) rc = jkey(b, "issue_state", i->state, 0, 0);
  if (!rc) rc = jkey(b, "opened_at", i->opened_at, 0, 0);
  if (!rc) rc = jkey(b, "retired_at", i->retired_at, 1, 0);
  if (!rc) rc = jkey(b, "external_ref", i->external_ref, 1, 0);
  if (!rc)
    rc = adcp_buf_printf(b, ",\"pending_events\":%lld,\"dead_letters\":%lld}", (long long)i->pending_events,
                         (long long)i->dead_letters);
  return rc;
}

int adcp_issue_event_write_json(adcp_buf *b, const adcp_issue_event *e, int with_lease) {
  int rc = jkey(b, "event_id", e->event_id, 0, 1);
  if (!rc) rc = adcp_buf_printf(b, ",\"seq\":%lld", (long long)e->seq);
  if (!rc) rc = jkey(b, "kind", e->kind, 0, 0);
  if (!rc) rc = jkey(b, "account_id", e->account_id, 0, 0);
  if (!rc) rc = jkey(b, "issue_id", e->issue_id, 0, 0);
  if (!rc) rc = jkey(b, "issue_key", e->issue_key, 0, 0);
  if (!rc) rc = adcp_buf_printf(b, ",\"generation\":%lld", (long long)e->generation);
  if (!rc) rc = jkey(b, "consumer_id", e->consumer_id, 1, 0);
  if (!rc) rc = jkey(b, "issue_state", e->issue_state, 0, 0);
  if (!rc) rc = jkey(b, "external_ref", e->external_ref, 1, 0);
  if (!rc) rc = jkey(b, "occurred_at", e->occurred_at, 0, 0);
  if (!rc) rc = jkey(b, "recorded_at", e->recorded_at, 0, 0);
  if (!rc) rc = adcp_buf_printf(b, ",\"attempts\":%lld", (long long)e->attempts);
  if (!rc && with_lease) rc = jkey(b, "lease_token", e->lease_token, 1, 0);
  if (!rc && with_lease) rc = jkey(b, "lease_expires_at", e->lease_expires_at, 1, 0);
  if (!rc) rc = adcp_buf_append_byte(b, '}');
  return rc;
}
