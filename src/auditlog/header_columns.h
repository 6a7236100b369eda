/* auditlog/header_columns.h — room auditlog, friend header (the ledger above
 * reads it): the one list of a revision header's columns. The header digest's
 * SELECT, RETURNING list and object (auditlog/header.c) and the ledger's
 * header SELECT and decoder (ledger/header.c) are all expanded from it, so
 * the hashed columns and the loaded ones cannot drift apart. Not installed. */
#ifndef ADCP_AUDITLOG_HEADER_COLUMNS_H
#define ADCP_AUDITLOG_HEADER_COLUMNS_H

#include "adcp/sql.h"

/* X(TABLE, NAME, KIND, NULLS, MEMBER) per column, in SELECT order:
 *   TABLE   r the revision, o its obligation, s its row set (each reader
 *           joins the row set its own way);
 *   KIND    TEXT, INT, JSON (the control totals) or INSTANT (normalised UTC
 *           text: ADCP_SQL_PG_INSTANT on PostgreSQL);
 *   NULLS   NOTNULL, or NULLABLE (NULL in the schema, or by the row-set join);
 *   MEMBER  the column's place among the members of the adcp-header-v1
 *           object (RFC 8785 order; ADCP_AUDITLOG_PROFILE_MEMBER is the
 *           constant "profile" member's). */
#define ADCP_AUDITLOG_HEADER_COLUMNS(X) \
  X(r, revision_id, TEXT, NOTNULL, 15) \
  X(r, obligation_id, TEXT, NOTNULL, 7) \
  X(r, account_id, TEXT, NOTNULL, 0) \
  X(r, revision_number, INT, NOTNULL, 16) \
  X(r, finality, TEXT, NOTNULL, 6) \
  X(r, supersedes_revision_id, TEXT, NULLABLE, 20) \
  X(r, binding_algorithm, TEXT, NOTNULL, 1) \
  X(r, revision_content_sha256, TEXT, NOTNULL, 14) \
  X(r, canonical_byte_count, INT, NOTNULL, 2) \
  X(r, row_count, INT, NOTNULL, 17) \
  X(r, control_totals, JSON, NOTNULL, 5) \
  X(r, row_manifest_sha256, TEXT, NOTNULL, 18) \
  X(r, rows_shared_from_revision_id, TEXT, NULLABLE, 19) \
  X(r, observed_at, INSTANT, NULLABLE, 8) \
  X(r, recorded_at, INSTANT, NOTNULL, 13) \
  X(o, period_start, INSTANT, NOTNULL, 11) \
  X(o, period_end, INSTANT, NOTNULL, 9) \
  X(o, configuration_id, TEXT, NOTNULL, 4) \
  X(o, period_ordinal, INT, NOTNULL, 10) \
  X(s, chunk_count, INT, NULLABLE, 3)
#define ADCP_AUDITLOG_PROFILE_MEMBER 12

/* Column indices: ADCP_AUDITLOG_COL_revision_id is 0, and so on. */
#define ADCP_AUDITLOG__COL_INDEX(t, name, kind, nulls, member) ADCP_AUDITLOG_COL_##name,
enum { ADCP_AUDITLOG_HEADER_COLUMNS(ADCP_AUDITLOG__COL_INDEX) ADCP_AUDITLOG_HEADER_NCOLS };

/* A column expression E as each dialect reads it (pass ADCP_AUDITLOG_PG_##KIND
 * or ADCP_AUDITLOG_SQLITE as a reader's W): instants become UTC text. */
#define ADCP_AUDITLOG_PG_TEXT(e) e
#define ADCP_AUDITLOG_PG_INT(e) e
#define ADCP_AUDITLOG_PG_JSON(e) e
#define ADCP_AUDITLOG_PG_INSTANT(e) ADCP_SQL_PG_INSTANT(e)
/* The audit's bulk reads on a DateStyle ISO session (adcp_auditlog__header_cols):
 * the instant as a UTC timestamp, which the digest writer rewrites to
 * ADCP_SQL_PG_INSTANT's text in the client; to_char was the largest part of
 * the server's work per header. */
#define ADCP_AUDITLOG_PG_ISO_TEXT(e) e
#define ADCP_AUDITLOG_PG_ISO_INT(e) e
#define ADCP_AUDITLOG_PG_ISO_JSON(e) e
#define ADCP_AUDITLOG_PG_ISO_INSTANT(e) "(" e " AT TIME ZONE 'UTC')"
#define ADCP_AUDITLOG_SQLITE(e) e
/* What a reader that wants no NULL coalesces a NULLABLE column of KIND to. */
#define ADCP_AUDITLOG_EMPTY_TEXT "''"
#define ADCP_AUDITLOG_EMPTY_INSTANT "''"
#define ADCP_AUDITLOG_EMPTY_INT "0"

#endif
