/* audit/retire.c — room audit: the housekeeping question "is this revision
 * covered by a retirement", answered from the log's retirement leaves (the
 * document, its writer and strict parser are in auditlog/retirement.c). */
#include <string.h>

#include "audit/internal.h"

/* ---- housekeeping look-up --------------------------------------------------------------------- */

int adcp_audit_revision_retired(int *retired, adcp_sql_conn *conn, const char *account_id, const char *revision_id,
                                const char *header_sha256, const char *obligation_id, adcp_error *err) {
  *retired = 0;
  adcp_sql_param p[1] = {adcp_sql_text(account_id)};
  adcp_sql_rows *r = NULL;
  /* Every retirement leaf of the account (few), parsed strictly. */
  int rc = adcp_sql_query(&r, conn,
                          "SELECT entry_document, entry_sha256 FROM adcp_audit_log_leaves WHERE account_id = $1 AND "
                          "entry_kind = 'retirement' AND entry_document IS NOT NULL ORDER BY leaf_index",
                          p, 1, err);
  while (!rc && !*retired && (rc = adcp_sql_next(r, err)) == 1) {
    rc = 0; /* every row, not only the first (issue 25 item 4) */
    size_t dl = 0;
    const char *doc = adcp_sql_get_text(r, 0, &dl), *entry = adcp_sql_get_text(r, 1, NULL);
    char h[65] = "";
    adcp_error e2 = {0};
    if (!doc || adcp_sha256_hex(h, doc, dl, &e2) || !entry || strcmp(h, entry)) continue;
    adcp_audit_retirement_doc rd;
    if (adcp_audit_retirement_parse(&rd, doc, dl, &e2)) continue;
    if (!strcmp(rd.account_id, account_id) && (!obligation_id || !strcmp(rd.obligation_id, obligation_id)))
      for (size_t i = 0; i < rd.n_revisions && !*retired; i++)
        *retired = !strcmp(rd.revisions[i].revision_id, revision_id) &&
                   (!header_sha256 || !strcmp(rd.revisions[i].header_sha256, header_sha256));
    adcp_audit_retirement_doc_free(&rd);
  }
  if (rc == 1) rc = 0;
  adcp_sql_rows_free(r);
  return rc;
}
