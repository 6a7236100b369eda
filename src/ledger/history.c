/* ledger/history.c — operator read of an obligation's whole history: every
 * revision in revision_number order (the current-revision lookups in
 * current.c only ever return the last one). Account-checked like every read:
 * another account's obligation is indistinguishable from an unknown one. */
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

int adcp_ledger_list_obligation_revisions(adcp_revision_list *out, adcp_ledger *l, const char *account_id,
                                          const char *obligation_id, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!account_id || !*account_id || !obligation_id || !*obligation_id)
    return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "obligation not found");
  adcp_buf sql;
  adcp_buf_init(&sql);
  if (adcp_buf_append_str(&sql, adcp_ledger__header_select(l->dialect)) ||
      adcp_buf_append_str(&sql, "WHERE r.obligation_id = $1 AND r.account_id = $2 ORDER BY r.revision_number") ||
      adcp_buf_cstr(&sql)) {
    adcp_buf_free(&sql);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_sql_param p[2] = {adcp_sql_text(obligation_id), adcp_sql_text(account_id)};
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn, (const char *)sql.data, p, 2, err);
  adcp_buf_free(&sql);
  if (rc) return rc;
  size_t cap = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    if (out->count == cap) {
      size_t nc = cap ? cap * 2 : 16;
      adcp_revision_header *g = realloc(out->items, nc * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      out->items = g, cap = nc;
    }
    memset(&out->items[out->count], 0, sizeof out->items[0]);
    if ((rc = adcp_ledger__header_from_row(&out->items[out->count], NULL, r, err))) break;
    out->count++;
  }
  adcp_sql_rows_free(r);
  if (!rc && !out->count) rc = adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "obligation not found");
  if (rc < 0) {
    adcp_revision_list_free(out);
    return rc;
  }
  return 0;
}
