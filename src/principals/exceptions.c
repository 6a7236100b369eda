/* principals/exceptions.c — subscription exceptions: one open or cleared
 * record per (principal, subject), written with compare-and-set on version,
 * listed in subject order with keyset paging. */
#include <stdlib.h>
#include <string.h>

#include "principals/internal.h"

#define EX_COLS_PG "subject, state, reason, version, " PR_TS("opened_at") ", " PR_TS("updated_at")
#define EX_COLS_SQLITE "subject, state, reason, version, opened_at, updated_at"

void adcp_subscription_exception_clear(adcp_subscription_exception *e) {
  if (!e) return;
  free(e->reason);
  memset(e, 0, sizeof *e);
}

void adcp_exception_list_free(adcp_exception_list *l) {
  if (!l) return;
  for (size_t i = 0; i < l->count; i++) adcp_subscription_exception_clear(&l->items[i]);
  free(l->items);
  free(l->next_cursor);
  memset(l, 0, sizeof *l);
}

static int read_row(adcp_subscription_exception *e, adcp_sql_rows *r, adcp_error *err) {
  memset(e, 0, sizeof *e);
  adcp_principals__copy(e->subject, sizeof e->subject, adcp_sql_get_text(r, 0, NULL));
  adcp_principals__copy(e->state, sizeof e->state, adcp_sql_get_text(r, 1, NULL));
  e->reason = adcp_principals__dup(adcp_sql_get_text(r, 2, NULL));
  e->version = adcp_sql_get_int64(r, 3);
  adcp_principals__copy(e->opened_at, sizeof e->opened_at, adcp_sql_get_text(r, 4, NULL));
  adcp_principals__copy(e->updated_at, sizeof e->updated_at, adcp_sql_get_text(r, 5, NULL));
  return e->reason ? 0 : adcp_error_set(err, ADCP_ENOMEM, "out of memory");
}

int adcp_subscription_exception_put(adcp_subscription_exception *out, adcp_subscription_store *st,
                                    const char *principal_id, const char *subject, const char *state,
                                    const char *reason, int64_t expected_version, adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!st) return adcp_error_set(err, ADCP_EINVALID_INPUT, "exception put: bad arguments");
  int rc = adcp_principals__check_id(principal_id, "principal_id", err);
  if (!rc) rc = adcp_principals__check_id(subject, "subject", err);
  if (rc) return rc;
  if (!state || (strcmp(state, "open") && strcmp(state, "cleared")))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "state: must be open or cleared");
  if (!reason) reason = "";
  size_t rl = strlen(reason);
  if (rl > ADCP_SUBSCRIPTION_REASON_MAX || adcp_utf8_valid_prefix((const uint8_t *)reason, rl) != rl)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "reason: must be valid UTF-8 of at most %d bytes",
                          ADCP_SUBSCRIPTION_REASON_MAX);
  if (expected_version < 0)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "expected_version: 0 (create) or the current version");
  adcp_sql_param p[] = {adcp_sql_text(principal_id), adcp_sql_text(subject), adcp_sql_text(state),
                        adcp_sql_text(reason), adcp_sql_int64(expected_version)};
  const char *sql =
      expected_version == 0
          ? (st->pg ? "INSERT INTO adcp_subscription_exceptions (principal_id, subject, state, reason, version) "
                      "VALUES ($1, $2, $3, $4, 1) ON CONFLICT (principal_id, subject) DO NOTHING RETURNING " EX_COLS_PG
                    : "INSERT INTO adcp_subscription_exceptions (principal_id, subject, state, reason, version) "
                      "VALUES ($1, $2, $3, $4, 1) ON CONFLICT (principal_id, subject) DO NOTHING "
                      "RETURNING " EX_COLS_SQLITE)
          : (st->pg ? "UPDATE adcp_subscription_exceptions SET state = $3, reason = $4, version = version + 1, "
                      "updated_at = " PR_NOW_PG
                      " WHERE principal_id = $1 AND subject = $2 AND version = $5 "
                      "RETURNING " EX_COLS_PG
                    : "UPDATE adcp_subscription_exceptions SET state = $3, reason = $4, version = version + 1, "
                      "updated_at = " PR_NOW_SQLITE
                      " WHERE principal_id = $1 AND subject = $2 AND version = $5 "
                      "RETURNING " EX_COLS_SQLITE);
  adcp_sql_rows *r = NULL;
  int got = 0, s = 0;
  rc = adcp_sql_query(&r, st->c, sql, p, expected_version == 0 ? 4 : 5, err);
  if (!rc && (s = adcp_sql_next(r, err)) == 1) {
    got = 1;
    adcp_subscription_exception tmp;
    rc = read_row(out ? out : &tmp, r, err);
    if (!out) adcp_subscription_exception_clear(&tmp);
    while (!rc && (s = adcp_sql_next(r, err)) == 1) {
    }
  }
  if (!rc && s < 0) rc = s;
  int fk = rc && adcp_sql_last_failure(st->c) == ADCP_SQL_FAIL_FOREIGN_KEY;
  adcp_sql_rows_free(r);
  if (fk) return adcp_principals__no_principal(err);
  if (rc || got) return rc;
  /* Nothing written: tell a missing principal or exception from a stale version. */
  int found = 0;
  if ((rc = adcp_principals__principal_exists(&found, st->c, principal_id, err))) return rc;
  if (!found) return adcp_principals__no_principal(err);
  if (expected_version == 0)
    return adcp_error_set(err, ADCP_ECONFLICT, "exception already exists: put it with its current version");
  char v[32];
  rc = adcp_sql_query_text(v, sizeof v, &found, st->c,
                           "SELECT version FROM adcp_subscription_exceptions WHERE principal_id = $1 AND subject = $2",
                           p, 2, err);
  if (rc) return rc;
  if (!found) return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "no such exception");
  return adcp_error_set(err, ADCP_ECONFLICT, "exception is at version %s, not %lld: re-read and retry", v,
                        (long long)expected_version);
}

int adcp_subscription_exceptions(adcp_exception_list *out, adcp_subscription_store *st, const char *principal_id,
                                 size_t limit, const char *cursor, adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!out || !st) return adcp_error_set(err, ADCP_EINVALID_INPUT, "exceptions: bad arguments");
  size_t n;
  int rc = adcp_principals__check_id(principal_id, "principal_id", err);
  if (!rc) rc = adcp_principals__limit(&n, limit, err);
  char after[ADCP_PRINCIPAL_ID_MAX] = "";
  int first = !cursor || !*cursor;
  if (!rc && !first) rc = adcp_principals__cursor_decode(after, 'e', cursor, err);
  int found = 0;
  if (!rc) rc = adcp_principals__principal_exists(&found, st->c, principal_id, err);
  if (!rc && !found) rc = adcp_principals__no_principal(err);
  if (rc) return rc;
  /* An empty string sorts before every subject (subjects are 1+ bytes). */
  adcp_sql_param p[] = {adcp_sql_text(principal_id), adcp_sql_text(after), adcp_sql_int64((int64_t)n + 1)};
  adcp_sql_rows *r = NULL;
  rc = adcp_sql_query(&r, st->c,
                      st->pg ? "SELECT " EX_COLS_PG
                               " FROM adcp_subscription_exceptions WHERE principal_id = $1 "
                               "AND subject > $2 ORDER BY subject LIMIT $3"
                             : "SELECT " EX_COLS_SQLITE
                               " FROM adcp_subscription_exceptions WHERE principal_id = $1 "
                               "AND subject > $2 ORDER BY subject LIMIT $3",
                      p, 3, err);
  if (!rc && !(out->items = calloc(n, sizeof *out->items))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int more = 0, s = 0;
  while (!rc && (s = adcp_sql_next(r, err)) == 1) {
    if (out->count == n) {
      more = 1;
      continue;
    }
    rc = read_row(&out->items[out->count], r, err);
    if (!rc) out->count++;
  }
  if (!rc && s < 0) rc = s;
  adcp_sql_rows_free(r);
  if (!rc && more && adcp_principals__cursor_encode(&out->next_cursor, 'e', out->items[out->count - 1].subject))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (rc) adcp_exception_list_free(out);
  return rc;
}
