/* adcp/issues.h — the `issues` room: the issue lifecycle (spec 07 §1-§3:
 * occurrences of a condition, identity, the operator state machine) and the
 * issue-event outbox (§4-§9: one event per transition, written in the
 * transition's transaction; escalation sweep; leased claims). Tables of
 * migration 0008 (additive). Decisions: docs/issues.md.
 *
 * A store borrows one connection (never opens, owns or closes it) and is used
 * by one thread at a time; open one store per connection for concurrent
 * workers. Every write is one transaction that takes the ledger's account
 * lock first (adcp_ledger_lock_account), so per-account transitions and their
 * events commit in one order, serialized with ledger writes of that account.
 *
 * Readiness: while 0008 is not applied (or its tables are incomplete),
 * lifecycle writes succeed and record nothing (result.ready = 0), and
 * sweep/claim/complete/release/prune refuse with REPORTING_SCHEMA_BEHIND.
 *
 * Errors: ADCP_EINVALID_INPUT, ADCP_EISSUE_STATE_TRANSITION_INVALID,
 * ADCP_EISSUE_STATE_NOT_OPERATOR_SETTABLE, ADCP_EISSUE_NOT_OPEN,
 * ADCP_ECONFLICT (account lock not acquired, or the issue_key is taken by
 * another account: issue_id hashes the key and generation only),
 * ADCP_EREPORTING_SCHEMA_BEHIND, ADCP_ESTORAGE, ADCP_ENOMEM. Messages never
 * contain keys, account IDs or driver text. */
#ifndef ADCP_ISSUES_H
#define ADCP_ISSUES_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/sql.h"

ADCP_BEGIN_DECLS

#define ADCP_ISSUE_KEY_MAX 512  /* issue_key: 1..511 bytes, UTF-8, no control characters */
#define ADCP_ISSUE_ID_LEN 37    /* "rpti_" + 32 */
#define ADCP_ISSUE_REF_MAX 1024 /* external_ref: 0..1023 bytes */
#define ADCP_ISSUE_ACCOUNT_MAX 256
#define ADCP_ISSUE_TOKEN_LEN 32 /* lease tokens: 32 lowercase hex */
/* Account scope of deployment-wide conditions (no tenant owns them). */
#define ADCP_ISSUES_DEPLOYMENT_ACCOUNT "adcp:deployment"

typedef struct adcp_issues adcp_issues;

/* Errors: ADCP_EINVALID_INPUT (no connection), ADCP_ENOMEM. */
int adcp_issues_open(adcp_issues **out, adcp_sql_conn *conn, adcp_error *err);
void adcp_issues_close(adcp_issues *s);

/* *ready = 1 when migration 0008's tables exist with every expected column,
 * constraint and index (docs/issues.md "Readiness"); 0 otherwise. Read-only;
 * never fails because the tables are absent. */
int adcp_issues_events_ready(int *ready, adcp_issues *s, adcp_error *err);

/* ---- identity (spec 07 §3, §5) ------------------------------------------- */

/* "rpti_" + first 32 chars of unpadded base64url(SHA-256(JCS(
 * ["core-issue-occurrence-v1", issue_key, generation]))).
 * Errors: ADCP_EINVALID_INPUT (key or generation), ADCP_ENOMEM. */
int adcp_issue_id(char out[ADCP_ISSUE_ID_LEN + 1], const char *issue_key, int64_t generation, adcp_error *err);
/* [P] "rpie_" + first 32 chars of unpadded base64url(SHA-256(JCS(
 * ["core-issue-event-v1", issue_id, kind]))) — the one place the rule lives.
 * Errors: ADCP_EINVALID_INPUT, ADCP_ENOMEM. */
int adcp_issue_event_id(char out[ADCP_ISSUE_ID_LEN + 1], const char *issue_id, const char *kind, adcp_error *err);

/* ---- lifecycle ------------------------------------------------------------ */

typedef struct adcp_issue {
  char account_id[ADCP_ISSUE_ACCOUNT_MAX];
  char issue_key[ADCP_ISSUE_KEY_MAX];
  int64_t generation;
  char issue_id[ADCP_ISSUE_ID_LEN + 1];
  char consumer_id[ADCP_ISSUE_ACCOUNT_MAX]; /* "" = seller-wide (NULL) */
  char opened_at[32];
  char state[16]; /* open / acknowledged / waived / resolved */
  char external_ref[ADCP_ISSUE_REF_MAX];
  char retired_at[32]; /* "" while open or acknowledged */
  /* Outbox view (0 when not ready): events of this occurrence not completed,
   * and dead-lettered ones (given up by a deliverer, see dead_letter). */
  int64_t pending_events;
  int64_t dead_letters;
} adcp_issue;

typedef struct adcp_issue_result {
  adcp_issue issue; /* the occurrence after the call (zeroed when none / not ready) */
  int found;        /* an occurrence is described in issue */
  int changed;      /* the call changed a row */
  int recorded;     /* an event was written */
  int ready;        /* migration 0008 is applied */
} adcp_issue_result;

/* Opens an occurrence of (account_id, issue_key) unless one is live (open,
 * acknowledged or waived), which is returned unchanged (changed = 0).
 * Otherwise generation = max + 1, issue_id derived, state open, opened_at =
 * observed_at (RFC 3339; NULL = the database clock), an `opened` event.
 * consumer_id NULL = seller-wide.
 * Errors: ADCP_EINVALID_INPUT naming the field, ADCP_ECONFLICT (the key's issue_id is another account's, or the
 * account lock timed out), ADCP_ESTORAGE. */
int adcp_issues_ensure_opened(adcp_issue_result *out, adcp_issues *s, const char *account_id, const char *issue_key,
                              const char *consumer_id, const char *observed_at, adcp_error *err);

/* Operator transition to "acknowledged" or "waived" (spec 07 §2). Requesting
 * the current state changes nothing but external_ref (replaced only when
 * non-NULL) and records nothing. at NULL = database clock.
 * ISSUE_STATE_NOT_OPERATOR_SETTABLE for any other state name,
 * ISSUE_NOT_OPEN without a live occurrence, ISSUE_STATE_TRANSITION_INVALID
 * for waived -> acknowledged. */
int adcp_issues_set_state(adcp_issue_result *out, adcp_issues *s, const char *account_id, const char *issue_key,
                          const char *state, const char *at, const char *external_ref, adcp_error *err);

/* The condition cleared: a live open/acknowledged occurrence becomes
 * resolved (a `resolved` event). Convergent: none live, or waived, returns 0
 * with changed = 0. Errors: ADCP_EINVALID_INPUT, ADCP_ECONFLICT (lock timeout), ADCP_ESTORAGE. */
int adcp_issues_retire(adcp_issue_result *out, adcp_issues *s, const char *account_id, const char *issue_key,
                       const char *at, adcp_error *err);

/* The live occurrence of (account_id, issue_key), else the newest retired
 * one; or, with issue_key NULL and issue_id given, that occurrence. *found =
 * 0 when none (or not ready). Errors: ADCP_EINVALID_INPUT, ADCP_ESTORAGE. */
int adcp_issues_get(adcp_issue *out, int *found, adcp_issues *s, const char *account_id, const char *issue_key,
                    const char *issue_id, adcp_error *err);

typedef struct adcp_issue_filter {
  const char *account_id; /* NULL = every account */
  const char *key_prefix; /* NULL = every key */
  int include_retired;    /* 0 = live only */
  size_t limit;           /* 0 = 100, at most 1000 */
} adcp_issue_filter;

/* Occurrences by (account_id, opened_at, issue_id). Free with free().
 * Errors: ADCP_EINVALID_INPUT (limit, prefix), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_issues_list(adcp_issue **out, size_t *count, adcp_issues *s, const adcp_issue_filter *filter, adcp_error *err);

/* ---- escalation (spec 07 §7) ----------------------------------------------- */

/* Settles one candidate under its account lock, inside the sweep's
 * transaction (the connection may be used for reads): *present = 0 when the
 * condition has cleared (the sweep resolves it instead of escalating). */
typedef int (*adcp_issue_settle_fn)(void *ctx, adcp_sql_conn *conn, const adcp_issue *issue, int *present, adcp_error *err);

typedef struct adcp_escalation_counters {
  int64_t escalated; /* `escalated` events recorded */
  int64_t resolved;  /* cleared conditions resolved instead */
  int64_t failed;    /* accounts whose settlement failed (rolled back) */
  int64_t skipped;   /* candidates another sweeper or writer settled first */
  int64_t pending;   /* candidates left by the limit */
  char first_failure[ADCP_ERROR_MESSAGE_MAX];
} adcp_escalation_counters;

/* Records `escalated` once per published (open or acknowledged) occurrence
 * whose opened_at + after_ms <= now (database clock), oldest first, at most
 * limit (0 = 100). Each account is settled under its lock first: settle
 * (NULL = every condition is still present) may clear a candidate, which is
 * then resolved. after_ms must be > 0. dry_run counts candidates into
 * pending and writes nothing.
 * Errors: ADCP_EINVALID_INPUT (after_ms), ADCP_EREPORTING_SCHEMA_BEHIND (0008 not ready), ADCP_ESTORAGE,
 * ADCP_ENOMEM; an account whose settlement failed is counted in failed. */
int adcp_issues_sweep_escalations(adcp_escalation_counters *out, adcp_issues *s, int64_t after_ms, size_t limit,
                                  adcp_issue_settle_fn settle, void *settle_ctx, int dry_run, adcp_error *err);

/* ---- claims (spec 07 §8) ------------------------------------------------------ */

typedef struct adcp_issue_event {
  char event_id[ADCP_ISSUE_ID_LEN + 1];
  int64_t seq;
  char account_id[ADCP_ISSUE_ACCOUNT_MAX];
  char issue_id[ADCP_ISSUE_ID_LEN + 1];
  char issue_key[ADCP_ISSUE_KEY_MAX];
  int64_t generation;
  char consumer_id[ADCP_ISSUE_ACCOUNT_MAX]; /* "" = NULL */
  char kind[16];
  char issue_state[16];
  char occurred_at[32], recorded_at[32], available_at[32];
  char lease_token[ADCP_ISSUE_TOKEN_LEN + 1]; /* "" = not leased */
  char lease_expires_at[32];
  int64_t attempts;
  char completed_at[32], dead_lettered_at[32];
  /* The occurrence's external_ref when the event is claimed ("" = none): kept
   * until a new value is given (spec 07 §2), so every event after
   * `issue ack --external-ref R` carries R. */
  char external_ref[ADCP_ISSUE_REF_MAX];
} adcp_issue_event;

/* Claims up to limit (1..1000) events, each the earliest incomplete event of
 * its occurrence, available and not under an unexpired lease, in seq order;
 * each gets a fresh lease_token, lease_expires_at = now + lease_ms (> 0) and
 * attempts + 1. PostgreSQL: FOR UPDATE SKIP LOCKED, so concurrent claimers
 * get disjoint sets; SQLite: under the writer lock. *out (free()) may be
 * empty.
 * Errors: ADCP_EINVALID_INPUT (limit, lease), ADCP_EREPORTING_SCHEMA_BEHIND, ADCP_EIO (no randomness),
 * ADCP_ECONFLICT, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_issues_claim_events(adcp_issue_event **out, size_t *count, adcp_issues *s, size_t limit, int64_t lease_ms,
                             adcp_error *err);

/* One claimed event to settle. */
typedef struct adcp_issue_event_lease {
  const char *event_id;
  const char *lease_token;
} adcp_issue_event_lease;

/* Completes leased events in one transaction; ok[i] = 1 when event i was
 * incomplete and its lease (token and unexpired) still held, else 0 (a
 * stale lease: the event was or will be delivered again). ok may be NULL;
 * *completed (may be NULL) counts the ones completed.
 * Errors: ADCP_EINVALID_INPUT, ADCP_EREPORTING_SCHEMA_BEHIND, ADCP_ESTORAGE, ADCP_ENOMEM (a stale lease is
 * ok[i] = 0, not an error). */
int adcp_issues_complete_events(int *ok, int64_t *completed, adcp_issues *s, const adcp_issue_event_lease *leases,
                                size_t n, adcp_error *err);
/* The single-event forms: *ok = 1 when the lease held. Errors: as adcp_issues_complete_events.
 * Errors: as adcp_issues_complete_events (ADCP_EINVALID_INPUT, ADCP_EREPORTING_SCHEMA_BEHIND, ADCP_ESTORAGE). */
int adcp_issues_complete_event(int *ok, adcp_issues *s, const char *event_id, const char *lease_token, adcp_error *err);
/* Gives the event back: lease cleared, available_at = now + retry_after_ms
 * (>= 0). Token-matched and unexpired, else *ok = 0.
 * Errors: ADCP_EINVALID_INPUT (retry_after_ms < 0), ADCP_EREPORTING_SCHEMA_BEHIND, ADCP_ESTORAGE. */
int adcp_issues_release_event(int *ok, adcp_issues *s, const char *event_id, const char *lease_token,
                              int64_t retry_after_ms, adcp_error *err);
/* [P] Gives up on the event (a deliverer's last attempt failed): lease
 * cleared, dead_lettered_at = now. It is never claimed again, is not
 * completed (so never pruned), and no longer holds back later events of its
 * occurrence. Token-matched and unexpired, else *ok = 0.
 * Errors: ADCP_EINVALID_INPUT, ADCP_EREPORTING_SCHEMA_BEHIND, ADCP_ESTORAGE. */
int adcp_issues_dead_letter_event(int *ok, adcp_issues *s, const char *event_id, const char *lease_token, adcp_error *err);
/* Deletes completed events with completed_at < now - older_than_ms (>= 0),
 * at most limit (0 = 10,000) oldest first; never an incomplete one.
 * Errors: ADCP_EINVALID_INPUT (older_than_ms < 0), ADCP_EREPORTING_SCHEMA_BEHIND, ADCP_ESTORAGE. */
int adcp_issues_prune_events(int64_t *deleted, adcp_issues *s, int64_t older_than_ms, size_t limit, adcp_error *err);

/* Outbox counts (0 when not ready). */
typedef struct adcp_issue_event_stats {
  int64_t pending, leased, completed, dead_lettered;
} adcp_issue_event_stats;
/* Errors: ADCP_ESTORAGE. */
int adcp_issues_event_stats(adcp_issue_event_stats *out, adcp_issues *s, adcp_error *err);

/* Appends the event as one JSON object (no lease fields when leased is 0). Errors: ADCP_ENOMEM. */
int adcp_issue_event_write_json(adcp_buf *out, const adcp_issue_event *e, int with_lease);
/* Appends the occurrence as one JSON object. Errors: ADCP_ENOMEM. */
int adcp_issue_write_json(adcp_buf *out, const adcp_issue *i);

/* ---- the ledger's own conditions (docs/issues.md "issue_key schemes") ------ */

#define ADCP_ISSUE_KEY_REVISION_UNREADABLE "revision_unreadable:"   /* + revision_id */
#define ADCP_ISSUE_KEY_RETIREMENT_STALLED "retirement_stalled:"     /* + account_id ":" + obligation_id */
#define ADCP_ISSUE_KEY_COLLECTOR_FENCED "orphan_collector_fenced:"  /* + binding_id */
#define ADCP_ISSUE_KEY_INTENTS_UNCONFIGURED "intents_unconfigured:" /* + binding_id ":" + account_id */

/* After a verified read or verify of revision_id (of account_id): code
 * ROWS_INTEGRITY_FAILED or ROWS_UNAVAILABLE opens revision_unreadable:<id>;
 * 0 (verified) retires it; other codes change nothing. *result may be NULL. */
int adcp_issues_note_revision_verified(adcp_issue_result *result, adcp_issues *s, const char *account_id,
                                       const char *revision_id, int code, adcp_error *err);
/* A period stuck in retirement backoff past the caller's threshold (stalled =
 * 1) opens retirement_stalled:<account>:<obligation>; stalled = 0 retires it.
 * Errors: as adcp_issues_ensure_opened / adcp_issues_retire (ADCP_EINVALID_INPUT, ADCP_ECONFLICT,
 * ADCP_ESTORAGE). */
int adcp_issues_note_retirement_stalled(adcp_issue_result *result, adcp_issues *s, const char *account_id,
                                        const char *obligation_id, int stalled, adcp_error *err);
/* The orphan collector of binding_id refused by its ownership fence (fenced =
 * 1) opens orphan_collector_fenced:<binding> in ADCP_ISSUES_DEPLOYMENT_ACCOUNT;
 * 0 retires it.
 * Errors: as adcp_issues_ensure_opened / adcp_issues_retire (ADCP_EINVALID_INPUT, ADCP_ECONFLICT,
 * ADCP_ESTORAGE). */
int adcp_issues_note_collector_fenced(adcp_issue_result *result, adcp_issues *s, const char *binding_id, int fenced,
                                      adcp_error *err);

/* One scan of the ledger's object-write intents (adcp_ledger_list_intents):
 * every (binding, account) with an intent of an unconfigured binding expired
 * for at least threshold_ms opens intents_unconfigured:<binding>:<account>;
 * live issues of that scheme with no such intent left are retired. The
 * ledger handle must use a connection other than the store's, or the same one
 * outside a transaction. */
struct adcp_ledger;
typedef struct adcp_intent_issue_counters {
  int64_t opened, resolved, present;
} adcp_intent_issue_counters;
/* Errors: ADCP_EINVALID_INPUT, ADCP_ECONFLICT, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_issues_scan_unconfigured_intents(adcp_intent_issue_counters *out, adcp_issues *s, struct adcp_ledger *l,
                                          int64_t threshold_ms, adcp_error *err);

ADCP_END_DECLS
#endif
