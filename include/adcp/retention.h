/* adcp/retention.h — the `retention` room (spec 03 §6, docs/retention.md):
 * policy and the window rule, obligation tombstones, three-phase period
 * retirement, row-only pruning, explicit holds, attempt backoff, and the
 * status views an operator (or the issue outbox) reads.
 *
 * Everything works on an open adcp_ledger (its connection, bindings and
 * locks: this room has no locking rules of its own). Every instant comes from
 * the database clock. A pass is bounded (limit) and resumable: a crash at any
 * point leaves work the next pass finishes. Retirement cannot be undone —
 * hosts enable it explicitly.
 *
 * Errors: INVALID_INPUT (policy, identifiers, as_of), REFERENCE_NOT_FOUND
 * (holds), CONTENT_CONFLICT (a hold on a period already retiring), STORAGE,
 * ENOMEM. Per-period failures inside a pass are counted, never returned.
 *
 * Threads: a pass or hold call uses the ledger handle (one thread at a time,
 * adcp/ledger.h); concurrent workers use separate handles (on PostgreSQL a
 * period another worker is retiring is skipped). */
#ifndef ADCP_RETENTION_H
#define ADCP_RETENTION_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/ledger.h"

ADCP_BEGIN_DECLS

#define ADCP_RETENTION_DEFAULT_LIMIT 100
#define ADCP_RETENTION_DEFAULT_CHANGE_DAYS 30
#define ADCP_RETENTION_DEFAULT_HOLD_DAYS 7
#define ADCP_RETENTION_MAX_DAYS 36500
#define ADCP_RETENTION_FAILURES_MAX 8

/* ---- policy (spec 03 §6.1) ---------------------------------------------------- */

typedef struct ADCP_VERSIONED adcp_retention_policy {
  int version;                          /* 1 */
  int64_t status_retention_days;        /* required, 1..36500: the advertised window */
  int64_t ledger_record_retention_days; /* 0 = status_retention_days; shorter is refused */
  int64_t change_retention_days;        /* 0 = 30 (change pruning) */
  int64_t max_feed_hold_days;           /* 0 = 7: cap on feed-consumer holds */
} adcp_retention_policy;
#define ADCP_RETENTION_POLICY_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_RETENTION_POLICY_INIT \
  { .version = ADCP_RETENTION_POLICY_VERSION }
/* Zeroes *out and sets its version (1..ADCP_RETENTION_POLICY_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_retention_policy_init(adcp_retention_policy *out, unsigned version);

/* Validates p and writes it with defaults filled into *out (may equal p).
 * INVALID_INPUT naming the rule broken (status missing, record shorter, …). */
int adcp_retention_policy_check(adcp_retention_policy *out, const adcp_retention_policy *p, adcp_error *err);
/* The effective window W in days: max(status, record) of a checked policy. */
int64_t adcp_retention_window_days(const adcp_retention_policy *p);

/* ---- one pass ---------------------------------------------------------------------- */

/* Test-only pause points (kill -9 tests); NULL hook in production. */
enum adcp_retention_step {
  ADCP_RETENTION_STEP_PHASE1 = 1,       /* retirement: tombstone committed, nothing deleted */
  ADCP_RETENTION_STEP_PHASE2 = 2,       /* retirement: the first external object deleted */
  ADCP_RETENTION_STEP_PHASE3 = 3,       /* retirement: records deleted, COMMIT next */
  ADCP_RETENTION_STEP_PRUNE_MARKED = 4, /* pruning: row set marked pruning */
  ADCP_RETENTION_STEP_PRUNE_FREED = 5,  /* pruning: first bytes freed, not yet marked pruned */
};

typedef struct ADCP_VERSIONED adcp_retention_options {
  int version;                         /* 1 */
  const adcp_retention_policy *policy; /* required (checked) */
  const char *account_id;              /* NULL = every account */
  size_t limit;                        /* periods (row sets for pruning) per pass; 0 = 100 */
  int dry_run;                         /* count what would be done; change nothing */
  /* NULL = the database clock. Otherwise evaluate as of this RFC 3339
   * instant, which must not lie after the database clock (INVALID_INPUT):
   * an earlier clock is only ever more conservative, never early. */
  const char *as_of;
  const atomic_int *stop;                /* non-zero: stop between periods */
  int (*step_hook)(void *ctx, int step); /* test hook; non-zero return aborts the pass there */
  void *step_ctx;
} adcp_retention_options;
#define ADCP_RETENTION_OPTIONS_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_RETENTION_OPTIONS_INIT \
  { .version = ADCP_RETENTION_OPTIONS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_RETENTION_OPTIONS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_retention_options_init(adcp_retention_options *out, unsigned version);

typedef struct adcp_retention_failure {
  char obligation_id[ADCP_LEDGER_ID_MAX];
  int code;
  char message[ADCP_ERROR_MESSAGE_MAX]; /* secret-free */
} adcp_retention_failure;

/* Counters of one pass (spec 03 §8.2). Every period (row set) age-eligible
 * at the pass's instant is counted in exactly one of: done (retired/pruned),
 * failed, held, protected, skipped_unconfigured, stalled, pending. */
typedef struct adcp_retention_counters {
  uint64_t done;                 /* retired periods / pruned row sets (dry run: would be) */
  uint64_t failed;               /* attempts that failed (now in backoff); causes in failures[] */
  uint64_t held;                 /* kept by a hold: explicit, or a live feed consumer behind its changes */
  uint64_t protected_;           /* kept by an unexpired obligation lease */
  uint64_t skipped_unconfigured; /* bytes in an object binding not usable here: not tried, no limit used */
  uint64_t stalled;              /* in backoff after failures: not tried, no limit used */
  uint64_t pending;              /* eligible, left by the limit or a stop */
  uint64_t resumed;              /* of done: periods that were already retiring (resumed) */
  uint64_t objects_deleted;      /* external objects deleted at their pinned version */
  uint64_t objects_kept;         /* pruning: objects still named by a live row set (header-only) */
  uint64_t bodies_deleted;       /* postgres-kind chunk bodies deleted */
  uint64_t bytes_freed;          /* stored bytes freed (bodies + objects' physical bytes) */
  size_t n_failures;
  adcp_retention_failure failures[ADCP_RETENTION_FAILURES_MAX];
} adcp_retention_counters;

/* One retirement pass (spec 03 §6.2-§6.3, §6.6): candidates are periods
 * already `retiring` first, then age-eligible ones by (period_end,
 * obligation_id); periods held, protected, in backoff or whose row bytes lie
 * in a binding not usable here are excluded in the candidate query itself
 * (they never occupy a slot) and counted. Per period: phase 1 re-checks every
 * hold under the account lock and writes the `retiring` tombstone (row sets
 * -> pruning); phase 2 deletes every external object at its pinned version
 * (absent is success), no transaction; phase 3 deletes the records (chunks,
 * row sets, bodies, adjustments, revisions, the obligation) under the account
 * lock, flips the tombstone to `retired` and appends the one `retirement`
 * change. A failure backs the period off (1 min doubling to 1 h). On
 * PostgreSQL a period another worker is retiring is skipped (try-lock).
 * Errors: ADCP_EINVALID_INPUT (options, policy), ADCP_ESTORAGE, ADCP_ENOMEM; a failed period (provider, fence,
 * conflict) is counted and backed off, not returned. */
int adcp_retention_retire(adcp_retention_counters *out, adcp_ledger *l, const adcp_retention_options *opts,
                          adcp_error *err);

/* Row-only pruning (`prune_expired_row_sets`, docs/retention.md): frees the
 * row bytes of row sets past the window while their records stay — a
 * superseded revision once its successor is older than W, and every row set
 * of an age-eligible period that retirement cannot take (lease or feed
 * consumer). Explicit holds keep bytes too. Per row set: mark `pruning` under
 * the account lock, free bytes nothing live still references (objects at
 * their pinned version; postgres-kind bodies under the account lock), mark
 * `pruned`. Pruned row sets read ROWS_EXPIRED. */
int adcp_retention_prune_rows(adcp_retention_counters *out, adcp_ledger *l, const adcp_retention_options *opts,
                              adcp_error *err);

/* ---- status ----------------------------------------------------------------------- */

typedef struct adcp_retention_bucket {
  uint64_t count;
  char oldest_obligation_id[ADCP_LEDGER_ID_MAX]; /* "" when count is 0 */
  char oldest_at[32];                            /* its period_end (retiring: its retiring_at) */
} adcp_retention_bucket;

typedef struct adcp_retention_status {
  char now[32];                   /* the instant evaluated (database clock) */
  char cutoff[32];                /* now - W: anchors at or before it are past the window */
  adcp_retention_bucket eligible; /* a retirement pass would take these */
  adcp_retention_bucket retiring; /* tombstone `retiring` (resumed first) */
  adcp_retention_bucket held;
  adcp_retention_bucket protected_;
  adcp_retention_bucket stalled; /* retirement in backoff (every operation: adcp_retention_list_stalled) */
  adcp_retention_bucket skipped_unconfigured;
  uint64_t retired; /* tombstones `retired` */
  uint64_t holds;   /* explicit holds in force */
  /* Periods with no tombstone (live, in any class or none), and the live
   * period that becomes age-eligible next: when (its newest anchor + W,
   * spec 03 §6.2) and which; "" when every live period is already past. */
  uint64_t live;
  char next_eligible_at[32];
  char next_eligible_obligation_id[ADCP_LEDGER_ID_MAX];
} adcp_retention_status;

/* Read-only. account_id NULL = every account; as_of as in the options.
 * Errors: ADCP_EINVALID_INPUT (policy, as_of after the database clock), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_retention_get_status(adcp_retention_status *out, adcp_ledger *l, const adcp_retention_policy *policy,
                              const char *account_id, const char *as_of, adcp_error *err);

/* Periods whose retirement or pruning has kept failing for at least
 * min_stalled_seconds since the first failure (for the issue outbox: raise
 * an issue per entry). Read-only; free with free(). */
typedef struct adcp_retention_stalled {
  char obligation_id[ADCP_LEDGER_ID_MAX];
  char account_id[ADCP_LEDGER_ID_MAX];
  char operation[16]; /* "retirement" / "row_pruning" */
  int64_t failures;
  char first_failed_at[32], last_failed_at[32], next_attempt_at[32];
  char last_cause[ADCP_ERROR_MESSAGE_MAX]; /* secret-free */
} adcp_retention_stalled;
/* Errors: ADCP_EINVALID_INPUT, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_retention_list_stalled(adcp_retention_stalled **out, size_t *count, adcp_ledger *l,
                                int64_t min_stalled_seconds, adcp_error *err);

/* ---- explicit holds ------------------------------------------------------------------- */

typedef struct adcp_retention_hold {
  char hold_id[129];
  char account_id[ADCP_LEDGER_ID_MAX];
  char obligation_id[ADCP_LEDGER_ID_MAX]; /* "" = every period of the account */
  char reason[513];
  char created_at[32];
  char expires_at[32]; /* "" = until removed */
  int active;          /* not expired */
} adcp_retention_hold;

/* Adds a hold (a hold-creating write: under the account lock; a period already
 * retiring or retired is CONTENT_CONFLICT; an existing hold_id is CONFLICT).
 * obligation_id NULL = the whole account; reason NULL = ""; expires_at NULL =
 * until removed (RFC 3339). Holds keep both records and row bytes. */
int adcp_retention_hold_add(adcp_ledger *l, const char *hold_id, const char *account_id, const char *obligation_id,
                            const char *reason, const char *expires_at, adcp_error *err);
/* REFERENCE_NOT_FOUND when there is no such hold. */
int adcp_retention_hold_remove(adcp_ledger *l, const char *hold_id, adcp_error *err);
/* Holds by ID; account_id NULL = all. Free *out with free().
 * Errors: ADCP_EINVALID_INPUT, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_retention_hold_list(adcp_retention_hold **out, size_t *count, adcp_ledger *l, const char *account_id,
                             adcp_error *err);

ADCP_END_DECLS
#endif
