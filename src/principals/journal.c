/* principals/journal.c — the subscription-state store handle and its grant
 * journal: per principal, entries appended at head + 1 under a per-principal
 * lock and never changed afterwards (the database refuses UPDATE and DELETE,
 * and any sequence but head + 1, migration 0007). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "principals/internal.h"

int adcp_subscriptions_open(adcp_subscription_store **out, adcp_sql_conn *conn, adcp_error *err) {
  if (!out || !conn) return adcp_error_set(err, ADCP_EINVALID_INPUT, "subscription store: no connection");
  adcp_subscription_store *st = calloc(1, sizeof *st);
  if (!st) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  st->c = conn;
  st->pg = adcp_sql_dialect_of(conn) == ADCP_SQL_POSTGRES;
  adcp_json_doc_init(&st->scratch);
  adcp_buf_init(&st->canon);
  *out = st;
  return 0;
}

void adcp_subscriptions_close(adcp_subscription_store *st) {
  if (!st) return;
  adcp_json_doc_free(&st->scratch);
  adcp_buf_free(&st->canon);
  free(st);
}

int adcp_subscriptions_is_durable(const adcp_subscription_store *st) { return st && adcp_sql_is_durable(st->c); }

const char *adcp_grant_action_name(adcp_grant_action a) {
  return a == ADCP_GRANT ? "grant" : a == ADCP_REVOKE ? "revoke" : "unknown";
}

int adcp_grant_action_parse(adcp_grant_action *out, const char *name, adcp_error *err) {
  if (name && !strcmp(name, "grant")) return *out = ADCP_GRANT, 0;
  if (name && !strcmp(name, "revoke")) return *out = ADCP_REVOKE, 0;
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "action: must be grant or revoke");
}

void adcp_grant_page_free(adcp_grant_page *page) {
  if (!page) return;
  free(page->items);
  memset(page, 0, sizeof *page);
}

int adcp_subscription_append(adcp_grant_entry *out, adcp_subscription_store *st, const char *principal_id,
                             adcp_grant_action action, const char *subject, const char *scope, adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!st) return adcp_error_set(err, ADCP_EINVALID_INPUT, "journal append: bad arguments");
  int rc = adcp_principals__check_id(principal_id, "principal_id", err);
  if (!rc) rc = adcp_principals__check_id(subject, "subject", err);
  if (!rc) rc = adcp_principals__check_id(scope, "scope", err);
  if (!rc && action != ADCP_GRANT && action != ADCP_REVOKE)
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "action: must be grant or revoke");
  if (rc) return rc;
  char key[320];
  snprintf(key, sizeof key, "adcp.subscription.journal:%s", principal_id);
  /* SQLite: BEGIN IMMEDIATE is the lock; PostgreSQL: the advisory lock, taken
   * before the statement whose snapshot reads the head. */
  rc = adcp_sql_begin(st->c, 1, err);
  if (!rc && st->pg) rc = adcp_sql_advisory_xact_lock(st->c, key, err);
  adcp_sql_rows *r = NULL;
  adcp_sql_param p[] = {adcp_sql_text(principal_id), adcp_sql_text(adcp_grant_action_name(action)),
                        adcp_sql_text(subject), adcp_sql_text(scope)};
  if (!rc)
    rc = adcp_sql_query(&r, st->c,
                        st->pg ? "INSERT INTO adcp_subscription_grants (principal_id, seq, action, subject, scope) "
                                 "SELECT $1, coalesce(max(seq), 0) + 1, $2, $3, $4 FROM adcp_subscription_grants "
                                 "WHERE principal_id = $1 RETURNING seq, " PR_TS("recorded_at")
                               : "INSERT INTO adcp_subscription_grants (principal_id, seq, action, subject, scope) "
                                 "SELECT $1, coalesce(max(seq), 0) + 1, $2, $3, $4 FROM adcp_subscription_grants "
                                 "WHERE principal_id = $1 RETURNING seq, recorded_at",
                        p, 4, err);
  int s = 0;
  if (!rc && (s = adcp_sql_next(r, err)) == 1 && out) {
    out->seq = adcp_sql_get_int64(r, 0);
    out->action = action;
    adcp_principals__copy(out->subject, sizeof out->subject, subject);
    adcp_principals__copy(out->scope, sizeof out->scope, scope);
    adcp_principals__copy(out->recorded_at, sizeof out->recorded_at, adcp_sql_get_text(r, 1, NULL));
  }
  while (!rc && s == 1) s = adcp_sql_next(r, err);
  if (!rc && s < 0) rc = s;
  adcp_sql_rows_free(r);
  int fk = rc && adcp_sql_last_failure(st->c) == ADCP_SQL_FAIL_FOREIGN_KEY;
  if (!rc) rc = adcp_sql_commit(st->c, err);
  if (rc) {
    fk = fk || adcp_sql_last_failure(st->c) == ADCP_SQL_FAIL_FOREIGN_KEY;
    adcp_sql_rollback(st->c, NULL);
    if (fk) rc = adcp_principals__no_principal(err);
  }
  return rc;
}

int adcp_subscription_journal(adcp_grant_page *out, adcp_subscription_store *st, const char *principal_id,
                              int64_t after_seq, size_t limit, adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!out || !st) return adcp_error_set(err, ADCP_EINVALID_INPUT, "journal read: bad arguments");
  size_t n;
  int rc = adcp_principals__check_id(principal_id, "principal_id", err);
  if (!rc) rc = adcp_principals__limit(&n, limit, err);
  if (!rc && after_seq < 0) rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "after: must be >= 0");
  if (rc) return rc;
  adcp_sql_param p[] = {adcp_sql_text(principal_id), adcp_sql_int64(after_seq), adcp_sql_int64((int64_t)n)};
  /* The head first, then entries up to it: a page never runs past the head
   * it reports, whatever is appended meanwhile. */
  adcp_sql_rows *r = NULL;
  rc = adcp_sql_query(&r, st->c,
                      "SELECT (SELECT count(*) FROM adcp_principals WHERE principal_id = $1), "
                      "(SELECT coalesce(max(seq), 0) FROM adcp_subscription_grants WHERE principal_id = $1)",
                      p, 1, err);
  int s = rc ? 0 : adcp_sql_next(r, err);
  if (!rc && s < 0) rc = s;
  int exists = !rc && s == 1 && adcp_sql_get_int64(r, 0) > 0;
  if (!rc) out->head = s == 1 ? adcp_sql_get_int64(r, 1) : 0;
  adcp_sql_rows_free(r);
  r = NULL;
  if (!rc && !exists) rc = adcp_principals__no_principal(err);
  adcp_sql_param q[] = {p[0], p[1], p[2], adcp_sql_int64(out->head)};
  if (!rc)
    rc = adcp_sql_query(&r, st->c,
                        st->pg ? "SELECT seq, action, subject, scope, " PR_TS("recorded_at")
                                 " FROM adcp_subscription_grants WHERE principal_id = $1 AND seq > $2 AND seq <= $4 "
                                 "ORDER BY seq LIMIT $3"
                               : "SELECT seq, action, subject, scope, recorded_at FROM adcp_subscription_grants "
                                 "WHERE principal_id = $1 AND seq > $2 AND seq <= $4 ORDER BY seq LIMIT $3",
                        q, 4, err);
  if (!rc && !(out->items = calloc(n, sizeof *out->items))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  while (!rc && out->count < n && (s = adcp_sql_next(r, err)) == 1) {
    adcp_grant_entry *e = &out->items[out->count++];
    e->seq = adcp_sql_get_int64(r, 0);
    e->action = !strcmp(adcp_sql_get_text(r, 1, NULL), "grant") ? ADCP_GRANT : ADCP_REVOKE;
    adcp_principals__copy(e->subject, sizeof e->subject, adcp_sql_get_text(r, 2, NULL));
    adcp_principals__copy(e->scope, sizeof e->scope, adcp_sql_get_text(r, 3, NULL));
    adcp_principals__copy(e->recorded_at, sizeof e->recorded_at, adcp_sql_get_text(r, 4, NULL));
  }
  if (!rc && s < 0) rc = s;
  adcp_sql_rows_free(r);
  if (rc) adcp_grant_page_free(out);
  return rc;
}
