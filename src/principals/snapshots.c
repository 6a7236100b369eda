/* principals/snapshots.c — the subscription engine's latest materialized
 * state per principal: a version that grows by one per write (CAS), and the
 * journal position the state reflects, which never goes back (a writer that
 * materialized less of the journal is stale). The database refuses a
 * backwards update as well (migration 0007's trigger). */
#include <stdlib.h>
#include <string.h>

#include "principals/internal.h"

void adcp_subscription_snapshot_clear(adcp_subscription_snapshot *s) {
  if (!s) return;
  free(s->state_json);
  memset(s, 0, sizeof *s);
}

static int read_row(adcp_subscription_snapshot *o, adcp_sql_rows *r, adcp_error *err) {
  memset(o, 0, sizeof *o);
  o->version = adcp_sql_get_int64(r, 0);
  o->journal_seq = adcp_sql_get_int64(r, 1);
  o->state_json = adcp_principals__dup(adcp_sql_get_text(r, 2, NULL));
  adcp_principals__copy(o->updated_at, sizeof o->updated_at, adcp_sql_get_text(r, 3, NULL));
  return o->state_json ? 0 : adcp_error_set(err, ADCP_ENOMEM, "out of memory");
}

/* Runs sql; *got = 1 and *out filled when it returned a row. */
static int one(adcp_subscription_snapshot *out, int *got, adcp_sql_conn *c, const char *sql, const adcp_sql_param *p,
               size_t n, adcp_error *err) {
  adcp_sql_rows *r = NULL;
  *got = 0;
  int rc = adcp_sql_query(&r, c, sql, p, n, err), s = 0;
  if (!rc && (s = adcp_sql_next(r, err)) == 1) {
    *got = 1;
    rc = read_row(out, r, err);
    while (!rc && (s = adcp_sql_next(r, err)) == 1) {
    }
  }
  if (!rc && s < 0) rc = s;
  adcp_sql_rows_free(r);
  return rc;
}

int adcp_subscription_snapshot_get(adcp_subscription_snapshot *out, int *found, adcp_subscription_store *st,
                                   const char *principal_id, adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (found) *found = 0;
  if (!out || !found || !st) return adcp_error_set(err, ADCP_EINVALID_INPUT, "snapshot get: bad arguments");
  int rc = adcp_principals__check_id(principal_id, "principal_id", err), exists = 0;
  if (!rc) rc = adcp_principals__principal_exists(&exists, st->c, principal_id, err);
  if (!rc && !exists) rc = adcp_principals__no_principal(err);
  if (rc) return rc;
  adcp_sql_param p[] = {adcp_sql_text(principal_id)};
  return one(out, found, st->c,
             st->pg ? "SELECT version, journal_seq, state, " PR_TS(
                          "updated_at") " FROM adcp_subscription_snapshots WHERE principal_id = $1"
                    : "SELECT version, journal_seq, state, updated_at FROM adcp_subscription_snapshots "
                      "WHERE principal_id = $1",
             p, 1, err);
}

int adcp_subscription_snapshot_put(adcp_subscription_snapshot *out, adcp_subscription_store *st,
                                   const char *principal_id, int64_t expected_version, int64_t journal_seq,
                                   const char *state_json, adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!st) return adcp_error_set(err, ADCP_EINVALID_INPUT, "snapshot put: bad arguments");
  int rc = adcp_principals__check_id(principal_id, "principal_id", err);
  if (rc) return rc;
  if (expected_version < 0)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "expected_version: 0 (first snapshot) or the current version");
  if (journal_seq < 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "journal_seq: must be >= 0");
  rc = adcp_principals__canon_object(&st->canon, &st->scratch, state_json, ADCP_SUBSCRIPTION_STATE_MAX, "state", err);
  if (rc) return rc;
  adcp_subscription_snapshot tmp;
  if (!out) out = &tmp;
  /* One transaction: the head read and the CAS write see one another's
   * order (the head only grows, so a position <= head stays valid). */
  rc = adcp_sql_begin(st->c, 1, err);
  adcp_sql_rows *r = NULL;
  adcp_sql_param p[] = {adcp_sql_text(principal_id), adcp_sql_int64(expected_version), adcp_sql_int64(journal_seq),
                        adcp_sql_text((const char *)st->canon.data)};
  if (!rc)
    rc = adcp_sql_query(&r, st->c,
                        "SELECT (SELECT count(*) FROM adcp_principals WHERE principal_id = $1), "
                        "(SELECT coalesce(max(seq), 0) FROM adcp_subscription_grants WHERE principal_id = $1)",
                        p, 1, err);
  int s = rc ? 0 : adcp_sql_next(r, err);
  if (!rc && s < 0) rc = s;
  int64_t exists = !rc && s == 1 ? adcp_sql_get_int64(r, 0) : 0, head = !rc && s == 1 ? adcp_sql_get_int64(r, 1) : 0;
  adcp_sql_rows_free(r);
  if (!rc && !exists) rc = adcp_principals__no_principal(err);
  if (!rc && journal_seq > head)
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "journal_seq %lld is beyond the journal head %lld",
                        (long long)journal_seq, (long long)head);
  int got = 0;
  if (!rc && expected_version == 0) {
    adcp_sql_param q[] = {p[0], p[2], p[3]};
    rc = one(out, &got, st->c,
             st->pg ? "INSERT INTO adcp_subscription_snapshots (principal_id, version, journal_seq, state) "
                      "VALUES ($1, 1, $2, $3) ON CONFLICT (principal_id) DO NOTHING "
                      "RETURNING version, journal_seq, state, " PR_TS("updated_at")
                    : "INSERT INTO adcp_subscription_snapshots (principal_id, version, journal_seq, state) "
                      "VALUES ($1, 1, $2, $3) ON CONFLICT (principal_id) DO NOTHING "
                      "RETURNING version, journal_seq, state, updated_at",
             q, 3, err);
    if (!rc && !got)
      rc = adcp_error_set(err, ADCP_ECONFLICT, "a snapshot exists already: write it with its current version");
  } else if (!rc) {
    rc = one(out, &got, st->c,
             st->pg ? "UPDATE adcp_subscription_snapshots SET version = version + 1, journal_seq = $3, state = $4, "
                      "updated_at = " PR_NOW_PG
                      " WHERE principal_id = $1 AND version = $2 AND journal_seq <= $3 "
                      "RETURNING version, journal_seq, state, " PR_TS("updated_at")
                    : "UPDATE adcp_subscription_snapshots SET version = version + 1, journal_seq = $3, state = $4, "
                      "updated_at = " PR_NOW_SQLITE
                      " WHERE principal_id = $1 AND version = $2 AND journal_seq <= $3 "
                      "RETURNING version, journal_seq, state, updated_at",
             p, 4, err);
    if (!rc && !got) {
      adcp_subscription_snapshot cur;
      memset(&cur, 0, sizeof cur);
      int have = 0;
      rc = one(&cur, &have, st->c,
               "SELECT version, journal_seq, state, '' FROM adcp_subscription_snapshots WHERE principal_id = $1", p, 1,
               err);
      if (!rc && !have) rc = adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "no snapshot yet: write version 0 first");
      else if (!rc && cur.version != expected_version)
        rc = adcp_error_set(err, ADCP_ECONFLICT, "snapshot is at version %lld, not %lld: re-read and retry",
                            (long long)cur.version, (long long)expected_version);
      else if (!rc)
        rc = adcp_error_set(err, ADCP_ECONFLICT, "stale snapshot: it reflects journal_seq %lld, the stored one %lld",
                            (long long)journal_seq, (long long)cur.journal_seq);
      adcp_subscription_snapshot_clear(&cur);
    }
  }
  if (!rc) rc = adcp_sql_commit(st->c, err);
  if (rc) {
    adcp_sql_rollback(st->c, NULL);
    adcp_subscription_snapshot_clear(out);
  }
  if (out == &tmp) adcp_subscription_snapshot_clear(&tmp);
  return rc;
}
