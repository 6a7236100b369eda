/* adcp/principals.h — the `principals` room: two stores beside the ledger
 * over the same database (migration 0007, docs/principals.md):
 *
 *   - the principal store: the identities a reporting service resolves
 *     callers against (ID, account scope, display name, status, a JSON object
 *     of attributes, version, timestamps); writes are compare-and-set on
 *     version — exactly one row changes, or CONFLICT and nothing is written;
 *   - the subscription-state store, per principal: an append-only, gapless
 *     grant journal (the database refuses UPDATE, DELETE and any sequence but
 *     head + 1), exceptions (open/cleared per subject, CAS on version) and the
 *     engine's latest materialized snapshot (CAS on version; the version only
 *     grows and the journal position it reflects never goes back).
 *
 * A store borrows one connection (never opens, owns or closes it) and is used
 * by one thread at a time; open one store per connection for concurrent
 * writers. Identifiers pass adcp_ledger_check_identifier (valid UTF-8, no
 * control characters, 1-255 bytes).
 *
 * Errors: ADCP_EINVALID_INPUT (bad identifier, JSON, limit, cursor, version),
 * ADCP_ECONFLICT (a stale version: another writer won; re-read and retry),
 * ADCP_EREFERENCE_NOT_FOUND (no such principal), ADCP_ESTORAGE, ADCP_ENOMEM.
 * Messages never contain attribute or state values. */
#ifndef ADCP_PRINCIPALS_H
#define ADCP_PRINCIPALS_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/sql.h"

ADCP_BEGIN_DECLS

#define ADCP_PRINCIPAL_ID_MAX 256           /* identifiers are 1..255 bytes */
#define ADCP_PRINCIPAL_LIST_MAX 1000        /* largest page */
#define ADCP_PRINCIPAL_NAME_MAX 1024        /* display_name bytes */
#define ADCP_PRINCIPAL_ATTRIBUTES_MAX 65536 /* canonical attributes bytes */
#define ADCP_SUBSCRIPTION_STATE_MAX 1048576 /* canonical snapshot state bytes */
#define ADCP_SUBSCRIPTION_REASON_MAX 1024   /* exception reason bytes */

/* ---- principal store -------------------------------------------------------- */

typedef struct adcp_principal_store adcp_principal_store;

/* Opens a store over a borrowed, migrated connection. Touches no table.
 * Errors: ADCP_EINVALID_INPUT (no connection), ADCP_ENOMEM. */
int adcp_principals_open(adcp_principal_store **out, adcp_sql_conn *conn, adcp_error *err);
void adcp_principals_close(adcp_principal_store *ps);
/* 1 if what the store writes survives a crash (its connection is durable). A predicate; never fails. */
int adcp_principals_is_durable(const adcp_principal_store *ps);

typedef struct adcp_principal {
  char principal_id[ADCP_PRINCIPAL_ID_MAX];
  char account_scope[ADCP_PRINCIPAL_ID_MAX]; /* the account the principal acts for */
  char *display_name;                        /* owned; "" when none */
  char status[16];                           /* "active" | "disabled" */
  char *attributes_json;                     /* owned; RFC 8785 JSON object */
  int64_t version;                           /* 1 on create, +1 per write */
  char created_at[32], updated_at[32];       /* database clock, UTC, microseconds */
} adcp_principal;

/* Frees the owned strings and zeroes p. NULL is a no-op. */
void adcp_principal_clear(adcp_principal *p);
/* Appends p as one JSON object (no newline). Errors: ADCP_ENOMEM. */
int adcp_principal_write_json(adcp_buf *out, const adcp_principal *p);

typedef struct ADCP_VERSIONED adcp_principal_put {
  int version; /* 1 */
  const char *principal_id;
  const char *account_scope;
  const char *display_name;    /* NULL = "" */
  const char *attributes_json; /* NULL = {}; a JSON object, stored canonical (RFC 8785) */
  const char *status;          /* NULL = "active" on create, unchanged on update */
  /* 0 = create (an existing principal is CONFLICT); N >= 1 = replace the
   * record whose version is N (any other version is CONFLICT; a missing
   * principal is REFERENCE_NOT_FOUND). */
  int64_t expected_version;
} adcp_principal_put;
#define ADCP_PRINCIPAL_PUT_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_PRINCIPAL_PUT_INIT \
  { .version = ADCP_PRINCIPAL_PUT_VERSION }
/* Zeroes *out and sets its version (1..ADCP_PRINCIPAL_PUT_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_principal_put_init(adcp_principal_put *out, unsigned version);

/* Creates or replaces a principal with compare-and-set on version; *out
 * (may be NULL) receives the stored record. One statement: exactly one row
 * is written or nothing is.
 * Errors: ADCP_EINVALID_INPUT naming the field, ADCP_ECONFLICT (expected_version lost the compare-and-set),
 * ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_principal_upsert(adcp_principal *out, adcp_principal_store *ps, const adcp_principal_put *in, adcp_error *err);
/* The stored record, or REFERENCE_NOT_FOUND. */
int adcp_principal_get(adcp_principal *out, adcp_principal_store *ps, const char *principal_id, adcp_error *err);

typedef struct adcp_principal_page {
  adcp_principal *items;
  size_t count;
  char *next_cursor; /* NULL on the last page */
} adcp_principal_page;
void adcp_principal_page_free(adcp_principal_page *page);

/* Principals in principal_id byte order (keyset paging: the cursor is the
 * last ID of the previous page, so every page is one index range scan and
 * costs the same at any table size; rows inserted while paging never make a
 * row appear twice or an older row disappear). limit 1..1000 (0 = 100);
 * cursor NULL or "" = first page, else a next_cursor of this function.
 * Errors: ADCP_EINVALID_INPUT (limit, cursor), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_principal_list(adcp_principal_page *out, adcp_principal_store *ps, size_t limit, const char *cursor,
                        adcp_error *err);

/* Sets status "disabled" (version + 1). expected_version 0 = whatever the
 * current version is; N = only if it is N (else CONFLICT). Disabling a
 * disabled principal with expected_version 0 changes nothing and returns it. */
int adcp_principal_disable(adcp_principal *out, adcp_principal_store *ps, const char *principal_id,
                           int64_t expected_version, adcp_error *err);

/* ---- subscription-engine state store ---------------------------------------- */

typedef struct adcp_subscription_store adcp_subscription_store;

/* Errors: ADCP_EINVALID_INPUT (no connection), ADCP_ENOMEM. */
int adcp_subscriptions_open(adcp_subscription_store **out, adcp_sql_conn *conn, adcp_error *err);
void adcp_subscriptions_close(adcp_subscription_store *st);
/* A predicate; never fails. */
int adcp_subscriptions_is_durable(const adcp_subscription_store *st);

typedef enum adcp_grant_action {
  ADCP_GRANT = 1,
  ADCP_REVOKE = 2,
} adcp_grant_action;

const char *adcp_grant_action_name(adcp_grant_action a);
/* Errors: ADCP_EINVALID_INPUT (an unknown name). */
int adcp_grant_action_parse(adcp_grant_action *out, const char *name, adcp_error *err);

typedef struct adcp_grant_entry {
  int64_t seq; /* 1, 2, 3 … per principal, no gaps */
  adcp_grant_action action;
  char subject[ADCP_PRINCIPAL_ID_MAX]; /* what is granted (e.g. a report or feed) */
  char scope[ADCP_PRINCIPAL_ID_MAX];   /* where it applies (e.g. an account) */
  char recorded_at[32];
} adcp_grant_entry;

/* Appends one entry at head + 1 under a per-principal lock (PostgreSQL:
 * advisory transaction lock; SQLite: the writer lock), so concurrent appends
 * queue instead of failing. *out (may be NULL) receives the stored entry.
 * REFERENCE_NOT_FOUND for an unknown principal. */
int adcp_subscription_append(adcp_grant_entry *out, adcp_subscription_store *st, const char *principal_id,
                             adcp_grant_action action, const char *subject, const char *scope, adcp_error *err);

typedef struct adcp_grant_page {
  adcp_grant_entry *items;
  size_t count;
  int64_t head; /* the journal's last seq when read (0 = empty) */
} adcp_grant_page;
void adcp_grant_page_free(adcp_grant_page *page);

/* Entries with seq > after_seq in seq order, at most limit (1..1000, 0 = 100).
 * REFERENCE_NOT_FOUND for an unknown principal. */
int adcp_subscription_journal(adcp_grant_page *out, adcp_subscription_store *st, const char *principal_id,
                              int64_t after_seq, size_t limit, adcp_error *err);

typedef struct adcp_subscription_exception {
  char subject[ADCP_PRINCIPAL_ID_MAX];
  char state[16]; /* "open" | "cleared" */
  char *reason;   /* owned; "" when none */
  int64_t version;
  char opened_at[32], updated_at[32];
} adcp_subscription_exception;

void adcp_subscription_exception_clear(adcp_subscription_exception *e);

/* Opens or updates the exception of (principal, subject) with CAS:
 * expected_version 0 = create (exists → CONFLICT), N = replace version N.
 * state "open" or "cleared"; reason NULL = "". */
int adcp_subscription_exception_put(adcp_subscription_exception *out, adcp_subscription_store *st,
                                    const char *principal_id, const char *subject, const char *state,
                                    const char *reason, int64_t expected_version, adcp_error *err);

typedef struct adcp_exception_list {
  adcp_subscription_exception *items;
  size_t count;
  char *next_cursor; /* NULL on the last page */
} adcp_exception_list;
void adcp_exception_list_free(adcp_exception_list *l);

/* A principal's exceptions in subject order (keyset paged like principals).
 * Errors: ADCP_EINVALID_INPUT (ids, limit, cursor), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_subscription_exceptions(adcp_exception_list *out, adcp_subscription_store *st, const char *principal_id,
                                 size_t limit, const char *cursor, adcp_error *err);

typedef struct adcp_subscription_snapshot {
  int64_t version;     /* grows by one per write */
  int64_t journal_seq; /* the journal position the state reflects */
  char *state_json;    /* owned; RFC 8785 JSON */
  char updated_at[32];
} adcp_subscription_snapshot;

void adcp_subscription_snapshot_clear(adcp_subscription_snapshot *s);

/* The latest snapshot; *found = 0 (no error) when none was written yet.
 * REFERENCE_NOT_FOUND for an unknown principal. */
int adcp_subscription_snapshot_get(adcp_subscription_snapshot *out, int *found, adcp_subscription_store *st,
                                   const char *principal_id, adcp_error *err);

/* Writes the snapshot with CAS: expected_version 0 = the first snapshot
 * (exists → CONFLICT), N = replace version N (stale → CONFLICT). journal_seq
 * must be <= the journal head (INVALID_INPUT) and >= the stored snapshot's
 * (CONFLICT: a writer that materialized less of the journal is stale). */
int adcp_subscription_snapshot_put(adcp_subscription_snapshot *out, adcp_subscription_store *st,
                                   const char *principal_id, int64_t expected_version, int64_t journal_seq,
                                   const char *state_json, adcp_error *err);

ADCP_END_DECLS
#endif
