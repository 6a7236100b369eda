/* retention/status.c — what an operator (or the issue outbox) reads about
 * retention, read-only: counts and the oldest period per class (eligible,
 * retiring, held, protected, stalled, skipped), and the periods stuck in
 * backoff longer than a threshold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/instant.h"
#include "retention/internal.h"

static void bucket(adcp_retention_bucket *b, const ret_classes *c, int cls) {
  b->count += c->n[cls];
  if (c->n[cls] && (!b->oldest_at[0] || strcmp(c->oldest_at[cls], b->oldest_at) < 0)) {
    snprintf(b->oldest_at, sizeof b->oldest_at, "%s", c->oldest_at[cls]);
    snprintf(b->oldest_obligation_id, sizeof b->oldest_obligation_id, "%s", c->oldest_id[cls]);
  }
}

/* The newest anchor of a period: its end, its newest revision (or its
 * creation) and its newest adjustment (spec 03 §6.2), as UTC text. */
#define ANCHOR_PG \
  "greatest(o.period_end, coalesce((SELECT max(r.recorded_at) FROM adcp_reporting_revisions r WHERE " \
  "r.obligation_id = o.obligation_id), o.created_at), coalesce((SELECT max(a.recorded_at) FROM " \
  "adcp_reporting_adjustments a WHERE a.obligation_id = o.obligation_id), o.period_end))"
#define ANCHOR_SQ \
  "max(o.period_end, coalesce((SELECT max(r.recorded_at) FROM adcp_reporting_revisions r WHERE " \
  "r.obligation_id = o.obligation_id), o.created_at), coalesce((SELECT max(a.recorded_at) FROM " \
  "adcp_reporting_adjustments a WHERE a.obligation_id = o.obligation_id), o.period_end))"

/* anchor + W days, keeping the microseconds (UTC text in, UTC text out). */
static void plus_days(char out[32], const char *anchor, int64_t days) {
  int64_t us = adcp_core_instant_us(anchor);
  if (us == -1) out[0] = 0;
  else adcp_core_instant_format(out, us + days * 86400 * 1000000LL);
}

static int next_eligible(adcp_retention_status *out, const rpass *rp, adcp_error *err) {
  adcp_buf sql;
  adcp_buf_init(&sql);
  int rc = adcp_retention__sql(&sql, rp,
                rp->pg ? "SELECT (SELECT count(*) FROM adcp_reporting_obligations o WHERE " RET_NO_TOMB " AND " RET_ACCOUNT
                         "), (SELECT o.obligation_id || ' ' || " ADCP_SQL_PG_INSTANT(ANCHOR_PG) " FROM adcp_reporting_obligations o "
                         "WHERE " RET_NO_TOMB " AND " RET_ACCOUNT " AND NOT (" RET_AGE ") ORDER BY " ANCHOR_PG
                         ", o.obligation_id LIMIT 1) FROM (SELECT $1@TS AS n, $3@TS AS d) z"
                       : "SELECT (SELECT count(*) FROM adcp_reporting_obligations o WHERE " RET_NO_TOMB " AND " RET_ACCOUNT
                         "), (SELECT o.obligation_id || ' ' || " ANCHOR_SQ " FROM adcp_reporting_obligations o WHERE "
                         RET_NO_TOMB " AND " RET_ACCOUNT " AND NOT (" RET_AGE ") ORDER BY " ANCHOR_SQ
                         ", o.obligation_id LIMIT 1) FROM (SELECT $1@TS AS n, $3@TS AS d) z")
               ? adcp_error_set(err, ADCP_ENOMEM, "out of memory")
               : 0;
  adcp_sql_rows *r = NULL;
  if (!rc) rc = adcp_sql_query(&r, rp->c, (const char *)sql.data, rp->p, rp->np, err);
  if (!rc && (rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    out->live = (uint64_t)adcp_sql_get_int64(r, 0);
    const char *v = adcp_sql_get_text(r, 1, NULL), *sp = strrchr(v, ' ');
    if (sp) { /* obligation IDs hold no space (^[A-Za-z0-9_.:-]+$) */
      snprintf(out->next_eligible_obligation_id, sizeof out->next_eligible_obligation_id, "%.*s", (int)(sp - v), v);
      plus_days(out->next_eligible_at, sp + 1, rp->window_days);
    }
  }
  adcp_sql_rows_free(r);
  adcp_buf_free(&sql);
  return rc < 0 ? rc : 0;
}

int adcp_retention_get_status(adcp_retention_status *out, adcp_ledger *l, const adcp_retention_policy *policy,
                              const char *account_id, const char *as_of, adcp_error *err) {
  memset(out, 0, sizeof *out);
  rpass rp;
  int rc = adcp_retention__pass_begin(&rp, l, policy, account_id, as_of, err);
  ret_classes fresh, resume;
  if (!rc) rc = adcp_retention__classify(&fresh, &rp, 0, err);
  if (!rc) rc = adcp_retention__classify(&resume, &rp, 1, err);
  if (!rc) {
    memcpy(out->now, rp.now, sizeof out->now);
    memcpy(out->cutoff, rp.cutoff, sizeof out->cutoff);
    bucket(&out->eligible, &fresh, RET_CANDIDATE);
    /* Every retiring tombstone, whatever its class, is `retiring`. */
    for (int k = 0; k < 6; k++) bucket(&out->retiring, &resume, k);
    bucket(&out->held, &fresh, RET_HELD_EXPLICIT);
    bucket(&out->held, &fresh, RET_HELD_FEED);
    bucket(&out->protected_, &fresh, RET_PROTECTED);
    bucket(&out->skipped_unconfigured, &fresh, RET_UNCONFIGURED);
    bucket(&out->skipped_unconfigured, &resume, RET_UNCONFIGURED);
    bucket(&out->stalled, &fresh, RET_STALLED);
    bucket(&out->stalled, &resume, RET_STALLED);
  }
  adcp_buf sql;
  adcp_buf_init(&sql);
  if (!rc && adcp_retention__sql(
                 &sql, &rp,
                 "SELECT (SELECT count(*) FROM adcp_reporting_obligation_tombstones o WHERE o.state = 'retired' AND " RET_ACCOUNT
                 "), (SELECT count(*) FROM adcp_reporting_retention_holds o WHERE " RET_ACCOUNT
                 " AND (o.expires_at IS NULL OR o.expires_at > $1@TS)) FROM (SELECT $2@TS AS c, $3@TS AS d) z"))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) {
    adcp_sql_rows *r;
    rc = adcp_sql_query(&r, rp.c, (const char *)sql.data, rp.p, rp.np, err);
    if (!rc) {
      if ((rc = adcp_sql_next(r, err)) == 1)
        out->retired = (uint64_t)adcp_sql_get_int64(r, 0), out->holds = (uint64_t)adcp_sql_get_int64(r, 1), rc = 0;
      adcp_sql_rows_free(r);
    }
  }
  adcp_buf_free(&sql);
  if (!rc) rc = next_eligible(out, &rp, err);
  adcp_retention__pass_end(&rp);
  return rc < 0 ? rc : 0;
}

int adcp_retention_list_stalled(adcp_retention_stalled **out, size_t *count, adcp_ledger *l,
                                int64_t min_stalled_seconds, adcp_error *err) {
  *out = NULL, *count = 0;
  if (min_stalled_seconds < 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "min_stalled_seconds must be >= 0");
  adcp_sql_conn *c = adcp_ledger_conn(l);
  const int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  adcp_sql_param p = adcp_sql_int64(min_stalled_seconds);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(
      &r, c,
      pg ? "SELECT obligation_id, account_id, operation, failures, " ADCP_SQL_PG_INSTANT("first_failed_at") ", " ADCP_SQL_PG_INSTANT(
               "last_failed_at") ", " ADCP_SQL_PG_INSTANT("next_attempt_at") ", last_cause FROM "
           "adcp_reporting_retention_attempts WHERE first_failed_at <= clock_timestamp() - make_interval(secs => "
           "$1::bigint) ORDER BY first_failed_at, obligation_id, operation"
         : "SELECT obligation_id, account_id, operation, failures, first_failed_at, last_failed_at, next_attempt_at, "
           "last_cause FROM adcp_reporting_retention_attempts WHERE first_failed_at <= strftime('%Y-%m-%dT%H:%M:%f', "
           "'now', printf('-%d seconds', $1)) || '999Z' ORDER BY first_failed_at, obligation_id, operation",
      &p, 1, err);
  if (rc) return rc;
  adcp_retention_stalled *items = NULL;
  size_t n = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    adcp_retention_stalled *g = realloc(items, (n + 1) * sizeof *g);
    if (!g) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    items = g;
    adcp_retention_stalled *s = &items[n++];
    memset(s, 0, sizeof *s);
    snprintf(s->obligation_id, sizeof s->obligation_id, "%s", adcp_sql_get_text(r, 0, NULL));
    snprintf(s->account_id, sizeof s->account_id, "%s", adcp_sql_get_text(r, 1, NULL));
    snprintf(s->operation, sizeof s->operation, "%s", adcp_sql_get_text(r, 2, NULL));
    s->failures = adcp_sql_get_int64(r, 3);
    snprintf(s->first_failed_at, sizeof s->first_failed_at, "%s", adcp_sql_get_text(r, 4, NULL));
    snprintf(s->last_failed_at, sizeof s->last_failed_at, "%s", adcp_sql_get_text(r, 5, NULL));
    snprintf(s->next_attempt_at, sizeof s->next_attempt_at, "%s", adcp_sql_get_text(r, 6, NULL));
    snprintf(s->last_cause, sizeof s->last_cause, "%s", adcp_sql_get_text(r, 7, NULL));
  }
  adcp_sql_rows_free(r);
  if (rc < 0) {
    free(items);
    return rc;
  }
  *out = items, *count = n;
  return 0;
}
