/* audit/header.c — room audit: the canonical header object and digest of a
 * stored revision, read back by revision ID (the columns, the object writer
 * and the digest are the auditlog room's, so commit and audit hash alike). */
#include <string.h>

#include "audit/internal.h"

static int load_one(adcp_buf *obj, char digest[65], adcp_sql_conn *conn, const char *revision_id, adcp_error *err) {
  adcp_buf sql;
  adcp_buf_init(&sql);
  if (adcp_buf_printf(&sql, "SELECT %s FROM adcp_reporting_revisions r" AUDIT_HEADER_FROM "WHERE r.revision_id = $1",
                      adcp_auditlog__header_cols(conn)) ||
      adcp_buf_cstr(&sql)) {
    adcp_buf_free(&sql);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_sql_param p = adcp_sql_text(revision_id);
  adcp_sql_rows *r = NULL;
  int rc = adcp_sql_query(&r, conn, (const char *)sql.data, &p, 1, err);
  adcp_buf_free(&sql);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 0) rc = adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "revision not found");
  if (rc == 1) {
    adcp_json_doc doc;
    adcp_json_doc_init(&doc);
    adcp_buf_reset(obj);
    rc = adcp_auditlog__header_write(obj, r, 0, &doc, err);
    if (!rc && digest) rc = adcp_sha256_hex(digest, obj->data, obj->len, err);
    adcp_json_doc_free(&doc);
  }
  adcp_sql_rows_free(r);
  return rc;
}

int adcp_audit_header_object(adcp_buf *out, adcp_sql_conn *conn, const char *revision_id, adcp_error *err) {
  return load_one(out, NULL, conn, revision_id, err);
}

int adcp_audit_header_sha256(char out[65], adcp_sql_conn *conn, const char *revision_id, adcp_error *err) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = load_one(&b, out, conn, revision_id, err);
  adcp_buf_free(&b);
  return rc;
}
