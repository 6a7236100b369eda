/* import/internal.h — the legacy import room (include/adcp/import.h): what
 * source.c (the legacy layouts, read-only SQL), import.c (the run) and
 * finish.c (the rename) share. */
#ifndef ADCP_IMPORT_INTERNAL_H
#define ADCP_IMPORT_INTERNAL_H

#include "adcp/import.h"

/* One legacy revision header as the source stores it (text as read). */
typedef struct import_candidate {
  char *revision_id, *obligation_id, *account_id, *configuration_id;
  int64_t period_ordinal;
  char *period_start, *period_end, *finality;
  char *content_sha256, *byte_count, *row_count, *algorithm; /* algorithm "" = unknown (py) */
  char *totals_json;
  char *rows_type;   /* "array" when the rows are a JSON array */
  char *recorded_at; /* cursor position, UTC text as the source orders it */
} import_candidate;

void adcp_import__candidate_free(import_candidate *c);

/* Checks src holds the source's tables (INVALID_INPUT naming them otherwise). */
int adcp_import__source_probe(adcp_sql_conn *src, adcp_import_source s, adcp_error *err);
/* Candidates in scope (for the ETA). */
int adcp_import__source_count(uint64_t *out, adcp_sql_conn *src, adcp_import_source s, const char *account,
                              adcp_error *err);
/* Up to limit candidates after (at, id) (NULL: from the start), in order. */
int adcp_import__source_batch(import_candidate **out, size_t *n, adcp_sql_conn *src, adcp_import_source s,
                              const char *account, const char *at, const char *id, size_t limit, adcp_error *err);
void adcp_import__candidates_free(import_candidate *v, size_t n);

/* Row iterator over one candidate's rows, in ordinal order (an
 * adcp_ledger_row_fn). */
typedef struct import_rows {
  adcp_sql_rows *r;
  int done;
  uint64_t ordinal; /* rows handed over so far */
  int chars;        /* the source measures in characters (SQLite's length()) */
} import_rows;
int adcp_import__rows_open(import_rows *it, adcp_sql_conn *src, adcp_import_source s, const char *revision_id,
                           adcp_error *err);
int adcp_import__rows_next(void *ctx, const char **row, size_t *len, adcp_error *err);
void adcp_import__rows_close(import_rows *it);

/* The legacy table --finish renames. */
const char *adcp_import__legacy_table(adcp_import_source s);

/* present: revision_id is a revision of account_id in this ledger;
 * collision: it names another account's revision (never importable, and
 * never "migrated"); quarantined: recorded in the quarantine. Both IDs must
 * be adcp_import__safe_text forms (they travel as SQL parameters). */
int adcp_import__dst_state(int *present, int *quarantined, int *collision, adcp_sql_conn *dst, const char *account_id,
                           const char *revision_id, adcp_error *err);

/* Records a quarantine (idempotent) in the caller's transaction. */
int adcp_import__quarantine_insert(adcp_sql_conn *dst, adcp_import_source s, const char *revision_id,
                                   const char *account_id, const char *check, const char *message, adcp_error *err);

/* out (cap >= 256) = raw when it is valid UTF-8 without control characters
 * and at most 255 bytes (returns 1); otherwise a printable ASCII form with
 * every other byte as \xHH, cut to 255 bytes (returns 0). A hostile byte
 * never reaches SQL (PostgreSQL refuses invalid UTF-8: SQLSTATE 22021) or the
 * output (invalid JSON). */
int adcp_import__safe_text(char *out, size_t cap, const char *raw);

/* The message of a revision ID that names another account's revision. */
#define IMPORT_COLLISION_MESSAGE \
  "revision ID already names a revision of another account in this ledger (IDs are unique per ledger)"

#endif
