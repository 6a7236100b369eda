/* ledger/header.c — room ledger: loading revision headers (the revision
 * joined to its obligation, row set and binding), their JSON form, and the
 * check that a row set repeats its header. May touch: sql, json, core, and
 * the auditlog's list of header columns. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auditlog/header_columns.h"
#include "ledger/internal.h"

/* The header columns (auditlog/header_columns.h, the list the header digest
 * hashes), NULLs coalesced away, then the ledger's own: the row set and its
 * binding. W is the dialect's wrapper of an instant. */
#define LED_NOTNULL(kind, e) e
#define LED_NULLABLE(kind, e) "coalesce(" e ", " ADCP_AUDITLOG_EMPTY_##kind ")"
#define X_LED_PG(t, n, kind, nulls, member) LED_##nulls(kind, ADCP_AUDITLOG_PG_##kind(#t "." #n)) ", "
#define X_LED_SQLITE(t, n, kind, nulls, member) LED_##nulls(kind, ADCP_AUDITLOG_SQLITE(#t "." #n)) ", "
#define HEADER_TAIL \
  "s.row_set_id IS NOT NULL, coalesce(s.rows_state, ''), coalesce(b.kind, ''), coalesce(s.digest_profile, ''), " \
  "coalesce(s.content_sha256, ''), coalesce(s.row_manifest_sha256, ''), coalesce(s.account_id, ''), " \
  "coalesce(s.obligation_id, ''), coalesce(s.row_count, 0), coalesce(s.canonical_byte_count, 0), " \
  "coalesce(s.row_binding_id, ''), coalesce(b.identity_sha256, ''), coalesce(s.row_location_version, 0) " \
  "FROM adcp_reporting_revisions r " \
  "JOIN adcp_reporting_obligations o ON o.obligation_id = r.obligation_id " \
  "LEFT JOIN adcp_reporting_row_sets s ON s.row_set_id = coalesce(r.row_set_id, r.revision_id) " \
  "LEFT JOIN adcp_reporting_row_bindings b ON b.row_binding_id = s.row_binding_id "
/* Where adcp_ledger__header_from_row finds the tail's columns. */
enum {
  T_PRESENT = ADCP_AUDITLOG_HEADER_NCOLS,
  T_ROWS_STATE,
  T_KIND,
  T_PROFILE,
  T_CONTENT,
  T_MANIFEST,
  T_ACCOUNT,
  T_OBLIGATION,
  T_ROWS,
  T_BYTES,
  T_BINDING,
  T_IDENTITY,
  T_LOCATION_VERSION
};

static const char HEADER_PG[] = "SELECT " ADCP_AUDITLOG_HEADER_COLUMNS(X_LED_PG) HEADER_TAIL;
static const char HEADER_SQLITE[] = "SELECT " ADCP_AUDITLOG_HEADER_COLUMNS(X_LED_SQLITE) HEADER_TAIL;

const char *adcp_ledger__header_select(adcp_sql_dialect d) {
  return d == ADCP_SQL_POSTGRES ? HEADER_PG : HEADER_SQLITE;
}

/* ---- headers ------------------------------------------------------------------------- */

void adcp_revision_header_free(adcp_revision_header *h) {
  if (!h) return;
  free(h->control_totals_json);
  h->control_totals_json = NULL;
}

#define TEXT(col) adcp_sql_get_text(r, ADCP_AUDITLOG_COL_##col, NULL)
#define INT(col) adcp_sql_get_int64(r, ADCP_AUDITLOG_COL_##col)
/* The header columns alone (the first ADCP_AUDITLOG_HEADER_NCOLS of r). */
static void header_cols(adcp_revision_header *h, adcp_sql_rows *r) {
  memset(h, 0, sizeof *h);
  ledger_copy_text(h->revision_id, sizeof h->revision_id, TEXT(revision_id));
  ledger_copy_text(h->obligation_id, sizeof h->obligation_id, TEXT(obligation_id));
  ledger_copy_text(h->account_id, sizeof h->account_id, TEXT(account_id));
  h->revision_number = INT(revision_number);
  h->finality = strcmp(TEXT(finality), "official") ? ADCP_FINALITY_SNAPSHOT : ADCP_FINALITY_OFFICIAL;
  ledger_copy_text(h->supersedes_revision_id, sizeof h->supersedes_revision_id, TEXT(supersedes_revision_id));
  if (adcp_binding_algorithm_parse(&h->binding_algorithm, TEXT(binding_algorithm), NULL)) h->binding_algorithm = 0;
  ledger_copy_text(h->content_sha256, sizeof h->content_sha256, TEXT(revision_content_sha256));
  h->canonical_byte_count = (uint64_t)INT(canonical_byte_count);
  h->row_count = (uint64_t)INT(row_count);
  h->control_totals_json = strdup(TEXT(control_totals));
  ledger_copy_text(h->row_manifest_sha256, sizeof h->row_manifest_sha256, TEXT(row_manifest_sha256));
  ledger_copy_text(h->rows_shared_from, sizeof h->rows_shared_from, TEXT(rows_shared_from_revision_id));
  ledger_copy_text(h->observed_at, sizeof h->observed_at, TEXT(observed_at));
  ledger_copy_text(h->recorded_at, sizeof h->recorded_at, TEXT(recorded_at));
  ledger_copy_text(h->period_start, sizeof h->period_start, TEXT(period_start));
  ledger_copy_text(h->period_end, sizeof h->period_end, TEXT(period_end));
  h->chunk_count = (uint64_t)INT(chunk_count);
}

int adcp_ledger__header_from_row(adcp_revision_header *h, ledger_rowset *rs, adcp_sql_rows *r, adcp_error *err) {
  header_cols(h, r);
  ledger_copy_text(h->rows_state, sizeof h->rows_state, adcp_sql_get_text(r, T_ROWS_STATE, NULL));
  ledger_copy_text(h->row_binding_id, sizeof h->row_binding_id, adcp_sql_get_text(r, T_BINDING, NULL));
  if (rs) {
    memset(rs, 0, sizeof *rs);
    rs->present = (int)adcp_sql_get_int64(r, T_PRESENT);
    ledger_copy_text(rs->row_binding_kind, sizeof rs->row_binding_kind, adcp_sql_get_text(r, T_KIND, NULL));
    ledger_copy_text(rs->digest_profile, sizeof rs->digest_profile, adcp_sql_get_text(r, T_PROFILE, NULL));
    ledger_copy_text(rs->content_sha256, sizeof rs->content_sha256, adcp_sql_get_text(r, T_CONTENT, NULL));
    ledger_copy_text(rs->row_manifest_sha256, sizeof rs->row_manifest_sha256, adcp_sql_get_text(r, T_MANIFEST, NULL));
    ledger_copy_text(rs->account_id, sizeof rs->account_id, adcp_sql_get_text(r, T_ACCOUNT, NULL));
    ledger_copy_text(rs->obligation_id, sizeof rs->obligation_id, adcp_sql_get_text(r, T_OBLIGATION, NULL));
    rs->row_count = (uint64_t)adcp_sql_get_int64(r, T_ROWS);
    rs->canonical_byte_count = (uint64_t)adcp_sql_get_int64(r, T_BYTES);
    rs->chunk_count = (uint64_t)INT(chunk_count);
    ledger_copy_text(rs->row_binding_id, sizeof rs->row_binding_id, adcp_sql_get_text(r, T_BINDING, NULL));
    ledger_copy_text(rs->binding_identity, sizeof rs->binding_identity, adcp_sql_get_text(r, T_IDENTITY, NULL));
    rs->row_location_version = adcp_sql_get_int64(r, T_LOCATION_VERSION);
  }
  if (!h->control_totals_json) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}
#undef TEXT
#undef INT

int adcp_ledger__header_from_returning(adcp_revision_header *h, adcp_sql_rows *r, adcp_error *err) {
  header_cols(h, r);
  /* The commit inserted the row set in this transaction (rows_state's default)
   * or shares one it read live FOR SHARE: what a read-back would load. The
   * caller sets row_binding_id (the row set's binding). */
  ledger_copy_text(h->rows_state, sizeof h->rows_state, "live");
  if (!h->control_totals_json) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

int adcp_ledger__load_header(adcp_revision_header *h, ledger_rowset *rs, int *found, adcp_ledger *l, int mode,
                             const char *a, const char *b, adcp_error *err) {
  *found = 0;
  memset(h, 0, sizeof *h);
  const char *sql = mode == 0 ? l->sql_header_by_id : mode == 1 ? l->sql_header_by_id_any : l->sql_header_current;
  adcp_sql_param p[2] = {adcp_sql_text(a), adcp_sql_text(b)};
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn, sql, p, mode == 1 ? 1 : 2, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    *found = 1;
    rc = adcp_ledger__header_from_row(h, rs, r, err);
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

int adcp_ledger_get_revision(adcp_revision_header *out, adcp_ledger *l, const char *account_id, const char *revision_id,
                             adcp_error *err) {
  int found = 0;
  memset(out, 0, sizeof *out);
  int rc = adcp_ledger__check_read_ids(account_id, revision_id, "revision_id", err);
  if (rc) return rc;
  rc = adcp_ledger__load_header(out, NULL, &found, l, account_id ? 0 : 1, revision_id, account_id, err);
  if (!rc && !found) rc = adcp_ledger__not_found_or_quarantined(l, account_id, revision_id, err);
  if (rc) adcp_revision_header_free(out);
  return rc;
}

static int json_str(adcp_buf *o, const char *k, const char *v, int null_if_empty) {
  int rc = adcp_buf_printf(o, ",\"%s\":", k);
  if (rc) return rc;
  if (null_if_empty && (!v || !*v)) return adcp_buf_append_str(o, "null");
  return adcp_jcs_write_string(o, v, strlen(v));
}

int adcp_revision_header_write_json(adcp_buf *o, const adcp_revision_header *h) {
  int rc = adcp_buf_append_str(o, "{\"revision_id\":");
  if (!rc) rc = adcp_jcs_write_string(o, h->revision_id, strlen(h->revision_id));
  if (!rc) rc = json_str(o, "obligation_id", h->obligation_id, 0);
  if (!rc) rc = json_str(o, "account_id", h->account_id, 0);
  if (!rc) rc = adcp_buf_printf(o, ",\"revision_number\":%" PRId64, h->revision_number);
  if (!rc) rc = json_str(o, "finality", adcp_finality_name(h->finality), 0);
  if (!rc) rc = json_str(o, "supersedes_revision_id", h->supersedes_revision_id, 1);
  if (!rc) rc = json_str(o, "binding_algorithm", adcp_binding_algorithm_name(h->binding_algorithm), 0);
  if (!rc) rc = json_str(o, "revision_content_sha256", h->content_sha256, 0);
  if (!rc)
    rc = adcp_buf_printf(o, ",\"canonical_byte_count\":%" PRIu64 ",\"row_count\":%" PRIu64 ",\"chunk_count\":%" PRIu64,
                         h->canonical_byte_count, h->row_count, h->chunk_count);
  if (!rc) rc = adcp_buf_printf(o, ",\"control_totals\":%s", h->control_totals_json ? h->control_totals_json : "[]");
  if (!rc) rc = json_str(o, "row_manifest_sha256", h->row_manifest_sha256, 0);
  if (!rc) rc = json_str(o, "rows_shared_from_revision_id", h->rows_shared_from, 1);
  if (!rc) rc = json_str(o, "rows_state", h->rows_state, 1);
  if (!rc) rc = json_str(o, "period_start", h->period_start, 1);
  if (!rc) rc = json_str(o, "period_end", h->period_end, 1);
  if (!rc) rc = json_str(o, "observed_at", h->observed_at, 1);
  if (!rc) rc = json_str(o, "recorded_at", h->recorded_at, 1);
  if (!rc) rc = json_str(o, "row_binding_id", h->row_binding_id, 1);
  if (!rc) rc = adcp_buf_append_byte(o, '}');
  return rc;
}

/* ---- row-set checks and manifests --------------------------------------------------------- */

int adcp_ledger__check_rowset(const adcp_revision_header *h, const ledger_rowset *rs, adcp_error *err) {
  if (!rs->present) return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "rows are not recorded for this revision");
  if (!strcmp(h->rows_state, "pruning") || !strcmp(h->rows_state, "pruned"))
    return adcp_error_set(err, ADCP_EROWS_EXPIRED, "revision rows have expired");
  if (!strcmp(h->rows_state, "unavailable"))
    return adcp_error_set(err, ADCP_EROWS_UNAVAILABLE, "revision rows are marked unavailable");
  if (strcmp(h->rows_state, "live")) return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "unknown rows_state");
  if (strcmp(rs->row_binding_kind, "postgres") && strcmp(rs->row_binding_kind, "object"))
    return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "the row set's binding is not configured in this process");
  /* The revision header is the trust anchor; the row set must repeat it exactly. */
  if (strcmp(rs->digest_profile, "revision_envelope_v1") || strcmp(rs->content_sha256, h->content_sha256) ||
      strcmp(rs->row_manifest_sha256, h->row_manifest_sha256) || rs->row_count != h->row_count ||
      rs->canonical_byte_count != h->canonical_byte_count || strcmp(rs->account_id, h->account_id) ||
      strcmp(rs->obligation_id, h->obligation_id))
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "row set does not match the revision header");
  return 0;
}
