/* import/quarantine.c — room src/import: the quarantine as an operator sees
 * it (docs/adopting.md "Quarantine"): list the revisions the legacy import
 * quarantined, count them, and release one so the next import run tries it
 * again after its legacy row was repaired. The import itself records them
 * (import.c); nothing here touches the legacy database. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/import.h"

int adcp_import_quarantine_each(adcp_ledger *l, const char *account_id,
                                int (*fn)(void *ctx, const adcp_import_quarantined *q), void *ctx, adcp_error *err) {
  adcp_sql_param p = adcp_sql_text(account_id);
  adcp_sql_rows *r = NULL;
  int rc = adcp_sql_query(&r, adcp_ledger_conn(l),
                          "SELECT revision_id, account_id, source, failed_check, message, recorded_at "
                          "FROM adcp_legacy_import_quarantine WHERE (CAST($1 AS TEXT) IS NULL OR account_id = $1) "
                          "ORDER BY account_id, revision_id",
                          &p, 1, err);
  while (!rc) {
    int more = adcp_sql_next(r, err);
    if (more <= 0) {
      rc = more;
      break;
    }
    adcp_import_quarantined q = {
        .revision_id = adcp_sql_get_text(r, 0, NULL),
        .account_id = adcp_sql_get_text(r, 1, NULL),
        .source = adcp_sql_get_text(r, 2, NULL),
        .check = adcp_sql_get_text(r, 3, NULL),
        .message = adcp_sql_get_text(r, 4, NULL),
        .recorded_at = adcp_sql_get_text(r, 5, NULL),
    };
    rc = fn(ctx, &q);
  }
  adcp_sql_rows_free(r);
  return rc;
}

int adcp_import_quarantine_count(uint64_t *out, adcp_sql_conn *conn, adcp_error *err) {
  char n[32] = "0";
  int found = 0;
  int rc =
      adcp_sql_query_text(n, sizeof n, &found, conn, "SELECT COUNT(*) FROM adcp_legacy_import_quarantine", NULL, 0, err);
  *out = rc ? 0 : (uint64_t)strtoull(n, NULL, 10);
  return rc;
}

int adcp_import_quarantine_release(char *account_out, size_t account_n, adcp_ledger *l, const char *revision_id,
                                   adcp_error *err) {
  if (!revision_id || !*revision_id)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "quarantine release: a revision ID is required");
  adcp_sql_conn *c = adcp_ledger_conn(l);
  adcp_sql_param p = adcp_sql_text(revision_id);
  int found = 0;
  char acct[ADCP_LEDGER_ID_MAX] = "";
  int rc = adcp_sql_begin(c, 1, err);
  if (!rc)
    rc = adcp_sql_query_text(acct, sizeof acct, &found, c,
                             "SELECT account_id FROM adcp_legacy_import_quarantine WHERE revision_id = $1", &p, 1, err);
  if (!rc && !found)
    rc = adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "revision %.200s is not quarantined", revision_id);
  if (!rc) rc = adcp_sql_exec(c, "DELETE FROM adcp_legacy_import_quarantine WHERE revision_id = $1", &p, 1, err);
  if (!rc) rc = adcp_sql_commit(c, err);
  if (rc) adcp_sql_rollback(c, NULL);
  if (!rc && account_out && account_n) snprintf(account_out, account_n, "%s", acct);
  return rc;
}
