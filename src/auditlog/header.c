/* auditlog/header.c — room auditlog: the header digest (profile adcp-header-v1, docs/trust.md):
 * header_sha256 = SHA-256 of the RFC 8785 object of every header field of a
 * stored revision, read with one SELECT so the commit path (inside its
 * transaction) and the audit (later) hash exactly the same columns the same
 * way. Instants are the engine's normalised UTC text; control totals are
 * re-canonicalised (PostgreSQL may store them reformatted). rows_state is
 * left out: retention moves it (live → pruned) without changing history. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "auditlog/internal.h"

#define OPENSSL_SUPPRESS_DEPRECATED /* low-level SHA-256: see auditlog/merkle.c */
#include <openssl/sha.h>

#define COLS(OBS, REC, PS, PE) \
  "r.revision_id, r.obligation_id, r.account_id, r.revision_number, r.finality, r.supersedes_revision_id, " \
  "r.binding_algorithm, r.revision_content_sha256, r.canonical_byte_count, r.row_count, r.control_totals, " \
  "r.row_manifest_sha256, r.rows_shared_from_revision_id, " OBS ", " REC ", " PS ", " PE \
  ", " \
  "o.configuration_id, o.period_ordinal, coalesce(s.chunk_count, CASE WHEN r.row_set_id IS NULL THEN s2.chunk_count END) "

static const char COLS_PG[] = COLS(ADCP_SQL_PG_INSTANT("r.observed_at"), ADCP_SQL_PG_INSTANT("r.recorded_at"),
                                   ADCP_SQL_PG_INSTANT("o.period_start"), ADCP_SQL_PG_INSTANT("o.period_end"));
static const char COLS_SQLITE[] = COLS("r.observed_at", "r.recorded_at", "o.period_start", "o.period_end");

const char *adcp_auditlog__header_cols(adcp_sql_dialect d) { return d == ADCP_SQL_POSTGRES ? COLS_PG : COLS_SQLITE; }

/* The same 20 columns from an INSERT's RETURNING (the new row is named by its
 * table; obligations and row sets by subqueries), then the log's next leaf:
 * the values the audit will read back, as the engine stored them. */
#define RV "adcp_reporting_revisions."
#define OB(col) "(SELECT " col " FROM adcp_reporting_obligations o WHERE o.obligation_id = " RV "obligation_id)"
#define RCOLS(OBS, REC, PS, PE) \
  RV "revision_id, " RV "obligation_id, " RV "account_id, " RV "revision_number, " RV "finality, "              \
  RV "supersedes_revision_id, " RV "binding_algorithm, " RV "revision_content_sha256, " RV "canonical_byte_count, " \
  RV "row_count, " RV "control_totals, " RV "row_manifest_sha256, " RV "rows_shared_from_revision_id, " OBS ", "  \
  REC ", " OB(PS) ", " OB(PE) ", " OB("o.configuration_id") ", " OB("o.period_ordinal") ", "                     \
  "coalesce((SELECT s.chunk_count FROM adcp_reporting_row_sets s WHERE s.row_set_id = " RV "row_set_id), CASE "  \
  "WHEN " RV "row_set_id IS NULL THEN (SELECT s2.chunk_count FROM adcp_reporting_row_sets s2 WHERE "             \
  "s2.row_set_id = " RV "revision_id) END), " AUDIT_NEXT_LEAF(RV "account_id")

static const char RET_PG[] = RCOLS(ADCP_SQL_PG_INSTANT(RV "observed_at"), ADCP_SQL_PG_INSTANT(RV "recorded_at"),
                                   ADCP_SQL_PG_INSTANT("o.period_start"), ADCP_SQL_PG_INSTANT("o.period_end"));
static const char RET_SQLITE[] = RCOLS(RV "observed_at", RV "recorded_at", "o.period_start", "o.period_end");

const char *adcp_audit_header_returning(adcp_sql_dialect d) { return d == ADCP_SQL_POSTGRES ? RET_PG : RET_SQLITE; }

/* Member names are ASCII without escapes: written as they are. */
static int key(adcp_buf *b, const char *k, int first) {
  size_t n = strlen(k);
  if (adcp_buf_reserve(b, n + 4)) return ADCP_ENOMEM;
  uint8_t *p = b->data + b->len;
  if (!first) *p++ = ',';
  *p++ = '"';
  memcpy(p, k, n);
  p += n;
  *p++ = '"';
  *p++ = ':';
  b->len = (size_t)(p - b->data);
  return 0;
}

static int str_or_null(adcp_buf *b, adcp_sql_rows *r, int col) {
  if (adcp_sql_is_null(r, col)) return adcp_buf_append_str(b, "null");
  size_t n = 0;
  const char *s = adcp_sql_get_text(r, col, &n);
  return adcp_jcs_write_string(b, s ? s : "", s ? n : 0);
}

static int int_or_null(adcp_buf *b, adcp_sql_rows *r, int col) {
  if (adcp_sql_is_null(r, col)) return adcp_buf_append_str(b, "null");
  char t[24], *e = t + sizeof t, *q = e;
  int64_t v = adcp_sql_get_int64(r, col);
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do *--q = (char)('0' + u % 10);
  while (u /= 10);
  if (v < 0) *--q = '-';
  return adcp_buf_append(b, q, (size_t)(e - q));
}

int adcp_auditlog__header_write(adcp_buf *b, adcp_sql_rows *r, int c, adcp_json_doc *doc, adcp_error *err) {
  int rc = adcp_buf_append_byte(b, '{');
  /* Members in RFC 8785 order (UTF-16 code units; every key is ASCII). */
  if (!rc) rc = key(b, "account_id", 1) || str_or_null(b, r, c + 2);
  if (!rc) rc = key(b, "binding_algorithm", 0) || str_or_null(b, r, c + 6);
  if (!rc) rc = key(b, "canonical_byte_count", 0) || int_or_null(b, r, c + 8);
  if (!rc) rc = key(b, "chunk_count", 0) || int_or_null(b, r, c + 19);
  if (!rc) rc = key(b, "configuration_id", 0) || str_or_null(b, r, c + 17);
  if (!rc) rc = key(b, "control_totals", 0);
  if (rc) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  size_t tn = 0;
  const char *t = adcp_sql_get_text(r, c + 10, &tn);
  adcp_json_options jo = {0, 1};
  adcp_error e2 = {0};
  if (t && tn == 2 && t[0] == '[' && t[1] == ']') {
    rc = adcp_buf_append(b, "[]", 2); /* the common case, without a parse */
  } else if (!t || adcp_json_parse(doc, t, tn, &jo, &e2) || adcp_json_at(doc, 0)->type != ADCP_JSON_ARRAY) {
    /* Not JSON any more: hash the stored text as a string, so the digest
     * still differs from the committed one (the audit reports it). */
    rc = adcp_jcs_write_string(b, t ? t : "", t ? tn : 0);
  } else {
    rc = adcp_jcs_write(b, doc, 0);
  }
  if (!rc) rc = key(b, "finality", 0) || str_or_null(b, r, c + 4);
  if (!rc) rc = key(b, "obligation_id", 0) || str_or_null(b, r, c + 1);
  if (!rc) rc = key(b, "observed_at", 0) || str_or_null(b, r, c + 13);
  if (!rc) rc = key(b, "period_end", 0) || str_or_null(b, r, c + 16);
  if (!rc) rc = key(b, "period_ordinal", 0) || int_or_null(b, r, c + 18);
  if (!rc) rc = key(b, "period_start", 0) || str_or_null(b, r, c + 15);
  if (!rc)
    rc = key(b, "profile", 0) || adcp_jcs_write_string(b, ADCP_AUDIT_HEADER_PROFILE, strlen(ADCP_AUDIT_HEADER_PROFILE));
  if (!rc) rc = key(b, "recorded_at", 0) || str_or_null(b, r, c + 14);
  if (!rc) rc = key(b, "revision_content_sha256", 0) || str_or_null(b, r, c + 7);
  if (!rc) rc = key(b, "revision_id", 0) || str_or_null(b, r, c + 0);
  if (!rc) rc = key(b, "revision_number", 0) || int_or_null(b, r, c + 3);
  if (!rc) rc = key(b, "row_count", 0) || int_or_null(b, r, c + 9);
  if (!rc) rc = key(b, "row_manifest_sha256", 0) || str_or_null(b, r, c + 11);
  if (!rc) rc = key(b, "rows_shared_from_revision_id", 0) || str_or_null(b, r, c + 12);
  if (!rc) rc = key(b, "supersedes_revision_id", 0) || str_or_null(b, r, c + 5);
  if (!rc) rc = adcp_buf_append_byte(b, '}');
  if (rc) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

int adcp_auditlog__header_digest(char out[65], adcp_buf *scratch, adcp_sql_rows *r, int col0, adcp_json_doc *doc,
                                 adcp_error *err) {
  adcp_buf_reset(scratch);
  int rc = adcp_auditlog__header_write(scratch, r, col0, doc, err);
  if (rc) return rc;
  uint8_t d[32];
  SHA256_CTX c;
  SHA256_Init(&c);
  SHA256_Update(&c, scratch->data ? scratch->data : (const uint8_t *)"", scratch->len);
  SHA256_Final(d, &c);
  adcp_hex_encode(out, d, 32);
  return 0;
}
