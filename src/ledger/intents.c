/* ledger/intents.c — operator read of the object-write intents (spec 02 §8.6):
 * what the sweep would see, open and sweeping rows with their expiry, so an
 * upload waiting for its expiry is visible before `sweep` counts it. Read-only. */
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

int adcp_ledger_list_intents(adcp_intent_info **out, size_t *count, adcp_ledger *l, const char *binding_id,
                             adcp_error *err) {
  *out = NULL, *count = 0;
  int pg = l->dialect == ADCP_SQL_POSTGRES;
  adcp_buf sql;
  adcp_buf_init(&sql);
  if (adcp_buf_printf(
          &sql,
          "SELECT row_binding_id, account_id, row_set_id, content_sha256, state, %s, %s, %s, "
          "CASE WHEN expires_at <= %s THEN 1 ELSE 0 END FROM adcp_reporting_row_write_intents "
          "WHERE (CAST($1 AS TEXT) IS NULL OR row_binding_id = $1) "
          "ORDER BY expires_at, row_binding_id, row_set_id, content_sha256",
          pg ? ADCP_SQL_PG_INSTANT("created_at") : "created_at", pg ? ADCP_SQL_PG_INSTANT("expires_at") : "expires_at",
          pg ? "jsonb_array_length(created_objects)" : "json_array_length(created_objects)", adcp_ledger__now_sql(l)) ||
      adcp_buf_cstr(&sql)) {
    adcp_buf_free(&sql);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_sql_param p = binding_id ? adcp_sql_text(binding_id) : adcp_sql_null();
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn, (const char *)sql.data, &p, 1, err);
  adcp_buf_free(&sql);
  if (rc) return rc;
  size_t cap = 0;
  adcp_intent_info *v = NULL;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    if (*count == cap) {
      size_t nc = cap ? cap * 2 : 16;
      adcp_intent_info *g = realloc(v, nc * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      v = g, cap = nc;
    }
    adcp_intent_info *e = &v[*count];
    memset(e, 0, sizeof *e);
    ledger_copy_text(e->row_binding_id, sizeof e->row_binding_id, adcp_sql_get_text(r, 0, NULL));
    ledger_copy_text(e->account_id, sizeof e->account_id, adcp_sql_get_text(r, 1, NULL));
    ledger_copy_text(e->row_set_id, sizeof e->row_set_id, adcp_sql_get_text(r, 2, NULL));
    ledger_copy_text(e->content_sha256, sizeof e->content_sha256, adcp_sql_get_text(r, 3, NULL));
    ledger_copy_text(e->state, sizeof e->state, adcp_sql_get_text(r, 4, NULL));
    ledger_copy_text(e->created_at, sizeof e->created_at, adcp_sql_get_text(r, 5, NULL));
    ledger_copy_text(e->expires_at, sizeof e->expires_at, adcp_sql_get_text(r, 6, NULL));
    e->created_objects = (uint64_t)adcp_sql_get_int64(r, 7);
    e->expired = adcp_sql_get_int64(r, 8) != 0;
    e->configured = adcp_ledger__binding_find(l, e->row_binding_id) != NULL;
    (*count)++;
  }
  adcp_sql_rows_free(r);
  if (rc < 0) {
    free(v);
    *count = 0;
    return rc;
  }
  *out = v;
  return 0;
}
