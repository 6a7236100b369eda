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
#include "core/instant.h"

#define OPENSSL_SUPPRESS_DEPRECATED /* low-level SHA-256: see auditlog/merkle.c */
#include <openssl/sha.h>

/* The header columns (auditlog/header_columns.h) as the audit reads them, for
 * a SELECT joining revisions r, obligations o and the row set s at
 * coalesce(r.row_set_id, r.revision_id) (a header without row_set_id uses its
 * own ID, as the ledger reads it; one index probe per header, where two joins
 * and a coalesce of their columns took two). W is the dialect's wrapper of an
 * instant. Each column is written after ", ": the lists are used from their
 * third byte. */
#define SEL_r(W, n) W("r." n)
#define SEL_o(W, n) W("o." n)
#define SEL_s(W, n) W("s." n)
#define X_SEL_PG(t, n, kind, nulls, member) ", " SEL_##t(ADCP_AUDITLOG_PG_##kind, #n)
#define X_SEL_PG_ISO(t, n, kind, nulls, member) ", " SEL_##t(ADCP_AUDITLOG_PG_ISO_##kind, #n)
#define X_SEL_SQLITE(t, n, kind, nulls, member) ", " SEL_##t(ADCP_AUDITLOG_SQLITE, #n)

static const char COLS_PG[] = ADCP_AUDITLOG_HEADER_COLUMNS(X_SEL_PG) " ";
static const char COLS_PG_ISO[] = ADCP_AUDITLOG_HEADER_COLUMNS(X_SEL_PG_ISO) " ";
static const char COLS_SQLITE[] = ADCP_AUDITLOG_HEADER_COLUMNS(X_SEL_SQLITE) " ";

/* Raw timestamps only where the session's DateStyle makes their text ISO
 * (the server reports it; a session SET again is seen here too). */
const char *adcp_auditlog__header_cols(const adcp_sql_conn *c) {
  if (adcp_sql_dialect_of(c) != ADCP_SQL_POSTGRES) return COLS_SQLITE + 2;
  const char *ds = adcp_sql_server_setting(c, "DateStyle");
  return (ds && !strncmp(ds, "ISO", 3) ? COLS_PG_ISO : COLS_PG) + 2;
}

/* The same columns from an INSERT's RETURNING (the new row is named by its
 * table; obligations and row sets by subqueries), then the log's next leaf:
 * the values the audit will read back, as the engine stored them. */
#define RV "adcp_reporting_revisions."
#define RET_r(W, n) W(RV n)
#define RET_o(W, n) \
  "(SELECT " W("o." n) " FROM adcp_reporting_obligations o WHERE o.obligation_id = " RV "obligation_id)"
#define RET_s(W, n) \
  "coalesce((SELECT " W("s." n) " FROM adcp_reporting_row_sets s WHERE s.row_set_id = " RV "row_set_id), CASE " \
  "WHEN " RV "row_set_id IS NULL THEN (SELECT " W("s2." n) " FROM adcp_reporting_row_sets s2 WHERE "             \
  "s2.row_set_id = " RV "revision_id) END)"
#define X_RET_PG(t, n, kind, nulls, member) ", " RET_##t(ADCP_AUDITLOG_PG_##kind, #n)
#define X_RET_SQLITE(t, n, kind, nulls, member) ", " RET_##t(ADCP_AUDITLOG_SQLITE, #n)

static const char RET_PG[] = ADCP_AUDITLOG_HEADER_COLUMNS(X_RET_PG) ", " AUDIT_NEXT_LEAF(RV "account_id");
static const char RET_SQLITE[] = ADCP_AUDITLOG_HEADER_COLUMNS(X_RET_SQLITE) ", " AUDIT_NEXT_LEAF(RV "account_id");

const char *adcp_audit_header_returning(adcp_sql_dialect d) {
  return (d == ADCP_SQL_POSTGRES ? RET_PG : RET_SQLITE) + 2;
}

/* The object's members in RFC 8785 order (UTF-16 code units; every name is
 * ASCII): each column at its MEMBER place, and the constant profile. */
enum { M_TEXT, M_INSTANT, M_INT, M_JSON, M_PROFILE };
#define X_MEMBER(t, n, kind, nulls, member) [member] = {#n, ADCP_AUDITLOG_COL_##n, M_##kind},
static const struct member {
  const char *name;
  int col;
  int kind;
} MEMBERS[] = {ADCP_AUDITLOG_HEADER_COLUMNS(X_MEMBER)[ADCP_AUDITLOG_PROFILE_MEMBER] = {"profile", -1, M_PROFILE}};
/* With -Woverride-init (an error here) no place is taken twice; with the
 * count, every place 0..NCOLS is taken once. */
_Static_assert(sizeof MEMBERS / sizeof MEMBERS[0] == ADCP_AUDITLOG_HEADER_NCOLS + 1, "a member place is missing");

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

/* An instant: on PostgreSQL a raw timestamp's ISO text (COLS_PG_ISO) is
 * rewritten as to_char would have written it, infinity as to_char's NULL;
 * to_char's own text (RETURNING, COLS_PG), SQLite's and a values row's
 * pass as they are. */
static int instant_or_null(adcp_buf *b, adcp_sql_rows *r, int col) {
  if (adcp_sql_is_null(r, col)) return adcp_buf_append_str(b, "null");
  size_t n = 0, m = 0;
  const char *s = adcp_sql_get_text(r, col, &n);
  if (!s) s = "", n = 0;
  const int pg = adcp_sql_rows_dialect(r) == ADCP_SQL_POSTGRES;
  if (pg && n > 10 && s[10] != 'T') {
    char t[32];
    if (!adcp_core_instant_from_pg_iso(t, &m, s, n)) return adcp_jcs_write_string(b, t, m);
  }
  if (pg && ((n == 8 && !memcmp(s, "infinity", 8)) || (n == 9 && !memcmp(s, "-infinity", 9))))
    return adcp_buf_append_str(b, "null");
  return adcp_jcs_write_string(b, s, n);
}

/* The control totals, re-canonicalised. */
static int totals(adcp_buf *b, adcp_sql_rows *r, int col, adcp_json_doc *doc) {
  size_t tn = 0;
  const char *t = adcp_sql_get_text(r, col, &tn);
  adcp_json_options jo = {0, 1};
  adcp_error e2 = {0};
  if (t && tn == 2 && t[0] == '[' && t[1] == ']') return adcp_buf_append(b, "[]", 2); /* the common case, no parse */
  /* Not JSON any more: hash the stored text as a string, so the digest
   * still differs from the committed one (the audit reports it). */
  if (!t || adcp_json_parse(doc, t, tn, &jo, &e2) || adcp_json_at(doc, 0)->type != ADCP_JSON_ARRAY)
    return adcp_jcs_write_string(b, t ? t : "", t ? tn : 0);
  return adcp_jcs_write(b, doc, 0);
}

int adcp_auditlog__header_write(adcp_buf *b, adcp_sql_rows *r, int c, adcp_json_doc *doc, adcp_error *err) {
  int rc = adcp_buf_append_byte(b, '{');
  for (size_t i = 0; !rc && i < sizeof MEMBERS / sizeof MEMBERS[0]; i++) {
    const struct member *m = &MEMBERS[i];
    if ((rc = key(b, m->name, i == 0))) break;
    switch (m->kind) {
    case M_PROFILE: rc = adcp_jcs_write_string(b, ADCP_AUDIT_HEADER_PROFILE, strlen(ADCP_AUDIT_HEADER_PROFILE)); break;
    case M_INT: rc = int_or_null(b, r, c + m->col); break;
    case M_JSON: rc = totals(b, r, c + m->col, doc); break;
    case M_INSTANT: rc = instant_or_null(b, r, c + m->col); break;
    default: rc = str_or_null(b, r, c + m->col); break;
    }
  }
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
