/* adcp/inline.h — the `inline` room: the staging store (immutable,
 * account-qualified, content-addressed source objects) and the seal store
 * ("first committed seal wins" manifests for byte-identical replay after a
 * restart), spec 06, on SQLite and PostgreSQL.
 *
 * A store borrows one connection (never opens, owns or closes it) and is used
 * by one thread at a time; open one store per connection. Every operation
 * runs in its own short READ COMMITTED transaction that locks both tables
 * (PostgreSQL ACCESS SHARE) and re-audits the required catalog objects
 * before touching a row. Rows are only ever inserted.
 *
 * Errors carry a fixed, secret-free message (spec 06 §7) and never driver
 * text, SQL, account IDs, keys or bytes:
 *   ADCP_EINVALID_INPUT     "inline storage input is invalid"
 *   ADCP_ENOT_FOUND         "inline object is unavailable within the supplied account"
 *   ADCP_EINTEGRITY_FAILED  "inline storage integrity verification failed"
 *   ADCP_ESCHEMA_UNREADY    "inline storage schema is not ready" (check_ready
 *                           appends the first drifted object's key)
 *   ADCP_ESTATE_UNAVAILABLE "inline storage operation did not confirm an outcome;
 *                           resume the same identity" — the commit may have
 *                           happened: repeat the same call (same bytes, or the
 *                           same account and key); dedupe and first-winner
 *                           make the retry converge. */
#ifndef ADCP_INLINE_H
#define ADCP_INLINE_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/sql.h"

ADCP_BEGIN_DECLS

#define ADCP_INLINE_MAX_PAYLOAD_BYTES 16777216u /* staging cap (INLINE_STAGING_MAX_BYTES) */
#define ADCP_INLINE_MAX_MANIFEST_BYTES 1048576u /* seal manifest cap */
#define ADCP_INLINE_ORDINAL_LIMIT 100000        /* 0 <= ordinal < limit */
#define ADCP_INLINE_REF_PREFIX "pg-inline-v1."
#define ADCP_INLINE_ENCODING "canonical_json_utf8_v1"
/* "pg-inline-v1." + 64 + "." + 64 + NUL */
#define ADCP_INLINE_REF_MAX 143

typedef struct adcp_inline_store adcp_inline_store;

/* Test hook: called at named points ("after_commit"); a nonzero return makes
 * the operation report ADCP_ESTATE_UNAVAILABLE from there, as if the
 * connection died after the database committed. NULL in production. */
typedef int (*adcp_inline_fault_fn)(void *ctx, const char *point);

typedef struct ADCP_VERSIONED adcp_inline_options {
  int version;                /* 1 */
  size_t max_payload_bytes;   /* 0 = ADCP_INLINE_MAX_PAYLOAD_BYTES; 1 … that value, else INVALID_INPUT */
  adcp_inline_fault_fn fault; /* testing only */
  void *fault_ctx;
} adcp_inline_options;
#define ADCP_INLINE_OPTIONS_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_INLINE_OPTIONS_INIT \
  { .version = ADCP_INLINE_OPTIONS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_INLINE_OPTIONS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_inline_options_init(adcp_inline_options *out, unsigned version);

/* Opens a store over a borrowed connection (SQLite or PostgreSQL). opts may
 * be NULL. Touches no table: a bad cap is INVALID_INPUT before any database
 * work. */
int adcp_inline_open(adcp_inline_store **out, adcp_sql_conn *conn, const adcp_inline_options *opts, adcp_error *err);
void adcp_inline_close(adcp_inline_store *st);

/* ---- staging ---------------------------------------------------------------- */

typedef struct adcp_inline_staged {
  char object_ref[ADCP_INLINE_REF_MAX + 1]; /* pg-inline-v1.<sha256(account)>.<generation> */
  char generation[65];                      /* lowercase hex SHA-256 of the payload */
} adcp_inline_staged;

/* Stages payload (len may be 0) for account_id (valid UTF-8, 1–255 code
 * points). execution_key (^[A-Za-z0-9_.:-]{8,255}$) and ordinal
 * (0 <= n < 100000) are validated but not stored: identical bytes within one
 * account dedupe to one row and one result whatever key or ordinal. The row
 * is read back and compared byte for byte before commit (INTEGRITY_FAILED on
 * any difference, rolled back). */
int adcp_inline_stage(adcp_inline_staged *out, adcp_inline_store *st, const char *account_id, const char *execution_key,
                      int64_t ordinal, const void *payload, size_t len, adcp_error *err);

/* Reads a staged object into out (reset first). generation must be 64
 * lowercase hex (INVALID_INPUT); object_ref must be the one minted for
 * account_id and generation, otherwise NOT_FOUND — a reference minted for
 * another account is indistinguishable from a missing object. Stored bytes
 * over this store's cap, or whose digest differs, are INTEGRITY_FAILED. */
int adcp_inline_read(adcp_buf *out, adcp_inline_store *st, const char *object_ref, const char *generation,
                     const char *account_id, adcp_error *err);

/* ---- seals ------------------------------------------------------------------ */

/* A sealed slice: the SourceBatchManifestReferenceV1 fields (encoding is
 * always canonical_json_utf8_v1) and the exact manifest bytes. As output of
 * get/put, manifest is an owned copy (free with adcp_inline_sealed_clear);
 * as put's candidate it is borrowed. */
typedef struct adcp_inline_sealed {
  char staged_commit_ref[256]; /* ^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$ */
  char manifest_sha256[65];
  int64_t byte_count; /* 1 … 1 048 576, equals manifest_len */
  uint8_t *manifest;
  size_t manifest_len;
} adcp_inline_sealed;

void adcp_inline_sealed_clear(adcp_inline_sealed *s);

/* The committed seal for (account_id, execution_key). *found = 0 and no
 * error when none exists. A stored seal failing any check (reference
 * pattern, size, digest, UTF-8, JSON, manifest shape, canonical bytes,
 * identity) is INTEGRITY_FAILED. */
int adcp_inline_seal_get(adcp_inline_sealed *out, int *found, adcp_inline_store *st, const char *account_id,
                         const char *execution_key, adcp_error *err);

/* Seals candidate unless a seal was committed first; *out receives the
 * winner either way (*won = 1 when it is this candidate's row, may be NULL).
 * Callers must publish out, never their own candidate. A defective
 * candidate is INVALID_INPUT before any database work, even when a valid
 * winner exists. */
int adcp_inline_seal_put(adcp_inline_sealed *out, int *won, adcp_inline_store *st, const char *account_id,
                         const char *execution_key, const adcp_inline_sealed *candidate, adcp_error *err);

/* Manifest validity of spec 06 §3, steps 1–7, in order, without a database:
 * 0 or ADCP_EINVALID_INPUT (fixed message). Exposed for callers that build
 * candidates. */
int adcp_inline_manifest_validate(const char *account_id, const char *execution_key, const adcp_inline_sealed *s,
                                  adcp_error *err);

/* ---- readiness -------------------------------------------------------------- */

/* Audits the required catalog objects (PostgreSQL: the 31 fingerprints of
 * spec 06 Appendix A, plus session_replication_role = origin; SQLite: the
 * exact schema text of migration 0005 and ignore_check_constraints off) in a
 * read-only transaction; never changes the schema or reads tenant rows.
 * ADCP_ESCHEMA_UNREADY names the first problem ("missing …", "changed …",
 * "disabled …"); report (may be NULL) receives all of them (free with
 * adcp_catalog_report_free). */
int adcp_inline_check_ready(adcp_catalog_report **report, adcp_inline_store *st, adcp_error *err);

/* ref = pg-inline-v1.<sha256(account)>.<generation> into out.
 * Errors: ADCP_EINVALID_INPUT (account or generation), ADCP_ENOMEM. */
int adcp_inline_object_ref(char out[ADCP_INLINE_REF_MAX + 1], const char *account_id, const char *generation,
                           adcp_error *err);

ADCP_END_DECLS
#endif
