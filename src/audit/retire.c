/* audit/retire.c — retirement records in the log (profile
 * adcp-retirement-v1) and the audit's "retired, not missing" rule. Period
 * retirement (phase 3) deletes revisions; it appends one retirement leaf
 * listing every deleted revision with the header digest its own leaf holds,
 * so the log proves what left and when. The leaf keeps the record's JCS text
 * (entry_document) so the audit can re-hash and read it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/internal.h"


static int put_key(adcp_buf *b, const char *k, int first) {
  return (first ? 0 : adcp_buf_append_byte(b, ',')) || adcp_jcs_write_string(b, k, strlen(k)) ||
         adcp_buf_append_byte(b, ':');
}

static int put_str(adcp_buf *b, const char *s) {
  return s ? adcp_jcs_write_string(b, s, strlen(s)) : adcp_buf_append_str(b, "null");
}

int adcp_audit_append_retirement(uint64_t *leaf_index, adcp_sql_conn *conn, const adcp_audit_retirement *rec,
                                 adcp_error *err) {
  if (!rec || rec->version != 1 || !rec->account_id || !*rec->account_id || !rec->record_id || !*rec->record_id ||
      !rec->obligation_id || (rec->n_revisions && !rec->revision_ids))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "retirement record: account, obligation and record ID are required");
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = 0, bad = 0;
  /* Members in RFC 8785 order. */
  bad |= adcp_buf_append_byte(&b, '{') || put_key(&b, "account_id", 1) || put_str(&b, rec->account_id);
  bad |= put_key(&b, "obligation_id", 0) || put_str(&b, rec->obligation_id);
  bad |= put_key(&b, "period_end", 0) || put_str(&b, rec->period_end);
  bad |= put_key(&b, "period_start", 0) || put_str(&b, rec->period_start);
  bad |= put_key(&b, "profile", 0) || put_str(&b, ADCP_AUDIT_RETIREMENT_PROFILE);
  bad |= put_key(&b, "record_id", 0) || put_str(&b, rec->record_id);
  bad |= put_key(&b, "retired_at", 0) || put_str(&b, rec->retired_at);
  bad |= put_key(&b, "revisions", 0) || adcp_buf_append_byte(&b, '[');
  for (size_t i = 0; !bad && !rc && i < rec->n_revisions; i++) {
    adcp_sql_param p[2] = {adcp_sql_text(rec->revision_ids[i]), adcp_sql_text(rec->account_id)};
    char d[80];
    int found = 0;
    rc = adcp_sql_query_text(d, sizeof d, &found, conn,
                             "SELECT entry_sha256 FROM adcp_audit_log_leaves WHERE entry_kind = 'revision' AND "
                             "entry_id = $1 AND account_id = $2 ORDER BY leaf_index DESC LIMIT 1",
                             p, 2, err);
    if (rc) break;
    /* A revision that never had a leaf (committed before the log existed) is
     * listed with a null digest: the record still says it was retired. */
    bad |= (i ? adcp_buf_append_byte(&b, ',') : 0) || adcp_buf_append_byte(&b, '{') ||
           put_key(&b, "header_sha256", 1) || put_str(&b, found ? d : NULL) || put_key(&b, "revision_id", 0) ||
           put_str(&b, rec->revision_ids[i]) || adcp_buf_append_byte(&b, '}');
  }
  bad |= adcp_buf_append_str(&b, "]}") || adcp_buf_cstr(&b);
  if (!rc && bad) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  char digest[65];
  if (!rc) rc = adcp_sha256_hex(digest, b.data, b.len, err);
  if (!rc)
    rc = audit_append_leaf(leaf_index, conn, rec->account_id, "retirement", rec->record_id, rec->obligation_id,
                           ADCP_AUDIT_RETIREMENT_PROFILE, digest, (const char *)b.data, -1, err);
  adcp_buf_free(&b);
  return rc;
}

int adcp_audit_revision_retired(int *retired, adcp_sql_conn *conn, const char *account_id, const char *revision_id,
                                const char *header_sha256, const char *obligation_id, adcp_error *err) {
  *retired = 0;
  /* A retirement leaf of this account listing the revision. The document is
   * hashed by the audit before it is trusted; here a text match suffices to
   * classify. */
  adcp_buf like;
  adcp_buf_init(&like);
  /* Members are written in this order by adcp_audit_append_retirement. */
  if ((header_sha256 && adcp_buf_printf(&like, "{\"header_sha256\":\"%.64s\",", header_sha256)) ||
      adcp_buf_append_str(&like, "\"revision_id\":") || adcp_jcs_write_string(&like, revision_id, strlen(revision_id)) ||
      adcp_buf_append_byte(&like, '}') || adcp_buf_cstr(&like)) {
    adcp_buf_free(&like);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_sql_param p[2] = {adcp_sql_text(account_id), adcp_sql_text((const char *)like.data)};
  adcp_sql_rows *r = NULL;
  int rc = adcp_sql_query(&r, conn,
                          "SELECT entry_document FROM adcp_audit_log_leaves WHERE account_id = $1 AND "
                          "entry_kind = 'retirement' AND entry_document IS NOT NULL",
                          p, 1, err);
  while (!rc && (rc = adcp_sql_next(r, err)) == 1) {
    const char *doc = adcp_sql_get_text(r, 0, NULL);
    if (doc && strstr(doc, (const char *)p[1].data)) {
      *retired = 1;
      break;
    }
  }
  if (rc == 1 || rc == 0) rc = 0;
  adcp_sql_rows_free(r);
  adcp_buf_free(&like);
  /* Only a hashed retirement leaf proves a retirement: the tombstone table is
   * ordinary writable state, so a forged row there must not excuse a missing
   * revision (review finding). */
  (void)obligation_id;
  return rc;
}
