/* retention/holds.c — explicit retention holds: an operator keeps one period
 * (or every period of an account) from retirement and row pruning until the
 * hold is removed or expires. Adding one is a hold-creating write (spec 03
 * §6.3): under the account lock, refused when the period already retires. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retention/internal.h"

static int check_hold_id(const char *id, adcp_error *err) {
  size_t n = id ? strlen(id) : 0;
  if (n < 1 || n > 128) return adcp_error_set(err, ADCP_EINVALID_INPUT, "hold ID must be 1-128 characters");
  for (size_t i = 0; i < n; i++) {
    char c = id[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == ':' || c == '-'))
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "hold ID must match ^[A-Za-z0-9_.:-]{1,128}$ (byte %zu)", i);
  }
  return 0;
}

static int check_reason(const char *r, adcp_error *err) {
  if (!r) return 0;
  size_t n = strlen(r);
  if (n > 512) return adcp_error_set(err, ADCP_EINVALID_INPUT, "hold reason is longer than 512 bytes");
  if (adcp_utf8_valid_prefix((const uint8_t *)r, n) != n)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "hold reason is not valid UTF-8");
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)r[i] < 0x20 || r[i] == 0x7f)
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "hold reason holds a control character (byte %zu)", i);
  return 0;
}

int adcp_retention_hold_add(adcp_ledger *l, const char *hold_id, const char *account_id, const char *obligation_id,
                            const char *reason, const char *expires_at, adcp_error *err) {
  int rc = check_hold_id(hold_id, err);
  if (!rc) rc = adcp_ledger_check_identifier(account_id, "account_id", err);
  if (!rc && obligation_id) rc = adcp_ledger_check_identifier(obligation_id, "obligation_id", err);
  if (!rc) rc = check_reason(reason, err);
  char until[32] = "";
  if (!rc && expires_at) rc = adcp_ledger_normalize_instant(until, expires_at, err);
  if (rc) return rc;
  adcp_sql_conn *c = adcp_ledger_conn(l);
  const int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  if ((rc = adcp_sql_begin(c, 1, err))) return rc;
  if ((rc = adcp_ledger_lock_account(adcp_ledger_conn(l), account_id, err))) goto out;
  if (!obligation_id) {
    /* A hold of an account this ledger has never seen holds nothing: most
     * likely a mistyped ID, which a silent success would hide (docs/retention.md). */
    adcp_sql_param a = adcp_sql_text(account_id);
    char one[8];
    int f = 0;
    if ((rc = adcp_sql_query_text(one, sizeof one, &f, c,
                                  "SELECT 1 FROM adcp_reporting_obligations WHERE account_id = $1 LIMIT 1", &a, 1, err)))
      goto out;
    if (!f) {
      rc = adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND,
                          "account %s has no obligation here: the hold would hold nothing (check the account ID)",
                          account_id);
      goto out;
    }
  }
  if (obligation_id) {
    adcp_sql_param p[2] = {adcp_sql_text(obligation_id), adcp_sql_text(account_id)};
    char st[16] = "";
    int f = 0;
    if ((rc = adcp_sql_query_text(st, sizeof st, &f, c,
                                  "SELECT state FROM adcp_reporting_obligation_tombstones WHERE obligation_id = $1", p,
                                  1, err)))
      goto out;
    if (f) {
      rc = adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "period of obligation %s is already %s: a hold cannot keep it",
                          obligation_id, st);
      goto out;
    }
    char acct[ADCP_LEDGER_ID_MAX] = "";
    if ((rc = adcp_sql_query_text(acct, sizeof acct, &f, c,
                                  "SELECT account_id FROM adcp_reporting_obligations WHERE obligation_id = $1", p, 1, err)))
      goto out;
    if (!f || strcmp(acct, account_id)) {
      rc = adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "obligation not found");
      goto out;
    }
  }
  adcp_sql_param p[5] = {adcp_sql_text(hold_id), adcp_sql_text(account_id),
                         obligation_id ? adcp_sql_text(obligation_id) : adcp_sql_null(),
                         adcp_sql_text(reason ? reason : ""), until[0] ? adcp_sql_text(until) : adcp_sql_null()};
  rc = adcp_sql_exec(c,
                     pg ? "INSERT INTO adcp_reporting_retention_holds (hold_id, account_id, obligation_id, reason, "
                          "expires_at) VALUES ($1, $2, $3, $4, $5::timestamptz)"
                        : "INSERT INTO adcp_reporting_retention_holds (hold_id, account_id, obligation_id, reason, "
                          "expires_at) VALUES ($1, $2, $3, $4, $5)",
                     p, 5, err);
  if (rc == ADCP_ECONFLICT) rc = adcp_error_set(err, ADCP_ECONFLICT, "a hold named %s already exists", hold_id);
  if (!rc) rc = adcp_sql_commit(c, err);
out:
  if (rc) adcp_sql_rollback(c, NULL);
  return rc;
}

int adcp_retention_hold_remove(adcp_ledger *l, const char *hold_id, adcp_error *err) {
  int rc = check_hold_id(hold_id, err);
  if (rc) return rc;
  adcp_sql_param p = adcp_sql_text(hold_id);
  int64_t n = 0;
  rc = adcp_sql_exec_changes(&n, adcp_ledger_conn(l), "DELETE FROM adcp_reporting_retention_holds WHERE hold_id = $1",
                             &p, 1, err);
  if (!rc && !n) rc = adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "no hold named %s", hold_id);
  return rc;
}

int adcp_retention_hold_list(adcp_retention_hold **out, size_t *count, adcp_ledger *l, const char *account_id,
                             adcp_error *err) {
  *out = NULL, *count = 0;
  int rc = account_id ? adcp_ledger_check_identifier(account_id, "account_id", err) : 0;
  if (rc) return rc;
  adcp_sql_conn *c = adcp_ledger_conn(l);
  const int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  adcp_sql_param p = account_id ? adcp_sql_text(account_id) : adcp_sql_null();
  adcp_sql_rows *r;
  rc = adcp_sql_query(&r, c,
                      pg ? "SELECT hold_id, account_id, coalesce(obligation_id, ''), reason, " ADCP_SQL_PG_INSTANT("created_at")
                           ", coalesce(" ADCP_SQL_PG_INSTANT("expires_at") ", ''), (expires_at IS NULL OR expires_at > "
                           "clock_timestamp()) FROM adcp_reporting_retention_holds WHERE (CAST($1 AS TEXT) IS NULL OR "
                           "account_id = $1) ORDER BY hold_id"
                         : "SELECT hold_id, account_id, coalesce(obligation_id, ''), reason, created_at, "
                           "coalesce(expires_at, ''), (expires_at IS NULL OR expires_at > adcp_now()) FROM "
                           "adcp_reporting_retention_holds WHERE (CAST($1 AS TEXT) IS NULL OR account_id = $1) ORDER BY "
                           "hold_id",
                      &p, 1, err);
  if (rc) return rc;
  adcp_retention_hold *items = NULL;
  size_t n = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    adcp_retention_hold *g = realloc(items, (n + 1) * sizeof *g);
    if (!g) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    items = g;
    adcp_retention_hold *h = &items[n++];
    memset(h, 0, sizeof *h);
    snprintf(h->hold_id, sizeof h->hold_id, "%s", adcp_sql_get_text(r, 0, NULL));
    snprintf(h->account_id, sizeof h->account_id, "%s", adcp_sql_get_text(r, 1, NULL));
    snprintf(h->obligation_id, sizeof h->obligation_id, "%s", adcp_sql_get_text(r, 2, NULL));
    snprintf(h->reason, sizeof h->reason, "%s", adcp_sql_get_text(r, 3, NULL));
    snprintf(h->created_at, sizeof h->created_at, "%s", adcp_sql_get_text(r, 4, NULL));
    snprintf(h->expires_at, sizeof h->expires_at, "%s", adcp_sql_get_text(r, 5, NULL));
    h->active = adcp_sql_get_int64(r, 6) != 0;
  }
  adcp_sql_rows_free(r);
  if (rc < 0) {
    free(items);
    return rc;
  }
  *out = items, *count = n;
  return 0;
}
