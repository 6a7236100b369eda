/* adcp/import.h — the legacy inline import (spec 02 §13, docs/adopting.md):
 * revisions whose rows a Python SDK kept in `reporting_revision_rows`
 * ("py-inline") or a JS SDK kept inline in its ledger documents' `rows`
 * array ("js-inline") move into this ledger as verified postgres-kind chunks
 * with their original digests.
 *
 * Per candidate, in (recorded_at, id) order: the stored rows are
 * re-canonicalized and must reproduce the committed binding (row count, byte
 * count, revision_content_sha256) under the revision's binding algorithm
 * (rfc8785_jcs_v1, or the import-only legacy_py_core_pairs_v0; a Python
 * revision of unknown classification is tried both ways, spec 01 §8.3); the
 * commit is one transaction of the ledger and nothing is committed unless the
 * binding reproduces. A revision that does not reproduce is quarantined:
 * reported, recorded in adcp_legacy_import_quarantine (reads of it then fail
 * with ROWS_INTEGRITY_FAILED), never rewritten. The legacy source is only
 * ever read, except by adcp_import_finish, which renames (never truncates or
 * drops) the legacy table.
 *
 * Resuming: a durable cursor per (source, account scope, source reference)
 * is advanced at the end of each batch (and with each quarantine, in its
 * transaction). A commit the cursor does not cover yet (kill -9 mid-batch)
 * is found again on resume and resolves as a replay of the identical
 * revision, so nothing is duplicated or lost.
 *
 * Threads: a run uses the ledger handle and the source connection it is given,
 * each from one thread at a time; concurrent runs use separate handles. */
#ifndef ADCP_IMPORT_H
#define ADCP_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/ledger.h"
#include "adcp/sql.h"

ADCP_BEGIN_DECLS

typedef enum adcp_import_source {
  ADCP_IMPORT_PY_INLINE = 1, /* "py-inline": reporting_revisions + reporting_revision_rows */
  ADCP_IMPORT_JS_INLINE = 2, /* "js-inline": adcp_reporting_revisions.data.rows (+ obligations) */
} adcp_import_source;

#define ADCP_IMPORT_BATCH_DEFAULT 100
#define ADCP_IMPORT_BATCH_MAX 10000
/* A legacy row above the commit path's row cap is quarantined
 * (unparsable_row, with its size), measured by the source and never fetched. */
#define ADCP_IMPORT_ROW_MAX (16u << 20)

const char *adcp_import_source_name(adcp_import_source s);
/* INVALID_INPUT for anything but "py-inline" / "js-inline". */
int adcp_import_source_parse(adcp_import_source *out, const char *name, adcp_error *err);

/* Which check a quarantined revision failed ("digest", "byte_count",
 * "row_count", "unparsable_row", "header"). An unparsable_row message starts
 * with the row's code, "INVALID_ROW: row at ordinal N: …", as commit gives it. */
typedef struct adcp_import_item {
  const char *revision_id, *account_id;
  const char *check;
  const char *message;
  int dry_run; /* 1: would be quarantined (nothing recorded) */
} adcp_import_item;

typedef struct adcp_import_report {
  uint64_t candidates;                      /* candidates in scope when the run started */
  uint64_t examined;                        /* candidates looked at by this run */
  uint64_t migrated;                        /* committed by this run */
  uint64_t already_present;                 /* already in this ledger with identical content (replay) */
  uint64_t quarantined;                     /* quarantined by this run */
  uint64_t already_quarantined;             /* quarantined by an earlier run */
  uint64_t would_migrate, would_quarantine; /* dry run */
  uint64_t legacy_algorithm;                /* reproduced only under legacy_py_core_pairs_v0 */
  uint64_t rows, bytes;                     /* rows and canonical bytes of the examined candidates that reproduced */
  uint64_t batches;
  double elapsed_s;
  int resumed; /* 1: started after a stored cursor */
} adcp_import_report;

typedef struct ADCP_VERSIONED adcp_import_options {
  int version; /* 1 */
  adcp_import_source source;
  const char *account_id; /* NULL = every account */
  size_t batch;           /* candidates per source query: 1..10000, 0 = 100 */
  int resume;             /* 1: continue after the stored cursor (none stored: from the start) */
  int dry_run;            /* 1: write nothing anywhere (the ledger may be read-only) */
  /* Identifies the legacy database in the cursor key (e.g. a digest of its
   * redacted URL); never a URL or a secret. NULL = "". At most 64 bytes. */
  const char *source_ref;
  /* Stop after this many candidates (0 = no limit): a bounded run. */
  uint64_t max_candidates;
  void (*on_item)(void *ctx, const adcp_import_item *item);    /* quarantines; may be NULL */
  void (*on_progress)(void *ctx, const adcp_import_report *r); /* after each candidate; may be NULL */
  void *ctx;
} adcp_import_options;
#define ADCP_IMPORT_OPTIONS_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_IMPORT_OPTIONS_INIT \
  { .version = ADCP_IMPORT_OPTIONS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_IMPORT_OPTIONS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_import_options_init(adcp_import_options *out, unsigned version);

/* Runs the import from src (a connection to the legacy database; only read)
 * into l. Returns 0 when every candidate in scope was examined (quarantines
 * are not errors: see out->quarantined). Errors: INVALID_INPUT (bad options,
 * or src lacks the source's tables: "not a py-inline database ..."), STORAGE
 * (either database failed; the cursor stays at the last finished candidate),
 * ENOMEM. */
int adcp_import_run(adcp_import_report *out, adcp_ledger *l, adcp_sql_conn *src, const adcp_import_options *opts,
                    adcp_error *err);

typedef struct adcp_import_finish_result {
  uint64_t candidates;  /* legacy revisions examined */
  uint64_t migrated;    /* present in this ledger */
  uint64_t quarantined; /* quarantined here */
  uint64_t remaining;   /* neither: the finish was refused */
  char renamed_from[64], renamed_to[64];
  int dry_run;
} adcp_import_finish_result;

/* The final step: with every candidate migrated or quarantined, renames the
 * legacy table (py-inline: reporting_revision_rows; js-inline:
 * adcp_reporting_revisions) to <name>_imported so binaries that still read
 * inline rows fail closed. Never truncates or drops. CONFLICT while
 * candidates remain (out->remaining), or when the new name is taken;
 * INVALID_INPUT when src lacks the table. dry_run: checks only. */
int adcp_import_finish(adcp_import_finish_result *out, adcp_ledger *l, adcp_sql_conn *src, adcp_import_source source,
                       int dry_run, adcp_error *err);

/* ---- the quarantine (import/quarantine.c) ------------------------------- */

/* One quarantined revision; the strings are valid during the callback only. */
typedef struct adcp_import_quarantined {
  const char *revision_id, *account_id;
  const char *source;      /* "py-inline" / "js-inline" */
  const char *check;       /* the failed check, as adcp_import_item.check */
  const char *message;     /* why, as reported when it was quarantined */
  const char *recorded_at; /* when it was quarantined (database clock) */
} adcp_import_quarantined;

/* Calls fn for every quarantined revision (of account_id; NULL = every
 * account) in (account_id, revision_id) order; a nonzero return of fn stops
 * the walk and is returned. Errors: STORAGE. */
int adcp_import_quarantine_each(adcp_ledger *l, const char *account_id,
                                int (*fn)(void *ctx, const adcp_import_quarantined *q), void *ctx, adcp_error *err);
/* The number of quarantined revisions (the worker's metric). Errors: STORAGE. */
int adcp_import_quarantine_count(uint64_t *out, adcp_sql_conn *conn, adcp_error *err);
/* Removes revision_id from the quarantine so the next import run examines it
 * again (after its legacy row was repaired); copies its account into
 * account_out. Until that run, reads of it answer REFERENCE_NOT_FOUND.
 * Errors: REFERENCE_NOT_FOUND (not quarantined), INVALID_INPUT, STORAGE. */
int adcp_import_quarantine_release(char *account_out, size_t account_n, adcp_ledger *l, const char *revision_id,
                                   adcp_error *err);

ADCP_END_DECLS
#endif
