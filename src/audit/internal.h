/* audit/internal.h — room audit, private: what the audit files share (the
 * account key, a table probe) on top of the auditlog room's internals (the
 * header SELECT list and writer, hex helpers, the leaf insert). Not installed. */
#ifndef ADCP_AUDIT_INTERNAL_H
#define ADCP_AUDIT_INTERNAL_H

#include "adcp/audit.h"
#include "adcp/json.h"
#include "auditlog/internal.h"

/* Account key of checkpoints and object keys: hex SHA-256 of the account ID. */
void adcp_audit__account_key(char out[65], const char *account_id);
/* 1 when the table exists on this connection's database. */
int adcp_audit__table_exists(int *exists, adcp_sql_conn *conn, const char *table, adcp_error *err);

#endif
