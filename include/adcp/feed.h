/* adcp/feed.h — the `feed` layer (spec 03 §1-§5): change rows appended inside
 * the caller's transaction, changes_after over the account and deployment
 * feeds, the shared cursor layout, registered consumers and change pruning.
 *
 * The feed never decides *when* to append: the ledger does (after its account
 * lock, in the transaction that writes the record). Everything here works on
 * a borrowed adcp_sql_conn of a database migrated through 0004. Design and
 * guarantees: docs/feed.md.
 *
 * Threads: no global state; every call uses the borrowed connection, so one
 * thread at a time per connection. The cursor and JSON encoders are pure. */
#ifndef ADCP_FEED_H
#define ADCP_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/sql.h"

ADCP_BEGIN_DECLS

#define ADCP_FEED_DEFAULT_LIMIT 500
#define ADCP_FEED_MAX_LIMIT 10000
#define ADCP_FEED_DEFAULT_RETENTION_DAYS 30
#define ADCP_FEED_DEFAULT_HOLD_DAYS 7
#define ADCP_FEED_DEFAULT_PRUNE_LIMIT 10000
#define ADCP_FEED_ID_MAX 256
#define ADCP_FEED_CONSUMER_MAX 129 /* ^[A-Za-z0-9_.:-]{1,128}$ + NUL */

/* Record kinds; also bits of a kinds filter (0 = every kind). */
enum adcp_feed_kind {
  ADCP_FEED_OBLIGATION = 1,
  ADCP_FEED_REVISION = 2,
  ADCP_FEED_ADJUSTMENT = 4,
  ADCP_FEED_RETIREMENT = 8,
  ADCP_FEED_ALL_KINDS = 15,
};
/* "obligation", "revision", "adjustment", "retirement" (NULL for anything else). */
const char *adcp_feed_kind_name(int kind);
/* One kind by name; INVALID_INPUT naming the valid kinds otherwise. */
int adcp_feed_kind_parse(int *out, const char *name, adcp_error *err);
/* A comma-separated list ("revision,obligation") into a filter mask.
 * Errors: ADCP_EINVALID_INPUT naming the unknown kind. */
int adcp_feed_kinds_parse(unsigned *out, const char *list, adcp_error *err);

/* ---- cursors (spec 03 §3) ------------------------------------------------------ */

/* A position in one feed. account_id "" = the deployment-wide feed (xid is
 * then meaningful; SQLite's xid is always 0). */
typedef struct adcp_feed_position {
  char account_id[ADCP_FEED_ID_MAX];
  int64_t seq;
  uint64_t xid;
} adcp_feed_position;

/* Appends the cursor of p: base64url (no padding) of
 * {"v":1,"account":<string|null>,"seq":"<n>"[,"xid":"<n>"]} written exactly
 * as ECMAScript JSON.stringify writes it, so cursors compare equal across
 * SDKs. ENOMEM only. */
int adcp_feed_cursor_encode(adcp_buf *out, const adcp_feed_position *p);
/* Decodes a cursor for the feed of account_id (NULL or "" = deployment).
 * Accepts any valid JSON object (any key order, extra keys ignored).
 * INVALID_INPUT, each with its own message: not base64url, not a JSON
 * object, v is not 1, account scope differs, seq malformed, xid missing on a
 * deployment cursor or present on an account cursor. */
int adcp_feed_cursor_decode(adcp_feed_position *out, const char *cursor, const char *account_id, adcp_error *err);

/* ---- appending (called by the ledger) ------------------------------------------ */

/* Inserts one change row in the caller's open transaction. The caller holds
 * the account lock (spec 02 §7) so seq is drawn under it. kind is one
 * adcp_feed_kind. On PostgreSQL the insert is a deferred statement
 * (adcp_sql_exec_deferred): a database refusal is reported by the
 * transaction's next statement or its COMMIT, which then rolls back.
 * INVALID_INPUT outside a transaction; STORAGE_ERROR. */
int adcp_feed_append(adcp_sql_conn *c, const char *account_id, int kind, const char *record_id,
                     const char *obligation_id, adcp_error *err);

/* ---- reading (spec 03 §4) -------------------------------------------------------- */

typedef struct adcp_change {
  int kind; /* one adcp_feed_kind */
  int64_t seq;
  uint64_t xid; /* 0 on SQLite */
  char record_id[ADCP_FEED_ID_MAX];
  char obligation_id[ADCP_FEED_ID_MAX];
  char account_id[ADCP_FEED_ID_MAX];
  char recorded_at[32]; /* UTC, six fractional digits, Z */
} adcp_change;

typedef struct adcp_change_page {
  adcp_change *items;
  size_t count;
  char *cursor; /* always set: the last returned row, else the input (or start) position */
} adcp_change_page;

typedef struct ADCP_VERSIONED adcp_changes_query {
  int version;            /* 1 */
  const char *cursor;     /* NULL: from the oldest retained change */
  const char *account_id; /* NULL or "": deployment-wide feed */
  unsigned kinds;         /* adcp_feed_kind bits; 0 = all */
  size_t limit;           /* 0 = ADCP_FEED_DEFAULT_LIMIT; > ADCP_FEED_MAX_LIMIT is INVALID_INPUT */
} adcp_changes_query;
#define ADCP_CHANGES_QUERY_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_CHANGES_QUERY_INIT \
  { .version = ADCP_CHANGES_QUERY_VERSION }
/* Zeroes *out and sets its version (1..ADCP_CHANGES_QUERY_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_changes_query_init(adcp_changes_query *out, unsigned version);

/* One page of changes after the cursor, read in one snapshot. Account feed:
 * ordered by seq. Deployment feed: ordered by (xid, seq), only rows whose xid
 * is below the snapshot's xmin (PostgreSQL), so a transaction still in flight
 * is never passed. INVALID_INPUT (limit, cursor, account), CURSOR_EXPIRED
 * (the cursor is below the feed's pruning horizon: resynchronize, see
 * adcp_feed_head and docs/feed.md), STORAGE_ERROR. Free with
 * adcp_change_page_free (also after a failure). */
int adcp_feed_changes_after(adcp_change_page *out, adcp_sql_conn *c, const adcp_changes_query *q, adcp_error *err);
void adcp_change_page_free(adcp_change_page *p);
/* Appends one change as a JSON object (no newline): kind, record_id,
 * reporting_obligation_id, account_id, recorded_at, seq (and xid on the
 * deployment feed, as decimal strings). Errors: ADCP_ENOMEM. */
int adcp_change_write_json(adcp_buf *out, const adcp_change *ch, int deployment);

/* The head of a feed: pages through changes_after (no kind filter) until a
 * page is empty and returns that cursor (caller frees). Step 1 of the resync
 * after CURSOR_EXPIRED (spec 03 §9.3): keep the head, scan current revisions,
 * then resume from the head; changes committed meanwhile are seen twice,
 * never lost. */
int adcp_feed_head(char **out, adcp_sql_conn *c, const char *account_id, adcp_error *err);

/* ---- registered consumers (spec 03 §5) -------------------------------------------- */

typedef struct adcp_feed_consumer {
  char name[ADCP_FEED_CONSUMER_MAX];
  char account_id[ADCP_FEED_ID_MAX]; /* "" = deployment-wide */
  adcp_feed_position position;
  char *cursor; /* owned: the position as a cursor */
  char updated_at[32];
  int live; /* updated within the hold cap */
  /* Lag at the list's instant (database clock): changes of its feed after
   * its position, the age of the oldest of them (0 when caught up), and the
   * time since its position last moved (or it was registered). */
  int64_t lag_changes;
  double lag_seconds, age_seconds;
} adcp_feed_consumer;

/* Registers (or resets) a consumer at a cursor of its feed; cursor NULL = the
 * oldest retained change. INVALID_INPUT (name, cursor), CURSOR_EXPIRED. */
int adcp_feed_consumer_register(adcp_sql_conn *c, const char *name, const char *account_id, const char *cursor,
                                adcp_error *err);
/* Moves a registered consumer to a cursor of its feed and refreshes its
 * liveness. REFERENCE_NOT_FOUND (unknown name), INVALID_INPUT (cursor of
 * another feed, or behind the stored position), CURSOR_EXPIRED. */
int adcp_feed_consumer_advance(adcp_sql_conn *c, const char *name, const char *cursor, adcp_error *err);
/* Every consumer by name; live against hold_days (0 = default 7).
 * Errors: ADCP_EINVALID_INPUT (hold_days), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_feed_consumer_list(adcp_feed_consumer **out, size_t *count, adcp_sql_conn *c, int64_t hold_days, adcp_error *err);
void adcp_feed_consumers_free(adcp_feed_consumer *items, size_t count);
/* REFERENCE_NOT_FOUND when there is no such consumer. */
int adcp_feed_consumer_drop(adcp_sql_conn *c, const char *name, adcp_error *err);
/* Consumers updated within hold_days (0 = default): the startup check of
 * spec 03 §2 for a writer whose feed is off. Errors: ADCP_EINVALID_INPUT (hold_days), ADCP_ESTORAGE. */
int adcp_feed_live_consumers(int64_t *out, adcp_sql_conn *c, int64_t hold_days, adcp_error *err);
/* 1 in *held when a live consumer has not yet passed a change row of this
 * obligation (the hold period retirement must respect, spec 03 §5).
 * Errors: ADCP_EINVALID_INPUT, ADCP_ESTORAGE. */
int adcp_feed_obligation_held(int *held, adcp_sql_conn *c, const char *obligation_id, int64_t hold_days, adcp_error *err);

/* ---- pruning (spec 03 §5) ---------------------------------------------------------- */

typedef struct ADCP_VERSIONED adcp_feed_prune_options {
  int version;            /* 1 */
  int64_t retention_days; /* 0 = 30; rows older than this may go */
  int64_t hold_days;      /* 0 = 7; consumers silent longer hold nothing */
  size_t limit;           /* 0 = 10 000 rows per call */
} adcp_feed_prune_options;
#define ADCP_FEED_PRUNE_OPTIONS_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_FEED_PRUNE_OPTIONS_INIT \
  { .version = ADCP_FEED_PRUNE_OPTIONS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_FEED_PRUNE_OPTIONS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_feed_prune_options_init(adcp_feed_prune_options *out, unsigned version);

typedef struct adcp_feed_prune_result {
  uint64_t deleted;
  adcp_feed_position deployment_horizon; /* after the call */
} adcp_feed_prune_result;

/* Deletes at most limit old change rows no live consumer still needs, and in
 * the same transaction moves the deployment horizon to the largest deleted
 * (xid, seq) and each touched account's horizon to its largest deleted seq,
 * only ever forwards. No account lock. opts NULL = defaults.
 * Errors: ADCP_EINVALID_INPUT (options), ADCP_ECONFLICT, ADCP_ESTORAGE. */
int adcp_feed_prune(adcp_feed_prune_result *out, adcp_sql_conn *c, const adcp_feed_prune_options *opts, adcp_error *err);
/* The same pass, rolled back: out->deleted is what adcp_feed_prune would
 * delete now (maintain --dry-run); nothing changes.
 * Errors: as adcp_feed_prune (ADCP_EINVALID_INPUT, ADCP_ECONFLICT, ADCP_ESTORAGE). */
int adcp_feed_prune_preview(adcp_feed_prune_result *out, adcp_sql_conn *c, const adcp_feed_prune_options *opts,
                            adcp_error *err);

ADCP_END_DECLS

#endif
