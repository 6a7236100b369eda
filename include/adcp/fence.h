/* adcp/fence.h — the ownership fence of object bindings (spec 04 §6,
 * docs/fence.md): a database claim (table adcp_reporting_orphan_collector_fences)
 * plus a create-only epoch chain `{prefix}/{namespace_key}/_collector-fence/
 * {epoch:016d}.json` in the bucket, so one database at a time may delete or
 * adopt objects under a binding's owned prefix. The ledger room implements it
 * (src/ledger/fence*.c); the intent sweep, row pruning, retirement phase 2 and
 * the orphan collector acquire it before deleting, object-kind commits check it
 * before adopting anything. Refusals are results (a cause), never errors: a
 * database or provider failure is a negative ADCP_E* code instead.
 *
 * Threads: acquire, recheck and status use the ledger handle (one thread at a
 * time) and the binding's provider (safe from many threads); the record and key
 * helpers are pure and safe from any thread. */
#ifndef ADCP_FENCE_H
#define ADCP_FENCE_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/ledger.h"

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

#define ADCP_FENCE_RECORD_MAX 4096       /* reader cap, bytes (spec 04 §6.3) */
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
int adcp_fence_object_key(adcp_buf *out, const char *prefix, const char *namespace_key, uint64_t epoch,
                          adcp_error *err);

/* ---- the claim (spec 04 §6.4-§6.7) ------------------------------------------------ */

/* Before any destructive or adopting object operation on one object binding: claim protocol of
 * spec 04 §6.4 — the row (epoch, owner_id, scope, database fingerprint), the highest fence object
 * equal to the recorded claim and carrying its token, the epoch + 1 intent (pending_*) under a fresh
 * token committed, create-only write of the new fence object, its token read back, the row advanced,
 * predecessors pruned (the newest two kept) — and ADVANCE the claim to a new epoch. No row yet =
 * first claim (epoch 1). Returns 0 with *out_cause = ADCP_FENCE_OK and *out filled when this
 * database holds the claim; 0 with another cause when refused; a negative ADCP_E* when the database
 * or the provider failed (a failure is never reported as a refusal).
 * Errors: ADCP_ESTATE_UNAVAILABLE (not a configured object binding), ADCP_EPROVIDER_UNAVAILABLE,
 * ADCP_EDEADLINE_EXCEEDED, ADCP_EUNSAFE_BINDING, ADCP_EINTEGRITY_FAILED (a fence object that does not parse),
 * ADCP_ECONFLICT, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_fence_acquire(adcp_fence_claim *out, adcp_fence_cause *out_cause, adcp_ledger *l,
                       const char *row_binding_id, adcp_error *err);

/* Re-validates a held claim (spec 04 §6.5): the table row, our fence object, no higher epoch listed.
 * Same return convention. A sibling process on the same database that advanced the claim meanwhile
 * does not make it fail: the claim is updated in place to the row's newer epoch (after checking that
 * epoch's object).
 * Errors: as adcp_fence_acquire (ADCP_EPROVIDER_UNAVAILABLE, ADCP_EINTEGRITY_FAILED, ADCP_ESTORAGE, …). */
int adcp_fence_recheck(adcp_fence_claim *claim, adcp_fence_cause *out_cause, adcp_ledger *l, adcp_error *err);

/* "{prefix}/{namespace_key}/_collector-fence/" of a binding (listings skip it; fence objects are
 * never collected).
 * Errors: ADCP_ESTATE_UNAVAILABLE (not a configured object binding), ADCP_EINVALID_INPUT (does not fit cap),
 * ADCP_ESTORAGE. */
int adcp_fence_key_prefix(char *out, size_t cap, adcp_ledger *l, const char *row_binding_id, adcp_error *err);

/* Starts a destructive pass: forgets this handle's cached validations, so the
 * next delete guard of every binding rechecks (or acquires) instead of trusting
 * a claim checked in an earlier pass. The intent sweep, retirement and row
 * pruning call it first. */
void adcp_fence_pass_begin(adcp_ledger *l);

/* 1 if key lies in a `_collector-fence/` directory directly under "{prefix}/{namespace_key}/" of
 * some prefix — a fence object, never a row object. A predicate; never fails. */
int adcp_fence_is_fence_key(const char *key);

/* This database's fingerprint as the fence records it: "sqlite:dev=D:ino=I" of the main file
 * ("sqlite:memory"), or "postgres:system=S:db=OID" (S = "unreadable" when the role may not call
 * pg_control_system()). A fence row with another fingerprint is database_copied.
 * Errors: ADCP_EINVALID_INPUT (does not fit cap), ADCP_ESTORAGE. */
int adcp_fence_database_fingerprint(char *out, size_t cap, adcp_ledger *l, adcp_error *err);

/* ---- operator views --------------------------------------------------------------- */

typedef struct adcp_fence_status_entry {
  char row_binding_id[129];
  int has_row;               /* 0: never claimed by this database */
  uint64_t epoch;            /* table epoch (0 without a row) */
  char owner_id[129];
  char claimed_at[32], updated_at[32];
  uint64_t pending_epoch;    /* 0 = no advance in flight */
  int fingerprint_matches;   /* the row was claimed by this database (1 without a row) */
  uint64_t highest_epoch;    /* highest fence object listed (0 = none) */
  char highest_owner_id[129]; /* owner_id in that object ("" unreadable/none) */
  int holds;                 /* this database holds the claim (or none exists yet: first use claims) */
  adcp_fence_cause cause;    /* why not, when !holds */
  char detail[ADCP_ERROR_MESSAGE_MAX];
} adcp_fence_status_entry;

/* Non-advancing status of every configured object binding (binding_id NULL) or of one. Reads only
 * (works on a read-only handle). *out is malloc'ed; free it.
 * Errors: ADCP_EREFERENCE_NOT_FOUND (an unknown binding_id), ADCP_EPROVIDER_UNAVAILABLE,
 * ADCP_EINTEGRITY_FAILED, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_fence_status(adcp_fence_status_entry **out, size_t *n, adcp_ledger *l, const char *binding_id,
                      adcp_error *err);

/* Deliberate takeover (spec 04 §6.7) after a restore, a copy, or moving collection elsewhere: in one
 * transaction set epoch = max(table epoch, highest listed fence, pending) + 1, this handle's owner_id,
 * a fresh token and this database's fingerprint (insert when absent); then write the fence object
 * create-only and clear the pending mark. INVALID_INPUT unless acknowledge_previous_owner_gone. The
 * previous holder sees fence_advanced at its next check. */
int adcp_fence_take_over(adcp_fence_claim *out, adcp_ledger *l, const char *row_binding_id,
                         int acknowledge_previous_owner_gone, adcp_error *err);

/* Test hook steps (adcp_ledger_options.fence_step_hook). */
enum adcp_fence_step {
  ADCP_FENCE_STEP_PENDING = 1,        /* the epoch + 1 intent is committed, object not yet written */
  ADCP_FENCE_STEP_OBJECT_WRITTEN = 2  /* the new fence object exists, the row is not yet advanced */
};

ADCP_END_DECLS
#endif
