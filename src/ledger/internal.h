/* ledger/internal.h — what the ledger files share: the handle, dialect-specific
 * SQL fragments, header loading, the verified-manifest cache and the mapping
 * of encoding-layer codes to ledger codes. Not installed. */
#ifndef ADCP_LEDGER_INTERNAL_H
#define ADCP_LEDGER_INTERNAL_H

#include "adcp/ledger.h"

#define LEDGER_ACCOUNT_LOCK_PREFIX "adcp-reporting-account:" /* the JS key (spec 02 §7.1) */

typedef struct manifest_cache_entry {
  char revision_id[ADCP_LEDGER_ID_MAX];
  char row_manifest_sha256[65];
  adcp_chunk_manifest *ms;
  size_t n;
  uint64_t stamp; /* LRU clock */
} manifest_cache_entry;

struct adcp_ledger {
  adcp_sql_conn *conn;
  adcp_sql_dialect dialect;
  char ns[257];
  int binding_registered;
  /* Header SELECTs, built once per dialect (statement caches key on text). */
  char *sql_header_by_id, *sql_header_by_id_any, *sql_header_current;
  manifest_cache_entry *cache;
  size_t cache_cap;
  uint64_t cache_clock;
  adcp_json_doc doc;  /* scratch for manifest and line parsing */
  adcp_buf scratch;
};

/* Extra row-set facts loaded with a header. */
typedef struct ledger_rowset {
  int present;
  char row_binding_kind[16];
  char digest_profile[32];
  char content_sha256[65], row_manifest_sha256[65];
  char account_id[ADCP_LEDGER_ID_MAX], obligation_id[ADCP_LEDGER_ID_MAX];
  uint64_t row_count, canonical_byte_count, chunk_count;
} ledger_rowset;

/* Loads a header; mode 0 = by revision ID + account, 1 = by revision ID (any
 * account), 2 = current revision of (obligation ID = a, account = b).
 * *found = 0 when nothing matched. rs may be NULL. */
int ledger_load_header(adcp_revision_header *h, ledger_rowset *rs, int *found, adcp_ledger *l, int mode,
                       const char *a, const char *b, adcp_error *err);
/* Reads the header columns of the current row (the column order of the header SELECTs). */
int ledger_header_from_row(adcp_revision_header *h, ledger_rowset *rs, adcp_sql_rows *r, adcp_error *err);
/* The SELECT list + FROM of the header queries (for list queries). */
const char *ledger_header_select(adcp_sql_dialect d);

/* Registers the implicit `postgres` binding once per handle (spec 02 §5.3). */
int ledger_register_binding(adcp_ledger *l, adcp_error *err);

/* Encoding-layer failures (MANIFEST_MISMATCH, CHUNK_INTEGRITY_FAILED,
 * ENVELOPE_INTEGRITY_FAILED) become ROWS_INTEGRITY_FAILED keeping the precise
 * reason in the message. Returns the mapped code. */
int ledger_map_read_error(int rc, adcp_error *err);

/* Verified manifests of a row set (from the cache or the chunk records),
 * checked against the header (spec 01 §9.2). The returned array is owned by
 * the cache when *owned == 0, else the caller frees it. */
int ledger_load_manifests(adcp_chunk_manifest **ms, size_t *n, int *owned, adcp_ledger *l,
                          const adcp_revision_header *h, const ledger_rowset *rs, adcp_error *err);

/* Row-set state and header cross-checks before any read (spec 01 §9.1, 02 §10.1). */
int ledger_check_rowset(const adcp_revision_header *h, const ledger_rowset *rs, adcp_error *err);

/* Copies s into a fixed buffer; INVALID_INPUT when it does not fit. */
int ledger_copy(char *dst, size_t n, const char *s, const char *what, adcp_error *err);
/* Identifier check ^[A-Za-z0-9_.:-]{1,255}$ (revision/obligation) or 1..255 chars (account). */
int ledger_check_id(const char *s, int pattern, const char *what, adcp_error *err);

#endif
