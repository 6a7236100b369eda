/* collector/state.c — the collector's stored scheduler state (migration 0012,
 * table adcp_orphan_collector_state): per binding the unfinished listing's
 * provider token, when a listing last completed, the last pass and the last
 * fence refusal. A row of another namespace (a changed deployment namespace)
 * is ignored: its token belongs to another prefix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/sql.h"
#include "collector/internal.h"

int adcp_collector__state_cursor(char **out, adcp_ledger *l, const char *binding_id, const char *ns_key, adcp_error *err) {
  *out = NULL;
  adcp_sql_param p[2] = {adcp_sql_text(binding_id), adcp_sql_text(ns_key)};
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, adcp_ledger_conn(l),
                          "SELECT cursor FROM adcp_orphan_collector_state WHERE row_binding_id = $1 AND namespace_key = "
                          "$2 AND cursor IS NOT NULL",
                          p, 2, err);
  if (rc) return rc;
  if ((rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    if (!(*out = strdup(adcp_sql_get_text(r, 0, NULL)))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

int adcp_collector__state_save(adcp_ledger *l, const char *binding_id, const char *ns_key, const char *cursor,
                               const char *outcome, const char *refusal, adcp_error *err) {
  adcp_sql_conn *c = adcp_ledger_conn(l);
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  adcp_sql_param p[5] = {adcp_sql_text(binding_id), adcp_sql_text(ns_key),
                         cursor ? adcp_sql_text(cursor) : adcp_sql_null(), adcp_sql_text(outcome),
                         refusal ? adcp_sql_text(refusal) : adcp_sql_null()};
  return adcp_sql_exec(
      c,
      pg ? "INSERT INTO adcp_orphan_collector_state AS s (row_binding_id, namespace_key, cursor, listing_completed_at, "
           "last_pass_at, refusal, refused_at) VALUES ($1, $2, CAST($3 AS TEXT), CASE WHEN CAST($4 AS TEXT) = "
           "'complete' THEN clock_timestamp() END, clock_timestamp(), CAST($5 AS TEXT), CASE WHEN CAST($5 AS TEXT) IS "
           "NULL THEN NULL ELSE clock_timestamp() END) ON CONFLICT (row_binding_id) DO UPDATE SET namespace_key = "
           "excluded.namespace_key, cursor = excluded.cursor, listing_completed_at = coalesce(excluded."
           "listing_completed_at, CASE WHEN s.namespace_key = excluded.namespace_key THEN s.listing_completed_at END), "
           "last_pass_at = excluded.last_pass_at, refusal = excluded.refusal, refused_at = excluded.refused_at"
         : "INSERT INTO adcp_orphan_collector_state AS s (row_binding_id, namespace_key, cursor, listing_completed_at, "
           "last_pass_at, refusal, refused_at) VALUES ($1, $2, $3, CASE WHEN $4 = 'complete' THEN adcp_now() END, "
           "adcp_now(), $5, CASE WHEN $5 IS NULL THEN NULL ELSE adcp_now() END) ON CONFLICT (row_binding_id) DO "
           "UPDATE SET namespace_key = excluded.namespace_key, cursor = excluded.cursor, listing_completed_at = "
           "coalesce(excluded.listing_completed_at, CASE WHEN s.namespace_key = excluded.namespace_key THEN "
           "s.listing_completed_at END), last_pass_at = excluded.last_pass_at, refusal = excluded.refusal, refused_at "
           "= excluded.refused_at",
      p, 5, err);
}

int adcp_collector_state_get(adcp_collector_state *out, adcp_ledger *l, const char *binding_id, adcp_error *err) {
  memset(out, 0, sizeof *out);
  snprintf(out->row_binding_id, sizeof out->row_binding_id, "%s", binding_id);
  out->since_complete_s = out->since_refusal_s = -1;
  adcp_sql_conn *c = adcp_ledger_conn(l);
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  adcp_sql_param p = adcp_sql_text(binding_id);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(
      &r, c,
      pg ? "SELECT CASE WHEN cursor IS NULL THEN 0 ELSE 1 END, coalesce(CAST(extract(epoch FROM clock_timestamp() - "
           "listing_completed_at) AS BIGINT), -1), coalesce(CAST(extract(epoch FROM clock_timestamp() - refused_at) AS "
           "BIGINT), -1), coalesce(refusal, '') FROM adcp_orphan_collector_state WHERE row_binding_id = $1"
         : "SELECT CASE WHEN cursor IS NULL THEN 0 ELSE 1 END, coalesce(CAST((julianday(adcp_now()) - "
           "julianday(listing_completed_at)) * 86400 AS INTEGER), -1), coalesce(CAST((julianday(adcp_now()) - "
           "julianday(refused_at)) * 86400 AS INTEGER), -1), coalesce(refusal, '') FROM adcp_orphan_collector_state "
           "WHERE row_binding_id = $1",
      &p, 1, err);
  if (rc) return rc;
  if ((rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    out->has_cursor = adcp_sql_get_int64(r, 0) != 0;
    out->since_complete_s = adcp_sql_get_int64(r, 1);
    out->since_refusal_s = adcp_sql_get_int64(r, 2);
    snprintf(out->refusal, sizeof out->refusal, "%s", adcp_sql_get_text(r, 3, NULL));
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}
