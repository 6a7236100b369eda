/* import/source.c — the legacy layouts this import reads (docs/adopting.md
 * "Legacy layouts"), on PostgreSQL and SQLite, read-only:
 *
 *   js-inline  (spec 02 §2.1, §13.1) adcp_reporting_obligations +
 *              adcp_reporting_revisions whose `data` document still has a
 *              top-level `rows` array; the binding is data.binding.{sha256,
 *              byteCount, rowCount, algorithm}, the totals
 *              data.wireRevision.control_totals.
 *   py-inline  (spec 02 §2.2, §13.2) reporting_revisions (the columnar
 *              header sketch: revision_content_sha256, canonical_byte_count,
 *              row_count, control_totals, binding_algorithm NULL = unknown)
 *              + reporting_revision_rows(reporting_revision_id, ordinal,
 *              row_payload).
 *
 * Every query is a fixed text chosen by (source, dialect, cursor or not);
 * values only ever travel as parameters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/internal.h"

static const char js_pg_select[] =
    "SELECT r.revision_id, r.obligation_id, o.account_id, o.configuration_id, o.period_ordinal, " ADCP_SQL_PG_INSTANT(
        "o.period_start") ", " ADCP_SQL_PG_INSTANT("o.period_end") ", r.finality, "
                                                      "coalesce(r.data->'binding'->>'sha256', ''), "
                                                      "coalesce(r.data->'binding'->>'byteCount', ''), "
                                                      "coalesce(r.data->'binding'->>'rowCount', ''), "
                                                      "coalesce(r.data->'binding'->>'algorithm', ''), "
                                                      "coalesce((r.data->'wireRevision'->'control_totals')::text, "
                                                      "'[]'), coalesce(jsonb_typeof(r.data->'rows'), ''), " ADCP_SQL_PG_INSTANT(
                                                          "r.recorded_at") " "
                                                                           "FROM adcp_reporting_revisions r JOIN "
                                                                           "adcp_reporting_obligations o ON "
                                                                           "o.obligation_id = r.obligation_id "
                                                                           "WHERE r.data ? 'rows' AND ($1 = '' OR "
                                                                           "o.account_id = $1) ";
static const char js_pg_after[] = "AND (r.recorded_at, r.revision_id) > ($2::timestamptz, $3) ";
static const char js_pg_order[] = "ORDER BY r.recorded_at, r.revision_id LIMIT $4";

static const char js_lite_select[] =
    "SELECT r.revision_id, r.obligation_id, o.account_id, o.configuration_id, o.period_ordinal, o.period_start, "
    "o.period_end, r.finality, coalesce(json_extract(r.data, '$.binding.sha256'), ''), "
    "coalesce(json_extract(r.data, '$.binding.byteCount'), ''), coalesce(json_extract(r.data, '$.binding.rowCount'), "
    "''), coalesce(json_extract(r.data, '$.binding.algorithm'), ''), "
    "coalesce(json_extract(r.data, '$.wireRevision.control_totals'), '[]'), json_type(r.data, '$.rows'), "
    "r.recorded_at FROM adcp_reporting_revisions r JOIN adcp_reporting_obligations o ON "
    "o.obligation_id = r.obligation_id WHERE json_type(r.data, '$.rows') IS NOT NULL AND ($1 = '' OR "
    "o.account_id = $1) ";
static const char js_lite_after[] = "AND (r.recorded_at > $2 OR (r.recorded_at = $2 AND r.revision_id > $3)) ";

static const char py_pg_select[] =
    "SELECT h.reporting_revision_id, h.reporting_obligation_id, h.account_id, h.reporting_obligation_id, 0, " ADCP_SQL_PG_INSTANT(
        "h.period_start") ", " ADCP_SQL_PG_INSTANT("h.period_end") ", h.finality, h.revision_content_sha256, "
                                                      "h.canonical_byte_count::text, h.row_count::text, "
                                                      "coalesce(h.binding_algorithm, ''), "
                                                      "coalesce(h.control_totals::text, '[]'), 'array', " ADCP_SQL_PG_INSTANT(
                                                          "h.recorded_at") " FROM reporting_revisions h "
                                                                           "WHERE ($1 = '' OR h.account_id = $1) ";
static const char py_pg_after[] = "AND (h.recorded_at, h.reporting_revision_id) > ($2::timestamptz, $3) ";
static const char py_order[] = "ORDER BY h.recorded_at, h.reporting_revision_id LIMIT $4";
static const char js_lite_order[] = "ORDER BY r.recorded_at, r.revision_id LIMIT $4";

static const char py_lite_select[] =
    "SELECT h.reporting_revision_id, h.reporting_obligation_id, h.account_id, h.reporting_obligation_id, 0, "
    "h.period_start, h.period_end, h.finality, h.revision_content_sha256, h.canonical_byte_count, h.row_count, "
    "coalesce(h.binding_algorithm, ''), coalesce(h.control_totals, '[]'), 'array', h.recorded_at "
    "FROM reporting_revisions h WHERE ($1 = '' OR h.account_id = $1) ";
static const char py_lite_after[] = "AND (h.recorded_at > $2 OR (h.recorded_at = $2 AND h.reporting_revision_id > $3)) ";

const char *adcp_import__legacy_table(adcp_import_source s) {
  return s == ADCP_IMPORT_PY_INLINE ? "reporting_revision_rows" : "adcp_reporting_revisions";
}

int adcp_import__source_probe(adcp_sql_conn *src, adcp_import_source s, adcp_error *err) {
  int pg = adcp_sql_dialect_of(src) == ADCP_SQL_POSTGRES;
  const char *sql;
  if (s == ADCP_IMPORT_PY_INLINE)
    sql =
        "SELECT count(*) FROM (SELECT h.reporting_revision_id, h.reporting_obligation_id, h.account_id, "
        "h.period_start, h.period_end, h.finality, h.revision_content_sha256, h.canonical_byte_count, h.row_count, "
        "h.binding_algorithm, h.control_totals, h.recorded_at FROM reporting_revisions h LIMIT 1) a, "
        "(SELECT reporting_revision_id, ordinal, row_payload FROM reporting_revision_rows LIMIT 1) b";
  else
    sql = pg ? "SELECT count(*) FROM (SELECT r.revision_id, r.obligation_id, r.finality, r.data, r.recorded_at FROM "
               "adcp_reporting_revisions r LIMIT 1) a, (SELECT obligation_id, configuration_id, account_id, "
               "period_ordinal, period_start, period_end FROM adcp_reporting_obligations LIMIT 1) b"
             : "SELECT count(*) FROM (SELECT r.revision_id, r.obligation_id, r.finality, r.data, r.recorded_at FROM "
               "adcp_reporting_revisions r LIMIT 1) a, (SELECT obligation_id, configuration_id, account_id, "
               "period_ordinal, period_start, period_end FROM adcp_reporting_obligations LIMIT 1) b";
  char one[32];
  int found = 0;
  adcp_error e = {0};
  int rc = adcp_sql_query_text(one, sizeof one, &found, src, sql, NULL, 0, &e);
  if (rc == 0) return 0;
  if (rc == ADCP_ENOMEM) return adcp_error_set(err, rc, "out of memory");
  if (s == ADCP_IMPORT_PY_INLINE)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "not a py-inline database: reporting_revisions and reporting_revision_rows with the legacy "
                          "columns are required (see docs/adopting.md)");
  return adcp_error_set(err, ADCP_EINVALID_INPUT,
                        "not a js-inline database: adcp_reporting_revisions (with its data document) and "
                        "adcp_reporting_obligations are required (see docs/adopting.md)");
}

int adcp_import__source_count(uint64_t *out, adcp_sql_conn *src, adcp_import_source s, const char *account,
                              adcp_error *err) {
  int pg = adcp_sql_dialect_of(src) == ADCP_SQL_POSTGRES;
  const char *sql = s == ADCP_IMPORT_PY_INLINE
                        ? "SELECT count(*) FROM reporting_revisions h WHERE ($1 = '' OR h.account_id = $1)"
                        : (pg ? "SELECT count(*) FROM adcp_reporting_revisions r JOIN adcp_reporting_obligations o ON "
                                "o.obligation_id = r.obligation_id WHERE r.data ? 'rows' AND ($1 = '' OR o.account_id = $1)"
                              : "SELECT count(*) FROM adcp_reporting_revisions r JOIN adcp_reporting_obligations o ON "
                                "o.obligation_id = r.obligation_id WHERE json_type(r.data, '$.rows') IS NOT NULL AND "
                                "($1 = '' OR o.account_id = $1)");
  adcp_sql_param p = adcp_sql_text(account ? account : "");
  char n[32];
  int found = 0;
  int rc = adcp_sql_query_text(n, sizeof n, &found, src, sql, &p, 1, err);
  *out = rc || !found ? 0 : strtoull(n, NULL, 10);
  return rc;
}

void adcp_import__candidate_free(import_candidate *c) {
  char **f[] = {&c->revision_id, &c->obligation_id, &c->account_id,     &c->configuration_id, &c->period_start,
                &c->period_end,  &c->finality,      &c->content_sha256, &c->byte_count,       &c->row_count,
                &c->algorithm,   &c->totals_json,   &c->rows_type,      &c->recorded_at};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) free(*f[i]), *f[i] = NULL;
}

void adcp_import__candidates_free(import_candidate *v, size_t n) {
  for (size_t i = 0; v && i < n; i++) adcp_import__candidate_free(&v[i]);
  free(v);
}

static char *dup_col(adcp_sql_rows *r, int col) {
  size_t len = 0;
  const char *t = adcp_sql_is_null(r, col) ? "" : adcp_sql_get_text(r, col, &len);
  if (!t) t = "", len = 0;
  char *d = malloc(len + 1);
  if (d) memcpy(d, t, len), d[len] = 0;
  return d;
}

int adcp_import__source_batch(import_candidate **out, size_t *n, adcp_sql_conn *src, adcp_import_source s,
                              const char *account, const char *at, const char *id, size_t limit, adcp_error *err) {
  *out = NULL, *n = 0;
  int pg = adcp_sql_dialect_of(src) == ADCP_SQL_POSTGRES;
  const char *sel, *after, *order;
  if (s == ADCP_IMPORT_PY_INLINE) {
    sel = pg ? py_pg_select : py_lite_select;
    after = pg ? py_pg_after : py_lite_after;
    order = py_order;
  } else {
    sel = pg ? js_pg_select : js_lite_select;
    after = pg ? js_pg_after : js_lite_after;
    order = pg ? js_pg_order : js_lite_order;
  }
  adcp_buf sql;
  adcp_buf_init(&sql);
  if (adcp_buf_append_str(&sql, sel) || adcp_buf_append_str(&sql, after) || adcp_buf_append_str(&sql, order) ||
      adcp_buf_cstr(&sql)) {
    adcp_buf_free(&sql);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  /* No cursor yet: a position before every row ('-infinity' on PostgreSQL,
   * the empty text on SQLite, whose instants are non-empty text). */
  if (!at) at = pg ? "-infinity" : "", id = "";
  adcp_sql_param p[4] = {adcp_sql_text(account ? account : ""), adcp_sql_text(at), adcp_sql_text(id ? id : ""),
                         adcp_sql_int64((int64_t)limit)};
  adcp_sql_rows *r = NULL;
  int rc = adcp_sql_query(&r, src, (const char *)sql.data, p, 4, err);
  adcp_buf_free(&sql);
  if (rc) return rc;
  import_candidate *v = calloc(limit ? limit : 1, sizeof *v);
  if (!v) {
    adcp_sql_rows_free(r);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  size_t k = 0;
  while ((rc = adcp_sql_next(r, err)) == 1 && k < limit) {
    import_candidate *c = &v[k++];
    c->revision_id = dup_col(r, 0), c->obligation_id = dup_col(r, 1), c->account_id = dup_col(r, 2);
    c->configuration_id = dup_col(r, 3), c->period_ordinal = adcp_sql_get_int64(r, 4);
    c->period_start = dup_col(r, 5), c->period_end = dup_col(r, 6), c->finality = dup_col(r, 7);
    c->content_sha256 = dup_col(r, 8), c->byte_count = dup_col(r, 9), c->row_count = dup_col(r, 10);
    c->algorithm = dup_col(r, 11), c->totals_json = dup_col(r, 12), c->rows_type = dup_col(r, 13);
    c->recorded_at = dup_col(r, 14);
    if (!c->revision_id || !c->obligation_id || !c->account_id || !c->configuration_id || !c->period_start ||
        !c->period_end || !c->finality || !c->content_sha256 || !c->byte_count || !c->row_count || !c->algorithm ||
        !c->totals_json || !c->rows_type || !c->recorded_at) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
  }
  adcp_sql_rows_free(r);
  if (rc < 0) {
    adcp_import__candidates_free(v, k);
    return rc;
  }
  *out = v, *n = k;
  return 0;
}

int adcp_import__rows_open(import_rows *it, adcp_sql_conn *src, adcp_import_source s, const char *revision_id,
                           adcp_error *err) {
  memset(it, 0, sizeof *it);
  int pg = adcp_sql_dialect_of(src) == ADCP_SQL_POSTGRES;
  const char *sql;
  /* A non-object element is handed over as a JSON string, which the encoder
   * refuses as a row (quarantine: unparsable_row). A row above the cap is
   * measured by the source and never fetched (bounded memory). PostgreSQL
   * renders each jsonb value as text once (OFFSET 0 keeps the subquery from
   * being flattened, which would repeat the cast per reference). SQLite's
   * length() counts characters (a CAST to measure bytes would copy the
   * value): a row within the cap in characters is fetched (at most 4 bytes
   * each) and its bytes checked here. */
  if (s == ADCP_IMPORT_PY_INLINE)
    sql = pg ? "SELECT CASE WHEN octet_length(t) <= $2 THEN t END, octet_length(t), nul FROM (SELECT row_payload::text "
               "AS t, CASE WHEN row_payload IS NULL THEN 1 ELSE 0 END AS nul FROM reporting_revision_rows WHERE "
               "reporting_revision_id = $1 ORDER BY ordinal OFFSET 0) q"
             : "SELECT CASE WHEN length(row_payload) <= $2 THEN row_payload END, length(row_payload), CASE WHEN "
               "row_payload IS NULL THEN 1 ELSE 0 END FROM reporting_revision_rows WHERE reporting_revision_id = $1 "
               "ORDER BY ordinal";
  else
    sql = pg ? "SELECT CASE WHEN octet_length(t) <= $2 THEN t END, octet_length(t), 0 FROM (SELECT e.value::text AS t "
               "FROM adcp_reporting_revisions r, jsonb_array_elements(r.data->'rows') WITH ORDINALITY AS e(value, ord) "
               "WHERE r.revision_id = $1 ORDER BY e.ord OFFSET 0) q"
             : "SELECT CASE WHEN length(v) <= $2 THEN v END, length(v), 0 FROM "
               "(SELECT CASE WHEN e.type IN ('object', 'array') THEN e.value ELSE json_quote(e.value) END AS v, "
               "e.id AS id FROM adcp_reporting_revisions r, json_each(r.data, '$.rows') e WHERE r.revision_id = $1) "
               "ORDER BY id";
  it->chars = !pg;
  adcp_sql_param p[2] = {adcp_sql_text(revision_id), adcp_sql_int64(ADCP_IMPORT_ROW_MAX)};
  return adcp_sql_query(&it->r, src, sql, p, 2, err);
}

int adcp_import__rows_next(void *ctx, const char **row, size_t *len, adcp_error *err) {
  import_rows *it = ctx;
  if (it->done) return 0;
  int rc = adcp_sql_next(it->r, err);
  if (rc <= 0) {
    it->done = 1;
    return rc;
  }
  it->ordinal++;
  if (adcp_sql_get_int64(it->r, 2)) {
    *row = "null", *len = 4;
    return 1;
  }
  int64_t n = adcp_sql_get_int64(it->r, 1);
  *row = adcp_sql_is_null(it->r, 0) ? NULL : adcp_sql_get_text(it->r, 0, len);
  int chars = it->chars && !*row;
  if (*row && (int64_t)*len > n) n = (int64_t)*len; /* bytes, where the source counted characters */
  if (n > (int64_t)ADCP_IMPORT_ROW_MAX) {
    it->done = 1;
    return adcp_error_set(err, ADCP_EINVALID_ROW, "row %llu is %lld %s, above the %u MiB row cap of a commit",
                          (unsigned long long)it->ordinal, (long long)n, chars ? "characters" : "bytes",
                          ADCP_IMPORT_ROW_MAX >> 20);
  }
  if (!*row) *row = "null", *len = 4;
  return 1;
}

void adcp_import__rows_close(import_rows *it) {
  adcp_sql_rows_free(it->r);
  it->r = NULL;
}

int adcp_import__safe_text(char *out, size_t cap, const char *raw) {
  adcp_error e = {0};
  if (!raw) raw = "";
  if (*raw && !adcp_ledger_check_identifier(raw, "id", &e) && strlen(raw) < cap) {
    memcpy(out, raw, strlen(raw) + 1);
    return 1;
  }
  size_t k = 0, lim = cap - 1 < 255 ? cap - 1 : 255;
  for (const unsigned char *u = (const unsigned char *)raw; *u && k < lim; u++) {
    if (*u >= 0x20 && *u < 0x7F && *u != '\\') {
      out[k++] = (char)*u;
    } else {
      if (k + 4 > lim) break;
      snprintf(out + k, 5, "\\x%02X", *u);
      k += 4;
    }
  }
  if (!k) out[k++] = '?'; /* the quarantine's IDs are never empty */
  out[k] = 0;
  return 0;
}

int adcp_import__quarantine_insert(adcp_sql_conn *dst, adcp_import_source s, const char *revision_id,
                                   const char *account_id, const char *check, const char *message, adcp_error *err) {
  char m[512];
  snprintf(m, sizeof m, "%s", message);
  adcp_sql_param p[5] = {adcp_sql_text(revision_id), adcp_sql_text(adcp_import_source_name(s)),
                         adcp_sql_text(account_id), adcp_sql_text(check), adcp_sql_text(m)};
  return adcp_sql_exec(dst,
                       "INSERT INTO adcp_legacy_import_quarantine (revision_id, source, account_id, failed_check, "
                       "message) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (revision_id) DO NOTHING",
                       p, 5, err);
}

int adcp_import__dst_state(int *present, int *quarantined, int *collision, adcp_sql_conn *dst, const char *account_id,
                           const char *revision_id, adcp_error *err) {
  adcp_sql_param p = adcp_sql_text(revision_id);
  char owner[ADCP_LEDGER_ID_MAX] = "";
  int found = 0;
  *present = *quarantined = *collision = 0;
  /* (account, revision), never the ID alone: another account's revision of
   * the same ID is a collision, not this legacy revision migrated. */
  int rc = adcp_sql_query_text(owner, sizeof owner, &found, dst,
                               "SELECT account_id FROM adcp_reporting_revisions WHERE revision_id = $1", &p, 1, err);
  if (!rc && found) *present = !strcmp(owner, account_id), *collision = !*present;
  char one[8];
  if (!rc)
    rc = adcp_sql_query_text(one, sizeof one, quarantined, dst,
                             "SELECT 1 FROM adcp_legacy_import_quarantine WHERE revision_id = $1", &p, 1, err);
  return rc;
}
