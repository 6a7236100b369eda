/* adcp/audit.h — tamper-evident history (room src/audit, docs/trust.md):
 *
 *   - header digests: header_sha256 = SHA-256 of the RFC 8785 form of every
 *     header field of a revision (profile "adcp-header-v1", docs/trust.md);
 *   - a per-account append-only Merkle log (RFC 9162 §2.1 hashing: leaf =
 *     SHA-256(0x00 || entry digest), node = SHA-256(0x01 || left || right)),
 *     one leaf per committed revision or retirement record, appended in commit
 *     order inside the committing transaction, under the account lock;
 *   - signed checkpoints (tree heads, Ed25519 via OpenSSL) whose keys live
 *     outside the database;
 *   - the audit (every header digest, every leaf, every stored or given
 *     checkpoint, consistency between consecutive checkpoints) and inclusion
 *     proofs a third party verifies offline.
 *
 * The append half (the Merkle hashing, the header digest and the leaf
 * appends) is the auditlog room below the ledger, adcp/auditlog.h, which
 * this header includes; the rest reads the database and never trusts it:
 * checkpoints are accepted only with a signature by a pinned public key.
 *
 * Errors: ADCP_EINVALID_INPUT (bad arguments, a document that does not parse),
 * ADCP_EINTEGRITY_FAILED (a signature or proof that does not verify, an audit
 * that found problems), ADCP_EREFERENCE_NOT_FOUND, ADCP_ESTORAGE, ADCP_ENOMEM.
 *
 * Threads: no global state. Every function works on the connection it is given
 * (one thread at a time, adcp/sql.h) or on its arguments; a loaded signer or
 * keyring is only read afterwards (each signature and verification uses its own
 * OpenSSL context), so it may be shared between threads. */
#ifndef ADCP_AUDIT_H
#define ADCP_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/auditlog.h"
#include "adcp/core.h"
#include "adcp/objects.h"
#include "adcp/sql.h"

ADCP_BEGIN_DECLS

#define ADCP_AUDIT_CHECKPOINT_PROFILE "adcp-checkpoint-v1"
#define ADCP_AUDIT_PROOF_PROFILE "adcp-inclusion-proof-v1"
#define ADCP_AUDIT_CHECKPOINT_DIR "_checkpoints" /* under a binding's owned prefix */

/* ---- header digest ---------------------------------------------------------- */

/* The canonical header object of a stored revision (profile adcp-header-v1,
 * JCS text into out) and its digest. REFERENCE_NOT_FOUND when the revision
 * (or its obligation) does not exist. */
int adcp_audit_header_object(adcp_buf *out, adcp_sql_conn *conn, const char *revision_id, adcp_error *err);
int adcp_audit_header_sha256(char out[65], adcp_sql_conn *conn, const char *revision_id, adcp_error *err);

/* ---- the log ------------------------------------------------------------------ */

/* Appends the committed revision's header digest as the next leaf of its
 * account's log, keeping the header object (JCS) as the leaf's document so
 * the log itself holds the logged period and recorded_at. Must run inside the committing transaction after the header
 * (and its row set) were inserted and under the account lock: the leaf and
 * the revision then commit or vanish together. *leaf_index may be NULL.
 * Errors: ADCP_EREFERENCE_NOT_FOUND (no such revision), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_audit_append_revision(uint64_t *leaf_index, adcp_sql_conn *conn, const char *revision_id, adcp_error *err);

/* Tree head of an account's log at its current size (read from the stored
 * complete-subtree hashes: O(log n) reads, never a recompute). */
typedef struct adcp_audit_head {
  uint64_t tree_size;
  char root_hash[65];
} adcp_audit_head;
/* Errors: ADCP_EINVALID_INPUT (account id), ADCP_EINTEGRITY_FAILED (a stored leaf that does not hash),
 * ADCP_ESTORAGE. */
int adcp_audit_tree_head(adcp_audit_head *out, adcp_sql_conn *conn, const char *account_id, adcp_error *err);
/* An adcp_merkle_subtree_fn over the stored log; ctx = adcp_audit_log_source. */
typedef struct adcp_audit_log_source {
  adcp_sql_conn *conn;
  const char *account_id;
} adcp_audit_log_source;
/* Errors: ADCP_EINTEGRITY_FAILED (a leaf missing or malformed), ADCP_EINVALID_INPUT, ADCP_ESTORAGE. */
int adcp_audit_log_subtree(void *ctx, uint64_t start, unsigned level, uint8_t out[32], adcp_error *err);

/* Every account with a log or a revision, sorted (caller frees with adcp_audit_ids_free).
 * Errors: ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_audit_list_accounts(char ***out, size_t *count, adcp_sql_conn *conn, adcp_error *err);
void adcp_audit_ids_free(char **ids, size_t count);

/* Revisions committed before the log existed (an upgraded database) have no
 * leaf: appends one per unlogged revision of the account, oldest first, in
 * one transaction under the account lock. Run it once after migration 0009,
 * then take a checkpoint; a revision inserted later around the commit path
 * would be adopted too, so the audit's revision_unlogged findings are the
 * list to review first. *appended may be NULL.
 * Errors: ADCP_EINVALID_INPUT, ADCP_ECONFLICT (lock timeout), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_audit_adopt_unlogged(uint64_t *appended, adcp_sql_conn *conn, const char *account_id, adcp_error *err);
/* The same, listing the revision IDs adopted (dry_run: that would be, and
 * nothing is written) into *adopted (caller frees with adcp_audit_ids_free).
 * INTEGRITY_FAILED, adopting nothing, when a candidate is in an impossible
 * order: it supersedes a revision that already has a leaf or that was
 * recorded after migration 0009 (a revision inserted around the commit path
 * with a backdated recorded_at). */
int adcp_audit_adopt(char ***adopted, size_t *count, adcp_sql_conn *conn, const char *account_id, int dry_run,
                     adcp_error *err);

/* Verify's header check (docs/trust.md): the stored header still hashes to
 * the digest of its newest leaf in its own account's log. ROWS_INTEGRITY_FAILED "header digest ..." when it does
 * not, or when the revision has no leaf and was recorded after migration
 * 0009 was applied (older ones predate the log: see adcp_audit_adopt_unlogged). */
int adcp_audit_check_revision(adcp_sql_conn *conn, const char *revision_id, adcp_error *err);

/* Whether a revision absent from the database is covered by a retirement:
 * a retirement leaf of the account whose document parses (strictly) and
 * lists it (with header_sha256, the digest of the leaf in question, when not
 * NULL). A classification for housekeeping (issue retirement); the audit
 * applies the full rules (docs/trust.md). obligation_id, when not NULL, must
 * be the retirement's. *retired = 1 when so. Errors: ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_audit_revision_retired(int *retired, adcp_sql_conn *conn, const char *account_id, const char *revision_id,
                                const char *header_sha256, const char *obligation_id, adcp_error *err);

/* ---- keys and checkpoints ------------------------------------------------------ */

typedef struct adcp_audit_signer adcp_audit_signer;
/* Loads an Ed25519 private key (PEM, PKCS#8: `openssl genpkey -algorithm
 * ed25519`) from a file. The key never enters the database or a message.
 * Errors: ADCP_EIO (the file), ADCP_EINVALID_INPUT (not an Ed25519 PKCS#8 key), ADCP_ENOMEM. */
int adcp_audit_signer_load(adcp_audit_signer **out, const char *pem_path, adcp_error *err);
void adcp_audit_signer_free(adcp_audit_signer *s);
/* key_id: the first 16 hex characters of SHA-256(raw 32-byte public key). */
const char *adcp_audit_signer_key_id(const adcp_audit_signer *s);
/* The raw public key as base64 (for pinning; caller frees). Errors: ADCP_ENOMEM. */
int adcp_audit_signer_public_b64(char **out, const adcp_audit_signer *s, adcp_error *err);

#define ADCP_AUDIT_KEYS_MAX 16
typedef struct adcp_audit_keyring {
  size_t count;
  uint8_t raw[ADCP_AUDIT_KEYS_MAX][32];
  char key_id[ADCP_AUDIT_KEYS_MAX][17];
} adcp_audit_keyring;
/* Adds a pinned public key given as base64 of the raw 32 bytes, base64 of
 * the DER SubjectPublicKeyInfo, or a PEM "PUBLIC KEY" block.
 * Errors: ADCP_EINVALID_INPUT (not an Ed25519 public key in one of those forms), ADCP_ENOMEM. */
int adcp_audit_keyring_add(adcp_audit_keyring *k, const char *text, size_t len, adcp_error *err);

typedef struct adcp_audit_checkpoint {
  char account_id[256];
  char account_key[65]; /* lowercase hex SHA-256 of the account ID's UTF-8 bytes */
  uint64_t tree_size;
  char root_hash[65];
  char timestamp[32]; /* database clock, RFC 3339 UTC with microseconds */
  char key_id[17];
  char signature[96]; /* base64 of the 64-byte Ed25519 signature */
  char *document;     /* the signed JCS document (owned) */
} adcp_audit_checkpoint;
void adcp_audit_checkpoint_free(adcp_audit_checkpoint *c);

/* Signs the account's current tree head and stores the document in
 * adcp_audit_checkpoints (insert-only). Takes the account lock in its own
 * transaction so the head is a committed prefix.
 * Errors: ADCP_EINVALID_INPUT, ADCP_EINTEGRITY_FAILED (the log does not hash), ADCP_ECONFLICT, ADCP_ESTORAGE,
 * ADCP_ENOMEM, ADCP_EINTERNAL (signing failed). */
int adcp_audit_checkpoint_create(adcp_audit_checkpoint *out, adcp_sql_conn *conn, const char *account_id,
                                 const adcp_audit_signer *signer, adcp_error *err);
/* Parses a checkpoint document (does not verify the signature).
 * Errors: ADCP_EINVALID_INPUT naming the member, ADCP_ENOMEM. */
int adcp_audit_checkpoint_parse(adcp_audit_checkpoint *out, const char *json, size_t len, adcp_error *err);
/* Signature by a pinned key (INTEGRITY_FAILED naming the reason, else 0). */
int adcp_audit_checkpoint_verify(const adcp_audit_checkpoint *c, const adcp_audit_keyring *keys, adcp_error *err);
/* Writes the document create-only to `_checkpoints/<account_key>/<tree_size
 * 20 digits>-<key_id>-<timestamp digits>.json` under the binding's prefix;
 * key_out (may be NULL, ADCP_OBJECT_KEY_MAX + 1) receives the key.
 * Errors: ADCP_EINVALID_INPUT, ADCP_ECONTENT_CONFLICT (other bytes at the key), ADCP_EPROVIDER_UNAVAILABLE,
 * ADCP_EDEADLINE_EXCEEDED, ADCP_EABORTED, ADCP_EUNSAFE_BINDING, ADCP_ENOMEM. */
int adcp_audit_checkpoint_publish(char *key_out, adcp_object_provider *p, const adcp_audit_checkpoint *c, adcp_error *err);
/* An object under _checkpoints/ that could not be read or parsed. */
typedef struct adcp_audit_fetch_problem {
  char key[ADCP_OBJECT_KEY_MAX + 1];
  char detail[ADCP_ERROR_MESSAGE_MAX];
} adcp_audit_fetch_problem;
/* Every checkpoint document under the binding's _checkpoints/ (parsed, not
 * verified; caller frees each and the array). With problems (may be NULL:
 * then the first unreadable object fails the call, INTEGRITY_FAILED), each
 * unreadable or unparsable object is listed there instead (caller frees the
 * array) and the fetch goes on; listing failures still fail the call.
 * Errors: ADCP_EPROVIDER_UNAVAILABLE, ADCP_EDEADLINE_EXCEEDED (the listing),
 * ADCP_EINTEGRITY_FAILED (without problems), ADCP_ENOMEM. */
int adcp_audit_checkpoints_fetch(adcp_audit_checkpoint **out, size_t *count, adcp_audit_fetch_problem **problems,
                                 size_t *n_problems, adcp_object_provider *p, adcp_error *err);
void adcp_audit_checkpoints_free(adcp_audit_checkpoint *items, size_t count);

/* ---- audit ---------------------------------------------------------------------- */

typedef struct adcp_audit_finding {
  const char *kind; /* header_edited, revision_missing, revision_unlogged, leaf_corrupt, leaf_duplicate,
                             leaf_foreign, log_gap, log_missing, node_mismatch, order_broken, checkpoint_mismatch,
                             checkpoint_beyond_log, checkpoint_untrusted, checkpoint_unreadable,
                             checkpoints_inconsistent, retirement_malformed, retirement_mismatch,
                             retirement_unlisted, retirement_premature, retirement_unchecked,
                             retirement_after_checkpoint (docs/trust.md) */
  const char *account_id;
  int64_t leaf_index;   /* -1 when not about one leaf */
  int64_t leaf_end;     /* a range [leaf_index, leaf_end) when the evidence allows no more; else -1 */
  const char *entry_id; /* revision / record ID (checkpoint_unreadable: the object key), "" when none */
  const char *detail;
} adcp_audit_finding;
typedef void (*adcp_audit_finding_fn)(void *ctx, const adcp_audit_finding *f);

typedef struct ADCP_VERSIONED adcp_audit_options {
  int version;                        /* 1 or 2 */
  const char *account_id;             /* NULL: every account */
  const adcp_audit_keyring *keys;     /* pinned keys; NULL or empty: checkpoints are not checked */
  const adcp_audit_checkpoint *extra; /* checkpoints from outside the database */
  size_t n_extra;
  int skip_stored_checkpoints; /* 1: only `extra` */
  adcp_audit_finding_fn on_finding;
  void *ctx;
  /* version 2: */
  int64_t retention_days;                   /* the window W (days) the auditor's host applies; 0 (and version 1):
                                           unknown, so no retirement can be shown due (retirement_unchecked) */
  const adcp_audit_fetch_problem *problems; /* outside checkpoint objects that did not read: checkpoint_unreadable */
  size_t n_problems;
} adcp_audit_options;
#define ADCP_AUDIT_OPTIONS_VERSION 2
/* The version that added retention_days, problems and n_problems. */
#define ADCP_AUDIT_OPTIONS_VERSION_RETENTION 2
/* Static initializer: the version set, every other field zero. */
#define ADCP_AUDIT_OPTIONS_INIT \
  { .version = ADCP_AUDIT_OPTIONS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_AUDIT_OPTIONS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_audit_options_init(adcp_audit_options *out, unsigned version);

/* Which evidence the run had (docs/trust.md, "What each mode detects"). */
enum adcp_audit_mode {
  ADCP_AUDIT_MODE_NO_KEY = 0,  /* no pinned key: the log against itself */
  ADCP_AUDIT_MODE_PINNED = 1,  /* pinned keys, but no checkpoint from outside the database verified */
  ADCP_AUDIT_MODE_OUTSIDE = 2, /* at least one outside checkpoint signed by a pinned key */
};

typedef struct adcp_audit_report {
  uint64_t accounts, leaves, headers, retired, checkpoints, consistency_proofs, findings;
  int mode;                     /* enum adcp_audit_mode */
  uint64_t outside_verified;    /* outside checkpoints whose signature verified */
  uint64_t outside_newest_size; /* tree size of the newest (by timestamp) of them */
  char outside_newest_at[32];   /* its timestamp, "" when none */
} adcp_audit_report;

/* Runs the audit. Returns 0 when it ran (findings counted in out->findings
 * and reported through on_finding), or a negative code when it could not.
 * Errors: ADCP_EINVALID_INPUT (options), ADCP_ESTORAGE, ADCP_ENOMEM (findings are not errors). */
int adcp_audit_run(adcp_audit_report *out, adcp_sql_conn *conn, const adcp_audit_options *opts, adcp_error *err);

/* ---- inclusion proofs ------------------------------------------------------------- */

/* An inclusion proof document (profile adcp-inclusion-proof-v1): the header
 * object, its leaf index, the audit path and the checkpoint it is against.
 * cp NULL: the latest stored checkpoint of the account that covers the leaf.
 * The proof is checked against the checkpoint's root before it is returned.
 * Errors: ADCP_EINVALID_INPUT, ADCP_EREFERENCE_NOT_FOUND (no such revision or no covering checkpoint),
 * ADCP_EINTEGRITY_FAILED (the proof does not reach the checkpoint's root), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_audit_prove(adcp_buf *out, adcp_sql_conn *conn, const char *account_id, const char *revision_id,
                     const adcp_audit_checkpoint *cp, adcp_error *err);

typedef struct adcp_audit_proof_info {
  char account_id[256];
  char revision_id[256];
  uint64_t leaf_index, tree_size;
  char header_sha256[65];
  char root_hash[65];
  char key_id[17];
  char timestamp[32];
  uint64_t row_count; /* from the header, for --rows */
} adcp_audit_proof_info;

/* Offline verification (no database): the header object hashes to the leaf,
 * the audit path leads to the checkpoint's root, the checkpoint is signed by
 * a key in `keys`; with rows (canonical or not, JSONL; may be NULL) they
 * encode to exactly the header's content digest, row manifest digest, row,
 * byte and chunk counts. INTEGRITY_FAILED naming the first failure. */
int adcp_audit_verify_proof(adcp_audit_proof_info *out, const char *proof, size_t len, const adcp_audit_keyring *keys,
                            const char *rows, size_t rows_len, adcp_error *err);

/* Gives the next JSONL line of the rows: 1 with *line and *len set (valid until
 * the next call; a trailing '\r' is dropped), 0 at the end, or a negative
 * ADCP_E* code with err set. */
typedef int (*adcp_audit_rows_fn)(void *ctx, const char **line, size_t *len, adcp_error *err);

/* As adcp_audit_verify_proof, with the rows read one line at a time from next
 * (NULL: no rows), so memory is one row's encoder state and one chunk whatever
 * the revision's size. Errors: ADCP_EINVALID_INPUT, ADCP_EINTEGRITY_FAILED, an
 * INVALID_ROW row (as adcp_audit_verify_proof), and next's own (ADCP_EIO). */
int adcp_audit_verify_proof_rows(adcp_audit_proof_info *out, const char *proof, size_t len,
                                 const adcp_audit_keyring *keys, adcp_audit_rows_fn next, void *ctx, adcp_error *err);

ADCP_END_DECLS
#endif
