/* tests/import/legacy_build.c — room tests/import: the definitions behind legacy_build.h,
 * compiled once into the test library. */
#include "legacy_build.h"

const char *const lb_check_names[] = {"", "digest", "byte_count", "row_count", "unparsable_row"};
int lb_tamper_kind(const lb_spec *s, uint64_t i) {
  if (!s->tamper_every || i % (uint64_t)s->tamper_every != (uint64_t)s->tamper_every / 3) return LB_TAMPER_NONE;
  return 1 + (int)((i / (uint64_t)s->tamper_every) % 4);
}

void lb_ids(const lb_spec *s, uint64_t i, char rev[64], char obl[64], char acct[32]) {
  snprintf(rev, 64, "rrev_%06" PRIu64, i);
  snprintf(obl, 64, "obl_%06" PRIu64, i / (s->revisions_per_obligation ? s->revisions_per_obligation : 1));
  uint64_t accounts = s->accounts ? s->accounts : 1;
  snprintf(acct, 32, "acct_%" PRIu64, (i / (s->revisions_per_obligation ? s->revisions_per_obligation : 1)) % accounts);
}

void lb_row(adcp_buf *b, const lb_spec *s, uint64_t i, uint64_t j) {
  adcp_buf_reset(b);
  adcp_buf_printf(b,
                  "{ \"spend\": \"%" PRIu64 ".25\", \"impressions\": %" PRIu64
                  ", \"ratio\": 1.0, \"cap\": 2e3, "
                  "\"date\": \"2026-10-%02d\", \"nested\": {\"z\": [true, null, -0.5], \"a\": \"r%" PRIu64 "\"}",
                  i + j, i * 7 + j, (int)(1 + j % 28), j);
  if (s->pad) {
    adcp_buf_append_str(b, ", \"pad\": \"");
    for (size_t k = 0; k < s->pad; k++) adcp_buf_append_byte(b, (uint8_t)('a' + (i + j + k) % 26));
    adcp_buf_append_byte(b, '"');
  }
  adcp_buf_append_str(b, " }");
  adcp_buf_cstr(b);
}

const char lb_totals[] = "[{\"name\":\"impressions\",\"value\":\"10\",\"value_type\":\"integer\"}]";
int lb_chunk_sink(void *ctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  (void)m, (void)err;
  return adcp_buf_append((adcp_buf *)ctx, body, len) ? ADCP_ENOMEM : 0;
}

int lb_binding_of(lb_binding *out, adcp_buf *canon, const lb_spec *s, uint64_t i, adcp_error *err) {
  char rev[64], obl[64], acct[32];
  lb_ids(s, i, rev, obl, acct);
  adcp_control_totals t = {0};
  int rc = adcp_totals_parse(&t, lb_totals, strlen(lb_totals), err);
  if (rc) return rc;
  adcp_rows_encoder_options eo = {ADCP_PROFILE_REVISION_ENVELOPE_V1, rev,  &t, ADCP_BINDING_RFC8785_JCS_V1,
                                  canon ? lb_chunk_sink : NULL,      canon};
  adcp_rows_encoder *enc = NULL;
  adcp_buf row;
  adcp_buf_init(&row);
  if (canon) adcp_buf_reset(canon);
  rc = adcp_rows_encoder_new(&enc, &eo, err);
  for (uint64_t j = 0; !rc && j < s->rows_per_revision; j++) {
    lb_row(&row, s, i, j);
    rc = adcp_rows_encoder_add_json(enc, (const char *)row.data, row.len, err);
  }
  adcp_rows_result res;
  if (!rc) rc = adcp_rows_encoder_finish(enc, &res, err);
  adcp_rows_encoder_free(enc);
  adcp_buf_free(&row);
  adcp_totals_free(&t);
  if (rc) return rc;
  snprintf(out->sha256, sizeof out->sha256, "%s", res.content_sha256);
  out->bytes = res.canonical_byte_count, out->rows = res.row_count;
  return 0;
}

int lb_schema(adcp_sql_conn *c, adcp_import_source src, adcp_error *err) {
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  const char *ts = pg ? "TIMESTAMPTZ" : "TEXT", *js = pg ? "JSONB" : "TEXT";
  char sql[2400];
  if (src == ADCP_IMPORT_JS_INLINE)
    snprintf(sql, sizeof sql,
             "CREATE TABLE adcp_reporting_obligations (obligation_id TEXT PRIMARY KEY, configuration_id TEXT NOT "
             "NULL, account_id TEXT NOT NULL, period_ordinal BIGINT NOT NULL, period_start %s NOT NULL, period_end %s "
             "NOT NULL, lease_owner TEXT NULL, lease_generation BIGINT NOT NULL DEFAULT 0, lease_expires_at %s NULL, "
             "created_at %s NOT NULL, state TEXT NOT NULL, UNIQUE (configuration_id, period_ordinal));"
             "CREATE TABLE adcp_reporting_revisions (revision_id TEXT PRIMARY KEY, obligation_id TEXT NOT NULL "
             "REFERENCES adcp_reporting_obligations (obligation_id), revision_number INTEGER NOT NULL, finality TEXT "
             "NOT NULL CHECK (finality IN ('snapshot', 'official')), kind TEXT NOT NULL, content_sha256 TEXT NOT "
             "NULL, data %s NOT NULL, recorded_at %s NOT NULL, UNIQUE (obligation_id, revision_number));",
             ts, ts, ts, ts, js, ts);
  else
    snprintf(sql, sizeof sql,
             "CREATE TABLE reporting_revisions (reporting_revision_id TEXT PRIMARY KEY, reporting_obligation_id TEXT "
             "NOT NULL, account_id TEXT NOT NULL, period_start %s NOT NULL, period_end %s NOT NULL, revision_number "
             "INTEGER NOT NULL, finality TEXT NOT NULL, binding_algorithm TEXT NULL, revision_content_sha256 TEXT NOT "
             "NULL, canonical_byte_count BIGINT NOT NULL, row_count BIGINT NOT NULL, control_totals %s NOT NULL, "
             "recorded_at %s NOT NULL, UNIQUE (reporting_obligation_id, revision_number));"
             "CREATE TABLE reporting_revision_rows (reporting_revision_id TEXT NOT NULL REFERENCES "
             "reporting_revisions (reporting_revision_id), ordinal INTEGER NOT NULL, row_payload %s NOT NULL, "
             "PRIMARY KEY (reporting_revision_id, ordinal));",
             ts, ts, js, ts, js);
  return adcp_sql_exec_script(c, sql, err);
}

void lb_instant(char out[40], uint64_t seconds) {
  /* 2026-01-01 plus seconds, microseconds fixed, so order = index order. */
  uint64_t d = seconds / 86400, r = seconds % 86400;
  snprintf(out, 40, "2026-%02d-%02dT%02d:%02d:%02d.000123Z", (int)(1 + (d / 28) % 12), (int)(1 + d % 28),
           (int)(r / 3600), (int)(r / 60 % 60), (int)(r % 60));
}

int lb_build(adcp_sql_conn *c, const lb_spec *s, adcp_error *err) {
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  int rc = lb_schema(c, s->source, err);
  if (rc) return rc;
  if ((rc = adcp_sql_begin(c, 1, err))) return rc;
  adcp_buf rows, row, doc;
  adcp_buf_init(&rows), adcp_buf_init(&row), adcp_buf_init(&doc);
  uint64_t per = s->revisions_per_obligation ? s->revisions_per_obligation : 1;
  for (uint64_t i = 0; !rc && i < s->revisions; i++) {
    char rev[64], obl[64], acct[32], at[40], ps[40], pe[40];
    lb_ids(s, i, rev, obl, acct);
    lb_instant(at, 100000 + i * 3);
    uint64_t o = i / per;
    snprintf(ps, sizeof ps, "2026-%02d-%02dT00:00:00Z", (int)(1 + (o / 28) % 12), (int)(1 + o % 28));
    snprintf(pe, sizeof pe, "2026-%02d-%02dT23:59:59Z", (int)(1 + (o / 28) % 12), (int)(1 + o % 28));
    lb_binding b;
    if ((rc = lb_binding_of(&b, NULL, s, i, err))) break;
    int kind = lb_tamper_kind(s, i);
    if (kind == LB_TAMPER_BYTES) b.bytes += 1;
    if (kind == LB_TAMPER_ROWS) b.rows += 1;
    /* The rows as one JSON array text (tampered after the binding was taken). */
    adcp_buf_reset(&rows);
    adcp_buf_append_byte(&rows, '[');
    for (uint64_t j = 0; j < s->rows_per_revision; j++) {
      lb_row(&row, s, i, j);
      if (j) adcp_buf_append_byte(&rows, ',');
      if (j == 0 && kind == LB_TAMPER_DIGEST) {
        /* Same length, one digit changed: only the digest can tell. */
        char *p = strstr((char *)row.data, "\"impressions\": ");
        p += strlen("\"impressions\": ");
        *p = *p == '9' ? '8' : (char)(*p + 1);
      }
      if (j == 0 && kind == LB_TAMPER_UNPARSABLE) adcp_buf_append_str(&rows, "[\"not\", \"an object\"]");
      else adcp_buf_append(&rows, row.data, row.len);
    }
    adcp_buf_append_byte(&rows, ']');
    adcp_buf_cstr(&rows);
    char bytes_s[24], rows_s[24];
    snprintf(bytes_s, sizeof bytes_s, "%" PRIu64, b.bytes);
    snprintf(rows_s, sizeof rows_s, "%" PRIu64, b.rows);
    int64_t number = (int64_t)(i % per) + 1;
    if (s->source == ADCP_IMPORT_PY_INLINE) {
      adcp_sql_param p[12] = {adcp_sql_text(rev),
                              adcp_sql_text(obl),
                              adcp_sql_text(acct),
                              adcp_sql_text(ps),
                              adcp_sql_text(pe),
                              adcp_sql_int64(number),
                              adcp_sql_text(b.sha256),
                              adcp_sql_int64((int64_t)b.bytes),
                              adcp_sql_int64((int64_t)b.rows),
                              adcp_sql_text(lb_totals),
                              adcp_sql_text(at),
                              adcp_sql_text("rfc8785_jcs_v1")};
      rc = adcp_sql_exec(c,
                         "INSERT INTO reporting_revisions (reporting_revision_id, reporting_obligation_id, account_id, "
                         "period_start, period_end, revision_number, finality, binding_algorithm, "
                         "revision_content_sha256, canonical_byte_count, row_count, control_totals, recorded_at) "
                         "VALUES ($1, $2, $3, $4, $5, $6, 'snapshot', $12, $7, $8, $9, $10, $11)",
                         p, 12, err);
      adcp_sql_param q[2] = {adcp_sql_text(rev), adcp_sql_textn((const char *)rows.data, rows.len)};
      if (!rc)
        rc = adcp_sql_exec(c,
                           pg ? "INSERT INTO reporting_revision_rows (reporting_revision_id, ordinal, row_payload) "
                                "SELECT $1, e.ord - 1, e.value FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY "
                                "AS e(value, ord)"
                              : "INSERT INTO reporting_revision_rows (reporting_revision_id, ordinal, row_payload) "
                                "SELECT $1, e.key, e.value FROM json_each($2) e",
                           q, 2, err);
    } else {
      if (i % per == 0) {
        char ord[24];
        snprintf(ord, sizeof ord, "%" PRIu64, o);
        adcp_sql_param p[5] = {adcp_sql_text(obl), adcp_sql_text(acct), adcp_sql_int64((int64_t)o), adcp_sql_text(ps),
                               adcp_sql_text(pe)};
        rc = adcp_sql_exec(c,
                           "INSERT INTO adcp_reporting_obligations (obligation_id, configuration_id, account_id, "
                           "period_ordinal, period_start, period_end, created_at, state) VALUES ($1, 'cfg_' || $1, $2, "
                           "$3, $4, $5, $4, 'pending')",
                           p, 5, err);
      }
      adcp_buf_reset(&doc);
      adcp_buf_printf(&doc, "{\"reporting_obligation_id\":\"%s\",\"finality\":\"snapshot\",\"rows\":", obl);
      adcp_buf_append(&doc, rows.data, rows.len);
      adcp_buf_printf(&doc,
                      ",\"binding\":{\"algorithm\":\"rfc8785_jcs_v1\",\"sha256\":\"%s\",\"byteCount\":%s,"
                      "\"rowCount\":%s},\"wireRevision\":{\"control_totals\":%s}}",
                      b.sha256, bytes_s, rows_s, lb_totals);
      adcp_buf_cstr(&doc);
      adcp_sql_param p[6] = {adcp_sql_text(rev),
                             adcp_sql_text(obl),
                             adcp_sql_int64(number),
                             adcp_sql_text(b.sha256),
                             adcp_sql_textn((const char *)doc.data, doc.len),
                             adcp_sql_text(at)};
      if (!rc)
        rc = adcp_sql_exec(c,
                           "INSERT INTO adcp_reporting_revisions (revision_id, obligation_id, revision_number, "
                           "finality, kind, content_sha256, data, recorded_at) VALUES ($1, $2, $3, 'snapshot', "
                           "'revision', $4, $5, $6)",
                           p, 6, err);
    }
  }
  adcp_buf_free(&rows), adcp_buf_free(&row), adcp_buf_free(&doc);
  if (!rc) rc = adcp_sql_commit(c, err);
  else adcp_sql_rollback(c, NULL);
  return rc;
}
