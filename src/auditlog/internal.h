/* auditlog/internal.h — room auditlog, private: the header SELECT list and
 * its row writer, hex helpers and the leaf insert, shared by the auditlog
 * files and the audit room above (which reads the same columns back). Not
 * installed. */
#ifndef ADCP_AUDITLOG_INTERNAL_H
#define ADCP_AUDITLOG_INTERNAL_H

#include "adcp/auditlog.h"
#include "adcp/json.h"
#include "auditlog/header_columns.h"

/* The header columns (ADCP_AUDITLOG_HEADER_NCOLS, auditlog/header_columns.h),
 * for a SELECT that joins revisions r, obligations o and the row set s at
 * coalesce(r.row_set_id, r.revision_id) (a header without row_set_id uses its
 * own ID, as the ledger reads it); adcp_auditlog__header_write reads them from
 * column col0 on. */
const char *adcp_auditlog__header_cols(const adcp_sql_conn *c);
#define AUDIT_HEADER_FROM \
  " JOIN adcp_reporting_obligations o ON o.obligation_id = r.obligation_id " \
  "LEFT JOIN adcp_reporting_row_sets s ON s.row_set_id = coalesce(r.row_set_id, r.revision_id) "

/* Appends the adcp-header-v1 object (JCS) of the row's header columns. doc is
 * scratch for the control totals. */
int adcp_auditlog__header_write(adcp_buf *out, adcp_sql_rows *r, int col0, adcp_json_doc *doc, adcp_error *err);
/* SHA-256 hex of the object adcp_auditlog__header_write produces. */
int adcp_auditlog__header_digest(char out[65], adcp_buf *scratch, adcp_sql_rows *r, int col0, adcp_json_doc *doc,
                                 adcp_error *err);

/* Appends the next leaf of account's log (entry digest hex) and the complete
 * subtree nodes it closes. Caller holds the account lock in a transaction.
 * known_size: the log's size if the caller just read it, else -1. */
int adcp_auditlog__append_leaf(uint64_t *leaf_index, adcp_sql_conn *conn, const char *account_id, const char *kind,
                               const char *entry_id, const char *obligation_id, const char *profile,
                               const char entry_sha256[65], const char *document, int64_t known_size, adcp_error *err);
/* Next leaf index of the log of account expression A, as an index seek. */
#define AUDIT_NEXT_LEAF(A) \
  "coalesce((SELECT leaf_index + 1 FROM adcp_audit_log_leaves WHERE account_id = " A " ORDER BY leaf_index DESC LIMIT 1), 0)"

/* Account lock (the ledger's key, so leaves and revisions serialize). */
int adcp_auditlog__lock_account(adcp_sql_conn *conn, const char *account_id, adcp_error *err);

int adcp_auditlog__hex32(uint8_t out[32], const char *hex, adcp_error *err);
void adcp_auditlog__to_hex(char out[65], const uint8_t in[32]);
/* String member k of object obj into dst (under cap bytes, no NUL; nonempty:
 * at least one byte). -1 when absent or not so. */
int adcp_auditlog__member_str(char *dst, size_t cap, const adcp_json_doc *d, uint32_t obj, const char *k, int nonempty);
/* One stored hash of account's log: level 0 a leaf hash, else a closed
 * node. *found = 0 when absent. */
int adcp_auditlog__stored_hash(uint8_t out[32], int *found, adcp_sql_conn *conn, const char *account, unsigned level,
                               uint64_t idx, adcp_error *err);
/* The size of account's log (its next leaf index). */
int adcp_auditlog__log_size(uint64_t *n, adcp_sql_conn *conn, const char *account, adcp_error *err);

#endif
