/* auditlog/log.c — room auditlog (below the ledger; uses sql, json, core):
 * appending a leaf (revision or retirement record) of the per-account log
 * with the complete subtree hashes it closes, and the revision append fed
 * the header row the ledger's INSERT returned. Appends run inside the
 * caller's transaction under the account lock, so leaf order is commit order
 * and a leaf never outlives (or precedes) the record it logs. The tree head,
 * proofs and the audit read the log from the audit room above. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auditlog/internal.h"

#define ACCOUNT_LOCK_PREFIX "adcp-reporting-account:" /* the ledger's (JS) key, spec 02 §7.1 */

void adcp_auditlog__to_hex(char out[65], const uint8_t in[32]) { adcp_hex_encode(out, in, 32); }

static int nibble(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* On the audit's per-leaf path: a table-free decoder without the generic one's checks. */
int adcp_auditlog__hex32(uint8_t out[32], const char *hex, adcp_error *err) {
  if (!hex) return adcp_error_set(err, ADCP_EINVALID_INPUT, "not a 64-character hex digest");
  for (int i = 0; i < 32; i++) {
    int hi = nibble(hex[2 * i]), lo = hi < 0 ? -1 : nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "not a 64-character hex digest");
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  if (hex[64]) return adcp_error_set(err, ADCP_EINVALID_INPUT, "not a 64-character hex digest");
  return 0;
}

int adcp_auditlog__lock_account(adcp_sql_conn *conn, const char *account_id, adcp_error *err) {
  int rc = 0;
  adcp_buf key;
  adcp_buf_init(&key);
  if (!rc &&
      (adcp_buf_append_str(&key, ACCOUNT_LOCK_PREFIX) || adcp_buf_append_str(&key, account_id) || adcp_buf_cstr(&key)))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) rc = adcp_sql_advisory_xact_lock_wait(conn, (const char *)key.data, 5000, err);
  adcp_buf_free(&key);
  return rc;
}

/* One stored hash: level 0 = a leaf hash, else a closed node. */
int adcp_auditlog__stored_hash(uint8_t out[32], int *found, adcp_sql_conn *conn, const char *account, unsigned level,
                               uint64_t idx, adcp_error *err) {
  adcp_sql_param p[3] = {adcp_sql_text(account), adcp_sql_int64((int64_t)idx), adcp_sql_int64((int64_t)level)};
  char hex[80];
  int rc = level == 0 ? adcp_sql_query_text(hex, sizeof hex, found, conn,
                                            "SELECT leaf_hash FROM adcp_audit_log_leaves WHERE account_id = $1 AND "
                                            "leaf_index = $2",
                                            p, 2, err)
                      : adcp_sql_query_text(hex, sizeof hex, found, conn,
                                            "SELECT hash FROM adcp_audit_log_nodes WHERE account_id = $1 AND "
                                            "node_index = $2 AND level = $3",
                                            p, 3, err);
  if (rc || !*found) return rc;
  if (adcp_auditlog__hex32(out, hex, err))
    return adcp_error_set(err, ADCP_EINTEGRITY_FAILED, "stored log hash at level %u index %" PRIu64 " is not a digest",
                          level, idx);
  return 0;
}

int adcp_auditlog__log_size(uint64_t *n, adcp_sql_conn *conn, const char *account, adcp_error *err) {
  adcp_sql_param p = adcp_sql_text(account);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, conn, "SELECT " AUDIT_NEXT_LEAF("$1"), &p, 1, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  *n = rc == 1 ? (uint64_t)adcp_sql_get_int64(r, 0) : 0;
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

/* PostgreSQL: the leaf and every node it closes in one statement (one round
 * trip instead of one per level); node hashes are computed by the server's
 * sha256() exactly as adcp_merkle_node_hash does, and the audit recomputes
 * them from the leaves. */
static const char APPEND_PG[] =
    "WITH RECURSIVE ins AS (INSERT INTO adcp_audit_log_leaves (account_id, leaf_index, entry_kind, entry_id, "
    "obligation_id, entry_profile, entry_sha256, leaf_hash, entry_document) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
    "RETURNING 1), chain(level, idx, hash) AS (SELECT 0, $2::bigint, $8::text UNION ALL SELECT c.level + 1, c.idx / 2, "
    "encode(sha256('\\x01'::bytea || decode(s.hash, 'hex') || decode(c.hash, 'hex')), 'hex') FROM chain c CROSS JOIN "
    "LATERAL (SELECT leaf_hash AS hash FROM adcp_audit_log_leaves WHERE c.level = 0 AND account_id = $1 AND "
    "leaf_index = c.idx - 1 UNION ALL SELECT hash FROM adcp_audit_log_nodes WHERE c.level > 0 AND account_id = $1 "
    "AND level = c.level AND node_index = c.idx - 1) s WHERE c.idx % 2 = 1) "
    "INSERT INTO adcp_audit_log_nodes (account_id, level, node_index, hash) SELECT $1, level, idx, hash FROM chain "
    "WHERE level > 0";

int adcp_auditlog__append_leaf(uint64_t *leaf_index, adcp_sql_conn *conn, const char *account_id, const char *kind,
                               const char *entry_id, const char *obligation_id, const char *profile,
                               const char entry_sha256[65], const char *document, int64_t known_size, adcp_error *err) {
  uint64_t i = (uint64_t)known_size;
  int rc = known_size < 0 ? adcp_auditlog__log_size(&i, conn, account_id, err) : 0;
  if (rc) return rc;
  uint8_t digest[32], cur[32];
  if ((rc = adcp_auditlog__hex32(digest, entry_sha256, err))) return rc;
  adcp_merkle_leaf_hash(cur, digest, 32);
  char hex[65];
  adcp_auditlog__to_hex(hex, cur);
  adcp_sql_param p[8] = {adcp_sql_text(account_id),
                         adcp_sql_int64((int64_t)i),
                         adcp_sql_text(kind),
                         adcp_sql_text(entry_id),
                         obligation_id ? adcp_sql_text(obligation_id) : adcp_sql_null(),
                         adcp_sql_text(profile),
                         adcp_sql_text(entry_sha256),
                         adcp_sql_text(hex)};
  adcp_sql_param p9[9];
  memcpy(p9, p, sizeof p);
  p9[8] = document ? adcp_sql_text(document) : adcp_sql_null();
  if (adcp_sql_dialect_of(conn) == ADCP_SQL_POSTGRES) {
    unsigned closes = 0;
    for (uint64_t t = i; t & 1; t >>= 1) closes++;
    int64_t nodes = 0;
    rc = adcp_sql_exec_changes(&nodes, conn, APPEND_PG, p9, 9, err);
    if (rc == ADCP_ECONFLICT)
      return adcp_error_set(err, ADCP_ECONFLICT, "audit log leaf %" PRIu64 " of the account was taken; retry", i);
    if (!rc && nodes != (int64_t)closes)
      rc = adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                          "the account's log lacks a subtree hash below leaf %" PRIu64 "; run adcp-ledger audit", i);
    if (!rc && leaf_index) *leaf_index = i;
    return rc;
  }
  rc = adcp_sql_exec(conn,
                     "INSERT INTO adcp_audit_log_leaves (account_id, leaf_index, entry_kind, entry_id, obligation_id, "
                     "entry_profile, entry_sha256, leaf_hash, entry_document) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                     p9, 9, err);
  if (rc == ADCP_ECONFLICT) /* two appenders without the account lock */
    return adcp_error_set(err, ADCP_ECONFLICT, "audit log leaf %" PRIu64 " of the account was taken; retry", i);
  if (rc) return rc;
  /* Close every complete subtree that ends at leaf i: one node per trailing
   * one bit of i, each from its left sibling (stored) and the new right part. */
  uint64_t idx = i;
  for (unsigned level = 0; idx & 1; level++, idx >>= 1) {
    uint8_t left[32], node[32];
    int found = 0;
    if ((rc = adcp_auditlog__stored_hash(left, &found, conn, account_id, level, idx - 1, err))) return rc;
    if (!found)
      return adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                            "the account's log lacks the hash at level %u index %" PRIu64 "; run adcp-ledger audit",
                            level, idx - 1);
    adcp_merkle_node_hash(node, left, cur);
    memcpy(cur, node, 32);
    adcp_auditlog__to_hex(hex, cur);
    adcp_sql_param q[4] = {adcp_sql_text(account_id), adcp_sql_int64((int64_t)level + 1),
                           adcp_sql_int64((int64_t)(idx >> 1)), adcp_sql_text(hex)};
    if ((rc = adcp_sql_exec(
             conn, "INSERT INTO adcp_audit_log_nodes (account_id, level, node_index, hash) VALUES ($1, $2, $3, $4)", q,
             4, err)))
      return rc;
  }
  if (leaf_index) *leaf_index = i;
  return 0;
}

int adcp_audit_append_revision_row(uint64_t *leaf_index, adcp_sql_conn *conn, adcp_sql_rows *r, adcp_error *err) {
  adcp_buf obj;
  adcp_buf_init(&obj);
  char digest[65], account[256], obligation[256], revision[256];
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  int rc = adcp_auditlog__header_digest(digest, &obj, r, 0, &doc, err);
  adcp_json_doc_free(&doc);
  snprintf(revision, sizeof revision, "%s", adcp_sql_get_text(r, 0, NULL));
  snprintf(account, sizeof account, "%s", adcp_sql_get_text(r, 2, NULL));
  snprintf(obligation, sizeof obligation, "%s", adcp_sql_get_text(r, 1, NULL));
  int64_t size = adcp_sql_get_int64(r, ADCP_AUDITLOG_HEADER_NCOLS);
  /* The header object itself is the leaf's document: the log then holds
   * the logged period and recorded_at a retirement is judged by. */
  if (!rc && adcp_buf_cstr(&obj)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc)
    rc = adcp_auditlog__append_leaf(leaf_index, conn, account, "revision", revision, obligation,
                                    ADCP_AUDIT_HEADER_PROFILE, digest, (const char *)obj.data, size, err);
  adcp_buf_free(&obj);
  return rc;
}

/* ---- header and leaf in one statement (PostgreSQL, issue 32) ------------------ */

/* The public signature names the column count: it must follow the list. */
_Static_assert(ADCP_AUDITLOG_HEADER_NCOLS == 20, "adcp_audit_leaf_prepare takes the header columns");

int adcp_audit_leaf_prepare(adcp_audit_leaf *out, const adcp_sql_param header[20], adcp_error *err) {
  memset(out, 0, sizeof *out);
  adcp_buf_init(&out->document);
  adcp_sql_rows *r = NULL;
  int rc = adcp_sql_rows_from_values(&r, header, ADCP_AUDITLOG_HEADER_NCOLS, err);
  if (!rc && adcp_sql_next(r, err) != 1) rc = adcp_error_set(err, ADCP_EINTERNAL, "audit leaf: no header row");
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  if (!rc) rc = adcp_auditlog__header_digest(out->entry_sha256, &out->document, r, 0, &doc, err);
  adcp_json_doc_free(&doc);
  adcp_sql_rows_free(r);
  if (!rc && adcp_buf_cstr(&out->document)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  uint8_t digest[32], leaf[32];
  if (!rc && !(rc = adcp_auditlog__hex32(digest, out->entry_sha256, err))) {
    adcp_merkle_leaf_hash(leaf, digest, 32);
    adcp_auditlog__to_hex(out->leaf_hash, leaf);
  }
  if (rc) adcp_audit_leaf_free(out);
  return rc;
}

void adcp_audit_leaf_free(adcp_audit_leaf *leaf) {
  if (leaf) adcp_buf_free(&leaf->document);
}

void adcp_audit_leaf_params(adcp_sql_param out[3], const adcp_audit_leaf *leaf) {
  out[0] = adcp_sql_text(leaf->entry_sha256);
  out[1] = adcp_sql_text(leaf->leaf_hash);
  out[2] = adcp_sql_textn((const char *)leaf->document.data, leaf->document.len);
}

int adcp_audit_header_leaf_sql(adcp_buf *out, const char *insert, int rev, int obl, int acct, int first) {
  adcp_buf_reset(out);
  /* As APPEND_PG, with the leaf index taken from the header's RETURNING (the
   * same snapshot) instead of a parameter. */
  int rc = adcp_buf_printf(
      out,
      "WITH RECURSIVE hdr(h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15, h16, h17, h18, h19, next_leaf) AS (%s RETURNING %s), ins AS (INSERT INTO adcp_audit_log_leaves (account_id, leaf_index, "
      "entry_kind, entry_id, obligation_id, entry_profile, entry_sha256, leaf_hash, entry_document) SELECT $%d, "
      "hdr.next_leaf, 'revision', $%d, $%d, '" ADCP_AUDIT_HEADER_PROFILE
      "', $%d, $%d, $%d FROM hdr RETURNING 1), "
      "chain(level, idx, hash) AS (SELECT 0, hdr.next_leaf, $%d::text FROM hdr UNION ALL SELECT c.level + 1, c.idx / 2, "
      "encode(sha256('\\x01'::bytea || decode(s.hash, 'hex') || decode(c.hash, 'hex')), 'hex') FROM chain c CROSS JOIN "
      "LATERAL (SELECT leaf_hash AS hash FROM adcp_audit_log_leaves WHERE c.level = 0 AND account_id = $%d AND "
      "leaf_index = c.idx - 1 UNION ALL SELECT hash FROM adcp_audit_log_nodes WHERE c.level > 0 AND account_id = $%d "
      "AND level = c.level AND node_index = c.idx - 1) s WHERE c.idx %% 2 = 1), nodes AS (INSERT INTO "
      "adcp_audit_log_nodes (account_id, level, node_index, hash) SELECT $%d, level, idx, hash FROM chain WHERE level "
      "> 0 RETURNING 1) SELECT hdr.*, (SELECT count(*) FROM nodes), (SELECT count(*) FROM ins) FROM hdr",
      insert, adcp_audit_header_returning(ADCP_SQL_POSTGRES), acct, rev, obl, first, first + 1, first + 2, first + 1,
      acct, acct, acct);
  if (!rc) rc = adcp_buf_cstr(out);
  return rc ? ADCP_ENOMEM : 0;
}

int adcp_audit_header_leaf_check(uint64_t *leaf_index, const adcp_audit_leaf *leaf, adcp_sql_rows *r, adcp_error *err) {
  adcp_buf obj;
  adcp_buf_init(&obj);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  char stored[65];
  int rc = adcp_auditlog__header_digest(stored, &obj, r, 0, &doc, err);
  adcp_json_doc_free(&doc);
  adcp_buf_free(&obj);
  if (rc) return rc;
  uint64_t i = (uint64_t)adcp_sql_get_int64(r, ADCP_AUDITLOG_HEADER_NCOLS);
  int64_t nodes = adcp_sql_get_int64(r, ADCP_AUDITLOG_HEADER_NCOLS + 1),
          leaves = adcp_sql_get_int64(r, ADCP_AUDITLOG_HEADER_NCOLS + 2);
  unsigned closes = 0;
  for (uint64_t t = i; t & 1; t >>= 1) closes++;
  if (strcmp(stored, leaf->entry_sha256) || leaves != 1)
    return adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                          "the stored header does not hash to its audit leaf (leaf %" PRIu64 "); nothing was committed",
                          i);
  if (nodes != (int64_t)closes)
    return adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                          "the account's log lacks a subtree hash below leaf %" PRIu64 "; run adcp-ledger audit", i);
  if (leaf_index) *leaf_index = i;
  return 0;
}
