/* adcp/ledger.h — the ledger Core with verified row storage (spec 02, the
 * `postgres` binding kind, on SQLite and PostgreSQL alike):
 *
 *   - obligations (one account's reporting duty for one period) and revisions
 *     (gapless revision_number from 1, snapshot/official finality, at most one
 *     official and nothing after it, each naming the revision it supersedes);
 *   - commit: rows stream through the encoder; chunk bodies (content-addressed
 *     per obligation), chunk manifests, the row set and the header land in one
 *     transaction under the account lock; replays return the stored revision,
 *     a different content under the same ID is CONTENT_CONFLICT;
 *   - header-only revisions: a new revision whose row manifest equals a live
 *     row set of the same obligation shares its bytes;
 *   - verified reads: paged (only the segments the page needs) and full (every
 *     chunk plus the envelope digest), never releasing an unverified row;
 *   - host reads: current revision of an obligation, current revisions of an
 *     account's periods (spec 03 §9).
 *
 * Errors (operator codes): ADCP_EINVALID_INPUT, ADCP_EINVALID_ROW,
 * ADCP_ECONTENT_CONFLICT, ADCP_ECONFLICT (a concurrent writer or the official
 * rule won), ADCP_EREFERENCE_NOT_FOUND (unknown ID or another account's — the
 * same message for both), ADCP_EROWS_UNAVAILABLE, ADCP_EROWS_INTEGRITY_FAILED
 * (the message keeps the precise encoding-layer reason), ADCP_EROWS_EXPIRED,
 * ADCP_ESTATE_UNAVAILABLE, ADCP_EUNSAFE_BINDING, ADCP_ESTORAGE, ADCP_ENOMEM.
 * adcp_ledger_buyer_code() collapses them to what a buyer may see.
 *
 * A ledger handle borrows one SQL connection and is used by one thread at a
 * time; open one handle per connection for concurrent writers. */
#ifndef ADCP_LEDGER_H
#define ADCP_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/rows.h"
#include "adcp/sql.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADCP_LEDGER_ID_MAX 256          /* identifiers are 1..255 characters */
#define ADCP_LEDGER_POSTGRES_BINDING "postgres"
#define ADCP_LEDGER_DEFAULT_NAMESPACE "default"
#define ADCP_LEDGER_LIST_MAX 1000

typedef enum adcp_finality {
  ADCP_FINALITY_SNAPSHOT = 1,
  ADCP_FINALITY_OFFICIAL = 2,
} adcp_finality;

const char *adcp_finality_name(adcp_finality f);
int adcp_finality_parse(adcp_finality *out, const char *name, adcp_error *err);

typedef struct adcp_ledger adcp_ledger;

typedef struct adcp_ledger_options {
  int version;                      /* 1 */
  const char *deployment_namespace; /* namespace-key input (spec 02 §4); default "default" */
  /* Verified manifests kept per handle (revision ID + header digest → the
   * manifests that verified against it), so a page read costs one header
   * lookup plus the segment bytes. 0 = default (64); -1 disables the cache. */
  int manifest_cache_entries;
} adcp_ledger_options;

/* Opens a ledger on a migrated connection (borrowed: the caller keeps it open
 * until adcp_ledger_close and closes it afterwards). opts may be NULL. */
int adcp_ledger_open(adcp_ledger **out, adcp_sql_conn *conn, const adcp_ledger_options *opts, adcp_error *err);
void adcp_ledger_close(adcp_ledger *l);
adcp_sql_conn *adcp_ledger_conn(adcp_ledger *l);

/* ---- headers ---------------------------------------------------------------- */

typedef struct adcp_revision_header {
  char revision_id[ADCP_LEDGER_ID_MAX];
  char obligation_id[ADCP_LEDGER_ID_MAX];
  char account_id[ADCP_LEDGER_ID_MAX];
  int64_t revision_number;
  adcp_finality finality;
  char supersedes_revision_id[ADCP_LEDGER_ID_MAX]; /* "" for revision 1 */
  adcp_binding_algorithm binding_algorithm;
  char content_sha256[65];          /* revision_content_sha256 */
  uint64_t canonical_byte_count;
  uint64_t row_count;
  uint64_t chunk_count;
  char row_manifest_sha256[65];
  char *control_totals_json;        /* JCS array as stored; owned, "[]" when none */
  char rows_shared_from[ADCP_LEDGER_ID_MAX]; /* "" unless header-only */
  char rows_state[16];              /* live / pruning / pruned / unavailable */
  char observed_at[32];             /* "" when not given */
  char recorded_at[32];             /* database clock, UTC, microseconds */
  char period_start[32], period_end[32];
} adcp_revision_header;

void adcp_revision_header_free(adcp_revision_header *h);
/* Appends the header as one JSON object (no trailing newline). */
int adcp_revision_header_write_json(adcp_buf *out, const adcp_revision_header *h);

/* ---- commit ------------------------------------------------------------------- */

/* Row source: 1 with the next row's JSON text (valid until the next call), 0 at
 * the end, or a negative ADCP_E* code (with err set) to abort the commit. */
typedef int (*adcp_ledger_row_fn)(void *ctx, const char **row, size_t *len, adcp_error *err);

typedef struct adcp_ledger_commit {
  int version;                      /* 1 */
  const char *account_id;
  const char *obligation_id;
  const char *revision_id;          /* ^[A-Za-z0-9_.:-]{1,255}$ */
  adcp_finality finality;
  /* Obligation identity, used only when the obligation does not exist yet
   * (then period_start and period_end are required). Instants are RFC 3339
   * (any offset; stored as UTC with microseconds). */
  const char *period_start, *period_end;
  const char *configuration_id;     /* NULL: the obligation ID */
  int64_t period_ordinal;           /* default 0 */
  const char *observed_at;          /* NULL: not recorded */
  const adcp_control_totals *totals; /* NULL: [] */
  adcp_ledger_row_fn next_row;      /* NULL: zero rows */
  void *row_ctx;
} adcp_ledger_commit;

typedef struct adcp_commit_result {
  adcp_revision_header header;
  int replay;                /* 1: the revision existed with this content; nothing written */
  int shared;                /* 1: header-only, rows shared from header.rows_shared_from */
  int obligation_created;
  uint64_t bodies_written;   /* chunk bodies inserted by this commit */
  uint64_t bodies_reused;    /* chunks whose body the obligation already held */
} adcp_commit_result;

/* Commits one revision (spec 02 §8.1-§8.2, §8.5, §12). Rows are pulled from
 * req->next_row one at a time; memory stays at one chunk plus the chunk
 * manifests. Everything is written in one transaction that takes the account
 * lock first; a failure leaves nothing behind. Before the commit, the stored
 * chunks are re-verified (segment digests and the envelope digest re-derived
 * from the exact bytes written) against the binding being committed.
 * Errors: INVALID_INPUT / INVALID_ROW (refused rows, totals, IDs, instants),
 * CONTENT_CONFLICT (same revision ID, different content; or the obligation
 * exists with another identity), CONFLICT ("obligation already has an
 * official revision", or a concurrent writer / lock timeout), REFERENCE_NOT_FOUND
 * (the obligation belongs to another account), UNSAFE_BINDING, STORAGE. */
int adcp_ledger_commit_revision(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req,
                                adcp_error *err);
void adcp_commit_result_free(adcp_commit_result *r);

/* ---- reads ---------------------------------------------------------------------- */

/* Header of one revision, account-checked. REFERENCE_NOT_FOUND when unknown or
 * another account's. account_id NULL = operator lookup across accounts. */
int adcp_ledger_get_revision(adcp_revision_header *out, adcp_ledger *l, const char *account_id,
                             const char *revision_id, adcp_error *err);

typedef struct adcp_ledger_page {
  uint64_t offset;      /* first ordinal returned */
  uint64_t count;       /* rows returned */
  uint64_t total_rows;  /* the revision's row_count */
  int envelope_verified; /* 1 when the page was the whole revision (digest checked) */
  adcp_buf data;        /* canonical JSONL of the rows, each line ends with 0x0A */
  size_t *ends;         /* ends[i]: offset just past row i's 0x0A in data */
  size_t ends_cap;
} adcp_ledger_page;

/* Zero-initialise (or memset 0) before the first use; a page can be reused. */
void adcp_ledger_page_init(adcp_ledger_page *p);
void adcp_ledger_page_free(adcp_ledger_page *p);

/* Verified paged read of rows [offset, offset+limit) (spec 02 §10): header
 * with the account check; rows_state; the manifest re-derived from the chunk
 * records and checked against the header (digest, contiguity, tiling, counts);
 * then only the segments overlapping the page are fetched and each is checked
 * (digest, length, line count, final newline) before any row is released.
 * A page that covers the whole revision also checks the envelope digest.
 * offset >= row_count gives an empty page. limit 0 means "to the end".
 * Errors: REFERENCE_NOT_FOUND, ROWS_EXPIRED, ROWS_UNAVAILABLE (missing bytes),
 * ROWS_INTEGRITY_FAILED (any mismatch; the message names the precise rule). */
int adcp_ledger_read_revision_rows(adcp_ledger_page *out, adcp_ledger *l, const char *account_id,
                                   const char *revision_id, uint64_t offset, uint64_t limit, adcp_error *err);

/* Called with each verified chunk's canonical bytes, in order. */
typedef int (*adcp_ledger_chunk_fn)(void *ctx, const uint8_t *bytes, size_t len, uint64_t rows, adcp_error *err);

/* Full verification (spec 01 §9.4): every chunk whole (length, chunk digest,
 * every segment) streamed through the envelope hasher, compared with the
 * header's revision_content_sha256 and canonical_byte_count. If fn is given it
 * receives each chunk after that chunk verified (the envelope is checked after
 * the last one: a caller that must not act before the end should buffer).
 * account_id NULL = operator check across accounts. Same errors as paged reads. */
int adcp_ledger_verify_revision(adcp_ledger *l, const char *account_id, const char *revision_id,
                                adcp_ledger_chunk_fn fn, void *ctx, adcp_error *err);

/* Maps an operator code to the buyer-facing code (spec 02 §10.4):
 * ROWS_UNAVAILABLE, ROWS_INTEGRITY_FAILED, STATE_UNAVAILABLE and provider
 * failures → SERVICE_UNAVAILABLE; ROWS_EXPIRED and REFERENCE_NOT_FOUND →
 * REFERENCE_NOT_FOUND (no disclosure); 0 → 0; others unchanged. */
int adcp_ledger_buyer_code(int operator_code);

/* ---- host reads (spec 03 §9) -------------------------------------------------------- */

/* The obligation's current revision (the highest revision_number: official is
 * terminal and numbering is gapless), in one index lookup. *found = 0 when the
 * obligation has no revision or is not the account's. */
int adcp_ledger_get_current_revision(adcp_revision_header *out, int *found, adcp_ledger *l, const char *account_id,
                                     const char *obligation_id, adcp_error *err);

typedef struct adcp_revision_list {
  adcp_revision_header *items;
  size_t count;
  char *next_cursor;     /* NULL when no more rows exist */
} adcp_revision_list;

/* Current revisions of the account's obligations with period_start in
 * [from, to) (either may be NULL for unbounded), ordered by (period_start,
 * obligation_id); obligations without a revision are omitted. limit 0 = 100,
 * at most 1000. cursor is the next_cursor of the previous page (base64url of
 * {"start":…,"id":…}, as JS writes it) or NULL. INVALID_INPUT for a bad cursor. */
int adcp_ledger_list_current_revisions(adcp_revision_list *out, adcp_ledger *l, const char *account_id,
                                       const char *from, const char *to, size_t limit, const char *cursor,
                                       adcp_error *err);
void adcp_revision_list_free(adcp_revision_list *list);

/* Revision IDs for operator sweeps (verify --all): every revision, or one
 * account's, in (account_id, recorded_at, revision_id) order. */
int adcp_ledger_list_revision_ids(char ***out, size_t *count, adcp_ledger *l, const char *account_id,
                                  adcp_error *err);
void adcp_ledger_ids_free(char **ids, size_t count);

/* Normalises an RFC 3339 instant (date-only allowed: midnight UTC) to UTC
 * "YYYY-MM-DDTHH:MM:SS.ffffffZ". INVALID_INPUT otherwise. */
int adcp_ledger_normalize_instant(char out[32], const char *text, adcp_error *err);

#ifdef __cplusplus
}
#endif
#endif
