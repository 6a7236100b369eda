/* issues/internal.h — shared by the files of the `issues` room (store,
 * identity, lifecycle, outbox, escalation, claims, the ledger's conditions).
 * Not installed. */
#ifndef ADCP_ISSUES_INTERNAL_H
#define ADCP_ISSUES_INTERNAL_H

#include "adcp/issues.h"
#include "core/instant.h"

struct adcp_issues {
  adcp_sql_conn *conn; /* borrowed */
  adcp_sql_dialect dialect;
  int ready; /* 1 once a readiness check passed (never cached negative) */
};

/* Renders a statement for the store's dialect into out (size n):
 *   @ts(col)  an instant column as "YYYY-MM-DDTHH:MM:SS.ffffffZ" text
 *   @in(N)    parameter $N (that text) as an instant
 *   @now      the database clock as an instant
 *   @lock     " FOR UPDATE SKIP LOCKED" on PostgreSQL, "" on SQLite
 * Returns out. The templates are constants; values are always parameters. */
const char *adcp_issues__sql(const adcp_issues *s, char *out, size_t n, const char *tmpl);

/* base + delta_ms into out (-1 when base is malformed). */
int adcp_issues__shift(char out[32], const char *base, int64_t delta_ms);
/* Database clock + delta_ms as an instant string (32 bytes). */
int adcp_issues__now_plus(adcp_issues *s, char out[32], int64_t delta_ms, adcp_error *err);
/* RFC 3339 (or NULL = the database clock) into a normalized instant. */
int adcp_issues__instant(adcp_issues *s, char out[32], const char *text, adcp_error *err);

/* Input checks: account and consumer IDs (1..255 bytes), keys (1..511),
 * external_ref (0..1023): UTF-8, no control characters. INVALID_INPUT naming
 * the field. */
int adcp_issues__check_text(const char *v, size_t max, int allow_empty, const char *field, adcp_error *err);

/* Readiness with the positive result cached. */
int adcp_issues__ready(adcp_issues *s, adcp_error *err);
/* SCHEMA_BEHIND unless ready (the outbox operations). */
int adcp_issues__require_ready(adcp_issues *s, adcp_error *err);

/* BEGIN IMMEDIATE + the ledger's account lock. Rolls back on failure. */
int adcp_issues__begin_locked(adcp_issues *s, const char *account_id, adcp_error *err);
/* Rolls back and returns rc (err already set). */
int adcp_issues__abort(adcp_issues *s, int rc);

/* Columns of an occurrence, in this order, for adcp_issues__read_issue. */
#define ISSUES_LIFECYCLE_COLS \
  "account_id, issue_key, generation, issue_id, consumer_id, @ts(opened_at), issue_state, external_ref, @ts(retired_at)"
void adcp_issues__read_issue(adcp_issue *out, adcp_sql_rows *r, int col0);

/* The live occurrence of (account, key) into out, *found 1/0. */
int adcp_issues__get_live(adcp_issue *out, int *found, adcp_issues *s, const char *account_id, const char *issue_key,
                          adcp_error *err);

/* Inside the locked transaction: appends the event of a transition of
 * `issue` (kind, state after it, instant). *recorded = 1 when a row was
 * inserted (0: that (issue_id, kind) exists already). */
int adcp_issues__record(int *recorded, adcp_issues *s, const adcp_issue *issue, const char *kind,
                        const char *state_after, const char *occurred_at, adcp_error *err);

/* Inside the locked transaction: the resolved transition of a live
 * open/acknowledged occurrence (no-op for waived or none). */
int adcp_issues__retire_locked(adcp_issue_result *out, adcp_issues *s, const char *account_id, const char *issue_key,
                               const char *at, adcp_error *err);

void adcp_issues__copy(char *dst, size_t n, const char *src);

#endif
