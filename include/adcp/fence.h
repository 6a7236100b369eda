/* adcp/fence.h — the ownership fence of object bindings (spec 04 §6,
 * docs/fence.md): a database claim (table adcp_reporting_orphan_collector_fences)
 * plus a create-only epoch chain `{prefix}/{namespace_key}/_collector-fence/
 * {epoch:016d}.json` in the bucket, so one database at a time may delete or
 * adopt objects under a binding's owned prefix. The fence room implements it
 * (src/fence/) over a binding view the ledger builds (src/fence/view.h); the
 * ledger-handle entry points (acquire, recheck, status, take-over, ...) are
 * declared in adcp/ledger.h, which includes this header. The intent sweep, row
 * pruning, retirement phase 2 and the orphan collector acquire it before
 * deleting, object-kind commits check it before adopting anything. Refusals are
 * results (a cause), never errors: a database or provider failure is a negative
 * ADCP_E* code instead.
 *
 * Threads: the record and key helpers here are pure and safe from any thread. */
#ifndef ADCP_FENCE_H
#define ADCP_FENCE_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"

ADCP_BEGIN_DECLS

typedef enum adcp_fence_cause {
  ADCP_FENCE_OK = 0,
  ADCP_FENCE_CLAIMED_ELSEWHERE,  /* "claimed_elsewhere": row of another owner_id or scope */
  ADCP_FENCE_ADVANCED,           /* "fence_advanced": a higher epoch than this database's exists */
  ADCP_FENCE_TOKEN_MISMATCH,     /* "token_mismatch": the object at our epoch carries another token */
  ADCP_FENCE_MISSING,            /* "fence_missing": our fence object is absent */
  ADCP_FENCE_REGRESSED,          /* "fence_regressed": table or chain below the epoch already seen */
  ADCP_FENCE_UNREADABLE,         /* "fence_unreadable": over 4096 bytes or not the §6.3 record */
  ADCP_FENCE_CLAIM_LOST,         /* "claim_lost": the row's epoch or token changed under us */
  ADCP_FENCE_MIGRATION_REQUIRED, /* "migration_required": no fence table */
  ADCP_FENCE_DATABASE_COPIED     /* "database_copied": the row was claimed by another database file/OID */
} adcp_fence_cause;

/* The snake_case name above ("ok" for ADCP_FENCE_OK). */
const char *adcp_fence_cause_name(adcp_fence_cause c);

#define ADCP_FENCE_RECORD_MAX 4096 /* reader cap, bytes (spec 04 §6.3) */
#define ADCP_FENCE_RECORD_VERSION "adcp.orphan_collector_fence.v1"
#define ADCP_FENCE_SCOPE_VERSION "adcp.orphan_collector_fence_scope.v1"
#define ADCP_FENCE_DIR "_collector-fence"
#define ADCP_FENCE_DEFAULT_OWNER_ID "adcp-ledger"

typedef struct adcp_fence_claim {
  char row_binding_id[129];
  char namespace_key[65];
  char scope_sha256[65];
  uint64_t epoch;       /* the epoch this process holds */
  char owner_token[33]; /* 32 lowercase hex */
} adcp_fence_claim;

/* ---- the record (pure functions; spec 04 §6.3, UNVERIFIED against JS) ---------- */

typedef struct adcp_fence_record {
  uint64_t epoch;
  char installation_id[37];
  char namespace_key[65];
  char owner_id[129];
  char owner_token[33];
  char row_binding_id[129];
  char scope_sha256[65];
} adcp_fence_record;

/* scope_sha256 = hex SHA-256 of JCS [ADCP_FENCE_SCOPE_VERSION, namespace_key, row_binding_id, identity_sha256].
 * Errors: ADCP_EINVALID_INPUT (an empty or malformed part), ADCP_ENOMEM. */
int adcp_fence_scope_sha256(char out[65], const char *namespace_key, const char *row_binding_id,
                            const char *identity_sha256, adcp_error *err);
/* The ONE encoder of the record bytes: JCS of the eight members, no newline. Replaces out's contents.
 * Errors: ADCP_EINVALID_INPUT (a member out of its grammar), ADCP_ENOMEM. */
int adcp_fence_record_encode(adcp_buf *out, const adcp_fence_record *r, adcp_error *err);
/* Strict reader: ADCP_EINVALID_INPUT unless bytes are at most ADCP_FENCE_RECORD_MAX, valid JSON, an
 * object with exactly the eight members of the right types and shapes, the known version, and
 * byte-identical to their canonical re-encoding. */
int adcp_fence_record_parse(adcp_fence_record *out, const uint8_t *bytes, size_t len, adcp_error *err);
/* "{prefix}/{namespace_key}/_collector-fence/{epoch:016d}.json" (epoch 1..10^16-1).
 * Errors: ADCP_EINVALID_INPUT (epoch out of range, a bad part), ADCP_ENOMEM. */
int adcp_fence_object_key(adcp_buf *out, const char *prefix, const char *namespace_key, uint64_t epoch, adcp_error *err);

/* 1 if key lies in a `_collector-fence/` directory directly under "{prefix}/{namespace_key}/" of
 * some prefix — a fence object, never a row object. A predicate; never fails. */
int adcp_fence_is_fence_key(const char *key);

/* 1 when id is a fence owner_id: ^[A-Za-z0-9_.:-]{1,128}$ (adcp_ledger_options.fence_owner_id).
 * Never fails; thread-safe. */
int adcp_ledger_fence_owner_is_valid(const char *id);

/* ---- operator views --------------------------------------------------------------- */

typedef struct adcp_fence_status_entry {
  char row_binding_id[129];
  int has_row;    /* 0: never claimed by this database */
  uint64_t epoch; /* table epoch (0 without a row) */
  char owner_id[129];
  char claimed_at[32], updated_at[32];
  uint64_t pending_epoch;     /* 0 = no advance in flight */
  int fingerprint_matches;    /* the row was claimed by this database (1 without a row) */
  uint64_t highest_epoch;     /* highest fence object listed (0 = none) */
  char highest_owner_id[129]; /* owner_id in that object ("" unreadable/none) */
  int holds;                  /* this database holds the claim (or none exists yet: first use claims) */
  adcp_fence_cause cause;     /* why not, when !holds */
  char detail[ADCP_ERROR_MESSAGE_MAX];
} adcp_fence_status_entry;

/* Test hook steps (adcp_ledger_options.fence_step_hook). */
enum adcp_fence_step {
  ADCP_FENCE_STEP_PENDING = 1,       /* the epoch + 1 intent is committed, object not yet written */
  ADCP_FENCE_STEP_OBJECT_WRITTEN = 2 /* the new fence object exists, the row is not yet advanced */
};

ADCP_END_DECLS
#endif
