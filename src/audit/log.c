/* audit/log.c — room audit: reading the per-account log (the tree head from
 * its stored subtree hashes, the subtree source proofs read from, the account
 * list), appending a revision by ID, verify's header check and adopting
 * revisions recorded before the log. Leaf appends themselves are the
 * auditlog room's (auditlog/log.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "audit/internal.h"

void adcp_audit__account_key(char out[65], const char *account_id) {
  uint8_t d[32];
  SHA256((const uint8_t *)account_id, strlen(account_id), d);
  adcp_auditlog__to_hex(out, d);
}

int adcp_audit__table_exists(int *exists, adcp_sql_conn *conn, const char *table, adcp_error *err) {
  adcp_sql_param p = adcp_sql_text(table);
  char one[8];
  *exists = 0;
  return adcp_sql_query_text(one, sizeof one, exists, conn,
                             adcp_sql_dialect_of(conn) == ADCP_SQL_POSTGRES
                                 ? "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND "
                                   "tablename = $1"
                                 : "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = $1",
                             &p, 1, err);
}

int adcp_audit_log_subtree(void *ctx, uint64_t start, unsigned level, uint8_t out[32], adcp_error *err) {
  const adcp_audit_log_source *s = ctx;
  int found = 0;
  int rc = adcp_auditlog__stored_hash(out, &found, s->conn, s->account_id, level, start >> level, err);
  if (!rc && !found)
    rc = adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                        "the log has no stored hash for level %u index %" PRIu64 " (nodes deleted?)", level,
                        start >> level);
  return rc;
}

int adcp_audit_append_revision(uint64_t *leaf_index, adcp_sql_conn *conn, const char *revision_id, adcp_error *err) {
  adcp_buf sql;
  adcp_buf_init(&sql);
  int rc = 0;
  /* The header and the log's size in one statement. */
  if (adcp_buf_printf(&sql,
                      "SELECT %s, " AUDIT_NEXT_LEAF("r.account_id") " FROM adcp_reporting_revisions r" AUDIT_HEADER_FROM
                                                                    "WHERE r.revision_id = $1",
                      adcp_auditlog__header_cols(conn)) ||
      adcp_buf_cstr(&sql))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_sql_param p = adcp_sql_text(revision_id);
  adcp_sql_rows *r = NULL;
  if (!rc) rc = adcp_sql_query(&r, conn, (const char *)sql.data, &p, 1, err);
  if (!rc) {
    rc = adcp_sql_next(r, err);
    if (rc == 0) rc = adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "revision not found for the audit log");
  }
  if (rc == 1) rc = adcp_audit_append_revision_row(leaf_index, conn, r, err);
  adcp_sql_rows_free(r);
  adcp_buf_free(&sql);
  return rc;
}

int adcp_audit_tree_head(adcp_audit_head *out, adcp_sql_conn *conn, const char *account_id, adcp_error *err) {
  memset(out, 0, sizeof *out);
  int rc = adcp_auditlog__log_size(&out->tree_size, conn, account_id, err);
  uint8_t root[32];
  adcp_audit_log_source src = {conn, account_id};
  if (!rc) rc = adcp_merkle_root(root, out->tree_size, adcp_audit_log_subtree, &src, err);
  if (!rc) adcp_auditlog__to_hex(out->root_hash, root);
  return rc;
}

void adcp_audit_ids_free(char **ids, size_t count) {
  for (size_t i = 0; ids && i < count; i++) free(ids[i]);
  free(ids);
}

int adcp_audit_list_accounts(char ***out, size_t *count, adcp_sql_conn *conn, adcp_error *err) {
  *out = NULL, *count = 0;
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, conn,
                          "SELECT account_id FROM adcp_audit_log_leaves UNION SELECT account_id FROM "
                          "adcp_reporting_revisions ORDER BY 1",
                          NULL, 0, err);
  if (rc) return rc;
  size_t cap = 0;
  char **ids = NULL;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    if (*count == cap) {
      cap = cap ? cap * 2 : 16;
      char **g = realloc(ids, cap * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      ids = g;
    }
    ids[*count] = strdup(adcp_sql_get_text(r, 0, NULL));
    if (!ids[(*count)++]) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
  }
  adcp_sql_rows_free(r);
  if (rc < 0) {
    adcp_audit_ids_free(ids, *count);
    *count = 0;
    return rc;
  }
  *out = ids;
  return 0;
}

int adcp_audit_check_revision(adcp_sql_conn *conn, const char *revision_id, adcp_error *err) {
  char now[65], leaf[80], account[256];
  int rc = adcp_audit_header_sha256(now, conn, revision_id, err);
  if (rc) return rc;
  adcp_sql_param p = adcp_sql_text(revision_id);
  int found = 0;
  if ((rc = adcp_sql_query_text(account, sizeof account, &found, conn,
                                "SELECT account_id FROM adcp_reporting_revisions WHERE revision_id = $1", &p, 1, err)))
    return rc;
  if (!found) return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "revision not found");
  /* Its own account's log only: a leaf another account's log holds (even an
   * invented account's) says nothing about this revision (issue 25 item 5). */
  adcp_sql_param q[2] = {adcp_sql_text(revision_id), adcp_sql_text(account)};
  if ((rc = adcp_sql_query_text(leaf, sizeof leaf, &found, conn,
                                "SELECT entry_sha256 FROM adcp_audit_log_leaves WHERE entry_kind = 'revision' AND "
                                "entry_id = $1 AND account_id = $2 ORDER BY leaf_index DESC LIMIT 1",
                                q, 2, err)))
    return rc;
  if (!found) {
    /* Recorded before the log existed (an upgraded database): nothing to compare. */
    int prelog = 0;
    char one[8];
    rc = adcp_sql_query_text(one, sizeof one, &prelog, conn,
                             "SELECT 1 FROM adcp_reporting_revisions r, adcp_schema_migrations m WHERE "
                             "r.revision_id = $1 AND m.version = '0009' AND r.recorded_at < m.applied_at",
                             &p, 1, err);
    if (rc || prelog) return rc;
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED,
                          "header digest: the revision has no audit log leaf (inserted outside a commit?)");
  }
  if (strcmp(leaf, now))
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED,
                          "header digest: the stored header hashes to %.12s…, its audit log leaf says %.12s… "
                          "(the header was edited)",
                          now, leaf);
  return 0;
}

int adcp_audit_adopt(char ***adopted, size_t *count, adcp_sql_conn *conn, const char *account_id, int dry_run,
                     adcp_error *err) {
  *adopted = NULL, *count = 0;
  int rc = adcp_sql_begin(conn, 1, err);
  if (rc) return rc;
  if ((rc = adcp_auditlog__lock_account(conn, account_id, err))) goto out;
  adcp_sql_param p = adcp_sql_text(account_id);
  adcp_sql_rows *r = NULL;
  char **ids = NULL;
  size_t n = 0, cap = 0;
  char bad[2][256] = {"", ""};
  /* Collected first: no statement runs while rows stream. The second column
   * names a predecessor that makes the order impossible: one with a leaf
   * already, or recorded after the log existed. */
  rc = adcp_sql_query(&r, conn,
                      "SELECT r.revision_id, (SELECT s.revision_id FROM adcp_reporting_revisions s WHERE "
                      "s.revision_id = r.supersedes_revision_id AND (s.recorded_at >= m.applied_at OR EXISTS (SELECT "
                      "1 FROM adcp_audit_log_leaves k WHERE k.entry_kind = 'revision' AND k.entry_id = s.revision_id "
                      "AND k.account_id = s.account_id))) FROM adcp_reporting_revisions r, adcp_schema_migrations m "
                      "WHERE r.account_id = $1 AND m.version = '0009' AND r.recorded_at < m.applied_at AND NOT EXISTS "
                      "(SELECT 1 FROM adcp_audit_log_leaves l WHERE l.entry_kind = 'revision' AND l.entry_id = "
                      "r.revision_id AND l.account_id = r.account_id) ORDER BY r.recorded_at, r.revision_id",
                      &p, 1, err);
  while (!rc && (rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    if (!bad[0][0] && !adcp_sql_is_null(r, 1)) {
      snprintf(bad[0], sizeof bad[0], "%s", adcp_sql_get_text(r, 0, NULL));
      snprintf(bad[1], sizeof bad[1], "%s", adcp_sql_get_text(r, 1, NULL));
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **g = realloc(ids, cap * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      ids = g;
    }
    if (!(ids[n++] = strdup(adcp_sql_get_text(r, 0, NULL)))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_sql_rows_free(r);
  if (rc == 1 || rc == 0) rc = 0;
  if (!rc && bad[0][0])
    rc = adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                        "adopt refused: revision %.100s is recorded before migration 0009 but supersedes %.100s, "
                        "which was logged or recorded after it (inserted around the commit path?); nothing adopted",
                        bad[0], bad[1]);
  for (size_t i = 0; !rc && !dry_run && i < n; i++) rc = adcp_audit_append_revision(NULL, conn, ids[i], err);
  if (rc) {
    adcp_audit_ids_free(ids, n);
  } else {
    *adopted = ids, *count = n;
  }
out:
  if (rc || dry_run) {
    adcp_sql_rollback(conn, NULL);
    return rc;
  }
  rc = adcp_sql_commit(conn, err);
  if (rc) {
    adcp_audit_ids_free(*adopted, *count);
    *adopted = NULL, *count = 0;
  }
  return rc;
}

int adcp_audit_adopt_unlogged(uint64_t *appended, adcp_sql_conn *conn, const char *account_id, adcp_error *err) {
  char **ids = NULL;
  size_t n = 0;
  int rc = adcp_audit_adopt(&ids, &n, conn, account_id, 0, err);
  if (appended) *appended = rc ? 0 : n;
  adcp_audit_ids_free(ids, n);
  return rc;
}
