/* inline/internal.h — shared by the files of the `inline` room (staging,
 * seals, the catalog audit and the operation transaction). Not installed. */
#ifndef ADCP_INLINE_INTERNAL_H
#define ADCP_INLINE_INTERNAL_H

#include "adcp/inline.h"

struct adcp_inline_store {
  adcp_sql_conn *conn; /* borrowed */
  adcp_sql_dialect dialect;
  size_t max_payload;
  adcp_inline_fault_fn fault;
  void *fault_ctx;
  /* SQLite: schema_version of the last clean audit on this connection, -1
   * when none; any DDL bumps it, so an unchanged value means an unchanged
   * schema and the walk can be skipped. */
  int64_t audited_schema_version;
  /* PostgreSQL: digest of the row versions (oid, xmin) of every catalog row
   * the audit renders, at the last clean audit ("" when none). Any DDL on
   * these objects writes new row versions, so an unchanged digest means the
   * full walk would render the same properties. */
  char audited_catalog_rows[33];
};

/* Sets the fixed spec 06 §7 message for code; returns code. */
int adcp_inline__fail(adcp_error *err, int code);

/* Input rules of spec 06 §3 (1 = valid). */
int adcp_inline__account_ok(const char *account_id);
int adcp_inline__key_ok(const char *key);
int adcp_inline__ref_ok(const char *ref, size_t len);

/* The operation transaction (spec 06 §6.2): BEGIN (SQLite IMMEDIATE when
 * write), READ COMMITTED, LOCK TABLE … ACCESS SHARE (PostgreSQL), audit.
 * Failures are already mapped to SCHEMA_UNREADY / STATE_UNAVAILABLE and the
 * transaction is rolled back. */
int adcp_inline__begin(adcp_inline_store *st, int write, adcp_error *err);
/* COMMIT, then the "after_commit" fault point. */
int adcp_inline__commit(adcp_inline_store *st, adcp_error *err);
/* Rolls back and returns code with its fixed message. */
int adcp_inline__abort(adcp_inline_store *st, int code, adcp_error *err);

/* The catalog audit inside an open transaction. full = ignore the SQLite
 * schema_version shortcut. report may be NULL. 0, ADCP_ESCHEMA_UNREADY (err
 * names the first problem when name_first), or ADCP_ESTATE_UNAVAILABLE. */
int adcp_inline__audit(adcp_inline_store *st, int full, adcp_catalog_report **report, int name_first, adcp_error *err);

#endif
