/* retention/policy.c — the retention policy (spec 03 §6.1) and one pass's
 * clock: now from the database (or an as_of that may only move it back), the
 * window cutoff now - W and the feed-hold cutoff, compared as instants by SQL
 * on both engines; plus the SQL template expansion and attempt backoff the
 * other retention files share. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/instant.h"
#include "retention/internal.h"

#define DAY_US (86400LL * 1000000LL)

int adcp_retention_policy_check(adcp_retention_policy *out, const adcp_retention_policy *p, adcp_error *err) {
  if (!p || p->version != ADCP_RETENTION_POLICY_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "retention policy: unknown version");
  adcp_retention_policy q = *p;
  if (q.status_retention_days <= 0 || q.status_retention_days > ADCP_RETENTION_MAX_DAYS)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "status_retention_days is required: the advertised window in days, 1-%d",
                          ADCP_RETENTION_MAX_DAYS);
  if (q.ledger_record_retention_days == 0) q.ledger_record_retention_days = q.status_retention_days;
  if (q.ledger_record_retention_days < q.status_retention_days || q.ledger_record_retention_days > ADCP_RETENTION_MAX_DAYS)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "ledger_record_retention_days (%" PRId64 ") may not be shorter than status_retention_days (%" PRId64
                          "): records must outlive the advertised window",
                          q.ledger_record_retention_days, q.status_retention_days);
  if (q.change_retention_days == 0) q.change_retention_days = ADCP_RETENTION_DEFAULT_CHANGE_DAYS;
  if (q.max_feed_hold_days == 0) q.max_feed_hold_days = ADCP_RETENTION_DEFAULT_HOLD_DAYS;
  if (q.change_retention_days < 0 || q.change_retention_days > ADCP_RETENTION_MAX_DAYS)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "change_retention_days must be 1-%d", ADCP_RETENTION_MAX_DAYS);
  if (q.max_feed_hold_days < 0 || q.max_feed_hold_days > ADCP_RETENTION_MAX_DAYS)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "max_feed_hold_days must be 1-%d", ADCP_RETENTION_MAX_DAYS);
  *out = q;
  return 0;
}

int64_t adcp_retention_window_days(const adcp_retention_policy *p) {
  return p->ledger_record_retention_days > p->status_retention_days ? p->ledger_record_retention_days
                                                                    : p->status_retention_days;
}

static void cutoffs(rpass *rp) {
  int64_t now = adcp_core_instant_us(rp->now);
  adcp_core_instant_format(rp->cutoff, now - rp->window_days * DAY_US);
  adcp_core_instant_format(rp->hold_cutoff, now - rp->pol.max_feed_hold_days * DAY_US);
}

int adcp_retention__pass_refresh(rpass *rp, adcp_error *err) {
  if (rp->fixed_clock) return 0;
  int rc = adcp_sql_now(rp->c, rp->now, err);
  if (!rc) cutoffs(rp);
  return rc;
}

int adcp_retention__pass_begin(rpass *rp, adcp_ledger *l, const adcp_retention_policy *policy, const char *account_id,
                               const char *as_of, adcp_error *err) {
  memset(rp, 0, sizeof *rp);
  rp->l = l;
  rp->c = adcp_ledger_conn(l);
  rp->pg = adcp_sql_dialect_of(rp->c) == ADCP_SQL_POSTGRES;
  int rc = adcp_retention_policy_check(&rp->pol, policy, err);
  if (!rc && account_id) rc = adcp_ledger_check_identifier(account_id, "account_id", err);
  if (rc) return rc;
  rp->window_days = adcp_retention_window_days(&rp->pol);
  rp->account = account_id;
  if ((rc = adcp_sql_now(rp->c, rp->now, err))) return rc;
  if (as_of) {
    char t[32];
    if ((rc = adcp_ledger_normalize_instant(t, as_of, err))) return rc;
    if (adcp_core_instant_us(t) > adcp_core_instant_us(rp->now))
      return adcp_error_set(err, ADCP_EINVALID_INPUT,
                            "as_of %s is after the database clock (%s): retention never runs ahead of it", t, rp->now);
    memcpy(rp->now, t, sizeof t);
    rp->fixed_clock = 1;
  }
  cutoffs(rp);
  if ((rc = adcp_ledger_usable_bindings(&rp->ids, &rp->nids, l, err))) return rc;
  rp->np = 4 + rp->nids;
  rp->p = calloc(rp->np, sizeof *rp->p);
  if (!rp->p) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  rp->p[0] = adcp_sql_text(rp->now);
  rp->p[1] = adcp_sql_text(rp->cutoff);
  rp->p[2] = adcp_sql_text(rp->hold_cutoff);
  rp->p[3] = account_id ? adcp_sql_text(account_id) : adcp_sql_null();
  for (size_t i = 0; i < rp->nids; i++) rp->p[4 + i] = adcp_sql_text(rp->ids[i]);
  return 0;
}

void adcp_retention__pass_end(rpass *rp) {
  adcp_ledger_ids_free(rp->ids, rp->nids);
  free(rp->p);
  memset(rp, 0, sizeof *rp);
}

int adcp_retention__sql(adcp_buf *out, const rpass *rp, const char *t) {
  adcp_buf_reset(out);
  /* Every parameter is named once up front, so PostgreSQL can type the ones
   * a given statement does not use (text parameters are sent untyped). */
  int rc = adcp_buf_printf(out, "WITH adcp_rp AS (SELECT $1%s AS n, $2%s AS c, $3%s AS h, CAST($4 AS TEXT) AS a",
                           rp->pg ? "::timestamptz" : "", rp->pg ? "::timestamptz" : "", rp->pg ? "::timestamptz" : "");
  for (size_t i = 0; !rc && i < rp->nids; i++) rc = adcp_buf_printf(out, ", CAST($%zu AS TEXT) AS b%zu", i + 5, i);
  if (!rc) rc = adcp_buf_append_str(out, ") ");
  while (!rc && *t) {
    if (!strncmp(t, "@TS", 3)) {
      if (rp->pg) rc = adcp_buf_append_str(out, "::timestamptz");
      t += 3;
    } else if (!strncmp(t, "@NOW", 4)) {
      rc = adcp_buf_append_str(out, rp->pg ? "clock_timestamp()" : "adcp_now()");
      t += 4;
    } else if (!strncmp(t, "@UTC{", 5)) {
      /* An instant column as the normalised UTC text on both engines. */
      const char *e = strchr(t, '}');
      if (!e) return ADCP_EINTERNAL;
      int n = (int)(e - t - 5);
      rc = rp->pg ? adcp_buf_printf(out, ADCP_SQL_PG_INSTANT("%.*s"), n, t + 5) : adcp_buf_printf(out, "%.*s", n, t + 5);
      t = e + 1;
    } else if (!strncmp(t, "@UNUSABLE", 9)) {
      if (!rp->nids) rc = adcp_buf_append_str(out, "1 = 1");
      else {
        rc = adcp_buf_append_str(out, "s.row_binding_id NOT IN (");
        for (size_t i = 0; !rc && i < rp->nids; i++) rc = adcp_buf_printf(out, "%s$%zu", i ? ", " : "", i + 5);
        if (!rc) rc = adcp_buf_append_byte(out, ')');
      }
      t += 9;
    } else {
      rc = adcp_buf_append_byte(out, (uint8_t)*t++);
    }
  }
  if (!rc) rc = adcp_buf_cstr(out);
  return rc ? ADCP_ENOMEM : 0;
}

void adcp_retention__record_failure(rpass *rp, adcp_retention_counters *out, const char *operation,
                                    const char *obligation_id, const char *account_id, int code, const char *message) {
  out->failed++;
  if (out->n_failures < ADCP_RETENTION_FAILURES_MAX) {
    adcp_retention_failure *f = &out->failures[out->n_failures++];
    snprintf(f->obligation_id, sizeof f->obligation_id, "%s", obligation_id);
    f->code = code;
    snprintf(f->message, sizeof f->message, "%s", message ? message : "");
  }
  /* Backoff: 1 min doubling per consecutive failure, capped at 1 h (spec 03 §6.6). */
  char now[32];
  adcp_error e = {0};
  if (adcp_sql_rollback(rp->c, &e) || adcp_sql_now(rp->c, now, &e)) return;
  int64_t failures = 0;
  {
    adcp_sql_param p[2] = {adcp_sql_text(obligation_id), adcp_sql_text(operation)};
    char n[24];
    int f = 0;
    if (!adcp_sql_query_text(n, sizeof n, &f, rp->c,
                             "SELECT failures FROM adcp_reporting_retention_attempts WHERE obligation_id = $1 AND "
                             "operation = $2",
                             p, 2, &e) &&
        f)
      failures = strtoll(n, NULL, 10);
  }
  int64_t delay_s = 60;
  for (int64_t i = 0; i < failures && delay_s < 3600; i++) delay_s *= 2;
  if (delay_s > 3600) delay_s = 3600;
  char next[32], cause[ADCP_ERROR_MESSAGE_MAX + 32];
  adcp_core_instant_format(next, adcp_core_instant_us(now) + delay_s * 1000000LL);
  snprintf(cause, sizeof cause, "%s: %s", adcp_error_code_name(code), message ? message : "");
  adcp_sql_param p[6] = {
      adcp_sql_text(obligation_id), adcp_sql_text(operation),
      adcp_sql_text(account_id),    adcp_sql_text(now),
      adcp_sql_text(next),          adcp_sql_textn(cause, strlen(cause) > 500 ? 500 : strlen(cause))};
  adcp_sql_exec(rp->c,
                rp->pg
                    ? "INSERT INTO adcp_reporting_retention_attempts (obligation_id, operation, account_id, failures, "
                      "first_failed_at, last_failed_at, next_attempt_at, last_cause) VALUES ($1, $2, $3, 1, "
                      "$4::timestamptz, $4::timestamptz, $5::timestamptz, $6) ON CONFLICT (obligation_id, operation) DO "
                      "UPDATE SET failures = adcp_reporting_retention_attempts.failures + 1, last_failed_at = "
                      "EXCLUDED.last_failed_at, next_attempt_at = EXCLUDED.next_attempt_at, last_cause = "
                      "EXCLUDED.last_cause"
                    : "INSERT INTO adcp_reporting_retention_attempts (obligation_id, operation, account_id, failures, "
                      "first_failed_at, last_failed_at, next_attempt_at, last_cause) VALUES ($1, $2, $3, 1, $4, $4, $5, "
                      "$6) ON CONFLICT (obligation_id, operation) DO UPDATE SET failures = "
                      "adcp_reporting_retention_attempts.failures + 1, last_failed_at = excluded.last_failed_at, "
                      "next_attempt_at = excluded.next_attempt_at, last_cause = excluded.last_cause",
                p, 6, &e);
}

void adcp_retention__clear_attempts(rpass *rp, const char *operation, const char *obligation_id) {
  adcp_sql_param p[2] = {adcp_sql_text(obligation_id), adcp_sql_text(operation)};
  adcp_error e = {0};
  adcp_sql_exec(rp->c, "DELETE FROM adcp_reporting_retention_attempts WHERE obligation_id = $1 AND operation = $2", p,
                2, &e);
}

int adcp_retention__snapshot_begin(rpass *rp, adcp_error *err) {
  int rc = adcp_sql_begin(rp->c, 0, err);
  if (!rc && rp->pg) rc = adcp_sql_exec(rp->c, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", NULL, 0, err);
  if (rc) adcp_sql_rollback(rp->c, NULL);
  return rc;
}
