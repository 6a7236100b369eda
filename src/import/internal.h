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
  char *rows_type;    /* "array" when the rows are a JSON array */
  char *recorded_at;  /* cursor position, UTC text as the source orders it */
} import_candidate;

void import_candidate_free(import_candidate *c);

/* Checks src holds the source's tables (INVALID_INPUT naming them otherwise). */
int import_source_probe(adcp_sql_conn *src, adcp_import_source s, adcp_error *err);
/* Candidates in scope (for the ETA). */
int import_source_count(uint64_t *out, adcp_sql_conn *src, adcp_import_source s, const char *account, adcp_error *err);
/* Up to limit candidates after (at, id) (NULL: from the start), in order. */
int import_source_batch(import_candidate **out, size_t *n, adcp_sql_conn *src, adcp_import_source s,
                        const char *account, const char *at, const char *id, size_t limit, adcp_error *err);
void import_candidates_free(import_candidate *v, size_t n);

/* Row iterator over one candidate's rows, in ordinal order (an
 * adcp_ledger_row_fn). */
typedef struct import_rows {
  adcp_sql_rows *r;
  int done;
} import_rows;
int import_rows_open(import_rows *it, adcp_sql_conn *src, adcp_import_source s, const char *revision_id,
                     adcp_error *err);
int import_rows_next(void *ctx, const char **row, size_t *len, adcp_error *err);
void import_rows_close(import_rows *it);

/* The legacy table --finish renames. */
const char *import_legacy_table(adcp_import_source s);

/* 1 when revision_id is a revision of this ledger / quarantined here. */
int import_dst_state(int *present, int *quarantined, adcp_sql_conn *dst, const char *revision_id, adcp_error *err);

#endif
