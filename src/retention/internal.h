/* retention/internal.h — what the retention files share: one pass's clock
 * (database now, the window cutoff, the feed-hold cutoff), its usable object
 * bindings, the fixed parameter layout every classification query uses, the
 * SQL fragments of the eligibility rule, and attempt backoff. Not installed. */
#ifndef ADCP_RETENTION_INTERNAL_H
#define ADCP_RETENTION_INTERNAL_H

#include "adcp/retention.h"

/* Parameters of every classification query: $1 now, $2 cutoff (now - W),
 * $3 hold cutoff (now - max_feed_hold_days), $4 account filter (NULL = all),
 * $5.. the usable object binding IDs. */
typedef struct rpass {
  adcp_ledger *l;
  adcp_sql_conn *c;
  int pg;
  adcp_retention_policy pol;
  int64_t window_days;
  int fixed_clock; /* as_of given: phase re-checks keep it */
  char now[32], cutoff[32], hold_cutoff[32];
  const char *account;
  char **ids;
  size_t nids;
  adcp_sql_param *p;
  size_t np;
} rpass;

/* Checks the policy and account, reads the clock (or as_of, which must not
 * be after it), loads the usable bindings. adcp_retention__pass_end frees. */
int adcp_retention__pass_begin(rpass *rp, adcp_ledger *l, const adcp_retention_policy *policy, const char *account_id,
                               const char *as_of, adcp_error *err);
void adcp_retention__pass_end(rpass *rp);
/* Re-reads the database clock (not with as_of) and recomputes the cutoffs. */
int adcp_retention__pass_refresh(rpass *rp, adcp_error *err);

/* Expands a SQL template: "@TS" -> "::timestamptz" on PostgreSQL (nothing on
 * SQLite), "@NOW" -> the dialect's clock call, "@UNUSABLE" -> a predicate on
 * s.row_binding_id true when it is not one of the usable bindings. */
int adcp_retention__sql(adcp_buf *out, const rpass *rp, const char *tmpl);

/* Eligibility fragments over an obligation aliased `o` (spec 03 §6.2). */
#define RET_AGE \
  "o.period_end <= $2@TS AND coalesce((SELECT max(r.recorded_at) FROM adcp_reporting_revisions r WHERE " \
  "r.obligation_id = o.obligation_id), o.created_at) <= $2@TS AND NOT EXISTS (SELECT 1 FROM " \
  "adcp_reporting_adjustments a WHERE a.obligation_id = o.obligation_id AND a.recorded_at > $2@TS)"
#define RET_ACCOUNT "(CAST($4 AS TEXT) IS NULL OR o.account_id = $4)"
#define RET_NO_TOMB \
  "NOT EXISTS (SELECT 1 FROM adcp_reporting_obligation_tombstones t WHERE t.obligation_id = o.obligation_id)"
#define RET_LEASE "(o.lease_expires_at IS NOT NULL AND o.lease_expires_at > $1@TS)"
#define RET_XHOLD \
  "EXISTS (SELECT 1 FROM adcp_reporting_retention_holds h WHERE h.account_id = o.account_id AND " \
  "(h.obligation_id IS NULL OR h.obligation_id = o.obligation_id) AND (h.expires_at IS NULL OR h.expires_at > " \
  "$1@TS))"
#define RET_FEEDHOLD \
  "o.obligation_id IN (SELECT ch.obligation_id FROM adcp_reporting_feed_consumers f JOIN " \
  "adcp_reporting_changes ch ON f.account_id IS NULL AND (ch.xid, ch.seq) > (f.cursor_xid, f.cursor_seq) WHERE " \
  "f.updated_at > $3@TS UNION SELECT ch.obligation_id FROM adcp_reporting_feed_consumers f JOIN " \
  "adcp_reporting_changes ch ON f.account_id = ch.account_id AND ch.seq > f.cursor_seq WHERE f.updated_at > $3@TS)"
#define RET_UNCONF \
  "EXISTS (SELECT 1 FROM adcp_reporting_row_sets s WHERE s.obligation_id = o.obligation_id AND s.rows_state " \
  "<> 'pruned' AND s.row_binding_id <> 'postgres' AND @UNUSABLE)"
#define RET_BACKOFF(op) \
  "EXISTS (SELECT 1 FROM adcp_reporting_retention_attempts x WHERE x.obligation_id = o.obligation_id AND " \
  "x.operation = '" op "' AND x.next_attempt_at > $1@TS)"

/* The next attempt instant of a period that failed before (NULL: never failed). */
#define RET_NEXT_ATTEMPT(op) \
  "(SELECT x.next_attempt_at FROM adcp_reporting_retention_attempts x WHERE x.obligation_id = " \
  "o.obligation_id AND x.operation = '" op "')"

/* Classes of an age-eligible period, in precedence order (0 = a candidate). */
enum {
  RET_CANDIDATE = 0,
  RET_PROTECTED = 1,
  RET_HELD_EXPLICIT = 2,
  RET_HELD_FEED = 3,
  RET_UNCONFIGURED = 4,
  RET_STALLED = 5
};

/* Counts of the age-eligible periods without a tombstone per class (and
 * the oldest by period_end), and of `retiring` tombstones (classes 0, 4, 5
 * only). retire.c. */
typedef struct ret_classes {
  uint64_t n[6];
  char oldest_id[6][ADCP_LEDGER_ID_MAX];
  char oldest_at[6][32];
} ret_classes;
int adcp_retention__classify(ret_classes *out, rpass *rp, int retiring, adcp_error *err);

/* A read-only snapshot (PostgreSQL: REPEATABLE READ) for the counts and the
 * candidate list of one pass; the caller rolls it back. */
int adcp_retention__snapshot_begin(rpass *rp, adcp_error *err);

/* Records a failed attempt (backoff 1 min doubling to 1 h from the database
 * clock) and the failure in the counters. Never fails the pass. */
void adcp_retention__record_failure(rpass *rp, adcp_retention_counters *out, const char *operation,
                                    const char *obligation_id, const char *account_id, int code, const char *message);
/* Drops the attempt row after a success. */
void adcp_retention__clear_attempts(rpass *rp, const char *operation, const char *obligation_id);

#endif
