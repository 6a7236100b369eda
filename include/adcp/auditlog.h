/* adcp/auditlog.h — the audit log's append half (room src/auditlog, below
 * the ledger, a peer of feed; docs/trust.md): the Merkle hashing of RFC 9162
 * §2.1, the header digest's RETURNING list and the leaf appends the ledger's
 * commit and period retirement make inside their own transactions, and the
 * retirement document's writer and strict parser. Uses only the sql, json
 * and core rooms. Reading the log back (tree heads, checkpoints, the audit,
 * proofs) is adcp/audit.h, which includes this header.
 *
 * Errors: ADCP_EINVALID_INPUT, ADCP_EINTEGRITY_FAILED, ADCP_ECONFLICT,
 * ADCP_ESTORAGE, ADCP_ENOMEM (per function below).
 *
 * Threads: no global state; every function works on the connection it is
 * given (one thread at a time, adcp/sql.h) or on its arguments. */
#ifndef ADCP_AUDITLOG_H
#define ADCP_AUDITLOG_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/sql.h"

ADCP_BEGIN_DECLS

#define ADCP_AUDIT_HEADER_PROFILE "adcp-header-v1"
#define ADCP_AUDIT_RETIREMENT_PROFILE "adcp-retirement-v1" /* strict schema: docs/trust.md */
#define ADCP_AUDIT_RETIREMENT_MAX 100000                   /* revisions one retirement document may list */
#define ADCP_AUDIT_MAX_PATH 64                             /* audit path / consistency proof entries */
/* ---- Merkle tree (RFC 9162 §2.1), pure ------------------------------------ */

typedef uint8_t adcp_hash32[32];

/* SHA-256(0x00 || data) and SHA-256(0x01 || left || right). */
void adcp_merkle_leaf_hash(uint8_t out[32], const void *data, size_t len);
void adcp_merkle_node_hash(uint8_t out[32], const uint8_t left[32], const uint8_t right[32]);

/* Hash of the complete, aligned subtree of 2^level leaves starting at leaf
 * `start` (start is a multiple of 2^level). A source answers it from memory
 * or from the stored nodes. */
typedef int (*adcp_merkle_subtree_fn)(void *ctx, uint64_t start, unsigned level, uint8_t out[32], adcp_error *err);

/* MTH(D[0:n]) (n = 0: SHA-256 of the empty string). Errors: ADCP_EINVALID_INPUT, or fn's own code. */
int adcp_merkle_root(uint8_t out[32], uint64_t n, adcp_merkle_subtree_fn fn, void *ctx, adcp_error *err);
/* PATH(m, D[0:n]) (RFC 9162 §2.1.3.1): *count entries into path (capacity ADCP_AUDIT_MAX_PATH).
 * Errors: ADCP_EINVALID_INPUT (m >= n, capacity), ADCP_EINTERNAL, or fn's own code. */
int adcp_merkle_inclusion_proof(adcp_hash32 *path, size_t *count, uint64_t m, uint64_t n, adcp_merkle_subtree_fn fn,
                                void *ctx, adcp_error *err);
/* PROOF(m, D[0:n]) (RFC 9162 §2.1.4.1), 0 < m <= n.
 * Errors: ADCP_EINVALID_INPUT (m outside 1..n, capacity), ADCP_EINTERNAL, or fn's own code. */
int adcp_merkle_consistency_proof(adcp_hash32 *proof, size_t *count, uint64_t m, uint64_t n, adcp_merkle_subtree_fn fn,
                                  void *ctx, adcp_error *err);
/* Verifiers (RFC 9162 §2.1.3.2 and §2.1.4.2): 1 when the proof holds, else 0. Never fails. */
int adcp_merkle_verify_inclusion(uint64_t index, uint64_t size, const uint8_t leaf[32], const adcp_hash32 *path,
                                 size_t count, const uint8_t root[32]);
/* Never fails. */
int adcp_merkle_verify_consistency(uint64_t m, uint64_t n, const uint8_t root_m[32], const uint8_t root_n[32],
                                   const adcp_hash32 *proof, size_t count);

/* An in-memory tree over leaf hashes (every level kept: 2n hashes). */
typedef struct adcp_merkle_mem {
  adcp_hash32 *levels[64];
  uint64_t counts[64];
  unsigned n_levels;
} adcp_merkle_mem;
/* Builds every level over n leaf hashes (copied). Errors: ADCP_ENOMEM. */
int adcp_merkle_mem_build(adcp_merkle_mem *t, const adcp_hash32 *leaves, uint64_t n, adcp_error *err);
void adcp_merkle_mem_free(adcp_merkle_mem *t);
/* An adcp_merkle_subtree_fn over an adcp_merkle_mem (ctx = the tree).
 * Errors: ADCP_EINTERNAL (a range outside the tree). */
int adcp_merkle_mem_subtree(void *ctx, uint64_t start, unsigned level, uint8_t out[32], adcp_error *err);

/* ---- appends ------------------------------------------------------------------ */

/* The RETURNING list (after the word RETURNING) for an INSERT INTO
 * adcp_reporting_revisions: the header columns exactly as the audit reads
 * them back, and the log's next leaf index. The committing INSERT then hands
 * the leaf its digest without a second read of the header. Static storage. */
const char *adcp_audit_header_returning(adcp_sql_dialect d);
/* Appends the revision's header digest as the next leaf of its account's
 * log (the header object as the leaf's document), from a header row that
 * statement returned (positioned on its row by adcp_sql_next). Must run
 * inside the committing transaction, after the header (and its row set) were
 * inserted, under the account lock: the leaf and the revision then commit or
 * vanish together. *leaf_index may be NULL. adcp_audit_append_revision
 * (adcp/audit.h) does the same by revision ID.
 * Errors: ADCP_EINTEGRITY_FAILED, ADCP_ECONFLICT, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_audit_append_revision_row(uint64_t *leaf_index, adcp_sql_conn *conn, adcp_sql_rows *header, adcp_error *err);

/* PostgreSQL, one round trip (issue 32): the header INSERT and its leaf in
 * one statement. The committer renders the 20 header columns it is about to
 * store, in the forms the engine returns them (instants as
 * ADCP_SQL_PG_INSTANT text, the row set's chunk count), and
 * adcp_audit_leaf_prepare computes the leaf (digest, leaf hash, document)
 * from them; adcp_audit_header_leaf_sql wraps the INSERT (parameters up to
 * $first-1; the revision, obligation and account IDs at $rev, $obl, $acct)
 * into one statement that also appends the leaf as $first..$first+2
 * (adcp_audit_leaf_params) with the nodes it closes, and returns the stored
 * header columns, the leaf index and the count of nodes written;
 * adcp_audit_header_leaf_check then requires that the stored header hashes
 * to the prepared digest and that every closed node was written, so a leaf
 * can never log other values than the row it commits with. */
typedef struct adcp_audit_leaf {
  char entry_sha256[65];
  char leaf_hash[65];
  adcp_buf document; /* the header object (JCS), NUL-terminated */
} adcp_audit_leaf;
/* header: the 20 columns in adcp_audit_header_returning's order.
 * ADCP_EINVALID_INPUT, ADCP_ENOMEM. Free with adcp_audit_leaf_free. */
int adcp_audit_leaf_prepare(adcp_audit_leaf *out, const adcp_sql_param header[20], adcp_error *err);
void adcp_audit_leaf_free(adcp_audit_leaf *leaf);
/* The leaf's three parameters, for $first..$first+2. */
void adcp_audit_leaf_params(adcp_sql_param out[3], const adcp_audit_leaf *leaf);
/* Appends the statement to out (reset first). ADCP_ENOMEM. */
int adcp_audit_header_leaf_sql(adcp_buf *out, const char *insert, int rev, int obl, int acct, int first);
/* r positioned on the statement's row. ADCP_EINTEGRITY_FAILED when the stored
 * header does not hash to the leaf's digest or a subtree hash is missing. */
int adcp_audit_header_leaf_check(uint64_t *leaf_index, const adcp_audit_leaf *leaf, adcp_sql_rows *r, adcp_error *err);

/* A retirement record (period retirement, phase 3): what was retired, and
 * when. Appended as a leaf of profile adcp-retirement-v1 (docs/trust.md)
 * whose document lists every logged revision of the obligation as
 * {header_sha256, leaf_index, revision_id} of its newest leaf in the
 * account; those leaves hold the header objects, so the audit reads the
 * logged period end and recorded_at there, not in the editable tables. The
 * transaction and lock rules of the revision append above: call it in the retirement transaction
 * under the account lock (leaves are never deleted). Revisions without a
 * leaf (committed before the log existed) are not listed. */
typedef struct ADCP_VERSIONED adcp_audit_retirement {
  int version; /* 2 */
  const char *account_id;
  const char *obligation_id;
  const char *record_id;                 /* the tombstone's ID (unique among retirement leaves) */
  const char *period_start, *period_end; /* RFC 3339 as stored */
  const char *retired_at;                /* database clock, RFC 3339 UTC */
  const char *const *revision_ids;       /* the revisions deleted */
  size_t n_revisions;
  int64_t retention_days; /* the window retention applied (informational: the audit uses its own) */
} adcp_audit_retirement;
#define ADCP_AUDIT_RETIREMENT_VERSION 2
/* Static initializer: the version set, every other field zero. */
#define ADCP_AUDIT_RETIREMENT_INIT \
  { .version = ADCP_AUDIT_RETIREMENT_VERSION }
/* Zeroes *out and sets its version (1..ADCP_AUDIT_RETIREMENT_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_audit_retirement_init(adcp_audit_retirement *out, unsigned version);
/* Errors: ADCP_EINVALID_INPUT (the record), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_audit_append_retirement(uint64_t *leaf_index, adcp_sql_conn *conn, const adcp_audit_retirement *rec,
                                 adcp_error *err);

/* A parsed adcp-retirement-v1 document. Parsing is strict: exactly the
 * profile's members and types, RFC 8785 canonical text, entries in leaf
 * order, instants that parse. */
typedef struct adcp_audit_retired_revision {
  char revision_id[256];
  uint64_t leaf_index;
  char header_sha256[65];
} adcp_audit_retired_revision;
typedef struct adcp_audit_retirement_doc {
  char account_id[256], obligation_id[256], record_id[256];
  char period_start[32], period_end[32], retired_at[32];
  int64_t retired_at_us, period_start_us, period_end_us; /* microseconds since 1970 UTC */
  uint64_t retention_days;
  adcp_audit_retired_revision *revisions; /* owned */
  size_t n_revisions;
} adcp_audit_retirement_doc;
/* INVALID_INPUT naming the first rule broken; ENOMEM. Pure (no database). */
int adcp_audit_retirement_parse(adcp_audit_retirement_doc *out, const char *json, size_t len, adcp_error *err);
void adcp_audit_retirement_doc_free(adcp_audit_retirement_doc *d);
/* RFC 3339 instant (Z or an offset, up to 6 fraction digits) to microseconds
 * since 1970 UTC. INVALID_INPUT when it is not one. */
int adcp_audit_instant_us(int64_t *out, const char *s, adcp_error *err);

ADCP_END_DECLS

#endif
